//! Side-by-side comparison of refresh policies (paper 003 Fig. 4): sweep the budget `B` (and the
//! shingle threshold θ of SBR/EBR), then read off the budget each policy needs to reach a
//! target repository quality.

use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use std::collections::BTreeMap;

use crate::cache::CacheKey;
use crate::index::IndexError;
use crate::policy::family::{expand_sweep, GridDefault, ParamValue, PolicyError, SweepRun};
use crate::policy::registry::family;
use crate::policy::user_centric::Estimator;
use crate::policy::FitMode;
use crate::quality::measure::DeltaQMethod;
use crate::quality::search_quality::mean_keys;
use crate::quality::SearchQuality;

use super::environment::Environment;
use super::intervals::resampled_curve;
pub use super::run::PaperMeasures;
use super::run::{run, RunConfig};
use crate::crawl::NewPages;
use crate::quality::bootstrap::Interval;
use std::sync::Arc;

/// Target qualities of the Fig. 4 table (paper 003 Fig. 4's absolute targets).
pub const TARGET_QUALITIES: [f64; 6] = [0.90, 0.95, 0.98, 0.99, 0.995, 0.999];

/// Shares of the quality lost to staleness a policy must win back: on real sites the
/// unrefreshed repository already scores 0.98–0.995, so absolute targets below that say
/// nothing; "recover 90 % of the gap between unrefreshed and perfect" says something on every
/// site.
pub const GAP_SHARES: [f64; 5] = [0.5, 0.75, 0.9, 0.95, 0.99];

/// A target of the Fig. 4 table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Target {
    /// A mean repository quality.
    Quality(f64),
    /// A share of the gap `1 − Q₀` between the unrefreshed quality `Q₀` (B = 0) and a perfect
    /// repository: the target quality is `Q₀ + share · (1 − Q₀)`.
    GapShare(f64),
}

/// A `--targets` value that is not a target (each variant holds the text given, trimmed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// `N%` where `N` is not a number.
    #[error("`{0}`: expected a percentage such as 90%")]
    BadPercentage(String),
    /// A share of the gap outside (0, 100] %.
    #[error("`{0}`: a share of the gap must be in (0, 100] %")]
    ShareRange(String),
    /// Neither a number nor a percentage.
    #[error("`{0}`: expected a quality such as 0.99 or a share such as 90%")]
    NotATarget(String),
    /// A quality outside (0, 1].
    #[error("`{0}`: a target quality must be in (0, 1]")]
    QualityRange(String),
}

impl Target {
    /// `0.99` (a quality) or `90%` (a share of the staleness gap).
    pub fn parse(text: &str) -> Result<Self, TargetError> {
        let t = text.trim();
        if let Some(pct) = t.strip_suffix('%') {
            let share: f64 = pct
                .trim()
                .parse()
                .map_err(|_| TargetError::BadPercentage(t.to_string()))?;
            if !(share > 0.0 && share <= 100.0) {
                return Err(TargetError::ShareRange(t.to_string()));
            }
            return Ok(Target::GapShare(share / 100.0));
        }
        let q: f64 = t
            .parse()
            .map_err(|_| TargetError::NotATarget(t.to_string()))?;
        if !(q > 0.0 && q <= 1.0) {
            return Err(TargetError::QualityRange(t.to_string()));
        }
        Ok(Target::Quality(q))
    }

    /// The absolute quality of the target, given the unrefreshed quality (`None`: unknown, so a
    /// gap target has none).
    pub fn quality(self, unrefreshed: Option<f64>) -> Option<f64> {
        match self {
            Target::Quality(q) => Some(q),
            Target::GapShare(s) => unrefreshed.map(|q0| q0 + s * (1.0 - q0)),
        }
    }

    /// How tables label the target.
    pub fn label(self) -> String {
        match self {
            Target::Quality(q) => format!("{q}"),
            Target::GapShare(s) => format!("{}% gap", s * 100.0),
        }
    }
}

/// The default targets: the absolute ones, then the shares of the staleness gap.
pub fn default_targets() -> Vec<Target> {
    TARGET_QUALITIES
        .iter()
        .map(|&q| Target::Quality(q))
        .chain(GAP_SHARES.iter().map(|&s| Target::GapShare(s)))
        .collect()
}

/// What to sweep.
#[derive(Debug, Clone)]
pub struct SweepConfig {
    /// Policy family names (see [`crate::policy::registry::FAMILIES`]).
    pub policies: Vec<String>,
    pub budgets: Vec<usize>,
    /// Parameters given to every family that has them (e.g. user-centric's `estimator`).
    pub params: Vec<(String, ParamValue)>,
    /// Values swept per parameter, overriding the families' own grids (e.g. `theta`); a
    /// swept parameter without an entry takes its family's grid (paper 003 §6: θ ∈ {0.1, …,
    /// 1.0} for SBR and EBR).
    pub grids: BTreeMap<String, Vec<f64>>,
    pub mode: FitMode,
    pub seed: u64,
    /// When new pages are crawled (outside the budget, or from the frontier inside it).
    pub new_pages: NewPages,
    /// Warm-up units of every run (paper 001 §5.2; see [`RunConfig::warmup_units`]).
    pub warmup_units: crate::corpus::Unit,
    /// What oracle-mode runs are told of the history ([`RunConfig::oracle_history`]).
    pub oracle_history: crate::sim::run::OracleHistory,
    /// The targets of the table ([`default_targets`] when empty).
    pub targets: Vec<Target>,
    /// The change signals the site publishes ([`RunConfig::signals`]).
    pub signals: crate::signal::SignalSettings,
    /// Judge every run under the bootstrap's resamples too (`RunConfig::bootstrap`), so each
    /// target row carries its interval ([`TargetRow::budget_interval`]).
    pub intervals: bool,
}

/// The default budget grid: 0, then powers of two up to the largest number of pages present
/// in any unit (refreshing every page each unit keeps the repository exact), so the grid reaches
/// every target quality whatever the site.
pub fn default_budgets(max_pages: usize) -> Vec<usize> {
    let mut budgets = vec![0];
    let mut b = 1;
    while b < max_pages {
        budgets.push(b);
        b *= 2;
    }
    budgets.push(max_pages.max(1));
    budgets
}

/// One run of the sweep.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SweepPoint {
    pub policy: String,
    pub theta: Option<f64>,
    /// Every parameter given to the run (θ included).
    pub(crate) params: serde_json::Map<String, serde_json::Value>,
    pub budget: usize,
    /// Mean quality, fresh@10 and MAP@10 of the run.
    #[serde(flatten, with = "mean_keys")]
    pub mean: SearchQuality,
    /// Mean obsolete pages per unit (paper 004's measure), when the run reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_obsolete_pages: Option<f64>,
    /// How the budget went to new pages and refreshes, and how soon new pages were crawled.
    #[serde(flatten)]
    pub new_pages: NewPageSummary,
    /// Mean ChangeRate of the schedule (paper 001 Eq. 1), when the run reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_change_rate: Option<f64>,
    /// Mean gp4c NDCG@B of the schedule (paper 001's code), when the run reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_gp4c_ndcg: Option<f64>,
    /// Papers 000 and 002's measures of the run.
    #[serde(flatten)]
    pub paper: PaperMeasures,
    /// The run's mean quality under each resample of the workload's queries
    /// ([`crate::quality::bootstrap`]), when it was judged so.
    #[serde(skip)]
    pub(crate) resampled_quality: Option<Arc<[f64]>>,
}

/// A run's new-page figures (see [`crate::sim::run::DiscoveryDelay`]), when it reported them.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NewPageSummary {
    /// Mean budgeted first crawls of frontier pages per unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_new_page_fetches: Option<f64>,
    /// Mean refreshes per unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_refresh_fetches: Option<f64>,
    /// Mean units from a new page's appearance to its first crawl, weighted by its views.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_discovery_delay_weighted: Option<f64>,
    /// The same, unweighted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_discovery_delay: Option<f64>,
}

impl NewPageSummary {
    pub fn of(run: &super::run::RunResult) -> Self {
        NewPageSummary {
            mean_new_page_fetches: Some(run.mean_new_page_fetches),
            mean_refresh_fetches: Some(run.mean_refresh_fetches),
            mean_discovery_delay_weighted: Some(run.discovery.mean_discovery_delay_weighted),
            mean_discovery_delay: Some(run.discovery.mean_discovery_delay),
        }
    }
}

/// A point of a policy's curve (SBR/EBR: the best θ at that budget).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CurvePoint {
    pub policy: String,
    pub budget: usize,
    /// Mean quality, fresh@10 and MAP@10 of the point's run.
    #[serde(flatten, with = "mean_keys")]
    pub mean: SearchQuality,
    /// The threshold that gave this point (SBR/EBR only).
    #[serde(default)]
    pub theta: Option<f64>,
    /// The parameters that gave this point.
    #[serde(default)]
    pub(crate) params: serde_json::Map<String, serde_json::Value>,
    /// Mean obsolete pages per unit (paper 004's measure), when the run reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_obsolete_pages: Option<f64>,
    /// The point's run's new-page figures.
    #[serde(flatten)]
    pub new_pages: NewPageSummary,
    /// Mean ChangeRate of the schedule (paper 001 Eq. 1), when the run reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_change_rate: Option<f64>,
    /// Mean gp4c NDCG@B of the schedule (paper 001's code), when the run reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_gp4c_ndcg: Option<f64>,
    /// Papers 000 and 002's measures of the point's run.
    #[serde(flatten)]
    pub paper: PaperMeasures,
}

/// A cell of the Fig. 4 table.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TargetRow {
    pub policy: String,
    /// The mean repository quality to reach (for a gap target: `Q₀ + share · (1 − Q₀)`).
    pub target_quality: f64,
    /// For a target relative to the quality lost to staleness: the share of the gap.
    #[serde(default)]
    pub gap_share: Option<f64>,
    /// The smallest budget of the grid whose mean quality reaches the target; 0 when the
    /// repository reaches it with no refresh; `None` when no budget of the grid does.
    pub budget_needed: Option<usize>,
    /// The budget needed read between grid points ([`interpolated_budget`]): log-linear in
    /// `B` between the last grid point below the target and the first reaching it, linear
    /// from `B = 0`; `None` when no budget of the grid reaches the target.
    #[serde(default)]
    pub budget_interpolated: Option<f64>,
    /// How sure [`Self::budget_interpolated`] is: its 95 % percentile interval over the
    /// bootstrap's resamples of the workload's queries ([`crate::quality::bootstrap`]; an end
    /// `null` is not reached on the grid). Absent when the runs were not judged so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_interval: Option<Interval>,
    /// The interpolated budget under each resample (what intervals of ratios read).
    #[serde(skip)]
    pub resampled_budgets: Option<Arc<[Option<f64>]>>,
}

/// The result of a sweep.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Comparison {
    pub mode: FitMode,
    /// When new pages were crawled.
    pub new_pages: NewPages,
    /// Warm-up units of every run (not judged).
    pub warmup_units: crate::corpus::Unit,
    /// What oracle-mode runs were told of the history (`all` in online mode: nothing).
    pub oracle_history: crate::sim::run::OracleHistory,
    pub scoring: String,
    /// The change signals the site published (`["none"]` without; [`crate::signal`]).
    pub signals: Vec<String>,
    pub units: u32,
    pub workload_queries: usize,
    /// The ΔQ̄ estimator user-centric ran with in this mode.
    pub uc_estimator: Estimator,
    /// How ΔQ_A was measured (`estimate` or `exact`).
    pub delta_q: DeltaQMethod,
    /// Mean quality with no refresh (B = 0): where the staleness gap starts.
    pub unrefreshed_quality: Option<f64>,
    /// The table of [`curves`](Self::curves): for families with swept parameters (SBR/EBR's
    /// θ), the hindsight envelope, the best parameters per budget by judged quality (over the
    /// grid and the defaults: a default outside the grid, θ = 0, is one more point).
    pub rows: Vec<TargetRow>,
    pub curves: Vec<CurvePoint>,
    pub points: Vec<SweepPoint>,
    /// The table of `fixed_curves`: what a deployed crawler can run.
    pub fixed_rows: Vec<TargetRow>,
    /// Every family at parameters fixed before the run (its defaults and the sweep's given
    /// parameters, no grid): one run per budget, none chosen by judged quality. For a family
    /// without swept parameters these are its curve's points.
    pub(crate) fixed_curves: Vec<CurvePoint>,
    pub seconds: f64,
}

impl SweepConfig {
    /// The settings of the sweep's run at `budget`. A sweep reports means of the exact metrics
    /// only, so a policy that does not read ΔQ_A runs without measuring it.
    fn run_config(&self, budget: usize) -> RunConfig {
        let mut rc = RunConfig::new(budget, self.mode);
        rc.seed = self.seed;
        rc.new_pages = self.new_pages;
        rc.warmup_units = self.warmup_units;
        rc.oracle_history = self.oracle_history;
        rc.measure_unread_delta_q = false;
        rc.signals = self.signals.clone();
        rc.bootstrap = self.intervals;
        rc
    }
}

/// Why a sweep failed.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error(transparent)]
    Policy(#[from] PolicyError),
    #[error(transparent)]
    Index(#[from] IndexError),
    #[error(transparent)]
    Run(#[from] crate::sim::run::RunError),
}

/// A run of a policy that does not read the fit mode
/// ([`Reads::fit_mode`](crate::policy::Reads::fit_mode)), as the sweeps of several modes over
/// one environment share it in the environment's cache: such a policy makes the same run in
/// every mode (round-robin, random and age: 45 of a default EmacsWiki sweep's 342 runs per
/// mode), so the first mode's sweep runs it and the others report its point.
///
/// At `B = 0` no policy chooses anything (the refresher spends at most the budget), so every
/// family's `B = 0` run, in every mode, is one run: it is run once and reported for each,
/// labelled with the family and parameters of each.
///
/// A point is keyed by everything its run depends on apart from the mode and what the mode
/// decides (the history an oracle is told): family, parameters (neither at `B = 0`), budget,
/// seed, new-page setting, warm-up, signals; the environment (corpus, workload, scoring) is the
/// cache's own.
struct ModeFreeRun(String);

impl ModeFreeRun {
    /// `job`'s run when it is the same in every mode (`None`: it is not).
    fn of(
        job: &crate::policy::family::SweepRun,
        policy: &dyn crate::policy::RefreshPolicy,
        config: &SweepConfig,
    ) -> Option<Self> {
        let (family, params) = if job.budget == 0 {
            (None, None)
        } else if !policy.reads().fit_mode {
            (Some(job.policy.name), Some(job.params.to_json()))
        } else {
            return None;
        };
        let key = serde_json::json!([
            family,
            params,
            job.budget,
            config.seed,
            config.new_pages,
            config.warmup_units,
            config.signals.labels(),
        ]);
        Some(ModeFreeRun(key.to_string()))
    }
}

impl CacheKey for ModeFreeRun {
    type Value = SweepPoint;
    const STORE: &'static str = "mode-free runs";
    const MAX_BYTES: usize = 16 << 20;

    fn write_key(&self, bytes: &mut Vec<u8>) {
        bytes.extend_from_slice(self.0.as_bytes());
    }

    fn value_bytes(point: &SweepPoint) -> usize {
        let resampled = point.resampled_quality.as_ref().map_or(0, |r| r.len());
        std::mem::size_of::<SweepPoint>() + 256 + resampled * std::mem::size_of::<f64>()
    }
}

/// Runs every (policy, parameters, B) of `config` in parallel; `progress(done, total)` is
/// called after each run. A policy that does not read the fit mode is reported from the
/// environment's cache when a sweep of another mode over `env` ran it (a mode-free run): the
/// same points, without running them again.
pub fn sweep(
    env: &Environment<'_>,
    config: &SweepConfig,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Comparison, SweepError> {
    let plan = SweepPlan::new(config)?;
    let done = AtomicUsize::new(0);
    let total = plan.jobs.len();
    let points: Vec<SweepPoint> = (0..total)
        .into_par_iter()
        .map(|i| {
            let point = plan.run_job(env, i)?;
            progress(done.fetch_add(1, Ordering::Relaxed) + 1, total);
            Ok(point)
        })
        .collect::<Result<_, SweepError>>()?;
    plan.assemble(env, points)
}

/// A sweep taken apart for whoever drives its runs: the jobs, one run per job
/// ([`Self::run_job`], independent of the others and of the order they run in), and the
/// comparison assembled from every job's point in job order ([`Self::assemble`]). [`sweep`]
/// runs the jobs on the rayon pool; [`crate::sim::spread`] over the workers of a mesh.
pub struct SweepPlan<'c> {
    config: &'c SweepConfig,
    /// Every run of the sweep, in the order its points are reported.
    pub(crate) jobs: Vec<SweepRun>,
    fixed_jobs: Vec<SweepRun>,
    started: std::time::Instant,
}

impl<'c> SweepPlan<'c> {
    /// The jobs of `config` (its parameters already checked).
    pub fn new(config: &'c SweepConfig) -> Result<Self, SweepError> {
        let started = std::time::Instant::now();
        let (jobs, fixed_jobs) = sweep_jobs(config)?;
        Ok(SweepPlan {
            config,
            jobs,
            fixed_jobs,
            started,
        })
    }

    /// Jobs in the sweep.
    pub fn len(&self) -> usize {
        self.jobs.len()
    }

    /// Whether the sweep has no job.
    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }

    /// Job `i`'s point: its run, or the environment's cached mode-free run.
    pub fn run_job(&self, env: &Environment<'_>, i: usize) -> Result<SweepPoint, SweepError> {
        let (job, config) = (&self.jobs[i], self.config);
        let p = (job.policy.build)(&job.params)?;
        let shared = ModeFreeRun::of(job, &*p, config);
        if let Some(point) = shared.as_ref().and_then(|k| env.cache.get(k)) {
            return Ok(SweepPoint {
                policy: job.policy.name.to_string(),
                theta: job.params.number("theta"),
                params: job.params.to_json(),
                ..SweepPoint::clone(&point)
            });
        }
        let reads_seed = p.reads().seed;
        let r = run(env, p, &config.run_config(job.budget))?;
        let resampled_quality = match r.resampled_quality.clone() {
            Some(own) if reads_seed => Some(resampled_over_seeds(env, config, job, own)?),
            other => other.map(Arc::from),
        };
        let point = SweepPoint {
            policy: job.policy.name.to_string(),
            theta: job.params.number("theta"),
            params: job.params.to_json(),
            budget: job.budget,
            mean: r.mean,
            mean_obsolete_pages: Some(r.mean_obsolete_pages),
            new_pages: NewPageSummary::of(&r),
            mean_change_rate: Some(r.mean_change_rate),
            mean_gp4c_ndcg: Some(r.mean_gp4c_ndcg),
            paper: PaperMeasures::of_run(&r),
            resampled_quality,
        };
        if let Some(key) = shared {
            env.cache.insert(&key, point.clone());
        }
        Ok(point)
    }

    /// Job `i`'s point from the figures a run reported ([`RunFigures`]), as
    /// [`Self::run_job`] labels it.
    pub fn point_of(&self, i: usize, figures: RunFigures) -> SweepPoint {
        let job = &self.jobs[i];
        figures.into_point(
            job.policy.name.to_string(),
            job.params.number("theta"),
            job.params.to_json(),
            job.budget,
        )
    }

    /// The comparison from every job's point, in job order.
    pub fn assemble(
        &self,
        env: &Environment<'_>,
        points: Vec<SweepPoint>,
    ) -> Result<Comparison, SweepError> {
        let config = self.config;
        let fixed_points = fixed_points(&self.fixed_jobs, &self.jobs, &points);
        let curves = best_curves(&config.policies, &config.budgets, &points);
        let fixed_curves = best_curves(&config.policies, &config.budgets, &fixed_points);
        // Q₀: every policy's B = 0 run is the same repository; without one in the grid, one run.
        let (unrefreshed, unrefreshed_resampled) = match points.iter().find(|p| p.budget == 0) {
            Some(p) => (p.mean.quality, p.resampled_quality.clone()),
            None => {
                let nothing = family("round-robin")?.make([])?;
                let r = run(env, nothing, &config.run_config(0))?;
                (r.mean.quality, r.resampled_quality.map(Arc::from))
            }
        };
        let targets = if config.targets.is_empty() {
            default_targets()
        } else {
            config.targets.clone()
        };
        let mut rows = target_rows(&config.policies, &curves, &targets, Some(unrefreshed));
        let mut fixed_rows =
            target_rows(&config.policies, &fixed_curves, &targets, Some(unrefreshed));
        if let Some(q0) = &unrefreshed_resampled {
            add_intervals(&mut rows, &points, q0);
            add_intervals(&mut fixed_rows, &fixed_points, q0);
        }
        let estimator = estimator_given(config);
        Ok(Comparison {
            mode: config.mode,
            new_pages: config.new_pages,
            warmup_units: config.warmup_units,
            oracle_history: config.oracle_history.as_told_in(config.mode),
            scoring: env.config.scoring.name().to_string(),
            signals: config.signals.labels(),
            units: env.units(),
            workload_queries: env.workload.queries.len(),
            uc_estimator: estimator.unwrap_or_else(|| {
                Estimator::default_for(config.oracle_history.policy_mode(config.mode))
            }),
            delta_q: env.config.delta_q,
            unrefreshed_quality: Some(unrefreshed),
            rows,
            curves,
            points,
            fixed_rows,
            fixed_curves,
            seconds: self.started.elapsed().as_secs_f64(),
        })
    }
}

/// What a run reported to its sweep, without what its job says (family, parameters, budget):
/// the part of a [`SweepPoint`] a worker sends the leader. A plain struct (no flattened or
/// skipped fields), so any serde format carries it exactly; the conversions name every field,
/// so a field added to the point and not carried here does not compile.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RunFigures {
    mean: (f64, f64, f64),
    mean_obsolete_pages: Option<f64>,
    new_pages: [Option<f64>; 4],
    mean_change_rate: Option<f64>,
    mean_gp4c_ndcg: Option<f64>,
    paper: [Option<f64>; 6],
    resampled_quality: Option<Vec<f64>>,
}

impl RunFigures {
    /// The figures of `point`.
    pub fn of(point: &SweepPoint) -> Self {
        let SweepPoint {
            policy: _,
            theta: _,
            params: _,
            budget: _,
            mean,
            mean_obsolete_pages,
            new_pages,
            mean_change_rate,
            mean_gp4c_ndcg,
            paper,
            resampled_quality,
        } = point;
        let NewPageSummary {
            mean_new_page_fetches,
            mean_refresh_fetches,
            mean_discovery_delay_weighted,
            mean_discovery_delay,
        } = *new_pages;
        let PaperMeasures {
            mean_change_ratio,
            mean_weighted_change_ratio,
            mean_pagerank_weighted_change_ratio,
            mean_fresh_at_10_fixed_k,
            mean_map_at_10_retrieved,
            mean_map_at_10_tau0,
        } = *paper;
        RunFigures {
            mean: (mean.quality, mean.fresh_at_10, mean.map_at_10),
            mean_obsolete_pages: *mean_obsolete_pages,
            new_pages: [
                mean_new_page_fetches,
                mean_refresh_fetches,
                mean_discovery_delay_weighted,
                mean_discovery_delay,
            ],
            mean_change_rate: *mean_change_rate,
            mean_gp4c_ndcg: *mean_gp4c_ndcg,
            paper: [
                mean_change_ratio,
                mean_weighted_change_ratio,
                mean_pagerank_weighted_change_ratio,
                mean_fresh_at_10_fixed_k,
                mean_map_at_10_retrieved,
                mean_map_at_10_tau0,
            ],
            resampled_quality: resampled_quality.as_ref().map(|r| r.to_vec()),
        }
    }

    /// The point these figures came from, labelled by its job.
    fn into_point(
        self,
        policy: String,
        theta: Option<f64>,
        params: serde_json::Map<String, serde_json::Value>,
        budget: usize,
    ) -> SweepPoint {
        let [mean_new_page_fetches, mean_refresh_fetches, mean_discovery_delay_weighted, mean_discovery_delay] =
            self.new_pages;
        let [mean_change_ratio, mean_weighted_change_ratio, mean_pagerank_weighted_change_ratio, mean_fresh_at_10_fixed_k, mean_map_at_10_retrieved, mean_map_at_10_tau0] =
            self.paper;
        SweepPoint {
            policy,
            theta,
            params,
            budget,
            mean: SearchQuality {
                quality: self.mean.0,
                fresh_at_10: self.mean.1,
                map_at_10: self.mean.2,
            },
            mean_obsolete_pages: self.mean_obsolete_pages,
            new_pages: NewPageSummary {
                mean_new_page_fetches,
                mean_refresh_fetches,
                mean_discovery_delay_weighted,
                mean_discovery_delay,
            },
            mean_change_rate: self.mean_change_rate,
            mean_gp4c_ndcg: self.mean_gp4c_ndcg,
            paper: PaperMeasures {
                mean_change_ratio,
                mean_weighted_change_ratio,
                mean_pagerank_weighted_change_ratio,
                mean_fresh_at_10_fixed_k,
                mean_map_at_10_retrieved,
                mean_map_at_10_tau0,
            },
            resampled_quality: self.resampled_quality.map(Arc::from),
        }
    }
}

/// Seeds a policy that draws at random is run with for its intervals (the sweep's seed and the
/// next ones): each resample of the queries reads one of them in turn, so the interval spans
/// both the workload's and the draws' variation.
pub const SEEDS_PER_INTERVAL: u64 = 4;

/// `job`'s mean quality under each resample of the queries, resample `r` read from the run
/// with seed `config.seed + r mod SEEDS_PER_INTERVAL` (`own`: the sweep seed's).
fn resampled_over_seeds(
    env: &Environment<'_>,
    config: &SweepConfig,
    job: &SweepRun,
    own: Vec<f64>,
) -> Result<Arc<[f64]>, SweepError> {
    let mut by_seed = vec![own];
    for k in 1..SEEDS_PER_INTERVAL {
        let mut rc = config.run_config(job.budget);
        rc.seed = config.seed.wrapping_add(k);
        let r = run(env, (job.policy.build)(&job.params)?, &rc)?;
        by_seed.push(r.resampled_quality.unwrap_or_default());
    }
    Ok((0..by_seed[0].len())
        .map(|r| {
            by_seed[r % by_seed.len()]
                .get(r)
                .copied()
                .unwrap_or(f64::NAN)
        })
        .collect())
}

/// The runs of a sweep: the grid's (each family's grid, or the swept values), then the runs
/// at parameters fixed before the run that the grid does not already make; and those
/// fixed-parameter runs alone (reported as the fixed rows and curves).
fn sweep_jobs(config: &SweepConfig) -> Result<(Vec<SweepRun>, Vec<SweepRun>), SweepError> {
    let families = config
        .policies
        .iter()
        .map(|p| family(p))
        .collect::<Result<Vec<_>, _>>()?;
    let jobs = expand_sweep(
        &families,
        &config.budgets,
        &config.params,
        &config.grids,
        GridDefault::FamilyGrids,
    )?;
    // The runs at parameters fixed before the run that the grid does not already make.
    let fixed_jobs = expand_sweep(
        &families,
        &config.budgets,
        &config.params,
        &BTreeMap::new(),
        GridDefault::OnlyGiven,
    )?;
    let grid_keys: std::collections::HashSet<_> = jobs.iter().map(job_key).collect();
    let mut jobs = jobs;
    jobs.extend(
        fixed_jobs
            .iter()
            .filter(|job| !grid_keys.contains(&job_key(job)))
            .cloned(),
    );
    Ok((jobs, fixed_jobs))
}

/// What identifies a run of a sweep: family, parameters, budget.
fn job_key(
    job: &SweepRun,
) -> (
    &'static str,
    serde_json::Map<String, serde_json::Value>,
    usize,
) {
    (job.policy.name, job.params.to_json(), job.budget)
}

/// The point of each fixed-parameter job, found among the sweep's `jobs` and their `points`.
fn fixed_points(
    fixed_jobs: &[SweepRun],
    jobs: &[SweepRun],
    points: &[SweepPoint],
) -> Vec<SweepPoint> {
    fixed_jobs
        .iter()
        .map(|job| {
            let key = job_key(job);
            let found = |(j, p): (&SweepRun, &SweepPoint)| (job_key(j) == key).then(|| p.clone());
            jobs.iter()
                .zip(points)
                .find_map(found)
                .expect("every fixed job was run")
        })
        .collect()
}

/// The user-centric estimator given as the sweep's `estimator` parameter, if any.
fn estimator_given(config: &SweepConfig) -> Option<Estimator> {
    config
        .params
        .iter()
        .find(|(k, _)| k == "estimator")
        .and_then(|(_, v)| match v {
            ParamValue::Text(e) => Estimator::parse(e),
            ParamValue::Number(_) => None,
        })
}

/// Per policy and budget, the best point (SBR/EBR: best θ, ties to the smaller θ).
pub fn best_curves(
    policies: &[String],
    budgets: &[usize],
    points: &[SweepPoint],
) -> Vec<CurvePoint> {
    let mut curves = Vec::new();
    for policy in policies {
        for &budget in budgets {
            let best = points
                .iter()
                .filter(|p| &p.policy == policy && p.budget == budget)
                .max_by(|a, b| {
                    a.mean
                        .quality
                        .total_cmp(&b.mean.quality)
                        .then(b.theta.unwrap_or(0.0).total_cmp(&a.theta.unwrap_or(0.0)))
                });
            if let Some(p) = best {
                curves.push(CurvePoint {
                    policy: policy.clone(),
                    budget,
                    mean: p.mean,
                    theta: p.theta,
                    params: p.params.clone(),
                    mean_obsolete_pages: p.mean_obsolete_pages,
                    new_pages: p.new_pages,
                    mean_change_rate: p.mean_change_rate,
                    mean_gp4c_ndcg: p.mean_gp4c_ndcg,
                    paper: p.paper,
                });
            }
        }
    }
    curves
}

/// Fills each row's [`TargetRow::budget_interval`] and [`TargetRow::resampled_budgets`] from
/// `points` (the runs its curve chose from: per budget the best by quality, as the row's own
/// curve) and the unrefreshed quality `unrefreshed` under each resample
/// ([`super::intervals`]). Rows whose points were not all judged under the resamples are left
/// without.
pub fn add_intervals(rows: &mut [TargetRow], points: &[SweepPoint], unrefreshed: &[f64]) {
    for row in rows.iter_mut() {
        let runs = points
            .iter()
            .filter(|p| p.policy == row.policy)
            .map(|p| (p.budget, p.resampled_quality.as_deref()));
        let Some(curve) = resampled_curve(runs, unrefreshed.len()) else {
            continue;
        };
        let budgets: Arc<[Option<f64>]> = unrefreshed
            .iter()
            .enumerate()
            .map(|(r, &q0)| {
                let target = match row.gap_share {
                    Some(share) => q0 + share * (1.0 - q0),
                    None => row.target_quality,
                };
                interpolated_budget(curve.iter().map(|(b, q)| (*b, q[r])), target, Some(q0))
            })
            .collect();
        row.budget_interval = Interval::of(budgets.iter().copied());
        row.resampled_budgets = Some(budgets);
    }
}

/// The budget at which a curve first reaches `target`, read between grid points: between the
/// last point below the target and the first reaching it, `ln B` is linear in quality (budgets
/// of a grid are powers of two, so log-B is the axis they are spaced on); from `B = 0`, where
/// `ln B` is undefined, `B` itself is. `points` are `(B, mean quality)` in ascending `B`; a
/// curve without a `B = 0` point starts from `(0, unrefreshed)` when that is known. A curve
/// that dips below the target again keeps its first crossing. `None`: never reached.
pub fn interpolated_budget(
    points: impl IntoIterator<Item = (usize, f64)>,
    target: f64,
    unrefreshed: Option<f64>,
) -> Option<f64> {
    let mut below: Option<(usize, f64)> = None;
    for (i, (budget, quality)) in points.into_iter().enumerate() {
        if i == 0 && budget > 0 {
            below = unrefreshed.filter(|&q0| q0 < target).map(|q0| (0, q0));
        }
        if quality >= target - 1e-12 {
            let Some((b0, q0)) = below else {
                return Some(budget as f64);
            };
            let share = ((target - q0) / (quality - q0)).clamp(0.0, 1.0);
            let (b0, b1) = (b0 as f64, budget as f64);
            return Some(if b0 == 0.0 {
                share * b1
            } else {
                (b0.ln() + share * (b1.ln() - b0.ln())).exp()
            });
        }
        below = Some((budget, quality));
    }
    None
}

/// The Fig. 4 table: the smallest budget reaching each target (gap targets only when the
/// unrefreshed quality is known).
pub fn target_rows(
    policies: &[String],
    curves: &[CurvePoint],
    targets: &[Target],
    unrefreshed: Option<f64>,
) -> Vec<TargetRow> {
    let mut rows = Vec::new();
    for policy in policies {
        let mut curve: Vec<&CurvePoint> = curves.iter().filter(|c| &c.policy == policy).collect();
        curve.sort_by_key(|c| c.budget);
        for &target in targets {
            let Some(quality) = target.quality(unrefreshed) else {
                continue;
            };
            rows.push(TargetRow {
                policy: policy.clone(),
                target_quality: quality,
                gap_share: match target {
                    Target::GapShare(s) => Some(s),
                    Target::Quality(_) => None,
                },
                budget_needed: curve
                    .iter()
                    .find(|c| c.mean.quality >= quality - 1e-12)
                    .map(|c| c.budget),
                budget_interpolated: interpolated_budget(
                    curve.iter().map(|c| (c.budget, c.mean.quality)),
                    quality,
                    unrefreshed,
                ),
                budget_interval: None,
                resampled_budgets: None,
            });
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(policy: &str, theta: Option<f64>, budget: usize, q: f64) -> SweepPoint {
        SweepPoint {
            policy: policy.into(),
            theta,
            params: Default::default(),
            budget,
            mean: SearchQuality::uniform(q),
            mean_obsolete_pages: None,
            new_pages: NewPageSummary::default(),
            mean_change_rate: None,
            mean_gp4c_ndcg: None,
            paper: PaperMeasures::default(),
            resampled_quality: None,
        }
    }

    #[test]
    fn sweeps_sharing_mode_free_runs_report_what_separate_sweeps_report() {
        let corpus = crate::index::testutil::random_corpus(40, 6, 5);
        let env = crate::sim::three_term_environment(&corpus, 2.0);
        let config = |mode| SweepConfig {
            policies: ["sbr", "round-robin", "random", "age", "user-centric"]
                .map(String::from)
                .to_vec(),
            budgets: vec![0, 2, 40],
            params: Vec::new(),
            grids: BTreeMap::from([("theta".to_string(), vec![0.1, 0.5])]),
            mode,
            seed: 3,
            new_pages: NewPages::default(),
            warmup_units: 0,
            oracle_history: Default::default(),
            targets: Vec::new(),
            signals: Default::default(),
            intervals: true,
        };
        let none = |_: usize, _: usize| {};
        for mode in [FitMode::Oracle, FitMode::Online] {
            // Alone: over an environment of its own, whose cache holds no other mode's runs.
            let own = crate::sim::three_term_environment(&corpus, 2.0);
            let alone = sweep(&own, &config(mode), &none).unwrap();
            let sharing = sweep(&env, &config(mode), &none).unwrap();
            assert_eq!(alone.points, sharing.points, "{mode:?}");
            assert_eq!(alone.curves.len(), sharing.curves.len());
            assert_eq!(alone.fixed_curves, sharing.fixed_curves, "{mode:?}");
            // Fixed before the run: SBR at its default θ (outside the grid), one run per
            // budget; a family without swept parameters is its own curve.
            let sbr: Vec<&CurvePoint> = alone
                .fixed_curves
                .iter()
                .filter(|c| c.policy == "sbr")
                .collect();
            assert_eq!(sbr.len(), 3);
            assert!(sbr
                .iter()
                .all(|c| c.theta.is_none()
                    || c.theta == Some(crate::policy::registry::DEFAULT_THETA)));
            // The envelope is the best of the grid and the defaults.
            for c in alone.curves.iter().filter(|c| c.policy == "sbr") {
                let fixed = sbr.iter().find(|f| f.budget == c.budget).unwrap();
                assert!(c.mean.quality >= fixed.mean.quality);
            }
            let age = |curves: &[CurvePoint]| -> Vec<CurvePoint> {
                curves
                    .iter()
                    .filter(|c| c.policy == "age")
                    .cloned()
                    .collect()
            };
            assert_eq!(age(&alone.fixed_curves), age(&alone.curves));
            assert_eq!(alone.fixed_rows.len(), alone.rows.len());
            assert!(alone
                .rows
                .iter()
                .all(|r| r.budget_needed.is_none() == r.budget_interpolated.is_none()));
        }
        // One B = 0 run for every family and mode, and one run per mode-free family and
        // positive budget.
        let runs = env.cache.stats()["mode-free runs"];
        assert_eq!(runs.kept, 1 + 3 * 2);
        // The online sweep read every one of them from the oracle sweep.
        assert!(runs.hits >= 7, "{runs:?}");
    }

    #[test]
    fn best_theta_per_budget_and_budget_needed() {
        let policies = vec!["sbr".to_string(), "age".to_string()];
        let points = vec![
            point("sbr", None, 0, 0.95),
            point("sbr", Some(0.1), 4, 0.97),
            point("sbr", Some(0.5), 4, 0.985),
            point("sbr", Some(0.1), 8, 0.991),
            point("sbr", Some(0.5), 8, 0.99),
            point("age", None, 0, 0.95),
            point("age", None, 4, 0.96),
            point("age", None, 8, 0.97),
        ];
        let curves = best_curves(&policies, &[0, 4, 8], &points);
        let sbr4 = curves
            .iter()
            .find(|c| c.policy == "sbr" && c.budget == 4)
            .unwrap();
        assert_eq!(sbr4.theta, Some(0.5));
        let targets: Vec<Target> = TARGET_QUALITIES
            .iter()
            .map(|&q| Target::Quality(q))
            .collect();
        let rows = target_rows(&policies, &curves, &targets, None);
        let need = |p: &str, t: f64| {
            rows.iter()
                .find(|r| r.policy == p && r.target_quality == t)
                .unwrap()
                .budget_needed
        };
        assert_eq!(need("sbr", 0.90), Some(0));
        assert_eq!(need("sbr", 0.98), Some(4));
        assert_eq!(need("sbr", 0.99), Some(8));
        assert_eq!(need("sbr", 0.999), None);
        assert_eq!(need("age", 0.98), None);
        // Gap targets: Q₀ = 0.95, so 50 % of the gap is 0.975 and 80 % is 0.99.
        let gap = target_rows(
            &policies,
            &curves,
            &[Target::GapShare(0.5), Target::GapShare(0.8)],
            Some(0.95),
        );
        assert_eq!(gap.len(), 4);
        assert_eq!(gap[0].gap_share, Some(0.5));
        assert!((gap[0].target_quality - 0.975).abs() < 1e-12);
        assert_eq!(gap[0].budget_needed, Some(4));
        assert_eq!(gap[1].budget_needed, Some(8));
        assert_eq!(gap[3].budget_needed, None, "age never recovers 80 %");
        assert!(target_rows(&policies, &curves, &[Target::GapShare(0.5)], None).is_empty());
    }

    #[test]
    fn budgets_are_interpolated_on_log_b_and_linearly_from_zero() {
        let curve = [(0, 0.90), (1, 0.94), (4, 0.98), (16, 0.97), (64, 0.999)];
        let at = |t| interpolated_budget(curve, t, None);
        assert_eq!(at(0.90), Some(0.0));
        // From B = 0, linear in B: half-way to 0.94 is B = 0.5.
        assert!((at(0.92).unwrap() - 0.5).abs() < 1e-12);
        // Between 1 and 4, log-linear: half-way is √(1·4) = 2.
        assert!((at(0.96).unwrap() - 2.0).abs() < 1e-12);
        assert_eq!(at(0.98), Some(4.0));
        // The dip after B = 4 is not read: 0.975 is first crossed below 4.
        assert!(at(0.975).unwrap() < 4.0);
        // 0.99 is first reached at 64, from 16 (0.97): 10/29 of the way on log B.
        let expected = (16f64.ln() + (0.02 / 0.029) * (64f64.ln() - 16f64.ln())).exp();
        assert!((at(0.99).unwrap() - expected).abs() < 1e-9);
        assert_eq!(at(0.9995), None);
        // Without a B = 0 point, the unrefreshed quality starts the curve.
        let later = [(2, 0.95), (8, 0.99)];
        assert!((interpolated_budget(later, 0.94, Some(0.93)).unwrap() - 1.0).abs() < 1e-12);
        assert_eq!(interpolated_budget(later, 0.94, None), Some(2.0));
        assert_eq!(interpolated_budget(later, 0.92, Some(0.93)), Some(2.0));
    }

    #[test]
    fn targets_parse_as_qualities_or_shares_of_the_gap() {
        assert_eq!(Target::parse("0.99"), Ok(Target::Quality(0.99)));
        assert_eq!(Target::parse(" 90% "), Ok(Target::GapShare(0.9)));
        assert!(Target::parse("1.5").is_err());
        assert!(Target::parse("0%").is_err());
        assert!(Target::parse("abc").is_err());
        assert_eq!(
            Target::GapShare(0.9).quality(Some(0.98)),
            Some(0.98 + 0.9 * 0.02)
        );
        assert_eq!(Target::GapShare(0.75).label(), "75% gap");
    }

    #[test]
    fn default_grid_reaches_every_page() {
        assert_eq!(default_budgets(10), vec![0, 1, 2, 4, 8, 10]);
        assert_eq!(default_budgets(8), vec![0, 1, 2, 4, 8]);
    }

    fn resampled_point(policy: &str, budget: usize, resampled: &[f64]) -> SweepPoint {
        SweepPoint {
            policy: policy.into(),
            theta: None,
            params: Default::default(),
            budget,
            mean: SearchQuality::uniform(resampled[0]),
            mean_obsolete_pages: None,
            new_pages: Default::default(),
            mean_change_rate: None,
            mean_gp4c_ndcg: None,
            paper: Default::default(),
            resampled_quality: Some(Arc::from(resampled)),
        }
    }

    fn gap_row(policy: &str, gap_share: f64) -> TargetRow {
        TargetRow {
            policy: policy.into(),
            target_quality: 0.0,
            gap_share: Some(gap_share),
            budget_needed: None,
            budget_interpolated: None,
            budget_interval: None,
            resampled_budgets: None,
        }
    }

    #[test]
    fn each_resample_reads_its_own_curve_and_its_own_gap() {
        // Three resamples; Q₀ = 0.9 in each. B = 4 reaches 0.95 / 0.99 / 0.92.
        let points = [
            resampled_point("uc", 0, &[0.9, 0.9, 0.9]),
            resampled_point("uc", 4, &[0.95, 0.99, 0.92]),
            resampled_point("uc", 16, &[1.0, 1.0, 0.94]),
        ];
        let mut rows = [gap_row("uc", 0.5)];
        add_intervals(&mut rows, &points, &[0.9, 0.9, 0.9]);
        let budgets = rows[0].resampled_budgets.clone().unwrap();
        // Target 0.95: at B = 4 exactly; linear from B = 0 at 0.05/0.09 of the way; never.
        assert_eq!(budgets[0], Some(4.0));
        assert!((budgets[1].unwrap() - 4.0 * 0.05 / 0.09).abs() < 1e-9);
        assert_eq!(budgets[2], None);
        let interval = rows[0].budget_interval.unwrap();
        assert_eq!(interval.high, None);
        assert!((interval.low.unwrap() - 4.0 * 0.05 / 0.09).abs() < 1e-9);
    }

    #[test]
    fn an_envelope_takes_the_best_point_per_budget_in_each_resample() {
        let points = [
            resampled_point("sbr", 0, &[0.8, 0.8]),
            resampled_point("sbr", 8, &[0.9, 0.85]),
            resampled_point("sbr", 8, &[0.85, 1.0]),
        ];
        let mut rows = [gap_row("sbr", 1.0)];
        add_intervals(&mut rows, &points, &[0.8, 0.8]);
        // Resample 0 never reaches 1.0 (best 0.9); resample 1 does at B = 8 (the other θ).
        let budgets = rows[0].resampled_budgets.clone().unwrap();
        assert_eq!(&budgets[..], &[None, Some(8.0)]);
        let other = TargetRow {
            resampled_budgets: Some(Arc::from(vec![Some(2.0), Some(2.0)])),
            ..gap_row("rr", 1.0)
        };
        let ratio = crate::sim::intervals::ratio_interval(
            rows[0].resampled_budgets.as_deref().unwrap(),
            other.resampled_budgets.as_deref().unwrap(),
        )
        .unwrap();
        assert_eq!((ratio.low, ratio.high), (Some(4.0), None));
    }

    #[test]
    fn points_judged_without_resamples_give_no_interval() {
        let mut plain = resampled_point("uc", 4, &[0.95]);
        plain.resampled_quality = None;
        let mut rows = [gap_row("uc", 0.5)];
        add_intervals(
            &mut rows,
            &[resampled_point("uc", 0, &[0.9]), plain],
            &[0.9],
        );
        assert_eq!(rows[0].budget_interval, None);
    }
}
