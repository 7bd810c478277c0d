//! Paper 002's download granularities (Tan, Zhuang, Mitra & Giles, ICWE 2007, §4): which pages
//! a sample `p_s` that "fires" brings along, and in which order — by link distance (LB,
//! Eq. 1), directory distance (DB, Eq. 2) or cluster distance (CB, §4.3).
//!
//! For a granularity `d`, the download set is `{p : 0 ≤ dist ≤ d}` for `d ≥ 0` and
//! `{p : d ≤ dist ≤ 0}` for `d < 0` (reconstructed from the text's example, SEED-SYSTEMS
//! §3.2.2–3.2.3), ordered by `|dist|` (the caller breaks ties at random).

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use crate::corpus::PageId;

/// The held-copy link graph as the LB granularity reads it.
pub trait LinkGraph {
    /// Pages `page` links to.
    fn out_links(&self, page: PageId) -> &[PageId];
    /// Pages linking to `page`.
    fn in_links(&self, page: PageId) -> &[PageId];
}

/// Whether `d` selects distance `dist`: `0 ≤ dist ≤ d` for `d ≥ 0`, `d ≤ dist ≤ 0` for `d < 0`
/// (SEED-SYSTEMS §3.2.2, reconstructed).
pub(crate) fn within_granularity(dist: i32, d: i32) -> bool {
    if d >= 0 {
        (0..=d).contains(&dist)
    } else {
        (d..=0).contains(&dist)
    }
}

/// Breadth-first distances from `seed` over `next`, at most `depth` steps (`None`: unbounded).
fn bfs(
    seed: PageId,
    depth: Option<u32>,
    next: impl Fn(PageId) -> Vec<PageId>,
) -> FxHashMap<PageId, u32> {
    let mut dist = FxHashMap::default();
    dist.insert(seed, 0);
    let mut queue = VecDeque::from([seed]);
    while let Some(p) = queue.pop_front() {
        let h = dist[&p];
        if depth.is_some_and(|d| h >= d) {
            continue;
        }
        for q in next(p) {
            if let std::collections::hash_map::Entry::Vacant(e) = dist.entry(q) {
                e.insert(h + 1);
                queue.push_back(q);
            }
        }
    }
    dist
}

/// Paper 002 Eq. 1, the link distance `d_LB(p_s, p)` of every page within granularity `d` of
/// `seed` (the seed itself left out): 0 for a page sharing a parent with the seed (checked
/// first: "d_LB of p_s's siblings is always 0 although there are paths from p_s to them");
/// else `h` when `p` is reachable from the seed in `h > 0` steps; else `−h` when the seed is
/// reachable from `p` in `h` steps. Returned as `(page, d_LB)` pairs by `|d_LB|`, then page id.
pub(crate) fn link_neighbourhood(
    graph: &impl LinkGraph,
    seed: PageId,
    d: i32,
) -> Vec<(PageId, i32)> {
    let mut siblings: Vec<PageId> = graph
        .in_links(seed)
        .iter()
        .flat_map(|&parent| graph.out_links(parent).iter().copied())
        .filter(|&p| p != seed)
        .collect();
    siblings.sort_unstable();
    siblings.dedup();
    let mut out: Vec<(PageId, i32)> = siblings.iter().map(|&p| (p, 0)).collect();
    let is_sibling = |p: &PageId| siblings.binary_search(p).is_ok();
    if d > 0 {
        let forward = bfs(seed, Some(d as u32), |p| graph.out_links(p).to_vec());
        out.extend(
            forward
                .into_iter()
                .filter(|(p, h)| *h > 0 && !is_sibling(p))
                .map(|(p, h)| (p, h as i32)),
        );
    } else if d < 0 {
        // A page reachable from the seed has a positive distance however far: not in a
        // negative set.
        let forward = bfs(seed, None, |p| graph.out_links(p).to_vec());
        let backward = bfs(seed, Some(d.unsigned_abs()), |p| graph.in_links(p).to_vec());
        out.extend(
            backward
                .into_iter()
                .filter(|(p, h)| *h > 0 && !is_sibling(p) && !forward.contains_key(p))
                .map(|(p, h)| (p, -(h as i32))),
        );
    }
    out.sort_by_key(|&(p, dist)| (dist.unsigned_abs(), p));
    out
}

/// The host and the segments of a URL's path (`http://h/a/b/s.html` → `("h", [a, b, s.html])`;
/// query and fragment dropped).
fn host_and_segments(url: &str) -> (&str, Vec<&str>) {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let rest = rest.split(['?', '#']).next().unwrap_or("");
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    (host, path.split('/').collect())
}

/// Paper 002 Eq. 2, the directory distance `d_DB(p_s, p)` between a seed URL
/// `http://u_1/…/u_m` and a page URL `http://v_1/…/v_n` (`u_1`, `v_1` the host, the last
/// segment the file), **reconstructed** (SEED-SYSTEMS §3.2.3): with `c` the length of the
/// common prefix of the two *directory* segment lists (host included, `c ≤ min(m, n) − 1`), the
/// magnitude `(m − c) + (n − c) − 2` is the distance between the two directories in the
/// directory tree; it is positive when the page is not deeper than the seed (`n ≤ m`, upper
/// and same-depth directories) and negative when it is deeper, 0 only for the same directory.
/// (The printed `· sign(n − m)` contradicts the text's "d > 0 means upper directories" and
/// would put every same-depth directory at 0.) Pages of another host: `None` (choice: DB stays
/// within the seed's site).
pub(crate) fn directory_distance(seed_url: &str, page_url: &str) -> Option<i32> {
    let (seed_host, seed_path) = host_and_segments(seed_url);
    let (page_host, page_path) = host_and_segments(page_url);
    if !seed_host.eq_ignore_ascii_case(page_host) {
        return None;
    }
    let m = seed_path.len() + 1;
    let n = page_path.len() + 1;
    // Host matches: c ≥ 1; then directory segments (all but the file).
    let common_dirs = seed_path[..seed_path.len() - 1]
        .iter()
        .zip(&page_path[..page_path.len() - 1])
        .take_while(|(a, b)| a == b)
        .count();
    let c = 1 + common_dirs;
    let magnitude = ((m - c) + (n - c) - 2) as i32;
    Some(if n > m { -magnitude } else { magnitude })
}

/// Paper 002 §4.3, the cluster distance `d_CB(p_s, p)`: 0 in the seed's cluster, else the rank
/// of `p`'s cluster among all clusters by centroid distance from the seed's cluster (nearest 1).
/// `ranks_from_seed_cluster` is [`crate::cluster::Clustering::centroid_ranks_from`] of the
/// seed's cluster.
pub(crate) fn cluster_distance(ranks_from_seed_cluster: &[u32], page_cluster: u32) -> i32 {
    ranks_from_seed_cluster[page_cluster as usize] as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SEED-SYSTEMS §5.2's directory-distance vector.
    #[test]
    fn directory_distances_of_the_reference_vector() {
        let seed = "http://h/a/b/s.html";
        for (page, want) in [
            ("http://h/a/b/x.html", 0),
            ("http://h/a/y.html", 1),
            ("http://h/z.html", 2),
            ("http://h/a/c/y.html", 2),
            ("http://h/a/b/c/y.html", -1),
            ("http://h/a/b/c/d/y.html", -2),
        ] {
            assert_eq!(directory_distance(seed, page), Some(want), "{page}");
        }
        assert_eq!(directory_distance(seed, "http://other/a/b/x.html"), None);
        // A file named like a directory does not extend the common prefix.
        assert_eq!(directory_distance("http://h/a", "http://h/a/x"), Some(-1));
        assert_eq!(
            directory_distance("http://h/a/b?q=1", "http://h/a/c#f"),
            Some(0)
        );
        for (dist, d, yes) in [(0, 0, true), (1, 1, true), (2, 1, false), (-1, 1, false)] {
            assert_eq!(within_granularity(dist, d), yes);
        }
        assert!(within_granularity(-2, -3) && !within_granularity(1, -3));
    }

    struct Graph {
        out: Vec<Vec<PageId>>,
        inl: Vec<Vec<PageId>>,
    }

    impl Graph {
        fn new(n: usize, edges: &[(PageId, PageId)]) -> Self {
            let mut g = Graph {
                out: vec![Vec::new(); n],
                inl: vec![Vec::new(); n],
            };
            for &(a, b) in edges {
                g.out[a as usize].push(b);
                g.inl[b as usize].push(a);
            }
            g
        }
    }

    impl LinkGraph for Graph {
        fn out_links(&self, p: PageId) -> &[PageId] {
            &self.out[p as usize]
        }
        fn in_links(&self, p: PageId) -> &[PageId] {
            &self.inl[p as usize]
        }
    }

    /// SEED-SYSTEMS §5.2's link-distance graph: parent 0 → seed 1 and sibling 2; the seed's
    /// children 3, 4, 5; the seed also links to its sibling 2; grandchild 6 under 3; 7 links
    /// to the parent.
    #[test]
    fn link_distances_put_siblings_at_zero_even_when_reachable() {
        let g = Graph::new(
            8,
            &[
                (0, 1),
                (0, 2),
                (1, 3),
                (1, 4),
                (1, 5),
                (1, 2),
                (3, 6),
                (7, 0),
            ],
        );
        assert_eq!(link_neighbourhood(&g, 1, 0), vec![(2, 0)]);
        assert_eq!(
            link_neighbourhood(&g, 1, 1),
            vec![(2, 0), (3, 1), (4, 1), (5, 1)],
            "the sibling 2 is one link away but stays at 0"
        );
        assert_eq!(
            link_neighbourhood(&g, 1, 3),
            vec![(2, 0), (3, 1), (4, 1), (5, 1), (6, 2)]
        );
        assert_eq!(link_neighbourhood(&g, 1, -1), vec![(2, 0), (0, -1)]);
        assert_eq!(
            link_neighbourhood(&g, 1, -2),
            vec![(2, 0), (0, -1), (7, -2)]
        );
        // Eq. 1 checks reachability from the seed first: a page both ways is positive.
        let cyc = Graph::new(3, &[(0, 1), (1, 2), (2, 0)]);
        assert_eq!(link_neighbourhood(&cyc, 0, -2), vec![]);
        assert_eq!(link_neighbourhood(&cyc, 0, 2), vec![(1, 1), (2, 2)]);
    }

    #[test]
    fn cluster_distance_is_the_centroid_rank() {
        let ranks = [2, 0, 1];
        assert_eq!(cluster_distance(&ranks, 1), 0);
        assert_eq!(cluster_distance(&ranks, 0), 2);
    }
}
