//! Query-log parse throughput (lines per second), printed.
//!
//! Reads the shared AOL collection-layout log (`$REFRESHER_SHARED_DATA`, else `../shared/data`
//! beside the checkout) twice: from the gzip file (decompression included) and from an
//! in-memory decompressed buffer (parsing only). Target: ≥ 1 M lines/s per core.
//! Run with `cargo bench --bench querylog`.

use std::io::Read;
use std::path::PathBuf;
use std::time::Instant;

use refresher::querylog::layouts::{read_log, read_log_from, ReadOptions};

/// The allocator the `refresher` binary ships with, so the figures are the binary's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const AOL: &str = "querylogs/aol-2006-heavy-users.even-anonid.collection-layout.txt.gz";
const PER_USER: &str = "querylogs/aol-wasiahmad-user_search_logs.even-anonid.tar.gz";
const RUNS: usize = 5;

fn shared(relative: &str) -> Option<PathBuf> {
    let root = std::env::var_os("REFRESHER_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data"));
    let path = root.join(relative);
    path.exists().then_some(path)
}

/// Best of `RUNS` timings of `f`, which returns the number of lines it read.
fn best(mut f: impl FnMut() -> u64) -> (u64, f64) {
    let mut best = f64::INFINITY;
    let mut lines = 0;
    for _ in 0..RUNS {
        let t = Instant::now();
        lines = f();
        best = best.min(t.elapsed().as_secs_f64());
    }
    (lines, best)
}

fn report(what: &str, lines: u64, secs: f64) {
    println!(
        "{what:<44} {lines:>8} lines in {:>7.1} ms = {:>6.2} M lines/s",
        secs * 1e3,
        lines as f64 / secs / 1e6
    );
}

fn main() {
    let Some(path) = shared(AOL) else {
        println!("SKIPPED: {AOL} not found (set REFRESHER_SHARED_DATA)");
        return;
    };
    let options = ReadOptions::default();
    let (lines, secs) = best(|| read_log(&path, &options).expect("reads").lines);
    report("AOL collection, gzip file (with inflate)", lines, secs);

    let mut plain = Vec::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(&path).unwrap())
        .read_to_end(&mut plain)
        .unwrap();
    let plain: &'static [u8] = Box::leak(plain.into_boxed_slice());
    let (lines, secs) = best(|| {
        read_log_from(&path, Box::new(plain), &options)
            .expect("reads")
            .lines
    });
    report("AOL collection, in-memory (parse only)", lines, secs);
    println!(
        "  ({:.1} MB decompressed, {:.0} MB/s)",
        plain.len() as f64 / 1e6,
        plain.len() as f64 / secs / 1e6
    );

    if let Some(tar) = shared(PER_USER) {
        let (lines, secs) = best(|| read_log(&tar, &options).expect("reads").lines);
        report("AOL per-user tar.gz (with inflate)", lines, secs);
    }
}
