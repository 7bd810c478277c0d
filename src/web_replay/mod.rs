//! `refresher web-replay`: a captured collection served as a live website whose pages change
//! as its clock moves through the collection's time units.
//!
//! A request for a URL of the collection answers the page's version at the current unit,
//! rendered by [`render::render`]: `200` with `Last-Modified` (the version's capture time) and a
//! strong `ETag` (the hash of the served bytes), `304` to a conditional request that names the
//! served version (`If-None-Match`, else `If-Modified-Since`), `404` for a page gone or not
//! created yet. Every host of the collection is served from one address, dispatched on the
//! `Host` header; `/robots.txt` (with `Sitemap:` lines), `/sitemap.xml` (the present URLs, with
//! the `<lastmod>` dates of the site's change-signal model) and, with a feed channel,
//! `/feed.atom` (Atom) and `/feed.rss` (RSS 2.0) are answered for every host ([`publish`]).
//! The model is
//! [`ReplayOptions::signals`] (`--signals`, default `lastmod`: an accurate date on every
//! entry) drawn with [`ReplayOptions::signal_seed`], as `simulate --signals --seed` draws it.
//!
//! The clock moves every `unit_seconds` or, with a manual clock, when `POST /_clock/advance`
//! is called (deterministic tests and demos); `GET /_clock` tells the unit.
//!
//! With [`ReplayOptions::faults`] (`--faults KIND[:rate=R,…]`, repeatable) the site fails as
//! real sites fail, reproducibly: `5xx`, `429` with `Retry-After`, connection resets, stalled
//! bodies, timeouts, redirect loops, a malformed sitemap or feed, each request drawn by
//! `(URL, unit, attempt)` keyed by the seed; a crawl restarted after `kill -9` meets the same
//! faults again ([`faults`] has the spec and the draw). `GET /_faults` counts what was
//! injected.

pub mod faults;
pub mod publish;
pub mod render;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use axum::body::Body;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, Method, Request, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;

use crate::corpus::{Corpus, LiveWeb, PageId, PageState, Unit};
use crate::signal::{PublishedSignals, SignalSettings};
use faults::{FaultSettings, Faults, Target};

pub use publish::{FeedFormat, SITEMAP_URL_LIMIT};

/// How the replayed site's clock moves.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ReplayClock {
    /// One unit every this long, from the start.
    Every(Duration),
    /// Only when `POST /_clock/advance` is called.
    Manual,
}

/// Options of a replayed site.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    pub clock: ReplayClock,
    /// The `/robots.txt` served for every host (`None`: allow everything).
    pub robots: Option<String>,
    /// Added before every answer (a slow site).
    pub latency: Duration,
    /// What the site publishes about its changes (sitemap dates, a feed).
    pub signals: SignalSettings,
    /// The seed of the signal model's draws (`simulate --seed`).
    pub signal_seed: u64,
    /// The faults injected on the wire (none by default), with their seed.
    pub faults: FaultSettings,
    /// The feed robots.txt names (both formats are served; default Atom).
    pub robots_feed: FeedFormat,
}

impl ReplayOptions {
    /// A manual clock, no latency, robots.txt allowing everything, accurate sitemap dates.
    pub fn manual() -> Self {
        ReplayOptions {
            clock: ReplayClock::Manual,
            robots: None,
            latency: Duration::ZERO,
            signals: SignalSettings::accurate_lastmod(),
            signal_seed: 1,
            faults: FaultSettings::default(),
            robots_feed: FeedFormat::Atom,
        }
    }
}

/// A collection served as a website (see the module docs).
pub struct ReplaySite {
    corpus: Arc<Corpus>,
    /// `(host, path?query)` → page.
    pages: HashMap<(String, String), PageId>,
    /// The collection's hosts, in first-URL order.
    hosts: Vec<String>,
    /// The scheme of each host's URLs (what its sitemap and feed links use).
    schemes: Vec<String>,
    /// Per page, its host's number (`u32::MAX`: a URL without a host).
    host_of_page: Vec<u32>,
    /// The signal model applied to the collection (`None`: `--signals none`).
    published: Option<PublishedSignals>,
    /// Most URLs one sitemap lists before it becomes an index of parts.
    sitemap_url_limit: usize,
    unit: AtomicU32,
    /// The faults injected, their attempts and counts (`None`: no faults).
    faults: Option<Faults>,
    options: ReplayOptions,
}

impl ReplaySite {
    pub fn new(corpus: Arc<Corpus>, options: ReplayOptions) -> Self {
        let mut pages = HashMap::with_capacity(corpus.page_count());
        let mut hosts: Vec<String> = Vec::new();
        let mut schemes: Vec<String> = Vec::new();
        let mut host_of_page = vec![u32::MAX; corpus.page_count()];
        for p in 0..corpus.page_count() as PageId {
            let url = corpus.url(p);
            if let Some((host, path)) = host_and_path(url) {
                let h = match hosts.iter().position(|k| *k == host) {
                    Some(h) => h,
                    None => {
                        hosts.push(host.clone());
                        let scheme = url.split_once("://").map_or("https", |(s, _)| s);
                        schemes.push(scheme.to_ascii_lowercase());
                        hosts.len() - 1
                    }
                };
                host_of_page[p as usize] = h as u32;
                pages.entry((host, path)).or_insert(p);
            }
        }
        let published = (!options.signals.is_none())
            .then(|| PublishedSignals::of_corpus(&corpus, &options.signals, options.signal_seed));
        ReplaySite {
            corpus,
            pages,
            hosts,
            schemes,
            host_of_page,
            published,
            sitemap_url_limit: SITEMAP_URL_LIMIT,
            unit: AtomicU32::new(0),
            faults: (!options.faults.is_none()).then(|| Faults::new(options.faults.clone())),
            options,
        }
    }

    /// Splits sitemaps into parts of at most `limit` URLs (tests of the sitemap index).
    pub fn with_sitemap_url_limit(mut self, limit: usize) -> Self {
        self.sitemap_url_limit = limit.max(1);
        self
    }

    /// What the site publishes about its changes.
    pub fn signals(&self) -> &SignalSettings {
        &self.options.signals
    }

    /// The faults the site injects.
    pub fn faults(&self) -> &FaultSettings {
        &self.options.faults
    }

    /// The unit the site shows now.
    pub fn unit(&self) -> Unit {
        self.unit.load(Ordering::SeqCst)
    }

    /// The collection's hosts.
    pub fn hosts(&self) -> &[String] {
        &self.hosts
    }

    pub fn corpus(&self) -> &Corpus {
        &self.corpus
    }

    /// Moves to the next unit; `None` at the collection's last unit.
    pub fn advance(&self) -> Option<Unit> {
        let last = self.corpus.units().saturating_sub(1);
        let moved = self
            .unit
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |u| {
                (u < last).then_some(u + 1)
            })
            .ok()
            .map(|u| u + 1);
        if moved.is_some() {
            self.restart_unit();
        }
        moved
    }

    /// The unit's requests count from their first attempt again (a new unit, or a crawl
    /// restarted in this one asking for it again): the same requests meet the same faults.
    fn restart_unit(&self) {
        if let Some(f) = &self.faults {
            f.restart_unit();
        }
    }

    /// The page a request for `path` on `host` names. A host outside the collection falls
    /// back to the collection's only host, so a one-site collection answers on any address.
    fn page_for(&self, host: Option<&str>, path: &str) -> Option<PageId> {
        let host = host.map(|h| h.to_ascii_lowercase());
        if let Some(h) = &host {
            if let Some(&p) = self.pages.get(&(h.clone(), path.to_string())) {
                return Some(p);
            }
            if self.hosts.iter().any(|known| known == h) {
                return None;
            }
        }
        match self.hosts.as_slice() {
            [only] => self.pages.get(&(only.clone(), path.to_string())).copied(),
            _ => None,
        }
    }
}

/// Why [`ClockClient::advance`] did not move the clock.
#[derive(Debug, thiserror::Error)]
pub enum ClockError {
    /// The request got no answer.
    #[error(transparent)]
    Request(#[from] reqwest::Error),
    /// The site answered with a status other than a success.
    #[error("answered {0}")]
    Status(reqwest::StatusCode),
}

/// The client side of a manual clock: a crawl moving a `web-replay --manual-clock` to its unit
/// (`--advance-clock URL`).
pub struct ClockClient {
    runtime: tokio::runtime::Runtime,
    client: reqwest::Client,
}

impl ClockClient {
    pub fn new() -> std::io::Result<Self> {
        Ok(ClockClient {
            runtime: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?,
            client: reqwest::Client::new(),
        })
    }

    /// POSTs `url?unit=U`: the site moves to `unit` (or stays, when it is there already).
    pub fn advance(&self, url: &str, unit: Unit) -> Result<(), ClockError> {
        let sep = if url.contains('?') { '&' } else { '?' };
        let response = self
            .runtime
            .block_on(self.client.post(format!("{url}{sep}unit={unit}")).send())?;
        if response.status().is_success() {
            Ok(())
        } else {
            Err(ClockError::Status(response.status()))
        }
    }
}

pub use crate::corpus::url::host_and_path;

fn http_date(time: i64) -> String {
    let t = if time >= 0 {
        UNIX_EPOCH + Duration::from_secs(time as u64)
    } else {
        UNIX_EPOCH
    };
    httpdate::fmt_http_date(t)
}

/// The HTTP routes of a replayed site.
pub fn router(site: Arc<ReplaySite>) -> Router {
    Router::new().fallback(answer).with_state(site)
}

/// Binds `addr`, starts the clock (when not manual) and serves `site` until the task ends.
pub async fn spawn(
    site: Arc<ReplaySite>,
    addr: SocketAddr,
) -> std::io::Result<(SocketAddr, tokio::task::JoinHandle<std::io::Result<()>>)> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    if let ReplayClock::Every(period) = site.options.clock {
        let ticking = Arc::clone(&site);
        tokio::spawn(async move {
            let mut timer = tokio::time::interval(period.max(Duration::from_millis(1)));
            timer.tick().await; // the first tick is immediate
            loop {
                timer.tick().await;
                if ticking.advance().is_none() {
                    break;
                }
            }
        });
    }
    let handle = tokio::spawn(async move { axum::serve(listener, router(site)).await });
    Ok((local, handle))
}

/// A replayed site on a loopback port with a manual clock, served from its own runtime (for
/// synchronous callers: tests, benchmarks); the site stops when the runtime is dropped.
pub fn manual_on_loopback(
    corpus: Arc<Corpus>,
) -> std::io::Result<(Arc<ReplaySite>, SocketAddr, tokio::runtime::Runtime)> {
    serve_on_loopback(ReplaySite::new(corpus, ReplayOptions::manual()))
}

/// [`manual_on_loopback`] for a site built by the caller (other signals, other limits).
pub fn serve_on_loopback(
    site: ReplaySite,
) -> std::io::Result<(Arc<ReplaySite>, SocketAddr, tokio::runtime::Runtime)> {
    let site = Arc::new(site);
    let runtime = tokio::runtime::Runtime::new()?;
    let (addr, _) = runtime.block_on(spawn(
        Arc::clone(&site),
        SocketAddr::from(([127, 0, 0, 1], 0)),
    ))?;
    Ok((site, addr, runtime))
}

fn text(status: StatusCode, content_type: &'static str, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, content_type)], body).into_response()
}

fn json(status: StatusCode, value: serde_json::Value) -> Response {
    text(status, "application/json", value.to_string())
}

async fn answer(State(site): State<Arc<ReplaySite>>, request: Request<Body>) -> Response {
    if !site.options.latency.is_zero() {
        tokio::time::sleep(site.options.latency).await;
    }
    let method = request.method().clone();
    let path = request
        .uri()
        .path_and_query()
        .map(|pq| pq.as_str().to_string())
        .unwrap_or_else(|| "/".into());
    let headers = request.headers();
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_string);
    if let Some(response) = admin(&site, &method, &path) {
        return response;
    }
    if method != Method::GET && method != Method::HEAD {
        return (
            StatusCode::METHOD_NOT_ALLOWED,
            [(header::ALLOW, "GET, HEAD")],
            "",
        )
            .into_response();
    }
    let host_only = host.as_deref();
    // The fault this request meets (GETs only: a HEAD is answered as it is).
    let fault = match (&site.faults, Target::of_path(&path)) {
        (Some(f), Some(target)) if method == Method::GET => {
            if faults::in_redirect_loop(&path) {
                return faults::redirect_loop(&path);
            }
            let url = format!("{}{path}", host_only.unwrap_or("").to_ascii_lowercase());
            f.meet(target, &url, site.unit())
        }
        _ => None,
    };
    if let Some(spec) = &fault {
        if let Some(response) = faults::before(spec, &path).await {
            return response;
        }
    }
    let mut response = match path.as_str() {
        "/robots.txt" => {
            let mut robots = site
                .options
                .robots
                .clone()
                .unwrap_or_else(|| "User-agent: *\nDisallow:\n".into());
            if !robots.ends_with('\n') {
                robots.push('\n');
            }
            robots.push_str(&site.robots_sitemap_lines(host_only));
            text(StatusCode::OK, "text/plain; charset=utf-8", robots)
        }
        _ => match site.published(host_only, &path) {
            // A malformed document is cut from the whole one, whatever the request holds.
            Some(doc) if fault.as_ref().is_some_and(|f| f.kind.malforms_documents()) => {
                published(doc, &HeaderMap::new())
            }
            Some(doc) => published(doc, headers),
            None => page(&site, host_only, &path, headers),
        },
    };
    if let Some(spec) = &fault {
        response = faults::after(spec, response).await;
    }
    response.headers_mut().insert(
        "x-replay-unit",
        HeaderValue::from_str(&site.unit().to_string()).expect("digits"),
    );
    if method == Method::HEAD {
        *response.body_mut() = Body::empty();
    }
    response
}

/// The site's own routes: `GET /_clock`, `POST /_clock/advance[?unit=U]`, `GET /_faults`
/// (`None`: another request).
fn admin(site: &ReplaySite, method: &Method, path: &str) -> Option<Response> {
    match (method, path) {
        (&Method::GET, "/_clock") => Some(json(
            StatusCode::OK,
            serde_json::json!({"unit": site.unit(), "units": site.corpus.units(),
                "manual": site.options.clock == ReplayClock::Manual}),
        )),
        (&Method::GET, "/_faults") => Some(json(
            StatusCode::OK,
            serde_json::json!({"faults": site.options.faults.to_string(),
                "injected": site.faults.as_ref().map(Faults::injected)}),
        )),
        (&Method::POST, p) if p == "/_clock/advance" || p.starts_with("/_clock/advance?") => {
            Some(advance_clock(site, p))
        }
        _ => None,
    }
}

/// `POST /_clock/advance[?unit=U]`: the next unit, or (`?unit=U` at unit U) the unit again.
fn advance_clock(site: &ReplaySite, p: &str) -> Response {
    if site.options.clock != ReplayClock::Manual {
        return json(
            StatusCode::CONFLICT,
            serde_json::json!({"error": "the clock is not manual (started without --manual-clock)"}),
        );
    }
    // `?unit=U`: move to U if it is the next unit; already at U is fine (a crawl that
    // restarted asks again for the unit it was killed in: its requests count their attempts
    // afresh, so it meets the faults its first run met).
    let wanted: Option<Unit> = p
        .split_once('?')
        .and_then(|(_, q)| q.split('&').find_map(|kv| kv.strip_prefix("unit=")))
        .and_then(|v| v.parse().ok());
    if let Some(u) = wanted {
        let now = site.unit();
        if u == now {
            site.restart_unit();
            return json(StatusCode::OK, serde_json::json!({"unit": now}));
        }
        if u != now + 1 {
            return json(
                StatusCode::CONFLICT,
                serde_json::json!({"error": format!("unit {u} asked at unit {now}: only the next unit can be reached"), "unit": now}),
            );
        }
    }
    match site.advance() {
        Some(unit) => json(StatusCode::OK, serde_json::json!({"unit": unit})),
        None => json(
            StatusCode::CONFLICT,
            serde_json::json!({"error": format!("unit {} is the collection's last", site.unit()), "unit": site.unit()}),
        ),
    }
}

/// A sitemap or feed, `304` to a conditional request naming its `ETag`.
fn published(doc: publish::Document, headers: &HeaderMap) -> Response {
    let matches = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').map(str::trim).any(|t| t == doc.etag));
    let mut response = if matches {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        (
            StatusCode::OK,
            [(header::CONTENT_TYPE, doc.content_type)],
            doc.body,
        )
            .into_response()
    };
    if let Ok(v) = HeaderValue::from_str(&doc.etag) {
        response.headers_mut().insert(header::ETAG, v);
    }
    response
}

fn page(site: &ReplaySite, host: Option<&str>, path: &str, headers: &HeaderMap) -> Response {
    let not_found = || text(StatusCode::NOT_FOUND, "text/plain", "not found\n".into());
    let Some(p) = site.page_for(host, path) else {
        return not_found();
    };
    let version = match site.corpus.page_at(p, site.unit()) {
        PageState::Present(v) => v,
        PageState::Gone | PageState::NotYetCreated => return not_found(),
    };
    let body = render::render(&site.corpus, version);
    let etag = format!("\"{:016x}\"", render::entity_hash(body.as_bytes()));
    let last_modified = http_date(version.capture_time);
    let not_modified = match headers.get(header::IF_NONE_MATCH) {
        // If-None-Match wins over If-Modified-Since (RFC 9110 §13.2.2).
        Some(inm) => inm.to_str().is_ok_and(|v| {
            v.split(',')
                .map(str::trim)
                .any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag) == etag.as_str())
        }),
        None => headers
            .get(header::IF_MODIFIED_SINCE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| httpdate::parse_http_date(v).ok())
            .and_then(|since| since.duration_since(UNIX_EPOCH).ok())
            .is_some_and(|since| version.capture_time <= since.as_secs() as i64),
    };
    let status = if not_modified {
        StatusCode::NOT_MODIFIED
    } else {
        StatusCode::from_u16(version.status).unwrap_or(StatusCode::OK)
    };
    let mut response = if not_modified {
        status.into_response()
    } else {
        text(status, "text/html; charset=utf-8", body)
    };
    let h = response.headers_mut();
    h.insert(header::ETAG, HeaderValue::from_str(&etag).expect("hex"));
    if let Ok(v) = HeaderValue::from_str(&last_modified) {
        h.insert(header::LAST_MODIFIED, v);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::testutil::random_corpus;
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    fn site(clock: ReplayClock) -> Arc<ReplaySite> {
        Arc::new(ReplaySite::new(
            Arc::new(random_corpus(40, 6, 21)),
            ReplayOptions {
                clock,
                ..ReplayOptions::manual()
            },
        ))
    }

    async fn get(
        site: &Arc<ReplaySite>,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
    ) -> (StatusCode, HeaderMap, String) {
        let mut request = Request::builder()
            .method(method)
            .uri(path)
            .header("host", "example.org");
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        let response = router(Arc::clone(site))
            .oneshot(request.body(Body::empty()).unwrap())
            .await
            .unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        (status, headers, String::from_utf8(body.to_vec()).unwrap())
    }

    #[tokio::test]
    async fn pages_follow_the_clock_with_validators_and_304s() {
        let site = site(ReplayClock::Manual);
        let corpus = Arc::clone(&site.corpus);
        for unit in 0..corpus.units() {
            assert_eq!(site.unit(), unit);
            for p in 0..corpus.page_count() as PageId {
                let (_, path) = host_and_path(corpus.url(p)).unwrap();
                let (status, headers, body) = get(&site, Method::GET, &path, &[]).await;
                match corpus.page_at(p, unit) {
                    PageState::Present(v) => {
                        assert_eq!(status, StatusCode::OK);
                        assert_eq!(body, render::render(&corpus, v));
                        let etag = headers[header::ETAG].to_str().unwrap().to_string();
                        let modified = headers[header::LAST_MODIFIED].to_str().unwrap().to_string();
                        assert_eq!(
                            httpdate::parse_http_date(&modified).unwrap(),
                            UNIX_EPOCH + Duration::from_secs(v.capture_time as u64)
                        );
                        let (s, _, b) =
                            get(&site, Method::GET, &path, &[("if-none-match", &etag)]).await;
                        assert_eq!((s, b.as_str()), (StatusCode::NOT_MODIFIED, ""));
                        let (s, _, _) = get(
                            &site,
                            Method::GET,
                            &path,
                            &[("if-modified-since", &modified)],
                        )
                        .await;
                        assert_eq!(s, StatusCode::NOT_MODIFIED);
                        let (s, _, _) = get(
                            &site,
                            Method::GET,
                            &path,
                            &[("if-none-match", "\"0000000000000000\"")],
                        )
                        .await;
                        assert_eq!(s, StatusCode::OK);
                    }
                    _ => assert_eq!(status, StatusCode::NOT_FOUND, "page {p} unit {unit}"),
                }
            }
            let (_, _, clock) = get(&site, Method::GET, "/_clock", &[]).await;
            assert!(clock.contains(&format!("\"unit\":{unit}")), "{clock}");
            let (s, _, _) = get(&site, Method::POST, "/_clock/advance", &[]).await;
            let last = unit + 1 == corpus.units();
            assert_eq!(
                s,
                if last {
                    StatusCode::CONFLICT
                } else {
                    StatusCode::OK
                }
            );
        }
    }

    #[tokio::test]
    async fn sitemap_lists_the_present_urls_and_robots_allows_all() {
        let site = site(ReplayClock::Manual);
        site.advance();
        let (s, _, xml) = get(&site, Method::GET, "/sitemap.xml", &[]).await;
        assert_eq!(s, StatusCode::OK);
        let present: Vec<&str> = (0..site.corpus.page_count() as PageId)
            .filter(|&p| site.corpus.page_at(p, 1).present().is_some())
            .map(|p| site.corpus.url(p))
            .collect();
        let listed: Vec<&str> = xml
            .split("<loc>")
            .skip(1)
            .map(|s| s.split("</loc>").next().unwrap())
            .collect();
        assert_eq!(listed, present);
        // The default model: an accurate date on every entry, the start of the unit of the
        // page's last change (or creation) on the collection's clock.
        let clock = crate::signal::DateClock::of(&site.corpus.clock);
        let dates: Vec<Unit> = xml
            .split("<lastmod>")
            .skip(1)
            .map(|s| {
                let d = crate::signal::parse_w3c_datetime(s.split("</lastmod>").next().unwrap());
                clock.unit_of(d.unwrap())
            })
            .collect();
        assert_eq!(dates.len(), present.len());
        assert!(dates.iter().all(|&d| d <= 1));
        let (_, headers, _) = get(&site, Method::GET, "/sitemap.xml", &[]).await;
        let etag = headers[header::ETAG].to_str().unwrap().to_string();
        let (s, _, b) = get(
            &site,
            Method::GET,
            "/sitemap.xml",
            &[("if-none-match", &etag)],
        )
        .await;
        assert_eq!((s, b.as_str()), (StatusCode::NOT_MODIFIED, ""));
        let (_, _, robots) = get(&site, Method::GET, "/robots.txt", &[]).await;
        assert!(robots.contains("Disallow:\n"));
        assert!(
            robots.contains("Sitemap: https://example.org/sitemap.xml\n"),
            "{robots}"
        );
        assert!(!robots.contains("feed.atom"), "{robots}");
        let (s, _, _) = get(&site, Method::DELETE, "/robots.txt", &[]).await;
        assert_eq!(s, StatusCode::METHOD_NOT_ALLOWED);
    }

    fn signalled_site(specs: &[&str], limit: usize) -> Arc<ReplaySite> {
        Arc::new(
            ReplaySite::new(
                Arc::new(random_corpus(40, 6, 21)),
                ReplayOptions {
                    signals: SignalSettings::parse(specs).unwrap(),
                    signal_seed: 3,
                    ..ReplayOptions::manual()
                },
            )
            .with_sitemap_url_limit(limit),
        )
    }

    /// The `<loc>`s and `<lastmod>`s (as units) of a urlset.
    fn entries(site: &ReplaySite, xml: &str) -> Vec<(String, Option<Unit>)> {
        let clock = crate::signal::DateClock::of(&site.corpus.clock);
        let parsed = crate::fetch::http::sitemap::parse(xml);
        parsed
            .urls
            .into_iter()
            .zip(parsed.lastmod)
            .map(|(u, d)| {
                let d = d.map(|d| clock.unit_of(crate::signal::parse_w3c_datetime(&d).unwrap()));
                (u, d)
            })
            .collect()
    }

    #[tokio::test]
    async fn the_sitemap_and_feed_show_what_the_model_publishes() {
        let site = signalled_site(
            &[
                "lastmod:coverage=0.6,recall=0.8,false-positive=0.2",
                "feed:items=3",
            ],
            usize::MAX,
        );
        let corpus = Arc::clone(&site.corpus);
        let model = PublishedSignals::of_corpus(&corpus, site.signals(), 3);
        let clock = crate::signal::DateClock::of(&corpus.clock);
        let (mut undated, mut fed) = (0, 0);
        for unit in 1..corpus.units() {
            site.advance();
            let (_, _, xml) = get(&site, Method::GET, "/sitemap.xml", &[]).await;
            let expected: Vec<(String, Option<Unit>)> = (0..corpus.page_count() as PageId)
                .filter(|&p| corpus.page_at(p, unit).present().is_some())
                .map(|p| (corpus.url(p).to_string(), model.lastmod_at(p, unit)))
                .collect();
            undated += expected.iter().filter(|e| e.1.is_none()).count();
            assert_eq!(entries(&site, &xml), expected, "unit {unit}");
            let (s, headers, atom) = get(&site, Method::GET, "/feed.atom", &[]).await;
            assert_eq!(s, StatusCode::OK);
            assert!(headers[header::CONTENT_TYPE]
                .to_str()
                .unwrap()
                .starts_with("application/atom+xml"));
            let entries: Vec<(String, Unit)> = crate::fetch::http::feed::parse(&atom)
                .unwrap()
                .0
                .into_iter()
                .map(|e| {
                    let t = crate::signal::parse_w3c_datetime(&e.updated).unwrap();
                    (e.url, clock.unit_of(t))
                })
                .collect();
            let expected: Vec<(String, Unit)> = model
                .feed_at(unit)
                .into_iter()
                .map(|(p, u)| (corpus.url(p).to_string(), u))
                .collect();
            fed += entries.len();
            assert_eq!(entries, expected, "unit {unit}");
            // The same items in RSS 2.0, dated in RFC 822.
            let (s, headers, rss) = get(&site, Method::GET, "/feed.rss", &[]).await;
            assert_eq!(s, StatusCode::OK);
            assert!(headers[header::CONTENT_TYPE]
                .to_str()
                .unwrap()
                .starts_with("application/rss+xml"));
            assert_eq!(
                crate::fetch::http::feed::FeedKind::of(&rss),
                Some(crate::fetch::http::feed::FeedKind::Rss)
            );
            let (items, skipped) = crate::fetch::http::feed::parse(&rss).unwrap();
            assert_eq!(skipped, 0);
            let items: Vec<(String, Unit)> = items
                .into_iter()
                .map(|e| {
                    let t = crate::signal::parse_rfc2822_datetime(&e.updated).unwrap();
                    (e.url, clock.unit_of(t))
                })
                .collect();
            assert_eq!(items, expected, "unit {unit}: RSS");
            assert_eq!(
                rss.matches("<guid isPermaLink=\"false\">").count(),
                expected.len()
            );
            let etag = headers[header::ETAG].to_str().unwrap().to_string();
            let (s, _, _) = get(&site, Method::GET, "/feed.rss", &[("if-none-match", &etag)]).await;
            assert_eq!(s, StatusCode::NOT_MODIFIED);
        }
        assert!(undated > 0 && fed > 0, "{undated} {fed}");
        // robots.txt names one feed: Atom by default, RSS when asked.
        let (_, _, robots) = get(&site, Method::GET, "/robots.txt", &[]).await;
        assert!(
            robots.contains("Sitemap: https://example.org/feed.atom\n"),
            "{robots}"
        );
        assert!(!robots.contains("feed.rss"), "{robots}");
        let rss_site = Arc::new(ReplaySite::new(
            Arc::clone(&corpus),
            ReplayOptions {
                signals: site.signals().clone(),
                robots_feed: FeedFormat::Rss,
                ..ReplayOptions::manual()
            },
        ));
        let (_, _, robots) = get(&rss_site, Method::GET, "/robots.txt", &[]).await;
        assert!(
            robots.contains("Sitemap: https://example.org/feed.rss\n")
                && !robots.contains("feed.atom"),
            "{robots}"
        );
        // Without a feed channel there is no feed.
        for path in ["/feed.atom", "/feed.rss"] {
            let (s, _, _) = get(&signalled_site(&["lastmod"], 5), Method::GET, path, &[]).await;
            assert_eq!(s, StatusCode::NOT_FOUND, "{path}");
        }
    }

    #[tokio::test]
    async fn a_large_sitemap_becomes_an_index_of_gzipped_parts() {
        use std::io::Read;
        let site = signalled_site(&["lastmod"], 7);
        site.advance();
        let (_, _, index) = get(&site, Method::GET, "/sitemap.xml", &[]).await;
        let parsed = crate::fetch::http::sitemap::parse(&index);
        let present = (0..site.corpus.page_count() as PageId)
            .filter(|&p| site.corpus.page_at(p, 1).present().is_some())
            .count();
        assert_eq!(parsed.sitemaps.len(), present.div_ceil(7), "{index}");
        let mut listed = Vec::new();
        for part in &parsed.sitemaps {
            let path = part.strip_prefix("https://example.org").unwrap();
            let request = Request::builder()
                .uri(path)
                .header("host", "example.org")
                .body(Body::empty())
                .unwrap();
            let response = router(Arc::clone(&site)).oneshot(request).await.unwrap();
            assert_eq!(response.status(), StatusCode::OK, "{part}");
            let gz = response.into_body().collect().await.unwrap().to_bytes();
            let mut xml = String::new();
            flate2::read::GzDecoder::new(&gz[..])
                .read_to_string(&mut xml)
                .unwrap();
            let part_entries = entries(&site, &xml);
            assert!(part_entries.len() <= 7 && part_entries.iter().all(|e| e.1.is_some()));
            listed.extend(part_entries);
        }
        assert_eq!(listed.len(), present);
        let (s, _, _) = get(&site, Method::GET, "/sitemap-99.xml.gz", &[]).await;
        assert_eq!(s, StatusCode::NOT_FOUND);
    }

    #[tokio::test]
    async fn a_ticking_clock_refuses_manual_advances() {
        let site = site(ReplayClock::Every(Duration::from_secs(3600)));
        let (s, _, _) = get(&site, Method::POST, "/_clock/advance", &[]).await;
        assert_eq!(s, StatusCode::CONFLICT);
    }
}
