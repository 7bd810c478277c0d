//! BM25 exactly as tantivy computes it.

use std::cell::RefCell;
use std::sync::Arc;

use tantivy::fieldnorm::FieldNormReader;

use super::{DocLength, Score, ScoringKind, Weight};
use crate::corpus::PageId;
use crate::index::stats::CollectionStats;
use crate::text::{TermCounts, TermId};

/// tantivy's BM25 parameters (`tantivy::query::bm25`).
const K1: Score = 1.2;
const B: Score = 0.75;

/// tantivy's BM25, with the f32 arithmetic of tantivy's own [`Bm25Weight`] so the scores equal
/// a `TermQuery`'s bit for bit (tested against it): the average fieldnorm is
/// `total_tokens as f32 / num_docs as f32` (as `Bm25Weight::for_terms`), the document length is
/// quantised through `FieldNormReader::fieldnorm_to_id` as tantivy stores it.
///
/// Written out rather than calling [`Bm25Weight`] because tantivy rebuilds its 256-entry table
/// of length norms (256 divisions) for every term of every query, although the table depends
/// on the average length alone: here every weight of one collection state shares one table.
///
/// [`Bm25Weight`]: tantivy::query::Bm25Weight
pub struct Bm25;

struct Bm25TermsWeight {
    /// Per query term: `idf · (1 + k1)`.
    terms: Vec<(TermId, Score)>,
    norms: Arc<[Score; 256]>,
}

/// Robertson–Spärck Jones IDF as tantivy's BM25 computes it: `ln(1 + (N − n + 0.5) / (n + 0.5))`.
fn idf(doc_freq: u64, num_docs: u64) -> Score {
    let x = ((num_docs - doc_freq) as Score + 0.5) / (doc_freq as Score + 0.5);
    (1.0 + x).ln()
}

/// BM25's length normalisation `k1 · (1 − b + b · |d| / avgdl)` for every fieldnorm id
/// (tantivy's `compute_tf_cache`).
fn length_norms(average_fieldnorm: Score) -> [Score; 256] {
    std::array::from_fn(|id| {
        let fieldnorm = FieldNormReader::id_to_fieldnorm(id as u8);
        K1 * (1.0 - B + B * fieldnorm as Score / average_fieldnorm)
    })
}

thread_local! {
    /// The last table built on this thread: consecutive weights share the collection state.
    static NORMS: RefCell<Option<(u32, Arc<[Score; 256]>)>> = const { RefCell::new(None) };
}

/// [`length_norms`], reusing this thread's last table when the average is the same.
fn shared_length_norms(average_fieldnorm: Score) -> Arc<[Score; 256]> {
    NORMS.with(|cell| {
        let mut last = cell.borrow_mut();
        match &*last {
            Some((bits, norms)) if *bits == average_fieldnorm.to_bits() => Arc::clone(norms),
            _ => {
                let norms = Arc::new(length_norms(average_fieldnorm));
                *last = Some((average_fieldnorm.to_bits(), Arc::clone(&norms)));
                norms
            }
        }
    })
}

impl Bm25TermsWeight {
    /// One term's score: tantivy's `Bm25Weight::score` (`weight · tf / (tf + norm)`).
    #[inline]
    fn term_score(&self, weight: Score, fieldnorm_id: u8, tf: u32) -> Score {
        let tf = tf as Score;
        weight * (tf / (tf + self.norms[fieldnorm_id as usize]))
    }
}

impl super::Scorer for Bm25 {
    fn kind(&self) -> ScoringKind {
        ScoringKind::Bm25
    }

    fn weight<'a>(&self, stats: &'a dyn CollectionStats, terms: &[TermId]) -> Box<dyn Weight + 'a> {
        let num_docs = stats.num_docs();
        let average_fieldnorm = stats.total_tokens() as Score / num_docs as Score;
        let terms = terms
            .iter()
            .map(|&t| {
                let df = stats.doc_freq(t).min(num_docs);
                (t, idf(df, num_docs) * (1.0 + K1))
            })
            .collect();
        Box::new(Bm25TermsWeight {
            terms,
            norms: shared_length_norms(average_fieldnorm),
        })
    }
}

impl Weight for Bm25TermsWeight {
    fn score(&self, _page: PageId, doc: &TermCounts) -> Score {
        if self.terms.is_empty() {
            return 0.0;
        }
        let fieldnorm_id = FieldNormReader::fieldnorm_to_id(doc.length);
        let mut sum: Score = 0.0;
        for &(t, w) in &self.terms {
            let tf = doc.tf(t);
            if tf == 0 {
                return 0.0;
            }
            sum += self.term_score(w, fieldnorm_id, tf);
        }
        sum
    }

    fn score_tfs(&self, _page: PageId, tfs: &[u32], length: DocLength) -> Score {
        debug_assert_eq!(tfs.len(), self.terms.len());
        if self.terms.is_empty() {
            return 0.0;
        }
        let mut sum: Score = 0.0;
        for (&(_, w), &tf) in self.terms.iter().zip(tfs) {
            if tf == 0 {
                return 0.0;
            }
            sum += self.term_score(w, length.fieldnorm_id, tf);
        }
        sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::Scorer;
    use tantivy::query::Bm25Weight;

    /// Collection statistics given outright.
    struct Stats {
        docs: u64,
        tokens: u64,
        df: u64,
    }

    impl CollectionStats for Stats {
        fn num_docs(&self) -> u64 {
            self.docs
        }
        fn total_tokens(&self) -> u64 {
            self.tokens
        }
        fn doc_freq(&self, _term: TermId) -> u64 {
            self.df
        }
        fn inlinks(&self, _page: PageId) -> u32 {
            0
        }
    }

    /// Every score equals tantivy's `Bm25Weight` bit for bit, over collection sizes, average
    /// lengths, document frequencies, lengths and term frequencies, one- and two-term queries,
    /// with the shared table reused across states and rebuilt when the average changes.
    #[test]
    fn scores_equal_tantivys_bm25_weight_bit_for_bit() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(12);
        for _ in 0..300 {
            let docs = rng.gen_range(1..200_000u64);
            let tokens = docs * rng.gen_range(1..3_000u64) + rng.gen_range(0..docs);
            let df = rng.gen_range(0..=docs);
            let stats = Stats { docs, tokens, df };
            let average = tokens as Score / docs as Score;
            let theirs = Bm25Weight::for_one_term_without_explain(df, docs, average);
            let weight = Bm25.weight(&stats, &[7, 9]);
            let one = Bm25.weight(&stats, &[7]);
            for _ in 0..40 {
                let length = rng.gen_range(0..100_000u32);
                let id = FieldNormReader::fieldnorm_to_id(length);
                let (a, b) = (rng.gen_range(1..500u32), rng.gen_range(1..50u32));
                let want_one = theirs.score(id, a);
                let want_two = theirs.score(id, a) + theirs.score(id, b);
                let doc = TermCounts {
                    counts: vec![(7, a), (9, b)],
                    length,
                };
                let len = DocLength::new(length);
                assert_eq!(one.score(0, &doc).to_bits(), want_one.to_bits());
                assert_eq!(one.score_tfs(0, &[a], len).to_bits(), want_one.to_bits());
                assert_eq!(weight.score(0, &doc).to_bits(), want_two.to_bits());
                assert_eq!(
                    weight.score_tfs(0, &[a, b], len).to_bits(),
                    want_two.to_bits()
                );
                assert_eq!(weight.score_tfs(0, &[a, 0], len), 0.0);
            }
        }
    }
}
