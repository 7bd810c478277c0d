//! Side-by-side comparison of refresh policies (paper 003 Fig. 4): sweep the budget `B` (and the
//! shingle threshold θ of SBR/EBR), then read off the budget each policy needs to reach a
//! target repository quality.

use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use crate::index::IndexError;
use crate::policy::registry::{make_policy, uses_threshold, PolicyOptions};
use crate::policy::user_centric::Estimator;
use crate::policy::FitMode;

use super::environment::Environment;
use super::run::{run, RunConfig};

/// Target qualities of the Fig. 4 table (DESIGN §7).
pub const TARGET_QUALITIES: [f64; 6] = [0.90, 0.95, 0.98, 0.99, 0.995, 0.999];

/// Thresholds swept for SBR and EBR (paper 003 §6: θ ∈ {0.1, …, 1.0}).
pub const THRESHOLDS: [f64; 10] = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0];

/// What to sweep.
#[derive(Debug, Clone)]
pub struct SweepConfig {
    pub policies: Vec<String>,
    pub budgets: Vec<usize>,
    pub thresholds: Vec<f64>,
    pub mode: FitMode,
    pub seed: u64,
    /// Options of every policy built (the θ of each SBR/EBR run comes from `thresholds`).
    pub options: PolicyOptions,
}

/// The default budget grid: 0, then powers of two up to the largest number of pages present
/// in any unit (refreshing every page each unit keeps the repository exact), so the grid reaches
/// every target quality whatever the site.
pub fn default_budgets(max_pages: usize) -> Vec<usize> {
    let mut budgets = vec![0];
    let mut b = 1;
    while b < max_pages {
        budgets.push(b);
        b *= 2;
    }
    budgets.push(max_pages.max(1));
    budgets
}

/// One run of the sweep.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SweepPoint {
    pub policy: String,
    pub theta: Option<f64>,
    pub budget: usize,
    pub mean_quality: f64,
    pub mean_fresh_at_10: f64,
    pub mean_map_at_10: f64,
}

/// A point of a policy's curve (SBR/EBR: the best θ at that budget).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CurvePoint {
    pub policy: String,
    pub budget: usize,
    pub mean_quality: f64,
    pub mean_fresh_at_10: f64,
    pub mean_map_at_10: f64,
    /// The threshold that gave this point (SBR/EBR only).
    #[serde(default)]
    pub theta: Option<f64>,
}

/// A cell of the Fig. 4 table.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TargetRow {
    pub policy: String,
    pub target_quality: f64,
    /// The smallest budget of the grid whose mean quality reaches the target; 0 when the
    /// repository reaches it with no refresh; `None` when no budget of the grid does.
    pub budget_needed: Option<usize>,
}

/// The result of a sweep.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Comparison {
    pub mode: FitMode,
    pub scoring: String,
    pub units: u32,
    pub workload_queries: usize,
    /// The ΔQ̄ estimator user-centric ran with in this mode.
    pub uc_estimator: Estimator,
    pub rows: Vec<TargetRow>,
    pub curves: Vec<CurvePoint>,
    pub points: Vec<SweepPoint>,
    pub seconds: f64,
}

/// Runs every (policy, θ, B) of `config` in parallel; `progress(done, total)` is called after
/// each run.
pub fn sweep(
    env: &Environment<'_>,
    config: &SweepConfig,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Comparison, IndexError> {
    let started = std::time::Instant::now();
    let mut jobs: Vec<(String, Option<f64>, usize)> = Vec::new();
    for policy in &config.policies {
        for &budget in &config.budgets {
            if uses_threshold(policy) && budget > 0 {
                for &t in &config.thresholds {
                    jobs.push((policy.clone(), Some(t), budget));
                }
            } else {
                jobs.push((policy.clone(), None, budget));
            }
        }
    }
    let done = AtomicUsize::new(0);
    let total = jobs.len();
    let points: Vec<SweepPoint> = jobs
        .par_iter()
        .map(|(policy, theta, budget)| {
            let p = make_policy(policy, *theta, &config.options)
                .expect("policy names are validated before the sweep");
            let mut rc = RunConfig::new(*budget, config.mode);
            rc.seed = config.seed;
            let r = run(env, p, &rc)?;
            progress(done.fetch_add(1, Ordering::Relaxed) + 1, total);
            Ok(SweepPoint {
                policy: policy.clone(),
                theta: *theta,
                budget: *budget,
                mean_quality: r.mean_quality,
                mean_fresh_at_10: r.mean_fresh_at_10,
                mean_map_at_10: r.mean_map_at_10,
            })
        })
        .collect::<Result<_, IndexError>>()?;
    let curves = best_curves(&config.policies, &config.budgets, &points);
    let rows = target_rows(&config.policies, &curves);
    Ok(Comparison {
        mode: config.mode,
        scoring: env.config.scoring.name().to_string(),
        units: env.units(),
        workload_queries: env.workload.queries.len(),
        uc_estimator: config
            .options
            .estimator
            .unwrap_or_else(|| Estimator::default_for(config.mode)),
        rows,
        curves,
        points,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Per policy and budget, the best point (SBR/EBR: best θ, ties to the smaller θ).
pub fn best_curves(
    policies: &[String],
    budgets: &[usize],
    points: &[SweepPoint],
) -> Vec<CurvePoint> {
    let mut curves = Vec::new();
    for policy in policies {
        for &budget in budgets {
            let best = points
                .iter()
                .filter(|p| &p.policy == policy && p.budget == budget)
                .max_by(|a, b| {
                    a.mean_quality
                        .total_cmp(&b.mean_quality)
                        .then(b.theta.unwrap_or(0.0).total_cmp(&a.theta.unwrap_or(0.0)))
                });
            if let Some(p) = best {
                curves.push(CurvePoint {
                    policy: policy.clone(),
                    budget,
                    mean_quality: p.mean_quality,
                    mean_fresh_at_10: p.mean_fresh_at_10,
                    mean_map_at_10: p.mean_map_at_10,
                    theta: p.theta,
                });
            }
        }
    }
    curves
}

/// The Fig. 4 table: the smallest budget reaching each target quality.
pub fn target_rows(policies: &[String], curves: &[CurvePoint]) -> Vec<TargetRow> {
    let mut rows = Vec::new();
    for policy in policies {
        let mut curve: Vec<&CurvePoint> = curves.iter().filter(|c| &c.policy == policy).collect();
        curve.sort_by_key(|c| c.budget);
        for &target in &TARGET_QUALITIES {
            rows.push(TargetRow {
                policy: policy.clone(),
                target_quality: target,
                budget_needed: curve
                    .iter()
                    .find(|c| c.mean_quality >= target - 1e-12)
                    .map(|c| c.budget),
            });
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(policy: &str, theta: Option<f64>, budget: usize, q: f64) -> SweepPoint {
        SweepPoint {
            policy: policy.into(),
            theta,
            budget,
            mean_quality: q,
            mean_fresh_at_10: q,
            mean_map_at_10: q,
        }
    }

    #[test]
    fn best_theta_per_budget_and_budget_needed() {
        let policies = vec!["sbr".to_string(), "age".to_string()];
        let points = vec![
            point("sbr", None, 0, 0.95),
            point("sbr", Some(0.1), 4, 0.97),
            point("sbr", Some(0.5), 4, 0.985),
            point("sbr", Some(0.1), 8, 0.991),
            point("sbr", Some(0.5), 8, 0.99),
            point("age", None, 0, 0.95),
            point("age", None, 4, 0.96),
            point("age", None, 8, 0.97),
        ];
        let curves = best_curves(&policies, &[0, 4, 8], &points);
        let sbr4 = curves
            .iter()
            .find(|c| c.policy == "sbr" && c.budget == 4)
            .unwrap();
        assert_eq!(sbr4.theta, Some(0.5));
        let rows = target_rows(&policies, &curves);
        let need = |p: &str, t: f64| {
            rows.iter()
                .find(|r| r.policy == p && r.target_quality == t)
                .unwrap()
                .budget_needed
        };
        assert_eq!(need("sbr", 0.90), Some(0));
        assert_eq!(need("sbr", 0.98), Some(4));
        assert_eq!(need("sbr", 0.99), Some(8));
        assert_eq!(need("sbr", 0.999), None);
        assert_eq!(need("age", 0.98), None);
    }

    #[test]
    fn default_grid_reaches_every_page() {
        assert_eq!(default_budgets(10), vec![0, 1, 2, 4, 8, 10]);
        assert_eq!(default_budgets(8), vec![0, 1, 2, 4, 8]);
    }
}
