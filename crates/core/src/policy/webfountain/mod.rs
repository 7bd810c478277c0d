//! Paper 004's WebFountain crawler (Edwards, McCurley & Tomlin, WWW10 2001): the crawl model
//! and its solver ([`model`]), instances read from JSON ([`instance`]), the adaptive crawler as
//! refresh policies ([`policy`]), and [`solve`], the one entry the CLI (`refresher
//! webfountain`) and the server (`POST /api/webfountain`) share.

pub mod instance;
pub mod model;
pub mod policy;

use crate::optimise::FwOptions;
use instance::{check_epsilon, EpsilonError, Instance};
use model::{ModelError, Plan, Strategy, DEFAULT_EPSILON};

/// Why [`solve`] refused a request; each names the parameter it is about.
#[derive(Debug, thiserror::Error)]
pub enum WebFountainError {
    /// Strategy 3's `ε` out of its range.
    #[error("eps: {0}")]
    Epsilon(EpsilonError),
    /// A strategy other than 1, 2 or 3.
    #[error("strategy: {strategy} is not 1, 2 or 3 (paper 004 §5.1)")]
    Strategy { strategy: u8 },
    /// A number of Frank–Wolfe steps outside 1 … `most`.
    #[error("max-iterations: {given} is not in 1 … {most}")]
    MaxIterations { given: usize, most: usize },
    /// The model's checks or its solver failed.
    #[error(transparent)]
    Model(#[from] ModelError),
}

/// What to solve an instance for.
#[derive(Debug, Clone, Copy)]
pub struct SolveRequest {
    /// 1, 2 or 3 (paper 004 §5.1).
    pub strategy: u8,
    /// Strategy 3's `ε`; `None`: the instance's, else `DEFAULT_EPSILON`.
    pub epsilon: Option<f64>,
    /// Frank–Wolfe steps per start.
    pub max_iterations: usize,
}

/// The most Frank–Wolfe steps a request may ask for per start (each costs one pass of the
/// balance equations per line-search point).
pub const MAX_ITERATIONS: usize = 1_000_000;

/// A solved instance: the plan, with the instance's reference optimum beside it when it has one.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SolveReport {
    pub description: Option<String>,
    pub buckets: usize,
    pub periods: usize,
    /// Strategy 3's `ε` used (absent for strategies 1 and 2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub epsilon: Option<f64>,
    #[serde(flatten)]
    pub plan: Plan,
    /// The instance file's optimum for this strategy, when it gives one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_objective: Option<f64>,
    /// `(objective − expected) / expected`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relative_difference: Option<f64>,
    /// Fields of the instance the reader ignored.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) ignored_fields: Vec<String>,
}

/// Solves `instance` for `request`; errors name the parameter.
pub fn solve(instance: &Instance, request: SolveRequest) -> Result<SolveReport, WebFountainError> {
    let periods = instance.model.periods;
    let epsilon = request
        .epsilon
        .or(instance.epsilon)
        .unwrap_or(DEFAULT_EPSILON);
    check_epsilon(epsilon, periods).map_err(WebFountainError::Epsilon)?;
    let strategy =
        Strategy::numbered(request.strategy, epsilon).ok_or(WebFountainError::Strategy {
            strategy: request.strategy,
        })?;
    if request.max_iterations == 0 || request.max_iterations > MAX_ITERATIONS {
        return Err(WebFountainError::MaxIterations {
            given: request.max_iterations,
            most: MAX_ITERATIONS,
        });
    }
    let options = FwOptions {
        max_iterations: request.max_iterations,
        ..FwOptions::default()
    };
    let plan = instance.model.solve(strategy, options)?;
    let expected_objective = instance.expected_objective.get(&request.strategy).copied();
    Ok(SolveReport {
        description: instance.description.clone(),
        buckets: instance.model.buckets.len(),
        periods,
        epsilon: (request.strategy == 3).then_some(epsilon),
        relative_difference: expected_objective.map(|e| (plan.objective - e) / e),
        expected_objective,
        plan,
        ignored_fields: instance.ignored_fields.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The small instance of paper 004's model in the layout of `small.json`, with its optima.
    pub(crate) const SMALL_INSTANCE: &str =
        include_str!("../../../../../tests/fixtures/webfountain-small.json");

    #[test]
    fn solves_the_small_instance_to_its_reference_optima() {
        let instance = Instance::from_json(SMALL_INSTANCE).unwrap();
        for strategy in 1..=3 {
            let report = solve(
                &instance,
                SolveRequest {
                    strategy,
                    epsilon: None,
                    max_iterations: 20_000,
                },
            )
            .unwrap();
            let rel = report.relative_difference.unwrap();
            assert!(rel.abs() < 1e-4, "strategy {strategy}: {rel}");
            assert_eq!(report.epsilon.is_some(), strategy == 3);
        }
    }

    #[test]
    fn bad_requests_name_the_parameter() {
        let instance = Instance::from_json(SMALL_INSTANCE).unwrap();
        let request = |strategy, epsilon, max_iterations| SolveRequest {
            strategy,
            epsilon,
            max_iterations,
        };
        let e = solve(&instance, request(4, None, 10))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("strategy: 4"), "{e}");
        let e = solve(&instance, request(3, Some(0.5), 10))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("eps: 0.5"), "{e}");
        let e = solve(&instance, request(1, None, 0))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("max-iterations: 0"), "{e}");
    }
}
