//! The HTTP front end: search, quality dashboards, simulation runs, scheme comparison and
//! Prometheus metrics over one repository, with the web UI of `web/` compiled into the binary.
//!
//! * [`AppState`]: everything handlers share, behind one `Arc` — the [`SearchService`] (a
//!   fixed repository crawled at `served_unit`, read without locks), the [`RunManager`], the
//!   [`LiveWorkload`] fed by served queries, the request [`Metrics`].
//! * [`router`]: the routes; handlers in [`handlers`] only validate, call the library and
//!   serialise. Every failure is an [`ApiError`] (JSON body, 4xx for the caller's mistakes).
//! * The client side (`refresher replay`, the tests' HTTP client) lives in [`crate::client`].
//!
//! The API is described by `web/openapi.json`, served at `/api/openapi.json`.

pub mod assets;
pub mod compare;
pub mod engine;
pub mod error;
pub mod guard;
pub mod handlers;
pub mod live_workload;
pub mod metrics;
pub mod runs;
pub mod search;
pub mod shards;
pub mod snippet;

use crate::fetch::SnapshotFetcher;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::routing::{get, post};
use axum::Router;

use crate::corpus::is_fresh;
use crate::corpus::{Corpus, LiveWeb, PageId, Unit};
use crate::index::{IndexError, ScoringKind};
use crate::mesh::{Greeting, MeshConfig};
use crate::quality::SearchQuality;
use crate::querylog::workload::Workload;
use crate::sim::EnvironmentConfig;

pub use error::ApiError;
pub use live_workload::LiveWorkload;
pub use metrics::Metrics;
pub use runs::{Policies, PolicyFactory, RunManager, RunSpec, RunStatus, WorkloadSource};
pub use search::{SearchResponse, SearchService};

/// How a server is set up (the `serve` flags, minus the data).
#[derive(Clone)]
pub struct ServerOptions {
    /// Unit whose versions the served repository holds.
    pub served_unit: Unit,
    /// Unit of the live Web for stale markers and the serving quality (default: the last).
    pub live_unit: Option<Unit>,
    pub scoring: ScoringKind,
    /// Keep the served index on disk here: reopened when its manifest matches, built
    /// crash-safely otherwise (see [`crate::index::served`]).
    pub index_dir: Option<PathBuf>,
    /// Replace an index directory that holds something else instead of refusing it.
    pub rebuild_index: bool,
    /// Longest a search may take before the request answers 503.
    pub search_timeout: Duration,
    /// Longest any other request may take to produce its response head.
    pub(crate) request_timeout: Duration,
    /// Hosts accepted in `Host` (`*`: any); `None`: the bound address and localhost.
    pub allowed_hosts: Option<Vec<String>>,
    /// Searches running at once (default: the cores); more wait in a queue of at most
    /// [`SEARCH_QUEUE`], beyond which a search answers 503 with `Retry-After`. A waiting search
    /// holds no thread, only its request.
    pub search_threads: usize,
    pub(crate) policies: Policies,
    /// Split the served copies over a mesh's workers by host ([`shards`]): the mesh to run
    /// and what its processes must agree on. `None`: one repository.
    pub shards: Option<(MeshConfig, Greeting)>,
}

/// Why a server could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error(transparent)]
    Index(#[from] IndexError),
    #[error("the sharded index: {0}")]
    Shards(#[from] shards::ShardError),
}

/// Searches that may wait for a search thread before new ones answer 503.
pub const SEARCH_QUEUE: usize = 1024;

impl ServerOptions {
    pub fn new(policies: Policies) -> Self {
        ServerOptions {
            served_unit: 0,
            live_unit: None,
            scoring: ScoringKind::Bm25,
            index_dir: None,
            rebuild_index: false,
            search_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(10),
            allowed_hosts: None,
            search_threads: std::thread::available_parallelism().map_or(2, |n| n.get()),
            policies,
            shards: None,
        }
    }
}

/// Quality of the served (never refreshed) repository against the live Web at each unit from
/// the served unit on: how far what users see drifts without the refresher.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ServingPoint {
    pub(crate) unit: Unit,
    #[serde(flatten)]
    pub(crate) search: SearchQuality,
}

/// Everything the handlers share.
pub struct AppState {
    pub search: Arc<SearchService>,
    pub runs: RunManager,
    pub live: Arc<LiveWorkload>,
    pub(crate) metrics: Metrics,
    /// Serving quality per unit (needs a workload, so only with `--log`).
    pub(crate) serving: Vec<ServingPoint>,
    pub options: ServerOptions,
    /// Bounds concurrent searches ([`ServerOptions::search_threads`]).
    pub(crate) search_slots: Arc<tokio::sync::Semaphore>,
    /// Searches running or waiting for a slot.
    pub search_pending: std::sync::atomic::AtomicUsize,
    next_sweep: Mutex<u64>,
    /// The served engine, when the server refreshes its own index (`serve --policy`).
    pub engine: std::sync::OnceLock<Arc<engine::ServedEngine>>,
}

/// Quality of the served (never refreshed) copies against the live Web at each unit from the
/// served unit on. Over shards, every query's list is merged once at the leader: the copies
/// never change, only the live Web they are judged against.
fn serving_history(
    search: &SearchService,
    env: &crate::sim::Environment,
) -> Result<Vec<ServingPoint>, BuildError> {
    let corpus = search.corpus;
    let served_unit = search.served_unit;
    let held = |p: PageId| corpus.page_at(p, served_unit).present().map(|v| v.unit);
    let queries = &env.workload.queries;
    let rankings = search.shard_rankings(queries)?;
    let mut serving = Vec::new();
    for unit in served_unit..corpus.units() {
        let fresh = |p: PageId| is_fresh(corpus, p, held(p), unit);
        let m = search.judge(
            rankings.as_deref(),
            queries,
            &env.truths[unit as usize],
            &env.config.likelihood,
            &fresh,
        )?;
        serving.push(ServingPoint {
            unit,
            search: m.search,
        });
    }
    Ok(serving)
}

impl AppState {
    /// Indexes (or reopens) the served repository and, with a log, builds the default
    /// environment and the serving-quality history. Blocking; takes the corpus for the life
    /// of the process.
    ///
    /// The corpus is leaked on purpose: runs borrow it from background threads for as long as
    /// the server lives, and a server lives until the process ends.
    pub fn build(
        corpus: Corpus,
        log: Option<Workload>,
        options: ServerOptions,
    ) -> Result<Arc<AppState>, BuildError> {
        let corpus: &'static Corpus = Box::leak(Box::new(corpus));
        let last = corpus.units().saturating_sub(1);
        let served_unit = options.served_unit.min(last);
        let live_unit = options.live_unit.unwrap_or(last).min(last);
        let search = match (&options.shards, &options.index_dir) {
            (Some((config, greeting)), _) => {
                let shards = shards::ShardedIndex::start(
                    corpus,
                    shards::ShardSetup {
                        unit: served_unit,
                        scoring: options.scoring,
                        index_dir: options.index_dir.clone(),
                        rebuild: options.rebuild_index,
                    },
                    config.clone(),
                    greeting.clone(),
                )?;
                SearchService::sharded(corpus, Arc::new(shards), served_unit, live_unit)
            }
            (None, Some(dir)) => {
                let repo = crate::index::served::open_or_build(
                    dir,
                    corpus,
                    served_unit,
                    options.scoring,
                    options.rebuild_index,
                )?
                .0;
                SearchService::new(corpus, repo, served_unit, live_unit)
            }
            (None, None) => {
                let repo = SnapshotFetcher::new(corpus).repository_at(
                    served_unit,
                    options.scoring,
                    None,
                )?;
                SearchService::new(corpus, repo, served_unit, live_unit)
            }
        };
        let search = Arc::new(search);
        let live = Arc::new(LiveWorkload::default());
        let has_log = log.is_some();
        let environments = Arc::new(runs::Environments::new(
            corpus,
            log,
            live.clone(),
            EnvironmentConfig {
                scoring: options.scoring,
                ..EnvironmentConfig::default()
            },
        ));
        let environment = has_log.then(|| {
            environments.get(
                options.scoring,
                WorkloadSource::Log,
                crate::quality::measure::DeltaQMethod::Estimate,
            )
        });
        let serving = match environment {
            Some(Ok(env)) => serving_history(&search, &env)?,
            _ => Vec::new(),
        };
        Ok(Arc::new(AppState {
            search,
            runs: RunManager::new(environments, options.policies.clone()),
            live,
            metrics: Metrics::default(),
            serving,
            search_slots: Arc::new(tokio::sync::Semaphore::new(options.search_threads.max(1))),
            search_pending: std::sync::atomic::AtomicUsize::new(0),
            options: ServerOptions {
                served_unit,
                live_unit: Some(live_unit),
                ..options
            },
            next_sweep: Mutex::new(1),
            engine: std::sync::OnceLock::new(),
        }))
    }

    /// Starts the served engine: the index refreshes itself with `spec`'s policy, one unit of
    /// the snapshot history every `spec.unit_seconds`. Needs a log (the workload) and the
    /// index served at unit 0 (where the refresh loop starts).
    pub fn start_engine(&self, spec: &engine::RefreshSpec) -> Result<(), engine::EngineError> {
        if self.search.served_unit != 0 {
            return Err(engine::EngineError::ServedUnit {
                unit: self.search.served_unit,
            });
        }
        if !(spec.unit_seconds.is_finite() && spec.unit_seconds > 0.0) {
            return Err(engine::EngineError::UnitSeconds {
                seconds: spec.unit_seconds,
            });
        }
        let env = self
            .runs
            .environments
            .get(
                self.options.scoring,
                WorkloadSource::Log,
                crate::quality::measure::DeltaQMethod::Estimate,
            )
            .map_err(engine::EngineError::NoWorkload)?;
        let engine = engine::ServedEngine::start(
            spec,
            env,
            Arc::clone(&self.search),
            Arc::clone(&self.live),
        )?;
        self.engine
            .set(engine)
            .map_err(|_| engine::EngineError::AlreadyStarted)
    }

    /// The serving quality at the live unit.
    pub fn current_serving(&self) -> Option<&ServingPoint> {
        self.serving
            .iter()
            .find(|p| Some(p.unit) == self.options.live_unit)
    }

    fn take_sweep_id(&self) -> u64 {
        let mut n = self.next_sweep.lock().unwrap_or_else(|e| e.into_inner());
        let id = *n;
        *n += 1;
        id
    }

    /// The newest sweep id handed out, if any.
    pub fn latest_sweep(&self) -> Option<u64> {
        let n = *self.next_sweep.lock().unwrap_or_else(|e| e.into_inner());
        (n > 1).then(|| n - 1)
    }
}

/// Most bytes of a request body (run and sweep specs are tiny).
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// Every route of the server.
pub fn router(state: Arc<AppState>) -> Router {
    use handlers::*;
    Router::new()
        .route("/", get(assets::search_page))
        .route("/dashboard", get(assets::dashboard_page))
        .route("/compare", get(assets::compare_page))
        .route("/webfountain", get(assets::webfountain_page))
        .route("/static/{file}", get(assets::static_file))
        .route("/api/openapi.json", get(assets::openapi))
        .route("/api/search", get(search))
        .route("/api/quality", get(quality))
        .route("/api/policies", get(policies))
        .route("/api/chart-style", get(chart_style))
        .route("/api/runs", get(list_runs).post(start_run))
        .route("/api/runs/{id}", get(get_run).delete(cancel_run))
        .route("/api/runs/{id}/cancel", post(cancel_run))
        .route("/api/runs/{id}/events", get(run_events))
        .route("/api/compare", get(get_comparison).post(start_comparison))
        .route("/api/engine", get(engine_status))
        .route("/api/webfountain", post(solve_webfountain))
        .route("/metrics", get(metrics))
        .fallback(not_found)
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn_with_state(state.clone(), track))
        .layer(axum::middleware::from_fn(guard::security_headers))
        .with_state(state)
}

/// Binds `addr` and serves until the process ends; returns the bound address once listening
/// (port 0 picks a free port).
pub async fn spawn(
    state: Arc<AppState>,
    addr: SocketAddr,
) -> std::io::Result<(SocketAddr, tokio::task::JoinHandle<std::io::Result<()>>)> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let allowed = Arc::new(match &state.options.allowed_hosts {
        Some(hosts) => guard::AllowedHosts(hosts.iter().map(|h| h.to_ascii_lowercase()).collect()),
        None => guard::AllowedHosts::default_for(bound),
    });
    let app = router(state)
        .layer(axum::middleware::from_fn_with_state(allowed, guard::check))
        .layer(axum::middleware::from_fn(guard::security_headers));
    let handle = tokio::spawn(serve_connections(listener, app));
    Ok((bound, handle))
}

/// Longest a connection may take to send a request's header, and longest an idle keep-alive
/// connection is kept (hyper's header-read timer also runs while waiting for the next request).
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Largest request header accepted (bytes).
pub const MAX_HEADER_BYTES: usize = 16 * 1024;

/// The accept loop: one HTTP/1 connection per socket with [`HEADER_READ_TIMEOUT`] (so slow or
/// idle clients cannot hold sockets for ever) and [`MAX_HEADER_BYTES`]. Accept errors (e.g. out
/// of file descriptors) pause the loop briefly instead of ending it.
async fn serve_connections(listener: tokio::net::TcpListener, app: Router) -> std::io::Result<()> {
    use hyper_util::rt::{TokioIo, TokioTimer};
    use hyper_util::service::TowerToHyperService;
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(s) => s,
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(app.clone());
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_READ_TIMEOUT)
                .max_buf_size(MAX_HEADER_BYTES.max(8192))
                .keep_alive(true)
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
