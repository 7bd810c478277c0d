//! Pages split over shards, each its own repository, searched as one collection.
//!
//! A shard holds the copies of its pages only (its tantivy index and forward index), yet every
//! score must be the one a single repository of all pages gives: BM25 and TF-IDF read the
//! collection's document count, token count and per-term document frequency, in-link scoring
//! the number of copies linking to a page, wherever those copies live. The protocol, in order:
//!
//! 1. **Partition** ([`Partition::by_host`]): a page belongs to shard `xxh3(host) mod shards`
//!    (a stable hash, the same in every process and every run; never a per-process-seeded
//!    hasher). By host because politeness needs one owner per host; the skew is reported.
//! 2. **Publish**: each shard takes its [`ShardStatistics`] (integers) and sends them to every
//!    other shard.
//! 3. **Sum**: every shard sums all of them into [`GlobalStatistics`], which answers
//!    [`CollectionStats`] for the union. Integer sums do not depend on the order they are
//!    added in, so every shard holds the same statistics whatever the partition, and equal to
//!    one repository's.
//! 4. **Score and merge**: each shard scores its matches under the global statistics
//!    ([`Repository::search_terms_under`](super::Repository::search_terms_under),
//!    [`ForwardIndex::ranked_under`]); the parts merge in [`rank_order`], a total order (score,
//!    URL hash, page id), so the merged list is the one-repository list whatever the shards.
//!
//! Statistics must be re-published whenever a shard's copies change (a refresh): scores read
//! between a change and the next publication would use the old union's statistics.

use serde::{Deserialize, Serialize};

use crate::corpus::ingest::host_of;
use crate::corpus::{Corpus, LiveWeb, PageId};
use crate::text::TermId;

use super::forward::{rank_order, ForwardIndex, Ranked};
use super::scorer::Score;
use super::search::{Hit, SearchResults, ShardResults};
use super::stats::CollectionStats;

/// The shard of `host` among `shards`: XXH3 of the host name, modulo `shards`.
pub fn shard_of_host(host: &str, shards: usize) -> usize {
    (xxhash_rust::xxh3::xxh3_64(host.as_bytes()) % shards.max(1) as u64) as usize
}

/// Which shard owns each page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    shards: usize,
    /// Indexed by page id.
    shard_of: Vec<u32>,
}

impl Partition {
    /// Every page of `corpus` to the shard of its host ([`shard_of_host`]).
    pub fn by_host(corpus: &Corpus, shards: usize) -> Self {
        let shards = shards.max(1);
        let mut memo: std::collections::HashMap<String, u32> = Default::default();
        let shard_of = (0..corpus.page_count() as PageId)
            .map(|p| {
                let host = host_of(corpus.url(p));
                *memo
                    .entry(host)
                    .or_insert_with_key(|h| shard_of_host(h, shards) as u32)
            })
            .collect();
        Partition { shards, shard_of }
    }

    /// Number of shards.
    pub fn shards(&self) -> usize {
        self.shards
    }

    /// The shard owning `page`.
    pub fn shard_of(&self, page: PageId) -> usize {
        self.shard_of[page as usize] as usize
    }

    /// Pages owned by each shard, in shard order.
    pub fn pages_per_shard(&self) -> Vec<usize> {
        let mut counts = vec![0; self.shards];
        for &s in &self.shard_of {
            counts[s as usize] += 1;
        }
        counts
    }

    /// The largest shard's pages over the mean shard's (1 is perfect balance); 1 for no pages.
    pub fn skew(&self) -> f64 {
        let counts = self.pages_per_shard();
        let total: usize = counts.iter().sum();
        if total == 0 {
            return 1.0;
        }
        let max = counts.iter().copied().max().unwrap_or(0);
        max as f64 * self.shards as f64 / total as f64
    }
}

/// What one shard's copies contribute to the collection statistics (step 2 of the protocol).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ShardStatistics {
    pub(crate) num_docs: u64,
    pub(crate) total_tokens: u64,
    /// `(term, documents of this shard containing it)`, ascending by term, none zero.
    pub(crate) doc_freqs: Vec<(TermId, u64)>,
    /// `(page, copies of this shard linking to it)`, ascending by page, none zero; the page
    /// may belong to any shard.
    pub(crate) inlinks: Vec<(PageId, u32)>,
}

impl ShardStatistics {
    /// The statistics of the copies `forward` holds.
    pub fn of(forward: &ForwardIndex) -> Self {
        ShardStatistics {
            num_docs: forward.num_docs(),
            total_tokens: forward.total_tokens(),
            doc_freqs: forward.doc_freqs().collect(),
            inlinks: forward.inlink_counts().collect(),
        }
    }
}

/// The statistics of the union of every shard's copies (step 3 of the protocol).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GlobalStatistics {
    num_docs: u64,
    total_tokens: u64,
    /// Indexed by term id.
    doc_freq: Vec<u64>,
    /// Indexed by page id.
    inlinks: Vec<u32>,
}

impl GlobalStatistics {
    /// The sum of every shard's statistics (integers: the same in any order).
    pub fn sum(parts: &[ShardStatistics]) -> Self {
        let mut global = GlobalStatistics::default();
        for part in parts {
            global.num_docs += part.num_docs;
            global.total_tokens += part.total_tokens;
            for &(term, df) in &part.doc_freqs {
                let i = term as usize;
                if i >= global.doc_freq.len() {
                    global.doc_freq.resize(i + 1, 0);
                }
                global.doc_freq[i] += df;
            }
            for &(page, n) in &part.inlinks {
                let i = page as usize;
                if i >= global.inlinks.len() {
                    global.inlinks.resize(i + 1, 0);
                }
                global.inlinks[i] += n;
            }
        }
        global
    }
}

impl CollectionStats for GlobalStatistics {
    fn num_docs(&self) -> u64 {
        self.num_docs
    }
    fn total_tokens(&self) -> u64 {
        self.total_tokens
    }
    fn doc_freq(&self, term: TermId) -> u64 {
        self.doc_freq.get(term as usize).copied().unwrap_or(0)
    }
    fn inlinks(&self, page: PageId) -> u32 {
        self.inlinks.get(page as usize).copied().unwrap_or(0)
    }
}

/// The hits `offset..offset + limit` of the collection from each shard's first
/// `offset + limit` hits (step 4): the global slice lies within the union of the shards'
/// prefixes, and [`rank_order`] orders it as one repository does.
pub fn merge_hits(parts: Vec<ShardResults>, offset: usize, limit: usize) -> SearchResults {
    let total_hits = parts.iter().map(|p| p.total_hits).sum();
    let mut hits: Vec<_> = parts.into_iter().flat_map(|p| p.hits).collect();
    hits.sort_by(|a, b| rank_order((a.score, a.url_hash, a.page), (b.score, b.url_hash, b.page)));
    SearchResults {
        total_hits,
        hits: hits
            .into_iter()
            .skip(offset)
            .take(limit)
            .map(|h| Hit {
                page: h.page,
                url: h.url,
                score: h.score,
            })
            .collect(),
    }
}

/// One full result list from each shard's part ([`ForwardIndex::ranked_under`]), merged in
/// [`rank_order`] (step 4).
pub fn merge_ranked(parts: Vec<Vec<(Score, u64, PageId)>>) -> Vec<Ranked> {
    let mut all: Vec<_> = parts.into_iter().flatten().collect();
    all.sort_unstable_by(|a, b| rank_order(*a, *b));
    all.into_iter()
        .map(|(score, _, page)| Ranked { page, score })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::snapshot::{repository_at, shard_at};
    use crate::index::testutil::random_corpus_on_hosts;
    use crate::index::ScoringKind;

    /// Term lists to search: every single term of a few pages, and pairs of them.
    fn queries(corpus: &Corpus) -> Vec<Vec<TermId>> {
        let mut out = Vec::new();
        for p in (0..corpus.page_count() as PageId).step_by(37) {
            if let Some(v) = corpus.page_at(p, 0).present() {
                let terms: Vec<TermId> = v.terms.counts.iter().map(|&(t, _)| t).collect();
                for w in terms.windows(2).take(3) {
                    out.push(vec![w[0]]);
                    out.push(w.to_vec());
                }
            }
        }
        out
    }

    #[test]
    fn shards_scoring_under_summed_statistics_rank_as_one_repository() {
        let corpus = random_corpus_on_hosts(400, 4, 5, 7);
        let queries = queries(&corpus);
        assert!(queries.len() > 20);
        for scoring in [ScoringKind::Bm25, ScoringKind::TfIdf, ScoringKind::InLinks] {
            let one = repository_at(&corpus, 2, scoring, None).unwrap();
            for shards in 1..=4 {
                let partition = Partition::by_host(&corpus, shards);
                let parts: Vec<_> = (0..shards)
                    .map(|s| {
                        shard_at(&corpus, 2, scoring, None, |p| partition.shard_of(p) == s).unwrap()
                    })
                    .collect();
                let global = GlobalStatistics::sum(
                    &parts
                        .iter()
                        .map(|r| ShardStatistics::of(r.forward()))
                        .collect::<Vec<_>>(),
                );
                assert_eq!(global.num_docs(), one.forward().num_docs());
                for terms in &queries {
                    let merged = merge_ranked(
                        parts
                            .iter()
                            .map(|r| r.forward().ranked_under(&global, r.scorer(), terms))
                            .collect(),
                    );
                    let expected = one.ranked(terms);
                    assert_eq!(merged.len(), expected.len());
                    for (m, e) in merged.iter().zip(&expected) {
                        assert_eq!((m.page, m.score.to_bits()), (e.page, e.score.to_bits()));
                    }
                    for (offset, limit) in [(0, 10), (3, 5), (0, 1000)] {
                        let want = one.search_terms(terms, offset, limit).unwrap();
                        let got = merge_hits(
                            parts
                                .iter()
                                .map(|r| r.search_terms_under(&global, terms, offset + limit))
                                .collect::<Result<_, _>>()
                                .unwrap(),
                            offset,
                            limit,
                        );
                        assert_eq!(got, want, "{scoring} with {shards} shards, {terms:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_partition_by_host_keeps_each_host_on_one_shard_and_reports_its_skew() {
        let corpus = random_corpus_on_hosts(300, 6, 3, 1);
        let partition = Partition::by_host(&corpus, 4);
        let mut owner: std::collections::HashMap<String, usize> = Default::default();
        for p in 0..corpus.page_count() as PageId {
            let s = *owner
                .entry(host_of(corpus.url(p)))
                .or_insert(partition.shard_of(p));
            assert_eq!(s, partition.shard_of(p));
        }
        assert_eq!(partition.pages_per_shard().iter().sum::<usize>(), 300);
        assert!(partition.skew() >= 1.0);
        assert_eq!(Partition::by_host(&corpus, 1).skew(), 1.0);
        // Stable across runs and processes: a fixed hash, not a seeded one.
        assert_eq!(
            shard_of_host("site1.example", 7),
            shard_of_host("site1.example", 7)
        );
        assert_eq!(
            shard_of_host("example.org", 1 << 20),
            (xxhash_rust::xxh3::xxh3_64(b"example.org") % (1 << 20)) as usize
        );
    }
}
