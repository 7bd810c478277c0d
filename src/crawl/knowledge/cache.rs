//! The caches behind [`super::CrawlKnowledge`]: URLs parsed on first use, the link graph, the
//! directory groups and the PageRank, dropped when what they are computed from changes, and
//! PageRanks shared by the crawl states of one corpus ([`SharedPageRanks`]).

use std::sync::{Arc, OnceLock};

use crate::corpus::{PageId, Unit};
use crate::crawl::link_graph::{LinkGraph, PageRank};
use crate::memo::{key_of, write_held_units, SharedMemo};

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

/// PageRanks shared by the crawl states of one corpus, keyed by what determines them: the
/// version of every held copy (the graph) and the warm start. See the module docs and
/// [`SharedMemo`].
///
/// Copies are named by page and version unit, which name one version only within one corpus:
/// crawl states of different corpora must not share a store.
#[derive(Debug)]
pub struct SharedPageRanks(SharedMemo<PageRank>);

/// Bytes of PageRank vectors a [`SharedPageRanks`] keeps by default: about 4,800 vectors of
/// a 7,000-page site.
pub const SHARED_PAGERANK_BYTES: usize = 256 << 20;

impl Default for SharedPageRanks {
    fn default() -> Self {
        Self::with_max_bytes(SHARED_PAGERANK_BYTES)
    }
}

impl SharedPageRanks {
    pub fn with_max_bytes(max_bytes: usize) -> Self {
        SharedPageRanks(SharedMemo::with_max_bytes(max_bytes))
    }

    /// The key of the PageRank of the held copies (`held_units`: each page's held version
    /// unit, over `pages` pages) started from `start`.
    pub(super) fn key(
        pages: usize,
        held_units: impl ExactSizeIterator<Item = Option<Unit>>,
        start: &WarmStart<'_>,
    ) -> u128 {
        let start_bytes = match start {
            WarmStart::Uniform => 1,
            WarmStart::Keyed(_) => 17,
            WarmStart::Vector(scores) => 1 + 8 * scores.len(),
        };
        key_of(8 + 4 * pages + start_bytes, |bytes| {
            bytes.extend_from_slice(&(pages as u64).to_le_bytes());
            write_held_units(bytes, held_units);
            match start {
                WarmStart::Uniform => bytes.push(0),
                WarmStart::Vector(scores) => {
                    bytes.push(1);
                    for x in *scores {
                        bytes.extend_from_slice(&x.to_bits().to_le_bytes());
                    }
                }
                WarmStart::Keyed(key) => {
                    bytes.push(2);
                    bytes.extend_from_slice(&key.to_le_bytes());
                }
            }
        })
    }

    /// The PageRank under `key`, computed by `compute` when no state shared it yet.
    pub(super) fn get_or_compute(
        &self,
        key: u128,
        compute: impl FnOnce() -> PageRank,
    ) -> Arc<PageRank> {
        self.0.get_or_compute(key, compute, |pr| {
            std::mem::size_of::<PageRank>() + 8 * pr.scores.len()
        })
    }

    /// PageRanks kept.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// How a [`SharedPageRanks`] key names a PageRank's warm start.
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

/// A PageRank, with its [`SharedPageRanks`] key when it was shared.
#[derive(Debug, Clone)]
pub(super) struct KeyedPageRank {
    pub(super) vector: Arc<PageRank>,
    pub(super) key: Option<u128>,
}

/// What a change of held copies changed ([`KnowledgeCache::held_changed`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct HeldChange {
    /// A page gained or lost its copy.
    pub pages: bool,
    /// A held copy's out-links differ from the copy it replaced.
    pub links: bool,
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
    /// Where PageRanks computed by crawl states of the same corpus are shared, if anywhere.
    pub(super) shared_pageranks: Option<Arc<SharedPageRanks>>,
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

    /// Shares PageRanks through `shared` from now on (see [`SharedPageRanks`]).
    pub(crate) fn share_pageranks(&mut self, shared: Arc<SharedPageRanks>) {
        self.shared_pageranks = Some(shared);
    }

    pub(super) fn parts(&self, page: PageId) -> Option<&UrlParts> {
        let u = self.urls.get(page as usize)?;
        Some(u.parts.get_or_init(|| UrlParts::of(&u.url)))
    }
}
