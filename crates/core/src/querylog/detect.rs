//! Opening logs and detecting their layout, both from content rather than file names.
//!
//! * Compression: a gzip stream starts with the magic bytes `1f 8b`; it is decoded with
//!   [`MultiGzDecoder`] so that concatenated gzip members (as `cat a.gz b.gz` makes) are read
//!   whole. Anything else is read as it is.
//! * Archive: a tar archive (after decompression) carries the POSIX `ustar` magic at byte 257 of
//!   its first header; such input is the per-user AOL layout ([`LogLayout::AolPerUser`]).
//! * Text layouts are told apart by the first non-empty lines ([`detect_text_layout`]).

use std::fs::File;
use std::io::{self, BufReader, Cursor, Read};
use std::path::Path;

use flate2::read::MultiGzDecoder;

use super::LogLayout;
use crate::error::InputError;

/// Bytes read ahead to detect compression, archive and layout.
const HEAD_BYTES: u64 = 16 * 1024;
/// Non-empty lines of the head that vote on the layout.
const VOTING_LINES: usize = 20;

/// An opened log: the decompressed byte stream (head included) and what was detected.
pub struct OpenedLog {
    /// The whole decompressed content, starting at byte 0.
    pub(crate) reader: Box<dyn Read>,
    /// Whether the file was gzip-compressed.
    pub gzip: bool,
    /// Whether the (decompressed) content is a tar archive.
    pub(crate) tar: bool,
    /// The layout detected from the head (`AolPerUser` for a tar archive).
    pub(crate) detected: LogLayout,
    /// The first decompressed bytes (up to 16 KiB), kept for diagnostics.
    pub(crate) head: Vec<u8>,
}

/// Opens `path`, undoing gzip when present, and detects archive and layout from the first bytes.
///
/// Errors: the file cannot be opened or read (I/O), or it is a broken gzip stream within the
/// first 16 KiB (reported at line 1 since no line was read yet). An empty input is not an error
/// here; the reader turns it into [`InputError::Empty`].
pub fn open_log(path: &Path) -> Result<OpenedLog, InputError> {
    let file = File::open(path).map_err(|e| InputError::io(path, e))?;
    open_stream(path, Box::new(BufReader::with_capacity(256 * 1024, file)))
}

/// As [`open_log`], for bytes already open (`path` only labels messages): in-memory buffers,
/// benchmarks, standard input.
pub fn open_stream(path: &Path, raw: Box<dyn Read>) -> Result<OpenedLog, InputError> {
    let mut raw = raw;
    let mut magic = Vec::with_capacity(2);
    (&mut raw)
        .take(2)
        .read_to_end(&mut magic)
        .map_err(|e| InputError::io(path, e))?;
    let gzip = magic == [0x1f, 0x8b];
    let raw = Cursor::new(magic).chain(raw);
    let mut stream: Box<dyn Read> = if gzip {
        Box::new(BufReader::with_capacity(
            256 * 1024,
            MultiGzDecoder::new(raw),
        ))
    } else {
        Box::new(raw)
    };
    let mut head = Vec::new();
    (&mut stream)
        .take(HEAD_BYTES)
        .read_to_end(&mut head)
        .map_err(|e| stream_error(path, "line 1", e))?;
    let tar = is_tar(&head);
    let detected = if tar {
        LogLayout::AolPerUser
    } else {
        detect_text_layout(&head)
    };
    let reader: Box<dyn Read> = Box::new(Cursor::new(head.clone()).chain(stream));
    Ok(OpenedLog {
        reader,
        gzip,
        tar,
        detected,
        head,
    })
}

/// Turns a read error in the middle of a stream into an error naming where it happened
/// (`location`: the line being read, or the tar member and line).
///
/// A truncated or corrupt gzip stream surfaces here (flate2 reports `UnexpectedEof` or
/// `InvalidInput`); the message says so, since "unexpected end of file" alone would not tell the
/// user that the compressed file is cut short.
pub fn stream_error(path: &Path, location: impl Into<String>, e: io::Error) -> InputError {
    let what = match e.kind() {
        io::ErrorKind::UnexpectedEof => "input ends early (truncated gzip stream?)".to_string(),
        io::ErrorKind::InvalidInput | io::ErrorKind::InvalidData => {
            format!("corrupt compressed data: {e}")
        }
        _ => return InputError::io(path, e),
    };
    InputError::malformed(path, location, what)
}

/// Whether `head` starts with a tar header (`ustar` magic at offset 257, POSIX and GNU).
pub fn is_tar(head: &[u8]) -> bool {
    head.len() >= 262 && &head[257..262] == b"ustar"
}

/// Detects a text layout from the first non-empty lines of `head`.
///
/// Each of the first 20 complete non-empty lines votes: the AOL header (`AnonID\tQuery...`) or a
/// line of 3 or 5 tab-separated fields whose third is `YYYY-MM-DD hh:mm:ss` votes AOL; a line of
/// exactly 3 fields whose second is 12 digits votes Excite; anything else votes Plain. The layout
/// with the most votes wins, AOL before Excite before Plain on ties, so that one malformed first
/// line does not send a whole log to the wrong parser.
pub fn detect_text_layout(head: &[u8]) -> LogLayout {
    let text = String::from_utf8_lossy(head);
    let mut lines: Vec<&str> = text.split('\n').collect();
    if lines.len() > 1 && head.len() as u64 >= HEAD_BYTES {
        lines.pop(); // possibly cut by the head limit
    }
    let (mut aol, mut excite, mut plain) = (0usize, 0usize, 0usize);
    for line in lines
        .iter()
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .filter(|l| !l.trim().is_empty())
        .take(VOTING_LINES)
    {
        match classify_line(line) {
            LogLayout::Aol => aol += 1,
            LogLayout::Excite => excite += 1,
            _ => plain += 1,
        }
    }
    if aol > 0 && aol >= excite && aol >= plain {
        LogLayout::Aol
    } else if excite > 0 && excite >= plain {
        LogLayout::Excite
    } else {
        LogLayout::Plain
    }
}

fn classify_line(line: &str) -> LogLayout {
    if line.starts_with("AnonID\tQuery") {
        return LogLayout::Aol;
    }
    let fields: Vec<&str> = line.split('\t').collect();
    if (fields.len() == 3 || fields.len() == 5)
        && super::time::parse_iso_time(fields[2].as_bytes()).is_some()
    {
        return LogLayout::Aol;
    }
    if fields.len() == 3 && super::time::parse_excite_time(fields[1].as_bytes()).is_some() {
        return LogLayout::Excite;
    }
    LogLayout::Plain
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_each_text_layout() {
        let aol = b"AnonID\tQuery\tQueryTime\tItemRank\tClickURL\n1\tq\t2006-03-01 00:00:01\t\t\n";
        assert_eq!(detect_text_layout(aol), LogLayout::Aol);
        let aol_no_header =
            b"\n1\tq\t2006-03-01 00:00:01\n2\tr\t2006-03-01 00:00:02\t1\thttp://a\n";
        assert_eq!(detect_text_layout(aol_no_header), LogLayout::Aol);
        let excite = b"ABC\t970916105432\tmaytag\nABC\t970916105433\t\n";
        assert_eq!(detect_text_layout(excite), LogLayout::Excite);
        let plain = b"emacs lisp\t3\nmaytag\n";
        assert_eq!(detect_text_layout(plain), LogLayout::Plain);
    }

    #[test]
    fn one_bad_first_line_does_not_decide() {
        let excite = b"garbage line\nA\t970916105432\tq\nB\t970916105433\tr\n";
        assert_eq!(detect_text_layout(excite), LogLayout::Excite);
    }

    #[test]
    fn tar_magic_at_257() {
        let mut head = vec![0u8; 512];
        assert!(!is_tar(&head));
        head[257..262].copy_from_slice(b"ustar");
        assert!(is_tar(&head));
    }

    #[test]
    fn opens_gzip_by_content() {
        use flate2::write::GzEncoder;
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.txt"); // no .gz suffix on purpose
        let mut enc = GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(b"A\t970916105432\tq\n").unwrap();
        std::fs::write(&path, enc.finish().unwrap()).unwrap();
        let mut opened = open_log(&path).unwrap();
        assert!(opened.gzip && !opened.tar);
        assert_eq!(opened.detected, LogLayout::Excite);
        let mut all = String::new();
        opened.reader.read_to_string(&mut all).unwrap();
        assert_eq!(all, "A\t970916105432\tq\n");
    }
}
