//! `refresher web-replay`: a WARC collection served as a live website on a clock.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use refresher::corpus::LiveWeb;
use refresher::web_replay::{self, FeedFormat, ReplayClock, ReplayOptions, ReplaySite};

use super::inputs::CorpusArgs;

#[derive(clap::Args)]
#[command(group = clap::ArgGroup::new("clock").required(true).args(["unit_seconds", "manual_clock"]))]
pub struct Args {
    #[command(flatten)]
    pub(crate) corpus: CorpusArgs,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8090")]
    pub(crate) addr: SocketAddr,
    /// Move to the next time unit every S seconds (fractions allowed).
    #[arg(long, value_name = "S", value_parser = parse_seconds)]
    pub(crate) unit_seconds: Option<f64>,
    /// Move to the next unit only on `POST /_clock/advance` (`GET /_clock` tells the unit).
    #[arg(long)]
    pub(crate) manual_clock: bool,
    /// Serve this file as every host's `/robots.txt` (default: allow everything).
    #[arg(long)]
    pub(crate) robots: Option<PathBuf>,
    /// Wait this many milliseconds before every answer (a slow site).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=600_000))]
    pub(crate) latency_ms: u64,
    /// Change signals the site publishes, drawn from the collection's history with --seed
    /// exactly as `simulate --signals` draws them (repeat to combine a sitemap and a feed):
    /// lastmod[:coverage=C,recall=R,false-positive=F,delay=D], lastmod:build-stamped,
    /// feed[:items=N,delay=D], none. The default, `lastmod`, is an accurate <lastmod> on
    /// every sitemap entry. Dates are the start of their unit on the collection's clock;
    /// a feed is served on every host as Atom at /feed.atom and as RSS 2.0 at /feed.rss (the
    /// same items, RSS dates in RFC 822), and robots.txt names the sitemap and one of the
    /// feeds (--robots-feed) in `Sitemap:` lines.
    #[arg(long = "signals", value_name = "SPEC", default_value = "lastmod")]
    pub(crate) signals: Vec<String>,
    /// The feed robots.txt names in a `Sitemap:` line (robots.txt has no line of its own for
    /// feeds; `crawl --read-signals` reads what it names): atom (/feed.atom) or rss
    /// (/feed.rss). Both are served; naming one keeps a crawler from reading the same
    /// changes twice. A crawl reads the other with `crawl --feed URL`.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = FeedFormat::Atom)]
    pub(crate) robots_feed: FeedFormat,
    /// Seed of the signal model's draws (give `simulate` the same --seed) and of --faults.
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// Fail requests as real sites fail, drawn with --seed per (URL, unit, attempt) so a
    /// resumed crawl meets the same faults (repeat for several kinds; the first given wins
    /// when several hit): 5xx, 429[:retry-after=S] (default 1), reset (the connection drops
    /// mid-body), stall[:seconds=S] (the body stops halfway for S s, default 30),
    /// timeout[:seconds=S] (no answer for S s, default 600), redirect-loop, bad-sitemap,
    /// bad-feed (the document cut in half); each with rate=R, the probability per request
    /// in [0, 1] (default 0.1), e.g. `--faults 5xx:rate=0.1 --faults 429:rate=0.05,retry-after=2`.
    /// robots.txt never fails; the attempt is how many times the URL was asked for in the
    /// unit, counted afresh when the clock is asked for the unit it is at (a restarted
    /// crawl). `GET /_faults` counts what was injected.
    #[arg(long = "faults", value_name = "SPEC")]
    pub(crate) faults: Vec<String>,
}

fn parse_seconds(s: &str) -> Result<f64, super::ArgError> {
    let v: f64 = s.parse().map_err(|_| super::ArgError::SecondsNotANumber {
        text: s.to_string(),
    })?;
    if !(v.is_finite() && (0.001..=31_536_000.0).contains(&v)) {
        return Err(super::ArgError::SecondsRange { value: v });
    }
    Ok(v)
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let robots = match &args.robots {
        Some(path) => Some(
            std::fs::read_to_string(path)
                .with_context(|| format!("reading --robots {}", path.display()))?,
        ),
        None => None,
    };
    let signals = refresher::signal::SignalSettings::parse(&args.signals)
        .map_err(|e| anyhow::anyhow!("--signals: {e}"))?;
    let faults = web_replay::faults::FaultSettings::parse(&args.faults, args.seed)
        .map_err(|e| anyhow::anyhow!("--faults {e}"))?;
    let (corpus, _) = args.corpus.load()?;
    let clock = match args.unit_seconds {
        Some(s) => ReplayClock::Every(Duration::from_secs_f64(s)),
        None => ReplayClock::Manual,
    };
    let site = Arc::new(ReplaySite::new(
        Arc::new(corpus),
        ReplayOptions {
            clock,
            robots,
            latency: Duration::from_millis(args.latency_ms),
            signals,
            signal_seed: args.seed,
            faults,
            robots_feed: args.robots_feed,
        },
    ));
    eprintln!(
        "collection: {} pages over {} units, hosts: {}; signals: {}; faults: {} (seed {})",
        site.corpus().page_count(),
        site.corpus().units(),
        site.hosts().join(", "),
        site.signals(),
        site.faults(),
        args.seed
    );
    let runtime = tokio::runtime::Runtime::new().context("starting the tokio runtime")?;
    runtime.block_on(async move {
        let (addr, handle) = web_replay::spawn(site, args.addr)
            .await
            .with_context(|| format!("listening on {}", args.addr))?;
        println!(
            "replaying on http://{addr}/ (unit 0; {}); crawl it with --resolve HOST={addr}",
            match clock {
                ReplayClock::Manual => "POST /_clock/advance moves on".to_string(),
                ReplayClock::Every(d) => format!("one unit every {:.3} s", d.as_secs_f64()),
            }
        );
        tokio::select! {
            result = handle => { result.context("server task")?.context("server")?; }
            _ = tokio::signal::ctrl_c() => eprintln!("stopping"),
        }
        Ok(())
    })
}
