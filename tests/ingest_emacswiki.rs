//! Ingest of the shared EmacsWiki collection, checked against every count of its README
//! (`../shared/data/corpora/emacswiki/README.md`, section "Facts").
//!
//! One ingest is shared by all tests of this file (it reads 53 MB of gzip, 103 MB of HTML).

mod common;

use std::sync::OnceLock;

use refresher::corpus::ingest::{load_corpus, IngestOptions, IngestReport};
use refresher::corpus::summary::CorpusSummary;
use refresher::corpus::{Corpus, LiveWeb, PageState};

const WIKI: &str = "https://www.emacswiki.org/emacs/";

struct Loaded {
    corpus: Corpus,
    report: IngestReport,
    summary: CorpusSummary,
}

fn loaded() -> Option<&'static Loaded> {
    static LOADED: OnceLock<Option<Loaded>> = OnceLock::new();
    LOADED
        .get_or_init(|| {
            let dir = common::shared_data("corpora/emacswiki")?;
            let (corpus, report) =
                load_corpus(&dir, &IngestOptions::default()).expect("EmacsWiki ingests cleanly");
            let summary = CorpusSummary::of(&corpus);
            Some(Loaded {
                corpus,
                report,
                summary,
            })
        })
        .as_ref()
}

fn id(corpus: &Corpus, page: &str) -> u32 {
    let url = format!("{WIKI}{page}");
    corpus
        .page_id(&url)
        .unwrap_or_else(|| panic!("{url} not in corpus"))
}

enum S {
    Present,
    Gone,
    NotYet,
}

fn state_is(corpus: &Corpus, page: &str, unit: u32, expected: S) {
    let got = corpus.page_at(id(corpus, page), unit);
    let ok = matches!(
        (&got, &expected),
        (PageState::Present(_), S::Present)
            | (PageState::Gone, S::Gone)
            | (PageState::NotYetCreated, S::NotYet)
    );
    assert!(ok, "{page} at week {unit}: got {got:?}");
}

const RECORDS_PER_WEEK: [usize; 48] = [
    6417, 37, 30, 84, 69, 56, 57, 70, 83, 47, 60, 60, 60, 63, 74, 46, 85, 64, 58, 79, 53, 48, 56,
    39, 50, 33, 36, 51, 28, 40, 45, 50, 42, 81, 45, 46, 40, 40, 39, 37, 44, 42, 54, 50, 29, 53, 50,
    55,
];

const PAGES_PER_WEEK: [usize; 48] = [
    6417, 6421, 6424, 6445, 6460, 6467, 6483, 6493, 6523, 6527, 6538, 6549, 6553, 6561, 6561, 6567,
    6597, 6616, 6633, 6652, 6665, 6673, 6684, 6689, 6698, 6703, 6709, 6719, 6720, 6727, 6736, 6743,
    6750, 6766, 6773, 6782, 6790, 6795, 6797, 6806, 6811, 6819, 6831, 6842, 6847, 6858, 6867, 6877,
];

const DELETED: [(&str, u32); 21] = [
    ("Ampc", 9),
    ("AmpcScreenShot", 12),
    ("AndroidOnEmacs", 9),
    ("AutoInsertForTexinfo", 14),
    ("CategoryDuckDuckGo", 14),
    ("Comments_on_CategoryDuckDuckGo", 14),
    ("Comments_on_EmacsChannelTabu", 6),
    ("Comments_on_EmacsWiki", 12),
    ("Comments_on_TinyUrl", 12),
    ("EmacsChannelTabu", 6),
    ("Ian_Yang", 7),
    ("Jambunathan_K", 16),
    ("Keyboard_Macros", 7),
    ("ScratchBufferAutoSaveFileRemoval", 14),
    ("SitemapDiscussion", 7),
    ("Tabbar", 14),
    ("ToDoAndPalmPilot", 13),
    ("WikiSyncWithPalm", 13),
    ("esbash", 14),
    ("essh_package", 14),
    ("rcircOpDeop", 10),
];

#[test]
fn page_counts_match_readme() {
    let Some(l) = loaded() else { return };
    let s = &l.summary;
    assert_eq!(s.units, 48);
    assert_eq!(s.pages_total, 6898);
    assert_eq!(s.pages_per_unit[0], 6417);
    assert_eq!(s.pages_per_unit[47], 6877);
    assert_eq!(s.pages_in_all_units, 6402);
    assert_eq!(s.pages_created, 481);
    assert_eq!(s.pages_deleted, 21);
    assert_eq!(s.pages_deleted_and_created, 7);
    assert_eq!(s.pages_absent_then_back, 1);
    assert_eq!(s.pages_per_unit, PAGES_PER_WEEK);
}

#[test]
fn record_counts_match_readme() {
    let Some(l) = loaded() else { return };
    let (s, r) = (&l.summary, &l.report);
    assert_eq!(s.versions_ok, 8853);
    assert_eq!(s.versions_gone, 22);
    assert_eq!(s.versions, 8875);
    assert_eq!(r.responses_ok, 8853);
    assert_eq!(r.responses_gone, 22);
    assert_eq!(r.files, 2);
    // One warcinfo record per file.
    assert_eq!(r.other_records, 2);
    assert_eq!(r.records, 8877);
    assert_eq!(r.superseded, 0);
    assert!(r.skipped.is_empty(), "{:?}", r.skipped);
    assert!(r.lossy_utf8.is_empty(), "{:?}", r.lossy_utf8);
    assert_eq!(s.records_per_unit, RECORDS_PER_WEEK);
    let per_unit: Vec<usize> = r.records_per_unit.iter().map(|&n| n as usize).collect();
    assert_eq!(per_unit, RECORDS_PER_WEEK);
    // README: mean 11626 bytes of HTML per (200) record; the 22 tiny 404 bodies add < 0.2.
    let mean_bytes = r.body_bytes as f64 / 8853.0;
    assert!((mean_bytes - 11626.0).abs() < 1.0, "{mean_bytes}");
}

#[test]
fn changed_weeks_histogram_and_top_pages_match_readme() {
    let Some(l) = loaded() else { return };
    let hist: Vec<(String, usize)> = l
        .summary
        .changed_units_histogram
        .iter()
        .map(|b| (b.label.clone(), b.pages))
        .collect();
    let expected = [
        ("0", 5907),
        ("1", 639),
        ("2", 172),
        ("3-5", 138),
        ("6-10", 25),
        ("11-20", 14),
        ("21+", 3),
    ];
    let expected: Vec<(String, usize)> =
        expected.iter().map(|(l, n)| (l.to_string(), *n)).collect();
    assert_eq!(hist, expected);
    let top: Vec<(String, u32)> = l
        .summary
        .top_changed
        .iter()
        .map(|p| (p.url.trim_start_matches(WIKI).to_string(), p.changed_units))
        .collect();
    assert_eq!(
        top[..6],
        [
            ("BannedHosts".to_string(), 41),
            ("BannedContent".to_string(), 27),
            ("XueFuqiao".to_string(), 23),
            ("EmacsWikiProblems".to_string(), 20),
            ("CategoryHomepage".to_string(), 19),
            ("GuileEmacsTodo".to_string(), 15),
        ]
    );
    // The README lists four pages at 14 changed weeks (its tie order differs from ours).
    let mut fourteen: Vec<&str> = top[6..].iter().map(|(u, _)| u.as_str()).collect();
    fourteen.sort();
    assert_eq!(
        fourteen,
        [
            "AutoIndentMode",
            "ELPA",
            "Icicles_-_Customization_and_General_Tips",
            "MichaelPaulukonis"
        ]
    );
    assert!(top[6..].iter().all(|(_, n)| *n == 14));
}

#[test]
fn deleted_pages_are_gone_from_their_first_absent_week() {
    let Some(l) = loaded() else { return };
    let c = &l.corpus;
    let mut deleted_seen = 0;
    for (page, week) in DELETED {
        state_is(c, page, week - 1, S::Present);
        state_is(c, page, week, S::Gone);
        state_is(c, page, 47, S::Gone);
        deleted_seen += 1;
    }
    assert_eq!(deleted_seen, l.summary.pages_deleted);
    // Created at week 4, deleted at week 7.
    state_is(c, "Ian_Yang", 3, S::NotYet);
    state_is(c, "Ian_Yang", 0, S::NotYet);
    state_is(c, "Ian_Yang", 4, S::Present);
    state_is(c, "Ian_Yang", 6, S::Present);
    // Created at week 1 and never deleted.
    state_is(c, "DanielHilst", 0, S::NotYet);
    state_is(c, "DanielHilst", 1, S::Present);
    state_is(c, "DanielHilst", 47, S::Present);
}

#[test]
fn sitemap_discussion_is_absent_weeks_7_to_23_then_back() {
    let Some(l) = loaded() else { return };
    let c = &l.corpus;
    for week in 0..48 {
        let expected = if (7..=23).contains(&week) {
            S::Gone
        } else {
            S::Present
        };
        state_is(c, "SiteMapDiscussion", week, expected);
    }
    let back = c
        .page_at(id(c, "SiteMapDiscussion"), 24)
        .present()
        .expect("back at week 24");
    assert_eq!(back.unit, 24);
    assert!(!back.terms.counts.is_empty());
}

#[test]
fn versions_carry_text_terms_and_links() {
    let Some(l) = loaded() else { return };
    let c = &l.corpus;
    let elpa = c
        .page_at(id(c, "ELPA"), 47)
        .present()
        .expect("ELPA present");
    assert_eq!(elpa.title, "ELPA");
    assert!(elpa.text.starts_with("ELPA"), "{}", &elpa.text[..40]);
    assert!(!elpa.links.is_empty());
    assert!(
        elpa.links.windows(2).all(|w| w[0] < w[1]),
        "sorted, deduped"
    );
    assert!(!elpa.links.contains(&id(c, "ELPA")), "no self-link");
    let package = c.vocabulary.get("packag").expect("stemmed term interned");
    assert!(elpa.terms.tf(package) > 0);
    // Page ids follow byte order of URLs (upper case before lower case).
    assert!(id(c, "Tabbar") < id(c, "esbash"));
    for w in c.pages.windows(2) {
        assert!(w[0].url.as_bytes() < w[1].url.as_bytes());
    }
    // Mean words (README: 473.4 first version, 726.4 per record, counted on tag-stripped
    // HTML); our visible-text words are within 5 % of both.
    let s = &l.summary;
    assert!((s.mean_words_first_version / 473.4 - 1.0).abs() < 0.05);
    assert!((s.mean_words_per_version / 726.4 - 1.0).abs() < 0.05);
}

#[test]
fn cli_json_has_design_keys_and_readme_values() {
    let Some(dir) = common::shared_data("corpora/emacswiki") else {
        return;
    };
    let out = std::process::Command::new(common::refresher_bin())
        .args(["ingest", "--corpus"])
        .arg(&dir)
        .arg("--json")
        .output()
        .expect("run refresher");
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(v["pages_total"], 6898);
    assert_eq!(v["pages_in_all_units"], 6402);
    assert_eq!(v["pages_created"], 481);
    assert_eq!(v["pages_deleted"], 21);
    assert_eq!(v["versions"], 8875);
    assert_eq!(v["units"], 48);
    assert_eq!(v["ingest"]["files"], 2);
    assert_eq!(v["ingest"]["skipped"].as_array().map(Vec::len), Some(0));
}
