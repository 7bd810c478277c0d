//! Frontier mode (`--new-pages frontier`) through whole simulation runs: the budget holds, no
//! policy learns of a page before a link to it was fetched, every family runs deterministically,
//! and the exact metrics count the new pages the repository lacks.

use std::collections::HashSet;

use super::environment::test_environment as environment;
use super::run::{run, RunConfig};
use crate::corpus::{LiveWeb, PageId, Unit};
use crate::crawl::{CrawlState, NewPages};
use crate::index::testutil::random_corpus;
use crate::policy::registry::FAMILIES;
use crate::policy::{FitMode, PolicyContext, RefreshOutcome, RefreshPolicy};

fn frontier(budget: usize, mode: FitMode) -> RunConfig {
    let mut config = RunConfig::new(budget, mode);
    config.new_pages = NewPages::Frontier;
    config
}

/// Wraps a policy in frontier mode and fails the test if it is offered a page before a link to
/// it was fetched, chooses a page it cannot know, or observes a page it did not choose.
struct FrontierGuard {
    inner: Box<dyn RefreshPolicy>,
    /// Every page linked from a copy the crawler held so far (unit 0 included).
    linked: HashSet<PageId>,
    /// Pages the crawler held or fetched so far.
    fetched: HashSet<PageId>,
    chosen: Vec<PageId>,
    unit: Unit,
    new_crawls: usize,
}

impl FrontierGuard {
    fn new(inner: Box<dyn RefreshPolicy>) -> Self {
        FrontierGuard {
            inner,
            linked: HashSet::new(),
            fetched: HashSet::new(),
            chosen: Vec::new(),
            unit: 0,
            new_crawls: 0,
        }
    }
}

impl RefreshPolicy for FrontierGuard {
    fn name(&self) -> String {
        self.inner.name()
    }
    fn prepare(&mut self, context: &PolicyContext<'_>) {
        if context.mode == FitMode::Online {
            assert!(context.history.is_none());
        }
        self.fetched.extend(context.initial_pages.iter().copied());
        self.inner.prepare(context);
    }
    fn choose(&mut self, _unit: Unit, _budget: usize, _crawl: &CrawlState) -> Vec<PageId> {
        panic!("frontier mode must call choose_with_frontier");
    }
    fn choose_with_frontier(
        &mut self,
        unit: Unit,
        budget: usize,
        crawl: &CrawlState,
    ) -> Vec<PageId> {
        for p in crawl.held_pages() {
            self.linked
                .extend(crawl.held(p).unwrap().version.links.iter().copied());
        }
        for f in crawl.frontier_pages() {
            assert!(
                self.linked.contains(&f.page),
                "page {} offered at unit {unit} before a link to it was fetched",
                f.page
            );
            assert!(f.found < unit && crawl.held(f.page).is_none());
        }
        self.unit = unit;
        self.chosen = self.inner.choose_with_frontier(unit, budget, crawl);
        for &p in &self.chosen {
            assert!(
                self.fetched.contains(&p) || crawl.in_frontier(p),
                "{} chose page {p}, unknown to the crawler, at unit {unit}",
                self.inner.name()
            );
        }
        self.chosen.clone()
    }
    fn observe(&mut self, outcomes: &[RefreshOutcome]) {
        for o in outcomes {
            assert_eq!(o.unit, self.unit);
            assert!(
                self.chosen.contains(&o.page),
                "outcome of page {} it did not fetch (frontier mode crawls nothing outside B)",
                o.page
            );
            self.fetched.insert(o.page);
            self.new_crawls += usize::from(o.discovered);
        }
        self.inner.observe(outcomes);
    }
    fn wants_views(&self, unit: Unit) -> bool {
        self.inner.wants_views(unit)
    }
    fn observe_views(&mut self, view_weight: &[f64]) {
        self.inner.observe_views(view_weight);
    }
}

#[test]
fn frontier_pages_are_known_only_through_fetched_links_and_the_budget_holds() {
    let corpus = random_corpus(60, 8, 21);
    let env = environment(&corpus);
    for family in FAMILIES {
        for mode in [FitMode::Online, FitMode::Oracle] {
            let guard = FrontierGuard::new(family.make([]).unwrap());
            let result = run(&env, Box::new(guard), &frontier(5, mode)).unwrap();
            for r in &result.per_unit {
                // At most B, and no slot lost: 60 pages leave every family enough to fetch.
                assert_eq!(r.refreshed, 5, "{} ({mode:?}) unit {}", family.name, r.unit);
                assert_eq!(r.new_page_fetches + r.refresh_fetches, r.refreshed);
            }
            let new: usize = result.per_unit.iter().map(|r| r.new_page_fetches).sum();
            assert!(new > 0, "{} ({mode:?}) crawled no new page", family.name);
        }
    }
}

#[test]
fn every_family_runs_deterministically_in_frontier_mode() {
    let corpus = random_corpus(50, 7, 4);
    let env = environment(&corpus);
    for family in FAMILIES {
        let once = || {
            run(
                &env,
                family.make([]).unwrap(),
                &frontier(4, FitMode::Online),
            )
            .unwrap()
        };
        let (a, b) = (once(), once());
        assert_eq!(a.per_unit, b.per_unit, "{}", family.name);
        assert_eq!(a.refreshed_pages, b.refreshed_pages, "{}", family.name);
        assert_eq!(a.discovery, b.discovery, "{}", family.name);
    }
}

#[test]
fn outside_the_budget_new_pages_wait_for_nothing_and_frontier_mode_changes_nothing_else_at_b0() {
    let corpus = random_corpus(60, 8, 9);
    let env = environment(&corpus);
    let make = || FAMILIES[0].make([]).unwrap();
    let outside = run(&env, make(), &RunConfig::new(0, FitMode::Online)).unwrap();
    assert!(outside.discovery.new_pages_created > 0);
    assert_eq!(outside.discovery.new_pages_never_crawled, 0);
    assert_eq!(outside.discovery.mean_discovery_delay, 0.0);
    assert!(outside.per_unit.iter().all(|r| r.new_page_fetches == 0));
    // With no budget, frontier mode crawls no new page: they wait until after the run.
    let starved = run(&env, make(), &frontier(0, FitMode::Online)).unwrap();
    let d = starved.discovery;
    assert_eq!(d.new_pages_never_crawled, d.new_pages_created);
    assert!(d.mean_discovery_delay > 0.0);
    assert!(starved.per_unit.iter().any(|r| r.frontier_pages > 0));
}

/// Eq. 5 counts a page users would see on the live Web that the repository lacks: with new
/// pages left out of the repository (frontier mode, no budget), quality is lower once a new page
/// would be among what users are shown. (Not at every unit: a new page also shifts the
/// collection statistics every stale copy is scored with.)
#[test]
fn the_exact_metrics_count_new_pages_the_repository_lacks() {
    let corpus = random_corpus(60, 8, 9);
    let env = environment(&corpus);
    let make = || FAMILIES[0].make([]).unwrap();
    let outside = run(&env, make(), &RunConfig::new(0, FitMode::Online)).unwrap();
    let starved = run(&env, make(), &frontier(0, FitMode::Online)).unwrap();
    assert!(starved.mean.quality < outside.mean.quality);
    assert!(outside
        .per_unit
        .iter()
        .zip(&starved.per_unit)
        .any(|(o, s)| s.search.quality < o.search.quality - 1e-9));
    // And the pages missing are exactly the new ones: held copies never change at B = 0, so the
    // two repositories differ only by them.
    let missing_live_page = (1..corpus.units()).any(|u| {
        (0..corpus.page_count() as PageId).any(|p| {
            corpus.page_at(p, 0).present().is_none() && corpus.page_at(p, u).present().is_some()
        })
    });
    assert!(missing_live_page);
}
