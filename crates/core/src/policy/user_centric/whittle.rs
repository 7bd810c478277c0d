//! [`Estimator::Whittle`](super::estimators::Estimator::Whittle) keeps
//! [`ChangeGain`]'s two estimates (λ_p, `G(p)`) and ranks pages by the refresh index of the
//! time-averaged problem, [`refresh_index`]: `W = G·((1 − q^k)/(1 − q) − k·q^k)`, `q = e^{−λ}`,
//! `k = t − LR`. `ChangeGain`'s priority is myopic — the expected gain at the next evaluation —
//! so under a large budget it refreshes pages that change every unit every unit and leaves
//! rarely changing pages waiting behind them, although one refresh of the latter keeps many
//! units fresh. The index is the price of a refresh at which waiting one unit more costs as
//! much quality as it saves; the Lagrangian optimum of SBR/EBR (Cho & Garcia-Molina's
//! frequencies) refreshes each page when its index reaches the common price, so refreshing the
//! `B` pages of highest index is that optimum made greedy, with user-centric gains as the
//! weights. It equals `ChangeGain` one unit after a refresh.

use super::change_gain::ChangeGain;
use super::gain_estimator::{GainEstimator, Setup};
use super::rates::ChangeRates;
use crate::corpus::Unit;
use crate::policy::{ChangeHistory, RefreshOutcome};

/// Refresh index of a page whose copy loses `gain` of quality per unit while stale, that
/// changes as a Poisson process of `rate` per unit, and was last refreshed `elapsed` units ago:
/// `W(k) = G·((1 − q^k)/(1 − q) − k·q^k)` with `q = e^{−λ}`.
///
/// It is the Lagrange price of one refresh at which refreshing now (period `k`) and waiting one
/// more unit (period `k + 1`) cost the same time-averaged quality: with a refresh every `k`
/// units the copy is stale at `Σ_{j<k} (1 − q^j)` of the `k` evaluations, so the loss over a
/// period is `C(k) = G·(k − (1 − q^k)/(1 − q))`, and `(C(k) + W)/k = (C(k+1) + W)/(k+1)` gives
/// `W(k)`. Refreshing the pages of highest index is the greedy form of the Lagrangian optimum
/// (the discrete-time counterpart of the continuous-time optimum of Azar et al., "Tractable
/// near-optimal policies for crawling", PNAS 2018, whose crawl condition is
/// `(μ/Δ)·(1 − (1 + Δτ)·e^{−Δτ}) = λ`; Whittle's index of this restless bandit). `W(1) = G·(1 − q)`,
/// the expected gain of refreshing now ([`ChangeGain`]); `W` grows with the wait
/// towards `G/(1 − q)`, so a page that changes every unit is worth `G` per refresh while a
/// rarely changing page, once it has waited, is worth more: refreshing it buys many fresh
/// units.
pub fn refresh_index(gain: f64, rate: f64, elapsed: f64) -> f64 {
    if gain <= 0.0 || elapsed <= 0.0 || rate.is_nan() || rate <= 0.0 {
        return 0.0;
    }
    if rate.is_infinite() {
        return gain;
    }
    let q = (-rate).exp();
    // (1 − q^k)/(1 − q) with expm1 for accuracy at small rates.
    let geometric = (-rate * elapsed).exp_m1() / (-rate).exp_m1();
    (gain * (geometric - elapsed * q.powf(elapsed))).max(0.0)
}

/// [`ChangeGain`]'s estimates ranked by the refresh index (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct Whittle {
    /// The change rates' and gains' estimates, recorded and told as for `ChangeGain`.
    estimates: ChangeGain,
}

impl GainEstimator for Whittle {
    fn prepare(&mut self, setup: &Setup<'_>) {
        self.estimates.prepare(setup);
    }

    fn grow(&mut self, count: usize) {
        self.estimates.grow(count);
    }

    fn fit_oracle(&mut self, history: &ChangeHistory, pages: usize) {
        self.estimates.fit_oracle(history, pages);
    }

    fn tell_gains(&mut self, history: &ChangeHistory, pages: usize) {
        self.estimates.tell_gains(history, pages);
    }

    fn observe(&mut self, page: usize, interval: f64, outcome: &RefreshOutcome) {
        self.estimates.observe(page, interval, outcome);
    }

    fn mean_normalised(&self, rates: &ChangeRates) -> Vec<f64> {
        self.estimates.mean_normalised(rates)
    }

    /// [`refresh_index`] of each page's gain given a change, change rate and units since its
    /// last refresh.
    fn priorities(
        &self,
        unit: Unit,
        rates: &[f64],
        model: &ChangeRates,
        last: &[Unit],
    ) -> Vec<f64> {
        self.estimates
            .rate_gain_priorities(unit, rates, model, last, refresh_index)
    }

    fn gains_given_change(&self) -> Option<Vec<f64>> {
        self.estimates.gains_given_change()
    }

    fn ranks_by_change(&self) -> bool {
        self.estimates.ranks_by_change()
    }

    fn wants_views(&self, unit: Unit) -> bool {
        self.estimates.wants_views(unit)
    }

    fn observe_views(&mut self, view_weight: &[f64]) {
        self.estimates.observe_views(view_weight);
    }
}

#[cfg(test)]
mod tests {
    use super::super::estimators::{Estimator, UserCentric};
    use super::*;
    use crate::policy::testkit::{context, history};
    use crate::policy::{FitMode, RefreshPolicy};

    #[test]
    fn the_default_does_not_spend_the_budget_on_a_page_that_rarely_changes() {
        // Oracle, one refresh per unit for 8 units. Page 0 changed once (unit 1) with a large
        // gain; page 1 changes every unit with a smaller one; page 2 never changes. Paper
        // 003's priority ΔQ̄·(t − LR) of page 0 never falls below its gain, so it takes every
        // refresh, seven of them finding nothing; the refresh index weighs each gain by the
        // chance that a refresh finds a change now and over the coming units.
        let h = history(
            9,
            &[vec![1], (1..=8).collect(), vec![]],
            &[1.0; 3],
            &[8.0, 1.0],
        );
        let pages = [0, 1, 2];
        let ctx = context(FitMode::Oracle, &pages, &[0.0; 3], Some(&h), 8, 1);
        let refreshes = |uc: &mut UserCentric| {
            uc.prepare(&ctx);
            // The refresher records each refresh in the crawl state, which the policy reads.
            let mut crawl = crate::policy::testkit::no_crawl();
            let mut count = [0usize; 3];
            for unit in 1..=8 {
                for p in uc.choose(unit, 1, &crawl) {
                    count[p as usize] += 1;
                    crawl.note_fetch(p, unit, false);
                }
            }
            count
        };
        let mut default = UserCentric::new(None);
        let whittle = refreshes(&mut default);
        assert_eq!(default.label(), "user-centric (ΔQ̄ whittle)");
        let paper =
            refreshes(&mut UserCentric::new(None).with_estimator(Some(Estimator::MeanOfRatios)));
        assert!(paper[0] >= 7, "{paper:?}");
        assert!(
            whittle[1] >= 4 && whittle[0] >= 1 && whittle[2] == 0,
            "{whittle:?}"
        );
    }

    #[test]
    fn refresh_index_is_the_price_that_makes_waiting_indifferent() {
        // Brute force: loss over a period of k units, C(k) = G·Σ_{j<k} (1 − q^j); the index is
        // the price W with (C(k) + W)/k = (C(k+1) + W)/(k+1).
        let loss =
            |g: f64, q: f64, k: u32| (0..k).map(|j| g * (1.0 - q.powi(j as i32))).sum::<f64>();
        for (g, rate) in [(1.0, 0.05f64), (2.5, 0.7), (0.3, 3.0), (1.0, 1e-7)] {
            let q = (-rate).exp();
            for k in 1..40u32 {
                let w = refresh_index(g, rate, f64::from(k));
                let kf = f64::from(k);
                let brute = kf * loss(g, q, k + 1) - (kf + 1.0) * loss(g, q, k);
                assert!(
                    (w - brute).abs() <= 1e-9 * brute.abs().max(1e-12),
                    "g {g} rate {rate} k {k}: {w} vs {brute}"
                );
            }
            // One unit after a refresh it is the expected gain of refreshing now.
            assert!((refresh_index(g, rate, 1.0) - g * (1.0 - q)).abs() < 1e-12);
        }
        // A page that changes every unit is worth its gain whatever the wait; a rarely changing
        // one overtakes it once it has waited long enough.
        assert_eq!(refresh_index(1.0, f64::INFINITY, 7.0), 1.0);
        assert!(refresh_index(1.0, 0.1, 2.0) < refresh_index(1.0, 5.0, 2.0));
        assert!(refresh_index(1.0, 0.1, 30.0) > refresh_index(1.0, 5.0, 30.0));
        assert_eq!(refresh_index(1.0, 0.0, 5.0), 0.0);
        assert_eq!(refresh_index(0.0, 1.0, 5.0), 0.0);
        assert_eq!(refresh_index(1.0, 1.0, 0.0), 0.0);
    }
}
