//! A comparison sweep spread over the workers of a mesh ([`crate::mesh`]): each worker runs a
//! share of the sweep's jobs on its own rayon pool and sends their figures to the leader, which
//! assembles the comparison exactly as [`super::compare::sweep`] does on one machine.
//!
//! Why the result is identical to one process: every run is a pure function of the
//! environment and its job (seeded randomness keyed by the run's seed; nothing read across
//! runs but the environment's cache of pure results), job `i` runs on worker `i mod workers`
//! (a fixed rule, not arrival order), its figures cross the wire as exact `f64`s
//! ([`RunFigures`], bincode), and the leader assembles the points in job order. Every process
//! loads the whole corpus and workload: the runs are spread, the pages are not.

use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::compare::{Comparison, RunFigures, SweepConfig, SweepError, SweepPlan};
use super::environment::Environment;
use crate::mesh::{ExchangeError, Exchanger, RemoteFailure};

/// Why a spread sweep failed.
#[derive(Debug, thiserror::Error)]
pub enum SpreadError {
    #[error(transparent)]
    Sweep(#[from] SweepError),
    #[error(transparent)]
    Exchange(#[from] ExchangeError),
    #[error("run {job} of the sweep (on {failure})")]
    Run { job: usize, failure: RemoteFailure },
    #[error("the leader received {received} of the sweep's {expected} runs")]
    Missing { received: usize, expected: usize },
}

/// The worker that runs job `job` of a sweep over `workers` workers.
pub fn owner_of(job: usize, workers: usize) -> usize {
    job % workers
}

/// This worker's share of the sweep of `config`, run on `pool`; the comparison on the leader,
/// `None` on every other worker. `progress(done, total)` counts this worker's runs.
pub fn sweep(
    env: &Environment<'_>,
    config: &SweepConfig,
    mesh: &Exchanger,
    pool: &rayon::ThreadPool,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Option<Comparison>, SpreadError> {
    let plan = SweepPlan::new(config)?;
    let mine: Vec<usize> = (0..plan.len())
        .filter(|&i| owner_of(i, mesh.peers()) == mesh.index())
        .collect();
    let done = AtomicUsize::new(0);
    type Reported = (u64, Result<RunFigures, RemoteFailure>);
    let reports: Vec<Reported> = pool.install(|| {
        mine.par_iter()
            .map(|&i| {
                let figures = plan
                    .run_job(env, i)
                    .map(|point| RunFigures::of(&point))
                    .map_err(|e| RemoteFailure::on(mesh.index(), &e));
                progress(done.fetch_add(1, Ordering::Relaxed) + 1, mine.len());
                (i as u64, figures)
            })
            .collect()
    });
    let mut gathered = mesh.gather_to_leader(reports)?;
    if !mesh.is_leader() {
        return Ok(None);
    }
    if gathered.len() != plan.len() {
        return Err(SpreadError::Missing {
            received: gathered.len(),
            expected: plan.len(),
        });
    }
    gathered.sort_by_key(|(job, ..)| *job);
    let mut points = Vec::with_capacity(gathered.len());
    for (job, figures) in gathered {
        let job = job as usize;
        let figures = figures.map_err(|failure| SpreadError::Run { job, failure })?;
        points.push(plan.point_of(job, figures));
    }
    Ok(Some(plan.assemble(env, points)?))
}

/// Rayon threads for each of `workers` worker threads of one process, so that together they
/// use the machine's cores once.
pub fn threads_per_worker(workers: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (cores / workers.max(1)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::{Greeting, MeshConfig};
    use crate::policy::registry::DEFAULT_COMPARISON;
    use crate::policy::FitMode;
    use std::collections::BTreeMap;

    fn comparable(c: &Comparison) -> serde_json::Value {
        let mut v = serde_json::to_value(c).unwrap();
        v.as_object_mut().unwrap().remove("seconds");
        v
    }

    #[test]
    fn a_sweep_spread_over_workers_equals_the_one_process_sweep() {
        let corpus = crate::index::testutil::random_corpus(40, 6, 5);
        let env = crate::sim::three_term_environment(&corpus, 2.0);
        for mode in [FitMode::Oracle, FitMode::Online] {
            // Every default family, SBR/EBR's θ grid, intervals (a seeded policy's resamples).
            let config = SweepConfig {
                policies: DEFAULT_COMPARISON.iter().map(|s| s.to_string()).collect(),
                budgets: vec![0, 1, 4, 16],
                params: Vec::new(),
                grids: BTreeMap::from([("theta".to_string(), vec![0.1, 0.5])]),
                mode,
                seed: 3,
                new_pages: Default::default(),
                warmup_units: 0,
                oracle_history: Default::default(),
                targets: Vec::new(),
                signals: Default::default(),
                intervals: true,
            };
            let alone =
                comparable(&super::super::compare::sweep(&env, &config, &|_, _| {}).unwrap());
            for workers in [1, 2, 3] {
                let mesh = MeshConfig {
                    workers,
                    ..MeshConfig::single()
                };
                let greeting = Greeting {
                    process: 0,
                    version: String::new(),
                    configuration: String::new(),
                    corpus: String::new(),
                };
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(1)
                    .build()
                    .unwrap();
                let out = crate::mesh::run(&mesh, &greeting, |ex| {
                    sweep(&env, &config, ex, &pool, &|_, _| {}).unwrap()
                })
                .unwrap();
                assert_eq!(
                    comparable(out[0].as_ref().unwrap()),
                    alone,
                    "{workers} workers, {mode:?}"
                );
                assert!(out[1..].iter().all(Option::is_none));
            }
        }
    }
}
