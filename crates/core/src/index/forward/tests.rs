//! Tests across the forward index's concerns: statistics, the update paths against each other
//! and against a fresh build, kept postings, and result lists against their definition.

use super::*;
use crate::index::scorer::{Score, Scorer};
use crate::index::stats::CollectionStats;
use crate::text::TermCounts;

fn doc(counts: &[(TermId, u32)], links: &[PageId]) -> ForwardDoc {
    ForwardDoc {
        terms: Arc::new(TermCounts {
            counts: counts.to_vec(),
            length: counts.iter().map(|c| c.1).sum(),
        }),
        links: links.to_vec(),
        url_hash: 0,
        content_hash: 0,
    }
}

#[test]
fn statistics_follow_puts_replacements_and_removals() {
    let mut f = ForwardIndex::new();
    f.put(3, doc(&[(0, 2), (1, 1)], &[1]));
    f.put(1, doc(&[(1, 4)], &[3]));
    assert_eq!((f.num_docs(), f.total_tokens()), (2, 7));
    assert_eq!(f.pages_with(1), &[1, 3]);
    assert_eq!(f.doc_freq(0), 1);
    assert_eq!((f.inlinks(1), f.inlinks(3)), (1, 1));
    assert_eq!(f.matching(&[0, 1]), vec![3]);
    // Replacement drops the old postings and links.
    f.put(3, doc(&[(2, 5)], &[]));
    assert_eq!((f.num_docs(), f.total_tokens()), (2, 9));
    assert_eq!(f.pages_with(0), &[] as &[PageId]);
    assert_eq!(f.pages_with(1), &[1]);
    assert_eq!(f.inlinks(1), 0);
    assert!(f.remove(1).is_some());
    assert!(f.remove(1).is_none());
    assert_eq!((f.num_docs(), f.total_tokens(), f.inlinks(3)), (1, 5, 0));
    assert_eq!(f.pages().collect::<Vec<_>>(), vec![3]);
    assert!(f.memory_bytes() > 0);
}

/// The straightforward definition of a result list: every present copy containing all
/// terms, scored by [`Weight::score`] on the copy's `TermCounts`, stably sorted.
fn reference_ranked(f: &ForwardIndex, scorer: &dyn Scorer, terms: &[TermId]) -> Vec<Ranked> {
    let weight = scorer.weight(f, terms);
    let mut hits: Vec<(Score, u64, PageId)> = f
        .pages()
        .filter_map(|p| {
            let d = f.doc(p).unwrap();
            let all = !terms.is_empty() && terms.iter().all(|&t| d.terms.contains(t));
            all.then(|| (weight.score(p, &d.terms), d.url_hash, p))
        })
        .collect();
    hits.sort_by(|a, b| rank_order(*a, *b));
    hits.into_iter()
        .map(|(score, _, page)| Ranked { page, score })
        .collect()
}

#[test]
fn bulk_construction_equals_one_put_at_a_time() {
    use crate::corpus::LiveWeb;
    use crate::index::testutil::random_corpus;
    let corpus = random_corpus(90, 6, 31);
    for unit in 0..corpus.units() {
        let docs: Vec<(PageId, ForwardDoc)> = (0..corpus.page_count() as PageId)
            .filter_map(|p| {
                let v = corpus.page_at(p, unit).present()?;
                Some((p, ForwardDoc::from_version(corpus.url(p), v)))
            })
            .collect();
        let mut one_by_one = ForwardIndex::new();
        for (p, d) in docs.clone() {
            one_by_one.put(p, d);
        }
        let bulk = ForwardIndex::from_docs(docs);
        // Vectors compare by content; trailing empty postings/in-links may differ in
        // length only when no copy reaches them, so compare the observable state.
        assert_eq!(bulk.docs, one_by_one.docs);
        assert_eq!(bulk.lengths, one_by_one.lengths);
        assert_eq!(bulk.url_hashes, one_by_one.url_hashes);
        assert_eq!(bulk.num_docs, one_by_one.num_docs);
        assert_eq!(bulk.total_tokens, one_by_one.total_tokens);
        assert_eq!(bulk.postings, one_by_one.postings);
        assert_eq!(bulk.inlinks, one_by_one.inlinks);
    }
    assert_eq!(ForwardIndex::from_docs(Vec::new()), ForwardIndex::new());
}

/// An index keeping some terms' postings, edited unit after unit by both update paths
/// (one copy at a time and in batches), answers those terms, the statistics and the copies
/// as the full index does, and refuses the other terms.
#[test]
fn an_index_keeping_some_postings_answers_them_as_the_full_index() {
    use crate::corpus::LiveWeb;
    use crate::index::testutil::random_corpus;
    let corpus = random_corpus(120, 8, 9);
    let copy_at = |p: PageId, unit| {
        corpus
            .page_at(p, unit)
            .present()
            .map(|v| ForwardDoc::from_version(corpus.url(p), v))
    };
    let pages = corpus.page_count() as PageId;
    let mut full = ForwardIndex::from_docs(
        (0..pages)
            .filter_map(|p| copy_at(p, 0).map(|d| (p, d)))
            .collect(),
    );
    let terms = full.postings.len() as TermId;
    let kept_terms: Vec<TermId> = (0..terms).filter(|t| t % 3 == 1).collect();
    let mut kept = full.clone();
    kept.keep_postings_of(kept_terms.iter().copied());
    assert!(kept.memory_bytes() < full.memory_bytes());
    for unit in 0..corpus.units() {
        if unit > 0 {
            // Odd units one copy at a time, even ones in a batch.
            let updates: Vec<(PageId, Option<ForwardDoc>)> =
                (0..pages).map(|p| (p, copy_at(p, unit))).collect();
            for index in [&mut full, &mut kept] {
                if unit % 2 == 1 {
                    for (p, copy) in updates.clone() {
                        index.set_copy(p, copy);
                    }
                } else {
                    index.set_copies(updates.clone());
                }
            }
        }
        assert_eq!(
            (kept.num_docs, kept.total_tokens),
            (full.num_docs, full.total_tokens)
        );
        assert_eq!(kept.docs, full.docs, "unit {unit}");
        assert_eq!(kept.lengths, full.lengths);
        assert_eq!(kept.inlinks, full.inlinks);
        for &t in &kept_terms {
            assert_eq!(kept.postings(t), full.postings(t), "unit {unit} term {t}");
            assert_eq!(kept.doc_freq(t), full.doc_freq(t));
        }
    }
    assert!(kept.keeps_postings_of(1) && !kept.keeps_postings_of(2));
    assert!(full.keeps_postings_of(2));
    let refused = std::panic::catch_unwind(|| kept.pages_with(2).len());
    assert!(refused.is_err(), "a dropped term's postings were read");
}

#[test]
fn replacements_through_the_units_equal_a_fresh_build_of_each_unit() {
    use crate::corpus::LiveWeb;
    use crate::index::testutil::random_corpus;
    let corpus = random_corpus(120, 8, 7);
    let mut evolving = ForwardIndex::new();
    for unit in 0..corpus.units() {
        let mut docs = Vec::new();
        for p in 0..corpus.page_count() as PageId {
            let copy = corpus
                .page_at(p, unit)
                .present()
                .map(|v| ForwardDoc::from_version(corpus.url(p), v));
            if let Some(d) = &copy {
                docs.push((p, d.clone()));
            }
            evolving.set_copy(p, copy);
        }
        let fresh = ForwardIndex::from_docs(docs);
        assert_eq!(fresh.docs, evolving.docs[..fresh.docs.len()], "unit {unit}");
        assert!(evolving.docs[fresh.docs.len()..]
            .iter()
            .all(Option::is_none));
        assert_eq!(
            (fresh.num_docs, fresh.total_tokens),
            (evolving.num_docs, evolving.total_tokens)
        );
        for t in 0..evolving.postings.len() {
            let (pages, tfs) = evolving.postings(t as TermId);
            assert_eq!(
                fresh.postings(t as TermId),
                (pages, tfs),
                "unit {unit}, term {t}"
            );
        }
        for p in 0..evolving.inlinks.len() {
            assert_eq!(
                fresh.inlinks.get(p).copied().unwrap_or(0),
                evolving.inlinks[p]
            );
        }
    }
}

/// Random batches of replacements, additions and removals (pages listed twice, removals
/// of absent pages, terms never seen before) leave exactly the state of
/// [`ForwardIndex::set_copy`] one update at a time, for long lists edited many times per
/// batch as for short ones.
#[test]
fn batched_copies_equal_one_update_at_a_time() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(18);
    let random_doc = |rng: &mut rand_chacha::ChaCha8Rng, terms: u32| {
        let mut counts: Vec<(TermId, u32)> = (0..rng.gen_range(1..12))
            .map(|_| {
                // Terms 0..3 are in most copies (long lists), the others rare.
                let t = if rng.gen_bool(0.5) {
                    rng.gen_range(0..3)
                } else {
                    rng.gen_range(3..terms)
                };
                (t, rng.gen_range(1..5))
            })
            .collect();
        counts.sort_unstable();
        counts.dedup_by_key(|c| c.0);
        let mut links: Vec<PageId> = (0..rng.gen_range(0..4))
            .map(|_| rng.gen_range(0..300))
            .collect();
        links.sort_unstable();
        links.dedup();
        doc(&counts, &links)
    };
    let (mut batched, mut sequential) = (ForwardIndex::new(), ForwardIndex::new());
    for round in 0..40 {
        let terms = 20 + round * 5;
        let updates: Vec<(PageId, Option<ForwardDoc>)> = (0..rng.gen_range(0..150))
            .map(|_| {
                let page = rng.gen_range(0..250);
                let copy = rng.gen_bool(0.8).then(|| random_doc(&mut rng, terms));
                (page, copy)
            })
            .collect();
        for (page, copy) in updates.clone() {
            sequential.set_copy(page, copy);
        }
        batched.set_copies(updates);
        assert_eq!(batched, sequential, "round {round}");
    }
    assert!(sequential.pages_with(0).len() > 100);
}

fn bits(list: &[Ranked]) -> Vec<(PageId, u32)> {
    list.iter().map(|r| (r.page, r.score.to_bits())).collect()
}

#[test]
fn optimised_lists_equal_the_reference_bit_for_bit() {
    use crate::corpus::LiveWeb;
    use crate::index::testutil::random_corpus;
    use crate::index::ScoringKind;
    use rand::{Rng, SeedableRng};

    let corpus = random_corpus(120, 8, 17);
    let vocabulary = corpus.vocabulary.len() as TermId;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    // Queries: every single term, and random conjunctions of 2–3 distinct terms (some with
    // an unknown term id).
    let mut queries: Vec<Vec<TermId>> = (0..vocabulary).map(|t| vec![t]).collect();
    for _ in 0..200 {
        let n = rng.gen_range(2..=3);
        let mut q: Vec<TermId> = Vec::new();
        while q.len() < n {
            let t = rng.gen_range(0..vocabulary + 2);
            if !q.contains(&t) {
                q.push(t);
            }
        }
        queries.push(q);
    }
    queries.push(Vec::new());
    // One index advanced unit by unit (puts, replacements and removals in page order)
    // and one rebuilt in descending page order, so the postings see both insert paths.
    let mut f = ForwardIndex::new();
    for unit in 0..corpus.units() {
        for p in 0..corpus.page_count() as PageId {
            match corpus.page_at(p, unit).present() {
                Some(v) => f.put(p, ForwardDoc::from_version(corpus.url(p), v)),
                None => {
                    f.remove(p);
                }
            }
        }
        let mut g = ForwardIndex::new();
        for p in (0..corpus.page_count() as PageId).rev() {
            if let Some(v) = corpus.page_at(p, unit).present() {
                g.put(p, ForwardDoc::from_version(corpus.url(p), v));
            }
        }
        for kind in [ScoringKind::Bm25, ScoringKind::TfIdf, ScoringKind::InLinks] {
            let scorer = kind.scorer();
            for q in &queries {
                let want = reference_ranked(&f, scorer.as_ref(), q);
                let got = f.ranked(scorer.as_ref(), q);
                assert_eq!(bits(&got), bits(&want), "{kind} unit {unit} {q:?}");
                assert_eq!(bits(&g.ranked(scorer.as_ref(), q)), bits(&want));
                let scores: Vec<u32> = want.iter().map(|r| r.score.to_bits()).collect();
                let fast: Vec<u32> = f
                    .ranked_scores(scorer.as_ref(), q)
                    .iter()
                    .map(|s| s.to_bits())
                    .collect();
                assert_eq!(fast, scores);
                let pages: Vec<PageId> = {
                    let mut p: Vec<PageId> = want.iter().map(|r| r.page).collect();
                    p.sort_unstable();
                    p
                };
                assert_eq!(f.matching(q), pages);
            }
        }
    }
}
