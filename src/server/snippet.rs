//! Highlighted snippets from the repository copy's stored text.
//!
//! The text is cut with the index's own `en_stem` pipeline, whose tokens carry byte offsets into
//! the original text, so a word is marked exactly when the index would match it against a query
//! term (`running` is marked for the query `run`). Everything else is HTML-escaped, so the only
//! markup in a snippet is our own `<b>…</b>`.

use std::collections::HashSet;

use tantivy::tokenizer::{TextAnalyzer, TokenStream};

use crate::text::Analyzer;

/// Words of context shown before the first match.
const LEAD_TOKENS: usize = 8;

/// Builds snippets for one query (one per result). Not `Sync`: make one per request.
pub struct Snippeter {
    analyzer: TextAnalyzer,
    terms: HashSet<String>,
    /// Approximate snippet length in bytes of source text.
    pub(crate) max_bytes: usize,
}

impl Snippeter {
    /// `terms`: the query's analyzed terms.
    pub fn new(terms: &[String]) -> Self {
        Snippeter {
            // tantivy's own pipeline: the snippet needs each token's byte offsets.
            analyzer: Analyzer::tantivy_en_stem(),
            terms: terms.iter().cloned().collect(),
            max_bytes: 240,
        }
    }

    /// An HTML snippet of `text`: a window starting a few words before the first query term,
    /// with every query-term occurrence in `<b>`; the start of the text when no term occurs.
    pub fn snippet(&mut self, text: &str) -> String {
        // (start, end, is_match) of every token, up to the end of the window.
        let mut tokens: Vec<(usize, usize, bool)> = Vec::new();
        let mut first_match: Option<usize> = None;
        let mut stream = self.analyzer.token_stream(text);
        while stream.advance() {
            let t = stream.token();
            let hit = self.terms.contains(&t.text);
            if hit && first_match.is_none() {
                first_match = Some(tokens.len());
            }
            tokens.push((t.offset_from, t.offset_to, hit));
            if let Some(f) = first_match {
                let window_start = tokens[f.saturating_sub(LEAD_TOKENS)].0;
                if t.offset_to > window_start + self.max_bytes {
                    break;
                }
            }
        }
        let start_token = first_match.map_or(0, |f| f.saturating_sub(LEAD_TOKENS));
        // From the very start of the text when the window starts at its first token, so
        // leading punctuation is kept.
        let start = match start_token {
            0 => 0,
            i => tokens.get(i).map_or(0, |t| t.0),
        };
        let limit = floor_char_boundary(text, (start + self.max_bytes).min(text.len()));
        let mut out = String::with_capacity(self.max_bytes + 64);
        if start > 0 {
            out.push('…');
        }
        let mut at = start;
        for &(from, to, hit) in &tokens[start_token.min(tokens.len())..] {
            if to > limit {
                break;
            }
            if hit {
                escape_into(&mut out, &text[at..from]);
                out.push_str("<b>");
                escape_into(&mut out, &text[from..to]);
                out.push_str("</b>");
                at = to;
            }
        }
        // Cut the tail at the last whitespace before the limit so no word is split.
        let tail_end = if limit < text.len() {
            text[at..limit]
                .rfind(char::is_whitespace)
                .map_or(limit, |i| at + i)
        } else {
            limit
        };
        escape_into(&mut out, &text[at..tail_end.max(at)]);
        if tail_end < text.len() {
            out.push('…');
        }
        out
    }
}

fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Appends `s` with `& < > " '` escaped.
pub fn escape_into(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(q: &str) -> Vec<String> {
        crate::text::Analyzer::new().distinct_terms(q)
    }

    #[test]
    fn marks_stemmed_matches_and_escapes_the_rest() {
        let mut s = Snippeter::new(&terms("run"));
        let out = s.snippet("<script> Running a job & runs again");
        assert_eq!(
            out,
            "&lt;script&gt; <b>Running</b> a job &amp; <b>runs</b> again"
        );
    }

    #[test]
    fn windows_long_texts_around_the_first_match() {
        let filler = "word ".repeat(200);
        let text = format!("{filler}needle here {filler}");
        let mut s = Snippeter::new(&terms("needle"));
        let out = s.snippet(&text);
        assert!(out.starts_with('…') && out.ends_with('…'), "{out}");
        assert!(out.contains("<b>needle</b>"));
        assert!(out.len() < 400, "{}", out.len());
    }

    #[test]
    fn no_match_gives_the_start_of_the_text() {
        let mut s = Snippeter::new(&terms("absent"));
        assert_eq!(s.snippet("short text"), "short text");
        let long = "é ".repeat(500);
        let out = s.snippet(&long);
        assert!(out.ends_with('…') && !out.contains("<b>"));
    }
}
