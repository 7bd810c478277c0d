//! Each multi-term workload query's match list — the pages whose copy holds every term of the
//! query, with their term frequencies — kept from one evaluation to the next and patched with
//! the pages edited in between, instead of intersecting the posting lists again.
//!
//! Why: an exact evaluation scores every page of every query's list at every unit, and its
//! profile is dominated by intersecting conjunctive queries' posting lists (the shortest list
//! drives, often thousands of postings for a list of hundreds). Between two evaluations only
//! the pages whose copy was set or removed can enter or leave a list or change their
//! frequencies ([`ForwardIndex::edits_since`]). The scores themselves are still computed in
//! full each time: collection statistics move every score.
//!
//! Protocol: once per evaluation [`MatchLists::prepare`] with the index and the queries, then,
//! for each query on its own (in parallel), [`QueryMatches::for_each_scored`] with the
//! returned [`Edits`]. Whatever a list holds — lists of another index, of another query, of an
//! older state, nothing — `for_each_scored` makes exactly the calls of
//! [`ForwardIndex::for_each_scored`] on the current index, bit for bit. Single-term queries
//! keep nothing: their posting list is their match list.

use crate::corpus::PageId;
use crate::index::{EditMark, ForwardIndex, Score, Scorer};
use crate::text::TermId;

/// The match lists of one evaluation stream (one [`super::ranking::RankMemory`]).
#[derive(Debug, Clone, Default)]
pub struct MatchLists {
    /// Per query (by position).
    pub lists: Vec<QueryMatches>,
    /// The index state of the last [`prepare`](Self::prepare).
    mark: Option<EditMark>,
    /// The multi-term queries holding each term, as offsets into `term_queries` (by term id;
    /// terms past the end are in no query).
    term_offsets: Vec<u32>,
    term_queries: Vec<u32>,
}

/// What changed in an index since the lists' last evaluation, per query
/// ([`MatchLists::prepare`]).
#[derive(Debug)]
pub struct Edits {
    /// The state the edits lead from (`None`: unknown, every list is rebuilt).
    from: Option<EditMark>,
    /// The index's current state.
    pub(crate) to: EditMark,
    /// Whether the lists are of the same queries as at the last `prepare`.
    same_queries: bool,
    /// Indexed by page: edited since `from` (pages past the end were not).
    edited: Vec<bool>,
    /// The pages edited since `from`, ascending.
    edited_pages: Vec<PageId>,
    /// Per query, offsets into `candidates`.
    offsets: Vec<u32>,
    /// The edited pages whose current copy holds every term of the query, ascending per query.
    candidates: Vec<PageId>,
}

impl Edits {
    /// Whether the index is in the state it was at the last `prepare` and the queries are
    /// the same: nothing a list holds can have changed since.
    pub(crate) fn nothing_since_last(&self) -> bool {
        self.same_queries && self.from == Some(self.to)
    }

    fn candidates(&self, query: usize) -> &[PageId] {
        match (self.offsets.get(query), self.offsets.get(query + 1)) {
            (Some(&a), Some(&b)) => &self.candidates[a as usize..b as usize],
            _ => &[],
        }
    }

    fn is_edited(&self, page: PageId) -> bool {
        self.edited.get(page as usize).copied().unwrap_or(false)
    }

    /// The position of the first page of `list` (ascending) edited since `from`;
    /// `list.len()` when none was. A few edits against a long list are looked up one by one
    /// (a unit's refreshes touch few of most lists), otherwise the list is scanned.
    fn first_edited_in(&self, list: &[PageId]) -> usize {
        if self.edited_pages.len().saturating_mul(16) < list.len() {
            // Both ascending: the first edited page found is the earliest in the list.
            self.edited_pages
                .iter()
                .find_map(|p| list.binary_search(p).ok())
                .unwrap_or(list.len())
        } else {
            list.iter()
                .position(|&p| self.is_edited(p))
                .unwrap_or(list.len())
        }
    }
}

impl MatchLists {
    /// Readies the lists for an evaluation of `queries` (by position) on `forward`: one list
    /// per query, and what was edited since the last evaluation.
    pub fn prepare(&mut self, forward: &ForwardIndex, queries: &[&[TermId]]) -> Edits {
        let mut same_queries = self.lists.len() == queries.len();
        self.lists.resize_with(queries.len(), QueryMatches::default);
        for (list, &terms) in self.lists.iter_mut().zip(queries) {
            if list.terms != terms {
                list.terms = terms.to_vec();
                list.mark = None;
                same_queries = false;
            }
        }
        if !same_queries {
            self.index_terms(queries);
        }
        let to = forward.edit_mark();
        let from = self.mark.replace(to);
        let edited_pages = from.and_then(|m| forward.edits_since(m));
        let mut edits = Edits {
            from: edited_pages.as_ref().and(from),
            to,
            same_queries,
            edited: Vec::new(),
            edited_pages: Vec::new(),
            offsets: Vec::new(),
            candidates: Vec::new(),
        };
        let Some(pages) = edited_pages.filter(|p| !p.is_empty()) else {
            return edits;
        };
        edits.edited = vec![false; *pages.last().expect("not empty") as usize + 1];
        // Per edited page (ascending), how many of each multi-term query's terms its copy holds:
        // a query lists each of its terms once per occurrence and a copy lists a term once, so
        // the page matches `q` exactly when the count reaches `q.len()`. Counted page by page
        // in one array rather than by sorting every (query, page) pair a term yields: common
        // terms are in hundreds of queries.
        let mut held = vec![0u32; queries.len()];
        let mut touched: Vec<u32> = Vec::new();
        let mut pairs: Vec<(u32, PageId)> = Vec::new();
        for &p in &pages {
            edits.edited[p as usize] = true;
            let Some(doc) = forward.doc(p) else {
                continue;
            };
            for &(t, _) in &doc.terms.counts {
                let t = t as usize;
                if t + 1 >= self.term_offsets.len() {
                    // Terms ascend: the rest are in no query either.
                    break;
                }
                let (a, b) = (self.term_offsets[t], self.term_offsets[t + 1]);
                for &q in &self.term_queries[a as usize..b as usize] {
                    if held[q as usize] == 0 {
                        touched.push(q);
                    }
                    held[q as usize] += 1;
                }
            }
            for &q in &touched {
                if held[q as usize] as usize == queries[q as usize].len() {
                    pairs.push((q, p));
                }
                held[q as usize] = 0;
            }
            touched.clear();
        }
        // Pages were taken in ascending order: by query, they still are.
        pairs.sort_by_key(|&(q, _)| q);
        edits.offsets = Vec::with_capacity(queries.len() + 1);
        let mut next = 0;
        for q in 0..=queries.len() as u32 {
            while next < pairs.len() && pairs[next].0 < q {
                next += 1;
            }
            edits.offsets.push(next as u32);
        }
        edits.candidates = pairs.into_iter().map(|(_, p)| p).collect();
        edits.edited_pages = pages;
        edits
    }

    /// Builds the term → multi-term queries index of `queries`.
    fn index_terms(&mut self, queries: &[&[TermId]]) {
        let multi = || queries.iter().enumerate().filter(|(_, q)| q.len() > 1);
        let terms = multi()
            .flat_map(|(_, q)| q.iter())
            .map(|&t| t as usize + 1)
            .max()
            .unwrap_or(0);
        let mut counts = vec![0u32; terms + 1];
        for (_, q) in multi() {
            for &t in q.iter() {
                counts[t as usize + 1] += 1;
            }
        }
        for t in 1..counts.len() {
            counts[t] += counts[t - 1];
        }
        let mut fill = counts.clone();
        let mut members = vec![0u32; *counts.last().unwrap_or(&0) as usize];
        for (i, q) in multi() {
            for &t in q.iter() {
                members[fill[t as usize] as usize] = i as u32;
                fill[t as usize] += 1;
            }
        }
        self.term_offsets = counts;
        self.term_queries = members;
    }

    /// Approximate heap bytes held.
    pub(crate) fn memory_bytes(&self) -> usize {
        let lists: usize = self
            .lists
            .iter()
            .map(|l| (l.pages.capacity() + l.tfs.capacity() + l.terms.capacity()) * 4)
            .sum();
        lists + (self.term_offsets.len() + self.term_queries.len()) * 4
    }
}

/// One query's match list as of an index state (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct QueryMatches {
    /// The query the list is of.
    terms: Vec<TermId>,
    /// Matching pages, ascending.
    pages: Vec<PageId>,
    /// Per page of `pages`, the frequency of each term of `terms`, in order.
    tfs: Vec<u32>,
    /// The index state the list is of (`None`: none).
    mark: Option<EditMark>,
}

impl QueryMatches {
    /// Calls `f(page, score, url hash)` exactly as [`ForwardIndex::for_each_scored`] would
    /// for query number `query` of the last [`MatchLists::prepare`] (which returned `edits`
    /// and set this list's terms), first bringing this list up to the index's state.
    pub fn for_each_scored(
        &mut self,
        forward: &ForwardIndex,
        scorer: &dyn Scorer,
        query: usize,
        edits: &Edits,
        f: impl FnMut(PageId, Score, u64),
    ) {
        if self.terms.len() < 2 {
            forward.for_each_scored(scorer, &self.terms, f);
            return;
        }
        if self.mark != Some(edits.to) {
            if self.mark.is_some() && self.mark == edits.from {
                self.patch(forward, edits, query);
            } else {
                self.rebuild(forward);
            }
            self.mark = Some(edits.to);
        }
        forward.for_each_scored_in(scorer, &self.terms, &self.pages, &self.tfs, f);
    }

    /// The list from scratch: the intersection of the posting lists.
    fn rebuild(&mut self, forward: &ForwardIndex) {
        self.pages.clear();
        self.tfs.clear();
        let (pages, tfs) = (&mut self.pages, &mut self.tfs);
        forward.for_each_match(&self.terms, |p, page_tfs| {
            pages.push(p);
            tfs.extend_from_slice(page_tfs);
        });
    }

    /// The list from its previous state: the pages not edited keep their entries (their
    /// copies are unchanged), the edited ones are dropped, and the edited pages whose current
    /// copy holds every term of the query come in. In place: most lists
    /// lose or gain nothing, and a copy of each list per evaluation was most of the cost.
    fn patch(&mut self, forward: &ForwardIndex, edits: &Edits, query: usize) {
        let width = self.terms.len();
        // Pass 1, front to back from the first edited page listed: drop the edited pages.
        let first = edits.first_edited_in(&self.pages);
        let mut write = first;
        for read in first..self.pages.len() {
            let p = self.pages[read];
            if edits.is_edited(p) {
                continue;
            }
            if write != read {
                self.pages[write] = p;
                self.tfs
                    .copy_within(read * width..(read + 1) * width, write * width);
            }
            write += 1;
        }
        self.pages.truncate(write);
        self.tfs.truncate(write * width);
        // The edited pages that hold every term now (ascending, none of them still listed).
        let mut admitted: Vec<PageId> = Vec::new();
        let mut admitted_tfs: Vec<u32> = Vec::new();
        for &p in edits.candidates(query) {
            let Some(doc) = forward.doc(p) else {
                continue;
            };
            let start = admitted_tfs.len();
            admitted_tfs.extend(self.terms.iter().map(|&t| doc.terms.tf(t)));
            if admitted_tfs[start..].contains(&0) {
                admitted_tfs.truncate(start);
            } else {
                admitted.push(p);
            }
        }
        if admitted.is_empty() {
            return;
        }
        // Pass 2, back to front: the entries between admission j − 1 and admission j move
        // right by j + 1.
        let old_len = self.pages.len();
        self.pages.resize(old_len + admitted.len(), 0);
        self.tfs.resize((old_len + admitted.len()) * width, 0);
        let mut end = old_len;
        for (j, &page) in admitted.iter().enumerate().rev() {
            let at = self.pages[..end].partition_point(|&p| p < page);
            self.pages.copy_within(at..end, at + j + 1);
            self.tfs
                .copy_within(at * width..end * width, (at + j + 1) * width);
            self.pages[at + j] = page;
            self.tfs[(at + j) * width..(at + j + 1) * width]
                .copy_from_slice(&admitted_tfs[j * width..(j + 1) * width]);
            end = at;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{ForwardDoc, ScoringKind};
    use crate::text::TermCounts;
    use rand::{Rng, SeedableRng};

    /// A copy of random terms out of `vocabulary`, each a few times.
    fn random_doc(rng: &mut impl Rng, vocabulary: TermId) -> ForwardDoc {
        let mut counts: Vec<(TermId, u32)> = (0..rng.gen_range(0..12))
            .map(|_| (rng.gen_range(0..vocabulary), rng.gen_range(1..4)))
            .collect();
        counts.sort_unstable_by_key(|&(t, _)| t);
        counts.dedup_by_key(|&mut (t, _)| t);
        let length = counts.iter().map(|&(_, tf)| tf).sum::<u32>() + rng.gen_range(0..5);
        ForwardDoc {
            terms: std::sync::Arc::new(TermCounts { counts, length }),
            links: Vec::new(),
            url_hash: rng.gen(),
            content_hash: 0,
        }
    }

    /// `(page, score bits, url hash)` of every call.
    type Calls = Vec<(PageId, u32, u64)>;

    fn kept_calls(
        lists: &mut MatchLists,
        forward: &ForwardIndex,
        scorer: &dyn Scorer,
        queries: &[Vec<TermId>],
    ) -> Vec<Calls> {
        let terms: Vec<&[TermId]> = queries.iter().map(Vec::as_slice).collect();
        let edits = lists.prepare(forward, &terms);
        lists
            .lists
            .iter_mut()
            .enumerate()
            .map(|(qi, list)| {
                let mut calls = Vec::new();
                list.for_each_scored(forward, scorer, qi, &edits, |p, s, h| {
                    calls.push((p, s.to_bits(), h))
                });
                calls
            })
            .collect()
    }

    fn fresh_calls(
        forward: &ForwardIndex,
        scorer: &dyn Scorer,
        queries: &[Vec<TermId>],
    ) -> Vec<Calls> {
        queries
            .iter()
            .map(|q| {
                let mut calls = Vec::new();
                forward.for_each_scored(scorer, q, |p, s, h| calls.push((p, s.to_bits(), h)));
                calls
            })
            .collect()
    }

    /// Lists kept through random edits (puts, batches, removals, pages set to the copy they
    /// had), through a foreign index (a diverged clone) and a changed workload make exactly
    /// the calls of a fresh intersection; and the patch path did run.
    #[test]
    fn kept_lists_make_the_calls_of_a_fresh_intersection() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let vocabulary = 9;
        let pages = 120;
        let mut docs = Vec::new();
        for p in 0..pages {
            if rng.gen_bool(0.8) {
                docs.push((p, random_doc(&mut rng, vocabulary)));
            }
        }
        let mut forward = ForwardIndex::from_docs(docs);
        let mut queries: Vec<Vec<TermId>> = (0..vocabulary).map(|t| vec![t]).collect();
        for _ in 0..40 {
            let mut q: Vec<TermId> = (0..rng.gen_range(2..5))
                .map(|_| rng.gen_range(0..vocabulary))
                .collect();
            q.dedup();
            queries.push(q);
        }
        // A term repeated in a query: a copy is a candidate once per occurrence.
        queries.push(vec![1, 2, 1]);
        queries.push(vec![4, 4]);
        let scorer = ScoringKind::Bm25.scorer();
        let mut lists = MatchLists::default();
        let mut patched = 0;
        for step in 0..60 {
            match step % 4 {
                0 => {
                    let p = rng.gen_range(0..pages + 10);
                    forward.put(p, random_doc(&mut rng, vocabulary));
                }
                1 => {
                    let batch: Vec<(PageId, Option<ForwardDoc>)> = (0..rng.gen_range(0..8))
                        .map(|_| {
                            let p = rng.gen_range(0..pages);
                            (
                                p,
                                rng.gen_bool(0.8).then(|| random_doc(&mut rng, vocabulary)),
                            )
                        })
                        .collect();
                    forward.set_copies(batch);
                }
                2 => {
                    forward.remove(rng.gen_range(0..pages));
                }
                _ => {
                    let p = rng.gen_range(0..pages);
                    if let Some(doc) = forward.doc(p).cloned() {
                        forward.put(p, doc);
                    }
                }
            }
            let before: Vec<Option<EditMark>> = lists.lists.iter().map(|l| l.mark).collect();
            let kept = kept_calls(&mut lists, &forward, scorer.as_ref(), &queries);
            patched += before
                .iter()
                .zip(&lists.lists)
                .filter(|(b, l)| b.is_some() && l.terms.len() > 1 && b != &&l.mark)
                .count();
            assert_eq!(
                kept,
                fresh_calls(&forward, scorer.as_ref(), &queries),
                "step {step}"
            );
            if step == 30 {
                // A clone diverges: the lists of the original must not be patched into it.
                let mut other = forward.clone();
                forward.put(3, random_doc(&mut rng, vocabulary));
                other.put(4, random_doc(&mut rng, vocabulary));
                let kept = kept_calls(&mut lists, &other, scorer.as_ref(), &queries);
                assert_eq!(kept, fresh_calls(&other, scorer.as_ref(), &queries));
            }
            if step == 45 {
                // Another workload (fewer queries, others in their places).
                queries.truncate(queries.len() - 3);
                queries.swap(vocabulary as usize, vocabulary as usize + 1);
            }
        }
        assert!(patched > 100, "the patch path ran {patched} times");
    }

    #[test]
    fn the_first_edited_page_listed_is_found_by_lookup_as_by_scan() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let (mut looked_up, mut scanned) = (0, 0);
        for _ in 0..400 {
            let mut list: Vec<PageId> = (0..rng.gen_range(0..400))
                .map(|_| rng.gen_range(0..1000))
                .collect();
            list.sort_unstable();
            list.dedup();
            let mut edited_pages: Vec<PageId> = (0..rng.gen_range(0..40))
                .map(|_| rng.gen_range(0..1000))
                .collect();
            edited_pages.sort_unstable();
            edited_pages.dedup();
            let mut edited = vec![false; 1000];
            edited_pages.iter().for_each(|&p| edited[p as usize] = true);
            if edited_pages.len() * 16 < list.len() {
                looked_up += 1;
            } else {
                scanned += 1;
            }
            let expected = list
                .iter()
                .position(|p| edited_pages.contains(p))
                .unwrap_or(list.len());
            let edits = Edits {
                from: None,
                to: ForwardIndex::from_docs(Vec::new()).edit_mark(),
                same_queries: true,
                edited,
                edited_pages,
                offsets: Vec::new(),
                candidates: Vec::new(),
            };
            assert_eq!(edits.first_edited_in(&list), expected);
        }
        assert!(looked_up > 50 && scanned > 50, "{looked_up} {scanned}");
    }

    #[test]
    fn the_journal_lists_each_edited_page_once_and_only_for_its_lineage() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(6);
        let mut forward = ForwardIndex::from_docs(vec![(0, random_doc(&mut rng, 4))]);
        let start = forward.edit_mark();
        assert_eq!(forward.edits_since(start), Some(vec![]));
        forward.put(7, random_doc(&mut rng, 4));
        forward.set_copies(vec![(2, None), (7, Some(random_doc(&mut rng, 4)))]);
        forward.remove(0);
        forward.remove(0);
        assert_eq!(forward.edits_since(start), Some(vec![0, 2, 7]));
        let clone = forward.clone();
        assert_eq!(
            clone.edits_since(start),
            None,
            "a clone starts its own lineage"
        );
        assert_eq!(clone, forward, "the journal is not content");
    }
}
