//! The repository side's ranking engine: each workload query's result list ranked by
//! repository scores, kept between evaluations ([`RankMemory`]) and patched with the pages
//! edited since, and the scores at the ranks a score-to-rank fit reads.

use crate::corpus::PageId;
use crate::index::rank_key;
use crate::index::score_of_rank_key;
use crate::index::EditMark;
use crate::index::ForwardIndex;
use crate::index::Score;
use crate::index::Scorer;
use crate::index::ScoringKind;
use crate::quality::match_lists::Edits;
use crate::quality::match_lists::MatchLists;
use crate::text::TermId;
use rayon::prelude::*;

pub use crate::querylog::term_workload::MetricQuery;

/// Each workload query's result list as last ranked, by one evaluation stream (one run's
/// repository, or the live Web unit after unit).
///
/// From one unit to the next a list mostly keeps its order: a refresh changes the scores of a
/// few pages, and the collection statistics (document count, average length, document
/// frequencies) move every score a little, swapping few neighbours. Ranking the new keys laid
/// out in the previous order is then a sort of an almost sorted sequence, which the standard
/// library's run-adaptive merge sort does in near-linear time instead of `n log n`.
///
/// The memory is only a starting permutation: every list is still scored in full and sorted
/// by the same total order ([`rank_key`]), so the ranking — and every metric — is the same
/// bit for bit whatever the memory holds (stale, from another repository, or empty).
///
/// It also keeps each query's match list (`MatchLists`), patched with the pages edited since
/// the last evaluation on the same index instead of intersecting posting lists again; the
/// lists it reads are those of a fresh intersection, bit for bit, whatever it held.
#[derive(Debug, Clone, Default)]
pub struct RankMemory {
    /// Per query (by position): the pages of its last ranked list, best first.
    pub orders: Vec<Vec<PageId>>,
    pub matches: MatchLists,
    /// The index state and scoring under which every list of `orders` was last ranked in
    /// full (`None`: not known to be any state's ranking).
    pub ranked: Option<(EditMark, ScoringKind)>,
}

/// What [`RankMemory::prepare`] found.
pub struct Prepared {
    pub edits: Edits,
    /// Every kept order is already the ranking of its list on this index under this scoring:
    /// the index was not edited since the memory's last full ranking (the queries, the index
    /// state and the scoring are the same), so neither a score nor an order can differ.
    pub still_ranked: bool,
}

impl RankMemory {
    /// One (possibly empty) order and match list per query of `queries`, and what `forward`
    /// edited since the last evaluation.
    ///
    /// Protocol: after `prepare`, the caller ranks every list and then calls
    /// [`ranked_all`](Self::ranked_all), or — when `still_ranked` — may leave every order as
    /// it is and call it all the same. Until then the memory claims no ranking.
    pub fn prepare(
        &mut self,
        forward: &ForwardIndex,
        scorer: &dyn Scorer,
        queries: &[&[TermId]],
    ) -> Prepared {
        if self.orders.len() != queries.len() {
            self.orders = vec![Vec::new(); queries.len()];
        }
        let edits = self.matches.prepare(forward, queries);
        let still_ranked =
            edits.nothing_since_last() && self.ranked == Some((edits.to, scorer.kind()));
        self.ranked = None;
        Prepared {
            edits,
            still_ranked,
        }
    }

    /// Every list was ranked (or left still ranked) on the index state of `prepared`.
    pub fn ranked_all(&mut self, prepared: &Prepared, scorer: &dyn Scorer) {
        self.ranked = Some((prepared.edits.to, scorer.kind()));
    }

    /// For each list of `lists` (query terms; list `i` ranked from this memory's order `i`),
    /// its length and its scores at the 1-based ranks `ranks(len)` (ascending, within
    /// `1..=len`): what a score-to-rank fit reads. Equal to
    /// [`ForwardIndex::scores_at_ranks`] on each list, bit for bit (the score at a rank of the
    /// full ranking is the selected one), at the cost of a near-linear re-ranking instead of
    /// one selection per rank.
    pub fn scores_at_ranks(
        &mut self,
        forward: &ForwardIndex,
        scorer: &dyn Scorer,
        lists: &[&[TermId]],
        ranks: impl Fn(usize) -> Vec<usize> + Sync,
    ) -> Vec<(usize, Vec<Score>)> {
        self.rank_each(forward, scorer, lists, |scratch, order| {
            let wanted = ranks(order.len());
            let scores = wanted
                .iter()
                .map(|&r| scratch.value_of(order[r - 1]))
                .collect();
            (order.len(), scores)
        })
    }

    /// Ranks each list of `lists` (query terms; list `i` from this memory's order `i`) in
    /// `forward` under `scorer`, and returns the rankings, best first: the pages of
    /// [`ForwardIndex::ranked`] on each list, in its order.
    pub fn rank_lists(
        &mut self,
        forward: &ForwardIndex,
        scorer: &dyn Scorer,
        lists: &[&[TermId]],
    ) -> &[Vec<PageId>] {
        self.rank_each(forward, scorer, lists, |_, _| ());
        &self.orders
    }

    /// Ranks each list of `lists` from its kept order (in parallel) and returns, per list,
    /// `then(scratch, ranking)` read right after it was ranked.
    pub(super) fn rank_each<R: Send>(
        &mut self,
        forward: &ForwardIndex,
        scorer: &dyn Scorer,
        lists: &[&[TermId]],
        then: impl Fn(&Scratch, &[PageId]) -> R + Sync,
    ) -> Vec<R> {
        let prepared = self.prepare(forward, scorer, lists);
        let edits = &prepared.edits;
        let results = self
            .orders
            .par_iter_mut()
            .zip(self.matches.lists.par_iter_mut())
            .enumerate()
            .map(|(qi, (order, matches))| {
                SCRATCH.with(|cell| {
                    let scratch = &mut *cell.borrow_mut();
                    scratch.rank(order, |list| {
                        matches.for_each_scored(forward, scorer, qi, edits, |p, s, h| {
                            list.push(p, rank_key(s, h, p), s)
                        })
                    });
                    then(scratch, order)
                })
            })
            .collect();
        self.ranked_all(&prepared, scorer);
        results
    }

    /// Approximate heap bytes held.
    pub fn memory_bytes(&self) -> usize {
        let orders: usize = self
            .orders
            .iter()
            .map(|o| {
                o.capacity() * std::mem::size_of::<PageId>() + std::mem::size_of::<Vec<PageId>>()
            })
            .sum();
        orders + self.matches.memory_bytes()
    }
}

/// Per worker thread, page-indexed working arrays for ranking one list (only the entries of
/// the list at hand are read, and each is written first in that list: `stamp` tells which).
#[derive(Default)]
pub struct Scratch {
    /// The page's rank key in the current list.
    pub(super) key: Vec<u128>,
    /// The value carried with the page (its live score).
    pub(super) value: Vec<Score>,
    /// `epoch` when the page matches the current list, `epoch + 1` once laid out.
    pub(super) stamp: Vec<u32>,
    pub(super) epoch: u32,
    /// Pages of the current list in the order they were scored.
    pub matched: Vec<PageId>,
    /// The current list's keys being ranked.
    pub(super) keys: Vec<u128>,
}

/// What a list's scoring pass hands to [`Scratch::rank`], page by page.
pub struct Collect<'a> {
    pub(super) key: &'a mut Vec<u128>,
    pub(super) value: &'a mut Vec<Score>,
    pub(super) stamp: &'a mut Vec<u32>,
    pub(super) matched: &'a mut Vec<PageId>,
    pub(super) epoch: u32,
}

impl Collect<'_> {
    /// `page` matches with rank key `key`, carrying `value`.
    #[inline]
    pub fn push(&mut self, page: PageId, key: u128, value: Score) {
        let i = page as usize;
        make_room(self.key, self.value, self.stamp, i);
        self.key[i] = key;
        self.value[i] = value;
        self.stamp[i] = self.epoch;
        self.matched.push(page);
    }
}

/// Grows the scratch's page-indexed arrays to hold page index `i` (new entries unstamped).
#[inline]
pub(super) fn make_room(
    key: &mut Vec<u128>,
    value: &mut Vec<Score>,
    stamp: &mut Vec<u32>,
    i: usize,
) {
    if stamp.len() <= i {
        key.resize(i + 1, 0);
        value.resize(i + 1, 0.0);
        stamp.resize(i + 1, 0);
    }
}

impl Scratch {
    /// Ranks the list that `score_all` produces (every matching page once, with its key):
    /// lays the keys out in `order` (the list's previous ranking; pages no longer matching
    /// dropped, new ones appended), sorts them, and writes the ranking back into `order`.
    pub fn rank(&mut self, order: &mut Vec<PageId>, score_all: impl FnOnce(&mut Collect<'_>)) {
        let epoch = self.next_epoch();
        self.matched.clear();
        score_all(&mut Collect {
            key: &mut self.key,
            value: &mut self.value,
            stamp: &mut self.stamp,
            matched: &mut self.matched,
            epoch,
        });
        self.keys.clear();
        for &p in order.iter() {
            let i = p as usize;
            if self.stamp.get(i) == Some(&epoch) {
                self.keys.push(self.key[i]);
                self.stamp[i] = epoch + 1;
            }
        }
        if self.keys.len() < self.matched.len() {
            for &p in &self.matched {
                if self.stamp[p as usize] == epoch {
                    self.keys.push(self.key[p as usize]);
                }
            }
        }
        sort_nearly_sorted(&mut self.keys);
        order.clear();
        order.extend(self.keys.iter().map(|&k| k as PageId));
    }

    /// A stamp no entry holds yet (nor its successor): entries written before read as absent.
    pub fn next_epoch(&mut self) -> u32 {
        if self.epoch >= u32::MAX - 2 {
            self.stamp.fill(0);
            self.epoch = 0;
        }
        self.epoch += 2;
        self.epoch
    }

    /// `page` carries `value` under `epoch` (see [`carried`](Self::carried)).
    #[inline]
    pub fn carry(&mut self, page: PageId, epoch: u32, value: Score) {
        let i = page as usize;
        make_room(&mut self.key, &mut self.value, &mut self.stamp, i);
        self.value[i] = value;
        self.stamp[i] = epoch;
    }

    /// The value `page` carries under `epoch`; 0 when it carries none.
    #[inline]
    pub fn carried(&self, page: PageId, epoch: u32) -> Score {
        match self.stamp.get(page as usize) {
            Some(&s) if s == epoch => self.value[page as usize],
            _ => 0.0,
        }
    }

    /// The value carried by `page` in the list last ranked.
    pub fn value_of(&self, page: PageId) -> Score {
        self.value[page as usize]
    }

    /// The length of the list last ranked (`order`) and the scores it was ranked by at the
    /// 1-based ranks `ranks(len)`.
    pub fn scores_at_ranks(&self, order: &[PageId], ranks: &RanksWanted) -> (usize, Vec<Score>) {
        let scores = ranks(order.len())
            .iter()
            .map(|&r| score_of_rank_key(self.key[order[r - 1] as usize]))
            .collect();
        (order.len(), scores)
    }
}

/// Sorts distinct `keys` ascending. A list laid out in its previous ranking is often nearly
/// in order (a few pages moved): then each key out of place is moved into the sorted prefix by
/// a binary search, one comparison per key in order. With more disorder (fewer than
/// [`MIN_KEYS_PER_DESCENT`] keys per key out of place, or keys moved farther than one list
/// length in all), the standard run-adaptive sort does it. Keys are distinct, so every
/// correct sort gives the same order.
pub(super) fn sort_nearly_sorted(keys: &mut [u128]) {
    let descents = keys.windows(2).filter(|w| w[0] > w[1]).count();
    if descents == 0 {
        return;
    }
    if descents.saturating_mul(MIN_KEYS_PER_DESCENT) > keys.len() {
        keys.sort();
        return;
    }
    let mut moved = 0usize;
    for i in 1..keys.len() {
        let key = keys[i];
        if keys[i - 1] <= key {
            continue;
        }
        let at = keys[..i].partition_point(|&k| k < key);
        moved += i - at;
        if moved > keys.len() {
            keys.sort();
            return;
        }
        keys.copy_within(at..i, at + 1);
        keys[at] = key;
    }
}

/// [`sort_nearly_sorted`] inserts keys one by one only when the list has at least this many
/// keys per descent (a key smaller than the one before it).
pub(super) const MIN_KEYS_PER_DESCENT: usize = 16;

thread_local! {
    pub static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// The 1-based ranks of a list of a given length that a score-to-rank fit reads (ascending,
/// within `1..=len`).
pub type RanksWanted = dyn Fn(usize) -> Vec<usize> + Sync;

/// Per workload query (by position): the length of its repository list and the list's scores
/// at the ranks [`RanksWanted`] names — what a score-to-rank fit reads, equal bit for bit to
/// [`RankMemory::scores_at_ranks`] on the same repository. An evaluation ranks every list
/// anyway, so it hands these over (the judge's `evaluate_and_rank`) instead of the ΔQ estimate ranking
/// the same lists again before the next unit.
pub type ScoresAtRanks = Vec<(usize, Vec<Score>)>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearly_sorted_keys_sort_as_the_standard_sort() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        for round in 0..300 {
            let len = rng.gen_range(0..300usize);
            let mut keys: Vec<u128> = (0..len).map(|_| rng.gen::<u128>()).collect();
            keys.sort_unstable();
            keys.dedup();
            // From in order to shuffled: a few keys moved near or far, or many.
            let moves = match round % 3 {
                0 => rng.gen_range(0..3),
                1 => rng.gen_range(0..=keys.len() / 4 + 1),
                _ => keys.len() * 2,
            };
            for _ in 0..if keys.is_empty() { 0 } else { moves } {
                let (a, b) = (rng.gen_range(0..keys.len()), rng.gen_range(0..keys.len()));
                keys.swap(a, b);
            }
            let mut want = keys.clone();
            want.sort_unstable();
            sort_nearly_sorted(&mut keys);
            assert_eq!(keys, want, "round {round}");
        }
    }
}
