//! The live collection statistics the scorers read ([`CollectionStats`]).

use crate::corpus::PageId;
use crate::index::stats::CollectionStats;
use crate::text::TermId;

use super::ForwardIndex;

impl CollectionStats for ForwardIndex {
    fn num_docs(&self) -> u64 {
        self.num_docs
    }
    fn total_tokens(&self) -> u64 {
        self.total_tokens
    }
    fn doc_freq(&self, term: TermId) -> u64 {
        self.pages_with(term).len() as u64
    }
    fn inlinks(&self, page: PageId) -> u32 {
        self.inlinks.get(page as usize).copied().unwrap_or(0)
    }
}
