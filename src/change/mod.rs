//! Change detection and change-rate estimation.
//!
//! * [`shingles`](mod@shingles): w-word shingles of a page's visible text (Broder) and the two distances
//!   between copies that SBR and EBR threshold on.
//! * [`rate`]: Poisson change-rate estimators from visit histories (naive X/T, Cho &
//!   Garcia-Molina's improved estimator "CG", the oracle count over observed units).

pub mod rate;
pub mod shingles;

pub use rate::{cg_rate, cg_rate_per_unit, naive_rate, oracle_rate};
pub use shingles::{
    resemblance_distance, shingle_change, shingles, text_change, DEFAULT_SHINGLE_WIDTH,
};
