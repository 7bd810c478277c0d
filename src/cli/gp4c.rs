//! `refresher gp4c train`: paper 001's GP4C — evolve score functions on a corpus's change
//! matrix with the paper's protocol and write the selected function for `--policy gp4c`.

use std::path::{Path, PathBuf};

use anyhow::Context;
use refresher::change::ChangeMatrix;
use refresher::learn::gp4c::{train, GpConfig, Metric, Rule, TerminalSet, TrainConfig};

use super::inputs::CorpusArgs;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(clap::Subcommand)]
pub enum Command {
    /// Evolve score functions (5 page folds × time thirds, paper 001 §5.2) and write the
    /// selected one: `--out FILE` holds the function as text, FILE's `.json` sibling the
    /// validation and test figures of every fold against the paper's baselines.
    Train(TrainArgs),
}

/// The fitness measure.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fitness {
    /// Paper 001 Eq. (1).
    Changerate,
    /// Paper 001 Eq. (2)–(3) (the authors' discount).
    Ndcg,
}

/// What `--budget-share` is when not given: the paper's 5 % per cycle.
const DEFAULT_BUDGET_SHARE: f64 = 0.05;
/// What `--warmup-units` is when not given: the paper's two cycles.
const DEFAULT_WARMUP_UNITS: u32 = 2;

#[derive(clap::Args)]
#[command(group = clap::ArgGroup::new("source").required(true).multiple(false))]
pub struct TrainArgs {
    /// The corpus (its page × unit change matrix is the training data), or with
    /// --changes-file a gp4c change file instead.
    #[command(flatten)]
    pub(crate) corpus: OptionalCorpus,
    /// Fitness of the evolution.
    #[arg(long, value_enum, default_value_t = Fitness::Changerate)]
    pub(crate) fitness: Fitness,
    /// Terminal set: basic (n, X, t) or all (+ CG, NAD, SAD, AAD, GAD).
    #[arg(long, value_enum, default_value_t = TerminalSet::Basic)]
    pub(crate) terminals: TerminalSet,
    /// Seed of the evolution.
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// Individuals per generation (paper: 300).
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u32).range(2..=100_000))]
    pub(crate) population: u32,
    /// Generations (paper: 50).
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(0..=10_000))]
    pub(crate) generations: u32,
    /// Page folds (paper: 5): one tests, one validates, the rest train.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(3..=100))]
    pub(crate) folds: u32,
    /// Use every cycle in every segment instead of the paper's thirds.
    #[arg(long)]
    pub(crate) no_time_split: bool,
    /// Share of a segment's pages visited per cycle, in (0, 1] (paper: 0.05; k = ⌊share ×
    /// pages⌋) [default: 0.05].
    #[arg(long, value_name = "F")]
    pub(crate) budget_share: Option<f64>,
    /// Kept as an alias of --budget-share (prints a note).
    #[arg(long, hide = true, value_name = "F")]
    pub(crate) resources: Option<f64>,
    /// Warm-up cycles of each simulated segment (paper: 2) [default: 2].
    #[arg(long, value_name = "W")]
    pub(crate) warmup_units: Option<u32>,
    /// Kept as an alias of --warmup-units (prints a note).
    #[arg(long, hide = true, value_name = "W")]
    pub(crate) warmup: Option<u32>,
    /// Which rule picks the written function: the best in training (the paper's), or
    /// validation-penalised Sum / Avg.
    #[arg(long, value_enum, default_value_t = Rule::Best)]
    pub(crate) select: Rule,
    /// The function's file (its `.json` sibling gets the report).
    #[arg(long)]
    pub(crate) out: PathBuf,
    /// Print the report as JSON on stdout.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `--corpus` (with its `--unit-days`) or `--changes-file`.
#[derive(clap::Args)]
pub struct OptionalCorpus {
    /// A WARC file or directory of them.
    #[arg(long, group = "source")]
    pub(crate) corpus: Option<PathBuf>,
    /// A change file in gp4c's layout (`export-changes --format gp4c` writes one).
    #[arg(long, group = "source")]
    pub(crate) changes_file: Option<PathBuf>,
    /// Length of one time unit in days (with --corpus).
    #[arg(long, default_value_t = 7, value_parser = clap::value_parser!(u32).range(1..), conflicts_with = "changes_file")]
    pub(crate) unit_days: u32,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        Command::Train(args) => train_command(args),
    }
}

fn matrix(source: &OptionalCorpus) -> anyhow::Result<ChangeMatrix> {
    if let Some(path) = &source.changes_file {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let m = ChangeMatrix::parse_gp4c(&text).with_context(|| format!("{}", path.display()))?;
        anyhow::ensure!(m.pages() > 0, "{}: no page", path.display());
        return Ok(m);
    }
    let corpus = source.corpus.clone().expect("clap requires one source");
    let args = CorpusArgs::single(corpus, source.unit_days);
    let (corpus, _report) = args.load()?;
    Ok(ChangeMatrix::from_corpus(&corpus))
}

fn report_path(out: &Path) -> PathBuf {
    let json = out.with_extension("json");
    if json == out {
        out.with_extension("report.json")
    } else {
        json
    }
}

fn train_command(args: TrainArgs) -> anyhow::Result<()> {
    use super::former_flags::one_of;
    let (budget_share, share_alias) = one_of(
        "--budget-share",
        args.budget_share,
        "--resources",
        args.resources,
    )?;
    let (warmup_units, warmup_alias) =
        one_of("--warmup-units", args.warmup_units, "--warmup", args.warmup)?;
    let former: Vec<_> = share_alias.into_iter().chain(warmup_alias).collect();
    super::former_flags::print_notes(&former);
    let budget_share = budget_share.unwrap_or(DEFAULT_BUDGET_SHARE);
    if !(budget_share > 0.0 && budget_share <= 1.0) {
        let flag = match (args.budget_share, args.resources) {
            (None, Some(_)) => "--resources",
            _ => "--budget-share",
        };
        anyhow::bail!("{flag} {budget_share}: must be in (0, 1]");
    }
    let matrix = matrix(&args.corpus)?;
    let gp = GpConfig {
        population: args.population as usize,
        generations: args.generations as usize,
        ..GpConfig::default()
    };
    let metric = match args.fitness {
        Fitness::Changerate => Metric::ChangeRate,
        Fitness::Ndcg => Metric::Ndcg,
    };
    let mut config = TrainConfig::new(gp, metric, args.terminals, args.seed);
    config.folds = args.folds as usize;
    config.time_split = !args.no_time_split;
    config.resources = budget_share;
    config.warmup = warmup_units.unwrap_or(DEFAULT_WARMUP_UNITS) as usize;
    let bar = refresher::progress::bar(config.folds as u64, "gp4c folds", false);
    let report = train(&matrix, &config, &|fold| bar.set_position(fold as u64))
        .map_err(|e| anyhow::anyhow!("gp4c train: {e}"))?;
    bar.finish_and_clear();
    let (fold, chosen) = report
        .chosen(args.select)
        .ok_or_else(|| anyhow::anyhow!("gp4c train: no function was selected"))?;
    let text = format!(
        "# GP4C {} function (fitness {}, terminals {}, seed {}, fold {fold}); refresh with --policy gp4c --param function=FILE\n{}\n",
        args.select.as_str(),
        metric.as_str(),
        match args.terminals {
            TerminalSet::Basic => "basic",
            TerminalSet::All => "all",
        },
        args.seed,
        chosen.function
    );
    std::fs::write(&args.out, text).with_context(|| format!("writing {}", args.out.display()))?;
    let mut json = serde_json::to_value(&report)?;
    json["chosen"] = serde_json::json!({
        "rule": args.select,
        "fold": fold,
        "function": chosen.function,
    });
    let report_file = report_path(&args.out);
    std::fs::write(&report_file, serde_json::to_string_pretty(&json)?)
        .with_context(|| format!("writing {}", report_file.display()))?;
    if args.json {
        println!("{json}");
        return Ok(());
    }
    println!(
        "{} pages × {} cycles, {} folds, {} × {} generations, {:.1} s",
        report.pages,
        report.cycles,
        report.folds.len(),
        config.gp.population,
        config.gp.generations,
        report.seconds
    );
    println!("fold  rule  test ChangeRate  test NDCG  validation  function");
    for f in &report.folds {
        for s in &f.selected {
            println!(
                "{:>4}  {:<4}  {:>15.4}  {:>9.4}  {:>10.4}  {}",
                f.fold,
                s.rule.as_str(),
                s.test.change_rate,
                s.test.ndcg,
                s.validation_fitness,
                s.function
            );
        }
    }
    println!("mean over the test folds:   ChangeRate   NDCG");
    for (name, s) in &report.mean_test {
        println!("  {name:<24} {:>10.4} {:>6.4}", s.change_rate, s.ndcg);
    }
    println!(
        "wrote {} (fold {fold}, {}: {}) and {}",
        args.out.display(),
        args.select.as_str(),
        chosen.function,
        report_file.display()
    );
    Ok(())
}
