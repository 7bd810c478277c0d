//! Baseline policies: round-robin, uniform random, oldest-first (Age). None of them reads the
//! history, so they behave identically in both fit modes; all skip pages whose last fetch
//! found them gone. What they read of each page (gone, last refresh) is the crawl state's:
//! none keeps a copy.

use rand::seq::index::sample;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::family::PolicyFamily;
use super::{PolicyContext, Reads, RefreshOutcome, RefreshPolicy};
use crate::corpus::{PageId, Unit};
use crate::crawl::CrawlState;

/// The page ids to consider: those of `prepare` and any met since (the crawl state grows with
/// the fetcher's ids).
fn pages_known(page_count: &mut usize, crawl: &CrawlState) -> usize {
    *page_count = (*page_count).max(crawl.len());
    *page_count
}

/// Whether `page` may be refreshed: not found gone by its last fetch, and refreshable in the
/// crawl's mode.
fn is_candidate(crawl: &CrawlState, page: PageId) -> bool {
    !crawl.page(page).gone && crawl.is_refreshable(page)
}

/// Cycles over the pages in id order, `budget` per unit, resuming where the last unit stopped.
#[derive(Debug, Clone, Default)]
pub struct RoundRobin {
    cursor: usize,
    page_count: usize,
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
        self.page_count = context.page_count;
    }

    fn choose(&mut self, _unit: Unit, budget: usize, crawl: &CrawlState) -> Vec<PageId> {
        let n = pages_known(&mut self.page_count, crawl);
        let mut out = Vec::with_capacity(budget.min(n));
        let mut scanned = 0;
        while out.len() < budget && scanned < n {
            let p = self.cursor as PageId;
            self.cursor = (self.cursor + 1) % n;
            scanned += 1;
            if is_candidate(crawl, p) {
                out.push(p);
            }
        }
        out
    }

    /// Nothing to learn: the crawl state says which pages are gone.
    fn observe(&mut self, _outcomes: &[RefreshOutcome]) {}
}

/// `budget` distinct pages drawn uniformly each unit from a ChaCha8 stream seeded by the
/// context's seed (deterministic for a seed).
#[derive(Debug, Clone)]
pub struct UniformRandom {
    rng: ChaCha8Rng,
    page_count: usize,
}

impl Default for UniformRandom {
    fn default() -> Self {
        UniformRandom {
            rng: ChaCha8Rng::seed_from_u64(0),
            page_count: 0,
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
        self.page_count = context.page_count;
    }

    fn choose(&mut self, _unit: Unit, budget: usize, crawl: &CrawlState) -> Vec<PageId> {
        let n = pages_known(&mut self.page_count, crawl);
        let alive: Vec<PageId> = (0..n as PageId)
            .filter(|&p| is_candidate(crawl, p))
            .collect();
        let k = budget.min(alive.len());
        sample(&mut self.rng, alive.len(), k)
            .into_iter()
            .map(|i| alive[i])
            .collect()
    }

    /// Nothing to learn: the crawl state says which pages are gone.
    fn observe(&mut self, _outcomes: &[RefreshOutcome]) {}
}

/// Oldest first (Age): the `budget` pages with the largest `t − last refresh` (0 for the
/// initial crawl), ties by page id.
#[derive(Debug, Clone, Default)]
pub struct OldestFirst {
    page_count: usize,
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
        self.page_count = context.page_count;
    }

    fn choose(&mut self, unit: Unit, budget: usize, crawl: &CrawlState) -> Vec<PageId> {
        let n = pages_known(&mut self.page_count, crawl);
        let mut pages: Vec<PageId> = (0..n as PageId)
            .filter(|&p| is_candidate(crawl, p))
            .collect();
        let age = |p: PageId| unit.saturating_sub(crawl.page(p).last_refresh);
        pages.sort_by(|&a, &b| age(b).cmp(&age(a)).then(a.cmp(&b)));
        pages.truncate(budget);
        pages
    }

    /// Nothing to learn: the crawl state holds each page's last refresh.
    fn observe(&mut self, _outcomes: &[RefreshOutcome]) {}
}

/// The `round-robin` family.
pub(crate) const ROUND_ROBIN: PolicyFamily = PolicyFamily {
    name: "round-robin",
    description: "Every page in turn, B per unit, in page-id (URL) order",
    params: &[],
    build: |_| Ok(Box::new(RoundRobin::default())),
};

/// The `random` family.
pub(crate) const RANDOM: PolicyFamily = PolicyFamily {
    name: "random",
    description: "B distinct pages drawn uniformly each unit (seeded)",
    params: &[],
    build: |_| Ok(Box::new(UniformRandom::default())),
};

/// The `age` family.
pub(crate) const AGE: PolicyFamily = PolicyFamily {
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
        let mut crawl = crate::policy::testkit::no_crawl();
        assert_eq!(rr.choose(1, 2, &crawl), vec![0, 1]);
        crawl.note_fetch(0, 1, false);
        crawl.note_fetch(1, 1, true);
        rr.observe(&[gone(1, 1)]);
        assert_eq!(rr.choose(2, 2, &crawl), vec![2, 3]);
        assert_eq!(rr.choose(3, 2, &crawl), vec![4, 0]);
        assert_eq!(
            rr.choose(4, 2, &crawl),
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
        let mut crawl = crate::policy::testkit::no_crawl();
        assert_eq!(age.choose(1, 3, &crawl), vec![0, 1, 2]);
        for p in [0, 1, 2] {
            crawl.note_fetch(p, 1, false);
        }
        assert_eq!(age.choose(2, 3, &crawl), vec![3, 0, 1]);
        for p in [3, 0, 1] {
            crawl.note_fetch(p, 2, false);
        }
        crawl.note_fetch(2, 2, true);
        age.observe(&[gone(2, 2)]);
        assert_eq!(
            age.choose(3, 3, &crawl),
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
