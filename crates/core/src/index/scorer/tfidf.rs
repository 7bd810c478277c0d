//! Lucene's classic TF-IDF (`DefaultSimilarity`), the variant paper 003 used.

use super::{DocLength, Score, ScoringKind, Weight};
use crate::corpus::PageId;
use crate::index::stats::CollectionStats;
use crate::text::{TermCounts, TermId};

/// Lucene classic TF-IDF: `score(p, q) = Σ_{t∈q} sqrt(tf) · idf(t)² · 1/sqrt(len(p))` with
/// `idf(t) = 1 + ln(N / (df + 1))`.
///
/// Choices, documented because Lucene's full formula has more factors: `queryNorm` is left out
/// (it rescales every score of one query by the same factor, which would make scores of
/// different queries incomparable in the quality metric's `Σ_q f_q · S`), `coord` is 1 (queries
/// are conjunctive, every term matches), there are no boosts, and the length norm is exact
/// rather than Lucene's one-byte encoding. Computed in f64, returned as f32.
pub struct TfIdf;

struct TfIdfWeight {
    /// `(term, idf²)`.
    terms: Vec<(TermId, f64)>,
}

/// Lucene classic idf: `1 + ln(N / (df + 1))`.
pub(crate) fn lucene_idf(doc_freq: u64, num_docs: u64) -> f64 {
    1.0 + (num_docs as f64 / (doc_freq as f64 + 1.0)).ln()
}

impl super::Scorer for TfIdf {
    fn kind(&self) -> ScoringKind {
        ScoringKind::TfIdf
    }

    fn weight<'a>(&self, stats: &'a dyn CollectionStats, terms: &[TermId]) -> Box<dyn Weight + 'a> {
        let n = stats.num_docs();
        let terms = terms
            .iter()
            .map(|&t| {
                let idf = lucene_idf(stats.doc_freq(t), n);
                (t, idf * idf)
            })
            .collect();
        Box::new(TfIdfWeight { terms })
    }
}

impl Weight for TfIdfWeight {
    fn score(&self, _page: PageId, doc: &TermCounts) -> Score {
        if self.terms.is_empty() || doc.length == 0 {
            return 0.0;
        }
        let norm = 1.0 / (doc.length as f64).sqrt();
        let mut sum = 0.0f64;
        for &(t, idf2) in &self.terms {
            let tf = doc.tf(t);
            if tf == 0 {
                return 0.0;
            }
            sum += (tf as f64).sqrt() * idf2 * norm;
        }
        sum as Score
    }

    fn score_tfs(&self, _page: PageId, tfs: &[u32], length: DocLength) -> Score {
        debug_assert_eq!(tfs.len(), self.terms.len());
        if self.terms.is_empty() || length.tokens == 0 {
            return 0.0;
        }
        let norm = 1.0 / (length.tokens as f64).sqrt();
        let mut sum = 0.0f64;
        for (&(_, idf2), &tf) in self.terms.iter().zip(tfs) {
            if tf == 0 {
                return 0.0;
            }
            sum += (tf as f64).sqrt() * idf2 * norm;
        }
        sum as Score
    }
}
