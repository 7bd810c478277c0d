//! The workload: normalised queries with frequencies, the single-term decomposition, and
//! paper 003's relevance filter.
//!
//! # From submissions to queries
//!
//! Each submission's text is cut by the index's own analyzer ([`Analyzer::distinct_terms`]), so a
//! workload term always meets the postings it was meant for. Submissions whose term *sets* are
//! equal (order-insensitive: `Emacs lisp` = `lisp emacs`) are one workload query; its frequency
//! `f_q` is the number of submissions (× the plain layout's count), and its display order is the
//! term order of its first submission. Submissions without terms (Excite's empty queries,
//! punctuation only) stay in the log's counts but have no place in the workload: a query with no
//! terms matches no page. The submission times of each query are kept (`times`, one per
//! submission that has a time, in log order) for replaying the workload against the server.
//!
//! # Relevance filter (paper 003, §6.1)
//!
//! Paper 003 took the AltaVista log, whose topics are much broader than its data sets, and
//! "eliminated queries for which the sum of TF-IDF scores across all pages in a data set was below
//! a certain threshold ... chosen based on observing a knee in the distribution". We do the same,
//! with the choices the paper leaves open made explicit:
//!
//! * *the data set's pages*: every page's **first present version** (the repository at the start
//!   of the simulation); pages never present are left out.
//! * *TF-IDF*: Lucene's classic similarity (the variant the paper used, its ref. \[2\]), restricted
//!   to pages containing **every** query term (the paper's result lists are conjunctive):
//!   `Σ_t sqrt(tf)·idf(t)²·(1/sqrt(len))`, `idf = 1 + ln(N/(df+1))`; Lucene's query norm and
//!   coord factor are left out (coord is 1 on conjunctive matches; the query norm would rescale
//!   each query by a different constant and defeat comparing sums across queries). See
//!   [`InvertedIndex::summed_tfidf`].
//! * *the knee*: [`knee_index`] on the log of the sorted values (maximum distance to the chord).
//!
//! Summed TF-IDF grows with the number of query terms, so the paper's filter favours long queries;
//! [`RelevanceFilter::KneeLengthNormalised`] divides by the number of terms first (see
//! ARCHITECTURE.md, § Evaluation protocol), and
//! the report gives the query-length distribution of what was kept.

use std::collections::HashMap;

use rayon::prelude::*;

use super::QueryLog;
use crate::corpus::{Corpus, PageId};
use crate::index::scorer::tfidf::lucene_idf;
use crate::text::{Analyzer, TermId};

/// Which relevance filter drops queries that do not fit the corpus.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum RelevanceFilter {
    /// Paper 003: summed TF-IDF over the corpus below the knee of the sorted distribution.
    #[default]
    Knee,
    /// The same knee on summed TF-IDF divided by the number of query terms.
    KneeLengthNormalised,
    /// Keep every query that matches at least one page.
    None,
}

#[derive(Debug, Clone)]
pub struct WorkloadOptions {
    /// Keep only the `top_n` most frequent normalised queries before filtering (None: all).
    pub top_n: Option<usize>,
    pub filter: RelevanceFilter,
}

impl Default for WorkloadOptions {
    fn default() -> Self {
        WorkloadOptions {
            top_n: None,
            filter: RelevanceFilter::Knee,
        }
    }
}

/// One normalised query of the workload.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadQuery {
    /// Distinct analyzed terms, in query order.
    pub(crate) terms: Vec<String>,
    /// Frequency f_q: submissions normalising to these terms.
    pub frequency: u64,
    /// Times of the submissions (Unix seconds, log order), for replay; empty for logs without
    /// times.
    pub(crate) times: Vec<i64>,
    /// Summed TF-IDF over the corpus (see the module doc); the filter's input.
    pub(crate) summed_tfidf: f64,
}

impl WorkloadQuery {
    /// The query's distinct analyzed terms, in query order.
    pub fn terms(&self) -> &[String] {
        &self.terms
    }
}

/// The knee the filter cut at.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Knee {
    /// Number of queries at or above the knee (the knee's 1-based rank in the sorted values).
    pub(crate) rank: usize,
    /// The filter value at the knee (summed TF-IDF, or per term when length-normalised).
    pub(crate) value: f64,
}

/// What building the workload did, for `refresher ingest` and the evaluation report.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WorkloadReport {
    /// Submissions (× count) that had at least one term.
    pub(crate) submissions_used: u64,
    /// Submissions (× count) dropped for having no term (e.g. empty queries).
    pub(crate) submissions_without_terms: u64,
    /// Distinct normalised queries before `top_n` and filtering.
    pub distinct_queries: usize,
    /// Queries left after `top_n`, the filter's input.
    pub(crate) queries_before_filter: usize,
    /// Of those, queries matching at least one page conjunctively.
    pub(crate) queries_matching: usize,
    pub filter: RelevanceFilter,
    /// The knee, when the filter uses one and there were enough distinct values to find it.
    pub(crate) knee: Option<Knee>,
}

/// The workload Q (multi-term queries) and Q' (single terms with f_t).
#[derive(Debug, Clone, Default)]
pub struct Workload {
    /// Kept queries, most frequent first (ties by sorted terms).
    pub queries: Vec<WorkloadQuery>,
    /// Single-term workload: `(term, f_t)` with `f_t = Σ f_q` over kept queries containing the
    /// term (paper 003 §5.1; see ARCHITECTURE.md, § The user-centric metric and its estimate),
    /// most frequent first (ties by term).
    pub single_terms: Vec<(String, u64)>,
    pub report: WorkloadReport,
}

/// A serialisable summary (keys relied on by `refresher ingest --json`: see
/// ARCHITECTURE.md, § Command line and JSON contract).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct WorkloadSummary {
    pub(crate) distinct_queries: usize,
    pub(crate) workload_queries: usize,
    pub(crate) workload_terms: usize,
    pub(crate) filter: RelevanceFilter,
    pub(crate) queries_before_filter: usize,
    pub(crate) queries_matching: usize,
    pub(crate) knee: Option<Knee>,
    /// Kept queries per number of terms, ascending by length.
    pub(crate) length_distribution: Vec<LengthCount>,
    /// The 20 most frequent single terms.
    pub(crate) top_terms: Vec<TermFrequency>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LengthCount {
    pub(crate) terms: usize,
    pub(crate) queries: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TermFrequency {
    pub(crate) term: String,
    pub(crate) frequency: u64,
}

/// A normalised query while it is being accumulated.
struct Group {
    key: Vec<String>,
    query: WorkloadQuery,
}

impl Workload {
    /// Builds the workload of `log` against `corpus` (see the module doc). Deterministic: the
    /// same inputs give the same queries in the same order.
    pub fn build(log: &QueryLog, corpus: &Corpus, options: &WorkloadOptions) -> Workload {
        let mut analyzer = Analyzer::new();
        let mut by_text: HashMap<&str, Option<usize>> = HashMap::new();
        let mut by_key: HashMap<Vec<String>, usize> = HashMap::new();
        let mut groups: Vec<Group> = Vec::new();
        let mut report = WorkloadReport {
            filter: options.filter,
            ..Default::default()
        };
        for s in &log.submissions {
            let slot = *by_text.entry(s.query.as_str()).or_insert_with(|| {
                let terms = analyzer.distinct_terms(&s.query);
                if terms.is_empty() {
                    return None;
                }
                let mut key = terms.clone();
                key.sort();
                Some(*by_key.entry(key.clone()).or_insert_with(|| {
                    groups.push(Group {
                        key,
                        query: WorkloadQuery {
                            terms,
                            frequency: 0,
                            times: Vec::new(),
                            summed_tfidf: 0.0,
                        },
                    });
                    groups.len() - 1
                }))
            });
            match slot {
                None => report.submissions_without_terms += s.count,
                Some(g) => {
                    report.submissions_used += s.count;
                    let q = &mut groups[g].query;
                    q.frequency += s.count;
                    if let Some(t) = s.time {
                        q.times.push(t);
                    }
                }
            }
        }
        report.distinct_queries = groups.len();
        groups.sort_by(|a, b| {
            b.query
                .frequency
                .cmp(&a.query.frequency)
                .then_with(|| a.key.cmp(&b.key))
        });
        if let Some(n) = options.top_n {
            groups.truncate(n);
        }
        report.queries_before_filter = groups.len();

        let index = InvertedIndex::first_versions(corpus);
        // Each query's sum is its own intersection: in parallel, kept in the groups' order.
        let matching: Vec<WorkloadQuery> = groups
            .into_par_iter()
            .filter_map(|g| {
                let mut q = g.query;
                q.summed_tfidf = index.summed_tfidf(corpus, &q.terms)?;
                Some(q)
            })
            .collect();
        report.queries_matching = matching.len();

        let value = |q: &WorkloadQuery| match options.filter {
            RelevanceFilter::KneeLengthNormalised => q.summed_tfidf / q.terms.len() as f64,
            _ => q.summed_tfidf,
        };
        let queries = if options.filter == RelevanceFilter::None {
            matching
        } else {
            let mut values: Vec<f64> = matching.iter().map(value).collect();
            values.sort_by(|a, b| b.total_cmp(a));
            match knee_index(&values) {
                None => matching,
                Some(k) => {
                    let cut = values[k];
                    report.knee = Some(Knee {
                        rank: values.iter().filter(|&&v| v >= cut).count(),
                        value: cut,
                    });
                    matching.into_iter().filter(|q| value(q) >= cut).collect()
                }
            }
        };

        let mut f_t: HashMap<&str, u64> = HashMap::new();
        for q in &queries {
            for t in &q.terms {
                *f_t.entry(t.as_str()).or_insert(0) += q.frequency;
            }
        }
        let mut single_terms: Vec<(String, u64)> =
            f_t.into_iter().map(|(t, f)| (t.to_string(), f)).collect();
        single_terms.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        Workload {
            queries,
            single_terms,
            report,
        }
    }

    /// The summary `refresher ingest` prints (see [`WorkloadSummary`]).
    pub fn summary(&self) -> WorkloadSummary {
        let mut lengths: std::collections::BTreeMap<usize, usize> = Default::default();
        for q in &self.queries {
            *lengths.entry(q.terms.len()).or_insert(0) += 1;
        }
        WorkloadSummary {
            distinct_queries: self.report.distinct_queries,
            workload_queries: self.queries.len(),
            workload_terms: self.single_terms.len(),
            filter: self.report.filter,
            queries_before_filter: self.report.queries_before_filter,
            queries_matching: self.report.queries_matching,
            knee: self.report.knee,
            length_distribution: lengths
                .into_iter()
                .map(|(terms, queries)| LengthCount { terms, queries })
                .collect(),
            top_terms: self
                .single_terms
                .iter()
                .take(20)
                .map(|(term, frequency)| TermFrequency {
                    term: term.clone(),
                    frequency: *frequency,
                })
                .collect(),
        }
    }
}

/// The knee of a curve of positive values sorted in descending order: the index of the point
/// farthest from the chord joining the first and last points, with x the rank scaled to [0, 1]
/// and y the natural log of the value scaled to [0, 1] (Satopää et al.'s Kneedle normalisation;
/// on a two-segment curve this is the break point).
///
/// Summed TF-IDF values span orders of magnitude, hence the log. Both bends count: a steep head
/// flattening into a long tail (knee where it flattens) and a plateau ending in a cliff (knee
/// where the cliff starts). `None` with fewer than 3 values or when all are equal (no knee: the
/// filter then keeps everything). Ties on distance go to the lowest index.
pub fn knee_index(sorted_desc: &[f64]) -> Option<usize> {
    let n = sorted_desc.len();
    if n < 3 {
        return None;
    }
    let logs: Vec<f64> = sorted_desc
        .iter()
        .map(|v| v.max(f64::MIN_POSITIVE).ln())
        .collect();
    let (hi, lo) = (logs[0], logs[n - 1]);
    if hi - lo <= f64::EPSILON * hi.abs().max(1.0) {
        return None;
    }
    // Chord from (0, 1) to (1, 0): distance ∝ |x + y − 1|.
    let mut best = (0usize, -1.0f64);
    for (i, l) in logs.iter().enumerate() {
        let x = i as f64 / (n - 1) as f64;
        let y = (l - lo) / (hi - lo);
        let d = (x + y - 1.0).abs();
        if d > best.1 {
            best = (i, d);
        }
    }
    Some(best.0)
}

/// Term id → postings `(page, tf)` over the pages' first present versions, with page lengths.
pub struct InvertedIndex {
    postings: Vec<Vec<(PageId, u32)>>,
    lengths: Vec<u32>,
    /// Pages with a present version: N in idf.
    pages: usize,
}

impl InvertedIndex {
    /// Indexes each page's first present version (see the module doc for why).
    pub fn first_versions(corpus: &Corpus) -> Self {
        // Each list allocated once at its final length: growing half a million lists by
        // doubling costs more than counting them first.
        let mut df = vec![0usize; corpus.vocabulary.len()];
        for v in corpus.pages.iter().filter_map(|t| t.first_present()) {
            for &(t, _) in &v.terms.counts {
                if let Some(n) = df.get_mut(t as usize) {
                    *n += 1;
                }
            }
        }
        let mut postings: Vec<Vec<(PageId, u32)>> =
            df.into_iter().map(Vec::with_capacity).collect();
        let mut lengths = vec![0u32; corpus.pages.len()];
        let mut pages = 0;
        for (p, timeline) in corpus.pages.iter().enumerate() {
            let Some(v) = timeline.first_present() else {
                continue;
            };
            pages += 1;
            lengths[p] = v.terms.length;
            for &(t, tf) in &v.terms.counts {
                if let Some(list) = postings.get_mut(t as usize) {
                    list.push((p as PageId, tf));
                }
            }
        }
        InvertedIndex {
            postings,
            lengths,
            pages,
        }
    }

    /// Lucene classic idf, the index's own ([`lucene_idf`]).
    fn idf(&self, df: usize) -> f64 {
        lucene_idf(df as u64, self.pages as u64)
    }

    /// Paper 003's summed TF-IDF of a query over the data set: `Σ_p Σ_t sqrt(tf(t,p)) · idf(t)² ·
    /// 1/sqrt(len(p))` over the pages `p` containing every term: the index's
    /// [`TfIdf`](crate::index::scorer::tfidf::TfIdf) score summed over pages (same idf function;
    /// each page's term sum is divided by `sqrt(len)` once, in f64, rather than scored per page
    /// in f32, so the relevance filter does not round). `None` when no page contains every term
    /// (including a term the corpus never saw).
    pub fn summed_tfidf(&self, corpus: &Corpus, terms: &[String]) -> Option<f64> {
        let mut lists: Vec<(&[(PageId, u32)], f64)> = Vec::with_capacity(terms.len());
        for t in terms {
            let id: TermId = corpus.vocabulary.get(t)?;
            let list = self.postings.get(id as usize)?;
            if list.is_empty() {
                return None;
            }
            let idf = self.idf(list.len());
            lists.push((list, idf * idf));
        }
        lists.sort_by_key(|(l, _)| l.len());
        let (rarest, rest) = lists.split_first()?;
        let mut cursors = vec![0usize; rest.len()];
        let mut total = 0.0;
        let mut matched = false;
        'pages: for &(page, tf) in rarest.0 {
            let mut sum = (tf as f64).sqrt() * rarest.1;
            for (i, (list, idf2)) in rest.iter().enumerate() {
                let from = cursors[i];
                let at = from + list[from..].partition_point(|&(p, _)| p < page);
                cursors[i] = at;
                match list.get(at) {
                    Some(&(p, tf)) if p == page => sum += (tf as f64).sqrt() * idf2,
                    _ => continue 'pages,
                }
            }
            let len = self.lengths[page as usize].max(1) as f64;
            total += sum / len.sqrt();
            matched = true;
        }
        matched.then_some(total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::{Clock, PageTimeline, PageVersion};
    use crate::querylog::{LogLayout, Submission};
    use crate::text::{TermCounts, Vocabulary};

    fn version(unit: u32, status: u16, text: &str, vocab: &mut Vocabulary) -> PageVersion {
        let terms = Analyzer::new().terms(text);
        PageVersion {
            unit,
            capture_time: unit as i64,
            status,
            content_hash: unit as u64,
            title: String::new(),
            text: text.to_string(),
            links: Vec::new(),
            terms: std::sync::Arc::new(TermCounts::from_terms(
                vocab,
                terms.iter().map(String::as_str),
            )),
            counts: Default::default(),
        }
    }

    /// Three pages: p0 "emacs lisp emacs", p1 "emacs vim", p2 gone at first, then "lisp";
    /// p0 later changes to "cobol" (ignored: first present versions only).
    fn corpus() -> Corpus {
        let mut v = Vocabulary::new();
        let p0 = vec![
            version(0, 200, "emacs lisp emacs", &mut v),
            version(1, 200, "cobol", &mut v),
        ];
        let p1 = vec![version(0, 200, "emacs vim", &mut v)];
        let p2 = vec![version(0, 404, "", &mut v), version(1, 200, "lisp", &mut v)];
        let pages = [("a", p0), ("b", p1), ("c", p2)]
            .into_iter()
            .map(|(url, versions)| PageTimeline::new(url, versions))
            .collect();
        let clock = Clock {
            origin: 0,
            unit_seconds: 1,
            units: 2,
        };
        Corpus::from_parts(clock, pages, v)
    }

    fn log(queries: &[(&str, &str, i64, u64)]) -> QueryLog {
        QueryLog {
            layout: LogLayout::Aol,
            lines: queries.len() as u64,
            submissions: queries
                .iter()
                .map(|&(user, query, time, count)| Submission {
                    user: user.to_string(),
                    time: Some(time),
                    query: query.to_string(),
                    click_rank: None,
                    click_url: None,
                    count,
                })
                .collect(),
            skipped: Vec::new(),
            skipped_lines: 0,
            click_lines: 0,
            click_ranks: Vec::new(),
            non_utf8_lines: 0,
        }
    }

    fn terms(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn summed_tfidf_on_a_hand_built_corpus() {
        let c = corpus();
        let index = InvertedIndex::first_versions(&c);
        let ln = f64::ln;
        // N = 3; df(emac) = 2, df(lisp) = 2 → idf = 1; df(vim) = 1 → idf = 1 + ln 1.5.
        let emacs = index.summed_tfidf(&c, &terms(&["emac"])).unwrap();
        let expected = 2f64.sqrt() / 3f64.sqrt() + 1.0 / 2f64.sqrt();
        assert!((emacs - expected).abs() < 1e-12, "{emacs} vs {expected}");
        let both = index.summed_tfidf(&c, &terms(&["lisp", "emac"])).unwrap();
        assert!((both - (2f64.sqrt() + 1.0) / 3f64.sqrt()).abs() < 1e-12);
        let vim = index.summed_tfidf(&c, &terms(&["vim", "emac"])).unwrap();
        let idf_vim = 1.0 + ln(1.5);
        assert!((vim - (idf_vim * idf_vim + 1.0) / 2f64.sqrt()).abs() < 1e-12);
        // lisp on p2 (first present version, length 1) and p0.
        let lisp = index.summed_tfidf(&c, &terms(&["lisp"])).unwrap();
        assert!((lisp - (1.0 / 3f64.sqrt() + 1.0)).abs() < 1e-12);
        // cobol only in a later version; fortran never seen; vim+lisp share no page.
        assert_eq!(index.summed_tfidf(&c, &terms(&["cobol"])), None);
        assert_eq!(index.summed_tfidf(&c, &terms(&["fortran"])), None);
        assert_eq!(index.summed_tfidf(&c, &terms(&["vim", "lisp"])), None);
    }

    #[test]
    fn frequencies_term_sets_and_single_terms() {
        let log = log(&[
            ("1", "Emacs Lisp", 10, 1),
            ("2", "emacs lisp", 20, 1),
            ("3", "lisp, EMACS!", 30, 2),
            ("3", "", 31, 1),
            ("4", "emacs", 40, 1),
            ("5", "vim lisp", 50, 1),
            ("6", "fortran", 60, 1),
        ]);
        let options = WorkloadOptions {
            top_n: None,
            filter: RelevanceFilter::None,
        };
        let w = Workload::build(&log, &corpus(), &options);
        assert_eq!(w.report.distinct_queries, 4);
        assert_eq!(w.report.submissions_without_terms, 1);
        assert_eq!(w.report.submissions_used, 7);
        assert_eq!(w.report.queries_matching, 2);
        assert_eq!(w.queries.len(), 2);
        assert_eq!(w.queries[0].terms, terms(&["emac", "lisp"]));
        assert_eq!(w.queries[0].frequency, 4);
        assert_eq!(w.queries[0].times, vec![10, 20, 30]);
        assert_eq!(w.queries[1].terms, terms(&["emac"]));
        assert_eq!(
            w.single_terms,
            vec![("emac".to_string(), 5), ("lisp".to_string(), 4)]
        );
        let s = w.summary();
        assert_eq!(s.workload_queries, 2);
        assert_eq!(s.workload_terms, 2);
        assert_eq!(
            s.length_distribution,
            vec![
                LengthCount {
                    terms: 1,
                    queries: 1
                },
                LengthCount {
                    terms: 2,
                    queries: 1
                }
            ]
        );
        let json = serde_json::to_value(&s).unwrap();
        for key in [
            "distinct_queries",
            "workload_queries",
            "workload_terms",
            "knee",
            "length_distribution",
            "top_terms",
        ] {
            assert!(json.get(key).is_some(), "missing {key}");
        }

        let top1 = Workload::build(
            &log,
            &corpus(),
            &WorkloadOptions {
                top_n: Some(1),
                filter: RelevanceFilter::None,
            },
        );
        assert_eq!(top1.report.queries_before_filter, 1);
        assert_eq!(top1.queries.len(), 1);
        assert_eq!(top1.queries[0].frequency, 4);
    }

    #[test]
    fn frequency_ties_are_broken_by_sorted_terms() {
        let log = log(&[
            ("1", "vim", 1, 1),
            ("2", "lisp", 2, 1),
            ("3", "emacs", 3, 1),
        ]);
        let w = Workload::build(
            &log,
            &corpus(),
            &WorkloadOptions {
                top_n: None,
                filter: RelevanceFilter::None,
            },
        );
        let order: Vec<&str> = w.queries.iter().map(|q| q.terms[0].as_str()).collect();
        assert_eq!(order, vec!["emac", "lisp", "vim"]);
    }

    #[test]
    fn knee_of_a_two_segment_curve_is_its_break() {
        // ln v falls from 10 to 2 over ranks 0..=20, then from 2 to 1 over ranks 20..=99.
        let values: Vec<f64> = (0..100)
            .map(|i| {
                let l = if i <= 20 {
                    10.0 - 8.0 * i as f64 / 20.0
                } else {
                    2.0 - (i - 20) as f64 / 79.0
                };
                l.exp()
            })
            .collect();
        assert_eq!(knee_index(&values), Some(20));
        // A plateau ending in a cliff: the knee is where the cliff starts.
        let cliff: Vec<f64> = (0..50)
            .map(|i| if i < 40 { 100.0 - i as f64 * 0.1 } else { 1e-3 })
            .collect();
        assert_eq!(knee_index(&cliff), Some(39));
        assert_eq!(knee_index(&[3.0, 3.0, 3.0]), None);
        assert_eq!(knee_index(&[3.0, 1.0]), None);
    }

    #[test]
    fn knee_filter_drops_the_tail_and_reports_the_knee() {
        let c = corpus();
        // summed TF-IDF: emac+lisp 1.39, emac 1.52, lisp 1.58, vim+emac 2.11, vim 1.40.
        let log = log(&[
            ("1", "emacs lisp", 1, 1),
            ("2", "emacs", 2, 1),
            ("3", "lisp", 3, 1),
            ("4", "vim emacs", 4, 1),
            ("5", "vim", 5, 1),
        ]);
        let w = Workload::build(&log, &c, &WorkloadOptions::default());
        let knee = w.report.knee.expect("five distinct values have a knee");
        assert_eq!(w.queries.len(), knee.rank);
        assert!(w.queries.iter().all(|q| q.summed_tfidf >= knee.value));
        assert!(w.queries.len() < 5);
        let normalised = Workload::build(
            &log,
            &c,
            &WorkloadOptions {
                top_n: None,
                filter: RelevanceFilter::KneeLengthNormalised,
            },
        );
        let k = normalised.report.knee.unwrap();
        assert!(normalised
            .queries
            .iter()
            .all(|q| q.summed_tfidf / q.terms.len() as f64 >= k.value));
    }
}
