//! Repository quality, paper 003 Eq. 5 (`quality`, `absolute_quality`): what users see of the
//! repository's ranked lists, each result credited with its live page's score, against what an
//! engine synchronised with the live Web would show them.

use super::MetricCollector;
use super::QuerySum;
use super::QueryView;
use super::UnitMetrics;
use crate::corpus::PageId;
use crate::exact::live_truth::LiveTruth;
use crate::index::Score;
use crate::quality::viewing::LikelihoodTable;

/// One query's term of paper 003 Eq. 5's numerator, `f_q·Σ_r I(r)·S(W_t[p_r], q)`: each
/// result `p_r` of the repository's list `order` (best first: rank `r` is its index + 1)
/// credited with its live page's score `S(W_t[p_r], q)` (`live_score`) times the likelihood
/// `I(r)` that users view rank `r` (`table`), summed in rank order, then weighted by the
/// query's frequency `f_q` (`frequency`). The evaluation computes it as it ranks each list;
/// [`QualityCollector`] sums the terms.
pub(in crate::exact) fn query_credit(
    frequency: f64,
    order: &[PageId],
    table: &LikelihoodTable<'_>,
    live_score: impl Fn(PageId) -> Score,
) -> f64 {
    let viewed: f64 = order
        .iter()
        .enumerate()
        .map(|(r, &p)| table.at(r) * f64::from(live_score(p)))
        .sum();
    frequency * viewed
}

/// Sums every query's term of Eq. 5's numerator ([`query_credit`]); divides by the live
/// truth's denominator.
#[derive(Debug, Default)]
pub(in crate::exact) struct QualityCollector {
    numerator: QuerySum,
}

impl MetricCollector for QualityCollector {
    fn collect(&mut self, query: &QueryView<'_>) {
        self.numerator.push(query.credit);
    }

    fn finish(self: Box<Self>, truth: &LiveTruth, metrics: &mut UnitMetrics) {
        let absolute = self.numerator.total();
        metrics.absolute_quality = absolute;
        metrics.search.quality = repository_quality(absolute, truth.ideal);
    }
}

/// Repository quality, paper 003 Eq. (5): `Q = Σ_q f_q Σ_{p∈A(q,W_L)} I(R_L(p))·S(W_t[p],q) /
/// Σ_q f_q Σ_{p∈A(q,W_t)} I(R_t(p))·S(W_t[p],q)`, from its numerator `absolute` (the
/// repository's lists, each result credited with its live score) and its denominator `ideal`
/// ([`LiveTruth::ideal`]); 1 when the denominator is 0 (nothing matches live: nothing to lose).
fn repository_quality(absolute: f64, ideal: f64) -> f64 {
    if ideal > 0.0 {
        absolute / ideal
    } else {
        1.0
    }
}
