//! HTML → title, visible text and out-links, with a real HTML5 parser (`scraper`/html5ever).
//!
//! A regex or tag-stripping approach would mis-handle comments, `<script>` bodies containing
//! `<`, implicit end tags and character references; the index must see the text a browser
//! shows, so we parse. Text is whitespace-normalised, and element boundaries of block-level
//! elements (and `<br>`) become spaces so `<li>a</li><li>b</li>` yields `a b`, while inline
//! markup (`<b>Em</b>acs`) does not split words.
//!
//! The same walk counts the structural features paper 000 (Tan & Mitra, TOIS 2010, §3.1)
//! clusters pages by: `<img>` and `<table>` elements and distinct e-mail addresses.
//!
//! [`page_version_from_html`] makes one fetched page a [`PageVersion`] (extraction, analysis,
//! term interning) exactly as ingest makes a WARC response one; ingest shares its helpers.

use std::collections::BTreeSet;
use std::sync::{Arc, LazyLock};

use regex::Regex;
use rustc_hash::FxHashMap;
use scraper::{Html, Node};
use url::Url;
use xxhash_rust::xxh3::xxh3_64;

use super::{PageCounts, PageId, PageVersion, Unit};
use crate::text::{Analyzer, TermCounts, Vocabulary};

/// What the index and the link graph need from one HTML page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExtractedPage {
    /// Text of the first `<title>`, whitespace-normalised.
    pub title: String,
    /// Visible text of the document (outside `<head>`, `<script>`, `<style>`, `<noscript>`,
    /// `<template>`), whitespace-normalised.
    pub text: String,
    /// `href`s of `<a>` and `<area>` elements resolved against the page URL, fragment dropped,
    /// http(s) only, in document order, deduplicated.
    pub links: Vec<String>,
    /// Number of `<img>` elements (hidden ones included: they are markup, not text).
    pub(crate) images: u32,
    /// Number of `<table>` elements, nested tables included.
    pub(crate) tables: u32,
    /// Distinct e-mail addresses (case-insensitive): `mailto:` targets of `<a>`/`<area>`
    /// together with addresses written in the visible text.
    pub(crate) emails: u32,
}

/// An address as people write them in text: RFC 5322's common `local@domain.tld` shape, not
/// its full grammar (quoted local parts and address literals are rare on the Web).
static EMAIL_IN_TEXT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}")
        .expect("valid e-mail pattern")
});

/// The addresses of a `mailto:` href (several may be comma-separated; `?subject=…` dropped),
/// lower-cased; `None` when `href` is not a mailto link.
fn mailto_addresses(href: &str) -> Option<impl Iterator<Item = String> + '_> {
    let href = href.trim();
    let scheme = href.get(..7)?;
    if !scheme.eq_ignore_ascii_case("mailto:") {
        return None;
    }
    let to = href[7..].split('?').next().unwrap_or("");
    Some(
        to.split(',')
            .map(|a| a.trim().to_ascii_lowercase())
            .filter(|a| a.contains('@')),
    )
}

/// Elements whose content is never shown as page text.
fn is_hidden(name: &str) -> bool {
    matches!(
        name,
        "head" | "title" | "script" | "style" | "noscript" | "template"
    )
}

/// Elements that separate words in rendered text.
fn is_block(name: &str) -> bool {
    matches!(
        name,
        "address"
            | "article"
            | "aside"
            | "blockquote"
            | "body"
            | "br"
            | "caption"
            | "dd"
            | "details"
            | "div"
            | "dl"
            | "dt"
            | "fieldset"
            | "figcaption"
            | "figure"
            | "footer"
            | "form"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "header"
            | "hr"
            | "li"
            | "main"
            | "nav"
            | "ol"
            | "option"
            | "p"
            | "pre"
            | "section"
            | "summary"
            | "table"
            | "tbody"
            | "td"
            | "tfoot"
            | "th"
            | "thead"
            | "tr"
            | "ul"
    )
}

/// `char::is_whitespace` of an ASCII byte: the space or `\t \n \x0B \x0C \r` (9 to 13),
/// written without branches so that loops over bytes vectorise.
fn is_ascii_space(b: u8) -> bool {
    (b == b' ') | (b.wrapping_sub(b'\t') < 5)
}

/// `s.split_whitespace().count()`: on ASCII, the bytes that start a word, counted in one pass.
pub(crate) fn whitespace_word_count(s: &str) -> usize {
    if !s.is_ascii() {
        return s.split_whitespace().count();
    }
    let bytes = s.as_bytes();
    let Some((&first, rest)) = bytes.split_first() else {
        return 0;
    };
    let starts: usize = bytes
        .iter()
        .zip(rest)
        .map(|(&before, &at)| usize::from(is_ascii_space(before) & !is_ascii_space(at)))
        .sum();
    usize::from(!is_ascii_space(first)) + starts
}

/// Appends `s` to `out` with runs of whitespace collapsed to one space.
///
/// Each run of whitespace becomes a [`push_space`], each word is copied. On ASCII text, the
/// stretches that are already words joined by single spaces are copied in one piece (a single
/// space between two words is what `push_space` would put there).
fn push_normalised(out: &mut String, s: &str) {
    if !s.is_ascii() {
        return push_normalised_unicode(out, s);
    }
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if is_ascii_space(bytes[i]) {
            while i < bytes.len() && is_ascii_space(bytes[i]) {
                i += 1;
            }
            push_space(out);
            continue;
        }
        let start = i;
        while i < bytes.len()
            && (!is_ascii_space(bytes[i])
                || (bytes[i] == b' ' && bytes.get(i + 1).is_some_and(|&b| !is_ascii_space(b))))
        {
            i += 1;
        }
        out.push_str(&s[start..i]);
    }
}

/// [`push_normalised`] word by word, for text with non-ASCII characters.
fn push_normalised_unicode(out: &mut String, s: &str) {
    for (i, word) in s.split_whitespace().enumerate() {
        if i > 0 || (s.starts_with(char::is_whitespace) && !out.is_empty()) {
            push_space(out);
        }
        out.push_str(word);
    }
    if s.ends_with(char::is_whitespace) && !out.is_empty() {
        push_space(out);
    }
}

fn push_space(out: &mut String) {
    if !out.is_empty() && !out.ends_with(' ') {
        out.push(' ');
    }
}

/// Extracts title, visible text and resolved out-links from `html`; `base` is the page URL.
///
/// Relative links are dropped when `base` is `None` (the page URL did not parse).
pub fn extract(html: &str, base: Option<&Url>) -> ExtractedPage {
    let doc = Html::parse_document(html);
    let mut page = ExtractedPage::default();
    let mut title_done = false;
    let mut in_title = false;
    // Depth of hidden elements we are inside; text is kept only at depth 0.
    let mut hidden = 0usize;
    let mut seen_links = std::collections::HashSet::new();
    let mut emails: BTreeSet<String> = BTreeSet::new();
    // Iterative depth-first walk (no recursion: deeply nested markup must not overflow the
    // stack); `true` marks the closing visit of an element.
    let mut stack = vec![(doc.tree.root(), false)];
    while let Some((node, closing)) = stack.pop() {
        if closing {
            if let Node::Element(el) = node.value() {
                let name = el.name();
                if name == "title" && in_title {
                    in_title = false;
                    title_done = true;
                }
                if is_hidden(name) {
                    hidden = hidden.saturating_sub(1);
                } else if hidden == 0 && is_block(name) {
                    push_space(&mut page.text);
                }
            }
            continue;
        }
        match node.value() {
            Node::Element(el) => {
                let name = el.name();
                if name == "title" && !title_done {
                    in_title = true;
                }
                if is_hidden(name) {
                    hidden += 1;
                } else if hidden == 0 && is_block(name) {
                    push_space(&mut page.text);
                }
                match name {
                    "img" => page.images += 1,
                    "table" => page.tables += 1,
                    _ => {}
                }
                if name == "a" || name == "area" {
                    if let Some(href) = el.attr("href") {
                        if let Some(addresses) = mailto_addresses(href) {
                            emails.extend(addresses);
                        } else if let Some(link) = resolve(href, base) {
                            if seen_links.insert(link.clone()) {
                                page.links.push(link);
                            }
                        }
                    }
                }
                stack.push((node, true));
            }
            Node::Text(t) => {
                if in_title {
                    push_normalised(&mut page.title, t);
                } else if hidden == 0 {
                    push_normalised(&mut page.text, t);
                }
            }
            Node::Document | Node::Fragment => {}
            _ => continue,
        }
        stack.extend(node.children().rev().map(|c| (c, false)));
    }
    trim_end_space(&mut page.title);
    trim_end_space(&mut page.text);
    emails.extend(
        EMAIL_IN_TEXT
            .find_iter(&page.text)
            .map(|m| m.as_str().to_ascii_lowercase()),
    );
    page.emails = emails.len() as u32;
    page
}

fn trim_end_space(s: &mut String) {
    while s.ends_with(' ') {
        s.pop();
    }
}

/// Resolves an `href` against the page URL; `None` for non-http(s) targets (mailto:,
/// javascript:, ...) and unparsable ones. The fragment is dropped: `P#section` is page `P`.
pub(crate) fn resolve(href: &str, base: Option<&Url>) -> Option<String> {
    let href = href.trim();
    if href.is_empty() || href.starts_with('#') {
        return None;
    }
    let mut url = match base {
        Some(b) => b.join(href).ok()?,
        None => Url::parse(href).ok()?,
    };
    if url.scheme() != "http" && url.scheme() != "https" {
        return None;
    }
    url.set_fragment(None);
    Some(url.into())
}

/// The form used to match a URL against the corpus: parsed by `url` (so equivalent spellings
/// agree with resolved links) and without fragment; the raw string when it does not parse.
pub fn normalise_url(raw: &str) -> String {
    match Url::parse(raw) {
        Ok(mut u) => {
            u.set_fragment(None);
            u.into()
        }
        Err(_) => raw.to_string(),
    }
}

/// One fetched HTML page as a [`PageVersion`], read exactly as ingest reads a WARC response:
/// the same extraction, analysis and term interning (into `vocabulary`). Out-links are kept
/// as ids where `link_id` knows the URL (never `own`); every resolved link URL is returned
/// too, for a crawler's frontier. `body` need not be UTF-8 (decoded lossily, as ingest does).
/// `media_type` is the response's `Content-Type` media type, as a WARC response's is read
/// (`None`: the body decides).
#[allow(clippy::too_many_arguments)]
pub fn page_version_from_html(
    analyzer: &mut Analyzer,
    vocabulary: &mut Vocabulary,
    url: &str,
    own: PageId,
    when: (Unit, i64),
    body: &[u8],
    media_type: Option<&str>,
    link_id: &dyn Fn(&str) -> Option<PageId>,
) -> (PageVersion, Vec<String>) {
    let html_text = String::from_utf8_lossy(body);
    let base = Url::parse(url).ok();
    let page = extract(&html_text, base.as_ref());
    let counts = PageCounts::of(body, &page, media_type);
    let indexed = indexed_text(&page.title, &page.text);
    let (terms, length) = distinct_terms(analyzer, &indexed);
    let mut links: Vec<PageId> = page
        .links
        .iter()
        .filter_map(|l| link_id(&normalise_url(l)))
        .filter(|&id| id != own)
        .collect();
    links.sort_unstable();
    links.dedup();
    let version = PageVersion {
        unit: when.0,
        capture_time: when.1,
        status: 200,
        content_hash: xxh3_64(body),
        title: exact_string(page.title),
        text: exact_string(page.text),
        links: exact_vec(links),
        terms: Arc::new(sorted_counts(
            terms
                .into_iter()
                .map(|(t, n)| (vocabulary.intern_owned(t), n))
                .collect(),
            length,
        )),
        counts,
    };
    (version, page.links)
}

/// Same text as [`PageVersion::indexed_text`], before the version exists.
pub(super) fn indexed_text(title: &str, text: &str) -> String {
    if title.is_empty() {
        text.to_string()
    } else {
        format!("{title}\n{text}")
    }
}

/// Distinct terms in first-occurrence order with their counts, and the token count.
///
/// One allocation per distinct term (the map's key, moved into the result); FxHash because the
/// keys are short analyzed terms from our own tokenizer, hashed millions of times per corpus.
fn distinct_terms(analyzer: &mut Analyzer, text: &str) -> (Vec<(String, u32)>, u32) {
    let mut index: FxHashMap<String, (u32, u32)> = FxHashMap::default();
    let mut length = 0u32;
    analyzer.for_each_term(text, |t| {
        length += 1;
        if let Some(entry) = index.get_mut(t) {
            entry.1 += 1;
        } else {
            let order = index.len() as u32;
            index.insert(t.to_string(), (order, 1));
        }
    });
    let mut terms: Vec<(u32, String, u32)> = index
        .into_iter()
        .map(|(term, (order, count))| (order, term, count))
        .collect();
    terms.sort_unstable_by_key(|t| t.0);
    (
        terms
            .into_iter()
            .map(|(_, term, count)| (term, count))
            .collect(),
        length,
    )
}

/// A [`TermCounts`] of `(term id, count)` pairs in any order, in an allocation of its length
/// (see [`exact_vec`]).
pub(super) fn sorted_counts(mut counts: Vec<(u32, u32)>, length: u32) -> TermCounts {
    counts.sort_unstable_by_key(|&(t, _)| t);
    TermCounts {
        counts: exact_vec(counts),
        length,
    }
}

/// `v` in an allocation of its length, for what a corpus keeps for the whole run (every
/// version's text and terms). Vectors grown by pushing keep up to half their capacity spare,
/// and `shrink_to_fit` frees none of it under mimalloc (its `realloc` keeps a block shrunk to
/// half or more in place), so the elements are copied into a new allocation instead.
pub(super) fn exact_vec<T: Clone>(v: Vec<T>) -> Vec<T> {
    if v.capacity() > v.len() {
        v.as_slice().to_vec()
    } else {
        v
    }
}

/// [`exact_vec`] for text.
pub(super) fn exact_string(s: String) -> String {
    if s.capacity() > s.len() {
        s.as_str().to_owned()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_corpus_keeps_holds_no_spare_capacity() {
        let mut text = String::with_capacity(64);
        text.push_str("kept text");
        let text = exact_string(text);
        assert_eq!((text.as_str(), text.capacity()), ("kept text", 9));
        let mut counts = Vec::with_capacity(16);
        counts.extend([(7, 1), (3, 2)]);
        let counts = sorted_counts(counts, 3);
        assert_eq!(counts.counts, [(3, 2), (7, 1)]);
        assert_eq!(counts.counts.capacity(), 2);
        let exact = vec![1u32, 2];
        let pointer = exact.as_ptr();
        let kept = exact_vec(exact);
        assert_eq!(
            kept.as_ptr(),
            pointer,
            "an exact vector is kept, not copied"
        );
    }

    #[test]
    fn ascii_space_is_char_whitespace() {
        for b in 0..=127u8 {
            assert_eq!(is_ascii_space(b), (b as char).is_whitespace(), "{b}");
        }
    }

    #[test]
    fn word_count_is_split_whitespace_count() {
        for s in [
            "",
            " ",
            "a",
            "  two\twords \n",
            "vertical\x0Btab\x0Cfeed\rreturn",
            "no-break\u{a0}space and\u{2003}em space",
            "\u{85}next line, é accents",
            "trailing  ",
        ] {
            assert_eq!(
                whitespace_word_count(s),
                s.split_whitespace().count(),
                "{s:?}"
            );
        }
    }

    /// The bytewise ASCII normalisation appends what the word-by-word one does, after any
    /// earlier text (empty, ending in a word, ending in a space).
    #[test]
    fn ascii_normalisation_equals_word_by_word() {
        let pieces = [
            "",
            " ",
            "\t\n",
            "a",
            "one two",
            " lead",
            "trail ",
            "  two  spaces  ",
            "tab\tand\x0Bvt\x0Cff\r\ncrlf",
            "x y z ",
            "a  b",
            " a b c d ",
        ];
        for before in ["", "word", "space "] {
            for s in pieces {
                let mut fast = before.to_string();
                let mut slow = before.to_string();
                push_normalised(&mut fast, s);
                push_normalised_unicode(&mut slow, s);
                assert_eq!(fast, slow, "{before:?} + {s:?}");
                // And chained: a second piece after the first.
                for t in pieces {
                    let (mut f2, mut s2) = (fast.clone(), slow.clone());
                    push_normalised(&mut f2, t);
                    push_normalised_unicode(&mut s2, t);
                    assert_eq!(f2, s2, "{before:?} + {s:?} + {t:?}");
                }
            }
        }
    }

    fn base() -> Url {
        Url::parse("https://www.emacswiki.org/emacs/Page").unwrap()
    }

    #[test]
    fn title_text_and_hidden_elements() {
        let html = "<!DOCTYPE html><html><head><title> Emacs\n  Wiki </title>\
            <style>p { color: red }</style><script>var x = '<p>no</p>';</script></head>\
            <body><h1>Emacs Wiki</h1><p>Hello <b>Em</b>acs&amp;friends</p>\
            <noscript>enable js</noscript><template><p>tmpl</p></template>\
            <ul><li>one</li><li>two</li></ul><!-- comment --></body></html>";
        let page = extract(html, Some(&base()));
        assert_eq!(page.title, "Emacs Wiki");
        assert_eq!(page.text, "Emacs Wiki Hello Emacs&friends one two");
    }

    #[test]
    fn links_resolved_deduped_without_fragments() {
        let html = r##"<body><a href="Other">o</a> <a href="/emacs/Other#top">o2</a>
            <a href="https://example.com/x?q=1#f">ex</a> <a href="#local">self</a>
            <a href="mailto:a@b.c">mail</a> <a href="javascript:void(0)">js</a>
            <a>no href</a> <a href="../emacs/Third">t</a></body>"##;
        let page = extract(html, Some(&base()));
        assert_eq!(
            page.links,
            vec![
                "https://www.emacswiki.org/emacs/Other",
                "https://example.com/x?q=1",
                "https://www.emacswiki.org/emacs/Third",
            ]
        );
    }

    #[test]
    fn structural_counts() {
        let html = r#"<html><head><title>T</title></head><body>
            <p>Write to Someone@Example.org or help@site1.example, not to a@b or @x.org.</p>
            <img src="a.png"><p><img src="b.png" alt="b"></p>
            <table><tr><td><table><tr><td>inner</td></tr></table></td></tr></table>
            <a href="mailto:someone@example.org?subject=hi">mail</a>
            <a href="MAILTO:x@y.com,z@w.net">two</a>
            <div><img src="c.png"/></div>
            <a href="/page">a link</a></body></html>"#;
        let page = extract(html, Some(&base()));
        assert_eq!(page.images, 3);
        assert_eq!(page.tables, 2);
        // someone@example.org (text and mailto, once), help@site1.example, x@y.com, z@w.net.
        assert_eq!(page.emails, 4);
        assert_eq!(page.links, vec!["https://www.emacswiki.org/page"]);
    }

    #[test]
    fn no_markup_counts_zero() {
        let page = extract("<p>plain words only</p>", None);
        assert_eq!((page.images, page.tables, page.emails), (0, 0, 0));
    }

    #[test]
    fn relative_links_need_a_base() {
        let page = extract(
            r#"<a href="rel">r</a><a href="http://a.org/abs">a</a>"#,
            None,
        );
        assert_eq!(page.links, vec!["http://a.org/abs"]);
    }

    #[test]
    fn broken_html_still_yields_text() {
        let page = extract("<p>unclosed <div>nested<p>para", None);
        assert_eq!(page.text, "unclosed nested para");
        assert_eq!(page.title, "");
    }

    #[test]
    fn normalised_urls_match_resolved_links() {
        assert_eq!(
            normalise_url("HTTPS://www.EmacsWiki.org/emacs/Page#x"),
            "https://www.emacswiki.org/emacs/Page"
        );
        assert_eq!(normalise_url("not a url"), "not a url");
    }
}
