//! The on-disk index `serve --index DIR` keeps: built crash-safely, labelled with what it holds.
//!
//! * **Build beside, rename into place.** A new index is built in `DIR`'s sibling
//!   `.<name>.building-<pid>`, its manifest written and synced, and only then renamed to `DIR`.
//!   A build killed at any moment (kill -9, full disk) leaves at most a temporary directory,
//!   which the next start removes; `DIR` itself is either absent or complete.
//! * **A manifest says what the index holds** (`manifest.json`: schema version, corpus
//!   fingerprint, unit, scoring, analyzer, document count). Reopening checks it against the
//!   request and refuses, naming every difference, unless asked to rebuild. A directory with
//!   tantivy files but no manifest (an interrupted build of an older version, or something
//!   else) is never served as valid.
//! * After opening, the document count must equal the manifest's, and every file of the index
//!   must match its checksum (tantivy's footer): a bit flip is refused, never served.
//! * A directory the server may not write (a read-only mount, another owner) is opened
//!   read-only: no lock file, nothing written; it is served as it is and cannot be rebuilt.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::corpus::{Corpus, LiveWeb, PageId, Unit};

use super::{IndexError, Repository, ScoringKind};

/// Version of the stored layout (schema fields, stored values, manifest keys); bump on change.
pub const SCHEMA_VERSION: u32 = 1;

/// The analyzer every index uses (see `crate::text`).
pub const ANALYZER: &str = "en_stem";

/// Name of the manifest file inside an index directory.
pub const MANIFEST: &str = "manifest.json";

/// What an index directory holds.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Manifest {
    pub(crate) schema_version: u32,
    /// [`corpus_fingerprint`] of the corpus the index was built from.
    pub(crate) corpus_fingerprint: String,
    pub(crate) unit: Unit,
    pub(crate) scoring: String,
    pub(crate) analyzer: String,
    pub(crate) num_docs: u64,
    /// Which shard of the pages the index holds (`2 of 4 by host`); absent: every page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) shard: Option<String>,
}

/// The part of the pages a shard's index holds ([`open_or_build_part`]).
pub struct ShardPart<'a> {
    /// What the manifest records of it (`2 of 4 by host`): an index of another part is refused.
    pub label: String,
    /// Whether a page belongs to the part.
    pub keep: &'a (dyn Fn(PageId) -> bool + Sync),
}

impl Manifest {
    /// The manifest an index of `corpus` at `unit` with `scoring` must have (`num_docs` is
    /// not compared).
    pub fn expected(corpus: &Corpus, unit: Unit, scoring: ScoringKind) -> Self {
        Manifest {
            schema_version: SCHEMA_VERSION,
            corpus_fingerprint: corpus_fingerprint(corpus),
            unit,
            scoring: scoring.to_string(),
            analyzer: ANALYZER.to_string(),
            num_docs: 0,
            shard: None,
        }
    }

    /// The fields in which `self` (found) differs from `want`, as `name: found X, asked Y`.
    fn differences(&self, want: &Manifest) -> Vec<String> {
        let mut out = Vec::new();
        let mut check = |name: &str, found: String, asked: String| {
            if found != asked {
                out.push(format!("{name}: found {found}, asked {asked}"));
            }
        };
        check(
            "schema_version",
            self.schema_version.to_string(),
            want.schema_version.to_string(),
        );
        check(
            "corpus_fingerprint",
            self.corpus_fingerprint.clone(),
            want.corpus_fingerprint.clone(),
        );
        check("unit", self.unit.to_string(), want.unit.to_string());
        check("scoring", self.scoring.clone(), want.scoring.clone());
        check("analyzer", self.analyzer.clone(), want.analyzer.clone());
        let part = |p: &Option<String>| p.clone().unwrap_or_else(|| "every page".to_string());
        check("shard", part(&self.shard), part(&want.shard));
        out
    }
}

/// A fingerprint of a corpus: xxh3 over its page count, units, URLs and the content hash of
/// every page at every unit. Two corpora with the same fingerprint serve the same documents.
pub fn corpus_fingerprint(corpus: &Corpus) -> String {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(&(corpus.page_count() as u64).to_le_bytes());
    h.update(&corpus.units().to_le_bytes());
    for p in 0..corpus.page_count() as PageId {
        let url = corpus.url(p).as_bytes();
        h.update(&(url.len() as u64).to_le_bytes());
        h.update(url);
        for u in 0..corpus.units() {
            match corpus.page_at(p, u).present() {
                Some(v) => {
                    h.update(&[1]);
                    h.update(&v.unit.to_le_bytes());
                    h.update(&v.content_hash.to_le_bytes());
                }
                None => h.update(&[0]),
            }
        }
    }
    format!("{:032x}", h.digest128())
}

fn dir_error(path: &Path, message: impl Into<String>) -> IndexError {
    IndexError::Refused {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

fn io_error(path: &Path, e: std::io::Error) -> IndexError {
    IndexError::Dir {
        path: path.to_path_buf(),
        source: e.into(),
    }
}

/// Reads `dir/manifest.json`; `Ok(None)` when there is none.
pub fn read_manifest(dir: &Path) -> Result<Option<Manifest>, IndexError> {
    let path = dir.join(MANIFEST);
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
            dir_error(
                dir,
                format!(
                    "{MANIFEST} is not a valid manifest ({e}); remove the directory or rebuild it"
                ),
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_error(&path, e)),
    }
}

/// The temporary build directories of `dir` (`.<name>.building-*` beside it).
fn temp_prefix(dir: &Path) -> Result<(PathBuf, String), IndexError> {
    let name = dir
        .file_name()
        .ok_or_else(|| dir_error(dir, "the index path has no directory name"))?
        .to_string_lossy()
        .into_owned();
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok((parent, format!(".{name}.building-")))
}

/// Removes build directories left by killed builds of `dir`. Returns how many.
pub fn remove_leftovers(dir: &Path) -> Result<usize, IndexError> {
    let (parent, prefix) = temp_prefix(dir)?;
    let mut removed = 0;
    let Ok(entries) = std::fs::read_dir(&parent) else {
        return Ok(0);
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(&prefix) || name.starts_with(&prefix.replace(".building-", ".old-")) {
            std::fs::remove_dir_all(entry.path()).map_err(|e| io_error(&entry.path(), e))?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Whether files can be created in `dir` (probed by creating and removing one: permission
/// bits say nothing of read-only mounts, and root ignores them).
fn is_writable(dir: &Path) -> bool {
    let probe = dir.join(format!(".refresher-write-probe-{}", std::process::id()));
    match std::fs::File::create(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            true
        }
        Err(_) => false,
    }
}

fn sync_dir(dir: &Path) {
    // Best effort: a directory fsync makes the rename durable; not every filesystem allows it.
    if let Ok(f) = std::fs::File::open(dir) {
        let _ = f.sync_all();
    }
}

/// What [`open_or_build`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opened {
    /// An index with a matching manifest was reopened.
    Reopened,
    /// An index with a matching manifest was reopened read-only (its directory is not
    /// writable).
    ReopenedReadOnly,
    /// A new index was built and renamed into place.
    Built,
}

/// Opens the index in `dir` when its manifest matches `corpus`, `unit` and `scoring`;
/// otherwise builds one crash-safely (see the module doc). A directory that holds something
/// else (a different manifest, or files without a manifest) is refused with a message naming
/// the differences unless `rebuild`, which replaces it.
pub fn open_or_build(
    dir: &Path,
    corpus: &Corpus,
    unit: Unit,
    scoring: ScoringKind,
    rebuild: bool,
) -> Result<(Repository, Opened), IndexError> {
    open_or_build_part(dir, corpus, unit, scoring, rebuild, None)
}

/// [`open_or_build`] for the pages of `part` only (a shard's index; every page for `None`),
/// under the same rules; the manifest records the part, and an index of another part is
/// refused like one of another unit.
pub fn open_or_build_part(
    dir: &Path,
    corpus: &Corpus,
    unit: Unit,
    scoring: ScoringKind,
    rebuild: bool,
    part: Option<ShardPart<'_>>,
) -> Result<(Repository, Opened), IndexError> {
    remove_leftovers(dir)?;
    let want = Manifest {
        shard: part.as_ref().map(|p| p.label.clone()),
        ..Manifest::expected(corpus, unit, scoring)
    };
    let exists = dir.exists();
    if exists && !dir.is_dir() {
        return Err(dir_error(dir, "exists and is not a directory"));
    }
    let empty = !exists
        || std::fs::read_dir(dir)
            .map_err(|e| io_error(dir, e))?
            .next()
            .is_none();
    if !empty && !rebuild {
        match read_manifest(dir)? {
            Some(found) => return reopen(dir, &found, &want, corpus, scoring),
            None => {
                return Err(dir_error(
                    dir,
                    format!(
                        "is not empty but has no {MANIFEST}: not a complete refresher index (an \
                         interrupted build of an older version, or other files); remove it or \
                         pass --rebuild-index"
                    ),
                ))
            }
        }
    }
    // Build beside, then rename into place.
    let (parent, prefix) = temp_prefix(dir)?;
    std::fs::create_dir_all(&parent).map_err(|e| io_error(&parent, e))?;
    let temp = parent.join(format!("{prefix}{}", std::process::id()));
    let built = match &part {
        Some(part) => super::snapshot::shard_at(corpus, unit, scoring, Some(&temp), part.keep)?,
        None => super::snapshot::repository_at(corpus, unit, scoring, Some(&temp))?,
    };
    let manifest = Manifest {
        num_docs: built.num_docs(),
        ..want
    };
    drop(built);
    let manifest_path = temp.join(MANIFEST);
    {
        use std::io::Write;
        let mut f =
            std::fs::File::create(&manifest_path).map_err(|e| io_error(&manifest_path, e))?;
        let json = serde_json::to_vec_pretty(&manifest).expect("a manifest serialises");
        f.write_all(&json)
            .and_then(|_| f.sync_all())
            .map_err(|e| io_error(&manifest_path, e))?;
    }
    sync_dir(&temp);
    if exists {
        // Move the old directory aside first; a crash between the renames leaves it there,
        // and the next start removes it with the other leftovers.
        let old = parent.join(format!(
            "{}{}",
            prefix.replace(".building-", ".old-"),
            std::process::id()
        ));
        std::fs::rename(dir, &old).map_err(|e| io_error(dir, e))?;
        std::fs::rename(&temp, dir).map_err(|e| io_error(dir, e))?;
        sync_dir(&parent);
        let _ = std::fs::remove_dir_all(&old);
    } else {
        std::fs::rename(&temp, dir).map_err(|e| io_error(dir, e))?;
        sync_dir(&parent);
    }
    let repo = Repository::open(Some(dir), Arc::clone(&corpus.vocabulary), scoring)?;
    Ok((repo, Opened::Built))
}

/// Reopens the index in `dir`, whose manifest says `found`, when it is the one asked (`want`)
/// and intact; refuses it naming what differs otherwise.
fn reopen(
    dir: &Path,
    found: &Manifest,
    want: &Manifest,
    corpus: &Corpus,
    scoring: ScoringKind,
) -> Result<(Repository, Opened), IndexError> {
    let diff = found.differences(want);
    if !diff.is_empty() {
        return Err(dir_error(
            dir,
            format!(
                "holds a different index than asked ({}); use another directory, \
                 remove it, or pass --rebuild-index",
                diff.join("; ")
            ),
        ));
    }
    let writable = is_writable(dir);
    let opened = if writable {
        Repository::open(Some(dir), Arc::clone(&corpus.vocabulary), scoring)
    } else {
        Repository::open_read_only(dir, Arc::clone(&corpus.vocabulary), scoring)
    };
    let repo = match opened {
        Err(damaged @ IndexError::Damaged { .. }) => {
            return Err(dir_error(
                dir,
                format!("{damaged}; remove it or pass --rebuild-index"),
            ))
        }
        other => other?,
    };
    if repo.num_docs() != found.num_docs {
        return Err(dir_error(
            dir,
            format!(
                "holds {} documents but its manifest says {}: the index is damaged; \
                 remove it or pass --rebuild-index",
                repo.num_docs(),
                found.num_docs
            ),
        ));
    }
    let opened = if writable {
        Opened::Reopened
    } else {
        Opened::ReopenedReadOnly
    };
    Ok((repo, opened))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::testutil::random_corpus;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_shard_index_holds_its_part_and_refuses_another() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("shard");
        let corpus = random_corpus(40, 3, 1);
        let even = |p: PageId| p.is_multiple_of(2);
        let part = |label: &str| ShardPart {
            label: label.to_string(),
            keep: &even,
        };
        let (repo, how) = open_or_build_part(
            &dir,
            &corpus,
            0,
            ScoringKind::Bm25,
            false,
            Some(part("0 of 2")),
        )
        .unwrap();
        let expected = (0..corpus.page_count() as PageId)
            .filter(|&p| even(p) && corpus.page_at(p, 0).present().is_some())
            .count() as u64;
        assert_eq!((how, repo.num_docs()), (Opened::Built, expected));
        drop(repo);
        let err = open_or_build_part(
            &dir,
            &corpus,
            0,
            ScoringKind::Bm25,
            false,
            Some(part("1 of 2")),
        )
        .err()
        .unwrap()
        .to_string();
        assert!(err.contains("shard: found 0 of 2, asked 1 of 2"), "{err}");
        let err = open_or_build(&dir, &corpus, 0, ScoringKind::Bm25, false)
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("shard: found 0 of 2, asked every page"),
            "{err}"
        );
    }

    #[test]
    fn builds_beside_then_reopens_only_what_matches() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("idx");
        let corpus = random_corpus(40, 3, 1);
        let (repo, how) = open_or_build(&dir, &corpus, 0, ScoringKind::Bm25, false).unwrap();
        assert_eq!(how, Opened::Built);
        let docs = repo.num_docs();
        assert!(docs > 0);
        drop(repo);
        assert_eq!(
            names(root.path()),
            vec!["idx"],
            "no temporary directory left"
        );
        let manifest = read_manifest(&dir).unwrap().unwrap();
        assert_eq!(manifest.num_docs, docs);
        assert_eq!(manifest.unit, 0);
        let (repo, how) = open_or_build(&dir, &corpus, 0, ScoringKind::Bm25, false).unwrap();
        assert_eq!((how, repo.num_docs()), (Opened::Reopened, docs));
        drop(repo);
        // Another unit, scoring or corpus: refused, naming the differences.
        let err = open_or_build(&dir, &corpus, 2, ScoringKind::TfIdf, false)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("unit: found 0, asked 2"), "{err}");
        assert!(err.contains("scoring: found bm25, asked tfidf"), "{err}");
        let other = random_corpus(40, 3, 2);
        let err = open_or_build(&dir, &other, 0, ScoringKind::Bm25, false)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("corpus_fingerprint"), "{err}");
        // Unless asked to rebuild.
        let (repo, how) = open_or_build(&dir, &corpus, 2, ScoringKind::Bm25, true).unwrap();
        assert_eq!(how, Opened::Built);
        assert_eq!(read_manifest(&dir).unwrap().unwrap().unit, 2);
        drop(repo);
        assert_eq!(names(root.path()), vec!["idx"]);
    }

    /// An interrupted build: a leftover temporary directory is removed, and a directory with
    /// tantivy files but no manifest (what a build killed before its first commit used to
    /// leave: a `meta.json` with no segments) is not served.
    #[test]
    fn interrupted_builds_are_never_served() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("idx");
        let corpus = random_corpus(30, 2, 3);
        // A killed build's temporary directory, and a manifest-less index with no segments.
        let leftover = root.path().join(".idx.building-99999");
        std::fs::create_dir_all(&leftover).unwrap();
        std::fs::write(leftover.join("meta.json"), "{}").unwrap();
        std::fs::create_dir_all(&dir).unwrap();
        let empty = Repository::open(
            Some(&dir),
            Arc::clone(&corpus.vocabulary),
            ScoringKind::Bm25,
        )
        .unwrap();
        assert_eq!(empty.num_docs(), 0);
        drop(empty);
        assert!(dir.join("meta.json").exists());
        let err = open_or_build(&dir, &corpus, 0, ScoringKind::Bm25, false)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("has no manifest.json"), "{err}");
        assert!(
            !leftover.exists(),
            "the leftover build directory is removed"
        );
        let (repo, _) = open_or_build(&dir, &corpus, 0, ScoringKind::Bm25, true).unwrap();
        assert!(repo.num_docs() > 0);
        // A manifest whose count the index does not hold (a damaged index) is refused.
        drop(repo);
        let mut m = read_manifest(&dir).unwrap().unwrap();
        m.num_docs += 1;
        std::fs::write(dir.join(MANIFEST), serde_json::to_vec(&m).unwrap()).unwrap();
        let err = open_or_build(&dir, &corpus, 0, ScoringKind::Bm25, false)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("damaged"), "{err}");
    }

    /// Every file in `dir` (recursively not needed: tantivy keeps a flat directory) with its
    /// length and modification time.
    fn snapshot(dir: &Path) -> Vec<(String, u64, std::time::SystemTime)> {
        let mut v: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| {
                let m = e.metadata().unwrap();
                (
                    e.file_name().to_string_lossy().into_owned(),
                    m.len(),
                    m.modified().unwrap(),
                )
            })
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_bit_flip_in_a_segment_file_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("idx");
        let corpus = random_corpus(40, 2, 5);
        drop(open_or_build(&dir, &corpus, 0, ScoringKind::Bm25, false).unwrap());
        // Flip one bit in the middle of the largest segment file.
        let (victim, len) = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().contains('.'))
            .filter(|e| !e.file_name().to_string_lossy().ends_with(".json"))
            .map(|e| (e.path(), e.metadata().unwrap().len()))
            .max_by_key(|&(_, len)| len)
            .unwrap();
        let mut bytes = std::fs::read(&victim).unwrap();
        bytes[(len / 2) as usize] ^= 0x10;
        std::fs::write(&victim, bytes).unwrap();
        let err = open_or_build(&dir, &corpus, 0, ScoringKind::Bm25, false)
            .err()
            .expect("a damaged index is refused")
            .to_string();
        assert!(err.contains("fail their checksum"), "{err}");
        assert!(
            err.contains(&victim.file_name().unwrap().to_string_lossy().into_owned()),
            "{err}"
        );
        // --rebuild-index replaces it.
        let (repo, how) = open_or_build(&dir, &corpus, 0, ScoringKind::Bm25, true).unwrap();
        assert_eq!(how, Opened::Built);
        assert!(repo.num_docs() > 0);
    }

    #[test]
    fn a_read_only_open_serves_the_same_results_and_writes_nothing() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("idx");
        let corpus = random_corpus(40, 2, 6);
        let (built, _) = open_or_build(&dir, &corpus, 0, ScoringKind::Bm25, false).unwrap();
        let term = corpus.vocabulary.term(0).to_string();
        let want = built.search(&term, 0, 10).unwrap();
        drop(built);
        let before = snapshot(&dir);
        let mut repo =
            Repository::open_read_only(&dir, Arc::clone(&corpus.vocabulary), ScoringKind::Bm25)
                .unwrap();
        assert!(repo.is_read_only());
        let got = repo.search(&term, 0, 10).unwrap();
        assert_eq!(got.total_hits, want.total_hits);
        let ids =
            |r: &super::super::SearchResults| r.hits.iter().map(|h| h.page).collect::<Vec<_>>();
        assert_eq!(ids(&got), ids(&want));
        // Updates are refused before anything changes; merges have nothing to do.
        let version = corpus
            .page_at(0, 1)
            .present()
            .or(corpus.page_at(0, 0).present());
        let update = [crate::index::PageUpdate {
            page: 0,
            url: corpus.url(0),
            version,
        }];
        let docs = repo.num_docs();
        assert!(matches!(
            repo.apply_unmeasured(1, &update),
            Err(IndexError::ReadOnly)
        ));
        assert_eq!(repo.num_docs(), docs);
        repo.merge_all().unwrap();
        drop(repo);
        assert_eq!(snapshot(&dir), before, "nothing written");
    }
}
