//! How sure a comparison's budgets are: each target's curve read again under every resample of
//! the workload's queries ([`crate::quality::bootstrap`]), from the same runs; the comparison
//! ([`super::compare`]) reads its budgets off these curves.

use crate::quality::bootstrap::Interval;

/// A policy's curve per resample: per budget (ascending), the best quality under each resample
/// among the runs at that budget (the curve a sweep draws, read per resample), from `(budget,
/// resampled qualities)` of each run. `None` when a run lacks its resampled qualities or has
/// other than `resamples` of them.
pub fn resampled_curve<'a>(
    runs: impl IntoIterator<Item = (usize, Option<&'a [f64]>)>,
    resamples: usize,
) -> Option<Vec<(usize, Vec<f64>)>> {
    let mut curve: Vec<(usize, Vec<f64>)> = Vec::new();
    for (budget, resampled) in runs {
        let resampled = resampled?;
        if resampled.len() != resamples {
            return None;
        }
        match curve.iter_mut().find(|(b, _)| *b == budget) {
            Some((_, best)) => {
                for (best, &q) in best.iter_mut().zip(resampled) {
                    *best = best.max(q);
                }
            }
            None => curve.push((budget, resampled.to_vec())),
        }
    }
    curve.sort_by_key(|(b, _)| *b);
    (!curve.is_empty()).then_some(curve)
}

/// The interval of one policy's budget over another's, resample by resample (how many times
/// more one needs; `None` ends: not reached).
pub fn ratio_interval(numerator: &[Option<f64>], denominator: &[Option<f64>]) -> Option<Interval> {
    Interval::of(
        numerator
            .iter()
            .zip(denominator)
            .map(|(a, b)| match (a, b) {
                (Some(a), Some(b)) if *b > 0.0 => Some(a / b),
                _ => None,
            }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_curve_takes_the_best_run_per_budget_in_each_resample() {
        let a = [0.9, 0.85];
        let b = [0.85, 1.0];
        let zero = [0.8, 0.8];
        let curve = resampled_curve(
            [(8, Some(&a[..])), (0, Some(&zero[..])), (8, Some(&b[..]))],
            2,
        )
        .unwrap();
        assert_eq!(curve, vec![(0, vec![0.8, 0.8]), (8, vec![0.9, 1.0])]);
        assert_eq!(resampled_curve([(8, None)], 2), None);
        assert_eq!(resampled_curve([(8, Some(&a[..1]))], 2), None);
        let ratio = ratio_interval(&[None, Some(8.0)], &[Some(2.0), Some(2.0)]).unwrap();
        assert_eq!((ratio.low, ratio.high), (Some(4.0), None));
    }
}
