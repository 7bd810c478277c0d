//! Paper 001's measures of a refresh schedule, as the authors' code computes them: ChangeRate
//! and the gp4c variant of NDCG@k; and paper 002's weighted ChangeRatio. Shared by the simulator's judge (`refresher::sim::run`) and the
//! GP4C crawl simulation ([`crate::learn::gp4c`]).
//!
//! They sit beside the project's older schedule measures: `change_ratio` divides by the pages
//! actually refreshed (paper 002's ChangeRatio), ChangeRate by the budget `k`; `schedule_ndcg`
//! discounts with Järvelin–Kekäläinen's `log_e` form and scores 1 when nothing is stale, the gp4c
//! NDCG discounts `1, 1/ln 3, 1/ln 4, …` and scores 0 then.

/// ChangeRate of one cycle, paper 001 Eq. (1): `C_i = D_i^c / D_i`, the pages downloaded in the
/// cycle that had changed since their previous download over the pages downloaded, with
/// `D_i = k` fixed (the budget; `crawl_simulation.cc` divides by `k`). 0 when `k = 0`.
pub fn change_rate(changed: usize, k: usize) -> f64 {
    if k == 0 {
        0.0
    } else {
        changed as f64 / k as f64
    }
}

/// Weighted ChangeRatio of one cycle, paper 002 Eq. (10)–(11) (Cho & Ntoulas' measure, which
/// paper 000 §6.1 also reports): `C_i^w = Σ_{p∈D_i} w_p·I_1(p) / |D_i|`, `I_1(p) = 1` iff the
/// downloaded page `p` had changed; `refreshed` holds `(changed, w_p)` per page downloaded, in
/// fetch order. With weights of mean 1 (the judge scales view weights and PageRank so),
/// `C^w = C` when all weights are equal. 0 when nothing was downloaded.
pub fn weighted_change_ratio(refreshed: impl ExactSizeIterator<Item = (bool, f64)>) -> f64 {
    let n = refreshed.len();
    if n == 0 {
        return 0.0;
    }
    let mut sum = 0.0;
    for (changed, weight) in refreshed {
        if changed {
            sum += weight;
        }
    }
    sum / n as f64
}

/// NDCG@k of a schedule, paper 001 Eq. (2)–(3) as the authors' code computes it
/// (`crawl_simulation.cc`): `relevance[i]` says whether the page at position `i + 1` had changed
/// since its last visit; `DCG@k = rel_1 + Σ_{i=2}^{k} rel_i / ln(i + 1)` (the printed Eq. 2
/// divides by `ln 1 = 0` at `i = 1`); `IDCG@k` is the same sum over `min(k, relevant)` relevant
/// pages, `relevant` being every page changed since its last visit; 0 when `IDCG = 0`.
pub fn gp4c_ndcg(relevance: &[bool], relevant: usize, k: usize) -> f64 {
    let discount = |position: usize| {
        if position == 1 {
            1.0
        } else {
            1.0 / ((position + 1) as f64).ln()
        }
    };
    let ideal: f64 = (1..=relevant.min(k)).map(discount).sum();
    if ideal == 0.0 {
        return 0.0;
    }
    let dcg: f64 = relevance
        .iter()
        .take(k)
        .enumerate()
        .filter(|(_, &r)| r)
        .map(|(i, _)| discount(i + 1))
        .sum();
    dcg / ideal
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn change_rate_divides_by_the_budget() {
        assert_eq!(change_rate(3, 4), 0.75);
        assert_eq!(change_rate(0, 0), 0.0);
        // Fewer pages refreshed than the budget still count against it.
        assert_eq!(change_rate(2, 8), 0.25);
    }

    #[test]
    fn weighted_change_ratio_by_hand() {
        // Weights 2, 0.5, 1.5 (mean 4/3); pages 1 and 3 changed: (2 + 1.5) / 3.
        let got = weighted_change_ratio([(true, 2.0), (false, 0.5), (true, 1.5)].into_iter());
        assert!((got - 3.5 / 3.0).abs() < 1e-12, "{got}");
        // Equal weights 1: the plain ChangeRatio.
        let plain = weighted_change_ratio([(true, 1.0), (false, 1.0)].into_iter());
        assert_eq!(plain, 0.5);
        assert_eq!(weighted_change_ratio(std::iter::empty()), 0.0);
    }

    #[test]
    fn gp4c_ndcg_by_hand() {
        // Relevant at positions 2 and 3 of 3; 4 stale pages in all, k = 3.
        let dcg = 1.0 / 3f64.ln() + 1.0 / 4f64.ln();
        let ideal = 1.0 + 1.0 / 3f64.ln() + 1.0 / 4f64.ln();
        let got = gp4c_ndcg(&[false, true, true], 4, 3);
        assert!((got - dcg / ideal).abs() < 1e-12, "{got}");
        assert_eq!(gp4c_ndcg(&[true, true], 2, 2), 1.0);
        // Nothing stale: 0 (the project's schedule NDCG says 1).
        assert_eq!(gp4c_ndcg(&[false, false], 0, 2), 0.0);
        // Positions past k do not count.
        assert_eq!(gp4c_ndcg(&[false, true], 1, 1), 0.0);
    }
}
