//! `compare` spread over worker threads and over processes on loopback (timely-dataflow):
//! the JSON equals the one-process run's; a peer that never comes, disagrees or dies is named.

mod common;
#[path = "../benches/common/loopback.rs"]
mod loopback;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::run_refresher as refresher;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_refresher")
}

/// A generated site in `dir`; returns (corpus, log).
fn site(dir: &Path, pages: &str, weeks: &str, seed: &str) -> (String, String) {
    let out = dir.to_str().unwrap();
    let (ok, _, err) = refresher(&[
        "generate",
        "--out",
        out,
        "--pages",
        pages,
        "--weeks",
        weeks,
        "--queries",
        "1500",
        "--seed",
        seed,
    ]);
    assert!(ok, "{err}");
    (
        dir.join("corpus").to_str().unwrap().to_string(),
        dir.join("querylog/aol-synthetic.txt")
            .to_str()
            .unwrap()
            .to_string(),
    )
}

/// A host file of `n` free loopback ports.
fn peers_file(dir: &Path, n: usize) -> String {
    let path = dir.join("peers.txt");
    loopback::write_peers_file(&path, n);
    path.to_str().unwrap().to_string()
}

fn spawn(args: &[String]) -> Child {
    Command::new(bin())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Starts process `i` of `n` for each `i`, with `args(i)` plus the mesh flags.
fn spawn_mesh(n: usize, peers: &str, args: impl Fn(usize) -> Vec<String>) -> Vec<Child> {
    (0..n)
        .map(|i| {
            let mut a = args(i);
            a.extend(
                [
                    "--processes",
                    &n.to_string(),
                    "--process",
                    &i.to_string(),
                    "--peers",
                    peers,
                ]
                .map(String::from),
            );
            spawn(&a)
        })
        .collect()
}

/// The JSON without timings.
fn comparable(json: &str) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_str(json)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", &json[..json.len().min(300)]));
    common::strip_seconds(&mut v);
    v
}

/// Runs `args` as `n` processes of `workers` workers each; returns process 0's stdout after
/// checking every process succeeded and the others printed nothing on stdout.
fn run_processes(dir: &Path, n: usize, workers: usize, args: &[String]) -> String {
    let peers = peers_file(dir, n);
    let children = spawn_mesh(n, &peers, |_| {
        let mut a = args.to_vec();
        a.extend(["--workers".to_string(), workers.to_string()]);
        a
    });
    let mut leader = String::new();
    for (i, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8(out.stdout).unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "process {i}: {stderr}");
        if i == 0 {
            leader = stdout;
        } else {
            assert!(stdout.is_empty(), "process {i} wrote to stdout: {stdout}");
            assert!(stderr.contains("process 0 reports"), "{stderr}");
        }
    }
    leader
}

fn compare_args(corpus: &str, log: &str, more: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = [
        "compare",
        "--corpus",
        corpus,
        "--log",
        log,
        "--mode",
        "oracle,online",
        "--json",
    ]
    .map(String::from)
    .to_vec();
    a.extend(more.iter().map(|s| s.to_string()));
    a
}

#[test]
fn compare_over_workers_and_loopback_processes_equals_one_process() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, log) = site(dir.path(), "200", "6", "4");
    // Every default family (with SBR/EBR's θ grid) in both modes; BM25 over three
    // processes, TF-IDF and in-links over worker threads.
    for (scoring, spread) in [
        ("bm25", "processes"),
        ("tfidf", "workers"),
        ("inlinks", "workers"),
    ] {
        let args = compare_args(
            &corpus,
            &log,
            &["--scoring", scoring, "--budgets", "0,2,8,32,200"],
        );
        let (ok, alone, err) = refresher(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(ok, "{err}");
        let alone = comparable(&alone);
        if spread == "processes" {
            let out = run_processes(dir.path(), 3, 1, &args);
            assert!(
                comparable(&out) == alone,
                "{scoring}: 3 processes differ from one"
            );
            let out = run_processes(dir.path(), 2, 2, &args);
            assert!(
                comparable(&out) == alone,
                "{scoring}: 2 processes × 2 workers differ"
            );
        } else {
            for workers in ["2", "4"] {
                let mut a = args.clone();
                a.extend(["--workers".to_string(), workers.to_string()]);
                let (ok, out, err) = refresher(&a.iter().map(String::as_str).collect::<Vec<_>>());
                assert!(ok, "{err}");
                assert!(
                    comparable(&out) == alone,
                    "{scoring}: {workers} workers differ"
                );
            }
        }
    }
}

#[test]
fn a_peer_that_never_comes_is_named_within_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, log) = site(dir.path(), "40", "6", "2");
    let peers = peers_file(dir.path(), 2);
    let mut args = compare_args(&corpus, &log, &["--budgets", "0,4"]);
    args.extend(
        [
            "--processes",
            "2",
            "--process",
            "1",
            "--peers",
            &peers,
            "--connect-timeout",
            "2",
        ]
        .map(String::from),
    );
    let started = Instant::now();
    let out = spawn(&args).wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("process 0 at 127.0.0.1:")
            && stderr.contains("could not be reached within 2 s"),
        "{stderr}"
    );
    assert!(started.elapsed() < Duration::from_secs(60));
}

#[test]
fn processes_that_disagree_each_name_the_other_and_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, log) = site(dir.path(), "40", "6", "2");
    let peers = peers_file(dir.path(), 2);
    // The processes differ in their seed: the configuration fingerprint differs.
    let children = spawn_mesh(2, &peers, |i| {
        let seed = (i + 1).to_string();
        compare_args(&corpus, &log, &["--budgets", "0,4", "--seed", &seed])
    });
    for (i, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "process {i} succeeded");
        let other = 1 - i;
        assert!(
            stderr.contains(&format!(
                "process {other} differs from this one (process {i})"
            )) && stderr.contains("configuration (command line)"),
            "process {i}: {stderr}"
        );
    }
}

#[test]
fn a_peer_lost_mid_run_stops_the_others_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    // Long enough (about 20 s on two cores) that both processes are still working when one dies.
    let (corpus, log) = site(dir.path(), "3000", "20", "5");
    let peers = peers_file(dir.path(), 2);
    let mut children = spawn_mesh(2, &peers, |_| compare_args(&corpus, &log, &[]));
    // Wait until both say they are connected and working (loading the site may take long on
    // a loaded machine), then kill process 1.
    let (tx, connected) = std::sync::mpsc::channel();
    let readers: Vec<_> = children
        .iter_mut()
        .map(|child| {
            let stderr = child.stderr.take().unwrap();
            let tx = tx.clone();
            std::thread::spawn(move || {
                use std::io::BufRead;
                let mut text = String::new();
                for line in std::io::BufReader::new(stderr)
                    .lines()
                    .map_while(Result::ok)
                {
                    if line.contains("connected, every process agrees") {
                        let _ = tx.send(());
                    }
                    text.push_str(&line);
                    text.push('\n');
                }
                text
            })
        })
        .collect();
    for _ in 0..2 {
        connected
            .recv_timeout(Duration::from_secs(300))
            .expect("both processes connect");
    }
    std::thread::sleep(Duration::from_secs(1));
    for child in &mut children {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended too soon to test"
        );
    }
    children[1].kill().unwrap();
    children[1].wait().unwrap();
    let started = Instant::now();
    let status = children[0].wait().unwrap();
    let stderr = readers.into_iter().next().unwrap().join().unwrap();
    assert!(!status.success(), "{stderr}");
    assert!(stderr.contains("lost process 1 at 127.0.0.1:"), "{stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "took {:?}",
        started.elapsed()
    );
}

/// A `serve` started with `args`; its address, read from the line it prints once listening.
struct Server {
    child: Child,
    addr: String,
}

fn start_server(mut child: Child) -> Server {
    use std::io::BufRead;
    let stdout = child.stdout.take().unwrap();
    let mut lines = std::io::BufReader::new(stdout).lines();
    let addr = loop {
        match lines.next() {
            Some(Ok(line)) => {
                if let Some(rest) = line.strip_prefix("serving on http://") {
                    break rest.split('/').next().unwrap().to_string();
                }
            }
            _ => {
                let out = child.wait_with_output().unwrap();
                panic!(
                    "serve ended before listening: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
    };
    Server { child, addr }
}

/// `GET path` over plain HTTP/1.1; the body of a 200.
fn http_get(addr: &str, path: &str) -> String {
    let (status, body) = loopback::http_get(addr, path);
    assert!(status.starts_with("HTTP/1.1 200"), "{path}: {status}");
    body
}

/// What a server answers to `queries` (two pages each, timings removed) and its quality report.
fn answers(addr: &str, queries: &[String]) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    for q in queries {
        for (offset, limit) in [(0, 20), (5, 7)] {
            let body = http_get(
                addr,
                &format!(
                    "/api/search?q={}&offset={offset}&limit={limit}",
                    loopback::percent_encoded(q)
                ),
            );
            let mut v: serde_json::Value = serde_json::from_str(&body).unwrap();
            v.as_object_mut().unwrap().remove("took_ms");
            out.push(v);
        }
    }
    // The quality report, without the split's layout (what the comparisons hold equal).
    let mut quality: serde_json::Value =
        serde_json::from_str(&http_get(addr, "/api/quality")).unwrap();
    quality.as_object_mut().unwrap().remove("shards");
    out.push(quality);
    out
}

/// The split `/api/quality` reports at `addr`: pages per shard (null for one index), and
/// the corpus's pages.
fn shard_layout(addr: &str) -> (serde_json::Value, u64) {
    let quality: serde_json::Value = serde_json::from_str(&http_get(addr, "/api/quality")).unwrap();
    (
        quality["shards"]["pages_per_shard"].clone(),
        quality["corpus"]["pages"].as_u64().unwrap(),
    )
}

/// Stops a server as Ctrl-C does; with `others`, the mesh's other processes must then stop
/// cleanly too.
fn interrupt(server: Server, others: Vec<Child>) {
    // SAFETY: sends SIGINT to a child process this test started.
    unsafe { libc::kill(server.child.id() as i32, libc::SIGINT) };
    let out = server.child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (i, child) in others.into_iter().enumerate() {
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "process {}: {stderr}", i + 1);
        assert!(stderr.contains("stopped by process 0"), "{stderr}");
    }
}

#[test]
fn serve_over_workers_and_loopback_processes_answers_as_one_index() {
    let dir = tempfile::tempdir().unwrap();
    let (_, corpus, log) = common::generate_with(dir.path(), 400, 5, 3, &["--sites", "6"]);
    let mut queries = loopback::first_queries(Path::new(&log), 30);
    queries.extend(["the".to_string(), "nosuchword".to_string()]);
    let base = |scoring: &str| -> Vec<String> {
        [
            "serve",
            "--corpus",
            &corpus,
            "--log",
            &log,
            "--addr",
            "127.0.0.1:0",
            "--scoring",
            scoring,
        ]
        .map(String::from)
        .to_vec()
    };
    // BM25 over worker threads and over three processes; TF-IDF and in-links over threads.
    for (scoring, workers) in [("bm25", 3), ("tfidf", 2), ("inlinks", 4)] {
        let one = start_server(spawn(&base(scoring)));
        assert!(shard_layout(&one.addr).0.is_null());
        let expected = answers(&one.addr, &queries);
        interrupt(one, Vec::new());
        let mut args = base(scoring);
        args.extend(["--workers".to_string(), workers.to_string()]);
        let spread = start_server(spawn(&args));
        assert!(
            answers(&spread.addr, &queries) == expected,
            "{scoring}: {workers} workers answer differently from one index"
        );
        // The split is reported: one count per shard, every page in one.
        let (layout, pages) = shard_layout(&spread.addr);
        assert_eq!(layout.as_array().map(Vec::len), Some(workers), "{layout}");
        let split: u64 = layout
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|n| n.as_u64())
            .sum();
        assert_eq!(split, pages, "{layout}");
        interrupt(spread, Vec::new());
        if scoring == "tfidf" {
            // Shards kept on disk: built, then reopened from their manifests, answering alike.
            let index = dir.path().join("shards");
            args.extend(["--index".to_string(), index.to_str().unwrap().to_string()]);
            for round in ["built", "reopened"] {
                let kept = start_server(spawn(&args));
                assert!(
                    answers(&kept.addr, &queries) == expected,
                    "{scoring}: shards on disk ({round}) answer differently"
                );
                interrupt(kept, Vec::new());
            }
            for shard in 0..workers {
                let manifest = index.join(format!("shard-{shard}-of-{workers}/manifest.json"));
                let text = std::fs::read_to_string(&manifest).unwrap();
                assert!(
                    text.contains(&format!("{shard} of {workers} by host")),
                    "{text}"
                );
            }
        }
        if scoring == "bm25" {
            let peers = peers_file(dir.path(), 3);
            let mut children = spawn_mesh(3, &peers, |_| base(scoring));
            let leader = start_server(children.remove(0));
            assert!(
                answers(&leader.addr, &queries) == expected,
                "3 processes answer differently from one index"
            );
            interrupt(leader, children);
        }
    }
}

#[test]
fn serve_processes_of_one_command_line_keep_their_index_in_their_own_directory() {
    let dir = tempfile::tempdir().unwrap();
    let (_, corpus, log) = common::generate_with(dir.path(), 200, 4, 7, &["--sites", "4"]);
    let queries = loopback::first_queries(Path::new(&log), 10);
    let index = dir.path().join("idx");
    let in_index = |name: &str| format!("{}/{name}", index.to_str().unwrap());
    let serve = |addr: &str, index: &str| -> Vec<String> {
        [
            "serve", "--corpus", &corpus, "--log", &log, "--addr", addr, "--index", index,
        ]
        .map(String::from)
        .to_vec()
    };
    // Without --process the run is process 0.
    let one = start_server(spawn(&serve("127.0.0.1:0", &in_index("one{process}"))));
    let expected = answers(&one.addr, &queries);
    interrupt(one, Vec::new());
    assert!(index.join("one0/manifest.json").is_file());
    // Every process gets the same arguments; the address is only one once substituted
    // (process 0 listens on 127.0.0.1; the others, not serving HTTP, only parse theirs).
    let peers = peers_file(dir.path(), 2);
    let mut children = spawn_mesh(2, &peers, |_| {
        serve("127.0.{process}.1:0", &in_index("p{process}"))
    });
    let leader = start_server(children.remove(0));
    assert!(
        answers(&leader.addr, &queries) == expected,
        "2 processes with an index each answer differently from one index"
    );
    interrupt(leader, children);
    for process in 0..2 {
        let own = index.join(format!("p{process}"));
        let entries: Vec<_> = std::fs::read_dir(&own)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(entries, [format!("shard-{process}-of-2")], "{own:?}");
        let manifest = own.join(format!("shard-{process}-of-2/manifest.json"));
        let text = std::fs::read_to_string(&manifest).unwrap();
        assert!(text.contains(&format!("{process} of 2 by host")), "{text}");
    }
    assert!(!index.join("p{process}").exists());
}

/// Waits until the served engine at `addr` has run its last unit; its status, timings removed.
fn finished_engine(addr: &str) -> serde_json::Value {
    let started = Instant::now();
    loop {
        let mut status: serde_json::Value =
            serde_json::from_str(&http_get(addr, "/api/engine")).unwrap();
        assert!(status["error"].is_null(), "{status}");
        if status["finished"] == true {
            for unit in status["per_unit"].as_array_mut().unwrap() {
                unit.as_object_mut()
                    .unwrap()
                    .retain(|k, _| !k.contains("seconds"));
            }
            return status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the engine did not finish: {status}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_served_engine_refreshing_shards_answers_as_one_refreshed_index() {
    let dir = tempfile::tempdir().unwrap();
    let (_, corpus, log) = common::generate_with(dir.path(), 400, 5, 11, &["--sites", "6"]);
    let mut queries = loopback::first_queries(Path::new(&log), 30);
    queries.push("the".to_string());
    let args: Vec<String> = [
        "serve",
        "--corpus",
        &corpus,
        "--log",
        &log,
        "--addr",
        "127.0.0.1:0",
        "--policy",
        "user-centric",
        "--budget",
        "40",
        "--unit-seconds",
        "0.05",
    ]
    .map(String::from)
    .to_vec();
    let one = start_server(spawn(&args));
    let engine = finished_engine(&one.addr);
    assert_eq!(engine["per_unit"].as_array().unwrap().len(), 4, "{engine}");
    let expected = answers(&one.addr, &queries);
    interrupt(one, Vec::new());
    // The refreshed copies differ from the built ones: the test would pass on shards that
    // never applied a unit otherwise.
    let built = {
        let mut a = args.clone();
        a.truncate(7);
        let server = start_server(spawn(&a));
        let answers = answers(&server.addr, &queries);
        interrupt(server, Vec::new());
        answers
    };
    let differ = |a: &[serde_json::Value]| {
        a.iter()
            .zip(&expected)
            .filter(|(x, y)| x["results"] != y["results"])
            .count()
    };
    assert!(differ(&built) > 0, "refreshing changed no answer");
    // Over worker threads, and over two processes on loopback.
    let mut spread = args.clone();
    spread.extend(["--workers".to_string(), "3".to_string()]);
    let server = start_server(spawn(&spread));
    assert_eq!(finished_engine(&server.addr), engine);
    let got = answers(&server.addr, &queries);
    assert_eq!(
        differ(&got),
        0,
        "3 workers answer differently from one refreshed index"
    );
    assert!(got == expected);
    interrupt(server, Vec::new());
    let peers = peers_file(dir.path(), 2);
    let mut children = spawn_mesh(2, &peers, |_| args.clone());
    let leader = start_server(children.remove(0));
    assert_eq!(finished_engine(&leader.addr), engine);
    assert!(
        answers(&leader.addr, &queries) == expected,
        "2 processes answer differently from one refreshed index"
    );
    interrupt(leader, children);
}
