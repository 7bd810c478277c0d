//! Replay benchmark: the shared AOL log sent to a server over the shared EmacsWiki corpus with
//! 64 concurrent clients (one kept-alive connection each), against the in-process search time
//! of the same queries measured in the same run.
//!
//! Prints QPS, p50/p99 over HTTP, the in-process p50/p99 of `SearchService::search` (the exact
//! work a request does: search, snippets, stale markers) run one query at a time, the same
//! with 64 threads at once (the load shape of the replay, without HTTP), a one-client replay
//! (HTTP cost without queueing), and the ratios.
//!
//! First, without data: how soon the client gives up on a server that never answers.
//!
//! `cargo bench --bench replay`; `REPLAY_QUERIES=N` replays only the first N queries (default:
//! all), `REPLAY_CONCURRENCY` changes the 64.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use refresher::client::replay::{replay, ReplayOptions, ReplayQuery};
use refresher::corpus::ingest::{load_corpus, IngestOptions};
use refresher::querylog::layouts::{read_log, ReadOptions};
use refresher::server::search::{SearchParams, SearchRequest};
use refresher::server::{AppState, Policies, ServerOptions};

/// The allocator the `refresher` binary ships with, so the figures are the binary's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 600_000_000, 3).expect("valid bounds")
}

fn ms(h: &Histogram<u64>, q: f64) -> f64 {
    h.value_at_quantile(q) as f64 / 1e3
}

/// How soon the replay client gives up on a server that accepts and never answers (the
/// figure the unit test `a_server_that_never_answers_times_out` once bounded by wall clock,
/// 5 s): 4 queries, 2 at a time, a 300 ms timeout.
fn silent_server_timeouts() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        // Accepted connections are kept open and never answered.
        let mut open = Vec::new();
        for stream in listener.incoming().flatten() {
            open.push(stream);
        }
    });
    let queries: Vec<ReplayQuery> = (0..4)
        .map(|i| ReplayQuery {
            text: format!("q{i}"),
            time: None,
        })
        .collect();
    let options = ReplayOptions {
        concurrency: 2,
        timeout: Duration::from_millis(300),
        ..ReplayOptions::default()
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let started = Instant::now();
    let report = rt
        .block_on(replay(
            &format!("http://{addr}"),
            Arc::new(queries),
            &options,
            Arc::new(|| {}),
        ))
        .expect("replay");
    println!(
        "silent server: 4 queries, 2 at a time, 300 ms timeout: all given up after {:.0} ms ({})",
        started.elapsed().as_secs_f64() * 1e3,
        report.status_summary()
    );
}

fn main() {
    silent_server_timeouts();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data");
    let corpus_path = root.join("corpora/emacswiki");
    let log_path = root.join("querylogs/aol-2006-heavy-users.even-anonid.collection-layout.txt.gz");
    if !corpus_path.exists() || !log_path.exists() {
        println!(
            "replay bench skipped: {} or {} missing",
            corpus_path.display(),
            log_path.display()
        );
        return;
    }
    let concurrency = env_usize("REPLAY_CONCURRENCY", 64);

    let t = Instant::now();
    let (corpus, _) = load_corpus(&corpus_path, &IngestOptions::default()).expect("corpus");
    println!(
        "corpus: {} pages loaded in {:.1} s",
        corpus.pages.len(),
        t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    let state = AppState::build(corpus, None, ServerOptions::new(Policies::registry()))
        .expect("repository");
    println!(
        "repository: {} documents indexed in {:.1} s",
        state.search.num_docs(),
        t.elapsed().as_secs_f64()
    );
    let log = read_log(
        &log_path,
        &ReadOptions {
            layout: None,
            keep_repeats: true,
            ..ReadOptions::default()
        },
    )
    .expect("log");
    let mut queries = ReplayQuery::from_submissions(&log.submissions);
    let limit = env_usize("REPLAY_QUERIES", 0);
    if limit > 0 {
        queries.truncate(limit);
    }
    let requests: Vec<Option<SearchRequest>> = queries
        .iter()
        .map(|q| {
            SearchParams {
                q: Some(q.text.clone()),
                offset: None,
                limit: Some(10),
            }
            .validate()
            .ok()
        })
        .collect();
    println!("log: {} queries to send", queries.len());

    // In-process, one at a time.
    let mut sequential = hist();
    let t = Instant::now();
    for r in requests.iter().flatten() {
        let s = Instant::now();
        let _ = state.search.search(r);
        let _ = sequential.record(s.elapsed().as_micros().max(1) as u64);
    }
    let seq_secs = t.elapsed().as_secs_f64();

    // Over HTTP on loopback, server and clients in one process on separate runtimes.
    let server_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let (addr, _handle) = server_rt
        .block_on(refresher::server::spawn(
            state.clone(),
            "127.0.0.1:0".parse().expect("addr"),
        ))
        .expect("bind");
    let client_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let report = client_rt
        .block_on(replay(
            &format!("http://{addr}"),
            Arc::new(queries.clone()),
            &ReplayOptions {
                concurrency,
                speed: None,
                limit: 10,
                ..ReplayOptions::default()
            },
            Arc::new(|| {}),
        ))
        .expect("replay");

    // One client: the per-request cost of HTTP without queueing behind other clients.
    let single = client_rt
        .block_on(replay(
            &format!("http://{addr}"),
            Arc::new(queries.clone()),
            &ReplayOptions {
                concurrency: 1,
                speed: None,
                limit: 10,
                ..ReplayOptions::default()
            },
            Arc::new(|| {}),
        ))
        .expect("replay");

    // In-process with the replay's concurrency (same queueing, no HTTP).
    let concurrent = Mutex::new(hist());
    let next = AtomicUsize::new(0);
    let t = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..concurrency {
            scope.spawn(|| {
                let mut local = hist();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(r) = requests.get(i) else { break };
                    if let Some(r) = r {
                        let s = Instant::now();
                        let _ = state.search.search(r);
                        let _ = local.record(s.elapsed().as_micros().max(1) as u64);
                    }
                }
                let _ = concurrent.lock().expect("lock").add(&local);
            });
        }
    });
    let conc_secs = t.elapsed().as_secs_f64();
    let concurrent = concurrent.into_inner().expect("lock");
    drop(server_rt);
    std::thread::sleep(Duration::from_millis(10));

    println!(
        "HTTP replay, {concurrency} clients: {} queries in {:.2} s = {:.0} QPS; p50 {:.3} ms, p90 {:.3} ms, p99 {:.3} ms, max {:.3} ms; {} errors",
        report.queries, report.seconds, report.qps, report.p50_ms, report.p90_ms, report.p99_ms, report.max_ms, report.errors
    );
    for e in &report.error_samples {
        println!("  error: {e}");
    }
    println!(
        "in-process, sequential: {} queries in {:.2} s = {:.0} QPS; p50 {:.3} ms, p99 {:.3} ms",
        sequential.len(),
        seq_secs,
        sequential.len() as f64 / seq_secs,
        ms(&sequential, 0.5),
        ms(&sequential, 0.99)
    );
    println!(
        "in-process, {concurrency} threads: {} queries in {:.2} s = {:.0} QPS; p50 {:.3} ms, p99 {:.3} ms",
        concurrent.len(),
        conc_secs,
        concurrent.len() as f64 / conc_secs,
        ms(&concurrent, 0.5),
        ms(&concurrent, 0.99)
    );
    println!(
        "ratio HTTP p50 / in-process p50: {:.2}x against sequential, {:.2}x against {concurrency} threads (goal <= 1.3x)",
        report.p50_ms / ms(&sequential, 0.5),
        report.p50_ms / ms(&concurrent, 0.5)
    );
    println!(
        "HTTP replay, 1 client: {:.0} QPS; p50 {:.3} ms, p99 {:.3} ms; {} errors; ratio p50 / in-process sequential p50: {:.2}x",
        single.qps,
        single.p50_ms,
        single.p99_ms,
        single.errors,
        single.p50_ms / ms(&sequential, 0.5)
    );
    println!(
        "Little's law check: {concurrency} clients / {:.0} QPS = {:.2} ms mean time in system",
        report.qps,
        concurrency as f64 / report.qps * 1e3
    );
    println!(
        "ratio QPS HTTP / in-process with {concurrency} threads: {:.2}",
        report.qps / (concurrent.len() as f64 / conc_secs)
    );
}
