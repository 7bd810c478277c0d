//! Poisson change-rate estimators from visit histories.
//!
//! A page changes as a Poisson process of rate λ (changes per time unit). A crawler that visits
//! it `n` times, each after an interval `I`, sees `X` visits where the page had changed (one or
//! more times). The naive estimate `X / (n·I)` undercounts, because several changes within an
//! interval look like one; Cho & Garcia-Molina's improved estimator corrects for that.

/// Naive estimate `λ̂ = X / T`: changes detected per unit of observed time.
///
/// Cho & Garcia-Molina, "Estimating frequency of change" (ACM TOIT 2003), §3.1: biased low
/// when several changes fall in one visit interval. `elapsed ≤ 0` gives 0.
pub fn naive_rate(changes: usize, elapsed: f64) -> f64 {
    if elapsed <= 0.0 {
        return 0.0;
    }
    changes as f64 / elapsed
}

/// Cho & Garcia-Molina's improved estimator, per visit interval:
/// `λ̂·I = −ln((n − X + 0.5) / (n + 0.5))`.
///
/// Paper 001 (Santos et al. 2015), Eq. 4 ("CG"), from Cho & Garcia-Molina, ACM TOIT 2003,
/// §3.2 (the bias-reduced version of the MLE `−ln(1 − X/n)`, finite even when `X = n`).
/// `n` visits, `X ≤ n` of them found the page changed; `X` is clamped to `n`. Returns 0 for
/// `n = 0` or `X = 0`.
pub fn cg_rate(visits: usize, changed: usize) -> f64 {
    if visits == 0 {
        return 0.0;
    }
    let n = visits as f64;
    let x = changed.min(visits) as f64;
    -((n - x + 0.5) / (n + 0.5)).ln()
}

/// [`cg_rate`] converted to changes per time unit for visits every `interval` units
/// (Cho & Garcia-Molina 2003, §3.2: the estimator is of `r = λ·I`).
/// `interval ≤ 0` gives 0.
pub fn cg_rate_per_unit(visits: usize, changed: usize, interval: f64) -> f64 {
    if interval <= 0.0 {
        return 0.0;
    }
    cg_rate(visits, changed) / interval
}

/// Rate from an oracle history that saw every unit: the number of units in which the page
/// changed divided by the number of observed unit intervals (`units − 1` for a history of
/// units `0..units`, at least 1).
///
/// This is [`naive_rate`] with `T` = the observed units, the estimate paper 003 §6 fitted on
/// the whole 48-week history ("we used the simpler Poisson update model, as done in \[9\]").
/// At most one change per unit is visible, so a page changing every unit gets λ = 1.
pub fn oracle_rate(change_count: usize, units: u32) -> f64 {
    naive_rate(change_count, units.saturating_sub(1).max(1) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn naive_is_changes_over_time() {
        assert_eq!(naive_rate(3, 12.0), 0.25);
        assert_eq!(naive_rate(3, 0.0), 0.0);
        assert_eq!(oracle_rate(12, 49), 0.25);
        assert_eq!(oracle_rate(1, 1), 1.0);
    }

    #[test]
    fn cg_matches_the_formula_and_corrects_saturation() {
        // n = 10, X = 4: −ln(6.5 / 10.5).
        assert!((cg_rate(10, 4) - (10.5f64 / 6.5).ln()).abs() < 1e-12);
        assert_eq!(cg_rate(10, 0), 0.0);
        assert_eq!(cg_rate(0, 0), 0.0);
        // Every visit changed: finite, ln(2n + 1), above the naive 1 per interval.
        assert!((cg_rate(10, 10) - 21f64.ln()).abs() < 1e-12);
        assert!(cg_rate(10, 10) > 1.0);
        // Per unit: visits every 2 units halve the rate.
        assert!((cg_rate_per_unit(10, 4, 2.0) - cg_rate(10, 4) / 2.0).abs() < 1e-12);
        assert_eq!(cg_rate_per_unit(10, 4, 0.0), 0.0);
    }

    #[test]
    fn cg_is_close_to_the_true_rate_on_simulated_poisson_visits() {
        // λ·I = 0.7: P(change in an interval) = 1 − e^{-0.7}; expected X over n visits.
        let r: f64 = 0.7;
        let n = 10_000usize;
        let x = ((1.0 - (-r).exp()) * n as f64).round() as usize;
        assert!((cg_rate(n, x) - r).abs() < 0.01);
        // The naive X/n is biased low.
        assert!(naive_rate(x, n as f64) < r - 0.15);
    }
}
