//! Everything a simulation run reads that does not depend on the refresh policy, computed once
//! per (corpus, workload, scoring) and shared by every run of a comparison.

use rayon::prelude::*;

use crate::corpus::{Corpus, LiveWeb, PageId, PageState, Unit};
use crate::index::{
    changes_at, forward_at, ForwardIndex, IndexError, LiveScores, Repository, ScoreShift, Scorer,
    ScoringKind, ShiftSink, WorkloadTerms,
};
use crate::policy::{ChangeHistory, PageHistory};
use crate::quality::estimate::{DeltaQEstimator, ScoreRankTable};
use crate::quality::exact::{LiveTruth, MetricQuery};
use crate::quality::score_rank::{ScoreRankFn, DEFAULT_PIECES};
use crate::quality::viewing::ViewingLikelihood;

use super::workload::SimWorkload;

/// Settings shared by every run over one environment.
#[derive(Debug, Clone)]
pub struct EnvironmentConfig {
    pub scoring: ScoringKind,
    pub likelihood: ViewingLikelihood,
    /// Pieces of each score-to-rank function F_q.
    pub pieces: usize,
}

impl Default for EnvironmentConfig {
    fn default() -> Self {
        EnvironmentConfig {
            scoring: ScoringKind::Bm25,
            likelihood: ViewingLikelihood::default(),
            pieces: DEFAULT_PIECES,
        }
    }
}

/// The policy-independent part of a simulation. See the module docs.
pub struct Environment<'c> {
    pub corpus: &'c Corpus,
    pub workload: SimWorkload,
    pub config: EnvironmentConfig,
    /// The live side of the exact metrics, per unit `0..units`.
    pub truths: Vec<LiveTruth>,
    /// EBR's weight per page: `Σ_q f_q · I(rank in A(q, W_0))` (how often users are shown p).
    pub view_weight: Vec<f64>,
    /// The repository's forward index at unit 0 (every page present then): where every run
    /// starts, built once and cloned per run.
    pub initial: ForwardIndex,
    /// The true history (oracle mode): change units, shingle changes, and ΔQ_A measured when
    /// every change is refreshed at once (paper 003 §6's forecasting experiment).
    pub history: ChangeHistory,
}

impl<'c> Environment<'c> {
    pub fn new(
        corpus: &'c Corpus,
        workload: SimWorkload,
        config: EnvironmentConfig,
    ) -> Result<Self, IndexError> {
        // Three independent parts, run side by side: each has sequential stretches (advancing
        // the live index, applying the weekly batches) that would leave a core idle alone.
        let ((truths, view_weight), (mut history, measured)) = rayon::join(
            || live_truths(corpus, &workload, &config),
            || {
                rayon::join(
                    || shingle_history(corpus),
                    || {
                        let initial = forward_at(corpus, 0);
                        let measured = measure_from(corpus, initial.clone(), &workload, &config);
                        (initial, measured)
                    },
                )
            },
        );
        let (initial, measured) = measured;
        let measured = measured?;
        for (page, h) in history.pages.iter_mut().enumerate() {
            h.delta_q = h
                .change_units
                .iter()
                .map(|&u| {
                    measured[u as usize]
                        .get(&(page as PageId))
                        .copied()
                        .unwrap_or(0.0)
                })
                .collect();
        }
        Ok(Environment {
            corpus,
            workload,
            config,
            truths,
            view_weight,
            initial,
            history,
        })
    }

    pub fn units(&self) -> Unit {
        self.corpus.units()
    }

    /// Pages present at unit 0 (the initial crawl).
    pub fn initial_pages(&self) -> Vec<PageId> {
        (0..self.corpus.page_count() as PageId)
            .filter(|&p| self.corpus.page_at(p, 0).present().is_some())
            .collect()
    }
}

/// The live side of the exact metrics at every unit, and EBR's view weights at unit 0.
fn live_truths(
    corpus: &Corpus,
    workload: &SimWorkload,
    config: &EnvironmentConfig,
) -> (Vec<LiveTruth>, Vec<f64>) {
    let units = corpus.units();
    let mut live = LiveScores::at(corpus, 0, config.scoring);
    let mut truths = Vec::with_capacity(units as usize);
    for unit in 0..units {
        live.advance_to(corpus, unit);
        truths.push(LiveTruth::compute(
            &live,
            &workload.queries,
            &config.likelihood,
        ));
    }
    live.advance_to(corpus, 0);
    let view_weight = view_weights_of(
        live.forward(),
        live.scorer(),
        corpus.page_count(),
        &workload.queries,
        &config.likelihood,
    );
    (truths, view_weight)
}

/// `Σ_q f_q · I(rank of p in q's results)` for every page, as `forward` ranks them: EBR's
/// weight, of the live Web at unit 0 or of the repository during a run.
pub fn view_weights_of(
    forward: &ForwardIndex,
    scorer: &dyn Scorer,
    pages: usize,
    queries: &[MetricQuery],
    likelihood: &ViewingLikelihood,
) -> Vec<f64> {
    // Lists are ranked in parallel, then summed in query order so that the floating-point sums
    // do not depend on how rayon split the work.
    let lists: Vec<Vec<PageId>> = queries
        .par_iter()
        .map(|q| {
            forward
                .ranked(scorer, &q.terms)
                .iter()
                .map(|hit| hit.page)
                .collect()
        })
        .collect();
    let mut weight = vec![0.0; pages];
    for (q, list) in queries.iter().zip(&lists) {
        for (r, &page) in list.iter().enumerate() {
            if let Some(w) = weight.get_mut(page as usize) {
                *w += q.frequency * likelihood.at(r as u64 + 1);
            }
        }
    }
    weight
}

/// Change units and shingle changes of every page (a new version after the first, or gone).
/// Each present version's shingles are computed once (it is the new copy of one change and the
/// old copy of the next).
fn shingle_history(corpus: &Corpus) -> ChangeHistory {
    use crate::change::shingles::{shingle_change, shingles, DEFAULT_SHINGLE_WIDTH};
    let pages = (0..corpus.page_count() as PageId)
        .into_par_iter()
        .map(|p| {
            let versions = &corpus.timeline(p).versions;
            let mut h = PageHistory::default();
            let of = |v: &crate::corpus::PageVersion| {
                v.is_present()
                    .then(|| shingles(&v.indexed_text(), DEFAULT_SHINGLE_WIDTH))
            };
            let mut previous = versions.first().and_then(of);
            for pair in versions.windows(2) {
                let (old, new) = (&pair[0], &pair[1]);
                let current = of(new);
                let change = match (&previous, &current) {
                    (Some(a), Some(b)) => shingle_change(a, b),
                    (Some(_), None) => 1.0,
                    // Back after being gone: everything it shows is new to the repository.
                    (None, Some(_)) => 1.0,
                    (None, None) => {
                        previous = current;
                        continue;
                    }
                };
                debug_assert_eq!(previous.is_some(), old.is_present());
                h.change_units.push(new.unit);
                h.shingle_changes.push(change);
                previous = current;
            }
            h
        })
        .collect();
    ChangeHistory {
        units: corpus.units(),
        pages,
    }
}

/// Collects the hook's shifts of one batch.
#[derive(Default)]
pub(crate) struct ShiftBuffer {
    pub shifts: Vec<ScoreShift>,
}

impl ShiftSink for ShiftBuffer {
    fn shifts(&mut self, _unit: Unit, shifts: &[ScoreShift]) {
        self.shifts.clear();
        self.shifts.extend_from_slice(shifts);
    }
}

/// Fits F_q for every single-term workload query from the repository's current result lists.
///
/// A fit reads the scores at a handful of ranks only ([`ScoreRankFn::needed_ranks`]), so each
/// list's scores are selected at those ranks rather than the list being ranked; the functions
/// equal those fitted on the fully sorted lists (tested below).
pub(crate) fn fit_table(
    repo: &Repository,
    workload: &SimWorkload,
    pieces: usize,
) -> ScoreRankTable {
    let ids = workload.term_ids();
    let functions: Vec<(u32, ScoreRankFn)> = ids
        .par_iter()
        .filter_map(|&t| {
            let (len, scores) = repo.forward().scores_at_ranks(repo.scorer(), &[t], |len| {
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

/// ΔQ_A per page of a batch, from the hook's shifts (grouped by page).
pub(crate) fn delta_q_by_page(
    shifts: &[ScoreShift],
    table: &ScoreRankTable,
    workload: &SimWorkload,
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

/// ΔQ_A of every change when every change is refreshed in the unit it happens (paper 003 §6),
/// per unit: page → ΔQ_A. Index 0 is empty (the initial crawl).
pub fn measure_every_change(
    corpus: &Corpus,
    workload: &SimWorkload,
    config: &EnvironmentConfig,
) -> Result<Vec<std::collections::HashMap<PageId, f64>>, IndexError> {
    let initial = forward_at(corpus, 0);
    measure_from(corpus, initial, workload, config)
}

/// [`measure_every_change`] from the repository's forward index at unit 0.
fn measure_from(
    corpus: &Corpus,
    initial: ForwardIndex,
    workload: &SimWorkload,
    config: &EnvironmentConfig,
) -> Result<Vec<std::collections::HashMap<PageId, f64>>, IndexError> {
    let mut repo = Repository::forward_only_from(
        initial,
        std::sync::Arc::clone(&corpus.vocabulary),
        config.scoring,
    );
    repo.set_hook(Some(WorkloadTerms::from_ids(workload.term_ids())));
    let estimator = DeltaQEstimator::new(config.likelihood);
    let mut out = vec![std::collections::HashMap::new()];
    let mut sink = ShiftBuffer::default();
    for unit in 1..corpus.units() {
        let table = fit_table(&repo, workload, config.pieces);
        let batch = changes_at(corpus, unit);
        repo.apply(unit, &batch, &mut sink)?;
        out.push(
            delta_q_by_page(&sink.shifts, &table, workload, &estimator)
                .into_iter()
                .collect(),
        );
    }
    Ok(out)
}

/// Whether the repository's copy (the version captured at `held`) is the live version at `unit`.
pub fn is_fresh(corpus: &Corpus, page: PageId, held: Option<Unit>, unit: Unit) -> bool {
    match corpus.page_at(page, unit) {
        PageState::Present(v) => held == Some(v.unit),
        PageState::Gone | PageState::NotYetCreated => held.is_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::testutil::random_corpus;

    #[test]
    fn selected_fits_equal_fits_on_fully_ranked_lists() {
        let corpus = random_corpus(150, 5, 23);
        let mut workload = SimWorkload::default();
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
}
