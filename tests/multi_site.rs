//! Multi-site collections end to end: `generate --sites`, several `--corpus` collections
//! aligned at their own first unit, a directory of collection folders, and the errors for
//! conflicting collections.

mod common;

use std::path::Path;

use common::{generate_with as generate, refresher_json, run_refresher};
use serde_json::Value;

/// `simulate` arguments: round-robin at B = 10 over the collections `corpora` (each its own
/// `--corpus`), then `extra`.
fn round_robin<'a>(corpora: &[&'a str], log: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["simulate"];
    for corpus in corpora {
        args.extend(["--corpus", corpus]);
    }
    args.extend(["--log", log, "--policy", "round-robin", "--budget", "10"]);
    args.extend(extra);
    args
}

/// Pages per host as `ingest`/`simulate` report them for collection `i`.
fn sites_of(collections: &Value, i: usize) -> Vec<(String, u64)> {
    collections["list"][i]["sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["host"].as_str().unwrap().to_string(),
                s["pages"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn three_site_collection_ingests_and_simulates() {
    let dir = tempfile::tempdir().unwrap();
    let (truth, corpus, log) = generate(
        dir.path(),
        150,
        8,
        5,
        &["--sites", "3", "--change-correlation", "moderate"],
    );
    let expected: Vec<(String, u64)> = truth["sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["host"].as_str().unwrap().to_string(),
                s["pages"].as_u64().unwrap(),
            )
        })
        .collect();
    let hosts: Vec<&str> = expected.iter().map(|(h, _)| h.as_str()).collect();
    assert_eq!(hosts, ["site1.example", "site2.example", "site3.example"]);
    assert!(expected.iter().all(|(_, n)| *n > 0), "{expected:?}");
    assert_eq!(
        expected.iter().map(|(_, n)| n).sum::<u64>(),
        truth["pages_total"].as_u64().unwrap()
    );

    let ingest = refresher_json(&["ingest", "--corpus", &corpus, "--json"]);
    let collections = &ingest["collections"];
    assert_eq!(collections["alignment"], "first-unit");
    assert_eq!(collections["list"].as_array().unwrap().len(), 1);
    assert_eq!(sites_of(collections, 0), expected, "pages per site");
    assert_eq!(collections["list"][0]["units"], 8);
    // Multi-site pages carry images, tables and contact addresses.
    let structure = &ingest["structure"];
    for key in [
        "versions_with_images",
        "versions_with_tables",
        "versions_with_emails",
    ] {
        let n = structure[key].as_u64().unwrap();
        assert!(
            n > 0 && n < ingest["versions"].as_u64().unwrap(),
            "{key}: {structure}"
        );
    }

    let run = refresher_json(&[
        "simulate",
        "--corpus",
        &corpus,
        "--log",
        &log,
        "--policy",
        "round-robin",
        "--budget",
        "20",
        "--json",
    ]);
    assert_eq!(run["per_unit"].as_array().unwrap().len(), 7, "units 1..=7");
    assert_eq!(sites_of(&run["collections"], 0), expected);
}

#[test]
fn collections_of_different_periods_are_aligned_at_their_first_unit() {
    let dir = tempfile::tempdir().unwrap();
    let (_, wiki, log) = generate(&dir.path().join("wiki"), 80, 8, 5, &[]);
    let (old_truth, old, _) = generate(
        &dir.path().join("old"),
        60,
        6,
        6,
        &["--sites", "2", "--start-date", "2013-03-03"],
    );

    let run = refresher_json(&round_robin(&[&wiki, &old], &log, &["--json"]));
    let list = run["collections"]["list"].as_array().unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(list[0]["path"], wiki.as_str());
    assert_eq!(list[0]["first_capture_date"], "2024-01-07T00:00:00Z");
    assert_eq!(list[0]["units"], 8);
    assert_eq!(list[1]["path"], old.as_str());
    assert_eq!(list[1]["first_capture_date"], "2013-03-03T00:00:00Z");
    assert_eq!(list[1]["last_capture_date"], "2013-04-07T00:00:00Z");
    assert_eq!(list[1]["units"], 6);
    // The longer collection sets the corpus's units; the 2013 one is not 11 years later.
    assert_eq!(run["per_unit"].as_array().unwrap().len(), 7);
    let old_sites = sites_of(&run["collections"], 1);
    assert_eq!(old_sites.len(), 2);
    assert_eq!(
        old_sites.iter().map(|(_, n)| n).sum::<u64>(),
        old_truth["pages_total"].as_u64().unwrap()
    );
    assert_eq!(
        sites_of(&run["collections"], 0)[0].0,
        "wiki.synthetic.example"
    );

    // The text output says how the collections were aligned.
    let (ok, text, err) = run_refresher(&round_robin(&[&wiki, &old], &log, &[]));
    assert!(ok, "{err}");
    assert!(
        text.contains("2 collections, each aligned at its own first unit"),
        "{text}"
    );
    assert!(
        text.contains("captured 2013-03-03T00:00:00Z .. 2013-04-07T00:00:00Z"),
        "{text}"
    );

    // A directory of collection folders is the same corpus, whatever order the folders are
    // given in: page ids follow the URLs.
    let both = dir.path().join("both");
    std::fs::create_dir(&both).unwrap();
    for (name, from) in [("a-wiki", &wiki), ("b-old", &old)] {
        copy_dir(Path::new(from), &both.join(name));
    }
    let from_dir = refresher_json(&round_robin(&[both.to_str().unwrap()], &log, &["--json"]));
    assert_eq!(from_dir["collections"]["list"].as_array().unwrap().len(), 2);
    assert_eq!(from_dir["per_unit"], run["per_unit"]);
    let reversed = refresher_json(&round_robin(&[&old, &wiki], &log, &["--json"]));
    assert_eq!(reversed["per_unit"], run["per_unit"]);
}

#[test]
fn conflicting_collections_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_, a, log) = generate(&dir.path().join("a"), 40, 3, 5, &[]);
    let copy = dir.path().join("copy");
    copy_dir(Path::new(&a), &copy);
    let copy = copy.to_str().unwrap();

    let fails = |args: &[&str], expected: &str| {
        let (ok, _, err) = run_refresher(args);
        assert!(!ok, "{args:?} should fail");
        assert!(err.contains(expected), "{args:?}: {err}");
    };
    fails(
        &["ingest", "--corpus", &a, "--corpus", copy],
        "is also in collection",
    );
    fails(
        &["ingest", "--corpus", &a, "--corpus", &a],
        "the same collection is given twice",
    );
    let (_, b, _) = generate(&dir.path().join("b"), 40, 3, 6, &["--sites", "2"]);
    fails(
        &[
            "simulate",
            "--corpus",
            &a,
            "--corpus",
            &b,
            "--unit-days",
            "7",
            "--unit-days",
            "14",
            "--log",
            &log,
            "--policy",
            "round-robin",
            "--budget",
            "5",
        ],
        "units must be equally long",
    );
    fails(
        &[
            "ingest",
            "--corpus",
            &a,
            "--corpus",
            &b,
            "--unit-days",
            "7",
            "--unit-days",
            "7",
            "--unit-days",
            "7",
        ],
        "--unit-days is given 3 times for 2 --corpus",
    );
    fails(
        &["generate", "--out", copy, "--change-correlation", "1.5"],
        "not in [0, 1]",
    );
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// `refresher simulate` of user-centric at B = 8 in `mode`, with `extra` arguments, as JSON.
fn simulate_user_centric(corpus: &str, log: &str, mode: &str, extra: &[&str]) -> Value {
    let mut args = vec![
        "simulate",
        "--corpus",
        corpus,
        "--log",
        log,
        "--policy",
        "user-centric",
        "--mode",
        mode,
        "--budget",
        "8",
        "--json",
    ];
    args.extend(extra);
    refresher_json(&args)
}

/// Online user-centric learns change rates per directory (`rates=mixture`, the default): on a
/// site of several directories whose pages change together its schedule departs from one
/// distribution for the whole site (`rates=site-mixture`); on a one-directory wiki the two are
/// the same run, bit for bit.
#[test]
fn online_user_centric_learns_rates_per_directory() {
    let dir = tempfile::tempdir().unwrap();
    let run = |corpus: &str, log: &str, extra: &[&str]| {
        simulate_user_centric(corpus, log, "online", extra)
    };
    let refreshed = |v: &Value| -> Vec<(f64, u64)> {
        v["per_unit"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| {
                (
                    u["quality"].as_f64().unwrap(),
                    u["refreshed"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let (_, corpus, log) = generate(
        &dir.path().join("dirs"),
        300,
        10,
        5,
        &["--sites", "4", "--change-correlation", "strong"],
    );
    // The rate models are the refresh index's (online default: the planner, EBR's rates).
    let by_directory = run(&corpus, &log, &["--param", "estimator=whittle"]);
    let by_site = run(
        &corpus,
        &log,
        &[
            "--param",
            "estimator=whittle",
            "--param",
            "rates=site-mixture",
        ],
    );
    assert!(by_directory["label"]
        .as_str()
        .unwrap()
        .starts_with("user-centric"));
    assert_eq!(
        by_site["params"]["rates"], "site-mixture",
        "{}",
        by_site["params"]
    );
    assert_ne!(
        refreshed(&by_directory),
        refreshed(&by_site),
        "the directories changed no choice"
    );
    let (_, flat, flat_log) = generate(&dir.path().join("flat"), 150, 8, 5, &[]);
    let (a, b) = (
        run(&flat, &flat_log, &["--param", "estimator=whittle"]),
        run(
            &flat,
            &flat_log,
            &[
                "--param",
                "estimator=whittle",
                "--param",
                "rates=site-mixture",
            ],
        ),
    );
    assert_eq!(refreshed(&a), refreshed(&b));
    assert_eq!(a["mean_quality"], b["mean_quality"]);
}

/// Oracle user-centric told only the change rates (`knows=rates`) or only the gains
/// (`knows=gains`) learns the other estimate as online mode does: each is its own run, labelled,
/// between the full oracle's schedule and the online one.
#[test]
fn oracle_user_centric_told_one_estimate_is_its_own_run() {
    let dir = tempfile::tempdir().unwrap();
    let (_, corpus, log) = generate(&dir.path().join("site"), 200, 8, 5, &[]);
    let run = |mode: &str, knows: Option<&str>| {
        let param = knows.map(|k| format!("knows={k}"));
        let extra: Vec<&str> = param.iter().flat_map(|p| ["--param", p.as_str()]).collect();
        simulate_user_centric(&corpus, &log, mode, &extra)
    };
    let schedule = |v: &Value| -> Vec<f64> {
        v["per_unit"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| u["quality"].as_f64().unwrap())
            .collect()
    };
    let oracle = run("oracle", None);
    let online = run("online", None);
    assert_eq!(
        schedule(&oracle),
        schedule(&run("oracle", Some("both"))),
        "knows=both is the oracle"
    );
    for knows in ["rates", "gains"] {
        let told = run("oracle", Some(knows));
        assert_eq!(told["params"]["knows"], knows, "{}", told["params"]);
        assert!(
            told["label"]
                .as_str()
                .unwrap()
                .contains(&format!("knows {knows}")),
            "{}",
            told["label"]
        );
        assert_ne!(schedule(&told), schedule(&oracle), "knows={knows}");
        assert_ne!(schedule(&told), schedule(&online), "knows={knows}");
        // Online mode is told nothing of the history: the run is the online one, and its
        // label does not claim otherwise.
        let param = format!("knows={knows}");
        let online_told = simulate_user_centric(&corpus, &log, "online", &["--param", &param]);
        assert_eq!(schedule(&online_told), schedule(&online));
        assert_eq!(online_told["label"], online["label"]);
        assert!(
            online_told["params"].get("knows").is_none(),
            "{}",
            online_told["params"]
        );
    }
}
