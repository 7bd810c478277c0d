//! The measures of one unit ([`UnitMetrics`]) and the collectors that compute them: one trait,
//! [`MetricCollector`], and one file per family of measures (the layout of tantivy's
//! `collector/`):
//!
//! * `quality`: repository quality, paper 003 Eq. 5 (`quality`, `absolute_quality`);
//! * `freshness`: top-10 freshness (`fresh_at_10`);
//! * `retrieval`: MAP@10, nDCG@10 and P@10 against the live top 10, as trec_eval computes them
//!   (`map_at_10`, `ndcg_at_10`, `p_at_10`; [`retrieval_measures`]);
//! * `paper000`: paper 000's Eq. 8–9 variants ([`Paper000Measures`]).
//!
//! The evaluation (`evaluate`) runs a fixed table of these collectors (`COLLECTORS`) over the
//! unit's workload queries. A new measure is its field of [`UnitMetrics`], its file here and
//! one line in that table.

mod freshness;
mod paper000;
mod quality;
mod retrieval;

pub(super) use freshness::FreshnessCollector;
pub(super) use paper000::Paper000Collector;
pub use paper000::{average_precision_retrieved, top_k_freshness, Paper000Measures};
pub(super) use quality::{query_credit, QualityCollector};
pub(super) use retrieval::RetrievalCollector;
pub use retrieval::{retrieval_measures, RetrievalMeasures};

use crate::corpus::PageId;
use crate::corpus::Unit;
use crate::exact::live_truth::LiveList;
use crate::exact::live_truth::LiveTruth;
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

impl UnitMetrics {
    /// The metrics of `unit` before any collector wrote its fields: every measure NaN, so a
    /// field that no collector of the table writes cannot pass for a value (NaN equals
    /// nothing; the tests compare every field with a reference).
    pub(super) fn unfilled(unit: Unit) -> Self {
        let unset = f64::NAN;
        UnitMetrics {
            unit,
            search: SearchQuality::uniform(unset),
            ndcg_at_10: unset,
            p_at_10: unset,
            absolute_quality: unset,
            paper000: Paper000Measures {
                fresh_at_10_fixed_k: unset,
                map_at_10_retrieved: unset,
                map_at_10_tau0: unset,
            },
        }
    }
}

/// One family of a unit's measures, computed from the unit's workload queries one at a time
/// (tantivy's `SegmentCollector`, with a query for a segment).
///
/// Protocol, kept by the evaluation's driver:
/// 1. A new collector (`Default`) for each evaluation of one repository state at one unit:
///    nothing carries over between units, policies or repositories.
/// 2. [`collect`](Self::collect) once per workload query, in the workload's fixed order
///    (query 0 first), every query included — a query with no result or no live match too:
///    the collector decides which queries its measures average over.
/// 3. [`finish`](Self::finish) once, after the last query: it writes its family's fields of
///    the unit's [`UnitMetrics`] and no other.
///
/// A collector reads only the [`QueryView`] of each query and, at `finish`, the unit's
/// [`LiveTruth`]. It keeps its per-query floating-point terms in query order and adds them up
/// once, at `finish` ([`QuerySum`], [`QueryMean`]): the same terms added in the same order
/// whatever the threads that ranked the lists, so the values are the same bit for bit on every
/// run.
pub(super) trait MetricCollector {
    /// Takes in query `query`'s share of the family's measures.
    fn collect(&mut self, query: &QueryView<'_>);
    /// Writes the family's measures of the unit into `metrics`.
    fn finish(self: Box<Self>, truth: &LiveTruth, metrics: &mut UnitMetrics);
}

/// What a [`MetricCollector`] reads of one workload query at the evaluated unit.
pub(super) struct QueryView<'a> {
    /// The query's term of paper 003 Eq. 5's numerator, `f_q·Σ_r I(r)·S(W_t[p_r], q)` over
    /// its whole repository list: the only part of the list beyond the top that a measure
    /// reads, taken while the list is ranked.
    pub(super) credit: f64,
    /// The repository's top `min(10, n)` results, best first.
    pub(super) top: &'a [PageId],
    /// Whether the repository's copy of each page of `top` is the live version, in `top`'s
    /// order.
    pub(super) fresh: &'a [bool],
    /// The query's live side: the live top 10 (the relevant set) and the pages matching live.
    pub(super) live: &'a LiveList,
}

/// Per-query terms in query order, added up once: `Σ` left to right with f64's `Sum`, the sum
/// the evaluation always took, so it is the same bit for bit.
#[derive(Debug, Default)]
pub(super) struct QuerySum(Vec<f64>);

impl QuerySum {
    pub(super) fn push(&mut self, term: f64) {
        self.0.push(term);
    }

    pub(super) fn total(&self) -> f64 {
        self.0.iter().copied().sum()
    }
}

/// Per-query values in query order, averaged once: their [`QuerySum`] divided by their count.
#[derive(Debug, Default)]
pub(super) struct QueryMean(QuerySum);

impl QueryMean {
    pub(super) fn push(&mut self, value: f64) {
        self.0.push(value);
    }

    /// The mean; 1 when no query gave a value (no query to judge: nothing shown is stale or
    /// irrelevant).
    pub(super) fn mean_or_one(&self) -> f64 {
        let values = &(self.0).0;
        if values.is_empty() {
            1.0
        } else {
            self.0.total() / values.len() as f64
        }
    }
}
