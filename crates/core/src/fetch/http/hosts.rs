//! The table of hosts a crawl met, shared (under one lock) by the HTTP client — each host's
//! robots.txt rule and last request, for politeness — and the counters — each host's
//! [`HostReport`]; and what the counters count, [`FetchCounts`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use texting_robots::Robot;

use crate::fetch::FetchError;

/// Host name → what the crawl knows of the host.
pub(super) type Hosts = Arc<Mutex<HashMap<String, HostState>>>;

/// Counts of what the fetches did, overall or for one host.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct FetchCounts {
    /// Requests answered (any status), retries included.
    pub fetches: u64,
    /// New copies (200 with a body other than the held one).
    pub copies: u64,
    /// 304, or a 200 with the held copy's bytes.
    pub not_modified: u64,
    /// 404 / 410 / non-HTML.
    pub gone: u64,
    /// Fetches that failed (after retries): unreachable, timeout, body too long, bad
    /// encoding, redirect loop, other statuses, the unit's deadline.
    pub errors: u64,
    pub robots_disallowed: u64,
    pub bytes: u64,
    /// The faults met on the wire, every attempt counted (a retry that then succeeded too),
    /// sitemap and feed requests included.
    pub faults: FaultCounts,
}

/// Faults met on the wire, by kind: every request that met one, retries included (so a fetch
/// retried twice after two `503`s counts two), sitemap and feed requests included.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FaultCounts {
    /// Answers `5xx`.
    pub server_errors: u64,
    /// Answers `429 Too Many Requests`.
    pub rate_limited: u64,
    /// Connections refused, reset or closed before the answer was whole.
    pub connection_errors: u64,
    /// No answer before the request's timeout.
    pub timeouts: u64,
    /// An answer whose body the request's timeout cut (a stalled body).
    pub stalled_bodies: u64,
    /// More redirects than allowed (a redirect loop).
    pub redirect_loops: u64,
    /// Sitemaps (or parts) malformed: truncated, broken gzip, not a sitemap.
    pub bad_sitemaps: u64,
    /// Feeds malformed: truncated.
    pub bad_feeds: u64,
    /// Fetches still under way (waiting on an answer, a body or a retry) when the unit's
    /// deadline ended the batch: the fault that cut them is not known, only that one did.
    #[serde(default)]
    pub cut_by_deadline: u64,
}

impl FaultCounts {
    pub fn is_zero(&self) -> bool {
        *self == FaultCounts::default()
    }

    pub fn add(&mut self, o: &FaultCounts) {
        self.server_errors += o.server_errors;
        self.rate_limited += o.rate_limited;
        self.connection_errors += o.connection_errors;
        self.timeouts += o.timeouts;
        self.stalled_bodies += o.stalled_bodies;
        self.redirect_loops += o.redirect_loops;
        self.bad_sitemaps += o.bad_sitemaps;
        self.bad_feeds += o.bad_feeds;
        self.cut_by_deadline += o.cut_by_deadline;
    }

    /// `self − before`.
    pub fn since(&self, b: &FaultCounts) -> FaultCounts {
        FaultCounts {
            server_errors: self.server_errors - b.server_errors,
            rate_limited: self.rate_limited - b.rate_limited,
            connection_errors: self.connection_errors - b.connection_errors,
            timeouts: self.timeouts - b.timeouts,
            stalled_bodies: self.stalled_bodies - b.stalled_bodies,
            redirect_loops: self.redirect_loops - b.redirect_loops,
            bad_sitemaps: self.bad_sitemaps - b.bad_sitemaps,
            bad_feeds: self.bad_feeds - b.bad_feeds,
            cut_by_deadline: self.cut_by_deadline - b.cut_by_deadline,
        }
    }

    /// Counts the fault a failed request met, if it was one (a status other than 429 or
    /// 5xx, a bad URL, robots.txt are not faults on the wire).
    pub fn count(&mut self, error: &FetchError) {
        match error {
            FetchError::Status { status: 429 } => self.rate_limited += 1,
            FetchError::Status { status: 500..=599 } => self.server_errors += 1,
            FetchError::Request { error } if error.is_timeout() => self.timeouts += 1,
            FetchError::Request { error } if error.is_redirect() => self.redirect_loops += 1,
            FetchError::Request { .. } => self.connection_errors += 1,
            FetchError::Body { error } if error.is_timeout() => self.stalled_bodies += 1,
            FetchError::Body { .. } => self.connection_errors += 1,
            _ => {}
        }
    }
}

/// Fault counts per host name (a reading's sitemap and feed requests, as journaled).
pub type HostFaults = std::collections::BTreeMap<String, FaultCounts>;

/// Counts per host plus the last errors seen (kept short).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct HostReport {
    #[serde(flatten)]
    pub counts: FetchCounts,
    pub(crate) last_errors: Vec<String>,
}

/// One host: its robots.txt rule and last request (the client's), its report (the counters').
#[derive(Default)]
pub(super) struct HostState {
    pub(super) robots: Option<RobotsRule>,
    pub(super) last_request: Option<Instant>,
    pub(super) report: HostReport,
}

pub(super) enum RobotsRule {
    /// The rules parsed for the crawl's user agent, and the robots.txt they were read from
    /// (what another worker of a spread crawl is told, `remote.rs`).
    Rules(Box<Robot>, Arc<[u8]>),
    AllowAll,
    /// robots.txt unreachable or 5xx: nothing may be fetched (RFC 9309 §2.3.1.4) this unit.
    DisallowAll,
}

/// A [`RobotsRule`] as it travels between the workers of a spread crawl: the robots.txt
/// itself, parsed again where it arrives.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(super) enum RobotsText {
    Rules(Vec<u8>),
    AllowAll,
    DisallowAll,
}

impl RobotsRule {
    /// The rule `body` gives for `user_agent` (everything allowed when it does not parse).
    pub(super) fn parse(user_agent: &str, body: &[u8]) -> RobotsRule {
        Robot::new(user_agent, body)
            .map(|r| RobotsRule::Rules(Box::new(r), Arc::from(body)))
            .unwrap_or(RobotsRule::AllowAll)
    }

    pub(super) fn text(&self) -> RobotsText {
        match self {
            RobotsRule::Rules(_, body) => RobotsText::Rules(body.to_vec()),
            RobotsRule::AllowAll => RobotsText::AllowAll,
            RobotsRule::DisallowAll => RobotsText::DisallowAll,
        }
    }

    pub(super) fn of_text(user_agent: &str, text: &RobotsText) -> RobotsRule {
        match text {
            RobotsText::Rules(body) => RobotsRule::parse(user_agent, body),
            RobotsText::AllowAll => RobotsRule::AllowAll,
            RobotsText::DisallowAll => RobotsRule::DisallowAll,
        }
    }

    pub(super) fn allowed(&self, url: &str) -> bool {
        match self {
            RobotsRule::Rules(r, _) => r.allowed(url),
            RobotsRule::AllowAll => true,
            RobotsRule::DisallowAll => false,
        }
    }
    pub(super) fn delay(&self) -> Option<Duration> {
        match self {
            RobotsRule::Rules(r, _) => r
                .delay
                .filter(|d| d.is_finite() && *d > 0.0)
                .map(|d| Duration::from_secs_f32(d.min(60.0))),
            _ => None,
        }
    }
}

/// `host[:port]`, lowercase, of an absolute URL.
pub fn host_of(url: &str) -> Option<String> {
    crate::corpus::url::host_and_path(url).map(|(h, _)| h)
}
