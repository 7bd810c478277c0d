//! `refresher webfountain`: paper 004's crawl model solved from the CLI, on the small
//! instance's layout (and on `../shared/data/webfountain/small.json`, which CI must have beside
//! the checkout), with errors that name the file, line or parameter.

mod common;

use serde_json::Value;

use common::run_refresher as refresher;

/// The small instance in the layout of `small.json` (its reference optima included).
const SMALL: &str = include_str!("fixtures/webfountain-small.json");

fn solve_json(instance: &str, strategy: &str) -> Value {
    let (ok, out, err) = refresher(&[
        "webfountain",
        "--instance",
        instance,
        "--strategy",
        strategy,
        "--json",
    ]);
    assert!(ok, "{err}");
    serde_json::from_str(&out).unwrap()
}

fn check_small(path: &str) {
    for (strategy, want) in [("1", 284.8680), ("2", 196.4532), ("3", 232.1556)] {
        let plan = solve_json(path, strategy);
        let objective = plan["objective"].as_f64().unwrap();
        assert!(
            ((objective - want) / want).abs() < 1e-4,
            "strategy {strategy}: {objective} vs {want}"
        );
        assert_eq!(plan["expected_objective"].as_f64(), Some(want));
        assert!(plan["relative_difference"].as_f64().unwrap().abs() < 1e-4);
        let obsolete = plan["obsolete_per_period"].as_array().unwrap();
        assert_eq!(obsolete.len(), 6);
        let crawls = plan["crawls"].as_array().unwrap();
        assert_eq!(crawls.len(), 12);
        for t in 0..6 {
            let used: f64 = crawls.iter().map(|c| c[t].as_f64().unwrap()).sum();
            assert!((0.0..=2000.0 + 1e-6).contains(&used), "period {t}: {used}");
        }
        let optimality = &plan["optimality"];
        assert!(optimality["relative_gap"].as_f64().unwrap() < 1e-4);
        assert_eq!(optimality["method"], "frank-wolfe");
        assert_eq!(optimality["starts"].as_array().unwrap().len(), 3);
    }
}

#[test]
fn solves_the_small_instance_to_its_reference_optima() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("small.json");
    std::fs::write(&path, SMALL).unwrap();
    check_small(path.to_str().unwrap());
    // The shared copy too: required under CI, skipped with a printed reason elsewhere.
    if let Some(shared) = common::shared_data("webfountain/small.json") {
        check_small(shared.to_str().unwrap());
    }
    // The readable output names the objective, the reference and the periods.
    let (ok, out, err) = refresher(&[
        "webfountain",
        "--instance",
        path.to_str().unwrap(),
        "--strategy",
        "3",
        "--eps",
        "0.01",
    ]);
    assert!(ok, "{err}");
    assert!(
        out.contains("strategy 3 (ε = 0.01): objective 232.15"),
        "{out}"
    );
    assert!(
        out.contains("the instance's reference optimum: 232.1556"),
        "{out}"
    );
    assert!(out.contains("crawls per bucket"), "{out}");
}

#[test]
fn bad_instances_and_parameters_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let broken = write(
        "broken.json",
        &SMALL.replace("\"periods\": 6,", "\"periods\": 6,,"),
    );
    let (ok, _, err) = refresher(&["webfountain", "--instance", &broken, "--strategy", "1"]);
    assert!(!ok);
    assert!(err.contains("broken.json: line 3 column"), "{err}");
    let short = write(
        "short.json",
        &SMALL.replace(
            "\"capacity_per_period\": 2000",
            "\"capacity_per_period\": [1, 2]",
        ),
    );
    let (ok, _, err) = refresher(&["webfountain", "--instance", &short, "--strategy", "1"]);
    assert!(!ok);
    assert!(
        err.contains("capacity_per_period: 2 values for 6 periods"),
        "{err}"
    );
    let small = write("small.json", SMALL);
    let (ok, _, err) = refresher(&["webfountain", "--instance", &small, "--strategy", "4"]);
    assert!(!ok && err.contains("--strategy"), "{err}");
    let (ok, _, err) = refresher(&[
        "webfountain",
        "--instance",
        &small,
        "--strategy",
        "3",
        "--eps",
        "0.9",
    ]);
    assert!(!ok && err.contains("eps: 0.9"), "{err}");
    let (ok, _, err) = refresher(&[
        "webfountain",
        "--instance",
        "/no/such.json",
        "--strategy",
        "1",
    ]);
    assert!(!ok && err.contains("/no/such.json"), "{err}");
}

/// Paper 004's orderings on the paper-like instance, from the CLI (SEED-SYSTEMS §4.2.6).
#[test]
fn paper_like_instance_orders_the_strategies() {
    let solve = |s: &str| {
        let (ok, out, err) = refresher(&[
            "webfountain",
            "--instance",
            "paper-like",
            "--strategy",
            s,
            "--max-iterations",
            "300",
            "--json",
        ]);
        assert!(ok, "{err}");
        serde_json::from_str::<Value>(&out).unwrap()
    };
    let (s1, s2, s3) = (solve("1"), solve("2"), solve("3"));
    let objective = |p: &Value| p["objective"].as_f64().unwrap();
    let end = |p: &Value| {
        p["obsolete_per_period"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .as_f64()
            .unwrap()
    };
    assert!(objective(&s2) < objective(&s3) && objective(&s3) < objective(&s1));
    assert!(end(&s2) < end(&s3) && end(&s3) < end(&s1));
    let crawls = s1["crawls"].as_array().unwrap();
    assert_eq!(crawls.len(), 255);
    let slowest_total: f64 = crawls[200..]
        .iter()
        .flat_map(|c| c.as_array().unwrap())
        .map(|x| x.as_f64().unwrap())
        .sum();
    assert!(
        slowest_total < 1.0,
        "S1 crawls the slowest buckets: {slowest_total}"
    );
}
