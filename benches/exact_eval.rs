//! Exact evaluation speed: our forward-index metrics against a naive baseline that ranks every
//! workload query's full result list with tantivy searches on a stale and on a live tantivy
//! index, over every unit of a corpus, side by side in one run (issue: ≥ 20× faster, identical
//! metric values).
//!
//! Scenario: the repository is the corpus at unit 0 and is never refreshed (the stale side);
//! the live side advances unit by unit. Both paths compute repository quality (paper 003
//! Eq. 5), top-10 freshness and MAP@10 for every unit.
//!
//! `cargo bench --bench exact_eval [-- CORPUS LOG] [--fast-only]`; defaults to the shared
//! EmacsWiki corpus and AOL log (`$REFRESHER_SHARED_DATA` or `../shared/data`). `--fast-only`
//! skips the naive path (for profiling the fast one; `EXACT_EVAL_REPEATS` sets its run count).

use refresher::crawl::SnapshotFetcher;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use refresher::corpus::ingest::{load_corpus, IngestOptions};
use refresher::corpus::{is_fresh, Corpus, LiveWeb, PageId};
use refresher::index::schema::url_hash;
use refresher::index::{rank_order, NullSink, Repository, ScoringKind};

use refresher::judge::exact::{evaluate_with, LiveTruth, MetricQuery, RankMemory, TOP_K};
use refresher::judge::live_scores::LiveScores;
use refresher::quality::ViewingLikelihood;
use refresher::querylog::layouts::{read_log, ReadOptions};
use refresher::querylog::term_workload::{MetricWorkload, TermWorkload};
use refresher::querylog::workload::{Workload, WorkloadOptions};

/// The allocator the `refresher` binary ships with, so the figures are the binary's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn data_root() -> PathBuf {
    std::env::var_os("REFRESHER_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data"))
}

/// Full ranked list of a query from tantivy (conjunctive, tantivy's own scoring under the
/// repository's live statistics), in the total rank order.
fn tantivy_list(repo: &Repository, web: &dyn LiveWeb, q: &MetricQuery) -> Vec<(PageId, f32)> {
    let mut hits: Vec<(f32, u64, PageId)> = repo
        .tantivy_query_scores(&q.terms)
        .expect("tantivy search")
        .into_iter()
        .map(|(p, s)| (s, url_hash(web.url(p)), p))
        .collect();
    hits.sort_by(|a, b| rank_order(*a, *b));
    hits.into_iter().map(|(s, _, p)| (p, s)).collect()
}

/// How many times the fast path runs (the speed-up is against the median).
const FAST_REPEATS: usize = 5;

/// One run of the fast path: its metrics per unit and where its time went.
struct FastRun {
    metrics: Vec<(f64, f64, f64)>,
    total: Duration,
    built: Duration,
    advancing: Duration,
    truths: Duration,
    evaluations: Duration,
}

/// The fast path once: both forward indexes built, then every unit's live truth and the stale
/// repository's metrics (quality, fresh@10, MAP@10).
fn fast_path(
    corpus: &Corpus,
    queries: &[MetricQuery],
    likelihood: &ViewingLikelihood,
    held: &[Option<u32>],
) -> FastRun {
    let units = corpus.units();
    let started = Instant::now();
    // Built once for both sides, as the simulation environment builds its live side and
    // initial repository.
    let (mut live, initial) = LiveScores::at_with_copy(corpus, 0, ScoringKind::Bm25);
    let repo =
        Repository::forward_only_from(initial, Arc::clone(&corpus.vocabulary), ScoringKind::Bm25);
    let mut fast = Vec::new();
    // As a simulation run does: each side re-ranks its lists from their previous order.
    let (mut live_memory, mut repo_memory) = (RankMemory::default(), RankMemory::default());
    // Where the fast path's time goes: building both indexes, advancing the live one, the live
    // truths, the repository's evaluations.
    let built = started.elapsed();
    let (mut advancing, mut truths, mut evaluations) =
        (Duration::ZERO, Duration::ZERO, Duration::ZERO);
    for unit in 0..units {
        let step = Instant::now();
        live.advance_to(corpus, unit);
        advancing += step.elapsed();
        let step = Instant::now();
        let truth = LiveTruth::compute_with(&mut live_memory, &live, queries, likelihood);
        truths += step.elapsed();
        let step = Instant::now();
        let m = evaluate_with(
            &mut repo_memory,
            repo.forward(),
            repo.scorer(),
            queries,
            &truth,
            likelihood,
            // As the simulator judges freshness: the live truth knows every live version.
            &|p| truth.is_fresh(p, held[p as usize]),
        );
        evaluations += step.elapsed();
        fast.push((m.search.quality, m.search.fresh_at_10, m.search.map_at_10));
    }
    FastRun {
        metrics: fast,
        total: started.elapsed(),
        built,
        advancing,
        truths,
        evaluations,
    }
}

fn main() {
    let fast_only = std::env::args().any(|a| a == "--fast-only");
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let corpus_path = args
        .first()
        .map(PathBuf::from)
        .unwrap_or_else(|| data_root().join("corpora/emacswiki"));
    let log_path = args.get(1).map(PathBuf::from).unwrap_or_else(|| {
        data_root().join("querylogs/aol-2006-heavy-users.even-anonid.collection-layout.txt.gz")
    });
    if !corpus_path.exists() || !log_path.exists() {
        println!(
            "SKIPPED: {} or {} not found",
            corpus_path.display(),
            log_path.display()
        );
        return;
    }
    let (corpus, _) = load_corpus(&corpus_path, &IngestOptions::default()).expect("corpus");
    let log = read_log(&log_path, &ReadOptions::default()).expect("log");
    let workload = Workload::build(&log, &corpus, &WorkloadOptions::default());
    let sim = TermWorkload::new(&workload, &corpus.vocabulary, MetricWorkload::Queries);
    let queries = &sim.queries;
    let likelihood = ViewingLikelihood::default();
    let units = corpus.units();
    println!(
        "corpus {}: {} pages, {} units; {} workload queries (BM25)",
        corpus_path.display(),
        corpus.page_count(),
        units,
        queries.len()
    );
    // The stale repository's copies are those of unit 0; as the simulator does, the versions
    // it holds are kept per page.
    let held: Vec<Option<u32>> = (0..corpus.page_count() as PageId)
        .map(|p| corpus.page_at(p, 0).present().map(|v| v.unit))
        .collect();
    let fresh_at = |page: PageId, unit: u32| is_fresh(&corpus, page, held[page as usize], unit);

    // Fast path: forward indexes, run FAST_REPEATS times (its second-scale time moves with
    // this machine's memory and scheduling more than the naive path's minute does); the
    // speed-up is against the median run, and every run's figures are printed.
    let repeats = std::env::var("EXACT_EVAL_REPEATS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(FAST_REPEATS);
    let runs: Vec<FastRun> = (0..repeats)
        .map(|_| fast_path(&corpus, queries, &likelihood, &held))
        .collect();
    for (i, r) in runs.iter().enumerate() {
        println!(
            "  forward indexes, run {}: {:.2?} (build {:.2?}, live advance {:.2?}, live truths {:.2?}, repository evaluations {:.2?})",
            i + 1,
            r.total,
            r.built,
            r.advancing,
            r.truths,
            r.evaluations
        );
    }
    assert!(
        runs.windows(2).all(|w| w[0].metrics == w[1].metrics),
        "the fast path's runs disagree"
    );
    let mut times: Vec<Duration> = runs.iter().map(|r| r.total).collect();
    times.sort();
    let fast_time = times[times.len() / 2];
    let fast = &runs[0].metrics;
    if fast_only {
        println!("fast path: {fast_time:.2?} (median of {repeats} runs); naive path skipped");
        return;
    }

    // Naive path: two tantivy indexes, full lists from tantivy searches.
    let started = Instant::now();
    let stale = SnapshotFetcher::new(&corpus)
        .repository_at(0, ScoringKind::Bm25, None)
        .expect("stale index");
    let mut live_index = SnapshotFetcher::new(&corpus)
        .repository_at(0, ScoringKind::Bm25, None)
        .expect("live index");
    let mut naive = Vec::new();
    for unit in 0..units {
        if unit > 0 {
            live_index
                .apply(
                    unit,
                    &SnapshotFetcher::new(&corpus).changes_at(unit),
                    &mut NullSink,
                )
                .expect("apply");
        }
        let (mut num, mut den) = (0.0, 0.0);
        let (mut fresh_sum, mut fresh_n, mut ap_sum, mut ap_n) = (0.0, 0usize, 0.0, 0usize);
        for q in queries {
            let live_list = tantivy_list(&live_index, &corpus, q);
            let live_score: HashMap<PageId, f32> = live_list.iter().copied().collect();
            den += q.frequency
                * live_list
                    .iter()
                    .enumerate()
                    .map(|(r, &(_, s))| likelihood.at(r as u64 + 1) * f64::from(s))
                    .sum::<f64>();
            let stale_list = tantivy_list(&stale, &corpus, q);
            num += q.frequency
                * stale_list
                    .iter()
                    .enumerate()
                    .map(|(r, (p, _))| {
                        likelihood.at(r as u64 + 1) * f64::from(*live_score.get(p).unwrap_or(&0.0))
                    })
                    .sum::<f64>();
            let top = &stale_list[..stale_list.len().min(TOP_K)];
            if !top.is_empty() {
                fresh_sum += top.iter().filter(|(p, _)| fresh_at(*p, unit)).count() as f64
                    / top.len() as f64;
                fresh_n += 1;
            }
            let relevant: Vec<PageId> = live_list.iter().take(TOP_K).map(|&(p, _)| p).collect();
            if !relevant.is_empty() {
                let (mut hits, mut ap) = (0, 0.0);
                for (k, (p, _)) in top.iter().enumerate() {
                    if relevant.contains(p) {
                        hits += 1;
                        ap += hits as f64 / (k + 1) as f64;
                    }
                }
                ap_sum += ap / relevant.len() as f64;
                ap_n += 1;
            }
        }
        let mean = |s: f64, n: usize| if n == 0 { 1.0 } else { s / n as f64 };
        naive.push((
            if den > 0.0 { num / den } else { 1.0 },
            mean(fresh_sum, fresh_n),
            mean(ap_sum, ap_n),
        ));
    }
    let naive_time = started.elapsed();

    assert_eq!(
        fast.len(),
        naive.len(),
        "the two paths judged different units"
    );
    let max_diff = fast
        .iter()
        .zip(&naive)
        .map(|(a, b)| {
            (a.0 - b.0)
                .abs()
                .max((a.1 - b.1).abs())
                .max((a.2 - b.2).abs())
        })
        .fold(0.0, f64::max);
    let mean_q = fast.iter().map(|m| m.0).sum::<f64>() / fast.len() as f64;
    println!("exact evaluation of {units} units: forward indexes {fast_time:.2?} (median of {repeats} runs), naive tantivy {naive_time:.2?}");
    println!(
        "speed-up: {:.1}×",
        naive_time.as_secs_f64() / fast_time.as_secs_f64()
    );
    println!("largest difference in quality / fresh@10 / MAP@10 over all units: {max_diff:.3e} (mean quality without refresh {mean_q:.4})");
    // The issue asks for identical values: equal up to floating-point summation order. Each
    // unit's three metrics are checked (a NaN fails the comparison, where `f64::max` would
    // drop it from the maximum).
    for (unit, (a, b)) in fast.iter().zip(&naive).enumerate() {
        for (name, x, y) in [
            ("quality", a.0, b.0),
            ("fresh@10", a.1, b.1),
            ("MAP@10", a.2, b.2),
        ] {
            assert!(
                (x - y).abs() <= MAX_DIFFERENCE,
                "unit {unit}: {name} {x} (forward indexes) vs {y} (naive tantivy)"
            );
        }
    }
}

/// Largest difference accepted between the fast and the naive path's metric values.
const MAX_DIFFERENCE: f64 = 1e-9;
