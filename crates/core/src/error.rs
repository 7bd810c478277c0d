//! Errors that name the input they came from.
//!
//! Every error a user can provoke with bad input says *where* (file, record or line) and *what*
//! was expected, in the spirit of ripgrep's messages.

use std::path::PathBuf;

/// An input problem located in a file.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The file could not be opened or read. (The I/O error is part of the message, not a
    /// `source`, so that error chains do not print it twice.)
    #[error("{path}: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    /// A record/line of the file is malformed. `location` is e.g. `record 12` or `line 345`.
    #[error("{path}: {location}: {message}")]
    Malformed {
        path: PathBuf,
        location: String,
        message: String,
    },
    /// The file holds no usable data at all.
    #[error("{path}: {message}")]
    Empty { path: PathBuf, message: String },
}

impl InputError {
    pub fn io(path: impl Into<PathBuf>, error: std::io::Error) -> Self {
        InputError::Io {
            path: path.into(),
            error,
        }
    }

    pub(crate) fn malformed(
        path: impl Into<PathBuf>,
        location: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        InputError::Malformed {
            path: path.into(),
            location: location.into(),
            message: message.into(),
        }
    }
}

/// A problem that was skipped (not fatal) but must be counted and reported to the user.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SkippedInput {
    pub path: PathBuf,
    pub location: String,
    pub(crate) reason: String,
}

impl std::fmt::Display for SkippedInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {}: {}",
            self.path.display(),
            self.location,
            self.reason
        )
    }
}
