//! The `refresher` command line.

// Every function outside tests stays under `too-many-lines-threshold` (clippy.toml).
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

mod cli;

/// The simulations allocate and free many small vectors (postings, term lists, result lists)
/// from rayon threads; mimalloc's thread-local free lists make that markedly cheaper than
/// glibc's malloc.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{CommandFactory, Parser, Subcommand};

/// A search engine that decides what to re-crawl by what its users search for.
#[derive(Parser)]
#[command(
    name = "refresher",
    version = concat!(env!("CARGO_PKG_VERSION"), " (", env!("REFRESHER_COMMIT"), ")"),
    about
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The main job on the embedded default data: generate a synthetic site and log, summarise
    /// them, and compare every refresh policy.
    Demo(cli::demo::Args),
    /// Write a synthetic evolving site (WARC files) and an AOL-layout query log.
    Generate(cli::generate::Args),
    /// Read a corpus (and optionally a query log) and print a summary.
    Ingest(cli::ingest::Args),
    /// Run one refresh policy at one budget over every time unit and report the metrics.
    Simulate(cli::simulate::Args),
    /// Compare refresh policies over a budget grid: the budget each needs for a target quality.
    Compare(cli::compare::Args),
    /// List the refresh policy families and their parameters.
    Policies(cli::policies::Args),
    /// Check the ΔQ estimate against brute force and its forecastability (paper 003 Fig. 3).
    EstimateCheck(cli::estimate_check::Args),
    /// Serve the search API, dashboards and comparison pages over HTTP.
    Serve(cli::serve::Args),
    /// Send a query log to a running server; report throughput and latency percentiles.
    Replay(cli::replay::Args),
    /// Crawl real sites over HTTP, refreshing B pages per unit with a refresh policy.
    Crawl(cli::crawl::Args),
    /// Serve a WARC collection as a live website whose pages change on a clock.
    WebReplay(cli::web_replay::Args),
    /// Solve a WebFountain crawl-model instance (paper 004) for strategy 1, 2 or 3.
    Webfountain(cli::webfountain::Args),
    /// Write the corpus's per-page change strings in a peer's input format (paper 001's gp4c).
    ExportChanges(cli::export_changes::Args),
    /// Paper 001's GP4C: learn a refresh score function by genetic programming.
    Gp4c(cli::gp4c::Args),
    /// Write the flag reference (docs/cli, one page per command) from these definitions.
    #[command(hide = true)]
    HelpReference(cli::reference::Args),
}

fn main() {
    // Output piped into `head` and the like: end quietly when the reader goes away, as Unix
    // tools do, instead of panicking on the failed write.
    #[cfg(unix)]
    // SAFETY: called first thing in `main`, before any other thread exists; restoring the
    // default disposition of SIGPIPE has no other effect on the program.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // No transparent huge pages: mimalloc frees and reuses its small pages within 2 MiB
    // regions, so with THP the kernel zeroes whole huge pages again and again (a tenth of a
    // 10^5-page simulation's time went to it) and keeps them resident half used. Measured in
    // benches/README.md. Best effort: a kernel without the call keeps its default.
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with PR_SET_THP_DISABLE only sets a flag on this process's memory map.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Demo(args) => cli::demo::run(args),
        Command::Generate(args) => cli::generate::run(args),
        Command::Ingest(args) => cli::ingest::run(args),
        Command::Simulate(args) => cli::simulate::run(args),
        Command::Compare(args) => cli::compare::run(args),
        Command::Policies(args) => cli::policies::run(args),
        Command::EstimateCheck(args) => cli::estimate_check::run(args),
        Command::Serve(args) => cli::serve::run(args),
        Command::Replay(args) => cli::replay::run(args),
        Command::WebReplay(args) => cli::web_replay::run(args),
        Command::Crawl(args) => cli::crawl::run(args),
        Command::Webfountain(args) => cli::webfountain::run(args),
        Command::ExportChanges(args) => cli::export_changes::run(args),
        Command::Gp4c(args) => cli::gp4c::run(args),
        Command::HelpReference(args) => cli::reference::run(args, Cli::command()),
    };
    if let Err(err) = result {
        // Errors quote their inputs (paths, lines, header values): no escape sequence reaches
        // the terminal.
        let message = format!("refresher: {err:#}");
        eprintln!("{}", refresher::report::terminal_safe(&message));
        std::process::exit(1);
    }
}
