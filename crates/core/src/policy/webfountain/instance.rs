//! A [`CrawlModel`] read from JSON: the layout of the WebFountain instances users exchange
//! (`small.json`-style), with scalars standing for "the same in every period".
//!
//! ```json
//! {
//!   "periods": 6,
//!   "capacity_per_period": 2000,            // or one value per period
//!   "initial_obsolete": 0,                  // total, spread over buckets in proportion to pages
//!   "new_pages_per_period": 0,              // nconst_t: scalar or per period
//!   "initial_new_pages": 0,                 // n_0 (optional)
//!   "new_page_cost": 1,                     // dconst_t (optional, scalar or per period)
//!   "new_pages_found_per_new_page": 0,      // newnwt (optional)
//!   "epsilon": 0.01,                        // Strategy 3's ε (optional)
//!   "buckets": [
//!     {"pages": 1000, "change_probability": 0.36,   // a_it: scalar or per period
//!      "cost": 1, "initial_obsolete": 0, "new_page_share": 0.1, "new_pages_found_per_crawl": 0}
//!   ],
//!   "expected_objective": {"1": 284.868}    // optional: reference optima to compare with
//! }
//! ```
//!
//! Optional bucket fields default to: cost 1, no obsolete pages beyond the spread total, new
//! pages joining buckets in proportion to their size, no new pages found by a crawl.

use super::model::{paper_like, Bucket, CrawlModel, ModelError};
use serde::Deserialize;
use std::collections::BTreeMap;

/// Why an instance cannot be read: each names the line and column, or the field.
#[derive(Debug, thiserror::Error)]
pub enum InstanceError {
    /// Not JSON of the instance layout (`message`: serde's, without its position).
    #[error("line {line} column {column}: {message}")]
    Json {
        line: usize,
        column: usize,
        message: String,
    },
    /// A number of periods outside 1 … 100000.
    #[error("periods: {periods}, expected 1 … 100000")]
    Periods { periods: usize },
    /// A negative or non-finite `initial_obsolete`.
    #[error("initial_obsolete: {obsolete} is not ≥ 0")]
    NegativeObsolete { obsolete: f64 },
    /// More obsolete pages than the buckets hold.
    #[error("initial_obsolete: {obsolete} exceeds the {pages} pages of the buckets")]
    ObsoleteBeyondPages { obsolete: f64, pages: f64 },
    /// A per-period list of another length than the periods.
    #[error(
        "{field}: {given} values for {periods} periods (give one per period, or a single number)"
    )]
    PeriodValues {
        field: String,
        given: usize,
        periods: usize,
    },
    /// A model that fails its checks.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// Strategy 3's `epsilon` out of its range.
    #[error("epsilon: {0}")]
    Epsilon(EpsilonError),
    /// An `expected_objective` key that is not a strategy number.
    #[error("expected_objective: key {key:?} is not a strategy (\"1\", \"2\" or \"3\")")]
    StrategyKey { key: String },
    /// The instance file could not be read.
    #[error("{path}: {error}")]
    Read { path: String, error: std::io::Error },
    /// The instance file is not UTF-8 (`byte`: where the first bad sequence starts).
    #[error("{path}: not UTF-8 (byte {byte})")]
    NotUtf8 { path: String, byte: usize },
    /// A file's content refused, with the file's path.
    #[error("{path}: {error}")]
    InFile {
        path: String,
        error: Box<InstanceError>,
    },
}

/// Strategy 3's `ε` leaves the last period a negative weight (it must be in `[0, most]`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{epsilon} is not in [0, 1/(T−1) = {most}] (the last period's weight is 1 − (T−1)ε)")]
pub struct EpsilonError {
    pub(crate) epsilon: f64,
    pub(crate) most: f64,
}

/// A number, or one number per period.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum PerPeriod {
    Same(f64),
    Each(Vec<f64>),
}

impl PerPeriod {
    fn expand(&self, periods: usize, field: &str) -> Result<Vec<f64>, InstanceError> {
        match self {
            PerPeriod::Same(x) => Ok(vec![*x; periods]),
            PerPeriod::Each(v) if v.len() == periods => Ok(v.clone()),
            PerPeriod::Each(v) => Err(InstanceError::PeriodValues {
                field: field.to_string(),
                given: v.len(),
                periods,
            }),
        }
    }
}

#[derive(Debug, Deserialize)]
struct BucketFile {
    pages: f64,
    change_probability: PerPeriod,
    #[serde(default)]
    cost: Option<PerPeriod>,
    #[serde(default)]
    initial_obsolete: Option<f64>,
    #[serde(default)]
    new_page_share: Option<f64>,
    #[serde(default)]
    new_pages_found_per_crawl: Option<f64>,
    #[serde(flatten)]
    unknown: BTreeMap<String, serde_json::Value>,
}

#[derive(Debug, Deserialize)]
struct InstanceFile {
    #[serde(default)]
    description: Option<String>,
    periods: usize,
    capacity_per_period: PerPeriod,
    #[serde(default)]
    initial_obsolete: Option<f64>,
    #[serde(default)]
    new_pages_per_period: Option<PerPeriod>,
    #[serde(default)]
    initial_new_pages: Option<f64>,
    #[serde(default)]
    new_page_cost: Option<PerPeriod>,
    #[serde(default)]
    new_pages_found_per_new_page: Option<f64>,
    #[serde(default)]
    epsilon: Option<f64>,
    buckets: Vec<BucketFile>,
    #[serde(default)]
    expected_objective: BTreeMap<String, f64>,
    #[serde(flatten)]
    unknown: BTreeMap<String, serde_json::Value>,
}

/// An instance as read: the model, and what the file says beside it.
#[derive(Debug, Clone)]
pub struct Instance {
    pub(crate) model: CrawlModel,
    pub(crate) description: Option<String>,
    /// Strategy 3's `ε`, when the file gives it.
    pub(crate) epsilon: Option<f64>,
    /// Reference optimal objectives by strategy number, when the file gives them.
    pub(crate) expected_objective: BTreeMap<u8, f64>,
    /// Fields the reader does not know (ignored; reported so a misspelt one is noticed).
    pub ignored_fields: Vec<String>,
}

/// The keyword naming the built-in paper-like instance (255 buckets, 14 one-day periods).
pub const PAPER_LIKE: &str = "paper-like";

impl Instance {
    /// The built-in paper-like instance of SEED-SYSTEMS §4.2.6 ([`paper_like`]).
    pub fn paper_like() -> Instance {
        Instance {
            model: paper_like(255, 14),
            description: Some(
                "paper-like instance: 255 buckets sharing 500M pages, mean lifetimes by \
                 Brewington & Cybenko's CDF (paper 004 Table 2), 14 one-day periods, capacity \
                 500M/14 per period, nothing obsolete at the start, no new pages"
                    .into(),
            ),
            epsilon: None,
            expected_objective: BTreeMap::new(),
            ignored_fields: Vec::new(),
        }
    }

    /// Reads an instance from JSON text; errors name the line and column or the field.
    pub fn from_json(text: &str) -> Result<Instance, InstanceError> {
        let file: InstanceFile = serde_json::from_str(text).map_err(|e| InstanceError::Json {
            line: e.line(),
            column: e.column(),
            message: describe_serde(&e.to_string()),
        })?;
        let t = file.periods;
        if t == 0 || t > 100_000 {
            return Err(InstanceError::Periods { periods: t });
        }
        let total_pages: f64 = file.buckets.iter().map(|b| b.pages).sum();
        let spread_obsolete = file.initial_obsolete.unwrap_or(0.0);
        if !(spread_obsolete.is_finite() && spread_obsolete >= 0.0) {
            return Err(InstanceError::NegativeObsolete {
                obsolete: spread_obsolete,
            });
        }
        if spread_obsolete > total_pages * (1.0 + 1e-12) {
            return Err(InstanceError::ObsoleteBeyondPages {
                obsolete: spread_obsolete,
                pages: total_pages,
            });
        }
        let mut ignored_fields: Vec<String> = file.unknown.keys().cloned().collect();
        let mut buckets = Vec::with_capacity(file.buckets.len());
        for (i, b) in file.buckets.iter().enumerate() {
            let at = |field: &str| format!("buckets[{i}].{field}");
            ignored_fields.extend(b.unknown.keys().map(|k| at(k)));
            let share_of_pages = if total_pages > 0.0 {
                b.pages / total_pages
            } else {
                1.0 / file.buckets.len() as f64
            };
            buckets.push(Bucket {
                pages: b.pages,
                change: b.change_probability.expand(t, &at("change_probability"))?,
                cost: match &b.cost {
                    Some(c) => c.expand(t, &at("cost"))?,
                    None => vec![1.0; t],
                },
                obsolete: b.initial_obsolete.unwrap_or(0.0) + spread_obsolete * share_of_pages,
                new_share: b.new_page_share.unwrap_or(share_of_pages),
                finds_new: b.new_pages_found_per_crawl.unwrap_or(0.0),
            });
        }
        let expand = |v: &Option<PerPeriod>, default: f64, field: &str| match v {
            Some(v) => v.expand(t, field),
            None => Ok(vec![default; t]),
        };
        let model = CrawlModel {
            periods: t,
            buckets,
            capacity: file.capacity_per_period.expand(t, "capacity_per_period")?,
            new_cost: expand(&file.new_page_cost, 1.0, "new_page_cost")?,
            new_known: file.initial_new_pages.unwrap_or(0.0),
            new_arrivals: expand(&file.new_pages_per_period, 0.0, "new_pages_per_period")?,
            new_finds_new: file.new_pages_found_per_new_page.unwrap_or(0.0),
        };
        model.validate()?;
        if let Some(eps) = file.epsilon {
            check_epsilon(eps, t).map_err(InstanceError::Epsilon)?;
        }
        let mut expected_objective = BTreeMap::new();
        for (key, value) in &file.expected_objective {
            match key.parse::<u8>() {
                Ok(n @ 1..=3) => {
                    expected_objective.insert(n, *value);
                }
                _ => return Err(InstanceError::StrategyKey { key: key.clone() }),
            }
        }
        Ok(Instance {
            model,
            description: file.description,
            epsilon: file.epsilon,
            expected_objective,
            ignored_fields,
        })
    }

    /// Reads `path`, or the built-in instance when `path` is [`PAPER_LIKE`].
    pub fn load(path: &str) -> Result<Instance, InstanceError> {
        if path == PAPER_LIKE {
            return Ok(Instance::paper_like());
        }
        let text = std::fs::read(path).map_err(|error| InstanceError::Read {
            path: path.to_string(),
            error,
        })?;
        let text = String::from_utf8(text).map_err(|e| InstanceError::NotUtf8 {
            path: path.to_string(),
            byte: e.utf8_error().valid_up_to(),
        })?;
        Instance::from_json(&text).map_err(|error| InstanceError::InFile {
            path: path.to_string(),
            error: Box::new(error),
        })
    }
}

/// Strategy 3's `ε` must leave the last period a non-negative weight: `0 ≤ ε ≤ 1/(T−1)`.
pub(crate) fn check_epsilon(epsilon: f64, periods: usize) -> Result<(), EpsilonError> {
    let most = if periods > 1 {
        1.0 / (periods - 1) as f64
    } else {
        1.0
    };
    if epsilon.is_finite() && (0.0..=most).contains(&epsilon) {
        Ok(())
    } else {
        Err(EpsilonError { epsilon, most })
    }
}

/// serde's message without its trailing " at line L column C" (the caller puts it first).
fn describe_serde(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = r#"{
      "description": "two buckets",
      "periods": 3,
      "capacity_per_period": [10, 20, 30],
      "initial_obsolete": 6,
      "new_pages_per_period": 2,
      "buckets": [
        {"pages": 100, "change_probability": 0.5},
        {"pages": 200, "change_probability": [0.1, 0.2, 0.3], "cost": 2, "initial_obsolete": 1,
         "colour": "blue"}
      ],
      "expected_objective": {"1": 12.5},
      "notes": "kept aside"
    }"#;

    #[test]
    fn reads_scalars_as_every_period_and_spreads_the_obsolete_total() {
        let i = Instance::from_json(SMALL).unwrap();
        let m = &i.model;
        assert_eq!(m.periods, 3);
        assert_eq!(m.capacity, vec![10.0, 20.0, 30.0]);
        assert_eq!(m.new_arrivals, vec![2.0; 3]);
        assert_eq!(m.buckets[0].change, vec![0.5; 3]);
        assert_eq!(m.buckets[1].change, vec![0.1, 0.2, 0.3]);
        assert_eq!(m.buckets[1].cost, vec![2.0; 3]);
        assert_eq!(m.buckets[0].cost, vec![1.0; 3]);
        assert!((m.buckets[0].obsolete - 2.0).abs() < 1e-12);
        assert!((m.buckets[1].obsolete - 5.0).abs() < 1e-12);
        assert!((m.buckets[1].new_share - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(i.expected_objective.get(&1), Some(&12.5));
        assert_eq!(i.ignored_fields, vec!["notes", "buckets[1].colour"]);
    }

    #[test]
    fn errors_name_the_line_or_the_field() {
        let broken = SMALL.replace("\"periods\": 3,", "\"periods\": 3,,");
        let e = Instance::from_json(&broken).unwrap_err().to_string();
        assert!(e.starts_with("line 3 column"), "{e}");
        let short = SMALL.replace("[0.1, 0.2, 0.3]", "[0.1, 0.2]");
        let e = Instance::from_json(&short).unwrap_err().to_string();
        assert!(
            e.contains("buckets[1].change_probability: 2 values for 3 periods"),
            "{e}"
        );
        let bad = SMALL.replace("0.5}", "1.5}");
        let e = Instance::from_json(&bad).unwrap_err().to_string();
        assert!(
            e.contains("bucket 1 change probability of period 1: 1.5"),
            "{e}"
        );
        let key = SMALL.replace("{\"1\": 12.5}", "{\"4\": 12.5}");
        assert!(Instance::from_json(&key)
            .unwrap_err()
            .to_string()
            .contains("expected_objective"));
        let missing = SMALL.replace("\"capacity_per_period\": [10, 20, 30],", "");
        let e = Instance::from_json(&missing).unwrap_err().to_string();
        assert!(e.contains("capacity_per_period"), "{e}");
        let too_many = SMALL.replace("\"initial_obsolete\": 6", "\"initial_obsolete\": 600");
        assert!(Instance::from_json(&too_many)
            .unwrap_err()
            .to_string()
            .contains("initial_obsolete"));
    }

    #[test]
    fn epsilon_must_leave_the_last_period_a_weight() {
        assert!(check_epsilon(0.01, 6).is_ok());
        assert!(check_epsilon(0.2, 6).is_ok());
        assert!(check_epsilon(0.21, 6).is_err());
        assert!(check_epsilon(-0.1, 6).is_err());
        assert!(check_epsilon(f64::NAN, 6).is_err());
    }
}
