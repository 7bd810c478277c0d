//! Choosing one function from a run (paper 001 §4.2.3; SEED-SYSTEMS §2.2.5; the authors'
//! `gp_selector.h`): every archived individual is simulated on the validation set, and one of
//! three rules picks the function — GP4C_Best (the best in training), GP4C_Sum and GP4C_Avg
//! (training and validation fitness, penalised by the spread of the per-cycle ChangeRates;
//! de Almeida et al. 2007's `Sum_σ` and `Avg_σ`).

use super::evolve::Scored;
use super::fitness::{Metric, SimResult};
use super::tree::Expr;

/// A selection rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Rule {
    /// The best individual in training (the paper's choice for its results).
    Best,
    /// argmax `F_e + F_v − σ`.
    Sum,
    /// argmax `(F_e + F_v)/2 − σ`.
    Avg,
}

impl Rule {
    pub const ALL: [Rule; 3] = [Rule::Best, Rule::Sum, Rule::Avg];

    pub fn as_str(self) -> &'static str {
        match self {
            Rule::Best => "best",
            Rule::Sum => "sum",
            Rule::Avg => "avg",
        }
    }
}

/// An archived individual with its validation figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub(crate) expr: Expr,
    /// `F_e`: training fitness.
    pub(crate) training: f64,
    /// `F_v`: the same measure on the validation set.
    pub(crate) validation: f64,
    /// `σ` over the per-cycle ChangeRates of training and validation.
    pub(crate) sigma: f64,
}

/// `σ` of paper 001 §4.2.3 as the authors' code computes it: the root of the summed squared
/// deviations of the per-cycle ChangeRates of training and validation from their pooled mean
/// (`sqrt(Σ (C_c − m)²)`, not divided by the count; always ChangeRates, whatever the fitness).
pub fn sigma(training: &SimResult, validation: &SimResult) -> f64 {
    let all: Vec<f64> = training
        .per_cycle(Metric::ChangeRate)
        .iter()
        .chain(validation.per_cycle(Metric::ChangeRate))
        .copied()
        .collect();
    if all.is_empty() {
        return 0.0;
    }
    let m = all.iter().sum::<f64>() / all.len() as f64;
    all.iter().map(|c| (c - m) * (c - m)).sum::<f64>().sqrt()
}

/// The score a rule maximises (paper 001 §4.2.3).
pub fn rule_score(rule: Rule, c: &Candidate) -> f64 {
    match rule {
        Rule::Best => c.training,
        Rule::Sum => c.training + c.validation - c.sigma,
        Rule::Avg => (c.training + c.validation) / 2.0 - c.sigma,
    }
}

/// Validates the archive: `simulate(expr, validation set)` for each archived individual
/// (`simulate_training` gives its per-cycle training run, for σ).
pub fn candidates(
    archive: &[Scored],
    metric: Metric,
    simulate_training: &(dyn Fn(&Expr) -> SimResult + Sync),
    simulate_validation: &(dyn Fn(&Expr) -> SimResult + Sync),
) -> Vec<Candidate> {
    use rayon::prelude::*;
    archive
        .par_iter()
        .map(|s| {
            let train = simulate_training(&s.expr);
            let val = simulate_validation(&s.expr);
            Candidate {
                expr: s.expr.clone(),
                training: s.fitness,
                validation: val.mean(metric),
                sigma: sigma(&train, &val),
            }
        })
        .collect()
}

/// The candidate a rule picks: the highest score, ties to the smaller tree, then the earlier
/// in the archive (which is ordered best-in-training first).
pub fn select(rule: Rule, candidates: &[Candidate]) -> Option<&Candidate> {
    candidates
        .iter()
        .enumerate()
        .min_by(|(i, a), (j, b)| {
            rule_score(rule, b)
                .total_cmp(&rule_score(rule, a))
                .then(a.expr.len().cmp(&b.expr.len()))
                .then(i.cmp(j))
        })
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(rates: &[f64]) -> SimResult {
        SimResult {
            change_rate: rates.to_vec(),
            ndcg: rates.iter().map(|r| r / 2.0).collect(),
        }
    }

    #[test]
    fn sigma_is_the_root_of_summed_squares_over_both_periods() {
        let s = sigma(&result(&[0.1, 0.3]), &result(&[0.2, 0.2]));
        // Mean 0.2; deviations −0.1, 0.1, 0, 0.
        assert!((s - (0.02f64).sqrt()).abs() < 1e-12);
        assert_eq!(sigma(&result(&[]), &result(&[])), 0.0);
    }

    #[test]
    fn rules_weigh_validation_and_spread() {
        let c = |text: &str, training: f64, validation: f64, sigma: f64| Candidate {
            expr: Expr::parse(text).unwrap(),
            training,
            validation,
            sigma,
        };
        let cands = vec![
            c("t * X", 0.9, 0.5, 0.1),
            c("t + X", 0.8, 0.8, 0.1),
            c("(t * X) + 1", 0.85, 0.85, 0.5),
        ];
        assert_eq!(
            select(Rule::Best, &cands).unwrap().expr.to_string(),
            "t * X"
        );
        // Sum: 1.3, 1.5, 1.2.  Avg: 0.6, 0.7, 0.35.
        assert_eq!(select(Rule::Sum, &cands).unwrap().expr.to_string(), "t + X");
        assert_eq!(select(Rule::Avg, &cands).unwrap().expr.to_string(), "t + X");
        // Ties go to the smaller tree.
        let tied = vec![c("(t * X) + 1", 0.5, 0.5, 0.0), c("t", 0.5, 0.5, 0.0)];
        assert_eq!(select(Rule::Sum, &tied).unwrap().expr.to_string(), "t");
        assert!(select(Rule::Best, &[]).is_none());
    }
}
