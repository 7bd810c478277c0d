use super::*;
use crate::corpus::PageId;
use crate::corpus::{Clock, Corpus, LiveWeb, PageTimeline, Unit};
use crate::index::testutil::{random_corpus, version};
use crate::index::{ForwardDoc, ScoringKind};
use crate::index::{ForwardIndex, Score, Scorer};

use crate::live_scores::LiveScores;
use crate::quality::search_quality::SearchQuality;
use crate::quality::viewing::ViewingLikelihood;
use crate::text::{TermId, Vocabulary};

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
        assert!(
            (m.search.quality - 1.0).abs() < 1e-12,
            "{kind}: {}",
            m.search.quality
        );
        assert_eq!(m.search.map_at_10, 1.0);
        assert_eq!(m.search.fresh_at_10, 1.0);
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
            .map(|(p, ver)| PageTimeline::new(format!("https://t/{p}"), vec![ver.clone()]))
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
        (m.search.quality - got / ideal).abs() < 1e-9,
        "{} vs {}",
        m.search.quality,
        got / ideal
    );
    // Top-10 of the repository: p0 (stale), p1 (fresh) → 1/2.
    assert_eq!(m.search.fresh_at_10, 0.5);
    // Relevant = live top 10 = {p0, p1, p2}; repository shows p0 (rel), p1 (rel):
    // AP = (1/1 + 2/2) / 3.
    assert!((m.search.map_at_10 - 2.0 / 3.0).abs() < 1e-12);
    // nDCG@10 = (1 + 1/log2 3) / (1 + 1/log2 3 + 1/log2 4); P@10 = 2/10.
    let l3 = 1.0 / 3f64.log2();
    assert!((m.ndcg_at_10 - (1.0 + l3) / (1.0 + l3 + 0.5)).abs() < 1e-12);
    assert!((m.p_at_10 - 0.2).abs() < 1e-12);
    // Paper 000: freshness over k = 10 fixed → 1/10; both shown results relevant under
    // either relevance → AP over the retrieved = (1/1 + 2/2)/2 = 1.
    assert!((m.paper000.fresh_at_10_fixed_k - 0.1).abs() < 1e-12);
    assert_eq!(m.paper000.map_at_10_retrieved, 1.0);
    assert_eq!(m.paper000.map_at_10_tau0, 1.0);
}

#[test]
fn paper000_relevance_variants_by_hand() {
    // Query "alpha", TF-IDF. Live: page i has i + 1 "alpha" among 13 words (i = 0..11), so
    // the live order is 11, 10, …, 0 and the live top 10 is pages 2..=11. The repository
    // holds the live copies except page 0's, a stale copy of 13 "alpha" that ranks first:
    // its top 10 is 0, 11, 10, …, 3 — page 0 matches live but is not in the live top 10.
    let mut v = Vocabulary::new();
    let text = |k: usize| {
        let mut words = vec!["alpha"; k];
        words.resize(13, "x");
        words.join(" ")
    };
    let live_versions: Vec<_> = (0..12)
        .map(|i| version(&mut v, 0, "", &text(i + 1), vec![]))
        .collect();
    let stale0 = version(&mut v, 0, "", &text(13), vec![]);
    let corpus = Corpus::from_parts(
        Clock {
            origin: 0,
            unit_seconds: 1,
            units: 1,
        },
        live_versions
            .iter()
            .enumerate()
            .map(|(p, ver)| PageTimeline::new(format!("https://t/{p:02}"), vec![ver.clone()]))
            .collect(),
        v.clone(),
    );
    let queries = vec![MetricQuery {
        terms: vec![v.get("alpha").unwrap()],
        frequency: 1.0,
    }];
    let i = ViewingLikelihood::default();
    let live = LiveScores::at(&corpus, 0, ScoringKind::TfIdf);
    let truth = LiveTruth::compute(&live, &queries, &i);
    let mut repo = ForwardIndex::new();
    for (p, ver) in live_versions.iter().enumerate() {
        let ver = if p == 0 { &stale0 } else { ver };
        repo.put(
            p as PageId,
            ForwardDoc::from_version(corpus.url(p as PageId), ver),
        );
    }
    let scorer = ScoringKind::TfIdf.scorer();
    let m = evaluate(&repo, scorer.as_ref(), &queries, &truth, &i, &|p| p != 0);
    // Strict relevance: [0, 1, 1, …, 1] (nine relevant). Σ_{i=2}^{10} P@i = Σ (i−1)/i.
    let sum: f64 = 1.0 / 2.0
        + 2.0 / 3.0
        + 3.0 / 4.0
        + 4.0 / 5.0
        + 5.0 / 6.0
        + 6.0 / 7.0
        + 7.0 / 8.0
        + 8.0 / 9.0
        + 9.0 / 10.0;
    // The project's MAP@10 divides by |live top 10| = 10, paper 000's by the 9 retrieved.
    assert!(
        (m.search.map_at_10 - sum / 10.0).abs() < 1e-12,
        "{}",
        m.search.map_at_10
    );
    assert!((m.paper000.map_at_10_retrieved - sum / 9.0).abs() < 1e-12);
    // τ = 0: page 0's live copy still contains "alpha": all ten relevant.
    assert_eq!(m.paper000.map_at_10_tau0, 1.0);
    // Ten results, nine fresh: both freshness forms give 0.9.
    assert!((m.search.fresh_at_10 - 0.9).abs() < 1e-12);
    assert!((m.paper000.fresh_at_10_fixed_k - 0.9).abs() < 1e-12);
}

/// The straightforward metrics: every list fully ranked, live scores looked up per hit,
/// `I(r)` computed per rank. Returns (ideal, per-query live top 10, metrics).
fn reference(
    repository: &ForwardIndex,
    scorer: &dyn Scorer,
    live: &LiveScores,
    queries: &[MetricQuery],
    i: &ViewingLikelihood,
    is_fresh: &dyn Fn(PageId) -> bool,
) -> (f64, Vec<Vec<PageId>>, UnitMetrics) {
    let mut ideal = 0.0;
    let mut tops = Vec::new();
    let (mut absolute_quality, mut fresh, mut aps) = (0.0, Vec::new(), Vec::new());
    let (mut ndcgs, mut precisions) = (Vec::new(), Vec::new());
    let (mut fixed_k, mut retrieved, mut tau0) = (Vec::new(), Vec::new(), Vec::new());
    for q in queries {
        let live_list = live.ranked(&q.terms);
        let q_ideal: f64 = live_list
            .iter()
            .enumerate()
            .map(|(r, h)| i.at(r as u64 + 1) * f64::from(h.score))
            .sum();
        ideal += q.frequency * q_ideal;
        let mut live_top: Vec<PageId> = live_list.iter().take(TOP_K).map(|h| h.page).collect();
        live_top.sort_unstable();
        let live_score = |p: PageId| {
            live_list
                .iter()
                .find(|h| h.page == p)
                .map_or(0.0, |h| h.score)
        };
        let ranked = repository.ranked(scorer, &q.terms);
        let absolute: f64 = ranked
            .iter()
            .enumerate()
            .map(|(r, h)| i.at(r as u64 + 1) * f64::from(live_score(h.page)))
            .sum();
        absolute_quality += q.frequency * absolute;
        let top = &ranked[..ranked.len().min(TOP_K)];
        if !top.is_empty() {
            fresh.push(top.iter().filter(|h| is_fresh(h.page)).count() as f64 / top.len() as f64);
            fixed_k.push(top.iter().filter(|h| is_fresh(h.page)).count() as f64 / 10.0);
            // Paper 000's AP: precision at each relevant result over the relevant retrieved.
            let ap = |relevant: &dyn Fn(PageId) -> bool| {
                let (mut hits, mut sum) = (0.0, 0.0);
                for (k, h) in top.iter().enumerate() {
                    if relevant(h.page) {
                        hits += 1.0;
                        sum += hits / (k + 1) as f64;
                    }
                }
                if hits > 0.0 {
                    sum / hits
                } else {
                    0.0
                }
            };
            retrieved.push(ap(&|p| live_top.contains(&p)));
            tau0.push(ap(&|p| live_list.iter().any(|h| h.page == p)));
        }
        if !live_top.is_empty() {
            let (mut hits, mut sum) = (0usize, 0.0);
            for (k, h) in top.iter().enumerate() {
                if live_top.contains(&h.page) {
                    hits += 1;
                    sum += hits as f64 / (k + 1) as f64;
                }
            }
            aps.push(sum / live_top.len() as f64);
            // nDCG@10 and P@10 written out independently of `retrieval_measures`.
            let dcg: f64 = top
                .iter()
                .enumerate()
                .filter(|(_, h)| live_top.contains(&h.page))
                .map(|(k, _)| 1.0 / (k as f64 + 2.0).log2())
                .sum();
            let ideal: f64 = (0..live_top.len().min(TOP_K))
                .map(|k| 1.0 / (k as f64 + 2.0).log2())
                .sum();
            ndcgs.push(dcg / ideal);
            precisions
                .push(top.iter().filter(|h| live_top.contains(&h.page)).count() as f64 / 10.0);
        }
        tops.push(live_top);
    }
    let mean = |v: Vec<f64>| {
        if v.is_empty() {
            1.0
        } else {
            v.iter().sum::<f64>() / v.len() as f64
        }
    };
    let metrics = UnitMetrics {
        unit: live.unit(),
        search: SearchQuality {
            quality: if ideal > 0.0 {
                absolute_quality / ideal
            } else {
                1.0
            },
            fresh_at_10: mean(fresh),
            map_at_10: mean(aps),
        },
        ndcg_at_10: mean(ndcgs),
        p_at_10: mean(precisions),
        absolute_quality,
        paper000: Paper000Measures {
            fresh_at_10_fixed_k: mean(fixed_k),
            map_at_10_retrieved: mean(retrieved),
            map_at_10_tau0: mean(tau0),
        },
    };
    (ideal, tops, metrics)
}

#[test]
fn optimised_metrics_equal_the_reference_exactly() {
    use rand::{Rng, SeedableRng};
    let corpus = random_corpus(150, 8, 9);
    let n = corpus.vocabulary.len() as TermId;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let mut queries: Vec<MetricQuery> = (0..n)
        .map(|t| MetricQuery {
            terms: vec![t],
            frequency: 1.0 + t as f64,
        })
        .collect();
    for _ in 0..60 {
        let a = rng.gen_range(0..n);
        let b = (a + rng.gen_range(1..n)) % n;
        queries.push(MetricQuery {
            terms: vec![a, b],
            frequency: rng.gen_range(1.0..5.0),
        });
    }
    let i = ViewingLikelihood::default();
    for kind in [ScoringKind::Bm25, ScoringKind::TfIdf, ScoringKind::InLinks] {
        let scorer = kind.scorer();
        for (stale_at, live_at) in [(0, 7), (2, 5), (6, 6)] {
            let live = LiveScores::at(&corpus, live_at, kind);
            let repo = LiveScores::at(&corpus, stale_at, kind);
            let truth = LiveTruth::compute(&live, &queries, &i);
            let fresh = |p: PageId| !p.is_multiple_of(3);
            let m = evaluate(
                repo.forward(),
                scorer.as_ref(),
                &queries,
                &truth,
                &i,
                &fresh,
            );
            let (ideal, tops, want) =
                reference(repo.forward(), scorer.as_ref(), &live, &queries, &i, &fresh);
            assert_eq!(truth.ideal.to_bits(), ideal.to_bits(), "{kind}");
            let got_tops: Vec<Vec<PageId>> = truth.lists.iter().map(|l| l.top.clone()).collect();
            assert_eq!(got_tops, tops, "{kind}");
            assert_eq!(m, want, "{kind} {stale_at} {live_at}");
            assert_eq!(m.search.quality.to_bits(), want.search.quality.to_bits());
        }
    }
}

/// A run's evaluation stream — a repository refreshed a few pages per unit, judged unit
/// after unit with one [`RankMemory`] (and the live truths computed with another) — gives
/// exactly the metrics of evaluating each unit from scratch; so does a memory left by an
/// unrelated repository.
/// One repository state to evaluate against one unit's live truth.
struct Evaluation<'a> {
    repo: &'a ForwardIndex,
    scorer: &'a dyn Scorer,
    queries: &'a [MetricQuery],
    truth: &'a LiveTruth,
    likelihood: &'a ViewingLikelihood,
    fresh: &'a (dyn Fn(PageId) -> bool + Sync),
}

impl Evaluation<'_> {
    /// Evaluates with `memory` and checks the metrics equal a fresh evaluation's, bit for
    /// bit (`label` names the case); returns them.
    fn with_memory_as_fresh(&self, memory: &mut RankMemory, label: &str) -> UnitMetrics {
        let Evaluation {
            repo,
            scorer,
            queries,
            truth,
            likelihood,
            fresh,
        } = *self;
        let got = evaluate_with(memory, repo, scorer, queries, truth, likelihood, fresh);
        let want = evaluate(repo, scorer, queries, truth, likelihood, fresh);
        assert_eq!(got, want, "{label}");
        assert_eq!(
            got.absolute_quality.to_bits(),
            want.absolute_quality.to_bits(),
            "{label}"
        );
        want
    }
}

#[test]
fn incremental_evaluation_equals_full_re_evaluation() {
    use rand::{Rng, SeedableRng};
    let corpus = random_corpus(160, 9, 23);
    let n = corpus.vocabulary.len() as TermId;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(41);
    let mut queries: Vec<MetricQuery> = (0..n)
        .map(|t| MetricQuery {
            terms: vec![t],
            frequency: 1.0 + f64::from(t % 5),
        })
        .collect();
    for _ in 0..80 {
        let a = rng.gen_range(0..n);
        let b = (a + rng.gen_range(1..n)) % n;
        queries.push(MetricQuery {
            terms: vec![a, b],
            frequency: rng.gen_range(1.0..5.0),
        });
    }
    let i = ViewingLikelihood::default();
    let pages = corpus.page_count() as PageId;
    for kind in [ScoringKind::Bm25, ScoringKind::TfIdf, ScoringKind::InLinks] {
        let scorer = kind.scorer();
        let mut repo = LiveScores::at(&corpus, 0, kind).forward().clone();
        let mut held: Vec<Option<Unit>> = (0..pages)
            .map(|p| corpus.page_at(p, 0).present().map(|v| v.unit))
            .collect();
        let mut live = LiveScores::at(&corpus, 0, kind);
        let (mut live_memory, mut repo_memory) = (RankMemory::default(), RankMemory::default());
        let mut fit_memory = RankMemory::default();
        let (mut reordered, mut refreshed) = (0usize, 0usize);
        for unit in 0..corpus.units() {
            live.advance_to(&corpus, unit);
            let truth = LiveTruth::compute_with(&mut live_memory, &live, &queries, &i);
            let full_truth = LiveTruth::compute(&live, &queries, &i);
            assert_eq!(truth.ideal.to_bits(), full_truth.ideal.to_bits(), "{kind}");
            assert_eq!(truth.lists.len(), full_truth.lists.len());
            for (a, b) in truth.lists.iter().zip(&full_truth.lists) {
                assert_eq!(a.top, b.top, "{kind} unit {unit}");
                assert_eq!(a.by_page, b.by_page);
            }
            // Refresh a random fifth of the pages (new pages are crawled as they appear).
            for p in 0..pages {
                let now = corpus.page_at(p, unit).present();
                let new_page = held[p as usize].is_none() && now.is_some();
                if unit > 0 && (new_page || rng.gen_bool(0.2)) {
                    refreshed += usize::from(held[p as usize] != now.map(|v| v.unit));
                    held[p as usize] = now.map(|v| v.unit);
                    repo.set_copy(p, now.map(|v| ForwardDoc::from_version(corpus.url(p), v)));
                }
            }
            let fresh =
                |p: PageId| held[p as usize] == corpus.page_at(p, unit).present().map(|v| v.unit);
            for p in 0..pages {
                let held = held.get(p as usize).copied().flatten();
                assert_eq!(
                    truth.is_fresh(p, held),
                    crate::corpus::is_fresh(&corpus, p, held, unit),
                    "page {p} unit {unit}"
                );
                assert!(!truth.is_fresh(p, Some(unit + 1)));
            }
            // A page the live Web never had: only "no copy" is fresh.
            assert!(truth.is_fresh(pages + 1, None) && !truth.is_fresh(pages + 1, Some(0)));
            let before: Vec<Vec<PageId>> = repo_memory.orders.clone();
            let stream = Evaluation {
                repo: &repo,
                scorer: scorer.as_ref(),
                queries: &queries,
                truth: &truth,
                likelihood: &i,
                fresh: &fresh,
            };
            let want =
                stream.with_memory_as_fresh(&mut repo_memory, &format!("{kind} unit {unit}"));
            reordered += before
                .iter()
                .zip(&repo_memory.orders)
                .filter(|(a, b)| !a.is_empty() && a != b)
                .count();
            // A memory left by another stream: the live Web's lists of this unit.
            let from_foreign = evaluate_with(
                &mut live_memory.clone(),
                &repo,
                scorer.as_ref(),
                &queries,
                &truth,
                &i,
                &fresh,
            );
            assert_eq!(from_foreign, want, "{kind} unit {unit} (foreign memory)");
            let ranked: Vec<Vec<PageId>> = queries
                .iter()
                .map(|q| {
                    repo.ranked(scorer.as_ref(), &q.terms)
                        .iter()
                        .map(|r| r.page)
                        .collect()
                })
                .collect();
            assert_eq!(repo_memory.orders, ranked, "{kind} unit {unit}");
            // What a score-to-rank fit reads, from a memory of the previous unit's fit.
            let lists: Vec<&[TermId]> = queries.iter().map(|q| q.terms.as_slice()).collect();
            let ranks = |len: usize| {
                let mut r: Vec<usize> = [1, 2, len / 3, len / 2, len]
                    .into_iter()
                    .filter(|&r| r >= 1 && r <= len)
                    .collect();
                r.sort_unstable();
                r.dedup();
                r
            };
            let got = fit_memory.scores_at_ranks(&repo, scorer.as_ref(), &lists, ranks);
            // The same, handed over by an evaluation of the repository (with the metrics
            // unchanged).
            let evaluated = EvaluatedLists {
                repository: &repo,
                scorer: scorer.as_ref(),
                queries: &queries,
            };
            let evaluation = evaluate_and_rank(
                &mut live_memory.clone(),
                &evaluated,
                &truth,
                &i,
                &fresh,
                Some(&ranks),
            );
            assert_eq!(
                evaluation.metrics, want,
                "{kind} unit {unit} (handing over ranks)"
            );
            // Each query's credit is its term of the quality's numerator.
            let credits: f64 = evaluation.query_credits.iter().sum();
            assert_eq!(credits, want.absolute_quality);
            assert_eq!(truth.query_ideals.iter().sum::<f64>(), truth.ideal);
            let handed = evaluation.at_ranks.expect("ranks were asked for");
            assert_eq!(handed.len(), queries.len());
            let bits = |v: &[Score]| v.iter().map(|s| s.to_bits()).collect::<Vec<_>>();
            for ((q, (len, scores)), (handed_len, handed_scores)) in
                queries.iter().zip(got).zip(&handed)
            {
                let (want_len, want) = repo.scores_at_ranks(scorer.as_ref(), &q.terms, ranks);
                assert_eq!(len, want_len);
                assert_eq!(bits(&scores), bits(&want), "{kind} unit {unit}");
                assert_eq!(*handed_len, want_len);
                assert_eq!(bits(handed_scores), bits(&want), "{kind} unit {unit}");
            }
        }
        // The stream did change lists from unit to unit, so the test exercised re-ranking.
        assert!(
            refreshed > 20 && reordered > 20,
            "{kind}: {refreshed} refreshed, {reordered} reordered"
        );
    }
}

#[test]
fn an_unedited_repository_keeps_its_rankings_and_the_metrics_are_the_same() {
    let corpus = random_corpus(160, 9, 29);
    let n = corpus.vocabulary.len() as TermId;
    let mut queries: Vec<MetricQuery> = (0..n)
        .map(|t| MetricQuery {
            terms: vec![t],
            frequency: 1.0 + f64::from(t % 3),
        })
        .collect();
    queries.extend((0..n.min(40)).map(|t| MetricQuery {
        terms: vec![t, (t + 7) % n],
        frequency: 2.0,
    }));
    let terms: Vec<&[TermId]> = queries.iter().map(|q| q.terms.as_slice()).collect();
    let i = ViewingLikelihood::default();
    for kind in [ScoringKind::Bm25, ScoringKind::TfIdf, ScoringKind::InLinks] {
        let scorer = kind.scorer();
        // The repository holds unit 0 throughout; the live Web moves on.
        let mut repo = LiveScores::at(&corpus, 0, kind).forward().clone();
        let mut live = LiveScores::at(&corpus, 0, kind);
        let mut memory = RankMemory::default();
        let mut kept = 0;
        for unit in 0..corpus.units() {
            live.advance_to(&corpus, unit);
            let truth = LiveTruth::compute(&live, &queries, &i);
            let fresh = |p: PageId| !p.is_multiple_of(3);
            kept += usize::from(memory.ranked == Some((repo.edit_mark(), kind)));
            let stream = Evaluation {
                repo: &repo,
                scorer: scorer.as_ref(),
                queries: &queries,
                truth: &truth,
                likelihood: &i,
                fresh: &fresh,
            };
            stream.with_memory_as_fresh(&mut memory, &format!("{kind} unit {unit}"));
        }
        // Every evaluation after the first found the rankings kept.
        assert_eq!(kept, corpus.units() as usize - 1, "{kind}");
        let truth = LiveTruth::compute(&live, &queries, &i);
        let rank_all = |memory: &mut RankMemory, scorer: &dyn Scorer, queries: &[MetricQuery]| {
            evaluate_with(memory, &repo, scorer, queries, &truth, &i, &|_| true);
        };
        assert!(memory.prepare(&repo, scorer.as_ref(), &terms).still_ranked);
        // Until every list is ranked again the memory claims no ranking.
        assert!(!memory.prepare(&repo, scorer.as_ref(), &terms).still_ranked);
        rank_all(&mut memory, scorer.as_ref(), &queries);
        // Another scoring, other queries, or an edit: the kept orders are no ranking.
        let other = if kind == ScoringKind::Bm25 {
            ScoringKind::TfIdf
        } else {
            ScoringKind::Bm25
        };
        assert!(
            !memory
                .prepare(&repo, other.scorer().as_ref(), &terms)
                .still_ranked
        );
        rank_all(&mut memory, scorer.as_ref(), &queries);
        assert!(
            !memory
                .prepare(&repo, scorer.as_ref(), &terms[1..])
                .still_ranked
        );
        rank_all(&mut memory, scorer.as_ref(), &queries);
        assert!(memory.prepare(&repo, scorer.as_ref(), &terms).still_ranked);
        rank_all(&mut memory, scorer.as_ref(), &queries);
        let page = repo.pages().next().expect("a page");
        let copy = repo.doc(page).cloned();
        repo.set_copy(page, copy);
        assert!(
            !memory.prepare(&repo, scorer.as_ref(), &terms).still_ranked,
            "{kind}"
        );
    }
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
    assert_eq!(
        (m.search.quality, m.search.fresh_at_10, m.search.map_at_10),
        (1.0, 1.0, 1.0)
    );
}

/// The refresher's multi-term measure fitted from the scores at ranks the judge's evaluation
/// handed over has the functions fitting on the repository gives; lists handed over for
/// another revision are not read.
#[test]
fn a_refit_from_an_evaluations_ranks_is_the_refit_on_the_repository() {
    use crate::index::Repository;
    use crate::quality::measure::MeasureDeltaQ;
    use crate::quality::multi_term::{fit_query_table, MultiTermDeltaQMeasure};
    use crate::quality::score_rank::ScoreRankFn;
    use crate::quality::ScoreRankTable;
    use crate::querylog::term_workload::TermWorkload;
    use std::sync::Arc;
    let corpus = random_corpus(90, 5, 13);
    let n = corpus.vocabulary.len() as TermId;
    let queries: Vec<MetricQuery> = (0..n)
        .map(|t| MetricQuery {
            terms: if t % 3 == 0 {
                vec![t]
            } else {
                vec![t, (t + 7) % n]
            },
            frequency: 1.0 + f64::from(t % 4),
        })
        .collect();
    let workload = Arc::new(TermWorkload {
        term_frequency: (0..n).map(|t| (t, 1.0)).collect(),
        queries: queries.clone(),
    });
    let likelihood = ViewingLikelihood::default();
    let pieces = 3;
    let mut repo = Repository::forward_only_at(&corpus, 0, ScoringKind::Bm25);
    let mut measure =
        MultiTermDeltaQMeasure::new(&repo, Arc::clone(&workload), likelihood, pieces, 1);
    let batch = refresher_core::fetch::SnapshotFetcher::new(&corpus).changes_at(2);
    repo.apply(2, &batch, &mut crate::index::NullSink).unwrap();
    assert_eq!(measure.refits_from_query_lists(2), Some(pieces));

    let live = crate::live_scores::LiveScores::at(&corpus, 3, ScoringKind::Bm25);
    let truth = LiveTruth::compute(&live, &queries, &likelihood);
    let lists = EvaluatedLists {
        repository: repo.forward(),
        scorer: repo.scorer(),
        queries: &queries,
    };
    let ranks = move |len: usize| ScoreRankFn::needed_ranks(len, pieces);
    let handed = evaluate_and_rank(
        &mut RankMemory::default(),
        &lists,
        &truth,
        &likelihood,
        &|_| true,
        Some(&ranks),
    )
    .at_ranks
    .unwrap();
    let want = fit_query_table(&repo, &queries, pieces);
    let same = |table: &ScoreRankTable| {
        table.len() == want.len() && (0..n).all(|q| table.get(q) == want.get(q))
    };
    assert!(want.len() > 10);
    assert!(
        !same(measure.table()),
        "the repository changed: the functions move"
    );

    measure.offer_scores_at_ranks(repo.revision(), Arc::new(handed.clone()));
    measure.before_unit(&repo, 2);
    assert!(same(measure.table()));

    // Handed over for another revision: ignored, the refit ranks the repository itself
    // (the same functions again).
    let mut other = MultiTermDeltaQMeasure::new(&repo, workload, likelihood, pieces, 1);
    let mut wrong = handed;
    for (_, scores) in &mut wrong {
        scores.iter_mut().for_each(|s| *s += 1.0);
    }
    other.offer_scores_at_ranks(repo.revision() + 1, Arc::new(wrong));
    other.before_unit(&repo, 2);
    assert!(same(other.table()));
}

/// Every measure of [`UnitMetrics`] is written by a collector of the evaluation's table (an
/// unwritten one stays NaN), with and without queries to judge.
#[test]
fn the_collectors_write_every_measure() {
    let corpus = random_corpus(40, 4, 7);
    let i = ViewingLikelihood::default();
    let live = LiveScores::at(&corpus, 2, ScoringKind::Bm25);
    let repo = LiveScores::at(&corpus, 0, ScoringKind::Bm25);
    let some = queries_of(&corpus, &["emac", "buffer", "lisp", "window", "org"]);
    for queries in [Vec::new(), some] {
        let truth = LiveTruth::compute(&live, &queries, &i);
        let m = evaluate(repo.forward(), repo.scorer(), &queries, &truth, &i, &|p| {
            p % 2 == 0
        });
        let measures = [
            m.search.quality,
            m.search.fresh_at_10,
            m.search.map_at_10,
            m.ndcg_at_10,
            m.p_at_10,
            m.absolute_quality,
            m.paper000.fresh_at_10_fixed_k,
            m.paper000.map_at_10_retrieved,
            m.paper000.map_at_10_tau0,
        ];
        assert!(
            measures.iter().all(|v| !v.is_nan()),
            "{} queries: {m:?}",
            queries.len()
        );
    }
}
