//! The live workload: what users actually asked this server, merged into the log-derived
//! workload when a run asks for it.
//!
//! # How the live workload is merged with the log's
//!
//! Every successful `GET /api/search` (from the web page or from `refresher replay`) counts
//! one submission of its analyzed term *set* (order-insensitive, as the log workload normalises
//! queries). A run started with `"workload": "log+live"` evaluates and steers by
//! `f_q = f_q(log) + n_q(served)`: the log workload (after paper 003's relevance filter) plus one
//! per served submission. Served queries skip the relevance filter on purpose: the filter exists
//! to drop log queries about topics the corpus does not cover, and a query a user sent to this
//! engine is by definition one its users care about. Served queries with a term the corpus never
//! contains are left out (they can match no page, live or stale). The single-term workload Q'
//! gets the same counts per term, so the measurement hook and the user-centric priorities see
//! the traffic the engine serves. The merge happens when the run starts (a snapshot); the
//! counts keep growing for later runs.

use std::collections::HashMap;

use dashmap::DashMap;

use crate::judge::exact::MetricQuery;
use crate::querylog::term_workload::{MetricWorkload, TermWorkload};
use crate::querylog::workload::Workload;
use crate::text::{TermId, Vocabulary};

/// Counts of served queries by sorted term set. Shared by all request threads.
#[derive(Default)]
pub struct LiveWorkload {
    counts: DashMap<Vec<String>, u64>,
}

impl LiveWorkload {
    /// Counts one served submission of the analyzed `terms` (ignored when empty).
    pub fn record(&self, terms: &[String]) {
        if terms.is_empty() {
            return;
        }
        let mut key = terms.to_vec();
        key.sort_unstable();
        key.dedup();
        *self.counts.entry(key).or_insert(0) += 1;
    }

    /// Distinct served queries.
    pub fn distinct(&self) -> usize {
        self.counts.len()
    }

    /// Served submissions in all.
    pub fn submissions(&self) -> u64 {
        self.counts.iter().map(|e| *e.value()).sum()
    }

    /// A snapshot, sorted by term set (deterministic).
    pub fn snapshot(&self) -> Vec<(Vec<String>, u64)> {
        let mut out: Vec<(Vec<String>, u64)> = self
            .counts
            .iter()
            .map(|e| (e.key().clone(), *e.value()))
            .collect();
        out.sort();
        out
    }

    /// The log workload (if any) with the served counts added, in the simulator's term-id form.
    /// See the module docs for the rule.
    pub fn merged(&self, log: Option<&Workload>, vocabulary: &Vocabulary) -> TermWorkload {
        let mut sim = match log {
            Some(w) => TermWorkload::new(w, vocabulary, MetricWorkload::Queries),
            None => TermWorkload::default(),
        };
        merge_counts(&mut sim, &self.snapshot(), vocabulary);
        sim
    }
}

/// Adds served counts (term set → submissions) into `sim`.
pub fn merge_counts(
    sim: &mut TermWorkload,
    served: &[(Vec<String>, u64)],
    vocabulary: &Vocabulary,
) {
    let mut index: HashMap<Vec<TermId>, usize> = sim
        .queries
        .iter()
        .enumerate()
        .map(|(i, q)| {
            let mut k = q.terms.clone();
            k.sort_unstable();
            (k, i)
        })
        .collect();
    for (terms, count) in served {
        let ids: Option<Vec<TermId>> = terms.iter().map(|t| vocabulary.get(t)).collect();
        let Some(ids) = ids else { continue };
        let f = *count as f64;
        for &t in &ids {
            *sim.term_frequency.entry(t).or_insert(0.0) += f;
        }
        let mut key = ids.clone();
        key.sort_unstable();
        match index.get(&key) {
            Some(&i) => sim.queries[i].frequency += f,
            None => {
                index.insert(key, sim.queries.len());
                sim.queries.push(MetricQuery {
                    terms: ids,
                    frequency: f,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn served_counts_add_to_matching_queries_and_terms() {
        let mut vocab = Vocabulary::default();
        let a = vocab.intern("emac");
        let b = vocab.intern("lisp");
        let mut sim = TermWorkload::default();
        sim.queries.push(MetricQuery {
            terms: vec![b, a],
            frequency: 3.0,
        });
        sim.term_frequency.insert(a, 3.0);
        sim.term_frequency.insert(b, 3.0);
        let live = LiveWorkload::default();
        live.record(&["emac".into(), "lisp".into()]);
        live.record(&["lisp".into(), "emac".into()]);
        live.record(&["emac".into()]);
        live.record(&["unknownterm".into()]);
        merge_counts(&mut sim, &live.snapshot(), &vocab);
        assert_eq!(sim.queries.len(), 2);
        assert_eq!(sim.queries[0].frequency, 5.0);
        assert_eq!(sim.queries[1].terms, vec![a]);
        assert_eq!(sim.queries[1].frequency, 1.0);
        assert_eq!(sim.term_frequency[&a], 6.0);
        assert_eq!(sim.term_frequency[&b], 5.0);
        assert_eq!(live.submissions(), 4);
        assert_eq!(live.distinct(), 3);
    }
}
