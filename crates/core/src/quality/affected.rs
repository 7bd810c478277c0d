//! Which workload queries a refresh can affect: the queries holding a term of the old or the
//! new copy, or, under in-link scoring, a term of a page whose in-link count the refresh
//! changes (the targets of links added or removed). Read by the multi-term estimate and by the
//! judge's exact ΔQ.

use std::collections::HashMap;

use crate::index::{ForwardDoc, ForwardIndex, ScoringKind};
use crate::querylog::term_workload::MetricQuery;
use crate::text::TermId;

/// Which workload queries hold each term: finds the queries a refresh can affect.
#[derive(Debug, Clone, Default)]
pub struct AffectedQueries {
    by_term: HashMap<TermId, Vec<usize>>,
}

impl AffectedQueries {
    /// Indexes `queries` (by position) under each of their terms.
    pub fn new(queries: &[MetricQuery]) -> Self {
        let mut by_term: HashMap<TermId, Vec<usize>> = HashMap::new();
        for (i, q) in queries.iter().enumerate() {
            for &t in &q.terms {
                by_term.entry(t).or_default().push(i);
            }
        }
        AffectedQueries { by_term }
    }

    /// The queries (ascending positions) holding any of `terms`.
    pub(crate) fn of_terms(&self, terms: &[TermId]) -> Vec<usize> {
        let mut out: Vec<usize> = terms
            .iter()
            .filter_map(|t| self.by_term.get(t))
            .flatten()
            .copied()
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The queries (ascending positions) whose result lists replacing `old` by `new` as the
    /// copy of a page can change under `scoring` (see the module docs). `forward` gives the
    /// copies of link targets.
    pub fn of_refresh(
        &self,
        forward: &ForwardIndex,
        old: Option<&ForwardDoc>,
        new: Option<&ForwardDoc>,
        scoring: ScoringKind,
    ) -> Vec<usize> {
        let mut out: Vec<usize> = Vec::new();
        let mut add_terms = |doc: &ForwardDoc| {
            for &(t, _) in &doc.terms.counts {
                if let Some(qs) = self.by_term.get(&t) {
                    out.extend_from_slice(qs);
                }
            }
        };
        for doc in [old, new].into_iter().flatten() {
            add_terms(doc);
        }
        if scoring == ScoringKind::InLinks {
            let links = |d: Option<&ForwardDoc>| d.map(|d| d.links.clone()).unwrap_or_default();
            let (before, after) = (links(old), links(new));
            let changed = before
                .iter()
                .filter(|p| after.binary_search(p).is_err())
                .chain(after.iter().filter(|p| before.binary_search(p).is_err()));
            for &target in changed {
                if let Some(doc) = forward.doc(target) {
                    add_terms(doc);
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}
