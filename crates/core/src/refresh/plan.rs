//! [`RunPlan`]: what every driver — a simulation run, the served engine, a crawl of real
//! servers — lowers its arguments into before it makes a [`super::Refresher`]; and
//! [`StartingPoint`], what the policy is told at the start beside it. The policy's context is
//! built from the two in one place ([`RunPlan::policy_context`]), so the drivers differ only
//! in their fetcher, their ΔQ measurement and their clock.

use std::sync::Arc;

use crate::cache::Cache;
use crate::corpus::{PageId, Unit};
use crate::crawl::{CrawlState, NewPages};
use crate::policy::{ChangeHistory, FitMode, PolicyContext, OPEN_ENDED_UNITS};
use crate::quality::viewing::ViewingLikelihood;

/// How a refresher runs and spends its budget (see the module docs).
#[derive(Debug, Clone)]
pub struct RunPlan {
    /// Refreshes per unit (B).
    pub budget: usize,
    /// How the policy is fitted: online (from its own fetches) or oracle (the true history).
    pub mode: FitMode,
    /// Seed of policies with randomness.
    pub seed: u64,
    /// [`NewPages::OutsideBudget`]: pages are crawled in the unit they first appear, outside
    /// the budget (paper 003 §4 schedules refreshes of known pages only and leaves discovery
    /// to other work); [`NewPages::Frontier`]: new pages wait in a frontier and cost budget.
    pub new_pages: NewPages,
    /// The last unit the loop will run (`None`: open-ended, a live crawl). Policies plan up to
    /// it; the loop skips work that would serve no later unit (view weights after the last).
    pub last_unit: Option<Unit>,
    /// The viewing likelihood of the view weights sent to policies that ask for them.
    pub likelihood: ViewingLikelihood,
    /// Units `1..=warmup_units` refresh every page the repository holds, outside the budget
    /// and without asking the policy (paper 001 §5.2: each page is visited in the first `W`
    /// cycles so that its statistics start from observations). 0: no warm-up.
    pub warmup_units: Unit,
}

/// What the policy is told at the start, beside the plan.
#[derive(Debug, Clone, Copy)]
pub struct StartingPoint<'a> {
    /// Pages the repository holds after the initial crawl.
    pub initial_pages: &'a [PageId],
    /// EBR's view weights at unit 0 (`PolicyContext::view_weight`).
    pub view_weight: &'a [f64],
    /// The true history, when the driver has one (a simulation): told to the policy in oracle
    /// mode only.
    pub history: Option<&'a ChangeHistory>,
}

impl RunPlan {
    /// The context a policy is prepared with, over `page_count` page ids: the plan's mode,
    /// budget, seed and horizon, the starting point (the history in oracle mode only), what
    /// the crawler knows, and the environment's cache.
    pub fn policy_context<'a>(
        &self,
        page_count: usize,
        start: &StartingPoint<'a>,
        crawl: Option<&'a CrawlState>,
        cache: Option<Arc<Cache>>,
    ) -> PolicyContext<'a> {
        PolicyContext {
            mode: self.mode,
            page_count,
            units: self.last_unit.unwrap_or(OPEN_ENDED_UNITS),
            budget: self.budget,
            initial_pages: start.initial_pages,
            view_weight: start.view_weight,
            history: start.history.filter(|_| self.mode == FitMode::Oracle),
            seed: self.seed,
            crawl,
            cache,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_history_reaches_an_oracle_policy_only() {
        let history = ChangeHistory::default();
        let start = StartingPoint {
            initial_pages: &[0, 1],
            view_weight: &[1.0, 2.0],
            history: Some(&history),
        };
        let mut plan = RunPlan {
            budget: 3,
            mode: FitMode::Online,
            seed: 9,
            new_pages: NewPages::OutsideBudget,
            last_unit: None,
            likelihood: ViewingLikelihood::default(),
            warmup_units: 0,
        };
        let online = plan.policy_context(2, &start, None, None);
        assert!(online.history.is_none());
        assert_eq!(
            (online.budget, online.seed, online.page_count, online.units),
            (3, 9, 2, OPEN_ENDED_UNITS)
        );
        plan.mode = FitMode::Oracle;
        plan.last_unit = Some(7);
        let oracle = plan.policy_context(2, &start, None, None);
        assert!(oracle.history.is_some());
        assert_eq!(oracle.units, 7);
    }
}
