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

/// The root of a monotone condition bracketed by `lo < hi` (both positive), by bisection on the
/// log scale: `below(x)` says whether `x` lies below the root. Stops after `iterations` halvings
/// or once `hi / lo < 1 + relative_width`, and returns the geometric midpoint of the bracket.
pub fn bisect_log(
    mut lo: f64,
    mut hi: f64,
    iterations: usize,
    relative_width: f64,
    mut below: impl FnMut(f64) -> bool,
) -> f64 {
    for _ in 0..iterations {
        let mid = (lo * hi).sqrt();
        if below(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi / lo < 1.0 + relative_width {
            break;
        }
    }
    (lo * hi).sqrt()
}

/// Why an oracle could not answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OracleError {
    #[error("linear program: {0}")]
    Lp(String),
    #[error("the gradient has a non-finite entry at {index}")]
    NonFinite { index: usize },
}

#[cfg(test)]
mod bisect_tests {
    use super::bisect_log;

    #[test]
    fn bisect_log_finds_a_root_across_orders_of_magnitude() {
        for root in [1e-9, 0.37, 5.0, 2e8] {
            let found = bisect_log(1e-12, 1e12, 200, 1e-12, |x| x < root);
            assert!((found / root - 1.0).abs() < 1e-11, "{root}: {found}");
        }
        // The iteration cap bounds the work even when the width is never reached.
        let capped = bisect_log(1.0, 1024.0, 1, 1e-12, |x| x < 3.0);
        assert_eq!(capped, (32.0f64 * 1.0).sqrt());
    }
}
