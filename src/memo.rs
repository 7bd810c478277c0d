//! [`SharedMemo`]: results of a pure computation shared between the runs of one environment,
//! keyed by a hash of everything the computation reads, within a byte budget.
//!
//! The runs of a sweep often meet the same inputs (the same held copies after the same
//! history, the same estimates): PageRanks ([`crate::crawl::SharedPageRanks`]) and SBR/EBR
//! schedules ([`crate::policy::planned::SharedPlans`]) are then computed once and read by the
//! others — the same values, bit for bit, since the computation is a function of its inputs.
//!
//! Keys are 128-bit hashes (XXH3-128) of the inputs: two different inputs sharing a key would
//! share a result, a chance below 2⁻⁹⁰ over the inputs of a sweep.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use dashmap::DashMap;

use crate::corpus::Unit;

/// See the module docs. At most `max_bytes` of results are kept (as each result's `bytes`
/// counts them); past that the oldest go first: runs of a sweep that meet the same inputs
/// mostly run side by side.
#[derive(Debug)]
pub struct SharedMemo<V> {
    by_key: DashMap<u128, Arc<V>>,
    /// The kept keys, oldest first, with their bytes; and the bytes kept in all.
    kept: Mutex<(VecDeque<(u128, usize)>, usize)>,
    max_bytes: usize,
}

impl<V> SharedMemo<V> {
    pub fn with_max_bytes(max_bytes: usize) -> Self {
        SharedMemo {
            by_key: DashMap::new(),
            kept: Mutex::new((VecDeque::new(), 0)),
            max_bytes,
        }
    }

    /// The result under `key`, computed by `compute` when no one kept it; `bytes` is what a
    /// result costs to keep.
    pub fn get_or_compute(
        &self,
        key: u128,
        compute: impl FnOnce() -> V,
        bytes: impl FnOnce(&V) -> usize,
    ) -> Arc<V> {
        if let Some(value) = self.by_key.get(&key) {
            return Arc::clone(&value);
        }
        // Computed outside any lock: two runs meeting new inputs together may both compute
        // them (the same result) rather than one waiting on the other.
        let value = Arc::new(compute());
        let bytes = bytes(&value);
        if bytes > self.max_bytes {
            return value;
        }
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        if self.by_key.insert(key, Arc::clone(&value)).is_none() {
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
        value
    }

    /// Results kept.
    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }
}

/// Appends the copies a repository holds as every shared store's key names them: per page id in
/// order, the unit of the held version (`u32::MAX`: no copy), 4 little-endian bytes each.
pub fn write_held_units(bytes: &mut Vec<u8>, held: impl Iterator<Item = Option<Unit>>) {
    bytes.extend(held.flat_map(|h| h.map_or(u32::MAX, |u| u).to_le_bytes()));
}

/// XXH3-128 of bytes written by `write` (the key of a [`SharedMemo`]).
pub fn key_of(capacity: usize, write: impl FnOnce(&mut Vec<u8>)) -> u128 {
    let mut bytes = Vec::with_capacity(capacity);
    write(&mut bytes);
    xxhash_rust::xxh3::xxh3_128(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_is_computed_once_and_the_oldest_go_past_the_budget() {
        let memo = SharedMemo::with_max_bytes(2);
        let first = memo.get_or_compute(1, || 10, |_| 1);
        let again = memo.get_or_compute(1, || panic!("computed twice"), |_| 1);
        assert!(Arc::ptr_eq(&first, &again));
        memo.get_or_compute(2, || 20, |_| 1);
        assert_eq!(memo.len(), 2);
        // A third result pushes the oldest out.
        memo.get_or_compute(3, || 30, |_| 1);
        assert_eq!(memo.len(), 2);
        assert_eq!(*memo.get_or_compute(1, || 11, |_| 1), 11);
        // A result larger than the budget is returned, not kept.
        assert_eq!(*memo.get_or_compute(4, || 40, |_| 3), 40);
        assert_eq!(*memo.get_or_compute(4, || 41, |_| 3), 41);
        assert_ne!(key_of(8, |b| b.push(1)), key_of(8, |b| b.push(2)));
    }
}
