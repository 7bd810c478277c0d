//! In-link count, paper 003's second scoring function.

use super::{contains_all, DocLength, Score, ScoringKind, Weight};
use crate::corpus::PageId;
use crate::index::stats::CollectionStats;
use crate::text::{TermCounts, TermId};

/// `score(p, q) = 1 + (number of present pages whose copy links to p)` when p's copy contains
/// every query term, else 0.
///
/// Paper 003 took in-link counts from Google; here they come from the out-links of the copies
/// in the same collection (the repository's copies for the repository, live copies for the live
/// Web). The `+ 1` keeps every matching page's score positive, so "matches" and "scores > 0"
/// stay the same thing for all scorers.
pub struct InLinks;

struct InLinksWeight<'a> {
    stats: &'a dyn CollectionStats,
    terms: Vec<TermId>,
}

impl super::Scorer for InLinks {
    fn kind(&self) -> ScoringKind {
        ScoringKind::InLinks
    }

    fn weight<'a>(&self, stats: &'a dyn CollectionStats, terms: &[TermId]) -> Box<dyn Weight + 'a> {
        Box::new(InLinksWeight {
            stats,
            terms: terms.to_vec(),
        })
    }

    /// Every term's score is the page's in-link score: the query's is the same, if it matches.
    fn combine(&self, term_scores: &[Score]) -> Score {
        match term_scores.first() {
            Some(&first) if term_scores.iter().all(|&s| s > 0.0) => first,
            _ => 0.0,
        }
    }
}

impl Weight for InLinksWeight<'_> {
    fn score(&self, page: PageId, doc: &TermCounts) -> Score {
        if !contains_all(doc, &self.terms) {
            return 0.0;
        }
        1.0 + self.stats.inlinks(page) as Score
    }

    fn score_tfs(&self, page: PageId, tfs: &[u32], _length: DocLength) -> Score {
        debug_assert_eq!(tfs.len(), self.terms.len());
        if tfs.is_empty() || tfs.contains(&0) {
            return 0.0;
        }
        1.0 + self.stats.inlinks(page) as Score
    }
}
