//! The plain layout: one query per line, optionally followed by `\tcount`.
//!
//! This is the form of the AltaVista log paper 003 used (not available to us; see the parent
//! module for converting other exports). The count is the text after the last tab and must be a
//! positive whole number; without a tab the line counts once. There are no users or times, so
//! repeats never collapse.

use std::io::BufRead;

use super::{for_each_line, location, LineReader, LogBuilder};
use crate::error::InputError;

pub fn parse<R: BufRead>(
    lines: &mut LineReader<R>,
    builder: &mut LogBuilder,
) -> Result<(), InputError> {
    for_each_line(lines, builder, None, |b, n, line| {
        if line.trim().is_empty() {
            return;
        }
        let (query, count) = match line.rsplit_once('\t') {
            None => (line, 1),
            Some((query, count)) => {
                match count.trim().parse::<u64>() {
                    Ok(c) if c > 0 => (query, c),
                    _ => {
                        b.skip(
                        location(None, n),
                        format!("bad count `{count}`: expected a positive whole number after the tab"),
                    );
                        return;
                    }
                }
            }
        };
        b.push("", None, query, (None, None), count, false);
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::read_str;
    use super::super::ReadOptions;
    use crate::querylog::LogLayout;

    #[test]
    fn counts_and_no_collapsing() {
        let (log, _d) = read_str(
            b"emacs lisp\t3\nemacs lisp\n\nmaytag\tmany\nmaytag\t0\n",
            &ReadOptions::default(),
        );
        let log = log.unwrap();
        assert_eq!(log.layout, LogLayout::Plain);
        assert_eq!(log.lines, 5);
        let s: Vec<(&str, u64)> = log
            .submissions
            .iter()
            .map(|s| (s.query.as_str(), s.count))
            .collect();
        assert_eq!(s, vec![("emacs lisp", 3), ("emacs lisp", 1)]);
        assert_eq!(log.skipped.len(), 2);
        assert_eq!(log.skipped[0].location, "line 4");
        assert_eq!(
            log.skipped[0].reason,
            "bad count `many`: expected a positive whole number after the tab"
        );
        assert_eq!(log.top_queries(1), vec![("emacs lisp".to_string(), 4)]);
    }
}
