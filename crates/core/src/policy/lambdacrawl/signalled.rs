//! LambdaCrawl online with change signals: the pages whose signals the run trusts are the
//! paper's complete-observation sources, the rest incomplete (see the module docs of
//! [`super`]).

use super::complete::{complete_change_rate, mixed_plan};
use super::LambdaCrawlModel;
use crate::corpus::{PageId, Unit};
use crate::crawl::CrawlState;
use crate::policy::planned::Planner;
use crate::signal::{keyed_uniform, SignalTrust};

/// The salt of the draw that decides whether a reported change is crawled (distinct from the
/// salts of the site's published signals, so the two draws are independent).
const CRAWL_AFTER_CHANGE: u64 = 0x4c43_0002;

/// The changes a page's signals reported, as the crawler read them.
#[derive(Debug, Clone, Default)]
struct SignalLog {
    /// The unit observation began (the read before the page's first).
    start: Unit,
    /// The latest change date read.
    latest: Unit,
    /// The units of the reported changes, increasing.
    changes: Vec<Unit>,
}

/// What LambdaCrawl keeps of the site's signals (online): every page's reported changes, the
/// pages of the current plan that are complete-observation sources, their Eq. 11 rates and
/// Algorithm 2's crawl probabilities.
#[derive(Debug, Clone, Default)]
pub struct CompleteObservations {
    logs: Vec<SignalLog>,
    /// Complete-observation sources of the current plan, by page.
    pub(super) complete: Vec<bool>,
    /// Their Eq. 11 rates, by page (0 for the others).
    pub(super) rates: Vec<f64>,
    /// Algorithm 2's probability of crawling each after a reported change, by page.
    probabilities: Vec<f64>,
    /// Pages whose signals reported a new change at the last read.
    reported: Vec<PageId>,
    /// Crawls sent by reported changes so far.
    crawls_after_reports: u64,
    /// Whether any signal was read.
    read_any: bool,
}

impl CompleteObservations {
    /// Whether page `p` is a complete-observation source of the current plan.
    pub(super) fn is_complete(&self, p: usize) -> bool {
        self.complete.get(p).copied().unwrap_or(false)
    }

    /// What outputs report (`None` before any signal was read): the complete-observation
    /// pages of the current plan and the crawls reported changes sent.
    pub(super) fn summary(&self) -> Option<serde_json::Value> {
        self.read_any.then(|| {
            serde_json::json!({
                "pages": self.complete.iter().filter(|&&c| c).count(),
                "crawls_after_reports": self.crawls_after_reports,
            })
        })
    }

    /// Reads the signals at `unit`: a page whose latest reported date moved past the last one
    /// read had a change reported at that date.
    fn read(&mut self, unit: Unit, crawl: &CrawlState) {
        self.reported.clear();
        self.read_any = true;
        let start = unit.saturating_sub(1);
        if crawl.len() > self.logs.len() {
            let log = SignalLog {
                start,
                latest: start,
                changes: Vec::new(),
            };
            self.logs.resize(crawl.len(), log);
        }
        for (p, log) in self.logs.iter_mut().enumerate() {
            let Some(signal) = crawl.signal(p as PageId) else {
                continue;
            };
            let Some(date) = signal.lastmod.into_iter().chain(signal.feed).max() else {
                continue;
            };
            if date > log.latest {
                log.latest = date;
                log.changes.push(date);
                self.reported.push(p as PageId);
            }
        }
    }

    /// At a plan: the complete-observation sources (pages whose signal class `trust` deems
    /// informative at their copy's age, the test [`Planner`]'s signal slots use) and their
    /// Eq. 11 rates at `unit`, with the smoothing interval `smoothing`.
    fn classify(&mut self, unit: Unit, crawl: &CrawlState, trust: &SignalTrust, smoothing: f64) {
        let n = self.logs.len();
        self.complete = vec![false; n];
        self.rates = vec![0.0; n];
        for (p, log) in self.logs.iter().enumerate() {
            let page = crawl.page(p as PageId);
            let Some(signal) = crawl.signal(p as PageId) else {
                continue;
            };
            let class = signal.class();
            if page.gone || !class.any() || !trust.is_informative(class, page.last_refresh, unit) {
                continue;
            }
            let times: Vec<f64> = log
                .changes
                .iter()
                .map(|&c| f64::from(c - log.start))
                .collect();
            let now = f64::from(unit.saturating_sub(log.start));
            self.complete[p] = true;
            self.rates[p] = complete_change_rate(&times, now, f64::INFINITY, smoothing);
        }
    }
}

/// LambdaCrawl's choice at `unit` online with signals (the module docs of [`super`]): the
/// complete-observation pages whose change was reported now, each crawled with probability
/// `p_w` by a draw keyed by the run's seed, the page and the unit; then Algorithm 1's
/// schedule of the others over the remaining bandwidth; any capacity left to the complete
/// pages whose signal flags a change since their copy (draws lost earlier), then those of
/// oldest copy. The outcomes teach the run's signal trust.
pub(super) fn choose(
    planner: &mut Planner<LambdaCrawlModel>,
    unit: Unit,
    budget: usize,
    crawl: &CrawlState,
) -> Vec<PageId> {
    planner.model.observed.read(unit, crawl);
    let replanning = budget > 0 && planner.plan_due(unit, budget);
    if replanning {
        let trust = planner.signal_trust();
        let smoothing = planner.prior_interval();
        planner
            .model
            .observed
            .classify(unit, crawl, &trust, smoothing);
    }
    let observed = planner.model.observed.complete.clone();
    let is_complete = |p: PageId| observed.get(p as usize).copied().unwrap_or(false);
    let planned = planner.choose_pages(unit, budget, crawl, &|p| {
        crawl.is_refreshable(p) && !is_complete(p)
    });
    if replanning {
        let (delta, mu): (Vec<f64>, Vec<f64>) = planner.params().iter().copied().unzip();
        let plan = mixed_plan(&mu, &delta, &observed, budget as f64);
        planner.model.observed.probabilities = plan.probabilities;
    }
    let mut chosen = reported_crawls(planner, unit, budget, crawl);
    planner.model.observed.crawls_after_reports += chosen.len() as u64;
    let room = budget - chosen.len();
    chosen.extend(planned.into_iter().take(room));
    if chosen.len() < budget {
        let flagged = |p: PageId, since: Unit| {
            crawl
                .signal(p)
                .and_then(|s| s.flags_change_since(since))
                .unwrap_or(false)
        };
        let mut rest: Vec<(bool, Unit, PageId)> = (0..crawl.len() as PageId)
            .filter(|&p| is_complete(p) && !chosen.contains(&p))
            .filter(|&p| crawl.is_refreshable(p) && !crawl.page(p).gone)
            .map(|p| {
                let since = crawl.page(p).last_refresh;
                (!flagged(p, since), since, p)
            })
            .collect();
        rest.sort_unstable();
        let room = budget - chosen.len();
        chosen.extend(rest.into_iter().take(room).map(|(_, _, p)| p));
    }
    planner.note_signalled(&chosen, crawl);
    chosen
}

/// The complete-observation pages whose signal reported a change at `unit`'s read, since
/// their copy, that Algorithm 2's draw sends to be crawled (`u < p_w`, `u` keyed by the seed,
/// page and unit): at most `budget`, the most important first (ties by page id).
fn reported_crawls(
    planner: &Planner<LambdaCrawlModel>,
    unit: Unit,
    budget: usize,
    crawl: &CrawlState,
) -> Vec<PageId> {
    let model = &planner.model;
    let observed = &model.observed;
    let mut drawn: Vec<(f64, PageId)> = observed
        .reported
        .iter()
        .copied()
        .filter(|&p| observed.is_complete(p as usize) && crawl.is_refreshable(p))
        .filter(|&p| {
            let page = crawl.page(p);
            !page.gone
                && crawl
                    .signal(p)
                    .and_then(|s| s.flags_change_since(page.last_refresh))
                    .unwrap_or(false)
        })
        .filter(|&p| {
            let prob = observed
                .probabilities
                .get(p as usize)
                .copied()
                .unwrap_or(0.0);
            keyed_uniform(model.seed, p, unit, CRAWL_AFTER_CHANGE) < prob
        })
        .map(|p| (model.importance(p as usize), p))
        .collect();
    drawn.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    drawn.into_iter().take(budget).map(|(_, p)| p).collect()
}
