//! `--workers`, `--processes`, `--process`, `--peers`, `--connect-timeout`: how a command's work
//! is spread over timely workers ([`refresher::mesh`]).

use std::path::PathBuf;
use std::time::Duration;

use refresher::corpus::Corpus;
use refresher::mesh::{peers::read_peers, Greeting, MeshConfig};
use refresher::querylog::term_workload::TermWorkload;
use refresher::querylog::workload::Workload;

/// The most worker threads one process may run (far above any core count it makes sense for).
const MAX_WORKERS: usize = 1024;

#[derive(clap::Args, Debug, Clone)]
pub struct MeshArgs {
    /// Worker threads in this process; each runs a share of the work on its share of the
    /// cores. Results are identical for any number.
    #[arg(long, default_value_t = 1, value_name = "N")]
    #[arg(help_heading = "Workers")]
    pub(crate) workers: usize,
    /// Processes running the same command line together (each with its own --process), over
    /// TCP between the addresses of --peers. A private network only: the mesh has no
    /// authentication.
    #[arg(long, default_value_t = 1, value_name = "N")]
    #[arg(help_heading = "Workers")]
    pub(crate) processes: usize,
    /// This process's number, 0 to --processes − 1; process 0 reports the result.
    #[arg(long, default_value_t = 0, value_name = "I")]
    #[arg(help_heading = "Workers")]
    pub(crate) process: usize,
    /// A file of the processes' addresses, one HOST:PORT per line in process order (`#`
    /// comments allowed); each process listens on its own line's address.
    #[arg(long, value_name = "FILE")]
    #[arg(help_heading = "Workers")]
    pub(crate) peers: Option<PathBuf>,
    /// Seconds the processes may take to find each other before each exits naming the one
    /// it could not reach.
    #[arg(long, default_value_t = 60, value_name = "SECONDS")]
    #[arg(help_heading = "Workers")]
    pub(crate) connect_timeout: u64,
}

impl MeshArgs {
    /// The flags' defaults: one worker in one process.
    pub fn one_worker() -> Self {
        MeshArgs {
            workers: 1,
            processes: 1,
            process: 0,
            peers: None,
            connect_timeout: 60,
        }
    }

    /// The mesh these flags describe, checked (the host file read).
    pub fn config(&self) -> anyhow::Result<MeshConfig> {
        if self.workers == 0 || self.workers > MAX_WORKERS {
            anyhow::bail!("--workers {}: expected 1 to {MAX_WORKERS}", self.workers);
        }
        if self.processes == 0 {
            anyhow::bail!("--processes 0: expected at least 1");
        }
        if self.process >= self.processes {
            anyhow::bail!(
                "--process {}: expected a number below --processes {}",
                self.process,
                self.processes
            );
        }
        if self.connect_timeout == 0 || self.connect_timeout > 86_400 {
            anyhow::bail!(
                "--connect-timeout {}: expected 1 to 86400 seconds",
                self.connect_timeout
            );
        }
        let peers = match (&self.peers, self.processes) {
            (None, 1) => Vec::new(),
            (None, n) => {
                anyhow::bail!("--processes {n} needs --peers FILE (the processes' addresses)")
            }
            (Some(path), n) => {
                let peers = read_peers(path)?;
                if peers.len() != n {
                    anyhow::bail!(
                        "--peers {}: {} addresses for --processes {n}",
                        path.display(),
                        peers.len()
                    );
                }
                peers
            }
        };
        Ok(MeshConfig {
            workers: self.workers,
            processes: self.processes,
            process: self.process,
            peers,
            connect_timeout: Duration::from_secs(self.connect_timeout),
        })
    }
}

/// What this process tells the others before any work: the binary's version and commit, the command line
/// without `--process`, and the inputs it read.
pub fn greeting(process: usize, corpus: &Corpus, workload: &TermWorkload) -> Greeting {
    greeting_of_inputs(
        process,
        format!(
            "{}/{}",
            refresher::index::served::corpus_fingerprint(corpus),
            workload_fingerprint(workload)
        ),
    )
}

/// [`greeting`] for `serve`: the corpus and, with a log, the workload's queries.
pub fn serve_greeting(process: usize, corpus: &Corpus, workload: Option<&Workload>) -> Greeting {
    let queries = match workload {
        Some(w) => {
            let mut h = xxhash_rust::xxh3::Xxh3::new();
            for q in &w.queries {
                for t in q.terms() {
                    h.update(&(t.len() as u64).to_le_bytes());
                    h.update(t.as_bytes());
                }
                h.update(&q.frequency.to_le_bytes());
            }
            format!("{:016x}", h.digest())
        }
        None => "no log".to_string(),
    };
    greeting_of_inputs(
        process,
        format!(
            "{}/{queries}",
            refresher::index::served::corpus_fingerprint(corpus)
        ),
    )
}

/// The greeting of a process whose inputs have the fingerprint `inputs`.
fn greeting_of_inputs(process: usize, inputs: String) -> Greeting {
    Greeting {
        process,
        version: concat!(
            env!("CARGO_PKG_VERSION"),
            " (",
            env!("REFRESHER_COMMIT"),
            ")"
        )
        .to_string(),
        configuration: command_line_fingerprint(std::env::args().skip(1)),
        corpus: inputs,
    }
}

/// XXH3 of the arguments without `--process I` (the one flag processes differ in).
fn command_line_fingerprint(args: impl Iterator<Item = String>) -> String {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    let mut args = args.peekable();
    while let Some(arg) = args.next() {
        if arg == "--process" {
            args.next();
            continue;
        }
        if arg.starts_with("--process=") {
            continue;
        }
        h.update(&(arg.len() as u64).to_le_bytes());
        h.update(arg.as_bytes());
    }
    format!("{:016x}", h.digest())
}

fn workload_fingerprint(workload: &TermWorkload) -> String {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for q in &workload.queries {
        h.update(&(q.terms.len() as u64).to_le_bytes());
        for t in &q.terms {
            h.update(&t.to_le_bytes());
        }
        h.update(&q.frequency.to_bits().to_le_bytes());
    }
    format!("{:016x}", h.digest())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> impl Iterator<Item = String> {
        a.iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .into_iter()
    }

    #[test]
    fn processes_differ_only_in_their_number() {
        let a = command_line_fingerprint(args(&["compare", "--process", "0", "--processes", "3"]));
        let b = command_line_fingerprint(args(&["compare", "--process", "2", "--processes", "3"]));
        let c = command_line_fingerprint(args(&["compare", "--process=1", "--processes", "3"]));
        let d = command_line_fingerprint(args(&["compare", "--processes", "3", "--seed", "2"]));
        assert_eq!(a, b);
        assert_eq!(a, c);
        assert_ne!(a, d);
    }

    #[test]
    fn absurd_flags_are_refused_naming_the_flag() {
        let base = MeshArgs::one_worker();
        let absurd = [
            (
                MeshArgs {
                    workers: 0,
                    ..base.clone()
                },
                "--workers 0",
            ),
            (
                MeshArgs {
                    process: 1,
                    ..base.clone()
                },
                "--process 1",
            ),
            (
                MeshArgs {
                    processes: 2,
                    ..base.clone()
                },
                "--peers",
            ),
            (
                MeshArgs {
                    connect_timeout: 0,
                    ..base.clone()
                },
                "--connect-timeout",
            ),
        ];
        for (args, flag) in absurd {
            let error = args.config().unwrap_err().to_string();
            assert!(error.contains(flag), "{error}");
        }
        assert_eq!(
            base.config().unwrap(),
            MeshConfig {
                connect_timeout: Duration::from_secs(60),
                ..MeshConfig::single()
            }
        );
    }
}
