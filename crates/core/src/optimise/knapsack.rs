//! The linear minimisation oracle of independent per-period fractional knapsacks:
//! `{x : 0 ≤ x_ti ≤ upper_ti, Σ_i cost_ti · x_ti ≤ capacity_t}`, variables laid out period by
//! period (`x[t · items + i]`).
//!
//! Minimising `⟨g, x⟩` separates by period and is solved exactly by the greedy rule of the
//! fractional knapsack (Dantzig 1957): take the items of negative `g` in ascending order of
//! `g / cost` (most decrease per unit of capacity first) until the capacity is spent.

use super::frank_wolfe::LinearOracle;
use super::OracleError;

/// Per-period fractional knapsacks (see the module docs).
#[derive(Debug, Clone)]
pub struct PeriodKnapsacks {
    pub(crate) periods: usize,
    pub(crate) items: usize,
    /// Capacity used by one unit of `x[t · items + i]` (≥ 0).
    pub(crate) cost: Vec<f64>,
    /// Upper bound of `x[t · items + i]` (≥ 0).
    pub(crate) upper: Vec<f64>,
    /// Capacity of each period (≥ 0).
    pub(crate) capacity: Vec<f64>,
}

impl LinearOracle for PeriodKnapsacks {
    fn minimise(&self, gradient: &[f64], vertex: &mut [f64]) -> Result<(), OracleError> {
        let n = self.items;
        let mut order: Vec<usize> = Vec::with_capacity(n);
        for t in 0..self.periods {
            let range = t * n..(t + 1) * n;
            let g = &gradient[range.clone()];
            let cost = &self.cost[range.clone()];
            let upper = &self.upper[range.clone()];
            let out = &mut vertex[range];
            out.fill(0.0);
            order.clear();
            order.extend((0..n).filter(|&i| g[i] < 0.0 && upper[i] > 0.0));
            // Free items first (infinite decrease per unit of capacity), then by g / cost; ties
            // by index so the vertex is deterministic.
            let key = |i: usize| {
                if cost[i] <= 0.0 {
                    f64::NEG_INFINITY
                } else {
                    g[i] / cost[i]
                }
            };
            order.sort_by(|&a, &b| key(a).total_cmp(&key(b)).then(a.cmp(&b)));
            let mut left = self.capacity[t].max(0.0);
            for &i in &order {
                if cost[i] <= 0.0 {
                    out[i] = upper[i];
                    continue;
                }
                if left <= 0.0 {
                    break;
                }
                let take = upper[i].min(left / cost[i]);
                out[i] = take;
                left -= take * cost[i];
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_by_decrease_per_unit_of_capacity() {
        let oracle = PeriodKnapsacks {
            periods: 2,
            items: 3,
            cost: vec![1.0, 2.0, 1.0, 1.0, 1.0, 0.0],
            upper: vec![5.0, 5.0, 5.0, 1.0, 1.0, 3.0],
            capacity: vec![6.0, 1.5],
        };
        let mut s = vec![9.0; 6];
        // Period 0: ratios −1, −1.5, +: item 1 first (5 units cost 10 > 6 → 3), then nothing.
        // Period 1: item 2 is free (cost 0) → 3; then item 0 (−4) 1 unit, item 1 half.
        oracle
            .minimise(&[-1.0, -3.0, 2.0, -4.0, -2.0, -0.1], &mut s)
            .unwrap();
        assert_eq!(s, vec![0.0, 3.0, 0.0, 1.0, 0.5, 3.0]);
    }
}
