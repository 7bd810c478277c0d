//! The refresh loop: one [`Refresher`] per repository, the same in every mode — a simulation
//! run, a server run, the estimate check and (next) the live engine.
//!
//! A [`Refresher`] owns the repository, the refresh policy, the fetcher, the ΔQ measurement and
//! the crawl state. [`Refresher::step`] is one time unit of refreshing:
//!
//! 1. refit the score-to-rank functions when due ([`MeasureDeltaQ::before_unit`]); read what
//!    the site's change signals say now into the crawl state ([`Fetcher::signals`]);
//! 2. the policy chooses at most `B` distinct pages ([`RefreshPolicy::choose`]; in frontier
//!    mode [`RefreshPolicy::choose_with_frontier`], among refreshes and frontier pages, and
//!    ids the crawler does not know are dropped);
//! 3. the fetcher fetches them, conditionally on the held copies ([`Fetcher::fetch`]), and,
//!    when new pages are crawled outside the budget, the pages it discovered;
//!
//!    a policy that plays in rounds (its [`RefreshPolicy::rounds`] offers a
//!    [`RoundPolicy`](crate::policy::RoundPolicy)) does 2–3 several times instead: it chooses
//!    a round (`choose_round`), the fetcher fetches it, the policy sees what each fetch
//!    revealed (`observe_round` with a [`ProbeOutcome`] per page: changed, shingle change, gone, the copy), and so on until it
//!    chooses nothing or the budget is spent. Nothing is applied between rounds: the crawl
//!    state and the index stay as of the start of the unit, and the pages of all rounds, in
//!    fetch order, are the unit's refresh batch for steps 4–7 (see [`crate::policy`],
//!    rounds);
//! 4. the batch goes through the repository's one update path; the hook pushes its score
//!    shifts into the measurement, which turns them into ΔQ_A per page (or, with the exact
//!    measurement, the measurement re-ranks the affected queries just before);
//! 5. one [`RefreshOutcome`] per refreshed page (then per discovered page) updates the crawl
//!    state and is observed by the policy;
//! 6. the policy gets the repository's view weights when it asked for them;
//! 7. in frontier mode, the links of the copies fetched join the frontier (offered from the
//!    next unit on; at unit 0, [`Refresher::new`] seeds it from the initial crawl).
//!
//! Judging is not the refresher's job: the simulator (`refresher::sim`) wraps it with the exact
//! metrics, which read the live Web the refresher never sees.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::corpus::{PageId, Unit};
use crate::crawl::{CrawlState, HeldCopy, NewPages};
use crate::fetch::{FetchRequest, FetchResult, Fetched, Fetcher};
use crate::index::{ApplyReport, IndexError, PageUpdate, Repository};
use crate::policy::{ProbeOutcome, RefreshOutcome, RefreshPolicy};
use crate::quality::measure::MeasureDeltaQ;
use crate::quality::ranking::RankMemory;
use crate::quality::viewing::{view_weights_with, RepositoryViews};
use crate::querylog::term_workload::TermWorkload;

mod frontier;
pub mod plan;

pub use plan::{RunPlan, StartingPoint};

/// What one [`Refresher::step`] did.
#[derive(Debug, Clone)]
pub struct StepReport {
    pub unit: Unit,
    /// The refreshed pages, in the policy's priority order.
    pub refreshed: Vec<PageId>,
    /// One outcome per refreshed page (same order), then one per discovered page.
    pub outcomes: Vec<RefreshOutcome>,
    /// What the repository's update path did.
    pub apply: ApplyReport,
    /// Where the step's wall time went.
    pub timings: StepTimings,
}

/// Wall time of the parts of one [`Refresher::step`], in seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StepTimings {
    /// The policy's `choose`, `observe` and `observe_views` (with the view weights).
    pub policy: f64,
    /// The fetcher: refreshes and discoveries.
    pub fetch: f64,
    /// The repository's update path with the hook, and the ΔQ measurement.
    pub index: f64,
}

impl StepReport {
    /// The outcomes of the refreshes (not of discoveries).
    pub fn refresh_outcomes(&self) -> &[RefreshOutcome] {
        &self.outcomes[..self.refreshed.len()]
    }
}

/// The refresh loop (see the module docs).
pub struct Refresher<'f> {
    repo: Repository,
    policy: Box<dyn RefreshPolicy>,
    fetcher: Box<dyn Fetcher + 'f>,
    measure: Box<dyn MeasureDeltaQ>,
    crawl: CrawlState,
    workload: Arc<TermWorkload>,
    config: RunPlan,
    /// The repository's lists as ranked for the last view weights the policy asked for:
    /// each re-read re-ranks from them.
    view_memory: RankMemory,
}

impl<'f> Refresher<'f> {
    /// A refresher over `repo` (holding the copies of `crawl`, the initial crawl), with the
    /// hook turned on for `measure`'s terms. Prepares `policy` with `context`.
    pub fn new(
        mut repo: Repository,
        crawl: CrawlState,
        mut policy: Box<dyn RefreshPolicy>,
        fetcher: Box<dyn Fetcher + 'f>,
        measure: Box<dyn MeasureDeltaQ>,
        config: RunPlan,
        start: &StartingPoint<'_>,
    ) -> Self {
        repo.set_hook(measure.watched_terms());
        let workload = Arc::clone(measure.workload());
        let mut crawl = crawl;
        crawl.learn_urls(fetcher.page_count(), |p| fetcher.url(p));
        if config.new_pages == NewPages::Frontier {
            frontier::seed(&mut crawl, &*fetcher, repo.vocabulary(), &workload);
        }
        policy.prepare(&config.policy_context(
            fetcher.page_count(),
            start,
            Some(&crawl),
            crawl.cache().cloned(),
        ));
        Refresher {
            repo,
            policy,
            fetcher,
            measure,
            crawl,
            workload,
            config,
            view_memory: RankMemory::default(),
        }
    }

    pub fn repository(&self) -> &Repository {
        &self.repo
    }

    /// Whether the ΔQ measurement will refit from the workload queries' lists before `unit`,
    /// and with how many pieces ([`MeasureDeltaQ::refits_from_query_lists`]).
    pub fn measure_refits_from_query_lists(&self, unit: Unit) -> Option<usize> {
        self.measure.refits_from_query_lists(unit)
    }

    /// Hands the ΔQ measurement the queries' scores at ranks that an evaluation computed on
    /// the repository at `revision` ([`MeasureDeltaQ::offer_scores_at_ranks`]).
    pub fn offer_scores_at_ranks(
        &mut self,
        revision: u64,
        lists: Arc<crate::quality::ranking::ScoresAtRanks>,
    ) {
        self.measure.offer_scores_at_ranks(revision, lists);
    }

    pub fn crawl(&self) -> &CrawlState {
        &self.crawl
    }

    pub fn policy(&self) -> &dyn RefreshPolicy {
        self.policy.as_ref()
    }

    pub fn config(&self) -> &RunPlan {
        &self.config
    }

    /// Steers the following units by `workload`, measured by `measure` (built over this
    /// refresher's repository): a live engine's workload grows with the queries it serves.
    /// The hook follows the measure's terms.
    pub fn set_workload(&mut self, measure: Box<dyn MeasureDeltaQ>) {
        let forward = self.repo.forward();
        if let Some(t) = measure
            .workload()
            .all_term_ids()
            .into_iter()
            .find(|&t| !forward.keeps_postings_of(t))
        {
            panic!(
                "set_workload: the repository does not keep the postings of term {t} of the \
                 new workload (start such a refresher from the full index)"
            );
        }
        self.repo.set_hook(measure.watched_terms());
        self.workload = Arc::clone(measure.workload());
        self.measure = measure;
        // Weights shared under the old workload are not this workload's.
    }

    /// Pages the fetcher has allocated ids for.
    pub fn page_count(&self) -> usize {
        self.fetcher.page_count()
    }

    /// The URL of an allocated page id.
    pub fn url(&self, page: PageId) -> &str {
        self.fetcher.url(page)
    }

    /// Fetches `pages` at `unit`, each conditionally on its held copy.
    fn fetch_batch(&mut self, unit: Unit, pages: &[PageId]) -> Vec<Fetched> {
        let requests: Vec<FetchRequest> = pages
            .iter()
            .map(|&p| FetchRequest {
                page: p,
                validator: self.crawl.held(p).map(HeldCopy::validator),
            })
            .collect();
        self.fetcher.fetch(unit, &requests)
    }

    /// Steps 2–3 for a policy that plays in rounds (see the module docs): returns the pages of
    /// all rounds and their fetches, in fetch order, and the new copies the probes compared.
    /// The crawl state is not touched.
    fn fetch_in_rounds(
        &mut self,
        unit: Unit,
        budget: usize,
        seen: &mut HashSet<PageId>,
        timings: &mut StepTimings,
    ) -> (Vec<PageId>, Vec<Fetched>, HashMap<PageId, HeldCopy>) {
        let pages = self.fetcher.page_count();
        let mut chosen = Vec::new();
        let mut fetched = Vec::new();
        let mut copies = HashMap::new();
        let mut round = 0u32;
        while chosen.len() < budget {
            let remaining = budget - chosen.len();
            let clock = std::time::Instant::now();
            let Some(rounds) = self.policy.rounds() else {
                break;
            };
            let asked = rounds.choose_round(unit, round, remaining, &self.crawl);
            timings.policy += clock.elapsed().as_secs_f64();
            let crawl = &self.crawl;
            let mut list = Vec::with_capacity(asked.len().min(remaining));
            for p in asked {
                if list.len() == remaining {
                    break;
                }
                if (p as usize) < pages && crawl.is_known(p) && seen.insert(p) {
                    list.push(p);
                }
            }
            if list.is_empty() {
                break;
            }
            let clock = std::time::Instant::now();
            let got = self.fetch_batch(unit, &list);
            timings.fetch += clock.elapsed().as_secs_f64();
            let clock = std::time::Instant::now();
            let probes: Vec<ProbeOutcome> = got
                .iter()
                .map(|f| {
                    let (probe, copy) = self.probe(f, round);
                    copies.extend(copy.map(|c| (f.page, c)));
                    probe
                })
                .collect();
            if let Some(rounds) = self.policy.rounds() {
                rounds.observe_round(&probes);
            }
            timings.policy += clock.elapsed().as_secs_f64();
            chosen.extend(list);
            fetched.extend(got);
            round += 1;
        }
        (chosen, fetched, copies)
    }

    /// What a fetch of a round revealed, compared with the held copy (which it does not
    /// replace: the batch is applied at the end of the unit). `changed` and `shingle_change`
    /// are computed as the unit's [`RefreshOutcome`] will compute them. Also returns the new
    /// copy (`None` when the fetch brought none).
    fn probe(&self, f: &Fetched, round: u32) -> (ProbeOutcome, Option<HeldCopy>) {
        let p = f.page;
        let held = self.crawl.held(p);
        let first_crawl = self.crawl.in_frontier(p);
        let (copy, changed, new) = match &f.result {
            FetchResult::NotModified | FetchResult::Failed(_) => (held.cloned(), false, false),
            FetchResult::Copy(v) => {
                let changed = !first_crawl && held.map(|h| h.version.unit) != Some(v.unit);
                (Some(HeldCopy::new(Arc::clone(v))), changed, true)
            }
            FetchResult::Gone => (None, !first_crawl && held.is_some(), false),
        };
        let shingle_change = self.crawl.shingle_change(p, copy.as_ref(), changed);
        let probe = ProbeOutcome {
            page: p,
            round,
            changed,
            shingle_change,
            gone: copy.is_none(),
            first_crawl,
            copy: copy.as_ref().map(|c| Arc::clone(&c.version)),
        };
        (probe, copy.filter(|_| new))
    }

    /// One unit of refreshing (see the module docs). Units must increase from call to call.
    pub fn step(&mut self, unit: Unit) -> Result<StepReport, IndexError> {
        self.measure.before_unit(&self.repo, unit);
        let pages = self.fetcher.page_count();
        {
            let fetcher = &self.fetcher;
            self.crawl.learn_urls(pages, |p| fetcher.url(p));
        }
        if let Some(reading) = self.fetcher.signals(unit) {
            self.crawl.note_signals(&reading);
        }

        let mut timings = StepTimings::default();
        let frontier_mode = self.config.new_pages == NewPages::Frontier;
        let Chosen {
            pages: chosen,
            seen,
            round_fetches,
            probed_copies,
        } = self.choose_batch(unit, pages, &mut timings);
        // First crawls of frontier pages (frontier mode).
        let first_crawls: HashSet<PageId> = chosen
            .iter()
            .copied()
            .filter(|&p| self.crawl.in_frontier(p))
            .collect();

        let clock = std::time::Instant::now();
        let fetched = match round_fetches {
            Some(fetched) => fetched,
            None => self.fetch_batch(unit, &chosen),
        };
        let discovered: Vec<Fetched> = if !frontier_mode {
            self.discover_new(unit, &seen)
        } else {
            Vec::new()
        };

        timings.fetch += clock.elapsed().as_secs_f64();
        let clock = std::time::Instant::now();
        let (apply, deltas) = self.apply_batch(unit, &fetched, &discovered)?;
        timings.index += clock.elapsed().as_secs_f64();

        let new_copies: Vec<(PageId, Arc<crate::corpus::PageVersion>)> = if frontier_mode {
            fetched
                .iter()
                .filter_map(|f| match &f.result {
                    FetchResult::Copy(v) => Some((f.page, Arc::clone(v))),
                    _ => None,
                })
                .collect()
        } else {
            Vec::new()
        };
        let outcomes = self.record_outcomes(
            unit,
            fetched,
            discovered,
            &first_crawls,
            probed_copies,
            &deltas,
        );
        if frontier_mode {
            self.note_frontier_links(unit, &new_copies);
        }
        let clock = std::time::Instant::now();
        self.observe_unit(unit, &outcomes);
        timings.policy += clock.elapsed().as_secs_f64();
        Ok(StepReport {
            unit,
            refreshed: chosen,
            outcomes,
            apply,
            timings,
        })
    }

    /// Step 2 (steps 2–3 for a policy that plays in rounds): the unit's refresh batch among
    /// the `pages` allocated — every held page in a warm-up unit, else at most the budget of
    /// distinct known pages the policy chose.
    fn choose_batch(&mut self, unit: Unit, pages: usize, timings: &mut StepTimings) -> Chosen {
        let budget = self.config.budget;
        let frontier_mode = self.config.new_pages == NewPages::Frontier;
        let mut seen = HashSet::new();
        let mut round_fetches = None;
        // The new copies the rounds compared (their shingle sketches are computed already).
        let mut probed_copies: HashMap<PageId, HeldCopy> = HashMap::new();
        let chosen = if unit <= self.config.warmup_units {
            // Warm-up (paper 001's protocol): every held page, outside the budget.
            let crawl = &self.crawl;
            let held: Vec<PageId> = (0..pages as PageId)
                .filter(|&p| crawl.held(p).is_some())
                .collect();
            seen.extend(held.iter().copied());
            held
        } else if self.policy.rounds().is_some() {
            let (chosen, fetched, copies) = self.fetch_in_rounds(unit, budget, &mut seen, timings);
            round_fetches = Some(fetched);
            probed_copies = copies;
            chosen
        } else {
            let clock = std::time::Instant::now();
            let mut chosen = if frontier_mode {
                self.policy.choose_with_frontier(unit, budget, &self.crawl)
            } else {
                self.policy.choose(unit, budget, &self.crawl)
            };
            timings.policy += clock.elapsed().as_secs_f64();
            let crawl = &self.crawl;
            chosen.retain(|&p| (p as usize) < pages && crawl.is_known(p) && seen.insert(p));
            chosen.truncate(budget);
            chosen
        };
        Chosen {
            pages: chosen,
            seen,
            round_fetches,
            probed_copies,
        }
    }

    /// Step 3's discoveries, outside the budget: the pages the fetcher found that are
    /// neither held nor in the batch (`seen`), fetched without a held copy.
    fn discover_new(&mut self, unit: Unit, seen: &HashSet<PageId>) -> Vec<Fetched> {
        let crawl = &self.crawl;
        let known = |p: PageId| crawl.held(p).is_some() || seen.contains(&p);
        let found = self.fetcher.discover(unit, &known);
        let first: Vec<FetchRequest> = found
            .iter()
            .map(|&page| FetchRequest {
                page,
                validator: None,
            })
            .collect();
        self.fetcher.fetch(unit, &first)
    }

    /// Step 4: the fetches (refreshes, then discoveries) through the repository's one update
    /// path with the hook on; returns what the update did and the measured ΔQ_A per page.
    fn apply_batch(
        &mut self,
        unit: Unit,
        fetched: &[Fetched],
        discovered: &[Fetched],
    ) -> Result<(ApplyReport, HashMap<PageId, f64>), IndexError> {
        if let Some(vocabulary) = self.fetcher.vocabulary() {
            self.repo.set_vocabulary(Arc::clone(vocabulary));
        }
        let apply = {
            let fetcher = &self.fetcher;
            let crawl = &self.crawl;
            let batch: Vec<PageUpdate> = fetched
                .iter()
                .chain(discovered)
                .map(|f| PageUpdate {
                    page: f.page,
                    url: fetcher.url(f.page),
                    version: match &f.result {
                        FetchResult::Copy(v) => Some(&**v),
                        // The held copy again: the update path skips it (same content hash).
                        FetchResult::NotModified | FetchResult::Failed(_) => {
                            crawl.held(f.page).map(|h| &*h.version)
                        }
                        FetchResult::Gone => None,
                    },
                })
                .collect();
            self.measure.before_apply(&self.repo, unit, &batch);
            self.repo.apply(unit, &batch, &mut *self.measure)?
        };
        let deltas: HashMap<PageId, f64> = self.measure.delta_q_by_page().into_iter().collect();
        Ok((apply, deltas))
    }

    /// Step 5: the crawl state records each fetch — the refreshes in batch order (a frontier
    /// page's first crawl among them), then the discoveries — with one outcome per page.
    fn record_outcomes(
        &mut self,
        unit: Unit,
        fetched: Vec<Fetched>,
        discovered: Vec<Fetched>,
        first_crawls: &HashSet<PageId>,
        mut probed_copies: HashMap<PageId, HeldCopy>,
        deltas: &HashMap<PageId, f64>,
    ) -> Vec<RefreshOutcome> {
        let delta_of = |p: PageId| deltas.get(&p).copied().unwrap_or(0.0);
        let mut outcomes = Vec::with_capacity(fetched.len() + discovered.len());
        for f in fetched {
            let p = f.page;
            if first_crawls.contains(&p) {
                // A frontier page's first copy, inside the budget: nothing to compare with.
                let copy = match f.result {
                    FetchResult::Copy(v) => Some(HeldCopy::new(v)),
                    _ => None,
                };
                let gone = copy.is_none();
                self.crawl.record_refresh(p, unit, copy, false);
                self.crawl.leave_frontier(p);
                outcomes.push(RefreshOutcome {
                    page: p,
                    unit,
                    last_refresh: unit,
                    changed: false,
                    shingle_change: 0.0,
                    delta_q: delta_of(p),
                    gone,
                    discovered: true,
                });
                continue;
            }
            let before = self.crawl.page(p);
            let last_refresh = before.last_refresh;
            let held_unit = before.held.as_ref().map(|h| h.version.unit);
            let (now, changed) = match f.result {
                FetchResult::NotModified | FetchResult::Failed(_) => (before.held.clone(), false),
                FetchResult::Copy(v) => {
                    let changed = held_unit != Some(v.unit);
                    let copy = probed_copies.remove(&p).unwrap_or_else(|| HeldCopy::new(v));
                    (Some(copy), changed)
                }
                FetchResult::Gone => (None, held_unit.is_some()),
            };
            let gone = now.is_none();
            let shingle_change = self.crawl.record_refresh(p, unit, now, changed);
            outcomes.push(RefreshOutcome {
                page: p,
                unit,
                last_refresh,
                changed,
                shingle_change,
                delta_q: delta_of(p),
                gone,
                discovered: false,
            });
        }
        for f in discovered {
            if let FetchResult::Copy(v) = f.result {
                self.crawl.record_discovery(f.page, unit, HeldCopy::new(v));
                outcomes.push(RefreshOutcome {
                    page: f.page,
                    unit,
                    last_refresh: unit,
                    changed: false,
                    shingle_change: 0.0,
                    delta_q: 0.0,
                    gone: false,
                    discovered: true,
                });
            }
        }
        outcomes
    }

    /// Step 7 (frontier mode): the links of the copies fetched this unit join the frontier.
    fn note_frontier_links(
        &mut self,
        unit: Unit,
        new_copies: &[(PageId, Arc<crate::corpus::PageVersion>)],
    ) {
        self.crawl.frontier_reach(unit);
        let vocabulary = Arc::clone(&self.repo.shared_vocabulary());
        for (p, copy) in new_copies {
            frontier::note_links_of(
                &mut self.crawl,
                &*self.fetcher,
                &vocabulary,
                &self.workload,
                *p,
                unit,
                copy,
            );
        }
    }

    /// Steps 5–6 on the policy's side: it observes the outcomes, then gets the repository's
    /// view weights when it asks for them before a unit the loop will run.
    fn observe_unit(&mut self, unit: Unit, outcomes: &[RefreshOutcome]) {
        self.policy.observe(outcomes);
        let next_is_run = self.config.last_unit.is_none_or(|last| unit < last);
        if next_is_run && self.policy.wants_views(unit + 1) {
            let pages = self.fetcher.page_count();
            let mut compute = || {
                view_weights_with(
                    &mut self.view_memory,
                    self.repo.forward(),
                    self.repo.scorer(),
                    pages,
                    &self.workload.queries,
                    &self.config.likelihood,
                )
            };
            match self.crawl.cache() {
                Some(cache) => {
                    // The repository holds the crawl state's copies.
                    let inputs = RepositoryViews {
                        pages,
                        held: self.crawl.held_units(pages),
                        queries: &self.workload.queries,
                        likelihood: &self.config.likelihood,
                        scoring: self.repo.scorer().kind(),
                    };
                    let (weights, _) = cache.get_or_compute(&inputs, compute);
                    self.policy.observe_views(&weights);
                }
                None => self.policy.observe_views(&compute()),
            }
        }
    }
}

/// The batch [`Refresher::choose_batch`] chose.
struct Chosen {
    /// The refresh batch, in the policy's priority order (fetch order for rounds).
    pages: Vec<PageId>,
    /// Every page of the batch: discoveries skip them.
    seen: HashSet<PageId>,
    /// What the rounds fetched already (`None`: the batch is fetched next).
    round_fetches: Option<Vec<Fetched>>,
    /// The new copies the rounds compared (their shingle sketches are computed already).
    probed_copies: HashMap<PageId, HeldCopy>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::Cache;
    use crate::corpus::{Corpus, LiveWeb};
    use crate::fetch::SnapshotFetcher;
    use crate::index::testutil::random_corpus;
    use crate::index::ScoringKind;
    use crate::policy::registry::family;
    use crate::policy::FitMode;
    use crate::policy::PolicyContext;
    use crate::quality::measure::DeltaQMeasure;
    use crate::quality::ranking::MetricQuery;
    use crate::quality::ViewingLikelihood;

    /// A live Web whose URLs the crawler learns as it goes: page ids `known..` exist only from
    /// unit `reveal` on, when discovery reports them (as a crawler meeting new links would).
    struct Growing<'c> {
        inner: SnapshotFetcher<'c>,
        known: usize,
        reveal: Unit,
    }

    impl Fetcher for Growing<'_> {
        fn page_count(&self) -> usize {
            self.known
        }
        fn url(&self, page: PageId) -> &str {
            self.inner.url(page)
        }
        fn fetch(&mut self, unit: Unit, requests: &[FetchRequest]) -> Vec<Fetched> {
            self.inner.fetch(unit, requests)
        }
        fn discover(&mut self, unit: Unit, known: &dyn Fn(PageId) -> bool) -> Vec<PageId> {
            if unit < self.reveal {
                return Vec::new();
            }
            let before = self.known;
            self.known = self.inner.corpus().page_count();
            (before as PageId..self.known as PageId)
                .filter(|&p| !known(p) && self.inner.corpus().page_at(p, unit).present().is_some())
                .collect()
        }
    }

    fn refresher<'c>(corpus: &'c Corpus, policy: &str, budget: usize) -> Refresher<'c> {
        refresher_with(corpus, family(policy).unwrap().make([]).unwrap(), budget)
    }

    fn refresher_with<'c>(
        corpus: &'c Corpus,
        policy: Box<dyn RefreshPolicy>,
        budget: usize,
    ) -> Refresher<'c> {
        refresher_sharing(corpus, policy, budget, None)
    }

    /// [`refresher_with`], its crawl state keeping what it computes in `cache` if given.
    fn refresher_sharing<'c>(
        corpus: &'c Corpus,
        policy: Box<dyn RefreshPolicy>,
        budget: usize,
        cache: Option<Arc<Cache>>,
    ) -> Refresher<'c> {
        let known = corpus.page_count() / 2;
        let mut workload = TermWorkload::default();
        for t in ["emac", "lisp", "buffer", "window"] {
            if let Some(id) = corpus.vocabulary.get(t) {
                workload.term_frequency.insert(id, 2.0);
                workload.queries.push(MetricQuery {
                    terms: vec![id],
                    frequency: 2.0,
                });
            }
        }
        let fetcher = SnapshotFetcher::new(corpus);
        let initial: Vec<PageUpdate> = fetcher
            .crawl_at(0)
            .into_iter()
            .filter(|u| (u.page as usize) < known)
            .collect();
        let mut repo = Repository::forward_only(Arc::clone(&corpus.vocabulary), ScoringKind::Bm25);
        repo.apply_unmeasured(0, &initial).unwrap();
        let mut crawl = CrawlState::with_initial_crawl(
            known,
            initial.iter().filter_map(|u| {
                corpus
                    .timeline(u.page)
                    .shared_at(0)
                    .map(|v| (u.page, Arc::clone(v)))
            }),
        );
        if let Some(cache) = cache {
            crawl.use_cache(cache);
        }
        let pages: Vec<PageId> = initial.iter().map(|u| u.page).collect();
        let views = vec![1.0; known];
        let measure = DeltaQMeasure::new(
            &repo,
            Arc::new(workload),
            ViewingLikelihood::default(),
            3,
            1,
        );
        Refresher::new(
            repo,
            crawl,
            policy,
            Box::new(Growing {
                inner: fetcher,
                known,
                reveal: 2,
            }),
            Box::new(measure),
            RunPlan {
                budget,
                mode: FitMode::Online,
                seed: 3,
                new_pages: NewPages::OutsideBudget,
                last_unit: None,
                likelihood: ViewingLikelihood::default(),
                warmup_units: 0,
            },
            &StartingPoint {
                initial_pages: &pages,
                view_weight: &views,
                history: None,
            },
        )
    }

    #[test]
    fn pages_met_after_prepare_are_crawled_observed_and_refreshed_later() {
        let corpus = random_corpus(40, 10, 17);
        let known = corpus.page_count() / 2;
        for policy in [
            "user-centric",
            "sbr",
            "ebr",
            "lambdacrawl",
            "round-robin",
            "random",
            "age",
        ] {
            let mut r = refresher(&corpus, policy, 6);
            let mut discovered = Vec::new();
            let mut refreshed_new = false;
            for unit in 1..corpus.units() {
                let step = r.step(unit).unwrap();
                assert!(step.refreshed.len() <= 6);
                discovered.extend(
                    step.outcomes
                        .iter()
                        .filter(|o| o.discovered)
                        .map(|o| o.page),
                );
                refreshed_new |= step.refreshed.iter().any(|&p| p as usize >= known);
                for o in step.refresh_outcomes() {
                    assert_eq!(r.crawl().page(o.page).last_refresh, unit);
                }
            }
            assert!(
                discovered.iter().all(|&p| p as usize >= known) && !discovered.is_empty(),
                "{policy}: {discovered:?}"
            );
            for &p in &discovered {
                assert!(r.repository().forward().doc(p).is_some() || r.crawl().page(p).gone);
            }
            assert!(
                refreshed_new,
                "{policy} never refreshed a page met after prepare"
            );
        }
    }

    /// Refreshes the `budget` pages after the last one it refreshed (in page order) and keeps
    /// the view weights it is sent, every unit.
    struct WatchingViews {
        next: usize,
        seen: Arc<std::sync::Mutex<Vec<Vec<f64>>>>,
    }

    impl RefreshPolicy for WatchingViews {
        fn name(&self) -> String {
            "watching-views".into()
        }
        fn prepare(&mut self, _context: &PolicyContext<'_>) {}
        fn choose(&mut self, _unit: Unit, budget: usize, crawl: &CrawlState) -> Vec<PageId> {
            let pages = crawl.len();
            let chosen = (0..budget.min(pages))
                .map(|i| ((self.next + i) % pages) as PageId)
                .collect();
            self.next = (self.next + budget) % pages.max(1);
            chosen
        }
        fn observe(&mut self, _outcomes: &[RefreshOutcome]) {}
        fn wants_views(&self, _unit: Unit) -> bool {
            true
        }
        fn observe_views(&mut self, view_weight: &[f64]) {
            self.seen.lock().unwrap().push(view_weight.to_vec());
        }
    }

    #[test]
    fn refreshers_sharing_view_weights_are_sent_what_each_ranks_alone() {
        let corpus = random_corpus(40, 10, 23);
        let shared = Arc::new(Cache::new());
        let kept_views = || shared.stats().get("view weights").map_or(0, |s| s.kept);
        let watch = |share: bool| {
            let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
            let policy = WatchingViews {
                next: 0,
                seen: Arc::clone(&seen),
            };
            let cache = share.then(|| Arc::clone(&shared));
            let mut r = refresher_sharing(&corpus, Box::new(policy), 5, cache);
            for unit in 1..corpus.units() {
                r.step(unit).unwrap();
            }
            let seen = seen.lock().unwrap().clone();
            seen
        };
        let alone = watch(false);
        assert_eq!(kept_views(), 0);
        let first = watch(true);
        let kept = kept_views();
        assert!(kept > 0);
        // The second refresher meets the first one's states: it reads, computes nothing new.
        let second = watch(true);
        assert_eq!(kept_views(), kept);
        assert_eq!(alone.len(), corpus.units() as usize - 1);
        let bits = |runs: &[Vec<f64>]| -> Vec<Vec<u64>> {
            runs.iter()
                .map(|w| w.iter().map(|x| x.to_bits()).collect())
                .collect()
        };
        assert_eq!(bits(&first), bits(&alone));
        assert_eq!(bits(&second), bits(&alone));
        // Discovery grows the page count: vectors of both lengths were sent.
        assert!(alone.first().unwrap().len() < alone.last().unwrap().len());
        assert!(alone.iter().any(|w| w.iter().any(|&x| x > 0.0)));
    }

    #[test]
    fn a_refresh_that_finds_the_held_copy_is_not_modified_and_measures_nothing() {
        let corpus = random_corpus(30, 6, 5);
        let mut r = refresher(&corpus, "round-robin", 30);
        let step = r.step(1).unwrap();
        for o in step.refresh_outcomes() {
            let held_before_was_live = corpus.page_at(o.page, 1).present().map(|v| v.unit)
                == corpus.page_at(o.page, 0).present().map(|v| v.unit);
            if held_before_was_live && corpus.page_at(o.page, 0).present().is_some() {
                assert!(!o.changed, "page {}", o.page);
                assert_eq!(o.delta_q, 0.0);
                assert_eq!(o.shingle_change, 0.0);
            }
        }
        // Pages that did not change were sent as the held copy, which the update path skips.
        let unchanged = step
            .refresh_outcomes()
            .iter()
            .filter(|o| !o.changed && !o.gone)
            .count();
        assert!(unchanged > 0);
        assert_eq!(step.apply.unchanged, unchanged);
    }
}
