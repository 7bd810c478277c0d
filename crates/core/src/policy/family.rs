//! Policy families that describe themselves: a name, a one-line description, typed
//! parameters (key, range, default, the values a comparison sweeps) and a constructor.
//!
//! Every front end reads the same table ([`super::registry::FAMILIES`]): the CLI's
//! `--policy NAME --param key=value`, the server's `{"policy": …, "params": {…}}`, the sweep
//! expansion of `compare` and `POST /api/compare` ([`expand_sweep`]), the OpenAPI description
//! and `refresher policies`. A new family is one file that defines a [`PolicyFamily`] constant
//! and one row in that table.

use std::collections::BTreeMap;

use super::RefreshPolicy;

/// The type and range of a parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ParamKind {
    /// A number in `[min, max]` (an integer when `integer`).
    Number { min: f64, max: f64, integer: bool },
    /// One of these words.
    Choice(&'static [&'static str]),
    /// Free text (a file path, an expression), non-empty; never swept.
    Text,
}

/// One parameter of a family.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ParamSpec {
    pub key: &'static str,
    pub description: &'static str,
    pub kind: ParamKind,
    /// What applies when the parameter is not given, as a user reads it.
    pub default: &'static str,
    /// The values a comparison sweeps when none are asked for (empty: not swept).
    pub sweep: &'static [f64],
}

/// A parameter's value.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(untagged)]
pub enum ParamValue {
    Number(f64),
    Text(String),
}

impl std::fmt::Display for ParamValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParamValue::Number(x) => write!(f, "{x}"),
            ParamValue::Text(s) => f.write_str(s),
        }
    }
}

/// Validated parameters of one family (keys the family declares, values in range).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Params {
    values: BTreeMap<&'static str, ParamValue>,
}

impl Params {
    /// A number parameter, when given.
    pub fn number(&self, key: &str) -> Option<f64> {
        match self.values.get(key) {
            Some(ParamValue::Number(x)) => Some(*x),
            _ => None,
        }
    }

    /// A choice or text parameter, when given.
    pub(crate) fn choice(&self, key: &str) -> Option<&str> {
        match self.values.get(key) {
            Some(ParamValue::Text(s)) => Some(s),
            _ => None,
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &ParamValue)> {
        self.values.iter().map(|(k, v)| (*k, v))
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// As a JSON object (for outputs and the server's run list).
    pub fn to_json(&self) -> serde_json::Map<String, serde_json::Value> {
        self.values
            .iter()
            .map(|(k, v)| (k.to_string(), serde_json::to_value(v).expect("plain value")))
            .collect()
    }
}

/// Why a policy could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PolicyError {
    #[error("unknown policy `{name}`; expected one of: {known}")]
    UnknownPolicy { name: String, known: String },
    #[error("policy `{policy}` has no parameter `{key}`{}", known_params(.known))]
    UnknownParam {
        policy: String,
        key: String,
        known: String,
    },
    #[error("policy `{policy}` parameter `{key}` = {value}: {expected}")]
    BadValue {
        policy: String,
        key: String,
        value: String,
        expected: String,
    },
}

fn known_params(known: &str) -> String {
    if known.is_empty() {
        " (it takes none)".to_string()
    } else {
        format!("; it takes: {known}")
    }
}

impl PolicyError {
    /// The parameter the error is about, if any (front ends name their own flag for it).
    pub fn key(&self) -> Option<&str> {
        match self {
            PolicyError::UnknownParam { key, .. } | PolicyError::BadValue { key, .. } => Some(key),
            PolicyError::UnknownPolicy { .. } => None,
        }
    }
}

/// A family of refresh policies. See the module docs.
#[derive(Debug, Clone, Copy)]
pub struct PolicyFamily {
    pub name: &'static str,
    /// One line, for `refresher policies` and the UI.
    pub description: &'static str,
    pub params: &'static [ParamSpec],
    /// Builds a policy from validated parameters (absent ones take their defaults).
    pub build: fn(&Params) -> Result<Box<dyn RefreshPolicy>, PolicyError>,
}

impl PolicyFamily {
    pub(crate) fn param(&self, key: &str) -> Option<&'static ParamSpec> {
        self.params.iter().find(|p| p.key == key)
    }

    /// Validates `(key, value)` pairs against the family's parameters. Text values of number
    /// parameters are parsed (the CLI's `key=value`); a key given twice keeps the last value.
    pub(crate) fn params<'a>(
        &self,
        given: impl IntoIterator<Item = (&'a str, ParamValue)>,
    ) -> Result<Params, PolicyError> {
        let mut values = BTreeMap::new();
        for (key, value) in given {
            let spec = self.param(key).ok_or_else(|| PolicyError::UnknownParam {
                policy: self.name.to_string(),
                key: key.to_string(),
                known: self
                    .params
                    .iter()
                    .map(|p| p.key)
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
            values.insert(spec.key, self.check(spec, value)?);
        }
        Ok(Params { values })
    }

    fn check(&self, spec: &ParamSpec, value: ParamValue) -> Result<ParamValue, PolicyError> {
        let bad = |expected: String| PolicyError::BadValue {
            policy: self.name.to_string(),
            key: spec.key.to_string(),
            value: value.to_string(),
            expected,
        };
        match spec.kind {
            ParamKind::Number { min, max, integer } => {
                let x = match &value {
                    ParamValue::Number(x) => *x,
                    ParamValue::Text(s) => s
                        .trim()
                        .parse::<f64>()
                        .map_err(|_| bad("expected a number".into()))?,
                };
                if integer && x.fract() != 0.0 {
                    return Err(bad("expected an integer".into()));
                }
                if !x.is_finite() || x < min || x > max {
                    let range = if max.is_finite() && max < 1e9 {
                        format!("[{min}, {max}]")
                    } else {
                        format!("[{min}, ∞)")
                    };
                    return Err(bad(format!("outside {range}")));
                }
                Ok(ParamValue::Number(x))
            }
            ParamKind::Choice(words) => match &value {
                ParamValue::Text(s) if words.contains(&s.as_str()) => Ok(value.clone()),
                _ => Err(bad(format!("expected one of: {}", words.join(", ")))),
            },
            ParamKind::Text => match &value {
                ParamValue::Text(s) if !s.trim().is_empty() => Ok(value.clone()),
                ParamValue::Text(_) => Err(bad("expected a non-empty text".into())),
                ParamValue::Number(_) => Err(bad("expected a text".into())),
            },
        }
    }

    /// Builds a policy from unvalidated pairs.
    pub fn make<'a>(
        &self,
        given: impl IntoIterator<Item = (&'a str, ParamValue)>,
    ) -> Result<Box<dyn RefreshPolicy>, PolicyError> {
        (self.build)(&self.params(given)?)
    }

    /// The family as JSON (for `refresher policies --json`, the API and the UI).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "name": self.name,
            "description": self.description,
            "params": self.params.iter().map(|p| {
                let kind = match p.kind {
                    ParamKind::Number { min, max, integer } => serde_json::json!({
                        "type": if integer { "integer" } else { "number" },
                        "min": min,
                        "max": if max.is_finite() { serde_json::json!(max) } else { serde_json::Value::Null },
                    }),
                    ParamKind::Choice(words) => serde_json::json!({
                        "type": "choice",
                        "values": words,
                    }),
                    ParamKind::Text => serde_json::json!({ "type": "text" }),
                };
                serde_json::json!({
                    "key": p.key,
                    "description": p.description,
                    "kind": kind,
                    "default": p.default,
                    "sweep": p.sweep,
                })
            }).collect::<Vec<_>>(),
        })
    }
}

/// One run of a comparison sweep: a family, its parameters and a budget.
#[derive(Debug, Clone)]
pub struct SweepRun {
    pub policy: &'static PolicyFamily,
    pub params: Params,
    pub budget: usize,
}

/// Which values a sweep takes for swept parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GridDefault {
    /// Each family's own grid ([`ParamSpec::sweep`]) for parameters not given a grid (the
    /// CLI's `compare`, paper 003 §6's θ sweep).
    FamilyGrids,
    /// Only the grids asked for; other parameters keep their defaults (the server, where
    /// every run is queued and counted).
    OnlyGiven,
}

/// Expands a sweep: every family × every budget × the grid of its swept parameters
/// (cartesian product, in parameter-key order). `fixed` parameters apply to every family that
/// has them, and a parameter both fixed and gridded takes the grid. At `B = 0` no parameter
/// changes anything: one run at the fixed parameters. Families in the given order, budgets
/// ascending as given.
pub fn expand_sweep(
    families: &[&'static PolicyFamily],
    budgets: &[usize],
    fixed: &[(String, ParamValue)],
    grids: &BTreeMap<String, Vec<f64>>,
    default: GridDefault,
) -> Result<Vec<SweepRun>, PolicyError> {
    for key in fixed.iter().map(|(k, _)| k).chain(grids.keys()) {
        if !families.iter().any(|f| f.param(key).is_some()) {
            return Err(PolicyError::UnknownParam {
                policy: families
                    .iter()
                    .map(|f| f.name)
                    .collect::<Vec<_>>()
                    .join(", "),
                key: key.clone(),
                known: String::new(),
            });
        }
    }
    let mut runs = Vec::new();
    for &family in families {
        let own_fixed: Vec<(&str, ParamValue)> = fixed
            .iter()
            .filter(|(k, _)| family.param(k).is_some())
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect();
        let swept: Vec<(&'static str, Vec<f64>)> = family
            .params
            .iter()
            .filter_map(|p| {
                let values = match (grids.get(p.key), default) {
                    (Some(g), _) => g.clone(),
                    (None, GridDefault::FamilyGrids) => p.sweep.to_vec(),
                    (None, GridDefault::OnlyGiven) => Vec::new(),
                };
                (!values.is_empty()).then_some((p.key, values))
            })
            .collect();
        for &budget in budgets {
            let mut combos: Vec<Vec<(&str, ParamValue)>> = vec![own_fixed.clone()];
            if budget > 0 {
                for (key, values) in &swept {
                    combos = combos
                        .into_iter()
                        .flat_map(|c| {
                            values.iter().map(move |&v| {
                                let mut c = c.clone();
                                c.retain(|(k, _)| k != key);
                                c.push((key, ParamValue::Number(v)));
                                c
                            })
                        })
                        .collect();
                }
            }
            for combo in combos {
                runs.push(SweepRun {
                    policy: family,
                    params: family.params(combo)?,
                    budget,
                });
            }
        }
    }
    Ok(runs)
}
