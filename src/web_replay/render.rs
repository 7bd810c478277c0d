//! A captured page version as the HTML `web-replay` serves.
//!
//! A corpus keeps what the index needs of each capture (title, visible text, out-links), not
//! the captured bytes. The replayed page is rendered from that, so that the crawler's own HTML
//! extraction ([`crate::corpus::html::extract`]) reads back exactly the title, text and links
//! the simulator indexes: the crawl and the simulation index the same words. The capture's
//! content hash and capture time are written into the page, so two captures the corpus tells
//! apart are served as different bytes (and different `ETag`s) even when their extracted text
//! is equal — and even when their content is: a page deleted and re-created with the very
//! same body is a new version to the simulator (a copy held from before the deletion is not
//! fresh), so it must be new bytes to a crawl too.

use xxhash_rust::xxh3::xxh3_64;

use crate::corpus::{Corpus, LiveWeb, PageVersion};

/// The HTML served for `version` of a page of `corpus`.
///
/// Links are empty anchors after the text, so they add no visible words.
pub fn render(corpus: &Corpus, version: &PageVersion) -> String {
    let mut html = String::with_capacity(version.text.len() + 64 * version.links.len() + 256);
    html.push_str("<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>");
    escape_into(&mut html, &version.title);
    html.push_str("</title><meta name=\"capture-digest\" content=\"");
    html.push_str(&format!("{:016x}", version.content_hash));
    html.push_str("\"><meta name=\"capture-time\" content=\"");
    html.push_str(&version.capture_time.to_string());
    html.push_str("\"></head>\n<body><p>");
    escape_into(&mut html, &version.text);
    html.push_str("</p>\n");
    for &link in &version.links {
        html.push_str("<a href=\"");
        escape_into(&mut html, corpus.url(link));
        html.push_str("\"></a>\n");
    }
    html.push_str("</body></html>\n");
    html
}

/// The strong entity tag of a served body: its xxh3, as the crawler hashes bodies.
pub fn entity_hash(body: &[u8]) -> u64 {
    xxh3_64(body)
}

/// Escapes text for HTML or XML content and attribute values.
pub(crate) fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            // NUL is replaced by U+FFFD by every HTML parser; serve it as such.
            '\0' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::html::extract;
    use crate::index::testutil::random_corpus;

    #[test]
    fn extraction_reads_back_the_version_it_was_rendered_from() {
        let corpus = random_corpus(30, 5, 11);
        let mut checked = 0;
        for p in 0..corpus.page_count() as u32 {
            for v in &corpus.timeline(p).versions {
                if !v.is_present() {
                    continue;
                }
                let url = url::Url::parse(corpus.url(p)).ok();
                let page = extract(&render(&corpus, v), url.as_ref());
                assert_eq!(page.title, v.title, "page {p}");
                assert_eq!(page.text, v.text, "page {p}");
                let links: Vec<u32> = page
                    .links
                    .iter()
                    .map(|l| corpus.page_id(l).expect("a corpus URL"))
                    .collect();
                assert_eq!(links, v.links, "page {p}");
                checked += 1;
            }
        }
        assert!(checked > 30);
    }

    /// A page deleted and re-created with the very same body: the simulator holds two
    /// versions (a copy of the first is not fresh once the second is live), so they are served
    /// as different bytes. (This was why a crawl of a generated site judged one page fresh at
    /// units where `simulate` judged it stale.)
    #[test]
    fn a_recreated_page_with_the_same_body_is_served_as_new_bytes() {
        let corpus = random_corpus(3, 2, 1);
        let first = (*corpus.timeline(0).versions[0]).clone();
        let mut again = first.clone();
        again.unit = first.unit + 2;
        again.capture_time = first.capture_time + 2 * 7 * 86_400;
        assert_eq!(first.content_hash, again.content_hash);
        let (a, b) = (render(&corpus, &first), render(&corpus, &again));
        assert_ne!(entity_hash(a.as_bytes()), entity_hash(b.as_bytes()));
        assert_eq!(extract(&a, None).text, extract(&b, None).text);
    }

    #[test]
    fn markup_in_text_is_escaped() {
        let corpus = random_corpus(3, 2, 1);
        let mut v = (*corpus.timeline(0).versions[0]).clone();
        v.title = "a <b> & \"c\"".into();
        v.text = "x </p><script>alert(1)</script> y".into();
        let page = extract(&render(&corpus, &v), None);
        assert_eq!(page.title, v.title);
        assert_eq!(page.text, v.text);
    }
}
