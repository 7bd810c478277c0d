//! Paper 001's score policies (Santos et al., Inf. Retrieval J. 2015, §5.1 and Table 4):
//! refresh the `B` pages whose score — a function of the page's own change history — is
//! highest, ties to the page visited longest ago, then by page id.
//!
//! Per page, at the start of unit `d` (using only what was fetched before `d` online):
//! `n` visits so far (the initial crawl included), `X` visits that found the page changed,
//! `t = d − last visit`, and the change indicators of cycles `1 … d − 1` (a cycle without a
//! visit counts as no change, as the authors' code does). Scores:
//!
//! | family | score |
//! |---|---|
//! | `cg` | Cho & Garcia-Molina's rate `−ln((n − X + ½)/(n + ½))` alone (Eq. 4) |
//! | `nad`, `sad`, `aad`, `gad` | change probability `1 − e^{−λ·t}` (Eq. 5) with the weighted rate λ |
//! | `gp-t-x` | `t·X` (Table 4's best GP4C_Basic function) |
//! | `gp-t-cg` | `t·CG^2.72` (Table 4, GP4C_All) |
//! | `gp-gad-nad-t` | `GAD·e^{NAD + t}` (Table 4, GP4C_All; rates as terminals) |
//! | `gp4c` | a function learned by `refresher gp4c train` (see [`crate::learn::gp4c`]) |
//!
//! Oracle mode scores with the rates of the whole true history (every unit observed), as SBR's
//! oracle fit does; `t` is still the time since the page's own last refresh.

use std::sync::Arc;

use crate::change::{cg_rate, change_probability, weighted_rate, Weighting};
use crate::corpus::{PageId, Unit};
use crate::crawl::CrawlState;
use crate::learn::gp4c::tree::{Columns, Expr, Terminal};

use super::family::{ParamSpec, Params, PolicyError, PolicyFamily};
use super::{FitMode, PolicyContext, RefreshOutcome, RefreshPolicy};

/// Which score.
#[derive(Debug, Clone, PartialEq)]
pub enum Score {
    Cg,
    Probability(Weighting),
    AgeTimesChanges,
    AgeTimesCgPower,
    GadExpNadAge,
    /// A learned function of the terminals `n, X, t, CG, NAD, SAD, AAD, GAD`.
    Learned(Arc<Expr>),
}

impl Score {
    fn name(&self) -> &'static str {
        match self {
            Score::Cg => "cg",
            Score::Probability(w) => w.as_str(),
            Score::AgeTimesChanges => "gp-t-x",
            Score::AgeTimesCgPower => "gp-t-cg",
            Score::GadExpNadAge => "gp-gad-nad-t",
            Score::Learned(_) => "gp4c",
        }
    }
}

/// What the policy knows of one page.
#[derive(Debug, Clone, Default)]
struct PageStats {
    visits: u32,
    changes: u32,
    /// Units whose visit found a change.
    change_units: Vec<Unit>,
    known: bool,
}

/// A score policy (see the module docs).
#[derive(Debug, Clone)]
pub struct HistoryScore {
    score: Score,
    stats: Vec<PageStats>,
    /// Oracle mode: every page's true change units and the number of units.
    oracle: Option<(Vec<Vec<Unit>>, Unit)>,
}

impl HistoryScore {
    pub(crate) fn new(score: Score) -> Self {
        HistoryScore {
            score,
            stats: Vec::new(),
            oracle: None,
        }
    }

    /// The page's score at the start of `unit`, last visited at `last` (the crawl state's).
    fn score_of(&self, page: usize, unit: Unit, last: Unit) -> f64 {
        if let Score::Learned(expr) = &self.score {
            return self.learned_scores(expr, &[page], unit, &|_| last)[0];
        }
        let s = &self.stats[page];
        let t = f64::from(unit.saturating_sub(last));
        // (n, X, cycle indicators) online, or from the whole true history in oracle mode.
        let (n, x, history): (u32, u32, Vec<bool>) = match &self.oracle {
            Some((changes, units)) => {
                let units = *units;
                let mut h = vec![false; units as usize];
                for &c in &changes[page] {
                    if c >= 1 && c <= units {
                        h[c as usize - 1] = true;
                    }
                }
                (units + 1, changes[page].len() as u32, h)
            }
            None => (
                s.visits,
                s.changes,
                crate::change::cycle_history(&s.change_units, unit),
            ),
        };
        let cg = cg_rate(n as usize, x as usize);
        let value = match &self.score {
            Score::Cg => cg,
            Score::Probability(w) => change_probability(weighted_rate(*w, &history), t),
            Score::AgeTimesChanges => t * f64::from(x),
            Score::AgeTimesCgPower => t * cg.powf(2.72),
            Score::GadExpNadAge => {
                weighted_rate(Weighting::Gad, &history)
                    * (weighted_rate(Weighting::Nad, &history) + t).exp()
            }
            Score::Learned(_) => unreachable!("scored by learned_scores"),
        };
        // A total order for sorting (paper 001's code leaves NaN/inf to std::sort).
        if value.is_nan() {
            f64::NEG_INFINITY
        } else {
            value.clamp(-f64::MAX, f64::MAX)
        }
    }

    /// The terminals of paper 001 §5.1 for one page at the start of `unit`: `n, X, t, CG` and the
    /// weighted rates (cycle-indexed), from its own observations online or the whole true
    /// history in oracle mode (as [`score_of`](Self::score_of) reads them).
    fn terminals(&self, page: usize, unit: Unit, last: Unit) -> [(Terminal, f64); 8] {
        let s = &self.stats[page];
        let t = f64::from(unit.saturating_sub(last));
        let (n, x, history): (u32, u32, Vec<bool>) = match &self.oracle {
            Some((changes, units)) => (
                units + 1,
                changes[page].len() as u32,
                crate::change::cycle_history(&changes[page], units + 1),
            ),
            None => (
                s.visits,
                s.changes,
                crate::change::cycle_history(&s.change_units, unit),
            ),
        };
        let rate = |w| weighted_rate(w, &history);
        [
            (Terminal::N, f64::from(n)),
            (Terminal::X, f64::from(x)),
            (Terminal::T, t),
            (Terminal::Cg, cg_rate(n as usize, x as usize)),
            (Terminal::Nad, rate(Weighting::Nad)),
            (Terminal::Sad, rate(Weighting::Sad)),
            (Terminal::Aad, rate(Weighting::Aad)),
            (Terminal::Gad, rate(Weighting::Gad)),
        ]
    }

    /// A learned function's scores of `pages` at the start of `unit`, each page last visited
    /// at `last(page)`, evaluated a column at a time (already total-orderable: NaN is −∞, ±∞
    /// clamped).
    fn learned_scores(
        &self,
        expr: &Expr,
        pages: &[usize],
        unit: Unit,
        last: &dyn Fn(usize) -> Unit,
    ) -> Vec<f64> {
        let mut columns = Columns::new(pages.len());
        for &p in pages {
            for (terminal, value) in self.terminals(p, unit, last(p)) {
                if expr.uses(terminal) {
                    columns.column_mut(terminal).push(value);
                }
            }
        }
        let mut out = Vec::with_capacity(pages.len());
        expr.evaluate(&columns, &mut out);
        out
    }

    fn grow(&mut self, pages: usize) {
        if pages > self.stats.len() {
            self.stats.resize(pages, PageStats::default());
        }
    }
}

impl RefreshPolicy for HistoryScore {
    fn name(&self) -> String {
        self.score.name().to_string()
    }

    fn prepare(&mut self, context: &PolicyContext<'_>) {
        self.stats = vec![PageStats::default(); context.page_count];
        for &p in context.initial_pages {
            let s = &mut self.stats[p as usize];
            s.visits = 1;
            s.known = true;
        }
        self.oracle = match (context.mode, context.history) {
            (FitMode::Oracle, Some(h)) => Some((
                h.pages.iter().map(|p| p.change_units.clone()).collect(),
                h.units,
            )),
            _ => None,
        };
    }

    fn choose(&mut self, unit: Unit, budget: usize, crawl: &CrawlState) -> Vec<PageId> {
        self.grow(crawl.len());
        // Ties (all zero before any change was seen: the paper warms up by visiting every
        // page, we do not) go to the page visited longest ago, then the lowest id — by id
        // alone the same B pages would be refreshed forever.
        // Last visits and gone pages as the crawl state records them.
        let last = crawl.last_refreshes(self.stats.len());
        let candidates: Vec<usize> = (0..self.stats.len())
            .filter(|&p| self.stats[p].known && !crawl.page(p as PageId).gone)
            .collect();
        let scores: Vec<f64> = match &self.score {
            Score::Learned(expr) => self.learned_scores(expr, &candidates, unit, &|p| last[p]),
            _ => candidates
                .iter()
                .map(|&p| self.score_of(p, unit, last[p]))
                .collect(),
        };
        let mut scored: Vec<(f64, Unit, usize)> = candidates
            .iter()
            .zip(scores)
            .map(|(&p, score)| (score, last[p], p))
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        scored
            .into_iter()
            .take(budget)
            .map(|(_, _, p)| p as PageId)
            .collect()
    }

    fn observe(&mut self, outcomes: &[RefreshOutcome]) {
        for o in outcomes {
            self.grow(o.page as usize + 1);
            let s = &mut self.stats[o.page as usize];
            s.known = true;
            s.visits += 1;
            if o.changed && !o.discovered {
                s.changes += 1;
                s.change_units.push(o.unit);
            }
        }
    }
}

const NO_PARAMS: &[ParamSpec] = &[];

/// Builds a score policy (the `gp4c` family builds one from a learned function).
pub(crate) fn build(score: Score) -> Result<Box<dyn RefreshPolicy>, PolicyError> {
    Ok(Box::new(HistoryScore::new(score)))
}

/// `cg`: Cho & Garcia-Molina's change rate.
pub(crate) const CG: PolicyFamily = PolicyFamily {
    name: "cg",
    description: "Paper 001: highest Cho–Garcia-Molina change rate −ln((n−X+½)/(n+½)) first",
    params: NO_PARAMS,
    build: |_: &Params| build(Score::Cg),
};
/// `nad`: change probability with the non-adaptive rate.
pub(crate) const NAD: PolicyFamily = PolicyFamily {
    name: "nad",
    description: "Paper 001: highest change probability 1−e^(−λt), λ = changes per cycle (NAD)",
    params: NO_PARAMS,
    build: |_: &Params| build(Score::Probability(Weighting::Nad)),
};
/// `sad`: change probability with the last cycle's indicator.
pub(crate) const SAD: PolicyFamily = PolicyFamily {
    name: "sad",
    description: "Paper 001: highest change probability 1−e^(−λt), λ = last cycle changed (SAD)",
    params: NO_PARAMS,
    build: |_: &Params| build(Score::Probability(Weighting::Sad)),
};
/// `aad`: change probability with arithmetically weighted cycles.
pub(crate) const AAD: PolicyFamily = PolicyFamily {
    name: "aad",
    description: "Paper 001: highest change probability 1−e^(−λt), cycles weighted i (AAD)",
    params: NO_PARAMS,
    build: |_: &Params| build(Score::Probability(Weighting::Aad)),
};
/// `gad`: change probability with geometrically weighted cycles.
pub(crate) const GAD: PolicyFamily = PolicyFamily {
    name: "gad",
    description: "Paper 001: highest change probability 1−e^(−λt), cycles weighted 2^(i−1) (GAD)",
    params: NO_PARAMS,
    build: |_: &Params| build(Score::Probability(Weighting::Gad)),
};
/// `gp-t-x`: paper 001's best GP4C_Basic function.
pub(crate) const GP_T_X: PolicyFamily = PolicyFamily {
    name: "gp-t-x",
    description: "Paper 001 Table 4 (GP4C_Basic): score t·X",
    params: NO_PARAMS,
    build: |_: &Params| build(Score::AgeTimesChanges),
};
/// `gp-t-cg`: a paper 001 GP4C_All function.
pub(crate) const GP_T_CG: PolicyFamily = PolicyFamily {
    name: "gp-t-cg",
    description: "Paper 001 Table 4 (GP4C_All): score t·CG^2.72",
    params: NO_PARAMS,
    build: |_: &Params| build(Score::AgeTimesCgPower),
};
/// `gp-gad-nad-t`: a paper 001 GP4C_All function.
pub(crate) const GP_GAD_NAD_T: PolicyFamily = PolicyFamily {
    name: "gp-gad-nad-t",
    description: "Paper 001 Table 4 (GP4C_All): score GAD·e^(NAD+t)",
    params: NO_PARAMS,
    build: |_: &Params| build(Score::GadExpNadAge),
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::context;

    fn outcome(page: PageId, unit: Unit, changed: bool) -> RefreshOutcome {
        RefreshOutcome {
            page,
            unit,
            last_refresh: 0,
            changed,
            shingle_change: if changed { 0.5 } else { 0.0 },
            delta_q: 0.0,
            gone: false,
            discovered: false,
        }
    }

    /// Page 0 changed at units 2 and 5 (visited every unit), page 1 never: at unit 6 the
    /// scores are SEED-SYSTEMS §5.2's rates turned into probabilities over t = 1.
    #[test]
    fn scores_follow_the_reference_history() {
        let pages = [0, 1];
        let ctx = context(FitMode::Online, &pages, &[1.0, 1.0], None, 6, 1);
        let crawl = CrawlState::default();
        for (score, rate) in [
            (Score::Probability(Weighting::Nad), 0.4_f64),
            (Score::Probability(Weighting::Sad), 1.0),
            (Score::Probability(Weighting::Aad), 7.0 / 15.0),
            (Score::Probability(Weighting::Gad), 18.0 / 31.0),
        ] {
            let mut policy = HistoryScore::new(score.clone());
            policy.prepare(&ctx);
            for unit in 1..=5 {
                policy.observe(&[
                    outcome(0, unit, unit == 2 || unit == 5),
                    outcome(1, unit, false),
                ]);
            }
            let s = policy.score_of(0, 6, 5);
            assert!((s - (1.0 - (-rate).exp())).abs() < 1e-9, "{score:?}: {s}");
            assert_eq!(policy.score_of(1, 6, 5), 0.0);
            assert_eq!(policy.choose(6, 1, &crawl), vec![0]);
        }
        let mut cg = HistoryScore::new(Score::Cg);
        cg.prepare(&ctx);
        for unit in 1..=4 {
            cg.observe(&[outcome(0, unit, unit == 2 || unit == 4)]);
        }
        // n = 5 visits (initial crawl + 4), X = 2.
        assert!((cg.score_of(0, 5, 4) - 0.45199).abs() < 1e-5);
    }

    #[test]
    fn evolved_functions_grow_with_the_time_since_the_last_visit() {
        let pages = [0, 1, 2];
        let ctx = context(FitMode::Online, &pages, &[1.0; 3], None, 9, 1);
        for score in [
            Score::AgeTimesChanges,
            Score::AgeTimesCgPower,
            Score::GadExpNadAge,
        ] {
            let mut policy = HistoryScore::new(score.clone());
            policy.prepare(&ctx);
            policy.observe(&[
                outcome(0, 1, true),
                outcome(1, 1, true),
                outcome(2, 1, false),
            ]);
            policy.observe(&[outcome(1, 3, true)]);
            // Page 0 changed once and was last seen at 1; page 1 the same plus a change at 3.
            assert!(
                policy.score_of(0, 8, 1) > policy.score_of(0, 4, 1),
                "{score:?}"
            );
            assert!(
                policy.score_of(2, 8, 1) <= policy.score_of(0, 8, 1),
                "{score:?}"
            );
            assert!(policy.score_of(0, 8, 1).is_finite());
        }
        // e^{t} overflows and GAD underflows for huge t: the score stays sortable (NaN is −∞,
        // ±inf clamped), never NaN or +inf.
        let mut policy = HistoryScore::new(Score::GadExpNadAge);
        policy.prepare(&ctx);
        policy.observe(&[outcome(0, 1, true)]);
        for unit in [800, 2_000, 100_000] {
            let s = policy.score_of(0, unit, 1);
            assert!(!s.is_nan() && s != f64::INFINITY, "unit {unit}: {s}");
        }
    }
}
