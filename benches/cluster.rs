//! Clustering figure for papers 000/002: the 48 features (paper 000 §3.1–3.2) of every page of
//! a generated site and their repeated-bisection clustering (I2, k = 100) — for 10,000 and
//! 100,000 pages: k, the I2 value, and the seconds of the features (with their two auxiliary
//! word clusterings) and of the clustering itself.
//!
//! `cargo bench --bench cluster`; `CLUSTER_SIZES=2000,10000` replaces the sizes. Each size's
//! min–max scaled vectors and labels are written to `target/cluster-bench/vectors-N.csv`
//! (48 feature columns, then `label`) for the independent check by
//! `scripts/cluster_check.py` (scikit-learn's bisecting k-means on the same vectors). Generated
//! sites are cached under `target/cluster-bench/` (the generator is seeded).

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use refresher::cluster::features::{
    page_features, stop_term_ids, CopyFacts, FeatureConfig, FeatureInput, FileType, PreviousCopy,
    DIMS,
};
use refresher::cluster::{repeated_bisection, DenseRows, RbcConfig};
use refresher::corpus::generate::{generate_site, GeneratorConfig};
use refresher::corpus::ingest::{load_corpus, IngestOptions};
use refresher::corpus::{LiveWeb, PageId};
use refresher::crawl::link_graph::{PAGERANK_DAMPING, PAGERANK_TOLERANCE};
use refresher::crawl::{pagerank, LinkGraph};

const K: usize = 100;

fn main() {
    let sizes: Vec<usize> = std::env::var("CLUSTER_SIZES")
        .ok()
        .map(|v| v.split(',').filter_map(|s| s.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![10_000, 100_000]);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/cluster-bench");
    println!("| pages | dims | k | I2 | I2 / pages | features s | clustering s |");
    println!("|---|---|---|---|---|---|---|");
    for n in sizes {
        let site_dir = root.join(format!("site-{n}"));
        if !site_dir.join("corpus").exists() {
            generate_site(
                &GeneratorConfig {
                    pages: n,
                    weeks: 2,
                    queries: 1000,
                    ..GeneratorConfig::default()
                },
                &site_dir,
            )
            .expect("generate");
        }
        let (corpus, _) =
            load_corpus(&site_dir.join("corpus"), &IngestOptions::default()).expect("ingest");
        // The repository after unit 1: the copy of unit 1, the copy of unit 0 before it.
        let pages: Vec<PageId> = (0..corpus.page_count() as PageId)
            .filter(|&p| corpus.timeline(p).shared_at(1).is_some())
            .collect();
        let current = |p: PageId| corpus.timeline(p).shared_at(1).filter(|v| v.is_present());
        let graph = LinkGraph::build(corpus.page_count(), |p| current(p).map(|v| &v.links[..]));
        let pr = pagerank(&graph, PAGERANK_DAMPING, PAGERANK_TOLERANCE, None).scores;
        let facts = |p: PageId, v: &refresher::corpus::PageVersion| CopyFacts {
            words: v.text.split_whitespace().count() as u32,
            text_bytes: v.text.len() as u64,
            pagerank: pr[p as usize],
            in_links: graph.in_links(p).len() as u32,
            out_links: v.links.len() as u32,
            ..CopyFacts::default()
        };
        let inputs: Vec<FeatureInput<'_>> = pages
            .iter()
            .filter_map(|&p| {
                let v = current(p)?;
                let before = corpus.timeline(p).shared_at(0).filter(|b| b.is_present());
                let changed = before.is_some_and(|b| b.content_hash != v.content_hash);
                Some(FeatureInput {
                    url: corpus.url(p),
                    file_type: FileType::Html,
                    terms: &v.terms.counts,
                    facts: facts(p, v),
                    previous: before.map(|b| PreviousCopy {
                        terms: &b.terms.counts,
                        facts: facts(p, b),
                    }),
                    change_frequency: if changed { 1.0 } else { 0.0 },
                })
            })
            .collect();
        let stop = stop_term_ids(&corpus.vocabulary);
        let clock = Instant::now();
        let rows = page_features(
            &inputs,
            |t| stop.binary_search(&t).is_ok(),
            &FeatureConfig {
                word_clusters: K,
                ..FeatureConfig::default()
            },
        );
        let feature_seconds = clock.elapsed().as_secs_f64();
        let dense = DenseRows::new(DIMS, rows.iter().flatten().copied().collect());
        let clock = Instant::now();
        let clustering = repeated_bisection(&dense, &RbcConfig::new(K, 0));
        let cluster_seconds = clock.elapsed().as_secs_f64();
        println!(
            "| {} | {DIMS} | {} | {:.2} | {:.4} | {feature_seconds:.2} | {cluster_seconds:.2} |",
            rows.len(),
            clustering.k(),
            clustering.i2(),
            clustering.i2() / rows.len() as f64,
        );
        let csv = root.join(format!("vectors-{n}.csv"));
        let mut out = std::io::BufWriter::new(std::fs::File::create(&csv).expect("csv"));
        let header: Vec<String> = (0..DIMS).map(|d| format!("f{d}")).collect();
        writeln!(out, "{},label", header.join(",")).unwrap();
        for (r, label) in rows.iter().zip(&clustering.assignment) {
            let values: Vec<String> = r.iter().map(|x| format!("{x}")).collect();
            writeln!(out, "{},{label}", values.join(",")).unwrap();
        }
    }
}
