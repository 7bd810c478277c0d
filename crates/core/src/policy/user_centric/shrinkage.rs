//! Shrinkage of a page's measured gains towards a prior (the conjugate normal mean), and its
//! leave-one-out check: what the user-centric planner ([`super::planner`]) and its carry-over
//! fit ([`super::carryover`]) choose their prior's strength with.

use crate::policy::planned::GainRecord;

/// The prior strengths (pseudo-changes) cross-validation chooses from: powers of two from 1/64
/// to 64, then ∞ (the prior alone). A fixed, site-independent grid, wide enough that the
/// choice, not the grid, decides.
pub const STRENGTHS: [f64; 14] = [
    1.0 / 64.0,
    1.0 / 32.0,
    1.0 / 16.0,
    0.125,
    0.25,
    0.5,
    1.0,
    2.0,
    4.0,
    8.0,
    16.0,
    32.0,
    64.0,
    f64::INFINITY,
];

/// Posterior mean gain per change of a page with measured gains `gains`, under a prior of mean
/// `prior` and strength `strength` pseudo-changes: `(Σ g_i + s·prior)/(n + s)`, the prior
/// alone when nothing was measured or `s = ∞`. Not below 0 (a planner weight).
///
/// The conjugate normal mean's shrinkage (e.g. Gelman et al., *Bayesian Data Analysis*, §2.5):
/// the prior counts as `s` observations.
pub fn posterior_gain(gains: &GainRecord, prior: f64, strength: f64) -> f64 {
    if gains.count == 0 || strength.is_infinite() {
        return prior.max(0.0);
    }
    ((gains.sum + strength * prior) / (gains.count as f64 + strength)).max(0.0)
}

/// Leave-one-out squared error of [`posterior_gain`] on one page: each measured gain `g_i`
/// predicted from the page's other gains and the prior, `Σ_i (g_i − ĝ_{−i})²`, in closed form
/// from the record's sums (with `a = n − 1 + s`:
/// `[(a+1)²·Σg² − 2(a+1)(G + s·m)·G + n·(G + s·m)²]/a²`; for `s = ∞`, `Σ (g_i − m)²`).
/// 0 for a page with fewer than two gains (nothing left to predict from but the prior, the
/// same for every strength).
pub fn loo_squared_error(gains: &GainRecord, prior: f64, strength: f64) -> f64 {
    if gains.count < 2 {
        return 0.0;
    }
    let (n, g, q) = (gains.count as f64, gains.sum, gains.sum_of_squares);
    if strength.is_infinite() {
        return (q - 2.0 * prior * g + n * prior * prior).max(0.0);
    }
    let a = n - 1.0 + strength;
    let total = g + strength * prior;
    (((a + 1.0) * (a + 1.0) * q - 2.0 * (a + 1.0) * total * g + n * total * total) / (a * a))
        .max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::gain_record as record;

    #[test]
    fn the_posterior_counts_the_prior_as_s_changes() {
        let r = record(&[2.0, 4.0]);
        assert_eq!(posterior_gain(&r, 0.0, 2.0), 6.0 / 4.0);
        assert_eq!(posterior_gain(&r, 3.0, f64::INFINITY), 3.0);
        assert_eq!(posterior_gain(&GainRecord::default(), 3.0, 0.5), 3.0);
        // A weight is never negative.
        assert_eq!(posterior_gain(&record(&[-5.0]), 1.0, 1.0), 0.0);
    }

    #[test]
    fn the_closed_form_leave_one_out_error_is_the_sum_over_left_out_gains() {
        let gains = [0.3, 2.5, 0.0, 1.25, -0.4];
        let r = record(&gains);
        for prior in [0.0, 0.7, 3.0] {
            for strength in STRENGTHS {
                let brute: f64 = (0..gains.len())
                    .map(|i| {
                        let rest: Vec<f64> = (0..gains.len())
                            .filter(|&j| j != i)
                            .map(|j| gains[j])
                            .collect();
                        let predicted = if strength.is_infinite() {
                            prior
                        } else {
                            (rest.iter().sum::<f64>() + strength * prior)
                                / (rest.len() as f64 + strength)
                        };
                        (gains[i] - predicted).powi(2)
                    })
                    .sum();
                let closed = loo_squared_error(&r, prior, strength);
                assert!(
                    (closed - brute).abs() < 1e-9 * brute.max(1.0),
                    "prior {prior} s {strength}: {closed} vs {brute}"
                );
            }
        }
        assert_eq!(loo_squared_error(&record(&[4.0]), 1.0, 1.0), 0.0);
    }
}
