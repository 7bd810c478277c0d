//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// Path of a file or folder under the shared real data (`../shared/data/` beside the checkout).
///
/// Returns `None` (after printing why) when it is missing on a developer machine, so the test
/// can return early; panics when it is missing under CI (`CI` set), where the data must be present.
pub fn shared_data(relative: &str) -> Option<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data");
    let path = root.join(relative);
    if path.exists() {
        return Some(path);
    }
    if std::env::var_os("CI").is_some() {
        panic!(
            "shared real data missing under CI: {} (CI must have ../shared beside the checkout)",
            path.display()
        );
    }
    eprintln!("SKIPPED: shared real data not found at {}", path.display());
    None
}

/// Path of the `refresher` binary built for integration tests.
pub fn refresher_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_refresher"))
}

/// Runs `refresher` with `args`: (exit status success, stdout, stderr), lossily decoded.
pub fn run_refresher(args: &[&str]) -> (bool, String, String) {
    let out = std::process::Command::new(refresher_bin())
        .args(args)
        .output()
        .expect("run refresher");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `refresher` with `args`, which must succeed and print one JSON value on stdout.
pub fn refresher_json(args: &[&str]) -> serde_json::Value {
    let (ok, stdout, stderr) = run_refresher(args);
    assert!(ok, "refresher {args:?} failed: {stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {stdout}"))
}

/// `refresher generate` into `dir` (seed 5, 2,000 log lines): the corpus and log paths.
pub fn generated_site(dir: &std::path::Path, pages: u32, weeks: u32) -> (String, String) {
    let (_, corpus, log) = generate_with(dir, pages, weeks, 5, &[]);
    (corpus, log)
}

/// `refresher generate` into `dir` (2,000 log lines) with `seed` and `extra` flags: the
/// generator's truth JSON, the corpus and the log paths.
pub fn generate_with(
    dir: &std::path::Path,
    pages: u32,
    weeks: u32,
    seed: u32,
    extra: &[&str],
) -> (serde_json::Value, String, String) {
    let (pages, weeks, seed) = (pages.to_string(), weeks.to_string(), seed.to_string());
    let mut args = vec![
        "generate",
        "--out",
        dir.to_str().unwrap(),
        "--pages",
        &pages,
        "--weeks",
        &weeks,
        "--queries",
        "2000",
        "--seed",
        &seed,
        "--json",
    ];
    args.extend(extra);
    let out = refresher_json(&args);
    let path = |p: &str| dir.join(p).to_str().unwrap().to_string();
    (
        out["truth"].clone(),
        path("corpus"),
        path("querylog/aol-synthetic.txt"),
    )
}
