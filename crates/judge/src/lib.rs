//! `refresher-judge`: what a simulation knows and a crawler never does — the live Web's truth
//! and the metrics measured against it.
//!
//! * [`live_scores`]: the live Web scored exactly as the repository is (`S(W_t[p], q)`).
//! * [`exact`]: the exact metrics (paper 003 Eq. 5 quality, top-10 freshness, MAP@10) of the
//!   repository against the live Web ([`exact::LiveTruth`], [`exact::evaluate`]).
//! * [`exact_delta`]: the exact ΔQ_A of one refresh under the evaluated metric
//!   (`--delta-q exact`, a reference the simulation driver hands the refresher as a
//!   [`refresher_core::quality::measure::MeasureDeltaQ`]).
//! * [`trec`]: the run and the live truth exported as TREC run and qrels files.
//!
//! This crate depends on `refresher-core`; the core does not depend on it.
// Every function outside tests stays under `too-many-lines-threshold` (clippy.toml).
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

// The core's modules under the paths the judge's code names them by.
use refresher_core::{corpus, index, quality, querylog, text};

pub mod exact;
pub mod exact_delta;
pub mod live_scores;
pub mod trec;

pub use live_scores::LiveScores;
