//! The decompressed bytes of one archive file (WARC or ARC), for the record readers.
//!
//! Compression is told from the gzip magic bytes (`1f 8b`), never from the file name, and a
//! gzip file is read with [`MultiGzDecoder`] because writers compress every record as its own
//! member. Both record readers start from here, so a `.warc.gz` and an `.arc.gz` are opened
//! alike.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use flate2::read::MultiGzDecoder;
use indicatif::ProgressBar;

use crate::error::InputError;

/// Buffer size for file reads; large enough that gzip inflation, not syscalls, dominates.
pub(crate) const READ_BUFFER: usize = 1 << 20;

/// The decompressed bytes of one archive file, ready for a record reader.
pub(crate) struct DecodedStream {
    pub(crate) path: PathBuf,
    pub(crate) gzip: bool,
    pub(crate) reader: BufReader<Box<dyn Read + Send>>,
    /// Size of the file when it is not compressed (bounds each record's length).
    pub(crate) plain_len: Option<u64>,
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

/// The next line of `reader` (at most `max` bytes, its line end kept), with the offset it
/// starts at; `consumed` counts the bytes read. `None` at the end of the stream or when it
/// cannot be read further (a corrupt gzip stream): what a search for the next record after
/// damage reads ([`super::warc_reader`], [`super::arc_reader`]).
pub(crate) fn next_line(
    reader: &mut impl BufRead,
    consumed: &mut u64,
    max: usize,
) -> Option<(u64, Vec<u8>)> {
    let mut line = Vec::new();
    let n = reader.take(max as u64).read_until(b'\n', &mut line).ok()?;
    if n == 0 {
        return None;
    }
    let start = *consumed;
    *consumed += n as u64;
    Some((start, line))
}

/// A framing error of a damaged record, saying where reading goes on: at the next record,
/// found at byte `resumed` (of the decompressed stream of a gzip file); nowhere when the damage
/// was `resumable` but no record follows; as it was otherwise (the rest cannot be read).
pub(crate) fn with_resumption(
    error: InputError,
    resumed: Option<u64>,
    resumable: bool,
    gzip: bool,
) -> InputError {
    let InputError::Malformed {
        path,
        location,
        message,
    } = error
    else {
        return error;
    };
    let after = match resumed {
        Some(at) => format!(
            "; reading resumes at the next record, found at byte {at}{}",
            if gzip {
                " of the decompressed stream"
            } else {
                ""
            }
        ),
        None if resumable => "; no further record follows in the file".to_string(),
        None => String::new(),
    };
    InputError::Malformed {
        path,
        location,
        message: format!("{message}{after}"),
    }
}

fn empty_file(path: &Path) -> InputError {
    InputError::Empty {
        path: path.to_path_buf(),
        message: "empty file (0 bytes), expected WARC or ARC records".to_string(),
    }
}

/// The decoded stream over `raw`, gzip detected by the magic bytes `1f 8b`. A gzip file is
/// read with [`MultiGzDecoder`] because writers compress every record as its own member.
fn decode<R: BufRead + Send + 'static>(path: &Path, mut raw: R, len: u64) -> DecodedStream {
    let head = raw.fill_buf().unwrap_or(&[]);
    let gzip = head.len() >= 2 && head[0] == 0x1f && head[1] == 0x8b;
    let decoded: Box<dyn Read + Send> = if gzip {
        Box::new(MultiGzDecoder::new(raw))
    } else {
        Box::new(raw)
    };
    DecodedStream {
        path: path.to_path_buf(),
        gzip,
        reader: BufReader::with_capacity(READ_BUFFER, decoded),
        plain_len: (!gzip).then_some(len),
    }
}

impl DecodedStream {
    /// Opens `path`, advancing `bar` by the file bytes read.
    pub fn open(path: &Path, bar: Option<ProgressBar>) -> Result<Self, InputError> {
        let file = File::open(path).map_err(|e| InputError::io(path, e))?;
        let len = file.metadata().map_err(|e| InputError::io(path, e))?.len();
        if len == 0 {
            return Err(empty_file(path));
        }
        let mut raw = BufReader::with_capacity(READ_BUFFER, ProgressRead { inner: file, bar });
        raw.fill_buf().map_err(|e| InputError::io(path, e))?;
        Ok(decode(path, raw, len))
    }

    /// The stream of a file's bytes held in memory; `label` names it in messages.
    pub fn from_bytes(label: &Path, bytes: Vec<u8>) -> Result<Self, InputError> {
        if bytes.is_empty() {
            return Err(empty_file(label));
        }
        let len = bytes.len() as u64;
        Ok(decode(label, std::io::Cursor::new(bytes), len))
    }

    /// Whether the decoded bytes start like an ARC file (`filedesc://`, its version block)
    /// rather than a WARC file; `fill_buf` peeks, so the record reader starts at byte 0.
    pub fn is_arc(&mut self) -> Result<bool, InputError> {
        const ARC_MAGIC: &[u8] = b"filedesc://";
        match self.reader.fill_buf() {
            Ok(head) => Ok(head.starts_with(ARC_MAGIC)),
            Err(e) if self.gzip => Err(InputError::malformed(
                &self.path,
                "record 1",
                format!(
                    "corrupt or truncated gzip stream ({e}) at byte 0; nothing of the file \
                     can be read"
                ),
            )),
            Err(e) => Err(InputError::io(&self.path, e)),
        }
    }
}
