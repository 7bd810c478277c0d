//! The readable (non-JSON) output of the CLI: labels whole, errors on the flag the user wrote.

mod common;

use std::process::Command;

fn refresher(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(common::refresher_bin())
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn compare_table_keeps_whole_labels_and_theta_errors_name_theta() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().to_str().unwrap();
    let (ok, _, err) = refresher(&[
        "generate",
        "--out",
        site,
        "--pages",
        "60",
        "--weeks",
        "4",
        "--queries",
        "800",
        "--seed",
        "3",
    ]);
    assert!(ok, "{err}");
    let corpus = dir.path().join("corpus");
    let log = dir.path().join("querylog/aol-synthetic.txt");
    let (corpus, log) = (corpus.to_str().unwrap(), log.to_str().unwrap());
    let (ok, out, err) = refresher(&[
        "compare",
        "--corpus",
        corpus,
        "--log",
        log,
        "--policies",
        "user-centric,round-robin",
        "--budgets",
        "0,4",
    ]);
    assert!(ok, "{err}");
    for label in [
        "user-centric quality",
        "user-centric fresh@10",
        "user-centric MAP@10",
        "round-robin quality",
        "round-robin fresh@10",
        "round-robin MAP@10",
    ] {
        assert!(
            out.lines().any(|l| l.starts_with(&format!("{label} "))),
            "`{label}` not a whole row label in:\n{out}"
        );
    }
    // Columns line up: every row of the curve table has the same label width.
    let starts: Vec<usize> = out
        .lines()
        .filter(|l| l.starts_with("user-centric ") || l.starts_with("round-robin "))
        .filter(|l| l.contains("quality") || l.contains("@10"))
        .map(|l| {
            let gap = l.find("  ").unwrap();
            gap + l[gap..].find(|c| c != ' ').unwrap()
        })
        .collect();
    assert!(starts.windows(2).all(|w| w[0] == w[1]), "{out}");

    for (flags, expected) in [
        (
            vec![
                "simulate", "--policy", "sbr", "--budget", "2", "--theta", "1.5",
            ],
            "--theta: policy `sbr` parameter `theta` = 1.5: outside [0, 1]",
        ),
        (
            vec!["compare", "--policies", "sbr", "--thetas", "1.5"],
            "--thetas: 1.5 is outside [0, 1]",
        ),
    ] {
        let mut args = flags.clone();
        args.extend(["--corpus", corpus, "--log", log]);
        let (ok, _, err) = refresher(&args);
        assert!(!ok);
        assert!(err.contains(expected), "{flags:?}: {err}");
        assert!(!err.contains("--policy:"), "{flags:?}: {err}");
    }
}
