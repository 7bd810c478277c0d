//! The repository index `W_L` on tantivy, its scorers, and the measurement hook.
//!
//! * [`Repository`]: the tantivy index (schema in [`schema`]) with a [`ForwardIndex`] beside
//!   it; one update path, [`Repository::apply`], which also runs the measurement hook
//!   ([`hook`], paper 003 §5.2) and pushes [`ScoreShift`]s into a [`ShiftSink`].
//! * [`stats`]: why scores use live statistics (tantivy counts deleted documents until a
//!   merge) and the `Bm25StatisticsProvider` that supplies them.
//! * [`scorer`]: BM25 (tantivy's own), Lucene classic TF-IDF and in-link count behind one
//!   [`Scorer`] trait, shared by search, the hook and the judge's `LiveScores`.
//! * [`shards`]: pages split over several repositories that score and rank as one.

pub mod forward;
pub mod hook;
pub mod posting_list;
pub mod repository;
pub mod schema;
pub mod scorer;
pub mod search;
pub mod served;
pub mod shards;
pub mod snapshot;
pub mod stats;

#[cfg(test)]
mod tests;
#[cfg(any(test, feature = "testutil"))]
pub mod testutil;

use std::path::PathBuf;

pub use forward::{
    rank_key, rank_order, score_of_rank_key, EditMark, ForwardDoc, ForwardIndex, Ranked,
};
pub use hook::{NullSink, RecordingSink, ScoreShift, ShiftSink, WorkloadTerms};
pub use repository::{forward_at, ApplyReport, PageUpdate, Repository, MAX_SEGMENTS};
pub use scorer::{DocLength, Score, Scorer, ScoringKind, Weight};
pub use search::{Hit, SearchResults};
pub use stats::{CollectionStats, LiveStatistics};

/// Errors of the repository index.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// The index directory could not be created or opened.
    #[error("index directory {path}: {source}")]
    Dir {
        path: PathBuf,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A tantivy-only operation (search, stored documents) on a forward-only repository.
    #[error(
        "this repository is forward-only (built for simulation): it has no tantivy index to search"
    )]
    ForwardOnly,
    #[error("tantivy: {0}")]
    Tantivy(#[from] tantivy::TantivyError),
    /// An index directory that cannot be served as asked (what it holds, what to do).
    #[error("index directory {path}: {message}")]
    Refused { path: PathBuf, message: String },
    /// Index files whose content does not match their checksum.
    #[error("{} index file(s) fail their checksum ({}): the index is damaged", files.len(), files.join(", "))]
    Damaged { files: Vec<String> },
    /// A change to a repository opened read-only.
    #[error("the index was opened read-only: it cannot be updated")]
    ReadOnly,
}
