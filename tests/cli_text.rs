//! The readable (non-JSON) output of the CLI: labels whole, errors on the flag the user wrote.

mod common;

use common::run_refresher as refresher;
use common::strip_seconds;

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
    let compare = |more: &[&str]| {
        let mut args = vec![
            "compare",
            "--corpus",
            corpus,
            "--log",
            log,
            "--policies",
            "user-centric,round-robin",
            "--budgets",
            "0,4,60",
        ];
        args.extend_from_slice(more);
        refresher(&args)
    };
    let (ok, out, err) = compare(&["--metrics", "all"]);
    assert!(ok, "{err}");
    // The finding first, in one sentence naming the policy that needs least and the ratios.
    let found = out
        .lines()
        .find(|l| l.starts_with("Found (oracle mode, parameters fixed before the run): to recover 90 % of the quality lost to staleness, "))
        .unwrap_or_else(|| panic!("no finding in:\n{out}"));
    assert!(
        found.contains(" refreshes per unit (") && found.contains("% of the pages; 95 % interval "),
        "{found}"
    );
    assert!(
        found.contains("round-robin") || found.contains("user-centric"),
        "{found}"
    );
    // The default mode is the oracle, and the output says it is a bound.
    assert!(
        out.lines()
            .any(|l| l.starts_with("oracle mode knows the future")),
        "{out}"
    );
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
            // Columns in characters: labels may hold non-ASCII (`MAP@10 τ=0`).
            l[..gap + l[gap..].find(|c| c != ' ').unwrap()]
                .chars()
                .count()
        })
        .collect();
    assert!(starts.windows(2).all(|w| w[0] == w[1]), "{out}");

    // The first screen (no --metrics): the site and workload, then per mode the finding and
    // one table of budgets per share of the staleness gap with their intervals; the grid,
    // envelope and per-budget tables only on request.
    let (ok, first, err) = compare(&["--mode", "oracle,online"]);
    assert!(ok, "{err}");
    let lines: Vec<&str> = first.lines().collect();
    assert!(lines.len() <= 50, "{} lines:\n{first}", lines.len());
    assert!(
        lines[0].starts_with("site: ") && lines[1].starts_with("workload: "),
        "{first}"
    );
    for mode in ["oracle", "online"] {
        let found = format!("Found ({mode} mode, parameters fixed before the run)");
        assert!(lines.iter().any(|l| l.starts_with(&found)), "{first}");
    }
    let header = lines
        .iter()
        .find(|l| l.starts_with("policy "))
        .unwrap_or_else(|| panic!("no table in:\n{first}"));
    assert!(
        header.contains("50 % gap") && header.contains("99 % gap"),
        "{header}"
    );
    let uc = lines
        .iter()
        .find(|l| l.starts_with("user-centric "))
        .unwrap();
    assert!(uc.contains('(') && uc.contains('–'), "no interval in {uc}");
    assert!(!first.contains("user-centric quality"), "{first}");
    assert!(!first.contains("hindsight envelope"), "{first}");

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

/// Merge-conflict markers once reached README.md and ARCHITECTURE.md unnoticed (the build
/// does not read them): no text file of the project may hold one.
#[test]
fn no_merge_conflict_markers_in_the_sources_or_docs() {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if path.is_dir() {
                if !matches!(name.as_str(), "target" | "vendor" | "node_modules") {
                    walk(&path, out);
                }
            } else if [".rs", ".md", ".js", ".html", ".css", ".toml"]
                .iter()
                .any(|ext| name.ends_with(ext))
            {
                out.push(path);
            }
        }
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    for dir in [
        "src",
        "tests",
        "benches",
        "web",
        "corpora",
        "querylogs",
        ".ci",
    ] {
        if root.join(dir).is_dir() {
            walk(&root.join(dir), &mut files);
        }
    }
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        for (i, line) in text.lines().enumerate() {
            if line.starts_with("<<<<<<< ") || line.starts_with(">>>>>>> ") {
                found.push(format!("{}:{}", file.display(), i + 1));
            }
        }
    }
    assert!(files.len() > 50, "{} files scanned", files.len());
    assert!(found.is_empty(), "conflict markers at {found:?}");
}

/// `--help` carries no rustdoc markup, is grouped, and shows the defaults the code uses.
#[test]
fn help_is_grouped_plain_and_states_the_defaults_the_code_uses() {
    for command in [
        "simulate",
        "compare",
        "serve",
        "crawl",
        "estimate-check",
        "demo",
    ] {
        let (ok, out, err) = refresher(&[command, "--help"]);
        assert!(ok, "{command}: {err}");
        for markup in ["[`", "`]", "super::"] {
            assert!(
                !out.contains(markup),
                "{command} --help shows rustdoc markup `{markup}`:\n{out}"
            );
        }
    }
    for command in ["simulate", "compare"] {
        let (_, out, _) = refresher(&[command, "--help"]);
        for heading in [
            "Input:",
            "Workload:",
            "Quality model:",
            "Policy:",
            "Budget:",
            "Output:",
        ] {
            assert!(
                out.lines().any(|l| l == heading),
                "{command} --help has no `{heading}` group:\n{out}"
            );
        }
    }
    let (_, out, _) = refresher(&["compare", "--help"]);
    assert!(
        out.lines().any(|l| l == "Workers:"),
        "compare --help has no `Workers:` group:\n{out}"
    );
    let default = refresher::policy::registry::DEFAULT_COMPARISON.join(", ");
    assert!(
        out.replace('\n', " ")
            .contains(&format!("[default: {default}]")),
        "compare --help does not list the default comparison {default}:\n{out}"
    );
    // `refresher policies` describes user-centric by its defaults (its estimator is a
    // `--param`, so `--help` leaves it to that list).
    let (_, out, _) = refresher(&["policies"]);
    let user_centric = out.split("\nsbr").next().unwrap();
    assert!(
        user_centric.contains("planned online, whittle"),
        "{user_centric}"
    );
}

#[test]
fn version_names_the_commit_it_was_built_from() {
    let (ok, out, err) = refresher(&["--version"]);
    assert!(ok, "{err}");
    let line = out.trim();
    let expected = format!("refresher {} (", env!("CARGO_PKG_VERSION"));
    assert!(line.starts_with(&expected) && line.ends_with(')'), "{line}");
    let commit = &line[expected.len()..line.len() - 1];
    assert!(
        commit == "unknown commit" || commit.chars().all(|c| c.is_ascii_hexdigit()),
        "{commit}"
    );
}

/// One spelling per concept: `serve` names its policy `--policy`/`--param` as `simulate` and
/// `crawl` do; the former `--refresh`/`--refresh-param` still parse.
#[test]
fn serve_names_its_policy_as_the_other_commands_do() {
    let (_, help, _) = refresher(&["serve", "--help"]);
    assert!(
        help.contains("--policy <REFRESH>") || help.contains("--policy <"),
        "{help}"
    );
    assert!(help.contains("--param <KEY=VALUE>"), "{help}");
    // The old spelling parses (clap accepts it, so the error is about the missing corpus,
    // not an unknown flag).
    for old in [["--refresh", "sbr"], ["--refresh-param", "theta=0.1"]] {
        let (ok, _, err) = refresher(&["serve", old[0], old[1]]);
        assert!(!ok);
        assert!(!err.contains("unexpected argument"), "{old:?}: {err}");
    }
}

/// The README's list of policies is the registry's: every family `refresher policies` prints is
/// named there, and nothing else is named as a policy.
#[test]
fn the_readme_lists_every_policy_family() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let start = readme
        .find("**Policies**: ")
        .expect("README names its policies");
    let end = start + readme[start..].find("`refresher policies` lists").unwrap();
    let listed: std::collections::BTreeSet<&str> = readme[start..end]
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|name| !name.contains(' '))
        .collect();
    let (ok, out, err) = refresher(&["policies", "--json"]);
    assert!(ok, "{err}");
    let families: serde_json::Value = serde_json::from_str(&out).unwrap();
    let names: std::collections::BTreeSet<&str> = families
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        listed, names,
        "README's policy list against `refresher policies`"
    );
}

/// `--signals` reaches a simulation: the run reports the spec in full and, online, the trust its
/// policy learned; a spec that does not parse is refused naming `--signals` and the setting.
#[test]
fn simulate_reads_change_signals_and_reports_them() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().to_str().unwrap();
    let (ok, _, err) = refresher(&[
        "generate",
        "--out",
        site,
        "--pages",
        "80",
        "--weeks",
        "5",
        "--queries",
        "800",
        "--seed",
        "5",
    ]);
    assert!(ok, "{err}");
    let corpus = dir.path().join("corpus");
    let log = dir.path().join("querylog/aol-synthetic.txt");
    let (corpus, log) = (corpus.to_str().unwrap(), log.to_str().unwrap());
    let simulate = |signals: &[&str]| {
        let mut args = vec![
            "simulate", "--corpus", corpus, "--log", log, "--policy", "ebr", "--budget", "8",
            "--mode", "online", "--json",
        ];
        for s in signals {
            args.extend(["--signals", s]);
        }
        refresher(&args)
    };
    let (ok, out, err) = simulate(&["lastmod", "feed:items=5"]);
    assert!(ok, "{err}");
    let run: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        run["signals"],
        serde_json::json!([
            "lastmod:coverage=1,recall=1,false-positive=0,delay=0",
            "feed:items=5,delay=0"
        ])
    );
    let trust = &run["params"]["signal_trust"];
    assert!(trust.as_object().is_some_and(|t| !t.is_empty()), "{run}");
    let (ok, out, err) = simulate(&[]);
    assert!(ok, "{err}");
    let run: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(run["signals"], serde_json::json!(["none"]));
    let (ok, _, err) = simulate(&["lastmod:recall=1.5"]);
    assert!(!ok);
    assert!(
        err.contains("--signals") && err.contains("recall=1.5"),
        "{err}"
    );
}

/// One spelling per concept (issue 50): `--theta`, `--uc-estimator`, `--uc-window` (for
/// `--param theta=`, `estimator=`, `window=`) and `compare --thetas` (for `--sweep theta=`)
/// still give the same run, each printing one note naming the spelling to write; given beside
/// the current spelling with another value, the two are refused by name.
#[test]
fn former_spellings_give_the_same_runs_and_note_the_current_one() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, log) = common::generated_site(dir.path(), 60, 4);
    let run = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--corpus", &corpus, "--log", &log, "--json"]);
        let (ok, out, err) = refresher(&all);
        assert!(ok, "{args:?}: {err}");
        let mut value: serde_json::Value = serde_json::from_str(&out).unwrap();
        // Wall times differ between any two runs.
        strip_seconds(&mut value);
        (value, err)
    };
    let pairs: [(&[&str], &[&str], &[&str]); 3] = [
        (
            &[
                "simulate", "--policy", "sbr", "--budget", "6", "--theta", "0.3",
            ],
            &[
                "simulate",
                "--policy",
                "sbr",
                "--budget",
                "6",
                "--param",
                "theta=0.3",
            ],
            &["note: --theta is kept as an alias; write --param theta=0.3"],
        ),
        (
            &[
                "simulate",
                "--policy",
                "user-centric",
                "--budget",
                "6",
                "--mode",
                "online",
                "--uc-estimator",
                "pooled",
                "--uc-window",
                "2",
            ],
            &[
                "simulate",
                "--policy",
                "user-centric",
                "--budget",
                "6",
                "--mode",
                "online",
                "--param",
                "estimator=pooled",
                "--param",
                "window=2",
            ],
            &[
                "note: --uc-estimator is kept as an alias; write --param estimator=pooled",
                "note: --uc-window is kept as an alias; write --param window=2",
            ],
        ),
        (
            &[
                "compare",
                "--policies",
                "sbr,user-centric",
                "--budgets",
                "3,12",
                "--thetas",
                "0.2,0.6",
                "--uc-estimator",
                "change-gain",
            ],
            &[
                "compare",
                "--policies",
                "sbr,user-centric",
                "--budgets",
                "3,12",
                "--sweep",
                "theta=0.2,0.6",
                "--param",
                "estimator=change-gain",
            ],
            &[
                "note: --uc-estimator is kept as an alias; write --param estimator=change-gain",
                "note: --thetas is kept as an alias; write --sweep theta=0.2,0.6",
            ],
        ),
    ];
    for (former, current, notes) in pairs {
        let (former_run, former_err) = run(former);
        let (current_run, current_err) = run(current);
        assert_eq!(former_run, current_run, "{former:?} against {current:?}");
        for note in notes {
            assert_eq!(
                former_err.lines().filter(|l| l == note).count(),
                1,
                "{former:?}: no `{note}` in:\n{former_err}"
            );
        }
        assert!(!current_err.contains("note:"), "{current:?}: {current_err}");
    }

    for (args, message) in [
        (
            vec![
                "simulate",
                "--policy",
                "sbr",
                "--budget",
                "6",
                "--theta",
                "0.3",
                "--param",
                "theta=0.5",
            ],
            "--param theta=0.5 and --theta 0.3 disagree",
        ),
        (
            vec![
                "compare",
                "--policies",
                "user-centric",
                "--uc-estimator",
                "pooled",
                "--param",
                "estimator=whittle",
            ],
            "--param estimator=whittle and --uc-estimator pooled disagree",
        ),
        (
            vec![
                "compare",
                "--policies",
                "sbr",
                "--thetas",
                "0.2,0.6",
                "--sweep",
                "theta=0.2,0.5",
            ],
            "--sweep theta=0.2,0.5 and --thetas 0.2,0.6 disagree",
        ),
    ] {
        let mut all = args.clone();
        all.extend(["--corpus", &corpus, "--log", &log]);
        let (ok, _, err) = refresher(&all);
        assert!(!ok, "{args:?} was accepted");
        assert!(err.contains(message), "{args:?}: {err}");
    }
    // Both spellings with one value are one setting, not a conflict.
    let (agreeing, _) = run(&[
        "simulate",
        "--policy",
        "sbr",
        "--budget",
        "6",
        "--theta",
        "0.3",
        "--param",
        "theta=0.30",
    ]);
    assert_eq!(agreeing, run(pairs[0].1).0);

    // gp4c train: the settings' former names disagreeing with the current ones are refused
    // before any input is read (the trained function's sameness is in tests/gp4c_cli.rs).
    for (args, message) in [
        (
            ["--resources", "0.1", "--budget-share", "0.2"],
            "--budget-share 0.2 and --resources 0.1 disagree",
        ),
        (
            ["--warmup", "1", "--warmup-units", "2"],
            "--warmup-units 2 and --warmup 1 disagree",
        ),
    ] {
        let mut all = vec![
            "gp4c",
            "train",
            "--changes-file",
            "/nonexistent",
            "--out",
            "/nonexistent/f",
        ];
        all.extend(args);
        let (ok, _, err) = refresher(&all);
        assert!(!ok, "{args:?} was accepted");
        assert!(err.contains(message), "{args:?}: {err}");
    }
    let (_, _, err) = refresher(&[
        "gp4c",
        "train",
        "--changes-file",
        "/nonexistent",
        "--out",
        "/nonexistent/f",
        "--resources",
        "0.1",
        "--warmup",
        "1",
    ]);
    for note in [
        "note: --resources is kept as an alias; write --budget-share 0.1",
        "note: --warmup is kept as an alias; write --warmup-units 1",
    ] {
        assert!(err.lines().any(|l| l == note), "no `{note}` in:\n{err}");
    }
}

/// The README's command table has one row per command, and each has its reference page in
/// `docs/cli/` (which `the_cli_reference_pages_match_the_code` holds to the code); the
/// defaults the README states are those the reference gives.
#[test]
fn the_readme_lists_every_command_and_states_true_defaults() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let listed: std::collections::BTreeSet<String> = readme
        .lines()
        .filter_map(|l| l.strip_prefix("| `refresher "))
        .filter_map(|l| l.split('`').next())
        .map(|c| c.replace(' ', "-"))
        .collect();
    let pages: std::collections::BTreeSet<String> = std::fs::read_dir(root.join("docs/cli"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|f| f.strip_suffix(".md").map(str::to_string))
        .filter(|f| f != "README")
        .collect();
    assert_eq!(listed, pages, "README's commands against docs/cli/");
    let reference = |command: &str| {
        std::fs::read_to_string(root.join(format!("docs/cli/{command}.md"))).unwrap()
    };
    // Each (command, flag, default) the README states in prose.
    for (command, flag, default, said) in [
        ("simulate", "--unit-days", "7", "a week by default"),
        (
            "simulate",
            "--max-skipped-share",
            "0.5",
            "`--max-skipped-share` (default 0.5)",
        ),
        ("serve", "--unit-seconds", "10", "every\n10 s"),
        ("compare", "--metrics", "summary", "`--metrics summary`"),
    ] {
        let page = reference(command);
        let section = page
            .split("\n### ")
            .find(|s| s.starts_with(&format!("`{flag}")))
            .unwrap_or_else(|| panic!("docs/cli/{command}.md has no {flag}"));
        assert!(
            section.contains(&format!("Default: `{default}`")),
            "{command} {flag}: the README says {default}:\n{section}"
        );
        assert!(readme.contains(said), "README no longer says {said:?}");
    }
}
