//! `/metrics`: request counters and latency histograms, the server state's gauges and counters,
//! process metrics and build info, exposed in the Prometheus text format through the
//! `prometheus` crate (its registry, metric types, process collector and text encoder).
//!
//! One scrape is one consistent snapshot: a request's counter and histogram are updated
//! together under [`Metrics`]' lock, and a scrape gathers under the same lock, so a scrape never
//! sees a request counted in one and not yet in the other.

use std::sync::Mutex;
use std::time::Duration;

use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounterVec, Opts, Registry, TextEncoder,
};

/// Upper bounds (seconds) of the latency histogram buckets.
pub const BUCKETS: [f64; 12] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
];

/// Request metrics, process metrics and build info (see the module docs).
pub struct Metrics {
    registry: Registry,
    requests: IntCounterVec,
    latency: HistogramVec,
    /// Held while a request is recorded and while a scrape gathers.
    snapshot: Mutex<()>,
}

impl Default for Metrics {
    fn default() -> Self {
        let registry = Registry::new();
        let requests = IntCounterVec::new(
            Opts::new(
                "refresher_http_requests_total",
                "HTTP requests served, by route and status.",
            ),
            &["method", "route", "status"],
        )
        .expect("valid metric");
        let latency = HistogramVec::new(
            HistogramOpts::new(
                "refresher_http_request_duration_seconds",
                "HTTP request latency, by route.",
            )
            .buckets(BUCKETS.to_vec()),
            &["route"],
        )
        .expect("valid metric");
        let build = prometheus::IntGaugeVec::new(
            Opts::new(
                "refresher_build_info",
                "Always 1; the labels say which build is running.",
            ),
            &["version"],
        )
        .expect("valid metric");
        build.with_label_values(&[env!("CARGO_PKG_VERSION")]).set(1);
        registry
            .register(Box::new(requests.clone()))
            .expect("unique");
        registry
            .register(Box::new(latency.clone()))
            .expect("unique");
        registry.register(Box::new(build)).expect("unique");
        #[cfg(target_os = "linux")]
        registry
            .register(Box::new(
                prometheus::process_collector::ProcessCollector::for_self(),
            ))
            .expect("unique");
        Metrics {
            registry,
            requests,
            latency,
            snapshot: Mutex::new(()),
        }
    }
}

/// How a state sample is exposed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A value that goes up and down.
    Gauge,
    /// A count that only grows (exposed with its `_total` name).
    Counter,
}

/// A sample of the server state to expose beside the request metrics.
pub struct Gauge {
    pub(crate) name: &'static str,
    pub(crate) help: &'static str,
    pub(crate) kind: Kind,
    /// Label names (the same for every value).
    pub(crate) labels: &'static [&'static str],
    /// `(label values, value)`.
    pub(crate) values: Vec<(Vec<String>, f64)>,
}

impl Metrics {
    /// Records one request. `route` is the matched route template (`/api/runs/{id}`), so
    /// label cardinality stays bounded whatever the URLs.
    pub fn observe(&self, method: &str, route: &str, status: u16, elapsed: Duration) {
        let _snapshot = self.snapshot.lock().unwrap_or_else(|e| e.into_inner());
        self.requests
            .with_label_values(&[method, route, &status.to_string()])
            .inc();
        self.latency
            .with_label_values(&[route])
            .observe(elapsed.as_secs_f64());
    }

    /// The Prometheus exposition: request metrics, process metrics, build info and `gauges`.
    pub fn render(&self, gauges: &[Gauge]) -> String {
        let mut families = {
            let _snapshot = self.snapshot.lock().unwrap_or_else(|e| e.into_inner());
            self.registry.gather()
        };
        let state = Registry::new();
        for g in gauges {
            // A sample the registry refuses (a bad name) is a programming error the tests catch;
            // the scrape goes on without it.
            let registered = match g.kind {
                Kind::Gauge => {
                    prometheus::GaugeVec::new(Opts::new(g.name, g.help), g.labels).map(|vec| {
                        for (labels, v) in &g.values {
                            let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
                            vec.with_label_values(&labels).set(*v);
                        }
                        Box::new(vec) as Box<dyn prometheus::core::Collector>
                    })
                }
                Kind::Counter => prometheus::CounterVec::new(Opts::new(g.name, g.help), g.labels)
                    .map(|vec| {
                        for (labels, v) in &g.values {
                            let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
                            vec.with_label_values(&labels).inc_by(v.max(0.0));
                        }
                        Box::new(vec) as Box<dyn prometheus::core::Collector>
                    }),
            };
            if let Ok(collector) = registered {
                let _ = state.register(collector);
            }
        }
        families.extend(state.gather());
        let mut out = Vec::new();
        TextEncoder::new()
            .encode(&families, &mut out)
            .expect("text encoding into a Vec");
        String::from_utf8(out).expect("the text format is UTF-8")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_histograms_process_metrics_and_state() {
        let m = Metrics::default();
        m.observe("GET", "/api/search", 200, Duration::from_micros(800));
        m.observe("GET", "/api/search", 200, Duration::from_millis(20));
        m.observe("GET", "/api/search", 400, Duration::from_millis(2));
        let text = m.render(&[
            Gauge {
                name: "refresher_index_documents",
                help: "Documents.",
                kind: Kind::Gauge,
                labels: &[],
                values: vec![(Vec::new(), 42.0)],
            },
            Gauge {
                name: "refresher_refreshes_total",
                help: "Refreshes.",
                kind: Kind::Counter,
                labels: &[],
                values: vec![(Vec::new(), 7.0)],
            },
            Gauge {
                name: "refresher_run_quality",
                help: "Quality.",
                kind: Kind::Gauge,
                labels: &["run", "policy"],
                values: vec![(vec!["3".into(), "we\"ird".into()], 0.5)],
            },
        ]);
        assert!(text.contains(
            "refresher_http_requests_total{method=\"GET\",route=\"/api/search\",status=\"200\"} 2"
        ), "{text}");
        assert!(text.contains("# TYPE refresher_http_requests_total counter"));
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
        assert!(text.contains("# TYPE refresher_refreshes_total counter"));
        assert!(text.contains("refresher_refreshes_total 7"));
        assert!(
            text.contains("refresher_run_quality{policy=\"we\\\"ird\",run=\"3\"} 0.5"),
            "{text}"
        );
        assert!(text.contains(&format!(
            "refresher_build_info{{version=\"{}\"}} 1",
            env!("CARGO_PKG_VERSION")
        )));
        #[cfg(target_os = "linux")]
        assert!(text.contains("process_resident_memory_bytes"), "{text}");
    }

    #[test]
    fn a_scrape_sees_counters_and_histograms_in_step() {
        let m = std::sync::Arc::new(Metrics::default());
        // One request before the first scrape, so both lines exist in every scrape.
        m.observe("GET", "/api/search", 200, Duration::from_micros(100));
        let writer = {
            let m = std::sync::Arc::clone(&m);
            std::thread::spawn(move || {
                for _ in 0..20_000 {
                    m.observe("GET", "/api/search", 200, Duration::from_micros(100));
                }
            })
        };
        // Each metric's line must be there: two vanished lines would compare equal.
        let value = |text: &str, prefix: &str| -> u64 {
            text.lines()
                .find_map(|l| l.strip_prefix(prefix))
                .unwrap_or_else(|| panic!("no line {prefix} in\n{text}"))
                .trim()
                .parse()
                .unwrap()
        };
        let counted = |text: &str| {
            value(
                text,
                "refresher_http_requests_total{method=\"GET\",route=\"/api/search\",status=\"200\"}",
            )
        };
        let timed = |text: &str| {
            value(
                text,
                "refresher_http_request_duration_seconds_count{route=\"/api/search\"}",
            )
        };
        for _ in 0..50 {
            let text = m.render(&[]);
            let counted = counted(&text);
            assert!(counted >= 1, "{text}");
            assert_eq!(counted, timed(&text));
        }
        writer.join().unwrap();
        let text = m.render(&[]);
        assert_eq!(counted(&text), 20_001);
        assert_eq!(timed(&text), 20_001);
    }
}
