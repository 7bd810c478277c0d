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
//!   [`super::planned::online_rate`]; replanned every [`super::planned::DEFAULT_REPLAN_EVERY`]
//!   units.

use super::planned::{online_rate, Observations, PageModel, Planner};
use super::{PolicyContext, RefreshOutcome, RefreshPolicy};
use crate::change::oracle_rate;
use crate::corpus::{PageId, Unit};

/// SBR's page model: weight 1, rate of θ-changes.
#[derive(Debug, Clone, Copy)]
pub struct SbrModel {
    pub theta: f64,
}

impl PageModel for SbrModel {
    fn oracle(&self, context: &PolicyContext<'_>) -> Vec<(f64, f64)> {
        let history = context.history.expect("oracle mode carries the history");
        history
            .pages
            .iter()
            .map(|page| {
                let x = page
                    .shingle_changes
                    .iter()
                    .filter(|&&s| s >= self.theta)
                    .count();
                (oracle_rate(x, history.units), 1.0)
            })
            .collect()
    }

    fn online(&self, _page: PageId, obs: &Observations, prior_interval: f64) -> (f64, f64) {
        (online_rate(obs, obs.changed_at_theta, prior_interval), 1.0)
    }

    fn theta(&self) -> f64 {
        self.theta
    }
}

/// The SBR policy (see the module docs).
#[derive(Debug, Clone)]
pub struct Sbr {
    pub planner: Planner<SbrModel>,
}

impl Sbr {
    /// SBR at threshold `theta ∈ [0, 1]` (0 counts every content change: the "simplest SBR").
    pub fn new(theta: f64) -> Self {
        Sbr {
            planner: Planner::new(SbrModel { theta }),
        }
    }
}

impl RefreshPolicy for Sbr {
    fn name(&self) -> String {
        "sbr".to_string()
    }

    fn prepare(&mut self, context: &PolicyContext<'_>) {
        self.planner.prepare(context);
    }

    fn choose(&mut self, unit: Unit, budget: usize) -> Vec<PageId> {
        self.planner.choose(unit, budget)
    }

    fn observe(&mut self, outcomes: &[RefreshOutcome]) {
        self.planner.observe(outcomes);
    }
}
