//! What the crawler's knowledge view costs when a policy (or the judge) asks for it: the
//! held-copy link graph, the directory groups and the PageRank, on the EmacsWiki repository.
//!
//! Builds the crawl state of the initial crawl (week 0), then asks for the graph, the
//! directories and the PageRank (cold); then, week after week, swaps in the copies of the pages
//! that changed (as a refresh-everything policy would) and asks again (the PageRank
//! warm-started from the week before). Prints the median time of each part and the
//! power-iteration steps.
//!
//! `cargo bench --bench knowledge [-- CORPUS_PATH]`; the corpus defaults to
//! `$REFRESHER_SHARED_DATA/corpora/emacswiki`, else `../shared/data/corpora/emacswiki`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use refresher::corpus::ingest::{load_corpus, IngestOptions};
use refresher::corpus::{LiveWeb, PageId};
use refresher::crawl::{pagerank, CrawlState, LinkGraph};

/// The allocator the `refresher` binary ships with, so the figures are the binary's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn corpus_path() -> PathBuf {
    if let Some(arg) = std::env::args().skip(1).find(|a| !a.starts_with('-')) {
        return PathBuf::from(arg);
    }
    let root = std::env::var_os("REFRESHER_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data"));
    root.join("corpora/emacswiki")
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

fn main() {
    let path = corpus_path();
    if !path.exists() {
        println!("{} not found: nothing to measure", path.display());
        return;
    }
    let (corpus, _) = load_corpus(&path, &IngestOptions::default())
        .unwrap_or_else(|e| panic!("loading {}: {e}", path.display()));
    let pages = corpus.page_count();
    let corpus = &corpus;
    let initial = (0..pages as PageId).filter_map(|p| {
        corpus
            .page_at(p, 0)
            .present()
            .map(|v| (p, Arc::new(v.clone())))
    });

    let t = Instant::now();
    let mut crawl = CrawlState::with_initial_crawl(pages, initial);
    crawl.learn_urls(pages, |p| corpus.url(p));
    let setup = t.elapsed();
    let k = crawl.knowledge();
    let t = Instant::now();
    let graph = k.graph();
    let graph_time = t.elapsed();
    let t = Instant::now();
    let groups = k.held_pages().map(|p| k.same_directory(p).len()).max();
    let directory_time = t.elapsed();
    let t = Instant::now();
    let cold = k.pagerank_result();
    let cold_time = t.elapsed();
    println!(
        "EmacsWiki week 0: {} pages, {} held, {} edges; largest directory {} pages",
        pages,
        graph.nodes().len(),
        graph.edge_count(),
        groups.unwrap_or(0)
    );
    println!(
        "crawl state + URLs {setup:.1?}; graph {graph_time:.1?}; directories {directory_time:.1?}; \
         PageRank cold {cold_time:.1?} ({} steps)",
        cold.iterations
    );

    // Week after week: the graph of the live copies, PageRank warm-started from the previous.
    let (mut builds, mut warm, mut steps, mut cold_steps) = (Vec::new(), Vec::new(), 0, 0);
    let mut previous = cold.scores.clone();
    let units = corpus.units();
    for unit in 1..units {
        let copies: Vec<_> = (0..pages as PageId)
            .map(|p| corpus.page_at(p, unit).present().map(|v| v.links.clone()))
            .collect();
        let t = Instant::now();
        let g = LinkGraph::build(pages, |p| copies[p as usize].as_deref());
        builds.push(t.elapsed());
        let t = Instant::now();
        let pr = pagerank(&g, 0.85, 1e-9, Some(&previous));
        warm.push(t.elapsed());
        steps += pr.iterations;
        cold_steps += pagerank(&g, 0.85, 1e-9, None).iterations;
        previous = pr.scores;
    }
    let n = (units - 1).max(1) as usize;
    println!(
        "weeks 1..{}: graph median {:.1?}; PageRank warm median {:.1?}, {:.1} steps per week \
         (cold start: {:.1})",
        units - 1,
        median(builds),
        median(warm),
        steps as f64 / n as f64,
        cold_steps as f64 / n as f64
    );
}
