//! How a stale copy's cost grows with the changes it misses, learned from the gains the
//! planner's own refreshes measured.
//!
//! EBR's objective (freshness) counts a copy as stale or not: a second change before the
//! refresh costs users nothing more than the first. On real pages each change edits a part of
//! the page, so a copy that missed several changes usually differs more than one that missed
//! one. The planner models the cost of a copy that missed `k` changes as
//!
//! `L_ρ(k) = 1 + ρ + … + ρ^{k−1} = (1 − ρ^k)/(1 − ρ)` (in units of the first change's cost),
//!
//! each further change costing `ρ` times the one before: `ρ = 0` is EBR's freshness,
//! `ρ → 1` counts changes as age does. Under Poisson changes at rate `λ`,
//! `E[L_ρ(K(t))] = (1 − e^{−λ(1−ρ)t})/(1 − ρ)`: the freshness objective of a page changing at
//! `λ(1 − ρ)` with its weight divided by `1 − ρ`. So the planner plans with EBR's optimum on
//! those ([`CarryoverFit::rate`], [`CarryoverFit::weight`]), and `ρ` only changes which rates it
//! is handed.
//!
//! `ρ` is learned from the run's own measurements: a refresh that found a change after `t`
//! units measured a gain `g` whose expectation is `c_p·E[L_ρ(K) | K ≥ 1]`
//! ([`cost_given_change`]), which grows with `t` when `ρ > 0` and not when `ρ = 0`. Each
//! `ρ` of a fixed, site-independent grid ([`CARRYOVERS`]) and each prior strength
//! ([`super::shrinkage::STRENGTHS`]) is scored by leave-one-out prediction of every measured gain
//! from its page's others ([`CarryoverFit::learn`]); the least error wins, ties to the smaller
//! `ρ` (EBR's objective) and the stronger prior. Before any gain is measured, `ρ = 0` and the
//! planner plans exactly as EBR does.

use super::shrinkage::{posterior_gain, STRENGTHS};
use crate::policy::planned::GainRecord;

/// The carry-overs `ρ` cross-validation chooses from: `1 − 2^{−k}` for `k = 0 … 5` (from
/// EBR's freshness to a cost that halves only after about 22 further changes). A fixed grid:
/// the measurements, not the grid, decide.
pub const CARRYOVERS: [f64; 6] = [0.0, 0.5, 0.75, 0.875, 0.9375, 0.96875];

/// Expected cost, in units of one change's cost, of a copy `elapsed` units old known to have
/// changed at least once, when changes come at rate `lambda` and each further change costs
/// `rho` times the one before: `E[L_ρ(K) | K ≥ 1]` with `K ~ Poisson(λ·elapsed)`,
/// `= (1 − e^{−λ(1−ρ)t}) / ((1 − ρ)(1 − e^{−λt}))`. 1 when `ρ = 0` (freshness: one change
/// costs what many do) or `λ·t = 0` (at most one change is likely); grows with `t` otherwise.
///
/// From `E[ρ^K] = e^{−λt(1−ρ)}` for Poisson `K` (the probability generating function) and
/// `P(K ≥ 1) = 1 − e^{−λt}`.
pub fn cost_given_change(rho: f64, lambda: f64, elapsed: f64) -> f64 {
    let mean = lambda * elapsed;
    if rho == 0.0 || mean <= 0.0 {
        return 1.0;
    }
    let stale = -(-mean).exp_m1();
    -(-(1.0 - rho) * mean).exp_m1() / ((1.0 - rho) * stale)
}

/// One page's measured gains (ΔQ_A of its refreshes that found a change), each with the
/// units its refresh closed: what [`CarryoverFit::learn`] reads.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GainLog {
    entries: Vec<(f64, f64)>,
}

impl GainLog {
    /// A page with no gain measured.
    pub const EMPTY: GainLog = GainLog {
        entries: Vec::new(),
    };

    /// Adds the gain `gain` of a refresh `elapsed` units after the page's previous one.
    pub fn add(&mut self, elapsed: f64, gain: f64) {
        self.entries.push((elapsed, gain));
    }

    /// Each gain divided by [`cost_given_change`] at its interval (an estimate of the first
    /// change's cost `c_p` under `ρ`), with that cost.
    fn costed(&self, rho: f64, lambda: f64) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.entries.iter().map(move |&(elapsed, gain)| {
            let cost = cost_given_change(rho, lambda, elapsed);
            (gain / cost, cost)
        })
    }

    /// The sums of the normalised gains (what a page's weight reads: no per-gain list).
    fn normalised_sums(&self, rho: f64, lambda: f64) -> GainRecord {
        let mut record = GainRecord::default();
        self.costed(rho, lambda).for_each(|(u, _)| record.add(u));
        record
    }

    /// The normalised gains with their costs, and their sums (what the fit's leave-one-out
    /// check reads).
    fn normalised(&self, rho: f64, lambda: f64) -> Normalised {
        let gains: Vec<(f64, f64)> = self.costed(rho, lambda).collect();
        let mut record = GainRecord::default();
        gains.iter().for_each(|&(u, _)| record.add(u));
        Normalised { record, gains }
    }
}

/// One page's gains under one `ρ`: `(u_i, cost_i)` and the sums of the `u_i`.
struct Normalised {
    record: GainRecord,
    gains: Vec<(f64, f64)>,
}

impl Normalised {
    /// Leave-one-out squared error of the page's gains `g_i = cost_i·u_i` predicted from the
    /// others: `Σ_i cost_i²·(u_i − ĉ_{−i})²`, `ĉ_{−i}` the [`posterior_gain`] of the others
    /// around `prior` (`(U − u_i + s·prior)/(n − 1 + s)`; the prior alone for `s = ∞`). 0 for
    /// fewer than two gains (nothing but the prior to predict from, alike for every choice).
    fn loo_error(&self, prior: f64, strength: f64) -> f64 {
        let n = self.gains.len();
        if n < 2 {
            return 0.0;
        }
        let total = self.record.sum;
        self.gains
            .iter()
            .map(|&(u, cost)| {
                let predicted = if strength.is_infinite() {
                    prior
                } else {
                    (total - u + strength * prior) / ((n - 1) as f64 + strength)
                };
                (cost * (u - predicted)).powi(2)
            })
            .sum()
    }
}

/// A page as the fit reads it: its gain log, its planned change rate `λ_p` and EBR's weight.
pub struct FitPage<'a> {
    pub(crate) log: &'a GainLog,
    pub(crate) lambda: f64,
    pub(crate) ebr_weight: f64,
}

/// The site-wide fit: the carry-over `ρ`, the gain per unit of EBR weight `κ` (of the first
/// change's cost) and the prior's strength `s`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CarryoverFit {
    pub(crate) rho: f64,
    pub(crate) gain_per_weight: f64,
    pub(crate) strength: f64,
}

impl Default for CarryoverFit {
    /// EBR's objective and weights as they are.
    fn default() -> Self {
        CarryoverFit {
            rho: 0.0,
            gain_per_weight: 1.0,
            strength: f64::INFINITY,
        }
    }
}

impl CarryoverFit {
    /// Learns `(ρ, κ, s)` (see the module docs): for each `ρ` of [`CARRYOVERS`], `κ_ρ = Σ u / Σ
    /// n·x` over the normalised gains `u = g / E[L_ρ | K ≥ 1]`, and the error
    /// `Σ_i (g_i − ĝ_{−i})² / m_p²` of each gain predicted from its page's others,
    /// `ĝ_{−i} = E[L_ρ | K ≥ 1]_i · (Σ_{j≠i} u_j + s·κ_ρ x_p)/(n − 1 + s)`, relative to the
    /// page's prior at `ρ = 0` (`m_p = κ_0·x_p`, the same scale for every `ρ`). EBR's objective
    /// and weights ([`CarryoverFit::default`]) while nothing measured gained anything.
    pub fn learn(pages: &[FitPage<'_>]) -> CarryoverFit {
        let mut best = (f64::INFINITY, CarryoverFit::default());
        let mut scale = None;
        for &rho in &CARRYOVERS {
            let normalised: Vec<(Normalised, f64)> = pages
                .iter()
                .filter(|page| !page.log.entries.is_empty())
                .map(|page| (page.log.normalised(rho, page.lambda), page.ebr_weight))
                .collect();
            let (gained, exposure) = normalised.iter().fold((0.0, 0.0), |(g, e), (n, x)| {
                (g + n.record.sum, e + n.record.count as f64 * x)
            });
            if !(gained > 0.0 && exposure > 0.0) {
                return best.1;
            }
            let kappa = gained / exposure;
            let kappa_0 = *scale.get_or_insert(kappa);
            for &strength in STRENGTHS.iter().rev() {
                let error: f64 = normalised
                    .iter()
                    .filter(|&&(_, x)| x > 0.0)
                    .map(|(page, x)| page.loo_error(kappa * x, strength) / (kappa_0 * x).powi(2))
                    .sum();
                if error < best.0 {
                    best = (
                        error,
                        CarryoverFit {
                            rho,
                            gain_per_weight: kappa,
                            strength,
                        },
                    );
                }
            }
        }
        best.1
    }

    /// The rate the freshness optimum is handed for a page changing at `lambda`: `λ(1 − ρ)`.
    pub fn rate(&self, lambda: f64) -> f64 {
        lambda * (1.0 - self.rho)
    }

    /// A page's weight for the freshness optimum: the posterior first-change cost of its
    /// normalised gains around `κ·x` ([`posterior_gain`]), divided by `1 − ρ`.
    pub fn weight(&self, log: &GainLog, lambda: f64, ebr_weight: f64) -> f64 {
        posterior_gain(
            &log.normalised_sums(self.rho, lambda),
            self.gain_per_weight * ebr_weight,
            self.strength,
        ) / (1.0 - self.rho)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `E[L_ρ(K) | K ≥ 1]` by summing the Poisson distribution.
    fn by_sum(rho: f64, mean: f64) -> f64 {
        let (mut p, mut total, mut cost) = ((-mean).exp(), 0.0, 0.0);
        for k in 1..400 {
            p *= mean / k as f64;
            cost += rho.powi(k - 1);
            total += p * cost;
        }
        total / (1.0 - (-mean).exp())
    }

    #[test]
    fn the_cost_given_a_change_is_the_poisson_expectation() {
        for rho in CARRYOVERS {
            for mean in [1e-9, 0.01, 0.3, 1.0, 4.0, 20.0] {
                let closed = cost_given_change(rho, mean, 1.0);
                let sum = by_sum(rho, mean);
                assert!(
                    (closed - sum).abs() < 1e-7 * sum,
                    "ρ {rho} λt {mean}: {closed} vs {sum}"
                );
            }
        }
        // Freshness: one change costs what many do.
        assert_eq!(cost_given_change(0.0, 3.0, 5.0), 1.0);
        // Otherwise the cost grows with the wait.
        assert!(cost_given_change(0.75, 0.5, 4.0) > cost_given_change(0.75, 0.5, 1.0));
    }

    /// Pages of EBR weight 1 whose gains follow `c·E[L_ρ | K ≥ 1]` at the given intervals.
    fn logs(rho: f64, lambda: f64, intervals: &[f64]) -> Vec<GainLog> {
        (0..20)
            .map(|p| {
                let c = 1.0 + (p % 3) as f64;
                let mut log = GainLog::default();
                for &t in intervals {
                    log.add(t, c * cost_given_change(rho, lambda, t));
                }
                log
            })
            .collect()
    }

    fn learn(logs: &[GainLog], lambda: f64) -> CarryoverFit {
        let pages: Vec<FitPage<'_>> = logs
            .iter()
            .map(|log| FitPage {
                log,
                lambda,
                ebr_weight: 1.0,
            })
            .collect();
        CarryoverFit::learn(&pages)
    }

    #[test]
    fn the_fit_finds_the_carryover_the_gains_follow() {
        let intervals = [1.0, 2.0, 4.0, 8.0, 1.0, 3.0];
        for rho in CARRYOVERS {
            let fit = learn(&logs(rho, 0.5, &intervals), 0.5);
            assert_eq!(fit.rho, rho);
            assert!(fit.strength < 1.0, "steady gains are trusted: {fit:?}");
        }
        // Gains that do not grow with the wait: EBR's objective.
        let flat = learn(&logs(0.0, 2.0, &intervals), 2.0);
        assert_eq!(flat.rho, 0.0);
    }

    #[test]
    fn with_nothing_gained_it_is_ebrs_objective_and_weights() {
        let none = vec![GainLog::default(); 3];
        assert_eq!(learn(&none, 1.0), CarryoverFit::default());
        let mut zero = GainLog::default();
        zero.add(3.0, 0.0);
        zero.add(1.0, 0.0);
        assert_eq!(learn(&[zero], 1.0), CarryoverFit::default());
        let fit = CarryoverFit::default();
        assert_eq!(fit.rate(0.7), 0.7);
        assert_eq!(fit.weight(&GainLog::EMPTY, 0.7, 2.5), 2.5);
    }

    #[test]
    fn a_carryover_plans_freshness_at_a_slower_rate_with_the_first_changes_cost() {
        let fit = CarryoverFit {
            rho: 0.75,
            gain_per_weight: 2.0,
            strength: f64::INFINITY,
        };
        assert_eq!(fit.rate(2.0), 0.5);
        // The prior alone: κ·x, over 1 − ρ.
        assert_eq!(fit.weight(&GainLog::EMPTY, 2.0, 3.0), 24.0);
    }
}
