//! Change rates of many pages learned together: an empirical-Bayes prior over Poisson rates,
//! estimated from every page's visits, and each page's posterior under it.
//!
//! Web pages differ in how often they change by orders of magnitude, and most change rarely
//! or never (Cho & Garcia-Molina, "The evolution of the Web and implications for an
//! incremental crawler", VLDB 2000, §4; Brewington & Cybenko, "How dynamic is the Web?",
//! WWW9 2000; Olston & Pandey, "Recrawl scheduling based on information longevity", WWW 2008).
//! A crawler that has visited a page once or not at all knows little of its own rate, so what
//! it should expect is what pages like it do: the *distribution* of rates over the site, not
//! one pooled rate. A pooled point rate treats every unvisited page as a page of average
//! rate, and the chance that such a page changed over a long wait, `1 − e^{−λ̄k}`, overstates
//! the chance under a spread of rates, `E[1 − e^{−λk}]`, whenever most pages change rarely
//! (Jensen: `1 − e^{−λk}` is concave in `λ`).
//!
//! [`RateMixture`] keeps the rates on a fixed grid (0 and log-spaced rates per unit) and
//! estimates the prior weights `π_j` by maximum marginal likelihood over the pages visited so
//! far: the non-parametric maximum-likelihood estimate of a mixing distribution (Kiefer &
//! Wolfowitz 1956), computed by EM (Laird, "Nonparametric maximum likelihood estimation of a
//! mixing distribution", JASA 1978). Each page's likelihood of its visits is that of
//! [`super::irregular`]: `Π_i (1 − e^{−λ t_i}) · e^{−λ U}` for intervals `t_i` that found a
//! change and a total `U` of intervals that found none. A page's posterior is
//! `π_j · L_p(λ_j)`, normalised; a page never visited has the prior itself. How visits were
//! chosen does not bias the estimate: the choice depends only on what was observed before, so
//! the likelihood is the same as under any fixed visit plan (the design is ignorable).
//!
//! Protocol: [`RateMixture::observe`] after each visit (any order), [`RateMixture::fit`] once
//! before the posteriors are read (warm-started from the previous fit, so the estimate
//! converges over the units), then [`RateMixture::posterior`], [`RateMixture::expectation`]
//! and friends. Each visited page's posterior is kept, recomputed by a fit and by a visit of
//! that page, so reading it costs nothing however often a unit reads it. Deterministic: no
//! randomness, a fixed number of EM iterations per fit, pages summed in page order. Memory: one
//! `u32` per page and 82 `f64` per page visited at least once (likelihood and posterior); a fit costs
//! `O(visited pages × 41 × EM iterations)`.

/// Rates of the grid other than 0: log-spaced from this many changes per unit…
const LOWEST_RATE: f64 = 1e-4;
/// …to this many (at 10 per unit a page all but surely changes between two visits).
const HIGHEST_RATE: f64 = 10.0;
/// Grid points, the rate 0 included.
const GRID_POINTS: usize = 41;
/// EM iterations per fit (warm-started: they add up over the units).
const EM_ITERATIONS: usize = 25;
/// Weight of the starting distribution, in pages, kept in every fit as a Dirichlet prior on
/// `π`, so that a grid point no page has ruled out keeps a little mass.
const PRIOR_PAGES: f64 = 1.0;

/// The empirical-Bayes distribution of change rates and every page's visit likelihood.
#[derive(Debug, Clone)]
pub struct RateMixture {
    rates: Vec<f64>,
    /// Prior weights `π_j` over `rates`.
    weights: Vec<f64>,
    /// The starting distribution (also the Dirichlet prior of every fit).
    start: Vec<f64>,
    /// Per visited page, `ln L_p(λ_j)` for every grid point: one row per page, in the order
    /// pages were first visited (only visited pages take memory).
    log_likelihood: Vec<f64>,
    /// Per visited page, its posterior weights under `weights`, in the rows of
    /// `log_likelihood`.
    posteriors: Vec<f64>,
    /// Per page, its row in `log_likelihood` and `posteriors`, or [`NO_ROW`] while it was
    /// never visited.
    row_of: Vec<u32>,
}

/// `row_of` of a page never visited.
const NO_ROW: u32 = u32::MAX;

impl RateMixture {
    /// A mixture for `pages` pages, starting (before any visit) from weights uniform over the
    /// grid: nothing is assumed of the site's rates but their range.
    pub fn new(pages: usize) -> Self {
        let rates = grid();
        let start = vec![1.0 / rates.len() as f64; rates.len()];
        RateMixture {
            weights: start.clone(),
            start,
            log_likelihood: Vec::new(),
            posteriors: Vec::new(),
            row_of: vec![NO_ROW; pages],
            rates,
        }
    }

    /// The grid's rates (per unit), 0 first.
    pub fn rates(&self) -> &[f64] {
        &self.rates
    }

    /// The prior weights `π_j` of the last fit.
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }

    /// Makes room for pages `0..pages`, unvisited.
    pub fn grow(&mut self, pages: usize) {
        if pages > self.row_of.len() {
            self.row_of.resize(pages, NO_ROW);
        }
    }

    /// Records a visit of `page` that ended an interval of `interval` units since the previous
    /// one, and whether it found a change.
    pub fn observe(&mut self, page: usize, interval: f64, changed: bool) {
        self.grow(page + 1);
        let interval = interval.max(1.0);
        let j = self.rates.len();
        if self.row_of[page] == NO_ROW {
            self.row_of[page] = (self.log_likelihood.len() / j) as u32;
            self.log_likelihood
                .resize(self.log_likelihood.len() + j, 0.0);
            self.posteriors.resize(self.posteriors.len() + j, 0.0);
        }
        let row = self.row_of[page] as usize;
        for (l, &rate) in self.log_likelihood[row * j..(row + 1) * j]
            .iter_mut()
            .zip(&self.rates)
        {
            *l += visit_log_likelihood(rate, interval, changed);
        }
        self.update_posterior(row);
    }

    /// Recomputes the posterior of row `row`: `π_j · L(λ_j)`, normalised (the prior when the
    /// likelihood rules out every rate the prior allows).
    fn update_posterior(&mut self, row: usize) {
        let j = self.rates.len();
        let likelihood = &self.log_likelihood[row * j..(row + 1) * j];
        let out = &mut self.posteriors[row * j..(row + 1) * j];
        for ((o, l), w) in out
            .iter_mut()
            .zip(scaled_likelihood(likelihood))
            .zip(&self.weights)
        {
            *o = l * w;
        }
        let total: f64 = out.iter().sum();
        if total > 0.0 {
            out.iter_mut().for_each(|w| *w /= total);
        } else {
            out.copy_from_slice(&self.weights);
        }
    }

    /// Re-estimates the prior weights from the visited pages (EM, warm-started).
    pub fn fit(&mut self) {
        let j = self.rates.len();
        // Each visited page's likelihood over the grid, scaled to a maximum of 1.
        let likelihoods: Vec<f64> = (0..self.row_of.len())
            .filter_map(|p| self.row(p))
            .flat_map(scaled_likelihood)
            .collect();
        let pages = likelihoods.len() / j;
        if pages == 0 {
            return;
        }
        debug_assert_eq!(pages * j, self.posteriors.len());
        let mut next = vec![0.0; j];
        for _ in 0..EM_ITERATIONS {
            next.iter_mut()
                .zip(&self.start)
                .for_each(|(n, s)| *n = PRIOR_PAGES * s);
            for l in likelihoods.chunks_exact(j) {
                let total: f64 = l.iter().zip(&self.weights).map(|(l, w)| l * w).sum();
                if total > 0.0 {
                    for ((n, l), w) in next.iter_mut().zip(l).zip(&self.weights) {
                        *n += l * w / total;
                    }
                }
            }
            let sum: f64 = next.iter().sum();
            self.weights
                .iter_mut()
                .zip(&next)
                .for_each(|(w, n)| *w = n / sum);
        }
        for row in 0..pages {
            self.update_posterior(row);
        }
    }

    /// The posterior weights of `page`'s rate over the grid (the prior for a page never
    /// visited).
    pub fn posterior(&self, page: usize) -> &[f64] {
        match self.row_index(page) {
            Some(r) => &self.posteriors[r * self.rates.len()..(r + 1) * self.rates.len()],
            None => &self.weights,
        }
    }

    /// Whether any visit informed `page`'s likelihood (otherwise its posterior is the prior).
    pub fn visited(&self, page: usize) -> bool {
        self.row_index(page).is_some()
    }

    /// `page`'s row, once visited.
    fn row_index(&self, page: usize) -> Option<usize> {
        match self.row_of.get(page) {
            Some(&r) if r != NO_ROW => Some(r as usize),
            _ => None,
        }
    }

    /// `page`'s log-likelihood row, once visited.
    fn row(&self, page: usize) -> Option<&[f64]> {
        let j = self.rates.len();
        self.row_index(page)
            .map(|r| &self.log_likelihood[r * j..(r + 1) * j])
    }

    /// `E[f(λ)]` under the weights `posterior` (from [`RateMixture::posterior`]).
    pub fn expectation(&self, posterior: &[f64], f: impl Fn(f64) -> f64) -> f64 {
        posterior
            .iter()
            .zip(&self.rates)
            .filter(|(w, _)| **w > 0.0)
            .map(|(w, &rate)| w * f(rate))
            .sum()
    }

    /// The posterior mean rate of every page.
    pub fn mean_rates(&self) -> Vec<f64> {
        let prior_mean = self.expectation(&self.weights, |r| r);
        (0..self.row_of.len())
            .map(|p| {
                if self.visited(p) {
                    self.expectation(self.posterior(p), |r| r)
                } else {
                    prior_mean
                }
            })
            .collect()
    }
}

/// `0` and `GRID_POINTS − 1` rates log-spaced over `[LOWEST_RATE, HIGHEST_RATE]`.
fn grid() -> Vec<f64> {
    let steps = (GRID_POINTS - 2) as f64;
    let ratio = (HIGHEST_RATE / LOWEST_RATE).ln();
    std::iter::once(0.0)
        .chain((0..GRID_POINTS - 1).map(|i| LOWEST_RATE * (ratio * i as f64 / steps).exp()))
        .collect()
}

/// `ln P(visit outcome | λ)` for one interval: `ln(1 − e^{−λt})` if it found a change,
/// `−λt` otherwise (Cho & Garcia-Molina 2003, §5).
pub fn visit_log_likelihood(rate: f64, interval: f64, changed: bool) -> f64 {
    if changed {
        if rate <= 0.0 {
            f64::NEG_INFINITY
        } else {
            (-(-rate * interval).exp_m1()).ln()
        }
    } else {
        -rate * interval
    }
}

/// `L(λ_j) / max_j L(λ_j)` from log-likelihoods.
fn scaled_likelihood(log_likelihood: &[f64]) -> impl Iterator<Item = f64> + '_ {
    let top = log_likelihood
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    log_likelihood.iter().map(move |&l| {
        if top.is_finite() {
            (l - top).exp()
        } else {
            1.0
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grid_and_the_starting_distribution() {
        let m = RateMixture::new(3);
        assert_eq!(m.rates().len(), GRID_POINTS);
        assert_eq!(m.rates()[0], 0.0);
        assert!((m.rates()[1] - LOWEST_RATE).abs() < 1e-15);
        assert!((m.rates()[GRID_POINTS - 1] - HIGHEST_RATE).abs() < 1e-9);
        assert!(m.rates().windows(2).all(|w| w[0] < w[1]));
        assert!((m.weights().iter().sum::<f64>() - 1.0).abs() < 1e-12);
        // An unvisited page's posterior is the prior.
        assert_eq!(m.posterior(1), m.weights());
    }

    #[test]
    fn a_change_rules_out_the_rate_zero_and_an_unchanged_visit_lowers_the_rate() {
        let mut m = RateMixture::new(3);
        m.observe(0, 4.0, true);
        m.observe(1, 4.0, false);
        assert_eq!(m.posterior(0)[0], 0.0);
        let changed = m.expectation(m.posterior(0), |r| r);
        let unchanged = m.expectation(m.posterior(1), |r| r);
        let prior = m.expectation(m.posterior(2), |r| r);
        assert!(
            unchanged < prior && prior < changed,
            "{unchanged} {prior} {changed}"
        );
    }

    /// Pages drawn from two rates, visited at mixed intervals: the fitted prior puts its mass
    /// near the two rates, in the right shares, and the posterior of a page that changed at
    /// every visit is near the high rate.
    #[test]
    fn em_recovers_a_two_point_mixture() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let pages = 4000;
        let mut m = RateMixture::new(pages);
        let mut truth = Vec::new();
        for p in 0..pages {
            let rate = if p % 5 == 0 { 0.5 } else { 0.0 };
            truth.push(rate);
            for _ in 0..4 {
                let interval = f64::from(rng.gen_range(1..=8u32));
                let changed = rng.gen::<f64>() < 1.0 - (-rate * interval).exp();
                m.observe(p, interval, changed);
            }
        }
        for _ in 0..8 {
            m.fit();
        }
        let w = m.weights();
        let near = |lo: f64, hi: f64| -> f64 {
            m.rates()
                .iter()
                .zip(w)
                .filter(|(r, _)| **r >= lo && **r <= hi)
                .map(|(_, w)| w)
                .sum()
        };
        // Rates below 0.01 stand for "never" over a few intervals of ≤ 8 units.
        assert!((near(0.0, 0.01) - 0.8).abs() < 0.03, "{w:?}");
        assert!((near(0.25, 1.0) - 0.2).abs() < 0.03, "{w:?}");
        let means = m.mean_rates();
        let high: Vec<f64> = (0..pages)
            .filter(|p| truth[*p] > 0.0)
            .map(|p| means[p])
            .collect();
        let low: Vec<f64> = (0..pages)
            .filter(|p| truth[*p] == 0.0)
            .map(|p| means[p])
            .collect();
        let avg = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        assert!(
            avg(&high) > 0.3 && avg(&low) < 0.05,
            "{} {}",
            avg(&high),
            avg(&low)
        );
    }

    #[test]
    fn fitting_with_no_visit_keeps_the_start_and_is_deterministic() {
        let mut a = RateMixture::new(10);
        let start = a.weights().to_vec();
        a.fit();
        assert_eq!(a.weights(), &start[..]);
        let mut b = a.clone();
        for m in [&mut a, &mut b] {
            m.observe(3, 2.0, true);
            m.observe(4, 5.0, false);
            m.grow(12);
            m.observe(11, 1.0, true);
            m.fit();
        }
        assert_eq!(a.weights(), b.weights());
        assert_eq!(a.mean_rates(), b.mean_rates());
    }
}
