//! A short run of `scripts/crash_test.sh` (the long one is run by hand, with `--trials 100`):
//! `serve --index` killed with SIGKILL at random moments of its index build restarts serving
//! what a clean build serves, never an empty or partial index. The delays are seeded, and at
//! least one kill must land mid-build.

mod common;

use std::process::Command;

#[test]
fn serve_index_survives_kill_9_during_its_build() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    let status = Command::new(common::refresher_bin())
        .args([
            "generate",
            "--pages",
            // Large enough that the build lasts far longer than the script's polling latency
            // (300 pages built in ~0.1 s, and on a loaded CI machine no kill of four landed
            // inside it).
            "3000",
            "--weeks",
            "2",
            "--queries",
            "500",
            "--out",
        ])
        .arg(&site)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/crash_test.sh");
    let out = Command::new("bash")
        .arg(script)
        .arg("--corpus")
        .arg(site.join("corpus"))
        .args(["--trials", "4", "--seed", "1", "--bin"])
        .arg(common::refresher_bin())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("4 trials"), "{stdout}");
    assert!(stdout.contains(", 0 failures"), "{stdout}");
    // A kill that lands before the build starts or after it ends tests nothing: at least one
    // must have interrupted the build itself (left its temporary directory behind).
    let mid_build: usize = stdout
        .split_once(" killed mid-build")
        .and_then(|(before, _)| before.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no mid-build count in {stdout}"));
    assert!(mid_build >= 1, "no kill landed mid-build: {stdout}");
}
