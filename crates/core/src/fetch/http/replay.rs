//! Journal replay: while a resumed crawl's committed units remain in its journal
//! ([`super::journal`]), fetches, discoveries, sitemap readings and readings of the change
//! signals answer from it; a live unit's are recorded in it. [`Replaying`] does it for fetch
//! batches, as a [`Transport`] decorator (a replayed batch never reaches the transport below);
//! discoveries and readings change the fetcher's own catalogue, scope and signal state, so
//! they go through the [`Replay`] handle's `replay_*`/`record_*` pairs instead.

use std::sync::{Arc, Mutex};

use super::hosts::{FaultCounts, HostFaults};
use super::journal::{Journal, Recorded, RecordedOutcome};
use super::signals::KeptDocument;
use super::signals::{SignalCounts, SignalRead};
use super::transport::{Answer, Job, Outcome, Transport};
use crate::corpus::{PageId, Unit};
use crate::fetch::FetchError;

/// The crawl's journal, and why its replay stopped matching (if it did). Clones share both.
#[derive(Clone, Default)]
pub(super) struct Replay {
    journal: Arc<Mutex<Journal>>,
    /// Set when a replayed unit asked for other pages than the journal recorded.
    diverged: Arc<Mutex<Option<String>>>,
}

impl Replay {
    /// Replaces the journal (see [`HttpFetcher::set_journal`](super::HttpFetcher::set_journal)).
    pub(super) fn set_journal(&self, journal: Journal) {
        *self.journal.lock().expect("journal lock") = journal;
    }

    /// Commits the unit in progress to the journal (at the unit's end).
    pub(super) fn commit(&self, unit: Unit) -> std::io::Result<()> {
        self.journal.lock().expect("journal lock").commit(unit)
    }

    /// Whether committed units are still being replayed.
    pub(super) fn replaying(&self) -> bool {
        self.journal.lock().expect("journal lock").replaying()
    }

    /// Why the replay of the journal stopped matching, if it did.
    pub(super) fn diverged(&self) -> Option<String> {
        self.diverged.lock().expect("divergence lock").clone()
    }

    fn next(&self) -> Option<Recorded> {
        let mut journal = self.journal.lock().expect("journal lock");
        if journal.replaying() {
            journal.next_recorded()
        } else {
            None
        }
    }

    fn record(&self, record: Recorded) {
        self.journal.lock().expect("journal lock").record(record);
    }

    fn diverge(&self, why: String) {
        let mut d = self.diverged.lock().expect("divergence lock");
        if d.is_none() {
            *d = Some(why);
        }
    }

    /// A replayed sitemap reading: the URLs the journal recorded and the requests it made
    /// (none, the crawl diverging, when it recorded something else). `None`: not replaying,
    /// read live.
    pub(super) fn replay_sitemaps(
        &self,
        unit: Unit,
    ) -> Option<(Vec<String>, SignalCounts, HostFaults)> {
        if !self.replaying() {
            return None;
        }
        Some(match self.next() {
            Some(Recorded::Sitemaps {
                urls,
                requests,
                faults,
            }) => (urls, requests, faults),
            other => {
                self.diverge(format!(
                    "unit {unit}: a sitemap reading where the journal has {other:?}"
                ));
                (Vec::new(), SignalCounts::default(), HostFaults::new())
            }
        })
    }

    /// Records a live sitemap reading.
    pub(super) fn record_sitemaps(
        &self,
        urls: Vec<String>,
        requests: SignalCounts,
        faults: HostFaults,
    ) {
        self.record(Recorded::Sitemaps {
            urls,
            requests,
            faults,
        });
    }

    /// A replayed reading of the change signals (an empty one, the crawl diverging, when the
    /// journal recorded something else). `None`: not replaying, read live.
    pub(super) fn replay_signals(&self, unit: Unit) -> Option<SignalRead> {
        if !self.replaying() {
            return None;
        }
        Some(match self.next() {
            Some(Recorded::Signals { read }) => read,
            other => {
                self.diverge(format!(
                    "unit {unit}: a reading of the change signals where the journal has {other:?}"
                ));
                SignalRead::default()
            }
        })
    }

    /// Records that the copy of the sitemap or feed `url` kept for conditional re-reads
    /// changed (see [`Journal::record_document`]).
    pub(super) fn record_document(&self, url: &str, kept: Option<KeptDocument>) {
        self.journal
            .lock()
            .expect("journal lock")
            .record_document(url, kept);
    }

    /// Records that `host`'s robots.txt, read anew, names `lines` in `Sitemap:` lines (see
    /// [`Journal::record_robots_sitemaps`]).
    pub(super) fn record_robots_sitemaps(&self, host: &str, lines: Vec<String>) {
        self.journal
            .lock()
            .expect("journal lock")
            .record_robots_sitemaps(host, lines);
    }

    /// Records a live reading of the change signals.
    pub(super) fn record_signals(&self, read: SignalRead) {
        self.record(Recorded::Signals { read });
    }

    /// A replayed discovery: the URLs it interned (in id order) and the pages it found, as
    /// the journal recorded them (none, the crawl diverging, when it recorded something else).
    /// `None`: not replaying, discover live.
    pub(super) fn replay_discovery(&self, unit: Unit) -> Option<ReplayedDiscovery> {
        if !self.replaying() {
            return None;
        }
        Some(match self.next() {
            Some(Recorded::Discover {
                interned,
                found,
                requests,
                faults,
            }) => ReplayedDiscovery {
                interned,
                found,
                requests,
                faults,
            },
            other => {
                self.diverge(format!(
                    "unit {unit}: a discovery where the journal has {other:?}"
                ));
                ReplayedDiscovery::default()
            }
        })
    }

    /// Records a live discovery.
    pub(super) fn record_discovery(&self, d: ReplayedDiscovery) {
        self.record(Recorded::Discover {
            interned: d.interned,
            found: d.found,
            requests: d.requests,
            faults: d.faults,
        });
    }

    /// A replayed fetch (a resumed crawl's committed unit): the outcomes the journal recorded
    /// for these `urls`, or none, the crawl diverging, when it recorded something else.
    fn replay_fetch(&self, unit: Unit, urls: &[String]) -> Vec<Answer> {
        match self.next() {
            Some(Recorded::Fetch {
                urls: recorded,
                outcomes,
                faults,
            }) if recorded == urls => {
                let mut met = vec![FaultCounts::default(); outcomes.len()];
                for (index, f) in faults {
                    if let Some(m) = met.get_mut(index) {
                        *m = f;
                    }
                }
                outcomes
                    .into_iter()
                    .zip(met)
                    .enumerate()
                    .filter_map(|(index, (o, faults))| {
                        replayed_outcome(o).map(|outcome| Answer {
                            index,
                            outcome,
                            exchanges: Vec::new(),
                            replayed: true,
                            faults,
                        })
                    })
                    .collect()
            }
            other => {
                let what = match other {
                    Some(Recorded::Fetch { urls: r, .. }) => {
                        format!("a fetch of {} other URLs", r.len())
                    }
                    Some(other) => format!("{other:?}"),
                    None => "nothing".into(),
                };
                self.diverge(format!(
                    "unit {unit}: the policy asked for {} URLs where the journal recorded {what}",
                    urls.len()
                ));
                Vec::new()
            }
        }
    }

    /// Records a live fetch's outcomes (a job without an answer as missing).
    fn record_fetch(&self, urls: Vec<String>, answers: &[Answer]) {
        let mut recorded = vec![RecordedOutcome::Missing; urls.len()];
        let mut faults = Vec::new();
        for answer in answers {
            recorded[answer.index] = recorded_outcome(&answer.outcome);
            if !answer.faults.is_zero() {
                faults.push((answer.index, answer.faults));
            }
        }
        self.record(Recorded::Fetch {
            urls,
            outcomes: recorded,
            faults,
        });
    }
}

/// A discovery as journaled: the URLs it interned (in id order), the pages it found, the
/// sitemap requests it made and the faults they met.
#[derive(Debug, Default)]
pub(super) struct ReplayedDiscovery {
    pub(super) interned: Vec<String>,
    pub(super) found: Vec<PageId>,
    pub(super) requests: SignalCounts,
    pub(super) faults: HostFaults,
}

/// Answers a batch from the journal while it replays, else from the transport below, recording
/// what it answered (for a later resume).
pub(super) struct Replaying<T> {
    replay: Replay,
    inner: T,
}

impl<T> Replaying<T> {
    pub(super) fn new(replay: Replay, inner: T) -> Self {
        Replaying { replay, inner }
    }

    pub(super) fn inner(&self) -> &T {
        &self.inner
    }
}

impl<T: Transport> Transport for Replaying<T> {
    fn run(&mut self, unit: Unit, jobs: &[Job]) -> Vec<Answer> {
        let urls: Vec<String> = jobs.iter().map(|j| j.url.clone()).collect();
        if self.replay.replaying() {
            return self.replay.replay_fetch(unit, &urls);
        }
        let answers = self.inner.run(unit, jobs);
        self.replay.record_fetch(urls, &answers);
        answers
    }
}

fn recorded_outcome(outcome: &Outcome) -> RecordedOutcome {
    match outcome {
        Outcome::Body {
            body,
            last_modified,
            media_type,
        } => RecordedOutcome::body(body, *last_modified, media_type.as_deref()),
        Outcome::NotModified => RecordedOutcome::NotModified,
        Outcome::Gone => RecordedOutcome::Gone,
        Outcome::Disallowed => RecordedOutcome::Disallowed,
        Outcome::Failed(e) => RecordedOutcome::Failed {
            error: e.to_string(),
        },
    }
}

/// A recorded outcome as the fetch's own (`None`: not done by the deadline).
fn replayed_outcome(recorded: RecordedOutcome) -> Option<Outcome> {
    Some(match recorded {
        RecordedOutcome::Body {
            last_modified,
            ref media_type,
            ..
        } => Outcome::Body {
            body: recorded.body_bytes().unwrap_or_default(),
            last_modified,
            media_type: media_type.clone(),
        },
        RecordedOutcome::NotModified => Outcome::NotModified,
        RecordedOutcome::Gone => Outcome::Gone,
        RecordedOutcome::Disallowed => Outcome::Disallowed,
        RecordedOutcome::Failed { error } => Outcome::Failed(FetchError::Recorded(error)),
        RecordedOutcome::Missing => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fetch::http::transport::Canned;

    fn jobs(urls: &[&str]) -> Vec<Job> {
        urls.iter()
            .enumerate()
            .map(|(index, url)| Job {
                index,
                url: url.to_string(),
                validator: None,
            })
            .collect()
    }

    #[test]
    fn a_committed_batch_replays_as_it_was_answered_and_another_batch_diverges() {
        let dir = tempfile::tempdir().unwrap();
        let live = Replay::default();
        live.set_journal(Journal::new(Some(dir.path())));
        let answers = vec![
            Answer {
                index: 0,
                outcome: Outcome::Body {
                    body: b"<p>hello</p>".to_vec(),
                    last_modified: Some(5),
                    media_type: Some("text/html".into()),
                },
                exchanges: Vec::new(),
                replayed: false,
                faults: Default::default(),
            },
            Answer {
                index: 2,
                outcome: Outcome::Failed(FetchError::Status { status: 503 }),
                exchanges: Vec::new(),
                replayed: false,
                faults: FaultCounts {
                    server_errors: 3,
                    ..FaultCounts::default()
                },
            },
        ];
        let batch = jobs(&["http://a/0", "http://a/1", "http://a/2"]);
        let mut layer = Replaying::new(live.clone(), Canned(answers));
        assert_eq!(layer.run(0, &batch).len(), 2);
        live.commit(0).unwrap();

        let mut journal = Journal::new(Some(dir.path()));
        journal.load(0).unwrap();
        let resumed = Replay::default();
        resumed.set_journal(journal);
        let mut layer = Replaying::new(resumed.clone(), Canned(Vec::new()));
        let got = layer.run(0, &batch);
        assert!(!resumed.replaying());
        assert_eq!(got.iter().map(|a| a.index).collect::<Vec<_>>(), [0, 2]);
        assert!(got.iter().all(|a| a.replayed && a.exchanges.is_empty()));
        assert!(
            matches!(&got[0].outcome, Outcome::Body { body, last_modified: Some(5), media_type }
            if body == b"<p>hello</p>" && media_type.as_deref() == Some("text/html"))
        );
        assert!(
            matches!(&got[1].outcome, Outcome::Failed(FetchError::Recorded(e)) if e == "status 503")
        );
        // The faults the fetches met replay with them.
        assert_eq!(got[1].faults.server_errors, 3);
        assert!(got[0].faults.is_zero());
        assert_eq!(resumed.diverged(), None);

        let mut journal = Journal::new(Some(dir.path()));
        journal.load(0).unwrap();
        let resumed = Replay::default();
        resumed.set_journal(journal);
        let mut layer = Replaying::new(resumed.clone(), Canned(Vec::new()));
        assert!(layer.run(0, &jobs(&["http://a/9"])).is_empty());
        assert!(resumed.diverged().unwrap().contains("asked for 1 URLs"));
    }
}
