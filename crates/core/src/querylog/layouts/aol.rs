//! The AOL 2006 collection layout: `AnonID\tQuery\tQueryTime[\tItemRank\tClickURL]`.
//!
//! One line per click (5 fields) or per query without a click (3 fields). The header line
//! `AnonID\tQuery\tQueryTime…`, when first, is not data and is not counted in `lines`.

use std::io::BufRead;

use super::{for_each_line, location, parse_iso_time, LineReader, LogBuilder};
use crate::error::InputError;

pub fn parse<R: BufRead>(
    lines: &mut LineReader<R>,
    builder: &mut LogBuilder,
) -> Result<(), InputError> {
    let mut header_seen = false;
    let mut data_seen = false;
    for_each_line(lines, builder, None, |b, n, line| {
        if line.is_empty() {
            return;
        }
        if !data_seen && !header_seen && line.starts_with("AnonID\t") {
            header_seen = true;
            b.uncount_header();
            return;
        }
        data_seen = true;
        parse_line(b, n, line);
    })
}

fn parse_line(b: &mut LogBuilder, n: u64, line: &str) {
    let mut fields = [""; 5];
    let mut count = 0usize;
    for f in line.split('\t') {
        if count < 5 {
            fields[count] = f;
        }
        count += 1;
    }
    if count != 3 && count != 5 {
        b.skip(
            location(None, n),
            format!(
                "expected 3 or 5 tab-separated fields (AnonID, Query, QueryTime[, ItemRank, \
                 ClickURL]), found {count}"
            ),
        );
        return;
    }
    let Some(time) = parse_iso_time(fields[2].as_bytes()) else {
        b.skip(
            location(None, n),
            format!(
                "bad QueryTime `{}`: expected YYYY-MM-DD hh:mm:ss",
                fields[2]
            ),
        );
        return;
    };
    let mut rank = None;
    let mut url = None;
    if count == 5 {
        if !fields[3].is_empty() {
            match fields[3].parse::<u32>() {
                Ok(r) => rank = Some(r),
                Err(_) => {
                    b.skip(
                        location(None, n),
                        format!("bad ItemRank `{}`: expected a whole number", fields[3]),
                    );
                    return;
                }
            }
        }
        if !fields[4].is_empty() {
            url = Some(fields[4]);
        }
    }
    if url.is_some() || rank.is_some() {
        b.add_click_line(rank);
    }
    b.push(fields[0], Some(time), fields[1], (rank, url), 1, true);
}

#[cfg(test)]
mod tests {
    use super::super::tests::read_str;
    use super::super::ReadOptions;
    use crate::querylog::LogLayout;

    const LOG: &[u8] = b"AnonID\tQuery\tQueryTime\tItemRank\tClickURL\n\
1\temacs\t2006-03-01 00:00:01\t1\thttp://a\n\
1\temacs\t2006-03-01 00:00:01\t3\thttp://b\n\
1\temacs\t2006-03-01 00:05:00\n\
1\tlisp\t2006-03-01 00:06:00\t\t\n\
2\temacs\t2006-03-01 00:07:00\t\thttp://c\n";

    #[test]
    fn extra_clicks_always_collapse_repeats_only_by_default() {
        let (log, _d) = read_str(LOG, &ReadOptions::default());
        let log = log.unwrap();
        assert_eq!(log.layout, LogLayout::Aol);
        assert_eq!(log.lines, 5);
        assert_eq!(log.click_lines, 3);
        let q: Vec<(&str, &str)> = log
            .submissions
            .iter()
            .map(|s| (s.user.as_str(), s.query.as_str()))
            .collect();
        assert_eq!(q, vec![("1", "emacs"), ("1", "lisp"), ("2", "emacs")]);
        assert_eq!(log.submissions[0].click_rank, Some(1));
        assert_eq!(log.submissions[0].click_url.as_deref(), Some("http://a"));
        assert_eq!(log.submissions[1].click_url, None);
        assert_eq!(log.submissions[0].time, Some(1_141_171_201));

        let keep = ReadOptions {
            keep_repeats: true,
            ..Default::default()
        };
        let (log, _d) = read_str(LOG, &keep);
        let log = log.unwrap();
        assert_eq!(
            log.submissions.len(),
            4,
            "the 00:05:00 re-submission is kept"
        );
        assert_eq!(log.submissions[1].time, Some(1_141_171_500));
    }

    #[test]
    fn bad_lines_are_skipped_with_their_line_number() {
        let log = b"1\tq\t2006-03-01 00:00:01\n1\tq\n2\tr\t2006-13-01 00:00:01\n3\ts\t2006-03-01 00:00:01\tx\thttp://a\n4\tt\t2006-03-01 00:00:01\t\t\n";
        // 3 of 5 lines are bad: above the default share, so allowed here.
        let lenient = ReadOptions {
            max_skipped_share: 1.0,
            ..ReadOptions::default()
        };
        let (log, _d) = read_str(log, &lenient);
        let log = log.unwrap();
        assert_eq!(log.submissions.len(), 2);
        let msgs: Vec<String> = log.skipped.iter().map(|s| s.to_string()).collect();
        assert_eq!(msgs.len(), 3);
        assert!(msgs[0].ends_with("line 2: expected 3 or 5 tab-separated fields (AnonID, Query, QueryTime[, ItemRank, ClickURL]), found 2"), "{}", msgs[0]);
        assert!(
            msgs[1].ends_with(
                "line 3: bad QueryTime `2006-13-01 00:00:01`: expected YYYY-MM-DD hh:mm:ss"
            ),
            "{}",
            msgs[1]
        );
        assert!(
            msgs[2].ends_with("line 4: bad ItemRank `x`: expected a whole number"),
            "{}",
            msgs[2]
        );
    }
}
