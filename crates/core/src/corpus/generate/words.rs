//! The generator's word lists: the site's Zipf vocabulary, the ad vocabulary and the off-site
//! brand names.
//!
//! Words are made up from syllables so that they look like a language (pronounceable, short
//! words common, long words rare) without pretending to be English that a stemmer would mangle
//! in surprising ways. Three lists must never meet after analysis: a query built from brand words
//! must match nothing on the site, and an ad word must never be a term users search for. So every
//! candidate is run through the project's own analyzer and kept only when its stem is new.

use std::collections::HashSet;

use rand::distributions::WeightedIndex;
use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::text::Analyzer;

/// English function words at the top of the site's Zipf ranking, as in real text. Queries never
/// use them (users' queries are built from topical terms).
pub(super) const FUNCTION_WORDS: &[&str] = &[
    "the", "of", "and", "to", "a", "in", "is", "for", "on", "that", "with", "as", "it", "this",
    "by", "you", "be", "are", "from", "or", "at", "an", "can", "not", "if", "your", "which",
    "also", "more", "when", "one", "all", "has", "have", "will", "about", "how", "other", "some",
    "there", "into", "only", "so", "what", "then", "here", "but", "we", "they", "its",
];

/// Real commercial words that make up part of the ad blocks (with made-up product names).
const AD_ENGLISH: &[&str] = &[
    "buy",
    "cheap",
    "free",
    "offer",
    "deal",
    "discount",
    "shipping",
    "sale",
    "click",
    "now",
    "save",
    "best",
    "price",
    "order",
    "today",
    "limited",
    "bonus",
    "credit",
    "loan",
    "casino",
    "win",
    "prize",
    "sponsored",
    "advertisement",
    "subscribe",
    "exclusive",
    "guaranteed",
    "coupon",
    "trial",
    "premium",
];

/// Second words of navigational off-site queries (`brand mail`, `brand login`, ...), as in the
/// AOL log's `yahoo mail` or `bank of america`. Never on the site.
pub(super) const OFFSITE_SUFFIXES: &[&str] = &[
    "mail",
    "login",
    "online",
    "games",
    "news",
    "weather",
    "maps",
    "lyrics",
    "jobs",
    "bank",
    "tickets",
    "horoscopes",
];

/// Syllable parts: onset, vowel nucleus, coda (empty strings make open syllables common).
const ONSETS: &[&str] = &[
    "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "br",
    "cr", "dr", "fl", "gr", "pl", "st", "tr", "sh", "ch", "th", "",
];
const NUCLEI: &[&str] = &[
    "a", "e", "i", "o", "u", "a", "e", "o", "ai", "ea", "ou", "io",
];
const CODAS: &[&str] = &[
    "", "", "", "", "n", "r", "l", "s", "m", "t", "k", "x", "nd", "rt", "st",
];

/// The three disjoint word lists of a generated site.
pub(super) struct Lexicon {
    /// Site words in Zipf rank order: the function words first, then made-up words, shorter first.
    pub(crate) site: Vec<String>,
    /// How many of `site` are function words (ranks `0..n_function`).
    pub(crate) n_function: usize,
    /// Boilerplate/ad words: English commercial words then made-up product names.
    pub(crate) ad: Vec<String>,
    /// Made-up brand names for off-site (navigational) queries.
    pub(crate) brands: Vec<String>,
}

impl Lexicon {
    /// Builds the lists; `site_words` counts the made-up site words (function words come extra).
    pub fn build(
        rng: &mut ChaCha8Rng,
        site_words: usize,
        ad_words: usize,
        brand_words: usize,
    ) -> Lexicon {
        let mut analyzer = Analyzer::new();
        let mut stems: HashSet<String> = HashSet::new();
        let mut accept = |word: &str, stems: &mut HashSet<String>| -> bool {
            let terms = analyzer.terms(word);
            terms.len() == 1 && stems.insert(terms[0].clone())
        };
        // Reserve the real words first so no made-up word can stem onto them.
        let mut function = Vec::new();
        for w in FUNCTION_WORDS {
            if accept(w, &mut stems) {
                function.push(w.to_string());
            }
        }
        let mut ad: Vec<String> = Vec::new();
        for w in AD_ENGLISH {
            if accept(w, &mut stems) {
                ad.push(w.to_string());
            }
        }
        // URL pieces of navigational queries (`www.brand.com`) must not be site words either.
        for w in ["www", "com", "http"] {
            stems.insert(w.to_string());
        }
        for w in OFFSITE_SUFFIXES {
            assert!(accept(w, &mut stems), "off-site suffix {w} collides");
        }
        let mut made_up = |count: usize, min_syl: usize, stems: &mut HashSet<String>| {
            let mut out = Vec::with_capacity(count);
            while out.len() < count {
                let w = syllable_word(rng, min_syl);
                if w.len() >= 3 && accept(&w, stems) {
                    out.push(w);
                }
            }
            out
        };
        let mut site_made = made_up(site_words, 1, &mut stems);
        // Shorter words are the frequent ones in real languages; keep generation order within a length.
        site_made.sort_by_key(|w| w.len());
        let n_function = function.len();
        let mut site = function;
        site.extend(site_made);
        let products = made_up(ad_words.saturating_sub(ad.len()), 2, &mut stems);
        ad.extend(products);
        let brands = made_up(brand_words, 2, &mut stems);
        Lexicon {
            site,
            n_function,
            ad,
            brands,
        }
    }
}

/// A pronounceable word of 1–3 syllables (at least `min_syl`), two syllables most often.
fn syllable_word(rng: &mut ChaCha8Rng, min_syl: usize) -> String {
    let syllables = match rng.gen_range(0..10) {
        0..=2 => 1,
        3..=8 => 2,
        _ => 3,
    }
    .max(min_syl);
    let mut w = String::new();
    for _ in 0..syllables {
        w.push_str(ONSETS.choose(rng).expect("non-empty"));
        w.push_str(NUCLEI.choose(rng).expect("non-empty"));
        w.push_str(CODAS.choose(rng).expect("non-empty"));
    }
    w
}

/// Sampling weights `1 / (rank + 1)^s` over `n` items: a Zipf law with exponent `s`.
pub(super) fn zipf(n: usize, s: f64) -> WeightedIndex<f64> {
    WeightedIndex::new((0..n.max(1)).map(|r| 1.0 / ((r + 1) as f64).powf(s)))
        .expect("positive weights")
}
