//! `refresher replay`: send a query log to a running server and report throughput and latency.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use refresher::client::replay::{replay, ReplayOptions, ReplayQuery};
use refresher::querylog::layouts::{read_log, ReadOptions};
use refresher::querylog::LogLayout;
use refresher::report::terminal_safe;

#[derive(clap::Args)]
pub struct Args {
    /// The query log (any supported layout, detected; plain or gzip).
    #[arg(long)]
    pub(crate) log: PathBuf,
    /// Force the log layout instead of detecting it.
    #[arg(long, value_enum)]
    pub(crate) layout: Option<LogLayout>,
    /// Fail when more than this share (0..=1) of the log's lines cannot be read.
    #[arg(long, value_name = "SHARE", default_value_t = refresher::querylog::layouts::DEFAULT_MAX_SKIPPED_SHARE, value_parser = super::inputs::parse_share)]
    pub(crate) max_skipped_share: f64,
    /// Base URL of the server, e.g. http://127.0.0.1:8080
    #[arg(long)]
    pub(crate) server: String,
    /// Concurrent clients (one connection each).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub(crate) concurrency: u32,
    /// Replay at the log's own pace multiplied by X (2 = twice as fast); without it, as fast
    /// as possible.
    #[arg(long, value_name = "X")]
    pub(crate) speed: Option<f64>,
    /// Send only the first N queries (in time order).
    #[arg(long)]
    pub(crate) limit_queries: Option<usize>,
    /// Results requested per query.
    #[arg(long, default_value_t = 10)]
    pub(crate) page_size: usize,
    /// Longest one request may take, in milliseconds, before it counts as failed.
    #[arg(long, default_value_t = 30_000)]
    pub(crate) timeout_ms: u64,
    /// Largest response body read, in bytes; a larger one fails the request.
    #[arg(long, default_value_t = 8 << 20)]
    pub(crate) max_body_bytes: usize,
    /// Print one JSON object (`queries`, `seconds`, `qps`, `p50_ms`, `p99_ms`, `errors`).
    #[arg(long)]
    pub(crate) json: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if let Some(x) = args.speed {
        anyhow::ensure!(
            x.is_finite() && x > 0.0,
            "--speed must be a positive number (got {x})"
        );
    }
    let log = read_log(
        &args.log,
        &ReadOptions {
            layout: args.layout,
            keep_repeats: true,
            max_skipped_share: args.max_skipped_share,
        },
    )
    .with_context(|| format!("reading query log {}", args.log.display()))?;
    let mut queries = ReplayQuery::from_submissions(&log.submissions);
    if let Some(n) = args.limit_queries {
        queries.truncate(n);
    }
    anyhow::ensure!(
        !queries.is_empty(),
        "{}: no non-empty query to send",
        args.log.display()
    );
    let bar = refresher::progress::bar(queries.len() as u64, "queries", false);
    let tick = bar.clone();
    let options = ReplayOptions {
        concurrency: args.concurrency as usize,
        speed: args.speed,
        limit: args.page_size,
        timeout: std::time::Duration::from_millis(args.timeout_ms.max(1)),
        max_body: args.max_body_bytes,
    };
    let runtime = tokio::runtime::Runtime::new().context("starting the tokio runtime")?;
    let report = runtime.block_on(replay(
        &args.server,
        Arc::new(queries),
        &options,
        Arc::new(move || tick.inc(1)),
    ))?;
    bar.finish_and_clear();
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        println!(
            "{} queries in {:.2} s: {:.0} queries/s; latency p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms; {} error(s)",
            report.queries, report.seconds, report.qps, report.p50_ms, report.p90_ms, report.p99_ms, report.max_ms, report.errors
        );
    }
    for e in &report.error_samples {
        eprintln!("error: {}", terminal_safe(&e.to_string()));
    }
    anyhow::ensure!(
        report.errors == 0,
        "{} of {} requests to {} failed (statuses: {})",
        report.errors,
        report.queries,
        args.server,
        report.status_summary()
    );
    Ok(())
}
