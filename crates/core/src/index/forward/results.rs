//! Scored and ranked result lists of conjunctive queries, from the postings.

use crate::corpus::PageId;
use crate::index::scorer::{Score, Scorer, Weight};
use crate::index::stats::CollectionStats;
use crate::text::TermId;

use super::rank_key::{rank_order, Ranked};
use super::ForwardIndex;

impl ForwardIndex {
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

    /// `(score, url hash, page)` of every page of the result list of `terms` scored with the
    /// statistics of `stats`, in [`rank_order`]: one shard's part of a collection-wide list.
    pub fn ranked_under(
        &self,
        stats: &dyn CollectionStats,
        scorer: &dyn Scorer,
        terms: &[TermId],
    ) -> Vec<(Score, u64, PageId)> {
        let mut hits = Vec::with_capacity(self.match_bound(terms));
        self.for_each_scored_under(stats, scorer, terms, |page, score, url_hash| {
            hits.push((score, url_hash, page))
        });
        hits.sort_unstable_by(|a, b| rank_order(*a, *b));
        hits
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
        f: impl FnMut(PageId, Score, u64),
    ) {
        self.for_each_scored_under(self, scorer, terms, f)
    }

    /// [`for_each_scored`](Self::for_each_scored) with the collection statistics of `stats`
    /// instead of this index's own: a shard scoring its pages with the statistics of the whole
    /// collection ([`crate::index::shards`]) gets the scores one index of every page gives.
    pub(crate) fn for_each_scored_under(
        &self,
        stats: &dyn CollectionStats,
        scorer: &dyn Scorer,
        terms: &[TermId],
        mut f: impl FnMut(PageId, Score, u64),
    ) {
        let weight = scorer.weight(stats, terms);
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
    pub(crate) fn for_each_scored_in(
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
}
