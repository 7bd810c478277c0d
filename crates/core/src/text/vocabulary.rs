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
    pub(crate) fn intern_owned(&mut self, term: String) -> TermId {
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

    /// The ids of a conjunctive query's `terms`, or `None` when one was never interned (then no
    /// copy can match all of them).
    pub fn ids_of(&self, terms: &[String]) -> Option<Vec<TermId>> {
        terms.iter().map(|t| self.get(t)).collect()
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

/// A vocabulary that grows past a frozen one: the ids of `base` stay as they are and new terms
/// get the ids after them. A simulation shares one frozen [`Vocabulary`] among every run
/// (`Arc`, no lock on the hot path); a live crawl, which meets words no snapshot held, holds
/// its own `GrowingVocabulary` over the same base, so ids already stored in indexes and
/// workloads keep their meaning.
#[derive(Debug, Clone, Default)]
pub struct GrowingVocabulary {
    base: Arc<Vocabulary>,
    added: Vocabulary,
}

impl GrowingVocabulary {
    pub fn new(base: Arc<Vocabulary>) -> Self {
        GrowingVocabulary {
            base,
            added: Vocabulary::new(),
        }
    }

    /// The id of `term`, assigning the next free id (after every base id) if it is new.
    pub fn intern(&mut self, term: &str) -> TermId {
        if let Some(id) = self.base.get(term) {
            return id;
        }
        self.base.len() as TermId + self.added.intern(term)
    }

    pub fn get(&self, term: &str) -> Option<TermId> {
        self.base.get(term).or_else(|| {
            self.added
                .get(term)
                .map(|id| self.base.len() as TermId + id)
        })
    }

    /// The term text of `id`. Panics on an id this vocabulary never issued.
    pub fn term(&self, id: TermId) -> &str {
        let base = self.base.len() as TermId;
        if id < base {
            self.base.term(id)
        } else {
            self.added.term(id - base)
        }
    }

    pub fn len(&self) -> usize {
        self.base.len() + self.added.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Terms added beyond the base.
    pub fn added(&self) -> usize {
        self.added.len()
    }
}

/// The analyzed content of one document: each distinct term with its frequency, sorted by
/// term id, and the total number of tokens (the document length tantivy records as fieldnorm).
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TermCounts {
    /// `(term, frequency)` pairs sorted by term id, each term once.
    pub counts: Vec<(TermId, u32)>,
    /// Number of tokens the analyzer produced (with repetitions).
    pub(crate) length: u32,
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

    pub(crate) fn contains(&self, term: TermId) -> bool {
        self.tf(term) > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_growing_vocabulary_keeps_base_ids_and_appends_new_ones() {
        let mut base = Vocabulary::new();
        let emacs = base.intern("emac");
        let lisp = base.intern("lisp");
        let mut g = GrowingVocabulary::new(Arc::new(base));
        assert_eq!(g.intern("lisp"), lisp);
        let vim = g.intern("vim");
        assert_eq!(vim, 2);
        assert_eq!(g.intern("vim"), vim);
        assert_eq!(g.get("emac"), Some(emacs));
        assert_eq!(g.term(vim), "vim");
        assert_eq!(g.term(lisp), "lisp");
        assert_eq!((g.len(), g.added()), (3, 1));
        assert_eq!(g.get("org"), None);
    }

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
