//! The seam under the HTTP fetcher: a [`Transport`] answers a batch of [`Job`]s at a unit with
//! raw [`Answer`]s — what came over the wire (the [`Outcome`], and every request/response pair,
//! retries included), before any body is parsed.
//!
//! The HTTP client (`client.rs`) is the innermost transport. Every other concern is a decorator:
//! a `Transport` wrapping a `Transport`, handed the batch's answers in job order by the layer
//! below it (the order the journal and the WARC output record them in) — journal replay
//! (`replay.rs`), the WARC output (`warc_out.rs`), the held-body check ([`Unchanged`], here) and
//! the counters (`observe.rs`).

use super::hosts::FaultCounts;
use crate::corpus::Unit;
use crate::fetch::{FetchError, Validator};

/// One page to fetch.
#[derive(Debug, Clone)]
pub(super) struct Job {
    /// The request's index in its batch.
    pub(super) index: usize,
    pub(super) url: String,
    /// The held copy's validator, as the request carried it.
    pub(super) validator: Option<Validator>,
}

/// What one fetch brought back, before it becomes a [`FetchResult`](crate::fetch::FetchResult).
pub(super) enum Outcome {
    Body {
        body: Vec<u8>,
        last_modified: Option<i64>,
        /// The response's media type (`Content-Type` without parameters), if it gave one.
        media_type: Option<String>,
    },
    NotModified,
    Gone,
    Disallowed,
    Failed(FetchError),
}

/// One request/response pair for the WARC output (serialisable: a spread crawl's owners send
/// theirs to process 0, `remote.rs`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub(super) struct Exchanged {
    pub(super) url: String,
    pub(super) time: i64,
    pub(super) request_headers: Vec<(String, String)>,
    pub(super) status: u16,
    pub(super) reason: String,
    pub(super) response_headers: Vec<(String, String)>,
    pub(super) body: Vec<u8>,
}

/// The answer to one [`Job`].
pub(super) struct Answer {
    /// The job's index in its batch.
    pub(super) index: usize,
    pub(super) outcome: Outcome,
    /// The request/response pairs it took (none when replayed, or when no server answered).
    pub(super) exchanges: Vec<Exchanged>,
    /// Replayed from the journal, not fetched.
    pub(super) replayed: bool,
    /// The faults its attempts met on the wire.
    pub(super) faults: FaultCounts,
}

/// Answers fetch jobs.
pub(super) trait Transport {
    /// The answers to `jobs` at `unit`: at most one per job, ascending by job index. A job
    /// without an answer was not done by the unit's deadline.
    fn run(&mut self, unit: Unit, jobs: &[Job]) -> Vec<Answer>;
}

/// Answers a body that hashes to the held copy's as [`Outcome::NotModified`] (a server that
/// ignores conditional GETs brings no new copy). Above the journal, which keeps the body.
pub(super) struct Unchanged<T> {
    inner: T,
}

impl<T> Unchanged<T> {
    pub(super) fn new(inner: T) -> Self {
        Unchanged { inner }
    }

    pub(super) fn inner(&self) -> &T {
        &self.inner
    }

    pub(super) fn inner_mut(&mut self) -> &mut T {
        &mut self.inner
    }
}

impl<T: Transport> Transport for Unchanged<T> {
    fn run(&mut self, unit: Unit, jobs: &[Job]) -> Vec<Answer> {
        let mut answers = self.inner.run(unit, jobs);
        for answer in &mut answers {
            if let Outcome::Body { body, .. } = &answer.outcome {
                let hash = xxhash_rust::xxh3::xxh3_64(body);
                if jobs[answer.index]
                    .validator
                    .is_some_and(|v| v.content_hash == hash)
                {
                    answer.outcome = Outcome::NotModified;
                }
            }
        }
        answers
    }
}

/// A transport that answers with what it was given, once: the layers' tests stack a layer on it.
#[cfg(test)]
pub(super) struct Canned(pub(super) Vec<Answer>);

#[cfg(test)]
impl Transport for Canned {
    fn run(&mut self, _unit: Unit, _jobs: &[Job]) -> Vec<Answer> {
        std::mem::take(&mut self.0)
    }
}
