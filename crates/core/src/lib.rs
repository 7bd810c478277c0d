//! `refresher-core`: the refresher itself — everything a deployed crawler runs, and nothing that
//! reads the live Web. The modules follow the data flow of one time unit:
//!
//! * [`corpus`]: page versions — WARC snapshots turned into a version timeline per URL
//!   ([`corpus::LiveWeb`]), plus the synthetic site generator used as embedded default data.
//! * [`querylog`]: AOL / Excite / plain query logs and the workload derived from them.
//! * [`text`]: the one analyzer shared by the index, the workload and every scorer.
//! * [`index`]: the tantivy repository `W_L`, its single update path and the measurement hook.
//! * [`quality`]: viewing likelihood, score-to-rank functions, the ΔQ estimate and its sinks.
//! * [`change`]: shingles and change-rate estimators.
//! * [`cluster`]: page features and repeated-bisection clustering (papers 000, 002).
//! * [`learn`]: score functions learned offline (paper 001's GP4C).
//! * [`signal`]: the change signals sites publish (sitemap `<lastmod>`, feeds).
//! * [`fetch`]: the [`fetch::Fetcher`] seam — snapshots replayed, or a real crawl over HTTP;
//!   [`crawl`]: what the crawler knows of the pages it fetched.
//! * [`policy`]: the [`policy::RefreshPolicy`] seam and the refresh policies.
//! * [`refresh`]: the [`refresh::Refresher`], one unit of refresh work whatever drives it.
//!
//! The judge (exact metrics against the live Web, exact ΔQ) is the `refresher-judge` crate,
//! which depends on this one and not the other way round: the compiler, not a convention,
//! keeps the refresher from reading the truth. The drivers (simulation, served engine, crawl of
//! real servers, CLI) are the `refresher` crate.
// Every function outside tests stays under `too-many-lines-threshold` (clippy.toml).
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

pub mod cache;
pub mod change;
pub mod cluster;
pub mod corpus;
pub mod crawl;
pub mod error;
pub mod fetch;
pub mod index;
pub mod learn;
pub mod optimise;
pub mod policy;
pub mod progress;
pub mod quality;
pub mod querylog;
pub mod refresh;
pub mod signal;
pub mod terminal;
pub mod text;
