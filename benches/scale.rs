//! How the cost of the main commands grows with the size of the site: generated sites of
//! 10^4 and 10^5 pages (and 10^6 with `REFRESHER_SCALE_MAX=1000000`) × 12 weekly units; for
//! each, the wall time and peak resident memory of `ingest`, one `simulate` (user-centric,
//! B = 1 % of the pages, oracle) and a 40-run `compare` (4 policies × 10 budgets, oracle),
//! each a fresh process as a user runs it, printed as a table with the growth exponent
//! `log(cost ratio) / log(page ratio)` between consecutive sizes (1.0 = linear).
//!
//! `REFRESHER_SCALE_SIZES=5000,20000` replaces the sizes (a quick check) and
//! `REFRESHER_SCALE_COMMANDS=ingest,simulate` keeps only the commands named (a 40-run
//! `compare` of 10^6 pages does not fit in 24 GiB); generated sites are
//! cached under `target/scale-sites/` (the generator is seeded, so a cached site is the one
//! it would write again).

#[path = "common/generated_site.rs"]
mod generated_site;
use generated_site::generated_site;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const UNITS: u32 = 12;

/// Wall seconds and peak RSS (KiB) of one child process.
struct Cost {
    seconds: f64,
    peak_kib: i64,
}

/// Runs the `refresher` binary with `args` and measures it (its own rusage, from `wait4`);
/// panics with its stderr on failure.
// The child is reaped by `wait4` (std's `wait` cannot return its rusage).
#[allow(clippy::zombie_processes)]
fn measure(args: &[String]) -> Cost {
    let stderr_path = std::env::temp_dir().join("refresher-scale-stderr.txt");
    let stderr = std::fs::File::create(&stderr_path).expect("create stderr file");
    let start = Instant::now();
    let child = Command::new(env!("CARGO_BIN_EXE_refresher"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(stderr)
        .spawn()
        .expect("run refresher");
    let mut status = 0;
    // SAFETY: wait4 writes only the status and the rusage struct we pass; the child is ours
    // and is not waited for elsewhere.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    let seconds = start.elapsed().as_secs_f64();
    assert!(pid > 0, "wait4 failed");
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "refresher {args:?} failed:\n{}",
        std::fs::read_to_string(&stderr_path).unwrap_or_default()
    );
    Cost {
        seconds,
        peak_kib: usage.ru_maxrss,
    }
}

fn site(pages: usize) -> PathBuf {
    generated_site(env!("CARGO_BIN_EXE_refresher"), pages, UNITS)
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

fn commands(dir: &Path, pages: usize) -> Vec<(&'static str, Vec<String>)> {
    let corpus = dir.join("corpus").display().to_string();
    let log = dir.join("querylog/aol-synthetic.txt").display().to_string();
    let budget = (pages / 100).max(1).to_string();
    let budgets: Vec<String> = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]
        .iter()
        .map(|per_mille| (pages * per_mille / 1000).max(1).to_string())
        .collect();
    let out = std::env::temp_dir().join(format!("refresher-scale-{pages}"));
    vec![
        (
            "ingest",
            strings(&["ingest", "--corpus", &corpus, "--log", &log, "--json"]),
        ),
        (
            "simulate",
            strings(&[
                "simulate",
                "--corpus",
                &corpus,
                "--log",
                &log,
                "--policy",
                "user-centric",
                "--budget",
                &budget,
                "--json",
            ]),
        ),
        (
            "compare (40 runs)",
            strings(&[
                "compare",
                "--corpus",
                &corpus,
                "--log",
                &log,
                "--policies",
                "user-centric,sbr,ebr,round-robin",
                "--sweep",
                "theta=0.5",
                "--budgets",
                &budgets.join(","),
                "--mode",
                "oracle",
                "--out",
                &out.display().to_string(),
            ]),
        ),
    ]
}

fn main() {
    let sizes: Vec<usize> = match std::env::var("REFRESHER_SCALE_SIZES") {
        Ok(list) => list
            .split(',')
            .map(|s| {
                s.trim()
                    .parse()
                    .expect("REFRESHER_SCALE_SIZES: page counts")
            })
            .collect(),
        Err(_) => {
            let max: usize = std::env::var("REFRESHER_SCALE_MAX")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(100_000);
            [10_000, 100_000, 1_000_000]
                .into_iter()
                .filter(|&n| n <= max)
                .collect()
        }
    };
    println!("scale bench: generated sites × {UNITS} units, one fresh process per command");
    println!(
        "{:<20} {:>9} {:>10} {:>10} {:>11} {:>11}",
        "command", "pages", "wall s", "peak MiB", "time exp.", "memory exp."
    );
    let wanted: Option<Vec<String>> = std::env::var("REFRESHER_SCALE_COMMANDS")
        .ok()
        .map(|list| list.split(',').map(|s| s.trim().to_string()).collect());
    let mut previous: Vec<Option<(usize, Cost)>> = vec![None, None, None];
    for &pages in &sizes {
        let dir = site(pages);
        for (i, (name, args)) in commands(&dir, pages).into_iter().enumerate() {
            // Matched on the command's first word (`compare (40 runs)` is `compare`).
            let word = name.split_whitespace().next().unwrap_or(name);
            if wanted
                .as_ref()
                .is_some_and(|w| !w.iter().any(|c| c == word))
            {
                continue;
            }
            let cost = measure(&args);
            let exponents = previous[i].as_ref().map(|(n, c)| {
                let size_ratio = (pages as f64 / *n as f64).ln();
                (
                    (cost.seconds / c.seconds).ln() / size_ratio,
                    (cost.peak_kib as f64 / c.peak_kib as f64).ln() / size_ratio,
                )
            });
            let (te, me) = exponents.map_or(("–".to_string(), "–".to_string()), |(t, m)| {
                (format!("{t:.2}"), format!("{m:.2}"))
            });
            println!(
                "{:<20} {:>9} {:>10.2} {:>10.0} {:>11} {:>11}",
                name,
                pages,
                cost.seconds,
                cost.peak_kib as f64 / 1024.0,
                te,
                me
            );
            previous[i] = Some((pages, cost));
        }
    }
}
