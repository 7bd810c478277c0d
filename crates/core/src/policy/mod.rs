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
//!    appeared at `t` and was crawled outside the budget. An outcome's `delta_q` is the
//!    measured ΔQ_A only for a policy whose [`RefreshPolicy::reads`] says so; others
//!    may be handed 0 (a comparison sweep does not measure for them).
//! 3. If [`RefreshPolicy::wants_views`] says so for `t + 1`, the simulator then sends the
//!    repository's current view weights through [`RefreshPolicy::observe_views`].
//!
//! A policy in `online` mode must learn only from the outcomes it observed: it never reads the
//! live Web itself. The simulator enforces that by giving policies no live-Web handle at all.
//!
//! What the crawler knows about its own copies — URLs, hosts, directories, held copies, their
//! link graph and its PageRank — is legitimate in both modes (the crawler owns them): it is
//! [`CrawlState::knowledge`], offered in `prepare` ([`PolicyContext::crawl`]) and in every
//! `choose*` call. It shows the repository as of the start of the unit.
//!
//! # Rounds within a unit
//!
//! A sampling policy (papers 000 and 002: download a few pages of a group, and when they
//! changed, the group) needs to see what its first fetches revealed before spending the rest
//! of the unit's budget. It says so by offering a [`RoundPolicy`] from [`RefreshPolicy::rounds`]; then, in step 2, for
//! every unit after the warm-up the refresher calls, instead of `choose`/`choose_with_frontier`:
//!
//! 1. [`RoundPolicy::choose_round`] with `round = 0, 1, …` and the budget still `remaining`;
//!    the pages it returns are filtered as `choose`'s are (unknown ids, ids already fetched in
//!    an earlier round of the unit, or twice in the list, are dropped and lose nothing; the
//!    list is cut at `remaining`), then fetched at once;
//! 2. [`RoundPolicy::observe_round`] with one [`ProbeOutcome`] per page fetched in that
//!    round, in fetch order: whether its copy changed (content hash), the shingle change from
//!    the held copy, whether it is gone, and the copy now fetched;
//! 3. again from 1, until `choose_round` returns nothing that survives the filter (an empty
//!    list ends the unit) or the budget is spent.
//!
//! Guarantees: the rounds of a unit fetch distinct pages, at most `budget` in all; every page
//! fetched is reported in exactly one `observe_round` before the next `choose_round`; the
//! pages of all rounds, in fetch order, are the unit's refresh list, and go through the
//! repository's one update path as **one batch at the end of the unit**, so the measurement
//! hook, the ΔQ of each page, the [`RefreshOutcome`]s passed to `observe` and every metric are
//! exactly what a one-shot `choose` of the same list would give. Then `observe` and
//! `observe_views` follow as for any policy.
//!
//! What a policy using rounds never sees: an outcome or a copy of a page it did not fetch; a
//! round's copies in [`CrawlState`] before the unit ends (the crawl state, its knowledge view
//! and the index stay as of the start of the unit through all rounds); anything from the live
//! Web at another unit. In frontier mode a round may pick frontier pages (first crawls, whose
//! probe has `first_crawl` set) as well as refreshes. In warm-up units no policy is asked.
//! Policies without rounds are driven exactly as before.
//!
//! # New pages inside the budget (frontier mode)
//!
//! With `--new-pages frontier` ([`crate::crawl::NewPages::Frontier`]) step 2 changes: the
//! refresher calls [`RefreshPolicy::choose_with_frontier`] instead of `choose`, and what it
//! returns — refreshes of known pages and first crawls of frontier pages together, at most
//! `budget` — is fetched as one batch. The frontier ([`CrawlState::frontier_pages`]) holds the
//! pages met in the links of fetched copies (unit 0: of the initial crawl) and never crawled;
//! a link found at `t` is offered from `t + 1` on. The first crawl of a frontier page is
//! observed as a [`RefreshOutcome`] with `discovered` set and, unlike an outside-budget
//! discovery, the `delta_q` its addition measured.
//!
//! What must never be read in frontier mode: a page id the crawler does not know
//! ([`CrawlState::is_known`] is false) — nothing tells a crawler that such a URL exists. The
//! refresher drops such ids from a policy's list (the slot is lost, nothing is fetched), so a
//! policy that ranks every id wastes budget rather than peeks. `choose` picks refreshes: pages
//! the crawler fetched before ([`CrawlState::is_refreshable`]); frontier pages are first crawls,
//! picked by `choose_with_frontier` only (a page picked twice would also lose a slot).
//!
//! The default rule, for policies with nothing better ([`frontier_first`]): a frontier page has
//! never been crawled, so its age is unbounded and its (missing) copy certainly stale — the
//! most stale page there is. The frontier goes first, in discovery order, and `choose` gets the
//! rest of the budget. SBR and EBR, whose priority is the probability that a copy is stale
//! (EBR: times the view weight, which a never-indexed page does not have yet), and the
//! baselines (round-robin, random, age) follow it. WebFountain plans new pages through its
//! model's `z_t`, user-centric by an estimate of a new page's ΔQ ([`new_pages`]).

use std::sync::Arc;

use crate::corpus::{PageId, PageVersion, Unit};
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
    pub(crate) last_refresh: Unit,
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
    /// In frontier mode it is instead the first crawl of a frontier page, inside the budget:
    /// `delta_q` is then what adding the page measured (`gone` if the link led nowhere).
    pub discovered: bool,
}

/// What one fetch of a round revealed, the moment the crawler downloaded the page (rounds
/// protocol, see the module docs): before the unit's batch is indexed, so without ΔQ.
#[derive(Debug, Clone)]
pub struct ProbeOutcome {
    pub page: PageId,
    /// The round (0 first) that fetched it.
    pub round: u32,
    /// Whether the fetched copy differs from the held copy (content hash); false for a first
    /// crawl. As [`RefreshOutcome::changed`] for the same page.
    pub changed: bool,
    /// Fraction of the held copy's shingles not found in the fetched copy (0 when unchanged,
    /// 1 when either side has no copy). As [`RefreshOutcome::shingle_change`].
    pub shingle_change: f64,
    /// The page is gone (404) at this unit.
    pub gone: bool,
    /// A frontier page's first crawl (frontier mode): nothing to compare with.
    pub first_crawl: bool,
    /// The copy the page has now, as the crawler knows it after the fetch: the new copy, the
    /// held copy again when it was not modified (or the fetch failed), `None` when gone.
    pub copy: Option<Arc<PageVersion>>,
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

impl ChangeHistory {
    /// The history as it stood at unit `last`: the changes of units `1..=last` and their
    /// measurements, over units `0..=last` (`units = last + 1`, as a whole history of units
    /// `0..units` counts them) — what a crawler that watched every page until `last` could
    /// know, with nothing of what came after.
    pub fn through(&self, last: Unit) -> ChangeHistory {
        let last = last.min(self.units.saturating_sub(1));
        ChangeHistory {
            units: last + 1,
            pages: self
                .pages
                .iter()
                .map(|page| {
                    let kept = page.change_units.partition_point(|&u| u <= last);
                    PageHistory {
                        change_units: page.change_units[..kept].to_vec(),
                        shingle_changes: page.shingle_changes
                            [..kept.min(page.shingle_changes.len())]
                            .to_vec(),
                        delta_q: page.delta_q[..kept.min(page.delta_q.len())].to_vec(),
                    }
                })
                .collect(),
        }
    }
}

/// `PolicyContext::units` of an open-ended run: far enough that no run reaches it, small
/// enough that unit arithmetic cannot overflow. A policy that plans ahead plans a window of it.
pub const OPEN_ENDED_UNITS: Unit = Unit::MAX / 2;

/// What a policy knows when it starts.
#[derive(Debug, Clone)]
pub struct PolicyContext<'a> {
    pub mode: FitMode,
    /// Number of pages (ids `0..page_count`).
    pub page_count: usize,
    /// Number of refresh units: units `1..=units` are refreshed (unit 0 is the initial crawl);
    /// [`OPEN_ENDED_UNITS`] for a run without a last unit (a live crawl).
    pub(crate) units: Unit,
    /// Refreshes per unit.
    pub budget: usize,
    /// Pages present in the repository after the initial crawl.
    pub initial_pages: &'a [PageId],
    /// How often users are shown each page: `Σ_q f_q · I(rank of p in q's results)` at unit 0
    /// (EBR's weight, from the workload and the viewing likelihood).
    pub(crate) view_weight: &'a [f64],
    /// Oracle mode: the true history; `None` in online mode.
    pub history: Option<&'a ChangeHistory>,
    /// Seed for policies with randomness.
    pub(crate) seed: u64,
    /// What the crawler knows after the initial crawl ([`CrawlState::knowledge`]: URLs,
    /// held copies, link graph, PageRank). The refresher fills it in before `prepare`; `None`
    /// when a policy is prepared outside a refresher (unit tests, labels).
    pub crawl: Option<&'a CrawlState>,
    /// The environment's cache, where the planners of one environment share their schedules
    /// ([`crate::cache`]); `None` outside a sweep or served engine.
    pub(crate) cache: Option<std::sync::Arc<crate::cache::Cache>>,
}

/// What a policy reads beyond the protocol's calls, declared once by the built policy
/// ([`RefreshPolicy::reads`]) so that drivers skip what no one reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reads {
    /// The policy reads [`RefreshOutcome::delta_q`]. A policy that does not may be handed 0
    /// there: a comparison sweep, which reports no ΔQ_A, then skips measuring it (the hook
    /// stays off). A family that starts reading it must say so: a test of `sim::run` runs
    /// every registered family both ways and requires the same runs.
    pub delta_q: bool,
    /// What the policy chooses can depend on the fit mode: the context's `mode` or `history`
    /// (oracle mode only). A policy that reads neither makes the same run in both modes, so a
    /// comparison of several modes runs it once and reports it in each. Conservatively
    /// `true`; a family that says `false` is run both ways by a test of `sim::run`, which
    /// requires the same runs.
    pub fit_mode: bool,
    /// What the policy chooses depends on the context's `seed` (random draws). A comparison's
    /// intervals then also vary the seed (`refresher::sim::compare::SEEDS_PER_INTERVAL`). A
    /// family that says `false` is run with two seeds by a test of `sim::run`, which requires
    /// the same runs.
    pub seed: bool,
}

impl Default for Reads {
    /// No ΔQ; the fit mode (conservatively); no seed.
    fn default() -> Self {
        Reads {
            delta_q: false,
            fit_mode: true,
            seed: false,
        }
    }
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
    /// Frontier mode only (see the module docs): refreshes and first crawls of frontier pages
    /// at `unit`, at most `budget` together, distinct, known to the crawler. By default the
    /// frontier first, then `choose` for the rest ([`frontier_first`]).
    fn choose_with_frontier(
        &mut self,
        unit: Unit,
        budget: usize,
        crawl: &CrawlState,
    ) -> Vec<PageId> {
        let new = frontier_first(budget, crawl);
        let rest = budget - new.len();
        let mut chosen = new;
        chosen.extend(self.choose(unit, rest, crawl));
        chosen
    }
    /// What the refreshes of `unit` revealed (called after the batch is indexed).
    fn observe(&mut self, outcomes: &[RefreshOutcome]);
    /// What the policy reads beyond the protocol's calls ([`Reads`]); fixed once the policy is
    /// built from its family and parameters.
    fn reads(&self) -> Reads {
        Reads::default()
    }
    /// The rounds protocol, when the policy spends each unit's budget in rounds (see the module
    /// docs): then the refresher drives the unit through it instead of
    /// `choose`/`choose_with_frontier`. `None` (the default) for a policy that chooses a unit's
    /// pages at once. Must answer the same for the whole run.
    fn rounds(&mut self) -> Option<&mut dyn RoundPolicy> {
        None
    }
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

/// The rounds protocol of a policy that spends each unit's budget in rounds (see the module
/// docs for the order of calls), offered through [`RefreshPolicy::rounds`].
pub trait RoundPolicy: Send {
    /// Round `round` (0 first) of `unit`: the pages to fetch now, at most `remaining` (the
    /// unit's budget minus what earlier rounds fetched), distinct and not fetched earlier in
    /// the unit; an empty list ends the unit. `crawl` is as of the start of the unit: what
    /// earlier rounds fetched came through [`observe_round`](Self::observe_round).
    fn choose_round(
        &mut self,
        unit: Unit,
        round: u32,
        remaining: usize,
        crawl: &CrawlState,
    ) -> Vec<PageId>;
    /// What the fetches of the last round revealed, one [`ProbeOutcome`] per page fetched, in
    /// fetch order (called before the next `choose_round`).
    fn observe_round(&mut self, probes: &[ProbeOutcome]);
}

/// The default frontier rule (see the module docs): frontier pages are the stalest pages there
/// are (never crawled), so they take the budget first, in discovery order (earliest link first,
/// then page id). Returns at most `budget` frontier pages.
pub fn frontier_first(budget: usize, crawl: &CrawlState) -> Vec<PageId> {
    crawl
        .frontier_pages()
        .into_iter()
        .take(budget)
        .map(|f| f.page)
        .collect()
}

pub mod baselines;
pub mod ebr;
pub mod family;
pub mod freshness;
pub mod gp4c;
pub mod history_score;
pub mod lambdacrawl;
pub mod new_pages;
pub mod planned;
pub mod registry;
pub mod sampling;
pub mod sbr;
pub mod schedule;
pub mod user_centric;

pub mod webfountain;

pub use family::{ParamValue, Params, PolicyError, PolicyFamily};
pub use registry::{family, make_policy, FAMILIES};
#[cfg(test)]
mod testkit;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_history_through_a_unit_keeps_only_what_was_seen_by_then() {
        let history = ChangeHistory {
            units: 10,
            pages: vec![
                PageHistory {
                    change_units: vec![2, 5, 9],
                    shingle_changes: vec![0.1, 0.2, 0.3],
                    delta_q: vec![1.0, 2.0, 3.0],
                },
                // Not measured: no ΔQ, and it stays so.
                PageHistory {
                    change_units: vec![6],
                    shingle_changes: vec![0.5],
                    delta_q: Vec::new(),
                },
            ],
        };
        let cut = history.through(5);
        // Units 0..=5: five observed intervals, as `oracle_rate` divides by `units − 1`.
        assert_eq!(cut.units, 6);
        assert_eq!(crate::change::oracle_rate(2, cut.units), 2.0 / 5.0);
        assert_eq!(cut.pages[0].change_units, vec![2, 5]);
        assert_eq!(cut.pages[0].shingle_changes, vec![0.1, 0.2]);
        assert_eq!(cut.pages[0].delta_q, vec![1.0, 2.0]);
        assert!(cut.pages[1].change_units.is_empty() && cut.pages[1].delta_q.is_empty());
        // Past the end: the whole history.
        let all = history.through(40);
        assert_eq!(all.units, 10);
        assert_eq!(all.pages[0].change_units, history.pages[0].change_units);
    }
}
