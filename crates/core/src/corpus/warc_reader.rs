//! Reading response records out of one WARC file (`.warc` or `.warc.gz`).
//!
//! Compression is detected from the gzip magic bytes (`1f 8b`), not from the file name, and a
//! gzip file is read with [`flate2::read::MultiGzDecoder`] because WARC writers (warcio,
//! Heritrix) compress every record as its own gzip member ([`super::archive`] opens a file and
//! sends ARC files to [`super::arc_reader`] instead). Record framing, the WARC headers
//! and the HTTP block are all parsed here (the `warc` crate's reader panicked on a
//! `Content-Length` near 2^64 and buffered a header that never ends without bound), so every
//! length is bounded and every problem is reported with the file and record number.
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
//! * a `response` whose body cannot be decoded: a broken `chunked` transfer coding, a
//!   `Content-Encoding` that is not `gzip`/`x-gzip`/`deflate`/`br`/`identity`, compressed bytes
//!   that do not inflate, or a body that inflates past [`MAX_DECODED_BODY`];
//! * a `revisit` record without `WARC-Target-URI` or a usable `WARC-Date`.
//!
//! # Payloads from any writer
//!
//! The HTTP block is read as the crawler received it (WARC 1.0 and 1.1 alike): a
//! `Transfer-Encoding: chunked` body is de-chunked and a `Content-Encoding` of `gzip`,
//! `deflate` (zlib or raw deflate) or `br` is decoded, in the reverse order of the header's
//! list, so [`ResponseRecord::body`] is always the page's bytes. Writers that store the body
//! already de-chunked but keep the header (the first line is not a hex chunk size) are read
//! as they are.
//!
//! `revisit` records (both the `identical-payload-digest` and `server-not-modified` profiles)
//! come out as [`WarcItem::Revisit`]: an unchanged re-capture, whose payload is the one it
//! refers to; [`super::ingest`] resolves it. A `resource` record holding a page (an http(s)
//! `WARC-Target-URI` and an HTML WARC `Content-Type`, or none and an HTML-looking block) is
//! what browser-based archivers write instead of a response: it comes out as a
//! [`WarcItem::Response`] with status 200 and the block as body. `request`, `metadata`, other
//! `resource`, `warcinfo`, `conversion` and `continuation` records come out as
//! [`WarcItem::Other`] with their type, and are counted by type in the ingest summary.
//! A `WARC-Refresher-Unit` header (written by `refresher crawl`) is kept as the record's
//! `crawl_unit`.
//!
//! Problems that break the framing cost the record they are in: the iterator yields an error
//! naming the record and the byte offset where it starts (in the decompressed stream of a gzip
//! file), then reads on from the next line that starts with `WARC/1.` (the message says where
//! it resumed, or that nothing follows). A corrupt or truncated gzip stream, or the end of the
//! file, ends it. [`super::ingest`] keeps every intact record, reports each damage, and fails
//! only a file with no intact record:
//! * a truncated or corrupt gzip stream → [`InputError::Malformed`] at `record N`;
//! * a broken WARC header (no `WARC/x.y` line, a line that is not `Name: value`, a
//!   non-numeric `Content-Length`) → [`InputError::Malformed`] at `record N`;
//! * a header longer than [`MAX_HEADER_BYTES`], a `Content-Length` above [`MAX_RECORD_BYTES`]
//!   or (uncompressed files) beyond the bytes that remain → [`InputError::Malformed`];
//! * a `Content-Length` that does not land on the `CRLF CRLF` ending the record (too short or
//!   too long), or a file that ends inside a record → [`InputError::Malformed`] at `record N`;
//!   but a file that ends right after a whole block, without (all of) its `CRLF CRLF`, yields
//!   that record first and then the error;
//! * an empty file, or a file holding no WARC record at all → [`InputError::Empty`].
//!
//! Bodies that are not valid UTF-8 are *not* rejected here: the reader hands out bytes and the
//! HTML stage decodes them lossily and counts them (see [`super::ingest::IngestReport`]).

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use flate2::read::MultiGzDecoder;
use indicatif::ProgressBar;

use super::archive_stream::{next_line, with_resumption, DecodedStream, READ_BUFFER};
use crate::error::{InputError, SkippedInput};

/// Largest HTTP body a `Content-Encoding` may inflate to (a guard against compression bombs);
/// a record whose body would be larger is a counted skip.
pub const MAX_DECODED_BODY: u64 = 256 << 20;

/// A `response` record whose HTTP block was understood.
#[derive(Debug, Clone)]
pub struct ResponseRecord {
    /// 1-based number of the record in its file.
    pub record: u64,
    /// `WARC-Target-URI`, as written in the record.
    pub target_uri: String,
    /// `WARC-Date`, seconds since the Unix epoch (UTC).
    pub(crate) capture_time: i64,
    /// Status code from the HTTP status line.
    pub status: u16,
    /// HTTP body: the bytes after the blank line ending the HTTP header, de-chunked and
    /// content-decoded.
    pub body: Vec<u8>,
    /// `WARC-Payload-Digest`, as written (e.g. `sha1:…`), when the record has one.
    pub(crate) payload_digest: Option<String>,
    /// The codings that were undone to get `body` (`chunked`, `gzip`, `deflate`, `br`).
    pub(crate) decoded: Vec<&'static str>,
    /// Media type of the HTTP `Content-Type` header, lower case, without parameters
    /// (`text/html`); `None` when the header is missing or empty. For a `resource` record,
    /// the WARC `Content-Type`'s.
    pub content_type: Option<String>,
    /// The crawl unit the record says it was fetched in (the [`CRAWL_UNIT_HEADER`] that
    /// `refresher crawl` writes), if it has one.
    pub(crate) crawl_unit: Option<u32>,
    /// Built from a `resource` record holding a page (no HTTP header; status taken as 200).
    pub(crate) resource: bool,
}

/// The WARC header in which `refresher crawl` records the crawl unit of each `response` and
/// `revisit` record it writes (see [`crate::fetch::http::warc_out`]), lower case as looked up.
pub const CRAWL_UNIT_HEADER: &str = "warc-refresher-unit";

/// A `revisit` record: the page was captured again at `capture_time` and its payload is the
/// one the record refers to (an unchanged re-capture).
#[derive(Debug, Clone)]
pub struct RevisitRecord {
    /// 1-based number of the record in its file.
    pub record: u64,
    /// `WARC-Target-URI`.
    pub(crate) target_uri: String,
    /// `WARC-Date`, seconds since the Unix epoch (UTC).
    pub(crate) capture_time: i64,
    /// `WARC-Profile` (its last path segment, e.g. `identical-payload-digest`), if any.
    pub(crate) profile: String,
    /// `WARC-Payload-Digest` of the payload this capture repeats, if given.
    pub(crate) payload_digest: Option<String>,
    /// `WARC-Refers-To-Target-URI`, if given.
    pub(crate) refers_to_uri: Option<String>,
    /// `WARC-Refers-To-Date`, seconds since the Unix epoch, if given and parsable.
    pub(crate) refers_to_date: Option<i64>,
    /// The crawl unit the record says it was fetched in, as for [`ResponseRecord`].
    pub(crate) crawl_unit: Option<u32>,
}

/// One WARC record, classified.
#[derive(Debug, Clone)]
pub enum WarcItem {
    Response(ResponseRecord),
    /// A `revisit` record: an unchanged re-capture of a payload recorded before.
    Revisit(RevisitRecord),
    /// A record of another type (warcinfo, request, metadata, resource, ...), counted only.
    Other {
        record: u64,
        warc_type: String,
    },
    /// A response record that could not be used; the file's framing is intact.
    Skipped(SkippedInput),
}

/// Largest WARC header accepted (version line, named fields and the blank line ending them).
/// Real headers are a few hundred bytes; a header that does not end within this many bytes is
/// a broken file, and reading further would only grow a buffer without bound.
pub const MAX_HEADER_BYTES: usize = 1 << 20;

/// Largest `Content-Length` accepted for one record. The pages of the collections we read are
/// kilobytes to a few megabytes; a larger value is corruption (a length near 2^64 once made
/// the `warc` crate's framing arithmetic overflow and panic), not a page.
pub const MAX_RECORD_BYTES: u64 = 256 << 20;

/// The named fields of one WARC header, names lowercased, values as written (first wins).
#[derive(Debug, Default)]
struct WarcHeaders {
    fields: Vec<(String, Vec<u8>)>,
}

impl WarcHeaders {
    fn get(&self, name: &str) -> Option<String> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| String::from_utf8_lossy(v).trim().to_string())
    }
}

/// How one record's framing failed (turned into an [`InputError`] naming file and record).
enum Framing {
    Io(std::io::Error),
    Header(WarcHeaderError),
    TooLong(String),
    Eof,
    BadEnd,
}

/// An iterator over the records of one WARC file; see the module doc for error handling.
///
/// Record framing is done here, with every length bounded: a header is at most
/// [`MAX_HEADER_BYTES`], a `Content-Length` at most [`MAX_RECORD_BYTES`] and, in an
/// uncompressed file, at most the bytes that remain; the body buffer grows only as bytes
/// arrive, so a lying length costs no more memory than the file holds.
///
/// After the first `Err` the iterator is finished.
pub struct WarcFile {
    path: PathBuf,
    gzip: bool,
    reader: BufReader<Box<dyn Read + Send>>,
    /// Size of the file when it is not compressed (bounds each Content-Length).
    plain_len: Option<u64>,
    /// Bytes of decompressed WARC consumed so far.
    consumed: u64,
    /// Offset (in the decompressed WARC) where the record being read starts.
    record_start: u64,
    /// Records met so far, damaged ones included (record numbers count both).
    record: u64,
    /// Records met so far whose framing was broken.
    damaged: u64,
    /// The first line of the next record, found by [`WarcFile::resync`] after damage.
    pending_line: Option<Vec<u8>>,
    /// Damage found after the last record's block (its `CRLF CRLF` cut off), reported once
    /// that record has been handed out.
    trailing_damage: Option<String>,
    done: bool,
}

impl WarcFile {
    /// Opens `path`, detecting gzip by its magic bytes.
    pub fn open(path: &Path) -> Result<Self, InputError> {
        Self::open_with_progress(path, None)
    }

    /// Like [`WarcFile::open`], advancing `bar` by the file bytes read.
    pub fn open_with_progress(path: &Path, bar: Option<ProgressBar>) -> Result<Self, InputError> {
        Ok(Self::new(DecodedStream::open(path, bar)?))
    }

    /// Reads WARC records from `bytes` held in memory (a file's content, detected the same
    /// way); `label` names the input in messages. The fuzz targets feed the reader this way.
    pub fn from_bytes(label: &Path, bytes: Vec<u8>) -> Result<Self, InputError> {
        Ok(Self::new(DecodedStream::from_bytes(label, bytes)?))
    }

    /// Reads WARC records from an opened (and, if gzip, decompressing) stream.
    pub(crate) fn new(stream: DecodedStream) -> Self {
        WarcFile {
            path: stream.path,
            gzip: stream.gzip,
            reader: stream.reader,
            plain_len: stream.plain_len,
            consumed: 0,
            record_start: 0,
            record: 0,
            damaged: 0,
            pending_line: None,
            trailing_damage: None,
            done: false,
        }
    }

    /// Whether the file is gzip-compressed.
    pub fn is_gzip(&self) -> bool {
        self.gzip
    }

    /// Number of complete records read so far (damaged ones not counted).
    pub fn records_read(&self) -> u64 {
        self.record - self.damaged
    }

    /// After broken framing, reads on to the next line that starts a WARC record
    /// (`WARC/1.`), keeps it for the next read and returns its offset; `None` when the file
    /// holds no further record or cannot be read further (a corrupt gzip stream).
    ///
    /// A line inside a body that happens to start with `WARC/1.` is taken for a record too;
    /// its header then fails to parse and the search goes on, so no bad record comes out.
    fn resync(&mut self) -> Option<u64> {
        let mut at_line_start = true;
        loop {
            let (start, line) = next_line(&mut self.reader, &mut self.consumed, MAX_HEADER_BYTES)?;
            if at_line_start && line.starts_with(b"WARC/1.") {
                self.pending_line = Some(line);
                return Some(start);
            }
            at_line_start = line.ends_with(b"\n");
        }
    }

    /// An error in the record being read, naming where it starts: the byte offset in the
    /// file, or in the decompressed stream of a gzip file (its records' compressed offsets
    /// are not tracked).
    fn malformed(&self, message: impl Into<String>) -> InputError {
        InputError::malformed(
            &self.path,
            format!("record {}", self.record + 1),
            format!(
                "{} (the record starts at byte {}{})",
                message.into(),
                self.record_start,
                if self.gzip {
                    " of the decompressed stream"
                } else {
                    ""
                }
            ),
        )
    }

    fn framing_error(&self, err: Framing) -> InputError {
        match err {
            Framing::Io(io) if self.gzip => self.malformed(format!(
                "corrupt or truncated gzip stream ({io}); the rest of the file cannot be read"
            )),
            Framing::Io(io) => InputError::io(&self.path, io),
            Framing::Header(detail) => self.malformed(format!(
                "broken WARC header ({detail}): expected a `WARC/<version>` line, then \
                 `Name: value` lines with a numeric Content-Length, then a blank line"
            )),
            Framing::TooLong(message) => self.malformed(message),
            Framing::Eof => self.malformed(
                "file ends inside the record body: the file is truncated or the \
                 Content-Length is too long",
            ),
            Framing::BadEnd => self.malformed(
                "record does not end with CRLF CRLF where its Content-Length says: \
                 the Content-Length is wrong (too short or too long)",
            ),
        }
    }

    /// Reads one record's header and block; `Ok(None)` at a clean end of file.
    fn read_record(&mut self) -> Result<Option<(WarcHeaders, Vec<u8>)>, Framing> {
        let mut header = self.pending_line.take().unwrap_or_default();
        self.record_start = self.consumed - header.len() as u64;
        loop {
            let room = (MAX_HEADER_BYTES - header.len()) as u64;
            let n = (&mut self.reader)
                .take(room)
                .read_until(b'\n', &mut header)
                .map_err(Framing::Io)?;
            self.consumed += n as u64;
            if n == 0 {
                if header.is_empty() {
                    return Ok(None);
                }
                if header.len() >= MAX_HEADER_BYTES {
                    return Err(Framing::TooLong(format!(
                        "WARC header longer than {MAX_HEADER_BYTES} bytes without the blank \
                         line ending it"
                    )));
                }
                return Err(Framing::TooLong(format!(
                    "file ends inside a WARC header ({} bytes after the last complete record \
                     never reach the blank line ending a header)",
                    header.len()
                )));
            }
            if n == 2 && header.ends_with(b"\r\n") {
                break;
            }
        }
        let (headers, length) = parse_warc_header(&header).map_err(Framing::Header)?;
        if length > MAX_RECORD_BYTES {
            return Err(Framing::TooLong(format!(
                "Content-Length {length} is larger than the maximum record size \
                 ({MAX_RECORD_BYTES} bytes)"
            )));
        }
        if let Some(file_len) = self.plain_len {
            let remaining = file_len.saturating_sub(self.consumed);
            // The record's closing CRLF CRLF may be missing at the end of the file (reported
            // after the record), so only the block itself must fit.
            if length > remaining {
                return Err(Framing::TooLong(format!(
                    "Content-Length {length} is beyond the {remaining} bytes that remain in \
                     the file: the file is truncated or the Content-Length is too long"
                )));
            }
        }
        // Grows as bytes arrive: a lying length in a small gzip file costs what it holds.
        let mut block = Vec::with_capacity(length.min(READ_BUFFER as u64) as usize);
        let n = (&mut self.reader)
            .take(length)
            .read_to_end(&mut block)
            .map_err(Framing::Io)?;
        self.consumed += n as u64;
        if (n as u64) < length {
            return Err(Framing::Eof);
        }
        let mut end = [0u8; 4];
        let mut got = 0;
        while got < 4 {
            let k = self.reader.read(&mut end[got..]).map_err(Framing::Io)?;
            if k == 0 {
                // The file ends right after the block: the record is whole, only its
                // `CRLF CRLF` is missing (a writer cut short), so it is read and the damage
                // reported after it.
                self.consumed += got as u64;
                self.trailing_damage = Some(format!(
                    "the file ends without the CRLF CRLF that ends the last record \
                     ({got} of its 4 bytes present, at byte {}{}); the record itself is whole \
                     and was read",
                    self.consumed,
                    if self.gzip {
                        " of the decompressed stream"
                    } else {
                        ""
                    }
                ));
                return Ok(Some((headers, block)));
            }
            got += k;
        }
        self.consumed += 4;
        if &end != b"\r\n\r\n" {
            return Err(Framing::BadEnd);
        }
        Ok(Some((headers, block)))
    }

    fn classify(&self, headers: WarcHeaders, block: Vec<u8>) -> WarcItem {
        let record = self.record;
        let text = |name: &str| headers.get(name);
        let warc_type = text("warc-type").unwrap_or_default();
        let revisit = warc_type.eq_ignore_ascii_case("revisit");
        let resource_page = warc_type.eq_ignore_ascii_case("resource")
            && resource_page_type(&headers, &block).is_some();
        if !revisit && !resource_page && !warc_type.eq_ignore_ascii_case("response") {
            return WarcItem::Other { record, warc_type };
        }
        let kind = if revisit {
            "revisit"
        } else if resource_page {
            "resource"
        } else {
            "response"
        };
        let skip = |reason: String| {
            WarcItem::Skipped(SkippedInput {
                path: self.path.clone(),
                location: format!("record {record}"),
                reason,
            })
        };
        let Some(target_uri) = text("warc-target-uri").filter(|u| !u.is_empty()) else {
            return skip(format!("{kind} record without WARC-Target-URI"));
        };
        let Some(date) = text("warc-date") else {
            return skip(format!("{kind} record for {target_uri} without WARC-Date"));
        };
        let capture_time = match chrono::DateTime::parse_from_rfc3339(&date) {
            Ok(t) => t.timestamp(),
            Err(e) => {
                return skip(format!(
                    "WARC-Date `{date}` of {target_uri} is not an RFC 3339 date ({e})"
                ))
            }
        };
        let payload_digest = text("warc-payload-digest").filter(|d| !d.is_empty());
        let crawl_unit = text(CRAWL_UNIT_HEADER).and_then(|u| u.parse::<u32>().ok());
        if resource_page {
            return WarcItem::Response(ResponseRecord {
                record,
                target_uri,
                capture_time,
                status: 200,
                content_type: resource_page_type(&headers, &block),
                body: block,
                payload_digest,
                decoded: Vec::new(),
                crawl_unit,
                resource: true,
            });
        }
        if revisit {
            let named = |name: &str| headers.get(name).filter(|v| !v.is_empty());
            let profile = text("warc-profile").unwrap_or_default();
            let profile = profile.rsplit('/').next().unwrap_or("").to_string();
            return WarcItem::Revisit(RevisitRecord {
                record,
                target_uri,
                capture_time,
                profile,
                payload_digest,
                refers_to_uri: named("warc-refers-to-target-uri"),
                refers_to_date: named("warc-refers-to-date")
                    .and_then(|d| chrono::DateTime::parse_from_rfc3339(&d).ok())
                    .map(|t| t.timestamp()),
                crawl_unit,
            });
        }
        match decode_http_block(&block) {
            Ok(http) => WarcItem::Response(ResponseRecord {
                record,
                target_uri,
                capture_time,
                status: http.status,
                body: http.body,
                payload_digest,
                decoded: http.decoded,
                content_type: http.content_type,
                crawl_unit,
                resource: false,
            }),
            Err(reason) => skip(format!("HTTP block of {target_uri}: {reason}")),
        }
    }
}

/// The media type of a `resource` record that holds a web page, or `None` when it is not one.
///
/// Archiving tools that capture a page without its HTTP exchange (browser-based archivers,
/// `warcio`'s resource records) store the page body as the block, its media type in the WARC
/// `Content-Type`. It is a page when its `WARC-Target-URI` is http(s) and the media type is
/// HTML, or when there is no specific media type and the block starts like HTML; wget's
/// `metadata://` resources, logs (`text/plain`) and manifests are not pages.
fn resource_page_type(headers: &WarcHeaders, block: &[u8]) -> Option<String> {
    let uri = headers.get("warc-target-uri")?.to_ascii_lowercase();
    if !(uri.starts_with("http://") || uri.starts_with("https://")) {
        return None;
    }
    let media = headers
        .get("content-type")
        .map(|t| {
            t.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .filter(|t| !t.is_empty());
    match media.as_deref() {
        Some("text/html" | "application/xhtml+xml") => media,
        None | Some("application/octet-stream") => (super::ContentType::classify(None, block)
            == super::ContentType::Html)
            .then(|| "text/html".to_string()),
        Some(_) => None,
    }
}

impl Iterator for WarcFile {
    type Item = Result<WarcItem, InputError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if let Some(damage) = self.trailing_damage.take() {
            self.done = true;
            return Some(Err(InputError::malformed(
                &self.path,
                format!("record {}", self.record),
                damage,
            )));
        }
        match self.read_record() {
            Ok(Some((headers, block))) => {
                self.record += 1;
                Some(Ok(self.classify(headers, block)))
            }
            Err(e) => {
                // Damage inside the decompressed WARC (not a broken gzip stream or the end
                // of the file): the next record may still be found and read.
                let resumable = matches!(
                    e,
                    Framing::Header(_) | Framing::TooLong(_) | Framing::BadEnd
                );
                let error = self.framing_error(e);
                self.record += 1;
                self.damaged += 1;
                let resumed = if resumable { self.resync() } else { None };
                self.done = resumed.is_none();
                Some(Err(with_resumption(error, resumed, resumable, self.gzip)))
            }
            Ok(None) => {
                self.done = true;
                if self.record == 0 {
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

/// A WARC header field name: an HTTP token (no controls, separators or non-ASCII bytes).
fn is_token_byte(b: u8) -> bool {
    !matches!(b, 0..=31 | 127..=255 | b'(' | b')' | b'<' | b'>' | b'@' | b',' | b';' | b':'
        | b'"' | b'/' | b'[' | b']' | b'?' | b'=' | b'{' | b'}' | b' ' | b'\\')
}

/// Why a WARC header cannot be read (it breaks the file's framing).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum WarcHeaderError {
    /// The first line is not a version line.
    #[error("the first line is not `WARC/<version>`")]
    NoVersion,
    /// A line (1-based, in the header) that is not a header field.
    #[error("line {line} is not `Name: value`")]
    BadLine { line: usize },
    /// A `Content-Length` that is not a number.
    #[error("Content-Length is not a number")]
    BadLength,
    /// A version line and nothing else.
    #[error("no header fields")]
    NoFields,
}

/// Parses a WARC header (`WARC/x.y` line, `Name: value` lines, blank line): its fields and
/// `Content-Length` (0 when absent). Errors say which line is wrong, without echoing input.
fn parse_warc_header(header: &[u8]) -> Result<(WarcHeaders, u64), WarcHeaderError> {
    let mut lines = header
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    let version = lines.next().unwrap_or_default();
    if !version.starts_with(b"WARC/") {
        return Err(WarcHeaderError::NoVersion);
    }
    let mut headers = WarcHeaders::default();
    let mut length = None;
    for (i, line) in lines.enumerate() {
        if line.is_empty() {
            break;
        }
        let colon = line.iter().position(|&b| b == b':');
        let name = colon.map(|c| line[..c].trim_ascii_end());
        let Some(name) = name.filter(|n| !n.is_empty() && n.iter().all(|&b| is_token_byte(b)))
        else {
            return Err(WarcHeaderError::BadLine { line: i + 2 });
        };
        let value = line[colon.unwrap_or(0) + 1..].trim_ascii().to_vec();
        let name = String::from_utf8_lossy(name).to_ascii_lowercase();
        if name == "content-length" && length.is_none() {
            let parsed = std::str::from_utf8(&value)
                .ok()
                .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
                .map(|v| v.parse::<u64>());
            length = Some(match parsed {
                Some(Ok(n)) => n,
                Some(Err(_)) => u64::MAX, // all digits but beyond u64: rejected as too large
                None => return Err(WarcHeaderError::BadLength),
            });
        }
        headers.fields.push((name, value));
    }
    if headers.fields.is_empty() {
        return Err(WarcHeaderError::NoFields);
    }
    Ok((headers, length.unwrap_or(0)))
}

/// Why an HTTP response block cannot be read (its record is skipped).
#[derive(Debug, thiserror::Error)]
pub enum HttpBlockError {
    /// No blank line ends the header.
    #[error("no blank line ends the HTTP header")]
    NoBlankLine,
    /// The first line is not a status line (`found`: its first 60 characters).
    #[error("expected an `HTTP/x.y NNN` status line, found `{found}`")]
    NoStatusLine { found: String },
    /// A status line without a status code in 100..=599.
    #[error("no valid status code in `{line}`")]
    BadStatus { line: String },
    /// A coding the reader cannot undo, named in `header`.
    #[error("{header} `{coding}` is not supported")]
    UnsupportedCoding {
        header: &'static str,
        coding: String,
    },
    /// Compressed bytes that do not inflate.
    #[error("{header} `{coding}` body does not decode ({error})")]
    Undecodable {
        header: &'static str,
        coding: &'static str,
        error: std::io::Error,
    },
    /// A body that inflates past [`MAX_DECODED_BODY`].
    #[error("{header} `{coding}` body inflates past {} bytes", MAX_DECODED_BODY)]
    TooLarge {
        header: &'static str,
        coding: &'static str,
    },
    /// A chunked body without its last (zero-size) chunk, after `decoded` bytes.
    #[error("chunked body ends without its last (zero-size) chunk after {decoded} bytes")]
    Unterminated { decoded: usize },
    /// A chunk size line that is not hexadecimal (`line`: its first 40 bytes).
    #[error("bad chunk size line `{line}` in a chunked body")]
    BadChunkSize { line: String },
    /// A chunk longer than the bytes that remain.
    #[error("chunk of {size} bytes runs past the end of the body ({left} left)")]
    ChunkPastEnd { size: usize, left: usize },
    /// Chunk data followed by something other than a line end.
    #[error("chunk data is not followed by CRLF")]
    NoChunkEnd,
}

/// Parses an HTTP response block: the status code and where the body starts.
///
/// The header must end with a blank line (`CRLF CRLF`; bare `LF LF` is accepted too, as some
/// tools write it). The body is returned as stored; [`decode_http_block`] also undoes its
/// transfer and content codings.
pub fn parse_http_block(block: &[u8]) -> Result<(u16, usize), HttpBlockError> {
    parse_http_head(block).map(|head| (head.status, head.body_start))
}

/// The parts of an HTTP response header the reader uses.
struct HttpHead {
    status: u16,
    body_start: usize,
    /// `Transfer-Encoding` codings, lower case, in the order applied.
    transfer: Vec<String>,
    /// `Content-Encoding` codings, lower case, in the order applied.
    content: Vec<String>,
    /// `Content-Type` media type, lower case, parameters dropped.
    content_type: Option<String>,
}

fn parse_http_head(block: &[u8]) -> Result<HttpHead, HttpBlockError> {
    let (head_end, body_start) = match find(block, b"\r\n\r\n") {
        Some(i) => (i, i + 4),
        None => match find(block, b"\n\n") {
            Some(i) => (i, i + 2),
            None => return Err(HttpBlockError::NoBlankLine),
        },
    };
    let head = String::from_utf8_lossy(&block[..head_end]);
    let mut lines = head.lines();
    let status_line = lines.next().unwrap_or("");
    let mut parts = status_line.split_whitespace();
    let version = parts.next().unwrap_or("");
    if !version.starts_with("HTTP/") {
        return Err(HttpBlockError::NoStatusLine {
            found: status_line.chars().take(60).collect(),
        });
    }
    let status = parts
        .next()
        .and_then(|s| s.parse::<u16>().ok())
        .filter(|s| (100..=599).contains(s))
        .ok_or_else(|| HttpBlockError::BadStatus {
            line: status_line.to_string(),
        })?;
    let mut transfer = Vec::new();
    let mut content = Vec::new();
    let mut content_type = None;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let name = name.trim();
        if name.eq_ignore_ascii_case("content-type") {
            let media = value.split(';').next().unwrap_or("").trim();
            content_type = (!media.is_empty()).then(|| media.to_ascii_lowercase());
            continue;
        }
        let target = if name.eq_ignore_ascii_case("transfer-encoding") {
            &mut transfer
        } else if name.eq_ignore_ascii_case("content-encoding") {
            &mut content
        } else {
            continue;
        };
        target.extend(
            value
                .split(',')
                .map(|c| c.trim().to_ascii_lowercase())
                .filter(|c| !c.is_empty() && c != "identity"),
        );
    }
    Ok(HttpHead {
        status,
        body_start,
        transfer,
        content,
        content_type,
    })
}

/// An HTTP response with its body decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpResponse {
    pub status: u16,
    /// The page's bytes: de-chunked and content-decoded.
    pub body: Vec<u8>,
    /// The codings undone, in the order they were undone.
    pub decoded: Vec<&'static str>,
    /// Media type of `Content-Type` (lower case, no parameters), if the header has one.
    pub content_type: Option<String>,
}

/// Parses an HTTP response block and decodes its body: `Transfer-Encoding: chunked` is
/// de-chunked, then `Content-Encoding` (`gzip`, `x-gzip`, `deflate`, `br`) is undone, last
/// coding first. See the module doc for what is refused.
pub fn decode_http_block(block: &[u8]) -> Result<HttpResponse, HttpBlockError> {
    let head = parse_http_head(block)?;
    let mut body = block[head.body_start..].to_vec();
    let mut decoded = Vec::new();
    for coding in head.transfer.iter().rev() {
        match coding.as_str() {
            "chunked" => {
                // Some writers store the body de-chunked but keep the header: a body whose
                // first line is not a chunk size is taken as it is.
                if starts_with_chunk_size(&body) {
                    body = dechunk(&body)?;
                    decoded.push("chunked");
                }
            }
            other => decoded.push(content_decode(other, &mut body, "Transfer-Encoding")?),
        }
    }
    for coding in head.content.iter().rev() {
        decoded.push(content_decode(coding, &mut body, "Content-Encoding")?);
    }
    Ok(HttpResponse {
        status: head.status,
        body,
        decoded,
        content_type: head.content_type,
    })
}

/// Undoes one content coding in place; returns its canonical name.
fn content_decode(
    coding: &str,
    body: &mut Vec<u8>,
    header: &'static str,
) -> Result<&'static str, HttpBlockError> {
    use flate2::read::{DeflateDecoder, ZlibDecoder};
    let name = match coding {
        "gzip" | "x-gzip" => "gzip",
        "deflate" => "deflate",
        "br" => "br",
        other => {
            return Err(HttpBlockError::UnsupportedCoding {
                header,
                coding: other.to_string(),
            })
        }
    };
    let inflate = |reader: &mut dyn Read| -> Result<Vec<u8>, HttpBlockError> {
        let mut out = Vec::new();
        reader
            .take(MAX_DECODED_BODY + 1)
            .read_to_end(&mut out)
            .map_err(|error| HttpBlockError::Undecodable {
                header,
                coding: name,
                error,
            })?;
        if out.len() as u64 > MAX_DECODED_BODY {
            return Err(HttpBlockError::TooLarge {
                header,
                coding: name,
            });
        }
        Ok(out)
    };
    let out = match name {
        "gzip" => inflate(&mut MultiGzDecoder::new(&body[..]))?,
        "deflate" => {
            // RFC 9110 deflate is zlib-wrapped; some servers send raw deflate.
            match inflate(&mut ZlibDecoder::new(&body[..])) {
                Ok(out) => out,
                Err(_) => inflate(&mut DeflateDecoder::new(&body[..]))?,
            }
        }
        _ => inflate(&mut brotli::Decompressor::new(&body[..], 64 << 10))?,
    };
    *body = out;
    Ok(name)
}

/// Whether `body` starts with `HEX [; ext] CRLF`, the first line of a chunked body.
fn starts_with_chunk_size(body: &[u8]) -> bool {
    let line_end = body.iter().position(|&b| b == b'\n').unwrap_or(body.len());
    let line = &body[..line_end];
    let size = line.split(|&b| b == b';').next().unwrap_or(b"");
    let size = size.trim_ascii();
    line_end < body.len() && !size.is_empty() && size.iter().all(u8::is_ascii_hexdigit)
}

/// Decodes a `chunked` body (RFC 9112 §7.1): chunk extensions and trailers are ignored;
/// bare `LF` line ends are accepted.
fn dechunk(body: &[u8]) -> Result<Vec<u8>, HttpBlockError> {
    let mut out = Vec::with_capacity(body.len());
    let mut pos = 0;
    loop {
        let Some(nl) = body[pos..].iter().position(|&b| b == b'\n') else {
            return Err(HttpBlockError::Unterminated { decoded: out.len() });
        };
        let line = &body[pos..pos + nl];
        let size = line
            .split(|&b| b == b';')
            .next()
            .unwrap_or(b"")
            .trim_ascii();
        let size = std::str::from_utf8(size)
            .ok()
            .and_then(|s| usize::from_str_radix(s, 16).ok())
            .ok_or_else(|| HttpBlockError::BadChunkSize {
                line: String::from_utf8_lossy(&line[..line.len().min(40)]).into_owned(),
            })?;
        pos += nl + 1;
        if size == 0 {
            // Trailer fields up to the final blank line are ignored.
            return Ok(out);
        }
        if body.len() - pos < size {
            return Err(HttpBlockError::ChunkPastEnd {
                size,
                left: body.len() - pos,
            });
        }
        out.extend_from_slice(&body[pos..pos + size]);
        pos += size;
        if body[pos..].starts_with(b"\r\n") {
            pos += 2;
        } else if body[pos..].starts_with(b"\n") {
            pos += 1;
        } else if pos < body.len() {
            return Err(HttpBlockError::NoChunkEnd);
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(warc_type: &str, extra: &str, block: &[u8]) -> Vec<u8> {
        let mut out = format!(
            "WARC/1.1\r\nWARC-Type: {warc_type}\r\nWARC-Date: 2024-05-01T10:00:00Z\r\n{extra}\
             Content-Length: {}\r\n\r\n",
            block.len()
        )
        .into_bytes();
        out.extend_from_slice(block);
        out.extend_from_slice(b"\r\n\r\n");
        out
    }

    fn read(bytes: Vec<u8>) -> Vec<Result<WarcItem, InputError>> {
        WarcFile::from_bytes(Path::new("t.warc"), bytes)
            .unwrap()
            .collect()
    }

    #[test]
    fn resource_records_holding_pages_are_captures() {
        let page = b"<!doctype html><title>Saved</title><p>saved page</p>";
        let bytes = [
            record(
                "resource",
                "WARC-Target-URI: https://s.org/saved\r\nContent-Type: text/html; charset=utf-8\r\n",
                page,
            ),
            // No Content-Type: sniffed.
            record("resource", "WARC-Target-URI: http://s.org/sniffed\r\n", page),
            // wget's log and manifest are not pages.
            record(
                "resource",
                "WARC-Target-URI: metadata://gnu.org/software/wget/warc/wget.log\r\n\
                 Content-Type: text/plain\r\n",
                b"<html> in a log line",
            ),
            record(
                "resource",
                "WARC-Target-URI: http://s.org/notes.txt\r\nContent-Type: text/plain\r\n",
                b"plain",
            ),
            record(
                "metadata",
                "WARC-Target-URI: http://s.org/saved\r\nContent-Type: text/html\r\n",
                page,
            ),
        ]
        .concat();
        let items: Vec<WarcItem> = read(bytes).into_iter().map(Result::unwrap).collect();
        for (i, url) in [(0, "https://s.org/saved"), (1, "http://s.org/sniffed")] {
            let WarcItem::Response(r) = &items[i] else {
                panic!("{:?}", items[i])
            };
            assert_eq!((r.target_uri.as_str(), r.status), (url, 200));
            assert_eq!(r.body, page);
            assert_eq!(r.content_type.as_deref(), Some("text/html"));
            assert!(r.resource);
        }
        for item in &items[2..] {
            assert!(matches!(item, WarcItem::Other { .. }), "{item:?}");
        }
    }

    #[test]
    fn damage_between_records_costs_only_the_damaged_record() {
        let page = |url: &str| {
            record(
                "response",
                &format!("WARC-Target-URI: {url}\r\n"),
                b"HTTP/1.1 200 OK\r\n\r\n<p>x</p>",
            )
        };
        let first = page("http://s.org/a");
        let garbage = b"not a record\r\nWARC-Type: response\r\n\r\n".to_vec();
        let bytes = [first.clone(), garbage.clone(), page("http://s.org/b")].concat();
        let items = read(bytes);
        assert_eq!(items.len(), 3);
        assert!(matches!(&items[0], Ok(WarcItem::Response(r)) if r.record == 1));
        let err = items[1].as_ref().unwrap_err().to_string();
        let resumed = first.len() + garbage.len();
        assert!(
            err.contains("record 2")
                && err.contains(&format!("starts at byte {}", first.len()))
                && err.contains(&format!(
                    "resumes at the next record, found at byte {resumed}"
                )),
            "{err}"
        );
        assert!(
            matches!(&items[2], Ok(WarcItem::Response(r)) if r.record == 3 && r.target_uri == "http://s.org/b")
        );
    }

    #[test]
    fn a_last_record_without_its_closing_crlf_is_read_then_reported() {
        let block = b"HTTP/1.1 200 OK\r\n\r\n<p>last</p>";
        let first = record("response", "WARC-Target-URI: http://s.org/a\r\n", block);
        for cut in [4, 2, 1] {
            let mut bytes = [first.clone(), first.clone()].concat();
            bytes.truncate(bytes.len() - cut);
            let items = read(bytes);
            assert_eq!(items.len(), 3, "cut {cut}");
            assert!(matches!(&items[1], Ok(WarcItem::Response(r)) if r.body == b"<p>last</p>"));
            let err = items[2].as_ref().unwrap_err().to_string();
            assert!(
                err.contains("t.warc") && err.contains("record 2") && err.contains("CRLF CRLF"),
                "{err}"
            );
            assert!(
                err.contains(&format!("byte {}", 2 * first.len() - cut)),
                "{err}"
            );
        }
        // Garbage after the last record: an error at the record after it, with its offset.
        let mut bytes = first.clone();
        bytes.extend_from_slice(b"\x00\x00garbage\r\n\r\n");
        let items = read(bytes);
        let err = items[1].as_ref().unwrap_err().to_string();
        assert!(
            err.contains("record 2") && err.contains(&format!("starts at byte {}", first.len())),
            "{err}"
        );
    }

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
        assert!(err.to_string().contains("status line"), "{err}");
        let err = parse_http_block(b"HTTP/1.1 200 OK\r\nX: y").unwrap_err();
        assert!(err.to_string().contains("blank line"), "{err}");
        let err = parse_http_block(b"HTTP/1.1 abc OK\r\n\r\n").unwrap_err();
        assert!(err.to_string().contains("status code"), "{err}");
    }

    #[test]
    fn content_type_is_the_media_type_without_parameters() {
        let http = decode_http_block(
            b"HTTP/1.1 200 OK\r\nContent-Type: Text/HTML; charset=UTF-8\r\n\r\nx",
        )
        .unwrap();
        assert_eq!(http.content_type.as_deref(), Some("text/html"));
        let http = decode_http_block(b"HTTP/1.1 200 OK\r\nContent-Type: \r\n\r\nx").unwrap();
        assert_eq!(http.content_type, None);
        let http = decode_http_block(b"HTTP/1.1 200 OK\r\n\r\nx").unwrap();
        assert_eq!(http.content_type, None);
    }

    #[test]
    fn chunked_and_encoded_bodies_are_decoded() {
        use std::io::Write;
        let page = b"<p>hello, chunked and compressed world</p>".repeat(20);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&page).unwrap();
        let gz = gz.finish().unwrap();
        // gzip, then chunked in two chunks with an extension and a trailer.
        let (a, b) = gz.split_at(gz.len() / 2);
        let mut block =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n\r\n"
                .to_vec();
        block.extend(format!("{:x};name=v\r\n", a.len()).bytes());
        block.extend_from_slice(a);
        block.extend(format!("\r\n{:X}\r\n", b.len()).bytes());
        block.extend_from_slice(b);
        block.extend_from_slice(b"\r\n0\r\nExpires: never\r\n\r\n");
        let http = decode_http_block(&block).unwrap();
        assert_eq!(http.body, page);
        assert_eq!(http.decoded, vec!["chunked", "gzip"]);

        for (name, bytes) in [
            ("deflate", {
                let mut e = flate2::write::ZlibEncoder::new(Vec::new(), Default::default());
                e.write_all(&page).unwrap();
                e.finish().unwrap()
            }),
            ("deflate", {
                let mut e = flate2::write::DeflateEncoder::new(Vec::new(), Default::default());
                e.write_all(&page).unwrap();
                e.finish().unwrap()
            }),
            ("br", {
                let mut out = Vec::new();
                let mut e = brotli::CompressorWriter::new(&mut out, 4096, 5, 22);
                e.write_all(&page).unwrap();
                drop(e);
                out
            }),
        ] {
            let mut block =
                format!("HTTP/1.1 200 OK\r\nContent-Encoding: {name}\r\n\r\n").into_bytes();
            block.extend_from_slice(&bytes);
            let http = decode_http_block(&block).unwrap();
            assert_eq!(http.body, page, "{name}");
            assert_eq!(http.decoded, vec![name]);
        }
        // A body stored de-chunked under a `chunked` header is read as it is.
        let http =
            decode_http_block(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n<p>hi</p>")
                .unwrap();
        assert_eq!(http.body, b"<p>hi</p>");
        assert!(http.decoded.is_empty());
    }

    #[test]
    fn undecodable_bodies_are_refused_with_a_reason() {
        let err = decode_http_block(b"HTTP/1.1 200 OK\r\nContent-Encoding: compress\r\n\r\nx")
            .unwrap_err();
        assert!(err.to_string().contains("compress"), "{err}");
        let err = decode_http_block(b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\nnot gzip")
            .unwrap_err();
        assert!(err.to_string().contains("gzip"), "{err}");
        let err =
            decode_http_block(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n50\r\nshort")
                .unwrap_err();
        assert!(err.to_string().contains("runs past"), "{err}");
        let err = decode_http_block(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
        )
        .unwrap_err();
        assert!(err.to_string().contains("zero-size"), "{err}");
    }
}
