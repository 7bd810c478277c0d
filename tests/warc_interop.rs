//! WARC files from other writers: warcio (the reference Python library) stores HTTP payloads
//! as the server sent them (chunked, gzip, deflate, br), pairs responses with request records,
//! adds metadata/resource records and writes unchanged re-captures as `revisit` records.
//!
//! `tests/fixtures/warcio_mixed.warc.gz` was written by warcio with
//! `tests/fixtures/make_warcio_fixture.py`; the last test re-runs that script, so the committed
//! file and the script agree. It needs Python with warcio and brotli (`.ci/run` installs them):
//! a failure under CI without them, a printed skip elsewhere.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use refresher::corpus::ingest::{load_corpus, IngestOptions, IngestReport};
use refresher::corpus::{Corpus, LiveWeb, PageState};

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/warcio_mixed.warc.gz")
}

fn load(path: &Path) -> (Corpus, IngestReport) {
    load_corpus(path, &IngestOptions::default()).expect("loads")
}

fn check_warcio_file(path: &Path) {
    let (corpus, report) = load(path);
    assert!(report.skipped.is_empty(), "{:?}", report.skipped);
    // Every response is read: 6 pages in week 0, the changed home page in week 1.
    assert_eq!(report.responses_ok, 7);
    assert_eq!(report.revisits, 2);
    assert_eq!(report.other_records, 10);
    let by_type: Vec<(&str, u64)> = report
        .other_by_type
        .iter()
        .map(|(t, n)| (t.as_str(), *n))
        .collect();
    assert_eq!(
        by_type,
        vec![
            ("metadata", 1),
            ("request", 7),
            ("resource", 1),
            ("warcinfo", 1)
        ]
    );
    let decoded: Vec<(&str, u64)> = report
        .decoded
        .iter()
        .map(|(t, n)| (t.as_str(), *n))
        .collect();
    assert_eq!(
        decoded,
        vec![("br", 1), ("chunked", 2), ("deflate", 1), ("gzip", 2)]
    );
    assert_eq!(corpus.page_count(), 6);
    assert_eq!(corpus.units(), 2);
    for (url, title, word) in [
        ("http://wiki.test/Chunked", "Chunked", "windows"),
        ("http://wiki.test/Gzip", "Gzip", "buffers"),
        ("http://wiki.test/Both", "Both", "frames"),
        ("http://wiki.test/Deflate", "Deflate", "keybindings"),
        ("http://wiki.test/Brotli", "Brotli", "brotli"),
    ] {
        let id = corpus
            .page_id(url)
            .unwrap_or_else(|| panic!("{url} missing"));
        let v = corpus.page_at(id, 0).present().expect("present at unit 0");
        assert_eq!(v.title, title, "{url}");
        assert!(v.text.contains(word), "{url}: {}", v.text);
        assert!(!v.links.is_empty(), "{url}: the link to Home was extracted");
        // Still one version: the revisits of Gzip and Chunked are unchanged re-captures.
        assert_eq!(corpus.timeline(id).versions.len(), 1, "{url}");
        assert!(matches!(corpus.page_at(id, 1), PageState::Present(_)));
    }
    let home = corpus.page_id("http://wiki.test/Home").unwrap();
    assert_eq!(corpus.timeline(home).versions.len(), 2);
    assert!(corpus
        .page_at(home, 1)
        .present()
        .unwrap()
        .text
        .contains("edited"));
    assert_eq!(report.unchanged, 2, "the two revisits repeat their page");
    assert_eq!(report.records_per_unit, vec![6, 3]);
}

#[test]
fn warcio_file_with_chunked_compressed_payloads_and_revisits_ingests_every_response() {
    check_warcio_file(&fixture());
}

#[test]
fn ingest_summary_counts_revisits_skipped_types_and_decodings() {
    let out = Command::new(common::refresher_bin())
        .args(["ingest", "--json", "--corpus"])
        .arg(fixture())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ingest = &json["ingest"];
    assert_eq!(ingest["revisits"], 2);
    assert_eq!(ingest["other_by_type"]["request"], 7);
    assert_eq!(ingest["decoded"]["chunked"], 2);
    let out = Command::new(common::refresher_bin())
        .args(["ingest", "--corpus"])
        .arg(fixture())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("2 revisit record(s)"), "{text}");
    assert!(
        text.contains("1 metadata, 7 request, 1 resource, 1 warcinfo"),
        "{text}"
    );
}

fn record(kind: &str, url: &str, date: &str, extra: &str, block: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "WARC/1.0\r\nWARC-Type: {kind}\r\nWARC-Record-ID: <urn:uuid:{url}{date}>\r\n\
         WARC-Date: {date}\r\nWARC-Target-URI: {url}\r\n{extra}\
         Content-Type: application/http; msgtype=response\r\nContent-Length: {}\r\n\r\n",
        block.len()
    )
    .into_bytes();
    out.extend_from_slice(block);
    out.extend_from_slice(b"\r\n\r\n");
    out
}

#[test]
fn revisits_resolve_by_digest_across_urls_and_unresolvable_ones_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let body = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<title>Mirror</title><p>same</p>";
    let head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n";
    let bytes = [
        record(
            "response",
            "http://a.test/x",
            "2013-01-06T00:00:00Z",
            "WARC-Payload-Digest: sha1:AAAA\r\n",
            body.as_bytes(),
        ),
        // Another URL with the same payload (deduplicated by the crawler), a week later.
        record(
            "revisit",
            "http://a.test/mirror",
            "2013-01-13T00:00:00Z",
            "WARC-Payload-Digest: sha1:AAAA\r\nWARC-Profile: \
             http://netpreserve.org/warc/1.0/revisit/identical-payload-digest\r\n",
            head,
        ),
        // Server-not-modified revisit of x.
        record(
            "revisit",
            "http://a.test/x",
            "2013-01-20T00:00:00Z",
            "WARC-Profile: http://netpreserve.org/warc/1.0/revisit/server-not-modified\r\n",
            b"HTTP/1.1 304 Not Modified\r\n\r\n",
        ),
        // A revisit whose payload was never read.
        record(
            "revisit",
            "http://a.test/lost",
            "2013-01-20T00:00:00Z",
            "WARC-Payload-Digest: sha1:ZZZZ\r\n",
            head,
        ),
    ]
    .concat();
    let path = dir.path().join("dedup.warc");
    std::fs::File::create(&path)
        .unwrap()
        .write_all(&bytes)
        .unwrap();
    let (corpus, report) = load(&path);
    assert_eq!(report.revisits, 2);
    assert_eq!(report.responses_ok, 1);
    let mirror = corpus.page_id("http://a.test/mirror").unwrap();
    assert!(matches!(
        corpus.page_at(mirror, 0),
        PageState::NotYetCreated
    ));
    assert_eq!(corpus.page_at(mirror, 1).present().unwrap().title, "Mirror");
    let x = corpus.page_id("http://a.test/x").unwrap();
    assert_eq!(
        corpus.timeline(x).versions.len(),
        1,
        "304 revisit is unchanged"
    );
    assert_eq!(report.skipped.len(), 1);
    let skip = report.skipped[0].to_string();
    assert!(
        skip.contains("record 4") && skip.contains("http://a.test/lost"),
        "{skip}"
    );
    assert!(skip.contains("sha1:ZZZZ") && !skip.contains("  "), "{skip}");
    assert!(corpus.page_id("http://a.test/lost").is_none());
}

#[test]
fn fixture_script_still_writes_an_equivalent_file() {
    if !common::python3_with(
        &["warcio", "brotli"],
        "pip install warcio brotli, as .ci/run does",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fresh.warc.gz");
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/make_warcio_fixture.py");
    let status = Command::new("python3")
        .arg(script)
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    check_warcio_file(&out);
}
