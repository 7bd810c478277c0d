//! The forward index: page → analyzed copy, with exact live collection statistics.
//!
//! The repository keeps one of these beside tantivy, and [`super::live::LiveScores`] keeps one
//! for the live Web. It holds, for every page present, its [`TermCounts`] (term ids, frequencies,
//! token count) and out-links, and maintains incrementally:
//!
//! * the live collection statistics BM25 and TF-IDF need — number of documents, total tokens of
//!   the `body` field, document frequency per term id — counting present documents only (tantivy
//!   counts deleted-but-unmerged documents too; see [`super::stats`]);
//! * an inverted map term id → sorted page ids, so the exact metrics can enumerate every page
//!   containing a term (a full result list) without asking tantivy;
//! * in-link counts: for each page, how many present pages link to it.
//!
//! Every mutation goes through [`ForwardIndex::put`] and [`ForwardIndex::remove`], which keep the
//! three in step.

use std::cmp::Ordering;

use crate::corpus::{PageId, PageVersion};
use crate::text::{TermCounts, TermId};

use super::scorer::{Score, Scorer};
use super::stats::CollectionStats;

/// A page in a ranked result list.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranked {
    pub page: PageId,
    pub score: Score,
}

/// The total order of every result list: score descending, then URL hash ascending, then page
/// id ascending (page ids follow URL byte order). Independent of segments, threads and merges.
pub fn rank_order(a: (Score, u64, PageId), b: (Score, u64, PageId)) -> Ordering {
    b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2))
}

/// A page's copy as the forward index sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForwardDoc {
    pub terms: TermCounts,
    /// Out-links (page ids), sorted, deduplicated.
    pub links: Vec<PageId>,
    /// [`url_hash`](super::schema::url_hash) of the page's URL: the ranking tie-breaker.
    pub url_hash: u64,
}

impl ForwardDoc {
    /// The forward copy of a captured version of the page at `url`.
    pub fn from_version(url: &str, version: &PageVersion) -> Self {
        ForwardDoc {
            terms: version.terms.clone(),
            links: version.links.clone(),
            url_hash: super::schema::url_hash(url),
        }
    }
}

/// Page → copy, with live statistics, postings and in-link counts. See the module docs.
#[derive(Debug, Clone, Default)]
pub struct ForwardIndex {
    docs: Vec<Option<ForwardDoc>>,
    num_docs: u64,
    total_tokens: u64,
    /// Indexed by term id; `postings[t]` sorted ascending. `df(t) = postings[t].len()`.
    postings: Vec<Vec<PageId>>,
    /// Indexed by page id: number of present pages whose copy links to it.
    inlinks: Vec<u32>,
}

impl ForwardIndex {
    pub fn new() -> Self {
        Self::default()
    }

    /// The copy of `page`, if present.
    pub fn doc(&self, page: PageId) -> Option<&ForwardDoc> {
        self.docs.get(page as usize).and_then(Option::as_ref)
    }

    pub fn contains(&self, page: PageId) -> bool {
        self.doc(page).is_some()
    }

    /// Present pages in ascending id order.
    pub fn pages(&self) -> impl Iterator<Item = PageId> + '_ {
        self.docs
            .iter()
            .enumerate()
            .filter(|(_, d)| d.is_some())
            .map(|(i, _)| i as PageId)
    }

    /// Pages whose copy contains `term`, ascending.
    pub fn pages_with(&self, term: TermId) -> &[PageId] {
        self.postings
            .get(term as usize)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// Pages containing every term of `terms` (a conjunctive match set), ascending. Empty for
    /// an empty query.
    pub fn matching(&self, terms: &[TermId]) -> Vec<PageId> {
        let mut lists: Vec<&[PageId]> = terms.iter().map(|&t| self.pages_with(t)).collect();
        lists.sort_by_key(|l| l.len());
        let Some((first, rest)) = lists.split_first() else {
            return Vec::new();
        };
        first
            .iter()
            .copied()
            .filter(|p| rest.iter().all(|l| l.binary_search(p).is_ok()))
            .collect()
    }

    /// The full result list `A(q)` of the conjunctive query `terms` under `scorer` with these
    /// statistics: every page containing all terms, in [`rank_order`].
    pub fn ranked(&self, scorer: &dyn Scorer, terms: &[TermId]) -> Vec<Ranked> {
        let weight = scorer.weight(self, terms);
        let mut hits: Vec<(Score, u64, PageId)> = self
            .matching(terms)
            .into_iter()
            .map(|p| {
                let d = self.doc(p).expect("postings list present pages only");
                (weight.score(p, &d.terms), d.url_hash, p)
            })
            .collect();
        hits.sort_by(|a, b| rank_order(*a, *b));
        hits.into_iter()
            .map(|(score, _, page)| Ranked { page, score })
            .collect()
    }

    /// The score of the present copy of `page` for `terms` (0 when absent or not matching).
    pub fn score(&self, scorer: &dyn Scorer, page: PageId, terms: &[TermId]) -> Score {
        match self.doc(page) {
            Some(d) => scorer.weight(self, terms).score(page, &d.terms),
            None => 0.0,
        }
    }

    /// Inserts or replaces the copy of `page`.
    pub fn put(&mut self, page: PageId, doc: ForwardDoc) {
        self.remove(page);
        let i = page as usize;
        if self.docs.len() <= i {
            self.docs.resize(i + 1, None);
        }
        self.num_docs += 1;
        self.total_tokens += u64::from(doc.terms.length);
        for &(t, _) in &doc.terms.counts {
            let t = t as usize;
            if self.postings.len() <= t {
                self.postings.resize_with(t + 1, Vec::new);
            }
            let list = &mut self.postings[t];
            if let Err(at) = list.binary_search(&page) {
                list.insert(at, page);
            }
        }
        for &target in &doc.links {
            let target = target as usize;
            if self.inlinks.len() <= target {
                self.inlinks.resize(target + 1, 0);
            }
            self.inlinks[target] += 1;
        }
        self.docs[i] = Some(doc);
    }

    /// Removes the copy of `page`, returning it (no-op when absent).
    pub fn remove(&mut self, page: PageId) -> Option<ForwardDoc> {
        let doc = self.docs.get_mut(page as usize)?.take()?;
        self.num_docs -= 1;
        self.total_tokens -= u64::from(doc.terms.length);
        for &(t, _) in &doc.terms.counts {
            let list = &mut self.postings[t as usize];
            if let Ok(at) = list.binary_search(&page) {
                list.remove(at);
            }
        }
        for &target in &doc.links {
            self.inlinks[target as usize] -= 1;
        }
        Some(doc)
    }

    /// Approximate heap bytes held (copies, postings, in-link counts).
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
        let postings: usize = self
            .postings
            .iter()
            .map(|l| l.capacity() * size_of::<PageId>() + size_of::<Vec<PageId>>())
            .sum();
        docs + self.docs.capacity() * size_of::<Option<ForwardDoc>>()
            + postings
            + self.inlinks.capacity() * size_of::<u32>()
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(counts: &[(TermId, u32)], links: &[PageId]) -> ForwardDoc {
        ForwardDoc {
            terms: TermCounts {
                counts: counts.to_vec(),
                length: counts.iter().map(|c| c.1).sum(),
            },
            links: links.to_vec(),
            url_hash: 0,
        }
    }

    #[test]
    fn statistics_follow_puts_replacements_and_removals() {
        let mut f = ForwardIndex::new();
        f.put(3, doc(&[(0, 2), (1, 1)], &[1]));
        f.put(1, doc(&[(1, 4)], &[3]));
        assert_eq!((f.num_docs(), f.total_tokens()), (2, 7));
        assert_eq!(f.pages_with(1), &[1, 3]);
        assert_eq!(f.doc_freq(0), 1);
        assert_eq!((f.inlinks(1), f.inlinks(3)), (1, 1));
        assert_eq!(f.matching(&[0, 1]), vec![3]);
        // Replacement drops the old postings and links.
        f.put(3, doc(&[(2, 5)], &[]));
        assert_eq!((f.num_docs(), f.total_tokens()), (2, 9));
        assert_eq!(f.pages_with(0), &[] as &[PageId]);
        assert_eq!(f.pages_with(1), &[1]);
        assert_eq!(f.inlinks(1), 0);
        assert!(f.remove(1).is_some());
        assert!(f.remove(1).is_none());
        assert_eq!((f.num_docs(), f.total_tokens(), f.inlinks(3)), (1, 5, 0));
        assert_eq!(f.pages().collect::<Vec<_>>(), vec![3]);
        assert!(f.memory_bytes() > 0);
    }
}
