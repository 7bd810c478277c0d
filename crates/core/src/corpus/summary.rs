//! Facts about a corpus: how many pages, how they appear, disappear and change over time.
//!
//! These are the numbers a collection's README states (and the integration tests check), and
//! what `refresher ingest` prints. They are computed from the [`Corpus`] alone, so a corpus
//! from the synthetic generator is summarised the same way as one from WARC files.

use serde::Serialize;

use super::{Corpus, LiveWeb, PageState, PageTimeline};

/// Buckets of the changed-units histogram: inclusive `(low, high)` bounds.
pub const CHANGE_BUCKETS: [(u32, u32); 7] = [
    (0, 0),
    (1, 1),
    (2, 2),
    (3, 5),
    (6, 10),
    (11, 20),
    (21, u32::MAX),
];

/// Number of most-changed pages listed in a summary.
pub const TOP_CHANGED: usize = 10;

/// One bucket of the changed-units histogram.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChangeBucket {
    /// `"0"`, `"3-5"`, `"21+"`, ...
    pub label: String,
    pub(crate) low: u32,
    /// Inclusive; `None` for the open last bucket.
    pub(crate) high: Option<u32>,
    pub pages: usize,
}

/// A page with its number of changed units.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChangedPage {
    pub url: String,
    pub changed_units: u32,
}

/// Summary of a corpus. The keys `pages_total`, `pages_in_all_units`, `pages_created`,
/// `pages_deleted`, `versions` and `units` are part of the CLI's JSON contract (see
/// ARCHITECTURE.md, § Command line and JSON contract).
#[derive(Debug, Clone, Serialize)]
pub struct CorpusSummary {
    /// Pages ever captured (present or gone).
    pub pages_total: usize,
    /// Pages present at every unit.
    pub pages_in_all_units: usize,
    /// Pages first present after unit 0.
    pub pages_created: usize,
    /// Pages gone at the last unit.
    pub pages_deleted: usize,
    /// Pages both created and deleted during the period.
    pub pages_deleted_and_created: usize,
    /// Pages that were gone for some units and then present again.
    pub pages_absent_then_back: usize,
    /// Captures kept on timelines (2xx and 404/410).
    pub versions: usize,
    /// Captures with content (2xx).
    pub versions_ok: usize,
    /// Captures marking a page gone (404/410).
    pub versions_gone: usize,
    pub units: u32,
    /// Pages present at each unit.
    pub pages_per_unit: Vec<usize>,
    /// Captures (2xx and 404/410) dated in each unit.
    pub records_per_unit: Vec<usize>,
    /// Pages by number of changed units (see [`changed_units`]).
    pub changed_units_histogram: Vec<ChangeBucket>,
    /// The most often changed pages, most changes first, ties by URL.
    pub top_changed: Vec<ChangedPage>,
    /// Mean whitespace-separated words of the visible text of a page's first present version.
    pub mean_words_first_version: f64,
    /// Mean whitespace-separated words of the visible text over all 2xx versions.
    pub mean_words_per_version: f64,
    /// Structural counts over all 2xx versions.
    pub(crate) structure: StructureSummary,
}

/// Totals of the per-version structural counts (`crate::corpus::PageCounts`) over the 2xx
/// versions.
#[derive(Debug, Clone, Default, Serialize)]
pub struct StructureSummary {
    pub(crate) versions_with_images: usize,
    pub(crate) versions_with_tables: usize,
    pub(crate) versions_with_emails: usize,
    pub(crate) images: u64,
    pub(crate) tables: u64,
    pub(crate) emails: u64,
    pub(crate) html_bytes: u64,
    pub(crate) text_bytes: u64,
    /// 2xx versions by content type (`html`, `text`, `other`).
    pub(crate) html_versions: usize,
    pub(crate) text_versions: usize,
    pub(crate) other_versions: usize,
}

impl StructureSummary {
    fn add(&mut self, c: &crate::corpus::PageCounts) {
        use crate::corpus::ContentType;
        self.versions_with_images += usize::from(c.images > 0);
        self.versions_with_tables += usize::from(c.tables > 0);
        self.versions_with_emails += usize::from(c.emails > 0);
        self.images += u64::from(c.images);
        self.tables += u64::from(c.tables);
        self.emails += u64::from(c.emails);
        self.html_bytes += u64::from(c.html_bytes);
        self.text_bytes += u64::from(c.text_bytes);
        match c.content_type {
            ContentType::Html => self.html_versions += 1,
            ContentType::Text => self.text_versions += 1,
            ContentType::Other => self.other_versions += 1,
        }
    }
}

/// Units after a page's first capture at which its content differs from the unit before.
///
/// A 2xx version counts when the page was present the unit before with different content
/// (another `content_hash`). A page coming back after being gone, or being deleted, is not a
/// change of content: that is what `pages_absent_then_back` / `pages_deleted` count.
pub fn changed_units(page: &PageTimeline) -> u32 {
    let mut changes = 0;
    for pair in page.versions.windows(2) {
        let (prev, cur) = (&pair[0], &pair[1]);
        if cur.is_present() && prev.is_present() && cur.content_hash != prev.content_hash {
            changes += 1;
        }
    }
    changes
}

impl CorpusSummary {
    pub fn of(corpus: &Corpus) -> Self {
        let units = corpus.units();
        let last = units.saturating_sub(1);
        let mut s = CorpusSummary {
            pages_total: corpus.page_count(),
            pages_in_all_units: 0,
            pages_created: 0,
            pages_deleted: 0,
            pages_deleted_and_created: 0,
            pages_absent_then_back: 0,
            versions: corpus.version_count(),
            versions_ok: 0,
            versions_gone: 0,
            units,
            pages_per_unit: vec![0; units as usize],
            records_per_unit: vec![0; units as usize],
            changed_units_histogram: CHANGE_BUCKETS
                .iter()
                .map(|&(low, high)| ChangeBucket {
                    label: match (low, high) {
                        (l, h) if l == h => l.to_string(),
                        (l, u32::MAX) => format!("{l}+"),
                        (l, h) => format!("{l}-{h}"),
                    },
                    low,
                    high: (high != u32::MAX).then_some(high),
                    pages: 0,
                })
                .collect(),
            top_changed: Vec::new(),
            mean_words_first_version: 0.0,
            mean_words_per_version: 0.0,
            structure: StructureSummary::default(),
        };
        let mut changed: Vec<ChangedPage> = Vec::with_capacity(corpus.pages.len());
        let (mut first_words, mut first_pages) = (0u64, 0u64);
        let mut version_words = 0u64;
        for page in &corpus.pages {
            // Pages present at each unit, from the versions alone (a sweep, not a search per unit).
            let mut present_units = 0u32;
            for (i, v) in page.versions.iter().enumerate() {
                let end = page.versions.get(i + 1).map_or(units, |n| n.unit);
                if v.is_present() {
                    for u in v.unit..end {
                        s.pages_per_unit[u as usize] += 1;
                    }
                    present_units += end - v.unit;
                    s.versions_ok += 1;
                    version_words += super::html::whitespace_word_count(&v.text) as u64;
                    s.structure.add(&v.counts);
                } else {
                    s.versions_gone += 1;
                }
                if let Some(n) = s.records_per_unit.get_mut(v.unit as usize) {
                    *n += 1;
                }
            }
            if present_units == units {
                s.pages_in_all_units += 1;
            }
            let first_present = page.first_present();
            let created = first_present.is_some_and(|v| v.unit > 0);
            let deleted = matches!(page.at(last), PageState::Gone);
            s.pages_created += created as usize;
            s.pages_deleted += deleted as usize;
            s.pages_deleted_and_created += (created && deleted) as usize;
            let back = page
                .versions
                .windows(2)
                .any(|w| !w[0].is_present() && w[1].is_present());
            s.pages_absent_then_back += back as usize;
            if let Some(v) = first_present {
                first_words += super::html::whitespace_word_count(&v.text) as u64;
                first_pages += 1;
            }
            let n = changed_units(page);
            if let Some(b) = s
                .changed_units_histogram
                .iter_mut()
                .find(|b| n >= b.low && b.high.is_none_or(|h| n <= h))
            {
                b.pages += 1;
            }
            changed.push(ChangedPage {
                url: page.url.clone(),
                changed_units: n,
            });
        }
        changed.sort_by(|a, b| {
            b.changed_units
                .cmp(&a.changed_units)
                .then_with(|| a.url.cmp(&b.url))
        });
        changed.truncate(TOP_CHANGED);
        s.top_changed = changed;
        s.mean_words_first_version = ratio(first_words, first_pages);
        s.mean_words_per_version = ratio(version_words, s.versions_ok as u64);
        s
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

impl std::fmt::Display for CorpusSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "pages total            {}", self.pages_total)?;
        writeln!(
            f,
            "pages in all {:>3} units {}",
            self.units, self.pages_in_all_units
        )?;
        writeln!(f, "pages created          {}", self.pages_created)?;
        writeln!(
            f,
            "pages deleted          {} ({} of them also created)",
            self.pages_deleted, self.pages_deleted_and_created
        )?;
        writeln!(f, "pages gone, then back  {}", self.pages_absent_then_back)?;
        writeln!(
            f,
            "versions               {} ({} content, {} gone)",
            self.versions, self.versions_ok, self.versions_gone
        )?;
        writeln!(
            f,
            "mean words             {:.1} per page (first version), {:.1} per version",
            self.mean_words_first_version, self.mean_words_per_version
        )?;
        let st = &self.structure;
        writeln!(
            f,
            "structure              {} images, {} tables, {} e-mail addresses over all content \
             versions ({}, {} and {} versions with any); {} html, {} text, {} other",
            st.images,
            st.tables,
            st.emails,
            st.versions_with_images,
            st.versions_with_tables,
            st.versions_with_emails,
            st.html_versions,
            st.text_versions,
            st.other_versions
        )?;
        writeln!(f, "changed units per page:")?;
        for b in &self.changed_units_histogram {
            writeln!(f, "  {:>6}  {}", b.label, b.pages)?;
        }
        writeln!(f, "most changed pages:")?;
        for p in &self.top_changed {
            writeln!(f, "  {:>4}  {}", p.changed_units, p.url)?;
        }
        writeln!(f, "unit  pages  records")?;
        for (u, (pages, records)) in self
            .pages_per_unit
            .iter()
            .zip(&self.records_per_unit)
            .enumerate()
        {
            writeln!(f, "{u:>4}  {pages:>5}  {records:>7}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::{Clock, PageVersion};
    use crate::text::Vocabulary;

    fn v(unit: u32, status: u16, hash: u64, text: &str) -> PageVersion {
        PageVersion {
            unit,
            capture_time: unit as i64,
            status,
            content_hash: hash,
            title: String::new(),
            text: text.to_string(),
            links: Vec::new(),
            terms: Default::default(),
            counts: Default::default(),
        }
    }

    fn corpus(pages: Vec<(&str, Vec<PageVersion>)>, units: u32) -> Corpus {
        let pages = pages
            .into_iter()
            .map(|(url, versions)| PageTimeline::new(url, versions))
            .collect();
        let clock = Clock {
            origin: 0,
            unit_seconds: 1,
            units,
        };
        Corpus::from_parts(clock, pages, Vocabulary::new())
    }

    #[test]
    fn counts_created_deleted_and_back() {
        let c = corpus(
            vec![
                ("a", vec![v(0, 200, 1, "one two"), v(2, 200, 2, "x")]),
                (
                    "b",
                    vec![v(0, 200, 1, "w"), v(1, 404, 9, ""), v(3, 200, 1, "w")],
                ),
                ("c", vec![v(1, 200, 1, "new page here"), v(3, 404, 9, "")]),
                ("d", vec![v(0, 200, 1, "stays")]),
            ],
            4,
        );
        let s = CorpusSummary::of(&c);
        assert_eq!(s.pages_total, 4);
        assert_eq!(s.pages_in_all_units, 2);
        assert_eq!(s.pages_created, 1);
        assert_eq!(s.pages_deleted, 1);
        assert_eq!(s.pages_deleted_and_created, 1);
        assert_eq!(s.pages_absent_then_back, 1);
        assert_eq!((s.versions, s.versions_ok, s.versions_gone), (8, 6, 2));
        assert_eq!(s.pages_per_unit, vec![3, 3, 3, 3]);
        assert_eq!(s.records_per_unit, vec![3, 2, 1, 2]);
        let hist: Vec<usize> = s.changed_units_histogram.iter().map(|b| b.pages).collect();
        assert_eq!(hist, vec![3, 1, 0, 0, 0, 0, 0]);
        assert_eq!(s.top_changed[0].url, "a");
        // First versions: 2 + 1 + 3 + 1 words over 4 pages.
        assert!((s.mean_words_first_version - 1.75).abs() < 1e-9);
        let json = serde_json::to_value(&s).unwrap();
        for key in [
            "pages_total",
            "pages_in_all_units",
            "pages_created",
            "pages_deleted",
            "versions",
            "units",
        ] {
            assert!(json.get(key).is_some(), "missing {key}");
        }
        assert_eq!(json["changed_units_histogram"][6]["label"], "21+");
    }
}
