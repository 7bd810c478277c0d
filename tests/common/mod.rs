//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// Whether the tests run under CI (`CI` set, as `.ci/run` does): there every real data set
/// and tool a test needs must be present, and a missing one fails the test.
pub fn under_ci() -> bool {
    std::env::var_os("CI").is_some()
}

/// The one place a test gives up for want of data or a tool: under CI ([`under_ci`]) it
/// panics naming what is missing and how CI provides it; elsewhere it prints `SKIPPED: why`
/// so the skip shows in the test's output. A caller returns early after it.
pub fn missing(why: &str) {
    if under_ci() {
        panic!("required under CI, but missing: {why}");
    }
    eprintln!("SKIPPED: {why}");
}

/// Root of the shared real data: `$REFRESHER_SHARED_DATA` when set (a worktree checked out
/// away from `shared/`), else `../shared/data` beside the checkout.
pub fn shared_data_root() -> PathBuf {
    match std::env::var_os("REFRESHER_SHARED_DATA") {
        Some(root) => PathBuf::from(root),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data"),
    }
}

/// Path of a file or folder under the shared real data ([`shared_data_root`]).
///
/// Returns `None` (after printing why) when it is missing on a developer machine, so the test
/// can return early; panics when it is missing under CI (`CI` set), where the data must be
/// present, or when `$REFRESHER_SHARED_DATA` names a root that lacks it.
pub fn shared_data(relative: &str) -> Option<PathBuf> {
    let path = shared_data_root().join(relative);
    if path.exists() {
        return Some(path);
    }
    if std::env::var_os("REFRESHER_SHARED_DATA").is_some() {
        panic!("{} missing (REFRESHER_SHARED_DATA is set)", path.display());
    }
    missing(&format!(
        "shared real data not found at {} (CI must have ../shared beside the checkout)",
        path.display()
    ));
    None
}

/// Whether `python3` runs and imports every module of `modules`; when not, [`missing`] says
/// so, naming `install` (what provides them), and this returns `false`.
pub fn python3_with(modules: &[&str], install: &str) -> bool {
    let imports = format!("import {}", modules.join(", "));
    let ok = std::process::Command::new("python3")
        .args(["-c", &imports])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        missing(&format!("python3 that can `{imports}` ({install})"));
    }
    ok
}

/// Whether every file of `tools` exists; when not, [`missing`] says so, naming `install`, and
/// this returns `false`.
pub fn tools_present(tools: &[&str], install: &str) -> bool {
    let absent: Vec<&str> = tools
        .iter()
        .copied()
        .filter(|t| !std::path::Path::new(t).exists())
        .collect();
    if !absent.is_empty() {
        missing(&format!("{} ({install})", absent.join(" and ")));
    }
    absent.is_empty()
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

#[path = "../../benches/common/json.rs"]
mod json;
#[allow(unused_imports)]
pub use json::strip_seconds;
