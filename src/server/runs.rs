//! Simulation runs started over HTTP: a queue, one worker at a time, per-unit records kept in
//! each run's history and broadcast to live subscribers (server-sent events).
//!
//! # Life of a run
//!
//! `queued` → `running` → `done` | `cancelled` | `failed`. Runs execute one at a time on a
//! blocking thread (`spawn_blocking`; the machine has few cores and a run saturates one), in
//! start order. A run reads a shared, policy-independent [`Environment`] (built once per
//! scoring function and workload, then cached) and builds its own repository, so runs never
//! touch the repository that serves searches. Cancellation sets a flag that the run's
//! per-unit callback reads, so a running run stops after its current unit; a queued run is
//! cancelled at once.
//!
//! History and broadcast are updated under one lock, and subscribers take the backlog and
//! their receiver under the same lock, so a stream sees every unit exactly once, in order.
//!
//! Every run is also judged under the bootstrap's resamples of the workload's queries
//! (`RunConfig::bootstrap`); a completed run keeps its mean quality under each resample
//! (200 numbers, outside [`RunInfo`]) for the intervals of `GET /api/compare`
//! ([`super::compare`]).

use std::collections::BTreeMap;
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use tokio::sync::{broadcast, Semaphore};

use crate::corpus::{Corpus, LiveWeb};
use crate::crawl::NewPages;
use crate::index::{IndexError, ScoringKind};
use crate::policy::family::{ParamValue, PolicyError};
use crate::policy::{FitMode, RefreshPolicy};
use crate::quality::measure::DeltaQMethod;
use crate::quality::search_quality::optional_mean_keys;
use crate::quality::SearchQuality;
use crate::querylog::term_workload::TermWorkload;
use crate::querylog::workload::Workload;
use crate::sim::compare::{NewPageSummary, PaperMeasures};
use crate::sim::displacement::DisplacementSummary;
use crate::sim::run::{DiscoveryDelay, OracleHistory};
use crate::sim::{run_with, Environment, EnvironmentConfig, RunConfig, UnitRecord};

use super::error::ApiError;
use super::live_workload::LiveWorkload;

/// Builds a policy by family name and parameters; `Err` says why (unknown name or parameter,
/// a value out of range).
pub type PolicyFactory = Arc<
    dyn Fn(&str, &[(String, ParamValue)]) -> Result<Box<dyn RefreshPolicy>, PolicyError>
        + Send
        + Sync,
>;

/// Why a run could not be set up or failed; the text is the API's message (`400` for a
/// request's parameters, a failed run's `error`).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// θ given both as `theta` and as `params.theta`.
    #[error("give θ once: `theta` or `params.theta`")]
    ThetaTwice,
    /// A parameter naming a file on the server's machine.
    #[error(
        "parameter `{key}` names a file and is accepted on the command line only; over HTTP give the function inline as `expr`"
    )]
    FileParam { key: String },
    /// No workload to steer and judge by: the server has no log (a `log` run).
    #[error(
        "no workload: start the server with --log, or use \
         \"workload\": \"log+live\" after sending queries"
    )]
    NoLogWorkload,
    /// No workload to steer and judge by: no log, and no served query is in the corpus yet
    /// (a `log+live` run).
    #[error("no workload: no --log was given and no served query matches the corpus yet")]
    NoLiveWorkload,
    /// The policy was refused.
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// The environment failed in the index.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// The run failed (its budget, or the index).
    #[error(transparent)]
    Run(#[from] crate::sim::RunError),
    /// A `signals` spec that does not parse.
    #[error("`signals`: {0}")]
    Signals(#[from] crate::signal::SignalSpecError),
}

/// The policies a server offers.
#[derive(Clone)]
pub struct Policies {
    /// Names in display order.
    pub names: Vec<String>,
    pub make: PolicyFactory,
}

/// Most runs kept (finished runs beyond this are forgotten, oldest first).
pub const MAX_RUNS: usize = 500;

/// Most runs queued or running at once (a sweep counts all its runs); more answer 429.
pub const MAX_PENDING_RUNS: usize = 256;

/// Which workload a run steers and is judged by (see [`super::live_workload`]).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
pub enum WorkloadSource {
    /// The workload derived from `--log` at startup.
    #[default]
    #[serde(rename = "log")]
    Log,
    /// The log's workload plus every query this server has served so far.
    #[serde(rename = "log+live")]
    LogLive,
}

/// What `POST /api/runs` accepts.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    pub(crate) policy: String,
    /// Refreshes per unit (B).
    pub(crate) budget: usize,
    #[serde(default = "default_mode")]
    pub(crate) mode: FitMode,
    /// Default: the server's scoring function.
    #[serde(default)]
    pub(crate) scoring: Option<ScoringKind>,
    #[serde(default)]
    pub(crate) workload: WorkloadSource,
    #[serde(default)]
    pub(crate) seed: Option<u64>,
    /// Shingle threshold θ of sbr/ebr (default: the policy's own, every change counts);
    /// shorthand for `params.theta`.
    #[serde(default)]
    pub(crate) theta: Option<f64>,
    /// The policy's parameters (`GET /api/policies` lists each family's).
    #[serde(default)]
    pub(crate) params: BTreeMap<String, ParamValue>,
    /// How ΔQ_A is measured (default `estimate`; `exact` is the simulation's reference).
    #[serde(default)]
    pub(crate) delta_q: DeltaQMethod,
    /// When new pages are crawled (default `outside-budget`; `frontier`: inside the budget).
    #[serde(default)]
    pub(crate) new_pages: NewPages,
    /// Units `1..=W` refresh every page outside the budget and are not judged (paper 001
    /// §5.2's warm-up; default 0).
    #[serde(default)]
    pub(crate) warmup_units: u32,
    /// What an oracle-mode policy is told of the history: `all` (default) or `warm-up` (the
    /// warm-up units' changes only; needs `warmup_units` ≥ 1 and oracle mode).
    #[serde(default)]
    pub(crate) oracle_history: OracleHistory,
    /// Measure each refresh's leave-one-out true gain and report the displacement figures
    /// when the run completes (`displacement` of the run; as `simulate --displacement`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) displacement: bool,
    /// The change signals the site publishes, as `--signals` specs (`["lastmod",
    /// "feed:items=50"]`; default none): online policies read them.
    #[serde(default)]
    pub(crate) signals: Vec<String>,
}

impl RunSpec {
    /// `signals`, parsed (400 on a spec that does not parse).
    pub fn signal_settings(&self) -> Result<crate::signal::SignalSettings, ApiError> {
        crate::signal::SignalSettings::parse(&self.signals)
            .map_err(|e| ApiError::BadParameter(format!("`signals`: {e}")))
    }

    /// Every parameter given, `theta` included; `Err` when θ is given both ways.
    pub fn all_params(&self) -> Result<Vec<(String, ParamValue)>, RunError> {
        refuse_file_params(self.params.keys())?;
        let mut out: Vec<(String, ParamValue)> = self
            .params
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if let Some(t) = self.theta {
            if self.params.contains_key("theta") {
                return Err(RunError::ThetaTwice);
            }
            out.push(("theta".into(), ParamValue::Number(t)));
        }
        Ok(out)
    }
}

/// Parameters that name a file on the server's machine (`gp4c`'s `function=FILE`) are for the
/// command line: a request must not make the server read a path it chooses. Over HTTP a learned
/// function is given inline (`expr`).
pub fn refuse_file_params<'a>(keys: impl IntoIterator<Item = &'a String>) -> Result<(), RunError> {
    match keys.into_iter().find(|k| k.as_str() == "function") {
        Some(k) => Err(RunError::FileParam { key: k.clone() }),
        None => Ok(()),
    }
}

fn default_mode() -> FitMode {
    FitMode::Oracle
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Queued,
    Running,
    Done,
    Cancelled,
    Failed,
}

impl RunStatus {
    pub fn is_finished(self) -> bool {
        matches!(
            self,
            RunStatus::Done | RunStatus::Cancelled | RunStatus::Failed
        )
    }
}

/// What subscribers receive.
#[derive(Debug, Clone)]
pub enum RunEvent {
    Unit(UnitRecord),
    End(RunInfo),
}

#[derive(Debug)]
struct RunState {
    status: RunStatus,
    error: Option<String>,
    units_total: usize,
    history: Vec<UnitRecord>,
    /// The discovery delays, known when the run completed.
    discovery: Option<DiscoveryDelay>,
    /// The displacement figures, when asked for and the run completed.
    displacement: Option<DisplacementSummary>,
    /// The run's mean quality under each of the bootstrap's resamples of the workload's
    /// queries ([`crate::quality::bootstrap`]; [`crate::quality::bootstrap::RESAMPLES`]
    /// values), once it completed: what `GET /api/compare`'s intervals read. Not part of
    /// [`RunInfo`]; forgotten with the run ([`MAX_RUNS`]).
    resampled_quality: Option<Arc<[f64]>>,
}

/// One run.
pub struct Run {
    pub(crate) id: u64,
    pub(crate) spec: RunSpec,
    pub(crate) scoring: ScoringKind,
    /// The comparison sweep that started it, if any.
    pub(crate) sweep: Option<u64>,
    cancel: AtomicBool,
    state: Mutex<RunState>,
    events: broadcast::Sender<RunEvent>,
}

/// A run as the API shows it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunInfo {
    pub(crate) id: u64,
    pub(crate) policy: String,
    pub(crate) theta: Option<f64>,
    /// The parameters given (θ included).
    pub(crate) params: BTreeMap<String, ParamValue>,
    pub(crate) budget: usize,
    /// Warm-up units (not judged; `units_total` counts the judged units).
    pub(crate) warmup_units: u32,
    /// What an oracle-mode policy was told of the history.
    pub(crate) oracle_history: OracleHistory,
    pub(crate) mode: FitMode,
    pub(crate) scoring: ScoringKind,
    pub(crate) workload: WorkloadSource,
    /// How ΔQ_A is measured.
    pub(crate) delta_q: DeltaQMethod,
    /// The change signals the site published (`["none"]` without).
    pub(crate) signals: Vec<String>,
    pub(crate) sweep: Option<u64>,
    pub(crate) status: RunStatus,
    pub(crate) error: Option<String>,
    pub(crate) units_done: usize,
    pub(crate) units_total: usize,
    /// Boxed: a run event stays small.
    pub(crate) latest: Option<Box<UnitRecord>>,
    /// Means over the units done (`null` before the first unit).
    #[serde(flatten, with = "optional_mean_keys")]
    pub(crate) mean: Option<SearchQuality>,
    /// Mean obsolete pages per unit over the units done (paper 004's measure).
    pub(crate) mean_obsolete_pages: Option<f64>,
    /// Papers 000 and 002's measures over the units done (absent before the first unit):
    /// `mean_change_ratio`, the view- and PageRank-weighted ChangeRatio, paper 000's top-k
    /// freshness and MAP@10 variants.
    #[serde(flatten)]
    pub(crate) paper_measures: PaperMeasures,
    /// When new pages are crawled, how B went to new pages and refreshes and how soon new
    /// pages were crawled (boxed: a run event stays small).
    #[serde(flatten)]
    pub(crate) new_page_report: Box<RunNewPages>,
    /// The displacement figures of a run that asked for them, once it completed (boxed: a
    /// run event stays small; absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) displacement: Option<Box<DisplacementSummary>>,
}

/// The new-page part of a [`RunInfo`].
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunNewPages {
    pub(crate) new_pages: NewPages,
    /// Means over the units done (`None` before the first) and, once the run completed, the
    /// discovery delays.
    #[serde(flatten)]
    pub(crate) summary: Option<NewPageSummary>,
}

impl Run {
    fn lock(&self) -> std::sync::MutexGuard<'_, RunState> {
        // A poisoned lock only means a publisher panicked mid-update; the data stays usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn info(&self) -> RunInfo {
        let s = self.lock();
        self.info_of(&s)
    }

    fn info_of(&self, s: &RunState) -> RunInfo {
        RunInfo {
            id: self.id,
            policy: self.spec.policy.clone(),
            theta: self.spec.theta.or(match self.spec.params.get("theta") {
                Some(ParamValue::Number(t)) => Some(*t),
                _ => None,
            }),
            params: self
                .spec
                .all_params()
                .unwrap_or_default()
                .into_iter()
                .collect(),
            budget: self.spec.budget,
            warmup_units: self.spec.warmup_units,
            oracle_history: self.spec.oracle_history,
            mode: self.spec.mode,
            scoring: self.scoring,
            workload: self.spec.workload,
            delta_q: self.spec.delta_q,
            signals: self
                .spec
                .signal_settings()
                .map(|s| s.labels())
                .unwrap_or_else(|_| self.spec.signals.clone()),
            sweep: self.sweep,
            status: s.status,
            error: s.error.clone(),
            units_done: s.history.len(),
            units_total: s.units_total,
            latest: s.history.last().cloned().map(Box::new),
            mean: SearchQuality::mean_of(&s.history.iter().map(|r| r.search).collect::<Vec<_>>()),
            mean_obsolete_pages: (!s.history.is_empty()).then(|| {
                s.history
                    .iter()
                    .map(|r| r.obsolete_pages as f64)
                    .sum::<f64>()
                    / s.history.len() as f64
            }),
            paper_measures: PaperMeasures::of_units(&s.history),
            new_page_report: Box::new(RunNewPages {
                new_pages: self.spec.new_pages,
                summary: (!s.history.is_empty()).then(|| {
                    let n = s.history.len() as f64;
                    let mean = |f: &dyn Fn(&UnitRecord) -> usize| {
                        s.history.iter().map(|r| f(r) as f64).sum::<f64>() / n
                    };
                    NewPageSummary {
                        mean_new_page_fetches: Some(mean(&|r| r.new_page_fetches)),
                        mean_refresh_fetches: Some(mean(&|r| r.refresh_fetches)),
                        mean_discovery_delay_weighted: s
                            .discovery
                            .map(|d| d.mean_discovery_delay_weighted),
                        mean_discovery_delay: s.discovery.map(|d| d.mean_discovery_delay),
                    }
                }),
            }),
            displacement: s.displacement.clone().map(Box::new),
        }
    }

    pub fn status(&self) -> RunStatus {
        self.lock().status
    }

    /// [`Self::info`] and, once the run completed, its mean quality under each of the
    /// bootstrap's resamples (read under one lock: a `done` run has them).
    pub fn info_and_resamples(&self) -> (RunInfo, Option<Arc<[f64]>>) {
        let s = self.lock();
        (self.info_of(&s), s.resampled_quality.clone())
    }

    pub fn history(&self) -> Vec<UnitRecord> {
        self.lock().history.clone()
    }

    /// The units so far, and a receiver for what follows (or the end event if finished).
    pub fn subscribe(
        &self,
    ) -> (
        Vec<UnitRecord>,
        Result<broadcast::Receiver<RunEvent>, RunInfo>,
    ) {
        let s = self.lock();
        let backlog = s.history.clone();
        if s.status.is_finished() {
            (backlog, Err(self.info_of(&s)))
        } else {
            (backlog, Ok(self.events.subscribe()))
        }
    }

    fn set_running(&self, units_total: usize) {
        let mut s = self.lock();
        s.status = RunStatus::Running;
        s.units_total = units_total;
    }

    fn set_discovery(&self, discovery: DiscoveryDelay) {
        self.lock().discovery = Some(discovery);
    }

    fn set_displacement(&self, displacement: DisplacementSummary) {
        self.lock().displacement = Some(displacement);
    }

    fn set_resampled_quality(&self, resampled: Vec<f64>) {
        self.lock().resampled_quality = Some(resampled.into());
    }

    fn push(&self, record: &UnitRecord) {
        let mut s = self.lock();
        s.history.push(record.clone());
        // No receiver is fine: nobody is watching.
        let _ = self.events.send(RunEvent::Unit(record.clone()));
    }

    /// Moves to a final status once; later calls are ignored.
    fn finish(&self, status: RunStatus, error: Option<String>) {
        let mut s = self.lock();
        if s.status.is_finished() {
            return;
        }
        s.status = status;
        s.error = error;
        let _ = self.events.send(RunEvent::End(self.info_of(&s)));
    }
}

/// Environments by (scoring, workload), with the live snapshot they were built from.
type EnvKey = (ScoringKind, WorkloadSource, DeltaQMethod);
type CachedEnv = (Vec<(Vec<String>, u64)>, Arc<Environment<'static>>);

/// Builds and caches the policy-independent environments runs share.
pub struct Environments {
    pub(crate) corpus: &'static Corpus,
    pub(crate) log: Option<Workload>,
    pub(crate) live: Arc<LiveWorkload>,
    pub(crate) config: EnvironmentConfig,
    cache: Mutex<HashMap<EnvKey, CachedEnv>>,
}

impl Environments {
    pub fn new(
        corpus: &'static Corpus,
        log: Option<Workload>,
        live: Arc<LiveWorkload>,
        config: EnvironmentConfig,
    ) -> Self {
        Environments {
            corpus,
            log,
            live,
            config,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// The environment for `scoring`, `source` and ΔQ method `delta_q`, built on first use
    /// (blocking; seconds to minutes on a real site) and rebuilt for `log+live` when the served
    /// queries changed.
    pub fn get(
        &self,
        scoring: ScoringKind,
        source: WorkloadSource,
        delta_q: DeltaQMethod,
    ) -> Result<Arc<Environment<'static>>, RunError> {
        let snapshot = match source {
            WorkloadSource::Log => Vec::new(),
            WorkloadSource::LogLive => self.live.snapshot(),
        };
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((seen, env)) = cache.get(&(scoring, source, delta_q)) {
            if *seen == snapshot {
                return Ok(env.clone());
            }
        }
        let mut workload = match &self.log {
            Some(w) => TermWorkload::new(
                w,
                &self.corpus.vocabulary,
                crate::querylog::term_workload::MetricWorkload::Queries,
            ),
            None => TermWorkload::default(),
        };
        super::live_workload::merge_counts(&mut workload, &snapshot, &self.corpus.vocabulary);
        if workload.queries.is_empty() {
            return Err(match source {
                WorkloadSource::Log => RunError::NoLogWorkload,
                WorkloadSource::LogLive => RunError::NoLiveWorkload,
            });
        }
        let config = EnvironmentConfig {
            scoring,
            delta_q,
            ..self.config.clone()
        };
        let env = Arc::new(Environment::new(self.corpus, workload, config)?);
        cache.insert((scoring, source, delta_q), (snapshot, env.clone()));
        Ok(env)
    }
}

/// All runs of a server, and the worker gate.
pub struct RunManager {
    runs: RwLock<Vec<Arc<Run>>>,
    next_id: Mutex<u64>,
    gate: Arc<Semaphore>,
    pub environments: Arc<Environments>,
    pub(crate) policies: Policies,
}

impl RunManager {
    pub fn new(environments: Arc<Environments>, policies: Policies) -> Self {
        RunManager {
            runs: RwLock::new(Vec::new()),
            next_id: Mutex::new(1),
            gate: Arc::new(Semaphore::new(1)),
            environments,
            policies,
        }
    }

    /// Validates `spec` and queues the run (call from within the tokio runtime).
    pub fn start(&self, spec: RunSpec, sweep: Option<u64>) -> Result<Arc<Run>, ApiError> {
        let mut runs = self.start_many(vec![spec], || sweep)?;
        Ok(runs.remove(0))
    }

    /// Checks one run's spec (policy, parameters, budget against the page count) without
    /// queuing anything.
    pub fn validate(&self, spec: &RunSpec) -> Result<(), ApiError> {
        if !self.policies.names.contains(&spec.policy) {
            return Err(ApiError::BadParameter(format!(
                "unknown policy `{}`; expected one of: {}",
                spec.policy,
                self.policies.names.join(", ")
            )));
        }
        let pages = self.environments.corpus.page_count();
        if spec.budget > pages {
            return Err(ApiError::BadParameter(format!(
                "`budget` {} exceeds the corpus's {pages} pages",
                spec.budget
            )));
        }
        // Builds the policy once to validate its parameters before anything is queued.
        let params = spec
            .all_params()
            .map_err(|e| ApiError::BadParameter(e.to_string()))?;
        (self.policies.make)(&spec.policy, &params)
            .map_err(|e| ApiError::BadParameter(e.to_string()))?;
        let units = self.environments.corpus.units();
        if units < 2 {
            return Err(ApiError::Conflict(
                "the corpus has a single time unit: there is nothing to refresh".into(),
            ));
        }
        spec.signal_settings()?;
        crate::sim::run::check_warmup_units("`warmup_units`", spec.warmup_units, units)
            .map_err(|e| ApiError::BadParameter(e.to_string()))?;
        crate::sim::run::check_oracle_history(
            ("`oracle_history`", "`warmup_units`"),
            spec.oracle_history,
            spec.mode,
            spec.warmup_units,
        )
        .map_err(|e| ApiError::BadParameter(e.to_string()))?;
        Ok(())
    }

    /// Validates every spec, then queues all of them or none: 400/409 when one is invalid,
    /// 429 when the queue (at most [`MAX_PENDING_RUNS`] queued or running) has no room for
    /// all. `sweep` is called only once they are accepted, so a refused request uses no sweep
    /// id. Finished runs beyond [`MAX_RUNS`] are forgotten, oldest first.
    pub fn start_many(
        &self,
        specs: Vec<RunSpec>,
        sweep: impl FnOnce() -> Option<u64>,
    ) -> Result<Vec<Arc<Run>>, ApiError> {
        for spec in &specs {
            self.validate(spec)?;
        }
        let mut runs = self.runs.write().unwrap_or_else(|e| e.into_inner());
        let pending = runs.iter().filter(|r| !r.status().is_finished()).count();
        if pending + specs.len() > MAX_PENDING_RUNS {
            return Err(ApiError::TooManyRequests(format!(
                "the run queue is full: {pending} runs queued or running, {} more asked, at \
                 most {MAX_PENDING_RUNS}; retry when some have finished (or cancel some)",
                specs.len()
            )));
        }
        let sweep = sweep();
        let mut started = Vec::with_capacity(specs.len());
        for spec in specs {
            let scoring = spec.scoring.unwrap_or(self.environments.config.scoring);
            let id = {
                let mut next = self.next_id.lock().unwrap_or_else(|e| e.into_inner());
                let id = *next;
                *next += 1;
                id
            };
            let run = Arc::new(Run {
                id,
                spec,
                scoring,
                sweep,
                cancel: AtomicBool::new(false),
                state: Mutex::new(RunState {
                    status: RunStatus::Queued,
                    error: None,
                    units_total: self.environments.corpus.units() as usize - 1,
                    history: Vec::new(),
                    discovery: None,
                    displacement: None,
                    resampled_quality: None,
                }),
                events: broadcast::channel(1024).0,
            });
            runs.push(run.clone());
            started.push(run);
        }
        while runs.len() > MAX_RUNS {
            match runs.iter().position(|r| r.status().is_finished()) {
                Some(i) => {
                    runs.remove(i);
                }
                None => break,
            }
        }
        drop(runs);
        for run in &started {
            self.spawn(run.clone());
        }
        Ok(started)
    }

    fn spawn(&self, task_run: Arc<Run>) {
        let gate = self.gate.clone();
        let envs = self.environments.clone();
        let make = self.policies.make.clone();
        tokio::spawn(async move {
            let Ok(_permit) = gate.acquire_owned().await else {
                task_run.finish(RunStatus::Failed, Some("server shutting down".into()));
                return;
            };
            if task_run.cancel.load(Ordering::Relaxed) {
                task_run.finish(RunStatus::Cancelled, None);
                return;
            }
            let worker_run = task_run.clone();
            let outcome =
                tokio::task::spawn_blocking(move || execute(&worker_run, &envs, &make)).await;
            match outcome {
                Ok(Ok(true)) => task_run.finish(RunStatus::Cancelled, None),
                Ok(Ok(false)) => task_run.finish(RunStatus::Done, None),
                Ok(Err(e)) => task_run.finish(RunStatus::Failed, Some(e.to_string())),
                Err(join) => task_run.finish(
                    RunStatus::Failed,
                    Some(format!("the run's worker stopped: {join}")),
                ),
            }
        });
    }

    pub fn get(&self, id: u64) -> Result<Arc<Run>, ApiError> {
        self.runs
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .find(|r| r.id == id)
            .cloned()
            .ok_or_else(|| ApiError::NotFound(format!("no run with id {id}")))
    }

    pub fn list(&self) -> Vec<Arc<Run>> {
        self.runs.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Asks a run to stop; 409 when it already finished.
    pub fn cancel(&self, id: u64) -> Result<Arc<Run>, ApiError> {
        let run = self.get(id)?;
        let status = run.status();
        if status.is_finished() {
            return Err(ApiError::Conflict(format!(
                "run {id} already finished ({status:?})"
            )));
        }
        run.cancel.store(true, Ordering::Relaxed);
        if status == RunStatus::Queued {
            run.finish(RunStatus::Cancelled, None);
        }
        Ok(run)
    }

    /// Refreshes done by every run so far.
    pub fn refreshes_done(&self) -> u64 {
        self.list()
            .iter()
            .map(|r| {
                r.lock()
                    .history
                    .iter()
                    .map(|u| u.refreshed as u64)
                    .sum::<u64>()
            })
            .sum()
    }
}

/// The blocking body of a run: `Ok(true)` when it was cancelled.
fn execute(run: &Run, envs: &Environments, make: &PolicyFactory) -> Result<bool, RunError> {
    let env = envs.get(run.scoring, run.spec.workload, run.spec.delta_q)?;
    if run.cancel.load(Ordering::Relaxed) {
        return Ok(true);
    }
    let policy = make(&run.spec.policy, &run.spec.all_params()?)?;
    run.set_running(env.units().saturating_sub(1 + run.spec.warmup_units) as usize);
    let mut config = RunConfig::new(run.spec.budget, run.spec.mode);
    config.warmup_units = run.spec.warmup_units;
    config.oracle_history = run.spec.oracle_history;
    if let Some(seed) = run.spec.seed {
        config.seed = seed;
    }
    config.new_pages = run.spec.new_pages;
    config.displacement = run.spec.displacement;
    config.signals = crate::signal::SignalSettings::parse(&run.spec.signals)?;
    // Every run, a sweep's or one started alone, is also judged under the bootstrap's
    // resamples (the run is otherwise the same): per judged unit that re-weights the query
    // credits the evaluation computes anyway (a sum over the workload per resample, next to
    // ranking every query's list), and it keeps the environment's shared evaluations of one
    // kind (a state evaluated without resamples is evaluated again by a run that needs them).
    // So every finished run can join a comparison with intervals (`?sweep=all` too).
    config.bootstrap = true;
    let mut cancelled = false;
    let result = run_with(&env, policy, &config, &mut |record| {
        run.push(record);
        if run.cancel.load(Ordering::Relaxed) {
            cancelled = true;
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    })?;
    run.set_discovery(result.discovery);
    if let Some(d) = result.displacement {
        run.set_displacement(d.summary);
    }
    if let (false, Some(resampled)) = (cancelled, result.resampled_quality) {
        run.set_resampled_quality(resampled);
    }
    Ok(cancelled)
}

impl Policies {
    /// Every family of [`crate::policy::registry::FAMILIES`].
    pub fn registry() -> Self {
        use crate::policy::registry::{make_policy, names};
        Policies {
            names: names().iter().map(|n| n.to_string()).collect(),
            make: Arc::new(|name: &str, params: &[(String, ParamValue)]| {
                make_policy(name, params.iter().map(|(k, v)| (k.as_str(), v.clone())))
            }),
        }
    }
}
