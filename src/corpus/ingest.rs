//! Building a [`Corpus`] from WARC files. (Being written: see the corpus-ingest task.)

use std::path::Path;

use super::{clock::WEEK_SECONDS, Corpus};
use crate::error::{InputError, SkippedInput};

/// How captures are mapped onto time units.
#[derive(Debug, Clone)]
pub struct IngestOptions {
    /// Length of one time unit in seconds (default: one week).
    pub unit_seconds: i64,
    /// Start of unit 0 (default: the earliest capture).
    pub origin: Option<i64>,
}

impl Default for IngestOptions {
    fn default() -> Self {
        IngestOptions {
            unit_seconds: WEEK_SECONDS,
            origin: None,
        }
    }
}

/// What ingest read, kept, and skipped.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct IngestReport {
    pub files: usize,
    pub records: u64,
    pub responses_ok: u64,
    pub responses_gone: u64,
    pub other_records: u64,
    /// Decompressed HTTP body bytes of response records.
    pub body_bytes: u64,
    /// Response records per time unit (200 and 404 together).
    pub records_per_unit: Vec<u64>,
    pub skipped: Vec<SkippedInput>,
}

/// Reads a WARC file or every `.warc`/`.warc.gz` file of a directory into a corpus.
pub fn load_corpus(
    path: &Path,
    options: &IngestOptions,
) -> Result<(Corpus, IngestReport), InputError> {
    let _ = (path, options);
    todo!("corpus-ingest task")
}
