//! [`HttpFetcher`]: the [`Fetcher`] of a real crawl, over HTTP(S).
//!
//! One request in flight per host at a time, at least [`HttpOptions::min_host_delay`] (or the
//! host's robots.txt `Crawl-delay`, when longer) between two requests to a host; hosts are
//! fetched concurrently. Each fetch: robots.txt check, conditional GET with the held copy's
//! validators (`If-None-Match` with its content hash, `If-Modified-Since` with its capture
//! time), bounded redirects, a timeout, a body limit, gzip/deflate/br decoding (reqwest), an
//! HTML content-type filter, retries with exponential backoff on connection errors, timeouts,
//! 429 and 5xx (never sooner than `Retry-After` asks, never past the unit's deadline), each
//! attempt's fault counted per host ([`FaultCounts`]: 5xx, 429, connection errors, timeouts,
//! stalled bodies, redirect loops, malformed sitemaps and feeds). 404 and 410 mean gone; a 304, or a 200 whose body hashes to the held copy,
//! means not modified. A batch ends at the unit's deadline with what it fetched: requests not
//! done by then fail (counted, never a stalled unit).
//!
//! Every exchange is written to the crawl's WARC output ([`warc_out`]). Page bodies are read
//! exactly as ingest reads WARC responses ([`page_version_from_html`]).
//!
//! Discovery ([`Discovery`]): a sitemap re-read at every unit (its newly listed URLs are the
//! unit's new pages, as the simulator's model of page creation), or the out-links of fetched
//! pages within the crawled hosts (a frontier), or none.
//!
//! Change signals ([`HttpOptions::read_signals`], `signals.rs`): every unit, before the policy
//! chooses, the sitemaps' `<lastmod>` dates and the feeds (Atom, RSS 2.0 and 1.0: `feed.rs`)
//! are re-read by conditional GETs, outside the budget and counted apart ([`SignalCounts`]);
//! the copies they are conditional on are journaled, so a resumed crawl's first unit sends
//! them too, as are the sitemaps and feeds robots.txt names, so it reads those too.
//!
//! # Layers
//!
//! A fetch batch goes down a stack of transports, each one concern, and comes back up as raw
//! answers (the outcome and every request/response pair of each job, before parsing), handed
//! to each layer in job order:
//!
//! | layer (outermost first) | file | concern |
//! |---|---|---|
//! | `Observing` | `observe.rs` | counts every answer into the [`FetchMonitor`] (totals, per host) |
//! | `Unchanged` | `transport.rs` | a 200 whose body hashes to the held copy becomes a 304 |
//! | `Warcing` | `warc_out.rs` | writes every exchange to the WARC output, flushes it |
//! | `Replaying` | `replay.rs` | a replayed unit answers from the [`journal`]; a live one is recorded |
//! | `HttpClient` | `client.rs` | the HTTP transport: robots.txt, politeness, retries, deadline |
//! | or a `JobRunner` | `remote.rs` | the page fetches done by the workers owning their hosts |
//!
//! On top, [`HttpFetcher`] turns jobs into requests and answers into [`FetchResult`]s: it
//! reads each new body (growing its vocabulary) and queues its links for discovery
//! (`discovery.rs`, journaled too), and reads the change signals (`signals.rs`, journaled
//! too). The per-host table the client and the counters share is
//! `hosts.rs`; the settings are `options.rs`.

mod client;
mod discovery;
pub mod feed;
mod hosts;
pub mod journal;
mod observe;
mod options;
mod remote;
mod replay;
mod signals;
pub mod sitemap;
mod transport;
pub mod warc_out;

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use super::{FetchError, FetchRequest, FetchResult, Fetched, Fetcher, UrlCatalogue};
use crate::corpus::html::{normalise_url, page_version_from_html};
use crate::corpus::{PageId, Unit};
use crate::text::{Analyzer, Vocabulary};
use client::{unix_now, HttpClient};
use journal::Journal;
use observe::Observing;
use replay::Replaying;
use transport::{Job, Outcome, Transport, Unchanged};
use warc_out::{WarcOut, Warcing};

pub use hosts::{host_of, FaultCounts, FetchCounts, HostFaults, HostReport};
pub use observe::FetchMonitor;
pub use options::{Discovery, FetcherError, HttpOptions};
pub use remote::{HostClient, JobRunner, WireBatch, WireJob};
pub use signals::{SignalCounts, SignalRead};

/// The transport stack under an [`HttpFetcher`] (see the module docs).
type Layers = Observing<Unchanged<Warcing<Replaying<remote::Bottom>>>>;

/// The HTTP fetcher (see the module docs).
pub struct HttpFetcher {
    transport: Layers,
    catalogue: UrlCatalogue,
    vocabulary: Arc<Vocabulary>,
    analyzer: Analyzer,
    /// Hosts links may lead to (the initial URLs' hosts).
    scope: HashSet<String>,
    /// Link URLs met but not crawled yet, oldest first.
    frontier: BTreeMap<u64, String>,
    frontier_set: HashSet<String>,
    frontier_next: u64,
    /// The URLs the sitemaps listed at the last reading.
    listed: HashSet<PageId>,
    /// What the change-signal readings keep between units (`signals.rs`).
    signal_reader: signals::SignalReader,
    /// The faults the sitemap and feed requests of the reading in progress met, per host
    /// (journaled with the reading).
    document_faults: HostFaults,
    monitor: FetchMonitor,
    /// Who fetches the pages when not this fetcher's own client ([`Self::set_job_runner`]).
    runner: remote::RunnerSlot,
}

impl HttpFetcher {
    /// A fetcher whose analyzed terms extend `vocabulary`; `warc` receives every exchange.
    pub fn new(
        options: HttpOptions,
        vocabulary: Arc<Vocabulary>,
        warc: Option<WarcOut>,
    ) -> Result<Self, FetcherError> {
        let monitor = FetchMonitor::default();
        let client = HttpClient::new(
            options,
            Arc::clone(&monitor.hosts),
            Arc::clone(&monitor.deadline),
        )?;
        let runner = remote::RunnerSlot::default();
        let bottom = remote::Bottom {
            client,
            runner: Arc::clone(&runner),
            deadline: Arc::clone(&monitor.deadline),
        };
        let transport = Observing::new(
            monitor.clone(),
            Unchanged::new(Warcing::new(
                warc,
                Replaying::new(monitor.replay.clone(), bottom),
            )),
        );
        Ok(HttpFetcher {
            transport,
            catalogue: UrlCatalogue::default(),
            vocabulary,
            analyzer: Analyzer::new(),
            scope: HashSet::new(),
            frontier: BTreeMap::new(),
            frontier_set: HashSet::new(),
            frontier_next: 0,
            listed: HashSet::new(),
            signal_reader: signals::SignalReader::default(),
            document_faults: HostFaults::new(),
            monitor,
            runner,
        })
    }

    /// Hands the page fetches of every live unit to `runner` (the workers that own the pages'
    /// hosts, [`JobRunner`]); sitemaps and feeds are still read by this fetcher's client.
    pub fn set_job_runner(&mut self, runner: Box<dyn JobRunner>) {
        *self.runner.lock().expect("job runner lock") = Some(runner);
    }

    /// The handle on this fetcher's counts and deadline.
    pub fn monitor(&self) -> FetchMonitor {
        self.monitor.clone()
    }

    /// Keeps the journal in `dir`; with `replay_through`, first replays the committed units
    /// `0..=U` from it (see [`journal`]), and re-reads the sitemaps and feeds by conditional
    /// GETs against the copies unit `U` kept, robots.txt's among them as unit `U` knew them.
    pub fn set_journal(
        &mut self,
        dir: &std::path::Path,
        replay_through: Option<Unit>,
    ) -> std::io::Result<()> {
        let mut journal = Journal::new(Some(dir));
        if let Some(last) = replay_through {
            journal.load(last)?;
            self.signal_reader.keep_documents(journal.take_documents());
            self.signal_reader
                .keep_robots_sitemaps(journal.take_robots_sitemaps());
        }
        self.monitor.replay.set_journal(journal);
        Ok(())
    }

    /// Interns URLs (normalised) and returns their page ids, in order; the hosts of these URLs
    /// are the crawl's scope for link discovery.
    pub fn add_urls<'a>(&mut self, urls: impl IntoIterator<Item = &'a str>) -> Vec<PageId> {
        let mut ids = Vec::new();
        for u in urls {
            let n = normalise_url(u);
            if let Some(h) = host_of(&n) {
                self.scope.insert(h);
            }
            if let Some(id) = self.catalogue.intern(&n) {
                ids.push(id);
            }
        }
        ids
    }

    pub fn catalogue(&self) -> &UrlCatalogue {
        &self.catalogue
    }

    /// Flushes the WARC output (at each unit's commit).
    pub fn flush(&mut self) -> std::io::Result<()> {
        self.transport.inner_mut().inner_mut().flush()
    }

    /// The HTTP client at the bottom of the stack.
    fn client(&self) -> &HttpClient {
        &self.transport.inner().inner().inner().inner().client
    }

    fn options(&self) -> &HttpOptions {
        self.client().options()
    }

    /// What an answer's outcome tells the refresh loop. A body is read as ingest reads a WARC
    /// response, growing the vocabulary; its links join `links` when discovery follows links.
    fn result_of(
        &mut self,
        unit: Unit,
        page: PageId,
        url: &str,
        outcome: Outcome,
        links: &mut Vec<String>,
    ) -> FetchResult {
        match outcome {
            Outcome::Body {
                body,
                last_modified,
                media_type,
            } => {
                let follow_links = self.options().discovery == Discovery::Links;
                let catalogue = &self.catalogue;
                let vocabulary = Arc::make_mut(&mut self.vocabulary);
                let (version, found) = page_version_from_html(
                    &mut self.analyzer,
                    vocabulary,
                    url,
                    page,
                    (unit, last_modified.unwrap_or_else(unix_now)),
                    &body,
                    media_type.as_deref(),
                    &|u| catalogue.id(u),
                );
                if follow_links {
                    links.extend(found);
                }
                FetchResult::Copy(Arc::new(version))
            }
            Outcome::NotModified => FetchResult::NotModified,
            Outcome::Gone => FetchResult::Gone,
            Outcome::Disallowed => FetchResult::Failed(FetchError::Disallowed),
            Outcome::Failed(e) => FetchResult::Failed(e),
        }
    }
}

impl Fetcher for HttpFetcher {
    fn page_count(&self) -> usize {
        self.catalogue.len()
    }

    fn url(&self, page: PageId) -> &str {
        self.catalogue.url(page).unwrap_or("")
    }

    /// Down the stack and back (see the module docs); a request without an answer was not
    /// done by the unit's deadline.
    fn fetch(&mut self, unit: Unit, requests: &[FetchRequest]) -> Vec<Fetched> {
        let jobs: Vec<Job> = requests
            .iter()
            .enumerate()
            .map(|(index, r)| Job {
                index,
                url: self.url(r.page).to_string(),
                validator: r.validator,
            })
            .collect();
        let answers = self.transport.run(unit, &jobs);
        self.note_robots_sitemaps();
        let mut results: Vec<Option<FetchResult>> = vec![None; requests.len()];
        let mut links = Vec::new();
        for answer in answers {
            let index = answer.index;
            let result = self.result_of(
                unit,
                requests[index].page,
                &jobs[index].url,
                answer.outcome,
                &mut links,
            );
            results[index] = Some(result);
        }
        self.enqueue_links(links);
        results
            .into_iter()
            .zip(requests)
            .map(|(r, req)| Fetched {
                page: req.page,
                result: r.unwrap_or(FetchResult::Failed(FetchError::Deadline)),
            })
            .collect()
    }

    fn discover(&mut self, unit: Unit, known: &dyn Fn(PageId) -> bool) -> Vec<PageId> {
        self.discover_journaled(unit, known)
    }

    fn vocabulary(&self) -> Option<&Arc<Vocabulary>> {
        Some(&self.vocabulary)
    }

    /// With [`HttpOptions::read_signals`]: the sitemaps' dates and the feeds' entries new
    /// since the previous unit (`signals.rs`).
    fn signals(&mut self, unit: Unit) -> Option<crate::signal::SignalReading> {
        if !self.options().read_signals {
            return None;
        }
        Some(self.read_signals_journaled(unit))
    }
}

/// Serves `app` on a free loopback port from a runtime of its own (kept alive by the caller):
/// the test servers of this module's tests.
#[cfg(test)]
fn serve_on_loopback(app: axum::Router) -> (std::net::SocketAddr, tokio::runtime::Runtime) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let addr = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        addr
    });
    (addr, runtime)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::net::SocketAddr;
    use std::time::{Duration, Instant};

    use axum::body::Body;
    use axum::http::{header, StatusCode};
    use axum::response::{IntoResponse, Response};
    use axum::routing::get;
    use axum::Router;

    /// A hostile site on loopback: endless and over-long bodies, invalid UTF-8, broken gzip,
    /// a redirect loop, a 500 storm, a page slower than the timeout; robots.txt disallows
    /// `/private` and asks for no delay.
    fn hostile() -> (SocketAddr, tokio::runtime::Runtime) {
        async fn endless() -> Response {
            let chunks = futures_util::stream::repeat_with(|| {
                Ok::<_, std::io::Error>(bytes::Bytes::from(vec![b'a'; 64 << 10]))
            });
            (
                [(header::CONTENT_TYPE, "text/html")],
                Body::from_stream(chunks),
            )
                .into_response()
        }
        let app = Router::new()
            .route(
                "/robots.txt",
                get(|| async { "User-agent: *\nDisallow: /private\n" }),
            )
            .route(
                "/ok",
                get(|| async {
                    (
                        [(header::CONTENT_TYPE, "text/html")],
                        "<title>fine</title><p>hello world</p>",
                    )
                }),
            )
            .route("/private", get(|| async { "secret" }))
            .route("/endless", get(endless))
            .route(
                "/latin1",
                get(|| async {
                    (
                        [(header::CONTENT_TYPE, "text/html")],
                        b"<p>caf\xe9 cr\xe8me</p>".to_vec(),
                    )
                }),
            )
            .route(
                "/badgzip",
                get(|| async {
                    (
                        [
                            (header::CONTENT_TYPE, "text/html"),
                            (header::CONTENT_ENCODING, "gzip"),
                        ],
                        b"\x1f\x8b\x08\x00garbage-not-deflate".to_vec(),
                    )
                }),
            )
            .route(
                "/loop",
                get(|| async { (StatusCode::FOUND, [(header::LOCATION, "/loop")]) }),
            )
            .route(
                "/storm",
                get(|| async { StatusCode::INTERNAL_SERVER_ERROR }),
            )
            .route(
                "/slow",
                get(|| async {
                    tokio::time::sleep(Duration::from_secs(5)).await;
                    "late"
                }),
            )
            .route(
                "/pdf",
                get(|| async { ([(header::CONTENT_TYPE, "application/pdf")], "%PDF") }),
            )
            .route("/gone", get(|| async { StatusCode::GONE }));
        super::serve_on_loopback(app)
    }

    #[test]
    fn faults_are_counted_per_host_and_never_stall_a_batch() {
        let (addr, _server) = hostile();
        let options = HttpOptions {
            min_host_delay: Duration::ZERO,
            timeout: Duration::from_millis(800),
            max_body_bytes: 1 << 20,
            retries: 1,
            resolve: HashMap::from([("hostile.example".to_string(), addr)]),
            ..HttpOptions::default()
        };
        let mut fetcher = HttpFetcher::new(options, Arc::new(Vocabulary::new()), None).unwrap();
        let paths = [
            "ok", "private", "endless", "latin1", "badgzip", "loop", "storm", "slow", "pdf", "gone",
        ];
        let urls: Vec<String> = paths
            .iter()
            .map(|p| format!("https://hostile.example/{p}"))
            .collect();
        let ids = fetcher.add_urls(urls.iter().map(String::as_str));
        let requests: Vec<FetchRequest> = ids
            .iter()
            .map(|&page| FetchRequest {
                page,
                validator: None,
            })
            .collect();
        let started = Instant::now();
        let got = fetcher.fetch(1, &requests);
        assert!(
            started.elapsed() < Duration::from_secs(6),
            "{:?}",
            started.elapsed()
        );
        let by_path: HashMap<&str, &FetchResult> = paths
            .iter()
            .copied()
            .zip(got.iter().map(|f| &f.result))
            .collect();
        let failed = |p: &str, needle: &str| match by_path[p] {
            FetchResult::Failed(e) => assert!(e.to_string().contains(needle), "{p}: {e}"),
            other => panic!("{p}: {other:?}"),
        };
        assert!(matches!(by_path["ok"], FetchResult::Copy(v) if v.title == "fine"));
        // The header says HTML though the body has no `<html>` tag: the copy is HTML, as ingest
        // would read the same response from a WARC file.
        assert!(matches!(by_path["ok"], FetchResult::Copy(v)
            if v.counts.content_type == crate::corpus::ContentType::Html));
        assert!(matches!(by_path["latin1"], FetchResult::Copy(v) if v.text.starts_with("caf")));
        failed("private", "robots.txt");
        failed("endless", "body over");
        failed("badgzip", "reading the body");
        failed("loop", "redirect");
        failed("storm", "status 500");
        failed("slow", "timeout");
        assert!(matches!(by_path["pdf"], FetchResult::Gone));
        assert!(matches!(by_path["gone"], FetchResult::Gone));
        let totals = fetcher.monitor().totals();
        assert_eq!(totals.robots_disallowed, 1);
        assert_eq!(totals.errors, 5, "{totals:?}");
        let hosts = fetcher.monitor().hosts();
        let host = &hosts["hostile.example"];
        assert_eq!(host.counts.errors, 5);
        assert!(!host.last_errors.is_empty());

        // A unit's deadline ends the batch with what it fetched: the slow page fails on the
        // deadline (300 ms), not on its request timeout (800 ms) nor with the server's answer
        // (after 5 s). How long past the deadline the batch ends is a figure of
        // `cargo bench --bench crawl`, not a wall-clock bound here.
        let slow: Vec<FetchRequest> = requests[7..8].to_vec();
        fetcher
            .monitor()
            .set_deadline(Some(Instant::now() + Duration::from_millis(300)));
        let got = fetcher.fetch(2, &slow);
        assert_eq!(got.len(), 1);
        // The unit's deadline, not the request's own timeout, ended the slow fetch.
        assert!(
            matches!(&got[0].result, FetchResult::Failed(FetchError::Deadline)),
            "{:?}",
            got[0].result
        );
        // The cut fetch is counted on its host: one more error, one fault cut by the deadline.
        let host = &fetcher.monitor().hosts()["hostile.example"];
        assert_eq!(host.counts.errors, 6);
        assert_eq!(
            host.counts.faults.cut_by_deadline, 1,
            "{:?}",
            host.counts.faults
        );
        assert_eq!(fetcher.monitor().totals().errors, 6);
    }
}
