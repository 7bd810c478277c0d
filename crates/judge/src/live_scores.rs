//! Scoring the live Web: `S(W_t[p], q)` and the live result lists `A(q, W_t)`.
//!
//! The exact metrics need scores of live copies computed exactly like the repository's. No
//! second tantivy index is needed: [`LiveScores`] keeps an in-memory [`ForwardIndex`] of every
//! page present at unit `t` (its live version's terms and links) and scores it with the same
//! [`Scorer`] through the same statistics code. The scores equal those of a repository
//! synchronised with the live Web at `t` (tested below and in `tests/index_hook.rs`).

use crate::corpus::{LiveWeb, PageId, Unit};
use crate::text::TermId;

use crate::index::{ForwardDoc, ForwardIndex, Ranked, Score, Scorer, ScoringKind};

/// The live Web's forward index at one unit, advanced incrementally unit by unit.
pub struct LiveScores {
    unit: Unit,
    forward: ForwardIndex,
    /// Per page, the unit of the version held (identifies the version: one per unit).
    held: Vec<Option<Unit>>,
    /// Per page, the first unit after `unit` at which its state changes (`None`: never), so
    /// that moving forward visits only the pages that change instead of every timeline.
    next_change: Vec<Option<Unit>>,
    scorer: Box<dyn Scorer>,
}

impl LiveScores {
    /// The live Web at `unit`.
    pub fn at<W: LiveWeb + ?Sized>(web: &W, unit: Unit, scoring: ScoringKind) -> Self {
        Self::of_index(
            web,
            unit,
            crate::index::repository::forward_at(web, unit),
            scoring,
        )
    }

    /// [`at`](Self::at), and a copy of its index: the forward index of a repository holding
    /// the live Web of `unit` (a simulation's initial crawl), built once for both. The copy
    /// shares the posting lists until either side edits them.
    pub fn at_with_copy<W: LiveWeb + ?Sized>(
        web: &W,
        unit: Unit,
        scoring: ScoringKind,
    ) -> (Self, ForwardIndex) {
        let forward = crate::index::repository::forward_at(web, unit);
        let copy = forward.clone();
        (Self::of_index(web, unit, forward, scoring), copy)
    }

    /// The live Web at `unit` with its index `forward`, which must be `forward_at(web, unit)`.
    fn of_index<W: LiveWeb + ?Sized>(
        web: &W,
        unit: Unit,
        forward: ForwardIndex,
        scoring: ScoringKind,
    ) -> Self {
        let pages = 0..web.page_count() as PageId;
        LiveScores {
            unit,
            forward,
            held: pages
                .clone()
                .map(|p| web.page_at(p, unit).present().map(|v| v.unit))
                .collect(),
            next_change: pages.map(|p| web.next_change_after(p, unit)).collect(),
            scorer: scoring.scorer(),
        }
    }

    /// Moves to `unit` (forwards or backwards), touching only pages whose version differs.
    pub fn advance_to<W: LiveWeb + ?Sized>(&mut self, web: &W, unit: Unit) {
        self.sync(web, unit);
    }

    fn sync<W: LiveWeb + ?Sized>(&mut self, web: &W, unit: Unit) {
        let moving_forward = unit >= self.unit;
        self.unit = unit;
        let mut updates = Vec::new();
        for page in 0..web.page_count() as PageId {
            let next = &mut self.next_change[page as usize];
            if moving_forward && next.is_none_or(|u| u > unit) {
                // Its state at `unit` is the one held.
                continue;
            }
            *next = web.next_change_after(page, unit);
            let version = web.page_at(page, unit).present();
            let now = version.map(|v| v.unit);
            if self.held[page as usize] == now {
                continue;
            }
            self.held[page as usize] = now;
            updates.push((
                page,
                version.map(|v| ForwardDoc::from_version(web.url(page), v)),
            ));
        }
        // One batch: a unit's changes edit each posting list once (see `set_copies`).
        self.forward.set_copies(updates);
    }

    pub fn unit(&self) -> Unit {
        self.unit
    }

    /// Per page, the unit of the live version at this unit (`None`: no live copy).
    pub(crate) fn held_versions(&self) -> &[Option<Unit>] {
        &self.held
    }

    pub fn forward(&self) -> &ForwardIndex {
        &self.forward
    }

    pub fn scorer(&self) -> &dyn Scorer {
        self.scorer.as_ref()
    }

    /// `S(W_t[p], q)`: the live copy's score (0 when absent or not matching every term).
    pub fn score(&self, page: PageId, terms: &[TermId]) -> Score {
        self.forward.score(self.scorer.as_ref(), page, terms)
    }

    /// `A(q, W_t)`: the live result list, in the repository's rank order.
    pub fn ranked(&self, terms: &[TermId]) -> Vec<Ranked> {
        self.forward.ranked(self.scorer.as_ref(), terms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::testutil::random_corpus;
    use crate::index::{snapshot, CollectionStats};

    #[test]
    fn live_scores_equal_a_repository_built_from_the_live_pages() {
        let corpus = random_corpus(90, 6, 9);
        for scoring in [ScoringKind::Bm25, ScoringKind::TfIdf, ScoringKind::InLinks] {
            let mut live = LiveScores::at(&corpus, 0, scoring);
            for u in [2, 5, 3] {
                live.advance_to(&corpus, u);
                let fresh = snapshot::repository_at(&corpus, u, scoring, None).unwrap();
                assert_eq!(live.forward().num_docs(), fresh.num_docs());
                for t in 0..corpus.vocabulary.len() as TermId {
                    assert_eq!(live.ranked(&[t]), fresh.ranked(&[t]));
                    let tantivy = fresh.search_terms(&[t], 0, usize::MAX).unwrap();
                    let pages: Vec<PageId> = tantivy.hits.iter().map(|h| h.page).collect();
                    let live_pages: Vec<PageId> =
                        live.ranked(&[t]).iter().map(|r| r.page).collect();
                    assert_eq!(pages, live_pages);
                    if scoring == ScoringKind::Bm25 {
                        let mut exact = fresh.tantivy_term_scores(t).unwrap();
                        exact.retain(|e| e.1 > 0.0);
                        for (p, s) in exact {
                            assert_eq!(live.score(p, &[t]), s);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn live_scores_moved_forward_and_back_equal_the_live_web_built_there() {
        let corpus = random_corpus(200, 10, 23);
        let mut live = LiveScores::at(&corpus, 0, ScoringKind::Bm25);
        for u in [1, 2, 5, 5, 9, 3, 4, 0, 7] {
            live.advance_to(&corpus, u);
            let built = LiveScores::at(&corpus, u, ScoringKind::Bm25);
            assert_eq!(live.held_versions(), built.held_versions(), "unit {u}");
            let (a, b) = (live.forward(), built.forward());
            assert_eq!(a.num_docs(), b.num_docs(), "unit {u}");
            assert_eq!(a.total_tokens(), b.total_tokens(), "unit {u}");
            for p in 0..corpus.page_count() as PageId {
                assert_eq!(a.doc(p), b.doc(p), "unit {u} page {p}");
            }
            for t in 0..corpus.vocabulary.len() as TermId {
                assert_eq!(a.pages_with(t), b.pages_with(t), "unit {u} term {t}");
                assert_eq!(live.ranked(&[t]), built.ranked(&[t]), "unit {u} term {t}");
            }
        }
    }
}
