//! Exact `ΔQ_A(p, t)` under the evaluated metric: the change of Eq. 5's numerator (paper 003)
//! when page `p` alone is refreshed at unit `t`, over the workload queries *as users issued
//! them* (multi-term, conjunctive), each result credited with its live score.
//!
//! The hook's estimate (paper 003 §5, [`crate::quality::estimate`]) splits queries into single terms
//! and reads ranks off fitted score-to-rank functions; this is the quantity it is meant to
//! predict, computed by brute force: rank the full result list of every query the refresh can
//! affect before and after, with `absolute_quality_of`.
//!
//! A refresh can change the result list of a query only if the query has a term of the old or
//! the new copy (its postings and document frequencies change), or, under in-link scoring, a
//! term of a page whose in-link count the refresh changes (the targets of links added or
//! removed). Other lists are not re-ranked: under BM25 they shift only through the average
//! document length, a second-order effect this definition leaves out (and the hook too).

use std::collections::HashMap;
use std::sync::Arc;

use crate::corpus::{PageId, Unit};
use crate::index::{
    ForwardDoc, ForwardIndex, PageUpdate, Repository, ScoreShift, Scorer, ShiftSink, WorkloadTerms,
};
use crate::querylog::term_workload::TermWorkload;

use super::exact::{absolute_quality_of, LiveTruth, MetricQuery};
pub use crate::quality::affected::AffectedQueries;
use crate::quality::measure::{DeltaQMethod, MeasureDeltaQ};
use crate::quality::viewing::ViewingLikelihood;

/// Exact `ΔQ_A(p, t)` of refreshing `page` in `forward` to `new` (`None`: the page is gone),
/// crediting live scores at `truth`'s unit (paper 003 Eq. 5–6, see the module docs).
///
/// `forward` is left as it was found: the new copy is put in, the affected lists ranked, and
/// the old copy put back.
#[allow(clippy::too_many_arguments)]
pub fn exact_delta_q(
    forward: &mut ForwardIndex,
    scorer: &dyn Scorer,
    queries: &[MetricQuery],
    affected: &AffectedQueries,
    truth: &LiveTruth,
    likelihood: &ViewingLikelihood,
    page: PageId,
    new: Option<ForwardDoc>,
) -> f64 {
    let old = forward.doc(page).cloned();
    let indices = affected.of_refresh(forward, old.as_ref(), new.as_ref(), scorer.kind());
    if indices.is_empty() {
        return 0.0;
    }
    let before = absolute_quality_of(forward, scorer, queries, &indices, truth, likelihood);
    forward.set_copy(page, new);
    let after = absolute_quality_of(forward, scorer, queries, &indices, truth, likelihood);
    forward.set_copy(page, old);
    after - before
}

/// The refresh loop's [`MeasureDeltaQ`] with the exact ΔQ_A (`--delta-q exact`).
///
/// A batch's pages are measured one after another, in batch order, each against the
/// repository holding the batch's earlier pages: the values of a batch sum to its whole change
/// of Eq. 5's numerator over the affected queries. Copies identical to the held one (same
/// content hash) measure nothing, as the repository's update path skips them. It reads the
/// live Web (`truths`, one per unit): a simulation reference, not something a crawler has.
pub struct ExactDeltaQMeasure {
    workload: Arc<TermWorkload>,
    truths: Arc<Vec<LiveTruth>>,
    likelihood: ViewingLikelihood,
    affected: AffectedQueries,
    last: Vec<(PageId, f64)>,
}

impl ExactDeltaQMeasure {
    /// Measures over `workload.queries` against `truths[t]` at unit `t`.
    pub fn new(
        workload: Arc<TermWorkload>,
        truths: Arc<Vec<LiveTruth>>,
        likelihood: ViewingLikelihood,
    ) -> Self {
        let affected = AffectedQueries::new(&workload.queries);
        ExactDeltaQMeasure {
            workload,
            truths,
            likelihood,
            affected,
            last: Vec::new(),
        }
    }
}

impl MeasureDeltaQ for ExactDeltaQMeasure {
    fn method(&self) -> Option<DeltaQMethod> {
        Some(DeltaQMethod::Exact)
    }

    fn watched_terms(&self) -> Option<WorkloadTerms> {
        None
    }

    fn workload(&self) -> &Arc<TermWorkload> {
        &self.workload
    }

    fn before_unit(&mut self, _repo: &Repository, _unit: Unit) {}

    fn before_apply(&mut self, repo: &Repository, unit: Unit, batch: &[PageUpdate<'_>]) {
        self.last.clear();
        let Some(truth) = self.truths.get(unit as usize) else {
            return;
        };
        // As in the repository's update path, the last update of a page wins.
        let mut last_of: HashMap<PageId, usize> = HashMap::with_capacity(batch.len());
        for (i, u) in batch.iter().enumerate() {
            last_of.insert(u.page, i);
        }
        // Cloned on the first page that changes anything.
        let mut shadow: Option<ForwardIndex> = None;
        for (i, u) in batch.iter().enumerate() {
            if last_of[&u.page] != i {
                continue;
            }
            let new = u.version.map(|v| ForwardDoc::from_version(u.url, v));
            let held = shadow.as_ref().unwrap_or(repo.forward()).doc(u.page);
            let unchanged = match (held, &new) {
                (Some(h), Some(n)) => n.content_hash != 0 && h.content_hash == n.content_hash,
                (None, None) => true,
                _ => false,
            };
            if unchanged {
                continue;
            }
            let forward = shadow.get_or_insert_with(|| repo.forward().clone());
            let delta = exact_delta_q(
                forward,
                repo.scorer(),
                &self.workload.queries,
                &self.affected,
                truth,
                &self.likelihood,
                u.page,
                new.clone(),
            );
            forward.set_copy(u.page, new);
            self.last.push((u.page, delta));
        }
    }

    fn delta_q_by_page(&self) -> Vec<(PageId, f64)> {
        self.last.clone()
    }
}

/// The hook stays off for the exact measurement: shifts are never pushed.
impl ShiftSink for ExactDeltaQMeasure {
    fn shifts(&mut self, _unit: Unit, _shifts: &[ScoreShift]) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::LiveWeb;
    use crate::exact::evaluate;
    use crate::index::testutil::random_corpus;
    use crate::index::{Repository, ScoringKind};

    use crate::live_scores::LiveScores;
    use crate::text::TermId;
    use rand::{Rng, SeedableRng};

    /// Exact ΔQ over the affected queries equals the change of the whole numerator of Eq. 5
    /// (every query re-ranked), for single- and multi-term queries and every scoring.
    #[test]
    fn affected_queries_give_the_whole_numerator_change() {
        let corpus = random_corpus(120, 6, 17);
        let n = corpus.vocabulary.len() as TermId;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut queries: Vec<MetricQuery> = (0..60)
            .map(|i| {
                let k = 1 + i % 3;
                let mut terms: Vec<TermId> = (0..k).map(|_| rng.gen_range(0..n)).collect();
                terms.sort_unstable();
                terms.dedup();
                MetricQuery {
                    terms,
                    frequency: 1.0 + f64::from(i % 5),
                }
            })
            .collect();
        queries.push(MetricQuery {
            terms: vec![0],
            frequency: 2.0,
        });
        let likelihood = ViewingLikelihood::default();
        let affected = AffectedQueries::new(&queries);
        for kind in [ScoringKind::TfIdf, ScoringKind::InLinks, ScoringKind::Bm25] {
            let unit = 4;
            let live = LiveScores::at(&corpus, unit, kind);
            let truth = LiveTruth::compute(&live, &queries, &likelihood);
            let repo = Repository::forward_only_at(&corpus, unit - 1, kind);
            let scorer = repo.scorer();
            let mut forward = repo.forward().clone();
            let whole = |f: &ForwardIndex| {
                evaluate(f, scorer, &queries, &truth, &likelihood, &|_| true).absolute_quality
            };
            let mut checked = 0;
            for page in 0..corpus.page_count() as PageId {
                let Some(v) = corpus.page_at(page, unit).present() else {
                    continue;
                };
                let new = ForwardDoc::from_version(corpus.url(page), v);
                if forward.doc(page) == Some(&new) {
                    continue;
                }
                let kept = forward.clone();
                let exact = exact_delta_q(
                    &mut forward,
                    scorer,
                    &queries,
                    &affected,
                    &truth,
                    &likelihood,
                    page,
                    Some(new.clone()),
                );
                assert_eq!(forward, kept, "the forward index is restored");
                let mut after = forward.clone();
                after.put(page, new);
                let full = whole(&after) - whole(&forward);
                // BM25 lists outside the affected set move with the average length only.
                let tolerance = if kind == ScoringKind::Bm25 {
                    1e-3 * full.abs().max(1e-3)
                } else {
                    1e-9
                };
                assert!(
                    (exact - full).abs() <= tolerance,
                    "{kind} page {page}: {exact} vs {full}"
                );
                checked += 1;
            }
            assert!(checked > 10, "{kind}: only {checked} changed pages");
        }
    }
}
