//! Parity with the authors' GP4C code (`aecio/gp4c`, `baselines` run on the change strings
//! `export-changes --format gp4c` writes) on the shared EmacsWiki collection: SEED-SYSTEMS §2.3's
//! table — all 6,898 pages, 47 weekly cycles, k = 344 pages per cycle, warm-up W = 1 and 2, no
//! folds. Needs `../shared/data`: without it the tests fail under CI (`CI` set) and are skipped
//! with a printed reason elsewhere.
//!
//! With the C++ runtime's tie order and `rand()` reproduced (`Ties::Gp4cCode`) every value,
//! `rand` included, equals the peer's to its printed four decimals. With the project's own
//! tie rule (lower page id first) the history estimators fall far below the peer's (NAD's
//! ChangeRate 0.0135 vs 0.0214 at W = 1): 85 % of EmacsWiki's pages never change, every
//! estimator scores them 0, and the k pages picked among thousands of zeros are then the same
//! low ids cycle after cycle instead of the ones `std::sort`'s reshuffling brings forward. That
//! run is printed for the record, not held to the peer.

mod common;

use refresher::change::ChangeMatrix;
use refresher::corpus::ingest::{load_corpus, IngestOptions};
use refresher::learn::gp4c::{baselines, simulate, Metric, SimConfig, Ties};

/// (scorer, W, ChangeRate, NDCG) of the peer's run.
const PEER: &[(&str, usize, f64, f64)] = &[
    ("rand", 1, 0.0516, 0.0550),
    ("age", 1, 0.0657, 0.0753),
    ("nad", 1, 0.0214, 0.0578),
    ("sad", 1, 0.0176, 0.0427),
    ("aad", 1, 0.0215, 0.0583),
    ("gad", 1, 0.0215, 0.0564),
    ("cg", 1, 0.0215, 0.0574),
    ("rand", 2, 0.0514, 0.0553),
    ("age", 2, 0.0660, 0.0748),
    ("nad", 2, 0.0229, 0.0586),
    ("sad", 2, 0.0120, 0.0262),
    ("aad", 2, 0.0229, 0.0585),
    ("gad", 2, 0.0229, 0.0566),
    ("cg", 2, 0.0229, 0.0587),
];

#[test]
fn baselines_reproduce_the_authors_code_on_emacswiki() {
    let Some(dir) = common::shared_data("corpora/emacswiki") else {
        return;
    };
    let options = IngestOptions {
        unit_seconds: 7 * 24 * 3600,
        origin: None,
    };
    let (corpus, _) = load_corpus(&dir, &options).expect("EmacsWiki ingests");
    let matrix = ChangeMatrix::from_corpus(&corpus);
    assert_eq!((matrix.pages(), matrix.cycles()), (6898, 47));
    let mut report = Vec::new();
    for &(name, warmup, peer_rate, peer_ndcg) in PEER {
        let config = SimConfig {
            ties: Ties::Gp4cCode,
            ..SimConfig::share(matrix.pages(), 0.05, warmup)
        };
        assert_eq!(config.k, 344);
        let scorer = baselines(1)
            .into_iter()
            .find(|(n, _)| *n == name)
            .expect("a baseline")
            .1;
        let r = simulate(&matrix, &scorer, config);
        let (rate, ndcg) = (r.mean(Metric::ChangeRate), r.mean(Metric::Ndcg));
        let own = simulate(
            &matrix,
            &scorer,
            SimConfig::share(matrix.pages(), 0.05, warmup),
        );
        report.push(format!(
            "{name:>4} W={warmup}: ChangeRate {rate:.4} (peer {peer_rate:.4}, {:+.2} %)  NDCG {ndcg:.4} (peer {peer_ndcg:.4}, {:+.2} %)   page-id ties: {:.4} / {:.4}",
            100.0 * (rate / peer_rate - 1.0),
            100.0 * (ndcg / peer_ndcg - 1.0),
            own.mean(Metric::ChangeRate),
            own.mean(Metric::Ndcg),
        ));
        for (what, ours, peer) in [("ChangeRate", rate, peer_rate), ("NDCG", ndcg, peer_ndcg)] {
            // The peer printed four decimals: ours must round to them (and so lie well
            // within the 2 % relative tolerance).
            assert!(
                (ours - peer).abs() <= 0.00005 + 1e-12 && (ours / peer - 1.0).abs() < 0.02,
                "{name} W={warmup} {what}: {ours:.6} vs the peer's {peer}"
            );
        }
    }
    eprintln!("{}", report.join("\n"));
}
