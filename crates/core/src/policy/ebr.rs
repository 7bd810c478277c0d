//! Embarrassment-based refresh (EBR): Wolf, Squillante, Yu, Sethuraman & Ozsen, "Optimal
//! crawling strategies for web search engines" (WWW 2002), as paper 003 §6 adapted it (Poisson
//! updates, `d(p)` from shingles).
//!
//! Embarrassment accrues when a user is shown page `p` while its repository copy is stale and
//! the change made it irrelevant. With `w_p` = how often users are shown `p`
//! (`super::PolicyContext::view_weight`, from the workload and `I(r)`), `d_p` = the share of
//! `p`'s updates that change at least `θ_EBR` of its shingles, and `λ_p` the rate of any update,
//! the expected embarrassment is `Σ_p w_p · d_p · (1 − F(λ_p, f_p))`; minimising it under
//! `Σ f_p = B` is the weighted Lagrangian problem of [`super::freshness`] with `c_p = w_p·d_p`
//! (pages with `c_p = 0` get nothing), scheduled as in SBR.
//!
//! * Oracle: `λ_p` from all change units of the history, `d_p = (#changes ≥ θ) / #changes`
//!   (0 for a page that never changed).
//! * Online: `λ_p` from the CG estimator over observed refreshes (any change), and
//!   `d_p = (k + 1)/(X + 2)` over the `X` observed changes of which `k` reached θ (Laplace's
//!   rule: ½ before any change was seen, so an unexplored page is neither ignored nor assumed
//!   always embarrassing).

use super::family::PolicyFamily;
use super::planned::{
    online_rate, planner_from_params, Observations, PageModel, Planner, PLANNER_PARAMS,
};
use super::{ChangeHistory, PolicyContext};
use crate::change::oracle_rate;
use crate::corpus::PageId;

/// Oracle `d(p)`: the share of a page's updates whose shingle change is at least θ
/// (paper 003 §6: "the fraction of updates to page p that induce at least θ_EBR fraction of
/// the shingles to change"). 0 when the page never changed.
pub(crate) fn irrelevance_probability(shingle_changes: &[f64], theta: f64) -> f64 {
    if shingle_changes.is_empty() {
        return 0.0;
    }
    shingle_changes.iter().filter(|&&s| s >= theta).count() as f64 / shingle_changes.len() as f64
}

/// Online `d(p)` by Laplace's rule of succession, `(k + 1)/(X + 2)` (see the module docs).
pub(crate) fn online_irrelevance_probability(changes: usize, changes_at_theta: usize) -> f64 {
    (changes_at_theta as f64 + 1.0) / (changes as f64 + 2.0)
}

/// EBR's page model: weight `w_p · d_p`, rate of all updates.
#[derive(Debug, Clone)]
pub struct EbrModel {
    pub(crate) theta: f64,
    view_weight: Vec<f64>,
    /// Oracle mode: each page's `(λ_p, d_p)` over the history.
    oracle_rate_and_d: Vec<(f64, f64)>,
}

impl EbrModel {
    fn weight(&self, page: usize) -> f64 {
        self.view_weight.get(page).copied().unwrap_or(0.0).max(0.0)
    }
}

impl PageModel for EbrModel {
    fn fit_oracle(&mut self, history: &ChangeHistory) {
        self.oracle_rate_and_d = history
            .pages
            .iter()
            .map(|page| {
                let lambda = oracle_rate(page.change_units.len(), history.units);
                let d = irrelevance_probability(&page.shingle_changes, self.theta);
                (lambda, d)
            })
            .collect();
    }

    /// The history's rates and `d_p`, weighed by the views of now (as online EBR replans).
    fn oracle(&self) -> Vec<(f64, f64)> {
        self.oracle_rate_and_d
            .iter()
            .enumerate()
            .map(|(p, &(lambda, d))| (lambda, self.weight(p) * d))
            .collect()
    }

    fn online(&self, page: PageId, obs: &Observations, prior_interval: f64) -> (f64, f64) {
        let lambda = online_rate(obs, obs.changed, prior_interval);
        let d = online_irrelevance_probability(obs.changed, obs.changed_at_theta);
        (lambda, self.weight(page as usize) * d)
    }

    fn theta(&self) -> f64 {
        self.theta
    }

    fn name(&self) -> &'static str {
        "ebr"
    }

    fn prepare(&mut self, context: &PolicyContext<'_>) {
        self.view_weight = context.view_weight.to_vec();
    }

    /// Pages created after unit 0, or that became prominent since, get their weight at each
    /// replan (with unit-0 weights they would never be planned), in both modes.
    fn uses_views(&self) -> bool {
        true
    }

    fn observe_views(&mut self, view_weight: &[f64]) {
        self.view_weight = view_weight.to_vec();
    }
}

/// The EBR policy (see the module docs): a [`Planner`] of [`EbrModel`].
pub(crate) type Ebr = Planner<EbrModel>;

impl Ebr {
    /// EBR at threshold `theta ∈ [0, 1]`.
    pub(crate) fn at_threshold(theta: f64) -> Self {
        Planner::new(EbrModel {
            theta,
            view_weight: Vec::new(),
            oracle_rate_and_d: Vec::new(),
        })
    }
}

/// The `ebr` family.
pub(crate) const FAMILY: PolicyFamily = PolicyFamily {
    name: "ebr",
    description: "Wolf et al. (WWW 2002) as paper 003 adapted it: minimise expected embarrassment (views × θ-changes) under the budget",
    params: PLANNER_PARAMS,
    build: |params| {
        Ok(Box::new(planner_from_params(params, Ebr::at_threshold)))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::{context, history, run};
    use crate::policy::FitMode;
    use crate::policy::RefreshPolicy;

    #[test]
    fn d_is_the_share_of_updates_reaching_theta() {
        assert_eq!(irrelevance_probability(&[0.1, 0.5, 0.9, 0.3], 0.3), 0.75);
        assert_eq!(irrelevance_probability(&[], 0.3), 0.0);
        assert_eq!(online_irrelevance_probability(0, 0), 0.5);
        assert_eq!(online_irrelevance_probability(8, 2), 0.3);
    }

    #[test]
    fn weights_are_view_weight_times_d() {
        let h = ChangeHistoryFixture::new();
        let views = [2.0, 5.0, 0.0];
        let mut model = EbrModel {
            theta: 0.4,
            view_weight: views.to_vec(),
            oracle_rate_and_d: Vec::new(),
        };
        model.fit_oracle(&h.0);
        let p = model.oracle();
        // Page 0: 4 changes in 8 intervals, 2 of them ≥ 0.4 → λ 0.5, c = 2 · 0.5.
        assert_eq!(p[0], (0.5, 1.0));
        // Page 1: 2 changes, both small → d = 0, nothing to gain.
        assert_eq!(p[1], (0.25, 0.0));
        // Page 2: never shown.
        assert_eq!(p[2].1, 0.0);
    }

    struct ChangeHistoryFixture(crate::policy::ChangeHistory);

    impl ChangeHistoryFixture {
        fn new() -> Self {
            let mut h = history(
                9,
                &[vec![1, 3, 5, 7], vec![2, 6], vec![4]],
                &[0.0, 0.1, 1.0],
                &[],
            );
            h.pages[0].shingle_changes = vec![0.1, 0.5, 0.2, 0.9];
            ChangeHistoryFixture(h)
        }
    }

    #[test]
    fn online_ebr_replans_with_the_repository_views_it_is_sent() {
        // Page 2 is not shown to anyone at unit 0 (a page created later, say); from unit 5 the
        // repository shows it most. Online EBR asks for views when a plan is due and weighs
        // page 2 by them from then on.
        let pages = [0, 1, 2];
        let ctx = context(FitMode::Online, &pages, &[1.0, 1.0, 0.0], None, 12, 1);
        let mut ebr = Ebr::at_threshold(0.1);
        ebr.prepare(&ctx);
        let mut asked = Vec::new();
        let mut chosen_2_after = 0;
        for t in 1..=12 {
            if ebr.wants_views(t) {
                asked.push(t);
                if t >= 5 {
                    ebr.observe_views(&[1.0, 1.0, 50.0]);
                }
            }
            let chosen = ebr.choose(t, 1, &crate::policy::testkit::no_crawl());
            if t >= 5 {
                chosen_2_after += chosen.iter().filter(|&&p| p == 2).count();
            }
            ebr.observe(&[]);
        }
        assert_eq!(asked[0], 1, "the first plan is due at unit 1: {asked:?}");
        assert!(asked.len() >= 3, "replans every few units: {asked:?}");
        assert!(
            chosen_2_after >= 3,
            "page 2 refreshed {chosen_2_after} times after unit 5"
        );
        // Oracle EBR replans on the views of now as well (an oracle knows at least what its
        // online form knows): page 2 changes as often as the others and is refreshed once it
        // is shown.
        let h = history(
            13,
            &[(1..=12).collect(), (1..=12).collect(), (1..=12).collect()],
            &[1.0; 3],
            &[],
        );
        let oracle = context(FitMode::Oracle, &pages, &[1.0, 1.0, 0.0], Some(&h), 12, 1);
        let mut ebr = Ebr::at_threshold(0.1);
        ebr.prepare(&oracle);
        let (mut asked, mut chosen_2_before, mut chosen_2_after) = (Vec::new(), 0, 0);
        for t in 1..=12 {
            if ebr.wants_views(t) {
                asked.push(t);
                if t >= 5 {
                    ebr.observe_views(&[1.0, 1.0, 50.0]);
                }
            }
            let chosen = ebr.choose(t, 1, &crate::policy::testkit::no_crawl());
            let twos = chosen.iter().filter(|&&p| p == 2).count();
            if t >= 5 {
                chosen_2_after += twos;
            } else {
                chosen_2_before += twos;
            }
            ebr.observe(&[]);
        }
        assert!(asked.len() >= 3 && asked[0] == 1, "{asked:?}");
        assert_eq!(
            chosen_2_before, 0,
            "page 2 is shown to nobody before unit 5"
        );
        assert!(
            chosen_2_after >= 3,
            "page 2 refreshed {chosen_2_after} times after unit 5"
        );
    }

    #[test]
    fn oracle_ebr_refreshes_only_pages_that_embarrass() {
        let f = ChangeHistoryFixture::new();
        let pages = [0, 1, 2];
        let views = [2.0, 5.0, 0.0];
        let ctx = context(FitMode::Oracle, &pages, &views, Some(&f.0), 8, 1);
        let mut ebr = Ebr::at_threshold(0.4);
        let choices = run(&mut ebr, &ctx, &f.0);
        let fr = ebr.frequencies();
        assert!(fr[0] > 0.0 && fr[1] == 0.0 && fr[2] == 0.0, "{fr:?}");
        assert!(choices.iter().filter(|c| c.contains(&0)).count() >= 4);
    }

    #[test]
    fn online_ebr_never_reads_the_history() {
        let f = ChangeHistoryFixture::new();
        let pages = [0, 1, 2];
        let views = [2.0, 5.0, 1.0];
        let with = context(FitMode::Online, &pages, &views, Some(&f.0), 8, 1);
        let without = context(FitMode::Online, &pages, &views, None, 8, 1);
        assert_eq!(
            run(&mut Ebr::at_threshold(0.4), &with, &f.0),
            run(&mut Ebr::at_threshold(0.4), &without, &f.0)
        );
    }
}
