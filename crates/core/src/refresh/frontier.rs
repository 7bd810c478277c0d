//! The refresher's part of frontier mode ([`NewPages::Frontier`]): filling the frontier from the
//! links of the copies it fetched, annotated with what the crawler knows of a URL before
//! fetching it (see [`crate::crawl::frontier`]).
//!
//! [`NewPages::Frontier`]: crate::crawl::NewPages::Frontier

use crate::corpus::{PageId, PageVersion, Unit};
use crate::crawl::frontier::{url_terms, workload_match};
use crate::crawl::CrawlState;
use crate::fetch::Fetcher;
use crate::querylog::term_workload::TermWorkload;
use crate::text::{Analyzer, Vocabulary};

/// Notes the links of the copy of `from` fetched at `unit` in `crawl`'s frontier.
pub(super) fn note_links_of(
    crawl: &mut CrawlState,
    fetcher: &dyn Fetcher,
    vocabulary: &Vocabulary,
    workload: &TermWorkload,
    from: PageId,
    unit: Unit,
    copy: &PageVersion,
) {
    let mut analyzer = Analyzer::new();
    let mut annotate = |p: PageId| {
        let url = fetcher.url(p).to_string();
        let terms = url_terms(&url, vocabulary, &mut analyzer);
        let matched = workload_match(
            &terms,
            workload
                .queries
                .iter()
                .map(|q| (q.terms.as_slice(), q.frequency)),
        );
        (url, terms, matched)
    };
    crawl.note_links(from, unit, copy.unit, &copy.links, &mut annotate);
}

/// The frontier after the initial crawl: the links of every held copy, found at unit 0.
pub(super) fn seed(
    crawl: &mut CrawlState,
    fetcher: &dyn Fetcher,
    vocabulary: &Vocabulary,
    workload: &TermWorkload,
) {
    crawl.start_frontier();
    let held: Vec<(PageId, std::sync::Arc<PageVersion>)> = crawl
        .held_pages()
        .filter_map(|p| {
            crawl
                .held(p)
                .map(|h| (p, std::sync::Arc::clone(&h.version)))
        })
        .collect();
    crawl.frontier_reach(0);
    for (p, copy) in held {
        note_links_of(crawl, fetcher, vocabulary, workload, p, 0, &copy);
    }
}
