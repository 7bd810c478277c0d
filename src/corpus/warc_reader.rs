//! Reading response records out of one WARC file (`.warc` or `.warc.gz`).
//!
//! Compression is detected from the gzip magic bytes (`1f 8b`), not from the file name, and a
//! gzip file is read with [`flate2::read::MultiGzDecoder`] because WARC writers (warcio,
//! Heritrix) compress every record as its own gzip member. Record framing is left to the `warc`
//! crate's raw-record iterator; the WARC headers we need (type, target URI, date) and the HTTP
//! block are parsed here, so every problem can be reported with the file and record number.
//!
//! Record numbers are 1-based and count every WARC record of the file (warcinfo included).
//!
//! # What bad input does
//!
//! Problems that leave the *framing* of the file intact only cost the record they are in; they
//! are yielded as [`WarcItem::Skipped`] (a counted, reported skip naming file and record):
//! * a `response` record without `WARC-Target-URI`, or with a missing/unparsable `WARC-Date`
//!   (RFC 3339 expected);
//! * a `response` whose HTTP block has no `HTTP/x.y NNN` status line or no blank line ending
//!   the HTTP header;
//! * a `response` with `Transfer-Encoding: chunked` or a `Content-Encoding` other than
//!   identity (the body bytes would not be the page).
//!
//! Problems that break the framing are hard errors, because nothing after them can be trusted
//! to start at a record boundary (and skipping would silently lose an unknown number of pages):
//! * a truncated or corrupt gzip stream → [`InputError::Malformed`] at `record N`;
//! * a broken WARC header (no `WARC/x.y` line, a line that is not `Name: value`, a
//!   non-numeric `Content-Length`) → [`InputError::Malformed`] at `record N`;
//! * a `Content-Length` that does not land on the `CRLF CRLF` ending the record (too short or
//!   too long), or a file that ends inside a record → [`InputError::Malformed`] at `record N`;
//! * an empty file, or a file holding no WARC record at all → [`InputError::Empty`].
//!
//! Bodies that are not valid UTF-8 are *not* rejected here: the reader hands out bytes and the
//! HTML stage decodes them lossily and counts them (see [`super::ingest::IngestReport`]).

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use flate2::read::MultiGzDecoder;
use indicatif::ProgressBar;
use warc::{RawRecordHeader, RawRecordIter, WarcHeader, WarcReader};

use crate::error::{InputError, SkippedInput};

/// Buffer size for file reads; large enough that gzip inflation, not syscalls, dominates.
const READ_BUFFER: usize = 1 << 20;

/// A `response` record whose HTTP block was understood.
#[derive(Debug, Clone)]
pub struct ResponseRecord {
    /// 1-based number of the record in its file.
    pub record: u64,
    /// `WARC-Target-URI`, as written in the record.
    pub target_uri: String,
    /// `WARC-Date`, seconds since the Unix epoch (UTC).
    pub capture_time: i64,
    /// Status code from the HTTP status line.
    pub status: u16,
    /// HTTP body: the bytes after the blank line ending the HTTP header.
    pub body: Vec<u8>,
}

/// One WARC record, classified.
#[derive(Debug, Clone)]
pub enum WarcItem {
    Response(ResponseRecord),
    /// A record of another type (warcinfo, request, metadata, revisit, ...), counted only.
    Other {
        record: u64,
        warc_type: String,
    },
    /// A response record that could not be used; the file's framing is intact.
    Skipped(SkippedInput),
}

/// A [`BufRead`] that counts the bytes consumed through it, so the reader can tell a clean end
/// of file from a file that ends inside a WARC header (which the `warc` crate reports as a
/// plain end of iteration).
struct Counting<R> {
    inner: R,
    consumed: Arc<AtomicU64>,
}

impl<R: BufRead> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.consumed.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counting<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        self.consumed.fetch_add(amt as u64, Ordering::Relaxed);
        self.inner.consume(amt)
    }
}

/// Advances a progress bar by the on-disk (compressed) bytes read.
struct ProgressRead<R> {
    inner: R,
    bar: Option<ProgressBar>,
}

impl<R: Read> Read for ProgressRead<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(bar) = &self.bar {
            bar.inc(n as u64);
        }
        Ok(n)
    }
}

type Records = RawRecordIter<Counting<BufReader<Box<dyn Read + Send>>>>;

/// An iterator over the records of one WARC file; see the module doc for error handling.
///
/// After the first `Err` the iterator is finished.
pub struct WarcFile {
    path: PathBuf,
    gzip: bool,
    records: Records,
    consumed: Arc<AtomicU64>,
    /// Bytes of decompressed WARC consumed when the last complete record ended.
    last_end: u64,
    /// Records read so far (complete ones).
    record: u64,
    done: bool,
}

impl WarcFile {
    /// Opens `path`, detecting gzip by its magic bytes.
    pub fn open(path: &Path) -> Result<Self, InputError> {
        Self::open_with_progress(path, None)
    }

    /// Like [`WarcFile::open`], advancing `bar` by the file bytes read.
    pub fn open_with_progress(path: &Path, bar: Option<ProgressBar>) -> Result<Self, InputError> {
        let file = File::open(path).map_err(|e| InputError::io(path, e))?;
        let len = file.metadata().map_err(|e| InputError::io(path, e))?.len();
        if len == 0 {
            return Err(InputError::Empty {
                path: path.to_path_buf(),
                message: "empty file (0 bytes), expected WARC records".to_string(),
            });
        }
        let mut raw = BufReader::with_capacity(READ_BUFFER, ProgressRead { inner: file, bar });
        let head = raw.fill_buf().map_err(|e| InputError::io(path, e))?;
        let gzip = head.len() >= 2 && head[0] == 0x1f && head[1] == 0x8b;
        let decoded: Box<dyn Read + Send> = if gzip {
            Box::new(MultiGzDecoder::new(raw))
        } else {
            Box::new(raw)
        };
        let consumed = Arc::new(AtomicU64::new(0));
        let counting = Counting {
            inner: BufReader::with_capacity(READ_BUFFER, decoded),
            consumed: consumed.clone(),
        };
        Ok(WarcFile {
            path: path.to_path_buf(),
            gzip,
            records: WarcReader::new(counting).iter_raw_records(),
            consumed,
            last_end: 0,
            record: 0,
            done: false,
        })
    }

    /// Whether the file is gzip-compressed.
    pub fn is_gzip(&self) -> bool {
        self.gzip
    }

    /// Number of complete records read so far.
    pub fn records_read(&self) -> u64 {
        self.record
    }

    fn malformed(&self, message: impl Into<String>) -> InputError {
        InputError::malformed(
            &self.path,
            format!("record {}", self.record + 1),
            message.into(),
        )
    }

    fn framing_error(&self, err: warc::Error) -> InputError {
        match err {
            warc::Error::ReadData(io) if self.gzip => self.malformed(format!(
                "corrupt or truncated gzip stream ({io}); the rest of the file cannot be read"
            )),
            warc::Error::ReadData(io) => InputError::io(&self.path, io),
            warc::Error::ParseHeaders(_) => self.malformed(
                "broken WARC header: expected a `WARC/<version>` line, then `Name: value` lines \
                 with a numeric Content-Length, then a blank line",
            ),
            warc::Error::UnexpectedEOB => self.malformed(
                "file ends inside the record body: the file is truncated or the \
                 Content-Length is too long",
            ),
            warc::Error::ReadOverflow => self.malformed(
                "record does not end with CRLF CRLF where its Content-Length says: \
                 the Content-Length is wrong (too short or too long)",
            ),
            other => self.malformed(format!("unreadable WARC record: {other}")),
        }
    }

    fn classify(&self, header: RawRecordHeader, block: Vec<u8>) -> WarcItem {
        let record = self.record;
        let headers = header.as_ref();
        let text = |h: WarcHeader| {
            headers
                .get(&h)
                .map(|v| String::from_utf8_lossy(v).trim().to_string())
        };
        let warc_type = text(WarcHeader::WarcType).unwrap_or_default();
        if !warc_type.eq_ignore_ascii_case("response") {
            return WarcItem::Other { record, warc_type };
        }
        let skip = |reason: String| {
            WarcItem::Skipped(SkippedInput {
                path: self.path.clone(),
                location: format!("record {record}"),
                reason,
            })
        };
        let Some(target_uri) = text(WarcHeader::TargetURI).filter(|u| !u.is_empty()) else {
            return skip("response record without WARC-Target-URI".to_string());
        };
        let Some(date) = text(WarcHeader::Date) else {
            return skip(format!(
                "response record for {target_uri} without WARC-Date"
            ));
        };
        let capture_time = match chrono::DateTime::parse_from_rfc3339(&date) {
            Ok(t) => t.timestamp(),
            Err(e) => {
                return skip(format!(
                    "WARC-Date `{date}` of {target_uri} is not an RFC 3339 date ({e})"
                ))
            }
        };
        match parse_http_block(&block) {
            Ok((status, body_start)) => WarcItem::Response(ResponseRecord {
                record,
                target_uri,
                capture_time,
                status,
                body: block[body_start..].to_vec(),
            }),
            Err(reason) => skip(format!("HTTP block of {target_uri}: {reason}")),
        }
    }
}

impl Iterator for WarcFile {
    type Item = Result<WarcItem, InputError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.records.next() {
            Some(Ok((header, block))) => {
                self.record += 1;
                self.last_end = self.consumed.load(Ordering::Relaxed);
                Some(Ok(self.classify(header, block)))
            }
            Some(Err(e)) => {
                self.done = true;
                Some(Err(self.framing_error(e)))
            }
            None => {
                self.done = true;
                let trailing = self.consumed.load(Ordering::Relaxed) - self.last_end;
                if trailing > 0 {
                    Some(Err(self.malformed(format!(
                        "file ends inside a WARC header ({trailing} bytes after the last \
                         complete record never reach the blank line ending a header)"
                    ))))
                } else if self.record == 0 {
                    Some(Err(InputError::Empty {
                        path: self.path.clone(),
                        message: "no WARC records in the file".to_string(),
                    }))
                } else {
                    None
                }
            }
        }
    }
}

/// Parses an HTTP response block: the status code and where the body starts.
///
/// The header must end with a blank line (`CRLF CRLF`; bare `LF LF` is accepted too, as some
/// tools write it). Bodies that are chunked or content-encoded are refused: their bytes are not
/// the page, and decoding them is not needed for the collections we read.
pub fn parse_http_block(block: &[u8]) -> Result<(u16, usize), String> {
    let (head_end, body_start) = match find(block, b"\r\n\r\n") {
        Some(i) => (i, i + 4),
        None => match find(block, b"\n\n") {
            Some(i) => (i, i + 2),
            None => return Err("no blank line ends the HTTP header".to_string()),
        },
    };
    let head = String::from_utf8_lossy(&block[..head_end]);
    let mut lines = head.lines();
    let status_line = lines.next().unwrap_or("");
    let mut parts = status_line.split_whitespace();
    let version = parts.next().unwrap_or("");
    if !version.starts_with("HTTP/") {
        return Err(format!(
            "expected an `HTTP/x.y NNN` status line, found `{}`",
            status_line.chars().take(60).collect::<String>()
        ));
    }
    let status = parts
        .next()
        .and_then(|s| s.parse::<u16>().ok())
        .filter(|s| (100..=599).contains(s))
        .ok_or_else(|| format!("no valid status code in `{status_line}`"))?;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let (name, value) = (name.trim(), value.trim());
        if name.eq_ignore_ascii_case("transfer-encoding") && !value.eq_ignore_ascii_case("identity")
        {
            return Err(format!("Transfer-Encoding `{value}` is not supported"));
        }
        if name.eq_ignore_ascii_case("content-encoding") && !value.eq_ignore_ascii_case("identity")
        {
            return Err(format!("Content-Encoding `{value}` is not supported"));
        }
    }
    Ok((status, body_start))
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_block_status_and_body() {
        let block = b"HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\n\r\n<p>gone</p>";
        let (status, start) = parse_http_block(block).unwrap();
        assert_eq!(status, 404);
        assert_eq!(&block[start..], b"<p>gone</p>");
    }

    #[test]
    fn http_block_without_status_line_is_refused() {
        let err = parse_http_block(b"hello\r\n\r\nbody").unwrap_err();
        assert!(err.contains("status line"), "{err}");
        let err = parse_http_block(b"HTTP/1.1 200 OK\r\nX: y").unwrap_err();
        assert!(err.contains("blank line"), "{err}");
        let err = parse_http_block(b"HTTP/1.1 abc OK\r\n\r\n").unwrap_err();
        assert!(err.contains("status code"), "{err}");
    }

    #[test]
    fn chunked_bodies_are_refused() {
        let err =
            parse_http_block(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello")
                .unwrap_err();
        assert!(err.contains("chunked"), "{err}");
    }
}
