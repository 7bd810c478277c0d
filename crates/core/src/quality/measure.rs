//! How a refresher learns `ΔQ_A` of the refreshes it applies: the [`MeasureDeltaQ`] seam, with
//! three implementations — [`DeltaQMeasure`], paper 003's single-term estimate from the hook;
//! [`super::multi_term::MultiTermDeltaQMeasure`], the same estimate over the queries as issued
//! (the default); and `refresher_judge::exact_delta::ExactDeltaQMeasure`, the exact value under the
//! evaluated metric (the reference: what any estimate could at best give the policy).
//! [`DeltaQMethod`] names them.
//!
//! [`DeltaQMeasure`]: ΔQ_A of every refreshed page, measured inside index maintenance
//! (paper 003 §5). It is the [`ShiftSink`] the repository's update path pushes the hook's
//! score shifts into, owns the score-to-rank functions `F_t` of the single-term workload and
//! their refit cadence, and turns a batch's shifts into ΔQ_A per page with the paper's
//! estimate ([`DeltaQEstimator`], §5.1, built on Eq. 6–7).
//!
//! # Protocol
//!
//! 1. [`DeltaQMeasure::new`] fits `F_t` on the repository as it stands (before unit 1).
//! 2. Per unit `t`: [`DeltaQMeasure::before_unit`] (refits when due), then the repository's
//!    `apply(t, batch, &mut measure)` pushes the batch's shifts, then
//!    [`DeltaQMeasure::delta_q_by_page`] reads ΔQ_A of that batch.
//!
//! Each `apply` replaces the previous batch's shifts; pages of a batch the hook recorded no
//! shift for (no workload term in either copy, or an unchanged copy) have ΔQ_A = 0.

use std::sync::Arc;

use rayon::prelude::*;

use crate::corpus::{PageId, Unit};
use crate::index::{PageUpdate, Repository, ScoreShift, ShiftSink, WorkloadTerms};
use crate::querylog::term_workload::TermWorkload;
use crate::text::TermId;

use super::estimate::{DeltaQEstimator, ScoreRankTable};
use super::ranking::{RankMemory, ScoresAtRanks};
use super::score_rank::ScoreRankFn;
use super::viewing::ViewingLikelihood;

/// How ΔQ_A is measured (`--delta-q`).
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum DeltaQMethod {
    /// Paper 003's estimate over the workload queries as issued (the default): the hook's
    /// per-term score shifts combined into per-query ones, read through one score-to-rank
    /// function per query ([`super::multi_term`], beyond the paper: its §5.1 future work).
    /// On EmacsWiki it is much closer to the exact ΔQ_A than the single-term estimate.
    #[default]
    #[value(
        alias = "estimate-multi-term",
        help = "Paper 003's estimate over the workload queries as issued (the default): the hook's per-term score shifts combined into per-query ones, read through one score-to-rank function per query (beyond the paper: its §5.1 future work)"
    )]
    #[serde(alias = "estimate-multi-term")]
    Estimate,
    /// Paper 003's estimate as published (§5): every query split into single terms, the
    /// hook's per-term shifts read through one score-to-rank function per term.
    #[value(
        help = "Paper 003's estimate as published (§5): every query split into single terms, each term's score shifts read through its score-to-rank function"
    )]
    EstimateSingleTerm,
    /// The exact ΔQ_A under the evaluated metric: every affected workload query, as issued,
    /// re-ranked before and after the refresh, crediting live scores (Eq. 5–6). A simulation
    /// reference: it reads the live Web.
    #[value(
        help = "The exact ΔQ_A: every affected workload query re-ranked before and after the refresh (Eq. 5–6); a simulation reference that reads the live Web"
    )]
    Exact,
}

impl DeltaQMethod {
    /// The name used on the command line and in outputs.
    pub fn as_str(self) -> &'static str {
        match self {
            DeltaQMethod::Estimate => "estimate",
            DeltaQMethod::EstimateSingleTerm => "estimate-single-term",
            DeltaQMethod::Exact => "exact",
        }
    }
}

/// The ΔQ measurement seam of the refresh loop.
///
/// # Protocol
///
/// Per unit `t`, in this order: [`before_unit`](Self::before_unit) (refits when due), then
/// [`before_apply`](Self::before_apply) with the batch the repository is about to apply, then
/// the repository's `apply(t, batch, sink)` with this measurement as the [`ShiftSink`], then
/// [`delta_q_by_page`](Self::delta_q_by_page) for that batch. The repository handed to
/// `before_apply` is the state the batch applies to; an implementation must not keep
/// references to it. Pages absent from `delta_q_by_page` have ΔQ_A = 0.
pub trait MeasureDeltaQ: ShiftSink + Send {
    /// The method implemented (`None`: nothing is measured, [`NoMeasure`]).
    fn method(&self) -> Option<DeltaQMethod>;

    /// The terms the repository's hook must watch (`None`: the hook stays off).
    fn watched_terms(&self) -> Option<WorkloadTerms>;

    /// The workload measured.
    fn workload(&self) -> &Arc<TermWorkload>;

    /// Called first in each unit, with the repository as it stands.
    fn before_unit(&mut self, repo: &Repository, unit: Unit);

    /// The number of pieces of the score-to-rank functions this measure would refit before
    /// `unit` from the workload queries' lists, when it can take those lists' scores from an
    /// evaluation of the repository instead ([`Self::offer_scores_at_ranks`]); `None` (the
    /// default): it reads nothing offered before `unit`.
    fn refits_from_query_lists(&self, _unit: Unit) -> Option<usize> {
        None
    }

    /// Offers the workload queries' list lengths and scores at the ranks
    /// [`ScoreRankFn::needed_ranks`] names for the pieces [`Self::refits_from_query_lists`]
    /// gave, computed on the repository at `revision` ([`Repository::revision`]). The next
    /// [`Self::before_unit`] fits from them if the repository is still at that revision (the
    /// same functions, bit for bit, as fitting on it) and ignores them otherwise.
    fn offer_scores_at_ranks(&mut self, _revision: u64, _lists: Arc<ScoresAtRanks>) {}

    /// Called with the batch before the repository applies it (a no-op by default).
    fn before_apply(&mut self, _repo: &Repository, _unit: Unit, _batch: &[PageUpdate<'_>]) {}

    /// ΔQ_A per page of the last batch.
    fn delta_q_by_page(&self) -> Vec<(PageId, f64)>;
}

/// See the module docs.
pub struct DeltaQMeasure {
    workload: Arc<TermWorkload>,
    estimator: DeltaQEstimator,
    pieces: usize,
    refit_every: Unit,
    table: ScoreRankTable,
    shifts: Vec<ScoreShift>,
}

impl DeltaQMeasure {
    /// A measure over `workload`'s single terms, with `F_t` of `pieces` pieces fitted on
    /// `repo` now and refitted before every unit `t > 1` with `(t − 1) % refit_every == 0`
    /// (`refit_every = 0`: never refitted).
    pub fn new(
        repo: &Repository,
        workload: Arc<TermWorkload>,
        likelihood: ViewingLikelihood,
        pieces: usize,
        refit_every: Unit,
    ) -> Self {
        let table = fit_table(repo, &workload, pieces);
        DeltaQMeasure {
            workload,
            estimator: DeltaQEstimator::new(likelihood),
            pieces,
            refit_every,
            table,
            shifts: Vec::new(),
        }
    }

    /// The terms the repository's hook must watch for this measure.
    pub fn watched_terms(&self) -> WorkloadTerms {
        WorkloadTerms::from_ids(self.workload.term_ids())
    }

    /// Refits the score-to-rank functions on `repo` when unit `unit`'s cadence says so.
    pub fn before_unit(&mut self, repo: &Repository, unit: Unit) {
        if refit_due(unit, self.refit_every) {
            self.table = fit_table(repo, &self.workload, self.pieces);
        }
    }

    /// The workload measured.
    pub fn workload(&self) -> &Arc<TermWorkload> {
        &self.workload
    }

    /// The functions in use.
    pub fn table(&self) -> &ScoreRankTable {
        &self.table
    }

    /// The last batch's shifts, grouped by page.
    pub fn shifts(&self) -> &[ScoreShift] {
        &self.shifts
    }

    /// ΔQ_A per page of the last batch (pages in shift order).
    pub fn delta_q_by_page(&self) -> Vec<(PageId, f64)> {
        delta_q_by_page(&self.shifts, &self.table, &self.workload, &self.estimator)
    }
}

impl MeasureDeltaQ for DeltaQMeasure {
    fn method(&self) -> Option<DeltaQMethod> {
        Some(DeltaQMethod::EstimateSingleTerm)
    }

    fn watched_terms(&self) -> Option<WorkloadTerms> {
        Some(DeltaQMeasure::watched_terms(self))
    }

    fn workload(&self) -> &Arc<TermWorkload> {
        &self.workload
    }

    fn before_unit(&mut self, repo: &Repository, unit: Unit) {
        DeltaQMeasure::before_unit(self, repo, unit);
    }

    fn delta_q_by_page(&self) -> Vec<(PageId, f64)> {
        DeltaQMeasure::delta_q_by_page(self)
    }
}

impl ShiftSink for DeltaQMeasure {
    fn shifts(&mut self, _unit: Unit, shifts: &[ScoreShift]) {
        self.shifts.clear();
        self.shifts.extend_from_slice(shifts);
    }
}

/// No measurement: the hook stays off and every refresh measures ΔQ_A = 0. For a run whose
/// policy does not read ΔQ_A ([`crate::policy::Reads::delta_q`]) and whose
/// report does not show it (a comparison sweep reports means of the exact metrics only), so
/// that it does not pay for the hook, the refits and the estimate.
pub struct NoMeasure {
    workload: Arc<TermWorkload>,
}

impl NoMeasure {
    /// Measures nothing; `workload` is only what [`MeasureDeltaQ::workload`] answers.
    pub fn new(workload: Arc<TermWorkload>) -> Self {
        NoMeasure { workload }
    }
}

impl MeasureDeltaQ for NoMeasure {
    fn method(&self) -> Option<DeltaQMethod> {
        None
    }

    fn watched_terms(&self) -> Option<WorkloadTerms> {
        None
    }

    fn workload(&self) -> &Arc<TermWorkload> {
        &self.workload
    }

    fn before_unit(&mut self, _repo: &Repository, _unit: Unit) {}

    fn delta_q_by_page(&self) -> Vec<(PageId, f64)> {
        Vec::new()
    }
}

impl ShiftSink for NoMeasure {
    fn shifts(&mut self, _unit: Unit, _shifts: &[ScoreShift]) {}
}

/// Whether score-to-rank functions fitted before unit 1 are refitted before unit `unit`:
/// every `refit_every` units from unit 2 on (`(unit − 1) % refit_every == 0`; `0`: never).
pub(crate) fn refit_due(unit: Unit, refit_every: Unit) -> bool {
    refit_every > 0 && unit > 1 && (unit - 1).is_multiple_of(refit_every)
}

/// Fits F_t for every single-term workload query from the repository's current result lists.
///
/// A fit reads the scores at a handful of ranks only ([`ScoreRankFn::needed_ranks`]), so each
/// list's scores are selected at those ranks rather than the list being ranked; the functions
/// equal those fitted on the fully sorted lists (tested below).
pub(crate) fn fit_table(
    repo: &Repository,
    workload: &TermWorkload,
    pieces: usize,
) -> ScoreRankTable {
    let ids = workload.term_ids();
    let keyed: Vec<(u32, &[TermId])> = ids.iter().map(|t| (*t, std::slice::from_ref(t))).collect();
    fit_keyed(repo, &keyed, pieces)
}

/// Fits `F` on the repository's result list of each item's terms, keyed as `key_terms` says.
pub(crate) fn fit_keyed(
    repo: &Repository,
    keyed: &[(u32, &[TermId])],
    pieces: usize,
) -> ScoreRankTable {
    let functions: Vec<(u32, ScoreRankFn)> = keyed
        .par_iter()
        .filter_map(|&(t, terms)| {
            let (len, scores) = repo.forward().scores_at_ranks(repo.scorer(), terms, |len| {
                ScoreRankFn::needed_ranks(len, pieces)
            });
            let ranks = ScoreRankFn::needed_ranks(len, pieces);
            ScoreRankFn::fit_at(len, pieces, |r| {
                scores[ranks
                    .binary_search(&r)
                    .expect("fit_at reads needed ranks only")]
            })
            .map(|f| (t, f))
        })
        .collect();
    ScoreRankTable::from_functions(functions)
}

/// [`fit_keyed`] for a repository refitted unit after unit: each list is re-ranked from its
/// order at the previous fit with the same `memory` (see [`RankMemory`]), a near-linear pass,
/// instead of one selection per needed rank. The same functions, bit for bit.
pub(crate) fn fit_keyed_with(
    memory: &mut RankMemory,
    repo: &Repository,
    keyed: &[(u32, &[TermId])],
    pieces: usize,
) -> ScoreRankTable {
    let lists: Vec<&[TermId]> = keyed.iter().map(|&(_, terms)| terms).collect();
    let at_ranks = memory.scores_at_ranks(repo.forward(), repo.scorer(), &lists, |len| {
        ScoreRankFn::needed_ranks(len, pieces)
    });
    fit_from_scores_at_ranks(
        keyed.iter().map(|&(key, _)| key).zip(at_ranks.iter()),
        pieces,
    )
}

/// Fits `F` of `pieces` pieces on each keyed list's length and scores at
/// [`ScoreRankFn::needed_ranks`] (as [`RankMemory::scores_at_ranks`] or an evaluation's
/// [`ScoresAtRanks`] give them).
pub(crate) fn fit_from_scores_at_ranks<'a>(
    lists: impl Iterator<Item = (u32, &'a (usize, Vec<crate::index::Score>))>,
    pieces: usize,
) -> ScoreRankTable {
    let functions: Vec<(u32, ScoreRankFn)> = lists
        .filter_map(|(key, (len, scores))| {
            let ranks = ScoreRankFn::needed_ranks(*len, pieces);
            ScoreRankFn::fit_at(*len, pieces, |r| {
                scores[ranks
                    .binary_search(&r)
                    .expect("fit_at reads needed ranks only")]
            })
            .map(|f| (key, f))
        })
        .collect();
    ScoreRankTable::from_functions(functions)
}

/// ΔQ_A per page of a batch, from the hook's shifts (grouped by page).
pub fn delta_q_by_page(
    shifts: &[ScoreShift],
    table: &ScoreRankTable,
    workload: &TermWorkload,
    estimator: &DeltaQEstimator,
) -> Vec<(PageId, f64)> {
    let mut out: Vec<(PageId, f64)> = Vec::new();
    for group in shifts.chunk_by(|a, b| a.page == b.page) {
        let delta = estimator.page_delta(table, group.iter().map(|s| (s.term, s.s1, s.s2)), |t| {
            workload.frequency(t)
        });
        out.push((group[0].page, delta));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::testutil::random_corpus;
    use crate::index::ScoringKind;

    #[test]
    fn selected_fits_equal_fits_on_fully_ranked_lists() {
        let corpus = random_corpus(150, 5, 23);
        let mut workload = TermWorkload::default();
        for t in 0..corpus.vocabulary.len() as u32 + 2 {
            workload.term_frequency.insert(t, 1.0);
        }
        for kind in [ScoringKind::Bm25, ScoringKind::TfIdf, ScoringKind::InLinks] {
            let repo = Repository::forward_only_at(&corpus, 3, kind);
            for pieces in 1..=5 {
                let table = fit_table(&repo, &workload, pieces);
                let reference = ScoreRankTable::fit(
                    workload
                        .term_ids()
                        .into_iter()
                        .map(|t| (t, repo.ranked(&[t]).iter().map(|h| h.score).collect())),
                    pieces,
                );
                assert_eq!(table.len(), reference.len());
                for t in workload.term_ids() {
                    assert_eq!(table.get(t), reference.get(t), "{kind} {pieces} {t}");
                }
            }
        }
    }

    #[test]
    fn refits_follow_the_cadence() {
        let corpus = random_corpus(30, 8, 4);
        let mut workload = TermWorkload::default();
        for t in 0..corpus.vocabulary.len() as u32 {
            workload.term_frequency.insert(t, 1.0);
        }
        let workload = Arc::new(workload);
        let at_0 = Repository::forward_only_at(&corpus, 0, ScoringKind::Bm25);
        let at_5 = Repository::forward_only_at(&corpus, 5, ScoringKind::Bm25);
        let fitted_at_5 = fit_table(&at_5, &workload, 3);
        let mut m = DeltaQMeasure::new(
            &at_0,
            Arc::clone(&workload),
            ViewingLikelihood::default(),
            3,
            3,
        );
        let initial = fit_table(&at_0, &workload, 3);
        // Unit 3: (3 − 1) % 3 ≠ 0, no refit; unit 4: refit.
        m.before_unit(&at_5, 3);
        assert_eq!(m.table().len(), initial.len());
        for t in workload.term_ids() {
            assert_eq!(m.table().get(t), initial.get(t));
        }
        m.before_unit(&at_5, 4);
        for t in workload.term_ids() {
            assert_eq!(m.table().get(t), fitted_at_5.get(t));
        }
    }
}
