//! LambdaCrawl: Kolobov, Peres, Lu & Horvitz, "Staying up to date with online content changes
//! using reinforcement learning for scheduling" (NeurIPS 2019), for pages with *incomplete*
//! change observations: a refresh reveals only whether the page changed since the last one.
//!
//! Page `w` changes as a Poisson process of rate `Δ_w` and matters with importance `μ_w`.
//! Refreshed at rate `ρ_w`, its harmonic staleness cost is `−μ_w · ln(ρ_w / (ρ_w + Δ_w))`
//! (the paper's Proposition 2); minimising the sum under `Σ_w ρ_w = B` gives each page the
//! root of a quadratic in its Lagrange multiplier `λ` (`crawl_rate`), and `λ` is found by
//! bisection (`crawl_rates`, Algorithm 1). Rates are uncapped: unlike the freshness optimum
//! of SBR and EBR, no page is abandoned, and a page may want more than one refresh per unit.
//!
//! LambdaCrawl is a [`PageModel`] of the shared [`Planner`]: `(Δ_w, μ_w)` are its `(λ_p, c_p)`,
//! its [`PageModel::frequencies`] are Algorithm 1's `ρ`, and the planner turns them into a
//! per-unit schedule by the same transportation step as SBR and EBR ([`super::schedule`]). The
//! paper samples Poisson crawl times; a crawler with a hard budget of `B` refreshes per unit
//! spaces them evenly instead. A unit holds a page at most once, so a page with `ρ_w > 1` is
//! refreshed every unit and the capacity it leaves is topped up by the pages of highest
//! marginal value of the harmonic objective ([`harmonic_marginal_value`]).
//!
//! * Importance: `μ_w` = the page's current view weight (how often users are shown it, as EBR
//!   weighs pages) plus a floor ([`importances`]), refreshed at every replan in both modes.
//! * Oracle: `Δ_w` = the page's rate of any change over the whole history
//!   ([`crate::change::oracle_rate`], as EBR's oracle).
//! * Online: `Δ_w` = the maximum-likelihood rate of the paper's Eq. 10 from the page's own
//!   refreshes, interval by interval ([`learned_change_rate`]), with the authors' smoothing
//!   (one changed and one unchanged pseudo-interval) and rate bounds. The pseudo-intervals
//!   last one round-robin cycle `N/B`, the prior interval of the other online models
//!   ([`super::planned::online_rate`]): before any observation a page gets `ln 2 / (N/B)`,
//!   about half a change per cycle, so the first plan spreads the budget by importance alone.
//!   Online mode never reads the history.
//!
//! # Complete observations (online, with change signals)
//!
//! The paper's second kind of source reports every change as it happens (its sitemaps and
//! pings); such a source is crawled right after a reported change with probability `p_w`
//! (Algorithm 2, [`crawl_probabilities`]), its rate learned from the reported changes by
//! Eq. 11 ([`complete_change_rate`]), and the bandwidth split between the two kinds as
//! Algorithm 3 does ([`mixed_plan`]). Here, when the crawler reads the site's signals:
//!
//! * Which pages: at each plan, a page is a complete-observation source when its
//!   [`crate::signal::SignalClass`] is informative at its copy's age by this run's own
//!   fetches ([`crate::signal::SignalTrust::is_informative`]: the posterior recall exceeds the
//!   false-alarm rate by two standard deviations) — the same test, at the same age, by which
//!   the other planned families hand a page's schedule slot to its signal
//!   ([`Planner`]'s `choose_signalled`). The paper takes completeness as given (its complete
//!   sources are those whose changes the search engine is told of); a site's signals are
//!   only as complete as they prove to be, and a signal that stops telling changed pages from
//!   unchanged ones (a build-stamped sitemap, a date that moves falsely for old copies) puts
//!   its pages back among the incomplete ones at the next plan. Pages gone, or for which no
//!   channel speaks, are incomplete.
//! * Their rates: Eq. 11 over the changes the signals reported since observation began (each
//!   move of a page's latest date or feed item is one change, at that unit), with the
//!   authors' 0.5 pseudo-changes over one round-robin cycle `N/B` (the pseudo-interval of
//!   Eq. 10's smoothing here) and the whole history (the authors' `suffix_length = ∞`).
//! * Their crawls: at each unit, a complete page whose signal reported a change since the
//!   last read (and since its copy) is crawled when a uniform draw keyed by the run's seed,
//!   the page and the unit ([`crate::signal::keyed_uniform`]) falls below its `p_w`, the most
//!   important first when they exceed the budget; those that won the draw and found the
//!   unit full are crawled first at the next (the paper crawls at the change's instant, with
//!   no unit to fill). The draw is deterministic for a seed; the
//!   family still declares no seed ([`crate::policy::Reads::seed`]), since without signals
//!   nothing is drawn, and with signals every family's runs already depend on the seed
//!   through the published signals.
//! * The rest: Algorithm 1's schedule of the incomplete pages over the bandwidth the split
//!   leaves them, filling the unit after the reported crawls; a unit with spare capacity
//!   after both gives it to the complete pages whose signal flags a change since their copy
//!   (draws lost earlier), then to those of oldest copy (which also keeps the trust's
//!   examples coming). Every fetch's outcome teaches the run's trust, as for the other
//!   planned families.
//!
//! Without signals, and in oracle mode, nothing of this runs and LambdaCrawl is Algorithm 1
//! alone.

use super::family::{ParamKind, ParamSpec, PolicyFamily};
use super::planned::{Observations, PageModel, Planner, REPLAN_EVERY_PARAM};
use super::{ChangeHistory, FitMode, PolicyContext, RefreshOutcome};
use crate::change::{irregular_mle_rate, oracle_rate};
use crate::corpus::{PageId, Unit};
use crate::crawl::CrawlState;
use crate::optimise::bisect_log;

mod complete;
mod signalled;

pub use complete::{
    complete_change_rate, crawl_probabilities, mixed_plan, MixedPlan, COMPLETE_SMOOTHING_CHANGES,
};
pub use signalled::CompleteObservations;

/// Crawl rate of page `w` at Lagrange multiplier `λ`:
/// `ρ_w = (−Δ_w + √(Δ_w² + 4·μ_w·Δ_w/λ)) / 2`.
///
/// Kolobov et al. (NeurIPS 2019), the stationarity condition of the Lagrangian of the harmonic
/// policy cost (Proposition 2, equation system 5; the per-source line of Algorithm 1,
/// `LambdaCrawl_IncomplObs`): `μ_w·Δ_w / (ρ_w (ρ_w + Δ_w)) = λ`. Computed as
/// `2·c / (Δ + √(Δ² + 4c))` with `c = μ_w·Δ_w/λ`, the same root without the cancellation of
/// `−Δ + √(Δ² + …)` when `c ≪ Δ²`. Increasing in `μ_w`, decreasing in `λ`; 0 when `μ_w = 0`
/// or `Δ_w = 0` (a page that never changes needs no refresh).
pub(crate) fn crawl_rate(importance: f64, change_rate: f64, lambda: f64) -> f64 {
    if importance <= 0.0 || change_rate <= 0.0 {
        return 0.0;
    }
    let c = importance * change_rate / lambda;
    2.0 * c / (change_rate + (change_rate * change_rate + 4.0 * c).sqrt())
}

/// The crawl rates of every page for `bandwidth` refreshes per unit: [`crawl_rate`] at the
/// multiplier `λ` where they sum to the bandwidth.
///
/// Kolobov et al. (NeurIPS 2019), Algorithm 1 (`LambdaCrawl_IncomplObs`): `Σ_w ρ_w(λ)` falls
/// continuously from ∞ (`λ → 0`) to 0, so `λ` is found by bisection, here on `log λ`
/// ([`bisect_log`]) to a relative width of 1e-14. The bracket: `ρ_w < μ_w/λ` (from
/// `ρ_w(ρ_w + Δ_w) = μ_w·Δ_w/λ`), so the sum is below the bandwidth at `λ = Σ μ_w / B`; the
/// lower end is that divided by 4 until the sum exceeds the bandwidth. Rates are uncapped.
/// Pages with `μ_w = 0` or `Δ_w = 0` get 0; all pages do when none has both, or the bandwidth
/// is 0.
pub(crate) fn crawl_rates(importances: &[f64], change_rates: &[f64], bandwidth: f64) -> Vec<f64> {
    assert_eq!(
        importances.len(),
        change_rates.len(),
        "one importance per change rate"
    );
    let useful: Vec<usize> = (0..importances.len())
        .filter(|&w| importances[w] > 0.0 && change_rates[w] > 0.0)
        .collect();
    let mut rates = vec![0.0; importances.len()];
    if useful.is_empty() || bandwidth <= 0.0 {
        return rates;
    }
    let total = |lambda: f64| -> f64 {
        useful
            .iter()
            .map(|&w| crawl_rate(importances[w], change_rates[w], lambda))
            .sum()
    };
    let hi = useful.iter().map(|&w| importances[w]).sum::<f64>() / bandwidth;
    let mut lo = hi;
    while total(lo) <= bandwidth {
        lo /= 4.0;
    }
    let lambda = bisect_log(lo, hi, 400, 1e-14, |lambda| total(lambda) > bandwidth);
    for &w in &useful {
        rates[w] = crawl_rate(importances[w], change_rates[w], lambda);
    }
    rates
}

/// The harmonic objective's marginal value of a page refreshed at rate `ρ`:
/// `∂/∂ρ [μ·ln(ρ/(ρ + Δ))] = μ·Δ / (ρ (ρ + Δ))` (infinite at `ρ = 0` for `μ, Δ > 0`).
///
/// Kolobov et al. (NeurIPS 2019), the left side of the Lagrangian condition of Proposition 2
/// that `crawl_rate` solves for `ρ`: at Algorithm 1's optimum every page's value is `λ`. It
/// ranks the pages that top up a unit's spare capacity.
pub fn harmonic_marginal_value(importance: f64, change_rate: f64, rate: f64) -> f64 {
    if importance <= 0.0 || change_rate <= 0.0 {
        return 0.0;
    }
    if rate <= 0.0 {
        return f64::INFINITY;
    }
    importance * change_rate / (rate * (rate + change_rate))
}

/// The bounds of a learned change rate, per unit: the authors' `ch_rate_lb = 0.0005` and
/// `ch_rate_ub = 7` (`LearnChRates_IncomplObs`). Their data was crawled about once a day and
/// their rates are per day; ours are per unit, the period of one refresh of a page refreshed
/// as often as possible, which plays the same role. The upper bound makes a page stale within
/// a unit with probability `1 − e⁻⁷ > 0.999` (a faster rate would change nothing a crawler of
/// at most one refresh per unit can do); the lower bound is one change in 2,000 units.
pub const LEARNED_RATE_BOUNDS: (f64, f64) = (0.0005, 7.0);

/// What the refreshes of one page revealed, interval by interval (online mode): the length of
/// each interval between consecutive refreshes and whether the refresh ending it found a
/// change. Eq. 10 reads the changed intervals one by one and the unchanged ones only through
/// their total, so those are kept: the changed lengths with their multiplicity (at most one
/// entry per refresh), and the unchanged total.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IntervalRecord {
    /// `(length in units, how many)` of the intervals that ended in a change, by length.
    changed: Vec<(u32, u32)>,
    /// Total length (units) of the intervals that ended without a change.
    unchanged_total: u64,
}

impl IntervalRecord {
    /// Adds an interval of `length` units that ended in a refresh finding a change or not.
    pub fn add(&mut self, length: u32, changed: bool) {
        if !changed {
            self.unchanged_total += u64::from(length);
            return;
        }
        match self.changed.binary_search_by_key(&length, |&(l, _)| l) {
            Ok(i) => self.changed[i].1 += 1,
            Err(i) => self.changed.insert(i, (length, 1)),
        }
    }

    /// Whether no interval was recorded.
    pub fn is_empty(&self) -> bool {
        self.changed.is_empty() && self.unchanged_total == 0
    }
}

/// The learned change rate of a page from its [`IntervalRecord`]: the maximum-likelihood rate
/// over the record plus the authors' smoothing — one changed and one unchanged pseudo-interval,
/// each `smoothing_interval` long — clamped to [`LEARNED_RATE_BOUNDS`].
///
/// Kolobov et al. (NeurIPS 2019), Eq. 10, as the authors' `LearnChRates_IncomplObs` computes it
/// (smoothing term 0.5 there; here the caller's, one round-robin cycle, see the module docs):
/// the root `Δ` of `Σ_{changed} τ_i / (e^(Δ·τ_i) − 1) = Σ_{unchanged} τ_i`, each interval of
/// length `τ` ending in an observed change with probability `1 − e^(−Δτ)`. That is Cho &
/// Garcia-Molina's estimator for irregular visits, solved by
/// [`crate::change::irregular_mle_rate`]. With no record it is `ln 2 / smoothing_interval`
/// (`τ/(e^(Δτ) − 1) = τ`); a page seen changed every time is held finite by the unchanged
/// pseudo-interval, one never seen changed above 0 by the changed one. The left side falls in
/// `Δ`, so a root beyond a bound gives the bound, as the authors' bisection in `[0.0005, 7]`
/// does (without pseudo-intervals, `smoothing_interval ≤ 0`, the bounds alone keep it finite).
pub fn learned_change_rate(record: &IntervalRecord, smoothing_interval: f64) -> f64 {
    let pseudo = smoothing_interval.max(0.0);
    let mut changed: Vec<(f64, f64)> = Vec::with_capacity(record.changed.len() + 1);
    changed.push((pseudo, 1.0));
    changed.extend(
        record
            .changed
            .iter()
            .map(|&(length, count)| (f64::from(length), f64::from(count))),
    );
    let unchanged_total = record.unchanged_total as f64 + pseudo;
    let (lowest, highest) = LEARNED_RATE_BOUNDS;
    irregular_mle_rate(&changed, unchanged_total).clamp(lowest, highest)
}

/// The importance floor as a share of the mean view weight (see [`importances`]).
pub const IMPORTANCE_FLOOR_SHARE: f64 = 0.01;

/// Every page's importance `μ_w = v_w + φ` from the view weights `v` (negative ones read as 0),
/// and the floor `φ` (the importance of a page beyond `v`): `φ` = [`IMPORTANCE_FLOOR_SHARE`] of
/// the mean view weight, or 1 when no page is viewed (importance then says nothing, and every
/// page weighs the same).
///
/// Why a floor: the harmonic cost (Kolobov et al., NeurIPS 2019, Proposition 2) assumes
/// `μ_w > 0`; with `μ_w = 0` a page gets `ρ_w = 0` and is never refreshed, so its copy, and the
/// view weight the engine computes from it, could never recover, and online its change rate
/// would never be learned again. Why 1 % of the mean: `ρ_w ≈ μ_w/λ` for a page refreshed less
/// often than it changes and `√(μ_w Δ_w/λ)` otherwise, so an unshown page is refreshed 1–10 %
/// as often as an average page of its change rate, and all unshown pages together hold at most
/// 1 % of the total importance: they keep a positive rate without taking visible budget from
/// the pages users see.
pub fn importances(view_weight: &[f64]) -> (Vec<f64>, f64) {
    let views: Vec<f64> = view_weight.iter().map(|&v| v.max(0.0)).collect();
    let mean = views.iter().sum::<f64>() / views.len().max(1) as f64;
    let floor = if mean > 0.0 {
        IMPORTANCE_FLOOR_SHARE * mean
    } else {
        1.0
    };
    (views.into_iter().map(|v| v + floor).collect(), floor)
}

/// LambdaCrawl's page model (see the module docs): `(Δ_w, μ_w)` per page, Algorithm 1's rates.
#[derive(Debug, Clone, Default)]
pub struct LambdaCrawlModel {
    mode: Option<FitMode>,
    /// `μ_w` of the pages of the last view weights, and the floor (beyond them).
    importance: Vec<f64>,
    importance_floor: f64,
    /// Oracle mode: each page's rate of any change over the history.
    oracle_rates: Vec<f64>,
    /// Online mode: each page's refresh intervals.
    records: Vec<IntervalRecord>,
    /// Online mode: each page's learned rate, `None` until (re)learned at the next plan.
    learned: Vec<Option<f64>>,
    /// The smoothing the learned rates were computed with.
    smoothing_interval: f64,
    /// The run's seed (the draws after reported changes).
    seed: u64,
    /// Online with signals: the pages observed completely, their rates and probabilities.
    observed: CompleteObservations,
    /// Whether, online with signals, trusted pages are complete observations (the paper's
    /// Algorithm 2; [`COMPLETE_OBSERVATIONS_PARAM`]) rather than given schedule slots by the
    /// planner's signal rule.
    complete_observations: bool,
}

impl LambdaCrawlModel {
    fn importance(&self, page: usize) -> f64 {
        self.importance
            .get(page)
            .copied()
            .unwrap_or(self.importance_floor)
    }

    fn set_views(&mut self, view_weight: &[f64]) {
        (self.importance, self.importance_floor) = importances(view_weight);
    }

    /// A page's learned rate: what the last plan learned, or the prior for a page met since.
    fn learned_rate(&self, page: usize) -> f64 {
        match self.learned.get(page) {
            Some(&Some(rate)) => rate,
            _ => learned_change_rate(&IntervalRecord::default(), self.smoothing_interval),
        }
    }
}

impl PageModel for LambdaCrawlModel {
    fn fit_oracle(&mut self, history: &ChangeHistory) {
        self.oracle_rates = history
            .pages
            .iter()
            .map(|page| oracle_rate(page.change_units.len(), history.units))
            .collect();
    }

    /// The history's rates, with the importances of the views of now.
    fn oracle(&self) -> Vec<(f64, f64)> {
        self.oracle_rates
            .iter()
            .enumerate()
            .map(|(p, &rate)| (rate, self.importance(p)))
            .collect()
    }

    /// Relearns the rates of the pages refreshed since the last plan (all of them if the
    /// smoothing moved).
    fn fit_online(&mut self, observations: &[Observations], _gone: &[bool], prior_interval: f64) {
        if prior_interval != self.smoothing_interval {
            self.smoothing_interval = prior_interval;
            self.learned.clear();
        }
        let n = observations.len().max(self.records.len());
        self.records.resize(n, IntervalRecord::default());
        self.learned.resize(n, None);
        for (record, learned) in self.records.iter().zip(self.learned.iter_mut()) {
            if learned.is_none() {
                *learned = Some(learned_change_rate(record, prior_interval));
            }
        }
    }

    /// Eq. 10's rate, or Eq. 11's for a page observed completely (online with signals).
    fn online(&self, page: PageId, _obs: &Observations, _prior_interval: f64) -> (f64, f64) {
        let p = page as usize;
        if self.observed.is_complete(p) {
            return (self.observed.rates[p], self.importance(p));
        }
        (self.learned_rate(p), self.importance(p))
    }

    /// Online: one interval more in the page's record (a page found gone counts as changed:
    /// the held copy is stale).
    fn record(&mut self, outcome: &RefreshOutcome) {
        if self.mode != Some(FitMode::Online) {
            return;
        }
        let p = outcome.page as usize;
        if p >= self.records.len() {
            self.records.resize(p + 1, IntervalRecord::default());
            self.learned.resize(p + 1, None);
        }
        let length = outcome.unit.saturating_sub(outcome.last_refresh).max(1);
        self.records[p].add(length, outcome.changed || outcome.gone);
        self.learned[p] = None;
    }

    /// Algorithm 1's rates for importances `weights` and change rates `lambdas`.
    /// With pages observed completely, Algorithm 1's rates of the others over what the mixed
    /// split ([`mixed_plan`]) leaves them, and 0 for the complete ones (crawled after their
    /// reported changes instead).
    fn frequencies(&self, lambdas: &[f64], weights: &[f64], budget: usize) -> Vec<f64> {
        if !self.observed.complete.contains(&true) {
            return crawl_rates(weights, lambdas, budget as f64);
        }
        mixed_plan(weights, lambdas, &self.observed.complete, budget as f64).rates
    }

    /// The complete-observation pages, when there are any (their plans differ).
    fn plan_key(&self, bytes: &mut Vec<u8>) {
        if self.observed.complete.contains(&true) {
            bytes.extend(self.observed.complete.iter().map(|&c| c as u8));
        }
    }

    /// Online with signals: how many pages the last plan observed completely, and how many
    /// crawls reported changes sent.
    fn settings(&self, settings: &mut serde_json::Map<String, serde_json::Value>) {
        if let Some(summary) = self.observed.summary() {
            settings.insert("completely_observed".into(), summary);
        }
    }

    fn choose_signalled(
        planner: &mut Planner<Self>,
        unit: Unit,
        budget: usize,
        crawl: &CrawlState,
    ) -> Option<Vec<PageId>> {
        if !planner.model.complete_observations {
            return None;
        }
        Some(signalled::choose(planner, unit, budget, crawl))
    }

    fn marginal_value(&self, lambda: f64, weight: f64, f: f64) -> f64 {
        harmonic_marginal_value(weight, lambda, f)
    }

    /// Views-weighted harmonic staleness (its plans are not the freshness optimum's, even for
    /// the same `(λ_p, c_p)`: SBR's at θ = 0 on a site nobody views, say).
    fn objective(&self) -> &'static str {
        "harmonic staleness"
    }

    /// Any change counts (the paper observes only "changed since the last crawl").
    fn theta(&self) -> f64 {
        0.0
    }

    fn has_theta(&self) -> bool {
        false
    }

    fn name(&self) -> &'static str {
        "lambdacrawl"
    }

    fn prepare(&mut self, context: &PolicyContext<'_>) {
        *self = LambdaCrawlModel {
            mode: Some(context.mode),
            seed: context.seed,
            complete_observations: self.complete_observations,
            ..LambdaCrawlModel::default()
        };
        self.set_views(context.view_weight);
    }

    /// Importance is the view weight of now, in both modes (pages created or risen since unit 0
    /// get theirs at each replan, as in EBR).
    fn uses_views(&self) -> bool {
        true
    }

    fn observe_views(&mut self, view_weight: &[f64]) {
        self.set_views(view_weight);
    }
}

/// The LambdaCrawl policy (see the module docs): a [`Planner`] of [`LambdaCrawlModel`].
pub(crate) type LambdaCrawl = Planner<LambdaCrawlModel>;

/// A LambdaCrawl planner replanning every [`super::planned::DEFAULT_REPLAN_EVERY`] units.
pub(crate) fn lambdacrawl() -> LambdaCrawl {
    Planner::new(LambdaCrawlModel::default())
}

/// Online with change signals: `on` treats the pages whose signals the run trusts as complete
/// observations (Algorithm 2, Eq. 11, the mixed split); `off` gives signalled pages the
/// schedule's slots by the planner's signal rule, as SBR and EBR do.
///
/// `off` is the default because it measured the stronger baseline: on generated sites of 2,000
/// pages with accurate lastmod, the paper's rule needed 1.0–1.9× the budget of the slot rule
/// at 50–95 % of the staleness gap (it spends spare capacity on unchanged complete pages), and
/// user-centric is to be measured against the strongest form of each baseline.
pub(crate) const COMPLETE_OBSERVATIONS_PARAM: ParamSpec = ParamSpec {
    key: "complete_observations",
    description: "Online with signals: trusted pages as complete observations (the paper's Algorithm 2) instead of the planner's signal slots",
    kind: ParamKind::Choice(&["off", "on"]),
    default: "off",
    sweep: &[],
};

/// The `lambdacrawl` family.
pub(crate) const FAMILY: PolicyFamily = PolicyFamily {
    name: "lambdacrawl",
    description: "Kolobov et al. (NeurIPS 2019), incomplete observations: crawl rates minimising views-weighted harmonic staleness under the budget (Algorithm 1), change rates learned by Eq. 10 online; with signals, pages whose signals the run trusts are complete observations (Algorithm 2, Eq. 11, the mixed split)",
    params: &[REPLAN_EVERY_PARAM, COMPLETE_OBSERVATIONS_PARAM],
    build: |params| {
        let mut policy = lambdacrawl();
        if let Some(every) = params.number("replan_every") {
            policy.replan_every = every as u32;
        }
        policy.model.complete_observations = params.choice("complete_observations") == Some("on");
        Ok(Box::new(policy))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::{context, history, no_crawl, run};
    use crate::policy::RefreshPolicy;

    fn sum(values: &[f64]) -> f64 {
        values.iter().sum()
    }

    #[test]
    fn crawl_rates_spend_the_bandwidth_exactly_uncapped() {
        let importances = [0.5, 1.0, 2.0, 0.1, 3.0, 1.0, 0.25, 4.0];
        let change_rates = [0.2, 1.0, 0.05, 3.0, 0.7, 0.01, 5.0, 0.0];
        for bandwidth in [0.01, 0.4, 2.5, 7.0, 12.0, 1000.0] {
            let rates = crawl_rates(&importances, &change_rates, bandwidth);
            assert!(
                (sum(&rates) - bandwidth).abs() <= 1e-12 * bandwidth,
                "B = {bandwidth}: Σρ = {}",
                sum(&rates)
            );
            // A page that never changes needs nothing; every other one gets a positive rate.
            assert_eq!(rates[7], 0.0);
            assert!(rates[..7].iter().all(|&r| r > 0.0), "{rates:?}");
        }
        // Uncapped: a bandwidth of 12 over 7 changing pages gives some page more than one
        // refresh per unit.
        let rates = crawl_rates(&importances, &change_rates, 12.0);
        assert!(rates.iter().any(|&r| r > 1.0), "{rates:?}");
        assert_eq!(crawl_rates(&importances, &change_rates, 0.0), vec![0.0; 8]);
        assert_eq!(crawl_rates(&[0.0, 1.0], &[1.0, 0.0], 3.0), vec![0.0; 2]);
    }

    #[test]
    fn at_the_optimum_every_page_has_marginal_value_lambda() {
        let importances = [0.5, 1.0, 2.0, 0.1, 3.0];
        let change_rates = [0.2, 1.0, 0.05, 3.0, 0.7];
        let rates = crawl_rates(&importances, &change_rates, 2.0);
        let values: Vec<f64> = (0..5)
            .map(|w| harmonic_marginal_value(importances[w], change_rates[w], rates[w]))
            .collect();
        for v in &values {
            assert!((v / values[0] - 1.0).abs() < 1e-9, "{values:?}");
        }
        // And `crawl_rate` inverts the marginal value.
        for w in 0..5 {
            let r = crawl_rate(importances[w], change_rates[w], values[0]);
            assert!((r / rates[w] - 1.0).abs() < 1e-9);
        }
    }

    #[test]
    fn crawl_rate_increases_with_importance() {
        for change_rate in [0.01, 0.5, 4.0] {
            let mut last = 0.0;
            for importance in [0.001, 0.1, 1.0, 10.0, 1e4] {
                let r = crawl_rate(importance, change_rate, 0.7);
                assert!(
                    r > last,
                    "Δ = {change_rate}, μ = {importance}: {r} ≤ {last}"
                );
                last = r;
            }
        }
        // Within one allocation too: equal change rates, the more important page gets more.
        let rates = crawl_rates(&[1.0, 2.0, 4.0], &[0.5, 0.5, 0.5], 1.0);
        assert!(rates[0] < rates[1] && rates[1] < rates[2], "{rates:?}");
        // The stable form agrees with the textbook root where that one does not cancel.
        let (mu, delta, lambda): (f64, f64, f64) = (2.0, 0.3, 0.5);
        let textbook = (-delta + (delta * delta + 4.0 * mu * delta / lambda).sqrt()) / 2.0;
        assert!((crawl_rate(mu, delta, lambda) - textbook).abs() < 1e-15);
    }

    fn record(intervals: &[(u32, bool)]) -> IntervalRecord {
        let mut r = IntervalRecord::default();
        for &(length, changed) in intervals {
            r.add(length, changed);
        }
        r
    }

    #[test]
    fn learned_rate_solves_equation_10() {
        let r = record(&[
            (1, true),
            (2, false),
            (1, true),
            (4, true),
            (2, false),
            (5, false),
        ]);
        let smoothing = 3.0;
        let rate = learned_change_rate(&r, smoothing);
        // The equation with the record and the pseudo-intervals written out.
        let changed = [(smoothing, 1.0), (1.0, 2.0), (4.0, 1.0)];
        let unchanged = smoothing + 2.0 + 2.0 + 5.0;
        let lhs: f64 = changed
            .iter()
            .map(|&(t, k)| k * t / ((rate * t).exp() - 1.0))
            .sum();
        assert!(
            (lhs / unchanged - 1.0).abs() < 1e-12,
            "{lhs} vs {unchanged}"
        );
        // More changes in the same time: a higher rate.
        let more = record(&[
            (1, true),
            (2, true),
            (1, true),
            (4, true),
            (2, false),
            (5, false),
        ]);
        assert!(learned_change_rate(&more, smoothing) > rate);
    }

    #[test]
    fn learned_rates_are_finite_positive_and_bounded_at_the_edges() {
        let (lowest, highest) = LEARNED_RATE_BOUNDS;
        let within = |x: f64| x.is_finite() && x >= lowest && x <= highest;
        // Nothing observed: ln 2 over the pseudo-interval.
        let none = learned_change_rate(&IntervalRecord::default(), 4.0);
        assert!((none - std::f64::consts::LN_2 / 4.0).abs() < 1e-12);
        // Every interval changed: bounded by the unchanged pseudo-interval.
        let all = learned_change_rate(&record(&[(1, true); 6]), 4.0);
        assert!(within(all) && all > none, "{all}");
        // None changed: bounded below by the changed pseudo-interval.
        let never = learned_change_rate(&record(&[(3, false); 6]), 4.0);
        assert!(within(never) && never < none, "{never}");
        // Beyond the bounds: clamped.
        assert_eq!(
            learned_change_rate(&record(&[(100, false); 50]), 0.5),
            lowest
        );
        assert_eq!(
            learned_change_rate(&record(&[(1, true); 3000]), 0.5),
            highest
        );
        // A long prior interval puts the unobserved prior below the lower bound.
        assert_eq!(learned_change_rate(&IntervalRecord::default(), 1e5), lowest);
    }

    #[test]
    fn the_record_keeps_changed_lengths_and_the_unchanged_total() {
        let r = record(&[(2, true), (5, false), (2, true), (1, true), (3, false)]);
        assert_eq!(r.changed, vec![(1, 1), (2, 2)]);
        assert_eq!(r.unchanged_total, 8);
        assert!(!r.is_empty() && IntervalRecord::default().is_empty());
    }

    #[test]
    fn importance_is_the_view_weight_above_a_floor() {
        let (mu, floor) = importances(&[0.0, 2.0, 6.0, -1.0]);
        assert_eq!(floor, 0.01 * 2.0);
        assert_eq!(mu, vec![floor, 2.0 + floor, 6.0 + floor, floor]);
        // Nobody viewed: every page weighs the same.
        assert_eq!(importances(&[0.0; 3]), (vec![1.0; 3], 1.0));
    }

    /// The authors' code, run on the inputs below, gave the literals asserted here.
    ///
    /// Peer: `LambdaCrawl_IncomplObs` and `LearnChRates_IncomplObs` of `LambdaCrawlExps.py`,
    /// microsoft/Optimal-Freshness-Crawl-Scheduling at commit 0ed8343d42b2, unmodified; run by
    /// a small Python driver kept outside this repository (it imports their module, calls
    /// the two functions on the inputs below and prints 12 digits) with numpy 2.4.6 and scipy 1.17.1. Their
    /// bisections stop at an absolute width of ε = 1e-12 (on `λ`, and on the learned rate in
    /// `[0.0005, 7]`); their smoothing term is 0.5, and learning uses the whole history
    /// (`suffix_length = ∞`, `curr_time` = the last crawl). The driver's crawl times become
    /// the intervals below (the first one from time 0).
    #[test]
    fn crawl_rates_and_learned_rates_match_the_authors_code() {
        let importances = [0.5, 1.0, 2.0, 0.1, 3.0, 1.0, 0.25];
        let change_rates = [0.2, 1.0, 0.05, 3.0, 0.7, 0.01, 5.0];
        let cases: [(f64, [f64; 7]); 3] = [
            (
                2.5,
                [
                    0.214037098594,
                    0.565923539911,
                    0.273737843759,
                    0.086145610554,
                    1.058369726018,
                    0.089270514634,
                    0.212515666530,
                ],
            ),
            (
                0.4,
                [
                    0.032666848370,
                    0.070968411179,
                    0.065694501798,
                    0.007581333782,
                    0.181140608300,
                    0.023018730622,
                    0.018929565948,
                ],
            ),
            (
                12.0,
                [
                    0.921758015325,
                    2.754211796859,
                    0.992159988341,
                    0.813432152808,
                    4.322930373921,
                    0.316595933103,
                    1.878911739636,
                ],
            ),
        ];
        let mut worst: f64 = 0.0;
        for (bandwidth, theirs) in cases {
            let ours = crawl_rates(&importances, &change_rates, bandwidth);
            for (a, b) in ours.iter().zip(theirs) {
                worst = worst.max((a - b).abs());
            }
        }
        let learned: [(Vec<(u32, bool)>, f64); 7] = [
            (vec![], 1.386294361120),
            (
                vec![
                    (1, true),
                    (2, false),
                    (1, true),
                    (4, true),
                    (2, false),
                    (5, false),
                ],
                0.326104693106,
            ),
            (
                vec![
                    (2, false),
                    (5, true),
                    (2, true),
                    (11, false),
                    (1, false),
                    (9, true),
                ],
                0.189842504549,
            ),
            (vec![(1, true); 4], 2.617509849597),
            (vec![(3, false); 4], 0.078441426307),
            (vec![(100, false); 50], 0.000500000001),
            (vec![(1, true); 3000], 6.999999999999),
        ];
        for (intervals, theirs) in learned {
            let ours = learned_change_rate(&record(&intervals), 0.5);
            worst = worst.max((ours - theirs).abs());
        }
        eprintln!("largest difference from the authors' code: {worst:e}");
        assert!(
            worst < 1e-6,
            "largest difference from the authors' code: {worst:e}"
        );
    }

    /// A small site: page `p` changes every `p % 4 + 1` units; pages 0–3 and 8–11 are viewed
    /// three times as often as pages 4–7.
    fn site() -> (ChangeHistory, Vec<u32>, Vec<f64>) {
        let changes: Vec<Vec<u32>> = (0..12u32)
            .map(|p| (1..=16).filter(|u| u % (p % 4 + 1) == 0).collect())
            .collect();
        let views = (0..12).map(|p| if p % 8 < 4 { 3.0 } else { 1.0 }).collect();
        (history(17, &changes, &[], &[]), (0..12).collect(), views)
    }

    #[test]
    fn oracle_plans_algorithm_1_rates_of_the_history_and_views() {
        let (h, pages, views) = site();
        let ctx = context(FitMode::Oracle, &pages, &views, Some(&h), 16, 3);
        let mut policy = lambdacrawl();
        let choices = run(&mut policy, &ctx, &h);
        let (mu, _) = importances(&views);
        let rates: Vec<f64> = (0..12u32)
            .map(|p| oracle_rate(h.pages[p as usize].change_units.len(), h.units))
            .collect();
        assert_eq!(policy.frequencies(), crawl_rates(&mu, &rates, 3.0));
        assert!((sum(policy.frequencies()) - 3.0).abs() < 1e-9);
        assert!(choices.iter().all(|c| c.len() == 3), "{choices:?}");
        // Equal change rates: the more viewed page is planned, and refreshed, more.
        let count = |p: u32| choices.iter().filter(|c| c.contains(&p)).count();
        for p in 0..4 {
            assert!(policy.frequencies()[p] > policy.frequencies()[p + 4]);
            assert!(count(p as u32) >= count(p as u32 + 4), "{choices:?}");
        }
        assert_eq!(policy.label(), "lambdacrawl");
        assert!(policy.settings().get("theta").is_none());
        assert_eq!(policy.settings()["replan_every"], 4);
    }

    #[test]
    fn online_learns_from_its_refreshes_and_never_reads_the_history() {
        let (h, pages, views) = site();
        let with = context(FitMode::Online, &pages, &views, Some(&h), 16, 3);
        let without = context(FitMode::Online, &pages, &views, None, 16, 3);
        let mut a = lambdacrawl();
        let choices = run(&mut a, &with, &h);
        let mut b = lambdacrawl();
        assert_eq!(choices, run(&mut b, &without, &h));
        assert!(choices.iter().all(|c| c.len() == 3));
        // Learned: page 0 (changes every unit) is estimated faster than page 3 (every 4).
        let params = a.params();
        assert!(params[0].0 > params[3].0, "{params:?}");
        // Deterministic.
        assert_eq!(choices, run(&mut lambdacrawl(), &without, &h));
    }

    #[test]
    fn unshown_pages_keep_a_positive_rate_and_views_move_it() {
        // Page 2 is shown to nobody at first; at unit 5 it becomes the most viewed.
        let pages = [0, 1, 2];
        let ctx = context(FitMode::Online, &pages, &[1.0, 1.0, 0.0], None, 12, 1);
        let mut policy = lambdacrawl();
        policy.prepare(&ctx);
        let mut before = 0.0;
        let mut after_2 = 0;
        for t in 1..=12 {
            if policy.wants_views(t) && t >= 5 {
                policy.observe_views(&[1.0, 1.0, 50.0]);
            }
            let chosen = policy.choose(t, 1, &no_crawl());
            if t == 1 {
                before = policy.frequencies()[2];
            }
            if t >= 5 {
                after_2 += chosen.iter().filter(|&&p| p == 2).count();
            }
            policy.observe(&[]);
        }
        assert!(before > 0.0, "the floor keeps page 2 planned");
        assert!(policy.frequencies()[2] > before);
        assert!(
            after_2 >= 3,
            "page 2 refreshed {after_2} times after unit 5"
        );
    }

    #[test]
    fn schedules_are_not_shared_with_the_freshness_planners() {
        use crate::cache::Cache;
        use crate::policy::sbr::Sbr;
        use std::sync::Arc;
        // Nobody is viewed: every importance is 1, and LambdaCrawl's `(Δ_w, μ_w)` are SBR's
        // `(λ_p, 1)` at θ = 0 — the same key but for the objective, different plans.
        let (h, pages, _) = site();
        let views = [0.0; 12];
        let ctx = context(FitMode::Oracle, &pages, &views, Some(&h), 16, 3);
        let alone = run(&mut lambdacrawl(), &ctx, &h);
        let sharing = PolicyContext {
            cache: Some(Arc::new(Cache::new())),
            ..ctx.clone()
        };
        let sbr = run(&mut Sbr::at_threshold(0.0), &sharing, &h);
        assert_ne!(sbr, alone, "the test needs plans that differ");
        assert_eq!(run(&mut lambdacrawl(), &sharing, &h), alone);
    }

    #[test]
    fn the_family_builds_with_its_replanning_period() {
        let params = [("replan_every", crate::policy::ParamValue::Number(2.0))];
        let policy = FAMILY.make(params).unwrap();
        assert_eq!(policy.settings()["replan_every"], 2);
        assert!(FAMILY
            .make([("theta", crate::policy::ParamValue::Number(0.3))])
            .is_err());
    }
}
