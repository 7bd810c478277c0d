//! Numerical optimisation that more than one stage can use: Frank–Wolfe (conditional
//! gradient) over polytopes described by a linear minimisation oracle, with the two oracles the
//! crawl models need — per-period fractional knapsacks ([`knapsack`]) and a general LP
//! ([`lp`], microlp's simplex) for coupled constraints.
//!
//! The first user is paper 004's WebFountain model ([`crate::policy::webfountain`]); any
//! smooth objective over such a polytope (another crawl model, a relaxation of a budget
//! allocation) plugs into [`frank_wolfe::minimise`] through [`SmoothObjective`] and
//! [`LinearOracle`].

pub mod frank_wolfe;
pub mod knapsack;
pub mod lp;

pub use frank_wolfe::{minimise, FwOptions, FwOutcome, LinearOracle, SmoothObjective};

/// Why an oracle could not answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OracleError {
    #[error("linear program: {0}")]
    Lp(String),
    #[error("the gradient has a non-finite entry at {index}")]
    NonFinite { index: usize },
}
