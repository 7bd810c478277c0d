//! Paper 000's top-10 freshness and MAP@10 ([`Paper000Measures`], reconstructed in
//! SEED-SYSTEMS §1.1: the paper's formulas are blank in its text), averaged over the queries
//! with a non-empty repository result list: top-k freshness with `k = 10` fixed (Eq. 8,
//! [`top_k_freshness`]) and MAP@10 normalised by the relevant results retrieved (Eq. 9,
//! [`average_precision_retrieved`]) under two relevances — the live top 10, and `τ = 0` (the
//! live copy still matches the query).

use super::MetricCollector;
use super::QueryView;
use super::UnitMetrics;
use crate::exact::live_truth::LiveTruth;
use crate::exact::TOP_K;

/// Paper 000's variants of top-10 freshness and MAP@10 (see the module docs), beside the
/// project's `fresh_at_10` and `map_at_10`.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Paper000Measures {
    /// Top-k freshness with `k = 10` fixed (paper 000 Eq. 8, [`top_k_freshness`]).
    pub fresh_at_10_fixed_k: f64,
    /// MAP@10 against the live top 10, normalised by the relevant results retrieved (paper 000
    /// Eq. 9, [`average_precision_retrieved`]).
    pub map_at_10_retrieved: f64,
    /// MAP@10 with `τ = 0` relevance (the live copy still matches the query), normalised by
    /// the relevant results retrieved: paper 000's closest automatic proxy.
    pub map_at_10_tau0: f64,
}

impl Paper000Measures {
    /// The component-wise mean (`None` for no items), summed in item order.
    pub fn mean_of(items: impl ExactSizeIterator<Item = Paper000Measures> + Clone) -> Option<Self> {
        let n = items.len();
        if n == 0 {
            return None;
        }
        let mean =
            |f: fn(&Paper000Measures) -> f64| items.clone().map(|m| f(&m)).sum::<f64>() / n as f64;
        Some(Paper000Measures {
            fresh_at_10_fixed_k: mean(|m| m.fresh_at_10_fixed_k),
            map_at_10_retrieved: mean(|m| m.map_at_10_retrieved),
            map_at_10_tau0: mean(|m| m.map_at_10_tau0),
        })
    }
}

/// Keeps each shown query's [`Paper000Measures`] in query order; averages them with
/// [`Paper000Measures::mean_of`].
#[derive(Debug, Default)]
pub(in crate::exact) struct Paper000Collector {
    shown: Vec<Paper000Measures>,
}

impl MetricCollector for Paper000Collector {
    fn collect(&mut self, query: &QueryView<'_>) {
        // Averaged over the queries with a result, as the paper averages over shown lists.
        if !query.top.is_empty() {
            self.shown.push(measures_of(query));
        }
    }

    fn finish(self: Box<Self>, _: &LiveTruth, metrics: &mut UnitMetrics) {
        // No query with a result: nothing shown is stale or irrelevant (as the others).
        metrics.paper000 =
            Paper000Measures::mean_of(self.shown.iter().copied()).unwrap_or(Paper000Measures {
                fresh_at_10_fixed_k: 1.0,
                map_at_10_retrieved: 1.0,
                map_at_10_tau0: 1.0,
            });
    }
}

/// One shown query's measures: its top's freshness over `k = 10`, and the average precision
/// of its top under each relevance (in the live top 10; matching live).
fn measures_of(query: &QueryView<'_>) -> Paper000Measures {
    let live = query.live;
    let strict: Vec<bool> = query
        .top
        .iter()
        .map(|p| live.top.binary_search(p).is_ok())
        .collect();
    let matching: Vec<bool> = query.top.iter().map(|&p| live.matches(p)).collect();
    Paper000Measures {
        fresh_at_10_fixed_k: top_k_freshness(query.fresh, TOP_K),
        map_at_10_retrieved: average_precision_retrieved(&strict),
        map_at_10_tau0: average_precision_retrieved(&matching),
    }
}

/// Top-k freshness of one result list, paper 000 Eq. (8) (reconstructed, SEED-SYSTEMS §1.1):
/// `freshness@k(q) = (1/k)·Σ_{i=1}^{k} F(p_i, t)`, `F = 1` when the repository copy of the
/// `i`-th result is the live one. Divides by `k` even when the list is shorter (the project's
/// `fresh_at_10` divides by `min(k, n)`). 0 when `k = 0`.
pub fn top_k_freshness(fresh: &[bool], k: usize) -> f64 {
    if k == 0 {
        return 0.0;
    }
    fresh.iter().take(k).filter(|&&f| f).count() as f64 / k as f64
}

/// Average precision of one ranked list normalised by the relevant results *retrieved*, paper
/// 000 Eq. (9) (reconstructed, SEED-SYSTEMS §1.1): `AP@k = Σ_{i≤k} P@i·rel_i / Σ_{i≤k} rel_i`,
/// `P@i = (1/i)·Σ_{j≤i} rel_j`, over the first `k` = [`TOP_K`] entries of `relevance`; 0 when no
/// retrieved result is relevant.
pub fn average_precision_retrieved(relevance: &[bool]) -> f64 {
    let (mut hits, mut sum) = (0usize, 0.0);
    for (i, _) in relevance.iter().take(TOP_K).enumerate().filter(|(_, &r)| r) {
        hits += 1;
        sum += hits as f64 / (i + 1) as f64;
    }
    if hits == 0 {
        0.0
    } else {
        sum / hits as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper000_formulas_by_hand() {
        assert_eq!(top_k_freshness(&[true, false, true], 10), 0.2);
        assert_eq!(top_k_freshness(&[true, true], 2), 1.0);
        assert_eq!(top_k_freshness(&[], 0), 0.0);
        // Relevant at 2 and 4: (1/2 + 2/4) / 2.
        assert_eq!(
            average_precision_retrieved(&[false, true, false, true]),
            0.5
        );
        assert_eq!(average_precision_retrieved(&[false, false]), 0.0);
        // Only the first 10 count: a relevant 11th result changes nothing.
        let mut long = vec![false; 10];
        long.push(true);
        assert_eq!(average_precision_retrieved(&long), 0.0);
    }
}
