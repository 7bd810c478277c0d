//! The repository `W_L`: a tantivy index, its forward index, and the one update path.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use rayon::prelude::*;

use tantivy::directory::MmapDirectory;
use tantivy::indexer::NoMergePolicy;
use tantivy::schema::{TantivyDocument, Value};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, Term};

use crate::corpus::{Corpus, LiveWeb, PageId, PageVersion, Unit};
use crate::text::{Analyzer, TermCounts, TermId, Vocabulary};

use super::forward::{rank_order, ForwardDoc, ForwardIndex, Ranked};
use super::hook::{ScoreShift, ShiftSink, WorkloadTerms};
use super::schema::{url_hash, RepoSchema};
use super::scorer::{Score, Scorer, ScoringKind, Weight};
use super::search::{
    conjunctive_query, Hit, MatchCollector, SearchResults, ShardHit, ShardResults,
};
use super::stats::{CollectionStats, LiveStatistics};
use super::IndexError;

/// Memory budget of the (single-threaded) index writer.
const WRITER_MEMORY: usize = 64 * 1024 * 1024;
/// [`Repository::apply`] merges every segment into one when a commit leaves more than this many.
pub const MAX_SEGMENTS: usize = 16;

/// One page of a refresh batch: its new copy, or `None` when the page is now gone.
#[derive(Debug, Clone, Copy)]
pub struct PageUpdate<'a> {
    pub page: PageId,
    pub url: &'a str,
    pub version: Option<&'a PageVersion>,
}

/// What one [`Repository::apply`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApplyReport {
    /// Copies added or replaced.
    pub(crate) put: usize,
    /// Pages deleted (gone) that were in the repository.
    pub(crate) deleted: usize,
    /// Pages whose fetched copy equals the held one (same content hash): not re-indexed.
    pub(crate) unchanged: usize,
    /// Score shifts handed to the sink (0 with the hook off).
    pub(crate) shifts: usize,
    /// Whether the batch ended with an explicit merge (more than [`MAX_SEGMENTS`] segments).
    pub(crate) merged: bool,
    /// Time spent in the measurement hook (scores before and after; zero with the hook off):
    /// the overhead the hook adds to index maintenance, measured where it is spent.
    pub hook_time: std::time::Duration,
}

/// The local repository of page copies, searchable through tantivy.
///
/// Guarantees: searches are deterministic — the same sequence of [`apply`](Self::apply) calls
/// gives the same ranked lists, across runs, across [`merge_all`](Self::merge_all) and whatever
/// the segment layout — because scores use live statistics (see [`super::stats`]) and ties are
/// broken by URL hash then page id. Merges happen only at known points (`NoMergePolicy`,
/// [`merge_all`](Self::merge_all), and the automatic merge in `apply` above [`MAX_SEGMENTS`]).
/// The reader reloads only when `apply` or `merge_all` says so (`ReloadPolicy::Manual`).
pub struct Repository {
    /// The tantivy side; `None` for a forward-only repository (see [`Repository::forward_only`]).
    store: Option<Store>,
    forward: ForwardIndex,
    vocabulary: Arc<Vocabulary>,
    scorer: Box<dyn Scorer>,
    hook: Option<WorkloadTerms>,
    /// Batches applied (see [`Repository::revision`]).
    revision: u64,
}

/// The tantivy index of a repository.
struct Store {
    index: Index,
    /// `None` for an index opened read-only (see [`Repository::open_read_only`]).
    writer: Option<IndexWriter>,
    reader: IndexReader,
    fields: RepoSchema,
}

/// Refuses an index any of whose files does not match its checksum (tantivy's footer), before
/// anything reads it: a bit flip is named, never served or half-read.
fn check_checksums(index: &Index) -> Result<(), IndexError> {
    let mut damaged: Vec<String> = index
        .validate_checksum()?
        .into_iter()
        .map(|p| p.display().to_string())
        .collect();
    if damaged.is_empty() {
        return Ok(());
    }
    damaged.sort();
    Err(IndexError::Damaged { files: damaged })
}

impl Repository {
    /// An empty repository without a tantivy index: the forward index alone, which holds every
    /// copy's terms, the live statistics and the postings, so ranked lists, scores and the
    /// measurement hook are exactly those of a tantivy-backed repository (the scores are the
    /// forward index's in both cases; the tests check them against tantivy). Simulations and
    /// comparison sweeps use it: they never serve text, and tantivy commits would dominate
    /// their run time. [`search`](Self::search) and other tantivy-only calls answer
    /// [`IndexError::ForwardOnly`].
    pub fn forward_only(vocabulary: Arc<Vocabulary>, scoring: ScoringKind) -> Self {
        Repository {
            store: None,
            forward: ForwardIndex::new(),
            vocabulary,
            scorer: scoring.scorer(),
            hook: None,
            revision: 0,
        }
    }

    /// A forward-only repository holding `forward` (e.g. a clone of another repository's
    /// [`forward`](Self::forward) index: a simulation sweep starts every run from the same
    /// initial crawl, and cloning it is cheaper than applying the crawl again).
    pub fn forward_only_from(
        forward: ForwardIndex,
        vocabulary: Arc<Vocabulary>,
        scoring: ScoringKind,
    ) -> Self {
        Repository {
            forward,
            ..Self::forward_only(vocabulary, scoring)
        }
    }

    /// The crawl of `corpus` at `unit` (every page present then) in a
    /// [`forward_only`](Self::forward_only) repository: what
    /// [`SnapshotFetcher::repository_at`](crate::fetch::SnapshotFetcher::repository_at) builds
    /// with tantivy.
    ///
    /// Built in bulk (`ForwardIndex::from_docs`); the result equals applying the crawl as
    /// one batch (with the hook off, `apply` on a forward-only repository only puts copies).
    pub fn forward_only_at(corpus: &Corpus, unit: Unit, scoring: ScoringKind) -> Self {
        Self::forward_only_from(
            forward_at(corpus, unit),
            Arc::clone(&corpus.vocabulary),
            scoring,
        )
    }

    /// Whether this repository has a tantivy index (false for forward-only ones).
    pub fn is_searchable(&self) -> bool {
        self.store.is_some()
    }

    fn store(&self) -> Result<&Store, IndexError> {
        self.store.as_ref().ok_or(IndexError::ForwardOnly)
    }

    /// An empty repository in RAM (simulations), or opens/creates the index in `dir`.
    ///
    /// An index reopened from disk has its forward index rebuilt from the stored `body` and
    /// `links` of its documents, analyzed again with the shared analyzer and mapped through
    /// `vocabulary` (tokens the vocabulary lacks count in document lengths but have no id).
    pub fn open(
        dir: Option<&Path>,
        vocabulary: Arc<Vocabulary>,
        scoring: ScoringKind,
    ) -> Result<Self, IndexError> {
        let fields = RepoSchema::build();
        let index = match dir {
            None => Index::create_in_ram(fields.schema.clone()),
            Some(dir) => {
                std::fs::create_dir_all(dir).map_err(|source| IndexError::Dir {
                    path: dir.to_path_buf(),
                    source: source.into(),
                })?;
                let mmap = MmapDirectory::open(dir).map_err(|source| IndexError::Dir {
                    path: dir.to_path_buf(),
                    source: source.into(),
                })?;
                let index = Index::open_or_create(mmap, fields.schema.clone())?;
                check_checksums(&index)?;
                index
            }
        };
        let writer: IndexWriter = index.writer_with_num_threads(1, WRITER_MEMORY)?;
        writer.set_merge_policy(Box::new(NoMergePolicy));
        Self::with_store(index, Some(writer), vocabulary, scoring)
    }

    /// Opens the existing index in `dir` for searching only: no writer, so no lock file and
    /// nothing written (a directory on a read-only mount, or one the server may not modify).
    /// [`apply`](Self::apply) answers [`IndexError::ReadOnly`]; the copies, statistics and
    /// scores are those of [`open`](Self::open).
    pub(crate) fn open_read_only(
        dir: &Path,
        vocabulary: Arc<Vocabulary>,
        scoring: ScoringKind,
    ) -> Result<Self, IndexError> {
        let mmap = MmapDirectory::open(dir).map_err(|source| IndexError::Dir {
            path: dir.to_path_buf(),
            source: source.into(),
        })?;
        let index = Index::open(mmap)?;
        check_checksums(&index)?;
        Self::with_store(index, None, vocabulary, scoring)
    }

    /// Whether the tantivy index was opened without a writer.
    pub fn is_read_only(&self) -> bool {
        self.store.as_ref().is_some_and(|s| s.writer.is_none())
    }

    fn with_store(
        index: Index,
        writer: Option<IndexWriter>,
        vocabulary: Arc<Vocabulary>,
        scoring: ScoringKind,
    ) -> Result<Self, IndexError> {
        let fields = RepoSchema::from_schema(index.schema())?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        let mut repo = Repository {
            store: Some(Store {
                index,
                writer,
                reader,
                fields,
            }),
            forward: ForwardIndex::new(),
            vocabulary,
            scorer: scoring.scorer(),
            hook: None,
            revision: 0,
        };
        repo.rebuild_forward()?;
        Ok(repo)
    }

    /// [`apply`](Self::apply) with the hook off (an initial crawl measures nothing).
    pub fn apply_unmeasured(
        &mut self,
        unit: Unit,
        batch: &[PageUpdate<'_>],
    ) -> Result<ApplyReport, IndexError> {
        let hook = self.hook.take();
        let report = self.apply(unit, batch, &mut super::hook::NullSink);
        self.hook = hook;
        report
    }

    /// How many batches this repository has been given ([`apply`](Self::apply)): two reads of
    /// it at the same revision see the same copies, so what was computed from the one holds for
    /// the other.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// Turns the measurement hook on for `terms` (single-term workload queries), or off.
    pub fn set_hook(&mut self, terms: Option<WorkloadTerms>) {
        self.hook = terms;
    }

    pub fn hook_enabled(&self) -> bool {
        self.hook.is_some()
    }

    pub fn scoring(&self) -> ScoringKind {
        self.scorer.kind()
    }

    pub fn scorer(&self) -> &dyn Scorer {
        self.scorer.as_ref()
    }

    /// The repository's forward index: copies, live statistics, postings, in-links.
    pub fn forward(&self) -> &ForwardIndex {
        &self.forward
    }

    /// Replaces the vocabulary by one that extends it (a crawl's grown vocabulary: every id
    /// already stored keeps its term).
    pub fn set_vocabulary(&mut self, vocabulary: Arc<Vocabulary>) {
        debug_assert!(vocabulary.len() >= self.vocabulary.len());
        self.vocabulary = vocabulary;
    }

    pub fn vocabulary(&self) -> &Vocabulary {
        &self.vocabulary
    }

    /// The vocabulary, shared (another repository over the same terms needs no copy).
    pub fn shared_vocabulary(&self) -> Arc<Vocabulary> {
        Arc::clone(&self.vocabulary)
    }

    pub fn num_docs(&self) -> u64 {
        use super::stats::CollectionStats;
        self.forward.num_docs()
    }

    /// Number of searchable segments (for tests and diagnostics).
    pub fn segment_count(&self) -> usize {
        self.store
            .as_ref()
            .map_or(0, |s| s.reader.searcher().segment_readers().len())
    }

    /// The one update path: applies a batch of refreshed pages, commits, reloads, and hands
    /// the hook's score shifts to `sink`.
    ///
    /// Order of work (paper 003 §5.2: the measurement rides on the index update):
    /// 1. with the hook on, `s1` for every (page, workload term of the old or new copy), with
    ///    the statistics before the batch;
    /// 2. per page: tantivy delete-by-URL, then add the new copy (unless gone); the forward
    ///    index is updated in step;
    /// 3. commit and reload the searcher; merge everything if more than [`MAX_SEGMENTS`]
    ///    segments remain;
    /// 4. `s2` with the statistics after the batch, then one call to [`ShiftSink::shifts`].
    ///
    /// A page listed twice keeps its last update.
    pub fn apply(
        &mut self,
        unit: Unit,
        batch: &[PageUpdate<'_>],
        sink: &mut dyn ShiftSink,
    ) -> Result<ApplyReport, IndexError> {
        self.revision += 1;
        let mut last: HashMap<PageId, usize> = HashMap::with_capacity(batch.len());
        for (i, u) in batch.iter().enumerate() {
            last.insert(u.page, i);
        }
        // A re-download that brought back the very copy the repository holds changes no
        // posting, so (as a crawler comparing checksums would) it is not re-indexed, and the
        // hook — which records shifts "whenever a posting ... is added or removed" (paper 003
        // §5.2) — records nothing for it.
        let unchanged = |u: &PageUpdate| {
            u.version.is_some_and(|v| {
                v.content_hash != 0
                    && self
                        .forward
                        .doc(u.page)
                        .is_some_and(|d| d.content_hash == v.content_hash)
            })
        };
        let mut skipped = 0;
        let batch: Vec<&PageUpdate> = batch
            .iter()
            .enumerate()
            .filter(|(i, u)| last[&u.page] == *i)
            .map(|(_, u)| u)
            .filter(|u| {
                let same = unchanged(u);
                skipped += usize::from(same);
                !same
            })
            .collect();

        let hook_started = std::time::Instant::now();
        let mut pending = match &self.hook {
            Some(terms) => self.scores_before(terms, &batch),
            None => Vec::new(),
        };
        let mut hook_time = hook_started.elapsed();

        let mut report = ApplyReport {
            unchanged: skipped,
            ..ApplyReport::default()
        };
        let mut copies = Vec::with_capacity(batch.len());
        for u in &batch {
            if let Some(store) = &mut self.store {
                let writer = store.writer.as_mut().ok_or(IndexError::ReadOnly)?;
                writer.delete_term(Term::from_field_text(store.fields.url, u.url));
                if let Some(v) = u.version {
                    writer.add_document(document(&store.fields, u.page, u.url, v))?;
                }
            }
            match u.version {
                Some(_) => report.put += 1,
                // Pages are distinct in `batch`: present now means present when removed.
                None => report.deleted += usize::from(self.forward.contains(u.page)),
            }
            copies.push((
                u.page,
                u.version.map(|v| ForwardDoc::from_version(u.url, v)),
            ));
        }
        // The forward index takes the batch at once: each posting list is edited once.
        self.forward.set_copies(copies);
        if let Some(store) = &mut self.store {
            if let Some(writer) = &mut store.writer {
                writer.commit()?;
            }
            store.reader.reload()?;
        }
        if self.segment_count() > MAX_SEGMENTS {
            self.merge_all()?;
            report.merged = true;
        }

        if self.hook.is_some() {
            let after_started = std::time::Instant::now();
            self.fill_scores_after(&mut pending);
            hook_time += after_started.elapsed();
            report.shifts = pending.len();
            sink.shifts(unit, &pending);
        }
        report.hook_time = hook_time;
        Ok(report)
    }

    /// Step 1 of `apply`: `(page, term, s1)` for every workload term of the old or new copy,
    /// page by page in batch order, terms ascending.
    ///
    /// Pages are scored in parallel, each thread with its own weights (a term's weight is a
    /// function of the index statistics alone, so every thread's is the same).
    fn scores_before(&self, terms: &WorkloadTerms, batch: &[&PageUpdate]) -> Vec<ScoreShift> {
        let (forward, scorer) = (&self.forward, &*self.scorer);
        let per_page: Vec<Vec<ScoreShift>> = batch
            .par_iter()
            .with_min_len(32)
            .map_init(HashMap::new, |weights: &mut Weights<'_>, u| {
                let mut out = Vec::new();
                let old = forward.doc(u.page);
                let empty = TermCounts::default();
                let old_terms = old.map(|d| &*d.terms).unwrap_or(&empty);
                let new_terms = u.version.map(|v| &*v.terms).unwrap_or(&empty);
                merge_ids(old_terms, new_terms, |t| {
                    if !terms.contains(t) {
                        return;
                    }
                    let s1 = if old_terms.contains(t) {
                        single_term_score(weights, scorer, forward, t, u.page, old_terms)
                    } else {
                        0.0
                    };
                    out.push(ScoreShift {
                        page: u.page,
                        term: t,
                        s1,
                        s2: 0.0,
                    });
                });
                out
            })
            .collect();
        per_page.concat()
    }

    /// Step 4 of `apply`: `s2` of every pending shift with the statistics after the batch (in
    /// parallel, as [`Self::scores_before`]).
    fn fill_scores_after(&self, pending: &mut [ScoreShift]) {
        let (forward, scorer) = (&self.forward, &*self.scorer);
        pending.par_iter_mut().with_min_len(256).for_each_init(
            HashMap::new,
            |weights: &mut Weights<'_>, s| {
                s.s2 = match forward.doc(s.page) {
                    Some(d) if d.terms.contains(s.term) => {
                        single_term_score(weights, scorer, forward, s.term, s.page, &d.terms)
                    }
                    _ => 0.0,
                };
            },
        );
    }
}

/// One thread's single-term weights, by term, over one state of the index.
type Weights<'a> = HashMap<TermId, Box<dyn Weight + 'a>>;

/// The score of `page`'s copy `counts` for the single term `term`, with the weight `weights`
/// keeps for it (made from `forward`'s statistics on first use).
fn single_term_score<'a>(
    weights: &mut Weights<'a>,
    scorer: &dyn Scorer,
    forward: &'a ForwardIndex,
    term: TermId,
    page: PageId,
    counts: &TermCounts,
) -> Score {
    weights
        .entry(term)
        .or_insert_with(|| scorer.weight(forward, &[term]))
        .score(page, counts)
}

/// The tantivy document of a page copy.
fn document(f: &RepoSchema, page: PageId, url: &str, v: &PageVersion) -> TantivyDocument {
    let mut doc = TantivyDocument::default();
    doc.add_text(f.url, url);
    doc.add_u64(f.url_hash, url_hash(url));
    doc.add_u64(f.page, u64::from(page));
    doc.add_text(f.title, &v.title);
    doc.add_text(f.body, v.indexed_text());
    for &l in &v.links {
        doc.add_u64(f.links, u64::from(l));
    }
    doc
}

impl Repository {
    /// Merges every segment into one, purging deleted documents, and reloads. Scores do not
    /// change (they never depend on deleted documents); this only bounds the segment count.
    pub fn merge_all(&mut self) -> Result<(), IndexError> {
        let Some(store) = &mut self.store else {
            return Ok(());
        };
        let Some(writer) = &mut store.writer else {
            return Ok(());
        };
        let ids = store.index.searchable_segment_ids()?;
        if ids.len() > 1 {
            writer.merge(&ids).wait()?;
        }
        writer.garbage_collect_files().wait()?;
        store.reader.reload()?;
        Ok(())
    }

    /// Term ids of the analyzed `text` (distinct, in order), or `None` if one of its terms is
    /// unknown to the vocabulary (then nothing can match the conjunctive query).
    pub fn query_terms(&self, text: &str) -> Option<Vec<TermId>> {
        Analyzer::new()
            .distinct_terms(text)
            .iter()
            .map(|t| self.vocabulary.get(t))
            .collect()
    }

    /// Searches free text: analyzed with the shared analyzer, conjunctive.
    pub fn search(
        &self,
        text: &str,
        offset: usize,
        limit: usize,
    ) -> Result<SearchResults, IndexError> {
        self.search_analyzed(&Analyzer::new().distinct_terms(text), offset, limit)
    }

    /// Searches analyzed terms, conjunctive: a term the vocabulary does not hold matches
    /// nothing.
    pub fn search_analyzed(
        &self,
        terms: &[String],
        offset: usize,
        limit: usize,
    ) -> Result<SearchResults, IndexError> {
        match self.vocabulary.ids_of(terms) {
            Some(ids) => self.search_terms(&ids, offset, limit),
            None => Ok(SearchResults {
                total_hits: 0,
                hits: Vec::new(),
            }),
        }
    }

    /// Searches term ids: tantivy finds the conjunctive match set (every present copy holding
    /// all terms), the repository's scorer scores it with live statistics, and the list is
    /// sorted in [`rank_order`]; `hits` is the slice `offset..offset + limit` of it.
    pub fn search_terms(
        &self,
        terms: &[TermId],
        offset: usize,
        limit: usize,
    ) -> Result<SearchResults, IndexError> {
        let (total_hits, hits) =
            self.search_ranked(&self.forward, terms, offset, offset.saturating_add(limit))?;
        Ok(SearchResults {
            total_hits,
            hits: hits
                .into_iter()
                .map(|h| Hit {
                    page: h.page,
                    url: h.url,
                    score: h.score,
                })
                .collect(),
        })
    }

    /// One shard's part of a search over several repositories: [`search_terms`](Self::search_terms)
    /// scored with the statistics of the whole collection (`stats`), its first `depth` hits in
    /// [`rank_order`] with their URL hashes, so that the shards' parts merge into the list one
    /// repository of every page gives ([`crate::index::shards::merge_hits`]).
    pub fn search_terms_under(
        &self,
        stats: &dyn CollectionStats,
        terms: &[TermId],
        depth: usize,
    ) -> Result<ShardResults, IndexError> {
        let (total_hits, hits) = self.search_ranked(stats, terms, 0, depth)?;
        Ok(ShardResults { total_hits, hits })
    }

    /// The match set's size and its hits `from..to` in [`rank_order`], scored under `stats`.
    fn search_ranked(
        &self,
        stats: &dyn CollectionStats,
        terms: &[TermId],
        from: usize,
        to: usize,
    ) -> Result<(usize, Vec<ShardHit>), IndexError> {
        if terms.is_empty() {
            return Ok((0, Vec::new()));
        }
        let store = self.store()?;
        let texts: Vec<&str> = terms.iter().map(|&t| self.vocabulary.term(t)).collect();
        let searcher = store.reader.searcher();
        let matches = searcher.search_with_statistics_provider(
            conjunctive_query(&store.fields, &texts).as_ref(),
            &MatchCollector { scoring: false },
            &self.statistics(store),
        )?;
        let weight = self.scorer.weight(stats, terms);
        let mut scored: Vec<(Score, u64, PageId, tantivy::DocAddress)> = matches
            .into_iter()
            .map(|m| {
                let d = self
                    .forward
                    .doc(m.page)
                    .expect("every indexed page has a forward copy");
                (
                    weight.score(m.page, &d.terms),
                    m.url_hash,
                    m.page,
                    m.address,
                )
            })
            .collect();
        scored.sort_by(|a, b| rank_order((a.0, a.1, a.2), (b.0, b.1, b.2)));
        let total_hits = scored.len();
        let hits = scored
            .into_iter()
            .take(to)
            .skip(from)
            .map(|(score, url_hash, page, address)| {
                let doc: TantivyDocument = searcher.doc(address)?;
                let url = doc
                    .get_first(store.fields.url)
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
                    .to_string();
                Ok(ShardHit {
                    page,
                    url,
                    url_hash,
                    score,
                })
            })
            .collect::<Result<Vec<_>, IndexError>>()?;
        Ok((total_hits, hits))
    }

    /// The full result list of `terms` from the forward index alone (no tantivy): what the
    /// exact metrics use. Equal to [`search_terms`](Self::search_terms) with no limit.
    pub fn ranked(&self, terms: &[TermId]) -> Vec<Ranked> {
        self.forward.ranked(self.scorer.as_ref(), terms)
    }

    /// tantivy's own BM25 scores for a `TermQuery` of `term` under the live statistics — the
    /// reference the hook is checked against. Sorted by page id.
    pub fn tantivy_term_scores(&self, term: TermId) -> Result<Vec<(PageId, Score)>, IndexError> {
        self.tantivy_query_scores(&[term])
    }

    /// tantivy's own BM25 scores of the conjunctive query `terms` (a `BooleanQuery` of `Must`
    /// `TermQuery`s) under the live statistics: every matching page, sorted by page id. The
    /// naive reference for the exact metrics' benchmark.
    pub fn tantivy_query_scores(
        &self,
        terms: &[TermId],
    ) -> Result<Vec<(PageId, Score)>, IndexError> {
        let store = self.store()?;
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let searcher = store.reader.searcher();
        let texts: Vec<&str> = terms.iter().map(|&t| self.vocabulary.term(t)).collect();
        let mut out: Vec<(PageId, Score)> = searcher
            .search_with_statistics_provider(
                conjunctive_query(&store.fields, &texts).as_ref(),
                &MatchCollector { scoring: true },
                &self.statistics(store),
            )?
            .into_iter()
            .map(|m| (m.page, m.score))
            .collect();
        out.sort_by_key(|p| p.0);
        Ok(out)
    }

    /// tantivy's scores with its *default* statistics (deleted documents included): only for
    /// the test showing why the live statistics are needed.
    #[cfg(test)]
    pub(crate) fn tantivy_default_term_scores(
        &self,
        term: TermId,
    ) -> Result<Vec<(PageId, Score)>, IndexError> {
        let store = self.store()?;
        let text = self.vocabulary.term(term);
        let mut out: Vec<(PageId, Score)> = store
            .reader
            .searcher()
            .search(
                conjunctive_query(&store.fields, &[text]).as_ref(),
                &MatchCollector { scoring: true },
            )?
            .into_iter()
            .map(|m| (m.page, m.score))
            .collect();
        out.sort_by_key(|p| p.0);
        Ok(out)
    }

    fn statistics<'a>(&'a self, store: &Store) -> LiveStatistics<'a> {
        LiveStatistics {
            stats: &self.forward,
            vocabulary: &self.vocabulary,
            body: store.fields.body,
        }
    }

    /// Rebuilds the forward index from the stored documents (an index reopened from disk).
    fn rebuild_forward(&mut self) -> Result<(), IndexError> {
        let Some(store) = &self.store else {
            return Ok(());
        };
        let searcher = store.reader.searcher();
        let fields = store.fields.clone();
        let mut analyzer = Analyzer::new();
        for (ord, segment) in searcher.segment_readers().iter().enumerate() {
            for doc_id in segment.doc_ids_alive() {
                let doc: TantivyDocument =
                    searcher.doc(tantivy::DocAddress::new(ord as u32, doc_id))?;
                let f = &fields;
                let page = doc.get_first(f.page).and_then(|v| v.as_u64()).unwrap_or(0) as PageId;
                let url = doc.get_first(f.url).and_then(|v| v.as_str()).unwrap_or("");
                let body = doc.get_first(f.body).and_then(|v| v.as_str()).unwrap_or("");
                let mut counts: HashMap<TermId, u32> = HashMap::new();
                let mut length = 0u32;
                analyzer.for_each_term(body, |t| {
                    length += 1;
                    if let Some(id) = self.vocabulary.get(t) {
                        *counts.entry(id).or_insert(0) += 1;
                    }
                });
                let mut counts: Vec<(TermId, u32)> = counts.into_iter().collect();
                counts.sort_unstable();
                let links = doc
                    .get_all(f.links)
                    .filter_map(|v| v.as_u64())
                    .map(|l| l as PageId)
                    .collect();
                self.forward.put(
                    page,
                    ForwardDoc {
                        terms: Arc::new(TermCounts { counts, length }),
                        links,
                        url_hash: url_hash(url),
                        // Unknown: the first refresh of a reopened index re-indexes the page.
                        content_hash: 0,
                    },
                );
            }
        }
        Ok(())
    }
}

/// The forward index of every page present at `unit`: the copies a repository synchronised
/// with the live Web at `unit` holds.
pub fn forward_at<W: LiveWeb + ?Sized>(web: &W, unit: Unit) -> ForwardIndex {
    ForwardIndex::from_docs(
        (0..web.page_count() as PageId)
            .filter_map(|p| {
                let v = web.page_at(p, unit).present()?;
                Some((p, ForwardDoc::from_version(web.url(p), v)))
            })
            .collect(),
    )
}

/// Calls `f` with every term id of `a` or `b` once, ascending (both are sorted by id).
fn merge_ids(a: &TermCounts, b: &TermCounts, mut f: impl FnMut(TermId)) {
    let (mut i, mut j) = (0, 0);
    let (a, b) = (&a.counts, &b.counts);
    while i < a.len() || j < b.len() {
        let t = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if x.0 == y.0 => {
                i += 1;
                j += 1;
                x.0
            }
            (Some(x), Some(y)) if x.0 < y.0 => {
                i += 1;
                x.0
            }
            (Some(x), None) => {
                i += 1;
                x.0
            }
            (_, Some(y)) => {
                j += 1;
                y.0
            }
            (None, None) => unreachable!(),
        };
        f(t);
    }
}
