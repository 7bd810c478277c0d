//! Reading the sites' change signals: [`Fetcher::signals`](crate::fetch::Fetcher::signals) of
//! an [`HttpFetcher`] (with [`HttpOptions::read_signals`](super::HttpOptions::read_signals)).
//!
//! Every unit, before the policy chooses, the fetcher re-reads the documents a site publishes
//! about its changes: the sitemaps (the discovery's, and every `Sitemap:` line of the robots.txt
//! files read so far; nested indexes followed, gzipped ones decompressed) and the feeds, Atom
//! or RSS (2.0, 1.0; [`feed`]: a robots.txt `Sitemap:` line may name one, as sitemaps.org
//! allows, and `--feed` adds more). The robots.txt lines are kept apart from the host table
//! and journaled as they change ([`HttpFetcher::note_robots_sitemaps`]): a resumed crawl
//! re-reads robots.txt only at its first fetch of a host, after that unit's reading, which
//! would otherwise miss the sitemaps and feeds robots.txt alone names.
//! Each document is fetched by a conditional GET against the copy read before (a `304` is
//! cheap), politely, and bounded ([`HttpOptions::max_document_bytes`](super::HttpOptions)).
//! These requests are not fetches of pages: they do not count against the budget, and are
//! counted apart ([`SignalCounts`]).
//!
//! Dates are read as units on the crawl's clock ([`crate::signal::DateClock`]), never after the
//! unit read. What a reading reports is what is new since the previous one, as
//! [`crate::signal::PublishedSignals::reading_at`] models it: each page whose `<lastmod>`
//! differs from the previous read (every dated page at the first read), each page whose dated
//! entry is gone (a deletion: dated the reading's unit), and the feed entries
//! dated after the newest one read before. An entry naming a URL the crawl has no page id for
//! yet (a page the sitemap lists before discovery interns it) is reported at the first reading
//! after it is interned: policies read signals only when choosing, so it is in time.
//!
//! Each reading is journaled as what it changed ([`SignalRead`]): a resumed crawl replays the
//! same readings, and the copies the conditional GETs are made against (`ETag` and text) are
//! journaled as they change, so a resumed crawl's first live reading is conditional as the
//! uninterrupted crawl's is. Bad documents (not XML of a known kind, truncated gzip, bad dates) are
//! counted against their host's errors with their URL and what is wrong; they never stop a
//! unit.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Read as _;

use super::client::{retryable, Document};
use super::hosts::{host_of, FaultCounts, HostFaults, RobotsRule};
use super::options::Discovery;
use super::{feed, sitemap, HttpFetcher};
use crate::corpus::html::normalise_url;
use crate::corpus::Unit;
use crate::signal::{parse_feed_date, parse_w3c_datetime, SignalEvent, SignalKind, SignalReading};

/// Most documents (sitemaps, parts, feeds) one reading fetches.
const MAX_DOCUMENTS: usize = 1000;
/// Sitemap indexes nest at most this deep (an index of per-host indexes of parts).
const MAX_INDEX_DEPTH: u8 = 2;
/// Most events kept waiting for their URL to be interned (the oldest go first).
const MAX_PENDING: usize = 100_000;

/// A sitemap or feed kept between readings (and in the journal across a restart): its `ETag`
/// and text.
pub(super) type KeptDocument = (String, String);

/// Sitemap and feed requests: outside the budget and the fetch counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SignalCounts {
    /// Requests for sitemaps (indexes and parts included).
    pub sitemap_requests: u64,
    /// Requests for feeds.
    pub feed_requests: u64,
    /// Of those, answered `304` (the copy read before still holds).
    pub not_modified: u64,
    /// Of those, failed: unreachable, a status, too large, not a sitemap or feed, broken gzip.
    pub errors: u64,
}

impl SignalCounts {
    pub(crate) fn is_zero(&self) -> bool {
        *self == SignalCounts::default()
    }

    pub fn add(&mut self, other: SignalCounts) {
        self.sitemap_requests += other.sitemap_requests;
        self.feed_requests += other.feed_requests;
        self.not_modified += other.not_modified;
        self.errors += other.errors;
    }

    /// `self − before` (the requests of one reading).
    pub fn since(&self, before: SignalCounts) -> SignalCounts {
        SignalCounts {
            sitemap_requests: self.sitemap_requests - before.sitemap_requests,
            feed_requests: self.feed_requests - before.feed_requests,
            not_modified: self.not_modified - before.not_modified,
            errors: self.errors - before.errors,
        }
    }
}

/// What one reading of the signals changed, as journaled.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SignalRead {
    /// Sitemap entries whose date differs from the previous read: the page's URL and its
    /// `<lastmod>` as a unit (`None`: no longer listed with a date).
    pub(crate) dates: Vec<(String, Option<Unit>)>,
    /// Feed entries dated after the newest one read before: the page's URL and the unit of
    /// its change.
    pub(crate) feed_items: Vec<(String, Unit)>,
    /// The feeds whose newest entry moved: the feed's URL and that entry's unit.
    pub(crate) feed_marks: Vec<(String, Unit)>,
    /// A feed was read.
    pub(crate) feed_read: bool,
    /// The requests the reading made.
    pub(crate) requests: SignalCounts,
    /// The faults those requests met, per host.
    #[serde(default, skip_serializing_if = "HostFaults::is_empty")]
    pub(crate) faults: HostFaults,
}

/// What the fetcher keeps between readings.
#[derive(Debug, Default)]
pub(super) struct SignalReader {
    /// The dated entries of the previous read: page URL → `<lastmod>` unit.
    dates: HashMap<String, Unit>,
    /// Per feed URL, the unit of the newest entry read.
    feed_marks: HashMap<String, Unit>,
    /// Events whose URL has no page id yet, oldest first.
    pending: Vec<(String, SignalKind)>,
    /// Per document URL, its `ETag` and text as last read (for conditional GETs); journaled
    /// when they change, so that a resumed crawl keeps them.
    documents: HashMap<String, KeptDocument>,
    /// The page URLs the sitemaps listed at a unit's reading (that unit's discovery reuses
    /// them instead of reading again).
    pub(super) listed: Option<(Unit, Vec<String>)>,
    /// Per host, the `Sitemap:` lines of its robots.txt as last read (hosts naming none left
    /// out); journaled when they change, so that a resumed crawl keeps them.
    robots_sitemaps: BTreeMap<String, Vec<String>>,
}

impl SignalReader {
    /// Starts from these copies of documents (by URL: `ETag` and text), those a resumed
    /// crawl's last committed unit kept.
    pub(super) fn keep_documents(&mut self, documents: HashMap<String, KeptDocument>) {
        self.documents = documents;
    }

    /// Starts from these robots.txt `Sitemap:` lines (per host), those a resumed crawl's last
    /// committed unit knew.
    pub(super) fn keep_robots_sitemaps(&mut self, lines: BTreeMap<String, Vec<String>>) {
        self.robots_sitemaps = lines;
    }
}

/// One document read: a sitemap (or index), or a feed.
enum Read {
    Sitemap(sitemap::Sitemap),
    Feed(Vec<feed::FeedEntry>),
}

impl HttpFetcher {
    /// [`Fetcher::signals`](crate::fetch::Fetcher::signals): a reading, journaled.
    pub(super) fn read_signals_journaled(&mut self, unit: Unit) -> SignalReading {
        let read = match self.monitor.replay.replay_signals(unit) {
            Some(read) => {
                self.monitor.add_signal_counts(read.requests);
                self.monitor.add_faults(&read.faults);
                read
            }
            None => {
                let mut read = self.read_signals_live(unit);
                read.faults = self.settle_document_faults();
                self.monitor.replay.record_signals(read.clone());
                read
            }
        };
        self.apply_signal_read(read, unit)
    }

    /// Takes a reading into the reader's state; the events it brings, by page id (and those
    /// that waited for their URL's id, first).
    fn apply_signal_read(&mut self, read: SignalRead, unit: Unit) -> SignalReading {
        let reader = &mut self.signal_reader;
        let mut waiting = std::mem::take(&mut reader.pending);
        for (url, date) in read.dates {
            match date {
                Some(u) => {
                    reader.dates.insert(url.clone(), u);
                    waiting.push((url, SignalKind::Lastmod(u)));
                }
                None => {
                    // The dated entry left the sitemap: a change as of this reading (the
                    // simulated sitemap dates it at its own unit, `PublishedSignals::reading_at`:
                    // the same for a site that publishes without delay).
                    reader.dates.remove(&url);
                    waiting.push((url, SignalKind::Lastmod(unit)));
                }
            }
        }
        waiting.extend(
            read.feed_items
                .into_iter()
                .map(|(url, u)| (url, SignalKind::FeedItem(u))),
        );
        for (feed, u) in read.feed_marks {
            reader.feed_marks.insert(feed, u);
        }
        let mut events = Vec::new();
        for (url, kind) in waiting {
            match self.catalogue.id(&url) {
                Some(page) => events.push(SignalEvent { page, kind }),
                None => reader.pending.push((url, kind)),
            }
        }
        if reader.pending.len() > MAX_PENDING {
            let excess = reader.pending.len() - MAX_PENDING;
            reader.pending.drain(..excess);
        }
        SignalReading {
            events,
            feed_channel: read.feed_read,
        }
    }

    /// Takes the `Sitemap:` lines of the robots.txt files read so far into the reader,
    /// journaling each host's that changed (after every fetch batch: only a batch reads
    /// robots.txt). A host whose robots.txt could not be read names none, as its table entry
    /// says; a host not read in this process (a resumed crawl's, until its first fetch)
    /// keeps the lines journaled before.
    pub(super) fn note_robots_sitemaps(&mut self) {
        if !self.options().read_signals {
            return;
        }
        let changed: Vec<(String, Vec<String>)> = {
            let hosts = self.monitor.hosts.lock().expect("host table lock");
            let kept = &self.signal_reader.robots_sitemaps;
            hosts
                .iter()
                .filter_map(|(host, state)| {
                    let lines: &[String] = match state.robots.as_ref()? {
                        RobotsRule::Rules(r, _) => &r.sitemaps,
                        RobotsRule::AllowAll | RobotsRule::DisallowAll => &[],
                    };
                    let before = kept.get(host).map_or(&[][..], Vec::as_slice);
                    (lines != before).then(|| (host.clone(), lines.to_vec()))
                })
                .collect()
        };
        for (host, lines) in changed {
            self.monitor
                .replay
                .record_robots_sitemaps(&host, lines.clone());
            if lines.is_empty() {
                self.signal_reader.robots_sitemaps.remove(&host);
            } else {
                self.signal_reader.robots_sitemaps.insert(host, lines);
            }
        }
    }

    /// The documents to read: the discovery's sitemaps, the sitemaps and feeds robots.txt
    /// names (hosts in name order), the `--feed` URLs; each once.
    fn signal_sources(&self) -> Vec<String> {
        let mut sources = Vec::new();
        if let Discovery::Sitemaps(roots) = &self.options().discovery {
            sources.extend(roots.iter().cloned());
        }
        for lines in self.signal_reader.robots_sitemaps.values() {
            sources.extend(lines.iter().cloned());
        }
        sources.extend(self.options().feeds.iter().cloned());
        let mut seen = HashSet::new();
        sources.retain(|s| seen.insert(s.clone()));
        sources
    }

    fn read_signals_live(&mut self, unit: Unit) -> SignalRead {
        let before = self.monitor.signal_counts();
        let clock = self.options().date_clock;
        let feeds: HashSet<String> = self.options().feeds.iter().cloned().collect();
        let mut queue: Vec<(String, u8)> =
            self.signal_sources().into_iter().map(|s| (s, 0)).collect();
        let mut queued: HashSet<String> = queue.iter().map(|q| q.0.clone()).collect();
        let mut now: Vec<(String, Unit)> = Vec::new();
        let mut listed = Vec::new();
        let mut read = SignalRead::default();
        let mut i = 0;
        // A document that could not be read leaves the dates read before as they were.
        let mut unread = false;
        while i < queue.len() && i < MAX_DOCUMENTS {
            let (url, depth) = queue[i].clone();
            i += 1;
            let Some(document) = self.read_document(unit, &url, feeds.contains(&url)) else {
                unread = true;
                continue;
            };
            let mut bad_dates = Vec::new();
            match document {
                Read::Sitemap(map) => {
                    if depth < MAX_INDEX_DEPTH {
                        for nested in map.sitemaps {
                            if queued.insert(nested.clone()) {
                                queue.push((nested, depth + 1));
                            }
                        }
                    }
                    for (loc, date) in map.urls.into_iter().zip(map.lastmod) {
                        let page = normalise_url(&loc);
                        if let Some(date) = date {
                            match parse_w3c_datetime(&date) {
                                Ok(t) => now.push((page.clone(), clock.unit_of(t).min(unit))),
                                Err(e) => bad_dates.push(format!("<lastmod> of {loc}: {e}")),
                            }
                        }
                        listed.push(page);
                    }
                }
                Read::Feed(entries) => {
                    read.feed_read = true;
                    let mark = self.signal_reader.feed_marks.get(&url).copied();
                    let mut newest = mark;
                    for e in entries {
                        match parse_feed_date(&e.updated) {
                            Ok(t) => {
                                let u = clock.unit_of(t).min(unit);
                                if mark.is_none_or(|m| u > m) {
                                    read.feed_items.push((normalise_url(&e.url), u));
                                }
                                newest = Some(newest.map_or(u, |n| n.max(u)));
                            }
                            Err(err) => bad_dates.push(format!("the date of {}: {err}", e.url)),
                        }
                    }
                    if let Some(n) = newest.filter(|&n| Some(n) != mark) {
                        read.feed_marks.push((url.clone(), n));
                    }
                }
            }
            if let Some(first) = bad_dates.first() {
                self.monitor.note_error(
                    &url,
                    format!(
                        "unit {unit}: {url}: {} bad date(s) skipped, the first: {first}",
                        bad_dates.len()
                    ),
                );
            }
        }
        // Dates as of this reading against the previous one's.
        let mut seen = HashSet::with_capacity(now.len());
        for (page, date) in now {
            if seen.insert(page.clone()) && self.signal_reader.dates.get(&page) != Some(&date) {
                read.dates.push((page, Some(date)));
            }
        }
        let mut gone: Vec<&String> = self
            .signal_reader
            .dates
            .keys()
            .filter(|p| !unread && !seen.contains(*p))
            .collect();
        gone.sort();
        read.dates
            .extend(gone.into_iter().map(|p| (p.clone(), None)));
        self.signal_reader.listed = Some((unit, listed));
        read.requests = self.monitor.signal_counts().since(before);
        read
    }

    /// One document by a conditional GET (a `304` reads the copy kept), decompressed when
    /// gzipped, classified and parsed; counted. A request that failed on the wire (no
    /// answer, 429, 5xx) or brought a malformed document (truncated, broken gzip) is made
    /// again as a fetch would be ([`HttpClient::retry_wait`](super::client::HttpClient)),
    /// each attempt's fault counted against the host. `None` when it could not be read
    /// (the error noted against its host, naming the URL and what is wrong).
    fn read_document(&mut self, unit: Unit, url: &str, feed_expected: bool) -> Option<Read> {
        let mut attempt = 0;
        loop {
            let failure = match self.try_document(unit, url, feed_expected) {
                Ok(read) => return Some(read),
                Err(f) => f,
            };
            self.count(|c| {
                if failure.feed {
                    c.feed_requests += 1;
                } else {
                    c.sitemap_requests += 1;
                }
                c.errors += 1;
            });
            let host = host_of(url).unwrap_or_default();
            self.document_faults
                .entry(host)
                .or_default()
                .add(&failure.fault);
            let wait = if failure.retry {
                self.client().retry_wait(attempt, failure.retry_after)
            } else {
                None
            };
            match wait {
                Some(wait) => std::thread::sleep(wait),
                None => {
                    let what = if failure.feed { "feed" } else { "sitemap" };
                    self.monitor
                        .note_error(url, format!("unit {unit}: {what} {url}: {}", failure.error));
                    return None;
                }
            }
            attempt += 1;
        }
    }

    /// One request for a document ([`Self::read_document`]).
    fn try_document(
        &mut self,
        unit: Unit,
        url: &str,
        feed_expected: bool,
    ) -> Result<Read, DocumentFailure> {
        let max = self.options().max_document_bytes;
        let kept = self.signal_reader.documents.get(url).map(|d| d.0.clone());
        let (text, etag) = match self.client().get_document(url, kept.as_deref(), max) {
            Ok(Document::NotModified) => {
                self.count(|c| c.not_modified += 1);
                let text = self.signal_reader.documents.get(url).map(|d| d.1.clone());
                let text = text.ok_or_else(|| DocumentFailure {
                    error: "304 to a request without a copy".into(),
                    ..DocumentFailure::of(feed_expected)
                })?;
                (text, kept)
            }
            Ok(Document::Body { body, etag }) => match decoded(body, max) {
                Ok(text) => (text, etag),
                Err(e) => {
                    return Err(DocumentFailure {
                        error: e.to_string(),
                        retry: matches!(e, Undecodable::Gzip(_)),
                        ..DocumentFailure::malformed(feed_expected)
                    })
                }
            },
            Err(e) => {
                let mut fault = FaultCounts::default();
                fault.count(&e.error);
                return Err(DocumentFailure {
                    error: e.error.to_string(),
                    retry: retryable(&e.error),
                    retry_after: e.retry_after,
                    fault,
                    feed: feed_expected,
                });
            }
        };
        let read = if let Some(kind) = feed::FeedKind::of(&text) {
            if !feed::is_whole(&text) {
                return Err(DocumentFailure {
                    error: format!(
                        "a truncated {} (its root element is not closed)",
                        kind.name()
                    ),
                    ..DocumentFailure::malformed(true)
                });
            }
            self.count(|c| c.feed_requests += 1);
            let (entries, skipped) = feed::parse(&text).map_err(|e| DocumentFailure {
                error: e.to_string(),
                ..DocumentFailure::malformed(true)
            })?;
            if skipped > 0 {
                self.monitor.note_error(
                    url,
                    format!("unit {unit}: feed {url}: {skipped} entries without a link or a date skipped"),
                );
            }
            Read::Feed(entries)
        } else if text.contains("<urlset") || text.contains("<sitemapindex") {
            if !(text.contains("</urlset>") || text.contains("</sitemapindex>")) {
                return Err(DocumentFailure {
                    error: "a truncated sitemap (no </urlset> or </sitemapindex>)".into(),
                    ..DocumentFailure::malformed(false)
                });
            }
            self.count(|c| c.sitemap_requests += 1);
            Read::Sitemap(sitemap::parse(&text))
        } else {
            return Err(DocumentFailure {
                error: "neither a sitemap (<urlset>, <sitemapindex>) nor a feed (Atom, RSS)".into(),
                retry: false,
                ..DocumentFailure::malformed(feed_expected)
            });
        };
        // Only a document read whole is kept for conditional re-reads; the journal learns of
        // each change (a 304 changes nothing).
        match etag {
            Some(tag) => {
                let kept = (tag, text);
                if self.signal_reader.documents.get(url) != Some(&kept) {
                    self.monitor.replay.record_document(url, Some(kept.clone()));
                    self.signal_reader.documents.insert(url.to_string(), kept);
                }
            }
            None => {
                if self.signal_reader.documents.remove(url).is_some() {
                    self.monitor.replay.record_document(url, None);
                }
            }
        }
        Ok(read)
    }

    /// The faults the sitemap and feed requests met since the last call, per host: added to
    /// the monitor's counts, and returned for the journal.
    pub(super) fn settle_document_faults(&mut self) -> HostFaults {
        let faults = std::mem::take(&mut self.document_faults);
        self.monitor.add_faults(&faults);
        faults
    }

    fn count(&self, f: impl FnOnce(&mut SignalCounts)) {
        let mut c = SignalCounts::default();
        f(&mut c);
        self.monitor.add_signal_counts(c);
    }

    /// The page URLs the sitemaps list now, for discovery at `unit` (nested indexes followed,
    /// gzipped parts decompressed): this unit's signal reading's when it read them, else read.
    pub(super) fn sitemap_urls(&mut self, unit: Unit) -> Vec<String> {
        if let Some((u, urls)) = self.signal_reader.listed.take() {
            if u == unit {
                return urls;
            }
        }
        let Discovery::Sitemaps(roots) = self.options().discovery.clone() else {
            return Vec::new();
        };
        let mut urls = Vec::new();
        let mut queue: Vec<(String, u8)> = roots.into_iter().map(|r| (r, 0)).collect();
        let mut i = 0;
        while i < queue.len() && i < MAX_DOCUMENTS {
            let (url, depth) = queue[i].clone();
            i += 1;
            if let Some(Read::Sitemap(map)) = self.read_document(unit, &url, false) {
                urls.extend(map.urls);
                if depth < MAX_INDEX_DEPTH {
                    queue.extend(map.sitemaps.into_iter().map(|s| (s, depth + 1)));
                }
            }
        }
        urls
    }
}

/// Why one request for a signal document brought nothing usable.
struct DocumentFailure {
    error: String,
    /// Worth another request (a fault on the wire, a truncated document).
    retry: bool,
    /// How long the server asked to wait (`Retry-After`).
    retry_after: Option<std::time::Duration>,
    /// The fault the request met.
    fault: FaultCounts,
    /// Of a feed (else a sitemap, or unknown).
    feed: bool,
}

impl DocumentFailure {
    /// Not worth another request, no fault.
    fn of(feed: bool) -> Self {
        DocumentFailure {
            error: String::new(),
            retry: false,
            retry_after: None,
            fault: FaultCounts::default(),
            feed,
        }
    }

    /// A malformed feed or sitemap (worth another request).
    fn malformed(feed: bool) -> Self {
        let mut fault = FaultCounts::default();
        if feed {
            fault.bad_feeds = 1;
        } else {
            fault.bad_sitemaps = 1;
        }
        DocumentFailure {
            retry: true,
            fault,
            ..DocumentFailure::of(feed)
        }
    }
}

/// Why a gzipped signal document could not be read.
#[derive(Debug, thiserror::Error)]
enum Undecodable {
    #[error("broken or truncated gzip: {0}")]
    Gzip(std::io::Error),
    #[error("over {0} bytes decompressed")]
    TooLarge(usize),
}

/// A document's text: gunzipped when it is gzip (a `.xml.gz` sitemap), at most `max` bytes.
fn decoded(body: Vec<u8>, max: usize) -> Result<String, Undecodable> {
    if !body.starts_with(&[0x1f, 0x8b]) {
        return Ok(String::from_utf8_lossy(&body).into_owned());
    }
    let mut text = Vec::new();
    flate2::read::GzDecoder::new(&body[..])
        .take(max as u64 + 1)
        .read_to_end(&mut text)
        .map_err(Undecodable::Gzip)?;
    if text.len() > max {
        return Err(Undecodable::TooLarge(max));
    }
    Ok(String::from_utf8_lossy(&text).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::PageId;
    use crate::fetch::http::HttpOptions;
    use crate::fetch::Fetcher as _;
    use crate::signal::DateClock;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// An RSS 2.0 feed as a WordPress blog writes it (CDATA, `&#038;` in a link, a permalink
    /// `<guid>` standing for a missing `<link>`, an item without a date).
    const RSS: &str = r#"<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"
 xmlns:content="http://purl.org/rss/1.0/modules/content/" xmlns:dc="http://purl.org/dc/elements/1.1/"
 xmlns:atom="http://www.w3.org/2005/Atom"><channel><title>Blog</title>
 <atom:link href="https://feeds.example/rss.xml" rel="self" type="application/rss+xml" />
 <link>https://feeds.example/</link><lastBuildDate>Tue, 10 Jun 2003 05:00:00 +0000</lastBuildDate>
 <item><title><![CDATA[Hello]]></title><link>https://feeds.example/?p=1&#038;lang=en</link>
  <pubDate>Tue, 10 Jun 2003 04:00:00 +0000</pubDate><guid isPermaLink="false">https://feeds.example/?p=1</guid>
  <description><![CDATA[<p>x &amp; y</p>]]></description></item>
 <item><title>Only a guid</title><guid>https://feeds.example/2003/06/08/b/</guid>
  <pubDate>Sun, 08 Jun 2003 19:00:00 EST</pubDate></item>
 <item><title>Undated</title><link>https://feeds.example/c/</link></item>
</channel></rss>"#;

    /// An RSS 1.0 (RDF) feed as a wiki writes it.
    const RDF: &str = r#"<?xml version="1.0"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
 xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
 <channel rdf:about="https://feeds.example/rdf.xml"><title>Wiki</title></channel>
 <item rdf:about="https://feeds.example/wiki/D"><title>D</title>
  <link>https://feeds.example/wiki/D</link><dc:date>2003-06-05T12:00:00+00:00</dc:date></item>
</rdf:RDF>"#;

    /// A site on loopback serving [`RSS`] and [`RDF`] with strong `ETag`s, `304` to a request
    /// naming them; counts the conditional requests it answered `304`.
    fn feed_site() -> (
        std::net::SocketAddr,
        Arc<AtomicUsize>,
        tokio::runtime::Runtime,
    ) {
        use axum::http::{header, HeaderMap, StatusCode};
        use axum::response::IntoResponse;
        let not_modified = Arc::new(AtomicUsize::new(0));
        let serve = |body: &'static str, etag: &'static str, counter: Arc<AtomicUsize>| {
            move |headers: HeaderMap| async move {
                if headers
                    .get(header::IF_NONE_MATCH)
                    .is_some_and(|v| v.as_bytes() == etag.as_bytes())
                {
                    counter.fetch_add(1, Ordering::SeqCst);
                    return StatusCode::NOT_MODIFIED.into_response();
                }
                (
                    [
                        (header::CONTENT_TYPE, "application/rss+xml"),
                        (header::ETAG, etag),
                    ],
                    body,
                )
                    .into_response()
            }
        };
        let app = axum::Router::new()
            .route(
                "/rss.xml",
                axum::routing::get(serve(RSS, "\"rss-1\"", Arc::clone(&not_modified))),
            )
            .route(
                "/rdf.xml",
                axum::routing::get(serve(RDF, "\"rdf-1\"", Arc::clone(&not_modified))),
            );
        let (addr, runtime) = super::super::serve_on_loopback(app);
        (addr, not_modified, runtime)
    }

    /// RSS 2.0 and RSS 1.0 feeds go the crawl's way (`--feed`, a conditional GET, the reading
    /// journaled): their items reach the pages as feed items of the units their RFC 2822 and
    /// W3C dates fall in; the undated item is skipped and said. A crawl resumed from the
    /// journal re-reads both feeds by conditional GETs from its first live unit (two `304`s),
    /// as the uninterrupted crawl does.
    #[test]
    fn rss_feeds_are_read_into_feed_items_and_a_resumed_crawl_reads_them_conditionally() {
        let (addr, not_modified, _server) = feed_site();
        let options = HttpOptions {
            min_host_delay: std::time::Duration::ZERO,
            resolve: HashMap::from([("feeds.example".to_string(), addr)]),
            read_signals: true,
            feeds: vec![
                "https://feeds.example/rss.xml".into(),
                "https://feeds.example/rdf.xml".into(),
            ],
            // Units of a day from 2003-06-01T00:00:00Z.
            date_clock: DateClock {
                origin: 1_054_425_600.0,
                unit_seconds: 86_400.0,
            },
            ..HttpOptions::default()
        };
        let pages = [
            "https://feeds.example/?p=1&lang=en",
            "https://feeds.example/2003/06/08/b/",
            "https://feeds.example/c/",
            "https://feeds.example/wiki/D",
        ];
        let journal = tempfile::tempdir().unwrap();
        let start = |replay_through: Option<Unit>| {
            let vocabulary = Arc::new(crate::text::Vocabulary::new());
            let mut fetcher = HttpFetcher::new(options.clone(), vocabulary, None).unwrap();
            fetcher.set_journal(journal.path(), replay_through).unwrap();
            assert_eq!(fetcher.add_urls(pages), [0, 1, 2, 3]);
            fetcher
        };
        let mut fetcher = start(None);
        for unit in 0..20 {
            fetcher.monitor().commit(unit).unwrap();
        }
        let reading = fetcher.signals(20).unwrap();
        fetcher.monitor().commit(20).unwrap();
        assert!(reading.feed_channel);
        let mut items: Vec<(PageId, SignalKind)> =
            reading.events.iter().map(|e| (e.page, e.kind)).collect();
        items.sort_by_key(|e| e.0);
        // 10 June 04:00 UTC (unit 9), 8 June 19:00 EST = 9 June 00:00 UTC (unit 8), 5 June.
        assert_eq!(
            items,
            [
                (0, SignalKind::FeedItem(9)),
                (1, SignalKind::FeedItem(8)),
                (3, SignalKind::FeedItem(4)),
            ]
        );
        let counts = fetcher.monitor().signal_counts();
        assert_eq!(
            (counts.feed_requests, counts.not_modified, counts.errors),
            (2, 0, 0)
        );
        let said = &fetcher.monitor().hosts()["feeds.example"].last_errors;
        assert!(
            said.iter()
                .any(|e| e.contains("1 entries without a link or a date skipped")),
            "{said:?}"
        );
        // The uninterrupted crawl's next reading: both feeds answered 304, nothing new.
        let next = fetcher.signals(21).unwrap();
        assert!(next.events.is_empty());
        assert_eq!(fetcher.monitor().signal_counts().not_modified, 2);
        assert_eq!(not_modified.load(Ordering::SeqCst), 2);

        // Resumed after unit 20: the reading replays, then unit 21 is conditional.
        let mut resumed = start(Some(20));
        assert_eq!(resumed.signals(20).unwrap().events.len(), 3);
        assert!(resumed.signals(21).unwrap().events.is_empty());
        let counts = resumed.monitor().signal_counts();
        assert_eq!(
            (counts.feed_requests, counts.not_modified),
            (4, 2),
            "{counts:?}"
        );
        assert_eq!(not_modified.load(Ordering::SeqCst), 4);
    }

    #[test]
    fn gzip_is_decompressed_within_bounds_and_broken_gzip_says_so() {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(b"<urlset></urlset>").unwrap();
        let gz = gz.finish().unwrap();
        assert_eq!(decoded(gz.clone(), 100).unwrap(), "<urlset></urlset>");
        assert!(decoded(gz.clone(), 5)
            .unwrap_err()
            .to_string()
            .contains("over 5 bytes"));
        let truncated = gz[..gz.len() / 2].to_vec();
        assert!(decoded(truncated, 100)
            .unwrap_err()
            .to_string()
            .contains("broken or truncated gzip"));
        assert_eq!(decoded(b"plain".to_vec(), 100).unwrap(), "plain");
    }
}
