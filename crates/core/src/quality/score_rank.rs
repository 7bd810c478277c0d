//! Score-to-rank functions `F_q` (paper 003 §5.1).
//!
//! For each single-term query the estimator needs, cheaply, "at which rank would a page with
//! score `s` stand?" and the converse. Paper 003 keeps an invertible piecewise-linear function
//! on log(score)/log(rank) axes with pieces of equal length in log(rank), so that the top ranks
//! (where users look) are approximated best. Because the breakpoints are equally spaced in
//! log(rank), they are implied by the list length and the piece count: a function stores only the
//! list length and the log-scores at its `pieces + 1` breakpoints — 20 bytes for the paper's 3
//! pieces, matching its "20 bytes per query".

/// Default number of pieces (paper 003 §6 used three).
pub const DEFAULT_PIECES: usize = 3;

/// An invertible piecewise-linear map between log(score) and log(rank).
#[derive(Debug, Clone, PartialEq)]
pub struct ScoreRankFn {
    /// Number of results in the list the function was fitted on.
    len: u32,
    /// `ln(score)` at breakpoint k, whose rank is `len^(k/pieces)`; non-increasing in k.
    log_scores: Vec<f32>,
    /// `ln(len)`, kept because every evaluation reads it (derived, not payload).
    ln_len: f64,
}

impl ScoreRankFn {
    /// Fits `F_q` to a result list's scores sorted in descending order (all positive).
    ///
    /// Each breakpoint takes the log of the score at its (fractional) rank, interpolated
    /// linearly in log(rank) between the neighbouring integer ranks. Returns `None` for an
    /// empty list.
    pub fn fit(scores_desc: &[f32], pieces: usize) -> Option<ScoreRankFn> {
        Self::fit_at(scores_desc.len(), pieces, |r| scores_desc[r - 1])
    }

    /// The breakpoint `k` of a fit to a list of `len` results: its fractional rank and the
    /// integer ranks `lo ≤ rank ≤ hi` (1-based) it interpolates between.
    fn breakpoint(len: usize, pieces: usize, k: usize) -> (f64, usize, usize) {
        let ln_len = (len as f64).ln();
        let ln_rank = ln_len * k as f64 / pieces as f64;
        let rank = ln_rank.exp().clamp(1.0, len as f64);
        let lo = rank.floor() as usize; // 1-based
        let hi = (lo + 1).min(len);
        (rank, lo, hi)
    }

    /// The ranks (1-based, ascending, distinct) whose scores a fit to a list of `len` results
    /// reads: [`fit_at`](Self::fit_at) needs only these, so a caller can select them from an
    /// unsorted list instead of sorting it.
    pub fn needed_ranks(len: usize, pieces: usize) -> Vec<usize> {
        let pieces = pieces.max(1);
        if len == 0 {
            return Vec::new();
        }
        let mut ranks: Vec<usize> = (0..=pieces)
            .flat_map(|k| {
                let (_, lo, hi) = Self::breakpoint(len, pieces, k);
                [lo, hi]
            })
            .collect();
        ranks.sort_unstable();
        ranks.dedup();
        ranks
    }

    /// [`fit`](Self::fit) to a list of `len` results whose score at 1-based rank `r` is
    /// `score_at(r)`; reads only the [`needed_ranks`](Self::needed_ranks).
    pub fn fit_at(
        len: usize,
        pieces: usize,
        score_at: impl Fn(usize) -> f32,
    ) -> Option<ScoreRankFn> {
        let pieces = pieces.max(1);
        if len == 0 {
            return None;
        }
        let mut log_scores = Vec::with_capacity(pieces + 1);
        let mut previous = f32::INFINITY;
        for k in 0..=pieces {
            let (rank, lo, hi) = Self::breakpoint(len, pieces, k);
            let s_lo = (score_at(lo).max(f32::MIN_POSITIVE) as f64).ln();
            let s_hi = (score_at(hi).max(f32::MIN_POSITIVE) as f64).ln();
            let frac = if hi > lo {
                (rank.ln() - (lo as f64).ln()) / ((hi as f64).ln() - (lo as f64).ln())
            } else {
                0.0
            };
            // Scores are sorted, so this is already non-increasing up to rounding; enforce it
            // so that the inverse is well defined.
            let value = ((s_lo + frac * (s_hi - s_lo)) as f32).min(previous);
            log_scores.push(value);
            previous = value;
        }
        Some(ScoreRankFn {
            len: len as u32,
            log_scores,
            ln_len: (len as f64).ln(),
        })
    }

    /// Number of results in the fitted list.
    pub fn len(&self) -> u32 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(crate) fn pieces(&self) -> usize {
        self.log_scores.len() - 1
    }

    /// Bytes of payload: the list length and the breakpoint log-scores.
    pub fn payload_bytes(&self) -> usize {
        std::mem::size_of::<u32>() + self.log_scores.len() * std::mem::size_of::<f32>()
    }

    fn ln_rank_at(&self, k: usize) -> f64 {
        self.ln_len * k as f64 / self.pieces() as f64
    }

    /// `F_q(s)`: the estimated (fractional) rank of a page scoring `s`, in `[1, len + 1]`.
    ///
    /// A score above the top maps to rank 1; below the lowest fitted score it extrapolates
    /// along the last piece, capped at `len + 1` (just after the last result).
    pub fn rank(&self, score: f32) -> f64 {
        if self.len <= 1 {
            return if score >= (self.log_scores[0] as f64).exp() as f32 {
                1.0
            } else {
                2.0
            };
        }
        let ls = (score.max(f32::MIN_POSITIVE) as f64).ln();
        let top = self.log_scores[0] as f64;
        if ls >= top {
            return 1.0;
        }
        for k in 0..self.pieces() {
            let (a, b) = (self.log_scores[k] as f64, self.log_scores[k + 1] as f64);
            let last = k + 1 == self.pieces();
            if ls >= b || last {
                let (ra, rb) = (self.ln_rank_at(k), self.ln_rank_at(k + 1));
                let ln_rank = if a > b {
                    ra + (a - ls) / (a - b) * (rb - ra)
                } else {
                    rb
                };
                return ln_rank.exp().clamp(1.0, self.len as f64 + 1.0);
            }
        }
        self.len as f64 + 1.0
    }

    /// `F_q⁻¹(r)`: the estimated score at rank `r` (ranks past the end extrapolate the last piece).
    pub fn score(&self, rank: f64) -> f64 {
        let rank = rank.max(1.0);
        if self.len <= 1 {
            return (self.log_scores[0] as f64).exp();
        }
        let lr = rank.ln();
        let step = self.ln_len / self.pieces() as f64;
        let k = ((lr / step).floor() as usize).min(self.pieces() - 1);
        let (a, b) = (self.log_scores[k] as f64, self.log_scores[k + 1] as f64);
        let t = (lr - self.ln_rank_at(k)) / step;
        (a + t * (b - a)).exp()
    }

    /// How many of the ranks `1..=len` score at least `score` (`F⁻¹(r) ≥ score`): the rank a
    /// page scoring `score` takes among the list's pages, less one, as a ranking puts an equal
    /// score behind.
    pub(crate) fn ranks_scoring_at_least(&self, score: f64) -> u64 {
        let n = u64::from(self.len);
        // ln(score) is kept in f32: a score equal to a fitted one must count as equal.
        let at_least = |r: u64| self.score(r as f64) >= score * (1.0 - 1e-5);
        if !at_least(1) {
            return 0;
        }
        // F and F⁻¹ are the same pieces, so ⌊F(s)⌋ is right but at the pieces' ends and at
        // equal scores; the steps below correct it and stop at once otherwise.
        let mut k = (self.rank(score as f32).floor() as u64).clamp(1, n);
        while k > 1 && !at_least(k) {
            k -= 1;
        }
        while k < n && at_least(k + 1) {
            k += 1;
        }
        k
    }

    /// Integer rank at which piece `k` ends (its breakpoint `k + 1`), for summing piece by piece.
    pub(crate) fn piece_end_rank(&self, k: usize) -> u64 {
        self.ln_rank_at(k + 1).exp().round().max(1.0) as u64
    }

    /// Piece `k` as a power law `F⁻¹(r) = scale · r^slope` (slope ≤ 0).
    pub(crate) fn piece_power_law(&self, k: usize) -> (f64, f64) {
        let (ra, rb) = (self.ln_rank_at(k), self.ln_rank_at(k + 1));
        let (a, b) = (self.log_scores[k] as f64, self.log_scores[k + 1] as f64);
        let slope = if rb > ra { (b - a) / (rb - ra) } else { 0.0 };
        ((a - slope * ra).exp(), slope)
    }

    /// Index of the piece that holds rank `r`.
    pub(crate) fn piece_of(&self, rank: u64) -> usize {
        if self.len <= 1 {
            return 0;
        }
        let step = self.ln_len / self.pieces() as f64;
        (((rank.max(1) as f64).ln() / step).floor() as usize).min(self.pieces() - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn power_list(n: usize, alpha: f64) -> Vec<f32> {
        (1..=n)
            .map(|r| (100.0 * (r as f64).powf(-alpha)) as f32)
            .collect()
    }

    #[test]
    fn a_pure_power_law_is_reproduced_exactly() {
        let scores = power_list(1000, 0.7);
        let f = ScoreRankFn::fit(&scores, 3).unwrap();
        for r in [1.0, 7.0, 10.0, 99.0, 500.0, 1000.0] {
            let s = f.score(r);
            let expected = 100.0 * f64::powf(r, -0.7);
            assert!(
                (s / expected - 1.0).abs() < 1e-3,
                "rank {r}: {s} vs {expected}"
            );
            assert!((f.rank(s as f32) / r - 1.0).abs() < 1e-3, "rank {r}");
        }
    }

    #[test]
    fn rank_and_score_are_inverse_and_monotone() {
        // A list that is not a power law: three regimes.
        let mut scores: Vec<f32> = (0..50).map(|i| 30.0 - i as f32 * 0.3).collect();
        scores.extend((0..300).map(|i| 15.0 - i as f32 * 0.04));
        scores.extend((0..2000).map(|i| 3.0 - i as f32 * 0.001));
        let f = ScoreRankFn::fit(&scores, 3).unwrap();
        let mut last_rank = 0.0;
        for s in [40.0f32, 30.0, 20.0, 10.0, 5.0, 2.5, 1.5, 1.1] {
            let r = f.rank(s);
            assert!(r >= last_rank, "rank must grow as score falls");
            last_rank = r;
            if r > 1.0 && r < f.len() as f64 {
                assert!((f.score(r) / s as f64 - 1.0).abs() < 1e-4);
            }
        }
        assert_eq!(f.rank(1000.0), 1.0);
        assert!(f.rank(0.001) <= f.len() as f64 + 1.0);
    }

    #[test]
    fn twenty_bytes_per_query_with_three_pieces() {
        let f = ScoreRankFn::fit(&power_list(100, 1.0), DEFAULT_PIECES).unwrap();
        assert_eq!(f.payload_bytes(), 20);
    }

    #[test]
    fn ranks_scoring_at_least_count_equal_scores_as_ahead() {
        let f = ScoreRankFn::fit(&[73.0, 1.0], 3).unwrap();
        assert_eq!(f.ranks_scoring_at_least(74.0), 0);
        assert_eq!(f.ranks_scoring_at_least(73.0), 1);
        assert_eq!(f.ranks_scoring_at_least(9.0), 1);
        assert_eq!(f.ranks_scoring_at_least(1.0), 2);
        assert_eq!(f.ranks_scoring_at_least(0.5), 2);
        let run = ScoreRankFn::fit(&[40.0, 27.0, 27.0, 27.0, 27.0], 3).unwrap();
        assert_eq!(run.ranks_scoring_at_least(27.0), 5);
        assert_eq!(run.ranks_scoring_at_least(30.0), 1);
    }

    #[test]
    fn tiny_lists() {
        assert!(ScoreRankFn::fit(&[], 3).is_none());
        let f = ScoreRankFn::fit(&[2.0], 3).unwrap();
        assert_eq!(f.rank(3.0), 1.0);
        assert_eq!(f.rank(1.0), 2.0);
        assert!((f.score(1.0) - 2.0).abs() < 1e-6);
        let g = ScoreRankFn::fit(&[2.0, 2.0, 2.0], 3).unwrap();
        assert!(g.rank(2.0) >= 1.0 && g.rank(1.0) <= 4.0);
    }
}
