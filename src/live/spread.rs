//! A crawl's page fetches spread over the mesh's workers by host (`crawl --workers N`,
//! `--processes N --process I --peers FILE`).
//!
//! Each host has one owner, worker `xxh3(host) mod workers`
//! ([`crate::index::shards::shard_of_host`]), which fetches every page of it with its own HTTP
//! client: robots.txt and the politeness delay are the owner's, as one crawler per host
//! requires. Everything else stays with the crawl in process 0: the policy, the repository,
//! the journal and the WARC output, the parsing of every body. Its fetcher hands each live
//! batch to [`SpreadFetches`] (a [`JobRunner`]), and reads the answers as it reads its own
//! client's ([`crate::fetch::http`]'s `remote.rs`), so the crawl equals one whose fetches are
//! not spread whenever the servers answer alike.
//!
//! Every worker runs `fetch_worker`, a loop of rounds, each the same exchanges on every
//! worker (timely matches exchanges by order):
//! 1. the leader takes the next batch from the crawl and every worker learns its unit and
//!    deadline (all-gather; the others send `Wire::Idle`);
//! 2. each worker receives the jobs of the hosts it owns (a scatter from the leader) and
//!    fetches them within the unit's deadline;
//! 3. the answers go to the leader (gather), which hands them to the crawl in job order.
//!
//! `Wire::Stop` ends every loop once the crawl is over. A process that loses a peer exits
//! naming it ([`crate::mesh`]); the crawl's state is committed unit by unit, so restarting
//! every process resumes it as a one-process crawl resumes. Not spread: the sitemaps and
//! feeds, which process 0 reads with its own client.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use crate::corpus::Unit;
use crate::fetch::http::{FetcherError, HostClient, HttpOptions, JobRunner, WireBatch, WireJob};
use crate::index::shards::shard_of_host;
use crate::mesh::{ExchangeError, Exchanger, Greeting, MeshConfig, MeshError, RemoteFailure};

/// Why the spread fetches could not start or go on.
#[derive(Debug, thiserror::Error)]
pub enum SpreadError {
    #[error("the HTTP client of worker {worker}: {source}")]
    Client {
        worker: usize,
        #[source]
        source: FetcherError,
    },
    #[error(transparent)]
    Remote(#[from] RemoteFailure),
    #[error(transparent)]
    Exchange(#[from] ExchangeError),
    #[error(transparent)]
    Mesh(#[from] MeshError),
}

/// What the crawl asks of the workers.
enum Order {
    /// One batch of a live unit, with where the answers go.
    Fetch {
        unit: Unit,
        deadline: Option<Duration>,
        jobs: Vec<WireJob>,
        reply: mpsc::Sender<WireBatch>,
    },
    /// The crawl is over (the fetcher, which holds a sender too, may outlive it).
    Stop,
}

/// A round's order as every worker learns it (step 1).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
enum Wire {
    /// A batch: its jobs follow, each worker's to it alone (step 2).
    Fetch {
        unit: Unit,
        /// Milliseconds left until the unit's deadline when the leader sent the batch.
        deadline_ms: Option<u64>,
    },
    Stop,
    /// What a worker other than the leader contributes to step 1.
    Idle,
}

/// Process 0's handle on the mesh's fetching workers; its [`runner`](Self::runner) is what the
/// crawl's fetcher hands its batches to.
pub struct SpreadFetches {
    orders: Mutex<Option<mpsc::Sender<Order>>>,
    mesh: Mutex<Option<std::thread::JoinHandle<Result<(), SpreadError>>>>,
    /// Set once every client is built, cleared by [`Self::stop`]: while set, a mesh that fails
    /// ends the process (the crawl cannot fetch), naming why.
    serving: Arc<AtomicBool>,
    /// What crossed between the workers ([`Self::traffic`]).
    traffic: Arc<Traffic>,
}

/// The batches the workers fetched and the payload bytes they sent each other (jobs out,
/// answers and robots.txt back), summed over every worker once they stop.
#[derive(Debug, Default)]
struct Traffic {
    batches: AtomicU64,
    bytes: AtomicU64,
}

impl SpreadFetches {
    /// Starts the mesh (`config`, agreeing on `greeting`), every worker with an HTTP client
    /// of `options`; returns once every client is built. Only for process 0; the others run
    /// [`fetch_for_process_zero`].
    pub fn start(
        options: HttpOptions,
        config: MeshConfig,
        greeting: Greeting,
    ) -> Result<Self, SpreadError> {
        let (orders, inbox) = mpsc::channel();
        let (ready, started) = mpsc::channel();
        let serving = Arc::new(AtomicBool::new(false));
        let failing = Arc::clone(&serving);
        let traffic = Arc::new(Traffic::default());
        let counted = Arc::clone(&traffic);
        let mesh = std::thread::Builder::new()
            .name("refresher:fetches".into())
            .spawn(move || {
                let inbox = Mutex::new(Some(inbox));
                let ready = Mutex::new(Some((ready, Arc::clone(&failing), Arc::clone(&counted))));
                let result = crate::mesh::run(&config, &greeting, |ex| {
                    let leader = ex.is_leader().then(|| {
                        let (ready, serving, traffic) =
                            ready.lock().expect("ready").take().expect("one leader");
                        Leader {
                            inbox: inbox.lock().expect("inbox").take().expect("one leader"),
                            ready,
                            serving,
                            traffic,
                        }
                    });
                    fetch_worker(ex, &options, leader)
                })
                .map_err(SpreadError::from)
                .and_then(|results| results.into_iter().collect::<Result<Vec<()>, _>>());
                if let Err(e) = &result {
                    if failing.load(Ordering::Acquire) {
                        // The crawl would go on with every fetch failing: stop it instead. Its
                        // state is committed unit by unit, so running every process again
                        // resumes it.
                        eprintln!("error: the crawl's fetching workers stopped: {e}");
                        std::process::exit(1);
                    }
                }
                result.map(|_| ())
            })
            .expect("spawning the fetches' thread");
        match started.recv() {
            Ok(()) => Ok(SpreadFetches {
                orders: Mutex::new(Some(orders)),
                mesh: Mutex::new(Some(mesh)),
                serving,
                traffic,
            }),
            // The mesh ended before every client was built: its error says why.
            Err(_) => Err(mesh
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p))
                .err()
                .unwrap_or_else(|| RemoteFailure::on(0, &"the fetching workers stopped").into())),
        }
    }

    /// The batches fetched and the bytes exchanged, complete once [`Self::stop`] returned.
    pub fn traffic(&self) -> (u64, u64) {
        (
            self.traffic.batches.load(Ordering::Acquire),
            self.traffic.bytes.load(Ordering::Acquire),
        )
    }

    /// What the crawl's fetcher hands its batches to.
    pub fn runner(&self) -> Box<dyn JobRunner> {
        Box::new(Runner {
            orders: self
                .orders
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        })
    }

    /// Ends every worker's loop (the other processes then exit) and waits for the mesh.
    pub fn stop(&self) -> Result<(), SpreadError> {
        self.serving.store(false, Ordering::Release);
        if let Some(orders) = self.orders.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = orders.send(Order::Stop);
        }
        match self.mesh.lock().unwrap_or_else(|e| e.into_inner()).take() {
            Some(mesh) => mesh.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
            None => Ok(()),
        }
    }
}

/// The crawl side of [`SpreadFetches`]: a batch sent, its answers awaited.
struct Runner {
    orders: Option<mpsc::Sender<Order>>,
}

impl JobRunner for Runner {
    /// A mesh that stopped answers nothing: every job then fails as cut by the deadline, and
    /// the mesh thread's error (a lost peer) ends the process.
    fn run(&mut self, unit: Unit, deadline: Option<Duration>, jobs: Vec<WireJob>) -> WireBatch {
        let (reply, answers) = mpsc::channel();
        let sent = self.orders.as_ref().is_some_and(|orders| {
            orders
                .send(Order::Fetch {
                    unit,
                    deadline,
                    jobs,
                    reply,
                })
                .is_ok()
        });
        if !sent {
            return WireBatch::default();
        }
        answers.recv().unwrap_or_default()
    }
}

/// For a process other than 0: fetches its workers' hosts' pages until process 0's crawl
/// ends (or a peer is lost).
pub fn fetch_for_process_zero(
    options: &HttpOptions,
    config: &MeshConfig,
    greeting: &Greeting,
) -> Result<(), SpreadError> {
    crate::mesh::run(config, greeting, |ex| fetch_worker(ex, options, None))?
        .into_iter()
        .collect::<Result<Vec<()>, _>>()?;
    Ok(())
}

/// The leader worker's ends of the channels to the crawl.
struct Leader {
    inbox: mpsc::Receiver<Order>,
    ready: mpsc::Sender<()>,
    /// [`SpreadFetches::serving`].
    serving: Arc<AtomicBool>,
    /// [`SpreadFetches::traffic`].
    traffic: Arc<Traffic>,
}

/// One worker's client and its loop of rounds (see the module docs).
fn fetch_worker(
    ex: &Exchanger,
    options: &HttpOptions,
    leader: Option<Leader>,
) -> Result<(), SpreadError> {
    let (worker, workers) = (ex.index(), ex.peers());
    let built = HostClient::new(options.clone());
    // A worker whose client failed still takes part in this exchange (the others would wait
    // for it forever), and every worker then stops with the first failure.
    let published = match &built {
        Ok(_) => Ok(()),
        Err(e) => Err(RemoteFailure::on(worker, e)),
    };
    ex.all_gather(published)?
        .into_iter()
        .collect::<Result<Vec<()>, RemoteFailure>>()?;
    let mut client = built.map_err(|source| SpreadError::Client { worker, source })?;
    if let Some(leader) = &leader {
        leader.serving.store(true, Ordering::Release);
        let _ = leader.ready.send(());
    }
    loop {
        // Step 1: the leader's next batch (Stop once the crawl has hung up).
        let (wire, reply, jobs) = match &leader {
            Some(l) => match l.inbox.recv() {
                Ok(Order::Fetch {
                    unit,
                    deadline,
                    jobs,
                    reply,
                }) => (
                    Wire::Fetch {
                        unit,
                        deadline_ms: deadline
                            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
                    },
                    Some(reply),
                    jobs,
                ),
                Ok(Order::Stop) | Err(_) => (Wire::Stop, None, Vec::new()),
            },
            None => (Wire::Idle, None, Vec::new()),
        };
        let wire = ex.all_gather(wire)?.swap_remove(0);
        let Wire::Fetch { unit, deadline_ms } = wire else {
            // Every worker's bytes sent, summed at the leader (one last exchange, every worker
            // takes part).
            let sent = ex.gather_to_leader(vec![ex.bytes_sent()])?;
            if let Some(leader) = &leader {
                leader
                    .traffic
                    .bytes
                    .store(sent.iter().sum(), Ordering::Release);
            }
            return Ok(());
        };
        if let Some(leader) = &leader {
            leader.traffic.batches.fetch_add(1, Ordering::AcqRel);
        }
        // Step 2: each worker receives the jobs of its hosts only, and fetches them.
        let mut per_worker = vec![Vec::new(); if reply.is_some() { workers } else { 0 }];
        for job in jobs {
            per_worker[shard_of_host(&job.host(), workers)].push(job);
        }
        let own: Vec<WireJob> = ex.scatter_from_leader(per_worker)?;
        let batch = client.run(unit, deadline_ms.map(Duration::from_millis), own);
        // Step 3: every answer to the leader, in job order there.
        let all = ex.gather_to_leader(vec![batch])?;
        if let Some(reply) = reply {
            let _ = reply.send(WireBatch::merge(all));
        }
    }
}
