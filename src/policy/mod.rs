//! Refresh policies: which `B` pages to re-download in each time unit.
//!
//! # Protocol
//!
//! The simulator (or a real crawler) drives a policy through [`RefreshPolicy`] in this order:
//!
//! 1. [`RefreshPolicy::prepare`] once, before unit 1, with the [`PolicyContext`]: the repository
//!    starts fully synchronised at unit 0. In `oracle` mode the context carries the whole
//!    [`ChangeHistory`] (every unit, every page), as paper 003 fitted its parameters; in
//!    `online` mode it carries none.
//! 2. For each unit `t = 1, 2, …`: [`RefreshPolicy::choose`] returns at most `budget` distinct
//!    pages; the simulator fetches them from the live Web at `t`, applies them to the index
//!    (the measurement hook fires) and then calls [`RefreshPolicy::observe`] with one
//!    [`RefreshOutcome`] per refreshed page, plus one with `discovered` set per page that first
//!    appeared at `t` and was crawled outside the budget.
//! 3. If [`RefreshPolicy::wants_views`] says so for `t + 1`, the simulator then sends the
//!    repository's current view weights through [`RefreshPolicy::observe_views`].
//!
//! A policy in `online` mode must learn only from the outcomes it observed: it never reads the
//! live Web itself. The simulator enforces that by giving policies no live-Web handle at all.

use crate::corpus::{PageId, Unit};
use crate::crawl::CrawlState;

/// Whether policy parameters may be fitted on the whole history or only on what was observed.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum FitMode {
    /// Parameters fitted on the whole history (paper 003's protocol, equal footing).
    Oracle,
    /// Only what the policy observed before `t` (what a deployed crawler can do).
    Online,
}

impl FitMode {
    pub fn as_str(self) -> &'static str {
        match self {
            FitMode::Oracle => "oracle",
            FitMode::Online => "online",
        }
    }
}

/// What one refresh revealed about a page.
#[derive(Debug, Clone, PartialEq)]
pub struct RefreshOutcome {
    pub page: PageId,
    /// Unit of the refresh.
    pub unit: Unit,
    /// Unit of the previous refresh of this page (0 for the initial crawl).
    pub last_refresh: Unit,
    /// Whether the fetched copy differs from the repository copy (content hash).
    pub changed: bool,
    /// Fraction of the repository copy's shingles not found in the fetched copy (0 when same).
    pub shingle_change: f64,
    /// ΔQ_A estimate from the measurement hook for this refresh (paper 003 §5).
    pub delta_q: f64,
    /// Whether the page is gone (404) at this unit.
    pub gone: bool,
    /// The page was not refreshed but discovered: it first appeared at `unit` and was crawled
    /// outside the refresh budget (the simulator's new-page crawl). Such an outcome says only
    /// "this page exists now, with a copy as of `unit`": it carries no change or ΔQ measurement.
    pub discovered: bool,
}

/// The true evolution of one page, as an oracle-mode policy may see it.
#[derive(Debug, Clone, Default)]
pub struct PageHistory {
    /// Units (≥ 1) at which the page's content differs from the previous unit's.
    pub change_units: Vec<Unit>,
    /// For each entry of `change_units`, the fraction of shingles that changed.
    pub shingle_changes: Vec<f64>,
    /// ΔQ_A measured when refreshing at each change unit right after the change (oracle
    /// user-centric fit; paper 003 §6 measured every change this way). Same length as
    /// `change_units`, or empty when not measured.
    pub delta_q: Vec<f64>,
}

/// The whole history, indexed by page id (oracle mode only).
#[derive(Debug, Clone, Default)]
pub struct ChangeHistory {
    pub units: Unit,
    pub pages: Vec<PageHistory>,
}

/// What a policy knows when it starts.
#[derive(Debug, Clone)]
pub struct PolicyContext<'a> {
    pub mode: FitMode,
    /// Number of pages (ids `0..page_count`).
    pub page_count: usize,
    /// Number of refresh units: units `1..=units` are refreshed (unit 0 is the initial crawl).
    pub units: Unit,
    /// Refreshes per unit.
    pub budget: usize,
    /// Pages present in the repository after the initial crawl.
    pub initial_pages: &'a [PageId],
    /// How often users are shown each page: `Σ_q f_q · I(rank of p in q's results)` at unit 0
    /// (EBR's weight, from the workload and the viewing likelihood).
    pub view_weight: &'a [f64],
    /// Oracle mode: the true history; `None` in online mode.
    pub history: Option<&'a ChangeHistory>,
    /// Seed for policies with randomness.
    pub seed: u64,
}

/// A refresh policy. See the module docs for the order of calls.
pub trait RefreshPolicy: Send {
    /// The family's name (`user-centric`, `sbr`, …).
    fn name(&self) -> String;
    /// The policy as outputs label it: its name and the parameters that distinguish it
    /// (e.g. `sbr (θ = 0.3)`). Valid after [`prepare`](Self::prepare) (some defaults depend on
    /// the fit mode).
    fn label(&self) -> String {
        self.name()
    }
    /// The parameters in effect, as JSON (empty for families without parameters).
    fn settings(&self) -> serde_json::Map<String, serde_json::Value> {
        serde_json::Map::new()
    }
    /// Called once before unit 1.
    fn prepare(&mut self, context: &PolicyContext<'_>);
    /// The pages to refresh at `unit`: at most `budget`, distinct, in priority order.
    /// `crawl` is what the crawler knows of every page from its own fetches (held copy,
    /// last refresh, gone, visits): read it rather than keeping a copy.
    fn choose(&mut self, unit: Unit, budget: usize, crawl: &CrawlState) -> Vec<PageId>;
    /// What the refreshes of `unit` revealed (called after the batch is indexed).
    fn observe(&mut self, outcomes: &[RefreshOutcome]);
    /// Whether the policy wants the repository's current view weights before choosing at
    /// `unit` (computing them ranks every workload query, so it is done on request only).
    fn wants_views(&self, _unit: Unit) -> bool {
        false
    }
    /// The repository's view weights `Σ_q f_q · I(rank of p in q's results)`, as the search
    /// engine ranks its own copies now (no live-Web data): sent after [`observe`] when
    /// [`wants_views`] asked for them.
    ///
    /// [`observe`]: RefreshPolicy::observe
    /// [`wants_views`]: RefreshPolicy::wants_views
    fn observe_views(&mut self, _view_weight: &[f64]) {}
}

pub mod baselines;
pub mod ebr;
pub mod family;
pub mod freshness;
pub mod gp4c;
pub mod history_score;
pub mod planned;
pub mod registry;
pub mod sbr;
pub mod schedule;
pub mod user_centric;
pub mod webfountain;

pub use family::{ParamValue, Params, PolicyError, PolicyFamily};
pub use registry::{family, make_policy, FAMILIES};
#[cfg(test)]
mod testkit;
