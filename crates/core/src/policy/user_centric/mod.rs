//! The `user-centric` family: paper 003's refresher (Pandey & Olston, "User-Centric Web
//! Crawling", WWW 2005, §6), in two forms that share the index hook's ΔQ_A measurements:
//!
//! * [`estimators`]: rank pages by an estimate of the gain of refreshing each now (paper 003's
//!   mean of ratios and four other estimators of the same quantity, each a
//!   [`GainEstimator`] in a file of its own: [`mean_of_ratios`], [`pooled`], [`viewed`],
//!   [`change_gain`], [`whittle`]; the shared [`formulas`], the [`rates`] of change every
//!   estimator's ties read, and the [`samples`] the rate estimators record), with the
//!   new-page estimate of [`crate::policy::new_pages`] in frontier mode;
//! * [`planner`]: plan refresh frequencies as SBR and EBR do, each page weighted by its expected
//!   ΔQ_A per change (the online default), and [`hedge`]: that plan and EBR's side by side, the
//!   slots where they disagree shared by what each one's picks were measured to gain;
//!   [`carryover`]: with `carryover=learned`, the planner's cost of a copy that missed several
//!   changes, learned from its own measured gains.
//!
//! [`UserCentricPolicy`] picks one at `prepare`, since the default estimator depends on the fit
//! mode ([`Estimator::default_for`]).

pub mod carryover;
pub mod change_gain;
pub mod estimators;
pub mod formulas;
pub mod gain_estimator;
pub mod hedge;
pub mod mean_of_ratios;
pub mod planner;
pub mod pooled;
pub mod rates;
pub mod samples;
pub mod shrinkage;
pub mod viewed;
pub mod whittle;

pub use estimators::*;
pub use gain_estimator::{GainEstimator, Setup};
pub use hedge::HedgedPlanner;
pub use planner::{UserCentricPlanModel, UserCentricPlanner};

use crate::corpus::{PageId, Unit};
use crate::crawl::CrawlState;
use crate::policy::family::{ParamKind, ParamSpec, PolicyFamily};
use crate::policy::new_pages::UserCentricWithNewPages;
use crate::policy::planned::Planner;
use crate::policy::{PolicyContext, Reads, RefreshOutcome, RefreshPolicy};

/// The `user-centric` family: paper 003's refresher.
pub(crate) const FAMILY: PolicyFamily = PolicyFamily {
    name: "user-centric",
    description: "Paper 003: spend the budget where refreshing most improves what users see, by each page's expected ΔQ_A (measured by the index hook while refreshed pages are indexed); by default online as EBR plans (Lagrangian frequencies) with measured gains as weights, oracle by the refresh index of change rate and gain",
    params: &[
        ParamSpec {
            key: "estimator",
            description: "How ΔQ̄ is estimated: paper 003's mean of ratios, the pooled rate, the pooled rate with a view-weight prior, change probability × gain given a change, the refresh index of change rate and gain given a change, or frequencies planned as EBR plans them with each page's expected ΔQ_A per change (shrunk towards EBR's weight) as its weight, or that plan and EBR's side by side with their disagreement shared by what each one's own picks were measured to gain (hedged)",
            kind: ParamKind::Choice(&["mean-of-ratios", "pooled", "viewed", "change-gain", "whittle", "planned", "hedged"]),
            default: "planned online, whittle (the refresh index) oracle",
            sweep: &[],
        },
        ParamSpec {
            key: "carryover",
            description: "Online planner (estimator=planned): how a stale copy's cost grows with the changes it missed — as EBR counts it, stale or not (none), or each further change costing ρ times the one before, ρ learned by cross-validating the gains the planner's refreshes measured against the intervals they closed (learned; planned with EBR's optimum at rates λ(1 − ρ))",
            kind: ParamKind::Choice(&["none", "learned"]),
            default: "none",
            sweep: &[],
        },
        ParamSpec {
            key: "rates",
            description: "Online change rates of change-gain and whittle: each page's posterior under its directory's distribution of rates learned from every visit (mixture), the same with one distribution for the whole site (site-mixture), or its own maximum-likelihood rate with one pooled pseudo-visit as prior (pooled)",
            kind: ParamKind::Choice(&["mixture", "site-mixture", "pooled"]),
            default: "mixture",
            sweep: &[],
        },
        ParamSpec {
            key: "knows",
            description: "Oracle mode, change-gain and whittle: what the policy is told of the history — every page's change rate and gain given a change (both), or only the rates (rates) or only the gains (gains), the other learned from its own refreshes as online: which of the two estimates online user-centric loses its budget to (online mode is told nothing, and its runs do not show the parameter)",
            kind: ParamKind::Choice(&["both", "rates", "gains"]),
            default: "both",
            sweep: &[],
        },
        ParamSpec {
            key: "window",
            description: "Average over the last W refreshes of each page only",
            kind: ParamKind::Number { min: 1.0, max: u32::MAX as f64, integer: true },
            default: "every refresh",
            sweep: &[],
        },
    ],
    build: |params| {
        let estimator = params.choice("estimator").and_then(Estimator::parse);
        let window = params.number("window").map(|w| w as usize);
        let rates = params.choice("rates").and_then(RateModel::parse);
        let knows = params.choice("knows").and_then(OracleKnowledge::parse);
        let learned_carryover = params.choice("carryover") == Some("learned");
        // The index estimators with the new-page ΔQ estimate in frontier mode
        // (`policy::new_pages`), or the planner ([`planner`]).
        Ok(Box::new(UserCentricPolicy::new(
            UserCentric::new(window)
                .with_estimator(estimator)
                .with_rate_model(rates.unwrap_or_default())
                .with_oracle_knowledge(knows.unwrap_or_default()),
        )
        .with_learned_carryover(learned_carryover)))
    },
};

/// The `user-centric` family's policy: the refresh-index estimators of [`UserCentric`] (with
/// new pages, [`UserCentricWithNewPages`]), the [`UserCentricPlanner`] or the
/// [`HedgedPlanner`], whichever the estimator names — decided at `prepare`, since the default
/// estimator depends on the fit mode ([`Estimator::default_for`]).
pub struct UserCentricPolicy {
    by_index: UserCentricWithNewPages,
    planner: UserCentricPlanner,
    hedged: HedgedPlanner,
    /// The estimator that runs (set by `prepare`).
    running: Estimator,
}

impl UserCentricPolicy {
    pub(crate) fn new(by_index: UserCentric) -> Self {
        UserCentricPolicy {
            by_index: UserCentricWithNewPages::new(by_index),
            planner: Planner::new(UserCentricPlanModel::default()),
            hedged: HedgedPlanner::default(),
            running: Estimator::MeanOfRatios,
        }
    }

    /// Whether the planner learns the carry-over of a stale copy's cost
    /// ([`carryover`]; `carryover=learned`).
    pub(crate) fn with_learned_carryover(mut self, learned: bool) -> Self {
        if learned {
            self.planner = Planner::new(UserCentricPlanModel::with_learned_carryover());
        }
        self
    }

    /// The planners' replanning period (online, and oracle on new views).
    pub fn with_replan_every(mut self, units: u32) -> Self {
        self.planner.replan_every = units;
        self.hedged.planner.replan_every = units;
        self.hedged.ebr.replan_every = units;
        self
    }

    fn active(&mut self) -> &mut dyn RefreshPolicy {
        match self.running {
            Estimator::Planned => &mut self.planner,
            Estimator::Hedged => &mut self.hedged,
            _ => &mut self.by_index,
        }
    }

    fn active_ref(&self) -> &dyn RefreshPolicy {
        match self.running {
            Estimator::Planned => &self.planner,
            Estimator::Hedged => &self.hedged,
            _ => &self.by_index,
        }
    }
}

impl RefreshPolicy for UserCentricPolicy {
    fn name(&self) -> String {
        "user-centric".to_string()
    }

    fn label(&self) -> String {
        match self.running {
            Estimator::Planned if self.planner.model.carryover().is_some() => {
                "user-centric (ΔQ̄ planned, carry-over learned)".to_string()
            }
            Estimator::Planned => "user-centric (ΔQ̄ planned)".to_string(),
            Estimator::Hedged => "user-centric (ΔQ̄ hedged)".to_string(),
            _ => self.by_index.label(),
        }
    }

    fn settings(&self) -> serde_json::Map<String, serde_json::Value> {
        let planner = match self.running {
            Estimator::Planned => &self.planner,
            Estimator::Hedged => &self.hedged.planner,
            _ => return self.by_index.settings(),
        };
        let mut m = serde_json::Map::new();
        m.insert("estimator".into(), self.running.as_str().into());
        let mut planned = planner.settings();
        for key in ["signal_trust", "carryover"] {
            if let Some(value) = planned.remove(key) {
                m.insert(key.into(), value);
            }
        }
        if self.running == Estimator::Hedged {
            m.extend(self.hedged.settings());
        }
        m
    }

    fn prepare(&mut self, context: &PolicyContext<'_>) {
        self.running = self
            .by_index
            .inner
            .estimator
            .unwrap_or_else(|| Estimator::default_for(context.mode));
        self.active().prepare(context);
    }

    fn choose(&mut self, unit: Unit, budget: usize, crawl: &CrawlState) -> Vec<PageId> {
        self.active().choose(unit, budget, crawl)
    }

    fn choose_with_frontier(
        &mut self,
        unit: Unit,
        budget: usize,
        crawl: &CrawlState,
    ) -> Vec<PageId> {
        self.active().choose_with_frontier(unit, budget, crawl)
    }

    fn observe(&mut self, outcomes: &[RefreshOutcome]) {
        self.active().observe(outcomes);
    }

    fn reads(&self) -> Reads {
        Reads {
            delta_q: true,
            ..Reads::default()
        }
    }

    fn wants_views(&self, unit: Unit) -> bool {
        self.active_ref().wants_views(unit)
    }

    fn observe_views(&mut self, view_weight: &[f64]) {
        self.active().observe_views(view_weight);
    }
}
