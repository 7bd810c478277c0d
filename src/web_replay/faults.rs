//! Faults on the wire (`web-replay --faults SPEC`): a replayed site that fails the way real
//! sites fail, reproducibly.
//!
//! # The spec
//!
//! `--faults KIND[:key=value,…]`, repeatable, one kind each:
//!
//! | kind | what the request gets | settings |
//! |---|---|---|
//! | `5xx` | `500 Internal Server Error` | `rate` |
//! | `429` | `429 Too Many Requests` with `Retry-After: S` | `rate`, `retry-after=S` (whole seconds, default 1) |
//! | `reset` | the answer's headers and half its body, then the connection drops | `rate` |
//! | `stall` | the answer's headers and half its body, then nothing for S seconds before the rest (an answer without a body waits S seconds before its headers) | `rate`, `seconds=S` (default 30) |
//! | `timeout` | nothing for S seconds, then the answer | `rate`, `seconds=S` (default 600) |
//! | `redirect-loop` | `302` to a URL that redirects to itself, forever | `rate` |
//! | `bad-sitemap` | a sitemap (or sitemap part) cut in half, `200`, no `ETag` | `rate` |
//! | `bad-feed` | a feed (Atom or RSS) cut in half, `200`, no `ETag` | `rate` |
//!
//! `rate=R` (default 0.1) is the probability that one request meets the fault, in [0, 1].
//! Every kind applies to every `GET` of a page, a sitemap or a feed, except `bad-sitemap` and
//! `bad-feed` (their documents only); `/robots.txt` (a `5xx` there forbids a whole host for a
//! unit, RFC 9309, another experiment) and the `/_clock` routes never fail.
//!
//! # The draw
//!
//! A request meets a kind when `xxh3(kind, URL, unit, attempt)`, keyed by `--seed`, read as a
//! number in [0, 1), is below the kind's rate: each kind draws apart (adding a kind leaves the
//! others' draws as they were) and, when several hit, the first given wins. The URL is the
//! request's `Host` and path; the unit is the site's; the attempt is how many times the URL was
//! requested in this unit before (a client's retry is the next attempt, and may succeed).
//! Attempts count afresh at every unit and whenever the clock is asked to move to the unit it
//! is at (`POST /_clock/advance?unit=U` at unit U): a crawl restarted after `kill -9` asks
//! for its unit again, so its repeated unit meets the faults the first run met — a resumed
//! crawl ends as an uninterrupted one. `GET /_faults` tells how many of each were injected.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::corpus::Unit;

/// One kind of fault (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FaultKind {
    ServerError,
    TooManyRequests,
    Reset,
    Stall,
    Timeout,
    RedirectLoop,
    BadSitemap,
    BadFeed,
}

impl FaultKind {
    pub const ALL: [FaultKind; 8] = [
        FaultKind::ServerError,
        FaultKind::TooManyRequests,
        FaultKind::Reset,
        FaultKind::Stall,
        FaultKind::Timeout,
        FaultKind::RedirectLoop,
        FaultKind::BadSitemap,
        FaultKind::BadFeed,
    ];

    /// The kind as `--faults` names it.
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::ServerError => "5xx",
            FaultKind::TooManyRequests => "429",
            FaultKind::Reset => "reset",
            FaultKind::Stall => "stall",
            FaultKind::Timeout => "timeout",
            FaultKind::RedirectLoop => "redirect-loop",
            FaultKind::BadSitemap => "bad-sitemap",
            FaultKind::BadFeed => "bad-feed",
        }
    }

    /// The settings the kind takes, as an error lists them.
    fn keys(self) -> &'static str {
        match self {
            FaultKind::TooManyRequests => "rate, retry-after",
            FaultKind::Stall | FaultKind::Timeout => "rate, seconds",
            _ => "rate",
        }
    }

    /// Whether the kind cuts a sitemap or feed (`bad-sitemap`, `bad-feed`).
    pub fn malforms_documents(self) -> bool {
        matches!(self, FaultKind::BadSitemap | FaultKind::BadFeed)
    }

    /// Whether the kind applies to a request for this kind of resource.
    fn applies_to(self, target: Target) -> bool {
        match self {
            FaultKind::BadSitemap => target == Target::Sitemap,
            FaultKind::BadFeed => target == Target::Feed,
            _ => true,
        }
    }
}

/// What a request asks for, as far as faults go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Page,
    Sitemap,
    Feed,
}

impl Target {
    /// The target of a request path (`None`: never faulted — robots.txt, the clock).
    pub fn of_path(path: &str) -> Option<Target> {
        let path = path.split('?').next().unwrap_or(path);
        if path == "/robots.txt" || path == "/_clock" || path.starts_with("/_clock/") {
            None
        } else if super::FeedFormat::of_path(path).is_some() {
            Some(Target::Feed)
        } else if path == "/sitemap.xml" || path.starts_with("/sitemap-") {
            Some(Target::Sitemap)
        } else {
            Some(Target::Page)
        }
    }
}

/// Default of `rate=R`.
pub const DEFAULT_RATE: f64 = 0.1;
/// Default of `429:retry-after=S`.
pub const DEFAULT_RETRY_AFTER: u64 = 1;
/// Default of `stall:seconds=S`.
pub const DEFAULT_STALL_SECONDS: f64 = 30.0;
/// Default of `timeout:seconds=S`.
pub const DEFAULT_TIMEOUT_SECONDS: f64 = 600.0;

/// One `--faults` value.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultSpec {
    pub(crate) kind: FaultKind,
    /// Probability per request, in [0, 1].
    pub(crate) rate: f64,
    /// `429`'s `Retry-After`, in seconds.
    pub(crate) retry_after: u64,
    /// How long a `stall` or a `timeout` holds the answer.
    pub(crate) seconds: f64,
}

/// A `--faults` value that does not parse; each names the value given.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FaultSpecError {
    #[error("`{0}`: unknown fault kind (expected 5xx, 429, reset, stall, timeout, redirect-loop, bad-sitemap or bad-feed)")]
    UnknownKind(String),
    #[error("`{spec}`: `{kind}` has no setting `{key}` (it has: {expected})")]
    UnknownKey {
        spec: String,
        kind: &'static str,
        key: String,
        expected: &'static str,
    },
    #[error("`{spec}`: {key}={value}: {reason}")]
    BadValue {
        spec: String,
        key: String,
        value: String,
        reason: &'static str,
    },
    #[error("`{spec}`: `{pair}` is not key=value")]
    NotKeyValue { spec: String, pair: String },
    #[error("`{0}`: this kind is given twice")]
    Repeated(String),
}

impl std::str::FromStr for FaultSpec {
    type Err = FaultSpecError;

    fn from_str(spec: &str) -> Result<Self, Self::Err> {
        let spec = spec.trim();
        let (name, settings) = spec.split_once(':').unwrap_or((spec, ""));
        let kind = FaultKind::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| FaultSpecError::UnknownKind(spec.to_string()))?;
        let mut out = FaultSpec {
            kind,
            rate: DEFAULT_RATE,
            retry_after: DEFAULT_RETRY_AFTER,
            seconds: match kind {
                FaultKind::Timeout => DEFAULT_TIMEOUT_SECONDS,
                _ => DEFAULT_STALL_SECONDS,
            },
        };
        let bad = |key: &str, value: &str, reason| FaultSpecError::BadValue {
            spec: spec.to_string(),
            key: key.to_string(),
            value: value.to_string(),
            reason,
        };
        for pair in settings.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (key, value) = pair
                .split_once('=')
                .ok_or_else(|| FaultSpecError::NotKeyValue {
                    spec: spec.to_string(),
                    pair: pair.to_string(),
                })?;
            match (key, kind) {
                ("rate", _) => {
                    out.rate = value
                        .parse()
                        .ok()
                        .filter(|r: &f64| (0.0..=1.0).contains(r))
                        .ok_or_else(|| bad(key, value, "expected a probability in [0, 1]"))?
                }
                ("retry-after", FaultKind::TooManyRequests) => {
                    out.retry_after = value
                        .parse()
                        .ok()
                        .filter(|s| *s <= 86_400)
                        .ok_or_else(|| bad(key, value, "expected whole seconds, 0 to 86400"))?
                }
                ("seconds", FaultKind::Stall | FaultKind::Timeout) => {
                    out.seconds = value
                        .parse()
                        .ok()
                        .filter(|s: &f64| s.is_finite() && (0.0..=86_400.0).contains(s))
                        .ok_or_else(|| bad(key, value, "expected seconds, 0 to 86400"))?
                }
                _ => {
                    return Err(FaultSpecError::UnknownKey {
                        spec: spec.to_string(),
                        kind: kind.name(),
                        key: key.to_string(),
                        expected: kind.keys(),
                    })
                }
            }
        }
        Ok(out)
    }
}

impl fmt::Display for FaultSpec {
    /// The spec in full, every setting spelled out.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:rate={}", self.kind.name(), self.rate)?;
        match self.kind {
            FaultKind::TooManyRequests => write!(f, ",retry-after={}", self.retry_after),
            FaultKind::Stall | FaultKind::Timeout => write!(f, ",seconds={}", self.seconds),
            _ => Ok(()),
        }
    }
}

/// The faults a site injects, and the seed they are drawn with.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FaultSettings {
    pub(crate) specs: Vec<FaultSpec>,
    pub(crate) seed: u64,
}

impl FaultSettings {
    /// From the `--faults` values (none: a site without faults).
    pub fn parse<S: AsRef<str>>(specs: &[S], seed: u64) -> Result<Self, FaultSpecError> {
        let mut out = FaultSettings {
            specs: Vec::new(),
            seed,
        };
        for s in specs {
            let spec: FaultSpec = s.as_ref().parse()?;
            if out.specs.iter().any(|k| k.kind == spec.kind) {
                return Err(FaultSpecError::Repeated(s.as_ref().trim().to_string()));
            }
            out.specs.push(spec);
        }
        Ok(out)
    }

    pub fn is_none(&self) -> bool {
        self.specs.iter().all(|s| s.rate == 0.0)
    }

    /// The fault a request for `url` (host and path) at `unit`, its `attempt`-th in the unit
    /// (from 0), meets (see the module docs).
    pub fn draw(&self, target: Target, url: &str, unit: Unit, attempt: u32) -> Option<&FaultSpec> {
        self.specs.iter().find(|s| {
            s.kind.applies_to(target)
                && uniform(self.seed, s.kind.name(), url, unit, attempt) < s.rate
        })
    }
}

impl fmt::Display for FaultSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.specs.is_empty() {
            return f.write_str("none");
        }
        let specs: Vec<String> = self.specs.iter().map(|s| s.to_string()).collect();
        f.write_str(&specs.join(" + "))
    }
}

/// A number in [0, 1) that only `(seed, kind, url, unit, attempt)` decide.
fn uniform(seed: u64, kind: &str, url: &str, unit: Unit, attempt: u32) -> f64 {
    let mut key = Vec::with_capacity(kind.len() + url.len() + 10);
    key.extend_from_slice(kind.as_bytes());
    key.push(0);
    key.extend_from_slice(url.as_bytes());
    key.push(0);
    key.extend_from_slice(&unit.to_le_bytes());
    key.extend_from_slice(&attempt.to_le_bytes());
    let h = xxhash_rust::xxh3::xxh3_64_with_seed(&key, seed);
    (h >> 11) as f64 / (1u64 << 53) as f64
}

/// A site's faults as it serves: the settings, the attempts of the unit so far, the counts.
#[derive(Debug)]
pub struct Faults {
    settings: FaultSettings,
    /// URL → requests for it in the current unit.
    attempts: Mutex<HashMap<String, u32>>,
    injected: [AtomicU64; 8],
}

impl Faults {
    pub fn new(settings: FaultSettings) -> Self {
        Faults {
            settings,
            attempts: Mutex::default(),
            injected: Default::default(),
        }
    }

    pub fn settings(&self) -> &FaultSettings {
        &self.settings
    }

    /// Attempts count from 0 again (a new unit, or a unit asked for again).
    pub fn restart_unit(&self) {
        self.attempts.lock().expect("attempts lock").clear();
    }

    /// The fault this request meets (counting it as an attempt and, if one, as injected).
    pub fn meet(&self, target: Target, url: &str, unit: Unit) -> Option<FaultSpec> {
        let attempt = {
            let mut attempts = self.attempts.lock().expect("attempts lock");
            let n = attempts.entry(url.to_string()).or_insert(0);
            *n += 1;
            *n - 1
        };
        let spec = self.settings.draw(target, url, unit, attempt)?.clone();
        let k = FaultKind::ALL.iter().position(|&k| k == spec.kind);
        self.injected[k.expect("a kind")].fetch_add(1, Ordering::Relaxed);
        Some(spec)
    }

    /// Faults injected so far, by kind name (`GET /_faults`).
    pub fn injected(&self) -> serde_json::Value {
        let map: serde_json::Map<String, serde_json::Value> = FaultKind::ALL
            .iter()
            .zip(&self.injected)
            .map(|(k, n)| (k.name().to_string(), n.load(Ordering::Relaxed).into()))
            .collect();
        serde_json::Value::Object(map)
    }
}

/// The query marker of a redirect loop's URL.
const LOOP_MARKER: &str = "replay-redirect-loop=1";

/// A request for a URL of a redirect loop: answered by a redirect to itself.
pub fn in_redirect_loop(path: &str) -> bool {
    path.split_once('?')
        .is_some_and(|(_, q)| q.split('&').any(|kv| kv == LOOP_MARKER))
}

/// `302` to `path`'s URL in the loop (or to itself, when it is one).
pub fn redirect_loop(path: &str) -> Response {
    let target = if in_redirect_loop(path) {
        path.to_string()
    } else {
        let sep = if path.contains('?') { '&' } else { '?' };
        format!("{path}{sep}{LOOP_MARKER}")
    };
    let mut response = StatusCode::FOUND.into_response();
    if let Ok(v) = HeaderValue::from_str(&target) {
        response.headers_mut().insert(header::LOCATION, v);
    }
    response
}

/// The answer a fault that is decided before the site answers makes (`5xx`, `429`, a
/// redirect loop); `None`: the site answers, maybe late or broken ([`after`]).
pub async fn before(spec: &FaultSpec, path: &str) -> Option<Response> {
    match spec.kind {
        FaultKind::ServerError => Some(
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal server error (web-replay --faults 5xx)\n",
            )
                .into_response(),
        ),
        FaultKind::TooManyRequests => Some(
            (
                StatusCode::TOO_MANY_REQUESTS,
                [(header::RETRY_AFTER, spec.retry_after.to_string())],
                "too many requests (web-replay --faults 429)\n",
            )
                .into_response(),
        ),
        FaultKind::RedirectLoop => Some(redirect_loop(path)),
        FaultKind::Timeout => {
            tokio::time::sleep(Duration::from_secs_f64(spec.seconds)).await;
            None
        }
        _ => None,
    }
}

/// The site's answer as a fault decided after it breaks it (reset, stall, a malformed
/// sitemap or feed); other answers as they are.
pub async fn after(spec: &FaultSpec, response: Response) -> Response {
    let (mut parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let half = bytes.slice(..bytes.len() / 2);
    match spec.kind {
        FaultKind::BadSitemap | FaultKind::BadFeed => {
            parts.status = StatusCode::OK;
            parts.headers.remove(header::ETAG);
            parts.headers.remove(header::CONTENT_LENGTH);
            Response::from_parts(parts, Body::from(half))
        }
        FaultKind::Stall if bytes.is_empty() => {
            tokio::time::sleep(Duration::from_secs_f64(spec.seconds)).await;
            Response::from_parts(parts, Body::empty())
        }
        FaultKind::Stall | FaultKind::Reset => {
            let stall = (spec.kind == FaultKind::Stall).then_some(spec.seconds);
            if bytes.is_empty() {
                // An answer without a body (a 304) is broken as a 200 whose body never comes.
                parts.status = StatusCode::OK;
            }
            let length = bytes.len().max(1);
            parts.headers.insert(header::CONTENT_LENGTH, length.into());
            let rest = bytes.slice(half.len()..);
            Response::from_parts(parts, Body::from_stream(broken_body(half, rest, stall)))
        }
        _ => Response::from_parts(parts, Body::from(bytes)),
    }
}

/// `first`, then `rest` after `stall` seconds, or (no stall) a dropped connection.
fn broken_body(
    first: Bytes,
    rest: Bytes,
    stall: Option<f64>,
) -> impl futures_util::Stream<Item = Result<Bytes, std::io::Error>> {
    use futures_util::StreamExt;
    let head = futures_util::stream::iter((!first.is_empty()).then_some(Ok(first)));
    let tail = futures_util::stream::once(async move {
        match stall {
            Some(s) => {
                tokio::time::sleep(Duration::from_secs_f64(s)).await;
                Ok(rest)
            }
            None => Err(std::io::Error::new(
                std::io::ErrorKind::ConnectionReset,
                "connection reset (web-replay --faults reset)",
            )),
        }
    });
    head.chain(tail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_with_defaults_and_errors_name_the_value() {
        let s = FaultSettings::parse(
            &[
                "5xx:rate=0.25",
                "429:retry-after=3",
                "stall:seconds=2.5,rate=1",
                "timeout",
                "redirect-loop:rate=0",
                "bad-sitemap",
                "bad-feed:rate=0.5",
                "reset",
            ],
            7,
        )
        .unwrap();
        assert_eq!(s.specs.len(), 8);
        assert_eq!(s.specs[0].rate, 0.25);
        assert_eq!((s.specs[1].rate, s.specs[1].retry_after), (DEFAULT_RATE, 3));
        assert_eq!((s.specs[2].rate, s.specs[2].seconds), (1.0, 2.5));
        assert_eq!(s.specs[3].seconds, DEFAULT_TIMEOUT_SECONDS);
        assert_eq!(
            s.to_string().split(" + ").next(),
            Some("5xx:rate=0.25"),
            "{s}"
        );
        let again: Vec<String> = s.specs.iter().map(|x| x.to_string()).collect();
        assert_eq!(FaultSettings::parse(&again, 7).unwrap(), s);
        let err = |v: &str| FaultSettings::parse(&[v], 1).unwrap_err().to_string();
        for (value, needle) in [
            (
                "5xx:rate=1.5",
                "`5xx:rate=1.5`: rate=1.5: expected a probability in [0, 1]",
            ),
            ("5xx:rate=-0.1", "rate=-0.1"),
            ("5xx:rate=NaN", "rate=NaN"),
            ("404:rate=0.1", "`404:rate=0.1`: unknown fault kind"),
            (
                "reset:seconds=3",
                "`reset` has no setting `seconds` (it has: rate)",
            ),
            ("429:retry=3", "`429` has no setting `retry`"),
            ("429:retry-after=-1", "retry-after=-1"),
            ("stall:seconds=inf", "seconds=inf"),
            ("stall:3", "`3` is not key=value"),
        ] {
            let e = err(value);
            assert!(e.contains(needle), "{value}: {e}");
        }
        let twice = FaultSettings::parse(&["5xx", "5xx:rate=1"], 1).unwrap_err();
        assert!(twice
            .to_string()
            .contains("`5xx:rate=1`: this kind is given twice"));
    }

    #[test]
    fn the_draw_is_keyed_by_seed_url_unit_and_attempt_and_its_rate_holds() {
        let s = FaultSettings::parse(&["5xx:rate=0.2", "bad-feed:rate=1"], 42).unwrap();
        let hits = |s: &FaultSettings| -> Vec<bool> {
            (0..4000)
                .map(|i| {
                    let url = format!("example.org/p{}", i % 400);
                    s.draw(Target::Page, &url, i / 400, i % 3).is_some()
                })
                .collect()
        };
        let first = hits(&s);
        assert_eq!(first, hits(&s), "the same keys draw the same faults");
        let rate = first.iter().filter(|&&h| h).count() as f64 / first.len() as f64;
        assert!((rate - 0.2).abs() < 0.03, "{rate}");
        let other_seed = FaultSettings {
            seed: 43,
            ..s.clone()
        };
        assert_ne!(first, hits(&other_seed));
        // Each part of the key moves the draw.
        let draws = |url: &str, unit, attempt| {
            (0..200)
                .map(|i| {
                    s.draw(Target::Page, &format!("{url}{i}"), unit, attempt)
                        .is_some()
                })
                .collect::<Vec<_>>()
        };
        let base = draws("a/", 1, 0);
        assert_ne!(base, draws("b/", 1, 0));
        assert_ne!(base, draws("a/", 2, 0));
        assert_ne!(base, draws("a/", 1, 1));
        // A feed-only kind never meets a page; at rate 1 it meets every feed request.
        assert!((0..50).all(|u| s.draw(Target::Feed, "x/feed.atom", u, 0).is_some()));
        let pages_only = FaultSettings::parse(&["bad-feed:rate=1"], 1).unwrap();
        assert!(pages_only.draw(Target::Page, "x/p", 0, 0).is_none());
        assert!(pages_only
            .draw(Target::Sitemap, "x/sitemap.xml", 0, 0)
            .is_none());
        assert_eq!(Target::of_path("/robots.txt"), None);
        assert_eq!(Target::of_path("/sitemap-3.xml.gz"), Some(Target::Sitemap));
        for feed in ["/feed.atom", "/feed.rss?x=1"] {
            assert_eq!(Target::of_path(feed), Some(Target::Feed), "{feed}");
        }
    }

    #[test]
    fn attempts_count_within_a_unit_and_restart() {
        let faults = Faults::new(FaultSettings::parse(&["5xx:rate=0.5"], 9).unwrap());
        let run = || -> Vec<bool> {
            (0..64)
                .map(|i| {
                    faults
                        .meet(Target::Page, &format!("h/p{}", i % 8), 3)
                        .is_some()
                })
                .collect()
        };
        let first = run();
        // The same requests again are later attempts: other draws.
        let second = run();
        assert_ne!(first, second);
        faults.restart_unit();
        assert_eq!(first, run(), "a restarted unit meets the same faults");
        let met = |v: &[bool]| v.iter().filter(|&&h| h).count() as u64;
        assert_eq!(
            faults.injected()["5xx"].as_u64().unwrap(),
            2 * met(&first) + met(&second)
        );
    }
}
