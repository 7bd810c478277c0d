//! The change matrix of a corpus: for every page and every cycle, whether the page changed in
//! that cycle (paper 001 §5.2's input, one 0/1 string per page in the authors' `gp4c` code).
//!
//! Cycle `c` (`1 ..= units − 1`) is unit `c` of the corpus: the page changed in cycle `c` when
//! its timeline has a version at unit `c` that is not its first (a new content, or gone, or
//! back after gone — the ingest already dropped captures that repeat the previous version).
//! A page's first appearance is not a change, as in the oracle history of the simulator.

use crate::corpus::{Corpus, LiveWeb};

/// Page × cycle change indicators, with per-page prefix counts so that "changed since the
/// last visit" is one subtraction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeMatrix {
    cycles: usize,
    /// Row-major, `cycles + 1` entries per page: changes in cycles `1 ..= c` at index `c`.
    cumulative: Vec<u32>,
}

/// A line of a gp4c change file that is not a 0/1 string of the expected length.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct ChangeFileError {
    pub(crate) line: usize,
    pub(crate) reason: String,
}

impl ChangeMatrix {
    /// A matrix from rows of indicators (`rows[p][c − 1]`: page `p` changed in cycle `c`).
    /// Every row must have the same length.
    pub(crate) fn from_rows(rows: &[Vec<bool>]) -> Self {
        let cycles = rows.first().map_or(0, Vec::len);
        let mut cumulative = Vec::with_capacity(rows.len() * (cycles + 1));
        for row in rows {
            assert_eq!(
                row.len(),
                cycles,
                "rows of a change matrix differ in length"
            );
            let mut count = 0u32;
            cumulative.push(0);
            for &c in row {
                count += u32::from(c);
                cumulative.push(count);
            }
        }
        ChangeMatrix { cycles, cumulative }
    }

    /// The matrix of a corpus: cycles `1 ..= units − 1` (see the module docs).
    pub fn from_corpus(corpus: &Corpus) -> Self {
        let cycles = corpus.units().saturating_sub(1) as usize;
        let rows: Vec<Vec<bool>> = corpus
            .pages
            .iter()
            .map(|timeline| {
                let mut row = vec![false; cycles];
                for v in timeline.versions.iter().skip(1) {
                    let c = v.unit as usize;
                    if (1..=cycles).contains(&c) {
                        row[c - 1] = true;
                    }
                }
                row
            })
            .collect();
        ChangeMatrix::from_rows(&rows)
    }

    /// Reads the authors' input format: one page per line, the first whitespace-separated
    /// token a string of `0`/`1` whose character `c − 1` says whether the page changed in
    /// cycle `c`; anything after the token is ignored (the gp4c reader does the same). Every
    /// line must be as long as the first.
    pub fn parse_gp4c(text: &str) -> Result<Self, ChangeFileError> {
        let mut rows: Vec<Vec<bool>> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let Some(token) = line.split_whitespace().next() else {
                continue;
            };
            let bad = |reason: String| ChangeFileError {
                line: i + 1,
                reason,
            };
            let row = token
                .chars()
                .map(|ch| match ch {
                    '0' => Ok(false),
                    '1' => Ok(true),
                    other => Err(bad(format!(
                        "`{other}` in the change string (only 0 and 1)"
                    ))),
                })
                .collect::<Result<Vec<bool>, _>>()?;
            if let Some(first) = rows.first() {
                if first.len() != row.len() {
                    return Err(bad(format!(
                        "{} cycles, but the first line has {}",
                        row.len(),
                        first.len()
                    )));
                }
            }
            rows.push(row);
        }
        Ok(ChangeMatrix::from_rows(&rows))
    }

    pub fn pages(&self) -> usize {
        self.cumulative.len() / (self.cycles + 1)
    }

    pub fn cycles(&self) -> usize {
        self.cycles
    }

    fn row(&self, page: usize) -> &[u32] {
        let w = self.cycles + 1;
        &self.cumulative[page * w..(page + 1) * w]
    }

    /// Whether `page` changed in cycle `cycle` (`1 ..= cycles`).
    pub(crate) fn changed(&self, page: usize, cycle: usize) -> bool {
        let row = self.row(page);
        row[cycle] > row[cycle - 1]
    }

    /// Whether `page` changed in any cycle of `last_visit + 1 ..= cycle` — gp4c's
    /// `ChangedIn(last_visit, cycle)`.
    pub(crate) fn changed_since(&self, page: usize, last_visit: usize, cycle: usize) -> bool {
        let row = self.row(page);
        row[cycle] > row[last_visit]
    }

    /// Number of changes of `page` over every cycle.
    pub fn change_count(&self, page: usize) -> u32 {
        self.row(page)[self.cycles]
    }

    /// The page's line in gp4c's format.
    pub fn gp4c_line(&self, page: usize) -> String {
        (1..=self.cycles)
            .map(|c| if self.changed(page, c) { '1' } else { '0' })
            .collect()
    }

    /// The sub-matrix of `pages` (in that order) over cycles `first ..= last`, renumbered from
    /// 1 — gp4c's `trainCV`/`testCV` (page folds) and `timeSplit` (a range of days).
    pub fn select(&self, pages: &[usize], first: usize, last: usize) -> ChangeMatrix {
        assert!(first >= 1 && first <= last + 1 && last <= self.cycles);
        let rows: Vec<Vec<bool>> = pages
            .iter()
            .map(|&p| (first..=last).map(|c| self.changed(p, c)).collect())
            .collect();
        ChangeMatrix::from_rows(&rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::testutil::random_corpus;

    #[test]
    fn rows_round_trip_through_the_gp4c_format() {
        let rows = vec![
            vec![false, true, false, true],
            vec![false, false, false, false],
            vec![true, true, true, true],
        ];
        let m = ChangeMatrix::from_rows(&rows);
        assert_eq!((m.pages(), m.cycles()), (3, 4));
        let text: String = (0..3).map(|p| m.gp4c_line(p) + " extra\n").collect();
        assert_eq!(ChangeMatrix::parse_gp4c(&text).unwrap(), m);
        assert_eq!(m.gp4c_line(0), "0101");
        assert!(m.changed(0, 2) && !m.changed(0, 3));
        // Since a visit at cycle 2: the change of cycle 4 is in (2, 4], none in (2, 3].
        assert!(m.changed_since(0, 2, 4) && !m.changed_since(0, 2, 3));
        assert!(!m.changed_since(1, 0, 4));
        assert_eq!(m.change_count(2), 4);
        let sub = m.select(&[2, 0], 2, 3);
        assert_eq!(
            (sub.gp4c_line(0), sub.gp4c_line(1)),
            ("11".into(), "10".into())
        );
    }

    #[test]
    fn bad_change_files_name_the_line() {
        let err = ChangeMatrix::parse_gp4c("0101\n01x1\n").unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.to_string().contains('x'), "{err}");
        let err = ChangeMatrix::parse_gp4c("0101\n\n011\n").unwrap_err();
        assert_eq!(err.line, 3);
        assert!(err.to_string().contains("3 cycles"), "{err}");
    }

    #[test]
    fn the_corpus_matrix_counts_every_version_after_the_first() {
        let corpus = random_corpus(30, 6, 4);
        let m = ChangeMatrix::from_corpus(&corpus);
        assert_eq!(m.pages(), corpus.page_count());
        assert_eq!(m.cycles(), corpus.units() as usize - 1);
        for (p, timeline) in corpus.pages.iter().enumerate() {
            let later = timeline.versions.len().saturating_sub(1) as u32;
            assert_eq!(m.change_count(p), later, "page {p}");
            for v in timeline.versions.iter().skip(1) {
                assert!(m.changed(p, v.unit as usize));
            }
        }
    }
}
