//! Work spread over worker threads and processes on timely-dataflow (`--workers`,
//! `--processes`, `--process`, `--peers`).
//!
//! A *mesh* is `processes × workers` timely workers: every process runs the same command line,
//! each with its own `--process` number, and the processes are connected over TCP by timely's
//! own communication layer (no networking of ours carries data between workers). Worker `w` of
//! process `p` has the global index `p · workers + w`; worker 0 is the *leader*, which assembles
//! what the others computed.
//!
//! Protocol of [`run`], in order:
//! 1. the processes connect ([`peers::connect`]: the lower number listens, the higher connects,
//!    as timely does, but within `--connect-timeout`; timely's own loop retries forever);
//! 2. every worker sends its [`Greeting`] (binary version, configuration fingerprint, corpus
//!    fingerprint) to every worker, and a worker that receives a different one fails naming the
//!    process and the field ([`MeshError::Mismatch`]);
//! 3. the caller's work runs on each worker, exchanging through [`collective`];
//! 4. a peer whose connection breaks while the mesh runs makes this process exit naming it
//!    ([`watch_for_lost_peers`]): timely's receive thread panics and its workers would wait
//!    forever.
//!
//! The mesh has no authentication and no encryption: run it on a private network.

pub mod collective;
pub mod peers;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use timely::communication::allocator::zero_copy::initialize::initialize_networking_from_sockets;
use timely::communication::allocator::ProcessBuilder;
use timely::communication::{AllocatorBuilder, Hooks};

/// How a command's work is spread: `workers` threads in each of `processes` processes.
#[derive(Debug, Clone, PartialEq)]
pub struct MeshConfig {
    /// Worker threads in this process (`--workers`).
    pub workers: usize,
    /// Processes of the mesh (`--processes`).
    pub processes: usize,
    /// This process's number, `0..processes` (`--process`).
    pub process: usize,
    /// `HOST:PORT` of every process, in process order (`--peers`; empty for one process).
    pub peers: Vec<String>,
    /// How long the processes may take to connect (`--connect-timeout`).
    pub connect_timeout: Duration,
}

impl MeshConfig {
    /// One worker in one process: what a command does without the flags.
    pub fn single() -> Self {
        MeshConfig {
            workers: 1,
            processes: 1,
            process: 0,
            peers: Vec::new(),
            connect_timeout: Duration::from_secs(30),
        }
    }

    /// Workers of the whole mesh.
    pub fn total_workers(&self) -> usize {
        self.workers * self.processes
    }

    /// Whether the work is spread at all.
    pub fn is_spread(&self) -> bool {
        self.total_workers() > 1
    }

    /// Whether this process holds the leader (worker 0), which reports the result.
    pub fn is_leader_process(&self) -> bool {
        self.process == 0
    }
}

/// Why a mesh could not start or run.
#[derive(Debug, thiserror::Error)]
pub enum MeshError {
    #[error("{0}")]
    Flags(String),
    #[error("--peers {}: {cause}", path.display())]
    PeersFile {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("--peers {}: line {line}: {reason}", path.display())]
    PeersLine {
        path: PathBuf,
        line: usize,
        reason: String,
    },
    #[error("process {process}: cannot listen on {address}: {cause}")]
    Listen {
        process: usize,
        address: String,
        cause: std::io::Error,
    },
    #[error("process {peer} at {address} could not be reached within {seconds} s (last error: {cause}); is it running with the same --peers?")]
    Unreachable {
        peer: usize,
        address: String,
        seconds: u64,
        cause: String,
    },
    #[error("process {peer} (listed as {address}) did not connect within {seconds} s; is it running with the same --peers?")]
    NotConnected {
        peer: usize,
        address: String,
        seconds: u64,
    },
    #[error("connection with process {peer} at {address}: {cause}")]
    Connection {
        peer: usize,
        address: String,
        cause: std::io::Error,
    },
    #[error("a connection announced itself as process {announced}, not one of the {processes} listed in --peers")]
    Stranger { announced: u64, processes: usize },
    #[error("process {peer} differs from this one (process {process}): its {what} is {theirs}, this one's is {ours}")]
    Mismatch {
        process: usize,
        peer: usize,
        what: &'static str,
        theirs: String,
        ours: String,
    },
    #[error("timely: {0}")]
    Timely(String),
}

/// A failure on one worker, as it crosses the mesh to the leader: errors themselves are not
/// serialisable, so their message travels with the worker it happened on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
#[error("worker {worker}: {message}")]
pub struct RemoteFailure {
    pub(crate) worker: usize,
    pub(crate) message: String,
}

impl RemoteFailure {
    /// `error` on worker `worker`.
    pub fn on(worker: usize, error: &dyn std::fmt::Display) -> Self {
        RemoteFailure {
            worker,
            message: error.to_string(),
        }
    }
}

/// What every worker of a mesh must agree on before any work starts.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Greeting {
    /// The sender's process number.
    pub process: usize,
    /// The binary's version.
    pub version: String,
    /// XXH3 of the command line without the per-process flags (`--process`).
    pub configuration: String,
    /// XXH3 of the inputs every process read (the corpus and the workload).
    pub corpus: String,
}

impl Greeting {
    /// The first field in which `theirs` differs from `self`, as (name, theirs, ours).
    fn difference(&self, theirs: &Greeting) -> Option<(&'static str, String, String)> {
        let fields = [
            ("binary version", &theirs.version, &self.version),
            (
                "configuration (command line)",
                &theirs.configuration,
                &self.configuration,
            ),
            (
                "corpus and workload fingerprint",
                &theirs.corpus,
                &self.corpus,
            ),
        ];
        fields
            .into_iter()
            .find(|(_, a, b)| a != b)
            .map(|(what, a, b)| (what, a.clone(), b.clone()))
    }
}

/// Runs `work` once per worker of this process, after the processes connect and agree
/// ([`Greeting`]); returns each worker's result in worker order. `work` exchanges through its
/// [`Exchanger`]; every worker must make the same exchanges in the same order (timely matches
/// them across workers by order): `work` decides by the worker's index what it computes, never
/// whether it takes part in an exchange.
///
/// Each worker is two threads: timely's (which owns the dataflows and only serves exchanges) and
/// a scoped one running `work`, so `work` may borrow what the caller loaded once per process.
pub fn run<T, F>(config: &MeshConfig, greeting: &Greeting, work: F) -> Result<Vec<T>, MeshError>
where
    T: Send,
    F: Fn(&Exchanger) -> T + Sync,
{
    let (builders, guard) = allocators(config)?;
    let first = config.process * config.workers;
    let (senders, receivers): (Vec<_>, Vec<_>) = (0..config.workers)
        .map(|_| mpsc::channel::<Exchange>())
        .unzip();
    let receivers = Arc::new(Mutex::new(
        receivers.into_iter().map(Some).collect::<Vec<_>>(),
    ));
    let timely_workers = timely::execute::execute_from(
        builders,
        guard,
        timely::WorkerConfig::default(),
        move |worker| {
            let local = worker.index() - first;
            let requests = receivers.lock().expect("mesh channels")[local]
                .take()
                .expect("one timely worker per channel");
            // Serves exchanges until the scoped thread drops its `Exchanger`.
            while let Ok(exchange) = requests.recv() {
                let received = collective::route_all(worker, exchange.items);
                if exchange.reply.send(received).is_err() {
                    break;
                }
            }
        },
    )
    .map_err(MeshError::Timely)?;
    let results = std::thread::scope(|scope| {
        let handles: Vec<_> = senders
            .into_iter()
            .enumerate()
            .map(|(local, requests)| {
                let work = &work;
                let exchanger = Exchanger {
                    index: first + local,
                    peers: config.total_workers(),
                    requests,
                    sent: AtomicU64::new(0),
                };
                std::thread::Builder::new()
                    .name(format!("refresher:worker-{}", first + local))
                    .spawn_scoped(scope, move || {
                        exchanger.agree(greeting)?;
                        Ok(work(&exchanger))
                    })
                    .expect("spawning a worker thread")
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect::<Result<Vec<T>, MeshError>>()
    });
    for joined in timely_workers.join() {
        joined.map_err(MeshError::Timely)?;
    }
    results
}

/// Timely's allocators for this process's workers: in-process channels, or over the sockets
/// [`peers::connect`] made.
fn allocators(
    config: &MeshConfig,
) -> Result<(Vec<AllocatorBuilder>, Box<dyn std::any::Any + Send>), MeshError> {
    if config.processes == 1 {
        return timely::CommunicationConfig::Process(config.workers)
            .try_build()
            .map_err(MeshError::Timely);
    }
    let sockets = peers::connect(config)?;
    watch_for_lost_peers(&config.peers);
    let hooks = Hooks::default();
    let local =
        ProcessBuilder::new_typed_vector(config.workers, hooks.refill.clone(), hooks.spill.clone());
    let (builders, guard) =
        initialize_networking_from_sockets(local, sockets, config.process, config.workers, hooks)
            .map_err(|e| MeshError::Timely(e.to_string()))?;
    Ok((
        builders.into_iter().map(AllocatorBuilder::Tcp).collect(),
        Box::new(guard),
    ))
}

/// One exchange asked of a timely worker: items addressed to workers, and where to send what
/// this worker receives.
struct Exchange {
    items: Vec<(u64, Vec<u8>)>,
    reply: mpsc::Sender<Vec<Vec<u8>>>,
}

/// A worker's handle on the mesh: its index and the exchanges ([`collective`]'s protocol).
pub struct Exchanger {
    index: usize,
    peers: usize,
    requests: mpsc::Sender<Exchange>,
    /// Payload bytes this worker sent to other workers (what crosses threads or the network).
    sent: AtomicU64,
}

/// Why an exchange failed: the timely worker is gone (its process is stopping) or a value did
/// not survive encoding.
#[derive(Debug, thiserror::Error)]
pub enum ExchangeError {
    #[error("the mesh's timely worker stopped before the exchange finished")]
    Stopped,
    #[error("encoding an exchanged value: {0}")]
    Encoding(#[from] bincode::Error),
}

impl Exchanger {
    /// This worker's index in the whole mesh (worker 0 is the leader).
    pub fn index(&self) -> usize {
        self.index
    }

    /// Workers of the whole mesh.
    pub fn peers(&self) -> usize {
        self.peers
    }

    /// Payload bytes this worker has sent to other workers so far (its greeting included).
    pub fn bytes_sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }

    /// Whether this is the leader, worker 0.
    pub fn is_leader(&self) -> bool {
        self.index == 0
    }

    fn exchange<D>(&self, items: Vec<(u64, D)>) -> Result<Vec<D>, ExchangeError>
    where
        D: serde::Serialize + serde::de::DeserializeOwned,
    {
        let items = items
            .into_iter()
            .map(|(to, d)| Ok((to, bincode::serialize(&d)?)))
            .collect::<Result<Vec<(u64, Vec<u8>)>, bincode::Error>>()?;
        let to_others: usize = items
            .iter()
            .filter(|(to, _)| *to != self.index as u64)
            .map(|(_, bytes)| bytes.len())
            .sum();
        self.sent.fetch_add(to_others as u64, Ordering::Relaxed);
        let (reply, answer) = mpsc::channel();
        self.requests
            .send(Exchange { items, reply })
            .map_err(|_| ExchangeError::Stopped)?;
        let received = answer.recv().map_err(|_| ExchangeError::Stopped)?;
        received
            .iter()
            .map(|bytes| Ok(bincode::deserialize(bytes)?))
            .collect()
    }

    /// Every worker's `item`, on every worker, in worker order.
    pub fn all_gather<D>(&self, item: D) -> Result<Vec<D>, ExchangeError>
    where
        D: serde::Serialize + serde::de::DeserializeOwned + Clone,
    {
        self.exchange(
            (0..self.peers as u64)
                .map(|to| (to, item.clone()))
                .collect(),
        )
    }

    /// The leader's `items[w]` on worker `w` (the leader passes one item per worker, in worker
    /// order; the others pass none): each worker's own item, and only its own.
    pub fn scatter_from_leader<D>(&self, items: Vec<D>) -> Result<D, ExchangeError>
    where
        D: serde::Serialize + serde::de::DeserializeOwned,
    {
        assert!(
            items.is_empty() || (self.is_leader() && items.len() == self.peers),
            "only the leader scatters, one item per worker"
        );
        self.exchange(
            items
                .into_iter()
                .enumerate()
                .map(|(to, d)| (to as u64, d))
                .collect(),
        )?
        .pop()
        .ok_or(ExchangeError::Stopped)
    }

    /// Every worker's `items` on the leader, ordered by worker and then by each worker's order;
    /// the other workers get nothing.
    pub fn gather_to_leader<D>(&self, items: Vec<D>) -> Result<Vec<D>, ExchangeError>
    where
        D: serde::Serialize + serde::de::DeserializeOwned,
    {
        self.exchange(items.into_iter().map(|d| (0, d)).collect())
    }

    /// Step 2 of [`run`]'s protocol: every worker's greeting to every worker.
    fn agree(&self, ours: &Greeting) -> Result<(), MeshError> {
        let received = self
            .all_gather(ours.clone())
            .map_err(|e| MeshError::Timely(e.to_string()))?;
        for theirs in &received {
            if let Some((what, their_value, our_value)) = ours.difference(theirs) {
                return Err(MeshError::Mismatch {
                    process: ours.process,
                    peer: theirs.process,
                    what,
                    theirs: their_value,
                    ours: our_value,
                });
            }
        }
        Ok(())
    }
}

/// Makes this process exit, naming the peer, when timely's communication with it breaks:
/// timely's receive and send threads (`timely:recv-P`, `timely:send-P`) panic with
/// "timely communication error" and the workers, waiting for that peer's progress, would
/// otherwise wait forever. Other panics go to the hook installed before.
pub fn watch_for_lost_peers(addresses: &[String]) {
    let addresses = addresses.to_vec();
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let thread = std::thread::current();
        let name = thread.name().unwrap_or("");
        let peer = name
            .strip_prefix("timely:recv-")
            .or_else(|| name.strip_prefix("timely:send-"))
            .and_then(|p| p.parse::<usize>().ok());
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        match peer {
            Some(peer) if message.contains("timely communication error") => {
                let address = addresses.get(peer).map_or("?", String::as_str);
                eprintln!(
                    "error: lost process {peer} at {address} ({message}); stopping this process too"
                );
                std::process::exit(3);
            }
            _ => previous(info),
        }
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn greeting(process: usize) -> Greeting {
        Greeting {
            process,
            version: "1".into(),
            configuration: "c".into(),
            corpus: "x".into(),
        }
    }

    #[test]
    fn workers_of_one_process_agree_and_return_in_order() {
        for workers in 1..=4 {
            let config = MeshConfig {
                workers,
                ..MeshConfig::single()
            };
            let out = run(&config, &greeting(0), |w| w.index() * 10).unwrap();
            assert_eq!(out, (0..workers).map(|i| i * 10).collect::<Vec<_>>());
        }
    }

    #[test]
    fn a_scatter_gives_each_worker_its_own_item_only() {
        for workers in 1..=4 {
            let config = MeshConfig {
                workers,
                ..MeshConfig::single()
            };
            let out = run(&config, &greeting(0), |w| {
                let items = if w.is_leader() {
                    (0..w.peers()).map(|to| vec![to; to + 1]).collect()
                } else {
                    Vec::new()
                };
                w.scatter_from_leader(items).unwrap()
            })
            .unwrap();
            assert_eq!(
                out,
                (0..workers).map(|i| vec![i; i + 1]).collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn a_greeting_names_the_first_field_that_differs() {
        let ours = greeting(0);
        let mut theirs = greeting(2);
        assert_eq!(ours.difference(&theirs), None);
        theirs.corpus = "y".into();
        let (what, t, o) = ours.difference(&theirs).unwrap();
        assert_eq!(
            (what, t.as_str(), o.as_str()),
            ("corpus and workload fingerprint", "y", "x")
        );
        theirs.version = "2".into();
        assert_eq!(ours.difference(&theirs).unwrap().0, "binary version");
    }
}
