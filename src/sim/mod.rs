//! The time-stepped simulation: a policy refreshes `B` pages per unit of a replayed live Web,
//! through the index's one update path (so the measurement hook fires), and the exact metrics
//! judge the repository after every unit.
//!
//! Runs use a forward-only [`Repository`](crate::index::Repository): the same `apply`, hook,
//! statistics and scores as the tantivy-backed repository the server searches (tested equal in
//! `index::tests`), without tantivy commits, which would dominate a sweep's run time.
//!
//! * [`environment`]: what every run shares (live truth per unit, view weights, the oracle
//!   history with ΔQ measured on every change).
//! * [`run`](mod@run): one run of one policy at one budget.
//! * [`schedule_metrics`]: paper 001's ChangeRate and gp4c NDCG of a refresh schedule.
//! * [`shared_evaluations`]: exact metrics of repository states several runs reach, evaluated
//!   once.
//! * [`oracle_ratio`]: each online policy's budget over the full oracle's, per target.
//! * [`spread`]: a comparison sweep spread over the workers of a mesh (`--workers`,
//!   `--processes`), identical to [`compare::sweep`].

pub mod compare;
pub mod displacement;
pub mod environment;
pub mod estimate_check;
pub mod intervals;
pub mod oracle_ratio;
pub mod run;
pub use crate::change::schedule_metrics;
pub mod shared_evaluations;
pub mod spread;

pub use environment::{Environment, EnvironmentConfig};
pub use run::{run, run_with, RunConfig, RunError, RunResult, TrecExport, UnitRecord};

#[cfg(test)]
mod frontier_tests;
#[cfg(test)]
mod rounds_tests;

/// An environment over `corpus` with the single-term queries `emac`, `lisp` and `buffer`, each
/// of frequency `frequency` (the simulation's unit tests).
#[cfg(test)]
pub(crate) fn three_term_environment(
    corpus: &crate::corpus::Corpus,
    frequency: f64,
) -> Environment<'_> {
    let mut workload = crate::querylog::term_workload::TermWorkload::default();
    for t in ["emac", "lisp", "buffer"] {
        let id = corpus.vocabulary.get(t).unwrap();
        workload.term_frequency.insert(id, frequency);
        workload.queries.push(crate::judge::exact::MetricQuery {
            terms: vec![id],
            frequency,
        });
    }
    Environment::new(corpus, workload, EnvironmentConfig::default()).unwrap()
}
