//! User-centric refresh planned as SBR and EBR plan (`user-centric` with `estimator=planned`):
//! the Lagrangian optimum of expected freshness under the budget
//! ([`crate::policy::freshness::optimal_frequencies`]) turned into a schedule ([`crate::policy::planned`]),
//! with each page's **expected ΔQ_A per change** as its weight.
//!
//! Paper 003's argument is that user-centric refresh differs from EBR in what it weights, not in
//! how it spends: EBR weighs a page by how often users are shown it times the chance a change
//! embarrasses (`c_p = w_p·d_p`); user-centric by what a change costs users, which the index
//! hook measures as ΔQ_A each time a refresh finds one. So this planner is EBR's planner (its
//! change rates, `online_rate`; its replanning on the repository's current view weights) with
//! the weight
//!
//! `c_p = (Σ_i g_i + s·κ·w_p·d_p) / (n_p + s)`,
//!
//! the posterior mean of the gain per change under a prior centred on EBR's weight
//! ([`posterior_gain`]): `g_1 … g_{n_p}` the ΔQ_A measured by the page's refreshes that found a
//! change, `κ` the site's gain per unit of EBR weight (a ratio estimator over every measured
//! change, [`GainFit::learn`]), and `s` the prior's strength in pseudo-changes, chosen by
//! leave-one-out cross-validation of each measured gain against the rest of its page's
//! ([`loo_squared_error`], relative to the prior: the plan reads ratios of weights) over a
//! fixed grid of strengths, [`STRENGTHS`], ending with ∞ (the prior alone). No constant is
//! chosen on a site: `κ` and `s` are learned from the run's own measurements.
//!
//! With `carryover=learned` ([`super::carryover`]) a further missed change costs `ρ` times the one
//! before, `ρ` learned with `s`; the plan is then EBR's optimum at rates `λ(1 − ρ)`.
//!
//! docs/results.md, § The user-centric planner, has the measurements behind these choices (a
//! fixed strength and a fitted intercept did worse).
//!
//! Guarantees: before any gain is measured (or when no measured change gained anything), the
//! weights are EBR's (`κ = 1`, `s = ∞`), so the planner plans exactly as EBR at θ = 0 does, bit
//! for bit (tested). As measurements arrive, a page's weight moves from EBR's towards what its
//! changes gained, as far as the site's own measurements say its gains are predictable.
//!
//! Oracle mode: the history's change rates and the gains measured right after each change
//! (paper 003 §6), under the same shrinkage (fitted on the history), weighed by the views of
//! now at every replan (as oracle EBR).

use crate::change::oracle_rate;
use crate::corpus::PageId;
use crate::policy::ebr::{irrelevance_probability, online_irrelevance_probability};
use crate::policy::planned::{online_rate, GainRecord, Observations, PageModel, Planner};
use crate::policy::{ChangeHistory, PolicyContext, RefreshOutcome};

use super::carryover::{CarryoverFit, FitPage, GainLog};

pub use super::shrinkage::{loo_squared_error, posterior_gain, STRENGTHS};

/// The site-wide fit of the gain prior `m_p = κ·x_p` (`x_p` EBR's weight of the page) and the
/// prior's strength `s` (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GainFit {
    /// `κ`: the gain per unit of EBR weight.
    pub(crate) gain_per_weight: f64,
    /// `s`, in pseudo-changes (∞: the prior alone).
    pub(crate) strength: f64,
}

impl Default for GainFit {
    /// EBR's weights as they are.
    fn default() -> Self {
        GainFit {
            gain_per_weight: 1.0,
            strength: f64::INFINITY,
        }
    }
}

impl GainFit {
    /// Learns the prior and its strength from pages given as (measured gains, EBR weight):
    /// `κ = Σ G / Σ n·x` over every measured change (a ratio estimator: the gain per unit of
    /// EBR weight); `s` the [`STRENGTHS`] value of least summed leave-one-out error
    /// relative to the prior (`Σ_i (g_i − ĝ_{−i})² / m_p²`: the plan depends on the ratios of
    /// the weights, so each page counts alike whatever its scale), ties to the stronger prior.
    /// EBR's weights as they are ([`GainFit::default`]) while nothing measured gained
    /// anything.
    pub fn learn<'a>(pages: impl Iterator<Item = (&'a GainRecord, f64)> + Clone) -> GainFit {
        let measured: Vec<(&GainRecord, f64)> =
            pages.filter(|(record, _)| record.count > 0).collect();
        let (gained, exposure) = measured.iter().fold((0.0, 0.0), |(g, e), (record, x)| {
            (g + record.sum, e + record.count as f64 * x)
        });
        if !(gained > 0.0 && exposure > 0.0) {
            return GainFit::default();
        }
        let mut fit = GainFit {
            gain_per_weight: gained / exposure,
            strength: f64::INFINITY,
        };
        let mut best = f64::INFINITY;
        for &strength in STRENGTHS.iter().rev() {
            let error: f64 = measured
                .iter()
                .filter(|&&(_, x)| x > 0.0)
                .map(|&(record, x)| {
                    let prior = fit.prior(x);
                    loo_squared_error(record, prior, strength) / (prior * prior)
                })
                .sum();
            if error < best {
                best = error;
                fit.strength = strength;
            }
        }
        fit
    }

    /// The prior mean gain of a page of EBR weight `x`: `κ·x`.
    pub(crate) fn prior(&self, x: f64) -> f64 {
        self.gain_per_weight * x
    }

    /// A page's weight: [`posterior_gain`] around its prior.
    pub fn weight(&self, gains: &GainRecord, x: f64) -> f64 {
        posterior_gain(gains, self.prior(x), self.strength)
    }
}

/// The planner's page model (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct UserCentricPlanModel {
    view_weight: Vec<f64>,
    /// Online: the fit of the last replan.
    fit: GainFit,
    /// Online with `carryover=learned`: the fit of the last replan, with the carry-over of
    /// [`super::carryover`] (`None`: EBR's freshness objective, `ρ = 0`, not learned).
    carryover: Option<CarryoverFit>,
    /// Online with `carryover=learned`: each page's measured gains with the intervals their
    /// refreshes closed.
    logs: Vec<GainLog>,
    /// Oracle mode: each page's change rate, `d_p` and gains over the history.
    oracle_pages: Vec<(f64, f64, GainRecord)>,
}

impl UserCentricPlanModel {
    fn view(&self, page: usize) -> f64 {
        self.view_weight.get(page).copied().unwrap_or(0.0).max(0.0)
    }

    /// EBR's online weight at θ = 0: `w_p·(X + 1)/(X + 2)`.
    fn online_prior(&self, page: usize, obs: &Observations) -> f64 {
        self.view(page) * online_irrelevance_probability(obs.changed, obs.changed)
    }

    /// A model that learns how a stale copy's cost grows with the changes it missed
    /// ([`super::carryover`]; `carryover=learned`).
    pub(crate) fn with_learned_carryover() -> Self {
        UserCentricPlanModel {
            carryover: Some(CarryoverFit::default()),
            ..Self::default()
        }
    }

    /// The fit in force (online: of the last replan).
    pub fn fit(&self) -> GainFit {
        self.fit
    }

    /// The carry-over fit in force, when learned.
    pub fn carryover(&self) -> Option<CarryoverFit> {
        self.carryover
    }

    /// Online, `carryover=learned`: `(ρ, κ, s)` from every page not gone.
    fn learn_carryover(
        &self,
        observations: &[Observations],
        gone: &[bool],
        prior_interval: f64,
    ) -> CarryoverFit {
        let pages: Vec<FitPage<'_>> = observations
            .iter()
            .zip(gone)
            .enumerate()
            .filter(|(p, (_, &gone))| !gone && *p < self.logs.len())
            .map(|(p, (obs, _))| FitPage {
                log: &self.logs[p],
                lambda: online_rate(obs, obs.changed, prior_interval),
                ebr_weight: self.online_prior(p, obs),
            })
            .collect();
        CarryoverFit::learn(&pages)
    }
}

impl PageModel for UserCentricPlanModel {
    fn fit_oracle(&mut self, history: &ChangeHistory) {
        self.oracle_pages = history
            .pages
            .iter()
            .map(|page| {
                let mut gains = GainRecord::default();
                if page.delta_q.len() == page.change_units.len() {
                    page.delta_q.iter().for_each(|&g| gains.add(g));
                }
                let lambda = oracle_rate(page.change_units.len(), history.units);
                (
                    lambda,
                    irrelevance_probability(&page.shingle_changes, 0.0),
                    gains,
                )
            })
            .collect();
    }

    fn oracle(&self) -> Vec<(f64, f64)> {
        let priors: Vec<f64> = (0..self.oracle_pages.len())
            .map(|p| self.view(p) * self.oracle_pages[p].1)
            .collect();
        let fit = GainFit::learn(
            self.oracle_pages
                .iter()
                .zip(&priors)
                .map(|((_, _, gains), &prior)| (gains, prior)),
        );
        self.oracle_pages
            .iter()
            .zip(&priors)
            .map(|(&(lambda, _, ref gains), &prior)| (lambda, fit.weight(gains, prior)))
            .collect()
    }

    fn fit_online(&mut self, observations: &[Observations], gone: &[bool], prior_interval: f64) {
        if self.carryover.is_some() {
            self.carryover = Some(self.learn_carryover(observations, gone, prior_interval));
            return;
        }
        let priors: Vec<f64> = observations
            .iter()
            .enumerate()
            .map(|(p, obs)| self.online_prior(p, obs))
            .collect();
        self.fit = GainFit::learn(
            observations
                .iter()
                .zip(&priors)
                .zip(gone)
                .filter(|(_, &gone)| !gone)
                .map(|((obs, &prior), _)| (&obs.gains, prior)),
        );
    }

    fn online(&self, page: PageId, obs: &Observations, prior_interval: f64) -> (f64, f64) {
        let lambda = online_rate(obs, obs.changed, prior_interval);
        let prior = self.online_prior(page as usize, obs);
        match &self.carryover {
            None => (lambda, self.fit.weight(&obs.gains, prior)),
            Some(fit) => {
                static EMPTY: GainLog = GainLog::EMPTY;
                let log = self.logs.get(page as usize).unwrap_or(&EMPTY);
                (fit.rate(lambda), fit.weight(log, lambda, prior))
            }
        }
    }

    fn record(&mut self, outcome: &RefreshOutcome) {
        if self.carryover.is_some() && outcome.changed && !outcome.gone {
            let page = outcome.page as usize;
            if self.logs.len() <= page {
                self.logs.resize(page + 1, GainLog::default());
            }
            let elapsed = outcome.unit.saturating_sub(outcome.last_refresh).max(1) as f64;
            self.logs[page].add(elapsed, outcome.delta_q);
        }
    }

    /// With `carryover=learned`: the `ρ` of the last replan.
    fn settings(&self, settings: &mut serde_json::Map<String, serde_json::Value>) {
        if let Some(fit) = self.carryover {
            settings.insert("carryover".into(), fit.rho.into());
        }
    }

    fn reads_delta_q(&self) -> bool {
        true
    }

    /// Every change counts (EBR's default θ): the prior is EBR's weight at θ = 0.
    fn theta(&self) -> f64 {
        0.0
    }

    fn name(&self) -> &'static str {
        "user-centric"
    }

    fn prepare(&mut self, context: &PolicyContext<'_>) {
        self.view_weight = context.view_weight.to_vec();
        self.fit = GainFit::default();
        if self.carryover.is_some() {
            self.carryover = Some(CarryoverFit::default());
        }
        self.logs.clear();
    }

    fn uses_views(&self) -> bool {
        true
    }

    fn observe_views(&mut self, view_weight: &[f64]) {
        self.view_weight = view_weight.to_vec();
    }
}

/// The user-centric planner (see the module docs).
pub type UserCentricPlanner = Planner<UserCentricPlanModel>;

#[cfg(test)]
mod tests {
    use super::super::Estimator;
    use super::*;
    use crate::policy::ebr::Ebr;
    use crate::policy::testkit::gain_record as record;
    use crate::policy::testkit::{context, history, run, two_speed_site};
    use crate::policy::user_centric::carryover::CarryoverFit;
    use crate::policy::FitMode;

    #[test]
    fn the_strength_follows_how_well_a_pages_past_gains_predict_its_next() {
        // Nothing gained: EBR's weights as they are.
        let none = [record(&[0.0, 0.0]), record(&[])];
        let fit = GainFit::learn(none.iter().zip([1.0, 2.0]));
        assert_eq!(fit, GainFit::default());
        // Every page's gains are steady but unrelated to its EBR weight: trust them.
        let steady = [record(&[5.0, 5.0, 5.0]), record(&[0.1, 0.1, 0.1])];
        let fit = GainFit::learn(steady.iter().zip([1.0, 10.0]));
        assert_eq!(fit.strength, STRENGTHS[0]);
        assert!(fit.weight(&steady[0], 1.0) > fit.weight(&steady[1], 10.0));
        // Gains that scatter around what the weights predict: the prior alone.
        let noisy = [
            record(&[0.0, 2.0, 0.0, 2.0]),
            record(&[0.0, 20.0, 0.0, 20.0]),
        ];
        let fit = GainFit::learn(noisy.iter().zip([1.0, 10.0]));
        assert_eq!(fit.strength, f64::INFINITY);
        assert!((fit.gain_per_weight - 1.0).abs() < 1e-12);
    }

    #[test]
    fn with_no_gain_measured_it_plans_exactly_as_ebr() {
        let (changes, views) = two_speed_site();
        let pages: Vec<PageId> = (0..12).collect();
        // Changes that gain nothing: nothing learned, EBR's weights throughout.
        let h = history(25, &changes, &[1.0; 12], &[0.0; 12]);
        for budget in [1, 3, 6] {
            let ctx = context(FitMode::Online, &pages, &views, None, 24, budget);
            let planned = run(&mut Planner::new(UserCentricPlanModel::default()), &ctx, &h);
            assert_eq!(
                planned,
                run(&mut Ebr::at_threshold(0.0), &ctx, &h),
                "B = {budget}"
            );
        }
    }

    #[test]
    fn with_no_gain_measured_the_learned_carryover_plans_exactly_as_ebr() {
        let (changes, views) = two_speed_site();
        let pages: Vec<PageId> = (0..12).collect();
        let h = history(25, &changes, &[1.0; 12], &[0.0; 12]);
        for budget in [1, 3, 6] {
            let ctx = context(FitMode::Online, &pages, &views, None, 24, budget);
            let mut planner = Planner::new(UserCentricPlanModel::with_learned_carryover());
            let planned = run(&mut planner, &ctx, &h);
            assert_eq!(
                planned,
                run(&mut Ebr::at_threshold(0.0), &ctx, &h),
                "B = {budget}"
            );
            assert_eq!(planner.model.carryover(), Some(CarryoverFit::default()));
        }
    }

    #[test]
    fn gains_that_grow_with_the_wait_teach_a_carryover_and_move_the_plan() {
        // A refresh gains 1 for every change the copy missed (the test kit sums the missed
        // changes' ΔQ), so gains grow with the wait: the learned carry-over is above 0 and the
        // plan is not the freshness planner's.
        let (changes, views) = two_speed_site();
        let pages: Vec<PageId> = (0..12).collect();
        let h = history(25, &changes, &[1.0; 12], &[1.0; 12]);
        let ctx = context(FitMode::Online, &pages, &views, None, 24, 2);
        let mut learned = Planner::new(UserCentricPlanModel::with_learned_carryover());
        let with_carryover = run(&mut learned, &ctx, &h);
        let fit = learned.model.carryover().unwrap();
        assert!(fit.rho > 0.0, "{fit:?}");
        let freshness = run(&mut Planner::new(UserCentricPlanModel::default()), &ctx, &h);
        assert_ne!(with_carryover, freshness);
    }

    #[test]
    fn measured_gains_move_the_plan_off_ebrs() {
        // The most viewed pages' changes gain nothing; the others' do. EBR keeps refreshing
        // the viewed ones; the planner learns where the gains are.
        let (changes, views) = two_speed_site();
        let pages: Vec<PageId> = (0..12).collect();
        let dq: Vec<f64> = (0..12)
            .map(|p| if p % 2 == 0 { 0.0 } else { 1.0 })
            .collect();
        let h = history(25, &changes, &[1.0; 12], &dq);
        let ctx = context(FitMode::Online, &pages, &views, None, 24, 2);
        let odd_share = |choices: &[Vec<PageId>]| {
            let late: Vec<PageId> = choices[12..].iter().flatten().copied().collect();
            late.iter().filter(|&&p| p % 2 == 1).count() as f64 / late.len() as f64
        };
        let mut planner = Planner::new(UserCentricPlanModel::default());
        let planned = run(&mut planner, &ctx, &h);
        let ebr = run(&mut Ebr::at_threshold(0.0), &ctx, &h);
        assert!(
            odd_share(&planned) > odd_share(&ebr) + 0.2,
            "{} vs {}",
            odd_share(&planned),
            odd_share(&ebr)
        );
        assert!(planner.model.fit().strength.is_finite());
        // Oracle mode reads the same gains from the history.
        let oracle = context(FitMode::Oracle, &pages, &views, Some(&h), 24, 2);
        let planned = run(
            &mut Planner::new(UserCentricPlanModel::default()),
            &oracle,
            &h,
        );
        assert!(odd_share(&planned) > 0.9, "{}", odd_share(&planned));
    }

    #[test]
    fn the_family_runs_the_planner_when_the_estimator_names_it_or_by_default_online() {
        let family = crate::policy::registry::family("user-centric").unwrap();
        let (changes, views) = two_speed_site();
        let pages: Vec<PageId> = (0..12).collect();
        let h = history(25, &changes, &[1.0; 12], &[1.0; 12]);
        let named = [(
            "estimator",
            crate::policy::ParamValue::Text("planned".into()),
        )];
        for mode in [FitMode::Oracle, FitMode::Online] {
            let ctx = context(
                mode,
                &pages,
                &views,
                (mode == FitMode::Oracle).then_some(&h),
                24,
                2,
            );
            let mut policy = family.make(named.clone()).unwrap();
            let by_family = run(policy.as_mut(), &ctx, &h);
            assert_eq!(policy.label(), "user-centric (ΔQ̄ planned)");
            assert_eq!(policy.settings()["estimator"], "planned");
            assert!(policy.reads().delta_q);
            let direct = run(&mut Planner::new(UserCentricPlanModel::default()), &ctx, &h);
            assert_eq!(by_family, direct, "{mode:?}");
            let mut default = family.make([]).unwrap();
            default.prepare(&ctx);
            let planned_by_default = Estimator::default_for(mode) == Estimator::Planned;
            assert_eq!(
                default.label() == "user-centric (ΔQ̄ planned)",
                planned_by_default,
                "{mode:?}: {}",
                default.label()
            );
        }
    }
}
