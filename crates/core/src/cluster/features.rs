//! The 48 page features of paper 000 (Tan & Mitra, TOIS 2010, §3.1–3.2; SEED-SYSTEMS §1.2.1):
//! 38 static and 10 dynamic, computed for every page of the repository from a
//! [`FeatureInput`] and min–max scaled per dimension.
//!
//! | columns | features |
//! |---|---|
//! | 0–9 | content-word cluster ranks (the page's cluster ranked by centroid distance from each of the 10 largest clusters) |
//! | 10–13 | `<img>`, `<table>`, non-markup words, bytes without tags |
//! | 14–16 | file type one-hot: HTML, TXT, other |
//! | 17–26 | URL-word cluster ranks |
//! | 27 | URL depth (number of `/`) |
//! | 28–33 | TLD one-hot: com, edu, gov, org, net, mil |
//! | 34–37 | PageRank, in-links within the repository, out-links, e-mail addresses |
//! | 38 | content change `1 − cos` of the tf-idf vectors of the last two copies |
//! | 39–42 | \|Δ\| images, tables, bytes, words |
//! | 43–46 | \|Δ\| PageRank, in-links, out-links, e-mails |
//! | 47 | the change frequency the crawler detected |
//!
//! Choices where the paper is silent or garbled (SEED-SYSTEMS §1.5): the word clusterings are
//! RBC with the same `k` over the 1,000 most frequent non-stop words, centroid distance is
//! cosine; URL words split on non-alphanumerics and CamelCase; deltas are absolute; dynamic
//! features are 0 until a page has two copies; every dimension is min–max scaled to [0, 1].

use rustc_hash::FxHashMap;

use super::rbc::{repeated_bisection, Clustering, RbcConfig};
use super::tfidf::{TopTermsTfIdf, ENGLISH_STOP_WORDS, TOP_TERMS};

/// Number of features.
pub const DIMS: usize = 48;
/// Word clusters whose ranks are features (the 10 largest).
pub const RANKED_CLUSTERS: usize = 10;

const CONTENT_RANKS: usize = 0;
const CONTENT_COUNTS: usize = 10;
const FILE_TYPE: usize = 14;
const URL_RANKS: usize = 17;
const URL_DEPTH: usize = 27;
const TLD: usize = 28;
const LINKAGE: usize = 34;
const CONTENT_CHANGE: usize = 38;
const CONTENT_DELTAS: usize = 39;
const LINKAGE_DELTAS: usize = 43;
const CHANGE_FREQUENCY: usize = 47;

/// The TLDs of the one-hot feature, in column order.
pub const TLDS: [&str; 6] = ["com", "edu", "gov", "org", "net", "mil"];

/// A page's content type, as the file-type feature sees it: the one ingest records per
/// version (`crate::corpus::PageCounts::content_type`).
pub type FileType = crate::corpus::ContentType;

/// The counts of one copy of a page that the features read.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CopyFacts {
    pub images: u32,
    pub tables: u32,
    /// Non-markup words.
    pub words: u32,
    /// Size in bytes without HTML tags.
    pub text_bytes: u64,
    /// E-mail addresses on the page.
    pub emails: u32,
    /// PageRank in the held-copy link graph when the copy was held.
    pub pagerank: f64,
    /// Links from other held copies to the page.
    pub in_links: u32,
    /// Links of the copy to pages of the repository.
    pub out_links: u32,
}

/// One page as the feature builder reads it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FeatureInput<'a> {
    pub url: &'a str,
    pub file_type: FileType,
    /// The held copy's analyzed `(term id, count)` pairs.
    pub terms: &'a [(u32, u32)],
    pub facts: CopyFacts,
    /// The copy fetched before the held one, when the crawler has two (dynamic features).
    pub previous: Option<PreviousCopy<'a>>,
    /// The change frequency detected so far (e.g. NAD's `λ`, §1.2.4).
    pub change_frequency: f64,
}

/// The copy before the held one.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PreviousCopy<'a> {
    pub terms: &'a [(u32, u32)],
    pub facts: CopyFacts,
}

/// The feature subsets of paper 000 §6.2's ablation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum FeatureSet {
    /// URL-word cluster ranks (10).
    UrlWords,
    /// Content-word cluster ranks (10).
    ContentWords,
    /// Both (20).
    UrlAndContent,
    /// Static without the word-cluster ranks: 18 columns (the paper says 28, but its own counts
    /// give 38 − 20 = 18).
    Static,
    /// The 10 dynamic features.
    Dynamic,
    /// All 48 (the paper's default).
    #[default]
    Combined,
}

impl FeatureSet {
    pub(crate) const NAMES: &'static [&'static str] = &[
        "url",
        "content",
        "url+content",
        "static",
        "dynamic",
        "combined",
    ];

    pub(crate) fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "url" => FeatureSet::UrlWords,
            "content" => FeatureSet::ContentWords,
            "url+content" => FeatureSet::UrlAndContent,
            "static" => FeatureSet::Static,
            "dynamic" => FeatureSet::Dynamic,
            "combined" => FeatureSet::Combined,
            _ => return None,
        })
    }

    /// The feature columns of this set.
    pub(crate) fn columns(self) -> Vec<usize> {
        let content = CONTENT_RANKS..CONTENT_RANKS + RANKED_CLUSTERS;
        let url = URL_RANKS..URL_RANKS + RANKED_CLUSTERS;
        match self {
            FeatureSet::UrlWords => url.collect(),
            FeatureSet::ContentWords => content.collect(),
            FeatureSet::UrlAndContent => content.chain(url).collect(),
            FeatureSet::Static => (CONTENT_COUNTS..URL_RANKS)
                .chain(URL_DEPTH..CONTENT_CHANGE)
                .collect(),
            FeatureSet::Dynamic => (CONTENT_CHANGE..DIMS).collect(),
            FeatureSet::Combined => (0..DIMS).collect(),
        }
    }
}

/// How the builder works.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FeatureConfig {
    /// Clusters of the auxiliary word clusterings (paper 000: the same k as CLS, 100).
    pub word_clusters: usize,
    /// Vocabulary of the word clusterings (1,000).
    pub top_terms: usize,
    /// Min–max scale every column to [0, 1] (false: raw values, for replication attempts).
    pub min_max: bool,
    pub seed: u64,
}

impl Default for FeatureConfig {
    fn default() -> Self {
        FeatureConfig {
            word_clusters: 100,
            top_terms: TOP_TERMS,
            min_max: true,
            seed: 0,
        }
    }
}

/// Words of a URL (paper 000 §3.1's URL-word features): split on non-alphanumerics and at
/// CamelCase and letter/digit boundaries, lower-cased; the scheme and `www` dropped.
pub(crate) fn url_words(url: &str) -> Vec<String> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let mut words = Vec::new();
    for token in rest.split(|c: char| !c.is_alphanumeric()) {
        let chars: Vec<char> = token.chars().collect();
        let mut start = 0;
        for i in 1..=chars.len() {
            let boundary = i == chars.len() || {
                let (a, b) = (chars[i - 1], chars[i]);
                let next_lower = chars.get(i + 1).is_some_and(|c| c.is_lowercase());
                (a.is_lowercase() && b.is_uppercase())
                    || (a.is_uppercase() && b.is_uppercase() && next_lower)
                    || (a.is_alphabetic() != b.is_alphabetic())
            };
            if boundary {
                let word: String = chars[start..i].iter().collect::<String>().to_lowercase();
                start = i;
                if !word.is_empty() && word != "www" {
                    words.push(word);
                }
            }
        }
    }
    words
}

/// The host of a URL (empty when none).
pub(crate) fn url_host(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let host = &rest[..end];
    let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
    host.split(':').next().unwrap_or("")
}

/// Paper 000 §3.1 "URL depth": the number of `/` in the URL.
pub(crate) fn url_depth(url: &str) -> usize {
    url.matches('/').count()
}

/// Column of the TLD one-hot (`None` for other TLDs): paper 000 §3.1.
pub(crate) fn tld_column(url: &str) -> Option<usize> {
    let host = url_host(url).trim_end_matches('.');
    let tld = host.rsplit('.').next()?.to_ascii_lowercase();
    TLDS.iter().position(|&t| t == tld)
}

/// Paper 000 §3.1's content- and URL-word cluster-rank features for every page: with the
/// clusters `C_1 … C_10` the largest of `clustering` (ties by cluster id), feature `f` of a page
/// in cluster `C_p` is 0 when `C_p = C_f`, else the rank of `C_p` among the clusters sorted by
/// increasing centroid distance from `C_f` (nearest = 1). Missing clusters (fewer than 10)
/// give constant 0 columns. (Reconstructed: the sentence is garbled in the text.)
pub(crate) fn cluster_rank_features(clustering: &Clustering) -> Vec<[u32; RANKED_CLUSTERS]> {
    let mut largest: Vec<usize> = (0..clustering.k()).collect();
    largest.sort_by(|&a, &b| {
        clustering.sizes[b]
            .cmp(&clustering.sizes[a])
            .then(a.cmp(&b))
    });
    largest.truncate(RANKED_CLUSTERS);
    let ranks: Vec<Vec<u32>> = largest
        .iter()
        .map(|&c| clustering.centroid_ranks_from(c))
        .collect();
    clustering
        .assignment
        .iter()
        .map(|&c| {
            let mut out = [0u32; RANKED_CLUSTERS];
            for (f, r) in ranks.iter().enumerate() {
                out[f] = r[c as usize];
            }
            out
        })
        .collect()
}

/// Min–max scaling of every column to [0, 1] over the rows (a constant column becomes 0):
/// SEED-SYSTEMS §1.5's choice, since cosine clustering on raw counts is ruled by byte sizes.
pub(crate) fn min_max_scale(rows: &mut [[f64; DIMS]]) {
    for d in 0..DIMS {
        let (lo, hi) = rows
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), r| {
                (l.min(r[d]), h.max(r[d]))
            });
        let span = hi - lo;
        for r in rows.iter_mut() {
            r[d] = if span > 0.0 { (r[d] - lo) / span } else { 0.0 };
        }
    }
}

/// The 48 features of every page (paper 000 §3.1–3.2, column layout in the module docs).
/// `stop` says which content term ids are stop words (see [`stop_term_ids`]).
pub fn page_features(
    pages: &[FeatureInput<'_>],
    stop: impl Fn(u32) -> bool,
    config: &FeatureConfig,
) -> Vec<[f64; DIMS]> {
    // Content-word clustering.
    let content_model = TopTermsTfIdf::fit(pages.iter().map(|p| p.terms), config.top_terms, &stop);
    let content_rows = content_model.rows(pages.iter().map(|p| p.terms));
    let content_ranks = cluster_rank_features(&repeated_bisection(
        &content_rows,
        &RbcConfig::new(config.word_clusters, config.seed),
    ));
    // URL-word clustering, over words interned here.
    let mut ids: FxHashMap<String, u32> = FxHashMap::default();
    let url_docs: Vec<Vec<(u32, u32)>> = pages
        .iter()
        .map(|p| {
            let mut counts: FxHashMap<u32, u32> = FxHashMap::default();
            for w in url_words(p.url) {
                let next = ids.len() as u32;
                *counts.entry(*ids.entry(w).or_insert(next)).or_default() += 1;
            }
            let mut doc: Vec<(u32, u32)> = counts.into_iter().collect();
            doc.sort_unstable();
            doc
        })
        .collect();
    let url_stop: Vec<u32> = ENGLISH_STOP_WORDS
        .iter()
        .filter_map(|w| ids.get(*w).copied())
        .collect();
    let url_model = TopTermsTfIdf::fit(url_docs.iter().map(Vec::as_slice), config.top_terms, |t| {
        url_stop.contains(&t)
    });
    let url_rows = url_model.rows(url_docs.iter().map(Vec::as_slice));
    let url_ranks = cluster_rank_features(&repeated_bisection(
        &url_rows,
        &RbcConfig::new(config.word_clusters, config.seed ^ 0x5eed),
    ));

    let mut rows: Vec<[f64; DIMS]> = pages
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let mut r = [0.0; DIMS];
            for f in 0..RANKED_CLUSTERS {
                r[CONTENT_RANKS + f] = f64::from(content_ranks[i][f]);
                r[URL_RANKS + f] = f64::from(url_ranks[i][f]);
            }
            let c = &p.facts;
            r[CONTENT_COUNTS] = f64::from(c.images);
            r[CONTENT_COUNTS + 1] = f64::from(c.tables);
            r[CONTENT_COUNTS + 2] = f64::from(c.words);
            r[CONTENT_COUNTS + 3] = c.text_bytes as f64;
            r[FILE_TYPE
                + match p.file_type {
                    FileType::Html => 0,
                    FileType::Text => 1,
                    FileType::Other => 2,
                }] = 1.0;
            r[URL_DEPTH] = url_depth(p.url) as f64;
            if let Some(t) = tld_column(p.url) {
                r[TLD + t] = 1.0;
            }
            r[LINKAGE] = c.pagerank;
            r[LINKAGE + 1] = f64::from(c.in_links);
            r[LINKAGE + 2] = f64::from(c.out_links);
            r[LINKAGE + 3] = f64::from(c.emails);
            if let Some(prev) = &p.previous {
                r[CONTENT_CHANGE] = content_change(&content_model, prev.terms, p.terms);
                let q = &prev.facts;
                let delta = |a: f64, b: f64| (a - b).abs();
                r[CONTENT_DELTAS] = delta(c.images.into(), q.images.into());
                r[CONTENT_DELTAS + 1] = delta(c.tables.into(), q.tables.into());
                r[CONTENT_DELTAS + 2] = delta(c.text_bytes as f64, q.text_bytes as f64);
                r[CONTENT_DELTAS + 3] = delta(c.words.into(), q.words.into());
                r[LINKAGE_DELTAS] = delta(c.pagerank, q.pagerank);
                r[LINKAGE_DELTAS + 1] = delta(c.in_links.into(), q.in_links.into());
                r[LINKAGE_DELTAS + 2] = delta(c.out_links.into(), q.out_links.into());
                r[LINKAGE_DELTAS + 3] = delta(c.emails.into(), q.emails.into());
            }
            r[CHANGE_FREQUENCY] = p.change_frequency;
            r
        })
        .collect();
    if config.min_max {
        min_max_scale(&mut rows);
    }
    rows
}

/// Paper 000 §3.2's content-change feature: `1 − cos` of the tf-idf vectors of two copies
/// (so 0 = unchanged, like the other change features; the paper gives the cosine itself). Two
/// copies without any vocabulary term count as unchanged when both are empty.
pub(crate) fn content_change(
    model: &TopTermsTfIdf,
    before: &[(u32, u32)],
    after: &[(u32, u32)],
) -> f64 {
    if model.vector(before).is_empty() && model.vector(after).is_empty() {
        return 0.0;
    }
    1.0 - model.cosine(before, after)
}

/// The term ids of [`ENGLISH_STOP_WORDS`] as the project's analyzer turns them into terms
/// (stemmed), in `vocabulary`.
pub fn stop_term_ids(vocabulary: &crate::text::Vocabulary) -> Vec<u32> {
    let mut analyzer = crate::text::Analyzer::new();
    let mut ids: Vec<u32> = ENGLISH_STOP_WORDS
        .iter()
        .flat_map(|w| analyzer.terms(w))
        .filter_map(|t| vocabulary.get(&t))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_words_split_camel_case_and_separators() {
        assert_eq!(
            url_words("https://www.emacswiki.org/emacs/OrgMode_Tips2"),
            ["emacswiki", "org", "emacs", "org", "mode", "tips", "2"]
        );
        assert_eq!(url_words("http://h/HTMLPage"), ["h", "html", "page"]);
        assert_eq!(url_host("http://user@a.b.edu:8080/x"), "a.b.edu");
        assert_eq!(url_depth("http://h/a/b/s.html"), 5);
        assert_eq!(tld_column("http://www.x.gov/a"), Some(2));
        assert_eq!(tld_column("http://x.de/"), None);
    }

    #[test]
    fn feature_sets_have_the_papers_sizes() {
        assert_eq!(FeatureSet::Combined.columns().len(), 48);
        assert_eq!(FeatureSet::Static.columns().len(), 18);
        assert_eq!(FeatureSet::Dynamic.columns().len(), 10);
        assert_eq!(FeatureSet::UrlAndContent.columns().len(), 20);
        for name in FeatureSet::NAMES {
            assert!(FeatureSet::parse(name).is_some());
        }
    }

    fn page<'a>(url: &'a str, terms: &'a [(u32, u32)], images: u32) -> FeatureInput<'a> {
        FeatureInput {
            url,
            terms,
            facts: CopyFacts {
                images,
                words: terms.iter().map(|t| t.1).sum(),
                text_bytes: 10 * u64::from(images),
                pagerank: 0.1,
                out_links: images,
                ..CopyFacts::default()
            },
            ..FeatureInput::default()
        }
    }

    #[test]
    fn features_are_scaled_and_follow_the_layout() {
        let a: Vec<(u32, u32)> = vec![(1, 3), (2, 1)];
        let b: Vec<(u32, u32)> = vec![(3, 2), (4, 2)];
        let c: Vec<(u32, u32)> = vec![(1, 1), (5, 4)];
        let mut pages = vec![
            page("http://a.edu/x/OrgMode", &a, 0),
            page("http://a.edu/x/y/Gnus", &b, 4),
            page("http://b.com/Org", &c, 2),
        ];
        pages[1].previous = Some(PreviousCopy {
            terms: &a,
            facts: CopyFacts {
                images: 1,
                ..CopyFacts::default()
            },
        });
        pages[2].change_frequency = 0.5;
        let config = FeatureConfig {
            word_clusters: 2,
            ..FeatureConfig::default()
        };
        let rows = page_features(&pages, |t| t == 5, &config);
        assert_eq!(rows.len(), 3);
        for r in &rows {
            assert!(r.iter().all(|x| (0.0..=1.0).contains(x)), "{r:?}");
        }
        // Images 0, 4, 2 → 0, 1, 0.5.
        assert_eq!([rows[0][10], rows[1][10], rows[2][10]], [0.0, 1.0, 0.5]);
        // All HTML: a constant column scales to 0; TLD edu for two pages, com for one.
        assert!(rows.iter().all(|r| r[FILE_TYPE] == 0.0));
        assert_eq!([rows[0][29], rows[2][28]], [1.0, 1.0]);
        // Only page 1 has two copies, with no shared term: content change 1, Δimages 3.
        assert_eq!([rows[0][38], rows[1][38]], [0.0, 1.0]);
        assert_eq!(rows[1][39], 1.0);
        assert_eq!(rows[2][47], 1.0);
        // Two content clusters: each page is in one of them (rank 0) or the other (rank 1).
        for r in &rows {
            assert!(r[0] == 0.0 || r[1] == 0.0, "{r:?}");
        }
        // Deterministic.
        assert_eq!(rows, page_features(&pages, |t| t == 5, &config));
    }
}
