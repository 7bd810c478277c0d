//! Clustering of pages for the sampling policies of papers 000 and 002.
//!
//! * [`rbc`]: repeated-bisection spherical k-means with CLUTO's I2 criterion (paper 000 §3.3,
//!   Eq. 3–4), on dense or sparse rows.
//! * [`tfidf`]: tf-idf vectors over the most frequent non-stop terms (paper 000 §3.1), the input
//!   of the auxiliary word clusterings.
//! * [`features`]: the 48 static and dynamic page features of paper 000 §3.1–3.2, min–max
//!   scaled, from a [`features::FeatureInput`] per page.

pub mod features;
pub mod rbc;
pub mod tfidf;

pub use rbc::{repeated_bisection, Clustering, DenseRows, RbcConfig, Rows, SparseRows};
