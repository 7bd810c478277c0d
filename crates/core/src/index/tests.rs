//! Unit tests of the repository on hand-made corpora (real data: `tests/index_hook.rs`).

use crate::index::snapshot;
use std::collections::HashSet;

use super::testutil::random_corpus;
use super::*;
use crate::corpus::{Corpus, LiveWeb, PageId, Unit};
use crate::text::TermId;

fn all_terms(corpus: &Corpus) -> WorkloadTerms {
    WorkloadTerms::from_ids(0..corpus.vocabulary.len() as TermId)
}

/// Applies the change batches of units `1..=upto` with the hook on.
fn run(corpus: &Corpus, scoring: ScoringKind, upto: Unit) -> (Repository, RecordingSink) {
    let mut repo = snapshot::repository_at(corpus, 0, scoring, None).unwrap();
    repo.set_hook(Some(all_terms(corpus)));
    let mut sink = RecordingSink::default();
    for u in 1..=upto {
        repo.apply(u, &snapshot::changes_at(corpus, u), &mut sink)
            .unwrap();
    }
    (repo, sink)
}

#[test]
fn hook_s2_equals_tantivy_term_query_and_s1_the_score_before() {
    let corpus = random_corpus(120, 6, 7);
    let mut repo = snapshot::repository_at(&corpus, 0, ScoringKind::Bm25, None).unwrap();
    repo.set_hook(Some(all_terms(&corpus)));
    let mut checked = 0;
    for u in 1..6 {
        // Reference s1: tantivy's scores before the batch.
        let before: Vec<Vec<(PageId, f32)>> = (0..corpus.vocabulary.len() as TermId)
            .map(|t| repo.tantivy_term_scores(t).unwrap())
            .collect();
        let batch = snapshot::changes_at(&corpus, u);
        let mut sink = RecordingSink::default();
        let report = repo.apply(u, &batch, &mut sink).unwrap();
        assert_eq!(sink.batches.len(), 1);
        let shifts = &sink.batches[0].1;
        assert_eq!(report.shifts, shifts.len());
        assert!(!shifts.is_empty());
        for s in shifts {
            let after = repo.tantivy_term_scores(s.term).unwrap();
            let find = |list: &[(PageId, f32)]| {
                list.iter()
                    .find(|x| x.0 == s.page)
                    .map(|x| x.1)
                    .unwrap_or(0.0)
            };
            assert_eq!(s.s2, find(&after), "s2 of {s:?}");
            assert_eq!(s.s1, find(&before[s.term as usize]), "s1 of {s:?}");
            checked += 1;
        }
        // Every workload term of the old or new copy is reported, nothing else.
        for upd in &batch {
            let new: HashSet<TermId> = upd
                .version
                .map(|v| v.terms.counts.iter().map(|c| c.0).collect())
                .unwrap_or_default();
            let got: HashSet<TermId> = shifts
                .iter()
                .filter(|s| s.page == upd.page)
                .map(|s| s.term)
                .collect();
            assert!(new.is_subset(&got));
        }
    }
    assert!(checked > 200, "checked {checked}");
}

#[test]
fn forward_scores_equal_tantivy_scores_for_every_term() {
    let (repo, _) = run(&random_corpus(80, 5, 3), ScoringKind::Bm25, 4);
    for t in 0..repo.vocabulary().len() as TermId {
        let from_tantivy = repo.tantivy_term_scores(t).unwrap();
        let mut from_forward: Vec<(PageId, f32)> = repo
            .ranked(&[t])
            .iter()
            .map(|r| (r.page, r.score))
            .collect();
        from_forward.sort_by_key(|p| p.0);
        assert_eq!(
            from_tantivy,
            from_forward,
            "term {}",
            repo.vocabulary().term(t)
        );
    }
}

#[test]
fn rankings_are_identical_across_runs_and_merges() {
    let corpus = random_corpus(100, 6, 11);
    for scoring in [ScoringKind::Bm25, ScoringKind::TfIdf, ScoringKind::InLinks] {
        let (mut a, sink_a) = run(&corpus, scoring, 5);
        let (b, sink_b) = run(&corpus, scoring, 5);
        assert_eq!(sink_a.batches, sink_b.batches);
        let queries = ["emacs", "buffer window", "lisp macro mode", "org agenda"];
        let lists = |r: &Repository| -> Vec<SearchResults> {
            queries
                .iter()
                .map(|q| r.search(q, 0, 1000).unwrap())
                .collect()
        };
        let before = lists(&a);
        assert_eq!(before, lists(&b));
        assert!(a.segment_count() > 1);
        a.merge_all().unwrap();
        assert_eq!(a.segment_count(), 1);
        assert_eq!(before, lists(&a), "{scoring} after merge");
        // The tantivy path and the forward path give the same list; pages come back in order.
        for (q, res) in queries.iter().zip(&before) {
            let terms = a.query_terms(q).unwrap();
            let ranked = a.ranked(&terms);
            assert_eq!(res.total_hits, ranked.len());
            assert!(res.total_hits > 0, "{q}");
            let pages: Vec<PageId> = res.hits.iter().map(|h| h.page).collect();
            assert_eq!(pages, ranked.iter().map(|r| r.page).collect::<Vec<_>>());
            for h in &res.hits {
                assert_eq!(h.url, corpus.url(h.page));
                assert!(h.score > 0.0);
            }
            let page2 = a.search(q, 2, 3).unwrap();
            assert_eq!(
                page2.hits,
                res.hits.iter().skip(2).take(3).cloned().collect::<Vec<_>>()
            );
        }
    }
}

#[test]
fn gone_pages_disappear_and_new_pages_appear() {
    let corpus = random_corpus(100, 6, 5);
    let mut repo = snapshot::repository_at(&corpus, 0, ScoringKind::Bm25, None).unwrap();
    repo.set_hook(Some(all_terms(&corpus)));
    let (mut saw_gone, mut saw_new) = (false, false);
    for u in 1..6 {
        let batch = snapshot::changes_at(&corpus, u);
        let mut sink = RecordingSink::default();
        let was_present: Vec<bool> = batch
            .iter()
            .map(|b| repo.forward().contains(b.page))
            .collect();
        repo.apply(u, &batch, &mut sink).unwrap();
        for (upd, was) in batch.iter().zip(was_present) {
            let shifts: Vec<&ScoreShift> = sink.batches[0]
                .1
                .iter()
                .filter(|s| s.page == upd.page)
                .collect();
            let title = &corpus.timeline(upd.page).url;
            let hits = |q: &str| repo.search(q, 0, 10_000).unwrap().hits;
            match upd.version {
                None if was => {
                    saw_gone = true;
                    // The hook watches every term, so the page's terms each report a shift.
                    assert!(!shifts.is_empty(), "gone page {}: no shift", upd.page);
                    assert!(shifts.iter().all(|s| s.s2 == 0.0 && s.s1 > 0.0));
                    for t in 0..repo.vocabulary().len() as TermId {
                        assert!(!repo.forward().pages_with(t).contains(&upd.page));
                    }
                    assert!(hits("emacs").iter().all(|h| &h.url != title));
                }
                Some(v) if !was => {
                    saw_new = true;
                    assert!(!shifts.is_empty(), "new page {}: no shift", upd.page);
                    assert!(shifts.iter().all(|s| s.s1 == 0.0 && s.s2 > 0.0));
                    let term = corpus.vocabulary.term(v.terms.counts[0].0).to_string();
                    assert!(hits(&term).iter().any(|h| h.page == upd.page));
                }
                _ => {}
            }
        }
    }
    assert!(saw_gone && saw_new);
}

/// A live Web that answers `next_change_after` with the trait's default (unit by unit).
struct UnitByUnit<'a>(&'a Corpus);

impl LiveWeb for UnitByUnit<'_> {
    fn units(&self) -> Unit {
        self.0.units()
    }
    fn page_count(&self) -> usize {
        self.0.page_count()
    }
    fn url(&self, page: PageId) -> &str {
        self.0.url(page)
    }
    fn page_at(&self, page: PageId, unit: Unit) -> crate::corpus::PageState<'_> {
        self.0.page_at(page, unit)
    }
}

#[test]
fn a_corpus_finds_each_pages_next_change_as_the_unit_by_unit_default() {
    // Pages appear late, go and come back: every kind of state change.
    let corpus = random_corpus(300, 12, 17);
    let by_units = UnitByUnit(&corpus);
    let mut changes = 0;
    for p in 0..corpus.page_count() as PageId {
        for u in 0..corpus.units() {
            let next = corpus.next_change_after(p, u);
            assert_eq!(next, by_units.next_change_after(p, u), "page {p} unit {u}");
            changes += usize::from(next.is_some());
        }
    }
    assert!(changes > 300, "{changes}");
}

#[test]
fn repository_reopened_from_disk_has_the_same_forward_index() {
    let corpus = random_corpus(60, 4, 13);
    let dir = tempfile::tempdir().unwrap();
    let lists = {
        let mut repo =
            snapshot::repository_at(&corpus, 0, ScoringKind::InLinks, Some(dir.path())).unwrap();
        for u in 1..4 {
            repo.apply(u, &snapshot::changes_at(&corpus, u), &mut NullSink)
                .unwrap();
        }
        (0..corpus.vocabulary.len() as TermId)
            .map(|t| repo.ranked(&[t]))
            .collect::<Vec<_>>()
    };
    let vocabulary = std::sync::Arc::clone(&corpus.vocabulary);
    let reopened = Repository::open(Some(dir.path()), vocabulary, ScoringKind::InLinks).unwrap();
    for (t, list) in lists.iter().enumerate() {
        assert_eq!(&reopened.ranked(&[t as TermId]), list);
    }
}

#[test]
fn hook_off_records_nothing_and_unknown_terms_match_nothing() {
    let corpus = random_corpus(40, 3, 2);
    let mut repo = snapshot::repository_at(&corpus, 0, ScoringKind::Bm25, None).unwrap();
    let mut sink = RecordingSink::default();
    let report = repo
        .apply(1, &snapshot::changes_at(&corpus, 1), &mut sink)
        .unwrap();
    assert!(sink.batches.is_empty());
    assert_eq!(report.shifts, 0);
    assert!(report.put > 0);
    assert_eq!(repo.search("zyzzyva", 0, 10).unwrap().total_hits, 0);
    let w = WorkloadTerms::from_terms(&corpus.vocabulary, ["emac", "zyzzyva"]);
    assert_eq!(w.len(), 1);
}

#[test]
fn tantivy_default_statistics_count_deleted_documents_until_a_merge() {
    // The pitfall the live statistics remove (see `stats`): after refreshes, tantivy's own
    // statistics still count the replaced copies, so its scores differ from the live ones and
    // change when a merge purges them; the live-statistics scores do not move. (Even after the
    // merge tantivy's total token count is an estimate — the merger scales it by the share of
    // live documents — so its default scores still differ from the exact live ones.)
    let (mut repo, _) = run(&random_corpus(80, 5, 21), ScoringKind::Bm25, 4);
    let term = repo.vocabulary().get("emac").unwrap();
    let live_before = repo.tantivy_term_scores(term).unwrap();
    let default_before = repo.tantivy_default_term_scores(term).unwrap();
    assert_ne!(live_before, default_before);
    repo.merge_all().unwrap();
    assert_eq!(repo.tantivy_term_scores(term).unwrap(), live_before);
    assert_ne!(
        repo.tantivy_default_term_scores(term).unwrap(),
        default_before
    );
}

#[test]
fn forward_only_repository_matches_the_tantivy_backed_one() {
    use crate::index::{RecordingSink, WorkloadTerms};
    let corpus = crate::index::testutil::random_corpus(60, 6, 9);
    for kind in [ScoringKind::Bm25, ScoringKind::TfIdf, ScoringKind::InLinks] {
        let mut full = snapshot::repository_at(&corpus, 0, kind, None).unwrap();
        let mut lean = Repository::forward_only_at(&corpus, 0, kind);
        assert!(full.is_searchable() && !lean.is_searchable());
        let terms = WorkloadTerms::from_ids(0..corpus.vocabulary.len() as u32);
        full.set_hook(Some(terms.clone()));
        lean.set_hook(Some(terms));
        for unit in 1..6 {
            let batch = snapshot::changes_at(&corpus, unit);
            let (mut a, mut b) = (RecordingSink::default(), RecordingSink::default());
            full.apply(unit, &batch, &mut a).unwrap();
            lean.apply(unit, &batch, &mut b).unwrap();
            assert_eq!(a.batches, b.batches, "{kind} unit {unit}");
            for t in 0..corpus.vocabulary.len() as u32 {
                assert_eq!(full.ranked(&[t]), lean.ranked(&[t]));
            }
        }
        assert!(matches!(
            lean.search("emacs", 0, 10),
            Err(crate::index::IndexError::ForwardOnly)
        ));
        assert!(full.search("emacs", 0, 10).unwrap().total_hits > 0);
    }
}

#[test]
fn refetching_an_unchanged_copy_is_not_reindexed_and_records_no_shift() {
    use crate::index::{RecordingSink, WorkloadTerms};
    let corpus = random_corpus(40, 5, 13);
    let mut repo = snapshot::repository_at(&corpus, 0, ScoringKind::Bm25, None).unwrap();
    repo.set_hook(Some(WorkloadTerms::from_ids(
        0..corpus.vocabulary.len() as u32,
    )));
    let pages: Vec<PageId> = repo.forward().pages().collect();
    let before: Vec<_> = (0..corpus.vocabulary.len() as u32)
        .map(|t| repo.ranked(&[t]))
        .collect();
    let batch: Vec<PageUpdate> = pages
        .iter()
        .map(|&p| snapshot::update(&corpus, p, 0))
        .collect();
    let mut sink = RecordingSink::default();
    let report = repo.apply(1, &batch, &mut sink).unwrap();
    assert_eq!(report.unchanged, pages.len());
    assert_eq!((report.put, report.shifts), (0, 0));
    assert!(sink.batches[0].1.is_empty());
    let after: Vec<_> = (0..corpus.vocabulary.len() as u32)
        .map(|t| repo.ranked(&[t]))
        .collect();
    assert_eq!(before, after);
}
