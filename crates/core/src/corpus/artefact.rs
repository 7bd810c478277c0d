//! Crawl artefacts: captures a crawler makes for itself, not pages a user searches.
//!
//! `wget --warc-file` and Heritrix record `robots.txt`, sitemaps and feeds next to the pages;
//! indexed as pages they would inflate the page count and put XML in the search results.
//! The decision is made from what the capture holds (its media type and its first bytes), not
//! from its URL: a page called `/feed.html` that is HTML is a page. The one exception is
//! `/robots.txt`, whose location the robots protocol fixes (RFC 9309 §2.3).

use std::io::Read;

/// What kind of crawl artefact a capture is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CrawlArtefact {
    /// `/robots.txt` at the root of a host.
    Robots,
    /// A sitemap (`<urlset>`), plain or gzip-compressed.
    Sitemap,
    /// A sitemap index (`<sitemapindex>`), plain or gzip-compressed.
    SitemapIndex,
    /// An RSS or Atom feed.
    Feed,
}

impl CrawlArtefact {
    /// The name the ingest report counts it under.
    pub fn name(self) -> &'static str {
        match self {
            CrawlArtefact::Robots => "robots",
            CrawlArtefact::Sitemap => "sitemap",
            CrawlArtefact::SitemapIndex => "sitemap_index",
            CrawlArtefact::Feed => "feed",
        }
    }
}

/// Bytes of a body looked at to find its root element (after gunzip for `.xml.gz` sitemaps):
/// an XML prolog, a doctype and comments fit well within it.
const SNIFF_BYTES: u64 = 4096;

/// The artefact a capture of `url` with HTTP media type `content_type` (lower case, no
/// parameters) and `body` is, or `None` for a page.
///
/// HTML (by media type) is always a page. A feed media type (`application/rss+xml`,
/// `application/atom+xml`) is a feed. Any other body whose root element is `<rss>`,
/// `<rdf:RDF>` or `<feed>` (feeds), `<urlset>` (sitemap) or `<sitemapindex>` is that
/// artefact, gzip-compressed or not.
pub fn crawl_artefact(url: &str, content_type: Option<&str>, body: &[u8]) -> Option<CrawlArtefact> {
    if is_robots_url(url) {
        return Some(CrawlArtefact::Robots);
    }
    match content_type {
        Some("text/html" | "application/xhtml+xml") => return None,
        Some("application/rss+xml" | "application/atom+xml" | "application/rdf+xml") => {
            return Some(CrawlArtefact::Feed)
        }
        _ => {}
    }
    let head = sniff_head(body);
    match root_element(&head)?.to_ascii_lowercase().as_str() {
        "rss" | "rdf:rdf" | "feed" => Some(CrawlArtefact::Feed),
        "urlset" => Some(CrawlArtefact::Sitemap),
        "sitemapindex" => Some(CrawlArtefact::SitemapIndex),
        _ => None,
    }
}

/// Whether `url` is a host's `/robots.txt` (query ignored).
fn is_robots_url(url: &str) -> bool {
    url::Url::parse(url).is_ok_and(|u| u.path() == "/robots.txt")
}

/// The first [`SNIFF_BYTES`] of `body`, inflated when it is gzip (an `.xml.gz` sitemap is
/// served as a gzip file, not with a `Content-Encoding`).
fn sniff_head(body: &[u8]) -> Vec<u8> {
    if body.starts_with(&[0x1f, 0x8b]) {
        let mut head = Vec::new();
        // A truncated or corrupt stream still gives the bytes inflated before the damage.
        let _ = flate2::read::GzDecoder::new(body)
            .take(SNIFF_BYTES)
            .read_to_end(&mut head);
        head
    } else {
        body[..body.len().min(SNIFF_BYTES as usize)].to_vec()
    }
}

/// The name of the first element of an XML document: after a byte-order mark, white space,
/// the `<?xml …?>` prolog, processing instructions, comments and a doctype.
fn root_element(head: &[u8]) -> Option<String> {
    xml_root_element(&String::from_utf8_lossy(head)).map(str::to_string)
}

/// The name of the first element of an XML document's text (after a byte-order mark, white
/// space, the prolog, processing instructions, comments and a doctype): what ingest classifies
/// artefacts by and the crawler's feed reader tells formats by.
pub(crate) fn xml_root_element(text: &str) -> Option<&str> {
    let mut rest = text.trim_start_matches('\u{feff}');
    loop {
        rest = rest.trim_start();
        if let Some(after) = rest.strip_prefix("<?") {
            rest = &after[after.find("?>")? + 2..];
        } else if let Some(after) = rest.strip_prefix("<!--") {
            rest = &after[after.find("-->")? + 3..];
        } else if let Some(after) = rest.strip_prefix("<!") {
            rest = &after[after.find('>')? + 1..];
        } else {
            let after = rest.strip_prefix('<')?;
            let end = after
                .find(|c: char| !(c.is_alphanumeric() || matches!(c, ':' | '-' | '_' | '.')))
                .unwrap_or(after.len());
            return Some(&after[..end]).filter(|name| !name.is_empty());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn robots_sitemaps_and_feeds_are_artefacts() {
        let sitemap = b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- made by hand -->\n\
            <urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><url><loc>http://s/a</loc>\
            </url></urlset>";
        let index = b"\xef\xbb\xbf<sitemapindex><sitemap><loc>http://s/m.xml</loc></sitemap>\
            </sitemapindex>";
        let rss = b"<?xml version=\"1.0\"?><rss version=\"2.0\"><channel/></rss>";
        let atom = b"<feed xmlns=\"http://www.w3.org/2005/Atom\"></feed>";
        let cases: [(&str, Option<&str>, &[u8], CrawlArtefact); 7] = [
            (
                "http://s/robots.txt",
                Some("text/plain"),
                b"User-agent: *",
                CrawlArtefact::Robots,
            ),
            (
                "http://s/sitemap.xml",
                Some("application/xml"),
                sitemap,
                CrawlArtefact::Sitemap,
            ),
            (
                "http://s/any-name",
                Some("text/xml"),
                index,
                CrawlArtefact::SitemapIndex,
            ),
            ("http://s/rss", Some("text/xml"), rss, CrawlArtefact::Feed),
            ("http://s/atom", None, atom, CrawlArtefact::Feed),
            (
                "http://s/feed",
                Some("application/rss+xml"),
                b"not even xml",
                CrawlArtefact::Feed,
            ),
            (
                "http://s/a.xml",
                Some("application/atom+xml"),
                atom,
                CrawlArtefact::Feed,
            ),
        ];
        for (url, content_type, body, kind) in cases {
            assert_eq!(crawl_artefact(url, content_type, body), Some(kind), "{url}");
        }
    }

    #[test]
    fn gzip_sitemaps_are_sniffed_after_inflating() {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), Default::default());
        gz.write_all(b"<?xml version=\"1.0\"?>\n<urlset><url><loc>http://s/a</loc></url></urlset>")
            .unwrap();
        let body = gz.finish().unwrap();
        for content_type in [
            Some("application/x-gzip"),
            Some("application/octet-stream"),
            None,
        ] {
            assert_eq!(
                crawl_artefact("http://s/sitemap.xml.gz", content_type, &body),
                Some(CrawlArtefact::Sitemap)
            );
        }
    }

    #[test]
    fn html_and_other_xml_are_pages_whatever_the_url() {
        let html = b"<!DOCTYPE html><html><title>Feed</title><p>news</p></html>";
        assert_eq!(
            crawl_artefact("http://s/feed.html", Some("text/html"), html),
            None
        );
        assert_eq!(crawl_artefact("http://s/sitemap.xml", None, html), None);
        // HTML by media type wins even over a body that looks like a feed.
        assert_eq!(
            crawl_artefact("http://s/feed", Some("text/html"), b"<rss></rss>"),
            None
        );
        let svg = b"<?xml version=\"1.0\"?><svg xmlns=\"http://www.w3.org/2000/svg\"/>";
        assert_eq!(
            crawl_artefact("http://s/a.svg", Some("image/svg+xml"), svg),
            None
        );
        assert_eq!(
            crawl_artefact("http://s/notes.txt", Some("text/plain"), b"hi"),
            None
        );
        // Only the host's root robots.txt is the robots file.
        assert_eq!(
            crawl_artefact("http://s/docs/robots.txt", Some("text/plain"), b"x"),
            None
        );
    }
}
