//! `refresher`: a search engine that decides what to re-crawl by what its users search for.
//!
//! The modules follow the data flow of one simulated time unit (see `README.md`):
//!
//! * [`corpus`]: the live Web — WARC snapshots turned into a version timeline per URL
//!   ([`corpus::LiveWeb`]), plus the synthetic site generator used as embedded default data.
//! * [`querylog`]: AOL / Excite / plain query logs and the workload derived from them.
//! * [`text`]: the one analyzer shared by the index, the workload and every scorer.
//! * [`index`]: the tantivy repository `W_L`, its single update path and the measurement hook.
//! * [`quality`]: viewing likelihood, score-to-rank functions, the ΔQ estimate, exact metrics.
//! * [`change`]: shingles and change-rate estimators.
//! * [`cluster`]: page features and repeated-bisection clustering (papers 000, 002).
//! * [`learn`]: score functions learned offline (paper 001's GP4C).
//! * [`fetch`]: the [`fetch::Fetcher`] seam — snapshots replayed, or a real crawl over HTTP;
//!   [`crawl`]: what the crawler knows of the pages it fetched.
//! * [`policy`]: the [`policy::RefreshPolicy`] seam and the refresh policies.
//! * [`sim`]: the time-stepped simulation, comparison sweeps and the estimate check.
//! * [`server`]: the HTTP API and web UI; [`report`]: SVG charts.

// Every function outside tests stays under `too-many-lines-threshold` (clippy.toml).
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

pub mod cache;
pub mod change;
pub mod client;
pub mod cluster;
pub mod corpus;
pub mod crawl;
pub mod error;
pub mod fetch;
pub mod index;
pub mod learn;
pub mod live;
pub mod mesh;
pub mod optimise;
pub mod policy;
pub mod progress;
pub mod quality;
pub mod querylog;
pub mod refresh;
pub mod report;
pub mod server;
pub mod signal;
pub mod sim;
pub mod terminal;
pub mod text;
pub mod web_replay;
