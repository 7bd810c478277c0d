//! Page fetches done by other workers: the bottom of the transport stack handed to a
//! [`JobRunner`] (`crawl --workers N`, `--processes N`), each host's fetches done by the one
//! worker that owns the host.
//!
//! Only the wire moves. Everything above the HTTP client (the journal, the WARC output, the
//! held-body check, the counters, the parsing of every body into a page version with its
//! term ids) stays with the fetcher, which reads the answers in job order as it reads its own
//! client's. So a crawl whose fetches are spread gives the same results as one whose fetches
//! are not, whenever the servers answer alike. Each owner reads its hosts' robots.txt and
//! keeps their politeness delays in its own client, and sends the robots.txt it holds for
//! them with each batch's answers: the fetcher's client takes them, so the sitemaps and feeds
//! robots.txt names are read as one client would (the fetcher's own client reads every
//! sitemap and feed).
//!
//! Protocol: the fetcher calls [`JobRunner::run`] once per batch of a live unit (never for a
//! unit replayed from the journal), with the time left until the unit's deadline; the runner
//! returns a [`WireBatch`]: at most one answer per job (a job without one counts as cut by the
//! deadline), and the robots.txt of the jobs' hosts. A failure travels as its text
//! ([`FetchError::Recorded`], as the journal keeps it), the deadline's as itself.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::client::HttpClient;
use super::hosts::{FaultCounts, RobotsText};
use super::options::{FetcherError, HttpOptions};
use super::transport::{Answer, Exchanged, Job, Outcome, Transport};
use crate::corpus::Unit;
use crate::fetch::{FetchError, Validator};

/// Runs page fetch jobs somewhere else (see the module docs).
pub trait JobRunner: Send {
    /// The answers to `jobs` at `unit`, each within `deadline` of now (`None`: no deadline),
    /// with the robots.txt of their hosts.
    fn run(&mut self, unit: Unit, deadline: Option<Duration>, jobs: Vec<WireJob>) -> WireBatch;
}

/// What the owners of a batch's hosts send back: the answers and each host's robots.txt.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WireBatch {
    answers: Vec<WireAnswer>,
    robots: Vec<(String, RobotsText)>,
}

impl WireBatch {
    /// The batches of several owners as one: the answers ascending by job index, the robots
    /// by host.
    pub fn merge(parts: impl IntoIterator<Item = WireBatch>) -> WireBatch {
        let mut all = WireBatch::default();
        for part in parts {
            all.answers.extend(part.answers);
            all.robots.extend(part.robots);
        }
        all.answers.sort_by_key(|a| a.index);
        all.robots.sort_by(|a, b| a.0.cmp(&b.0));
        all
    }
}

/// One page to fetch, as it travels.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WireJob {
    /// The job's index in its batch.
    pub index: usize,
    pub url: String,
    /// The held copy's `(capture time, content hash)`.
    validator: Option<(i64, u64)>,
}

impl WireJob {
    /// The host whose owner fetches the job (`""` for a URL without one).
    pub fn host(&self) -> String {
        super::host_of(&self.url).unwrap_or_default()
    }
}

/// What a fetch brought back, as it travels.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
enum WireOutcome {
    Body {
        body: Vec<u8>,
        last_modified: Option<i64>,
        media_type: Option<String>,
    },
    NotModified,
    Gone,
    Disallowed,
    Deadline,
    Failed(String),
}

/// The answer to one [`WireJob`], as it travels.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WireAnswer {
    /// The job's index in its batch.
    pub index: usize,
    outcome: WireOutcome,
    exchanges: Vec<Exchanged>,
    faults: FaultCounts,
}

impl From<&Job> for WireJob {
    fn from(job: &Job) -> Self {
        WireJob {
            index: job.index,
            url: job.url.clone(),
            validator: job.validator.map(|v| (v.captured, v.content_hash)),
        }
    }
}

impl From<WireJob> for Job {
    fn from(job: WireJob) -> Self {
        Job {
            index: job.index,
            url: job.url,
            validator: job.validator.map(|(captured, content_hash)| Validator {
                captured,
                content_hash,
            }),
        }
    }
}

impl From<Answer> for WireAnswer {
    fn from(answer: Answer) -> Self {
        WireAnswer {
            index: answer.index,
            outcome: match answer.outcome {
                Outcome::Body {
                    body,
                    last_modified,
                    media_type,
                } => WireOutcome::Body {
                    body,
                    last_modified,
                    media_type,
                },
                Outcome::NotModified => WireOutcome::NotModified,
                Outcome::Gone => WireOutcome::Gone,
                Outcome::Disallowed => WireOutcome::Disallowed,
                Outcome::Failed(FetchError::Deadline) => WireOutcome::Deadline,
                Outcome::Failed(e) => WireOutcome::Failed(e.to_string()),
            },
            exchanges: answer.exchanges,
            faults: answer.faults,
        }
    }
}

impl From<WireAnswer> for Answer {
    fn from(answer: WireAnswer) -> Self {
        Answer {
            index: answer.index,
            outcome: match answer.outcome {
                WireOutcome::Body {
                    body,
                    last_modified,
                    media_type,
                } => Outcome::Body {
                    body,
                    last_modified,
                    media_type,
                },
                WireOutcome::NotModified => Outcome::NotModified,
                WireOutcome::Gone => Outcome::Gone,
                WireOutcome::Disallowed => Outcome::Disallowed,
                WireOutcome::Deadline => Outcome::Failed(FetchError::Deadline),
                WireOutcome::Failed(text) => Outcome::Failed(FetchError::Recorded(text)),
            },
            exchanges: answer.exchanges,
            replayed: false,
            faults: answer.faults,
        }
    }
}

/// The HTTP client an owner of hosts fetches with: what a worker runs for the jobs a
/// [`JobRunner`] hands it.
pub struct HostClient {
    client: HttpClient,
    deadline: Arc<Mutex<Option<Instant>>>,
}

impl HostClient {
    pub fn new(options: HttpOptions) -> Result<Self, FetcherError> {
        let deadline = Arc::new(Mutex::new(None));
        Ok(HostClient {
            client: HttpClient::new(options, Arc::default(), Arc::clone(&deadline))?,
            deadline,
        })
    }

    /// Fetches `jobs` at `unit` within `deadline` of now: the answers ascending by job index,
    /// and the robots.txt of the jobs' hosts.
    pub fn run(&mut self, unit: Unit, deadline: Option<Duration>, jobs: Vec<WireJob>) -> WireBatch {
        *self.deadline.lock().expect("deadline lock") = deadline.map(|d| Instant::now() + d);
        let mut hosts: Vec<String> = jobs.iter().map(WireJob::host).collect();
        hosts.sort();
        hosts.dedup();
        let jobs: Vec<Job> = jobs.into_iter().map(Job::from).collect();
        let answers = self
            .client
            .run(unit, &jobs)
            .into_iter()
            .map(WireAnswer::from)
            .collect();
        let robots = hosts
            .into_iter()
            .filter_map(|host| Some((host.clone(), self.client.robots_of(&host)?)))
            .collect();
        WireBatch { answers, robots }
    }
}

/// The bottom of the fetcher's stack: its own HTTP client, or a [`JobRunner`] for the page
/// fetches (the client then reads only sitemaps and feeds).
pub(super) struct Bottom {
    pub(super) client: HttpClient,
    /// Set by [`super::HttpFetcher::set_job_runner`].
    pub(super) runner: RunnerSlot,
    /// The unit's deadline, as the fetcher's monitor sets it.
    pub(super) deadline: Arc<Mutex<Option<Instant>>>,
}

/// Where a fetcher's [`JobRunner`] is put once the fetcher is built.
pub(super) type RunnerSlot = Arc<Mutex<Option<Box<dyn JobRunner>>>>;

impl Transport for Bottom {
    fn run(&mut self, unit: Unit, jobs: &[Job]) -> Vec<Answer> {
        let mut slot = self.runner.lock().expect("job runner lock");
        let Some(runner) = slot.as_mut() else {
            return self.client.run(unit, jobs);
        };
        let deadline = self
            .deadline
            .lock()
            .expect("deadline lock")
            .map(|d| d.saturating_duration_since(Instant::now()));
        let batch = runner.run(unit, deadline, jobs.iter().map(WireJob::from).collect());
        for (host, text) in &batch.robots {
            self.client.learn_robots(host, text);
        }
        let mut answers: Vec<Answer> = batch
            .answers
            .into_iter()
            .filter(|a| a.index < jobs.len())
            .map(Answer::from)
            .collect();
        answers.sort_by_key(|a| a.index);
        answers.dedup_by_key(|a| a.index);
        answers
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_crosses_the_wire_unchanged_but_its_error_becomes_its_text() {
        let answer = Answer {
            index: 3,
            outcome: Outcome::Body {
                body: b"<html>x</html>".to_vec(),
                last_modified: Some(7),
                media_type: Some("text/html".into()),
            },
            exchanges: vec![Exchanged {
                url: "https://a.example/x".into(),
                time: 9,
                request_headers: vec![("a".into(), "b".into())],
                status: 200,
                reason: "OK".into(),
                response_headers: vec![],
                body: b"<html>x</html>".to_vec(),
            }],
            replayed: false,
            faults: FaultCounts {
                server_errors: 1,
                ..FaultCounts::default()
            },
        };
        let wire = WireAnswer::from(answer);
        let back = Answer::from(wire.clone());
        assert_eq!(WireAnswer::from(back), wire);
        for (error, text) in [
            (FetchError::Status { status: 503 }, "status 503"),
            (
                FetchError::Deadline,
                "the unit's deadline passed before this fetch",
            ),
        ] {
            let failed = Answer {
                index: 0,
                outcome: Outcome::Failed(error),
                exchanges: vec![],
                replayed: false,
                faults: FaultCounts::default(),
            };
            let back = Answer::from(WireAnswer::from(failed));
            match back.outcome {
                Outcome::Failed(e) => assert_eq!(e.to_string(), text),
                _ => panic!("not a failure"),
            }
        }
        let job = Job {
            index: 2,
            url: "https://b.example/p".into(),
            validator: Some(Validator {
                captured: 5,
                content_hash: 6,
            }),
        };
        let wire = WireJob::from(&job);
        assert_eq!(wire.host(), "b.example");
        let back = Job::from(wire);
        assert_eq!(
            (back.index, back.url, back.validator),
            (2, job.url, job.validator)
        );
    }
}
