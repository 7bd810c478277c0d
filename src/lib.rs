//! `refresher`: a search engine that decides what to re-crawl by what its users search for.
//!
//! Three crates: the refresher (`refresher-core`: what a deployed crawler runs), the judge
//! (`refresher-judge`: the live truth and the metrics against it; the core cannot reach it),
//! and this one, the drivers that put them together. Their modules follow the data flow of one
//! simulated time unit (see `ARCHITECTURE.md`):
//!
//! * [`corpus`]: the live Web — WARC snapshots turned into a version timeline per URL
//!   ([`corpus::LiveWeb`]), plus the synthetic site generator used as embedded default data.
//! * [`querylog`]: AOL / Excite / plain query logs and the workload derived from them.
//! * [`text`]: the one analyzer shared by the index, the workload and every scorer.
//! * [`index`]: the tantivy repository `W_L`, its single update path and the measurement hook.
//! * [`quality`]: viewing likelihood, score-to-rank functions, the ΔQ estimate;
//!   [`judge`]: exact metrics and exact ΔQ against the live Web.
//! * [`change`]: shingles and change-rate estimators.
//! * [`cluster`]: page features and repeated-bisection clustering (papers 000, 002).
//! * [`learn`]: score functions learned offline (paper 001's GP4C).
//! * [`fetch`]: the [`fetch::Fetcher`] seam — snapshots replayed, or a real crawl over HTTP;
//!   [`crawl`]: what the crawler knows of the pages it fetched.
//! * [`policy`]: the [`policy::RefreshPolicy`] seam and the refresh policies.
//! * [`refresh`]: the refresher, one unit of refresh work whatever drives it.
//! * [`sim`]: the time-stepped simulation, comparison sweeps and the estimate check;
//!   [`live`]: the refresher driven over real servers; [`mesh`]: work over timely workers.
//! * [`server`]: the HTTP API and web UI; [`report`]: SVG charts; [`client`]: log replay over
//!   HTTP; [`web_replay`]: snapshots served as a live site.

// Every function outside tests stays under `too-many-lines-threshold` (clippy.toml).
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

// The refresher (`refresher-core`) and the judge (`refresher-judge`), under the paths the
// drivers name them by.
pub use refresher_core::{
    cache, change, cluster, corpus, crawl, error, fetch, index, learn, optimise, policy, progress,
    quality, querylog, refresh, signal, terminal, text,
};
pub use refresher_judge as judge;

pub mod client;
pub mod live;
pub mod mesh;
pub mod report;
pub mod server;
pub mod sim;
pub mod web_replay;
