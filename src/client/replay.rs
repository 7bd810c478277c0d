//! Sending a query log to a running server: at the log's own pace scaled by a factor, or as
//! fast as `N` concurrent clients can go, with latencies in an HDR histogram.
//!
//! Each client holds one kept-alive connection and takes the next query from a shared cursor,
//! so the order of sending follows the log. With `speed = Some(x)`, query `i` is not sent
//! before `start + (t_i − t_0) / x` (log time of the first timed query `t_0`; queries without
//! a time are sent at once); with `None` there is no waiting at all. Latency is measured from
//! the moment a request is written to the moment its body has been read, so waiting for the
//! schedule is never counted.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::http::{encode, ClientError, HttpClient};
use crate::querylog::Submission;

/// One query to send.
#[derive(Debug, Clone)]
pub struct ReplayQuery {
    pub text: String,
    /// Seconds since the Unix epoch, if the log has times.
    pub time: Option<i64>,
}

impl ReplayQuery {
    /// The submissions of a log in time order (stable for equal or missing times), each
    /// repeated `count` times (the plain layout's pre-counted lines). Empty queries are left
    /// out: the server would refuse them with a 400 and no user sees results for them.
    pub fn from_submissions(submissions: &[Submission]) -> Vec<ReplayQuery> {
        let mut out: Vec<ReplayQuery> = Vec::with_capacity(submissions.len());
        for s in submissions {
            if s.query.trim().is_empty() {
                continue;
            }
            for _ in 0..s.count.max(1) {
                out.push(ReplayQuery {
                    text: s.query.clone(),
                    time: s.time,
                });
            }
        }
        out.sort_by_key(|q| q.time.unwrap_or(i64::MIN));
        out
    }
}

/// How to replay.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    pub concurrency: usize,
    /// `Some(x)`: the log's pace × x; `None`: as fast as possible.
    pub speed: Option<f64>,
    /// Results per query (the `limit` parameter).
    pub limit: usize,
    /// Longest one request may take (connect, send, whole body) before it counts as failed.
    pub timeout: Duration,
    /// Largest response body read; a larger one fails the request unread.
    pub max_body: usize,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            concurrency: 8,
            speed: None,
            limit: 10,
            timeout: Duration::from_secs(30),
            max_body: 8 << 20,
        }
    }
}

/// The figures of a replay (the first six keys are part of the JSON contract: see
/// ARCHITECTURE.md, § Command line and JSON contract).
#[derive(Debug, Clone, serde::Serialize)]
pub struct ReplayReport {
    pub queries: u64,
    pub seconds: f64,
    pub qps: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub errors: u64,
    pub p90_ms: f64,
    pub max_ms: f64,
    pub(crate) mean_ms: f64,
    /// The first few error messages, for the user.
    pub error_samples: Vec<String>,
    /// Requests per outcome: the HTTP status (`"200"`, `"503"`, ...) or the failure
    /// (`"timeout"`, `"connect"`, `"body-too-large"`, ...).
    pub(crate) statuses: std::collections::BTreeMap<String, u64>,
}

impl ReplayReport {
    /// `200: 990, 503: 10` — every outcome with its count.
    pub fn status_summary(&self) -> String {
        self.statuses
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Sends `queries` to `server` (`http://host:port`); `on_done` is called after each query
/// (progress bars). Fails only when the URL is unusable; failed requests count as `errors`.
pub async fn replay(
    server: &str,
    queries: Arc<Vec<ReplayQuery>>,
    options: &ReplayOptions,
    on_done: Arc<dyn Fn() + Send + Sync>,
) -> Result<ReplayReport, ClientError> {
    HttpClient::new(server)?;
    let histogram = Arc::new(Mutex::new(
        Histogram::<u64>::new_with_bounds(1, 600_000_000, 3).expect("valid bounds"),
    ));
    let next = Arc::new(AtomicUsize::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    let samples = Arc::new(Mutex::new(Vec::<String>::new()));
    let statuses = Arc::new(Mutex::new(std::collections::BTreeMap::<String, u64>::new()));
    let t0 = queries.iter().find_map(|q| q.time);
    let started = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..options.concurrency.max(1) {
        let mut client = HttpClient::new(server)?
            .with_timeout(options.timeout)
            .with_max_body(options.max_body);
        let (queries, next, errors, samples, histogram, on_done, statuses) = (
            queries.clone(),
            next.clone(),
            errors.clone(),
            samples.clone(),
            histogram.clone(),
            on_done.clone(),
            statuses.clone(),
        );
        let speed = options.speed;
        let limit = options.limit;
        workers.push(tokio::spawn(async move {
            let mut local =
                Histogram::<u64>::new_with_bounds(1, 600_000_000, 3).expect("valid bounds");
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(q) = queries.get(i) else { break };
                if let (Some(x), Some(t0), Some(t)) = (speed, t0, q.time) {
                    let due = Duration::from_secs_f64(((t - t0).max(0) as f64) / x);
                    let now = started.elapsed();
                    if due > now {
                        tokio::time::sleep(due - now).await;
                    }
                }
                let path = format!("/api/search?q={}&limit={limit}", encode(&q.text));
                let sent = Instant::now();
                let outcome = client.get(&path).await;
                let micros = sent.elapsed().as_micros().max(1) as u64;
                let label = match &outcome {
                    Ok((status, _)) => status.as_u16().to_string(),
                    Err(e) => e.kind().to_string(),
                };
                *statuses
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .entry(label)
                    .or_insert(0) += 1;
                let failure = match outcome {
                    Ok((status, _)) if status.is_success() => None,
                    Ok((status, body)) => Some(format!(
                        "{status} for `{}`: {}",
                        q.text,
                        String::from_utf8_lossy(&body[..body.len().min(200)])
                    )),
                    Err(e) => Some(format!("`{}`: {e}", q.text)),
                };
                match failure {
                    None => {
                        let _ = local.record(micros);
                    }
                    Some(message) => {
                        errors.fetch_add(1, Ordering::Relaxed);
                        let mut s = samples.lock().unwrap_or_else(|e| e.into_inner());
                        if s.len() < 5 {
                            s.push(message);
                        }
                    }
                }
                on_done();
            }
            let _ = histogram
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .add(&local);
        }));
    }
    for w in workers {
        let _ = w.await;
    }
    let seconds = started.elapsed().as_secs_f64();
    let h = histogram.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let ms = |micros: u64| micros as f64 / 1e3;
    let sent = queries.len() as u64;
    let error_samples = samples.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let statuses = statuses.lock().unwrap_or_else(|e| e.into_inner()).clone();
    Ok(ReplayReport {
        queries: sent,
        seconds,
        qps: if seconds > 0.0 {
            sent as f64 / seconds
        } else {
            0.0
        },
        p50_ms: ms(h.value_at_quantile(0.50)),
        p99_ms: ms(h.value_at_quantile(0.99)),
        p90_ms: ms(h.value_at_quantile(0.90)),
        max_ms: ms(h.max()),
        mean_ms: h.mean() / 1e3,
        errors: errors.load(Ordering::Relaxed),
        error_samples,
        statuses,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    fn queries(n: usize) -> Arc<Vec<ReplayQuery>> {
        Arc::new(
            (0..n)
                .map(|i| ReplayQuery {
                    text: format!("q{i}"),
                    time: None,
                })
                .collect(),
        )
    }

    /// A server that accepts and then behaves as `answer` says, on its own thread.
    fn fake_server(answer: fn(std::net::TcpStream)) -> String {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                std::thread::spawn(move || answer(stream));
            }
        });
        format!("http://{addr}")
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_server_that_never_answers_times_out() {
        let url = fake_server(|mut s| {
            let mut buf = [0u8; 1024];
            let _ = s.read(&mut buf);
            std::thread::sleep(Duration::from_secs(30));
        });
        let options = ReplayOptions {
            concurrency: 2,
            timeout: Duration::from_millis(300),
            ..ReplayOptions::default()
        };
        // Every query ends as a timeout (the server would hold each for 30 s); how soon is a
        // figure of `cargo bench --bench replay`, not a wall-clock bound here.
        let report = replay(&url, queries(4), &options, Arc::new(|| {}))
            .await
            .unwrap();
        assert_eq!(report.errors, 4);
        assert_eq!(report.statuses.get("timeout"), Some(&4), "{report:?}");
        assert_eq!(report.status_summary(), "timeout: 4");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn huge_bodies_are_not_buffered() {
        let url = fake_server(|mut s| {
            let mut buf = [0u8; 1024];
            let _ = s.read(&mut buf);
            let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 500000000\r\n\r\n");
            let chunk = vec![b'x'; 1 << 16];
            for _ in 0..64 {
                if s.write_all(&chunk).is_err() {
                    return;
                }
            }
        });
        let options = ReplayOptions {
            concurrency: 1,
            max_body: 1 << 20,
            ..ReplayOptions::default()
        };
        let report = replay(&url, queries(2), &options, Arc::new(|| {}))
            .await
            .unwrap();
        assert_eq!(report.errors, 2);
        assert_eq!(
            report.statuses.get("body-too-large"),
            Some(&2),
            "{report:?}"
        );
    }
}
