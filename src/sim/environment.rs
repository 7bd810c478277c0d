//! Everything a simulation run reads that does not depend on the refresh policy, computed once
//! per (corpus, workload, scoring) and shared by every run of a comparison.

use std::sync::Arc;

use rayon::prelude::*;

use crate::corpus::{Corpus, LiveWeb, PageId, Unit};
use crate::crawl::SnapshotFetcher;
use crate::index::{forward_at, ForwardIndex, IndexError, LiveScores, Repository, ScoringKind};
use crate::policy::{ChangeHistory, PageHistory};
use crate::quality::exact::LiveTruth;
use crate::quality::measure::DeltaQMeasure;
use crate::quality::score_rank::DEFAULT_PIECES;
use crate::quality::viewing::{view_weights_of, ViewingLikelihood};
use crate::querylog::term_workload::TermWorkload;

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
    /// Shared with every run's ΔQ measurement.
    pub workload: Arc<TermWorkload>,
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
        workload: TermWorkload,
        config: EnvironmentConfig,
    ) -> Result<Self, IndexError> {
        let workload = Arc::new(workload);
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
    workload: &TermWorkload,
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
            let of = |v: &std::sync::Arc<crate::corpus::PageVersion>| {
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

/// ΔQ_A of every change when every change is refreshed in the unit it happens (paper 003 §6),
/// per unit: page → ΔQ_A. Index 0 is empty (the initial crawl).
pub fn measure_every_change(
    corpus: &Corpus,
    workload: &TermWorkload,
    config: &EnvironmentConfig,
) -> Result<Vec<std::collections::HashMap<PageId, f64>>, IndexError> {
    let initial = forward_at(corpus, 0);
    measure_from(corpus, initial, &Arc::new(workload.clone()), config)
}

/// [`measure_every_change`] from the repository's forward index at unit 0.
fn measure_from(
    corpus: &Corpus,
    initial: ForwardIndex,
    workload: &Arc<TermWorkload>,
    config: &EnvironmentConfig,
) -> Result<Vec<std::collections::HashMap<PageId, f64>>, IndexError> {
    let mut repo = Repository::forward_only_from(
        initial,
        std::sync::Arc::clone(&corpus.vocabulary),
        config.scoring,
    );
    // Refit before every unit: each unit's changes are measured against the repository that
    // holds every earlier change.
    let mut measure = DeltaQMeasure::new(
        &repo,
        Arc::clone(workload),
        config.likelihood,
        config.pieces,
        1,
    );
    repo.set_hook(Some(measure.watched_terms()));
    let fetcher = SnapshotFetcher::new(corpus);
    let mut out = vec![std::collections::HashMap::new()];
    for unit in 1..corpus.units() {
        measure.before_unit(&repo, unit);
        let batch = fetcher.changes_at(unit);
        repo.apply(unit, &batch, &mut measure)?;
        out.push(measure.delta_q_by_page().into_iter().collect());
    }
    Ok(out)
}
