//! LambdaCrawl's formulas for pages with *complete* change observations (the site reports
//! every change as it happens) and for a mix of both kinds: Kolobov, Peres, Lu & Horvitz,
//! NeurIPS 2019, Algorithm 2, Eq. 11 and the mixed case of Algorithm 3.
//!
//! A complete-observation page `w` is crawled right after a reported change with probability
//! `p_w`; it then spends `p_w·Δ_w` crawls per unit and its harmonic cost is `−μ_w·ln p_w`
//! (Proposition 4). The incomplete-observation pages keep Algorithm 1's rates
//! ([`super::crawl_rates`]).

use super::crawl_rate;
use crate::optimise::bisect_log;

/// The crawl probabilities after a reported change of complete-observation pages of
/// importances `μ` and change rates `Δ` for `bandwidth` crawls per unit:
/// `p_w = min(1, μ_w / (λ·Δ_w))`, `λ` such that `Σ_w p_w·Δ_w` = the bandwidth.
///
/// Kolobov et al. (NeurIPS 2019), Algorithm 2 (the authors' `LambdaCrawl_ComplObs`), which
/// minimises `−Σ μ_w ln p_w` under `Σ p_w Δ_w ≤ B`, `p_w ≤ 1`: every unsaturated page gets
/// `p̂_w = B'·μ_w / (Δ_w·Σ' μ)` (`p_w ∝ μ_w/Δ_w`, the sums over pages not yet saturated, `B'`
/// what they have left); pages with `p̂_w ≥ 1` are set to 1, their `Δ_w` taken from the
/// bandwidth, and the rest recomputed until none saturates. Each round lowers `λ = Σ'μ/B'`, so
/// a saturated page stays saturated and the rounds end at the optimum. A bandwidth of at least
/// `Σ Δ_w` saturates every page; a bandwidth of 0 gives 0 everywhere. Pages with `Δ_w = 0`
/// never change and are given 1 at no cost; pages with `μ_w = 0` get 0.
pub fn crawl_probabilities(importances: &[f64], change_rates: &[f64], bandwidth: f64) -> Vec<f64> {
    assert_eq!(
        importances.len(),
        change_rates.len(),
        "one importance per change rate"
    );
    let n = importances.len();
    let mut probs = vec![0.0; n];
    if bandwidth <= 0.0 {
        return probs;
    }
    let mut open: Vec<usize> = Vec::with_capacity(n);
    for w in 0..n {
        if change_rates[w] <= 0.0 {
            probs[w] = 1.0;
        } else if importances[w] > 0.0 {
            open.push(w);
        }
    }
    let mut left = bandwidth;
    loop {
        let weight: f64 = open.iter().map(|&w| importances[w]).sum();
        if open.is_empty() || left <= 0.0 {
            break;
        }
        let estimate = |w: usize| left * importances[w] / (change_rates[w] * weight);
        let (full, rest): (Vec<usize>, Vec<usize>) =
            open.iter().partition(|&&w| estimate(w) >= 1.0);
        if full.is_empty() {
            for &w in &rest {
                probs[w] = estimate(w);
            }
            break;
        }
        for &w in &full {
            probs[w] = 1.0;
            left -= change_rates[w];
        }
        open = rest;
    }
    probs
}

/// A plan for a mix of pages: Algorithm 1's rates of the incomplete-observation pages,
/// Algorithm 2's probabilities of the complete-observation ones, and the split of the
/// bandwidth between the two.
#[derive(Debug, Clone, PartialEq)]
pub struct MixedPlan {
    /// Crawl rate of each incomplete-observation page (0 for the complete ones).
    pub(crate) rates: Vec<f64>,
    /// Crawl probability after a reported change of each complete-observation page (0 for the
    /// incomplete ones).
    pub(crate) probabilities: Vec<f64>,
    /// The bandwidth the complete-observation pages are given, `B_c = Σ p_w·Δ_w`.
    pub(crate) complete_bandwidth: f64,
}

/// The split of `bandwidth` between the pages with complete observations (`complete[w]`) and
/// the others, and each part's plan.
///
/// Kolobov et al. (NeurIPS 2019), Algorithm 3 (the authors' `LambdaCrawl`): choose the
/// complete pages' share `B_c ∈ [0, min(B, Σ_c Δ_w)]` maximising the total value
/// `J̄*(B_c)` = Algorithm 2's value at `B_c` + Algorithm 1's at `B − B_c`, then plan each part
/// with its share. Both parts are concave in their bandwidth and each one's derivative is its
/// Lagrange multiplier, so the optimum is where the multipliers agree: one `λ` with
/// `Σ_incomplete ρ_w(λ) + Σ_complete min(Δ_w, μ_w/λ) = B` (`crawl_rate` and Algorithm 2's
/// `p_w = min(1, μ_w/(λΔ_w))`). The authors search `B_c` with scipy's bounded Brent method to
/// 0.5 % of `B`; here `λ` is found by bisection on `log λ` to a relative width of 1e-14, and
/// `B_c` read from it. When every page is complete and the bandwidth exceeds `Σ Δ_w`, `B_c =
/// Σ Δ_w` (every reported change crawled) and the rest is left over, as in the paper.
pub fn mixed_plan(
    importances: &[f64],
    change_rates: &[f64],
    complete: &[bool],
    bandwidth: f64,
) -> MixedPlan {
    let n = importances.len();
    assert_eq!(n, change_rates.len(), "one importance per change rate");
    let is_complete = |w: usize| complete.get(w).copied().unwrap_or(false);
    let useful: Vec<usize> = (0..n)
        .filter(|&w| importances[w] > 0.0 && change_rates[w] > 0.0)
        .collect();
    let spend = |lambda: f64| -> f64 {
        useful
            .iter()
            .map(|&w| match is_complete(w) {
                true => change_rates[w].min(importances[w] / lambda),
                false => crawl_rate(importances[w], change_rates[w], lambda),
            })
            .sum()
    };
    let saturated: f64 = if useful.iter().all(|&w| is_complete(w)) {
        useful.iter().map(|&w| change_rates[w]).sum()
    } else {
        f64::INFINITY
    };
    let complete_bandwidth = if useful.is_empty() || bandwidth <= 0.0 {
        0.0
    } else if bandwidth >= saturated {
        saturated
    } else {
        // The spend falls in λ and is below B at λ = Σμ/B (each term is below μ_w/λ); the
        // bracket's lower end is divided until the spend exceeds B.
        let hi = useful.iter().map(|&w| importances[w]).sum::<f64>() / bandwidth;
        let mut lo = hi;
        while spend(lo) <= bandwidth {
            lo /= 4.0;
        }
        let lambda = bisect_log(lo, hi, 400, 1e-14, |lambda| spend(lambda) > bandwidth);
        useful
            .iter()
            .filter(|&&w| is_complete(w))
            .map(|&w| change_rates[w].min(importances[w] / lambda))
            .sum::<f64>()
            .min(bandwidth)
    };
    let part = |want: bool| -> (Vec<usize>, Vec<f64>, Vec<f64>) {
        let pages: Vec<usize> = (0..n).filter(|&w| is_complete(w) == want).collect();
        let mu = pages.iter().map(|&w| importances[w]).collect();
        let delta = pages.iter().map(|&w| change_rates[w]).collect();
        (pages, mu, delta)
    };
    let mut plan = MixedPlan {
        rates: vec![0.0; n],
        probabilities: vec![0.0; n],
        complete_bandwidth,
    };
    let (pages, mu, delta) = part(false);
    let rates = super::crawl_rates(&mu, &delta, bandwidth - complete_bandwidth);
    for (&w, r) in pages.iter().zip(rates) {
        plan.rates[w] = r;
    }
    let (pages, mu, delta) = part(true);
    for (&w, p) in pages
        .iter()
        .zip(crawl_probabilities(&mu, &delta, complete_bandwidth))
    {
        plan.probabilities[w] = p;
    }
    plan
}

/// The smoothing of [`complete_change_rate`]: the authors' 0.5 pseudo-changes
/// (`smoothing_count_term`) over a pseudo-interval the caller gives.
pub const COMPLETE_SMOOTHING_CHANGES: f64 = 0.5;

/// The learned change rate of a page whose every change is observed: the changes observed in
/// the last `suffix` units before `now`, plus [`COMPLETE_SMOOTHING_CHANGES`] pseudo-changes,
/// over the time they span plus a pseudo-interval `smoothing_interval`.
///
/// Kolobov et al. (NeurIPS 2019), Eq. 11, as the authors' `LearnChRates_ComplObs` computes it:
/// `Δ = (n + 0.5) / (T + s)`, the maximum-likelihood Poisson rate `n/T` smoothed. `changes`
/// are the observed change times (units since observation began, increasing); those after
/// `now` are ignored. `T` is `now` minus the start of observation (time 0), cut to `suffix`:
/// walking back from the latest change, each change counts with the interval before it (the
/// first with the interval from time 0) until `suffix` is reached. With no change observed it
/// is `0.5 / (s + min(now, suffix))`, and with none in the last `suffix` units
/// `0.5 / (s + suffix)`. `suffix = ∞` (what the authors' experiments use) reads the whole
/// history: `(n + 0.5)/(now + s)`.
pub fn complete_change_rate(
    changes: &[f64],
    now: f64,
    suffix: f64,
    smoothing_interval: f64,
) -> f64 {
    let seen = &changes[..changes.partition_point(|&t| t <= now)];
    let Some(&last) = seen.last() else {
        return COMPLETE_SMOOTHING_CHANGES / (smoothing_interval + now.min(suffix));
    };
    if now - last > suffix {
        return COMPLETE_SMOOTHING_CHANGES / (smoothing_interval + suffix);
    }
    let mut time = now - last;
    let mut counted = 0usize;
    for i in (0..seen.len()).rev() {
        if time >= suffix {
            break;
        }
        let before = if i > 0 {
            seen[i] - seen[i - 1]
        } else {
            seen[i]
        };
        counted += 1;
        time = (time + before).min(suffix);
    }
    (counted as f64 + COMPLETE_SMOOTHING_CHANGES) / (time + smoothing_interval)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::lambdacrawl::crawl_rates;

    #[test]
    fn probabilities_follow_importance_over_rate_and_spend_the_bandwidth() {
        let mu = [0.5, 1.0, 2.0, 0.1, 3.0];
        let delta = [0.2, 1.0, 0.05, 3.0, 0.7];
        for b in [0.01, 0.3, 1.0, 2.0] {
            let p = crawl_probabilities(&mu, &delta, b);
            let spent: f64 = p.iter().zip(delta).map(|(p, d)| p * d).sum();
            assert!((spent - b).abs() < 1e-12, "B = {b}: {spent}");
            assert!(p.iter().all(|&x| x > 0.0 && x <= 1.0), "{p:?}");
            // Unsaturated pages: p ∝ μ/Δ.
            let ratio: Vec<f64> = (0..5)
                .filter(|&w| p[w] < 1.0)
                .map(|w| p[w] * delta[w] / mu[w])
                .collect();
            assert!(ratio.iter().all(|r| (r / ratio[0] - 1.0).abs() < 1e-12));
        }
        // Enough bandwidth for every change: all 1.
        let total: f64 = delta.iter().sum();
        assert_eq!(crawl_probabilities(&mu, &delta, total + 1.0), vec![1.0; 5]);
        assert_eq!(crawl_probabilities(&mu, &delta, 0.0), vec![0.0; 5]);
    }

    #[test]
    fn the_mixed_split_equalises_the_multipliers() {
        let mu = [0.5, 1.0, 2.0, 0.1, 3.0, 1.0, 0.25];
        let delta = [0.2, 1.0, 0.05, 3.0, 0.7, 0.01, 5.0];
        let complete = [true, false, true, false, true, false, false];
        for b in [0.4, 2.5, 12.0] {
            let plan = mixed_plan(&mu, &delta, &complete, b);
            let spent: f64 = plan.rates.iter().sum::<f64>() + plan.complete_bandwidth;
            assert!((spent - b).abs() < 1e-9 * b, "B = {b}: {spent}");
            // Each part is its algorithm at its share.
            let inc: Vec<usize> = (0..7).filter(|&w| !complete[w]).collect();
            let sub = |v: &[f64], ws: &[usize]| ws.iter().map(|&w| v[w]).collect::<Vec<_>>();
            let rates = crawl_rates(
                &sub(&mu, &inc),
                &sub(&delta, &inc),
                b - plan.complete_bandwidth,
            );
            assert_eq!(sub(&plan.rates, &inc), rates);
            // The unsaturated complete pages' multiplier μ/(pΔ) is the incomplete pages' one.
            let lambda = super::super::harmonic_marginal_value(mu[1], delta[1], plan.rates[1]);
            for w in (0..7).filter(|&w| complete[w] && plan.probabilities[w] < 1.0 - 1e-9) {
                let m = mu[w] / (plan.probabilities[w] * delta[w]);
                assert!((m / lambda - 1.0).abs() < 1e-9, "{m} vs {lambda}");
            }
        }
        // Nothing complete: Algorithm 1 alone.
        let plan = mixed_plan(&mu, &delta, &[false; 7], 2.5);
        assert_eq!(plan.rates, crawl_rates(&mu, &delta, 2.5));
        assert_eq!(plan.complete_bandwidth, 0.0);
        // Everything complete, more bandwidth than changes: every change crawled.
        let plan = mixed_plan(&mu, &delta, &[true; 7], 20.0);
        assert_eq!(plan.probabilities, vec![1.0; 7]);
    }

    #[test]
    fn equation_11_counts_changes_over_the_observed_time() {
        assert!((complete_change_rate(&[], 10.0, f64::INFINITY, 2.0) - 0.5 / 12.0).abs() < 1e-15);
        let changes = [1.0, 4.0, 5.0, 9.0];
        let r = complete_change_rate(&changes, 10.0, f64::INFINITY, 2.0);
        assert!((r - 4.5 / 12.0).abs() < 1e-15);
        // Changes after `now` are not seen yet.
        let r = complete_change_rate(&changes, 6.0, f64::INFINITY, 2.0);
        assert!((r - 3.5 / 8.0).abs() < 1e-15);
    }

    /// The authors' code, run on the inputs below, gave the literals asserted here.
    ///
    /// Peer: `LambdaCrawl_ComplObs`, `LambdaCrawl_IncomplObs`, `SplitEval_JStar` and
    /// `LearnChRates_ComplObs` of `LambdaCrawlExps.py`, microsoft/Optimal-Freshness-Crawl-
    /// Scheduling, unmodified, imported by a small Python driver kept outside this repository
    /// (numpy, scipy). Algorithm 2: `LambdaCrawl_ComplObs(importances, ch_rates, B)` at the
    /// bandwidths below (exact, no tolerance). The mixed case: their `LambdaCrawl` is
    /// `minimize_scalar(SplitEval_JStar, bounds=(0, min(B, Σ Δ_complete)), method='bounded')`
    /// with `xatol = 0.005·B`; the driver runs the same call with `xatol = 1e-10·B` and
    /// `epsilon_incompl_obs = 1e-12` (both ≤ 1e-9) and prints the resulting split and plans.
    /// Eq. 11: `LearnChRates_ComplObs(times, suffix_length, curr_time)` (smoothing 0.5 and
    /// 0.5, the interval passed to ours as 0.5).
    #[test]
    fn complete_and_mixed_plans_and_equation_11_match_the_authors_code() {
        let mu = [0.5, 1.0, 2.0, 0.1, 3.0, 1.0, 0.25];
        let delta = [0.2, 1.0, 0.05, 3.0, 0.7, 0.01, 5.0];
        let mut worst: f64 = 0.0;
        let mut check = |ours: &[f64], theirs: &[f64]| {
            assert_eq!(ours.len(), theirs.len());
            for (a, b) in ours.iter().zip(theirs) {
                worst = worst.max((a - b).abs());
            }
        };
        for (b, theirs) in ALGORITHM_2 {
            check(&crawl_probabilities(&mu, &delta, b), &theirs);
        }
        let complete = [true, false, true, false, true, false, false];
        for (b, split, rates, probs) in MIXED {
            let plan = mixed_plan(&mu, &delta, &complete, b);
            check(&[plan.complete_bandwidth], &[split]);
            let inc: Vec<f64> = (0..7)
                .filter(|&w| !complete[w])
                .map(|w| plan.rates[w])
                .collect();
            let com: Vec<f64> = (0..7)
                .filter(|&w| complete[w])
                .map(|w| plan.probabilities[w])
                .collect();
            check(&inc, &rates);
            check(&com, &probs);
        }
        for (times, suffix, now, theirs) in EQUATION_11 {
            check(&[complete_change_rate(times, now, suffix, 0.5)], &[theirs]);
        }
        eprintln!("largest difference from the authors' code: {worst:e}");
        assert!(
            worst < 1e-6,
            "largest difference from the authors' code: {worst:e}"
        );
    }

    /// `LambdaCrawl_ComplObs` on the seven pages of the peer test: (B, p_w).
    const ALGORITHM_2: [(f64, [f64; 7]); 6] = [
        (
            0.01,
            [
                0.003184713376,
                0.001273885350,
                0.050955414013,
                0.000042462845,
                0.005459508644,
                0.127388535032,
                0.000063694268,
            ],
        ),
        (
            0.3,
            [
                0.123711340206,
                0.049484536082,
                1.0,
                0.001649484536,
                0.212076583211,
                1.0,
                0.002474226804,
            ],
        ),
        (
            1.0,
            [
                0.484536082474,
                0.193814432990,
                1.0,
                0.006460481100,
                0.830633284242,
                1.0,
                0.009690721649,
            ],
        ),
        (
            2.0,
            [
                1.0,
                0.770370370370,
                1.0,
                0.025679012346,
                1.0,
                1.0,
                0.038518518519,
            ],
        ),
        (
            5.0,
            [1.0, 1.0, 1.0, 0.289523809524, 1.0, 1.0, 0.434285714286],
        ),
        (9.0, [1.0, 1.0, 1.0, 0.680000000000, 1.0, 1.0, 1.0]),
    ];
    /// Their mixed split on the seven pages, pages 0, 2, 4 complete, at `xatol = 1e-10·B`:
    /// (B, B_c, ρ of pages 1, 3, 5, 6, p of pages 0, 2, 4). At 2.5 and 12 the optimum is the
    /// bound `B_c = Σ_c Δ = 0.95` (every reported change crawled), which their bounded search
    /// approaches to within 1.5e-8·B.
    const MIXED: [(f64, f64, [f64; 4], [f64; 3]); 3] = [
        (
            0.4,
            0.289995341101,
            [
                0.064420131381,
                0.006841406855,
                0.021658973106,
                0.017084147557,
            ],
            [0.171425243644, 1.0, 0.293871846246],
        ),
        (
            2.5,
            0.949999985718,
            [
                0.882547742301,
                0.157839400522,
                0.123993730845,
                0.385619140614,
            ],
            [0.999999928592, 1.0, 1.0],
        ),
        (
            12.0,
            0.949999971544,
            [
                4.824488276086,
                1.768034978493,
                0.525119565779,
                3.932357208110,
            ],
            [0.999999857722, 1.0, 1.0],
        ),
    ];
    /// `LearnChRates_ComplObs`: (change times, suffix_length, curr_time, rate).
    const EQUATION_11: [(&[f64], f64, f64, f64); 8] = [
        (&[], f64::INFINITY, 10.0, 0.047619047619),
        (&[1.0, 4.0, 5.0, 9.0], f64::INFINITY, 10.0, 0.428571428571),
        (&[1.0, 4.0, 5.0, 9.0], f64::INFINITY, 6.0, 0.538461538462),
        (&[1.0, 4.0, 5.0, 9.0], 3.0, 10.0, 0.428571428571),
        (&[1.0, 4.0, 5.0, 9.0], 7.5, 10.0, 0.437500000000),
        (&[2.0, 3.0], 4.0, 10.0, 0.111111111111),
        (&[], 4.0, 10.0, 0.111111111111),
        (
            &[3.0, 6.0, 7.0, 8.0, 12.0, 20.0, 21.0],
            f64::INFINITY,
            25.0,
            0.294117647059,
        ),
    ];
}
