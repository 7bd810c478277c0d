//! What the estimators of `ΔQ̄` as a rate ([`MeanOfRatios`], [`Pooled`], [`Viewed`]) record:
//! each page's refreshes as `(ΔQ_A, Δt)`, over the whole history by default or a sliding
//! window of the last `W` refreshes.
//!
//! * Online: the `delta_q` of observed [`RefreshOutcome`]s.
//! * Oracle: [`crate::policy::PageHistory::delta_q`], measured by refreshing right after every
//!   change (paper 003 §6, Fig. 3): the refresh at change unit `c_i` follows the one at the
//!   previous change `c_{i−1}` (`c_0 = 0`, the initial crawl), so the ratios are
//!   `ΔQ_A(c_i) / (c_i − c_{i−1})` ([`oracle_ratios`]). A page that never changed is measured
//!   (a refresh gains nothing).
//!
//! [`MeanOfRatios`]: super::mean_of_ratios::MeanOfRatios
//! [`Pooled`]: super::pooled::Pooled
//! [`Viewed`]: super::viewed::Viewed
//! [`RefreshOutcome`]: crate::policy::RefreshOutcome
//! [`oracle_ratios`]: super::formulas::oracle_ratios

use std::collections::VecDeque;

use crate::policy::ChangeHistory;

/// Each page's observed refreshes (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct RefreshSamples {
    /// Sliding window of the last `W` refreshes; `None` = the whole history.
    window: Option<usize>,
    /// Per page, the observed refreshes as `(ΔQ_A, Δt)`.
    samples: Vec<VecDeque<(f64, f64)>>,
    /// Per page, whether anything measured it (a refresh, or the history).
    measured: Vec<bool>,
}

impl RefreshSamples {
    /// Nothing measured yet for pages `0..pages`.
    pub(crate) fn new(pages: usize, window: Option<usize>) -> Self {
        RefreshSamples {
            window,
            samples: vec![VecDeque::new(); pages],
            measured: vec![false; pages],
        }
    }

    /// Makes room for page ids `0..count`: pages met later start unmeasured.
    pub(crate) fn grow(&mut self, count: usize) {
        if count > self.samples.len() {
            self.samples.resize(count, VecDeque::new());
            self.measured.resize(count, false);
        }
    }

    /// One refresh of `page` that measured `delta_q` after `interval` units (at least 1).
    pub(crate) fn push(&mut self, page: usize, delta_q: f64, interval: f64) {
        let q = &mut self.samples[page];
        q.push_back((delta_q, interval.max(1.0)));
        if let Some(w) = self.window {
            while q.len() > w.max(1) {
                q.pop_front();
            }
        }
        self.measured[page] = true;
    }

    /// Oracle mode: each of the first `pages` pages' refreshes right after its changes (see the
    /// module docs); a page that never changed is measured, with no refresh.
    pub(crate) fn fit_oracle(&mut self, history: &ChangeHistory, pages: usize) {
        for (p, page) in history.pages.iter().enumerate().take(pages) {
            if page.change_units.is_empty() {
                // Measured: a refresh at any time gains nothing.
                self.measured[p] = true;
            } else if page.delta_q.len() == page.change_units.len() {
                let mut prev = 0;
                for (&c, &dq) in page.change_units.iter().zip(&page.delta_q) {
                    self.push(p, dq, f64::from(c.saturating_sub(prev)));
                    prev = c;
                }
            }
        }
    }

    /// Per page, its samples, or `None` while nothing measured it.
    pub(crate) fn pages(&self) -> impl Iterator<Item = Option<&VecDeque<(f64, f64)>>> {
        self.samples
            .iter()
            .zip(&self.measured)
            .map(|(s, &measured)| measured.then_some(s))
    }

    /// `(ΣΔQ_A, ΣΔt)` of each page's observed refreshes.
    pub(crate) fn page_sums(&self) -> Vec<(f64, f64)> {
        self.samples
            .iter()
            .map(|s| {
                s.iter()
                    .fold((0.0, 0.0), |(a, b), (dq, dt)| (a + dq, b + dt))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::estimators::tests::measured;
    use super::super::estimators::{Estimator, UserCentric};
    use crate::policy::testkit::context;
    use crate::policy::{FitMode, RefreshPolicy};

    #[test]
    fn sliding_window_forgets_old_refreshes() {
        let pages = [0];
        let ctx = context(FitMode::Online, &pages, &[0.0], None, 10, 1);
        let mut uc = UserCentric::new(Some(2)).with_estimator(Some(Estimator::MeanOfRatios));
        uc.prepare(&ctx);
        uc.observe(&[measured(0, 1, 0, 9.0)]);
        uc.observe(&[measured(0, 2, 1, 1.0)]);
        uc.observe(&[measured(0, 3, 2, 3.0)]);
        assert_eq!(uc.mean_normalised(), vec![2.0]);
    }
}
