//! The measures of one unit ([`UnitMetrics`]) and their per-query formulas: top-10 freshness,
//! MAP@10 and paper 000's Eq. 8–9 variants ([`Paper000Measures`]).

use super::TOP_K;
use crate::corpus::PageId;
use crate::corpus::Unit;
use crate::quality::search_quality::SearchQuality;

/// The metrics of one repository state against the live Web at one unit.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct UnitMetrics {
    pub unit: Unit,
    /// Quality (paper 003 Eq. 5), top-10 freshness and MAP@10 against the live top 10.
    #[serde(flatten)]
    pub search: SearchQuality,
    /// Retrieval nDCG@10 against the live top 10, binary gains (trec_eval's `ndcg_cut_10`).
    pub ndcg_at_10: f64,
    /// Precision at 10 against the live top 10 (trec_eval's `P_10`).
    pub p_at_10: f64,
    /// Numerator of Eq. 5 (absolute quality), for ΔQ comparisons.
    pub absolute_quality: f64,
    /// Paper 000's top-k freshness and MAP@10 variants.
    #[serde(flatten)]
    pub paper000: Paper000Measures,
}

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
