//! One module per subcommand: argument parsing and output only; the work lives in the library.

pub mod compare;
pub mod crawl;
pub mod demo;
pub mod estimate_check;
pub mod experiment;
pub mod export_changes;
pub mod generate;
pub mod gp4c;
pub mod ingest;
pub mod inputs;
pub mod policies;
pub mod policy_args;
pub mod replay;
pub mod serve;
pub mod simulate;
pub mod web_replay;
pub mod webfountain;
