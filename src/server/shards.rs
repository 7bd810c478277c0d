//! The served index split over the mesh's workers (`serve --workers N`, `--processes N`):
//! scatter each query to every shard, gather and merge.
//!
//! Each worker of the mesh owns one shard — the pages of the hosts [`Partition::by_host`]
//! gives it, in its own in-memory repository — and the protocol of [`crate::index::shards`]
//! makes the shards score as one repository. The leader (worker 0, in process 0) serves HTTP;
//! the others only answer it. Every worker runs `shard_worker`, a loop of rounds, each round
//! one exchange of the same shape on every worker (timely matches exchanges by order):
//!
//! 1. the leader takes the next `Order` from the HTTP side and every worker learns it
//!    (all-gather of the leader's order; the others send `Wire::Idle`);
//! 2. every shard computes its part under the global statistics and sends it to the leader;
//! 3. the leader merges the parts in rank order and answers the HTTP side.
//!
//! Orders are taken one at a time: searches over shards are serialised through the leader
//! (each is a few milliseconds of scoring per shard plus two exchanges). `Wire::Stop` ends
//! every worker's loop; a process that loses a peer exits naming it ([`crate::mesh`]).
//!
//! The served engine (`serve --policy`) refreshes the shards with one more order, `Apply`: every
//! worker learns the unit (and the terms a crawl added to the vocabulary, in id order), each
//! shard receives the refreshed copies of its own pages only and applies them, and the shards
//! publish and sum their statistics again before the next search, so a search after the unit
//! scores as one repository refreshed with the same copies would.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};

use crate::corpus::{Corpus, PageId, PageVersion, Unit};
use crate::index::search::ShardResults;
use crate::index::served::{open_or_build_part, ShardPart};
use crate::index::shards::{
    merge_hits, merge_ranked, GlobalStatistics, Partition, ShardStatistics,
};
use crate::index::snapshot::shard_at;
use crate::index::{IndexError, PageUpdate, Repository, Score, ScoringKind, SearchResults};
use crate::mesh::{ExchangeError, Exchanger, Greeting, MeshConfig, MeshError, RemoteFailure};
use crate::text::{TermId, Vocabulary};

/// Why the sharded index could not start or answer.
#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    #[error("building shard {shard}: {source}")]
    Build {
        shard: usize,
        #[source]
        source: IndexError,
    },
    /// A shard could not be built or could not answer.
    #[error("shard on {0}")]
    Remote(#[from] RemoteFailure),
    #[error(transparent)]
    Exchange(#[from] ExchangeError),
    #[error(transparent)]
    Mesh(#[from] MeshError),
    #[error("the sharded index stopped")]
    Stopped,
}

/// What the leader asks of the shards, with where to send the answer.
enum Order {
    Search {
        terms: Vec<TermId>,
        offset: usize,
        limit: usize,
        reply: mpsc::Sender<Result<SearchResults, RemoteFailure>>,
    },
    Rank {
        queries: Vec<Vec<TermId>>,
        reply: mpsc::Sender<Vec<Vec<PageId>>>,
    },
    Apply {
        batch: ShardBatch,
        reply: mpsc::Sender<Result<(), RemoteFailure>>,
    },
}

/// One unit of the served engine, as every shard learns it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct ShardBatch {
    unit: Unit,
    /// Terms the vocabulary gained since the last batch (a crawl's new words), in id order,
    /// and the vocabulary's length before them: every shard interns them in this order, so
    /// their ids equal the engine's.
    vocabulary_len: usize,
    new_terms: Vec<String>,
    /// The unit's refreshed pages: the copy now held (`None`: none). Empty in the order every
    /// worker learns; each shard then receives its own pages' ([`Exchanger::scatter_from_leader`]).
    updates: Vec<(PageId, String, Option<PageVersion>)>,
}

/// An order as every worker learns it (step 1).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
enum Wire {
    /// A search: each shard's first `depth` hits.
    Search {
        terms: Vec<TermId>,
        depth: usize,
    },
    /// Each query's full result list, for the serving quality.
    Rank {
        queries: Vec<Vec<TermId>>,
    },
    /// The served engine's unit: each shard applies its own pages' copies.
    Apply(ShardBatch),
    Stop,
    /// What a worker other than the leader contributes to step 1.
    Idle,
}

/// A shard's part of an answer (step 2).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
enum Part {
    Search(Result<ShardResults, RemoteFailure>),
    Rank(Vec<Vec<(Score, u64, PageId)>>),
    Applied(Result<(), RemoteFailure>),
}

/// What the shards report once built and agreed on the statistics.
#[derive(Debug, Clone, PartialEq)]
pub struct ShardLayout {
    /// Documents of the whole collection (all shards).
    pub(crate) num_docs: u64,
    /// Pages owned by each shard, in worker order.
    pub pages_per_shard: Vec<usize>,
    /// The largest shard over the mean shard ([`Partition::skew`]).
    pub skew: f64,
    /// Bytes the leader sent to publish its statistics (each shard sends about as many).
    pub statistics_bytes: u64,
}

/// The leader process's handle on the sharded index: searches go to the mesh's leader worker.
pub struct ShardedIndex {
    orders: Mutex<Option<mpsc::Sender<Order>>>,
    mesh: Mutex<Option<std::thread::JoinHandle<Result<(), ShardError>>>>,
    pub layout: ShardLayout,
    /// The vocabulary every shard holds: the corpus's, grown by the terms of each applied
    /// batch. Searches map their words to ids with it.
    vocabulary: Mutex<Arc<Vocabulary>>,
}

impl ShardedIndex {
    /// Starts the mesh (`config`, agreeing on `greeting`) with every worker building its shard
    /// of `corpus` at `unit`; returns once every shard is built and the statistics are summed.
    /// Only for the process holding the leader (process 0); the others run [`serve_shards`].
    pub fn start(
        corpus: &'static Corpus,
        setup: ShardSetup,
        config: MeshConfig,
        greeting: Greeting,
    ) -> Result<Self, ShardError> {
        let (orders, inbox) = mpsc::channel();
        let (ready, layout) = mpsc::channel();
        let mesh = std::thread::Builder::new()
            .name("refresher:shards".into())
            .spawn(move || {
                let inbox = Mutex::new(Some(inbox));
                let ready = Mutex::new(Some(ready));
                let results = crate::mesh::run(&config, &greeting, |ex| {
                    let leader = ex.is_leader().then(|| Leader {
                        inbox: inbox
                            .lock()
                            .expect("shard inbox")
                            .take()
                            .expect("one leader"),
                        ready: ready
                            .lock()
                            .expect("shard ready")
                            .take()
                            .expect("one leader"),
                    });
                    shard_worker(ex, build_shard(ex, corpus, &setup), leader)
                })?;
                results
                    .into_iter()
                    .collect::<Result<Vec<()>, ShardError>>()?;
                Ok(())
            })
            .expect("spawning the shards' thread");
        match layout.recv() {
            Ok(layout) => Ok(ShardedIndex {
                orders: Mutex::new(Some(orders)),
                mesh: Mutex::new(Some(mesh)),
                layout,
                vocabulary: Mutex::new(Arc::clone(&corpus.vocabulary)),
            }),
            // The mesh ended before the shards were ready: its error says why.
            Err(_) => Err(mesh
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p))
                .err()
                .unwrap_or(ShardError::Stopped)),
        }
    }

    fn send(&self, order: Order) -> Result<(), ShardError> {
        self.orders
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .ok_or(ShardError::Stopped)?
            .send(order)
            .map_err(|_| ShardError::Stopped)
    }

    /// The hits `offset..offset + limit` of the conjunctive query `terms` over every shard:
    /// the same hits, scores and order as one repository of every page.
    pub fn search(
        &self,
        terms: &[TermId],
        offset: usize,
        limit: usize,
    ) -> Result<SearchResults, ShardError> {
        let (reply, answer) = mpsc::channel();
        self.send(Order::Search {
            terms: terms.to_vec(),
            offset,
            limit,
            reply,
        })?;
        answer
            .recv()
            .map_err(|_| ShardError::Stopped)?
            .map_err(ShardError::Remote)
    }

    /// The ids of `terms` in the vocabulary the shards hold (`None` when one is unknown: no
    /// page has it).
    pub fn term_ids(&self, terms: &[String]) -> Option<Vec<TermId>> {
        self.vocabulary
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .ids_of(terms)
    }

    /// Applies one unit of the served engine: each shard takes the copies of its own pages
    /// (`updates`, as [`Repository::apply_unmeasured`] takes them), and the statistics are
    /// summed again. `vocabulary`, when the engine's grew (a crawl), must extend the one the
    /// shards hold; its new terms are sent along. Returns once every shard has applied.
    pub fn apply(
        &self,
        unit: Unit,
        updates: &[PageUpdate<'_>],
        vocabulary: Option<&Arc<Vocabulary>>,
    ) -> Result<(), ShardError> {
        let mut held = self.vocabulary.lock().unwrap_or_else(|e| e.into_inner());
        let vocabulary_len = held.len();
        let new_terms = match vocabulary {
            Some(grown) if grown.len() > vocabulary_len => (vocabulary_len..grown.len())
                .map(|id| grown.term(id as TermId).to_string())
                .collect(),
            _ => Vec::new(),
        };
        let batch = ShardBatch {
            unit,
            vocabulary_len,
            new_terms,
            updates: updates
                .iter()
                .map(|u| (u.page, u.url.to_string(), u.version.cloned()))
                .collect(),
        };
        let (reply, answer) = mpsc::channel();
        self.send(Order::Apply { batch, reply })?;
        answer
            .recv()
            .map_err(|_| ShardError::Stopped)?
            .map_err(ShardError::Remote)?;
        if let Some(grown) = vocabulary.filter(|v| v.len() > vocabulary_len) {
            *held = Arc::clone(grown);
        }
        Ok(())
    }

    /// Each query's full result list over every shard, in rank order.
    pub fn rank(&self, queries: Vec<Vec<TermId>>) -> Result<Vec<Vec<PageId>>, ShardError> {
        let (reply, answer) = mpsc::channel();
        self.send(Order::Rank { queries, reply })?;
        answer.recv().map_err(|_| ShardError::Stopped)
    }

    /// Ends every worker's loop (the other processes then exit) and waits for the mesh.
    pub fn stop(&self) -> Result<(), ShardError> {
        self.orders.lock().unwrap_or_else(|e| e.into_inner()).take();
        match self.mesh.lock().unwrap_or_else(|e| e.into_inner()).take() {
            Some(mesh) => mesh.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
            None => Ok(()),
        }
    }
}

/// For a process other than the leader's: runs this process's shards until the leader stops
/// them (or a peer is lost).
pub fn serve_shards(
    corpus: Corpus,
    setup: &ShardSetup,
    config: &MeshConfig,
    greeting: &Greeting,
) -> Result<(), ShardError> {
    // Held until every shard of this process is built, then freed: the shards answer from
    // their own copies, so a process other than the leader's keeps only its shards.
    let held = Mutex::new(Some(Arc::new(corpus)));
    let building = AtomicUsize::new(config.workers);
    let results = crate::mesh::run(config, greeting, |ex| {
        let built = {
            let corpus = held
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone()
                .expect("the corpus is held until every shard is built");
            let built = build_shard(ex, &corpus, setup);
            if building.fetch_sub(1, Ordering::AcqRel) == 1 {
                held.lock().unwrap_or_else(|e| e.into_inner()).take();
            }
            built
        };
        shard_worker(ex, built, None)
    })?;
    results
        .into_iter()
        .collect::<Result<Vec<()>, ShardError>>()?;
    Ok(())
}

/// What every shard is built from besides the corpus.
#[derive(Debug, Clone)]
pub struct ShardSetup {
    /// The unit whose copies are served.
    pub unit: Unit,
    pub scoring: ScoringKind,
    /// Keep each shard's index on disk under this directory (`shard-K-of-N`, each with its
    /// manifest; see [`crate::index::served`]): reopened when it matches, built otherwise.
    pub index_dir: Option<PathBuf>,
    /// Replace a shard directory that holds something else instead of refusing it.
    pub rebuild: bool,
}

/// This worker's shard of `corpus`, with the partition it was cut by.
fn build_shard(
    ex: &Exchanger,
    corpus: &Corpus,
    setup: &ShardSetup,
) -> Result<(Repository, Partition), ShardError> {
    let (shard, shards) = (ex.index(), ex.peers());
    let partition = Partition::by_host(corpus, shards);
    let keep = |p: PageId| partition.shard_of(p) == shard;
    let repo = match &setup.index_dir {
        Some(dir) => open_or_build_part(
            &dir.join(format!("shard-{shard}-of-{shards}")),
            corpus,
            setup.unit,
            setup.scoring,
            setup.rebuild,
            Some(ShardPart {
                label: format!("{shard} of {shards} by host"),
                keep: &keep,
            }),
        )
        .map(|(repo, _)| repo),
        None => shard_at(corpus, setup.unit, setup.scoring, None, keep),
    }
    .map_err(|source| ShardError::Build { shard, source })?;
    Ok((repo, partition))
}

/// The leader worker's ends of the channels to the HTTP side.
struct Leader {
    inbox: mpsc::Receiver<Order>,
    ready: mpsc::Sender<ShardLayout>,
}

/// One worker's shard and its loop of rounds (see the module docs).
fn shard_worker(
    ex: &Exchanger,
    built: Result<(Repository, Partition), ShardError>,
    leader: Option<Leader>,
) -> Result<(), ShardError> {
    let shard = ex.index();
    let before = ex.bytes_sent();
    // A shard that failed to build still takes part in this exchange (the others would wait
    // for it forever), and every worker then stops with the first failure.
    let published = match &built {
        Ok((repo, _)) => Ok(ShardStatistics::of(repo.forward())),
        Err(e) => Err(RemoteFailure::on(shard, e)),
    };
    let parts = ex
        .all_gather(published)?
        .into_iter()
        .collect::<Result<Vec<_>, RemoteFailure>>()
        .map_err(ShardError::Remote)?;
    let (mut repo, partition) = built?;
    let mut global = GlobalStatistics::sum(&parts);
    if let Some(leader) = &leader {
        let _ = leader.ready.send(ShardLayout {
            num_docs: crate::index::CollectionStats::num_docs(&global),
            pages_per_shard: partition.pages_per_shard(),
            skew: partition.skew(),
            statistics_bytes: ex.bytes_sent() - before,
        });
    }
    loop {
        // Step 1: the leader's next order (Stop once the HTTP side has hung up).
        let (wire, mut order) = match &leader {
            Some(l) => match l.inbox.recv() {
                Ok(order) => (order.wire(), Some(order)),
                Err(_) => (Wire::Stop, None),
            },
            None => (Wire::Idle, None),
        };
        let wire = ex.all_gather(wire)?.swap_remove(0);
        // Step 2: this shard's part, to the leader.
        let part = match wire {
            Wire::Stop => return Ok(()),
            Wire::Idle => unreachable!("the leader always sends an order"),
            Wire::Search { terms, depth } => Part::Search(
                repo.search_terms_under(&global, &terms, depth)
                    .map_err(|e| RemoteFailure::on(shard, &e)),
            ),
            Wire::Rank { queries } => Part::Rank(
                queries
                    .iter()
                    .map(|q| repo.forward().ranked_under(&global, repo.scorer(), q))
                    .collect(),
            ),
            Wire::Apply(header) => {
                apply_unit(ex, (&mut repo, &partition), &mut global, header, &mut order)?
            }
        };
        let parts = ex.gather_to_leader(vec![part])?;
        // Step 3: the leader merges and answers.
        match order {
            Some(Order::Search {
                offset,
                limit,
                reply,
                ..
            }) => {
                let merged = parts
                    .into_iter()
                    .enumerate()
                    .map(|(from, p)| match p {
                        Part::Search(r) => r,
                        _ => Err(RemoteFailure::on(from, &"answered another order")),
                    })
                    .collect::<Result<Vec<_>, RemoteFailure>>()
                    .map(|parts| merge_hits(parts, offset, limit));
                let _ = reply.send(merged);
            }
            Some(Order::Rank { queries, reply }) => {
                let mut per_shard: Vec<std::vec::IntoIter<Vec<(Score, u64, PageId)>>> = parts
                    .into_iter()
                    .map(|p| match p {
                        Part::Rank(lists) => lists.into_iter(),
                        _ => Vec::new().into_iter(),
                    })
                    .collect();
                let rankings = (0..queries.len())
                    .map(|_| {
                        merge_ranked(
                            per_shard
                                .iter_mut()
                                .map(|lists| lists.next().unwrap_or_default())
                                .collect(),
                        )
                        .into_iter()
                        .map(|r| r.page)
                        .collect()
                    })
                    .collect();
                let _ = reply.send(rankings);
            }
            Some(Order::Apply { reply, .. }) => {
                let applied = parts
                    .into_iter()
                    .enumerate()
                    .map(|(from, p)| match p {
                        Part::Applied(r) => r,
                        _ => Err(RemoteFailure::on(from, &"answered another order")),
                    })
                    .collect::<Result<Vec<()>, RemoteFailure>>()
                    .map(|_| ());
                let _ = reply.send(applied);
            }
            None => {}
        }
    }
}

impl Order {
    fn wire(&self) -> Wire {
        match self {
            Order::Search {
                terms,
                offset,
                limit,
                ..
            } => Wire::Search {
                terms: terms.clone(),
                depth: offset.saturating_add(*limit),
            },
            Order::Rank { queries, .. } => Wire::Rank {
                queries: queries.clone(),
            },
            // The copies follow, each shard's to it alone (step 2).
            Order::Apply { batch, .. } => Wire::Apply(ShardBatch {
                unit: batch.unit,
                vocabulary_len: batch.vocabulary_len,
                new_terms: batch.new_terms.clone(),
                updates: Vec::new(),
            }),
        }
    }
}

/// Step 2 of an `Apply`: this shard's copies, scattered from the leader's `order`, applied,
/// and the statistics summed again into `global`. Every shard takes part in the sum, a failed
/// one too (with its failure), so all stay in step and all keep the old sum when one failed.
fn apply_unit(
    ex: &Exchanger,
    (repo, partition): (&mut Repository, &Partition),
    global: &mut GlobalStatistics,
    header: ShardBatch,
    order: &mut Option<Order>,
) -> Result<Part, ShardError> {
    let shard = ex.index();
    // Each shard receives its own pages' copies only.
    let scattered = match order {
        Some(Order::Apply { batch, .. }) => {
            let mut per_shard = vec![Vec::new(); ex.peers()];
            for update in std::mem::take(&mut batch.updates) {
                per_shard[partition.shard_of(update.0)].push(update);
            }
            per_shard
        }
        _ => Vec::new(),
    };
    let batch = ShardBatch {
        updates: ex.scatter_from_leader(scattered)?,
        ..header
    };
    let applied = apply_own(repo, shard, &batch).map(|()| ShardStatistics::of(repo.forward()));
    Ok(
        match ex
            .all_gather(applied)?
            .into_iter()
            .collect::<Result<Vec<_>, RemoteFailure>>()
        {
            Ok(parts) => {
                *global = GlobalStatistics::sum(&parts);
                Part::Applied(Ok(()))
            }
            Err(e) => Part::Applied(Err(e)),
        },
    )
}

/// Applies the copies of `batch` (this shard's own, as scattered to it), after growing its
/// vocabulary by the batch's new terms.
fn apply_own(repo: &mut Repository, shard: usize, batch: &ShardBatch) -> Result<(), RemoteFailure> {
    if !batch.new_terms.is_empty() {
        if repo.vocabulary().len() != batch.vocabulary_len {
            return Err(RemoteFailure::on(
                shard,
                &format!(
                    "vocabulary out of step: {} terms held, the engine's batch extends {}",
                    repo.vocabulary().len(),
                    batch.vocabulary_len
                ),
            ));
        }
        let mut grown = repo.vocabulary().clone();
        for term in &batch.new_terms {
            grown.intern(term);
        }
        repo.set_vocabulary(Arc::new(grown));
    }
    let own: Vec<PageUpdate<'_>> = batch
        .updates
        .iter()
        .map(|(page, url, version)| PageUpdate {
            page: *page,
            url,
            version: version.as_ref(),
        })
        .collect();
    repo.apply_unmeasured(batch.unit, &own)
        .map(|_| ())
        .map_err(|e| RemoteFailure::on(shard, &e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::LiveWeb;
    use crate::index::testutil::random_corpus_on_hosts;
    use crate::text::TermCounts;

    /// Shards refreshed with a unit's copies, one of them carrying a word the corpus never had
    /// (a crawl's), answer every search as one repository refreshed with the same copies.
    #[test]
    fn refreshed_shards_with_new_terms_answer_as_one_refreshed_repository() {
        let corpus: &'static Corpus = Box::leak(Box::new(random_corpus_on_hosts(60, 4, 3, 7)));
        let scoring = ScoringKind::Bm25;
        let shards = ShardedIndex::start(
            corpus,
            ShardSetup {
                unit: 0,
                scoring,
                index_dir: None,
                rebuild: false,
            },
            MeshConfig {
                workers: 3,
                ..MeshConfig::single()
            },
            Greeting {
                process: 0,
                version: "test".into(),
                configuration: "c".into(),
                corpus: "x".into(),
            },
        )
        .unwrap();
        let mut one = shard_at(corpus, 0, scoring, None, |_| true).unwrap();
        let mut grown = (*corpus.vocabulary).clone();
        let word = crate::text::Analyzer::new().distinct_terms("zyzzyva");
        let novel = grown.intern(&word[0]);
        let grown = Arc::new(grown);
        // Unit 3's copies of pages 0..20, the novel word added to every third one, and page 20
        // no longer held.
        let held: Vec<(PageId, Option<PageVersion>)> = (0..21)
            .map(|p| {
                let version = (p < 20)
                    .then(|| corpus.page_at(p, 3).present().cloned())
                    .flatten()
                    .map(|mut v| {
                        if p % 3 == 0 {
                            let mut terms = TermCounts::clone(&v.terms);
                            terms.counts.push((novel, 2));
                            v.terms = Arc::new(terms);
                            // Another body (tantivy matches the text; a copy equal to the held
                            // one is not re-indexed).
                            v.text.push_str(" zyzzyva zyzzyva");
                            v.content_hash ^= 1;
                        }
                        v
                    });
                (p, version)
            })
            .collect();
        let updates: Vec<PageUpdate<'_>> = held
            .iter()
            .map(|(p, v)| PageUpdate {
                page: *p,
                url: corpus.url(*p),
                version: v.as_ref(),
            })
            .collect();
        let searches: Vec<Vec<String>> = ["zyzzyva", "emacs", "buffer window", "lisp"]
            .iter()
            .map(|q| crate::text::Analyzer::new().distinct_terms(q))
            .collect();
        let answers = |one: &Repository, shards: &ShardedIndex| {
            for terms in &searches {
                let expected = one.search_analyzed(terms, 0, 100).unwrap();
                let got = match shards.term_ids(terms) {
                    Some(ids) => shards.search(&ids, 0, 100).unwrap(),
                    None => SearchResults {
                        total_hits: 0,
                        hits: Vec::new(),
                    },
                };
                assert_eq!(got, expected, "{terms:?}");
            }
        };
        answers(&one, &shards);
        assert_eq!(shards.term_ids(&searches[0]), None);
        one.set_vocabulary(Arc::clone(&grown));
        one.apply_unmeasured(3, &updates).unwrap();
        shards.apply(3, &updates, Some(&grown)).unwrap();
        let found = one.search_analyzed(&searches[0], 0, 100).unwrap();
        assert_eq!(
            found.total_hits,
            held.iter()
                .filter(|(p, v)| p % 3 == 0 && v.is_some())
                .count()
        );
        assert!(found.total_hits > 0);
        answers(&one, &shards);
        // A second unit without new words keeps the vocabulary and the answers in step.
        let later: Vec<PageUpdate<'_>> = (30..40)
            .map(|p| PageUpdate {
                page: p,
                url: corpus.url(p),
                version: corpus.page_at(p, 3).present(),
            })
            .collect();
        one.apply_unmeasured(3, &later).unwrap();
        shards.apply(3, &later, Some(&grown)).unwrap();
        answers(&one, &shards);
        shards.stop().unwrap();
    }
}
