//! The crawl's journal: what every fetch, discovery and reading of the change signals of a unit
//! brought back (with the sitemap and feed requests it made), committed with
//! the unit (`journal/unit-UUUUU.jsonl`, written beside and renamed into place). A restarted
//! crawl replays its committed units from the journal through the same parsing, policy and
//! index code — the same decisions, the same vocabulary, the same repository — and goes on
//! live from the first unit not committed. `kill -9` loses at most the unit in progress.

use std::collections::VecDeque;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use base64::Engine;

use super::hosts::{FaultCounts, HostFaults};
use super::signals::{SignalCounts, SignalRead};
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
    pub fn body(bytes: &[u8], last_modified: Option<i64>, media_type: Option<&str>) -> Self {
        RecordedOutcome::Body {
            body: base64::engine::general_purpose::STANDARD.encode(bytes),
            last_modified,
            media_type: media_type.map(str::to_string),
        }
    }

    /// The body's bytes (`None` for another outcome or a corrupt record).
    pub fn body_bytes(&self) -> Option<Vec<u8>> {
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
                let record: Recorded = serde_json::from_str(&line).map_err(|e| {
                    std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!("{}:{}: {e}", path.display(), i + 1),
                    )
                })?;
                self.replay.push_back(record);
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
    pub fn next_recorded(&mut self) -> Option<Recorded> {
        self.replay.pop_front()
    }

    /// Records what the unit in progress did.
    pub fn record(&mut self, record: Recorded) {
        if self.dir.is_some() {
            self.current.push(record);
        }
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
