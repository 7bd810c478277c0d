//! `refresher estimate-check`: the ΔQ estimate against brute force (single-term, as the
//! paper models it, and exact under the evaluated metric), and forecastability (paper 003
//! Fig. 3).

use std::path::PathBuf;

use anyhow::Context;
use refresher::corpus::LiveWeb;
use refresher::index::ScoringKind;
use refresher::report::svg::{Chart, Scale, Series};
use refresher::sim::estimate_check::estimate_check;

use super::experiment::{csv_file, ExperimentArgs};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub(crate) experiment: ExperimentArgs,
    /// Scoring function of the search engine.
    #[arg(long, value_enum, default_value_t = ScoringKind::Bm25)]
    pub(crate) scoring: ScoringKind,
    /// Refreshes sampled for the brute-force comparison.
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub(crate) pairs: u32,
    /// Seed of the sample.
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// Write pairs.csv, forecast.csv and forecast.svg into this directory.
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub(crate) json: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let loaded = args.experiment.load()?;
    let env = loaded.environment(args.scoring)?;
    let spinner = refresher::progress::spinner("brute force");
    let check = estimate_check(&env, args.pairs as usize, args.seed)?;
    spinner.finish_and_clear();
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let mut f = csv_file(&dir.join("pairs.csv"))?;
        f.write_record([
            "unit",
            "url",
            "estimate",
            "truth",
            "exact",
            "estimate_multi_term",
        ])?;
        for p in &check.pair_checks {
            f.write_record([
                p.unit.to_string(),
                loaded.corpus.url(p.page).to_string(),
                p.estimate.to_string(),
                p.truth.to_string(),
                p.exact.to_string(),
                p.estimate_multi_term.to_string(),
            ])?;
        }
        f.flush()?;
        let mut f = csv_file(&dir.join("forecast.csv"))?;
        f.write_record(["url", "delta_q_first_half", "delta_q_second_half"])?;
        for p in &check.forecast {
            f.write_record([
                loaded.corpus.url(p.page).to_string(),
                p.first_half.to_string(),
                p.second_half.to_string(),
            ])?;
        }
        f.flush()?;
        // Zeros sit on the edges of the log-log plot, as in the paper's figure.
        let floor = check
            .forecast
            .iter()
            .flat_map(|p| [p.first_half, p.second_half])
            .filter(|&v| v > 0.0)
            .fold(f64::INFINITY, f64::min)
            / 2.0;
        let points: Vec<(f64, f64)> = check
            .forecast
            .iter()
            .map(|p| (p.first_half.max(floor), p.second_half.max(floor)))
            .collect();
        let lo = points
            .iter()
            .map(|p| p.0.min(p.1))
            .fold(f64::INFINITY, f64::min);
        let hi = points.iter().map(|p| p.0.max(p.1)).fold(0.0, f64::max);
        let svg = Chart {
            title: format!("Forecastability of ΔQ̄(p) ({} scoring)", env.config.scoring),
            x_label: format!("ΔQ̄(p), units 1–{} (log scale)", check.forecast_split - 1),
            y_label: format!(
                "ΔQ̄(p), units {}–{} (log scale)",
                check.forecast_split,
                env.units() - 1
            ),
            x_scale: Scale::Log,
            y_scale: Scale::Log,
            lines: false,
            ..Chart::new("", "", "")
        }
        .render(&[
            Series::new("pages", points),
            Series::new("y = x", vec![(lo, lo), (hi, hi)]),
        ]);
        std::fs::write(dir.join("forecast.svg"), svg)?;
    }
    if args.json {
        let mut v = serde_json::to_value(&check)?;
        if let Some(map) = v.as_object_mut() {
            map.remove("pair_checks");
            map.remove("forecast");
            map.insert("collections".to_string(), loaded.corpus.collections_json());
        }
        println!("{v}");
    } else {
        super::inputs::print_collections(&loaded.corpus);
        println!(
            "single-term ΔQ estimate (paper 003) vs brute force over {} sampled refreshes ({} scoring): Spearman ρ = {:.3}, median relative error = {:.3}",
            check.pairs, env.config.scoring, check.spearman, check.median_relative_error
        );
        println!(
            "single-term ΔQ estimate vs exact ΔQ under the evaluated metric (queries as issued): Spearman ρ = {:.3}, median relative error = {:.3}; single-term brute force vs exact: ρ = {:.3}; exact ΔQ costs {:.2} ms per refresh",
            check.spearman_exact,
            check.median_relative_error_exact,
            check.spearman_single_term_vs_exact,
            check.exact_ms_per_refresh
        );
        println!(
            "multi-term estimate (queries as issued; the default --delta-q estimate) vs exact ΔQ: Spearman ρ = {:.3}, median relative error = {:.3}",
            check.spearman_multi_term_exact, check.median_relative_error_multi_term_exact
        );
        println!(
            "forecastability: {} pages with ΔQ̄ > 0 in a half; {:.1} % within a factor of 2 across the halves (units 1–{} vs {}–{})",
            check.forecast_pages,
            100.0 * check.forecast_near_diagonal_share,
            check.forecast_split - 1,
            check.forecast_split,
            env.units() - 1
        );
        println!(
            "score-to-rank functions: {} pieces, {:.1} bytes per query",
            env.config.pieces, check.score_rank_bytes_per_query
        );
    }
    Ok(())
}
