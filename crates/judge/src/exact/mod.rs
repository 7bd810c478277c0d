//! Exact metrics, computed against the live Web with no approximation (paper 003 §6 evaluated
//! every policy this way; paper 000 adds top-10 freshness and MAP@10).
//!
//! Per time unit the work splits in two:
//! * [`LiveTruth`]: the live Web's side — for every workload query the live score of every page
//!   that matches live (`S(W_t[p], q)`), the live top 10, and the denominator of Eq. 5 (the
//!   quality of an ideal engine with instant access to the live Web). It does not depend on
//!   the refresh policy, so a comparison computes it once per unit and shares it.
//! * [`evaluate`]: the repository's side — each query's full result list `A(q, W_L)` ranked by
//!   repository scores, each page credited with its *live* score.
//!
//! Definitions (written out because papers differ in detail):
//! * **Quality** (paper 003 Eq. 5): `Q = Σ_q f_q Σ_{p∈A(q,W_L)} I(R_L(p))·S(W_t[p],q) /
//!   Σ_q f_q Σ_{p∈A(q,W_t)} I(R_t(p))·S(W_t[p],q)`; 1 when the denominator is 0.
//! * **Top-10 freshness**: per query with a non-empty repository result list, the share of its
//!   top-min(10, n) results whose repository copy is the live version; averaged over those
//!   queries (each distinct query once, as paper 000 averages over queries).
//! * **MAP@10**: per query whose live result list is non-empty, the average precision of the
//!   repository's top 10 against the relevant set R = the live top 10:
//!   `AP@10 = Σ_{k≤10, result k ∈ R} P@k / |R|`; averaged over those queries.
//!
//! Paper 000's own variants ([`Paper000Measures`], reconstructed in SEED-SYSTEMS §1.1: the
//! paper's formulas are blank in its text), averaged over the queries with a non-empty
//! repository result list:
//! * **Top-k freshness, Eq. 8**: `(1/k)·Σ_{i≤k} F(p_i)` with `k = 10` fixed, so a list shorter
//!   than 10 counts its missing results as not fresh ([`top_k_freshness`]);
//! * **MAP@10 with the "retrieved" normaliser, Eq. 9**: `AP@10 = Σ_{i≤10} P@i·rel_i /
//!   Σ_{i≤10} rel_i` (0 when no result is relevant): the paper's judges saw only the top 10, so
//!   it could only count relevant *retrieved* results ([`average_precision_retrieved`]); with
//!   the project's relevance (the live top 10, `τ = 1`) and with `τ = 0` — a result is relevant
//!   when its live copy still matches the query (contains every term; a gone page does not),
//!   the closer proxy of the paper's two-step manual judgement (summary relevant, then the live
//!   page relevant).
//!
//! Files: `live_truth` (the live side); `evaluate` (the repository side: each query's list
//! ranked and credited, then handed to the metric collectors); `metrics/` (one unit's
//! measures: one collector trait, `MetricCollector` — a new collector per unit, every query in
//! the workload's order, one finish — and one file per family of measures: quality,
//! freshness, retrieval, paper 000). The repository's ranked lists, kept between evaluations,
//! are the core's (`refresher_core::quality::ranking`): the refresher's score-to-rank refit
//! reads them too.

mod evaluate;
mod live_truth;
mod metrics;

pub use crate::quality::ranking::*;
pub use evaluate::*;
pub use live_truth::*;
pub use metrics::*;

/// Depth of the top-k metrics (top-10 freshness, MAP@10).
pub const TOP_K: usize = 10;

#[cfg(test)]
mod tests;
