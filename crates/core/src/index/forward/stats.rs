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

impl ForwardIndex {
    /// Every term some present copy contains, with its document frequency, ascending by term:
    /// what a shard tells the others so that all score with the union's statistics.
    pub fn doc_freqs(&self) -> impl Iterator<Item = (TermId, u64)> + '_ {
        self.postings
            .iter()
            .enumerate()
            .filter(|(_, list)| !list.pages().is_empty())
            .map(|(term, list)| (term as TermId, list.pages().len() as u64))
    }

    /// Every page some present copy links to, with how many copies do, ascending by page.
    pub fn inlink_counts(&self) -> impl Iterator<Item = (PageId, u32)> + '_ {
        self.inlinks
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(page, &n)| (page as PageId, n))
    }
}
