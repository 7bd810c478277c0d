//! Repository quality from the users' side (paper 003 §3–5).
//!
//! * [`viewing`]: the viewing likelihood `I(r) = c·r^(−3/2)`.
//! * [`score_rank`]: per-query score-to-rank functions `F_q` and their inverses.
//! * [`estimate`]: the cheap ΔQ_A estimate that drives the user-centric refresher.
//! * [`measure`]: the ΔQ measurement sink fed by the index hook, with its refit cadence.
//! * [`bootstrap`]: how sure a comparison can be (a bootstrap over the workload's queries).
//! * [`search_quality`]: the (quality, fresh@10, MAP@10) triple every output reports.
//! * [`multi_term`]: the ΔQ_A estimate over the workload queries as issued (beyond the paper).
//! * [`ranking`]: each workload query's result list ranked by repository scores, kept between
//!   evaluations and patched with the pages edited since (`match_lists`), and the scores at
//!   the ranks a score-to-rank fit reads.
//! * [`affected`]: which workload queries a refresh can affect.
//!
//! The judge — exact metrics against the live Web, exact ΔQ_A, TREC export — is another crate
//! (`refresher-judge`), which this one does not depend on: nothing here can read the live truth.

pub mod affected;
pub mod bootstrap;
pub mod estimate;
pub mod match_lists;
pub mod measure;
pub mod multi_term;
pub mod ranking;
pub mod score_rank;
pub mod search_quality;
pub mod viewing;

pub use estimate::{DeltaQEstimator, ScoreRankTable};
pub use score_rank::ScoreRankFn;
pub use search_quality::SearchQuality;
pub use viewing::ViewingLikelihood;
