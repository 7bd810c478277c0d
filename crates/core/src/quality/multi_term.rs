//! The multi-term ΔQ_A estimate (beyond paper 003, which names it as future work in §5.1).
//!
//! The paper splits every query into single terms: the hook records `(s1, s2)`, the page's
//! score before and after for each watched term, and the estimate reads ranks off one
//! score-to-rank function per term. But the quality users see (Eq. 5) is over the queries as
//! they issued them, mostly two or three terms. BM25 and TF-IDF score a conjunctive query as
//! the sum of its terms' scores (in-link scoring as any term's score), so the page's score
//! before and after for every workload query whose terms it holds follows exactly from the
//! same per-term shifts ([`crate::index::Scorer::combine`]). With one score-to-rank function
//! `F_q` per workload query, fitted on the repository's result list of `q`, the paper's
//! per-query estimate ([`DeltaQEstimator::query_component`]) applies to `q` as issued.
//!
//! Memory: one function (20 bytes with 3 pieces) per fitted query. At most
//! [`MAX_FITTED_QUERIES`] queries are fitted, the most frequent first; the others are estimated
//! without a function (as the paper does for a term with no fitted list).

use std::collections::HashMap;
use std::sync::Arc;

use crate::corpus::{PageId, Unit};
use crate::index::{Repository, ScoreShift, Scorer, ShiftSink, WorkloadTerms};
use crate::querylog::term_workload::TermWorkload;
use crate::text::TermId;

use super::affected::AffectedQueries;
use super::estimate::{DeltaQEstimator, ScoreRankTable};
use super::measure::{
    fit_from_scores_at_ranks, fit_keyed_with, refit_due, DeltaQMethod, MeasureDeltaQ,
};
use super::ranking::{MetricQuery, RankMemory, ScoresAtRanks};
use super::viewing::ViewingLikelihood;

/// The most workload queries given a score-to-rank function (20 MB of functions).
pub const MAX_FITTED_QUERIES: usize = 1 << 20;

/// `F_q` of the (at most [`MAX_FITTED_QUERIES`] most frequent) workload queries, keyed by the
/// query's position in `queries`.
pub fn fit_query_table(
    repo: &Repository,
    queries: &[MetricQuery],
    pieces: usize,
) -> ScoreRankTable {
    fit_query_table_with(&mut RankMemory::default(), repo, queries, pieces)
}

/// [`fit_query_table`], re-ranking each list from its order at the previous fit with the
/// same `memory` (the same functions, bit for bit; see [`RankMemory`]).
pub(crate) fn fit_query_table_with(
    memory: &mut RankMemory,
    repo: &Repository,
    queries: &[MetricQuery],
    pieces: usize,
) -> ScoreRankTable {
    let keyed: Vec<(u32, &[TermId])> = fitted_queries(queries)
        .into_iter()
        .map(|i| (i as u32, queries[i].terms.as_slice()))
        .collect();
    fit_keyed_with(memory, repo, &keyed, pieces)
}

/// [`fit_query_table`] from every query's list length and scores at the needed ranks, as an
/// evaluation of the same repository gives them ([`ScoresAtRanks`], one entry per query).
pub(crate) fn fit_query_table_from(
    lists: &ScoresAtRanks,
    queries: &[MetricQuery],
    pieces: usize,
) -> ScoreRankTable {
    assert_eq!(lists.len(), queries.len(), "one list per workload query");
    fit_from_scores_at_ranks(
        fitted_queries(queries)
            .into_iter()
            .map(|i| (i as u32, &lists[i])),
        pieces,
    )
}

/// The positions of the queries given a function: all, or the [`MAX_FITTED_QUERIES`] most
/// frequent (ties by position, so the choice is deterministic), in position order.
fn fitted_queries(queries: &[MetricQuery]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..queries.len()).collect();
    if order.len() > MAX_FITTED_QUERIES {
        order.sort_by(|&a, &b| {
            queries[b]
                .frequency
                .total_cmp(&queries[a].frequency)
                .then(a.cmp(&b))
        });
        order.truncate(MAX_FITTED_QUERIES);
        order.sort_unstable();
    }
    order
}

/// ΔQ_A per page of a batch over the workload queries as issued, from the hook's per-term
/// shifts (grouped by page; see the module docs). `table` is keyed by query position.
///
/// Pages are estimated side by side: each page's sum runs over its own queries in position
/// order, so the values do not depend on the threads, and the output keeps the pages' order.
/// (A unit of a 10^5-page site shifts tens of thousands of pages, and the estimate's
/// logarithms and powers were the longest single-threaded stretch of building its
/// environment.)
pub fn multi_term_delta_q_by_page(
    shifts: &[ScoreShift],
    table: &ScoreRankTable,
    queries: &[MetricQuery],
    affected: &AffectedQueries,
    scorer: &dyn Scorer,
    estimator: &DeltaQEstimator,
) -> Vec<(PageId, f64)> {
    use rayon::prelude::*;
    let inputs = PageEstimate {
        table,
        queries,
        affected,
        scorer,
        estimator,
    };
    let pages: Vec<&[ScoreShift]> = shifts.chunk_by(|a, b| a.page == b.page).collect();
    pages
        .par_iter()
        .with_min_len(PAGES_PER_TASK)
        .map_init(
            || (Vec::new(), Vec::new()),
            |(before, after), group| (group[0].page, inputs.delta_q(group, before, after)),
        )
        .collect()
}

/// Pages a task of [`multi_term_delta_q_by_page`] estimates at least: a page costs a few
/// microseconds to tens of microseconds, so smaller tasks would cost more to schedule.
const PAGES_PER_TASK: usize = 32;

/// What [`multi_term_delta_q_by_page`] reads for every page.
struct PageEstimate<'a> {
    table: &'a ScoreRankTable,
    queries: &'a [MetricQuery],
    affected: &'a AffectedQueries,
    scorer: &'a dyn Scorer,
    estimator: &'a DeltaQEstimator,
}

impl PageEstimate<'_> {
    /// One page's ΔQ_A (its `group` of shifts) over the workload queries holding only terms it
    /// has shifts for (`before`/`after`: scratch for a query's per-term scores).
    fn delta_q(&self, group: &[ScoreShift], before: &mut Vec<f32>, after: &mut Vec<f32>) -> f64 {
        let PageEstimate {
            table,
            queries,
            affected,
            scorer,
            estimator,
        } = *self;
        let by_term: HashMap<TermId, (f32, f32)> =
            group.iter().map(|s| (s.term, (s.s1, s.s2))).collect();
        let mut terms: Vec<TermId> = by_term.keys().copied().collect();
        terms.sort_unstable();
        let mut delta = 0.0;
        for qi in affected.of_terms(&terms) {
            let q = &queries[qi];
            before.clear();
            after.clear();
            // A term with no shift is in neither copy: the page matches q in neither.
            let complete = q.terms.iter().all(|t| match by_term.get(t) {
                Some(&(s1, s2)) => {
                    before.push(s1);
                    after.push(s2);
                    true
                }
                None => false,
            });
            if !complete || q.frequency == 0.0 {
                continue;
            }
            let (s1, s2) = (scorer.combine(before), scorer.combine(after));
            if s1 != s2 {
                delta += q.frequency
                    * estimator.query_component(table.get(qi as u32), f64::from(s1), f64::from(s2));
            }
        }
        delta
    }
}

/// The refresh loop's [`MeasureDeltaQ`] with the multi-term estimate
/// (`--delta-q estimate`, the default): as [`super::measure::DeltaQMeasure`], with one
/// score-to-rank function per workload query instead of per term.
pub struct MultiTermDeltaQMeasure {
    workload: Arc<TermWorkload>,
    estimator: DeltaQEstimator,
    affected: AffectedQueries,
    scorer: Box<dyn Scorer>,
    pieces: usize,
    refit_every: Unit,
    table: ScoreRankTable,
    /// The lists as ranked at the last fit: each refit re-ranks from them.
    memory: RankMemory,
    /// Scores at ranks offered by an evaluation, with the repository revision they hold for.
    offered: Option<(u64, Arc<ScoresAtRanks>)>,
    shifts: Vec<ScoreShift>,
}

impl MultiTermDeltaQMeasure {
    /// Fits `F_q` on `repo` now, refitted before every unit `t > 1` with
    /// `(t − 1) % refit_every == 0` (`0`: never).
    pub fn new(
        repo: &Repository,
        workload: Arc<TermWorkload>,
        likelihood: ViewingLikelihood,
        pieces: usize,
        refit_every: Unit,
    ) -> Self {
        let mut memory = RankMemory::default();
        let table = fit_query_table_with(&mut memory, repo, &workload.queries, pieces);
        MultiTermDeltaQMeasure {
            affected: AffectedQueries::new(&workload.queries),
            scorer: repo.scorer().kind().scorer(),
            workload,
            estimator: DeltaQEstimator::new(likelihood),
            pieces,
            refit_every,
            table,
            memory,
            offered: None,
            shifts: Vec::new(),
        }
    }

    /// The functions in use (keyed by query position).
    pub fn table(&self) -> &ScoreRankTable {
        &self.table
    }
}

impl MeasureDeltaQ for MultiTermDeltaQMeasure {
    fn method(&self) -> Option<DeltaQMethod> {
        Some(DeltaQMethod::Estimate)
    }

    fn watched_terms(&self) -> Option<WorkloadTerms> {
        Some(WorkloadTerms::from_ids(self.workload.term_ids()))
    }

    fn workload(&self) -> &Arc<TermWorkload> {
        &self.workload
    }

    fn before_unit(&mut self, repo: &Repository, unit: Unit) {
        let offered = self.offered.take();
        if refit_due(unit, self.refit_every) {
            let queries = &self.workload.queries;
            self.table = match offered {
                Some((revision, lists))
                    if revision == repo.revision() && lists.len() == queries.len() =>
                {
                    fit_query_table_from(&lists, queries, self.pieces)
                }
                _ => fit_query_table_with(&mut self.memory, repo, queries, self.pieces),
            };
        }
    }

    fn refits_from_query_lists(&self, unit: Unit) -> Option<usize> {
        refit_due(unit, self.refit_every).then_some(self.pieces)
    }

    fn offer_scores_at_ranks(&mut self, revision: u64, lists: Arc<ScoresAtRanks>) {
        self.offered = Some((revision, lists));
    }

    fn delta_q_by_page(&self) -> Vec<(PageId, f64)> {
        multi_term_delta_q_by_page(
            &self.shifts,
            &self.table,
            &self.workload.queries,
            &self.affected,
            self.scorer.as_ref(),
            &self.estimator,
        )
    }
}

impl ShiftSink for MultiTermDeltaQMeasure {
    fn shifts(&mut self, _unit: Unit, shifts: &[ScoreShift]) {
        self.shifts.clear();
        self.shifts.extend_from_slice(shifts);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::testutil::random_corpus;
    use crate::index::{RecordingSink, ScoringKind};

    /// The per-query scores the estimate combines from per-term shifts are the scores the
    /// index gives the page for the query, before and after.
    #[test]
    fn combined_term_scores_are_the_query_scores() {
        let corpus = random_corpus(60, 4, 8);
        let n = corpus.vocabulary.len() as TermId;
        for kind in [ScoringKind::Bm25, ScoringKind::TfIdf, ScoringKind::InLinks] {
            let mut repo = Repository::forward_only_at(&corpus, 1, kind);
            let all: Vec<TermId> = (0..n).collect();
            repo.set_hook(Some(WorkloadTerms::from_ids(all)));
            let before = repo.forward().clone();
            let batch = crate::fetch::SnapshotFetcher::new(&corpus).changes_at(2);
            let mut sink = RecordingSink::default();
            repo.apply(2, &batch, &mut sink).unwrap();
            let scorer = kind.scorer();
            let mut checked = 0;
            for (_, shifts) in &sink.batches {
                for group in shifts.chunk_by(|a, b| a.page == b.page) {
                    let page = group[0].page;
                    // The hook's s1 uses the statistics before the batch, s2 those after.
                    let terms: Vec<TermId> = group.iter().take(3).map(|s| s.term).collect();
                    let s1: Vec<f32> = group.iter().take(3).map(|s| s.s1).collect();
                    let s2: Vec<f32> = group.iter().take(3).map(|s| s.s2).collect();
                    let want1 = before.score(scorer.as_ref(), page, &terms);
                    let want2 = repo.forward().score(scorer.as_ref(), page, &terms);
                    let tolerance = |w: f32| 1e-5 * w.abs().max(1.0);
                    if kind == ScoringKind::InLinks {
                        // In-link counts move with the whole batch's links, as in the hook.
                        assert_eq!(scorer.combine(&s1) > 0.0, want1 > 0.0);
                        assert_eq!(scorer.combine(&s2) > 0.0, want2 > 0.0);
                    } else {
                        assert!(
                            (scorer.combine(&s1) - want1).abs() <= tolerance(want1),
                            "{kind} {page}"
                        );
                        assert!(
                            (scorer.combine(&s2) - want2).abs() <= tolerance(want2),
                            "{kind} {page}"
                        );
                    }
                    checked += 1;
                }
            }
            assert!(checked > 5, "{kind}: {checked}");
        }
    }
}
