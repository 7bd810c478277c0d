//! The posting lists: reading them, intersecting them (galloping), and editing them in place,
//! one posting at a time or a batch of edits per list.

use rayon::prelude::*;

use crate::corpus::PageId;
use crate::index::posting_list::PostingList;
use crate::text::TermId;

use super::ForwardIndex;

/// Query terms up to this many are intersected with buffers on the stack.
const INLINE_TERMS: usize = 8;

/// Postings a probe steps through one by one before galloping: in the dense lists of common
/// terms the next match is usually a few postings ahead, where a linear step beats the
/// mispredicted branches of a binary search.
const LINEAR_PROBES: usize = 4;

/// Advances `from` to the first index of `list` (ascending) holding a value `>= target`:
/// [`LINEAR_PROBES`] linear steps, then [`gallop`].
#[inline]
fn seek(list: &[PageId], from: usize, target: PageId) -> usize {
    let end = (from + LINEAR_PROBES).min(list.len());
    for (i, &p) in list[from..end].iter().enumerate() {
        if p >= target {
            return from + i;
        }
    }
    gallop(list, end, target)
}

/// Advances `from` to the first index of `list` (ascending) holding a value `>= target`
/// (galloping, then binary search), and returns it.
fn gallop(list: &[PageId], from: usize, target: PageId) -> usize {
    let mut lo = from;
    let mut step = 1;
    let mut hi = from;
    while hi < list.len() && list[hi] < target {
        lo = hi + 1;
        hi += step;
        step *= 2;
    }
    let hi = hi.min(list.len());
    lo + list[lo..hi].partition_point(|&p| p < target)
}

/// The first index `i ≤ end` with every value of `list[i..end]` (ascending) `>= target`
/// (galloping back from `end`, then binary search): `list[..end].partition_point(< target)`.
fn gallop_back(list: &[PageId], end: usize, target: PageId) -> usize {
    let (mut hi, mut step) = (end, 1);
    while hi > 0 {
        let lo = hi.saturating_sub(step);
        if list[lo] < target {
            return lo + 1 + list[lo + 1..hi].partition_point(|&p| p < target);
        }
        hi = lo;
        step *= 2;
    }
    0
}

impl ForwardIndex {
    /// Pages whose copy contains `term`, ascending.
    pub fn pages_with(&self, term: TermId) -> &[PageId] {
        self.assert_kept(term);
        self.postings
            .get(term as usize)
            .map_or(&[], PostingList::pages)
    }

    /// [`pages_with`](Self::pages_with) and, parallel to it, each page's frequency of `term`.
    pub fn postings(&self, term: TermId) -> (&[PageId], &[u32]) {
        self.assert_kept(term);
        self.postings
            .get(term as usize)
            .map_or((&[], &[]), PostingList::as_slices)
    }

    /// Calls `f(page, tfs)` for every page containing every term of `terms`, ascending, with
    /// `tfs[i]` the page's frequency of `terms[i]`. Nothing for an empty query.
    ///
    /// Intersects the posting lists, driving from the shortest and probing the others from the
    /// next shortest up (a page missing from a rare term is rejected first); each probe steps
    /// linearly a few postings, then gallops ([`seek`]), so a conjunctive list costs about
    /// `|shortest| · Σ min(gap, log gap)` and a single-term list is a plain scan. Queries of up
    /// to [`INLINE_TERMS`] terms intersect without allocating: this runs for every workload
    /// query at every evaluation.
    pub(crate) fn for_each_match(&self, terms: &[TermId], mut f: impl FnMut(PageId, &[u32])) {
        match terms.len() {
            0 => {}
            1 => {
                let (pages, freqs) = self.postings(terms[0]);
                for (&page, &tf) in pages.iter().zip(freqs) {
                    f(page, &[tf]);
                }
            }
            n if n <= INLINE_TERMS => {
                let mut lists: [(&[PageId], &[u32]); INLINE_TERMS] = [(&[], &[]); INLINE_TERMS];
                let mut probe_order = [0usize; INLINE_TERMS];
                let mut cursors = [0usize; INLINE_TERMS];
                let mut tfs = [0u32; INLINE_TERMS];
                self.intersect(
                    terms,
                    &mut lists[..n],
                    &mut probe_order[..n],
                    &mut cursors[..n],
                    &mut tfs[..n],
                    f,
                );
            }
            n => {
                let mut lists: Vec<(&[PageId], &[u32])> = vec![(&[], &[]); n];
                self.intersect(
                    terms,
                    &mut lists,
                    &mut vec![0; n],
                    &mut vec![0; n],
                    &mut vec![0; n],
                    f,
                );
            }
        }
    }

    /// The intersection of [`for_each_match`](Self::for_each_match) over caller-provided
    /// buffers, one slot per term.
    fn intersect<'s>(
        &'s self,
        terms: &[TermId],
        lists: &mut [(&'s [PageId], &'s [u32])],
        probe_order: &mut [usize],
        cursors: &mut [usize],
        tfs: &mut [u32],
        mut f: impl FnMut(PageId, &[u32]),
    ) {
        for (list, &t) in lists.iter_mut().zip(terms) {
            *list = self.postings(t);
        }
        for (slot, i) in probe_order.iter_mut().enumerate() {
            *i = slot;
        }
        cursors.fill(0);
        // Stable: among lists of equal length the earlier term drives, as before.
        probe_order.sort_by_key(|&i| lists[i].0.len());
        let driver = probe_order[0];
        let (driver_pages, driver_freqs) = lists[driver];
        'pages: for (&page, &tf) in driver_pages.iter().zip(driver_freqs) {
            tfs[driver] = tf;
            for &i in &probe_order[1..] {
                let (pages, freqs) = lists[i];
                let at = seek(pages, cursors[i], page);
                cursors[i] = at;
                if at == pages.len() {
                    break 'pages;
                }
                if pages[at] != page {
                    continue 'pages;
                }
                tfs[i] = freqs[at];
            }
            f(page, tfs);
        }
    }

    /// Pages containing every term of `terms` (a conjunctive match set), ascending. Empty for
    /// an empty query.
    pub fn matching(&self, terms: &[TermId]) -> Vec<PageId> {
        let mut out = Vec::new();
        self.for_each_match(terms, |p, _| out.push(p));
        out
    }

    /// Adds `page`'s posting of `term`, or sets its frequency if present.
    pub(super) fn insert_posting(&mut self, term: TermId, page: PageId, tf: u32) {
        if !self.keeps_postings_of(term) {
            return;
        }
        let t = term as usize;
        if self.postings.len() <= t {
            self.postings.resize(t + 1, PostingList::Empty);
        }
        self.postings[t].set(page, tf);
    }

    pub(super) fn remove_posting(&mut self, term: TermId, page: PageId) {
        if !self.keeps_postings_of(term) {
            return;
        }
        self.postings[term as usize].remove(page);
    }

    /// Applies and clears the gathered posting edits of [`set_copies`](Self::set_copies)
    /// (each `(term, page)` at most once).
    pub(super) fn apply_edits(&mut self, edits: &mut Vec<(TermId, PageId, u32)>) {
        if let Some(kept) = &self.kept {
            edits.retain(|&(t, _, _)| kept.contains(t));
        }
        if let Some(top) = edits
            .iter()
            .filter(|e| e.2 > 0)
            .map(|e| e.0 as usize + 1)
            .max()
        {
            if self.postings.len() < top {
                self.postings.resize(top, PostingList::Empty);
            }
        }
        edits.sort_unstable_by_key(|&(t, p, _)| (u64::from(t) << 32) | u64::from(p));
        // Each term's list with its edits; the lists are disjoint, so a batch (a unit's
        // changes touch thousands of lists) edits them side by side.
        let mut lists: Vec<(&mut PostingList, &[PostingEdit])> = Vec::new();
        let mut rest: &mut [PostingList] = &mut self.postings;
        let mut first_of_rest = 0;
        for group in edits.chunk_by(|a, b| a.0 == b.0) {
            let t = group[0].0 as usize;
            if t >= first_of_rest + rest.len() {
                // Removals from a list never created: nothing to drop (terms ascend).
                break;
            }
            let (list, tail) = std::mem::take(&mut rest)[t - first_of_rest..]
                .split_first_mut()
                .expect("t is within the rest");
            lists.push((list, group));
            rest = tail;
            first_of_rest = t + 1;
        }
        lists.into_par_iter().with_min_len(64).for_each_init(
            Vec::new,
            |changes: &mut Vec<(PageId, u32)>, (list, group)| {
                changes.clear();
                changes.extend(group.iter().map(|&(_, p, tf)| (p, tf)));
                list.edit(|pages, tfs| edit_postings(pages, tfs, changes));
            },
        );
        edits.clear();
    }
}

/// `(term, page, tf)`: add or re-weigh the posting (tf ≥ 1), or drop it (tf = 0).
type PostingEdit = (TermId, PageId, u32);

/// Applies `changes` (ascending by page, each page once) to the posting list `pages` with its
/// frequencies `tfs`: `(page, tf ≥ 1)` adds the posting or sets its frequency, `(page, 0)`
/// drops it if present. In place, each element moved at most twice (once by the removals'
/// compaction, once by the additions' shift from the back), so the list costs its length
/// plus a binary search per change, however many changes it takes.
fn edit_postings(pages: &mut Vec<PageId>, tfs: &mut Vec<u32>, changes: &[(PageId, u32)]) {
    debug_assert!(changes.windows(2).all(|w| w[0].0 < w[1].0));
    let len = pages.len();
    // Pass 1, front to back: drop removals, re-weigh pages present, set aside additions.
    let mut additions: Vec<(PageId, u32)> = Vec::new();
    let (mut read, mut write) = (0, 0);
    for &(page, tf) in changes {
        // Changes ascend and a busy list takes many, close together: gallop from the last.
        let at = gallop(pages, read, page);
        if write != read {
            pages.copy_within(read..at, write);
            tfs.copy_within(read..at, write);
        }
        write += at - read;
        read = at;
        let present = at < len && pages[at] == page;
        match (present, tf) {
            (true, 0) => read += 1,
            (true, _) => {
                pages[write] = page;
                tfs[write] = tf;
                read += 1;
                write += 1;
            }
            (false, 0) => {}
            (false, _) => additions.push((page, tf)),
        }
    }
    if write != read {
        pages.copy_within(read..len, write);
        tfs.copy_within(read..len, write);
    }
    write += len - read;
    pages.truncate(write);
    tfs.truncate(write);
    if additions.is_empty() {
        return;
    }
    // Pass 2, back to front: the list grows by the additions; the pages between addition
    // j − 1 and addition j move right by j + 1 (additions 0..=j land before them).
    let old_len = pages.len();
    pages.resize(old_len + additions.len(), 0);
    tfs.resize(old_len + additions.len(), 0);
    let mut end = old_len;
    for (j, &(page, tf)) in additions.iter().enumerate().rev() {
        let at = gallop_back(pages, end, page);
        pages.copy_within(at..end, at + j + 1);
        tfs.copy_within(at..end, at + j + 1);
        pages[at + j] = page;
        tfs[at + j] = tf;
        end = at;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn galloping_finds_the_partition_point_from_either_end() {
        let list: Vec<PageId> = vec![1, 3, 3, 5, 8, 13, 21, 34, 55, 89, 144];
        for target in 0..150 {
            for bound in 0..=list.len() {
                let expected = list[..bound].partition_point(|&p| p < target);
                assert_eq!(
                    gallop_back(&list, bound, target),
                    expected,
                    "{target} {bound}"
                );
                let from_here = bound + list[bound..].partition_point(|&p| p < target);
                assert_eq!(gallop(&list, bound, target), from_here, "{target} {bound}");
            }
        }
    }

    #[test]
    fn editing_a_posting_list_adds_reweighs_and_drops() {
        let mut pages = vec![2, 4, 6, 8];
        let mut tfs = vec![1, 1, 1, 1];
        edit_postings(
            &mut pages,
            &mut tfs,
            &[(1, 5), (2, 0), (3, 7), (6, 9), (7, 0), (8, 0), (10, 2)],
        );
        assert_eq!(pages, vec![1, 3, 4, 6, 10]);
        assert_eq!(tfs, vec![5, 7, 1, 9, 2]);
        edit_postings(&mut pages, &mut tfs, &[]);
        assert_eq!(pages, vec![1, 3, 4, 6, 10]);
    }
}
