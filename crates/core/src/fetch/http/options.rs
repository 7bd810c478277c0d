//! What an [`HttpFetcher`](super::HttpFetcher) is built with: its [`HttpOptions`] (the
//! [`Discovery`] among them), and why building it can fail ([`FetcherError`]).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use crate::signal::DateClock;

/// How a crawl learns of pages after its initial crawl.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Discovery {
    /// Only the initial URLs.
    None,
    /// Re-read these sitemaps every unit; URLs newly listed are the unit's new pages.
    Sitemaps(Vec<String>),
    /// Out-links of fetched pages, on the hosts of the initial URLs.
    Links,
}

/// Settings of the fetch stack.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    pub user_agent: String,
    /// Per request (connect + headers + body).
    pub timeout: Duration,
    /// Bodies longer than this (decoded) fail the fetch.
    pub max_body_bytes: usize,
    pub max_redirects: usize,
    /// Least time between two requests to one host (politeness); robots.txt `Crawl-delay`
    /// raises it for its host.
    pub min_host_delay: Duration,
    /// Retries after a connection error, a timeout, 429 or 5xx (with backoff 250 ms · 2^k).
    pub retries: u32,
    /// Requests for these hosts go, as plain HTTP, to these addresses (`--resolve`), whatever
    /// the URL's scheme: how a crawl reaches `web-replay`.
    pub resolve: HashMap<String, SocketAddr>,
    pub obey_robots: bool,
    pub discovery: Discovery,
    /// Most new pages discovery may add in one unit.
    pub max_new_per_unit: usize,
    /// Read the sites' change signals every unit ([`crate::fetch::Fetcher::signals`]): the
    /// `<lastmod>` of the sitemaps (the discovery's, and those robots.txt names) and the
    /// feeds (robots.txt `Sitemap:` lines naming Atom or RSS feeds, and [`Self::feeds`]).
    pub read_signals: bool,
    /// Atom or RSS feeds to read besides those robots.txt names (`--feed`).
    pub feeds: Vec<String>,
    /// The clock dates are read on: a date is the unit it falls in.
    pub date_clock: DateClock,
    /// Largest sitemap or feed, as sent and decompressed (sitemaps.org's 50 MiB).
    pub max_document_bytes: usize,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            user_agent: concat!("refresher/", env!("CARGO_PKG_VERSION")).into(),
            timeout: Duration::from_secs(10),
            max_body_bytes: 8 << 20,
            max_redirects: 5,
            min_host_delay: Duration::from_millis(1000),
            retries: 2,
            resolve: HashMap::new(),
            obey_robots: true,
            discovery: Discovery::None,
            max_new_per_unit: 10_000,
            read_signals: false,
            feeds: Vec::new(),
            date_clock: DateClock {
                origin: 0.0,
                unit_seconds: 1.0,
            },
            max_document_bytes: 50 << 20,
        }
    }
}

/// Why an [`HttpFetcher`](super::HttpFetcher) could not be built.
#[derive(Debug, thiserror::Error)]
pub enum FetcherError {
    /// The HTTP client could not be built.
    #[error(transparent)]
    Client(#[from] reqwest::Error),
    /// The fetcher's runtime could not start.
    #[error(transparent)]
    Runtime(#[from] std::io::Error),
}
