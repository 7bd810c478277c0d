//! Paper 000's cluster-level sampling, CLS (Tan & Mitra, TOIS 2010, §3–4; SEED-SYSTEMS
//! §1.2.3): pages are clustered by their 48 features ([`crate::cluster::features`]) with
//! repeated bisection; each cycle a few pages nearest each cluster's centroid are fetched as
//! samples until the t-test rule says the sample's mean change probability is valid
//! ([`super::sample_size::sample_is_sufficient`]) or the cluster's sample bound `⌊R/k⌋` is
//! reached; then whole clusters are fetched in decreasing order of their mean change
//! probability, nearest-centroid first, until the budget is spent.
//!
//! Rounds: the first round holds two samples per cluster, each later sampling round one more
//! sample of every cluster still unsure, the last round the clusters' remaining pages.
//!
//! Members are taken fetched-longest-ago first, nearest the centroid among equals
//! (`MemberOrder`): the paper's order whenever whole clusters are fetched, and a rotation
//! through the cluster when the budget is far below a cluster's size (`samples=centroid
//! fill=centroid` keeps the paper's order literally).
//!
//! Choices (SEED-SYSTEMS §1.5): a sample's value is `φ_p = 1 − e^{−λ_p}` with `λ_p` its weighted
//! change rate over the cycles so far including this one; clustering at the first cycle and
//! again every `recluster-every` cycles from the third on (when dynamic features exist);
//! `k_eff = min(k, max(1, ⌊R/4⌋))` for small budgets.

use std::sync::Arc;

use rustc_hash::FxHashSet;

use crate::change::{change_probability, weighted_rate, Weighting};
use crate::cluster::features::{CopyFacts, FeatureConfig, FeatureSet};
use crate::corpus::{PageId, PageVersion, Unit};

use super::policy::SamplingPolicy;
use super::sample_size::{effective_clusters, max_samples, sample_is_sufficient, MIN_SAMPLES};
use super::view::copy_facts;
use super::{
    cluster_features, features_of, ChangeLog, ContentTerms, Probe, RoundPlanner, SamplingView,
};
use crate::policy::family::{ParamKind, ParamSpec, PolicyFamily};

/// CLS's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClsConfig {
    /// Clusters wanted (paper 000: 100), bounded by the budget.
    pub(crate) clusters: usize,
    /// Confidence γ of the t-test rule (paper 000: 0.8).
    pub(crate) confidence: f64,
    /// Tolerance δ of the t-test rule (lost from the text; 0.05).
    pub(crate) tolerance: f64,
    /// Change-history weights of the samples' rates (NAD/SAD/AAD/GAD).
    pub(crate) weighting: Weighting,
    /// Feature subset to cluster on (paper 000 §6.2's ablation; combined by default).
    pub(crate) features: FeatureSet,
    /// Re-cluster every this many cycles from the third on (0: cluster once).
    pub(crate) recluster_every: u32,
    /// Order in which a cluster's samples are taken.
    pub(crate) samples: MemberOrder,
    /// Order of a cluster's members when whole clusters are fetched.
    pub(crate) fill: MemberOrder,
}

/// In which order CLS takes a cluster's members, as samples or when filling the budget.
///
/// Paper 000 takes them nearest the centroid first; it fetches whole clusters every cycle, so
/// every member has the same age and [`MemberOrder::Oldest`] gives the same order. With a budget
/// far below a cluster's size the two differ: the centroid order re-fetches the same few members
/// every cycle, which can only find the changes of one cycle, while the oldest-first order works
/// through the cluster, nearest the centroid first among pages of equal age.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum MemberOrder {
    /// Nearest the centroid first (paper 000 §4, literally).
    Centroid,
    /// Fetched longest ago first, then nearest the centroid (equal to the paper's order when
    /// whole clusters are fetched; the default).
    #[default]
    Oldest,
}

impl MemberOrder {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            MemberOrder::Centroid => "centroid",
            MemberOrder::Oldest => "oldest",
        }
    }

    fn parse(name: Option<&str>) -> Self {
        match name {
            Some("centroid") => MemberOrder::Centroid,
            _ => MemberOrder::Oldest,
        }
    }
}

impl Default for ClsConfig {
    fn default() -> Self {
        ClsConfig {
            clusters: 100,
            confidence: 0.8,
            tolerance: 0.05,
            weighting: Weighting::Nad,
            features: FeatureSet::Combined,
            recluster_every: 1,
            samples: MemberOrder::Oldest,
            fill: MemberOrder::Oldest,
        }
    }
}

/// A held copy as CLS remembers it, with its linkage then.
#[derive(Debug, Clone)]
struct Snapshot {
    copy: Arc<PageVersion>,
    facts: CopyFacts,
}

#[derive(Debug, Clone, Default)]
struct PageMemory {
    current: Option<Snapshot>,
    previous: Option<Snapshot>,
}

/// A clustered page: its cluster and its cosine to the cluster's centroid.
type Placed = (PageId, u32, f64);

/// One cluster in the current cycle.
#[derive(Debug, Clone, Default)]
struct ClusterCycle {
    /// Members nearest the centroid first.
    members: Vec<PageId>,
    /// Members in the order samples are taken.
    sampling: Vec<PageId>,
    next: usize,
    samples: Vec<f64>,
    done: bool,
}

impl ClusterCycle {
    fn score(&self) -> f64 {
        if self.samples.is_empty() {
            0.0
        } else {
            self.samples.iter().sum::<f64>() / self.samples.len() as f64
        }
    }
}

/// Paper 000's CLS planner (see the module docs).
#[derive(Debug, Clone)]
pub struct ClusterSampling {
    config: ClsConfig,
    seed: u64,
    log: ChangeLog,
    memory: Vec<PageMemory>,
    terms: ContentTerms,
    /// Unit of each page's last fetch (0: never since the initial crawl).
    last_fetch: Vec<Unit>,
    /// The last clustering and the `k_eff` it was made for.
    clustered: Option<(Vec<Placed>, usize)>,
    last_clustered: Unit,
    // The current unit.
    unit: Unit,
    remaining: usize,
    n_max: usize,
    clusters: Vec<ClusterCycle>,
    sample_of: Vec<(PageId, usize)>,
    downloaded: FxHashSet<PageId>,
    finished_sampling: bool,
    filled: bool,
}

impl ClusterSampling {
    pub(crate) fn new(config: ClsConfig, seed: u64) -> Self {
        ClusterSampling {
            config,
            seed,
            log: ChangeLog::default(),
            memory: Vec::new(),
            terms: ContentTerms::default(),
            last_fetch: Vec::new(),
            clustered: None,
            last_clustered: 0,
            unit: 0,
            remaining: 0,
            n_max: MIN_SAMPLES,
            clusters: Vec::new(),
            sample_of: Vec::new(),
            downloaded: FxHashSet::default(),
            finished_sampling: false,
            filled: false,
        }
    }

    pub(crate) fn reset(&mut self, seed: u64) {
        *self = ClusterSampling::new(self.config, seed);
    }

    pub fn config(&self) -> &ClsConfig {
        &self.config
    }

    /// Number of clusters in use (after the first unit).
    pub fn clusters_in_use(&self) -> usize {
        self.clusters.len()
    }

    /// Remembers the held copies: a copy other than the one remembered becomes current, the
    /// remembered one previous (the dynamic features compare the two).
    fn remember_copies(&mut self, view: &dyn SamplingView, pages: &[PageId]) {
        for &p in pages {
            let Some(copy) = view.held(p) else {
                continue;
            };
            if p as usize >= self.memory.len() {
                self.memory.resize(p as usize + 1, PageMemory::default());
            }
            let m = &mut self.memory[p as usize];
            let same = m
                .current
                .as_ref()
                .is_some_and(|s| s.copy.content_hash == copy.content_hash);
            if !same {
                let facts = copy_facts(view, p, copy);
                m.previous = m.current.take();
                m.current = Some(Snapshot {
                    copy: Arc::clone(copy),
                    facts,
                });
            }
        }
    }

    fn recluster_due(&self, unit: Unit, k_eff: usize) -> bool {
        match &self.clustered {
            None => true,
            Some((_, k)) if *k != k_eff => true,
            Some(_) => {
                let every = self.config.recluster_every;
                every > 0 && unit >= 3 && unit - self.last_clustered >= every
            }
        }
    }

    fn recluster(&mut self, view: &dyn SamplingView, pages: &[PageId], unit: Unit, k: usize) {
        let previous = |p: PageId| {
            self.memory
                .get(p as usize)
                .and_then(|m| m.previous.as_ref())
                .map(|s| (Arc::clone(&s.copy), s.facts))
        };
        let weighting = self.config.weighting;
        let frequency = |p: PageId| weighted_rate(weighting, &self.log.history(p, unit, None));
        // The word clusterings are features, not sampling units: the paper's k, whatever the
        // budget.
        let features = FeatureConfig {
            word_clusters: self.config.clusters,
            seed: self.seed,
            ..FeatureConfig::default()
        };
        let rows = features_of(
            view,
            pages,
            &mut self.terms,
            &previous,
            &frequency,
            &features,
        );
        // Keep the terms of the copies CLS still remembers only.
        let remembered: FxHashSet<u64> = self
            .memory
            .iter()
            .flat_map(|m| [&m.current, &m.previous])
            .flatten()
            .map(|s| s.copy.content_hash)
            .collect();
        self.terms.retain(|h| remembered.contains(&h));
        let (dense, clustering) =
            cluster_features(&rows, &self.config.features.columns(), k, self.seed);
        let placed = pages
            .iter()
            .enumerate()
            .map(|(i, &p)| {
                (
                    p,
                    clustering.assignment[i],
                    clustering.cosine_to_own_centroid(&dense, i),
                )
            })
            .collect();
        self.clustered = Some((placed, k));
        self.last_clustered = unit;
    }

    fn take(&mut self, page: PageId, out: &mut Vec<PageId>) -> bool {
        if self.remaining == 0 || !self.downloaded.insert(page) {
            return false;
        }
        self.remaining -= 1;
        out.push(page);
        true
    }

    /// One more sample of each cluster still sampling (`per_cluster` at the first round).
    fn sampling_round(&mut self, per_cluster: usize) -> Vec<PageId> {
        let mut out = Vec::new();
        self.sample_of.clear();
        for r in 0..self.clusters.len() {
            let mut taken = 0;
            while !self.clusters[r].done && taken < per_cluster {
                let c = &mut self.clusters[r];
                if c.next >= c.sampling.len() || c.next >= self.n_max {
                    c.done = true;
                    break;
                }
                let p = c.sampling[c.next];
                c.next += 1;
                if self.take(p, &mut out) {
                    self.sample_of.push((p, r));
                    taken += 1;
                } else if self.remaining == 0 {
                    self.clusters[r].done = true;
                }
            }
        }
        out
    }

    /// The last round: whole clusters by decreasing mean change probability (ties: the larger
    /// cluster, then the lower id), members in the [`FillOrder`], until the budget is spent.
    fn fill_round(&mut self) -> Vec<PageId> {
        let mut order: Vec<usize> = (0..self.clusters.len()).collect();
        order.sort_by(|&a, &b| {
            let (ca, cb) = (&self.clusters[a], &self.clusters[b]);
            cb.score()
                .total_cmp(&ca.score())
                .then(cb.members.len().cmp(&ca.members.len()))
                .then(a.cmp(&b))
        });
        let mut out = Vec::new();
        for r in order {
            let in_order = self.in_order(&self.clusters[r].members, self.config.fill);
            for p in in_order {
                if self.remaining == 0 {
                    break;
                }
                self.take(p, &mut out);
            }
        }
        out
    }

    /// `members` (nearest the centroid first) in `order`.
    fn in_order(&self, members: &[PageId], order: MemberOrder) -> Vec<PageId> {
        let mut in_order = members.to_vec();
        if order == MemberOrder::Oldest {
            // Stable: equal ages keep the centroid order.
            let last = |p: PageId| self.last_fetch.get(p as usize).copied().unwrap_or(0);
            in_order.sort_by_key(|&p| last(p));
        }
        in_order
    }
}

impl RoundPlanner for ClusterSampling {
    fn begin_unit(&mut self, unit: Unit, budget: usize, view: &dyn SamplingView) {
        // Pages without a held copy (never fetched yet) take part with what is known of them
        // (their URL; no content): the features of an empty copy.
        let pages = view.candidates();
        self.remember_copies(view, &pages);
        let k_eff = effective_clusters(self.config.clusters, budget).max(1);
        if self.recluster_due(unit, k_eff) && !pages.is_empty() {
            self.recluster(view, &pages, unit, k_eff);
        }
        self.unit = unit;
        self.remaining = budget;
        self.downloaded.clear();
        self.finished_sampling = false;
        self.filled = false;
        let k = self.clustered.as_ref().map_or(0, |(placed, _)| {
            placed
                .iter()
                .map(|&(_, c, _)| c as usize + 1)
                .max()
                .unwrap_or(0)
        });
        self.n_max = max_samples(budget, k);
        let mut members: Vec<Vec<(f64, PageId)>> = vec![Vec::new(); k];
        let live: FxHashSet<PageId> = pages.iter().copied().collect();
        if let Some((placed, _)) = &self.clustered {
            for &(p, c, cos) in placed {
                if live.contains(&p) {
                    members[c as usize].push((cos, p));
                }
            }
        }
        self.clusters = members
            .into_iter()
            .map(|mut m| {
                m.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                let members: Vec<PageId> = m.into_iter().map(|(_, p)| p).collect();
                ClusterCycle {
                    sampling: self.in_order(&members, self.config.samples),
                    members,
                    ..ClusterCycle::default()
                }
            })
            .collect();
    }

    fn next_round(&mut self, _view: &dyn SamplingView) -> Vec<PageId> {
        if !self.finished_sampling {
            let first = self.clusters.iter().all(|c| c.next == 0);
            let round = self.sampling_round(if first { MIN_SAMPLES } else { 1 });
            if !round.is_empty() {
                return round;
            }
            self.finished_sampling = true;
        }
        if self.filled {
            return Vec::new();
        }
        self.filled = true;
        self.fill_round()
    }

    fn observe_round(&mut self, probes: &[Probe]) {
        if self.finished_sampling {
            return;
        }
        for probe in probes {
            let Some(&(_, r)) = self.sample_of.iter().find(|(p, _)| *p == probe.page) else {
                continue;
            };
            if !probe.gone {
                let history = self.log.history(probe.page, self.unit, Some(probe.changed));
                let lambda = weighted_rate(self.config.weighting, &history);
                self.clusters[r]
                    .samples
                    .push(change_probability(lambda, 1.0));
            }
        }
        let (gamma, delta, n_max) = (self.config.confidence, self.config.tolerance, self.n_max);
        for c in &mut self.clusters {
            if !c.done
                && (c.next >= n_max
                    || c.next >= c.sampling.len()
                    || sample_is_sufficient(&c.samples, gamma, delta))
            {
                c.done = true;
            }
        }
    }

    fn observe_unit(&mut self, unit: Unit, probes: &[Probe]) {
        for p in probes {
            if p.changed {
                self.log.record(p.page, unit);
            }
            if p.page as usize >= self.last_fetch.len() {
                self.last_fetch.resize(p.page as usize + 1, 0);
            }
            self.last_fetch[p.page as usize] = unit;
        }
    }
}

/// `cls`: paper 000's cluster-level sampling.
pub(crate) const FAMILY: PolicyFamily = PolicyFamily {
    name: "cls",
    description: "Paper 000: cluster pages by 48 features; sample near each centroid until a t-test says the mean is valid, then fetch whole clusters by their samples' change probability",
    params: &[
        ParamSpec {
            key: "weights",
            description: "Change-history weights of a sample's rate: nad (equal), sad (last cycle), aad (cycle i weighs i), gad (2^(i−1))",
            kind: ParamKind::Choice(&["nad", "sad", "aad", "gad"]),
            default: "nad",
            sweep: &[],
        },
        ParamSpec {
            key: "clusters",
            description: "Clusters k wanted (used: min(k, ⌊B/4⌋) so the minimum samples take at most half the budget)",
            kind: ParamKind::Number { min: 1.0, max: 100_000.0, integer: true },
            default: "100",
            sweep: &[],
        },
        ParamSpec {
            key: "confidence",
            description: "Confidence γ of the t-test sample rule",
            kind: ParamKind::Number { min: 0.5, max: 0.999, integer: false },
            default: "0.8",
            sweep: &[],
        },
        ParamSpec {
            key: "tolerance",
            description: "Tolerance δ of the t-test rule on the mean change probability (lost from the paper)",
            kind: ParamKind::Number { min: 0.001, max: 1.0, integer: false },
            default: "0.05",
            sweep: &[0.02, 0.05, 0.1],
        },
        ParamSpec {
            key: "features",
            description: "Features to cluster on (paper 000 §6.2): url, content, url+content, static (18), dynamic (10), combined (48)",
            kind: ParamKind::Choice(FeatureSet::NAMES),
            default: "combined",
            sweep: &[],
        },
        ParamSpec {
            key: "samples",
            description: "Order of a cluster's samples: oldest (fetched longest ago first, nearest the centroid among equals: the paper's order when whole clusters are fetched) or centroid (nearest first always, the paper literally; re-samples the same pages when the budget is far below a cluster's size)",
            kind: ParamKind::Choice(&["oldest", "centroid"]),
            default: "oldest",
            sweep: &[],
        },
        ParamSpec {
            key: "fill",
            description: "Order of a cluster's members when whole clusters are fetched: oldest (as for samples) or centroid (the paper literally)",
            kind: ParamKind::Choice(&["oldest", "centroid"]),
            default: "oldest",
            sweep: &[],
        },
        ParamSpec {
            key: "recluster-every",
            description: "Re-cluster every this many units from unit 3 on (0: cluster once)",
            kind: ParamKind::Number { min: 0.0, max: 1_000_000.0, integer: true },
            default: "1",
            sweep: &[],
        },
    ],
    build: |params| {
        let defaults = ClsConfig::default();
        let weighting = match params.choice("weights") {
            Some("sad") => Weighting::Sad,
            Some("aad") => Weighting::Aad,
            Some("gad") => Weighting::Gad,
            _ => Weighting::Nad,
        };
        let features = params
            .choice("features")
            .and_then(FeatureSet::parse)
            .unwrap_or_default();
        let features_name = params.choice("features").unwrap_or("combined").to_string();
        let config = ClsConfig {
            clusters: params
                .number("clusters")
                .map_or(defaults.clusters, |k| k as usize),
            confidence: params.number("confidence").unwrap_or(defaults.confidence),
            tolerance: params.number("tolerance").unwrap_or(defaults.tolerance),
            weighting,
            features,
            recluster_every: params
                .number("recluster-every")
                .map_or(defaults.recluster_every, |m| m as u32),
            samples: MemberOrder::parse(params.choice("samples")),
            fill: MemberOrder::parse(params.choice("fill")),
        };
        // The label names an order only when it departs from the default.
        let order_note = |name: &str, order: MemberOrder| {
            if order == MemberOrder::default() {
                String::new()
            } else {
                format!(", {name} {}", order.as_str())
            }
        };
        let fill = format!(
            "{}{}",
            order_note("samples", config.samples),
            order_note("fill", config.fill)
        );
        let label = format!(
            "cls ({}, k = {}, γ = {}, δ = {}, {features_name}{fill})",
            weighting.as_str(),
            config.clusters,
            config.confidence,
            config.tolerance
        );
        let mut settings = serde_json::Map::new();
        settings.insert("weights".into(), weighting.as_str().into());
        settings.insert("clusters".into(), config.clusters.into());
        settings.insert("confidence".into(), config.confidence.into());
        settings.insert("tolerance".into(), config.tolerance.into());
        settings.insert("features".into(), features_name.into());
        settings.insert("recluster_every".into(), config.recluster_every.into());
        settings.insert("samples".into(), config.samples.as_str().into());
        settings.insert("fill".into(), config.fill.as_str().into());
        Ok(Box::new(SamplingPolicy::new(
            "cls",
            label,
            settings,
            ClusterSampling::new(config, 0),
            ClusterSampling::reset,
        )))
    },
};
