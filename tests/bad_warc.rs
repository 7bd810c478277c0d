//! Bad WARC input: every case ends in a precise error, a reported damage or a counted skip
//! naming the file and the record, never in a panic or a silently wrong count. A file whose
//! framing breaks after intact records keeps those records and reports where it broke (file,
//! record, byte offset); one with no intact page before the damage is an error.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};

use flate2::write::GzEncoder;
use flate2::Compression;
use refresher::corpus::ingest::{load_corpus, IngestOptions, IngestReport};
use refresher::corpus::{Corpus, LiveWeb};
use refresher::error::InputError;

const DATE: &str = "2013-01-06T00:00:00Z";

fn warcinfo() -> Vec<u8> {
    let body = b"software: test\r\n";
    let mut out = format!(
        "WARC/1.1\r\nWARC-Type: warcinfo\r\nWARC-Record-ID: <urn:uuid:0>\r\n\
         WARC-Date: {DATE}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    out.extend_from_slice(b"\r\n\r\n");
    out
}

/// A response record whose WARC Content-Length is the block length plus `length_error`.
fn response_with(url: &str, date: &str, block: &[u8], length_error: i64) -> Vec<u8> {
    let len = block.len() as i64 + length_error;
    let mut out = format!(
        "WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:{url}>\r\n\
         WARC-Date: {date}\r\nWARC-Target-URI: {url}\r\n\
         Content-Type: application/http; msgtype=response\r\nContent-Length: {len}\r\n\r\n"
    )
    .into_bytes();
    out.extend_from_slice(block);
    out.extend_from_slice(b"\r\n\r\n");
    out
}

fn http(status: &str, body: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}

fn page(url: &str, text: &str) -> Vec<u8> {
    let body = format!("<html><head><title>{text}</title></head><body><p>{text}</p></body></html>");
    response_with(url, DATE, &http("200 OK", body.as_bytes()), 0)
}

fn gzip_members(records: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for r in records {
        let mut enc = GzEncoder::new(Vec::new(), Compression::default());
        enc.write_all(r).unwrap();
        out.extend(enc.finish().unwrap());
    }
    out
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn load(path: &Path) -> Result<(Corpus, IngestReport), InputError> {
    load_corpus(path, &IngestOptions::default())
}

/// Asserts the file loads with its `pages` intact pages and reports one damage at `record`
/// naming the file, a byte offset and `what`.
fn assert_damaged(path: &Path, record: u64, what: &str, pages: usize) {
    let (corpus, report) = match load(path) {
        Ok(loaded) => loaded,
        Err(e) => panic!("{} did not load: {e}", path.display()),
    };
    assert_eq!(corpus.page_count(), pages);
    assert_eq!(report.damaged.len(), 1, "{:?}", report.damaged);
    let damage = &report.damaged[0];
    assert_eq!(damage.path, path);
    assert_eq!(damage.location, format!("record {record}"));
    let text = damage.to_string();
    assert!(text.contains(what), "`{what}` not in: {text}");
    assert!(
        text.contains("starts at byte") || text.contains("at byte"),
        "{text}"
    );
}

/// Asserts loading fails naming the file, `record N` and `what`: no intact page came before
/// the damage.
fn assert_fails(path: &Path, record: u64, what: &str) {
    let text = match load(path) {
        Ok(_) => panic!("{} loaded, expected an error", path.display()),
        Err(e) => e.to_string(),
    };
    let name = path.file_name().unwrap().to_string_lossy();
    assert!(text.contains(name.as_ref()), "{text}");
    assert!(text.contains(&format!("record {record}")), "{text}");
    assert!(text.contains(what), "`{what}` not in: {text}");
}

/// Asserts a `Malformed` error at `record` whose message names the file and contains `what`.
fn assert_malformed(path: &Path, record: u64, what: &str) {
    let err = match load(path) {
        Ok(_) => panic!("{} loaded, expected an error", path.display()),
        Err(e) => e,
    };
    let text = err.to_string();
    match &err {
        InputError::Malformed { location, .. } => {
            assert_eq!(location, &format!("record {record}"), "{text}")
        }
        other => panic!("expected Malformed, got {other:?}"),
    }
    let name = path.file_name().unwrap().to_string_lossy();
    assert!(text.contains(name.as_ref()), "{text}");
    assert!(text.contains(what), "`{what}` not in: {text}");
}

fn three_pages() -> Vec<Vec<u8>> {
    vec![
        warcinfo(),
        page("http://s.org/a", "alpha"),
        page("http://s.org/b", "beta"),
    ]
}

#[test]
fn good_gzip_and_plain_files_load_and_gzip_is_detected_by_magic() {
    let dir = tempfile::tempdir().unwrap();
    // Gzip content under a plain `.warc` name still reads: detection is by magic bytes.
    let gz = write(dir.path(), "disguised.warc", &gzip_members(&three_pages()));
    let (corpus, report) = load(&gz).unwrap();
    assert_eq!(corpus.page_count(), 2);
    assert_eq!((report.records, report.other_records), (3, 1));
    let plain = write(dir.path(), "plain.warc", &three_pages().concat());
    let (corpus, _) = load(&plain).unwrap();
    assert_eq!(corpus.page_at(1, 0).present().unwrap().title, "beta");
}

#[test]
fn truncated_gzip_is_an_error_at_the_record() {
    let dir = tempfile::tempdir().unwrap();
    let full = gzip_members(&[
        warcinfo(),
        page("http://s.org/a", "alpha"),
        page("http://s.org/b", &"beta ".repeat(200)),
    ]);
    let first_two = gzip_members(&[warcinfo(), page("http://s.org/a", "alpha")]).len();
    // Cut inside the third member.
    let cut = &full[..first_two + (full.len() - first_two) / 2];
    let path = write(dir.path(), "cut.warc.gz", cut);
    assert_damaged(&path, 3, "gzip", 1);
}

#[test]
fn corrupt_gzip_bytes_are_an_error_at_the_record() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = gzip_members(&three_pages());
    // Garbage appended after the last member is not a gzip header.
    bytes.extend_from_slice(b"this is not gzip");
    let path = write(dir.path(), "garbage.warc.gz", &bytes);
    assert_damaged(&path, 4, "gzip", 2);
}

#[test]
fn broken_warc_header_is_an_error_at_the_record() {
    let dir = tempfile::tempdir().unwrap();
    let broken = b"WARC/1.1\r\nthis line is not a header\r\nContent-Length: 3\r\n\r\nabc\r\n\r\n";
    let records = vec![
        warcinfo(),
        page("http://s.org/a", "alpha"),
        broken.to_vec(),
        page("http://s.org/b", "beta"),
    ];
    let path = write(dir.path(), "broken.warc", &records.concat());
    // Only the broken record is lost: reading resumes at the next `WARC/1.` line.
    assert_damaged(&path, 3, "reading resumes at the next record", 2);
    let gz = write(dir.path(), "broken.warc.gz", &gzip_members(&records));
    assert_damaged(&gz, 3, "broken WARC header", 2);
    // Broken first record: what follows is still read.
    let first = write(
        dir.path(),
        "first.warc",
        &[broken.to_vec(), page("http://s.org/a", "alpha")].concat(),
    );
    assert_damaged(&first, 1, "broken WARC header", 1);
    // Nothing intact at all: an error naming the file and the record.
    let only = write(dir.path(), "only.warc", broken);
    assert_malformed(&only, 1, "broken WARC header");
}

#[test]
fn wrong_content_length_is_an_error_at_the_record() {
    let dir = tempfile::tempdir().unwrap();
    let block = http("200 OK", b"<p>body of the page</p>");
    // Too long, the block swallows the start of the next record (lost with it); too short,
    // the next record is found again.
    for (name, error, next_found) in [("long.warc", 7, false), ("short.warc", -5, true)] {
        let records = vec![
            warcinfo(),
            response_with("http://s.org/a", DATE, &block, error),
            page("http://s.org/b", "beta"),
        ];
        for (file, bytes) in [
            (name.to_string(), records.concat()),
            (format!("{name}.gz"), gzip_members(&records)),
        ] {
            let path = write(dir.path(), &file, &bytes);
            if next_found {
                assert_damaged(&path, 2, "Content-Length", 1);
            } else {
                assert_fails(&path, 2, "Content-Length");
            }
        }
        // After an intact page, the page is kept and the damage reported.
        let mut after_a_page = records.clone();
        after_a_page.insert(1, page("http://s.org/c", "gamma"));
        let path = write(dir.path(), &format!("kept-{name}"), &after_a_page.concat());
        assert_damaged(&path, 3, "Content-Length", 1 + usize::from(next_found));
    }
    // Too long in the last record: the file ends inside the body.
    let records = [
        warcinfo(),
        response_with("http://s.org/a", DATE, &block, 50),
    ];
    let path = write(dir.path(), "last_long.warc", &records.concat());
    assert_fails(&path, 2, "Content-Length");
}

#[test]
fn file_ending_inside_a_warc_header_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = three_pages().concat();
    bytes.extend_from_slice(b"WARC/1.1\r\nWARC-Type: response\r\nWARC-Date: 2013");
    let path = write(dir.path(), "tail.warc", &bytes);
    assert_damaged(&path, 4, "ends inside a WARC header", 2);
}

/// A response record whose WARC header says `Content-Length: {length}` (any text).
fn response_claiming(url: &str, length: &str, block: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "WARC/1.1\r\nWARC-Type: response\r\nWARC-Date: {DATE}\r\nWARC-Target-URI: {url}\r\n\
         Content-Length: {length}\r\n\r\n"
    )
    .into_bytes();
    out.extend_from_slice(block);
    out.extend_from_slice(b"\r\n\r\n");
    out
}

/// Regression (fuzz finding, issue 13): a Content-Length near 2^64 made the `warc` crate's
/// `expected_body_len + 4` overflow and panic `ingest` and `serve`.
#[test]
fn content_length_near_2_pow_64_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let block = http("200 OK", b"<p>x</p>");
    for (i, length) in [
        "18446744073709551615",
        "18446744073709551612",
        "99999999999999999999999",
        "9223372036854775808",
    ]
    .into_iter()
    .enumerate()
    {
        let records = vec![
            warcinfo(),
            page("http://s.org/a", "alpha"),
            response_claiming("http://s.org/b", length, &block),
        ];
        let path = write(dir.path(), &format!("huge{i}.warc"), &records.concat());
        assert_damaged(&path, 3, "Content-Length", 1);
        let gz = write(
            dir.path(),
            &format!("huge{i}.warc.gz"),
            &gzip_members(&records),
        );
        assert_damaged(&gz, 3, "Content-Length", 1);
    }
}

#[test]
fn content_length_beyond_the_remaining_bytes_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let block = http("200 OK", b"<p>x</p>");
    // 100 MB claimed in a file of a few hundred bytes: refused before reading.
    let records = vec![
        warcinfo(),
        response_claiming("http://s.org/b", "100000000", &block),
    ];
    let path = write(dir.path(), "beyond.warc", &records.concat());
    assert_fails(&path, 2, "remain");
    // Compressed: the remaining size is unknown, the file simply ends inside the body.
    let gz = write(dir.path(), "beyond.warc.gz", &gzip_members(&records));
    assert_fails(&gz, 2, "Content-Length");
    // Above the maximum record size, whatever the file holds.
    let over = (refresher::corpus::warc_reader::MAX_RECORD_BYTES + 1).to_string();
    let records = vec![
        warcinfo(),
        response_claiming("http://s.org/b", &over, &block),
    ];
    let gz = write(dir.path(), "over.warc.gz", &gzip_members(&records));
    assert_fails(&gz, 2, "maximum record size");
}

/// A `.warc.gz` whose header never ends (one endless line, or endless header lines) is
/// refused after [`MAX_HEADER_BYTES`], without buffering the whole stream.
#[test]
fn a_header_that_never_ends_is_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let mut endless_line = b"WARC/1.1\r\nWARC-Type: response\r\nX-Pad: ".to_vec();
    endless_line.resize(8 << 20, b'a');
    let mut endless_lines = b"WARC/1.1\r\n".to_vec();
    while endless_lines.len() < 8 << 20 {
        endless_lines.extend_from_slice(b"X-Pad: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n");
    }
    for (name, tail) in [("line", endless_line), ("lines", endless_lines)] {
        let records = vec![warcinfo(), page("http://s.org/a", "alpha"), tail];
        let gz = write(
            dir.path(),
            &format!("endless-{name}.warc.gz"),
            &gzip_members(&records),
        );
        assert_damaged(&gz, 3, "WARC header longer than", 1);
    }
}

#[test]
fn non_utf8_body_is_decoded_lossily_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let latin1 = http("200 OK", b"<title>caf\xe9</title><p>na\xefve caf\xe9</p>");
    let records = vec![
        warcinfo(),
        page("http://s.org/a", "alpha"),
        response_with("http://s.org/latin", DATE, &latin1, 0),
    ];
    let path = write(dir.path(), "latin1.warc.gz", &gzip_members(&records));
    let (corpus, report) = load(&path).unwrap();
    assert_eq!(report.lossy_utf8.len(), 1);
    let at = report.lossy_utf8[0].to_string();
    assert!(
        at.contains("latin1.warc.gz") && at.contains("record 3"),
        "{at}"
    );
    let id = corpus.page_id("http://s.org/latin").unwrap();
    let v = corpus.page_at(id, 0).present().unwrap();
    assert_eq!(v.title, "caf\u{FFFD}");
    assert_eq!(v.text, "na\u{FFFD}ve caf\u{FFFD}");
    assert!(report.skipped.is_empty());
}

#[test]
fn bad_http_blocks_and_dates_are_counted_skips() {
    let dir = tempfile::tempdir().unwrap();
    let records = vec![
        warcinfo(),
        page("http://s.org/a", "alpha"),
        response_with("http://s.org/x", DATE, b"not an http response", 0),
        response_with(
            "http://s.org/y",
            "last tuesday",
            &http("200 OK", b"<p>y</p>"),
            0,
        ),
        response_with("http://s.org/z", DATE, &http("301 Moved", b""), 0),
        page("http://s.org/b", "beta"),
    ];
    let path = write(dir.path(), "skips.warc.gz", &gzip_members(&records));
    let (corpus, report) = load(&path).unwrap();
    assert_eq!(corpus.page_count(), 2);
    assert_eq!(report.records, 6);
    assert_eq!(report.responses_ok, 2);
    let skipped: Vec<String> = report.skipped.iter().map(|s| s.to_string()).collect();
    assert_eq!(skipped.len(), 3, "{skipped:?}");
    assert!(
        skipped[0].contains("skips.warc.gz: record 3: HTTP block"),
        "{}",
        skipped[0]
    );
    assert!(
        skipped[1].contains("record 4") && skipped[1].contains("RFC 3339"),
        "{}",
        skipped[1]
    );
    assert!(
        skipped[2].contains("record 5") && skipped[2].contains("301"),
        "{}",
        skipped[2]
    );
}

#[test]
fn empty_inputs_are_empty_errors() {
    let dir = tempfile::tempdir().unwrap();
    let empty = write(dir.path(), "empty.warc.gz", b"");
    match load(&empty) {
        Err(InputError::Empty { path, message }) => {
            assert_eq!(path, empty);
            assert!(message.contains("0 bytes"), "{message}");
        }
        other => panic!("expected Empty, got {:?}", other.map(|_| ())),
    }
    // Only a warcinfo record: no response to build a corpus from.
    let info_only = write(dir.path(), "info.warc", &warcinfo());
    match load(&info_only) {
        Err(InputError::Empty { message, .. }) => {
            assert!(message.contains("no usable response records"), "{message}")
        }
        other => panic!("expected Empty, got {:?}", other.map(|_| ())),
    }
    let no_warcs = tempfile::tempdir().unwrap();
    write(no_warcs.path(), "notes.txt", b"hello");
    match load(no_warcs.path()) {
        Err(InputError::Empty { path, message }) => {
            assert_eq!(path, no_warcs.path());
            assert!(message.contains("no *.warc, *.warc.gz"), "{message}");
        }
        other => panic!("expected Empty, got {:?}", other.map(|_| ())),
    }
    match load(&dir.path().join("missing.warc")) {
        Err(InputError::Io { path, .. }) => assert!(path.ends_with("missing.warc")),
        other => panic!("expected Io, got {:?}", other.map(|_| ())),
    }
}

#[test]
fn directory_reads_warc_files_in_name_order() {
    let dir = tempfile::tempdir().unwrap();
    // Same URL and week in both files: the later file's capture (read later) wins.
    let later = "2013-01-06T00:00:00Z";
    let v1 = response_with("http://s.org/a", later, &http("200 OK", b"<p>one</p>"), 0);
    let v2 = response_with("http://s.org/a", later, &http("200 OK", b"<p>two</p>"), 0);
    write(dir.path(), "b.warc", &[warcinfo(), v2].concat());
    write(dir.path(), "a.warc.gz", &gzip_members(&[warcinfo(), v1]));
    write(dir.path(), "ignored.txt", b"not a warc");
    let (corpus, report) = load(dir.path()).unwrap();
    assert_eq!(report.files, 2);
    assert_eq!(report.superseded, 1);
    assert_eq!(corpus.page_at(0, 0).present().unwrap().text, "two");
}

#[test]
fn cli_reports_bad_input_without_panicking() {
    let dir = tempfile::tempdir().unwrap();
    let full = gzip_members(&three_pages());
    // Damaged after an intact page: read, with a warning naming file, record and offset.
    let path = write(dir.path(), "cut.warc.gz", &full[..full.len() - 10]);
    let out = std::process::Command::new(common::refresher_bin())
        .args(["ingest", "--corpus"])
        .arg(&path)
        .output()
        .expect("run refresher");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("warning: damaged archive file:")
            && stderr.contains("cut.warc.gz: record 3")
            && stderr.contains("byte"),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("damaged files          1"), "{stdout}");
    // Damaged before any page: an error naming the file and the record.
    let path = write(dir.path(), "cut-early.warc.gz", &full[..30]);
    let out = std::process::Command::new(common::refresher_bin())
        .args(["ingest", "--corpus"])
        .arg(&path)
        .output()
        .expect("run refresher");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("cut-early.warc.gz: record 1"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    // A missing log: a clear error naming it, once.
    let good = write(dir.path(), "good.warc", &three_pages().concat());
    let out = std::process::Command::new(common::refresher_bin())
        .args(["ingest", "--corpus"])
        .arg(&good)
        .args(["--log", "no-such-queries.txt"])
        .output()
        .expect("run refresher");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("no-such-queries.txt"), "{stderr}");
    assert_eq!(stderr.matches("No such file").count(), 1, "{stderr}");
}
