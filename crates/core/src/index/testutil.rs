//! Hand-made corpora for the index's unit tests.

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use std::sync::Arc;

use crate::corpus::{Clock, Corpus, PageTimeline, PageVersion, Unit};
use crate::text::{Analyzer, TermCounts, Vocabulary};

const WORDS: &[&str] = &[
    "emacs",
    "buffer",
    "window",
    "frame",
    "lisp",
    "macro",
    "keyboard",
    "running",
    "mode",
    "hook",
    "theme",
    "font",
    "package",
    "elisp",
    "org",
    "agenda",
    "mail",
    "gnus",
    "dired",
    "shell",
    "compile",
    "debug",
    "search",
    "replace",
    "regexp",
    "syntax",
    "indent",
    "tab",
    "python",
    "ruby",
    "latex",
    "tramp",
    "remote",
    "file",
    "directory",
    "version",
    "git",
];

/// A version built the way ingest builds one: terms analyzed from `indexed_text()`.
pub fn version(
    vocabulary: &mut Vocabulary,
    unit: Unit,
    title: &str,
    text: &str,
    links: Vec<u32>,
) -> PageVersion {
    let mut v = PageVersion {
        unit,
        capture_time: i64::from(unit) * 604_800,
        status: 200,
        content_hash: 0,
        title: title.to_string(),
        text: text.to_string(),
        links,
        terms: Default::default(),
        counts: Default::default(),
    };
    let terms = Analyzer::new().terms(&v.indexed_text());
    v.terms = Arc::new(TermCounts::from_terms(
        vocabulary,
        terms.iter().map(String::as_str),
    ));
    // As ingest does: a hash of the captured content (here the text and the links).
    v.content_hash =
        xxhash_rust::xxh3::xxh3_64(format!("{}\n{}\n{:?}", v.title, v.text, v.links).as_bytes());
    v
}

pub fn gone(unit: Unit) -> PageVersion {
    PageVersion {
        unit,
        capture_time: i64::from(unit) * 604_800,
        status: 404,
        content_hash: 0,
        title: String::new(),
        text: String::new(),
        links: Vec::new(),
        terms: Default::default(),
        counts: Default::default(),
    }
}

/// A random site of `pages` pages over `units` units: some pages appear late, some disappear
/// (and may come back), most change now and then. Deterministic in `seed`.
pub fn random_corpus(pages: u32, units: Unit, seed: u64) -> Corpus {
    random_corpus_on_hosts(pages, units, seed, 1)
}

/// [`random_corpus`] with its pages spread round-robin over `hosts` hosts
/// (`site<h>.example`); one host keeps `random_corpus`'s URLs.
pub fn random_corpus_on_hosts(pages: u32, units: Unit, seed: u64, hosts: u32) -> Corpus {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut vocabulary = Vocabulary::new();
    let mut timelines = Vec::new();
    for p in 0..pages {
        let url = if hosts <= 1 {
            format!("https://example.org/page/{p:05}")
        } else {
            format!("https://site{}.example/page/{p:05}", p % hosts)
        };
        let born = if rng.gen_bool(0.8) {
            0
        } else {
            rng.gen_range(1..units)
        };
        let mut versions = Vec::new();
        let mut alive = false;
        for u in born..units {
            let change = u == born || rng.gen_bool(0.25);
            if !change {
                continue;
            }
            if alive && rng.gen_bool(0.1) {
                versions.push(gone(u));
                alive = false;
                continue;
            }
            let len = rng.gen_range(3..60);
            let text: Vec<&str> = (0..len).map(|_| *WORDS.choose(&mut rng).unwrap()).collect();
            let title = format!("{} {}", WORDS.choose(&mut rng).unwrap(), p);
            let mut links: Vec<u32> = (0..rng.gen_range(0..5))
                .map(|_| rng.gen_range(0..pages))
                .filter(|&l| l != p)
                .collect();
            links.sort_unstable();
            links.dedup();
            versions.push(version(&mut vocabulary, u, &title, &text.join(" "), links));
            alive = true;
        }
        timelines.push(PageTimeline::new(url, versions));
    }
    let clock = Clock {
        origin: 0,
        unit_seconds: 604_800,
        units,
    };
    Corpus::from_parts(clock, timelines, vocabulary)
}
