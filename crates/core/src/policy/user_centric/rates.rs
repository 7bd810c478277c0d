//! Each page's change rate λ_p, as user-centric's driver ([`UserCentric`]) keeps it for every
//! estimator: the tie-break among pages of equal priority is the probability that a page
//! changed since its last refresh, and [`ChangeGain`] and [`Whittle`] rank by it.
//!
//! Oracle mode told the rates reads the history's (changes per unit). Online, by default
//! ([`RateModel::Mixture`]) λ_p has a posterior under the site's distribution of change rates,
//! learned by EM from every page's visits ([`RateMixture`]), and what depends on λ_p is its
//! expectation over that posterior: most pages change rarely, so a page not yet visited probably
//! has not changed, which a point rate at the site's mean overstates over long waits. The
//! distribution is learned per directory (host and URL path up to its last `/`), each
//! directory's being the site's plus what its own visited pages showed, in the proportion under
//! which the visits are likeliest ([`RateMixture::set_groups`]): pages of one directory tend to
//! change alike (paper 002's premise; Cho & Ntoulas, "Effective change detection using
//! sampling", VLDB 2002), so a page never visited in a directory whose pages were found changing
//! is likelier to have changed than one in a quiet directory; a site in one directory, or whose
//! directories change alike, keeps the site's distribution ([`RateModel::SiteMixture`] is one
//! distribution for the site). [`RateModel::Pooled`] is the point estimate: the
//! maximum-likelihood Poisson rate of the page's own visits at irregular intervals
//! ([`irregular_mle_rate`]), with a prior of one round-robin cycle `τ` of pseudo-visits at the
//! rate pooled over every page's visits. The mixture serves the estimators that rank by change
//! rate ([`GainEstimator::ranks_by_change`]); the others' rates are the point estimate.
//!
//! [`UserCentric`]: super::estimators::UserCentric
//! [`ChangeGain`]: super::change_gain::ChangeGain
//! [`Whittle`]: super::whittle::Whittle
//! [`GainEstimator::ranks_by_change`]: super::gain_estimator::GainEstimator::ranks_by_change

use super::formulas::elapsed;
use crate::change::{change_probability, irregular_mle_rate, oracle_rate, RateMixture};
use crate::corpus::Unit;
use crate::crawl::CrawlState;
use crate::policy::ChangeHistory;

/// How online [`ChangeGain`](super::change_gain::ChangeGain) and
/// [`Whittle`](super::whittle::Whittle) estimate each page's change rate from the crawler's
/// visits.
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
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            RateModel::Mixture => "mixture",
            RateModel::SiteMixture => "site-mixture",
            RateModel::Pooled => "pooled",
        }
    }

    pub(crate) fn parse(name: &str) -> Option<Self> {
        [
            RateModel::Mixture,
            RateModel::SiteMixture,
            RateModel::Pooled,
        ]
        .into_iter()
        .find(|m| m.as_str() == name)
    }
}

/// What a page's visits revealed about its changes: the intervals that ended finding a change
/// and the time spent in intervals that found none.
#[derive(Debug, Clone, Default)]
struct Visits {
    changed_intervals: Vec<f64>,
    unchanged_time: f64,
}

impl Visits {
    fn record(&mut self, interval: f64, changed: bool) {
        if changed {
            self.changed_intervals.push(interval.max(1.0));
        } else {
            self.unchanged_time += interval.max(1.0);
        }
    }
}

/// Prior of the online change rates: pseudo-observations of one interval `τ` that found a
/// change and an unchanged time chosen so that the prior alone gives the rate `prior_rate`
/// (the root of `τ/(e^{λτ} − 1) = U₀`). It weighs as one visit per round-robin cycle.
fn rate_with_prior(record: &Visits, prior_rate: f64, tau: f64) -> f64 {
    let prior_unchanged = tau / (prior_rate * tau).exp_m1();
    let mut changed: Vec<(f64, f64)> = record.changed_intervals.iter().map(|&t| (t, 1.0)).collect();
    changed.push((tau, 1.0));
    irregular_mle_rate(&changed, record.unchanged_time + prior_unchanged)
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

/// Every page's change rate, from the history or the crawler's visits (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct ChangeRates {
    /// Per page, what its visits revealed.
    visits: Vec<Visits>,
    /// τ of the pooled prior: `N/B` units.
    prior_interval: f64,
    /// Oracle mode told the rates: each page's true change rate (changes per unit over the
    /// history).
    oracle: Option<Vec<f64>>,
    /// Online, [`RateModel::Mixture`] or [`RateModel::SiteMixture`]: the distribution of rates
    /// and each page's visits (refitted at every `choose`).
    mixture: Option<RateMixture>,
    /// [`RateModel::Mixture`]: the mixture's groups are the pages' directories.
    by_directory: bool,
}

impl ChangeRates {
    /// No visit yet, for pages `0..pages`, with the prior interval `τ`; with the mixture of
    /// `model` when `mixture` (else the point estimate).
    pub(crate) fn new(pages: usize, prior_interval: f64, model: RateModel, mixture: bool) -> Self {
        let mixture = mixture && matches!(model, RateModel::Mixture | RateModel::SiteMixture);
        ChangeRates {
            visits: vec![Visits::default(); pages],
            prior_interval,
            oracle: None,
            mixture: mixture.then(|| RateMixture::new(pages)),
            by_directory: model == RateModel::Mixture,
        }
    }

    /// Oracle mode: the rates are the history's, for pages `0..pages`, from now on.
    pub(crate) fn tell(&mut self, history: &ChangeHistory, pages: usize) {
        self.oracle = Some(history_change_rates(history, pages));
    }

    /// Makes room for page ids `0..count`: pages met after `prepare` start unvisited.
    pub(crate) fn grow(&mut self, count: usize) {
        if count > self.visits.len() {
            self.visits.resize(count, Visits::default());
            if let Some(m) = &mut self.mixture {
                m.grow(count);
            }
        }
    }

    /// A visit of `page` after `interval` units, which found a change or not.
    pub(crate) fn observe(&mut self, page: usize, interval: f64, changed: bool) {
        self.visits[page].record(interval, changed);
        if let Some(m) = &mut self.mixture {
            m.observe(page, interval, changed);
        }
    }

    /// Re-estimates the distributions of change rates from the visits so far (online,
    /// [`RateModel::Mixture`] over the directories of `crawl`'s held pages, or
    /// [`RateModel::SiteMixture`]); called before the rates are read at each unit.
    pub(crate) fn fit(&mut self, crawl: &CrawlState) {
        if let Some(m) = &mut self.mixture {
            if self.by_directory {
                m.set_groups(crawl.knowledge().directory_ids());
            }
            m.fit();
        }
    }

    /// Whether the rates are the mixture's posteriors (else point rates).
    pub(crate) fn has_mixture(&self) -> bool {
        self.mixture.is_some()
    }

    /// Each page's change rate λ: the oracle's count over the history, or online the
    /// maximum-likelihood rate of its own visits ([`irregular_mle_rate`]) with a prior of one
    /// round-robin cycle at the rate pooled over every page's visits (itself with a prior of
    /// half a change per cycle, `ln 2/τ`, before anything is seen).
    pub fn rates(&self) -> Vec<f64> {
        if let Some(rates) = &self.oracle {
            return rates.clone();
        }
        if let Some(m) = &self.mixture {
            return m.mean_rates();
        }
        let tau = self.prior_interval.max(1.0);
        let pooled = {
            let mut all = Visits::default();
            for r in &self.visits {
                all.changed_intervals
                    .extend_from_slice(&r.changed_intervals);
                all.unchanged_time += r.unchanged_time;
            }
            rate_with_prior(&all, std::f64::consts::LN_2 / tau, tau)
        };
        self.visits
            .iter()
            .map(|r| rate_with_prior(r, pooled, tau))
            .collect()
    }

    /// Per page, `f(λ_p, t − LR(p))`: at its point rate `rates[p]`, or under the mixture the
    /// expectation over its posterior (`last[p]`: LR(p), the crawl state's last refresh).
    pub(crate) fn over_rates(
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
    pub(crate) fn changed_since(&self, unit: Unit, rates: &[f64], last: &[Unit]) -> Vec<f64> {
        self.over_rates(unit, rates, last, change_probability)
    }
}

#[cfg(test)]
mod tests {
    use super::super::estimators::tests::measured;
    use super::super::estimators::UserCentric;
    use super::*;
    use crate::corpus::PageId;
    use crate::policy::testkit::context;
    use crate::policy::{FitMode, RefreshOutcome, RefreshPolicy};

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
}
