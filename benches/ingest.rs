//! Ingest throughput, in MB/s of decompressed HTTP bodies (HTML), on the shared EmacsWiki
//! collection: WARC read alone; HTML extraction + tokenisation alone (rayon, all cores);
//! and the full `load_corpus` pipeline (read + extraction + tokenisation + timelines).
//!
//! The corpus is `../shared/data/corpora/emacswiki` beside the checkout, or the path in
//! `REFRESHER_BENCH_CORPUS`; without either the bench prints a skip line.

use std::path::PathBuf;
use std::time::Instant;

use rayon::prelude::*;
use refresher::corpus::html;
use refresher::corpus::ingest::{load_corpus, warc_files, IngestOptions};
use refresher::corpus::warc_reader::{WarcFile, WarcItem};
use refresher::text::Analyzer;

/// The allocator the `refresher` binary ships with, so the figures are the binary's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn corpus_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("REFRESHER_BENCH_CORPUS") {
        return Some(PathBuf::from(p));
    }
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/corpora/emacswiki");
    p.exists().then_some(p)
}

fn mb_per_s(bytes: u64, seconds: f64) -> f64 {
    bytes as f64 / 1e6 / seconds
}

fn main() {
    let Some(path) = corpus_path() else {
        println!("ingest bench SKIPPED: no shared EmacsWiki corpus (set REFRESHER_BENCH_CORPUS)");
        return;
    };
    let threads = rayon::current_num_threads();
    println!(
        "ingest bench on {} ({threads} rayon threads)",
        path.display()
    );

    // 1. WARC read alone: gzip inflation, record framing, HTTP block parsing.
    let started = Instant::now();
    let mut bodies: Vec<(String, Vec<u8>)> = Vec::new();
    for file in warc_files(&path).expect("corpus files") {
        for item in WarcFile::open(&file).expect("open") {
            if let WarcItem::Response(r) = item.expect("record") {
                bodies.push((r.target_uri, r.body));
            }
        }
    }
    let read_s = started.elapsed().as_secs_f64();
    let bytes: u64 = bodies.iter().map(|(_, b)| b.len() as u64).sum();
    println!(
        "read alone:                  {:>7.1} MB/s  ({:.1} MB of HTML, {} responses, {:.2} s)",
        mb_per_s(bytes, read_s),
        bytes as f64 / 1e6,
        bodies.len(),
        read_s
    );

    // 2. HTML extraction + tokenisation alone, in parallel.
    let started = Instant::now();
    let tokens: u64 = bodies
        .par_iter()
        .map_init(Analyzer::new, |analyzer, (url, body)| {
            let base = url::Url::parse(url).ok();
            let page = html::extract(&String::from_utf8_lossy(body), base.as_ref());
            let mut n = 0u64;
            analyzer.for_each_term(&page.title, |_| n += 1);
            analyzer.for_each_term(&page.text, |_| n += 1);
            n
        })
        .sum();
    let extract_s = started.elapsed().as_secs_f64();
    println!(
        "extract + tokenise alone:    {:>7.1} MB/s  ({tokens} tokens, {:.2} s)",
        mb_per_s(bytes, extract_s),
        extract_s
    );
    drop(bodies);

    // 3. The whole pipeline as `refresher ingest` runs it.
    let started = Instant::now();
    let (corpus, report) = load_corpus(&path, &IngestOptions::default()).expect("ingest");
    let full_s = started.elapsed().as_secs_f64();
    println!(
        "load_corpus (read + extract + tokenise + timelines): {:>7.1} MB/s  ({} pages, {} versions, {} terms, {:.2} s)",
        mb_per_s(report.body_bytes, full_s),
        corpus.pages.len(),
        corpus.version_count(),
        corpus.vocabulary.len(),
        full_s
    );
    println!(
        "  of which read + extract + tokenise pipeline: {:>7.1} MB/s  ({:.2} s); timelines, links, interning: {:.2} s",
        mb_per_s(report.body_bytes, report.seconds_read_extract),
        report.seconds_read_extract,
        report.seconds_total - report.seconds_read_extract
    );
}
