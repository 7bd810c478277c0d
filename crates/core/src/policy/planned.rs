//! The machinery SBR and EBR share: per-page observations, the budgeted frequency optimum
//! ([`super::freshness`]) and its schedule ([`super::schedule`]), replanned as estimates move.
//!
//! A [`Planner`] is driven by a [`PageModel`] that turns what is known about a page (oracle
//! history or online observations) into a change rate `λ_p` and an objective weight `c_p`,
//! and (by default, the freshness optimum) those into frequencies.

use super::family::{ParamKind, ParamSpec, Params};
use super::freshness::{marginal_freshness, optimal_frequencies};
use super::schedule::{assign, plan_instances};
use super::{
    ChangeHistory, FitMode, PolicyContext, Reads, RefreshOutcome, RefreshPolicy, OPEN_ENDED_UNITS,
};
use crate::cache::{Cache, CacheKey};
use crate::change::cg_rate_per_unit;
use crate::corpus::{PageId, Unit};
use crate::crawl::CrawlState;
use crate::signal::trust::EXPLORATION_SHARE;
use crate::signal::{PageSignal, SignalTrust};
use std::collections::HashMap;
use std::sync::Arc;

/// Default shingle threshold of SBR and EBR when none is given: 0, i.e. every content change
/// counts (paper 003's "simplest implementation of SBR"); sweeps pass 0.1 … 1.0.
pub const DEFAULT_THETA: f64 = 0.0;

/// What a policy observed of one page through its own refreshes (online mode).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Observations {
    /// Refreshes observed.
    pub(crate) visits: usize,
    /// Sum of the intervals (units) between each observed refresh and the one before it.
    pub(crate) elapsed: f64,
    /// Refreshes that found the content changed (any change).
    pub(crate) changed: usize,
    /// Refreshes whose shingle change was at least the policy's θ (and the content changed).
    pub(crate) changed_at_theta: usize,
    /// The ΔQ_A measured by the refreshes that found the content changed (the page still
    /// present): what user-centric planning learns its weights from.
    pub(crate) gains: GainRecord,
}

/// The measured gains `g_i` (ΔQ_A) of a page's refreshes that found a change, as the sums a
/// shrinkage estimate and its leave-one-out check read: count, `Σ g_i`, `Σ g_i²`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct GainRecord {
    pub(crate) count: usize,
    pub(crate) sum: f64,
    pub(crate) sum_of_squares: f64,
}

impl GainRecord {
    /// Adds one measured gain.
    pub fn add(&mut self, gain: f64) {
        self.count += 1;
        self.sum += gain;
        self.sum_of_squares += gain * gain;
    }
}

impl Observations {
    /// Records one outcome, counting it as a θ-change when `outcome.changed` and its shingle
    /// change is at least `theta` (a gone page counts as changed with shingle change 1).
    pub fn record(&mut self, outcome: &RefreshOutcome, theta: f64) {
        self.visits += 1;
        self.elapsed += outcome.unit.saturating_sub(outcome.last_refresh).max(1) as f64;
        let changed = outcome.changed || outcome.gone;
        let shingle = if outcome.gone {
            1.0
        } else {
            outcome.shingle_change
        };
        if changed {
            self.changed += 1;
            if shingle >= theta {
                self.changed_at_theta += 1;
            }
            if !outcome.gone {
                self.gains.add(outcome.delta_q);
            }
        }
    }
}

/// Online change rate from `changes` out of `obs.visits` observed visits: Cho &
/// Garcia-Molina's estimator ([`crate::change::cg_rate`]) over the observations plus a prior
/// of two pseudo-visits, one of them changed, each `prior_interval` units long, divided by the
/// mean interval.
///
/// The prior matters: CG gives exactly 0 for a page seen unchanged once, and a page with
/// λ = 0 gets no refresh ever again, so the policy could never learn it had started changing.
/// With the pseudo-visits, a never-observed page gets `−ln(1.5/2.5)/prior_interval ≈
/// 0.51/prior_interval`, a page seen unchanged `n` times decays like `1/((n+2)·Ī)`, and a page
/// changed at every visit grows like `ln(n + 2.5)/Ī`. The policies use `prior_interval = N/B`
/// (one round-robin cycle): before any evidence, every page is expected to change about half
/// a time per cycle, which makes the first plan a staggered round-robin.
pub fn online_rate(obs: &Observations, changes: usize, prior_interval: f64) -> f64 {
    let visits = obs.visits + 2;
    let mean_interval = (obs.elapsed + 2.0 * prior_interval) / visits as f64;
    cg_rate_per_unit(visits, changes + 1, mean_interval)
}

/// Turns what is known of a page into `(λ_p, c_p)`.
///
/// Protocol: [`prepare`](Self::prepare) once, then in oracle mode
/// [`fit_oracle`](Self::fit_oracle) with the true history. At every plan, oracle mode calls
/// [`oracle`](Self::oracle) (the first plan, and each replan of a model that
/// [`uses_views`](Self::uses_views), after [`observe_views`](Self::observe_views)), online mode
/// calls [`fit_online`](Self::fit_online) with every page's observations, then
/// [`online`](Self::online) for each page not observed gone; the `(λ_p, c_p)` of all pages then
/// go to [`frequencies`](Self::frequencies) once per plan. Between plans (both modes),
/// [`record`](Self::record) receives each observed refresh in the order of observation.
pub trait PageModel: Send {
    /// Oracle mode, once: keeps what the model reads of the true history.
    fn fit_oracle(&mut self, history: &ChangeHistory);
    /// Oracle parameters of every page known to the history, from what
    /// [`fit_oracle`](Self::fit_oracle) kept (and the views last observed).
    fn oracle(&self) -> Vec<(f64, f64)>;
    /// Online, before the pages' parameters are read: a fit over every page's observations
    /// (a site-wide prior, say), with `gone[p]` whether the crawl state has page `p` gone.
    /// Nothing by default.
    fn fit_online(&mut self, _observations: &[Observations], _gone: &[bool], _prior_interval: f64) {
    }
    /// Online parameters of page `p` from its observations.
    fn online(&self, page: PageId, obs: &Observations, prior_interval: f64) -> (f64, f64);
    /// Whether the model reads [`RefreshOutcome::delta_q`] (through `Observations::gains`).
    fn reads_delta_q(&self) -> bool {
        false
    }
    /// The θ an outcome is compared to when recorded.
    fn theta(&self) -> f64;
    /// The policy's name in outputs.
    fn name(&self) -> &'static str;
    /// Reads what the model needs from the context (called first by [`Planner`]'s `prepare`).
    fn prepare(&mut self, _context: &PolicyContext<'_>) {}
    /// Whether the model weighs pages by the repository's view weights, refreshed at each
    /// replan; such a model replans in oracle mode too (an oracle uses at least what its
    /// online form uses: the weights of pages created or risen since unit 0).
    fn uses_views(&self) -> bool {
        false
    }
    /// The repository's current view weights (see [`RefreshPolicy::observe_views`]).
    fn observe_views(&mut self, _view_weight: &[f64]) {}
    /// Each outcome the planner records (every observed refresh, not a discovery), after its
    /// [`Observations`] took it: for a model that keeps more than their sums. Nothing by
    /// default.
    fn record(&mut self, _outcome: &RefreshOutcome) {}
    /// The refresh frequencies (per unit) of every page for `budget` refreshes per unit, from
    /// each page's `(λ_p, c_p)`: by default the weighted freshness optimum of
    /// [`super::freshness`] (SBR, EBR, user-centric). A model with another objective gives its
    /// own optimum; the planner schedules whatever it returns by the same transportation step.
    fn frequencies(&self, lambdas: &[f64], weights: &[f64], budget: usize) -> Vec<f64> {
        optimal_frequencies(lambdas, weights, budget as f64).frequencies
    }
    /// What one more refresh per unit of a page `(λ, c)` planned at frequency `f` is worth:
    /// ranks the pages that top up a unit's spare capacity. By default `c · ∂F/∂f`, the
    /// marginal of [`frequencies`](Self::frequencies)' default objective.
    fn marginal_value(&self, lambda: f64, weight: f64, f: f64) -> f64 {
        weight * marginal_freshness(lambda, f)
    }
    /// The objective [`frequencies`](Self::frequencies) and
    /// [`marginal_value`](Self::marginal_value) optimise: planners share a schedule
    /// (the schedule's cache key) only when their objectives are the same, since equal `(λ_p, c_p)` give
    /// different plans under different objectives. `"freshness"` by default.
    fn objective(&self) -> &'static str {
        "freshness"
    }
    /// Whether θ ([`theta`](Self::theta)) is one of the family's parameters, shown in labels
    /// and settings.
    fn has_theta(&self) -> bool {
        true
    }
    /// Bytes that, with [`objective`](Self::objective), name what else the model's
    /// [`frequencies`](Self::frequencies) read beyond the pages' `(λ_p, c_p)` (the schedule's
    /// cache key): nothing by default.
    fn plan_key(&self, _bytes: &mut Vec<u8>) {}
    /// Settings the model adds to the planner's (what it learned that outputs report):
    /// nothing by default.
    fn settings(&self, _settings: &mut serde_json::Map<String, serde_json::Value>) {}
    /// Online, when the crawler reads the site's change signals: the model's own choice of
    /// the pages to refresh at `unit`, or `None` (the default) for the planner's signal-slot
    /// rule (`Planner::choose_signalled`). LambdaCrawl's complete observations use it.
    fn choose_signalled(
        _planner: &mut Planner<Self>,
        _unit: Unit,
        _budget: usize,
        _crawl: &CrawlState,
    ) -> Option<Vec<PageId>>
    where
        Self: Sized,
    {
        None
    }
}

/// Plans and replans the refresh schedule for a [`PageModel`].
#[derive(Debug, Clone)]
pub struct Planner<M> {
    pub(crate) model: M,
    /// Online mode replans every `replan_every` units, and so does oracle mode for a model
    /// that uses views (otherwise oracle parameters never move, and one plan covers the run).
    pub(crate) replan_every: u32,
    mode: FitMode,
    horizon: Unit,
    budget: usize,
    prior_interval: f64,
    params: Vec<(f64, f64)>,
    observations: Vec<Observations>,
    plan_start: Unit,
    plan_budget: usize,
    /// The current plan (shared with the planners that computed the same one).
    schedule: Arc<Schedule>,
    /// Where the planners of one environment share their schedules, if anywhere.
    cache: Option<Arc<Cache>>,
    /// Online with change signals ([`Planner::choose_signalled`]): how far the site's signals
    /// are trusted, the signal each chosen page had when chosen, and the exploration credit
    /// carried between units.
    signalled: Option<Signalled>,
}

/// The state of a planner that reads the site's change signals (online mode).
#[derive(Debug, Clone, Default)]
struct Signalled {
    trust: SignalTrust,
    /// The chosen pages' signals and held-copy units, read when their outcomes arrive.
    pending: HashMap<PageId, (PageSignal, Unit)>,
    explore_credit: f64,
}

/// A plan: per unit from its start, the pages to refresh; and the frequencies it realises.
#[derive(Debug, Clone, Default)]
struct Schedule {
    plan: Vec<Vec<PageId>>,
    frequencies: Vec<f64>,
}

/// Everything a schedule is computed from ([`schedule_of`]), and so the key under which the
/// planners of one environment (the SBR and EBR runs of a sweep) share it in the [`Cache`]:
/// the model's objective ([`PageModel::objective`], which names its frequencies), whether
/// plans continue from each page's last refresh, the plan's first unit and length, the budget,
/// every page's `(λ_p, c_p)` and last refresh. Runs whose estimates coincide (thresholds θ that
/// count the same changes, budgets that refresh every page) compute one schedule and read it —
/// the same plan, bit for bit.
struct ScheduleInputs<'a> {
    objective: &'static str,
    replans: bool,
    start: Unit,
    len: u32,
    budget: usize,
    params: &'a [(f64, f64)],
    last_refresh: &'a [Unit],
    /// The model's [`PageModel::plan_key`] (empty for most models).
    model_key: Vec<u8>,
}

/// Bytes of schedules the cache keeps.
pub const SHARED_PLAN_BYTES: usize = 128 << 20;

impl CacheKey for ScheduleInputs<'_> {
    type Value = Schedule;
    const STORE: &'static str = "schedules";
    const MAX_BYTES: usize = SHARED_PLAN_BYTES;

    fn write_key(&self, bytes: &mut Vec<u8>) {
        let objective = self.objective.as_bytes();
        bytes.extend_from_slice(&(objective.len() as u64).to_le_bytes());
        bytes.extend_from_slice(objective);
        bytes.push(self.replans as u8);
        bytes.extend_from_slice(&self.start.to_le_bytes());
        bytes.extend_from_slice(&self.len.to_le_bytes());
        bytes.extend_from_slice(&(self.budget as u64).to_le_bytes());
        bytes.extend_from_slice(&(self.params.len() as u64).to_le_bytes());
        for &(lambda, weight) in self.params {
            bytes.extend_from_slice(&lambda.to_bits().to_le_bytes());
            bytes.extend_from_slice(&weight.to_bits().to_le_bytes());
        }
        for &unit in self.last_refresh {
            bytes.extend_from_slice(&unit.to_le_bytes());
        }
        bytes.extend_from_slice(&self.model_key);
    }

    fn key_len(&self) -> usize {
        48 + 20 * self.params.len() + self.model_key.len()
    }

    fn value_bytes(s: &Schedule) -> usize {
        s.plan.iter().map(|u| 24 + 4 * u.len()).sum::<usize>() + 8 * s.frequencies.len()
    }
}

/// The optimal frequencies of `model` for the inputs' budget and their plan over units
/// `start .. start + len`, from the pages' parameters (and, when plans continue, each page's
/// last refresh): a function of `inputs` alone, since the model's frequencies are named by its
/// objective.
fn schedule_of<M: PageModel>(model: &M, inputs: &ScheduleInputs<'_>) -> Schedule {
    let (start, len, budget) = (inputs.start, inputs.len, inputs.budget);
    let lambdas: Vec<f64> = inputs.params.iter().map(|x| x.0).collect();
    let weights: Vec<f64> = inputs.params.iter().map(|x| x.1).collect();
    let frequencies = model.frequencies(&lambdas, &weights, budget);
    // An instance is worth its weight times the chance it catches a change.
    let values: Vec<f64> = (0..lambdas.len())
        .map(|p| {
            let f = frequencies[p];
            if f > 0.0 {
                weights[p] * -(-lambdas[p] / f).exp_m1()
            } else {
                0.0
            }
        })
        .collect();
    let phases: Vec<f64> = (0..lambdas.len())
        .map(|p| match inputs.replans {
            // One plan for the whole run: pages staggered.
            false => golden_phase(p),
            // Continue from the last refresh: the first instance one interval after it.
            true => {
                let f = frequencies[p];
                if f > 0.0 {
                    let spacing = 1.0 / f;
                    let since = start
                        .saturating_sub(1)
                        .saturating_sub(inputs.last_refresh[p])
                        as f64;
                    (since / spacing).min(0.999)
                } else {
                    0.0
                }
            }
        })
        .collect();
    let instances = plan_instances(&frequencies, &values, &phases, start, len, budget);
    Schedule {
        plan: assign(&instances, start, len, budget),
        frequencies,
    }
}

/// The expected share of the next `horizon` units a copy fetched now stays fresh, for a page
/// changing at rate `lambda` (Poisson): `E[min(T, H)]/H = (1 − e^{−λH})/(λH)`, 1 for a page
/// that never changes. A refresh's freshness lasts until the next change (Cho & Garcia-Molina,
/// "Synchronizing a database to improve freshness", 2000: refreshing the fastest-changing
/// pages buys the least freshness). Signal-reading planners use the refresh cycle `N/B` as `H`.
pub fn fresh_share(lambda: f64, horizon: f64) -> f64 {
    let x = lambda * horizon;
    if x <= 1e-12 {
        1.0
    } else {
        -(-x).exp_m1() / x
    }
}

/// A page a signal-reading planner may give a signal slot to ([`Planner::choose_signalled`]).
#[derive(Debug, Clone, Copy)]
struct SignalCandidate {
    /// `c_p · P(changed | signal) · D(λ_p)`.
    value: f64,
    /// `c_p · π_p · D(λ_p)`: the value without the signal (exploration).
    prior_value: f64,
    /// Its signal reports no change since its copy.
    quiet: bool,
    since: Unit,
    page: PageId,
}

/// The `slots` best candidates: first `explore` quiet ones by value without the signal, then
/// the rest by value; ties by oldest copy, then page id.
fn best_signalled(candidates: Vec<SignalCandidate>, slots: usize, explore: usize) -> Vec<PageId> {
    let by = |key: fn(&SignalCandidate) -> f64| {
        move |a: &SignalCandidate, b: &SignalCandidate| {
            key(b)
                .total_cmp(&key(a))
                .then(a.since.cmp(&b.since))
                .then(a.page.cmp(&b.page))
        }
    };
    let mut quiet: Vec<SignalCandidate> = candidates.iter().filter(|c| c.quiet).copied().collect();
    quiet.sort_unstable_by(by(|c| c.prior_value));
    let mut chosen: Vec<PageId> = quiet.iter().take(explore).map(|c| c.page).collect();
    let mut rest: Vec<SignalCandidate> = candidates
        .into_iter()
        .filter(|c| !chosen.contains(&c.page))
        .collect();
    let wanted = slots - chosen.len();
    if wanted < rest.len() {
        rest.select_nth_unstable_by(wanted, by(|c| c.value));
        rest.truncate(wanted);
    }
    rest.sort_unstable_by(by(|c| c.value));
    chosen.extend(rest.into_iter().map(|c| c.page));
    chosen
}

/// Default replanning period in online mode (units): frequent enough to follow the estimates,
/// rare enough to keep a sweep over budgets and thresholds cheap.
pub(crate) const DEFAULT_REPLAN_EVERY: u32 = 4;

/// `value` with the last 24 of its 52 mantissa bits cleared (about 8 significant digits
/// kept): values that differ only by the rounding of their computation compare equal (barring
/// the rare pair straddling a boundary), and the order stays total.
fn without_rounding_noise(value: f64) -> f64 {
    f64::from_bits(value.to_bits() & !((1u64 << 24) - 1))
}

/// Golden-ratio phase of page `p` in `[0, 1)`: staggers pages of equal frequency so that they
/// do not all want the same unit (a low-discrepancy sequence).
fn golden_phase(p: usize) -> f64 {
    ((p as f64 + 1.0) * 0.618_033_988_749_894_9).fract()
}

/// The parameters of every planned family (SBR, EBR): the shingle threshold θ and the online
/// replanning period.
pub(crate) const PLANNER_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        key: "theta",
        description: "Shingle threshold θ: a change counts when at least this share of the held copy's shingles is gone",
        kind: ParamKind::Number { min: 0.0, max: 1.0, integer: false },
        default: "0 (every content change counts)",
        sweep: &[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0],
    },
    REPLAN_EVERY_PARAM,
];

/// The replanning period of a planned family (with or without θ).
pub(crate) const REPLAN_EVERY_PARAM: ParamSpec = ParamSpec {
    key: "replan_every",
    description: "Online mode: replan every this many units",
    kind: ParamKind::Number {
        min: 1.0,
        max: u32::MAX as f64,
        integer: true,
    },
    default: "4",
    sweep: &[],
};

/// `at_threshold(θ)` with the [`PLANNER_PARAMS`] of `params` applied (θ defaults to
/// [`DEFAULT_THETA`]): what the planned families' constructors share.
pub(crate) fn planner_from_params<M: PageModel>(
    params: &Params,
    at_threshold: impl FnOnce(f64) -> Planner<M>,
) -> Planner<M> {
    let mut p = at_threshold(params.number("theta").unwrap_or(DEFAULT_THETA));
    if let Some(r) = params.number("replan_every") {
        p.replan_every = r as u32;
    }
    p
}

impl<M: PageModel> Planner<M> {
    pub(crate) fn new(model: M) -> Self {
        Planner {
            model,
            replan_every: DEFAULT_REPLAN_EVERY,
            mode: FitMode::Online,
            horizon: 0,
            budget: 0,
            prior_interval: 1.0,
            params: Vec::new(),
            observations: Vec::new(),
            plan_start: 0,
            plan_budget: 0,
            schedule: Arc::default(),
            cache: None,
            signalled: None,
        }
    }

    /// Fits the oracle parameters (oracle mode) or resets the observations (online mode).
    fn prepare_plan(&mut self, context: &PolicyContext<'_>) {
        let n = context.page_count;
        self.mode = context.mode;
        self.horizon = context.units.max(1);
        self.budget = context.budget;
        self.prior_interval = (n as f64 / context.budget.max(1) as f64).max(1.0);
        self.observations = vec![Observations::default(); n];
        self.schedule = Arc::default();
        self.signalled = None;
        self.cache = context.cache.clone();
        self.params = vec![(0.0, 0.0); n];
        if let (FitMode::Oracle, Some(history)) = (context.mode, context.history) {
            self.model.fit_oracle(history);
            self.refresh_oracle_params();
        }
    }

    /// Oracle mode: every page's parameters from the model's history (and current views).
    fn refresh_oracle_params(&mut self) {
        let n = self.params.len();
        self.params = self.model.oracle();
        self.params.resize(n, (0.0, 0.0));
    }

    /// Whether plans are recomputed as the run goes: online (the estimates move), and in
    /// oracle mode for a model that weighs pages by the repository's current views.
    fn replans(&self) -> bool {
        self.mode == FitMode::Online || self.model.uses_views()
    }

    /// The units an open-ended run plans at once: one refresh cycle of the whole site at the
    /// budget (`n / B` units, the longest period a page of the plan needs to be met once),
    /// and at least four replanning periods; so a plan holds about `n` refreshes whatever the
    /// run's length.
    fn open_ended_window(&self) -> Unit {
        let cycle = self.params.len().div_ceil(self.budget.max(1)) as Unit;
        cycle.max(self.replan_every.saturating_mul(4)).max(1)
    }

    /// Makes room for page ids `0..count` met after `prepare`: no observation, no parameters
    /// until the next (online) replan.
    fn grow(&mut self, count: usize) {
        if count > self.observations.len() {
            self.observations.resize(count, Observations::default());
            self.params.resize(count, (0.0, 0.0));
        }
    }

    /// The current `(λ_p, c_p)` of every page.
    pub fn params(&self) -> &[(f64, f64)] {
        &self.params
    }

    /// The frequencies of the current plan.
    pub fn frequencies(&self) -> &[f64] {
        &self.schedule.frequencies
    }

    /// Online parameters of every page; `gone` the crawl state's (a gone page is not planned).
    fn refresh_online_params(&mut self, gone: &[bool]) {
        self.model
            .fit_online(&self.observations, gone, self.prior_interval);
        for (p, (obs, &gone)) in self.observations.iter().zip(gone).enumerate() {
            self.params[p] = if gone {
                (0.0, 0.0)
            } else {
                self.model.online(p as PageId, obs, self.prior_interval)
            };
        }
    }

    fn replan(&mut self, start: Unit, budget: usize, last_refresh: &[Unit], gone: &[bool]) {
        match self.mode {
            FitMode::Online => self.refresh_online_params(gone),
            // The history's parameters with the views of now (pages created since unit 0).
            FitMode::Oracle if self.model.uses_views() => self.refresh_oracle_params(),
            FitMode::Oracle => {}
        }
        let end = match self.horizon {
            // Open-ended (a live crawl): plan one window ahead, replanned before it runs out.
            OPEN_ENDED_UNITS => start.saturating_add(self.open_ended_window() - 1),
            horizon => horizon.max(start),
        };
        let len = end - start + 1;
        let inputs = ScheduleInputs {
            objective: self.model.objective(),
            replans: self.replans(),
            start,
            len,
            budget,
            params: &self.params,
            last_refresh,
            model_key: {
                let mut key = Vec::new();
                self.model.plan_key(&mut key);
                key
            },
        };
        let compute = || schedule_of(&self.model, &inputs);
        self.schedule = match &self.cache {
            Some(cache) => cache.get_or_compute(&inputs, compute).0,
            None => Arc::new(compute()),
        };
        self.plan_start = start;
        self.plan_budget = budget;
    }

    /// Whether `choose(unit, ·)` will compute a new plan (the current one is due): online, or
    /// in oracle mode for a model that uses views ([`PageModel::uses_views`]).
    pub(crate) fn replans_at(&self, unit: Unit) -> bool {
        self.replans()
            && (self.schedule.plan.is_empty()
                || unit >= self.plan_start.saturating_add(self.replan_every.max(1)))
    }

    /// Whether [`Self::choose_pages`]`(unit, budget, ·)` computes a new plan: the current one
    /// does not cover `unit`, is due ([`Self::replans_at`]) or was made for another budget.
    pub(super) fn plan_due(&self, unit: Unit, budget: usize) -> bool {
        let in_plan = unit >= self.plan_start
            && ((unit - self.plan_start) as usize) < self.schedule.plan.len();
        !in_plan || self.replans_at(unit) || budget != self.plan_budget
    }

    /// The refresh cycle `N/B` (units) online priors are expressed in.
    pub(super) fn prior_interval(&self) -> f64 {
        self.prior_interval
    }

    /// The trust this run learned in the site's signals (untested before any signalled fetch).
    pub(super) fn signal_trust(&self) -> SignalTrust {
        self.signalled
            .as_ref()
            .map(|s| s.trust.clone())
            .unwrap_or_default()
    }

    /// Keeps the signal each of `chosen` had, so that their outcomes teach the run's
    /// [`SignalTrust`] (online, with signals).
    pub(super) fn note_signalled(&mut self, chosen: &[PageId], crawl: &CrawlState) {
        let state = self.signalled.get_or_insert_with(Signalled::default);
        for &p in chosen {
            let signal = crawl.signal(p).unwrap_or_default();
            state
                .pending
                .insert(p, (signal, crawl.page(p).last_refresh));
        }
    }

    /// The pages to refresh at `unit` (at most `budget`, distinct): the planned ones, topped up
    /// when the plan leaves spare capacity by the pages of highest remaining marginal value
    /// `c_p · ∂F/∂f(λ_p, f_p)`, ties by oldest last refresh, then page id (with nothing left to
    /// gain, that is the Age policy). Pages observed gone are skipped.
    /// Only pages `known` to the crawler are chosen (every page outside frontier mode). Each
    /// page's last refresh is the crawl state's: a pick whose fetch failed, or that a policy
    /// combining two planners dropped, was not refreshed.
    pub(super) fn choose_pages(
        &mut self,
        unit: Unit,
        budget: usize,
        crawl: &CrawlState,
        known: &dyn Fn(PageId) -> bool,
    ) -> Vec<PageId> {
        if budget == 0 || self.params.is_empty() {
            return Vec::new();
        }
        // The crawl state's last refreshes and gone pages: a pick whose fetch failed was not
        // refreshed.
        let last_refresh = crawl.last_refreshes(self.params.len());
        let gone = crawl.gone_pages(self.params.len());
        if self.plan_due(unit, budget) {
            self.replan(unit, budget, &last_refresh, &gone);
        }
        let idx = (unit - self.plan_start) as usize;
        let mut chosen: Vec<PageId> = self
            .schedule
            .plan
            .get(idx)
            .map(|v| {
                v.iter()
                    .copied()
                    .filter(|&p| !gone[p as usize] && known(p))
                    .take(budget)
                    .collect()
            })
            .unwrap_or_default();
        if chosen.len() < budget {
            let mut taken = vec![false; last_refresh.len()];
            for &p in &chosen {
                taken[p as usize] = true;
            }
            // At the optimum every page with 0 < f < 1 has marginal value μ (the KKT
            // condition), up to rounding: compared at full precision, the rounding would pick
            // among them instead of the tie-breaks.
            let marginal = |p: usize| {
                let (l, c) = self.params[p];
                let value = self.model.marginal_value(
                    l,
                    c,
                    self.schedule.frequencies.get(p).copied().unwrap_or(0.0),
                );
                without_rounding_noise(value)
            };
            // Each page's sort key computed once; only the best `wanted` are ordered (the
            // order is total, so these are the first `wanted` of a full sort).
            let mut rest: Vec<(f64, Unit, usize)> = (0..last_refresh.len())
                .filter(|&p| !taken[p] && !gone[p] && known(p as PageId))
                .map(|p| (marginal(p), last_refresh[p], p))
                .collect();
            let best_first = |a: &(f64, Unit, usize), b: &(f64, Unit, usize)| {
                b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2))
            };
            let wanted = budget - chosen.len();
            if wanted < rest.len() {
                rest.select_nth_unstable_by(wanted, best_first);
                rest.truncate(wanted);
            }
            rest.sort_unstable_by(best_first);
            chosen.extend(rest.into_iter().map(|(_, _, p)| p as PageId));
        }
        chosen
    }

    /// Online, when the crawler reads the site's change signals. A signal class the run's own
    /// fetches show to be informative at a copy's age ([`SignalTrust::is_informative`]) takes
    /// over the slots the schedule gives such pages this unit: they go to the pages of that
    /// class and age with the
    /// highest `c_p · P(changed since its copy | signal) · D(λ_p)` — the model's weight, times
    /// the chance a refresh finds a change (the signal weighed by the learned trust against
    /// the page's prior `π_p = 1 − e^{−λ_p·(t − t_p)}`), times how long the fresh copy is
    /// expected to stay fresh ([`fresh_share`]). The other slots keep the schedule's pages, so
    /// a site whose signals say nothing (a build-stamped sitemap) is crawled as without them;
    /// the schedule's split of the budget between the classes is kept (as LambdaCrawl splits
    /// its bandwidth between pages with and without complete change observations).
    ///
    /// A schedule plans for changes it cannot see; a signal shows them, and what is left to
    /// decide is which signalled pages are worth most — each family by its own weight (SBR:
    /// every change alike; EBR: how often users are shown the page; user-centric: its
    /// expected ΔQ per change). A share of the signal slots ([`EXPLORATION_SHARE`], carried
    /// over between units) goes first to quiet pages of highest `c_p · π_p · D(λ_p)`, so that
    /// the changes signals miss keep being found and their recall measured. Ties by oldest
    /// refresh, then page id.
    fn choose_signalled(&mut self, unit: Unit, budget: usize, crawl: &CrawlState) -> Vec<PageId> {
        let planned = self.choose_pages(unit, budget, crawl, &|p| crawl.is_refreshable(p));
        let mut state = self.signalled.take().unwrap_or_default();
        let informative = |page: PageId| {
            crawl.signal(page).is_some_and(|s| {
                s.class().any()
                    && state
                        .trust
                        .is_informative(s.class(), crawl.page(page).last_refresh, unit)
            })
        };
        let (signal_slots, mut chosen): (Vec<PageId>, Vec<PageId>) =
            planned.iter().partition(|&&p| informative(p));
        let slots = signal_slots.len();
        if slots > 0 {
            state.explore_credit += slots as f64 * EXPLORATION_SHARE;
            let explore = (state.explore_credit.floor() as usize).min(slots);
            state.explore_credit -= explore as f64;
            let kept: std::collections::HashSet<PageId> = chosen.iter().copied().collect();
            let candidates: Vec<SignalCandidate> = (0..self.params.len() as PageId)
                .filter(|&p| {
                    !kept.contains(&p)
                        && !crawl.page(p).gone
                        && crawl.is_refreshable(p)
                        && informative(p)
                })
                .map(|p| self.signal_candidate(p, unit, crawl, &state.trust))
                .collect();
            chosen.extend(best_signalled(candidates, slots, explore));
        }
        self.signalled = Some(state);
        self.note_signalled(&chosen, crawl);
        chosen
    }

    /// Takes back what [`RefreshPolicy::choose`] noted for `pages` it returned but the caller
    /// did not refresh (a policy that combines two planners' choices): their pending signals
    /// are dropped. (Their last refresh is the crawl state's, which never saw the pick.)
    pub(crate) fn withdraw(&mut self, pages: &[PageId]) {
        for &p in pages {
            if let Some(s) = self.signalled.as_mut() {
                s.pending.remove(&p);
            }
        }
    }

    /// What [`Self::choose_signalled`] ranks page `p` by at `unit`.
    fn signal_candidate(
        &self,
        p: PageId,
        unit: Unit,
        crawl: &CrawlState,
        trust: &SignalTrust,
    ) -> SignalCandidate {
        let (lambda, weight) = self.params[p as usize];
        let since = crawl.page(p).last_refresh;
        let prior = -(-lambda * unit.saturating_sub(since) as f64).exp_m1();
        let signal = crawl.signal(p).unwrap_or_default();
        let posterior = trust.changed_probability(&signal, since, unit, prior);
        let lasting = fresh_share(lambda, self.prior_interval);
        SignalCandidate {
            value: without_rounding_noise(weight * posterior * lasting),
            prior_value: without_rounding_noise(weight * prior * lasting),
            quiet: signal.flags_change_since(since) == Some(false),
            since,
            page: p,
        }
    }

    /// Records outcomes (online estimates read them at the next replan).
    fn record(&mut self, outcomes: &[RefreshOutcome]) {
        let theta = self.model.theta();
        for o in outcomes {
            self.grow(o.page as usize + 1);
            if let Some(obs) = self.observations.get_mut(o.page as usize) {
                // A discovery is a first copy, not a revisit: no change can be seen in it. (It
                // does say the page exists now: the crawl state no longer has it gone, so a
                // page seen 404 before it was created, or while it was deleted, is planned
                // again.)
                if !o.discovered {
                    obs.record(o, theta);
                    self.model.record(o);
                    if let Some(s) = self.signalled.as_mut() {
                        if let Some((signal, since)) = s.pending.remove(&o.page) {
                            s.trust.record(&signal, since, o.unit, o.changed || o.gone);
                        }
                    }
                }
            }
        }
    }
}

/// A planner is the policy of its model (SBR, EBR): it plans, replans and records outcomes.
impl<M: PageModel> RefreshPolicy for Planner<M> {
    fn name(&self) -> String {
        self.model.name().to_string()
    }

    fn reads(&self) -> Reads {
        Reads {
            delta_q: self.model.reads_delta_q(),
            ..Reads::default()
        }
    }

    fn label(&self) -> String {
        if !self.model.has_theta() {
            return self.model.name().to_string();
        }
        format!("{} (θ = {})", self.model.name(), self.model.theta())
    }

    fn settings(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        if self.model.has_theta() {
            m.insert("theta".into(), self.model.theta().into());
        }
        m.insert("replan_every".into(), self.replan_every.into());
        if let Some(s) = &self.signalled {
            m.insert("signal_trust".into(), s.trust.summary());
        }
        self.model.settings(&mut m);
        m
    }

    fn prepare(&mut self, context: &PolicyContext<'_>) {
        self.model.prepare(context);
        self.prepare_plan(context);
    }

    fn choose(&mut self, unit: Unit, budget: usize, crawl: &CrawlState) -> Vec<PageId> {
        self.grow(crawl.len());
        if self.mode == FitMode::Online && crawl.reads_signals() {
            if let Some(chosen) = M::choose_signalled(self, unit, budget, crawl) {
                return chosen;
            }
            return self.choose_signalled(unit, budget, crawl);
        }
        self.choose_pages(unit, budget, crawl, &|p| crawl.is_refreshable(p))
    }

    fn observe(&mut self, outcomes: &[RefreshOutcome]) {
        self.record(outcomes);
    }

    /// Each replan can weigh pages by how often users are shown them in the repository now
    /// (models that use views: EBR, in both modes).
    fn wants_views(&self, unit: Unit) -> bool {
        self.model.uses_views() && self.replans_at(unit)
    }

    fn observe_views(&mut self, view_weight: &[f64]) {
        self.model.observe_views(view_weight);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::ebr::Ebr;
    use crate::policy::testkit::context;

    /// A pick whose fetch the crawl state never recorded (a failed fetch, a pick a combining
    /// policy dropped) was not refreshed: the plan continues from the crawl state's last
    /// refresh. Here every fetch of page 0 fails; at the replan its wait since the last
    /// recorded refresh puts it first.
    #[test]
    fn a_pick_the_crawl_state_did_not_record_is_planned_as_not_refreshed() {
        let pages: Vec<PageId> = (0..6).collect();
        let views = [1.0; 6];
        let ctx = context(FitMode::Online, &pages, &views, None, 12, 2);
        let run = |page_0_fails: bool| {
            let mut ebr = Ebr::at_threshold(0.0);
            ebr.prepare(&ctx);
            let mut crawl = CrawlState::default();
            let mut picks = Vec::new();
            for unit in 1..=8 {
                let chosen = ebr.choose(unit, 2, &crawl);
                for &p in chosen.iter().filter(|&&p| !(page_0_fails && p == 0)) {
                    crawl.note_fetch(p, unit, false);
                }
                picks.push(chosen);
            }
            picks
        };
        let (fetched, failed) = (run(false), run(true));
        assert_eq!(
            fetched[..4],
            failed[..4],
            "the same plan until the replan at unit 5"
        );
        assert_ne!(fetched, failed);
        assert!(failed[4].contains(&0), "{failed:?}");
    }
}
