//! The crawl's fetches as WARC 1.1 records (`request`, `response`, and `revisit` for a 304),
//! one gzip member per record, so `refresher ingest` and any WARC tool read a crawl back.
//!
//! The framing is written here (ten lines per record) rather than through the `warc` crate,
//! whose writer calls `Write::write` without checking for short writes.
//!
//! Every `response` and `revisit` record carries `WARC-Refresher-Unit: <n>`, the crawl unit it
//! was fetched in (a WARC extension header; other readers ignore it). A crawl's units may be
//! seconds long, so `refresher ingest` places the captures by it rather than by their dates
//! when every capture of a collection has one.
//!
//! [`WarcOut`] writes the records; `Warcing`, a decorator of the HTTP fetcher's transport, hands
//! it every exchange of a batch, in job order, and flushes it after each batch.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use flate2::write::GzEncoder;
use flate2::Compression;

use super::transport::{Answer, Job, Transport};
use crate::corpus::Unit;

/// The header naming a record's crawl unit (read back by
/// [`crate::corpus::warc_reader::CRAWL_UNIT_HEADER`]).
pub const UNIT_HEADER: &str = "WARC-Refresher-Unit";

/// Appends records to one `.warc.gz` file per crawl unit in a directory.
#[derive(Debug)]
pub struct WarcOut {
    dir: PathBuf,
    unit: Option<u32>,
    file: Option<BufWriter<File>>,
    sequence: u64,
}

/// What one fetch exchanged, as written to the archive.
#[derive(Debug)]
pub struct Exchange<'a> {
    pub url: &'a str,
    /// Seconds since the Unix epoch.
    pub time: i64,
    pub request_headers: &'a [(String, String)],
    pub status: u16,
    pub reason: &'a str,
    pub response_headers: &'a [(String, String)],
    /// The decoded body (the response is stored without its transfer and content codings).
    pub body: &'a [u8],
}

impl WarcOut {
    pub fn new(dir: &Path) -> io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        Ok(WarcOut {
            dir: dir.to_path_buf(),
            unit: None,
            file: None,
            sequence: 0,
        })
    }

    /// The file of `unit`: `crawl-UUUUU.warc.gz`.
    pub fn path_of(dir: &Path, unit: u32) -> PathBuf {
        dir.join(format!("crawl-{unit:05}.warc.gz"))
    }

    fn file(&mut self, unit: u32) -> io::Result<&mut BufWriter<File>> {
        if self.unit != Some(unit) || self.file.is_none() {
            self.flush()?;
            let f = OpenOptions::new()
                .create(true)
                .append(true)
                .open(Self::path_of(&self.dir, unit))?;
            self.file = Some(BufWriter::new(f));
            self.unit = Some(unit);
        }
        Ok(self.file.as_mut().expect("opened above"))
    }

    fn record_id(&mut self, time: i64) -> String {
        self.sequence += 1;
        let h =
            xxhash_rust::xxh3::xxh3_128(format!("{time}-{}-{:p}", self.sequence, self).as_bytes());
        let b = h.to_be_bytes();
        format!(
            "<urn:uuid:{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}>",
            u32::from_be_bytes([b[0], b[1], b[2], b[3]]),
            u16::from_be_bytes([b[4], b[5]]),
            u16::from_be_bytes([b[6], b[7]]) & 0x0fff,
            u16::from_be_bytes([b[8], b[9]]) & 0x0fff,
            u64::from_be_bytes([0, 0, b[10], b[11], b[12], b[13], b[14], b[15]])
        )
    }

    fn write_record(
        &mut self,
        unit: u32,
        headers: &[(&str, String)],
        block: &[u8],
    ) -> io::Result<()> {
        let mut member = GzEncoder::new(
            Vec::with_capacity(block.len() / 3 + 256),
            Compression::fast(),
        );
        member.write_all(b"WARC/1.1\r\n")?;
        for (k, v) in headers {
            member.write_all(k.as_bytes())?;
            member.write_all(b": ")?;
            member.write_all(v.replace(['\r', '\n'], " ").as_bytes())?;
            member.write_all(b"\r\n")?;
        }
        member.write_all(format!("Content-Length: {}\r\n\r\n", block.len()).as_bytes())?;
        member.write_all(block)?;
        member.write_all(b"\r\n\r\n")?;
        let bytes = member.finish()?;
        self.file(unit)?.write_all(&bytes)
    }

    /// A `request` and a `response` record (or, for a 304, a `revisit` of profile
    /// server-not-modified that refers to the held copy's date).
    pub fn exchange(
        &mut self,
        unit: u32,
        e: &Exchange<'_>,
        held_date: Option<i64>,
    ) -> io::Result<()> {
        let date = iso(e.time);
        let request_id = self.record_id(e.time);
        let mut request = format!("GET {} HTTP/1.1\r\n", path_of(e.url));
        for (k, v) in e.request_headers {
            request.push_str(&format!("{k}: {v}\r\n"));
        }
        request.push_str("\r\n");
        self.write_record(
            unit,
            &[
                ("WARC-Type", "request".into()),
                ("WARC-Record-ID", request_id.clone()),
                ("WARC-Date", date.clone()),
                ("WARC-Target-URI", e.url.to_string()),
                ("Content-Type", "application/http; msgtype=request".into()),
            ],
            request.as_bytes(),
        )?;
        let mut head = format!("HTTP/1.1 {} {}\r\n", e.status, e.reason);
        for (k, v) in e.response_headers {
            let lower = k.to_ascii_lowercase();
            // The body is stored decoded and whole.
            if lower == "content-encoding"
                || lower == "transfer-encoding"
                || lower == "content-length"
            {
                continue;
            }
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        let response_id = self.record_id(e.time);
        if e.status == 304 {
            head.push_str("\r\n");
            let mut headers = vec![
                ("WARC-Type", "revisit".to_string()),
                ("WARC-Record-ID", response_id),
                ("WARC-Date", date),
                ("WARC-Target-URI", e.url.to_string()),
                ("WARC-Concurrent-To", request_id),
                (
                    "WARC-Profile",
                    "http://netpreserve.org/warc/1.1/revisit/server-not-modified".into(),
                ),
                ("WARC-Refers-To-Target-URI", e.url.to_string()),
                ("Content-Type", "application/http; msgtype=response".into()),
            ];
            if let Some(held) = held_date {
                headers.push(("WARC-Refers-To-Date", iso(held)));
            }
            headers.push((UNIT_HEADER, unit.to_string()));
            return self.write_record(unit, &headers, head.as_bytes());
        }
        head.push_str(&format!("Content-Length: {}\r\n\r\n", e.body.len()));
        let mut block = head.into_bytes();
        block.extend_from_slice(e.body);
        self.write_record(
            unit,
            &[
                ("WARC-Type", "response".into()),
                ("WARC-Record-ID", response_id),
                ("WARC-Date", date),
                ("WARC-Target-URI", e.url.to_string()),
                ("WARC-Concurrent-To", request_id),
                ("Content-Type", "application/http; msgtype=response".into()),
                (UNIT_HEADER, unit.to_string()),
            ],
            &block,
        )
    }

    /// Flushes the open file (at each unit's commit).
    pub fn flush(&mut self) -> io::Result<()> {
        if let Some(f) = self.file.as_mut() {
            f.flush()?;
            f.get_ref().sync_data()?;
        }
        Ok(())
    }
}

/// Writes every exchange of a batch to the crawl's WARC output, if it has one (a failure is
/// warned of), and flushes the output after the batch. A `revisit` refers to the held copy's
/// capture time.
pub(super) struct Warcing<T> {
    warc: Option<WarcOut>,
    inner: T,
}

impl<T> Warcing<T> {
    pub(super) fn new(warc: Option<WarcOut>, inner: T) -> Self {
        Warcing { warc, inner }
    }

    pub(super) fn inner(&self) -> &T {
        &self.inner
    }

    /// Flushes the WARC output, if any.
    pub(super) fn flush(&mut self) -> io::Result<()> {
        match self.warc.as_mut() {
            Some(w) => w.flush(),
            None => Ok(()),
        }
    }
}

impl<T: Transport> Transport for Warcing<T> {
    fn run(&mut self, unit: Unit, jobs: &[Job]) -> Vec<Answer> {
        let answers = self.inner.run(unit, jobs);
        if let Some(warc) = self.warc.as_mut() {
            for answer in &answers {
                let held = jobs[answer.index].validator.map(|v| v.captured);
                for e in &answer.exchanges {
                    if let Err(err) = warc.exchange(
                        unit,
                        &Exchange {
                            url: &e.url,
                            time: e.time,
                            request_headers: &e.request_headers,
                            status: e.status,
                            reason: &e.reason,
                            response_headers: &e.response_headers,
                            body: &e.body,
                        },
                        held,
                    ) {
                        eprintln!("warning: writing the crawl's WARC output: {err}");
                    }
                }
            }
        }
        if let Err(e) = self.flush() {
            eprintln!("warning: flushing the crawl's WARC output: {e}");
        }
        answers
    }
}

fn path_of(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(u) => match u.query() {
            Some(q) => format!("{}?{q}", u.path()),
            None => u.path().to_string(),
        },
        Err(_) => "/".into(),
    }
}

fn iso(time: i64) -> String {
    chrono::DateTime::from_timestamp(time, 0)
        .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_else(|| "1970-01-01T00:00:00Z".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::warc_reader::{WarcFile, WarcItem};

    #[test]
    fn responses_and_revisits_carry_their_crawl_unit() {
        let dir = tempfile::tempdir().unwrap();
        let mut out = WarcOut::new(dir.path()).unwrap();
        let exchange = |status, body: &'static [u8]| Exchange {
            url: "http://s.org/a",
            time: 1_000_000 + i64::from(status),
            request_headers: &[],
            status,
            reason: "OK",
            response_headers: &[],
            body,
        };
        out.exchange(7, &exchange(200, b"<p>a</p>"), None).unwrap();
        out.exchange(7, &exchange(304, b""), Some(1_000_200))
            .unwrap();
        out.flush().unwrap();
        let items: Vec<WarcItem> = WarcFile::open(&WarcOut::path_of(dir.path(), 7))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(items.len(), 4);
        assert!(matches!(&items[0], WarcItem::Other { warc_type, .. } if warc_type == "request"));
        let WarcItem::Response(response) = &items[1] else {
            panic!("{:?}", items[1])
        };
        assert_eq!(response.crawl_unit, Some(7));
        assert_eq!(response.body, b"<p>a</p>");
        let WarcItem::Revisit(revisit) = &items[3] else {
            panic!("{:?}", items[3])
        };
        assert_eq!(revisit.crawl_unit, Some(7));
    }
}
