//! [`Estimator::Pooled`](super::estimators::Estimator::Pooled) treats `ΔQ̄(p)` as a rate —
//! quality gained per unit of staleness — and estimates it as `(ΣΔQ_A + m₀·τ) / (ΣΔt + τ)`
//! over the page's observed refreshes ([`shrunk`]): its own evidence
//! plus a prior of one pseudo-interval `τ` at the pooled rate `m₀ = ΣΔQ_A / ΣΔt` of every
//! observed refresh. `τ = N/B`, one round-robin cycle, so the prior weighs as much as one full
//! sweep of the site (the same prior SBR/EBR's online change rates use,
//! [`crate::policy::planned::online_rate`]). The priority is paper 003's
//! `P(p, t) = ΔQ̄(p) · (t − LR(p, t))`.
//!
//! Why not the mean of ratios online: a deployed crawler mostly refreshes pages that have not
//! changed since the last visit, and a single such refresh measures `ΔQ̄ = 0` and, under the
//! mean of ratios, writes the page off for good; the pages whose changes matter are then only
//! found among the never-visited ones. The pooled estimate instead decays a page measured at
//! 0 like `τ/(Δt + τ)`, so it is revisited once its wait makes it as promising as the
//! unexplored pages, and a page that did pay off is ranked by its whole observed rate, not by
//! its luckiest interval. With nothing measured yet it is the unbiased guess, like
//! the mean-of-ratios default.

use super::formulas::shrunk;
use super::gain_estimator::{GainEstimator, Setup};
use super::rates::ChangeRates;
use super::samples::RefreshSamples;
use crate::policy::{ChangeHistory, RefreshOutcome};

/// The page's rate shrunk towards the pooled rate (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct Pooled {
    samples: RefreshSamples,
    /// τ: `N/B` units (at least 1).
    prior_interval: f64,
}

impl GainEstimator for Pooled {
    fn prepare(&mut self, setup: &Setup<'_>) {
        self.samples = RefreshSamples::new(setup.pages, setup.window);
        self.prior_interval = setup.prior_interval;
    }

    fn grow(&mut self, count: usize) {
        self.samples.grow(count);
    }

    /// The refreshes right after each change; a page that never changed also counts one
    /// refresh over the whole history that gained nothing.
    fn fit_oracle(&mut self, history: &ChangeHistory, pages: usize) {
        self.samples.fit_oracle(history, pages);
        for (p, page) in history.pages.iter().enumerate().take(pages) {
            if page.change_units.is_empty() {
                self.samples.push(p, 0.0, f64::from(history.units.max(1)));
            }
        }
    }

    fn observe(&mut self, page: usize, interval: f64, outcome: &RefreshOutcome) {
        self.samples.push(page, outcome.delta_q, interval);
    }

    fn mean_normalised(&self, _rates: &ChangeRates) -> Vec<f64> {
        let sums = self.samples.page_sums();
        let (all_dq, all_dt) = sums
            .iter()
            .fold((0.0, 0.0), |(a, b), (dq, dt)| (a + dq, b + dt));
        let pooled_rate = if all_dt > 0.0 { all_dq / all_dt } else { 0.0 };
        shrunk(sums, self.prior_interval, |_| pooled_rate)
    }
}

#[cfg(test)]
mod tests {
    use super::super::estimators::tests::measured;
    use super::super::estimators::{Estimator, UserCentric};
    use crate::policy::testkit::{context, history, run};
    use crate::policy::{FitMode, RefreshPolicy};

    #[test]
    fn pooled_estimate_shrinks_each_page_towards_the_pooled_rate() {
        // 4 pages, B = 2: τ = N/B = 2 units.
        let pages = [0, 1, 2, 3];
        let ctx = context(FitMode::Online, &pages, &[0.0; 4], None, 10, 2);
        let mut uc = UserCentric::new(None).with_estimator(Some(Estimator::Pooled));
        uc.prepare(&ctx);
        let mut crawl = crate::policy::testkit::no_crawl();
        assert_eq!(uc.mean_normalised(), vec![0.0; 4], "nothing observed yet");
        assert_eq!(uc.choose(1, 2, &crawl), vec![0, 1]);
        // Page 0 gained 4 over 1 unit, page 1 nothing: pooled rate m₀ = 4/2 = 2.
        crate::policy::testkit::observe(
            &mut uc,
            &mut crawl,
            &[measured(0, 1, 0, 4.0), measured(1, 1, 0, 0.0)],
        );
        // ΔQ̄ = (ΣΔQ + m₀τ)/(ΣΔt + τ): (4 + 4)/3, (0 + 4)/3, and m₀ = 2 for the unobserved.
        let m = uc.mean_normalised();
        let expected = [8.0 / 3.0, 4.0 / 3.0, 2.0, 2.0];
        for (a, b) in m.iter().zip(expected) {
            assert!((a - b).abs() < 1e-12, "{m:?}");
        }
        // Unlike the mean of ratios, the page measured at 0 is not written off: after a wait
        // of 2 units its priority 8/3 exceeds page 0's fresh 8/3 · 1.
        assert_eq!(
            uc.choose(2, 2, &crawl),
            vec![2, 3],
            "unexplored pages first: 2·2 > 8/3"
        );
        crate::policy::testkit::observe(
            &mut uc,
            &mut crawl,
            &[measured(2, 2, 0, 0.0), measured(3, 2, 0, 0.0)],
        );
        // m₀ = 4/6; page 1 (ΔQ̄ = (0 + 4/3)/3 = 4/9, waited 2) vs page 0 ((4 + 4/3)/3 = 16/9,
        // waited 2) vs pages 2, 3 ((0 + 4/3)/4 = 1/3, waited 1).
        assert_eq!(uc.choose(3, 2, &crawl), vec![0, 1]);
    }

    #[test]
    fn pooled_revisits_a_page_measured_at_zero_but_mean_of_ratios_never_does() {
        // Page 0 changes once, at unit 6, with a large ΔQ; page 1 changes every unit with a
        // small one. With B = 1 page 0 is first refreshed at unit 1 (nothing changed yet).
        let h = history(13, &[vec![6], (1..=12).collect()], &[1.0; 2], &[50.0, 1.0]);
        let pages = [0, 1];
        let ctx = context(FitMode::Online, &pages, &[0.0; 2], None, 12, 1);
        let refreshed_after_change = |estimator| {
            let mut uc = UserCentric::new(None).with_estimator(Some(estimator));
            let choices = run(&mut uc, &ctx, &h);
            choices
                .iter()
                .enumerate()
                .any(|(i, c)| i + 1 >= 6 && c.contains(&0))
        };
        assert!(refreshed_after_change(Estimator::Pooled));
        assert!(!refreshed_after_change(Estimator::MeanOfRatios));
    }
}
