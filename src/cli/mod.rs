//! One module per subcommand: argument parsing and output only; the work lives in the library.

pub mod compare;
pub mod crawl;
pub mod demo;
pub mod estimate_check;
pub mod experiment;
pub mod export_changes;
pub mod former_flags;
pub mod generate;
pub mod gp4c;
pub mod ingest;
pub mod inputs;
pub mod mesh_args;
pub mod policies;
pub mod policy_args;
pub mod reference;
pub mod replay;
pub mod serve;
pub mod simulate;
pub mod web_replay;
pub mod webfountain;

/// A flag value the command line's own value parsers refuse (clap prints it after
/// `invalid value '…' for '--flag'`).
#[derive(Debug, thiserror::Error)]
pub enum ArgError {
    /// A share that is not a number.
    #[error("`{text}` is not a number (expected a share between 0 and 1)")]
    ShareNotANumber { text: String },
    /// A share outside 0..=1.
    #[error("{value} is not between 0 and 1")]
    ShareRange { value: f64 },
    /// A duration in seconds that is not a number.
    #[error("{text:?} is not a number")]
    SecondsNotANumber { text: String },
    /// A duration outside 0.001 s to a year.
    #[error("{value} is outside 0.001..=31536000 seconds")]
    SecondsRange { value: f64 },
    /// A `key=value` flag without `=`.
    #[error("`{text}`: expected key=value")]
    NoKeyValue { text: String },
    /// A `key=value` flag with an empty key.
    #[error("`{text}`: empty key")]
    EmptyKey { text: String },
    /// A date that is not `YYYY-MM-DD`.
    #[error("`{text}` is not a YYYY-MM-DD date ({error})")]
    Date {
        text: String,
        error: chrono::ParseError,
    },
    /// A `--resolve` value without `=`.
    #[error("`{text}`: expected HOST=ADDR:PORT")]
    NoHostAddr { text: String },
    /// A `--resolve` address that is not `ADDR:PORT`.
    #[error("`{text}`: {addr:?} is not ADDR:PORT ({error})")]
    BadAddr {
        text: String,
        addr: String,
        error: std::net::AddrParseError,
    },
    /// A `--resolve` value with an empty host.
    #[error("`{text}`: empty host")]
    EmptyHost { text: String },
}
