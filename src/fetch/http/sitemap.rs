//! Reading sitemaps (sitemaps.org 0.9): the `<loc>` and `<lastmod>` of every `<url>`, and the
//! `<loc>` of every nested `<sitemap>` of a sitemap index.
//!
//! A small tolerant reader rather than an XML crate (none is in the tree, and these documents
//! are flat lists of two known elements): unknown elements are skipped, entities and CDATA in
//! the text are decoded, an element left unterminated (a truncated document) ends the list.

/// What a sitemap document lists.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Sitemap {
    /// Page URLs (`<urlset>`), in document order.
    pub(crate) urls: Vec<String>,
    /// The `<lastmod>` text of each of [`Self::urls`] (`None`: the entry has none), as
    /// written: [`crate::signal::parse_w3c_datetime`] reads it.
    pub(crate) lastmod: Vec<Option<String>>,
    /// Nested sitemaps (`<sitemapindex>`), in document order.
    pub(crate) sitemaps: Vec<String>,
}

/// Parses a sitemap or sitemap index. Tolerant: unknown elements are skipped, entities in
/// `<loc>` are decoded, a `<loc>` outside `<url>`/`<sitemap>` is ignored.
pub fn parse(xml: &str) -> Sitemap {
    let mut out = Sitemap::default();
    let is_index = xml.contains("<sitemapindex");
    for block in blocks(xml, if is_index { "sitemap" } else { "url" }) {
        let Some(loc) = element(block, "loc").filter(|l| !l.is_empty()) else {
            continue;
        };
        if is_index {
            out.sitemaps.push(loc);
        } else {
            out.urls.push(loc);
            out.lastmod
                .push(element(block, "lastmod").filter(|d| !d.is_empty()));
        }
    }
    out
}

/// The contents of every complete `<tag>…</tag>` (or `<tag attributes>…`) of `xml`, in order.
pub(super) fn blocks<'a>(xml: &'a str, tag: &str) -> Vec<&'a str> {
    let open = format!("<{tag}");
    let close = format!("</{tag}>");
    let mut found = Vec::new();
    let mut rest = xml;
    while let Some(start) = rest.find(&open) {
        let after = &rest[start + open.len()..];
        // `<url>` or `<url …>`, not `<urlset`.
        if !after.starts_with(['>', ' ', '\t', '\r', '\n']) {
            rest = after;
            continue;
        }
        let Some(gt) = after.find('>') else {
            break;
        };
        let body = &after[gt + 1..];
        let Some(end) = body.find(&close) else {
            break;
        };
        found.push(&body[..end]);
        rest = &body[end + close.len()..];
    }
    found
}

/// The decoded, trimmed text of the first `<tag>…</tag>` in `xml`.
pub(super) fn element(xml: &str, tag: &str) -> Option<String> {
    blocks(xml, tag).first().map(|t| unescape(t.trim()))
}

pub(super) fn unescape(s: &str) -> String {
    let s = s
        .strip_prefix("<![CDATA[")
        .and_then(|x| x.strip_suffix("]]>"))
        .unwrap_or(s);
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_indexes_are_read_with_entities_decoded() {
        let m = parse(
            "<?xml version=\"1.0\"?><urlset><url><loc> https://a/x?p=1&amp;q=2 </loc>\
             <lastmod>2020-01-01</lastmod></url><url><loc>https://a/y</loc></url></urlset>",
        );
        assert_eq!(m.urls, ["https://a/x?p=1&q=2", "https://a/y"]);
        assert_eq!(m.lastmod, [Some("2020-01-01".to_string()), None]);
        let i =
            parse("<sitemapindex><sitemap><loc>https://a/s1.xml</loc></sitemap></sitemapindex>");
        assert_eq!(i.sitemaps, ["https://a/s1.xml"]);
        assert_eq!(parse("<urlset><url><loc>unterminated"), Sitemap::default());
        // A `<loc>` outside `<url>` is not a page; a truncated document keeps what was whole.
        let t = parse("<urlset><loc>https://a/stray</loc><url><loc>https://a/1</loc></url><url><loc>https://a/2");
        assert_eq!(t.urls, ["https://a/1"]);
    }
}
