//! Counting what the fetches did: [`Observing`] counts every answer of a batch (overall and per
//! host, with the host's last errors) on its way up, and [`FetchMonitor`] is the refresh loop's
//! handle on those counts — and on the unit's deadline and the journal.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::hosts::{host_of, FetchCounts, HostFaults, HostReport, Hosts};
use super::replay::Replay;
use super::signals::SignalCounts;
use super::transport::{Answer, Job, Outcome, Transport};
use crate::corpus::Unit;

/// A handle on a fetcher that the refresh loop owns: its counts, and the unit's deadline.
#[derive(Clone, Default)]
pub struct FetchMonitor {
    pub(super) hosts: Hosts,
    pub(super) totals: Arc<Mutex<FetchCounts>>,
    pub(super) deadline: Arc<Mutex<Option<Instant>>>,
    pub(super) replay: Replay,
    /// Sitemap and feed requests (outside the fetch counts and the budget).
    pub(super) signal_counts: Arc<Mutex<SignalCounts>>,
}

impl FetchMonitor {
    /// Commits the unit in progress to the journal (at the unit's end).
    pub fn commit(&self, unit: Unit) -> std::io::Result<()> {
        self.replay.commit(unit)
    }

    /// Whether committed units are still being replayed.
    pub fn replaying(&self) -> bool {
        self.replay.replaying()
    }

    /// Why the replay of the journal stopped matching, if it did.
    pub fn diverged(&self) -> Option<String> {
        self.replay.diverged()
    }

    /// Requests still running at `deadline` fail; `None`: no deadline.
    pub fn set_deadline(&self, deadline: Option<Instant>) {
        *self.deadline.lock().expect("deadline lock") = deadline;
    }

    /// Counts over every fetch so far.
    pub fn totals(&self) -> FetchCounts {
        self.totals.lock().expect("totals lock").clone()
    }

    /// Sitemap and feed requests so far (a resumed crawl's replayed units included).
    pub fn signal_counts(&self) -> SignalCounts {
        *self.signal_counts.lock().expect("signal counts lock")
    }

    /// Adds one reading's requests (live, or replayed from the journal).
    pub(super) fn add_signal_counts(&self, counts: SignalCounts) {
        self.signal_counts
            .lock()
            .expect("signal counts lock")
            .add(counts);
    }

    /// Counts per host, by host name.
    pub fn hosts(&self) -> BTreeMap<String, HostReport> {
        let hosts = self.hosts.lock().expect("host table lock");
        hosts
            .iter()
            .map(|(h, s)| (h.clone(), s.report.clone()))
            .collect()
    }

    /// Adds faults met outside a fetch batch (sitemap and feed requests), per host, to the
    /// hosts' counts and the totals.
    pub(super) fn add_faults(&self, faults: &HostFaults) {
        if faults.is_empty() {
            return;
        }
        let mut totals = self.totals.lock().expect("totals lock");
        let mut hosts = self.hosts.lock().expect("host table lock");
        for (host, f) in faults {
            totals.faults.add(f);
            hosts
                .entry(host.clone())
                .or_default()
                .report
                .counts
                .faults
                .add(f);
        }
    }

    /// Counts an error met outside a fetch (a sitemap reading) against `url`'s host.
    pub(super) fn note_error(&self, url: &str, error: String) {
        let host = host_of(url).unwrap_or_default();
        let mut hosts = self.hosts.lock().expect("host table lock");
        let r = &mut hosts.entry(host).or_default().report;
        r.counts.errors += 1;
        push_error(&mut r.last_errors, error);
    }
}

/// Counts each answer of a batch into a [`FetchMonitor`]'s totals and host reports; a job
/// without an answer (the unit's deadline) counts as an error in the totals.
pub(super) struct Observing<T> {
    monitor: FetchMonitor,
    inner: T,
}

impl<T> Observing<T> {
    pub(super) fn new(monitor: FetchMonitor, inner: T) -> Self {
        Observing { monitor, inner }
    }

    pub(super) fn inner(&self) -> &T {
        &self.inner
    }

    pub(super) fn inner_mut(&mut self) -> &mut T {
        &mut self.inner
    }

    fn count(&self, unit: Unit, job: &Job, answer: &Answer) {
        let mut counts = FetchCounts {
            // A replayed answer is one fetch, whatever it took when it was live.
            fetches: if answer.replayed {
                1
            } else {
                answer.exchanges.len() as u64
            },
            bytes: answer.exchanges.iter().map(|e| e.body.len() as u64).sum(),
            faults: answer.faults,
            ..FetchCounts::default()
        };
        let mut error = None;
        match &answer.outcome {
            Outcome::Body { .. } => counts.copies += 1,
            Outcome::NotModified => counts.not_modified += 1,
            Outcome::Gone => counts.gone += 1,
            Outcome::Disallowed => counts.robots_disallowed += 1,
            Outcome::Failed(e) => {
                counts.errors += 1;
                error = Some(e);
            }
        }
        add_counts(
            &mut self.monitor.totals.lock().expect("totals lock"),
            &counts,
        );
        let host = host_of(&job.url).unwrap_or_default();
        let mut hosts = self.monitor.hosts.lock().expect("host table lock");
        let r = &mut hosts.entry(host).or_default().report;
        add_counts(&mut r.counts, &counts);
        if let Some(e) = error {
            push_error(&mut r.last_errors, format!("unit {unit}: {}: {e}", job.url));
        }
    }
}

impl<T: Transport> Transport for Observing<T> {
    fn run(&mut self, unit: Unit, jobs: &[Job]) -> Vec<Answer> {
        let answers = self.inner.run(unit, jobs);
        for answer in &answers {
            self.count(unit, &jobs[answer.index], answer);
        }
        let missing = jobs.len() - answers.len();
        if missing > 0 {
            self.monitor.totals.lock().expect("totals lock").errors += missing as u64;
        }
        answers
    }
}

fn add_counts(to: &mut FetchCounts, c: &FetchCounts) {
    to.fetches += c.fetches;
    to.copies += c.copies;
    to.not_modified += c.not_modified;
    to.gone += c.gone;
    to.errors += c.errors;
    to.robots_disallowed += c.robots_disallowed;
    to.bytes += c.bytes;
    to.faults.add(&c.faults);
}

fn push_error(list: &mut Vec<String>, error: String) {
    if list.len() >= 5 {
        list.remove(0);
    }
    list.push(crate::terminal::terminal_safe(&error).into_owned());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fetch::http::hosts::FaultCounts;
    use crate::fetch::http::transport::Canned;
    use crate::fetch::http::transport::{Exchanged, Unchanged};
    use crate::fetch::{FetchError, Validator};

    fn exchange(body: &[u8]) -> Exchanged {
        Exchanged {
            url: String::new(),
            time: 0,
            request_headers: Vec::new(),
            status: 200,
            reason: String::new(),
            response_headers: Vec::new(),
            body: body.to_vec(),
        }
    }

    fn body(bytes: &[u8]) -> Outcome {
        Outcome::Body {
            body: bytes.to_vec(),
            last_modified: None,
            media_type: None,
        }
    }

    #[test]
    fn answers_are_counted_overall_and_per_host_and_held_bodies_are_not_modified() {
        let held = Validator {
            captured: 1,
            content_hash: xxhash_rust::xxh3::xxh3_64(b"same"),
        };
        let jobs: Vec<Job> = [
            "http://a.example/0",
            "http://a.example/1",
            "http://b.example/2",
        ]
        .iter()
        .chain(&["http://b.example/3", "http://b.example/4"])
        .enumerate()
        .map(|(index, url)| Job {
            index,
            url: url.to_string(),
            validator: Some(held),
        })
        .collect();
        let answers = vec![
            Answer {
                index: 0,
                outcome: body(b"same"),
                exchanges: vec![exchange(b"same")],
                replayed: false,
                faults: Default::default(),
            },
            Answer {
                index: 1,
                outcome: body(b"other"),
                exchanges: vec![exchange(b"other")],
                replayed: false,
                faults: Default::default(),
            },
            Answer {
                index: 2,
                outcome: Outcome::Failed(FetchError::Status { status: 500 }),
                exchanges: vec![exchange(b""), exchange(b"")],
                replayed: false,
                faults: FaultCounts {
                    server_errors: 2,
                    ..FaultCounts::default()
                },
            },
            Answer {
                index: 3,
                outcome: Outcome::Disallowed,
                exchanges: Vec::new(),
                replayed: true,
                faults: Default::default(),
            },
            // Job 4: not done by the deadline.
        ];
        let monitor = FetchMonitor::default();
        let mut layers = Observing::new(monitor.clone(), Unchanged::new(Canned(answers)));
        let got = layers.run(7, &jobs);
        assert!(matches!(got[0].outcome, Outcome::NotModified));
        assert!(matches!(got[1].outcome, Outcome::Body { .. }));
        let totals = monitor.totals();
        assert_eq!(
            totals,
            FetchCounts {
                fetches: 5,
                copies: 1,
                not_modified: 1,
                gone: 0,
                errors: 2,
                robots_disallowed: 1,
                bytes: 9,
                faults: FaultCounts {
                    server_errors: 2,
                    ..FaultCounts::default()
                },
            }
        );
        let hosts = monitor.hosts();
        assert_eq!(hosts["a.example"].counts.fetches, 2);
        assert_eq!(hosts["b.example"].counts.faults.server_errors, 2);
        assert!(hosts["a.example"].counts.faults.is_zero());
        assert_eq!(
            hosts["b.example"].counts.errors, 1,
            "the deadline counts overall only"
        );
        assert_eq!(
            hosts["b.example"].last_errors,
            vec!["unit 7: http://b.example/2: status 500".to_string()]
        );
    }
}
