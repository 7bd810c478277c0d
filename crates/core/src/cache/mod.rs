//! The one cache layer: results of pure computations shared by the runs of one environment (a
//! sweep's runs, a served engine's refreshes), each kept under a key derived from the inputs
//! the computation reads.
//!
//! Why: the runs of a sweep often meet the same inputs (the same held copies after the same
//! history, the same estimates), so PageRanks, SBR/EBR schedules, repository view weights and
//! shingle sketches are computed once and read by the others — the same values, bit for bit,
//! since each is a function of its inputs.
//!
//! Protocol: a computation's inputs are a type implementing [`CacheKey`]. Its
//! [`CacheKey::write_key`] writes every input the computation reads — the same struct the
//! computation is given, so the key cannot fall out of step with what is read — and the key is
//! XXH3-128 of those bytes (two different inputs sharing a key would share a result, a chance
//! below 2⁻⁹⁰ over the inputs of a sweep). `Cache::get_or_compute` returns the kept result
//! or computes and keeps it. Each kind of result has its own store, bounded by
//! [`CacheKey::MAX_BYTES`] (oldest dropped first: runs of a sweep that meet the same inputs
//! mostly run side by side), with hit and miss counters ([`Cache::stats`]).
//!
//! Lifetime: a [`Cache`] belongs to one environment (one corpus, workload and scoring) and is
//! dropped with it; nothing here is process-global. Inputs named by page and version unit name
//! one version only within one corpus, so environments never share a cache.

use std::any::Any;
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use dashmap::DashMap;

use crate::corpus::Unit;

/// The inputs of one cached computation (see the module docs for the protocol).
pub trait CacheKey {
    /// What the computation returns.
    type Value: Send + Sync + 'static;
    /// The store's name in [`Cache::stats`]; one name per kind of result.
    const STORE: &'static str;
    /// Bytes of results the store keeps at most.
    const MAX_BYTES: usize;
    /// Writes every input the computation reads.
    fn write_key(&self, bytes: &mut Vec<u8>);
    /// XXH3-128 of what [`Self::write_key`] writes; an implementation may stream the bytes
    /// into the hash instead of writing them (the same key).
    fn key(&self) -> u128 {
        let mut bytes = Vec::with_capacity(self.key_len());
        self.write_key(&mut bytes);
        xxhash_rust::xxh3::xxh3_128(&bytes)
    }
    /// Bytes [`Self::write_key`] writes, about (a capacity hint).
    fn key_len(&self) -> usize {
        64
    }
    /// What keeping `value` costs, in bytes.
    fn value_bytes(value: &Self::Value) -> usize;
}

/// The key [`CacheKey::write_key`] names: XXH3-128 of its bytes.
pub(crate) fn key_of<K: CacheKey + ?Sized>(inputs: &K) -> u128 {
    inputs.key()
}

/// Appends the copies a repository holds as keys name them: per page id in order, the unit of
/// the held version (`u32::MAX`: no copy), 4 little-endian bytes each.
pub fn write_held_units(bytes: &mut Vec<u8>, held: impl Iterator<Item = Option<Unit>>) {
    bytes.extend(held.flat_map(|h| h.map_or(u32::MAX, |u| u).to_le_bytes()));
}

/// One store's counters ([`Cache::stats`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct StoreStats {
    /// Results found kept.
    pub hits: u64,
    /// Results computed (kept or, past the budget, not).
    pub(crate) misses: u64,
    /// Results kept now.
    pub kept: usize,
    /// Their bytes.
    pub(crate) bytes: usize,
}

/// See the module docs.
#[derive(Default)]
pub struct Cache {
    /// Per store name, its `Store<Value>` twice: as itself (to read results) and as its
    /// counters (to report them without knowing the value type). A sharded map: runs on
    /// several threads look their stores up at every cached call.
    stores: DashMap<&'static str, Entry>,
}

type Entry = (Arc<dyn Any + Send + Sync>, Arc<dyn Counted>);

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.stats()).finish()
    }
}

impl Cache {
    pub fn new() -> Self {
        Self::default()
    }

    /// The result of the computation of `inputs`, computed by `compute` when no one kept it,
    /// with its key (a result is a function of its key: later keys may name it).
    ///
    /// `compute` must read nothing `inputs` does not write into its key.
    pub(crate) fn get_or_compute<K: CacheKey + ?Sized>(
        &self,
        inputs: &K,
        compute: impl FnOnce() -> K::Value,
    ) -> (Arc<K::Value>, u128) {
        let key = key_of(inputs);
        (
            self.store::<K>()
                .get_or_compute(key, compute, K::value_bytes),
            key,
        )
    }

    /// The kept result of the computation of `inputs`, if any (for computations that may fail:
    /// [`Self::insert`] their result once it is known).
    pub fn get<K: CacheKey + ?Sized>(&self, inputs: &K) -> Option<Arc<K::Value>> {
        self.store::<K>().get(key_of(inputs))
    }

    /// Keeps `value` as the result of the computation of `inputs` (counted as computed).
    pub fn insert<K: CacheKey + ?Sized>(&self, inputs: &K, value: K::Value) {
        let store = self.store::<K>();
        store.misses.fetch_add(1, Ordering::Relaxed);
        store.keep(key_of(inputs), Arc::new(value), K::value_bytes);
    }

    /// Every store's counters, by name.
    pub fn stats(&self) -> BTreeMap<&'static str, StoreStats> {
        self.stores
            .iter()
            .map(|entry| (*entry.key(), entry.value().1.stats()))
            .collect()
    }

    /// One line for a terminal: each store's hits and computations.
    pub fn summary(&self) -> String {
        let stats = self.stats();
        if stats.is_empty() {
            return "cache: unused".to_string();
        }
        let parts: Vec<String> = stats
            .iter()
            .map(|(name, s)| format!("{name} {} hits / {} computed", s.hits, s.misses))
            .collect();
        format!("cache: {}", parts.join(", "))
    }

    fn store<K: CacheKey + ?Sized>(&self) -> Arc<Store<K::Value>> {
        let any = match self.stores.get(K::STORE) {
            Some(entry) => Arc::clone(&entry.value().0),
            None => {
                let entry = self.stores.entry(K::STORE).or_insert_with(|| {
                    let store = Arc::new(Store::<K::Value>::with_max_bytes(K::MAX_BYTES));
                    (store.clone(), store)
                });
                Arc::clone(&entry.value().0)
            }
        };
        any.downcast::<Store<K::Value>>()
            .unwrap_or_else(|_| panic!("cache store {} holds two kinds of result", K::STORE))
    }
}

/// A store's counters, whatever its value type.
trait Counted: Send + Sync {
    fn stats(&self) -> StoreStats;
}

/// Results of one kind, at most `max_bytes` of them (oldest dropped first).
struct Store<V> {
    by_key: DashMap<u128, Arc<V>>,
    /// The kept keys, oldest first, with their bytes; and the bytes kept in all.
    kept: Mutex<(VecDeque<(u128, usize)>, usize)>,
    max_bytes: usize,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl<V: Send + Sync> Counted for Store<V> {
    fn stats(&self) -> StoreStats {
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        StoreStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            kept: kept.0.len(),
            bytes: kept.1,
        }
    }
}

impl<V> Store<V> {
    fn with_max_bytes(max_bytes: usize) -> Self {
        Store {
            by_key: DashMap::new(),
            kept: Mutex::new((VecDeque::new(), 0)),
            max_bytes,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    /// The result under `key` if kept (counted as a hit).
    fn get(&self, key: u128) -> Option<Arc<V>> {
        let value = self.by_key.get(&key).map(|v| Arc::clone(&v));
        if value.is_some() {
            self.hits.fetch_add(1, Ordering::Relaxed);
        }
        value
    }

    /// The result under `key`, computed by `compute` when no one kept it; `bytes` is what a
    /// result costs to keep.
    fn get_or_compute(
        &self,
        key: u128,
        compute: impl FnOnce() -> V,
        bytes: impl FnOnce(&V) -> usize,
    ) -> Arc<V> {
        if let Some(value) = self.by_key.get(&key) {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return Arc::clone(&value);
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        // Computed outside any lock: two runs meeting new inputs together may both compute
        // them (the same result) rather than one waiting on the other.
        let value = Arc::new(compute());
        self.keep(key, Arc::clone(&value), bytes);
        value
    }

    /// Keeps `value` under `key` unless it is larger than the store or a value is kept there
    /// already; drops the oldest past the budget.
    fn keep(&self, key: u128, value: Arc<V>, bytes: impl FnOnce(&V) -> usize) {
        let bytes = bytes(&value);
        if bytes > self.max_bytes {
            return;
        }
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        if self.by_key.insert(key, value).is_none() {
            kept.0.push_back((key, bytes));
            kept.1 += bytes;
            while kept.1 > self.max_bytes {
                let Some((old, old_bytes)) = kept.0.pop_front() else {
                    break;
                };
                self.by_key.remove(&old);
                kept.1 -= old_bytes;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A toy computation: its input, kept in a store of `MAX_BYTES` 2 where a result costs
    /// its own value in bytes.
    struct Square(u64);

    impl CacheKey for Square {
        type Value = u64;
        const STORE: &'static str = "squares";
        const MAX_BYTES: usize = 2;
        fn write_key(&self, bytes: &mut Vec<u8>) {
            bytes.extend_from_slice(&self.0.to_le_bytes());
        }
        fn value_bytes(value: &u64) -> usize {
            if *value >= 100 {
                3
            } else {
                1
            }
        }
    }

    #[test]
    fn a_result_is_computed_once_counted_and_the_oldest_go_past_the_budget() {
        let cache = Cache::new();
        let (first, key) = cache.get_or_compute(&Square(1), || 1);
        let (again, again_key) = cache.get_or_compute(&Square(1), || panic!("computed twice"));
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!(key, again_key);
        cache.get_or_compute(&Square(2), || 4);
        assert_eq!(cache.stats()["squares"].kept, 2);
        // A third result pushes the oldest out.
        cache.get_or_compute(&Square(3), || 9);
        assert_eq!(cache.stats()["squares"].kept, 2);
        assert_eq!(*cache.get_or_compute(&Square(1), || 11).0, 11);
        // A result larger than the budget is returned, not kept.
        assert_eq!(*cache.get_or_compute(&Square(10), || 100).0, 100);
        assert_eq!(*cache.get_or_compute(&Square(10), || 101).0, 101);
        let stats = cache.stats()["squares"];
        assert_eq!(
            (stats.hits, stats.misses, stats.kept, stats.bytes),
            (1, 6, 2, 2)
        );
        assert!(cache.summary().contains("squares 1 hits / 6 computed"));
        assert_ne!(key_of(&Square(1)), key_of(&Square(2)));
    }

    #[test]
    fn held_units_name_each_copy_and_a_missing_one() {
        let mut a = Vec::new();
        write_held_units(&mut a, [Some(3), None].into_iter());
        assert_eq!(a, [3, 0, 0, 0, 255, 255, 255, 255]);
    }
}
