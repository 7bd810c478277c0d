//! Every CSV the program writes reads back with standard parsers — the `csv` crate's reader
//! (strict: every row has the header's field count) and Python's `csv` module (required under
//! CI; skipped with a printed reason elsewhere when there is no python3) — including URLs
//! holding commas and quotes.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

const WEEK: i64 = 7 * 24 * 3600;
const URLS: [&str; 8] = [
    "http://w.test/wiki/Yen-Chin,Lee",
    "http://w.test/wiki/Say_\"hi\",again",
    "http://w.test/wiki/Alpha",
    "http://w.test/wiki/Beta",
    "http://w.test/wiki/Gamma",
    "http://w.test/wiki/Delta",
    "http://w.test/wiki/Epsilon",
    "http://w.test/wiki/Zeta",
];
const WORDS: [&str; 8] = [
    "emacs", "buffer", "window", "lisp", "frame", "mode", "keymap", "macro",
];

fn response(url: &str, time: i64, body: &str) -> Vec<u8> {
    let date = chrono::DateTime::from_timestamp(time, 0)
        .unwrap()
        .format("%Y-%m-%dT%H:%M:%SZ");
    let block = format!("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n{body}");
    let mut out = format!(
        "WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:{time}{url}>\r\n\
         WARC-Date: {date}\r\nWARC-Target-URI: {url}\r\n\
         Content-Type: application/http; msgtype=response\r\nContent-Length: {}\r\n\r\n",
        block.len()
    )
    .into_bytes();
    out.extend_from_slice(block.as_bytes());
    out.extend_from_slice(b"\r\n\r\n");
    out
}

/// Eight pages over six weeks; most pages change most weeks; queries on their words.
fn inputs(dir: &Path) -> (PathBuf, PathBuf) {
    let t0 = 1_357_430_400; // 2013-01-06
    let mut warc = Vec::new();
    for week in 0..6i64 {
        for (i, url) in URLS.iter().enumerate() {
            let version = if (i as i64 + week) % 3 == 0 { 0 } else { week };
            let words: Vec<&str> = (0..12)
                .map(|k| WORDS[(i * 3 + k * (version as usize + 1)) % WORDS.len()])
                .collect();
            let links: String = URLS
                .iter()
                .filter(|u| *u != url)
                .take(2 + i % 3)
                .map(|u| format!("<a href='{}'>l</a>", u.replace('\'', "%27")))
                .collect();
            let body = format!(
                "<html><head><title>Page {i}</title></head><body><p>{}</p>{links}</body></html>",
                words.join(" ")
            );
            warc.extend(response(url, t0 + week * WEEK + i as i64, &body));
        }
    }
    let corpus = dir.join("site.warc");
    std::fs::write(&corpus, warc).unwrap();
    let mut log = String::new();
    for (k, w) in WORDS.iter().enumerate() {
        log.push_str(&format!("{w}\t{}\n", 20 - k));
        log.push_str(&format!(
            "{w} {}\t{}\n",
            WORDS[(k + 1) % WORDS.len()],
            5 + k
        ));
    }
    let log_path = dir.join("queries.txt");
    std::fs::write(&log_path, log).unwrap();
    (corpus, log_path)
}

fn run(args: &[&str]) {
    let out = Command::new(common::refresher_bin())
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "refresher {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn csv_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            csv_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "csv") {
            found.push(path);
        }
    }
}

#[test]
fn every_csv_the_program_writes_reads_with_standard_parsers() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, log) = inputs(dir.path());
    let (corpus, log) = (corpus.to_str().unwrap(), log.to_str().unwrap());
    let out = dir.path().join("out");
    let o = |name: &str| out.join(name).to_str().unwrap().to_string();
    let common = ["--corpus", corpus, "--log", log, "--filter", "none"];
    let with = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = vec![extra[0].to_string()];
        v.extend(common.iter().map(|s| s.to_string()));
        v.extend(extra[1..].iter().map(|s| s.to_string()));
        v
    };
    let args = with(&[
        "simulate",
        "--policy",
        "round-robin",
        "--budget",
        "3",
        "--out",
        &o("simulate"),
    ]);
    run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let args = with(&[
        "compare",
        "--policies",
        "user-centric,age",
        "--param",
        "window=2",
        "--budgets",
        "0,2,4",
        "--out",
        &o("compare"),
    ]);
    run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let args = with(&["estimate-check", "--pairs", "20", "--out", &o("estimate")]);
    run(&args.iter().map(String::as_str).collect::<Vec<_>>());

    let mut files = Vec::new();
    csv_files(&out, &mut files);
    files.sort();
    let names: Vec<String> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for expected in [
        "round-robin-oracle-B3.csv",
        "round-robin-oracle-B3.refreshed.csv",
        "fig4_table.csv",
        "curves.csv",
        "runs.csv",
        "pairs.csv",
        "forecast.csv",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} not in {names:?}"
        );
    }
    let mut fields_seen: Vec<String> = Vec::new();
    for file in &files {
        let mut reader = csv::ReaderBuilder::new()
            .flexible(false)
            .from_path(file)
            .unwrap();
        let width = reader.headers().unwrap().len();
        let mut rows = 0;
        for record in reader.records() {
            let record = record.unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            assert_eq!(record.len(), width, "{}", file.display());
            fields_seen.extend(record.iter().map(str::to_string));
            rows += 1;
        }
        assert!(rows > 0, "{} has no rows", file.display());
    }
    for url in &URLS[..2] {
        assert!(
            fields_seen.iter().any(|f| f == url),
            "{url} not read back as one field"
        );
    }

    // Python's csv module: required under CI, skipped with a printed reason elsewhere.
    if !common::python3_with(&["csv"], "the machine's python3, which .ci/run expects") {
        return;
    }
    let script = r#"
import csv, sys
for path in sys.argv[1:]:
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f, strict=True))
    assert len(rows) > 1, path
    widths = {len(r) for r in rows}
    assert len(widths) == 1, (path, widths)
    print(path, len(rows) - 1, "rows")
"#;
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(&files)
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "python csv: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // One line per file read, with its data row count.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.lines().count(), files.len(), "{stdout}");
}
