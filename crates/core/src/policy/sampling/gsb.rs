//! Cho & Ntoulas's greedy site-level sampling (GSB; paper 000's SLS), the baseline of papers
//! 000 §6.4 and 002 §6.2 (SEED-SYSTEMS §3.2.6): sample `⌈√(N̄·r)⌉` random pages of every site,
//! then download whole sites in decreasing order of their changed samples until the budget is
//! spent (samples count in the budget).
//!
//! Rounds: the samples, then the sites' remaining pages. A site is a URL host.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rustc_hash::FxHashSet;

use crate::cluster::features::url_host;
use crate::corpus::{PageId, Unit};

use super::policy::SamplingPolicy;
use super::sample_size::site_sample_size;
use super::{shuffled, Probe, RoundPlanner, SamplingView};
use crate::crawl::CrawlState;
use crate::policy::baselines::UniformRandom;
use crate::policy::family::PolicyFamily;
use crate::policy::{PolicyContext, Reads, RefreshOutcome, RefreshPolicy};

#[derive(Debug, Clone, Default)]
struct Site {
    host: String,
    /// The site's pages in a random order (samples first).
    pages: Vec<PageId>,
    sampled: usize,
    changed: usize,
}

/// GSB's planner (see the module docs).
#[derive(Debug, Clone)]
pub struct GreedySiteSampling {
    rng: ChaCha8Rng,
    sites: Vec<Site>,
    remaining: usize,
    downloaded: FxHashSet<PageId>,
    round: u32,
    sample_size: usize,
}

impl GreedySiteSampling {
    pub(crate) fn new(seed: u64) -> Self {
        GreedySiteSampling {
            rng: ChaCha8Rng::seed_from_u64(seed),
            sites: Vec::new(),
            remaining: 0,
            downloaded: FxHashSet::default(),
            round: 0,
            sample_size: 0,
        }
    }

    /// Samples per site in the current unit.
    pub fn sample_size(&self) -> usize {
        self.sample_size
    }

    fn take(&mut self, page: PageId, out: &mut Vec<PageId>) -> bool {
        if self.remaining == 0 || !self.downloaded.insert(page) {
            return false;
        }
        self.remaining -= 1;
        out.push(page);
        true
    }
}

impl RoundPlanner for GreedySiteSampling {
    fn begin_unit(&mut self, _unit: Unit, budget: usize, view: &dyn SamplingView) {
        let candidates = view.candidates();
        let mut by_host: std::collections::BTreeMap<&str, Vec<PageId>> = Default::default();
        for &p in &candidates {
            by_host.entry(url_host(view.url(p))).or_default().push(p);
        }
        self.sample_size = site_sample_size(candidates.len(), by_host.len(), budget);
        let sites: Vec<Site> = by_host
            .into_iter()
            .map(|(host, pages)| Site {
                host: host.to_string(),
                pages,
                ..Site::default()
            })
            .collect();
        // Sites in a random order, so a budget too small for every site's sample samples a
        // random subset of sites.
        let order = shuffled((0..sites.len() as PageId).collect(), &mut self.rng);
        let mut sites_in_order: Vec<Site> = Vec::with_capacity(sites.len());
        let mut sites = sites.into_iter().map(Some).collect::<Vec<_>>();
        for i in order {
            let mut s = sites[i as usize].take().expect("each site once");
            s.pages = shuffled(std::mem::take(&mut s.pages), &mut self.rng);
            sites_in_order.push(s);
        }
        self.sites = sites_in_order;
        self.remaining = budget;
        self.downloaded.clear();
        self.round = 0;
    }

    fn next_round(&mut self, _view: &dyn SamplingView) -> Vec<PageId> {
        self.round += 1;
        let mut out = Vec::new();
        match self.round {
            1 => {
                for i in 0..self.sites.len() {
                    let n = self.sample_size.min(self.sites[i].pages.len());
                    for j in 0..n {
                        let p = self.sites[i].pages[j];
                        if !self.take(p, &mut out) {
                            break;
                        }
                        self.sites[i].sampled += 1;
                    }
                }
            }
            2 => {
                // Most changed samples first; ties: changed fraction, larger site, host.
                let mut order: Vec<usize> = (0..self.sites.len()).collect();
                let frac = |s: &Site| {
                    if s.sampled == 0 {
                        0.0
                    } else {
                        s.changed as f64 / s.sampled as f64
                    }
                };
                order.sort_by(|&a, &b| {
                    let (sa, sb) = (&self.sites[a], &self.sites[b]);
                    sb.changed
                        .cmp(&sa.changed)
                        .then(frac(sb).total_cmp(&frac(sa)))
                        .then(sb.pages.len().cmp(&sa.pages.len()))
                        .then(sa.host.cmp(&sb.host))
                });
                for i in order {
                    let pages = std::mem::take(&mut self.sites[i].pages);
                    for &p in &pages {
                        if self.remaining == 0 {
                            break;
                        }
                        self.take(p, &mut out);
                    }
                    self.sites[i].pages = pages;
                }
            }
            _ => {}
        }
        out
    }

    fn observe_round(&mut self, probes: &[Probe]) {
        if self.round != 1 {
            return;
        }
        let changed: FxHashSet<PageId> = probes
            .iter()
            .filter(|p| p.changed)
            .map(|p| p.page)
            .collect();
        for s in &mut self.sites {
            s.changed += s.pages[..s.sampled]
                .iter()
                .filter(|p| changed.contains(p))
                .count();
        }
    }

    fn observe_unit(&mut self, _unit: Unit, _probes: &[Probe]) {}
}

/// `gsb`: greedy site-level sampling.
pub(crate) const GSB: PolicyFamily = PolicyFamily {
    name: "gsb",
    description: "Cho & Ntoulas (papers 000/002's GSB/SLS): sample ⌈√(N̄·B/N)⌉ pages of every site, then fetch whole sites by their changed samples",
    params: &[],
    build: |_| {
        Ok(Box::new(SamplingPolicy::new(
            "gsb",
            "gsb".to_string(),
            serde_json::Map::new(),
            GreedySiteSampling::new(0),
            |p, seed| *p = GreedySiteSampling::new(seed),
        )))
    },
};

/// Random node sampling (Leskovec & Faloutsos; papers 000's Rand and 002's RNS): `B` distinct
/// pages drawn uniformly each cycle — the draw of the `random` family, under the papers' name.
#[derive(Debug, Clone, Default)]
pub struct RandomNodeSampling(UniformRandom);

impl RefreshPolicy for RandomNodeSampling {
    fn name(&self) -> String {
        "rns".to_string()
    }
    /// The draw reads the seed (the fit mode conservatively, as before).
    fn reads(&self) -> Reads {
        Reads {
            seed: true,
            ..Reads::default()
        }
    }
    fn prepare(&mut self, context: &PolicyContext<'_>) {
        self.0.prepare(context);
    }
    fn choose(&mut self, unit: Unit, budget: usize, crawl: &CrawlState) -> Vec<PageId> {
        self.0.choose(unit, budget, crawl)
    }
    fn observe(&mut self, outcomes: &[RefreshOutcome]) {
        self.0.observe(outcomes);
    }
}

/// `rns`: random node sampling.
pub(crate) const RNS: PolicyFamily = PolicyFamily {
    name: "rns",
    description: "Papers 000/002's random baseline (RNS, Rand): B distinct pages drawn uniformly each cycle (the same draw as random)",
    params: &[],
    build: |_| Ok(Box::new(RandomNodeSampling::default())),
};
