//! The table of hosts a crawl met, shared (under one lock) by the HTTP client — each host's
//! robots.txt rule and last request, for politeness — and the counters — each host's
//! [`HostReport`]; and what the counters count, [`FetchCounts`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use texting_robots::Robot;

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
}

/// Counts per host plus the last errors seen (kept short).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct HostReport {
    #[serde(flatten)]
    pub counts: FetchCounts,
    pub last_errors: Vec<String>,
}

/// One host: its robots.txt rule and last request (the client's), its report (the counters').
#[derive(Default)]
pub(super) struct HostState {
    pub(super) robots: Option<RobotsRule>,
    pub(super) last_request: Option<Instant>,
    pub(super) report: HostReport,
}

pub(super) enum RobotsRule {
    Rules(Box<Robot>),
    AllowAll,
    /// robots.txt unreachable or 5xx: nothing may be fetched (RFC 9309 §2.3.1.4) this unit.
    DisallowAll,
}

impl RobotsRule {
    pub(super) fn allowed(&self, url: &str) -> bool {
        match self {
            RobotsRule::Rules(r) => r.allowed(url),
            RobotsRule::AllowAll => true,
            RobotsRule::DisallowAll => false,
        }
    }
    pub(super) fn delay(&self) -> Option<Duration> {
        match self {
            RobotsRule::Rules(r) => r
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
