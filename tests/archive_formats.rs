//! What real archives hold, read as warcio reads it: ARC files, damaged WARC files, `resource`
//! records holding pages, and crawl artefacts (robots.txt, sitemaps, feeds) that are not pages.
//!
//! The fixtures are tiny hand-made files written by `tests/fixtures/make_archive_fixtures.py`
//! (by hand, not by warcio). The expectations below are what warcio 1.7's `ArchiveIterator`
//! reads from them (record count, types, URLs, statuses); the suite itself does not need
//! Python.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use refresher::corpus::ingest::{load_corpus, IngestOptions, IngestReport};
use refresher::corpus::{Corpus, LiveWeb};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn load(path: &Path) -> (Corpus, IngestReport) {
    load_corpus(path, &IngestOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn urls(corpus: &Corpus) -> Vec<&str> {
    (0..corpus.page_count() as u32)
        .map(|p| corpus.url(p))
        .collect()
}

/// warcio: 5 records (filedesc, 3 http responses, 1 dns), `http://old.test/a page.html` whole.
#[test]
fn arc_v1_files_are_read_as_captures() {
    let (corpus, report) = load(&fixture("tiny.arc.gz"));
    assert_eq!(report.records, 5);
    assert_eq!(
        urls(&corpus),
        vec!["http://old.test/", "http://old.test/a page.html"]
    );
    assert_eq!(report.artefacts.get("robots"), Some(&1));
    assert_eq!(report.other_by_type.get("filedesc"), Some(&1));
    assert_eq!(report.other_by_type.get("dns (arc)"), Some(&1));
    let home = corpus.page_at(0, 0).present().unwrap();
    assert_eq!(home.title, "Old home");
    assert_eq!(home.capture_time, 1_173_693_601); // 2007-03-12T10:00:01Z
                                                  // The link with %20 reaches the page whose ARC URL holds a space.
    assert_eq!(home.links, vec![1]);
    assert!(report.skipped.is_empty() && report.damaged.is_empty());
}

#[test]
fn arc_and_warc_files_mix_in_one_directory_told_apart_by_content() {
    let dir = tempfile::tempdir().unwrap();
    // Names say nothing: the format is read from the first bytes after gunzip.
    std::fs::copy(fixture("tiny.arc.gz"), dir.path().join("a.warc.gz")).unwrap();
    std::fs::copy(fixture("wget_like.warc"), dir.path().join("b.arc")).unwrap();
    let (corpus, report) = load(dir.path());
    assert_eq!(report.files, 2);
    assert_eq!(corpus.page_count(), 2 + 3);
    assert_eq!(report.artefacts.get("robots"), Some(&2));
}

/// warcio: 9 records (warcinfo, 5 responses, 3 resources).
#[test]
fn robots_sitemaps_and_feeds_are_counted_not_indexed() {
    let (corpus, report) = load(&fixture("wget_like.warc"));
    assert_eq!(report.records, 9);
    assert_eq!(
        urls(&corpus),
        vec![
            "http://site.test/",
            "http://site.test/feed.html",
            "http://site.test/saved.html"
        ]
    );
    let artefacts: Vec<(&str, u64)> = report
        .artefacts
        .iter()
        .map(|(k, v)| (k.as_str(), *v))
        .collect();
    assert_eq!(artefacts, vec![("feed", 1), ("robots", 1), ("sitemap", 1)]);
    // wget's log and manifest stay resources, the saved page is a capture.
    assert_eq!(report.other_by_type.get("resource"), Some(&2));
    assert_eq!(report.resource_pages, 1);
    assert_eq!(report.responses_ok, 3);
    let saved = corpus.page_id("http://site.test/saved.html").unwrap();
    assert_eq!(
        corpus.page_at(saved, 0).present().unwrap().text,
        "saved without http headers"
    );
}

#[test]
fn ingest_prints_and_reports_artefacts() {
    let run = |json: bool| {
        let mut cmd = Command::new(common::refresher_bin());
        cmd.args(["ingest", "--corpus"])
            .arg(fixture("wget_like.warc"));
        if json {
            cmd.arg("--json");
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let text = run(false);
    assert!(
        text.contains("crawl artefacts, not pages: 1 feed, 1 robots, 1 sitemap"),
        "{text}"
    );
    assert!(text.contains("pages total            3"), "{text}");
    let json: serde_json::Value = serde_json::from_str(&run(true)).unwrap();
    assert_eq!(json["pages_total"], 3);
    assert_eq!(json["ingest"]["artefacts"]["sitemap"], 1);
    assert_eq!(json["ingest"]["resource_pages"], 1);
}

/// warcio reads all 3 records of both files (it does not mind the missing CRLF CRLF, and
/// stops with `ArchiveLoadFailed` at the garbage).
#[test]
fn damaged_files_keep_their_intact_records_and_say_where_they_broke() {
    let (corpus, report) = load(&fixture("damaged_tail.warc"));
    assert_eq!(
        urls(&corpus),
        vec!["http://cut.test/a", "http://cut.test/b"]
    );
    assert_eq!(report.damaged.len(), 1);
    let damage = report.damaged[0].to_string();
    assert!(
        damage.contains("damaged_tail.warc: record 3")
            && damage.contains("CRLF CRLF")
            && damage.contains("at byte 973"),
        "{damage}"
    );

    let (corpus, report) = load(&fixture("damaged_garbage.warc.gz"));
    assert_eq!(corpus.page_count(), 2);
    assert_eq!(report.records, 3);
    let damage = report.damaged[0].to_string();
    assert!(
        damage.contains("damaged_garbage.warc.gz: record 4") && damage.contains("gzip"),
        "{damage}"
    );
}

/// warcio reads the version block and the first page, then stops with `ArchiveLoadFailed`
/// ("Unknown archive format") at the broken header line; every intact record is read here,
/// and the damage is reported with the file, the record and the offsets.
#[test]
fn a_damaged_arc_file_keeps_its_intact_records_after_the_damage() {
    let (corpus, report) = load(&fixture("damaged_middle.arc"));
    assert_eq!(
        urls(&corpus),
        vec!["http://old.test/a", "http://old.test/c"]
    );
    assert_eq!(report.damaged.len(), 1);
    let damage = report.damaged[0].to_string();
    assert!(
        damage.contains("damaged_middle.arc: record 3")
            && damage.contains("expected 5")
            && damage.contains("starts at byte 334")
            && damage.contains("reading resumes at the next record, found at byte 523"),
        "{damage}"
    );
}

/// A `refresher crawl` WARC output carries `WARC-Refresher-Unit`: its units are kept even
/// when they are seconds long (dates would merge them into one weekly unit).
#[test]
fn a_crawls_warc_output_keeps_its_units() {
    use refresher::fetch::http::warc_out::{Exchange, WarcOut};
    let dir = tempfile::tempdir().unwrap();
    let mut out = WarcOut::new(dir.path()).unwrap();
    let t0 = 1_700_000_000;
    let headers = [("Content-Type".to_string(), "text/html".to_string())];
    for unit in 0..4u32 {
        let body = format!("<p>version {}</p>", unit / 2);
        let exchange = Exchange {
            url: "http://crawl.test/a",
            time: t0 + 12 * i64::from(unit),
            request_headers: &[],
            status: 200,
            reason: "OK",
            response_headers: &headers,
            body: body.as_bytes(),
        };
        out.exchange(unit, &exchange, None).unwrap();
    }
    out.flush().unwrap();
    let (corpus, report) = load(dir.path());
    assert_eq!(report.crawl_unit_collections, 1);
    assert_eq!(corpus.units(), 4);
    let units: Vec<u32> = corpus.timeline(0).versions.iter().map(|v| v.unit).collect();
    assert_eq!(units, vec![0, 2]);
    // A file set where one capture lacks the header falls back to dates.
    let plain = tempfile::tempdir().unwrap();
    std::fs::copy(
        WarcOut::path_of(dir.path(), 0),
        plain.path().join("crawl.warc.gz"),
    )
    .unwrap();
    std::fs::copy(
        fixture("damaged_tail.warc"),
        plain.path().join("other.warc"),
    )
    .unwrap();
    let (_, report) = load(plain.path());
    assert_eq!(report.crawl_unit_collections, 0);
}
