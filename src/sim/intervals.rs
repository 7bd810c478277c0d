//! How sure a comparison's budgets are: each target row's budget read again under every
//! resample of the workload's queries ([`crate::quality::bootstrap`]), from the same runs.

use std::sync::Arc;

use super::compare::{interpolated_budget, SweepPoint, TargetRow};
use crate::quality::bootstrap::Interval;

/// Fills each row's [`TargetRow::budget_interval`] and [`TargetRow::resampled_budgets`] from
/// `points` (the runs its curve chose from: per budget the best by quality, as the row's own
/// curve) and the unrefreshed quality `unrefreshed` under each resample. Rows whose points were
/// not all judged under the resamples are left without.
pub(crate) fn add_intervals(rows: &mut [TargetRow], points: &[SweepPoint], unrefreshed: &[f64]) {
    for row in rows.iter_mut() {
        let Some(curves) = resampled_curve(&row.policy, points, unrefreshed.len()) else {
            continue;
        };
        let budgets: Arc<[Option<f64>]> = unrefreshed
            .iter()
            .enumerate()
            .map(|(r, &q0)| {
                let target = match row.gap_share {
                    Some(share) => q0 + share * (1.0 - q0),
                    None => row.target_quality,
                };
                interpolated_budget(curves.iter().map(|(b, q)| (*b, q[r])), target, Some(q0))
            })
            .collect();
        row.budget_interval = Interval::of(budgets.iter().copied());
        row.resampled_budgets = Some(budgets);
    }
}

/// Per budget (ascending) of `policy`'s points, the best quality under each resample (the
/// curve a sweep draws, read per resample); `None` when a point lacks its resampled qualities.
fn resampled_curve(
    policy: &str,
    points: &[SweepPoint],
    resamples: usize,
) -> Option<Vec<(usize, Vec<f64>)>> {
    let mut curve: Vec<(usize, Vec<f64>)> = Vec::new();
    for p in points.iter().filter(|p| p.policy == policy) {
        let resampled = p.resampled_quality.as_ref()?;
        if resampled.len() != resamples {
            return None;
        }
        match curve.iter_mut().find(|(b, _)| *b == p.budget) {
            Some((_, best)) => {
                for (best, &q) in best.iter_mut().zip(resampled.iter()) {
                    *best = best.max(q);
                }
            }
            None => curve.push((p.budget, resampled.to_vec())),
        }
    }
    curve.sort_by_key(|(b, _)| *b);
    (!curve.is_empty()).then_some(curve)
}

/// The interval of `numerator`'s budget over `denominator`'s, resample by resample (how many
/// times more one policy needs; `None` ends: not reached).
pub fn ratio_interval(numerator: &TargetRow, denominator: &TargetRow) -> Option<Interval> {
    let (a, b) = (
        numerator.resampled_budgets.as_ref()?,
        denominator.resampled_budgets.as_ref()?,
    );
    Interval::of(a.iter().zip(b.iter()).map(|(a, b)| match (a, b) {
        (Some(a), Some(b)) if *b > 0.0 => Some(a / b),
        (Some(_), Some(_)) => None,
        _ => None,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quality::SearchQuality;

    fn point(policy: &str, budget: usize, resampled: &[f64]) -> SweepPoint {
        SweepPoint {
            policy: policy.into(),
            theta: None,
            params: Default::default(),
            budget,
            mean: SearchQuality::uniform(resampled[0]),
            mean_obsolete_pages: None,
            new_pages: Default::default(),
            mean_change_rate: None,
            mean_gp4c_ndcg: None,
            paper: Default::default(),
            resampled_quality: Some(Arc::from(resampled)),
        }
    }

    fn row(policy: &str, gap_share: f64) -> TargetRow {
        TargetRow {
            policy: policy.into(),
            target_quality: 0.0,
            gap_share: Some(gap_share),
            budget_needed: None,
            budget_interpolated: None,
            budget_interval: None,
            resampled_budgets: None,
        }
    }

    #[test]
    fn each_resample_reads_its_own_curve_and_its_own_gap() {
        // Three resamples; Q₀ = 0.9 in each. B = 4 reaches 0.95 / 0.99 / 0.92.
        let points = [
            point("uc", 0, &[0.9, 0.9, 0.9]),
            point("uc", 4, &[0.95, 0.99, 0.92]),
            point("uc", 16, &[1.0, 1.0, 0.94]),
        ];
        let mut rows = [row("uc", 0.5)];
        add_intervals(&mut rows, &points, &[0.9, 0.9, 0.9]);
        let budgets = rows[0].resampled_budgets.clone().unwrap();
        // Target 0.95: at B = 4 exactly; linear from B = 0 at 0.05/0.09 of the way; never.
        assert_eq!(budgets[0], Some(4.0));
        assert!((budgets[1].unwrap() - 4.0 * 0.05 / 0.09).abs() < 1e-9);
        assert_eq!(budgets[2], None);
        let interval = rows[0].budget_interval.unwrap();
        assert_eq!(interval.high, None);
        assert!((interval.low.unwrap() - 4.0 * 0.05 / 0.09).abs() < 1e-9);
    }

    #[test]
    fn an_envelope_takes_the_best_point_per_budget_in_each_resample() {
        let points = [
            point("sbr", 0, &[0.8, 0.8]),
            point("sbr", 8, &[0.9, 0.85]),
            point("sbr", 8, &[0.85, 1.0]),
        ];
        let mut rows = [row("sbr", 1.0)];
        add_intervals(&mut rows, &points, &[0.8, 0.8]);
        // Resample 0 never reaches 1.0 (best 0.9); resample 1 does at B = 8 (the other θ).
        let budgets = rows[0].resampled_budgets.clone().unwrap();
        assert_eq!(&budgets[..], &[None, Some(8.0)]);
        let other = TargetRow {
            resampled_budgets: Some(Arc::from(vec![Some(2.0), Some(2.0)])),
            ..row("rr", 1.0)
        };
        let ratio = ratio_interval(&rows[0], &other).unwrap();
        assert_eq!((ratio.low, ratio.high), (Some(4.0), None));
    }

    #[test]
    fn points_judged_without_resamples_give_no_interval() {
        let mut plain = point("uc", 4, &[0.95]);
        plain.resampled_quality = None;
        let mut rows = [row("uc", 0.5)];
        add_intervals(&mut rows, &[point("uc", 0, &[0.9]), plain], &[0.9]);
        assert_eq!(rows[0].budget_interval, None);
    }
}
