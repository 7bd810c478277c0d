//! The live Web: every captured version of every page, on a clock of discrete time units.
//!
//! A [`Corpus`] is built from WARC collections (see [`ingest`]) or written by the synthetic
//! generator (see [`generate`]) and then answers the one question every later stage asks:
//! *what is page `p` at time unit `t`?* ([`LiveWeb::page_at`]). The simulator fetches through
//! this trait, the exact metrics read the truth through it, and a real crawler would implement
//! it over HTTP with wall-clock units.

pub mod arc_reader;
pub mod archive;
pub mod archive_stream;
pub mod artefact;
pub mod clock;
pub mod generate;
pub mod html;
pub mod ingest;
pub mod summary;
pub mod url;
pub mod warc_reader;

use std::collections::HashMap;
use std::sync::Arc;

pub use clock::Clock;

use crate::text::{TermCounts, Vocabulary};

/// Dense id of a page (URL) in a corpus; ids follow the URLs' byte order.
pub type PageId = u32;
/// A discrete time unit (week by default); unit 0 starts at the earliest capture.
pub type Unit = u32;

/// One captured version of a page. Serialisable so the served engine can hand a refreshed copy
/// to the shard that owns the page in another process.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct PageVersion {
    /// Time unit the capture falls in.
    pub unit: Unit,
    /// Capture time, seconds since the Unix epoch (UTC).
    pub capture_time: i64,
    /// HTTP status of the capture: 200 for content, 404/410 for a page that is gone.
    pub status: u16,
    /// xxh3 of the HTTP body bytes; equal hashes mean identical captures.
    pub content_hash: u64,
    /// `<title>` text (whitespace-normalised); empty for gone pages.
    pub title: String,
    /// Visible text of the page (whitespace-normalised); empty for gone pages.
    pub text: String,
    /// Out-links to pages of this corpus, deduplicated, sorted, without self-links.
    pub links: Vec<PageId>,
    /// The analyzed indexed text (title then visible text), as the index sees it. Shared
    /// with the forward indexes holding this version as a copy ([`crate::index::ForwardDoc`]),
    /// which would otherwise each keep their own (a simulation builds several).
    pub terms: Arc<TermCounts>,
    /// Sizes and element counts of the capture (all zero for gone pages).
    pub(crate) counts: PageCounts,
}

/// What a crawler counts in one capture: the structural content features of paper 000
/// (Tan & Mitra, TOIS 2010, §3.1: #images, #tables, #words, size without tags, #e-mail
/// addresses, file type). A few integers per version, so they are kept for every version.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct PageCounts {
    /// Bytes of the HTTP body (after transfer and content decoding), markup included.
    pub(crate) html_bytes: u32,
    /// Bytes (UTF-8) of the visible text, whitespace-normalised: the size without tags.
    pub(crate) text_bytes: u32,
    /// Whitespace-separated words of the visible text (the non-markup words).
    pub(crate) words: u32,
    /// `<img>` elements.
    pub(crate) images: u32,
    /// `<table>` elements.
    pub(crate) tables: u32,
    /// Distinct e-mail addresses: `mailto:` links and addresses in the text.
    pub(crate) emails: u32,
    pub(crate) content_type: ContentType,
}

impl PageCounts {
    /// The counts of one extracted capture; `content_type` is the HTTP media type, if any.
    pub(crate) fn of(
        body: &[u8],
        page: &html::ExtractedPage,
        content_type: Option<&str>,
    ) -> PageCounts {
        let clamp = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        PageCounts {
            html_bytes: clamp(body.len()),
            text_bytes: clamp(page.text.len()),
            words: clamp(html::whitespace_word_count(&page.text)),
            images: page.images,
            tables: page.tables,
            emails: page.emails,
            content_type: ContentType::classify(content_type, body),
        }
    }
}

/// The file type of a capture, as paper 000's one-hot feature sees it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ContentType {
    /// `text/html` or `application/xhtml+xml`.
    #[default]
    Html,
    /// `text/plain`.
    Text,
    /// Any other media type.
    Other,
}

impl ContentType {
    /// From the HTTP media type; without one, a body whose first KiB has an `<html` or
    /// `<!doctype html` is HTML and anything else text.
    pub(crate) fn classify(media_type: Option<&str>, body: &[u8]) -> ContentType {
        match media_type {
            Some("text/html" | "application/xhtml+xml") => ContentType::Html,
            Some("text/plain") => ContentType::Text,
            Some(_) => ContentType::Other,
            None => {
                let head = String::from_utf8_lossy(&body[..body.len().min(1024)]).to_lowercase();
                if head.contains("<html") || head.contains("<!doctype html") {
                    ContentType::Html
                } else {
                    ContentType::Text
                }
            }
        }
    }
}

impl PageVersion {
    /// Whether this capture holds content (a 2xx status) rather than marking the page gone.
    pub fn is_present(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The text the index stores in its scored `body` field: the title, then the visible text.
    ///
    /// One scored field keeps a page's score a function of one field's statistics, which the
    /// measurement hook can reproduce exactly.
    pub fn indexed_text(&self) -> String {
        self.indexed_text_parts().concat()
    }

    /// The pieces [`indexed_text`](Self::indexed_text) joins (the title and a line break only
    /// when there is a title), for readers that need not build it.
    pub(crate) fn indexed_text_parts(&self) -> [&str; 3] {
        if self.title.is_empty() {
            ["", "", &self.text]
        } else {
            [&self.title, "\n", &self.text]
        }
    }
}

/// The state of a page at a time unit.
#[derive(Debug, Clone, Copy)]
pub enum PageState<'a> {
    /// The page exists; this is its latest capture at or before the unit.
    Present(&'a PageVersion),
    /// The page existed before but its latest capture says it is gone (404/410).
    Gone,
    /// The page has no capture at or before the unit.
    NotYetCreated,
}

impl<'a> PageState<'a> {
    pub fn present(self) -> Option<&'a PageVersion> {
        match self {
            PageState::Present(v) => Some(v),
            _ => None,
        }
    }
}

/// The live Web as seen by a crawler: a version of page `p` at time unit `t`.
///
/// Implementations must be deterministic: the same `(page, unit)` always gives the same answer.
/// Callers in `online` mode must only ask for `(p, t)` at the current simulated unit (a fetch);
/// the simulator enforces that, not this trait.
pub trait LiveWeb: Sync {
    /// Number of time units (unit ids are `0..units()`).
    fn units(&self) -> Unit;
    /// Number of pages ever seen (page ids are `0..page_count()`).
    fn page_count(&self) -> usize;
    /// The URL of a page.
    fn url(&self, page: PageId) -> &str;
    /// The page's state at `unit`, in O(log versions).
    fn page_at(&self, page: PageId, unit: Unit) -> PageState<'_>;

    /// The first unit after `unit` at which the page's state differs from its state at `unit`
    /// (a new version, or the page gone), or `None` when it never does. The default asks
    /// [`page_at`](Self::page_at) unit by unit; a web that knows its timelines answers at once.
    fn next_change_after(&self, page: PageId, unit: Unit) -> Option<Unit> {
        let now = self.page_at(page, unit).present().map(|v| v.unit);
        (unit + 1..self.units()).find(|&u| self.page_at(page, u).present().map(|v| v.unit) != now)
    }
}

/// Every version of one URL, in capture order.
#[derive(Debug, Clone)]
pub struct PageTimeline {
    pub url: String,
    /// Versions sorted by unit, at most one per unit (the latest capture of that unit).
    /// Shared (`Arc`): a fetch hands the crawler its own reference to a capture without
    /// copying the text.
    pub versions: Vec<Arc<PageVersion>>,
}

impl PageTimeline {
    /// A timeline of `versions` (sorted by unit, at most one per unit).
    pub fn new(url: impl Into<String>, versions: Vec<PageVersion>) -> Self {
        PageTimeline {
            url: url.into(),
            versions: versions.into_iter().map(Arc::new).collect(),
        }
    }

    /// The first version that shows the page (not a gone capture), if any.
    pub fn first_present(&self) -> Option<&PageVersion> {
        self.versions.iter().find(|v| v.is_present()).map(|v| &**v)
    }

    /// The version the live Web shows at `unit`, shared: what a fetch at `unit` returns.
    pub fn shared_at(&self, unit: Unit) -> Option<&Arc<PageVersion>> {
        let after = self.versions.partition_point(|v| v.unit <= unit);
        self.versions[..after].last().filter(|v| v.is_present())
    }

    /// The state of this page at `unit`, by binary search over its versions.
    pub(crate) fn at(&self, unit: Unit) -> PageState<'_> {
        let after = self.versions.partition_point(|v| v.unit <= unit);
        if after == 0 {
            return PageState::NotYetCreated;
        }
        let v = &self.versions[after - 1];
        if v.is_present() {
            PageState::Present(v)
        } else {
            PageState::Gone
        }
    }
}

/// An in-memory live Web built from captures: the reference [`LiveWeb`].
#[derive(Debug, Clone)]
pub struct Corpus {
    pub clock: Clock,
    pub pages: Vec<PageTimeline>,
    /// Shared (not copied) by every repository built from the corpus: it holds every term ever
    /// seen (1.5M on EmacsWiki), and a simulation sweep builds hundreds of repositories.
    pub vocabulary: Arc<Vocabulary>,
    /// The collections the corpus was read from, each aligned at its own first unit (see
    /// [`ingest::load_collections`]); empty for corpora assembled in memory.
    pub collections: Vec<ingest::CollectionInfo>,
    by_url: HashMap<String, PageId>,
}

impl Corpus {
    /// Assembles a corpus from timelines already sorted by URL with resolved links and terms.
    pub fn from_parts(clock: Clock, pages: Vec<PageTimeline>, vocabulary: Vocabulary) -> Self {
        let by_url = pages
            .iter()
            .enumerate()
            .map(|(i, p)| (p.url.clone(), i as PageId))
            .collect();
        Corpus {
            clock,
            pages,
            vocabulary: Arc::new(vocabulary),
            collections: Vec::new(),
            by_url,
        }
    }

    /// The collections and how they were aligned, as the JSON outputs give them (the
    /// `collections` key of `ingest`, `simulate`, `compare` and `GET /api/quality`).
    pub fn collections_json(&self) -> serde_json::Value {
        serde_json::json!({
            "alignment": "first-unit",
            "unit_seconds": self.clock.unit_seconds,
            "list": self.collections,
        })
    }

    /// The id of a URL, if the corpus has ever seen it.
    pub fn page_id(&self, url: &str) -> Option<PageId> {
        self.by_url.get(url).copied()
    }

    pub fn timeline(&self, page: PageId) -> &PageTimeline {
        &self.pages[page as usize]
    }

    /// Number of captures (200 and 404 records) kept in timelines.
    pub fn version_count(&self) -> usize {
        self.pages.iter().map(|p| p.versions.len()).sum()
    }
}

impl LiveWeb for Corpus {
    fn units(&self) -> Unit {
        self.clock.units
    }

    fn page_count(&self) -> usize {
        self.pages.len()
    }

    fn url(&self, page: PageId) -> &str {
        &self.pages[page as usize].url
    }

    fn page_at(&self, page: PageId, unit: Unit) -> PageState<'_> {
        self.pages[page as usize].at(unit)
    }

    fn next_change_after(&self, page: PageId, unit: Unit) -> Option<Unit> {
        let versions = &self.pages[page as usize].versions;
        let after = versions.partition_point(|v| v.unit <= unit);
        let now = after.checked_sub(1).map(|i| &versions[i]);
        // Versions are one per unit; a "gone" record after a gone page changes nothing.
        versions[after..]
            .iter()
            .find(|v| v.is_present() || now.is_some_and(|n| n.is_present()))
            .map(|v| v.unit)
    }
}

/// Whether the repository's copy (the version captured at `held`) is the live version at `unit`.
pub fn is_fresh<W: LiveWeb + ?Sized>(
    corpus: &W,
    page: PageId,
    held: Option<Unit>,
    unit: Unit,
) -> bool {
    match corpus.page_at(page, unit) {
        PageState::Present(v) => held == Some(v.unit),
        PageState::Gone | PageState::NotYetCreated => held.is_none(),
    }
}
