//! Parsers for each log layout. (Being written: see the querylog task.)

use std::path::Path;

use super::{LogLayout, QueryLog};
use crate::error::InputError;

/// Options for reading a log.
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// Force a layout instead of detecting it.
    pub layout: Option<LogLayout>,
    /// Keep consecutive repeats of the same query by the same user (result-page requests),
    /// which are collapsed into one submission by default.
    pub keep_repeats: bool,
}

/// Reads a log file of any supported layout, plain or gzip.
pub fn read_log(path: &Path, options: &ReadOptions) -> Result<QueryLog, InputError> {
    let _ = (path, options);
    todo!("querylog task")
}
