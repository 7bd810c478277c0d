//! Broken logs: each problem is either a counted skip or an error, and every message names the
//! file and the line (or tar member) where it was found.

use std::io::Write;
use std::path::{Path, PathBuf};

use flate2::write::GzEncoder;
use refresher::error::InputError;
use refresher::querylog::layouts::{read_log, ReadOptions, MAX_SKIP_EXAMPLES};
use refresher::querylog::LogLayout;

fn write(dir: &Path, name: &str, content: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap();
    path
}

fn gzip(content: &[u8]) -> Vec<u8> {
    let mut enc = GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(content).unwrap();
    enc.finish().unwrap()
}

fn tar_of(members: &[(&str, &[u8])]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (name, content) in members {
        let mut h = tar::Header::new_ustar();
        h.set_size(content.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        b.append_data(&mut h, name, *content).unwrap();
    }
    b.into_inner().unwrap()
}

/// The skip messages (with every share of bad lines allowed: these files are mostly bad).
fn messages(path: &Path) -> Vec<String> {
    let lenient = ReadOptions {
        max_skipped_share: 1.0,
        ..ReadOptions::default()
    };
    let log = read_log(path, &lenient).unwrap();
    log.skipped.iter().map(|s| s.to_string()).collect()
}

#[test]
fn wrong_field_counts_are_skipped_by_line() {
    let dir = tempfile::tempdir().unwrap();
    let aol = write(
        dir.path(),
        "aol.txt",
        b"AnonID\tQuery\tQueryTime\tItemRank\tClickURL\n\
1\tq\t2006-03-01 00:00:01\n\
1\tq\t2006-03-01 00:00:09\t1\n\
2\tr\t2006-03-01 00:00:02\t1\thttp://a\textra\n",
    );
    let p = aol.display();
    assert_eq!(
        messages(&aol),
        vec![
            format!("{p}: line 3: expected 3 or 5 tab-separated fields (AnonID, Query, QueryTime[, ItemRank, ClickURL]), found 4"),
            format!("{p}: line 4: expected 3 or 5 tab-separated fields (AnonID, Query, QueryTime[, ItemRank, ClickURL]), found 6"),
        ]
    );
    let excite = write(
        dir.path(),
        "excite.log",
        b"A\t970916105432\tq\nA\t970916105433\nB\t970916105434\tr\tx\nC\t970916105435\ts\n",
    );
    let p = excite.display();
    assert_eq!(
        messages(&excite),
        vec![
            format!("{p}: line 2: expected 3 tab-separated fields (user id, YYMMDDhhmmss, query), found 2"),
            format!("{p}: line 3: expected 3 tab-separated fields (user id, YYMMDDhhmmss, query), found 4"),
        ]
    );
}

#[test]
fn bad_times_are_skipped_by_line() {
    let dir = tempfile::tempdir().unwrap();
    let aol = write(
        dir.path(),
        "aol.txt",
        b"1\tq\t2006-03-01 00:00:01\n1\tr\t2006-02-30 00:00:01\n1\ts\t2006-03-01 25:00:00\n1\tt\t2006-03-01 00:00:02\n",
    );
    let p = aol.display();
    assert_eq!(
        messages(&aol),
        vec![
            format!(
                "{p}: line 2: bad QueryTime `2006-02-30 00:00:01`: expected YYYY-MM-DD hh:mm:ss"
            ),
            format!(
                "{p}: line 3: bad QueryTime `2006-03-01 25:00:00`: expected YYYY-MM-DD hh:mm:ss"
            ),
        ]
    );
    let excite = write(
        dir.path(),
        "excite.log",
        b"A\t970916105432\tq\nB\t9709161054\tr\nC\t970916105435\ts\n",
    );
    assert_eq!(
        messages(&excite),
        vec![format!(
            "{}: line 2: bad time `9709161054`: expected 12 digits YYMMDDhhmmss",
            excite.display()
        )]
    );
}

#[test]
fn non_utf8_bytes_are_decoded_lossily_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "excite.log",
        b"A\t970916105432\tm\xfcnchen hotel\nB\t970916105433\tok\n",
    );
    let log = read_log(&path, &ReadOptions::default()).unwrap();
    assert_eq!(log.non_utf8_lines, 1);
    assert!(log.skipped.is_empty());
    assert_eq!(log.submissions[0].query, "m\u{fffd}nchen hotel");
}

#[test]
fn truncated_gzip_is_an_error_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut content = Vec::new();
    for i in 0..50_000 {
        content.extend_from_slice(format!("U{i}\t970916105432\tquery number {i}\n").as_bytes());
    }
    let gz = gzip(&content);
    let path = write(dir.path(), "excite.log.gz", &gz[..gz.len() / 2]);
    let err = read_log(&path, &ReadOptions::default()).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, InputError::Malformed { .. }), "{msg}");
    assert!(
        msg.starts_with(&format!("{}: line ", path.display())),
        "{msg}"
    );
    assert!(
        msg.ends_with("input ends early (truncated gzip stream?)"),
        "{msg}"
    );
    // The line named is past what was read whole, well into the file.
    let line: u64 = msg
        .split("line ")
        .nth(1)
        .unwrap()
        .split(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(line > 1000 && line <= 50_000, "{msg}");
}

#[test]
fn empty_files_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let empty = write(dir.path(), "empty.log", b"");
    let err = read_log(&empty, &ReadOptions::default()).unwrap_err();
    assert!(matches!(err, InputError::Empty { .. }));
    assert_eq!(
        err.to_string(),
        format!(
            "{}: the log is empty (0 bytes after decompression)",
            empty.display()
        )
    );
    let empty_gz = write(dir.path(), "empty.log.gz", &gzip(b""));
    assert!(matches!(
        read_log(&empty_gz, &ReadOptions::default()),
        Err(InputError::Empty { .. })
    ));
    let all_bad = write(
        dir.path(),
        "bad.log",
        b"1\tq\t2006-13-01 00:00:01\n2\tr\t2006-13-01 00:00:01\n",
    );
    // Bad times do not vote for the AOL layout in detection, so it is forced here.
    let forced = ReadOptions {
        layout: Some(LogLayout::Aol),
        keep_repeats: false,
        ..ReadOptions::default()
    };
    let err = read_log(&all_bad, &forced).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}: no usable query in 2 lines as layout Aol (2 skipped; first skip: line 1: bad \
             QueryTime `2006-13-01 00:00:01`: expected YYYY-MM-DD hh:mm:ss)",
            all_bad.display()
        )
    );
}

#[test]
fn tar_members_with_bad_lines_or_names_are_skipped_by_member() {
    let dir = tempfile::tempdir().unwrap();
    let data = tar_of(&[
        (
            "user_search_logs/10.txt",
            b"ebay\t2006-03-01 00:00:00\nhttp://ebay/\n\nmaps\t2006-03-32 00:00:00\nhttp://maps/\n\n",
        ),
        ("user_search_logs/notes.md", b"hello\n"),
        ("user_search_logs/12.txt", b"msn\t2006-03-02 00:00:00\nhttp://msn/\n\n"),
    ]);
    let path = write(dir.path(), "users.tar.gz", &gzip(&data));
    let p = path.display();
    assert_eq!(
        messages(&path),
        vec![
            format!("{p}: member user_search_logs/10.txt: line 4: bad record time `2006-03-32 00:00:00`: expected YYYY-MM-DD hh:mm:ss"),
            format!("{p}: member user_search_logs/notes.md: not a per-user history: expected a file named <AnonID>.txt"),
        ]
    );
    let log = read_log(&path, &ReadOptions::default()).unwrap();
    assert_eq!(log.submissions.len(), 2);
    assert_eq!(log.users(), 2);
}

#[test]
fn broken_tar_is_an_error_naming_the_member() {
    let dir = tempfile::tempdir().unwrap();
    let first: &[u8] = b"ebay\t2006-03-01 00:00:00\nhttp://ebay/\n\n";
    let second = "msn\t2006-03-02 00:00:00\nhttp://msn/\n\n".repeat(100);
    let data = tar_of(&[
        ("user_search_logs/10.txt", first),
        ("user_search_logs/12.txt", second.as_bytes()),
    ]);
    // Cut inside the second member's content.
    let cut = write(dir.path(), "cut.tar", &data[..1024 + 512 + 700]);
    let msg = read_log(&cut, &ReadOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        msg.starts_with(&format!(
            "{}: member user_search_logs/12.txt: line ",
            cut.display()
        )),
        "{msg}"
    );
    assert!(
        msg.ends_with("the archive ends inside this member (700 of 3700 bytes; truncated?)"),
        "{msg}"
    );
    // A corrupted header checksum for the second member.
    let mut bad = data.clone();
    bad[1024 + 148..1024 + 156].copy_from_slice(b"0000000\0");
    let bad_path = write(dir.path(), "bad.tar", &bad);
    let msg = read_log(&bad_path, &ReadOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        msg.starts_with(&format!(
            "{}: tar member 2 (after user_search_logs/10.txt): broken tar header",
            bad_path.display()
        )),
        "{msg}"
    );
}

/// Amplification (issue 13): a small gzip of millions of malformed lines used to keep a
/// ~340-byte report per line and exit 0. Skips are now counted, a few kept, and a log that is
/// mostly bad is refused.
#[test]
fn millions_of_bad_lines_are_counted_not_kept_and_refused() {
    let dir = tempfile::tempdir().unwrap();
    let lines = 2_000_000;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(b"1\temacs\t2006-03-01 00:00:01\n").unwrap();
    for _ in 0..lines {
        enc.write_all(b"1\tq\n").unwrap();
    }
    let path = write(dir.path(), "bomb.txt.gz", &enc.finish().unwrap());
    assert!(std::fs::metadata(&path).unwrap().len() < 20_000);
    let aol = ReadOptions {
        layout: Some(LogLayout::Aol),
        ..ReadOptions::default()
    };
    let err = read_log(&path, &aol).unwrap_err().to_string();
    assert!(
        err.contains("bomb.txt.gz: whole file: 2000000 of 2000001 lines"),
        "{err}"
    );
    assert!(err.contains("first skip: line 2"), "{err}");
    let lenient = ReadOptions {
        max_skipped_share: 1.0,
        ..aol
    };
    let log = read_log(&path, &lenient).unwrap();
    assert_eq!(log.skipped_lines, lines);
    assert_eq!(log.skipped.len(), MAX_SKIP_EXAMPLES);
    assert_eq!(log.submissions.len(), 1);
}

/// A one-line "query" of megabytes is skipped, naming its line.
#[test]
fn a_huge_line_is_skipped_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = b"emacs\nlisp\n".to_vec();
    bytes.extend(std::iter::repeat_n(b'a', 4 << 20));
    bytes.extend_from_slice(b"\nmacro\n");
    let path = write(dir.path(), "long.txt", &bytes);
    let log = read_log(&path, &ReadOptions::default()).unwrap();
    assert_eq!(log.submissions.len(), 3);
    assert_eq!(log.skipped_lines, 1);
    let msg = log.skipped[0].to_string();
    assert!(
        msg.contains("long.txt: line 3: line longer than 65536 bytes"),
        "{msg}"
    );
}
