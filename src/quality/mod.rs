//! Repository quality from the users' side (paper 003 §3–5).
//!
//! * [`viewing`]: the viewing likelihood `I(r) = c·r^(−3/2)`.
//! * [`score_rank`]: per-query score-to-rank functions `F_q` and their inverses.
//! * [`estimate`]: the cheap ΔQ_A estimate that drives the user-centric refresher.
//! * [`measure`]: the ΔQ measurement sink fed by the index hook, with its refit cadence.
//! * [`bootstrap`]: how sure a comparison can be (a bootstrap over the workload's queries).
//! * [`search_quality`]: the (quality, fresh@10, MAP@10) triple every output reports.
//! * [`multi_term`]: the ΔQ_A estimate over the workload queries as issued (beyond the paper).
//! * [`exact_delta`]: the exact ΔQ_A of one refresh under the evaluated metric.
//! * [`exact`]: the exact metrics (Eq. 5 quality, top-10 freshness, MAP@10), whose evaluations
//!   keep each query's match list up to date (`match_lists`); [`trec`]: export.

pub mod bootstrap;
pub mod estimate;
pub mod exact;
pub mod exact_delta;
pub(crate) mod match_lists;
pub mod measure;
pub mod multi_term;
pub mod score_rank;
pub mod search_quality;
pub mod trec;
pub mod viewing;

pub use estimate::{DeltaQEstimator, ScoreRankTable};
pub use score_rank::ScoreRankFn;
pub use search_quality::SearchQuality;
pub use viewing::ViewingLikelihood;
