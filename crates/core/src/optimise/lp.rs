//! The linear minimisation oracle of a general polytope `{x : lower ≤ x ≤ upper, A x ≤ b}`,
//! solved by microlp's simplex (pure Rust). For constraints that couple periods (paper 004's
//! new-page queue: `z_t ≤ n_{t−1}`), where the knapsack oracle does not apply.

use super::frank_wolfe::LinearOracle;
use super::OracleError;
use microlp::{ComparisonOp, OptimizationDirection, Problem, SolveOutcome};

/// One row `Σ coefficient · x[index] ≤ bound`.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub(crate) terms: Vec<(usize, f64)>,
    pub(crate) bound: f64,
}

/// A polytope given by bounds and `≤` rows.
#[derive(Debug, Clone)]
pub struct Polytope {
    pub(crate) lower: Vec<f64>,
    pub(crate) upper: Vec<f64>,
    pub(crate) rows: Vec<Row>,
}

impl LinearOracle for Polytope {
    fn minimise(&self, gradient: &[f64], vertex: &mut [f64]) -> Result<(), OracleError> {
        let mut problem = Problem::new(OptimizationDirection::Minimize);
        let vars: Vec<_> = gradient
            .iter()
            .zip(self.lower.iter().zip(&self.upper))
            .map(|(&g, (&lo, &up))| problem.add_var(g, (lo, up)))
            .collect();
        for row in &self.rows {
            let expr: Vec<_> = row.terms.iter().map(|&(i, a)| (vars[i], a)).collect();
            problem.add_constraint(expr, ComparisonOp::Le, row.bound);
        }
        match problem.solve() {
            Ok(SolveOutcome::Solution(solution)) => {
                for (out, v) in vertex.iter_mut().zip(&vars) {
                    *out = solution.var_value(*v);
                }
                Ok(())
            }
            Ok(SolveOutcome::Interrupted(_)) => Err(OracleError::Lp("interrupted".into())),
            Err(e) => Err(OracleError::Lp(e.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_a_coupled_lp() {
        // min −x0 − 2x1  s.t. x0 + x1 ≤ 1, x1 ≤ 0.25 + 0 (cumulative cap), 0 ≤ x ≤ 1.
        let p = Polytope {
            lower: vec![0.0; 2],
            upper: vec![1.0; 2],
            rows: vec![
                Row {
                    terms: vec![(0, 1.0), (1, 1.0)],
                    bound: 1.0,
                },
                Row {
                    terms: vec![(1, 1.0)],
                    bound: 0.25,
                },
            ],
        };
        let mut s = vec![0.0; 2];
        p.minimise(&[-1.0, -2.0], &mut s).unwrap();
        assert!(
            (s[0] - 0.75).abs() < 1e-9 && (s[1] - 0.25).abs() < 1e-9,
            "{s:?}"
        );
    }
}
