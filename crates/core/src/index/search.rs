//! Serving queries from tantivy with deterministic rankings.

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::{DocAddress, DocId, Score, SegmentOrdinal, SegmentReader, Term};

use crate::corpus::PageId;

use super::schema::RepoSchema;

/// One result of a search.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub page: PageId,
    pub url: String,
    pub score: Score,
}

/// A page of results and the size of the full (conjunctive) match set.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchResults {
    pub total_hits: usize,
    pub hits: Vec<Hit>,
}

/// One hit of a shard's part of a search ([`Repository::search_terms_under`]): a [`Hit`] with
/// the URL hash that breaks score ties in [`rank_order`](super::forward::rank_order).
///
/// [`Repository::search_terms_under`]: super::Repository::search_terms_under
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ShardHit {
    pub(crate) page: PageId,
    pub(crate) url: String,
    pub(crate) url_hash: u64,
    pub(crate) score: Score,
}

/// A shard's part of a search: the size of its match set and its first hits in rank order.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ShardResults {
    pub(crate) total_hits: usize,
    pub(crate) hits: Vec<ShardHit>,
}

/// A match as collected from tantivy: the page, its tie-break hash, tantivy's score (0 when
/// scoring was disabled) and where its stored fields live.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Match {
    pub(crate) page: PageId,
    pub(crate) url_hash: u64,
    pub(crate) score: Score,
    pub(crate) address: DocAddress,
}

/// Collects *every* match with its page id and URL hash from the fast fields.
///
/// tantivy's `TopDocs` breaks score ties by `DocAddress`, which changes when segments merge;
/// collecting the whole match set and sorting it by a total order of our own
/// ([`rank_order`](super::forward::rank_order)) makes rankings independent of the index layout.
pub(crate) struct MatchCollector {
    pub(crate) scoring: bool,
}

pub(crate) struct MatchSegmentCollector {
    segment: SegmentOrdinal,
    page: tantivy::columnar::Column<u64>,
    url_hash: tantivy::columnar::Column<u64>,
    out: Vec<Match>,
}

impl Collector for MatchCollector {
    type Fruit = Vec<Match>;
    type Child = MatchSegmentCollector;

    fn for_segment(
        &self,
        segment: SegmentOrdinal,
        reader: &SegmentReader,
    ) -> tantivy::Result<MatchSegmentCollector> {
        Ok(MatchSegmentCollector {
            segment,
            page: reader.fast_fields().u64("page")?,
            url_hash: reader.fast_fields().u64("url_hash")?,
            out: Vec::new(),
        })
    }

    fn requires_scoring(&self) -> bool {
        self.scoring
    }

    fn merge_fruits(&self, fruits: Vec<Vec<Match>>) -> tantivy::Result<Vec<Match>> {
        Ok(fruits.into_iter().flatten().collect())
    }
}

impl SegmentCollector for MatchSegmentCollector {
    type Fruit = Vec<Match>;

    fn collect(&mut self, doc: DocId, score: Score) {
        self.out.push(Match {
            page: self.page.first(doc).unwrap_or(u64::MAX) as PageId,
            url_hash: self.url_hash.first(doc).unwrap_or(0),
            score,
            address: DocAddress::new(self.segment, doc),
        });
    }

    fn harvest(self) -> Vec<Match> {
        self.out
    }
}

/// The conjunctive query over `body`: one `TermQuery` per term, all `Must`.
pub(crate) fn conjunctive_query(fields: &RepoSchema, terms: &[&str]) -> Box<dyn Query> {
    let term_query = |t: &str| -> Box<dyn Query> {
        Box::new(TermQuery::new(
            Term::from_field_text(fields.body, t),
            IndexRecordOption::WithFreqs,
        ))
    };
    if terms.len() == 1 {
        return term_query(terms[0]);
    }
    Box::new(BooleanQuery::new(
        terms.iter().map(|t| (Occur::Must, term_query(t))).collect(),
    ))
}
