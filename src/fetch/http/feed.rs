//! Reading a change feed (Atom 1.0, RFC 4287): the page each `<entry>` links to and its
//! `<updated>` date. What a crawl reads of a site's recent changes (`web-replay` serves one at
//! `/feed.atom`; robots.txt's `Sitemap:` lines may name one, as sitemaps.org allows).
//!
//! The same small tolerant reader as [`super::sitemap`] (no XML crate is in the tree): an
//! entry without a link or a date is skipped and counted, so the caller can say so.

use super::sitemap::{blocks, element, unescape};

/// One entry of a feed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedEntry {
    /// The page the entry is about: its `<link href>` (`rel="alternate"` or no `rel`).
    pub(crate) url: String,
    /// Its `<updated>` text (else `<published>`), as written.
    pub(crate) updated: String,
}

/// A document that is not an Atom feed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("not an Atom feed (no <feed xmlns=\"http://www.w3.org/2005/Atom\">)")]
pub struct NotAFeed;

/// Whether `xml` is an Atom feed (rather than a sitemap).
pub fn is_feed(xml: &str) -> bool {
    xml.contains("<feed") && xml.contains("http://www.w3.org/2005/Atom")
}

/// The entries of an Atom feed, in document order, and how many entries had no usable link
/// or date. `Err` when the document is not an Atom feed.
pub fn parse(xml: &str) -> Result<(Vec<FeedEntry>, usize), NotAFeed> {
    if !is_feed(xml) {
        return Err(NotAFeed);
    }
    let mut entries = Vec::new();
    let mut skipped = 0;
    for entry in blocks(xml, "entry") {
        let url = link_of(entry);
        let updated = element(entry, "updated").or_else(|| element(entry, "published"));
        match (url, updated) {
            (Some(url), Some(updated)) if !url.is_empty() && !updated.is_empty() => {
                entries.push(FeedEntry { url, updated })
            }
            _ => skipped += 1,
        }
    }
    Ok((entries, skipped))
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
        assert!(err.contains("not an Atom feed"), "{err}");
    }
}
