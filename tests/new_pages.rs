//! `--new-pages outside-budget|frontier` from the command line: simulate and compare report how
//! the budget went to new pages and refreshes and how soon new pages were crawled (JSON, CSV,
//! text), the default keeps new pages outside the budget, and a bad value is named.

mod common;

use std::path::Path;

use serde_json::Value;

fn site(dir: &Path) -> (String, String) {
    common::generated_site(dir, 120, 8)
}

fn json(args: &[&str]) -> Value {
    common::refresher_json(args)
}

#[test]
fn simulate_and_compare_take_the_new_page_mode_and_report_the_split_and_the_delay() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, log) = site(dir.path());
    let base = ["--corpus", corpus.as_str(), "--log", log.as_str()];
    let simulate = |extra: &[&str]| {
        let mut args = vec!["simulate", "--policy", "user-centric", "--budget", "6"];
        args.extend(base);
        args.extend(extra);
        args.push("--json");
        json(&args)
    };

    let outside = simulate(&[]);
    assert_eq!(outside["new_pages"], "outside-budget");
    assert!(
        outside["new_pages_created"].as_u64().unwrap() > 0,
        "{outside}"
    );
    assert_eq!(outside["mean_discovery_delay"], 0.0);
    for u in outside["per_unit"].as_array().unwrap() {
        assert_eq!(u["new_page_fetches"], 0);
        assert_eq!(u["refresh_fetches"], u["refreshed"]);
    }

    let frontier = simulate(&["--new-pages", "frontier", "--mode", "online"]);
    assert_eq!(frontier["new_pages"], "frontier");
    let mut new = 0;
    for u in frontier["per_unit"].as_array().unwrap() {
        let (n, r) = (
            u["new_page_fetches"].as_u64().unwrap(),
            u["refresh_fetches"].as_u64().unwrap(),
        );
        assert_eq!(n + r, u["refreshed"].as_u64().unwrap());
        assert!(n + r <= 6, "{u}");
        new += n;
    }
    assert!(new > 0, "user-centric crawled no new page in frontier mode");
    let delay = frontier["mean_discovery_delay_weighted"].as_f64().unwrap();
    assert!(
        delay > 0.0,
        "new pages cannot wait for nothing inside the budget"
    );

    // Text: the split and the delay, and per-unit columns.
    let mut args = vec![
        "simulate",
        "--policy",
        "round-robin",
        "--budget",
        "6",
        "--new-pages",
        "frontier",
    ];
    args.extend(base);
    let (ok, text, err) = common::run_refresher(&args);
    assert!(ok, "{err}");
    assert!(text.contains("new pages frontier: per unit"), "{text}");
    assert!(text.contains("view-weighted"), "{text}");

    // Compare: JSON curves and CSV columns.
    let out = dir.path().join("cmp");
    let mut args = vec![
        "compare",
        "--policies",
        "user-centric,webfountain-s1",
        "--budgets",
        "4,16",
        "--new-pages",
        "frontier",
        "--mode",
        "online",
        "--out",
        out.to_str().unwrap(),
        "--json",
    ];
    args.extend(base);
    let cmp = json(&args);
    assert_eq!(cmp["new_pages"], "frontier");
    let curves = cmp["curves"].as_array().unwrap();
    assert_eq!(curves.len(), 4);
    for c in curves {
        for key in [
            "mean_new_page_fetches",
            "mean_refresh_fetches",
            "mean_discovery_delay_weighted",
            "mean_discovery_delay",
        ] {
            assert!(c[key].is_number(), "curve point lacks {key}: {c}");
        }
        let split = c["mean_new_page_fetches"].as_f64().unwrap()
            + c["mean_refresh_fetches"].as_f64().unwrap();
        assert!(split <= c["budget"].as_f64().unwrap() + 1e-9, "{c}");
    }
    let header = std::fs::read_to_string(out.join("curves.csv")).unwrap();
    assert!(header
        .lines()
        .next()
        .unwrap()
        .contains("mean_new_page_fetches,mean_refresh_fetches,mean_discovery_delay_weighted,mean_discovery_delay"));
    assert_eq!(header.lines().count(), 5);

    // Simulate's per-unit CSV.
    let runs = dir.path().join("runs");
    let mut args = vec![
        "simulate",
        "--policy",
        "sbr",
        "--budget",
        "6",
        "--new-pages",
        "frontier",
        "--out",
        runs.to_str().unwrap(),
    ];
    args.extend(base);
    let (ok, _, err) = common::run_refresher(&args);
    assert!(ok, "{err}");
    let csv = std::fs::read_to_string(runs.join("sbr-oracle-B6.csv")).unwrap();
    assert!(csv
        .lines()
        .next()
        .unwrap()
        .contains("new_page_fetches,refresh_fetches,frontier_pages"));
}

#[test]
fn a_bad_new_page_mode_is_named() {
    let (ok, _, err) = common::run_refresher(&[
        "simulate",
        "--corpus",
        "nowhere",
        "--log",
        "nowhere",
        "--policy",
        "sbr",
        "--budget",
        "1",
        "--new-pages",
        "sideways",
    ]);
    assert!(!ok);
    assert!(err.contains("--new-pages"), "{err}");
    assert!(err.contains("frontier"), "{err}");
}
