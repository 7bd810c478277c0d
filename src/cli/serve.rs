//! `refresher serve`: the HTTP API and web UI over a repository built from a corpus.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;
use refresher::corpus::LiveWeb;
use refresher::index::ScoringKind;
use refresher::server::{self, AppState, Policies, ServerOptions};

use super::inputs::{CorpusArgs, WorkloadArgs};
use super::mesh_args::{process_addr, process_path};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub(crate) corpus: CorpusArgs,
    /// A query log (any supported layout): the workload runs are steered and judged by, and
    /// the serving-quality history.
    #[arg(long)]
    pub(crate) log: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) workload: WorkloadArgs,
    /// Keep the served tantivy index in this directory: reopened when its manifest matches
    /// the corpus, unit and scoring; otherwise built beside it and renamed into place. Split
    /// over --workers or --processes, each shard in DIR/shard-K-of-N. `{process}` in DIR
    /// becomes this process's number (--process; 0 without it), e.g. `--index idx/p{process}`
    /// for one directory per process.
    #[arg(long, value_name = "DIR")]
    pub(crate) index: Option<PathBuf>,
    /// Replace an --index directory that holds another index (or an incomplete one) instead
    /// of refusing to start.
    #[arg(long)]
    pub(crate) rebuild_index: bool,
    /// Address to listen on (IP:PORT; process 0 listens here, the others answer it over
    /// --peers). `{process}` becomes this process's number (--process; 0 without it).
    #[arg(long, value_name = "IP:PORT", default_value = "127.0.0.1:8080")]
    pub(crate) addr: String,
    /// Time unit whose page versions the served repository holds.
    #[arg(long, default_value_t = 0)]
    pub(crate) unit: u32,
    /// Time unit of the live Web that stale markers compare against (default: the last).
    #[arg(long)]
    pub(crate) live_unit: Option<u32>,
    /// Scoring function of the search engine.
    #[arg(long, value_enum, default_value_t = ScoringKind::Bm25)]
    pub(crate) scoring: ScoringKind,
    /// Hosts accepted in the `Host` header, comma-separated (`*`: any). Default: the bind
    /// address and localhost (guards against DNS rebinding).
    #[arg(long, value_delimiter = ',')]
    pub(crate) allowed_hosts: Option<Vec<String>>,
    /// Longest a search may take, in milliseconds, before it answers 503.
    #[arg(long, default_value_t = 5000)]
    pub(crate) search_timeout_ms: u64,
    /// Keep the served index fresh with this refresh policy: the live Web advances one unit
    /// of the corpus's history every --unit-seconds and the policy refreshes --budget pages
    /// of the served index per unit (`GET /api/engine`, the dashboard's engine panel).
    /// Named as on `simulate` and `crawl`; `--refresh`, its former name, still works.
    #[arg(
        long = "policy",
        alias = "refresh",
        requires = "budget",
        requires = "log"
    )]
    pub(crate) refresh: Option<String>,
    /// A parameter of the --policy, `key=value` (repeatable; `--refresh-param`, its former
    /// name, still works).
    #[arg(long = "param", alias = "refresh-param", value_name = "KEY=VALUE", value_parser = super::policy_args::parse_param)]
    pub(crate) refresh_params: Vec<(String, String)>,
    /// Refreshes per unit of the served engine (B).
    #[arg(long, requires = "refresh")]
    pub(crate) budget: Option<usize>,
    /// Wall-clock seconds per unit of the served engine.
    #[arg(long, default_value_t = 10.0, requires = "refresh")]
    pub(crate) unit_seconds: f64,
    /// Seed of a randomised --policy (and of the --signals draws).
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// Change signals the replayed site publishes, read by the served engine's --policy
    /// (repeatable; as simulate's --signals): none, lastmod[:coverage=C,recall=R,false-positive=F,delay=D],
    /// lastmod:build-stamped, feed[:items=N,delay=D].
    #[arg(
        long = "signals",
        value_name = "SPEC",
        default_value = "none",
        requires = "refresh"
    )]
    pub(crate) signals: Vec<String>,
    /// The served engine fetches every held page at units 1..=W outside the budget (paper
    /// 001 §5.2's warm-up). 0: none.
    #[arg(long, value_name = "W", default_value_t = 0, requires = "refresh")]
    pub(crate) warmup_units: u32,
    /// The served engine refreshes by crawling over HTTP (the options below, as `crawl`'s)
    /// instead of replaying --corpus's history; --corpus then judges the crawl and names the
    /// pages served (by URL). Typically a crawl of `web-replay` serving the same collection.
    #[arg(long, requires = "refresh")]
    pub(crate) crawl: bool,
    /// Crawl: start from the URLs this sitemap lists and re-read it every unit for new pages.
    #[arg(long, requires = "crawl")]
    pub(crate) crawl_sitemap: Option<String>,
    /// Crawl: start from these URLs (comma-separated) and follow links within their hosts.
    #[arg(long, value_delimiter = ',', requires = "crawl")]
    pub(crate) crawl_seeds: Vec<String>,
    /// Crawl: send this host's requests as plain HTTP to this address (`HOST=ADDR:PORT`).
    #[arg(long, value_parser = super::crawl::parse_resolve, requires = "crawl")]
    pub(crate) resolve: Vec<(String, SocketAddr)>,
    /// Crawl: POST this URL (`?unit=U`) at the start of every unit (a `web-replay
    /// --manual-clock` endpoint).
    #[arg(long, requires = "crawl")]
    pub(crate) advance_clock: Option<String>,
    /// Crawl: least time between two requests to one host, in ms.
    #[arg(long, default_value_t = 1000)]
    pub(crate) min_host_delay_ms: u64,
    /// Crawl: fetch what robots.txt disallows (only for sites you own).
    #[arg(long, requires = "crawl")]
    pub(crate) ignore_robots: bool,
    /// Crawl: most pages of the initial crawl.
    #[arg(long, default_value_t = 10_000)]
    pub(crate) max_pages: usize,
    /// Split the served index by host over worker threads and processes (each worker one
    /// shard; process 0 serves HTTP, the others only answer it). Searches and the serving
    /// quality equal one index's.
    #[command(flatten)]
    pub(crate) mesh: super::mesh_args::MeshArgs,
}

/// Raises the soft open-file limit to the hard limit, so that many clients (each a socket)
/// do not run the server out of descriptors at the common soft limit of 1024.
fn raise_fd_limit() {
    // SAFETY: getrlimit/setrlimit only read and write the struct passed.
    unsafe {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max
        {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

/// The former spellings of `--policy` and `--param` on `serve`, accepted as clap aliases.
const FORMER_SPELLINGS: &[(&str, &str)] =
    &[("--refresh", "--policy"), ("--refresh-param", "--param")];

pub fn run(mut args: Args) -> anyhow::Result<()> {
    let started = Instant::now();
    super::former_flags::print_notes(&super::former_flags::aliases_used(
        std::env::args_os(),
        FORMER_SPELLINGS,
    ));
    raise_fd_limit();
    let mesh = args.mesh.config()?;
    // `{process}` replaced once, here: everything below reads this process's own values.
    args.index = args.index.map(|dir| process_path(&dir, mesh.process));
    let addr = process_addr("--addr", &args.addr, mesh.process)?;
    let (corpus, _) = args.corpus.load()?;
    eprintln!(
        "corpus: {} pages over {} units ({:.1} s)",
        corpus.page_count(),
        corpus.units(),
        started.elapsed().as_secs_f64()
    );
    for line in super::inputs::collection_lines(&corpus) {
        eprintln!("{line}");
    }
    let workload = match &args.log {
        Some(path) => {
            let log = args.workload.read(path)?;
            let w = args.workload.workload(&log, &corpus);
            eprintln!(
                "workload: {} queries from {}",
                w.queries.len(),
                path.display()
            );
            Some(w)
        }
        None => None,
    };
    let greeting = super::mesh_args::serve_greeting(mesh.process, &corpus, workload.as_ref());
    if mesh.is_spread() && !mesh.is_leader_process() {
        return serve_shards_only(&args, corpus, &mesh, &greeting);
    }
    let mut options = ServerOptions::new(Policies::registry());
    options.shards = mesh.is_spread().then(|| (mesh.clone(), greeting));
    options.served_unit = args.unit;
    options.live_unit = args.live_unit;
    options.scoring = args.scoring;
    options.index_dir = args.index.clone();
    options.rebuild_index = args.rebuild_index;
    options.allowed_hosts = args.allowed_hosts.clone();
    options.search_timeout = Duration::from_millis(args.search_timeout_ms.max(1));
    let state = AppState::build(corpus, workload, options).context("building the repository")?;
    eprintln!(
        "repository: {} documents at unit {}{} (ready after {:.1} s)",
        state.search.num_docs(),
        state.search.served_unit,
        if state.search.repo().is_some_and(|r| r.is_read_only()) {
            ", read-only index directory"
        } else {
            ""
        },
        started.elapsed().as_secs_f64()
    );
    if let Some(shards) = state.search.shards() {
        let layout = &shards.layout;
        eprintln!(
            "shards: {} by host over {} process(es), pages per shard {:?} (largest {:.2}× the mean); {} bytes of statistics sent by the leader",
            layout.pages_per_shard.len(),
            mesh.processes,
            layout.pages_per_shard,
            layout.skew,
            layout.statistics_bytes
        );
    }
    if let (Some(spec), Some(policy)) = (refresh_spec(&args)?, &args.refresh) {
        let budget = spec.budget;
        state.start_engine(&spec).map_err(anyhow::Error::msg)?;
        eprintln!(
            "engine: {policy}, B = {budget}, one unit every {} s (GET /api/engine)",
            args.unit_seconds
        );
    }
    let runtime = tokio::runtime::Runtime::new().context("starting the tokio runtime")?;
    let stopping = std::sync::Arc::clone(&state);
    let served = runtime.block_on(async move {
        let (bound, handle) = server::spawn(state, addr)
            .await
            .with_context(|| format!("listening on --addr {addr}"))?;
        println!("serving on http://{bound}/ (search), /dashboard, /compare, /api/openapi.json");
        tokio::select! {
            result = handle => {
                result.context("server task")?.context("server")?;
            }
            _ = tokio::signal::ctrl_c() => eprintln!("stopping"),
        }
        Ok(())
    });
    // The other processes' shards stop with the leader's instead of finding it lost.
    if let Some(shards) = stopping.search.shards() {
        shards.stop().context("stopping the shards")?;
    }
    served
}

/// The served engine `--policy` asks for (`None`: the index is served as built).
fn refresh_spec(args: &Args) -> anyhow::Result<Option<server::engine::RefreshSpec>> {
    let (Some(policy), Some(budget)) = (&args.refresh, args.budget) else {
        return Ok(None);
    };
    Ok(Some(server::engine::RefreshSpec {
        policy: policy.clone(),
        params: args
            .refresh_params
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    refresher::policy::family::ParamValue::Text(v.clone()),
                )
            })
            .collect(),
        budget,
        unit_seconds: args.unit_seconds,
        seed: args.seed,
        warmup_units: args.warmup_units,
        signals: refresher::signal::SignalSettings::parse(&args.signals)
            .map_err(|e| anyhow::anyhow!("--signals: {e}"))?,
        crawl: if args.crawl {
            use refresher::fetch::http::{Discovery, HttpOptions};
            anyhow::ensure!(
                args.crawl_sitemap.is_some() || !args.crawl_seeds.is_empty(),
                "--crawl needs --crawl-sitemap URL or --crawl-seeds URL,..."
            );
            Some(server::engine::CrawlSource {
                options: HttpOptions {
                    min_host_delay: Duration::from_millis(args.min_host_delay_ms),
                    resolve: args.resolve.iter().cloned().collect(),
                    obey_robots: !args.ignore_robots,
                    discovery: match &args.crawl_sitemap {
                        Some(s) => Discovery::Sitemaps(vec![s.clone()]),
                        None => Discovery::Links,
                    },
                    ..HttpOptions::default()
                },
                urls: args.crawl_seeds.clone(),
                max_pages: args.max_pages,
                advance_clock: args.advance_clock.clone(),
            })
        } else {
            None
        },
    }))
}

/// A process other than the leader's in a mesh: its shards of the index, answering process 0
/// until it stops them.
fn serve_shards_only(
    args: &Args,
    corpus: refresher::corpus::Corpus,
    mesh: &refresher::mesh::MeshConfig,
    greeting: &refresher::mesh::Greeting,
) -> anyhow::Result<()> {
    let unit = args.unit.min(corpus.units().saturating_sub(1));
    eprintln!(
        "process {} of {}: {} shard(s) of the index at unit {unit}, answering process 0",
        mesh.process, mesh.processes, mesh.workers
    );
    let setup = server::shards::ShardSetup {
        unit,
        scoring: args.scoring,
        index_dir: args.index.clone(),
        rebuild: args.rebuild_index,
    };
    server::shards::serve_shards(corpus, &setup, mesh, greeting)?;
    eprintln!("process {}: stopped by process 0", mesh.process);
    Ok(())
}
