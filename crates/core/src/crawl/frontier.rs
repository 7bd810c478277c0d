//! The frontier of new pages (paper 004's `n_t`): URLs the crawler met in the links of copies it
//! fetched but has never crawled itself. In [`NewPages::Frontier`] mode a new page enters the
//! repository only when a policy spends one unit of the budget on it, like a refresh.
//!
//! A link from a fetched copy to a page the crawler does not know puts that page in the frontier
//! (at unit 0, the links of the initial crawl). A page the crawler fetched and found gone (a
//! link to a page not created yet, or deleted) re-enters it when a copy fetched later, with a
//! newer capture than that fetch, links to it: the crawler re-reads links only in copies that
//! changed, so a dead link is not retried at every refresh of the page that carries it.

use crate::corpus::{PageId, Unit};
use crate::text::{Analyzer, TermId, Vocabulary};

/// When new pages are crawled.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum NewPages {
    /// In the unit they appear, outside the budget (paper 003 §4 schedules refreshes of known
    /// pages only and leaves discovery to other work).
    #[default]
    OutsideBudget,
    /// Only when a policy chooses them from the frontier of linked, never-crawled pages; each
    /// first crawl costs one unit of the budget (paper 004's `z_t`).
    Frontier,
}

impl NewPages {
    pub fn as_str(self) -> &'static str {
        match self {
            NewPages::OutsideBudget => "outside-budget",
            NewPages::Frontier => "frontier",
        }
    }

    /// `outside-budget` or `frontier`.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "outside-budget" => Some(NewPages::OutsideBudget),
            "frontier" => Some(NewPages::Frontier),
            _ => None,
        }
    }
}

/// What the crawler knows of a frontier page before fetching it: where it was linked from and
/// what its URL says.
#[derive(Debug, Clone, PartialEq)]
pub struct FrontierPage {
    pub page: PageId,
    pub(crate) url: String,
    /// The unit of the fetch whose copy first linked to it (0: the initial crawl).
    pub found: Unit,
    /// Pages whose fetched copies link to it, in the order met (distinct).
    pub(crate) in_links: Vec<PageId>,
    /// The analysed terms of the URL's path (words and CamelCase parts), distinct.
    pub(crate) url_terms: Vec<TermId>,
    /// Share of the workload's query frequency with a term among [`url_terms`]: what the
    /// engine's own query log says of the URL (computed when the page entered the frontier).
    ///
    /// [`url_terms`]: FrontierPage::url_terms
    pub(crate) workload_match: f64,
}

/// The frontier and how it grew. See the module docs.
#[derive(Debug, Clone, Default)]
pub struct Frontier {
    /// By page id.
    pages: std::collections::BTreeMap<PageId, FrontierPage>,
    /// Pages that entered the frontier at each unit (index = unit).
    arrivals: Vec<usize>,
}

impl Frontier {
    pub fn len(&self) -> usize {
        self.pages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }

    pub fn get(&self, page: PageId) -> Option<&FrontierPage> {
        self.pages.get(&page)
    }

    pub fn contains(&self, page: PageId) -> bool {
        self.pages.contains_key(&page)
    }

    /// The frontier in discovery order: earliest `found` first, then page id.
    pub(crate) fn in_discovery_order(&self) -> Vec<&FrontierPage> {
        let mut all: Vec<&FrontierPage> = self.pages.values().collect();
        all.sort_by_key(|f| (f.found, f.page));
        all
    }

    /// Pages that entered the frontier at each unit (index = unit; paper 004's `nconst` and
    /// `oldnwt` are measured from it).
    pub(crate) fn arrivals(&self) -> &[usize] {
        &self.arrivals
    }

    pub(crate) fn insert(&mut self, page: FrontierPage) {
        let unit = page.found as usize;
        if self.arrivals.len() <= unit {
            self.arrivals.resize(unit + 1, 0);
        }
        self.arrivals[unit] += 1;
        self.pages.insert(page.page, page);
    }

    pub(crate) fn add_in_link(&mut self, page: PageId, from: PageId) {
        if let Some(f) = self.pages.get_mut(&page) {
            if !f.in_links.contains(&from) {
                f.in_links.push(from);
            }
        }
    }

    pub(crate) fn remove(&mut self, page: PageId) -> Option<FrontierPage> {
        self.pages.remove(&page)
    }

    /// Makes the arrival counts cover `unit` (a unit that found nothing counts 0).
    pub(crate) fn reach(&mut self, unit: Unit) {
        if self.arrivals.len() <= unit as usize {
            self.arrivals.resize(unit as usize + 1, 0);
        }
    }
}

/// The distinct analysed terms of `url`'s path that `vocabulary` knows: the path split at
/// non-alphanumerics and CamelCase boundaries (`/wiki/OrgMode` → `org`, `mode`), then analysed
/// as the index analyses text.
pub fn url_terms(url: &str, vocabulary: &Vocabulary, analyzer: &mut Analyzer) -> Vec<TermId> {
    let path = url::Url::parse(url)
        .map(|u| u.path().to_string())
        .unwrap_or_else(|_| url.to_string());
    let mut words = String::with_capacity(path.len() * 2);
    let mut prev: Option<char> = None;
    for c in path.chars() {
        if !c.is_alphanumeric() {
            words.push(' ');
        } else {
            if c.is_uppercase() && prev.is_some_and(|p| p.is_lowercase() || p.is_numeric()) {
                words.push(' ');
            }
            words.push(c);
        }
        prev = Some(c);
    }
    let mut out: Vec<TermId> = Vec::new();
    for term in analyzer.distinct_terms(&words) {
        if let Some(id) = vocabulary.get(&term) {
            if !out.contains(&id) {
                out.push(id);
            }
        }
    }
    out
}

/// Share of the query frequency of `queries` (terms, frequency) with a term among `terms`.
pub fn workload_match<'q>(
    terms: &[TermId],
    queries: impl IntoIterator<Item = (&'q [TermId], f64)>,
) -> f64 {
    let (mut hit, mut total) = (0.0, 0.0);
    for (q, f) in queries {
        total += f;
        if q.iter().any(|t| terms.contains(t)) {
            hit += f;
        }
    }
    if total > 0.0 {
        hit / total
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_terms_split_camel_case_and_stem() {
        let mut vocabulary = Vocabulary::new();
        let org = vocabulary.intern("org");
        let mode = vocabulary.intern("mode");
        let buffer = vocabulary.intern("buffer");
        let mut analyzer = Analyzer::new();
        let terms = url_terms(
            "https://www.emacswiki.org/emacs/OrgMode_Buffers",
            &vocabulary,
            &mut analyzer,
        );
        assert_eq!(terms, vec![org, mode, buffer]);
        // Host words are not the page's: only the path counts.
        assert!(url_terms("https://org.example/x", &vocabulary, &mut analyzer).is_empty());
    }

    #[test]
    fn workload_match_is_the_share_of_query_frequency_touched() {
        let queries: Vec<(Vec<TermId>, f64)> = vec![(vec![1, 2], 3.0), (vec![4], 1.0)];
        let of = |terms: &[TermId]| {
            workload_match(terms, queries.iter().map(|(q, f)| (q.as_slice(), *f)))
        };
        assert_eq!(of(&[2]), 0.75);
        assert_eq!(of(&[4, 1]), 1.0);
        assert_eq!(of(&[9]), 0.0);
    }

    #[test]
    fn frontier_orders_by_discovery_and_counts_arrivals() {
        let mut f = Frontier::default();
        let page = |page, found| FrontierPage {
            page,
            url: String::new(),
            found,
            in_links: vec![],
            url_terms: vec![],
            workload_match: 0.0,
        };
        f.insert(page(9, 0));
        f.insert(page(3, 2));
        f.insert(page(5, 0));
        f.add_in_link(3, 7);
        f.add_in_link(3, 7);
        let order: Vec<PageId> = f.in_discovery_order().iter().map(|p| p.page).collect();
        assert_eq!(order, vec![5, 9, 3]);
        assert_eq!(f.get(3).unwrap().in_links, vec![7]);
        assert_eq!(f.arrivals(), &[2, 0, 1]);
        f.reach(4);
        assert_eq!(f.arrivals().len(), 5);
        assert!(f.remove(9).is_some() && !f.contains(9));
    }
}
