//! Reading sitemaps (sitemaps.org 0.9): the `<loc>` of every `<url>`, and of every nested
//! `<sitemap>` of a sitemap index.

/// What a sitemap document lists.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Sitemap {
    /// Page URLs (`<urlset>`), in document order.
    pub urls: Vec<String>,
    /// Nested sitemaps (`<sitemapindex>`), in document order.
    pub sitemaps: Vec<String>,
}

/// Parses a sitemap or sitemap index. Tolerant: unknown elements are skipped, entities in
/// `<loc>` are decoded, a `<loc>` outside `<url>`/`<sitemap>` is ignored.
pub fn parse(xml: &str) -> Sitemap {
    let mut out = Sitemap::default();
    let is_index = xml.contains("<sitemapindex");
    let mut rest = xml;
    while let Some(start) = rest.find("<loc>") {
        let after = &rest[start + 5..];
        let Some(end) = after.find("</loc>") else {
            break;
        };
        let loc = unescape(after[..end].trim());
        if !loc.is_empty() {
            if is_index {
                out.sitemaps.push(loc);
            } else {
                out.urls.push(loc);
            }
        }
        rest = &after[end + 6..];
    }
    out
}

fn unescape(s: &str) -> String {
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
        let i =
            parse("<sitemapindex><sitemap><loc>https://a/s1.xml</loc></sitemap></sitemapindex>");
        assert_eq!(i.sitemaps, ["https://a/s1.xml"]);
        assert_eq!(parse("<urlset><url><loc>unterminated"), Sitemap::default());
    }
}
