//! The link graph of the repository's held copies and its PageRank.
//!
//! Nodes are the pages the repository holds a copy of; an edge `p → q` is a link of `p`'s held
//! copy to a page `q` whose copy is also held (links to pages outside the repository — not yet
//! crawled, or gone — are not edges: paper 000 §3.2 and paper 002 §4.1 count in-links "within
//! the repository"). Stored as two compressed adjacency lists (out and in), indexed by page id.

use rayon::prelude::*;

use crate::corpus::PageId;

/// PageRank's damping factor `d` (Brin & Page 1998 §2.1.1; paper 000 §3.2 Eq. 2 uses the usual
/// 0.85).
pub const PAGERANK_DAMPING: f64 = 0.85;

/// Power iteration stops when the L1 distance between two successive vectors is below this.
///
/// The vector returned is then within `d/(1 − d)·tolerance ≈ 5.7·10⁻⁶` of the fixed point in
/// L1 (each step contracts the error by `d`). The scores sum to 1, so whatever the number of
/// pages the mean page is off by under 6 parts in a million of its score: far below what is
/// printed (4 decimals of the PageRank-weighted ChangeRatio) or what any use here resolves
/// (paper 000's toolbar PageRank in 11 log-scale steps, paper 002's weights). A tighter 10⁻⁹
/// took 49 steps per recomputation from the previous unit's vector instead of 17, a fifth of
/// an EmacsWiki comparison sweep's CPU time.
pub const PAGERANK_TOLERANCE: f64 = 1e-6;

/// A bound on the power iteration (it converges geometrically at rate `d`: about 85 steps to
/// reach 10⁻⁶ from a uniform start; the bound only guards against misuse).
pub(crate) const PAGERANK_MAX_ITERATIONS: usize = 1_000;

/// Nodes from which [`pagerank`] gathers each step in parallel: below, one thread's pass is
/// shorter than handing the work out (a comparison sweep already runs one run per thread).
const PARALLEL_NODES: usize = 1 << 15;

/// Compressed adjacency lists over page ids `0..len`.
#[derive(Debug, Clone, Default)]
struct Adjacency {
    offsets: Vec<u32>,
    targets: Vec<PageId>,
}

impl Adjacency {
    fn of(&self, page: PageId) -> &[PageId] {
        let p = page as usize;
        if p + 1 >= self.offsets.len() {
            return &[];
        }
        &self.targets[self.offsets[p] as usize..self.offsets[p + 1] as usize]
    }
}

/// The link graph of held copies (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct LinkGraph {
    /// Pages with a held copy, ascending: the nodes.
    nodes: Vec<PageId>,
    /// Whether each page id is a node.
    is_node: Vec<bool>,
    out: Adjacency,
    into: Adjacency,
}

impl LinkGraph {
    /// The graph over page ids `0..page_count` whose held copies' out-links `links(p)` gives
    /// (`None`: no held copy). Out-links must be distinct and exclude `p` itself (as
    /// [`crate::corpus::PageVersion::links`] are).
    pub fn build<'a>(page_count: usize, links: impl Fn(PageId) -> Option<&'a [PageId]>) -> Self {
        // Each copy's links looked up once (a lookup follows pointers to the copy).
        let held: Vec<Option<&[PageId]>> = (0..page_count as PageId).map(&links).collect();
        let is_node: Vec<bool> = held.iter().map(Option::is_some).collect();
        let nodes: Vec<PageId> = (0..page_count as PageId)
            .filter(|&p| is_node[p as usize])
            .collect();
        let within = |q: &PageId| is_node.get(*q as usize).copied().unwrap_or(false);
        let mut out = Adjacency {
            offsets: Vec::with_capacity(page_count + 1),
            targets: Vec::with_capacity(held.iter().flatten().map(|l| l.len()).sum()),
        };
        let mut in_degree = vec![0u32; page_count + 1];
        out.offsets.push(0);
        for l in &held {
            for &q in l.iter().flat_map(|l| l.iter()).filter(|q| within(q)) {
                out.targets.push(q);
                in_degree[q as usize + 1] += 1;
            }
            out.offsets.push(out.targets.len() as u32);
        }
        // In-lists by counting sort: sources come out ascending.
        for i in 1..in_degree.len() {
            in_degree[i] += in_degree[i - 1];
        }
        let mut into = Adjacency {
            offsets: in_degree.clone(),
            targets: vec![0; out.targets.len()],
        };
        let mut next = in_degree;
        for p in 0..page_count as PageId {
            for &q in out.of(p) {
                into.targets[next[q as usize] as usize] = p;
                next[q as usize] += 1;
            }
        }
        LinkGraph {
            nodes,
            is_node,
            out,
            into,
        }
    }

    /// Pages with a held copy, ascending.
    pub fn nodes(&self) -> &[PageId] {
        &self.nodes
    }

    /// Whether `page` is a node (its copy is held).
    pub fn contains(&self, page: PageId) -> bool {
        self.is_node.get(page as usize).copied().unwrap_or(false)
    }

    /// Number of page ids the graph covers (nodes or not).
    pub(crate) fn page_count(&self) -> usize {
        self.is_node.len()
    }

    /// Links of `page`'s held copy to held pages, ascending.
    pub(crate) fn out_links(&self, page: PageId) -> &[PageId] {
        self.out.of(page)
    }

    /// Held pages whose held copy links to `page`, ascending.
    pub fn in_links(&self, page: PageId) -> &[PageId] {
        self.into.of(page)
    }

    /// Number of edges.
    pub fn edge_count(&self) -> usize {
        self.out.targets.len()
    }
}

/// The PageRank of every node of a [`LinkGraph`], indexed by page id (0 for pages that are not
/// nodes); sums to 1 over the nodes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PageRank {
    pub scores: Vec<f64>,
    /// Power-iteration steps taken.
    pub iterations: usize,
}

/// PageRank (Brin & Page, "The anatomy of a large-scale hypertextual Web search engine", WWW7
/// 1998, §2.1.1; paper 000 §3.2 Eq. 2 uses it as a page feature and in its ranking score Eq. 7,
/// paper 002 §5 in the PRA download probability and as the weights of the weighted ChangeRatio
/// Eq. 10), by power iteration over the `N` nodes:
///
/// `PR_{k+1}(v) = (1 − d)/N + d · ( Σ_{u → v} PR_k(u)/out(u) + Σ_{u dangling} PR_k(u)/N )`
///
/// with damping `d` ([`PAGERANK_DAMPING`] in the project). A dangling node (no out-link within
/// the graph) spreads its mass uniformly over all nodes, so the vector stays a probability
/// distribution (the random surfer restarts anywhere). Iterates until the L1 distance between
/// successive vectors is below `tolerance` or after `PAGERANK_MAX_ITERATIONS` steps.
///
/// `start` (indexed by page id, e.g. the previous unit's PageRank) warm-starts the iteration: it
/// is restricted to the nodes and renormalised (uniform if it gives them no mass). The fixed
/// point does not depend on it, only the number of steps.
pub fn pagerank(
    graph: &LinkGraph,
    damping: f64,
    tolerance: f64,
    start: Option<&[f64]>,
) -> PageRank {
    let n = graph.nodes.len();
    let mut scores = vec![0.0; graph.page_count()];
    if n == 0 {
        return PageRank {
            scores,
            iterations: 0,
        };
    }
    let uniform = 1.0 / n as f64;
    let mut rank: Vec<f64> = match start {
        Some(s) => graph
            .nodes
            .iter()
            .map(|&p| s.get(p as usize).copied().unwrap_or(0.0).max(0.0))
            .collect(),
        None => vec![uniform; n],
    };
    let mass: f64 = rank.iter().sum();
    if mass > 0.0 && mass.is_finite() {
        rank.iter_mut().for_each(|r| *r /= mass);
    } else {
        rank.fill(uniform);
    }
    let in_flow = InFlowRows::of(graph);
    let inverse_degree = inverse_out_degrees(graph);
    // `share[u]`: PR(u)/out(u), what node `u` sends along each out-link; the slot past the
    // nodes holds 0, what the rows' padding gathers.
    let mut share: Vec<f64> = rank
        .iter()
        .zip(&inverse_degree)
        .map(|(&r, &inv)| r * inv)
        .chain([0.0])
        .collect();
    let mut dangling = 0.0;
    for (&r, &inv) in rank.iter().zip(&inverse_degree) {
        if inv == 0.0 {
            dangling += r;
        }
    }
    let mut inflow = vec![0.0; in_flow.slots()];
    let mut next = vec![0.0; n];
    let mut iterations = 0;
    while iterations < PAGERANK_MAX_ITERATIONS {
        iterations += 1;
        let base = (1.0 - damping) * uniform + damping * dangling * uniform;
        in_flow.gather(&share, &mut inflow, n >= PARALLEL_NODES);
        // In node order: the vector, its distance from the last, the dangling mass and the
        // shares of the next step (the sums over nodes keep this order).
        let mut delta = 0.0;
        let mut next_dangling = 0.0;
        let nodes = next
            .iter_mut()
            .zip(&mut share)
            .zip(rank.iter().zip(&inverse_degree))
            .zip(&in_flow.slot_of_node);
        for (((x, s), (&r, &inv)), &slot) in nodes {
            *x = base + damping * inflow[slot as usize];
            delta += (*x - r).abs();
            if inv == 0.0 {
                next_dangling += *x;
            }
            *s = *x * inv;
        }
        std::mem::swap(&mut rank, &mut next);
        dangling = next_dangling;
        if delta < tolerance {
            break;
        }
    }
    for (i, &p) in graph.nodes.iter().enumerate() {
        scores[p as usize] = rank[i];
    }
    PageRank { scores, iterations }
}

/// Nodes whose in-flows one gather row sums side by side.
const LANES: usize = 8;

/// The in-lists of a graph laid out for [`pagerank`]'s gather: nodes (by index) sorted by
/// in-degree and taken [`LANES`] at a time; a group's in-lists are interleaved in rows (row `j`
/// holds each node's `j`-th in-neighbour) and padded to the group's longest with the zero
/// slot `n`. Each node's in-flow is still summed over its in-list in order (adding 0 after
/// the last term changes no bit of a positive sum), but [`LANES`] sums run side by side over
/// rows of one length rather than one after another over lists of many lengths, which made
/// every step wait on each sum and on each list's end.
struct InFlowRows {
    /// Per group: the first of its rows (in `sources`, in rows of [`LANES`]) and the end.
    rows: Vec<(u32, u32)>,
    /// Row by row, the in-neighbours (node indices) of the group's nodes; `n` past a list.
    sources: Vec<u32>,
    /// Each node's slot (group · [`LANES`] + lane) in the gathered in-flows.
    slot_of_node: Vec<u32>,
}

/// Node indices `0..n` by descending `degree`, ties by ascending index: the order of sorting by
/// the key `(Reverse(degree(v)), v)`, by a counting sort (linear; one [`pagerank`] call builds
/// its rows from it, and a sweep makes thousands of calls).
fn nodes_by_descending_degree(n: usize, degree: impl Fn(usize) -> usize) -> Vec<u32> {
    let degrees: Vec<usize> = (0..n).map(degree).collect();
    let max = degrees.iter().copied().max().unwrap_or(0);
    // `start[max - d]`: where the nodes of degree `d` begin, highest degree first.
    let mut start = vec![0usize; max + 2];
    for &d in &degrees {
        start[max - d + 1] += 1;
    }
    for i in 1..start.len() {
        start[i] += start[i - 1];
    }
    let mut order = vec![0u32; n];
    for (v, &d) in degrees.iter().enumerate() {
        let at = &mut start[max - d];
        order[*at] = v as u32;
        *at += 1;
    }
    order
}

impl InFlowRows {
    fn of(graph: &LinkGraph) -> Self {
        let n = graph.nodes.len();
        let mut index = vec![u32::MAX; graph.page_count()];
        for (i, &p) in graph.nodes.iter().enumerate() {
            index[p as usize] = i as u32;
        }
        let in_list = |v: usize| graph.in_links(graph.nodes[v]);
        let by_degree = nodes_by_descending_degree(n, |v| in_list(v).len());
        let mut rows = Vec::with_capacity(n.div_ceil(LANES));
        let mut sources = Vec::with_capacity(graph.edge_count() + LANES * n.div_ceil(LANES));
        let mut slot_of_node = vec![0u32; n];
        for (g, group) in by_degree.chunks(LANES).enumerate() {
            let depth = group
                .iter()
                .map(|&v| in_list(v as usize).len())
                .max()
                .unwrap_or(0);
            let first = (sources.len() / LANES) as u32;
            for j in 0..depth {
                for lane in 0..LANES {
                    let source = group
                        .get(lane)
                        .and_then(|&v| in_list(v as usize).get(j))
                        .map_or(n as u32, |&u| index[u as usize]);
                    sources.push(source);
                }
            }
            rows.push((first, first + depth as u32));
            for (lane, &v) in group.iter().enumerate() {
                slot_of_node[v as usize] = (g * LANES + lane) as u32;
            }
        }
        InFlowRows {
            rows,
            sources,
            slot_of_node,
        }
    }

    /// Slots of the gathered in-flows (whole groups).
    fn slots(&self) -> usize {
        self.rows.len() * LANES
    }

    /// `inflow[slot]` = `Σ_{u → v} share[u]` over `v`'s in-list in order, for each node `v`
    /// at its slot; `share` ends with the zero slot.
    fn gather(&self, share: &[f64], inflow: &mut [f64], parallel: bool) {
        let group = |(out, &(first, end)): (&mut [f64], &(u32, u32))| {
            let mut sums = [0.0f64; LANES];
            let rows = &self.sources[first as usize * LANES..end as usize * LANES];
            for row in rows.chunks_exact(LANES) {
                for (sum, &u) in sums.iter_mut().zip(row) {
                    *sum += share[u as usize];
                }
            }
            out.copy_from_slice(&sums);
        };
        if parallel {
            inflow
                .par_chunks_mut(LANES)
                .zip(self.rows.par_iter())
                .with_min_len(PARALLEL_NODES / (4 * LANES))
                .for_each(group);
        } else {
            inflow.chunks_mut(LANES).zip(&self.rows).for_each(group);
        }
    }
}

/// `1/out(u)` of every node, in node order; 0 for a dangling node (no out-link in the graph).
fn inverse_out_degrees(graph: &LinkGraph) -> Vec<f64> {
    graph
        .nodes
        .iter()
        .map(|&p| match graph.out_links(p).len() {
            0 => 0.0,
            d => 1.0 / d as f64,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(links: &[Option<Vec<PageId>>]) -> LinkGraph {
        LinkGraph::build(links.len(), |p| links[p as usize].as_deref())
    }

    /// The counting sort orders nodes as sorting by `(Reverse(degree), index)` does, over
    /// random degree spreads (many ties, one hub, all equal) and the empty graph.
    #[test]
    fn nodes_by_descending_degree_sorts_as_the_comparison_sort() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(31);
        for case in 0..300 {
            let n = rng.gen_range(0..200);
            let spread = [1, 3, 50, 10_000][case % 4];
            let degrees: Vec<usize> = (0..n).map(|_| rng.gen_range(0..spread)).collect();
            let mut expected: Vec<u32> = (0..n as u32).collect();
            expected.sort_unstable_by_key(|&v| (std::cmp::Reverse(degrees[v as usize]), v));
            assert_eq!(nodes_by_descending_degree(n, |v| degrees[v]), expected);
        }
    }

    #[test]
    fn edges_stay_within_held_pages_and_in_links_mirror_out_links() {
        // Page 3 holds no copy: links to it are not edges, and it has none.
        let g = graph(&[
            Some(vec![1, 3]),
            Some(vec![0, 2]),
            Some(vec![0]),
            None,
            Some(vec![]),
        ]);
        assert_eq!(g.nodes(), &[0, 1, 2, 4]);
        assert_eq!(g.out_links(0), &[1]);
        assert_eq!(g.in_links(0), &[1, 2]);
        assert_eq!(g.in_links(3), &[] as &[PageId]);
        assert_eq!(g.out_links(3), &[] as &[PageId]);
        assert_eq!(g.in_links(2), &[1]);
        assert_eq!(g.edge_count(), 4);
        assert!(!g.contains(3) && g.contains(4));
        // Past the covered ids: nothing.
        assert_eq!(g.out_links(99), &[] as &[PageId]);
    }

    #[test]
    fn pagerank_by_hand() {
        // 0 → 1, 1 → 0, 2 → 0; no dangling node. With d = 0.85, N = 3:
        // PR(2) = 0.05; PR(1) = 0.05 + 0.85·PR(0); PR(0) = 0.05 + 0.85·(PR(1) + PR(2)).
        // ⇒ PR(0) = 0.05 + 0.85·(0.05 + 0.85·PR(0) + 0.05) = 0.135 + 0.7225·PR(0).
        let g = graph(&[Some(vec![1]), Some(vec![0]), Some(vec![0])]);
        let pr = pagerank(&g, 0.85, 1e-12, None);
        let p0 = 0.135 / (1.0 - 0.7225);
        let p1 = 0.05 + 0.85 * p0;
        assert!((pr.scores[0] - p0).abs() < 1e-9, "{:?}", pr);
        assert!((pr.scores[1] - p1).abs() < 1e-9);
        assert!((pr.scores[2] - 0.05).abs() < 1e-9);
        assert!((pr.scores.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }

    /// Out-links of pages `0..count`: `targets(p)` sorted, without repeats or `p` itself, for
    /// the pages `held` says have a copy.
    fn out_links(
        count: u32,
        held: impl Fn(u32) -> bool,
        targets: impl Fn(u32) -> Vec<PageId>,
    ) -> Vec<Option<Vec<PageId>>> {
        (0..count)
            .map(|p| {
                held(p).then(|| {
                    let mut l: Vec<PageId> = targets(p).into_iter().filter(|&q| q != p).collect();
                    l.sort_unstable();
                    l.dedup();
                    l
                })
            })
            .collect()
    }

    /// The power iteration as first written (spread, then gather, two passes per step): the
    /// fused loop must give the same vectors bit for bit.
    fn pagerank_two_passes(graph: &LinkGraph, start: Option<&[f64]>) -> Vec<f64> {
        let (d, n) = (PAGERANK_DAMPING, graph.nodes.len());
        let uniform = 1.0 / n as f64;
        let mut rank: Vec<f64> = match start {
            Some(s) => graph
                .nodes
                .iter()
                .map(|&p| s[p as usize].max(0.0))
                .collect(),
            None => vec![uniform; n],
        };
        let mass: f64 = rank.iter().sum();
        rank.iter_mut().for_each(|r| *r /= mass);
        let index = |p: PageId| graph.nodes.binary_search(&p).unwrap();
        let inverse = inverse_out_degrees(graph);
        for _ in 0..PAGERANK_MAX_ITERATIONS {
            let mut dangling = 0.0;
            let mut share = vec![0.0; n];
            for i in 0..n {
                if inverse[i] == 0.0 {
                    dangling += rank[i];
                }
                share[i] = rank[i] * inverse[i];
            }
            let base = (1.0 - d) * uniform + d * dangling * uniform;
            let mut delta = 0.0;
            let mut next = vec![0.0; n];
            for (i, &v) in graph.nodes.iter().enumerate() {
                let inflow: f64 = graph.in_links(v).iter().map(|&u| share[index(u)]).sum();
                next[i] = base + d * inflow;
                delta += (next[i] - rank[i]).abs();
            }
            rank = next;
            if delta < PAGERANK_TOLERANCE {
                break;
            }
        }
        let mut scores = vec![0.0; graph.page_count()];
        for (i, &p) in graph.nodes.iter().enumerate() {
            scores[p as usize] = rank[i];
        }
        scores
    }

    #[test]
    fn one_pass_per_step_gives_the_two_pass_vectors_bit_for_bit() {
        for seed in 0..8u32 {
            // Graph 6 is large enough to be gathered in parallel; graph 7 has hubs (in-lists
            // from one to hundreds of pages, padded side by side in the gather).
            let count = if seed == 6 {
                PARALLEL_NODES as u32 + 4321
            } else {
                50 + 97 * seed
            };
            let links = out_links(
                count,
                |p| p % (5 + seed) != 2,
                |p| match seed {
                    7 => vec![0, 1 + p % 3, p / 2, (p * 13) % count],
                    _ => (0..(p * 7 + seed) % 6)
                        .map(|k| (p * 31 + k * 17 + seed * 3) % count)
                        .collect(),
                },
            );
            let g = graph(&links);
            let cold = pagerank(&g, PAGERANK_DAMPING, PAGERANK_TOLERANCE, None);
            assert_eq!(cold.scores, pagerank_two_passes(&g, None), "seed {seed}");
            let skewed: Vec<f64> = (0..count).map(|p| 1.0 + (p % 3) as f64).collect();
            let warm = pagerank(&g, PAGERANK_DAMPING, PAGERANK_TOLERANCE, Some(&skewed));
            assert_eq!(
                warm.scores,
                pagerank_two_passes(&g, Some(&skewed)),
                "seed {seed}"
            );
            assert!(warm.iterations > 1);
        }
    }

    #[test]
    fn dangling_mass_is_spread_uniformly() {
        // 0 → 1, 1 dangling: PR(0) = a, PR(1) = b, a + b = 1.
        // a = 0.075 + 0.85·b/2, b = 0.075 + 0.85·(a + b/2) ⇒ a = 0.075 + 0.425·(1 − a)
        // ⇒ a = 0.5/1.425.
        let g = graph(&[Some(vec![1]), Some(vec![])]);
        let pr = pagerank(&g, 0.85, 1e-12, None);
        let a = 0.5 / 1.425;
        assert!((pr.scores[0] - a).abs() < 1e-9, "{:?}", pr);
        assert!((pr.scores[1] - (1.0 - a)).abs() < 1e-9);
    }

    #[test]
    fn a_warm_start_reaches_the_same_vector_in_fewer_steps() {
        let links = out_links(
            200,
            |p| p % 7 != 3,
            |p| vec![(p * 13 + 5) % 200, (p * 31 + 1) % 200, p / 2],
        );
        let g = graph(&links);
        let cold = pagerank(&g, PAGERANK_DAMPING, PAGERANK_TOLERANCE, None);
        let warm = pagerank(&g, PAGERANK_DAMPING, PAGERANK_TOLERANCE, Some(&cold.scores));
        assert!(
            warm.iterations < cold.iterations / 4,
            "{} {}",
            warm.iterations,
            cold.iterations
        );
        // Both within the stopping rule's bound of the fixed point: `d/(1 − d)·tolerance` in L1.
        let fixed_point = pagerank(&g, PAGERANK_DAMPING, 1e-15, None).scores;
        let bound = PAGERANK_DAMPING / (1.0 - PAGERANK_DAMPING) * PAGERANK_TOLERANCE;
        for run in [&cold, &warm] {
            let l1: f64 = run
                .scores
                .iter()
                .zip(&fixed_point)
                .map(|(a, b)| (a - b).abs())
                .sum();
            assert!(l1 <= bound, "{l1} > {bound}");
        }
        assert!(cold.scores[3] == 0.0 && (cold.scores.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        // Empty graph: nothing to rank.
        assert_eq!(
            pagerank(&graph(&[None, None]), 0.85, 1e-9, None).scores,
            vec![0.0, 0.0]
        );
    }
}
