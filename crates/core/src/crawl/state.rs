//! [`CrawlState`]: one record per page of what the crawler knows from its own fetches (the
//! held copy, when it was last refreshed, whether it was last seen gone, how often it was
//! visited and found changed), owned by the refresh loop and offered read-only to policies —
//! as Nutch keeps a `CrawlDatum` per URL for its fetch schedule. In frontier mode
//! ([`super::NewPages::Frontier`]) it also keeps the [`Frontier`] of linked, never-crawled
//! pages. [`CrawlState::knowledge`] is the read-only view of what the crawler knows about its
//! copies (URLs, hosts, directories, the held-copy link graph and its PageRank).

use std::sync::{Arc, OnceLock};

use crate::change::shingles::{shingle_change, text_sketch};
use crate::corpus::{PageId, PageVersion, Unit};

use super::frontier::{Frontier, FrontierPage};
use super::knowledge::cache::{HeldChange, KnowledgeCache};
use crate::cache::Cache;
use crate::fetch::Validator;
use crate::signal::{PageSignal, SignalReading};

/// The repository's copy of a page, with its shingle sketch computed on first use (kept with
/// the copy: a live crawler has no previous live version to compare a new copy with, only
/// what it stored).
#[derive(Debug, Clone)]
pub struct HeldCopy {
    pub version: Arc<PageVersion>,
    sketch: OnceLock<Arc<Box<[u64]>>>,
}

impl HeldCopy {
    pub fn new(version: Arc<PageVersion>) -> Self {
        HeldCopy {
            version,
            sketch: OnceLock::new(),
        }
    }

    /// The copy's shingles ([`text_sketch`] of its indexed text, kept in `cache` if given).
    pub fn sketch(&self, cache: Option<&Cache>) -> &[u64] {
        self.sketch
            .get_or_init(|| text_sketch(cache, &self.version.indexed_text_parts()))
    }

    /// The validator a conditional fetch of this copy sends.
    pub fn validator(&self) -> Validator {
        Validator::of(&self.version)
    }
}

/// What the crawler knows about one page.
#[derive(Debug, Clone, Default)]
pub struct PageCrawl {
    /// The copy the repository holds; `None` when it holds none (never fetched, or gone).
    pub(crate) held: Option<HeldCopy>,
    /// Unit of the last fetch (0: the initial crawl, or never).
    pub(crate) last_refresh: Unit,
    /// The last fetch found the page gone.
    pub(crate) gone: bool,
    /// Refreshes (budgeted fetches) of the page so far.
    pub(crate) visits: u32,
    /// Refreshes that found a copy other than the held one.
    pub(crate) changes: u32,
}

/// Per-page crawl records, indexed by page id; grows with the fetcher's page ids.
#[derive(Debug, Clone, Default)]
pub struct CrawlState {
    pages: Vec<PageCrawl>,
    /// `Some` in frontier mode only.
    frontier: Option<Frontier>,
    /// URLs, and the graph and PageRank computed on demand from the held copies.
    knowledge: KnowledgeCache,
    /// The change signals read from the site, per page; `None` until a fetcher that reads
    /// signals reported a reading ([`Self::note_signals`]).
    signals: Option<SignalBook>,
}

/// The latest signal read of every page, and whether the site has a feed.
#[derive(Debug, Clone, Default)]
struct SignalBook {
    pages: Vec<PageSignal>,
    feed_channel: bool,
}

impl CrawlState {
    /// After an initial crawl that brought `copies` (page, copy) at unit 0.
    pub fn with_initial_crawl(
        page_count: usize,
        copies: impl IntoIterator<Item = (PageId, Arc<PageVersion>)>,
    ) -> Self {
        let mut state = CrawlState {
            pages: vec![PageCrawl::default(); page_count],
            frontier: None,
            knowledge: KnowledgeCache::default(),
            signals: None,
        };
        for (p, v) in copies {
            state.grow(p as usize + 1);
            state.pages[p as usize].held = Some(HeldCopy::new(v));
        }
        state
    }

    /// Makes room for page ids `0..count` (new pages: never fetched).
    pub(crate) fn grow(&mut self, count: usize) {
        if count > self.pages.len() {
            self.pages.resize(count, PageCrawl::default());
        }
    }

    /// Keeps what is computed from this state's held copies (their PageRank, their shingle
    /// sketches) in the environment's `cache`, shared with the other crawl states of the same
    /// corpus: the same values, computed once. The refresher reads the cache from here
    /// ([`Self::cache`]).
    pub fn use_cache(&mut self, cache: Arc<Cache>) {
        self.knowledge.use_cache(cache);
    }

    /// The environment's cache, if this state shares one ([`Self::use_cache`]).
    pub fn cache(&self) -> Option<&Arc<Cache>> {
        self.knowledge.cache()
    }

    pub(crate) fn knowledge_cache(&self) -> &KnowledgeCache {
        &self.knowledge
    }

    /// Learns the URLs of the page ids `0..count` it does not know yet (from the fetcher,
    /// which allocated them; the refresher does this before `prepare` and every unit). Makes
    /// room for them too. [`super::CrawlKnowledge::url`] still answers only for pages the crawler met.
    pub fn learn_urls<'u>(&mut self, count: usize, url: impl Fn(PageId) -> &'u str) {
        self.grow(count);
        self.knowledge.learn_urls(count, url);
    }

    pub fn len(&self) -> usize {
        self.pages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }

    /// Every page's last refresh over page ids `0..n` (0: never refreshed): what a policy
    /// reads instead of keeping its own copy.
    pub fn last_refreshes(&self, n: usize) -> Vec<Unit> {
        (0..n as PageId)
            .map(|p| self.page(p).last_refresh)
            .collect()
    }

    /// Whether each page over ids `0..n` was found gone by its last fetch: what a policy reads
    /// instead of keeping its own flags.
    pub(crate) fn gone_pages(&self, n: usize) -> Vec<bool> {
        (0..n as PageId).map(|p| self.page(p).gone).collect()
    }

    /// The record of `page` (a default, never-fetched record past the known ids).
    pub(crate) fn page(&self, page: PageId) -> &PageCrawl {
        static NEVER: PageCrawl = PageCrawl {
            held: None,
            last_refresh: 0,
            gone: false,
            visits: 0,
            changes: 0,
        };
        self.pages.get(page as usize).unwrap_or(&NEVER)
    }

    /// The held copy of `page`, if any.
    pub fn held(&self, page: PageId) -> Option<&HeldCopy> {
        self.page(page).held.as_ref()
    }

    /// The unit whose capture the repository holds for `page` (`None`: no copy).
    pub fn held_unit(&self, page: PageId) -> Option<Unit> {
        self.held(page).map(|h| h.version.unit)
    }

    /// [`held_unit`](Self::held_unit) of page ids `0..pages`, in order.
    pub fn held_units(
        &self,
        pages: usize,
    ) -> impl ExactSizeIterator<Item = Option<Unit>> + Clone + '_ {
        (0..pages as PageId).map(|p| self.held_unit(p))
    }

    /// Records a refresh of `page` at `unit` that brought `fetched` (`None`: gone; the held
    /// copy when not modified) and returns the shingle change from the held copy to it:
    /// 0 when nothing changed, 1 when either side has no copy.
    pub(crate) fn record_refresh(
        &mut self,
        page: PageId,
        unit: Unit,
        fetched: Option<HeldCopy>,
        changed: bool,
    ) -> f64 {
        self.grow(page as usize + 1);
        let shingle = self.shingle_change(page, fetched.as_ref(), changed);
        let record = &mut self.pages[page as usize];
        let held_before = record.held.as_ref().map(|h| h.version.unit);
        let held_after = fetched.as_ref().map(|h| h.version.unit);
        let links_before = record.held.as_ref().map(|h| &h.version.links);
        let links_changed = links_before != fetched.as_ref().map(|h| &h.version.links);
        record.gone = fetched.is_none();
        record.held = fetched;
        record.last_refresh = unit;
        record.visits += 1;
        record.changes += u32::from(changed);
        if held_before != held_after {
            self.knowledge.held_changed(HeldChange {
                pages: held_before.is_none() || held_after.is_none(),
                links: links_changed,
            });
        }
        shingle
    }

    /// A fetch of `page` at `unit` as the refresher records it, without a copy: for policy
    /// tests that drive `choose`/`observe` by hand.
    #[cfg(test)]
    pub(crate) fn note_fetch(&mut self, page: PageId, unit: Unit, gone: bool) {
        self.grow(page as usize + 1);
        let record = &mut self.pages[page as usize];
        record.last_refresh = unit;
        record.gone = gone;
        record.visits += 1;
    }

    /// The shingle change from the held copy of `page` to `fetched` (`None`: gone): 0 when
    /// not `changed`, 1 when either side has no copy.
    pub(crate) fn shingle_change(
        &self,
        page: PageId,
        fetched: Option<&HeldCopy>,
        changed: bool,
    ) -> f64 {
        if !changed {
            return 0.0;
        }
        match (self.held(page), fetched) {
            (Some(old), Some(new)) => {
                let cache = self.cache().map(|c| &**c);
                shingle_change(old.sketch(cache), new.sketch(cache))
            }
            _ => 1.0,
        }
    }

    /// Records the first copy of a page discovered at `unit` (outside the budget).
    pub(crate) fn record_discovery(&mut self, page: PageId, unit: Unit, copy: HeldCopy) {
        self.grow(page as usize + 1);
        let record = &mut self.pages[page as usize];
        record.held = Some(copy);
        record.gone = false;
        record.last_refresh = unit;
        self.knowledge.held_changed(HeldChange {
            pages: true,
            links: true,
        });
    }

    /// Whether new pages wait in a frontier for the budget ([`super::NewPages::Frontier`]).
    pub fn frontier_mode(&self) -> bool {
        self.frontier.is_some()
    }

    /// The frontier: linked pages never crawled (`None` outside frontier mode).
    pub fn frontier(&self) -> Option<&Frontier> {
        self.frontier.as_ref()
    }

    /// The frontier in discovery order (empty outside frontier mode).
    pub fn frontier_pages(&self) -> Vec<&FrontierPage> {
        self.frontier
            .as_ref()
            .map_or_else(Vec::new, Frontier::in_discovery_order)
    }

    /// Whether `page` is in the frontier.
    pub fn in_frontier(&self, page: PageId) -> bool {
        self.frontier.as_ref().is_some_and(|f| f.contains(page))
    }

    /// Whether the crawler may fetch `page`: outside frontier mode every page id (today's
    /// behaviour); in frontier mode a page it holds, fetched before, or met in a link.
    pub fn is_known(&self, page: PageId) -> bool {
        match &self.frontier {
            None => true,
            Some(f) => {
                let r = self.page(page);
                r.held.is_some() || r.visits > 0 || r.gone || f.contains(page)
            }
        }
    }

    /// Whether a policy's `choose` (its refreshes) may pick `page`: outside frontier mode every
    /// page id (today's behaviour); in frontier mode a page the crawler fetched before (held,
    /// or last found gone) — frontier pages are first crawls, chosen through
    /// `RefreshPolicy::choose_with_frontier`.
    pub fn is_refreshable(&self, page: PageId) -> bool {
        match &self.frontier {
            None => true,
            Some(_) => {
                let r = self.page(page);
                r.held.is_some() || r.visits > 0 || r.gone
            }
        }
    }

    /// Turns frontier mode on (before the first unit).
    pub(crate) fn start_frontier(&mut self) {
        self.frontier.get_or_insert_with(Frontier::default);
    }

    /// Notes the links of a copy of `from` fetched at `unit` (captured at `captured`): pages
    /// the crawler does not know enter the frontier (annotated by `annotate`: URL, URL terms,
    /// workload match), pages in it gain an in-link. A page last found gone re-enters when the
    /// copy's capture is newer than that fetch. No-op outside frontier mode.
    pub(crate) fn note_links(
        &mut self,
        from: PageId,
        unit: Unit,
        captured: Unit,
        links: &[PageId],
        annotate: &mut dyn FnMut(PageId) -> (String, Vec<crate::text::TermId>, f64),
    ) {
        let Some(mut frontier) = self.frontier.take() else {
            return;
        };
        frontier.reach(unit);
        for &p in links {
            if p == from {
                continue;
            }
            if frontier.contains(p) {
                frontier.add_in_link(p, from);
                continue;
            }
            let r = self.page(p);
            let unknown = r.held.is_none() && r.visits == 0 && !r.gone;
            let dead_link_renewed = r.held.is_none() && r.gone && captured > r.last_refresh;
            if unknown || dead_link_renewed {
                let (url, url_terms, workload_match) = annotate(p);
                frontier.insert(FrontierPage {
                    page: p,
                    url,
                    found: unit,
                    in_links: vec![from],
                    url_terms,
                    workload_match,
                });
            }
        }
        self.frontier = Some(frontier);
    }

    /// Makes the frontier's arrival counts cover `unit` (frontier mode only).
    pub(crate) fn frontier_reach(&mut self, unit: Unit) {
        if let Some(f) = self.frontier.as_mut() {
            f.reach(unit);
        }
    }

    /// Takes `page` out of the frontier (its first crawl was fetched).
    pub(crate) fn leave_frontier(&mut self, page: PageId) -> Option<FrontierPage> {
        self.frontier.as_mut().and_then(|f| f.remove(page))
    }

    /// Takes what one read of the site's signals brought (every unit, before the policy
    /// chooses; see [`crate::fetch::Fetcher::signals`]).
    pub(crate) fn note_signals(&mut self, reading: &SignalReading) {
        let count = self.pages.len();
        let book = self.signals.get_or_insert_with(SignalBook::default);
        book.feed_channel |= reading.feed_channel;
        let grow = |book: &mut SignalBook, n: usize| {
            if n > book.pages.len() {
                book.pages.resize(n, PageSignal::default());
            }
        };
        grow(book, count);
        for event in &reading.events {
            grow(book, event.page as usize + 1);
            book.pages[event.page as usize].note(event.kind);
        }
    }

    /// Whether the crawler reads the site's change signals (then [`Self::signal`] answers).
    pub fn reads_signals(&self) -> bool {
        self.signals.is_some()
    }

    /// What the site's signals said of `page` so far (`None` when the crawler reads no
    /// signals). Reflects only changes up to the current unit minus each channel's delay.
    pub fn signal(&self, page: PageId) -> Option<PageSignal> {
        let book = self.signals.as_ref()?;
        let mut s = book.pages.get(page as usize).copied().unwrap_or_default();
        s.feed_channel = book.feed_channel;
        Some(s)
    }

    /// Page ids whose copy the repository holds.
    pub fn held_pages(&self) -> impl Iterator<Item = PageId> + '_ {
        self.pages
            .iter()
            .enumerate()
            .filter(|(_, r)| r.held.is_some())
            .map(|(p, _)| p as PageId)
    }
}
