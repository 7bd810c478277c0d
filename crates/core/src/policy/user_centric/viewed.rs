//! [`Estimator::Viewed`](super::estimators::Estimator::Viewed) is
//! [`Pooled`](super::pooled::Pooled) with a prior that depends on the page:
//! `m₀(p) = α + β·v(p)`, where `v(p) = Σ_q f_q · I(rank of p in q's results)` is how often
//! users are shown `p` in the repository at unit 0 (the quantity the user-centric metric
//! weights by, and the one EBR plans with; the crawler has it from its own index, so it is no
//! peek at the live Web). `α, β ≥ 0` are fitted by weighted least squares to the observed rates
//! (weights `Δt`, `weighted_line_fit`), so when views do not predict `ΔQ` on a site, `β`
//! falls to 0 and this is `Pooled`. Online, a crawler learns `ΔQ̄` from few refreshes that
//! found a change; the fitted prior lets it look first at the pages whose changes users would
//! see.

use super::formulas::shrunk;
use super::gain_estimator::{GainEstimator, Setup};
use super::rates::ChangeRates;
use super::samples::RefreshSamples;
use crate::policy::{ChangeHistory, RefreshOutcome};

/// Fits `y/w ≈ α + β·x(p)` over pages given as `(y, w)` sums (`y` the summed response, `w`
/// its weight: units observed, or changes seen) by weighted least squares with `α, β ≥ 0`
/// (a negative coefficient is set to 0 and the other refitted alone).
fn weighted_line_fit(sums: &[(f64, f64)], x: impl Fn(usize) -> f64) -> (f64, f64) {
    let (mut w, mut sx, mut sxx, mut sy, mut sxy) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for (p, &(dy, dw)) in sums.iter().enumerate() {
        let xp = x(p);
        w += dw;
        sx += dw * xp;
        sxx += dw * xp * xp;
        sy += dy;
        sxy += dy * xp;
    }
    if w <= 0.0 {
        return (0.0, 0.0);
    }
    let det = w * sxx - sx * sx;
    let beta = if det > 0.0 {
        (w * sxy - sx * sy) / det
    } else {
        0.0
    };
    let alpha = (sy - beta * sx) / w;
    if beta < 0.0 {
        (sy / w, 0.0)
    } else if alpha < 0.0 {
        (0.0, if sxx > 0.0 { sxy / sxx } else { 0.0 })
    } else {
        (alpha, beta)
    }
}

/// The pooled estimate with a prior fitted to the view weights (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct Viewed {
    samples: RefreshSamples,
    /// τ: `N/B` units (at least 1).
    prior_interval: f64,
    /// The view weights `v(p)` at unit 0 (the prior's covariate).
    view_weight: Vec<f64>,
}

impl GainEstimator for Viewed {
    fn prepare(&mut self, setup: &Setup<'_>) {
        self.samples = RefreshSamples::new(setup.pages, setup.window);
        self.prior_interval = setup.prior_interval;
        self.view_weight = setup.view_weight.to_vec();
    }

    fn grow(&mut self, count: usize) {
        self.samples.grow(count);
    }

    /// The refreshes right after each change (a page that never changed has no refresh, and
    /// keeps its prior).
    fn fit_oracle(&mut self, history: &ChangeHistory, pages: usize) {
        self.samples.fit_oracle(history, pages);
    }

    fn observe(&mut self, page: usize, interval: f64, outcome: &RefreshOutcome) {
        self.samples.push(page, outcome.delta_q, interval);
    }

    fn mean_normalised(&self, _rates: &ChangeRates) -> Vec<f64> {
        let sums = self.samples.page_sums();
        let view = |p: usize| self.view_weight.get(p).copied().unwrap_or(0.0);
        let (alpha, beta) = weighted_line_fit(&sums, view);
        shrunk(sums, self.prior_interval, |p| alpha + beta * view(p))
    }

    fn observe_views(&mut self, view_weight: &[f64]) {
        self.view_weight = view_weight.to_vec();
    }
}

#[cfg(test)]
mod tests {
    use super::super::estimators::tests::measured;
    use super::super::estimators::{Estimator, UserCentric};
    use crate::policy::testkit::context;
    use crate::policy::{FitMode, RefreshPolicy};

    #[test]
    fn viewed_prior_follows_the_view_weights_that_predict_gains() {
        // Views 0, 1, 2, 3, 4, 5; B = 2 → τ = 3. Pages 1 and 3 were refreshed after 1 unit
        // and gained exactly their view weight: rate = v, so the fit is α = 0, β = 1.
        let pages = [0, 1, 2, 3, 4, 5];
        let views = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0];
        let ctx = context(FitMode::Online, &pages, &views, None, 10, 2);
        let mut uc = UserCentric::new(None).with_estimator(Some(Estimator::Viewed));
        uc.prepare(&ctx);
        uc.observe(&[measured(1, 1, 0, 1.0), measured(3, 1, 0, 3.0)]);
        let m = uc.mean_normalised();
        // Unobserved pages get their prior v(p); observed ones (v + v·3)/(1 + 3) = v.
        for (p, &v) in views.iter().enumerate() {
            assert!((m[p] - v).abs() < 1e-9, "page {p}: {m:?}");
        }
        // So the most viewed unexplored pages come first (5, then 4).
        assert_eq!(
            uc.choose(2, 2, &crate::policy::testkit::no_crawl()),
            vec![5, 4]
        );
        // Views that predict nothing (gains fall with views) give β = 0: the pooled rate.
        let mut uc = UserCentric::new(None).with_estimator(Some(Estimator::Viewed));
        uc.prepare(&ctx);
        uc.observe(&[measured(1, 1, 0, 4.0), measured(3, 1, 0, 0.0)]);
        let pooled = {
            let mut p = UserCentric::new(None).with_estimator(Some(Estimator::Pooled));
            p.prepare(&ctx);
            p.observe(&[measured(1, 1, 0, 4.0), measured(3, 1, 0, 0.0)]);
            p.mean_normalised()
        };
        assert_eq!(uc.mean_normalised(), pooled);
    }
}
