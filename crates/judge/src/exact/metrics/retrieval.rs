//! Retrieval measures against the live top 10, as trec_eval computes them (`map_at_10`,
//! `ndcg_at_10`, `p_at_10`): per query whose live result list is non-empty, the repository's
//! top 10 judged against the relevant set R = the live top 10; averaged over those queries.
//! MAP@10 is `AP@10 = Σ_{k≤10, result k ∈ R} P@k / |R|`.

use super::MetricCollector;
use super::QueryMean;
use super::QueryView;
use super::UnitMetrics;
use crate::corpus::PageId;
use crate::exact::live_truth::LiveTruth;
use crate::exact::TOP_K;

/// Averages each of [`retrieval_measures`] over the queries with a live result.
#[derive(Debug, Default)]
pub(in crate::exact) struct RetrievalCollector {
    ap: QueryMean,
    ndcg: QueryMean,
    precision: QueryMean,
}

impl MetricCollector for RetrievalCollector {
    fn collect(&mut self, query: &QueryView<'_>) {
        // A query nothing matches live has no relevant page to find: it is left out.
        if !query.live.top.is_empty() {
            let m = retrieval_measures(query.top, &query.live.top);
            self.ap.push(m.ap);
            self.ndcg.push(m.ndcg);
            self.precision.push(m.precision);
        }
    }

    fn finish(self: Box<Self>, _: &LiveTruth, metrics: &mut UnitMetrics) {
        metrics.search.map_at_10 = self.ap.mean_or_one();
        metrics.ndcg_at_10 = self.ndcg.mean_or_one();
        metrics.p_at_10 = self.precision.mean_or_one();
    }
}

/// trec_eval's per-query retrieval measures of one result list at cut-off 10.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct RetrievalMeasures {
    /// `map_cut_10`: Σ precision at each relevant result in the top 10, over all relevant.
    pub(crate) ap: f64,
    /// `ndcg_cut_10`: DCG of the top 10 (gain 1 per relevant result, discount
    /// `log2(rank + 1)`) over the ideal DCG of the relevant set cut at 10.
    pub(crate) ndcg: f64,
    /// `P_10`: relevant results in the top 10, over 10 (even if fewer were returned).
    pub(crate) precision: f64,
}

/// The measures of the ranked list `top` (at most [`TOP_K`] pages, best first) against the
/// relevant pages `relevant` (sorted, non-empty), as trec_eval computes them.
pub fn retrieval_measures(top: &[PageId], relevant: &[PageId]) -> RetrievalMeasures {
    debug_assert!(!relevant.is_empty());
    let (mut hits, mut ap, mut dcg) = (0usize, 0.0, 0.0);
    for (k, page) in top.iter().take(TOP_K).enumerate() {
        if relevant.binary_search(page).is_ok() {
            hits += 1;
            ap += hits as f64 / (k + 1) as f64;
            dcg += 1.0 / ((k + 2) as f64).log2();
        }
    }
    let ideal: f64 = (0..relevant.len().min(TOP_K))
        .map(|k| 1.0 / ((k + 2) as f64).log2())
        .sum();
    RetrievalMeasures {
        ap: ap / relevant.len() as f64,
        ndcg: dcg / ideal,
        precision: hits as f64 / TOP_K as f64,
    }
}
