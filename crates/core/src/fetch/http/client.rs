//! The innermost [`Transport`]: the HTTP client. One request in flight per host at a time, at
//! least [`HttpOptions::min_host_delay`] (or the host's robots.txt `Crawl-delay`, when longer)
//! between two requests to a host; hosts are fetched concurrently. Each fetch: robots.txt
//! check, conditional GET with the held copy's validators, bounded redirects, a timeout, a body
//! limit, gzip/deflate/br decoding (reqwest), an HTML content-type filter, retries with
//! exponential backoff on connection errors, timeouts, bodies that broke off, 429 and 5xx
//! (never sooner than a `Retry-After` asks, never starting after the unit's deadline), every
//! fault an attempt met counted ([`FaultCounts`]). A batch ends at the unit's deadline with
//! what it fetched.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::header::{HeaderMap, HeaderValue};

use super::hosts::{host_of, FaultCounts, Hosts, RobotsRule, RobotsText};
use super::options::{FetcherError, HttpOptions};
use super::transport::{Answer, Exchanged, Job, Outcome, Transport};
use crate::corpus::Unit;
use crate::fetch::{FetchError, Validator};

/// Why a request for a document failed, and how long its server asked to wait
/// (`Retry-After`).
pub(super) struct DocumentError {
    pub(super) error: FetchError,
    pub(super) retry_after: Option<Duration>,
}

impl From<FetchError> for DocumentError {
    fn from(error: FetchError) -> Self {
        DocumentError {
            error,
            retry_after: None,
        }
    }
}

/// Whether a failed request may be retried: no answer, a body that broke off, 429, 5xx.
pub(super) fn retryable(error: &FetchError) -> bool {
    match error {
        FetchError::Request { .. } | FetchError::Body { .. } => true,
        FetchError::Status { status } => *status == 429 || *status >= 500,
        _ => false,
    }
}

/// Longest `Retry-After` a retry waits for: a longer one gives the request up.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// How long to wait before the retry after `attempt` (from 0) failed; `None`: no retry. The
/// backoff is 250 ms · 2^(attempt + 1), or the server's `Retry-After` when longer (never
/// sooner than asked; over [`MAX_RETRY_AFTER`], no retry); a retry that would start at or
/// after the unit's `deadline` is not made (the unit's other fetches go on instead).
pub(super) fn retry_wait(
    options: &HttpOptions,
    deadline: Option<Instant>,
    attempt: u32,
    retry_after: Option<Duration>,
) -> Option<Duration> {
    if attempt >= options.retries {
        return None;
    }
    let backoff = Duration::from_millis(250 << (attempt + 1).min(6));
    let wait = match retry_after {
        Some(asked) if asked > MAX_RETRY_AFTER => return None,
        Some(asked) => asked.max(backoff),
        None => backoff,
    };
    if deadline.is_some_and(|d| Instant::now() + wait >= d) {
        return None;
    }
    Some(wait)
}

/// A response's `Retry-After`: seconds, or an HTTP date (from now).
fn retry_after_of(headers: &HeaderMap) -> Option<Duration> {
    let v = headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim();
    if let Ok(s) = v.parse::<u64>() {
        return Some(Duration::from_secs(s));
    }
    let at = httpdate::parse_http_date(v).ok()?;
    Some(
        at.duration_since(std::time::SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

/// What a conditional GET of a document brought ([`HttpClient::get_document`]).
pub(super) enum Document {
    /// `304`: the copy read before is still the document.
    NotModified,
    /// The document as sent (maybe gzipped), with its `ETag`.
    Body { body: Vec<u8>, etag: Option<String> },
}

/// The HTTP client, its runtime and its settings.
pub(super) struct HttpClient {
    runtime: tokio::runtime::Runtime,
    client: reqwest::Client,
    options: HttpOptions,
    /// Robots rules and last requests, per host.
    hosts: Hosts,
    /// Requests still running at this instant fail (`None`: no deadline).
    deadline: Arc<Mutex<Option<Instant>>>,
}

impl HttpClient {
    /// A client with `options`, keeping its per-host state in `hosts` and reading the unit's
    /// deadline from `deadline`.
    pub(super) fn new(
        options: HttpOptions,
        hosts: Hosts,
        deadline: Arc<Mutex<Option<Instant>>>,
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
        Ok(HttpClient {
            runtime,
            client,
            options,
            hosts,
            deadline,
        })
    }

    pub(super) fn options(&self) -> &HttpOptions {
        &self.options
    }

    /// The robots.txt rule this client holds for `host`, as it travels.
    pub(super) fn robots_of(&self, host: &str) -> Option<RobotsText> {
        let hosts = self.hosts.lock().expect("host table lock");
        hosts.get(host)?.robots.as_ref().map(RobotsRule::text)
    }

    /// Takes `text` as `host`'s robots.txt rule (another worker read it).
    pub(super) fn learn_robots(&self, host: &str, text: &RobotsText) {
        set_robots(
            &self.hosts,
            host,
            RobotsRule::of_text(&self.options.user_agent, text),
        );
    }

    /// A document (a sitemap, a feed) by a conditional GET: `If-None-Match` with `etag`, the
    /// `ETag` of the copy read before. Polite (the host's turn, as a fetch), neither
    /// journaled, archived nor counted here; its body is at most `max` bytes as sent
    /// (a gzipped sitemap is decompressed by the caller). One request: the caller retries
    /// ([`Self::retry_wait`]).
    pub(super) fn get_document(
        &self,
        url: &str,
        etag: Option<&str>,
        max: usize,
    ) -> Result<Document, DocumentError> {
        let (target, host_header) = self.target(url).map_err(DocumentError::from)?;
        let host = host_of(url).unwrap_or_default();
        let client = self.client.clone();
        let turn = TaskContext {
            client: self.client.clone(),
            hosts: Arc::clone(&self.hosts),
            options: Arc::new(self.options.clone()),
            targets: Vec::new(),
            deadline: None,
            under_way: Arc::default(),
        };
        self.runtime.block_on(async {
            turn.wait_turn(&host).await;
            let mut request = client.get(target);
            if let Some(h) = host_header {
                request = request.header(reqwest::header::HOST, h);
            }
            if let Some(tag) = etag {
                request = request.header(reqwest::header::IF_NONE_MATCH, tag);
            }
            let response = request
                .send()
                .await
                .map_err(|e| FetchError::Request { error: Arc::new(e) })?;
            if response.status() == reqwest::StatusCode::NOT_MODIFIED && etag.is_some() {
                return Ok(Document::NotModified);
            }
            if !response.status().is_success() {
                return Err(DocumentError {
                    error: FetchError::Status {
                        status: response.status().as_u16(),
                    },
                    retry_after: retry_after_of(response.headers()),
                });
            }
            let etag = response
                .headers()
                .get(reqwest::header::ETAG)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            let body = read_limited(response, max).await?;
            Ok(Document::Body { body, etag })
        })
    }

    /// How long to wait before the retry after `attempt` (from 0) failed; `None`: no retry
    /// ([`retry_wait`], with the unit's deadline).
    pub(super) fn retry_wait(
        &self,
        attempt: u32,
        retry_after: Option<Duration>,
    ) -> Option<Duration> {
        let deadline = *self.deadline.lock().expect("deadline lock");
        retry_wait(&self.options, deadline, attempt, retry_after)
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
}

impl Transport for HttpClient {
    /// One async task per host, sequential within a host.
    fn run(&mut self, _unit: Unit, jobs: &[Job]) -> Vec<Answer> {
        let mut by_host: BTreeMap<String, Vec<Job>> = BTreeMap::new();
        for job in jobs {
            by_host
                .entry(host_of(&job.url).unwrap_or_default())
                .or_default()
                .push(job.clone());
        }
        let results: Arc<Mutex<Vec<Answer>>> = Arc::default();
        let under_way: UnderWay = Arc::default();
        let deadline = *self.deadline.lock().expect("deadline lock");
        let mut tasks = Vec::new();
        for (host, jobs) in by_host {
            let ctx = TaskContext {
                client: self.client.clone(),
                hosts: Arc::clone(&self.hosts),
                options: Arc::new(self.options.clone()),
                targets: jobs.iter().map(|j| self.target(&j.url)).collect(),
                deadline,
                under_way: Arc::clone(&under_way),
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
        // Fetches the deadline cut (their tasks dropped with the timeout): failed, with the
        // faults their attempts met so far and the cut itself.
        let cut = std::mem::take(&mut *under_way.lock().expect("under-way lock"));
        done.extend(cut.into_iter().map(|(index, mut faults)| {
            faults.cut_by_deadline += 1;
            Answer {
                index,
                outcome: Outcome::Failed(FetchError::Deadline),
                exchanges: Vec::new(),
                replayed: false,
                faults,
            }
        }));
        done.sort_by_key(|a| a.index);
        done
    }
}

/// Keeps `rule` as `host`'s robots.txt rule.
fn set_robots(hosts: &Hosts, host: &str, rule: RobotsRule) {
    hosts
        .lock()
        .expect("host table lock")
        .entry(host.to_string())
        .or_default()
        .robots = Some(rule);
}

/// The fetches of a batch started and not finished, by job index, with the faults their
/// attempts have met so far.
type UnderWay = Arc<Mutex<BTreeMap<usize, FaultCounts>>>;

struct TaskContext {
    client: reqwest::Client,
    hosts: Hosts,
    options: Arc<HttpOptions>,
    targets: Vec<Result<(String, Option<String>), FetchError>>,
    /// The unit's deadline: no retry starts after it.
    deadline: Option<Instant>,
    /// Fetches started and not finished (what the deadline cuts, when it comes first).
    under_way: UnderWay,
}

impl TaskContext {
    async fn run_host(self, host: String, jobs: Vec<Job>, results: Arc<Mutex<Vec<Answer>>>) {
        if self.options.obey_robots {
            self.ensure_robots(&host, jobs.first().map(|j| j.url.as_str()))
                .await;
        }
        for (job, target) in jobs.into_iter().zip(&self.targets) {
            let Job {
                index,
                url,
                validator,
            } = job;
            let allowed = !self.options.obey_robots || {
                let hosts = self.hosts.lock().expect("host table lock");
                hosts
                    .get(&host)
                    .and_then(|h| h.robots.as_ref())
                    .is_none_or(|r| r.allowed(&url))
            };
            let (outcome, exchanges, faults) = if !allowed {
                (Outcome::Disallowed, Vec::new(), FaultCounts::default())
            } else {
                match target {
                    Ok((target, host_header)) => {
                        self.under_way
                            .lock()
                            .expect("under-way lock")
                            .insert(index, FaultCounts::default());
                        let fetched = self
                            .fetch_one(
                                index,
                                &host,
                                &url,
                                target,
                                host_header.as_deref(),
                                validator,
                            )
                            .await;
                        self.under_way
                            .lock()
                            .expect("under-way lock")
                            .remove(&index);
                        fetched
                    }
                    Err(e) => (
                        Outcome::Failed(e.clone()),
                        Vec::new(),
                        FaultCounts::default(),
                    ),
                }
            };
            results.lock().expect("results lock").push(Answer {
                index,
                outcome,
                exchanges,
                replayed: false,
                faults,
            });
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
                    Some(RobotsRule::Rules(..)) | Some(RobotsRule::AllowAll)
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
                        Ok(body) => RobotsRule::parse(&self.options.user_agent, &body),
                        Err(_) => RobotsRule::DisallowAll,
                    },
                    // 4xx: no robots.txt, everything allowed (RFC 9309 §2.3.1.3).
                    Ok(r) if r.status().is_client_error() => RobotsRule::AllowAll,
                    _ => RobotsRule::DisallowAll,
                }
            }
            Err(_) => RobotsRule::DisallowAll,
        };
        set_robots(&self.hosts, host, rule);
    }

    fn resolve_target(&self, url: &str) -> Result<(String, Option<String>), FetchError> {
        let (parsed, host) = parsed_with_host(url)?;
        match self.options.resolve.get(&host) {
            Some(addr) => Ok((format!("http://{addr}{}", parsed.path()), Some(host))),
            None => Ok((url.to_string(), None)),
        }
    }

    /// One fetch: a request, retried (after a connection error, a timeout, a body that broke
    /// off, 429 or 5xx) while [`retry_wait`] allows; the outcome, every exchange and the
    /// faults its attempts met.
    async fn fetch_one(
        &self,
        index: usize,
        host: &str,
        url: &str,
        target: &str,
        host_header: Option<&str>,
        validator: Option<Validator>,
    ) -> (Outcome, Vec<Exchanged>, FaultCounts) {
        let mut exchanges = Vec::new();
        let mut faults = FaultCounts::default();
        let mut attempt = 0;
        loop {
            self.wait_turn(host).await;
            let headers = request_headers_for(host_header, validator);
            let request_headers: Vec<(String, String)> = header_pairs(&headers)
                .chain([("User-Agent".to_string(), self.options.user_agent.clone())])
                .collect();
            let time = unix_now();
            let sent = self.client.get(target).headers(headers).send().await;
            let (failure, retry_after) = match sent {
                Err(e) => (FetchError::Request { error: Arc::new(e) }, None),
                Ok(response) => {
                    let retry_after = retry_after_of(response.headers());
                    let request = Sent {
                        url,
                        time,
                        headers: &request_headers,
                    };
                    match self.answer_of(response, request, &mut exchanges).await {
                        Ok(outcome) => return (outcome, exchanges, faults),
                        Err(e) => (e, retry_after),
                    }
                }
            };
            faults.count(&failure);
            if let Some(met) = self
                .under_way
                .lock()
                .expect("under-way lock")
                .get_mut(&index)
            {
                *met = faults;
            }
            match retry_wait(&self.options, self.deadline, attempt, retry_after) {
                Some(wait) => tokio::time::sleep(wait).await,
                None => return (Outcome::Failed(failure), exchanges, faults),
            }
            attempt += 1;
        }
    }

    /// What an answer brings, its exchange recorded: `Ok` the fetch's outcome, `Err` a
    /// failure worth a retry (429, 5xx, a body that broke off or timed out).
    async fn answer_of(
        &self,
        response: reqwest::Response,
        request: Sent<'_>,
        exchanges: &mut Vec<Exchanged>,
    ) -> Result<Outcome, FetchError> {
        let status = response.status();
        let response_headers: Vec<(String, String)> = header_pairs(response.headers()).collect();
        let last_modified = last_modified_of(response.headers());
        let media_type = media_type_of(response.headers());
        let html = media_type
            .as_deref()
            .is_none_or(|ct| ct.starts_with("text/html") || ct.starts_with("application/xhtml"));
        let code = status.as_u16();
        let record = |body: Vec<u8>| {
            exchanges.push(Exchanged {
                url: request.url.to_string(),
                time: request.time,
                request_headers: request.headers.to_vec(),
                status: code,
                reason: status.canonical_reason().unwrap_or("").to_string(),
                response_headers,
                body,
            })
        };
        if code == 304 {
            record(Vec::new());
            return Ok(Outcome::NotModified);
        }
        if code == 404 || code == 410 {
            record(Vec::new());
            return Ok(Outcome::Gone);
        }
        if !status.is_success() {
            record(Vec::new());
            let e = FetchError::Status { status: code };
            return if retryable(&e) {
                Err(e)
            } else {
                Ok(Outcome::Failed(e))
            };
        }
        match read_limited(response, self.options.max_body_bytes).await {
            Ok(body) if !html => {
                record(body);
                Ok(Outcome::Gone)
            }
            Ok(body) => {
                record(body.clone());
                Ok(Outcome::Body {
                    body,
                    last_modified,
                    media_type,
                })
            }
            Err(e @ FetchError::BodyTooLarge { .. }) => Ok(Outcome::Failed(e)),
            Err(e) => Err(e),
        }
    }
}

/// A request as sent, for its exchange's record.
struct Sent<'a> {
    url: &'a str,
    time: i64,
    headers: &'a [(String, String)],
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

/// Seconds since the Unix epoch, now.
pub(super) fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// A request's headers: the `Host` to send (when the address is pinned) and the validators of
/// the copy held (`If-None-Match` with its content hash, `If-Modified-Since` with its capture).
fn request_headers_for(host_header: Option<&str>, validator: Option<Validator>) -> HeaderMap {
    let mut headers = HeaderMap::new();
    if let Some(h) = host_header {
        if let Ok(v) = HeaderValue::from_str(h) {
            headers.insert(reqwest::header::HOST, v);
        }
    }
    if let Some(held) = validator {
        let hash = held.content_hash;
        if let Ok(v) = HeaderValue::from_str(&format!("\"{hash:016x}\"")) {
            headers.insert(reqwest::header::IF_NONE_MATCH, v);
        }
        if held.captured > 0 {
            let t = std::time::UNIX_EPOCH + Duration::from_secs(held.captured as u64);
            if let Ok(v) = HeaderValue::from_str(&httpdate::fmt_http_date(t)) {
                headers.insert(reqwest::header::IF_MODIFIED_SINCE, v);
            }
        }
    }
    headers
}

/// Headers as (name, value) text pairs, as the WARC record keeps them (a value that is not
/// visible ASCII reads as empty).
fn header_pairs(headers: &HeaderMap) -> impl Iterator<Item = (String, String)> + '_ {
    headers
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_string()))
}

/// A response's `Last-Modified` as Unix seconds, when present and readable.
fn last_modified_of(headers: &HeaderMap) -> Option<i64> {
    headers
        .get(reqwest::header::LAST_MODIFIED)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| httpdate::parse_http_date(v).ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_secs() as i64)
}

/// A response's media type, lower-cased without parameters (`text/html`), when given.
fn media_type_of(headers: &HeaderMap) -> Option<String> {
    headers
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|ct| {
            let media = ct.split(';').next().unwrap_or("");
            media.trim().to_ascii_lowercase()
        })
        .filter(|media| !media.is_empty())
}
