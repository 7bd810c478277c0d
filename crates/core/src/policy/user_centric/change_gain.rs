//! [`Estimator::ChangeGain`](super::estimators::Estimator::ChangeGain) estimates the expected
//! gain of a refresh now directly, as the probability that the page changed since its last
//! fetch times the gain its changes bring: `P(p, t) = (1 − e^{−λ_p (t − LR)}) · G(p)`.
//!
//! Online, `λ_p` is unknown: it is the driver's [`ChangeRates`] (by default a posterior under
//! the distribution of change rates of the page's directory, learned by EM from every page's
//! visits, see [`super::rates`]), and the priority is the expectation over that posterior.
//! `G(p)` is the mean ΔQ_A of its refreshes that found a change, shrunk by one pseudo-change
//! towards `κ·(v(p) + v̄)`, its exposure to users (view weight plus one mean view, re-read from
//! the repository every [`VIEWS_EVERY`] units) times the gain per unit of exposure over every
//! change seen ([`ChangeGain::gains`]). Unlike the rate estimators
//! ([`MeanOfRatios`], [`Pooled`], [`Viewed`]), a refresh that found nothing lowers the page's
//! change rate and leaves its gain alone, so a page visited too soon is not mistaken for a page
//! whose changes do not matter; and the priority saturates at `G(p)` instead of growing
//! linearly with the wait, because a second change before the refresh adds little to what
//! users see beyond the first. Oracle mode uses the history's change rate and measured gains;
//! told only one of them (`OracleKnowledge`, `knows=rates|gains`) it learns the other as
//! online mode does, which measures what each estimate costs online mode.
//!
//! [`MeanOfRatios`]: super::mean_of_ratios::MeanOfRatios
//! [`Pooled`]: super::pooled::Pooled
//! [`Viewed`]: super::viewed::Viewed

use super::formulas::{elapsed, shrunk};
use super::gain_estimator::{GainEstimator, Setup};
use super::rates::ChangeRates;
use crate::change::change_probability;
use crate::corpus::Unit;
use crate::policy::{ChangeHistory, RefreshOutcome};

/// How often online [`ChangeGain`] re-reads the repository's view weights, in units: the
/// cadence at which EBR replans on them (`policy::planned`'s default `replan_every`).
pub const VIEWS_EVERY: Unit = 4;

/// What a page's refreshes that found a change gained: how many, and their summed ΔQ_A.
#[derive(Debug, Clone, Default)]
struct GainsSeen {
    changes: usize,
    gain_sum: f64,
}

impl GainsSeen {
    fn record(&mut self, changed: bool, delta_q: f64) {
        if changed {
            self.changes += 1;
            self.gain_sum += delta_q;
        }
    }
}

/// Each of the first `pages` pages' changes in the history, each with the gain measured by
/// refreshing right after it.
fn history_gain_records(history: &ChangeHistory, pages: usize) -> Vec<GainsSeen> {
    let mut records = vec![GainsSeen::default(); pages];
    for (record, page) in records.iter_mut().zip(&history.pages) {
        for &dq in &page.delta_q {
            record.record(true, dq);
        }
    }
    records
}

/// Change probability times gain given a change (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct ChangeGain {
    /// Per page, what its refreshes that found a change gained.
    seen: Vec<GainsSeen>,
    /// The view weights `v(p)` (of unit 0, then re-read every [`VIEWS_EVERY`] units online).
    view_weight: Vec<f64>,
    /// Oracle mode told the gains: each page's gain given a change, fixed from the history
    /// (what [`ChangeGain::gains`] returns).
    oracle_gains: Option<Vec<f64>>,
}

impl ChangeGain {
    /// Expected ΔQ_A of refreshing each page given that it changed: the mean over its
    /// refreshes that found a change, shrunk (one pseudo-change) towards the prior
    /// `g₀(p) = κ·(v(p) + v̄)`: a change matters in proportion to how often users are shown the
    /// page, `v(p)`, plus one mean view `v̄` (add-one smoothing: a page users are not shown now
    /// may rise, so no page's prior is 0), with `κ` the gain per unit of exposure over every
    /// change seen (a ratio estimator, unbiased whichever pages the policy happened to visit).
    pub fn gains(&self) -> Vec<f64> {
        if let Some(gains) = &self.oracle_gains {
            return gains.clone();
        }
        let view = |p: usize| self.view_weight.get(p).copied().unwrap_or(0.0);
        let sums: Vec<(f64, f64)> = self
            .seen
            .iter()
            .map(|r| (r.gain_sum, r.changes as f64))
            .collect();
        let mean_view = (0..sums.len()).map(view).sum::<f64>() / sums.len().max(1) as f64;
        // With no view weights at all (no workload query matches), every page is equally exposed.
        let exposure = |p: usize| {
            if mean_view > 0.0 {
                view(p) + mean_view
            } else {
                1.0
            }
        };
        let (gained, exposed) = sums
            .iter()
            .enumerate()
            .fold((0.0, 0.0), |(g, e), (p, &(dq, k))| {
                (g + dq, e + k * exposure(p))
            });
        let gain_per_exposure = if exposed > 0.0 && gained > 0.0 {
            gained / exposed
        } else {
            // Nothing gained yet: only the order of pages matters, and it is their exposure.
            1.0
        };
        shrunk(sums, 1.0, |p| gain_per_exposure * exposure(p))
    }

    /// `value(G(p), λ_p, t − LR(p))` of every page, with `rates` the pages' rates of `model`.
    /// Under the mixture, the expectation over each page's posterior rate (`value` is linear
    /// in the gain, so the gain is factored out; a gain that is not positive is worth 0).
    pub(crate) fn rate_gain_priorities(
        &self,
        unit: Unit,
        rates: &[f64],
        model: &ChangeRates,
        last: &[Unit],
        value: impl Fn(f64, f64, f64) -> f64,
    ) -> Vec<f64> {
        let gains = self.gains();
        if !model.has_mixture() {
            return (0..rates.len())
                .map(|p| value(gains[p], rates[p], elapsed(unit, last, p)))
                .collect();
        }
        model
            .over_rates(unit, rates, last, |rate, elapsed| value(1.0, rate, elapsed))
            .into_iter()
            .zip(gains)
            .map(|(v, g)| if g > 0.0 && v > 0.0 { v * g } else { 0.0 })
            .collect()
    }
}

impl GainEstimator for ChangeGain {
    fn prepare(&mut self, setup: &Setup<'_>) {
        self.seen = vec![GainsSeen::default(); setup.pages];
        self.view_weight = setup.view_weight.to_vec();
        self.oracle_gains = None;
    }

    fn grow(&mut self, count: usize) {
        if count > self.seen.len() {
            self.seen.resize(count, GainsSeen::default());
        }
    }

    /// The gains measured right after each change.
    fn fit_oracle(&mut self, history: &ChangeHistory, pages: usize) {
        self.seen = history_gain_records(history, pages);
    }

    /// The gains the full oracle reads, from the same records; then the records start empty,
    /// as online.
    fn tell_gains(&mut self, history: &ChangeHistory, pages: usize) {
        self.seen = history_gain_records(history, pages);
        self.oracle_gains = Some(self.gains());
        self.seen = vec![GainsSeen::default(); pages];
    }

    fn observe(&mut self, page: usize, _interval: f64, outcome: &RefreshOutcome) {
        self.seen[page].record(outcome.changed, outcome.delta_q);
    }

    /// Expected gain per unit of staleness for a short wait: λ·G.
    fn mean_normalised(&self, rates: &ChangeRates) -> Vec<f64> {
        rates
            .rates()
            .iter()
            .zip(self.gains())
            .map(|(l, g)| if l.is_finite() { l * g } else { g })
            .collect()
    }

    /// `(1 − e^{−λ(t − LR)}) · G(p)`.
    fn priorities(
        &self,
        unit: Unit,
        rates: &[f64],
        model: &ChangeRates,
        last: &[Unit],
    ) -> Vec<f64> {
        self.rate_gain_priorities(unit, rates, model, last, |gain, rate, elapsed| {
            change_probability(rate, elapsed) * gain
        })
    }

    fn gains_given_change(&self) -> Option<Vec<f64>> {
        Some(self.gains())
    }

    fn ranks_by_change(&self) -> bool {
        true
    }

    /// Online `change-gain` re-reads the repository's view weights every
    /// [`VIEWS_EVERY`] units: the prior of a page's gain follows what users are shown now.
    fn wants_views(&self, unit: Unit) -> bool {
        unit.is_multiple_of(VIEWS_EVERY)
    }

    fn observe_views(&mut self, view_weight: &[f64]) {
        self.view_weight = view_weight.to_vec();
    }
}

#[cfg(test)]
mod tests {
    use super::super::estimators::tests::visit;
    use super::super::estimators::{Estimator, UserCentric};
    use super::super::rates::RateModel;
    use super::*;
    use crate::policy::testkit::{context, history};
    use crate::policy::{FitMode, RefreshPolicy};

    #[test]
    fn change_gain_learns_rates_from_visits_and_gains_from_changes() {
        // 4 pages, B = 2: τ = 2.
        let pages = [0, 1, 2, 3];
        let ctx = context(FitMode::Online, &pages, &[0.0; 4], None, 20, 2);
        // The point estimate with a pooled prior (the mixture's own test is
        // `under_the_rate_mixture_pages_seen_changing_outbid_unvisited_ones`).
        let mut uc = UserCentric::new(None)
            .with_estimator(Some(Estimator::ChangeGain))
            .with_rate_model(RateModel::Pooled);
        uc.prepare(&ctx);
        let mut crawl = crate::policy::testkit::no_crawl();
        assert_eq!(uc.label(), "user-centric (ΔQ̄ change-gain, rates pooled)");
        // Before any visit every page has the prior rate ln 2 / τ and no gain.
        let rates = uc.change_rates();
        for r in &rates {
            assert!((r - std::f64::consts::LN_2 / 2.0).abs() < 1e-9, "{rates:?}");
        }
        assert_eq!(
            uc.gains_given_change(),
            vec![1.0; 4],
            "equal exposure, nothing seen"
        );
        // Page 0 changed at each of its visits with gain 2; page 1 never changed.
        let mut last = [0; 4];
        for unit in 1..=6 {
            crate::policy::testkit::observe(
                &mut uc,
                &mut crawl,
                &[
                    visit(0, unit, last[0], true, 2.0),
                    visit(1, unit, last[1], false, 0.0),
                ],
            );
            last[0] = unit;
            last[1] = unit;
        }
        let rates = uc.change_rates();
        assert!(rates[0] > rates[2] && rates[2] > rates[1], "{rates:?}");
        // Unvisited pages share the pooled rate.
        assert_eq!(rates[2], rates[3]);
        let gains = uc.gains_given_change();
        // No view weights: equal exposure 1, κ = 12/6 = 2; page 0: (6·2 + 2)/7 = 2.
        assert!((gains[0] - 2.0).abs() < 1e-12, "{gains:?}");
        // Pages without a change seen get the prior g₀ = 2 too.
        assert!((gains[1] - 2.0).abs() < 1e-12, "{gains:?}");
        // The unvisited pages, 7 units old, have almost surely changed; page 0, visited a unit
        // ago, likely has; page 1, never seen changing, comes last.
        assert_eq!(uc.choose(7, 3, &crawl), vec![2, 3, 0]);
        assert_eq!(uc.choose(8, 4, &crawl)[3], 1);
    }

    #[test]
    fn change_gain_prior_follows_exposure_and_never_writes_a_page_off() {
        // Views 0, 2, 4, 6 (mean 3): exposures 3, 5, 7, 9.
        let pages = [0, 1, 2, 3];
        let views = [0.0, 2.0, 4.0, 6.0];
        let ctx = context(FitMode::Online, &pages, &views, None, 20, 2);
        let mut uc = UserCentric::new(None);
        uc.prepare(&ctx);
        // Page 3 changed once and gained 18: κ = 18/9 = 2 per unit of exposure.
        uc.observe(&[visit(3, 1, 0, true, 18.0)]);
        let gains = uc.gains_given_change();
        let expected = [6.0, 10.0, 14.0, (18.0 + 18.0) / 2.0];
        for (g, e) in gains.iter().zip(expected) {
            assert!((g - e).abs() < 1e-9, "{gains:?}");
        }
        // Online, the view weights are re-read every VIEWS_EVERY units, never in oracle mode.
        assert!(uc.wants_views(VIEWS_EVERY) && !uc.wants_views(VIEWS_EVERY + 1));
        uc.observe_views(&[6.0, 4.0, 2.0, 0.0]);
        let gains = uc.gains_given_change();
        assert!(gains[0] > gains[1] && gains[1] > gains[2], "{gains:?}");
        let h = history(9, &[vec![2], vec![], vec![], vec![]], &[1.0; 4], &[1.0]);
        let ctx = context(FitMode::Oracle, &pages, &views, Some(&h), 8, 2);
        let mut oracle = UserCentric::new(None).with_estimator(Some(Estimator::ChangeGain));
        oracle.prepare(&ctx);
        assert!(!oracle.wants_views(VIEWS_EVERY));
    }

    #[test]
    fn change_gain_does_not_write_off_a_page_visited_too_soon() {
        // Two pages with the same gain on changes; page 1 was just found unchanged once.
        let pages = [0, 1];
        let ctx = context(FitMode::Online, &pages, &[0.0; 2], None, 40, 1);
        for model in [
            RateModel::Mixture,
            RateModel::SiteMixture,
            RateModel::Pooled,
        ] {
            let mut uc = UserCentric::new(None)
                .with_estimator(Some(Estimator::ChangeGain))
                .with_rate_model(model);
            uc.prepare(&ctx);
            uc.observe(&[visit(0, 1, 0, true, 5.0)]);
            uc.observe(&[visit(1, 2, 0, true, 5.0)]);
            uc.observe(&[visit(1, 3, 2, false, 0.0)]);
            uc.fit_rates(&crate::policy::testkit::no_crawl());
            let gains = uc.gains_given_change();
            assert!((gains[0] - gains[1]).abs() < 1e-12, "{gains:?}");
            // Under paper 003's mean of ratios, the unchanged visit halves page 1's ΔQ̄ for good;
            // here page 1's priority grows back with its wait: at unit 12 (page 1 waited 9 units,
            // page 0 waited 11) both are almost surely changed and tie near G.
            // (Last refreshes as the crawl state would hold them after these visits.)
            let p = uc.priorities(12, &uc.change_rates(), &[1, 3]);
            assert!(p[1] > 0.9 * p[0], "{model:?}: {p:?}");
            assert!(
                p[0] <= gains[0] && p[1] <= gains[1],
                "saturates at G: {p:?}"
            );
        }
    }
}
