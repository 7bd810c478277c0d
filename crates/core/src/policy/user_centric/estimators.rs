//! Paper 003's user-centric refresh ranked by an index (Pandey & Olston, "User-Centric Web
//! Crawling", WWW 2005, §6; see ARCHITECTURE.md, § The user-centric metric and its estimate):
//! each unit, the `B` pages whose refresh is expected to gain the most quality for users are
//! refreshed. What that gain is differs between the estimators of it ([`Estimator`]), each a
//! [`GainEstimator`] in a file of its own — paper 003's [`MeanOfRatios`], the [`Pooled`] and
//! [`Viewed`] rates, the [`ChangeGain`] expectation and its refresh index, [`Whittle`] — and
//! [`UserCentric`] drives any of them: the crawl state, the change rates, what oracle mode is
//! told, and the ties.
//!
//! Ties (notably the many pages of priority 0) are broken by the probability that the page
//! changed since its last refresh (so a page whose effect the estimate cannot see is still
//! refreshed before pages that never change, with budget to spare), then the oldest last
//! refresh, then page id, so pages with nothing to tell them apart are visited round-robin.
//!
//! The measurements that chose between these estimators are in docs/results.md.

use super::change_gain::ChangeGain;
use super::gain_estimator::{GainEstimator, Setup};
use super::mean_of_ratios::MeanOfRatios;
use super::pooled::Pooled;
use super::rates::ChangeRates;
use super::viewed::Viewed;
use super::whittle::Whittle;
use crate::corpus::{PageId, Unit};
use crate::crawl::CrawlState;
use crate::policy::{FitMode, PolicyContext, Reads, RefreshOutcome, RefreshPolicy};

pub use super::change_gain::VIEWS_EVERY;
pub use super::formulas::{normalised_delta_q, oracle_ratios, priority};
pub use super::rates::RateModel;
pub use super::whittle::refresh_index;

/// How the gain of refreshing each page is estimated: an index estimator ([`GainEstimator`],
/// one file each, see the module docs) or one of the planners ([`super::planner`],
/// [`super::hedge`]).
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

/// What oracle-mode [`Estimator::ChangeGain`] and [`Estimator::Whittle`] are told of the
/// history. Their two estimates — each page's change rate λ_p and gain given a change G(p) —
/// are the only difference between oracle and online mode (the oracle does not know when a
/// page changes, only how often and by how much), so telling the oracle one of them and
/// letting it learn the other from its own refreshes, as online mode does, measures which
/// estimate online mode loses its budget to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum OracleKnowledge {
    /// Both: the history's change rates and measured gains.
    #[default]
    Both,
    /// The change rates; gains learned as online.
    Rates,
    /// The gains; change rates learned as online (with the [`RateModel`]).
    Gains,
}

impl OracleKnowledge {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            OracleKnowledge::Both => "both",
            OracleKnowledge::Rates => "rates",
            OracleKnowledge::Gains => "gains",
        }
    }

    pub(crate) fn parse(name: &str) -> Option<Self> {
        [
            OracleKnowledge::Both,
            OracleKnowledge::Rates,
            OracleKnowledge::Gains,
        ]
        .into_iter()
        .find(|k| k.as_str() == name)
    }
}

/// The implementation of `estimator`. The planners run apart (the family's
/// [`super::UserCentricPolicy`] runs [`super::planner`] or [`super::hedge`] when one is named
/// or is the default); named to this policy, they rank by the refresh index, as this policy
/// does when the planner is the default.
fn index_estimator(estimator: Estimator) -> Box<dyn GainEstimator> {
    match estimator {
        Estimator::MeanOfRatios => Box::new(MeanOfRatios::default()),
        Estimator::Pooled => Box::new(Pooled::default()),
        Estimator::Viewed => Box::new(Viewed::default()),
        Estimator::ChangeGain => Box::new(ChangeGain::default()),
        Estimator::Whittle | Estimator::Planned | Estimator::Hedged => Box::new(Whittle::default()),
    }
}

/// The user-centric policy ranked by an index (see the module docs): the driver of the
/// [`GainEstimator`] its estimator names.
#[derive(Debug, Clone, Default)]
pub struct UserCentric {
    /// Sliding window of the last `W` refreshes; `None` = the whole history.
    pub(crate) window: Option<usize>,
    /// `None`: [`Estimator::default_for`] the fit mode.
    pub(crate) estimator: Option<Estimator>,
    /// What oracle mode is told of the history.
    pub(crate) knowledge: OracleKnowledge,
    /// How online change rates are estimated.
    pub(crate) rate_model: RateModel,
    /// The estimator in use (set by `prepare`).
    active: Option<Estimator>,
    /// Its implementation, with what it recorded (set by `prepare`).
    running: Option<Box<dyn GainEstimator>>,
    /// Every page's change rate: the tie-break's, and the estimators' that rank by it.
    rates: ChangeRates,
    /// Oracle mode told everything: nothing is learned from refreshes.
    fitted_on_history: bool,
    /// What this run was told (set by `prepare`): `knowledge` in oracle mode with an estimator
    /// that ranks by change rate and gain (change-gain, whittle), `Both` otherwise (nothing
    /// partial applies).
    told: Option<OracleKnowledge>,
}

impl UserCentric {
    pub(crate) fn new(window: Option<usize>) -> Self {
        UserCentric {
            window,
            ..Default::default()
        }
    }

    pub(crate) fn with_estimator(mut self, estimator: Option<Estimator>) -> Self {
        self.estimator = estimator;
        self
    }

    pub(crate) fn with_rate_model(mut self, rate_model: RateModel) -> Self {
        self.rate_model = rate_model;
        self
    }

    pub(crate) fn with_oracle_knowledge(mut self, knowledge: OracleKnowledge) -> Self {
        self.knowledge = knowledge;
        self
    }

    /// Makes room for page ids `0..count`: pages the crawler met after `prepare` start
    /// unmeasured, never refreshed, with no view weight.
    fn grow(&mut self, count: usize) {
        self.rates.grow(count);
        if let Some(running) = &mut self.running {
            running.grow(count);
        }
    }

    /// `ΔQ̄(p)` of every page, with the active estimator ([`GainEstimator::mean_normalised`];
    /// empty before `prepare`).
    pub(crate) fn mean_normalised(&self) -> Vec<f64> {
        self.running
            .as_ref()
            .map_or_else(Vec::new, |running| running.mean_normalised(&self.rates))
    }

    /// Each page's change rate λ ([`ChangeRates::rates`]): the oracle's count over the history,
    /// or online the rate learned from the crawler's visits.
    pub fn change_rates(&self) -> Vec<f64> {
        self.rates.rates()
    }

    /// Expected ΔQ_A of refreshing each page given that it changed, under an estimator that
    /// ranks by change rate and gain ([`ChangeGain::gains`]); empty under the others, which
    /// estimate no such gain, and before `prepare`.
    pub(crate) fn gains_given_change(&self) -> Vec<f64> {
        self.running
            .as_ref()
            .and_then(|running| running.gains_given_change())
            .unwrap_or_default()
    }

    /// The refresh priority of every page at `unit` under the active estimator, with `rates`
    /// the pages' [`UserCentric::change_rates`] and `last` their last refreshes (the crawl
    /// state's, [`CrawlState::last_refreshes`]).
    pub fn priorities(&self, unit: Unit, rates: &[f64], last: &[Unit]) -> Vec<f64> {
        self.running.as_ref().map_or_else(Vec::new, |running| {
            running.priorities(unit, rates, &self.rates, last)
        })
    }
}

/// Read by the frontier-mode wrapper (`policy::new_pages`, issue 16).
impl UserCentric {
    /// Re-estimates the distributions of change rates from the visits so far (online,
    /// [`RateModel::Mixture`] over the directories of `crawl`'s held pages, or
    /// [`RateModel::SiteMixture`]); called before the rates are read at each unit.
    pub(crate) fn fit_rates(&mut self, crawl: &CrawlState) {
        self.rates.fit(crawl);
    }

    /// The estimator in use (after `prepare`).
    pub(crate) fn active_estimator(&self) -> Option<Estimator> {
        self.active
    }

    /// What the run is told of the history: after `prepare`, only what applied (online mode,
    /// or an estimator other than change-gain and whittle, is told nothing partial).
    pub(crate) fn knowledge_in_use(&self) -> OracleKnowledge {
        self.told.unwrap_or(self.knowledge)
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
        let active = match self
            .estimator
            .unwrap_or_else(|| Estimator::default_for(context.mode))
        {
            Estimator::Planned | Estimator::Hedged => Estimator::Whittle,
            other => other,
        };
        self.active = Some(active);
        let mut running = index_estimator(active);
        let prior_interval = (n as f64 / context.budget.max(1) as f64).max(1.0);
        running.prepare(&Setup {
            pages: n,
            prior_interval,
            view_weight: context.view_weight,
            window: self.window,
        });
        self.fitted_on_history = false;
        let history = match (context.mode, context.history) {
            (FitMode::Oracle, Some(history)) => Some(history),
            _ => None,
        };
        // Told one estimate of the history, the policy learns the other as online does.
        let told = match history {
            Some(_) if running.ranks_by_change() => self.knowledge,
            _ => OracleKnowledge::Both,
        };
        self.told = Some(told);
        let learns_rates = history.is_none() || told == OracleKnowledge::Gains;
        self.rates = ChangeRates::new(
            n,
            prior_interval,
            self.rate_model,
            learns_rates && running.ranks_by_change(),
        );
        if let Some(history) = history {
            match told {
                OracleKnowledge::Rates => self.rates.tell(history, n),
                OracleKnowledge::Gains => running.tell_gains(history, n),
                OracleKnowledge::Both => {
                    // Oracle parameters are fixed on the whole history.
                    self.fitted_on_history = true;
                    self.rates.tell(history, n);
                    running.fit_oracle(history, n);
                }
            }
        }
        self.running = Some(running);
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
        let changed_since = self.rates.changed_since(unit, &rates, &last);
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

    /// Whether the estimator wants the repository's view weights now
    /// ([`GainEstimator::wants_views`]: online `change-gain` and `whittle` every
    /// [`VIEWS_EVERY`] units); never once fitted on the history.
    fn wants_views(&self, unit: Unit) -> bool {
        !self.fitted_on_history
            && self
                .running
                .as_ref()
                .is_some_and(|running| running.wants_views(unit))
    }

    fn observe_views(&mut self, view_weight: &[f64]) {
        if let Some(running) = &mut self.running {
            running.observe_views(view_weight);
        }
    }

    fn observe(&mut self, outcomes: &[RefreshOutcome]) {
        for o in outcomes {
            let p = o.page as usize;
            self.grow(p + 1);
            // Oracle parameters are fixed on the whole history; only online mode learns, and a
            // discovery measures no refresh.
            if !self.fitted_on_history && !o.discovered {
                let interval = o.unit.saturating_sub(o.last_refresh) as f64;
                self.rates.observe(p, interval, o.changed);
                if let Some(running) = &mut self.running {
                    running.observe(p, interval, o);
                }
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::policy::testkit::{context, history, run};

    /// The outcome of a refresh of `page` at `unit` (previous refresh `last`) that measured
    /// `dq`, and found a change if `dq` is not 0.
    pub(crate) fn measured(page: PageId, unit: Unit, last: Unit, dq: f64) -> RefreshOutcome {
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

    /// As [`measured`], with whether it found a change given.
    pub(crate) fn visit(
        page: PageId,
        unit: Unit,
        last: Unit,
        changed: bool,
        dq: f64,
    ) -> RefreshOutcome {
        RefreshOutcome {
            changed,
            ..measured(page, unit, last, dq)
        }
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
