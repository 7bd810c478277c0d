//! Paper 003's user-centric refresh (Pandey & Olston, "User-Centric Web Crawling", WWW 2005,
//! §6; DESIGN.md §4).
//!
//! With `R(p)` the past refresh instants of `p` and `LR(p, t)` the refresh before `t`:
//! `ΔQ̄(p) = mean over t ∈ R(p) of ΔQ_A(p, t) / (t − LR(p, t))` and
//! `P(p, t) = ΔQ̄(p) · (t − LR(p, t))`. Each unit, the `B` pages of highest priority are
//! refreshed.
//!
//! * Online: the ratios come from the `delta_q` of observed [`RefreshOutcome`]s (over the whole
//!   history by default, or a sliding window of the last `W` refreshes).
//! * Oracle: from [`super::PageHistory::delta_q`], measured by refreshing right after every
//!   change (paper 003 §6, Fig. 3): the refresh at change unit `c_i` follows the one at the
//!   previous change `c_{i−1}` (`c_0 = 0`, the initial crawl), so the ratios are
//!   `ΔQ_A(c_i) / (c_i − c_{i−1})`. A page that never changed has `ΔQ̄ = 0` (measured: a refresh
//!   gains nothing).
//! * Never measured (online pages not yet refreshed, oracle pages with changes but no
//!   `delta_q`): `ΔQ̄` = the mean `ΔQ̄` of the measured pages (0 while none is): the unbiased
//!   estimate of the value of a page about which nothing is known yet. Its priority then grows
//!   with the time since its last refresh like any other page's, so unmeasured pages are
//!   explored in proportion to how long they have waited. (A median default, tried first, is 0
//!   on real sites — most refreshes find nothing users search for — and then an online crawler
//!   never looks at an unmeasured page again while any measured page has value; a zero default
//!   has the same flaw.)
//!
//! Ties (notably the many pages of priority 0) are broken by the oldest last refresh, then by
//! page id, so pages with nothing to tell them apart are visited round-robin.

use std::collections::VecDeque;

use super::{FitMode, PolicyContext, RefreshOutcome, RefreshPolicy};
use crate::corpus::{PageId, Unit};

/// Time-normalised quality change of one refresh: `ΔQ_A(p, t) / (t − LR(p, t))` (paper 003 §6).
/// An interval of 0 is treated as 1.
pub fn normalised_delta_q(delta_q: f64, unit: Unit, last_refresh: Unit) -> f64 {
    delta_q / unit.saturating_sub(last_refresh).max(1) as f64
}

/// Refresh priority `P(p, t) = ΔQ̄(p) · (t − LR(p, t))` (paper 003 §6).
pub fn priority(mean_normalised: f64, unit: Unit, last_refresh: Unit) -> f64 {
    mean_normalised * unit.saturating_sub(last_refresh) as f64
}

/// The oracle ratios of one page: `delta_q[i] / (c_i − c_{i−1})` with `c_0 = 0`.
pub fn oracle_ratios(change_units: &[Unit], delta_q: &[f64]) -> Vec<f64> {
    let mut prev = 0;
    change_units
        .iter()
        .zip(delta_q)
        .map(|(&c, &dq)| {
            let r = normalised_delta_q(dq, c, prev);
            prev = c;
            r
        })
        .collect()
}

/// Mean of the values; `None` when empty.
fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// The user-centric policy (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct UserCentric {
    /// Sliding window of the last `W` refreshes; `None` = the whole history.
    pub window: Option<usize>,
    ratios: Vec<VecDeque<f64>>,
    measured: Vec<bool>,
    last_refresh: Vec<Unit>,
    gone: Vec<bool>,
    fitted_on_history: bool,
}

impl UserCentric {
    pub fn new(window: Option<usize>) -> Self {
        UserCentric {
            window,
            ..Default::default()
        }
    }

    fn push_ratio(&mut self, page: usize, ratio: f64) {
        let q = &mut self.ratios[page];
        q.push_back(ratio);
        if let Some(w) = self.window {
            while q.len() > w.max(1) {
                q.pop_front();
            }
        }
        self.measured[page] = true;
    }

    /// `ΔQ̄(p)` of every page, with the documented default for unmeasured pages.
    pub fn mean_normalised(&self) -> Vec<f64> {
        let means: Vec<Option<f64>> = (0..self.ratios.len())
            .map(|p| {
                if !self.measured[p] {
                    None
                } else if self.ratios[p].is_empty() {
                    Some(0.0)
                } else {
                    Some(self.ratios[p].iter().sum::<f64>() / self.ratios[p].len() as f64)
                }
            })
            .collect();
        let known: Vec<f64> = means.iter().flatten().copied().collect();
        let default = mean(&known).unwrap_or(0.0);
        means.into_iter().map(|m| m.unwrap_or(default)).collect()
    }
}

impl RefreshPolicy for UserCentric {
    fn name(&self) -> String {
        "user-centric".to_string()
    }

    fn prepare(&mut self, context: &PolicyContext<'_>) {
        let n = context.page_count;
        self.ratios = vec![VecDeque::new(); n];
        self.measured = vec![false; n];
        self.last_refresh = vec![0; n];
        self.gone = vec![false; n];
        self.fitted_on_history = false;
        if let (FitMode::Oracle, Some(history)) = (context.mode, context.history) {
            self.fitted_on_history = true;
            for (p, page) in history.pages.iter().enumerate().take(n) {
                if page.change_units.is_empty() {
                    self.measured[p] = true;
                } else if page.delta_q.len() == page.change_units.len() {
                    for r in oracle_ratios(&page.change_units, &page.delta_q) {
                        self.push_ratio(p, r);
                    }
                }
            }
        }
    }

    fn choose(&mut self, unit: Unit, budget: usize) -> Vec<PageId> {
        let means = self.mean_normalised();
        let prio: Vec<f64> = (0..means.len())
            .map(|p| priority(means[p], unit, self.last_refresh[p]))
            .collect();
        let mut pages: Vec<usize> = (0..means.len()).filter(|&p| !self.gone[p]).collect();
        pages.sort_by(|&a, &b| {
            prio[b]
                .total_cmp(&prio[a])
                .then(self.last_refresh[a].cmp(&self.last_refresh[b]))
                .then(a.cmp(&b))
        });
        pages.truncate(budget);
        for &p in &pages {
            self.last_refresh[p] = unit;
        }
        pages.into_iter().map(|p| p as PageId).collect()
    }

    fn observe(&mut self, outcomes: &[RefreshOutcome]) {
        for o in outcomes {
            let p = o.page as usize;
            if p >= self.ratios.len() {
                continue;
            }
            self.gone[p] = o.gone;
            self.last_refresh[p] = o.unit;
            // Oracle parameters are fixed on the whole history; only online mode learns, and a
            // discovery measures no refresh.
            if !self.fitted_on_history && !o.discovered {
                self.push_ratio(p, normalised_delta_q(o.delta_q, o.unit, o.last_refresh));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::{context, history, run};

    fn measured(page: PageId, unit: Unit, last: Unit, dq: f64) -> RefreshOutcome {
        RefreshOutcome {
            page,
            unit,
            last_refresh: last,
            changed: dq != 0.0,
            shingle_change: 0.0,
            delta_q: dq,
            gone: false,
            discovered: false,
        }
    }

    #[test]
    fn priority_formulas() {
        assert_eq!(normalised_delta_q(6.0, 5, 2), 2.0);
        assert_eq!(priority(2.0, 7, 3), 8.0);
        // Changes at 2, 6, 7 with ΔQ 4, 8, 3: ratios 4/2, 8/4, 3/1.
        assert_eq!(
            oracle_ratios(&[2, 6, 7], &[4.0, 8.0, 3.0]),
            vec![2.0, 2.0, 3.0]
        );
    }

    #[test]
    fn online_priorities_from_a_hand_made_history() {
        let pages = [0, 1, 2, 3];
        let ctx = context(FitMode::Online, &pages, &[0.0; 4], None, 10, 2);
        let mut uc = UserCentric::new(None);
        uc.prepare(&ctx);
        // Nothing measured: round-robin by age then id.
        assert_eq!(uc.choose(1, 2), vec![0, 1]);
        uc.observe(&[measured(0, 1, 0, 3.0), measured(1, 1, 0, 0.0)]);
        // ΔQ̄: page 0 = 3, page 1 = 0; unmeasured 2, 3 get the mean 1.5.
        assert_eq!(uc.mean_normalised(), vec![3.0, 0.0, 1.5, 1.5]);
        // Unit 2: P = 3·1, 0·1, 1.5·2, 1.5·2 → 0 (3, LR 1) loses the tie with 2, 3 (LR 0).
        assert_eq!(uc.choose(2, 2), vec![2, 3]);
        uc.observe(&[measured(2, 2, 0, 1.0), measured(3, 2, 0, 10.0)]);
        // ΔQ̄ = 3, 0, 0.5, 5. Unit 3: P = 6, 0, 0.5, 5.
        assert_eq!(uc.choose(3, 2), vec![0, 3]);
        uc.observe(&[measured(0, 3, 1, 0.0), measured(3, 3, 2, 0.0)]);
        // Whole-history means: page 0 = (3 + 0)/2, page 3 = (5 + 0)/2.
        assert_eq!(uc.mean_normalised(), vec![1.5, 0.0, 0.5, 2.5]);
    }

    #[test]
    fn sliding_window_forgets_old_refreshes() {
        let pages = [0];
        let ctx = context(FitMode::Online, &pages, &[0.0], None, 10, 1);
        let mut uc = UserCentric::new(Some(2));
        uc.prepare(&ctx);
        uc.observe(&[measured(0, 1, 0, 9.0)]);
        uc.observe(&[measured(0, 2, 1, 1.0)]);
        uc.observe(&[measured(0, 3, 2, 3.0)]);
        assert_eq!(uc.mean_normalised(), vec![2.0]);
    }

    #[test]
    fn oracle_fit_uses_change_units_and_ignores_observations() {
        // Page 0: changes at 2, 4 with ΔQ 4 → ratios 2, 2. Page 1: changes, never measured.
        // Page 2: never changes (ΔQ̄ = 0).
        let mut h = history(9, &[vec![2, 4], vec![3], vec![]], &[1.0; 3], &[4.0]);
        h.pages[1].delta_q.clear();
        let pages = [0, 1, 2];
        let ctx = context(FitMode::Oracle, &pages, &[0.0; 3], Some(&h), 8, 1);
        let mut uc = UserCentric::new(None);
        uc.prepare(&ctx);
        // Measured: page 0 (2) and page 2 (0) → mean 1 for page 1.
        assert_eq!(uc.mean_normalised(), vec![2.0, 1.0, 0.0]);
        uc.observe(&[measured(2, 1, 0, 100.0)]);
        assert_eq!(uc.mean_normalised(), vec![2.0, 1.0, 0.0]);
    }

    #[test]
    fn online_user_centric_never_reads_the_history() {
        let h = history(
            11,
            &[vec![2, 4, 6, 8], vec![5], vec![], vec![3, 9]],
            &[1.0; 4],
            &[2.0, 7.0, 0.0, 1.0],
        );
        let pages = [0, 1, 2, 3];
        let with = context(FitMode::Online, &pages, &[0.0; 4], Some(&h), 10, 1);
        let without = context(FitMode::Online, &pages, &[0.0; 4], None, 10, 1);
        assert_eq!(
            run(&mut UserCentric::new(None), &with, &h),
            run(&mut UserCentric::new(None), &without, &h)
        );
    }
}
