//! The one text analyzer of the system.
//!
//! The index, the workload normaliser, the forward indexes and every scorer must cut text into
//! the very same terms, or a query term would never meet the postings it was meant for and the
//! hook's scores would drift from the searcher's. They all go through [`Analyzer`], which wraps
//! tantivy's built-in `en_stem` pipeline (simple tokenizer, drop tokens longer than 40 bytes,
//! lower-case, English Porter stemmer).

mod vocabulary;

use tantivy::tokenizer::{TextAnalyzer, TokenStream, TokenizerManager};

pub use vocabulary::{TermCounts, TermId, Vocabulary};

/// Name of the tantivy analyzer used for every indexed text field.
pub const ANALYZER_NAME: &str = "en_stem";

/// A reusable handle on the `en_stem` pipeline. Cheap to clone; not `Sync` (one per thread).
#[derive(Clone)]
pub struct Analyzer {
    inner: TextAnalyzer,
}

impl Default for Analyzer {
    fn default() -> Self {
        Self::new()
    }
}

impl Analyzer {
    pub fn new() -> Self {
        let inner = TokenizerManager::default()
            .get(ANALYZER_NAME)
            .expect("tantivy always registers en_stem");
        Analyzer { inner }
    }

    /// Calls `sink` with each term of `text`, in order, exactly as tantivy indexes them.
    pub fn for_each_term(&mut self, text: &str, mut sink: impl FnMut(&str)) {
        let mut stream = self.inner.token_stream(text);
        while stream.advance() {
            sink(&stream.token().text);
        }
    }

    /// The terms of `text`, in order, with repetitions.
    pub fn terms(&mut self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.for_each_term(text, |t| out.push(t.to_string()));
        out
    }

    /// The distinct terms of `text` in first-occurrence order (a query's term set).
    pub fn distinct_terms(&mut self, text: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        self.for_each_term(text, |t| {
            if !out.iter().any(|seen| seen == t) {
                out.push(t.to_string());
            }
        });
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_and_lowercases_like_tantivy_en_stem() {
        let mut a = Analyzer::new();
        assert_eq!(
            a.terms("Running Emacs buffers"),
            vec!["run", "emac", "buffer"]
        );
        assert_eq!(
            a.distinct_terms("emacs Emacs EMACS lisp"),
            vec!["emac", "lisp"]
        );
    }

    #[test]
    fn drops_overlong_tokens() {
        let mut a = Analyzer::new();
        let long = "x".repeat(45);
        assert_eq!(a.terms(&format!("short {long}")), vec!["short"]);
    }
}
