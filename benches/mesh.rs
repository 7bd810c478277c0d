//! `compare` spread over workers, side by side in one run: one process with one worker, one
//! process with 2 and 4 worker threads, 2 and 4 processes on loopback (timely-dataflow). For
//! each: wall time, peak resident memory of the largest process, payload bytes the workers
//! sent each other and whether the JSON equals the one-worker run's.
//!
//! The site is generated (`REFRESHER_MESH_PAGES`, default 3000 pages, 12 weekly units) and
//! cached under `target/scale-sites/`; the sweep is every default family over 8 budgets in
//! both modes without intervals (`REFRESHER_MESH_ARGS` adds arguments).

#[path = "common/generated_site.rs"]
mod generated_site;
#[path = "common/json.rs"]
mod json;
#[path = "common/loopback.rs"]
mod loopback;
use generated_site::generated_site;
use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

const UNITS: u32 = 12;

struct Outcome {
    seconds: f64,
    peak_kib: i64,
    bytes_sent: u64,
    json: serde_json::Value,
}

fn site(pages: usize) -> PathBuf {
    generated_site(env!("CARGO_BIN_EXE_refresher"), pages, UNITS)
}

/// The JSON without timings.
fn comparable(text: &str) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_str(text).expect("compare --json output");
    json::strip_seconds(&mut v);
    v
}

/// Runs `processes` processes of `args` plus the mesh flags and waits for all, reading each
/// one's rusage (std's `wait` cannot return it).
#[allow(clippy::zombie_processes)]
fn run(args: &[String], workers: usize, processes: usize) -> Outcome {
    let peers = std::env::temp_dir().join("refresher-mesh-bench-peers.txt");
    loopback::write_peers_file(&peers, processes);
    let start = Instant::now();
    let children: Vec<_> = (0..processes)
        .map(|i| {
            let out = std::env::temp_dir().join(format!("refresher-mesh-bench-{i}.out"));
            let err = std::env::temp_dir().join(format!("refresher-mesh-bench-{i}.err"));
            let mut command = Command::new(env!("CARGO_BIN_EXE_refresher"));
            command
                .args(args)
                .args(["--workers", &workers.to_string()])
                .stdout(std::fs::File::create(&out).unwrap())
                .stderr(std::fs::File::create(&err).unwrap());
            loopback::add_mesh_flags(&mut command, i, processes, &peers);
            (command.spawn().expect("run refresher"), out, err)
        })
        .collect();
    let mut peak_kib = 0;
    let mut bytes_sent = 0;
    let mut json = serde_json::Value::Null;
    for (i, (child, out, err)) in children.into_iter().enumerate() {
        let mut status = 0;
        // SAFETY: wait4 writes only the status and the rusage struct we pass; the child is
        // ours and is not waited for elsewhere.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
        assert!(pid > 0, "wait4 failed");
        let stderr = std::fs::read_to_string(&err).unwrap_or_default();
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "process {i} failed:\n{stderr}"
        );
        peak_kib = peak_kib.max(usage.ru_maxrss);
        bytes_sent += stderr
            .lines()
            .filter_map(|l| {
                l.split(": ")
                    .nth(1)?
                    .strip_suffix(" bytes sent to other workers")
            })
            .map(|n| n.parse::<u64>().unwrap())
            .sum::<u64>();
        if i == 0 {
            json = comparable(&std::fs::read_to_string(&out).unwrap());
        }
    }
    Outcome {
        seconds: start.elapsed().as_secs_f64(),
        peak_kib,
        bytes_sent,
        json,
    }
}

fn main() {
    let pages: usize = std::env::var("REFRESHER_MESH_PAGES")
        .map(|p| p.parse().expect("REFRESHER_MESH_PAGES: a page count"))
        .unwrap_or(3000);
    let dir = site(pages);
    let mut args: Vec<String> = [
        "compare",
        "--corpus",
        &dir.join("corpus").display().to_string(),
        "--log",
        &dir.join("querylog/aol-synthetic.txt").display().to_string(),
        "--mode",
        "oracle,online",
        "--budgets",
        &[0, 1, 3, 10, 30, 100, 300, 1000]
            .map(|per_mille| (pages * per_mille / 1000).to_string())
            .join(","),
        "--no-intervals",
        "--json",
    ]
    .map(String::from)
    .to_vec();
    if let Ok(more) = std::env::var("REFRESHER_MESH_ARGS") {
        args.extend(more.split_whitespace().map(String::from));
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "compare of {pages} pages × {UNITS} units (default families, 8 budgets, both modes) on {cores} cores"
    );
    println!(
        "{:<28} {:>9} {:>9} {:>14} {:>13} {:>10}",
        "spread", "wall s", "× 1 wkr", "peak RSS MiB", "bytes sent", "same JSON"
    );
    let one = run(&args, 1, 1);
    for (label, workers, processes) in [
        ("1 process, 1 worker", 1, 1),
        ("1 process, 2 workers", 2, 1),
        ("1 process, 4 workers", 4, 1),
        ("2 processes, 1 worker each", 1, 2),
        ("4 processes, 1 worker each", 1, 4),
    ] {
        let o = if workers == 1 && processes == 1 {
            Outcome {
                json: one.json.clone(),
                ..one
            }
        } else {
            run(&args, workers, processes)
        };
        println!(
            "{label:<28} {:>9.1} {:>9.2} {:>14.0} {:>13} {:>10}",
            o.seconds,
            o.seconds / one.seconds,
            o.peak_kib as f64 / 1024.0,
            o.bytes_sent,
            if o.json == one.json { "yes" } else { "NO" }
        );
    }
}
