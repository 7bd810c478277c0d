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
//!
//! # Groups
//!
//! Pages of one directory tend to change alike (paper 002's premise; Cho & Ntoulas,
//! "Effective change detection using sampling", VLDB 2002), so what a crawler saw of a page's
//! neighbours says something of a page it never visited. With [`RateMixture::set_groups`],
//! each group `g` has its own prior, the site's `π` plus its visited pages' posteriors under
//! `π`, in pseudo-pages `s` of site prior:
//!
//! `π_g = (s·π + Σ_{q ∈ g visited} post_q) / (s + n_g)`,
//!
//! a Dirichlet smoothing of the group's empirical distribution towards the site's (the
//! one-step empirical-Bayes form of a two-level mixture). A visited page's posterior is
//! `π_{g∖p} · L_p`, normalised, where `π_{g∖p}` leaves the page's own posterior out of its
//! group's sum (its visits count once, in `L_p`). Each fit picks `s` among
//! `GROUP_STRENGTHS` by the leave-one-out marginal likelihood of the visited pages' visits,
//! `Σ_p ln Σ_j π_{g∖p, j} L_p(λ_j)`: on a site whose directories change alike, `s = ∞`
//! (the site's prior) wins and the groups change nothing; ties go to the larger `s`. While
//! every visited page is in one group, that group is the site and the groups are not used
//! (bit for bit the site's mixture). Between a visit and the next fit, a page visited since
//! takes its group's prior of the last fit. A fit with groups costs
//! `O(visited pages × 41 × 11)` more, and keeps 41 more `f64` per visited page.

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
    /// Groups of pages that may share more of their rates than the site does (directories),
    /// once [`RateMixture::set_groups`] was called.
    groups: Option<Groups>,
}

/// A page in no group ([`RateMixture::set_groups`]).
pub const NO_GROUP: u32 = u32::MAX;

/// Weights of the site prior in a group's prior, in pseudo-pages, among which each fit picks
/// the one under which the visited pages' own visits are likeliest (∞: groups ignored).
const GROUP_STRENGTHS: [f64; 11] = [
    0.5,
    1.0,
    2.0,
    4.0,
    8.0,
    16.0,
    32.0,
    64.0,
    128.0,
    256.0,
    f64::INFINITY,
];

/// The group priors of a [`RateMixture`] (see the module docs, § Groups).
#[derive(Debug, Clone, Default)]
struct Groups {
    /// Per page, its group or [`NO_GROUP`].
    of: Vec<u32>,
    /// The strength chosen by the last fit ([`GROUP_STRENGTHS`]).
    strength: f64,
    /// Per group (one grid row each), the sum of its visited pages' posteriors under the
    /// site prior, as of the last fit.
    sums: Vec<f64>,
    /// Per group, how many visited pages `sums` adds up.
    visited: Vec<f64>,
    /// Per group (one grid row each), the prior of a page of the group never visited.
    priors: Vec<f64>,
    /// Per visited page, in the rows of `log_likelihood`: its posterior under its group's
    /// prior left without its own visits.
    posteriors: Vec<f64>,
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
            groups: None,
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
    pub(crate) fn grow(&mut self, pages: usize) {
        if pages > self.row_of.len() {
            self.row_of.resize(pages, NO_ROW);
        }
        if let Some(g) = &mut self.groups {
            if pages > g.of.len() {
                g.of.resize(pages, NO_GROUP);
            }
        }
    }

    /// Puts each page `p` in group `group_of[p]` (dense ids, or [`NO_GROUP`]; pages past the
    /// end in none) from the next [`fit`](Self::fit) on: a page's prior is then its group's
    /// (see the module docs, § Groups).
    pub fn set_groups(&mut self, group_of: &[u32]) {
        let g = self.groups.get_or_insert_with(Groups::default);
        g.of.clear();
        g.of.extend_from_slice(group_of);
        if g.of.len() < self.row_of.len() {
            g.of.resize(self.row_of.len(), NO_GROUP);
        }
    }

    /// The pseudo-pages of site prior in each group's prior, as chosen by the last fit (∞ when
    /// the groups do not tell the pages' rates apart better than the site does, or without
    /// groups).
    pub fn group_strength(&self) -> f64 {
        self.groups
            .as_ref()
            .filter(|g| !g.sums.is_empty())
            .map_or(f64::INFINITY, |g| g.strength)
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
        if let Some((groups, g)) = self.fitted_group(page) {
            let mut posterior = vec![0.0; j];
            normalised_posterior_into(
                &mut posterior,
                &groups.priors[g * j..(g + 1) * j],
                &self.log_likelihood[row * j..(row + 1) * j],
            );
            let groups = self
                .groups
                .as_mut()
                .expect("a group prior comes from groups");
            if groups.posteriors.len() < (row + 1) * j {
                groups.posteriors.resize((row + 1) * j, 0.0);
            }
            groups.posteriors[row * j..(row + 1) * j].copy_from_slice(&posterior);
        }
    }

    /// The fitted groups and `page`'s group in them; `None` without fitted groups or for a
    /// page in none. (A page visited since the last fit takes its group's prior of that fit,
    /// which still holds the page's earlier evidence until the next fit.)
    fn fitted_group(&self, page: usize) -> Option<(&Groups, usize)> {
        let groups = self.groups.as_ref().filter(|g| !g.sums.is_empty())?;
        let group = *groups.of.get(page).filter(|&&g| g != NO_GROUP)?;
        Some((groups, group as usize))
    }

    /// Recomputes the posterior of row `row`: `π_j · L(λ_j)`, normalised (the prior when the
    /// likelihood rules out every rate the prior allows).
    fn update_posterior(&mut self, row: usize) {
        let j = self.rates.len();
        normalised_posterior_into(
            &mut self.posteriors[row * j..(row + 1) * j],
            &self.weights,
            &self.log_likelihood[row * j..(row + 1) * j],
        );
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
        self.fit_groups();
    }

    /// The group priors (module docs, § Groups), after the site's: each group's sum of its
    /// visited pages' site posteriors, the strength under which the visited pages' own visits
    /// are likeliest (each page judged under its group's prior without it: leave one out),
    /// then every visited page's posterior under that prior.
    fn fit_groups(&mut self) {
        let j = self.rates.len();
        let Some(mut groups) = self.groups.take() else {
            return;
        };
        let count = groups
            .of
            .iter()
            .filter(|&&g| g != NO_GROUP)
            .map(|&g| g as usize + 1)
            .max()
            .unwrap_or(0);
        groups.sums = vec![0.0; count * j];
        groups.visited = vec![0.0; count];
        // (page's group, its row) of every visited page in a group, in page order.
        let members: Vec<(usize, usize)> = (0..self.row_of.len())
            .filter_map(|p| {
                let g = *groups.of.get(p).filter(|&&g| g != NO_GROUP)? as usize;
                Some((g, self.row_index(p)?))
            })
            .collect();
        // One group among the visited pages is the site itself: its prior is the site's.
        if members.windows(2).all(|w| w[0].0 == w[1].0) {
            groups.sums.clear();
            self.groups = Some(groups);
            return;
        }
        for &(g, r) in &members {
            for (s, w) in groups.sums[g * j..(g + 1) * j]
                .iter_mut()
                .zip(&self.posteriors[r * j..(r + 1) * j])
            {
                *s += w;
            }
            groups.visited[g] += 1.0;
        }
        let likelihoods: Vec<Vec<f64>> = members
            .iter()
            .map(|&(_, r)| scaled_likelihood(&self.log_likelihood[r * j..(r + 1) * j]).collect())
            .collect();
        let mut prior = vec![0.0; j];
        // Ascending strengths, ∞ last: on a tie the weaker grouping wins.
        let mut best = (f64::NEG_INFINITY, f64::INFINITY);
        for &strength in &GROUP_STRENGTHS {
            let mut score = 0.0;
            for (&(g, r), l) in members.iter().zip(&likelihoods) {
                self.group_prior_into(&groups, g, Some(r), strength, &mut prior);
                score += prior.iter().zip(l).map(|(w, l)| w * l).sum::<f64>().ln();
            }
            if score >= best.0 {
                best = (score, strength);
            }
        }
        groups.strength = best.1;

        groups.priors = vec![0.0; count * j];
        for g in 0..count {
            self.group_prior_into(&groups, g, None, groups.strength, &mut prior);
            groups.priors[g * j..(g + 1) * j].copy_from_slice(&prior);
        }
        groups.posteriors = vec![0.0; self.posteriors.len()];
        for &(g, r) in &members {
            self.group_prior_into(&groups, g, Some(r), groups.strength, &mut prior);
            normalised_posterior_into(
                &mut groups.posteriors[r * j..(r + 1) * j],
                &prior,
                &self.log_likelihood[r * j..(r + 1) * j],
            );
        }
        self.groups = Some(groups);
    }

    /// Group `g`'s prior at `strength`: `(s·π + Σ_{q ∈ g} post_q) / (s + n_g)` over its visited
    /// pages' site posteriors, leaving out row `without` (a member), or the site's `π` at
    /// `s = ∞`.
    fn group_prior_into(
        &self,
        groups: &Groups,
        g: usize,
        without: Option<usize>,
        strength: f64,
        out: &mut [f64],
    ) {
        let j = self.rates.len();
        if strength.is_infinite() {
            out.copy_from_slice(&self.weights);
            return;
        }
        let mut n = groups.visited[g];
        out.copy_from_slice(&groups.sums[g * j..(g + 1) * j]);
        if let Some(r) = without {
            for (o, w) in out.iter_mut().zip(&self.posteriors[r * j..(r + 1) * j]) {
                *o -= w;
            }
            n -= 1.0;
        }
        for (o, w) in out.iter_mut().zip(&self.weights) {
            *o = ((strength * w + *o) / (strength + n)).max(0.0);
        }
    }

    /// The posterior weights of `page`'s rate over the grid (the prior for a page never
    /// visited).
    pub fn posterior(&self, page: usize) -> &[f64] {
        let j = self.rates.len();
        match (self.fitted_group(page), self.row_index(page)) {
            (Some((groups, _)), Some(r)) if (r + 1) * j <= groups.posteriors.len() => {
                &groups.posteriors[r * j..(r + 1) * j]
            }
            (Some((groups, g)), None) => &groups.priors[g * j..(g + 1) * j],
            // Without groups, or visited since the last fit before it had a group: the site's.
            (_, Some(r)) => &self.posteriors[r * j..(r + 1) * j],
            (None, None) => &self.weights,
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
        weighted_sum(posterior, self.rates.iter().map(|&rate| f(rate)))
    }

    /// [`expectation`](Self::expectation) of a function given by its `values` at the grid's
    /// rates, the same sum bit for bit: callers evaluating one function for many pages compute
    /// its values once.
    pub(crate) fn expectation_of(&self, posterior: &[f64], values: &[f64]) -> f64 {
        weighted_sum(posterior, values.iter().copied())
    }

    /// The posterior mean rate of every page.
    pub(crate) fn mean_rates(&self) -> Vec<f64> {
        (0..self.row_of.len())
            .map(|p| self.expectation(self.posterior(p), |r| r))
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
pub(crate) fn visit_log_likelihood(rate: f64, interval: f64, changed: bool) -> f64 {
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

/// `Σ_j w_j · v_j` over the grid points of positive weight, in grid order.
fn weighted_sum(weights: &[f64], values: impl Iterator<Item = f64>) -> f64 {
    weights
        .iter()
        .zip(values)
        .filter(|(w, _)| **w > 0.0)
        .map(|(w, v)| w * v)
        .sum()
}

/// `π_j · L(λ_j)`, normalised, into `out`, from the prior `π` and log-likelihoods (the prior
/// when the likelihood rules out every rate the prior allows).
fn normalised_posterior_into(out: &mut [f64], prior: &[f64], log_likelihood: &[f64]) {
    for ((o, l), w) in out
        .iter_mut()
        .zip(scaled_likelihood(log_likelihood))
        .zip(prior)
    {
        *o = l * w;
    }
    let total: f64 = out.iter().sum();
    if total > 0.0 {
        out.iter_mut().for_each(|w| *w /= total);
    } else {
        out.copy_from_slice(prior);
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

    /// Two directories of 40 pages: in one every page changes at every visit, in the other
    /// none ever does. Half of each is visited; the other half's priors follow their
    /// directory, the chosen strength is finite, and the site-wide prior sits in between.
    #[test]
    fn a_directory_whose_pages_change_lifts_its_unvisited_pages() {
        let pages = 80;
        let groups: Vec<u32> = (0..pages).map(|p| (p / 40) as u32).collect();
        let mut grouped = RateMixture::new(pages);
        grouped.set_groups(&groups);
        let mut site = RateMixture::new(pages);
        for m in [&mut grouped, &mut site] {
            for p in (0..20).chain(40..60) {
                for _ in 0..3 {
                    m.observe(p, 2.0, p < 40);
                }
            }
            for _ in 0..5 {
                m.fit();
            }
        }
        assert!(grouped.group_strength().is_finite());
        let (busy, quiet) = (grouped.mean_rates()[30], grouped.mean_rates()[70]);
        let flat = site.mean_rates()[30];
        assert_eq!(
            flat,
            site.mean_rates()[70],
            "one prior for every unvisited page"
        );
        assert!(quiet < flat && flat < busy, "{quiet} {flat} {busy}");
        // A visited page's own evidence still decides most of its posterior.
        assert!(grouped.mean_rates()[0] > 0.3 && grouped.mean_rates()[40] < 0.05);
    }

    /// Directories that change alike: the groups are not told apart by the visits, the site's
    /// prior (strength ∞) wins or comes close, and unvisited pages keep about the site's prior.
    #[test]
    fn directories_that_change_alike_keep_the_sites_prior() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let pages = 400;
        let groups: Vec<u32> = (0..pages).map(|p| (p % 10) as u32).collect();
        let mut grouped = RateMixture::new(pages);
        grouped.set_groups(&groups);
        let mut site = RateMixture::new(pages);
        let visits: Vec<(usize, bool)> = (0..pages / 2)
            .flat_map(|p| {
                let rate = if rng.gen::<f64>() < 0.3 { 0.5 } else { 0.01 };
                (0..3)
                    .map(|_| (p, rng.gen::<f64>() < 1.0 - (-rate * 2.0f64).exp()))
                    .collect::<Vec<_>>()
            })
            .collect();
        for m in [&mut grouped, &mut site] {
            for &(p, changed) in &visits {
                m.observe(p, 2.0, changed);
            }
            for _ in 0..5 {
                m.fit();
            }
        }
        let flat = site.mean_rates()[pages - 1];
        for p in pages / 2..pages {
            let r = grouped.mean_rates()[p];
            assert!(
                (r - flat).abs() < 0.25 * flat,
                "page {p}: {r} against {flat}"
            );
        }
    }

    /// Every visited page in one group: the group is the site, and the result is the site's
    /// mixture bit for bit.
    #[test]
    fn one_group_is_the_site() {
        let mut grouped = RateMixture::new(6);
        grouped.set_groups(&[0, 0, 0, 0, 1, NO_GROUP]);
        let mut site = RateMixture::new(6);
        for m in [&mut grouped, &mut site] {
            m.observe(0, 2.0, true);
            m.observe(1, 3.0, false);
            m.observe(2, 1.0, true);
            m.observe(5, 4.0, false);
            m.fit();
            m.observe(3, 2.0, true);
            m.fit();
        }
        assert_eq!(grouped.mean_rates(), site.mean_rates());
        assert_eq!(grouped.group_strength(), f64::INFINITY);
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
