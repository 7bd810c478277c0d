//! Wall time of one whole `refresher simulate` command — one policy, one budget, every week —
//! as a user runs it: a fresh process that ingests the corpus, reads the log, builds the
//! environment and runs the policy (issue goal: ≤ 10 s for EmacsWiki on 2 cores).
//!
//! Each configuration runs `REPEATS` times; the bench prints the median wall time and the
//! median of the stages the command reports in its JSON (`seconds.load`, `.environment`,
//! `.run`). Data: `../shared/data` beside the checkout, or `REFRESHER_BENCH_CORPUS` and
//! `REFRESHER_BENCH_LOG`; without them the bench prints a skip line.

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

const REPEATS: usize = 3;

fn input(var: &str, shared: &str) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(var) {
        return Some(PathBuf::from(p));
    }
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/data")
        .join(shared);
    p.exists().then_some(p)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let (Some(corpus), Some(log)) = (
        input("REFRESHER_BENCH_CORPUS", "corpora/emacswiki"),
        input(
            "REFRESHER_BENCH_LOG",
            "querylogs/aol-2006-heavy-users.even-anonid.collection-layout.txt.gz",
        ),
    ) else {
        println!("simulate_run bench SKIPPED: no shared corpus and log (set REFRESHER_BENCH_CORPUS and REFRESHER_BENCH_LOG)");
        return;
    };
    println!(
        "simulate_run bench: {} + {}, {REPEATS} runs each, median",
        corpus.display(),
        log.display()
    );
    println!(
        "{:<34} {:>8} {:>8} {:>8} {:>8}  mean quality",
        "configuration", "wall s", "load", "env", "run"
    );
    let configurations: [&[&str]; 5] = [
        &["--policy", "user-centric", "--budget", "4"],
        &[
            "--policy",
            "user-centric",
            "--budget",
            "4",
            "--mode",
            "online",
        ],
        &["--policy", "sbr", "--param", "theta=0.1", "--budget", "64"],
        &[
            "--policy",
            "ebr",
            "--param",
            "theta=0.1",
            "--budget",
            "64",
            "--mode",
            "online",
        ],
        &["--policy", "round-robin", "--budget", "1024"],
    ];
    for extra in configurations {
        let mut wall = Vec::new();
        let mut stages: [Vec<f64>; 3] = Default::default();
        let mut quality = 0.0;
        for _ in 0..REPEATS {
            let started = Instant::now();
            let output = Command::new(env!("CARGO_BIN_EXE_refresher"))
                .arg("simulate")
                .arg("--corpus")
                .arg(&corpus)
                .arg("--log")
                .arg(&log)
                .args(extra)
                .arg("--json")
                .output()
                .expect("running refresher simulate");
            wall.push(started.elapsed().as_secs_f64());
            assert!(
                output.status.success(),
                "refresher simulate {extra:?} failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
            let value: serde_json::Value =
                serde_json::from_slice(&output.stdout).expect("simulate --json output");
            for (i, key) in ["load", "environment", "run"].iter().enumerate() {
                stages[i].push(value["seconds"][key].as_f64().expect("seconds in JSON"));
            }
            quality = value["mean_quality"].as_f64().expect("mean_quality");
        }
        let [load, env, run] = stages;
        println!(
            "{:<34} {:>8.2} {:>8.2} {:>8.2} {:>8.2}  {quality:.4}",
            extra.join(" ").replace("--policy ", "").replace("--", ""),
            median(wall),
            median(load),
            median(env),
            median(run)
        );
    }
}
