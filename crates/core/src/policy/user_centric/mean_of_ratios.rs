//! [`Estimator::MeanOfRatios`](super::estimators::Estimator::MeanOfRatios), paper 003's
//! extrapolation (Pandey & Olston, "User-Centric Web Crawling", WWW 2005, §6): `ΔQ̄(p)` is the
//! mean of the ratios `ΔQ_A(p, t) / (t − LR(p, t))` over the page's refreshes
//! ([`RefreshSamples`]), and the priority is `P(p, t) = ΔQ̄(p) · (t − LR(p, t))`
//! ([`priority`](super::formulas::priority)).
//!
//! Pages never measured (online pages not yet refreshed, oracle pages with changes but no
//! `delta_q`) get the mean `ΔQ̄` of the measured pages (0 while none is). In oracle mode every
//! ratio is a measured change, and a page that never changed has `ΔQ̄ = 0` (measured: a
//! refresh gains nothing).

use super::gain_estimator::{GainEstimator, Setup};
use super::rates::ChangeRates;
use super::samples::RefreshSamples;
use crate::policy::{ChangeHistory, RefreshOutcome};

/// Paper 003's mean of ratios (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct MeanOfRatios {
    samples: RefreshSamples,
}

impl GainEstimator for MeanOfRatios {
    fn prepare(&mut self, setup: &Setup<'_>) {
        self.samples = RefreshSamples::new(setup.pages, setup.window);
    }

    fn grow(&mut self, count: usize) {
        self.samples.grow(count);
    }

    fn fit_oracle(&mut self, history: &ChangeHistory, pages: usize) {
        self.samples.fit_oracle(history, pages);
    }

    fn observe(&mut self, page: usize, interval: f64, outcome: &RefreshOutcome) {
        self.samples.push(page, outcome.delta_q, interval);
    }

    fn mean_normalised(&self, _rates: &ChangeRates) -> Vec<f64> {
        let means: Vec<Option<f64>> = self
            .samples
            .pages()
            .map(|s| {
                s.map(|s| {
                    if s.is_empty() {
                        0.0
                    } else {
                        s.iter().map(|(dq, dt)| dq / dt).sum::<f64>() / s.len() as f64
                    }
                })
            })
            .collect();
        let known: Vec<f64> = means.iter().flatten().copied().collect();
        let default = if known.is_empty() {
            0.0
        } else {
            known.iter().sum::<f64>() / known.len() as f64
        };
        means.into_iter().map(|m| m.unwrap_or(default)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::estimators::tests::measured;
    use super::super::estimators::{Estimator, UserCentric};
    use crate::policy::testkit::{context, history};
    use crate::policy::{FitMode, RefreshPolicy};

    #[test]
    fn online_priorities_from_a_hand_made_history() {
        let pages = [0, 1, 2, 3];
        let ctx = context(FitMode::Online, &pages, &[0.0; 4], None, 10, 2);
        let mut uc = UserCentric::new(None).with_estimator(Some(Estimator::MeanOfRatios));
        uc.prepare(&ctx);
        let mut crawl = crate::policy::testkit::no_crawl();
        // Nothing measured: round-robin by age then id.
        assert_eq!(uc.choose(1, 2, &crawl), vec![0, 1]);
        crate::policy::testkit::observe(
            &mut uc,
            &mut crawl,
            &[measured(0, 1, 0, 3.0), measured(1, 1, 0, 0.0)],
        );
        // ΔQ̄: page 0 = 3, page 1 = 0; unmeasured 2, 3 get the mean 1.5.
        assert_eq!(uc.mean_normalised(), vec![3.0, 0.0, 1.5, 1.5]);
        // Unit 2: P = 3·1, 0·1, 1.5·2, 1.5·2 → 0 (3, LR 1) loses the tie with 2, 3 (LR 0).
        assert_eq!(uc.choose(2, 2, &crawl), vec![2, 3]);
        crate::policy::testkit::observe(
            &mut uc,
            &mut crawl,
            &[measured(2, 2, 0, 1.0), measured(3, 2, 0, 10.0)],
        );
        // ΔQ̄ = 3, 0, 0.5, 5. Unit 3: P = 6, 0, 0.5, 5.
        assert_eq!(uc.choose(3, 2, &crawl), vec![0, 3]);
        crate::policy::testkit::observe(
            &mut uc,
            &mut crawl,
            &[measured(0, 3, 1, 0.0), measured(3, 3, 2, 0.0)],
        );
        // Whole-history means: page 0 = (3 + 0)/2, page 3 = (5 + 0)/2.
        assert_eq!(uc.mean_normalised(), vec![1.5, 0.0, 0.5, 2.5]);
    }

    #[test]
    fn oracle_fit_uses_change_units_and_ignores_observations() {
        // Page 0: changes at 2, 4 with ΔQ 4 → ratios 2, 2. Page 1: changes, never measured.
        // Page 2: never changes (ΔQ̄ = 0).
        let mut h = history(9, &[vec![2, 4], vec![3], vec![]], &[1.0; 3], &[4.0]);
        h.pages[1].delta_q.clear();
        let pages = [0, 1, 2];
        let ctx = context(FitMode::Oracle, &pages, &[0.0; 3], Some(&h), 8, 1);
        let mut uc = UserCentric::new(None).with_estimator(Some(Estimator::MeanOfRatios));
        uc.prepare(&ctx);
        // Measured: page 0 (2) and page 2 (0) → mean 1 for page 1.
        assert_eq!(uc.mean_normalised(), vec![2.0, 1.0, 0.0]);
        uc.observe(&[measured(2, 1, 0, 100.0)]);
        assert_eq!(uc.mean_normalised(), vec![2.0, 1.0, 0.0]);
    }
}
