//! The live engine: the refresh loop over a real crawl ([`HttpFetcher`]) instead of snapshots.
//!
//! [`initial_crawl`] fetches the initial URLs at unit 0 (and, with link discovery, the pages
//! they lead to, up to a page cap); [`CrawlEngine`] then runs [`Refresher::step`] once per
//! unit, each unit ending on its wall-clock deadline with what it fetched. The policy is
//! prepared in online mode: it learns only from what the crawl fetched, exactly as in
//! `simulate --mode online`, which is what makes the simulator's figures the engine's.
//!
//! Judging is optional: [`CrawlEngine::judge`] evaluates the exact metrics against a corpus's
//! truth (a crawl of `web-replay` serving that corpus), when the crawl's page ids are the
//! corpus's (the same URLs in the same order).

pub mod spread;

use std::sync::Arc;
use std::time::Instant;

use crate::corpus::{Corpus, LiveWeb, PageId, PageVersion, Unit};
use crate::crawl::CrawlState;
use crate::fetch::http::{FetchCounts, FetchMonitor, HttpFetcher, SignalCounts};
use crate::fetch::{FetchRequest, FetchResult, Fetcher};
use crate::index::{IndexError, PageUpdate, Repository};
use crate::judge::exact::{evaluate, UnitMetrics};
use crate::policy::{FitMode, RefreshPolicy};
use crate::quality::viewing::view_weights_of;
use crate::querylog::term_workload::TermWorkload;
use crate::refresh::{Refresher, RunPlan, StartingPoint, StepReport};
use crate::sim::environment::measurement;
use crate::sim::{Environment, EnvironmentConfig};

/// Why a unit of a [`CrawlEngine`] failed, or could not be judged.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// The repository could not take the unit's copies.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// A resumed crawl asked for other pages than its journal recorded.
    #[error("resuming from the journal: {why}")]
    Diverged { why: String },
    /// The unit could not be committed to the journal.
    #[error(transparent)]
    Journal(#[from] std::io::Error),
    /// A held page that the judge's corpus does not have.
    #[error("{url} is held but not in the judge's corpus")]
    NotInCorpus { url: String },
}

/// Fetches `urls` at unit 0, then (when the fetcher discovers by links) the pages they link
/// to, breadth first, until `max_pages` pages are known. Returns the copies fetched.
pub fn initial_crawl(
    fetcher: &mut HttpFetcher,
    urls: &[String],
    max_pages: usize,
) -> Vec<(PageId, Arc<PageVersion>)> {
    let mut pages = fetcher.add_urls(urls.iter().map(String::as_str));
    pages.truncate(max_pages);
    let mut copies = Vec::new();
    let mut fetched = std::collections::HashSet::new();
    loop {
        let batch: Vec<FetchRequest> = pages
            .iter()
            .filter(|p| fetched.insert(**p))
            .map(|&page| FetchRequest {
                page,
                validator: None,
            })
            .collect();
        if batch.is_empty() {
            break;
        }
        for f in fetcher.fetch(0, &batch) {
            if let FetchResult::Copy(v) = f.result {
                copies.push((f.page, v));
            }
        }
        if fetcher.page_count() >= max_pages {
            break;
        }
        let known = |p: PageId| fetched.contains(&p);
        pages = fetcher.discover(0, &known);
        let room = max_pages.saturating_sub(fetched.len());
        pages.truncate(room);
    }
    copies.sort_by_key(|c| c.0);
    copies
}

/// What a crawl engine is run with.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    pub budget: usize,
    pub seed: u64,
    /// Scoring, viewing likelihood, pieces of each score-to-rank function, and the ΔQ method
    /// (estimates only: the exact measurement reads the live Web, which a crawl cannot).
    pub environment: EnvironmentConfig,
    /// The last unit the crawl runs (`None`: open-ended).
    pub last_unit: Option<Unit>,
    /// Units `1..=W` fetch every held page outside the budget (paper 001 §5.2's warm-up, so
    /// that change-history policies start from observations). 0: none.
    pub warmup_units: Unit,
}

/// One unit of a crawl, as reported.
#[derive(Debug, Clone)]
pub struct CrawlUnit {
    pub step: StepReport,
    /// Fetch counts of this unit.
    pub counts: FetchCounts,
    /// Sitemap and feed requests of this unit (outside the budget).
    pub signal_requests: SignalCounts,
    pub seconds: f64,
    /// Replayed from the journal (a resumed crawl's committed unit), not fetched.
    pub replayed: bool,
}

/// The refresh loop over a crawl (see the module docs).
pub struct CrawlEngine {
    refresher: Refresher<'static>,
    monitor: FetchMonitor,
    workload: Arc<TermWorkload>,
    /// What judging against one corpus reuses from unit to unit (built on the first call).
    judge_cache: JudgeCache,
}

/// The judge's corpus-side lookups, computed once per engine: the corpus's page of each
/// (normalised) URL, and the hash of the bytes web-replay serves for each version, rendered
/// once instead of at every freshness test.
#[derive(Default)]
struct JudgeCache {
    by_url: std::sync::OnceLock<std::collections::HashMap<String, PageId>>,
    rendered: std::sync::Mutex<std::collections::HashMap<(PageId, Unit), u64>>,
}

impl EngineConfig {
    /// The refresher's plan: online (a crawl has no history), new pages crawled outside the
    /// budget as they are discovered.
    pub fn plan(&self) -> RunPlan {
        RunPlan {
            budget: self.budget,
            mode: FitMode::Online,
            seed: self.seed,
            new_pages: crate::crawl::NewPages::OutsideBudget,
            last_unit: self.last_unit,
            likelihood: self.environment.likelihood,
            warmup_units: self.warmup_units,
        }
    }
}

impl CrawlEngine {
    /// An engine whose repository holds `initial` (the initial crawl) and whose policy is
    /// prepared online over the workload.
    pub fn new(
        fetcher: HttpFetcher,
        initial: &[(PageId, Arc<PageVersion>)],
        workload: Arc<TermWorkload>,
        policy: Box<dyn RefreshPolicy>,
        config: &EngineConfig,
    ) -> Result<Self, IndexError> {
        let pages = fetcher.page_count();
        let vocabulary = Arc::clone(
            fetcher
                .vocabulary()
                .expect("an HTTP fetcher grows its vocabulary"),
        );
        let mut repo = Repository::forward_only(vocabulary, config.environment.scoring);
        let updates: Vec<PageUpdate> = initial
            .iter()
            .map(|(p, v)| PageUpdate {
                page: *p,
                url: fetcher.url(*p),
                version: Some(&**v),
            })
            .collect();
        repo.apply_unmeasured(0, &updates)?;
        let crawl =
            CrawlState::with_initial_crawl(pages, initial.iter().map(|(p, v)| (*p, Arc::clone(v))));
        let view_weight = view_weights_of(
            repo.forward(),
            repo.scorer(),
            pages,
            &workload.queries,
            &config.environment.likelihood,
        );
        let initial_pages: Vec<PageId> = initial.iter().map(|c| c.0).collect();
        let measure = measurement(&repo, &workload, None, &config.environment, 1);
        let monitor = fetcher.monitor();
        let refresher = Refresher::new(
            repo,
            crawl,
            policy,
            Box::new(fetcher),
            measure,
            config.plan(),
            &StartingPoint {
                initial_pages: &initial_pages,
                view_weight: &view_weight,
                history: None,
            },
        );
        Ok(CrawlEngine {
            refresher,
            monitor,
            workload,
            judge_cache: JudgeCache::default(),
        })
    }

    /// One unit: the policy's refreshes and the unit's new pages, fetched before `deadline`
    /// (or replayed from the journal while committed units remain), then committed to the
    /// journal when it was fetched live. Fails when a replayed unit does not ask for what the
    /// journal recorded.
    pub fn step(&mut self, unit: Unit, deadline: Option<Instant>) -> Result<CrawlUnit, LiveError> {
        let started = Instant::now();
        let before = self.monitor.totals();
        let signals_before = self.monitor.signal_counts();
        let replayed = self.monitor.replaying();
        self.monitor
            .set_deadline(if replayed { None } else { deadline });
        let step = self.refresher.step(unit)?;
        self.monitor.set_deadline(None);
        if let Some(why) = self.monitor.diverged() {
            return Err(LiveError::Diverged { why });
        }
        if !replayed {
            self.monitor.commit(unit)?;
        }
        let after = self.monitor.totals();
        Ok(CrawlUnit {
            step,
            counts: FetchCounts {
                fetches: after.fetches - before.fetches,
                copies: after.copies - before.copies,
                not_modified: after.not_modified - before.not_modified,
                gone: after.gone - before.gone,
                errors: after.errors - before.errors,
                robots_disallowed: after.robots_disallowed - before.robots_disallowed,
                bytes: after.bytes - before.bytes,
                faults: after.faults.since(&before.faults),
            },
            signal_requests: self.monitor.signal_counts().since(signals_before),
            seconds: started.elapsed().as_secs_f64(),
            replayed,
        })
    }

    pub fn refresher(&self) -> &Refresher<'static> {
        &self.refresher
    }

    pub fn monitor(&self) -> &FetchMonitor {
        &self.monitor
    }

    pub fn workload(&self) -> &Arc<TermWorkload> {
        &self.workload
    }

    /// The corpus's page of each normalised URL (the corpus judging this engine; built once).
    fn corpus_pages(&self, corpus: &Corpus) -> &std::collections::HashMap<String, PageId> {
        self.judge_cache.by_url.get_or_init(|| {
            (0..corpus.page_count() as PageId)
                .map(|p| (crate::corpus::html::normalise_url(corpus.url(p)), p))
                .collect()
        })
    }

    /// The page of `corpus` (the one this engine is judged against) that the crawl's `page`
    /// is, by URL.
    pub fn corpus_page(&self, corpus: &Corpus, page: PageId) -> Option<PageId> {
        self.corpus_pages(corpus)
            .get(self.refresher.url(page))
            .copied()
    }

    /// The exact metrics of the repository against `env`'s truth at `unit`. Held copies are
    /// matched to the corpus's versions by their rendered bytes (`web-replay`), pages to the
    /// corpus's pages by URL: when the crawl met pages in another order than the corpus's ids,
    /// the held copies are indexed again under the corpus's ids for judging. `Err` when a held
    /// page is not in the corpus.
    pub fn judge(&self, env: &Environment<'_>, unit: Unit) -> Result<UnitMetrics, LiveError> {
        let corpus = env.corpus;
        let crawl = self.refresher.crawl();
        let pages = self.refresher.page_count();
        let by_url = self.corpus_pages(corpus);
        let identical = (0..pages as PageId).all(|p| by_url.get(self.refresher.url(p)) == Some(&p));
        let rendered = &self.judge_cache.rendered;
        let fresh_of = |held: Option<u64>, corpus_page: PageId| match corpus
            .page_at(corpus_page, unit)
            .present()
        {
            Some(v) => {
                let live = *rendered
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .entry((corpus_page, v.unit))
                    .or_insert_with(|| rendered_hash(corpus, v));
                held == Some(live)
            }
            None => held.is_none(),
        };
        let repo = self.refresher.repository();
        if identical {
            let fresh = |p: PageId| fresh_of(crawl.held(p).map(|h| h.version.content_hash), p);
            return Ok(evaluate(
                repo.forward(),
                repo.scorer(),
                &env.workload.queries,
                &env.truths[unit as usize],
                &env.config.likelihood,
                &fresh,
            ));
        }
        let mut held_by_corpus: Vec<Option<Arc<PageVersion>>> = vec![None; corpus.page_count()];
        for p in 0..pages as PageId {
            if let Some(h) = crawl.held(p) {
                let url = self.refresher.url(p);
                let &c = by_url.get(url).ok_or_else(|| LiveError::NotInCorpus {
                    url: url.to_string(),
                })?;
                held_by_corpus[c as usize] = Some(Arc::clone(&h.version));
            }
        }
        let mut judged = Repository::forward_only(repo.shared_vocabulary(), repo.scoring());
        let updates: Vec<PageUpdate> = held_by_corpus
            .iter()
            .enumerate()
            .filter_map(|(c, v)| {
                v.as_ref().map(|v| PageUpdate {
                    page: c as PageId,
                    url: corpus.url(c as PageId),
                    version: Some(&**v),
                })
            })
            .collect();
        judged.apply_unmeasured(unit, &updates)?;
        let fresh = |c: PageId| {
            fresh_of(
                held_by_corpus[c as usize].as_ref().map(|v| v.content_hash),
                c,
            )
        };
        Ok(evaluate(
            judged.forward(),
            judged.scorer(),
            &env.workload.queries,
            &env.truths[unit as usize],
            &env.config.likelihood,
            &fresh,
        ))
    }
}

/// The xxh3 of the bytes `web-replay` serves for `version` (what a crawl hashes).
pub fn rendered_hash(corpus: &Corpus, version: &PageVersion) -> u64 {
    crate::web_replay::render::entity_hash(
        crate::web_replay::render::render(corpus, version).as_bytes(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fetch::http::{Discovery, HttpOptions};
    use crate::index::testutil::random_corpus;
    use crate::index::ScoringKind;
    use crate::judge::exact::MetricQuery;
    use crate::policy::registry::family;
    use crate::quality::measure::DeltaQMethod;
    use crate::quality::ViewingLikelihood;
    use crate::sim::{run, RunConfig};
    use crate::web_replay::{self, ReplaySite};
    use std::collections::HashMap;
    use std::time::Duration;

    /// A web-replay server of `corpus` on loopback, on its own runtime; the site for its clock.
    fn serve(
        corpus: &Corpus,
    ) -> (
        Arc<ReplaySite>,
        std::net::SocketAddr,
        tokio::runtime::Runtime,
    ) {
        web_replay::manual_on_loopback(Arc::new(corpus.clone())).unwrap()
    }

    /// A crawl's judged unit scores as the simulation's: quality, fresh@10 and MAP@10 within
    /// 1e-9 (`what` names the unit in a failure).
    fn assert_judged_as_simulated(
        judged: &crate::judge::exact::UnitMetrics,
        sim: &crate::sim::UnitRecord,
        what: &str,
    ) {
        for (name, a, b) in [
            ("quality", judged.search.quality, sim.search.quality),
            (
                "fresh@10",
                judged.search.fresh_at_10,
                sim.search.fresh_at_10,
            ),
            ("MAP@10", judged.search.map_at_10, sim.search.map_at_10),
        ] {
            assert!(
                (a - b).abs() < 1e-9,
                "{what} {name}: crawl {a} vs simulation {b}"
            );
        }
    }

    fn workload(corpus: &Corpus) -> TermWorkload {
        let mut w = TermWorkload::default();
        for (i, pair) in [
            ["emac", "lisp"],
            ["buffer", "window"],
            ["lisp", "mode"],
            ["file", "emac"],
        ]
        .iter()
        .enumerate()
        {
            let ids: Vec<_> = pair
                .iter()
                .filter_map(|t| corpus.vocabulary.get(t))
                .collect();
            for &t in &ids {
                *w.term_frequency.entry(t).or_insert(0.0) += 1.0 + i as f64;
            }
            if !ids.is_empty() {
                w.queries.push(MetricQuery {
                    terms: ids.clone(),
                    frequency: 1.0 + i as f64,
                });
            }
            for &t in &ids {
                w.queries.push(MetricQuery {
                    terms: vec![t],
                    frequency: 1.0,
                });
            }
        }
        w
    }

    /// The proof that the simulator measures the engine users run: a crawl of
    /// `web-replay` (manual clock, one unit per step) and `simulate --mode online` choose the
    /// same pages and give the same per-unit quality, fresh@10 and MAP@10. The crawl is given
    /// every URL up front (the simulator knows every page id) and reads the sitemap each unit
    /// for new pages, crawled outside B as the simulator does.
    #[test]
    fn a_crawl_of_web_replay_decides_and_scores_as_the_online_simulation() {
        let corpus = random_corpus(60, 7, 29);
        let env_config = EnvironmentConfig {
            scoring: ScoringKind::Bm25,
            likelihood: ViewingLikelihood::default(),
            pieces: 3,
            delta_q: DeltaQMethod::Estimate,
        };
        let env = Environment::new(&corpus, workload(&corpus), env_config.clone()).unwrap();
        let (site, addr, _server) = serve(&corpus);
        // (policy, B, warm-up units): the crawl warms up as the simulation does (paper 001).
        for (policy, budget, warmup) in [
            ("user-centric", 4, 0),
            ("round-robin", 5, 0),
            ("ebr", 3, 0),
            ("nad", 3, 2),
        ] {
            let mut sim_config = RunConfig::new(budget, FitMode::Online);
            sim_config.seed = 7;
            sim_config.warmup_units = warmup;
            let simulated =
                run(&env, family(policy).unwrap().make([]).unwrap(), &sim_config).unwrap();

            // A fresh site (clock at unit 0) for every policy after the first.
            let (site, addr, _server) = if site.unit() == 0 {
                (Arc::clone(&site), addr, None)
            } else {
                let (s, a, r) = serve(&corpus);
                (s, a, Some(r))
            };
            let options = HttpOptions {
                min_host_delay: Duration::ZERO,
                resolve: HashMap::from([("example.org".to_string(), addr)]),
                discovery: Discovery::Sitemaps(vec!["https://example.org/sitemap.xml".into()]),
                ..HttpOptions::default()
            };
            let mut fetcher =
                HttpFetcher::new(options, Arc::clone(&corpus.vocabulary), None).unwrap();
            let urls: Vec<String> = (0..corpus.page_count() as PageId)
                .map(|p| corpus.url(p).to_string())
                .collect();
            let initial = initial_crawl(&mut fetcher, &urls, usize::MAX);
            let listed: Vec<PageId> = initial.iter().map(|c| c.0).collect();
            fetcher.set_listed(listed);
            let config = EngineConfig {
                budget,
                seed: 7,
                environment: env_config.clone(),
                last_unit: Some(corpus.units() - 1),
                warmup_units: warmup,
            };
            let mut engine = CrawlEngine::new(
                fetcher,
                &initial,
                Arc::clone(&env.workload),
                family(policy).unwrap().make([]).unwrap(),
                &config,
            )
            .unwrap();
            let (mut discovered, mut changed, mut unchanged) = (0, 0, 0);
            for unit in 1..corpus.units() {
                assert_eq!(site.advance(), Some(unit));
                let crawled = engine.step(unit, None).unwrap();
                discovered += crawled
                    .step
                    .outcomes
                    .iter()
                    .filter(|o| o.discovered)
                    .count();
                changed += crawled
                    .step
                    .refresh_outcomes()
                    .iter()
                    .filter(|o| o.changed)
                    .count();
                unchanged += crawled.counts.not_modified;
                assert_eq!(crawled.counts.errors, 0, "{policy} unit {unit}");
                if unit <= warmup {
                    // Every held page, outside the budget; not judged.
                    assert!(
                        crawled.step.refreshed.len() > budget,
                        "{policy} unit {unit}"
                    );
                    continue;
                }
                let judged_index = (unit - warmup) as usize - 1;
                let expected = &simulated.refreshed_pages[judged_index];
                assert_eq!(
                    &crawled.step.refreshed, expected,
                    "{policy} unit {unit}: chosen pages"
                );
                let judged = engine.judge(&env, unit).unwrap();
                let sim = &simulated.per_unit[judged_index];
                assert_judged_as_simulated(&judged, sim, &format!("{policy} unit {unit}"));
            }
            // The comparison covered new pages, changed pages and 304s.
            assert!(
                discovered > 0 && changed > 0 && unchanged > 0,
                "{policy}: {discovered} {changed} {unchanged}"
            );
            let totals = engine.monitor().totals();
            assert_eq!(totals.errors, 0);
            assert!(totals.fetches as usize >= urls.len());
        }
    }

    /// Issue 49: a crawl reading the change signals `web-replay` publishes equals
    /// `simulate --signals` with the same seed, unit by unit: the sitemap's dates and the
    /// feed's items reach the crawl state as the simulation's reading gives them, and the
    /// crawl decides and scores as the simulation. A crawl resumed from its journal replays
    /// the same readings without reading the site again.
    #[test]
    fn a_crawl_reading_signals_decides_and_scores_as_the_simulation_with_signals() {
        use crate::signal::{DateClock, PageSignal, PublishedSignals, SignalSettings};
        let corpus = random_corpus(60, 7, 29);
        let env_config = EnvironmentConfig {
            scoring: ScoringKind::Bm25,
            likelihood: ViewingLikelihood::default(),
            pieces: 3,
            delta_q: DeltaQMethod::Estimate,
        };
        let settings = SignalSettings::parse(&[
            "lastmod:coverage=0.6,recall=0.8,false-positive=0.2",
            "feed:items=5",
        ])
        .unwrap();
        let (seed, budget, policy) = (7, 4, "user-centric");
        let env = Environment::new(&corpus, workload(&corpus), env_config.clone()).unwrap();
        let mut sim_config = RunConfig::new(budget, FitMode::Online);
        sim_config.seed = seed;
        sim_config.signals = settings.clone();
        let simulated = run(&env, family(policy).unwrap().make([]).unwrap(), &sim_config).unwrap();

        let site = ReplaySite::new(
            Arc::new(corpus.clone()),
            web_replay::ReplayOptions {
                signals: settings.clone(),
                signal_seed: seed,
                ..web_replay::ReplayOptions::manual()
            },
        );
        let (site, addr, _server) = web_replay::serve_on_loopback(site).unwrap();
        let options = HttpOptions {
            min_host_delay: Duration::ZERO,
            resolve: HashMap::from([("example.org".to_string(), addr)]),
            discovery: Discovery::Sitemaps(vec!["https://example.org/sitemap.xml".into()]),
            read_signals: true,
            date_clock: DateClock::of(&corpus.clock),
            ..HttpOptions::default()
        };
        let journal = tempfile::tempdir().unwrap();
        let urls: Vec<String> = (0..corpus.page_count() as PageId)
            .map(|p| corpus.url(p).to_string())
            .collect();
        let config = EngineConfig {
            budget,
            seed,
            environment: env_config.clone(),
            last_unit: Some(corpus.units() - 1),
            warmup_units: 0,
        };
        let start = |replay_through: Option<Unit>| {
            let mut fetcher =
                HttpFetcher::new(options.clone(), Arc::clone(&corpus.vocabulary), None).unwrap();
            fetcher.set_journal(journal.path(), replay_through).unwrap();
            let initial = initial_crawl(&mut fetcher, &urls, usize::MAX);
            fetcher.set_listed(initial.iter().map(|c| c.0).collect::<Vec<_>>());
            if replay_through.is_none() {
                fetcher.monitor().commit(0).unwrap();
            }
            CrawlEngine::new(
                fetcher,
                &initial,
                Arc::clone(&env.workload),
                family(policy).unwrap().make([]).unwrap(),
                &config,
            )
            .unwrap()
        };
        let mut engine = start(None);
        let model = PublishedSignals::of_corpus(&corpus, &settings, seed);
        let mut expected = vec![PageSignal::default(); corpus.page_count()];
        let signals_of = |engine: &CrawlEngine| -> Vec<(Option<Unit>, Option<Unit>)> {
            (0..corpus.page_count() as PageId)
                .map(|p| {
                    let s = engine.refresher().crawl().signal(p).expect("signals read");
                    assert!(s.feed_channel, "page {p}: the feed was read");
                    (s.lastmod, s.feed)
                })
                .collect()
        };
        let mut chosen = Vec::new();
        let (mut dated, mut fed) = (0, 0);
        for unit in 1..corpus.units() {
            assert_eq!(site.advance(), Some(unit));
            let crawled = engine.step(unit, None).unwrap();
            assert_eq!(crawled.counts.errors, 0, "unit {unit}");
            assert!(
                crawled.signal_requests.sitemap_requests >= 1
                    && crawled.signal_requests.feed_requests >= 1
                    && crawled.signal_requests.errors == 0,
                "unit {unit}: {:?}",
                crawled.signal_requests
            );
            for e in model.reading_at(unit) {
                expected[e.page as usize].note(e.kind);
            }
            let read = signals_of(&engine);
            let wanted: Vec<(Option<Unit>, Option<Unit>)> =
                expected.iter().map(|s| (s.lastmod, s.feed)).collect();
            assert_eq!(read, wanted, "unit {unit}: the signals read");
            dated = read.iter().filter(|s| s.0 == Some(unit)).count().max(dated);
            fed += read.iter().filter(|s| s.1 == Some(unit)).count();
            let index = unit as usize - 1;
            assert_eq!(
                crawled.step.refreshed, simulated.refreshed_pages[index],
                "unit {unit}: chosen pages"
            );
            chosen.push(crawled.step.refreshed.clone());
            let judged = engine.judge(&env, unit).unwrap();
            let sim = &simulated.per_unit[index];
            assert_judged_as_simulated(&judged, sim, &format!("unit {unit}"));
        }
        // The model's coverage left entries undated, its dates moved, its feed spoke.
        assert!(expected.iter().any(|s| s.lastmod.is_none()));
        assert!(dated > 0 && fed > 0, "{dated} {fed}");
        let counts = engine.monitor().signal_counts();
        let read = signals_of(&engine);

        // Resumed from the journal (the site stays at its last unit): the same readings, the
        // same choices, the same requests counted.
        let last = corpus.units() - 1;
        let mut resumed = start(Some(last));
        for (unit, was) in (1..=last).zip(&chosen) {
            let replayed = resumed.step(unit, None).unwrap();
            assert!(replayed.replayed, "unit {unit}");
            assert_eq!(&replayed.step.refreshed, was, "unit {unit} replayed");
        }
        assert_eq!(signals_of(&resumed), read);
        assert_eq!(resumed.monitor().signal_counts(), counts);
    }
}
