//! Scoring functions behind one seam, in tantivy's Query → Weight → Scorer style.
//!
//! A [`Scorer`] is compiled against frozen [`CollectionStats`] and a query's terms into a
//! [`Weight`]; the weight then scores any copy of any page. The same weight serves queries
//! ([`Repository::search`](super::Repository::search)), feeds the measurement hook (`s1` with
//! the statistics before a batch, `s2` with those after) and scores live copies
//! (the judge's `LiveScores`) — one scoring code path for everything that compares
//! scores.
//!
//! Every scorer gives a page **0 unless its copy contains every query term** (paper 003 §5.1;
//! see ARCHITECTURE.md, § The user-centric metric and its estimate);
//! matching pages get a positive score. Multi-term queries are conjunctive and score the sum of
//! their terms' scores, in the order the terms are given (as tantivy's `BooleanQuery` of `Must`
//! `TermQuery`s sums them).

mod bm25;
mod inlinks;
pub mod tfidf;

pub use bm25::Bm25;
pub use inlinks::InLinks;
pub use tfidf::TfIdf;

use crate::corpus::PageId;
use crate::text::{TermCounts, TermId};

use super::stats::CollectionStats;

pub type Score = f32;

/// A scoring function. Stateless: everything it reads comes from the statistics it is given.
pub trait Scorer: Send + Sync {
    fn kind(&self) -> ScoringKind;

    /// Compiles `terms` (distinct) against `stats`. The weight borrows `stats`, so they cannot
    /// change while it is alive: its scores are those of one collection state.
    fn weight<'a>(&self, stats: &'a dyn CollectionStats, terms: &[TermId]) -> Box<dyn Weight + 'a>;

    /// A copy's score for a conjunctive query from its single-term scores for the query's
    /// terms (in the order the query lists them): 0 unless every one is positive. BM25 and
    /// TF-IDF are sums over the query terms (the default); in-link scoring overrides it. Lets
    /// the ΔQ estimate turn the hook's per-term shifts into per-query ones.
    fn combine(&self, term_scores: &[Score]) -> Score {
        if term_scores.is_empty() || term_scores.iter().any(|&s| s <= 0.0) {
            0.0
        } else {
            term_scores.iter().sum()
        }
    }
}

/// A query compiled against frozen statistics.
pub trait Weight {
    /// The score of `page` whose copy has `terms`: 0 unless it contains every query term (and 0
    /// for an empty query), positive otherwise.
    fn score(&self, page: PageId, terms: &TermCounts) -> Score;

    /// The same score from what a posting list already carries: `tfs[i]` is the copy's
    /// frequency of the i-th query term (in the order the terms were compiled), `length` its
    /// token count. Equal to [`score`](Self::score) bit for bit (same arithmetic, same order);
    /// the forward index uses it to score whole result lists without searching each page's
    /// [`TermCounts`] for every term (tested in `forward::tests`).
    fn score_tfs(&self, page: PageId, tfs: &[u32], length: DocLength) -> Score;

    /// [`score_tfs`](Self::score_tfs) of a whole result list, into `scores` (cleared first):
    /// `pages[i]` has the frequencies `tfs[i·width..(i + 1)·width]` and the length
    /// `lengths[pages[i]]`. The same scores bit for bit, in one virtual call per list rather
    /// than one per page (this default is compiled per scorer, so its calls are direct).
    fn score_list(
        &self,
        pages: &[PageId],
        tfs: &[u32],
        width: usize,
        lengths: &[DocLength],
        scores: &mut Vec<Score>,
    ) {
        debug_assert_eq!(tfs.len(), pages.len() * width);
        scores.clear();
        scores.extend(
            pages
                .iter()
                .zip(tfs.chunks_exact(width.max(1)))
                .map(|(&p, page_tfs)| self.score_tfs(p, page_tfs, lengths[p as usize])),
        );
    }
}

/// A copy's length as the scorers read it: the exact token count (TF-IDF) and tantivy's
/// one-byte fieldnorm id of it (BM25), computed once per copy rather than once per scored
/// posting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DocLength {
    pub(crate) tokens: u32,
    pub(crate) fieldnorm_id: u8,
}

impl DocLength {
    pub(crate) fn new(tokens: u32) -> Self {
        DocLength {
            tokens,
            fieldnorm_id: tantivy::fieldnorm::FieldNormReader::fieldnorm_to_id(tokens),
        }
    }
}

/// The scoring functions offered on the command line (`--scoring`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum ScoringKind {
    /// tantivy's BM25 (k1 = 1.2, b = 0.75), equal to tantivy's own `Bm25Weight` bit for bit.
    Bm25,
    /// Lucene's classic TF-IDF (the variant paper 003 used).
    #[value(name = "tfidf")]
    TfIdf,
    /// In-link count within the repository (paper 003's second scoring function).
    #[value(name = "inlinks")]
    InLinks,
}

impl ScoringKind {
    pub fn name(self) -> &'static str {
        match self {
            ScoringKind::Bm25 => "bm25",
            ScoringKind::TfIdf => "tfidf",
            ScoringKind::InLinks => "inlinks",
        }
    }

    pub fn scorer(self) -> Box<dyn Scorer> {
        match self {
            ScoringKind::Bm25 => Box::new(Bm25),
            ScoringKind::TfIdf => Box::new(TfIdf),
            ScoringKind::InLinks => Box::new(InLinks),
        }
    }
}

impl std::fmt::Display for ScoringKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A scoring function name that is not one of [`ScoringKind`]'s.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown scoring function `{name}` (expected bm25, tfidf or inlinks)")]
pub struct UnknownScoring {
    /// The name given.
    pub(crate) name: String,
}

impl std::str::FromStr for ScoringKind {
    type Err = UnknownScoring;
    fn from_str(s: &str) -> Result<Self, UnknownScoring> {
        match s {
            "bm25" => Ok(ScoringKind::Bm25),
            "tfidf" => Ok(ScoringKind::TfIdf),
            "inlinks" => Ok(ScoringKind::InLinks),
            other => Err(UnknownScoring {
                name: other.to_string(),
            }),
        }
    }
}

/// Whether `doc` contains every term of `terms` (false for an empty query).
pub(crate) fn contains_all(doc: &TermCounts, terms: &[TermId]) -> bool {
    !terms.is_empty() && terms.iter().all(|&t| doc.contains(t))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::forward::{ForwardDoc, ForwardIndex};

    fn tc(counts: &[(TermId, u32)], length: u32) -> TermCounts {
        TermCounts {
            counts: counts.to_vec(),
            length,
        }
    }

    fn sample() -> ForwardIndex {
        let mut f = ForwardIndex::new();
        f.put(
            0,
            ForwardDoc {
                terms: std::sync::Arc::new(tc(&[(0, 3), (1, 1)], 10)),
                links: vec![1, 2],
                url_hash: 0,
                content_hash: 0,
            },
        );
        f.put(
            1,
            ForwardDoc {
                terms: std::sync::Arc::new(tc(&[(0, 1)], 4)),
                links: vec![2],
                url_hash: 0,
                content_hash: 0,
            },
        );
        f.put(
            2,
            ForwardDoc {
                terms: std::sync::Arc::new(tc(&[(1, 2), (2, 1)], 7)),
                links: vec![],
                url_hash: 0,
                content_hash: 0,
            },
        );
        f
    }

    #[test]
    fn every_scorer_is_zero_unless_all_terms_match_and_positive_otherwise() {
        let f = sample();
        for kind in [ScoringKind::Bm25, ScoringKind::TfIdf, ScoringKind::InLinks] {
            let scorer = kind.scorer();
            assert_eq!(scorer.kind(), kind);
            let w = scorer.weight(&f, &[0, 1]);
            assert!(w.score(0, &f.doc(0).unwrap().terms) > 0.0, "{kind}");
            assert_eq!(w.score(1, &f.doc(1).unwrap().terms), 0.0, "{kind}");
            assert_eq!(w.score(2, &f.doc(2).unwrap().terms), 0.0, "{kind}");
            assert_eq!(
                scorer.weight(&f, &[]).score(0, &f.doc(0).unwrap().terms),
                0.0
            );
            assert_eq!(kind.name().parse::<ScoringKind>(), Ok(kind));
        }
        assert!("pagerank".parse::<ScoringKind>().is_err());
    }

    #[test]
    fn tfidf_is_lucene_classic() {
        let f = sample();
        let w = TfIdf.weight(&f, &[0]);
        // N = 3, df = 2: idf = 1 + ln(3/3) = 1; page 0: sqrt(3) * 1 * 1/sqrt(10).
        let expected = (3f64.sqrt() * (1.0 / 10f64.sqrt())) as f32;
        assert_eq!(w.score(0, &f.doc(0).unwrap().terms), expected);
    }

    #[test]
    fn inlinks_count_present_linking_pages_plus_one() {
        let f = sample();
        let w = InLinks.weight(&f, &[1]);
        assert_eq!(w.score(0, &f.doc(0).unwrap().terms), 1.0);
        assert_eq!(w.score(2, &f.doc(2).unwrap().terms), 3.0);
    }

    #[test]
    fn bm25_sums_tantivy_term_weights() {
        let f = sample();
        let avg = 21f32 / 3f32;
        let doc = &f.doc(0).unwrap().terms;
        let id = tantivy::fieldnorm::FieldNormReader::fieldnorm_to_id(10);
        let t0 = tantivy::query::Bm25Weight::for_one_term(2, 3, avg).score(id, 3);
        let t1 = tantivy::query::Bm25Weight::for_one_term(2, 3, avg).score(id, 1);
        assert_eq!(Bm25.weight(&f, &[0, 1]).score(0, doc), t0 + t1);
    }
}
