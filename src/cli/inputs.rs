//! Reading the two inputs every command shares: a corpus and a query log, turned into a
//! workload. One set of flags, one loader, so `ingest`, `simulate`, `compare` and
//! `estimate-check` read the same data the same way.

use std::path::PathBuf;

use anyhow::Context;
use refresher::corpus::ingest::{load_corpus, IngestOptions, IngestReport};
use refresher::corpus::Corpus;
use refresher::querylog::layouts::{read_log, ReadOptions, DEFAULT_MAX_SKIPPED_SHARE};
use refresher::querylog::workload::{RelevanceFilter, Workload, WorkloadOptions};
use refresher::querylog::{LogLayout, QueryLog};

/// Flags that say how to read the corpus.
#[derive(clap::Args, Debug, Clone)]
pub struct CorpusArgs {
    /// A WARC file (`.warc` or `.warc.gz`) or a directory of them.
    #[arg(long)]
    pub corpus: PathBuf,
    /// Length of one time unit in days.
    #[arg(long, default_value_t = 7, value_parser = clap::value_parser!(u32).range(1..))]
    pub unit_days: u32,
}

/// Flags that say how to turn a query log into a workload.
#[derive(clap::Args, Debug, Clone)]
pub struct WorkloadArgs {
    /// Force the log layout instead of detecting it from the content.
    #[arg(long, value_enum)]
    pub layout: Option<LogLayout>,
    /// Count consecutive re-submissions of a query by the same user (result-page requests)
    /// separately instead of once.
    #[arg(long)]
    pub keep_repeats: bool,
    /// Keep only the N most frequent normalised queries before the relevance filter.
    #[arg(long)]
    pub top_queries: Option<usize>,
    /// Relevance filter: paper 003's knee on summed TF-IDF (default), the same per query term,
    /// or none.
    #[arg(long, value_enum, default_value_t = RelevanceFilter::Knee)]
    pub filter: RelevanceFilter,
    /// Fail when more than this share (0..=1) of the log's lines cannot be read (default:
    /// when most lines are bad); the first skipped lines are reported either way.
    #[arg(long, value_name = "SHARE", default_value_t = DEFAULT_MAX_SKIPPED_SHARE, value_parser = parse_share)]
    pub max_skipped_share: f64,
}

/// Parses a share in `0..=1` (for `--max-skipped-share`).
pub fn parse_share(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .parse()
        .map_err(|_| format!("`{s}` is not a number (expected a share between 0 and 1)"))?;
    if !(0.0..=1.0).contains(&v) {
        return Err(format!("{v} is not between 0 and 1"));
    }
    Ok(v)
}

impl CorpusArgs {
    pub fn load(&self) -> anyhow::Result<(Corpus, IngestReport)> {
        let options = IngestOptions {
            unit_seconds: i64::from(self.unit_days) * 24 * 3600,
            origin: None,
        };
        load_corpus(&self.corpus, &options)
            .with_context(|| format!("reading corpus {}", self.corpus.display()))
    }
}

impl WorkloadArgs {
    pub fn read(&self, log: &std::path::Path) -> anyhow::Result<QueryLog> {
        let options = ReadOptions {
            layout: self.layout,
            keep_repeats: self.keep_repeats,
            max_skipped_share: self.max_skipped_share,
        };
        read_log(log, &options).with_context(|| format!("reading query log {}", log.display()))
    }

    pub fn workload(&self, log: &QueryLog, corpus: &Corpus) -> Workload {
        let options = WorkloadOptions {
            top_n: self.top_queries,
            filter: self.filter,
        };
        Workload::build(log, corpus, &options)
    }
}
