//! The workload: normalised queries with frequencies, single-term decomposition, and paper
//! 003's relevance filter. (Being written: see the querylog task.)

use super::QueryLog;
use crate::corpus::Corpus;

/// Which relevance filter drops queries that do not fit the corpus.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RelevanceFilter {
    /// Paper 003: summed TF-IDF over the corpus below the knee of the sorted distribution.
    #[default]
    Knee,
    /// The same knee on summed TF-IDF divided by the number of query terms.
    KneeLengthNormalised,
    /// Keep every query that matches at least one page.
    None,
}

#[derive(Debug, Clone)]
pub struct WorkloadOptions {
    /// Keep only the `top_n` most frequent normalised queries before filtering (None: all).
    pub top_n: Option<usize>,
    pub filter: RelevanceFilter,
}

impl Default for WorkloadOptions {
    fn default() -> Self {
        WorkloadOptions {
            top_n: None,
            filter: RelevanceFilter::Knee,
        }
    }
}

/// One normalised query of the workload.
#[derive(Debug, Clone)]
pub struct WorkloadQuery {
    /// Distinct analyzed terms, in query order.
    pub terms: Vec<String>,
    /// Frequency f_q: submissions normalising to these terms.
    pub frequency: u64,
}

/// The workload Q (multi-term queries) and Q' (single terms with f_t).
#[derive(Debug, Clone, Default)]
pub struct Workload {
    /// Kept queries, most frequent first (ties by terms).
    pub queries: Vec<WorkloadQuery>,
    /// Single-term workload: `(term, f_t)`, most frequent first.
    pub single_terms: Vec<(String, u64)>,
}

impl Workload {
    pub fn build(log: &QueryLog, corpus: &Corpus, options: &WorkloadOptions) -> Workload {
        let _ = (log, corpus, options);
        todo!("querylog task")
    }
}
