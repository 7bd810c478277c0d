//! `refresher generate`: writes the synthetic site (WARC) and its AOL-layout query log.

use std::path::PathBuf;

use refresher::corpus::generate::{
    generate_site, ChangeCorrelation, CorrelationGroups, GeneratorConfig,
};

#[derive(clap::Args)]
pub struct Args {
    /// Output directory: WARC files go to DIR/corpus/, the log to DIR/querylog/aol-synthetic.txt.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Pages at week 0 (about 8 % more are created over the weeks).
    #[arg(long, value_name = "N", default_value_t = GeneratorConfig::default().pages)]
    pages: usize,
    /// Weekly snapshots, week 0 included.
    #[arg(long, value_name = "T", default_value_t = GeneratorConfig::default().weeks)]
    weeks: u32,
    /// Random seed; the same seed gives byte-identical output.
    #[arg(long, value_name = "S", default_value_t = GeneratorConfig::default().seed)]
    seed: u64,
    /// Query log lines (approximately).
    #[arg(long, value_name = "Q", default_value_t = GeneratorConfig::default().queries)]
    queries: usize,
    /// Largest WARC file, in MiB, before a new file is started.
    #[arg(long, value_name = "MB", default_value_t = 40)]
    max_file_mb: u64,
    /// Collection name (WARC files are NAME-00000.warc.gz, ...).
    #[arg(long, default_value_t = GeneratorConfig::default().name)]
    name: String,
    /// Start of week 0, a date (UTC midnight), e.g. 2013-03-03.
    #[arg(long, value_name = "YYYY-MM-DD", value_parser = parse_date)]
    start_date: Option<i64>,
    /// Host of the one-site wiki (several sites are site1.example, ...).
    #[arg(long, default_value_t = GeneratorConfig::default().host)]
    host: String,
    /// Sites (hosts site1.example, ...), each a directory tree; 1 is the flat one-site wiki.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    sites: u64,
    /// How strongly pages of a group share their change rate and weekly change events: none,
    /// moderate, strong or a number in [0, 1] (0 = independent pages).
    #[arg(long, value_name = "STRENGTH", default_value = "none", value_parser = ChangeCorrelation::parse_strength)]
    change_correlation: f64,
    /// Which groups correlate, comma-separated: directory, site, links (a page and the pages
    /// it links to).
    #[arg(long, value_name = "GROUPS", default_value = "directory", value_parser = CorrelationGroups::parse)]
    correlate: CorrelationGroups,
    /// Print the full ground truth as JSON instead of the summary.
    #[arg(long)]
    json: bool,
}

/// `YYYY-MM-DD` → Unix seconds of that day's midnight, UTC.
fn parse_date(s: &str) -> Result<i64, super::ArgError> {
    chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .map(|d| {
            d.and_hms_opt(0, 0, 0)
                .expect("midnight")
                .and_utc()
                .timestamp()
        })
        .map_err(|error| super::ArgError::Date {
            text: s.to_string(),
            error,
        })
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let config = GeneratorConfig {
        pages: args.pages,
        weeks: args.weeks,
        seed: args.seed,
        queries: args.queries,
        max_file_bytes: args.max_file_mb.max(1) << 20,
        name: args.name,
        sites: usize::try_from(args.sites)?,
        host: args.host,
        origin: args.start_date.unwrap_or(GeneratorConfig::default().origin),
        correlation: ChangeCorrelation {
            strength: args.change_correlation,
            groups: args.correlate,
        },
    };
    let site = generate_site(&config, &args.out)?;
    let t = &site.truth;
    if args.json {
        let files: Vec<String> = site
            .warc_files
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        let out = serde_json::json!({
            "config": config,
            "warc_files": files,
            "query_log": site.query_log.display().to_string(),
            "truth": t,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    println!("corpus:    {}", site.corpus_dir.display());
    for f in &site.warc_files {
        let bytes = std::fs::metadata(f).map(|m| m.len()).unwrap_or(0);
        println!("  {} ({bytes} bytes)", f.display());
    }
    println!("query log: {}", site.query_log.display());
    println!(
        "pages: {} total, {} at week 0, {} at week {}, {} created, {} deleted, {} returned",
        t.pages_total,
        t.pages_week0,
        t.pages_last_week,
        config.weeks - 1,
        t.pages_created,
        t.pages_deleted,
        t.pages_returned
    );
    println!(
        "records: {} ({} 200 OK, {} 404); per week: {:?}",
        t.records_ok + t.records_gone,
        t.records_ok,
        t.records_gone,
        t.records_per_week
    );
    let h = t.changed_weeks_histogram();
    println!(
        "pages by changed weeks: 0: {}, 1: {}, 2: {}, 3-5: {}, 6-10: {}, 11-20: {}, 21+: {}",
        h[0], h[1], h[2], h[3], h[4], h[5], h[6]
    );
    let k = &t.change_kinds;
    println!(
        "changes: {} ad churn, {} topical edits, {} typos, {} link additions",
        k.ad_churn, k.topical_edit, k.typo, k.link_added
    );
    println!(
        "in-links: max {}, median {}",
        t.max_in_links, t.median_in_links
    );
    if t.sites.len() > 1 || config.correlation.is_active() {
        let sites: Vec<String> = t
            .sites
            .iter()
            .map(|s| {
                format!(
                    "{} ({} pages, {} directories)",
                    s.host, s.pages, s.directories
                )
            })
            .collect();
        println!("sites: {}", sites.join(", "));
        println!(
            "change correlation {} within {}",
            config.correlation.strength,
            config.correlation.groups.names()
        );
    }
    let l = &t.log;
    println!(
        "log: {} lines ({} with clicks, {} off-site, {} result-page repeats), {} users, {} distinct queries",
        l.lines, l.click_lines, l.offsite_lines, l.repeat_lines, l.users, l.distinct_queries
    );
    Ok(())
}
