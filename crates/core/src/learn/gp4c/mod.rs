//! GP4C (paper 001: Santos et al., "A genetic programming framework to schedule webpage
//! updates", Inf. Retrieval J. 18, 2015): learn, by genetic programming, a score function of a
//! page's change statistics whose top-`k` pages each cycle are the ones most likely to have
//! changed.
//!
//! * [`tree`]: individuals — expression trees over `n, X, t` (+ `CG, NAD, SAD, AAD, GAD`),
//!   protected operators, printing and parsing.
//! * [`fitness`]: the crawl simulation that scores a function (ChangeRate or NDCG per cycle),
//!   and the paper's baselines.
//! * [`mod@evolve`]: the evolution (population, tournament, crossover, mutations, elitism, archive).
//! * [`peer`]: the authors' C++ runtime's tie order and `rand()`, for parity checks.
//! * [`select`]: validation of the archive and the Best / Sum / Avg rules.
//! * This module: the paper's protocol (§5.2; SEED-SYSTEMS §2.2.6) — pages in `F` contiguous
//!   folds, each in turn the test fold; of the others, one validates and the rest train; the
//!   cycles in thirds: evolve on the first third of the training pages, validate on the second
//!   third of the validation pages, test on the last third of the test fold, each segment
//!   simulated from scratch with the warm-up.
//!
//! Training reads the change matrix of every page of the training period — the oracle history
//! of other pages and earlier units (paper 001 had a daily full crawl); a learned function is
//! then used online by the `gp4c` policy family.

pub mod evolve;
pub mod fitness;
pub mod peer;
pub mod select;
pub mod tree;

use crate::change::ChangeMatrix;

pub use evolve::{evolve, Evolution, GpConfig, Scored};
pub use fitness::{baselines, simulate, Metric, Scorer, SimConfig, SimResult, Ties};
pub use select::{Candidate, Rule};
pub use tree::{Expr, Terminal};

/// The terminal sets of paper 001 §4.2.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum TerminalSet {
    /// GP4C_Basic: `n, X, t`.
    Basic,
    /// GP4C_All: Basic plus `CG, NAD, SAD, AAD, GAD` (rates).
    All,
}

impl TerminalSet {
    pub fn terminals(self) -> &'static [Terminal] {
        match self {
            TerminalSet::Basic => &Terminal::BASIC,
            TerminalSet::All => &Terminal::ALL,
        }
    }
}

/// A training run's settings.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TrainConfig {
    pub gp: GpConfig,
    /// The fitness measure.
    pub(crate) fitness: Metric,
    pub(crate) terminals: TerminalSet,
    pub(crate) seed: u64,
    /// Page folds `F` (paper: 5); one tests, one validates, `F − 2` train.
    pub folds: usize,
    /// Split the cycles in thirds (paper: yes); otherwise every segment spans all cycles.
    pub time_split: bool,
    /// Share of a segment's pages visited per cycle (paper: 0.05).
    pub resources: f64,
    /// Warm-up cycles of each segment (paper: 2).
    pub warmup: usize,
}

impl TrainConfig {
    pub fn new(gp: GpConfig, fitness: Metric, terminals: TerminalSet, seed: u64) -> Self {
        TrainConfig {
            gp,
            fitness,
            terminals,
            seed,
            folds: 5,
            time_split: true,
            resources: 0.05,
            warmup: 2,
        }
    }
}

/// Why training could not run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TrainError {
    #[error(
        "--folds {folds}: needs 3 to {pages} folds (one tests, one validates, the rest train)"
    )]
    Folds { folds: usize, pages: usize },
    #[error(
        "the change matrix has {cycles} cycles; each third needs more than the {warmup} warm-up \
         cycles (at least {needed})"
    )]
    Cycles {
        cycles: usize,
        warmup: usize,
        needed: usize,
    },
    #[error("a segment of {pages} pages visits no page at resources {resources} (k = 0)")]
    Budget { pages: usize, resources: f64 },
}

/// gp4c's `testCV(folds, fold)`: the contiguous block of `n` items of fold `fold`, the first
/// `n mod folds` folds one larger.
pub fn fold_range(n: usize, folds: usize, fold: usize) -> std::ops::Range<usize> {
    let base = n / folds;
    let extra = n % folds;
    let size = base + usize::from(fold < extra);
    let first = fold * base + fold.min(extra);
    first..first + size
}

/// The test, validation and training pages of test fold `fold` (gp4c: `testCV(F, f)`; of the
/// rest, `testCV(F − 1, 0)` validates and `trainCV(F − 1, 0)` trains).
pub fn fold_pages(pages: usize, folds: usize, fold: usize) -> [Vec<usize>; 3] {
    let test = fold_range(pages, folds, fold);
    let rest: Vec<usize> = (0..pages).filter(|p| !test.contains(p)).collect();
    let val = fold_range(rest.len(), folds - 1, 0);
    let validation = rest[val.clone()].to_vec();
    let training: Vec<usize> = rest
        .iter()
        .enumerate()
        .filter(|(i, _)| !val.contains(i))
        .map(|(_, &p)| p)
        .collect();
    [test.collect(), validation, training]
}

/// Cycles `(first, last)` (1-based, inclusive) of third `i` (gp4c's `timeSplit(3, i)`;
/// EmacsWiki's 47 cycles: 1–16, 17–32, 33–47).
pub fn third(cycles: usize, i: usize) -> (usize, usize) {
    let r = fold_range(cycles, 3, i);
    (r.start + 1, r.end)
}

/// A function's figures on one set.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SetScores {
    pub change_rate: f64,
    pub ndcg: f64,
}

impl From<&SimResult> for SetScores {
    fn from(r: &SimResult) -> Self {
        SetScores {
            change_rate: r.mean(Metric::ChangeRate),
            ndcg: r.mean(Metric::Ndcg),
        }
    }
}

/// The function one rule selected in one fold.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Selected {
    pub rule: Rule,
    pub function: String,
    /// `F_e`.
    pub(crate) training_fitness: f64,
    /// `F_v`.
    pub validation_fitness: f64,
    pub(crate) sigma: f64,
    /// The function on the test fold's last third.
    pub test: SetScores,
}

/// One test fold.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FoldReport {
    pub fold: usize,
    pub(crate) training_pages: usize,
    pub(crate) validation_pages: usize,
    pub(crate) test_pages: usize,
    /// Cycles (first, last) of the training, validation and test segments.
    pub(crate) training_cycles: (usize, usize),
    pub(crate) validation_cycles: (usize, usize),
    pub(crate) test_cycles: (usize, usize),
    /// k of the training, validation and test segments.
    pub(crate) k: [usize; 3],
    pub selected: Vec<Selected>,
    /// The paper's baselines on the same test set.
    pub(crate) baselines: Vec<(String, SetScores)>,
    pub(crate) best_fitness_per_generation: Vec<f64>,
    pub(crate) evaluations: usize,
    pub(crate) seconds: f64,
}

/// A whole training run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TrainReport {
    pub(crate) config: TrainConfig,
    pub pages: usize,
    pub cycles: usize,
    pub folds: Vec<FoldReport>,
    /// Mean test figures over the folds, per rule, then per baseline.
    pub mean_test: Vec<(String, SetScores)>,
    pub seconds: f64,
}

impl TrainReport {
    /// The function of `rule` from the fold whose selection validated best (ties: the earlier
    /// fold) — the one function a later refresh uses.
    pub fn chosen(&self, rule: Rule) -> Option<(usize, &Selected)> {
        self.folds
            .iter()
            .filter_map(|f| {
                f.selected
                    .iter()
                    .find(|s| s.rule == rule)
                    .map(|s| (f.fold, s))
            })
            .min_by(|(i, a), (j, b)| {
                b.validation_fitness
                    .total_cmp(&a.validation_fitness)
                    .then(i.cmp(j))
            })
    }
}

/// Runs paper 001's protocol over `matrix` (see the module docs); `progress(fold)` is called
/// as each fold starts.
pub fn train(
    matrix: &ChangeMatrix,
    config: &TrainConfig,
    progress: &dyn Fn(usize),
) -> Result<TrainReport, TrainError> {
    let started = std::time::Instant::now();
    let (pages, cycles) = (matrix.pages(), matrix.cycles());
    if config.folds < 3 || config.folds > pages {
        return Err(TrainError::Folds {
            folds: config.folds,
            pages,
        });
    }
    let segment = |i: usize| {
        if config.time_split {
            third(cycles, i)
        } else {
            (1, cycles)
        }
    };
    let shortest = if config.time_split {
        cycles / 3
    } else {
        cycles
    };
    if shortest <= config.warmup {
        return Err(TrainError::Cycles {
            cycles,
            warmup: config.warmup,
            needed: if config.time_split {
                3 * (config.warmup + 1)
            } else {
                config.warmup + 1
            },
        });
    }
    let mut folds = Vec::with_capacity(config.folds);
    for fold in 0..config.folds {
        progress(fold);
        let fold_started = std::time::Instant::now();
        let [test_pages, validation_pages, training_pages] = fold_pages(pages, config.folds, fold);
        let (tc, vc, ec) = (segment(0), segment(1), segment(2));
        let training = matrix.select(&training_pages, tc.0, tc.1);
        let validation = matrix.select(&validation_pages, vc.0, vc.1);
        let test = matrix.select(&test_pages, ec.0, ec.1);
        let sim = |m: &ChangeMatrix| SimConfig::share(m.pages(), config.resources, config.warmup);
        let k = [sim(&training).k, sim(&validation).k, sim(&test).k];
        if let Some(i) = k.iter().position(|&k| k == 0) {
            return Err(TrainError::Budget {
                pages: [&training, &validation, &test][i].pages(),
                resources: config.resources,
            });
        }
        let run = |m: &ChangeMatrix, e: &Expr| simulate(m, &Scorer::Expr(e.clone()), sim(m));
        let fitness = |e: &Expr| run(&training, e).mean(config.fitness);
        // One seed per fold, derived from the run's seed, so folds differ but repeat.
        let seed = config
            .seed
            .wrapping_mul(1_000_003)
            .wrapping_add(fold as u64);
        let evolution = evolve(&config.gp, config.terminals.terminals(), seed, &fitness);
        let candidates = select::candidates(
            &evolution.archive,
            config.fitness,
            &|e| run(&training, e),
            &|e| run(&validation, e),
        );
        let selected = Rule::ALL
            .iter()
            .filter_map(|&rule| {
                let c = select::select(rule, &candidates)?;
                Some(Selected {
                    rule,
                    function: c.expr.to_string(),
                    training_fitness: c.training,
                    validation_fitness: c.validation,
                    sigma: c.sigma,
                    test: SetScores::from(&run(&test, &c.expr)),
                })
            })
            .collect();
        let baselines = fitness::baselines(config.seed)
            .into_iter()
            .map(|(name, scorer)| {
                let r = simulate(&test, &scorer, sim(&test));
                (name.to_string(), SetScores::from(&r))
            })
            .collect();
        folds.push(FoldReport {
            fold,
            training_pages: training_pages.len(),
            validation_pages: validation_pages.len(),
            test_pages: test_pages.len(),
            training_cycles: tc,
            validation_cycles: vc,
            test_cycles: ec,
            k,
            selected,
            baselines,
            best_fitness_per_generation: evolution.best_per_generation,
            evaluations: evolution.evaluations,
            seconds: fold_started.elapsed().as_secs_f64(),
        });
    }
    let mean_test = mean_over_folds(&folds);
    Ok(TrainReport {
        config: config.clone(),
        pages,
        cycles,
        folds,
        mean_test,
        seconds: started.elapsed().as_secs_f64(),
    })
}

fn mean_over_folds(folds: &[FoldReport]) -> Vec<(String, SetScores)> {
    let mut names: Vec<String> = Rule::ALL
        .iter()
        .map(|r| format!("gp4c-{}", r.as_str()))
        .collect();
    if let Some(f) = folds.first() {
        names.extend(f.baselines.iter().map(|(n, _)| n.clone()));
    }
    names
        .into_iter()
        .map(|name| {
            let scores: Vec<&SetScores> = folds
                .iter()
                .filter_map(|f| match name.strip_prefix("gp4c-") {
                    Some(rule) => f
                        .selected
                        .iter()
                        .find(|s| s.rule.as_str() == rule)
                        .map(|s| &s.test),
                    None => f.baselines.iter().find(|(n, _)| *n == name).map(|(_, s)| s),
                })
                .collect();
            let n = scores.len().max(1) as f64;
            let mean = SetScores {
                change_rate: scores.iter().map(|s| s.change_rate).sum::<f64>() / n,
                ndcg: scores.iter().map(|s| s.ndcg).sum::<f64>() / n,
            };
            (name, mean)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_and_thirds_follow_the_authors_splits() {
        // 47 cycles → 16 / 16 / 15.
        assert_eq!(
            [third(47, 0), third(47, 1), third(47, 2)],
            [(1, 16), (17, 32), (33, 47)]
        );
        assert_eq!([third(57, 0), third(57, 2)], [(1, 19), (39, 57)]);
        // 11 pages in 5 folds: sizes 3, 2, 2, 2, 2.
        assert_eq!(fold_range(11, 5, 0), 0..3);
        assert_eq!(fold_range(11, 5, 4), 9..11);
        let [test, val, train] = fold_pages(11, 5, 1);
        assert_eq!(test, vec![3, 4]);
        // The other 9 pages in 4 folds: the first (3 pages) validates.
        assert_eq!(val, vec![0, 1, 2]);
        assert_eq!(train, vec![5, 6, 7, 8, 9, 10]);
    }

    /// Pages that change in bursts: page p changes every cycle in a window, then rests.
    fn synthetic(pages: usize, cycles: usize) -> ChangeMatrix {
        let rows: Vec<Vec<bool>> = (0..pages)
            .map(|p| {
                (1..=cycles)
                    .map(|c| (p % 7 == 0 && c % 2 == 0) || (p % 5 == 1 && (c + p) % 3 == 0))
                    .collect()
            })
            .collect();
        ChangeMatrix::from_rows(&rows)
    }

    #[test]
    fn a_tiny_training_run_is_deterministic_and_beats_random() {
        let m = synthetic(200, 18);
        let gp = GpConfig {
            population: 24,
            generations: 4,
            creation_depth: 4,
            crossover_depth: 6,
            archive: 8,
            ..GpConfig::default()
        };
        let config = TrainConfig::new(gp, Metric::ChangeRate, TerminalSet::Basic, 1);
        let a = train(&m, &config, &|_| {}).unwrap();
        let b = train(&m, &config, &|_| {}).unwrap();
        assert_eq!(a.folds.len(), 5);
        for (x, y) in a.folds.iter().zip(&b.folds) {
            assert_eq!(x.selected, y.selected);
            assert_eq!(x.baselines, y.baselines);
        }
        let mean = |name: &str| {
            a.mean_test
                .iter()
                .find(|(n, _)| n == name)
                .unwrap()
                .1
                .change_rate
        };
        assert!(mean("gp4c-best") > mean("rand"), "{:?}", a.mean_test);
        let (_, chosen) = a.chosen(Rule::Best).unwrap();
        assert!(Expr::parse(&chosen.function).is_ok());
        assert_eq!(a.folds[0].k, [6, 2, 2]);
    }

    #[test]
    fn impossible_settings_are_refused() {
        let m = synthetic(20, 6);
        let config = TrainConfig::new(GpConfig::default(), Metric::Ndcg, TerminalSet::All, 1);
        assert!(matches!(
            train(&m, &config, &|_| {}),
            Err(TrainError::Cycles { .. })
        ));
        let m = synthetic(20, 18);
        let mut c = config.clone();
        c.folds = 2;
        assert!(matches!(
            train(&m, &c, &|_| {}),
            Err(TrainError::Folds { .. })
        ));
        c.folds = 5;
        assert!(matches!(
            train(&m, &c, &|_| {}),
            Err(TrainError::Budget { .. })
        ));
    }
}
