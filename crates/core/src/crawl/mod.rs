//! The crawl state: what the crawler knows of the pages it fetched, owned by the refresh loop
//! and offered read-only to policies.
//!
//! * [`CrawlState`]: what the crawler knows of every page it has fetched (held copy, last
//!   refresh, gone, visits).
//! * [`CrawlKnowledge`] ([`CrawlState::knowledge`]): what the crawler knows about its own
//!   copies — URLs, hosts, directories, the held-copy [`LinkGraph`] and its [`PageRank`].
//! * [`Frontier`]: pages met in fetched copies' links, never crawled ([`NewPages::Frontier`]).
//!
//! Fetching — the [`Fetcher`] trait and its protocol, its request and result types,
//! [`SnapshotFetcher`], the HTTP fetcher and the [`UrlCatalogue`] — lives one stage down, in
//! [`crate::fetch`]; it is re-exported here under its former paths (`crawl::Fetcher`,
//! `crawl::http::HttpFetcher`, …).

pub mod frontier;
pub mod knowledge;
pub mod link_graph;
mod state;

pub use frontier::{Frontier, FrontierPage, NewPages};
pub use knowledge::CrawlKnowledge;
pub use link_graph::{pagerank, LinkGraph, PageRank};
pub use state::{CrawlState, HeldCopy, PageCrawl};

// Fetching's former paths.
pub use crate::fetch::http;
pub use crate::fetch::{
    FetchError, FetchRequest, FetchResult, Fetched, Fetcher, SnapshotFetcher, UrlCatalogue,
    Validator,
};
