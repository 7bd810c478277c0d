//! The protocol between user-centric's driver ([`UserCentric`]) and its estimators of what a
//! refresh of each page would gain ([`GainEstimator`]).
//!
//! [`UserCentric`]: super::estimators::UserCentric

use std::fmt;

use super::formulas::priority;
use super::rates::ChangeRates;
use crate::corpus::Unit;
use crate::policy::{ChangeHistory, RefreshOutcome};

/// What an estimator is given when a run starts.
#[derive(Debug, Clone, Copy)]
pub struct Setup<'a> {
    /// Number of pages (ids `0..pages`) in the repository after the initial crawl.
    pub(crate) pages: usize,
    /// `τ = N/B` units (at least 1): one round-robin cycle, the weight of the pooled priors.
    pub(crate) prior_interval: f64,
    /// How often users are shown each page at unit 0 (`Σ_q f_q · I(rank of p in q's results)`).
    pub(crate) view_weight: &'a [f64],
    /// Sliding window of the last `W` refreshes of each page; `None` = every refresh.
    pub(crate) window: Option<usize>,
}

/// How one of user-centric's estimators turns what a run observed (or was told) into each
/// page's refresh priority: the expected quality gained by refreshing it now (paper 003's
/// `P(p, t)`, or an estimate of the same quantity). One implementation per
/// [`Estimator`](super::estimators::Estimator) the index ranks by, one file each; the shared
/// part — the `B` highest priorities, the ties, the crawl state, the change rates, what oracle
/// mode is told — is [`UserCentric`](super::estimators::UserCentric)'s, which drives them all.
///
/// # Protocol
///
/// The driver calls, in this order:
///
/// 1. [`prepare`](Self::prepare) once per run, before any other call, with the run's
///    [`Setup`]: the estimator forgets whatever an earlier run recorded and starts with every
///    page `0..pages` unmeasured.
/// 2. Oracle mode only, at most one of: [`fit_oracle`](Self::fit_oracle) (told everything:
///    the estimator fits on the history, and [`observe`](Self::observe) is not called again
///    in the run) or [`tell_gains`](Self::tell_gains) (told only the gains given a change, and
///    only an estimator that [`ranks_by_change`](Self::ranks_by_change)). Told only the change
///    rates, an estimator is told nothing: the driver's [`ChangeRates`] hold them, and it
///    learns its gains as online.
/// 3. For every unit: [`grow`](Self::grow) to the number of pages the crawler knows, then
///    [`priorities`](Self::priorities) (the frontier-mode wrapper also reads
///    [`mean_normalised`](Self::mean_normalised) and
///    [`gains_given_change`](Self::gains_given_change); any of the three may be read any number
///    of times, since they change nothing). After the unit's refreshes, while the
///    estimator learns (not after `fit_oracle`): [`observe`](Self::observe) once per outcome
///    that is not a discovery, in the order of the outcomes, each page grown first. Then, if
///    [`wants_views`](Self::wants_views) said so for the next unit (asked only while it
///    learns), [`observe_views`](Self::observe_views).
///
/// What each call may read: the history only in `fit_oracle` and `tell_gains`; otherwise the
/// [`Setup`], the outcomes given to `observe`, the view weights given to `observe_views`, and
/// the driver's [`ChangeRates`] (every page's change rate, which it reads and never writes; the
/// driver records each visit there before `observe`). Nothing of the crawl state: the driver
/// passes each page's last refresh (the crawl state's, so a pick whose fetch failed was not
/// refreshed) to `priorities`.
///
/// Guarantees: the estimates (`priorities`, `mean_normalised`, `gains_given_change`) are
/// pure — the same calls since `prepare` give the same values, bit for bit — and give one value
/// per page id it holds, the highest priority first to be refreshed. Ties, gone pages and pages
/// not yet fetched are the driver's: it breaks ties by the probability that a page changed
/// since its last refresh, then the oldest last refresh, then the page id.
pub trait GainEstimator: CloneGainEstimator + Send + fmt::Debug {
    /// Starts a run (see the protocol): nothing recorded, pages `0..setup.pages`.
    fn prepare(&mut self, setup: &Setup<'_>);

    /// Makes room for page ids `0..count`: pages the crawler met after `prepare` start
    /// unmeasured, never refreshed, with no view weight. Nothing changes for `count` at most
    /// the pages held.
    fn grow(&mut self, count: usize);

    /// Oracle mode told everything: fits the first `pages` pages on the whole history (paper
    /// 003's protocol). No outcome is observed after it.
    fn fit_oracle(&mut self, history: &ChangeHistory, pages: usize);

    /// Oracle mode told only each page's gain given a change (`knows=gains`): reads them from
    /// the history, to keep for the run. Called only for an estimator that
    /// [`ranks_by_change`](Self::ranks_by_change); nothing by default.
    fn tell_gains(&mut self, _history: &ChangeHistory, _pages: usize) {}

    /// What one refresh of `page` revealed, `interval` units after its previous one
    /// (`outcome.delta_q`: the measured ΔQ_A; `outcome.changed`: whether its copy changed).
    fn observe(&mut self, page: usize, interval: f64, outcome: &RefreshOutcome);

    /// `ΔQ̄(p)` of every page: the expected ΔQ_A of a refresh per unit of staleness.
    fn mean_normalised(&self, rates: &ChangeRates) -> Vec<f64>;

    /// The refresh priority of every page at `unit`, with `rates` the pages'
    /// [`ChangeRates::rates`] of `model` and `last` their last refreshes. By default paper
    /// 003's `P(p, t) = ΔQ̄(p) · (t − LR(p, t))` ([`priority`]).
    fn priorities(
        &self,
        unit: Unit,
        _rates: &[f64],
        model: &ChangeRates,
        last: &[Unit],
    ) -> Vec<f64> {
        let means = self.mean_normalised(model);
        (0..means.len())
            .map(|p| priority(means[p], unit, last[p]))
            .collect()
    }

    /// The expected ΔQ_A of refreshing each page given that it changed, for an estimator that
    /// ranks by change rate and gain; `None` (the default) for one that estimates `ΔQ̄` as a
    /// rate.
    fn gains_given_change(&self) -> Option<Vec<f64>> {
        None
    }

    /// Whether it ranks by change rate and gain given a change: then its change rates may come
    /// from the rate mixture ([`crate::change::RateMixture`]), and oracle mode may tell it only
    /// one of the two (`knows`). False by default.
    fn ranks_by_change(&self) -> bool {
        false
    }

    /// Whether it wants the repository's current view weights before choosing at `unit`
    /// (asked only while it learns). False by default.
    fn wants_views(&self, _unit: Unit) -> bool {
        false
    }

    /// The repository's current view weights, after `observe` when
    /// [`wants_views`](Self::wants_views) asked for them. Ignored by default.
    fn observe_views(&mut self, _view_weight: &[f64]) {}
}

/// A copy of an estimator and what it recorded (the driver is `Clone`): every `Clone`
/// estimator has it.
pub trait CloneGainEstimator {
    fn clone_box(&self) -> Box<dyn GainEstimator>;
}

impl<T: GainEstimator + Clone + 'static> CloneGainEstimator for T {
    fn clone_box(&self) -> Box<dyn GainEstimator> {
        Box::new(self.clone())
    }
}

impl Clone for Box<dyn GainEstimator> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}
