//! Browser safety for a server bound to loopback (issue 13): `Host` checked against an allow
//! list (DNS rebinding), state-changing requests refused when cross-site (CSRF), and security
//! headers on every response.
//!
//! * **Host**: the request's `Host` (port ignored) must be one of the allowed hosts — by
//!   default the bound address and `localhost`; `*` allows any. A request without `Host`
//!   (HTTP/1.0 tools) passes.
//! * **Cross-site**: a request whose `Sec-Fetch-Site` is `cross-site` or `same-site`, or whose
//!   `Origin` is not this server's own, is cross-site. Such a request may not change state
//!   (anything but GET/HEAD/OPTIONS answers 403), and its searches do not feed the live
//!   workload ([`is_cross_site`]).
//! * **Headers**: `Content-Security-Policy` (same-origin scripts, no framing),
//!   `X-Frame-Options: DENY`, `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer`.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error::ApiError;

/// The policy the UI needs: its own scripts and styles, JSON and event streams from itself.
pub const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
     img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; \
     form-action 'self'; object-src 'none'";

/// The hosts a server accepts in `Host`: lowercased names or addresses without port; `*`
/// accepts any.
#[derive(Debug, Clone)]
pub struct AllowedHosts(pub Vec<String>);

impl AllowedHosts {
    /// The bound address and the loopback names.
    pub fn default_for(addr: std::net::SocketAddr) -> Self {
        let ip = match addr.ip() {
            std::net::IpAddr::V6(v6) => format!("[{v6}]"),
            v4 => v4.to_string(),
        };
        let mut hosts = vec![ip, "localhost".into(), "127.0.0.1".into(), "[::1]".into()];
        hosts.dedup();
        AllowedHosts(hosts)
    }

    pub fn allows(&self, host: &str) -> bool {
        let name = host_name(host);
        self.0
            .iter()
            .any(|h| h == "*" || h.eq_ignore_ascii_case(&name))
    }
}

/// `host[:port]` → `host` (IPv6 literals keep their brackets), lowercased.
fn host_name(host: &str) -> String {
    let host = host.trim();
    let name = if host.starts_with('[') {
        host.split_inclusive(']').next().unwrap_or(host)
    } else {
        host.rsplit_once(':').map_or(host, |(h, _)| h)
    };
    name.to_ascii_lowercase()
}

/// Whether a request comes from another site's page (per `Sec-Fetch-Site`, else `Origin`).
pub fn is_cross_site(headers: &HeaderMap) -> bool {
    if let Some(site) = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
        if matches!(site, "cross-site" | "same-site") {
            return true;
        }
    }
    match headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) {
        None => false,
        Some(origin) => {
            let host = headers
                .get(header::HOST)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            let own = origin
                .strip_prefix("http://")
                .or_else(|| origin.strip_prefix("https://"));
            own.is_none_or(|o| !o.eq_ignore_ascii_case(host))
        }
    }
}

/// The Host and CSRF checks (see the module doc).
pub async fn check(
    State(allowed): State<Arc<AllowedHosts>>,
    request: Request,
    next: Next,
) -> Response {
    if let Some(host) = request.headers().get(header::HOST) {
        let host = host.to_str().unwrap_or("");
        if !allowed.allows(host) {
            return ApiError::Forbidden(format!(
                "Host `{}` is not served here (allowed: {}; see --allowed-hosts)",
                host.escape_debug(),
                allowed.0.join(", ")
            ))
            .into_response();
        }
    }
    let safe = matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    );
    if !safe && is_cross_site(request.headers()) {
        return ApiError::Forbidden(
            "cross-site requests may not change the server's state (Origin / Sec-Fetch-Site)"
                .into(),
        )
        .into_response();
    }
    next.run(request).await
}

/// Adds the security headers to a response.
pub async fn security_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_origins() {
        let allowed = AllowedHosts::default_for("127.0.0.1:8080".parse().unwrap());
        assert!(allowed.allows("127.0.0.1:8080"));
        assert!(allowed.allows("LOCALHOST"));
        assert!(allowed.allows("[::1]:9"));
        assert!(!allowed.allows("evil.example:8080"));
        assert!(!allowed.allows("127.0.0.1.evil.example"));
        assert!(AllowedHosts(vec!["*".into()]).allows("anything"));
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_static("127.0.0.1:8080"));
        assert!(!is_cross_site(&h));
        h.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://127.0.0.1:8080"),
        );
        assert!(!is_cross_site(&h));
        h.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://evil.example"),
        );
        assert!(is_cross_site(&h));
        h.insert(header::ORIGIN, HeaderValue::from_static("null"));
        assert!(is_cross_site(&h));
        h.remove(header::ORIGIN);
        h.insert("sec-fetch-site", HeaderValue::from_static("cross-site"));
        assert!(is_cross_site(&h));
        h.insert("sec-fetch-site", HeaderValue::from_static("same-origin"));
        assert!(!is_cross_site(&h));
    }
}
