//! The synthetic evolving website: the project's embedded default data.
//!
//! [`generate_site`] writes weekly WARC snapshots of a made-up wiki and a query log in the AOL
//! collection layout, so that the whole pipeline (ingest → simulate → compare policies) runs on
//! a fresh machine without downloads. Because the demo's conclusions are drawn from it, the site
//! imitates the statistics of a real one (the EmacsWiki weekly snapshots of 2013; the resulting
//! figures are listed in `corpora/README.md`) rather than being uniform noise:
//!
//! * a Zipf vocabulary of pronounceable made-up words under English function words, topics as
//!   skewed distributions over it, per-page identifying keywords, log-normal page lengths
//!   (median ~150 words), links by preferential attachment (heavy-tailed in-links);
//! * weekly evolution from a heavy-tailed mix of change rates (most pages never change, ~1 %
//!   change almost weekly), each change of a kind: ad/boilerplate churn (never searched),
//!   topical paragraph edits (what queries hit), typos; pages created and deleted over time;
//! * a query log whose on-site queries are built from topical terms of the pages and whose
//!   off-site share (~30 %) are navigational queries for other sites.
//!
//! Output is a pure function of the [`GeneratorConfig`]: one `ChaCha8Rng` seeded from
//! `seed` drives every choice, and nothing is ever produced by iterating a hash map.
//! The [`GroundTruth`] returned alongside lets tests check the ingest against what was written.

mod correlation;
mod layout;
mod querylog;
mod site;
mod warc;
mod words;

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use xxhash_rust::xxh3::xxh3_64;

use super::clock::WEEK_SECONDS;
use site::{by_url, ChangeKind, RateClass, SiteModel};
use warc::{WarcSink, GONE_BODY};
use words::Lexicon;

pub use correlation::{ChangeCorrelation, CorrelationError, CorrelationGroups};
pub use querylog::AOL_HEADER;

const WEEK: i64 = WEEK_SECONDS;

/// Week 0 of generated sites: Sunday 2024-01-07 00:00:00 UTC (Unix seconds).
pub const DEFAULT_ORIGIN: i64 = 1_704_585_600;

/// Made-up site words (function words come on top), ad words, brand names.
const SITE_WORDS: usize = 5000;
const AD_WORDS: usize = 400;
const BRAND_WORDS: usize = 300;

/// What to generate. `Default` is the demo size: small enough that ingest and a full policy
/// comparison take seconds, large enough for the policies to differ.
#[derive(Debug, Clone, serde::Serialize)]
pub struct GeneratorConfig {
    /// Pages at week 0 (about 8 % more are created over the weeks).
    pub pages: usize,
    /// Weekly snapshots (week 0 included).
    pub weeks: u32,
    pub seed: u64,
    /// Query log lines to write (approximately: the last submission may add up to 4 lines).
    pub queries: usize,
    /// Largest WARC file size in bytes before a new file is started (EmacsWiki: 40 MiB).
    pub max_file_bytes: u64,
    /// Collection name: files are `<name>-00000.warc.gz`, ...
    pub name: String,
    /// Host of every page URL (one site; several sites are `site1.example`, ...).
    pub host: String,
    /// Start of week 0, Unix seconds.
    pub origin: i64,
    /// Sites (hosts). 1: the flat `/wiki/<Name>` site, byte-identical to before multi-site
    /// support when `correlation` is off; more: a directory tree per site, pages with images,
    /// tables and contact addresses.
    pub sites: usize,
    /// How strongly, and within which groups, pages' change rates and events are correlated.
    pub correlation: ChangeCorrelation,
}

impl Default for GeneratorConfig {
    fn default() -> Self {
        GeneratorConfig {
            pages: 1500,
            weeks: 26,
            seed: 42,
            queries: 30_000,
            max_file_bytes: 40 << 20,
            name: "synthetic-wiki".to_string(),
            host: "wiki.synthetic.example".to_string(),
            origin: DEFAULT_ORIGIN,
            sites: 1,
            correlation: ChangeCorrelation::default(),
        }
    }
}

/// Errors while generating: bad configuration or an output file that cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("invalid generator configuration: {0}")]
    Config(String),
}

impl GenerateError {
    fn io(path: impl AsRef<Path>, source: std::io::Error) -> Self {
        GenerateError::Io {
            path: path.as_ref().to_path_buf(),
            source,
        }
    }
}

/// Change events applied, by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ChangeKindCounts {
    /// Ad/boilerplate block replaced (words users never search for).
    pub ad_churn: u64,
    /// Topical paragraph added, replaced or removed.
    pub topical_edit: u64,
    /// One word misspelt.
    pub typo: u64,
    /// A sentence linking to a newly created page appended.
    pub link_added: u64,
}

/// What the query log holds.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct LogTruth {
    /// Data lines (header excluded).
    pub lines: u64,
    /// Lines with `ItemRank` and `ClickURL`.
    pub click_lines: u64,
    /// Result-page repeats (the same query re-issued right after).
    pub repeat_lines: u64,
    /// Lines of off-site (navigational) queries, which match nothing on the site.
    pub offsite_lines: u64,
    /// Distinct AnonIDs in the log.
    pub users: u64,
    pub distinct_queries: u64,
    pub(crate) onsite_pool: u64,
    pub(crate) offsite_pool: u64,
}

/// The facts of a generated site, in the terms of the EmacsWiki README's table.
#[derive(Debug, Clone, serde::Serialize)]
pub struct GroundTruth {
    /// Pages ever present.
    pub pages_total: u64,
    pub pages_week0: u64,
    pub pages_last_week: u64,
    pub(crate) pages_in_all_weeks: u64,
    /// Pages whose first record is after week 0.
    pub pages_created: u64,
    /// Pages absent at the last week.
    pub pages_deleted: u64,
    /// Pages that were gone for some weeks and came back.
    pub pages_returned: u64,
    /// `200 OK` response records (page versions).
    pub records_ok: u64,
    /// `404 Not Found` response records.
    pub records_gone: u64,
    /// Response records per week, 200 and 404 together.
    pub records_per_week: Vec<u64>,
    /// Per page (sorted by URL): weeks after its first record in which its HTML changed
    /// (a return after a 404 is not counted).
    pub(crate) changed_weeks: Vec<(String, u32)>,
    pub change_kinds: ChangeKindCounts,
    /// Largest and median in-link count at the end (links to absent pages included).
    pub max_in_links: u32,
    pub median_in_links: u32,
    /// Every word of the ad vocabulary (as written; the analyzer may stem them).
    pub(crate) ad_words: Vec<String>,
    pub log: LogTruth,
    /// Each site (host) with its pages ever present and its directories.
    pub sites: Vec<SiteTruth>,
    /// Per page (sorted by URL): the weeks its HTML changed (as counted in `changed_weeks`).
    /// Not serialised: it is as long as the history.
    #[serde(skip)]
    pub change_events: Vec<(String, Vec<u32>)>,
}

/// One generated site.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SiteTruth {
    pub host: String,
    /// Pages ever present on the site.
    pub pages: u64,
    /// Directories of the site's tree (1 for the flat one-site layout).
    pub directories: u64,
}

impl GroundTruth {
    /// Pages per bucket of changed weeks: 0, 1, 2, 3-5, 6-10, 11-20, 21+ (the EmacsWiki table).
    pub fn changed_weeks_histogram(&self) -> [u64; 7] {
        let mut h = [0u64; 7];
        for &(_, c) in &self.changed_weeks {
            let b = match c {
                0 => 0,
                1 => 1,
                2 => 2,
                3..=5 => 3,
                6..=10 => 4,
                11..=20 => 5,
                _ => 6,
            };
            h[b] += 1;
        }
        h
    }
}

/// What [`generate_site`] wrote.
#[derive(Debug, Clone)]
pub struct GeneratedSite {
    /// `OUT/corpus`, holding the WARC files.
    pub corpus_dir: PathBuf,
    pub warc_files: Vec<PathBuf>,
    /// `OUT/querylog/aol-synthetic.txt`.
    pub query_log: PathBuf,
    pub truth: GroundTruth,
}

/// `YYYY-MM-DDThh:mm:ssZ` of a Unix time.
fn warc_date(t: i64) -> String {
    chrono::DateTime::from_timestamp(t, 0)
        .expect("time in range")
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// Writes the WARC snapshots to `out_dir/corpus/` and the query log to
/// `out_dir/querylog/aol-synthetic.txt`; existing files of the same names are overwritten.
pub fn generate_site(
    config: &GeneratorConfig,
    out_dir: &Path,
) -> Result<GeneratedSite, GenerateError> {
    check_config(config)?;
    let corpus_dir = out_dir.join("corpus");
    let log_dir = out_dir.join("querylog");
    for d in [&corpus_dir, &log_dir] {
        std::fs::create_dir_all(d).map_err(|e| GenerateError::io(d, e))?;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
    let lexicon = Lexicon::build(&mut rng, SITE_WORDS, AD_WORDS, BRAND_WORDS);
    let topics = (config.pages / 40).clamp(8, 60);
    let mut model = SiteModel::new(&mut rng, lexicon, topics, &config.host, config.sites);
    add_week0_pages(&mut rng, &mut model, config.pages);
    // Correlation draws come from their own stream, so a site's pages and links are the same
    // at every strength; without correlation nothing is drawn (the default site's bytes).
    let correlated = config.correlation.is_active();
    let mut latent_rng = ChaCha8Rng::seed_from_u64(config.seed ^ 0x636f_7272_656c_6174);
    if correlated {
        correlation::correlate_rates(&mut model, &config.correlation, &mut latent_rng);
    }
    let schedule = Schedule::draw(&mut rng, &model, config);

    let mut sink = WarcSink::new(
        &corpus_dir,
        &config.name,
        config.max_file_bytes,
        config.seed,
        warcinfo(config, correlated),
        warc_date(config.origin),
    );
    let mut history = History {
        records_per_week: Vec::with_capacity(config.weeks as usize),
        ..History::default()
    };
    for week in 0..config.weeks {
        let latent = (correlated && week > 0)
            .then(|| correlation::weekly_uniforms(&model, &config.correlation, &mut latent_rng));
        let edits = evolve_week(
            &mut rng,
            &mut model,
            &schedule,
            week,
            latent.as_deref(),
            &mut history,
        );
        history.write_week(&mut sink, &model, week, &edits, config.origin)?;
    }
    sink.finish_file()?;

    let log_path = log_dir.join("aol-synthetic.txt");
    let log = querylog::write_log(
        &mut rng,
        &model,
        config.queries,
        config.weeks,
        config.origin,
        &log_path,
    )?;
    let truth = ground_truth(config, &model, &schedule, history, log);
    Ok(GeneratedSite {
        corpus_dir,
        warc_files: sink.files.clone(),
        query_log: log_path,
        truth,
    })
}

/// Refuses a configuration the generator cannot honour, before anything is written.
fn check_config(config: &GeneratorConfig) -> Result<(), GenerateError> {
    if config.pages < 2 || config.weeks < 1 || config.queries < 1 {
        return Err(GenerateError::Config(format!(
            "need at least 2 pages, 1 week and 1 query line (got {} pages, {} weeks, {} lines)",
            config.pages, config.weeks, config.queries
        )));
    }
    if config.sites < 1 || config.sites > config.pages {
        return Err(GenerateError::Config(format!(
            "sites must be between 1 and the {} pages (got {})",
            config.pages, config.sites
        )));
    }
    if !(0.0..=1.0).contains(&config.correlation.strength) {
        return Err(GenerateError::Config(format!(
            "change correlation must be in [0, 1] (got {})",
            config.correlation.strength
        )));
    }
    Ok(())
}

/// The `n` week-0 pages, with the rarer rate classes guaranteed at least one page each.
fn add_week0_pages(rng: &mut ChaCha8Rng, model: &mut SiteModel, n: usize) {
    let mut classes = Vec::with_capacity(n);
    for (class, share) in [
        (RateClass::Hot, 0.01),
        (RateClass::Frequent, 0.04),
        (RateClass::Occasional, 0.09),
        (RateClass::Rare, 0.12),
    ] {
        let k = ((n as f64 * share).round() as usize).max(1);
        classes.extend(std::iter::repeat_n(class, k));
    }
    classes.truncate(n);
    classes.resize(n, RateClass::Static);
    classes.shuffle(rng);
    // Each page links to pages made before it (growth plus preferential attachment, the
    // Barabási–Albert process), so early, much-linked pages gather a power-law share of in-links.
    for class in classes {
        let p = model.add_page(rng, 0, Some(class));
        model.add_out_links(rng, p);
    }
}

/// When pages are created, deleted and come back over the weeks.
struct Schedule {
    /// Pages created per week.
    created_per_week: Vec<usize>,
    /// `(week, page)`, sorted.
    deletions: Vec<(u32, u32)>,
    /// `(week, page)` of the deleted page that comes back.
    returns: Vec<(u32, u32)>,
}

impl Schedule {
    /// Creations (~8 % of the site), deletions (~1 %), one return (as on EmacsWiki).
    fn draw(rng: &mut ChaCha8Rng, model: &SiteModel, config: &GeneratorConfig) -> Self {
        let n = config.pages;
        let last = config.weeks - 1;
        let mut created_per_week = vec![0usize; config.weeks as usize];
        if config.weeks >= 2 {
            for _ in 0..((n as f64 * 0.08).round() as usize).max(1) {
                created_per_week[rng.gen_range(1..=last) as usize] += 1;
            }
        }
        let mut deletions: Vec<(u32, u32)> = Vec::new(); // (week, page)
        let mut returns: Vec<(u32, u32)> = Vec::new();
        if config.weeks >= 3 {
            let calm: Vec<u32> = (0..n as u32)
                .filter(|&p| matches!(model.pages[p as usize].class, RateClass::Static))
                .collect();
            let k = ((n as f64 * 0.01).round() as usize).max(1).min(calm.len());
            for (i, &p) in calm.choose_multiple(rng, k).enumerate() {
                // The first one goes in the first half, so it has time to come back.
                let latest = if i == 0 { (last / 2).max(1) } else { last };
                deletions.push((rng.gen_range(1..=latest), p));
            }
            deletions.sort_unstable();
            if let Some(&(w, p)) = deletions.iter().find(|&&(w, _)| w < last) {
                returns.push((rng.gen_range(w + 1..=last), p));
            }
        }
        Schedule {
            created_per_week,
            deletions,
            returns,
        }
    }
}

/// The `warcinfo` record's fields, CRLF-separated.
fn warcinfo(config: &GeneratorConfig, correlated: bool) -> String {
    let last = config.weeks - 1;
    [
        "software: refresher generate (synthetic site)".to_string(),
        "format: WARC File Format 1.1".to_string(),
        "description: Weekly snapshots of a synthetic evolving website; one response record per \
         page version; WARC-Date is the week boundary."
            .to_string(),
        format!("isPartOf: {}", config.name),
        format!("seed: {}", config.seed),
        format!(
            "weeks: {}, {} .. {}",
            config.weeks,
            warc_date(config.origin),
            warc_date(config.origin + last as i64 * WEEK)
        ),
    ]
    .into_iter()
    .chain((config.sites > 1 || correlated).then(|| {
        format!(
            "sites: {}, change correlation {} within {}",
            config.sites,
            config.correlation.strength,
            config.correlation.groups.names()
        )
    }))
    .collect::<Vec<_>>()
    .join("\r\n")
}

/// The pages one week touched: to write again, gone (404), back after a 404.
struct WeekEdits {
    touched: BTreeSet<u32>,
    gone: BTreeSet<u32>,
    back: BTreeSet<u32>,
}

/// One week of the site's evolution: every page at week 0; later, existing pages change
/// (each by its rate, against `latent`'s correlated uniforms when given, else `rng`), then
/// the week's pages are created and linked, deleted and returned.
fn evolve_week(
    rng: &mut ChaCha8Rng,
    model: &mut SiteModel,
    schedule: &Schedule,
    week: u32,
    latent: Option<&[f64]>,
    history: &mut History,
) -> WeekEdits {
    let mut touched: BTreeSet<u32> = BTreeSet::new();
    let mut gone: BTreeSet<u32> = BTreeSet::new();
    let mut back: BTreeSet<u32> = BTreeSet::new();
    if week == 0 {
        touched.extend(0..model.pages.len() as u32);
    }
    // Existing pages change first, so a page created this week is not also "changed".
    if week > 0 {
        for p in 0..model.pages.len() as u32 {
            let page = &model.pages[p as usize];
            let draw: f64 = match latent {
                Some(u) => u[p as usize],
                None => rng.gen(),
            };
            if page.present && draw < page.rate {
                match model.change(rng, p) {
                    ChangeKind::AdChurn => history.kinds.ad_churn += 1,
                    ChangeKind::TopicalEdit => history.kinds.topical_edit += 1,
                    ChangeKind::Typo => history.kinds.typo += 1,
                }
                touched.insert(p);
            }
        }
    }
    for _ in 0..schedule.created_per_week[week as usize] {
        let id = model.add_page(rng, week, None);
        model.add_out_links(rng, id);
        touched.insert(id);
        // Announced on one or two existing pages, as a wiki links a new page from old ones.
        for _ in 0..rng.gen_range(1..=2) {
            if let Some(from) = model.pick_target(rng, id) {
                model.add_link_to(rng, from, id);
                history.kinds.link_added += 1;
                touched.insert(from);
            }
        }
    }
    for &(_, p) in schedule.deletions.iter().filter(|&&(w, _)| w == week) {
        model.pages[p as usize].present = false;
        touched.remove(&p);
        gone.insert(p);
        history.ever_gone.insert(p);
    }
    for &(_, p) in schedule.returns.iter().filter(|&&(w, _)| w == week) {
        model.pages[p as usize].present = true;
        back.insert(p);
    }
    WeekEdits {
        touched,
        gone,
        back,
    }
}

/// What the weeks wrote, for the ground truth.
#[derive(Default)]
struct History {
    kinds: ChangeKindCounts,
    /// Per page, the hash of the HTML last written.
    last_hash: Vec<u64>,
    /// Per page, the weeks its HTML changed (counted).
    changed: Vec<u32>,
    /// Per page, the weeks its HTML changed.
    change_events: Vec<Vec<u32>>,
    records_per_week: Vec<u64>,
    records_ok: u64,
    records_gone: u64,
    /// Pages deleted at some week.
    ever_gone: HashSet<u32>,
}

impl History {
    /// Writes week `week`'s records in URL order: a 404 per page gone, the HTML of each page
    /// touched, created or back whose bytes differ from the last written (else nothing).
    fn write_week(
        &mut self,
        sink: &mut WarcSink,
        model: &SiteModel,
        week: u32,
        edits: &WeekEdits,
        origin: i64,
    ) -> Result<(), GenerateError> {
        let date = warc_date(origin + week as i64 * WEEK);
        let WeekEdits {
            touched,
            gone,
            back,
        } = edits;
        self.last_hash.resize(model.pages.len(), 0);
        self.changed.resize(model.pages.len(), 0);
        self.change_events.resize(model.pages.len(), Vec::new());

        let all: BTreeSet<u32> = touched.union(gone).chain(back.iter()).copied().collect();
        let mut count = 0u64;
        for p in by_url(model, &all) {
            let url = model.url(p);
            if gone.contains(&p) {
                sink.response(&date, &url, 404, GONE_BODY)?;
                self.records_gone += 1;
                count += 1;
                continue;
            }
            let html = model.render(p);
            let h = xxh3_64(html.as_bytes());
            let first = model.pages[p as usize].created == week;
            if first || back.contains(&p) || h != self.last_hash[p as usize] {
                if !first && !back.contains(&p) {
                    self.changed[p as usize] += 1;
                    self.change_events[p as usize].push(week);
                }
                self.last_hash[p as usize] = h;
                sink.response(&date, &url, 200, &html)?;
                self.records_ok += 1;
                count += 1;
            }
        }
        self.records_per_week.push(count);
        Ok(())
    }
}

/// The facts of the generated site, from the model at the end, the schedule and what the
/// weeks wrote.
fn ground_truth(
    config: &GeneratorConfig,
    model: &SiteModel,
    schedule: &Schedule,
    mut history: History,
    log: LogTruth,
) -> GroundTruth {
    let n = config.pages;
    let pages = &model.pages;
    let mut changed_weeks: Vec<(String, u32)> = (0..pages.len() as u32)
        .map(|p| (model.url(p), history.changed[p as usize]))
        .collect();
    changed_weeks.sort();
    let mut events: Vec<(String, Vec<u32>)> = (0..pages.len() as u32)
        .map(|p| {
            (
                model.url(p),
                std::mem::take(&mut history.change_events[p as usize]),
            )
        })
        .collect();
    events.sort();
    let mut in_links = model.in_links.clone();
    in_links.sort_unstable();
    let ever_gone = &history.ever_gone;
    GroundTruth {
        pages_total: pages.len() as u64,
        pages_week0: n as u64,
        pages_last_week: pages.iter().filter(|p| p.present).count() as u64,
        pages_in_all_weeks: (0..n as u32).filter(|p| !ever_gone.contains(p)).count() as u64,
        pages_created: (pages.len() - n) as u64,
        pages_deleted: pages.iter().filter(|p| !p.present).count() as u64,
        pages_returned: schedule.returns.len() as u64,
        records_ok: history.records_ok,
        records_gone: history.records_gone,
        records_per_week: history.records_per_week,
        changed_weeks,
        change_kinds: history.kinds,
        max_in_links: *in_links.last().unwrap_or(&0),
        median_in_links: in_links[in_links.len() / 2],
        ad_words: model.lexicon.ad.clone(),
        log,
        sites: site_truths(config, model),
        change_events: events,
    }
}

/// Each site with its pages ever present and its directories (one flat site: the host).
fn site_truths(config: &GeneratorConfig, model: &SiteModel) -> Vec<SiteTruth> {
    let pages = &model.pages;
    match &model.layout {
        Some(layout) => layout
            .hosts
            .iter()
            .enumerate()
            .map(|(i, host)| SiteTruth {
                host: host.clone(),
                pages: (0..pages.len() as u32)
                    .filter(|&p| model.site_of(p) == i as u32)
                    .count() as u64,
                directories: layout.site_dirs[i].len() as u64,
            })
            .collect(),
        None => vec![SiteTruth {
            host: config.host.clone(),
            pages: pages.len() as u64,
            directories: 1,
        }],
    }
}

#[cfg(test)]
mod tests;
