//! How sure a comparison can be: a bootstrap over the workload's query submissions.
//!
//! Repository quality (paper 003 Eq. 5) is a ratio of sums over the workload, each query
//! weighted by how often users submitted it. The workload is one sample of what users ask, so
//! each resample draws as many submissions as the log holds, with replacement, in proportion
//! to the queries' frequencies (a multinomial draw of counts `k_q`), and re-weights each query
//! by `w_q = k_q / f_q` (1 in expectation; the sample itself is all ones). A unit's resampled
//! quality is `Σ_q w_q·credit_q / Σ_q w_q·ideal_q` — Eq. 5 over the resampled submissions —
//! exactly, not a linearisation; a run's resampled mean quality averages it over the judged
//! units, as the run's mean does (Efron & Tibshirani, "An Introduction to the Bootstrap",
//! 1993, ch. 6 and 13: the percentile interval).
//!
//! The draws are seeded and keyed by nothing but the workload and [`BOOTSTRAP_SEED`], so every
//! run over one workload sees the same resamples: differences between policies are read on
//! the same resampled workloads (a paired bootstrap).

use rand::SeedableRng;
use rand_distr::{Binomial, Distribution};

/// Resamples drawn: enough for the 2.5th and 97.5th percentiles to rest on 5 values each.
pub const RESAMPLES: usize = 200;

/// The central share of the resampled values an interval spans.
pub const INTERVAL_LEVEL: f64 = 0.95;

/// The seed of the resamples (fixed, so reports are reproducible and runs share them).
pub const BOOTSTRAP_SEED: u64 = 0x0b00_757a_a9ed;

/// `RESAMPLES` weightings of the workload's queries. See the module docs.
#[derive(Debug, Clone)]
pub struct QueryResamples {
    /// Row-major: resample `r`'s weight of query `q` at `r * queries + q`.
    weights: Vec<f64>,
    queries: usize,
    resamples: usize,
}

impl QueryResamples {
    /// Draws `resamples` weightings of queries submitted `frequencies[q]` times each (a
    /// frequency need not be whole: the draw takes `round(Σ f)` submissions, at least one per
    /// query with a positive frequency).
    pub fn draw(frequencies: &[f64], resamples: usize, seed: u64) -> Self {
        let queries = frequencies.len();
        let total: f64 = frequencies.iter().filter(|f| **f > 0.0).sum();
        let positive = frequencies.iter().filter(|f| **f > 0.0).count();
        let submissions = (total.round() as u64).max(positive as u64);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut weights = Vec::with_capacity(resamples * queries);
        for _ in 0..resamples {
            // A multinomial draw as a chain of binomials: query q takes its share of the
            // submissions the earlier queries left.
            let (mut left, mut mass_left) = (submissions, total);
            for &f in frequencies {
                if f <= 0.0 || total <= 0.0 {
                    weights.push(0.0);
                    continue;
                }
                let p = (f / mass_left).clamp(0.0, 1.0);
                let k = if left == 0 || p == 0.0 {
                    0
                } else if p >= 1.0 {
                    left
                } else {
                    Binomial::new(left, p).expect("0 < p < 1").sample(&mut rng)
                };
                left -= k;
                mass_left -= f;
                weights.push(k as f64 * total / (submissions as f64 * f));
            }
        }
        QueryResamples {
            weights,
            queries,
            resamples,
        }
    }

    /// The resamples of `frequencies` every report uses ([`RESAMPLES`], [`BOOTSTRAP_SEED`]).
    pub fn standard(frequencies: &[f64]) -> Self {
        Self::draw(frequencies, RESAMPLES, BOOTSTRAP_SEED)
    }

    pub fn resamples(&self) -> usize {
        self.resamples
    }

    /// Per resample, `Σ_q w_q · per_query[q]` (`per_query` in the workload's query order).
    pub fn weighted_sums(&self, per_query: &[f64]) -> Vec<f64> {
        assert_eq!(
            per_query.len(),
            self.queries,
            "one value per workload query"
        );
        if self.queries == 0 {
            return vec![0.0; self.resamples];
        }
        self.weights
            .chunks_exact(self.queries)
            .map(|w| w.iter().zip(per_query).map(|(w, x)| w * x).sum())
            .collect()
    }

    /// Per resample, a unit's quality (Eq. 5 over the resampled submissions): the queries'
    /// credits as [`Self::weighted_sums`] over `resampled_ideals`, the unit's ideals summed
    /// the same way (policy-independent, so computed once per unit); 1 where the ideal is 0, as
    /// the unit's quality is.
    pub fn quality(&self, credits: &[f64], resampled_ideals: &[f64]) -> Vec<f64> {
        self.weighted_sums(credits)
            .into_iter()
            .zip(resampled_ideals)
            .map(|(credit, &ideal)| if ideal > 0.0 { credit / ideal } else { 1.0 })
            .collect()
    }
}

/// The percentile interval ([`INTERVAL_LEVEL`]) of resampled values where `None` means "never
/// reached" (larger than any number): `None` as an end says that end is not reached.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Interval {
    pub low: Option<f64>,
    pub high: Option<f64>,
}

impl Interval {
    /// The interval of `values` (at least one): the values at the `(1 − level)/2` and
    /// `(1 + level)/2` quantiles of their order (nearest rank).
    pub fn of(values: impl IntoIterator<Item = Option<f64>>) -> Option<Interval> {
        let mut values: Vec<Option<f64>> = values.into_iter().collect();
        if values.is_empty() {
            return None;
        }
        values.sort_by(|a, b| match (a, b) {
            (Some(a), Some(b)) => a.total_cmp(b),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        });
        let n = values.len();
        // Nearest rank ⌈share·n⌉, guarded against 0.025·200 landing a hair above 5.
        let at = |share: f64| values[((share * n as f64 - 1e-9).ceil() as usize).clamp(1, n) - 1];
        Some(Interval {
            low: at((1.0 - INTERVAL_LEVEL) / 2.0),
            high: at((1.0 + INTERVAL_LEVEL) / 2.0),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_resample_draws_as_many_submissions_as_the_log_holds() {
        let frequencies = [5.0, 1.0, 3.0, 0.0, 11.0];
        let resamples = QueryResamples::draw(&frequencies, 50, 7);
        assert_eq!(resamples.resamples(), 50);
        // Weighted by frequency, every resample sums back to the 20 submissions.
        for sum in resamples.weighted_sums(&frequencies) {
            assert!((sum - 20.0).abs() < 1e-9, "{sum}");
        }
        // A query nobody submitted is never drawn; the draws are not all the sample itself.
        let zero = resamples.weighted_sums(&[0.0, 0.0, 0.0, 1.0, 0.0]);
        assert!(zero.iter().all(|&w| w == 0.0));
        let first = resamples.weighted_sums(&[1.0, 0.0, 0.0, 0.0, 0.0]);
        assert!(first.iter().any(|&w| (w - 1.0).abs() > 1e-9));
        // Each weight is 1 in expectation.
        let mean = first.iter().sum::<f64>() / first.len() as f64;
        assert!((mean - 1.0).abs() < 0.3, "{mean}");
    }

    #[test]
    fn the_same_seed_draws_the_same_resamples() {
        let frequencies = [2.0, 9.0, 4.0];
        let a = QueryResamples::draw(&frequencies, 20, 3).weighted_sums(&[1.0, 2.0, 3.0]);
        let b = QueryResamples::draw(&frequencies, 20, 3).weighted_sums(&[1.0, 2.0, 3.0]);
        let c = QueryResamples::draw(&frequencies, 20, 4).weighted_sums(&[1.0, 2.0, 3.0]);
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn resampled_quality_is_eq5_over_the_drawn_submissions() {
        // One query with credit 0.5 of ideal 1 and one fully credited: each resample's
        // quality is (k₁·0.5 + k₂·1) / (k₁ + k₂) for the drawn counts.
        let frequencies = [1.0, 1.0];
        let resamples = QueryResamples::draw(&frequencies, 30, 1);
        let ideals = resamples.weighted_sums(&[1.0, 1.0]);
        let quality = resamples.quality(&[0.5, 1.0], &ideals);
        for q in &quality {
            assert!(
                [0.5, 0.75, 1.0].iter().any(|v| (q - v).abs() < 1e-12),
                "{q}"
            );
        }
        assert!(quality.iter().any(|&q| q != 0.75));
        // Nothing ideal: quality 1, as Eq. 5 defines it.
        let nothing = resamples.weighted_sums(&[0.0, 0.0]);
        assert!(resamples
            .quality(&[0.0, 0.0], &nothing)
            .iter()
            .all(|&q| q == 1.0));
    }

    #[test]
    fn intervals_take_the_outer_quantiles_and_name_unreached_ends() {
        let values: Vec<Option<f64>> = (1..=200).map(|v| Some(v as f64)).collect();
        let i = Interval::of(values).unwrap();
        assert_eq!((i.low, i.high), (Some(5.0), Some(195.0)));
        // More than 2.5 % never reached: the upper end is not reached either.
        let mut values: Vec<Option<f64>> = (1..=190).map(|v| Some(v as f64)).collect();
        values.extend([None; 10]);
        let i = Interval::of(values).unwrap();
        assert_eq!((i.low, i.high), (Some(5.0), None));
        assert_eq!(Interval::of(Vec::new()), None);
    }
}
