//! [`SnapshotFetcher`]: the live Web replayed from captured timelines (WARC snapshots or the
//! generated site): a fetch of page `p` at unit `t` returns the capture the timeline shows at
//! `t`.

use std::path::Path;
use std::sync::Arc;

use crate::corpus::{Corpus, LiveWeb, PageId, PageState, Unit};
use crate::index::{snapshot, IndexError, PageUpdate, Repository, ScoringKind};
use crate::signal::{PublishedSignals, SignalReading};

use super::{FetchRequest, FetchResult, Fetched, Fetcher, Validator};

/// Fetches from a [`Corpus`]'s timelines. Deterministic; never fails. With
/// [`with_signals`](Self::with_signals) it also reads what the site's model publishes.
#[derive(Debug, Clone)]
pub struct SnapshotFetcher<'c> {
    corpus: &'c Corpus,
    signals: Option<Arc<PublishedSignals>>,
}

impl<'c> SnapshotFetcher<'c> {
    pub fn new(corpus: &'c Corpus) -> Self {
        SnapshotFetcher {
            corpus,
            signals: None,
        }
    }

    /// Reads `signals` (the corpus's sitemap and feed under a model) at every unit, as a
    /// crawler reading them would ([`PublishedSignals::reading_at`]).
    pub fn with_signals(mut self, signals: Option<Arc<PublishedSignals>>) -> Self {
        self.signals = signals;
        self
    }

    pub fn corpus(&self) -> &'c Corpus {
        self.corpus
    }

    /// The repository update of fetching `page` at `unit` unconditionally (see
    /// [`crate::index::snapshot::update`]).
    pub fn update(&self, page: PageId, unit: Unit) -> PageUpdate<'c> {
        snapshot::update(self.corpus, page, unit)
    }

    /// Every page present at `unit`, fetched (see [`crate::index::snapshot::crawl_at`]).
    pub fn crawl_at(&self, unit: Unit) -> Vec<PageUpdate<'c>> {
        snapshot::crawl_at(self.corpus, unit)
    }

    /// The full change batch of `unit` (see [`crate::index::snapshot::changes_at`]).
    pub fn changes_at(&self, unit: Unit) -> Vec<PageUpdate<'c>> {
        snapshot::changes_at(self.corpus, unit)
    }

    /// A repository holding the crawl at `unit` (see [`crate::index::snapshot::repository_at`]).
    pub fn repository_at(
        &self,
        unit: Unit,
        scoring: ScoringKind,
        dir: Option<&Path>,
    ) -> Result<Repository, IndexError> {
        snapshot::repository_at(self.corpus, unit, scoring, dir)
    }
}

impl Fetcher for SnapshotFetcher<'_> {
    fn page_count(&self) -> usize {
        self.corpus.page_count()
    }

    fn url(&self, page: PageId) -> &str {
        self.corpus.url(page)
    }

    fn fetch(&mut self, unit: Unit, requests: &[FetchRequest]) -> Vec<Fetched> {
        requests
            .iter()
            .map(|r| {
                let timeline = self.corpus.timeline(r.page);
                let result = match timeline.shared_at(unit) {
                    Some(v) if r.validator == Some(Validator::of(v)) => FetchResult::NotModified,
                    Some(v) => FetchResult::Copy(Arc::clone(v)),
                    None => FetchResult::Gone,
                };
                Fetched {
                    page: r.page,
                    result,
                }
            })
            .collect()
    }

    /// Pages present at `unit` and absent (gone or not yet created) at `unit - 1`.
    fn discover(&mut self, unit: Unit, known: &dyn Fn(PageId) -> bool) -> Vec<PageId> {
        (0..self.corpus.page_count() as PageId)
            .filter(|&p| {
                !known(p)
                    && matches!(self.corpus.page_at(p, unit), PageState::Present(_))
                    && self
                        .corpus
                        .page_at(p, unit.saturating_sub(1))
                        .present()
                        .is_none()
            })
            .collect()
    }

    fn signals(&mut self, unit: Unit) -> Option<SignalReading> {
        let signals = self.signals.as_ref()?;
        Some(SignalReading {
            events: signals.reading_at(unit),
            feed_channel: signals.has_feed(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::testutil::random_corpus;

    #[test]
    fn a_conditional_fetch_of_the_held_capture_is_not_modified() {
        let corpus = random_corpus(40, 6, 3);
        let mut fetcher = SnapshotFetcher::new(&corpus);
        for p in 0..corpus.page_count() as PageId {
            for unit in 0..corpus.units() {
                let live = corpus.timeline(p).shared_at(unit);
                let plain = fetcher.fetch(
                    unit,
                    &[FetchRequest {
                        page: p,
                        validator: None,
                    }],
                );
                match (&plain[0].result, live) {
                    (FetchResult::Copy(v), Some(l)) => assert!(Arc::ptr_eq(v, l)),
                    (FetchResult::Gone, None) => {}
                    (other, _) => panic!("page {p} unit {unit}: {other:?}"),
                }
                if let Some(l) = live {
                    let conditional = fetcher.fetch(
                        unit,
                        &[FetchRequest {
                            page: p,
                            validator: Some(Validator::of(l)),
                        }],
                    );
                    assert!(matches!(conditional[0].result, FetchResult::NotModified));
                }
            }
        }
    }

    #[test]
    fn discovery_reports_pages_that_appear_and_skips_known_ones() {
        let corpus = random_corpus(60, 8, 9);
        let mut fetcher = SnapshotFetcher::new(&corpus);
        let mut seen_any = false;
        for unit in 1..corpus.units() {
            let found = fetcher.discover(unit, &|_| false);
            for &p in &found {
                assert!(corpus.page_at(p, unit).present().is_some());
                assert!(corpus.page_at(p, unit - 1).present().is_none());
            }
            seen_any |= !found.is_empty();
            assert!(fetcher.discover(unit, &|_| true).is_empty());
        }
        assert!(seen_any, "the test corpus creates pages after unit 0");
    }
}
