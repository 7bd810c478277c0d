//! Exact metrics, computed against the live Web with no approximation (paper 003 §6 evaluated
//! every policy this way; paper 000 adds top-10 freshness and MAP@10).
//!
//! Per time unit the work splits in two:
//! * [`LiveTruth`]: the live Web's side — for every workload query the live score of every page
//!   that matches live (`S(W_t[p], q)`), the live top 10, and the denominator of Eq. 5 (the
//!   quality of an ideal engine with instant access to the live Web). It does not depend on
//!   the refresh policy, so a comparison computes it once per unit and shares it.
//! * [`evaluate`]: the repository's side — each query's full result list `A(q, W_L)` ranked by
//!   repository scores, each page credited with its *live* score.
//!
//! Definitions (written out because papers differ in detail):
//! * **Quality** (paper 003 Eq. 5): `Q = Σ_q f_q Σ_{p∈A(q,W_L)} I(R_L(p))·S(W_t[p],q) /
//!   Σ_q f_q Σ_{p∈A(q,W_t)} I(R_t(p))·S(W_t[p],q)`; 1 when the denominator is 0.
//! * **Top-10 freshness**: per query with a non-empty repository result list, the share of its
//!   top-min(10, n) results whose repository copy is the live version; averaged over those
//!   queries (each distinct query once, as paper 000 averages over queries).
//! * **MAP@10**: per query whose live result list is non-empty, the average precision of the
//!   repository's top 10 against the relevant set R = the live top 10:
//!   `AP@10 = Σ_{k≤10, result k ∈ R} P@k / |R|`; averaged over those queries.
//!
//! Paper 000's own variants ([`Paper000Measures`], reconstructed in SEED-SYSTEMS §1.1: the
//! paper's formulas are blank in its text), averaged over the queries with a non-empty
//! repository result list:
//! * **Top-k freshness, Eq. 8**: `(1/k)·Σ_{i≤k} F(p_i)` with `k = 10` fixed, so a list shorter
//!   than 10 counts its missing results as not fresh ([`top_k_freshness`]);
//! * **MAP@10 with the "retrieved" normaliser, Eq. 9**: `AP@10 = Σ_{i≤10} P@i·rel_i /
//!   Σ_{i≤10} rel_i` (0 when no result is relevant): the paper's judges saw only the top 10, so
//!   it could only count relevant *retrieved* results ([`average_precision_retrieved`]); with
//!   the project's relevance (the live top 10, `τ = 1`) and with `τ = 0` — a result is relevant
//!   when its live copy still matches the query (contains every term; a gone page does not),
//!   the closer proxy of the paper's two-step manual judgement (summary relevant, then the live
//!   page relevant).

use rayon::prelude::*;

use crate::corpus::{PageId, Unit};
use crate::index::{
    rank_key, score_of_rank_key, CollectionStats, EditMark, ForwardIndex, LiveScores, Score,
    Scorer, ScoringKind,
};
use crate::text::TermId;

use super::match_lists::{Edits, MatchLists, QueryMatches};
use super::viewing::{likelihood_table, LikelihoodTable, ViewingLikelihood};
use super::SearchQuality;

/// Depth of the top-k metrics (top-10 freshness, MAP@10).
pub const TOP_K: usize = 10;

/// A workload query as the metrics see it: distinct term ids and the frequency `f_q`.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricQuery {
    pub terms: Vec<TermId>,
    pub frequency: f64,
}

/// The live side of one query at one unit.
#[derive(Debug, Clone, Default)]
struct LiveList {
    /// `(page, live score)` of every page matching live, sorted by page id.
    by_page: Vec<(PageId, Score)>,
    /// The live top `TOP_K`, sorted by page id (for membership tests).
    top: Vec<PageId>,
}

impl LiveList {
    /// Whether `page`'s live copy matches the query (is in the live result list).
    fn matches(&self, page: PageId) -> bool {
        self.by_page
            .binary_search_by_key(&page, |&(p, _)| p)
            .is_ok()
    }

    fn score(&self, page: PageId) -> Score {
        match self.by_page.binary_search_by_key(&page, |&(p, _)| p) {
            Ok(i) => self.by_page[i].1,
            Err(_) => 0.0,
        }
    }
}

/// The policy-independent live side of the metrics at one unit. See the module docs.
#[derive(Debug, Clone)]
pub struct LiveTruth {
    pub unit: Unit,
    lists: Vec<LiveList>,
    /// Denominator of Eq. 5: the quality an engine synchronised with the live Web would give.
    pub ideal: f64,
    /// Per page, the unit of its live version (`None`: no live copy): freshness in one lookup
    /// instead of a search of the page's timeline.
    versions: Vec<Option<Unit>>,
}

impl LiveTruth {
    /// Computes the live lists of every query (in parallel).
    pub fn compute(
        live: &LiveScores,
        queries: &[MetricQuery],
        likelihood: &ViewingLikelihood,
    ) -> Self {
        Self::compute_with(&mut RankMemory::default(), live, queries, likelihood)
    }

    /// [`compute`](Self::compute) for the next unit of a live Web whose earlier unit was
    /// computed with the same `memory`: each list is ranked from its previous order (see
    /// [`RankMemory`]); the result is the same, bit for bit.
    ///
    /// The ideal quality reads the scores in descending order and the relevant set is the top
    /// 10 of the full ranking, so both come from one ranked list.
    pub fn compute_with(
        memory: &mut RankMemory,
        live: &LiveScores,
        queries: &[MetricQuery],
        likelihood: &ViewingLikelihood,
    ) -> Self {
        Self::compute_and_rank(memory, live, queries, likelihood, None).0
    }

    /// [`compute_with`](Self::compute_with), and with `ranks` each list's length and live
    /// scores at `ranks(len)` ([`ScoresAtRanks`]): what a score-to-rank fit on a repository
    /// holding the live Web of this unit reads.
    pub fn compute_and_rank(
        memory: &mut RankMemory,
        live: &LiveScores,
        queries: &[MetricQuery],
        likelihood: &ViewingLikelihood,
        ranks: Option<&RanksWanted>,
    ) -> (Self, Option<ScoresAtRanks>) {
        let forward = live.forward();
        let table = likelihood_table(likelihood, forward.num_docs() as usize);
        let terms: Vec<&[TermId]> = queries.iter().map(|q| q.terms.as_slice()).collect();
        let prepared = memory.prepare(forward, live.scorer(), &terms);
        let edits = &prepared.edits;
        type Ranked = Option<(usize, Vec<Score>)>;
        let lists: Vec<(LiveList, f64, Ranked)> = queries
            .par_iter()
            .zip(memory.orders.par_iter_mut())
            .zip(memory.matches.lists.par_iter_mut())
            .enumerate()
            .map(|(qi, ((q, order), matches))| {
                SCRATCH.with(|cell| {
                    let scratch = &mut *cell.borrow_mut();
                    scratch.rank(order, |list| {
                        matches.for_each_scored(forward, live.scorer(), qi, edits, |p, s, h| {
                            list.push(p, rank_key(s, h, p), s);
                        })
                    });
                    // Scored in page order; collected once its length is known.
                    let by_page: Vec<(PageId, Score)> = scratch
                        .matched
                        .iter()
                        .map(|&p| (p, scratch.value_of(p)))
                        .collect();
                    let ideal: f64 = order
                        .iter()
                        .enumerate()
                        .map(|(r, &p)| table.at(r) * f64::from(scratch.value_of(p)))
                        .sum();
                    let mut top: Vec<PageId> = order[..order.len().min(TOP_K)].to_vec();
                    top.sort_unstable();
                    let at_ranks = ranks.map(|ranks| scratch.scores_at_ranks(order, ranks));
                    (LiveList { by_page, top }, q.frequency * ideal, at_ranks)
                })
            })
            .collect();
        memory.ranked_all(&prepared, live.scorer());
        let ideal = lists.iter().map(|(_, i, _)| i).sum();
        let at_ranks = ranks.map(|_| {
            lists
                .iter()
                .map(|(_, _, r)| r.clone().unwrap_or_default())
                .collect()
        });
        let truth = LiveTruth {
            unit: live.unit(),
            lists: lists.into_iter().map(|(l, _, _)| l).collect(),
            ideal,
            versions: live.held_versions().to_vec(),
        };
        (truth, at_ranks)
    }

    /// The live top 10 of query number `query`, sorted by page id: its relevant pages.
    pub fn relevant(&self, query: usize) -> &[PageId] {
        &self.lists[query].top
    }

    /// `S(W_t[p], q)` of query number `query`.
    pub fn live_score(&self, query: usize, page: PageId) -> Score {
        self.lists[query].score(page)
    }

    /// Whether a repository copy of `page` captured at unit `held` (`None`: no copy) is the
    /// live version at this unit: [`crate::corpus::is_fresh`], by one lookup.
    pub fn is_fresh(&self, page: PageId, held: Option<Unit>) -> bool {
        held == self.versions.get(page as usize).copied().flatten()
    }

    /// Approximate heap bytes held (for sizing comparison caches).
    pub fn memory_bytes(&self) -> usize {
        let lists: usize = self
            .lists
            .iter()
            .map(|l| l.by_page.len() * 8 + l.top.len() * 4 + std::mem::size_of::<LiveList>())
            .sum();
        lists + self.versions.len() * std::mem::size_of::<Option<Unit>>()
    }
}

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
/// It also keeps each query's match list ([`MatchLists`]), patched with the pages edited since
/// the last evaluation on the same index instead of intersecting posting lists again; the
/// lists it reads are those of a fresh intersection, bit for bit, whatever it held.
#[derive(Debug, Clone, Default)]
pub struct RankMemory {
    /// Per query (by position): the pages of its last ranked list, best first.
    orders: Vec<Vec<PageId>>,
    matches: MatchLists,
    /// The index state and scoring under which every list of `orders` was last ranked in
    /// full (`None`: not known to be any state's ranking).
    ranked: Option<(EditMark, ScoringKind)>,
}

/// What [`RankMemory::prepare`] found.
struct Prepared {
    edits: Edits,
    /// Every kept order is already the ranking of its list on this index under this scoring:
    /// the index was not edited since the memory's last full ranking (the queries, the index
    /// state and the scoring are the same), so neither a score nor an order can differ.
    still_ranked: bool,
}

impl RankMemory {
    /// One (possibly empty) order and match list per query of `queries`, and what `forward`
    /// edited since the last evaluation.
    ///
    /// Protocol: after `prepare`, the caller ranks every list and then calls
    /// [`ranked_all`](Self::ranked_all), or — when `still_ranked` — may leave every order as
    /// it is and call it all the same. Until then the memory claims no ranking.
    fn prepare(
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
    fn ranked_all(&mut self, prepared: &Prepared, scorer: &dyn Scorer) {
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
    fn rank_each<R: Send>(
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
struct Scratch {
    /// The page's rank key in the current list.
    key: Vec<u128>,
    /// The value carried with the page (its live score).
    value: Vec<Score>,
    /// `epoch` when the page matches the current list, `epoch + 1` once laid out.
    stamp: Vec<u32>,
    epoch: u32,
    /// Pages of the current list in the order they were scored.
    matched: Vec<PageId>,
    /// The current list's keys being ranked.
    keys: Vec<u128>,
}

/// What a list's scoring pass hands to [`Scratch::rank`], page by page.
struct Collect<'a> {
    key: &'a mut Vec<u128>,
    value: &'a mut Vec<Score>,
    stamp: &'a mut Vec<u32>,
    matched: &'a mut Vec<PageId>,
    epoch: u32,
}

impl Collect<'_> {
    /// `page` matches with rank key `key`, carrying `value`.
    #[inline]
    fn push(&mut self, page: PageId, key: u128, value: Score) {
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
fn make_room(key: &mut Vec<u128>, value: &mut Vec<Score>, stamp: &mut Vec<u32>, i: usize) {
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
    fn rank(&mut self, order: &mut Vec<PageId>, score_all: impl FnOnce(&mut Collect<'_>)) {
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
    fn next_epoch(&mut self) -> u32 {
        if self.epoch >= u32::MAX - 2 {
            self.stamp.fill(0);
            self.epoch = 0;
        }
        self.epoch += 2;
        self.epoch
    }

    /// `page` carries `value` under `epoch` (see [`carried`](Self::carried)).
    #[inline]
    fn carry(&mut self, page: PageId, epoch: u32, value: Score) {
        let i = page as usize;
        make_room(&mut self.key, &mut self.value, &mut self.stamp, i);
        self.value[i] = value;
        self.stamp[i] = epoch;
    }

    /// The value `page` carries under `epoch`; 0 when it carries none.
    #[inline]
    fn carried(&self, page: PageId, epoch: u32) -> Score {
        match self.stamp.get(page as usize) {
            Some(&s) if s == epoch => self.value[page as usize],
            _ => 0.0,
        }
    }

    /// The value carried by `page` in the list last ranked.
    fn value_of(&self, page: PageId) -> Score {
        self.value[page as usize]
    }

    /// The length of the list last ranked (`order`) and the scores it was ranked by at the
    /// 1-based ranks `ranks(len)`.
    fn scores_at_ranks(&self, order: &[PageId], ranks: &RanksWanted) -> (usize, Vec<Score>) {
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
fn sort_nearly_sorted(keys: &mut [u128]) {
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
const MIN_KEYS_PER_DESCENT: usize = 16;

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// The metrics of one repository state against the live Web at one unit.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct UnitMetrics {
    pub unit: Unit,
    /// Quality (paper 003 Eq. 5), top-10 freshness and MAP@10 against the live top 10.
    #[serde(flatten)]
    pub search: SearchQuality,
    /// Retrieval nDCG@10 against the live top 10, binary gains (trec_eval's `ndcg_cut_10`).
    pub ndcg_at_10: f64,
    /// Precision at 10 against the live top 10 (trec_eval's `P_10`).
    pub p_at_10: f64,
    /// Numerator of Eq. 5 (absolute quality), for ΔQ comparisons.
    pub absolute_quality: f64,
    /// Paper 000's top-k freshness and MAP@10 variants.
    #[serde(flatten)]
    pub paper000: Paper000Measures,
}

/// Paper 000's variants of top-10 freshness and MAP@10 (see the module docs), beside the
/// project's `fresh_at_10` and `map_at_10`.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Paper000Measures {
    /// Top-k freshness with `k = 10` fixed (paper 000 Eq. 8, [`top_k_freshness`]).
    pub fresh_at_10_fixed_k: f64,
    /// MAP@10 against the live top 10, normalised by the relevant results retrieved (paper 000
    /// Eq. 9, [`average_precision_retrieved`]).
    pub map_at_10_retrieved: f64,
    /// MAP@10 with `τ = 0` relevance (the live copy still matches the query), normalised by
    /// the relevant results retrieved: paper 000's closest automatic proxy.
    pub map_at_10_tau0: f64,
}

impl Paper000Measures {
    /// The component-wise mean (`None` for no items), summed in item order.
    pub fn mean_of(items: impl ExactSizeIterator<Item = Paper000Measures> + Clone) -> Option<Self> {
        let n = items.len();
        if n == 0 {
            return None;
        }
        let mean =
            |f: fn(&Paper000Measures) -> f64| items.clone().map(|m| f(&m)).sum::<f64>() / n as f64;
        Some(Paper000Measures {
            fresh_at_10_fixed_k: mean(|m| m.fresh_at_10_fixed_k),
            map_at_10_retrieved: mean(|m| m.map_at_10_retrieved),
            map_at_10_tau0: mean(|m| m.map_at_10_tau0),
        })
    }
}

/// Top-k freshness of one result list, paper 000 Eq. (8) (reconstructed, SEED-SYSTEMS §1.1):
/// `freshness@k(q) = (1/k)·Σ_{i=1}^{k} F(p_i, t)`, `F = 1` when the repository copy of the
/// `i`-th result is the live one. Divides by `k` even when the list is shorter (the project's
/// `fresh_at_10` divides by `min(k, n)`). 0 when `k = 0`.
pub fn top_k_freshness(fresh: &[bool], k: usize) -> f64 {
    if k == 0 {
        return 0.0;
    }
    fresh.iter().take(k).filter(|&&f| f).count() as f64 / k as f64
}

/// Average precision of one ranked list normalised by the relevant results *retrieved*, paper
/// 000 Eq. (9) (reconstructed, SEED-SYSTEMS §1.1): `AP@k = Σ_{i≤k} P@i·rel_i / Σ_{i≤k} rel_i`,
/// `P@i = (1/i)·Σ_{j≤i} rel_j`, over the first `k` = [`TOP_K`] entries of `relevance`; 0 when no
/// retrieved result is relevant.
pub fn average_precision_retrieved(relevance: &[bool]) -> f64 {
    let (mut hits, mut sum) = (0usize, 0.0);
    for (i, _) in relevance.iter().take(TOP_K).enumerate().filter(|(_, &r)| r) {
        hits += 1;
        sum += hits as f64 / (i + 1) as f64;
    }
    if hits == 0 {
        0.0
    } else {
        sum / hits as f64
    }
}

/// trec_eval's per-query retrieval measures of one result list at cut-off 10.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct RetrievalMeasures {
    /// `map_cut_10`: Σ precision at each relevant result in the top 10, over all relevant.
    pub ap: f64,
    /// `ndcg_cut_10`: DCG of the top 10 (gain 1 per relevant result, discount
    /// `log2(rank + 1)`) over the ideal DCG of the relevant set cut at 10.
    pub ndcg: f64,
    /// `P_10`: relevant results in the top 10, over 10 (even if fewer were returned).
    pub precision: f64,
}

/// The measures of the ranked list `top` (at most [`TOP_K`] pages, best first) against the
/// relevant pages `relevant` (sorted, non-empty), as trec_eval computes them.
pub fn retrieval_measures(top: &[PageId], relevant: &[PageId]) -> RetrievalMeasures {
    debug_assert!(!relevant.is_empty());
    let (mut hits, mut ap, mut dcg) = (0usize, 0.0, 0.0);
    for (k, page) in top.iter().take(TOP_K).enumerate() {
        if relevant.binary_search(page).is_ok() {
            hits += 1;
            ap += hits as f64 / (k + 1) as f64;
            dcg += 1.0 / ((k + 2) as f64).log2();
        }
    }
    let ideal: f64 = (0..relevant.len().min(TOP_K))
        .map(|k| 1.0 / ((k + 2) as f64).log2())
        .sum();
    RetrievalMeasures {
        ap: ap / relevant.len() as f64,
        ndcg: dcg / ideal,
        precision: hits as f64 / TOP_K as f64,
    }
}

/// Evaluates the repository (its forward index and scorer) against `truth`.
///
/// `is_fresh(p)` says whether the repository's copy of `p` is the live version at this unit
/// (the simulator knows which version it fetched).
pub fn evaluate(
    repository: &ForwardIndex,
    scorer: &dyn Scorer,
    queries: &[MetricQuery],
    truth: &LiveTruth,
    likelihood: &ViewingLikelihood,
    is_fresh: &(dyn Fn(PageId) -> bool + Sync),
) -> UnitMetrics {
    evaluate_with(
        &mut RankMemory::default(),
        repository,
        scorer,
        queries,
        truth,
        likelihood,
        is_fresh,
    )
}

/// [`evaluate`], ranking each list from its order at the previous evaluation with the same
/// `memory` (see [`RankMemory`]): a run evaluating its repository unit after unit passes one
/// memory throughout. The metrics are those of [`evaluate`], bit for bit.
pub fn evaluate_with(
    memory: &mut RankMemory,
    repository: &ForwardIndex,
    scorer: &dyn Scorer,
    queries: &[MetricQuery],
    truth: &LiveTruth,
    likelihood: &ViewingLikelihood,
    is_fresh: &(dyn Fn(PageId) -> bool + Sync),
) -> UnitMetrics {
    let lists = EvaluatedLists {
        repository,
        scorer,
        queries,
    };
    evaluate_and_rank(memory, &lists, truth, likelihood, is_fresh, None).0
}

/// The repository lists an evaluation ranks: `queries`' lists in `repository` under `scorer`.
pub struct EvaluatedLists<'a> {
    pub repository: &'a ForwardIndex,
    pub scorer: &'a dyn Scorer,
    pub queries: &'a [MetricQuery],
}

/// [`evaluate_with`], and with `ranks` each query's list length and repository scores at
/// `ranks(len)` ([`ScoresAtRanks`], in `queries` order): the metrics are the same bit for bit.
pub fn evaluate_and_rank(
    memory: &mut RankMemory,
    lists: &EvaluatedLists<'_>,
    truth: &LiveTruth,
    likelihood: &ViewingLikelihood,
    is_fresh: &(dyn Fn(PageId) -> bool + Sync),
    ranks: Option<&RanksWanted>,
) -> (UnitMetrics, Option<ScoresAtRanks>) {
    let EvaluatedLists {
        repository,
        scorer,
        queries,
    } = *lists;
    struct PerQuery {
        absolute: f64,
        fresh: Option<f64>,
        retrieval: Option<RetrievalMeasures>,
        paper000: Option<Paper000Measures>,
        at_ranks: Option<(usize, Vec<Score>)>,
    }
    let table = likelihood_table(likelihood, repository.num_docs() as usize);
    let terms: Vec<&[TermId]> = queries.iter().map(|q| q.terms.as_slice()).collect();
    let prepared = memory.prepare(repository, scorer, &terms);
    // A repository not edited since this memory's last evaluation (never refreshed, or a run
    // whose budget is spent) keeps every ranking: only the live credits are new. The
    // score-to-rank fit reads repository scores, so it takes the full path.
    let keep_rankings = prepared.still_ranked && ranks.is_none();
    let edits = &prepared.edits;
    let per_query: Vec<PerQuery> = queries
        .par_iter()
        .zip(memory.orders.par_iter_mut())
        .zip(memory.matches.lists.par_iter_mut())
        .enumerate()
        .map(|(qi, ((q, order), matches))| {
            let live = &truth.lists[qi];
            let (absolute, at_ranks) = if keep_rankings {
                (live_credit_of_ranking(live, &table, order), None)
            } else {
                let ranking = ListRanking {
                    repository,
                    scorer,
                    query: (qi, q),
                    kept: Some((matches, edits)),
                };
                ranked_with_live_credit(ranking, live, &table, order, ranks)
            };
            let top = &order[..order.len().min(TOP_K)];
            let fresh_top: Vec<bool> = top.iter().map(|&p| is_fresh(p)).collect();
            let fresh = (!top.is_empty())
                .then(|| fresh_top.iter().filter(|&&f| f).count() as f64 / top.len() as f64);
            let retrieval = (!live.top.is_empty()).then(|| retrieval_measures(top, &live.top));
            let paper000 = (!top.is_empty()).then(|| {
                let strict: Vec<bool> = top
                    .iter()
                    .map(|p| live.top.binary_search(p).is_ok())
                    .collect();
                let matching: Vec<bool> = top.iter().map(|&p| live.matches(p)).collect();
                Paper000Measures {
                    fresh_at_10_fixed_k: top_k_freshness(&fresh_top, TOP_K),
                    map_at_10_retrieved: average_precision_retrieved(&strict),
                    map_at_10_tau0: average_precision_retrieved(&matching),
                }
            });
            PerQuery {
                absolute: q.frequency * absolute,
                fresh,
                retrieval,
                paper000,
                at_ranks,
            }
        })
        .collect();
    memory.ranked_all(&prepared, scorer);
    let absolute_quality: f64 = per_query.iter().map(|p| p.absolute).sum();
    let mean = |values: Vec<f64>| {
        if values.is_empty() {
            1.0
        } else {
            values.iter().sum::<f64>() / values.len() as f64
        }
    };
    let metrics = UnitMetrics {
        unit: truth.unit,
        search: SearchQuality {
            quality: if truth.ideal > 0.0 {
                absolute_quality / truth.ideal
            } else {
                1.0
            },
            fresh_at_10: mean(per_query.iter().filter_map(|p| p.fresh).collect()),
            map_at_10: mean(
                per_query
                    .iter()
                    .filter_map(|p| p.retrieval.map(|r| r.ap))
                    .collect(),
            ),
        },
        ndcg_at_10: mean(
            per_query
                .iter()
                .filter_map(|p| p.retrieval.map(|r| r.ndcg))
                .collect(),
        ),
        p_at_10: mean(
            per_query
                .iter()
                .filter_map(|p| p.retrieval.map(|r| r.precision))
                .collect(),
        ),
        absolute_quality,
        paper000: {
            let shown: Vec<Paper000Measures> =
                per_query.iter().filter_map(|p| p.paper000).collect();
            // No query with a result: nothing shown is stale or irrelevant (as the others).
            Paper000Measures::mean_of(shown.iter().copied()).unwrap_or(Paper000Measures {
                fresh_at_10_fixed_k: 1.0,
                map_at_10_retrieved: 1.0,
                map_at_10_tau0: 1.0,
            })
        },
    };
    let at_ranks = ranks.map(|_| {
        per_query
            .into_iter()
            .map(|p| p.at_ranks.unwrap_or_default())
            .collect()
    });
    (metrics, at_ranks)
}

/// Ranks the repository's result list of `q` into `order` (which holds its previous ranking,
/// see [`RankMemory`]) and credits each result with its live score: returns
/// `Σ_r I(r)·S(W_t[p_r], q)` (the query's term of Eq. 5's numerator, before `f_q`).
///
/// The list is scored in page order and joined with the live scores (also in page order) by a
/// merge; each page's live score waits in the per-thread scratch until the list is ranked.
///
/// With `ranks`, also the list's repository scores at the 1-based ranks `ranks(len)` (what a
/// score-to-rank fit reads; see [`ScoresAtRanks`]).
fn ranked_with_live_credit(
    ranking: ListRanking<'_>,
    live: &LiveList,
    table: &LikelihoodTable<'_>,
    order: &mut Vec<PageId>,
    ranks: Option<&RanksWanted>,
) -> (f64, Option<(usize, Vec<Score>)>) {
    let ListRanking {
        repository,
        scorer,
        query: (qi, q),
        kept,
    } = ranking;
    SCRATCH.with(|cell| {
        let scratch = &mut *cell.borrow_mut();
        scratch.rank(order, |list| {
            let mut j = 0;
            let push = |page: PageId, score: Score, url_hash: u64| {
                // Both lists ascend by page and mostly hold the same pages: a linear merge
                // (O(n + m) per list) rather than a binary search per page.
                while live.by_page.get(j).is_some_and(|&(p, _)| p < page) {
                    j += 1;
                }
                let live_score = match live.by_page.get(j) {
                    Some(&(p, s)) if p == page => s,
                    _ => 0.0,
                };
                list.push(page, rank_key(score, url_hash, page), live_score);
            };
            match kept {
                Some((matches, edits)) => {
                    matches.for_each_scored(repository, scorer, qi, edits, push)
                }
                None => repository.for_each_scored(scorer, &q.terms, push),
            }
        });
        let credit = order
            .iter()
            .enumerate()
            .map(|(r, &p)| table.at(r) * f64::from(scratch.value_of(p)))
            .sum();
        let at_ranks = ranks.map(|ranks| scratch.scores_at_ranks(order, ranks));
        (credit, at_ranks)
    })
}

/// `Σ_r I(r)·S(W_t[p_r], q)` of a list already ranked (`order`): what
/// [`ranked_with_live_credit`] returns for it, bit for bit (the same terms summed in the same
/// order), without scoring or ranking it again. The live scores wait in the per-thread
/// scratch, page-indexed, for the pass in rank order.
fn live_credit_of_ranking(live: &LiveList, table: &LikelihoodTable<'_>, order: &[PageId]) -> f64 {
    SCRATCH.with(|cell| {
        let scratch = &mut *cell.borrow_mut();
        let epoch = scratch.next_epoch();
        for &(page, score) in &live.by_page {
            scratch.carry(page, epoch, score);
        }
        order
            .iter()
            .enumerate()
            .map(|(r, &p)| table.at(r) * f64::from(scratch.carried(p, epoch)))
            .sum()
    })
}

/// One repository list to rank: query number `query.0`, from its kept match list brought up
/// to date with the edits of this evaluation, or (`kept: None`) from the posting lists.
struct ListRanking<'a> {
    repository: &'a ForwardIndex,
    scorer: &'a dyn Scorer,
    query: (usize, &'a MetricQuery),
    kept: Option<(&'a mut QueryMatches, &'a Edits)>,
}

/// The 1-based ranks of a list of a given length that a score-to-rank fit reads (ascending,
/// within `1..=len`).
pub type RanksWanted = dyn Fn(usize) -> Vec<usize> + Sync;

/// Per workload query (by position): the length of its repository list and the list's scores
/// at the ranks [`RanksWanted`] names — what a score-to-rank fit reads, equal bit for bit to
/// [`RankMemory::scores_at_ranks`] on the same repository. An evaluation ranks every list
/// anyway, so it hands these over ([`evaluate_and_rank`]) instead of the ΔQ estimate ranking
/// the same lists again before the next unit.
pub type ScoresAtRanks = Vec<(usize, Vec<Score>)>;

/// The part of Eq. 5's numerator that the queries numbered `indices` contribute:
/// `Σ_{q ∈ indices} f_q Σ_r I(r)·S(W_t[p_r], q)` over the repository's ranked lists, each
/// result credited with its live score at `truth`'s unit. Summed in `indices` order.
///
/// The difference of this sum before and after one page's refresh, over the queries the
/// refresh can affect, is that refresh's exact `ΔQ_A(p, t)` (paper 003 Eq. 6) under the
/// evaluated metric (see [`super::exact_delta`]).
pub fn absolute_quality_of(
    repository: &ForwardIndex,
    scorer: &dyn Scorer,
    queries: &[MetricQuery],
    indices: &[usize],
    truth: &LiveTruth,
    likelihood: &ViewingLikelihood,
) -> f64 {
    let table = likelihood_table(likelihood, repository.num_docs() as usize);
    indices
        .iter()
        .map(|&qi| {
            let q = &queries[qi];
            let mut order = Vec::new();
            let live = &truth.lists[qi];
            let ranking = ListRanking {
                repository,
                scorer,
                query: (qi, q),
                kept: None,
            };
            let (credit, _) = ranked_with_live_credit(ranking, live, &table, &mut order, None);
            q.frequency * credit
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::{Clock, Corpus, LiveWeb, PageTimeline, Unit};
    use crate::index::testutil::{random_corpus, version};
    use crate::index::{ForwardDoc, ScoringKind};
    use crate::text::{TermId, Vocabulary};

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

    fn queries_of(corpus: &Corpus, terms: &[&str]) -> Vec<MetricQuery> {
        terms
            .iter()
            .filter_map(|t| corpus.vocabulary.get(t))
            .enumerate()
            .map(|(i, id)| MetricQuery {
                terms: vec![id],
                frequency: 1.0 + i as f64,
            })
            .collect()
    }

    #[test]
    fn a_synchronised_repository_is_perfect() {
        let corpus = random_corpus(80, 6, 3);
        let i = ViewingLikelihood::default();
        let queries = queries_of(&corpus, &["emac", "buffer", "lisp", "window", "org"]);
        for kind in [ScoringKind::Bm25, ScoringKind::TfIdf, ScoringKind::InLinks] {
            let live = LiveScores::at(&corpus, 4, kind);
            let truth = LiveTruth::compute(&live, &queries, &i);
            assert!(truth.ideal > 0.0);
            let m = evaluate(live.forward(), live.scorer(), &queries, &truth, &i, &|_| {
                true
            });
            assert!(
                (m.search.quality - 1.0).abs() < 1e-12,
                "{kind}: {}",
                m.search.quality
            );
            assert_eq!(m.search.map_at_10, 1.0);
            assert_eq!(m.search.fresh_at_10, 1.0);
        }
    }

    #[test]
    fn a_stale_repository_by_hand() {
        // Three pages; query "alpha". Live: p0 has alpha ×1, p1 alpha ×3, p2 alpha ×2.
        // Repository (stale): p0 alpha ×4 (stale, ranks first), p1 alpha ×3, p2 lacks alpha.
        let mut v = Vocabulary::new();
        let live_versions = [
            version(&mut v, 0, "", "alpha x x", vec![]),
            version(&mut v, 0, "", "alpha alpha alpha", vec![]),
            version(&mut v, 0, "", "alpha alpha x", vec![]),
        ];
        let stale = [
            version(&mut v, 0, "", "alpha alpha alpha alpha", vec![]),
            live_versions[1].clone(),
            version(&mut v, 0, "", "x x x", vec![]),
        ];
        let corpus = Corpus::from_parts(
            Clock {
                origin: 0,
                unit_seconds: 1,
                units: 1,
            },
            live_versions
                .iter()
                .enumerate()
                .map(|(p, ver)| PageTimeline::new(format!("https://t/{p}"), vec![ver.clone()]))
                .collect(),
            v.clone(),
        );
        let alpha = v.get("alpha").unwrap();
        let queries = vec![MetricQuery {
            terms: vec![alpha],
            frequency: 2.0,
        }];
        let i = ViewingLikelihood::default();
        let live = LiveScores::at(&corpus, 0, ScoringKind::TfIdf);
        let truth = LiveTruth::compute(&live, &queries, &i);
        let mut repo = ForwardIndex::new();
        for (p, ver) in stale.iter().enumerate() {
            repo.put(
                p as PageId,
                ForwardDoc::from_version(corpus.url(p as PageId), ver),
            );
        }
        let scorer = ScoringKind::TfIdf.scorer();
        let m = evaluate(&repo, scorer.as_ref(), &queries, &truth, &i, &|p| p == 1);

        let s = |p: PageId| f64::from(live.score(p, &[alpha]));
        // Live order: p1 (tf 3), p2 (tf 2), p0 (tf 1). Repository order: p0, p1 (p2 absent).
        assert!(s(1) > s(2) && s(2) > s(0));
        let ideal = 2.0 * (i.at(1) * s(1) + i.at(2) * s(2) + i.at(3) * s(0));
        let got = 2.0 * (i.at(1) * s(0) + i.at(2) * s(1));
        assert!((truth.ideal - ideal).abs() < 1e-9);
        assert!(
            (m.search.quality - got / ideal).abs() < 1e-9,
            "{} vs {}",
            m.search.quality,
            got / ideal
        );
        // Top-10 of the repository: p0 (stale), p1 (fresh) → 1/2.
        assert_eq!(m.search.fresh_at_10, 0.5);
        // Relevant = live top 10 = {p0, p1, p2}; repository shows p0 (rel), p1 (rel):
        // AP = (1/1 + 2/2) / 3.
        assert!((m.search.map_at_10 - 2.0 / 3.0).abs() < 1e-12);
        // nDCG@10 = (1 + 1/log2 3) / (1 + 1/log2 3 + 1/log2 4); P@10 = 2/10.
        let l3 = 1.0 / 3f64.log2();
        assert!((m.ndcg_at_10 - (1.0 + l3) / (1.0 + l3 + 0.5)).abs() < 1e-12);
        assert!((m.p_at_10 - 0.2).abs() < 1e-12);
        // Paper 000: freshness over k = 10 fixed → 1/10; both shown results relevant under
        // either relevance → AP over the retrieved = (1/1 + 2/2)/2 = 1.
        assert!((m.paper000.fresh_at_10_fixed_k - 0.1).abs() < 1e-12);
        assert_eq!(m.paper000.map_at_10_retrieved, 1.0);
        assert_eq!(m.paper000.map_at_10_tau0, 1.0);
    }

    #[test]
    fn paper000_relevance_variants_by_hand() {
        // Query "alpha", TF-IDF. Live: page i has i + 1 "alpha" among 13 words (i = 0..11), so
        // the live order is 11, 10, …, 0 and the live top 10 is pages 2..=11. The repository
        // holds the live copies except page 0's, a stale copy of 13 "alpha" that ranks first:
        // its top 10 is 0, 11, 10, …, 3 — page 0 matches live but is not in the live top 10.
        let mut v = Vocabulary::new();
        let text = |k: usize| {
            let mut words = vec!["alpha"; k];
            words.resize(13, "x");
            words.join(" ")
        };
        let live_versions: Vec<_> = (0..12)
            .map(|i| version(&mut v, 0, "", &text(i + 1), vec![]))
            .collect();
        let stale0 = version(&mut v, 0, "", &text(13), vec![]);
        let corpus = Corpus::from_parts(
            Clock {
                origin: 0,
                unit_seconds: 1,
                units: 1,
            },
            live_versions
                .iter()
                .enumerate()
                .map(|(p, ver)| PageTimeline::new(format!("https://t/{p:02}"), vec![ver.clone()]))
                .collect(),
            v.clone(),
        );
        let queries = vec![MetricQuery {
            terms: vec![v.get("alpha").unwrap()],
            frequency: 1.0,
        }];
        let i = ViewingLikelihood::default();
        let live = LiveScores::at(&corpus, 0, ScoringKind::TfIdf);
        let truth = LiveTruth::compute(&live, &queries, &i);
        let mut repo = ForwardIndex::new();
        for (p, ver) in live_versions.iter().enumerate() {
            let ver = if p == 0 { &stale0 } else { ver };
            repo.put(
                p as PageId,
                ForwardDoc::from_version(corpus.url(p as PageId), ver),
            );
        }
        let scorer = ScoringKind::TfIdf.scorer();
        let m = evaluate(&repo, scorer.as_ref(), &queries, &truth, &i, &|p| p != 0);
        // Strict relevance: [0, 1, 1, …, 1] (nine relevant). Σ_{i=2}^{10} P@i = Σ (i−1)/i.
        let sum: f64 = 1.0 / 2.0
            + 2.0 / 3.0
            + 3.0 / 4.0
            + 4.0 / 5.0
            + 5.0 / 6.0
            + 6.0 / 7.0
            + 7.0 / 8.0
            + 8.0 / 9.0
            + 9.0 / 10.0;
        // The project's MAP@10 divides by |live top 10| = 10, paper 000's by the 9 retrieved.
        assert!(
            (m.search.map_at_10 - sum / 10.0).abs() < 1e-12,
            "{}",
            m.search.map_at_10
        );
        assert!((m.paper000.map_at_10_retrieved - sum / 9.0).abs() < 1e-12);
        // τ = 0: page 0's live copy still contains "alpha": all ten relevant.
        assert_eq!(m.paper000.map_at_10_tau0, 1.0);
        // Ten results, nine fresh: both freshness forms give 0.9.
        assert!((m.search.fresh_at_10 - 0.9).abs() < 1e-12);
        assert!((m.paper000.fresh_at_10_fixed_k - 0.9).abs() < 1e-12);
    }

    #[test]
    fn paper000_formulas_by_hand() {
        assert_eq!(top_k_freshness(&[true, false, true], 10), 0.2);
        assert_eq!(top_k_freshness(&[true, true], 2), 1.0);
        assert_eq!(top_k_freshness(&[], 0), 0.0);
        // Relevant at 2 and 4: (1/2 + 2/4) / 2.
        assert_eq!(
            average_precision_retrieved(&[false, true, false, true]),
            0.5
        );
        assert_eq!(average_precision_retrieved(&[false, false]), 0.0);
        // Only the first 10 count: a relevant 11th result changes nothing.
        let mut long = vec![false; 10];
        long.push(true);
        assert_eq!(average_precision_retrieved(&long), 0.0);
    }

    /// The straightforward metrics: every list fully ranked, live scores looked up per hit,
    /// `I(r)` computed per rank. Returns (ideal, per-query live top 10, metrics).
    fn reference(
        repository: &ForwardIndex,
        scorer: &dyn Scorer,
        live: &LiveScores,
        queries: &[MetricQuery],
        i: &ViewingLikelihood,
        is_fresh: &dyn Fn(PageId) -> bool,
    ) -> (f64, Vec<Vec<PageId>>, UnitMetrics) {
        let mut ideal = 0.0;
        let mut tops = Vec::new();
        let (mut absolute_quality, mut fresh, mut aps) = (0.0, Vec::new(), Vec::new());
        let (mut ndcgs, mut precisions) = (Vec::new(), Vec::new());
        let (mut fixed_k, mut retrieved, mut tau0) = (Vec::new(), Vec::new(), Vec::new());
        for q in queries {
            let live_list = live.ranked(&q.terms);
            let q_ideal: f64 = live_list
                .iter()
                .enumerate()
                .map(|(r, h)| i.at(r as u64 + 1) * f64::from(h.score))
                .sum();
            ideal += q.frequency * q_ideal;
            let mut live_top: Vec<PageId> = live_list.iter().take(TOP_K).map(|h| h.page).collect();
            live_top.sort_unstable();
            let live_score = |p: PageId| {
                live_list
                    .iter()
                    .find(|h| h.page == p)
                    .map_or(0.0, |h| h.score)
            };
            let ranked = repository.ranked(scorer, &q.terms);
            let absolute: f64 = ranked
                .iter()
                .enumerate()
                .map(|(r, h)| i.at(r as u64 + 1) * f64::from(live_score(h.page)))
                .sum();
            absolute_quality += q.frequency * absolute;
            let top = &ranked[..ranked.len().min(TOP_K)];
            if !top.is_empty() {
                fresh.push(
                    top.iter().filter(|h| is_fresh(h.page)).count() as f64 / top.len() as f64,
                );
                fixed_k.push(top.iter().filter(|h| is_fresh(h.page)).count() as f64 / 10.0);
                // Paper 000's AP: precision at each relevant result over the relevant retrieved.
                let ap = |relevant: &dyn Fn(PageId) -> bool| {
                    let (mut hits, mut sum) = (0.0, 0.0);
                    for (k, h) in top.iter().enumerate() {
                        if relevant(h.page) {
                            hits += 1.0;
                            sum += hits / (k + 1) as f64;
                        }
                    }
                    if hits > 0.0 {
                        sum / hits
                    } else {
                        0.0
                    }
                };
                retrieved.push(ap(&|p| live_top.contains(&p)));
                tau0.push(ap(&|p| live_list.iter().any(|h| h.page == p)));
            }
            if !live_top.is_empty() {
                let (mut hits, mut sum) = (0usize, 0.0);
                for (k, h) in top.iter().enumerate() {
                    if live_top.contains(&h.page) {
                        hits += 1;
                        sum += hits as f64 / (k + 1) as f64;
                    }
                }
                aps.push(sum / live_top.len() as f64);
                // nDCG@10 and P@10 written out independently of `retrieval_measures`.
                let dcg: f64 = top
                    .iter()
                    .enumerate()
                    .filter(|(_, h)| live_top.contains(&h.page))
                    .map(|(k, _)| 1.0 / (k as f64 + 2.0).log2())
                    .sum();
                let ideal: f64 = (0..live_top.len().min(TOP_K))
                    .map(|k| 1.0 / (k as f64 + 2.0).log2())
                    .sum();
                ndcgs.push(dcg / ideal);
                precisions
                    .push(top.iter().filter(|h| live_top.contains(&h.page)).count() as f64 / 10.0);
            }
            tops.push(live_top);
        }
        let mean = |v: Vec<f64>| {
            if v.is_empty() {
                1.0
            } else {
                v.iter().sum::<f64>() / v.len() as f64
            }
        };
        let metrics = UnitMetrics {
            unit: live.unit(),
            search: SearchQuality {
                quality: if ideal > 0.0 {
                    absolute_quality / ideal
                } else {
                    1.0
                },
                fresh_at_10: mean(fresh),
                map_at_10: mean(aps),
            },
            ndcg_at_10: mean(ndcgs),
            p_at_10: mean(precisions),
            absolute_quality,
            paper000: Paper000Measures {
                fresh_at_10_fixed_k: mean(fixed_k),
                map_at_10_retrieved: mean(retrieved),
                map_at_10_tau0: mean(tau0),
            },
        };
        (ideal, tops, metrics)
    }

    #[test]
    fn optimised_metrics_equal_the_reference_exactly() {
        use rand::{Rng, SeedableRng};
        let corpus = random_corpus(150, 8, 9);
        let n = corpus.vocabulary.len() as TermId;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let mut queries: Vec<MetricQuery> = (0..n)
            .map(|t| MetricQuery {
                terms: vec![t],
                frequency: 1.0 + t as f64,
            })
            .collect();
        for _ in 0..60 {
            let a = rng.gen_range(0..n);
            let b = (a + rng.gen_range(1..n)) % n;
            queries.push(MetricQuery {
                terms: vec![a, b],
                frequency: rng.gen_range(1.0..5.0),
            });
        }
        let i = ViewingLikelihood::default();
        for kind in [ScoringKind::Bm25, ScoringKind::TfIdf, ScoringKind::InLinks] {
            let scorer = kind.scorer();
            for (stale_at, live_at) in [(0, 7), (2, 5), (6, 6)] {
                let live = LiveScores::at(&corpus, live_at, kind);
                let repo = LiveScores::at(&corpus, stale_at, kind);
                let truth = LiveTruth::compute(&live, &queries, &i);
                let fresh = |p: PageId| !p.is_multiple_of(3);
                let m = evaluate(
                    repo.forward(),
                    scorer.as_ref(),
                    &queries,
                    &truth,
                    &i,
                    &fresh,
                );
                let (ideal, tops, want) =
                    reference(repo.forward(), scorer.as_ref(), &live, &queries, &i, &fresh);
                assert_eq!(truth.ideal.to_bits(), ideal.to_bits(), "{kind}");
                let got_tops: Vec<Vec<PageId>> =
                    truth.lists.iter().map(|l| l.top.clone()).collect();
                assert_eq!(got_tops, tops, "{kind}");
                assert_eq!(m, want, "{kind} {stale_at} {live_at}");
                assert_eq!(m.search.quality.to_bits(), want.search.quality.to_bits());
            }
        }
    }

    /// A run's evaluation stream — a repository refreshed a few pages per unit, judged unit
    /// after unit with one [`RankMemory`] (and the live truths computed with another) — gives
    /// exactly the metrics of evaluating each unit from scratch; so does a memory left by an
    /// unrelated repository.
    /// One repository state to evaluate against one unit's live truth.
    struct Evaluation<'a> {
        repo: &'a ForwardIndex,
        scorer: &'a dyn Scorer,
        queries: &'a [MetricQuery],
        truth: &'a LiveTruth,
        likelihood: &'a ViewingLikelihood,
        fresh: &'a (dyn Fn(PageId) -> bool + Sync),
    }

    impl Evaluation<'_> {
        /// Evaluates with `memory` and checks the metrics equal a fresh evaluation's, bit for
        /// bit (`label` names the case); returns them.
        fn with_memory_as_fresh(&self, memory: &mut RankMemory, label: &str) -> UnitMetrics {
            let Evaluation {
                repo,
                scorer,
                queries,
                truth,
                likelihood,
                fresh,
            } = *self;
            let got = evaluate_with(memory, repo, scorer, queries, truth, likelihood, fresh);
            let want = evaluate(repo, scorer, queries, truth, likelihood, fresh);
            assert_eq!(got, want, "{label}");
            assert_eq!(
                got.absolute_quality.to_bits(),
                want.absolute_quality.to_bits(),
                "{label}"
            );
            want
        }
    }

    #[test]
    fn incremental_evaluation_equals_full_re_evaluation() {
        use rand::{Rng, SeedableRng};
        let corpus = random_corpus(160, 9, 23);
        let n = corpus.vocabulary.len() as TermId;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(41);
        let mut queries: Vec<MetricQuery> = (0..n)
            .map(|t| MetricQuery {
                terms: vec![t],
                frequency: 1.0 + f64::from(t % 5),
            })
            .collect();
        for _ in 0..80 {
            let a = rng.gen_range(0..n);
            let b = (a + rng.gen_range(1..n)) % n;
            queries.push(MetricQuery {
                terms: vec![a, b],
                frequency: rng.gen_range(1.0..5.0),
            });
        }
        let i = ViewingLikelihood::default();
        let pages = corpus.page_count() as PageId;
        for kind in [ScoringKind::Bm25, ScoringKind::TfIdf, ScoringKind::InLinks] {
            let scorer = kind.scorer();
            let mut repo = LiveScores::at(&corpus, 0, kind).forward().clone();
            let mut held: Vec<Option<Unit>> = (0..pages)
                .map(|p| corpus.page_at(p, 0).present().map(|v| v.unit))
                .collect();
            let mut live = LiveScores::at(&corpus, 0, kind);
            let (mut live_memory, mut repo_memory) = (RankMemory::default(), RankMemory::default());
            let mut fit_memory = RankMemory::default();
            let (mut reordered, mut refreshed) = (0usize, 0usize);
            for unit in 0..corpus.units() {
                live.advance_to(&corpus, unit);
                let truth = LiveTruth::compute_with(&mut live_memory, &live, &queries, &i);
                let full_truth = LiveTruth::compute(&live, &queries, &i);
                assert_eq!(truth.ideal.to_bits(), full_truth.ideal.to_bits(), "{kind}");
                assert_eq!(truth.lists.len(), full_truth.lists.len());
                for (a, b) in truth.lists.iter().zip(&full_truth.lists) {
                    assert_eq!(a.top, b.top, "{kind} unit {unit}");
                    assert_eq!(a.by_page, b.by_page);
                }
                // Refresh a random fifth of the pages (new pages are crawled as they appear).
                for p in 0..pages {
                    let now = corpus.page_at(p, unit).present();
                    let new_page = held[p as usize].is_none() && now.is_some();
                    if unit > 0 && (new_page || rng.gen_bool(0.2)) {
                        refreshed += usize::from(held[p as usize] != now.map(|v| v.unit));
                        held[p as usize] = now.map(|v| v.unit);
                        repo.set_copy(p, now.map(|v| ForwardDoc::from_version(corpus.url(p), v)));
                    }
                }
                let fresh = |p: PageId| {
                    held[p as usize] == corpus.page_at(p, unit).present().map(|v| v.unit)
                };
                for p in 0..pages {
                    let held = held.get(p as usize).copied().flatten();
                    assert_eq!(
                        truth.is_fresh(p, held),
                        crate::corpus::is_fresh(&corpus, p, held, unit),
                        "page {p} unit {unit}"
                    );
                    assert!(!truth.is_fresh(p, Some(unit + 1)));
                }
                // A page the live Web never had: only "no copy" is fresh.
                assert!(truth.is_fresh(pages + 1, None) && !truth.is_fresh(pages + 1, Some(0)));
                let before: Vec<Vec<PageId>> = repo_memory.orders.clone();
                let stream = Evaluation {
                    repo: &repo,
                    scorer: scorer.as_ref(),
                    queries: &queries,
                    truth: &truth,
                    likelihood: &i,
                    fresh: &fresh,
                };
                let want =
                    stream.with_memory_as_fresh(&mut repo_memory, &format!("{kind} unit {unit}"));
                reordered += before
                    .iter()
                    .zip(&repo_memory.orders)
                    .filter(|(a, b)| !a.is_empty() && a != b)
                    .count();
                // A memory left by another stream: the live Web's lists of this unit.
                let from_foreign = evaluate_with(
                    &mut live_memory.clone(),
                    &repo,
                    scorer.as_ref(),
                    &queries,
                    &truth,
                    &i,
                    &fresh,
                );
                assert_eq!(from_foreign, want, "{kind} unit {unit} (foreign memory)");
                let ranked: Vec<Vec<PageId>> = queries
                    .iter()
                    .map(|q| {
                        repo.ranked(scorer.as_ref(), &q.terms)
                            .iter()
                            .map(|r| r.page)
                            .collect()
                    })
                    .collect();
                assert_eq!(repo_memory.orders, ranked, "{kind} unit {unit}");
                // What a score-to-rank fit reads, from a memory of the previous unit's fit.
                let lists: Vec<&[TermId]> = queries.iter().map(|q| q.terms.as_slice()).collect();
                let ranks = |len: usize| {
                    let mut r: Vec<usize> = [1, 2, len / 3, len / 2, len]
                        .into_iter()
                        .filter(|&r| r >= 1 && r <= len)
                        .collect();
                    r.sort_unstable();
                    r.dedup();
                    r
                };
                let got = fit_memory.scores_at_ranks(&repo, scorer.as_ref(), &lists, ranks);
                // The same, handed over by an evaluation of the repository (with the metrics
                // unchanged).
                let evaluated = EvaluatedLists {
                    repository: &repo,
                    scorer: scorer.as_ref(),
                    queries: &queries,
                };
                let (metrics, handed) = evaluate_and_rank(
                    &mut live_memory.clone(),
                    &evaluated,
                    &truth,
                    &i,
                    &fresh,
                    Some(&ranks),
                );
                assert_eq!(metrics, want, "{kind} unit {unit} (handing over ranks)");
                let handed = handed.expect("ranks were asked for");
                assert_eq!(handed.len(), queries.len());
                let bits = |v: &[Score]| v.iter().map(|s| s.to_bits()).collect::<Vec<_>>();
                for ((q, (len, scores)), (handed_len, handed_scores)) in
                    queries.iter().zip(got).zip(&handed)
                {
                    let (want_len, want) = repo.scores_at_ranks(scorer.as_ref(), &q.terms, ranks);
                    assert_eq!(len, want_len);
                    assert_eq!(bits(&scores), bits(&want), "{kind} unit {unit}");
                    assert_eq!(*handed_len, want_len);
                    assert_eq!(bits(handed_scores), bits(&want), "{kind} unit {unit}");
                }
            }
            // The stream did change lists from unit to unit, so the test exercised re-ranking.
            assert!(
                refreshed > 20 && reordered > 20,
                "{kind}: {refreshed} refreshed, {reordered} reordered"
            );
        }
    }

    #[test]
    fn an_unedited_repository_keeps_its_rankings_and_the_metrics_are_the_same() {
        let corpus = random_corpus(160, 9, 29);
        let n = corpus.vocabulary.len() as TermId;
        let mut queries: Vec<MetricQuery> = (0..n)
            .map(|t| MetricQuery {
                terms: vec![t],
                frequency: 1.0 + f64::from(t % 3),
            })
            .collect();
        queries.extend((0..n.min(40)).map(|t| MetricQuery {
            terms: vec![t, (t + 7) % n],
            frequency: 2.0,
        }));
        let terms: Vec<&[TermId]> = queries.iter().map(|q| q.terms.as_slice()).collect();
        let i = ViewingLikelihood::default();
        for kind in [ScoringKind::Bm25, ScoringKind::TfIdf, ScoringKind::InLinks] {
            let scorer = kind.scorer();
            // The repository holds unit 0 throughout; the live Web moves on.
            let mut repo = LiveScores::at(&corpus, 0, kind).forward().clone();
            let mut live = LiveScores::at(&corpus, 0, kind);
            let mut memory = RankMemory::default();
            let mut kept = 0;
            for unit in 0..corpus.units() {
                live.advance_to(&corpus, unit);
                let truth = LiveTruth::compute(&live, &queries, &i);
                let fresh = |p: PageId| !p.is_multiple_of(3);
                kept += usize::from(memory.ranked == Some((repo.edit_mark(), kind)));
                let stream = Evaluation {
                    repo: &repo,
                    scorer: scorer.as_ref(),
                    queries: &queries,
                    truth: &truth,
                    likelihood: &i,
                    fresh: &fresh,
                };
                stream.with_memory_as_fresh(&mut memory, &format!("{kind} unit {unit}"));
            }
            // Every evaluation after the first found the rankings kept.
            assert_eq!(kept, corpus.units() as usize - 1, "{kind}");
            let truth = LiveTruth::compute(&live, &queries, &i);
            let rank_all =
                |memory: &mut RankMemory, scorer: &dyn Scorer, queries: &[MetricQuery]| {
                    evaluate_with(memory, &repo, scorer, queries, &truth, &i, &|_| true);
                };
            assert!(memory.prepare(&repo, scorer.as_ref(), &terms).still_ranked);
            // Until every list is ranked again the memory claims no ranking.
            assert!(!memory.prepare(&repo, scorer.as_ref(), &terms).still_ranked);
            rank_all(&mut memory, scorer.as_ref(), &queries);
            // Another scoring, other queries, or an edit: the kept orders are no ranking.
            let other = if kind == ScoringKind::Bm25 {
                ScoringKind::TfIdf
            } else {
                ScoringKind::Bm25
            };
            assert!(
                !memory
                    .prepare(&repo, other.scorer().as_ref(), &terms)
                    .still_ranked
            );
            rank_all(&mut memory, scorer.as_ref(), &queries);
            assert!(
                !memory
                    .prepare(&repo, scorer.as_ref(), &terms[1..])
                    .still_ranked
            );
            rank_all(&mut memory, scorer.as_ref(), &queries);
            assert!(memory.prepare(&repo, scorer.as_ref(), &terms).still_ranked);
            rank_all(&mut memory, scorer.as_ref(), &queries);
            let page = repo.pages().next().expect("a page");
            let copy = repo.doc(page).cloned();
            repo.set_copy(page, copy);
            assert!(
                !memory.prepare(&repo, scorer.as_ref(), &terms).still_ranked,
                "{kind}"
            );
        }
    }

    #[test]
    fn no_matching_page_anywhere_counts_as_perfect() {
        let corpus = random_corpus(10, 2, 1);
        let queries = vec![MetricQuery {
            terms: vec![u32::MAX - 1],
            frequency: 1.0,
        }];
        let i = ViewingLikelihood::default();
        let live = LiveScores::at(&corpus, 1, ScoringKind::Bm25);
        let truth = LiveTruth::compute(&live, &queries, &i);
        let m = evaluate(live.forward(), live.scorer(), &queries, &truth, &i, &|_| {
            true
        });
        assert_eq!(
            (m.search.quality, m.search.fresh_at_10, m.search.map_at_10),
            (1.0, 1.0, 1.0)
        );
    }
}
