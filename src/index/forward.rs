//! The forward index: page → analyzed copy, with exact live collection statistics.
//!
//! The repository keeps one of these beside tantivy, and [`super::live::LiveScores`] keeps one
//! for the live Web. It holds, for every page present, its [`TermCounts`] (term ids, frequencies,
//! token count) and out-links, and maintains incrementally:
//!
//! * the live collection statistics BM25 and TF-IDF need — number of documents, total tokens of
//!   the `body` field, document frequency per term id — counting present documents only (tantivy
//!   counts deleted-but-unmerged documents too; see [`super::stats`]);
//! * an inverted map term id → sorted page ids, each with the page's frequency of the term, so
//!   the exact metrics can enumerate and score every page containing a term (a full result
//!   list) without asking tantivy and without searching each page's [`TermCounts`];
//! * in-link counts: for each page, how many present pages link to it;
//! * dense per-page arrays of the copy's [`DocLength`] and URL hash, so scoring a posting list
//!   touches no [`ForwardDoc`].
//!
//! Every mutation goes through [`ForwardIndex::put`] and [`ForwardIndex::remove`], which keep the
//! three in step; a replacement updates in place the postings of the terms both copies share.

use std::cmp::Ordering;
use std::sync::Arc;

use rayon::prelude::*;

use crate::corpus::{PageId, PageVersion};
use crate::text::{TermCounts, TermId};

use super::posting_list::PostingList;
use super::scorer::{DocLength, Score, Scorer, Weight};
use super::stats::CollectionStats;

/// A page in a ranked result list.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranked {
    pub page: PageId,
    pub score: Score,
}

/// The total order of every result list: score descending, then URL hash ascending, then page
/// id ascending (page ids follow URL byte order). Independent of segments, threads and merges.
pub fn rank_order(a: (Score, u64, PageId), b: (Score, u64, PageId)) -> Ordering {
    b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2))
}

/// A 128-bit key whose ascending order is [`rank_order`]: the score mapped to an unsigned
/// integer in descending `total_cmp` order (the same bit trick `f32::total_cmp` uses), then the
/// URL hash, then the page id. Sorting plain integers is markedly cheaper than sorting tuples
/// with a comparator; the page id is the key's low 32 bits.
pub fn rank_key(score: Score, url_hash: u64, page: PageId) -> u128 {
    let mut bits = score.to_bits() as i32;
    bits ^= (((bits >> 31) as u32) >> 1) as i32;
    // Ascending in `total_cmp` order as an unsigned integer, then inverted for descending.
    let ascending = (bits as u32) ^ 0x8000_0000;
    (u128::from(!ascending) << 96) | (u128::from(url_hash) << 32) | u128::from(page)
}

/// The score [`rank_key`] was made from, bit for bit (the key's top 32 bits undone).
pub fn score_of_rank_key(key: u128) -> Score {
    let ascending = !((key >> 96) as u32);
    let bits = (ascending ^ 0x8000_0000) as i32;
    // The mask depends on the sign bit only, which the transform leaves alone.
    let original = bits ^ ((((bits >> 31) as u32) >> 1) as i32);
    Score::from_bits(original as u32)
}

/// A page's copy as the forward index sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForwardDoc {
    /// Shared with the [`PageVersion`] it was made from.
    pub terms: Arc<TermCounts>,
    /// Out-links (page ids), sorted, deduplicated.
    pub links: Vec<PageId>,
    /// [`url_hash`](super::schema::url_hash) of the page's URL: the ranking tie-breaker.
    pub url_hash: u64,
    /// The captured body's hash ([`PageVersion::content_hash`]); 0 when unknown (a copy
    /// rebuilt from a reopened index). Lets the update path skip re-downloads that brought
    /// nothing new.
    pub content_hash: u64,
}

impl ForwardDoc {
    /// The forward copy of a captured version of the page at `url`.
    pub fn from_version(url: &str, version: &PageVersion) -> Self {
        ForwardDoc {
            terms: version.terms.clone(),
            links: version.links.clone(),
            url_hash: super::schema::url_hash(url),
            content_hash: version.content_hash,
        }
    }
}

/// Page → copy, with live statistics, postings and in-link counts. See the module docs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ForwardIndex {
    /// Shared with clones (copies are never edited in place, only replaced).
    docs: Vec<Option<Arc<ForwardDoc>>>,
    /// Indexed by page id: the present copy's length (default for absent pages).
    lengths: Vec<DocLength>,
    /// Indexed by page id: the present copy's URL hash (0 for absent pages).
    url_hashes: Vec<u64>,
    num_docs: u64,
    total_tokens: u64,
    /// Indexed by term id: the pages containing the term, ascending, each with its frequency
    /// (kept apart from the page ids, so that intersections search a dense `[PageId]`).
    /// `df(t) = postings[t].len()`. Longer lists are shared copy-on-write: every run of a
    /// sweep starts from a clone of one initial index and edits a small part of its lists.
    postings: Vec<PostingList>,
    /// Indexed by page id: number of present pages whose copy links to it.
    inlinks: Vec<u32>,
    /// The pages whose copy changed, in order (see [`EditMark`]).
    journal: EditJournal,
    /// When set, the only terms whose postings are kept ([`Self::keep_postings_of`]).
    kept: Option<Arc<KeptTerms>>,
}

/// The terms an index keeps postings of: a bit per term id.
#[derive(Debug, Clone, PartialEq, Eq)]
struct KeptTerms(Vec<u64>);

impl KeptTerms {
    fn of(terms: impl IntoIterator<Item = TermId>) -> Self {
        let mut bits = Vec::new();
        for t in terms {
            let (word, bit) = (t as usize / 64, t % 64);
            if bits.len() <= word {
                bits.resize(word + 1, 0u64);
            }
            bits[word] |= 1 << bit;
        }
        KeptTerms(bits)
    }

    fn contains(&self, term: TermId) -> bool {
        self.0
            .get(term as usize / 64)
            .is_some_and(|w| w & (1 << (term % 64)) != 0)
    }
}

/// Where an index stands in its history of edits ([`ForwardIndex::edit_mark`]): a reader
/// that derived something from the index at this mark can later ask which pages changed since
/// ([`ForwardIndex::edits_since`]) and bring only those up to date.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EditMark {
    lineage: u64,
    position: usize,
}

/// The history behind [`EditMark`]s: one entry per page edit.
///
/// Guarantees: within one lineage, `pages[m.position..]` lists every page whose copy changed
/// after mark `m` (perhaps more than once). A clone starts a new lineage (the two indexes
/// diverge from there, so a mark of the one says nothing of the other), as does a journal
/// grown to [`EDIT_JOURNAL_CAP`] entries (it is cleared: memory stays bounded; readers then
/// re-derive everything once). The history is not content: two indexes with the same copies
/// are equal whatever their journals.
#[derive(Debug)]
struct EditJournal {
    lineage: u64,
    pages: Vec<PageId>,
}

/// Entries a journal keeps before it starts a new lineage (4 MiB of page ids).
const EDIT_JOURNAL_CAP: usize = 1 << 20;

/// Lineages are process-wide, so marks of different indexes never match.
fn next_lineage() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl Default for EditJournal {
    fn default() -> Self {
        EditJournal {
            lineage: next_lineage(),
            pages: Vec::new(),
        }
    }
}

impl Clone for EditJournal {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl PartialEq for EditJournal {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl EditJournal {
    fn record(&mut self, page: PageId) {
        if self.pages.len() >= EDIT_JOURNAL_CAP {
            *self = Self::default();
        }
        self.pages.push(page);
    }
}

/// Query terms up to this many are intersected with buffers on the stack.
const INLINE_TERMS: usize = 8;

/// Postings a probe steps through one by one before galloping: in the dense lists of common
/// terms the next match is usually a few postings ahead, where a linear step beats the
/// mispredicted branches of a binary search.
const LINEAR_PROBES: usize = 4;

/// Advances `from` to the first index of `list` (ascending) holding a value `>= target`:
/// [`LINEAR_PROBES`] linear steps, then [`gallop`].
#[inline]
fn seek(list: &[PageId], from: usize, target: PageId) -> usize {
    let end = (from + LINEAR_PROBES).min(list.len());
    for (i, &p) in list[from..end].iter().enumerate() {
        if p >= target {
            return from + i;
        }
    }
    gallop(list, end, target)
}

/// Advances `from` to the first index of `list` (ascending) holding a value `>= target`
/// (galloping, then binary search), and returns it.
fn gallop(list: &[PageId], from: usize, target: PageId) -> usize {
    let mut lo = from;
    let mut step = 1;
    let mut hi = from;
    while hi < list.len() && list[hi] < target {
        lo = hi + 1;
        hi += step;
        step *= 2;
    }
    let hi = hi.min(list.len());
    lo + list[lo..hi].partition_point(|&p| p < target)
}

/// The first index `i ≤ end` with every value of `list[i..end]` (ascending) `>= target`
/// (galloping back from `end`, then binary search): `list[..end].partition_point(< target)`.
fn gallop_back(list: &[PageId], end: usize, target: PageId) -> usize {
    let (mut hi, mut step) = (end, 1);
    while hi > 0 {
        let lo = hi.saturating_sub(step);
        if list[lo] < target {
            return lo + 1 + list[lo + 1..hi].partition_point(|&p| p < target);
        }
        hi = lo;
        step *= 2;
    }
    0
}

impl ForwardIndex {
    pub fn new() -> Self {
        Self::default()
    }

    /// The index of `docs` (pages ascending and distinct): equal to [`put`](Self::put)ting
    /// them one by one into an empty index, but every posting list is allocated once at its
    /// final size (document frequencies are counted first), which matters for a full crawl of
    /// tens of millions of postings.
    pub fn from_docs(docs: Vec<(PageId, ForwardDoc)>) -> Self {
        debug_assert!(docs.windows(2).all(|w| w[0].0 < w[1].0));
        let mut f = ForwardIndex::new();
        let pages = docs.last().map_or(0, |(p, _)| *p as usize + 1);
        let terms = docs
            .iter()
            .filter_map(|(_, d)| d.terms.counts.last().map(|&(t, _)| t as usize + 1))
            .max()
            .unwrap_or(0);
        let targets = docs
            .iter()
            .filter_map(|(_, d)| d.links.last().map(|&l| l as usize + 1))
            .max()
            .unwrap_or(0);
        let mut df = vec![0usize; terms];
        for (_, d) in &docs {
            for &(t, _) in &d.terms.counts {
                df[t as usize] += 1;
            }
        }
        // Only lists of two postings or more are gathered in vectors; most terms of a real
        // crawl occur in one page (see [`PostingList`]).
        let mut postings: Vec<PostingList> = vec![PostingList::Empty; terms];
        let mut gathered: Vec<(Vec<PageId>, Vec<u32>)> = Vec::new();
        let mut gathered_at: Vec<u32> = vec![u32::MAX; terms];
        for (t, &n) in df.iter().enumerate() {
            if n >= 2 {
                gathered_at[t] = gathered.len() as u32;
                gathered.push((Vec::with_capacity(n), Vec::with_capacity(n)));
            }
        }
        f.docs = vec![None; pages];
        f.lengths = vec![DocLength::default(); pages];
        f.url_hashes = vec![0; pages];
        f.inlinks = vec![0; targets];
        for (page, doc) in docs {
            let i = page as usize;
            f.num_docs += 1;
            f.total_tokens += u64::from(doc.terms.length);
            f.lengths[i] = DocLength::new(doc.terms.length);
            f.url_hashes[i] = doc.url_hash;
            for &(t, tf) in &doc.terms.counts {
                match gathered_at[t as usize] {
                    u32::MAX => postings[t as usize] = PostingList::One { page, tf },
                    g => {
                        let (pages, tfs) = &mut gathered[g as usize];
                        pages.push(page);
                        tfs.push(tf);
                    }
                }
            }
            for &target in &doc.links {
                f.inlinks[target as usize] += 1;
            }
            f.docs[i] = Some(Arc::new(doc));
        }
        for (t, g) in gathered_at.into_iter().enumerate() {
            if g != u32::MAX {
                let (pages, tfs) = std::mem::take(&mut gathered[g as usize]);
                postings[t] = PostingList::from_vecs(pages, tfs);
            }
        }
        f.postings = postings;
        f
    }

    /// This index's place in its history of edits (see [`EditMark`]).
    pub fn edit_mark(&self) -> EditMark {
        EditMark {
            lineage: self.journal.lineage,
            position: self.journal.pages.len(),
        }
    }

    /// The pages whose copy was set or removed since `mark` (ascending, distinct; a page set
    /// to an equal copy is listed too), or `None` when `mark` is not of this index's lineage
    /// (another index, a clone, a cleared journal): then everything derived at `mark` must be
    /// derived again.
    pub fn edits_since(&self, mark: EditMark) -> Option<Vec<PageId>> {
        if mark.lineage != self.journal.lineage || mark.position > self.journal.pages.len() {
            return None;
        }
        let mut pages = self.journal.pages[mark.position..].to_vec();
        pages.sort_unstable();
        pages.dedup();
        Some(pages)
    }

    /// The copy of `page`, if present.
    pub fn doc(&self, page: PageId) -> Option<&ForwardDoc> {
        self.docs.get(page as usize).and_then(Option::as_deref)
    }

    pub fn contains(&self, page: PageId) -> bool {
        self.doc(page).is_some()
    }

    /// Present pages in ascending id order.
    pub fn pages(&self) -> impl Iterator<Item = PageId> + '_ {
        self.docs
            .iter()
            .enumerate()
            .filter(|(_, d)| d.is_some())
            .map(|(i, _)| i as PageId)
    }

    /// From now on keeps the postings of `terms` only: the others are dropped and no edit
    /// touches them again. The copies, lengths, token totals and in-link counts stay whole.
    ///
    /// For an index whose readers are known to ask for these terms only — a simulated run's
    /// repository, read by the workload's metrics, its ΔQ hook and BM25 statistics of the
    /// query terms — so that its clone and each refresh cost the workload's lists, not every
    /// term of the site's. Reading the postings or the document frequency of another term
    /// panics (its lists are gone: an answer would be wrong, not approximate).
    pub fn keep_postings_of(&mut self, terms: impl IntoIterator<Item = TermId>) {
        let kept = KeptTerms::of(terms);
        for (t, list) in self.postings.iter_mut().enumerate() {
            if !kept.contains(t as TermId) {
                *list = PostingList::Empty;
            }
        }
        let last = self
            .postings
            .iter()
            .rposition(|l| !l.is_empty())
            .map_or(0, |i| i + 1);
        self.postings.truncate(last);
        self.postings.shrink_to_fit();
        self.kept = Some(Arc::new(kept));
    }

    /// Whether this index keeps the postings of `term` (every term unless
    /// [`keep_postings_of`](Self::keep_postings_of) narrowed them).
    pub fn keeps_postings_of(&self, term: TermId) -> bool {
        self.kept.as_ref().is_none_or(|k| k.contains(term))
    }

    /// Panics when the postings of `term` were dropped (see [`Self::keep_postings_of`]).
    #[inline]
    fn assert_kept(&self, term: TermId) {
        assert!(
            self.keeps_postings_of(term),
            "the postings of term {term} were not kept in this index (keep_postings_of)"
        );
    }

    /// Pages whose copy contains `term`, ascending.
    pub fn pages_with(&self, term: TermId) -> &[PageId] {
        self.assert_kept(term);
        self.postings
            .get(term as usize)
            .map_or(&[], PostingList::pages)
    }

    /// [`pages_with`](Self::pages_with) and, parallel to it, each page's frequency of `term`.
    pub fn postings(&self, term: TermId) -> (&[PageId], &[u32]) {
        self.assert_kept(term);
        self.postings
            .get(term as usize)
            .map_or((&[], &[]), PostingList::as_slices)
    }

    /// Calls `f(page, tfs)` for every page containing every term of `terms`, ascending, with
    /// `tfs[i]` the page's frequency of `terms[i]`. Nothing for an empty query.
    ///
    /// Intersects the posting lists, driving from the shortest and probing the others from the
    /// next shortest up (a page missing from a rare term is rejected first); each probe steps
    /// linearly a few postings, then gallops ([`seek`]), so a conjunctive list costs about
    /// `|shortest| · Σ min(gap, log gap)` and a single-term list is a plain scan. Queries of up
    /// to [`INLINE_TERMS`] terms intersect without allocating: this runs for every workload
    /// query at every evaluation.
    pub(crate) fn for_each_match(&self, terms: &[TermId], mut f: impl FnMut(PageId, &[u32])) {
        match terms.len() {
            0 => {}
            1 => {
                let (pages, freqs) = self.postings(terms[0]);
                for (&page, &tf) in pages.iter().zip(freqs) {
                    f(page, &[tf]);
                }
            }
            n if n <= INLINE_TERMS => {
                let mut lists: [(&[PageId], &[u32]); INLINE_TERMS] = [(&[], &[]); INLINE_TERMS];
                let mut probe_order = [0usize; INLINE_TERMS];
                let mut cursors = [0usize; INLINE_TERMS];
                let mut tfs = [0u32; INLINE_TERMS];
                self.intersect(
                    terms,
                    &mut lists[..n],
                    &mut probe_order[..n],
                    &mut cursors[..n],
                    &mut tfs[..n],
                    f,
                );
            }
            n => {
                let mut lists: Vec<(&[PageId], &[u32])> = vec![(&[], &[]); n];
                self.intersect(
                    terms,
                    &mut lists,
                    &mut vec![0; n],
                    &mut vec![0; n],
                    &mut vec![0; n],
                    f,
                );
            }
        }
    }

    /// The intersection of [`for_each_match`](Self::for_each_match) over caller-provided
    /// buffers, one slot per term.
    fn intersect<'s>(
        &'s self,
        terms: &[TermId],
        lists: &mut [(&'s [PageId], &'s [u32])],
        probe_order: &mut [usize],
        cursors: &mut [usize],
        tfs: &mut [u32],
        mut f: impl FnMut(PageId, &[u32]),
    ) {
        for (list, &t) in lists.iter_mut().zip(terms) {
            *list = self.postings(t);
        }
        for (slot, i) in probe_order.iter_mut().enumerate() {
            *i = slot;
        }
        cursors.fill(0);
        // Stable: among lists of equal length the earlier term drives, as before.
        probe_order.sort_by_key(|&i| lists[i].0.len());
        let driver = probe_order[0];
        let (driver_pages, driver_freqs) = lists[driver];
        'pages: for (&page, &tf) in driver_pages.iter().zip(driver_freqs) {
            tfs[driver] = tf;
            for &i in &probe_order[1..] {
                let (pages, freqs) = lists[i];
                let at = seek(pages, cursors[i], page);
                cursors[i] = at;
                if at == pages.len() {
                    break 'pages;
                }
                if pages[at] != page {
                    continue 'pages;
                }
                tfs[i] = freqs[at];
            }
            f(page, tfs);
        }
    }

    /// Pages containing every term of `terms` (a conjunctive match set), ascending. Empty for
    /// an empty query.
    pub fn matching(&self, terms: &[TermId]) -> Vec<PageId> {
        let mut out = Vec::new();
        self.for_each_match(terms, |p, _| out.push(p));
        out
    }

    /// The full result list `A(q)` of the conjunctive query `terms` under `scorer` with these
    /// statistics: every page containing all terms, in [`rank_order`].
    ///
    /// Scores come from [`Weight::score_tfs`] on the frequencies the postings carry (equal to
    /// [`Weight::score`] on the page's copy). The sort may be unstable: [`rank_order`] is a
    /// total order with no ties (page ids are distinct).
    pub fn ranked(&self, scorer: &dyn Scorer, terms: &[TermId]) -> Vec<Ranked> {
        let mut hits = self.scored(scorer, terms);
        hits.sort_unstable_by(|a, b| rank_order(*a, *b));
        hits.into_iter()
            .map(|(score, _, page)| Ranked { page, score })
            .collect()
    }

    /// The scores of [`ranked`](Self::ranked), in descending order, without the ranking
    /// (ties between equal scores need not be broken to know the score at each rank).
    pub fn ranked_scores(&self, scorer: &dyn Scorer, terms: &[TermId]) -> Vec<Score> {
        let mut scores = Vec::with_capacity(self.match_bound(terms));
        self.for_each_scored(scorer, terms, |_, score, _| scores.push(score));
        scores.sort_unstable_by(|a, b| b.total_cmp(a));
        scores
    }

    /// `(score, url hash, page)` of every matching page, ascending by page.
    fn scored(&self, scorer: &dyn Scorer, terms: &[TermId]) -> Vec<(Score, u64, PageId)> {
        let mut hits = Vec::with_capacity(self.match_bound(terms));
        self.for_each_scored(scorer, terms, |page, score, url_hash| {
            hits.push((score, url_hash, page))
        });
        hits
    }

    /// Calls `f(page, score, url hash)` for every page of the result list of `terms`, in
    /// ascending page order (not ranked): the scores of [`ranked`](Self::ranked), for callers
    /// that join the list with other page-ordered data before (or instead of) ranking it.
    pub fn for_each_scored(
        &self,
        scorer: &dyn Scorer,
        terms: &[TermId],
        mut f: impl FnMut(PageId, Score, u64),
    ) {
        let weight = scorer.weight(self, terms);
        if let [term] = terms {
            let (pages, tfs) = self.postings(*term);
            self.for_each_scored_list(&*weight, pages, tfs, 1, f);
            return;
        }
        self.for_each_match(terms, |p, tfs| {
            let i = p as usize;
            f(
                p,
                weight.score_tfs(p, tfs, self.lengths[i]),
                self.url_hashes[i],
            );
        });
    }

    /// `f(page, score, url hash)` for each page of a list, scored in one
    /// [`Weight::score_list`] call.
    fn for_each_scored_list(
        &self,
        weight: &dyn Weight,
        pages: &[PageId],
        tfs: &[u32],
        width: usize,
        mut f: impl FnMut(PageId, Score, u64),
    ) {
        thread_local! {
            static SCORES: std::cell::Cell<Vec<Score>> = const { std::cell::Cell::new(Vec::new()) };
        }
        // Taken out while in use, so that `f` may score another list.
        let mut scores = SCORES.take();
        weight.score_list(pages, tfs, width, &self.lengths, &mut scores);
        for (&p, &score) in pages.iter().zip(&scores) {
            f(p, score, self.url_hashes[p as usize]);
        }
        SCORES.set(scores);
    }

    /// [`for_each_scored`](Self::for_each_scored) over the result list of `terms` as
    /// `for_each_match` gave it for this index's current copies:
    /// `pages` ascending and, per page, `terms.len()` frequencies in `tfs` (in `terms` order).
    /// The same calls, bit for bit, without intersecting the posting lists again.
    pub fn for_each_scored_in(
        &self,
        scorer: &dyn Scorer,
        terms: &[TermId],
        pages: &[PageId],
        tfs: &[u32],
        f: impl FnMut(PageId, Score, u64),
    ) {
        let weight = scorer.weight(self, terms);
        self.for_each_scored_list(&*weight, pages, tfs, terms.len(), f);
    }

    /// Scores of the result list of `terms` at the given 1-based `ranks` (ascending, each
    /// within `1..=len`), with the list's length: what a score-to-rank fit reads. Equal to
    /// indexing [`ranked_scores`](Self::ranked_scores), but by successive selections rather
    /// than a full sort.
    pub fn scores_at_ranks(
        &self,
        scorer: &dyn Scorer,
        terms: &[TermId],
        ranks: impl Fn(usize) -> Vec<usize>,
    ) -> (usize, Vec<Score>) {
        let mut scores = Vec::with_capacity(self.match_bound(terms));
        self.for_each_scored(scorer, terms, |_, s, _| scores.push(s));
        let len = scores.len();
        let wanted = ranks(len);
        let mut out = Vec::with_capacity(wanted.len());
        // `scores[..done]` holds the `done` largest scores; select each next rank in the rest.
        let mut done = 0;
        for r in wanted {
            debug_assert!(r >= 1 && r <= len);
            let i = r - 1;
            if i >= done {
                let rest = &mut scores[done..];
                rest.select_nth_unstable_by(i - done, |a, b| b.total_cmp(a));
                done = i;
            }
            out.push(scores[i]);
        }
        (len, out)
    }

    /// An upper bound of the number of pages matching `terms` (the shortest posting list).
    fn match_bound(&self, terms: &[TermId]) -> usize {
        terms
            .iter()
            .map(|&t| self.pages_with(t).len())
            .min()
            .unwrap_or(0)
    }

    /// The score of the present copy of `page` for `terms` (0 when absent or not matching).
    pub fn score(&self, scorer: &dyn Scorer, page: PageId, terms: &[TermId]) -> Score {
        match self.doc(page) {
            Some(d) => scorer.weight(self, terms).score(page, &d.terms),
            None => 0.0,
        }
    }

    /// Inserts or replaces the copy of `page`.
    ///
    /// A replacement touches only the postings of terms the two copies do not share: a term in
    /// both keeps its posting and has its frequency updated in place. Refreshes mostly keep a
    /// page's common terms, whose posting lists are the longest, so a change costs what it
    /// changes instead of two shifts of every one of the page's lists.
    pub fn put(&mut self, page: PageId, doc: ForwardDoc) {
        self.journal.record(page);
        let i = page as usize;
        if self.docs.len() <= i {
            self.docs.resize(i + 1, None);
            self.lengths.resize(i + 1, DocLength::default());
            self.url_hashes.resize(i + 1, 0);
        }
        let old = self.docs[i].take();
        if let Some(old) = &old {
            self.num_docs -= 1;
            self.total_tokens -= u64::from(old.terms.length);
            for &target in &old.links {
                self.inlinks[target as usize] -= 1;
            }
        }
        self.num_docs += 1;
        self.total_tokens += u64::from(doc.terms.length);
        self.lengths[i] = DocLength::new(doc.terms.length);
        self.url_hashes[i] = doc.url_hash;
        let old_counts: &[(TermId, u32)] = old.as_ref().map_or(&[], |o| &o.terms.counts);
        let new_counts = &doc.terms.counts;
        // Both lists are sorted by term id: merge them.
        let (mut a, mut b) = (0, 0);
        while a < old_counts.len() || b < new_counts.len() {
            let old_term = old_counts.get(a).map(|&(t, _)| t);
            let new_term = new_counts.get(b).map(|&(t, _)| t);
            match (old_term, new_term) {
                (Some(o), Some(n)) if o == n => {
                    self.insert_posting(o, page, new_counts[b].1);
                    a += 1;
                    b += 1;
                }
                (Some(o), Some(n)) if o < n => {
                    self.remove_posting(o, page);
                    a += 1;
                }
                (Some(o), None) => {
                    self.remove_posting(o, page);
                    a += 1;
                }
                (_, Some(n)) => {
                    self.insert_posting(n, page, new_counts[b].1);
                    b += 1;
                }
                (None, None) => unreachable!("loop condition"),
            }
        }
        for &target in &doc.links {
            let target = target as usize;
            if self.inlinks.len() <= target {
                self.inlinks.resize(target + 1, 0);
            }
            self.inlinks[target] += 1;
        }
        self.docs[i] = Some(Arc::new(doc));
    }

    /// Adds `page`'s posting of `term`, or sets its frequency if present.
    fn insert_posting(&mut self, term: TermId, page: PageId, tf: u32) {
        if !self.keeps_postings_of(term) {
            return;
        }
        let t = term as usize;
        if self.postings.len() <= t {
            self.postings.resize(t + 1, PostingList::Empty);
        }
        self.postings[t].set(page, tf);
    }

    fn remove_posting(&mut self, term: TermId, page: PageId) {
        if !self.keeps_postings_of(term) {
            return;
        }
        self.postings[term as usize].remove(page);
    }

    /// Puts `copy` in as the copy of `page`, or removes the page's copy when `None` (a page
    /// gone from the Web).
    pub fn set_copy(&mut self, page: PageId, copy: Option<ForwardDoc>) {
        match copy {
            Some(doc) => self.put(page, doc),
            None => {
                self.remove(page);
            }
        }
    }

    /// Sets the copy of every page of `updates` (`None`: the page is gone), with the same end
    /// state as [`set_copy`](Self::set_copy) on each in turn.
    ///
    /// One at a time, each posting added or dropped shifts the rest of its list, and the
    /// longest lists (common terms, boilerplate) are touched by a share of every unit's
    /// changes: a unit would cost pages × list length. Here the additions and removals are
    /// gathered and applied list by list in one pass each (`edit_postings`), so a unit costs
    /// the lists it touches once; a term both copies hold with a new frequency is re-weighed
    /// the same way.
    pub fn set_copies(&mut self, updates: impl IntoIterator<Item = (PageId, Option<ForwardDoc>)>) {
        // `(term, page, tf)`: add or re-weigh the posting (tf ≥ 1), or drop it (tf = 0).
        let mut edits: Vec<(TermId, PageId, u32)> = Vec::new();
        let mut seen: rustc_hash::FxHashSet<PageId> = rustc_hash::FxHashSet::default();
        for (page, copy) in updates {
            if !seen.insert(page) {
                // A page listed twice: its earlier edits must land before its next copy is
                // compared with the one it replaces.
                self.apply_edits(&mut edits);
                seen.clear();
                seen.insert(page);
            }
            let i = page as usize;
            if self.docs.len() <= i {
                if copy.is_none() {
                    continue;
                }
                self.docs.resize(i + 1, None);
                self.lengths.resize(i + 1, DocLength::default());
                self.url_hashes.resize(i + 1, 0);
            }
            self.journal.record(page);
            let old = self.docs[i].take();
            if let Some(old) = &old {
                self.num_docs -= 1;
                self.total_tokens -= u64::from(old.terms.length);
                for &target in &old.links {
                    self.inlinks[target as usize] -= 1;
                }
            }
            let old_counts: &[(TermId, u32)] = old.as_ref().map_or(&[], |o| &o.terms.counts);
            let Some(doc) = copy else {
                self.lengths[i] = DocLength::default();
                self.url_hashes[i] = 0;
                edits.extend(old_counts.iter().map(|&(t, _)| (t, page, 0)));
                continue;
            };
            self.num_docs += 1;
            self.total_tokens += u64::from(doc.terms.length);
            self.lengths[i] = DocLength::new(doc.terms.length);
            self.url_hashes[i] = doc.url_hash;
            let new_counts = &doc.terms.counts;
            // Both lists are sorted by term id: merge them.
            let (mut a, mut b) = (0, 0);
            while a < old_counts.len() || b < new_counts.len() {
                let old_term = old_counts.get(a).map(|&(t, _)| t);
                let new_term = new_counts.get(b).map(|&(t, _)| t);
                match (old_term, new_term) {
                    (Some(o), Some(n)) if o == n => {
                        // Most terms of a changed page keep their count: no edit. A new
                        // count is an edit like the others, applied with its list's batch
                        // (in parallel, and a shared list copied once, not once per page).
                        if old_counts[a].1 != new_counts[b].1 {
                            edits.push((o, page, new_counts[b].1));
                        }
                        a += 1;
                        b += 1;
                    }
                    (Some(o), Some(n)) if o < n => {
                        edits.push((o, page, 0));
                        a += 1;
                    }
                    (Some(o), None) => {
                        edits.push((o, page, 0));
                        a += 1;
                    }
                    (_, Some(n)) => {
                        debug_assert!(new_counts[b].1 > 0, "a term counted 0 times");
                        edits.push((n, page, new_counts[b].1));
                        b += 1;
                    }
                    (None, None) => unreachable!("loop condition"),
                }
            }
            for &target in &doc.links {
                let target = target as usize;
                if self.inlinks.len() <= target {
                    self.inlinks.resize(target + 1, 0);
                }
                self.inlinks[target] += 1;
            }
            self.docs[i] = Some(Arc::new(doc));
        }
        self.apply_edits(&mut edits);
    }

    /// Applies and clears the gathered posting edits of [`set_copies`](Self::set_copies)
    /// (each `(term, page)` at most once).
    fn apply_edits(&mut self, edits: &mut Vec<(TermId, PageId, u32)>) {
        if let Some(kept) = &self.kept {
            edits.retain(|&(t, _, _)| kept.contains(t));
        }
        if let Some(top) = edits
            .iter()
            .filter(|e| e.2 > 0)
            .map(|e| e.0 as usize + 1)
            .max()
        {
            if self.postings.len() < top {
                self.postings.resize(top, PostingList::Empty);
            }
        }
        edits.sort_unstable_by_key(|&(t, p, _)| (u64::from(t) << 32) | u64::from(p));
        // Each term's list with its edits; the lists are disjoint, so a batch (a unit's
        // changes touch thousands of lists) edits them side by side.
        let mut lists: Vec<(&mut PostingList, &[PostingEdit])> = Vec::new();
        let mut rest: &mut [PostingList] = &mut self.postings;
        let mut first_of_rest = 0;
        for group in edits.chunk_by(|a, b| a.0 == b.0) {
            let t = group[0].0 as usize;
            if t >= first_of_rest + rest.len() {
                // Removals from a list never created: nothing to drop (terms ascend).
                break;
            }
            let (list, tail) = std::mem::take(&mut rest)[t - first_of_rest..]
                .split_first_mut()
                .expect("t is within the rest");
            lists.push((list, group));
            rest = tail;
            first_of_rest = t + 1;
        }
        lists.into_par_iter().with_min_len(64).for_each_init(
            Vec::new,
            |changes: &mut Vec<(PageId, u32)>, (list, group)| {
                changes.clear();
                changes.extend(group.iter().map(|&(_, p, tf)| (p, tf)));
                list.edit(|pages, tfs| edit_postings(pages, tfs, changes));
            },
        );
        edits.clear();
    }

    /// Removes the copy of `page`, returning it (no-op when absent).
    pub fn remove(&mut self, page: PageId) -> Option<ForwardDoc> {
        let doc = self.docs.get_mut(page as usize)?.take()?;
        self.journal.record(page);
        self.num_docs -= 1;
        self.total_tokens -= u64::from(doc.terms.length);
        self.lengths[page as usize] = DocLength::default();
        self.url_hashes[page as usize] = 0;
        for &(t, _) in &doc.terms.counts {
            self.remove_posting(t, page);
        }
        for &target in &doc.links {
            self.inlinks[target as usize] -= 1;
        }
        Some(Arc::unwrap_or_clone(doc))
    }

    /// Approximate heap bytes held (copies, postings, in-link counts), counting posting lists
    /// shared with clones in full.
    pub fn memory_bytes(&self) -> usize {
        use std::mem::size_of;
        let docs: usize = self
            .docs
            .iter()
            .flatten()
            .map(|d| {
                d.terms.counts.capacity() * size_of::<(TermId, u32)>()
                    + d.links.capacity() * size_of::<PageId>()
            })
            .sum();
        let postings: usize = self.postings.capacity() * size_of::<PostingList>()
            + self
                .postings
                .iter()
                .map(PostingList::heap_bytes)
                .sum::<usize>();
        docs + self.docs.capacity() * size_of::<Option<Arc<ForwardDoc>>>()
            + postings
            + self.inlinks.capacity() * size_of::<u32>()
            + self.lengths.capacity() * size_of::<DocLength>()
            + self.url_hashes.capacity() * size_of::<u64>()
    }
}

/// `(term, page, tf)`: add or re-weigh the posting (tf ≥ 1), or drop it (tf = 0).
type PostingEdit = (TermId, PageId, u32);

/// Applies `changes` (ascending by page, each page once) to the posting list `pages` with its
/// frequencies `tfs`: `(page, tf ≥ 1)` adds the posting or sets its frequency, `(page, 0)`
/// drops it if present. In place, each element moved at most twice (once by the removals'
/// compaction, once by the additions' shift from the back), so the list costs its length
/// plus a binary search per change, however many changes it takes.
fn edit_postings(pages: &mut Vec<PageId>, tfs: &mut Vec<u32>, changes: &[(PageId, u32)]) {
    debug_assert!(changes.windows(2).all(|w| w[0].0 < w[1].0));
    let len = pages.len();
    // Pass 1, front to back: drop removals, re-weigh pages present, set aside additions.
    let mut additions: Vec<(PageId, u32)> = Vec::new();
    let (mut read, mut write) = (0, 0);
    for &(page, tf) in changes {
        // Changes ascend and a busy list takes many, close together: gallop from the last.
        let at = gallop(pages, read, page);
        if write != read {
            pages.copy_within(read..at, write);
            tfs.copy_within(read..at, write);
        }
        write += at - read;
        read = at;
        let present = at < len && pages[at] == page;
        match (present, tf) {
            (true, 0) => read += 1,
            (true, _) => {
                pages[write] = page;
                tfs[write] = tf;
                read += 1;
                write += 1;
            }
            (false, 0) => {}
            (false, _) => additions.push((page, tf)),
        }
    }
    if write != read {
        pages.copy_within(read..len, write);
        tfs.copy_within(read..len, write);
    }
    write += len - read;
    pages.truncate(write);
    tfs.truncate(write);
    if additions.is_empty() {
        return;
    }
    // Pass 2, back to front: the list grows by the additions; the pages between addition
    // j − 1 and addition j move right by j + 1 (additions 0..=j land before them).
    let old_len = pages.len();
    pages.resize(old_len + additions.len(), 0);
    tfs.resize(old_len + additions.len(), 0);
    let mut end = old_len;
    for (j, &(page, tf)) in additions.iter().enumerate().rev() {
        let at = gallop_back(pages, end, page);
        pages.copy_within(at..end, at + j + 1);
        tfs.copy_within(at..end, at + j + 1);
        pages[at + j] = page;
        tfs[at + j] = tf;
        end = at;
    }
}

impl CollectionStats for ForwardIndex {
    fn num_docs(&self) -> u64 {
        self.num_docs
    }
    fn total_tokens(&self) -> u64 {
        self.total_tokens
    }
    fn doc_freq(&self, term: TermId) -> u64 {
        self.pages_with(term).len() as u64
    }
    fn inlinks(&self, page: PageId) -> u32 {
        self.inlinks.get(page as usize).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(counts: &[(TermId, u32)], links: &[PageId]) -> ForwardDoc {
        ForwardDoc {
            terms: Arc::new(TermCounts {
                counts: counts.to_vec(),
                length: counts.iter().map(|c| c.1).sum(),
            }),
            links: links.to_vec(),
            url_hash: 0,
            content_hash: 0,
        }
    }

    #[test]
    fn a_copy_shares_its_versions_term_counts() {
        let mut vocabulary = crate::text::Vocabulary::new();
        let v = crate::index::testutil::version(&mut vocabulary, 0, "T", "emacs lisp", vec![]);
        let copy = ForwardDoc::from_version("https://example.org/a", &v);
        assert!(Arc::ptr_eq(&copy.terms, &v.terms));
        assert_eq!(*copy.terms, *v.terms);
    }

    #[test]
    fn statistics_follow_puts_replacements_and_removals() {
        let mut f = ForwardIndex::new();
        f.put(3, doc(&[(0, 2), (1, 1)], &[1]));
        f.put(1, doc(&[(1, 4)], &[3]));
        assert_eq!((f.num_docs(), f.total_tokens()), (2, 7));
        assert_eq!(f.pages_with(1), &[1, 3]);
        assert_eq!(f.doc_freq(0), 1);
        assert_eq!((f.inlinks(1), f.inlinks(3)), (1, 1));
        assert_eq!(f.matching(&[0, 1]), vec![3]);
        // Replacement drops the old postings and links.
        f.put(3, doc(&[(2, 5)], &[]));
        assert_eq!((f.num_docs(), f.total_tokens()), (2, 9));
        assert_eq!(f.pages_with(0), &[] as &[PageId]);
        assert_eq!(f.pages_with(1), &[1]);
        assert_eq!(f.inlinks(1), 0);
        assert!(f.remove(1).is_some());
        assert!(f.remove(1).is_none());
        assert_eq!((f.num_docs(), f.total_tokens(), f.inlinks(3)), (1, 5, 0));
        assert_eq!(f.pages().collect::<Vec<_>>(), vec![3]);
        assert!(f.memory_bytes() > 0);
    }

    /// The straightforward definition of a result list: every present copy containing all
    /// terms, scored by [`Weight::score`] on the copy's `TermCounts`, stably sorted.
    fn reference_ranked(f: &ForwardIndex, scorer: &dyn Scorer, terms: &[TermId]) -> Vec<Ranked> {
        let weight = scorer.weight(f, terms);
        let mut hits: Vec<(Score, u64, PageId)> = f
            .pages()
            .filter_map(|p| {
                let d = f.doc(p).unwrap();
                let all = !terms.is_empty() && terms.iter().all(|&t| d.terms.contains(t));
                all.then(|| (weight.score(p, &d.terms), d.url_hash, p))
            })
            .collect();
        hits.sort_by(|a, b| rank_order(*a, *b));
        hits.into_iter()
            .map(|(score, _, page)| Ranked { page, score })
            .collect()
    }

    #[test]
    fn bulk_construction_equals_one_put_at_a_time() {
        use crate::corpus::LiveWeb;
        use crate::index::testutil::random_corpus;
        let corpus = random_corpus(90, 6, 31);
        for unit in 0..corpus.units() {
            let docs: Vec<(PageId, ForwardDoc)> = (0..corpus.page_count() as PageId)
                .filter_map(|p| {
                    let v = corpus.page_at(p, unit).present()?;
                    Some((p, ForwardDoc::from_version(corpus.url(p), v)))
                })
                .collect();
            let mut one_by_one = ForwardIndex::new();
            for (p, d) in docs.clone() {
                one_by_one.put(p, d);
            }
            let bulk = ForwardIndex::from_docs(docs);
            // Vectors compare by content; trailing empty postings/in-links may differ in
            // length only when no copy reaches them, so compare the observable state.
            assert_eq!(bulk.docs, one_by_one.docs);
            assert_eq!(bulk.lengths, one_by_one.lengths);
            assert_eq!(bulk.url_hashes, one_by_one.url_hashes);
            assert_eq!(bulk.num_docs, one_by_one.num_docs);
            assert_eq!(bulk.total_tokens, one_by_one.total_tokens);
            assert_eq!(bulk.postings, one_by_one.postings);
            assert_eq!(bulk.inlinks, one_by_one.inlinks);
        }
        assert_eq!(ForwardIndex::from_docs(Vec::new()), ForwardIndex::new());
    }

    /// An index keeping some terms' postings, edited unit after unit by both update paths
    /// (one copy at a time and in batches), answers those terms, the statistics and the copies
    /// as the full index does, and refuses the other terms.
    #[test]
    fn an_index_keeping_some_postings_answers_them_as_the_full_index() {
        use crate::corpus::LiveWeb;
        use crate::index::testutil::random_corpus;
        let corpus = random_corpus(120, 8, 9);
        let copy_at = |p: PageId, unit| {
            corpus
                .page_at(p, unit)
                .present()
                .map(|v| ForwardDoc::from_version(corpus.url(p), v))
        };
        let pages = corpus.page_count() as PageId;
        let mut full = ForwardIndex::from_docs(
            (0..pages)
                .filter_map(|p| copy_at(p, 0).map(|d| (p, d)))
                .collect(),
        );
        let terms = full.postings.len() as TermId;
        let kept_terms: Vec<TermId> = (0..terms).filter(|t| t % 3 == 1).collect();
        let mut kept = full.clone();
        kept.keep_postings_of(kept_terms.iter().copied());
        assert!(kept.memory_bytes() < full.memory_bytes());
        for unit in 0..corpus.units() {
            if unit > 0 {
                // Odd units one copy at a time, even ones in a batch.
                let updates: Vec<(PageId, Option<ForwardDoc>)> =
                    (0..pages).map(|p| (p, copy_at(p, unit))).collect();
                for index in [&mut full, &mut kept] {
                    if unit % 2 == 1 {
                        for (p, copy) in updates.clone() {
                            index.set_copy(p, copy);
                        }
                    } else {
                        index.set_copies(updates.clone());
                    }
                }
            }
            assert_eq!(
                (kept.num_docs, kept.total_tokens),
                (full.num_docs, full.total_tokens)
            );
            assert_eq!(kept.docs, full.docs, "unit {unit}");
            assert_eq!(kept.lengths, full.lengths);
            assert_eq!(kept.inlinks, full.inlinks);
            for &t in &kept_terms {
                assert_eq!(kept.postings(t), full.postings(t), "unit {unit} term {t}");
                assert_eq!(kept.doc_freq(t), full.doc_freq(t));
            }
        }
        assert!(kept.keeps_postings_of(1) && !kept.keeps_postings_of(2));
        assert!(full.keeps_postings_of(2));
        let refused = std::panic::catch_unwind(|| kept.pages_with(2).len());
        assert!(refused.is_err(), "a dropped term's postings were read");
    }

    #[test]
    fn replacements_through_the_units_equal_a_fresh_build_of_each_unit() {
        use crate::corpus::LiveWeb;
        use crate::index::testutil::random_corpus;
        let corpus = random_corpus(120, 8, 7);
        let mut evolving = ForwardIndex::new();
        for unit in 0..corpus.units() {
            let mut docs = Vec::new();
            for p in 0..corpus.page_count() as PageId {
                let copy = corpus
                    .page_at(p, unit)
                    .present()
                    .map(|v| ForwardDoc::from_version(corpus.url(p), v));
                if let Some(d) = &copy {
                    docs.push((p, d.clone()));
                }
                evolving.set_copy(p, copy);
            }
            let fresh = ForwardIndex::from_docs(docs);
            assert_eq!(fresh.docs, evolving.docs[..fresh.docs.len()], "unit {unit}");
            assert!(evolving.docs[fresh.docs.len()..]
                .iter()
                .all(Option::is_none));
            assert_eq!(
                (fresh.num_docs, fresh.total_tokens),
                (evolving.num_docs, evolving.total_tokens)
            );
            for t in 0..evolving.postings.len() {
                let (pages, tfs) = evolving.postings(t as TermId);
                assert_eq!(
                    fresh.postings(t as TermId),
                    (pages, tfs),
                    "unit {unit}, term {t}"
                );
            }
            for p in 0..evolving.inlinks.len() {
                assert_eq!(
                    fresh.inlinks.get(p).copied().unwrap_or(0),
                    evolving.inlinks[p]
                );
            }
        }
    }

    /// Random batches of replacements, additions and removals (pages listed twice, removals
    /// of absent pages, terms never seen before) leave exactly the state of
    /// [`ForwardIndex::set_copy`] one update at a time, for long lists edited many times per
    /// batch as for short ones.
    #[test]
    fn batched_copies_equal_one_update_at_a_time() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(18);
        let random_doc = |rng: &mut rand_chacha::ChaCha8Rng, terms: u32| {
            let mut counts: Vec<(TermId, u32)> = (0..rng.gen_range(1..12))
                .map(|_| {
                    // Terms 0..3 are in most copies (long lists), the others rare.
                    let t = if rng.gen_bool(0.5) {
                        rng.gen_range(0..3)
                    } else {
                        rng.gen_range(3..terms)
                    };
                    (t, rng.gen_range(1..5))
                })
                .collect();
            counts.sort_unstable();
            counts.dedup_by_key(|c| c.0);
            let mut links: Vec<PageId> = (0..rng.gen_range(0..4))
                .map(|_| rng.gen_range(0..300))
                .collect();
            links.sort_unstable();
            links.dedup();
            doc(&counts, &links)
        };
        let (mut batched, mut sequential) = (ForwardIndex::new(), ForwardIndex::new());
        for round in 0..40 {
            let terms = 20 + round * 5;
            let updates: Vec<(PageId, Option<ForwardDoc>)> = (0..rng.gen_range(0..150))
                .map(|_| {
                    let page = rng.gen_range(0..250);
                    let copy = rng.gen_bool(0.8).then(|| random_doc(&mut rng, terms));
                    (page, copy)
                })
                .collect();
            for (page, copy) in updates.clone() {
                sequential.set_copy(page, copy);
            }
            batched.set_copies(updates);
            assert_eq!(batched, sequential, "round {round}");
        }
        assert!(sequential.pages_with(0).len() > 100);
    }

    #[test]
    fn galloping_finds_the_partition_point_from_either_end() {
        let list: Vec<PageId> = vec![1, 3, 3, 5, 8, 13, 21, 34, 55, 89, 144];
        for target in 0..150 {
            for bound in 0..=list.len() {
                let expected = list[..bound].partition_point(|&p| p < target);
                assert_eq!(
                    gallop_back(&list, bound, target),
                    expected,
                    "{target} {bound}"
                );
                let from_here = bound + list[bound..].partition_point(|&p| p < target);
                assert_eq!(gallop(&list, bound, target), from_here, "{target} {bound}");
            }
        }
    }

    #[test]
    fn editing_a_posting_list_adds_reweighs_and_drops() {
        let mut pages = vec![2, 4, 6, 8];
        let mut tfs = vec![1, 1, 1, 1];
        edit_postings(
            &mut pages,
            &mut tfs,
            &[(1, 5), (2, 0), (3, 7), (6, 9), (7, 0), (8, 0), (10, 2)],
        );
        assert_eq!(pages, vec![1, 3, 4, 6, 10]);
        assert_eq!(tfs, vec![5, 7, 1, 9, 2]);
        edit_postings(&mut pages, &mut tfs, &[]);
        assert_eq!(pages, vec![1, 3, 4, 6, 10]);
    }

    #[test]
    fn rank_keys_give_back_their_scores() {
        let specials = [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            3.25,
            -7.5e-3,
            f32::MIN_POSITIVE,
            f32::MAX,
            f32::MIN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
        ];
        for s in specials {
            let back = score_of_rank_key(rank_key(s, 0xdead_beef, 17));
            assert_eq!(back.to_bits(), s.to_bits(), "{s}");
        }
    }

    #[test]
    fn rank_keys_sort_in_rank_order() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(8);
        let specials = [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            f32::MIN_POSITIVE,
            f32::MAX,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            1.0e-40,
        ];
        let triples: Vec<(Score, u64, PageId)> = (0..3000)
            .map(|i| {
                let score = if i % 3 == 0 {
                    specials[rng.gen_range(0..specials.len())]
                } else {
                    rng.gen_range(-5.0f32..50.0)
                };
                (
                    score,
                    rng.gen_range(0..4u64) << 62 | rng.gen_range(0..3),
                    rng.gen(),
                )
            })
            .collect();
        let mut by_order = triples.clone();
        by_order.sort_by(|a, b| rank_order(*a, *b));
        let mut by_key = triples;
        by_key.sort_by_key(|&(s, h, p)| rank_key(s, h, p));
        let bits = |v: &[(Score, u64, PageId)]| {
            v.iter()
                .map(|&(s, h, p)| (s.to_bits(), h, p))
                .collect::<Vec<_>>()
        };
        assert_eq!(bits(&by_key), bits(&by_order));
        assert_eq!(rank_key(1.0, 7, 42) as u32, 42);
    }

    fn bits(list: &[Ranked]) -> Vec<(PageId, u32)> {
        list.iter().map(|r| (r.page, r.score.to_bits())).collect()
    }

    #[test]
    fn optimised_lists_equal_the_reference_bit_for_bit() {
        use crate::corpus::LiveWeb;
        use crate::index::testutil::random_corpus;
        use crate::index::ScoringKind;
        use rand::{Rng, SeedableRng};

        let corpus = random_corpus(120, 8, 17);
        let vocabulary = corpus.vocabulary.len() as TermId;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        // Queries: every single term, and random conjunctions of 2–3 distinct terms (some with
        // an unknown term id).
        let mut queries: Vec<Vec<TermId>> = (0..vocabulary).map(|t| vec![t]).collect();
        for _ in 0..200 {
            let n = rng.gen_range(2..=3);
            let mut q: Vec<TermId> = Vec::new();
            while q.len() < n {
                let t = rng.gen_range(0..vocabulary + 2);
                if !q.contains(&t) {
                    q.push(t);
                }
            }
            queries.push(q);
        }
        queries.push(Vec::new());
        // One index advanced unit by unit (puts, replacements and removals in page order)
        // and one rebuilt in descending page order, so the postings see both insert paths.
        let mut f = ForwardIndex::new();
        for unit in 0..corpus.units() {
            for p in 0..corpus.page_count() as PageId {
                match corpus.page_at(p, unit).present() {
                    Some(v) => f.put(p, ForwardDoc::from_version(corpus.url(p), v)),
                    None => {
                        f.remove(p);
                    }
                }
            }
            let mut g = ForwardIndex::new();
            for p in (0..corpus.page_count() as PageId).rev() {
                if let Some(v) = corpus.page_at(p, unit).present() {
                    g.put(p, ForwardDoc::from_version(corpus.url(p), v));
                }
            }
            for kind in [ScoringKind::Bm25, ScoringKind::TfIdf, ScoringKind::InLinks] {
                let scorer = kind.scorer();
                for q in &queries {
                    let want = reference_ranked(&f, scorer.as_ref(), q);
                    let got = f.ranked(scorer.as_ref(), q);
                    assert_eq!(bits(&got), bits(&want), "{kind} unit {unit} {q:?}");
                    assert_eq!(bits(&g.ranked(scorer.as_ref(), q)), bits(&want));
                    let scores: Vec<u32> = want.iter().map(|r| r.score.to_bits()).collect();
                    let fast: Vec<u32> = f
                        .ranked_scores(scorer.as_ref(), q)
                        .iter()
                        .map(|s| s.to_bits())
                        .collect();
                    assert_eq!(fast, scores);
                    let pages: Vec<PageId> = {
                        let mut p: Vec<PageId> = want.iter().map(|r| r.page).collect();
                        p.sort_unstable();
                        p
                    };
                    assert_eq!(f.matching(q), pages);
                }
            }
        }
    }
}
