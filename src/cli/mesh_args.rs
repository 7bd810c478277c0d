//! `--workers`, `--processes`, `--process`, `--peers`, `--connect-timeout`: how a command's work
//! is spread over timely workers ([`refresher::mesh`]).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
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

/// What `--index`, `--warc-out` and `--addr` may hold for the process's number, so that every
/// process of a mesh runs the same command line yet writes and listens at its own place.
const PROCESS_PLACEHOLDER: &str = "{process}";

/// `value` with every `{process}` replaced by `process` (`{processes}` and other braces are
/// left alone). A run without `--process` is process 0.
pub fn substitute_process(value: &str, process: usize) -> String {
    value.replace(PROCESS_PLACEHOLDER, &process.to_string())
}

/// A path flag's value for this process ([`substitute_process`]). A path that is not UTF-8
/// is used as given: `{process}` is looked for in text only.
pub fn process_path(path: &Path, process: usize) -> PathBuf {
    match path.to_str() {
        Some(text) => PathBuf::from(substitute_process(text, process)),
        None => path.to_path_buf(),
    }
}

/// An address flag's value for this process ([`substitute_process`]), parsed as `IP:PORT`
/// only once substituted (`127.0.0.1:81{process}0` is no address until then).
pub fn process_addr(flag: &str, value: &str, process: usize) -> anyhow::Result<SocketAddr> {
    let substituted = substitute_process(value, process);
    substituted.parse().map_err(|e| {
        if substituted == value {
            anyhow::anyhow!("{flag} {value}: not an IP:PORT address ({e})")
        } else {
            anyhow::anyhow!(
                "{flag} {value}: {substituted} (process {process}) is not an IP:PORT address ({e})"
            )
        }
    })
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

/// [`greeting`] for `crawl`: its inputs are what process 0 fetches, so the command line says
/// all the processes must agree on.
pub fn crawl_greeting(process: usize) -> Greeting {
    greeting_of_inputs(process, "crawl".to_string())
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
    fn a_command_line_with_the_placeholder_is_the_same_for_every_process() {
        let line = |process: &str| {
            command_line_fingerprint(args(&[
                "serve",
                "--index",
                "idx/p{process}",
                "--addr",
                "127.0.0.1:81{process}0",
                "--processes",
                "2",
                "--process",
                process,
            ]))
        };
        assert_eq!(line("0"), line("1"));
        // The raw arguments are hashed: the values each process substitutes would differ.
        let substituted = |process: usize| {
            command_line_fingerprint(args(&[
                "serve",
                "--index",
                &substitute_process("idx/p{process}", process),
                "--processes",
                "2",
            ]))
        };
        assert_ne!(substituted(0), substituted(1));
    }

    #[test]
    fn the_placeholder_becomes_the_process_number_wherever_it_is() {
        assert_eq!(substitute_process("idx/shards", 3), "idx/shards");
        assert_eq!(substitute_process("idx/p{process}", 3), "idx/p3");
        assert_eq!(
            substitute_process("{process}/warc-{process}-{process}", 12),
            "12/warc-12-12"
        );
        // Only the exact placeholder: other braces are text.
        assert_eq!(
            substitute_process("{processes}/{Process}/{process/{}", 1),
            "{processes}/{Process}/{process/{}"
        );
        assert_eq!(substitute_process("{{process}}", 2), "{2}");
        assert_eq!(
            process_path(Path::new("runs/p{process}/warc"), 0),
            Path::new("runs/p0/warc")
        );
    }

    #[test]
    fn an_address_is_parsed_once_substituted_and_refused_naming_the_flag() {
        assert_eq!(
            process_addr("--addr", "127.0.0.1:81{process}0", 2).unwrap(),
            "127.0.0.1:8120".parse::<SocketAddr>().unwrap()
        );
        assert_eq!(
            process_addr("--addr", "[::1]:8080", 5).unwrap(),
            "[::1]:8080".parse::<SocketAddr>().unwrap()
        );
        let error = process_addr("--addr", "127.0.0.1:65{process}", 999)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("--addr 127.0.0.1:65{process}")
                && error.contains("127.0.0.1:65999 (process 999)"),
            "{error}"
        );
        let error = process_addr("--addr", "localhost", 0)
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("--addr localhost: not"), "{error}");
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
