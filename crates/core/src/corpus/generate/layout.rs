//! Sites and directory trees of a multi-site generated collection (`--sites N`, N ≥ 2).
//!
//! One site keeps the flat `/wiki/<Name>` layout of the EmacsWiki-shaped default (and its exact
//! bytes). With several sites every page lives on a host `siteK.example` in a directory of
//! that site's tree (depth up to 3, directory names from the site's own vocabulary), and
//! directories have a topic their pages mostly share, as sections of real sites do.

use rand::distributions::{Distribution, WeightedIndex};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::words::{zipf, Lexicon};

/// Deepest directory level below a site's root.
const MAX_DEPTH: usize = 3;
/// Share of a directory's pages on the directory's topic (the rest draw from the whole site).
pub(super) const ON_TOPIC: f64 = 0.7;

/// One directory of one site.
#[derive(Debug, Clone)]
pub(super) struct Directory {
    /// Index into [`Layout::hosts`].
    pub(crate) site: u32,
    /// Path below the host, `""` for the root, else `a/b/` (ends with `/`).
    pub(crate) path: String,
    /// The topic most of the directory's pages are about.
    pub(crate) topic: usize,
}

/// Hosts and their directory trees.
#[derive(Debug, Clone)]
pub(super) struct Layout {
    pub(crate) hosts: Vec<String>,
    pub(crate) dirs: Vec<Directory>,
    /// Directory ids of each site.
    pub(crate) site_dirs: Vec<Vec<u32>>,
    /// Sites differ in size (Zipf weights), as the sites of a crawl do.
    site_pick: WeightedIndex<f64>,
}

impl Layout {
    /// `sites` hosts `site1.example`, ...; each a tree of directories named after site words.
    pub fn new(
        rng: &mut ChaCha8Rng,
        sites: usize,
        lexicon: &Lexicon,
        topic_pick: &WeightedIndex<f64>,
    ) -> Layout {
        let hosts: Vec<String> = (1..=sites).map(|k| format!("site{k}.example")).collect();
        let mut dirs = Vec::new();
        let mut site_dirs = vec![Vec::new(); sites];
        // Directory names: general site words below the function words, lower case.
        let lo = lexicon.n_function;
        let name_pool = &lexicon.site[lo..];
        for (site, ids) in site_dirs.iter_mut().enumerate() {
            let root_topic = topic_pick.sample(rng);
            let mut frontier = vec![(String::new(), root_topic, 0usize)];
            while let Some((path, topic, depth)) = frontier.pop() {
                ids.push(dirs.len() as u32);
                dirs.push(Directory {
                    site: site as u32,
                    path: path.clone(),
                    topic,
                });
                if depth == MAX_DEPTH {
                    continue;
                }
                // The root always has sections; deeper levels branch less and less.
                let children = match depth {
                    0 => rng.gen_range(2..=4),
                    1 if rng.gen::<f64>() < 0.6 => rng.gen_range(1..=3),
                    2 if rng.gen::<f64>() < 0.3 => rng.gen_range(1..=2),
                    _ => 0,
                };
                let mut used: Vec<String> = Vec::new();
                for _ in 0..children {
                    let mut name = name_pool[rng.gen_range(0..name_pool.len())].to_lowercase();
                    while used.contains(&name) {
                        name.push('s');
                    }
                    used.push(name.clone());
                    // Sub-sections keep their parent's subject half of the time.
                    let child_topic = if rng.gen::<f64>() < 0.5 {
                        topic
                    } else {
                        topic_pick.sample(rng)
                    };
                    frontier.push((format!("{path}{name}/"), child_topic, depth + 1));
                }
            }
        }
        Layout {
            site_pick: zipf(sites, 0.5),
            hosts,
            dirs,
            site_dirs,
        }
    }

    /// A directory for a new page: a site by size, then one of its directories uniformly.
    pub fn place(&self, rng: &mut ChaCha8Rng) -> u32 {
        let site = self.site_pick.sample(rng);
        let ids = &self.site_dirs[site];
        ids[rng.gen_range(0..ids.len())]
    }

    pub fn site_of(&self, dir: u32) -> u32 {
        self.dirs[dir as usize].site
    }

    /// `https://host/path` of the directory, without a page name.
    pub fn prefix(&self, dir: u32) -> String {
        let d = &self.dirs[dir as usize];
        format!("https://{}/{}", self.hosts[d.site as usize], d.path)
    }
}
