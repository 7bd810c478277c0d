//! Change rate from visits at irregular intervals: the maximum-likelihood estimate of Cho &
//! Garcia-Molina for a Poisson page, with pseudo-observations as a prior.
//!
//! A refresher that picks pages by priority revisits them at irregular intervals, so the
//! fixed-interval estimators of [`super::rate`] (CG, paper 001 Eq. 4) do not apply: they need
//! one interval `I`. The likelihood of a history of intervals `t_i` that found a change and
//! `u_j` that found none is `Π (1 − e^{−λ t_i}) · Π e^{−λ u_j}` whatever the intervals are.

/// Maximum-likelihood Poisson change rate for irregular visits: the root `λ` of
/// `Σ_i w_i · t_i / (e^{λ t_i} − 1) = U`, where the `(t_i, w_i)` are the intervals (in units)
/// that ended in a visit finding a change, with weights `w_i` (1 for an observation, fractional
/// for pseudo-observations of a prior), and `U` is the total weighted length of the intervals
/// that ended finding none.
///
/// Cho & Garcia-Molina, "Estimating frequency of change", ACM TOIT 2003, §5 (irregular access,
/// the derivative of the log-likelihood set to 0). The left side falls from `+∞` at `λ → 0` to 0
/// at `λ → ∞`, so the root is unique; it is 0 when no change was seen and `+∞` when every
/// interval found a change (`U = 0`). Solved by bisection on `ln λ` to 1e-12 relative.
pub fn irregular_mle_rate(changed: &[(f64, f64)], unchanged_time: f64) -> f64 {
    let changed: Vec<(f64, f64)> = changed
        .iter()
        .copied()
        .filter(|&(t, w)| t > 0.0 && w > 0.0)
        .collect();
    if changed.is_empty() {
        return 0.0;
    }
    if unchanged_time <= 0.0 {
        return f64::INFINITY;
    }
    // Positive when λ is below the root.
    let score = |lambda: f64| {
        changed
            .iter()
            .map(|&(t, w)| w * t / (lambda * t).exp_m1())
            .sum::<f64>()
            - unchanged_time
    };
    let (mut lo, mut hi) = (1e-12_f64, 1.0_f64);
    while score(hi) > 0.0 && hi < 1e12 {
        hi *= 16.0;
    }
    while score(lo) < 0.0 && lo > 1e-300 {
        lo /= 16.0;
    }
    crate::optimise::bisect_log(lo, hi, 200, 1e-12, |lambda| score(lambda) > 0.0)
}

/// Probability that a Poisson page of rate `lambda` changed at least once in `elapsed` units:
/// `1 − e^{−λ·elapsed}` (Cho & Garcia-Molina 2003, §2; paper 001 §3.1 uses the same form).
pub fn change_probability(lambda: f64, elapsed: f64) -> f64 {
    if lambda <= 0.0 || elapsed <= 0.0 {
        0.0
    } else {
        -(-lambda * elapsed).exp_m1()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_visits_give_the_closed_form_mle() {
        // n visits every I units, X changed: the MLE is −ln(1 − X/n) / I.
        for (n, x, interval) in [(10, 3, 1.0), (20, 15, 2.0), (7, 1, 0.5)] {
            let changed = vec![(interval, 1.0); x];
            let unchanged = (n - x) as f64 * interval;
            let expected = -(1.0 - x as f64 / n as f64).ln() / interval;
            let got = irregular_mle_rate(&changed, unchanged);
            assert!(
                (got - expected).abs() < 1e-9 * expected,
                "n={n} x={x}: {got} vs {expected}"
            );
        }
    }

    #[test]
    fn irregular_intervals_solve_the_likelihood_equation() {
        // Changes found after 1 and 4 units, none after 2 and 3 units.
        let changed = [(1.0, 1.0), (4.0, 1.0)];
        let lambda = irregular_mle_rate(&changed, 5.0);
        let lhs: f64 = changed
            .iter()
            .map(|&(t, _)| t / (lambda * t).exp_m1())
            .sum();
        assert!((lhs - 5.0).abs() < 1e-9, "λ = {lambda}, lhs = {lhs}");
        // A longer unchanged time lowers the rate.
        assert!(irregular_mle_rate(&changed, 9.0) < lambda);
        // Weights count like repeated observations.
        let doubled = irregular_mle_rate(&[(1.0, 2.0), (4.0, 2.0)], 10.0);
        assert!((doubled - lambda).abs() < 1e-9 * lambda);
    }

    #[test]
    fn edge_cases() {
        assert_eq!(irregular_mle_rate(&[], 10.0), 0.0);
        assert_eq!(irregular_mle_rate(&[(2.0, 1.0)], 0.0), f64::INFINITY);
        assert_eq!(irregular_mle_rate(&[(0.0, 1.0)], 3.0), 0.0);
        assert_eq!(change_probability(0.0, 5.0), 0.0);
        assert!((change_probability(f64::INFINITY, 1.0) - 1.0).abs() < 1e-15);
        assert!((change_probability(0.5, 2.0) - (1.0 - (-1.0f64).exp())).abs() < 1e-15);
    }
}
