//! The measurement hook of paper 003 §5.2: per-term score shifts recorded while the index is
//! updated.
//!
//! tantivy has no per-posting callback, so the hook lives in the repository's one update path
//! ([`Repository::apply`](super::Repository::apply)). For each page of a batch and every
//! single-term workload query `t` occurring in the page's old or new copy, it records
//! `(page, t, s1, s2)`: the page's score for `t` before and after the batch, computed with the
//! same scorer and the same live statistics the searcher uses (for BM25, tantivy's own
//! `Bm25Weight`, so `s2` equals a `TermQuery`'s score exactly). A page new to the repository has
//! `s1 = 0`, a page gone has `s2 = 0`.
//!
//! As in the paper, only the refreshed pages' own shifts are recorded. With BM25 and TF-IDF a
//! batch also moves the collection statistics, so pages outside the batch shift slightly too;
//! with in-links, a refreshed page's changed out-links move other pages' scores. Those
//! second-order shifts are not recorded (the ΔQ estimator approximates the displaced pages
//! through `F_q⁻¹`; see ARCHITECTURE.md, § The user-centric metric and its estimate).

use crate::corpus::{PageId, Unit};
use crate::text::{TermId, Vocabulary};

use super::scorer::Score;

/// One recorded shift: page `page`'s score for the single-term query `term` went from `s1`
/// (before the batch) to `s2` (after it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoreShift {
    pub page: PageId,
    pub term: TermId,
    pub s1: Score,
    pub s2: Score,
}

/// The consumer of the hook's output (ripgrep `Sink` style: the update path pushes, the sink
/// decides what to do).
///
/// Protocol: [`Repository::apply`](super::Repository::apply) calls [`ShiftSink::shifts`] exactly
/// once per batch, *after* the batch is committed and the searcher reloaded — so a sink may
/// query the repository and will see the new state. `shifts` holds every shift of the batch,
/// grouped by page in batch order and, within a page, by ascending term id. It is called (with
/// an empty slice) even when nothing shifted, and not at all when the hook is off.
pub trait ShiftSink {
    fn shifts(&mut self, unit: Unit, shifts: &[ScoreShift]);
}

/// A sink that drops everything (for callers that do not measure).
pub struct NullSink;

impl ShiftSink for NullSink {
    fn shifts(&mut self, _unit: Unit, _shifts: &[ScoreShift]) {}
}

/// A sink that keeps every batch, for tests and inspection.
#[derive(Debug, Default, Clone)]
pub struct RecordingSink {
    pub batches: Vec<(Unit, Vec<ScoreShift>)>,
}

impl ShiftSink for RecordingSink {
    fn shifts(&mut self, unit: Unit, shifts: &[ScoreShift]) {
        self.batches.push((unit, shifts.to_vec()));
    }
}

impl<S: ShiftSink + ?Sized> ShiftSink for &mut S {
    fn shifts(&mut self, unit: Unit, shifts: &[ScoreShift]) {
        (**self).shifts(unit, shifts)
    }
}

/// The set of single-term workload queries the hook watches, as term ids.
#[derive(Debug, Clone, Default)]
pub struct WorkloadTerms {
    /// Indexed by term id.
    member: Vec<bool>,
    len: usize,
}

impl WorkloadTerms {
    pub fn from_ids(ids: impl IntoIterator<Item = TermId>) -> Self {
        let mut w = WorkloadTerms::default();
        for id in ids {
            let i = id as usize;
            if w.member.len() <= i {
                w.member.resize(i + 1, false);
            }
            if !w.member[i] {
                w.member[i] = true;
                w.len += 1;
            }
        }
        w
    }

    /// Maps analyzed workload terms (strings) through the corpus vocabulary. Terms the
    /// vocabulary has never seen occur in no page, can never match, and are dropped.
    pub fn from_terms<'a>(
        vocabulary: &Vocabulary,
        terms: impl IntoIterator<Item = &'a str>,
    ) -> Self {
        Self::from_ids(terms.into_iter().filter_map(|t| vocabulary.get(t)))
    }

    pub fn contains(&self, term: TermId) -> bool {
        self.member.get(term as usize).copied().unwrap_or(false)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}
