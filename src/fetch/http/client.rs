//! The innermost [`Transport`]: the HTTP client. One request in flight per host at a time, at
//! least [`HttpOptions::min_host_delay`] (or the host's robots.txt `Crawl-delay`, when longer)
//! between two requests to a host; hosts are fetched concurrently. Each fetch: robots.txt
//! check, conditional GET with the held copy's validators, bounded redirects, a timeout, a body
//! limit, gzip/deflate/br decoding (reqwest), an HTML content-type filter, retries with
//! exponential backoff on connection errors, timeouts, 429 and 5xx. A batch ends at the unit's
//! deadline with what it fetched.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::header::{HeaderMap, HeaderValue};
use texting_robots::Robot;

use super::hosts::{host_of, Hosts, RobotsRule};
use super::options::{FetcherError, HttpOptions};
use super::transport::{Answer, Exchanged, Job, Outcome, Transport};
use crate::corpus::Unit;
use crate::fetch::{FetchError, Validator};

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

    /// A document (a sitemap, a feed) by a conditional GET: `If-None-Match` with `etag`, the
    /// `ETag` of the copy read before. Polite (the host's turn, as a fetch), neither
    /// journaled, archived nor counted here; its body is at most `max` bytes as sent
    /// (a gzipped sitemap is decompressed by the caller).
    pub(super) fn get_document(
        &self,
        url: &str,
        etag: Option<&str>,
        max: usize,
    ) -> Result<Document, FetchError> {
        let (target, host_header) = self.target(url)?;
        let host = host_of(url).unwrap_or_default();
        let client = self.client.clone();
        let turn = TaskContext {
            client: self.client.clone(),
            hosts: Arc::clone(&self.hosts),
            options: Arc::new(self.options.clone()),
            targets: Vec::new(),
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
                return Err(FetchError::Status {
                    status: response.status().as_u16(),
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
        let deadline = *self.deadline.lock().expect("deadline lock");
        let mut tasks = Vec::new();
        for (host, jobs) in by_host {
            let ctx = TaskContext {
                client: self.client.clone(),
                hosts: Arc::clone(&self.hosts),
                options: Arc::new(self.options.clone()),
                targets: jobs.iter().map(|j| self.target(&j.url)).collect(),
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
        done.sort_by_key(|a| a.index);
        done
    }
}

struct TaskContext {
    client: reqwest::Client,
    hosts: Hosts,
    options: Arc<HttpOptions>,
    targets: Vec<Result<(String, Option<String>), FetchError>>,
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
            results.lock().expect("results lock").push(Answer {
                index,
                outcome,
                exchanges,
                replayed: false,
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
        validator: Option<Validator>,
    ) -> (Outcome, Vec<Exchanged>) {
        let mut exchanges = Vec::new();
        let mut attempt = 0;
        loop {
            self.wait_turn(host).await;
            let headers = request_headers_for(host_header, validator);
            let request_headers: Vec<(String, String)> = header_pairs(&headers)
                .chain([("User-Agent".to_string(), self.options.user_agent.clone())])
                .collect();
            let time = unix_now();
            let sent = self.client.get(target).headers(headers).send().await;
            let failure = match sent {
                Err(e) => FetchError::Request { error: Arc::new(e) },
                Ok(response) => {
                    let status = response.status();
                    let response_headers: Vec<(String, String)> =
                        header_pairs(response.headers()).collect();
                    let last_modified = last_modified_of(response.headers());
                    let media_type = media_type_of(response.headers());
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
