//! Paper 003's user-centric refresh (Pandey & Olston, "User-Centric Web Crawling", WWW 2005,
//! §6; see ARCHITECTURE.md, § The user-centric metric and its estimate).
//!
//! With `R(p)` the past refresh instants of `p` and `LR(p, t)` the refresh before `t`:
//! `ΔQ̄(p) = mean over t ∈ R(p) of ΔQ_A(p, t) / (t − LR(p, t))` and
//! `P(p, t) = ΔQ̄(p) · (t − LR(p, t))`. Each unit, the `B` pages of highest priority are
//! refreshed.
//!
//! * Online: the ratios come from the `delta_q` of observed [`RefreshOutcome`]s (over the whole
//!   history by default, or a sliding window of the last `W` refreshes).
//! * Oracle: from [`crate::policy::PageHistory::delta_q`], measured by refreshing right after every
//!   change (paper 003 §6, Fig. 3): the refresh at change unit `c_i` follows the one at the
//!   previous change `c_{i−1}` (`c_0 = 0`, the initial crawl), so the ratios are
//!   `ΔQ_A(c_i) / (c_i − c_{i−1})`. A page that never changed has `ΔQ̄ = 0` (measured: a refresh
//!   gains nothing).
//!
//! # Estimating `ΔQ̄` ([`Estimator`])
//!
//! * [`Estimator::MeanOfRatios`] is paper 003's extrapolation: the mean of the ratios above.
//!   Pages never measured (online pages not yet refreshed, oracle pages with changes but no
//!   `delta_q`) get the mean `ΔQ̄` of the measured pages (0 while none is). This is the default
//!   in oracle mode, where every ratio is a measured change.
//! * [`Estimator::Pooled`] treats `ΔQ̄(p)` as a rate — quality gained
//!   per unit of staleness — and estimates it as `(ΣΔQ_A + m₀·τ) / (ΣΔt + τ)` over the page's
//!   observed refreshes: its own evidence plus a prior of one pseudo-interval `τ` at the pooled
//!   rate `m₀ = ΣΔQ_A / ΣΔt` of every observed refresh. `τ = N/B`, one round-robin cycle, so
//!   the prior weighs as much as one full sweep of the site (the same prior SBR/EBR's online
//!   change rates use, [`crate::policy::planned::online_rate`]).
//!
//!   Why not the mean of ratios online: a deployed crawler mostly refreshes pages that have not
//!   changed since the last visit, and a single such refresh measures `ΔQ̄ = 0` and, under the
//!   mean of ratios, writes the page off for good; the pages whose changes matter are then only
//!   found among the never-visited ones. The pooled estimate instead decays a page measured at
//!   0 like `τ/(Δt + τ)`, so it is revisited once its wait makes it as promising as the
//!   unexplored pages, and a page that did pay off is ranked by its whole observed rate, not by
//!   its luckiest interval. With nothing measured yet it is the unbiased guess, like
//!   the mean-of-ratios default.
//! * [`Estimator::Viewed`] is `Pooled` with a prior that depends on
//!   the page: `m₀(p) = α + β·v(p)`, where `v(p) = Σ_q f_q · I(rank of p in q's results)` is
//!   how often users are shown `p` in the repository at unit 0 (the quantity the user-centric
//!   metric weights by, and the one EBR plans with; the crawler has it from its own index, so
//!   it is no peek at the live Web). `α, β ≥ 0` are fitted by weighted least squares to the
//!   observed rates (weights `Δt`), so when views do not predict `ΔQ` on a site, `β` falls to
//!   0 and this is `Pooled`. Online, a crawler learns `ΔQ̄` from few refreshes that found a
//!   change; the fitted prior lets it look first at the pages whose changes users would see.
//!
//! * [`Estimator::ChangeGain`] estimates the expected gain of a
//!   refresh now directly, as the probability that the page changed since its last fetch times
//!   the gain its changes bring: `P(p, t) = (1 − e^{−λ_p (t − LR)}) · G(p)`.
//!   Online, `λ_p` is unknown; by default ([`RateModel::Mixture`]) it has a posterior under
//!   the site's distribution of change rates, learned by EM from every page's visits
//!   ([`RateMixture`]), and the priority is the expectation over that posterior: most pages
//!   change rarely, so a page not yet visited probably has not changed, which a point rate at
//!   the site's mean overstates over long waits. The distribution is learned per directory (host and URL path up to its last `/`), each
//!   directory's being the site's plus what its own visited pages showed, in the proportion
//!   under which the visits are likeliest ([`RateMixture::set_groups`]): pages of one
//!   directory tend to change alike (paper 002's premise; Cho & Ntoulas, "Effective change
//!   detection using sampling", VLDB 2002), so a page never visited in a directory whose pages
//!   were found changing is likelier to have changed than one in a quiet directory; a site in
//!   one directory, or whose directories change alike, keeps the site's distribution
//!   ([`RateModel::SiteMixture`] is one distribution for the site).
//!   [`RateModel::Pooled`] is the point estimate:
//!   the maximum-likelihood Poisson rate of the page's own visits at irregular
//!   intervals ([`irregular_mle_rate`]), with a prior of one round-robin cycle `τ` of
//!   pseudo-visits at the rate pooled over every page's visits. `G(p)` is the mean ΔQ_A of its
//!   refreshes that found a change, shrunk by one pseudo-change towards `κ·(v(p) + v̄)`, its
//!   exposure to users (view weight plus one mean view, re-read from the repository every
//!   [`VIEWS_EVERY`] units) times the gain per unit of exposure over every change seen. Unlike the rate estimators above, a refresh that found nothing lowers the page's
//!   change rate and leaves its gain alone, so a page visited too soon is not mistaken for a
//!   page whose changes do not matter; and the priority saturates at `G(p)` instead of growing
//!   linearly with the wait, because a second change before the refresh adds little to what
//!   users see beyond the first. Oracle mode uses the history's change rate and measured gains;
//!   told only one of them ([`OracleKnowledge`], `knows=rates|gains`) it learns the other as
//!   online mode does, which measures what each estimate costs online mode.
//!
//! * [`Estimator::Whittle`] keeps `ChangeGain`'s two estimates (λ_p, `G(p)`) and ranks pages
//!   by the refresh index of the time-averaged problem, [`refresh_index`]:
//!   `W = G·((1 − q^k)/(1 − q) − k·q^k)`, `q = e^{−λ}`, `k = t − LR`. `ChangeGain`'s priority is
//!   myopic — the expected gain at the next evaluation — so under a large budget it refreshes
//!   pages that change every unit every unit and leaves rarely changing pages waiting behind
//!   them, although one refresh of the latter keeps many units fresh. The index is the price of
//!   a refresh at which waiting one unit more costs as much quality as it saves; the Lagrangian
//!   optimum of SBR/EBR (Cho & Garcia-Molina's frequencies) refreshes each page when its index
//!   reaches the common price, so refreshing the `B` pages of highest index is that optimum
//!   made greedy, with user-centric gains as the weights. It equals `ChangeGain` one unit after
//!   a refresh.
//!
//! Ties (notably the many pages of priority 0) are broken by the probability that the page
//! changed since its last refresh (so a page whose effect the estimate cannot see is still
//! refreshed before pages that never change, with budget to spare), then the oldest last
//! refresh, then page id, so pages with nothing to tell them apart are visited round-robin.
//!
//! The measurements that chose between these estimators are in docs/results.md.

use std::collections::VecDeque;

use crate::change::{change_probability, irregular_mle_rate, oracle_rate, RateMixture};
use crate::corpus::{PageId, Unit};
use crate::crawl::CrawlState;
use crate::policy::{ChangeHistory, FitMode, PolicyContext, Reads, RefreshOutcome, RefreshPolicy};

/// Time-normalised quality change of one refresh: `ΔQ_A(p, t) / (t − LR(p, t))` (paper 003 §6).
/// An interval of 0 is treated as 1.
pub fn normalised_delta_q(delta_q: f64, unit: Unit, last_refresh: Unit) -> f64 {
    delta_q / unit.saturating_sub(last_refresh).max(1) as f64
}

/// Units since page `p`'s last refresh `last[p]`, at `unit`.
fn elapsed(unit: Unit, last: &[Unit], p: usize) -> f64 {
    unit.saturating_sub(last[p]) as f64
}

/// Refresh priority `P(p, t) = ΔQ̄(p) · (t − LR(p, t))` (paper 003 §6).
pub fn priority(mean_normalised: f64, unit: Unit, last_refresh: Unit) -> f64 {
    mean_normalised * unit.saturating_sub(last_refresh) as f64
}

/// The oracle ratios of one page: `delta_q[i] / (c_i − c_{i−1})` with `c_0 = 0`.
pub fn oracle_ratios(change_units: &[Unit], delta_q: &[f64]) -> Vec<f64> {
    let mut prev = 0;
    change_units
        .iter()
        .zip(delta_q)
        .map(|(&c, &dq)| {
            let r = normalised_delta_q(dq, c, prev);
            prev = c;
            r
        })
        .collect()
}

/// Refresh index of a page whose copy loses `gain` of quality per unit while stale, that
/// changes as a Poisson process of `rate` per unit, and was last refreshed `elapsed` units ago:
/// `W(k) = G·((1 − q^k)/(1 − q) − k·q^k)` with `q = e^{−λ}`.
///
/// It is the Lagrange price of one refresh at which refreshing now (period `k`) and waiting one
/// more unit (period `k + 1`) cost the same time-averaged quality: with a refresh every `k`
/// units the copy is stale at `Σ_{j<k} (1 − q^j)` of the `k` evaluations, so the loss over a
/// period is `C(k) = G·(k − (1 − q^k)/(1 − q))`, and `(C(k) + W)/k = (C(k+1) + W)/(k+1)` gives
/// `W(k)`. Refreshing the pages of highest index is the greedy form of the Lagrangian optimum
/// (the discrete-time counterpart of the continuous-time optimum of Azar et al., "Tractable
/// near-optimal policies for crawling", PNAS 2018, whose crawl condition is
/// `(μ/Δ)·(1 − (1 + Δτ)·e^{−Δτ}) = λ`; Whittle's index of this restless bandit). `W(1) = G·(1 − q)`,
/// the expected gain of refreshing now ([`Estimator::ChangeGain`]); `W` grows with the wait
/// towards `G/(1 − q)`, so a page that changes every unit is worth `G` per refresh while a
/// rarely changing page, once it has waited, is worth more: refreshing it buys many fresh
/// units.
pub fn refresh_index(gain: f64, rate: f64, elapsed: f64) -> f64 {
    if gain <= 0.0 || elapsed <= 0.0 || rate.is_nan() || rate <= 0.0 {
        return 0.0;
    }
    if rate.is_infinite() {
        return gain;
    }
    let q = (-rate).exp();
    // (1 − q^k)/(1 − q) with expm1 for accuracy at small rates.
    let geometric = (-rate * elapsed).exp_m1() / (-rate).exp_m1();
    (gain * (geometric - elapsed * q.powf(elapsed))).max(0.0)
}

/// How `ΔQ̄(p)` is estimated from a page's observed refreshes (see the module docs).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum Estimator {
    /// Paper 003: mean of `ΔQ_A / Δt`; unmeasured pages get the mean over measured pages.
    #[value(
        help = "Paper 003: the mean of ΔQ_A / Δt over a page's refreshes; unmeasured pages get the mean over measured pages"
    )]
    MeanOfRatios,
    /// `(ΣΔQ_A + m₀·τ) / (ΣΔt + τ)`: the page's rate shrunk towards the pooled rate `m₀`.
    #[value(help = "The page's ΔQ_A rate shrunk towards the rate pooled over every page")]
    Pooled,
    /// As `Pooled`, with the prior `m₀(p) = α + β·v(p)` fitted (weighted least squares,
    /// `α, β ≥ 0`) to the observed rates against the pages' view weights `v(p)`.
    #[value(help = "As pooled, with a prior fitted to the pages' view weights")]
    Viewed,
    /// Expected gain of a refresh now: the probability `1 − e^{−λ(t − LR)}` that the page
    /// changed since its last fetch (λ by maximum likelihood over its irregular visits) times
    /// the gain its changes bring (mean measured ΔQ_A of refreshes that found a change, shrunk
    /// towards a view-weighted prior).
    #[value(
        help = "The probability that the page changed since its last fetch times the gain its changes bring"
    )]
    ChangeGain,
    /// The same change rate and gain given a change, ranked by the refresh index of the
    /// time-averaged problem: the gain a refresh now buys over the coming units, not only at
    /// the next evaluation (see `refresh_index`).
    #[value(
        help = "The same change rate and gain, ranked by the refresh index: the gain a refresh buys over the coming units (default in oracle mode)"
    )]
    Whittle,
    /// Frequencies planned as EBR plans them (Lagrangian optimum, same schedule), with each
    /// page's expected ΔQ_A per change as its weight: EBR's view weight until gains are
    /// measured, then shrunk towards it with a strength cross-validated on the run's own gains
    /// (see [`super::planner`]).
    #[value(
        help = "EBR's Lagrangian plan with each page's expected ΔQ_A per change as its weight, shrunk towards EBR's view weight by cross-validation (default online)"
    )]
    Planned,
    /// The planner and EBR side by side: the pages both choose, then the slots where they
    /// disagree shared by the probability that the planner's own picks gain more per refresh
    /// than EBR's, as measured so far (see [`super::hedge`]).
    #[value(
        help = "The planner and EBR side by side, the slots where they disagree shared by how much each one's own picks were measured to gain"
    )]
    Hedged,
}

impl Estimator {
    /// The name used on the command line and in outputs.
    pub fn as_str(self) -> &'static str {
        match self {
            Estimator::MeanOfRatios => "mean-of-ratios",
            Estimator::Pooled => "pooled",
            Estimator::Viewed => "viewed",
            Estimator::ChangeGain => "change-gain",
            Estimator::Whittle => "whittle",
            Estimator::Planned => "planned",
            Estimator::Hedged => "hedged",
        }
    }

    /// The estimator named `name` (as [`Estimator::as_str`] spells it).
    pub fn parse(name: &str) -> Option<Self> {
        [
            Estimator::MeanOfRatios,
            Estimator::Pooled,
            Estimator::Viewed,
            Estimator::ChangeGain,
            Estimator::Whittle,
            Estimator::Planned,
            Estimator::Hedged,
        ]
        .into_iter()
        .find(|e| e.as_str() == name)
    }

    /// The default of a fit mode. Online, the planner: it plans as EBR plans, from what EBR
    /// knows (view weights, its own visits), and moves a page's weight off EBR's only as far
    /// as the page's measured gains predict held-out gains better than that prior
    /// (cross-validated); the refresh index, which trusts its gain estimates, needed twice
    /// EBR's budget online on an unseen documentation site. The planner hedged with EBR's own
    /// plan ([`Estimator::Hedged`]) judges the two by the gains of their own picks, which do
    /// not show what a plan gains by its timing: it ended at EBR's budget where the planner
    /// needed 5 % less (docs/results.md, § The hedge). Oracle,
    /// the refresh index: told the true rates and gains, it has nothing to shrink or hedge, and
    /// it needed less budget than the planner at every gap target on EmacsWiki and a generated
    /// site. Paper 003's mean of ratios stays available by name; its priority grows without
    /// bound for any page with a measured gain, so under a large budget it refreshes rarely
    /// changing pages every unit while pages whose gain it measured as 0 wait (see
    /// [`refresh_index`]).
    pub fn default_for(mode: FitMode) -> Self {
        match mode {
            FitMode::Oracle => Estimator::Whittle,
            FitMode::Online => Estimator::Planned,
        }
    }
}

/// How often online [`Estimator::ChangeGain`] re-reads the repository's view weights, in units:
/// the cadence at which EBR replans on them (`policy::planned`'s default `replan_every`).
pub const VIEWS_EVERY: Unit = 4;

/// How online [`Estimator::ChangeGain`] and [`Estimator::Whittle`] estimate each page's change
/// rate from the crawler's visits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RateModel {
    /// Each page's posterior under the distribution of rates of its directory, learned from
    /// every page's visits ([`RateMixture`], with the pages' directories as its groups: each
    /// directory's distribution is the site's plus what its own visited pages showed, in a
    /// proportion the visits choose); priorities are expectations over that posterior.
    #[default]
    Mixture,
    /// The same with one distribution for the whole site (directories ignored).
    SiteMixture,
    /// Each page's own maximum-likelihood rate with one round-robin cycle of pseudo-visits at
    /// the pooled rate as prior (a point estimate).
    Pooled,
}

impl RateModel {
    pub fn as_str(self) -> &'static str {
        match self {
            RateModel::Mixture => "mixture",
            RateModel::SiteMixture => "site-mixture",
            RateModel::Pooled => "pooled",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        [
            RateModel::Mixture,
            RateModel::SiteMixture,
            RateModel::Pooled,
        ]
        .into_iter()
        .find(|m| m.as_str() == name)
    }
}

/// What oracle-mode [`Estimator::ChangeGain`] and [`Estimator::Whittle`] are told of the
/// history. Their two estimates — each page's change rate λ_p and gain given a change G(p) —
/// are the only difference between oracle and online mode (the oracle does not know when a
/// page changes, only how often and by how much), so telling the oracle one of them and
/// letting it learn the other from its own refreshes, as online mode does, measures which
/// estimate online mode loses its budget to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OracleKnowledge {
    /// Both: the history's change rates and measured gains.
    #[default]
    Both,
    /// The change rates; gains learned as online.
    Rates,
    /// The gains; change rates learned as online (with the [`RateModel`]).
    Gains,
}

impl OracleKnowledge {
    pub fn as_str(self) -> &'static str {
        match self {
            OracleKnowledge::Both => "both",
            OracleKnowledge::Rates => "rates",
            OracleKnowledge::Gains => "gains",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        [
            OracleKnowledge::Both,
            OracleKnowledge::Rates,
            OracleKnowledge::Gains,
        ]
        .into_iter()
        .find(|k| k.as_str() == name)
    }
}

/// The user-centric policy (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct UserCentric {
    /// Sliding window of the last `W` refreshes; `None` = the whole history.
    pub(crate) window: Option<usize>,
    /// `None`: [`Estimator::default_for`] the fit mode.
    pub(crate) estimator: Option<Estimator>,
    /// The estimator in use (set by `prepare`).
    active: Option<Estimator>,
    /// Per page, the observed refreshes as `(ΔQ_A, Δt)`.
    samples: Vec<VecDeque<(f64, f64)>>,
    measured: Vec<bool>,
    fitted_on_history: bool,
    /// τ of the pooled estimator: `N/B` units (at least 1).
    prior_interval: f64,
    /// View weights at unit 0 (the `Viewed` estimator's covariate).
    view_weight: Vec<f64>,
    /// Per page, what its visits revealed about its changes (the `ChangeGain` estimator).
    changes: Vec<ChangeRecord>,
    /// Oracle mode: each page's true change rate (changes per unit over the history).
    oracle_change_rate: Option<Vec<f64>>,
    /// Oracle mode, [`OracleKnowledge::Gains`]: each page's gain given a change, fixed from
    /// the history (what [`UserCentric::gains_given_change`] returns).
    oracle_gains: Option<Vec<f64>>,
    /// What oracle mode is told of the history.
    pub(crate) knowledge: OracleKnowledge,
    /// What this run was told (set by `prepare`): `knowledge` in oracle mode with the
    /// change-gain or whittle estimator, `Both` otherwise (nothing partial applies).
    told: Option<OracleKnowledge>,
    /// How online change rates are estimated.
    pub(crate) rate_model: RateModel,
    /// Online, [`RateModel::Mixture`]: the site's distribution of rates and each page's
    /// visits (refitted at every `choose`).
    mixture: Option<RateMixture>,
}

/// What a page's visits revealed: the intervals that ended finding a change (with the ΔQ_A
/// the refresh measured) and the time spent in intervals that found none.
#[derive(Debug, Clone, Default)]
struct ChangeRecord {
    changed_intervals: Vec<f64>,
    unchanged_time: f64,
    gain_sum: f64,
}

impl ChangeRecord {
    fn record(&mut self, interval: f64, changed: bool, delta_q: f64) {
        if changed {
            self.changed_intervals.push(interval.max(1.0));
            self.gain_sum += delta_q;
        } else {
            self.unchanged_time += interval.max(1.0);
        }
    }

    fn change_count(&self) -> usize {
        self.changed_intervals.len()
    }
}

/// Each of the first `pages` pages' change rate over the whole history (0 for a page the history
/// does not list).
fn history_change_rates(history: &ChangeHistory, pages: usize) -> Vec<f64> {
    (0..pages)
        .map(|p| {
            history.pages.get(p).map_or(0.0, |page| {
                oracle_rate(page.change_units.len(), history.units)
            })
        })
        .collect()
}

/// Each of the first `pages` pages' changes in the history, each with the gain measured by
/// refreshing right after it.
fn history_gain_records(history: &ChangeHistory, pages: usize) -> Vec<ChangeRecord> {
    let mut records = vec![ChangeRecord::default(); pages];
    for (record, page) in records.iter_mut().zip(&history.pages) {
        for &dq in &page.delta_q {
            record.record(1.0, true, dq);
        }
    }
    records
}

/// Prior of the online change rates: pseudo-observations of one interval `τ` that found a
/// change and an unchanged time chosen so that the prior alone gives the rate `prior_rate`
/// (the root of `τ/(e^{λτ} − 1) = U₀`). It weighs as one visit per round-robin cycle.
fn rate_with_prior(record: &ChangeRecord, prior_rate: f64, tau: f64) -> f64 {
    let prior_unchanged = tau / (prior_rate * tau).exp_m1();
    let mut changed: Vec<(f64, f64)> = record.changed_intervals.iter().map(|&t| (t, 1.0)).collect();
    changed.push((tau, 1.0));
    irregular_mle_rate(&changed, record.unchanged_time + prior_unchanged)
}

impl UserCentric {
    pub fn new(window: Option<usize>) -> Self {
        UserCentric {
            window,
            ..Default::default()
        }
    }

    pub fn with_estimator(mut self, estimator: Option<Estimator>) -> Self {
        self.estimator = estimator;
        self
    }

    pub fn with_rate_model(mut self, rate_model: RateModel) -> Self {
        self.rate_model = rate_model;
        self
    }

    pub fn with_oracle_knowledge(mut self, knowledge: OracleKnowledge) -> Self {
        self.knowledge = knowledge;
        self
    }

    /// Makes room for page ids `0..count`: pages the crawler met after `prepare` start
    /// unmeasured, never refreshed, with no view weight.
    fn grow(&mut self, count: usize) {
        if count > self.samples.len() {
            self.samples.resize(count, VecDeque::new());
            self.measured.resize(count, false);
            self.changes.resize(count, ChangeRecord::default());
            if let Some(m) = &mut self.mixture {
                m.grow(count);
            }
        }
    }

    fn push_sample(&mut self, page: usize, delta_q: f64, interval: f64) {
        let q = &mut self.samples[page];
        q.push_back((delta_q, interval.max(1.0)));
        if let Some(w) = self.window {
            while q.len() > w.max(1) {
                q.pop_front();
            }
        }
        self.measured[page] = true;
    }

    /// `ΔQ̄(p)` of every page, with the active estimator.
    pub fn mean_normalised(&self) -> Vec<f64> {
        match self.active.unwrap_or(Estimator::MeanOfRatios) {
            Estimator::MeanOfRatios => self.mean_of_ratios(),
            Estimator::Pooled => self.pooled(),
            Estimator::Viewed => self.viewed(),
            // Expected gain per unit of staleness for a short wait: λ·G. (The planner runs
            // apart, [`super::planner`]; read here, its estimates are change-gain's.)
            Estimator::ChangeGain | Estimator::Whittle | Estimator::Planned | Estimator::Hedged => {
                self.change_rates()
                    .iter()
                    .zip(self.gains_given_change())
                    .map(|(l, g)| if l.is_finite() { l * g } else { g })
                    .collect()
            }
        }
    }

    fn mean_of_ratios(&self) -> Vec<f64> {
        let means: Vec<Option<f64>> = (0..self.samples.len())
            .map(|p| {
                let s = &self.samples[p];
                if !self.measured[p] {
                    None
                } else if s.is_empty() {
                    Some(0.0)
                } else {
                    Some(s.iter().map(|(dq, dt)| dq / dt).sum::<f64>() / s.len() as f64)
                }
            })
            .collect();
        let known: Vec<f64> = means.iter().flatten().copied().collect();
        let default = if known.is_empty() {
            0.0
        } else {
            known.iter().sum::<f64>() / known.len() as f64
        };
        means.into_iter().map(|m| m.unwrap_or(default)).collect()
    }

    /// `(ΣΔQ_A, ΣΔt)` of each page's observed refreshes.
    fn page_sums(&self) -> Vec<(f64, f64)> {
        self.samples
            .iter()
            .map(|s| {
                s.iter()
                    .fold((0.0, 0.0), |(a, b), (dq, dt)| (a + dq, b + dt))
            })
            .collect()
    }

    fn viewed(&self) -> Vec<f64> {
        let sums = self.page_sums();
        let view = |p: usize| self.view_weight.get(p).copied().unwrap_or(0.0);
        let (alpha, beta) = weighted_line_fit(&sums, view);
        Self::shrunk(sums, self.prior_interval, |p| alpha + beta * view(p))
    }

    fn pooled(&self) -> Vec<f64> {
        let sums = self.page_sums();
        let (all_dq, all_dt) = sums
            .iter()
            .fold((0.0, 0.0), |(a, b), (dq, dt)| (a + dq, b + dt));
        let pooled_rate = if all_dt > 0.0 { all_dq / all_dt } else { 0.0 };
        Self::shrunk(sums, self.prior_interval, |_| pooled_rate)
    }

    /// Each page's change rate λ: the oracle's count over the history, or online the
    /// maximum-likelihood rate of its own visits ([`irregular_mle_rate`]) with a prior of one
    /// round-robin cycle at the rate pooled over every page's visits (itself with a prior of
    /// half a change per cycle, `ln 2/τ`, before anything is seen).
    pub fn change_rates(&self) -> Vec<f64> {
        if let Some(rates) = &self.oracle_change_rate {
            return rates.clone();
        }
        if let Some(m) = &self.mixture {
            return m.mean_rates();
        }
        let tau = self.prior_interval.max(1.0);
        let pooled = {
            let mut all = ChangeRecord::default();
            for r in &self.changes {
                all.changed_intervals
                    .extend_from_slice(&r.changed_intervals);
                all.unchanged_time += r.unchanged_time;
            }
            rate_with_prior(&all, std::f64::consts::LN_2 / tau, tau)
        };
        self.changes
            .iter()
            .map(|r| rate_with_prior(r, pooled, tau))
            .collect()
    }

    /// Expected ΔQ_A of refreshing each page given that it changed: the mean over its
    /// refreshes that found a change, shrunk (one pseudo-change) towards the prior
    /// `g₀(p) = κ·(v(p) + v̄)`: a change matters in proportion to how often users are shown the
    /// page, `v(p)`, plus one mean view `v̄` (add-one smoothing: a page users are not shown now
    /// may rise, so no page's prior is 0), with `κ` the gain per unit of exposure over every
    /// change seen (a ratio estimator, unbiased whichever pages the policy happened to visit).
    pub fn gains_given_change(&self) -> Vec<f64> {
        if let Some(gains) = &self.oracle_gains {
            return gains.clone();
        }
        let view = |p: usize| self.view_weight.get(p).copied().unwrap_or(0.0);
        let sums: Vec<(f64, f64)> = self
            .changes
            .iter()
            .map(|r| (r.gain_sum, r.change_count() as f64))
            .collect();
        let mean_view = (0..sums.len()).map(view).sum::<f64>() / sums.len().max(1) as f64;
        // With no view weights at all (no workload query matches), every page is equally exposed.
        let exposure = |p: usize| {
            if mean_view > 0.0 {
                view(p) + mean_view
            } else {
                1.0
            }
        };
        let (gained, exposed) = sums
            .iter()
            .enumerate()
            .fold((0.0, 0.0), |(g, e), (p, &(dq, k))| {
                (g + dq, e + k * exposure(p))
            });
        let gain_per_exposure = if exposed > 0.0 && gained > 0.0 {
            gained / exposed
        } else {
            // Nothing gained yet: only the order of pages matters, and it is their exposure.
            1.0
        };
        Self::shrunk(sums, 1.0, |p| gain_per_exposure * exposure(p))
    }

    /// Priority of [`Estimator::ChangeGain`]: `(1 − e^{−λ(t − LR)}) · G(p)`, with `rates` the
    /// pages' [`UserCentric::change_rates`].
    fn change_gain_priorities(&self, unit: Unit, rates: &[f64], last: &[Unit]) -> Vec<f64> {
        self.rate_gain_priorities(unit, rates, last, |gain, rate, elapsed| {
            change_probability(rate, elapsed) * gain
        })
    }

    /// Per page, `f(λ_p, t − LR(p))`: at its point rate `rates[p]`, or under the mixture the
    /// expectation over its posterior (`last[p]`: LR(p), the crawl state's last refresh).
    fn over_rates(
        &self,
        unit: Unit,
        rates: &[f64],
        last: &[Unit],
        f: impl Fn(f64, f64) -> f64,
    ) -> Vec<f64> {
        let Some(m) = &self.mixture else {
            return (0..rates.len())
                .map(|p| f(rates[p], elapsed(unit, last, p)))
                .collect();
        };
        // Waits are whole units, so `f` is needed at few (rate, wait) pairs: computed once per
        // wait for the whole grid, then each page's expectation is a weighted sum.
        let mut at_wait: Vec<Option<Vec<f64>>> = vec![None; unit as usize + 1];
        (0..rates.len())
            .map(|p| {
                let k = elapsed(unit, last, p);
                let values = at_wait[k as usize]
                    .get_or_insert_with(|| m.rates().iter().map(|&r| f(r, k)).collect());
                m.expectation_of(m.posterior(p), values)
            })
            .collect()
    }

    /// Per page, the probability that it changed since its last refresh.
    fn changed_since(&self, unit: Unit, rates: &[f64], last: &[Unit]) -> Vec<f64> {
        self.over_rates(unit, rates, last, change_probability)
    }

    /// Priority of [`Estimator::Whittle`]: [`refresh_index`] of each page's gain given a
    /// change, change rate and units since its last refresh.
    fn whittle_priorities(&self, unit: Unit, rates: &[f64], last: &[Unit]) -> Vec<f64> {
        self.rate_gain_priorities(unit, rates, last, refresh_index)
    }

    /// The refresh priority of every page at `unit` under the active estimator, with `rates`
    /// the pages' [`UserCentric::change_rates`] and `last` their last refreshes (the crawl
    /// state's, [`CrawlState::last_refreshes`]).
    pub fn priorities(&self, unit: Unit, rates: &[f64], last: &[Unit]) -> Vec<f64> {
        match self.active {
            Some(Estimator::ChangeGain) => self.change_gain_priorities(unit, rates, last),
            Some(Estimator::Whittle) => self.whittle_priorities(unit, rates, last),
            _ => {
                let means = self.mean_normalised();
                (0..means.len())
                    .map(|p| priority(means[p], unit, last[p]))
                    .collect()
            }
        }
    }

    /// `value(G(p), λ_p, t − LR(p))` of every page.
    /// Under the mixture, the expectation over each page's posterior rate (`value` is linear
    /// in the gain, so the gain is factored out; a gain that is not positive is worth 0).
    fn rate_gain_priorities(
        &self,
        unit: Unit,
        rates: &[f64],
        last: &[Unit],
        value: impl Fn(f64, f64, f64) -> f64,
    ) -> Vec<f64> {
        let gains = self.gains_given_change();
        if self.mixture.is_none() {
            return (0..rates.len())
                .map(|p| value(gains[p], rates[p], elapsed(unit, last, p)))
                .collect();
        }
        self.over_rates(unit, rates, last, |rate, elapsed| value(1.0, rate, elapsed))
            .into_iter()
            .zip(gains)
            .map(|(v, g)| if g > 0.0 && v > 0.0 { v * g } else { 0.0 })
            .collect()
    }

    /// `(ΣΔQ_A + m₀(p)·τ) / (ΣΔt + τ)` per page: its observed rate with a prior of one
    /// pseudo-interval `τ` at rate `prior(p)`.
    fn shrunk(sums: Vec<(f64, f64)>, tau: f64, prior: impl Fn(usize) -> f64) -> Vec<f64> {
        sums.into_iter()
            .enumerate()
            .map(|(p, (dq, dt))| (dq + prior(p) * tau) / (dt + tau))
            .collect()
    }
}

/// Read by the frontier-mode wrapper (`policy::new_pages`, issue 16).
impl UserCentric {
    /// Re-estimates the distributions of change rates from the visits so far (online,
    /// [`RateModel::Mixture`] over the directories of `crawl`'s held pages, or
    /// [`RateModel::SiteMixture`]); called before the rates are read at each unit.
    pub fn fit_rates(&mut self, crawl: &CrawlState) {
        if let Some(m) = &mut self.mixture {
            if self.rate_model == RateModel::Mixture {
                m.set_groups(crawl.knowledge().directory_ids());
            }
            m.fit();
        }
    }

    /// The estimator in use (after `prepare`).
    pub fn active_estimator(&self) -> Option<Estimator> {
        self.active
    }

    /// What the run is told of the history: after `prepare`, only what applied (online mode,
    /// or an estimator other than change-gain and whittle, is told nothing partial).
    pub fn knowledge_in_use(&self) -> OracleKnowledge {
        self.told.unwrap_or(self.knowledge)
    }
}

/// Fits `y/w ≈ α + β·x(p)` over pages given as `(y, w)` sums (`y` the summed response, `w`
/// its weight: units observed, or changes seen) by weighted least squares with `α, β ≥ 0`
/// (a negative coefficient is set to 0 and the other refitted alone).
fn weighted_line_fit(sums: &[(f64, f64)], x: impl Fn(usize) -> f64) -> (f64, f64) {
    let (mut w, mut sx, mut sxx, mut sy, mut sxy) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for (p, &(dy, dw)) in sums.iter().enumerate() {
        let xp = x(p);
        w += dw;
        sx += dw * xp;
        sxx += dw * xp * xp;
        sy += dy;
        sxy += dy * xp;
    }
    if w <= 0.0 {
        return (0.0, 0.0);
    }
    let det = w * sxx - sx * sx;
    let beta = if det > 0.0 {
        (w * sxy - sx * sy) / det
    } else {
        0.0
    };
    let alpha = (sy - beta * sx) / w;
    if beta < 0.0 {
        (sy / w, 0.0)
    } else if alpha < 0.0 {
        (0.0, if sxx > 0.0 { sxy / sxx } else { 0.0 })
    } else {
        (alpha, beta)
    }
}

impl UserCentric {
    /// Oracle mode told everything: the history's rates and gains, and the ratio estimators'
    /// samples.
    fn fit_on_history(&mut self, history: &ChangeHistory, n: usize) {
        self.fitted_on_history = true;
        self.changes = history_gain_records(history, n);
        self.oracle_change_rate = Some(history_change_rates(history, n));
        for (p, page) in history.pages.iter().enumerate().take(n) {
            if page.change_units.is_empty() {
                // Measured: a refresh at any time gains nothing.
                self.measured[p] = true;
                if self.active == Some(Estimator::Pooled) {
                    self.push_sample(p, 0.0, f64::from(history.units.max(1)));
                }
            } else if page.delta_q.len() == page.change_units.len() {
                let mut prev = 0;
                for (&c, &dq) in page.change_units.iter().zip(&page.delta_q) {
                    self.push_sample(p, dq, f64::from(c.saturating_sub(prev)));
                    prev = c;
                }
            }
        }
    }
}

impl RefreshPolicy for UserCentric {
    fn name(&self) -> String {
        "user-centric".to_string()
    }

    /// The measured ΔQ_A of each refresh is what it learns its gains from.
    fn reads(&self) -> Reads {
        Reads {
            delta_q: true,
            ..Reads::default()
        }
    }

    fn label(&self) -> String {
        let estimator = self
            .active
            .or(self.estimator)
            .map_or("default", Estimator::as_str);
        // A non-default rate model is named, so that two runs differing only in it are told
        // apart in tables and chart legends.
        let mut named = if self.rate_model == RateModel::default() {
            String::new()
        } else {
            format!(", rates {}", self.rate_model.as_str())
        };
        if self.knowledge_in_use() != OracleKnowledge::default() {
            named += &format!(", knows {}", self.knowledge_in_use().as_str());
        }
        match self.window {
            Some(w) => format!("user-centric (ΔQ̄ {estimator}, W = {w}{named})"),
            None => format!("user-centric (ΔQ̄ {estimator}{named})"),
        }
    }

    fn settings(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        if let Some(e) = self.active.or(self.estimator) {
            m.insert("estimator".into(), e.as_str().into());
        }
        if let Some(w) = self.window {
            m.insert("window".into(), w.into());
        }
        if self.rate_model != RateModel::default() {
            m.insert("rates".into(), self.rate_model.as_str().into());
        }
        if self.knowledge_in_use() != OracleKnowledge::default() {
            m.insert("knows".into(), self.knowledge_in_use().as_str().into());
        }
        m
    }

    fn prepare(&mut self, context: &PolicyContext<'_>) {
        let n = context.page_count;
        // The planner is another policy (the family runs it when it is the default, see
        // [`super::UserCentricPolicy`]); this one then ranks by the refresh index.
        self.active = Some(
            self.estimator
                .unwrap_or(match Estimator::default_for(context.mode) {
                    Estimator::Planned | Estimator::Hedged => Estimator::Whittle,
                    other => other,
                }),
        );
        self.prior_interval = (n as f64 / context.budget.max(1) as f64).max(1.0);
        self.samples = vec![VecDeque::new(); n];
        self.view_weight = context.view_weight.to_vec();
        self.measured = vec![false; n];
        self.changes = vec![ChangeRecord::default(); n];
        self.oracle_change_rate = None;
        self.oracle_gains = None;
        self.fitted_on_history = false;
        let history = match (context.mode, context.history) {
            (FitMode::Oracle, Some(history)) => Some(history),
            _ => None,
        };
        // Told one estimate of the history, the policy learns the other as online does.
        let told = match (history, self.active) {
            (Some(_), Some(Estimator::ChangeGain | Estimator::Whittle)) => self.knowledge,
            _ => OracleKnowledge::Both,
        };
        self.told = Some(told);
        let learns_rates = history.is_none() || told == OracleKnowledge::Gains;
        self.mixture = (learns_rates
            && matches!(self.rate_model, RateModel::Mixture | RateModel::SiteMixture)
            && matches!(
                self.active,
                Some(Estimator::ChangeGain | Estimator::Whittle)
            ))
        .then(|| RateMixture::new(n));
        let Some(history) = history else {
            return;
        };
        match told {
            OracleKnowledge::Rates => {
                self.oracle_change_rate = Some(history_change_rates(history, n));
            }
            OracleKnowledge::Gains => {
                // The gains the full oracle reads, from the same records; then the records
                // start empty, to learn the rates from.
                self.changes = history_gain_records(history, n);
                self.oracle_gains = Some(self.gains_given_change());
                self.changes = vec![ChangeRecord::default(); n];
            }
            OracleKnowledge::Both => self.fit_on_history(history, n),
        }
    }

    fn choose(&mut self, unit: Unit, budget: usize, crawl: &CrawlState) -> Vec<PageId> {
        self.grow(crawl.len());
        self.fit_rates(crawl);
        let rates = self.change_rates();
        // The crawl state's: a pick whose fetch failed was not refreshed.
        let last = crawl.last_refreshes(rates.len());
        let prio = self.priorities(unit, &rates, &last);
        // Among pages of equal priority (notably those the estimate credits with no gain),
        // the likeliest to have changed first: a page whose ΔQ the estimate cannot see (its
        // effect is on other pages' scores, or on queries outside the workload) is not written
        // off, and budget left after the measured gains goes where a refresh can still find
        // something. Then the oldest, then the page id.
        let changed_since = self.changed_since(unit, &rates, &last);
        let mut pages: Vec<usize> = (0..prio.len())
            .filter(|&p| !crawl.page(p as PageId).gone)
            .collect();
        pages.retain(|&p| crawl.is_refreshable(p as PageId)); // frontier mode: refreshes of fetched pages only
        pages.sort_by(|&a, &b| {
            prio[b]
                .total_cmp(&prio[a])
                .then(changed_since[b].total_cmp(&changed_since[a]))
                .then(last[a].cmp(&last[b]))
                .then(a.cmp(&b))
        });
        pages.truncate(budget);
        pages.into_iter().map(|p| p as PageId).collect()
    }

    /// Online `change-gain` re-reads the repository's view weights every
    /// [`VIEWS_EVERY`] units: the prior of a page's gain follows what users are shown now.
    fn wants_views(&self, unit: Unit) -> bool {
        matches!(
            self.active,
            Some(Estimator::ChangeGain | Estimator::Whittle)
        ) && !self.fitted_on_history
            && unit.is_multiple_of(VIEWS_EVERY)
    }

    fn observe_views(&mut self, view_weight: &[f64]) {
        self.view_weight = view_weight.to_vec();
    }

    fn observe(&mut self, outcomes: &[RefreshOutcome]) {
        for o in outcomes {
            let p = o.page as usize;
            self.grow(p + 1);
            // Oracle parameters are fixed on the whole history; only online mode learns, and a
            // discovery measures no refresh.
            if !self.fitted_on_history && !o.discovered {
                let interval = o.unit.saturating_sub(o.last_refresh) as f64;
                self.push_sample(p, o.delta_q, interval);
                self.changes[p].record(interval, o.changed, o.delta_q);
                if let Some(m) = &mut self.mixture {
                    m.observe(p, interval, o.changed);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::{context, history, run};

    fn measured(page: PageId, unit: Unit, last: Unit, dq: f64) -> RefreshOutcome {
        RefreshOutcome {
            page,
            unit,
            last_refresh: last,
            changed: dq != 0.0,
            shingle_change: 0.0,
            delta_q: dq,
            gone: false,
            discovered: false,
        }
    }

    #[test]
    fn priority_formulas() {
        assert_eq!(normalised_delta_q(6.0, 5, 2), 2.0);
        assert_eq!(priority(2.0, 7, 3), 8.0);
        // Changes at 2, 6, 7 with ΔQ 4, 8, 3: ratios 4/2, 8/4, 3/1.
        assert_eq!(
            oracle_ratios(&[2, 6, 7], &[4.0, 8.0, 3.0]),
            vec![2.0, 2.0, 3.0]
        );
    }

    /// Oracle mode told only one estimate reads it from the history and learns the other from
    /// its own refreshes, as online mode does; told both, it is the oracle.
    #[test]
    fn an_oracle_told_one_estimate_learns_the_other() {
        // Page 0 changes at every unit with gain 2, page 1 at units 4 and 8 with gain 6,
        // page 2 never; views favour page 2.
        let h = history(
            9,
            &[(1..=8).collect(), vec![4, 8], vec![]],
            &[1.0; 3],
            &[2.0, 6.0],
        );
        let pages = [0, 1, 2];
        let views = [1.0, 1.0, 4.0];
        let ctx = context(FitMode::Oracle, &pages, &views, Some(&h), 8, 1);
        let told = |knowledge| {
            let mut uc = UserCentric::new(None).with_oracle_knowledge(knowledge);
            uc.prepare(&ctx);
            uc
        };
        let (both, rates, gains) = (
            told(OracleKnowledge::Both),
            told(OracleKnowledge::Rates),
            told(OracleKnowledge::Gains),
        );
        assert_eq!(both.label(), "user-centric (ΔQ̄ whittle)");
        assert_eq!(rates.label(), "user-centric (ΔQ̄ whittle, knows rates)");
        assert_eq!(gains.settings()["knows"], "gains");
        // Told the rates: the history's. Told the gains: the history's, bit for bit.
        assert_eq!(rates.change_rates(), both.change_rates());
        assert_eq!(gains.gains_given_change(), both.gains_given_change());
        // The other estimate starts from the online prior: no rate told apart yet, and gains
        // in proportion to exposure (page 2, never changing, looks best).
        let learned_rates = gains.change_rates();
        assert!(
            learned_rates.windows(2).all(|w| w[0] == w[1]),
            "{learned_rates:?}"
        );
        let prior_gains = rates.gains_given_change();
        assert!(prior_gains[2] > prior_gains[0], "{prior_gains:?}");
        assert_ne!(prior_gains, both.gains_given_change());
        // A refresh that found a change teaches the gain (told rates) or the rate (told gains).
        let (mut rates, mut gains) = (rates, gains);
        for uc in [&mut rates, &mut gains] {
            uc.choose(1, 1, &crate::policy::testkit::no_crawl());
            uc.observe(&[measured(0, 1, 0, 5.0)]);
        }
        assert!(rates.gains_given_change()[0] > prior_gains[0]);
        assert_eq!(rates.change_rates(), both.change_rates());
        let refit = {
            gains.choose(2, 1, &crate::policy::testkit::no_crawl());
            gains.change_rates()
        };
        assert!(refit[0] > refit[2], "{refit:?}");
        assert_eq!(gains.gains_given_change(), both.gains_given_change());
        // Told in online mode: nothing partial applies, and the label says nothing of it.
        let online = context(FitMode::Online, &pages, &views, None, 8, 1);
        let mut uc = UserCentric::new(None).with_oracle_knowledge(OracleKnowledge::Rates);
        assert_eq!(uc.label(), "user-centric (ΔQ̄ default, knows rates)");
        uc.prepare(&online);
        assert_eq!(uc.knowledge_in_use(), OracleKnowledge::Both);
        assert_eq!(uc.label(), "user-centric (ΔQ̄ whittle)");
        assert!(uc.settings().get("knows").is_none());
    }

    #[test]
    fn the_default_does_not_spend_the_budget_on_a_page_that_rarely_changes() {
        // Oracle, one refresh per unit for 8 units. Page 0 changed once (unit 1) with a large
        // gain; page 1 changes every unit with a smaller one; page 2 never changes. Paper
        // 003's priority ΔQ̄·(t − LR) of page 0 never falls below its gain, so it takes every
        // refresh, seven of them finding nothing; the refresh index weighs each gain by the
        // chance that a refresh finds a change now and over the coming units.
        let h = history(
            9,
            &[vec![1], (1..=8).collect(), vec![]],
            &[1.0; 3],
            &[8.0, 1.0],
        );
        let pages = [0, 1, 2];
        let ctx = context(FitMode::Oracle, &pages, &[0.0; 3], Some(&h), 8, 1);
        let refreshes = |uc: &mut UserCentric| {
            uc.prepare(&ctx);
            // The refresher records each refresh in the crawl state, which the policy reads.
            let mut crawl = crate::policy::testkit::no_crawl();
            let mut count = [0usize; 3];
            for unit in 1..=8 {
                for p in uc.choose(unit, 1, &crawl) {
                    count[p as usize] += 1;
                    crawl.note_fetch(p, unit, false);
                }
            }
            count
        };
        let mut default = UserCentric::new(None);
        let whittle = refreshes(&mut default);
        assert_eq!(default.label(), "user-centric (ΔQ̄ whittle)");
        let paper =
            refreshes(&mut UserCentric::new(None).with_estimator(Some(Estimator::MeanOfRatios)));
        assert!(paper[0] >= 7, "{paper:?}");
        assert!(
            whittle[1] >= 4 && whittle[0] >= 1 && whittle[2] == 0,
            "{whittle:?}"
        );
    }

    #[test]
    fn refresh_index_is_the_price_that_makes_waiting_indifferent() {
        // Brute force: loss over a period of k units, C(k) = G·Σ_{j<k} (1 − q^j); the index is
        // the price W with (C(k) + W)/k = (C(k+1) + W)/(k+1).
        let loss =
            |g: f64, q: f64, k: u32| (0..k).map(|j| g * (1.0 - q.powi(j as i32))).sum::<f64>();
        for (g, rate) in [(1.0, 0.05f64), (2.5, 0.7), (0.3, 3.0), (1.0, 1e-7)] {
            let q = (-rate).exp();
            for k in 1..40u32 {
                let w = refresh_index(g, rate, f64::from(k));
                let kf = f64::from(k);
                let brute = kf * loss(g, q, k + 1) - (kf + 1.0) * loss(g, q, k);
                assert!(
                    (w - brute).abs() <= 1e-9 * brute.abs().max(1e-12),
                    "g {g} rate {rate} k {k}: {w} vs {brute}"
                );
            }
            // One unit after a refresh it is the expected gain of refreshing now.
            assert!((refresh_index(g, rate, 1.0) - g * (1.0 - q)).abs() < 1e-12);
        }
        // A page that changes every unit is worth its gain whatever the wait; a rarely changing
        // one overtakes it once it has waited long enough.
        assert_eq!(refresh_index(1.0, f64::INFINITY, 7.0), 1.0);
        assert!(refresh_index(1.0, 0.1, 2.0) < refresh_index(1.0, 5.0, 2.0));
        assert!(refresh_index(1.0, 0.1, 30.0) > refresh_index(1.0, 5.0, 30.0));
        assert_eq!(refresh_index(1.0, 0.0, 5.0), 0.0);
        assert_eq!(refresh_index(0.0, 1.0, 5.0), 0.0);
        assert_eq!(refresh_index(1.0, 1.0, 0.0), 0.0);
    }

    /// Ten pages visited after 4 units found no change, two found one, eight were never
    /// visited. By unit 30 the pooled point rate makes the unvisited pages (30 units of wait at
    /// the site's mean rate) outbid the two that changed; under the site's distribution of
    /// rates, most pages change rarely, so an unvisited page probably has not changed and the
    /// two pages seen changing come first.
    #[test]
    fn under_the_rate_mixture_pages_seen_changing_outbid_unvisited_ones() {
        let pages: Vec<PageId> = (0..20).collect();
        let ctx = context(FitMode::Online, &pages, &[0.0; 20], None, 40, 2);
        let crawl = crate::policy::testkit::no_crawl();
        let visits: Vec<RefreshOutcome> = (0..12)
            .map(|p| measured(p, 4, 0, if p >= 10 { 1.0 } else { 0.0 }))
            .collect();
        let choose_at_30 = |model: RateModel| {
            let mut uc = UserCentric::new(None).with_rate_model(model);
            uc.prepare(&ctx);
            uc.observe(&visits);
            uc.choose(30, 2, &crawl)
        };
        let mixture = choose_at_30(RateModel::Mixture);
        assert_eq!(mixture, vec![10, 11]);
        let pooled = choose_at_30(RateModel::Pooled);
        assert!(pooled.iter().all(|&p| p >= 12), "{pooled:?}");
        // The mixture's posterior mean rates: a page seen changing above the prior mean, a page
        // seen unchanged below it.
        let mut uc = UserCentric::new(None);
        uc.prepare(&ctx);
        uc.observe(&visits);
        uc.fit_rates(&crawl);
        let rates = uc.change_rates();
        assert!(rates[10] > rates[15] && rates[15] > rates[0], "{rates:?}");
        assert!(uc.settings().get("rates").is_none());
        let pooled = UserCentric::new(None).with_rate_model(RateModel::Pooled);
        assert_eq!(pooled.settings()["rates"], "pooled");
        assert_eq!(pooled.label(), "user-centric (ΔQ̄ default, rates pooled)");
        assert_eq!(uc.label(), "user-centric (ΔQ̄ whittle)");
    }

    #[test]
    fn online_priorities_from_a_hand_made_history() {
        let pages = [0, 1, 2, 3];
        let ctx = context(FitMode::Online, &pages, &[0.0; 4], None, 10, 2);
        let mut uc = UserCentric::new(None).with_estimator(Some(Estimator::MeanOfRatios));
        uc.prepare(&ctx);
        let mut crawl = crate::policy::testkit::no_crawl();
        // Nothing measured: round-robin by age then id.
        assert_eq!(uc.choose(1, 2, &crawl), vec![0, 1]);
        crate::policy::testkit::observe(
            &mut uc,
            &mut crawl,
            &[measured(0, 1, 0, 3.0), measured(1, 1, 0, 0.0)],
        );
        // ΔQ̄: page 0 = 3, page 1 = 0; unmeasured 2, 3 get the mean 1.5.
        assert_eq!(uc.mean_normalised(), vec![3.0, 0.0, 1.5, 1.5]);
        // Unit 2: P = 3·1, 0·1, 1.5·2, 1.5·2 → 0 (3, LR 1) loses the tie with 2, 3 (LR 0).
        assert_eq!(uc.choose(2, 2, &crawl), vec![2, 3]);
        crate::policy::testkit::observe(
            &mut uc,
            &mut crawl,
            &[measured(2, 2, 0, 1.0), measured(3, 2, 0, 10.0)],
        );
        // ΔQ̄ = 3, 0, 0.5, 5. Unit 3: P = 6, 0, 0.5, 5.
        assert_eq!(uc.choose(3, 2, &crawl), vec![0, 3]);
        crate::policy::testkit::observe(
            &mut uc,
            &mut crawl,
            &[measured(0, 3, 1, 0.0), measured(3, 3, 2, 0.0)],
        );
        // Whole-history means: page 0 = (3 + 0)/2, page 3 = (5 + 0)/2.
        assert_eq!(uc.mean_normalised(), vec![1.5, 0.0, 0.5, 2.5]);
    }

    #[test]
    fn pooled_estimate_shrinks_each_page_towards_the_pooled_rate() {
        // 4 pages, B = 2: τ = N/B = 2 units.
        let pages = [0, 1, 2, 3];
        let ctx = context(FitMode::Online, &pages, &[0.0; 4], None, 10, 2);
        let mut uc = UserCentric::new(None).with_estimator(Some(Estimator::Pooled));
        uc.prepare(&ctx);
        let mut crawl = crate::policy::testkit::no_crawl();
        assert_eq!(uc.mean_normalised(), vec![0.0; 4], "nothing observed yet");
        assert_eq!(uc.choose(1, 2, &crawl), vec![0, 1]);
        // Page 0 gained 4 over 1 unit, page 1 nothing: pooled rate m₀ = 4/2 = 2.
        crate::policy::testkit::observe(
            &mut uc,
            &mut crawl,
            &[measured(0, 1, 0, 4.0), measured(1, 1, 0, 0.0)],
        );
        // ΔQ̄ = (ΣΔQ + m₀τ)/(ΣΔt + τ): (4 + 4)/3, (0 + 4)/3, and m₀ = 2 for the unobserved.
        let m = uc.mean_normalised();
        let expected = [8.0 / 3.0, 4.0 / 3.0, 2.0, 2.0];
        for (a, b) in m.iter().zip(expected) {
            assert!((a - b).abs() < 1e-12, "{m:?}");
        }
        // Unlike the mean of ratios, the page measured at 0 is not written off: after a wait
        // of 2 units its priority 8/3 exceeds page 0's fresh 8/3 · 1.
        assert_eq!(
            uc.choose(2, 2, &crawl),
            vec![2, 3],
            "unexplored pages first: 2·2 > 8/3"
        );
        crate::policy::testkit::observe(
            &mut uc,
            &mut crawl,
            &[measured(2, 2, 0, 0.0), measured(3, 2, 0, 0.0)],
        );
        // m₀ = 4/6; page 1 (ΔQ̄ = (0 + 4/3)/3 = 4/9, waited 2) vs page 0 ((4 + 4/3)/3 = 16/9,
        // waited 2) vs pages 2, 3 ((0 + 4/3)/4 = 1/3, waited 1).
        assert_eq!(uc.choose(3, 2, &crawl), vec![0, 1]);
    }

    #[test]
    fn viewed_prior_follows_the_view_weights_that_predict_gains() {
        // Views 0, 1, 2, 3, 4, 5; B = 2 → τ = 3. Pages 1 and 3 were refreshed after 1 unit
        // and gained exactly their view weight: rate = v, so the fit is α = 0, β = 1.
        let pages = [0, 1, 2, 3, 4, 5];
        let views = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0];
        let ctx = context(FitMode::Online, &pages, &views, None, 10, 2);
        let mut uc = UserCentric::new(None).with_estimator(Some(Estimator::Viewed));
        uc.prepare(&ctx);
        uc.observe(&[measured(1, 1, 0, 1.0), measured(3, 1, 0, 3.0)]);
        let m = uc.mean_normalised();
        // Unobserved pages get their prior v(p); observed ones (v + v·3)/(1 + 3) = v.
        for (p, &v) in views.iter().enumerate() {
            assert!((m[p] - v).abs() < 1e-9, "page {p}: {m:?}");
        }
        // So the most viewed unexplored pages come first (5, then 4).
        assert_eq!(
            uc.choose(2, 2, &crate::policy::testkit::no_crawl()),
            vec![5, 4]
        );
        // Views that predict nothing (gains fall with views) give β = 0: the pooled rate.
        let mut uc = UserCentric::new(None).with_estimator(Some(Estimator::Viewed));
        uc.prepare(&ctx);
        uc.observe(&[measured(1, 1, 0, 4.0), measured(3, 1, 0, 0.0)]);
        let pooled = {
            let mut p = UserCentric::new(None).with_estimator(Some(Estimator::Pooled));
            p.prepare(&ctx);
            p.observe(&[measured(1, 1, 0, 4.0), measured(3, 1, 0, 0.0)]);
            p.mean_normalised()
        };
        assert_eq!(uc.mean_normalised(), pooled);
    }

    #[test]
    fn pooled_revisits_a_page_measured_at_zero_but_mean_of_ratios_never_does() {
        // Page 0 changes once, at unit 6, with a large ΔQ; page 1 changes every unit with a
        // small one. With B = 1 page 0 is first refreshed at unit 1 (nothing changed yet).
        let h = history(13, &[vec![6], (1..=12).collect()], &[1.0; 2], &[50.0, 1.0]);
        let pages = [0, 1];
        let ctx = context(FitMode::Online, &pages, &[0.0; 2], None, 12, 1);
        let refreshed_after_change = |estimator| {
            let mut uc = UserCentric::new(None).with_estimator(Some(estimator));
            let choices = run(&mut uc, &ctx, &h);
            choices
                .iter()
                .enumerate()
                .any(|(i, c)| i + 1 >= 6 && c.contains(&0))
        };
        assert!(refreshed_after_change(Estimator::Pooled));
        assert!(!refreshed_after_change(Estimator::MeanOfRatios));
    }

    fn visit(page: PageId, unit: Unit, last: Unit, changed: bool, dq: f64) -> RefreshOutcome {
        RefreshOutcome {
            changed,
            ..measured(page, unit, last, dq)
        }
    }

    #[test]
    fn change_gain_learns_rates_from_visits_and_gains_from_changes() {
        // 4 pages, B = 2: τ = 2.
        let pages = [0, 1, 2, 3];
        let ctx = context(FitMode::Online, &pages, &[0.0; 4], None, 20, 2);
        // The point estimate with a pooled prior (the mixture's own test is
        // `under_the_rate_mixture_pages_seen_changing_outbid_unvisited_ones`).
        let mut uc = UserCentric::new(None)
            .with_estimator(Some(Estimator::ChangeGain))
            .with_rate_model(RateModel::Pooled);
        uc.prepare(&ctx);
        let mut crawl = crate::policy::testkit::no_crawl();
        assert_eq!(uc.label(), "user-centric (ΔQ̄ change-gain, rates pooled)");
        // Before any visit every page has the prior rate ln 2 / τ and no gain.
        let rates = uc.change_rates();
        for r in &rates {
            assert!((r - std::f64::consts::LN_2 / 2.0).abs() < 1e-9, "{rates:?}");
        }
        assert_eq!(
            uc.gains_given_change(),
            vec![1.0; 4],
            "equal exposure, nothing seen"
        );
        // Page 0 changed at each of its visits with gain 2; page 1 never changed.
        let mut last = [0; 4];
        for unit in 1..=6 {
            crate::policy::testkit::observe(
                &mut uc,
                &mut crawl,
                &[
                    visit(0, unit, last[0], true, 2.0),
                    visit(1, unit, last[1], false, 0.0),
                ],
            );
            last[0] = unit;
            last[1] = unit;
        }
        let rates = uc.change_rates();
        assert!(rates[0] > rates[2] && rates[2] > rates[1], "{rates:?}");
        // Unvisited pages share the pooled rate.
        assert_eq!(rates[2], rates[3]);
        let gains = uc.gains_given_change();
        // No view weights: equal exposure 1, κ = 12/6 = 2; page 0: (6·2 + 2)/7 = 2.
        assert!((gains[0] - 2.0).abs() < 1e-12, "{gains:?}");
        // Pages without a change seen get the prior g₀ = 2 too.
        assert!((gains[1] - 2.0).abs() < 1e-12, "{gains:?}");
        // The unvisited pages, 7 units old, have almost surely changed; page 0, visited a unit
        // ago, likely has; page 1, never seen changing, comes last.
        assert_eq!(uc.choose(7, 3, &crawl), vec![2, 3, 0]);
        assert_eq!(uc.choose(8, 4, &crawl)[3], 1);
    }

    #[test]
    fn change_gain_prior_follows_exposure_and_never_writes_a_page_off() {
        // Views 0, 2, 4, 6 (mean 3): exposures 3, 5, 7, 9.
        let pages = [0, 1, 2, 3];
        let views = [0.0, 2.0, 4.0, 6.0];
        let ctx = context(FitMode::Online, &pages, &views, None, 20, 2);
        let mut uc = UserCentric::new(None);
        uc.prepare(&ctx);
        // Page 3 changed once and gained 18: κ = 18/9 = 2 per unit of exposure.
        uc.observe(&[visit(3, 1, 0, true, 18.0)]);
        let gains = uc.gains_given_change();
        let expected = [6.0, 10.0, 14.0, (18.0 + 18.0) / 2.0];
        for (g, e) in gains.iter().zip(expected) {
            assert!((g - e).abs() < 1e-9, "{gains:?}");
        }
        // Online, the view weights are re-read every VIEWS_EVERY units, never in oracle mode.
        assert!(uc.wants_views(VIEWS_EVERY) && !uc.wants_views(VIEWS_EVERY + 1));
        uc.observe_views(&[6.0, 4.0, 2.0, 0.0]);
        let gains = uc.gains_given_change();
        assert!(gains[0] > gains[1] && gains[1] > gains[2], "{gains:?}");
        let h = history(9, &[vec![2], vec![], vec![], vec![]], &[1.0; 4], &[1.0]);
        let ctx = context(FitMode::Oracle, &pages, &views, Some(&h), 8, 2);
        let mut oracle = UserCentric::new(None).with_estimator(Some(Estimator::ChangeGain));
        oracle.prepare(&ctx);
        assert!(!oracle.wants_views(VIEWS_EVERY));
    }

    #[test]
    fn change_gain_does_not_write_off_a_page_visited_too_soon() {
        // Two pages with the same gain on changes; page 1 was just found unchanged once.
        let pages = [0, 1];
        let ctx = context(FitMode::Online, &pages, &[0.0; 2], None, 40, 1);
        for model in [
            RateModel::Mixture,
            RateModel::SiteMixture,
            RateModel::Pooled,
        ] {
            let mut uc = UserCentric::new(None).with_rate_model(model);
            uc.prepare(&ctx);
            uc.observe(&[visit(0, 1, 0, true, 5.0)]);
            uc.observe(&[visit(1, 2, 0, true, 5.0)]);
            uc.observe(&[visit(1, 3, 2, false, 0.0)]);
            uc.fit_rates(&crate::policy::testkit::no_crawl());
            let gains = uc.gains_given_change();
            assert!((gains[0] - gains[1]).abs() < 1e-12, "{gains:?}");
            // Under paper 003's mean of ratios, the unchanged visit halves page 1's ΔQ̄ for good;
            // here page 1's priority grows back with its wait: at unit 12 (page 1 waited 9 units,
            // page 0 waited 11) both are almost surely changed and tie near G.
            // (Last refreshes as the crawl state would hold them after these visits.)
            let p = uc.change_gain_priorities(12, &uc.change_rates(), &[1, 3]);
            assert!(p[1] > 0.9 * p[0], "{model:?}: {p:?}");
            assert!(
                p[0] <= gains[0] && p[1] <= gains[1],
                "saturates at G: {p:?}"
            );
        }
    }

    #[test]
    fn pages_credited_with_no_gain_go_by_change_probability() {
        // Oracle: page 0 never changes; page 1 changes every unit but its measured ΔQ is 0
        // (the estimate cannot see its effect); page 2 changes with a gain.
        let h = history(
            9,
            &[vec![], (1..=8).collect(), vec![4]],
            &[1.0; 3],
            &[0.0, 0.0, 3.0],
        );
        let pages = [0, 1, 2];
        for estimator in [
            Estimator::MeanOfRatios,
            Estimator::ChangeGain,
            Estimator::Whittle,
        ] {
            let ctx = context(FitMode::Oracle, &pages, &[0.0; 3], Some(&h), 8, 2);
            let mut uc = UserCentric::new(None).with_estimator(Some(estimator));
            uc.prepare(&ctx);
            // The spare refresh goes to page 1 (it changed), not page 0 (lower id, never changes).
            assert_eq!(
                uc.choose(1, 2, &crate::policy::testkit::no_crawl()),
                vec![2, 1],
                "{estimator:?}"
            );
        }
    }

    #[test]
    fn sliding_window_forgets_old_refreshes() {
        let pages = [0];
        let ctx = context(FitMode::Online, &pages, &[0.0], None, 10, 1);
        let mut uc = UserCentric::new(Some(2)).with_estimator(Some(Estimator::MeanOfRatios));
        uc.prepare(&ctx);
        uc.observe(&[measured(0, 1, 0, 9.0)]);
        uc.observe(&[measured(0, 2, 1, 1.0)]);
        uc.observe(&[measured(0, 3, 2, 3.0)]);
        assert_eq!(uc.mean_normalised(), vec![2.0]);
    }

    #[test]
    fn oracle_fit_uses_change_units_and_ignores_observations() {
        // Page 0: changes at 2, 4 with ΔQ 4 → ratios 2, 2. Page 1: changes, never measured.
        // Page 2: never changes (ΔQ̄ = 0).
        let mut h = history(9, &[vec![2, 4], vec![3], vec![]], &[1.0; 3], &[4.0]);
        h.pages[1].delta_q.clear();
        let pages = [0, 1, 2];
        let ctx = context(FitMode::Oracle, &pages, &[0.0; 3], Some(&h), 8, 1);
        let mut uc = UserCentric::new(None).with_estimator(Some(Estimator::MeanOfRatios));
        uc.prepare(&ctx);
        // Measured: page 0 (2) and page 2 (0) → mean 1 for page 1.
        assert_eq!(uc.mean_normalised(), vec![2.0, 1.0, 0.0]);
        uc.observe(&[measured(2, 1, 0, 100.0)]);
        assert_eq!(uc.mean_normalised(), vec![2.0, 1.0, 0.0]);
    }

    #[test]
    fn online_user_centric_never_reads_the_history() {
        let h = history(
            11,
            &[vec![2, 4, 6, 8], vec![5], vec![], vec![3, 9]],
            &[1.0; 4],
            &[2.0, 7.0, 0.0, 1.0],
        );
        let pages = [0, 1, 2, 3];
        let with = context(FitMode::Online, &pages, &[0.0; 4], Some(&h), 10, 1);
        let without = context(FitMode::Online, &pages, &[0.0; 4], None, 10, 1);
        assert_eq!(
            run(&mut UserCentric::new(None), &with, &h),
            run(&mut UserCentric::new(None), &without, &h)
        );
    }
}
