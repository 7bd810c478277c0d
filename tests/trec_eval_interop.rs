//! Exported TREC runs give trec_eval's numbers exactly: pytrec_eval (trec_eval's own C code,
//! PyPI `pytrec_eval-terrier`, installed by `.ci/run`) on `run-unitN.trec` + `qrels-unitN.txt`
//! must equal the program's `map_at_10`, `ndcg_at_10` and `p_at_10` of that unit, and every
//! per-query line of `eval-unitN.txt`, to 1e-9 — including queries whose results tie.
//!
//! Skipped with a printed reason when python3 or pytrec_eval is missing (not under CI).

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// Reads a run and qrels and prints trec_eval's `-c` measures per query and averaged over
/// every judged query (pytrec_eval leaves out judged queries absent from the run: 0 then).
const PYTREC: &str = r#"
import json, sys, pytrec_eval
run, qrels = {}, {}
for line in open(sys.argv[1]):
    q, _, doc, _, score, _ = line.split()
    run.setdefault(q, {})[doc] = float(score)
for line in open(sys.argv[2]):
    q, _, doc, rel = line.split()
    qrels.setdefault(q, {})[doc] = int(rel)
measures = ("map_cut_10", "ndcg_cut_10", "P_10")
got = pytrec_eval.RelevanceEvaluator(qrels, {"map_cut.10", "ndcg_cut.10", "P.10"}).evaluate(run)
per = {q: {m: got.get(q, {}).get(m, 0.0) for m in measures} for q in qrels}
mean = {m: sum(p[m] for p in per.values()) / len(per) for m in measures}
print(json.dumps({"per_query": per, "all": mean}))
"#;

fn python_ready() -> bool {
    common::python3_with(
        &["pytrec_eval"],
        "pip install pytrec_eval-terrier, as .ci/run does",
    )
}

fn refresher(args: &[&str]) -> Value {
    let out = Command::new(common::refresher_bin())
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "refresher {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

fn pytrec(run: &Path, qrels: &Path) -> Value {
    let out = Command::new("python3")
        .args(["-c", PYTREC])
        .arg(run)
        .arg(qrels)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "pytrec_eval: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Adjacent results of one query whose exported scores are adjacent `f32` values: ties of the
/// ranking (or near-ties), kept in our order in the export.
fn tied_pairs(run: &str) -> usize {
    let rows: Vec<(String, f32)> = run
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f[0].to_string(), f[4].parse::<f32>().unwrap())
        })
        .collect();
    rows.windows(2)
        .filter(|w| w[0].0 == w[1].0)
        .inspect(|w| assert!(w[0].1 > w[1].1, "scores must strictly decrease: {w:?}"))
        .filter(|w| w[0].1.next_down() == w[1].1)
        .count()
}

#[test]
fn pytrec_eval_reproduces_map_ndcg_and_p_at_10_of_exported_runs() {
    if !python_ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().to_str().unwrap();
    refresher(&[
        "generate",
        "--out",
        site,
        "--pages",
        "150",
        "--weeks",
        "6",
        "--queries",
        "3000",
        "--seed",
        "11",
    ]);
    let corpus = dir.path().join("corpus");
    let log = dir.path().join("querylog/aol-synthetic.txt");
    let mut ties = 0;
    for (scoring, policy, unit) in [("bm25", "age", "3"), ("inlinks", "round-robin", "4")] {
        let out = dir.path().join(format!("sim-{scoring}"));
        let result = refresher(&[
            "simulate",
            "--corpus",
            corpus.to_str().unwrap(),
            "--log",
            log.to_str().unwrap(),
            "--scoring",
            scoring,
            "--policy",
            policy,
            "--budget",
            "5",
            "--out",
            out.to_str().unwrap(),
            "--trec-unit",
            unit,
            "--json",
        ]);
        let record = result["per_unit"]
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["unit"].as_u64().map(|n| n.to_string()).as_deref() == Some(unit))
            .unwrap()
            .clone();
        let run_path = out.join(format!("run-unit{unit}.trec"));
        let qrels_path = out.join(format!("qrels-unit{unit}.txt"));
        let run = std::fs::read_to_string(&run_path).unwrap();
        ties += tied_pairs(&run);
        let theirs = pytrec(&run_path, &qrels_path);
        for (measure, key) in [
            ("map_cut_10", "map_at_10"),
            ("ndcg_cut_10", "ndcg_at_10"),
            ("P_10", "p_at_10"),
        ] {
            let (t, o) = (
                theirs["all"][measure].as_f64().unwrap(),
                record[key].as_f64().unwrap(),
            );
            println!("{scoring} unit {unit}: {measure} pytrec_eval {t:.12} program {o:.12}");
            assert!(
                (t - o).abs() < 1e-9,
                "{scoring} {measure}: pytrec_eval {t} vs {o}"
            );
        }
        // Per-query values of the program's trec_eval-layout file.
        let eval = std::fs::read_to_string(out.join(format!("eval-unit{unit}.txt"))).unwrap();
        let mut ours: BTreeMap<(String, String), f64> = BTreeMap::new();
        for line in eval.lines() {
            let f: Vec<&str> = line.split('\t').collect();
            assert_eq!(f.len(), 3, "{line:?}");
            if let Ok(v) = f[2].parse::<f64>() {
                ours.insert((f[0].to_string(), f[1].to_string()), v);
            }
        }
        let per = theirs["per_query"].as_object().unwrap();
        assert!(per.len() > 10, "{scoring}: {} judged queries", per.len());
        assert_eq!(ours[&("num_q".into(), "all".into())], per.len() as f64);
        for (q, m) in per {
            for (measure, value) in m.as_object().unwrap() {
                let o = ours[&(measure.clone(), q.clone())];
                let t = value.as_f64().unwrap();
                assert!((t - o).abs() < 1e-9, "{scoring} q{q} {measure}: {t} vs {o}");
            }
        }
        for measure in ["map_cut_10", "ndcg_cut_10", "P_10"] {
            let o = ours[&(measure.to_string(), "all".to_string())];
            let t = theirs["all"][measure].as_f64().unwrap();
            assert!((t - o).abs() < 1e-9, "{scoring} all {measure}: {t} vs {o}");
        }
        // The schedule's NDCG is still there under both names, and differs in meaning.
        assert_eq!(record["ndcg"], record["schedule_ndcg"]);
        assert_eq!(result["mean_ndcg"], result["mean_schedule_ndcg"]);
        assert!(result["mean_ndcg_at_10"].is_f64());
    }
    assert!(
        ties > 0,
        "the runs hold no tied scores: the test would not test tie order"
    );
    println!("{ties} tied adjacent scores separated in the exports");
}
