//! Exact metrics, computed against the live Web with no approximation (paper 003 §6 evaluated
//! every policy this way; paper 000 adds top-10 freshness and MAP@10).
//!
//! Per time unit the work splits in two:
//! * [`LiveTruth`]: the live Web's side — for every workload query the live score of every page
//!   that matches live (`S(W_t[p], q)`), the live top 10, and the denominator of Eq. 5 (the
//!   quality of an ideal engine with instant access to the live Web). It does not depend on
//!   the refresh policy, so a comparison computes it once per unit and shares it.
//! * [`evaluate`]: the repository's side — each query's full result list `A(q, W_L)` ranked by
//!   repository scores, each page credited with its *live* score.
//!
//! Definitions (written out because papers differ in detail):
//! * **Quality** (paper 003 Eq. 5): `Q = Σ_q f_q Σ_{p∈A(q,W_L)} I(R_L(p))·S(W_t[p],q) /
//!   Σ_q f_q Σ_{p∈A(q,W_t)} I(R_t(p))·S(W_t[p],q)`; 1 when the denominator is 0.
//! * **Top-10 freshness**: per query with a non-empty repository result list, the share of its
//!   top-min(10, n) results whose repository copy is the live version; averaged over those
//!   queries (each distinct query once, as paper 000 averages over queries).
//! * **MAP@10**: per query whose live result list is non-empty, the average precision of the
//!   repository's top 10 against the relevant set R = the live top 10:
//!   `AP@10 = Σ_{k≤10, result k ∈ R} P@k / |R|`; averaged over those queries.

use rayon::prelude::*;

use crate::corpus::{PageId, Unit};
use crate::index::{ForwardIndex, LiveScores, Score, Scorer};
use crate::text::TermId;

use super::viewing::ViewingLikelihood;

/// Depth of the top-k metrics (top-10 freshness, MAP@10).
pub const TOP_K: usize = 10;

/// A workload query as the metrics see it: distinct term ids and the frequency `f_q`.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricQuery {
    pub terms: Vec<TermId>,
    pub frequency: f64,
}

/// The live side of one query at one unit.
#[derive(Debug, Clone, Default)]
struct LiveList {
    /// `(page, live score)` of every page matching live, sorted by page id.
    by_page: Vec<(PageId, Score)>,
    /// The live top `TOP_K`, sorted by page id (for membership tests).
    top: Vec<PageId>,
}

impl LiveList {
    fn score(&self, page: PageId) -> Score {
        match self.by_page.binary_search_by_key(&page, |&(p, _)| p) {
            Ok(i) => self.by_page[i].1,
            Err(_) => 0.0,
        }
    }
}

/// The policy-independent live side of the metrics at one unit. See the module docs.
#[derive(Debug, Clone)]
pub struct LiveTruth {
    pub unit: Unit,
    lists: Vec<LiveList>,
    /// Denominator of Eq. 5: the quality an engine synchronised with the live Web would give.
    pub ideal: f64,
}

impl LiveTruth {
    /// Computes the live lists of every query (in parallel).
    pub fn compute(
        live: &LiveScores,
        queries: &[MetricQuery],
        likelihood: &ViewingLikelihood,
    ) -> Self {
        let lists: Vec<(LiveList, f64)> = queries
            .par_iter()
            .map(|q| {
                let ranked = live.ranked(&q.terms);
                let ideal: f64 = ranked
                    .iter()
                    .enumerate()
                    .map(|(r, hit)| likelihood.at(r as u64 + 1) * f64::from(hit.score))
                    .sum();
                let mut top: Vec<PageId> = ranked.iter().take(TOP_K).map(|h| h.page).collect();
                top.sort_unstable();
                let mut by_page: Vec<(PageId, Score)> =
                    ranked.iter().map(|h| (h.page, h.score)).collect();
                by_page.sort_unstable_by_key(|&(p, _)| p);
                (LiveList { by_page, top }, q.frequency * ideal)
            })
            .collect();
        let ideal = lists.iter().map(|(_, i)| i).sum();
        LiveTruth {
            unit: live.unit(),
            lists: lists.into_iter().map(|(l, _)| l).collect(),
            ideal,
        }
    }

    /// `S(W_t[p], q)` of query number `query`.
    pub fn live_score(&self, query: usize, page: PageId) -> Score {
        self.lists[query].score(page)
    }

    /// Approximate heap bytes held (for sizing comparison caches).
    pub fn memory_bytes(&self) -> usize {
        self.lists
            .iter()
            .map(|l| l.by_page.len() * 8 + l.top.len() * 4 + std::mem::size_of::<LiveList>())
            .sum()
    }
}

/// The metrics of one repository state against the live Web at one unit.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct UnitMetrics {
    pub unit: Unit,
    /// Repository quality `Q(W_L)` (paper 003 Eq. 5).
    pub quality: f64,
    /// Top-10 freshness.
    pub fresh_at_10: f64,
    /// MAP@10 against the live top 10.
    pub map_at_10: f64,
    /// Numerator of Eq. 5 (absolute quality), for ΔQ comparisons.
    pub absolute_quality: f64,
}

/// Evaluates the repository (its forward index and scorer) against `truth`.
///
/// `is_fresh(p)` says whether the repository's copy of `p` is the live version at this unit
/// (the simulator knows which version it fetched).
pub fn evaluate(
    repository: &ForwardIndex,
    scorer: &dyn Scorer,
    queries: &[MetricQuery],
    truth: &LiveTruth,
    likelihood: &ViewingLikelihood,
    is_fresh: &(dyn Fn(PageId) -> bool + Sync),
) -> UnitMetrics {
    struct PerQuery {
        absolute: f64,
        fresh: Option<f64>,
        ap: Option<f64>,
    }
    let per_query: Vec<PerQuery> = queries
        .par_iter()
        .enumerate()
        .map(|(qi, q)| {
            let ranked = repository.ranked(scorer, &q.terms);
            let live = &truth.lists[qi];
            let absolute: f64 = ranked
                .iter()
                .enumerate()
                .map(|(r, hit)| likelihood.at(r as u64 + 1) * f64::from(live.score(hit.page)))
                .sum();
            let top = &ranked[..ranked.len().min(TOP_K)];
            let fresh = (!top.is_empty())
                .then(|| top.iter().filter(|h| is_fresh(h.page)).count() as f64 / top.len() as f64);
            let ap = (!live.top.is_empty()).then(|| {
                let mut hits = 0usize;
                let mut sum = 0.0;
                for (k, h) in top.iter().enumerate() {
                    if live.top.binary_search(&h.page).is_ok() {
                        hits += 1;
                        sum += hits as f64 / (k + 1) as f64;
                    }
                }
                sum / live.top.len() as f64
            });
            PerQuery {
                absolute: q.frequency * absolute,
                fresh,
                ap,
            }
        })
        .collect();
    let absolute_quality: f64 = per_query.iter().map(|p| p.absolute).sum();
    let mean = |values: Vec<f64>| {
        if values.is_empty() {
            1.0
        } else {
            values.iter().sum::<f64>() / values.len() as f64
        }
    };
    UnitMetrics {
        unit: truth.unit,
        quality: if truth.ideal > 0.0 {
            absolute_quality / truth.ideal
        } else {
            1.0
        },
        fresh_at_10: mean(per_query.iter().filter_map(|p| p.fresh).collect()),
        map_at_10: mean(per_query.iter().filter_map(|p| p.ap).collect()),
        absolute_quality,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::{Clock, Corpus, LiveWeb, PageTimeline};
    use crate::index::testutil::{random_corpus, version};
    use crate::index::{ForwardDoc, ScoringKind};
    use crate::text::Vocabulary;

    fn queries_of(corpus: &Corpus, terms: &[&str]) -> Vec<MetricQuery> {
        terms
            .iter()
            .filter_map(|t| corpus.vocabulary.get(t))
            .enumerate()
            .map(|(i, id)| MetricQuery {
                terms: vec![id],
                frequency: 1.0 + i as f64,
            })
            .collect()
    }

    #[test]
    fn a_synchronised_repository_is_perfect() {
        let corpus = random_corpus(80, 6, 3);
        let i = ViewingLikelihood::default();
        let queries = queries_of(&corpus, &["emac", "buffer", "lisp", "window", "org"]);
        for kind in [ScoringKind::Bm25, ScoringKind::TfIdf, ScoringKind::InLinks] {
            let live = LiveScores::at(&corpus, 4, kind);
            let truth = LiveTruth::compute(&live, &queries, &i);
            assert!(truth.ideal > 0.0);
            let m = evaluate(live.forward(), live.scorer(), &queries, &truth, &i, &|_| {
                true
            });
            assert!((m.quality - 1.0).abs() < 1e-12, "{kind}: {}", m.quality);
            assert_eq!(m.map_at_10, 1.0);
            assert_eq!(m.fresh_at_10, 1.0);
        }
    }

    #[test]
    fn a_stale_repository_by_hand() {
        // Three pages; query "alpha". Live: p0 has alpha ×1, p1 alpha ×3, p2 alpha ×2.
        // Repository (stale): p0 alpha ×4 (stale, ranks first), p1 alpha ×3, p2 lacks alpha.
        let mut v = Vocabulary::new();
        let live_versions = [
            version(&mut v, 0, "", "alpha x x", vec![]),
            version(&mut v, 0, "", "alpha alpha alpha", vec![]),
            version(&mut v, 0, "", "alpha alpha x", vec![]),
        ];
        let stale = [
            version(&mut v, 0, "", "alpha alpha alpha alpha", vec![]),
            live_versions[1].clone(),
            version(&mut v, 0, "", "x x x", vec![]),
        ];
        let corpus = Corpus::from_parts(
            Clock {
                origin: 0,
                unit_seconds: 1,
                units: 1,
            },
            live_versions
                .iter()
                .enumerate()
                .map(|(p, ver)| PageTimeline {
                    url: format!("https://t/{p}"),
                    versions: vec![ver.clone()],
                })
                .collect(),
            v.clone(),
        );
        let alpha = v.get("alpha").unwrap();
        let queries = vec![MetricQuery {
            terms: vec![alpha],
            frequency: 2.0,
        }];
        let i = ViewingLikelihood::default();
        let live = LiveScores::at(&corpus, 0, ScoringKind::TfIdf);
        let truth = LiveTruth::compute(&live, &queries, &i);
        let mut repo = ForwardIndex::new();
        for (p, ver) in stale.iter().enumerate() {
            repo.put(
                p as PageId,
                ForwardDoc::from_version(corpus.url(p as PageId), ver),
            );
        }
        let scorer = ScoringKind::TfIdf.scorer();
        let m = evaluate(&repo, scorer.as_ref(), &queries, &truth, &i, &|p| p == 1);

        let s = |p: PageId| f64::from(live.score(p, &[alpha]));
        // Live order: p1 (tf 3), p2 (tf 2), p0 (tf 1). Repository order: p0, p1 (p2 absent).
        assert!(s(1) > s(2) && s(2) > s(0));
        let ideal = 2.0 * (i.at(1) * s(1) + i.at(2) * s(2) + i.at(3) * s(0));
        let got = 2.0 * (i.at(1) * s(0) + i.at(2) * s(1));
        assert!((truth.ideal - ideal).abs() < 1e-9);
        assert!(
            (m.quality - got / ideal).abs() < 1e-9,
            "{} vs {}",
            m.quality,
            got / ideal
        );
        // Top-10 of the repository: p0 (stale), p1 (fresh) → 1/2.
        assert_eq!(m.fresh_at_10, 0.5);
        // Relevant = live top 10 = {p0, p1, p2}; repository shows p0 (rel), p1 (rel):
        // AP = (1/1 + 2/2) / 3.
        assert!((m.map_at_10 - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn no_matching_page_anywhere_counts_as_perfect() {
        let corpus = random_corpus(10, 2, 1);
        let queries = vec![MetricQuery {
            terms: vec![u32::MAX - 1],
            frequency: 1.0,
        }];
        let i = ViewingLikelihood::default();
        let live = LiveScores::at(&corpus, 1, ScoringKind::Bm25);
        let truth = LiveTruth::compute(&live, &queries, &i);
        let m = evaluate(live.forward(), live.scorer(), &queries, &truth, &i, &|_| {
            true
        });
        assert_eq!((m.quality, m.fresh_at_10, m.map_at_10), (1.0, 1.0, 1.0));
    }
}
