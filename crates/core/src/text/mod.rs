//! The one text analyzer of the system.
//!
//! The index, the workload normaliser, the forward indexes and every scorer must cut text into
//! the very same terms, or a query term would never meet the postings it was meant for and the
//! hook's scores would drift from the searcher's. They all go through [`Analyzer`], which wraps
//! tantivy's built-in `en_stem` pipeline (simple tokenizer, drop tokens longer than 40 bytes,
//! lower-case, English Porter stemmer).

mod vocabulary;

use std::cell::RefCell;

use rustc_hash::FxHashMap;
use tantivy::tokenizer::{
    Language, LowerCaser, RawTokenizer, RemoveLongFilter, SimpleTokenizer, Stemmer, TextAnalyzer,
    TokenStream, TokenizerManager,
};

pub use vocabulary::{GrowingVocabulary, TermCounts, TermId, Vocabulary};

/// Name of the tantivy analyzer used for every indexed text field.
pub const ANALYZER_NAME: &str = "en_stem";

/// Longest token `en_stem` keeps, in bytes (its `RemoveLongFilter`).
const MAX_TOKEN_BYTES: usize = 40;

/// Distinct lower-cased words whose stems a thread remembers. Words follow Zipf's law, so a
/// few hundred thousand entries catch nearly every occurrence of real words; tokens beyond the
/// cap (mostly one-off base64 fragments) are stemmed each time instead of growing memory.
const STEM_CACHE_WORDS: usize = 1 << 18;

thread_local! {
    /// Lower-cased word → stem, per thread: the Porter stemmer is the most expensive step of
    /// ingest, and the same words recur in every version of every page.
    static STEMS: RefCell<FxHashMap<Box<str>, Box<str>>> = RefCell::new(FxHashMap::default());
}

/// A reusable handle on the `en_stem` pipeline. Cheap to clone; not `Sync` (one per thread).
///
/// The pipeline runs as tantivy's own stages — simple tokenizer, `RemoveLongFilter(40)`,
/// `LowerCaser` — followed by tantivy's English `Stemmer` applied word by word through a
/// per-thread cache. The stemmer maps each token independently, so the terms are exactly
/// those of tantivy's registered `en_stem` (tested against it below).
#[derive(Clone)]
pub struct Analyzer {
    lower: TextAnalyzer,
    stemmer: TextAnalyzer,
}

impl Default for Analyzer {
    fn default() -> Self {
        Self::new()
    }
}

impl Analyzer {
    pub fn new() -> Self {
        Analyzer {
            lower: TextAnalyzer::builder(SimpleTokenizer::default())
                .filter(RemoveLongFilter::limit(MAX_TOKEN_BYTES))
                .filter(LowerCaser)
                .build(),
            stemmer: TextAnalyzer::builder(RawTokenizer::default())
                .filter(Stemmer::new(Language::English))
                .build(),
        }
    }

    /// tantivy's registered `en_stem` analyzer itself (what the index runs at indexing time).
    pub fn tantivy_en_stem() -> TextAnalyzer {
        TokenizerManager::default()
            .get(ANALYZER_NAME)
            .expect("tantivy always registers en_stem")
    }

    /// Calls `sink` with each term of `text`, in order, exactly as tantivy indexes them.
    pub fn for_each_term(&mut self, text: &str, mut sink: impl FnMut(&str)) {
        STEMS.with_borrow_mut(|cache| {
            self.for_each_memoised(
                text,
                cache,
                |stem| Box::<str>::from(stem),
                |stem| sink(stem),
            )
        });
    }

    /// [`for_each_term`](Self::for_each_term) for a caller that numbers terms: `sink` gets
    /// `id(term)` for each term of `text`, in order. `words` remembers the id of each
    /// lower-cased word (up to `STEM_CACHE_WORDS` of them), so a word met again costs one
    /// lookup instead of a stem lookup and a call of `id`. A word's stem does not depend on
    /// its context, so the ids are those of `id` applied to the terms of
    /// [`for_each_term`](Self::for_each_term).
    pub fn for_each_term_id(
        &mut self,
        text: &str,
        words: &mut FxHashMap<Box<str>, u32>,
        id: impl FnMut(&str) -> u32,
        mut sink: impl FnMut(u32),
    ) {
        self.for_each_memoised(text, words, id, |&term| sink(term));
    }

    /// Calls `sink` with `of_stem(stem)` for each lower-cased word of `text`, in order, where
    /// `memo` remembers each word's value (up to `STEM_CACHE_WORDS` words; beyond the cap a
    /// word is stemmed each time instead of growing memory).
    fn for_each_memoised<V>(
        &mut self,
        text: &str,
        memo: &mut FxHashMap<Box<str>, V>,
        mut of_stem: impl FnMut(&str) -> V,
        mut sink: impl FnMut(&V),
    ) {
        let stemmer = &mut self.stemmer;
        let mut word_value = |word: &str| {
            if let Some(known) = memo.get(word) {
                sink(known);
                return;
            }
            let mut stemmed = stemmer.token_stream(word);
            // The raw tokenizer yields the whole (non-empty) word as one token.
            if !stemmed.advance() {
                return;
            }
            let value = of_stem(stemmed.token().text.as_str());
            sink(&value);
            if memo.len() < STEM_CACHE_WORDS {
                memo.insert(word.into(), value);
            }
        };
        if text.is_ascii() {
            for_each_ascii_word(text, |word| word_value(word));
        } else {
            let mut stream = self.lower.token_stream(text);
            while stream.advance() {
                word_value(stream.token().text.as_str());
            }
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

/// The lower-cased words `lower` yields for an ASCII `text`, read bytewise. On ASCII the
/// pipeline's stages reduce to byte tests: `SimpleTokenizer` cuts at every byte that is not
/// `char::is_alphanumeric` (for ASCII, `[0-9A-Za-z]`), `RemoveLongFilter` drops words of
/// `MAX_TOKEN_BYTES` bytes or more, and `LowerCaser` lower-cases ASCII words with
/// `make_ascii_lowercase`. Tested against the pipeline below.
fn for_each_ascii_word(text: &str, mut sink: impl FnMut(&str)) {
    let mut lower = [0u8; MAX_TOKEN_BYTES];
    for word in ascii_alphanumeric_runs(text).filter(|w| w.len() < MAX_TOKEN_BYTES) {
        let lower = &mut lower[..word.len()];
        for (to, &from) in lower.iter_mut().zip(word) {
            *to = from.to_ascii_lowercase();
        }
        // ASCII bytes: always valid UTF-8.
        sink(std::str::from_utf8(lower).expect("ASCII is UTF-8"));
    }
}

/// The maximal runs of `char::is_alphanumeric` characters of an ASCII `text` (for ASCII,
/// `[0-9A-Za-z]`), as bytes: the words of both the analyzer and the shingles on ASCII text.
pub(crate) fn ascii_alphanumeric_runs(text: &str) -> impl Iterator<Item = &[u8]> {
    debug_assert!(text.is_ascii());
    text.as_bytes()
        .split(|b| !b.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
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
    fn equals_tantivy_en_stem_on_varied_text() {
        let text = "Running runs RAN ranning; Emacs' EMACS-Lisp buffers (buffer) \
            café Über naïve straße 東京 ﬁle Ⅷ x1y2 a_b hello_world 42 3.14 \
            aGVsbG8gd29ybGQ+/= QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2 \
            generously generalization relational conditional hopefully sky skies dying lying";
        let mut expected = Vec::new();
        let mut tantivy = Analyzer::tantivy_en_stem();
        let mut stream = tantivy.token_stream(text);
        while stream.advance() {
            expected.push(stream.token().text.clone());
        }
        let mut a = Analyzer::new();
        // Twice: the second pass is served from the stem cache.
        assert_eq!(a.terms(text), expected);
        assert_eq!(a.terms(text), expected);
        assert!(expected.len() > 30, "{expected:?}");
    }

    #[test]
    fn numbered_terms_are_the_terms_numbered() {
        let text = "Running runs RAN; Emacs EMACS-Lisp buffers (buffer) café Über straße 東京 \
            ﬁle x1y2 a_b 42 3.14 generously generalization dying lying running Emacs";
        let mut a = Analyzer::new();
        let expected = a.terms(text);
        let mut ids: Vec<String> = Vec::new();
        let mut number = |t: &str| match ids.iter().position(|s| s == t) {
            Some(i) => i as u32,
            None => {
                ids.push(t.to_string());
                ids.len() as u32 - 1
            }
        };
        let mut words = FxHashMap::default();
        // Twice: the second pass is served from `words`.
        for _ in 0..2 {
            let mut got: Vec<u32> = Vec::new();
            a.for_each_term_id(text, &mut words, &mut number, |id| got.push(id));
            let expected_ids: Vec<u32> = expected.iter().map(|t| number(t)).collect();
            assert_eq!(got, expected_ids);
        }
        assert!(words.contains_key("running") && words.contains_key("emacs"));
    }

    /// The bytewise ASCII path cuts, drops and lower-cases exactly as the tantivy pipeline.
    #[test]
    fn ascii_words_equal_the_pipeline() {
        let long = |n: usize| "Ab1".repeat(n / 3 + 1)[..n].to_string();
        let text = format!(
            "Running runs RAN; Emacs' EMACS-Lisp buffers (buffer) x1y2 a_b hello_world 42 3.14 \
             aGVsbG8gd29ybGQ+/= {} {} {} {} tail-end.\t\nMiXeD\x0bCase\x00nul~tilde",
            long(38),
            long(39),
            long(40),
            long(41)
        );
        assert!(text.is_ascii());
        let mut lower = Analyzer::new().lower;
        let mut stream = lower.token_stream(&text);
        let mut expected = Vec::new();
        while stream.advance() {
            expected.push(stream.token().text.clone());
        }
        let mut got = Vec::new();
        for_each_ascii_word(&text, |w| got.push(w.to_string()));
        assert_eq!(got, expected);
        assert!(got.contains(&long(39).to_ascii_lowercase()));
        assert!(!got.contains(&long(40).to_ascii_lowercase()));
    }

    #[test]
    fn drops_overlong_tokens() {
        let mut a = Analyzer::new();
        let long = "x".repeat(45);
        assert_eq!(a.terms(&format!("short {long}")), vec!["short"]);
    }
}
