//! The history of edits: which pages changed since an [`EditMark`].

use crate::corpus::PageId;

use super::ForwardIndex;

/// Where an index stands in its history of edits ([`ForwardIndex::edit_mark`]): a reader
/// that derived something from the index at this mark can later ask which pages changed since
/// ([`ForwardIndex::edits_since`]) and bring only those up to date.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EditMark {
    lineage: u64,
    position: usize,
}

/// The history behind [`EditMark`]s: one entry per page edit.
///
/// Guarantees: within one lineage, `pages[m.position..]` lists every page whose copy changed
/// after mark `m` (perhaps more than once). A clone starts a new lineage (the two indexes
/// diverge from there, so a mark of the one says nothing of the other), as does a journal
/// grown to [`EDIT_JOURNAL_CAP`] entries (it is cleared: memory stays bounded; readers then
/// re-derive everything once). The history is not content: two indexes with the same copies
/// are equal whatever their journals.
#[derive(Debug)]
pub(super) struct EditJournal {
    lineage: u64,
    pages: Vec<PageId>,
}

/// Entries a journal keeps before it starts a new lineage (4 MiB of page ids).
const EDIT_JOURNAL_CAP: usize = 1 << 20;

/// Lineages are process-wide, so marks of different indexes never match.
fn next_lineage() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl Default for EditJournal {
    fn default() -> Self {
        EditJournal {
            lineage: next_lineage(),
            pages: Vec::new(),
        }
    }
}

impl Clone for EditJournal {
    fn clone(&self) -> Self {
        Self::default()
    }
}

/// Always equal: a journal is history, not content, so indexes with equal copies compare equal.
impl PartialEq for EditJournal {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl EditJournal {
    pub(super) fn record(&mut self, page: PageId) {
        if self.pages.len() >= EDIT_JOURNAL_CAP {
            *self = Self::default();
        }
        self.pages.push(page);
    }
}

impl ForwardIndex {
    /// This index's place in its history of edits (see [`EditMark`]).
    pub fn edit_mark(&self) -> EditMark {
        EditMark {
            lineage: self.journal.lineage,
            position: self.journal.pages.len(),
        }
    }

    /// The pages whose copy was set or removed since `mark` (ascending, distinct; a page set
    /// to an equal copy is listed too), or `None` when `mark` is not of this index's lineage
    /// (another index, a clone, a cleared journal): then everything derived at `mark` must be
    /// derived again.
    pub fn edits_since(&self, mark: EditMark) -> Option<Vec<PageId>> {
        if mark.lineage != self.journal.lineage || mark.position > self.journal.pages.len() {
            return None;
        }
        let mut pages = self.journal.pages[mark.position..].to_vec();
        pages.sort_unstable();
        pages.dedup();
        Some(pages)
    }
}
