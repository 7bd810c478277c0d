//! Per-user AOL histories in a tar archive (`user_search_logs/<AnonID>.txt`).
//!
//! Each member is a sequence of records:
//!
//! ```text
//! <query>\t<YYYY-MM-DD hh:mm:ss>
//! <clicked URL>            (one or more lines)
//! <empty line>
//! ```
//!
//! The user is the member's file stem (the AnonID appears nowhere else). Every line of every
//! member counts in `lines`; URL lines count in `click_lines`, and the first URL of a record is
//! kept as its click. A record line (`text\ttime`) right after URL lines without the empty
//! separator starts a new record (tolerated, not skipped); a line outside any record that is not
//! a record line is skipped, as are the URL lines that follow it. Members that are not regular
//! files are ignored; regular files not named `*.txt` are skipped whole, with a reason.

use std::io::{BufReader, Read};

use super::{for_each_line, location, parse_iso_time, LineReader, LogBuilder};
use crate::error::InputError;

pub fn parse(reader: Box<dyn Read>, builder: &mut LogBuilder) -> Result<(), InputError> {
    let path = builder.path().to_path_buf();
    let mut archive = tar::Archive::new(reader);
    let entries = archive
        .entries()
        .map_err(|e| InputError::malformed(&path, "tar header 1", e.to_string()))?;
    let mut previous = String::from("(start of archive)");
    for (i, entry) in entries.enumerate() {
        let entry = entry.map_err(|e| {
            InputError::malformed(
                &path,
                format!("tar member {} (after {previous})", i + 1),
                format!("broken tar header: {e}"),
            )
        })?;
        let name = entry
            .path()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| format!("#{}", i + 1));
        previous = name.clone();
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let file_name = name.rsplit('/').next().unwrap_or(&name);
        let Some(user) = file_name.strip_suffix(".txt").filter(|u| !u.is_empty()) else {
            builder.skip(
                format!("member {name}"),
                "not a per-user history: expected a file named <AnonID>.txt".into(),
            );
            continue;
        };
        let user = user.to_string();
        let size = entry.size();
        let counted = Counting {
            inner: entry,
            bytes: 0,
        };
        let mut lines = LineReader::new(BufReader::with_capacity(64 * 1024, counted));
        parse_member(&mut lines, builder, &name, &user)?;
        // tar's entry reader ends quietly when the archive is cut inside a member.
        let read = lines.get_ref().get_ref().bytes;
        if read < size {
            return Err(InputError::malformed(
                &path,
                location(Some(&name), lines.line),
                format!("the archive ends inside this member ({read} of {size} bytes; truncated?)"),
            ));
        }
    }
    Ok(())
}

/// Counts the bytes read through it.
struct Counting<R> {
    inner: R,
    bytes: u64,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }
}

#[derive(PartialEq)]
enum State {
    /// Between records: the next non-empty line must be `query\ttime`.
    Between,
    /// Inside a record: URL lines until the empty separator.
    InRecord,
    /// After a bad record line: skip until the empty separator.
    Skipping,
}

fn parse_member<R: std::io::BufRead>(
    lines: &mut LineReader<R>,
    builder: &mut LogBuilder,
    member: &str,
    user: &str,
) -> Result<(), InputError> {
    let mut state = State::Between;
    // The record being read: (query, time, first URL, line).
    let mut pending: Option<(String, i64, Option<String>)> = None;
    let flush = |b: &mut LogBuilder, p: &mut Option<(String, i64, Option<String>)>| {
        if let Some((q, t, url)) = p.take() {
            b.push(user, Some(t), &q, (None, url.as_deref()), 1, false);
        }
    };
    for_each_line(lines, builder, Some(member), |b, n, line| {
        if line.is_empty() {
            flush(b, &mut pending);
            state = State::Between;
            return;
        }
        let record = line
            .rsplit_once('\t')
            .and_then(|(q, t)| parse_iso_time(t.as_bytes()).map(|t| (q, t)));
        match (&state, record) {
            (State::InRecord, None) => {
                b.add_click_line(None);
                if let Some(p) = pending.as_mut() {
                    if p.2.is_none() {
                        p.2 = Some(line.to_string());
                    }
                }
            }
            (State::Skipping, None) => {}
            (_, Some((q, t))) => {
                flush(b, &mut pending);
                pending = Some((q.to_string(), t, None));
                state = State::InRecord;
            }
            (State::Between, None) => {
                let reason = match line.rsplit_once('\t') {
                    Some((_, t)) => {
                        format!("bad record time `{t}`: expected YYYY-MM-DD hh:mm:ss")
                    }
                    None => "expected a record line `query<TAB>YYYY-MM-DD hh:mm:ss`, found a \
                             line without a tab"
                        .to_string(),
                };
                b.skip(location(Some(member), n), reason);
                state = State::Skipping;
            }
        }
    })?;
    flush(builder, &mut pending);
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::tests::read_str;
    use super::super::ReadOptions;
    use crate::querylog::LogLayout;

    /// A tar archive holding `(name, content)` members.
    pub(crate) fn tar_of(members: &[(&str, &[u8])]) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        for (name, content) in members {
            let mut h = tar::Header::new_ustar();
            h.set_size(content.len() as u64);
            h.set_mode(0o644);
            h.set_cksum();
            b.append_data(&mut h, name, *content).unwrap();
        }
        b.into_inner().unwrap()
    }

    #[test]
    fn records_users_and_clicks() {
        let data = tar_of(&[
            (
                "user_search_logs/42.txt",
                b"weather\t2006-04-02 00:36:33\nhttp://www.weather.com/\nhttp://www.nws.noaa.gov/\n\n\
weather\t2006-04-02 00:40:00\nhttp://www.weather.com/\n\n\
no tab here\nhttp://lost/\n\n\
maps\t2006-04-03 10:00:00\nhttp://maps/\n",
            ),
            ("user_search_logs/7.txt", b"ebay\t2006-03-01 00:00:00\nhttp://ebay/\n\n"),
            ("user_search_logs/README", b"not a history\n"),
        ]);
        let (log, _d) = read_str(&data, &ReadOptions::default());
        let log = log.unwrap();
        assert_eq!(log.layout, LogLayout::AolPerUser);
        assert_eq!(log.lines, 12 + 3, "README member is skipped unread");
        assert_eq!(
            log.click_lines, 5,
            "the URL of the skipped record is not a click"
        );
        let s: Vec<(&str, &str)> = log
            .submissions
            .iter()
            .map(|s| (s.user.as_str(), s.query.as_str()))
            .collect();
        assert_eq!(s, vec![("42", "weather"), ("42", "maps"), ("7", "ebay")]);
        assert_eq!(
            log.submissions[0].click_url.as_deref(),
            Some("http://www.weather.com/")
        );
        assert_eq!(log.skipped.len(), 2);
        assert_eq!(
            log.skipped[0].location,
            "member user_search_logs/42.txt: line 8"
        );
        assert_eq!(
            log.skipped[0].reason,
            "expected a record line `query<TAB>YYYY-MM-DD hh:mm:ss`, found a line without a tab"
        );
        assert_eq!(log.skipped[1].location, "member user_search_logs/README");

        let keep = ReadOptions {
            keep_repeats: true,
            ..Default::default()
        };
        let (log, _d) = read_str(&data, &keep);
        assert_eq!(log.unwrap().submissions.len(), 4);
    }
}
