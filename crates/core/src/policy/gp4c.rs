//! `gp4c`: refresh by a score function learned by `refresher gp4c train` (paper 001's GP4C,
//! [`crate::learn::gp4c`]): each unit, score every page from its own statistics (`n, X, t`,
//! CG, NAD, SAD, AAD, GAD, as the other paper 001 score policies compute them) and refresh
//! the `B` best.
//!
//! The function comes from a file (`function=FILE`, the text `gp4c train --out` writes) or
//! inline (`expr=TEXT`); without either it is `t * X`, Table 4's simplest best function.

use std::sync::Arc;

use crate::learn::gp4c::Expr;

use super::family::{ParamKind, ParamSpec, ParamValue, Params, PolicyError, PolicyFamily};
use super::history_score::{build, Score};
use super::RefreshPolicy;

/// The function used when none is given (paper 001 Table 4).
pub(crate) const DEFAULT_FUNCTION: &str = "t * X";

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        key: "function",
        description: "A file holding the function (the text `refresher gp4c train --out` writes)",
        kind: ParamKind::Text,
        default: "none (t * X)",
        sweep: &[],
    },
    ParamSpec {
        key: "expr",
        description: "The function inline, e.g. `t * X + log(n)` (terminals n X t CG NAD SAD AAD GAD; + - * / ^ log exp pow)",
        kind: ParamKind::Text,
        default: "t * X",
        sweep: &[],
    },
];

/// Reads the function of `params` (see the module docs). Errors name the parameter, the file
/// and the column.
pub(crate) fn function(params: &Params) -> Result<Expr, PolicyError> {
    let bad = |key: &str, value: &str, expected: String| PolicyError::BadValue {
        policy: FAMILY.name.to_string(),
        key: key.to_string(),
        value: value.to_string(),
        expected,
    };
    match (params.choice("function"), params.choice("expr")) {
        (Some(_), Some(_)) => Err(bad(
            "expr",
            params.choice("expr").unwrap_or_default(),
            "give either `function` (a file) or `expr`, not both".into(),
        )),
        (Some(path), None) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| bad("function", path, format!("cannot read the file: {e}")))?;
            // The first non-empty line that is not a comment holds the function.
            let line = text
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty() && !l.starts_with('#'))
                .ok_or_else(|| bad("function", path, "the file holds no function".into()))?;
            Expr::parse(line).map_err(|e| bad("function", path, format!("{e} of `{line}`")))
        }
        (None, Some(text)) => Expr::parse(text).map_err(|e| bad("expr", text, e.to_string())),
        (None, None) => Ok(Expr::parse(DEFAULT_FUNCTION).expect("the default parses")),
    }
}

/// `gp4c`: a learned score function.
pub(crate) const FAMILY: PolicyFamily = PolicyFamily {
    name: "gp4c",
    description: "Paper 001: highest score under a GP4C-learned function of n, X, t, CG, NAD, SAD, AAD, GAD (gp4c train)",
    params: PARAMS,
    build: |params: &Params| -> Result<Box<dyn RefreshPolicy>, PolicyError> {
        build(Score::Learned(Arc::new(function(params)?)))
    },
};

/// The parameters naming an inline function (for callers that hold a function's text).
pub fn inline(text: &str) -> Vec<(&'static str, ParamValue)> {
    vec![("expr", ParamValue::Text(text.to_string()))]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::{context, history, run};
    use crate::policy::FitMode;

    #[test]
    fn reads_the_function_from_a_file_or_inline_and_names_bad_input() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f.txt");
        std::fs::write(&file, "# trained\n(t * X) + log(n)\n").unwrap();
        let path = file.to_str().unwrap().to_string();
        let p = FAMILY
            .params([("function", ParamValue::Text(path.clone()))])
            .unwrap();
        assert_eq!(function(&p).unwrap().to_string(), "(t * X) + log(n)");
        let p = FAMILY.params(inline("t*CG^2.72")).unwrap();
        assert_eq!(function(&p).unwrap().to_string(), "t * pow(CG, 2.72)");
        assert_eq!(
            function(&FAMILY.params([]).unwrap()).unwrap().to_string(),
            DEFAULT_FUNCTION
        );
        let err = FAMILY.make(inline("t * Y")).err().unwrap();
        assert_eq!(err.key(), Some("expr"));
        assert!(err.to_string().contains("column 5"), "{err}");
        std::fs::write(&file, "t +\n").unwrap();
        let err = FAMILY
            .make([("function", ParamValue::Text(path.clone()))])
            .err()
            .unwrap();
        assert!(err.to_string().contains(&path), "{err}");
        let err = FAMILY
            .make([("function", ParamValue::Text("/no/such/file".into()))])
            .err()
            .unwrap();
        assert!(err.to_string().contains("cannot read"), "{err}");
    }

    /// `expr=t*X` refreshes as the fixed `gp-t-x` policy does (same scores, same ties).
    #[test]
    fn a_learned_t_times_x_chooses_as_gp_t_x() {
        let changes: Vec<Vec<u32>> = (0..20u32)
            .map(|p| (1..=10).filter(|t| (t * (p + 2)) % 5 < (p % 3)).collect())
            .collect();
        let h = history(11, &changes, &[0.5; 20], &[1.0; 20]);
        let pages: Vec<u32> = (0..20).collect();
        for mode in [FitMode::Online, FitMode::Oracle] {
            let hist = (mode == FitMode::Oracle).then_some(&h);
            let ctx = context(mode, &pages, &[1.0; 20], hist, 10, 3);
            let mut learned = FAMILY.make(inline("t * X")).unwrap();
            let mut fixed = crate::policy::registry::make_policy("gp-t-x", []).unwrap();
            assert_eq!(
                run(learned.as_mut(), &ctx, &h),
                run(fixed.as_mut(), &ctx, &h),
                "{mode:?}"
            );
        }
    }
}
