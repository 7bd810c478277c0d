//! [`PublishedSignals`]: a [`SignalSettings`] model applied to a site's true history — what its
//! sitemap and feed show at each unit. `web-replay` serves it; the simulator's fetcher reads it
//! as a crawler reading those files every unit would ([`PublishedSignals::reading_at`]).

use std::collections::HashMap;
use std::sync::Arc;

use crate::cache::{Cache, CacheKey};

use crate::corpus::{Corpus, LiveWeb, PageId, Unit};

use super::{keyed_uniform, SignalEvent, SignalKind, SignalSettings};

/// Salts of the keyed draws, one per question asked of a page.
const COVERAGE: u64 = 1;
const DATE_MOVES: u64 = 2;
const FEED_ORDER: u64 = 3;

/// One page as its channels publish it.
#[derive(Debug, Clone, Default)]
struct PublishedPage {
    /// `(first unit, present)` of each version, in order.
    versions: Vec<(Unit, bool)>,
    /// Its sitemap entry carries a `<lastmod>`.
    covered: bool,
    /// Units (≥ 1) at which its `<lastmod>` moved (not build-stamped).
    date_moves: Vec<Unit>,
}

impl PublishedPage {
    /// A page with `timeline`'s versions and no signal drawn yet.
    fn of_timeline(timeline: &crate::corpus::PageTimeline) -> Self {
        PublishedPage {
            versions: timeline
                .versions
                .iter()
                .map(|v| (v.unit, v.is_present()))
                .collect(),
            ..PublishedPage::default()
        }
    }

    fn present_at(&self, unit: Unit) -> bool {
        let after = self.versions.partition_point(|v| v.0 <= unit);
        after > 0 && self.versions[after - 1].1
    }

    /// Units (≥ 1) at which the page changed: a new version, unless it stays absent.
    fn change_units(&self) -> impl Iterator<Item = Unit> + '_ {
        self.versions
            .windows(2)
            .filter(|w| w[0].1 || w[1].1)
            .map(|w| w[1].0)
            .filter(|&u| u >= 1)
    }

    /// The first unit of the presence span that holds `unit`.
    fn present_since(&self, unit: Unit) -> Unit {
        let after = self.versions.partition_point(|v| v.0 <= unit);
        let mut since = self.versions[after - 1].0;
        for v in self.versions[..after].iter().rev() {
            if !v.1 {
                break;
            }
            since = v.0;
        }
        since
    }
}

/// Everything [`PublishedSignals`] are computed from, and so the key under which the runs of
/// one environment share them in its [`Cache`] (the corpus is the environment's own).
pub struct PublishedInputs<'a> {
    pub corpus: &'a Corpus,
    pub settings: &'a SignalSettings,
    pub seed: u64,
}

impl CacheKey for PublishedInputs<'_> {
    type Value = PublishedSignals;
    const STORE: &'static str = "published signals";
    const MAX_BYTES: usize = 256 << 20;

    fn write_key(&self, bytes: &mut Vec<u8>) {
        bytes.extend_from_slice(&self.seed.to_le_bytes());
        for label in self.settings.labels() {
            bytes.extend_from_slice(label.as_bytes());
            bytes.push(0);
        }
    }

    fn value_bytes(s: &PublishedSignals) -> usize {
        s.pages
            .iter()
            .map(|p| 48 + 8 * p.versions.len() + 4 * p.date_moves.len())
            .sum::<usize>()
            + s.feed_by_unit
                .iter()
                .map(|u| 24 + 4 * u.len())
                .sum::<usize>()
    }
}

impl PublishedSignals {
    /// The signals of `inputs`, from `cache` when a run of the same environment computed them.
    pub fn shared(cache: &Cache, inputs: &PublishedInputs<'_>) -> Arc<PublishedSignals> {
        cache
            .get_or_compute(inputs, || {
                PublishedSignals::of_corpus(inputs.corpus, inputs.settings, inputs.seed)
            })
            .0
    }
}

/// What a site's channels publish, unit by unit (see the module docs of [`super`]).
#[derive(Debug, Clone)]
pub struct PublishedSignals {
    settings: SignalSettings,
    pages: Vec<PublishedPage>,
    /// Per unit `u`: the changes of `u` a feed shows (the newest `N` per host), newest first.
    feed_by_unit: Vec<Vec<PageId>>,
}

impl PublishedSignals {
    /// `settings` applied to `corpus`'s timelines with `seed`.
    pub fn of_corpus(corpus: &Corpus, settings: &SignalSettings, seed: u64) -> Self {
        let units = corpus.units();
        let lastmod = settings.lastmod().copied();
        let pages: Vec<PublishedPage> = (0..corpus.page_count() as PageId)
            .map(|p| {
                let mut page = PublishedPage::of_timeline(corpus.timeline(p));
                if let Some(m) = lastmod.filter(|m| !m.build_stamped) {
                    page.covered = keyed_uniform(seed, p, 0, COVERAGE) < m.coverage;
                    let moves = |u: Unit, changed: bool| {
                        let draw = keyed_uniform(seed, p, u, DATE_MOVES);
                        if changed {
                            draw < m.recall
                        } else {
                            draw < m.false_positive
                        }
                    };
                    let changes: Vec<Unit> = page.change_units().collect();
                    page.date_moves = if m.false_positive > 0.0 {
                        (1..units)
                            .filter(|&u| page.present_at(u))
                            .filter(|&u| moves(u, changes.binary_search(&u).is_ok()))
                            .collect()
                    } else {
                        changes
                            .into_iter()
                            .filter(|&u| page.present_at(u) && moves(u, true))
                            .collect()
                    };
                } else if let Some(m) = lastmod {
                    page.covered = keyed_uniform(seed, p, 0, COVERAGE) < m.coverage;
                }
                page
            })
            .collect();
        let feed_by_unit = match settings.feed() {
            Some(feed) => feed_items(corpus, &pages, units, feed.items, seed),
            None => Vec::new(),
        };
        PublishedSignals {
            settings: settings.clone(),
            pages,
            feed_by_unit,
        }
    }

    pub fn settings(&self) -> &SignalSettings {
        &self.settings
    }

    /// The `<lastmod>` (as a unit) the sitemap shows for `page` at `unit`: `None` when its entry
    /// carries none, or it was not present as of the sitemap's delay.
    pub fn lastmod_at(&self, page: PageId, unit: Unit) -> Option<Unit> {
        let m = self.settings.lastmod()?;
        let p = self.pages.get(page as usize)?;
        if !p.covered {
            return None;
        }
        let shown = unit.saturating_sub(m.delay);
        if !p.present_at(shown) {
            return None;
        }
        if m.build_stamped {
            return Some(shown);
        }
        let since = p.present_since(shown);
        let moved = p.date_moves.partition_point(|&u| u <= shown);
        Some(match moved {
            0 => since,
            k => p.date_moves[k - 1].max(since),
        })
    }

    /// The feed's items at `unit` (what a reader fetching it then sees), newest first:
    /// `(page, unit of the change)`, at most the feed's length per host.
    pub fn feed_at(&self, unit: Unit) -> Vec<(PageId, Unit)> {
        self.feed_of_host(unit, |_| true)
    }

    /// The items of one host's feed at `unit` (what `web-replay` serves as that host's
    /// `/feed.atom` and `/feed.rss`), newest first: the newest changes of the pages `on_host` accepts, whole
    /// units at a time up to the feed's length, as [`Self::feed_at`] does for a one-host site.
    /// Every item of unit `unit − delay` is among them (a unit shows at most `N` per host).
    pub fn feed_of_host(
        &self,
        unit: Unit,
        on_host: impl Fn(PageId) -> bool,
    ) -> Vec<(PageId, Unit)> {
        let Some(feed) = self.settings.feed() else {
            return Vec::new();
        };
        let newest = unit
            .saturating_sub(feed.delay)
            .min(self.feed_by_unit.len().saturating_sub(1) as Unit);
        let mut items = Vec::new();
        for u in (1..=newest).rev() {
            items.extend(
                self.feed_by_unit[u as usize]
                    .iter()
                    .filter(|&&p| on_host(p))
                    .map(|&p| (p, u)),
            );
            if items.len() >= feed.items {
                break;
            }
        }
        items
    }

    /// What a crawler that read the sitemap and the feed at every unit before `unit` learns by
    /// reading them at `unit` (at unit 1, its first read, every dated entry): each page whose
    /// date differs from the last read, each page whose dated entry is gone from the sitemap
    /// (dated `unit − delay`: a deletion is a change, and keeping the old date would tell the
    /// policy the deleted page's copy is current), and the feed items of unit `unit − delay`.
    pub fn reading_at(&self, unit: Unit) -> Vec<SignalEvent> {
        let mut events = Vec::new();
        if let Some(lastmod) = self.settings.lastmod() {
            // Where the sitemap stands at this reading: its entries as of `unit − delay`.
            let shown = unit.saturating_sub(lastmod.delay);
            for p in 0..self.pages.len() as PageId {
                let now = self.lastmod_at(p, unit);
                let before = if unit <= 1 {
                    None
                } else {
                    self.lastmod_at(p, unit - 1)
                };
                let date = match (now, before) {
                    (Some(date), _) if now != before => Some(date),
                    // The dated entry left the sitemap (the page was deleted): a change as of
                    // the sitemap's unit (a crawler, which cannot know the delay, dates it at
                    // its reading: the same when the site has none).
                    (None, Some(_)) => Some(shown),
                    _ => None,
                };
                if let Some(date) = date {
                    events.push(SignalEvent {
                        page: p,
                        kind: SignalKind::Lastmod(date),
                    });
                }
            }
        }
        if let Some(feed) = self.settings.feed() {
            let u = unit.saturating_sub(feed.delay);
            if u >= 1 {
                if let Some(items) = self.feed_by_unit.get(u as usize) {
                    events.extend(items.iter().map(|&p| SignalEvent {
                        page: p,
                        kind: SignalKind::FeedItem(u),
                    }));
                }
            }
        }
        events
    }

    /// Whether a feed is published.
    pub(crate) fn has_feed(&self) -> bool {
        self.settings.feed().is_some()
    }
}

/// Per unit, the changes a feed of `items` per host shows: the newest `items` of each host's
/// changes in that unit, in the seeded within-unit order (newest first).
fn feed_items(
    corpus: &Corpus,
    pages: &[PublishedPage],
    units: Unit,
    items: usize,
    seed: u64,
) -> Vec<Vec<PageId>> {
    let mut by_unit: Vec<HashMap<String, Vec<(f64, PageId)>>> =
        vec![HashMap::new(); units.max(1) as usize];
    for (p, page) in pages.iter().enumerate() {
        let host = crate::corpus::ingest::host_of(corpus.url(p as PageId));
        for u in page.change_units() {
            if let Some(hosts) = by_unit.get_mut(u as usize) {
                let order = keyed_uniform(seed, p as PageId, u, FEED_ORDER);
                hosts
                    .entry(host.clone())
                    .or_default()
                    .push((order, p as PageId));
            }
        }
    }
    by_unit
        .into_iter()
        .map(|hosts| {
            let mut hosts: Vec<(String, Vec<(f64, PageId)>)> = hosts.into_iter().collect();
            hosts.sort_by(|a, b| a.0.cmp(&b.0));
            let mut shown = Vec::new();
            for (_, mut changes) in hosts {
                changes.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                shown.extend(changes.into_iter().take(items).map(|(_, p)| p));
            }
            shown
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::testutil::random_corpus;

    fn site() -> Corpus {
        random_corpus(300, 10, 11)
    }

    fn settings(spec: &[&str]) -> SignalSettings {
        SignalSettings::parse(spec).unwrap()
    }

    fn changes(corpus: &Corpus, p: PageId) -> Vec<Unit> {
        PublishedPage::of_timeline(corpus.timeline(p))
            .change_units()
            .collect()
    }

    #[test]
    fn accurate_lastmod_is_the_last_change_up_to_the_delay() {
        let corpus = site();
        let s = PublishedSignals::of_corpus(&corpus, &settings(&["lastmod:delay=2"]), 5);
        let mut checked = 0;
        for p in 0..corpus.page_count() as PageId {
            let ch = changes(&corpus, p);
            for t in 0..corpus.units() {
                let shown = t.saturating_sub(2);
                let Some(date) = s.lastmod_at(p, t) else {
                    assert!(corpus.timeline(p).at(shown).present().is_none());
                    continue;
                };
                // Never a change the sitemap could not show yet.
                assert!(date <= shown);
                let last_change = ch.iter().copied().filter(|&u| u <= shown).max();
                if let Some(u) = last_change {
                    assert_eq!(date, u);
                    checked += 1;
                }
            }
        }
        assert!(checked > 100, "{checked}");
    }

    #[test]
    fn recall_coverage_and_false_positives_are_drawn_at_their_rates() {
        let corpus = site();
        let s = PublishedSignals::of_corpus(
            &corpus,
            &settings(&["lastmod:coverage=0.5,recall=0.8,false-positive=0.1"]),
            5,
        );
        let covered = s.pages.iter().filter(|p| p.covered).count() as f64;
        assert!((covered / 300.0 - 0.5).abs() < 0.1, "{covered}");
        let (mut hits, mut changes, mut fps, mut quiet) = (0.0, 0.0, 0.0, 0.0);
        for (p, page) in s.pages.iter().enumerate() {
            let ch = changes_of(&corpus, p as PageId);
            for u in 1..corpus.units() {
                if !page.present_at(u) {
                    continue;
                }
                let moved = page.date_moves.contains(&u);
                if ch.contains(&u) {
                    changes += 1.0;
                    hits += moved as u8 as f64;
                } else {
                    quiet += 1.0;
                    fps += moved as u8 as f64;
                }
            }
        }
        assert!((hits / changes - 0.8).abs() < 0.05, "{}", hits / changes);
        assert!((fps / quiet - 0.1).abs() < 0.03, "{}", fps / quiet);
        // The same seed draws the same signals; another seed others.
        let again = PublishedSignals::of_corpus(&corpus, s.settings(), 5);
        let other = PublishedSignals::of_corpus(&corpus, s.settings(), 6);
        let moves = |x: &PublishedSignals| -> Vec<Vec<Unit>> {
            x.pages.iter().map(|p| p.date_moves.clone()).collect()
        };
        assert_eq!(moves(&s), moves(&again));
        assert_ne!(moves(&s), moves(&other));
    }

    fn changes_of(corpus: &Corpus, p: PageId) -> Vec<Unit> {
        changes(corpus, p)
    }

    #[test]
    fn a_build_stamped_sitemap_dates_every_page_now() {
        let corpus = site();
        let s = PublishedSignals::of_corpus(&corpus, &settings(&["lastmod:build-stamped"]), 5);
        for p in 0..corpus.page_count() as PageId {
            if corpus.timeline(p).at(4).present().is_some() {
                assert_eq!(s.lastmod_at(p, 4), Some(4));
            }
        }
    }

    #[test]
    fn a_feed_keeps_the_newest_items_and_loses_the_rest() {
        let corpus = site();
        let s = PublishedSignals::of_corpus(&corpus, &settings(&["feed:items=5"]), 5);
        let total: usize = (1..corpus.units())
            .map(|u| {
                (0..300)
                    .filter(|&p| changes(&corpus, p).contains(&u))
                    .count()
            })
            .sum();
        let mut shown = 0;
        for t in 1..corpus.units() {
            let read = s.reading_at(t);
            assert!(read.len() <= 5);
            for e in &read {
                assert_eq!(e.kind, SignalKind::FeedItem(t));
                assert!(changes(&corpus, e.page).contains(&t));
            }
            shown += read.len();
            // What a reader sees at t holds this unit's items first.
            let feed = s.feed_at(t);
            assert!(feed.len() >= read.len().min(5));
            assert!(feed.iter().all(|&(_, u)| u <= t));
        }
        assert!(
            shown < total,
            "a 5-item feed loses changes ({shown} of {total})"
        );
        assert!(shown > 0);
    }

    #[test]
    fn a_hosts_feed_holds_its_items_of_the_unit_and_older_ones_to_its_length() {
        let corpus = site();
        let s = PublishedSignals::of_corpus(&corpus, &settings(&["feed:items=5"]), 5);
        let even = |p: PageId| p.is_multiple_of(2);
        for t in 1..corpus.units() {
            let feed = s.feed_of_host(t, even);
            assert!(feed.iter().all(|&(p, u)| even(p) && u <= t));
            let this_unit: Vec<PageId> = s
                .reading_at(t)
                .iter()
                .map(|e| e.page)
                .filter(|&p| even(p))
                .collect();
            let shown: Vec<PageId> = feed
                .iter()
                .filter(|&&(_, u)| u == t)
                .map(|&(p, _)| p)
                .collect();
            assert_eq!(shown, this_unit, "unit {t}");
            // Older units fill the feed up to its length (whole units at a time).
            let older = feed.iter().filter(|&&(_, u)| u < t).count();
            assert!(older == 0 || this_unit.len() < 5, "unit {t}");
        }
    }

    #[test]
    fn a_page_leaving_the_sitemap_reads_as_a_change_of_that_unit() {
        let corpus = site();
        let s = PublishedSignals::of_corpus(&corpus, &settings(&["lastmod"]), 5);
        let mut deletions = 0;
        for t in 2..corpus.units() {
            let events = s.reading_at(t);
            for p in 0..corpus.page_count() as PageId {
                let listed = |u: Unit| s.lastmod_at(p, u).is_some();
                if listed(t - 1) && !listed(t) {
                    deletions += 1;
                    assert!(
                        events
                            .iter()
                            .any(|e| e.page == p && e.kind == SignalKind::Lastmod(t)),
                        "page {p} left the sitemap at unit {t}"
                    );
                }
            }
        }
        assert!(
            deletions > 0,
            "the site deletes no page: nothing was tested"
        );
    }

    #[test]
    fn a_reading_reports_each_date_once_when_it_moves() {
        let corpus = site();
        let s = PublishedSignals::of_corpus(&corpus, &settings(&["lastmod"]), 5);
        let first = s.reading_at(1);
        let listed = (0..300)
            .filter(|&p| corpus.timeline(p).at(1).present().is_some())
            .count();
        assert_eq!(first.len(), listed);
        for t in 2..corpus.units() {
            for e in s.reading_at(t) {
                // A date read after the first reading is a change of that very unit, or a
                // page (re)appearing.
                let SignalKind::Lastmod(date) = e.kind else {
                    panic!()
                };
                assert_eq!(date, t);
            }
        }
    }
}
