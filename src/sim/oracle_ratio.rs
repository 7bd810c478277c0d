//! How far online is from the paper's bound, as a number per policy and target: the budget an
//! online policy needs over the budget the *full oracle* needs (oracle-mode user-centric told
//! the whole history, paper 003 §6), both log-B interpolated at parameters fixed before the
//! run. A ratio of 3 at the 75 % gap target: online needs three times the oracle's refreshes
//! to recover three quarters of the quality lost to staleness.

use super::compare::{Comparison, TargetRow};
use super::run::OracleHistory;
use crate::policy::FitMode;

/// The family whose oracle-mode runs are the reference.
pub const FULL_ORACLE: &str = "user-centric";

/// One online policy's budget for one target against the full oracle's.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct OracleRatio {
    /// The online policy.
    pub policy: String,
    /// The target's repository quality.
    pub target_quality: f64,
    /// The share of the staleness gap the target recovers (`None`: an absolute target).
    pub gap_share: Option<f64>,
    /// The online policy's budget (log-B interpolated; `None`: not reached on the grid).
    pub online_budget: Option<f64>,
    /// The full oracle's budget for the same target.
    pub oracle_budget: Option<f64>,
    /// `online_budget / oracle_budget` (`None` when either is missing or the oracle needs 0).
    pub ratio: Option<f64>,
}

/// The ratio of every online row of `comparisons` (at parameters fixed before the run) to the
/// full oracle's row of the same target; empty unless both modes ran, the oracle was told the
/// whole history (a warm-up oracle is not the bound) and the oracle runs include
/// [`FULL_ORACLE`].
pub fn oracle_ratios(comparisons: &[Comparison]) -> Vec<OracleRatio> {
    let of_mode = |mode: FitMode| comparisons.iter().find(|c| c.mode == mode);
    let (Some(oracle), Some(online)) = (of_mode(FitMode::Oracle), of_mode(FitMode::Online)) else {
        return Vec::new();
    };
    if oracle.oracle_history != OracleHistory::All {
        return Vec::new();
    }
    let reference: Vec<&TargetRow> = oracle
        .fixed_rows
        .iter()
        .filter(|r| r.policy == FULL_ORACLE)
        .collect();
    if reference.is_empty() {
        return Vec::new();
    }
    online
        .fixed_rows
        .iter()
        .map(|row| OracleRatio::of(row, &reference))
        .collect()
}

impl OracleRatio {
    /// The ratio of the online `row` to the row of `reference` (the full oracle's rows) for
    /// the same target. Both modes share the environment and its B = 0 run, so a target reads
    /// the same quality in both.
    pub fn of(row: &TargetRow, reference: &[&TargetRow]) -> Self {
        let oracle_budget = reference
            .iter()
            .find(|o| o.target_quality == row.target_quality && o.gap_share == row.gap_share)
            .and_then(|o| o.budget_interpolated);
        OracleRatio {
            policy: row.policy.clone(),
            target_quality: row.target_quality,
            gap_share: row.gap_share,
            online_budget: row.budget_interpolated,
            oracle_budget,
            ratio: ratio(row.budget_interpolated, oracle_budget),
        }
    }
}

/// `online / oracle`, when both were reached and the oracle needed more than nothing.
fn ratio(online: Option<f64>, oracle: Option<f64>) -> Option<f64> {
    match (online, oracle) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ratio_needs_both_budgets_and_an_oracle_that_spent_something() {
        assert_eq!(ratio(Some(6.0), Some(2.0)), Some(3.0));
        assert_eq!(ratio(None, Some(2.0)), None);
        assert_eq!(ratio(Some(6.0), None), None);
        assert_eq!(ratio(Some(0.0), Some(0.0)), None);
    }
}
