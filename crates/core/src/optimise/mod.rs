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
pub(crate) fn bisect_log(
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

/// The root of a decreasing function `excess` bracketed by `lo < hi` (both positive, with
/// `excess(lo) = excess_lo > 0 ≥ excess(hi) = excess_hi`), by regula falsi on the log scale
/// with the Illinois modification (Dowell & Jarratt, BIT 11, 1971): each step interpolates
/// `excess` linearly in `ln x` between the bracket's ends, and the value kept at an end that
/// survives two steps in a row is halved, so both ends converge, superlinearly for a smooth
/// `excess`. A step lands at least a quarter of the tolerance inside the bracket (a converged
/// estimate then closes it), and after three steps that failed to halve the bracket's
/// log-width the next is a bisection, so a kinked `excess` costs at most a few times
/// [`bisect_log`]. Stops after `iterations` evaluations or once `hi / lo < 1 +
/// relative_width`, and returns the geometric midpoint of the bracket.
pub(crate) fn falsi_log(
    (mut lo, mut excess_lo): (f64, f64),
    (mut hi, mut excess_hi): (f64, f64),
    iterations: usize,
    relative_width: f64,
    mut excess: impl FnMut(f64) -> f64,
) -> f64 {
    debug_assert!(0.0 < lo && lo < hi && excess_lo > 0.0 && excess_hi <= 0.0);
    // Which end the last step moved (+1: `lo`, −1: `hi`).
    let mut moved = 0i8;
    let mut checkpoint = (hi / lo).ln();
    let mut slow_steps = 0;
    for _ in 0..iterations {
        if hi / lo < 1.0 + relative_width {
            break;
        }
        let log_width = (hi / lo).ln();
        let t = if slow_steps >= 3 {
            0.5
        } else {
            let margin = (0.25 * relative_width / log_width).min(0.5);
            let t = excess_lo / (excess_lo - excess_hi);
            if t.is_finite() {
                t.clamp(margin, 1.0 - margin)
            } else {
                0.5
            }
        };
        let mut x = lo * (t * log_width).exp();
        if !(x > lo && x < hi) {
            x = (lo * hi).sqrt();
        }
        let value = excess(x);
        if value > 0.0 {
            lo = x;
            excess_lo = value;
            if moved == 1 {
                excess_hi *= 0.5;
            }
            moved = 1;
        } else {
            hi = x;
            excess_hi = value;
            if moved == -1 {
                excess_lo *= 0.5;
            }
            moved = -1;
        }
        let now = (hi / lo).ln();
        if now <= 0.5 * checkpoint {
            checkpoint = now;
            slow_steps = 0;
        } else {
            slow_steps += 1;
            if slow_steps > 3 {
                checkpoint = now;
                slow_steps = 0;
            }
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
    use super::{bisect_log, falsi_log};

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

    /// Regula falsi reaches bisection's precision on smooth, kinked and flat-ended functions,
    /// in far fewer evaluations on smooth ones, and never many more on the others.
    #[test]
    fn falsi_log_finds_roots_in_few_evaluations() {
        let find = |lo: f64, hi: f64, f: &dyn Fn(f64) -> f64| {
            let mut calls = 0;
            let root = falsi_log((lo, f(lo)), (hi, f(hi)), 400, 1e-13, |x| {
                calls += 1;
                f(x)
            });
            (root, calls)
        };
        for root in [1e-9, 0.37, 5.0, 2e8] {
            // Smooth and decreasing: a spending curve of the planner's shape.
            let smooth = |x: f64| (root / x).sqrt() - 1.0;
            let (found, calls) = find(root * 1e-3, root * 1e3, &smooth);
            assert!((found / root - 1.0).abs() < 1e-12, "{root}: {found}");
            assert!(calls <= 15, "smooth, {calls} evaluations");
            // Kinked: a sum of clipped pieces, flat beyond its last kink.
            let kinked = |x: f64| {
                (0..40)
                    .map(|k| (1.0 - x / (root * 1.3f64.powi(k - 20))).clamp(0.0, 1.0))
                    .sum::<f64>()
                    - 20.0
            };
            let (found, calls) = find(root * 1e-6, root * 1e6, &kinked);
            assert!(kinked(found * (1.0 - 1e-12)) > 0.0 && kinked(found * (1.0 + 1e-12)) <= 0.0);
            // Bisection would take log2(ln(1e12) / 1e-13) ≈ 48.
            assert!(calls <= 4 * 48, "kinked, {calls} evaluations");
        }
        // A root exactly at the upper end (excess 0 there).
        let (found, _) = find(1.0, 2.0, &|x| 2.0 - x);
        assert!((found / 2.0 - 1.0).abs() < 1e-12, "{found}");
    }
}
