//! Collection statistics, and the remedy for tantivy's deleted-documents pitfall.
//!
//! **The pitfall** (verified on tantivy 0.27): a `Searcher`'s BM25 statistics — `max_doc` per
//! segment, `doc_freq`, `total_num_tokens` — include documents deleted but not yet merged away.
//! Every refresh is a delete + add, so the statistics drift with the number of refreshes since
//! the last merge, and a page's score changes when an unrelated background merge runs. Even a
//! merge does not make them exact: tantivy's merger *estimates* the merged segment's total
//! token count (scaling by the share of live documents), so default BM25 scores never equal
//! exact live-collection scores (both shown in the module's tests).
//!
//! **The remedy**: the repository's [`ForwardIndex`](super::ForwardIndex) keeps exact statistics of the *present*
//! documents, and every tantivy search runs through
//! `Searcher::search_with_statistics_provider` with [`LiveStatistics`], which answers tantivy's
//! [`Bm25StatisticsProvider`] from them. Scores then depend only on the set of present copies:
//! never on deletes awaiting a merge, on segment layout, or on merges. The measurement hook and
//! the forward scorers read the very same numbers through [`CollectionStats`], so the hook's
//! scores equal the searcher's bit for bit. (Merges are additionally explicit — `NoMergePolicy`
//! plus [`Repository::merge_all`](super::Repository::merge_all) at known points — so segment
//! layout is reproducible too.)

use tantivy::query::Bm25StatisticsProvider;
use tantivy::schema::Field;
use tantivy::Term;

use crate::corpus::PageId;
use crate::text::{TermId, Vocabulary};

/// The statistics a scorer may read, frozen for as long as they are borrowed.
///
/// A scorer's weight borrows its statistics, so the borrow checker guarantees that `s1` of the
/// hook is computed before the batch touches them and `s2` after (Query → Weight style).
pub trait CollectionStats {
    /// Number of present documents.
    fn num_docs(&self) -> u64;
    /// Sum of the token counts of the scored field over present documents.
    fn total_tokens(&self) -> u64;
    /// Number of present documents containing `term`.
    fn doc_freq(&self, term: TermId) -> u64;
    /// Number of present documents linking to `page`.
    fn inlinks(&self, page: PageId) -> u32;
}

/// Answers tantivy's BM25 statistics from live [`CollectionStats`] for the `body` field.
///
/// Term texts are mapped to term ids through the corpus vocabulary; a term the vocabulary has
/// never seen occurs in no present copy, so its document frequency is 0.
pub struct LiveStatistics<'a> {
    pub(crate) stats: &'a dyn CollectionStats,
    pub(crate) vocabulary: &'a Vocabulary,
    pub(crate) body: Field,
}

impl Bm25StatisticsProvider for LiveStatistics<'_> {
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        if field != self.body {
            return Err(tantivy::TantivyError::InvalidArgument(format!(
                "only the body field is scored, not field {field:?}"
            )));
        }
        Ok(self.stats.total_tokens())
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        Ok(self.stats.num_docs())
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        Ok(term
            .value()
            .as_str()
            .and_then(|text| self.vocabulary.get(text))
            .map(|id| self.stats.doc_freq(id))
            .unwrap_or(0))
    }
}
