//! The repository and its measurement hook on the shared EmacsWiki corpus (real data).

mod common;

use refresher::crawl::SnapshotFetcher;
use std::collections::HashSet;

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use refresher::corpus::ingest::{load_corpus, IngestOptions};
use refresher::corpus::{Corpus, LiveWeb, PageId};
use refresher::index::{RecordingSink, Repository, ScoringKind, WorkloadTerms};

use refresher::judge::live_scores::LiveScores;
use refresher::text::TermId;

fn emacswiki() -> Option<Corpus> {
    let path = common::shared_data("corpora/emacswiki")?;
    let (corpus, _report) = load_corpus(&path, &IngestOptions::default()).expect("emacswiki loads");
    Some(corpus)
}

fn every_term(corpus: &Corpus) -> WorkloadTerms {
    WorkloadTerms::from_ids(0..corpus.vocabulary.len() as TermId)
}

#[test]
fn hook_scores_equal_tantivy_term_query_scores_over_weekly_batches() {
    let Some(corpus) = emacswiki() else { return };
    // Start one week before the first week where a page is created or disappears, then run
    // weekly batches until both kinds were seen and at least 200 pairs were checked.
    let first_event = (1..corpus.units())
        .find(|&w| {
            SnapshotFetcher::new(&corpus)
                .changes_at(w)
                .iter()
                .any(|u| u.version.is_none() || corpus.page_at(u.page, w - 1).present().is_none())
        })
        .expect("the corpus has new or gone pages");
    let start = first_event - 1;
    let mut repo = SnapshotFetcher::new(&corpus)
        .repository_at(start, ScoringKind::Bm25, None)
        .unwrap();
    repo.set_hook(Some(every_term(&corpus)));
    let mut rng = ChaCha8Rng::seed_from_u64(2013);
    let mut checked = 0;
    let (mut saw_new, mut saw_gone) = (false, false);
    for week in first_event..corpus.units() {
        if checked >= 200 && saw_new && saw_gone {
            break;
        }
        let batch = SnapshotFetcher::new(&corpus).changes_at(week);
        // Candidate (page, term) pairs: terms of the old or the new copy.
        let mut pairs: Vec<(PageId, TermId)> = Vec::new();
        for u in &batch {
            let mut terms: HashSet<TermId> = HashSet::new();
            if let Some(d) = repo.forward().doc(u.page) {
                terms.extend(d.terms.counts.iter().map(|c| c.0));
            }
            if let Some(v) = u.version {
                terms.extend(v.terms.counts.iter().map(|c| c.0));
            }
            pairs.extend(terms.into_iter().map(|t| (u.page, t)));
        }
        pairs.sort_unstable();
        let sample: Vec<(PageId, TermId)> = pairs.choose_multiple(&mut rng, 60).copied().collect();
        let score_in = |list: &[(PageId, f32)], p: PageId| {
            list.iter().find(|x| x.0 == p).map(|x| x.1).unwrap_or(0.0)
        };
        let before: Vec<f32> = sample
            .iter()
            .map(|&(p, t)| score_in(&repo.tantivy_term_scores(t).unwrap(), p))
            .collect();
        let was_present: Vec<bool> = batch
            .iter()
            .map(|u| repo.forward().contains(u.page))
            .collect();

        let mut sink = RecordingSink::default();
        repo.apply(week, &batch, &mut sink).unwrap();
        let shifts = &sink.batches[0].1;
        for (&(p, t), s1) in sample.iter().zip(before) {
            let s = shifts
                .iter()
                .find(|s| s.page == p && s.term == t)
                .expect("every term of the old or new copy is reported");
            let after = score_in(&repo.tantivy_term_scores(t).unwrap(), p);
            assert_eq!(s.s2, after, "week {week}: s2 of {s:?}");
            assert_eq!(s.s1, s1, "week {week}: s1 of {s:?}");
            checked += 1;
        }
        for (u, was) in batch.iter().zip(was_present) {
            let mine: Vec<_> = shifts.iter().filter(|s| s.page == u.page).collect();
            match (was, u.version) {
                (true, None) => {
                    saw_gone = true;
                    assert!(mine.iter().all(|s| s.s2 == 0.0));
                    let title = corpus.url(u.page);
                    let t = mine[0].term;
                    let list = repo.search_terms(&[t], 0, usize::MAX).unwrap();
                    assert!(list.hits.iter().all(|h| h.url != title));
                }
                (false, Some(v)) => {
                    saw_new = true;
                    assert!(mine.iter().all(|s| s.s1 == 0.0));
                    let t = v.terms.counts[0].0;
                    let list = repo.search_terms(&[t], 0, usize::MAX).unwrap();
                    assert!(list.hits.iter().any(|h| h.page == u.page));
                }
                _ => {}
            }
        }
    }
    assert!(checked >= 200, "checked {checked} pairs");
    assert!(saw_new && saw_gone, "the corpus has new and gone pages");
}

#[test]
fn rankings_are_deterministic_across_runs_and_merges_and_match_the_live_web() {
    let Some(corpus) = emacswiki() else { return };
    let build = || {
        let mut repo = SnapshotFetcher::new(&corpus)
            .repository_at(0, ScoringKind::Bm25, None)
            .unwrap();
        for week in 1..=6 {
            let mut sink = RecordingSink::default();
            repo.apply(
                week,
                &SnapshotFetcher::new(&corpus).changes_at(week),
                &mut sink,
            )
            .unwrap();
        }
        repo
    };
    let queries = [
        "emacs",
        "buffer window",
        "org mode agenda",
        "lisp macro",
        "dired",
    ];
    let lists = |r: &Repository| {
        queries
            .iter()
            .map(|q| r.search(q, 0, 50).unwrap())
            .collect::<Vec<_>>()
    };
    let mut a = build();
    let b = build();
    let first = lists(&a);
    assert!(first.iter().all(|r| r.total_hits > 0));
    assert_eq!(first, lists(&b));
    a.merge_all().unwrap();
    assert_eq!(first, lists(&a));

    // Every change up to week 6 applied: the repository equals the live Web at week 6.
    let live = LiveScores::at(&corpus, 6, ScoringKind::Bm25);
    for q in queries {
        let terms = a.query_terms(q).unwrap();
        assert_eq!(live.ranked(&terms), a.ranked(&terms), "{q}");
    }
}
