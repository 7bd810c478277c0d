//! Reading captures out of one ARC file (`.arc` or `.arc.gz`), the Internet Archive's format
//! before WARC (Heritrix wrote it until 2008), as the same [`WarcItem`]s the WARC reader yields.
//!
//! An ARC file begins with a `filedesc://` version block; every record is one header line,
//! `URL IP-address Archive-date Content-type Archive-length` in version 1 (version 2 adds
//! five fields before the length), then `Archive-length` bytes (the HTTP response as
//! received, for http(s) URLs), then a newline. The header fields are split from the right,
//! so a URL holding spaces (old crawlers wrote them unescaped) stays whole. Gzip files hold
//! one member per record and are read through the same decoder as WARC
//! ([`super::archive`]).
//!
//! What comes out: `filedesc` and non-http records (`dns:`, `ftp:`, …) as
//! [`WarcItem::Other`] named by scheme; http(s) records as [`WarcItem::Response`] (the HTTP
//! block decoded as for WARC) or, when their date or HTTP block cannot be read, as a
//! [`WarcItem::Skipped`] naming the record. A header line that cannot be read (the wrong
//! number of fields, a length that is not a number or runs past the end of the file) breaks
//! the framing: an [`InputError::Malformed`] at that record, after which reading resumes at
//! the next line that reads as a record header (as the WARC reader resumes at the next
//! `WARC/1.` line), so every intact record of a damaged file is read. A file ending inside a
//! record, or a corrupt gzip stream, ends the iterator.

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;

use super::archive_stream::{next_line, with_resumption, DecodedStream, READ_BUFFER};
use super::warc_reader::{
    decode_http_block, ResponseRecord, WarcItem, MAX_HEADER_BYTES, MAX_RECORD_BYTES,
};
use crate::error::{InputError, SkippedInput};

/// Header fields of a version 1 record line (`URL IP-address Archive-date Content-type
/// Archive-length`); version 2 has [`V2_FIELDS`].
const V1_FIELDS: usize = 5;
/// Header fields of a version 2 record line (`URL IP-address Archive-date Content-type
/// Result-code Checksum Location Offset Filename Archive-length`).
const V2_FIELDS: usize = 10;

/// An iterator over the records of one ARC file; after the first `Err` it is finished.
pub struct ArcFile {
    path: PathBuf,
    gzip: bool,
    reader: BufReader<Box<dyn Read + Send>>,
    plain_len: Option<u64>,
    /// Decompressed bytes consumed so far, and where the record being read starts.
    consumed: u64,
    record_start: u64,
    /// Records met so far, damaged ones included (record numbers count both).
    record: u64,
    /// Damaged records met so far.
    damaged: u64,
    /// Fields of a record header line, from the version block (version 1 until it is read).
    fields: usize,
    /// A header line found by [`ArcFile::resync`] after damage, to be read next.
    pending_line: Option<Vec<u8>>,
    /// Whether the last error broke only the framing of one record (reading may resume).
    resumable: bool,
    done: bool,
}

/// One record's header line, split.
struct ArcHeader {
    url: String,
    date: String,
    length: u64,
}

impl ArcFile {
    pub(crate) fn new(stream: DecodedStream) -> Self {
        ArcFile {
            path: stream.path,
            gzip: stream.gzip,
            reader: stream.reader,
            plain_len: stream.plain_len,
            consumed: 0,
            record_start: 0,
            record: 0,
            damaged: 0,
            fields: V1_FIELDS,
            pending_line: None,
            resumable: false,
            done: false,
        }
    }

    /// Number of complete records read so far (damaged ones not counted).
    pub fn records_read(&self) -> u64 {
        self.record - self.damaged
    }

    /// An error in the record being read, naming where it starts (in the decompressed stream
    /// of a gzip file).
    fn malformed(&self, message: impl Into<String>) -> InputError {
        InputError::malformed(
            &self.path,
            format!("record {}", self.record + 1),
            format!(
                "{} (the ARC record starts at byte {}{})",
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

    fn io_error(&self, error: std::io::Error) -> InputError {
        if self.gzip {
            self.malformed(format!(
                "corrupt or truncated gzip stream ({error}); the rest of the file cannot be read"
            ))
        } else {
            InputError::io(&self.path, error)
        }
    }

    /// The next header line (blank lines between records skipped), without its line end;
    /// `Ok(None)` at a clean end of file.
    fn header_line(&mut self) -> Result<Option<Vec<u8>>, InputError> {
        if let Some(line) = self.pending_line.take() {
            return Ok(Some(line));
        }
        loop {
            self.record_start = self.consumed;
            let mut line = Vec::with_capacity(256);
            let n = (&mut self.reader)
                .take(MAX_HEADER_BYTES as u64)
                .read_until(b'\n', &mut line)
                .map_err(|e| self.io_error(e))?;
            self.consumed += n as u64;
            if n == 0 {
                return Ok(None);
            }
            if !line.ends_with(b"\n") && line.len() >= MAX_HEADER_BYTES {
                self.resumable = true;
                return Err(self.malformed(format!(
                    "ARC header line longer than {MAX_HEADER_BYTES} bytes"
                )));
            }
            let line = line.trim_ascii_end();
            if !line.is_empty() {
                return Ok(Some(line.to_vec()));
            }
        }
    }

    /// Splits a header line from the right: the last `fields - 1` fields are single words,
    /// the rest is the URL.
    fn parse_header(&mut self, line: &[u8]) -> Result<ArcHeader, InputError> {
        let parsed = self.split_header(line);
        self.resumable = parsed.is_err();
        parsed
    }

    /// [`Self::parse_header`] without its bookkeeping.
    fn split_header(&self, line: &[u8]) -> Result<ArcHeader, InputError> {
        let text = String::from_utf8_lossy(line);
        let parts: Vec<&str> = text.trim().rsplitn(self.fields, ' ').collect();
        let shape = || {
            format!(
                "ARC header line has {} space-separated fields, expected {} \
                 (URL IP-address Archive-date Content-type{} Archive-length)",
                parts.len(),
                self.fields,
                if self.fields == V2_FIELDS {
                    " Result-code Checksum Location Offset Filename"
                } else {
                    ""
                }
            )
        };
        if parts.len() != self.fields {
            return Err(self.malformed(shape()));
        }
        let length = parts[0]
            .parse::<u64>()
            .map_err(|_| self.malformed(format!("{}: Archive-length is not a number", shape())))?;
        if length > MAX_RECORD_BYTES {
            return Err(self.malformed(format!(
                "Archive-length {length} is larger than the maximum record size \
                 ({MAX_RECORD_BYTES} bytes)"
            )));
        }
        if let Some(file_len) = self.plain_len {
            let remaining = file_len.saturating_sub(self.consumed);
            if length > remaining {
                return Err(self.malformed(format!(
                    "Archive-length {length} is beyond the {remaining} bytes that remain in \
                     the file: the file is truncated or the length is too long"
                )));
            }
        }
        Ok(ArcHeader {
            url: parts[self.fields - 1].trim_start().to_string(),
            date: parts[self.fields - 3].to_string(),
            length,
        })
    }

    /// After broken framing, reads on to the next line that reads as a record header of an
    /// http(s) or `dns:` URL with a date and a length that fit, keeps it for the next read and
    /// returns its offset; `None` when the file holds no further record or cannot be read
    /// further (a corrupt gzip stream). A body line that happens to read as a header is taken
    /// for one; its record then fails or is skipped as any other, so no bad page comes out.
    fn resync(&mut self) -> Option<u64> {
        loop {
            let (start, line) = next_line(&mut self.reader, &mut self.consumed, MAX_HEADER_BYTES)?;
            let trimmed = line.trim_ascii_end();
            let starts_record = [&b"http://"[..], b"https://", b"dns:"]
                .iter()
                .any(|scheme| trimmed.starts_with(scheme));
            if starts_record {
                if let Ok(header) = self.split_header(trimmed) {
                    if parse_arc_date(&header.date).is_some() {
                        self.record_start = start;
                        self.pending_line = Some(trimmed.to_vec());
                        return Some(start);
                    }
                }
            }
        }
    }

    fn read_block(&mut self, length: u64) -> Result<Vec<u8>, InputError> {
        let mut block = Vec::with_capacity(length.min(READ_BUFFER as u64) as usize);
        let n = (&mut self.reader)
            .take(length)
            .read_to_end(&mut block)
            .map_err(|e| self.io_error(e))?;
        self.consumed += n as u64;
        if (n as u64) < length {
            return Err(self.malformed(format!(
                "file ends inside the record ({n} of its {length} bytes present): the file is \
                 truncated or the Archive-length is too long"
            )));
        }
        Ok(block)
    }

    /// Reads the next record; `Ok(None)` at a clean end of file.
    fn read_record(&mut self) -> Result<Option<WarcItem>, InputError> {
        let Some(line) = self.header_line()? else {
            return Ok(None);
        };
        let header = self.parse_header(&line)?;
        let block = self.read_block(header.length)?;
        self.record += 1;
        let record = self.record;
        let scheme = header
            .url
            .split_once(':')
            .map(|(s, _)| s.to_ascii_lowercase())
            .unwrap_or_default();
        if scheme == "filedesc" {
            if record == 1 {
                self.fields = fields_of_version_block(&block);
            }
            return Ok(Some(WarcItem::Other {
                record,
                warc_type: "filedesc".to_string(),
            }));
        }
        if scheme != "http" && scheme != "https" {
            let warc_type = if scheme.is_empty() {
                "(no URL scheme)".to_string()
            } else {
                format!("{scheme} (arc)")
            };
            return Ok(Some(WarcItem::Other { record, warc_type }));
        }
        let skip = |reason: String| {
            WarcItem::Skipped(SkippedInput {
                path: self.path.clone(),
                location: format!("record {record}"),
                reason,
            })
        };
        let Some(capture_time) = parse_arc_date(&header.date) else {
            return Ok(Some(skip(format!(
                "Archive-date `{}` of {} is not YYYYMMDDhhmmss",
                header.date, header.url
            ))));
        };
        Ok(Some(match decode_http_block(&block) {
            Ok(http) => WarcItem::Response(ResponseRecord {
                record,
                target_uri: header.url,
                capture_time,
                status: http.status,
                body: http.body,
                payload_digest: None,
                decoded: http.decoded,
                content_type: http.content_type,
                crawl_unit: None,
                resource: false,
            }),
            Err(reason) => skip(format!("HTTP block of {}: {reason}", header.url)),
        }))
    }
}

impl Iterator for ArcFile {
    type Item = Result<WarcItem, InputError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.read_record() {
            Ok(Some(item)) => Some(Ok(item)),
            Ok(None) => {
                self.done = true;
                (self.record == 0).then(|| {
                    Err(InputError::Empty {
                        path: self.path.clone(),
                        message: "no ARC records in the file".to_string(),
                    })
                })
            }
            Err(e) => {
                self.record += 1;
                self.damaged += 1;
                let resumable = std::mem::take(&mut self.resumable);
                let resumed = if resumable { self.resync() } else { None };
                self.done = resumed.is_none();
                Some(Err(with_resumption(e, resumed, resumable, self.gzip)))
            }
        }
    }
}

/// Fields of a record header line, from the `filedesc://` version block: its second line
/// names them (`URL IP-address Archive-date Content-type Archive-length` in version 1);
/// without a readable one, the version number on the first line decides.
fn fields_of_version_block(block: &[u8]) -> usize {
    let text = String::from_utf8_lossy(block);
    let mut lines = text.lines();
    let version = lines.next().and_then(|l| l.split_whitespace().next());
    match lines.next().map(|l| l.split_whitespace().count()) {
        Some(n @ (V1_FIELDS | V2_FIELDS)) => n,
        _ if version == Some("2") => V2_FIELDS,
        _ => V1_FIELDS,
    }
}

/// An ARC `Archive-date` (`YYYYMMDDhhmmss`, UTC; shorter dates are padded with zeros, as
/// some early crawlers wrote `YYYYMMDDhhmm`) as Unix seconds.
fn parse_arc_date(date: &str) -> Option<i64> {
    if !date.bytes().all(|b| b.is_ascii_digit()) || !matches!(date.len(), 8 | 10 | 12 | 14) {
        return None;
    }
    let padded = format!("{date:0<14}");
    chrono::NaiveDateTime::parse_from_str(&padded, "%Y%m%d%H%M%S")
        .ok()
        .map(|t| t.and_utc().timestamp())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::path::Path;

    /// An ARC v1 record: header line, block, newline.
    fn record(url: &str, date: &str, content_type: &str, block: &[u8]) -> Vec<u8> {
        let mut out =
            format!("{url} 192.0.2.1 {date} {content_type} {}\n", block.len()).into_bytes();
        out.extend_from_slice(block);
        out.push(b'\n');
        out
    }

    fn filedesc() -> Vec<u8> {
        let block = b"1 0 Test Archive\nURL IP-address Archive-date Content-type Archive-length\n";
        let mut out = format!(
            "filedesc://test.arc 0.0.0.0 20070101000000 text/plain {}\n",
            block.len()
        )
        .into_bytes();
        out.extend_from_slice(block);
        out.push(b'\n');
        out
    }

    fn http(body: &str) -> Vec<u8> {
        format!("HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n{body}").into_bytes()
    }

    fn read(bytes: Vec<u8>) -> Vec<Result<WarcItem, InputError>> {
        let stream = DecodedStream::from_bytes(Path::new("t.arc"), bytes).unwrap();
        ArcFile::new(stream).collect()
    }

    #[test]
    fn v1_records_are_responses_and_urls_may_hold_spaces() {
        let bytes = [
            filedesc(),
            record(
                "http://s.org/a b.html",
                "20070102030405",
                "text/html",
                &http("<p>spaced</p>"),
            ),
            record(
                "dns:s.org",
                "20070102030405",
                "text/dns",
                b"s.org. 300 IN A 192.0.2.1",
            ),
            record(
                "http://s.org/",
                "200701020304",
                "text/html",
                &http("<p>home</p>"),
            ),
        ]
        .concat();
        let items: Vec<WarcItem> = read(bytes).into_iter().map(Result::unwrap).collect();
        assert_eq!(items.len(), 4);
        assert!(
            matches!(&items[0], WarcItem::Other { record: 1, warc_type } if warc_type == "filedesc")
        );
        let WarcItem::Response(a) = &items[1] else {
            panic!("{:?}", items[1])
        };
        assert_eq!(a.target_uri, "http://s.org/a b.html");
        assert_eq!(a.record, 2);
        assert_eq!(a.capture_time, 1_167_707_045); // 2007-01-02T03:04:05Z
        assert_eq!(a.body, b"<p>spaced</p>");
        assert_eq!(a.content_type.as_deref(), Some("text/html"));
        assert!(matches!(&items[2], WarcItem::Other { warc_type, .. } if warc_type == "dns (arc)"));
        let WarcItem::Response(home) = &items[3] else {
            panic!("{:?}", items[3])
        };
        assert_eq!(home.capture_time, 1_167_707_040); // minutes only: seconds are 0
    }

    #[test]
    fn gzip_members_and_version_2_lines_are_read() {
        let v2 = b"2 0 Test Archive\nURL IP-address Archive-date Content-type Result-code \
            Checksum Location Offset Filename Archive-length\n";
        let mut desc = format!(
            "filedesc://t.arc 0.0.0.0 20080101000000 text/plain 200 - - 0 t.arc {}\n",
            v2.len()
        )
        .into_bytes();
        desc.extend_from_slice(v2);
        desc.push(b'\n');
        let page = http("<p>two</p>");
        let mut rec = format!(
            "http://s.org/x 192.0.2.1 20080101000000 text/html 200 abc - 0 t.arc {}\n",
            page.len()
        )
        .into_bytes();
        rec.extend_from_slice(&page);
        rec.push(b'\n');
        let mut gz = Vec::new();
        for member in [desc, rec] {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), Default::default());
            e.write_all(&member).unwrap();
            gz.extend(e.finish().unwrap());
        }
        let items: Vec<WarcItem> = read(gz).into_iter().map(Result::unwrap).collect();
        let WarcItem::Response(x) = &items[1] else {
            panic!("{:?}", items[1])
        };
        assert_eq!(
            (x.target_uri.as_str(), x.body.as_slice()),
            ("http://s.org/x", &b"<p>two</p>"[..])
        );
    }

    #[test]
    fn bad_dates_are_skips_and_broken_framing_ends_the_file() {
        let bytes = [
            filedesc(),
            record(
                "http://s.org/a",
                "yesterday",
                "text/html",
                &http("<p>a</p>"),
            ),
            record(
                "http://s.org/b",
                "20070102030405",
                "text/html",
                &http("<p>b</p>"),
            ),
            b"http://s.org/c 192.0.2.1 20070102030405 text/html many\n".to_vec(),
        ]
        .concat();
        let items = read(bytes);
        assert_eq!(items.len(), 4);
        assert!(
            matches!(&items[1], Ok(WarcItem::Skipped(s)) if s.reason.contains("YYYYMMDDhhmmss"))
        );
        assert!(matches!(&items[2], Ok(WarcItem::Response(_))));
        let err = items[3].as_ref().unwrap_err().to_string();
        assert!(err.contains("t.arc") && err.contains("record 4"), "{err}");
        assert!(
            err.contains("Archive-length") && err.contains("byte"),
            "{err}"
        );
        // A file ending inside a record.
        let mut cut = [
            filedesc(),
            record(
                "http://s.org/a",
                "20070102030405",
                "text/html",
                &http("<p>a</p>"),
            ),
        ]
        .concat();
        cut.truncate(cut.len() - 5);
        let items = read(cut);
        let err = items.last().unwrap().as_ref().unwrap_err().to_string();
        assert!(
            err.contains("record 2") && err.contains("truncated"),
            "{err}"
        );
    }

    #[test]
    fn reading_resumes_after_damage_at_the_next_record_header() {
        let good = |name: &str| {
            record(
                &format!("http://s.org/{name}"),
                "20070102030405",
                "text/html",
                &http(&format!("<p>{name}</p>")),
            )
        };
        // A record whose length is short by 7 bytes (its tail reads as a bad header line) and
        // noise before the next record; later a header line with fields missing.
        let mut short = good("short");
        let text = String::from_utf8(short.clone()).unwrap();
        let (line, rest) = text.split_once('\n').unwrap();
        let (head, length) = line.rsplit_once(' ').unwrap();
        let length: usize = length.parse().unwrap();
        short = format!("{head} {}\n{rest}", length - 7).into_bytes();
        let bytes = [
            filedesc(),
            good("a"),
            short,
            b"\x00\x01 binary noise\nhttp://not a header\n".to_vec(),
            good("b"),
            b"http://s.org/nofields 20070102030405 12\n<p>lost</p>\n".to_vec(),
            good("c"),
        ]
        .concat();
        let file =
            || ArcFile::new(DecodedStream::from_bytes(Path::new("t.arc"), bytes.clone()).unwrap());
        let items: Vec<_> = file().collect();
        let pages: Vec<String> = items
            .iter()
            .filter_map(|i| match i {
                Ok(WarcItem::Response(r)) => Some(r.target_uri.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(
            pages,
            [
                "http://s.org/a",
                "http://s.org/short",
                "http://s.org/b",
                "http://s.org/c"
            ]
        );
        let errors: Vec<String> = items
            .iter()
            .filter_map(|i| i.as_ref().err().map(|e| e.to_string()))
            .collect();
        assert_eq!(errors.len(), 2, "{errors:?}");
        for e in &errors {
            assert!(
                e.contains("t.arc") && e.contains("reading resumes at the next record"),
                "{e}"
            );
        }
        let mut reader = file();
        for _ in reader.by_ref() {}
        assert_eq!(reader.records_read(), 5);
    }
}
