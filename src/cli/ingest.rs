//! `refresher ingest`: read a corpus (and, later, a query log) and print a summary.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use refresher::corpus::ingest::{load_corpus, IngestOptions, IngestReport};
use refresher::corpus::summary::CorpusSummary;
use refresher::corpus::Corpus;
use serde_json::{Map, Value};

#[derive(clap::Args)]
pub struct Args {
    /// A WARC file (`.warc` or `.warc.gz`) or a directory of them.
    #[arg(long)]
    pub corpus: PathBuf,
    /// A query log (any supported layout) to summarise as a workload over the corpus.
    #[arg(long)]
    pub log: Option<PathBuf>,
    /// Length of one time unit in days.
    #[arg(long, default_value_t = 7, value_parser = clap::value_parser!(u32).range(1..))]
    pub unit_days: u32,
    /// Print one JSON object on stdout instead of the readable summary.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let options = IngestOptions {
        unit_seconds: i64::from(args.unit_days) * 24 * 3600,
        origin: None,
    };
    let started = Instant::now();
    let (corpus, report) = load_corpus(&args.corpus, &options)
        .with_context(|| format!("reading corpus {}", args.corpus.display()))?;
    let seconds = started.elapsed().as_secs_f64();
    let summary = CorpusSummary::of(&corpus);
    let log = match &args.log {
        Some(path) => Some(log_summary(path, &corpus)?),
        None => None,
    };

    if args.json {
        let mut out = match serde_json::to_value(&summary)? {
            Value::Object(map) => map,
            _ => unreachable!("a struct serialises to an object"),
        };
        out.insert("ingest".to_string(), serde_json::to_value(&report)?);
        out.insert("seconds".to_string(), Value::from(seconds));
        if let Some(log) = log {
            out.extend(log);
        }
        println!("{}", Value::Object(out));
    } else {
        print_readable(&args.corpus, &summary, &report, seconds);
        if let Some(log) = log {
            for (key, value) in log {
                println!("{key:<22} {value}");
            }
        }
    }
    Ok(())
}

fn print_readable(path: &Path, summary: &CorpusSummary, report: &IngestReport, seconds: f64) {
    println!(
        "corpus {}: {} file(s), {} records ({} ok, {} gone, {} other) in {:.1} s, {:.1} MB of HTTP bodies",
        path.display(),
        report.files,
        report.records,
        report.responses_ok,
        report.responses_gone,
        report.other_records,
        seconds,
        report.body_bytes as f64 / 1e6
    );
    print!("{summary}");
    if report.superseded > 0 {
        println!(
            "{} capture(s) replaced by a later capture of the same page in the same unit",
            report.superseded
        );
    }
    println!("skipped records        {}", report.skipped.len());
    for skip in &report.skipped {
        println!("  {skip}");
    }
    if !report.lossy_utf8.is_empty() {
        println!(
            "bodies decoded lossily (not UTF-8): {}",
            report.lossy_utf8.len()
        );
        for at in &report.lossy_utf8 {
            println!("  {at}");
        }
    }
}

/// HOOK for the query-log task: summarise the log at `path` as a workload over `corpus`.
///
/// Must return the DESIGN §7 keys `log_lines`, `distinct_queries`, `workload_queries`,
/// `workload_terms`; they are merged into the JSON output and printed in the readable one.
/// The integrator wires this to `querylog::layouts::read_log` and
/// `querylog::workload::Workload::build` once those are merged; until then `--log` fails
/// loudly rather than printing a summary without the workload.
fn log_summary(path: &Path, corpus: &Corpus) -> anyhow::Result<Map<String, Value>> {
    let _ = corpus;
    anyhow::bail!("--log {}: log summaries are not merged yet", path.display())
}
