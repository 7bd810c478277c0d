//! Request handlers: validate, call the library, serialise. No business logic here.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Instant;

use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{MatchedPath, Path, Query, Request, State};
use axum::http::header::CONTENT_TYPE;
use axum::middleware::Next;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Json;

use crate::corpus::LiveWeb;
use futures_util::stream::{self, Stream, StreamExt};
use tokio::sync::broadcast::error::RecvError;

use super::compare::{comparison, start_sweep, Comparison, SweepSpec};
use super::error::ApiError;
use super::metrics::{Gauge, Kind};
use super::runs::{RunEvent, RunInfo, RunSpec};
use super::search::{SearchParams, SearchResponse};
use super::AppState;
use crate::sim::UnitRecord;

type AppResult<T> = Result<T, ApiError>;

/// `GET /api/search?q=&offset=&limit=`
///
/// Searches run on at most [`ServerOptions::search_threads`](super::ServerOptions) blocking
/// threads; up to [`super::SEARCH_QUEUE`] more wait, beyond that they answer 503 with
/// `Retry-After`.
/// Cross-site searches are answered but do not feed the live workload.
pub async fn search(
    State(state): State<Arc<AppState>>,
    headers: axum::http::HeaderMap,
    params: Result<Query<SearchParams>, QueryRejection>,
) -> AppResult<Json<SearchResponse>> {
    use std::sync::atomic::Ordering;
    let request = params?.0.validate()?;
    let threads = state.options.search_threads.max(1);
    let limit = threads + super::SEARCH_QUEUE;
    if state.search_pending.fetch_add(1, Ordering::AcqRel) >= limit {
        state.search_pending.fetch_sub(1, Ordering::AcqRel);
        return Err(ApiError::Overloaded(format!(
            "the server is busy: {limit} searches running or queued; retry shortly"
        )));
    }
    struct Pending<'a>(&'a std::sync::atomic::AtomicUsize);
    impl Drop for Pending<'_> {
        fn drop(&mut self) {
            self.0.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
        }
    }
    let _pending = Pending(&state.search_pending);
    let permit = state
        .search_slots
        .clone()
        .acquire_owned()
        .await
        .map_err(|_| ApiError::Internal("the search pool is closed".into()))?;
    let service = state.search.clone();
    let work = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        service.search(&request)
    });
    let response = tokio::time::timeout(state.options.search_timeout, work)
        .await
        .map_err(|_| {
            ApiError::Timeout(format!(
                "the search took longer than {:?}",
                state.options.search_timeout
            ))
        })?
        .map_err(|e| ApiError::Internal(format!("search worker stopped: {e}")))??;
    if !super::guard::is_cross_site(&headers) {
        state.live.record(&response.terms);
    }
    Ok(Json(response))
}

/// `GET /api/quality`: the served repository's quality per unit and every run's history.
pub async fn quality(State(state): State<Arc<AppState>>) -> Json<serde_json::Value> {
    let runs: Vec<serde_json::Value> = state
        .runs
        .list()
        .iter()
        .map(|r| {
            serde_json::json!({
                "run": r.info(),
                "history": r.history(),
            })
        })
        .collect();
    Json(serde_json::json!({
        "served_unit": state.search.served_unit,
        "live_unit": state.search.live_unit,
        "corpus": {
            "pages": state.search.corpus.page_count(),
            "units": state.search.corpus.units(),
            "collections": state.search.corpus.collections_json(),
        },
        "current": state.current_serving(),
        "serving": state.serving,
        // The served index split over a mesh's workers by host (`serve --workers`,
        // `--processes`); null for one index.
        "shards": state.search.shards().map(|s| serde_json::json!({
            "by": "host",
            "pages_per_shard": s.layout.pages_per_shard,
            "skew": s.layout.skew,
        })),
        "live_workload": {
            "distinct_queries": state.live.distinct(),
            "submissions": state.live.submissions(),
        },
        "runs": runs,
    }))
}

/// `GET /api/policies`
pub async fn policies(State(state): State<Arc<AppState>>) -> Json<serde_json::Value> {
    // `families`: each family of the table with its parameters (the server may offer more
    // names than the table, e.g. in tests; those have no entry).
    Json(serde_json::json!({
        "policies": state.runs.policies.names,
        "families": crate::policy::registry::families_json(),
        // What a comparison runs when none are chosen (paper 003's schemes and baselines).
        "default_comparison": crate::policy::registry::DEFAULT_COMPARISON,
    }))
}

/// `GET /api/chart-style`: how each policy family is drawn, the table the SVG charts use too,
/// so the web UI never keeps its own copy.
pub async fn chart_style() -> Json<serde_json::Value> {
    Json(crate::report::chart_style::to_json())
}

/// `GET /api/runs`
pub async fn list_runs(State(state): State<Arc<AppState>>) -> Json<Vec<RunInfo>> {
    Json(state.runs.list().iter().map(|r| r.info()).collect())
}

/// `POST /api/runs` with a [`RunSpec`]: 202 and the queued run.
pub async fn start_run(
    State(state): State<Arc<AppState>>,
    spec: Result<Json<RunSpec>, JsonRejection>,
) -> AppResult<(axum::http::StatusCode, Json<RunInfo>)> {
    let run = state.runs.start(spec?.0, None)?;
    Ok((axum::http::StatusCode::ACCEPTED, Json(run.info())))
}

/// `GET /api/runs/{id}`: the run with its full history.
pub async fn get_run(
    State(state): State<Arc<AppState>>,
    id: Result<Path<u64>, PathRejection>,
) -> AppResult<Json<serde_json::Value>> {
    let run = state.runs.get(id?.0)?;
    Ok(Json(serde_json::json!({
        "run": run.info(),
        "history": run.history(),
    })))
}

/// `POST /api/runs/{id}/cancel` or `DELETE /api/runs/{id}`.
pub async fn cancel_run(
    State(state): State<Arc<AppState>>,
    id: Result<Path<u64>, PathRejection>,
) -> AppResult<Json<RunInfo>> {
    Ok(Json(state.runs.cancel(id?.0)?.info()))
}

/// `GET /api/runs/{id}/events`: server-sent events — one `unit` event per finished unit (the
/// units done so far first), then one `end` event with the final run, then the stream closes.
pub async fn run_events(
    State(state): State<Arc<AppState>>,
    id: Result<Path<u64>, PathRejection>,
) -> AppResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    let run = state.runs.get(id?.0)?;
    let (backlog, live) = run.subscribe();
    let backlog = stream::iter(backlog.into_iter().map(|r| Ok(unit_event(&r))));
    let tail = match live {
        Err(info) => stream::iter(vec![Ok(end_event(&info))]).boxed(),
        Ok(rx) => stream::unfold(Some(rx), |rx| async move {
            let mut rx = rx?;
            match rx.recv().await {
                Ok(RunEvent::Unit(r)) => Some((Ok(unit_event(&r)), Some(rx))),
                Ok(RunEvent::End(info)) => Some((Ok(end_event(&info)), None)),
                // A slow client missed some units; it can refetch the history.
                Err(RecvError::Lagged(n)) => Some((
                    Ok(Event::default().event("lagged").data(n.to_string())),
                    Some(rx),
                )),
                Err(RecvError::Closed) => None,
            }
        })
        .boxed(),
    };
    Ok(Sse::new(backlog.chain(tail)).keep_alive(KeepAlive::default()))
}

fn unit_event(r: &UnitRecord) -> Event {
    Event::default()
        .event("unit")
        .data(serde_json::to_string(r).unwrap_or_default())
}

fn end_event(info: &RunInfo) -> Event {
    Event::default()
        .event("end")
        .data(serde_json::to_string(info).unwrap_or_default())
}

/// Query of `GET /api/compare`.
#[derive(Debug, serde::Deserialize)]
pub struct CompareParams {
    /// A sweep id, or `all` for every run; default the latest sweep, or every run when no
    /// sweep was started.
    pub(crate) sweep: Option<String>,
}

/// `GET /api/compare[?sweep=N|all]`: the Fig. 4 table and curves of finished runs.
pub async fn get_comparison(
    State(state): State<Arc<AppState>>,
    params: Result<Query<CompareParams>, QueryRejection>,
) -> AppResult<Json<Comparison>> {
    let sweep = match params?.0.sweep.as_deref().map(str::trim) {
        None | Some("") => state.latest_sweep(),
        Some("all") => None,
        Some(id) => {
            let id: u64 = id.parse().map_err(|_| {
                ApiError::BadParameter(format!(
                    "sweep must be a sweep id or `all`, not {:?}",
                    crate::report::terminal_safe(id)
                ))
            })?;
            match state.latest_sweep() {
                Some(latest) if id >= 1 && id <= latest => Some(id),
                Some(_) => return Err(ApiError::NotFound(format!("no sweep with id {id}"))),
                None => return Err(ApiError::NotFound("no sweep was started yet".into())),
            }
        }
    };
    Ok(Json(comparison(&state.runs.list(), sweep)))
}

/// `POST /api/compare` with a [`SweepSpec`]: queues every (policy, budget) run.
pub async fn start_comparison(
    State(state): State<Arc<AppState>>,
    spec: Result<Json<SweepSpec>, JsonRejection>,
) -> AppResult<(axum::http::StatusCode, Json<serde_json::Value>)> {
    let spec = spec?.0;
    let (sweep, runs) = start_sweep(&state.runs, || state.take_sweep_id(), spec)?;
    Ok((
        axum::http::StatusCode::ACCEPTED,
        Json(serde_json::json!({ "sweep": sweep, "runs": runs })),
    ))
}

/// `GET /api/engine`: the served engine's state (`{"enabled": false}` without `--policy`).
pub async fn engine_status(State(state): State<Arc<AppState>>) -> Json<serde_json::Value> {
    Json(match state.engine.get() {
        Some(engine) => {
            let mut v = serde_json::to_value(engine.status()).unwrap_or_default();
            v["enabled"] = serde_json::Value::Bool(true);
            v
        }
        None => serde_json::json!({"enabled": false}),
    })
}

/// `GET /metrics`: Prometheus text format.
pub async fn metrics(State(state): State<Arc<AppState>>) -> Response {
    let repo = state.search.repo();
    // Over shards only the document count is known here (each shard is in its own worker).
    let (segments, forward_bytes) = repo.as_ref().map_or((0.0, 0.0), |r| {
        (r.segment_count() as f64, r.forward().memory_bytes() as f64)
    });
    drop(repo);
    let runs = state.runs.list();
    let active = runs.iter().filter(|r| !r.status().is_finished()).count();
    let mut run_quality = Vec::new();
    for r in &runs {
        if let Some(latest) = r.info().latest {
            run_quality.push((
                vec![r.id.to_string(), r.spec.policy.clone()],
                latest.search.quality,
            ));
        }
    }
    let one = |v: f64| vec![(Vec::new(), v)];
    let gauge = |name, help, values| Gauge {
        name,
        help,
        kind: Kind::Gauge,
        labels: &[],
        values,
    };
    let counter = |name, help, values| Gauge {
        name,
        help,
        kind: Kind::Counter,
        labels: &[],
        values,
    };
    let refreshes = state.runs.refreshes_done() as f64;
    let submissions = state.live.submissions() as f64;
    let gauges = [
        gauge(
            "refresher_index_documents",
            "Documents in the served repository.",
            one(state.search.num_docs() as f64),
        ),
        gauge(
            "refresher_index_segments",
            "Searchable tantivy segments of the served repository.",
            one(segments),
        ),
        gauge(
            "refresher_forward_index_bytes",
            "Approximate memory of the served repository's forward index.",
            one(forward_bytes),
        ),
        counter(
            "refresher_refreshes_total",
            "Pages refreshed by every simulation run so far.",
            one(refreshes),
        ),
        gauge(
            "refresher_refreshes_done",
            "Deprecated: the same count as refresher_refreshes_total, kept for existing dashboards.",
            one(refreshes),
        ),
        gauge(
            "refresher_runs_active",
            "Runs queued or running.",
            one(active as f64),
        ),
        gauge(
            "refresher_serving_quality",
            "Quality Q(W_L) of the served repository at the live unit (needs --log).",
            state
                .current_serving()
                .map(|p| one(p.search.quality))
                .unwrap_or_default(),
        ),
        Gauge {
            name: "refresher_run_quality",
            help: "Repository quality after the latest unit of each run.",
            kind: Kind::Gauge,
            labels: &["run", "policy"],
            values: run_quality,
        },
        counter(
            "refresher_live_workload_submissions_total",
            "Queries served and counted into the live workload.",
            one(submissions),
        ),
        gauge(
            "refresher_live_workload_submissions",
            "Deprecated: the same count as refresher_live_workload_submissions_total, kept for existing dashboards.",
            one(submissions),
        ),
    ];
    (
        [(CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")],
        state.metrics.render(&gauges),
    )
        .into_response()
}

/// Unknown routes: a JSON 404.
pub async fn not_found(request: Request) -> ApiError {
    ApiError::NotFound(format!(
        "no route for {} {}",
        request.method(),
        request.uri().path()
    ))
}

/// Middleware: bounds the time to a response head and records every request's route, status
/// and latency.
pub async fn track(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().to_string();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "unmatched".to_string());
    let timeout = state.options.request_timeout;
    let response = match tokio::time::timeout(timeout, next.run(request)).await {
        Ok(r) => r,
        Err(_) => ApiError::Timeout(format!("no response within {timeout:?}")).into_response(),
    };
    state.metrics.observe(
        &method,
        &route,
        response.status().as_u16(),
        started.elapsed(),
    );
    response
}

/// `POST /api/webfountain` body: a paper 004 model instance (the layout of `refresher
/// webfountain --instance`, inline, or the word `"paper-like"`) and what to solve it for.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebFountainSpec {
    pub(crate) instance: serde_json::Value,
    pub(crate) strategy: u8,
    #[serde(default)]
    pub(crate) eps: Option<f64>,
    #[serde(default)]
    pub(crate) max_iterations: Option<usize>,
}

/// Frank–Wolfe steps per start when a request gives none, and the most it may ask for: the
/// paper-like instance's Strategy 1 takes ~2.7 ms a step, so a solve stays under a minute.
pub const WEBFOUNTAIN_DEFAULT_ITERATIONS: usize = 2_000;
pub const WEBFOUNTAIN_MAX_ITERATIONS: usize = 20_000;

/// `POST /api/webfountain`: solves the instance (one solve at a time; 429 while one runs).
pub async fn solve_webfountain(
    spec: Result<Json<WebFountainSpec>, JsonRejection>,
) -> AppResult<Json<serde_json::Value>> {
    use crate::policy::webfountain::instance::{Instance, PAPER_LIKE};
    use crate::policy::webfountain::{solve, SolveRequest};
    static BUSY: std::sync::OnceLock<Arc<tokio::sync::Semaphore>> = std::sync::OnceLock::new();
    let spec = spec?.0;
    let instance = match &spec.instance {
        serde_json::Value::String(s) if s == PAPER_LIKE => Instance::paper_like(),
        serde_json::Value::Object(_) => Instance::from_json(&spec.instance.to_string())
            .map_err(|e| ApiError::BadParameter(format!("instance: {e}")))?,
        _ => {
            return Err(ApiError::BadParameter(format!(
                "instance: expected a model object or \"{PAPER_LIKE}\""
            )))
        }
    };
    let max_iterations = spec
        .max_iterations
        .unwrap_or(WEBFOUNTAIN_DEFAULT_ITERATIONS);
    if max_iterations == 0 || max_iterations > WEBFOUNTAIN_MAX_ITERATIONS {
        return Err(ApiError::BadParameter(format!(
            "max_iterations: {max_iterations} is not in 1 … {WEBFOUNTAIN_MAX_ITERATIONS}"
        )));
    }
    let request = SolveRequest {
        strategy: spec.strategy,
        epsilon: spec.eps,
        max_iterations,
    };
    let permit = BUSY
        .get_or_init(|| Arc::new(tokio::sync::Semaphore::new(1)))
        .clone()
        .try_acquire_owned()
        .map_err(|_| {
            ApiError::TooManyRequests("a WebFountain model is being solved; retry shortly".into())
        })?;
    let report = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        solve(&instance, request)
    })
    .await
    .map_err(|e| ApiError::Internal(format!("the solver stopped: {e}")))?
    // `solve`'s errors name the parameter (`strategy: …`, `eps: …`) or the instance's field.
    .map_err(|e| ApiError::BadParameter(e.to_string()))?;
    Ok(Json(serde_json::to_value(report).map_err(|e| {
        ApiError::Internal(format!("encoding the plan: {e}"))
    })?))
}
