//! Building a [`Corpus`] from WARC files.
//!
//! The work runs as a two-stage pipeline: one thread reads and decompresses the WARC files in
//! name order (gzip inflation and record framing are sequential by nature) and sends batches
//! of response records; the calling thread extracts HTML and tokenizes each batch in parallel
//! with rayon (one `CaptureAnalyzer` per task, as analyzers are not `Sync`). Term ids and
//! page ids must not depend on thread timing, so the parallel stage gives terms only
//! provisional ids (`ProvisionalTerms`, in whatever order threads meet them): each capture
//! keeps its distinct terms in first-occurrence order as provisional ids, and the final,
//! sequential pass interns them in (page id, version) order, which gives exactly the ids
//! [`TermCounts::from_terms`] would give over the full token streams. A capture waiting for
//! that pass holds 8 bytes per distinct term instead of the term's text (about 64 bytes with
//! its allocation): on a generated site of 10^6 pages, the captures' terms alone took most of
//! 18 GB.
//!
//! Timeline rules: versions are sorted by unit; when a URL has several captures in one unit the
//! latest capture (by `WARC-Date`, then by reading order) is kept and the others are counted in
//! [`IngestReport::superseded`]. A capture identical to the page's previous version (the same
//! body, or gone again) is not a new version: collections that re-record every page every
//! week, changed or not, give the same timelines as those that record changes only, and a
//! copy fetched at one unit stays fresh while the page does not change. Such captures are
//! counted in [`IngestReport::unchanged`].
//!
//! A `revisit` record is read as the response it refers to, re-captured at its own
//! `WARC-Date`: an unchanged re-capture. Its payload is found, in this order, by
//! `WARC-Refers-To-Target-URI` + `WARC-Refers-To-Date`, by `WARC-Payload-Digest` among the
//! responses read (the same URL first), or as the latest earlier capture of the same URL; a
//! revisit none of these finds is a reported skip. Revisits are counted in
//! [`IngestReport::revisits`] (and, like any re-capture of an unchanged page, in `unchanged`
//! when they repeat the page's previous version). Records of other types (`request`,
//! `metadata`, `resource`, `warcinfo`, ...) are counted by type in
//! [`IngestReport::other_by_type`]. Crawl artefacts (`robots.txt`, sitemaps, RSS/Atom feeds,
//! told by media type and content; see [`super::artefact`]) and revisits of their URLs are
//! counted by kind in [`IngestReport::artefacts`] and are not pages. A 404/410 capture marks the page gone from its unit
//! until a later 2xx capture. Other statuses (3xx, 5xx, ...) say nothing about the page's content and
//! are reported skips.
//!
//! [`TermCounts::from_terms`]: crate::text::TermCounts::from_terms

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use rustc_hash::FxHashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use rayon::prelude::*;
use url::Url;
use xxhash_rust::xxh3::xxh3_64;

use super::archive::ArchiveFile;
use super::artefact::{crawl_artefact, CrawlArtefact};
use super::html::{self, indexed_text, sorted_counts, ExtractedPage};
use super::warc_reader::{ResponseRecord, RevisitRecord, WarcItem};
use super::{
    clock::WEEK_SECONDS, Clock, Corpus, PageCounts, PageId, PageTimeline, PageVersion, Unit,
};
use crate::error::{InputError, SkippedInput};
use crate::progress;
use crate::text::{Analyzer, Vocabulary};

pub use super::html::page_version_from_html;

/// Response records sent from the reading thread to the extraction stage at a time.
const BATCH: usize = 128;

/// How captures are mapped onto time units.
#[derive(Debug, Clone)]
pub struct IngestOptions {
    /// Length of one time unit in seconds (default: one week).
    pub unit_seconds: i64,
    /// Start of unit 0 (default: the earliest capture).
    pub origin: Option<i64>,
}

impl Default for IngestOptions {
    fn default() -> Self {
        IngestOptions {
            unit_seconds: WEEK_SECONDS,
            origin: None,
        }
    }
}

/// What ingest read, kept, and skipped.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct IngestReport {
    /// WARC files read.
    pub files: usize,
    /// WARC records read, of every type.
    pub records: u64,
    /// Response records with a 2xx status that were used.
    pub responses_ok: u64,
    /// Response records with a 404/410 status that were used.
    pub responses_gone: u64,
    /// Records that are neither responses nor revisits (warcinfo, request, metadata, ...).
    pub other_records: u64,
    /// `other_records` by WARC-Type (lower case), e.g. `request`, `metadata`, `resource`.
    pub other_by_type: BTreeMap<String, u64>,
    /// `revisit` records read as unchanged re-captures of the payload they refer to.
    pub revisits: u64,
    /// Crawl artefacts (`robots`, `sitemap`, `sitemap_index`, `feed`; see
    /// [`super::artefact`]) by kind: response and revisit records counted here, never
    /// indexed as pages.
    pub artefacts: BTreeMap<String, u64>,
    /// Response bodies whose codings were undone, by coding (`chunked`, `gzip`, `deflate`,
    /// `br`).
    pub decoded: BTreeMap<String, u64>,
    /// Decompressed HTTP body bytes of used response records.
    pub body_bytes: u64,
    /// Used response records per time unit (200 and 404 together, before same-unit merging).
    pub records_per_unit: Vec<u64>,
    /// Captures replaced by a later capture of the same URL in the same unit.
    pub superseded: u64,
    /// Captures identical to the page's previous version (same body, or gone again): not new
    /// versions.
    pub unchanged: u64,
    /// `resource` records holding a page (no HTTP header), read as 200 captures.
    pub resource_pages: u64,
    /// Collections whose units are the crawl's own, read from the `WARC-Refresher-Unit` of
    /// every capture (a `refresher crawl`'s WARC output), not from capture dates.
    pub crawl_unit_collections: usize,
    /// Broken records of archive files that still held intact ones (file, record, byte
    /// offset, reason, and where reading resumed if it did); every intact record was kept.
    pub damaged: Vec<SkippedInput>,
    /// Response records not used, with file, record and reason.
    pub skipped: Vec<SkippedInput>,
    /// Bodies that were not valid UTF-8 and were decoded lossily (U+FFFD for bad bytes).
    pub lossy_utf8: Vec<SkippedInput>,
    /// Wall time of the read + extract + tokenise pipeline.
    pub seconds_read_extract: f64,
    /// Wall time of the whole ingest (pipeline, then timelines, links and term interning).
    pub seconds_total: f64,
}

/// Terms met while extracting in parallel, each under a provisional id given in whatever order
/// the threads met them (see the module docs); [`build_corpus`] replaces them by the final
/// ids.
#[derive(Debug, Default)]
pub(crate) struct ProvisionalTerms {
    ids: dashmap::DashMap<Box<str>, u32, rustc_hash::FxBuildHasher>,
    next: std::sync::atomic::AtomicU32,
}

impl ProvisionalTerms {
    /// `term`'s provisional id (a new one if it is new).
    pub(crate) fn id(&self, term: &str) -> u32 {
        if let Some(id) = self.ids.get(term) {
            return *id;
        }
        *self
            .ids
            .entry(term.into())
            .or_insert_with(|| self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }

    /// The terms, indexed by provisional id.
    fn into_terms(self) -> Vec<Box<str>> {
        let mut terms: Vec<Box<str>> = vec![Box::from(""); self.ids.len()];
        for (term, id) in self.ids {
            terms[id as usize] = term;
        }
        terms
    }
}

/// One extraction task's analyzer, numbering terms with [`ProvisionalTerms`] ids.
///
/// It remembers the id of every lower-cased word it met ([`Analyzer::for_each_term_id`]): a
/// word met again costs one hash lookup instead of a stem lookup, a term lookup and a lookup
/// in the shared, locked term map.
pub(crate) struct CaptureAnalyzer<'t> {
    analyzer: Analyzer,
    provisional: &'t ProvisionalTerms,
    words: FxHashMap<Box<str>, u32>,
    /// Per provisional id met in the text being analyzed: its place in the capture's terms.
    slots: FxHashMap<u32, u32>,
}

impl<'t> CaptureAnalyzer<'t> {
    pub(crate) fn new(provisional: &'t ProvisionalTerms) -> Self {
        CaptureAnalyzer {
            analyzer: Analyzer::new(),
            provisional,
            words: FxHashMap::default(),
            slots: FxHashMap::default(),
        }
    }

    /// The distinct terms of `text` as provisional ids, in first-occurrence order, with their
    /// counts, and the token count.
    fn distinct_term_ids(&mut self, text: &str) -> (Vec<(u32, u32)>, u32) {
        let mut terms: Vec<(u32, u32)> = Vec::new();
        let mut length = 0u32;
        let provisional = self.provisional;
        let slots = &mut self.slots;
        slots.clear();
        self.analyzer.for_each_term_id(
            text,
            &mut self.words,
            |term| provisional.id(term),
            |id| {
                length += 1;
                let slot = *slots.entry(id).or_insert_with(|| {
                    terms.push((id, 0));
                    terms.len() as u32 - 1
                });
                terms[slot as usize].1 += 1;
            },
        );
        (terms, length)
    }
}

/// One response record after extraction, before it is placed on a timeline.
#[derive(Debug, Clone)]
pub(crate) struct Capture {
    /// Reading order, across files; breaks ties between captures with the same date.
    pub(crate) seq: u64,
    pub(crate) url: String,
    pub(crate) capture_time: i64,
    pub(crate) status: u16,
    pub(crate) content_hash: u64,
    pub(crate) page: ExtractedPage,
    /// Sizes and element counts (zero for gone captures).
    pub(crate) counts: PageCounts,
    /// Distinct analyzed terms of the indexed text, in first-occurrence order, with counts,
    /// by [`ProvisionalTerms`] id.
    pub(crate) terms: Vec<(u32, u32)>,
    /// Number of tokens of the indexed text.
    pub(crate) length: u32,
    /// `WARC-Payload-Digest` of the record, if any (revisits are matched by it).
    pub(crate) payload_digest: Option<String>,
    /// Built from a `revisit` record (a copy of the capture it refers to).
    pub(crate) revisit: bool,
    /// Index of the collection the capture was read from (its clock's origin).
    pub(crate) collection: u32,
    /// The crawl unit the record was written in (`WARC-Refresher-Unit`), if it says.
    pub(crate) crawl_unit: Option<u32>,
}

/// The archive files `path` stands for: itself, or the `*.warc`, `*.warc.gz`, `*.arc` and
/// `*.arc.gz` files of a directory sorted by name (each file's format is told by its content).
pub fn warc_files(path: &Path) -> Result<Vec<PathBuf>, InputError> {
    let meta = std::fs::metadata(path).map_err(|e| InputError::io(path, e))?;
    if !meta.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(path).map_err(|e| InputError::io(path, e))? {
        let entry = entry.map_err(|e| InputError::io(path, e))?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let archive = [".warc", ".warc.gz", ".arc", ".arc.gz"]
            .iter()
            .any(|ext| name.ends_with(ext));
        if archive && entry.path().is_file() {
            files.push(entry.path());
        }
    }
    files.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    if files.is_empty() {
        return Err(InputError::Empty {
            path: path.to_path_buf(),
            message: "directory holds no *.warc, *.warc.gz, *.arc or *.arc.gz files".to_string(),
        });
    }
    Ok(files)
}

/// A response record on its way to extraction.
struct Pending {
    seq: u64,
    path_index: usize,
    response: ResponseRecord,
}

/// Counters kept by the reading thread.
#[derive(Default)]
struct ReadStats {
    records: u64,
    other: u64,
    body_bytes: u64,
    skipped: Vec<SkippedInput>,
    other_by_type: BTreeMap<String, u64>,
    decoded: BTreeMap<String, u64>,
    /// Revisit records with their reading order and file.
    revisits: Vec<(u64, usize, RevisitRecord)>,
    /// Crawl artefacts by kind, and the URLs they were captured at (their revisits are
    /// artefacts too).
    artefacts: BTreeMap<String, u64>,
    artefact_urls: HashMap<String, CrawlArtefact>,
    resource_pages: u64,
    /// Where damaged files stopped being read.
    damaged: Vec<SkippedInput>,
}

/// Reads a corpus: a WARC file, a directory of them, or a directory of collection folders
/// (each a directory of WARC files; see [`collection_paths`]).
///
/// Files are read in name order; see the module doc for the timeline rules and
/// [`super::warc_reader`] for which bad input is an error and which a counted skip.
pub fn load_corpus(
    path: &Path,
    options: &IngestOptions,
) -> Result<(Corpus, IngestReport), InputError> {
    let sources: Vec<(PathBuf, IngestOptions)> = collection_paths(path)?
        .into_iter()
        .map(|p| (p, options.clone()))
        .collect();
    load_collections(&sources)
}

/// The collections `path` stands for: itself when it is a file or a directory holding WARC
/// files, otherwise its sub-directories that hold WARC files, in name order (a directory of
/// collection folders).
pub fn collection_paths(path: &Path) -> Result<Vec<PathBuf>, InputError> {
    let meta = std::fs::metadata(path).map_err(|e| InputError::io(path, e))?;
    if !meta.is_dir() || warc_files(path).is_ok() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut folders = Vec::new();
    for entry in std::fs::read_dir(path).map_err(|e| InputError::io(path, e))? {
        let entry = entry.map_err(|e| InputError::io(path, e))?;
        if entry.path().is_dir() && warc_files(&entry.path()).is_ok() {
            folders.push(entry.path());
        }
    }
    if folders.is_empty() {
        return Err(InputError::Empty {
            path: path.to_path_buf(),
            message: "directory holds no *.warc, *.warc.gz, *.arc or *.arc.gz files, nor \
                      folders of them (collections)"
                .to_string(),
        });
    }
    folders.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    Ok(folders)
}

/// Where one collection of a corpus came from and how it was placed on the corpus's units.
///
/// Collections captured in different periods are aligned at their own first unit: unit `u` of
/// the corpus is unit `u` of every collection, counted from that collection's `origin`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CollectionInfo {
    /// The collection's file or directory, as given.
    pub path: String,
    /// Start of the collection's unit 0 (its earliest capture unless an origin was given),
    /// Unix seconds, and the same as an RFC 3339 date.
    pub(crate) origin: i64,
    pub(crate) origin_date: String,
    /// Earliest and latest capture, Unix seconds and RFC 3339.
    pub(crate) first_capture: i64,
    pub first_capture_date: String,
    pub(crate) last_capture: i64,
    pub last_capture_date: String,
    /// Units from the collection's unit 0 to its last capture.
    pub units: u32,
    /// Pages (URLs) of the collection.
    pub pages: usize,
    /// Pages per host (each host is a site), by host name.
    pub sites: Vec<SitePages>,
}

/// A site (host) of a collection and its number of pages.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SitePages {
    pub host: String,
    pub pages: usize,
}

/// `YYYY-MM-DDThh:mm:ssZ` of a Unix time (the time itself when out of chrono's range).
fn rfc3339(t: i64) -> String {
    chrono::DateTime::from_timestamp(t, 0)
        .map(|d| d.format("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_else(|| t.to_string())
}

/// The host of a URL (lower case), or the whole URL when it has none.
pub fn host_of(url: &str) -> String {
    Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .unwrap_or_else(|| url.to_string())
}

/// Reads several collections into one corpus, each with its own options.
///
/// Every collection's unit 0 is its own first unit (its `origin`, by default its earliest
/// capture), so a collection captured in 2013 and one captured in 2025 both start at unit 0;
/// [`Corpus::collections`] records the original dates. Page ids follow the URLs' byte order
/// over all collections (deterministic whatever the order the collections are given in).
/// Errors: collections with different unit lengths (they are aligned unit by unit), and a URL
/// captured in two collections (its timeline would mix two clocks).
pub fn load_collections(
    sources: &[(PathBuf, IngestOptions)],
) -> Result<(Corpus, IngestReport), InputError> {
    let Some((first_path, first_options)) = sources.first() else {
        return Err(InputError::Empty {
            path: PathBuf::new(),
            message: "no corpus collection given".to_string(),
        });
    };
    for (path, options) in sources {
        if options.unit_seconds <= 0 {
            return Err(InputError::malformed(
                path,
                "options",
                format!(
                    "unit length must be positive, got {} s",
                    options.unit_seconds
                ),
            ));
        }
        if options.unit_seconds != first_options.unit_seconds {
            return Err(InputError::malformed(
                path,
                "options",
                format!(
                    "unit length {} s differs from the {} s of collection {}: collections are \
                     aligned unit by unit, so their units must be equally long",
                    options.unit_seconds,
                    first_options.unit_seconds,
                    first_path.display()
                ),
            ));
        }
    }
    for (i, (path, _)) in sources.iter().enumerate() {
        if sources[..i].iter().any(|(p, _)| p == path) {
            return Err(InputError::malformed(
                path,
                "collections",
                "the same collection is given twice",
            ));
        }
    }
    let started = std::time::Instant::now();
    let mut report = IngestReport::default();
    let mut captures: Vec<Capture> = Vec::new();
    let mut origins = Vec::with_capacity(sources.len());
    let mut crawl_unit_bases = Vec::with_capacity(sources.len());
    let mut first_url_of: HashMap<String, usize> = HashMap::new();
    let terms = ProvisionalTerms::default();
    for (ci, (path, options)) in sources.iter().enumerate() {
        let next_seq = captures.iter().map(|c| c.seq + 1).max().unwrap_or(0);
        let (mut part, crawl_unit_base) =
            read_collection(path, ci as u32, next_seq, &terms, &mut report)?;
        crawl_unit_bases.push(crawl_unit_base);
        // A URL in two collections is refused: it would have two clocks.
        for c in &part {
            if let Some(&other) = first_url_of.get(&c.url) {
                if other != ci {
                    return Err(InputError::malformed(
                        path,
                        "collections",
                        format!(
                            "URL {} is also in collection {}: a page must come from one \
                             collection",
                            c.url,
                            sources[other].0.display()
                        ),
                    ));
                }
            } else {
                first_url_of.insert(c.url.clone(), ci);
            }
        }
        let earliest = part.iter().map(|c| c.capture_time).min().unwrap_or(0);
        origins.push(options.origin.unwrap_or(earliest));
        captures.append(&mut part);
    }
    report.seconds_read_extract = started.elapsed().as_secs_f64();
    let sources_paths: Vec<&Path> = sources.iter().map(|(p, _)| p.as_path()).collect();
    let mut corpus = build_corpus(
        captures,
        terms,
        &origins,
        &crawl_unit_bases,
        first_options.unit_seconds,
        &mut report,
    );
    corpus.collections = describe_collections(&corpus, &sources_paths, &origins, &first_url_of);
    report.seconds_total = started.elapsed().as_secs_f64();
    Ok((corpus, report))
}

/// Each collection's dates, units and pages per site, from the built corpus.
fn describe_collections(
    corpus: &Corpus,
    paths: &[&Path],
    origins: &[i64],
    collection_of: &HashMap<String, usize>,
) -> Vec<CollectionInfo> {
    let mut infos: Vec<CollectionInfo> = paths
        .iter()
        .zip(origins)
        .map(|(path, &origin)| CollectionInfo {
            path: path.display().to_string(),
            origin,
            origin_date: rfc3339(origin),
            first_capture: i64::MAX,
            first_capture_date: String::new(),
            last_capture: i64::MIN,
            last_capture_date: String::new(),
            units: 0,
            pages: 0,
            sites: Vec::new(),
        })
        .collect();
    let mut sites: Vec<BTreeMap<String, usize>> = vec![BTreeMap::new(); paths.len()];
    for page in &corpus.pages {
        let Some(&ci) = collection_of.get(&page.url) else {
            continue;
        };
        let info = &mut infos[ci];
        info.pages += 1;
        *sites[ci].entry(host_of(&page.url)).or_default() += 1;
        for v in &page.versions {
            info.first_capture = info.first_capture.min(v.capture_time);
            info.last_capture = info.last_capture.max(v.capture_time);
            info.units = info.units.max(v.unit + 1);
        }
    }
    for (info, sites) in infos.iter_mut().zip(sites) {
        info.first_capture_date = rfc3339(info.first_capture);
        info.last_capture_date = rfc3339(info.last_capture);
        info.sites = sites
            .into_iter()
            .map(|(host, pages)| SitePages { host, pages })
            .collect();
    }
    infos
}

/// Reads and extracts one collection's archive files (captures tagged with `collection`,
/// their `seq` from `seq_base`), resolves its revisits, and adds its counters to `report`.
/// Also returns the collection's first crawl unit when every capture carries one (see
/// [`build_corpus`]).
fn read_collection(
    path: &Path,
    collection: u32,
    seq_base: u64,
    terms: &ProvisionalTerms,
    report: &mut IngestReport,
) -> Result<(Vec<Capture>, Option<u32>), InputError> {
    let files = warc_files(path)?;
    let total_bytes: u64 = files
        .iter()
        .map(|f| std::fs::metadata(f).map(|m| m.len()).unwrap_or(0))
        .sum();
    let bar = progress::bar(total_bytes, "reading", true);

    let (tx, rx) = mpsc::sync_channel::<Vec<Pending>>(4);
    let mut captures: Vec<Capture> = Vec::new();
    let mut lossy: Vec<(usize, u64)> = Vec::new();
    let read_result = std::thread::scope(|scope| {
        let reader = scope.spawn(|| read_files(&files, tx, &bar));
        // `par_bridge` rather than a `par_iter` per batch: pages vary from a few words to
        // megabytes of base64, and a per-batch barrier would leave cores idle on stragglers.
        // Order does not matter here: captures carry `seq` and are sorted afterwards.
        let done: Vec<(Capture, Option<(usize, u64)>)> = rx
            .into_iter()
            .flatten()
            .par_bridge()
            .map_init(
                || CaptureAnalyzer::new(terms),
                |analyzer, p| {
                    let record = p.response.record;
                    let (mut capture, was_lossy) =
                        extract_capture(analyzer, seq_base + p.seq, p.response);
                    capture.collection = collection;
                    (capture, was_lossy.then_some((p.path_index, record)))
                },
            )
            .collect();
        for (capture, lossy_at) in done {
            captures.push(capture);
            lossy.extend(lossy_at);
        }
        reader.join().expect("WARC reading thread panicked")
    });
    bar.finish_and_clear();
    let mut stats = read_result?;
    // A revisit of an artefact's URL repeats the artefact: counted with it, not resolved.
    let revisits = std::mem::take(&mut stats.revisits)
        .into_iter()
        .filter(|(_, _, r)| {
            let refers = r.refers_to_uri.as_ref().unwrap_or(&r.target_uri);
            let kind = stats
                .artefact_urls
                .get(&r.target_uri)
                .or_else(|| stats.artefact_urls.get(refers));
            if let Some(kind) = kind {
                *stats.artefacts.entry(kind.name().to_string()).or_default() += 1;
            }
            kind.is_none()
        })
        .map(|(seq, file, r)| (seq_base + seq, file, r))
        .collect();
    resolve_revisits(&mut captures, revisits, &files, &mut stats.skipped);

    report.files += files.len();
    report.records += stats.records;
    report.other_records += stats.other;
    report.resource_pages += stats.resource_pages;
    let damaged = stats.damaged.len();
    report.damaged.extend(stats.damaged);
    for (k, v) in stats.artefacts {
        *report.artefacts.entry(k).or_default() += v;
    }
    for (k, v) in stats.other_by_type {
        *report.other_by_type.entry(k).or_default() += v;
    }
    for (k, v) in stats.decoded {
        *report.decoded.entry(k).or_default() += v;
    }
    report.body_bytes += stats.body_bytes;
    let skipped = stats.skipped.len();
    report.skipped.extend(stats.skipped);
    report
        .lossy_utf8
        .extend(lossy.into_iter().map(|(file, record)| SkippedInput {
            path: files[file].clone(),
            location: format!("record {record}"),
            reason: "body is not valid UTF-8; decoded lossily".to_string(),
        }));
    if captures.is_empty() {
        let damage: Vec<String> = report.damaged[report.damaged.len() - damaged..]
            .iter()
            .map(|d| format!("; damaged: {d}"))
            .collect();
        return Err(InputError::Empty {
            path: path.to_path_buf(),
            message: format!(
                "no usable response records (read {} records, {} skipped{})",
                stats.records,
                skipped,
                damage.concat()
            ),
        });
    }
    // A crawl's own output numbers its units; every capture must say, or dates decide.
    let crawl_unit_base = captures
        .iter()
        .map(|c| c.crawl_unit)
        .collect::<Option<Vec<u32>>>()
        .and_then(|units| units.into_iter().min());
    report.crawl_unit_collections += usize::from(crawl_unit_base.is_some());
    Ok((captures, crawl_unit_base))
}

/// The reading stage: every file in order, response records in batches to `tx`.
fn read_files(
    files: &[PathBuf],
    tx: mpsc::SyncSender<Vec<Pending>>,
    bar: &indicatif::ProgressBar,
) -> Result<ReadStats, InputError> {
    let mut stats = ReadStats::default();
    let mut seq = 0u64;
    let mut batch = Vec::with_capacity(BATCH);
    for (path_index, path) in files.iter().enumerate() {
        let mut file = ArchiveFile::open_with_progress(path, Some(bar.clone()))?;
        // Broken framing costs the records it breaks; the reader goes on where it can.
        let mut damages: Vec<SkippedInput> = Vec::new();
        for item in file.by_ref() {
            let item = match item {
                Ok(item) => item,
                Err(InputError::Malformed {
                    path,
                    location,
                    message,
                }) => {
                    damages.push(SkippedInput {
                        path,
                        location,
                        reason: message,
                    });
                    continue;
                }
                Err(e) => return Err(e),
            };
            match item {
                WarcItem::Response(response) => {
                    if let Some(kind) = crawl_artefact(
                        &response.target_uri,
                        response.content_type.as_deref(),
                        &response.body,
                    ) {
                        *stats.artefacts.entry(kind.name().to_string()).or_default() += 1;
                        stats.artefact_urls.insert(response.target_uri, kind);
                        continue;
                    }
                    if !is_usable_status(response.status) {
                        stats.skipped.push(SkippedInput {
                            path: path.clone(),
                            location: format!("record {}", response.record),
                            reason: format!(
                                "HTTP status {} of {} is neither content (2xx) nor gone \
                                 (404/410)",
                                response.status, response.target_uri
                            ),
                        });
                        continue;
                    }
                    stats.body_bytes += response.body.len() as u64;
                    stats.resource_pages += u64::from(response.resource);
                    for coding in &response.decoded {
                        *stats.decoded.entry(coding.to_string()).or_default() += 1;
                    }
                    batch.push(Pending {
                        seq,
                        path_index,
                        response,
                    });
                    seq += 1;
                    if batch.len() >= BATCH
                        && tx
                            .send(std::mem::replace(&mut batch, Vec::with_capacity(BATCH)))
                            .is_err()
                    {
                        // The receiver only goes away if the extraction stage panicked;
                        // the join in `load_corpus` reports that.
                        return Ok(stats);
                    }
                }
                WarcItem::Revisit(revisit) => {
                    stats.revisits.push((seq, path_index, revisit));
                    seq += 1;
                }
                WarcItem::Other { warc_type, .. } => {
                    stats.other += 1;
                    let name = if warc_type.is_empty() {
                        "(no WARC-Type)".to_string()
                    } else {
                        warc_type.to_ascii_lowercase()
                    };
                    *stats.other_by_type.entry(name).or_default() += 1;
                }
                WarcItem::Skipped(skip) => stats.skipped.push(skip),
            }
        }
        stats.records += file.records_read();
        if file.records_read() == 0 {
            if let Some(first) = damages.into_iter().next() {
                return Err(InputError::malformed(
                    first.path,
                    first.location,
                    first.reason,
                ));
            }
        } else {
            let read = format!(
                "; {} intact {} record(s) of the file were read",
                file.records_read(),
                file.format()
            );
            stats.damaged.extend(damages.into_iter().map(|mut d| {
                d.reason.push_str(&read);
                d
            }));
        }
    }
    if !batch.is_empty() {
        let _ = tx.send(batch);
    }
    Ok(stats)
}

/// Turns each revisit record into a copy of the capture it refers to, re-captured at the
/// revisit's date (see the module doc for how the referred capture is found); revisits whose
/// payload is not in the input are reported skips.
fn resolve_revisits(
    captures: &mut Vec<Capture>,
    mut revisits: Vec<(u64, usize, RevisitRecord)>,
    files: &[PathBuf],
    skipped: &mut Vec<SkippedInput>,
) {
    if revisits.is_empty() {
        return;
    }
    // Earlier revisits first, so a revisit of a revisit finds its resolved copy.
    revisits.sort_by_key(|(seq, _, r)| (r.capture_time, *seq));
    let mut by_url: HashMap<String, Vec<usize>> = HashMap::new();
    let mut by_digest: HashMap<String, Vec<usize>> = HashMap::new();
    let usable = |c: &Capture| !is_gone_status(c.status);
    for (i, c) in captures.iter().enumerate().filter(|(_, c)| usable(c)) {
        by_url.entry(c.url.clone()).or_default().push(i);
        if let Some(d) = &c.payload_digest {
            by_digest.entry(d.clone()).or_default().push(i);
        }
    }
    // The latest capture among `candidates` at or before `time` (any, if none is earlier).
    let latest = |captures: &[Capture], candidates: &[usize], time: i64| -> Option<usize> {
        let key = |&&i: &&usize| (captures[i].capture_time, captures[i].seq);
        candidates
            .iter()
            .filter(|&&i| captures[i].capture_time <= time)
            .max_by_key(key)
            .or_else(|| candidates.iter().min_by_key(key))
            .copied()
    };
    for (seq, path_index, r) in revisits {
        let refers_url = r.refers_to_uri.as_deref().unwrap_or(&r.target_uri);
        let by_date = r.refers_to_date.and_then(|date| {
            by_url.get(refers_url).and_then(|c| {
                c.iter()
                    .copied()
                    .filter(|&i| captures[i].capture_time == date)
                    .max_by_key(|&i| captures[i].seq)
            })
        });
        let by_payload = || {
            let same = r.payload_digest.as_ref().and_then(|d| by_digest.get(d))?;
            let same_url: Vec<usize> = same
                .iter()
                .copied()
                .filter(|&i| captures[i].url == r.target_uri || captures[i].url == refers_url)
                .collect();
            latest(captures, &same_url, r.capture_time)
                .or_else(|| latest(captures, same, r.capture_time))
        };
        let by_previous = || {
            let earlier: Vec<usize> = by_url
                .get(refers_url)?
                .iter()
                .copied()
                .filter(|&i| captures[i].capture_time <= r.capture_time)
                .collect();
            latest(captures, &earlier, r.capture_time)
        };
        let Some(source) = by_date.or_else(by_payload).or_else(by_previous) else {
            skipped.push(SkippedInput {
                path: files[path_index].clone(),
                location: format!("record {}", r.record),
                reason: format!(
                    "revisit of {} ({}) refers to a payload that is in no response record read (refers to {}{}{})",
                    r.target_uri,
                    if r.profile.is_empty() { "no profile" } else { &r.profile },
                    refers_url,
                    r.refers_to_date
                        .map(|d| format!(" at {d}"))
                        .unwrap_or_default(),
                    r.payload_digest
                        .as_ref()
                        .map(|d| format!(", digest {d}"))
                        .unwrap_or_default()
                ),
            });
            continue;
        };
        let mut copy = captures[source].clone();
        copy.seq = seq;
        copy.url = r.target_uri;
        copy.capture_time = r.capture_time;
        copy.crawl_unit = r.crawl_unit;
        copy.revisit = true;
        if r.payload_digest.is_some() {
            copy.payload_digest = r.payload_digest;
        }
        let index = captures.len();
        by_url.entry(copy.url.clone()).or_default().push(index);
        if let Some(d) = &copy.payload_digest {
            by_digest.entry(d.clone()).or_default().push(index);
        }
        captures.push(copy);
    }
}

fn is_usable_status(status: u16) -> bool {
    (200..300).contains(&status) || is_gone_status(status)
}

fn is_gone_status(status: u16) -> bool {
    status == 404 || status == 410
}

/// Decodes, extracts and tokenizes one response; the flag says the body was not UTF-8.
///
/// Gone captures keep only their hash: their tiny error page is not the page's content.
pub(crate) fn extract_capture(
    analyzer: &mut CaptureAnalyzer<'_>,
    seq: u64,
    response: ResponseRecord,
) -> (Capture, bool) {
    let content_hash = xxh3_64(&response.body);
    let mut capture = Capture {
        seq,
        url: response.target_uri,
        capture_time: response.capture_time,
        status: response.status,
        content_hash,
        page: ExtractedPage::default(),
        counts: PageCounts::default(),
        terms: Vec::new(),
        length: 0,
        payload_digest: response.payload_digest,
        revisit: false,
        collection: 0,
        crawl_unit: response.crawl_unit,
    };
    if is_gone_status(response.status) {
        return (capture, false);
    }
    let (html_text, lossy) = match String::from_utf8(response.body) {
        Ok(s) => (s, false),
        Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), true),
    };
    let base = Url::parse(&capture.url).ok();
    capture.page = html::extract(&html_text, base.as_ref());
    capture.counts = PageCounts::of(
        html_text.as_bytes(),
        &capture.page,
        response.content_type.as_deref(),
    );
    let indexed = indexed_text(&capture.page.title, &capture.page.text);
    (capture.terms, capture.length) = analyzer.distinct_term_ids(&indexed);
    (capture, lossy)
}

/// Places captures on the clock, builds per-URL timelines, resolves links and interns terms.
///
/// `origins[c]` is the start of unit 0 of collection `c` (each collection is aligned at its own
/// first unit); the corpus's clock is the first collection's, spanning the longest collection.
/// When `crawl_unit_bases[c]` is `Some(first)`, collection `c` is a crawl's own output and a
/// capture's unit is its `crawl_unit - first` instead of the one its date falls in: the
/// crawl's units may be seconds long, and a date-based clock would merge them.
pub(crate) fn build_corpus(
    captures: Vec<Capture>,
    provisional: ProvisionalTerms,
    origins: &[i64],
    crawl_unit_bases: &[Option<u32>],
    unit_seconds: i64,
    report: &mut IngestReport,
) -> Corpus {
    let clocks: Vec<Clock> = origins
        .iter()
        .map(|&origin| Clock {
            origin,
            unit_seconds,
            units: 0,
        })
        .collect();
    let unit_of = |c: &Capture| {
        let base = crawl_unit_bases
            .get(c.collection as usize)
            .copied()
            .flatten();
        match (base, c.crawl_unit) {
            (Some(first), Some(unit)) => unit - first,
            _ => clocks[c.collection as usize].unit_of(c.capture_time),
        }
    };
    let last_unit = captures.iter().map(unit_of).max().unwrap_or(0);
    let clock = Clock {
        units: last_unit + 1,
        ..clocks[0]
    };
    report.records_per_unit = vec![0; clock.units as usize];
    for c in &captures {
        report.records_per_unit[unit_of(c) as usize] += 1;
        if c.revisit {
            report.revisits += 1;
        } else if is_gone_status(c.status) {
            report.responses_gone += 1;
        } else {
            report.responses_ok += 1;
        }
    }

    let kept = timeline_versions(captures, &unit_of, report);

    // Page ids and the link-matching map.
    let mut urls: Vec<&str> = kept.iter().map(|c| c.url.as_str()).collect();
    urls.dedup();
    let by_url: HashMap<String, PageId> = urls
        .iter()
        .enumerate()
        .map(|(i, u)| (html::normalise_url(u), i as PageId))
        .collect();

    let mut vocabulary = Vocabulary::new();
    let mut provisional = provisional.into_terms();
    // Final id of each provisional id, given on first use in (page id, version) order: that
    // order makes the numbering, so it is one sequential pass. What depends only on a capture
    // (its links, its sorted counts) is then built in parallel.
    let mut final_id: Vec<u32> = vec![u32::MAX; provisional.len()];
    let mut pages: Vec<PageTimeline> = Vec::with_capacity(urls.len());
    let numbered: Vec<_> = kept
        .into_iter()
        .map(|mut c| {
            if pages.last().is_none_or(|p: &PageTimeline| p.url != c.url) {
                pages.push(PageTimeline {
                    url: c.url.clone(),
                    versions: Vec::new(),
                });
            }
            let own_id = (pages.len() - 1) as PageId;
            let terms = intern(
                &mut vocabulary,
                &mut provisional,
                &mut final_id,
                std::mem::take(&mut c.terms),
            );
            (own_id, c, terms)
        })
        .collect();
    let versions: Vec<(PageId, PageVersion)> = numbered
        .into_par_iter()
        .map(|(own_id, c, terms)| {
            let mut links: Vec<PageId> = c
                .page
                .links
                .iter()
                .filter_map(|l| by_url.get(l).copied())
                .filter(|&id| id != own_id)
                .collect();
            links.sort_unstable();
            links.dedup();
            let version = PageVersion {
                unit: unit_of(&c) as Unit,
                capture_time: c.capture_time,
                status: c.status,
                content_hash: c.content_hash,
                title: html::exact_string(c.page.title),
                text: html::exact_string(c.page.text),
                links: html::exact_vec(links),
                terms: Arc::new(sorted_counts(terms, c.length)),
                counts: c.counts,
            };
            (own_id, version)
        })
        .collect();
    for (page, version) in versions {
        pages[page as usize].versions.push(Arc::new(version));
    }
    Corpus::from_parts(clock, pages, vocabulary)
}

/// The captures that become versions, in page-id (URL byte) order, then unit order: the
/// latest capture of each (URL, unit), without those that repeat the page's previous
/// version (counted in `report`).
fn timeline_versions(
    mut captures: Vec<Capture>,
    unit_of: &dyn Fn(&Capture) -> u32,
    report: &mut IngestReport,
) -> Vec<Capture> {
    // Byte order of URLs gives page ids; within a URL, unit then capture order (the same
    // as capture order unless a crawl's units say otherwise).
    captures.sort_by(|a, b| {
        a.url
            .as_bytes()
            .cmp(b.url.as_bytes())
            .then(unit_of(a).cmp(&unit_of(b)))
            .then(a.capture_time.cmp(&b.capture_time))
            .then(a.seq.cmp(&b.seq))
    });
    // Keep the latest capture of each (URL, unit).
    let mut kept: Vec<Capture> = Vec::with_capacity(captures.len());
    for c in captures {
        if let Some(prev) = kept.last() {
            if prev.url == c.url && unit_of(prev) == unit_of(&c) {
                report.superseded += 1;
                kept.pop();
            }
        }
        kept.push(c);
    }
    // Drop captures that repeat the page's previous version.
    let mut versions: Vec<Capture> = Vec::with_capacity(kept.len());
    for c in kept {
        if let Some(prev) = versions.last() {
            let same_state = if is_gone_status(prev.status) {
                is_gone_status(c.status)
            } else {
                !is_gone_status(c.status) && prev.content_hash == c.content_hash
            };
            if prev.url == c.url && same_state {
                report.unchanged += 1;
                continue;
            }
        }
        versions.push(c);
    }
    versions
}

/// Interns one capture's distinct terms (provisional ids in first-occurrence order, their
/// text in `provisional`): their `(final id, count)` pairs, unsorted. `final_id` remembers the
/// final id of each provisional id already interned. A term's text moves into the vocabulary
/// when it is interned (it is read once, so `provisional` is left empty there).
fn intern(
    vocabulary: &mut Vocabulary,
    provisional: &mut [Box<str>],
    final_id: &mut [u32],
    terms: Vec<(u32, u32)>,
) -> Vec<(u32, u32)> {
    terms
        .into_iter()
        .map(|(t, n)| {
            let id = &mut final_id[t as usize];
            if *id == u32::MAX {
                let text = std::mem::take(&mut provisional[t as usize]);
                *id = vocabulary.intern_owned(text.into_string());
            }
            (*id, n)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::{LiveWeb, PageState};
    use crate::text::TermCounts;

    const W: i64 = WEEK_SECONDS;

    thread_local! {
        /// The provisional terms of the captures a test made, until it builds its corpus.
        static TERMS: std::cell::RefCell<ProvisionalTerms> = Default::default();
    }

    fn capture(seq: u64, url: &str, time: i64, status: u16, body: &str) -> Capture {
        TERMS.with_borrow(|terms| {
            extract_capture(
                &mut CaptureAnalyzer::new(terms),
                seq,
                ResponseRecord {
                    record: seq + 1,
                    target_uri: url.to_string(),
                    capture_time: time,
                    status,
                    body: body.as_bytes().to_vec(),
                    payload_digest: None,
                    decoded: Vec::new(),
                    content_type: Some("text/html".to_string()),
                    crawl_unit: None,
                    resource: false,
                },
            )
            .0
        })
    }

    fn build(captures: Vec<Capture>) -> (Corpus, IngestReport) {
        let mut report = IngestReport::default();
        let origin = captures.iter().map(|c| c.capture_time).min().unwrap_or(0);
        let terms = TERMS.take();
        let corpus = build_corpus(
            captures,
            terms,
            &[origin],
            &[None],
            WEEK_SECONDS,
            &mut report,
        );
        (corpus, report)
    }

    #[test]
    fn timelines_gone_and_back() {
        let t0 = 1_000_000;
        let (corpus, report) = build(vec![
            capture(0, "http://s/b", t0, 200, "<title>B</title><p>bee</p>"),
            capture(
                1,
                "http://s/a",
                t0 + 10,
                200,
                "<a href='b#x'>b</a><a href='a'>me</a>",
            ),
            capture(2, "http://s/b", t0 + 2 * W, 404, "<p>Not found</p>"),
            capture(3, "http://s/b", t0 + 4 * W + 5, 200, "<p>back</p>"),
            capture(4, "http://s/c", t0 + 3 * W, 200, "<p>new</p>"),
        ]);
        assert_eq!(corpus.units(), 5);
        assert_eq!(corpus.clock.origin, t0);
        assert_eq!(corpus.url(0), "http://s/a");
        assert_eq!(corpus.url(1), "http://s/b");
        let b = corpus.page_id("http://s/b").unwrap();
        assert!(matches!(corpus.page_at(b, 1), PageState::Present(_)));
        assert!(matches!(corpus.page_at(b, 2), PageState::Gone));
        assert!(matches!(corpus.page_at(b, 3), PageState::Gone));
        let back = corpus.page_at(b, 4).present().unwrap();
        assert_eq!(back.text, "back");
        let c = corpus.page_id("http://s/c").unwrap();
        assert!(matches!(corpus.page_at(c, 2), PageState::NotYetCreated));
        // Self-link dropped, fragment ignored.
        assert_eq!(corpus.page_at(0, 0).present().unwrap().links, vec![b]);
        assert_eq!(report.records_per_unit, vec![2, 0, 1, 1, 1]);
        assert_eq!((report.responses_ok, report.responses_gone), (4, 1));
        let gone = &corpus.timeline(b).versions[1];
        assert!(gone.title.is_empty() && gone.text.is_empty() && gone.links.is_empty());
        assert_eq!(gone.terms.length, 0);
    }

    #[test]
    fn recaptures_of_an_unchanged_page_are_not_new_versions() {
        let t0 = 0;
        let (corpus, report) = build(vec![
            capture(0, "http://s/a", t0, 200, "<p>same</p>"),
            capture(1, "http://s/a", t0 + W, 200, "<p>same</p>"),
            capture(2, "http://s/a", t0 + 2 * W, 200, "<p>edited</p>"),
            capture(3, "http://s/a", t0 + 3 * W, 404, "<p>Not found</p>"),
            capture(4, "http://s/a", t0 + 4 * W, 404, "<p>Still not found</p>"),
            capture(5, "http://s/a", t0 + 5 * W, 200, "<p>edited</p>"),
            capture(6, "http://s/b", t0 + 5 * W, 200, "<p>edited</p>"),
        ]);
        let units: Vec<Unit> = corpus.timeline(0).versions.iter().map(|v| v.unit).collect();
        // Unit 1 repeats unit 0 and unit 4 is gone again; unit 5 is back (a change).
        assert_eq!(units, vec![0, 2, 3, 5]);
        assert_eq!(report.unchanged, 2);
        assert_eq!(corpus.page_at(0, 1).present().unwrap().unit, 0);
        assert!(matches!(corpus.page_at(0, 4), PageState::Gone));
        assert_eq!(
            corpus.timeline(1).versions.len(),
            1,
            "another URL is another page"
        );
        // The report still counts every used record.
        assert_eq!(report.records_per_unit, vec![1, 1, 1, 1, 1, 2]);
    }

    #[test]
    fn versions_carry_structural_counts() {
        let body = "<html><body><p>two words</p><img src=x><table><tr><td>cell</td></tr>\
            </table><a href='mailto:me@s.org'>write</a></body></html>";
        let (corpus, _) = build(vec![
            capture(0, "http://s/a", 0, 200, body),
            capture(1, "http://s/a", W, 404, "<p>Not found</p>"),
        ]);
        let v = &corpus.timeline(0).versions[0];
        assert_eq!(v.text, "two words cell write");
        assert_eq!(
            v.counts,
            PageCounts {
                html_bytes: body.len() as u32,
                text_bytes: v.text.len() as u32,
                words: 4,
                images: 1,
                tables: 1,
                emails: 1,
                content_type: crate::corpus::ContentType::Html,
            }
        );
        assert_eq!(corpus.timeline(0).versions[1].counts, PageCounts::default());
    }

    #[test]
    fn a_crawls_own_units_place_its_captures() {
        // A crawl of 12-second units: dates alone would put all of it in one weekly unit.
        let at = |seq, url, unit: u32, body| {
            let mut c = capture(seq, url, 1_000 + 12 * i64::from(unit), 200, body);
            c.crawl_unit = Some(unit);
            c
        };
        let captures = || {
            vec![
                at(0, "http://s/a", 3, "<p>one</p>"),
                at(1, "http://s/a", 4, "<p>two</p>"),
                at(2, "http://s/b", 3, "<p>bee</p>"),
                at(3, "http://s/a", 6, "<p>three</p>"),
            ]
        };
        let mut report = IngestReport::default();
        let first = captures();
        let corpus = build_corpus(
            first,
            TERMS.take(),
            &[1_036],
            &[Some(3)],
            WEEK_SECONDS,
            &mut report,
        );
        assert_eq!(corpus.units(), 4);
        let units: Vec<Unit> = corpus.timeline(0).versions.iter().map(|v| v.unit).collect();
        assert_eq!(units, vec![0, 1, 3]);
        assert_eq!(report.records_per_unit, vec![2, 1, 0, 1]);
        // Without a crawl unit base, dates decide: one weekly unit.
        let (corpus, report) = build(captures());
        assert_eq!(corpus.units(), 1);
        assert_eq!(report.superseded, 2);
    }

    #[test]
    fn latest_capture_of_a_unit_wins() {
        let t0 = 5_000;
        let (corpus, report) = build(vec![
            capture(0, "http://s/a", t0, 200, "<p>first</p>"),
            capture(1, "http://s/a", t0 + 100, 200, "<p>second</p>"),
            capture(2, "http://s/a", t0 + 50, 200, "<p>middle</p>"),
        ]);
        assert_eq!(corpus.timeline(0).versions.len(), 1);
        assert_eq!(corpus.timeline(0).versions[0].text, "second");
        assert_eq!(report.superseded, 2);
    }

    #[test]
    fn terms_match_a_sequential_from_terms() {
        let t0 = 0;
        let (corpus, _) = build(vec![
            capture(
                0,
                "http://s/z",
                t0,
                200,
                "<title>Zed</title><p>running buffers run</p>",
            ),
            capture(1, "http://s/a", t0, 200, "<p>Emacs lisp buffers</p>"),
        ]);
        let mut vocab = Vocabulary::new();
        let mut analyzer = Analyzer::new();
        for page in &corpus.pages {
            for v in &page.versions {
                let terms = analyzer.terms(&v.indexed_text());
                let expected = TermCounts::from_terms(&mut vocab, terms.iter().map(|s| s.as_str()));
                assert_eq!(*v.terms, expected);
            }
        }
        assert_eq!(corpus.vocabulary.term(0), "emac");
        assert_eq!(vocab.len(), corpus.vocabulary.len());
    }

    #[test]
    fn provisional_ids_are_one_per_term_across_threads() {
        let terms = ProvisionalTerms::default();
        let words: Vec<String> = (0..2000).map(|i| format!("w{}", i % 500)).collect();
        let ids: Vec<u32> = words.par_iter().map(|w| terms.id(w)).collect();
        for (w, &id) in words.iter().zip(&ids) {
            assert_eq!(terms.id(w), id);
        }
        let by_id = terms.into_terms();
        assert_eq!(by_id.len(), 500);
        for (w, &id) in words.iter().zip(&ids) {
            assert_eq!(&*by_id[id as usize], w.as_str());
        }
    }
}
