//! What the sampling policies read of the crawler's knowledge of its own copies: the pages it
//! may refresh, their URLs, the held copies, the held-copy link graph and its PageRank. One
//! trait, so the policies' algorithms are tested on hand-made sites and the refresh loop's
//! knowledge view plugs in through one adapter.

use std::sync::Arc;

use crate::cluster::features::{CopyFacts, FileType};
use crate::corpus::{PageId, PageVersion};

use super::granularity::LinkGraph;

/// The crawler's knowledge as the sampling policies read it.
pub trait SamplingView: LinkGraph {
    /// The pages a policy may refresh now (held or fetched before, not last seen gone), in
    /// page-id order.
    fn candidates(&self) -> Vec<PageId>;
    /// The page's URL.
    fn url(&self, page: PageId) -> &str;
    /// The copy the repository holds, if any.
    fn held(&self, page: PageId) -> Option<&Arc<PageVersion>>;
    /// PageRank of the page in the held-copy link graph (paper 000 Eq. 2).
    fn pagerank(&self, page: PageId) -> f64;
}

/// The counts of the held copy of `page` that paper 000's features read (§3.1), with its
/// linkage in the held-copy graph. Words and bytes come from the copy's visible text; images,
/// tables and e-mail addresses from the structural counts of the copy when the corpus records
/// them (0 otherwise).
pub(crate) fn copy_facts(
    view: &(impl SamplingView + ?Sized),
    page: PageId,
    copy: &PageVersion,
) -> CopyFacts {
    CopyFacts {
        images: copy.counts.images,
        tables: copy.counts.tables,
        words: copy.counts.words,
        text_bytes: copy.counts.text_bytes as u64,
        emails: copy.counts.emails,
        pagerank: view.pagerank(page),
        in_links: view.in_links(page).len() as u32,
        out_links: copy.links.len() as u32,
    }
}

/// The file type of a held copy, as ingest (or the crawl) recorded it.
pub(crate) fn file_type(copy: &PageVersion) -> FileType {
    copy.counts.content_type
}

/// A hand-made site for the policies' tests: URLs, copies and links, PageRank uniform.
#[cfg(test)]
pub(crate) mod testsite {
    use super::*;

    pub(crate) struct Site {
        pub(crate) urls: Vec<String>,
        pub(crate) copies: Vec<Arc<PageVersion>>,
        pub(crate) out: Vec<Vec<PageId>>,
        pub(crate) inl: Vec<Vec<PageId>>,
        pub(crate) gone: Vec<bool>,
    }

    impl Site {
        /// Pages at `urls` with `links` (from, to) and one distinct term per page (its index).
        pub(crate) fn new(urls: &[&str], links: &[(PageId, PageId)]) -> Self {
            let n = urls.len();
            let mut out = vec![Vec::new(); n];
            let mut inl = vec![Vec::new(); n];
            for &(a, b) in links {
                out[a as usize].push(b);
                inl[b as usize].push(a);
            }
            // Copies read as ingest reads a capture (robust to new fields of a version).
            let mut analyzer = crate::text::Analyzer::new();
            let mut vocabulary = crate::text::Vocabulary::new();
            let link_id = |u: &str| urls.iter().position(|&v| v == u).map(|i| i as PageId);
            let copies = (0..n)
                .map(|p| {
                    let anchors: String = out[p]
                        .iter()
                        .map(|&q| format!("<a href=\"{}\">link</a> ", urls[q as usize]))
                        .collect();
                    let body = format!(
                        "<html><head><title>p{p}</title></head><body><p>page {p} words</p>{anchors}</body></html>"
                    );
                    let (version, _) = crate::corpus::html::page_version_from_html(
                        &mut analyzer,
                        &mut vocabulary,
                        urls[p],
                        p as PageId,
                        (0, 0),
                        body.as_bytes(),
                        Some("text/html"),
                        &link_id,
                    );
                    Arc::new(version)
                })
                .collect();
            Site {
                urls: urls.iter().map(|u| u.to_string()).collect(),
                copies,
                out,
                inl,
                gone: vec![false; n],
            }
        }
    }

    impl LinkGraph for Site {
        fn out_links(&self, page: PageId) -> &[PageId] {
            &self.out[page as usize]
        }
        fn in_links(&self, page: PageId) -> &[PageId] {
            &self.inl[page as usize]
        }
    }

    impl SamplingView for Site {
        fn candidates(&self) -> Vec<PageId> {
            (0..self.urls.len() as PageId)
                .filter(|&p| !self.gone[p as usize])
                .collect()
        }
        fn url(&self, page: PageId) -> &str {
            &self.urls[page as usize]
        }
        fn held(&self, page: PageId) -> Option<&Arc<PageVersion>> {
            self.copies.get(page as usize)
        }
        fn pagerank(&self, _page: PageId) -> f64 {
            1.0 / self.urls.len() as f64
        }
    }
}
