//! The table of policy families (see [`super::family`](mod@super::family)): one row per family, in the order
//! results list them. Adding a family is one file defining its [`PolicyFamily`] and one row
//! here.

use super::family::{ParamValue, PolicyError, PolicyFamily};
use super::{
    baselines, ebr, gp4c, history_score, lambdacrawl, sampling, sbr, user_centric, webfountain,
    RefreshPolicy,
};

/// Every family, in the order results list them.
pub static FAMILIES: &[&PolicyFamily] = &[
    &user_centric::FAMILY,
    &sbr::FAMILY,
    &ebr::FAMILY,
    &lambdacrawl::FAMILY,
    &baselines::ROUND_ROBIN,
    &baselines::RANDOM,
    &baselines::AGE,
    &history_score::CG,
    &history_score::NAD,
    &history_score::SAD,
    &history_score::AAD,
    &history_score::GAD,
    &history_score::GP_T_X,
    &history_score::GP_T_CG,
    &history_score::GP_GAD_NAD_T,
    &gp4c::FAMILY,
    &webfountain::policy::S1,
    &webfountain::policy::S2,
    &webfountain::policy::S3,
    &sampling::cls::FAMILY,
    &sampling::neighbourhood::SAMPLE_LB,
    &sampling::neighbourhood::SAMPLE_DB,
    &sampling::neighbourhood::SAMPLE_CB,
    &sampling::gsb::GSB,
    &sampling::gsb::RNS,
];

/// The families `compare` runs when none are named: paper 003's schemes, LambdaCrawl and the
/// baselines (paper 001's score policies are named explicitly, e.g.
/// `--policies user-centric,gad,gp-t-x`).
pub const DEFAULT_COMPARISON: &[&str] = &[
    "user-centric",
    "sbr",
    "ebr",
    "lambdacrawl",
    "round-robin",
    "random",
    "age",
];

pub use super::planned::DEFAULT_THETA;

/// The family named `name`.
pub fn family(name: &str) -> Result<&'static PolicyFamily, PolicyError> {
    FAMILIES
        .iter()
        .copied()
        .find(|f| f.name == name)
        .ok_or_else(|| PolicyError::UnknownPolicy {
            name: name.to_string(),
            known: names().join(", "),
        })
}

/// Every family's name, in table order.
pub fn names() -> Vec<&'static str> {
    FAMILIES.iter().map(|f| f.name).collect()
}

/// Builds a policy by family name and parameters.
pub fn make_policy<'a>(
    name: &str,
    params: impl IntoIterator<Item = (&'a str, ParamValue)>,
) -> Result<Box<dyn RefreshPolicy>, PolicyError> {
    family(name)?.make(params)
}

/// Every family as JSON: `refresher policies --json`, `GET /api/policies`.
pub fn families_json() -> serde_json::Value {
    serde_json::Value::Array(FAMILIES.iter().map(|f| f.to_json()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::family::{expand_sweep, GridDefault};
    use crate::policy::testkit::{context, history, run};
    use crate::policy::FitMode;
    use std::collections::BTreeMap;

    fn theta(t: f64) -> Vec<(&'static str, ParamValue)> {
        vec![("theta", ParamValue::Number(t))]
    }

    #[test]
    fn builds_every_family_and_rejects_bad_requests() {
        for f in FAMILIES {
            let p = make_policy(f.name, []).unwrap();
            assert_eq!(p.name(), f.name);
        }
        assert!(make_policy("sbr", theta(0.3)).is_ok());
        let err = make_policy("sbr", theta(1.5)).err().unwrap();
        assert_eq!(err.key(), Some("theta"));
        assert!(err.to_string().contains("[0, 1]"), "{err}");
        let err = make_policy("age", theta(0.3)).err().unwrap();
        assert!(err.to_string().contains("takes none"), "{err}");
        let err = make_policy("greedy", []).err().unwrap();
        assert!(
            err.to_string().contains("greedy") && err.to_string().contains("user-centric"),
            "{err}"
        );
        let err = make_policy(
            "user-centric",
            [("estimator", ParamValue::Text("best".into()))],
        )
        .err()
        .unwrap();
        assert!(err.to_string().contains("viewed"), "{err}");
        let err = make_policy("user-centric", [("window", ParamValue::Number(0.5))])
            .err()
            .unwrap();
        assert!(err.to_string().contains("integer"), "{err}");
        // Text values of number parameters are parsed (the CLI's key=value).
        assert!(make_policy("ebr", [("theta", ParamValue::Text("0.25".into()))]).is_ok());
    }

    #[test]
    fn every_family_describes_its_parameters() {
        let json = families_json();
        let list = json.as_array().unwrap();
        assert_eq!(list.len(), FAMILIES.len());
        for f in list {
            assert!(!f["description"].as_str().unwrap().is_empty());
            for p in f["params"].as_array().unwrap() {
                assert!(!p["key"].as_str().unwrap().is_empty());
                assert!(!p["default"].as_str().unwrap().is_empty());
            }
        }
        let sbr = list.iter().find(|f| f["name"] == "sbr").unwrap();
        assert_eq!(sbr["params"][0]["key"], "theta");
        assert_eq!(sbr["params"][0]["sweep"].as_array().unwrap().len(), 10);
    }

    #[test]
    fn sweeps_expand_grids_per_family_and_one_run_at_budget_zero() {
        let families = [family("sbr").unwrap(), family("age").unwrap()];
        let runs = expand_sweep(
            &families,
            &[0, 4],
            &[],
            &BTreeMap::new(),
            GridDefault::FamilyGrids,
        )
        .unwrap();
        // sbr: B = 0 once, B = 4 at ten θ; age: once per budget.
        assert_eq!(runs.len(), 1 + 10 + 2);
        assert_eq!(runs[1].params.number("theta"), Some(0.1));
        let only = expand_sweep(
            &families,
            &[0, 4],
            &[],
            &BTreeMap::new(),
            GridDefault::OnlyGiven,
        )
        .unwrap();
        assert_eq!(only.len(), 4);
        let grids = BTreeMap::from([("theta".to_string(), vec![0.2, 0.4])]);
        let fixed = vec![("replan_every".to_string(), ParamValue::Number(2.0))];
        let given = expand_sweep(&families, &[4], &fixed, &grids, GridDefault::OnlyGiven).unwrap();
        assert_eq!(given.len(), 3);
        assert_eq!(given[0].params.number("replan_every"), Some(2.0));
        assert_eq!(given[1].params.number("theta"), Some(0.4));
        assert!(expand_sweep(
            &families,
            &[4],
            &[],
            &BTreeMap::from([("window".to_string(), vec![1.0])]),
            GridDefault::OnlyGiven
        )
        .is_err());
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
            for f in FAMILIES {
                let params = if f.param("theta").is_some() {
                    theta(0.3)
                } else {
                    vec![]
                };
                let mut a = f.make(params.clone()).unwrap();
                let mut b = f.make(params).unwrap();
                let ra = run(a.as_mut(), &ctx, &h);
                assert_eq!(ra, run(b.as_mut(), &ctx, &h), "{} {mode:?}", f.name);
                assert!(
                    ra.iter().all(|c| c.len() == 4),
                    "{} {mode:?} spends the budget",
                    f.name
                );
            }
        }
    }
}
