//! The copies: [`ForwardDoc`], and the update paths that replace or remove them while keeping
//! the statistics, postings and in-link counts in step.

use std::sync::Arc;

use crate::corpus::{PageId, PageVersion};
use crate::index::posting_list::PostingList;
use crate::index::scorer::DocLength;
use crate::text::{TermCounts, TermId};

use super::ForwardIndex;

/// A page's copy as the forward index sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForwardDoc {
    /// Shared with the [`PageVersion`] it was made from.
    pub terms: Arc<TermCounts>,
    /// Out-links (page ids), sorted, deduplicated.
    pub(crate) links: Vec<PageId>,
    /// [`url_hash`](crate::index::schema::url_hash) of the page's URL: the ranking tie-breaker.
    pub(crate) url_hash: u64,
    /// The captured body's hash ([`PageVersion::content_hash`]); 0 when unknown (a copy
    /// rebuilt from a reopened index). Lets the update path skip re-downloads that brought
    /// nothing new.
    pub content_hash: u64,
}

impl ForwardDoc {
    /// The forward copy of a captured version of the page at `url`.
    pub fn from_version(url: &str, version: &PageVersion) -> Self {
        ForwardDoc {
            terms: version.terms.clone(),
            links: version.links.clone(),
            url_hash: crate::index::schema::url_hash(url),
            content_hash: version.content_hash,
        }
    }
}

impl ForwardIndex {
    /// The index of `docs` (pages ascending and distinct): equal to [`put`](Self::put)ting
    /// them one by one into an empty index, but every posting list is allocated once at its
    /// final size (document frequencies are counted first), which matters for a full crawl of
    /// tens of millions of postings.
    pub(crate) fn from_docs(docs: Vec<(PageId, ForwardDoc)>) -> Self {
        debug_assert!(docs.windows(2).all(|w| w[0].0 < w[1].0));
        let mut f = ForwardIndex::new();
        let pages = docs.last().map_or(0, |(p, _)| *p as usize + 1);
        let terms = docs
            .iter()
            .filter_map(|(_, d)| d.terms.counts.last().map(|&(t, _)| t as usize + 1))
            .max()
            .unwrap_or(0);
        let targets = docs
            .iter()
            .filter_map(|(_, d)| d.links.last().map(|&l| l as usize + 1))
            .max()
            .unwrap_or(0);
        let mut df = vec![0usize; terms];
        for (_, d) in &docs {
            for &(t, _) in &d.terms.counts {
                df[t as usize] += 1;
            }
        }
        // Only lists of two postings or more are gathered in vectors; most terms of a real
        // crawl occur in one page (see [`PostingList`]).
        let mut postings: Vec<PostingList> = vec![PostingList::Empty; terms];
        let mut gathered: Vec<(Vec<PageId>, Vec<u32>)> = Vec::new();
        let mut gathered_at: Vec<u32> = vec![u32::MAX; terms];
        for (t, &n) in df.iter().enumerate() {
            if n >= 2 {
                gathered_at[t] = gathered.len() as u32;
                gathered.push((Vec::with_capacity(n), Vec::with_capacity(n)));
            }
        }
        f.docs = vec![None; pages];
        f.lengths = vec![DocLength::default(); pages];
        f.url_hashes = vec![0; pages];
        f.inlinks = vec![0; targets];
        for (page, doc) in docs {
            let i = page as usize;
            f.num_docs += 1;
            f.total_tokens += u64::from(doc.terms.length);
            f.lengths[i] = DocLength::new(doc.terms.length);
            f.url_hashes[i] = doc.url_hash;
            for &(t, tf) in &doc.terms.counts {
                match gathered_at[t as usize] {
                    u32::MAX => postings[t as usize] = PostingList::One { page, tf },
                    g => {
                        let (pages, tfs) = &mut gathered[g as usize];
                        pages.push(page);
                        tfs.push(tf);
                    }
                }
            }
            for &target in &doc.links {
                f.inlinks[target as usize] += 1;
            }
            f.docs[i] = Some(Arc::new(doc));
        }
        for (t, g) in gathered_at.into_iter().enumerate() {
            if g != u32::MAX {
                let (pages, tfs) = std::mem::take(&mut gathered[g as usize]);
                postings[t] = PostingList::from_vecs(pages, tfs);
            }
        }
        f.postings = postings;
        f
    }

    /// The copy of `page`, if present.
    pub fn doc(&self, page: PageId) -> Option<&ForwardDoc> {
        self.docs.get(page as usize).and_then(Option::as_deref)
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

    /// Inserts or replaces the copy of `page`.
    ///
    /// A replacement touches only the postings of terms the two copies do not share: a term in
    /// both keeps its posting and has its frequency updated in place. Refreshes mostly keep a
    /// page's common terms, whose posting lists are the longest, so a change costs what it
    /// changes instead of two shifts of every one of the page's lists.
    pub fn put(&mut self, page: PageId, doc: ForwardDoc) {
        self.journal.record(page);
        let i = page as usize;
        if self.docs.len() <= i {
            self.docs.resize(i + 1, None);
            self.lengths.resize(i + 1, DocLength::default());
            self.url_hashes.resize(i + 1, 0);
        }
        let old = self.docs[i].take();
        if let Some(old) = &old {
            self.num_docs -= 1;
            self.total_tokens -= u64::from(old.terms.length);
            for &target in &old.links {
                self.inlinks[target as usize] -= 1;
            }
        }
        self.num_docs += 1;
        self.total_tokens += u64::from(doc.terms.length);
        self.lengths[i] = DocLength::new(doc.terms.length);
        self.url_hashes[i] = doc.url_hash;
        let old_counts: &[(TermId, u32)] = old.as_ref().map_or(&[], |o| &o.terms.counts);
        let new_counts = &doc.terms.counts;
        // Both lists are sorted by term id: merge them.
        let (mut a, mut b) = (0, 0);
        while a < old_counts.len() || b < new_counts.len() {
            let old_term = old_counts.get(a).map(|&(t, _)| t);
            let new_term = new_counts.get(b).map(|&(t, _)| t);
            match (old_term, new_term) {
                (Some(o), Some(n)) if o == n => {
                    self.insert_posting(o, page, new_counts[b].1);
                    a += 1;
                    b += 1;
                }
                (Some(o), Some(n)) if o < n => {
                    self.remove_posting(o, page);
                    a += 1;
                }
                (Some(o), None) => {
                    self.remove_posting(o, page);
                    a += 1;
                }
                (_, Some(n)) => {
                    self.insert_posting(n, page, new_counts[b].1);
                    b += 1;
                }
                (None, None) => unreachable!("loop condition"),
            }
        }
        for &target in &doc.links {
            let target = target as usize;
            if self.inlinks.len() <= target {
                self.inlinks.resize(target + 1, 0);
            }
            self.inlinks[target] += 1;
        }
        self.docs[i] = Some(Arc::new(doc));
    }

    /// Puts `copy` in as the copy of `page`, or removes the page's copy when `None` (a page
    /// gone from the Web).
    pub fn set_copy(&mut self, page: PageId, copy: Option<ForwardDoc>) {
        match copy {
            Some(doc) => self.put(page, doc),
            None => {
                self.remove(page);
            }
        }
    }

    /// Sets the copy of every page of `updates` (`None`: the page is gone), with the same end
    /// state as [`set_copy`](Self::set_copy) on each in turn.
    ///
    /// One at a time, each posting added or dropped shifts the rest of its list, and the
    /// longest lists (common terms, boilerplate) are touched by a share of every unit's
    /// changes: a unit would cost pages × list length. Here the additions and removals are
    /// gathered and applied list by list in one pass each (`edit_postings`), so a unit costs
    /// the lists it touches once; a term both copies hold with a new frequency is re-weighed
    /// the same way.
    pub fn set_copies(&mut self, updates: impl IntoIterator<Item = (PageId, Option<ForwardDoc>)>) {
        // `(term, page, tf)`: add or re-weigh the posting (tf ≥ 1), or drop it (tf = 0).
        let mut edits: Vec<(TermId, PageId, u32)> = Vec::new();
        let mut seen: rustc_hash::FxHashSet<PageId> = rustc_hash::FxHashSet::default();
        for (page, copy) in updates {
            if !seen.insert(page) {
                // A page listed twice: its earlier edits must land before its next copy is
                // compared with the one it replaces.
                self.apply_edits(&mut edits);
                seen.clear();
                seen.insert(page);
            }
            let i = page as usize;
            if self.docs.len() <= i {
                if copy.is_none() {
                    continue;
                }
                self.docs.resize(i + 1, None);
                self.lengths.resize(i + 1, DocLength::default());
                self.url_hashes.resize(i + 1, 0);
            }
            self.journal.record(page);
            let old = self.docs[i].take();
            if let Some(old) = &old {
                self.num_docs -= 1;
                self.total_tokens -= u64::from(old.terms.length);
                for &target in &old.links {
                    self.inlinks[target as usize] -= 1;
                }
            }
            let old_counts: &[(TermId, u32)] = old.as_ref().map_or(&[], |o| &o.terms.counts);
            let Some(doc) = copy else {
                self.lengths[i] = DocLength::default();
                self.url_hashes[i] = 0;
                edits.extend(old_counts.iter().map(|&(t, _)| (t, page, 0)));
                continue;
            };
            self.num_docs += 1;
            self.total_tokens += u64::from(doc.terms.length);
            self.lengths[i] = DocLength::new(doc.terms.length);
            self.url_hashes[i] = doc.url_hash;
            let new_counts = &doc.terms.counts;
            // Both lists are sorted by term id: merge them.
            let (mut a, mut b) = (0, 0);
            while a < old_counts.len() || b < new_counts.len() {
                let old_term = old_counts.get(a).map(|&(t, _)| t);
                let new_term = new_counts.get(b).map(|&(t, _)| t);
                match (old_term, new_term) {
                    (Some(o), Some(n)) if o == n => {
                        // Most terms of a changed page keep their count: no edit. A new
                        // count is an edit like the others, applied with its list's batch
                        // (in parallel, and a shared list copied once, not once per page).
                        if old_counts[a].1 != new_counts[b].1 {
                            edits.push((o, page, new_counts[b].1));
                        }
                        a += 1;
                        b += 1;
                    }
                    (Some(o), Some(n)) if o < n => {
                        edits.push((o, page, 0));
                        a += 1;
                    }
                    (Some(o), None) => {
                        edits.push((o, page, 0));
                        a += 1;
                    }
                    (_, Some(n)) => {
                        debug_assert!(new_counts[b].1 > 0, "a term counted 0 times");
                        edits.push((n, page, new_counts[b].1));
                        b += 1;
                    }
                    (None, None) => unreachable!("loop condition"),
                }
            }
            for &target in &doc.links {
                let target = target as usize;
                if self.inlinks.len() <= target {
                    self.inlinks.resize(target + 1, 0);
                }
                self.inlinks[target] += 1;
            }
            self.docs[i] = Some(Arc::new(doc));
        }
        self.apply_edits(&mut edits);
    }

    /// Removes the copy of `page`, returning it (no-op when absent).
    pub fn remove(&mut self, page: PageId) -> Option<ForwardDoc> {
        let doc = self.docs.get_mut(page as usize)?.take()?;
        self.journal.record(page);
        self.num_docs -= 1;
        self.total_tokens -= u64::from(doc.terms.length);
        self.lengths[page as usize] = DocLength::default();
        self.url_hashes[page as usize] = 0;
        for &(t, _) in &doc.terms.counts {
            self.remove_posting(t, page);
        }
        for &target in &doc.links {
            self.inlinks[target as usize] -= 1;
        }
        Some(Arc::unwrap_or_clone(doc))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_shares_its_versions_term_counts() {
        let mut vocabulary = crate::text::Vocabulary::new();
        let v = crate::index::testutil::version(&mut vocabulary, 0, "T", "emacs lisp", vec![]);
        let copy = ForwardDoc::from_version("https://example.org/a", &v);
        assert!(Arc::ptr_eq(&copy.terms, &v.terms));
        assert_eq!(*copy.terms, *v.terms);
    }
}
