//! The Excite 1997 layout: `userid\tYYMMDDhhmmss\tquery`, exactly three fields.
//!
//! The query is kept exactly as typed (case, leading and trailing spaces, operators); it may be
//! empty, and such lines are kept as submissions with an empty query (see the parent module).

use std::io::BufRead;

use super::{for_each_line, location, parse_excite_time, LineReader, LogBuilder};
use crate::error::InputError;

pub fn parse<R: BufRead>(
    lines: &mut LineReader<R>,
    builder: &mut LogBuilder,
) -> Result<(), InputError> {
    for_each_line(lines, builder, None, |b, n, line| {
        if line.is_empty() {
            return;
        }
        let mut it = line.splitn(4, '\t');
        let (user, time, query, extra) = (it.next(), it.next(), it.next(), it.next());
        let (Some(user), Some(time), Some(query), None) = (user, time, query, extra) else {
            let found = line.split('\t').count();
            b.skip(
                location(None, n),
                format!(
                    "expected 3 tab-separated fields (user id, YYMMDDhhmmss, query), found {found}"
                ),
            );
            return;
        };
        let Some(t) = parse_excite_time(time.as_bytes()) else {
            b.skip(
                location(None, n),
                format!("bad time `{time}`: expected 12 digits YYMMDDhhmmss"),
            );
            return;
        };
        b.push(user, Some(t), query, (None, None), 1, false);
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::read_str;
    use super::super::ReadOptions;
    use crate::querylog::LogLayout;

    const LOG: &[u8] = b"A\t970916001949\tyahoo chat\n\
A\t970916001954\tyahoo chat\n\
A\t970916001999\tbad seconds\n\
A\t970916002000\t\n\
B\t970916002001\tyahoo chat\n\
B\t970916002002\t  Maytag \n";

    #[test]
    fn parses_and_collapses_result_page_repeats() {
        let (log, _d) = read_str(LOG, &ReadOptions::default());
        let log = log.unwrap();
        assert_eq!(log.layout, LogLayout::Excite);
        assert_eq!(log.lines, 6);
        let q: Vec<&str> = log.submissions.iter().map(|s| s.query.as_str()).collect();
        assert_eq!(q, vec!["yahoo chat", "", "yahoo chat", "  Maytag "]);
        assert_eq!(log.skipped.len(), 1);
        assert_eq!(
            log.skipped[0].to_string().rsplit_once("log: ").unwrap().1,
            "line 3: bad time `970916001999`: expected 12 digits YYMMDDhhmmss"
        );
        assert_eq!(log.users(), 2);

        let keep = ReadOptions {
            keep_repeats: true,
            ..Default::default()
        };
        let (log, _d) = read_str(LOG, &keep);
        assert_eq!(log.unwrap().submissions.len(), 5);
    }
}
