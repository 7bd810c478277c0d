//! The live Web's side of the exact metrics ([`LiveTruth`]): per workload query the live
//! score of every page that matches live, the live top 10 and Eq. 5's denominator. Independent
//! of the refresh policy, so a comparison computes it once per unit and shares it.

use super::TOP_K;
use crate::corpus::PageId;
use crate::corpus::Unit;
use crate::index::rank_key;
use crate::index::CollectionStats;
use crate::index::Score;
use crate::live_scores::LiveScores;
use crate::quality::ranking::MetricQuery;
use crate::quality::ranking::RankMemory;
use crate::quality::ranking::RanksWanted;
use crate::quality::ranking::ScoresAtRanks;
use crate::quality::ranking::SCRATCH;
use crate::quality::viewing::likelihood_table;
use crate::quality::viewing::ViewingLikelihood;
use crate::text::TermId;
use rayon::prelude::*;

/// The live side of one query at one unit.
#[derive(Debug, Clone, Default)]
pub(super) struct LiveList {
    /// `(page, live score)` of every page matching live, sorted by page id.
    pub(super) by_page: Vec<(PageId, Score)>,
    /// The live top `TOP_K`, sorted by page id (for membership tests).
    pub(super) top: Vec<PageId>,
}

impl LiveList {
    /// Whether `page`'s live copy matches the query (is in the live result list).
    pub(super) fn matches(&self, page: PageId) -> bool {
        self.by_page
            .binary_search_by_key(&page, |&(p, _)| p)
            .is_ok()
    }

    pub(super) fn score(&self, page: PageId) -> Score {
        match self.by_page.binary_search_by_key(&page, |&(p, _)| p) {
            Ok(i) => self.by_page[i].1,
            Err(_) => 0.0,
        }
    }
}

/// The policy-independent live side of the metrics at one unit. See the module docs.
#[derive(Debug, Clone)]
pub struct LiveTruth {
    pub(crate) unit: Unit,
    pub(super) lists: Vec<LiveList>,
    /// Denominator of Eq. 5: the quality an engine synchronised with the live Web would give.
    pub ideal: f64,
    /// Each query's term of [`Self::ideal`] (`f_q` included; in the workload's order).
    pub query_ideals: Vec<f64>,
    /// Per page, the unit of its live version (`None`: no live copy): freshness in one lookup
    /// instead of a search of the page's timeline.
    pub(super) versions: Vec<Option<Unit>>,
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
        let query_ideals: Vec<f64> = lists.iter().map(|(_, i, _)| *i).collect();
        let ideal = query_ideals.iter().sum();
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
            query_ideals,
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
