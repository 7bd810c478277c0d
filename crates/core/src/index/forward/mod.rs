//! The forward index: page → analyzed copy, with exact live collection statistics.
//!
//! The repository keeps one of these beside tantivy, and the judge's `LiveScores` keeps one
//! for the live Web. It holds, for every page present, its [`TermCounts`] (term ids, frequencies,
//! token count) and out-links, and maintains incrementally:
//!
//! * the live collection statistics BM25 and TF-IDF need — number of documents, total tokens of
//!   the `body` field, document frequency per term id — counting present documents only (tantivy
//!   counts deleted-but-unmerged documents too; see [`super::stats`]);
//! * an inverted map term id → sorted page ids, each with the page's frequency of the term, so
//!   the exact metrics can enumerate and score every page containing a term (a full result
//!   list) without asking tantivy and without searching each page's [`TermCounts`];
//! * in-link counts: for each page, how many present pages link to it;
//! * dense per-page arrays of the copy's [`DocLength`] and URL hash, so scoring a posting list
//!   touches no [`ForwardDoc`].
//!
//! Every mutation goes through [`ForwardIndex::put`] and [`ForwardIndex::remove`], which keep the
//! three in step; a replacement updates in place the postings of the terms both copies share.
//!
//! One concern per file: [`ForwardDoc`] and the update paths of the copies (`documents.rs`);
//! the posting lists, their intersection and batched edits (`postings.rs`); scored and ranked
//! result lists (`results.rs`) in the total order of `rank_key.rs`; the edit journal behind
//! [`EditMark`] (`journal.rs`); the terms an index keeps postings of (`kept_terms.rs`); the
//! statistics scorers read (`stats.rs`).
//!
//! [`TermCounts`]: crate::text::TermCounts

mod documents;
mod journal;
mod kept_terms;
mod postings;
mod rank_key;
mod results;
mod stats;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use crate::corpus::PageId;
use crate::text::TermId;

use super::posting_list::PostingList;
use super::scorer::DocLength;

pub use documents::ForwardDoc;
pub use journal::EditMark;
pub use rank_key::{rank_key, rank_order, score_of_rank_key, Ranked};

use journal::EditJournal;
use kept_terms::KeptTerms;

/// Page → copy, with live statistics, postings and in-link counts. See the module docs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ForwardIndex {
    /// Shared with clones (copies are never edited in place, only replaced).
    docs: Vec<Option<Arc<ForwardDoc>>>,
    /// Indexed by page id: the present copy's length (default for absent pages).
    lengths: Vec<DocLength>,
    /// Indexed by page id: the present copy's URL hash (0 for absent pages).
    url_hashes: Vec<u64>,
    num_docs: u64,
    total_tokens: u64,
    /// Indexed by term id: the pages containing the term, ascending, each with its frequency
    /// (kept apart from the page ids, so that intersections search a dense `[PageId]`).
    /// `df(t) = postings[t].len()`. Longer lists are shared copy-on-write: every run of a
    /// sweep starts from a clone of one initial index and edits a small part of its lists.
    postings: Vec<PostingList>,
    /// Indexed by page id: number of present pages whose copy links to it.
    inlinks: Vec<u32>,
    /// The pages whose copy changed, in order (see [`EditMark`]).
    journal: EditJournal,
    /// When set, the only terms whose postings are kept ([`Self::keep_postings_of`]).
    kept: Option<Arc<KeptTerms>>,
}

impl ForwardIndex {
    pub fn new() -> Self {
        Self::default()
    }

    /// Approximate heap bytes held (copies, postings, in-link counts), counting posting lists
    /// shared with clones in full.
    pub fn memory_bytes(&self) -> usize {
        use std::mem::size_of;
        let docs: usize = self
            .docs
            .iter()
            .flatten()
            .map(|d| {
                d.terms.counts.capacity() * size_of::<(TermId, u32)>()
                    + d.links.capacity() * size_of::<PageId>()
            })
            .sum();
        let postings: usize = self.postings.capacity() * size_of::<PostingList>()
            + self
                .postings
                .iter()
                .map(PostingList::heap_bytes)
                .sum::<usize>();
        docs + self.docs.capacity() * size_of::<Option<Arc<ForwardDoc>>>()
            + postings
            + self.inlinks.capacity() * size_of::<u32>()
            + self.lengths.capacity() * size_of::<DocLength>()
            + self.url_hashes.capacity() * size_of::<u64>()
    }
}
