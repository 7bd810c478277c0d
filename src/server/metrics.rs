//! Request counters and latency histograms, rendered in the Prometheus text format
//! (version 0.0.4) together with the gauges the server state reports.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::time::Duration;

/// Upper bounds (seconds) of the latency histogram buckets.
pub const BUCKETS: [f64; 12] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
];

#[derive(Debug, Default, Clone)]
struct Histogram {
    /// Count per bucket (not cumulative); the last slot is +Inf.
    counts: [u64; BUCKETS.len() + 1],
    sum: f64,
    count: u64,
}

/// Counters keyed by (method, route template, status).
#[derive(Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(String, String, u16), u64>>,
    latency: Mutex<BTreeMap<String, Histogram>>,
}

/// A gauge to render beside the request metrics.
pub struct Gauge {
    pub name: &'static str,
    pub help: &'static str,
    /// `(labels, value)`; labels already formatted like `run="3"` (may be empty).
    pub values: Vec<(String, f64)>,
}

impl Metrics {
    /// Records one request. `route` is the matched route template (`/api/runs/{id}`), so
    /// label cardinality stays bounded whatever the URLs.
    pub fn observe(&self, method: &str, route: &str, status: u16, elapsed: Duration) {
        {
            let mut r = self.requests.lock().unwrap_or_else(|e| e.into_inner());
            *r.entry((method.to_string(), route.to_string(), status))
                .or_insert(0) += 1;
        }
        let secs = elapsed.as_secs_f64();
        let mut l = self.latency.lock().unwrap_or_else(|e| e.into_inner());
        let h = l.entry(route.to_string()).or_default();
        let slot = BUCKETS
            .iter()
            .position(|&b| secs <= b)
            .unwrap_or(BUCKETS.len());
        h.counts[slot] += 1;
        h.sum += secs;
        h.count += 1;
    }

    /// The Prometheus exposition of the request metrics and `gauges`.
    pub fn render(&self, gauges: &[Gauge]) -> String {
        let mut out = String::new();
        out.push_str(
            "# HELP refresher_http_requests_total HTTP requests served, by route and status.\n",
        );
        out.push_str("# TYPE refresher_http_requests_total counter\n");
        for ((method, route, status), n) in self
            .requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
        {
            let _ = writeln!(
                out,
                "refresher_http_requests_total{{method=\"{method}\",route=\"{}\",status=\"{status}\"}} {n}",
                label(route)
            );
        }
        out.push_str(
            "# HELP refresher_http_request_duration_seconds HTTP request latency, by route.\n",
        );
        out.push_str("# TYPE refresher_http_request_duration_seconds histogram\n");
        for (route, h) in self
            .latency
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
        {
            let route = label(route);
            let mut cumulative = 0;
            for (i, b) in BUCKETS.iter().enumerate() {
                cumulative += h.counts[i];
                let _ = writeln!(
                    out,
                    "refresher_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"{b}\"}} {cumulative}"
                );
            }
            let _ = writeln!(
                out,
                "refresher_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"+Inf\"}} {}",
                h.count
            );
            let _ = writeln!(
                out,
                "refresher_http_request_duration_seconds_sum{{route=\"{route}\"}} {}",
                h.sum
            );
            let _ = writeln!(
                out,
                "refresher_http_request_duration_seconds_count{{route=\"{route}\"}} {}",
                h.count
            );
        }
        for g in gauges {
            let _ = writeln!(out, "# HELP {} {}", g.name, g.help);
            let _ = writeln!(out, "# TYPE {} gauge", g.name);
            for (labels, v) in &g.values {
                if labels.is_empty() {
                    let _ = writeln!(out, "{} {v}", g.name);
                } else {
                    let _ = writeln!(out, "{}{{{labels}}} {v}", g.name);
                }
            }
        }
        out
    }
}

/// Escapes a label value (backslash, quote, newline).
pub fn label(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_cumulative_buckets_and_gauges() {
        let m = Metrics::default();
        m.observe("GET", "/api/search", 200, Duration::from_micros(800));
        m.observe("GET", "/api/search", 200, Duration::from_millis(20));
        m.observe("GET", "/api/search", 400, Duration::from_millis(2));
        let text = m.render(&[Gauge {
            name: "refresher_index_documents",
            help: "Documents.",
            values: vec![(String::new(), 42.0)],
        }]);
        assert!(text.contains(
            "refresher_http_requests_total{method=\"GET\",route=\"/api/search\",status=\"200\"} 2"
        ));
        assert!(text.contains(
            "refresher_http_request_duration_seconds_bucket{route=\"/api/search\",le=\"0.001\"} 1"
        ));
        assert!(text.contains(
            "refresher_http_request_duration_seconds_bucket{route=\"/api/search\",le=\"0.0025\"} 2"
        ));
        assert!(text.contains(
            "refresher_http_request_duration_seconds_bucket{route=\"/api/search\",le=\"+Inf\"} 3"
        ));
        assert!(text.contains("refresher_index_documents 42"));
    }
}
