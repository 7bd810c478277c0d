//! Viewing likelihood `I(r) = c · r^(−a)`: how likely a user is to look at the result at rank r.
//!
//! Paper 003 (§4, following Lempel & Moran) takes `a = 3/2`. We fix `c` so that the likelihoods
//! of an infinite list sum to 1 (`c = 1/ζ(a)`): the same constant for every query and list
//! length, so quality contributions of different queries are comparable. `c` cancels in the
//! repository quality ratio (paper 003 Eq. 5) and does not change the order of priorities; it
//! only scales absolute ΔQ values.

use crate::cache::{write_held_units, CacheKey};
use crate::corpus::Unit;
use crate::index::{ForwardIndex, Scorer};
use crate::text::TermId;

use super::ranking::{MetricQuery, RankMemory};

/// Default exponent of the viewing likelihood (paper 003 §4).
pub(crate) const DEFAULT_EXPONENT: f64 = 1.5;

/// Spans up to this many ranks are summed term by term; longer ones use the integral form.
const EXACT_SUM_SPAN: u64 = 64;

/// `I(r) = c · r^(−a)` with `c = 1/ζ(a)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ViewingLikelihood {
    exponent: f64,
    c: f64,
}

impl Default for ViewingLikelihood {
    fn default() -> Self {
        Self::new(DEFAULT_EXPONENT)
    }
}

impl ViewingLikelihood {
    /// A likelihood with exponent `a > 1` (the sum over an infinite list must converge).
    pub fn new(exponent: f64) -> Self {
        assert!(
            exponent > 1.0 && exponent.is_finite(),
            "viewing-likelihood exponent must be > 1, got {exponent}"
        );
        ViewingLikelihood {
            exponent,
            c: 1.0 / zeta(exponent),
        }
    }

    pub(crate) fn exponent(&self) -> f64 {
        self.exponent
    }

    /// `I(r)`; rank 0 means "not in the list" and has likelihood 0.
    pub fn at(&self, rank: u64) -> f64 {
        if rank == 0 {
            0.0
        } else {
            self.c * (rank as f64).powf(-self.exponent)
        }
    }

    /// `Σ_{r=i}^{j} I(r)`: the first ranks exactly, the rest of a long span by the integral
    /// `Σ_{k=i}^{j} k^(−a) ≈ ((i − ½)^(1−a) − (j + ½)^(1−a)) / (a − 1)`, which for `a = 3/2` is
    /// paper 003 §5.1's `2·(1/√(i − ½) − 1/√(j + ½))` (see ARCHITECTURE.md, § The user-centric
    /// metric and its estimate). Empty when `j < i`.
    pub fn sum(&self, i: u64, j: u64) -> f64 {
        let i = i.max(1);
        if j < i {
            return 0.0;
        }
        // The midpoint integral is poor for the first ranks (1.3% off from rank 2), so the head
        // of the span is summed exactly and only the tail integrated.
        let head_end = j.min(i + EXACT_SUM_SPAN - 1);
        let head: f64 = (i..=head_end).map(|r| self.at(r)).sum();
        if head_end == j {
            return head;
        }
        let a = self.exponent;
        let lo = (head_end as f64 + 0.5).powf(1.0 - a);
        let hi = (j as f64 + 0.5).powf(1.0 - a);
        head + self.c * (lo - hi) / (a - 1.0)
    }
}

/// `I(r)` for the ranks of any list of a collection of `len` documents, computed once per call
/// rather than once per result (the same [`ViewingLikelihood::at`] values).
pub struct LikelihoodTable<'a> {
    values: std::sync::Arc<[f64]>,
    likelihood: &'a ViewingLikelihood,
}

impl LikelihoodTable<'_> {
    /// `I(index + 1)`.
    pub fn at(&self, index: usize) -> f64 {
        match self.values.get(index) {
            Some(&v) => v,
            None => self.likelihood.at(index as u64 + 1),
        }
    }
}

thread_local! {
    /// The last table built on this thread: evaluations unit after unit share the likelihood
    /// and nearly the collection size.
    static LIKELIHOODS: std::cell::RefCell<Option<(ViewingLikelihood, std::sync::Arc<[f64]>)>> =
        const { std::cell::RefCell::new(None) };
}

/// A table of `I(r)` for ranks `1..=len` at least (this thread's last one when it is of the
/// same likelihood and long enough: the values are the same either way). A longer one of the
/// same likelihood replaces it with up to twice the old length, so callers asking for lists of
/// growing lengths rebuild it a few times, not once per length.
pub fn likelihood_table(likelihood: &ViewingLikelihood, len: usize) -> LikelihoodTable<'_> {
    let values = LIKELIHOODS.with(|cell| {
        let mut last = cell.borrow_mut();
        match &*last {
            Some((l, values)) if l == likelihood && values.len() >= len => values.clone(),
            _ => {
                // Here the old table is shorter than `len`, so this is at most `2·len`.
                let len = match &*last {
                    Some((l, values)) if l == likelihood => len.max(values.len() * 2),
                    _ => len,
                };
                let values: std::sync::Arc<[f64]> =
                    (1..=len as u64).map(|r| likelihood.at(r)).collect();
                *last = Some((*likelihood, values.clone()));
                values
            }
        }
    });
    LikelihoodTable { values, likelihood }
}

/// `Σ_q f_q · I(rank of p in q's results)` for every page, as `forward` ranks them: EBR's
/// weight, of the live Web at unit 0 or of the repository during a run.
pub fn view_weights_of(
    forward: &ForwardIndex,
    scorer: &dyn Scorer,
    pages: usize,
    queries: &[MetricQuery],
    likelihood: &ViewingLikelihood,
) -> Vec<f64> {
    view_weights_with(
        &mut RankMemory::default(),
        forward,
        scorer,
        pages,
        queries,
        likelihood,
    )
}

/// [`view_weights_of`], ranking the lists from `memory` (their rankings at the last call):
/// the same weights bit for bit, at the cost of re-ranking almost sorted lists. A refresh
/// loop re-reads its repository's view weights every few units.
pub fn view_weights_with(
    memory: &mut RankMemory,
    forward: &ForwardIndex,
    scorer: &dyn Scorer,
    pages: usize,
    queries: &[MetricQuery],
    likelihood: &ViewingLikelihood,
) -> Vec<f64> {
    let terms: Vec<&[TermId]> = queries.iter().map(|q| q.terms.as_slice()).collect();
    let lists = memory.rank_lists(forward, scorer, &terms);
    // Summed in query order, so that the floating-point sums do not depend on how the lists
    // were ranked in parallel.
    let mut weight = vec![0.0; pages];
    let longest = lists.iter().map(|l| l.len()).max().unwrap_or(0);
    let table = likelihood_table(likelihood, longest);
    for (q, list) in queries.iter().zip(lists) {
        for (r, &page) in list.iter().enumerate() {
            if let Some(w) = weight.get_mut(page as usize) {
                *w += q.frequency * table.at(r);
            }
        }
    }
    weight
}

/// What a repository's view weights ([`view_weights_with`]) are computed from, and so the key
/// under which the refreshers of one environment (a sweep's runs) share them in its
/// [`crate::cache::Cache`]: the version `held` of each of `pages` page ids (`None`: no copy),
/// which fixes the repository's copies within one corpus, the workload queries, the viewing
/// likelihood and the scoring. Runs that hold the same copies under the same workload read one
/// vector, computed once, the same bit for bit.
pub struct RepositoryViews<'a, H> {
    pub(crate) pages: usize,
    pub(crate) held: H,
    pub(crate) queries: &'a [MetricQuery],
    pub(crate) likelihood: &'a ViewingLikelihood,
    pub(crate) scoring: crate::index::ScoringKind,
}

/// Bytes of view-weight vectors the cache keeps: about 1,200 vectors of a 7,000-page site.
pub const SHARED_VIEW_WEIGHT_BYTES: usize = 64 << 20;

impl<H: Iterator<Item = Option<Unit>> + Clone> CacheKey for RepositoryViews<'_, H> {
    type Value = Vec<f64>;
    const STORE: &'static str = "view weights";
    const MAX_BYTES: usize = SHARED_VIEW_WEIGHT_BYTES;

    fn write_key(&self, bytes: &mut Vec<u8>) {
        bytes.extend_from_slice(&(self.pages as u64).to_le_bytes());
        write_held_units(bytes, self.held.clone());
        bytes.extend_from_slice(&(self.queries.len() as u64).to_le_bytes());
        for q in self.queries {
            bytes.extend_from_slice(&q.frequency.to_bits().to_le_bytes());
            bytes.extend_from_slice(&(q.terms.len() as u32).to_le_bytes());
            for t in &q.terms {
                bytes.extend_from_slice(&t.to_le_bytes());
            }
        }
        bytes.extend_from_slice(&self.likelihood.exponent.to_bits().to_le_bytes());
        bytes.extend_from_slice(format!("{:?}", self.scoring).as_bytes());
    }

    fn key_len(&self) -> usize {
        16 + 4 * self.pages + 16 * self.queries.len()
    }

    fn value_bytes(w: &Vec<f64>) -> usize {
        std::mem::size_of::<Vec<f64>>() + 8 * w.len()
    }
}

/// Riemann zeta for `s > 1`: the first terms summed, the tail by Euler–Maclaurin.
fn zeta(s: f64) -> f64 {
    const N: u32 = 64;
    let head: f64 = (1..N).map(|k| (k as f64).powf(-s)).sum();
    let n = N as f64;
    head + n.powf(1.0 - s) / (s - 1.0) + 0.5 * n.powf(-s) + s * n.powf(-s - 1.0) / 12.0
}

/// Maximum-likelihood exponent of a power law over click ranks `1..=max_rank`.
///
/// Logs that carry the rank of clicked results (AOL `ItemRank`) let the exponent be fitted
/// instead of assumed. Returns `None` with fewer than 10 ranks. The likelihood is maximised
/// over `a ∈ [1.01, 5]` by golden-section search (it is unimodal in `a`).
pub fn fit_exponent(click_ranks: &[u32], max_rank: u32) -> Option<f64> {
    let ranks: Vec<u32> = click_ranks
        .iter()
        .copied()
        .filter(|&r| r >= 1 && r <= max_rank)
        .collect();
    if ranks.len() < 10 {
        return None;
    }
    let n = ranks.len() as f64;
    let sum_ln: f64 = ranks.iter().map(|&r| (r as f64).ln()).sum();
    let neg_log_likelihood = |a: f64| {
        let norm: f64 = (1..=max_rank).map(|r| (r as f64).powf(-a)).sum();
        a * sum_ln + n * norm.ln()
    };
    let (mut lo, mut hi) = (1.01f64, 5.0f64);
    let phi = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..100 {
        let x1 = hi - phi * (hi - lo);
        let x2 = lo + phi * (hi - lo);
        if neg_log_likelihood(x1) < neg_log_likelihood(x2) {
            hi = x2;
        } else {
            lo = x1;
        }
    }
    Some((lo + hi) / 2.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn likelihoods_of_an_infinite_list_sum_to_one() {
        let i = ViewingLikelihood::default();
        let head: f64 = (1..=100_000).map(|r| i.at(r)).sum();
        let tail = i.sum(100_001, u64::MAX / 4);
        assert!((head + tail - 1.0).abs() < 1e-6, "{}", head + tail);
        assert!((zeta(1.5) - 2.612_375_348_685_488).abs() < 1e-9);
        assert!((zeta(2.0) - std::f64::consts::PI.powi(2) / 6.0).abs() < 1e-9);
    }

    /// The weights from kept rankings are those of a fresh ranking of every list, bit for
    /// bit, while the index changes under them.
    #[test]
    fn view_weights_from_kept_rankings_equal_a_fresh_ranking() {
        use crate::corpus::{LiveWeb, PageId};
        use crate::index::testutil::random_corpus;
        use crate::index::{forward_at, ScoringKind};
        let corpus = random_corpus(150, 8, 9);
        let likelihood = ViewingLikelihood::default();
        let queries: Vec<MetricQuery> = (0..12)
            .map(|i: u32| MetricQuery {
                terms: if i.is_multiple_of(3) {
                    vec![i]
                } else {
                    vec![i, i + 1]
                },
                frequency: 1.0 + f64::from(i),
            })
            .collect();
        let scorer = ScoringKind::Bm25.scorer();
        let mut forward = forward_at(&corpus, 0);
        let mut memory = RankMemory::default();
        let pages = corpus.page_count();
        for unit in 0..corpus.units() {
            let updates: Vec<_> = (0..pages as PageId)
                .map(|p| {
                    let copy = corpus
                        .page_at(p, unit)
                        .present()
                        .map(|v| crate::index::ForwardDoc::from_version(corpus.url(p), v));
                    (p, copy)
                })
                .collect();
            forward.set_copies(updates);
            let fresh: Vec<f64> = {
                let mut weight = vec![0.0; pages];
                for q in &queries {
                    for (r, hit) in forward.ranked(scorer.as_ref(), &q.terms).iter().enumerate() {
                        weight[hit.page as usize] += q.frequency * likelihood.at(r as u64 + 1);
                    }
                }
                weight
            };
            let kept = view_weights_with(
                &mut memory,
                &forward,
                scorer.as_ref(),
                pages,
                &queries,
                &likelihood,
            );
            let bits = |w: &[f64]| w.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&kept), bits(&fresh), "unit {unit}");
            assert!(kept.iter().any(|&w| w > 0.0), "unit {unit}: nothing shown");
        }
    }

    #[test]
    fn rank_zero_is_not_shown() {
        assert_eq!(ViewingLikelihood::default().at(0), 0.0);
    }

    #[test]
    fn closed_form_sum_is_close_to_the_exact_sum() {
        let i = ViewingLikelihood::default();
        for (a, b) in [(2u64, 500u64), (10, 10_000), (70, 1_000)] {
            let exact: f64 = (a..=b).map(|r| i.at(r)).sum();
            let approx = i.sum(a, b);
            assert!(
                ((approx - exact) / exact).abs() < 1e-3,
                "{a}..{b}: {approx} vs {exact}"
            );
        }
        // Paper 003 §5.1's closed form for a = 3/2.
        let closed = 2.0 * (1.0 / (99.5f64).sqrt() - 1.0 / (2000.5f64).sqrt());
        assert!((i.sum(100, 2000) / i.at(1) - closed).abs() < 1e-5);
        assert_eq!(i.sum(5, 4), 0.0);
    }

    #[test]
    fn fits_the_exponent_of_power_law_clicks() {
        // Clicks at ranks 1..10 in proportion to r^-1.5 (1,000 at rank 1).
        let mut ranks = Vec::new();
        for r in 1..=10u32 {
            let n = (1000.0 * (r as f64).powf(-1.5)).round() as usize;
            ranks.extend(std::iter::repeat_n(r, n));
        }
        let a = fit_exponent(&ranks, 10).unwrap();
        assert!((a - 1.5).abs() < 0.02, "{a}");
        assert_eq!(fit_exponent(&[1, 2], 10), None);
    }
}
