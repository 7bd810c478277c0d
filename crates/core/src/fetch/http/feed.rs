//! Reading a change feed: the page each entry is about and its date. Three formats:
//!
//! * Atom 1.0 (RFC 4287): each `<entry>`'s `<link href>` (`rel="alternate"` or no `rel`,
//!   §4.2.7.2) and its `<updated>` (else `<published>`), W3C datetimes (§3.3);
//! * RSS 2.0 (<https://www.rssboard.org/rss-specification>, and the 0.9x it extends): each
//!   `<item>`'s `<link>`, else its `<guid>` when that is a permalink (`isPermaLink` absent or
//!   `true`), and its `<pubDate>` (an RFC 2822 date), else its `<dc:date>` (Dublin Core, a W3C
//!   datetime);
//! * RSS 1.0 (RDF Site Summary, <https://web.resource.org/rss/1.0/spec>, and RSS 0.90): each
//!   `<item rdf:about="…">`'s `<link>` (else its `rdf:about`) and its `<dc:date>` (the Dublin
//!   Core module), as RSS 2.0's.
//!
//! The format is told by the root element ([`FeedKind::of`]). What a crawl reads of a site's
//! recent changes (`web-replay` serves its feed as Atom at `/feed.atom` and as RSS 2.0 at
//! `/feed.rss`; robots.txt's `Sitemap:` lines may name one, as sitemaps.org allows, and
//! `--feed` adds more). The date is kept as
//! written; [`crate::signal::parse_feed_date`] reads either format.
//!
//! The same small tolerant reader as [`super::sitemap`] (no XML crate is in the tree): an
//! entry without a link or a date is skipped and counted, so the caller can say so.

use crate::corpus::artefact::xml_root_element as root_element;

use super::sitemap::{blocks, element, tagged, unescape};

/// One entry of a feed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedEntry {
    /// The page the entry is about: Atom's `<link href>` (`rel="alternate"` or no `rel`), RSS's
    /// `<link>` (else a permalink `<guid>`, else RSS 1.0's `rdf:about`).
    pub url: String,
    /// Its date, as written: Atom's `<updated>` (else `<published>`), RSS's `<pubDate>` (else
    /// `<dc:date>`).
    pub updated: String,
}

/// The format of a feed, told by its root element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeedKind {
    /// Atom 1.0: `<feed xmlns="http://www.w3.org/2005/Atom">`.
    Atom,
    /// RSS 2.0 (or 0.91, 0.92): `<rss>`.
    Rss,
    /// RSS 1.0 (or 0.90): `<rdf:RDF>` with the RSS namespace.
    Rdf,
}

impl FeedKind {
    /// The format of `xml` by its root element (after the XML declaration, processing
    /// instructions, comments and a doctype); `None`: not a feed (a sitemap, say).
    pub fn of(xml: &str) -> Option<FeedKind> {
        let root = root_element(xml)?;
        let local = root.rsplit(':').next().unwrap_or(root);
        match local {
            "feed" if xml.contains("http://www.w3.org/2005/Atom") => Some(FeedKind::Atom),
            "rss" if root == "rss" => Some(FeedKind::Rss),
            "RDF"
                if xml.contains("http://purl.org/rss/1.0/")
                    || xml.contains("http://my.netscape.com/rdf/simple/0.9/") =>
            {
                Some(FeedKind::Rdf)
            }
            _ => None,
        }
    }

    /// How errors name it.
    pub fn name(self) -> &'static str {
        match self {
            FeedKind::Atom => "Atom feed",
            FeedKind::Rss => "RSS feed",
            FeedKind::Rdf => "RSS 1.0 (RDF) feed",
        }
    }
}

/// A document that is not a feed of a known format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("not an Atom or RSS feed (no <feed xmlns=\"http://www.w3.org/2005/Atom\">, <rss> or RSS 1.0 <rdf:RDF> root element)")]
pub struct NotAFeed;

/// Whether `xml` is an Atom or RSS feed (rather than a sitemap).
pub fn is_feed(xml: &str) -> bool {
    FeedKind::of(xml).is_some()
}

/// Whether the root element of `xml` is closed: a feed cut short is not.
pub(crate) fn is_whole(xml: &str) -> bool {
    root_element(xml).is_some_and(|root| xml.contains(&format!("</{root}>")))
}

/// The entries of a feed, in document order, and how many entries had no usable link or
/// date. `Err` when the document is not a feed of a known format.
pub fn parse(xml: &str) -> Result<(Vec<FeedEntry>, usize), NotAFeed> {
    let kind = FeedKind::of(xml).ok_or(NotAFeed)?;
    let mut entries = Vec::new();
    let mut skipped = 0;
    let found: Vec<(Option<String>, Option<String>)> = match kind {
        FeedKind::Atom => blocks(xml, "entry")
            .into_iter()
            .map(|entry| {
                let updated = element(entry, "updated").or_else(|| element(entry, "published"));
                (link_of(entry), updated)
            })
            .collect(),
        FeedKind::Rss | FeedKind::Rdf => tagged(xml, "item")
            .into_iter()
            .map(|(attributes, item)| rss_item(attributes, item))
            .collect(),
    };
    for (url, updated) in found {
        match (url, updated) {
            (Some(url), Some(updated)) if !url.is_empty() && !updated.is_empty() => {
                entries.push(FeedEntry { url, updated })
            }
            _ => skipped += 1,
        }
    }
    Ok((entries, skipped))
}

/// The page and date of an RSS `<item>` (2.0, 0.9x or 1.0; see the module docs): its
/// `<link>`, else its `<guid>` when a permalink to an http(s) page (RSS 2.0: "isPermaLink is
/// optional, its default value is true"), else its `rdf:about` (RSS 1.0); its `<pubDate>`,
/// else its `<dc:date>`.
fn rss_item(attributes: &str, item: &str) -> (Option<String>, Option<String>) {
    let permalink = || {
        let (guid_attributes, guid) = tagged(item, "guid").into_iter().next()?;
        let is_permalink = attribute(guid_attributes, "isPermaLink")
            .is_none_or(|p| p.trim().eq_ignore_ascii_case("true"));
        let guid = unescape(guid.trim());
        let lower = guid.to_ascii_lowercase();
        (is_permalink && (lower.starts_with("http://") || lower.starts_with("https://")))
            .then_some(guid)
    };
    let url = element(item, "link")
        .filter(|l| !l.is_empty())
        .or_else(permalink)
        .or_else(|| attribute(attributes, "rdf:about"));
    let date = element(item, "pubDate")
        .filter(|d| !d.is_empty())
        .or_else(|| element(item, "dc:date"));
    (url, date)
}

/// The `href` of the entry's first `<link>` that points at the page (`rel` absent or
/// `alternate`).
fn link_of(entry: &str) -> Option<String> {
    let mut rest = entry;
    while let Some(start) = rest.find("<link") {
        let after = &rest[start + 5..];
        let end = after.find('>')?;
        let attributes = &after[..end];
        rest = &after[end..];
        let rel = attribute(attributes, "rel");
        if rel.as_deref().is_none_or(|r| r == "alternate") {
            if let Some(href) = attribute(attributes, "href") {
                return Some(href);
            }
        }
    }
    None
}

/// The decoded value of `name="…"` (or `'…'`) among `attributes`.
fn attribute(attributes: &str, name: &str) -> Option<String> {
    let mut rest = attributes;
    loop {
        let at = rest.find(name)?;
        let before_ok = at == 0 || rest[..at].ends_with(|c: char| c.is_whitespace());
        let after = rest[at + name.len()..].trim_start();
        rest = &rest[at + name.len()..];
        let Some(value) = after.strip_prefix('=') else {
            continue;
        };
        if !before_ok {
            continue;
        }
        let value = value.trim_start();
        let quote = value.chars().next().filter(|c| *c == '"' || *c == '\'')?;
        let body = &value[1..];
        let end = body.find(quote)?;
        return Some(unescape(body[..end].trim()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_give_their_page_link_and_date() {
        let xml = r#"<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom">
            <title>t</title><link rel="self" href="https://a/feed.atom"/>
            <entry><title>x</title><link rel="edit" href="https://a/edit"/>
              <link href="https://a/x?p=1&amp;q=2"/><updated>2013-03-10T00:00:00Z</updated></entry>
            <entry><link rel='alternate' href='https://a/y'/><published>2013-03-03</published></entry>
            <entry><title>no link</title><updated>2013-03-10T00:00:00Z</updated></entry>
            <entry><link href="https://a/unterminated"/>"#;
        let (entries, skipped) = parse(xml).unwrap();
        assert_eq!(
            entries,
            [
                FeedEntry {
                    url: "https://a/x?p=1&q=2".into(),
                    updated: "2013-03-10T00:00:00Z".into()
                },
                FeedEntry {
                    url: "https://a/y".into(),
                    updated: "2013-03-03".into()
                }
            ]
        );
        assert_eq!(skipped, 1);
        let err = parse("<urlset></urlset>").unwrap_err().to_string();
        assert!(err.contains("not an Atom or RSS feed"), "{err}");
    }

    fn entry(url: &str, updated: &str) -> FeedEntry {
        FeedEntry {
            url: url.into(),
            updated: updated.into(),
        }
    }

    /// Shaped like MediaWiki's `Special:RecentChanges?feed=rss` and a WordPress `/feed/`:
    /// escaped HTML and CDATA in the descriptions, `&#038;` in links, an `atom:link` to itself,
    /// permalink and non-permalink `<guid>`s, an item without a date and one without a link.
    const RSS: &str = r#"<?xml version="1.0" encoding="utf-8"?>
<?xml-stylesheet type="text/css" href="https://wiki.example/skins/feed.css"?>
<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/"
     xmlns:atom="http://www.w3.org/2005/Atom" xmlns:content="http://purl.org/rss/1.0/modules/content/">
  <channel>
    <title>Wiki  - Recent changes [en]</title>
    <atom:link href="https://wiki.example/feed.rss" rel="self" type="application/rss+xml" />
    <link>https://wiki.example/wiki/Special:RecentChanges</link>
    <description>Track the most recent changes to the wiki in this feed.</description>
    <language>en</language>
    <lastBuildDate>Tue, 10 Jun 2003 09:41:01 GMT</lastBuildDate>
    <item>
      <title>Main Page</title>
      <link>https://wiki.example/index.php?title=Main_Page&amp;diff=12&amp;oldid=11</link>
      <guid isPermaLink="false">https://wiki.example/index.php?title=Main_Page&amp;diff=12&amp;oldid=11</guid>
      <description>&lt;p&gt;typo &amp;amp; style&lt;/p&gt;&lt;table&gt;&lt;tr&gt;&lt;td&gt;x&lt;/td&gt;&lt;/tr&gt;&lt;/table&gt;</description>
      <pubDate>Tue, 10 Jun 2003 04:00:00 GMT</pubDate>
      <dc:creator>Alice</dc:creator>
      <comments>https://wiki.example/wiki/Talk:Main_Page</comments>
    </item>
    <item>
      <title><![CDATA[Hello & <welcome>]]></title>
      <link><![CDATA[https://blog.example/?p=7&lang=en]]></link>
      <pubDate>Mon, 09 Jun 2003 23:00:00 -0500</pubDate>
      <guid isPermaLink="false">https://blog.example/?p=7</guid>
      <description><![CDATA[<p>First <a href="https://blog.example/x">post</a></p>]]></description>
      <content:encoded><![CDATA[<p>Body with <b>markup</b> &amp; an <item>-looking word</p>]]></content:encoded>
    </item>
    <item>
      <title>Permalink only</title>
      <guid>https://blog.example/2003/06/08/permalink/?a=1&#038;b=2</guid>
      <dc:date>2003-06-08T12:00:00+02:00</dc:date>
    </item>
    <item>
      <title>Undated</title>
      <link>https://wiki.example/wiki/Undated</link>
    </item>
    <item>
      <title>A guid that is no page</title>
      <guid isPermaLink="false">tag:blog.example,2003:post-9</guid>
      <pubDate>Sun, 08 Jun 2003 00:00:00 EST</pubDate>
    </item>
    <item>
      <title>Not a web page</title>
      <guid>urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6a</guid>
      <pubDate>Sun, 08 Jun 2003 00:00:00 PST</pubDate>
    </item>
  </channel>
</rss>
"#;

    #[test]
    fn rss_2_items_give_their_link_or_permalink_and_date() {
        assert_eq!(FeedKind::of(RSS), Some(FeedKind::Rss));
        assert!(is_feed(RSS) && is_whole(RSS));
        assert!(!is_whole(&RSS[..RSS.len() / 2]));
        let (entries, skipped) = parse(RSS).unwrap();
        assert_eq!(
            entries,
            [
                entry(
                    "https://wiki.example/index.php?title=Main_Page&diff=12&oldid=11",
                    "Tue, 10 Jun 2003 04:00:00 GMT"
                ),
                entry(
                    "https://blog.example/?p=7&lang=en",
                    "Mon, 09 Jun 2003 23:00:00 -0500"
                ),
                entry(
                    "https://blog.example/2003/06/08/permalink/?a=1&b=2",
                    "2003-06-08T12:00:00+02:00"
                ),
            ]
        );
        // Undated; a guid that is not a permalink; a permalink that is no http(s) page.
        assert_eq!(skipped, 3);
        // Every date reads, in either format, to the instant written.
        let times: Vec<f64> = entries
            .iter()
            .map(|e| crate::signal::parse_feed_date(&e.updated).unwrap())
            .collect();
        assert_eq!(times, [1_055_217_600.0, 1_055_217_600.0, 1_055_066_400.0]);
    }

    #[test]
    fn rss_1_rdf_items_give_their_link_or_about_and_dc_date() {
        let rdf = r#"<?xml version="1.0" encoding="utf-8"?>
<!-- generated by a wiki -->
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
         xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
  <channel rdf:about="https://wiki.example/rss">
    <title>Wiki</title><link>https://wiki.example/</link>
    <items><rdf:Seq>
      <rdf:li rdf:resource="https://wiki.example/A" />
      <rdf:li rdf:resource="https://wiki.example/B" />
    </rdf:Seq></items>
  </channel>
  <item rdf:about="https://wiki.example/A?about">
    <title>A</title><link>https://wiki.example/A</link>
    <dc:date>2003-06-10T04:00:00Z</dc:date>
  </item>
  <item rdf:about="https://wiki.example/B">
    <title>B</title>
    <dc:date>2003-06-09</dc:date>
  </item>
  <item rdf:about="https://wiki.example/C"><title>C, undated</title></item>
</rdf:RDF>"#;
        assert_eq!(FeedKind::of(rdf), Some(FeedKind::Rdf));
        assert!(is_whole(rdf));
        let (entries, skipped) = parse(rdf).unwrap();
        assert_eq!(
            entries,
            [
                entry("https://wiki.example/A", "2003-06-10T04:00:00Z"),
                entry("https://wiki.example/B", "2003-06-09"),
            ]
        );
        assert_eq!(skipped, 1);
        // RDF that is not RSS is not a feed.
        assert_eq!(FeedKind::of(r#"<rdf:RDF xmlns:rdf="x"></rdf:RDF>"#), None);
    }

    #[test]
    fn the_root_element_tells_the_format() {
        for (xml, kind) in [
            (
                "\u{feff}<?xml version='1.0'?><!DOCTYPE rss PUBLIC \"-//Netscape\" \"x\"><rss version=\"0.91\"></rss>",
                Some(FeedKind::Rss),
            ),
            (
                "<feed xmlns=\"http://www.w3.org/2005/Atom\"/>",
                Some(FeedKind::Atom),
            ),
            // An Atom namespace alone does not make an Atom feed.
            (
                "<rss xmlns:atom=\"http://www.w3.org/2005/Atom\"><channel><feedburner:info/></channel></rss>",
                Some(FeedKind::Rss),
            ),
            (
                "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><url><loc>https://a/feed</loc></url></urlset>",
                None,
            ),
            ("<html><body><rss></rss></body></html>", None),
            ("", None),
            ("<?xml version='1.0'", None),
        ] {
            assert_eq!(FeedKind::of(xml), kind, "{xml}");
        }
    }
}
