//! Policy flags shared by `simulate` and `compare`: `--param key=value` (repeatable), with
//! `--theta`, `--uc-estimator` and `--uc-window` kept as shorthands for the `theta`,
//! `estimator` and `window` parameters. Every value is checked against the family table.

use refresher::policy::family::{ParamValue, PolicyError};

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

/// The parameters given on the command line, shorthands first so that an explicit
/// `--param` of the same key wins. Each pair carries the flag it came from, for messages.
pub fn collect(
    params: &[(String, String)],
    shorthands: &[(&'static str, &'static str, Option<String>)],
) -> Vec<(String, ParamValue, String)> {
    let mut out: Vec<(String, ParamValue, String)> = shorthands
        .iter()
        .filter_map(|(flag, key, v)| {
            v.as_ref().map(|v| {
                (
                    key.to_string(),
                    ParamValue::Text(v.clone()),
                    flag.to_string(),
                )
            })
        })
        .collect();
    out.extend(params.iter().map(|(k, v)| {
        (
            k.clone(),
            ParamValue::Text(v.clone()),
            format!("--param {k}"),
        )
    }));
    out
}

/// A policy error prefixed with the flag the user wrote.
pub fn explain(
    error: PolicyError,
    given: &[(String, ParamValue, String)],
    policy_flag: &str,
) -> anyhow::Error {
    let flag = error
        .key()
        .and_then(|k| given.iter().rev().find(|(key, _, _)| key == k))
        .map(|(_, _, flag)| flag.as_str())
        .unwrap_or(policy_flag);
    anyhow::anyhow!("{flag}: {error}")
}
