//! Scoring the live Web: `S(W_t[p], q)` and the live result lists `A(q, W_t)`.
//!
//! The exact metrics need scores of live copies computed exactly like the repository's. No
//! second tantivy index is needed: [`LiveScores`] keeps an in-memory [`ForwardIndex`] of every
//! page present at unit `t` (its live version's terms and links) and scores it with the same
//! [`Scorer`] through the same statistics code. The scores equal those of a repository
//! synchronised with the live Web at `t` (tested below and in `tests/index_hook.rs`).

use crate::corpus::{LiveWeb, PageId, Unit};
use crate::text::TermId;

use super::forward::{ForwardDoc, ForwardIndex, Ranked};
use super::scorer::{Score, Scorer, ScoringKind};

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
        Self::of_index(web, unit, super::repository::forward_at(web, unit), scoring)
    }

    /// [`at`](Self::at), and a copy of its index: the forward index of a repository holding
    /// the live Web of `unit` (a simulation's initial crawl), built once for both. The copy
    /// shares the posting lists until either side edits them.
    pub fn at_with_copy<W: LiveWeb + ?Sized>(
        web: &W,
        unit: Unit,
        scoring: ScoringKind,
    ) -> (Self, ForwardIndex) {
        let forward = super::repository::forward_at(web, unit);
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
    pub fn held_versions(&self) -> &[Option<Unit>] {
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
