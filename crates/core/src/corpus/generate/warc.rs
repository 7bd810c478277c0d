//! A minimal WARC 1.1 writer producing the layout of the EmacsWiki snapshot files.
//!
//! Written by hand rather than with the `warc` crate's writer: the format is a few header lines,
//! and writing them directly fixes the header order and the per-record gzip member exactly as
//! `warcio` writes them (one `GzEncoder` per record, appended to the file). Digest headers are
//! left out (they are optional in WARC 1.1 and no reader of this project checks them).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use flate2::write::GzEncoder;
use flate2::Compression;
use xxhash_rust::xxh3::xxh3_128_with_seed;

use super::GenerateError;

/// Body of a gone page, byte for byte as in the EmacsWiki files.
pub(super) const GONE_BODY: &str =
    "<html><head><title>404 Not Found</title></head><body></body></html>";

/// Writes records to `<name>-NNNNN.warc.gz` files of at most `max_bytes` each.
pub(super) struct WarcSink {
    dir: PathBuf,
    name: String,
    max_bytes: u64,
    seed: u64,
    warcinfo: String,
    info_date: String,
    current: Option<(BufWriter<File>, PathBuf)>,
    current_bytes: u64,
    records_in_file: usize,
    records: u64,
    pub(crate) files: Vec<PathBuf>,
}

impl WarcSink {
    /// `warcinfo` holds the `key: value` lines (CRLF-separated) of each file's warcinfo record.
    pub fn new(
        dir: &Path,
        name: &str,
        max_bytes: u64,
        seed: u64,
        warcinfo: String,
        info_date: String,
    ) -> WarcSink {
        WarcSink {
            dir: dir.to_path_buf(),
            name: name.to_string(),
            max_bytes,
            seed,
            warcinfo,
            info_date,
            current: None,
            current_bytes: 0,
            records_in_file: 0,
            records: 0,
            files: Vec::new(),
        }
    }

    /// A `<urn:uuid:...>` derived from the seed and the record's position: deterministic, and
    /// shaped like a version-4 UUID as `warcio` writes them.
    fn record_id(&mut self, salt: &str) -> String {
        self.records += 1;
        let key = format!("{}\n{}", self.records, salt);
        let mut b = xxh3_128_with_seed(key.as_bytes(), self.seed).to_be_bytes();
        b[6] = (b[6] & 0x0f) | 0x40;
        b[8] = (b[8] & 0x3f) | 0x80;
        let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
        format!(
            "<urn:uuid:{}-{}-{}-{}-{}>",
            &h[0..8],
            &h[8..12],
            &h[12..16],
            &h[16..20],
            &h[20..32]
        )
    }

    fn open_next(&mut self) -> Result<(), GenerateError> {
        self.finish_file()?;
        let file_name = format!("{}-{:05}.warc.gz", self.name, self.files.len());
        let path = self.dir.join(&file_name);
        let file = File::create(&path).map_err(|e| GenerateError::io(&path, e))?;
        self.current = Some((BufWriter::new(file), path.clone()));
        self.files.push(path);
        self.current_bytes = 0;
        self.records_in_file = 0;
        let id = self.record_id(&file_name);
        let block = format!("{}\r\n", self.warcinfo);
        let header = format!(
            "WARC/1.1\r\nWARC-Type: warcinfo\r\nWARC-Record-ID: {id}\r\nWARC-Filename: {file_name}\r\n\
             WARC-Date: {}\r\nContent-Type: application/warc-fields\r\nContent-Length: {}\r\n\r\n",
            self.info_date,
            block.len()
        );
        let member = gzip_record(&header, block.as_bytes())?;
        self.append(&member)
    }

    fn append(&mut self, member: &[u8]) -> Result<(), GenerateError> {
        let (w, path) = self.current.as_mut().expect("a file is open");
        w.write_all(member)
            .map_err(|e| GenerateError::io(path.as_path(), e))?;
        self.current_bytes += member.len() as u64;
        self.records_in_file += 1;
        Ok(())
    }

    /// Writes a `response` record for `uri` at `date` with an HTTP `status` (200 or 404) and `body`.
    pub fn response(
        &mut self,
        date: &str,
        uri: &str,
        status: u16,
        body: &str,
    ) -> Result<(), GenerateError> {
        let reason = if status == 200 { "OK" } else { "Not Found" };
        let mut block = format!(
            "HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        block.push_str(body);
        let id = self.record_id(uri);
        let header = format!(
            "WARC/1.1\r\nWARC-Date: {date}\r\nWARC-Type: response\r\nWARC-Record-ID: {id}\r\n\
             WARC-Target-URI: {uri}\r\nContent-Type: application/http; msgtype=response\r\n\
             Content-Length: {}\r\n\r\n",
            block.len()
        );
        let member = gzip_record(&header, block.as_bytes())?;
        let full = self.current_bytes + member.len() as u64 > self.max_bytes;
        if self.current.is_none() || (full && self.records_in_file > 1) {
            self.open_next()?;
        }
        self.append(&member)
    }

    /// Flushes and closes the current file.
    pub fn finish_file(&mut self) -> Result<(), GenerateError> {
        if let Some((mut w, path)) = self.current.take() {
            w.flush().map_err(|e| GenerateError::io(&path, e))?;
        }
        Ok(())
    }
}

/// One record as its own gzip member: header, block, and the two CRLFs that end a record.
fn gzip_record(header: &str, block: &[u8]) -> Result<Vec<u8>, GenerateError> {
    let mut gz = GzEncoder::new(Vec::new(), Compression::default());
    let write = |gz: &mut GzEncoder<Vec<u8>>| -> std::io::Result<()> {
        gz.write_all(header.as_bytes())?;
        gz.write_all(block)?;
        gz.write_all(b"\r\n\r\n")
    };
    write(&mut gz).map_err(|e| GenerateError::io("<memory>", e))?;
    gz.finish().map_err(|e| GenerateError::io("<memory>", e))
}
