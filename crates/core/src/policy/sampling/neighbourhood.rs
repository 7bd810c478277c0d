//! Paper 002's Algorithms 1–2 (Tan, Zhuang, Mitra & Giles, ICWE 2007, §3; SEED-SYSTEMS
//! §3.2.1): each cycle, draw a uniformly random page not yet downloaded, fetch it, and with
//! probability `φ` ([`super::phi`]) also fetch its neighbourhood at granularity `d` —
//! link-based (`sample-lb`), directory-based (`sample-db`) or cluster-based (`sample-cb`)
//! ([`super::granularity`]) — nearest first, until the budget is spent.
//!
//! Rounds: one sample per round; the round after a sample whose draw fired holds its
//! neighbourhood (what the budget allows) and the next sample.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::cluster::features::FeatureConfig;
use crate::cluster::Clustering;
use crate::corpus::{PageId, Unit};

use super::granularity::{
    cluster_distance, directory_distance, link_neighbourhood, within_granularity,
};
use super::phi::{download_probability, toolbar_pagerank, DownloadProbability, SampleFacts};
use super::policy::SamplingPolicy;
use crate::policy::family::{ParamKind, ParamSpec, Params, PolicyError, PolicyFamily};
use crate::policy::RefreshPolicy;

type BuiltPolicy = Result<Box<dyn RefreshPolicy>, PolicyError>;
use super::{
    cluster_features, features_of, shuffled, ChangeLog, Probe, RoundPlanner, SamplingView,
};

/// Paper 002's three granularities.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Granularity {
    /// Link distance, Eq. 1.
    Link,
    /// Directory distance, Eq. 2.
    Directory,
    /// Cluster distance, §4.3, over `k` RBC clusters of paper 000's 38 static features.
    Cluster { k: usize },
}

impl Granularity {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Granularity::Link => "sample-lb",
            Granularity::Directory => "sample-db",
            Granularity::Cluster { .. } => "sample-cb",
        }
    }
}

/// The clusters of the cluster granularity, computed at the first unit from the held copies.
#[derive(Debug, Clone)]
struct Clusters {
    cluster_of: FxHashMap<PageId, u32>,
    clustering: Clustering,
}

/// Paper 002's sampling planner (see the module docs).
#[derive(Debug, Clone)]
pub struct NeighbourhoodSampling {
    granularity: Granularity,
    d: i32,
    phi: DownloadProbability,
    seed: u64,
    rng: ChaCha8Rng,
    log: ChangeLog,
    clusters: Option<Clusters>,
    // The current unit.
    unit: Unit,
    remaining: usize,
    order: Vec<PageId>,
    cursor: usize,
    downloaded: FxHashSet<PageId>,
    /// The sample of the last round, awaiting its outcome.
    pending: Option<PageId>,
    /// A sample whose draw fired: its neighbourhood goes next.
    fired: Option<PageId>,
    /// PageRank extremes of the unit (PRA's toolbar scale) and the pending sample's PageRank.
    pagerank_range: (f64, f64),
    sample_pagerank: Option<f64>,
}

impl NeighbourhoodSampling {
    pub(crate) fn new(
        granularity: Granularity,
        d: i32,
        phi: DownloadProbability,
        seed: u64,
    ) -> Self {
        NeighbourhoodSampling {
            granularity,
            d,
            phi,
            seed,
            rng: ChaCha8Rng::seed_from_u64(seed),
            log: ChangeLog::default(),
            clusters: None,
            unit: 0,
            remaining: 0,
            order: Vec::new(),
            cursor: 0,
            downloaded: FxHashSet::default(),
            pending: None,
            fired: None,
            pagerank_range: (0.0, 0.0),
            sample_pagerank: None,
        }
    }

    /// Restarts with `seed` (a run's `prepare`).
    pub(crate) fn reset(&mut self, seed: u64) {
        *self = NeighbourhoodSampling::new(self.granularity, self.d, self.phi, seed);
    }

    pub fn granularity(&self) -> Granularity {
        self.granularity
    }
    pub fn d(&self) -> i32 {
        self.d
    }
    pub fn phi(&self) -> DownloadProbability {
        self.phi
    }

    fn ensure_clusters(&mut self, view: &dyn SamplingView) {
        let Granularity::Cluster { k } = self.granularity else {
            return;
        };
        if self.clusters.is_some() {
            return;
        }
        let pages = view.candidates();
        let config = FeatureConfig {
            word_clusters: k,
            seed: self.seed,
            ..FeatureConfig::default()
        };
        // Clustered once: the analysed terms are not kept.
        let mut terms = super::ContentTerms::default();
        let rows = features_of(view, &pages, &mut terms, &|_| None, &|_| 0.0, &config);
        // SEED-SYSTEMS §3.2.4's choice: paper 000's 38 static features.
        let columns: Vec<usize> = (0..38).collect();
        let (_, clustering) = cluster_features(&rows, &columns, k, self.seed);
        self.clusters = Some(Clusters {
            cluster_of: pages
                .iter()
                .zip(&clustering.assignment)
                .map(|(&p, &c)| (p, c))
                .collect(),
            clustering,
        });
    }

    /// `Download(p_s, d)` of Algorithm 2: the pages within granularity `d` of `seed` not yet
    /// downloaded, by `|d|` then at random.
    fn neighbourhood(&mut self, view: &dyn SamplingView, seed: PageId) -> Vec<PageId> {
        let mut found: Vec<(PageId, i32)> = match self.granularity {
            Granularity::Link => link_neighbourhood(&LinkOf(view), seed, self.d),
            Granularity::Directory => {
                let seed_url = view.url(seed);
                view.candidates()
                    .into_iter()
                    .filter(|&p| p != seed)
                    .filter_map(|p| directory_distance(seed_url, view.url(p)).map(|d| (p, d)))
                    .filter(|&(_, dist)| within_granularity(dist, self.d))
                    .collect()
            }
            Granularity::Cluster { .. } => match &self.clusters {
                Some(c) => match c.cluster_of.get(&seed) {
                    Some(&home) => {
                        let ranks = c.clustering.centroid_ranks_from(home as usize);
                        c.cluster_of
                            .iter()
                            .filter(|&(&p, _)| p != seed)
                            .map(|(&p, &cl)| (p, cluster_distance(&ranks, cl)))
                            .filter(|&(_, dist)| within_granularity(dist, self.d))
                            .collect()
                    }
                    None => Vec::new(),
                },
                None => Vec::new(),
            },
        };
        found.retain(|(p, _)| !self.downloaded.contains(p) && view.held(*p).is_some());
        // Hash-map order is not deterministic: fix it before drawing the tie-breakers.
        found.sort_unstable();
        let mut keyed: Vec<(u32, u64, PageId)> = found
            .into_iter()
            .map(|(p, dist)| (dist.unsigned_abs(), self.rng.gen::<u64>(), p))
            .collect();
        keyed.sort_unstable();
        keyed.into_iter().map(|(_, _, p)| p).collect()
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

/// The view's link graph as [`super::granularity::LinkGraph`].
struct LinkOf<'a>(&'a dyn SamplingView);

impl super::granularity::LinkGraph for LinkOf<'_> {
    fn out_links(&self, page: PageId) -> &[PageId] {
        self.0.out_links(page)
    }
    fn in_links(&self, page: PageId) -> &[PageId] {
        self.0.in_links(page)
    }
}

impl RoundPlanner for NeighbourhoodSampling {
    fn begin_unit(&mut self, unit: Unit, budget: usize, view: &dyn SamplingView) {
        self.ensure_clusters(view);
        self.unit = unit;
        self.remaining = budget;
        let candidates = view.candidates();
        if self.phi == DownloadProbability::PageRank {
            self.pagerank_range = candidates
                .iter()
                .map(|&p| view.pagerank(p))
                .filter(|&pr| pr > 0.0)
                .fold((f64::INFINITY, 0.0), |(lo, hi), pr| {
                    (lo.min(pr), hi.max(pr))
                });
        }
        self.order = shuffled(candidates, &mut self.rng);
        self.cursor = 0;
        self.downloaded.clear();
        self.pending = None;
        self.fired = None;
    }

    fn next_round(&mut self, view: &dyn SamplingView) -> Vec<PageId> {
        let mut out = Vec::new();
        if let Some(seed) = self.fired.take() {
            for p in self.neighbourhood(view, seed) {
                if !self.take(p, &mut out) {
                    break;
                }
            }
        }
        while self.remaining > 0 && self.cursor < self.order.len() {
            let p = self.order[self.cursor];
            self.cursor += 1;
            if self.take(p, &mut out) {
                self.pending = Some(p);
                self.sample_pagerank = Some(view.pagerank(p));
                break;
            }
        }
        out
    }

    fn observe_round(&mut self, probes: &[Probe]) {
        let Some(sample) = self.pending.take() else {
            return;
        };
        let Some(probe) = probes.iter().find(|p| p.page == sample) else {
            return;
        };
        if probe.gone {
            return;
        }
        let history = self.log.history(sample, self.unit, Some(probe.changed));
        let (lo, hi) = self.pagerank_range;
        let facts = SampleFacts {
            changed: probe.changed,
            history: &history,
            toolbar_pagerank: if self.phi == DownloadProbability::PageRank {
                toolbar_pagerank(self.sample_pagerank.unwrap_or(lo), lo, hi)
            } else {
                0
            },
        };
        let phi = download_probability(self.phi, &facts);
        // One draw per sample (also for φ ∈ {0, 1}), so the stream does not depend on φ.
        let u: f64 = self.rng.gen();
        if u < phi {
            self.fired = Some(sample);
        }
    }

    fn observe_unit(&mut self, unit: Unit, probes: &[Probe]) {
        for p in probes {
            if p.changed {
                self.log.record(p.page, unit);
            }
        }
    }
}

const PHI: ParamSpec = ParamSpec {
    key: "phi",
    description: "Download probability of a sample's neighbourhood (paper 002 §5): binary (1 when the sample changed), ha (1−e^(−λ), λ its change history), wha (the same, recent cycles weighted i), pra (by PageRank, whether or not it changed)",
    kind: ParamKind::Choice(DownloadProbability::NAMES),
    default: "binary",
    sweep: &[],
};

fn build(granularity: Granularity, params: &Params, default_d: f64) -> BuiltPolicy {
    let d = params.number("d").unwrap_or(default_d) as i32;
    let phi = params
        .choice("phi")
        .and_then(DownloadProbability::parse)
        .unwrap_or_default();
    let mut label = format!("{} (d = {d}, φ = {}", granularity.name(), phi.as_str());
    let mut settings = serde_json::Map::new();
    settings.insert("d".into(), d.into());
    settings.insert("phi".into(), phi.as_str().into());
    if let Granularity::Cluster { k } = granularity {
        label.push_str(&format!(", k = {k}"));
        settings.insert("clusters".into(), k.into());
    }
    label.push(')');
    Ok(Box::new(SamplingPolicy::new(
        granularity.name(),
        label,
        settings,
        NeighbourhoodSampling::new(granularity, d, phi, 0),
        NeighbourhoodSampling::reset,
    )))
}

/// `sample-lb`: paper 002's link-based granularity.
pub(crate) const SAMPLE_LB: PolicyFamily = PolicyFamily {
    name: "sample-lb",
    description: "Paper 002: random samples; a changed sample brings the pages within d links (siblings 0, out-links d > 0, in-links d < 0)",
    params: &[
        ParamSpec {
            key: "d",
            description: "Link granularity: pages whose link distance from the sample is in [0, d] (d ≥ 0) or [d, 0] (d < 0)",
            kind: ParamKind::Number { min: -8.0, max: 8.0, integer: true },
            default: "3 (the paper's best)",
            sweep: &[1.0, 2.0, 3.0, 4.0],
        },
        PHI,
    ],
    build: |params| build(Granularity::Link, params, 3.0),
};

/// `sample-db`: paper 002's directory-based granularity.
pub(crate) const SAMPLE_DB: PolicyFamily = PolicyFamily {
    name: "sample-db",
    description: "Paper 002: random samples; a changed sample brings the pages within d directories (upper and same-depth d > 0, deeper d < 0)",
    params: &[
        ParamSpec {
            key: "d",
            description: "Directory granularity: pages whose directory distance from the sample is in [0, d] (d ≥ 0) or [d, 0] (d < 0)",
            kind: ParamKind::Number { min: -8.0, max: 8.0, integer: true },
            default: "1 (the paper's best)",
            sweep: &[-1.0, 0.0, 1.0, 2.0],
        },
        PHI,
    ],
    build: |params| build(Granularity::Directory, params, 1.0),
};

/// `sample-cb`: paper 002's cluster-based granularity.
pub(crate) const SAMPLE_CB: PolicyFamily = PolicyFamily {
    name: "sample-cb",
    description: "Paper 002: random samples; a changed sample brings its feature cluster and the d nearest clusters (RBC on paper 000's static features)",
    params: &[
        ParamSpec {
            key: "d",
            description: "Cluster granularity: the sample's cluster (0) and the clusters ranked 1…d by centroid distance",
            kind: ParamKind::Number { min: 0.0, max: 100.0, integer: true },
            default: "0 (the paper's best)",
            sweep: &[0.0, 1.0, 2.0],
        },
        PHI,
        ParamSpec {
            key: "clusters",
            description: "Clusters k of the repeated-bisection clustering",
            kind: ParamKind::Number { min: 1.0, max: 100_000.0, integer: true },
            default: "100",
            sweep: &[],
        },
    ],
    build: |params| {
        let k = params.number("clusters").unwrap_or(100.0) as usize;
        build(Granularity::Cluster { k }, params, 0.0)
    },
};
