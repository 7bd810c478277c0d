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
    pub urls: Vec<String>,
    /// The `<lastmod>` text of each of [`Self::urls`] (`None`: the entry has none), as
    /// written: [`crate::signal::parse_w3c_datetime`] reads it.
    pub lastmod: Vec<Option<String>>,
    /// Nested sitemaps (`<sitemapindex>`), in document order.
    pub sitemaps: Vec<String>,
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
    tagged(xml, tag).into_iter().map(|(_, body)| body).collect()
}

/// The attributes and contents of every complete `<tag>…</tag>` (or `<tag attributes>…`) of
/// `xml`, in order; a `<tag …/>` has empty contents.
pub(super) fn tagged<'a>(xml: &'a str, tag: &str) -> Vec<(&'a str, &'a str)> {
    let open = format!("<{tag}");
    let close = format!("</{tag}>");
    let mut found = Vec::new();
    let mut rest = xml;
    while let Some(start) = rest.find(&open) {
        let after = &rest[start + open.len()..];
        // `<url>` or `<url …>`, not `<urlset`.
        if !after.starts_with(['>', ' ', '\t', '\r', '\n', '/']) {
            rest = after;
            continue;
        }
        let Some(gt) = after.find('>') else {
            break;
        };
        if let Some(attributes) = after[..gt].strip_suffix('/') {
            found.push((attributes, ""));
            rest = &after[gt + 1..];
            continue;
        }
        let body = &after[gt + 1..];
        let Some(end) = body.find(&close) else {
            break;
        };
        found.push((&after[..gt], &body[..end]));
        rest = &body[end + close.len()..];
    }
    found
}

/// The decoded, trimmed text of the first `<tag>…</tag>` in `xml`.
pub(super) fn element(xml: &str, tag: &str) -> Option<String> {
    blocks(xml, tag).first().map(|t| unescape(t.trim()))
}

/// XML character data as text (XML 1.0 §2.4, §2.7, §4.1): CDATA sections kept as written,
/// the five predefined entities and character references (`&#38;`, `&#x26;`, as WordPress
/// writes `&` in its links) decoded; an unknown or malformed reference stays as written.
pub(super) fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find(['&', '<']) {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        if let Some(cdata) = rest.strip_prefix("<![CDATA[") {
            let end = cdata.find("]]>").unwrap_or(cdata.len());
            out.push_str(&cdata[..end]);
            rest = cdata.get(end + 3..).unwrap_or("");
            continue;
        }
        let decoded = rest[1..]
            .find(';')
            .filter(|&end| end <= 10)
            .and_then(|end| Some((reference(&rest[1..1 + end])?, end)));
        match decoded {
            Some((c, end)) => {
                out.push(c);
                rest = &rest[end + 2..];
            }
            None => {
                out.push_str(&rest[..1]);
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The character an entity or character reference names (`amp`, `#38`, `#x26`).
fn reference(name: &str) -> Option<char> {
    let code = match name {
        "lt" => return Some('<'),
        "gt" => return Some('>'),
        "amp" => return Some('&'),
        "quot" => return Some('"'),
        "apos" => return Some('\''),
        _ => name.strip_prefix('#')?,
    };
    let value = match code.strip_prefix(['x', 'X']) {
        Some(hex) => u32::from_str_radix(hex, 16).ok()?,
        None => code.parse().ok()?,
    };
    char::from_u32(value)
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

    #[test]
    fn text_decodes_entities_references_and_cdata() {
        for (raw, text) in [
            ("a&amp;b&lt;c&gt;&quot;&apos;", "a&b<c>\"'"),
            ("p=1&#038;q=2&#x26;r=&#X26;", "p=1&q=2&r=&"),
            ("caf&#233; &#x2019;", "caf\u{e9} \u{2019}"),
            ("<![CDATA[a&amp;<b>]]>", "a&amp;<b>"),
            ("x <![CDATA[&]]> y &amp;", "x & y &"),
            // Not references: kept as written.
            (
                "a & b &unknown; &#xZZ; &#1114112; &",
                "a & b &unknown; &#xZZ; &#1114112; &",
            ),
            ("&amp;amp;", "&amp;"),
            ("<![CDATA[unterminated", "unterminated"),
        ] {
            assert_eq!(unescape(raw), text, "{raw}");
        }
        // A self-closing element is there, empty; it does not swallow what follows.
        let xml = "<item><guid isPermaLink='false'/><link>x</link></item><guid>y</guid>";
        assert_eq!(
            tagged(xml, "guid"),
            [(" isPermaLink='false'", ""), ("", "y")]
        );
        assert_eq!(element(xml, "link").as_deref(), Some("x"));
    }
}
