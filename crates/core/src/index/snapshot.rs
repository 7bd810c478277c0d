//! The live Web of a [`Corpus`] as repository updates: what fetching pages at a unit brings,
//! for bulk paths that need no fetcher (the initial crawl, a unit's full change batch, an index
//! built at a unit). [`crate::fetch::SnapshotFetcher`] fetches through these.

use std::path::Path;
use std::sync::Arc;

use crate::corpus::{Corpus, LiveWeb, PageId, Unit};

use super::{IndexError, PageUpdate, Repository, ScoringKind};

/// The repository update of fetching `page` at `unit` unconditionally: its present
/// version, or gone (also for a page not yet created). Borrowed from the corpus, for bulk
/// paths (the initial crawl, the oracle's every-change batches) that need no ownership.
pub fn update(corpus: &Corpus, page: PageId, unit: Unit) -> PageUpdate<'_> {
    PageUpdate {
        page,
        url: corpus.url(page),
        version: corpus.page_at(page, unit).present(),
    }
}

/// Every page present at `unit`, fetched: the initial crawl of a repository synchronised
/// with the live Web at `unit`.
pub fn crawl_at(corpus: &Corpus, unit: Unit) -> Vec<PageUpdate<'_>> {
    (0..corpus.page_count() as PageId)
        .map(|p| update(corpus, p, unit))
        .filter(|u| u.version.is_some())
        .collect()
}

/// The pages whose live state changes at `unit` (a new version, or gone), fetched at
/// `unit`: the full change batch of a unit. Paper 003 §6 measured every change this way;
/// tests and the overhead benchmark apply it.
pub fn changes_at(corpus: &Corpus, unit: Unit) -> Vec<PageUpdate<'_>> {
    (0..corpus.page_count() as PageId)
        .filter(|&p| corpus.timeline(p).versions.iter().any(|v| v.unit == unit))
        .map(|p| update(corpus, p, unit))
        .collect()
}

/// A repository (tantivy in `dir`, or in memory with `None`) holding the crawl at `unit`.
pub fn repository_at(
    corpus: &Corpus,
    unit: Unit,
    scoring: ScoringKind,
    dir: Option<&Path>,
) -> Result<Repository, IndexError> {
    let mut repo = Repository::open(dir, Arc::clone(&corpus.vocabulary), scoring)?;
    repo.apply_unmeasured(unit, &crawl_at(corpus, unit))?;
    Ok(repo)
}

/// A shard of [`repository_at`] (tantivy in `dir`, or in memory with `None`): the crawl at
/// `unit` of the pages `keep` accepts only (see [`super::shards`]).
pub fn shard_at(
    corpus: &Corpus,
    unit: Unit,
    scoring: ScoringKind,
    dir: Option<&Path>,
    keep: impl Fn(PageId) -> bool,
) -> Result<Repository, IndexError> {
    let mut repo = Repository::open(dir, Arc::clone(&corpus.vocabulary), scoring)?;
    let updates: Vec<_> = crawl_at(corpus, unit)
        .into_iter()
        .filter(|u| keep(u.page))
        .collect();
    repo.apply_unmeasured(unit, &updates)?;
    Ok(repo)
}
