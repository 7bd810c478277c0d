//! The synthetic site: topics, pages, links, and their week-by-week evolution.
//!
//! The model follows what the EmacsWiki snapshots show about a real site (the generated site's
//! figures are in `corpora/README.md`): most pages never change, a few change nearly
//! every week, and the frequent changers are often pages whose changes users do not care about.
//! Each change has a kind, because the refresh policies differ precisely in how they weigh
//! kinds: a staleness policy counts any change, a user-centric one only changes in terms users
//! search for (paper 003). So ad churn (big, frequent, never searched) must coexist with
//! topical edits (what queries hit) and typo fixes (tiny).

use std::collections::{BTreeSet, HashSet};

use rand::distributions::{Distribution, WeightedIndex};
use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::LogNormal;

use super::layout::{Layout, ON_TOPIC};
use super::words::{zipf, Lexicon};

/// With several sites, the share of link targets drawn from the linking page's own site (sites
/// link mostly within themselves).
const SAME_SITE_LINKS: f64 = 0.85;

/// One item of a paragraph.
#[derive(Debug, Clone)]
pub(super) enum Token {
    /// A site word (index into [`Lexicon::site`]).
    Word(u32),
    /// A literal word that is in no list (a typo).
    Raw(String),
    /// A link to another page; `form` picks absolute (0), root-relative (1) or relative (2) href.
    Link { target: u32, form: u8 },
    /// End of a sentence.
    Stop,
}

/// How often a page changes: a heavy-tailed mix of classes (weekly change probability).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RateClass {
    Static,
    Rare,
    Occasional,
    Frequent,
    Hot,
}

impl RateClass {
    /// Share of pages, weekly change probability, chance of an ad block, share of ad churn
    /// among changes of a page with an ad block.
    fn params(self) -> (f64, f64, f64, f64) {
        match self {
            RateClass::Static => (0.74, 0.0, 0.15, 0.3),
            RateClass::Rare => (0.12, 0.02, 0.2, 0.3),
            RateClass::Occasional => (0.09, 0.12, 0.4, 0.5),
            RateClass::Frequent => (0.04, 0.45, 0.7, 0.6),
            RateClass::Hot => (0.01, 0.9, 0.85, 0.75),
        }
    }

    const ALL: [RateClass; 5] = [
        RateClass::Static,
        RateClass::Rare,
        RateClass::Occasional,
        RateClass::Frequent,
        RateClass::Hot,
    ];
}

/// What a weekly change event did to a page. (Link additions announcing a new page are a
/// fourth kind, made by [`SiteModel::add_link_to`].)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ChangeKind {
    /// The ad/boilerplate block was replaced by new ad words.
    AdChurn,
    /// A topical paragraph was added, replaced or removed.
    TopicalEdit,
    /// One word was misspelt (a typo-level edit).
    Typo,
}

pub(super) struct Page {
    pub(crate) name: String,
    pub(crate) title: String,
    pub(crate) topic: usize,
    pub(crate) keywords: Vec<u32>,
    pub(crate) class: RateClass,
    /// Weekly change probability (the class's, jittered per page).
    pub(crate) rate: f64,
    pub(crate) ad_share: f64,
    pub(crate) paragraphs: Vec<Vec<Token>>,
    pub(crate) ad_block: Option<Vec<u32>>,
    pub(crate) present: bool,
    /// Topical words (keywords and topic words) that were ever on the page: query material.
    pub(crate) query_terms: Vec<u32>,
    /// Week of the page's first record.
    pub(crate) created: u32,
    /// Directory in [`SiteModel::layout`] (0 on a one-site layout).
    pub(crate) dir: u32,
    /// Images, a table and a contact address (multi-site layouts only, so the one-site
    /// default keeps its exact bytes).
    pub(crate) markup: Option<Markup>,
}

/// The non-text parts of a multi-site page, so that its structural counts vary.
#[derive(Debug, Clone)]
pub(super) struct Markup {
    pub(crate) images: u32,
    /// Table rows of site words.
    pub(crate) table: Option<Vec<Vec<u32>>>,
    /// An e-mail address shown as a `mailto:` link.
    pub(crate) contact: Option<String>,
}

/// Everything the page content is drawn from.
pub(super) struct SiteModel {
    pub(crate) lexicon: Lexicon,
    pub(crate) host: String,
    background: WeightedIndex<f64>,
    /// Per topic: its words in topic-rank order, and the same sorted (for membership tests).
    pub(crate) topic_words: Vec<Vec<u32>>,
    topic_sorted: Vec<Vec<u32>>,
    topic_zipf: WeightedIndex<f64>,
    topic_pick: WeightedIndex<f64>,
    ad_zipf: WeightedIndex<f64>,
    pub(crate) pages: Vec<Page>,
    /// Preferential attachment urn: a page appears three times plus once per in-link it received.
    urn: Vec<u32>,
    pub(crate) in_links: Vec<u32>,
    names: HashSet<String>,
    /// Hosts and directory trees of a multi-site collection; `None`: one site, `/wiki/<Name>`.
    pub(crate) layout: Option<Layout>,
    /// Per site: its preferential-attachment urn and its pages (multi-site layouts only).
    site_urn: Vec<Vec<u32>>,
    site_pages: Vec<Vec<u32>>,
}

const TOPIC_SIZE: usize = 150;

impl SiteModel {
    /// A model of one site at `host` (`sites` = 1) or of `sites` sites with directory trees.
    pub fn new(
        rng: &mut ChaCha8Rng,
        lexicon: Lexicon,
        topics: usize,
        host: &str,
        sites: usize,
    ) -> SiteModel {
        let n = lexicon.site.len();
        // Topical words come from below the function words and the commonest general words, so
        // they identify a topic rather than being everywhere.
        let lo = lexicon.n_function + 50;
        let topic_words: Vec<Vec<u32>> = (0..topics)
            .map(|_| {
                rand::seq::index::sample(rng, n - lo, TOPIC_SIZE.min(n - lo))
                    .into_iter()
                    .map(|i| (i + lo) as u32)
                    .collect()
            })
            .collect();
        let topic_sorted = topic_words
            .iter()
            .map(|w| {
                let mut s = w.clone();
                s.sort_unstable();
                s
            })
            .collect();
        let topic_pick = zipf(topics, 0.7);
        let layout = (sites > 1).then(|| Layout::new(rng, sites, &lexicon, &topic_pick));
        SiteModel {
            background: zipf(n, 1.0),
            topic_zipf: zipf(TOPIC_SIZE, 1.0),
            topic_pick,
            ad_zipf: zipf(lexicon.ad.len(), 0.8),
            lexicon,
            host: host.to_string(),
            topic_words,
            topic_sorted,
            pages: Vec::new(),
            urn: Vec::new(),
            in_links: Vec::new(),
            names: HashSet::new(),
            site_urn: vec![Vec::new(); sites.max(1)],
            site_pages: vec![Vec::new(); sites.max(1)],
            layout,
        }
    }

    pub fn url(&self, page: u32) -> String {
        let p = &self.pages[page as usize];
        match &self.layout {
            Some(layout) => format!("{}{}", layout.prefix(p.dir), p.name),
            None => format!("https://{}/wiki/{}", self.host, p.name),
        }
    }

    /// The site (host index) of a page; 0 on a one-site layout.
    pub fn site_of(&self, page: u32) -> u32 {
        match &self.layout {
            Some(layout) => layout.site_of(self.pages[page as usize].dir),
            None => 0,
        }
    }

    /// Number of directories and sites (1 and 1 on a one-site layout).
    pub(crate) fn group_counts(&self) -> (usize, usize) {
        match &self.layout {
            Some(layout) => (layout.dirs.len(), layout.hosts.len()),
            None => (1, 1),
        }
    }

    /// Distinct pages `page` links to now, sorted, without itself.
    pub(crate) fn out_links(&self, page: u32) -> Vec<u32> {
        let mut out: Vec<u32> = self.pages[page as usize]
            .paragraphs
            .iter()
            .flatten()
            .filter_map(|t| match t {
                Token::Link { target, .. } if *target != page => Some(*target),
                _ => None,
            })
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Records a new link to `target` for preferential attachment.
    fn attach(&mut self, target: u32) {
        self.in_links[target as usize] += 1;
        self.urn.push(target);
        if self.layout.is_some() {
            let site = self.site_of(target) as usize;
            self.site_urn[site].push(target);
        }
    }

    fn is_topical(&self, page: &Page, w: u32) -> bool {
        page.keywords.contains(&w) || self.topic_sorted[page.topic].binary_search(&w).is_ok()
    }

    /// Creates a page (metadata, content, out-links) at `week`, with a rate class drawn from the
    /// class shares unless one is forced.
    pub(crate) fn add_page(
        &mut self,
        rng: &mut ChaCha8Rng,
        week: u32,
        class: Option<RateClass>,
    ) -> u32 {
        let id = self.pages.len() as u32;
        let dir = self.layout.as_ref().map_or(0, |l| l.place(rng));
        let topic = match &self.layout {
            Some(l) if rng.gen::<f64>() < ON_TOPIC => l.dirs[dir as usize].topic,
            _ => self.topic_pick.sample(rng),
        };
        let words = &self.topic_words[topic];
        // Keywords: mid-ranked topic words, the page's own identifying terms.
        let keywords: Vec<u32> = (0..2)
            .map(|_| words[rng.gen_range(3..TOPIC_SIZE.min(words.len()))])
            .collect();
        let head = words[rng.gen_range(0..3.min(words.len()))];
        let title_words: Vec<u32> = match rng.gen_range(0..10) {
            0..=1 => vec![keywords[0]],
            2..=6 => vec![keywords[0], keywords[1]],
            _ => vec![head, keywords[0], keywords[1]],
        };
        let titled: Vec<String> = title_words
            .iter()
            .map(|&w| capitalise(&self.lexicon.site[w as usize]))
            .collect();
        let title = titled.join(" ");
        let base = titled.concat();
        let mut name = base.clone();
        let mut k = 2;
        while !self.names.insert(name.clone()) {
            name = format!("{base}{k}");
            k += 1;
        }
        let class = class.unwrap_or_else(|| {
            let shares = WeightedIndex::new(RateClass::ALL.iter().map(|c| c.params().0))
                .expect("positive shares");
            RateClass::ALL[shares.sample(rng)]
        });
        let (_, p, ad_p, ad_share) = class.params();
        let jitter: f64 = LogNormal::new(0.0, 0.3).expect("valid").sample(rng);
        let rate = (p * jitter).min(0.98);
        let mut page = Page {
            name,
            title,
            topic,
            keywords,
            class,
            rate,
            ad_share,
            paragraphs: Vec::new(),
            ad_block: None,
            present: true,
            query_terms: Vec::new(),
            created: week,
            dir,
            markup: None,
        };
        // Page length: log-normal words, median ~150, heavy tail (EmacsWiki: median 156, mean 473).
        let len: f64 = LogNormal::new(150f64.ln(), 1.1).expect("valid").sample(rng);
        let mut remaining = (len as usize).clamp(20, 4000);
        while remaining > 0 {
            let n = rng.gen_range(15..70).min(remaining);
            remaining -= n;
            let para = self.paragraph(rng, &page, n);
            page.paragraphs.push(para);
        }
        if rng.gen::<f64>() < ad_p {
            page.ad_block = Some(self.ad_words(rng));
        }
        if self.layout.is_some() {
            page.markup = Some(self.markup(rng, &page));
        }
        page.query_terms = self.topical_terms(&page, page.paragraphs.iter().flatten());
        self.pages.push(page);
        self.in_links.push(0);
        // Initial attractiveness: without it the first pages of the growth process would take
        // a sixth of all links; with it in-links stay power-law with one realistic hub or two.
        self.urn.extend([id; 3]);
        if self.layout.is_some() {
            let site = self.site_of(id) as usize;
            self.site_urn[site].extend([id; 3]);
            self.site_pages[site].push(id);
        }
        id
    }

    /// Images (half the pages have none), a table on a quarter of the pages and a contact
    /// address on under a third: the structural counts of a multi-site page.
    fn markup(&self, rng: &mut ChaCha8Rng, page: &Page) -> Markup {
        let images = if rng.gen::<f64>() < 0.5 {
            0
        } else {
            rng.gen_range(1..=6)
        };
        let table = (rng.gen::<f64>() < 0.25).then(|| {
            let cols = rng.gen_range(2..=4);
            (0..rng.gen_range(2..=6))
                .map(|_| self.table_row(rng, page, cols))
                .collect()
        });
        let contact = (rng.gen::<f64>() < 0.3).then(|| {
            let user = self.lexicon.site[page.keywords[0] as usize].to_lowercase();
            let host = match &self.layout {
                Some(l) => &l.hosts[l.site_of(page.dir) as usize],
                None => &self.host,
            };
            format!("{user}@{host}")
        });
        Markup {
            images,
            table,
            contact,
        }
    }

    fn table_row(&self, rng: &mut ChaCha8Rng, page: &Page, cols: usize) -> Vec<u32> {
        (0..cols)
            .map(|_| self.topic_words[page.topic][self.topic_zipf.sample(rng)])
            .collect()
    }

    /// A topical edit of a multi-site page sometimes adds or drops an image or a table row.
    fn edit_markup(&mut self, rng: &mut ChaCha8Rng, id: u32) {
        let r: f64 = rng.gen();
        let page = &self.pages[id as usize];
        let Some(markup) = &page.markup else {
            return;
        };
        if r < 0.3 {
            let images = if rng.gen::<bool>() {
                markup.images + 1
            } else {
                markup.images.saturating_sub(1)
            };
            self.pages[id as usize]
                .markup
                .as_mut()
                .expect("checked above")
                .images = images;
        } else if r < 0.45 && markup.table.is_some() {
            let cols = markup.table.as_ref().map_or(2, |t| t[0].len());
            let row = self.table_row(rng, page, cols);
            if let Some(table) = self.pages[id as usize]
                .markup
                .as_mut()
                .and_then(|m| m.table.as_mut())
            {
                table.push(row);
            }
        }
    }

    /// Adds out-links to `page`, targets by preferential attachment, inserted into paragraphs.
    pub(crate) fn add_out_links(&mut self, rng: &mut ChaCha8Rng, page: u32) {
        let degree: f64 = LogNormal::new(4f64.ln(), 0.8).expect("valid").sample(rng);
        let degree = (degree as usize).min(60);
        for _ in 0..degree {
            let Some(target) = self.pick_target(rng, page) else {
                return;
            };
            let form = rng.gen_range(0..3u8);
            let p = &mut self.pages[page as usize];
            let pi = rng.gen_range(0..p.paragraphs.len());
            let para = &mut p.paragraphs[pi];
            let at = rng.gen_range(0..=para.len());
            para.insert(at, Token::Link { target, form });
            self.attach(target);
        }
    }

    /// A present page other than `from`: uniform 20% of the time, else proportional to
    /// in-links + 3 (preferential attachment gives the heavy-tailed in-degree of the Web).
    /// With several sites, most targets come from `from`'s own site, by the same rule.
    pub(crate) fn pick_target(&self, rng: &mut ChaCha8Rng, from: u32) -> Option<u32> {
        if self.layout.is_some() && rng.gen::<f64>() < SAME_SITE_LINKS {
            let site = self.site_of(from) as usize;
            for _ in 0..20 {
                let t = if rng.gen::<f64>() < 0.2 {
                    *self.site_pages[site].choose(rng)?
                } else {
                    *self.site_urn[site].choose(rng)?
                };
                if t != from && self.pages[t as usize].present {
                    return Some(t);
                }
            }
        }
        for _ in 0..20 {
            let t = if rng.gen::<f64>() < 0.2 {
                rng.gen_range(0..self.pages.len()) as u32
            } else {
                *self.urn.choose(rng)?
            };
            if t != from && self.pages[t as usize].present {
                return Some(t);
            }
        }
        None
    }

    /// `n` words of running text for `page`: its keywords, its topic's words and background
    /// words, cut into sentences.
    fn paragraph(&self, rng: &mut ChaCha8Rng, page: &Page, n: usize) -> Vec<Token> {
        let mut out = Vec::with_capacity(n + n / 8);
        let mut sentence = 0;
        let mut sentence_len = rng.gen_range(6..16);
        for _ in 0..n {
            let r: f64 = rng.gen();
            let w = if r < 0.05 {
                *page.keywords.choose(rng).expect("two keywords")
            } else if r < 0.40 {
                self.topic_words[page.topic][self.topic_zipf.sample(rng)]
            } else {
                self.background.sample(rng) as u32
            };
            out.push(Token::Word(w));
            sentence += 1;
            if sentence == sentence_len {
                out.push(Token::Stop);
                sentence = 0;
                sentence_len = rng.gen_range(6..16);
            }
        }
        if sentence > 0 {
            out.push(Token::Stop);
        }
        out
    }

    fn ad_words(&self, rng: &mut ChaCha8Rng) -> Vec<u32> {
        let len: f64 = LogNormal::new(25f64.ln(), 0.8).expect("valid").sample(rng);
        (0..(len as usize).clamp(5, 400))
            .map(|_| self.ad_zipf.sample(rng) as u32)
            .collect()
    }

    /// The distinct topical words among `tokens`, in first-occurrence order.
    fn topical_terms<'a>(&self, page: &Page, tokens: impl Iterator<Item = &'a Token>) -> Vec<u32> {
        let mut seen = Vec::new();
        for t in tokens {
            if let Token::Word(w) = t {
                if !seen.contains(w) && self.is_topical(page, *w) {
                    seen.push(*w);
                }
            }
        }
        seen
    }

    /// Applies one change event of a kind drawn from the page's mix; returns the kind.
    pub(crate) fn change(&mut self, rng: &mut ChaCha8Rng, id: u32) -> ChangeKind {
        let page = &self.pages[id as usize];
        let r: f64 = rng.gen();
        let kind = if page.ad_block.is_some() && r < page.ad_share {
            ChangeKind::AdChurn
        } else if rng.gen::<f64>() < 0.7 {
            ChangeKind::TopicalEdit
        } else {
            ChangeKind::Typo
        };
        match kind {
            ChangeKind::AdChurn => {
                let ad = self.ad_words(rng);
                self.pages[id as usize].ad_block = Some(ad);
            }
            ChangeKind::TopicalEdit => {
                self.topical_edit(rng, id);
                if self.layout.is_some() {
                    self.edit_markup(rng, id);
                }
            }
            ChangeKind::Typo => self.typo(rng, id),
        }
        kind
    }

    fn topical_edit(&mut self, rng: &mut ChaCha8Rng, id: u32) {
        let page = &self.pages[id as usize];
        let paras = page.paragraphs.len();
        let op = rng.gen_range(0..10);
        if op < 2 && paras >= 2 {
            let i = rng.gen_range(0..paras);
            self.pages[id as usize].paragraphs.remove(i);
            return;
        }
        let n = rng.gen_range(15..70);
        let mut para = self.paragraph(rng, page, n);
        let new_terms = self.topical_terms(page, para.iter());
        if rng.gen::<f64>() < 0.3 {
            if let Some(target) = self.pick_target(rng, id) {
                let at = rng.gen_range(0..=para.len());
                para.insert(at, Token::Link { target, form: 0 });
                self.attach(target);
            }
        }
        let page = &mut self.pages[id as usize];
        for w in new_terms {
            if !page.query_terms.contains(&w) {
                page.query_terms.push(w);
            }
        }
        if op < 5 {
            let at = rng.gen_range(0..=paras);
            page.paragraphs.insert(at, para);
        } else {
            let i = rng.gen_range(0..paras);
            page.paragraphs[i] = para;
        }
    }

    fn typo(&mut self, rng: &mut ChaCha8Rng, id: u32) {
        let page = &self.pages[id as usize];
        let positions: Vec<(usize, usize)> = page
            .paragraphs
            .iter()
            .enumerate()
            .flat_map(|(pi, p)| {
                p.iter()
                    .enumerate()
                    .filter(|(_, t)| matches!(t, Token::Word(_)))
                    .map(move |(ti, _)| (pi, ti))
            })
            .collect();
        let Some(&(pi, ti)) = positions.choose(rng) else {
            return;
        };
        let Token::Word(w) = page.paragraphs[pi][ti] else {
            unreachable!("positions hold words")
        };
        let word = &self.lexicon.site[w as usize];
        let mut chars: Vec<char> = word.chars().collect();
        if chars.len() >= 3 {
            let i = rng.gen_range(0..chars.len() - 1);
            chars.swap(i, i + 1);
        }
        let mut typo: String = chars.into_iter().collect();
        if typo == *word {
            typo.push(word.chars().last().unwrap_or('e'));
        }
        self.pages[id as usize].paragraphs[pi][ti] = Token::Raw(typo);
    }

    /// Appends a sentence linking `from` to `to` (a new page announced on an existing one).
    pub(crate) fn add_link_to(&mut self, rng: &mut ChaCha8Rng, from: u32, to: u32) {
        let page = &self.pages[from as usize];
        let words = rng.gen_range(4..10);
        let mut sentence = self.paragraph(rng, page, words);
        sentence.insert(
            sentence.len() - 1,
            Token::Link {
                target: to,
                form: 1,
            },
        );
        let page = &mut self.pages[from as usize];
        match page.paragraphs.last_mut() {
            Some(last) => last.extend(sentence),
            None => page.paragraphs.push(sentence),
        }
        self.attach(to);
    }

    /// The page's HTML, in the shape of the EmacsWiki renderings.
    pub(crate) fn render(&self, id: u32) -> String {
        let page = &self.pages[id as usize];
        let mut html = String::with_capacity(4096);
        html.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
        html.push_str(&format!("<title>{}</title>\n</head>\n<body>\n", page.title));
        html.push_str(&format!("<h1>{}</h1>\n", page.title));
        if let Some(markup) = &page.markup {
            for i in 0..markup.images {
                html.push_str(&format!(
                    "<img src=\"/images/{}-{i}.png\" alt=\"\">\n",
                    page.name
                ));
            }
        }
        for (i, para) in page.paragraphs.iter().enumerate() {
            // A section heading every few paragraphs, from the page's keywords.
            if i > 0 && i % 4 == 0 {
                let w = page.keywords[(i / 4) % page.keywords.len()];
                html.push_str(&format!(
                    "<h2>{}</h2>\n",
                    capitalise(&self.lexicon.site[w as usize])
                ));
            }
            html.push_str("<p>");
            self.render_tokens(id, para, &mut html);
            html.push_str("</p>\n");
            if i == 0 {
                if let Some(table) = page.markup.as_ref().and_then(|m| m.table.as_ref()) {
                    html.push_str("<table>\n");
                    for row in table {
                        html.push_str("<tr>");
                        for &w in row {
                            html.push_str(&format!("<td>{}</td>", self.lexicon.site[w as usize]));
                        }
                        html.push_str("</tr>\n");
                    }
                    html.push_str("</table>\n");
                }
            }
        }
        if let Some(contact) = page.markup.as_ref().and_then(|m| m.contact.as_ref()) {
            html.push_str(&format!(
                "<p>Contact: <a href=\"mailto:{contact}\">{contact}</a></p>\n"
            ));
        }
        if let Some(ad) = &page.ad_block {
            html.push_str("<div class=\"sponsored\"><p>");
            let mut first = true;
            for (i, &w) in ad.iter().enumerate() {
                if !first {
                    html.push(' ');
                }
                let word = &self.lexicon.ad[w as usize];
                if i % 7 == 0 {
                    html.push_str(&capitalise(word));
                } else {
                    html.push_str(word);
                }
                if i % 7 == 6 || i + 1 == ad.len() {
                    html.push('!');
                }
                first = false;
            }
            html.push_str("</p></div>\n");
        }
        html.push_str("</body>\n</html>\n");
        html
    }

    fn render_tokens(&self, from: u32, tokens: &[Token], html: &mut String) {
        let mut at_start = true;
        let mut first = true;
        for t in tokens {
            let text = match t {
                Token::Stop => {
                    html.push('.');
                    at_start = true;
                    continue;
                }
                Token::Word(w) => {
                    let word = &self.lexicon.site[*w as usize];
                    if at_start {
                        capitalise(word)
                    } else {
                        word.clone()
                    }
                }
                Token::Raw(s) => s.clone(),
                Token::Link { target, form } => {
                    let target_page = &self.pages[*target as usize];
                    let href = self.href(from, *target, *form);
                    format!("<a href=\"{href}\">{}</a>", target_page.title)
                }
            };
            if !first {
                html.push(' ');
            }
            html.push_str(&text);
            at_start = false;
            first = false;
        }
    }
}

impl SiteModel {
    /// The `href` of a link from `from` to `target` in the written `form`: absolute (0),
    /// root-relative (1) or relative (2). Across sites only absolute links work, and a
    /// relative one only within the same directory, so those fall back.
    fn href(&self, from: u32, target: u32, form: u8) -> String {
        let target_page = &self.pages[target as usize];
        let Some(layout) = &self.layout else {
            return match form {
                0 => self.url(target),
                1 => format!("/wiki/{}", target_page.name),
                _ => target_page.name.clone(),
            };
        };
        let from_dir = self.pages[from as usize].dir;
        if form == 0 || layout.site_of(from_dir) != layout.site_of(target_page.dir) {
            self.url(target)
        } else if form == 2 && from_dir == target_page.dir {
            target_page.name.clone()
        } else {
            format!(
                "/{}{}",
                layout.dirs[target_page.dir as usize].path, target_page.name
            )
        }
    }
}

/// `word` with its first letter upper-cased.
pub(super) fn capitalise(word: &str) -> String {
    let mut c = word.chars();
    match c.next() {
        Some(f) => f.to_ascii_uppercase().to_string() + c.as_str(),
        None => String::new(),
    }
}

/// Pages sorted by URL (byte order), the order records of one week are written in.
pub(super) fn by_url(model: &SiteModel, pages: &BTreeSet<u32>) -> Vec<u32> {
    let mut v: Vec<(String, u32)> = pages.iter().map(|&p| (model.url(p), p)).collect();
    v.sort();
    v.into_iter().map(|(_, p)| p).collect()
}
