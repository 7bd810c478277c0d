//! Crawl benchmark: `crawl` of `web-replay` on loopback with politeness off — pages fetched,
//! parsed and indexed per second (the initial crawl), the share of each unit's time in the
//! fetches, the index update with the hook, and the policy; and the memory of the crawler's
//! URL catalogue and frontier per URL, measured on 100,000 URLs; and how promptly a unit's
//! deadline ends a batch against a server that never answers. The crawl runs three times side by
//! side: without reading signals, reading the sitemap dates and a 50-item feed every unit, and
//! without signals again with its page fetches handed to 3 mesh workers
//! (`refresher::live::spread`; the site has one host, so one worker fetches it all: the figure
//! is what the exchanges cost).
//!
//! `cargo bench --bench crawl`; `CRAWL_PAGES=N` (default 5000) sets the generated site's size.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use refresher::corpus::generate::{generate_site, GeneratorConfig};
use refresher::corpus::ingest::{load_corpus, IngestOptions};
use refresher::corpus::{Corpus, LiveWeb, PageId};
use refresher::crawl::http::{Discovery, HttpFetcher, HttpOptions};
use refresher::crawl::{FetchError, FetchRequest, FetchResult, Fetcher};
use refresher::index::ScoringKind;
use refresher::judge::exact::MetricQuery;
use refresher::live::spread::SpreadFetches;
use refresher::live::{initial_crawl, CrawlEngine, EngineConfig};
use refresher::mesh::{Greeting, MeshConfig};
use refresher::policy::registry::family;
use refresher::quality::measure::DeltaQMethod;
use refresher::quality::ViewingLikelihood;
use refresher::querylog::term_workload::TermWorkload;
use refresher::signal::{DateClock, SignalSettings};
use refresher::sim::EnvironmentConfig;
use refresher::text::Vocabulary;
use refresher::web_replay::{self, ReplayOptions, ReplaySite};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn rss_mib() -> f64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: f64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    pages * 4096.0 / (1024.0 * 1024.0)
}

fn main() {
    let pages: usize = std::env::var("CRAWL_PAGES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5000);
    let dir = tempfile::tempdir().unwrap();
    let site = generate_site(
        &GeneratorConfig {
            pages,
            weeks: 6,
            queries: 5000,
            ..GeneratorConfig::default()
        },
        dir.path(),
    )
    .unwrap();
    let (corpus, _) = load_corpus(&site.corpus_dir, &IngestOptions::default()).unwrap();
    let host = refresher::crawl::http::host_of(corpus.url(0)).unwrap();
    println!("crawl bench: generated site, {} pages × {} units, web-replay on loopback, politeness off, forward-index repository (as `crawl`)", corpus.page_count(), corpus.units());
    // Memory of the URL catalogue and frontier: 100,000 new URLs met as links. Measured before
    // the crawls, whose memory the allocator may give back while this is measured (which once
    // printed a negative figure).
    let mut frontier =
        HttpFetcher::new(HttpOptions::default(), Arc::new(Vocabulary::new()), None).unwrap();
    let before = rss_mib();
    let urls: Vec<String> = (0..100_000u32)
        .map(|i| format!("https://{host}/wiki/Some_Page_Name_{i:07}?action=view"))
        .collect();
    let ids: Vec<PageId> = frontier.add_urls(urls.iter().map(String::as_str));
    drop(urls);
    let after = rss_mib();
    println!(
        "URL catalogue: {} URLs (~60 bytes each) take {:.1} MiB: {:.0} MiB per million URLs (estimated from 100k)",
        ids.len(),
        after - before,
        (after - before) * 10.0
    );

    // Side by side in one run: without reading signals, then reading the site's sitemap
    // dates and a feed of its newest 50 changes every unit (issue 49's crawl-rate figure).
    crawl_site(&corpus, &host, None, 1);
    crawl_site(&corpus, &host, Some(&["lastmod", "feed:items=50"]), 1);
    crawl_site(&corpus, &host, None, 3);

    deadline_overshoot();
}

/// One crawl of the corpus served by `web-replay` on loopback: the initial crawl's rate, then
/// every unit's, with the site publishing `signals` and the crawler reading them (`None`:
/// web-replay's default publication, not read), the page fetches done by `workers` mesh workers
/// when more than 1.
fn crawl_site(corpus: &Corpus, host: &str, signals: Option<&[&str]>, workers: usize) {
    let mut replay = ReplayOptions::manual();
    if let Some(specs) = signals {
        replay.signals = SignalSettings::parse(specs).unwrap();
    }
    let (site, addr, _server) =
        web_replay::serve_on_loopback(ReplaySite::new(Arc::new(corpus.clone()), replay)).unwrap();
    let options = HttpOptions {
        min_host_delay: Duration::ZERO,
        resolve: HashMap::from([(host.to_string(), addr)]),
        discovery: Discovery::Sitemaps(vec![format!("https://{host}/sitemap.xml")]),
        read_signals: signals.is_some(),
        date_clock: DateClock::of(&corpus.clock),
        ..HttpOptions::default()
    };
    let mut reading = signals.map_or("no signals read".to_string(), |s| {
        format!("signals read: {}", s.join(" + "))
    });
    let spread = (workers > 1).then(|| {
        reading.push_str(&format!(", fetches over {workers} mesh workers"));
        SpreadFetches::start(
            options.clone(),
            MeshConfig {
                workers,
                ..MeshConfig::single()
            },
            Greeting {
                process: 0,
                version: "bench".into(),
                configuration: "bench".into(),
                corpus: "bench".into(),
            },
        )
        .unwrap()
    });
    let mut fetcher = HttpFetcher::new(options, Arc::new(Vocabulary::new()), None).unwrap();
    if let Some(spread) = &spread {
        fetcher.set_job_runner(spread.runner());
    }
    let urls = fetcher.read_sitemaps(0);
    let started = Instant::now();
    let initial = initial_crawl(&mut fetcher, &urls, usize::MAX);
    let fetch_seconds = started.elapsed().as_secs_f64();
    fetcher.set_listed(initial.iter().map(|c| c.0));
    // A small workload of the commonest terms, so the hook and the policy have work.
    let mut workload = TermWorkload::default();
    let vocabulary = Arc::clone(refresher::crawl::Fetcher::vocabulary(&fetcher).unwrap());
    for t in 0..vocabulary.len().min(300) as u32 {
        workload.term_frequency.insert(t, 1.0);
        workload.queries.push(MetricQuery {
            terms: vec![t],
            frequency: 1.0,
        });
    }
    let budget = corpus.page_count() / 10;
    let config = EngineConfig {
        budget,
        seed: 1,
        environment: EnvironmentConfig {
            scoring: ScoringKind::Bm25,
            likelihood: ViewingLikelihood::default(),
            pieces: 3,
            delta_q: DeltaQMethod::Estimate,
        },
        last_unit: Some(corpus.units() - 1),
        warmup_units: 0,
    };
    let index_started = Instant::now();
    let mut engine = CrawlEngine::new(
        fetcher,
        &initial,
        Arc::new(workload),
        family("user-centric").unwrap().make([]).unwrap(),
        &config,
    )
    .unwrap();
    let index_seconds = index_started.elapsed().as_secs_f64();
    println!(
        "[{reading}] initial crawl: {} pages fetched + parsed in {fetch_seconds:.2} s ({:.0} pages/s), indexed in {index_seconds:.2} s; fetch + parse + index {:.0} pages/s",
        initial.len(),
        initial.len() as f64 / fetch_seconds,
        initial.len() as f64 / (fetch_seconds + index_seconds)
    );
    let (mut fetch, mut index, mut policy, mut total, mut fetched) = (0.0, 0.0, 0.0, 0.0, 0u64);
    for unit in 1..corpus.units() {
        site.advance();
        let u = engine.step(unit, None).unwrap();
        fetch += u.step.timings.fetch;
        index += u.step.timings.index;
        policy += u.step.timings.policy;
        total += u.seconds;
        fetched += u.counts.fetches;
    }
    let signal = engine.monitor().signal_counts();
    println!(
        "[{reading}] refresh units (B = {budget}, user-centric): {fetched} fetches in {total:.2} s ({:.0} pages/s, signal requests excluded); {} sitemap and {} feed requests; time share: fetch {:.1} %, index + hook {:.1} %, policy {:.1} %, other {:.1} %",
        fetched as f64 / total,
        signal.sitemap_requests,
        signal.feed_requests,
        100.0 * fetch / total,
        100.0 * index / total,
        100.0 * policy / total,
        100.0 * (total - fetch - index - policy) / total
    );
    if let Some(spread) = spread {
        spread.stop().unwrap();
        let (batches, bytes) = spread.traffic();
        println!(
            "[{reading}] exchanged between the workers: {bytes} bytes in {batches} batches ({:.0} bytes a fetch)",
            bytes as f64 / (initial.len() as f64 + fetched as f64)
        );
    }
}

/// How promptly a unit's deadline ends a fetch batch against a server that accepts and never
/// answers (the figure the unit test `faults_are_counted_per_host_and_never_stall_a_batch`
/// once bounded by wall clock, 700 ms for a 300 ms deadline): the batch's time, and how far
/// past the deadline it returned.
fn deadline_overshoot() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        // Accepted connections are kept open and never answered.
        let mut open = Vec::new();
        for stream in listener.incoming().flatten() {
            open.push(stream);
        }
    });
    let options = HttpOptions {
        min_host_delay: Duration::ZERO,
        timeout: Duration::from_secs(30),
        retries: 0,
        resolve: HashMap::from([("silent.example".to_string(), addr)]),
        ..HttpOptions::default()
    };
    let mut fetcher = HttpFetcher::new(options, Arc::new(Vocabulary::new()), None).unwrap();
    let requests: Vec<FetchRequest> = fetcher
        .add_urls(["https://silent.example/a", "https://silent.example/b"])
        .into_iter()
        .map(|page| FetchRequest {
            page,
            validator: None,
        })
        .collect();
    let deadline = Duration::from_millis(300);
    fetcher
        .monitor()
        .set_deadline(Some(Instant::now() + deadline));
    let started = Instant::now();
    let got = fetcher.fetch(1, &requests);
    let took = started.elapsed();
    let failed = got
        .iter()
        .filter(|f| matches!(&f.result, FetchResult::Failed(FetchError::Deadline)))
        .count();
    println!(
        "unit deadline: a batch of {} fetches against a server that never answers returned after {:.0} ms, {:.0} ms past its {} ms deadline ({failed} failed on the deadline)",
        requests.len(),
        took.as_secs_f64() * 1e3,
        (took.as_secs_f64() - deadline.as_secs_f64()) * 1e3,
        deadline.as_millis()
    );
}
