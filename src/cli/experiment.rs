//! Inputs and outputs shared by the experiment commands (`simulate`, `compare`,
//! `estimate-check`, `demo`).

use refresher::quality::measure::DeltaQMethod;
use std::path::{Path, PathBuf};

use anyhow::Context;
use refresher::corpus::{Corpus, LiveWeb};
use refresher::index::ScoringKind;
use refresher::querylog::term_workload::{MetricWorkload, TermWorkload};
use refresher::querylog::workload::Workload;
use refresher::sim::{Environment, EnvironmentConfig, RunResult};

use super::inputs::{CorpusArgs, WorkloadArgs};

/// A corpus and a query log, plus how to turn the log into the evaluated workload.
#[derive(clap::Args, Debug, Clone)]
pub struct ExperimentArgs {
    #[command(flatten)]
    pub(crate) corpus: CorpusArgs,
    /// The query log (AOL collection or per-user archive, Excite, or plain; gzip or not).
    #[arg(long)]
    #[arg(help_heading = "Workload")]
    pub(crate) log: PathBuf,
    #[command(flatten)]
    pub(crate) workload: WorkloadArgs,
    /// Which queries the exact metrics evaluate: the workload's queries as issued (paper 003
    /// Eq. 5) or the single-term workload.
    #[arg(long, value_enum, default_value_t = MetricWorkload::Queries)]
    #[arg(help_heading = "Quality model")]
    pub(crate) metric_workload: MetricWorkload,
    /// Exponent of the viewing likelihood I(r) = c·r^-a (paper 003: 1.5).
    #[arg(long, default_value_t = 1.5)]
    #[arg(help_heading = "Quality model")]
    pub(crate) viewing_exponent: f64,
    /// Fit the exponent to the click ranks of the log (AOL `ItemRank`, ranks 1–10) by maximum
    /// likelihood instead of using --viewing-exponent; needs ≥ 10 clicks with a rank.
    #[arg(long)]
    #[arg(help_heading = "Quality model")]
    pub(crate) fit_viewing_exponent: bool,
    /// Pieces of each score-to-rank function F_q (paper 003: 3).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=64))]
    #[arg(help_heading = "Quality model")]
    pub(crate) pieces: u32,
    /// How ΔQ_A is measured: paper 003's estimate from the index hook, or the exact change of
    /// quality under the evaluated metric (every affected query, as issued, re-ranked; a
    /// simulation reference that reads the live Web).
    #[arg(long = "delta-q", value_enum, default_value_t = DeltaQMethod::Estimate)]
    #[arg(help_heading = "Quality model")]
    pub(crate) delta_q: DeltaQMethod,
    /// Change signals the site publishes, drawn from its true history with --seed (repeat to
    /// combine a sitemap and a feed): none, lastmod[:coverage=C,recall=R,false-positive=F,delay=D],
    /// lastmod:build-stamped, feed[:items=N,delay=D]. Online policies read them; oracle mode
    /// ignores them.
    #[arg(long = "signals", value_name = "SPEC", default_value = "none")]
    #[arg(help_heading = "Input")]
    pub(crate) signals: Vec<String>,
}

impl ExperimentArgs {
    /// `--signals`, parsed.
    pub fn signal_settings(&self) -> anyhow::Result<refresher::signal::SignalSettings> {
        refresher::signal::SignalSettings::parse(&self.signals)
            .map_err(|e| anyhow::anyhow!("--signals: {e}"))
    }
}

/// How many refreshes a unit gets: `--budget B` or paper 001's `--budget-share F` (B = round(F ×
/// pages)), and paper 001's warm-up (`--warmup-units W`). Flattened into `simulate`.
#[derive(clap::Args, Debug, Clone)]
pub struct BudgetArgs {
    /// Refreshes per time unit (B).
    #[arg(
        long,
        required_unless_present = "budget_share",
        conflicts_with = "budget_share",
        allow_hyphen_values = true
    )]
    #[arg(help_heading = "Budget")]
    pub(crate) budget: Option<usize>,
    /// The budget as a share of the corpus's pages, in (0, 1]: B = round(F × pages) (paper 001
    /// refreshes 5 % of the pages per cycle: 0.05).
    #[arg(long, value_name = "F", allow_hyphen_values = true)]
    #[arg(help_heading = "Budget")]
    pub(crate) budget_share: Option<f64>,
    #[command(flatten)]
    pub(crate) warmup: WarmupArgs,
}

impl BudgetArgs {
    /// The budget for a corpus of `pages` pages.
    pub fn budget(&self, pages: usize) -> anyhow::Result<usize> {
        match (self.budget, self.budget_share) {
            (Some(b), _) => Ok(b),
            (None, Some(f)) => budget_from_share("--budget-share", f, pages),
            (None, None) => anyhow::bail!("give --budget or --budget-share"),
        }
    }
}

/// Paper 001's warm-up, shared by `simulate` and `compare`.
#[derive(clap::Args, Debug, Clone)]
pub struct WarmupArgs {
    /// Refresh every page at units 1..=W outside the budget and judge from unit W+1 on
    /// (paper 001 §5.2 warms up with W = 2). 0: no warm-up.
    #[arg(long, value_name = "W", default_value_t = 0)]
    #[arg(help_heading = "Budget")]
    pub(crate) warmup_units: u32,
    /// What oracle-mode policies are told of the true history: `all` (default: every unit's
    /// changes, the judged ones included) or `warm-up` (only the changes of units 1..=W, as a
    /// crawler that watched every page until then could know them: the oracle without
    /// knowledge of the future). Needs --warmup-units W ≥ 1.
    #[arg(long, value_name = "WHICH", value_enum, default_value = "all")]
    #[arg(help_heading = "Policy")]
    pub(crate) oracle_history: refresher::sim::run::OracleHistory,
}

impl WarmupArgs {
    /// The warm-up units, checked against a corpus of `units` units (unit 0 is the initial
    /// crawl; at least one unit must be left to judge).
    pub fn checked(&self, units: u32) -> anyhow::Result<u32> {
        refresher::sim::run::check_warmup_units("--warmup-units", self.warmup_units, units)
            .map_err(anyhow::Error::msg)
    }

    /// The oracle history choice, checked against the modes the runs use (`warm-up` needs
    /// an oracle-mode run and a warm-up).
    pub fn oracle_history_for(
        &self,
        modes: &[refresher::policy::FitMode],
    ) -> anyhow::Result<refresher::sim::run::OracleHistory> {
        use refresher::policy::FitMode;
        let mode = if modes.contains(&FitMode::Oracle) {
            FitMode::Oracle
        } else {
            FitMode::Online
        };
        refresher::sim::run::check_oracle_history(
            ("--oracle-history", "--warmup-units"),
            self.oracle_history,
            mode,
            self.warmup_units,
        )
        .map_err(anyhow::Error::msg)?;
        Ok(self.oracle_history)
    }
}

/// The summary line of a warm-up of `warmup_units` (`None` without one), saying what an
/// oracle-mode run was told of the history.
pub fn warm_up_line(
    warmup_units: u32,
    mode: refresher::policy::FitMode,
    history: refresher::sim::run::OracleHistory,
) -> Option<String> {
    use refresher::policy::FitMode;
    use refresher::sim::run::OracleHistory;
    let told = match (mode, history) {
        (FitMode::Oracle, OracleHistory::WarmUp) => {
            "; the oracle is told the warm-up's changes only"
        }
        (FitMode::Oracle, OracleHistory::All) => "; the oracle is told every unit's changes",
        (FitMode::Online, _) => "",
    };
    (warmup_units > 0).then(|| {
        format!("warm-up: units 1..={warmup_units} refreshed every page and are not judged{told}")
    })
}

/// What an oracle run is, in one line, when it knows the future: fitted on the whole history,
/// the judged units included, it is an upper bound no crawler reaches (`None` online, or when
/// the oracle is told the warm-up only).
pub const ORACLE_BOUND: &str = "oracle mode knows the future (fitted on the whole history, \
     judged units included): an upper bound no crawler reaches; online mode is what a deployed \
     crawler runs";

/// [`ORACLE_BOUND`] when `mode` and `history` make a run that knows the future.
pub fn oracle_bound_line(
    mode: refresher::policy::FitMode,
    history: refresher::sim::run::OracleHistory,
) -> Option<&'static str> {
    use refresher::policy::FitMode;
    use refresher::sim::run::OracleHistory;
    (mode == FitMode::Oracle && history == OracleHistory::All).then_some(ORACLE_BOUND)
}

/// Checks a share of the pages given to `flag` before any input is read: in (0, 1].
pub fn check_share(flag: &str, share: f64) -> anyhow::Result<()> {
    if !(share > 0.0 && share <= 1.0) {
        anyhow::bail!("{flag} {share}: a share of the pages must be in (0, 1]");
    }
    Ok(())
}

/// `round(share × pages)`, for `flag` (named in the error): the share must be in (0, 1] and
/// give at least one page.
pub fn budget_from_share(flag: &str, share: f64, pages: usize) -> anyhow::Result<usize> {
    check_share(flag, share)?;
    let budget = (share * pages as f64).round() as usize;
    if budget == 0 {
        anyhow::bail!(
            "{flag} {share}: {share} × {pages} pages rounds to a budget of 0; give a larger share"
        );
    }
    Ok(budget)
}

/// The loaded inputs of an experiment.
pub struct Loaded {
    pub(crate) corpus: Corpus,
    pub(crate) workload: Workload,
    pub(crate) args: ExperimentArgs,
}

impl ExperimentArgs {
    pub fn load(&self) -> anyhow::Result<Loaded> {
        if !(self.viewing_exponent > 1.0 && self.viewing_exponent <= 10.0) {
            anyhow::bail!(
                "--viewing-exponent {}: must be in (1, 10] (the likelihoods of a long list must sum to a finite value)",
                self.viewing_exponent
            );
        }
        // The log is read (one thread: gzip and line parsing are sequential) while the corpus
        // is ingested (a reading thread plus the rayon pool).
        let (corpus, log) = std::thread::scope(|scope| {
            let log = scope.spawn(|| self.workload.read(&self.log));
            let corpus = self.corpus.load();
            let log = log.join().expect("query log reading thread panicked");
            (corpus, log)
        });
        let (corpus, _report) = corpus?;
        let log = log?;
        if corpus.units() < 2 {
            anyhow::bail!(
                "{}: the corpus spans {} time unit(s); a simulation needs at least 2",
                self.corpus.display(),
                corpus.units()
            );
        }
        let mut args = self.clone();
        if self.fit_viewing_exponent {
            let ranks = &log.click_ranks;
            let a = refresher::quality::viewing::fit_exponent(ranks, 10).ok_or_else(|| {
                anyhow::anyhow!(
                    "--fit-viewing-exponent: {} has {} click(s) with a rank in 1..=10; at least 10 are needed",
                    self.log.display(),
                    ranks.iter().filter(|&&r| (1..=10).contains(&r)).count()
                )
            })?;
            eprintln!(
                "viewing likelihood exponent fitted to {} click ranks: {a:.3}",
                ranks.len()
            );
            args.viewing_exponent = a;
        }
        let workload = self.workload.workload(&log, &corpus);
        if workload.queries.is_empty() {
            anyhow::bail!(
                "{}: no query of the log matches the corpus after the relevance filter; nothing to evaluate",
                self.log.display()
            );
        }
        Ok(Loaded {
            corpus,
            workload,
            args,
        })
    }
}

impl Loaded {
    /// The policy-independent simulation environment for one scoring function.
    pub fn environment(&self, scoring: ScoringKind) -> anyhow::Result<Environment<'_>> {
        let workload = TermWorkload::new(
            &self.workload,
            &self.corpus.vocabulary,
            self.args.metric_workload,
        );
        let config = EnvironmentConfig {
            scoring,
            likelihood: refresher::quality::ViewingLikelihood::new(self.args.viewing_exponent),
            pieces: self.args.pieces as usize,
            delta_q: self.args.delta_q,
        };
        let spinner = refresher::progress::spinner("measuring");
        let env = Environment::new(&self.corpus, workload, config)
            .context("building the simulation environment")?;
        spinner.finish_and_clear();
        Ok(env)
    }
}

/// A CSV file written through the `csv` crate (RFC 4180: fields holding commas, quotes or
/// line breaks are quoted), so any CSV reader reads what the program writes.
pub fn csv_file(path: &Path) -> anyhow::Result<csv::Writer<std::fs::File>> {
    csv::Writer::from_path(path).with_context(|| format!("writing {}", path.display()))
}

/// Writes a run's per-unit metrics (CSV and JSON) and its refreshed pages.
pub fn write_run(dir: &Path, result: &RunResult, corpus: &Corpus) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let name = format!(
        "{}-{}-B{}",
        result.policy,
        result.mode.as_str(),
        result.budget
    );
    let mut f = csv_file(&dir.join(format!("{name}.csv")))?;
    f.write_record([
        "unit",
        "quality",
        "fresh_at_10",
        "map_at_10",
        "refreshed",
        "change_ratio",
        "weighted_change_ratio",
        "ndcg",
        "obsolete_pages",
        "estimated_delta_q",
        "ndcg_at_10",
        "p_at_10",
        "schedule_ndcg",
        "new_page_fetches",
        "refresh_fetches",
        "frontier_pages",
        "change_rate",
        "gp4c_ndcg",
        "pagerank_weighted_change_ratio",
        "fresh_at_10_fixed_k",
        "map_at_10_retrieved",
        "map_at_10_tau0",
    ])?;
    for r in &result.per_unit {
        f.write_record([
            r.unit.to_string(),
            r.search.quality.to_string(),
            r.search.fresh_at_10.to_string(),
            r.search.map_at_10.to_string(),
            r.refreshed.to_string(),
            r.change_ratio.to_string(),
            r.weighted_change_ratio.to_string(),
            r.ndcg.to_string(),
            r.obsolete_pages.to_string(),
            r.estimated_delta_q.to_string(),
            r.ndcg_at_10.to_string(),
            r.p_at_10.to_string(),
            r.schedule_ndcg.to_string(),
            r.new_page_fetches.to_string(),
            r.refresh_fetches.to_string(),
            r.frontier_pages.to_string(),
            r.change_rate.to_string(),
            r.gp4c_ndcg.to_string(),
            r.pagerank_weighted_change_ratio.to_string(),
            r.paper000.fresh_at_10_fixed_k.to_string(),
            r.paper000.map_at_10_retrieved.to_string(),
            r.paper000.map_at_10_tau0.to_string(),
        ])?;
    }
    f.flush()?;
    let json = dir.join(format!("{name}.json"));
    std::fs::write(&json, serde_json::to_string_pretty(result)?)
        .with_context(|| format!("writing {}", json.display()))?;
    let mut f = csv_file(&dir.join(format!("{name}.refreshed.csv")))?;
    f.write_record(["unit", "rank", "url"])?;
    // One entry per judged unit (after any warm-up), in the order of `per_unit`.
    for (record, pages) in result.per_unit.iter().zip(&result.refreshed_pages) {
        for (rank, &p) in pages.iter().enumerate() {
            f.write_record([
                record.unit.to_string(),
                (rank + 1).to_string(),
                corpus.url(p).to_string(),
            ])?;
        }
    }
    f.flush()?;
    Ok(())
}
