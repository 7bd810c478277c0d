//! Serving queries: the repository's ranked list, the copy's title and a highlighted snippet,
//! and whether that copy is stale against the live Web.
//!
//! # Query syntax
//!
//! A query is plain words, up to [`MAX_QUERY_BYTES`] bytes. It is analyzed like the pages
//! (split on anything that is not a letter or digit, lower-cased, English-stemmed), and every
//! distinct term is required (a conjunctive query). There are no operators: a leading `-`
//! does not exclude a word and quotes do not make a phrase — `-vim` asks for `vim` and
//! `"emacs lisp"` for `emacs` and `lisp` anywhere — the same reading the query-log workloads
//! give those queries. Such queries get a note in the response's `notes`.
//!
//! Queries with more than [`MAX_QUERY_TERMS`] distinct terms are not refused (real logs hold
//! them): the first 32 distinct terms are searched, as major engines truncate long queries,
//! and the response says so (`truncated: true`, the rest in `dropped_terms`, and a note).

use std::sync::{Arc, RwLock, RwLockReadGuard};
use std::time::Instant;

use crate::corpus::is_fresh;
use crate::corpus::{Corpus, LiveWeb, PageId, PageVersion, Unit};
use crate::index::{IndexError, PageUpdate, Repository};
use crate::judge::exact::{evaluate, evaluate_rankings, LiveTruth, MetricQuery, UnitMetrics};
use crate::quality::ViewingLikelihood;
use crate::text::{Analyzer, Vocabulary};

use super::error::ApiError;
use super::shards::{ShardError, ShardedIndex};
use super::snippet::{escape_into, Snippeter};

/// Longest accepted query text, in bytes (longer queries are a 400, not a truncation).
pub const MAX_QUERY_BYTES: usize = 2048;
/// Most analyzed terms searched for one query (each is one posting list to intersect); the
/// terms past these are dropped and the response says so.
pub const MAX_QUERY_TERMS: usize = 32;
/// Largest page size.
pub const MAX_LIMIT: usize = 100;
/// Deepest offset (users do not page past this; it bounds the work per request).
pub const MAX_OFFSET: usize = 10_000;
/// Page size when none is given.
pub const DEFAULT_LIMIT: usize = 10;

/// The query parameters of `GET /api/search`.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct SearchParams {
    pub q: Option<String>,
    pub offset: Option<usize>,
    pub limit: Option<usize>,
}

/// A validated search request.
#[derive(Debug, Clone)]
pub struct SearchRequest {
    pub text: String,
    pub offset: usize,
    pub limit: usize,
}

impl SearchParams {
    /// Checks the documented bounds; every violation is a 400 naming the parameter.
    pub fn validate(self) -> Result<SearchRequest, ApiError> {
        let text = self.q.unwrap_or_default();
        let text = text.trim();
        if text.is_empty() {
            return Err(ApiError::BadParameter(
                "parameter `q` (the query text) is required and must not be blank".into(),
            ));
        }
        if text.len() > MAX_QUERY_BYTES {
            return Err(ApiError::BadParameter(format!(
                "parameter `q` is {} bytes long; at most {MAX_QUERY_BYTES} are accepted",
                text.len()
            )));
        }
        let limit = self.limit.unwrap_or(DEFAULT_LIMIT);
        if !(1..=MAX_LIMIT).contains(&limit) {
            return Err(ApiError::BadParameter(format!(
                "parameter `limit` must lie in 1..={MAX_LIMIT} (got {limit})"
            )));
        }
        let offset = self.offset.unwrap_or(0);
        if offset > MAX_OFFSET {
            return Err(ApiError::BadParameter(format!(
                "parameter `offset` must be at most {MAX_OFFSET} (got {offset})"
            )));
        }
        Ok(SearchRequest {
            text: text.to_string(),
            offset,
            limit,
        })
    }
}

/// One ranked result.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct SearchHit {
    /// 1-based rank in the full result list.
    pub(crate) rank: usize,
    pub url: String,
    /// The repository copy's title (plain text; may be empty).
    pub(crate) title: String,
    /// HTML: escaped text with query terms in `<b>`.
    pub(crate) snippet: String,
    pub(crate) score: f32,
    /// Whether the repository copy differs from the live Web's version at the live unit.
    pub stale: bool,
}

/// The body of a search response.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct SearchResponse {
    pub(crate) query: String,
    /// The analyzed terms the conjunctive query used (at most [`MAX_QUERY_TERMS`]).
    pub(crate) terms: Vec<String>,
    /// Whether the query had more than [`MAX_QUERY_TERMS`] distinct terms and was cut.
    #[serde(default)]
    pub(crate) truncated: bool,
    /// The distinct terms past the first [`MAX_QUERY_TERMS`], not searched.
    #[serde(default)]
    pub(crate) dropped_terms: Vec<String>,
    /// How the query was read, when it may differ from what was meant (truncation, `-` or
    /// quotes taken as plain text).
    #[serde(default)]
    pub(crate) notes: Vec<String>,
    pub(crate) offset: usize,
    pub(crate) limit: usize,
    pub(crate) total_hits: usize,
    pub(crate) took_ms: f64,
    /// The unit the repository copies were crawled at.
    pub served_unit: Unit,
    /// The unit of the live Web the stale markers compare against.
    pub(crate) live_unit: Unit,
    pub results: Vec<SearchHit>,
}

/// Notes on how `text` (with `distinct` analyzed terms) was read.
fn query_notes(text: &str, distinct: usize) -> Vec<String> {
    let mut notes = Vec::new();
    if distinct > MAX_QUERY_TERMS {
        notes.push(format!(
            "the query has {distinct} distinct terms; only the first {MAX_QUERY_TERMS} were searched (the rest are in dropped_terms)"
        ));
    }
    if text
        .split_whitespace()
        .any(|w| w.len() > 1 && w.starts_with('-'))
    {
        notes.push(
            "a leading `-` is not an operator: the word after it is a required term like any other"
                .to_string(),
        );
    }
    if text.contains('"') {
        notes.push(
            "quotes are not an operator: the quoted words are required terms, anywhere in the page (no phrase match)"
                .to_string(),
        );
    }
    notes
}

/// Why the served engine's unit could not be applied to the served index.
#[derive(Debug, thiserror::Error)]
pub enum RefreshError {
    #[error(transparent)]
    Index(#[from] IndexError),
    #[error("the served index's shards: {0}")]
    Shards(#[from] ShardError),
}

/// The searchable repository and the live Web it was crawled from.
///
/// Simulation runs build their own repositories; this one changes only when the served engine
/// (`serve --policy`) applies a unit's refreshes, under the write lock, after which searches
/// see the new copies and stale markers compare against the engine's current unit.
pub struct SearchService {
    pub(crate) corpus: &'static Corpus,
    index: ServedIndex,
    /// Unit whose versions the repository holds (before any refresh of the served engine).
    pub served_unit: Unit,
    /// Unit of the live Web for stale markers (before any refresh of the served engine).
    pub(crate) live_unit: Unit,
    /// What the served engine holds now, once it has refreshed a unit.
    refreshed: RwLock<Option<EngineView>>,
}

/// Where the served copies are searched: one repository, or shards on the mesh's workers
/// (`serve --workers`, `--processes`).
enum ServedIndex {
    One(Box<RwLock<Repository>>),
    Shards(Arc<ShardedIndex>),
}

/// The served engine's view of the repository after its latest unit.
#[derive(Debug, Clone)]
pub struct EngineView {
    /// The unit of the live Web the engine has refreshed up to.
    pub(crate) unit: Unit,
    /// The copy held of every page (`None`: none).
    pub(crate) held: Vec<Option<Arc<PageVersion>>>,
}

impl SearchService {
    pub fn new(
        corpus: &'static Corpus,
        repo: Repository,
        served_unit: Unit,
        live_unit: Unit,
    ) -> Self {
        SearchService {
            corpus,
            index: ServedIndex::One(Box::new(RwLock::new(repo))),
            served_unit,
            live_unit,
            refreshed: RwLock::new(None),
        }
    }

    /// A service searching `shards` (the copies of `served_unit`, until the served engine
    /// refreshes them).
    pub fn sharded(
        corpus: &'static Corpus,
        shards: Arc<ShardedIndex>,
        served_unit: Unit,
        live_unit: Unit,
    ) -> Self {
        SearchService {
            corpus,
            index: ServedIndex::Shards(shards),
            served_unit,
            live_unit,
            refreshed: RwLock::new(None),
        }
    }

    /// The served repository, read-locked (searches hold it for their duration); `None` when
    /// the copies are split over shards ([`Self::shards`]).
    pub fn repo(&self) -> Option<RwLockReadGuard<'_, Repository>> {
        match &self.index {
            ServedIndex::One(repo) => Some(repo.read().unwrap_or_else(|e| e.into_inner())),
            ServedIndex::Shards(_) => None,
        }
    }

    /// The shards searched, when the copies are split over the mesh's workers.
    pub fn shards(&self) -> Option<&Arc<ShardedIndex>> {
        match &self.index {
            ServedIndex::One(_) => None,
            ServedIndex::Shards(shards) => Some(shards),
        }
    }

    /// Over shards, each query's full result list, merged in rank order at the leader (one
    /// round of the mesh): what [`Self::judge`] reads, kept by a caller that judges copies
    /// that do not change at several units. `None` for one repository, which ranks itself.
    pub fn shard_rankings(
        &self,
        queries: &[MetricQuery],
    ) -> Result<Option<Vec<Vec<PageId>>>, ShardError> {
        match &self.index {
            ServedIndex::One(_) => Ok(None),
            ServedIndex::Shards(shards) => shards
                .rank(queries.iter().map(|q| q.terms.clone()).collect())
                .map(Some),
        }
    }

    /// The exact metrics of the served copies for `queries` against `truth`, a copy fresh when
    /// `fresh` says so: one repository ranks itself; shards are read through `rankings`
    /// ([`Self::shard_rankings`]), asked for here when not given.
    pub fn judge(
        &self,
        rankings: Option<&[Vec<PageId>]>,
        queries: &[MetricQuery],
        truth: &LiveTruth,
        likelihood: &ViewingLikelihood,
        fresh: &(dyn Fn(PageId) -> bool + Sync),
    ) -> Result<UnitMetrics, ShardError> {
        let asked;
        let rankings = match (rankings, &self.index) {
            (Some(rankings), _) => rankings,
            (None, ServedIndex::One(repo)) => {
                let repo = repo.read().unwrap_or_else(|e| e.into_inner());
                return Ok(evaluate(
                    repo.forward(),
                    repo.scorer(),
                    queries,
                    truth,
                    likelihood,
                    fresh,
                ));
            }
            (None, ServedIndex::Shards(_)) => {
                asked = self.shard_rankings(queries)?.unwrap_or_default();
                &asked
            }
        };
        Ok(evaluate_rankings(
            rankings,
            self.num_docs(),
            queries,
            truth,
            likelihood,
            fresh,
        ))
    }

    /// Documents of the served collection (all shards).
    pub fn num_docs(&self) -> u64 {
        match &self.index {
            ServedIndex::One(repo) => repo.read().unwrap_or_else(|e| e.into_inner()).num_docs(),
            ServedIndex::Shards(shards) => shards.layout.num_docs,
        }
    }

    /// Applies the served engine's unit `view.unit`: the copies of `updates` replace those held
    /// (one repository under the write lock, or each shard its own pages), after the
    /// vocabulary grows to `vocabulary` when a crawl added terms; then stale markers and
    /// snippets follow `view`. A failed apply leaves `view` unpublished.
    pub fn refresh(
        &self,
        view: EngineView,
        updates: &[PageUpdate<'_>],
        vocabulary: Option<Arc<Vocabulary>>,
    ) -> Result<(), RefreshError> {
        match &self.index {
            ServedIndex::One(repo) => {
                let mut repo = repo.write().unwrap_or_else(|e| e.into_inner());
                if let Some(vocabulary) = vocabulary {
                    repo.set_vocabulary(vocabulary);
                }
                repo.apply_unmeasured(view.unit, updates)?;
            }
            ServedIndex::Shards(shards) => shards.apply(view.unit, updates, vocabulary.as_ref())?,
        }
        *self.refreshed.write().unwrap_or_else(|e| e.into_inner()) = Some(view);
        Ok(())
    }

    /// The (served, live) units searches report: the engine's unit once it has run.
    pub fn units(&self) -> (Unit, Unit) {
        match &*self.refreshed.read().unwrap_or_else(|e| e.into_inner()) {
            Some(v) => (v.unit, v.unit),
            None => (self.served_unit, self.live_unit),
        }
    }

    /// The copy of `page` the repository holds.
    fn held(&self, page: PageId) -> Option<Arc<PageVersion>> {
        match &*self.refreshed.read().unwrap_or_else(|e| e.into_inner()) {
            Some(v) => v.held.get(page as usize).cloned().flatten(),
            None => self
                .corpus
                .timeline(page)
                .shared_at(self.served_unit)
                .cloned(),
        }
    }
    /// Runs one validated query (blocking; call from a blocking thread). Returns the response
    /// and the query's analyzed terms (for the live workload).
    pub fn search(&self, request: &SearchRequest) -> Result<SearchResponse, ApiError> {
        let started = Instant::now();
        let mut terms = Analyzer::new().distinct_terms(&request.text);
        let dropped_terms = if terms.len() > MAX_QUERY_TERMS {
            terms.split_off(MAX_QUERY_TERMS)
        } else {
            Vec::new()
        };
        let notes = query_notes(&request.text, terms.len() + dropped_terms.len());
        let found = match &self.index {
            ServedIndex::One(repo) => repo
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .search_analyzed(&terms, request.offset, request.limit)?,
            ServedIndex::Shards(shards) => match shards.term_ids(&terms) {
                Some(ids) => shards
                    .search(&ids, request.offset, request.limit)
                    .map_err(|e| ApiError::Internal(e.to_string()))?,
                None => crate::index::SearchResults {
                    total_hits: 0,
                    hits: Vec::new(),
                },
            },
        };
        let mut snippets = Snippeter::new(&terms);
        let results = found
            .hits
            .iter()
            .enumerate()
            .map(|(i, hit)| {
                let (title, snippet) = self.copy_text(hit.page, &mut snippets);
                SearchHit {
                    rank: request.offset + i + 1,
                    url: hit.url.clone(),
                    title,
                    snippet,
                    score: hit.score,
                    stale: self.is_stale(hit.page),
                }
            })
            .collect();
        Ok(SearchResponse {
            query: request.text.clone(),
            terms,
            truncated: !dropped_terms.is_empty(),
            dropped_terms,
            notes,
            offset: request.offset,
            limit: request.limit,
            total_hits: found.total_hits,
            took_ms: started.elapsed().as_secs_f64() * 1e3,
            served_unit: self.units().0,
            live_unit: self.units().1,
            results,
        })
    }

    /// Whether the repository's copy of `page` (the version live at the served unit) is out
    /// of date at the live unit.
    pub fn is_stale(&self, page: PageId) -> bool {
        if (page as usize) >= self.corpus.page_count() {
            return false;
        }
        let held = self.held(page).map(|v| v.unit);
        !is_fresh(self.corpus, page, held, self.units().1)
    }

    fn copy_text(&self, page: PageId, snippets: &mut Snippeter) -> (String, String) {
        if (page as usize) >= self.corpus.page_count() {
            return (String::new(), String::new());
        }
        match self.held(page) {
            Some(v) => (v.title.clone(), snippets.snippet(&v.text)),
            None => {
                let mut s = String::new();
                escape_into(&mut s, "(no stored copy)");
                (String::new(), s)
            }
        }
    }
}
