//! TREC exports, so MAP@10 and NDCG can be checked with standard tools (`trec_eval`).
//!
//! * the run file: the repository's top 10 for every workload query at one unit,
//!   `qid Q0 docno rank score tag`;
//! * the qrels: the live Web's judgements at that unit, `qid 0 docno 1` for each page of the
//!   query's live top 10 (the relevance definition of [`super::exact`]).
//!
//! Query ids are the workload's query numbers (1-based); document ids are page URLs.
//! `trec_eval -c -M 10 -m map qrels run` then reproduces our MAP@10: `-c` averages over every
//! judged query, including those the repository answers with nothing (AP 0), as we do.

use std::fmt::Write;

use crate::corpus::LiveWeb;
use crate::index::{ForwardIndex, LiveScores, Scorer};

use super::exact::{MetricQuery, TOP_K};

/// The run file of the repository's top 10 per query.
pub fn run_file(
    web: &dyn LiveWeb,
    repository: &ForwardIndex,
    scorer: &dyn Scorer,
    queries: &[MetricQuery],
    tag: &str,
) -> String {
    let mut out = String::new();
    for (i, q) in queries.iter().enumerate() {
        for (rank, hit) in repository
            .ranked(scorer, &q.terms)
            .iter()
            .take(TOP_K)
            .enumerate()
        {
            let _ = writeln!(
                out,
                "{} Q0 {} {} {} {tag}",
                i + 1,
                web.url(hit.page),
                rank + 1,
                hit.score
            );
        }
    }
    out
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
