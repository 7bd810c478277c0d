//! `refresher webfountain`: solves a WebFountain crawl-model instance (paper 004) for one
//! strategy and prints the plan.

use anyhow::anyhow;
use refresher::optimise::frank_wolfe::Stop;
use refresher::policy::webfountain::instance::{Instance, PAPER_LIKE};
use refresher::policy::webfountain::{solve, SolveReport, SolveRequest};

#[derive(clap::Args)]
pub struct Args {
    /// The instance: a JSON file (the layout of `small.json`: periods, capacity_per_period,
    /// initial_obsolete, new_pages_per_period, buckets with pages and change_probability), or
    /// `paper-like` for the built-in 255-bucket, 14-period instance.
    #[arg(long, value_name = "FILE|paper-like")]
    pub(crate) instance: String,
    /// 1: equal weights over the periods; 2: obsolete pages at the end of the cycle only;
    /// 3: ε in every period but the last, 1 − (T−1)ε in the last.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=3))]
    pub(crate) strategy: u8,
    /// Strategy 3's ε (default: the instance's `epsilon`, else 0.01).
    #[arg(long)]
    pub(crate) eps: Option<f64>,
    /// Frank–Wolfe steps per start.
    #[arg(long, default_value_t = 5_000)]
    pub(crate) max_iterations: usize,
    /// Print the plan as JSON (keys: objective, obsolete_per_period, crawls, optimality, …).
    #[arg(long)]
    pub(crate) json: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let instance = Instance::load(&args.instance)?;
    for field in &instance.ignored_fields {
        eprintln!(
            "refresher: {}: ignored unknown field {field}",
            args.instance
        );
    }
    let report = solve(
        &instance,
        SolveRequest {
            strategy: args.strategy,
            epsilon: args.eps,
            max_iterations: args.max_iterations,
        },
    )
    .map_err(|e| anyhow!("{}: {e}", instance_name(&args.instance)))?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", text(&report));
    }
    Ok(())
}

fn instance_name(path: &str) -> &str {
    if path == PAPER_LIKE {
        "the paper-like instance"
    } else {
        path
    }
}

/// The plan as tables: per period (weight, obsolete pages, crawls), then crawls per bucket.
fn text(report: &SolveReport) -> String {
    use std::fmt::Write;
    let plan = &report.plan;
    let mut out = String::new();
    if let Some(d) = &report.description {
        let _ = writeln!(out, "{d}");
    }
    let eps = report
        .epsilon
        .map_or(String::new(), |e| format!(" (ε = {e})"));
    let _ = writeln!(
        out,
        "{} buckets, {} periods; strategy {}{eps}: objective {:.6}",
        report.buckets, report.periods, plan.strategy, plan.objective
    );
    if let (Some(e), Some(r)) = (report.expected_objective, report.relative_difference) {
        let _ = writeln!(
            out,
            "the instance's reference optimum: {e} (relative difference {r:+.2e})"
        );
    }
    let o = &plan.optimality;
    let _ = writeln!(
        out,
        "{}: Frank–Wolfe gap {:.3e} (relative {:.2e}), {}, {} steps from the {} start, {:.2} s",
        o.method,
        o.fw_gap,
        o.relative_gap,
        match o.stop {
            Stop::Gap => "converged",
            Stop::Stalled => "stalled (the objective stopped moving) before the gap tolerance",
            Stop::NoDescent => "no descent direction left before the gap tolerance",
            Stop::IterationLimit => "iteration limit reached before the gap tolerance",
        },
        o.iterations,
        o.start,
        o.seconds
    );
    for s in &o.starts {
        let _ = writeln!(
            out,
            "  start {:<15} objective {:.6}  gap {:.3e}  {} steps",
            s.start, s.objective, s.fw_gap, s.iterations
        );
    }
    let has_new = plan.new_crawls.iter().any(|&z| z > 0.0)
        || plan.new_uncrawled_per_period.iter().any(|&n| n > 0.0);
    let _ = write!(out, "\nperiod    weight      obsolete        crawls");
    if has_new {
        let _ = write!(out, "    new crawls  new uncrawled");
    }
    let _ = writeln!(out);
    for t in 0..report.periods {
        let crawled: f64 = plan.crawls.iter().map(|c| c[t]).sum();
        let _ = write!(
            out,
            "{:>6}  {:>8.4}  {:>12.3}  {:>12.3}",
            t + 1,
            plan.weights[t],
            plan.obsolete_per_period[t],
            crawled
        );
        if has_new {
            let _ = write!(
                out,
                "  {:>12.3}  {:>13.3}",
                plan.new_crawls[t], plan.new_uncrawled_per_period[t]
            );
        }
        let _ = writeln!(out);
    }
    let _ = write!(
        out,
        "\ncrawls per bucket (rows) and period (columns)\nbucket"
    );
    for t in 0..report.periods {
        let _ = write!(out, " {:>11}", t + 1);
    }
    let _ = writeln!(out);
    for (i, row) in plan.crawls.iter().enumerate() {
        let _ = write!(out, "{:>6}", i + 1);
        for x in row {
            let _ = write!(out, " {x:>11.3}");
        }
        let _ = writeln!(out);
    }
    out
}
