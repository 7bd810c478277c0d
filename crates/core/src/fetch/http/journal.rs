//! The crawl's journal: what every fetch, discovery and reading of the change signals of a unit
//! brought back (with the sitemap and feed requests it made), committed with
//! the unit (`journal/unit-UUUUU.jsonl`, written beside and renamed into place). A restarted
//! crawl replays its committed units from the journal through the same parsing, policy and
//! index code — the same decisions, the same vocabulary, the same repository — and goes on
//! live from the first unit not committed. `kill -9` loses at most the unit in progress.
//!
//! A unit also records the sitemaps and feeds whose copy it kept for conditional re-reads
//! changed (their `ETag` and text, [`Recorded::Documents`]): a resumed crawl starts from the
//! copies of its last committed unit, so its first live unit sends `If-None-Match` as the
//! uninterrupted crawl would (journals written before this record resume without copies,
//! reading every document in full once).
//!
//! It records too the robots.txt `Sitemap:` lines (sitemaps, feeds) that changed
//! ([`Recorded::RobotsSitemaps`]): a resumed crawl re-reads a host's robots.txt only at its
//! first fetch of the host, after that unit's reading of the signals, so without them that
//! reading would miss the sitemaps and feeds known only from robots.txt.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};

use base64::Engine;

use super::hosts::{FaultCounts, HostFaults};
use super::signals::{KeptDocument, SignalCounts, SignalRead};
use crate::corpus::{PageId, Unit};

/// One fetch batch or discovery, as recorded.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Recorded {
    /// The URLs a sitemap reading listed.
    Sitemaps {
        urls: Vec<String>,
        /// The sitemap requests it made (absent in journals written before they were counted).
        #[serde(default, skip_serializing_if = "SignalCounts::is_zero")]
        requests: SignalCounts,
        /// The faults those requests met, per host.
        #[serde(default, skip_serializing_if = "HostFaults::is_empty")]
        faults: HostFaults,
    },
    /// What a reading of the sites' change signals learned (see [`SignalRead`]).
    Signals { read: SignalRead },
    /// A fetch batch: the URLs asked for, in request order, and what each brought.
    Fetch {
        urls: Vec<String>,
        outcomes: Vec<RecordedOutcome>,
        /// The faults each fetch met on the wire (by its index; those that met none are
        /// left out, as in journals written before faults were counted).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        faults: Vec<(usize, FaultCounts)>,
    },
    /// A discovery: the URLs it added to the catalogue (in id order) and the pages it found.
    Discover {
        interned: Vec<String>,
        found: Vec<PageId>,
        /// The sitemap requests it made.
        #[serde(default, skip_serializing_if = "SignalCounts::is_zero")]
        requests: SignalCounts,
        /// The faults those requests met, per host.
        #[serde(default, skip_serializing_if = "HostFaults::is_empty")]
        faults: HostFaults,
    },
    /// The sitemaps and feeds whose kept copy the unit changed (the unit's last record; not
    /// replayed but loaded: see [`Journal::take_documents`]).
    Documents { documents: Vec<RecordedDocument> },
    /// The hosts whose robots.txt `Sitemap:` lines the unit read anew, with those lines (empty:
    /// it names none now). Like [`Recorded::Documents`], loaded rather than replayed (see
    /// [`Journal::take_robots_sitemaps`]).
    RobotsSitemaps {
        hosts: BTreeMap<String, Vec<String>>,
    },
}

/// A sitemap or feed as kept for conditional re-reads, as recorded.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RecordedDocument {
    pub(crate) url: String,
    /// Its `ETag`; absent: no copy kept any more (it was last read without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) etag: Option<String>,
    /// base64 of its text gzipped (empty without an `ETag`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) text: String,
}

/// `text` gzipped, in base64 (a sitemap's text is repetitive: a tenth of its size or less).
fn packed(text: &str) -> std::io::Result<String> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(text.as_bytes())?;
    Ok(base64::engine::general_purpose::STANDARD.encode(gz.finish()?))
}

/// The text [`packed`] packed; `None` when it is not.
fn unpacked(packed: &str) -> Option<String> {
    let gz = base64::engine::general_purpose::STANDARD
        .decode(packed)
        .ok()?;
    let mut text = String::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

/// What one fetch brought, as recorded.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum RecordedOutcome {
    Body {
        /// base64 of the decoded body.
        body: String,
        last_modified: Option<i64>,
        /// The response's media type (absent in journals written before it was recorded).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        media_type: Option<String>,
    },
    NotModified,
    Gone,
    Disallowed,
    Failed {
        error: String,
    },
    /// Not done by the unit's deadline.
    Missing,
}

impl RecordedOutcome {
    pub(crate) fn body(bytes: &[u8], last_modified: Option<i64>, media_type: Option<&str>) -> Self {
        RecordedOutcome::Body {
            body: base64::engine::general_purpose::STANDARD.encode(bytes),
            last_modified,
            media_type: media_type.map(str::to_string),
        }
    }

    /// The body's bytes (`None` for another outcome or a corrupt record).
    pub(crate) fn body_bytes(&self) -> Option<Vec<u8>> {
        match self {
            RecordedOutcome::Body { body, .. } => {
                base64::engine::general_purpose::STANDARD.decode(body).ok()
            }
            _ => None,
        }
    }
}

/// The journal of a crawl directory: records of the unit in progress, and the committed
/// records still to replay.
#[derive(Debug, Default)]
pub struct Journal {
    dir: Option<PathBuf>,
    current: Vec<Recorded>,
    replay: VecDeque<Recorded>,
    /// The documents whose kept copy the unit in progress changed (`None`: dropped).
    documents: BTreeMap<String, Option<KeptDocument>>,
    /// The copies kept at the end of the last unit loaded.
    kept: HashMap<String, KeptDocument>,
    /// The hosts whose robots.txt `Sitemap:` lines the unit in progress read anew.
    robots: BTreeMap<String, Vec<String>>,
    /// Per host, its robots.txt `Sitemap:` lines as of the end of the last unit loaded.
    kept_robots: BTreeMap<String, Vec<String>>,
}

impl Journal {
    /// A journal kept in `dir/journal/` (`None`: kept nowhere, nothing to replay).
    pub fn new(dir: Option<&Path>) -> Self {
        Journal {
            dir: dir.map(|d| d.join("journal")),
            ..Journal::default()
        }
    }

    pub fn path_of(dir: &Path, unit: Unit) -> PathBuf {
        dir.join(format!("unit-{unit:05}.jsonl"))
    }

    /// Loads units `0..=last` for replay and removes what a killed unit after `last` left.
    pub fn load(&mut self, last: Unit) -> std::io::Result<()> {
        let Some(dir) = self.dir.clone() else {
            return Ok(());
        };
        for unit in 0..=last {
            let path = Self::path_of(&dir, unit);
            let file = std::fs::File::open(&path)
                .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
            for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
                let line = line?;
                let invalid = |e: &dyn std::fmt::Display| {
                    std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!("{}:{}: {e}", path.display(), i + 1),
                    )
                };
                let record: Recorded = serde_json::from_str(&line).map_err(|e| invalid(&e))?;
                let documents = match record {
                    Recorded::Documents { documents } => documents,
                    Recorded::RobotsSitemaps { hosts } => {
                        for (host, lines) in hosts {
                            if lines.is_empty() {
                                self.kept_robots.remove(&host);
                            } else {
                                self.kept_robots.insert(host, lines);
                            }
                        }
                        continue;
                    }
                    record => {
                        self.replay.push_back(record);
                        continue;
                    }
                };
                for d in documents {
                    match d.etag {
                        Some(etag) => {
                            let text = unpacked(&d.text).ok_or_else(|| {
                                invalid(&format!(
                                    "the kept text of {} is not gzip in base64",
                                    d.url
                                ))
                            })?;
                            self.kept.insert(d.url, (etag, text));
                        }
                        None => {
                            self.kept.remove(&d.url);
                        }
                    }
                }
            }
        }
        if let Ok(entries) = std::fs::read_dir(&dir) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let unit: Option<Unit> = name
                    .strip_prefix("unit-")
                    .and_then(|r| r.split('.').next())
                    .and_then(|n| n.parse().ok());
                if unit.is_some_and(|u| u > last) || name.ends_with(".tmp") {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
        Ok(())
    }

    /// Whether committed records remain to replay.
    pub fn replaying(&self) -> bool {
        !self.replay.is_empty()
    }

    /// The next committed record (replay).
    pub(crate) fn next_recorded(&mut self) -> Option<Recorded> {
        self.replay.pop_front()
    }

    /// Records what the unit in progress did.
    pub fn record(&mut self, record: Recorded) {
        if self.dir.is_some() {
            self.current.push(record);
        }
    }

    /// Records that the copy of `url` kept for conditional re-reads is now `kept` (its `ETag`
    /// and text; `None`: none is kept).
    pub(crate) fn record_document(&mut self, url: &str, kept: Option<KeptDocument>) {
        if self.dir.is_some() {
            self.documents.insert(url.to_string(), kept);
        }
    }

    /// Records that `host`'s robots.txt now names `lines` in `Sitemap:` lines (read anew).
    pub(crate) fn record_robots_sitemaps(&mut self, host: &str, lines: Vec<String>) {
        if self.dir.is_some() {
            self.robots.insert(host.to_string(), lines);
        }
    }

    /// Per host, the robots.txt `Sitemap:` lines known at the end of the last unit loaded (by
    /// [`Self::load`]; hosts naming none left out); taken once.
    pub fn take_robots_sitemaps(&mut self) -> BTreeMap<String, Vec<String>> {
        std::mem::take(&mut self.kept_robots)
    }

    /// The copies of the sitemaps and feeds kept at the end of the last unit loaded (by
    /// [`Self::load`]), by URL; taken once.
    pub fn take_documents(&mut self) -> HashMap<String, KeptDocument> {
        std::mem::take(&mut self.kept)
    }

    /// Commits the unit in progress: written beside, synced, renamed into place.
    pub fn commit(&mut self, unit: Unit) -> std::io::Result<()> {
        let Some(dir) = self.dir.clone() else {
            return Ok(());
        };
        std::fs::create_dir_all(&dir)?;
        let path = Self::path_of(&dir, unit);
        let tmp = path.with_extension("jsonl.tmp");
        let mut f = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        for r in self.current.drain(..) {
            serde_json::to_writer(&mut f, &r)?;
            f.write_all(b"\n")?;
        }
        if !self.robots.is_empty() {
            let hosts = std::mem::take(&mut self.robots);
            serde_json::to_writer(&mut f, &Recorded::RobotsSitemaps { hosts })?;
            f.write_all(b"\n")?;
        }
        if !self.documents.is_empty() {
            let mut documents = Vec::with_capacity(self.documents.len());
            for (url, kept) in std::mem::take(&mut self.documents) {
                documents.push(match kept {
                    Some((etag, text)) => RecordedDocument {
                        url,
                        etag: Some(etag),
                        text: packed(&text)?,
                    },
                    None => RecordedDocument {
                        url,
                        etag: None,
                        text: String::new(),
                    },
                });
            }
            serde_json::to_writer(&mut f, &Recorded::Documents { documents })?;
            f.write_all(b"\n")?;
        }
        let f = f.into_inner().map_err(|e| e.into_error())?;
        f.sync_all()?;
        std::fs::rename(&tmp, &path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn committed_units_replay_in_order_and_a_killed_units_records_go() {
        let dir = tempfile::tempdir().unwrap();
        let mut j = Journal::new(Some(dir.path()));
        let body = RecordedOutcome::body(b"\xff\x00<p>not utf-8</p>", Some(7), Some("text/html"));
        j.record(Recorded::Sitemaps {
            urls: vec!["https://a/x".into()],
            requests: SignalCounts::default(),
            faults: HostFaults::from([(
                "a".to_string(),
                FaultCounts {
                    bad_sitemaps: 1,
                    ..FaultCounts::default()
                },
            )]),
        });
        j.commit(0).unwrap();
        j.record(Recorded::Fetch {
            urls: vec!["https://a/x".into(), "https://a/y".into()],
            outcomes: vec![body.clone(), RecordedOutcome::Missing],
            faults: vec![(
                0,
                FaultCounts {
                    server_errors: 2,
                    ..FaultCounts::default()
                },
            )],
        });
        j.commit(1).unwrap();
        // Unit 2 was written, but the crawl died before saying it was committed.
        j.record(Recorded::Discover {
            interned: vec!["https://a/z".into()],
            found: vec![2],
            requests: SignalCounts::default(),
            faults: HostFaults::new(),
        });
        j.commit(2).unwrap();

        let mut again = Journal::new(Some(dir.path()));
        again.load(1).unwrap();
        assert!(matches!(
            again.next_recorded(),
            Some(Recorded::Sitemaps { .. })
        ));
        match again.next_recorded() {
            Some(Recorded::Fetch { outcomes, .. }) => {
                assert_eq!(outcomes[0], body);
                assert_eq!(
                    outcomes[0].body_bytes().unwrap(),
                    b"\xff\x00<p>not utf-8</p>"
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(!again.replaying());
        assert!(!Journal::path_of(&dir.path().join("journal"), 2).exists());
        // A journal whose committed unit is missing is an error naming the file.
        let mut broken = Journal::new(Some(dir.path()));
        let err = broken.load(3).unwrap_err().to_string();
        assert!(err.contains("unit-00002.jsonl"), "{err}");
    }

    /// The copies kept for conditional re-reads come back as of the last unit loaded (a
    /// dropped copy stays dropped, a killed unit's changes are lost with it), without being
    /// replayed; journals written before they were recorded load with none.
    #[test]
    fn kept_documents_load_as_of_the_last_unit_and_old_journals_have_none() {
        let dir = tempfile::tempdir().unwrap();
        let mut j = Journal::new(Some(dir.path()));
        let sitemap = "<urlset><url><loc>https://a/x</loc></url></urlset>".repeat(50);
        j.record(Recorded::Signals {
            read: SignalRead::default(),
        });
        j.record_document(
            "https://a/sitemap.xml",
            Some(("\"1\"".into(), sitemap.clone())),
        );
        j.record_document(
            "https://a/feed.rss",
            Some(("\"f\"".into(), "<rss/>".into())),
        );
        j.commit(0).unwrap();
        let unit0 = std::fs::read_to_string(Journal::path_of(&dir.path().join("journal"), 0));
        let unit0 = unit0.unwrap();
        assert!(unit0
            .lines()
            .last()
            .unwrap()
            .contains(r#""kind":"documents""#));
        assert!(unit0.len() < sitemap.len(), "packed: {} bytes", unit0.len());
        j.record_document(
            "https://a/sitemap.xml",
            Some(("\"2\"".into(), "<urlset/>".into())),
        );
        j.record_document("https://a/feed.rss", None);
        j.commit(1).unwrap();
        j.record_document(
            "https://a/sitemap.xml",
            Some(("\"3\"".into(), "killed".into())),
        );
        j.commit(2).unwrap();

        let mut again = Journal::new(Some(dir.path()));
        again.load(1).unwrap();
        let kept = again.take_documents();
        assert_eq!(
            kept,
            HashMap::from([(
                "https://a/sitemap.xml".to_string(),
                ("\"2\"".to_string(), "<urlset/>".to_string())
            )])
        );

        // (Loading unit 0 alone drops the later units' files: last.)
        let mut again = Journal::new(Some(dir.path()));
        again.load(0).unwrap();
        let kept = again.take_documents();
        assert_eq!(kept.len(), 2);
        assert_eq!(
            kept["https://a/sitemap.xml"],
            ("\"1\"".to_string(), sitemap)
        );
        assert!(matches!(
            again.next_recorded(),
            Some(Recorded::Signals { .. })
        ));
        assert!(!again.replaying(), "the documents are not replayed");
        // A journal of before: no copies.
        let old = tempfile::tempdir().unwrap();
        let journal = old.path().join("journal");
        std::fs::create_dir_all(&journal).unwrap();
        std::fs::write(
            Journal::path_of(&journal, 0),
            "{\"kind\":\"sitemaps\",\"urls\":[\"https://a/x\"]}\n",
        )
        .unwrap();
        let mut before = Journal::new(Some(old.path()));
        before.load(0).unwrap();
        assert!(before.take_documents().is_empty());
        assert!(matches!(
            before.next_recorded(),
            Some(Recorded::Sitemaps { .. })
        ));
        // A corrupt copy is an error naming the file and line.
        std::fs::write(
            Journal::path_of(&journal, 0),
            "{\"kind\":\"documents\",\"documents\":[{\"url\":\"u\",\"etag\":\"e\",\"text\":\"!!\"}]}\n",
        )
        .unwrap();
        let err = Journal::new(Some(old.path()))
            .load(0)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("unit-00000.jsonl:1") && err.contains("kept text of u"),
            "{err}"
        );
    }

    /// The robots.txt `Sitemap:` lines load as of the last unit loaded (a host naming none
    /// any more is dropped), without being replayed.
    #[test]
    fn robots_sitemaps_load_as_of_the_last_unit() {
        let dir = tempfile::tempdir().unwrap();
        let mut j = Journal::new(Some(dir.path()));
        let lines = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        j.record_robots_sitemaps(
            "a",
            lines(&["https://a/sitemap.xml", "https://a/feed.atom"]),
        );
        j.record_robots_sitemaps("b", lines(&["https://b/sitemap.xml"]));
        j.commit(0).unwrap();
        j.record_robots_sitemaps("b", Vec::new());
        j.commit(1).unwrap();
        let mut again = Journal::new(Some(dir.path()));
        again.load(1).unwrap();
        assert!(!again.replaying(), "not replayed");
        assert_eq!(
            again.take_robots_sitemaps(),
            BTreeMap::from([(
                "a".to_string(),
                lines(&["https://a/sitemap.xml", "https://a/feed.atom"])
            )])
        );
        let mut unit0 = Journal::new(Some(dir.path()));
        unit0.load(0).unwrap();
        assert_eq!(unit0.take_robots_sitemaps().len(), 2);
    }

    /// Journals written before the media type was recorded still read: the copy's type is then
    /// decided by its body, as before.
    #[test]
    fn a_body_recorded_without_a_media_type_still_reads() {
        let old: RecordedOutcome = serde_json::from_str(
            r#"{"outcome":"body","body":"PHA+aGk8L3A+","last_modified":null}"#,
        )
        .unwrap();
        assert_eq!(old, RecordedOutcome::body(b"<p>hi</p>", None, None));
        let new = serde_json::to_string(&RecordedOutcome::body(b"<p>hi</p>", None, None)).unwrap();
        assert!(!new.contains("media_type"), "{new}");
    }
}
