//! Term ids and per-document term counts.
//!
//! Forward indexes, workload terms and score computations work on small integer term ids
//! rather than strings. Ids are assigned in a deterministic order (the order terms are first
//! interned by a sequential pass), so two runs over the same input give the same ids.

use std::sync::Arc;

use rustc_hash::FxHashMap;

/// Dense id of a term in a [`Vocabulary`].
pub type TermId = u32;

/// Interns analyzed terms (already stemmed, lower-cased) into dense ids.
///
/// Each term's text is stored once, shared by the id → text list and the text → id map. The
/// map hashes with FxHash: interning runs sequentially over every distinct term of every
/// version (millions on a real site), and the keys come from our own analyzer.
#[derive(Debug, Default, Clone)]
pub struct Vocabulary {
    ids: FxHashMap<Arc<str>, TermId>,
    terms: Vec<Arc<str>>,
}

impl Vocabulary {
    pub fn new() -> Self {
        Self::default()
    }

    /// The id of `term`, assigning the next free id if it is new.
    pub fn intern(&mut self, term: &str) -> TermId {
        if let Some(&id) = self.ids.get(term) {
            return id;
        }
        self.insert_new(Arc::from(term))
    }

    /// [`Vocabulary::intern`] for a term the caller owns (no copy unless it is new).
    pub fn intern_owned(&mut self, term: String) -> TermId {
        if let Some(&id) = self.ids.get(term.as_str()) {
            return id;
        }
        self.insert_new(Arc::from(term))
    }

    fn insert_new(&mut self, term: Arc<str>) -> TermId {
        let id = self.terms.len() as TermId;
        self.terms.push(Arc::clone(&term));
        self.ids.insert(term, id);
        id
    }

    /// The id of `term` if it was ever interned.
    pub fn get(&self, term: &str) -> Option<TermId> {
        self.ids.get(term).copied()
    }

    /// The term text of `id`. Panics on an id this vocabulary never issued.
    pub fn term(&self, id: TermId) -> &str {
        &self.terms[id as usize]
    }

    pub fn len(&self) -> usize {
        self.terms.len()
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }
}

/// The analyzed content of one document: each distinct term with its frequency, sorted by
/// term id, and the total number of tokens (the document length tantivy records as fieldnorm).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct TermCounts {
    /// `(term, frequency)` pairs sorted by term id, each term once.
    pub counts: Vec<(TermId, u32)>,
    /// Number of tokens the analyzer produced (with repetitions).
    pub length: u32,
}

impl TermCounts {
    /// Counts terms from analyzed tokens, interning them into `vocabulary`.
    pub fn from_terms<'a>(
        vocabulary: &mut Vocabulary,
        terms: impl IntoIterator<Item = &'a str>,
    ) -> Self {
        let mut map: FxHashMap<TermId, u32> = FxHashMap::default();
        let mut length = 0u32;
        for t in terms {
            length += 1;
            *map.entry(vocabulary.intern(t)).or_insert(0) += 1;
        }
        let mut counts: Vec<(TermId, u32)> = map.into_iter().collect();
        counts.sort_unstable_by_key(|&(t, _)| t);
        TermCounts { counts, length }
    }

    /// Frequency of `term` in this document (0 when absent), by binary search.
    pub fn tf(&self, term: TermId) -> u32 {
        match self.counts.binary_search_by_key(&term, |&(t, _)| t) {
            Ok(i) => self.counts[i].1,
            Err(_) => 0,
        }
    }

    pub fn contains(&self, term: TermId) -> bool {
        self.tf(term) > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_sorted_and_lengths_include_repeats() {
        let mut v = Vocabulary::new();
        let c = TermCounts::from_terms(&mut v, ["b", "a", "b", "c", "b"]);
        assert_eq!(c.length, 5);
        assert_eq!(c.counts, vec![(0, 3), (1, 1), (2, 1)]);
        assert_eq!(c.tf(v.get("b").unwrap()), 3);
        assert_eq!(c.tf(99), 0);
        assert_eq!(v.term(1), "a");
    }
}
