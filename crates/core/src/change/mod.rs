//! Change detection and change-rate estimation.
//!
//! * [`shingles`](mod@shingles): w-word shingles of a page's visible text (Broder) and the two distances
//!   between copies that SBR and EBR threshold on.
//! * [`rate`]: Poisson change-rate estimators from visit histories (naive X/T, Cho &
//!   Garcia-Molina's improved estimator "CG", the oracle count over observed units).
//! * [`irregular`]: the maximum-likelihood rate for visits at irregular intervals (what a
//!   priority-driven refresher produces) and the probability of a change within an interval.
//! * [`weighted`]: the weighted change-history rates NAD, SAD, AAD, GAD of papers 000–002
//!   (their change probability is [`change_probability`]).
//! * [`mixture`]: the empirical-Bayes distribution of change rates over a site, learned from
//!   every page's visits, and each page's posterior rate under it.
//! * [`matrix`]: the page × cycle change matrix of a corpus (paper 001's crawl-simulation input).

pub mod irregular;
pub mod matrix;
pub mod mixture;
pub mod rate;
pub mod schedule_metrics;
pub mod shingles;
pub mod weighted;

pub use irregular::{change_probability, irregular_mle_rate};
pub use matrix::ChangeMatrix;
pub use mixture::RateMixture;
pub use rate::{cg_rate, cg_rate_per_unit, naive_rate, oracle_rate};
pub use shingles::{
    resemblance_distance, shingle_change, shingles, text_change, DEFAULT_SHINGLE_WIDTH,
};
pub use weighted::{cycle_history, weighted_rate, CycleRates, Weighting};
