//! The rounds protocol (`RefreshPolicy::rounds`) through whole simulation runs: a policy
//! sees its first round's outcomes before choosing the rest, never sees a page it did not
//! fetch, never exceeds the budget, loses nothing to duplicates, and its unit's batch is judged
//! exactly as the same list chosen in one shot — with and without a frontier and a warm-up.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use super::environment::test_environment as environment;
use super::run::{run, RunConfig, RunResult};
use crate::corpus::{PageId, Unit};
use crate::crawl::{CrawlState, NewPages};
use crate::index::testutil::random_corpus;
use crate::policy::{
    FitMode, PolicyContext, ProbeOutcome, RefreshOutcome, RefreshPolicy, RoundPolicy,
};

/// What the sampler saw, kept after the run.
#[derive(Debug, Default)]
struct Log {
    /// Per unit: rounds that fetched something.
    rounds: HashMap<Unit, u32>,
    /// Units at which `choose_round` was called.
    asked_units: HashSet<Unit>,
    /// Probes of first crawls of frontier pages.
    first_crawls: usize,
    /// Second-round picks that came from a probed copy's links.
    picked_from_copies: usize,
}

/// A sampling policy: round 0 probes three held pages (with an unknown id and a duplicate
/// thrown in), round 1 follows the links of the probes' *new copies* that changed, asks again
/// for the pages already fetched and for more pages than remain; round 2 stops. It checks the
/// protocol's guarantees as it goes.
struct Sampler {
    budget: usize,
    page_count: usize,
    unit: Unit,
    /// Pages fetched this unit (from the probes), in fetch order.
    fetched: Vec<PageId>,
    probes: Vec<ProbeOutcome>,
    /// The pages asked for in the current round.
    asked: Vec<PageId>,
    /// Of those, the ones the crawler may fetch (allocated ids it knows).
    fetchable: HashSet<PageId>,
    rounds_observed: u32,
    /// Held capture unit at round 0 of the pages probed (the view must not move in the unit).
    held_at_start: HashMap<PageId, Option<Unit>>,
    log: Arc<Mutex<Log>>,
}

impl Sampler {
    fn new(log: Arc<Mutex<Log>>) -> Self {
        Sampler {
            budget: 0,
            page_count: 0,
            unit: 0,
            fetched: Vec::new(),
            probes: Vec::new(),
            asked: Vec::new(),
            fetchable: HashSet::new(),
            rounds_observed: 0,
            held_at_start: HashMap::new(),
            log,
        }
    }
}

impl RefreshPolicy for Sampler {
    fn name(&self) -> String {
        "sampler".into()
    }
    fn prepare(&mut self, context: &PolicyContext<'_>) {
        self.budget = context.budget;
        self.page_count = context.page_count;
        // The refresher offers what the crawler knows after the initial crawl.
        let crawl = context
            .crawl
            .expect("the refresher fills in the crawl state");
        assert!(crawl.knowledge().held_pages().count() > 0);
    }
    fn choose(&mut self, _unit: Unit, _budget: usize, _crawl: &CrawlState) -> Vec<PageId> {
        panic!("a policy using rounds is asked through choose_round");
    }
    fn choose_with_frontier(&mut self, _: Unit, _: usize, _: &CrawlState) -> Vec<PageId> {
        panic!("a policy using rounds is asked through choose_round, frontier mode too");
    }
    fn rounds(&mut self) -> Option<&mut dyn RoundPolicy> {
        Some(self)
    }
    fn observe(&mut self, outcomes: &[RefreshOutcome]) {
        if self.rounds_observed == 0 {
            // A warm-up unit: every held page refreshed without asking the policy.
            return;
        }
        // The unit's refreshes are the probes' pages, in fetch order, with the same findings.
        let refreshes: Vec<&RefreshOutcome> = outcomes
            .iter()
            .take_while(|o| self.fetched.contains(&o.page))
            .collect();
        assert_eq!(refreshes.len(), self.fetched.len());
        for (o, probe) in refreshes.iter().zip(&self.probes) {
            assert_eq!(o.page, probe.page);
            assert_eq!(o.unit, self.unit);
            assert_eq!(o.changed, probe.changed, "page {}", o.page);
            assert_eq!(o.shingle_change, probe.shingle_change, "page {}", o.page);
            assert_eq!(o.gone, probe.gone, "page {}", o.page);
            assert_eq!(o.discovered, probe.first_crawl, "page {}", o.page);
        }
        for o in &outcomes[refreshes.len()..] {
            assert!(o.discovered, "outcome of page {} it did not fetch", o.page);
        }
        self.log
            .lock()
            .unwrap()
            .rounds
            .insert(self.unit, self.rounds_observed);
        self.fetched.clear();
        self.probes.clear();
        self.held_at_start.clear();
        self.rounds_observed = 0;
    }
}

impl RoundPolicy for Sampler {
    fn choose_round(
        &mut self,
        unit: Unit,
        round: u32,
        remaining: usize,
        crawl: &CrawlState,
    ) -> Vec<PageId> {
        self.log.lock().unwrap().asked_units.insert(unit);
        assert_eq!(
            round, self.rounds_observed,
            "round numbers follow observed rounds"
        );
        assert_eq!(
            remaining,
            self.budget - self.fetched.len(),
            "unit {unit} round {round}"
        );
        self.asked = match round {
            0 => {
                self.unit = unit;
                let held: Vec<PageId> = crawl.held_pages().collect();
                let start = unit as usize * 7 % held.len();
                let mut pick: Vec<PageId> =
                    held.iter().cycle().skip(start).take(3).copied().collect();
                // A frontier page, when there is one (a first crawl inside the budget).
                pick.extend(crawl.frontier_pages().first().map(|f| f.page));
                let first = pick[0];
                pick.push(self.page_count as PageId + 5); // an id nobody allocated
                pick.push(first); // twice in one round
                pick
            }
            1 => {
                assert_eq!(self.rounds_observed, 1, "round 1 before round 0's outcomes");
                // The view is still as of the start of the unit.
                for (&p, &held) in &self.held_at_start {
                    assert_eq!(crawl.held_unit(p), held, "page {p}'s copy moved mid-unit");
                }
                let mut pick: Vec<PageId> = Vec::new();
                // The new copies of the pages that changed (a gone page has none).
                for copy in self
                    .probes
                    .iter()
                    .filter(|p| p.changed)
                    .filter_map(|p| p.copy.as_ref())
                {
                    pick.extend(
                        copy.links
                            .iter()
                            .copied()
                            .filter(|q| !self.fetched.contains(q)),
                    );
                }
                self.log.lock().unwrap().picked_from_copies += pick.len();
                // Duplicates across rounds, then more than the budget left.
                pick.extend(self.fetched.iter().copied());
                let more = remaining + self.fetched.len() + 5;
                pick.extend(crawl.held_pages().take(more));
                pick
            }
            _ => Vec::new(),
        };
        self.fetchable = self
            .asked
            .iter()
            .copied()
            .filter(|&p| (p as usize) < self.page_count && crawl.is_known(p))
            .collect();
        if round == 0 {
            for &p in &self.asked {
                self.held_at_start.insert(p, crawl.held_unit(p));
            }
        }
        self.asked.clone()
    }
    fn observe_round(&mut self, probes: &[ProbeOutcome]) {
        assert!(!probes.is_empty(), "an empty round is not reported");
        for probe in probes {
            assert_eq!(probe.round, self.rounds_observed);
            assert!(
                self.fetchable.contains(&probe.page),
                "probe of page {} it did not ask for, or could not know",
                probe.page
            );
            assert!(
                !self.fetched.contains(&probe.page),
                "page {} fetched twice in one unit",
                probe.page
            );
            assert_eq!(probe.copy.is_none(), probe.gone);
            assert!(!(probe.first_crawl && probe.changed));
            self.fetched.push(probe.page);
            self.log.lock().unwrap().first_crawls += usize::from(probe.first_crawl);
        }
        assert!(self.fetched.len() <= self.budget, "budget exceeded");
        self.probes.extend(probes.iter().cloned());
        self.rounds_observed += 1;
    }
}

/// Chooses, in one shot, the lists another run refreshed (unit → pages).
struct Replay(HashMap<Unit, Vec<PageId>>);

impl RefreshPolicy for Replay {
    fn name(&self) -> String {
        "sampler".into()
    }
    fn prepare(&mut self, _context: &PolicyContext<'_>) {}
    fn choose(&mut self, unit: Unit, _budget: usize, _crawl: &CrawlState) -> Vec<PageId> {
        self.0.get(&unit).cloned().unwrap_or_default()
    }
    fn choose_with_frontier(
        &mut self,
        unit: Unit,
        budget: usize,
        crawl: &CrawlState,
    ) -> Vec<PageId> {
        self.choose(unit, budget, crawl)
    }
    fn observe(&mut self, _outcomes: &[RefreshOutcome]) {}
}

fn replayed(result: &RunResult) -> Replay {
    Replay(
        result
            .per_unit
            .iter()
            .zip(&result.refreshed_pages)
            .map(|(r, pages)| (r.unit, pages.clone()))
            .collect(),
    )
}

fn check(config: &RunConfig) -> (RunResult, Log) {
    let corpus = random_corpus(60, 8, 21);
    let env = environment(&corpus);
    let log = Arc::new(Mutex::new(Log::default()));
    let result = run(&env, Box::new(Sampler::new(Arc::clone(&log))), config).unwrap();
    for (r, pages) in result.per_unit.iter().zip(&result.refreshed_pages) {
        assert!(r.refreshed <= config.budget, "unit {}", r.unit);
        let distinct: HashSet<&PageId> = pages.iter().collect();
        assert_eq!(distinct.len(), pages.len(), "unit {}: {pages:?}", r.unit);
        // Duplicates and unknown ids cost no slot: the second round fills the budget.
        assert_eq!(r.refreshed, config.budget, "unit {}", r.unit);
    }
    // The batch of all rounds is judged exactly as the same list chosen in one shot.
    let one_shot = run(&env, Box::new(replayed(&result)), config).unwrap();
    assert_eq!(one_shot.per_unit, result.per_unit);
    assert_eq!(one_shot.refreshed_pages, result.refreshed_pages);
    drop(env);
    let log = Arc::try_unwrap(log).unwrap().into_inner().unwrap();
    (result, log)
}

#[test]
fn a_policy_using_rounds_sees_its_first_round_before_choosing_the_rest() {
    for mode in [FitMode::Online, FitMode::Oracle] {
        let (result, log) = check(&RunConfig::new(8, mode));
        assert_eq!(result.per_unit.len(), 7);
        for r in &result.per_unit {
            assert_eq!(log.rounds[&r.unit], 2, "unit {}", r.unit);
        }
        assert!(
            log.picked_from_copies > 0,
            "no changed probe's links were followed"
        );
        assert_eq!(log.first_crawls, 0);
    }
}

#[test]
fn rounds_work_in_frontier_mode_and_after_a_warm_up() {
    let mut config = RunConfig::new(6, FitMode::Online);
    config.new_pages = NewPages::Frontier;
    let (result, log) = check(&config);
    assert!(log.first_crawls > 0, "no frontier page crawled in a round");
    let new: usize = result.per_unit.iter().map(|r| r.new_page_fetches).sum();
    assert_eq!(new, log.first_crawls);

    let mut config = RunConfig::new(6, FitMode::Online);
    config.warmup_units = 2;
    let (result, log) = check(&config);
    assert_eq!(result.per_unit.first().map(|r| r.unit), Some(3));
    // Warm-up units refresh every page without asking the policy.
    assert!(!log.asked_units.contains(&1) && !log.asked_units.contains(&2));
    assert!(log.asked_units.contains(&3));
}
