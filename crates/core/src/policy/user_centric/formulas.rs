//! Paper 003's formulas that more than one user-centric estimator reads (Pandey & Olston,
//! "User-Centric Web Crawling", WWW 2005, §6): the time-normalised quality change of a refresh,
//! the refresh priority, the oracle's ratios, and the shrinkage of a page's observed rate
//! towards a prior.
//!
//! With `R(p)` the past refresh instants of `p` and `LR(p, t)` the refresh before `t`:
//! `ΔQ̄(p) = mean over t ∈ R(p) of ΔQ_A(p, t) / (t − LR(p, t))` and
//! `P(p, t) = ΔQ̄(p) · (t − LR(p, t))`.

use crate::corpus::Unit;

/// Time-normalised quality change of one refresh: `ΔQ_A(p, t) / (t − LR(p, t))` (paper 003 §6).
/// An interval of 0 is treated as 1.
pub fn normalised_delta_q(delta_q: f64, unit: Unit, last_refresh: Unit) -> f64 {
    delta_q / unit.saturating_sub(last_refresh).max(1) as f64
}

/// Refresh priority `P(p, t) = ΔQ̄(p) · (t − LR(p, t))` (paper 003 §6).
pub fn priority(mean_normalised: f64, unit: Unit, last_refresh: Unit) -> f64 {
    mean_normalised * unit.saturating_sub(last_refresh) as f64
}

/// The oracle ratios of one page: `delta_q[i] / (c_i − c_{i−1})` with `c_0 = 0`.
pub fn oracle_ratios(change_units: &[Unit], delta_q: &[f64]) -> Vec<f64> {
    let mut prev = 0;
    change_units
        .iter()
        .zip(delta_q)
        .map(|(&c, &dq)| {
            let r = normalised_delta_q(dq, c, prev);
            prev = c;
            r
        })
        .collect()
}

/// Units since page `p`'s last refresh `last[p]`, at `unit`.
pub(crate) fn elapsed(unit: Unit, last: &[Unit], p: usize) -> f64 {
    unit.saturating_sub(last[p]) as f64
}

/// `(ΣΔQ_A + m₀(p)·τ) / (ΣΔt + τ)` per page: its observed rate with a prior of one
/// pseudo-interval `τ` at rate `prior(p)` (`sums`: each page's `(ΣΔQ_A, ΣΔt)`).
pub fn shrunk(sums: Vec<(f64, f64)>, tau: f64, prior: impl Fn(usize) -> f64) -> Vec<f64> {
    sums.into_iter()
        .enumerate()
        .map(|(p, (dq, dt))| (dq + prior(p) * tau) / (dt + tau))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priority_formulas() {
        assert_eq!(normalised_delta_q(6.0, 5, 2), 2.0);
        assert_eq!(priority(2.0, 7, 3), 8.0);
        // Changes at 2, 6, 7 with ΔQ 4, 8, 3: ratios 4/2, 8/4, 3/1.
        assert_eq!(
            oracle_ratios(&[2, 6, 7], &[4.0, 8.0, 3.0]),
            vec![2.0, 2.0, 3.0]
        );
    }
}
