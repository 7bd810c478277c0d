//! BM25 exactly as tantivy computes it.

use tantivy::fieldnorm::FieldNormReader;
use tantivy::query::Bm25Weight;

use super::{DocLength, Score, ScoringKind, Weight};
use crate::corpus::PageId;
use crate::index::stats::CollectionStats;
use crate::text::{TermCounts, TermId};

/// tantivy's BM25, through tantivy's own [`Bm25Weight`] so the scores equal a `TermQuery`'s
/// bit for bit: the average fieldnorm is `total_tokens as f32 / num_docs as f32` (the f32
/// arithmetic of `Bm25Weight::for_terms`), the document length is quantised through
/// `FieldNormReader::fieldnorm_to_id` as tantivy stores it.
pub struct Bm25;

struct Bm25TermsWeight {
    terms: Vec<(TermId, Bm25Weight)>,
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
                (
                    t,
                    Bm25Weight::for_one_term_without_explain(df, num_docs, average_fieldnorm),
                )
            })
            .collect();
        Box::new(Bm25TermsWeight { terms })
    }
}

impl Weight for Bm25TermsWeight {
    fn score(&self, _page: PageId, doc: &TermCounts) -> Score {
        if self.terms.is_empty() {
            return 0.0;
        }
        let fieldnorm_id = FieldNormReader::fieldnorm_to_id(doc.length);
        let mut sum: Score = 0.0;
        for (t, w) in &self.terms {
            let tf = doc.tf(*t);
            if tf == 0 {
                return 0.0;
            }
            sum += w.score(fieldnorm_id, tf);
        }
        sum
    }

    fn score_tfs(&self, _page: PageId, tfs: &[u32], length: DocLength) -> Score {
        debug_assert_eq!(tfs.len(), self.terms.len());
        if self.terms.is_empty() {
            return 0.0;
        }
        let mut sum: Score = 0.0;
        for ((_, w), &tf) in self.terms.iter().zip(tfs) {
            if tf == 0 {
                return 0.0;
            }
            sum += w.score(length.fieldnorm_id, tf);
        }
        sum
    }
}
