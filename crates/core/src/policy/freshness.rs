//! Expected freshness under uniform refresh and the budgeted frequency optimum shared by SBR
//! and EBR (Cho & Garcia-Molina, "Effective page refresh policies for Web crawlers", ACM TODS
//! 2003; Wolf et al., "Optimal crawling strategies for web search engines", WWW 2002).
//!
//! Each page `p` changes as a Poisson process of rate `λ_p` and is refreshed uniformly `f_p`
//! times per unit. The optimiser maximises `Σ_p c_p · F(λ_p, f_p)` subject to `Σ_p f_p = B`
//! and `0 ≤ f_p ≤ 1` (a page cannot be refreshed twice in one unit), with `c_p = 1` for SBR and
//! `c_p = w_p · d_p` for EBR (minimising `Σ c_p (1 − F)` is the same problem).

/// Expected freshness of a page of change rate `λ` refreshed uniformly `f` times per unit:
/// `F(λ, f) = (f/λ)(1 − e^(−λ/f))`.
///
/// Cho & Garcia-Molina 2003 (TODS), §4, the time-averaged freshness of an element under a
/// fixed-order (uniform) policy. Limits: `λ = 0` → 1 (never changes); `f = 0` with `λ > 0` → 0.
pub fn expected_freshness(lambda: f64, f: f64) -> f64 {
    if lambda <= 0.0 {
        return 1.0;
    }
    if f <= 0.0 {
        return 0.0;
    }
    let x = lambda / f;
    -(-x).exp_m1() / x
}

/// `h(x) = 1 − (1 + x)e^(−x)`, increasing from 0 (x = 0) to 1 (x → ∞); `∂F/∂f = h(λ/f) / λ`.
///
/// Below `x = 0.01` by its series `Σ_{k≥2} (−1)^k (k−1) x^k / k!` (the closed form cancels
/// catastrophically); truncation error below `x^7/840 ≈ 1e-17` relative to `x²/2`.
fn h(x: f64) -> f64 {
    h_and_slope(x).0
}

/// `(h(x), h'(x))`, `h'(x) = x e^(−x)`: one `e^(−x)` serves both (Newton needs the two).
fn h_and_slope(x: f64) -> (f64, f64) {
    let decay = (-x).exp();
    let slope = x * decay;
    if x < 1e-2 {
        let x2 = x * x;
        return (
            x2 * (0.5 - x / 3.0 + x2 / 8.0 - x2 * x / 30.0 + x2 * x2 / 144.0),
            slope,
        );
    }
    (-(-x).exp_m1() - slope, slope)
}

/// `h(1)`, the first bracket [`solve_h`] tries.
static H_AT_ONE: std::sync::LazyLock<f64> = std::sync::LazyLock::new(|| h(1.0));

/// Marginal freshness of one more refresh per unit: `∂F/∂f = (1 − (1 + λ/f) e^(−λ/f)) / λ`.
///
/// Derivative of [`expected_freshness`] (Cho & Garcia-Molina 2003, §5, the Lagrangian
/// condition `∂F(λ_i, f_i)/∂f_i = μ`). Decreasing in `f`; tends to `1/λ` as `f → 0`, which is
/// why pages with `c/λ ≤ μ` get no refresh at all. `λ = 0` → 0.
pub(crate) fn marginal_freshness(lambda: f64, f: f64) -> f64 {
    if lambda <= 0.0 {
        return 0.0;
    }
    if f <= 0.0 {
        return 1.0 / lambda;
    }
    h(lambda / f) / lambda
}

/// Solves `h(x) = target` for `x > 0` (`0 < target < 1`) by safeguarded Newton: Newton steps
/// (`h'(x) = x e^(−x)`) inside a bracket that bisection keeps shrinking (Numerical Recipes'
/// `rtsafe`). Robust for targets down to 1e-300 and up to 1 − 1e-16.
fn solve_h(target: f64) -> f64 {
    debug_assert!(target > 0.0 && target < 1.0);
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    let mut h_hi = *H_AT_ONE;
    while h_hi < target {
        lo = hi;
        hi *= 2.0;
        if hi > 1e6 {
            return hi;
        }
        h_hi = h(hi);
    }
    // Start from the small-x expansion h ≈ x²/2 when it lies in the bracket.
    let mut x = (2.0 * target).sqrt().clamp(lo, hi);
    if x <= lo || x >= hi {
        x = 0.5 * (lo + hi);
    }
    for _ in 0..200 {
        let (hx, d) = h_and_slope(x);
        let fx = hx - target;
        if fx == 0.0 {
            return x;
        }
        if fx < 0.0 {
            lo = x;
        } else {
            hi = x;
        }
        let newton = x - fx / d;
        x = if d > 0.0 && newton > lo && newton < hi {
            newton
        } else {
            0.5 * (lo + hi)
        };
        if (hi - lo) <= 1e-15 * hi.max(1e-300) {
            break;
        }
    }
    x
}

/// The frequency `f ∈ [0, 1]` at which page weight `c` times marginal freshness equals `μ`:
/// `c · ∂F/∂f(λ, f) = μ` (Cho & Garcia-Molina 2003, §5; weighted as in Wolf et al. 2002).
///
/// Returns 0 when `λ = 0`, `c = 0` or `c/λ ≤ μ` (the page changes too fast to be worth its
/// budget), and 1 when even `f = 1` leaves marginal value above `μ`.
pub fn frequency_at(lambda: f64, weight: f64, mu: f64) -> f64 {
    if lambda <= 0.0 || weight <= 0.0 {
        return 0.0;
    }
    PageTerms::new(lambda, weight).frequency_at(mu)
}

/// What [`frequency_at`] needs of one page whatever `μ`, computed once per page for a search
/// over `μ`.
#[derive(Debug, Clone, Copy)]
struct PageTerms {
    lambda: f64,
    weight: f64,
    /// `c/λ`: no refresh at or above this `μ`.
    zero_from: f64,
    /// `c · ∂F/∂f(λ, 1)`: every unit at or below this `μ`.
    one_until: f64,
}

impl PageTerms {
    /// `λ > 0` and `c > 0`.
    fn new(lambda: f64, weight: f64) -> Self {
        PageTerms {
            lambda,
            weight,
            zero_from: weight / lambda,
            one_until: weight * marginal_freshness(lambda, 1.0),
        }
    }

    fn frequency_at(&self, mu: f64) -> f64 {
        if self.zero_from <= mu {
            return 0.0;
        }
        if self.one_until >= mu {
            return 1.0;
        }
        // h(λ/f) = μλ/c ∈ (0, 1).
        let x = solve_h(mu * self.lambda / self.weight);
        (self.lambda / x).min(1.0)
    }
}

/// The budgeted optimum: frequencies `f_p ∈ [0, 1]` maximising `Σ c_p F(λ_p, f_p)` subject to
/// `Σ f_p = budget`, and the multiplier `μ`.
///
/// Lagrangian solution of Cho & Garcia-Molina 2003 §5 (Eq. for `∂F/∂f_i = μ`) with the box
/// `f ≤ 1`; `μ` is found by bisection on `log μ` so that `Σ f_p(μ) = budget` (the sum decreases
/// in `μ`). When even `μ → 0` cannot spend the budget (fewer useful pages than `budget`), every
/// useful page gets `f = 1`, `μ = 0` and the rest of the budget is left to the caller.
#[derive(Debug, Clone, PartialEq)]
pub struct FrequencyPlan {
    pub(crate) frequencies: Vec<f64>,
    pub(crate) mu: f64,
}

/// The multiplier `μ` at which the frequencies `total(μ)` sum to `budget` (the sum decreases
/// in `μ`, continuously): from `highest` (the largest `c/λ`, at and above which nothing is
/// refreshed) down by factors of [`PRICE_STEP`] until the budget is exceeded, then by regula
/// falsi on `log μ` ([`crate::optimise::falsi_log`]) to a relative width of 1e-13. Each
/// evaluation of `total` solves every page's frequency, so the few evaluations of regula falsi
/// replace bisection's many (EmacsWiki's online plans: 13 on average against 50–64).
fn price_spending(budget: f64, highest: f64, total: &mut dyn FnMut(f64) -> f64) -> f64 {
    let (mut lo, mut hi) = (highest, highest);
    let mut excess_lo = total(lo) - budget;
    let mut excess_hi = excess_lo;
    while excess_lo <= 0.0 {
        if lo < 1e-300 {
            return lo;
        }
        (hi, excess_hi) = (lo, excess_lo);
        lo /= PRICE_STEP;
        excess_lo = total(lo) - budget;
    }
    if lo == hi {
        return hi;
    }
    crate::optimise::falsi_log((lo, excess_lo), (hi, excess_hi), 200, 1e-13, |mu| {
        total(mu) - budget
    })
}

/// How far [`price_spending`] lowers `μ` per step while it looks for a price that spends the
/// budget: the bracket it hands regula falsi is at most this wide.
const PRICE_STEP: f64 = 64.0;

/// See [`FrequencyPlan`]. `lambdas` and `weights` are per page (same length).
pub fn optimal_frequencies(lambdas: &[f64], weights: &[f64], budget: f64) -> FrequencyPlan {
    assert_eq!(lambdas.len(), weights.len(), "one weight per page");
    let n = lambdas.len();
    let useful: Vec<usize> = (0..n)
        .filter(|&i| lambdas[i] > 0.0 && weights[i] > 0.0)
        .collect();
    // Pages of equal `(λ, c)` get equal frequencies, and estimated rates take few distinct
    // values (a count of changes over a few intervals): solve once per distinct pair, then sum
    // per page in page order, so every total is the same floating-point sum as page by page.
    let mut pairs: Vec<(u64, u64)> = useful
        .iter()
        .map(|&i| (lambdas[i].to_bits(), weights[i].to_bits()))
        .collect();
    pairs.sort_unstable();
    pairs.dedup();
    let pair_of: Vec<u32> = useful
        .iter()
        .map(|&i| {
            let key = (lambdas[i].to_bits(), weights[i].to_bits());
            pairs
                .binary_search(&key)
                .expect("every page's pair is listed") as u32
        })
        .collect();
    let terms: Vec<PageTerms> = pairs
        .iter()
        .map(|&(l, c)| PageTerms::new(f64::from_bits(l), f64::from_bits(c)))
        .collect();
    let mut per_pair = vec![0.0; pairs.len()];
    let mut total = |mu: f64| -> f64 {
        for (f, t) in per_pair.iter_mut().zip(&terms) {
            *f = t.frequency_at(mu);
        }
        pair_of.iter().map(|&k| per_pair[k as usize]).sum()
    };
    let mut frequencies = vec![0.0; n];
    if useful.is_empty() || budget <= 0.0 {
        return FrequencyPlan {
            frequencies,
            mu: f64::INFINITY,
        };
    }
    if useful.len() as f64 <= budget {
        for &i in &useful {
            frequencies[i] = 1.0;
        }
        return FrequencyPlan {
            frequencies,
            mu: 0.0,
        };
    }
    // μ_hi: the largest c/λ — nothing is refreshed above it. μ_lo: shrink until the budget
    // is exceeded (always possible since more than `budget` pages are useful).
    let highest = useful
        .iter()
        .map(|&i| weights[i] / lambdas[i])
        .fold(0.0f64, f64::max);
    let mu = price_spending(budget, highest, &mut total);
    // Once per distinct pair again: what `frequency_at` gives each of its pages.
    let at_price: Vec<f64> = terms.iter().map(|t| t.frequency_at(mu)).collect();
    for (&i, &k) in useful.iter().zip(&pair_of) {
        frequencies[i] = at_price[k as usize];
    }
    FrequencyPlan { frequencies, mu }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freshness_formula_and_limits() {
        // λ = 1, f = 1: 1 − e^{-1}.
        assert!((expected_freshness(1.0, 1.0) - (1.0 - (-1f64).exp())).abs() < 1e-12);
        // λ = 2, f = 0.5: (0.25)(1 − e^{-4}).
        assert!((expected_freshness(2.0, 0.5) - 0.25 * (1.0 - (-4f64).exp())).abs() < 1e-12);
        assert_eq!(expected_freshness(0.0, 0.3), 1.0);
        assert_eq!(expected_freshness(1.0, 0.0), 0.0);
        assert!((expected_freshness(1e-9, 1.0) - 1.0).abs() < 1e-8);
    }

    #[test]
    fn marginal_is_the_derivative_and_decreasing() {
        for &(l, f) in &[(0.3, 0.2), (1.0, 0.5), (5.0, 0.9), (0.01, 0.7)] {
            let e = 1e-6;
            let numeric = (expected_freshness(l, f + e) - expected_freshness(l, f - e)) / (2.0 * e);
            assert!(
                (marginal_freshness(l, f) - numeric).abs() < 1e-6,
                "λ={l} f={f}: {} vs {numeric}",
                marginal_freshness(l, f)
            );
            assert!(marginal_freshness(l, f) > marginal_freshness(l, f + 0.05));
        }
        assert!((marginal_freshness(2.0, 1e-9) - 0.5).abs() < 1e-9);
    }

    #[test]
    fn root_finder_inverts_h_over_a_wide_range() {
        for &t in &[1e-200, 1e-12, 1e-3, 0.2, 0.5, 0.9, 0.999_999, 1.0 - 1e-12] {
            let x = solve_h(t);
            assert!(
                ((h(x) - t) / t).abs() < 1e-9,
                "target {t}: h({x}) = {}",
                h(x)
            );
        }
    }

    #[test]
    fn optimum_satisfies_kkt_and_meets_the_budget() {
        let lambdas = [0.05, 0.1, 0.2, 0.5, 1.0, 3.0, 10.0, 0.0, 0.3];
        let weights = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0];
        let budget = 1.2;
        let plan = optimal_frequencies(&lambdas, &weights, budget);
        let f = &plan.frequencies;
        let sum: f64 = f.iter().sum();
        assert!((sum - budget).abs() < 1e-9, "budget met: {sum}");
        let mu = plan.mu;
        let mut interior = 0;
        for i in 0..lambdas.len() {
            let (l, c) = (lambdas[i], weights[i]);
            if l == 0.0 || c == 0.0 {
                assert_eq!(f[i], 0.0, "page {i} has nothing to gain");
            } else if f[i] == 0.0 {
                assert!(
                    c / l <= mu * (1.0 + 1e-9),
                    "page {i}: c/λ = {} > μ = {mu}",
                    c / l
                );
            } else if f[i] < 1.0 {
                interior += 1;
                let m = c * marginal_freshness(l, f[i]);
                assert!(
                    (m - mu).abs() < 1e-7 * mu,
                    "page {i}: marginal {m} ≠ μ {mu}"
                );
            } else {
                assert!(c * marginal_freshness(l, 1.0) >= mu * (1.0 - 1e-9));
            }
        }
        assert!(interior >= 3);
        // The fastest page (λ = 10) is abandoned; slow pages are refreshed.
        assert_eq!(f[6], 0.0);
        assert!(f[0] > 0.0 && f[3] > 0.0);
        // Perturbing the optimum along the constraint never helps.
        let objective = |g: &[f64]| -> f64 {
            (0..g.len())
                .map(|i| weights[i] * expected_freshness(lambdas[i], g[i]))
                .sum()
        };
        let best = objective(f);
        for (a, b) in [(0, 3), (3, 6), (1, 2), (4, 5)] {
            let mut g = f.clone();
            let d = 0.01f64.min(g[a]);
            g[a] -= d;
            g[b] += d;
            assert!(objective(&g) <= best + 1e-12);
        }
    }

    #[test]
    fn weighted_optimum_and_saturation() {
        // Equal λ: the heavier page gets more.
        let plan = optimal_frequencies(&[0.5, 0.5], &[1.0, 4.0], 0.6);
        assert!(plan.frequencies[1] > plan.frequencies[0]);
        // Two useful pages, budget 5: both at 1, μ = 0.
        let plan = optimal_frequencies(&[0.5, 0.5, 0.0], &[1.0, 1.0, 1.0], 5.0);
        assert_eq!(plan.frequencies, vec![1.0, 1.0, 0.0]);
        assert_eq!(plan.mu, 0.0);
        // Identical pages share equally.
        let plan = optimal_frequencies(&[0.2; 4], &[1.0; 4], 1.0);
        for f in &plan.frequencies {
            assert!((f - 0.25).abs() < 1e-9);
        }
    }

    /// Solving once per distinct `(λ, c)` is the page-by-page search, to the last bit: the
    /// reference below sums Cho & Garcia-Molina's conditions page by page in the same search.
    #[test]
    fn grouped_pages_give_the_page_by_page_optimum_exactly() {
        fn reference(lambdas: &[f64], weights: &[f64], budget: f64) -> (Vec<f64>, f64) {
            let marginal_one = |l: f64| {
                let x: f64 = l;
                (-(-x).exp_m1() - x * (-x).exp()) / l
            };
            let freq = |l: f64, c: f64, mu: f64| {
                if l <= 0.0 || c <= 0.0 || c / l <= mu {
                    0.0
                } else if c * marginal_one(l) >= mu {
                    1.0
                } else {
                    (l / solve_h(mu * l / c)).min(1.0)
                }
            };
            let mut total = |mu: f64| -> f64 {
                (0..lambdas.len())
                    .map(|i| freq(lambdas[i], weights[i], mu))
                    .sum()
            };
            let highest = (0..lambdas.len())
                .filter(|&i| lambdas[i] > 0.0 && weights[i] > 0.0)
                .map(|i| weights[i] / lambdas[i])
                .fold(0.0f64, f64::max);
            let mu = price_spending(budget, highest, &mut total);
            let f = (0..lambdas.len())
                .map(|i| freq(lambdas[i], weights[i], mu))
                .collect();
            (f, mu)
        }
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for _ in 0..20 {
            let n = 300;
            // Few distinct rates (as estimated from change counts), weights distinct or not.
            let lambdas: Vec<f64> = (0..n)
                .map(|_| [0.0, 0.05, 0.2, 0.2, 1.0, 3.0][rng.gen_range(0..6)])
                .collect();
            let distinct_weights = rng.gen_bool(0.5);
            let weights: Vec<f64> = (0..n)
                .map(|_| {
                    if distinct_weights {
                        rng.gen_range(0.01..5.0)
                    } else {
                        1.0
                    }
                })
                .collect();
            let budget = rng.gen_range(1.0..60.0);
            let plan = optimal_frequencies(&lambdas, &weights, budget);
            let (f, mu) = reference(&lambdas, &weights, budget);
            assert_eq!(plan.mu.to_bits(), mu.to_bits());
            assert_eq!(plan.frequencies, f);
        }
    }
}
