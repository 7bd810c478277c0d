//! The three shared real query logs, checked against the exact counts of
//! `shared/data/querylogs/README.md`.

mod common;

use refresher::querylog::layouts::{read_log, ReadOptions};
use refresher::querylog::{LogLayout, QueryLog};

const AOL_COLLECTION: &str = "querylogs/aol-2006-heavy-users.even-anonid.collection-layout.txt.gz";
const AOL_PER_USER: &str = "querylogs/aol-wasiahmad-user_search_logs.even-anonid.tar.gz";
const EXCITE: &str = "querylogs/excite-1997-pig-tutorial-excite-small.log.gz";

/// 2006-03-01 00:01:44 and 2006-05-31 23:58:33, read as UTC.
const AOL_FIRST: i64 = 1_141_171_304;
const AOL_LAST: i64 = 1_149_119_913;

const AOL_TOP20: [(&str, u64); 20] = [
    ("google", 2739),
    ("yahoo", 2437),
    ("ebay", 2426),
    ("myspace", 2078),
    ("craigslist", 968),
    ("yahoo mail", 876),
    ("keen", 628),
    ("adam4adam", 626),
    ("horoscopes", 556),
    ("bank of america", 537),
    ("friends of josh groban", 515),
    ("facebook", 459),
    ("yahoo email", 379),
    ("craigslists new york", 358),
    ("yahoo games", 346),
    ("msn", 342),
    ("t craigs list tampa", 313),
    ("migente", 295),
    ("sorcerers place", 282),
    ("kasamba", 281),
];

fn keep_repeats() -> ReadOptions {
    ReadOptions {
        layout: None,
        keep_repeats: true,
        ..ReadOptions::default()
    }
}

fn read(relative: &str, options: &ReadOptions) -> Option<QueryLog> {
    let path = common::shared_data(relative)?;
    Some(read_log(&path, options).unwrap_or_else(|e| panic!("{e}")))
}

fn assert_aol_records(log: &QueryLog) {
    assert_eq!(log.submissions.len(), 166_281);
    assert_eq!(log.distinct_query_strings(), 84_684);
    assert_eq!(log.users(), 515);
    assert_eq!(log.click_lines, 211_254);
    assert_eq!(log.time_range(), Some((AOL_FIRST, AOL_LAST)));
    assert!(log.skipped.is_empty(), "{:?}", &log.skipped[..1]);
    assert_eq!(log.non_utf8_lines, 0);
    let top: Vec<(String, u64)> = AOL_TOP20.iter().map(|(q, c)| (q.to_string(), *c)).collect();
    assert_eq!(log.top_queries(20), top);
}

#[test]
fn aol_collection_layout_counts() {
    let Some(log) = read(AOL_COLLECTION, &keep_repeats()) else {
        return;
    };
    assert_eq!(log.layout, LogLayout::Aol);
    assert_eq!(log.lines, 211_254);
    assert_aol_records(&log);
}

#[test]
fn aol_per_user_archive_counts() {
    let Some(log) = read(AOL_PER_USER, &keep_repeats()) else {
        return;
    };
    assert_eq!(log.layout, LogLayout::AolPerUser);
    assert_eq!(log.lines, 543_816);
    assert_aol_records(&log);
}

#[test]
fn aol_layouts_agree_when_collapsing_repeats() {
    let default = ReadOptions::default();
    let (Some(a), Some(b)) = (read(AOL_COLLECTION, &default), read(AOL_PER_USER, &default)) else {
        return;
    };
    assert!(a.submissions.len() < 166_281);
    assert_eq!(a.submissions.len(), b.submissions.len());
    let key = |log: &QueryLog| -> Vec<(String, Option<i64>, String)> {
        log.submissions
            .iter()
            .map(|s| (s.user.clone(), s.time, s.query.clone()))
            .collect()
    };
    let (mut ka, mut kb) = (key(&a), key(&b));
    ka.sort();
    kb.sort();
    assert_eq!(ka, kb);
    eprintln!(
        "AOL with result-page repeats collapsed: {} submissions",
        a.submissions.len()
    );
}

#[test]
fn excite_counts() {
    let Some(log) = read(EXCITE, &keep_repeats()) else {
        return;
    };
    assert_eq!(log.layout, LogLayout::Excite);
    assert_eq!(log.lines, 4_501);
    assert_eq!(log.submissions.len(), 4_501);
    assert_eq!(log.users(), 891);
    assert_eq!(log.distinct_query_strings(), 2_106);
    let empty = log
        .submissions
        .iter()
        .filter(|s| s.query.is_empty())
        .count();
    assert_eq!(empty, 533);
    // 1997-09-16 00:10:11 .. 1997-09-17 00:09:23 as UTC.
    assert_eq!(log.time_range(), Some((874_368_611, 874_454_963)));
    let top = log.top_queries(21);
    assert_eq!(top[0], (String::new(), 533));
    let expected_head = [
        ("maytag", 41),
        ("vanderheiden", 27),
        ("change bowel habits", 24),
        ("en vogue", 23),
        ("running shoes", 22),
        ("pregnant", 20),
        ("ebony divas black", 19),
    ];
    for (i, (q, c)) in expected_head.iter().enumerate() {
        assert_eq!(top[i + 1], (q.to_string(), *c));
    }
    let count_of = |q: &str| top.iter().find(|(t, _)| t == q).map(|(_, c)| *c);
    assert_eq!(count_of("cheerleader skirt "), Some(13));
    assert_eq!(count_of(" \"south west ridas\""), Some(13));
    assert_eq!(count_of("lil kim lil' -htm -streetsound"), Some(11));
    let replacement = log
        .submissions
        .iter()
        .filter(|s| s.query.contains('\u{fffd}'))
        .count();
    assert_eq!(replacement, 15);
}
