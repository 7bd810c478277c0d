//! TREC exports, so MAP@10 and nDCG@10 can be checked with standard tools (`trec_eval`,
//! pytrec_eval, ir_measures).
//!
//! * the run file: the repository's top 10 for every workload query at one unit,
//!   `qid Q0 docno rank score tag`;
//! * the qrels: the live Web's judgements at that unit, `qid 0 docno 1` for each page of the
//!   query's live top 10 (the relevance definition of [`super::exact`]);
//! * the evaluation: trec_eval's `-q` output of our own measures, `measure<TAB>qid<TAB>value`
//!   per judged query and for `all`, with trec_eval's names (`map_cut_10`, `ndcg_cut_10`,
//!   `P_10`).
//!
//! Query ids are the workload's query numbers (1-based); document ids are page URLs.
//!
//! trec_eval does not read the rank column: it re-sorts each query's results by score
//! (descending), breaking ties by document id in *descending* byte order, while our ranking
//! breaks ties by URL hash. It also keeps scores as C `float`s (pytrec_eval too: two scores
//! 1e-8 apart tie there). So the exported scores are made strictly decreasing *as `f32`* in
//! our rank order: a score equal to (or above) the one before it is written as the next `f32`
//! below that one. A tied score thus moves down by a few `f32` ulps (relative 1e-7 each), the
//! order is ours, and each value is printed exactly (as the `f64` of the `f32`), so a reader
//! parsing it as `float` or `double` gets the same order.
//!
//! `trec_eval -c -M 10 -m map_cut.10 -m ndcg_cut.10 -m P.10 qrels run` then reproduces
//! `map_at_10`, `ndcg_at_10` and `p_at_10` exactly: `-c` averages over every judged query,
//! including those the repository answers with nothing (0), as we do.

use std::fmt::Write;

use crate::corpus::LiveWeb;
use crate::index::{ForwardIndex, Scorer};

use crate::live_scores::LiveScores;

use super::exact::{retrieval_measures, LiveTruth, MetricQuery, TOP_K};

/// The run file of the repository's top 10 per query, scores strictly decreasing.
pub fn run_file(
    web: &dyn LiveWeb,
    repository: &ForwardIndex,
    scorer: &dyn Scorer,
    queries: &[MetricQuery],
    tag: &str,
) -> String {
    let mut out = String::new();
    for (i, q) in queries.iter().enumerate() {
        let mut previous = f32::INFINITY;
        for (rank, hit) in repository
            .ranked(scorer, &q.terms)
            .iter()
            .take(TOP_K)
            .enumerate()
        {
            let score = strictly_below(hit.score, previous);
            previous = score;
            let score = f64::from(score);
            let _ = writeln!(
                out,
                "{} Q0 {} {} {score} {tag}",
                i + 1,
                web.url(hit.page),
                rank + 1
            );
        }
    }
    out
}

/// `score`, or the largest `f32` below `previous` when `score` is not below it (or is NaN).
fn strictly_below(score: f32, previous: f32) -> f32 {
    if score < previous {
        score
    } else {
        previous.next_down()
    }
}

/// The qrels of the live Web: the live top 10 of every query is relevant.
pub fn qrels(web: &dyn LiveWeb, live: &LiveScores, queries: &[MetricQuery]) -> String {
    let mut out = String::new();
    for (i, q) in queries.iter().enumerate() {
        for hit in live.ranked(&q.terms).iter().take(TOP_K) {
            let _ = writeln!(out, "{} 0 {} 1", i + 1, web.url(hit.page));
        }
    }
    out
}

/// Our measures in trec_eval's `-q` layout (`measure<TAB>qid<TAB>value`, per judged query in
/// query order, then `all`), computed as [`super::exact::evaluate`] computes them.
pub fn evaluation(
    repository: &ForwardIndex,
    scorer: &dyn Scorer,
    queries: &[MetricQuery],
    truth: &LiveTruth,
    tag: &str,
) -> String {
    let mut out = String::new();
    let (mut sum_ap, mut sum_ndcg, mut sum_p, mut judged) = (0.0, 0.0, 0.0, 0usize);
    for (i, q) in queries.iter().enumerate() {
        let relevant = truth.relevant(i);
        if relevant.is_empty() {
            continue;
        }
        let top: Vec<_> = repository
            .ranked(scorer, &q.terms)
            .iter()
            .take(TOP_K)
            .map(|h| h.page)
            .collect();
        let m = retrieval_measures(&top, relevant);
        let qid = i + 1;
        let _ = writeln!(out, "map_cut_10\t{qid}\t{}", m.ap);
        let _ = writeln!(out, "ndcg_cut_10\t{qid}\t{}", m.ndcg);
        let _ = writeln!(out, "P_10\t{qid}\t{}", m.precision);
        sum_ap += m.ap;
        sum_ndcg += m.ndcg;
        sum_p += m.precision;
        judged += 1;
    }
    let mean = |sum: f64| {
        if judged == 0 {
            1.0
        } else {
            sum / judged as f64
        }
    };
    let _ = writeln!(out, "runid\tall\t{tag}");
    let _ = writeln!(out, "num_q\tall\t{judged}");
    let _ = writeln!(out, "map_cut_10\tall\t{}", mean(sum_ap));
    let _ = writeln!(out, "ndcg_cut_10\tall\t{}", mean(sum_ndcg));
    let _ = writeln!(out, "P_10\tall\t{}", mean(sum_p));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exported_scores_strictly_decrease_and_keep_distinct_values() {
        let two_below = 2.0f32.next_down();
        let scores = [3.5f32, 2.0, 2.0, two_below, 2.0, 1.0, 1.0, 0.0, 0.0];
        let mut previous = f32::INFINITY;
        let mut out = Vec::new();
        for s in scores {
            previous = strictly_below(s, previous);
            out.push(previous);
        }
        assert!(out.windows(2).all(|w| w[0] > w[1]), "{out:?}");
        assert_eq!((out[0], out[1], out[5], out[7]), (3.5, 2.0, 1.0, 0.0));
        assert_eq!(out[2], two_below);
        assert!(out[4] < 2.0 && 2.0 - out[4] < 1e-6);
        // Printed as f64 and read back as f32 or f64, the values keep their order exactly.
        for v in out {
            let text = f64::from(v).to_string();
            assert_eq!(text.parse::<f32>().unwrap().to_bits(), v.to_bits());
            assert_eq!(text.parse::<f64>().unwrap(), f64::from(v));
        }
    }
}
