//! Paper 001 from the command line on a small generated site: the change strings for the
//! authors' code (`export-changes --format gp4c`), and GP4C training whose function a later
//! `simulate` refreshes by.

mod common;

use std::path::Path;

use serde_json::Value;

fn json(args: &[&str]) -> Value {
    common::refresher_json(args)
}

fn site(dir: &Path) -> (String, String) {
    common::generated_site(dir, 150, 12)
}

#[test]
fn export_changes_writes_one_change_string_and_url_per_page() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, _log) = site(dir.path());
    let out = dir.path().join("gp4c");
    let summary = json(&[
        "export-changes",
        "--corpus",
        &corpus,
        "--format",
        "gp4c",
        "--out",
        out.to_str().unwrap(),
        "--json",
    ]);
    let ingest = json(&["ingest", "--corpus", &corpus, "--json"]);
    let pages = ingest["pages_total"].as_u64().unwrap() as usize;
    let cycles = ingest["units"].as_u64().unwrap() as usize - 1;
    assert_eq!(summary["pages"], pages);
    assert_eq!(summary["cycles"], cycles);
    let changes = std::fs::read_to_string(out.join("changes.txt")).unwrap();
    let urls = std::fs::read_to_string(out.join("urls.txt")).unwrap();
    let lines: Vec<&str> = changes.lines().collect();
    assert_eq!(lines.len(), pages);
    assert_eq!(urls.lines().count(), pages);
    // gp4c's reader: the first token of each line, all of one length, only 0 and 1.
    assert!(lines
        .iter()
        .all(|l| l.len() == cycles && l.chars().all(|c| c == '0' || c == '1')));
    let ones: usize = lines
        .iter()
        .map(|l| l.chars().filter(|&c| c == '1').count())
        .sum();
    // Every version after a page's first is a change of the cycle it falls in.
    let versions = ingest["versions"].as_u64().unwrap() as usize;
    assert_eq!(ones, versions - pages);
    assert_eq!(summary["changes"], ones);
    assert!(ones > 0);
    assert!(urls.lines().all(|u| u.starts_with("http")), "{urls}");
}

fn simulate(corpus: &str, log: &str, extra: &[&str]) -> Value {
    let mut args = vec![
        "simulate", "--corpus", corpus, "--log", log, "--mode", "online", "--json",
    ];
    args.extend(extra);
    json(&args)
}

#[test]
fn budget_share_and_warm_up_follow_the_papers_protocol_and_report_its_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, log) = site(dir.path());
    let ingest = json(&["ingest", "--corpus", &corpus, "--json"]);
    let pages = ingest["pages_total"].as_u64().unwrap() as f64;
    let units = ingest["units"].as_u64().unwrap() as usize;
    // 5 % of the pages: the same run as the rounded budget.
    let share = simulate(
        &corpus,
        &log,
        &["--policy", "age", "--budget-share", "0.05"],
    );
    let budget = (0.05 * pages).round() as u64;
    assert_eq!(share["budget"], budget);
    let explicit = simulate(
        &corpus,
        &log,
        &["--policy", "age", "--budget", &budget.to_string()],
    );
    assert_eq!(share["per_unit"], explicit["per_unit"]);
    // Paper 001's metrics beside the project's, per unit and as means.
    for r in share["per_unit"].as_array().unwrap() {
        let (rate, ratio) = (
            r["change_rate"].as_f64().unwrap(),
            r["change_ratio"].as_f64().unwrap(),
        );
        let refreshed = r["refreshed"].as_f64().unwrap();
        assert!((rate - ratio * refreshed / budget as f64).abs() < 1e-12);
        assert!((0.0..=1.0).contains(&r["gp4c_ndcg"].as_f64().unwrap()));
    }
    assert!(share["mean_change_rate"].as_f64().unwrap() > 0.0);
    assert!(share["mean_gp4c_ndcg"].as_f64().unwrap() > 0.0);

    // Warm-up: units 1..=2 refresh everything and are not judged.
    let warm_out = dir.path().join("warm");
    let warm = simulate(
        &corpus,
        &log,
        &[
            "--policy",
            "nad",
            "--budget-share",
            "0.05",
            "--warmup-units",
            "2",
            "--out",
            warm_out.to_str().unwrap(),
        ],
    );
    let refreshed =
        std::fs::read_to_string(warm_out.join(format!("nad-online-B{budget}.refreshed.csv")))
            .unwrap();
    assert!(
        refreshed.lines().nth(1).unwrap().starts_with("3,1,"),
        "{refreshed}"
    );
    let per_unit = warm["per_unit"].as_array().unwrap();
    assert_eq!(per_unit.len(), units - 1 - 2);
    assert_eq!(per_unit[0]["unit"], 3);
    assert_eq!(warm["warmup_units"], 2);
    let cold = simulate(
        &corpus,
        &log,
        &["--policy", "nad", "--budget-share", "0.05"],
    );
    assert_eq!(cold["per_unit"].as_array().unwrap().len(), units - 1);
    assert_eq!(cold["warmup_units"], 0);
    // With two full visits behind it NAD knows which pages change: it finds more changes.
    assert!(
        warm["mean_change_rate"].as_f64().unwrap() > cold["mean_change_rate"].as_f64().unwrap(),
        "warm {} vs cold {}",
        warm["mean_change_rate"],
        cold["mean_change_rate"]
    );

    // compare: shares beside budgets, the warm-up, and the new columns.
    let out = dir.path().join("cmp");
    let c = json(&[
        "compare",
        "--corpus",
        &corpus,
        "--log",
        &log,
        "--policies",
        "age,gad",
        "--budgets",
        "4",
        "--budget-shares",
        "0.05",
        "--warmup-units",
        "1",
        "--mode",
        "online",
        "--out",
        out.to_str().unwrap(),
        "--json",
    ]);
    let curves = c["curves"].as_array().unwrap();
    assert!(curves.iter().any(|p| p["budget"] == budget));
    assert!(curves
        .iter()
        .all(|p| p["mean_change_rate"].is_number() && p["mean_gp4c_ndcg"].is_number()));
    let csv = std::fs::read_to_string(out.join("runs.csv")).unwrap();
    assert!(csv
        .lines()
        .next()
        .unwrap()
        .contains(",mean_change_rate,mean_gp4c_ndcg,"));

    // Absurd values name their flag.
    for (args, flag) in [
        (vec!["--budget-share", "0"], "--budget-share"),
        (vec!["--budget-share", "1.5"], "--budget-share"),
        (vec!["--budget-share", "0.0001"], "--budget-share"),
        (
            vec!["--budget", "3", "--warmup-units", "50"],
            "--warmup-units",
        ),
        (
            vec!["--budget", "3", "--budget-share", "0.1"],
            "--budget-share",
        ),
    ] {
        let mut all = vec![
            "simulate", "--corpus", &corpus, "--log", &log, "--policy", "age",
        ];
        all.extend(args.iter().copied());
        let (ok, _, stderr) = common::run_refresher(&all);
        assert!(!ok && stderr.contains(flag), "{args:?}: {stderr}");
    }
}

#[test]
fn a_trained_function_is_what_simulate_then_refreshes_by() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, log) = site(dir.path());
    let function = dir.path().join("gp4c.txt");
    // `spelling`: the warm-up and budget-share flags, former or current.
    let train = |out: &std::path::Path, spelling: [&str; 2]| {
        json(&[
            "gp4c",
            "train",
            "--corpus",
            &corpus,
            "--fitness",
            "ndcg",
            "--terminals",
            "all",
            "--seed",
            "3",
            "--population",
            "20",
            "--generations",
            "3",
            spelling[0],
            "1",
            spelling[1],
            "0.1",
            "--out",
            out.to_str().unwrap(),
            "--json",
        ])
    };
    let report = train(&function, ["--warmup", "--resources"]);
    let folds = report["folds"].as_array().unwrap();
    assert_eq!(folds.len(), 5);
    for f in folds {
        assert_eq!(f["selected"].as_array().unwrap().len(), 3);
        assert_eq!(f["baselines"].as_array().unwrap().len(), 7);
    }
    let text = std::fs::read_to_string(&function).unwrap();
    let line = text.lines().find(|l| !l.starts_with('#')).unwrap();
    assert_eq!(line, report["chosen"]["function"].as_str().unwrap());
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("gp4c.json")).unwrap())
            .unwrap();
    assert_eq!(saved, report);
    // The same seed trains the same function, whichever spelling names the settings.
    let again = dir.path().join("again.txt");
    train(&again, ["--warmup-units", "--budget-share"]);
    assert_eq!(std::fs::read_to_string(&again).unwrap(), text);

    // simulate refreshes by the file, exactly as by the same function given inline.
    let param = format!("function={}", function.display());
    let by_file = simulate(
        &corpus,
        &log,
        &["--policy", "gp4c", "--param", &param, "--budget", "8"],
    );
    assert_eq!(by_file["policy"], "gp4c");
    let inline = format!("expr={line}");
    let by_text = simulate(
        &corpus,
        &log,
        &["--policy", "gp4c", "--param", &inline, "--budget", "8"],
    );
    assert_eq!(by_file["per_unit"], by_text["per_unit"]);
    // A broken function file is refused with its name.
    std::fs::write(&function, "t * (X\n").unwrap();
    let (ok, _, stderr) = common::run_refresher(&[
        "simulate", "--corpus", &corpus, "--log", &log, "--policy", "gp4c", "--param", &param,
        "--budget", "8",
    ]);
    assert!(!ok && stderr.contains("gp4c.txt"), "{stderr}");
}
