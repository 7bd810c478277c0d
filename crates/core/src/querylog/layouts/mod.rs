//! Parsers for each log layout, all streaming line by line into one [`QueryLog`].
//!
//! # Layouts
//!
//! * [`LogLayout::Aol`] ([`aol`]): the AOL 2006 collection files
//!   (`AnonID\tQuery\tQueryTime\tItemRank\tClickURL`, header optional). A line has 3 fields (a
//!   query without a click) or 5 (a click; `ItemRank` and `ClickURL` may be empty).
//! * [`LogLayout::AolPerUser`] ([`aol_per_user`]): a tar archive (plain or gzip) of per-user
//!   files `…/<AnonID>.txt`, each a sequence of records `query\tYYYY-MM-DD hh:mm:ss`, one or
//!   more clicked-URL lines, then an empty line. The user is the file stem.
//! * [`LogLayout::Excite`] ([`excite`]): `userid\tYYMMDDhhmmss\tquery`, exactly 3 fields. Two-digit
//!   years are read as 19YY from 70 to 99 and 20YY below 70.
//! * [`LogLayout::Plain`] ([`plain`]): one query per line, optionally `\tcount` (a positive
//!   integer after the last tab). No user and no time.
//!
//! **AltaVista** (the log paper 003 used) is not publicly available to us. Its published form is
//! one query per line, which the Plain layout reads; a tab-separated export with the query in
//! column N converts with `cut -f N log.tsv > queries.txt`, and a pre-counted one with
//! `awk -F'\t' '{print $Q "\t" $C}'` (query column Q, count column C).
//!
//! Times are the log's local times read as UTC (the logs give no time zone), in seconds since
//! the Unix epoch.
//!
//! # Repeats
//!
//! * An AOL collection line per click: consecutive lines with the same user, query and time are
//!   extra clicks of one submission and **always** collapse into it (the first click's rank and
//!   URL are kept; [`QueryLog::click_lines`] counts them all).
//! * Result-page repeats: consecutive submissions by the same user of the same query (at
//!   different times) count once by default (the first time is kept); `keep_repeats` keeps them.
//!   This applies to every layout with users (AOL, per-user AOL, Excite); the Plain layout has
//!   no users, so it never collapses.
//!
//! # Problems: skipped or fatal
//!
//! Counted skips (the line is left out, a [`SkippedInput`] naming file, tar member and line says
//! why, the rest of the log is used): a wrong number of fields, an unreadable time, a bad
//! `ItemRank` or count, a per-user URL line outside a record, a tar member not named
//! `<AnonID>.txt`. Lines that are not valid UTF-8 are not skipped: they are decoded lossily
//! (U+FFFD for each bad sequence) and counted in [`QueryLog::non_utf8_lines`]. Empty lines are
//! ignored (they separate per-user records).
//!
//! Hard errors ([`InputError`]): the file cannot be opened or read; the gzip stream is truncated
//! or corrupt (named at the line being read when it broke); a tar archive whose headers are
//! broken or that ends inside a member (named at the member); a forced layout that contradicts
//! the content (a tar read as text or text read as a tar); and [`InputError::Empty`] when the file
//! has no lines or no line yields a submission (the message quotes the first skip).
//!
//! Empty queries (Excite has many) are kept in the log, so its counts match the source; the
//! workload drops them because they have no terms.

pub mod aol;
pub mod aol_per_user;
pub mod excite;
pub mod plain;

use std::io::{self, BufRead, Read};
use std::path::{Path, PathBuf};

use super::detect::{open_log, open_stream, stream_error};
pub use super::time::{parse_excite_time, parse_iso_time};
use super::{LogLayout, QueryLog, Submission};
use crate::error::{InputError, SkippedInput};

/// Longest line read (bytes, terminator excluded). A longer line is skipped (counted and
/// reported with its file and line) without being buffered: no query is 64 KiB long, and a
/// multi-gigabyte "line" must not become one query.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// How many skipped lines are kept as examples; all of them are counted
/// ([`QueryLog::skipped_lines`]).
pub const MAX_SKIP_EXAMPLES: usize = 20;

/// Default of [`ReadOptions::max_skipped_share`]: fail when most lines are bad.
pub const DEFAULT_MAX_SKIPPED_SHARE: f64 = 0.5;

/// Options for reading a log.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// Force a layout instead of detecting it.
    pub layout: Option<LogLayout>,
    /// Keep consecutive repeats of the same query by the same user (result-page requests),
    /// which are collapsed into one submission by default.
    pub keep_repeats: bool,
    /// Share of skipped lines (of all data lines) above which reading fails: a log that is
    /// mostly unreadable is the wrong file or the wrong layout, not a workload.
    pub max_skipped_share: f64,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            layout: None,
            keep_repeats: false,
            max_skipped_share: DEFAULT_MAX_SKIPPED_SHARE,
        }
    }
}

/// Reads a log file of any supported layout, plain or gzip (see the module doc for what is
/// skipped and what is an error).
pub fn read_log(path: &Path, options: &ReadOptions) -> Result<QueryLog, InputError> {
    read_opened(path, open_log(path)?, options)
}

/// As [`read_log`], for content already open (plain or gzip, detected the same way); `path`
/// only labels messages.
pub fn read_log_from(
    path: &Path,
    reader: Box<dyn std::io::Read>,
    options: &ReadOptions,
) -> Result<QueryLog, InputError> {
    read_opened(path, open_stream(path, reader)?, options)
}

fn read_opened(
    path: &Path,
    opened: super::detect::OpenedLog,
    options: &ReadOptions,
) -> Result<QueryLog, InputError> {
    if opened.head.is_empty() {
        return Err(InputError::Empty {
            path: path.to_path_buf(),
            message: "the log is empty (0 bytes after decompression)".into(),
        });
    }
    let layout = options.layout.unwrap_or(opened.detected);
    match (layout, opened.tar) {
        (LogLayout::AolPerUser, false) => {
            return Err(InputError::malformed(
                path,
                "byte 257",
                "layout aol-per-user expects a tar archive (no `ustar` magic found)",
            ))
        }
        (l, true) if l != LogLayout::AolPerUser => {
            return Err(InputError::malformed(
                path,
                "byte 257",
                format!("this is a tar archive; layout {l:?} reads text, use aol-per-user"),
            ))
        }
        _ => {}
    }
    let mut builder = LogBuilder::new(path, layout, options.keep_repeats);
    builder.max_skipped_share = options.max_skipped_share;
    match layout {
        LogLayout::AolPerUser => aol_per_user::parse(opened.reader, &mut builder)?,
        text => {
            let mut lines =
                LineReader::new(io::BufReader::with_capacity(256 * 1024, opened.reader));
            match text {
                LogLayout::Aol => aol::parse(&mut lines, &mut builder)?,
                LogLayout::Excite => excite::parse(&mut lines, &mut builder)?,
                _ => plain::parse(&mut lines, &mut builder)?,
            }
        }
    }
    builder.finish()
}

/// Reads lines, decoding invalid UTF-8 lossily and counting it; strips `\n` and `\r\n`.
pub struct LineReader<R> {
    inner: R,
    buf: Vec<u8>,
    lossy: String,
    /// Number of the last line returned (1-based).
    pub(crate) line: u64,
    /// Lines that were not valid UTF-8.
    pub(crate) non_utf8: u64,
    /// Whether the last line returned was longer than [`MAX_LINE_BYTES`] (it is then returned
    /// empty, and its bytes were discarded as they were read).
    pub(crate) overlong: bool,
}

impl<R: BufRead> LineReader<R> {
    pub fn new(inner: R) -> Self {
        LineReader {
            inner,
            buf: Vec::with_capacity(256),
            lossy: String::new(),
            line: 0,
            non_utf8: 0,
            overlong: false,
        }
    }

    /// The underlying reader.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The next line without its terminator, or `None` at the end of input.
    ///
    /// A line longer than [`MAX_LINE_BYTES`] is read to its end without being kept: it comes
    /// back as `""` with `LineReader::overlong` set.
    pub fn next_line(&mut self) -> io::Result<Option<&str>> {
        Ok(self.read_line()?.map(|line| line.unwrap_or("")))
    }

    /// As [`LineReader::next_line`], with `Some(None)` for an overlong line.
    fn read_line(&mut self) -> io::Result<Option<Option<&str>>> {
        self.buf.clear();
        self.overlong = false;
        // The terminator (`\r\n`) may follow the longest allowed line.
        let limit = (MAX_LINE_BYTES + 2) as u64;
        if (&mut self.inner)
            .take(limit)
            .read_until(b'\n', &mut self.buf)?
            == 0
        {
            return Ok(None);
        }
        self.line += 1;
        if self.buf.last() != Some(&b'\n') && self.buf.len() as u64 >= limit {
            // Discard the rest of the line chunk by chunk.
            loop {
                let chunk = self.inner.fill_buf()?;
                if chunk.is_empty() {
                    break;
                }
                match chunk.iter().position(|&b| b == b'\n') {
                    Some(i) => {
                        self.inner.consume(i + 1);
                        break;
                    }
                    None => {
                        let n = chunk.len();
                        self.inner.consume(n);
                    }
                }
            }
            self.overlong = true;
            self.buf.clear();
            return Ok(Some(None));
        }
        let mut end = self.buf.len();
        if end > 0 && self.buf[end - 1] == b'\n' {
            end -= 1;
        }
        if end > 0 && self.buf[end - 1] == b'\r' {
            end -= 1;
        }
        let bytes = &self.buf[..end];
        match std::str::from_utf8(bytes) {
            Ok(s) => Ok(Some(Some(s))),
            Err(_) => {
                self.non_utf8 += 1;
                self.lossy = String::from_utf8_lossy(bytes).into_owned();
                Ok(Some(Some(&self.lossy)))
            }
        }
    }
}

/// Accumulates submissions, applying the repeat rules of the module doc.
pub struct LogBuilder {
    path: PathBuf,
    layout: LogLayout,
    keep_repeats: bool,
    header_lines: u64,
    /// See [`ReadOptions::max_skipped_share`].
    pub(crate) max_skipped_share: f64,
    log: QueryLog,
}

/// Where a parsed line came from, for skip messages: the tar member (if any) and the line.
pub fn location(member: Option<&str>, line: u64) -> String {
    match member {
        Some(m) => format!("member {m}: line {line}"),
        None => format!("line {line}"),
    }
}

impl LogBuilder {
    pub fn new(path: &Path, layout: LogLayout, keep_repeats: bool) -> Self {
        LogBuilder {
            path: path.to_path_buf(),
            layout,
            keep_repeats,
            header_lines: 0,
            max_skipped_share: DEFAULT_MAX_SKIPPED_SHARE,
            log: QueryLog {
                layout,
                lines: 0,
                submissions: Vec::new(),
                skipped: Vec::new(),
                skipped_lines: 0,
                click_lines: 0,
                click_ranks: Vec::new(),
                non_utf8_lines: 0,
            },
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records a skipped line with its reason (counted always, kept among the first
    /// [`MAX_SKIP_EXAMPLES`]).
    pub(crate) fn skip(&mut self, location: String, reason: String) {
        self.log.skipped_lines += 1;
        if self.log.skipped.len() >= MAX_SKIP_EXAMPLES {
            return;
        }
        self.log.skipped.push(SkippedInput {
            path: self.path.clone(),
            location,
            reason,
        });
    }

    /// Adds line counts read by a [`LineReader`] (lines, lossy lines).
    pub(crate) fn add_lines(&mut self, lines: u64, non_utf8: u64) {
        self.log.lines += lines;
        self.log.non_utf8_lines += non_utf8;
    }

    /// Marks the line just read as a header: not data, not counted in `lines`.
    pub(crate) fn uncount_header(&mut self) {
        self.header_lines += 1;
    }

    pub(crate) fn add_click_line(&mut self, rank: Option<u32>) {
        self.log.click_lines += 1;
        if let Some(r) = rank {
            self.log.click_ranks.push(r);
        }
    }

    /// Pushes one submission unless it collapses into the previous one.
    ///
    /// `extra_click` marks an AOL collection line: the same user, query and time as the
    /// previous submission is then another click of it and always collapses. Otherwise the
    /// same user and query as the previous submission is a result-page repeat, collapsed unless
    /// `keep_repeats` (never for the Plain layout, which has no users).
    /// `click` is the line's `(ItemRank, ClickURL)`, kept from the first line of a submission.
    /// Returns whether a new submission was added.
    pub fn push(
        &mut self,
        user: &str,
        time: Option<i64>,
        query: &str,
        click: (Option<u32>, Option<&str>),
        count: u64,
        extra_click: bool,
    ) -> bool {
        if self.layout != LogLayout::Plain {
            if let Some(last) = self.log.submissions.last() {
                if last.user == user && last.query == query {
                    let same_time = last.time == time;
                    if (extra_click && same_time) || !self.keep_repeats {
                        return false;
                    }
                }
            }
        }
        self.log.submissions.push(Submission {
            user: user.to_string(),
            time,
            query: query.to_string(),
            click_rank: click.0,
            click_url: click.1.map(str::to_string),
            count,
        });
        true
    }

    /// The log, or [`InputError::Empty`] when nothing usable was read.
    pub(crate) fn finish(mut self) -> Result<QueryLog, InputError> {
        self.log.lines -= self.header_lines.min(self.log.lines);
        if self.log.lines == 0 {
            return Err(InputError::Empty {
                path: self.path,
                message: "the log has no lines".into(),
            });
        }
        if self.log.submissions.is_empty() {
            let first = first_skip(&self.log);
            return Err(InputError::Empty {
                path: self.path,
                message: format!(
                    "no usable query in {} lines as layout {:?} ({} skipped{first})",
                    self.log.lines, self.layout, self.log.skipped_lines
                ),
            });
        }
        let share = self.log.skipped_lines as f64 / self.log.lines as f64;
        if share > self.max_skipped_share {
            let first = first_skip(&self.log);
            return Err(InputError::malformed(
                self.path,
                "whole file",
                format!(
                    "{} of {} lines ({:.1}%) could not be read as layout {:?}, more than \
                     --max-skipped-share {} allows{first}",
                    self.log.skipped_lines,
                    self.log.lines,
                    share * 100.0,
                    self.layout,
                    self.max_skipped_share
                ),
            ));
        }
        Ok(self.log)
    }
}

/// Reads all lines of `lines` through `each`, adding the line counts to the builder and turning
/// a read error (e.g. truncated gzip) into an error naming the next line.
pub fn for_each_line<R: BufRead>(
    lines: &mut LineReader<R>,
    builder: &mut LogBuilder,
    member: Option<&str>,
    mut each: impl FnMut(&mut LogBuilder, u64, &str),
) -> Result<(), InputError> {
    let (start_line, start_lossy) = (lines.line, lines.non_utf8);
    loop {
        let n = lines.line + 1;
        match lines.read_line() {
            Ok(Some(None)) => builder.skip(
                location(member, n),
                format!("line longer than {MAX_LINE_BYTES} bytes (not a query)"),
            ),
            Ok(Some(Some(line))) => {
                each(builder, n, line);
            }
            Ok(None) => break,
            Err(e) => {
                let loc = location(member, lines.line + 1);
                return Err(stream_error(builder.path(), loc, e));
            }
        }
    }
    builder.add_lines(lines.line - start_line, lines.non_utf8 - start_lossy);
    Ok(())
}

/// `"; first skip: LOCATION: REASON"` of a log's first kept skip, or nothing: the example
/// named by errors about a log's bad lines.
fn first_skip(log: &QueryLog) -> String {
    log.skipped
        .first()
        .map(|s| format!("; first skip: {}: {}", s.location, s.reason))
        .unwrap_or_default()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Writes `content` to a temporary file and reads it with `options`.
    pub(crate) fn read_str(
        content: &[u8],
        options: &ReadOptions,
    ) -> (Result<QueryLog, InputError>, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        std::fs::write(&path, content).unwrap();
        (read_log(&path, options), dir)
    }

    #[test]
    fn lossy_lines_are_counted() {
        let mut r = LineReader::new(&b"ok\r\nbad \xff byte\nlast"[..]);
        assert_eq!(r.next_line().unwrap(), Some("ok"));
        assert_eq!(r.next_line().unwrap(), Some("bad \u{fffd} byte"));
        assert_eq!(r.next_line().unwrap(), Some("last"));
        assert_eq!(r.next_line().unwrap(), None);
        assert_eq!((r.line, r.non_utf8), (3, 1));
    }

    #[test]
    fn overlong_lines_are_discarded_not_buffered() {
        let mut input = b"first\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', 3 * MAX_LINE_BYTES));
        input.extend_from_slice(b"\nlast\n");
        let mut r = LineReader::new(io::BufReader::with_capacity(4096, &input[..]));
        assert_eq!(r.next_line().unwrap(), Some("first"));
        assert_eq!(r.next_line().unwrap(), Some(""));
        assert!(r.overlong);
        assert!(r.buf.capacity() <= 2 * MAX_LINE_BYTES + 16);
        assert_eq!(r.next_line().unwrap(), Some("last"));
        assert!(!r.overlong);
        assert_eq!(r.line, 3);
        // Exactly the maximum, with CRLF, is still a line.
        let mut exact = vec![b'y'; MAX_LINE_BYTES];
        exact.extend_from_slice(b"\r\n");
        let mut r = LineReader::new(&exact[..]);
        assert_eq!(r.next_line().unwrap().map(str::len), Some(MAX_LINE_BYTES));
        assert!(!r.overlong);
    }

    #[test]
    fn overlong_line_is_a_skip_naming_the_line() {
        let mut input = b"emacs\n".to_vec();
        input.extend(std::iter::repeat_n(b'q', MAX_LINE_BYTES + 10));
        input.extend_from_slice(b"\nlisp\nmacro\n");
        let (r, _d) = read_str(&input, &ReadOptions::default());
        let log = r.unwrap();
        assert_eq!(log.submissions.len(), 3);
        assert_eq!(log.skipped_lines, 1);
        assert_eq!(log.skipped[0].location, "line 2");
        assert!(
            log.skipped[0].reason.contains("longer than"),
            "{:?}",
            log.skipped
        );
    }

    #[test]
    fn skips_are_counted_all_but_kept_few_and_a_mostly_bad_log_fails() {
        // Excite layout: 1 good line, then bad ones.
        let good = "u1\t970916010203\temacs\n";
        let mut text = good.repeat(10);
        text.push_str(&"no tabs here\n".repeat(9));
        let options = ReadOptions {
            layout: Some(LogLayout::Excite),
            ..ReadOptions::default()
        };
        let (r, _d) = read_str(text.as_bytes(), &options);
        let log = r.unwrap();
        assert_eq!(log.skipped_lines, 9);
        // More bad than good: refused, naming the file and the share.
        text.push_str(&"no tabs here\n".repeat(100));
        let (r, _d) = read_str(text.as_bytes(), &options);
        let msg = r.unwrap_err().to_string();
        assert!(
            msg.contains("109 of 119 lines") && msg.contains("max-skipped-share"),
            "{msg}"
        );
        assert!(msg.contains("log: whole file"), "{msg}");
        // A higher share accepts it, and keeps only the first examples.
        let lenient = ReadOptions {
            max_skipped_share: 1.0,
            ..options
        };
        let (r, _d) = read_str(text.as_bytes(), &lenient);
        let log = r.unwrap();
        assert_eq!(log.skipped_lines, 109);
        assert_eq!(log.skipped.len(), MAX_SKIP_EXAMPLES);
        assert_eq!(log.skipped[0].location, "line 11");
    }

    #[test]
    fn empty_file_is_an_error() {
        let (r, _d) = read_str(b"", &ReadOptions::default());
        assert!(matches!(r, Err(InputError::Empty { .. })));
    }

    #[test]
    fn forced_layout_must_fit_the_content() {
        let options = ReadOptions {
            layout: Some(LogLayout::AolPerUser),
            ..ReadOptions::default()
        };
        let (r, _d) = read_str(b"maytag\n", &options);
        let msg = r.unwrap_err().to_string();
        assert!(msg.contains("expects a tar archive"), "{msg}");
    }
}
