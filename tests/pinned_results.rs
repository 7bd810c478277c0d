//! Pins the results of every policy, bit for bit, to values recorded before the refresh loop
//! left the simulator (the refresh-loop issue: "every result must not change").
//!
//! A small generated site (150 pages, 10 weeks, seed 11) runs through `simulate --json` for
//! every policy, in both fit modes, at two budgets and two scoring functions, with the
//! user-centric ΔQ̄ estimators and SBR/EBR thresholds named explicitly; each run's per-unit
//! metrics must equal `tests/fixtures/pinned_per_unit.json` exactly (f64 bits: serde_json
//! prints the shortest representation that reads back to the same bits).
//!
//! Recording (only when a change is *meant* to change results, and said so in its commit):
//! `PIN_RECORD=1 cargo test --test pinned_results`; `PIN_BIN=path/to/refresher` records with
//! another build (e.g. the commit before a refactoring).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Map, Value};

fn refresher(args: &[String]) -> Value {
    let bin = std::env::var_os("PIN_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(common::refresher_bin);
    let out = Command::new(bin)
        .args(args)
        .output()
        .expect("run refresher");
    assert!(
        out.status.success(),
        "refresher {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

fn site(dir: &Path) -> (String, String) {
    let out = dir.to_str().unwrap().to_string();
    let args: Vec<String> = [
        "generate",
        "--out",
        &out,
        "--pages",
        "150",
        "--weeks",
        "10",
        "--queries",
        "4000",
        "--seed",
        "11",
        "--json",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    refresher(&args);
    (
        dir.join("corpus").to_str().unwrap().to_string(),
        dir.join("querylog/aol-synthetic.txt")
            .to_str()
            .unwrap()
            .to_string(),
    )
}

/// Every configuration pinned: (label, extra simulate arguments).
fn configurations() -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for scoring in ["bm25", "inlinks"] {
        for mode in ["oracle", "online"] {
            for budget in ["3", "20"] {
                let base = vec![
                    "--scoring".to_string(),
                    scoring.to_string(),
                    "--mode".to_string(),
                    mode.to_string(),
                    "--budget".to_string(),
                    budget.to_string(),
                ];
                let mut push = |name: &str, extra: &[&str]| {
                    let mut args = base.clone();
                    args.extend(extra.iter().map(|s| s.to_string()));
                    out.push((format!("{scoring}/{mode}/B{budget}/{name}"), args));
                };
                // The pins predate the default `whittle`: name the estimator they were recorded
                // with.
                let recorded_default: &[&str] = if mode == "online" {
                    &["--uc-estimator", "viewed"]
                } else {
                    &["--uc-estimator", "mean-of-ratios"]
                };
                push(
                    "user-centric",
                    &[&["--policy", "user-centric"], recorded_default].concat(),
                );
                for estimator in ["mean-of-ratios", "pooled", "viewed"] {
                    push(
                        &format!("user-centric-{estimator}"),
                        &["--policy", "user-centric", "--uc-estimator", estimator],
                    );
                }
                push(
                    "user-centric-window2",
                    &[
                        &["--policy", "user-centric", "--uc-window", "2"],
                        recorded_default,
                    ]
                    .concat(),
                );
                for policy in ["sbr", "ebr"] {
                    push(policy, &["--policy", policy]);
                    push(
                        &format!("{policy}-theta0.3"),
                        &["--policy", policy, "--theta", "0.3"],
                    );
                }
                for policy in ["round-robin", "random", "age"] {
                    push(policy, &["--policy", policy]);
                }
            }
        }
    }
    out
}

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pinned_per_unit.json")
}

#[test]
fn every_policy_gives_the_recorded_per_unit_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, log) = site(dir.path());
    let configs = configurations();
    // Runs in parallel threads: each is its own process.
    let results: Vec<(String, Value)> = std::thread::scope(|scope| {
        let chunks: Vec<_> = configs
            .chunks(configs.len().div_ceil(4))
            .map(|chunk| {
                let (corpus, log) = (&corpus, &log);
                scope.spawn(move || {
                    chunk
                        .iter()
                        .map(|(label, extra)| {
                            let mut args: Vec<String> = vec![
                                "simulate".into(),
                                "--corpus".into(),
                                corpus.clone(),
                                "--log".into(),
                                log.clone(),
                                "--json".into(),
                            ];
                            args.extend(extra.iter().cloned());
                            // Recorded before the multi-term estimate became the default: the
                            // pin holds paper 003's single-term estimate to its results, when
                            // recording as when checking.
                            args.extend(["--delta-q".into(), "estimate-single-term".into()]);
                            let v = refresher(&args);
                            (label.clone(), v["per_unit"].clone())
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        chunks.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let mut recorded = Map::new();
    for (label, per_unit) in &results {
        recorded.insert(label.clone(), per_unit.clone());
    }
    let recorded = Value::Object(recorded);
    if std::env::var_os("PIN_RECORD").is_some() {
        std::fs::create_dir_all(fixture().parent().unwrap()).unwrap();
        std::fs::write(
            fixture(),
            serde_json::to_string_pretty(&json!({ "runs": recorded })).unwrap() + "\n",
        )
        .unwrap();
        eprintln!(
            "recorded {} runs into {}",
            results.len(),
            fixture().display()
        );
        return;
    }
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture()).expect("pinned fixture"))
            .expect("pinned fixture is JSON");
    let expected = &expected["runs"];
    let mut differences = Vec::new();
    for (label, per_unit) in &results {
        let want = &expected[label];
        assert!(!want.is_null(), "no pinned values for {label}");
        let (got_units, want_units) = (per_unit.as_array().unwrap(), want.as_array().unwrap());
        assert_eq!(got_units.len(), want_units.len(), "{label}: unit count");
        for (g, w) in got_units.iter().zip(want_units) {
            for (key, wv) in w.as_object().unwrap() {
                // Values compare as f64 bits (integers too: they read back exactly).
                let same = match (g[key].as_f64(), wv.as_f64()) {
                    (Some(a), Some(b)) => a.to_bits() == b.to_bits(),
                    _ => g[key] == *wv,
                };
                if !same {
                    differences.push(format!(
                        "{label} unit {}: {key} = {} (pinned {wv})",
                        w["unit"], g[key]
                    ));
                }
            }
        }
    }
    assert!(
        differences.is_empty(),
        "{} differences, first: {:#?}",
        differences.len(),
        &differences[..differences.len().min(10)]
    );
    // The pins are meaningful: the policies do not all give the same results.
    let qualities: std::collections::BTreeSet<u64> = results
        .iter()
        .map(|(_, v)| {
            v.as_array().unwrap().last().unwrap()["quality"]
                .as_f64()
                .unwrap()
                .to_bits()
        })
        .collect();
    assert!(qualities.len() > 10, "pinned runs barely differ");
}
