//! `refresher compare`: refresh policies side by side over a budget grid (paper 003 Fig. 4).

use std::path::{Path, PathBuf};

use anyhow::Context;
use refresher::corpus::{Corpus, LiveWeb};
use refresher::crawl::NewPages;
use refresher::index::ScoringKind;
use std::collections::BTreeMap;

use refresher::policy::family::{expand_sweep, GridDefault, ParamValue, PolicyFamily};
use refresher::policy::registry::{family, DEFAULT_COMPARISON};
use refresher::policy::user_centric::Estimator;
use refresher::policy::FitMode;
use refresher::quality::bootstrap::Interval;
use refresher::report::svg::{Chart, Scale, Series};
use refresher::sim::compare::{default_budgets, sweep, Comparison, SweepConfig, Target, TargetRow};
use refresher::sim::intervals::ratio_interval;
use refresher::sim::oracle_ratio::OracleRatio;

use super::experiment::{budget_from_share, csv_file, ExperimentArgs, WarmupArgs};
use super::former_flags::{Disagree, FormerUse};
use super::policy_args;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub(crate) experiment: ExperimentArgs,
    /// Budgets B to sweep (comma-separated). Default: 0 and powers of two up to the number of
    /// pages, so that every target quality is reachable.
    #[arg(long, value_delimiter = ',')]
    #[arg(help_heading = "Budget")]
    pub(crate) budgets: Option<Vec<usize>>,
    /// Budgets as shares of the corpus's pages (comma-separated, each in (0, 1]): B =
    /// round(F × pages), added to --budgets (paper 001 refreshes 5 % per cycle: 0.05).
    #[arg(long, value_delimiter = ',', value_name = "F1,F2,…")]
    #[arg(help_heading = "Budget")]
    pub(crate) budget_shares: Option<Vec<f64>>,
    #[command(flatten)]
    pub(crate) warmup: WarmupArgs,
    /// Policies to compare (comma-separated; `refresher policies` lists them all)
    /// [default: user-centric, sbr, ebr, lambdacrawl, round-robin, random, age].
    #[arg(long, value_delimiter = ',')]
    #[arg(help_heading = "Policy")]
    pub(crate) policies: Option<Vec<String>>,
    /// Kept as an alias of `--sweep theta=θ1,θ2,…` (prints a note).
    #[arg(long, hide = true, value_delimiter = ',', value_name = "θ1,θ2,…")]
    pub(crate) thetas: Option<Vec<f64>>,
    /// A parameter given to every compared policy that has it, `key=value` (repeatable).
    #[arg(long = "param", value_name = "KEY=VALUE", value_parser = policy_args::parse_param)]
    #[arg(help_heading = "Policy")]
    pub(crate) params: Vec<(String, String)>,
    /// Values swept for a parameter, `key=v1,v2,…` (repeatable; overrides the family's own
    /// grid, see `refresher policies`), e.g. `theta=0.1,0.5,0.9` for sbr and ebr.
    #[arg(long = "sweep", value_name = "KEY=V1,V2,…", value_parser = policy_args::parse_param)]
    #[arg(help_heading = "Policy")]
    pub(crate) sweeps: Vec<(String, String)>,
    /// Targets of the table (comma-separated): qualities such as 0.99, and shares of the
    /// quality lost to staleness such as 90% (recover 90 % of the gap between the unrefreshed
    /// repository and a perfect one). Default: 0.9,0.95,0.98,0.99,0.995,0.999 and
    /// 50%,75%,90%,95%,99%.
    #[arg(long, value_delimiter = ',', value_parser = Target::parse)]
    #[arg(help_heading = "Output")]
    pub(crate) targets: Option<Vec<Target>>,
    /// Fitting modes (comma-separated): oracle (paper 003) and/or online.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [FitMode::Oracle])]
    #[arg(help_heading = "Policy")]
    pub(crate) mode: Vec<FitMode>,
    /// Scoring function of the search engine.
    #[arg(long, value_enum, default_value_t = ScoringKind::Bm25)]
    #[arg(help_heading = "Quality model")]
    pub(crate) scoring: ScoringKind,
    /// Kept as an alias of `--param estimator=E` (prints a note).
    #[arg(long, hide = true, value_enum, value_name = "E")]
    pub(crate) uc_estimator: Option<Estimator>,
    /// Seed of randomised policies.
    #[arg(long, default_value_t = 1)]
    #[arg(help_heading = "Policy")]
    pub(crate) seed: u64,
    /// When new pages are crawled: in the unit they appear, outside the budget (paper 003), or
    /// only when a policy spends a unit of B on them from the frontier of linked pages.
    #[arg(long, value_enum, default_value_t = NewPages::OutsideBudget)]
    #[arg(help_heading = "Budget")]
    pub(crate) new_pages: NewPages,
    /// Write the table, curves (CSV, JSON) and charts (SVG) into this directory.
    #[arg(long)]
    #[arg(help_heading = "Output")]
    pub(crate) out: Option<PathBuf>,
    /// Print one JSON object on stdout.
    #[arg(long)]
    #[arg(help_heading = "Output")]
    pub(crate) json: bool,
    /// How much the text output shows: the first screen (the finding and the budget per share
    /// of the staleness gap, with intervals), also every target table and the mean quality per
    /// budget, or also every measure (fresh@10, MAP@10, obsolete pages, papers 000/002's
    /// measures, …; always in `curves.csv` under --out).
    #[arg(help_heading = "Output")]
    #[arg(long, value_enum, default_value_t = MetricsShown::Summary)]
    pub(crate) metrics: MetricsShown,
    /// Skip the 95 % intervals (a bootstrap over the workload's queries, read from the same
    /// runs): every evaluation then sums no resamples.
    #[arg(long)]
    #[arg(help_heading = "Output")]
    pub(crate) no_intervals: bool,
    #[command(flatten)]
    pub(crate) mesh: super::mesh_args::MeshArgs,
}

/// How much `compare` prints beyond its first screen (`--metrics`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MetricsShown {
    /// The finding and the budget per share of the staleness gap, with intervals.
    Summary,
    /// Also every target table (grid, hindsight envelope, absolute qualities) and the mean
    /// repository quality per policy and budget.
    Quality,
    /// Every measure per policy and budget.
    All,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let policies = args
        .policies
        .clone()
        .unwrap_or_else(|| DEFAULT_COMPARISON.iter().map(|s| s.to_string()).collect());
    let families = policies
        .iter()
        .map(|p| family(p))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| anyhow::anyhow!("--policies: {e}"))?;
    let shorthands = [policy_args::Shorthand {
        flag: "--uc-estimator",
        key: "estimator",
        value: args.uc_estimator.map(|e| e.as_str().to_string()),
    }];
    let given = policy_args::collect(&args.params, &shorthands)?;
    let (grids, thetas_used) = sweep_grids(&args)?;
    let mut former = policy_args::former_uses(&shorthands);
    former.extend(thetas_used);
    super::former_flags::print_notes(&former);
    let fixed: Vec<_> = given
        .iter()
        .map(|(k, v, _)| (k.clone(), v.clone()))
        .collect();
    // Every run's parameters checked before any input is read.
    check_runs(&families, &fixed, &grids, &given)?;
    for &share in args.budget_shares.iter().flatten() {
        super::experiment::check_share("--budget-shares", share)?;
    }
    let mesh = args.mesh.config()?;
    let loaded = args.experiment.load()?;
    let mut budgets = given_budgets(&args, &loaded.corpus)?;
    let warmup_units = args.warmup.checked(loaded.corpus.units())?;
    let oracle_history = args.warmup.oracle_history_for(&args.mode)?;
    budgets.sort_unstable();
    budgets.dedup();
    if let Some(b) = budgets.iter().find(|&&b| b > loaded.corpus.page_count()) {
        anyhow::bail!(
            "--budgets: {b} exceeds the {} pages of the corpus",
            loaded.corpus.page_count()
        );
    }
    let signals = args.experiment.signal_settings()?;
    let env = loaded.environment(args.scoring)?;
    let configs: Vec<SweepConfig> = args
        .mode
        .iter()
        .map(|&mode| SweepConfig {
            policies: policies.clone(),
            budgets: budgets.clone(),
            params: fixed.clone(),
            grids: grids.clone(),
            mode,
            seed: args.seed,
            new_pages: args.new_pages,
            warmup_units,
            oracle_history,
            targets: args.targets.clone().unwrap_or_default(),
            signals: signals.clone(),
            intervals: !args.no_intervals,
        })
        .collect();
    let comparisons = if mesh.is_spread() {
        let greeting = super::mesh_args::greeting(mesh.process, &loaded.corpus, &env.workload);
        match spread_sweeps(&env, &configs, &mesh, &greeting)? {
            Some(comparisons) => comparisons,
            None => {
                eprintln!(
                    "process {} of {}: my share of the runs is done; process 0 reports the comparison",
                    mesh.process, mesh.processes
                );
                return Ok(());
            }
        }
    } else {
        // Round-robin, random and age make the same run in every mode: run once (kept in the
        // environment's cache), reported in each.
        let mut comparisons = Vec::new();
        for config in &configs {
            let bar = refresher::progress::bar(0, &format!("{} runs", config.mode.as_str()), false);
            let c = sweep(&env, config, &|done, total| {
                bar.set_length(total as u64);
                bar.set_position(done as u64);
            })?;
            bar.finish_and_clear();
            comparisons.push(c);
        }
        comparisons
    };
    if let Some(dir) = &args.out {
        let about = ChartContext::of(&args, &loaded.corpus);
        write_outputs(dir, &comparisons, &about)?;
    }
    if args.json {
        let mut value = to_json(&comparisons);
        value["collections"] = loaded.corpus.collections_json();
        println!("{value}");
    } else {
        print_inputs(&loaded);
        super::inputs::print_collections(&loaded.corpus);
        for c in &comparisons {
            print_summary(c, loaded.corpus.page_count(), args.metrics);
        }
        print_oracle_ratios(&refresher::sim::oracle_ratio::oracle_ratios(&comparisons));
        if let Some(dir) = &args.out {
            println!(
                "outputs written to {}: compare.json, fig4_table.csv, fig4_table_fixed.csv, curves.csv, runs.csv (and with both modes oracle_ratios.csv), charts fig4_<mode>.svg and <measure>_vs_budget_<mode>.svg",
                dir.display()
            );
        }
    }
    Ok(())
}

/// The sweeps of `configs` spread over the workers of `mesh` ([`refresher::sim::spread`]): the
/// comparisons in this process when it holds the leader, `None` in the others.
fn spread_sweeps(
    env: &refresher::sim::Environment<'_>,
    configs: &[SweepConfig],
    mesh: &refresher::mesh::MeshConfig,
    greeting: &refresher::mesh::Greeting,
) -> anyhow::Result<Option<Vec<Comparison>>> {
    let threads = refresher::sim::spread::threads_per_worker(mesh.workers);
    let outcomes = refresher::mesh::run(mesh, greeting, |worker| {
        let index = worker.index();
        if index == mesh.process * mesh.workers {
            eprintln!(
                "process {} of {}: connected, every process agrees; running its share of the runs",
                mesh.process, mesh.processes
            );
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(move |i| format!("refresher:worker-{index}-{i}"))
            .build()?;
        let mut comparisons = Vec::new();
        for config in configs {
            // One bar per process (its first worker's), counting that worker's runs.
            let bar = if worker.index() == mesh.process * mesh.workers {
                let label = format!("{} runs (worker {})", config.mode.as_str(), worker.index());
                refresher::progress::bar(0, &label, false)
            } else {
                indicatif::ProgressBar::hidden()
            };
            let c = refresher::sim::spread::sweep(env, config, worker, &pool, &|done, total| {
                bar.set_length(total as u64);
                bar.set_position(done as u64);
            })?;
            bar.finish_and_clear();
            comparisons.extend(c);
        }
        eprintln!(
            "worker {} of {}: {} bytes sent to other workers",
            worker.index(),
            worker.peers(),
            worker.bytes_sent()
        );
        anyhow::Ok(comparisons)
    })?;
    let mut leader = None;
    for (w, outcome) in outcomes.into_iter().enumerate() {
        let comparisons = outcome?;
        if mesh.process == 0 && w == 0 {
            leader = Some(comparisons);
        }
    }
    Ok(leader)
}

/// What was compared, in two lines: the site and the workload.
fn print_inputs(loaded: &super::experiment::Loaded) {
    let corpus = &loaded.corpus;
    let hosts: usize = corpus.collections.iter().map(|c| c.sites.len()).sum();
    let dates = match (corpus.collections.first(), corpus.collections.last()) {
        (Some(first), Some(last)) => format!(
            ", captured {} .. {}",
            first
                .first_capture_date
                .get(..10)
                .unwrap_or(&first.first_capture_date),
            last.last_capture_date
                .get(..10)
                .unwrap_or(&last.last_capture_date)
        ),
        _ => String::new(),
    };
    let paths: Vec<&str> = corpus.collections.iter().map(|c| c.path.as_str()).collect();
    let line = format!(
        "site: {} pages on {hosts} host{}, {} units of {} days{dates} ({})",
        corpus.page_count(),
        if hosts == 1 { "" } else { "s" },
        corpus.units(),
        corpus.clock.unit_seconds as f64 / 86_400.0,
        paths.join(", ")
    );
    println!("{}", refresher::report::terminal_safe(&line));
    let report = &loaded.workload.report;
    let line = format!(
        "workload: {} queries users submitted {} times in all, kept of {} distinct ({} filter), from {}",
        loaded.workload.queries.len(),
        loaded
            .workload
            .queries
            .iter()
            .map(|q| q.frequency)
            .sum::<u64>(),
        report.distinct_queries,
        clap::ValueEnum::to_possible_value(&report.filter)
            .map(|v| v.get_name().to_string())
            .unwrap_or_default(),
        loaded.args.log.display()
    );
    println!("{}", refresher::report::terminal_safe(&line));
}

/// The values swept per parameter key.
type Grids = BTreeMap<String, Vec<f64>>;

/// The swept values per parameter: each `--sweep`, and `--thetas` (θ in [0, 1]), the former
/// spelling of `--sweep theta=`, with its use to note.
fn sweep_grids(args: &Args) -> anyhow::Result<(Grids, Option<FormerUse>)> {
    let mut grids = Grids::new();
    for (key, values) in &args.sweeps {
        let grid = values
            .split(',')
            .map(|v| v.trim().parse::<f64>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| anyhow::anyhow!("--sweep {key}: `{values}` is not a list of numbers"))?;
        grids.insert(key.clone(), grid);
    }
    let Some(thetas) = &args.thetas else {
        return Ok((grids, None));
    };
    if let Some(t) = thetas.iter().find(|t| !(0.0..=1.0).contains(*t)) {
        anyhow::bail!("--thetas: {t} is outside [0, 1]");
    }
    let list = |grid: &[f64]| {
        grid.iter()
            .map(f64::to_string)
            .collect::<Vec<_>>()
            .join(",")
    };
    match grids.get("theta") {
        Some(swept) if swept != thetas => {
            return Err(Disagree::new(
                format!("--sweep theta={}", list(swept)),
                "--sweep",
                format!("--thetas {}", list(thetas)),
                "--thetas",
            )
            .into())
        }
        _ => grids.insert("theta".into(), thetas.clone()),
    };
    let used = FormerUse {
        flag: "--thetas",
        instead: format!("--sweep theta={}", list(thetas)),
    };
    Ok((grids, Some(used)))
}

/// Checks every run's parameters (the fixed ones and the grids) before any input is read,
/// naming the flag that gave a bad one.
fn check_runs(
    families: &[&'static PolicyFamily],
    fixed: &[(String, ParamValue)],
    grids: &BTreeMap<String, Vec<f64>>,
    given: &[(String, ParamValue, String)],
) -> anyhow::Result<()> {
    expand_sweep(families, &[1], fixed, grids, GridDefault::FamilyGrids).map_err(|e| {
        let flag = match e.key() {
            Some(k) if grids.contains_key(k) => format!("--sweep {k}"),
            _ => String::new(),
        };
        if flag.is_empty() {
            policy_args::explain(e, given, "--policies")
        } else {
            anyhow::anyhow!("{flag}: {e}")
        }
    })?;
    Ok(())
}

/// The budgets asked for (`--budgets`, or by default 0 and powers of two up to the most
/// pages present at a unit), then those of `--budget-shares`; unsorted.
fn given_budgets(args: &Args, corpus: &Corpus) -> anyhow::Result<Vec<usize>> {
    let max_pages = (0..corpus.units())
        .map(|u| {
            (0..corpus.page_count() as u32)
                .filter(|&p| corpus.page_at(p, u).present().is_some())
                .count()
        })
        .max()
        .unwrap_or(1);
    let mut budgets = match (&args.budgets, &args.budget_shares) {
        (None, None) => default_budgets(max_pages),
        (given, _) => given.clone().unwrap_or_default(),
    };
    for &share in args.budget_shares.iter().flatten() {
        budgets.push(budget_from_share(
            "--budget-shares",
            share,
            corpus.page_count(),
        )?);
    }
    Ok(budgets)
}

/// The JSON contract's keys (see ARCHITECTURE.md, § Command line and JSON contract): `rows`
/// and `curves` (each entry labelled with its mode), plus each sweep.
fn to_json(comparisons: &[Comparison]) -> serde_json::Value {
    let mut rows = Vec::new();
    let mut fixed_rows = Vec::new();
    let mut curves = Vec::new();
    for c in comparisons {
        for (from, to) in [(&c.rows, &mut rows), (&c.fixed_rows, &mut fixed_rows)] {
            for r in from {
                let mut v = serde_json::to_value(r).expect("serialisable");
                v["mode"] = serde_json::json!(c.mode);
                to.push(v);
            }
        }
        for p in &c.curves {
            let mut v = serde_json::to_value(p).expect("serialisable");
            v["mode"] = serde_json::json!(c.mode);
            curves.push(v);
        }
    }
    serde_json::json!({
        "scoring": comparisons.first().map(|c| c.scoring.clone()),
        "modes": comparisons.iter().map(|c| c.mode).collect::<Vec<_>>(),
        "new_pages": comparisons.first().map(|c| c.new_pages),
        "signals": comparisons.first().map(|c| c.signals.clone()),
        "rows": rows,
        "fixed_rows": fixed_rows,
        "oracle_ratios": refresher::sim::oracle_ratio::oracle_ratios(comparisons),
        "curves": curves,
        "sweeps": comparisons,
    })
}

/// A budget read between grid points, as tables print it (`–`: never reached).
fn interpolated(row: &TargetRow) -> String {
    match row.budget_interpolated {
        Some(b) if b >= 100.0 => format!("{b:.0}"),
        Some(b) => format!("{b:.3}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string(),
        None => "–".into(),
    }
}

/// The width of a table's policy column: the longest name (at least "policy") and two spaces.
fn label_width<'a>(policies: impl Iterator<Item = &'a str>) -> usize {
    policies
        .map(|p| p.chars().count())
        .max()
        .unwrap_or(6)
        .max(6)
        + 2
}

/// A Fig. 4 table: a line per policy, a column per target, `cell` of each row.
/// A table of target rows: the shares of the staleness gap first, then the absolute qualities
/// above the unrefreshed quality `q0` (every policy reaches those below at B = 0).
fn print_target_table(rows: &[TargetRow], q0: Option<f64>, cell: impl Fn(&TargetRow) -> String) {
    let shown = |r: &&TargetRow| r.gap_share.is_some() || q0.is_none_or(|q0| r.target_quality > q0);
    // Policies in their order; within each, gap targets first (a stable sort keeps the rest).
    let mut policies: Vec<&String> = Vec::new();
    for r in rows {
        if !policies.contains(&&r.policy) {
            policies.push(&r.policy);
        }
    }
    let mut rows: Vec<&TargetRow> = rows.iter().filter(shown).collect();
    rows.sort_by_key(|r| {
        let policy = policies.iter().position(|p| *p == &r.policy);
        (policy, r.gap_share.is_none())
    });
    let width = label_width(policies.iter().map(|p| p.as_str()));
    let first = policies.first().copied();
    print!("{:<width$}", "policy");
    for r in rows.iter().filter(|r| Some(&r.policy) == first) {
        match r.gap_share {
            Some(s) => print!("{:>9}", format!("{}% gap", s * 100.0)),
            None => print!("{:>9}", r.target_quality),
        }
    }
    println!();
    for p in policies {
        print!("{:<width$}", p);
        for r in rows.iter().filter(|r| &r.policy == p) {
            print!("{:>9}", cell(r));
        }
        println!();
    }
}

/// A budget as the first screen prints it: two or three significant digits (a grid of powers
/// of two decides no more).
fn amount(b: f64) -> String {
    if b >= 10.0 {
        format!("{b:.0}")
    } else {
        format!("{b:.1}")
    }
}

/// A 95 % interval as `lo–hi` (an end not reached on the grid: empty, `lo–`).
fn interval_text(interval: Interval, unit: &str) -> String {
    let end = |e: Option<f64>| {
        e.map(|v| format!("{}{unit}", amount(v)))
            .unwrap_or_default()
    };
    format!("{}–{}", end(interval.low), end(interval.high))
}

/// The comparison's finding in one sentence: at 90 % of the staleness gap, with parameters
/// fixed before the run (no hindsight), the policy that needs the least budget, the next one
/// and round-robin, with their ratios, each with its 95 % interval over the bootstrap's
/// resamples of the workload's queries when the sweep has them. `None` when no policy reaches
/// that target on the grid.
pub fn headline(c: &Comparison, pages: usize) -> Option<String> {
    const GAP: f64 = 0.9;
    let mut reached: Vec<(&TargetRow, f64)> = c
        .fixed_rows
        .iter()
        .filter(|r| r.gap_share.is_some_and(|g| (g - GAP).abs() < 1e-9))
        .filter_map(|r| Some((r, r.budget_interpolated?)))
        .collect();
    reached.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.policy.cmp(&b.0.policy)));
    let &(best, need) = reached.first()?;
    let ratio = |row: &TargetRow, b: f64| {
        let times = match b / need {
            r if !r.is_finite() => "more".to_string(),
            r if r < 10.0 => format!("{r:.2}× more"),
            r => format!("{r:.0}× more"),
        };
        let resampled = row.resampled_budgets.as_deref();
        match resampled
            .zip(best.resampled_budgets.as_deref())
            .and_then(|(a, b)| ratio_interval(a, b))
        {
            Some(i) => format!("{times}, {}", interval_text(i, "×")),
            None => times,
        }
    };
    let mut others: Vec<String> = Vec::new();
    if let Some(&(next, b)) = reached.get(1) {
        others.push(format!(
            "{} needs {} ({})",
            next.policy,
            amount(b),
            ratio(next, b)
        ));
    }
    let second = reached.get(1).map(|r| r.0.policy.as_str());
    if best.policy != "round-robin" && second != Some("round-robin") {
        match reached.iter().find(|r| r.0.policy == "round-robin") {
            Some(&(row, b)) => {
                others.push(format!("round-robin {} ({})", amount(b), ratio(row, b)))
            }
            None if c.fixed_rows.iter().any(|r| r.policy == "round-robin") => {
                others.push("round-robin does not reach it on the grid".to_string())
            }
            None => {}
        }
    }
    let share = 100.0 * need / pages.max(1) as f64;
    let sure = best
        .budget_interval
        .map(|i| format!("; 95 % interval {}", interval_text(i, "")))
        .unwrap_or_default();
    Some(format!(
        "Found ({} mode, parameters fixed before the run): to recover {:.0} % of the quality lost to staleness, {} needs {} refreshes per unit ({share:.2} % of the pages{sure}){}{}.",
        c.mode.as_str(),
        GAP * 100.0,
        best.policy,
        amount(need),
        if others.is_empty() { "" } else { "; " },
        others.join(", "),
    ))
}

/// The first screen's table: per policy, the budget needed (parameters fixed before the run,
/// log-B interpolated) for each share of the staleness gap, with its 95 % interval.
fn print_gap_table(rows: &[TargetRow]) {
    let cell = |r: &TargetRow| match (r.budget_interpolated, r.budget_interval) {
        (Some(b), Some(i)) => format!("{} ({})", amount(b), interval_text(i, "")),
        (Some(b), None) => amount(b),
        (None, _) => "–".to_string(),
    };
    print_gap_columns(
        &rows
            .iter()
            .filter_map(|r| Some((r.policy.as_str(), r.gap_share?, cell(r))))
            .collect::<Vec<_>>(),
    );
}

/// A table with a line per policy (in first-seen order) and a column per share of the
/// staleness gap, from `(policy, gap share, cell)` in row order; the columns are the first
/// policy's shares.
fn print_gap_columns(cells: &[(&str, f64, String)]) {
    let mut policies: Vec<&str> = Vec::new();
    for &(p, _, _) in cells {
        if !policies.contains(&p) {
            policies.push(p);
        }
    }
    let width = cells
        .iter()
        .map(|(_, _, c)| c.chars().count())
        .max()
        .unwrap_or(0)
        .max(7)
        + 2;
    let label = label_width(policies.iter().copied());
    print!("{:<label$}", "policy");
    for (_, share, _) in cells.iter().filter(|(p, _, _)| Some(p) == policies.first()) {
        print!("{:>width$}", format!("{} % gap", share * 100.0));
    }
    println!();
    for p in policies {
        print!("{p:<label$}");
        for (_, _, c) in cells.iter().filter(|(q, _, _)| *q == p) {
            print!("{c:>width$}");
        }
        println!();
    }
}

/// Each online policy's budget over the full oracle's, per share of the staleness gap (nothing
/// unless both modes ran with the oracle told the whole history).
fn print_oracle_ratios(ratios: &[OracleRatio]) {
    let cells: Vec<(&str, f64, String)> = ratios
        .iter()
        .filter_map(|r| {
            let cell = r.ratio.map_or("–".to_string(), |x| format!("{x:.2}×"));
            Some((r.policy.as_str(), r.gap_share?, cell))
        })
        .collect();
    if cells.is_empty() {
        return;
    }
    println!(
        "\nOnline budget over the full oracle's ({} in oracle mode, told the whole history), per share of the staleness gap (log-B interpolated, parameters fixed before the run; – = either not reached):",
        refresher::sim::oracle_ratio::FULL_ORACLE
    );
    print_gap_columns(&cells);
}

fn print_summary(c: &Comparison, pages: usize, metrics: MetricsShown) {
    println!(
        "\n{} mode, new pages {}, {} scoring, {} units, {} workload queries, user-centric ΔQ̄ {}, ΔQ {}, {} runs in {:.1} s",
        c.mode.as_str(),
        c.new_pages.as_str(),
        c.scoring,
        c.units,
        c.workload_queries,
        c.uc_estimator.as_str(),
        c.delta_q.as_str(),
        c.points.len(),
        c.seconds
    );
    if let Some(line) = super::experiment::oracle_bound_line(c.mode, c.oracle_history) {
        println!("{line}");
    }
    if let Some(line) = super::experiment::warm_up_line(c.warmup_units, c.mode, c.oracle_history) {
        println!("{line}");
    }
    if let Some(line) = headline(c, pages) {
        println!("{line}");
    }
    if let Some(q0) = c.unrefreshed_quality {
        println!(
            "Refreshes per unit to recover N % of the {:.4} of quality lost to staleness (unrefreshed quality {q0:.4}), parameters fixed before the run, read between grid points on log B; in brackets the 95 % interval over {} resamples of the workload's queries, and {} seeds for policies that draw at random (an open end: not reached on the grid):",
            1.0 - q0,
            refresher::quality::bootstrap::RESAMPLES,
            refresher::sim::compare::SEEDS_PER_INTERVAL,
        );
    }
    print_gap_table(&c.fixed_rows);
    if metrics == MetricsShown::Summary {
        return;
    }
    println!("Budget B needed per unit to reach a mean repository quality (paper 003 Fig. 4; – = not reached):");
    if let Some(q0) = c.unrefreshed_quality {
        println!(
            "unrefreshed quality {q0:.4}; \"N% gap\" = recover N % of the {:.4} lost to staleness",
            1.0 - q0
        );
    }
    let q0 = c.unrefreshed_quality;
    print_target_table(&c.rows, q0, |r| match r.budget_needed {
        Some(b) => b.to_string(),
        None => "–".into(),
    });
    println!("The same read between grid points (log-B interpolation; linear from B = 0). Families with swept parameters (θ): the best of the grid and the default per budget by judged quality, a hindsight envelope no deployed crawler has:");
    print_target_table(&c.rows, q0, interpolated);
    println!("Parameters fixed before the run (each family's defaults, θ = {}; what a deployed crawler runs), log-B interpolated:", refresher::policy::registry::DEFAULT_THETA);
    print_target_table(&c.fixed_rows, q0, interpolated);
    // Outside the budget every new page is crawled as it appears: the split is all refreshes
    // and the delay 0, so those rows are shown in frontier mode only.
    let frontier = c.new_pages == refresher::crawl::NewPages::Frontier;
    if metrics == MetricsShown::Quality {
        println!("Mean quality per budget:");
    } else if frontier {
        println!("Mean quality / top-10 freshness / MAP@10 / obsolete pages (paper 004) / new-page fetches and refreshes per unit / view-weighted discovery delay (units) per budget:");
    } else {
        println!(
            "Mean quality / top-10 freshness / MAP@10 / obsolete pages (paper 004) per budget:"
        );
    }
    if metrics == MetricsShown::All {
        println!("  then papers 000 and 002: ChangeRatio, weighted by PageRank (C^w PageRank) and by view weights (C^w views); top-10 freshness over k = 10 fixed (fresh@10 k), MAP@10 over the relevant retrieved (MAP@10 retr), the same with τ = 0 relevance (MAP@10 τ=0)");
    } else {
        println!("  (mean quality only; every measure with --metrics all, and in curves.csv under --out)");
    }
    print_budget_table(c, frontier, metrics);
}

/// The per-budget table of [`print_summary`]: a line per policy and measure, a column per
/// budget (the new-page split and delay in frontier mode only).
fn print_budget_table(c: &Comparison, frontier: bool, metrics: MetricsShown) {
    let mut budgets: Vec<usize> = c.curves.iter().map(|p| p.budget).collect();
    budgets.sort_unstable();
    budgets.dedup();
    let mut policies: Vec<&String> = c.curves.iter().map(|p| &p.policy).collect();
    policies.dedup();
    // Wide enough for the longest `policy measure` label: never cut.
    let width = policies
        .iter()
        .map(|p| p.chars().count() + " refresh/unit".len())
        .max()
        .unwrap_or(0)
        .max(13)
        + 1;
    print!("{:<width$}", "B");
    for b in &budgets {
        print!("{:>9}", b);
    }
    println!();
    for p in policies {
        for (label, f) in [
            (
                "quality",
                (|x: &refresher::sim::compare::CurvePoint| x.mean.quality) as fn(&_) -> f64,
            ),
            ("fresh@10", |x| x.mean.fresh_at_10),
            ("MAP@10", |x| x.mean.map_at_10),
            ("obsolete", |x| x.mean_obsolete_pages.unwrap_or(f64::NAN)),
            ("new/unit", |x| {
                x.new_pages.mean_new_page_fetches.unwrap_or(f64::NAN)
            }),
            ("refresh/unit", |x| {
                x.new_pages.mean_refresh_fetches.unwrap_or(f64::NAN)
            }),
            ("delay", |x| {
                x.new_pages
                    .mean_discovery_delay_weighted
                    .unwrap_or(f64::NAN)
            }),
            ("ChangeRatio", |x| {
                x.paper.mean_change_ratio.unwrap_or(f64::NAN)
            }),
            ("C^w PageRank", |x| {
                x.paper
                    .mean_pagerank_weighted_change_ratio
                    .unwrap_or(f64::NAN)
            }),
            ("C^w views", |x| {
                x.paper.mean_weighted_change_ratio.unwrap_or(f64::NAN)
            }),
            ("fresh@10 k", |x| {
                x.paper.mean_fresh_at_10_fixed_k.unwrap_or(f64::NAN)
            }),
            ("MAP@10 retr", |x| {
                x.paper.mean_map_at_10_retrieved.unwrap_or(f64::NAN)
            }),
            ("MAP@10 τ=0", |x| {
                x.paper.mean_map_at_10_tau0.unwrap_or(f64::NAN)
            }),
        ] {
            if !frontier && matches!(label, "new/unit" | "refresh/unit" | "delay") {
                continue;
            }
            if metrics == MetricsShown::Quality && label != "quality" {
                continue;
            }
            print!("{:<width$}", format!("{p} {label}"));
            for b in &budgets {
                match c.curves.iter().find(|x| &x.policy == p && x.budget == *b) {
                    Some(x) if label == "obsolete" => print!("{:>9.1}", f(x)),
                    Some(x) if matches!(label, "new/unit" | "refresh/unit" | "delay") => {
                        print!("{:>9.2}", f(x))
                    }
                    Some(x) => print!("{:>9.4}", f(x)),
                    None => print!("{:>9}", ""),
                }
            }
            println!();
        }
    }
}

/// The columns after quality, fresh@10 and MAP@10 of `curves.csv` and `runs.csv`, in their
/// header order ([`MEASURES_BEYOND_QUALITY`]): obsolete pages (paper 004), the new-page split
/// and delays, ChangeRate and the gp4c NDCG (paper 001), then papers 000 and 002's measures;
/// empty where a run did not report them.
fn measures_beyond_quality(
    obsolete: Option<f64>,
    new_pages: &refresher::sim::compare::NewPageSummary,
    change_rate: Option<f64>,
    gp4c_ndcg: Option<f64>,
    paper: &refresher::sim::compare::PaperMeasures,
) -> [String; 13] {
    [
        obsolete,
        new_pages.mean_new_page_fetches,
        new_pages.mean_refresh_fetches,
        new_pages.mean_discovery_delay_weighted,
        new_pages.mean_discovery_delay,
        change_rate,
        gp4c_ndcg,
        paper.mean_change_ratio,
        paper.mean_weighted_change_ratio,
        paper.mean_pagerank_weighted_change_ratio,
        paper.mean_fresh_at_10_fixed_k,
        paper.mean_map_at_10_retrieved,
        paper.mean_map_at_10_tau0,
    ]
    .map(|x| x.map(|v| v.to_string()).unwrap_or_default())
}

/// The header of [`measures_beyond_quality`]'s columns.
const MEASURES_BEYOND_QUALITY: [&str; 13] = [
    "mean_obsolete_pages",
    "mean_new_page_fetches",
    "mean_refresh_fetches",
    "mean_discovery_delay_weighted",
    "mean_discovery_delay",
    "mean_change_rate",
    "mean_gp4c_ndcg",
    "mean_change_ratio",
    "mean_weighted_change_ratio",
    "mean_pagerank_weighted_change_ratio",
    "mean_fresh_at_10_fixed_k",
    "mean_map_at_10_retrieved",
    "mean_map_at_10_tau0",
];

fn write_outputs(
    dir: &Path,
    comparisons: &[Comparison],
    about: &ChartContext,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    std::fs::write(
        dir.join("compare.json"),
        serde_json::to_string_pretty(&to_json(comparisons))?,
    )?;
    let header = [
        "mode",
        "policy",
        "target_quality",
        "budget_needed",
        "gap_share",
        "budget_interpolated",
        "budget_interval_low",
        "budget_interval_high",
    ];
    let mut table = csv_file(&dir.join("fig4_table.csv"))?;
    table.write_record(header)?;
    // The same table at parameters fixed before the run (no envelope over θ).
    let mut fixed_table = csv_file(&dir.join("fig4_table_fixed.csv"))?;
    fixed_table.write_record(header)?;
    let mut curves = csv_file(&dir.join("curves.csv"))?;
    curves.write_record(
        [
            "mode",
            "policy",
            "budget",
            "theta",
            "mean_quality",
            "mean_fresh_at_10",
            "mean_map_at_10",
        ]
        .into_iter()
        .chain(MEASURES_BEYOND_QUALITY),
    )?;
    let mut points = csv_file(&dir.join("runs.csv"))?;
    points.write_record(
        [
            "mode",
            "policy",
            "theta",
            "budget",
            "mean_quality",
            "mean_fresh_at_10",
            "mean_map_at_10",
        ]
        .into_iter()
        .chain(MEASURES_BEYOND_QUALITY),
    )?;
    for c in comparisons {
        let mode = c.mode.as_str();
        for (rows, csv) in [(&c.rows, &mut table), (&c.fixed_rows, &mut fixed_table)] {
            write_target_rows(csv, mode, rows)?;
        }
        write_curve_rows(&mut curves, mode, c)?;
        write_point_rows(&mut points, mode, c)?;
        write_charts(dir, mode, c, about)?;
    }
    write_oracle_vs_online(dir, comparisons, about)?;
    write_oracle_ratios(
        dir,
        &refresher::sim::oracle_ratio::oracle_ratios(comparisons),
    )?;
    table.flush()?;
    curves.flush()?;
    points.flush()?;
    Ok(())
}

/// `oracle_ratios.csv` when both modes ran (see [`print_oracle_ratios`]): empty cells where a
/// budget was not reached.
fn write_oracle_ratios(dir: &Path, ratios: &[OracleRatio]) -> anyhow::Result<()> {
    if ratios.is_empty() {
        return Ok(());
    }
    let mut csv = csv_file(&dir.join("oracle_ratios.csv"))?;
    csv.write_record([
        "policy",
        "target_quality",
        "gap_share",
        "online_budget",
        "oracle_budget",
        "ratio",
    ])?;
    let text = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
    for r in ratios {
        csv.write_record([
            r.policy.clone(),
            r.target_quality.to_string(),
            text(r.gap_share),
            text(r.online_budget),
            text(r.oracle_budget),
            text(r.ratio),
        ])?;
    }
    csv.flush()?;
    Ok(())
}

/// The target rows of one mode (`fig4_table.csv` or `fig4_table_fixed.csv`).
fn write_target_rows(
    csv: &mut csv::Writer<std::fs::File>,
    mode: &str,
    rows: &[TargetRow],
) -> anyhow::Result<()> {
    for r in rows {
        let need = r.budget_needed.map(|b| b.to_string()).unwrap_or_default();
        let share = r.gap_share.map(|s| s.to_string()).unwrap_or_default();
        let between = r
            .budget_interpolated
            .map(|b| b.to_string())
            .unwrap_or_default();
        // The interval's ends; empty when not reached (or without intervals).
        let end = |e: Option<f64>| e.map(|b| b.to_string()).unwrap_or_default();
        let (low, high) = r
            .budget_interval
            .map_or((String::new(), String::new()), |i| {
                (end(i.low), end(i.high))
            });
        csv.write_record([
            mode.to_string(),
            r.policy.to_string(),
            r.target_quality.to_string(),
            need,
            share,
            between,
            low,
            high,
        ])?;
    }
    Ok(())
}

/// The best-point curves of one mode (`curves.csv`).
fn write_curve_rows(
    curves: &mut csv::Writer<std::fs::File>,
    mode: &str,
    c: &Comparison,
) -> anyhow::Result<()> {
    for p in &c.curves {
        let theta = p.theta.map(|t| t.to_string()).unwrap_or_default();
        curves.write_record(
            [
                mode.to_string(),
                p.policy.to_string(),
                p.budget.to_string(),
                theta,
                p.mean.quality.to_string(),
                p.mean.fresh_at_10.to_string(),
                p.mean.map_at_10.to_string(),
            ]
            .into_iter()
            .chain(measures_beyond_quality(
                p.mean_obsolete_pages,
                &p.new_pages,
                p.mean_change_rate,
                p.mean_gp4c_ndcg,
                &p.paper,
            )),
        )?;
    }
    Ok(())
}

/// Every run of one mode (`runs.csv`).
fn write_point_rows(
    points: &mut csv::Writer<std::fs::File>,
    mode: &str,
    c: &Comparison,
) -> anyhow::Result<()> {
    for p in &c.points {
        let theta = p.theta.map(|t| t.to_string()).unwrap_or_default();
        points.write_record(
            [
                mode.to_string(),
                p.policy.to_string(),
                theta,
                p.budget.to_string(),
                p.mean.quality.to_string(),
                p.mean.fresh_at_10.to_string(),
                p.mean.map_at_10.to_string(),
            ]
            .into_iter()
            .chain(measures_beyond_quality(
                p.mean_obsolete_pages,
                &p.new_pages,
                p.mean_change_rate,
                p.mean_gp4c_ndcg,
                &p.paper,
            )),
        )?;
    }
    Ok(())
}

/// What the charts say of the run beside their data: the corpus, for the subtitle, and its page
/// count, for budgets read as a share of the pages.
struct ChartContext {
    corpus: String,
    pages: usize,
    unit_days: f64,
}

impl ChartContext {
    fn of(args: &Args, corpus: &Corpus) -> Self {
        let names: Vec<String> = args
            .experiment
            .corpus
            .corpus
            .iter()
            .map(|p| {
                p.file_name()
                    .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into())
            })
            .collect();
        ChartContext {
            corpus: names.join(" + "),
            pages: corpus.page_count(),
            unit_days: corpus.clock.unit_seconds as f64 / 86_400.0,
        }
    }

    /// The subtitle of a chart of `c`: what was simulated, over how long, judged by what.
    fn subtitle(&self, c: &Comparison) -> String {
        format!(
            "{}: {} pages, {} units of {} days, {} workload queries, {} scoring",
            self.corpus, self.pages, c.units, self.unit_days, c.workload_queries, c.scoring
        )
    }
}

/// The budget axis of the charts: what B counts, and its scale.
const BUDGET_AXIS: &str = "B, refreshes per unit (log scale; share of the pages in brackets)";
/// A short budget axis title for the horizontal axis (its shares go on a second line).
const BUDGET_AXIS_ACROSS: &str =
    "B, refreshes per unit (log scale; below each: share of the pages)";

/// The charts of one mode: Fig. 4 (budget needed per quality, as steps), the same over the
/// share of the staleness gap recovered (`fig4_gap_{mode}.svg`, when the grid has B = 0), and
/// each measure against B.
fn write_charts(
    dir: &Path,
    mode: &str,
    c: &Comparison,
    about: &ChartContext,
) -> anyhow::Result<()> {
    let mut names: Vec<&String> = c.curves.iter().map(|p| &p.policy).collect();
    names.dedup();
    let series = |f: &dyn Fn(&refresher::sim::compare::CurvePoint) -> (f64, f64)| -> Vec<Series> {
        names
            .iter()
            .map(|n| {
                Series::new(
                    n.as_str(),
                    c.curves.iter().filter(|p| &p.policy == *n).map(f).collect(),
                )
            })
            .collect()
    };
    // An oracle that knows the future is labelled a bound on the chart itself.
    let mode_label = match super::experiment::oracle_bound_line(c.mode, c.oracle_history) {
        Some(_) => format!("{mode}: knows the future, a bound"),
        None => mode.to_string(),
    };
    // Shares (quality, freshness, MAP) never draw an axis past 1.
    let chart = |title: &str, x: &str, y: &str, x_scale, y_scale| Chart {
        x_scale,
        y_scale,
        x_at_most: (x_scale == Scale::Linear).then_some(1.0),
        y_at_most: (y_scale == Scale::Linear).then_some(1.0),
        x_share_of: (x_scale == Scale::Log).then_some(about.pages),
        y_share_of: (y_scale == Scale::Log).then_some(about.pages),
        subtitle: Some(about.subtitle(c)),
        ..Chart::new(&format!("{title} ({mode_label})"), x, y)
    };
    // Fig. 4: quality on x, B on a log y axis; B = 0 (the unrefreshed repository, Q₀) is
    // a labelled vertical reference line; each curve the smallest B reaching each quality.
    let fig4 = Chart {
        budget_needed_steps: true,
        ..chart(
            "Budget needed for a repository quality",
            "mean repository quality Q (a share, linear scale)",
            BUDGET_AXIS,
            Scale::Linear,
            Scale::Log,
        )
    }
    .render(&series(&|p| (p.mean.quality, p.budget as f64)));
    std::fs::write(dir.join(format!("fig4_{mode}.svg")), fig4)?;
    // The last percent of quality spread out: the share of the staleness gap recovered, on an
    // axis of its nines.
    if let Some(q0) = c.unrefreshed_quality.filter(|q| *q < 1.0) {
        let gap = Chart {
            budget_needed_steps: true,
            ..chart(
                "Budget needed to recover the staleness gap",
                "share of the staleness gap recovered, 1 − (1 − Q)/(1 − Q₀) (scale of −log(1 − share); 100 % lies off it)",
                BUDGET_AXIS,
                Scale::Nines,
                Scale::Log,
            )
        }
        .render(&series(&|p| {
            (1.0 - (1.0 - p.mean.quality) / (1.0 - q0), p.budget as f64)
        }));
        std::fs::write(dir.join(format!("fig4_gap_{mode}.svg")), gap)?;
    }
    for (file, label, f) in [
        (
            "quality",
            "mean repository quality",
            (|p: &refresher::sim::compare::CurvePoint| p.mean.quality) as fn(&_) -> f64,
        ),
        ("fresh_at_10", "mean top-10 freshness", |p| {
            p.mean.fresh_at_10
        }),
        ("map_at_10", "mean MAP@10", |p| p.mean.map_at_10),
    ] {
        let svg = chart(
            label,
            BUDGET_AXIS_ACROSS,
            &format!("{label} (a share, linear scale)"),
            Scale::Log,
            Scale::Linear,
        )
        .render(&series(&|p| (p.budget as f64, f(p))));
        std::fs::write(dir.join(format!("{file}_vs_budget_{mode}.svg")), svg)?;
    }
    Ok(())
}

/// `oracle_vs_online.svg` when both modes ran: per policy, the budget needed (log-B
/// interpolated, parameters fixed before the run, as the first screen prints it) for each share
/// of the staleness gap, the oracle's points filled and the online ones hollow, so the distance
/// between the bound and what a crawler gets reads off the chart.
fn write_oracle_vs_online(
    dir: &Path,
    comparisons: &[Comparison],
    about: &ChartContext,
) -> anyhow::Result<()> {
    let of_mode = |m: refresher::policy::FitMode| comparisons.iter().find(|c| c.mode == m);
    let (Some(oracle), Some(online)) = (
        of_mode(refresher::policy::FitMode::Oracle),
        of_mode(refresher::policy::FitMode::Online),
    ) else {
        return Ok(());
    };
    let mut policies: Vec<&String> = Vec::new();
    for r in oracle.fixed_rows.iter().chain(&online.fixed_rows) {
        if !policies.contains(&&r.policy) {
            policies.push(&r.policy);
        }
    }
    let budgets = |c: &Comparison, policy: &str| -> Vec<(f64, f64)> {
        c.fixed_rows
            .iter()
            .filter(|r| r.policy == policy)
            .filter_map(|r| Some((r.gap_share?, r.budget_interpolated?)))
            .collect()
    };
    let bound = match super::experiment::oracle_bound_line(oracle.mode, oracle.oracle_history) {
        Some(_) => "oracle: knows the future, a bound",
        None => "oracle",
    };
    let mut series = Vec::new();
    for p in policies {
        series.push(Series::new(format!("{p}, oracle"), budgets(oracle, p)));
        series.push(Series {
            hollow: true,
            ..Series::new(format!("{p}, online"), budgets(online, p))
        });
    }
    let svg = Chart {
        x_scale: Scale::Nines,
        y_scale: Scale::Log,
        y_share_of: Some(about.pages),
        subtitle: Some(format!(
            "{}; parameters fixed before the run; filled: oracle, hollow: online",
            about.subtitle(oracle)
        )),
        ..Chart::new(
            &format!("How far online is from the oracle bound ({bound})"),
            "share of the staleness gap recovered (scale of −log(1 − share); 100 % lies off it)",
            "B needed, refreshes per unit (log scale, log-B interpolated)",
        )
    }
    .render(&series);
    std::fs::write(dir.join("oracle_vs_online.svg"), svg)?;
    Ok(())
}
