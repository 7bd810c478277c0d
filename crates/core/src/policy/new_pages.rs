//! User-centric refreshing with new pages inside the budget (frontier mode, issue 16): an
//! estimate of the ΔQ_A a new page would bring, from what the crawler knows before fetching it,
//! weighed against the expected ΔQ_A of the refreshes the policy would make instead. Beyond
//! paper 003, which left new pages to other work (§4), and in the spirit of paper 004's joint
//! budget for new pages and refreshes (`z_t`).
//!
//! # The estimate ([`NewPageEstimator`])
//!
//! Before a page is fetched the crawler knows its URL and which of its own copies link to it
//! ([`FrontierPage`]). Two features, each in `[0, 1)`:
//!
//! * `x₁` — the URL speaks to the workload: the share of the workload's query frequency with a
//!   term among the URL's terms (`FrontierPage::workload_match`; on wikis the URL is the
//!   page's title, so this is what its anchor text says too);
//! * `x₂` — users are shown the pages that link to it: with `V = Σ_{l ∈ in-links} v(l)`, the view
//!   weights of the linking pages in the repository, `x₂ = V / (V + v̄)` (`v̄` the mean view
//!   weight), a saturating share so that one heavily shown in-link counts about as much as
//!   many unseen ones.
//!
//! `ΔQ̂(p) = c + a·x₁(p) + b·x₂(p)`, with `c, a, b ≥ 0` fitted by least squares to the measured
//! ΔQ_A of the new pages the policy did fetch ([`calibrate`]), shrunk towards a prior by one
//! pseudo-observation: the prior gives an average frontier page `G₀`, what user-centric expects
//! of a page it has never refreshed — with `change-gain`, the mean over held pages of the gain a
//! refresh that finds a change brings (`G(p)`; a new page has certainly "changed" from
//! nothing); with the rate estimators, the mean `ΔQ̄` of held pages times the time since the
//! run's start (user-centric's `P(p, t)` of a page never refreshed, `LR = 0`) — split evenly
//! over the intercept and the features present.
//! The intercept keeps a page whose URL and in-links say nothing from being written off.
//!
//! # The choice ([`UserCentricWithNewPages::choose_with_frontier`])
//!
//! The refreshes' priorities are user-centric's own (the refresh index by default, or the
//! expected ΔQ_A of refreshing now); the frontier pages' are `ΔQ̂` (under the index, `ΔQ̂/(1 − q)`,
//! the index of a page stale since ever). The `budget` highest of both together are taken: the frontier
//! pages among them are crawled, and user-centric's `choose` fills the rest of the budget.

use std::collections::HashMap;

use super::user_centric::estimators::{Estimator, UserCentric};
use super::{PolicyContext, Reads, RefreshOutcome, RefreshPolicy};
use crate::change::change_probability;
use crate::corpus::{PageId, Unit};
use crate::crawl::{CrawlState, FrontierPage};

/// The features `(x₁, x₂)` of a frontier page (see the module docs).
pub(crate) fn features(page: &FrontierPage, view_weight: &[f64], mean_view: f64) -> [f64; 2] {
    let x1 = page.workload_match.clamp(0.0, 1.0);
    let shown: f64 = page
        .in_links
        .iter()
        .map(|&l| view_weight.get(l as usize).copied().unwrap_or(0.0))
        .sum();
    let x2 = if shown > 0.0 {
        shown / (shown + mean_view.max(f64::MIN_POSITIVE))
    } else {
        0.0
    };
    [x1, x2]
}

/// Non-negative ridge least squares for `y ≈ β·(1, x₁, x₂)`, shrunk towards `prior` with weight
/// `lambda` (`min Σ (y − β·x)² + λ‖β − β₀‖²`, `β ≥ 0`): the best of the fits with each subset of
/// coefficients free and the others held at 0 (an exhaustive active set: three coefficients).
pub fn calibrate(samples: &[([f64; 2], f64)], prior: [f64; 3], lambda: f64) -> [f64; 3] {
    let row = |x: [f64; 2]| [1.0, x[0], x[1]];
    let objective = |beta: &[f64; 3]| {
        let fit: f64 = samples
            .iter()
            .map(|&(x, y)| {
                let r = row(x);
                let e = y - (0..3).map(|k| beta[k] * r[k]).sum::<f64>();
                e * e
            })
            .sum();
        fit + lambda * (0..3).map(|k| (beta[k] - prior[k]).powi(2)).sum::<f64>()
    };
    let mut best: Option<([f64; 3], f64)> = None;
    for mask in 0u8..8 {
        let free: Vec<usize> = (0..3).filter(|k| mask & (1 << k) != 0).collect();
        // Normal equations over the free coefficients (the others are 0).
        let n = free.len();
        let mut a = vec![vec![0.0; n + 1]; n];
        for (i, &ki) in free.iter().enumerate() {
            for (j, &kj) in free.iter().enumerate() {
                a[i][j] = samples
                    .iter()
                    .map(|&(x, _)| row(x)[ki] * row(x)[kj])
                    .sum::<f64>()
                    + if i == j { lambda } else { 0.0 };
            }
            a[i][n] =
                samples.iter().map(|&(x, y)| row(x)[ki] * y).sum::<f64>() + lambda * prior[ki];
        }
        let Some(solution) = solve(a) else { continue };
        let mut beta = [0.0; 3];
        for (i, &k) in free.iter().enumerate() {
            beta[k] = solution[i];
        }
        if beta.iter().any(|&b| b < 0.0) {
            continue;
        }
        let value = objective(&beta);
        if best.is_none_or(|(_, v)| value < v) {
            best = Some((beta, value));
        }
    }
    best.map_or([0.0; 3], |(b, _)| b)
}

/// Gaussian elimination with partial pivoting on an augmented `n × (n + 1)` matrix.
fn solve(mut a: Vec<Vec<f64>>) -> Option<Vec<f64>> {
    let n = a.len();
    for col in 0..n {
        let pivot = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() < 1e-300 {
            return None;
        }
        a.swap(col, pivot);
        let pivot_row = a[col].clone();
        for (r, row) in a.iter_mut().enumerate() {
            if r != col {
                let f = row[col] / pivot_row[col];
                for (x, p) in row.iter_mut().zip(&pivot_row).skip(col) {
                    *x -= f * p;
                }
            }
        }
    }
    Some((0..n).map(|i| a[i][n] / a[i][i]).collect())
}

/// The new-page ΔQ estimate and its calibration (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct NewPageEstimator {
    view_weight: Vec<f64>,
    mean_view: f64,
    /// Features of the frontier pages chosen, until their first crawl is observed.
    pending: HashMap<PageId, [f64; 2]>,
    /// `(features, measured ΔQ_A)` of the new pages fetched.
    samples: Vec<([f64; 2], f64)>,
}

impl NewPageEstimator {
    pub fn prepare(&mut self, context: &PolicyContext<'_>) {
        *self = NewPageEstimator::default();
        self.observe_views(context.view_weight);
    }

    /// The repository's view weights now (the in-link feature reads them).
    pub(crate) fn observe_views(&mut self, view_weight: &[f64]) {
        self.view_weight = view_weight.to_vec();
        self.mean_view = if view_weight.is_empty() {
            0.0
        } else {
            view_weight.iter().sum::<f64>() / view_weight.len() as f64
        };
    }

    pub(crate) fn features(&self, page: &FrontierPage) -> [f64; 2] {
        features(page, &self.view_weight, self.mean_view)
    }

    /// `(c, a, b)` given the prior gain `g0` of an average frontier page (`x̄` over `frontier`).
    pub(crate) fn coefficients(&self, frontier: &[[f64; 2]], g0: f64) -> [f64; 3] {
        let n = frontier.len().max(1) as f64;
        let mean = [
            frontier.iter().map(|x| x[0]).sum::<f64>() / n,
            frontier.iter().map(|x| x[1]).sum::<f64>() / n,
        ];
        // An average page: c + a·x̄₁ + b·x̄₂ = g0, split evenly over the intercept and the
        // features present in the frontier.
        let shares = 1.0 + mean.iter().filter(|&&m| m > 0.0).count() as f64;
        let per = |m: f64| if m > 0.0 { g0 / (shares * m) } else { 0.0 };
        let prior = [g0 / shares, per(mean[0]), per(mean[1])];
        // One pseudo-observation of an average page.
        let lambda = 1.0 + mean[0] * mean[0] + mean[1] * mean[1];
        calibrate(&self.samples, prior, lambda)
    }

    /// `ΔQ̂` of each frontier page (in `frontier`'s order), with `g0` the prior gain.
    pub(crate) fn estimates(&self, frontier: &[&FrontierPage], g0: f64) -> Vec<f64> {
        let xs: Vec<[f64; 2]> = frontier.iter().map(|f| self.features(f)).collect();
        let [c, a, b] = self.coefficients(&xs, g0);
        xs.iter().map(|x| c + a * x[0] + b * x[1]).collect()
    }

    /// Remembers the features of frontier pages about to be crawled.
    pub(crate) fn chose(&mut self, page: &FrontierPage) {
        let x = self.features(page);
        self.pending.insert(page.page, x);
    }

    /// Calibration: the measured ΔQ_A of each new page fetched (not of links that led nowhere).
    pub fn observe(&mut self, outcomes: &[RefreshOutcome]) {
        for o in outcomes.iter().filter(|o| o.discovered) {
            if let Some(x) = self.pending.remove(&o.page) {
                if !o.gone {
                    self.samples.push((x, o.delta_q));
                }
            }
        }
    }

    /// New pages measured so far.
    pub(crate) fn measured(&self) -> usize {
        self.samples.len()
    }
}

/// User-centric with the new-page estimate: every call but `choose_with_frontier` goes to
/// [`UserCentric`] unchanged, so outside frontier mode it is paper 003's policy exactly.
#[derive(Debug, Clone, Default)]
pub struct UserCentricWithNewPages {
    pub(crate) inner: UserCentric,
    pub(crate) estimator: NewPageEstimator,
}

impl UserCentricWithNewPages {
    pub(crate) fn new(inner: UserCentric) -> Self {
        UserCentricWithNewPages {
            inner,
            estimator: NewPageEstimator::default(),
        }
    }

    /// User-centric's priority of refreshing each page now (the expected ΔQ_A of its
    /// estimator) and the prior gain `G₀` of a new page (see the module docs).
    ///
    /// Under the refresh index ([`Estimator::Whittle`]) the third value scales a new page's
    /// `ΔQ̂` onto the index: a page the repository lacks has been "stale" forever, and its index
    /// is the limit `G/(1 − q)` of [`super::user_centric::estimators::refresh_index`] (crawling it gains `ΔQ̂` at every unit until
    /// it changes), with `q = e^{−λ̄}` at the mean change rate of held pages. Elsewhere it is 1.
    fn refresh_priorities(&self, unit: Unit, crawl: &CrawlState) -> (Vec<f64>, f64, f64) {
        let rates = self.inner.change_rates();
        let last = crawl.last_refreshes(rates.len());
        let prio = self.inner.priorities(unit, &rates, &last);
        let mut new_page_scale = 1.0;
        let per_page_gain = match self.inner.active_estimator() {
            Some(Estimator::ChangeGain | Estimator::Whittle) => {
                if self.inner.active_estimator() == Some(Estimator::Whittle) {
                    let held_rates: Vec<f64> = crawl
                        .held_pages()
                        .filter_map(|p| rates.get(p as usize).copied())
                        .filter(|r| r.is_finite())
                        .collect();
                    let changed = change_probability(mean(&held_rates), 1.0);
                    if changed > 0.0 {
                        new_page_scale = 1.0 / changed;
                    }
                }
                self.inner.gains_given_change()
            }
            // As for a page never refreshed (LR = 0): the rate times the time since the start.
            _ => self
                .inner
                .mean_normalised()
                .iter()
                .map(|m| m * f64::from(unit))
                .collect(),
        };
        let held: Vec<f64> = crawl
            .held_pages()
            .filter_map(|p| per_page_gain.get(p as usize).copied())
            .collect();
        (prio, mean(&held), new_page_scale)
    }
}

fn mean(x: &[f64]) -> f64 {
    if x.is_empty() {
        0.0
    } else {
        x.iter().sum::<f64>() / x.len() as f64
    }
}

impl RefreshPolicy for UserCentricWithNewPages {
    fn name(&self) -> String {
        self.inner.name()
    }
    fn label(&self) -> String {
        self.inner.label()
    }
    fn reads(&self) -> Reads {
        Reads {
            delta_q: true,
            ..Reads::default()
        }
    }
    fn settings(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = self.inner.settings();
        if self.estimator.measured() > 0 {
            m.insert(
                "new_pages_measured".into(),
                self.estimator.measured().into(),
            );
        }
        m
    }
    fn prepare(&mut self, context: &PolicyContext<'_>) {
        self.inner.prepare(context);
        self.estimator.prepare(context);
    }
    fn choose(&mut self, unit: Unit, budget: usize, crawl: &CrawlState) -> Vec<PageId> {
        self.inner.choose(unit, budget, crawl)
    }

    /// See the module docs: the `budget` best of refreshes (user-centric's priority) and
    /// frontier pages (`ΔQ̂`) together.
    fn choose_with_frontier(
        &mut self,
        unit: Unit,
        budget: usize,
        crawl: &CrawlState,
    ) -> Vec<PageId> {
        let frontier = crawl.frontier_pages();
        if frontier.is_empty() || budget == 0 {
            return self.inner.choose(unit, budget, crawl);
        }
        self.inner.fit_rates(crawl);
        let (prio, g0, new_page_scale) = self.refresh_priorities(unit, crawl);
        let estimates: Vec<f64> = self
            .estimator
            .estimates(&frontier, g0)
            .into_iter()
            .map(|e| e * new_page_scale)
            .collect();
        // Candidates: (value, is_new, tie key, page).
        let mut refresh: Vec<(f64, PageId)> = crawl
            .held_pages()
            .filter(|&p| (p as usize) < prio.len())
            .map(|p| (prio[p as usize], p))
            .collect();
        refresh.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        refresh.truncate(budget);
        let mut new: Vec<(f64, usize)> = estimates.iter().copied().zip(0..).collect();
        // Ties among new pages: earliest discovered first (the frontier's order).
        new.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        new.truncate(budget);
        // Merge: a new page wins a slot when its estimate beats the refresh it displaces.
        let (mut i, mut j, mut taken_new) = (0, 0, Vec::new());
        while i + j < budget && (i < refresh.len() || j < new.len()) {
            let take_new = match (refresh.get(i), new.get(j)) {
                (Some(r), Some(n)) => n.0 > r.0,
                (None, Some(_)) => true,
                _ => false,
            };
            if take_new {
                taken_new.push(frontier[new[j].1]);
                j += 1;
            } else {
                i += 1;
            }
        }
        for f in &taken_new {
            self.estimator.chose(f);
        }
        let mut chosen: Vec<PageId> = taken_new.iter().map(|f| f.page).collect();
        chosen.extend(self.inner.choose(unit, budget - chosen.len(), crawl));
        chosen
    }

    fn observe(&mut self, outcomes: &[RefreshOutcome]) {
        self.estimator.observe(outcomes);
        self.inner.observe(outcomes);
    }
    fn wants_views(&self, unit: Unit) -> bool {
        self.inner.wants_views(unit)
    }
    fn observe_views(&mut self, view_weight: &[f64]) {
        self.estimator.observe_views(view_weight);
        self.inner.observe_views(view_weight);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frontier_page(page: PageId, workload_match: f64, in_links: Vec<PageId>) -> FrontierPage {
        FrontierPage {
            page,
            url: format!("https://site/wiki/P{page}"),
            found: 0,
            in_links,
            url_terms: vec![],
            workload_match,
        }
    }

    #[test]
    fn a_page_matching_frequent_workload_terms_ranks_above_one_matching_none() {
        let mut est = NewPageEstimator::default();
        est.observe_views(&[1.0, 1.0, 1.0, 1.0]);
        let matching = frontier_page(10, 0.6, vec![0]);
        let unrelated = frontier_page(11, 0.0, vec![1]);
        let both = [&matching, &unrelated];
        let prior = est.estimates(&both, 0.01);
        assert!(prior[0] > prior[1], "{prior:?}");
        // Calibrated on fetched pages where the URL match is what paid off: still above.
        for k in 0..6 {
            let p = frontier_page(20 + k, 0.1 * f64::from(k), vec![2]);
            est.chose(&p);
            est.observe(&[RefreshOutcome {
                page: p.page,
                unit: 1,
                last_refresh: 1,
                changed: false,
                shingle_change: 0.0,
                delta_q: 0.02 * f64::from(k),
                gone: false,
                discovered: true,
            }]);
        }
        assert_eq!(est.measured(), 6);
        let fitted = est.estimates(&both, 0.01);
        assert!(fitted[0] > fitted[1], "{fitted:?}");
        assert!(fitted[0] > 0.0);
    }

    #[test]
    fn calibration_recovers_a_linear_gain_and_never_goes_negative() {
        let samples: Vec<([f64; 2], f64)> = (0..20)
            .map(|i| {
                let x = [f64::from(i % 5) / 5.0, f64::from(i % 3) / 3.0];
                (x, 0.3 * x[0] + 0.1 * x[1])
            })
            .collect();
        let [c, a, b] = calibrate(&samples, [1.0, 1.0, 1.0], 1e-6);
        assert!(c.abs() < 1e-3, "{c}");
        assert!((a - 0.3).abs() < 1e-3 && (b - 0.1).abs() < 1e-3, "{a} {b}");
        // A feature that hurts is dropped, not given a negative weight.
        let bad: Vec<([f64; 2], f64)> = (0..10)
            .map(|i| {
                let x = [f64::from(i) / 10.0, 1.0 - f64::from(i) / 10.0];
                (x, x[0])
            })
            .collect();
        let beta = calibrate(&bad, [0.0, 0.0, 0.0], 1e-6);
        assert!(beta.iter().all(|&b| b >= 0.0), "{beta:?}");
        // No samples: the prior.
        let prior = calibrate(&[], [0.1, 0.2, 0.4], 1.0);
        assert!((0..3).all(|k| (prior[k] - [0.1, 0.2, 0.4][k]).abs() < 1e-12));
    }

    #[test]
    fn in_links_from_shown_pages_raise_the_feature() {
        let views = [4.0, 0.0, 0.0];
        let shown = frontier_page(5, 0.0, vec![0]);
        let unseen = frontier_page(6, 0.0, vec![1, 2]);
        let [_, a] = features(&shown, &views, 4.0 / 3.0);
        let [_, b] = features(&unseen, &views, 4.0 / 3.0);
        assert!(a > 0.5 && b == 0.0, "{a} {b}");
    }
}
