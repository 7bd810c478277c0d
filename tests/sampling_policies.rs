//! The sampling policies of papers 000 and 002 (`cls`, `sample-lb`, `sample-db`, `sample-cb`)
//! and their baselines (`gsb`, `rns`) from the command line, on a generated site: listed with
//! their parameters, run by `simulate` within the budget and deterministically, swept by
//! `compare`, bad parameters refused by name.

mod common;

use common::{generated_site, refresher_json, run_refresher};

const FAMILIES: [&str; 6] = ["cls", "sample-lb", "sample-db", "sample-cb", "gsb", "rns"];

#[test]
fn policies_lists_the_sampling_families_and_their_parameters() {
    let list = refresher_json(&["policies", "--json"]);
    let list = list.as_array().unwrap();
    for name in FAMILIES {
        assert!(list.iter().any(|f| f["name"] == name), "{name} not listed");
    }
    let db = list.iter().find(|f| f["name"] == "sample-db").unwrap();
    let params = db["params"].as_array().unwrap();
    let d = params.iter().find(|p| p["key"] == "d").unwrap();
    assert_eq!(d["sweep"].as_array().unwrap().len(), 4);
    let phi = params.iter().find(|p| p["key"] == "phi").unwrap();
    assert_eq!(
        phi["kind"]["values"],
        serde_json::json!(["binary", "ha", "wha", "pra"])
    );
    let cls = list.iter().find(|f| f["name"] == "cls").unwrap();
    let keys: Vec<&str> = cls["params"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["key"].as_str().unwrap())
        .collect();
    for key in ["weights", "clusters", "confidence", "tolerance", "features"] {
        assert!(keys.contains(&key), "cls lacks {key}: {keys:?}");
    }
}

#[test]
fn every_sampling_policy_simulates_within_the_budget_deterministically() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, log) = generated_site(dir.path(), 150, 6);
    let simulate = |policy: &str, extra: &[&str]| {
        let mut args = vec![
            "simulate", "--corpus", &corpus, "--log", &log, "--policy", policy, "--budget", "8",
            "--mode", "online", "--json",
        ];
        args.extend(extra);
        refresher_json(&args)
    };
    for policy in FAMILIES {
        let run = simulate(policy, &[]);
        assert_eq!(run["policy"], policy);
        assert!(
            run["label"].as_str().unwrap().starts_with(policy),
            "{}",
            run["label"]
        );
        let units = run["per_unit"].as_array().unwrap();
        assert_eq!(units.len(), 5);
        for u in units {
            // 150 pages leave every policy enough to spend the whole budget.
            assert_eq!(u["refreshed"], 8, "{policy} unit {}", u["unit"]);
            let ratio = u["change_ratio"].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&ratio), "{policy}: {ratio}");
        }
        let again = simulate(policy, &[]);
        assert_eq!(
            run["per_unit"], again["per_unit"],
            "{policy} is not deterministic"
        );
    }
    // The pages a run refreshed, per unit (`--out`'s `.refreshed.csv`), sorted in each unit.
    let outs = std::cell::Cell::new(0);
    let chosen = |policy: &str, extra: &[&str]| -> Vec<(u32, String)> {
        let out = dir
            .path()
            .join(format!("out-{}", outs.replace(outs.get() + 1)));
        let mut args = vec!["--out", out.to_str().unwrap()];
        args.extend(extra);
        simulate(policy, &args);
        let csv = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.to_str().unwrap().ends_with(".refreshed.csv"))
            .expect("a .refreshed.csv");
        let mut pages: Vec<(u32, String)> = std::fs::read_to_string(csv)
            .unwrap()
            .lines()
            .skip(1)
            .map(|l| {
                let mut f = l.splitn(3, ',');
                let unit = f.next().unwrap().parse().unwrap();
                let _rank = f.next();
                (unit, f.next().unwrap().to_string())
            })
            .collect();
        pages.sort();
        assert_eq!(pages.len(), 5 * 8, "{policy} {extra:?}");
        pages
    };
    // Parameters reach the policy and its label.
    let ha = simulate("sample-lb", &["--param", "phi=ha", "--param", "d=-1"]);
    assert_eq!(ha["label"], "sample-lb (d = -1, φ = ha)");
    let gad = simulate("cls", &["--param", "weights=gad", "--param", "clusters=3"]);
    assert!(
        gad["label"]
            .as_str()
            .unwrap()
            .starts_with("cls (gad, k = 3"),
        "{}",
        gad["label"]
    );
    // ... and change what it does: other pages than at the defaults, which a repeated
    // default run refreshes again.
    let lb_default = chosen("sample-lb", &[]);
    assert_eq!(chosen("sample-lb", &[]), lb_default, "deterministic");
    assert_ne!(
        chosen("sample-lb", &["--param", "phi=ha", "--param", "d=-1"]),
        lb_default,
        "sample-lb with φ = ha, d = -1 refreshed the default's pages"
    );
    assert_ne!(
        chosen("cls", &["--param", "weights=gad", "--param", "clusters=3"]),
        chosen("cls", &[]),
        "cls with gad weights and k = 3 refreshed the default's pages"
    );
    // RNS is the random draw under the papers' name.
    let random = simulate("random", &[]);
    assert_eq!(simulate("rns", &[])["per_unit"], random["per_unit"]);
    assert_eq!(chosen("rns", &[]), chosen("random", &[]));
    // Every other sampling policy is not that draw: its schedule is its own.
    let random_pages = chosen("random", &[]);
    for policy in FAMILIES.iter().filter(|&&p| p != "rns") {
        assert_ne!(
            chosen(policy, &[]),
            random_pages,
            "{policy} refreshed the random draw's pages"
        );
    }

    // compare sweeps the granularity like θ.
    let out = dir.path().join("cmp");
    let c = refresher_json(&[
        "compare",
        "--corpus",
        &corpus,
        "--log",
        &log,
        "--policies",
        "sample-db,gsb",
        "--budgets",
        "8",
        "--sweep",
        "d=0,1",
        "--mode",
        "online",
        "--out",
        out.to_str().unwrap(),
        "--json",
    ]);
    let points = c["sweeps"][0]["points"].as_array().unwrap();
    // The grid's two values, and the run at the family's default (no `d` given: the table
    // at parameters fixed before the run).
    let ds: Vec<Option<f64>> = points
        .iter()
        .filter(|p| p["policy"] == "sample-db")
        .map(|p| p["params"]["d"].as_f64())
        .collect();
    assert_eq!(ds, [Some(0.0), Some(1.0), None]);
    assert!(points.iter().any(|p| p["policy"] == "gsb"));

    // A bad value names the parameter and what it takes.
    let (ok, _, stderr) = run_refresher(&[
        "simulate",
        "--corpus",
        &corpus,
        "--log",
        &log,
        "--policy",
        "sample-db",
        "--param",
        "phi=maybe",
        "--budget",
        "8",
    ]);
    assert!(
        !ok && stderr.contains("phi") && stderr.contains("wha"),
        "{stderr}"
    );
}
