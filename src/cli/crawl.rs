//! `refresher crawl`: the refresher fetching real sites over HTTP, one unit of wall time at a
//! time, with a refresh policy spending B re-downloads per unit.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use refresher::corpus::{Clock, Corpus, PageTimeline, PageVersion, Unit};
use refresher::fetch::http::warc_out::WarcOut;
use refresher::fetch::http::{Discovery, FaultCounts, HttpFetcher, HttpOptions};
use refresher::fetch::Fetcher;
use refresher::index::ScoringKind;
use refresher::live::{initial_crawl, CrawlEngine, CrawlUnit, EngineConfig};
use refresher::policy::registry::family;
use refresher::policy::RefreshPolicy;
use refresher::quality::measure::DeltaQMethod;
use refresher::quality::{SearchQuality, ViewingLikelihood};
use refresher::querylog::term_workload::{MetricWorkload, TermWorkload};
use refresher::querylog::QueryLog;
use refresher::sim::{Environment, EnvironmentConfig};
use refresher::text::Vocabulary;

use super::inputs::{CorpusArgs, WorkloadArgs};
use super::policy_args;

#[derive(clap::Args)]
#[command(group = clap::ArgGroup::new("start").required(true).args(["seeds", "urls", "sitemap"]))]
pub struct Args {
    /// Start from these URLs and follow links within their hosts (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub(crate) seeds: Vec<String>,
    /// Start from the URLs of this file (one per line; `#` comments).
    #[arg(long)]
    pub(crate) urls: Option<PathBuf>,
    /// Start from the URLs a sitemap lists, and re-read it every unit for new pages.
    #[arg(long)]
    pub(crate) sitemap: Option<String>,
    /// The query log: the workload the refresher serves.
    #[arg(long)]
    pub(crate) log: PathBuf,
    #[command(flatten)]
    pub(crate) workload: WorkloadArgs,
    /// Refresh policy family (`refresher policies` lists them).
    #[arg(long)]
    pub(crate) policy: String,
    /// A parameter of the policy, `key=value` (repeatable).
    #[arg(long = "param", value_name = "KEY=VALUE", value_parser = policy_args::parse_param)]
    pub(crate) params: Vec<(String, String)>,
    /// Refreshes per unit (B).
    #[arg(long)]
    pub(crate) budget: usize,
    /// Length of one unit in wall-clock seconds; a unit's fetches end at its deadline.
    #[arg(long, value_parser = parse_seconds)]
    pub(crate) unit_seconds: f64,
    /// Units to run after the initial crawl (default: until interrupted). Resume with the
    /// --units a crawl was started with: a policy that plans to its last unit (SBR, EBR,
    /// user-centric's planner) chooses otherwise under another, and the resume stops there.
    #[arg(long)]
    pub(crate) units: Option<u32>,
    /// Fetch every held page at units 1..=W outside the budget (paper 001 §5.2's warm-up:
    /// change-history policies then start from observations). 0: none.
    #[arg(long, value_name = "W", default_value_t = 0)]
    pub(crate) warmup_units: u32,
    /// The crawl-state directory: where the crawl keeps its journal and state (`state.json`,
    /// rewritten atomically at each unit's commit), and resumes from. `--index`, its former
    /// name (it is not a search index; `serve --index` is), still works. `{process}` in DIR
    /// becomes 0, as in --warc-out.
    #[arg(long = "state-dir", alias = "index", value_name = "DIR")]
    pub(crate) index: PathBuf,
    /// Write every fetch as WARC records here (`crawl-UUUUU.warc.gz` per unit). `{process}`
    /// in DIR becomes 0: a crawl runs as one process, the process 0 of `serve` without --process.
    #[arg(long, value_name = "DIR")]
    pub(crate) warc_out: PathBuf,
    /// Send this host's requests as plain HTTP to this address, whatever the URL's scheme
    /// (`HOST=ADDR:PORT`, repeatable): how a crawl reaches `web-replay`.
    #[arg(long, value_parser = parse_resolve)]
    pub(crate) resolve: Vec<(String, SocketAddr)>,
    /// POST this URL at the start of every unit, with `?unit=U` (a `web-replay --manual-clock`
    /// admin endpoint, e.g. http://127.0.0.1:8090/_clock/advance), for deterministic tests
    /// and demos; a new crawl asks for unit 0 before its initial crawl.
    #[arg(long)]
    pub(crate) advance_clock: Option<String>,
    /// Judge the crawl's repository against this corpus's truth (a crawl of `web-replay`
    /// serving it): exact quality, fresh@10 and MAP@10 per unit. Term ids then extend the
    /// corpus's, as in `simulate`.
    #[arg(long)]
    pub(crate) judge_with: Option<PathBuf>,
    /// Length of one time unit of the --judge-with corpus, in days.
    #[arg(long, default_value_t = 7, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) judge_unit_days: u32,
    /// How new pages are found after the initial crawl (default: the sitemap with
    /// --sitemap, links with --seeds, none with --urls).
    #[arg(long, value_enum)]
    pub(crate) discover: Option<DiscoverArg>,
    /// Read the sites' change signals every unit and give them to the policy (planned
    /// policies act on them): the <lastmod> dates of the sitemaps (--sitemap's, and those
    /// robots.txt names in `Sitemap:` lines) and the Atom or RSS feeds (robots.txt may name them too,
    /// as web-replay's does; --feed adds more). What robots.txt names is kept in --state-dir: a
    /// resumed crawl reads it from its first unit. These requests do not count against B; they
    /// are counted apart. Dates are read as units on --judge-with's clock when judging (the
    /// clock web-replay publishes them on), else on the crawl's own (unit 0 starting when
    /// the crawl started, units of --unit-seconds): a crawl of web-replay reading its dates
    /// needs --judge-with (its collection's dates are not wall-clock times).
    #[arg(long)]
    pub(crate) read_signals: bool,
    /// An Atom or RSS (2.0, 1.0) feed of recent changes to read every unit (repeatable; implies
    /// --read-signals).
    #[arg(long = "feed", value_name = "URL")]
    pub(crate) feeds: Vec<String>,
    /// Most pages the initial crawl fetches.
    #[arg(long, default_value_t = 10_000)]
    pub(crate) max_pages: usize,
    /// Least time between two requests to one host, in ms (robots.txt Crawl-delay raises it).
    #[arg(long, default_value_t = 1000)]
    pub(crate) min_host_delay_ms: u64,
    /// Per-request timeout, in ms.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=600_000))]
    pub(crate) timeout_ms: u64,
    /// Largest body accepted (decoded), in bytes.
    #[arg(long, default_value_t = 8 << 20)]
    pub(crate) max_body_bytes: usize,
    /// Retries after connection errors, timeouts, 429 and 5xx.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(0..=10))]
    pub(crate) retries: u32,
    /// Fetch what robots.txt disallows (only for sites you own, such as web-replay).
    #[arg(long)]
    pub(crate) ignore_robots: bool,
    /// Scoring function of the search engine.
    #[arg(long, value_enum, default_value_t = ScoringKind::Bm25)]
    pub(crate) scoring: ScoringKind,
    /// ΔQ measurement: paper 003's estimate over the queries as issued, or its single-term
    /// estimate (the exact measurement reads the live Web, which a crawl cannot).
    #[arg(long = "delta-q", value_enum, default_value_t = DeltaQMethod::Estimate)]
    pub(crate) delta_q: DeltaQMethod,
    /// Exponent of the viewing likelihood I(r) = c·r^-a.
    #[arg(long, default_value_t = 1.5)]
    pub(crate) viewing_exponent: f64,
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// Print one JSON object (the keys of `simulate --json`, plus the fetch counts).
    #[arg(long)]
    pub(crate) json: bool,
    /// The page fetches spread over workers by host, each host fetched by one of them
    /// (`refresher::live::spread`); everything else runs in process 0, which prints the
    /// results.
    #[command(flatten)]
    pub(crate) mesh: super::mesh_args::MeshArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DiscoverArg {
    Sitemap,
    Links,
    None,
}

fn parse_seconds(s: &str) -> Result<f64, super::ArgError> {
    let v: f64 = s.parse().map_err(|_| super::ArgError::SecondsNotANumber {
        text: s.to_string(),
    })?;
    if !(v.is_finite() && (0.001..=31_536_000.0).contains(&v)) {
        return Err(super::ArgError::SecondsRange { value: v });
    }
    Ok(v)
}

pub fn parse_resolve(s: &str) -> Result<(String, SocketAddr), super::ArgError> {
    let (host, addr) = s
        .split_once('=')
        .ok_or_else(|| super::ArgError::NoHostAddr {
            text: s.to_string(),
        })?;
    let addr: SocketAddr = addr.parse().map_err(|error| super::ArgError::BadAddr {
        text: s.to_string(),
        addr: addr.to_string(),
        error,
    })?;
    let host = host.trim().to_ascii_lowercase();
    if host.is_empty() {
        return Err(super::ArgError::EmptyHost {
            text: s.to_string(),
        });
    }
    Ok((host, addr))
}

/// One unit as printed and written.
#[derive(serde::Serialize)]
struct UnitLine {
    unit: Unit,
    #[serde(flatten)]
    search: Option<SearchQuality>,
    refreshed: usize,
    changed: usize,
    discovered: usize,
    estimated_delta_q: f64,
    fetches: u64,
    not_modified: u64,
    errors: u64,
    robots_disallowed: u64,
    /// Sitemap and feed requests (outside B).
    sitemap_requests: u64,
    feed_requests: u64,
    /// Faults met on the wire, every attempt (sitemap and feed requests included).
    faults: FaultCounts,
    /// Fetches answered gone (404, 410, not HTML): the only answers that drop a held copy.
    gone: u64,
    /// Pages with a copy in the index at the unit's end.
    held: u64,
    seconds: f64,
    refreshed_urls: Vec<String>,
}

fn write_state(dir: &Path, state: &serde_json::Value) -> anyhow::Result<()> {
    let tmp = dir.join("state.json.tmp");
    std::fs::write(&tmp, serde_json::to_vec_pretty(state)?)
        .with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, dir.join("state.json"))
        .with_context(|| format!("replacing {}", dir.join("state.json").display()))?;
    Ok(())
}

pub fn run(mut args: Args) -> anyhow::Result<()> {
    // `--index`, accepted by clap as an alias of `--state-dir`.
    super::former_flags::print_notes(&super::former_flags::aliases_used(
        std::env::args_os(),
        &[("--index", "--state-dir")],
    ));
    let mesh = args.mesh.config()?;
    // `{process}` replaced once, here: everything below reads this process's own values.
    args.warc_out = super::mesh_args::process_path(&args.warc_out, mesh.process);
    args.index = super::mesh_args::process_path(&args.index, mesh.process);
    let greeting = super::mesh_args::crawl_greeting(mesh.process);
    if mesh.is_spread() && !mesh.is_leader_process() {
        return fetch_for_process_zero(&args, &mesh, &greeting);
    }
    let policy = policy_of(&args)?;
    let fingerprint = fingerprint_of(&args);
    let previous = read_state(&args.index)?;
    let resume_through = resume_point(&args, previous.as_ref(), &fingerprint)?;
    std::fs::create_dir_all(&args.index)
        .with_context(|| format!("creating --state-dir {}", args.index.display()))?;
    let log = args.workload.read(&args.log)?;
    let judge = match &args.judge_with {
        Some(path) => {
            let (corpus, _) = CorpusArgs::single(path.clone(), args.judge_unit_days).load()?;
            Some(corpus)
        }
        None => None,
    };
    let initial_urls = listed_urls(&args)?;
    let clock = date_clock(&args, judge.as_ref(), previous.as_ref());
    let date_origin = (reads_signals(&args) && judge.is_none()).then_some(clock.origin);
    let mut fetcher = open_fetcher(&args, judge.as_ref(), resume_through, clock)?;
    let spread = spread_fetches(&args, &mesh, greeting, clock, &mut fetcher)?;
    let initial = crawl_initially(
        &args,
        &mut fetcher,
        initial_urls,
        resume_through,
        &fingerprint,
        date_origin,
    )?;

    let env_config = EnvironmentConfig {
        scoring: args.scoring,
        likelihood: ViewingLikelihood::new(args.viewing_exponent),
        pieces: 3,
        delta_q: args.delta_q,
    };
    let term_workload = crawl_workload(&args, &log, judge.as_ref(), &fetcher, &initial)?;
    let env = match &judge {
        Some(c) => Some(
            Environment::new(c, term_workload.clone(), env_config.clone())
                .context("building the judge's truth")?,
        ),
        None => None,
    };
    let units = args.units;
    if let Some(u) = units {
        refresher::sim::run::check_warmup_units("--warmup-units", args.warmup_units, u + 1)
            .map_err(anyhow::Error::msg)?;
    }
    let config = EngineConfig {
        budget: args.budget,
        seed: args.seed,
        environment: env_config.clone(),
        last_unit: units,
        warmup_units: args.warmup_units,
    };
    let mut engine = CrawlEngine::new(fetcher, &initial, Arc::new(term_workload), policy, &config)?;
    let label = engine.refresher().policy().label();
    eprintln!(
        "{label}, B = {}, units of {} s, {} workload queries{}",
        args.budget,
        args.unit_seconds,
        engine.workload().queries.len(),
        if env.is_some() { ", judged" } else { "" }
    );
    // Units committed before a restart keep the lines they were reported with.
    let lines: Vec<serde_json::Value> = previous
        .as_ref()
        .and_then(|s| s["per_unit"].as_array().cloned())
        .unwrap_or_default();
    let mut crawl = UnitLoop {
        args: &args,
        fingerprint: &fingerprint,
        label: &label,
        lines,
        judge_error: None,
        date_origin,
        started_with_other_units: previous
            .as_ref()
            .and_then(|state| state.get("units"))
            .filter(|units| **units != serde_json::json!(args.units))
            .map(|units| units.to_string()),
    };
    crawl.run(&mut engine, env.as_ref())?;
    // The other processes stop with process 0's crawl instead of finding it lost.
    if let Some(spread) = spread {
        stop_spread(&spread)?;
    }
    report(&args, &engine, &crawl.lines, crawl.judge_error)
}

/// A process other than 0 of a spread crawl: fetches its workers' hosts for process 0 until
/// the crawl ends. The date clock is process 0's concern (it reads the signals).
fn fetch_for_process_zero(
    args: &Args,
    mesh: &refresher::mesh::MeshConfig,
    greeting: &refresher::mesh::Greeting,
) -> anyhow::Result<()> {
    let options = http_options(args, HttpOptions::default().date_clock)?;
    eprintln!(
        "process {} of {}: fetching its workers' hosts for process 0",
        mesh.process, mesh.processes
    );
    refresher::live::spread::fetch_for_process_zero(&options, mesh, greeting)?;
    eprintln!("stopped by process 0");
    Ok(())
}

/// With `--workers` or `--processes`, the mesh's workers started and handed `fetcher`'s page
/// fetches (`refresher::live::spread`); `None` for one worker.
fn spread_fetches(
    args: &Args,
    mesh: &refresher::mesh::MeshConfig,
    greeting: refresher::mesh::Greeting,
    clock: refresher::signal::DateClock,
    fetcher: &mut HttpFetcher,
) -> anyhow::Result<Option<refresher::live::spread::SpreadFetches>> {
    if !mesh.is_spread() {
        return Ok(None);
    }
    let spread = refresher::live::spread::SpreadFetches::start(
        http_options(args, clock)?,
        mesh.clone(),
        greeting,
    )?;
    fetcher.set_job_runner(spread.runner());
    eprintln!(
        "page fetches spread by host over {} worker(s) in {} process(es)",
        mesh.total_workers(),
        mesh.processes
    );
    Ok(Some(spread))
}

/// Stops the workers of a spread crawl (the other processes then exit) and reports what they
/// exchanged.
fn stop_spread(spread: &refresher::live::spread::SpreadFetches) -> anyhow::Result<()> {
    spread.stop()?;
    let (batches, bytes) = spread.traffic();
    eprintln!(
        "page fetches spread: {batches} batches, {bytes} bytes exchanged between the workers ({:.0} a batch)",
        bytes as f64 / batches.max(1) as f64
    );
    Ok(())
}

/// The policy `--policy` and `--param` name, once the flags a crawl cannot honour are
/// refused.
fn policy_of(args: &Args) -> anyhow::Result<Box<dyn RefreshPolicy>> {
    let given = policy_args::collect(&args.params, &[])?;
    let policy = family(&args.policy)
        .and_then(|f| f.make(given.iter().map(|(k, v, _)| (k.as_str(), v.clone()))))
        .map_err(|e| policy_args::explain(e, &given, "--policy"))?;
    anyhow::ensure!(
        args.delta_q != DeltaQMethod::Exact,
        "--delta-q exact: the exact ΔQ reads the live Web's future, which a crawl cannot; use estimate or estimate-single-term"
    );
    anyhow::ensure!(
        args.viewing_exponent > 1.0 && args.viewing_exponent <= 10.0,
        "--viewing-exponent {}: must be in (1, 10]",
        args.viewing_exponent
    );
    Ok(policy)
}

/// What must match for a crawl directory to be resumed.
fn fingerprint_of(args: &Args) -> serde_json::Value {
    let fingerprint = serde_json::json!({
        "seeds": args.seeds, "urls": args.urls, "sitemap": args.sitemap, "log": args.log,
        "policy": args.policy, "params": args.params, "budget": args.budget, "seed": args.seed,
        "scoring": args.scoring.name(), "delta_q": args.delta_q, "viewing_exponent": args.viewing_exponent,
        "judge_with": args.judge_with, "discover": format!("{:?}", fetcher_discovery(args)),
        "max_pages": args.max_pages,
    });
    // Only when asked: crawl directories written before the flag existed stay resumable.
    let mut fingerprint = fingerprint;
    if args.warmup_units > 0 {
        fingerprint["warmup_units"] = args.warmup_units.into();
    }
    if reads_signals(args) {
        fingerprint["read_signals"] = true.into();
        fingerprint["feeds"] = serde_json::json!(args.feeds);
    }
    fingerprint
}

fn reads_signals(args: &Args) -> bool {
    args.read_signals || !args.feeds.is_empty()
}

/// The clock the crawl reads dates on (see `--read-signals`): the judge's, else its own,
/// whose origin a resumed crawl takes from its state.
fn date_clock(
    args: &Args,
    judge: Option<&Corpus>,
    previous: Option<&serde_json::Value>,
) -> refresher::signal::DateClock {
    match judge {
        Some(c) => refresher::signal::DateClock::of(&c.clock),
        None => refresher::signal::DateClock {
            origin: previous
                .and_then(|s| s["date_origin"].as_f64())
                .unwrap_or_else(|| {
                    std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0.0, |d| d.as_secs_f64())
                }),
            unit_seconds: args.unit_seconds,
        },
    }
}

/// The state a previous crawl left in `index` (`None`: a new crawl directory).
fn read_state(index: &Path) -> anyhow::Result<Option<serde_json::Value>> {
    Ok(match std::fs::read(index.join("state.json")) {
        Ok(bytes) => Some(
            serde_json::from_slice(&bytes)
                .with_context(|| format!("reading {}", index.join("state.json").display()))?,
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            return Err(e)
                .with_context(|| format!("reading {}", index.join("state.json").display()))
        }
    })
}

/// The last unit a resumed crawl committed (`None`: a new crawl); refuses a directory
/// whose crawl was started with other settings.
fn resume_point(
    args: &Args,
    previous: Option<&serde_json::Value>,
    fingerprint: &serde_json::Value,
) -> anyhow::Result<Option<Unit>> {
    Ok(match previous {
        Some(state) => {
            anyhow::ensure!(
                state["fingerprint"] == *fingerprint,
                "--state-dir {}: holds a crawl started with other settings ({}); use another directory to start anew",
                args.index.display(),
                state["fingerprint"]
            );
            // A policy that plans to its last unit chooses otherwise under another --units than
            // its journal recorded, and the resume then stops at the divergence; a policy that
            // does not (round-robin) resumes fine, so this is a note, not a refusal.
            // Directories written before this key say nothing.
            if let Some(started) = state
                .get("units")
                .filter(|u| **u != serde_json::json!(args.units))
            {
                let shown = |u: Option<u64>| u.map_or("none".to_string(), |u| u.to_string());
                eprintln!(
                    "note: --units {} differs from the --units {} the crawl in --state-dir {} was started with: a policy that plans to its last unit will choose otherwise than its journal, and the resume stops at the first unit where it does",
                    shown(args.units.map(u64::from)),
                    shown(started.as_u64()),
                    args.index.display(),
                );
            }
            Some(
                state["units_committed"]
                    .as_u64()
                    .context("state.json: no units_committed")? as Unit,
            )
        }
        None => None,
    })
}

/// The URLs to start from: `--seeds`, then the lines of `--urls` (each an http(s) URL).
fn listed_urls(args: &Args) -> anyhow::Result<Vec<String>> {
    let mut initial_urls: Vec<String> = args.seeds.clone();
    if let Some(path) = &args.urls {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading --urls {}", path.display()))?;
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            anyhow::ensure!(
                url::Url::parse(line).is_ok_and(|u| matches!(u.scheme(), "http" | "https")),
                "{}:{}: not an http(s) URL: {}",
                path.display(),
                i + 1,
                refresher::report::terminal_safe(line)
            );
            initial_urls.push(line.to_string());
        }
    }
    Ok(initial_urls)
}

/// The HTTP fetcher of the flags, writing WARC output and reading (when resuming) the
/// journal; a resumed crawl's partial WARC output of a killed unit goes first.
fn open_fetcher(
    args: &Args,
    judge: Option<&Corpus>,
    resume_through: Option<Unit>,
    date_clock: refresher::signal::DateClock,
) -> anyhow::Result<HttpFetcher> {
    let options = http_options(args, date_clock)?;
    let base_vocabulary = judge
        .map(|c| Arc::clone(&c.vocabulary))
        .unwrap_or_else(|| Arc::new(Vocabulary::new()));
    let warc = WarcOut::new(&args.warc_out)
        .with_context(|| format!("creating --warc-out {}", args.warc_out.display()))?;
    if let Some(k) = resume_through {
        // A killed unit's partial WARC output goes; it is fetched again.
        for entry in std::fs::read_dir(&args.warc_out)?.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let unit: Option<Unit> = name
                .strip_prefix("crawl-")
                .and_then(|r| r.split('.').next())
                .and_then(|n| n.parse().ok());
            if unit.is_some_and(|u| u > k) {
                std::fs::remove_file(entry.path())?;
            }
        }
        eprintln!(
            "resuming: units 0..={k} replayed from {}",
            args.index.join("journal").display()
        );
    }
    let mut fetcher = HttpFetcher::new(options, base_vocabulary, Some(warc))?;
    fetcher
        .set_journal(&args.index, resume_through)
        .with_context(|| format!("reading the journal in {}", args.index.display()))?;
    Ok(fetcher)
}

/// The fetch settings the flags give, reading dates on `date_clock`.
fn http_options(
    args: &Args,
    date_clock: refresher::signal::DateClock,
) -> anyhow::Result<HttpOptions> {
    for feed in &args.feeds {
        anyhow::ensure!(
            url::Url::parse(feed).is_ok_and(|u| matches!(u.scheme(), "http" | "https")),
            "--feed {}: not an http(s) URL",
            refresher::report::terminal_safe(feed)
        );
    }
    let discovery = match fetcher_discovery(args) {
        DiscoverArg::Sitemap => {
            let s = args
                .sitemap
                .clone()
                .context("--discover sitemap needs --sitemap URL")?;
            Discovery::Sitemaps(vec![s])
        }
        DiscoverArg::Links => Discovery::Links,
        DiscoverArg::None => Discovery::None,
    };
    let options = HttpOptions {
        timeout: Duration::from_millis(args.timeout_ms),
        max_body_bytes: args.max_body_bytes,
        min_host_delay: Duration::from_millis(args.min_host_delay_ms),
        retries: args.retries,
        resolve: args.resolve.iter().cloned().collect::<HashMap<_, _>>(),
        obey_robots: !args.ignore_robots,
        discovery,
        read_signals: reads_signals(args),
        feeds: args.feeds.clone(),
        date_clock,
        ..HttpOptions::default()
    };
    Ok(options)
}

/// Unit 0: the initial crawl of `initial_urls` (and the sitemap's), committed as the
/// crawl's first state unless resumed; returns the pages fetched.
fn crawl_initially(
    args: &Args,
    fetcher: &mut HttpFetcher,
    mut initial_urls: Vec<String>,
    resume_through: Option<Unit>,
    fingerprint: &serde_json::Value,
    date_origin: Option<f64>,
) -> anyhow::Result<Vec<(u32, Arc<PageVersion>)>> {
    if let (Some(url), None) = (&args.advance_clock, resume_through) {
        // A new crawl asks for unit 0 too: a `web-replay` then counts the attempts of a crawl
        // started again after a kill afresh (it meets the faults the killed one met).
        refresher::web_replay::ClockClient::new()?
            .advance(url, 0)
            .map_err(|e| anyhow::anyhow!("--advance-clock {url}: {e}"))?;
    }
    if args.sitemap.is_some() {
        initial_urls.extend(fetcher.read_sitemaps(0));
    }
    anyhow::ensure!(
        !initial_urls.is_empty(),
        "no URL to start from (the sitemap listed none?)"
    );
    let started = Instant::now();
    let initial = initial_crawl(fetcher, &initial_urls, args.max_pages);
    if matches!(fetcher_discovery(args), DiscoverArg::Sitemap) {
        let listed: Vec<_> = initial.iter().map(|c| c.0).collect();
        fetcher.set_listed(listed);
    }
    if resume_through.is_none() {
        fetcher.monitor().commit(0)?;
        write_state(
            &args.index,
            &serde_json::json!({
                "fingerprint": fingerprint,
                "per_unit": [],
                "units_committed": 0,
                "units": args.units,
                "pages": fetcher.page_count(),
                "totals": fetcher.monitor().totals(),
                "signal_requests": fetcher.monitor().signal_counts(),
                "date_origin": date_origin,
            }),
        )?;
    }
    if let Some(why) = fetcher.monitor().diverged() {
        anyhow::bail!("resuming from the journal: {why}");
    }
    let totals = fetcher.monitor().totals();
    eprintln!(
        "initial crawl: {} pages fetched of {} URLs ({} fetches, {} errors, {} disallowed by robots.txt) in {:.1} s",
        initial.len(),
        fetcher.page_count(),
        totals.fetches,
        totals.errors,
        totals.robots_disallowed,
        started.elapsed().as_secs_f64()
    );
    anyhow::ensure!(!initial.is_empty(), "the initial crawl fetched no page");
    Ok(initial)
}

/// The workload the crawl serves: the log's queries judged against the `--judge-with`
/// corpus (as `simulate` builds it), or against the initial crawl.
fn crawl_workload(
    args: &Args,
    log: &QueryLog,
    judge: Option<&Corpus>,
    fetcher: &HttpFetcher,
    initial: &[(u32, Arc<PageVersion>)],
) -> anyhow::Result<TermWorkload> {
    let crawl_corpus;
    let workload_corpus: &Corpus = match judge {
        Some(c) => c,
        None => {
            let vocabulary: Vocabulary = (**fetcher.vocabulary().expect("grown")).clone();
            let mut by_page: HashMap<u32, Arc<PageVersion>> = initial.iter().cloned().collect();
            let timelines = (0..fetcher.page_count() as u32)
                .map(|p| {
                    let versions = by_page
                        .remove(&p)
                        .map(|v| vec![(*v).clone()])
                        .unwrap_or_default();
                    PageTimeline::new(fetcher.url(p), versions)
                })
                .collect();
            crawl_corpus = Corpus::from_parts(
                Clock {
                    origin: 0,
                    unit_seconds: args.unit_seconds.ceil() as i64,
                    units: 1,
                },
                timelines,
                vocabulary,
            );
            &crawl_corpus
        }
    };
    let workload = args.workload.workload(log, workload_corpus);
    anyhow::ensure!(
        !workload.queries.is_empty(),
        "{}: no query of the log matches the crawled pages",
        args.log.display()
    );
    Ok(TermWorkload::new(
        &workload,
        &workload_corpus.vocabulary,
        MetricWorkload::Queries,
    ))
}

/// The units after the initial crawl: what the loop carries from unit to unit.
struct UnitLoop<'a> {
    args: &'a Args,
    fingerprint: &'a serde_json::Value,
    label: &'a str,
    /// One line per unit committed (a resumed crawl's earlier units first).
    lines: Vec<serde_json::Value>,
    /// Why judging stopped, if it did.
    judge_error: Option<String>,
    /// Unit 0's start on the crawl's own date clock (kept for a resume).
    date_origin: Option<f64>,
    /// The `--units` the resumed crawl was started with, when this run names another.
    started_with_other_units: Option<String>,
}

impl UnitLoop<'_> {
    /// Runs units 1..=`--units` (or until interrupted), each ending at its deadline: a
    /// committed unit of a resumed crawl is replayed from the journal, every other one is
    /// fetched, judged, printed and committed to `state.json`.
    fn run(
        &mut self,
        engine: &mut CrawlEngine,
        env: Option<&Environment<'_>>,
    ) -> anyhow::Result<()> {
        let args = self.args;
        let advance = args.advance_clock.clone();
        let clock = refresher::web_replay::ClockClient::new()?;
        let last = args.units.unwrap_or(Unit::MAX);
        let mut unit: Unit = 1;
        while unit <= last {
            let start = Instant::now();
            let deadline = start + Duration::from_secs_f64(args.unit_seconds);
            let replaying = engine.monitor().replaying();
            if let (Some(url), false) = (&advance, replaying) {
                clock
                    .advance(url, unit)
                    .map_err(|e| anyhow::anyhow!("--advance-clock {url}: {e}"))?;
            }
            let done = engine.step(unit, Some(deadline)).map_err(|e| {
                match (&e, &self.started_with_other_units) {
                    // Most likely why: the policy plans to its last unit.
                    (refresher::live::LiveError::Diverged { .. }, Some(started)) => anyhow::anyhow!(
                        "{e}; the crawl in --state-dir {} was started with --units {started}: resume it with --units {started}",
                        args.index.display()
                    ),
                    _ => e.into(),
                }
            })?;
            if done.replayed {
                unit += 1;
                continue;
            }
            let search = self.judge(engine, env, unit);
            let line = unit_line(engine, unit, search, &done);
            if !args.json {
                print_unit_line(&line);
            }
            self.lines.push(serde_json::to_value(&line)?);
            write_state(
                &args.index,
                &serde_json::json!({
                    "fingerprint": self.fingerprint,
                    "per_unit": self.lines,
                    "units_committed": unit,
                    "units": args.units,
                    "pages": engine.refresher().page_count(),
                    "totals": engine.monitor().totals(),
                    "signal_requests": engine.monitor().signal_counts(),
                    "date_origin": self.date_origin,
                    "policy": self.label,
                    "budget": args.budget,
                }),
            )?;
            unit += 1;
            if unit <= last {
                std::thread::sleep(deadline.saturating_duration_since(Instant::now()));
            }
        }
        Ok(())
    }

    /// The unit's search quality against the judge's corpus, while it has units and judging
    /// has not failed (a failure is reported once and stops judging).
    fn judge(
        &mut self,
        engine: &CrawlEngine,
        env: Option<&Environment<'_>>,
        unit: Unit,
    ) -> Option<SearchQuality> {
        match (env, &self.judge_error) {
            (Some(env), None) if unit < env.units() => match engine.judge(env, unit) {
                Ok(m) => Some(m.search),
                Err(e) => {
                    eprintln!("warning: not judged from unit {unit} on: {e}");
                    self.judge_error = Some(e.to_string());
                    None
                }
            },
            _ => None,
        }
    }
}

/// The line of a unit the engine fetched.
fn unit_line(
    engine: &CrawlEngine,
    unit: Unit,
    search: Option<SearchQuality>,
    done: &CrawlUnit,
) -> UnitLine {
    UnitLine {
        unit,
        search,
        refreshed: done.step.refreshed.len(),
        changed: done
            .step
            .refresh_outcomes()
            .iter()
            .filter(|o| o.changed)
            .count(),
        discovered: done.step.outcomes.iter().filter(|o| o.discovered).count(),
        estimated_delta_q: done.step.refresh_outcomes().iter().map(|o| o.delta_q).sum(),
        fetches: done.counts.fetches,
        not_modified: done.counts.not_modified,
        errors: done.counts.errors,
        robots_disallowed: done.counts.robots_disallowed,
        sitemap_requests: done.signal_requests.sitemap_requests,
        feed_requests: done.signal_requests.feed_requests,
        faults: done.counts.faults,
        gone: done.counts.gone,
        held: engine.refresher().repository().num_docs(),
        seconds: done.seconds,
        refreshed_urls: done
            .step
            .refreshed
            .iter()
            .map(|&p| engine.refresher().url(p).to_string())
            .collect(),
    }
}

/// A unit's line of the text report.
fn print_unit_line(line: &UnitLine) {
    println!(
        "unit {:>4}: {} refreshed ({} changed, {} not modified), {} new, {} errors{}, {:.2} s",
        line.unit,
        line.refreshed,
        line.changed,
        line.not_modified,
        line.discovered,
        line.errors,
        line.search
            .map(|s| format!(
                ", quality {:.4} fresh@10 {:.4} MAP@10 {:.4}",
                s.quality, s.fresh_at_10, s.map_at_10
            ))
            .unwrap_or_default(),
        line.seconds
    );
}

/// The crawl's totals and mean judged quality: one JSON object with `--json`, else a line.
fn report(
    args: &Args,
    engine: &CrawlEngine,
    lines: &[serde_json::Value],
    judge_error: Option<String>,
) -> anyhow::Result<()> {
    let totals = engine.monitor().totals();
    let signal_requests = engine.monitor().signal_counts();
    let judged: Vec<SearchQuality> = lines
        .iter()
        .filter_map(|l| {
            Some(SearchQuality {
                quality: l["quality"].as_f64()?,
                fresh_at_10: l["fresh_at_10"].as_f64()?,
                map_at_10: l["map_at_10"].as_f64()?,
            })
        })
        .collect();
    let mean = SearchQuality::mean_of(&judged);
    if args.json {
        let policy = engine.refresher().policy();
        let value = serde_json::json!({
            "policy": policy.name(),
            "label": policy.label(),
            "params": policy.settings(),
            "budget": args.budget,
            "mode": "online",
            "scoring": args.scoring.name(),
            "delta_q": args.delta_q,
            "mean_quality": mean.map(|m| m.quality),
            "mean_fresh_at_10": mean.map(|m| m.fresh_at_10),
            "mean_map_at_10": mean.map(|m| m.map_at_10),
            "per_unit": lines,
            "fetches": totals.fetches,
            "not_modified": totals.not_modified,
            "errors": totals.errors,
            "robots_disallowed": totals.robots_disallowed,
            "faults": totals.faults,
            "signal_requests": signal_requests,
            "hosts": engine.monitor().hosts(),
            "judge_error": judge_error,
        });
        println!("{value}");
    } else {
        println!(
            "{} fetches, {} not modified, {} errors, {} disallowed by robots.txt; {} sitemap and {} feed requests outside B ({} not modified, {} failed){}",
            totals.fetches,
            totals.not_modified,
            totals.errors,
            totals.robots_disallowed,
            signal_requests.sitemap_requests,
            signal_requests.feed_requests,
            signal_requests.not_modified,
            signal_requests.errors,
            mean.map(|m| format!(
                "; mean quality {:.4}, fresh@10 {:.4}, MAP@10 {:.4}",
                m.quality, m.fresh_at_10, m.map_at_10
            ))
            .unwrap_or_default()
        );
        for (host, r) in engine.monitor().hosts() {
            if !r.counts.faults.is_zero() {
                println!("faults met on {host}: {}", fault_summary(&r.counts.faults));
            }
        }
    }
    Ok(())
}

/// A host's faults as one line: each kind met, with its count.
fn fault_summary(f: &FaultCounts) -> String {
    [
        ("5xx", f.server_errors),
        ("429", f.rate_limited),
        ("connection errors", f.connection_errors),
        ("timeouts", f.timeouts),
        ("stalled bodies", f.stalled_bodies),
        ("redirect loops", f.redirect_loops),
        ("bad sitemaps", f.bad_sitemaps),
        ("bad feeds", f.bad_feeds),
        ("cut by the deadline", f.cut_by_deadline),
    ]
    .iter()
    .filter(|(_, n)| *n > 0)
    .map(|(k, n)| format!("{n} {k}"))
    .collect::<Vec<_>>()
    .join(", ")
}

fn fetcher_discovery(args: &Args) -> DiscoverArg {
    args.discover.unwrap_or(if args.sitemap.is_some() {
        DiscoverArg::Sitemap
    } else if !args.seeds.is_empty() {
        DiscoverArg::Links
    } else {
        DiscoverArg::None
    })
}
