//! Fetching: the seam between deciding what to re-download and downloading it.
//!
//! A [`Fetcher`] turns page ids into fetched copies at a time unit. The refresher
//! ([`crate::refresh::Refresher`]) is its only caller once the loop runs; it never reads the live
//! Web any other way, so what it learns in `online` mode is exactly what a deployed crawler would
//! see. What the crawler keeps of what it fetched is the crawl state ([`crate::crawl`]), one stage
//! up: it imports from here, never the other way.
//!
//! * [`SnapshotFetcher`]: the live Web replayed from WARC timelines (simulations, the server's
//!   runs and the estimate check).
//! * [`http::HttpFetcher`]: a real crawl over HTTP(S) (`refresher crawl`), a stack of layers
//!   (journal replay, WARC output, counters) around an HTTP transport (see [`http`]).
//! * [`UrlCatalogue`]: URL ↔ page id, growable for fetchers that meet new URLs.
//!
//! # Protocol
//!
//! The order of calls. Unit 0 is the initial crawl, done before the loop (a live crawl's goes
//! through this trait too, `refresher::live::initial_crawl`: `fetch` and `discover` at unit 0,
//! breadth first, as often as it takes). Then the refresh loop drives the fetcher once per unit
//! `t = 1, 2, …` (units strictly increase), in this order:
//!
//! 1. [`Fetcher::page_count`] and [`Fetcher::url`]: the loop learns the URLs of the ids allocated
//!    so far (they may have grown during the previous unit).
//!    Then [`Fetcher::signals`]: what the site's sitemap and feed say at `t` (before the
//!    policy chooses).
//! 2. [`Fetcher::fetch`] with the unit's refresh batch: distinct pages, each with the
//!    [`Validator`] of the copy the repository holds (`None` when it holds none). The fetcher
//!    returns exactly one [`Fetched`] per request, in request order. For a policy that plays
//!    in rounds (`RefreshPolicy::rounds`) the batch comes as one `fetch` per round, at the
//!    same unit; the pages of all rounds are distinct and the validators are those of the
//!    copies held at the start of the unit (nothing is applied between rounds).
//! 3. [`Fetcher::discover`] (only when the loop crawls new pages outside the budget; never in
//!    frontier mode, [`crate::crawl::NewPages::Frontier`], where new pages are met in fetched
//!    copies' links and fetched in step 2 like refreshes): pages that became reachable at `t`
//!    and that the loop neither holds nor fetched in step 2. Their first copies are then
//!    fetched in a second [`Fetcher::fetch`] call at the same unit, without validators.
//! 4. [`Fetcher::vocabulary`], before the unit's copies are applied: the term ids of every copy
//!    returned so far refer to it.
//!
//! Guarantees a fetcher gives:
//!
//! * results are owned (a fetch lends nothing, so an HTTP fetcher can implement the trait);
//! * one result per request, in request order, whatever fails: a failure is a
//!   [`FetchResult::Failed`], never a missing entry, a panic or a stalled unit;
//! * the same `(page, unit, validator)` gives the same answer (snapshot fetchers are
//!   deterministic; a resumed crawl replays its journal);
//! * a [`FetchResult::NotModified`] is only answered when the validator names the copy the live
//!   Web still shows (a conditional GET's 304, or a body that hashes to the held copy);
//! * page ids are dense, never reused, and [`Fetcher::page_count`] never shrinks.
//!
//! What must never be read: a fetcher answers for the unit it is asked about and nothing else.
//! Policies never hold a fetcher; in `online` mode nothing a fetcher did not return at a unit
//! reaches them.

mod catalogue;
pub mod http;
mod snapshot;

use std::sync::Arc;

pub use catalogue::UrlCatalogue;
pub use snapshot::SnapshotFetcher;

use crate::corpus::{PageId, PageVersion, Unit};
use crate::signal::SignalReading;
use crate::text::Vocabulary;

/// What identifies the copy the repository holds, sent with a fetch so the server can answer
/// "not modified" (HTTP's `If-Modified-Since` / `If-None-Match`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Validator {
    /// Capture time of the held copy (seconds since the Unix epoch): `Last-Modified`.
    pub(crate) captured: i64,
    /// xxh3 of the held copy's body: the strong `ETag`.
    pub(crate) content_hash: u64,
}

impl Validator {
    /// The validator of a held copy.
    pub(crate) fn of(version: &PageVersion) -> Self {
        Validator {
            captured: version.capture_time,
            content_hash: version.content_hash,
        }
    }
}

/// One page to fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchRequest {
    pub page: PageId,
    /// The held copy's validator; `None` when the repository holds no copy.
    pub validator: Option<Validator>,
}

/// What a fetch brought back.
#[derive(Debug, Clone)]
pub enum FetchResult {
    /// A copy other than the held one (or the first copy).
    Copy(Arc<PageVersion>),
    /// The held copy is still the live one (HTTP 304).
    NotModified,
    /// The page does not exist (now): 404/410, or not created yet.
    Gone,
    /// The fetch failed (unreachable host, timeout, robots.txt, the unit's deadline…): nothing
    /// was learnt. The loop keeps the held copy and observes the refresh as finding no change.
    Failed(FetchError),
}

/// Why a fetch learnt nothing ([`FetchResult::Failed`]). Its text is what a crawl's host
/// report and journal record.
#[derive(Debug, Clone, thiserror::Error)]
pub enum FetchError {
    /// robots.txt disallows the URL (or could not be read: then the host's every URL).
    #[error("disallowed by robots.txt")]
    Disallowed,
    /// The unit's deadline passed before the fetch was done.
    #[error("the unit's deadline passed before this fetch")]
    Deadline,
    /// A URL that does not parse.
    #[error("{url}: {error}")]
    BadUrl { url: String, error: url::ParseError },
    /// A URL without a host.
    #[error("{url}: no host")]
    NoHost { url: String },
    /// No answer: connection failed, timeout, too many redirects (the text names the causes).
    #[error("{}", error_text(.error))]
    Request { error: Arc<reqwest::Error> },
    /// An answer whose status is neither a success nor 304, 404 or 410.
    #[error("status {status}")]
    Status { status: u16 },
    /// A body longer than the limit (`HttpOptions::max_body_bytes`).
    #[error("body over {max} bytes")]
    BodyTooLarge { max: usize },
    /// A body that could not be read or decoded (broken gzip).
    #[error("reading the body: {}", error_text(.error))]
    Body { error: Arc<reqwest::Error> },
    /// A failure replayed from the crawl's journal, in the words it was recorded.
    #[error("{0}")]
    Recorded(String),
}

/// An error with its causes (reqwest's own text omits them).
fn error_text(e: &reqwest::Error) -> String {
    let mut text = if e.is_timeout() {
        "timeout".to_string()
    } else if e.is_redirect() {
        "too many redirects".to_string()
    } else if e.is_connect() {
        "connection failed".to_string()
    } else {
        e.to_string()
    };
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// The answer to one [`FetchRequest`].
#[derive(Debug, Clone)]
pub struct Fetched {
    pub page: PageId,
    pub result: FetchResult,
}

/// Fetches pages from the live Web at a time unit. See the module docs for the protocol.
pub trait Fetcher: Send {
    /// Number of page ids allocated so far (ids are `0..page_count()`). May grow between calls
    /// as the fetcher meets new URLs; never shrinks.
    fn page_count(&self) -> usize;
    /// The URL of an allocated page id.
    fn url(&self, page: PageId) -> &str;
    /// One result per request, in request order.
    fn fetch(&mut self, unit: Unit, requests: &[FetchRequest]) -> Vec<Fetched>;
    /// Pages first reachable at `unit` that `known` says the crawler neither holds nor has
    /// just fetched, ascending.
    fn discover(&mut self, unit: Unit, known: &dyn Fn(PageId) -> bool) -> Vec<PageId>;
    /// The vocabulary the fetched copies' term ids refer to, when the fetcher grows its own
    /// (a crawl meets words no snapshot held); it extends the one it started from. `None`:
    /// the repository's vocabulary already holds every term (snapshots).
    fn vocabulary(&self) -> Option<&Arc<Vocabulary>> {
        None
    }
    /// The change signals the site publishes, read at `unit` before the unit's fetches (its
    /// sitemap's `<lastmod>` dates, its change feed; see [`crate::signal`]): what is new since
    /// the previous read. They reflect only changes up to `unit` minus the channel's delay.
    /// `None`: this fetcher reads no signals.
    fn signals(&mut self, _unit: Unit) -> Option<SignalReading> {
        None
    }
}
