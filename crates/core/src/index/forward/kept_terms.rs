//! Narrowing an index to the postings of some terms ([`ForwardIndex::keep_postings_of`]).

use std::sync::Arc;

use crate::index::posting_list::PostingList;
use crate::text::TermId;

use super::ForwardIndex;

/// The terms an index keeps postings of: a bit per term id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct KeptTerms(Vec<u64>);

impl KeptTerms {
    pub(super) fn of(terms: impl IntoIterator<Item = TermId>) -> Self {
        let mut bits = Vec::new();
        for t in terms {
            let (word, bit) = (t as usize / 64, t % 64);
            if bits.len() <= word {
                bits.resize(word + 1, 0u64);
            }
            bits[word] |= 1 << bit;
        }
        KeptTerms(bits)
    }

    pub(super) fn contains(&self, term: TermId) -> bool {
        self.0
            .get(term as usize / 64)
            .is_some_and(|w| w & (1 << (term % 64)) != 0)
    }
}

impl ForwardIndex {
    /// From now on keeps the postings of `terms` only: the others are dropped and no edit
    /// touches them again. The copies, lengths, token totals and in-link counts stay whole.
    ///
    /// For an index whose readers are known to ask for these terms only — a simulated run's
    /// repository, read by the workload's metrics, its ΔQ hook and BM25 statistics of the
    /// query terms — so that its clone and each refresh cost the workload's lists, not every
    /// term of the site's. Reading the postings or the document frequency of another term
    /// panics (its lists are gone: an answer would be wrong, not approximate).
    pub fn keep_postings_of(&mut self, terms: impl IntoIterator<Item = TermId>) {
        let kept = KeptTerms::of(terms);
        for (t, list) in self.postings.iter_mut().enumerate() {
            if !kept.contains(t as TermId) {
                *list = PostingList::Empty;
            }
        }
        let last = self
            .postings
            .iter()
            .rposition(|l| !l.is_empty())
            .map_or(0, |i| i + 1);
        self.postings.truncate(last);
        self.postings.shrink_to_fit();
        self.kept = Some(Arc::new(kept));
    }

    /// Whether this index keeps the postings of `term` (every term unless
    /// [`keep_postings_of`](Self::keep_postings_of) narrowed them).
    pub(crate) fn keeps_postings_of(&self, term: TermId) -> bool {
        self.kept.as_ref().is_none_or(|k| k.contains(term))
    }

    /// Panics when the postings of `term` were dropped (see [`Self::keep_postings_of`]).
    #[inline]
    pub(super) fn assert_kept(&self, term: TermId) {
        assert!(
            self.keeps_postings_of(term),
            "the postings of term {term} were not kept in this index (keep_postings_of)"
        );
    }
}
