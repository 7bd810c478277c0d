//! Baseline policies: round-robin, uniform random, oldest-first (Age). None of them reads the
//! history, so they behave identically in both fit modes; all skip pages once observed gone.

use rand::seq::index::sample;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::family::PolicyFamily;
use super::{PolicyContext, Reads, RefreshOutcome, RefreshPolicy};
use crate::corpus::{PageId, Unit};
use crate::crawl::CrawlState;

/// Marks pages observed gone (a later refresh that finds content clears the mark), making
/// room for page ids met after `prepare`.
fn note_gone(gone: &mut Vec<bool>, outcomes: &[RefreshOutcome]) {
    for o in outcomes {
        grow(gone, o.page as usize + 1, false);
        gone[o.page as usize] = o.gone;
    }
}

/// Resizes a per-page vector to at least `count` pages.
fn grow<T: Clone>(v: &mut Vec<T>, count: usize, value: T) {
    if count > v.len() {
        v.resize(count, value);
    }
}

/// Cycles over the pages in id order, `budget` per unit, resuming where the last unit stopped.
#[derive(Debug, Clone, Default)]
pub struct RoundRobin {
    cursor: usize,
    gone: Vec<bool>,
}

impl RefreshPolicy for RoundRobin {
    fn name(&self) -> String {
        "round-robin".to_string()
    }

    fn reads(&self) -> Reads {
        Reads {
            delta_q: false,
            fit_mode: false,
            seed: false,
        }
    }

    fn prepare(&mut self, context: &PolicyContext<'_>) {
        self.cursor = 0;
        self.gone = vec![false; context.page_count];
    }

    fn choose(&mut self, _unit: Unit, budget: usize, crawl: &CrawlState) -> Vec<PageId> {
        grow(&mut self.gone, crawl.len(), false);
        let n = self.gone.len();
        let mut out = Vec::with_capacity(budget.min(n));
        let mut scanned = 0;
        while out.len() < budget && scanned < n {
            let p = self.cursor;
            self.cursor = (self.cursor + 1) % n;
            scanned += 1;
            if !self.gone[p] && crawl.is_refreshable(p as PageId) {
                out.push(p as PageId);
            }
        }
        out
    }

    fn observe(&mut self, outcomes: &[RefreshOutcome]) {
        note_gone(&mut self.gone, outcomes);
    }
}

/// `budget` distinct pages drawn uniformly each unit from a ChaCha8 stream seeded by the
/// context's seed (deterministic for a seed).
#[derive(Debug, Clone)]
pub struct UniformRandom {
    rng: ChaCha8Rng,
    gone: Vec<bool>,
}

impl Default for UniformRandom {
    fn default() -> Self {
        UniformRandom {
            rng: ChaCha8Rng::seed_from_u64(0),
            gone: Vec::new(),
        }
    }
}

impl RefreshPolicy for UniformRandom {
    fn name(&self) -> String {
        "random".to_string()
    }

    fn reads(&self) -> Reads {
        Reads {
            delta_q: false,
            fit_mode: false,
            seed: true,
        }
    }

    fn prepare(&mut self, context: &PolicyContext<'_>) {
        self.rng = ChaCha8Rng::seed_from_u64(context.seed);
        self.gone = vec![false; context.page_count];
    }

    fn choose(&mut self, _unit: Unit, budget: usize, crawl: &CrawlState) -> Vec<PageId> {
        grow(&mut self.gone, crawl.len(), false);
        let alive: Vec<PageId> = (0..self.gone.len())
            .filter(|&p| !self.gone[p] && crawl.is_refreshable(p as PageId))
            .map(|p| p as PageId)
            .collect();
        let k = budget.min(alive.len());
        sample(&mut self.rng, alive.len(), k)
            .into_iter()
            .map(|i| alive[i])
            .collect()
    }

    fn observe(&mut self, outcomes: &[RefreshOutcome]) {
        note_gone(&mut self.gone, outcomes);
    }
}

/// Oldest first (Age): the `budget` pages with the largest `t − last refresh` (0 for the
/// initial crawl), ties by page id.
#[derive(Debug, Clone, Default)]
pub struct OldestFirst {
    last_refresh: Vec<Unit>,
    gone: Vec<bool>,
}

impl RefreshPolicy for OldestFirst {
    fn name(&self) -> String {
        "age".to_string()
    }

    fn reads(&self) -> Reads {
        Reads {
            delta_q: false,
            fit_mode: false,
            seed: false,
        }
    }

    fn prepare(&mut self, context: &PolicyContext<'_>) {
        self.last_refresh = vec![0; context.page_count];
        self.gone = vec![false; context.page_count];
    }

    fn choose(&mut self, unit: Unit, budget: usize, crawl: &CrawlState) -> Vec<PageId> {
        grow(&mut self.gone, crawl.len(), false);
        grow(&mut self.last_refresh, crawl.len(), 0);
        let mut pages: Vec<usize> = (0..self.last_refresh.len())
            .filter(|&p| !self.gone[p] && crawl.is_refreshable(p as PageId))
            .collect();
        let age = |p: usize| unit.saturating_sub(self.last_refresh[p]);
        pages.sort_by(|&a, &b| age(b).cmp(&age(a)).then(a.cmp(&b)));
        pages.truncate(budget);
        for &p in &pages {
            self.last_refresh[p] = unit;
        }
        pages.into_iter().map(|p| p as PageId).collect()
    }

    fn observe(&mut self, outcomes: &[RefreshOutcome]) {
        note_gone(&mut self.gone, outcomes);
        for o in outcomes {
            grow(&mut self.last_refresh, o.page as usize + 1, 0);
            self.last_refresh[o.page as usize] = o.unit;
        }
    }
}

/// The `round-robin` family.
pub const ROUND_ROBIN: PolicyFamily = PolicyFamily {
    name: "round-robin",
    description: "Every page in turn, B per unit, in page-id (URL) order",
    params: &[],
    build: |_| Ok(Box::new(RoundRobin::default())),
};

/// The `random` family.
pub const RANDOM: PolicyFamily = PolicyFamily {
    name: "random",
    description: "B distinct pages drawn uniformly each unit (seeded)",
    params: &[],
    build: |_| Ok(Box::new(UniformRandom::default())),
};

/// The `age` family.
pub const AGE: PolicyFamily = PolicyFamily {
    name: "age",
    description: "Oldest first: the B pages refreshed longest ago",
    params: &[],
    build: |_| Ok(Box::new(OldestFirst::default())),
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::{context, history, run};
    use crate::policy::FitMode;

    fn gone(page: PageId, unit: Unit) -> RefreshOutcome {
        RefreshOutcome {
            page,
            unit,
            last_refresh: 0,
            changed: true,
            shingle_change: 1.0,
            delta_q: 0.0,
            gone: true,
            discovered: false,
        }
    }

    #[test]
    fn round_robin_cycles_in_id_order_and_skips_gone_pages() {
        let pages = [0, 1, 2, 3, 4];
        let ctx = context(FitMode::Online, &pages, &[0.0; 5], None, 4, 2);
        let mut rr = RoundRobin::default();
        rr.prepare(&ctx);
        assert_eq!(
            rr.choose(1, 2, &crate::policy::testkit::no_crawl()),
            vec![0, 1]
        );
        rr.observe(&[gone(1, 1)]);
        assert_eq!(
            rr.choose(2, 2, &crate::policy::testkit::no_crawl()),
            vec![2, 3]
        );
        assert_eq!(
            rr.choose(3, 2, &crate::policy::testkit::no_crawl()),
            vec![4, 0]
        );
        assert_eq!(
            rr.choose(4, 2, &crate::policy::testkit::no_crawl()),
            vec![2, 3],
            "page 1 is skipped once gone"
        );
    }

    #[test]
    fn age_refreshes_the_oldest_with_id_ties() {
        let pages = [0, 1, 2, 3];
        let ctx = context(FitMode::Online, &pages, &[0.0; 4], None, 4, 3);
        let mut age = OldestFirst::default();
        age.prepare(&ctx);
        assert_eq!(
            age.choose(1, 3, &crate::policy::testkit::no_crawl()),
            vec![0, 1, 2]
        );
        assert_eq!(
            age.choose(2, 3, &crate::policy::testkit::no_crawl()),
            vec![3, 0, 1]
        );
        age.observe(&[gone(2, 2)]);
        assert_eq!(
            age.choose(3, 3, &crate::policy::testkit::no_crawl()),
            vec![0, 1, 3],
            "2 is gone; the rest all have age 1: by id"
        );
    }

    #[test]
    fn random_is_deterministic_for_a_seed_and_distinct() {
        let h = history(11, &vec![vec![]; 50], &[], &[]);
        let pages: Vec<u32> = (0..50).collect();
        let ctx = context(FitMode::Online, &pages, &[0.0; 50], None, 10, 7);
        let a = run(&mut UniformRandom::default(), &ctx, &h);
        let b = run(&mut UniformRandom::default(), &ctx, &h);
        assert_eq!(a, b);
        assert!(a.iter().all(|c| c.len() == 7));
        assert_ne!(a[0], a[1], "a fresh draw each unit");
        let mut other = ctx.clone();
        other.seed = 43;
        assert_ne!(run(&mut UniformRandom::default(), &other, &h), a);
    }
}
