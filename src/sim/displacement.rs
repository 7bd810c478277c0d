//! Displacement (issue 47 item 6): how often a refresh the policy chose *lowered* the quality
//! of the repository, and whether a page whose earlier refreshes measured a negative ΔQ_A
//! should be deferred.
//!
//! A refresh can lower quality: its fresh copy may rank above pages whose stale copies score
//! low but whose live copies would earn more at that rank. No estimate made before the fetch
//! sees it. The measurement here is after the fact and reads the live Web (a simulation
//! reference, not something a crawler has):
//!
//! * the **true gain** of a refresh is its leave-one-out effect within its unit's batch:
//!   `Q(after the batch) − Q(after the batch without this page's refresh)`, by the exact ΔQ of
//!   [`exact_delta_q`] (every affected query, as issued, re-ranked; credited with live scores)
//!   divided by the denominator of Eq. 5, so it is in units of the run's `quality`;
//! * the **previous measured gain** of a refresh is the ΔQ_A the run's measurement hook gave
//!   the page's previous refresh in this run ([`RefreshOutcome::delta_q`]): what a policy could
//!   know when it chose.
//!
//! Deferring a page is worth it only if a negative previous measured gain predicts a negative
//! true gain well above the base rate ([`DisplacementSummary`]).

use std::collections::HashMap;
use std::sync::Arc;

use crate::corpus::{LiveWeb, PageId, PageVersion, Unit};
use crate::index::{ForwardDoc, ForwardIndex, Scorer};
use crate::judge::exact::{LiveTruth, MetricQuery};
use crate::judge::exact_delta::{exact_delta_q, AffectedQueries};
use crate::policy::RefreshOutcome;
use crate::quality::viewing::ViewingLikelihood;

/// One measured refresh.
#[derive(Debug, Clone, PartialEq)]
pub struct RefreshGain {
    pub(crate) unit: Unit,
    pub(crate) page: PageId,
    /// Distinct pages in the unit's batch (the budgeted fetches).
    pub(crate) batch_size: usize,
    /// The fetched copy differed from the held one ([`RefreshOutcome::changed`]): only such a
    /// refresh can have a true gain other than 0.
    pub(crate) changed: bool,
    /// Leave-one-out quality change of this refresh within its batch (see the module docs).
    pub(crate) true_gain: f64,
    /// The ΔQ_A the measurement hook gave this refresh.
    pub(crate) measured_delta_q: f64,
    /// The ΔQ_A the hook gave the page's previous refresh in this run (`None`: its first).
    pub(crate) previous_measured_delta_q: Option<f64>,
}

/// The figures of a run's displacement measurement (JSON key `displacement` of `simulate`).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct DisplacementSummary {
    /// Refreshes whose true gain was measured (every budgeted fetch of every judged unit).
    pub refreshes_measured: usize,
    /// Of those, true gain < 0: the refresh displaced better results.
    pub negative: usize,
    pub negative_share: f64,
    /// True gain exactly 0 (mostly copies that had not changed, or touched no workload query).
    pub zero: usize,
    pub zero_share: f64,
    /// Refreshes that brought a changed copy, and the share of them with a true gain < 0.
    pub changed: usize,
    pub negative_share_of_changed: f64,
    /// True gain > 0.
    pub positive: usize,
    /// Mean of `|true gain|` over the negative refreshes (0 when none).
    pub mean_negative_magnitude: f64,
    /// Σ true gain of the negative refreshes (≤ 0).
    pub total_negative_gain: f64,
    /// Σ true gain of every measured refresh.
    pub total_true_gain: f64,
    /// Refreshes whose page had an earlier refresh in this run (so a previous measured gain).
    pub with_previous: usize,
    /// Base rate for the deferral question: the share negative among `with_previous`.
    pub with_previous_negative_share: f64,
    /// Refreshes whose page's previous measured ΔQ_A was negative: what a deferral rule flags.
    pub previously_negative: usize,
    /// Of those, true gain < 0 again.
    pub previously_negative_then_negative: usize,
    pub previously_negative_then_negative_share: f64,
    /// `previously_negative_then_negative_share / with_previous_negative_share` (0 when the
    /// base share is 0): how much better than the base rate the flag predicts displacement.
    pub previously_negative_lift: f64,
    /// Σ true gain of the flagged refreshes: what deferring all of them would change quality by
    /// is minus this (first order, leaving the freed budget unspent).
    pub previously_negative_total_true_gain: f64,
    /// Σ |true gain| of the flagged refreshes that were negative: the most deferring them
    /// could save.
    pub previously_negative_saving_at_most: f64,
    /// Refreshes whose own measured ΔQ_A was negative (after the fetch), and of those, the
    /// share with a negative true gain: how well the hook sees displacement once fetched.
    pub measured_negative: usize,
    pub measured_negative_then_negative_share: f64,
}

/// The measurement of one run: the summary and every measured refresh.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Displacement {
    #[serde(flatten)]
    pub summary: DisplacementSummary,
    /// Every measured refresh, in unit then batch order.
    #[serde(skip)]
    pub(crate) refreshes: Vec<RefreshGain>,
}

/// A change of Eq. 5's numerator in units of quality: divided by the live denominator
/// (quality is 1 whatever the repository when the denominator is 0, so nothing changes then).
pub fn quality_change(truth: &LiveTruth, numerator_change: f64) -> f64 {
    if truth.ideal > 0.0 {
        numerator_change / truth.ideal
    } else {
        0.0
    }
}

/// What [`leave_one_out_gains`] judges with: the repository's scorer, the workload's queries
/// and the unit's live truth.
pub struct Judge<'a> {
    pub(crate) scorer: &'a dyn Scorer,
    pub(crate) queries: &'a [MetricQuery],
    pub(crate) truth: &'a LiveTruth,
    pub(crate) likelihood: &'a ViewingLikelihood,
}

/// The leave-one-out true gain of each refresh of a batch: `after` is the repository after
/// the whole batch, `before[i]` a refreshed page and the copy it held before the batch
/// (`None`: none). Each gain is `Q(after) − Q(after with that page's old copy put back)`.
///
/// `affected` indexes `judge.queries` by term. `after` is left as it was found (each old copy
/// is put in and taken out again).
pub fn leave_one_out_gains(
    after: &mut ForwardIndex,
    judge: &Judge<'_>,
    affected: &AffectedQueries,
    before: &[(PageId, Option<ForwardDoc>)],
) -> Vec<f64> {
    before
        .iter()
        .map(|(page, old)| {
            if after.doc(*page) == old.as_ref() {
                // The refresh brought nothing new: leaving it out changes nothing.
                return 0.0;
            }
            let without = exact_delta_q(
                after,
                judge.scorer,
                judge.queries,
                affected,
                judge.truth,
                judge.likelihood,
                *page,
                old.clone(),
            );
            quality_change(judge.truth, -without)
        })
        .collect()
}

/// Follows a run: the copies held before each unit's batch, each page's last measured ΔQ_A,
/// and every judged refresh's true gain.
pub struct DisplacementTracker {
    affected: AffectedQueries,
    /// The ΔQ_A the hook measured at each page's latest refresh.
    last_measured: HashMap<PageId, f64>,
    /// The copy of each page held before the current unit's batch (taken by `before_step`).
    held_before: Vec<Option<Arc<PageVersion>>>,
    refreshes: Vec<RefreshGain>,
}

impl DisplacementTracker {
    pub fn new(queries: &[MetricQuery]) -> Self {
        DisplacementTracker {
            affected: AffectedQueries::new(queries),
            last_measured: HashMap::new(),
            held_before: Vec::new(),
            refreshes: Vec::new(),
        }
    }

    /// Remembers the copies held before a judged unit's batch.
    pub fn before_step(&mut self, held: impl Iterator<Item = Option<Arc<PageVersion>>>) {
        self.held_before.clear();
        self.held_before.extend(held);
    }

    /// Records the hook's ΔQ_A of refreshes that are not judged (warm-up units): a policy
    /// knows them too.
    pub fn remember_measured(&mut self, outcomes: &[RefreshOutcome]) {
        for o in outcomes {
            self.last_measured.insert(o.page, o.delta_q);
        }
    }

    /// Measures the true gain of every refresh of a judged unit's batch (`outcomes`, the
    /// budgeted fetches), `after` being the repository after the batch.
    pub fn measure(
        &mut self,
        unit: Unit,
        live: &dyn LiveWeb,
        after: &ForwardIndex,
        judge: &Judge<'_>,
        outcomes: &[RefreshOutcome],
    ) {
        // A page fetched twice in a batch is one change of the repository: measured once.
        let mut seen = std::collections::HashSet::new();
        let batch: Vec<&RefreshOutcome> = outcomes.iter().filter(|o| seen.insert(o.page)).collect();
        let before: Vec<(PageId, Option<ForwardDoc>)> = batch
            .iter()
            .map(|o| {
                let held = self.held_before.get(o.page as usize).cloned().flatten();
                let old = held.map(|v| ForwardDoc::from_version(live.url(o.page), &v));
                (o.page, old)
            })
            .collect();
        let gains = if before.is_empty() {
            Vec::new()
        } else {
            leave_one_out_gains(&mut after.clone(), judge, &self.affected, &before)
        };
        for (o, true_gain) in batch.iter().zip(gains) {
            self.refreshes.push(RefreshGain {
                unit,
                page: o.page,
                batch_size: batch.len(),
                changed: o.changed,
                true_gain,
                measured_delta_q: o.delta_q,
                previous_measured_delta_q: self.last_measured.get(&o.page).copied(),
            });
        }
        self.remember_measured(outcomes);
    }

    pub fn finish(self) -> Displacement {
        Displacement {
            summary: summarise(&self.refreshes),
            refreshes: self.refreshes,
        }
    }
}

/// `part / whole`, 0 when `whole` is 0.
fn share(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

/// `Σ values`, +0 when empty (`Iterator::sum` of no `f64` is −0, which prints as `-0`).
fn sum(values: impl Iterator<Item = f64>) -> f64 {
    values.fold(0.0, |total, v| total + v)
}

/// The figures of [`DisplacementSummary`] over `refreshes`.
pub fn summarise(refreshes: &[RefreshGain]) -> DisplacementSummary {
    let n = refreshes.len();
    let negatives: Vec<f64> = refreshes
        .iter()
        .map(|r| r.true_gain)
        .filter(|&g| g < 0.0)
        .collect();
    let zero = refreshes.iter().filter(|r| r.true_gain == 0.0).count();
    let total_negative_gain = sum(negatives.iter().copied());
    let changed = refreshes.iter().filter(|r| r.changed).count();
    let with_previous: Vec<&RefreshGain> = refreshes
        .iter()
        .filter(|r| r.previous_measured_delta_q.is_some())
        .collect();
    let with_previous_negative = with_previous.iter().filter(|r| r.true_gain < 0.0).count();
    let flagged: Vec<&RefreshGain> = with_previous
        .iter()
        .copied()
        .filter(|r| r.previous_measured_delta_q.is_some_and(|d| d < 0.0))
        .collect();
    let flagged_negative = flagged.iter().filter(|r| r.true_gain < 0.0).count();
    let measured_negative: Vec<&RefreshGain> = refreshes
        .iter()
        .filter(|r| r.measured_delta_q < 0.0)
        .collect();
    let base = share(with_previous_negative, with_previous.len());
    let flagged_share = share(flagged_negative, flagged.len());
    DisplacementSummary {
        refreshes_measured: n,
        negative: negatives.len(),
        negative_share: share(negatives.len(), n),
        zero,
        zero_share: share(zero, n),
        changed,
        // A refresh that brought the held copy again has a true gain of exactly 0.
        negative_share_of_changed: share(negatives.len(), changed),
        positive: n - negatives.len() - zero,
        mean_negative_magnitude: if negatives.is_empty() {
            0.0
        } else {
            -total_negative_gain / negatives.len() as f64
        },
        total_negative_gain,
        total_true_gain: sum(refreshes.iter().map(|r| r.true_gain)),
        with_previous: with_previous.len(),
        with_previous_negative_share: base,
        previously_negative: flagged.len(),
        previously_negative_then_negative: flagged_negative,
        previously_negative_then_negative_share: flagged_share,
        previously_negative_lift: if base > 0.0 {
            flagged_share / base
        } else {
            0.0
        },
        previously_negative_total_true_gain: sum(flagged.iter().map(|r| r.true_gain)),
        previously_negative_saving_at_most: sum(flagged.iter().map(|r| (-r.true_gain).max(0.0))),
        measured_negative: measured_negative.len(),
        measured_negative_then_negative_share: share(
            measured_negative
                .iter()
                .filter(|r| r.true_gain < 0.0)
                .count(),
            measured_negative.len(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::{Clock, Corpus, PageTimeline};
    use crate::crawl::CrawlState;
    use crate::index::testutil::{random_corpus, version};
    use crate::index::{Repository, ScoringKind};

    use crate::judge::exact::evaluate;
    use crate::judge::live_scores::LiveScores;
    use crate::policy::{FitMode, PolicyContext, RefreshPolicy};
    use crate::querylog::term_workload::TermWorkload;
    use crate::sim::{run, Environment, EnvironmentConfig, RunConfig, RunResult};
    use crate::text::Vocabulary;

    /// Refreshes the first `budget` pages of a fixed list at every unit.
    struct Fixed(Vec<PageId>);

    impl RefreshPolicy for Fixed {
        fn name(&self) -> String {
            "fixed".into()
        }
        fn prepare(&mut self, _context: &PolicyContext<'_>) {}
        fn choose(&mut self, _unit: Unit, budget: usize, _crawl: &CrawlState) -> Vec<PageId> {
            self.0.iter().copied().take(budget).collect()
        }
        fn observe(&mut self, _outcomes: &[RefreshOutcome]) {}
    }

    /// Two pages and the query `alpha`, units 0 and 1. Page 0 first lacks `alpha`, then has it
    /// once in a long copy (a middling live score); page 1 first has it once in a longer copy,
    /// then four times (the best live score). Held at unit 0, page 1's stale copy is the only
    /// result and earns the top live score at rank 1. Refreshing page 0 alone puts its fresh
    /// copy above page 1's stale one, so rank 1 earns page 0's lower live score: a
    /// displacement. Refreshing both ranks them as live.
    fn displacing_environment() -> (Corpus, TermWorkload) {
        let mut v = Vocabulary::new();
        let beta = |n: usize| vec!["beta"; n].join(" ");
        let page0 = vec![
            version(&mut v, 0, "", &beta(3), vec![]),
            version(&mut v, 1, "", &format!("alpha {}", beta(5)), vec![]),
        ];
        let page1 = vec![
            version(&mut v, 0, "", &format!("alpha {}", beta(9)), vec![]),
            version(&mut v, 1, "", "alpha alpha alpha alpha", vec![]),
        ];
        let corpus = Corpus::from_parts(
            Clock {
                origin: 0,
                unit_seconds: 604_800,
                units: 2,
            },
            vec![
                PageTimeline::new("https://t/0".to_string(), page0),
                PageTimeline::new("https://t/1".to_string(), page1),
            ],
            v,
        );
        let alpha = corpus.vocabulary.get("alpha").unwrap();
        let mut workload = TermWorkload::default();
        workload.term_frequency.insert(alpha, 1.0);
        workload.queries.push(MetricQuery {
            terms: vec![alpha],
            frequency: 1.0,
        });
        (corpus, workload)
    }

    fn displacement_run(env: &Environment<'_>, budget: usize) -> RunResult {
        let config = RunConfig {
            displacement: true,
            ..RunConfig::new(budget, FitMode::Online)
        };
        run(env, Box::new(Fixed(vec![0, 1])), &config).unwrap()
    }

    #[test]
    fn a_fresh_copy_outranking_a_better_stale_one_displaces() {
        let (corpus, workload) = displacing_environment();
        let config = EnvironmentConfig {
            scoring: ScoringKind::Bm25,
            ..Default::default()
        };
        let env = Environment::new(&corpus, workload, config).unwrap();
        let alone = displacement_run(&env, 1);
        let d = alone.displacement.as_ref().unwrap();
        assert_eq!(d.summary.refreshes_measured, 1);
        assert_eq!(d.summary.negative, 1, "{:?}", d.refreshes);
        assert_eq!(d.refreshes[0].page, 0);
        assert!(d.summary.mean_negative_magnitude > 0.0);
        // A batch of one: its leave-one-out gain is the whole change of the unit's quality,
        // which a run refreshing nothing shows as the quality before the batch.
        let nothing = displacement_run(&env, 0);
        assert_eq!(nothing.displacement.as_ref().unwrap().refreshes, []);
        let change = alone.per_unit[0].search.quality - nothing.per_unit[0].search.quality;
        assert!(change < 0.0);
        assert!(
            (d.refreshes[0].true_gain - change).abs() < 1e-12,
            "{} vs {change}",
            d.refreshes[0].true_gain
        );
        // With page 1 refreshed too, each refresh helps within the batch.
        let both = displacement_run(&env, 2);
        let d = both.displacement.as_ref().unwrap();
        assert_eq!(d.summary.refreshes_measured, 2);
        assert_eq!(d.summary.negative, 0, "{:?}", d.refreshes);
        assert_eq!(d.summary.positive, 2);
        assert!((both.per_unit[0].search.quality - 1.0).abs() < 1e-12);
    }

    /// The leave-one-out gain of a batch of one is the change of the whole quality (every
    /// query re-ranked): exactly under TF-IDF and in-link scoring; under BM25 up to the
    /// average document length, which moves the lists the page does not touch (see
    /// `judge::exact_delta`).
    #[test]
    fn the_gain_of_a_batch_of_one_is_its_quality_change() {
        let corpus = random_corpus(80, 6, 29);
        let queries: Vec<MetricQuery> = ["emac", "lisp", "buffer", "window", "mode"]
            .iter()
            .enumerate()
            .map(|(i, t)| MetricQuery {
                terms: vec![corpus.vocabulary.get(t).unwrap()],
                frequency: 1.0 + i as f64,
            })
            .collect();
        let affected = AffectedQueries::new(&queries);
        let likelihood = ViewingLikelihood::default();
        let unit = 3;
        let mut negative = 0;
        for kind in [ScoringKind::TfIdf, ScoringKind::InLinks, ScoringKind::Bm25] {
            let live = LiveScores::at(&corpus, unit, kind);
            let truth = LiveTruth::compute(&live, &queries, &likelihood);
            let repo = Repository::forward_only_at(&corpus, unit - 1, kind);
            let scorer = repo.scorer();
            let quality = |f: &ForwardIndex| {
                evaluate(f, scorer, &queries, &truth, &likelihood, &|_| true)
                    .search
                    .quality
            };
            let judge = Judge {
                scorer,
                queries: &queries,
                truth: &truth,
                likelihood: &likelihood,
            };
            let mut checked = 0;
            for page in 0..corpus.page_count() as PageId {
                let Some(v) = corpus.page_at(page, unit).present() else {
                    continue;
                };
                let before = repo.forward().clone();
                let old = before.doc(page).cloned();
                let mut after = before.clone();
                after.set_copy(page, Some(ForwardDoc::from_version(corpus.url(page), v)));
                if after == before {
                    continue;
                }
                let kept = after.clone();
                let gain = leave_one_out_gains(&mut after, &judge, &affected, &[(page, old)]);
                assert_eq!(after, kept, "the repository is left as found");
                let whole = quality(&after) - quality(&before);
                let tolerance = if kind == ScoringKind::Bm25 {
                    1e-3 * whole.abs().max(1e-3)
                } else {
                    1e-12
                };
                assert!(
                    (gain[0] - whole).abs() <= tolerance,
                    "{kind} page {page}: {} vs {whole}",
                    gain[0]
                );
                checked += 1;
                negative += usize::from(gain[0] < 0.0);
            }
            assert!(checked > 10, "{kind}: only {checked} changed pages");
        }
        // Negative gains are checked too, not only helpful refreshes.
        assert!(negative > 0, "no refresh displaced: the check is weak");
    }

    #[test]
    fn measuring_displacement_changes_nothing_else_in_a_run() {
        let corpus = random_corpus(50, 7, 21);
        let env = crate::sim::three_term_environment(&corpus, 3.0);
        for name in ["user-centric", "ebr", "round-robin"] {
            for mode in [FitMode::Online, FitMode::Oracle] {
                let family = crate::policy::registry::family(name).unwrap();
                let off = RunConfig::new(3, mode);
                let on = RunConfig {
                    displacement: true,
                    ..off.clone()
                };
                let a = run(&env, family.make([]).unwrap(), &off).unwrap();
                let b = run(&env, family.make([]).unwrap(), &on).unwrap();
                assert!(a.displacement.is_none());
                let d = b.displacement.as_ref().expect("asked for");
                let refreshed: usize = b.per_unit.iter().map(|u| u.refreshed).sum();
                assert_eq!(d.summary.refreshes_measured, refreshed, "{name} {mode:?}");
                assert!(refreshed > 0, "{name} {mode:?}");
                assert_eq!(a.refreshed_pages, b.refreshed_pages, "{name} {mode:?}");
                let plain = serde_json::to_value(&a).unwrap();
                assert!(plain.get("displacement").is_none());
                let mut measured = serde_json::to_value(&b).unwrap();
                let summary = measured
                    .as_object_mut()
                    .unwrap()
                    .remove("displacement")
                    .expect("the key is written when asked for");
                assert_eq!(
                    summary["refreshes_measured"],
                    serde_json::json!(refreshed),
                    "{name} {mode:?}"
                );
                assert_eq!(plain, measured, "{name} {mode:?}");
            }
        }
    }

    fn gain(true_gain: f64, measured: f64, previous: Option<f64>) -> RefreshGain {
        RefreshGain {
            unit: 1,
            page: 0,
            batch_size: 1,
            changed: true_gain != 0.0,
            true_gain,
            measured_delta_q: measured,
            previous_measured_delta_q: previous,
        }
    }

    #[test]
    fn the_summary_by_hand() {
        let refreshes = [
            gain(-0.2, -0.1, None),
            gain(0.0, 0.0, Some(0.5)),
            gain(-0.4, 0.1, Some(-0.3)),
            gain(0.3, 0.2, Some(-0.1)),
            gain(0.1, -0.2, Some(0.2)),
        ];
        let s = summarise(&refreshes);
        assert_eq!(
            (s.refreshes_measured, s.negative, s.zero, s.positive),
            (5, 2, 1, 2)
        );
        assert!((s.negative_share - 0.4).abs() < 1e-12);
        assert_eq!(s.changed, 4);
        assert!((s.negative_share_of_changed - 0.5).abs() < 1e-12);
        assert!((s.mean_negative_magnitude - 0.3).abs() < 1e-12);
        assert!((s.total_negative_gain + 0.6).abs() < 1e-12);
        assert!((s.total_true_gain + 0.2).abs() < 1e-12);
        // Four with an earlier refresh, one of them negative; two flagged, one negative again.
        assert_eq!(s.with_previous, 4);
        assert!((s.with_previous_negative_share - 0.25).abs() < 1e-12);
        assert_eq!(
            (s.previously_negative, s.previously_negative_then_negative),
            (2, 1)
        );
        assert!((s.previously_negative_then_negative_share - 0.5).abs() < 1e-12);
        assert!((s.previously_negative_lift - 2.0).abs() < 1e-12);
        assert!((s.previously_negative_total_true_gain + 0.1).abs() < 1e-12);
        assert!((s.previously_negative_saving_at_most - 0.4).abs() < 1e-12);
        assert_eq!(s.measured_negative, 2);
        assert!((s.measured_negative_then_negative_share - 0.5).abs() < 1e-12);
        let empty = summarise(&[]);
        assert_eq!(empty, DisplacementSummary::default());
        assert!(empty.total_true_gain.is_sign_positive(), "+0, not −0");
    }
}
