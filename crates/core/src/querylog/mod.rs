//! Query logs: AOL 2006 (collection layout and per-user archive), Excite 1997, plain text.
//!
//! Every layout is read into the same [`QueryLog`]: a list of query submissions in log order,
//! each with a user, an optional timestamp and the raw query text. The [`workload`] module turns
//! a log into the frequencies the refresher and the metrics weight by.

pub mod detect;
pub mod layouts;
pub mod term_workload;
pub mod time;
pub mod workload;

use crate::error::SkippedInput;

/// One submission of a query by a user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submission {
    /// Anonymised user id as written in the log (empty when the layout has none).
    pub user: String,
    /// Submission time, seconds since the Unix epoch (the log's local time read as UTC).
    pub time: Option<i64>,
    /// The query text as typed (not normalised).
    pub query: String,
    /// Rank of the clicked result, when the log records one (AOL `ItemRank`).
    pub(crate) click_rank: Option<u32>,
    /// Clicked URL, when the log records one (AOL `ClickURL`).
    pub(crate) click_url: Option<String>,
    /// How many times this submission counts (plain layout's optional count; 1 otherwise).
    pub count: u64,
}

/// The layouts the reader understands; detected from content unless forced.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum LogLayout {
    /// AOL 2006 collection: `AnonID\tQuery\tQueryTime[\tItemRank\tClickURL]`, header optional.
    Aol,
    /// A tar archive of per-user AOL histories (`<AnonID>.txt`: `query\ttime`, URL lines, blank).
    AolPerUser,
    /// Excite 1997: `userid\tYYMMDDhhmmss\tquery`.
    Excite,
    /// One query per line, optionally followed by `\tcount`.
    Plain,
}

/// A parsed query log.
#[derive(Debug, Clone)]
pub struct QueryLog {
    pub layout: LogLayout,
    /// Lines read (data lines, not counting an AOL header).
    pub lines: u64,
    /// Submissions in log order, after collapsing result-page repeats unless disabled.
    pub submissions: Vec<Submission>,
    /// The first lines that could not be used (at most
    /// [`layouts::MAX_SKIP_EXAMPLES`]), with the reason; reported, never silently dropped.
    pub skipped: Vec<SkippedInput>,
    /// How many lines could not be used (all of them; `skipped` keeps only the first few).
    pub skipped_lines: u64,
    /// Lines that record a click: AOL collection lines with a `ClickURL`, per-user URL lines.
    /// (Added by the querylog task: the README's counts check clicks survive collapsing.)
    pub click_lines: u64,
    /// The rank of every click line that records one (AOL `ItemRank`), in log order — also of
    /// the extra clicks that collapse into one submission, so the viewing-likelihood exponent
    /// can be fitted on every click.
    pub click_ranks: Vec<u32>,
    /// Lines that were not valid UTF-8 and were decoded lossily (U+FFFD for bad bytes).
    /// (Added by the querylog task.)
    pub non_utf8_lines: u64,
}

impl QueryLog {
    /// Number of distinct users among the submissions.
    pub fn users(&self) -> usize {
        let set: std::collections::HashSet<&str> =
            self.submissions.iter().map(|s| s.user.as_str()).collect();
        set.len()
    }

    /// Number of distinct exact query strings (not normalised; the empty string counts).
    pub fn distinct_query_strings(&self) -> usize {
        let set: std::collections::HashSet<&str> =
            self.submissions.iter().map(|s| s.query.as_str()).collect();
        set.len()
    }

    /// Earliest and latest submission time, when the layout records times.
    pub fn time_range(&self) -> Option<(i64, i64)> {
        let mut times = self.submissions.iter().filter_map(|s| s.time);
        let first = times.next()?;
        Some(times.fold((first, first), |(lo, hi), t| (lo.min(t), hi.max(t))))
    }

    /// The `n` most frequent exact query strings with their submission counts (× `count`),
    /// most frequent first, ties by query text.
    pub fn top_queries(&self, n: usize) -> Vec<(String, u64)> {
        let mut counts: std::collections::HashMap<&str, u64> = std::collections::HashMap::new();
        for s in &self.submissions {
            *counts.entry(s.query.as_str()).or_insert(0) += s.count;
        }
        let mut v: Vec<(String, u64)> = counts
            .into_iter()
            .map(|(q, c)| (q.to_string(), c))
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        v.truncate(n);
        v
    }
}
