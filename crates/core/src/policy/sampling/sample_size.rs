//! How many pages a sampling policy samples: paper 000's t-test sufficiency rule and cluster
//! count for small budgets, and Cho & Ntoulas's site sample size used by paper 002's GSB.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Paper 000's minimum sample per cluster: a t-interval needs two values.
pub(crate) const MIN_SAMPLES: usize = 2;

/// Paper 000 §4 (SEED-SYSTEMS §1.2.3): a cluster's sample `values` is *sufficient* when its
/// mean is within `±δ` of the population mean at confidence `γ` in a standard t-test:
/// `n ≥ 2` and `t_{(1+γ)/2, n−1} · s / √n ≤ δ`, `s` the sample standard deviation. The value of
/// `δ` is lost from the text (SEED-SYSTEMS' choice: 0.05 on the change probability).
pub fn sample_is_sufficient(values: &[f64], confidence: f64, tolerance: f64) -> bool {
    let n = values.len();
    if n < MIN_SAMPLES {
        return false;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let s = var.sqrt();
    if s == 0.0 {
        return true;
    }
    t_quantile((1.0 + confidence) / 2.0, n - 1) * s / (n as f64).sqrt() <= tolerance
}

/// The `p` quantile of Student's t with `df` degrees of freedom.
pub(crate) fn t_quantile(p: f64, df: usize) -> f64 {
    StudentsT::new(0.0, 1.0, df as f64)
        .expect("df ≥ 1 and unit scale are valid")
        .inverse_cdf(p)
}

/// Clusters CLS uses with budget `budget` and `k` wanted: `min(k, max(1, ⌊R / (2·n_min)⌋))`, so
/// the minimum samples never take more than half the budget (SEED-SYSTEMS §1.2.3's bound for
/// budgets far below the paper's `R = 25,000 ≫ k = 100`; reconstructed).
pub(crate) fn effective_clusters(k: usize, budget: usize) -> usize {
    k.min((budget / (2 * MIN_SAMPLES)).max(1))
}

/// Paper 000 §4: the upper bound of a cluster's sample, "download resources over the number of
/// clusters": `n_max = ⌊R / k⌋` (at least [`MIN_SAMPLES`]).
pub(crate) fn max_samples(budget: usize, clusters: usize) -> usize {
    (budget / clusters.max(1)).max(MIN_SAMPLES)
}

/// Paper 002 §6.2 (after Cho & Ntoulas 2002): GSB samples `⌈√(N̄ · r)⌉` pages of each site,
/// `N̄` the average number of pages per site and `r = R / |L|` the budget's share of the
/// repository (at least 1).
pub(crate) fn site_sample_size(pages: usize, sites: usize, budget: usize) -> usize {
    if pages == 0 || sites == 0 {
        return 0;
    }
    let mean_site = pages as f64 / sites as f64;
    let r = budget as f64 / pages as f64;
    ((mean_site * r).sqrt().ceil() as usize).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_match_the_tables() {
        // Two-sided 80 % (γ = 0.8): t_{0.9, df}; 95 %: t_{0.975, df}.
        assert!((t_quantile(0.9, 1) - 3.0777).abs() < 1e-3);
        assert!((t_quantile(0.9, 9) - 1.3830).abs() < 1e-3);
        assert!((t_quantile(0.975, 4) - 2.7764).abs() < 1e-3);
        assert!((t_quantile(0.975, 100_000) - 1.960).abs() < 1e-3);
    }

    #[test]
    fn the_t_rule_stops_when_the_interval_is_narrow() {
        assert!(!sample_is_sufficient(&[0.5], 0.8, 0.05), "one value");
        assert!(sample_is_sufficient(&[0.3, 0.3], 0.8, 0.05), "s = 0");
        // n = 2, s = 0.0707: 3.0777 · 0.0707 / √2 = 0.1539 > 0.05.
        assert!(!sample_is_sufficient(&[0.3, 0.4], 0.8, 0.05));
        assert!(sample_is_sufficient(&[0.3, 0.4], 0.8, 0.16));
        // n = 10 alternating 0.3/0.4: s = 0.0527, t_{0.9,9} = 1.383: 0.0230 ≤ 0.05.
        let ten: Vec<f64> = (0..10)
            .map(|i| if i % 2 == 0 { 0.3 } else { 0.4 })
            .collect();
        assert!(sample_is_sufficient(&ten, 0.8, 0.05));
        // Higher confidence needs a wider tolerance.
        assert!(!sample_is_sufficient(&ten, 0.999, 0.05));
    }

    #[test]
    fn cluster_counts_and_site_samples() {
        assert_eq!(effective_clusters(100, 25_000), 100);
        assert_eq!(effective_clusters(100, 344), 86);
        assert_eq!(effective_clusters(100, 3), 1);
        assert_eq!(max_samples(25_000, 100), 250);
        assert_eq!(max_samples(3, 1), 3);
        // Paper 002's collection: 284,692 pages on 212 sites, R = 25,000: √(1342.9·0.0878) = 10.86.
        assert_eq!(site_sample_size(284_692, 212, 25_000), 11);
        assert_eq!(site_sample_size(100, 1, 1), 1);
        assert_eq!(site_sample_size(0, 0, 5), 0);
    }
}
