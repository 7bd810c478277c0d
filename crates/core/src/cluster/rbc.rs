//! Repeated Bisection Clustering (RBC) — spherical k-means with CLUTO's I2 criterion, as paper
//! 000 §3.3 uses it (Karypis's CLUTO, `vcluster -clmethod=rb`, defaults `-cstype=large
//! -ntrials=10 -niter=10`).
//!
//! Rows are scaled to unit length when the matrix is built (a zero row stays zero and belongs
//! to no direction: it adds nothing to any criterion). For unit rows the criterion of Eq. 3–4,
//! `Θ = Σ_r Σ_{p ∈ S_r} cos(p, C_r)`, equals `Σ_r ‖D_r‖` with `D_r` the sum of the rows of
//! cluster `r` (its *composite*): `cos(p, C_r) = p·D_r / ‖D_r‖`, summed over `S_r`. So the
//! clustering keeps only composites.
//!
//! The split of a cluster is a 2-way spherical k-means (batch reassignment to the nearer
//! composite direction — SEED-SYSTEMS §1.2.2 allows it in place of CLUTO's incremental moves)
//! from `trials` random seed pairs; the split with the highest `‖D_1‖ + ‖D_2‖` is kept. The
//! trials run in parallel (rayon), each from its own seeded stream, so the result does not
//! depend on the thread count.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

/// A matrix whose rows are unit vectors (or zero).
pub trait Rows: Sync {
    /// Number of rows.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Number of columns.
    fn dim(&self) -> usize;
    /// `row · v` for a dense `v` of length [`dim`](Self::dim).
    fn dot(&self, row: usize, v: &[f64]) -> f64;
    /// `acc += row`.
    fn add_to(&self, row: usize, acc: &mut [f64]);
}

fn scale_to_unit(values: &mut [f64]) {
    let norm = values.iter().map(|x| x * x).sum::<f64>().sqrt();
    if norm > 0.0 {
        values.iter_mut().for_each(|x| *x /= norm);
    }
}

/// Dense rows, row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct DenseRows {
    dim: usize,
    data: Vec<f64>,
}

impl DenseRows {
    /// Rows of `dim` values each from `data` (row-major), each scaled to unit length.
    pub fn new(dim: usize, mut data: Vec<f64>) -> Self {
        assert!(
            dim > 0 && data.len().is_multiple_of(dim),
            "ragged dense rows"
        );
        data.chunks_mut(dim).for_each(scale_to_unit);
        DenseRows { dim, data }
    }

    pub(crate) fn row(&self, i: usize) -> &[f64] {
        &self.data[i * self.dim..(i + 1) * self.dim]
    }
}

impl Rows for DenseRows {
    fn len(&self) -> usize {
        self.data.len() / self.dim
    }
    fn dim(&self) -> usize {
        self.dim
    }
    fn dot(&self, row: usize, v: &[f64]) -> f64 {
        self.row(row).iter().zip(v).map(|(a, b)| a * b).sum()
    }
    fn add_to(&self, row: usize, acc: &mut [f64]) {
        acc.iter_mut().zip(self.row(row)).for_each(|(a, x)| *a += x);
    }
}

/// Sparse rows (compressed sparse rows): tf-idf vectors over a large vocabulary.
#[derive(Debug, Clone, PartialEq)]
pub struct SparseRows {
    dim: usize,
    offsets: Vec<usize>,
    columns: Vec<u32>,
    values: Vec<f64>,
}

impl SparseRows {
    /// Rows given as `(column, value)` lists (columns `< dim`), each scaled to unit length.
    pub fn new(dim: usize, rows: impl IntoIterator<Item = Vec<(u32, f64)>>) -> Self {
        let mut out = SparseRows {
            dim,
            offsets: vec![0],
            columns: Vec::new(),
            values: Vec::new(),
        };
        for row in rows {
            let start = out.values.len();
            for (c, v) in row {
                assert!((c as usize) < dim, "column {c} outside {dim}");
                out.columns.push(c);
                out.values.push(v);
            }
            scale_to_unit(&mut out.values[start..]);
            out.offsets.push(out.values.len());
        }
        out
    }

    /// The `(column, value)` entries of row `i`.
    pub(crate) fn row(&self, i: usize) -> impl Iterator<Item = (u32, f64)> + '_ {
        let range = self.offsets[i]..self.offsets[i + 1];
        self.columns[range.clone()]
            .iter()
            .copied()
            .zip(self.values[range].iter().copied())
    }
}

impl Rows for SparseRows {
    fn len(&self) -> usize {
        self.offsets.len() - 1
    }
    fn dim(&self) -> usize {
        self.dim
    }
    fn dot(&self, row: usize, v: &[f64]) -> f64 {
        self.row(row).map(|(c, x)| x * v[c as usize]).sum()
    }
    fn add_to(&self, row: usize, acc: &mut [f64]) {
        for (c, x) in self.row(row) {
            acc[c as usize] += x;
        }
    }
}

/// Parameters of [`repeated_bisection`] (CLUTO's defaults but `k`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RbcConfig {
    /// Clusters wanted (fewer come out when no cluster can be split any more).
    pub(crate) k: usize,
    /// Random seed pairs tried per bisection (CLUTO `-ntrials`, 10).
    pub(crate) trials: usize,
    /// Refinement passes per trial (CLUTO `-niter`, 10).
    pub(crate) iterations: usize,
    pub(crate) seed: u64,
}

impl RbcConfig {
    /// CLUTO's defaults with `k` clusters.
    pub fn new(k: usize, seed: u64) -> Self {
        RbcConfig {
            k,
            trials: 10,
            iterations: 10,
            seed,
        }
    }
}

/// A clustering of the rows of a matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct Clustering {
    /// Cluster of each row, `0..k`.
    pub assignment: Vec<u32>,
    /// Composite (sum of the member rows) of each cluster.
    pub(crate) composites: Vec<Vec<f64>>,
    /// Members per cluster.
    pub(crate) sizes: Vec<usize>,
}

fn norm(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

impl Clustering {
    /// Number of clusters.
    pub fn k(&self) -> usize {
        self.sizes.len()
    }

    /// The I2 criterion of this clustering (see [`i2`]).
    pub fn i2(&self) -> f64 {
        self.composites.iter().map(|d| norm(d)).sum()
    }

    /// `cos(p, C_r)` of row `row` to the centroid of its own cluster (0 for a zero row).
    pub(crate) fn cosine_to_own_centroid(&self, rows: &impl Rows, row: usize) -> f64 {
        let d = &self.composites[self.assignment[row] as usize];
        let n = norm(d);
        if n == 0.0 {
            0.0
        } else {
            rows.dot(row, d) / n
        }
    }

    /// Cosine between the centroids of clusters `a` and `b` (0 when either is all zero rows).
    pub(crate) fn centroid_cosine(&self, a: usize, b: usize) -> f64 {
        let (da, db) = (&self.composites[a], &self.composites[b]);
        let (na, nb) = (norm(da), norm(db));
        if na == 0.0 || nb == 0.0 {
            return 0.0;
        }
        da.iter().zip(db).map(|(x, y)| x * y).sum::<f64>() / (na * nb)
    }

    /// Rank of every cluster by centroid distance from cluster `from` (cosine distance
    /// `1 − cos`, nearest first; ties by cluster id): `rank[from] = 0`, the nearest other
    /// cluster 1, and so on. Papers 000 §3.1 (word-cluster rank features) and 002 §4.3
    /// (`d_CB`).
    pub(crate) fn centroid_ranks_from(&self, from: usize) -> Vec<u32> {
        let mut others: Vec<usize> = (0..self.k()).filter(|&c| c != from).collect();
        let cos: Vec<f64> = (0..self.k())
            .map(|c| self.centroid_cosine(from, c))
            .collect();
        others.sort_by(|&a, &b| cos[b].total_cmp(&cos[a]).then(a.cmp(&b)));
        let mut rank = vec![0u32; self.k()];
        for (i, c) in others.into_iter().enumerate() {
            rank[c] = i as u32 + 1;
        }
        rank
    }

    /// The members of each cluster, in row order.
    pub fn members(&self) -> Vec<Vec<u32>> {
        let mut out = vec![Vec::new(); self.k()];
        for (row, &c) in self.assignment.iter().enumerate() {
            out[c as usize].push(row as u32);
        }
        out
    }
}

/// The I2 criterion of paper 000 Eq. 3–4 (CLUTO's I2), maximised by the clustering:
/// `Θ = Σ_{r=1}^{k} Σ_{p_i ∈ S_r} cos(p_i, C_r)`, `C_r` the centroid of `S_r` — for unit rows
/// `Σ_r ‖D_r‖`, `D_r` the sum of the rows of `S_r`. Any assignment `0..k` of the rows (e.g. one
/// made by another program, for a cross-check).
pub fn i2(rows: &impl Rows, assignment: &[u32], k: usize) -> f64 {
    let mut composites = vec![vec![0.0; rows.dim()]; k];
    for (row, &c) in assignment.iter().enumerate() {
        rows.add_to(row, &mut composites[c as usize]);
    }
    composites.iter().map(|d| norm(d)).sum()
}

/// One 2-way split: the side of each member (`true` = second half) and the criterion value.
struct Split {
    second: Vec<bool>,
    value: f64,
}

/// Sum of the rows of `members` on each side.
fn composites_of(rows: &impl Rows, members: &[u32], second: &[bool]) -> [Vec<f64>; 2] {
    let mut d = [vec![0.0; rows.dim()], vec![0.0; rows.dim()]];
    for (&m, &s) in members.iter().zip(second) {
        rows.add_to(m as usize, &mut d[usize::from(s)]);
    }
    d
}

/// One trial of the 2-way spherical k-means on `members`, from the seed pair drawn by `rng`.
/// `None` when the trial found no two different directions.
fn bisect_trial(
    rows: &impl Rows,
    members: &[u32],
    iterations: usize,
    rng: &mut ChaCha8Rng,
) -> Option<Split> {
    let n = members.len();
    let dim = rows.dim();
    let as_dense = |row: u32| {
        let mut v = vec![0.0; dim];
        rows.add_to(row as usize, &mut v);
        v
    };
    // Two seeds that point in different directions (a few draws; identical rows cannot split).
    let mut centres = None;
    for _ in 0..8 {
        let a = members[rng.gen_range(0..n)];
        let b = members[rng.gen_range(0..n)];
        let (ca, cb) = (as_dense(a), as_dense(b));
        let cos: f64 = ca.iter().zip(&cb).map(|(x, y)| x * y).sum();
        if a != b && cos < 1.0 - 1e-12 {
            centres = Some([ca, cb]);
            break;
        }
    }
    let [mut c1, mut c2] = centres?;
    let mut second = vec![false; n];
    for pass in 0..iterations.max(1) {
        let mut moved = false;
        for (i, &m) in members.iter().enumerate() {
            let s = rows.dot(m as usize, &c2) > rows.dot(m as usize, &c1);
            moved |= s != second[i];
            second[i] = s;
        }
        if !moved && pass > 0 {
            break;
        }
        let [d1, d2] = composites_of(rows, members, &second);
        let (n1, n2) = (norm(&d1), norm(&d2));
        if n1 == 0.0 || n2 == 0.0 {
            return None;
        }
        c1 = d1.iter().map(|x| x / n1).collect();
        c2 = d2.iter().map(|x| x / n2).collect();
    }
    let [d1, d2] = composites_of(rows, members, &second);
    let sizes = second.iter().filter(|&&s| s).count();
    if sizes == 0 || sizes == n {
        return None;
    }
    Some(Split {
        value: norm(&d1) + norm(&d2),
        second,
    })
}

/// The best of `trials` bisections of `members` (ties: the earlier trial), or `None` when the
/// members cannot be split (all rows point the same way).
fn bisect(rows: &impl Rows, members: &[u32], config: &RbcConfig, split: u64) -> Option<Split> {
    if members.len() < 2 {
        return None;
    }
    (0..config.trials.max(1))
        .into_par_iter()
        .map(|trial| {
            let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
            // A stream per (bisection, trial): independent of scheduling.
            rng.set_stream(split * 1_000_003 + trial as u64);
            bisect_trial(rows, members, config.iterations, &mut rng).map(|s| (trial, s))
        })
        .collect::<Vec<_>>()
        .into_iter()
        .flatten()
        .max_by(|(ta, a), (tb, b)| a.value.total_cmp(&b.value).then(tb.cmp(ta)))
        .map(|(_, s)| s)
}

/// Clusters the rows into (at most) `config.k` clusters by repeated bisection (paper 000 §3.3):
/// start from one cluster and split the largest splittable one until there are `k`. Zero rows
/// go wherever the split puts them (they change no criterion). Deterministic for a seed.
pub fn repeated_bisection(rows: &impl Rows, config: &RbcConfig) -> Clustering {
    let n = rows.len();
    let mut clusters: Vec<Vec<u32>> = if n == 0 {
        Vec::new()
    } else {
        vec![(0..n as u32).collect()]
    };
    let mut splittable: Vec<bool> = vec![true; clusters.len()];
    let mut splits = 0u64;
    while clusters.len() < config.k {
        // The largest cluster that may still split (ties: the lower cluster id).
        let Some(target) = (0..clusters.len())
            .filter(|&c| splittable[c] && clusters[c].len() > 1)
            .max_by(|&a, &b| clusters[a].len().cmp(&clusters[b].len()).then(b.cmp(&a)))
        else {
            break;
        };
        splits += 1;
        match bisect(rows, &clusters[target], config, splits) {
            None => splittable[target] = false,
            Some(split) => {
                let members = std::mem::take(&mut clusters[target]);
                let (second, first): (Vec<_>, Vec<_>) = members
                    .into_iter()
                    .zip(&split.second)
                    .partition(|(_, &s)| s);
                clusters[target] = first.into_iter().map(|(m, _)| m).collect();
                clusters.push(second.into_iter().map(|(m, _)| m).collect());
                splittable.push(true);
            }
        }
    }
    let mut assignment = vec![0u32; n];
    for (c, members) in clusters.iter().enumerate() {
        for &m in members {
            assignment[m as usize] = c as u32;
        }
    }
    let composites = clusters
        .iter()
        .map(|members| {
            let mut d = vec![0.0; rows.dim()];
            for &m in members {
                rows.add_to(m as usize, &mut d);
            }
            d
        })
        .collect();
    Clustering {
        assignment,
        composites,
        sizes: clusters.iter().map(Vec::len).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three well-separated directions with jitter.
    fn three_directions(per: usize) -> DenseRows {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut data = Vec::new();
        for axis in 0..3 {
            for _ in 0..per {
                for d in 0..4 {
                    let base = if d == axis { 1.0 } else { 0.0 };
                    data.push(base + rng.gen_range(0.0..0.1));
                }
            }
        }
        DenseRows::new(4, data)
    }

    #[test]
    fn separated_directions_come_out_as_the_clusters() {
        let rows = three_directions(30);
        let c = repeated_bisection(&rows, &RbcConfig::new(3, 1));
        assert_eq!(c.k(), 3);
        assert_eq!(c.sizes.iter().sum::<usize>(), 90);
        for group in 0..3 {
            let first = c.assignment[group * 30];
            assert!(c.assignment[group * 30..(group + 1) * 30]
                .iter()
                .all(|&a| a == first));
        }
        // The criterion is the sum of cosines to the own centroid (Eq. 3–4 as written).
        let direct: f64 = (0..rows.len())
            .map(|r| c.cosine_to_own_centroid(&rows, r))
            .sum();
        assert!((direct - c.i2()).abs() < 1e-9);
        assert!((i2(&rows, &c.assignment, 3) - c.i2()).abs() < 1e-9);
        // Nearly the maximum: every row almost on its centroid.
        assert!(c.i2() > 0.98 * 90.0, "{}", c.i2());
        // One cluster is the trivial clustering: less than three.
        assert!(i2(&rows, &vec![0; 90], 1) < c.i2() - 10.0);
    }

    #[test]
    fn deterministic_for_a_seed_and_criterion_grows_with_k() {
        let rows = three_directions(40);
        let a = repeated_bisection(&rows, &RbcConfig::new(6, 9));
        let b = repeated_bisection(&rows, &RbcConfig::new(6, 9));
        assert_eq!(a, b);
        let mut last = 0.0;
        for k in 1..=6 {
            let v = repeated_bisection(&rows, &RbcConfig::new(k, 9)).i2();
            assert!(v >= last - 1e-9, "k = {k}: {v} < {last}");
            last = v;
        }
    }

    #[test]
    fn identical_rows_stop_the_splitting_and_sparse_equals_dense() {
        let same = DenseRows::new(2, vec![1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 0.0, 0.0]);
        let c = repeated_bisection(&same, &RbcConfig::new(4, 0));
        assert_eq!(c.k(), 1, "nothing to split: one direction (and a zero row)");
        let dense = three_directions(10);
        let sparse = SparseRows::new(
            4,
            (0..dense.len()).map(|r| {
                dense
                    .row(r)
                    .iter()
                    .enumerate()
                    .filter(|(_, &x)| x != 0.0)
                    .map(|(c, &x)| (c as u32, x))
                    .collect()
            }),
        );
        let cd = repeated_bisection(&dense, &RbcConfig::new(3, 2));
        let cs = repeated_bisection(&sparse, &RbcConfig::new(3, 2));
        assert_eq!(cd.assignment, cs.assignment);
        assert!((cd.i2() - cs.i2()).abs() < 1e-9);
    }

    #[test]
    fn centroid_ranks_put_the_own_cluster_first_and_the_nearest_next() {
        // Directions: x, slightly off x, y.
        let rows = DenseRows::new(
            2,
            vec![
                1.0, 0.0, 1.0, 0.01, 0.9, 0.5, 0.88, 0.52, 0.0, 1.0, 0.01, 1.0,
            ],
        );
        let c = repeated_bisection(&rows, &RbcConfig::new(3, 3));
        assert_eq!(c.k(), 3);
        let x = c.assignment[0] as usize;
        let mid = c.assignment[2] as usize;
        let y = c.assignment[4] as usize;
        let from_x = c.centroid_ranks_from(x);
        assert_eq!((from_x[x], from_x[mid], from_x[y]), (0, 1, 2));
        let from_y = c.centroid_ranks_from(y);
        assert_eq!((from_y[y], from_y[mid], from_y[x]), (0, 1, 2));
    }
}
