//! Policies by name (DESIGN.md §7): `user-centric`, `sbr`, `ebr`, `round-robin`, `random`,
//! `age`.

use super::baselines::{OldestFirst, RoundRobin, UniformRandom};
use super::ebr::Ebr;
use super::sbr::Sbr;
use super::user_centric::UserCentric;
use super::RefreshPolicy;

/// Every policy name [`make_policy`] accepts, in the order results list them.
pub const POLICY_NAMES: &[&str] = &["user-centric", "sbr", "ebr", "round-robin", "random", "age"];

/// Default shingle threshold of SBR and EBR when none is given: 0, i.e. every content change
/// counts (paper 003's "simplest implementation of SBR"); sweeps pass 0.1 … 1.0.
pub const DEFAULT_THETA: f64 = 0.0;

/// Options beyond the threshold.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PolicyOptions {
    /// User-centric: average `ΔQ̄` over the last `W` refreshes only (default: all).
    pub window: Option<usize>,
    /// User-centric: how `ΔQ̄` is estimated (default: by fit mode,
    /// [`super::user_centric::Estimator::default_for`]).
    pub estimator: Option<super::user_centric::Estimator>,
    /// SBR/EBR online: replan every this many units (default
    /// [`super::planned::DEFAULT_REPLAN_EVERY`]).
    pub replan_every: Option<u32>,
}

/// Whether the named policy takes a shingle threshold θ (`sbr`, `ebr`).
pub fn uses_threshold(name: &str) -> bool {
    matches!(name, "sbr" | "ebr")
}

/// Builds a policy by name. `theta` is the shingle threshold of `sbr`/`ebr` (must lie in
/// `[0, 1]`); giving one to another policy is an error, as is an unknown name.
pub fn make_policy(
    name: &str,
    theta: Option<f64>,
    options: &PolicyOptions,
) -> Result<Box<dyn RefreshPolicy>, String> {
    if let Some(t) = theta {
        if !uses_threshold(name) {
            return Err(format!(
                "policy `{name}` takes no shingle threshold (got θ = {t}); only sbr and ebr do"
            ));
        }
        if !(0.0..=1.0).contains(&t) {
            return Err(format!(
                "shingle threshold θ = {t} for `{name}` is outside [0, 1]"
            ));
        }
    }
    let theta = theta.unwrap_or(DEFAULT_THETA);
    Ok(match name {
        "user-centric" => {
            Box::new(UserCentric::new(options.window).with_estimator(options.estimator))
        }
        "sbr" => {
            let mut p = Sbr::new(theta);
            if let Some(r) = options.replan_every {
                p.planner.replan_every = r.max(1);
            }
            Box::new(p)
        }
        "ebr" => {
            let mut p = Ebr::new(theta);
            if let Some(r) = options.replan_every {
                p.planner.replan_every = r.max(1);
            }
            Box::new(p)
        }
        "round-robin" => Box::new(RoundRobin::default()),
        "random" => Box::new(UniformRandom::default()),
        "age" => Box::new(OldestFirst::default()),
        other => {
            return Err(format!(
                "unknown policy `{other}`; expected one of: {}",
                POLICY_NAMES.join(", ")
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::{context, history, run};
    use crate::policy::FitMode;

    #[test]
    fn builds_every_named_policy_and_rejects_bad_requests() {
        for &name in POLICY_NAMES {
            let p = make_policy(name, None, &PolicyOptions::default()).unwrap();
            assert_eq!(p.name(), name);
        }
        assert!(make_policy("sbr", Some(0.3), &PolicyOptions::default()).is_ok());
        assert!(make_policy("sbr", Some(1.5), &PolicyOptions::default()).is_err());
        assert!(make_policy("age", Some(0.3), &PolicyOptions::default()).is_err());
        let err = make_policy("greedy", None, &PolicyOptions::default())
            .err()
            .unwrap();
        assert!(
            err.contains("greedy") && err.contains("user-centric"),
            "{err}"
        );
    }

    #[test]
    fn every_policy_chooses_within_budget_deterministically_in_both_modes() {
        let changes: Vec<Vec<u32>> = (0..30u32)
            .map(|p| (1..=12).filter(|t| (t * (p + 3)) % 7 < (p % 4)).collect())
            .collect();
        let shingle: Vec<f64> = (0..30).map(|p| (p % 10) as f64 / 10.0).collect();
        let dq: Vec<f64> = (0..30).map(|p| (p % 5) as f64).collect();
        let h = history(13, &changes, &shingle, &dq);
        let pages: Vec<u32> = (0..30).collect();
        let views: Vec<f64> = (0..30).map(|p| (p % 3) as f64).collect();
        for mode in [FitMode::Oracle, FitMode::Online] {
            let hist = (mode == FitMode::Oracle).then_some(&h);
            let ctx = context(mode, &pages, &views, hist, 12, 4);
            for &name in POLICY_NAMES {
                let theta = uses_threshold(name).then_some(0.3);
                let mut a = make_policy(name, theta, &PolicyOptions::default()).unwrap();
                let mut b = make_policy(name, theta, &PolicyOptions::default()).unwrap();
                let ra = run(a.as_mut(), &ctx, &h);
                assert_eq!(ra, run(b.as_mut(), &ctx, &h), "{name} {mode:?}");
                assert!(
                    ra.iter().all(|c| c.len() == 4),
                    "{name} {mode:?} spends the budget"
                );
            }
        }
    }
}
