//! `webfountain-s1`, `webfountain-s2`, `webfountain-s3`: paper 004's adaptive crawler in the
//! simulator (SEED-SYSTEMS §4.2.4).
//!
//! At the start of every planning cycle of `periods` units the policy
//! 1. estimates each page's change rate `λ̂_p` — online from its own refreshes
//!    ([`online_rate`], prior interval `N/B`), in oracle mode from the whole history
//!    ([`oracle_rate`]; the history fits rates only, it never says which copy is stale now);
//! 2. puts the pages in change-rate buckets ([`bucket_of`]): bucket 0 for pages never seen to
//!    change, the others `ln λ̂` quantised between `1/(4·units)` and 2 changes per unit;
//! 3. builds the model of §4 over the cycle: `b_i0` the bucket's pages, `a_i = 1 − e^{−λ̄_i}`
//!    with `λ̄_i` the members' mean rate, `y_i0` the expected obsolete pages now
//!    ([`expected_obsolete`]), capacity `B` per unit; no new pages by default (they are
//!    crawled outside the budget, as for every policy), and in frontier mode
//!    (`--new-pages frontier`) the model's new-page terms: `n_0` the frontier's size,
//!    `oldnwt = newnwt` the pages that entered the frontier per fetch so far, `p_i ∝ b_i`, so
//!    the solver's `z_t` says how many frontier pages to crawl in each unit;
//! 4. solves it for the family's strategy ([`CrawlModel::solve`]) and rounds each unit's
//!    crawl counts to integers by largest remainder.
//!
//! Within a unit, each bucket's count goes to its pages refreshed longest ago (within a bucket
//! every page has the same rate, so that is the stalest); budget the plan leaves unused (a
//! strategy that weighs only the cycle's end may leave early units idle, and rounding leaves
//! remainders) goes to the pages most likely changed, `1 − e^{−λ̂·t}` — a crawler does not
//! idle its fetchers.

use super::model::{Bucket, CrawlModel, Strategy, DEFAULT_EPSILON};
use crate::change::oracle_rate;
use crate::corpus::{PageId, Unit};
use crate::crawl::CrawlState;
use crate::optimise::FwOptions;
use crate::policy::family::{ParamKind, ParamSpec, Params, PolicyError, PolicyFamily};
use crate::policy::planned::{online_rate, Observations};
use crate::policy::{FitMode, PolicyContext, RefreshOutcome, RefreshPolicy};

/// Units per planning cycle by default: paper 004's T = 14 periods.
pub(crate) const DEFAULT_PERIODS: u32 = 14;
/// Buckets by default: paper 004's 255 (one byte per page, one value reserved).
pub(crate) const DEFAULT_BUCKETS: usize = 255;
/// Frank–Wolfe steps per start and cycle: the paper-like instance's best start converges in
/// under 200; the others are only there to be beaten.
const CYCLE_ITERATIONS: usize = 500;

/// The adaptive WebFountain crawler (see the module docs).
#[derive(Debug, Clone)]
pub struct WebFountain {
    strategy: Strategy,
    periods: u32,
    buckets: usize,
    units: Unit,
    budget: usize,
    prior_interval: f64,
    /// Pages the crawler holds or has fetched (the initial crawl's and every observed one);
    /// whether a page is gone and when it was last fetched are read from the crawl state.
    known: Vec<bool>,
    observations: Vec<Observations>,
    /// Oracle mode: every page's rate from the whole history.
    oracle_rates: Option<Vec<f64>>,
    /// The current cycle: its first unit, the bucket of every page, and the integer crawl
    /// counts `[unit in cycle][bucket]`.
    cycle_start: Unit,
    bucket: Vec<usize>,
    counts: Vec<Vec<usize>>,
    /// The solver's report of the last cycle (for `settings`).
    last_solve: Option<serde_json::Value>,
    /// Frontier mode: the frontier as the current unit's choice saw it (`None` otherwise).
    frontier: Option<FrontierNow>,
    /// Frontier mode: new pages to crawl at each unit of the cycle (`z_t`, rounded).
    new_counts: Vec<usize>,
    /// Frontier mode: fetches observed (the denominator of new pages met per fetch).
    frontier_fetches: usize,
}

/// What the model's new-page terms are fitted from (frontier mode).
#[derive(Debug, Clone, Copy)]
struct FrontierNow {
    /// `n_0`: frontier pages now.
    known: f64,
    /// `oldnwt = newnwt`: pages that entered the frontier per fetch, over the run so far.
    finds_new: f64,
}

impl WebFountain {
    pub(crate) fn new(strategy: Strategy, periods: u32, buckets: usize) -> Self {
        WebFountain {
            strategy,
            periods,
            buckets,
            units: 1,
            budget: 0,
            prior_interval: 1.0,
            known: Vec::new(),
            observations: Vec::new(),
            oracle_rates: None,
            cycle_start: 0,
            bucket: Vec::new(),
            counts: Vec::new(),
            last_solve: None,
            frontier: None,
            new_counts: Vec::new(),
            frontier_fetches: 0,
        }
    }

    fn grow(&mut self, pages: usize) {
        if pages > self.known.len() {
            self.known.resize(pages, false);
            self.observations.resize(pages, Observations::default());
        }
    }

    /// `λ̂_p` and whether the page was ever seen (or, in oracle mode, known) to change.
    fn rate(&self, p: usize) -> (f64, bool) {
        match &self.oracle_rates {
            Some(rates) => (rates[p], rates[p] > 0.0),
            None => {
                let obs = &self.observations[p];
                (
                    online_rate(obs, obs.changed, self.prior_interval),
                    obs.changed > 0,
                )
            }
        }
    }

    fn live_pages<'a>(&'a self, crawl: &'a CrawlState) -> impl Iterator<Item = usize> + 'a {
        (0..self.known.len()).filter(|&p| self.known[p] && !crawl.page(p as PageId).gone)
    }

    /// Steps 1–4 of the module docs, for the cycle starting at `unit`.
    fn plan_cycle(&mut self, unit: Unit, crawl: &CrawlState) {
        let periods = self.periods.min(self.units + 1 - unit).max(1) as usize;
        self.cycle_start = unit;
        self.bucket = vec![usize::MAX; self.known.len()];
        // Buckets by rate; only the non-empty ones enter the model.
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); self.buckets];
        let mut rates = vec![0.0; self.known.len()];
        let pages: Vec<usize> = self.live_pages(crawl).collect();
        for &p in &pages {
            let (rate, changed) = self.rate(p);
            rates[p] = rate;
            let b = bucket_of(rate, changed, self.units, self.buckets);
            members[b].push(p);
        }
        let used: Vec<usize> = (0..self.buckets)
            .filter(|&b| !members[b].is_empty())
            .collect();
        let now = unit.saturating_sub(1);
        let total_pages = pages.len().max(1) as f64;
        let frontier = self.frontier;
        let buckets: Vec<Bucket> = used
            .iter()
            .map(|&b| {
                let m = &members[b];
                let mean_rate = m.iter().map(|&p| rates[p]).sum::<f64>() / m.len() as f64;
                let change = change_per_period(mean_rate);
                let obsolete = m
                    .iter()
                    .map(|&p| {
                        let last = crawl.page(p as PageId).last_refresh;
                        expected_obsolete(change, now.saturating_sub(last))
                    })
                    .sum();
                Bucket {
                    pages: m.len() as f64,
                    change: vec![change; periods],
                    cost: vec![1.0; periods],
                    obsolete,
                    // New pages join buckets in proportion to their sizes (p_i ∝ b_i, §4).
                    new_share: if frontier.is_some() {
                        m.len() as f64 / total_pages
                    } else {
                        0.0
                    },
                    finds_new: frontier.map_or(0.0, |f| f.finds_new),
                }
            })
            .collect();
        for (k, &b) in used.iter().enumerate() {
            for &p in &members[b] {
                self.bucket[p] = k;
            }
        }
        self.counts = vec![vec![0; used.len()]; periods];
        self.new_counts = vec![0; periods];
        if buckets.is_empty() || self.budget == 0 {
            self.last_solve = None;
            return;
        }
        let model = CrawlModel {
            periods,
            buckets,
            capacity: vec![self.budget as f64; periods],
            new_cost: vec![1.0; periods],
            new_known: frontier.map_or(0.0, |f| f.known),
            new_arrivals: vec![0.0; periods],
            new_finds_new: frontier.map_or(0.0, |f| f.finds_new),
        };
        let options = FwOptions {
            max_iterations: CYCLE_ITERATIONS,
            ..FwOptions::default()
        };
        match model.solve(self.strategy, options) {
            Ok(plan) => {
                for (t, counts) in self.counts.iter_mut().enumerate() {
                    let mut want: Vec<f64> = plan.crawls.iter().map(|c| c[t]).collect();
                    if model.has_new_pages() {
                        // z_t rounded with the x_it, the last entry.
                        want.push(plan.new_crawls.get(t).copied().unwrap_or(0.0));
                        let mut all = largest_remainder(&want, self.budget);
                        self.new_counts[t] = all.pop().unwrap_or(0);
                        *counts = all;
                    } else {
                        *counts = largest_remainder(&want, self.budget);
                    }
                }
                self.last_solve = Some(serde_json::json!({
                    "cycle_start": unit,
                    "buckets": used.len(),
                    "objective": plan.objective,
                    "relative_gap": plan.optimality.relative_gap,
                    "stop": plan.optimality.stop,
                }));
                if model.has_new_pages() {
                    if let Some(serde_json::Value::Object(m)) = self.last_solve.as_mut() {
                        m.insert(
                            "new_pages_planned".into(),
                            plan.new_crawls.iter().sum::<f64>().into(),
                        );
                    }
                }
            }
            // A model the solver cannot handle leaves the whole budget to the fallback rule
            // (the most likely changed pages): the run goes on, the settings say why.
            Err(e) => {
                self.last_solve = Some(serde_json::json!({
                    "cycle_start": unit,
                    "error": e.to_string(),
                }));
            }
        }
    }
}

impl WebFountain {
    /// Plans a cycle when none is current (or the budget changed).
    fn ensure_plan(&mut self, unit: Unit, budget: usize, crawl: &CrawlState) {
        if budget != self.budget || self.counts.is_empty() {
            self.budget = budget;
            self.plan_cycle(unit, crawl);
        } else if unit >= self.cycle_start + self.counts.len() as Unit {
            self.plan_cycle(unit, crawl);
        }
    }

    /// The unit's planned bucket counts (within `budget`), then `spare_new` frontier pages,
    /// then the pages most likely changed, up to `budget`.
    fn pick(
        &mut self,
        unit: Unit,
        budget: usize,
        spare_new: &[PageId],
        crawl: &CrawlState,
    ) -> Vec<PageId> {
        let last_refresh = |p: usize| crawl.page(p as PageId).last_refresh;
        let t = (unit - self.cycle_start) as usize;
        let counts = self.counts.get(t).cloned().unwrap_or_default();
        // Each bucket's count to its pages refreshed longest ago (then the lowest id).
        let mut by_bucket: Vec<Vec<usize>> = vec![Vec::new(); counts.len()];
        // (Pages discovered during the cycle have no bucket yet: the fallback rule serves them.)
        for p in self.live_pages(crawl) {
            if let Some(&b) = self.bucket.get(p).filter(|&&b| b < by_bucket.len()) {
                by_bucket[b].push(p);
            }
        }
        let mut chosen = Vec::with_capacity(budget);
        let mut taken = vec![false; self.known.len()];
        for (b, mut pages) in by_bucket.into_iter().enumerate() {
            let k = counts[b].min(pages.len()).min(budget - chosen.len());
            if k == 0 {
                continue;
            }
            let key = |&p: &usize| (last_refresh(p), p);
            pages.select_nth_unstable_by_key(k - 1, key);
            pages[..k].sort_by_key(key);
            for &p in &pages[..k] {
                taken[p] = true;
                chosen.push(p as PageId);
            }
        }
        chosen.extend(
            spare_new
                .iter()
                .copied()
                .take(budget.saturating_sub(chosen.len())),
        );
        // The rest of the budget: the pages most likely changed since their last refresh.
        if chosen.len() < budget {
            let now = f64::from(unit);
            let mut rest: Vec<(f64, Unit, usize)> = self
                .live_pages(crawl)
                .filter(|&p| !taken[p])
                .map(|p| {
                    let elapsed = now - f64::from(last_refresh(p));
                    let (rate, _) = self.rate(p);
                    (1.0 - (-rate * elapsed).exp(), last_refresh(p), p)
                })
                .collect();
            rest.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
            chosen.extend(
                rest.into_iter()
                    .take(budget - chosen.len())
                    .map(|(_, _, p)| p as PageId),
            );
        }
        chosen
    }
}

/// `a = 1 − e^{−λ}`: the probability that a page of rate `λ` (changes per unit, Poisson)
/// changes within one period (paper 004 §4's `a_it`; SEED-SYSTEMS §4.2.4).
pub(crate) fn change_per_period(rate: f64) -> f64 {
    1.0 - (-rate.max(0.0)).exp()
}

/// `1 − (1 − a)^Δ`: the chance that a page of per-period change probability `a`, refreshed
/// `Δ` periods ago, is obsolete now (SEED-SYSTEMS §4.2.4's `y_i0`, one page's share).
pub fn expected_obsolete(change: f64, elapsed: Unit) -> f64 {
    1.0 - (1.0 - change).powi(elapsed.min(i32::MAX as u32) as i32)
}

/// The change-rate bucket of a page (SEED-SYSTEMS §4.2.4): 0 when it was never seen to
/// change; otherwise `ln λ` quantised into `buckets − 1` equal-width bins between
/// `λ_min = 1/(4·units)` and `λ_max = 2` per unit (rates outside go to the end bins).
pub fn bucket_of(rate: f64, ever_changed: bool, units: Unit, buckets: usize) -> usize {
    if !ever_changed || buckets < 2 {
        return 0;
    }
    let (lo, hi) = ((1.0 / (4.0 * f64::from(units.max(1)))).ln(), 2f64.ln());
    let bins = buckets - 1;
    let x = (rate.max(1e-300).ln() - lo) / (hi - lo);
    1 + ((x * bins as f64).floor().max(0.0) as usize).min(bins - 1)
}

/// Integer counts summing to at most `total` whose shares follow `want` (largest remainder;
/// ties to the lower index).
pub(crate) fn largest_remainder(want: &[f64], total: usize) -> Vec<usize> {
    let clean: Vec<f64> = want
        .iter()
        .map(|&w| if w.is_finite() { w.max(0.0) } else { 0.0 })
        .collect();
    let sum: f64 = clean.iter().sum();
    // Round a plan that spends the capacity up to it; never beyond.
    let target = (sum.round() as usize).min(total);
    let scale = if sum > target as f64 && sum > 0.0 {
        target as f64 / sum
    } else {
        1.0
    };
    let mut counts: Vec<usize> = clean.iter().map(|w| (w * scale).floor() as usize).collect();
    let mut left = target.saturating_sub(counts.iter().sum());
    let mut order: Vec<usize> = (0..clean.len()).collect();
    let frac = |i: usize| clean[i] * scale - counts[i] as f64;
    order.sort_by(|&a, &b| frac(b).total_cmp(&frac(a)).then(a.cmp(&b)));
    for i in order {
        if left == 0 {
            break;
        }
        counts[i] += 1;
        left -= 1;
    }
    counts
}

impl RefreshPolicy for WebFountain {
    fn name(&self) -> String {
        format!("webfountain-s{}", self.strategy.number())
    }

    fn label(&self) -> String {
        match self.strategy {
            Strategy::HeavyLast { epsilon } => format!("{} (ε = {epsilon})", self.name()),
            _ => self.name(),
        }
    }

    fn settings(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        m.insert("periods".into(), self.periods.into());
        m.insert("buckets".into(), self.buckets.into());
        if let Strategy::HeavyLast { epsilon } = self.strategy {
            m.insert("eps".into(), epsilon.into());
        }
        if let Some(s) = &self.last_solve {
            m.insert("last_cycle".into(), s.clone());
        }
        m
    }

    fn prepare(&mut self, context: &PolicyContext<'_>) {
        self.units = context.units.max(1);
        self.budget = context.budget;
        self.prior_interval = (context.page_count as f64 / context.budget.max(1) as f64).max(1.0);
        self.known = vec![false; context.page_count];
        self.observations = vec![Observations::default(); context.page_count];
        for &p in context.initial_pages {
            self.known[p as usize] = true;
        }
        self.oracle_rates = match (context.mode, context.history) {
            (FitMode::Oracle, Some(h)) => Some(
                (0..context.page_count)
                    .map(|p| {
                        h.pages
                            .get(p)
                            .map_or(0.0, |ph| oracle_rate(ph.change_units.len(), h.units))
                    })
                    .collect(),
            ),
            _ => None,
        };
        self.counts.clear();
        self.new_counts.clear();
        self.frontier = None;
        self.frontier_fetches = 0;
        self.cycle_start = 0;
    }

    fn choose(&mut self, unit: Unit, budget: usize, crawl: &CrawlState) -> Vec<PageId> {
        self.grow(crawl.len());
        self.frontier = None;
        self.ensure_plan(unit, budget, crawl);
        self.pick(unit, budget, &[], crawl)
    }

    /// Frontier mode: the model plans new pages too (`z_t`, with `n_0` the frontier's size and
    /// `oldnwt = newnwt` the new pages met per fetch so far); each unit crawls its `z_t`
    /// frontier pages in discovery order, then its bucket counts. Budget the plan leaves
    /// unused goes first to the rest of the frontier (a never-crawled page is obsolete with
    /// certainty), then to the pages most likely changed.
    fn choose_with_frontier(
        &mut self,
        unit: Unit,
        budget: usize,
        crawl: &CrawlState,
    ) -> Vec<PageId> {
        self.grow(crawl.len());
        let frontier: Vec<PageId> = crawl.frontier_pages().iter().map(|f| f.page).collect();
        let arrivals: usize = crawl
            .frontier()
            .map_or(0, |f| f.arrivals().iter().skip(1).sum());
        self.frontier = Some(FrontierNow {
            known: frontier.len() as f64,
            finds_new: if self.frontier_fetches > 0 {
                arrivals as f64 / self.frontier_fetches as f64
            } else {
                0.0
            },
        });
        self.ensure_plan(unit, budget, crawl);
        let t = (unit - self.cycle_start) as usize;
        let z = self
            .new_counts
            .get(t)
            .copied()
            .unwrap_or(0)
            .min(frontier.len())
            .min(budget);
        let mut chosen = frontier[..z].to_vec();
        chosen.extend(self.pick(unit, budget - z, &frontier[z..], crawl));
        chosen
    }

    fn observe(&mut self, outcomes: &[RefreshOutcome]) {
        for o in outcomes {
            self.grow(o.page as usize + 1);
            let p = o.page as usize;
            self.known[p] = true;
            if !o.discovered {
                self.observations[p].record(o, 0.0);
            }
            if self.frontier.is_some() {
                self.frontier_fetches += 1;
            }
        }
    }
}

const PERIODS: ParamSpec = ParamSpec {
    key: "periods",
    description: "Units per planning cycle (the model's T; re-solved at each cycle's start)",
    kind: ParamKind::Number {
        min: 1.0,
        max: 1000.0,
        integer: true,
    },
    default: "14 (paper 004)",
    sweep: &[],
};
const BUCKETS: ParamSpec = ParamSpec {
    key: "buckets",
    description: "Change-rate buckets (bucket 0: never seen to change; the rest by ln λ)",
    kind: ParamKind::Number {
        min: 2.0,
        max: 4096.0,
        integer: true,
    },
    default: "255 (paper 004)",
    sweep: &[],
};
const EPS: ParamSpec = ParamSpec {
    key: "eps",
    description: "Strategy 3's ε: weight of each period but the last (the last gets 1 − (T−1)ε)",
    kind: ParamKind::Number {
        min: 0.0,
        max: 1.0,
        integer: false,
    },
    default: "0.01",
    sweep: &[0.001, 0.002, 0.005, 0.01],
};
const PARAMS_12: &[ParamSpec] = &[PERIODS, BUCKETS];
const PARAMS_3: &[ParamSpec] = &[PERIODS, BUCKETS, EPS];

fn build(number: u8, params: &Params) -> Result<Box<dyn RefreshPolicy>, PolicyError> {
    let periods = params
        .number("periods")
        .map_or(DEFAULT_PERIODS, |x| x as u32);
    let buckets = params
        .number("buckets")
        .map_or(DEFAULT_BUCKETS, |x| x as usize);
    let epsilon = params.number("eps").unwrap_or(DEFAULT_EPSILON);
    if number == 3 {
        super::instance::check_epsilon(epsilon, periods as usize).map_err(|expected| {
            PolicyError::BadValue {
                policy: "webfountain-s3".into(),
                key: "eps".into(),
                value: epsilon.to_string(),
                expected: expected.to_string(),
            }
        })?;
    }
    let strategy = Strategy::numbered(number, epsilon).expect("1, 2 or 3");
    Ok(Box::new(WebFountain::new(strategy, periods, buckets)))
}

/// `webfountain-s1`: minimise the mean obsolete pages over the cycle.
pub(crate) const S1: PolicyFamily = PolicyFamily {
    name: "webfountain-s1",
    description: "Paper 004 Strategy 1: change-rate buckets, crawl counts minimising the mean obsolete pages over each cycle",
    params: PARAMS_12,
    build: |p: &Params| build(1, p),
};
/// `webfountain-s2`: minimise the obsolete pages at the cycle's end.
pub(crate) const S2: PolicyFamily = PolicyFamily {
    name: "webfountain-s2",
    description: "Paper 004 Strategy 2: change-rate buckets, crawl counts minimising the obsolete pages at each cycle's end",
    params: PARAMS_12,
    build: |p: &Params| build(2, p),
};
/// `webfountain-s3`: ε in every period, most weight at the cycle's end.
pub(crate) const S3: PolicyFamily = PolicyFamily {
    name: "webfountain-s3",
    description: "Paper 004 Strategy 3: change-rate buckets, obsolete pages weighted ε per period and 1−(T−1)ε at each cycle's end",
    params: PARAMS_3,
    build: |p: &Params| build(3, p),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_follow_the_log_rate() {
        assert_eq!(bucket_of(0.5, false, 48, 255), 0);
        let slow = bucket_of(1.0 / 192.0, true, 48, 255);
        let fast = bucket_of(2.0, true, 48, 255);
        assert_eq!(slow, 1);
        assert_eq!(fast, 254);
        assert_eq!(bucket_of(100.0, true, 48, 255), 254);
        assert_eq!(bucket_of(1e-9, true, 48, 255), 1);
        let mid = bucket_of(0.1, true, 48, 255);
        assert!(slow < mid && mid < fast);
    }

    #[test]
    fn largest_remainder_keeps_the_total_and_the_shares() {
        assert_eq!(largest_remainder(&[1.5, 1.5, 1.0], 4), vec![2, 1, 1]);
        assert_eq!(largest_remainder(&[2.2, 0.4, 0.4], 3), vec![2, 1, 0]);
        // A plan above capacity (round-off) is scaled down to it.
        assert_eq!(
            largest_remainder(&[2.0, 2.0000001], 4)
                .iter()
                .sum::<usize>(),
            4
        );
        // A plan below capacity stays below.
        assert_eq!(largest_remainder(&[0.6, 0.3], 10), vec![1, 0]);
        assert_eq!(largest_remainder(&[f64::NAN, 1.0], 2), vec![0, 1]);
    }

    #[test]
    fn expected_obsolete_grows_with_time_since_refresh() {
        assert_eq!(expected_obsolete(0.5, 0), 0.0);
        assert_eq!(expected_obsolete(0.5, 1), 0.5);
        assert_eq!(expected_obsolete(0.5, 2), 0.75);
        assert!((change_per_period(2f64.ln()) - 0.5).abs() < 1e-12);
    }
}
