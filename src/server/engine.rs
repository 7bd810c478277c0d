//! The served engine (`serve --policy P --budget B --unit-seconds S`): the search engine
//! keeps its own index fresh. A background thread advances the live Web one unit every S
//! seconds (the snapshot history of `--corpus`), runs the policy's refresh loop — the same
//! [`crate::refresh::Refresher`] as `simulate --mode online` — and applies each unit's refreshes and new pages
//! to the served index under its write lock, so searches see them as they commit and stale
//! markers compare against the current unit. The truth is known (snapshot history), so every
//! unit also records the exact quality, fresh@10 and MAP@10 of the index users search.
//!
//! The workload the engine steers by is the log's (`--log`) plus the queries the server has
//! answered so far: at the start of every unit, served queries are added to the log's counts
//! (a served query equal to a logged one adds to its frequency, a new one joins with its own;
//! the same merge as `"workload": "log+live"` runs) and the ΔQ measurement is rebuilt over
//! them. The judged quality stays over the log's workload, so units remain comparable.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::corpus::{is_fresh, LiveWeb, PageId, Unit};
use crate::index::{IndexError, PageUpdate};
use crate::judge::exact::evaluate;
use crate::policy::family::{ParamValue, PolicyError};
use crate::policy::registry::family;
use crate::policy::FitMode;
use crate::quality::SearchQuality;
use crate::sim::run::refresher_for_changing_workload;
use crate::sim::{Environment, RunConfig};

use super::live_workload::{merge_counts, LiveWorkload};
use super::runs::RunError;
use super::search::{EngineView, SearchService};
use crate::sim::environment::measurement;

/// Why the served engine did not start, or stopped (`GET /api/engine`'s `error`). Messages
/// name the `serve` flag at fault.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The index is served at another unit than 0, where the refresh loop starts.
    #[error("--policy: the engine starts from the crawl at unit 0, but --unit {unit} was asked")]
    ServedUnit { unit: Unit },
    /// A unit length that is not a positive number of seconds.
    #[error("--unit-seconds {seconds}: must be positive")]
    UnitSeconds { seconds: f64 },
    /// No workload to steer by.
    #[error("--policy needs --log: {0}")]
    NoWorkload(RunError),
    /// The policy was refused.
    #[error("--policy {policy}: {error}")]
    Policy { policy: String, error: PolicyError },
    /// The policy, built a second time for its label, was refused.
    #[error(transparent)]
    Label(PolicyError),
    /// A budget larger than the corpus.
    #[error("--budget {budget}: exceeds the {pages} pages of the corpus")]
    Budget { budget: usize, pages: usize },
    /// A warm-up that leaves nothing to judge.
    #[error(transparent)]
    WarmUp(#[from] crate::sim::run::RunConfigError),
    /// The engine's thread could not start.
    #[error("starting the engine thread: {0}")]
    Thread(std::io::Error),
    /// The served index's shards could not rank the workload's queries.
    #[error("the served index's shards: {0}")]
    Shards(#[from] super::shards::ShardError),
    /// A unit's copies could not be applied to the served index.
    #[error("applying unit {unit} to the served index: {error}")]
    Serve {
        unit: Unit,
        error: super::search::RefreshError,
    },
    /// The engine was started already.
    #[error("the engine was started already")]
    AlreadyStarted,
    /// Modelled signals asked of a crawling engine, which reads the site's own.
    #[error("--signals models the replayed site's signals; a crawling engine (--crawl) reads the crawled site's own sitemap and feed")]
    SignalsWithCrawl,
    /// The refresh loop or the served index failed.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// The HTTP fetcher could not be built.
    #[error("starting the fetcher: {0}")]
    Fetcher(crate::fetch::http::FetcherError),
    /// The initial crawl fetched nothing.
    #[error(
        "the initial crawl fetched no page ({errors} errors, {disallowed} disallowed by robots.txt)"
    )]
    NothingFetched { errors: u64, disallowed: u64 },
    /// The clock client's runtime could not start.
    #[error(transparent)]
    ClockClient(std::io::Error),
    /// `web-replay`'s clock did not move.
    #[error("advancing the clock at {url}: {error}")]
    Clock {
        url: String,
        error: crate::web_replay::ClockError,
    },
    /// A crawled unit failed.
    #[error(transparent)]
    Crawl(crate::live::LiveError),
    /// A crawled unit could not be judged.
    #[error("judging unit {unit}: {error}")]
    Judge {
        unit: Unit,
        error: crate::live::LiveError,
    },
}

/// What `serve --policy` asks for.
#[derive(Debug, Clone)]
pub struct RefreshSpec {
    pub policy: String,
    pub params: Vec<(String, ParamValue)>,
    pub budget: usize,
    /// Wall-clock seconds per unit.
    pub unit_seconds: f64,
    pub seed: u64,
    /// Units `1..=W` refresh every held page outside the budget (paper 001 §5.2). 0: none.
    pub warmup_units: u32,
    /// Refresh by crawling over HTTP instead of replaying the corpus's history (the corpus
    /// then judges the crawl and names the pages the index serves).
    pub crawl: Option<CrawlSource>,
    /// The change signals the replayed site publishes ([`crate::signal`]; `none` by default).
    /// A crawling engine reads the crawled site's own instead.
    pub signals: crate::signal::SignalSettings,
}

/// Where a crawling served engine starts and how it fetches.
#[derive(Debug, Clone)]
pub struct CrawlSource {
    pub options: crate::fetch::http::HttpOptions,
    /// The initial URLs (a sitemap's are read at start when `options.discovery` names one).
    pub urls: Vec<String>,
    pub max_pages: usize,
    /// POSTed (`?unit=U`) at the start of every unit: a `web-replay --manual-clock` endpoint.
    pub advance_clock: Option<String>,
}

/// One unit of the served engine.
#[derive(Debug, Clone, serde::Serialize)]
pub struct EngineUnit {
    pub unit: Unit,
    pub(crate) refreshed: usize,
    /// Refreshes that found a new copy.
    pub(crate) changes_found: usize,
    /// Refreshes that found the held copy (a 304).
    pub(crate) not_modified: usize,
    /// New pages crawled outside the budget.
    pub(crate) discovered: usize,
    /// Σ of the hook-estimated ΔQ of this unit's refreshes.
    pub(crate) estimated_delta_q: f64,
    /// Exact quality of the served index against the live Web at this unit.
    #[serde(flatten)]
    pub(crate) search: SearchQuality,
    /// URLs refreshed this unit, in the policy's order.
    pub refreshed_urls: Vec<String>,
}

impl EngineUnit {
    /// The record of `step`, judged `search`; `not_modified` as the fetcher counted it (304s),
    /// else the refreshes that found no change.
    fn of(
        step: &crate::refresh::StepReport,
        not_modified: Option<usize>,
        search: SearchQuality,
        url: impl Fn(PageId) -> String,
    ) -> Self {
        let outcomes = step.refresh_outcomes();
        EngineUnit {
            unit: step.unit,
            refreshed: step.refreshed.len(),
            changes_found: outcomes.iter().filter(|o| o.changed).count(),
            not_modified: not_modified
                .unwrap_or_else(|| outcomes.iter().filter(|o| !o.changed && !o.gone).count()),
            discovered: step.outcomes.iter().filter(|o| o.discovered).count(),
            estimated_delta_q: outcomes.iter().map(|o| o.delta_q).sum(),
            search,
            refreshed_urls: step.refreshed.iter().map(|&p| url(p)).collect(),
        }
    }
}

/// The served engine's state, as `GET /api/engine` reports it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct EngineStatus {
    pub(crate) policy: String,
    pub(crate) label: String,
    pub(crate) budget: usize,
    pub(crate) unit_seconds: f64,
    /// The unit the index is refreshed up to (0 before the first).
    pub(crate) unit: Unit,
    /// The last unit of the snapshot history.
    pub(crate) last_unit: Unit,
    pub(crate) finished: bool,
    pub(crate) refreshes: usize,
    pub(crate) changes_found: usize,
    pub(crate) not_modified: usize,
    pub(crate) discovered: usize,
    pub(crate) errors: usize,
    /// Distinct served queries merged into the workload the engine steers by.
    pub(crate) served_queries: usize,
    /// The change signals the replayed site publishes (`["none"]` without).
    pub(crate) signals: Vec<String>,
    /// Quality of the served index at the current unit (unit 0: before any refresh).
    #[serde(flatten)]
    pub(crate) search: SearchQuality,
    pub per_unit: Vec<EngineUnit>,
    /// Why the engine stopped early, if it did.
    pub(crate) error: Option<String>,
    /// Fetch counts per host (a crawling engine).
    pub(crate) hosts: Option<std::collections::BTreeMap<String, crate::fetch::http::HostReport>>,
}

/// A running served engine.
pub struct ServedEngine {
    status: Mutex<EngineStatus>,
}

impl ServedEngine {
    /// Starts the engine's thread over `env` (workload and truth), refreshing `search`'s index.
    pub fn start(
        spec: &RefreshSpec,
        env: Arc<Environment<'static>>,
        search: Arc<SearchService>,
        live: Arc<LiveWorkload>,
    ) -> Result<Arc<ServedEngine>, EngineError> {
        let policy = family(&spec.policy)
            .and_then(|f| f.make(spec.params.iter().map(|(k, v)| (k.as_str(), v.clone()))))
            .map_err(|error| EngineError::Policy {
                policy: spec.policy.clone(),
                error,
            })?;
        let pages = env.corpus.page_count();
        if spec.budget > pages {
            return Err(EngineError::Budget {
                budget: spec.budget,
                pages,
            });
        }
        let corpus = env.corpus;
        let initial = {
            let fresh =
                |p: PageId| is_fresh(corpus, p, corpus.page_at(p, 0).present().map(|v| v.unit), 0);
            search.judge(
                None,
                &env.workload.queries,
                &env.truths[0],
                &env.config.likelihood,
                &fresh,
            )?
        };
        if spec.crawl.is_some() && !spec.signals.is_none() {
            return Err(EngineError::SignalsWithCrawl);
        }
        let mut config = RunConfig::new(spec.budget, FitMode::Online);
        config.seed = spec.seed;
        config.signals = spec.signals.clone();
        config.warmup_units =
            crate::sim::run::check_warmup_units("--warmup-units", spec.warmup_units, env.units())?;
        let label = {
            let mut probe = family(&spec.policy)
                .and_then(|f| f.make(spec.params.iter().map(|(k, v)| (k.as_str(), v.clone()))))
                .map_err(EngineError::Label)?;
            let start = crate::refresh::StartingPoint {
                initial_pages: &[],
                view_weight: &env.view_weight,
                history: None,
            };
            let plan = config.plan(env.units().saturating_sub(1), env.config.likelihood);
            probe.prepare(&plan.policy_context(pages, &start, None, None));
            probe.label()
        };
        let engine = Arc::new(ServedEngine {
            status: Mutex::new(EngineStatus {
                policy: spec.policy.clone(),
                label,
                budget: spec.budget,
                signals: spec.signals.labels(),
                unit_seconds: spec.unit_seconds,
                unit: 0,
                last_unit: env.units().saturating_sub(1),
                finished: env.units() < 2,
                refreshes: 0,
                changes_found: 0,
                not_modified: 0,
                discovered: 0,
                errors: 0,
                served_queries: 0,
                search: initial.search,
                per_unit: Vec::new(),
                error: None,
                hosts: None,
            }),
        });
        let period = Duration::from_secs_f64(spec.unit_seconds);
        let running = Arc::clone(&engine);
        let crawl = spec.crawl.clone();
        std::thread::Builder::new()
            .name("served-engine".into())
            .spawn(move || {
                let result = match &crawl {
                    Some(source) => {
                        running.run_crawl(&env, policy, &config, &search, source, period)
                    }
                    None => running.run(&env, policy, &config, &search, &live, period),
                };
                if let Err(e) = result {
                    let mut s = running.status.lock().unwrap_or_else(|e| e.into_inner());
                    s.error = Some(e.to_string());
                    s.finished = true;
                }
            })
            .map_err(EngineError::Thread)?;
        Ok(engine)
    }

    fn run(
        &self,
        env: &Environment<'static>,
        policy: Box<dyn crate::policy::RefreshPolicy>,
        config: &RunConfig,
        search: &SearchService,
        live: &LiveWorkload,
        period: Duration,
    ) -> Result<(), EngineError> {
        let corpus = env.corpus;
        let mut refresher = refresher_for_changing_workload(env, policy, config);
        let mut served = Vec::new();
        for unit in 1..env.units() {
            std::thread::sleep(period);
            let now = live.snapshot();
            if now != served {
                let mut workload = (*env.workload).clone();
                merge_counts(&mut workload, &now, &corpus.vocabulary);
                let measure = measurement(
                    refresher.repository(),
                    &Arc::new(workload),
                    None,
                    &env.config,
                    config.refit_every,
                );
                refresher.set_workload(measure);
                served = now;
            }
            let step = refresher.step(unit)?;
            let crawl = refresher.crawl();
            let touched: Vec<PageId> = step.outcomes.iter().map(|o| o.page).collect();
            let held: Vec<_> = (0..corpus.page_count() as PageId)
                .map(|p| crawl.held(p).map(|h| Arc::clone(&h.version)))
                .collect();
            let updates: Vec<PageUpdate> = touched
                .iter()
                .map(|&p| PageUpdate {
                    page: p,
                    url: corpus.url(p),
                    version: held[p as usize].as_deref(),
                })
                .collect();
            let fresh = |p: PageId| is_fresh(corpus, p, crawl.held_unit(p), unit);
            let metrics = {
                let repo = refresher.repository();
                evaluate(
                    repo.forward(),
                    repo.scorer(),
                    &env.workload.queries,
                    &env.truths[unit as usize],
                    &env.config.likelihood,
                    &fresh,
                )
            };
            search
                .refresh(
                    EngineView {
                        unit,
                        held: held.clone(),
                    },
                    &updates,
                    None,
                )
                .map_err(|error| EngineError::Serve { unit, error })?;
            let record = EngineUnit::of(&step, None, metrics.search, |p| corpus.url(p).to_string());
            let count = served.len();
            self.push_unit(record, unit + 1 >= env.units(), |s| {
                s.served_queries = count
            });
        }
        Ok(())
    }

    /// The crawling engine: the refresh loop over an HTTP crawl ([`CrawlEngine`]), each unit's
    /// copies applied to the served index under the corpus's page ids (matched by URL; pages
    /// the corpus does not know are crawled but not served), judged against the corpus.
    fn run_crawl(
        &self,
        env: &Environment<'static>,
        policy: Box<dyn crate::policy::RefreshPolicy>,
        config: &RunConfig,
        search: &SearchService,
        source: &CrawlSource,
        period: Duration,
    ) -> Result<(), EngineError> {
        use crate::fetch::http::{Discovery, HttpFetcher};
        use crate::live::{initial_crawl, CrawlEngine, EngineConfig};
        let corpus = env.corpus;
        let mut fetcher =
            HttpFetcher::new(source.options.clone(), Arc::clone(&corpus.vocabulary), None)
                .map_err(EngineError::Fetcher)?;
        let mut urls = source.urls.clone();
        let sitemap = matches!(source.options.discovery, Discovery::Sitemaps(_));
        if sitemap {
            urls.extend(fetcher.read_sitemaps(0));
        }
        let initial = initial_crawl(&mut fetcher, &urls, source.max_pages);
        if sitemap {
            fetcher.set_listed(initial.iter().map(|c| c.0));
        }
        if initial.is_empty() {
            return Err(EngineError::NothingFetched {
                errors: fetcher.monitor().totals().errors,
                disallowed: fetcher.monitor().totals().robots_disallowed,
            });
        }
        let engine_config = EngineConfig {
            budget: config.budget,
            seed: config.seed,
            environment: env.config.clone(),
            last_unit: Some(env.units().saturating_sub(1)),
            warmup_units: config.warmup_units,
        };
        let mut engine = CrawlEngine::new(
            fetcher,
            &initial,
            Arc::clone(&env.workload),
            policy,
            &engine_config,
        )?;
        let clock = crate::web_replay::ClockClient::new().map_err(EngineError::ClockClient)?;
        let mut served: Vec<Option<Arc<crate::corpus::PageVersion>>> =
            vec![None; corpus.page_count()];
        for unit in 1..env.units() {
            let deadline = std::time::Instant::now() + period;
            if let Some(url) = &source.advance_clock {
                clock
                    .advance(url, unit)
                    .map_err(|error| EngineError::Clock {
                        url: url.clone(),
                        error,
                    })?;
            }
            let done = engine
                .step(unit, Some(deadline))
                .map_err(EngineError::Crawl)?;
            let crawl = engine.refresher().crawl();
            let mut updates_pages = Vec::new();
            for o in &done.step.outcomes {
                if let Some(c) = engine.corpus_page(corpus, o.page) {
                    served[c as usize] = crawl.held(o.page).map(|h| Arc::clone(&h.version));
                    updates_pages.push(c);
                }
            }
            let updates: Vec<PageUpdate> = updates_pages
                .iter()
                .map(|&c| PageUpdate {
                    page: c,
                    url: corpus.url(c),
                    version: served[c as usize].as_deref(),
                })
                .collect();
            let metrics = engine
                .judge(env, unit)
                .map_err(|error| EngineError::Judge { unit, error })?;
            let vocabulary = engine.refresher().repository().shared_vocabulary();
            search
                .refresh(
                    EngineView {
                        unit,
                        held: served.clone(),
                    },
                    &updates,
                    Some(vocabulary),
                )
                .map_err(|error| EngineError::Serve { unit, error })?;
            let record = EngineUnit::of(
                &done.step,
                Some(done.counts.not_modified as usize),
                metrics.search,
                |p| engine.refresher().url(p).to_string(),
            );
            let errors = done.counts.errors as usize;
            let hosts = engine.monitor().hosts();
            self.push_unit(record, unit + 1 >= env.units(), |s| {
                s.errors += errors;
                s.hosts = Some(hosts);
            });
            std::thread::sleep(deadline.saturating_duration_since(std::time::Instant::now()));
        }
        Ok(())
    }

    /// Adds a finished unit to the status; `also` sets what only one kind of engine reports.
    fn push_unit(&self, record: EngineUnit, last: bool, also: impl FnOnce(&mut EngineStatus)) {
        let mut s = self.status.lock().unwrap_or_else(|e| e.into_inner());
        s.unit = record.unit;
        s.refreshes += record.refreshed;
        s.changes_found += record.changes_found;
        s.not_modified += record.not_modified;
        s.discovered += record.discovered;
        s.search = record.search;
        also(&mut s);
        s.per_unit.push(record);
        s.finished = last;
    }

    /// The engine's state now.
    pub fn status(&self) -> EngineStatus {
        self.status
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}
