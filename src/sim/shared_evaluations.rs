//! Exact metrics (and live view weights) shared by every run over one environment.
//!
//! A run's metrics at a unit are a function of that unit and of which version of every page
//! its repository holds (the copies fix the repository's statistics and rankings, and the held
//! versions say which results are fresh). Runs of a sweep often hold the same versions at the
//! same unit: every policy's `B = 0` run in both fitting modes, every run whose budget covers
//! the whole site, thresholds that choose the same pages. Each such state is evaluated once.
//!
//! States are keyed by a 128-bit hash of the held versions (XXH3-128). Two different states
//! sharing a key would share metrics; over the tens of thousands of states of a sweep the
//! chance of that is below 2⁻⁹⁰.
//!
//! A state met again also shares what the ΔQ estimate's refit reads from it (each query's list
//! length and scores at the ranks a score-to-rank fit needs): the run that meets it a second
//! time ranks the lists once more and keeps them, so later runs fit from them without ranking.
//! Only states met twice are kept, within `MAX_QUERY_LIST_BYTES`: a state seen once costs
//! nothing more than before.
//!
//! The live Web's view weights at a run's last unit (the weights of its discovery delays) do
//! not depend on the run at all: they are computed once per unit.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use dashmap::DashMap;

use crate::corpus::Unit;
use crate::judge::exact::{ScoresAtRanks, UnitMetrics};

/// A repository state's exact metrics at a unit and, when asked for, its quality under each
/// resample of the workload's queries ([`crate::quality::bootstrap`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluated {
    pub(crate) metrics: UnitMetrics,
    pub(crate) resampled: Option<Arc<[f64]>>,
}

impl Evaluated {
    /// What remembering it costs: the key, the metrics and the resampled qualities.
    fn bytes(&self) -> usize {
        let resampled = self.resampled.as_ref().map_or(0, |r| r.len());
        std::mem::size_of::<((Unit, u128), Evaluated)>() + resampled * std::mem::size_of::<f64>()
    }
}

/// Bytes of remembered states at most (about 100 bytes a state, 1.7 kB with its resampled
/// qualities): a long-lived server's environment stops remembering new states past this, and
/// evaluates them as before.
const MAX_STATE_BYTES: usize = 256 << 20;

/// Bytes of shared query lists kept at most (a state's lists are a few hundred kilobytes for a
/// workload of thousands of queries); past this, runs rank their own lists as before.
const MAX_QUERY_LIST_BYTES: usize = 256 << 20;

/// The metrics of every (unit, held state) evaluated so far. See the module docs.
#[derive(Debug, Default)]
pub struct SharedEvaluations {
    by_state: DashMap<(Unit, u128), Evaluated>,
    state_bytes: AtomicUsize,
    /// Per state met again and fit's piece count: the lists its refits read.
    query_lists: DashMap<((Unit, u128), usize), Arc<ScoresAtRanks>>,
    query_list_bytes: AtomicUsize,
    /// Per unit: every page's views on the live Web.
    live_views: DashMap<Unit, Arc<Vec<f64>>>,
}

impl SharedEvaluations {
    /// The key of the repository holding version `held[p]` of each page `p` (`None`: no copy)
    /// at `unit`.
    pub fn key(unit: Unit, held: impl Iterator<Item = Option<Unit>>) -> (Unit, u128) {
        let mut bytes = Vec::with_capacity(4 * held.size_hint().0);
        crate::cache::write_held_units(&mut bytes, held);
        (unit, xxhash_rust::xxh3::xxh3_128(&bytes))
    }

    /// The evaluation of the state `key`, computed by `evaluate` the first time it is asked
    /// for; with `resampled`, one that has its resampled qualities (a state evaluated without
    /// them is evaluated again, and kept with them).
    pub fn get_or_evaluate(
        &self,
        key: (Unit, u128),
        resampled: bool,
        evaluate: impl FnOnce() -> Evaluated,
    ) -> Evaluated {
        if let Some(e) = self.by_state.get(&key) {
            if !resampled || e.resampled.is_some() {
                return e.clone();
            }
        }
        // Evaluated outside the map's lock: two runs reaching a new state together may both
        // evaluate it (the same metrics), rather than one waiting on a shard the other holds.
        let evaluated = evaluate();
        let bytes = evaluated.bytes();
        if self.state_bytes.fetch_add(bytes, Ordering::Relaxed) + bytes <= MAX_STATE_BYTES {
            if let Some(replaced) = self.by_state.insert(key, evaluated.clone()) {
                self.state_bytes
                    .fetch_sub(replaced.bytes(), Ordering::Relaxed);
            }
        } else {
            self.state_bytes.fetch_sub(bytes, Ordering::Relaxed);
        }
        evaluated
    }

    /// The lists a `pieces`-piece score-to-rank refit reads from the state `key`, ranked by
    /// `rank` unless a run met the state before and kept them. Call it only for a state
    /// [`Self::get_or_evaluate`] already knew: a state's first run gets its lists from its own
    /// evaluation.
    pub fn query_lists(
        &self,
        key: (Unit, u128),
        pieces: usize,
        rank: impl FnOnce() -> ScoresAtRanks,
    ) -> Arc<ScoresAtRanks> {
        if let Some(lists) = self.query_lists.get(&(key, pieces)) {
            return Arc::clone(&lists);
        }
        let lists = Arc::new(rank());
        let bytes = lists
            .iter()
            .map(|(_, scores)| {
                std::mem::size_of::<(usize, Vec<crate::index::Score>)>()
                    + std::mem::size_of_val(scores.as_slice())
            })
            .sum::<usize>();
        if self.query_list_bytes.fetch_add(bytes, Ordering::Relaxed) + bytes <= MAX_QUERY_LIST_BYTES
        {
            self.query_lists.insert((key, pieces), Arc::clone(&lists));
        } else {
            self.query_list_bytes.fetch_sub(bytes, Ordering::Relaxed);
        }
        lists
    }

    /// The live Web's view weights at `unit`, computed by `compute` the first time.
    pub fn live_view_weights(
        &self,
        unit: Unit,
        compute: impl FnOnce() -> Vec<f64>,
    ) -> Arc<Vec<f64>> {
        if let Some(w) = self.live_views.get(&unit) {
            return Arc::clone(&w);
        }
        let weights = Arc::new(compute());
        self.live_views.insert(unit, Arc::clone(&weights));
        weights
    }

    /// States whose refit lists are kept ([`Self::query_lists`]).
    #[cfg(test)]
    pub(crate) fn shared_query_lists(&self) -> usize {
        self.query_lists.len()
    }

    /// States remembered.
    pub fn len(&self) -> usize {
        self.by_state.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_state.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quality::SearchQuality;

    fn metrics(unit: Unit, quality: f64) -> UnitMetrics {
        UnitMetrics {
            unit,
            search: SearchQuality {
                quality,
                fresh_at_10: 1.0,
                map_at_10: 1.0,
            },
            ndcg_at_10: 1.0,
            p_at_10: 1.0,
            absolute_quality: quality,
            paper000: Default::default(),
        }
    }

    #[test]
    fn a_state_met_again_ranks_its_query_lists_once_per_piece_count() {
        let shared = SharedEvaluations::default();
        let key = SharedEvaluations::key(1, [Some(0), Some(1)].into_iter());
        let lists: ScoresAtRanks = vec![(3, vec![2.0, 1.0]), (0, Vec::new())];
        let first = shared.query_lists(key, 4, || lists.clone());
        let again = shared.query_lists(key, 4, || panic!("ranked twice"));
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!(*again, lists);
        let other_pieces = shared.query_lists(key, 8, || vec![(3, vec![2.0])]);
        assert_eq!(*other_pieces, vec![(3, vec![2.0])]);
        let other_state = SharedEvaluations::key(2, [Some(0), Some(1)].into_iter());
        assert!(shared.query_lists(other_state, 4, Vec::new).is_empty());
    }

    #[test]
    fn a_state_is_evaluated_once_and_states_differ_by_unit_and_version() {
        let shared = SharedEvaluations::default();
        let plain = |unit, quality| Evaluated {
            metrics: metrics(unit, quality),
            resampled: None,
        };
        let held = [Some(0), None, Some(3)];
        let key = SharedEvaluations::key(2, held.iter().copied());
        let first = shared.get_or_evaluate(key, false, || plain(2, 0.5));
        assert_eq!(first.metrics.search.quality, 0.5);
        let again = shared.get_or_evaluate(key, false, || panic!("evaluated twice"));
        assert_eq!(again, plain(2, 0.5));
        // Asked for resampled qualities it lacks, the state is evaluated again and kept so.
        let resampled = Evaluated {
            resampled: Some(Arc::from(vec![0.4, 0.6])),
            ..plain(2, 0.5)
        };
        let with = shared.get_or_evaluate(key, true, || resampled.clone());
        assert_eq!(with, resampled);
        let kept = shared.get_or_evaluate(key, true, || panic!("evaluated a third time"));
        assert_eq!(kept, resampled);
        let other_unit = SharedEvaluations::key(3, held.iter().copied());
        let other_version = SharedEvaluations::key(2, [Some(0), None, Some(2)].into_iter());
        let dropped = SharedEvaluations::key(2, [Some(0), None, None].into_iter());
        assert!(other_unit != key && other_version != key && dropped != key);
        let other = shared.get_or_evaluate(other_version, false, || plain(2, 0.25));
        assert_eq!(other.metrics.search.quality, 0.25);
        assert_eq!(shared.len(), 2);
        assert_eq!(
            *shared.live_view_weights(5, || vec![1.0, 2.0]),
            vec![1.0, 2.0]
        );
        assert_eq!(
            *shared.live_view_weights(5, || panic!("computed twice")),
            vec![1.0, 2.0]
        );
    }
}
