//! The repository side of the exact metrics ([`evaluate`], [`evaluate_and_rank`]): each
//! query's result list ranked by repository scores, each page credited with its live score,
//! then every query handed in workload order to the table of metric collectors
//! ([`COLLECTORS`]).

use super::live_truth::LiveList;
use super::live_truth::LiveTruth;
use super::metrics::query_credit;
use super::metrics::FreshnessCollector;
use super::metrics::MetricCollector;
use super::metrics::Paper000Collector;
use super::metrics::QualityCollector;
use super::metrics::QueryView;
use super::metrics::RetrievalCollector;
use super::metrics::UnitMetrics;
use super::TOP_K;
use crate::corpus::PageId;
use crate::index::rank_key;
use crate::index::CollectionStats;
use crate::index::ForwardIndex;
use crate::index::Score;
use crate::index::Scorer;
use crate::quality::match_lists::Edits;
use crate::quality::match_lists::QueryMatches;
use crate::quality::ranking::MetricQuery;
use crate::quality::ranking::RankMemory;
use crate::quality::ranking::RanksWanted;
use crate::quality::ranking::ScoresAtRanks;
use crate::quality::ranking::SCRATCH;
use crate::quality::viewing::likelihood_table;
use crate::quality::viewing::LikelihoodTable;
use crate::quality::viewing::ViewingLikelihood;
use crate::text::TermId;
use rayon::prelude::*;

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
    evaluate_and_rank(memory, &lists, truth, likelihood, is_fresh, None).metrics
}

/// The repository lists an evaluation ranks: `queries`' lists in `repository` under `scorer`.
pub struct EvaluatedLists<'a> {
    pub repository: &'a ForwardIndex,
    pub scorer: &'a dyn Scorer,
    pub queries: &'a [MetricQuery],
}

/// What [`evaluate_and_rank`] found.
#[derive(Debug, Clone)]
pub struct Evaluation {
    pub metrics: UnitMetrics,
    /// Each query's list length and repository scores at the ranks asked for.
    pub at_ranks: Option<ScoresAtRanks>,
    /// Each query's term of Eq. 5's numerator, `f_q·Σ_r I(r)·S(W_t[p_r], q)` (in `queries`
    /// order; their sum is `metrics.absolute_quality`): what a bootstrap over the queries
    /// re-weights ([`crate::quality::bootstrap`]).
    pub query_credits: Vec<f64>,
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
) -> Evaluation {
    let EvaluatedLists {
        repository,
        scorer,
        queries,
    } = *lists;
    let table = likelihood_table(likelihood, repository.num_docs() as usize);
    let terms: Vec<&[TermId]> = queries.iter().map(|q| q.terms.as_slice()).collect();
    let prepared = memory.prepare(repository, scorer, &terms);
    // A repository not edited since this memory's last evaluation (never refreshed, or a run
    // whose budget is spent) keeps every ranking: only the live credits are new. The
    // score-to-rank fit reads repository scores, so it takes the full path.
    let keep_rankings = prepared.still_ranked && ranks.is_none();
    let edits = &prepared.edits;
    type Ranked = (f64, Option<(usize, Vec<Score>)>);
    let ranked: Vec<Ranked> = queries
        .par_iter()
        .zip(memory.orders.par_iter_mut())
        .zip(memory.matches.lists.par_iter_mut())
        .enumerate()
        .map(|(qi, ((q, order), matches))| {
            let live = &truth.lists[qi];
            if keep_rankings {
                (
                    live_credit_of_ranking(q.frequency, live, &table, order),
                    None,
                )
            } else {
                let ranking = ListRanking {
                    repository,
                    scorer,
                    query: (qi, q),
                    kept: Some((matches, edits)),
                };
                ranked_with_live_credit(ranking, live, &table, order, ranks)
            }
        })
        .collect();
    memory.ranked_all(&prepared, scorer);
    let query_credits: Vec<f64> = ranked.iter().map(|&(credit, _)| credit).collect();
    let metrics = unit_metrics(truth, &memory.orders, &query_credits, is_fresh);
    let at_ranks = ranks.map(|_| {
        ranked
            .into_iter()
            .map(|(_, at_ranks)| at_ranks.unwrap_or_default())
            .collect()
    });
    Evaluation {
        metrics,
        at_ranks,
        query_credits,
    }
}

/// [`evaluate`] from rankings made elsewhere: `rankings[i]` is the repository's result list
/// of `queries[i]` in rank order (page ids), as merged from shards
/// ([`crate::index::shards::merge_ranked`]), and `num_docs` the collection's document count.
/// Each query is credited and measured as [`evaluate`] does and the unit's sums are taken in
/// query order, so the metrics equal [`evaluate`]'s on one repository of the same copies, bit
/// for bit.
pub fn evaluate_rankings(
    rankings: &[Vec<PageId>],
    num_docs: u64,
    queries: &[MetricQuery],
    truth: &LiveTruth,
    likelihood: &ViewingLikelihood,
    is_fresh: &(dyn Fn(PageId) -> bool + Sync),
) -> UnitMetrics {
    assert_eq!(rankings.len(), queries.len(), "one ranking per query");
    let table = likelihood_table(likelihood, num_docs as usize);
    let query_credits: Vec<f64> = queries
        .par_iter()
        .zip(rankings.par_iter())
        .enumerate()
        .map(|(qi, (q, order))| {
            live_credit_of_ranking(q.frequency, &truth.lists[qi], &table, order)
        })
        .collect();
    unit_metrics(truth, rankings, &query_credits, is_fresh)
}

/// The collectors of a unit's metrics, one per family of measures (see [`MetricCollector`]);
/// each writes its own fields of [`UnitMetrics`], so their order changes no value. A new
/// measure is its file under `metrics/` and one line here.
const COLLECTORS: &[fn() -> Box<dyn MetricCollector>] = &[
    start::<QualityCollector>,
    start::<FreshnessCollector>,
    start::<RetrievalCollector>,
    start::<Paper000Collector>,
];

/// A new collector of type `C`, for one unit's evaluation.
fn start<C: MetricCollector + Default + 'static>() -> Box<dyn MetricCollector> {
    Box::<C>::default()
}

/// A unit's metrics by the protocol of [`MetricCollector`]: new collectors of [`COLLECTORS`],
/// each handed every query's [`QueryView`] in workload order, then finished. `orders[i]` is
/// query `i`'s repository list (best first) and `credits[i]` its term of paper 003 Eq. 5's
/// numerator.
fn unit_metrics(
    truth: &LiveTruth,
    orders: &[Vec<PageId>],
    credits: &[f64],
    is_fresh: &(dyn Fn(PageId) -> bool + Sync),
) -> UnitMetrics {
    let mut collectors: Vec<Box<dyn MetricCollector>> =
        COLLECTORS.iter().map(|start| start()).collect();
    let mut fresh = Vec::with_capacity(TOP_K);
    for (qi, (order, &credit)) in orders.iter().zip(credits).enumerate() {
        let top = &order[..order.len().min(TOP_K)];
        fresh.clear();
        fresh.extend(top.iter().map(|&p| is_fresh(p)));
        let query = QueryView {
            credit,
            top,
            fresh: &fresh,
            live: &truth.lists[qi],
        };
        for collector in &mut collectors {
            collector.collect(&query);
        }
    }
    let mut metrics = UnitMetrics::unfilled(truth.unit);
    for collector in collectors {
        collector.finish(truth, &mut metrics);
    }
    metrics
}

/// Ranks the repository's result list of `q` into `order` (which holds its previous ranking,
/// see [`RankMemory`]) and credits each result with its live score: returns
/// `f_q·Σ_r I(r)·S(W_t[p_r], q)`, the query's term of Eq. 5's numerator ([`query_credit`]).
///
/// The list is scored in page order and joined with the live scores (also in page order) by a
/// merge; each page's live score waits in the per-thread scratch until the list is ranked.
///
/// With `ranks`, also the list's repository scores at the 1-based ranks `ranks(len)` (what a
/// score-to-rank fit reads; see [`ScoresAtRanks`]).
pub(super) fn ranked_with_live_credit(
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
        let credit = query_credit(q.frequency, order, table, |p| scratch.value_of(p));
        let at_ranks = ranks.map(|ranks| scratch.scores_at_ranks(order, ranks));
        (credit, at_ranks)
    })
}

/// `f_q·Σ_r I(r)·S(W_t[p_r], q)` ([`query_credit`]) of a list already ranked (`order`) of a
/// query of frequency `frequency`: what [`ranked_with_live_credit`] returns for it, bit for
/// bit (the same terms summed in the same order), without scoring or ranking it again. The
/// live scores wait in the per-thread scratch, page-indexed, for the pass in rank order.
pub(super) fn live_credit_of_ranking(
    frequency: f64,
    live: &LiveList,
    table: &LikelihoodTable<'_>,
    order: &[PageId],
) -> f64 {
    SCRATCH.with(|cell| {
        let scratch = &mut *cell.borrow_mut();
        let epoch = scratch.next_epoch();
        for &(page, score) in &live.by_page {
            scratch.carry(page, epoch, score);
        }
        query_credit(frequency, order, table, |p| scratch.carried(p, epoch))
    })
}

/// One repository list to rank: query number `query.0`, from its kept match list brought up
/// to date with the edits of this evaluation, or (`kept: None`) from the posting lists.
pub(super) struct ListRanking<'a> {
    pub(super) repository: &'a ForwardIndex,
    pub(super) scorer: &'a dyn Scorer,
    pub(super) query: (usize, &'a MetricQuery),
    pub(super) kept: Option<(&'a mut QueryMatches, &'a Edits)>,
}

/// The part of Eq. 5's numerator that the queries numbered `indices` contribute:
/// `Σ_{q ∈ indices} f_q Σ_r I(r)·S(W_t[p_r], q)` over the repository's ranked lists, each
/// result credited with its live score at `truth`'s unit. Summed in `indices` order.
///
/// The difference of this sum before and after one page's refresh, over the queries the
/// refresh can affect, is that refresh's exact `ΔQ_A(p, t)` (paper 003 Eq. 6) under the
/// evaluated metric (see [`crate::exact_delta`]).
pub(crate) fn absolute_quality_of(
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
            ranked_with_live_credit(ranking, live, &table, &mut order, None).0
        })
        .sum()
}
