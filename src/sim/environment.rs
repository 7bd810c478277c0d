//! Everything a simulation run reads that does not depend on the refresh policy, computed once
//! per (corpus, workload, scoring) and shared by every run of a comparison.

use std::sync::Arc;

use rayon::prelude::*;

use crate::corpus::{Corpus, LiveWeb, PageId, Unit};
use crate::fetch::SnapshotFetcher;
use crate::index::{forward_at, ForwardIndex, IndexError, Repository, ScoringKind};

use crate::judge::exact::{LiveTruth, RankMemory, RanksWanted, ScoresAtRanks};
use crate::judge::exact_delta::ExactDeltaQMeasure;
use crate::judge::live_scores::LiveScores;
use crate::policy::{ChangeHistory, PageHistory};
use crate::quality::measure::{DeltaQMeasure, DeltaQMethod, MeasureDeltaQ};
use crate::quality::multi_term::MultiTermDeltaQMeasure;
use crate::quality::score_rank::{ScoreRankFn, DEFAULT_PIECES};
use crate::quality::viewing::{view_weights_of, ViewingLikelihood};
use crate::querylog::term_workload::TermWorkload;
use crate::signal::publish::PublishedInputs;
use crate::signal::{PublishedSignals, SignalSettings};

use super::shared_evaluations::SharedEvaluations;
use crate::cache::Cache;
use crate::quality::bootstrap::QueryResamples;

/// Settings shared by every run over one environment.
#[derive(Debug, Clone)]
pub struct EnvironmentConfig {
    pub scoring: ScoringKind,
    pub likelihood: ViewingLikelihood,
    /// Pieces of each score-to-rank function F_q.
    pub pieces: usize,
    /// How ΔQ_A is measured, in every run and in the oracle history.
    pub delta_q: DeltaQMethod,
}

impl Default for EnvironmentConfig {
    fn default() -> Self {
        EnvironmentConfig {
            scoring: ScoringKind::Bm25,
            likelihood: ViewingLikelihood::default(),
            pieces: DEFAULT_PIECES,
            delta_q: DeltaQMethod::Estimate,
        }
    }
}

/// The policy-independent part of a simulation. See the module docs.
pub struct Environment<'c> {
    pub(crate) corpus: &'c Corpus,
    /// Shared with every run's ΔQ measurement.
    pub workload: Arc<TermWorkload>,
    pub config: EnvironmentConfig,
    /// The live side of the exact metrics, per unit `0..units` (shared with the exact ΔQ
    /// measurement).
    pub(crate) truths: Arc<Vec<LiveTruth>>,
    /// EBR's weight per page: `Σ_q f_q · I(rank in A(q, W_0))` (how often users are shown p).
    pub(crate) view_weight: Vec<f64>,
    /// The repository's forward index at unit 0 (every page present then), every term's
    /// postings kept: where a refresher whose workload changes starts (the served engine,
    /// [`super::run::refresher_for_changing_workload`]); runs start from
    /// [`Self::run_initial`].
    pub(crate) initial: ForwardIndex,
    /// [`Self::initial`] keeping the postings of the workload's terms only
    /// ([`ForwardIndex::keep_postings_of`]): where runs of this workload start (each clones
    /// it, and each refresh edits the workload's lists only).
    pub(crate) run_initial: ForwardIndex,
    /// The true history (oracle mode): change units, shingle changes, and ΔQ_A measured when
    /// every change is refreshed at once (paper 003 §6's forecasting experiment).
    pub(crate) history: ChangeHistory,
    /// Exact metrics of the repository states runs have reached, shared by every run.
    pub(crate) evaluations: SharedEvaluations,
    /// What the runs compute from the same inputs (PageRanks, shingle sketches, repository
    /// view weights, SBR/EBR schedules), computed once and shared by every run; dropped with
    /// the environment ([`crate::cache`]).
    pub(crate) cache: Arc<Cache>,
    /// The bootstrap's resamples of the workload's queries, drawn the first time a run asks
    /// for intervals ([`Self::query_resamples`]).
    resamples: std::sync::OnceLock<QueryResamples>,
    /// Per unit, the ideal quality (Eq. 5's denominator) under each of those resamples.
    resampled_ideals: dashmap::DashMap<crate::corpus::Unit, Arc<[f64]>>,
}

impl<'c> Environment<'c> {
    pub fn new(
        corpus: &'c Corpus,
        workload: TermWorkload,
        config: EnvironmentConfig,
    ) -> Result<Self, IndexError> {
        let workload = Arc::new(workload);
        // Two independent parts, run side by side: each has sequential stretches (advancing
        // the live index, applying the weekly batches) that would leave a core idle alone.
        // The exact ΔQ_A reads the live truths, so it waits for them.
        //
        // Measuring every change keeps a repository holding the live Web of the previous unit,
        // so the live truths' rankings are the lists its estimate refits on: the truths hand
        // them over ([`measure_from`]) and the measurement waits for them.
        let exact = config.delta_q == DeltaQMethod::Exact;
        let ((live, measured), mut history) = rayon::join(
            || {
                let refit_pieces =
                    (config.delta_q == DeltaQMethod::Estimate).then_some(config.pieces);
                let live = live_truths(corpus, &workload, &config, refit_pieces);
                let measured = (!exact).then(|| {
                    measure_from(
                        corpus,
                        live.initial.clone(),
                        &config,
                        &live.ranked,
                        |repo| measurement(repo, &workload, None, &config, 1),
                    )
                });
                (live, measured)
            },
            || shingle_history(corpus),
        );
        let truths = Arc::new(live.truths);
        let measured = match measured {
            Some(m) => m?,
            None => measure_from(corpus, live.initial.clone(), &config, &[], |repo| {
                measurement(repo, &workload, Some(&truths), &config, 1)
            })?,
        };
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
        let evaluations = SharedEvaluations::default();
        if let Some(views) = live.last_view_weight {
            evaluations.live_view_weights(corpus.units() - 1, || views);
        }
        // Runs read the postings of the workload's terms only: their repositories keep those.
        let mut run_initial = live.initial.clone();
        run_initial.keep_postings_of(workload.all_term_ids());
        Ok(Environment {
            corpus,
            workload,
            config,
            truths,
            view_weight: live.view_weight,
            initial: live.initial,
            run_initial,
            history,
            evaluations,
            cache: Arc::default(),
            resamples: Default::default(),
            resampled_ideals: Default::default(),
        })
    }

    /// The standard resamples of the workload's queries ([`QueryResamples::standard`]), drawn
    /// once: every run of this environment reads the same ones.
    pub fn query_resamples(&self) -> &QueryResamples {
        self.resamples.get_or_init(|| {
            let frequencies: Vec<f64> = self.workload.queries.iter().map(|q| q.frequency).collect();
            QueryResamples::standard(&frequencies)
        })
    }

    /// The ideal quality of `unit` under each of [`Self::query_resamples`], summed once.
    pub fn resampled_ideals(&self, unit: crate::corpus::Unit) -> Arc<[f64]> {
        if let Some(ideals) = self.resampled_ideals.get(&unit) {
            return Arc::clone(&ideals);
        }
        let ideals: Arc<[f64]> = self
            .query_resamples()
            .weighted_sums(&self.truths[unit as usize].query_ideals)
            .into();
        self.resampled_ideals.insert(unit, Arc::clone(&ideals));
        ideals
    }

    /// What the site publishes about its changes under `settings`, drawn with `seed` (`None`
    /// for `none`), shared by the runs of this environment.
    pub fn published_signals(
        &self,
        settings: &SignalSettings,
        seed: u64,
    ) -> Option<Arc<PublishedSignals>> {
        (!settings.is_none()).then(|| {
            PublishedSignals::shared(
                &self.cache,
                &PublishedInputs {
                    corpus: self.corpus,
                    settings,
                    seed,
                },
            )
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

/// What an environment reads off the live Web, unit after unit ([`live_truths`]).
struct LiveSide {
    /// The live side of the exact metrics at every unit.
    truths: Vec<LiveTruth>,
    /// EBR's view weights at unit 0.
    view_weight: Vec<f64>,
    /// When pages appear after unit 0: the view weights at the last unit, which weigh every
    /// run's discovery delays ([`SharedEvaluations::live_view_weights`]). The live index is
    /// there already, where a run would build it from scratch.
    last_view_weight: Option<Vec<f64>>,
    /// With refit pieces: every unit's live lists' scores at the ranks a fit of that many
    /// pieces reads (what [`measure_from`] refits on).
    ranked: Vec<Arc<ScoresAtRanks>>,
    /// The forward index of unit 0, the live index's starting point (built once for both).
    initial: ForwardIndex,
}

/// The [`LiveSide`] of `corpus`, with the lists a fit of `refit_pieces` pieces reads.
fn live_truths(
    corpus: &Corpus,
    workload: &TermWorkload,
    config: &EnvironmentConfig,
    refit_pieces: Option<usize>,
) -> LiveSide {
    let units = corpus.units();
    let (mut live, initial) = LiveScores::at_with_copy(corpus, 0, config.scoring);
    let mut truths = Vec::with_capacity(units as usize);
    let mut ranked = Vec::new();
    let mut memory = RankMemory::default();
    let ranks = refit_pieces.map(|pieces| move |len: usize| ScoreRankFn::needed_ranks(len, pieces));
    for unit in 0..units {
        live.advance_to(corpus, unit);
        let (truth, at_ranks) = LiveTruth::compute_and_rank(
            &mut memory,
            &live,
            &workload.queries,
            &config.likelihood,
            ranks.as_ref().map(|r| r as &RanksWanted),
        );
        truths.push(truth);
        if let Some(lists) = at_ranks {
            ranked.push(Arc::new(lists));
        }
    }
    let views_now = |live: &LiveScores| {
        view_weights_of(
            live.forward(),
            live.scorer(),
            corpus.page_count(),
            &workload.queries,
            &config.likelihood,
        )
    };
    let pages_appear =
        (0..corpus.page_count() as PageId).any(|p| corpus.page_at(p, 0).present().is_none());
    let last_view_weight = pages_appear.then(|| views_now(&live));
    live.advance_to(corpus, 0);
    let view_weight = views_now(&live);
    LiveSide {
        truths,
        view_weight,
        last_view_weight,
        ranked,
        initial,
    }
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
/// per unit: page → ΔQ_A. Index 0 is empty (the initial crawl). Measured with
/// `config.delta_q`, except that the exact method (which needs the live truths of an
/// [`Environment`]) falls back to the default estimate.
pub fn measure_every_change(
    corpus: &Corpus,
    workload: &TermWorkload,
    config: &EnvironmentConfig,
) -> Result<Vec<std::collections::HashMap<PageId, f64>>, IndexError> {
    let initial = forward_at(corpus, 0);
    let workload = Arc::new(workload.clone());
    let config = EnvironmentConfig {
        delta_q: match config.delta_q {
            DeltaQMethod::Exact => DeltaQMethod::Estimate,
            other => other,
        },
        ..config.clone()
    };
    measure_from(corpus, initial, &config, &[], |repo| {
        measurement(repo, &workload, None, &config, 1)
    })
}

/// The ΔQ measurement `config.delta_q` names over `workload`, built on `repo` (the estimates
/// fit their score-to-rank functions on it, refitted every `refit_every` units; the oracle
/// history refits before every unit, so each unit's changes are measured against the
/// repository that holds every earlier change). The exact measurement needs the live truths.
pub fn measurement(
    repo: &Repository,
    workload: &Arc<TermWorkload>,
    truths: Option<&Arc<Vec<LiveTruth>>>,
    config: &EnvironmentConfig,
    refit_every: Unit,
) -> Box<dyn MeasureDeltaQ> {
    let workload = Arc::clone(workload);
    match config.delta_q {
        DeltaQMethod::EstimateSingleTerm => Box::new(DeltaQMeasure::new(
            repo,
            workload,
            config.likelihood,
            config.pieces,
            refit_every,
        )),
        DeltaQMethod::Estimate => Box::new(MultiTermDeltaQMeasure::new(
            repo,
            workload,
            config.likelihood,
            config.pieces,
            refit_every,
        )),
        DeltaQMethod::Exact => Box::new(ExactDeltaQMeasure::new(
            workload,
            Arc::clone(truths.expect("the exact ΔQ measurement reads the live truths")),
            config.likelihood,
        )),
    }
}

/// [`measure_every_change`] from the repository's forward index at unit 0, with the
/// measurement `make` builds on that repository.
///
/// The repository applies every change of every unit, so before unit `t` it holds the live
/// Web of unit `t − 1`: `live_ranked[t − 1]`, when given, are its lists' scores at the ranks
/// the estimate's refit reads, offered to it instead of it ranking them again (the same
/// functions; see [`MeasureDeltaQ::offer_scores_at_ranks`]).
fn measure_from(
    corpus: &Corpus,
    initial: ForwardIndex,
    config: &EnvironmentConfig,
    live_ranked: &[Arc<ScoresAtRanks>],
    make: impl FnOnce(&Repository) -> Box<dyn MeasureDeltaQ>,
) -> Result<Vec<std::collections::HashMap<PageId, f64>>, IndexError> {
    let mut repo = Repository::forward_only_from(
        initial,
        std::sync::Arc::clone(&corpus.vocabulary),
        config.scoring,
    );
    let mut measure = make(&repo);
    repo.set_hook(measure.watched_terms());
    let fetcher = SnapshotFetcher::new(corpus);
    let mut out = vec![std::collections::HashMap::new()];
    for unit in 1..corpus.units() {
        if measure.refits_from_query_lists(unit).is_some() {
            if let Some(lists) = live_ranked.get(unit as usize - 1) {
                measure.offer_scores_at_ranks(repo.revision(), Arc::clone(lists));
            }
        }
        measure.before_unit(&repo, unit);
        let batch = fetcher.changes_at(unit);
        measure.before_apply(&repo, unit, &batch);
        repo.apply(unit, &batch, &mut *measure)?;
        out.push(measure.delta_q_by_page().into_iter().collect());
    }
    Ok(out)
}

/// A small environment for the refresh-loop tests: a few single-term queries of the words
/// `random_corpus` draws from.
#[cfg(test)]
pub(crate) fn test_environment(corpus: &Corpus) -> Environment<'_> {
    use crate::judge::exact::MetricQuery;
    let mut workload = TermWorkload::default();
    for t in ["emac", "lisp", "buffer", "window", "mode"] {
        if let Some(id) = corpus.vocabulary.get(t) {
            workload.term_frequency.insert(id, 3.0);
            workload.queries.push(MetricQuery {
                terms: vec![id],
                frequency: 3.0,
            });
        }
    }
    Environment::new(corpus, workload, EnvironmentConfig::default()).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::testutil::random_corpus;
    use crate::index::CollectionStats;
    use crate::judge::exact::{evaluate, MetricQuery};
    use crate::text::TermId;

    /// `count` workload queries over a vocabulary of `n` terms: every `single_every`-th one a
    /// single term `i`, the others the pair `i`, `stride.0·i + stride.1` (mod `n`), with
    /// frequencies cycling through `1 ..= frequencies`.
    fn mixed_workload(
        n: TermId,
        count: TermId,
        single_every: TermId,
        stride: (TermId, TermId),
        frequencies: TermId,
    ) -> TermWorkload {
        let mut workload = TermWorkload::default();
        for i in 0..count {
            let terms: Vec<TermId> = if i % single_every == 0 {
                vec![i % n]
            } else {
                let (a, b) = (i % n, (i * stride.0 + stride.1) % n);
                let mut t = vec![a.min(b), a.max(b)];
                t.dedup();
                t
            };
            for &t in &terms {
                *workload.term_frequency.entry(t).or_default() += 1.0;
            }
            workload.queries.push(MetricQuery {
                terms,
                frequency: 1.0 + f64::from(i % frequencies),
            });
        }
        workload
    }

    /// With the exact measurement, the ΔQ_A of a unit's changes, each measured after the
    /// unit's earlier ones, sum to the change of Eq. 5's numerator from the repository at
    /// `t − 1` to the one at `t` (TF-IDF and in-links: only affected lists change).
    #[test]
    fn exact_history_sums_to_each_units_change_of_quality() {
        let corpus = random_corpus(90, 7, 11);
        let workload = mixed_workload(corpus.vocabulary.len() as TermId, 40, 2, (7, 3), 4);
        for scoring in [ScoringKind::TfIdf, ScoringKind::InLinks] {
            let config = EnvironmentConfig {
                scoring,
                delta_q: DeltaQMethod::Exact,
                ..EnvironmentConfig::default()
            };
            let env = Environment::new(&corpus, workload.clone(), config.clone()).unwrap();
            let scorer = scoring.scorer();
            let measured_by_unit =
                measure_from(&corpus, forward_at(&corpus, 0), &config, &[], |_| {
                    Box::new(ExactDeltaQMeasure::new(
                        Arc::clone(&env.workload),
                        Arc::clone(&env.truths),
                        config.likelihood,
                    ))
                })
                .unwrap();
            let mut nonzero = 0;
            let mut checked = 0;
            for unit in 1..corpus.units() {
                // A page created or deleted changes the collection size, and with it every
                // IDF: lists without a term of the page can reorder (not measured, by design).
                if forward_at(&corpus, unit).num_docs() != forward_at(&corpus, unit - 1).num_docs()
                {
                    continue;
                }
                checked += 1;
                let mut by_page: Vec<(&PageId, &f64)> =
                    measured_by_unit[unit as usize].iter().collect();
                by_page.sort_by_key(|(p, _)| **p);
                let measured: f64 = by_page.iter().map(|(_, d)| **d).sum();
                let truth = &env.truths[unit as usize];
                let absolute = |u: Unit| {
                    evaluate(
                        &forward_at(&corpus, u),
                        scorer.as_ref(),
                        &env.workload.queries,
                        truth,
                        &config.likelihood,
                        &|_| true,
                    )
                    .absolute_quality
                };
                let whole = absolute(unit) - absolute(unit - 1);
                assert!(
                    (measured - whole).abs() <= 1e-9 * whole.abs().max(1.0),
                    "{scoring} unit {unit}: {measured} vs {whole}"
                );
                nonzero += usize::from(measured != 0.0);
            }
            assert!(
                checked > 1,
                "{scoring}: only {checked} units without creations"
            );
            assert!(
                nonzero > 1,
                "{scoring}: only {nonzero} units measured a change"
            );
        }
    }

    /// The estimate refitted on the live truths' rankings (the repository measuring every
    /// change holds the previous unit's live Web) measures every change exactly as refitting
    /// on the repository itself.
    #[test]
    fn refits_from_the_live_rankings_measure_the_same_history() {
        let corpus = random_corpus(120, 8, 5);
        let workload = Arc::new(mixed_workload(
            corpus.vocabulary.len() as TermId,
            60,
            3,
            (5, 1),
            3,
        ));
        for scoring in [ScoringKind::Bm25, ScoringKind::TfIdf, ScoringKind::InLinks] {
            let config = EnvironmentConfig {
                scoring,
                ..EnvironmentConfig::default()
            };
            assert_eq!(config.delta_q, DeltaQMethod::Estimate);
            let ranked = live_truths(&corpus, &workload, &config, Some(config.pieces)).ranked;
            assert_eq!(ranked.len(), corpus.units() as usize);
            let make = |repo: &Repository| measurement(repo, &workload, None, &config, 1);
            let handed = measure_from(&corpus, forward_at(&corpus, 0), &config, &ranked, make);
            let own = measure_from(&corpus, forward_at(&corpus, 0), &config, &[], make);
            let (handed, own) = (handed.unwrap(), own.unwrap());
            let bits = |unit: &std::collections::HashMap<PageId, f64>| {
                let mut v: Vec<(PageId, u64)> =
                    unit.iter().map(|(&p, d)| (p, d.to_bits())).collect();
                v.sort_unstable();
                v
            };
            let nonzero: usize = own
                .iter()
                .map(|u| u.values().filter(|d| **d != 0.0).count())
                .sum();
            assert!(nonzero > 10, "{scoring}: {nonzero} changes with a ΔQ");
            for (unit, (a, b)) in handed.iter().zip(&own).enumerate() {
                assert_eq!(bits(a), bits(b), "{scoring} unit {unit}");
            }
        }
    }
}
