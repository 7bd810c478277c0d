//! Staleness-based refresh (SBR): Cho & Garcia-Molina, "Effective page refresh policies for
//! Web crawlers" (ACM TODS 2003), as paper 003 §6 ran it.
//!
//! A page counts as changed in a unit when its shingle change (fraction of the repository
//! copy's shingles gone, [`crate::change::shingle_change`]) is at least `θ_SBR`. Each page gets
//! a Poisson rate `λ_p`; the refresh frequencies maximise expected freshness
//! `Σ_p F(λ_p, f_p)` under `Σ f_p = B` ([`super::freshness::optimal_frequencies`], weight 1 per
//! page: pages that change too fast get none), and the planned refreshes are assigned to units
//! by the transportation scheduler ([`super::schedule`]).
//!
//! * Oracle: `λ_p` = units of the whole [`super::ChangeHistory`] whose change reached θ, over
//!   the observed units ([`crate::change::oracle_rate`]).
//! * Online: Cho & Garcia-Molina's estimator over the policy's own refreshes, with the prior of
//!   [`super::planned::online_rate`]; replanned every `super::planned::DEFAULT_REPLAN_EVERY`
//!   units.

use super::family::PolicyFamily;
use super::planned::{
    online_rate, planner_from_params, Observations, PageModel, Planner, PLANNER_PARAMS,
};
use super::ChangeHistory;
use crate::change::oracle_rate;
use crate::corpus::PageId;

/// SBR's page model: weight 1, rate of θ-changes.
#[derive(Debug, Clone)]
pub struct SbrModel {
    pub(crate) theta: f64,
    /// Oracle mode: each page's rate of θ-changes over the history.
    oracle_rates: Vec<f64>,
}

impl PageModel for SbrModel {
    fn fit_oracle(&mut self, history: &ChangeHistory) {
        self.oracle_rates = history
            .pages
            .iter()
            .map(|page| {
                let x = page
                    .shingle_changes
                    .iter()
                    .filter(|&&s| s >= self.theta)
                    .count();
                oracle_rate(x, history.units)
            })
            .collect();
    }

    fn oracle(&self) -> Vec<(f64, f64)> {
        self.oracle_rates.iter().map(|&rate| (rate, 1.0)).collect()
    }

    fn online(&self, _page: PageId, obs: &Observations, prior_interval: f64) -> (f64, f64) {
        (online_rate(obs, obs.changed_at_theta, prior_interval), 1.0)
    }

    fn theta(&self) -> f64 {
        self.theta
    }

    fn name(&self) -> &'static str {
        "sbr"
    }
}

/// The SBR policy (see the module docs): a [`Planner`] of [`SbrModel`].
pub(crate) type Sbr = Planner<SbrModel>;

impl Sbr {
    /// SBR at threshold `theta ∈ [0, 1]` (0 counts every content change: the "simplest SBR").
    pub(crate) fn at_threshold(theta: f64) -> Self {
        Planner::new(SbrModel {
            theta,
            oracle_rates: Vec::new(),
        })
    }
}

/// The `sbr` family.
pub(crate) const FAMILY: PolicyFamily = PolicyFamily {
    name: "sbr",
    description: "Cho & Garcia-Molina (TODS 2003) as paper 003 ran it: maximise expected freshness of θ-changes under the budget",
    params: PLANNER_PARAMS,
    build: |params| {
        Ok(Box::new(planner_from_params(params, Sbr::at_threshold)))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::{context, history, run};
    use crate::policy::FitMode;
    use crate::policy::{RefreshOutcome, RefreshPolicy};

    #[test]
    fn an_open_ended_run_plans_a_window_at_a_time() {
        // A live crawl without a last unit: the plan must not span the open horizon.
        let pages: Vec<u32> = (0..12).collect();
        let views = [1.0; 12];
        let ctx = context(
            FitMode::Online,
            &pages,
            &views,
            None,
            crate::policy::OPEN_ENDED_UNITS,
            3,
        );
        let mut sbr = Sbr::at_threshold(0.0);
        sbr.prepare(&ctx);
        let crawl = crate::crawl::CrawlState::default();
        let mut seen = std::collections::BTreeSet::new();
        for unit in 1..=40 {
            let chosen = sbr.choose(unit, 3, &crawl);
            assert_eq!(chosen.len(), 3, "unit {unit}");
            seen.extend(chosen);
        }
        assert_eq!(seen.len(), 12, "every page is refreshed within 40 units");
    }

    #[test]
    fn planners_sharing_schedules_choose_what_each_chooses_alone() {
        use crate::cache::Cache;
        use crate::policy::PolicyContext;
        use std::sync::Arc;
        // Every change has shingle change 1: θ = 0.5 and θ = 0.2 count the same changes.
        let changes: Vec<Vec<u32>> = (0..12u32)
            .map(|p| (1..=10).filter(|u| u % (p % 4 + 1) == 0).collect())
            .collect();
        let h = history(11, &changes, &[], &[]);
        let pages: Vec<u32> = (0..12).collect();
        let views = [1.0; 12];
        let shared = Arc::new(Cache::new());
        let kept_schedules = |cache: &Cache| cache.stats().get("schedules").map_or(0, |s| s.kept);
        for mode in [FitMode::Oracle, FitMode::Online] {
            let history = (mode == FitMode::Oracle).then_some(&h);
            let alone_ctx = context(mode, &pages, &views, history, 10, 3);
            let alone = run(&mut Sbr::at_threshold(0.5), &alone_ctx, &h);
            let sharing = PolicyContext {
                cache: Some(Arc::clone(&shared)),
                ..alone_ctx.clone()
            };
            let kept = kept_schedules(&shared);
            let first = run(&mut Sbr::at_threshold(0.5), &sharing, &h);
            let computed = kept_schedules(&shared) - kept;
            let second = run(&mut Sbr::at_threshold(0.2), &sharing, &h);
            assert_eq!(first, alone, "{mode:?}");
            assert_eq!(second, alone, "{mode:?}");
            assert!(computed > 0, "{mode:?}");
            // The second planner met the same inputs at every replan: it computed nothing.
            assert_eq!(kept_schedules(&shared), kept + computed, "{mode:?}");
        }
    }

    #[test]
    fn oracle_rates_count_changes_at_theta() {
        // 9 units → 8 observed intervals. Page 0: 4 changes of 0.5; page 1: 2 of 0.05.
        let h = history(
            9,
            &[vec![1, 3, 5, 7], vec![2, 6], vec![]],
            &[0.5, 0.05, 0.0],
            &[],
        );
        let fitted = |theta| {
            let mut model = Sbr::at_threshold(theta).model;
            model.fit_oracle(&h);
            model.oracle()
        };
        assert_eq!(fitted(0.1), vec![(0.5, 1.0), (0.0, 1.0), (0.0, 1.0)]);
        assert_eq!(fitted(0.0)[1], (0.25, 1.0));
    }

    #[test]
    fn oracle_sbr_abandons_the_fastest_page_and_favours_slow_changers() {
        // Page 0 changes every unit (λ = 1), pages 1–8 every 4 units (λ = 1/4), page 9 never.
        // With B = 1 the slow pages share f = 1/8: marginal h(2)/λ = 4(1 − 3e⁻²) ≈ 2.38 > 1/λ₀,
        // so page 0 is abandoned (Cho & Garcia-Molina's "too fast" case).
        let mut changes: Vec<Vec<u32>> = vec![(1..=16).collect()];
        for _ in 1..=8 {
            changes.push((1..=4).map(|k| 4 * k).collect());
        }
        changes.push(vec![]);
        let h = history(17, &changes, &[1.0; 10], &[]);
        let pages: Vec<u32> = (0..10).collect();
        let ctx = context(FitMode::Oracle, &pages, &[0.0; 10], Some(&h), 16, 1);
        let mut sbr = Sbr::at_threshold(0.1);
        let choices = run(&mut sbr, &ctx, &h);
        let f = sbr.frequencies();
        assert_eq!(f[0], 0.0, "λ = 1 is too fast for B = 1");
        for fp in &f[1..=8] {
            assert!((fp - 0.125).abs() < 1e-9);
        }
        let count = |p| choices.iter().filter(|c| c.contains(&p)).count();
        // The plan fills every unit with the slow pages, two refreshes each.
        for p in 1..=8 {
            assert_eq!(count(p), 2, "{choices:?}");
        }
        assert_eq!(count(0) + count(9), 0);
    }

    #[test]
    fn a_page_seen_gone_is_planned_again_once_discovered() {
        // Page 1 does not exist yet at unit 1 (404) and is created at unit 3, then changes
        // often; page 0 never changes. A plan that kept skipping page 1 after its 404 would
        // never refresh it again (SBR/EBR then plateaued below full quality at any budget).
        let h = history(
            13,
            &[vec![], vec![4, 5, 6, 7, 8, 9, 10, 11, 12]],
            &[1.0; 2],
            &[],
        );
        let pages = [0, 1];
        let ctx = context(FitMode::Oracle, &pages, &[0.0; 2], Some(&h), 12, 1);
        let mut sbr = Sbr::at_threshold(0.1);
        sbr.prepare(&ctx);
        // What the crawler knows (the refresher records every outcome there first).
        let mut crawl = crate::policy::testkit::no_crawl();
        let mut seen_gone = false;
        let mut after_discovery = 0;
        for t in 1..=12 {
            let chosen = sbr.choose(t, 1, &crawl);
            let outcomes: Vec<RefreshOutcome> = chosen
                .iter()
                .map(|&p| {
                    let mut o = crate::policy::testkit::outcome(&h, p, t, 0);
                    if p == 1 && t < 3 {
                        o.gone = true;
                        seen_gone = true;
                    }
                    o
                })
                .collect();
            if t >= 4 {
                after_discovery += chosen.iter().filter(|&&p| p == 1).count();
            }
            crate::policy::testkit::observe(&mut sbr, &mut crawl, &outcomes);
            if t == 3 {
                crate::policy::testkit::observe(
                    &mut sbr,
                    &mut crawl,
                    &[RefreshOutcome {
                        page: 1,
                        unit: 3,
                        last_refresh: 0,
                        changed: false,
                        shingle_change: 0.0,
                        delta_q: 0.0,
                        gone: false,
                        discovered: true,
                    }],
                );
            }
        }
        assert!(
            seen_gone,
            "the test needs page 1 refreshed while it was 404"
        );
        assert!(
            after_discovery >= 4,
            "page 1 refreshed {after_discovery} times after discovery"
        );
    }

    #[test]
    fn online_sbr_never_reads_the_history() {
        let h = history(
            13,
            &[vec![2, 4, 6, 8, 10, 12], vec![], vec![5], vec![]],
            &[1.0; 4],
            &[],
        );
        let pages = [0, 1, 2, 3];
        let with = context(FitMode::Online, &pages, &[0.0; 4], Some(&h), 12, 1);
        let without = context(FitMode::Online, &pages, &[0.0; 4], None, 12, 1);
        let a = run(&mut Sbr::at_threshold(0.2), &with, &h);
        let b = run(&mut Sbr::at_threshold(0.2), &without, &h);
        assert_eq!(a, b);
        // Learning: the frequently changing page ends up refreshed most.
        let count = |p| a.iter().filter(|c| c.contains(&p)).count();
        assert!(count(0) >= count(1) && count(0) >= count(3), "{a:?}");
    }
}
