//! The caches behind [`super::CrawlKnowledge`]: URLs parsed on first use, the link graph, the
//! directory groups and the PageRank, dropped when what they are computed from changes; and
//! the environment's [`Cache`], where PageRanks are shared.

use std::sync::{Arc, OnceLock};

use crate::cache::Cache;
use crate::corpus::PageId;
use crate::crawl::link_graph::{LinkGraph, PageRank};

/// A page's host and directory, parsed from its URL on first use.
#[derive(Debug, Clone)]
pub(super) struct UrlParts {
    pub(super) host: Box<str>,
    pub(super) directory: Box<str>,
}

impl UrlParts {
    /// Host (lowercase, without port or user info) and path up to its last `/` (`/` at least);
    /// a string that is not an absolute URL has an empty host and the part up to its last `/`.
    pub(super) fn of(url: &str) -> Self {
        match url::Url::parse(url) {
            Ok(parsed) => {
                let path = parsed.path();
                let directory = match path.rfind('/') {
                    Some(i) => &path[..=i],
                    None => "/",
                };
                UrlParts {
                    host: parsed.host_str().unwrap_or("").into(),
                    directory: directory.into(),
                }
            }
            Err(_) => UrlParts {
                host: "".into(),
                directory: url.rfind('/').map_or("", |i| &url[..=i]).into(),
            },
        }
    }
}

#[derive(Debug, Clone, Default)]
pub(super) struct PageUrl {
    pub(super) url: Box<str>,
    parts: OnceLock<UrlParts>,
}

/// Held pages grouped by (host, directory).
#[derive(Debug, Clone, Default)]
pub(super) struct Directories {
    /// Group of each page id (`u32::MAX`: no held copy or no URL).
    pub(super) group_of: Vec<u32>,
    pub(super) offsets: Vec<u32>,
    pub(super) members: Vec<PageId>,
}

impl Directories {
    pub(super) fn members_of(&self, page: PageId) -> &[PageId] {
        match self.group_of.get(page as usize) {
            Some(&g) if g != u32::MAX => {
                &self.members
                    [self.offsets[g as usize] as usize..self.offsets[g as usize + 1] as usize]
            }
            _ => &[],
        }
    }
}

/// How a [`super::HeldGraph`] names a PageRank's warm start.
pub(super) enum WarmStart<'s> {
    /// None: the uniform vector.
    Uniform,
    /// The PageRank kept under this key. A key determines its vector (a PageRank is a function
    /// of what its key hashes), so naming the start by its key names its bits, without hashing
    /// a vector as long as the site at every recomputation.
    Keyed(u128),
    /// A vector computed without a key (before the state shared its PageRanks).
    Vector(&'s [f64]),
}

/// A PageRank, with its cache key when it was shared.
#[derive(Debug, Clone)]
pub(super) struct KeyedPageRank {
    pub(super) vector: Arc<PageRank>,
    pub(super) key: Option<u128>,
}

/// What a change of held copies changed ([`KnowledgeCache::held_changed`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct HeldChange {
    /// A page gained or lost its copy.
    pub(crate) pages: bool,
    /// A held copy's out-links differ from the copy it replaced.
    pub(crate) links: bool,
}

/// The caches behind [`CrawlKnowledge`], kept in the [`CrawlState`].
#[derive(Debug, Clone, Default)]
pub(crate) struct KnowledgeCache {
    pub(super) urls: Vec<PageUrl>,
    pub(super) graph: OnceLock<Arc<LinkGraph>>,
    pub(super) directories: OnceLock<Arc<Directories>>,
    pub(super) pagerank: OnceLock<KeyedPageRank>,
    /// The PageRank before the last change of the held copies: the warm start of the next.
    pub(super) previous_pagerank: Option<KeyedPageRank>,
    /// The environment's cache, where crawl states of the same corpus share PageRanks, if
    /// anywhere.
    pub(super) cache: Option<Arc<Cache>>,
}

impl KnowledgeCache {
    /// Learns the URLs of page ids `known..count` (ids only grow).
    pub(crate) fn learn_urls<'u>(&mut self, count: usize, url: impl Fn(PageId) -> &'u str) {
        for p in self.urls.len()..count {
            self.urls.push(PageUrl {
                url: url(p as PageId).into(),
                parts: OnceLock::new(),
            });
        }
    }

    /// The held copies changed: drop what was computed from what changed. The directory
    /// groups depend on the set of held pages only; the link graph and its PageRank on that
    /// set and the held copies' out-links, so a new copy with the links of the old one keeps
    /// them (a PageRank recomputed for an unchanged graph would only drift in its last bits).
    pub(crate) fn held_changed(&mut self, change: HeldChange) {
        if change.pages {
            self.directories.take();
        }
        if change.pages || change.links {
            self.graph.take();
            if let Some(pr) = self.pagerank.take() {
                self.previous_pagerank = Some(pr);
            }
        }
    }

    /// Shares PageRanks through `cache` from now on (see [`super::HeldGraph`]).
    pub(crate) fn use_cache(&mut self, cache: Arc<Cache>) {
        self.cache = Some(cache);
    }

    /// The environment's cache, if the state shares one.
    pub(crate) fn cache(&self) -> Option<&Arc<Cache>> {
        self.cache.as_ref()
    }

    pub(super) fn parts(&self, page: PageId) -> Option<&UrlParts> {
        let u = self.urls.get(page as usize)?;
        Some(u.parts.get_or_init(|| UrlParts::of(&u.url)))
    }
}
