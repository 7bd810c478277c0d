//! The sampling refresh policies of papers 000 and 002 and their building blocks: fetch a few
//! pages of a group, and when they changed, fetch the group.
//!
//! * [`sample_size`]: paper 000's t-test sufficiency rule, the cluster count for small budgets,
//!   GSB's site sample size.
//! * [`granularity`]: paper 002's link (Eq. 1), directory (Eq. 2) and cluster distances.
//! * [`phi`]: paper 002's download probability (binary, HA, WHA, PRA).
//! * [`view`]: what the policies read of the crawler's knowledge ([`SamplingView`]).
//! * [`neighbourhood`]: paper 002's Algorithm 1 (`sample-lb`, `sample-db`, `sample-cb`).
//! * [`cls`]: paper 000's cluster-level sampling (`cls`).
//! * [`gsb`]: Cho & Ntoulas's greedy site-level sampling (`gsb`) and random node sampling
//!   (`rns`).
//! * [`policy`]: a planner as a [`crate::policy::RefreshPolicy`] on the refresher's rounds
//!   protocol, reading [`crate::crawl::CrawlState::knowledge`].
//!
//! Every policy here spends a unit's budget in *rounds* ([`RoundPlanner`]): it sees what each
//! round's fetches revealed (changed or not) before choosing the next.

pub mod cls;
pub mod granularity;
pub mod gsb;
pub mod neighbourhood;
pub mod phi;
pub mod policy;
pub mod sample_size;
pub mod view;

use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::cluster::features::{
    page_features, stop_term_ids, CopyFacts, FeatureConfig, FeatureInput, PreviousCopy, DIMS,
};
use crate::cluster::{repeated_bisection, Clustering, DenseRows, RbcConfig};
use crate::corpus::{PageId, PageVersion, Unit};
use crate::text::{Analyzer, Vocabulary};

pub use view::SamplingView;

/// What one fetch of a round revealed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probe {
    pub(crate) page: PageId,
    /// The fetched copy differs from the held one.
    pub(crate) changed: bool,
    /// The page is gone.
    pub(crate) gone: bool,
}

/// A policy that spends a unit's budget in rounds: [`begin_unit`](Self::begin_unit), then
/// [`next_round`](Self::next_round) and [`observe_round`](Self::observe_round) in turn until a
/// round is empty or the budget is spent. Every page returned is fetched at once; a page is
/// returned at most once per unit, and the rounds of a unit hold at most `budget` pages.
pub trait RoundPlanner: Send {
    fn begin_unit(&mut self, unit: Unit, budget: usize, view: &dyn SamplingView);
    /// The next pages to fetch (empty: the unit is done).
    fn next_round(&mut self, view: &dyn SamplingView) -> Vec<PageId>;
    /// What the last round's fetches revealed, one probe per page of the round.
    fn observe_round(&mut self, probes: &[Probe]);
    /// What the unit's fetches revealed, all together (after the unit).
    fn observe_unit(&mut self, unit: Unit, probes: &[Probe]);
}

/// The change cycles each page's fetches detected (cycle = unit), for the change-history
/// estimates of papers 000 §4 and 002 §5 (a cycle without a fetch counts as no change).
#[derive(Debug, Clone, Default)]
pub struct ChangeLog {
    change_units: Vec<Vec<Unit>>,
}

impl ChangeLog {
    /// A fetch of `page` at `unit` found it changed.
    pub fn record(&mut self, page: PageId, unit: Unit) {
        let p = page as usize;
        if p >= self.change_units.len() {
            self.change_units.resize(p + 1, Vec::new());
        }
        if self.change_units[p].last() != Some(&unit) {
            self.change_units[p].push(unit);
        }
    }

    /// Change indicators of cycles `1 … unit − 1`, then this cycle's observation `now` when
    /// given (the history "including this cycle", oldest first).
    pub(crate) fn history(&self, page: PageId, unit: Unit, now: Option<bool>) -> Vec<bool> {
        let changes = self
            .change_units
            .get(page as usize)
            .map_or(&[][..], Vec::as_slice);
        let mut h = crate::change::cycle_history(changes, unit);
        h.extend(now);
        h
    }
}

/// A seeded uniform shuffle.
pub(crate) fn shuffled(mut pages: Vec<PageId>, rng: &mut impl rand::Rng) -> Vec<PageId> {
    use rand::seq::SliceRandom;
    pages.shuffle(rng);
    pages
}

/// The 48 features (paper 000 §3.1–3.2) of `pages` from the view, with the copies fetched
/// before the held ones and the detected change frequencies when known.
pub(crate) fn features_of(
    view: &dyn SamplingView,
    pages: &[PageId],
    terms: &mut ContentTerms,
    previous: &dyn Fn(PageId) -> Option<(Arc<PageVersion>, CopyFacts)>,
    change_frequency: &dyn Fn(PageId) -> f64,
    config: &FeatureConfig,
) -> Vec<[f64; DIMS]> {
    let copies: Vec<_> = pages
        .iter()
        .map(|&p| view.held(p).map(|c| (Arc::clone(c), terms.of(c))))
        .collect();
    let previous: Vec<_> = pages
        .iter()
        .map(|&p| previous(p).map(|(c, facts)| (terms.of(&c), facts)))
        .collect();
    let inputs: Vec<FeatureInput<'_>> = pages
        .iter()
        .zip(&copies)
        .zip(&previous)
        .map(|((&p, copy), prev)| match copy {
            Some((c, counts)) => FeatureInput {
                url: view.url(p),
                file_type: view::file_type(c),
                terms: counts,
                facts: view::copy_facts(view, p, c),
                previous: prev.as_ref().map(|(counts, facts)| PreviousCopy {
                    terms: counts,
                    facts: *facts,
                }),
                change_frequency: change_frequency(p),
            },
            None => FeatureInput {
                url: view.url(p),
                change_frequency: change_frequency(p),
                ..FeatureInput::default()
            },
        })
        .collect();
    let stop = terms.stop_terms();
    page_features(&inputs, |t| stop.binary_search(&t).is_ok(), config)
}

/// The content terms of held copies for the word features, in a vocabulary of the policy's
/// own: the project's analyzer over each copy's indexed text, so the stop words of paper 000
/// §3.1 are known by their text. Cached by content hash (a copy is analysed once).
#[derive(Debug, Clone, Default)]
pub struct ContentTerms {
    vocabulary: Vocabulary,
    by_hash: FxHashMap<u64, Arc<[(u32, u32)]>>,
}

impl ContentTerms {
    /// `(term, count)` of a copy's indexed text, sorted by term.
    pub fn of(&mut self, copy: &PageVersion) -> Arc<[(u32, u32)]> {
        if let Some(t) = self.by_hash.get(&copy.content_hash) {
            return Arc::clone(t);
        }
        let mut counts: FxHashMap<u32, u32> = FxHashMap::default();
        let vocabulary = &mut self.vocabulary;
        Analyzer::new().for_each_term(&copy.indexed_text(), |t| {
            *counts.entry(vocabulary.intern(t)).or_default() += 1;
        });
        let mut list: Vec<(u32, u32)> = counts.into_iter().collect();
        list.sort_unstable();
        let list: Arc<[(u32, u32)]> = list.into();
        self.by_hash.insert(copy.content_hash, Arc::clone(&list));
        list
    }

    /// Term ids of the stop words met so far, ascending.
    pub(crate) fn stop_terms(&self) -> Vec<u32> {
        stop_term_ids(&self.vocabulary)
    }

    /// Forgets copies whose hash `keep` rejects (copies no longer held or remembered).
    pub(crate) fn retain(&mut self, keep: impl Fn(u64) -> bool) {
        self.by_hash.retain(|h, _| keep(*h));
    }
}

/// Clusters feature rows restricted to `columns` by repeated bisection (paper 000 §3.3).
pub(crate) fn cluster_features(
    rows: &[[f64; DIMS]],
    columns: &[usize],
    k: usize,
    seed: u64,
) -> (DenseRows, Clustering) {
    let data: Vec<f64> = rows
        .iter()
        .flat_map(|r| columns.iter().map(move |&c| r[c]))
        .collect();
    let dense = DenseRows::new(columns.len().max(1), data);
    let clustering = repeated_bisection(&dense, &RbcConfig::new(k, seed));
    (dense, clustering)
}

#[cfg(test)]
mod tests;
