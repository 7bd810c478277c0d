//! The workload in term ids (what the hook watches, the ΔQ estimate weights by and the exact
//! metrics evaluate), mapped from a [`Workload`] onto a vocabulary.

use std::collections::HashMap;

use crate::querylog::workload::Workload;
use crate::text::{TermId, Vocabulary};

/// A workload query as the metrics see it: distinct term ids and the frequency `f_q`.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricQuery {
    pub terms: Vec<TermId>,
    pub frequency: f64,
}

/// Which queries the exact metrics evaluate.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum MetricWorkload {
    /// The workload's queries as issued (multi-term queries conjunctive): paper 003 Eq. 5.
    #[default]
    Queries,
    /// The single-term workload Q' (each term with f_t), the estimator's own view.
    SingleTerms,
}

/// Term-id form of a [`Workload`].
#[derive(Debug, Clone, Default)]
pub struct TermWorkload {
    /// What the exact metrics evaluate.
    pub queries: Vec<MetricQuery>,
    /// The single-term workload Q': `f_t` per term id (hook and ΔQ estimator).
    pub term_frequency: HashMap<TermId, f64>,
}

impl TermWorkload {
    /// Maps a workload onto a corpus vocabulary. Queries with a term the corpus never contains
    /// can match no page, live or stale, and are left out (they add 0 to both sides of Eq. 5).
    pub fn new(workload: &Workload, vocabulary: &Vocabulary, metric: MetricWorkload) -> Self {
        let term_frequency: HashMap<TermId, f64> = workload
            .single_terms
            .iter()
            .filter_map(|(t, f)| vocabulary.get(t).map(|id| (id, *f as f64)))
            .collect();
        let queries = match metric {
            MetricWorkload::Queries => workload
                .queries
                .iter()
                .filter_map(|q| {
                    let terms: Option<Vec<TermId>> =
                        q.terms.iter().map(|t| vocabulary.get(t)).collect();
                    terms.map(|terms| MetricQuery {
                        terms,
                        frequency: q.frequency as f64,
                    })
                })
                .collect(),
            MetricWorkload::SingleTerms => {
                let mut terms: Vec<(TermId, f64)> =
                    term_frequency.iter().map(|(&t, &f)| (t, f)).collect();
                terms.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                terms
                    .into_iter()
                    .map(|(t, f)| MetricQuery {
                        terms: vec![t],
                        frequency: f,
                    })
                    .collect()
            }
        };
        TermWorkload {
            queries,
            term_frequency,
        }
    }

    /// `f_t` of a single term (0 when not in the workload).
    pub fn frequency(&self, term: TermId) -> f64 {
        self.term_frequency.get(&term).copied().unwrap_or(0.0)
    }

    /// The single-term workload's term ids, sorted (for the hook).
    pub(crate) fn term_ids(&self) -> Vec<TermId> {
        let mut ids: Vec<TermId> = self.term_frequency.keys().copied().collect();
        ids.sort_unstable();
        ids
    }

    /// Every term the workload reads: its single terms and its queries' terms, ascending.
    pub fn all_term_ids(&self) -> Vec<TermId> {
        let mut ids = self.term_ids();
        ids.extend(self.queries.iter().flat_map(|q| q.terms.iter().copied()));
        ids.sort_unstable();
        ids.dedup();
        ids
    }
}
