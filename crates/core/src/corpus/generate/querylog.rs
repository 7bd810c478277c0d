//! The synthetic query log, in the AOL 2006 collection layout.
//!
//! Its shape follows the real AOL log: a Zipf popularity of queries (a few very frequent, a long
//! tail of singletons), mostly short queries, users of very unequal activity who re-issue their
//! own favourite queries, clicks concentrated on the top ranks, result-page repeats, and a large
//! share of navigational queries for other sites (`google`, `yahoo mail`) that have nothing to do
//! with the crawled site. Those off-site queries are what the workload relevance filter of
//! paper 003 exists to drop, so the default data must contain them.

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use rand::distributions::{Distribution, WeightedIndex};
use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::LogNormal;

use super::site::SiteModel;
use super::words::{zipf, OFFSITE_SUFFIXES};
use super::{GenerateError, LogTruth};

/// The header line of AOL collection files.
pub const AOL_HEADER: &str = "AnonID\tQuery\tQueryTime\tItemRank\tClickURL";

/// Share of submissions that are off-site (navigational) queries.
const OFFSITE_SHARE: f64 = 0.3;

struct PoolQuery {
    text: String,
    /// The page the query was built from (on-site queries), for clicks.
    page: Option<u32>,
    /// For off-site queries, the brand's home page (the click target).
    home: Option<String>,
}

/// Writes about `lines` log lines over `weeks` weeks from `origin` (Unix seconds) to `path`.
pub(super) fn write_log(
    rng: &mut ChaCha8Rng,
    model: &SiteModel,
    lines: usize,
    weeks: u32,
    origin: i64,
    path: &Path,
) -> Result<LogTruth, GenerateError> {
    let pool_size = (lines / 5).max(20);
    let onsite = onsite_pool(rng, model, pool_size - pool_size * 3 / 10);
    let offsite = offsite_pool(rng, model, pool_size * 3 / 10);
    let onsite_pop = zipf(onsite.len(), 0.9);
    let offsite_pop = zipf(offsite.len(), 1.0);

    // Users with heavy-tailed activity; AnonIDs random, distinct, written in numeric order.
    let users = (lines / 40).max(5);
    let activity: Vec<f64> = {
        let d = LogNormal::new(0.0, 1.5).expect("valid");
        (0..users).map(|_| d.sample(rng)).collect()
    };
    let pick_user = WeightedIndex::new(&activity).expect("positive activity");
    let mut ids = HashSet::new();
    let anon: Vec<u64> = (0..users)
        .map(|_| loop {
            let id = rng.gen_range(100..25_000_000u64);
            if ids.insert(id) {
                break id;
            }
        })
        .collect();
    let mut history: Vec<Vec<(bool, usize)>> = vec![Vec::new(); users];
    let rank_pick = WeightedIndex::new((1..=10).map(|r| (r as f64).powf(-1.5))).expect("valid");
    let span = weeks.max(1) as i64 * super::WEEK;
    let mut by_topic: Vec<Vec<u32>> = vec![Vec::new(); model.topic_words.len()];
    for (i, p) in model.pages.iter().enumerate() {
        by_topic[p.topic].push(i as u32);
    }

    // (anon id, time, sequence, line)
    let mut out: Vec<(u64, i64, usize, String)> = Vec::with_capacity(lines + 8);
    let mut truth = LogTruth::default();
    let mut distinct: HashSet<(bool, usize)> = HashSet::new();
    while out.len() < lines {
        let u = pick_user.sample(rng);
        let q = match history[u].choose(rng) {
            Some(&old) if rng.gen::<f64>() < 0.25 => old,
            _ if rng.gen::<f64>() < OFFSITE_SHARE => (false, offsite_pop.sample(rng)),
            _ => (true, onsite_pop.sample(rng)),
        };
        history[u].push(q);
        distinct.insert(q);
        let pq = if q.0 { &onsite[q.1] } else { &offsite[q.1] };
        let time = origin + rng.gen_range(0..span);
        let stamp = aol_time(time);
        let emit = |out: &mut Vec<(u64, i64, usize, String)>, t: i64, line: String| {
            let seq = out.len();
            out.push((anon[u], t, seq, line));
        };
        let clicks = if rng.gen::<f64>() < if q.0 { 0.65 } else { 0.5 } {
            1 + (rng.gen::<f64>() < 0.25) as usize + (rng.gen::<f64>() < 0.1) as usize
        } else {
            0
        };
        let mut ranks: Vec<usize> = (0..clicks).map(|_| rank_pick.sample(rng) + 1).collect();
        ranks.sort_unstable();
        ranks.dedup();
        if !q.0 {
            truth.offsite_lines += ranks.len().max(1) as u64;
        }
        if ranks.is_empty() {
            emit(&mut out, time, format!("{}\t{}\t{stamp}", anon[u], pq.text));
        }
        for (i, &r) in ranks.iter().enumerate() {
            let url = match (&pq.home, pq.page) {
                (Some(home), _) => home.clone(),
                (None, Some(p)) if i == 0 => model.url(p),
                (None, Some(p)) => model.url(same_topic_page(rng, &by_topic, model, p)),
                (None, None) => unreachable!("every pool query has a page or a home"),
            };
            truth.click_lines += 1;
            emit(
                &mut out,
                time,
                format!("{}\t{}\t{stamp}\t{r}\t{url}", anon[u], pq.text),
            );
        }
        // The next result page of the same query: the same query again, a little later.
        if rng.gen::<f64>() < 0.06 {
            let t = time + rng.gen_range(5..120);
            emit(
                &mut out,
                t,
                format!("{}\t{}\t{}", anon[u], pq.text, aol_time(t)),
            );
            truth.repeat_lines += 1;
            if !q.0 {
                truth.offsite_lines += 1;
            }
        }
    }
    out.sort_unstable_by_key(|a| (a.0, a.1, a.2));

    let file = File::create(path).map_err(|e| GenerateError::io(path, e))?;
    let mut w = BufWriter::new(file);
    let io = |e| GenerateError::io(path, e);
    writeln!(w, "{AOL_HEADER}").map_err(io)?;
    for (_, _, _, line) in &out {
        writeln!(w, "{line}").map_err(io)?;
    }
    w.flush().map_err(io)?;

    let active: HashSet<u64> = out.iter().map(|l| l.0).collect();
    truth.lines = out.len() as u64;
    truth.users = active.len() as u64;
    truth.distinct_queries = distinct.len() as u64;
    truth.onsite_pool = onsite.len() as u64;
    truth.offsite_pool = offsite.len() as u64;
    Ok(truth)
}

/// `YYYY-MM-DD hh:mm:ss`, the AOL `QueryTime` form.
fn aol_time(t: i64) -> String {
    chrono::DateTime::from_timestamp(t, 0)
        .expect("time in range")
        .format("%Y-%m-%d %H:%M:%S")
        .to_string()
}

/// Queries of 1–3 topical terms taken from one page each; pages picked by in-links + 1, as
/// users look for what the Web links to. Terms come from the page's keywords and the topical
/// words ever on it, including paragraphs added by later edits (what a refresh reveals).
fn onsite_pool(rng: &mut ChaCha8Rng, model: &SiteModel, n: usize) -> Vec<PoolQuery> {
    let pick_page =
        WeightedIndex::new(model.in_links.iter().map(|&l| l as f64 + 1.0)).expect("pages");
    let lengths = WeightedIndex::new([0.35, 0.4, 0.25]).expect("valid");
    let mut seen = HashSet::new();
    let mut pool = Vec::with_capacity(n);
    let mut attempts = 0;
    while pool.len() < n && attempts < n * 50 {
        attempts += 1;
        let p = pick_page.sample(rng) as u32;
        let page = &model.pages[p as usize];
        let len = lengths.sample(rng) + 1;
        let mut terms: Vec<u32> = Vec::with_capacity(len);
        if rng.gen::<f64>() < 0.6 {
            terms.push(*page.keywords.choose(rng).expect("keywords"));
        }
        while terms.len() < len {
            let Some(&w) = page.query_terms.choose(rng) else {
                break;
            };
            if !terms.contains(&w) {
                terms.push(w);
            } else if page.query_terms.len() <= terms.len() {
                break;
            }
        }
        let text: Vec<&str> = terms
            .iter()
            .map(|&w| model.lexicon.site[w as usize].as_str())
            .collect();
        let text = text.join(" ");
        if seen.insert(text.clone()) {
            pool.push(PoolQuery {
                text,
                page: Some(p),
                home: None,
            });
        }
    }
    pool
}

/// Navigational queries for made-up brands: `brand`, `brand mail`, `www.brand.com`.
fn offsite_pool(rng: &mut ChaCha8Rng, model: &SiteModel, n: usize) -> Vec<PoolQuery> {
    let brands = &model.lexicon.brands;
    let pick = zipf(brands.len(), 0.8);
    let mut seen = HashSet::new();
    let mut pool = Vec::with_capacity(n);
    let mut attempts = 0;
    while pool.len() < n.max(1) && attempts < n * 50 + 50 {
        attempts += 1;
        let b = &brands[pick.sample(rng)];
        let text = match rng.gen_range(0..10) {
            0..=4 => b.clone(),
            5..=7 => format!("{b} {}", OFFSITE_SUFFIXES.choose(rng).expect("suffixes")),
            _ => format!("www.{b}.com"),
        };
        if seen.insert(text.clone()) {
            pool.push(PoolQuery {
                text,
                page: None,
                home: Some(format!("http://www.{b}.com")),
            });
        }
    }
    pool
}

/// Another page of `page`'s topic (or `page` itself when it is alone), as a lower-ranked click.
fn same_topic_page(
    rng: &mut ChaCha8Rng,
    by_topic: &[Vec<u32>],
    model: &SiteModel,
    page: u32,
) -> u32 {
    let pages = &by_topic[model.pages[page as usize].topic];
    for _ in 0..4 {
        let p = *pages
            .choose(rng)
            .expect("the page's own topic list holds it");
        if p != page {
            return p;
        }
    }
    page
}
