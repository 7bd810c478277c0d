//! Opening one web archive file, WARC or ARC, plain or gzip, as one stream of [`WarcItem`]s.
//!
//! Collections mix formats: the Internet Archive's older crawls are ARC files (Heritrix wrote
//! ARC until 2008), newer ones WARC. The format is told per file from its first bytes after
//! gunzip (`WARC/` or `filedesc://`), never from its name, so ingest reads either without
//! caring which it is.

use std::path::Path;

use indicatif::ProgressBar;

use super::arc_reader::ArcFile;
use super::archive_stream::DecodedStream;
use super::warc_reader::{WarcFile, WarcItem};
use crate::error::InputError;

/// One archive file's records, whichever its format.
pub enum ArchiveFile {
    Warc(WarcFile),
    Arc(ArcFile),
}

impl ArchiveFile {
    /// Opens `path` (WARC or ARC, plain or gzip, told by content), advancing `bar` by the
    /// file bytes read.
    pub fn open_with_progress(path: &Path, bar: Option<ProgressBar>) -> Result<Self, InputError> {
        Self::of_stream(DecodedStream::open(path, bar)?)
    }

    /// Reads the archive held in `bytes`; `label` names it in messages.
    pub fn from_bytes(label: &Path, bytes: Vec<u8>) -> Result<Self, InputError> {
        Self::of_stream(DecodedStream::from_bytes(label, bytes)?)
    }

    fn of_stream(mut stream: DecodedStream) -> Result<Self, InputError> {
        Ok(if stream.is_arc()? {
            ArchiveFile::Arc(ArcFile::new(stream))
        } else {
            ArchiveFile::Warc(WarcFile::new(stream))
        })
    }

    /// Number of complete records read so far.
    pub fn records_read(&self) -> u64 {
        match self {
            ArchiveFile::Warc(f) => f.records_read(),
            ArchiveFile::Arc(f) => f.records_read(),
        }
    }

    /// `"WARC"` or `"ARC"`.
    pub fn format(&self) -> &'static str {
        match self {
            ArchiveFile::Warc(_) => "WARC",
            ArchiveFile::Arc(_) => "ARC",
        }
    }
}

impl Iterator for ArchiveFile {
    type Item = Result<WarcItem, InputError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            ArchiveFile::Warc(f) => f.next(),
            ArchiveFile::Arc(f) => f.next(),
        }
    }
}
