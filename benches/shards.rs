//! `serve` with its index split over shards, side by side in one run: one index, 4 worker
//! threads in one process, 4 processes on loopback. For each: seconds until it listens, peak
//! resident memory of each process, the statistics the leader sent, the mean wall time of a
//! search (the workload's first queries, sequentially, over HTTP on loopback) and whether every
//! answer equals the one index's.
//!
//! The collection is generated (`REFRESHER_SHARDS_PAGES`, default 20,000 pages over 12 hosts,
//! 4 weekly units) and cached under `target/scale-sites/`.

#[path = "common/generated_site.rs"]
mod generated_site;
#[path = "common/loopback.rs"]
mod loopback;
use std::io::BufRead;
use std::process::{Child, Command, Stdio};
use std::time::Instant;

const UNITS: u32 = 4;
const SITES: usize = 12;
const SEARCHES: usize = 300;

/// A memory figure of a running process from `/proc` (`VmHWM:` its peak resident memory,
/// `VmRSS:` its resident memory now), in KiB.
fn status_kib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

struct Outcome {
    ready_seconds: f64,
    /// Per process: peak and current resident memory, MiB.
    peak_mib: Vec<(f64, f64)>,
    statistics_bytes: u64,
    mean_search_ms: f64,
    answers: Vec<serde_json::Value>,
}

fn run(args: &[String], queries: &[String], workers: usize, processes: usize) -> Outcome {
    let peers = std::env::temp_dir().join("refresher-shards-bench-peers.txt");
    loopback::write_peers_file(&peers, processes);
    let start = Instant::now();
    let mut children: Vec<Child> = (0..processes)
        .map(|i| {
            let err = std::env::temp_dir().join(format!("refresher-shards-bench-{i}.err"));
            let mut command = Command::new(env!("CARGO_BIN_EXE_refresher"));
            command
                .args(args)
                .stdout(Stdio::piped())
                .stderr(std::fs::File::create(&err).unwrap());
            if workers * processes > 1 {
                command.args(["--workers", &workers.to_string()]);
            }
            loopback::add_mesh_flags(&mut command, i, processes, &peers);
            command.spawn().expect("run refresher serve")
        })
        .collect();
    let stdout = children[0].stdout.take().unwrap();
    let addr = std::io::BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .find_map(|l| {
            l.strip_prefix("serving on http://")
                .map(|r| r.split('/').next().unwrap().to_string())
        })
        .expect("the leader listens");
    let ready_seconds = start.elapsed().as_secs_f64();
    let searched = Instant::now();
    let answers: Vec<serde_json::Value> = queries
        .iter()
        .map(|q| {
            let (_, body) = loopback::http_get(
                &addr,
                &format!("/api/search?q={}&limit=10", loopback::percent_encoded(q)),
            );
            let mut v: serde_json::Value = serde_json::from_str(&body).unwrap();
            v.as_object_mut().unwrap().remove("took_ms");
            v
        })
        .collect();
    let mean_search_ms = searched.elapsed().as_secs_f64() * 1e3 / queries.len() as f64;
    let peak_mib = children
        .iter()
        .map(|c| {
            let mib = |field| status_kib(c.id(), field) as f64 / 1024.0;
            (mib("VmHWM:"), mib("VmRSS:"))
        })
        .collect();
    // SAFETY: SIGINT to the leader this bench started; it stops the other processes.
    unsafe { libc::kill(children[0].id() as i32, libc::SIGINT) };
    for child in &mut children {
        child.wait().unwrap();
    }
    let stderr = std::fs::read_to_string(std::env::temp_dir().join("refresher-shards-bench-0.err"))
        .unwrap_or_default();
    let statistics_bytes = stderr
        .lines()
        .find_map(|l| {
            l.split("; ")
                .nth(1)?
                .strip_suffix(" bytes of statistics sent by the leader")
        })
        .map_or(0, |n| n.parse().unwrap());
    Outcome {
        ready_seconds,
        peak_mib,
        statistics_bytes,
        mean_search_ms,
        answers,
    }
}

fn main() {
    let pages: usize = std::env::var("REFRESHER_SHARDS_PAGES")
        .map(|p| p.parse().expect("REFRESHER_SHARDS_PAGES: a page count"))
        .unwrap_or(20_000);
    let dir = generated_site::generated_sites(env!("CARGO_BIN_EXE_refresher"), pages, UNITS, SITES);
    let log = dir.join("querylog/aol-synthetic.txt");
    let queries = loopback::first_queries(&log, SEARCHES);
    let args: Vec<String> = [
        "serve",
        "--corpus",
        &dir.join("corpus").display().to_string(),
        "--addr",
        "127.0.0.1:0",
    ]
    .map(String::from)
    .to_vec();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "serve of {pages} pages on {SITES} hosts × {UNITS} units, {} searches, on {cores} cores",
        queries.len()
    );
    println!(
        "{:<26} {:>8} {:>32} {:>12} {:>10} {:>6}",
        "index", "ready s", "RSS MiB peak/now per process", "stats bytes", "search ms", "same"
    );
    let one = run(&args, &queries, 1, 1);
    for (label, workers, processes) in [
        ("one index", 1, 1),
        ("4 shards in 1 process", 4, 1),
        ("4 processes, 1 shard each", 1, 4),
    ] {
        let o = if workers * processes == 1 {
            Outcome {
                answers: one.answers.clone(),
                peak_mib: one.peak_mib.clone(),
                ..one
            }
        } else {
            run(&args, &queries, workers, processes)
        };
        println!(
            "{label:<26} {:>8.1} {:>32} {:>12} {:>10.2} {:>6}",
            o.ready_seconds,
            o.peak_mib
                .iter()
                .map(|(peak, now)| format!("{peak:.0}/{now:.0}"))
                .collect::<Vec<_>>()
                .join(" "),
            o.statistics_bytes,
            o.mean_search_ms,
            if o.answers == one.answers {
                "yes"
            } else {
                "NO"
            }
        );
    }
}
