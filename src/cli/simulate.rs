//! `refresher simulate`: one policy at one budget over every unit of a corpus.

use std::path::{Path, PathBuf};

use refresher::corpus::{Corpus, LiveWeb};
use refresher::crawl::NewPages;
use refresher::index::ScoringKind;
use refresher::policy::family::ParamValue;
use refresher::policy::registry::family;
use refresher::policy::user_centric::Estimator;
use refresher::policy::FitMode;
use refresher::sim::displacement::DisplacementSummary;
use refresher::sim::{self, Environment, RunConfig, RunResult};

use super::experiment::{write_run, BudgetArgs, ExperimentArgs};
use super::policy_args;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub(crate) experiment: ExperimentArgs,
    /// Refresh policy family (`refresher policies` lists them with their parameters).
    #[arg(long)]
    #[arg(help_heading = "Policy")]
    pub(crate) policy: String,
    /// A parameter of the policy, `key=value` (repeatable; `refresher policies` lists them),
    /// e.g. `theta=0.3` (sbr, ebr), `estimator=whittle` or `window=4` (user-centric).
    #[arg(long = "param", value_name = "KEY=VALUE", value_parser = policy_args::parse_param)]
    #[arg(help_heading = "Policy")]
    pub(crate) params: Vec<(String, String)>,
    #[command(flatten)]
    pub(crate) budget: BudgetArgs,
    /// Kept as an alias of `--param theta=θ` (prints a note).
    #[arg(long, hide = true, value_name = "θ")]
    pub(crate) theta: Option<f64>,
    /// Fit policy parameters on the whole history (oracle, paper 003) or only on what was
    /// observed (online).
    #[arg(long, value_enum, default_value_t = FitMode::Oracle)]
    #[arg(help_heading = "Policy")]
    pub(crate) mode: FitMode,
    /// Scoring function of the search engine.
    #[arg(long, value_enum, default_value_t = ScoringKind::Bm25)]
    #[arg(help_heading = "Quality model")]
    pub(crate) scoring: ScoringKind,
    /// Kept as an alias of `--param estimator=E` (prints a note).
    #[arg(long, hide = true, value_enum, value_name = "E")]
    pub(crate) uc_estimator: Option<Estimator>,
    /// Kept as an alias of `--param window=W` (prints a note).
    #[arg(long, hide = true, value_name = "W", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) uc_window: Option<u32>,
    /// Seed of randomised policies.
    #[arg(long, default_value_t = 1)]
    #[arg(help_heading = "Policy")]
    pub(crate) seed: u64,
    /// When new pages are crawled: in the unit they appear, outside the budget (paper 003), or
    /// only when the policy spends a unit of B on them from the frontier of pages linked from
    /// fetched copies (paper 004's new-page model).
    #[arg(long, value_enum, default_value_t = NewPages::OutsideBudget)]
    #[arg(help_heading = "Budget")]
    pub(crate) new_pages: NewPages,
    /// Write per-unit metrics (CSV, JSON) and the refreshed pages into this directory.
    #[arg(long)]
    #[arg(help_heading = "Output")]
    pub(crate) out: Option<PathBuf>,
    /// Also write the repository's top 10 at this unit as a TREC run file
    /// (`run-unitN.trec`), the live Web's judgements as qrels (`qrels-unitN.txt`) and our
    /// per-query measures in trec_eval's `-q` layout (`eval-unitN.txt`) into `--out` (check
    /// with `trec_eval -c -q -M 10 -m map_cut.10 -m ndcg_cut.10 -m P.10 qrels run`).
    #[arg(long, requires = "out")]
    #[arg(help_heading = "Output")]
    pub(crate) trec_unit: Option<u32>,
    /// Print one JSON object on stdout.
    #[arg(long)]
    #[arg(help_heading = "Output")]
    pub(crate) json: bool,
    /// Also measure each refresh's true gain, its leave-one-out effect within its unit's batch
    /// against the live Web, and report how often a chosen refresh lowered quality and whether
    /// a negative earlier ΔQ_A predicts it (issue 47 item 6; JSON key `displacement`). Costs
    /// one more re-ranking of the queries each refreshed page touches, per refresh.
    #[arg(long)]
    #[arg(help_heading = "Output")]
    pub(crate) displacement: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let shorthands = shorthands(&args);
    let given = policy_args::collect(&args.params, &shorthands)?;
    super::former_flags::print_notes(&policy_args::former_uses(&shorthands));
    let policy = family(&args.policy)
        .and_then(|f| f.make(given.iter().map(|(k, v, _)| (k.as_str(), v.clone()))))
        .map_err(|e| policy_args::explain(e, &given, "--policy"))?;
    if let Some(share) = args.budget.budget_share {
        super::experiment::check_share("--budget-share", share)?;
    }
    let started = std::time::Instant::now();
    let loaded = args.experiment.load()?;
    let pages = loaded.corpus.page_count();
    let budget = args.budget.budget(pages)?;
    anyhow::ensure!(
        budget <= pages,
        "--budget {budget}: exceeds the {pages} pages of the corpus (a budget is re-downloads \
         per unit, at most every page)"
    );
    let warmup_units = args.budget.warmup.checked(loaded.corpus.units())?;
    let oracle_history = args.budget.warmup.oracle_history_for(&[args.mode])?;
    let signals = args.experiment.signal_settings()?;
    let load_seconds = started.elapsed().as_secs_f64();
    let env = loaded.environment(args.scoring)?;
    let environment_seconds = started.elapsed().as_secs_f64() - load_seconds;
    let mut config = RunConfig::new(budget, args.mode);
    config.seed = args.seed;
    config.new_pages = args.new_pages;
    config.warmup_units = warmup_units;
    config.oracle_history = oracle_history;
    config.displacement = args.displacement;
    config.signals = signals;
    if let Some(u) = args.trec_unit {
        if u <= warmup_units || u >= env.units() {
            anyhow::bail!(
                "--trec-unit {u}: judged units are {}..={}",
                warmup_units + 1,
                env.units() - 1
            );
        }
        config.trec_unit = Some(u);
    }
    let bar = refresher::progress::bar(u64::from(env.units().saturating_sub(1)), "simulate", false);
    let result = sim::run_with(&env, policy, &config, &mut |_| {
        bar.inc(1);
        std::ops::ControlFlow::Continue(())
    })?;
    bar.finish_and_clear();
    let run_seconds = started.elapsed().as_secs_f64() - load_seconds - environment_seconds;
    if let Some(dir) = &args.out {
        write_outputs(dir, args.trec_unit, &result, &loaded.corpus)?;
    }
    let wall = WallTime {
        load: load_seconds,
        environment: environment_seconds,
        run: run_seconds,
    };
    if args.json {
        print_json(&given, &result, &wall, &loaded.corpus)?;
    } else {
        super::inputs::print_collections(&loaded.corpus);
        print_text(&args, &result, &env, &config, &wall);
    }
    Ok(())
}

/// The former shorthands of `--param theta=`, `estimator=` and `window=`.
fn shorthands(args: &Args) -> [policy_args::Shorthand; 3] {
    use policy_args::Shorthand;
    [
        Shorthand {
            flag: "--theta",
            key: "theta",
            value: args.theta.map(|t| t.to_string()),
        },
        Shorthand {
            flag: "--uc-estimator",
            key: "estimator",
            value: args.uc_estimator.map(|e| e.as_str().to_string()),
        },
        Shorthand {
            flag: "--uc-window",
            key: "window",
            value: args.uc_window.map(|w| w.to_string()),
        },
    ]
}

/// Where the wall time went: reading the inputs, the policy-independent environment (live
/// truths, change history, every change measured), and the run itself; in seconds.
struct WallTime {
    load: f64,
    environment: f64,
    run: f64,
}

/// `--out`: the run's per-unit metrics and refreshed pages, and the TREC files of
/// `--trec-unit`.
fn write_outputs(
    dir: &Path,
    trec_unit: Option<u32>,
    result: &RunResult,
    corpus: &Corpus,
) -> anyhow::Result<()> {
    write_run(dir, result, corpus)?;
    if let (Some(u), Some(trec)) = (trec_unit, &result.trec) {
        std::fs::write(dir.join(format!("run-unit{u}.trec")), &trec.run)?;
        std::fs::write(dir.join(format!("qrels-unit{u}.txt")), &trec.qrels)?;
        std::fs::write(dir.join(format!("eval-unit{u}.txt")), &trec.evaluation)?;
    }
    Ok(())
}

/// `--json`: the run as one JSON object, with θ as given, the estimator, the wall time and
/// the collections read.
fn print_json(
    given: &[(String, ParamValue, String)],
    result: &RunResult,
    wall: &WallTime,
    corpus: &Corpus,
) -> anyhow::Result<()> {
    let mut value = serde_json::to_value(result)?;
    // As given (null when the family's default applied), as before `params` existed.
    let theta: Option<f64> = given
        .iter()
        .rev()
        .find(|(k, _, _)| k == "theta")
        .and_then(|(_, v, _)| v.to_string().parse().ok());
    value["theta"] = serde_json::json!(theta);
    if let Some(e) = result.params.get("estimator") {
        value["uc_estimator"] = e.clone();
    }
    // Where the wall time went: reading the inputs, the policy-independent environment
    // (live truths, change history, every change measured), and the run itself.
    value["seconds"] = serde_json::json!({
        "load": wall.load,
        "environment": wall.environment,
        "run": wall.run,
    });
    value["collections"] = corpus.collections_json();
    println!("{value}");
    Ok(())
}

/// The text report: the run's settings, its means, the warm-up and displacement lines, the
/// wall time and a line per unit.
fn print_text(
    args: &Args,
    result: &RunResult,
    env: &Environment<'_>,
    config: &RunConfig,
    wall: &WallTime,
) {
    let label = &result.label;
    let (load_seconds, environment_seconds, run_seconds) = (wall.load, wall.environment, wall.run);
    println!(
        "{label}, B = {}, {} mode, {} scoring, ΔQ {}, {} units, {} workload queries",
        result.budget,
        result.mode.as_str(),
        result.scoring,
        result.delta_q.as_str(),
        env.units(),
        env.workload.queries.len()
    );
    if let Some(line) = super::experiment::oracle_bound_line(result.mode, config.oracle_history) {
        println!("{line}");
    }
    println!(
        "mean quality {:.4}   top-10 freshness {:.4}   MAP@10 {:.4}   nDCG@10 {:.4}   ChangeRatio {:.3}   schedule NDCG@B {:.3}   obsolete pages {:.1}   ChangeRate {:.4}   gp4c NDCG@B {:.4}",
        result.mean.quality,
        result.mean.fresh_at_10,
        result.mean.map_at_10,
        result.mean_ndcg_at_10,
        result.mean_change_ratio,
        result.mean_schedule_ndcg,
        result.mean_obsolete_pages,
        result.mean_change_rate,
        result.mean_gp4c_ndcg
    );
    println!(
        "papers 000/002: ChangeRatio weighted by PageRank {:.4}, by view weights {:.4}; top-10 freshness over k = 10 fixed {:.4}; MAP@10 over the relevant retrieved {:.4}, with τ = 0 relevance {:.4}",
        result.mean_pagerank_weighted_change_ratio,
        result.mean_weighted_change_ratio,
        result.mean_fresh_at_10_fixed_k,
        result.mean_map_at_10_retrieved,
        result.mean_map_at_10_tau0
    );
    let d = &result.discovery;
    println!(
        "new pages {}: per unit {:.2} new-page fetches + {:.2} refreshes; {} created, {} never crawled; discovery delay {:.2} units (view-weighted {:.2})",
        result.new_pages.as_str(),
        result.mean_new_page_fetches,
        result.mean_refresh_fetches,
        d.new_pages_created,
        d.new_pages_never_crawled,
        d.mean_discovery_delay,
        d.mean_discovery_delay_weighted
    );
    if let Some(line) =
        super::experiment::warm_up_line(config.warmup_units, args.mode, config.oracle_history)
    {
        println!("{line}");
    }
    if let Some(d) = &result.displacement {
        print_displacement(&d.summary);
    }
    println!(
        "wall time: load {load_seconds:.2} s, environment {environment_seconds:.2} s, run {run_seconds:.2} s"
    );
    println!(
        "unit  quality  fresh@10  MAP@10  refreshed  changed%  obsolete  est.ΔQ     new  frontier"
    );
    for r in &result.per_unit {
        println!(
            "{:>4}  {:.4}   {:.4}    {:.4}  {:>9}  {:>7.1}  {:>8}  {:.3e}  {:>4}  {:>8}",
            r.unit,
            r.search.quality,
            r.search.fresh_at_10,
            r.search.map_at_10,
            r.refreshed,
            100.0 * r.change_ratio,
            r.obsolete_pages,
            r.estimated_delta_q,
            r.new_page_fetches,
            r.frontier_pages
        );
    }
}

/// The displacement figures of `--displacement` (see `refresher::sim::displacement`).
fn print_displacement(d: &DisplacementSummary) {
    println!(
        "displacement: {} refreshes measured ({} brought a changed copy); true gain < 0: {} ({:.2} %, {:.2} % of the changed), = 0: {} ({:.2} %), > 0: {}; mean negative magnitude {:.3e}, Σ negative {:.3e}, Σ all {:.3e}",
        d.refreshes_measured,
        d.changed,
        d.negative,
        100.0 * d.negative_share,
        100.0 * d.negative_share_of_changed,
        d.zero,
        100.0 * d.zero_share,
        d.positive,
        d.mean_negative_magnitude,
        d.total_negative_gain,
        d.total_true_gain
    );
    println!(
        "deferral: {} refreshes with an earlier one, {:.2} % negative; {} whose previous measured ΔQ_A < 0, {} ({:.2} %) negative again (lift {:.2}); their Σ true gain {:.3e}, deferring them saves at most {:.3e}; own measured ΔQ_A < 0: {} ({:.2} % truly negative)",
        d.with_previous,
        100.0 * d.with_previous_negative_share,
        d.previously_negative,
        d.previously_negative_then_negative,
        100.0 * d.previously_negative_then_negative_share,
        d.previously_negative_lift,
        d.previously_negative_total_true_gain,
        d.previously_negative_saving_at_most,
        d.measured_negative,
        100.0 * d.measured_negative_then_negative_share
    );
}
