//! Top-10 freshness (`fresh_at_10`): per query with a non-empty repository result list, the
//! share of its shown results (the top `min(10, n)`) whose repository copy is the live
//! version; averaged over those queries, each distinct query once.

use super::MetricCollector;
use super::QueryMean;
use super::QueryView;
use super::UnitMetrics;
use crate::exact::live_truth::LiveTruth;

/// Averages [`fresh_share`] over the queries with a result.
#[derive(Debug, Default)]
pub(in crate::exact) struct FreshnessCollector {
    shares: QueryMean,
}

impl MetricCollector for FreshnessCollector {
    fn collect(&mut self, query: &QueryView<'_>) {
        // A query with no result shows nothing stale: it is left out of the mean.
        if !query.top.is_empty() {
            self.shares.push(fresh_share(query.fresh));
        }
    }

    fn finish(self: Box<Self>, _: &LiveTruth, metrics: &mut UnitMetrics) {
        metrics.search.fresh_at_10 = self.shares.mean_or_one();
    }
}

/// The share of the shown results that are fresh, `fresh` holding one flag per shown result
/// (non-empty): divided by the `min(10, n)` results shown, where paper 000's Eq. 8 divides by
/// 10 ([`super::top_k_freshness`]).
fn fresh_share(fresh: &[bool]) -> f64 {
    fresh.iter().filter(|&&f| f).count() as f64 / fresh.len() as f64
}
