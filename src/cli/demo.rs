//! `refresher demo`: the main job on the embedded default data, with no download.
//!
//! Generates the synthetic evolving site and its query log (with `--verbose`, summarises them
//! as `ingest` does), then compares every refresh policy as `compare` does, on a coarser grid than `compare`'s
//! default so that it finishes in about a minute: budgets 0, 1, 4, 16, 64, 256, 1024 and every
//! page; thresholds θ ∈ {0.1, 0.3, 0.5, 0.7, 0.9} for SBR/EBR.

use std::path::PathBuf;

use refresher::corpus::generate::{generate_site, GeneratorConfig};
use refresher::index::ScoringKind;
use refresher::policy::FitMode;
use refresher::querylog::term_workload::MetricWorkload;
use refresher::querylog::workload::RelevanceFilter;

use super::experiment::ExperimentArgs;
use super::inputs::{CorpusArgs, WorkloadArgs};

#[derive(clap::Args)]
pub struct Args {
    /// Where to write the generated data and the comparison's outputs.
    #[arg(long, default_value = "out/demo")]
    pub(crate) out: PathBuf,
    /// Pages of the synthetic site at week 0.
    #[arg(long, default_value_t = GeneratorConfig::default().pages)]
    pub(crate) pages: usize,
    /// Weekly snapshots of the synthetic site.
    #[arg(long, default_value_t = GeneratorConfig::default().weeks)]
    pub(crate) weeks: u32,
    /// Random seed of the generator.
    #[arg(long, default_value_t = GeneratorConfig::default().seed)]
    pub(crate) seed: u64,
    /// Fitting modes to compare (comma-separated).
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [FitMode::Oracle, FitMode::Online])]
    pub(crate) mode: Vec<FitMode>,
    /// Also print the site's and the log's ingest statistics (change histogram, pages per
    /// unit, most-changed pages, workload) before the comparison, and every measure per
    /// budget after it.
    #[arg(long)]
    pub(crate) verbose: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let config = GeneratorConfig {
        pages: args.pages,
        weeks: args.weeks,
        seed: args.seed,
        ..GeneratorConfig::default()
    };
    println!(
        "== generate: a synthetic evolving site and an AOL-layout query log → {}",
        args.out.display()
    );
    let site = generate_site(&config, &args.out)?;
    let corpus = CorpusArgs::single(site.corpus_dir.clone(), 7);
    let workload = WorkloadArgs {
        layout: None,
        keep_repeats: false,
        top_queries: None,
        filter: RelevanceFilter::Knee,
        max_skipped_share: refresher::querylog::layouts::DEFAULT_MAX_SKIPPED_SHARE,
    };
    if args.verbose {
        println!("\n== ingest");
        super::ingest::run(super::ingest::Args {
            corpus: corpus.clone(),
            log: Some(site.query_log.clone()),
            workload: workload.clone(),
            json: false,
        })?;
    }
    let max = site.truth.pages_total as usize;
    let mut budgets: Vec<usize> = [0, 1, 4, 16, 64, 256, 1024]
        .into_iter()
        .filter(|&b| b < max)
        .collect();
    budgets.push(max);
    println!(
        "\n== compare: budget needed per policy (outputs in {}/compare)",
        args.out.display()
    );
    super::compare::run(super::compare::Args {
        experiment: ExperimentArgs {
            corpus,
            log: site.query_log,
            workload,
            metric_workload: MetricWorkload::Queries,
            viewing_exponent: 1.5,
            fit_viewing_exponent: false,
            pieces: 3,
            delta_q: refresher::quality::measure::DeltaQMethod::Estimate,
            signals: vec!["none".into()],
        },
        mesh: super::mesh_args::MeshArgs::one_worker(),
        budgets: Some(budgets),
        budget_shares: None,
        warmup: super::experiment::WarmupArgs {
            warmup_units: 0,
            oracle_history: refresher::sim::run::OracleHistory::All,
        },
        policies: None,
        thetas: None,
        params: Vec::new(),
        sweeps: vec![("theta".into(), "0.1,0.3,0.5,0.7,0.9".into())],
        targets: None,
        mode: args.mode,
        scoring: ScoringKind::Bm25,
        uc_estimator: None,
        seed: 1,
        new_pages: refresher::crawl::NewPages::OutsideBudget,
        out: Some(args.out.join("compare")),
        json: false,
        no_intervals: false,
        metrics: if args.verbose {
            super::compare::MetricsShown::All
        } else {
            super::compare::MetricsShown::Summary
        },
    })
}
