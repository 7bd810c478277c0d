//! Checks of the generator's output against its own ground truth and the shape of real data.

use std::collections::{BTreeMap, HashSet};
use std::io::Read;
use std::path::Path;

use super::*;
use crate::text::Analyzer;

fn small(seed: u64) -> GeneratorConfig {
    GeneratorConfig {
        pages: 200,
        weeks: 12,
        seed,
        queries: 3000,
        ..GeneratorConfig::default()
    }
}

fn generate(config: &GeneratorConfig) -> (tempfile::TempDir, GeneratedSite) {
    let dir = tempfile::tempdir().expect("temp dir");
    let site = generate_site(config, dir.path()).expect("generation succeeds");
    (dir, site)
}

/// One WARC record: its header fields in order and its block.
struct Record {
    fields: Vec<(String, String)>,
    block: Vec<u8>,
}

impl Record {
    fn field(&self, name: &str) -> &str {
        self.fields
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .unwrap_or_else(|| panic!("record has no {name}"))
    }
}

/// Reads a WARC file gzip member by gzip member, checking each member holds exactly one
/// well-formed record whose `Content-Length` is the length of its block.
fn read_warc(path: &Path) -> Vec<Record> {
    let bytes = std::fs::read(path).expect("readable WARC");
    let mut rest: &[u8] = &bytes;
    let mut records = Vec::new();
    while !rest.is_empty() {
        let mut gz = flate2::bufread::GzDecoder::new(rest);
        let mut member = Vec::new();
        gz.read_to_end(&mut member).expect("a gzip member");
        rest = gz.into_inner();
        let text_end = member
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("header ends with an empty line");
        let header = std::str::from_utf8(&member[..text_end]).expect("UTF-8 header");
        let mut lines = header.split("\r\n");
        assert_eq!(lines.next(), Some("WARC/1.1"));
        let fields: Vec<(String, String)> = lines
            .map(|l| {
                let (k, v) = l.split_once(": ").expect("`Name: value` field");
                (k.to_string(), v.to_string())
            })
            .collect();
        let body = &member[text_end + 4..];
        assert!(body.ends_with(b"\r\n\r\n"), "record ends with two CRLFs");
        let block = body[..body.len() - 4].to_vec();
        let record = Record { fields, block };
        let length: usize = record.field("Content-Length").parse().expect("a length");
        assert_eq!(
            length,
            record.block.len(),
            "WARC Content-Length is the block length"
        );
        records.push(record);
    }
    records
}

/// Status code and body of an HTTP response block, checking its own Content-Length.
fn http(block: &[u8]) -> (u16, String) {
    let text = std::str::from_utf8(block).expect("UTF-8 HTTP block");
    let (head, body) = text.split_once("\r\n\r\n").expect("HTTP header end");
    let mut lines = head.split("\r\n");
    let status = match lines.next() {
        Some("HTTP/1.1 200 OK") => 200,
        Some("HTTP/1.1 404 Not Found") => 404,
        other => panic!("unexpected status line {other:?}"),
    };
    let lines: Vec<&str> = lines.collect();
    assert!(lines.contains(&"Content-Type: text/html; charset=utf-8"));
    assert!(lines.contains(&format!("Content-Length: {}", body.len()).as_str()));
    (status, body.to_string())
}

fn all_files(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for sub in ["corpus", "querylog"] {
        let mut names: Vec<_> = std::fs::read_dir(root.join(sub))
            .expect("output dir")
            .map(|e| e.expect("entry").path())
            .collect();
        names.sort();
        for p in names {
            let key = p
                .strip_prefix(root)
                .expect("under root")
                .display()
                .to_string();
            out.insert(key, std::fs::read(&p).expect("readable"));
        }
    }
    out
}

/// Log lines after the header, split into fields.
fn log_lines(site: &GeneratedSite) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(&site.query_log).expect("log");
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(AOL_HEADER));
    lines
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

/// xxh3 of every file (names and bytes) of `small(7)`, as the generator wrote it before
/// multi-site sites and change correlation existed: one site without correlation must stay
/// byte-identical (pinned results and EmacsWiki-shaped figures depend on it).
const SMALL_7_DIGEST: u64 = 0x8d15_f1fe_d654_35af;

#[test]
fn one_site_without_correlation_is_byte_identical_to_before() {
    let (a, _) = generate(&small(7));
    let mut digest = xxhash_rust::xxh3::Xxh3::new();
    for (name, bytes) in all_files(a.path()) {
        digest.update(name.as_bytes());
        digest.update(&bytes);
    }
    assert_eq!(digest.digest(), SMALL_7_DIGEST, "{:#x}", digest.digest());
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let (a, _) = generate(&small(7));
    let (b, _) = generate(&small(7));
    let (c, _) = generate(&small(8));
    let fa = all_files(a.path());
    assert!(fa.len() >= 2);
    assert_eq!(fa, all_files(b.path()));
    let fc = all_files(c.path());
    for (name, bytes) in &fa {
        assert_ne!(
            Some(bytes),
            fc.get(name),
            "{name} should differ across seeds"
        );
    }
}

#[test]
fn warc_records_are_well_formed_and_match_the_truth() {
    let config = small(3);
    let (_dir, site) = generate(&config);
    let t = &site.truth;
    assert_eq!(site.warc_files.len(), 1);
    let name = site.warc_files[0].file_name().unwrap().to_str().unwrap();
    assert_eq!(name, "synthetic-wiki-00000.warc.gz");
    let records = read_warc(&site.warc_files[0]);
    assert_eq!(records[0].field("WARC-Type"), "warcinfo");
    assert_eq!(records[0].field("WARC-Filename"), name);
    let responses = &records[1..];
    assert_eq!(responses.len() as u64, t.records_ok + t.records_gone);
    let mut per_week = vec![0u64; config.weeks as usize];
    let mut previous = (String::new(), String::new());
    let mut ids = HashSet::new();
    let (mut ok, mut gone) = (0, 0);
    for r in responses {
        assert_eq!(r.field("WARC-Type"), "response");
        assert_eq!(
            r.field("Content-Type"),
            "application/http; msgtype=response"
        );
        let id = r.field("WARC-Record-ID");
        assert!(id.starts_with("<urn:uuid:") && id.ends_with('>') && id.len() == 47);
        assert!(ids.insert(id.to_string()), "record ids are unique");
        let date = r.field("WARC-Date").to_string();
        let t0 = chrono::DateTime::parse_from_rfc3339(&date).expect("RFC 3339 date");
        let offset = t0.timestamp() - config.origin;
        assert_eq!(offset % WEEK, 0, "dates are week boundaries");
        per_week[(offset / WEEK) as usize] += 1;
        let uri = r.field("WARC-Target-URI").to_string();
        assert!(uri.starts_with("https://wiki.synthetic.example/wiki/"));
        assert!(
            (date.clone(), uri.clone()) > previous,
            "ordered by week, then URL"
        );
        previous = (date, uri);
        match http(&r.block) {
            (200, body) => {
                ok += 1;
                assert!(body.contains("<title>") && body.contains("<h1>"));
            }
            (_, body) => {
                gone += 1;
                assert_eq!(body, super::warc::GONE_BODY);
            }
        }
    }
    assert_eq!((ok, gone), (t.records_ok, t.records_gone));
    assert_eq!(per_week, t.records_per_week);
    assert_eq!(per_week[0], config.pages as u64);
}

#[test]
fn files_are_split_at_the_size_limit_each_with_a_warcinfo() {
    let config = GeneratorConfig {
        max_file_bytes: 60_000,
        ..small(5)
    };
    let (_dir, site) = generate(&config);
    assert!(site.warc_files.len() > 2);
    let mut responses = 0u64;
    for (i, f) in site.warc_files.iter().enumerate() {
        let name = f.file_name().unwrap().to_str().unwrap();
        assert_eq!(name, format!("synthetic-wiki-{i:05}.warc.gz"));
        let records = read_warc(f);
        assert_eq!(records[0].field("WARC-Type"), "warcinfo");
        assert!(records[1..]
            .iter()
            .all(|r| r.field("WARC-Type") == "response"));
        responses += records.len() as u64 - 1;
        let size = std::fs::metadata(f).unwrap().len();
        assert!(size <= config.max_file_bytes || records.len() == 2);
    }
    assert_eq!(responses, site.truth.records_ok + site.truth.records_gone);
}

#[test]
fn changes_are_heavy_tailed_and_of_every_kind() {
    let config = small(11);
    let (_dir, site) = generate(&config);
    let t = &site.truth;
    let pages = t.changed_weeks.len();
    assert_eq!(pages as u64, t.pages_total);
    let calm = t.changed_weeks.iter().filter(|(_, c)| *c <= 1).count();
    assert!(
        calm * 10 >= pages * 7,
        "{calm} of {pages} pages change at most once"
    );
    let busiest = t.changed_weeks.iter().map(|(_, c)| *c).max().unwrap();
    assert!(
        busiest * 2 >= config.weeks - 1,
        "busiest page changed in {busiest} weeks"
    );
    let k = &t.change_kinds;
    assert!(k.ad_churn > 0 && k.topical_edit > 0 && k.typo > 0 && k.link_added > 0);
    assert!(t.max_in_links >= 4 * t.median_in_links.max(1), "{t:?}");
}

#[test]
fn pages_are_created_and_deleted() {
    let (_dir, site) = generate(&small(13));
    let t = &site.truth;
    assert!(t.pages_created > 0);
    assert!(t.pages_deleted > 0);
    assert_eq!(t.pages_returned, 1);
    assert_eq!(t.records_gone, t.pages_deleted + t.pages_returned);
    assert_eq!(t.pages_total, t.pages_week0 + t.pages_created);
    assert_eq!(t.pages_last_week, t.pages_total - t.pages_deleted);
    assert!(t.records_per_week[1..].iter().any(|&r| r > 0));
}

#[test]
fn page_lengths_are_log_normal_around_150_words() {
    let (_dir, site) = generate(&small(17));
    let records = read_warc(&site.warc_files[0]);
    let mut words: Vec<usize> = records[1..]
        .iter()
        .take(200)
        .map(|r| {
            let (_, body) = http(&r.block);
            let mut text = String::new();
            let mut in_tag = false;
            for ch in body.chars() {
                match ch {
                    '<' => in_tag = true,
                    '>' => {
                        in_tag = false;
                        text.push(' ');
                    }
                    c if !in_tag => text.push(c),
                    _ => {}
                }
            }
            text.split_whitespace().count()
        })
        .collect();
    words.sort_unstable();
    let median = words[words.len() / 2];
    let mean = words.iter().sum::<usize>() / words.len();
    assert!((90..=300).contains(&median), "median {median} words");
    assert!(
        mean > median,
        "heavy right tail: mean {mean}, median {median}"
    );
}

#[test]
fn queries_are_short_never_ads_and_partly_off_site() {
    let (_dir, site) = generate(&small(19));
    let mut analyzer = Analyzer::new();
    let ad_stems: HashSet<String> = site
        .truth
        .ad_words
        .iter()
        .flat_map(|w| analyzer.terms(w))
        .collect();
    let records = read_warc(&site.warc_files[0]);
    let mut site_stems = HashSet::new();
    for r in &records[1..] {
        let (_, body) = http(&r.block);
        for t in analyzer.terms(&body) {
            site_stems.insert(t);
        }
    }
    let lines = log_lines(&site);
    let mut off_site = 0;
    for fields in &lines {
        let terms = analyzer.distinct_terms(&fields[1]);
        assert!((1..=3).contains(&terms.len()), "query {:?}", fields[1]);
        assert!(
            terms.iter().all(|t| !ad_stems.contains(t)),
            "{:?}",
            fields[1]
        );
        if terms.iter().any(|t| !site_stems.contains(t)) {
            off_site += 1;
        }
    }
    let share = off_site as f64 / lines.len() as f64;
    assert!((0.2..0.45).contains(&share), "off-site share {share}");
}

#[test]
fn log_has_aol_layout_sorted_by_user_then_time() {
    let (_dir, site) = generate(&small(23));
    let lines = log_lines(&site);
    assert_eq!(lines.len() as u64, site.truth.log.lines);
    assert!(lines.len() >= 3000 && lines.len() < 3010);
    let mut previous = (0u64, String::new());
    let mut clicks = 0;
    let mut repeats = 0;
    for (i, f) in lines.iter().enumerate() {
        assert!(f.len() == 3 || f.len() == 5, "line {i}: {f:?}");
        let key = (f[0].parse::<u64>().expect("numeric AnonID"), f[2].clone());
        assert!(key >= previous, "line {i} out of order");
        previous = key;
        chrono::NaiveDateTime::parse_from_str(&f[2], "%Y-%m-%d %H:%M:%S").expect("QueryTime");
        if f.len() == 5 {
            clicks += 1;
            let rank: u32 = f[3].parse().expect("ItemRank");
            assert!((1..=10).contains(&rank));
            assert!(f[4].starts_with("http"));
        } else if i > 0 && lines[i - 1][0] == f[0] && lines[i - 1][1] == f[1] {
            repeats += 1;
        }
    }
    assert_eq!(clicks, site.truth.log.click_lines);
    assert!(repeats > 0, "some result-page repeats");
    let rank1 = lines.iter().filter(|f| f.len() == 5 && f[3] == "1").count();
    let rank5 = lines.iter().filter(|f| f.len() == 5 && f[3] == "5").count();
    assert!(
        rank1 > 5 * rank5,
        "clicks are rank-biased: {rank1} at 1, {rank5} at 5"
    );
    let users: HashSet<&str> = lines.iter().map(|f| f[0].as_str()).collect();
    assert_eq!(users.len() as u64, site.truth.log.users);
}

#[test]
fn query_popularity_is_zipf_like() {
    let (_dir, site) = generate(&small(29));
    let mut freq: BTreeMap<String, u64> = BTreeMap::new();
    for f in log_lines(&site) {
        *freq.entry(f[1].clone()).or_default() += 1;
    }
    let mut counts: Vec<u64> = freq.into_values().collect();
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let median = counts[counts.len() / 2];
    assert!(
        counts[0] >= 10 * median,
        "top {} vs median {median}",
        counts[0]
    );
}

#[test]
fn rejects_an_empty_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let config = GeneratorConfig {
        pages: 1,
        ..small(1)
    };
    let err = generate_site(&config, dir.path()).unwrap_err();
    assert!(matches!(err, GenerateError::Config(_)), "{err}");
}

#[test]
fn the_warc_crate_reads_every_record_back() {
    // The ingest reads with the `warc` crate over a multi-member gzip stream; it must accept
    // every record exactly as written, with the same target URIs and dates.
    let (_dir, site) = generate(&small(31));
    let file = std::fs::File::open(&site.warc_files[0]).expect("WARC");
    let stream = std::io::BufReader::new(flate2::read::MultiGzDecoder::new(file));
    let mut responses = 0u64;
    for (i, record) in ::warc::WarcReader::new(stream).iter_records().enumerate() {
        let record = record.unwrap_or_else(|e| panic!("record {i}: {e}"));
        if i == 0 {
            assert_eq!(record.warc_type(), &::warc::RecordType::WarcInfo);
            continue;
        }
        assert_eq!(record.warc_type(), &::warc::RecordType::Response);
        assert!(record
            .header(::warc::WarcHeader::TargetURI)
            .expect("target URI")
            .starts_with("https://wiki.synthetic.example/wiki/"));
        assert_eq!((record.date().timestamp() - DEFAULT_ORIGIN) % WEEK, 0);
        assert!(record.body().starts_with(b"HTTP/1.1 "));
        responses += 1;
    }
    assert_eq!(responses, site.truth.records_ok + site.truth.records_gone);
}

/// Mean Pearson correlation of the weekly change indicators over pairs of pages, within the
/// same group (`group` of the URL) and across groups. Only pages that changed in some weeks
/// but not all have a defined correlation.
fn change_correlations(site: &GeneratedSite, weeks: u32, group: fn(&str) -> &str) -> (f64, f64) {
    let series: Vec<(&str, Vec<f64>)> = site
        .truth
        .change_events
        .iter()
        .filter(|(_, w)| !w.is_empty() && w.len() + 1 < weeks as usize)
        .map(|(url, w)| {
            let mut x = vec![0.0; weeks as usize - 1];
            for &week in w {
                x[week as usize - 1] = 1.0;
            }
            (group(url), x)
        })
        .collect();
    let pearson = |a: &[f64], b: &[f64]| {
        let n = a.len() as f64;
        let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
        let cov: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
        let va: f64 = a.iter().map(|x| (x - ma).powi(2)).sum();
        let vb: f64 = b.iter().map(|y| (y - mb).powi(2)).sum();
        cov / (va * vb).sqrt()
    };
    let (mut within, mut across) = ((0.0, 0usize), (0.0, 0usize));
    for (i, (ga, a)) in series.iter().enumerate() {
        for (gb, b) in &series[i + 1..] {
            let r = pearson(a, b);
            let acc = if ga == gb { &mut within } else { &mut across };
            acc.0 += r;
            acc.1 += 1;
        }
    }
    assert!(within.1 >= 50, "too few within-group pairs: {}", within.1);
    (within.0 / within.1 as f64, across.0 / across.1 as f64)
}

/// The directory of a URL: everything up to its last `/`.
fn directory(url: &str) -> &str {
    &url[..url.rfind('/').map_or(url.len(), |i| i + 1)]
}

/// The host of an `https://host/...` URL.
fn host(url: &str) -> &str {
    url.trim_start_matches("https://")
        .split('/')
        .next()
        .unwrap_or("")
}

fn multi_site(strength: f64, groups: &str) -> GeneratorConfig {
    GeneratorConfig {
        pages: 1500,
        weeks: 20,
        seed: 21,
        queries: 10,
        sites: 3,
        correlation: ChangeCorrelation {
            strength,
            groups: CorrelationGroups::parse(groups).unwrap(),
        },
        ..GeneratorConfig::default()
    }
}

#[test]
fn within_directory_change_correlation_rises_with_strength() {
    let mut within = Vec::new();
    for strength in [0.0, 0.5, 0.9] {
        let config = multi_site(strength, "directory");
        let (_dir, site) = generate(&config);
        let (w, a) = change_correlations(&site, config.weeks, directory);
        eprintln!("ρ = {strength}: within-directory {w:.4}, across {a:.4}");
        // Across directories nothing is shared at any strength.
        assert!(
            a.abs() < 0.03,
            "ρ = {strength}: across-directory correlation {a}"
        );
        within.push(w);
    }
    assert!(within[0].abs() < 0.03, "independent pages: {within:?}");
    assert!(within[1] > within[0] + 0.05, "moderate: {within:?}");
    assert!(within[2] > within[1] + 0.05, "strong: {within:?}");
}

#[test]
fn site_grouping_correlates_whole_sites() {
    let config = multi_site(0.9, "site");
    let (_dir, site) = generate(&config);
    let (within_site, across_sites) = change_correlations(&site, config.weeks, host);
    eprintln!("site grouping, ρ = 0.9: within-site {within_site:.4}, across {across_sites:.4}");
    assert!(within_site > 0.1, "{within_site}");
    assert!(across_sites.abs() < 0.03, "{across_sites}");
}

#[test]
fn multi_site_layout_has_directory_trees_and_markup() {
    let config = multi_site(0.0, "directory");
    let (_dir, site) = generate(&config);
    let hosts: Vec<&str> = site.truth.sites.iter().map(|s| s.host.as_str()).collect();
    assert_eq!(hosts, ["site1.example", "site2.example", "site3.example"]);
    assert!(site
        .truth
        .sites
        .iter()
        .all(|s| s.pages > 0 && s.directories >= 3));
    let urls: Vec<&str> = site
        .truth
        .changed_weeks
        .iter()
        .map(|(u, _)| u.as_str())
        .collect();
    let max_depth = urls
        .iter()
        .map(|u| u.trim_start_matches("https://").matches('/').count())
        .max()
        .unwrap();
    assert!(max_depth >= 3, "nested directories: {max_depth}");
    let html: String = site
        .warc_files
        .iter()
        .flat_map(|f| read_warc(f))
        .map(|r| String::from_utf8_lossy(&r.block).into_owned())
        .collect();
    for needle in ["<img src=", "<table>", "href=\"mailto:"] {
        assert!(html.contains(needle), "{needle}");
    }
}
