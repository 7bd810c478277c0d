//! Comparison sweeps: every policy at every budget, and the paper's Fig. 4 read off the
//! results — for each target quality, the smallest budget in the grid whose run reaches it.

use std::collections::BTreeMap;

use crate::index::ScoringKind;
use crate::policy::registry::uses_threshold;
use crate::policy::FitMode;
use crate::sim::compare::{best_curves, SweepPoint};
pub use crate::sim::compare::{CurvePoint, TargetRow as TableRow, TARGET_QUALITIES as TARGETS};

use super::error::ApiError;
use super::runs::{Run, RunManager, RunSpec, RunStatus, WorkloadSource};

/// Most runs one sweep may queue.
pub const MAX_SWEEP_RUNS: usize = 200;

/// What `POST /api/compare` accepts.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepSpec {
    /// Default: every policy the server offers.
    #[serde(default)]
    pub policies: Vec<String>,
    pub budgets: Vec<usize>,
    #[serde(default)]
    pub mode: Option<FitMode>,
    #[serde(default)]
    pub scoring: Option<ScoringKind>,
    #[serde(default)]
    pub workload: WorkloadSource,
    /// Shingle thresholds θ swept for sbr/ebr, each budget run once per θ and the best θ kept
    /// per budget (paper 003 §6). Empty: one run at the policy's default θ.
    #[serde(default)]
    pub thetas: Vec<f64>,
}

/// The body of `GET /api/compare`.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Comparison {
    /// The sweep shown (`None`: every finished run).
    pub sweep: Option<u64>,
    pub runs_total: usize,
    pub runs_finished: usize,
    pub rows: Vec<TableRow>,
    pub curves: Vec<CurvePoint>,
}

/// Validates a sweep and queues its runs (policy-major, budgets ascending). Returns the
/// sweep id and the run ids.
pub fn start_sweep(
    manager: &RunManager,
    next_sweep: u64,
    spec: SweepSpec,
) -> Result<Vec<u64>, ApiError> {
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
    let mut thetas = spec.thetas;
    thetas.sort_by(f64::total_cmp);
    thetas.dedup();
    // The thresholds of a policy's runs at a budget (at B = 0 θ changes nothing: one run).
    let thresholds_of = |p: &str, budget: usize| -> Vec<Option<f64>> {
        if uses_threshold(p) && !thetas.is_empty() && budget > 0 {
            thetas.iter().copied().map(Some).collect()
        } else {
            vec![None]
        }
    };
    let total: usize = policies
        .iter()
        .flat_map(|p| budgets.iter().map(|&b| thresholds_of(p, b).len()))
        .sum();
    if total > MAX_SWEEP_RUNS {
        return Err(ApiError::BadParameter(format!(
            "a sweep may hold at most {MAX_SWEEP_RUNS} runs ({total} asked: {} policies × {} budgets, sbr/ebr × {} thresholds)",
            policies.len(),
            budgets.len(),
            thetas.len().max(1)
        )));
    }
    for p in &policies {
        if !manager.policies.names.contains(p) {
            return Err(ApiError::BadParameter(format!(
                "unknown policy `{p}`; expected one of: {}",
                manager.policies.names.join(", ")
            )));
        }
    }
    let mut ids = Vec::new();
    for p in &policies {
        for &b in &budgets {
            for theta in thresholds_of(p, b) {
                let run = manager.start(
                    RunSpec {
                        policy: p.clone(),
                        budget: b,
                        mode: spec.mode.unwrap_or(FitMode::Oracle),
                        scoring: spec.scoring,
                        workload: spec.workload,
                        seed: None,
                        theta,
                    },
                    Some(next_sweep),
                )?;
                ids.push(run.id);
            }
        }
    }
    Ok(ids)
}

/// The table and curves of the runs of `sweep` (or of every run), from finished runs only.
pub fn comparison(runs: &[std::sync::Arc<Run>], sweep: Option<u64>) -> Comparison {
    let chosen: Vec<&std::sync::Arc<Run>> = runs
        .iter()
        .filter(|r| sweep.is_none() || r.sweep == sweep)
        .collect();
    // Latest finished run per (policy, budget, θ); then, as `refresher compare`, the best θ
    // per (policy, budget).
    let mut points: BTreeMap<(String, usize, Option<u64>), SweepPoint> = BTreeMap::new();
    let mut finished = 0;
    for run in &chosen {
        let info = run.info();
        if info.status.is_finished() {
            finished += 1;
        }
        if info.status != RunStatus::Done {
            continue;
        }
        points.insert(
            (
                info.policy.clone(),
                info.budget,
                info.theta.map(f64::to_bits),
            ),
            SweepPoint {
                policy: info.policy,
                theta: info.theta,
                budget: info.budget,
                mean_quality: info.mean_quality.unwrap_or(0.0),
                mean_fresh_at_10: info.mean_fresh_at_10.unwrap_or(0.0),
                mean_map_at_10: info.mean_map_at_10.unwrap_or(0.0),
            },
        );
    }
    let points: Vec<SweepPoint> = points.into_values().collect();
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
    Comparison {
        sweep,
        runs_total: chosen.len(),
        runs_finished: finished,
        rows: table(&curves),
        curves,
    }
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
    crate::sim::compare::target_rows(&policies, curves)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(policy: &str, budget: usize, q: f64) -> CurvePoint {
        CurvePoint {
            policy: policy.into(),
            budget,
            mean_quality: q,
            mean_fresh_at_10: 0.0,
            mean_map_at_10: 0.0,
            theta: None,
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
        assert_eq!(rows.len(), 12);
    }
}
