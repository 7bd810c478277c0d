//! Records the commit the binary is built from, for `refresher --version`.

use std::process::Command;

fn main() {
    let commit = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown commit".to_string());
    println!("cargo:rustc-env=REFRESHER_COMMIT={commit}");
    // Rebuilt when HEAD moves: another branch (HEAD) or a new commit on it (the branch's ref,
    // loose or packed). A checkout without git (a source archive) says "unknown commit".
    println!("cargo:rerun-if-changed=build.rs");
    let git_path = |name: &str| {
        Command::new("git")
            .args(["rev-parse", "--git-path", name])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .map(|s| s.trim().to_string())
    };
    let branch = Command::new("git")
        .args(["symbolic-ref", "-q", "HEAD"])
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty());
    let watched = ["HEAD".to_string(), "packed-refs".to_string()]
        .into_iter()
        .chain(branch);
    for name in watched {
        if let Some(path) = git_path(&name).filter(|p| std::path::Path::new(p).exists()) {
            println!("cargo:rerun-if-changed={path}");
        }
    }
}
