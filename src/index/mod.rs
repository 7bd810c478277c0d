//! The repository index (being written: index task).
