//! Comparison sweeps: every policy at every budget, and the paper's Fig. 4 read off the
//! results — for each target quality, the smallest budget in the grid whose run reaches it.
//!
//! Each budget comes with its 95 % interval over the bootstrap's resamples of the workload's
//! queries, read from the same runs as `refresher compare` reads them
//! ([`crate::sim::intervals`]): every run keeps its mean quality under each resample
//! ([`super::runs`]), and the unrefreshed quality under each is the `B = 0` run's. Without a
//! `B = 0` run among the runs shown, the rows carry no `budget_interval`.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::index::ScoringKind;
use crate::policy::family::{expand_sweep, GridDefault, ParamValue};
use crate::policy::registry::family;
use crate::policy::FitMode;
use crate::sim::compare::add_intervals;
use crate::sim::compare::{best_curves, SweepPoint};
pub use crate::sim::compare::{CurvePoint, TargetRow as TableRow, TARGET_QUALITIES as TARGETS};
pub use crate::sim::oracle_ratio::OracleRatio;
use crate::sim::oracle_ratio::FULL_ORACLE;

use super::error::ApiError;
use super::runs::{Run, RunInfo, RunManager, RunSpec, RunStatus, WorkloadSource};

/// A run's parameters as the API takes them.
type Params = Vec<(String, ParamValue)>;

/// A run's mean quality under each of the bootstrap's resamples, once it completed.
type Resampled = Option<Arc<[f64]>>;

/// Most runs one sweep may queue.
pub const MAX_SWEEP_RUNS: usize = 200;

/// What `POST /api/compare` accepts.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepSpec {
    /// Default: every policy the server offers.
    #[serde(default)]
    pub(crate) policies: Vec<String>,
    pub(crate) budgets: Vec<usize>,
    #[serde(default)]
    pub(crate) mode: Option<FitMode>,
    #[serde(default)]
    pub(crate) scoring: Option<ScoringKind>,
    #[serde(default)]
    pub(crate) workload: WorkloadSource,
    /// Shingle thresholds θ swept for sbr/ebr, each budget run once per θ and the best θ kept
    /// per budget (paper 003 §6). Empty: one run at the policy's default θ. Shorthand for
    /// `sweep.theta`.
    #[serde(default)]
    pub(crate) thetas: Vec<f64>,
    /// Parameters given to every policy of the sweep that has them.
    #[serde(default)]
    pub(crate) params: BTreeMap<String, ParamValue>,
    /// Values swept per parameter (each budget run once per combination, the best kept).
    #[serde(default)]
    pub(crate) sweep: BTreeMap<String, Vec<f64>>,
    /// How ΔQ_A is measured in every run (default `estimate`).
    #[serde(default)]
    pub(crate) delta_q: crate::quality::measure::DeltaQMethod,
    /// When new pages are crawled in every run (default `outside-budget`).
    #[serde(default)]
    pub(crate) new_pages: crate::crawl::NewPages,
    /// Warm-up units of every run (paper 001 §5.2; default 0).
    #[serde(default)]
    pub(crate) warmup_units: u32,
    /// What oracle-mode runs are told of the history (default `all`; `warm-up`: the warm-up
    /// units' changes only).
    #[serde(default)]
    pub(crate) oracle_history: crate::sim::run::OracleHistory,
    /// The change signals the site publishes in every run (`--signals` specs; default none).
    #[serde(default)]
    pub(crate) signals: Vec<String>,
}

/// The body of `GET /api/compare`.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Comparison {
    /// The sweep shown (`None`: every finished run).
    pub(crate) sweep: Option<u64>,
    pub(crate) runs_total: usize,
    pub(crate) runs_finished: usize,
    /// The table of `curves`: for families with swept parameters (θ), the best run per budget
    /// by judged quality, a hindsight envelope. Each row's `budget_interval` is its 95 %
    /// interval, present when the runs shown include a `B = 0` run (see the module docs).
    pub(crate) rows: Vec<TableRow>,
    pub(crate) curves: Vec<CurvePoint>,
    /// The table of the runs at parameters fixed before the run (every swept parameter at
    /// its family's default: a sweep's `thetas` should include 0 for SBR/EBR to have a row), as
    /// `refresher compare`'s `fixed_rows`.
    #[serde(default)]
    pub(crate) fixed_rows: Vec<TableRow>,
    /// Some run shown is an oracle told the whole history: it knows the future, an upper
    /// bound no crawler reaches (the page says so).
    #[serde(default)]
    pub(crate) oracle_bound: bool,
    /// The change signals of the runs shown, each setting once (`["none"]` without).
    #[serde(default)]
    pub(crate) signals: Vec<String>,
    /// `refresher compare`'s `oracle_ratios`: each online series' fixed row over the full
    /// oracle's (the oracle user-centric series told the whole history, in the same other
    /// settings) for the same target; empty unless both are shown.
    #[serde(default)]
    pub(crate) oracle_ratios: Vec<OracleRatio>,
}

/// Validates a sweep and queues its runs (policy-major, budgets ascending), all or none.
/// Returns the sweep id (taken from `next_sweep` only when the runs are accepted) and the run
/// ids.
pub fn start_sweep(
    manager: &RunManager,
    next_sweep: impl FnOnce() -> u64,
    spec: SweepSpec,
) -> Result<(u64, Vec<u64>), ApiError> {
    let policies = if spec.policies.is_empty() {
        manager.policies.names.clone()
    } else {
        spec.policies
    };
    if spec.budgets.is_empty() {
        return Err(ApiError::BadParameter(
            "`budgets` must list at least one budget".into(),
        ));
    }
    let mut budgets = spec.budgets;
    budgets.sort_unstable();
    budgets.dedup();
    if let Some(t) = spec.thetas.iter().find(|t| !(0.0..=1.0).contains(*t)) {
        return Err(ApiError::BadParameter(format!(
            "`thetas`: {t} is outside [0, 1]"
        )));
    }
    let mut grids = spec.sweep;
    if !spec.thetas.is_empty() {
        if grids.contains_key("theta") {
            return Err(ApiError::BadParameter(
                "give θ values once: `thetas` or `sweep.theta`".into(),
            ));
        }
        grids.insert("theta".into(), spec.thetas);
    }
    for values in grids.values_mut() {
        values.sort_by(f64::total_cmp);
        values.dedup();
    }
    for p in &policies {
        if !manager.policies.names.contains(p) {
            return Err(ApiError::BadParameter(format!(
                "unknown policy `{p}`; expected one of: {}",
                manager.policies.names.join(", ")
            )));
        }
    }
    super::runs::refuse_file_params(spec.params.keys())
        .map_err(|e| ApiError::BadParameter(e.to_string()))?;
    let fixed: Vec<(String, ParamValue)> = spec.params.into_iter().collect();
    // The table's families expand through the one sweep expansion `refresher compare` uses;
    // a policy the server offers beyond the table (tests) runs once per budget.
    let mut jobs: Vec<(String, Params, usize)> = Vec::new();
    let families: Vec<_> = policies.iter().filter_map(|p| family(p).ok()).collect();
    let expanded = if families.is_empty() {
        Vec::new()
    } else {
        expand_sweep(&families, &budgets, &fixed, &grids, GridDefault::OnlyGiven)
            .map_err(|e| ApiError::BadParameter(e.to_string()))?
    };
    for p in &policies {
        if family(p).is_ok() {
            for run in expanded.iter().filter(|r| r.policy.name == p) {
                let params = run
                    .params
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.clone()))
                    .collect();
                jobs.push((p.clone(), params, run.budget));
            }
        } else {
            jobs.extend(budgets.iter().map(|&b| (p.clone(), Vec::new(), b)));
        }
    }
    let total = jobs.len();
    if total > MAX_SWEEP_RUNS {
        return Err(ApiError::BadParameter(format!(
            "a sweep may hold at most {MAX_SWEEP_RUNS} runs ({total} asked: {} policies × {} budgets × the swept parameter values)",
            policies.len(),
            budgets.len(),
        )));
    }
    let specs: Vec<RunSpec> = jobs
        .into_iter()
        .map(|(policy, params, budget)| RunSpec {
            policy,
            budget,
            mode: spec.mode.unwrap_or(FitMode::Oracle),
            scoring: spec.scoring,
            workload: spec.workload,
            seed: None,
            theta: None,
            params: params.into_iter().collect(),
            delta_q: spec.delta_q,
            new_pages: spec.new_pages,
            warmup_units: spec.warmup_units,
            oracle_history: spec.oracle_history,
            displacement: false,
            signals: spec.signals.clone(),
        })
        .collect();
    // All validated, then all queued (or none): a refused sweep leaves nothing behind and
    // takes no sweep id.
    let mut sweep = None;
    let runs = manager.start_many(specs, || {
        sweep = Some(next_sweep());
        sweep
    })?;
    let sweep = sweep.expect("start_many takes the id when it accepts the runs");
    Ok((sweep, runs.iter().map(|r| r.id).collect()))
}

/// The table and curves of the runs of `sweep` (or of every run), from finished runs only.
pub fn comparison(runs: &[Arc<Run>], sweep: Option<u64>) -> Comparison {
    let chosen: Vec<&Arc<Run>> = runs
        .iter()
        .filter(|r| sweep.is_none() || r.sweep == sweep)
        .collect();
    let (infos, resamples): (Vec<RunInfo>, Vec<Resampled>) =
        chosen.iter().map(|r| r.info_and_resamples()).unzip();
    let names = series_names(&infos);
    let mut series: BTreeMap<String, &RunInfo> = BTreeMap::new();
    for (info, name) in infos.iter().zip(&names) {
        series.entry(name.clone()).or_insert(info);
    }
    // Latest finished run per (series, budget, θ); then, as `refresher compare`, the best θ
    // per (series, budget).
    let mut points: BTreeMap<(String, usize, String), SweepPoint> = BTreeMap::new();
    let mut fixed_points: BTreeMap<(String, usize), SweepPoint> = BTreeMap::new();
    let mut finished = 0;
    for ((info, resampled_quality), name) in infos.iter().zip(resamples).zip(names) {
        if info.status.is_finished() {
            finished += 1;
        }
        if info.status != RunStatus::Done {
            continue;
        }
        let point = sweep_point(info, name.clone(), resampled_quality);
        if at_fixed_parameters(info) {
            fixed_points.insert((name.clone(), info.budget), point.clone());
        }
        points.insert(
            (
                name,
                info.budget,
                serde_json::to_string(&info.params).unwrap_or_default(),
            ),
            point,
        );
    }
    let points: Vec<SweepPoint> = points.into_values().collect();
    let fixed_points: Vec<SweepPoint> = fixed_points.into_values().collect();
    let mut policies: Vec<String> = Vec::new();
    let mut budgets: Vec<usize> = Vec::new();
    for p in &points {
        if !policies.contains(&p.policy) {
            policies.push(p.policy.clone());
        }
        budgets.push(p.budget);
    }
    budgets.sort_unstable();
    budgets.dedup();
    let curves = best_curves(&policies, &budgets, &points);
    let fixed_curves = best_curves(&policies, &budgets, &fixed_points);
    let mut rows = table(&curves);
    let mut fixed_rows = table(&fixed_curves);
    if let Some(q0) = unrefreshed_resampled(&curves, &points) {
        add_intervals(&mut rows, &points, &q0);
        add_intervals(&mut fixed_rows, &fixed_points, &q0);
    }
    let oracle_ratios = oracle_ratios(&fixed_rows, &series);
    Comparison {
        sweep,
        runs_total: chosen.len(),
        runs_finished: finished,
        rows,
        curves,
        fixed_rows,
        oracle_ratios,
        oracle_bound: infos.iter().any(|info| {
            info.mode == FitMode::Oracle
                && info.oracle_history == crate::sim::run::OracleHistory::All
        }),
        signals: {
            let mut all: Vec<String> = infos.iter().flat_map(|i| i.signals.clone()).collect();
            all.sort();
            all.dedup();
            all
        },
    }
}

/// Each online series' fixed rows over the full oracle's (see [`Comparison::oracle_ratios`]);
/// `series` maps each series name to one of its runs.
fn oracle_ratios(rows: &[TableRow], series: &BTreeMap<String, &RunInfo>) -> Vec<OracleRatio> {
    // What else sets a series apart; the reference must share it. Not the signals: oracle mode
    // ignores them, so an oracle series of any signal setting is the bound of online runs of
    // every setting (and they all need the same budgets).
    let others = |i: &RunInfo| {
        format!(
            "{:?} {:?} {:?} {:?} {}",
            i.scoring, i.delta_q, i.workload, i.new_page_report.new_pages, i.warmup_units
        )
    };
    // The full oracle's rows, by those settings, read once.
    let mut bounds: BTreeMap<String, Vec<&TableRow>> = BTreeMap::new();
    for row in rows {
        if let Some(i) = series.get(&row.policy).filter(|i| {
            i.policy == FULL_ORACLE
                && i.mode == FitMode::Oracle
                && i.oracle_history == crate::sim::run::OracleHistory::All
        }) {
            bounds.entry(others(i)).or_default().push(row);
        }
    }
    rows.iter()
        .filter_map(|row| {
            let info = series.get(&row.policy)?;
            if info.mode != FitMode::Online {
                return None;
            }
            let reference = bounds.get(&others(info))?;
            Some(OracleRatio::of(row, reference))
        })
        .collect()
}

/// Each run's series name: its policy, followed by the settings in which the runs differ.
fn series_names(infos: &[RunInfo]) -> Vec<String> {
    // Runs of different settings (fit mode, scoring, ΔQ measurement, workload, new pages,
    // warm-up, oracle history) are different series, labelled by what sets them apart, never
    // averaged or mixed into one curve.
    let settings = |info: &RunInfo| {
        [
            info.mode.as_str().to_string(),
            info.scoring.to_string(),
            format!("ΔQ {}", info.delta_q.as_str()),
            serde_json::to_value(info.workload)
                .ok()
                .and_then(|v| v.as_str().map(|w| format!("workload {w}")))
                .unwrap_or_default(),
            serde_json::to_value(info.new_page_report.new_pages)
                .ok()
                .and_then(|v| v.as_str().map(|w| format!("new pages {w}")))
                .unwrap_or_default(),
            format!("warm-up {}", info.warmup_units),
            format!("oracle history {}", info.oracle_history.as_str()),
        ]
    };
    let setting_count = infos.first().map_or(0, |info| settings(info).len());
    let varying: Vec<usize> = (0..setting_count)
        .filter(|&i| {
            let mut values: Vec<String> =
                infos.iter().map(|info| settings(info)[i].clone()).collect();
            values.sort();
            values.dedup();
            values.len() > 1
        })
        .collect();
    let series = |info: &RunInfo| {
        if varying.is_empty() {
            return info.policy.clone();
        }
        let all = settings(info);
        let parts: Vec<&str> = varying.iter().map(|&i| all[i].as_str()).collect();
        format!("{} ({})", info.policy, parts.join(", "))
    };
    infos.iter().map(series).collect()
}

/// A finished run as a point of the comparison's curves.
fn sweep_point(info: &RunInfo, policy: String, resampled_quality: Resampled) -> SweepPoint {
    SweepPoint {
        policy,
        theta: info.theta,
        params: info
            .params
            .iter()
            .map(|(k, v)| (k.clone(), serde_json::to_value(v).unwrap_or_default()))
            .collect(),
        budget: info.budget,
        mean: info.mean.unwrap_or_default(),
        mean_obsolete_pages: info.mean_obsolete_pages,
        new_pages: info.new_page_report.summary.unwrap_or_default(),
        mean_change_rate: None,
        mean_gp4c_ndcg: None,
        paper: info.paper_measures,
        resampled_quality,
    }
}

/// The unrefreshed quality under each resample: that of the `B = 0` run whose mean quality
/// [`table`] takes as Q₀ (`None` without a `B = 0` run, or one judged without resamples).
fn unrefreshed_resampled(curves: &[CurvePoint], points: &[SweepPoint]) -> Resampled {
    let policy = &curves.iter().find(|c| c.budget == 0)?.policy;
    points
        .iter()
        .filter(|p| p.budget == 0 && &p.policy == policy)
        .find_map(|p| p.resampled_quality.clone())
}

/// Whether a run is at parameters fixed before the run: every parameter its family sweeps
/// (SBR/EBR's θ) at its default, given or not.
fn at_fixed_parameters(info: &RunInfo) -> bool {
    family(&info.policy).map_or(true, |f| {
        f.params
            .iter()
            .filter(|p| !p.sweep.is_empty())
            .all(|p| match info.params.get(p.key) {
                None => true,
                Some(ParamValue::Number(x)) => p.default.parse::<f64>().ok() == Some(*x),
                Some(ParamValue::Text(t)) => t == p.default,
            })
    })
}

/// For each policy (in order of first appearance) and target, the smallest budget whose mean
/// quality reaches the target — the same reading as `refresher compare`.
pub fn table(curves: &[CurvePoint]) -> Vec<TableRow> {
    let mut policies: Vec<String> = Vec::new();
    for c in curves {
        if !policies.contains(&c.policy) {
            policies.push(c.policy.clone());
        }
    }
    // Q₀: the B = 0 point, when the sweep has one (every policy's is the same repository).
    let unrefreshed = curves
        .iter()
        .find(|c| c.budget == 0)
        .map(|c| c.mean.quality);
    crate::sim::compare::target_rows(
        &policies,
        curves,
        &crate::sim::compare::default_targets(),
        unrefreshed,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(policy: &str, budget: usize, q: f64) -> CurvePoint {
        CurvePoint {
            policy: policy.into(),
            budget,
            mean: crate::quality::SearchQuality {
                quality: q,
                ..Default::default()
            },
            theta: None,
            params: Default::default(),
            mean_obsolete_pages: None,
            new_pages: Default::default(),
            mean_change_rate: None,
            mean_gp4c_ndcg: None,
            paper: Default::default(),
        }
    }

    #[test]
    fn smallest_budget_reaching_each_target() {
        let curves = vec![
            point("a", 0, 0.91),
            point("a", 5, 0.985),
            point("a", 10, 0.9991),
            point("b", 5, 0.96),
        ];
        let rows = table(&curves);
        let needed = |p: &str, t: f64| {
            rows.iter()
                .find(|r| r.policy == p && r.target_quality == t)
                .unwrap()
                .budget_needed
        };
        assert_eq!(needed("a", 0.90), Some(0));
        assert_eq!(needed("a", 0.98), Some(5));
        assert_eq!(needed("a", 0.99), Some(10));
        assert_eq!(needed("a", 0.999), Some(10));
        assert_eq!(needed("b", 0.95), Some(5));
        assert_eq!(needed("b", 0.98), None);
        // Six absolute targets and five shares of the gap from Q₀ = the B = 0 point, per policy.
        assert_eq!(rows.len(), 22);
        assert!(rows.iter().any(|r| r.gap_share == Some(0.5)));
    }
}
