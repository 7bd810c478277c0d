//! [`HttpFetcher`]: the [`Fetcher`] of a real crawl, over HTTP(S).
//!
//! One request in flight per host at a time, at least [`HttpOptions::min_host_delay`] (or the
//! host's robots.txt `Crawl-delay`, when longer) between two requests to a host; hosts are
//! fetched concurrently. Each fetch: robots.txt check, conditional GET with the held copy's
//! validators (`If-None-Match` with its content hash, `If-Modified-Since` with its capture
//! time), bounded redirects, a timeout, a body limit, gzip/deflate/br decoding (reqwest), an
//! HTML content-type filter, retries with exponential backoff on connection errors, timeouts,
//! 429 and 5xx. 404 and 410 mean gone; a 304, or a 200 whose body hashes to the held copy,
//! means not modified. A batch ends at the unit's deadline with what it fetched: requests not
//! done by then fail (counted, never a stalled unit).
//!
//! Every exchange is written to the crawl's WARC output ([`warc_out`]). Page bodies are read
//! exactly as ingest reads WARC responses ([`page_version_from_html`]).
//!
//! Discovery ([`Discovery`]): a sitemap re-read at every unit (its newly listed URLs are the
//! unit's new pages, as the simulator's model of page creation), or the out-links of fetched
//! pages within the crawled hosts (a frontier), or none.

mod hosts;
pub mod journal;
mod options;
pub mod sitemap;
pub mod warc_out;

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::header::{HeaderMap, HeaderValue};
use texting_robots::Robot;

use super::{FetchError, FetchRequest, FetchResult, Fetched, Fetcher, UrlCatalogue};
use crate::corpus::html::{normalise_url, page_version_from_html};
use crate::corpus::{PageId, Unit};
use crate::text::{Analyzer, Vocabulary};
use hosts::{Hosts, RobotsRule};
use journal::{Journal, Recorded, RecordedOutcome};
use warc_out::{Exchange, WarcOut};

pub use hosts::{host_of, FetchCounts, HostReport};
pub use options::{Discovery, FetcherError, HttpOptions};

/// What one fetch brought back, before it becomes a [`FetchResult`].
enum Outcome {
    Body {
        body: Vec<u8>,
        last_modified: Option<i64>,
        /// The response's media type (`Content-Type` without parameters), if it gave one.
        media_type: Option<String>,
    },
    NotModified,
    Gone,
    Disallowed,
    Failed(FetchError),
}

/// The HTTP fetcher (see the module docs).
pub struct HttpFetcher {
    runtime: tokio::runtime::Runtime,
    client: reqwest::Client,
    options: HttpOptions,
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
    warc: Option<WarcOut>,
    monitor: FetchMonitor,
}

/// A handle on a fetcher that the refresh loop owns: its counts, and the unit's deadline.
#[derive(Clone, Default)]
pub struct FetchMonitor {
    hosts: Hosts,
    totals: Arc<Mutex<FetchCounts>>,
    deadline: Arc<Mutex<Option<Instant>>>,
    journal: Arc<Mutex<Journal>>,
    /// Set when a replayed unit asked for other pages than the journal recorded.
    diverged: Arc<Mutex<Option<String>>>,
}

impl FetchMonitor {
    /// Commits the unit in progress to the journal (at the unit's end).
    pub fn commit(&self, unit: Unit) -> std::io::Result<()> {
        self.journal.lock().expect("journal lock").commit(unit)
    }

    /// Whether committed units are still being replayed.
    pub fn replaying(&self) -> bool {
        self.journal.lock().expect("journal lock").replaying()
    }

    /// Why the replay of the journal stopped matching, if it did.
    pub fn diverged(&self) -> Option<String> {
        self.diverged.lock().expect("divergence lock").clone()
    }

    /// Requests still running at `deadline` fail; `None`: no deadline.
    pub fn set_deadline(&self, deadline: Option<Instant>) {
        *self.deadline.lock().expect("deadline lock") = deadline;
    }

    /// Counts over every fetch so far.
    pub fn totals(&self) -> FetchCounts {
        self.totals.lock().expect("totals lock").clone()
    }

    /// Counts per host, by host name.
    pub fn hosts(&self) -> BTreeMap<String, HostReport> {
        let hosts = self.hosts.lock().expect("host table lock");
        hosts
            .iter()
            .map(|(h, s)| (h.clone(), s.report.clone()))
            .collect()
    }
}

impl HttpFetcher {
    /// A fetcher whose analyzed terms extend `vocabulary`; `warc` receives every exchange.
    pub fn new(
        options: HttpOptions,
        vocabulary: Arc<Vocabulary>,
        warc: Option<WarcOut>,
    ) -> Result<Self, FetcherError> {
        let client = reqwest::Client::builder()
            .user_agent(options.user_agent.clone())
            .timeout(options.timeout)
            .connect_timeout(options.timeout)
            .redirect(reqwest::redirect::Policy::limited(options.max_redirects))
            .gzip(true)
            .brotli(true)
            .deflate(true)
            .build()?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()?;
        Ok(HttpFetcher {
            runtime,
            client,
            options,
            catalogue: UrlCatalogue::default(),
            vocabulary,
            analyzer: Analyzer::new(),
            scope: HashSet::new(),
            frontier: BTreeMap::new(),
            frontier_set: HashSet::new(),
            frontier_next: 0,
            listed: HashSet::new(),
            warc,
            monitor: FetchMonitor::default(),
        })
    }

    /// The handle on this fetcher's counts and deadline.
    pub fn monitor(&self) -> FetchMonitor {
        self.monitor.clone()
    }

    /// Keeps the journal in `dir`; with `replay_through`, first replays the committed units
    /// `0..=U` from it (see [`journal`]).
    pub fn set_journal(
        &mut self,
        dir: &std::path::Path,
        replay_through: Option<Unit>,
    ) -> std::io::Result<()> {
        let mut journal = Journal::new(Some(dir));
        if let Some(last) = replay_through {
            journal.load(last)?;
        }
        *self.monitor.journal.lock().expect("journal lock") = journal;
        Ok(())
    }

    fn replay_next(&self) -> Option<Recorded> {
        let mut journal = self.monitor.journal.lock().expect("journal lock");
        if journal.replaying() {
            journal.next_recorded()
        } else {
            None
        }
    }

    fn record(&self, record: Recorded) {
        self.monitor
            .journal
            .lock()
            .expect("journal lock")
            .record(record);
    }

    fn diverge(&self, why: String) {
        let mut d = self.monitor.diverged.lock().expect("divergence lock");
        if d.is_none() {
            *d = Some(why);
        }
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

    /// The URLs every configured sitemap lists now (nested sitemap indexes followed once);
    /// journaled (a replay answers what was read).
    pub fn read_sitemaps(&mut self, unit: Unit) -> Vec<String> {
        if self.monitor.replaying() {
            return match self.replay_next() {
                Some(Recorded::Sitemaps { urls }) => urls,
                other => {
                    self.diverge(format!(
                        "unit {unit}: a sitemap reading where the journal has {other:?}"
                    ));
                    Vec::new()
                }
            };
        }
        let urls = self.read_sitemaps_live(unit);
        self.record(Recorded::Sitemaps { urls: urls.clone() });
        urls
    }

    fn read_sitemaps_live(&mut self, unit: Unit) -> Vec<String> {
        let Discovery::Sitemaps(roots) = self.options.discovery.clone() else {
            return Vec::new();
        };
        let mut urls = Vec::new();
        let mut queue: Vec<(String, u8)> = roots.into_iter().map(|r| (r, 0)).collect();
        let mut i = 0;
        while i < queue.len() && i < 1000 {
            let (sitemap_url, depth) = queue[i].clone();
            i += 1;
            match self.get_text(&sitemap_url) {
                Ok(xml) => {
                    let map = sitemap::parse(&xml);
                    urls.extend(map.urls);
                    if depth == 0 {
                        queue.extend(map.sitemaps.into_iter().map(|s| (s, 1)));
                    }
                }
                Err(e) => self.note_error(&sitemap_url, format!("unit {unit}: sitemap: {e}")),
            }
        }
        urls
    }

    fn get_text(&self, url: &str) -> Result<String, FetchError> {
        let (target, host_header) = self.target(url)?;
        let client = self.client.clone();
        let max = self.options.max_body_bytes;
        self.runtime.block_on(async move {
            let mut request = client.get(target);
            if let Some(h) = host_header {
                request = request.header(reqwest::header::HOST, h);
            }
            let response = request
                .send()
                .await
                .map_err(|e| FetchError::Request { error: Arc::new(e) })?;
            if !response.status().is_success() {
                return Err(FetchError::Status {
                    status: response.status().as_u16(),
                });
            }
            let body = read_limited(response, max).await?;
            Ok(String::from_utf8_lossy(&body).into_owned())
        })
    }

    /// Where a request for `url` goes, and the `Host` header to send when it is redirected
    /// by `--resolve`.
    fn target(&self, url: &str) -> Result<(String, Option<String>), FetchError> {
        let (parsed, host) = parsed_with_host(url)?;
        match self.options.resolve.get(&host).or_else(|| {
            parsed
                .host_str()
                .and_then(|h| self.options.resolve.get(&h.to_ascii_lowercase()))
        }) {
            Some(addr) => {
                let mut path = parsed.path().to_string();
                if let Some(q) = parsed.query() {
                    path.push('?');
                    path.push_str(q);
                }
                Ok((format!("http://{addr}{path}"), Some(host)))
            }
            None => Ok((url.to_string(), None)),
        }
    }

    fn note_error(&self, url: &str, error: String) {
        let host = host_of(url).unwrap_or_default();
        let mut hosts = self.monitor.hosts.lock().expect("host table lock");
        let r = &mut hosts.entry(host).or_default().report;
        r.counts.errors += 1;
        push_error(&mut r.last_errors, error);
    }

    pub fn catalogue(&self) -> &UrlCatalogue {
        &self.catalogue
    }

    /// Flushes the WARC output (at each unit's commit).
    pub fn flush(&mut self) -> std::io::Result<()> {
        match self.warc.as_mut() {
            Some(w) => w.flush(),
            None => Ok(()),
        }
    }

    /// Fetches `urls`' pages at `unit` (one async task per host, sequential within a host).
    fn fetch_all(&mut self, jobs: Vec<Job>) -> Vec<JobDone> {
        let mut by_host: BTreeMap<String, Vec<Job>> = BTreeMap::new();
        for job in jobs {
            by_host
                .entry(host_of(&job.1).unwrap_or_default())
                .or_default()
                .push(job);
        }
        let results: Arc<Mutex<Vec<JobDone>>> = Arc::default();
        let deadline = *self.monitor.deadline.lock().expect("deadline lock");
        let mut tasks = Vec::new();
        for (host, jobs) in by_host {
            let ctx = TaskContext {
                client: self.client.clone(),
                hosts: Arc::clone(&self.monitor.hosts),
                options: Arc::new(self.options.clone()),
                targets: jobs.iter().map(|(_, u, _)| self.target(u)).collect(),
            };
            let results = Arc::clone(&results);
            tasks.push(async move { ctx.run_host(host, jobs, results).await });
        }
        let run = futures_util::future::join_all(tasks);
        self.runtime.block_on(async {
            match deadline {
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    let _ = tokio::time::timeout(left, run).await;
                }
                None => {
                    run.await;
                }
            }
        });
        let mut done = std::mem::take(&mut *results.lock().expect("results lock"));
        done.sort_by_key(|r| r.0);
        done
    }
}

/// One fetch to do: request index, URL, held copy's (content hash, capture time).
type Job = (usize, String, Option<(u64, i64)>);

/// A finished job: request index, what it brought, the exchanges to archive.
type JobDone = (usize, Outcome, Vec<Exchanged>);

/// One request/response pair for the WARC output.
struct Exchanged {
    url: String,
    time: i64,
    request_headers: Vec<(String, String)>,
    status: u16,
    reason: String,
    response_headers: Vec<(String, String)>,
    body: Vec<u8>,
}

struct TaskContext {
    client: reqwest::Client,
    hosts: Hosts,
    options: Arc<HttpOptions>,
    targets: Vec<Result<(String, Option<String>), FetchError>>,
}

impl TaskContext {
    async fn run_host(self, host: String, jobs: Vec<Job>, results: Arc<Mutex<Vec<JobDone>>>) {
        if self.options.obey_robots {
            self.ensure_robots(&host, jobs.first().map(|j| j.1.as_str()))
                .await;
        }
        for ((index, url, validator), target) in jobs.into_iter().zip(&self.targets) {
            let allowed = !self.options.obey_robots || {
                let hosts = self.hosts.lock().expect("host table lock");
                hosts
                    .get(&host)
                    .and_then(|h| h.robots.as_ref())
                    .is_none_or(|r| r.allowed(&url))
            };
            let (outcome, exchanges) = if !allowed {
                (Outcome::Disallowed, Vec::new())
            } else {
                match target {
                    Ok((target, host_header)) => {
                        self.fetch_one(&host, &url, target, host_header.as_deref(), validator)
                            .await
                    }
                    Err(e) => (Outcome::Failed(e.clone()), Vec::new()),
                }
            };
            results
                .lock()
                .expect("results lock")
                .push((index, outcome, exchanges));
        }
    }

    async fn wait_turn(&self, host: &str) {
        let wait = {
            let mut hosts = self.hosts.lock().expect("host table lock");
            let state = hosts.entry(host.to_string()).or_default();
            let delay = state
                .robots
                .as_ref()
                .and_then(RobotsRule::delay)
                .map_or(self.options.min_host_delay, |d| {
                    d.max(self.options.min_host_delay)
                });
            let now = Instant::now();
            let next = state.last_request.map_or(now, |t| (t + delay).max(now));
            state.last_request = Some(next);
            next - now
        };
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
    }

    async fn ensure_robots(&self, host: &str, any_url: Option<&str>) {
        if self
            .hosts
            .lock()
            .expect("host table lock")
            .get(host)
            .is_some_and(|h| {
                matches!(
                    h.robots,
                    Some(RobotsRule::Rules(_)) | Some(RobotsRule::AllowAll)
                )
            })
        {
            return;
        }
        let Some(url) = any_url.and_then(|u| url::Url::parse(u).ok()) else {
            return;
        };
        let robots_url = format!("{}://{}/robots.txt", url.scheme(), host);
        let rule = match self.resolve_target(&robots_url) {
            Ok((target, host_header)) => {
                self.wait_turn(host).await;
                let mut request = self.client.get(target);
                if let Some(h) = host_header {
                    request = request.header(reqwest::header::HOST, h);
                }
                match request.send().await {
                    Ok(r) if r.status().is_success() => match read_limited(r, 512 << 10).await {
                        Ok(body) => Robot::new(&self.options.user_agent, &body)
                            .map(|r| RobotsRule::Rules(Box::new(r)))
                            .unwrap_or(RobotsRule::AllowAll),
                        Err(_) => RobotsRule::DisallowAll,
                    },
                    // 4xx: no robots.txt, everything allowed (RFC 9309 §2.3.1.3).
                    Ok(r) if r.status().is_client_error() => RobotsRule::AllowAll,
                    _ => RobotsRule::DisallowAll,
                }
            }
            Err(_) => RobotsRule::DisallowAll,
        };
        self.hosts
            .lock()
            .expect("host table lock")
            .entry(host.to_string())
            .or_default()
            .robots = Some(rule);
    }

    fn resolve_target(&self, url: &str) -> Result<(String, Option<String>), FetchError> {
        let (parsed, host) = parsed_with_host(url)?;
        match self.options.resolve.get(&host) {
            Some(addr) => Ok((format!("http://{addr}{}", parsed.path()), Some(host))),
            None => Ok((url.to_string(), None)),
        }
    }

    async fn fetch_one(
        &self,
        host: &str,
        url: &str,
        target: &str,
        host_header: Option<&str>,
        validator: Option<(u64, i64)>,
    ) -> (Outcome, Vec<Exchanged>) {
        let mut exchanges = Vec::new();
        let mut attempt = 0;
        loop {
            self.wait_turn(host).await;
            let mut headers = HeaderMap::new();
            if let Some(h) = host_header {
                if let Ok(v) = HeaderValue::from_str(h) {
                    headers.insert(reqwest::header::HOST, v);
                }
            }
            if let Some((hash, captured)) = validator {
                if let Ok(v) = HeaderValue::from_str(&format!("\"{hash:016x}\"")) {
                    headers.insert(reqwest::header::IF_NONE_MATCH, v);
                }
                if captured > 0 {
                    let t = std::time::UNIX_EPOCH + Duration::from_secs(captured as u64);
                    if let Ok(v) = HeaderValue::from_str(&httpdate::fmt_http_date(t)) {
                        headers.insert(reqwest::header::IF_MODIFIED_SINCE, v);
                    }
                }
            }
            let request_headers: Vec<(String, String)> = headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_string()))
                .chain([("User-Agent".to_string(), self.options.user_agent.clone())])
                .collect();
            let time = unix_now();
            let sent = self.client.get(target).headers(headers).send().await;
            let failure = match sent {
                Err(e) => FetchError::Request { error: Arc::new(e) },
                Ok(response) => {
                    let status = response.status();
                    let response_headers: Vec<(String, String)> = response
                        .headers()
                        .iter()
                        .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_string()))
                        .collect();
                    let last_modified = response
                        .headers()
                        .get(reqwest::header::LAST_MODIFIED)
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| httpdate::parse_http_date(v).ok())
                        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                        .map(|d| d.as_secs() as i64);
                    let media_type = response
                        .headers()
                        .get(reqwest::header::CONTENT_TYPE)
                        .and_then(|v| v.to_str().ok())
                        .map(|ct| {
                            let media = ct.split(';').next().unwrap_or("");
                            media.trim().to_ascii_lowercase()
                        })
                        .filter(|media| !media.is_empty());
                    let html = media_type.as_deref().is_none_or(|ct| {
                        ct.starts_with("text/html") || ct.starts_with("application/xhtml")
                    });
                    let code = status.as_u16();
                    let reason = status.canonical_reason().unwrap_or("").to_string();
                    let mut record = |body: Vec<u8>| {
                        exchanges.push(Exchanged {
                            url: url.to_string(),
                            time,
                            request_headers: request_headers.clone(),
                            status: code,
                            reason: reason.clone(),
                            response_headers: response_headers.clone(),
                            body,
                        })
                    };
                    if code == 304 {
                        record(Vec::new());
                        return (Outcome::NotModified, exchanges);
                    }
                    if code == 404 || code == 410 {
                        record(Vec::new());
                        return (Outcome::Gone, exchanges);
                    }
                    if status.is_success() {
                        match read_limited(response, self.options.max_body_bytes).await {
                            Ok(body) => {
                                record(body.clone());
                                if !html {
                                    return (Outcome::Gone, exchanges);
                                }
                                return (
                                    Outcome::Body {
                                        body,
                                        last_modified,
                                        media_type,
                                    },
                                    exchanges,
                                );
                            }
                            Err(e) => e,
                        }
                    } else if code == 429 || status.is_server_error() {
                        record(Vec::new());
                        FetchError::Status { status: code }
                    } else {
                        record(Vec::new());
                        return (
                            Outcome::Failed(FetchError::Status { status: code }),
                            exchanges,
                        );
                    }
                }
            };
            if attempt >= self.options.retries || matches!(failure, FetchError::BodyTooLarge { .. })
            {
                return (Outcome::Failed(failure), exchanges);
            }
            attempt += 1;
            tokio::time::sleep(Duration::from_millis(250 << attempt.min(6))).await;
        }
    }
}

/// Reads a body, failing past `max` bytes (decoding errors — broken gzip — fail too).
async fn read_limited(mut response: reqwest::Response, max: usize) -> Result<Vec<u8>, FetchError> {
    let mut body = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if body.len() + chunk.len() > max {
                    return Err(FetchError::BodyTooLarge { max });
                }
                body.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok(body),
            Err(e) => return Err(FetchError::Body { error: Arc::new(e) }),
        }
    }
}

fn push_error(list: &mut Vec<String>, error: String) {
    if list.len() >= 5 {
        list.remove(0);
    }
    list.push(crate::terminal::terminal_safe(&error).into_owned());
}

/// `url` parsed, with its `host[:port]`: what both request targets start from.
fn parsed_with_host(url: &str) -> Result<(url::Url, String), FetchError> {
    let parsed = url::Url::parse(url).map_err(|error| FetchError::BadUrl {
        url: url.to_string(),
        error,
    })?;
    let host = host_of(url).ok_or_else(|| FetchError::NoHost {
        url: url.to_string(),
    })?;
    Ok((parsed, host))
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

impl Fetcher for HttpFetcher {
    fn page_count(&self) -> usize {
        self.catalogue.len()
    }

    fn url(&self, page: PageId) -> &str {
        self.catalogue.url(page).unwrap_or("")
    }

    fn fetch(&mut self, unit: Unit, requests: &[FetchRequest]) -> Vec<Fetched> {
        let jobs: Vec<Job> = requests
            .iter()
            .enumerate()
            .map(|(i, r)| {
                (
                    i,
                    self.url(r.page).to_string(),
                    r.validator.map(|v| (v.content_hash, v.captured)),
                )
            })
            .collect();
        let urls: Vec<String> = jobs.iter().map(|j| j.1.clone()).collect();
        let replaying = self.monitor.replaying();
        let done: Vec<JobDone> = if replaying {
            self.replay_fetch(unit, &urls)
        } else {
            self.fetch_and_record(jobs, urls)
        };
        let mut results: Vec<Option<FetchResult>> = vec![None; requests.len()];
        let mut new_links: Vec<String> = Vec::new();
        for (index, outcome, exchanges) in done {
            let request = requests[index];
            let url = self.url(request.page).to_string();
            let host = host_of(&url).unwrap_or_default();
            let mut counts = FetchCounts {
                fetches: if replaying { 1 } else { exchanges.len() as u64 },
                bytes: exchanges.iter().map(|e| e.body.len() as u64).sum(),
                ..FetchCounts::default()
            };
            self.archive(unit, request, &exchanges);
            let mut error = None;
            let result = match outcome {
                Outcome::Body {
                    body,
                    last_modified,
                    media_type,
                } => {
                    let hash = xxhash_rust::xxh3::xxh3_64(&body);
                    if request.validator.is_some_and(|v| v.content_hash == hash) {
                        counts.not_modified += 1;
                        FetchResult::NotModified
                    } else {
                        counts.copies += 1;
                        let catalogue = &self.catalogue;
                        let vocabulary = Arc::make_mut(&mut self.vocabulary);
                        let (version, links) = page_version_from_html(
                            &mut self.analyzer,
                            vocabulary,
                            &url,
                            request.page,
                            (unit, last_modified.unwrap_or_else(unix_now)),
                            &body,
                            media_type.as_deref(),
                            &|u| catalogue.id(u),
                        );
                        if self.options.discovery == Discovery::Links {
                            new_links.extend(links);
                        }
                        FetchResult::Copy(Arc::new(version))
                    }
                }
                Outcome::NotModified => {
                    counts.not_modified += 1;
                    FetchResult::NotModified
                }
                Outcome::Gone => {
                    counts.gone += 1;
                    FetchResult::Gone
                }
                Outcome::Disallowed => {
                    counts.robots_disallowed += 1;
                    FetchResult::Failed(FetchError::Disallowed)
                }
                Outcome::Failed(e) => {
                    counts.errors += 1;
                    error = Some(e.clone());
                    FetchResult::Failed(e)
                }
            };
            results[index] = Some(result);
            add_counts(
                &mut self.monitor.totals.lock().expect("totals lock"),
                &counts,
            );
            let mut hosts = self.monitor.hosts.lock().expect("host table lock");
            let r = &mut hosts.entry(host).or_default().report;
            add_counts(&mut r.counts, &counts);
            if let Some(e) = error {
                push_error(&mut r.last_errors, format!("unit {unit}: {url}: {e}"));
            }
        }
        for link in new_links {
            let n = normalise_url(&link);
            if self.catalogue.id(&n).is_none()
                && host_of(&n).is_some_and(|h| self.scope.contains(&h))
                && self.frontier_set.insert(n.clone())
            {
                self.frontier.insert(self.frontier_next, n);
                self.frontier_next += 1;
            }
        }
        if let Err(e) = self.flush() {
            eprintln!("warning: flushing the crawl's WARC output: {e}");
        }
        let monitor = &self.monitor;
        results
            .into_iter()
            .zip(requests)
            .map(|(r, req)| Fetched {
                page: req.page,
                result: r.unwrap_or_else(|| {
                    monitor.totals.lock().expect("totals lock").errors += 1;
                    FetchResult::Failed(FetchError::Deadline)
                }),
            })
            .collect()
    }

    fn discover(&mut self, unit: Unit, known: &dyn Fn(PageId) -> bool) -> Vec<PageId> {
        if self.monitor.replaying() {
            return match self.replay_next() {
                Some(Recorded::Discover { interned, found }) => {
                    for u in &interned {
                        if let Some(h) = host_of(u) {
                            self.scope.insert(h);
                        }
                        self.catalogue.intern(u);
                    }
                    found
                }
                other => {
                    self.diverge(format!(
                        "unit {unit}: a discovery where the journal has {other:?}"
                    ));
                    Vec::new()
                }
            };
        }
        let before = self.catalogue.len();
        let found = self.discover_live(unit, known);
        let interned = (before..self.catalogue.len())
            .filter_map(|p| self.catalogue.url(p as PageId).map(str::to_string))
            .collect();
        self.record(Recorded::Discover {
            interned,
            found: found.clone(),
        });
        found
    }

    fn vocabulary(&self) -> Option<&Arc<Vocabulary>> {
        Some(&self.vocabulary)
    }
}

impl HttpFetcher {
    /// A replayed fetch (a resumed crawl's committed unit): the outcomes the journal recorded
    /// for these `urls`, or none, the crawl diverging, when it recorded something else.
    fn replay_fetch(&mut self, unit: Unit, urls: &[String]) -> Vec<JobDone> {
        match self.replay_next() {
            Some(Recorded::Fetch {
                urls: recorded,
                outcomes,
            }) if recorded == urls => outcomes
                .into_iter()
                .enumerate()
                .filter_map(|(i, o)| replayed_outcome(o).map(|o| (i, o, Vec::new())))
                .collect(),
            other => {
                let what = match other {
                    Some(Recorded::Fetch { urls: r, .. }) => {
                        format!("a fetch of {} other URLs", r.len())
                    }
                    Some(other) => format!("{other:?}"),
                    None => "nothing".into(),
                };
                self.diverge(format!(
                    "unit {unit}: the policy asked for {} URLs where the journal recorded {what}",
                    urls.len()
                ));
                Vec::new()
            }
        }
    }

    /// A live fetch of `jobs`, its outcomes recorded in the journal (for a later resume).
    fn fetch_and_record(&mut self, jobs: Vec<Job>, urls: Vec<String>) -> Vec<JobDone> {
        let done = self.fetch_all(jobs);
        let mut recorded = vec![RecordedOutcome::Missing; urls.len()];
        for (i, outcome, _) in &done {
            recorded[*i] = recorded_outcome(outcome);
        }
        self.record(Recorded::Fetch {
            urls,
            outcomes: recorded,
        });
        done
    }

    /// Writes a fetch's exchanges to the WARC output, if any (a failure is warned of).
    fn archive(&mut self, unit: Unit, request: FetchRequest, exchanges: &[Exchanged]) {
        if let Some(warc) = self.warc.as_mut() {
            for e in exchanges {
                let held = request.validator.map(|v| v.captured);
                if let Err(err) = warc.exchange(
                    unit,
                    &Exchange {
                        url: &e.url,
                        time: e.time,
                        request_headers: &e.request_headers,
                        status: e.status,
                        reason: &e.reason,
                        response_headers: &e.response_headers,
                        body: &e.body,
                    },
                    held,
                ) {
                    eprintln!("warning: writing the crawl's WARC output: {err}");
                }
            }
        }
    }

    fn discover_live(&mut self, unit: Unit, known: &dyn Fn(PageId) -> bool) -> Vec<PageId> {
        let mut found = Vec::new();
        match self.options.discovery.clone() {
            Discovery::None => {}
            Discovery::Sitemaps(_) => {
                let urls = self.read_sitemaps_live(unit);
                let mut now = HashSet::with_capacity(urls.len());
                for u in &urls {
                    let n = normalise_url(u);
                    let id = match self.catalogue.id(&n) {
                        Some(id) => Some(id),
                        None if found.len() < self.options.max_new_per_unit => {
                            if let Some(h) = host_of(&n) {
                                self.scope.insert(h);
                            }
                            self.catalogue.intern(&n)
                        }
                        None => None,
                    };
                    if let Some(id) = id {
                        now.insert(id);
                        if !self.listed.contains(&id) && !known(id) && !found.contains(&id) {
                            found.push(id);
                        }
                    }
                }
                self.listed = now;
            }
            Discovery::Links => {
                while found.len() < self.options.max_new_per_unit {
                    let Some((_, url)) = self.frontier.pop_first() else {
                        break;
                    };
                    self.frontier_set.remove(&url);
                    if let Some(id) = self.catalogue.intern(&url) {
                        if !known(id) {
                            found.push(id);
                        }
                    }
                }
            }
        }
        found.sort_unstable();
        found
    }

    /// Records the URLs the sitemaps list at the initial crawl, so discovery at unit 1 reports
    /// only what is new since.
    pub fn set_listed(&mut self, pages: impl IntoIterator<Item = PageId>) {
        self.listed = pages.into_iter().collect();
    }

    /// Link URLs waiting in the frontier.
    pub fn frontier_len(&self) -> usize {
        self.frontier.len()
    }
}

fn recorded_outcome(outcome: &Outcome) -> RecordedOutcome {
    match outcome {
        Outcome::Body {
            body,
            last_modified,
            media_type,
        } => RecordedOutcome::body(body, *last_modified, media_type.as_deref()),
        Outcome::NotModified => RecordedOutcome::NotModified,
        Outcome::Gone => RecordedOutcome::Gone,
        Outcome::Disallowed => RecordedOutcome::Disallowed,
        Outcome::Failed(e) => RecordedOutcome::Failed {
            error: e.to_string(),
        },
    }
}

/// A recorded outcome as the fetch's own (`None`: not done by the deadline).
fn replayed_outcome(recorded: RecordedOutcome) -> Option<Outcome> {
    Some(match recorded {
        RecordedOutcome::Body {
            last_modified,
            ref media_type,
            ..
        } => Outcome::Body {
            body: recorded.body_bytes().unwrap_or_default(),
            last_modified,
            media_type: media_type.clone(),
        },
        RecordedOutcome::NotModified => Outcome::NotModified,
        RecordedOutcome::Gone => Outcome::Gone,
        RecordedOutcome::Disallowed => Outcome::Disallowed,
        RecordedOutcome::Failed { error } => Outcome::Failed(FetchError::Recorded(error)),
        RecordedOutcome::Missing => return None,
    })
}

fn add_counts(to: &mut FetchCounts, c: &FetchCounts) {
    to.fetches += c.fetches;
    to.copies += c.copies;
    to.not_modified += c.not_modified;
    to.gone += c.gone;
    to.errors += c.errors;
    to.robots_disallowed += c.robots_disallowed;
    to.bytes += c.bytes;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::net::SocketAddr;

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
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let addr = runtime.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            tokio::spawn(async move { axum::serve(listener, app).await });
            addr
        });
        (addr, runtime)
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
    }
}
