//! The readable (non-JSON) output of the CLI: labels whole, errors on the flag the user wrote.

mod common;

use common::run_refresher as refresher;

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

#[test]
fn escape_sequences_from_inputs_never_reach_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().to_str().unwrap();
    let (ok, _, err) = refresher(&[
        "generate",
        "--out",
        site,
        "--pages",
        "40",
        "--weeks",
        "2",
        "--queries",
        "200",
    ]);
    assert!(ok, "{err}");
    let corpus = dir.path().join("corpus");
    // A log whose bad lines carry a clear-screen, a title change and a C1 control.
    let log = dir.path().join("hostile.txt");
    let mut text = String::from("AnonID\tQuery\tQueryTime\n");
    for i in 0..5 {
        text.push_str(&format!("{i}\twiki page\t2006-03-01 00:00:0{i}\n"));
    }
    text.push_str("1\t\u{1b}[2J\u{1b}]0;owned\u{7}\tnot-a-time\u{9b}1m\n");
    std::fs::write(&log, text).unwrap();
    let (ok, out, err) = refresher(&[
        "ingest",
        "--corpus",
        corpus.to_str().unwrap(),
        "--log",
        log.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    assert!(
        out.contains("\\u{9b}1m"),
        "the skipped line is shown, escaped: {out}"
    );
    for text in [&out, &err] {
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}') && !text.contains('\u{9b}'),
            "{text:?}"
        );
    }
    // Errors quoting a hostile file name are escaped too.
    let missing = dir.path().join("no\u{1b}[31mfile.warc");
    let (ok, _, err) = refresher(&["ingest", "--corpus", missing.to_str().unwrap()]);
    assert!(!ok);
    assert!(err.contains("no\\u{1b}[31mfile.warc"), "{err}");
    assert!(!err.contains('\u{1b}'), "{err:?}");
}
