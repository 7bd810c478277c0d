//! What a replayed site publishes about its own changes, under its [`SignalSettings`] model
//! ([`PublishedSignals`], the same draws `simulate --signals` reads):
//!
//! * `/sitemap.xml`: the host's present URLs, each with the `<lastmod>` the model shows now
//!   (none when the model's coverage leaves the entry out, or without a `lastmod` channel).
//!   More URLs than a sitemap may hold ([`SITEMAP_URL_LIMIT`], sitemaps.org's 50,000) make it
//!   a sitemap index of gzipped parts `/sitemap-K.xml.gz`; on an address that names none of a
//!   several-host collection's hosts it is an index of every host's `/sitemap.xml`.
//! * `/feed.atom` (with a `feed` channel): the host's change feed in Atom 1.0, its newest
//!   changes as the model shows them now, each entry linking the page and dated with the
//!   change's unit.
//! * `/feed.rss` (with a `feed` channel): the same items in RSS 2.0, each with its `<link>`,
//!   a `<guid>` naming the change and a `<pubDate>` in RFC 822.
//! * `/robots.txt` gains a `Sitemap:` line for the sitemap and one for the feed (sitemaps.org
//!   allows a feed there too; robots.txt has no line of its own for feeds), in the format
//!   [`FeedFormat`] picks (`--robots-feed`): naming both would have every crawler read the
//!   same changes twice.
//!
//! Dates are the start of their unit on the collection's clock ([`crate::signal::DateClock`]).
//! Every document carries a strong `ETag` (the hash of its uncompressed text): a conditional
//! re-read of an unchanged sitemap is answered `304`.

use std::io::Write;

use super::{render, ReplaySite};
use crate::corpus::{LiveWeb, PageId};
use crate::signal::{rfc822_datetime, w3c_datetime, DateClock};

#[cfg(doc)]
use crate::signal::{PublishedSignals, SignalSettings};

/// Most URLs one sitemap lists (sitemaps.org); more make the sitemap an index of parts.
pub const SITEMAP_URL_LIMIT: usize = 50_000;

/// A format the change feed is served in (both are, with a `feed` channel).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum FeedFormat {
    /// Atom 1.0 at `/feed.atom`.
    #[default]
    Atom,
    /// RSS 2.0 at `/feed.rss`.
    Rss,
}

impl FeedFormat {
    /// Where each host serves the feed in this format.
    pub fn path(self) -> &'static str {
        match self {
            FeedFormat::Atom => "/feed.atom",
            FeedFormat::Rss => "/feed.rss",
        }
    }

    /// The format served at `path`, if a feed is.
    pub(super) fn of_path(path: &str) -> Option<FeedFormat> {
        [FeedFormat::Atom, FeedFormat::Rss]
            .into_iter()
            .find(|f| f.path() == path)
    }
}

/// A published document, ready to serve.
#[derive(Debug)]
pub(super) struct Document {
    pub(super) body: Vec<u8>,
    pub(super) content_type: &'static str,
    /// The hash of the uncompressed text (a strong `ETag`).
    pub(super) etag: String,
}

impl Document {
    fn xml(text: String, content_type: &'static str) -> Self {
        let etag = format!("\"{:016x}\"", render::entity_hash(text.as_bytes()));
        Document {
            body: text.into_bytes(),
            content_type,
            etag,
        }
    }
}

impl ReplaySite {
    /// The collection's host a request names: the host itself, else (an address such as
    /// `127.0.0.1:8090`) the only host of a one-host collection; `None` for an address of a
    /// several-host collection.
    fn host_index(&self, host: Option<&str>) -> Option<usize> {
        if let Some(h) = host.map(str::to_ascii_lowercase) {
            if let Some(i) = self.hosts.iter().position(|k| *k == h) {
                return Some(i);
            }
        }
        (self.hosts.len() == 1).then_some(0)
    }

    /// `scheme://host` of the collection's host number `host` (the scheme its URLs use).
    fn base_of(&self, host: usize) -> String {
        format!("{}://{}", self.schemes[host], self.hosts[host])
    }

    /// The host's pages present now, in page order.
    fn present_on(&self, host: usize) -> Vec<PageId> {
        let unit = self.unit();
        (0..self.corpus.page_count() as PageId)
            .filter(|&p| self.host_of_page[p as usize] == host as u32)
            .filter(|&p| self.corpus.page_at(p, unit).present().is_some())
            .collect()
    }

    /// The published document at `path` for a request naming `host` (`None`: not one).
    pub(super) fn published(&self, host: Option<&str>, path: &str) -> Option<Document> {
        let path = path.split('?').next().unwrap_or(path);
        let known = self.host_index(host);
        if let Some(format) = FeedFormat::of_path(path) {
            self.published.as_ref()?.settings().feed()?;
            return Some(match format {
                FeedFormat::Atom => self.atom_feed(known?),
                FeedFormat::Rss => self.rss_feed(known?),
            });
        }
        match path {
            "/sitemap.xml" => Some(match known {
                Some(h) => {
                    let pages = self.present_on(h);
                    if pages.len() <= self.sitemap_url_limit {
                        self.urlset(&pages)
                    } else {
                        let parts = pages.len().div_ceil(self.sitemap_url_limit);
                        let base = self.base_of(h);
                        self.index((0..parts).map(|k| format!("{base}/sitemap-{k}.xml.gz")))
                    }
                }
                None if self.hosts.is_empty() => self.urlset(&[]),
                None => self.index((0..self.hosts.len()).map(|h| {
                    let base = self.base_of(h);
                    format!("{base}/sitemap.xml")
                })),
            }),
            _ => {
                let k: usize = path
                    .strip_prefix("/sitemap-")?
                    .strip_suffix(".xml.gz")?
                    .parse()
                    .ok()?;
                let pages = self.present_on(known?);
                let start = k.checked_mul(self.sitemap_url_limit)?;
                if start >= pages.len() {
                    return None;
                }
                let end = (start + self.sitemap_url_limit).min(pages.len());
                let doc = self.urlset(&pages[start..end]);
                let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                gz.write_all(&doc.body).ok()?;
                Some(Document {
                    body: gz.finish().ok()?,
                    content_type: "application/gzip",
                    etag: doc.etag,
                })
            }
        }
    }

    /// The `Sitemap:` lines robots.txt gains for a request naming `host`: the host's sitemap
    /// and feed, in the format `--robots-feed` picks (every host's, for an address of a
    /// several-host collection).
    pub(super) fn robots_sitemap_lines(&self, host: Option<&str>) -> String {
        let hosts: Vec<usize> = match self.host_index(host) {
            Some(h) => vec![h],
            None => (0..self.hosts.len()).collect(),
        };
        let feed = self
            .published
            .as_ref()
            .is_some_and(|p| p.settings().feed().is_some());
        let mut lines = String::new();
        for h in hosts {
            let base = self.base_of(h);
            lines.push_str(&format!("Sitemap: {base}/sitemap.xml\n"));
            if feed {
                let path = self.options.robots_feed.path();
                lines.push_str(&format!("Sitemap: {base}{path}\n"));
            }
        }
        lines
    }

    fn date(&self, unit: crate::corpus::Unit) -> String {
        w3c_datetime(DateClock::of(&self.corpus.clock).start_of(unit))
    }

    /// [`Self::date`] as RSS 2.0 writes it (RFC 822).
    fn rss_date(&self, unit: crate::corpus::Unit) -> String {
        rfc822_datetime(DateClock::of(&self.corpus.clock).start_of(unit))
    }

    /// A `<urlset>` of `pages`, each with the `<lastmod>` the model shows now, if any.
    fn urlset(&self, pages: &[PageId]) -> Document {
        let unit = self.unit();
        let mut xml = String::from(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
        );
        for &p in pages {
            xml.push_str("<url><loc>");
            render::escape_into(&mut xml, self.corpus.url(p));
            xml.push_str("</loc>");
            if let Some(date) = self.published.as_ref().and_then(|s| s.lastmod_at(p, unit)) {
                xml.push_str("<lastmod>");
                xml.push_str(&self.date(date));
                xml.push_str("</lastmod>");
            }
            xml.push_str("</url>\n");
        }
        xml.push_str("</urlset>\n");
        Document::xml(xml, "application/xml; charset=utf-8")
    }

    /// A `<sitemapindex>` of `locations`.
    fn index(&self, locations: impl Iterator<Item = String>) -> Document {
        let mut xml = String::from(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
        );
        for loc in locations {
            xml.push_str("<sitemap><loc>");
            render::escape_into(&mut xml, &loc);
            xml.push_str("</loc></sitemap>\n");
        }
        xml.push_str("</sitemapindex>\n");
        Document::xml(xml, "application/xml; charset=utf-8")
    }

    /// The items of host number `host`'s feed now, newest first, as both formats show them:
    /// each changed page's URL (XML-escaped) and the unit of its change.
    fn feed_items(&self, host: usize) -> Vec<(String, crate::corpus::Unit)> {
        let items = self.published.as_ref().map_or_else(Vec::new, |s| {
            s.feed_of_host(self.unit(), |p| {
                self.host_of_page[p as usize] == host as u32
            })
        });
        items
            .into_iter()
            .map(|(p, u)| {
                let mut url = String::new();
                render::escape_into(&mut url, self.corpus.url(p));
                (url, u)
            })
            .collect()
    }

    /// Host number `host`'s Atom feed: the newest changes the model shows now.
    fn atom_feed(&self, host: usize) -> Document {
        let unit = self.unit();
        let base = self.base_of(host);
        let items = self.feed_items(host);
        let own = format!("{base}{}", FeedFormat::Atom.path());
        let mut xml = String::from(
            "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\">\n",
        );
        xml.push_str(&format!(
            "<title>Recent changes of {}</title>\n<id>{own}</id>\n<link rel=\"self\" href=\"{own}\"/>\n<updated>{}</updated>\n",
            self.hosts[host],
            self.date(unit)
        ));
        for (url, u) in items {
            xml.push_str(&format!(
                "<entry><title>{url}</title><id>{}</id><link href=\"{url}\"/><updated>{}</updated></entry>\n",
                change_id(&url, u),
                self.date(u)
            ));
        }
        xml.push_str("</feed>\n");
        Document::xml(xml, "application/atom+xml; charset=utf-8")
    }

    /// Host number `host`'s RSS 2.0 feed: the items of [`Self::atom_feed`], each with the
    /// page as its `<link>`, the change as its `<guid>` (not a permalink: Atom's `<id>`) and
    /// the change's unit as its `<pubDate>`. The channel carries RSS 2.0's required
    /// `<title>`, `<link>` and `<description>`, and an `atom:link` to itself, as the RSS
    /// Advisory Board recommends.
    fn rss_feed(&self, host: usize) -> Document {
        let base = self.base_of(host);
        let own = format!("{base}{}", FeedFormat::Rss.path());
        let name = &self.hosts[host];
        let mut xml = String::from(
            "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<rss version=\"2.0\" xmlns:atom=\"http://www.w3.org/2005/Atom\">\n<channel>\n",
        );
        xml.push_str(&format!(
            "<title>Recent changes of {name}</title>\n<link>{base}/</link>\n<description>The newest changes of the pages of {name}</description>\n<atom:link href=\"{own}\" rel=\"self\" type=\"application/rss+xml\"/>\n<lastBuildDate>{}</lastBuildDate>\n",
            self.rss_date(self.unit())
        ));
        for (url, u) in self.feed_items(host) {
            xml.push_str(&format!(
                "<item><title>{url}</title><link>{url}</link><guid isPermaLink=\"false\">{}</guid><pubDate>{}</pubDate></item>\n",
                change_id(&url, u),
                self.rss_date(u)
            ));
        }
        xml.push_str("</channel>\n</rss>\n");
        Document::xml(xml, "application/rss+xml; charset=utf-8")
    }
}

/// The identifier of the change at `unit` of the page at `url` (escaped): Atom's `<id>`, RSS's
/// `<guid>`; the same in both formats, so a reader tells one change from another alike.
fn change_id(url: &str, unit: crate::corpus::Unit) -> String {
    format!("{url}#change-{unit}")
}
