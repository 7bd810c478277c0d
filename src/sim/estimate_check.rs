//! How good is the ΔQ estimate? (paper 003 §5.1 and §6, Fig. 3)
//!
//! Two checks, both in the paper's scenario where every change is refreshed in the unit it
//! happens:
//!
//! * **Estimate vs brute force.** For a seeded sample of (page, unit) refreshes, the page is
//!   applied alone through the repository's update path (so the hook measures it alone), and the
//!   true `ΔQ_A(p, t)` is computed by ranking the full result list of every affected single-term
//!   workload query before and after, crediting every page with its live score:
//!   `Σ_q f_q Σ_{p'} (I(R_after(p')) − I(R_before(p'))) · S(W_t[p'], q)`. We report the Spearman
//!   rank correlation between estimates and truths (the refresher only needs the estimate to
//!   *order* pages) and the median relative error.
//! * **Estimate vs the metric users see.** The same sample against the exact `ΔQ_A(p, t)` of
//!   [`crate::judge::exact_delta`]: the workload queries as issued (multi-term, conjunctive)
//!   re-ranked before and after, crediting live scores as Eq. 5 does. The single-term truth
//!   above is what the paper's estimate models; this one is what the refresher is judged by.
//!   The multi-term estimate ([`crate::quality::multi_term`]) is judged against it too.
//! * **Forecastability** (Fig. 3). `ΔQ̄(p)` over the first half of the units against the second
//!   half, with `ΔQ̄(p) = mean over refreshes of ΔQ_A(p, t) / (t − LR(p, t))`. A page is *near the
//!   diagonal* when both halves are positive and within a factor of 2; pages with 0 in both
//!   halves are not plotted (as in the paper).

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::corpus::{LiveWeb, PageId, Unit};
use crate::fetch::SnapshotFetcher;
use crate::index::{ForwardDoc, ForwardIndex, IndexError, PageUpdate, Ranked, Repository};

use crate::judge::exact_delta::{exact_delta_q, AffectedQueries};
use crate::judge::live_scores::LiveScores;
use crate::quality::estimate::DeltaQEstimator;
use crate::quality::measure::DeltaQMeasure;
use crate::quality::multi_term::{fit_query_table, multi_term_delta_q_by_page};
use crate::quality::viewing::ViewingLikelihood;
use crate::querylog::term_workload::TermWorkload;
use crate::text::TermId;

use super::environment::Environment;

/// One sampled refresh.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PairCheck {
    pub page: PageId,
    pub unit: Unit,
    pub estimate: f64,
    /// Brute-force ΔQ_A over the single-term workload (what the estimate models).
    pub truth: f64,
    /// Exact ΔQ_A under the evaluated metric (the queries as issued).
    pub exact: f64,
    /// The multi-term estimate ([`crate::quality::multi_term`]) from the same hook shifts.
    pub estimate_multi_term: f64,
}

/// One page of the forecastability scatter.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ForecastPoint {
    pub page: PageId,
    pub first_half: f64,
    pub second_half: f64,
}

/// The outcome of both checks (the keys of the JSON contract first: see
/// ARCHITECTURE.md, § Command line and JSON contract).
#[derive(Debug, Clone, serde::Serialize)]
pub struct EstimateCheck {
    pub pairs: usize,
    pub spearman: f64,
    pub median_relative_error: f64,
    /// Spearman ρ of the estimate against the exact ΔQ_A under the evaluated metric.
    pub spearman_exact: f64,
    /// Median relative error of the estimate against the exact ΔQ_A (pairs with exact ≠ 0).
    pub median_relative_error_exact: f64,
    /// Spearman ρ of the single-term truth against the exact ΔQ_A: how much of the gap is
    /// the single-term model rather than the score-to-rank approximation.
    pub spearman_single_term_vs_exact: f64,
    /// Spearman ρ of the multi-term estimate against the exact ΔQ_A.
    pub spearman_multi_term_exact: f64,
    /// Median relative error of the multi-term estimate against the exact ΔQ_A.
    pub median_relative_error_multi_term_exact: f64,
    /// Mean wall time of one exact ΔQ_A (both rankings of every affected query), in ms.
    pub exact_ms_per_refresh: f64,
    pub forecast_near_diagonal_share: f64,
    /// Pages plotted in the forecast scatter (non-zero in at least one half).
    pub forecast_pages: usize,
    /// The unit splitting the halves (first half: units `1..split`).
    pub forecast_split: Unit,
    /// Memory of the score-to-rank functions: payload bytes per single-term query.
    pub score_rank_bytes_per_query: f64,
    pub pair_checks: Vec<PairCheck>,
    pub forecast: Vec<ForecastPoint>,
}

/// Runs both checks over `env` with up to `max_pairs` sampled refreshes.
pub fn estimate_check(
    env: &Environment<'_>,
    max_pairs: usize,
    seed: u64,
) -> Result<EstimateCheck, IndexError> {
    let (pair_checks, bytes_per_query, exact_seconds) = check_pairs(env, max_pairs, seed)?;
    let estimates: Vec<f64> = pair_checks.iter().map(|p| p.estimate).collect();
    let truths: Vec<f64> = pair_checks.iter().map(|p| p.truth).collect();
    let exacts: Vec<f64> = pair_checks.iter().map(|p| p.exact).collect();
    let multi: Vec<f64> = pair_checks.iter().map(|p| p.estimate_multi_term).collect();
    let split = env.units() / 2;
    let forecast = forecast_points(env, split);
    let near = forecast
        .iter()
        .filter(|f| {
            f.first_half > 0.0
                && f.second_half > 0.0
                && (f.first_half / f.second_half).log2().abs() <= 1.0
        })
        .count();
    Ok(EstimateCheck {
        pairs: pair_checks.len(),
        spearman: spearman(&estimates, &truths),
        median_relative_error: median_relative_error(&estimates, &truths),
        spearman_exact: spearman(&estimates, &exacts),
        median_relative_error_exact: median_relative_error(&estimates, &exacts),
        spearman_single_term_vs_exact: spearman(&truths, &exacts),
        spearman_multi_term_exact: spearman(&multi, &exacts),
        median_relative_error_multi_term_exact: median_relative_error(&multi, &exacts),
        exact_ms_per_refresh: if pair_checks.is_empty() {
            0.0
        } else {
            1e3 * exact_seconds / pair_checks.len() as f64
        },
        forecast_near_diagonal_share: if forecast.is_empty() {
            0.0
        } else {
            near as f64 / forecast.len() as f64
        },
        forecast_pages: forecast.len(),
        forecast_split: split,
        score_rank_bytes_per_query: bytes_per_query,
        pair_checks,
        forecast,
    })
}

/// Median of `|estimate − truth| / |truth|` over the pairs with a non-zero truth (0 if none).
fn median_relative_error(estimates: &[f64], truths: &[f64]) -> f64 {
    let mut relative: Vec<f64> = estimates
        .iter()
        .zip(truths)
        .filter(|(_, &t)| t != 0.0)
        .map(|(&e, &t)| ((e - t) / t).abs())
        .collect();
    relative.sort_by(f64::total_cmp);
    if relative.is_empty() {
        0.0
    } else {
        relative[relative.len() / 2]
    }
}

/// Estimate, single-term brute-force truth and exact ΔQ_A for a sample of refreshes of pages
/// already in the repository. Also returns the score-to-rank functions' payload bytes per
/// query (last fit) and the seconds spent on the exact ΔQ_A.
fn check_pairs(
    env: &Environment<'_>,
    max_pairs: usize,
    seed: u64,
) -> Result<(Vec<PairCheck>, f64, f64), IndexError> {
    let corpus = env.corpus;
    let workload = &env.workload;
    let sampled = sampled_refreshes(env, max_pairs, seed);

    let scorer_kind = env.config.scoring;
    let mut repo = Repository::forward_only_at(corpus, 0, scorer_kind);
    // The paper's scenario: F_t refitted before every unit's changes.
    let mut measure = DeltaQMeasure::new(
        &repo,
        Arc::clone(&env.workload),
        env.config.likelihood,
        env.config.pieces,
        1,
    );
    repo.set_hook(Some(measure.watched_terms()));
    let likelihood = env.config.likelihood;
    let fetcher = SnapshotFetcher::new(corpus);
    let mut live = LiveScores::at(corpus, 0, scorer_kind);
    // The exact ΔQ_A re-ranks a copy of the repository's forward index (kept in step with it)
    // with the page's new copy put in and taken out again.
    let mut shadow: ForwardIndex = repo.forward().clone();
    let affected = AffectedQueries::new(&env.workload.queries);
    let estimator = DeltaQEstimator::new(likelihood);
    let mut exact_seconds = 0.0;
    let mut out = Vec::new();
    let mut bytes_per_query = 0.0;
    for unit in 1..corpus.units() {
        live.advance_to(corpus, unit);
        measure.before_unit(&repo, unit);
        let query_table = fit_query_table(&repo, &env.workload.queries, env.config.pieces);
        let table = measure.table();
        if !table.is_empty() {
            bytes_per_query = table.payload_bytes() as f64 / table.len() as f64;
        }
        let batch = fetcher.changes_at(unit);
        let (checked, rest): (Vec<PageUpdate>, Vec<PageUpdate>) = batch
            .into_iter()
            .partition(|u| sampled.contains(&(unit, u.page)));
        for update in checked {
            let page = update.page;
            let new_copy = update
                .version
                .map(|v| ForwardDoc::from_version(update.url, v));
            let started = Instant::now();
            let exact = exact_delta_q(
                &mut shadow,
                repo.scorer(),
                &env.workload.queries,
                &affected,
                &env.truths[unit as usize],
                &likelihood,
                page,
                new_copy.clone(),
            );
            exact_seconds += started.elapsed().as_secs_f64();
            shadow.set_copy(page, new_copy);
            let terms = affected_terms(&repo, &update, workload);
            let before: Vec<Vec<Ranked>> = terms.iter().map(|&t| repo.ranked(&[t])).collect();
            repo.apply(unit, &[update], &mut measure)?;
            let estimate: f64 = measure.delta_q_by_page().iter().map(|&(_, d)| d).sum();
            let estimate_multi_term: f64 = multi_term_delta_q_by_page(
                measure.shifts(),
                &query_table,
                &env.workload.queries,
                &affected,
                repo.scorer(),
                &estimator,
            )
            .iter()
            .map(|&(_, d)| d)
            .sum();
            let truth = single_term_truth(&repo, &terms, &before, &live, &likelihood, workload);
            out.push(PairCheck {
                page,
                unit,
                estimate,
                truth,
                exact,
                estimate_multi_term,
            });
        }
        for u in &rest {
            shadow.set_copy(
                u.page,
                u.version.map(|v| ForwardDoc::from_version(u.url, v)),
            );
        }
        repo.apply(unit, &rest, &mut measure)?;
        debug_assert!(
            shadow == *repo.forward(),
            "the shadow index follows the repository"
        );
    }
    out.sort_by_key(|p| (p.unit, p.page));
    Ok((out, bytes_per_query, exact_seconds))
}

/// Every refresh of an existing page that changed, then a seeded sample of at most
/// `max_pairs`: the (unit, page) pairs checked.
fn sampled_refreshes(
    env: &Environment<'_>,
    max_pairs: usize,
    seed: u64,
) -> HashSet<(Unit, PageId)> {
    let corpus = env.corpus;
    let mut candidates: Vec<(Unit, PageId)> = Vec::new();
    for (p, h) in env.history.pages.iter().enumerate() {
        for &u in &h.change_units {
            if corpus.page_at(p as PageId, u).present().is_some() {
                candidates.push((u, p as PageId));
            }
        }
    }
    candidates.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    candidates.truncate(max_pairs);
    candidates.iter().copied().collect()
}

/// The single-term queries a refresh affects: the workload terms of the page's old copy
/// (in `repo`) or of its new one, sorted.
fn affected_terms(
    repo: &Repository,
    update: &PageUpdate<'_>,
    workload: &TermWorkload,
) -> Vec<TermId> {
    let mut terms: Vec<TermId> = Vec::new();
    if let Some(old) = repo.forward().doc(update.page) {
        terms.extend(old.terms.counts.iter().map(|&(t, _)| t));
    }
    if let Some(new) = update.version {
        terms.extend(new.terms.counts.iter().map(|&(t, _)| t));
    }
    terms.sort_unstable();
    terms.dedup();
    terms.retain(|&t| workload.frequency(t) > 0.0);
    terms
}

/// The brute-force single-term ΔQ_A of a refresh: per affected term `t`, the change of every
/// page's viewing likelihood between the lists `before` and after (in `repo` now), credited
/// with its live score and weighed by `t`'s frequency.
fn single_term_truth(
    repo: &Repository,
    terms: &[TermId],
    before: &[Vec<Ranked>],
    live: &LiveScores,
    likelihood: &ViewingLikelihood,
    workload: &TermWorkload,
) -> f64 {
    let mut truth = 0.0;
    for (k, &t) in terms.iter().enumerate() {
        let after = repo.ranked(&[t]);
        // Ordered map: the sum is taken in page order, so results are bit-for-bit
        // reproducible.
        let mut delta: BTreeMap<PageId, f64> = BTreeMap::new();
        for (r, hit) in before[k].iter().enumerate() {
            *delta.entry(hit.page).or_default() -= likelihood.at(r as u64 + 1);
        }
        for (r, hit) in after.iter().enumerate() {
            *delta.entry(hit.page).or_default() += likelihood.at(r as u64 + 1);
        }
        let q: f64 = delta
            .iter()
            .map(|(&p, &di)| di * f64::from(live.score(p, &[t])))
            .sum();
        truth += workload.frequency(t) * q;
    }
    truth
}

/// ΔQ̄ per page over units `1..split` and `split..units`, from the environment's history.
fn forecast_points(env: &Environment<'_>, split: Unit) -> Vec<ForecastPoint> {
    let mut out = Vec::new();
    for (p, h) in env.history.pages.iter().enumerate() {
        let mut halves = [(0.0, 0usize), (0.0, 0usize)];
        let mut last = 0;
        for (i, &u) in h.change_units.iter().enumerate() {
            let d = h.delta_q.get(i).copied().unwrap_or(0.0);
            let half = usize::from(u >= split);
            // The first refresh of the second half is normalised by the time since the
            // previous refresh, wherever it fell.
            halves[half].0 += d / f64::from(u - last).max(1.0);
            halves[half].1 += 1;
            last = u;
        }
        let mean = |(sum, n): (f64, usize)| if n == 0 { 0.0 } else { sum / n as f64 };
        let (a, b) = (mean(halves[0]).max(0.0), mean(halves[1]).max(0.0));
        if a > 0.0 || b > 0.0 {
            out.push(ForecastPoint {
                page: p as PageId,
                first_half: a,
                second_half: b,
            });
        }
    }
    out
}

/// Spearman's rank correlation (average ranks for ties); 0 with fewer than 2 values.
pub fn spearman(a: &[f64], b: &[f64]) -> f64 {
    if a.len() < 2 || a.len() != b.len() {
        return 0.0;
    }
    let (ra, rb) = (ranks(a), ranks(b));
    let n = a.len() as f64;
    let (ma, mb) = (ra.iter().sum::<f64>() / n, rb.iter().sum::<f64>() / n);
    let cov: f64 = ra.iter().zip(&rb).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let va: f64 = ra.iter().map(|x| (x - ma).powi(2)).sum();
    let vb: f64 = rb.iter().map(|y| (y - mb).powi(2)).sum();
    if va == 0.0 || vb == 0.0 {
        0.0
    } else {
        cov / (va * vb).sqrt()
    }
}

fn ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&i, &j| values[i].total_cmp(&values[j]));
    let mut ranks = vec![0.0; values.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
            j += 1;
        }
        let average = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            ranks[k] = average;
        }
        i = j + 1;
    }
    ranks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spearman_by_hand() {
        assert!((spearman(&[1.0, 2.0, 3.0], &[10.0, 20.0, 30.0]) - 1.0).abs() < 1e-12);
        assert!((spearman(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]) + 1.0).abs() < 1e-12);
        // Ties get average ranks: [1.5, 1.5, 3] vs [1, 2, 3] → ρ = 0.866…
        assert!(
            (spearman(&[5.0, 5.0, 9.0], &[1.0, 2.0, 3.0]) - 0.866_025_403_784_438_6).abs() < 1e-12
        );
        assert_eq!(spearman(&[1.0], &[2.0]), 0.0);
    }

    #[test]
    fn estimates_track_the_truth_on_a_random_site() {
        use crate::index::testutil::random_corpus;
        use crate::judge::exact::MetricQuery;
        use crate::querylog::term_workload::TermWorkload;
        use crate::sim::EnvironmentConfig;
        let corpus = random_corpus(120, 10, 4);
        let mut workload = TermWorkload::default();
        for (i, t) in [
            "emac", "buffer", "lisp", "window", "org", "mode", "git", "python",
        ]
        .iter()
        .enumerate()
        {
            let id = corpus.vocabulary.get(t).unwrap();
            workload.term_frequency.insert(id, 20.0 - i as f64);
            workload.queries.push(MetricQuery {
                terms: vec![id],
                frequency: 20.0 - i as f64,
            });
        }
        let env = Environment::new(&corpus, workload, EnvironmentConfig::default()).unwrap();
        let check = estimate_check(&env, 60, 7).unwrap();
        assert!(check.pairs >= 30, "{}", check.pairs);
        assert!(check.pair_checks.iter().any(|p| p.truth != 0.0));
        assert!(check.spearman > 0.5, "spearman {}", check.spearman);
        // With a single-term workload, the queries as issued are the single terms: the exact
        // ΔQ_A under the evaluated metric is the single-term brute force.
        for p in &check.pair_checks {
            assert!(
                (p.exact - p.truth).abs() <= 1e-9 * p.truth.abs().max(1.0),
                "{p:?}"
            );
        }
        assert!((check.spearman_exact - check.spearman).abs() < 1e-9);
        // ... and the multi-term estimate is the single-term one.
        for p in &check.pair_checks {
            assert!(
                (p.estimate_multi_term - p.estimate).abs() <= 1e-9 * p.estimate.abs().max(1.0),
                "{p:?}"
            );
        }
        assert!(check.forecast_pages > 0);
        assert!((0.0..=1.0).contains(&check.forecast_near_diagonal_share));
        // Deterministic for a seed.
        let again = estimate_check(&env, 60, 7).unwrap();
        assert_eq!(check.pair_checks, again.pair_checks);
    }
}
