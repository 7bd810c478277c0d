//! Papers 000 and 002's measures through the command line: `simulate --json` reports them per
//! unit and as means, `compare` carries the same means into `compare.json`, `curves.csv` and
//! `runs.csv`, and the text outputs name them. (Their values are checked by hand in
//! `judge::exact` and `sim::schedule_metrics`.)

mod common;

use common::{generated_site, refresher_json, run_refresher};

const PER_UNIT: [&str; 5] = [
    "weighted_change_ratio",
    "pagerank_weighted_change_ratio",
    "fresh_at_10_fixed_k",
    "map_at_10_retrieved",
    "map_at_10_tau0",
];

const MEANS: [&str; 6] = [
    "mean_change_ratio",
    "mean_weighted_change_ratio",
    "mean_pagerank_weighted_change_ratio",
    "mean_fresh_at_10_fixed_k",
    "mean_map_at_10_retrieved",
    "mean_map_at_10_tau0",
];

#[test]
fn simulate_and_compare_report_the_paper_measures_alike() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, log) = generated_site(dir.path(), 80, 6);
    let base = ["--corpus", &corpus, "--log", &log, "--mode", "online"];

    let mut args = vec!["simulate", "--policy", "age", "--budget", "6", "--json"];
    args.extend(base);
    let sim = refresher_json(&args);
    let units = sim["per_unit"].as_array().unwrap();
    assert!(!units.is_empty());
    for (key, mean_key) in PER_UNIT.iter().zip(&MEANS[1..]) {
        let values: Vec<f64> = units.iter().map(|u| u[key].as_f64().unwrap()).collect();
        assert!(
            values.iter().all(|v| v.is_finite() && *v >= 0.0),
            "{key}: {values:?}"
        );
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        let reported = sim[mean_key].as_f64().unwrap();
        assert!(
            (mean - reported).abs() < 1e-12,
            "{mean_key}: {reported} vs {mean}"
        );
    }
    // Shares stay shares; the weighted ratios are means of weights of mean 1, not shares.
    for u in units {
        for key in [
            "fresh_at_10_fixed_k",
            "map_at_10_retrieved",
            "map_at_10_tau0",
        ] {
            assert!(u[key].as_f64().unwrap() <= 1.0, "{key}: {u}");
        }
        // Fewer than ten results count as not fresh: never above the project's form.
        assert!(
            u["fresh_at_10_fixed_k"].as_f64().unwrap()
                <= u["fresh_at_10"].as_f64().unwrap() + 1e-12
        );
    }
    let mut args = vec!["simulate", "--policy", "age", "--budget", "6"];
    args.extend(base);
    let (ok, text, stderr) = run_refresher(&args);
    assert!(ok, "{stderr}");
    assert!(text.contains("ChangeRatio weighted by PageRank"), "{text}");

    let out = dir.path().join("cmp");
    let mut args = vec![
        "compare",
        "--policies",
        "age,round-robin",
        "--budgets",
        "6",
        "--out",
        out.to_str().unwrap(),
        "--json",
    ];
    args.extend(base);
    let cmp = refresher_json(&args);
    let point = cmp["curves"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["policy"] == "age" && p["budget"] == 6)
        .expect("age at B = 6");
    for key in MEANS {
        assert_eq!(point[key].as_f64(), sim[key].as_f64(), "{key}");
    }
    for file in ["curves.csv", "runs.csv"] {
        let mut reader = csv::Reader::from_path(out.join(file)).unwrap();
        let header = reader.headers().unwrap().clone();
        let policy = header.iter().position(|h| h == "policy").unwrap();
        let row = reader
            .records()
            .map(|r| r.unwrap())
            .find(|r| &r[policy] == "age")
            .unwrap();
        for key in MEANS {
            let column = header
                .iter()
                .position(|h| h == key)
                .unwrap_or_else(|| panic!("{file} lacks {key}"));
            let value: f64 = row[column].parse().unwrap();
            // serde_json's float parsing may be one ulp off the CSV's exact one.
            let want = sim[key].as_f64().unwrap();
            assert!(
                (value - want).abs() < 1e-12,
                "{file} {key}: {value} vs {want}"
            );
        }
    }
    let mut args = vec![
        "compare",
        "--policies",
        "age",
        "--budgets",
        "6",
        "--metrics",
        "all",
    ];
    args.extend(base);
    let (ok, text, stderr) = run_refresher(&args);
    assert!(ok, "{stderr}");
    assert!(
        text.contains("age C^w PageRank") && text.contains("age MAP@10 τ=0"),
        "{text}"
    );
}
