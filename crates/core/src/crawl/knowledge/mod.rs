//! [`CrawlKnowledge`]: what the crawler knows about its own copies, as one read-only view
//! ([`CrawlState::knowledge`]) offered to policies in `prepare` (through
//! [`crate::policy::PolicyContext::crawl`]), `choose`, `choose_with_frontier` and `choose_round`.
//!
//! Legitimate in both fit modes: a crawler owns its copies and the URLs it met, so nothing here
//! comes from the live Web. It offers, per page:
//!
//! * the URL (from the fetcher, [`crate::fetch::Fetcher::url`]), its host (the *site*) and its
//!   directory (the URL path up to and including its last `/`), for pages the crawler has met
//!   (held, fetched before, or linked from a fetched copy in frontier mode) — never for an id it
//!   has no reason to know;
//! * the held copy ([`PageVersion`]: title, text, terms, out-links, capture time);
//! * the link graph of held copies ([`LinkGraph`]: out-links and in-links within the
//!   repository), the pages sharing a directory, and the graph's PageRank
//!   ([`super::link_graph::pagerank`]).
//!
//! # Cost
//!
//! Nothing is computed until a policy (or the judge) asks: the graph, the directory groups and
//! the PageRank are built on first use and cached until what they are computed from changes:
//! the graph and PageRank when a page gained or lost its copy or a new copy's out-links differ
//! from the old one's (the end of a unit that fetched such a copy, found a page gone, or
//! crawled a new page); the directory groups only when a page gained or lost its copy. A
//! recomputed
//! PageRank starts from the previous one (warm start), which cuts its steps several-fold when
//! few copies changed. URLs are parsed into host and directory on first use, per page.
//!
//! Crawl states of one corpus (the runs of a simulation sweep) may share their PageRanks
//! through the environment's cache ([`CrawlState::use_cache`]): a PageRank is a function of the
//! held copies and of the warm start, so a run whose copies and warm start are another run's
//! reads that run's PageRank instead of computing it again — the same vector, bit for bit.
//!
//! # What a policy sees during a unit
//!
//! The view is the repository as of the start of the unit: copies fetched in the unit's rounds
//! (see [`crate::policy`], rounds) reach the policy through their
//! [`crate::policy::ProbeOutcome`] only, and join the view when the unit's batch has been
//! applied, so every page's held copy is the one the index holds.

use std::collections::HashMap;
use std::sync::Arc;

pub(crate) mod cache;

use crate::corpus::{PageId, PageVersion};

use super::link_graph::{pagerank, LinkGraph, PageRank, PAGERANK_DAMPING, PAGERANK_TOLERANCE};
use super::state::CrawlState;
use crate::cache::{write_held_units, CacheKey};
use cache::{Directories, KeyedPageRank, KnowledgeCache, WarmStart};

impl CrawlState {
    /// What the crawler knows about its own copies: URLs, hosts, directories, held copies,
    /// their link graph and its PageRank (see [`CrawlKnowledge`]).
    pub fn knowledge(&self) -> CrawlKnowledge<'_> {
        CrawlKnowledge::new(self)
    }
}

/// What the crawler knows about its own copies (see the module docs). Cheap to copy.
#[derive(Debug, Clone, Copy)]
pub struct CrawlKnowledge<'a> {
    crawl: &'a CrawlState,
}

impl<'a> CrawlKnowledge<'a> {
    pub(crate) fn new(crawl: &'a CrawlState) -> Self {
        CrawlKnowledge { crawl }
    }

    fn cache(&self) -> &'a KnowledgeCache {
        self.crawl.knowledge_cache()
    }

    /// Whether the crawler has met `page`: it holds a copy, fetched it before, or (frontier
    /// mode) met it in a link.
    pub(crate) fn has_met(&self, page: PageId) -> bool {
        let r = self.crawl.page(page);
        r.held.is_some()
            || r.visits > 0
            || r.gone
            || r.last_refresh > 0
            || self.crawl.in_frontier(page)
    }

    /// The URL of a page the crawler has met.
    pub fn url(&self, page: PageId) -> Option<&'a str> {
        if !self.has_met(page) {
            return None;
        }
        self.cache().urls.get(page as usize).map(|u| &*u.url)
    }

    /// The host (site) of a page the crawler has met: lowercase, without port.
    pub fn host(&self, page: PageId) -> Option<&'a str> {
        if !self.has_met(page) {
            return None;
        }
        self.cache().parts(page).map(|p| &*p.host)
    }

    /// The directory of a page the crawler has met: its URL path up to and including the last
    /// `/` (`/emacs/` for `https://www.emacswiki.org/emacs/Foo`).
    pub fn directory(&self, page: PageId) -> Option<&'a str> {
        if !self.has_met(page) {
            return None;
        }
        self.cache().parts(page).map(|p| &*p.directory)
    }

    /// The copy the repository holds (title, text, terms, out-links…).
    pub fn held_copy(&self, page: PageId) -> Option<&'a PageVersion> {
        self.crawl.held(page).map(|h| &*h.version)
    }

    /// The link graph of held copies (built on first use, see the module docs).
    pub fn graph(&self) -> &'a LinkGraph {
        let crawl = self.crawl;
        self.cache().graph.get_or_init(|| {
            Arc::new(LinkGraph::build(crawl.len(), |p| {
                crawl.held(p).map(|h| &h.version.links[..])
            }))
        })
    }

    /// Links of `page`'s held copy to pages the repository holds.
    pub(crate) fn out_links(&self, page: PageId) -> &'a [PageId] {
        self.graph().out_links(page)
    }

    /// Held pages whose held copy links to `page` (in-links within the repository).
    pub fn in_links(&self, page: PageId) -> &'a [PageId] {
        self.graph().in_links(page)
    }

    /// The held pages of `page`'s host and directory, `page` included when held, ascending
    /// (empty when `page` is not held).
    pub fn same_directory(&self, page: PageId) -> &'a [PageId] {
        self.directories().members_of(page)
    }

    /// Per page id, the number of its host and directory among the held pages' (dense from 0,
    /// in the order of their first held page), or `u32::MAX` for a page not held: the groups
    /// of [`same_directory`](Self::same_directory) as ids.
    pub(crate) fn directory_ids(&self) -> &'a [u32] {
        &self.directories().group_of
    }

    /// The directory groups of held pages (built on first use).
    fn directories(&self) -> &'a Directories {
        let crawl = self.crawl;
        let cache = self.cache();
        cache.directories.get_or_init(|| {
            let mut index: HashMap<(&str, &str), u32> = HashMap::new();
            let mut group_of = vec![u32::MAX; crawl.len()];
            let mut sizes: Vec<u32> = Vec::new();
            for p in crawl.held_pages() {
                let Some(parts) = cache.parts(p) else {
                    continue;
                };
                let next = sizes.len() as u32;
                let g = *index.entry((&parts.host, &parts.directory)).or_insert(next);
                if g == next {
                    sizes.push(0);
                }
                sizes[g as usize] += 1;
                group_of[p as usize] = g;
            }
            let mut offsets = vec![0u32];
            for s in &sizes {
                offsets.push(offsets.last().unwrap() + s);
            }
            let mut fill = offsets.clone();
            let mut members = vec![0; *offsets.last().unwrap() as usize];
            // Pages come ascending, so each group's members do too.
            for (p, &g) in group_of.iter().enumerate() {
                if g != u32::MAX {
                    members[fill[g as usize] as usize] = p as PageId;
                    fill[g as usize] += 1;
                }
            }
            Arc::new(Directories {
                group_of,
                offsets,
                members,
            })
        })
    }

    /// The siblings of `page`: the other held pages of its host and directory.
    pub fn siblings(&self, page: PageId) -> impl Iterator<Item = PageId> + 'a {
        self.same_directory(page)
            .iter()
            .copied()
            .filter(move |&q| q != page)
    }

    /// The PageRank of the held-copy graph (damping [`PAGERANK_DAMPING`], tolerance
    /// [`PAGERANK_TOLERANCE`]), indexed by page id, 0 for pages not held; sums to 1 over the
    /// held pages. Computed on first use after the held copies changed, warm-started from the
    /// previous vector.
    pub fn pagerank(&self) -> &'a [f64] {
        &self.pagerank_result().scores
    }

    /// [`pagerank`](Self::pagerank) with the number of power-iteration steps it took.
    pub fn pagerank_result(&self) -> &'a PageRank {
        let cache = self.cache();
        let keyed = cache.pagerank.get_or_init(|| {
            let previous = cache.previous_pagerank.as_ref();
            let start = previous.map(|p| &p.vector.scores[..]);
            let compute = || pagerank(self.graph(), PAGERANK_DAMPING, PAGERANK_TOLERANCE, start);
            match &cache.cache {
                Some(shared) => {
                    let start = match previous {
                        None => WarmStart::Uniform,
                        Some(KeyedPageRank { key: Some(key), .. }) => WarmStart::Keyed(*key),
                        Some(p) => WarmStart::Vector(&p.vector.scores),
                    };
                    let inputs = HeldGraph {
                        crawl: self.crawl,
                        start,
                    };
                    let (vector, key) = shared.get_or_compute(&inputs, compute);
                    KeyedPageRank {
                        vector,
                        key: Some(key),
                    }
                }
                None => KeyedPageRank {
                    vector: Arc::new(compute()),
                    key: None,
                },
            }
        });
        &keyed.vector
    }

    /// Pages with a held copy, ascending.
    pub fn held_pages(&self) -> impl Iterator<Item = PageId> + 'a {
        self.crawl.held_pages()
    }
}

/// What a PageRank of the held copies is computed from, and so the key under which the crawl
/// states of one corpus (the runs of a sweep) share it in the environment's [`Cache`]: the
/// version of every held copy (which fixes the graph) and the warm start.
///
/// Copies are named by page and version unit, which name one version only within one corpus:
/// crawl states of different corpora must not share a cache.
struct HeldGraph<'a> {
    crawl: &'a CrawlState,
    start: WarmStart<'a>,
}

/// Bytes of PageRank vectors the cache keeps: about 4,800 vectors of a 7,000-page site.
pub(crate) const SHARED_PAGERANK_BYTES: usize = 256 << 20;

impl CacheKey for HeldGraph<'_> {
    type Value = PageRank;
    const STORE: &'static str = "pageranks";
    const MAX_BYTES: usize = SHARED_PAGERANK_BYTES;

    fn write_key(&self, bytes: &mut Vec<u8>) {
        let pages = self.crawl.len();
        bytes.extend_from_slice(&(pages as u64).to_le_bytes());
        write_held_units(bytes, self.crawl.held_units(pages));
        match self.start {
            WarmStart::Uniform => bytes.push(0),
            WarmStart::Vector(scores) => {
                bytes.push(1);
                for x in scores {
                    bytes.extend_from_slice(&x.to_bits().to_le_bytes());
                }
            }
            WarmStart::Keyed(key) => {
                bytes.push(2);
                bytes.extend_from_slice(&key.to_le_bytes());
            }
        }
    }

    fn key_len(&self) -> usize {
        let start = match self.start {
            WarmStart::Uniform => 1,
            WarmStart::Keyed(_) => 17,
            WarmStart::Vector(scores) => 1 + 8 * scores.len(),
        };
        8 + 4 * self.crawl.len() + start
    }

    fn value_bytes(pr: &PageRank) -> usize {
        std::mem::size_of::<PageRank>() + 8 * pr.scores.len()
    }
}

#[cfg(test)]
mod tests {
    use super::cache::UrlParts;
    use super::*;
    use crate::corpus::Unit;
    use crate::crawl::HeldCopy;
    use crate::index::testutil;
    use crate::text::Vocabulary;

    fn version(unit: Unit, links: Vec<PageId>) -> Arc<PageVersion> {
        Arc::new(testutil::version(
            &mut Vocabulary::new(),
            unit,
            "t",
            "x",
            links,
        ))
    }

    const URLS: [&str; 5] = [
        "https://h.org/a/b/s.html",
        "https://H.org:8080/a/b/x.html",
        "https://h.org/a/y.html",
        "http://other.net/",
        "https://h.org/a/b/never.html",
    ];

    fn state() -> CrawlState {
        let mut crawl = CrawlState::with_initial_crawl(
            5,
            [
                (0, version(0, vec![1, 2, 4])),
                (1, version(0, vec![0])),
                (2, version(0, vec![0, 3])),
                (3, version(0, vec![])),
            ],
        );
        crawl.learn_urls(5, |p| URLS[p as usize]);
        crawl
    }

    #[test]
    fn urls_hosts_and_directories_of_met_pages_only() {
        let crawl = state();
        let k = crawl.knowledge();
        assert_eq!(k.url(0), Some(URLS[0]));
        assert_eq!(k.host(1), Some("h.org"));
        assert_eq!(k.directory(1), Some("/a/b/"));
        assert_eq!(k.directory(2), Some("/a/"));
        assert_eq!(k.host(3), Some("other.net"));
        assert_eq!(k.directory(3), Some("/"));
        // Page 4 was never fetched nor met: the crawler has no reason to know its URL.
        assert_eq!(k.url(4), None);
        assert_eq!(k.host(4), None);
        assert_eq!(
            UrlParts::of("no-scheme/dir/x").directory.as_ref(),
            "no-scheme/dir/"
        );
    }

    #[test]
    fn graph_siblings_and_pagerank_follow_the_held_copies() {
        let mut crawl = state();
        let k = crawl.knowledge();
        assert_eq!(k.out_links(0), &[1, 2]);
        assert_eq!(k.in_links(0), &[1, 2]);
        assert_eq!(k.same_directory(0), &[0, 1]);
        assert_eq!(k.siblings(1).collect::<Vec<_>>(), vec![0]);
        assert_eq!(k.siblings(2).count(), 0);
        assert_eq!(k.same_directory(4), &[] as &[PageId]);
        let before = k.pagerank().to_vec();
        assert!((before.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        assert!(before[0] > before[1] && before[4] == 0.0);
        // Page 1's new copy drops its link to 0; page 2 disappears.
        crawl.record_refresh(1, 1, Some(HeldCopy::new(version(1, vec![]))), true);
        crawl.record_refresh(2, 1, None, true);
        let k = crawl.knowledge();
        assert_eq!(k.in_links(0), &[] as &[PageId]);
        assert_eq!(k.out_links(0), &[1]);
        assert_eq!(k.same_directory(1), &[0, 1]);
        let after = k.pagerank();
        assert_eq!(after[2], 0.0);
        assert!((after.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        assert!(after[1] > after[0], "{after:?}");
        // Gone pages stay met: the crawler knows their URL.
        assert_eq!(k.url(2), Some(URLS[2]));
    }

    fn bits(scores: &[f64]) -> Vec<u64> {
        scores.iter().map(|x| x.to_bits()).collect()
    }

    /// Page 1's new copy drops its links (unit 1); page 2 disappears (unit 2).
    fn step(crawl: &mut CrawlState, unit: Unit) {
        match unit {
            1 => crawl.record_refresh(1, 1, Some(HeldCopy::new(version(1, vec![]))), true),
            _ => crawl.record_refresh(2, 2, None, true),
        };
    }

    #[test]
    fn states_sharing_pageranks_read_the_vectors_they_would_compute() {
        let shared = Arc::new(crate::cache::Cache::new());
        let sharing = || {
            let mut crawl = state();
            crawl.use_cache(Arc::clone(&shared));
            crawl
        };
        let kept = |cache: &crate::cache::Cache| cache.stats()["pageranks"].kept;
        let (mut alone, mut a, mut b) = (state(), sharing(), sharing());
        for unit in 0..3 {
            if unit > 0 {
                for crawl in [&mut alone, &mut a, &mut b] {
                    step(crawl, unit);
                }
            }
            let expected = bits(alone.knowledge().pagerank());
            assert_eq!(bits(a.knowledge().pagerank()), expected, "unit {unit}");
            assert_eq!(bits(b.knowledge().pagerank()), expected, "unit {unit}");
            // b read a's vector rather than computing its own.
            let (pa, pb) = (a.knowledge().pagerank(), b.knowledge().pagerank());
            assert!(std::ptr::eq(pa.as_ptr(), pb.as_ptr()), "unit {unit}");
            assert_eq!(kept(&shared), unit as usize + 1);
        }
        // The same copies reached without a PageRank in between: another warm start, so its
        // own vector, the one a state alone computes on that route.
        let (mut alone, mut c) = (state(), sharing());
        for crawl in [&mut alone, &mut c] {
            crawl.knowledge().pagerank();
            step(crawl, 1);
            step(crawl, 2);
        }
        assert_eq!(
            bits(c.knowledge().pagerank()),
            bits(alone.knowledge().pagerank())
        );
        assert!(!std::ptr::eq(
            c.knowledge().pagerank().as_ptr(),
            a.knowledge().pagerank().as_ptr()
        ));
        assert_eq!(kept(&shared), 4);
        // A state that computed its warm start before it shared: the start is named by its
        // bits, and the vector is again the one a state alone computes.
        let (mut alone, mut e) = (state(), state());
        for crawl in [&mut alone, &mut e] {
            crawl.knowledge().pagerank();
            step(crawl, 1);
        }
        e.use_cache(Arc::clone(&shared));
        assert_eq!(
            bits(e.knowledge().pagerank()),
            bits(alone.knowledge().pagerank())
        );
        assert_eq!(kept(&shared), 5);
    }
}
