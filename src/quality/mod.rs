//! Repository quality from the users' side (paper 003 §3–5).
//!
//! * [`viewing`]: the viewing likelihood `I(r) = c·r^(−3/2)`.
//! * [`score_rank`]: per-query score-to-rank functions `F_q` and their inverses.
//! * [`estimate`]: the cheap ΔQ_A estimate that drives the user-centric refresher.

pub mod estimate;
pub mod exact;
pub mod score_rank;
pub mod trec;
pub mod viewing;

pub use estimate::{DeltaQEstimator, ScoreRankTable};
pub use score_rank::ScoreRankFn;
pub use viewing::ViewingLikelihood;
