//! Reading the two inputs every command shares: a corpus and a query log, turned into a
//! workload. One set of flags, one loader, so `ingest`, `simulate`, `compare` and
//! `estimate-check` read the same data the same way.

use std::path::PathBuf;

use anyhow::Context;
use refresher::corpus::ingest::{collection_paths, load_collections, IngestOptions, IngestReport};
use refresher::corpus::Corpus;
use refresher::querylog::layouts::{read_log, ReadOptions, DEFAULT_MAX_SKIPPED_SHARE};
use refresher::querylog::workload::{RelevanceFilter, Workload, WorkloadOptions};
use refresher::querylog::{LogLayout, QueryLog};

/// Flags that say how to read the corpus.
#[derive(clap::Args, Debug, Clone)]
pub struct CorpusArgs {
    /// A WARC file (`.warc` or `.warc.gz`), a directory of them, or a directory of collection
    /// folders. Repeat for several collections: each is aligned at its own first unit (unit 0
    /// = each collection's first capture period) and each host is a site.
    #[arg(long, required = true)]
    #[arg(help_heading = "Input")]
    pub(crate) corpus: Vec<PathBuf>,
    /// Length of one time unit in days: once for every collection, or once per --corpus (in
    /// the same order; aligned collections must have equally long units).
    #[arg(long, default_value = "7", value_parser = clap::value_parser!(u32).range(1..))]
    #[arg(help_heading = "Input")]
    pub(crate) unit_days: Vec<u32>,
}

/// Flags that say how to turn a query log into a workload.
#[derive(clap::Args, Debug, Clone)]
pub struct WorkloadArgs {
    /// Force the log layout instead of detecting it from the content.
    #[arg(long, value_enum)]
    #[arg(help_heading = "Workload")]
    pub(crate) layout: Option<LogLayout>,
    /// Count consecutive re-submissions of a query by the same user (result-page requests)
    /// separately instead of once.
    #[arg(long)]
    #[arg(help_heading = "Workload")]
    pub(crate) keep_repeats: bool,
    /// Keep only the N most frequent normalised queries before the relevance filter.
    #[arg(long)]
    #[arg(help_heading = "Workload")]
    pub(crate) top_queries: Option<usize>,
    /// Relevance filter: paper 003's knee on summed TF-IDF (default), the same per query term,
    /// or none.
    #[arg(long, value_enum, default_value_t = RelevanceFilter::Knee)]
    #[arg(help_heading = "Workload")]
    pub(crate) filter: RelevanceFilter,
    /// Fail when more than this share (0..=1) of the log's lines cannot be read (default:
    /// when most lines are bad); the first skipped lines are reported either way.
    #[arg(long, value_name = "SHARE", default_value_t = DEFAULT_MAX_SKIPPED_SHARE, value_parser = parse_share)]
    #[arg(help_heading = "Workload")]
    pub(crate) max_skipped_share: f64,
}

/// Parses a share in `0..=1` (for `--max-skipped-share`).
pub fn parse_share(s: &str) -> Result<f64, super::ArgError> {
    let v: f64 = s.parse().map_err(|_| super::ArgError::ShareNotANumber {
        text: s.to_string(),
    })?;
    if !(0.0..=1.0).contains(&v) {
        return Err(super::ArgError::ShareRange { value: v });
    }
    Ok(v)
}

impl CorpusArgs {
    /// One corpus path with the default unit (for commands that build the arguments).
    pub fn single(corpus: PathBuf, unit_days: u32) -> CorpusArgs {
        CorpusArgs {
            corpus: vec![corpus],
            unit_days: vec![unit_days],
        }
    }

    /// The `--corpus` paths as given, for messages.
    pub fn display(&self) -> String {
        self.corpus
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Every collection with its options: each `--corpus` expanded (a directory of collection
    /// folders is one collection per folder), with its `--unit-days`.
    fn sources(&self) -> anyhow::Result<Vec<(PathBuf, IngestOptions)>> {
        let per_corpus = match (self.unit_days.len(), self.corpus.len()) {
            (1, n) => vec![self.unit_days[0]; n],
            (u, n) if u == n => self.unit_days.clone(),
            (u, n) => anyhow::bail!(
                "--unit-days is given {u} times for {n} --corpus: give it once for every \
                 collection or once per --corpus"
            ),
        };
        let mut sources = Vec::new();
        for (path, &days) in self.corpus.iter().zip(&per_corpus) {
            let options = IngestOptions {
                unit_seconds: i64::from(days) * 24 * 3600,
                origin: None,
            };
            for collection in collection_paths(path)
                .with_context(|| format!("reading corpus {}", path.display()))?
            {
                sources.push((collection, options.clone()));
            }
        }
        Ok(sources)
    }

    /// Reads the corpus; a damaged archive file whose intact records were kept is warned of
    /// on stderr (file, record, byte offset), whatever the command.
    pub fn load(&self) -> anyhow::Result<(Corpus, IngestReport)> {
        let sources = self.sources()?;
        let (corpus, report) = load_collections(&sources)
            .with_context(|| format!("reading corpus {}", self.display()))?;
        for damage in &report.damaged {
            eprintln!(
                "warning: damaged archive file: {}",
                refresher::report::terminal_safe(&damage.to_string())
            );
        }
        Ok((corpus, report))
    }
}

/// The collections in text: one line per collection when there are several (a single
/// collection's dates are in the usual outputs already); nothing for one.
pub fn collection_lines(corpus: &Corpus) -> Vec<String> {
    if corpus.collections.len() < 2 {
        return Vec::new();
    }
    let mut lines = vec![format!(
        "{} collections, each aligned at its own first unit (unit 0 = each collection's first \
         capture period, units of {} days):",
        corpus.collections.len(),
        corpus.clock.unit_seconds as f64 / 86_400.0
    )];
    for c in &corpus.collections {
        let sites: Vec<String> = c
            .sites
            .iter()
            .map(|s| format!("{} {}", s.host, s.pages))
            .collect();
        lines.push(format!(
            "  {}: captured {} .. {}, units 0..{}, {} pages ({})",
            c.path,
            c.first_capture_date,
            c.last_capture_date,
            c.units.saturating_sub(1),
            c.pages,
            sites.join(", ")
        ));
    }
    lines
}

/// [`collection_lines`] on stdout.
pub fn print_collections(corpus: &Corpus) {
    for line in collection_lines(corpus) {
        println!("{}", refresher::report::terminal_safe(&line));
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
