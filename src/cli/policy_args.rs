//! Policy flags shared by `simulate`, `compare`, `serve` and `crawl`: `--param key=value`
//! (repeatable), the one spelling of a policy parameter. `simulate`'s `--theta`,
//! `--uc-estimator` and `--uc-window` and `compare`'s `--uc-estimator` are kept as aliases of
//! `--param theta=`, `estimator=` and `window=` (see `super::former_flags`). Every value is
//! checked against the family table.

use refresher::policy::family::{ParamValue, PolicyError};

use super::former_flags::{Disagree, FormerUse};

/// A `key=value` flag value.
pub fn parse_param(text: &str) -> Result<(String, String), super::ArgError> {
    let (k, v) = text
        .split_once('=')
        .ok_or_else(|| super::ArgError::NoKeyValue {
            text: text.to_string(),
        })?;
    let k = k.trim();
    if k.is_empty() {
        return Err(super::ArgError::EmptyKey {
            text: text.to_string(),
        });
    }
    Ok((k.to_string(), v.trim().to_string()))
}

/// A policy parameter's former flag (`--theta 0.3` for `--param theta=0.3`) and its value, if
/// given.
pub struct Shorthand {
    pub(crate) flag: &'static str,
    pub(crate) key: &'static str,
    pub(crate) value: Option<String>,
}

/// A parameter as given: key, value, and the flag it came from (for messages).
pub type Given = (String, ParamValue, String);

/// The parameters given on the command line: the shorthands', then the `--param`s. A
/// shorthand and a `--param` of the same key must agree.
pub fn collect(
    params: &[(String, String)],
    shorthands: &[Shorthand],
) -> anyhow::Result<Vec<Given>> {
    let mut out: Vec<Given> = Vec::new();
    for s in shorthands {
        let Some(value) = &s.value else { continue };
        if let Some((k, v)) = params
            .iter()
            .find(|(k, v)| k == s.key && !same_value(v, value))
        {
            return Err(Disagree::new(
                format!("--param {k}={v}"),
                "--param",
                format!("{} {value}", s.flag),
                s.flag,
            )
            .into());
        }
        out.push((
            s.key.to_string(),
            ParamValue::Text(value.clone()),
            s.flag.to_string(),
        ));
    }
    out.extend(params.iter().map(|(k, v)| {
        (
            k.clone(),
            ParamValue::Text(v.clone()),
            format!("--param {k}"),
        )
    }));
    Ok(out)
}

/// The shorthands used, each with the `--param` to write instead.
pub fn former_uses(shorthands: &[Shorthand]) -> Vec<FormerUse> {
    shorthands
        .iter()
        .filter_map(|s| {
            s.value.as_ref().map(|v| FormerUse {
                flag: s.flag,
                instead: format!("--param {}={v}", s.key),
            })
        })
        .collect()
}

/// Two spellings of a parameter's value mean the same: the same text, or the same number
/// (`0.5` and `0.50`).
pub fn same_value(a: &str, b: &str) -> bool {
    a == b
        || matches!(
            (a.parse::<f64>(), b.parse::<f64>()),
            (Ok(x), Ok(y)) if x == y
        )
}

/// A policy error prefixed with the flag the user wrote.
pub fn explain(error: PolicyError, given: &[Given], policy_flag: &str) -> anyhow::Error {
    let flag = error
        .key()
        .and_then(|k| given.iter().rev().find(|(key, _, _)| key == k))
        .map(|(_, _, flag)| flag.as_str())
        .unwrap_or(policy_flag);
    anyhow::anyhow!("{flag}: {error}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn theta(value: Option<&str>) -> Shorthand {
        Shorthand {
            flag: "--theta",
            key: "theta",
            value: value.map(str::to_string),
        }
    }

    #[test]
    fn a_shorthand_gives_its_parameter_and_the_param_to_write() {
        let given = collect(&[], &[theta(Some("0.3"))]).unwrap();
        assert_eq!(
            given,
            vec![(
                "theta".to_string(),
                ParamValue::Text("0.3".into()),
                "--theta".to_string()
            )]
        );
        let notes: Vec<String> = former_uses(&[theta(Some("0.3")), theta(None)])
            .iter()
            .map(FormerUse::note)
            .collect();
        assert_eq!(
            notes,
            ["note: --theta is kept as an alias; write --param theta=0.3"]
        );
    }

    #[test]
    fn a_shorthand_and_a_param_of_one_key_must_agree() {
        let param = |v: &str| vec![("theta".to_string(), v.to_string())];
        assert_eq!(
            collect(&param("0.30"), &[theta(Some("0.3"))])
                .unwrap()
                .len(),
            2
        );
        let error = collect(&param("0.5"), &[theta(Some("0.3"))]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "--param theta=0.5 and --theta 0.3 disagree (--theta is kept as an alias of \
             --param): give one"
        );
        // Another key is no conflict.
        let window = vec![("window".to_string(), "2".to_string())];
        assert_eq!(collect(&window, &[theta(Some("0.3"))]).unwrap().len(), 2);
    }
}
