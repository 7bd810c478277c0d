//! One simulation run: a policy with budget B over every unit of an environment.

use std::ops::ControlFlow;

use std::sync::Arc;

use crate::corpus::{LiveWeb, PageId, Unit};
use crate::crawl::{CrawlState, NewPages};
use crate::fetch::SnapshotFetcher;
use crate::index::{ForwardIndex, IndexError, Repository};

use crate::judge::exact::{
    evaluate_and_rank, EvaluatedLists, LiveTruth, Paper000Measures, RankMemory, RanksWanted,
    ScoresAtRanks, UnitMetrics,
};
use crate::judge::live_scores::LiveScores;
use crate::judge::trec;
use crate::policy::{FitMode, RefreshPolicy};
use crate::quality::measure::{DeltaQMethod, NoMeasure};
use crate::quality::search_quality::mean_keys;
use crate::quality::SearchQuality;
use crate::quality::ViewingLikelihood;
use crate::refresh::{Refresher, RunPlan, StartingPoint, StepReport};
use crate::signal::SignalSettings;
use crate::text::TermId;

use super::displacement::{Displacement, DisplacementTracker, Judge};
use super::environment::{measurement, Environment};
use super::shared_evaluations::{Evaluated, SharedEvaluations};
use crate::change::schedule_metrics;

/// What varies between runs over one environment.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Refreshes per unit.
    pub(crate) budget: usize,
    pub(crate) mode: FitMode,
    pub seed: u64,
    /// Refit the score-to-rank functions every this many units (1: every unit).
    pub(crate) refit_every: Unit,
    /// When new pages are crawled: outside the budget in the unit they first appear (default:
    /// paper 003 §4 schedules refreshes of known pages only and leaves new-page discovery to
    /// other work, so new pages enter the repository when created and `B` is spent on
    /// refreshes), or from a frontier of linked pages, inside the budget.
    pub new_pages: NewPages,
    /// Export the repository's results and the live judgements of this unit in TREC format.
    pub trec_unit: Option<Unit>,
    /// Units `1..=warmup_units` refresh every held page outside the budget (paper 001 §5.2)
    /// and are not judged: the metrics start at unit `warmup_units + 1`. 0: no warm-up.
    pub warmup_units: Unit,
    /// What an oracle-mode policy is told of the history.
    pub oracle_history: OracleHistory,
    /// Measure ΔQ_A (the per-unit `estimated_delta_q`) even when the policy does not read it
    /// ([`crate::policy::Reads::delta_q`]). A sweep, which reports means of the exact metrics
    /// only, turns it off: the hook, the refits and the estimate are then skipped for such
    /// policies, and their runs are otherwise the same.
    pub(crate) measure_unread_delta_q: bool,
    /// Measure each judged refresh's true gain, its leave-one-out effect within its unit's
    /// batch ([`super::displacement`], issue 47 item 6). Off by default: it re-ranks the
    /// queries every refreshed page touches once more per refresh. The run is otherwise the
    /// same (tested).
    pub displacement: bool,
    /// The change signals the site publishes (sitemap dates, a feed; [`crate::signal`]), drawn
    /// from its true history with `seed`; online policies may read them. Default `none` (the
    /// papers' protocol).
    pub signals: SignalSettings,
    /// Also judge every unit under each resample of the workload's queries
    /// ([`crate::quality::bootstrap`]; [`RunResult::resampled_quality`]): what a comparison's
    /// intervals read. Off by default; the run is otherwise the same.
    pub(crate) bootstrap: bool,
}

/// What an oracle-mode policy is told of the true history of changes.
///
/// By default the whole history, the judged units included: its change rates and gains are
/// counted over the very units it is judged on (paper 003 §6's oracle). `WarmUp` cuts the
/// history at the end of the warm-up, where every page was watched at every unit: the best a
/// crawler could know from the past alone. Comparing the two says how much of the oracle's
/// lead over an online policy is knowledge of the future rather than better estimates.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum OracleHistory {
    /// Every unit's changes and their gains.
    #[default]
    All,
    /// The changes of the warm-up units `1..=W` only: what the warm-up's own refreshes show
    /// (every held page at every unit `1..=W`). The policy is prepared as an online one and
    /// learns them from those refreshes, then goes on learning from its own (so the run equals
    /// online mode with the same warm-up, tested): a history told at the start and never
    /// updated would stop learning at `W` and write off every page that did not change by then.
    WarmUp,
}

impl OracleHistory {
    pub fn as_str(self) -> &'static str {
        match self {
            OracleHistory::All => "all",
            OracleHistory::WarmUp => "warm-up",
        }
    }

    /// The fit mode a policy is prepared in: oracle mode told only the warm-up learns as online
    /// mode does (see [`OracleHistory::WarmUp`]).
    pub fn policy_mode(self, mode: FitMode) -> FitMode {
        match (mode, self) {
            (FitMode::Oracle, OracleHistory::WarmUp) => FitMode::Online,
            (mode, _) => mode,
        }
    }

    /// The history a run of fit mode `mode` was told: online runs are told none, which they
    /// report as the default `all` rather than a cut that did not apply to them.
    pub fn as_told_in(self, mode: FitMode) -> OracleHistory {
        match mode {
            FitMode::Oracle => self,
            FitMode::Online => OracleHistory::All,
        }
    }
}

/// A warm-up or oracle-history setting a run cannot use. Each names the parameters as the
/// caller's user spells them (`--warmup-units`, `` `warmup_units` ``).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunConfigError {
    /// `warm-up` history asked of an online run.
    #[error(
        "{name} warm-up: only oracle mode is told the history (online policies learn it \
         from their own refreshes)"
    )]
    HistoryOnline { name: String },
    /// `warm-up` history without a warm-up to cut it at.
    #[error(
        "{name} warm-up: there is no warm-up to cut the history at; give {warmup_name} W \
         (W ≥ 1)"
    )]
    HistoryWithoutWarmUp { name: String, warmup_name: String },
    /// A warm-up that leaves no unit of the corpus to judge.
    #[error(
        "{name} {warmup}: the corpus has units 1..={} after the initial crawl; the warm-up \
         must leave at least one to judge (at most {})",
        .units.saturating_sub(1),
        .units.saturating_sub(2)
    )]
    WarmUpTooLong {
        name: String,
        warmup: Unit,
        units: Unit,
    },
}

/// Checks an oracle history choice against the fit mode and the warm-up units: `warm-up`
/// needs oracle mode and a warm-up of at least one unit. `Err` says why, naming the
/// parameters as the caller's user spells them (`names`: the history's, the warm-up's).
pub fn check_oracle_history(
    names: (&str, &str),
    history: OracleHistory,
    mode: FitMode,
    warmup: Unit,
) -> Result<(), RunConfigError> {
    let (name, warmup_name) = names;
    match (history, mode, warmup) {
        (OracleHistory::All, _, _) => Ok(()),
        (OracleHistory::WarmUp, FitMode::Online, _) => Err(RunConfigError::HistoryOnline {
            name: name.to_string(),
        }),
        (OracleHistory::WarmUp, FitMode::Oracle, 0) => Err(RunConfigError::HistoryWithoutWarmUp {
            name: name.to_string(),
            warmup_name: warmup_name.to_string(),
        }),
        (OracleHistory::WarmUp, FitMode::Oracle, _) => Ok(()),
    }
}

/// Checks warm-up units `warmup` against a corpus of `units` units (unit 0 is the initial
/// crawl; at least one unit must be left to judge). `Err` says why, naming `name`, the
/// parameter as the caller's user spells it.
pub fn check_warmup_units(name: &str, warmup: Unit, units: Unit) -> Result<Unit, RunConfigError> {
    if warmup > 0 && warmup + 1 >= units {
        return Err(RunConfigError::WarmUpTooLong {
            name: name.to_string(),
            warmup,
            units,
        });
    }
    Ok(warmup)
}

impl RunConfig {
    /// The refresher's plan for a run whose last unit is `last_unit`: the policy is fitted in
    /// the mode its oracle history says ([`OracleHistory::policy_mode`]).
    pub fn plan(&self, last_unit: Unit, likelihood: ViewingLikelihood) -> RunPlan {
        RunPlan {
            budget: self.budget,
            mode: self.oracle_history.policy_mode(self.mode),
            seed: self.seed,
            new_pages: self.new_pages,
            last_unit: Some(last_unit),
            likelihood,
            warmup_units: self.warmup_units,
        }
    }

    pub fn new(budget: usize, mode: FitMode) -> Self {
        RunConfig {
            budget,
            mode,
            seed: 1,
            refit_every: 1,
            new_pages: NewPages::OutsideBudget,
            trec_unit: None,
            warmup_units: 0,
            oracle_history: OracleHistory::All,
            measure_unread_delta_q: true,
            displacement: false,
            signals: SignalSettings::default(),
            bootstrap: false,
        }
    }
}

/// Metrics of one unit of a run (after that unit's refreshes).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct UnitRecord {
    pub unit: Unit,
    /// What users see after this unit's refreshes.
    #[serde(flatten)]
    pub search: SearchQuality,
    /// Retrieval nDCG@10 of the repository's results against the live top 10 (trec_eval's
    /// `ndcg_cut_10`); not [`ndcg`](Self::ndcg), which scores the refresh schedule.
    pub ndcg_at_10: f64,
    /// Precision at 10 against the live top 10 (trec_eval's `P_10`).
    pub p_at_10: f64,
    /// Pages refreshed.
    pub refreshed: usize,
    /// ChangeRatio (paper 002): share of refreshed pages whose copy had changed.
    pub change_ratio: f64,
    /// Weighted ChangeRatio (paper 002 Eq. 10), page weights = view weights scaled to mean 1.
    pub weighted_change_ratio: f64,
    /// Weighted ChangeRatio with paper 002's weights: the PageRank of the held-copy link graph
    /// at the start of the unit (what the crawler held when it chose), scaled to mean 1 over
    /// the held pages; a page held by no copy then (a first crawl) weighs 0.
    pub pagerank_weighted_change_ratio: f64,
    /// Paper 000's top-k freshness and MAP@10 variants (`fresh_at_10_fixed_k`,
    /// `map_at_10_retrieved`, `map_at_10_tau0`).
    #[serde(flatten)]
    pub paper000: Paper000Measures,
    /// NDCG@B of the refresh *schedule* against the pages whose copy was stale (paper 001
    /// Eq. 2–3); the same value as [`schedule_ndcg`](Self::schedule_ndcg), kept under its
    /// first name. Not a retrieval measure: see [`ndcg_at_10`](Self::ndcg_at_10).
    pub ndcg: f64,
    /// NDCG@B of the refresh schedule (paper 001 Eq. 2–3), named so it is not taken for a
    /// retrieval nDCG.
    pub schedule_ndcg: f64,
    /// Repository pages whose copy is out of date after the refreshes (paper 004).
    pub obsolete_pages: usize,
    /// Σ of the hook-estimated ΔQ_A of this unit's refreshes.
    pub estimated_delta_q: f64,
    /// Budgeted fetches that were first crawls of frontier pages (frontier mode; 0 otherwise:
    /// new pages are then crawled outside the budget).
    pub new_page_fetches: usize,
    /// Budgeted fetches that refreshed a page already crawled (`refreshed − new_page_fetches`).
    pub refresh_fetches: usize,
    /// Known, never-crawled pages waiting in the frontier after the unit (paper 004's `n_t`;
    /// 0 outside frontier mode).
    pub frontier_pages: usize,
    /// ChangeRate (paper 001 Eq. 1): changed refreshed pages over the budget B.
    pub change_rate: f64,
    /// NDCG@B of the schedule as paper 001's code computes it (discount 1, 1/ln 3, …; 0 when
    /// nothing is stale).
    pub gp4c_ndcg: f64,
}

/// The outcome of one run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunResult {
    pub policy: String,
    /// The policy with the parameters that distinguish it (e.g. `sbr (θ = 0.3)`).
    pub label: String,
    /// The policy's parameters in effect.
    pub params: serde_json::Map<String, serde_json::Value>,
    pub budget: usize,
    pub mode: FitMode,
    pub scoring: String,
    /// How ΔQ_A was measured (`estimate` or `exact`).
    pub delta_q: DeltaQMethod,
    /// The mean over units of what users see (keys `mean_quality`, `mean_fresh_at_10`,
    /// `mean_map_at_10`).
    #[serde(flatten, with = "mean_keys")]
    pub mean: SearchQuality,
    /// Mean retrieval nDCG@10 (trec_eval's `ndcg_cut_10`).
    pub mean_ndcg_at_10: f64,
    /// Mean P@10 (trec_eval's `P_10`).
    pub(crate) mean_p_at_10: f64,
    pub mean_change_ratio: f64,
    /// Mean view-weighted ChangeRatio (paper 002 Eq. 10–11).
    pub mean_weighted_change_ratio: f64,
    /// Mean PageRank-weighted ChangeRatio (paper 002 Eq. 10–11 with its PageRank weights).
    pub mean_pagerank_weighted_change_ratio: f64,
    /// Mean top-k freshness with k = 10 fixed (paper 000 Eq. 8).
    pub mean_fresh_at_10_fixed_k: f64,
    /// Mean MAP@10 normalised by the relevant results retrieved (paper 000 Eq. 9).
    pub mean_map_at_10_retrieved: f64,
    /// The same with `τ = 0` relevance (the live copy still matches the query).
    pub mean_map_at_10_tau0: f64,
    /// Mean schedule NDCG@B (the same as `mean_schedule_ndcg`; kept under its first name).
    pub(crate) mean_ndcg: f64,
    /// Mean NDCG@B of the refresh schedule (paper 001), not a retrieval measure.
    pub mean_schedule_ndcg: f64,
    pub mean_obsolete_pages: f64,
    /// When new pages were crawled (`outside-budget` or `frontier`).
    pub new_pages: NewPages,
    /// Mean per unit of [`UnitRecord::new_page_fetches`].
    pub mean_new_page_fetches: f64,
    /// Mean per unit of [`UnitRecord::refresh_fetches`].
    pub mean_refresh_fetches: f64,
    /// How soon new pages users look for got into the repository ([`DiscoveryDelay`]).
    #[serde(flatten)]
    pub discovery: DiscoveryDelay,
    /// Mean ChangeRate (paper 001 Eq. 1).
    pub mean_change_rate: f64,
    /// Mean gp4c NDCG@B of the schedule (paper 001's code).
    pub mean_gp4c_ndcg: f64,
    /// Warm-up units before the judged ones (paper 001 §5.2).
    pub(crate) warmup_units: Unit,
    /// What an oracle-mode policy was told of the history ([`OracleHistory`]).
    pub(crate) oracle_history: OracleHistory,
    /// The change signals the site published ([`crate::signal`]; `["none"]` without), which
    /// online policies may read.
    pub(crate) signals: Vec<String>,
    pub per_unit: Vec<UnitRecord>,
    /// With [`RunConfig::bootstrap`]: the mean quality over the judged units under each
    /// resample of the workload's queries, in the environment's resample order.
    #[serde(skip)]
    pub(crate) resampled_quality: Option<Vec<f64>>,
    /// Pages refreshed at each judged unit (index 0 = unit `warmup_units + 1`), in the
    /// policy's priority order.
    #[serde(skip)]
    pub refreshed_pages: Vec<Vec<PageId>>,
    /// The TREC files of [`RunConfig::trec_unit`], when asked for.
    #[serde(skip)]
    pub trec: Option<TrecExport>,
    /// The displacement measurement, when [`RunConfig::displacement`] asked for it (the key is
    /// absent otherwise, so outputs without it are unchanged).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub displacement: Option<Displacement>,
}

/// The delay between a page's appearance on the live Web and its first copy in the repository,
/// over the pages created during the run (absent at unit 0, present at some unit ≥ 1).
///
/// A page that appears at unit `c` and is first held after unit `f` waited `f − c` units (0
/// when crawled as it appeared, as outside the budget). A page never crawled counts as crawled
/// just after the run (`last + 1 − c`, a lower bound). The weighted mean weighs each page by
/// how often users are shown it on the live Web at the last unit, `Σ_q f_q · I(rank of p in
/// q's live results)`: its views once crawled (the views a repository holding it would give
/// it), so the delays of pages nobody searches for do not count.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct DiscoveryDelay {
    /// Pages created during the run.
    pub new_pages_created: usize,
    /// Of those, pages never held by the end.
    pub new_pages_never_crawled: usize,
    /// Unweighted mean delay in units.
    pub mean_discovery_delay: f64,
    /// View-weighted mean delay in units (0 when no new page has views).
    pub mean_discovery_delay_weighted: f64,
}

/// Tracks [`DiscoveryDelay`] through a run.
struct DelayTracker {
    /// `(page, unit it appeared)` of every page created during the run.
    created: Vec<(PageId, Unit)>,
    /// First unit each of `created` was held (`None`: not yet).
    first_held: Vec<Option<Unit>>,
}

impl DelayTracker {
    fn new(corpus: &crate::corpus::Corpus, units: Unit) -> Self {
        let created: Vec<(PageId, Unit)> = (0..corpus.page_count() as PageId)
            .filter(|&p| corpus.page_at(p, 0).present().is_none())
            .filter_map(|p| {
                (1..units)
                    .find(|&u| corpus.page_at(p, u).present().is_some())
                    .map(|u| (p, u))
            })
            .collect();
        let first_held = vec![None; created.len()];
        DelayTracker {
            created,
            first_held,
        }
    }

    fn after_unit(&mut self, unit: Unit, crawl: &CrawlState) {
        for (i, &(p, _)) in self.created.iter().enumerate() {
            if self.first_held[i].is_none() && crawl.held(p).is_some() {
                self.first_held[i] = Some(unit);
            }
        }
    }

    fn finish(&self, last: Unit, views: &[f64]) -> DiscoveryDelay {
        let mut out = DiscoveryDelay {
            new_pages_created: self.created.len(),
            ..Default::default()
        };
        let (mut sum, mut wsum, mut weights) = (0.0, 0.0, 0.0);
        for (&(p, c), held) in self.created.iter().zip(&self.first_held) {
            let f = held.unwrap_or(last + 1);
            out.new_pages_never_crawled += usize::from(held.is_none());
            let delay = f64::from(f.saturating_sub(c));
            let w = views.get(p as usize).copied().unwrap_or(0.0);
            sum += delay;
            wsum += w * delay;
            weights += w;
        }
        if !self.created.is_empty() {
            out.mean_discovery_delay = sum / self.created.len() as f64;
        }
        if weights > 0.0 {
            out.mean_discovery_delay_weighted = wsum / weights;
        }
        out
    }
}

/// TREC files of one unit (see [`crate::judge::trec`]).
#[derive(Debug, Clone)]
pub struct TrecExport {
    /// The repository's top 10 per query, `qid Q0 docno rank score tag`.
    pub run: String,
    /// The live Web's judgements, `qid 0 docno 1`.
    pub qrels: String,
    /// Our measures in trec_eval's `-q` layout (`map_cut_10`, `ndcg_cut_10`, `P_10`).
    pub evaluation: String,
}

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A refresh budget larger than the pages there are (it would only size allocations).
    #[error("budget {budget} exceeds the {pages} pages of the corpus")]
    Budget { budget: usize, pages: usize },
    /// The repository failed.
    #[error(transparent)]
    Index(#[from] IndexError),
}

/// Runs `policy` over every unit `1..units` of `env`.
pub fn run(
    env: &Environment<'_>,
    policy: Box<dyn RefreshPolicy>,
    config: &RunConfig,
) -> Result<RunResult, RunError> {
    run_with(env, policy, config, &mut |_| ControlFlow::Continue(()))
}

/// [`run`], calling `on_unit` after every unit's metrics (for streaming progress); returning
/// `ControlFlow::Break` stops the run early (cancellation) with the units done so far.
///
/// The run is a judge around a [`Refresher`] over a [`SnapshotFetcher`]: the refresher does the
/// refreshing (and sees only what it fetched); the judge reads the live Web for the exact
/// metrics, the schedule's NDCG, change ratios and obsolete pages, and exports TREC files.
pub fn run_with(
    env: &Environment<'_>,
    policy: Box<dyn RefreshPolicy>,
    config: &RunConfig,
    on_unit: &mut dyn FnMut(&UnitRecord) -> ControlFlow<()>,
) -> Result<RunResult, RunError> {
    let units = env.units();
    let pages = env.corpus.page_count();
    if config.budget > pages {
        return Err(RunError::Budget {
            budget: config.budget,
            pages,
        });
    }
    let mut refresher = refresher_for(env, policy, config);
    let mut judge = RunJudge::new(env, config);
    for unit in 1..units {
        if unit <= config.warmup_units {
            judge.warm_up(&mut refresher, unit)?;
            continue;
        }
        let record = judge.judged_unit(&mut refresher, unit)?;
        if on_unit(record).is_break() {
            break;
        }
    }
    Ok(judge.finish(&refresher))
}

/// The judge of [`run_with`]: what it carries from unit to unit around the refresher (the
/// records so far, the discovery delays, the displacement measurement, the ranked lists).
struct RunJudge<'a, 'e> {
    env: &'a Environment<'e>,
    config: &'a RunConfig,
    /// Scales the environment's view weights to mean 1 over the pages (0 when all are 0).
    weight_scale: f64,
    per_unit: Vec<UnitRecord>,
    refreshed_pages: Vec<Vec<PageId>>,
    trec: Option<TrecExport>,
    delays: DelayTracker,
    /// The repository's lists as ranked at the previous unit: each unit re-ranks from them.
    rank_memory: RankMemory,
    displacement: Option<DisplacementTracker>,
    /// With [`RunConfig::bootstrap`]: per resample, the sum over judged units of the quality.
    resampled_sums: Option<Vec<f64>>,
}

/// What one unit's refreshes brought: how many changed, the ΔQ estimate, and the
/// ChangeRatio weighted by view weights and by PageRank (papers 000 and 002).
struct RefreshFigures {
    changed: usize,
    estimated_delta_q: f64,
    weighted: f64,
    pagerank_weighted: f64,
}

impl<'a, 'e> RunJudge<'a, 'e> {
    /// A judge with nothing recorded yet, for a run of `config` over `env`.
    fn new(env: &'a Environment<'e>, config: &'a RunConfig) -> Self {
        let units = env.units();
        let pages = env.corpus.page_count();
        let weight_scale = {
            let total: f64 = env.view_weight.iter().sum();
            if total > 0.0 {
                pages as f64 / total
            } else {
                0.0
            }
        };
        RunJudge {
            env,
            config,
            weight_scale,
            per_unit: Vec::with_capacity(units as usize),
            refreshed_pages: Vec::with_capacity(units as usize),
            trec: None,
            delays: DelayTracker::new(env.corpus, units),
            rank_memory: RankMemory::default(),
            displacement: config
                .displacement
                .then(|| DisplacementTracker::new(&env.workload.queries)),
            resampled_sums: config
                .bootstrap
                .then(|| vec![0.0; env.query_resamples().resamples()]),
        }
    }

    /// A warm-up unit: refreshed, not judged (the displacement tracker still learns what the
    /// hook measured, as a policy does).
    fn warm_up(&mut self, refresher: &mut Refresher<'_>, unit: Unit) -> Result<(), IndexError> {
        let step = refresher.step(unit)?;
        if let Some(tracker) = self.displacement.as_mut() {
            tracker.remember_measured(step.refresh_outcomes());
        }
        Ok(())
    }

    /// One judged unit: the refresher steps, then the judge reads the live Web for the
    /// unit's record (kept, and returned for progress reports).
    fn judged_unit(
        &mut self,
        refresher: &mut Refresher<'_>,
        unit: Unit,
    ) -> Result<&UnitRecord, IndexError> {
        let (env, config) = (self.env, self.config);
        let corpus = env.corpus;
        let pages = corpus.page_count();
        // Judged before the refreshes: which held copies are stale now.
        let truth = &env.truths[unit as usize];
        let stale = stale_copies(refresher.crawl(), truth, pages);
        let pagerank_weight = pagerank_weights(refresher.crawl());
        if let Some(tracker) = self.displacement.as_mut() {
            let crawl = refresher.crawl();
            tracker.before_step(
                (0..pages as PageId).map(|p| crawl.held(p).map(|h| Arc::clone(&h.version))),
            );
        }
        let step = refresher.step(unit)?;
        let figures = self.refresh_figures(&step, &pagerank_weight);
        // The ΔQ estimate refits before the next unit on this same repository: the
        // evaluation ranks its lists anyway and hands over what the fit reads.
        let refit_pieces = (unit + 1 < env.units())
            .then(|| refresher.measure_refits_from_query_lists(unit + 1))
            .flatten();
        let repo = refresher.repository();
        let revision = repo.revision();
        let crawl = refresher.crawl();
        self.measure_displacement(unit, repo, &step);
        // The version each copy holds now, read once (each read follows a pointer to the copy).
        let held: Vec<Option<Unit>> = crawl.held_units(pages).collect();
        let fresh = |p: PageId| truth.is_fresh(p, held[p as usize]);
        let (metrics, scores_at_ranks) = self.evaluate(unit, repo, &held, refit_pieces);
        if config.trec_unit == Some(unit) {
            self.trec = Some(trec_export(env, refresher, unit, config.budget));
        }
        let obsolete_pages = (0..pages as PageId)
            .filter(|&p| held[p as usize].is_some() && !fresh(p))
            .count();
        self.delays.after_unit(unit, crawl);
        let new_page_fetches = step
            .refresh_outcomes()
            .iter()
            .filter(|o| o.discovered)
            .count();
        let frontier_pages = crawl.frontier().map_or(0, |f| f.len());
        let chosen = step.refreshed;
        let n = chosen.len();
        let schedule_ndcg = ndcg(&chosen, &stale, config.budget);
        let relevance: Vec<bool> = chosen.iter().map(|&p| stale[p as usize]).collect();
        let stale_count = stale.iter().filter(|&&s| s).count();
        self.per_unit.push(UnitRecord {
            unit,
            search: metrics.search,
            ndcg_at_10: metrics.ndcg_at_10,
            p_at_10: metrics.p_at_10,
            refreshed: n,
            change_ratio: if n > 0 {
                figures.changed as f64 / n as f64
            } else {
                0.0
            },
            weighted_change_ratio: figures.weighted,
            pagerank_weighted_change_ratio: figures.pagerank_weighted,
            paper000: metrics.paper000,
            ndcg: schedule_ndcg,
            schedule_ndcg,
            obsolete_pages,
            estimated_delta_q: figures.estimated_delta_q,
            new_page_fetches,
            refresh_fetches: n - new_page_fetches,
            frontier_pages,
            change_rate: schedule_metrics::change_rate(figures.changed, config.budget),
            gp4c_ndcg: schedule_metrics::gp4c_ndcg(&relevance, stale_count, config.budget),
        });
        self.refreshed_pages.push(chosen);
        if let Some(lists) = scores_at_ranks {
            refresher.offer_scores_at_ranks(revision, lists);
        }
        Ok(self.per_unit.last().expect("just pushed"))
    }

    /// The changes the unit's refreshes found, their summed ΔQ estimate, and the ChangeRatio
    /// weighted by view weights (scaled to mean 1) and by PageRank (`pagerank_weight`).
    fn refresh_figures(&self, step: &StepReport, pagerank_weight: &[f64]) -> RefreshFigures {
        let (mut changed_count, mut estimated) = (0usize, 0.0);
        for o in step.refresh_outcomes() {
            changed_count += usize::from(o.changed);
            estimated += o.delta_q;
        }
        let weighted_by = |weight: &dyn Fn(PageId) -> f64| {
            schedule_metrics::weighted_change_ratio(
                step.refresh_outcomes()
                    .iter()
                    .map(|o| (o.changed, weight(o.page))),
            )
        };
        let weight_scale = self.weight_scale;
        let weighted = weighted_by(&|p| self.env.view_weight[p as usize] * weight_scale);
        let pagerank_weighted =
            weighted_by(&|p| pagerank_weight.get(p as usize).copied().unwrap_or(0.0));
        RefreshFigures {
            changed: changed_count,
            estimated_delta_q: estimated,
            weighted,
            pagerank_weighted,
        }
    }

    /// With `--displacement`: the true gain of each refresh of the unit's batch, measured
    /// against the live Web on the repository `repo` after the batch.
    fn measure_displacement(&mut self, unit: Unit, repo: &Repository, step: &StepReport) {
        let env = self.env;
        if let Some(tracker) = self.displacement.as_mut() {
            let judge = Judge {
                scorer: repo.scorer(),
                queries: &env.workload.queries,
                truth: &env.truths[unit as usize],
                likelihood: &env.config.likelihood,
            };
            tracker.measure(
                unit,
                env.corpus,
                repo.forward(),
                &judge,
                step.refresh_outcomes(),
            );
        }
    }

    /// The unit's exact metrics of the repository holding the versions `held`, evaluated
    /// here or taken from another run that evaluated the same state; with `refit_pieces`,
    /// also the queries' scores at the ranks the ΔQ estimate's next refit reads (ranked
    /// with the evaluation, or shared by the run that ranked them).
    fn evaluate(
        &mut self,
        unit: Unit,
        repo: &Repository,
        held: &[Option<Unit>],
        refit_pieces: Option<usize>,
    ) -> (UnitMetrics, Option<Arc<ScoresAtRanks>>) {
        let env = self.env;
        let rank_memory = &mut self.rank_memory;
        let truth = &env.truths[unit as usize];
        let fresh = |p: PageId| truth.is_fresh(p, held[p as usize]);
        let mut scores_at_ranks = None;
        let state = SharedEvaluations::key(unit, held.iter().copied());
        let mut evaluated_here = false;
        let bootstrap = self.resampled_sums.is_some();
        let evaluated = env.evaluations.get_or_evaluate(state, bootstrap, || {
            evaluated_here = true;
            let lists = EvaluatedLists {
                repository: repo.forward(),
                scorer: repo.scorer(),
                queries: &env.workload.queries,
            };
            let ranks = refit_pieces.map(|pieces| {
                move |len: usize| crate::quality::score_rank::ScoreRankFn::needed_ranks(len, pieces)
            });
            let evaluation = evaluate_and_rank(
                rank_memory,
                &lists,
                truth,
                &env.config.likelihood,
                &fresh,
                ranks.as_ref().map(|r| r as &RanksWanted),
            );
            scores_at_ranks = evaluation.at_ranks.map(Arc::new);
            Evaluated {
                metrics: evaluation.metrics,
                resampled: bootstrap.then(|| {
                    env.query_resamples()
                        .quality(&evaluation.query_credits, &env.resampled_ideals(unit))
                        .into()
                }),
            }
        });
        if let (Some(sums), Some(resampled)) = (&mut self.resampled_sums, &evaluated.resampled) {
            for (sum, q) in sums.iter_mut().zip(resampled.iter()) {
                *sum += q;
            }
        }
        let metrics = evaluated.metrics;
        if let (false, Some(pieces)) = (evaluated_here, refit_pieces) {
            // Another run evaluated this state: its refit lists are shared rather than ranked
            // again by this run's estimate.
            scores_at_ranks = Some(env.evaluations.query_lists(state, pieces, || {
                let lists: Vec<&[TermId]> = env
                    .workload
                    .queries
                    .iter()
                    .map(|q| q.terms.as_slice())
                    .collect();
                rank_memory.scores_at_ranks(repo.forward(), repo.scorer(), &lists, |len| {
                    crate::quality::score_rank::ScoreRankFn::needed_ranks(len, pieces)
                })
            }));
        }
        (metrics, scores_at_ranks)
    }

    /// The run's result from the units judged: means, the discovery delays, the exports.
    fn finish(self, refresher: &Refresher<'_>) -> RunResult {
        let (env, config, per_unit) = (self.env, self.config, self.per_unit);
        let last = per_unit.last().map_or(0, |r| r.unit);
        let discovery = discovery_delay(env, &self.delays, last);
        let mean = |f: &dyn Fn(&UnitRecord) -> f64| {
            if per_unit.is_empty() {
                0.0
            } else {
                per_unit.iter().map(f).sum::<f64>() / per_unit.len() as f64
            }
        };
        let paper = PaperMeasures::of_units(&per_unit);
        RunResult {
            policy: refresher.policy().name(),
            label: refresher.policy().label(),
            params: refresher.policy().settings(),
            budget: config.budget,
            mode: config.mode,
            scoring: env.config.scoring.name().to_string(),
            delta_q: env.config.delta_q,
            mean: SearchQuality::mean_of(&per_unit.iter().map(|r| r.search).collect::<Vec<_>>())
                .unwrap_or_default(),
            mean_ndcg_at_10: mean(&|r| r.ndcg_at_10),
            mean_p_at_10: mean(&|r| r.p_at_10),
            // Papers 000 and 002's means, computed where the server's live runs compute them
            // (0 for a run without units, as every mean here).
            mean_change_ratio: paper.mean_change_ratio.unwrap_or(0.0),
            mean_weighted_change_ratio: paper.mean_weighted_change_ratio.unwrap_or(0.0),
            mean_pagerank_weighted_change_ratio: paper
                .mean_pagerank_weighted_change_ratio
                .unwrap_or(0.0),
            mean_fresh_at_10_fixed_k: paper.mean_fresh_at_10_fixed_k.unwrap_or(0.0),
            mean_map_at_10_retrieved: paper.mean_map_at_10_retrieved.unwrap_or(0.0),
            mean_map_at_10_tau0: paper.mean_map_at_10_tau0.unwrap_or(0.0),
            mean_ndcg: mean(&|r| r.ndcg),
            mean_schedule_ndcg: mean(&|r| r.schedule_ndcg),
            mean_obsolete_pages: mean(&|r| r.obsolete_pages as f64),
            new_pages: config.new_pages,
            mean_new_page_fetches: mean(&|r| r.new_page_fetches as f64),
            mean_refresh_fetches: mean(&|r| r.refresh_fetches as f64),
            discovery,
            mean_change_rate: mean(&|r| r.change_rate),
            mean_gp4c_ndcg: mean(&|r| r.gp4c_ndcg),
            warmup_units: config.warmup_units,
            oracle_history: config.oracle_history.as_told_in(config.mode),
            signals: config.signals.labels(),
            resampled_quality: self.resampled_sums.map(|sums| {
                let units = per_unit.len().max(1) as f64;
                sums.into_iter().map(|s| s / units).collect()
            }),
            per_unit,
            refreshed_pages: self.refreshed_pages,
            trec: self.trec,
            displacement: self.displacement.map(DisplacementTracker::finish),
        }
    }
}

/// Per page, whether its held copy is stale under `truth` (a page not held is not stale):
/// the relevance of the schedule's NDCG, judged before the unit's refreshes.
fn stale_copies(crawl: &CrawlState, truth: &LiveTruth, pages: usize) -> Vec<bool> {
    (0..pages as PageId)
        .map(|p| {
            let held = crawl.held_unit(p);
            held.is_some() && !truth.is_fresh(p, held)
        })
        .collect()
}

/// Paper 002's weights: PageRank of the copies held when the policy chose, mean 1.
fn pagerank_weights(crawl: &CrawlState) -> Vec<f64> {
    // The graph's nodes are the held pages: counted without building the graph, which
    // a PageRank shared by another run does not need.
    let held = crawl.held_pages().count() as f64;
    crawl
        .knowledge()
        .pagerank()
        .iter()
        .map(|r| r * held)
        .collect()
}

/// The TREC files of `unit`: the repository's top 10, the live judgements and our measures.
fn trec_export(
    env: &Environment<'_>,
    refresher: &Refresher<'_>,
    unit: Unit,
    budget: usize,
) -> TrecExport {
    let corpus = env.corpus;
    let repo = refresher.repository();
    let live = LiveScores::at(corpus, unit, env.config.scoring);
    let tag = format!("{}-B{}", refresher.policy().name(), budget);
    TrecExport {
        run: trec::run_file(
            corpus,
            repo.forward(),
            repo.scorer(),
            &env.workload.queries,
            &tag,
        ),
        qrels: trec::qrels(corpus, &live, &env.workload.queries),
        evaluation: trec::evaluation(
            repo.forward(),
            repo.scorer(),
            &env.workload.queries,
            &env.truths[unit as usize],
            &tag,
        ),
    }
}

/// The run's discovery delays up to unit `last`, each new page weighed by its views on the
/// live Web at `last` (computed only when the run created pages; shared between runs).
fn discovery_delay(env: &Environment<'_>, delays: &DelayTracker, last: Unit) -> DiscoveryDelay {
    if delays.created.is_empty() {
        return DiscoveryDelay::default();
    }
    let corpus = env.corpus;
    let views = env.evaluations.live_view_weights(last, || {
        let live = LiveScores::at(corpus, last, env.config.scoring);
        crate::quality::viewing::view_weights_of(
            live.forward(),
            live.scorer(),
            corpus.page_count(),
            &env.workload.queries,
            &env.config.likelihood,
        )
    });
    delays.finish(last, &views)
}

/// The refresher of one run: the repository of the initial crawl (cloned from the
/// environment), the crawl state of its copies, the policy prepared with the environment's
/// context (the history in oracle mode only), a snapshot fetcher and a ΔQ measurement.
///
/// The repository keeps the postings of the environment's workload terms only
/// (`Environment::run_initial`): a refresher whose workload will change
/// ([`Refresher::set_workload`]) starts from [`refresher_for_changing_workload`].
pub fn refresher_for<'e>(
    env: &Environment<'e>,
    policy: Box<dyn RefreshPolicy>,
    config: &RunConfig,
) -> Refresher<'e> {
    refresher_over(env, env.run_initial.clone(), policy, config)
}

/// [`refresher_for`] over the full initial index: the refresher of a served engine, whose
/// workload grows with the queries users send.
pub fn refresher_for_changing_workload<'e>(
    env: &Environment<'e>,
    policy: Box<dyn RefreshPolicy>,
    config: &RunConfig,
) -> Refresher<'e> {
    refresher_over(env, env.initial.clone(), policy, config)
}

fn refresher_over<'e>(
    env: &Environment<'e>,
    initial: ForwardIndex,
    policy: Box<dyn RefreshPolicy>,
    config: &RunConfig,
) -> Refresher<'e> {
    let corpus = env.corpus;
    let units = env.units();
    let pages = corpus.page_count();
    let repo =
        Repository::forward_only_from(initial, Arc::clone(&corpus.vocabulary), env.config.scoring);
    let mut crawl = CrawlState::with_initial_crawl(
        pages,
        (0..pages as PageId)
            .filter_map(|p| corpus.timeline(p).shared_at(0).map(|v| (p, Arc::clone(v)))),
    );
    // Runs that hold the same copies after the same history compute the same PageRanks,
    // sketches, view weights and schedules: computed once, in the environment's cache.
    crawl.use_cache(Arc::clone(&env.cache));
    let initial = env.initial_pages();
    let measure = if config.measure_unread_delta_q || policy.reads().delta_q {
        measurement(
            &repo,
            &env.workload,
            Some(&env.truths),
            &env.config,
            config.refit_every,
        )
    } else {
        Box::new(NoMeasure::new(Arc::clone(&env.workload)))
    };
    Refresher::new(
        repo,
        crawl,
        policy,
        Box::new(
            SnapshotFetcher::new(corpus)
                .with_signals(env.published_signals(&config.signals, config.seed)),
        ),
        measure,
        config.plan(units.saturating_sub(1), env.config.likelihood),
        &StartingPoint {
            initial_pages: &initial,
            view_weight: &env.view_weight,
            history: Some(&env.history),
        },
    )
}

/// NDCG@k of a schedule (paper 001 Eq. 2–3) with binary relevance `stale[p]`.
///
/// Paper 001 prints `DCG@k = Σ rel_i / log_e(i)`, which divides by zero at i = 1; we use
/// Järvelin & Kekäläinen's original form it cites: positions `i < b` are not discounted and
/// positions `i ≥ b` are divided by `log_b(i)`, with `b = e`. The ideal DCG puts every stale
/// page first. 1 when no page is stale (nothing to find) — 0 if the schedule is empty while
/// some are.
pub fn ndcg(schedule: &[PageId], stale: &[bool], k: usize) -> f64 {
    let discount = |i: usize| {
        let i = i as f64;
        if i < std::f64::consts::E {
            1.0
        } else {
            i.ln()
        }
    };
    let dcg: f64 = schedule
        .iter()
        .take(k)
        .enumerate()
        .filter(|(_, &p)| stale[p as usize])
        .map(|(i, _)| 1.0 / discount(i + 1))
        .sum();
    let relevant = stale.iter().filter(|&&s| s).count().min(k);
    if relevant == 0 {
        return 1.0;
    }
    let ideal: f64 = (1..=relevant).map(|i| 1.0 / discount(i)).sum();
    dcg / ideal
}

/// The measures of papers 000 and 002 over a run's units (means), when it reported them:
/// ChangeRatio, weighted by view weights and by PageRank (paper 002 Eq. 10–11), and paper 000's
/// top-k freshness and MAP@10 variants (Eq. 8–9, see [`crate::judge::exact`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PaperMeasures {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_change_ratio: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_weighted_change_ratio: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_pagerank_weighted_change_ratio: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_fresh_at_10_fixed_k: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_map_at_10_retrieved: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_map_at_10_tau0: Option<f64>,
}

impl PaperMeasures {
    /// A finished run's means, read from its result (`None` for a run without units).
    pub fn of_run(run: &RunResult) -> Self {
        if run.per_unit.is_empty() {
            return PaperMeasures::default();
        }
        PaperMeasures {
            mean_change_ratio: Some(run.mean_change_ratio),
            mean_weighted_change_ratio: Some(run.mean_weighted_change_ratio),
            mean_pagerank_weighted_change_ratio: Some(run.mean_pagerank_weighted_change_ratio),
            mean_fresh_at_10_fixed_k: Some(run.mean_fresh_at_10_fixed_k),
            mean_map_at_10_retrieved: Some(run.mean_map_at_10_retrieved),
            mean_map_at_10_tau0: Some(run.mean_map_at_10_tau0),
        }
    }

    /// The means over `units` (all `None` for no unit): the one computation behind
    /// [`RunResult`]'s `mean_*` fields and the server's live runs.
    pub fn of_units(units: &[UnitRecord]) -> Self {
        if units.is_empty() {
            return PaperMeasures::default();
        }
        let n = units.len() as f64;
        let mean = |f: fn(&UnitRecord) -> f64| Some(units.iter().map(f).sum::<f64>() / n);
        PaperMeasures {
            mean_change_ratio: mean(|r| r.change_ratio),
            mean_weighted_change_ratio: mean(|r| r.weighted_change_ratio),
            mean_pagerank_weighted_change_ratio: mean(|r| r.pagerank_weighted_change_ratio),
            mean_fresh_at_10_fixed_k: mean(|r| r.paper000.fresh_at_10_fixed_k),
            mean_map_at_10_retrieved: mean(|r| r.paper000.map_at_10_retrieved),
            mean_map_at_10_tau0: mean(|r| r.paper000.map_at_10_tau0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ndcg_by_hand() {
        let stale = [true, false, true, false];
        // Schedule [1, 0, 2]: relevant at positions 2 and 3 → 1/1 + 1/ln 3.
        let dcg = 1.0 + 1.0 / 3f64.ln();
        let ideal = 1.0 + 1.0; // two relevant, positions 1 and 2 undiscounted
        assert!((ndcg(&[1, 0, 2], &stale, 3) - dcg / ideal).abs() < 1e-12);
        assert_eq!(ndcg(&[0, 2], &stale, 2), 1.0);
        assert_eq!(ndcg(&[], &stale, 2), 0.0);
        assert_eq!(ndcg(&[1], &[false, false], 1), 1.0);
    }
}

#[cfg(test)]
mod sim_tests {
    use super::*;
    use crate::index::testutil::random_corpus;
    use crate::index::ScoringKind;
    use crate::judge::exact::MetricQuery;
    use crate::policy::PolicyContext;
    use crate::policy::RefreshOutcome;
    use crate::querylog::term_workload::TermWorkload;
    use crate::sim::{Environment, EnvironmentConfig};

    /// Refreshes the pages with the lowest ids that it has not refreshed most recently.
    struct Cycle {
        next: u32,
        pages: u32,
    }

    impl RefreshPolicy for Cycle {
        fn name(&self) -> String {
            "cycle".into()
        }
        fn prepare(&mut self, context: &PolicyContext<'_>) {
            self.pages = context.page_count as u32;
        }
        fn choose(&mut self, _unit: Unit, budget: usize, _crawl: &CrawlState) -> Vec<PageId> {
            (0..budget)
                .map(|_| {
                    let p = self.next;
                    self.next = (self.next + 1) % self.pages;
                    p
                })
                .collect()
        }
        fn observe(&mut self, _outcomes: &[RefreshOutcome]) {}
    }

    fn environment(corpus: &crate::corpus::Corpus) -> Environment<'_> {
        let mut workload = TermWorkload::default();
        for (i, t) in ["emac", "buffer", "lisp", "window", "org", "mode"]
            .iter()
            .enumerate()
        {
            if let Some(id) = corpus.vocabulary.get(t) {
                workload.term_frequency.insert(id, 10.0 - i as f64);
                workload.queries.push(MetricQuery {
                    terms: vec![id],
                    frequency: 10.0 - i as f64,
                });
            }
        }
        Environment::new(
            corpus,
            workload,
            EnvironmentConfig {
                scoring: ScoringKind::Bm25,
                ..Default::default()
            },
        )
        .unwrap()
    }

    #[test]
    fn refreshing_everything_keeps_the_repository_perfect() {
        let corpus = random_corpus(40, 6, 11);
        let env = environment(&corpus);
        let policy = Box::new(Cycle { next: 0, pages: 0 });
        let result = run(&env, policy, &RunConfig::new(40, FitMode::Online)).unwrap();
        assert_eq!(result.per_unit.len(), 5);
        for r in &result.per_unit {
            assert!(
                (r.search.quality - 1.0).abs() < 1e-9,
                "unit {}: {}",
                r.unit,
                r.search.quality
            );
            assert_eq!(r.obsolete_pages, 0);
            assert_eq!(r.search.fresh_at_10, 1.0);
        }
    }

    #[test]
    fn no_budget_lets_quality_decay_and_is_deterministic() {
        let corpus = random_corpus(60, 8, 5);
        let env = environment(&corpus);
        let a = run(
            &env,
            Box::new(Cycle { next: 0, pages: 0 }),
            &RunConfig::new(0, FitMode::Online),
        )
        .unwrap();
        assert!(a
            .per_unit
            .iter()
            .any(|r| r.search.quality < 1.0 && r.obsolete_pages > 0));
        let b = run(
            &env,
            Box::new(Cycle { next: 0, pages: 0 }),
            &RunConfig::new(0, FitMode::Online),
        )
        .unwrap();
        assert_eq!(a.per_unit, b.per_unit);
        let some = run(
            &env,
            Box::new(Cycle { next: 0, pages: 0 }),
            &RunConfig::new(20, FitMode::Online),
        )
        .unwrap();
        assert!(some.mean.quality >= a.mean.quality);
    }

    #[test]
    fn runs_meeting_known_states_estimate_as_a_run_alone() {
        let corpus = random_corpus(60, 8, 5);
        let config = RunConfig::new(12, FitMode::Online);
        let cycle = || Box::new(Cycle { next: 0, pages: 0 });
        let alone = run(&environment(&corpus), cycle(), &config).unwrap();
        assert!(alone.per_unit.iter().any(|r| r.estimated_delta_q != 0.0));
        // The second run meets every state again and ranks the refit lists it shares; the
        // third fits from the shared lists.
        let env = environment(&corpus);
        for _ in 0..3 {
            assert_eq!(
                run(&env, cycle(), &config).unwrap().per_unit,
                alone.per_unit
            );
        }
        assert!(env.evaluations.shared_query_lists() > 0);
    }

    #[test]
    fn the_oracle_history_measures_every_change() {
        let corpus = random_corpus(30, 6, 2);
        let env = environment(&corpus);
        let changes: usize = env.history.pages.iter().map(|h| h.change_units.len()).sum();
        assert!(changes > 0);
        for h in &env.history.pages {
            assert_eq!(h.delta_q.len(), h.change_units.len());
            assert_eq!(h.shingle_changes.len(), h.change_units.len());
        }
        assert!(env
            .history
            .pages
            .iter()
            .flat_map(|h| &h.delta_q)
            .any(|&d| d != 0.0));
    }
}

#[cfg(test)]
mod online_tests {
    use super::*;
    use crate::index::testutil::random_corpus;
    use crate::judge::exact::MetricQuery;
    use crate::policy::family::ParamValue;
    use crate::policy::registry::FAMILIES;
    use crate::policy::PolicyContext;
    use crate::policy::RefreshOutcome;
    use crate::querylog::term_workload::TermWorkload;
    use crate::sim::{Environment, EnvironmentConfig};
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A budget above the pages there are is the run's error, named, before any unit runs.
    #[test]
    fn a_budget_above_the_page_count_is_refused_by_the_run() {
        let corpus = random_corpus(20, 3, 5);
        let env = Environment::new(
            &corpus,
            TermWorkload::default(),
            EnvironmentConfig::default(),
        )
        .unwrap();
        let policy = crate::policy::registry::family("round-robin")
            .unwrap()
            .make([])
            .unwrap();
        let err = run(&env, policy, &RunConfig::new(21, FitMode::Online)).unwrap_err();
        assert!(
            matches!(
                err,
                RunError::Budget {
                    budget: 21,
                    pages: 20
                }
            ),
            "{err}"
        );
        assert_eq!(
            err.to_string(),
            "budget 21 exceeds the 20 pages of the corpus"
        );
    }

    /// Wraps a policy and fails the test if, in online mode, it is offered anything beyond
    /// what it fetched: the history, or an outcome of a page it did not choose at that unit.
    struct Guard {
        inner: Box<dyn RefreshPolicy>,
        mode: Option<FitMode>,
        chosen: Vec<PageId>,
        unit: Unit,
        /// Outcomes offered to the policy, counted where the test reads them after the run
        /// (the run owns the guard).
        observed: Arc<AtomicUsize>,
        /// The delay of the site's change signals, when it publishes any: no date or feed item
        /// the crawl state offers at unit `t` may be later than `t − delay`.
        signal_delay: Option<Unit>,
    }

    impl RefreshPolicy for Guard {
        fn name(&self) -> String {
            self.inner.name()
        }
        fn prepare(&mut self, context: &PolicyContext<'_>) {
            self.mode = Some(context.mode);
            if context.mode == FitMode::Online {
                assert!(
                    context.history.is_none(),
                    "online policy offered the history"
                );
            }
            self.inner.prepare(context);
        }
        fn settings(&self) -> serde_json::Map<String, serde_json::Value> {
            self.inner.settings()
        }
        fn choose(&mut self, unit: Unit, budget: usize, crawl: &CrawlState) -> Vec<PageId> {
            self.unit = unit;
            if let Some(delay) = self.signal_delay {
                assert!(crawl.reads_signals(), "the site's signals were not read");
                for p in 0..crawl.len() as PageId {
                    let s = crawl.signal(p).expect("signals read");
                    let latest = s.lastmod.into_iter().chain(s.feed).max();
                    assert!(
                        latest.is_none_or(|u| u + delay <= unit),
                        "page {p}'s signal at unit {unit} shows unit {latest:?} (delay {delay})"
                    );
                }
            }
            self.chosen = self.inner.choose(unit, budget, crawl);
            self.chosen.clone()
        }
        fn observe(&mut self, outcomes: &[RefreshOutcome]) {
            for o in outcomes {
                assert_eq!(o.unit, self.unit, "outcome of another unit");
                assert!(
                    o.discovered || self.chosen.contains(&o.page),
                    "outcome of page {} it did not fetch",
                    o.page
                );
            }
            self.observed.fetch_add(outcomes.len(), Ordering::Relaxed);
            self.inner.observe(outcomes);
        }
    }

    /// Every value a family's parameter can take that a test can name: each word of a choice;
    /// for a number, its range's ends and its sweep grid. Free text (file paths) is left out.
    fn parameter_values(
        family: &crate::policy::family::PolicyFamily,
    ) -> Vec<Vec<(&'static str, ParamValue)>> {
        use crate::policy::family::ParamKind;
        let mut values = vec![Vec::new()];
        for p in family.params {
            let of_kind: Vec<ParamValue> = match p.kind {
                ParamKind::Choice(words) => words
                    .iter()
                    .map(|w| ParamValue::Text(w.to_string()))
                    .collect(),
                ParamKind::Number { min, max, .. } => [min, max]
                    .into_iter()
                    .chain(p.sweep.iter().copied())
                    .map(ParamValue::Number)
                    .collect(),
                ParamKind::Text => Vec::new(),
            };
            values.extend(of_kind.into_iter().map(|v| vec![(p.key, v)]));
        }
        values
    }

    #[test]
    fn online_policies_learn_only_from_what_they_fetched() {
        let corpus = random_corpus(50, 7, 21);
        let env = crate::sim::three_term_environment(&corpus, 3.0);
        let (mut checked, mut refused) = (0, 0);
        for family in FAMILIES {
            for params in parameter_values(family) {
                // Every value is in its parameter's range, so a refusal is another
                // parameter's default ruling it out (webfountain's `eps` against `periods`):
                // not a policy. Such pairs are few.
                let Ok(inner) = family.make(params.clone()) else {
                    refused += 1;
                    continue;
                };
                let observed = Arc::new(AtomicUsize::new(0));
                let guard = Guard {
                    inner,
                    mode: None,
                    chosen: Vec::new(),
                    unit: 0,
                    observed: Arc::clone(&observed),
                    signal_delay: None,
                };
                let result = run(&env, Box::new(guard), &RunConfig::new(5, FitMode::Online));
                let result = result.unwrap_or_else(|e| panic!("{} {params:?}: {e}", family.name));
                let refreshed: usize = result.per_unit.iter().map(|r| r.refreshed).sum();
                assert!(
                    refreshed > 0,
                    "{} {params:?} refreshed nothing",
                    family.name
                );
                // The guard's checks ran: the policy was offered outcomes (at least one per
                // refresh), each checked against what it fetched.
                let observed = observed.load(Ordering::Relaxed);
                assert!(
                    observed >= refreshed,
                    "{} {params:?}: {observed} outcomes observed, {refreshed} refreshed",
                    family.name
                );
                checked += 1;
            }
        }
        // Every family at its defaults and at least one other value of most parameters.
        assert!(checked > 2 * FAMILIES.len(), "{checked} policies checked");
        assert!(
            refused * 20 < checked,
            "{refused} refused, {checked} checked"
        );
        for family in FAMILIES {
            for mode in [FitMode::Online, FitMode::Oracle] {
                let observed = Arc::new(AtomicUsize::new(0));
                let guard = Guard {
                    inner: family.make([]).unwrap(),
                    mode: None,
                    chosen: Vec::new(),
                    unit: 0,
                    observed: Arc::clone(&observed),
                    signal_delay: None,
                };
                let result = run(&env, Box::new(guard), &RunConfig::new(5, mode)).unwrap();
                let refreshed: usize = result.per_unit.iter().map(|r| r.refreshed).sum();
                assert!(refreshed > 0, "{} refreshed nothing", family.name);
                let observed = observed.load(Ordering::Relaxed);
                assert!(
                    observed > 0,
                    "{} {mode:?}: no outcome observed, so the guard checked nothing",
                    family.name
                );
            }
        }
    }

    #[test]
    fn online_policies_read_no_signal_before_its_delay() {
        let corpus = random_corpus(50, 7, 21);
        let env = crate::sim::three_term_environment(&corpus, 3.0);
        let settings = crate::signal::SignalSettings::parse(&[
            "lastmod:coverage=0.7,recall=0.8,false-positive=0.1,delay=1",
            "feed:items=3,delay=1",
        ])
        .unwrap();
        let mut checked = 0;
        for family in FAMILIES {
            for params in parameter_values(family) {
                let Ok(inner) = family.make(params.clone()) else {
                    continue;
                };
                let observed = Arc::new(AtomicUsize::new(0));
                let guard = Guard {
                    inner,
                    mode: None,
                    chosen: Vec::new(),
                    unit: 0,
                    observed: Arc::clone(&observed),
                    signal_delay: Some(1),
                };
                let config = RunConfig {
                    signals: settings.clone(),
                    seed: 4,
                    ..RunConfig::new(5, FitMode::Online)
                };
                let result = run(&env, Box::new(guard), &config)
                    .unwrap_or_else(|e| panic!("{} {params:?}: {e}", family.name));
                assert_eq!(result.signals, settings.labels());
                let refreshed: usize = result.per_unit.iter().map(|r| r.refreshed).sum();
                assert!(
                    refreshed > 0,
                    "{} {params:?} refreshed nothing",
                    family.name
                );
                checked += 1;
            }
        }
        assert!(checked > 2 * FAMILIES.len(), "{checked} policies checked");
    }

    /// LambdaCrawl's complete observations (pages whose signals the run trusts, crawled after
    /// their reported changes) under the guard: nothing beyond what it fetched and the signals
    /// as of their delay, and the path taken (crawls sent by reported changes).
    #[test]
    fn lambdacrawl_observes_trusted_pages_completely_without_peeking() {
        let corpus = random_corpus(120, 30, 5);
        let env = crate::sim::three_term_environment(&corpus, 3.0);
        let guarded_with = |complete: &str, spec: &str, delay: Unit, seed: u64| {
            let config = RunConfig {
                signals: crate::signal::SignalSettings::parse(&[spec]).unwrap(),
                seed,
                ..RunConfig::new(8, FitMode::Online)
            };
            let param = (
                "complete_observations",
                crate::policy::ParamValue::Text(complete.into()),
            );
            let guard = Guard {
                inner: crate::policy::family("lambdacrawl")
                    .unwrap()
                    .make([param])
                    .unwrap(),
                mode: None,
                chosen: Vec::new(),
                unit: 0,
                observed: Arc::new(AtomicUsize::new(0)),
                signal_delay: Some(delay),
            };
            run(&env, Box::new(guard), &config).unwrap()
        };
        let guarded = |spec: &str, delay: Unit, seed: u64| guarded_with("on", spec, delay, seed);
        for (spec, delay) in [
            ("lastmod", 0),
            (
                "lastmod:coverage=0.6,recall=0.8,false-positive=0.2,delay=1",
                1,
            ),
            ("feed:items=5,delay=1", 1),
        ] {
            // By default the planner's signal slots: the complete path is never taken.
            let slots = guarded_with("off", spec, delay, 3);
            assert!(slots.params.get("completely_observed").is_none(), "{spec}");
            let r = guarded(spec, delay, 3);
            assert_ne!(r.refreshed_pages, slots.refreshed_pages, "{spec}");
            let complete = &r.params["completely_observed"];
            assert!(
                complete["crawls_after_reports"].as_u64().unwrap() > 0,
                "{spec}: {complete}"
            );
            // Deterministic: the draws are keyed by the seed, page and unit.
            assert_eq!(guarded(spec, delay, 3).refreshed_pages, r.refreshed_pages);
        }
    }

    #[test]
    fn accurate_signals_are_trusted_online_and_ignored_by_an_oracle() {
        let corpus = random_corpus(200, 10, 3);
        let env = crate::sim::three_term_environment(&corpus, 3.0);
        let make = |name: &str| crate::policy::family(name).unwrap().make([]).unwrap();
        let blind: Vec<RunResult> = ["sbr", "ebr", "user-centric"]
            .iter()
            .map(|f| run(&env, make(f), &RunConfig::new(10, FitMode::Online)).unwrap())
            .collect();
        let oracle_blind = run(&env, make("ebr"), &RunConfig::new(10, FitMode::Oracle)).unwrap();
        let signalled = |mode| RunConfig {
            signals: crate::signal::SignalSettings::parse(&["lastmod"]).unwrap(),
            ..RunConfig::new(10, mode)
        };
        for (f, blind) in ["sbr", "ebr", "user-centric"].iter().zip(&blind) {
            let told = run(&env, make(f), &signalled(FitMode::Online)).unwrap();
            let trust = &told.params["signal_trust"]["lastmod"];
            assert!(trust["recall"].as_f64().unwrap() > 0.9, "{f}: {trust}");
            assert!(
                trust["false_alarm_rate"].as_f64().unwrap() < 0.1,
                "{f}: {trust}"
            );
            // Told which pages changed, the refreshes find changes more often.
            assert!(
                told.mean_change_ratio > blind.mean_change_ratio,
                "{f}: {} with signals, {} without",
                told.mean_change_ratio,
                blind.mean_change_ratio
            );
            assert!(told.mean.quality >= blind.mean.quality, "{f}");
        }
        let oracle = run(&env, make("ebr"), &signalled(FitMode::Oracle)).unwrap();
        assert_eq!(oracle.refreshed_pages, oracle_blind.refreshed_pages);
    }

    #[test]
    fn a_family_that_does_not_read_delta_q_runs_the_same_without_its_measurement() {
        let corpus = random_corpus(50, 7, 21);
        let env = crate::sim::three_term_environment(&corpus, 3.0);
        let without_estimates = |r: &RunResult| -> Vec<UnitRecord> {
            let mut units = r.per_unit.clone();
            units.iter_mut().for_each(|u| u.estimated_delta_q = 0.0);
            units
        };
        for family in FAMILIES {
            let reads = family.make([]).unwrap().reads().delta_q;
            for mode in [FitMode::Online, FitMode::Oracle] {
                let measured = RunConfig::new(5, mode);
                let unmeasured = RunConfig {
                    measure_unread_delta_q: false,
                    ..measured.clone()
                };
                let a = run(&env, family.make([]).unwrap(), &measured).unwrap();
                let b = run(&env, family.make([]).unwrap(), &unmeasured).unwrap();
                let name = family.name;
                assert!(
                    a.per_unit.iter().any(|u| u.estimated_delta_q != 0.0),
                    "{name}: the measured run estimated nothing, so the check would be empty"
                );
                assert_eq!(a.refreshed_pages, b.refreshed_pages, "{name} {mode:?}");
                if reads {
                    assert_eq!(a.per_unit, b.per_unit, "{name} {mode:?}");
                } else {
                    assert!(b.per_unit.iter().all(|u| u.estimated_delta_q == 0.0));
                    assert_eq!(
                        without_estimates(&a),
                        without_estimates(&b),
                        "{name} {mode:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_family_that_does_not_read_the_fit_mode_runs_the_same_in_both_modes() {
        let corpus = random_corpus(50, 7, 21);
        let env = crate::sim::three_term_environment(&corpus, 3.0);
        let mut mode_free = Vec::new();
        for family in FAMILIES {
            if family.make([]).unwrap().reads().fit_mode {
                continue;
            }
            mode_free.push(family.name);
            for budget in [3, 50] {
                let oracle = RunConfig::new(budget, FitMode::Oracle);
                let online = RunConfig::new(budget, FitMode::Online);
                let a = run(&env, family.make([]).unwrap(), &oracle).unwrap();
                let b = run(&env, family.make([]).unwrap(), &online).unwrap();
                let name = family.name;
                assert!(a.per_unit.iter().any(|u| u.refreshed > 0), "{name}");
                assert_eq!(a.refreshed_pages, b.refreshed_pages, "{name} B = {budget}");
                assert_eq!(a.per_unit, b.per_unit, "{name} B = {budget}");
                assert_eq!(a.mean, b.mean, "{name} B = {budget}");
            }
        }
        assert_eq!(mode_free, ["round-robin", "random", "age"]);
    }

    #[test]
    fn a_family_that_does_not_read_the_seed_runs_the_same_with_any_seed() {
        let corpus = random_corpus(50, 7, 21);
        let env = crate::sim::three_term_environment(&corpus, 3.0);
        let runs = |family: &&crate::policy::family::PolicyFamily, budget| {
            [1, 2].map(|seed| {
                let mut config = RunConfig::new(budget, FitMode::Online);
                config.seed = seed;
                run(&env, family.make([]).unwrap(), &config).unwrap()
            })
        };
        let mut seeded = Vec::new();
        for family in FAMILIES {
            if family.make([]).unwrap().reads().seed {
                seeded.push(family.name);
                continue;
            }
            for budget in [3, 20] {
                let [a, b] = runs(family, budget);
                let name = family.name;
                assert_eq!(a.refreshed_pages, b.refreshed_pages, "{name} B = {budget}");
                assert_eq!(a.per_unit, b.per_unit, "{name} B = {budget}");
            }
        }
        // The flag means something: random draws other pages under another seed.
        let random = FAMILIES.iter().find(|f| f.name == "random").unwrap();
        let [a, b] = runs(random, 3);
        assert_ne!(a.refreshed_pages, b.refreshed_pages);
        assert!(seeded.contains(&"random"), "{seeded:?}");
    }

    /// Runs start from an index keeping the workload's postings only; they must run exactly
    /// as over the full index, every family, both modes, single- and two-term queries.
    #[test]
    fn runs_keeping_the_workload_postings_only_run_as_over_the_full_index() {
        let corpus = random_corpus(50, 7, 21);
        let environment = || {
            let mut workload = TermWorkload::default();
            let id = |t: &str| corpus.vocabulary.get(t).unwrap();
            for (terms, f) in [(vec!["emac"], 3.0), (vec!["lisp", "buffer"], 2.0)] {
                let terms: Vec<TermId> = terms.iter().map(|&t| id(t)).collect();
                for &t in &terms {
                    *workload.term_frequency.entry(t).or_insert(0.0) += f;
                }
                workload.queries.push(MetricQuery {
                    terms,
                    frequency: f,
                });
            }
            Environment::new(&corpus, workload, EnvironmentConfig::default()).unwrap()
        };
        let kept = environment();
        let mut full = environment();
        full.run_initial = full.initial.clone();
        assert!(kept.run_initial.memory_bytes() < full.run_initial.memory_bytes());
        for family in FAMILIES {
            for mode in [FitMode::Oracle, FitMode::Online] {
                for budget in [3, 50] {
                    let config = RunConfig::new(budget, mode);
                    let a = run(&kept, family.make([]).unwrap(), &config).unwrap();
                    let b = run(&full, family.make([]).unwrap(), &config).unwrap();
                    let name = family.name;
                    assert_eq!(
                        a.refreshed_pages, b.refreshed_pages,
                        "{name} {mode:?} {budget}"
                    );
                    assert_eq!(a.per_unit, b.per_unit, "{name} {mode:?} B = {budget}");
                    assert_eq!(a.mean, b.mean, "{name} {mode:?} B = {budget}");
                }
            }
        }
    }

    /// A refresher over the kept postings refuses a workload reading other terms (a served
    /// engine starts from the full index instead).
    #[test]
    fn a_refresher_keeping_the_workload_postings_refuses_another_workload() {
        let corpus = random_corpus(30, 4, 8);
        let env = crate::sim::three_term_environment(&corpus, 3.0);
        let config = RunConfig::new(3, FitMode::Online);
        let other = corpus.vocabulary.get("window").unwrap();
        let mut workload = (*env.workload).clone();
        workload.term_frequency.insert(other, 1.0);
        let workload = Arc::new(workload);
        let measure = || Box::new(NoMeasure::new(Arc::clone(&workload)));
        let family = FAMILIES[0];
        let mut served = refresher_for_changing_workload(&env, family.make([]).unwrap(), &config);
        served.set_workload(measure());
        served.step(1).unwrap();
        let mut kept = refresher_for(&env, family.make([]).unwrap(), &config);
        let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            kept.set_workload(measure())
        }));
        let message = refused.expect_err("the new term's postings were dropped");
        let message = message.downcast_ref::<String>().unwrap();
        assert!(message.contains(&format!("term {other}")), "{message}");
    }

    #[test]
    fn with_no_budget_every_family_makes_the_same_run() {
        let corpus = random_corpus(50, 7, 21);
        let env = crate::sim::three_term_environment(&corpus, 3.0);
        let config = RunConfig {
            measure_unread_delta_q: false,
            ..RunConfig::new(0, FitMode::Oracle)
        };
        let reference = run(&env, FAMILIES[0].make([]).unwrap(), &config).unwrap();
        assert!(reference.per_unit.iter().all(|u| u.refreshed == 0));
        for family in FAMILIES {
            for mode in [FitMode::Oracle, FitMode::Online] {
                let config = RunConfig {
                    mode,
                    ..config.clone()
                };
                let r = run(&env, family.make([]).unwrap(), &config).unwrap();
                let without_estimates = |r: &RunResult| -> Vec<UnitRecord> {
                    let mut units = r.per_unit.clone();
                    units.iter_mut().for_each(|u| u.estimated_delta_q = 0.0);
                    units
                };
                assert_eq!(
                    without_estimates(&r),
                    without_estimates(&reference),
                    "{} {mode:?}",
                    family.name
                );
                assert_eq!(r.mean, reference.mean, "{} {mode:?}", family.name);
            }
        }
    }

    /// The units of a history and each page's change units.
    type ToldHistory = Option<(Unit, Vec<Vec<Unit>>)>;

    /// Records the change units of the history an oracle-mode policy is told.
    struct Told {
        inner: Box<dyn RefreshPolicy>,
        told: std::sync::Arc<std::sync::Mutex<ToldHistory>>,
    }

    impl RefreshPolicy for Told {
        fn name(&self) -> String {
            self.inner.name()
        }
        fn prepare(&mut self, context: &PolicyContext<'_>) {
            *self.told.lock().unwrap() = context.history.map(|h| {
                let units = h.pages.iter().map(|p| p.change_units.clone()).collect();
                (h.units, units)
            });
            self.inner.prepare(context);
        }
        fn choose(&mut self, unit: Unit, budget: usize, crawl: &CrawlState) -> Vec<PageId> {
            self.inner.choose(unit, budget, crawl)
        }
        fn observe(&mut self, outcomes: &[RefreshOutcome]) {
            self.inner.observe(outcomes);
        }
        fn choose_with_frontier(
            &mut self,
            unit: Unit,
            budget: usize,
            crawl: &CrawlState,
        ) -> Vec<PageId> {
            self.inner.choose_with_frontier(unit, budget, crawl)
        }
        fn reads(&self) -> crate::policy::Reads {
            self.inner.reads()
        }
        fn rounds(&mut self) -> Option<&mut dyn crate::policy::RoundPolicy> {
            self.inner.rounds()
        }
        fn wants_views(&self, unit: Unit) -> bool {
            self.inner.wants_views(unit)
        }
        fn observe_views(&mut self, view_weight: &[f64]) {
            self.inner.observe_views(view_weight);
        }
    }

    #[test]
    fn an_oracle_told_the_warm_up_learns_as_online_mode_with_that_warm_up() {
        let corpus = random_corpus(50, 7, 21);
        let mut workload = TermWorkload::default();
        let id = corpus.vocabulary.get("emac").unwrap();
        workload.queries.push(MetricQuery {
            terms: vec![id],
            frequency: 1.0,
        });
        let env = Environment::new(&corpus, workload, EnvironmentConfig::default()).unwrap();
        let warmup = 3;
        let later: usize = env
            .history
            .pages
            .iter()
            .map(|p| p.change_units.iter().filter(|&&u| u > warmup).count())
            .sum();
        assert!(later > 0, "the corpus changes after the warm-up");
        let told_run = |family: &str, mode, history| {
            let told = std::sync::Arc::new(std::sync::Mutex::new(None));
            let policy = Told {
                inner: crate::policy::registry::family(family)
                    .unwrap()
                    .make([])
                    .unwrap(),
                told: std::sync::Arc::clone(&told),
            };
            let mut config = RunConfig::new(4, mode);
            config.warmup_units = warmup;
            config.oracle_history = history;
            let result = run(&env, Box::new(policy), &config).unwrap();
            let told = told.lock().unwrap().take();
            (result, told)
        };
        let mut families_learning_after_the_warm_up = 0;
        for family in crate::policy::registry::FAMILIES {
            let (cut, told) = told_run(family.name, FitMode::Oracle, OracleHistory::WarmUp);
            assert_eq!(cut.oracle_history, OracleHistory::WarmUp);
            assert!(
                told.is_none(),
                "{}: the warm-up itself shows the cut",
                family.name
            );
            let (online, _) = told_run(family.name, FitMode::Online, OracleHistory::All);
            assert_eq!(
                cut.refreshed_pages, online.refreshed_pages,
                "{}",
                family.name
            );
            assert_eq!(cut.mean, online.mean, "{}", family.name);
            // Told the whole history, it is the oracle.
            let (all, told) = told_run(family.name, FitMode::Oracle, OracleHistory::All);
            let (units, changes) = told.expect("the oracle is told the history");
            assert_eq!(units, env.history.units);
            assert!(changes
                .iter()
                .zip(&env.history.pages)
                .all(|(c, p)| c == &p.change_units));
            let mut plain = RunConfig::new(4, FitMode::Oracle);
            plain.warmup_units = warmup;
            let oracle = run(&env, family.make([]).unwrap(), &plain).unwrap();
            assert_eq!(
                all.refreshed_pages, oracle.refreshed_pages,
                "{}",
                family.name
            );
            families_learning_after_the_warm_up +=
                usize::from(cut.refreshed_pages.iter().any(|u| !u.is_empty()));
        }
        assert!(families_learning_after_the_warm_up > 10);
        // The CLI and the server refuse the cut where it means nothing.
        let names = ("--oracle-history", "--warmup-units");
        assert!(check_oracle_history(names, OracleHistory::WarmUp, FitMode::Online, 3).is_err());
        let err = check_oracle_history(names, OracleHistory::WarmUp, FitMode::Oracle, 0);
        assert!(err.unwrap_err().to_string().contains("--warmup-units"));
        assert!(check_oracle_history(names, OracleHistory::All, FitMode::Online, 0).is_ok());
    }
}
