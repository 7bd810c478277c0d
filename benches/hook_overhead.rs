//! Indexing overhead of the measurement hook (paper 003 §5.2 / Fig. 2: 7–8 % in Lucene).
//!
//! Applies the EmacsWiki weekly change batches (weeks 1..T) to two repositories synchronised
//! at week 0 — one with the hook watching every vocabulary term (an upper bound: a real
//! workload watches fewer), one without — alternating which goes first each week, in one
//! process. Prints the time ratio, per-batch latency and the forward index's memory.
//!
//! `cargo bench --bench hook_overhead [-- CORPUS_PATH]`; the corpus defaults to
//! `$REFRESHER_SHARED_DATA/corpora/emacswiki`, else `../shared/data/corpora/emacswiki`.

use refresher::crawl::SnapshotFetcher;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use refresher::corpus::ingest::{load_corpus, IngestOptions};
use refresher::corpus::LiveWeb;
use refresher::index::{NullSink, Repository, ScoringKind, WorkloadTerms};
use refresher::text::TermId;

/// The allocator the `refresher` binary ships with, so the figures are the binary's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Counts shifts without keeping them, so the sink's cost is not part of the measurement.
struct CountingSink(usize);

impl refresher::index::ShiftSink for CountingSink {
    fn shifts(&mut self, _unit: u32, shifts: &[refresher::index::ScoreShift]) {
        self.0 += shifts.len();
    }
}

fn corpus_path() -> PathBuf {
    if let Some(arg) = std::env::args().skip(1).find(|a| !a.starts_with('-')) {
        return PathBuf::from(arg);
    }
    let root = std::env::var_os("REFRESHER_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data"));
    root.join("corpora/emacswiki")
}

fn main() {
    let path = corpus_path();
    let t0 = Instant::now();
    let (corpus, _) = load_corpus(&path, &IngestOptions::default())
        .unwrap_or_else(|e| panic!("loading {}: {e}", path.display()));
    println!(
        "corpus {}: {} pages, {} units, {} terms (loaded in {:.1?})",
        path.display(),
        corpus.page_count(),
        corpus.units(),
        corpus.vocabulary.len(),
        t0.elapsed()
    );
    let rounds = 2;
    let (mut with_hook, mut without) = (Duration::ZERO, Duration::ZERO);
    let mut latencies: Vec<Duration> = Vec::new();
    let mut shifts = CountingSink(0);
    let mut hook_own = Duration::ZERO;
    let mut forward_bytes = 0;
    let mut pages_applied = 0;
    for round in 0..rounds {
        let mut on = SnapshotFetcher::new(&corpus)
            .repository_at(0, ScoringKind::Bm25, None)
            .unwrap();
        on.set_hook(Some(WorkloadTerms::from_ids(
            0..corpus.vocabulary.len() as TermId,
        )));
        let mut off = SnapshotFetcher::new(&corpus)
            .repository_at(0, ScoringKind::Bm25, None)
            .unwrap();
        for week in 1..corpus.units() {
            let batch = SnapshotFetcher::new(&corpus).changes_at(week);
            pages_applied += batch.len();
            let mut timed_on = |repo: &mut Repository| {
                let t = Instant::now();
                let report = repo.apply(week, &batch, &mut shifts).unwrap();
                let d = t.elapsed();
                hook_own += report.hook_time;
                latencies.push(d);
                d
            };
            if (week + round) % 2 == 0 {
                with_hook += timed_on(&mut on);
                let t = Instant::now();
                off.apply(week, &batch, &mut NullSink).unwrap();
                without += t.elapsed();
            } else {
                let t = Instant::now();
                off.apply(week, &batch, &mut NullSink).unwrap();
                without += t.elapsed();
                with_hook += timed_on(&mut on);
            }
        }
        forward_bytes = on.forward().memory_bytes();
    }
    latencies.sort();
    let ratio = with_hook.as_secs_f64() / without.as_secs_f64();
    println!(
        "batches: {} weeks x {rounds} rounds, {} page updates per run, {} shifts recorded per run",
        corpus.units() - 1,
        pages_applied / rounds as usize,
        shifts.0 / rounds as usize
    );
    println!(
        "time with hook {:.3?}, without {:.3?}: ratio {ratio:.4} (overhead {:+.2} %, goal <= 3 %)",
        with_hook,
        without,
        (ratio - 1.0) * 100.0
    );
    println!(
        "the hook's own time inside apply: {:.3?} = {:+.2} % of index maintenance without it (measured in place, immune to load swings between the two repositories)",
        hook_own,
        100.0 * hook_own.as_secs_f64() / (with_hook - hook_own).as_secs_f64()
    );
    println!(
        "update-batch latency with hook: median {:.1?}, p90 {:.1?}, max {:.1?}",
        latencies[latencies.len() / 2],
        latencies[latencies.len() * 9 / 10],
        latencies[latencies.len() - 1]
    );
    println!(
        "forward index memory: {:.1} MiB",
        forward_bytes as f64 / (1024.0 * 1024.0)
    );
    workload_hook(&corpus);
}

/// The realistic case: the hook watches the single-term workload of the shared AOL log (after
/// paper 003's relevance filter), as the refresher runs it. Measured in place (the hook's own
/// time inside `apply`), one pass over the weeks.
fn workload_hook(corpus: &refresher::corpus::Corpus) {
    use refresher::querylog::layouts::{read_log, ReadOptions};
    use refresher::querylog::workload::{Workload, WorkloadOptions};
    let log = corpus_path().parent().and_then(|p| p.parent()).map(|root| {
        root.join("querylogs/aol-2006-heavy-users.even-anonid.collection-layout.txt.gz")
    });
    let Some(log) = log.filter(|p| p.exists()) else {
        println!("workload hook: SKIPPED (no AOL log beside the corpus)");
        return;
    };
    let log = read_log(&log, &ReadOptions::default()).expect("AOL log");
    let workload = Workload::build(&log, corpus, &WorkloadOptions::default());
    let terms: Vec<TermId> = workload
        .single_terms
        .iter()
        .filter_map(|(t, _)| corpus.vocabulary.get(t))
        .collect();
    let mut repo = SnapshotFetcher::new(corpus)
        .repository_at(0, ScoringKind::Bm25, None)
        .unwrap();
    repo.set_hook(Some(WorkloadTerms::from_ids(terms.iter().copied())));
    let (mut total, mut hook) = (Duration::ZERO, Duration::ZERO);
    let mut shifts = CountingSink(0);
    for week in 1..corpus.units() {
        let batch = SnapshotFetcher::new(corpus).changes_at(week);
        let t = Instant::now();
        let report = repo.apply(week, &batch, &mut shifts).unwrap();
        total += t.elapsed();
        hook += report.hook_time;
    }
    println!(
        "workload hook ({} single-term queries, {} shifts): hook's own time {:.3?} = {:+.2} % of index maintenance without it",
        terms.len(),
        shifts.0,
        hook,
        100.0 * hook.as_secs_f64() / (total - hook).as_secs_f64()
    );
}
