//! `refresher ingest`: read a corpus and optionally a query log, and print a summary.

use std::path::{Path, PathBuf};
use std::time::Instant;

use refresher::corpus::ingest::IngestReport;
use refresher::corpus::summary::CorpusSummary;
use refresher::corpus::Corpus;
use refresher::report::terminal_safe;
use serde_json::{Map, Value};

use super::inputs::{CorpusArgs, WorkloadArgs};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub(crate) corpus: CorpusArgs,
    /// A query log (any supported layout) to summarise as a workload over the corpus.
    #[arg(long)]
    pub(crate) log: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) workload: WorkloadArgs,
    /// Print one JSON object on stdout instead of the readable summary.
    #[arg(long)]
    pub(crate) json: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let started = Instant::now();
    let (corpus, report) = args.corpus.load()?;
    let seconds = started.elapsed().as_secs_f64();
    let summary = CorpusSummary::of(&corpus);
    let log = match &args.log {
        Some(path) => Some(log_summary(path, &corpus, &args.workload)?),
        None => None,
    };

    if args.json {
        let mut out = match serde_json::to_value(&summary)? {
            Value::Object(map) => map,
            _ => unreachable!("a struct serialises to an object"),
        };
        out.insert("ingest".to_string(), serde_json::to_value(&report)?);
        out.insert("seconds".to_string(), Value::from(seconds));
        out.insert("collections".to_string(), corpus.collections_json());
        if let Some(log) = log {
            out.extend(log);
        }
        println!("{}", Value::Object(out));
    } else {
        print_readable(&args.corpus.display(), &summary, &report, seconds);
        super::inputs::print_collections(&corpus);
        if let Some(log) = log {
            print_log(&log);
        }
    }
    Ok(())
}

fn print_readable(path: &str, summary: &CorpusSummary, report: &IngestReport, seconds: f64) {
    println!(
        "corpus {}: {} file(s), {} records ({} ok, {} gone, {} other) in {:.1} s, {:.1} MB of HTTP bodies",
        terminal_safe(path),
        report.files,
        report.records,
        report.responses_ok,
        report.responses_gone,
        report.other_records,
        seconds,
        report.body_bytes as f64 / 1e6
    );
    if report.revisits > 0 {
        println!(
            "{} revisit record(s) read as unchanged re-captures",
            report.revisits
        );
    }
    if report.resource_pages > 0 {
        println!(
            "{} resource record(s) holding a page read as captures",
            report.resource_pages
        );
    }
    if report.crawl_unit_collections > 0 {
        println!(
            "units: the crawl's own (WARC-Refresher-Unit) in {} collection(s)",
            report.crawl_unit_collections
        );
    }
    if !report.artefacts.is_empty() {
        let parts: Vec<String> = report
            .artefacts
            .iter()
            .map(|(kind, n)| format!("{n} {kind}"))
            .collect();
        println!(
            "crawl artefacts, not pages: {} (robots.txt, sitemaps and feeds are counted, not indexed)",
            parts.join(", ")
        );
    }
    if !report.other_by_type.is_empty() {
        let parts: Vec<String> = report
            .other_by_type
            .iter()
            .map(|(t, n)| format!("{n} {t}"))
            .collect();
        println!("other records skipped: {}", parts.join(", "));
    }
    if !report.decoded.is_empty() {
        let parts: Vec<String> = report
            .decoded
            .iter()
            .map(|(c, n)| format!("{n} {c}"))
            .collect();
        println!("HTTP bodies decoded: {}", parts.join(", "));
    }
    print!("{summary}");
    if report.superseded > 0 {
        println!(
            "{} capture(s) replaced by a later capture of the same page in the same unit",
            report.superseded
        );
    }
    if report.unchanged > 0 {
        println!(
            "{} capture(s) identical to the page's previous version (not new versions)",
            report.unchanged
        );
    }
    if !report.damaged.is_empty() {
        println!(
            "damaged files          {} (every intact record was read)",
            report.damaged.len()
        );
        for damage in &report.damaged {
            println!("  {}", terminal_safe(&damage.to_string()));
        }
    }
    println!("skipped records        {}", report.skipped.len());
    for skip in &report.skipped {
        println!("  {}", terminal_safe(&skip.to_string()));
    }
    if !report.lossy_utf8.is_empty() {
        println!(
            "bodies decoded lossily (not UTF-8): {}",
            report.lossy_utf8.len()
        );
        for at in &report.lossy_utf8 {
            println!("  {}", terminal_safe(&at.to_string()));
        }
    }
}

/// Summarises the log at `path` as a workload over `corpus`: the JSON contract's keys
/// `log_lines`, `distinct_queries`, `workload_queries`, `workload_terms` (see
/// ARCHITECTURE.md, § Command line and JSON contract), and the workload report.
fn log_summary(
    path: &Path,
    corpus: &Corpus,
    args: &WorkloadArgs,
) -> anyhow::Result<Map<String, Value>> {
    let log = args.read(path)?;
    let workload = args.workload(&log, corpus);
    let summary = workload.summary();
    let mut out = Map::new();
    out.insert("log".into(), Value::from(path.display().to_string()));
    out.insert("log_layout".into(), serde_json::to_value(log.layout)?);
    out.insert("log_lines".into(), Value::from(log.lines));
    out.insert("submissions".into(), Value::from(log.submissions.len()));
    out.insert("log_users".into(), Value::from(log.users()));
    out.insert(
        "distinct_query_strings".into(),
        Value::from(log.distinct_query_strings()),
    );
    out.insert("skipped_lines".into(), Value::from(log.skipped_lines));
    out.insert(
        "skipped".into(),
        Value::from(
            log.skipped
                .iter()
                .take(20)
                .map(|s| s.to_string())
                .collect::<Vec<_>>(),
        ),
    );
    if let Value::Object(map) = serde_json::to_value(&summary)? {
        out.extend(map);
    }
    Ok(out)
}

fn print_log(log: &Map<String, Value>) {
    let get = |k: &str| log.get(k).cloned().unwrap_or(Value::Null);
    println!(
        "log {}: {} layout, {} lines, {} submissions by {} users, {} distinct query strings, {} skipped line(s)",
        terminal_safe(get("log").as_str().unwrap_or("")),
        get("log_layout").as_str().unwrap_or(""),
        get("log_lines"),
        get("submissions"),
        get("log_users"),
        get("distinct_query_strings"),
        get("skipped_lines"),
    );
    if let Some(skipped) = log.get("skipped").and_then(Value::as_array) {
        for s in skipped {
            println!("  {}", terminal_safe(s.as_str().unwrap_or("")));
        }
    }
    println!(
        "workload: {} distinct normalised queries, {} before the filter, {} matching the corpus, {} kept ({} filter), {} single terms",
        get("distinct_queries"),
        get("queries_before_filter"),
        get("queries_matching"),
        get("workload_queries"),
        get("filter").as_str().unwrap_or(""),
        get("workload_terms"),
    );
    if let Some(knee) = log.get("knee").filter(|k| !k.is_null()) {
        println!(
            "knee: rank {} at value {:.4}",
            knee["rank"],
            knee["value"].as_f64().unwrap_or(0.0)
        );
    }
    if let Some(lengths) = log.get("length_distribution").and_then(Value::as_array) {
        let parts: Vec<String> = lengths
            .iter()
            .map(|l| format!("{} term(s): {}", l["terms"], l["queries"]))
            .collect();
        println!("kept query lengths: {}", parts.join(", "));
    }
    if let Some(top) = log.get("top_terms").and_then(Value::as_array) {
        let parts: Vec<String> = top
            .iter()
            .take(10)
            .map(|t| format!("{} ({})", t["term"].as_str().unwrap_or(""), t["frequency"]))
            .collect();
        println!("top terms: {}", terminal_safe(&parts.join(", ")));
    }
}
