//! `user-centric` with `estimator=hedged`: the [planner](super::planner) and EBR side by side,
//! the slots where they disagree shared by what each one's own picks were measured to gain.
//!
//! Every unit both plan with the same information (the same fetches, the same view weights).
//! The pages both choose are refreshed. Of the rest of the budget, a share goes to the
//! planner's own picks (in its order) and the remainder to EBR's: the probability, given the
//! ΔQ_A the index hook measured on the refreshes each one chose alone so far (each weighed by
//! how long the fetch is expected to stay fresh, [`fresh_share`]), that the planner's picks
//! gain more per refresh than EBR's ([`planner_share`], a normal approximation to the
//! difference of the two means). So the planner's learned weights spend budget only as
//! far as the run's own measurements say they beat EBR's: where they do not, the run returns
//! to EBR's plan; before any disagreement is measured, it splits evenly. Both learn from every
//! refresh, whoever chose it; a page one planned but the other's share displaced is not
//! counted as refreshed by it.
//!
//! This is a bandit over two arms played on their disagreement only (probability matching,
//! Thompson 1933, with the share in place of a draw so that a run is deterministic).
//!
//! It is not the online default: measured, it ends near EBR's budget, giving away the planner's
//! wins with its losses, because a plan's advantage lies mostly in when it refreshes each page,
//! which the gains of its single exclusive picks do not show (docs/results.md, § The hedge).

use std::collections::{HashMap, HashSet};

use statrs::distribution::{ContinuousCDF, Normal};

use super::planner::UserCentricPlanner;
use crate::corpus::{PageId, Unit};
use crate::crawl::CrawlState;
use crate::policy::ebr::Ebr;
use crate::policy::planned::{fresh_share, GainRecord, Planner};
use crate::policy::{PolicyContext, RefreshOutcome, RefreshPolicy};

/// Which of the two chose a page alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arm {
    Planner,
    Ebr,
}

/// The planner and EBR, hedged (see the module docs).
pub struct HedgedPlanner {
    pub(crate) planner: UserCentricPlanner,
    pub(crate) ebr: Ebr,
    /// ΔQ_A measured on the refreshes the planner chose alone.
    planner_alone: GainRecord,
    /// ΔQ_A measured on the refreshes EBR chose alone.
    ebr_alone: GainRecord,
    /// The pages of the unit in progress that one of the two chose alone, with the share of
    /// a refresh cycle each one's fetch is expected to stay fresh ([`lasting_share`]).
    alone: HashMap<PageId, (Arm, f64)>,
    /// The planner's slots owed and not yet given: the fraction of a slot that `share · free`
    /// left over, carried to the next unit ([`share_disagreement`]).
    owed: f64,
}

impl Default for HedgedPlanner {
    fn default() -> Self {
        HedgedPlanner {
            planner: Planner::new(Default::default()),
            ebr: Ebr::at_threshold(0.0),
            planner_alone: GainRecord::default(),
            ebr_alone: GainRecord::default(),
            alone: HashMap::new(),
            owed: 0.5,
        }
    }
}

/// The share of the disagreeing slots given to the planner: `P(mean gain of the planner's
/// own picks > EBR's)` under the normal approximation to the difference of the two sample
/// means (Welch's statistic `z = (ḡ₁ − ḡ₂)/√(s₁²/n₁ + s₂²/n₂)`, share `Φ(z)`). One half while
/// either arm has fewer than two measurements; when neither mean varies, the larger takes all
/// (one half on a tie).
pub fn planner_share(planner: &GainRecord, ebr: &GainRecord) -> f64 {
    if planner.count < 2 || ebr.count < 2 {
        return 0.5;
    }
    let moments = |r: &GainRecord| {
        let n = r.count as f64;
        let mean = r.sum / n;
        let variance = ((r.sum_of_squares - n * mean * mean) / (n - 1.0)).max(0.0);
        (mean, variance / n)
    };
    let ((m1, v1), (m2, v2)) = (moments(planner), moments(ebr));
    let spread = (v1 + v2).sqrt();
    if spread > 0.0 && spread.is_finite() {
        Normal::standard().cdf((m1 - m2) / spread)
    } else if m1 > m2 {
        1.0
    } else if m1 < m2 {
        0.0
    } else {
        0.5
    }
}

/// The unit's pages from the two choices (each distinct, in priority order): the pages both
/// chose, then `⌊share · free + owed⌋` of the planner's own picks and the rest of the `free =
/// budget − common` slots from EBR's, either side topping up what the other lacks. Returns the
/// pages, the side each was chosen alone by, and the fraction of a slot still owed to the
/// planner. Carrying that fraction (starting at one half, which makes the first unit a
/// rounding) gives the planner its share over the units even when a unit has a single free
/// slot: rounding each unit alone would give a share below one half of one slot nothing, ever,
/// and so stop measuring the planner's picks for good.
fn share_disagreement(
    ours: &[PageId],
    theirs: &[PageId],
    budget: usize,
    share: f64,
    owed: f64,
) -> (Vec<PageId>, Vec<(PageId, Arm)>, f64) {
    let in_theirs: HashSet<PageId> = theirs.iter().copied().collect();
    let in_ours: HashSet<PageId> = ours.iter().copied().collect();
    let mut chosen: Vec<PageId> = ours
        .iter()
        .copied()
        .filter(|p| in_theirs.contains(p))
        .collect();
    let ours_alone: Vec<PageId> = ours
        .iter()
        .copied()
        .filter(|p| !in_theirs.contains(p))
        .collect();
    let theirs_alone: Vec<PageId> = theirs
        .iter()
        .copied()
        .filter(|p| !in_ours.contains(p))
        .collect();
    let free = budget.saturating_sub(chosen.len());
    let due = share * free as f64 + owed;
    let wanted = (due.floor() as usize).min(free);
    let owed = (due - wanted as f64).clamp(0.0, 1.0);
    let from_ours = wanted.min(ours_alone.len());
    let from_theirs = (free - from_ours).min(theirs_alone.len());
    let from_ours = (free - from_theirs).min(ours_alone.len());
    let mut alone = Vec::with_capacity(from_ours + from_theirs);
    alone.extend(ours_alone[..from_ours].iter().map(|&p| (p, Arm::Planner)));
    alone.extend(theirs_alone[..from_theirs].iter().map(|&p| (p, Arm::Ebr)));
    chosen.extend(alone.iter().map(|&(p, _)| p));
    (chosen, alone, owed)
}

impl HedgedPlanner {
    /// The share of the disagreeing slots the planner gets now ([`planner_share`]).
    pub fn share(&self) -> f64 {
        planner_share(&self.planner_alone, &self.ebr_alone)
    }

    /// How long a fetch of `page` now is expected to keep its gain, as a share of the refresh
    /// cycle `N/B` ([`fresh_share`] at EBR's current change rate, which both sides plan with):
    /// a gain measured on a page that changes again next unit is worth less than the same gain
    /// on a page that then stays fresh for the cycle, and EBR's plan spends on the latter
    /// (Cho & Garcia-Molina), which a comparison of bare gains would hold against it.
    fn lasting_share(&self, page: PageId) -> f64 {
        let lambda = self
            .ebr
            .params()
            .get(page as usize)
            .map_or(0.0, |&(lambda, _)| lambda);
        fresh_share(lambda, self.ebr.prior_interval())
    }

    /// The measured gains (each times how long its fetch was expected to stay fresh) of the
    /// refreshes each chose alone: (planner, EBR).
    pub(crate) fn measured(&self) -> (GainRecord, GainRecord) {
        (self.planner_alone, self.ebr_alone)
    }
}

impl RefreshPolicy for HedgedPlanner {
    fn name(&self) -> String {
        "user-centric".to_string()
    }

    fn prepare(&mut self, context: &PolicyContext<'_>) {
        self.planner.prepare(context);
        self.ebr.prepare(context);
        self.planner_alone = GainRecord::default();
        self.ebr_alone = GainRecord::default();
        self.alone.clear();
        self.owed = 0.5;
    }

    fn choose(&mut self, unit: Unit, budget: usize, crawl: &CrawlState) -> Vec<PageId> {
        let ours = self.planner.choose(unit, budget, crawl);
        let theirs = self.ebr.choose(unit, budget, crawl);
        let (chosen, alone, owed) =
            share_disagreement(&ours, &theirs, budget, self.share(), self.owed);
        self.owed = owed;
        self.alone = alone
            .into_iter()
            .map(|(p, arm)| (p, (arm, self.lasting_share(p))))
            .collect();
        let refreshed: HashSet<PageId> = chosen.iter().copied().collect();
        let dropped = |picks: &[PageId]| -> Vec<PageId> {
            picks
                .iter()
                .copied()
                .filter(|p| !refreshed.contains(p))
                .collect()
        };
        let (ours_dropped, theirs_dropped) = (dropped(&ours), dropped(&theirs));
        self.planner.withdraw(&ours_dropped);
        self.ebr.withdraw(&theirs_dropped);
        chosen
    }

    fn observe(&mut self, outcomes: &[RefreshOutcome]) {
        for o in outcomes.iter().filter(|o| !o.discovered) {
            match self.alone.get(&o.page) {
                Some(&(Arm::Planner, lasting)) => self.planner_alone.add(o.delta_q * lasting),
                Some(&(Arm::Ebr, lasting)) => self.ebr_alone.add(o.delta_q * lasting),
                None => {}
            }
        }
        self.alone.clear();
        self.planner.observe(outcomes);
        self.ebr.observe(outcomes);
    }

    fn reads(&self) -> crate::policy::Reads {
        crate::policy::Reads {
            delta_q: true,
            ..Default::default()
        }
    }

    /// What the run learned: the planner's share of the disagreeing slots now, and how many
    /// refreshes each side chose alone and had measured.
    fn settings(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        let (planner, ebr) = self.measured();
        m.insert("planner_share".into(), self.share().into());
        m.insert(
            "chosen_alone".into(),
            serde_json::json!({ "planner": planner.count, "ebr": ebr.count }),
        );
        m
    }

    fn wants_views(&self, unit: Unit) -> bool {
        self.planner.wants_views(unit) || self.ebr.wants_views(unit)
    }

    fn observe_views(&mut self, view_weight: &[f64]) {
        self.planner.observe_views(view_weight);
        self.ebr.observe_views(view_weight);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testkit::gain_record as record;
    use crate::policy::testkit::{context, history, run, two_speed_site};
    use crate::policy::FitMode;

    #[test]
    fn the_share_is_the_probability_that_the_planners_picks_gain_more() {
        // Too little measured on either side: an even split.
        assert_eq!(planner_share(&record(&[5.0]), &record(&[0.0, 0.0])), 0.5);
        // Equal samples: an even split.
        let same = record(&[1.0, 3.0, 2.0]);
        assert!((planner_share(&same, &same) - 0.5).abs() < 1e-12);
        // Welch's z by hand: means 2 and 1, variances 1 and 1, n = 3 each: z = 1/√(2/3).
        let ours = record(&[1.0, 2.0, 3.0]);
        let theirs = record(&[0.0, 1.0, 2.0]);
        let z = 1.0 / (2.0f64 / 3.0).sqrt();
        let expected = 0.5 * libm::erfc(-z / std::f64::consts::SQRT_2);
        let share = planner_share(&ours, &theirs);
        // statrs' erfc and libm's agree to about 1e-11.
        assert!(
            (share - expected).abs() < 1e-9,
            "{share} against {expected}"
        );
        assert!((planner_share(&theirs, &ours) - (1.0 - expected)).abs() < 1e-9);
        // Nothing varies: the larger mean takes every slot.
        assert_eq!(
            planner_share(&record(&[2.0, 2.0]), &record(&[1.0, 1.0])),
            1.0
        );
        assert_eq!(
            planner_share(&record(&[0.0, 0.0]), &record(&[1.0, 1.0])),
            0.0
        );
        assert_eq!(
            planner_share(&record(&[1.0, 1.0]), &record(&[1.0, 1.0])),
            0.5
        );
    }

    #[test]
    fn the_disagreeing_slots_are_shared_and_topped_up() {
        let ours = [1, 2, 3, 4];
        let theirs = [3, 9, 8, 1];
        // Both chose 1 and 3; two free slots.
        let (chosen, alone, owed) = share_disagreement(&ours, &theirs, 4, 0.5, 0.5);
        assert_eq!(owed, 0.5);
        assert_eq!(chosen, vec![1, 3, 2, 9]);
        assert_eq!(alone, vec![(2, Arm::Planner), (9, Arm::Ebr)]);
        assert_eq!(
            share_disagreement(&ours, &theirs, 4, 1.0, 0.5).0,
            vec![1, 3, 2, 4]
        );
        assert_eq!(
            share_disagreement(&ours, &theirs, 4, 0.0, 0.5).0,
            vec![1, 3, 9, 8]
        );
        // One side short of picks: the other tops up the budget.
        let (chosen, _, _) = share_disagreement(&[1], &theirs, 4, 1.0, 0.5);
        assert_eq!(chosen, vec![1, 3, 9, 8]);
        // Identical choices: nothing to share.
        let (chosen, alone, _) = share_disagreement(&ours, &ours, 4, 0.3, 0.5);
        assert_eq!((chosen, alone.len()), (ours.to_vec(), 0));
        // A share of a tenth of one free slot a unit: the planner's slot comes every tenth
        // unit, not never.
        let mut owed = 0.5;
        let mut planner_slots = 0;
        for _ in 0..20 {
            let (_, alone, left) = share_disagreement(&[1, 2], &[1, 9], 2, 0.1, owed);
            owed = left;
            planner_slots += alone.iter().filter(|(_, arm)| *arm == Arm::Planner).count();
        }
        assert_eq!(planner_slots, 2);
    }

    #[test]
    fn with_no_gain_measured_it_plans_exactly_as_ebr() {
        let (changes, views) = two_speed_site();
        let pages: Vec<PageId> = (0..12).collect();
        let h = history(25, &changes, &[1.0; 12], &[0.0; 12]);
        for budget in [1, 3, 6] {
            let ctx = context(FitMode::Online, &pages, &views, None, 24, budget);
            let mut hedged = HedgedPlanner::default();
            let chosen = run(&mut hedged, &ctx, &h);
            assert_eq!(
                chosen,
                run(&mut Ebr::at_threshold(0.0), &ctx, &h),
                "B = {budget}"
            );
            // Nothing was chosen by one alone.
            assert_eq!(hedged.measured().0.count + hedged.measured().1.count, 0);
        }
    }

    #[test]
    fn the_planners_share_follows_what_its_own_picks_gain() {
        // The most viewed pages' changes gain nothing; the others' do: the planner's picks
        // off EBR's plan gain more, so they take the disagreement over.
        let (changes, views) = two_speed_site();
        let pages: Vec<PageId> = (0..12).collect();
        let dq: Vec<f64> = (0..12)
            .map(|p| if p % 2 == 0 { 0.0 } else { 1.0 })
            .collect();
        let h = history(25, &changes, &[1.0; 12], &dq);
        let ctx = context(FitMode::Online, &pages, &views, None, 24, 2);
        let odd_share = |choices: &[Vec<PageId>]| {
            let late: Vec<PageId> = choices[12..].iter().flatten().copied().collect();
            late.iter().filter(|&&p| p % 2 == 1).count() as f64 / late.len() as f64
        };
        let mut hedged = HedgedPlanner::default();
        let chosen = run(&mut hedged, &ctx, &h);
        let ebr = run(&mut Ebr::at_threshold(0.0), &ctx, &h);
        let (ours, theirs) = hedged.measured();
        assert!(ours.count >= 2 && theirs.count >= 2, "{ours:?} {theirs:?}");
        assert!(hedged.share() > 0.9, "{}", hedged.share());
        assert!(
            odd_share(&chosen) > odd_share(&ebr) + 0.2,
            "{} vs {}",
            odd_share(&chosen),
            odd_share(&ebr)
        );
    }

    #[test]
    fn a_gain_counts_for_as_long_as_the_fetch_stays_fresh() {
        let mut hedged = HedgedPlanner::default();
        // Nothing known yet (no rates planned): a fetch keeps its gain for the whole cycle.
        assert_eq!(hedged.lasting_share(3), 1.0);
        hedged.alone = [(1, (Arm::Planner, 0.25)), (2, (Arm::Ebr, 1.0))]
            .into_iter()
            .collect();
        let outcome = |page: PageId| RefreshOutcome {
            page,
            unit: 2,
            last_refresh: 1,
            changed: true,
            shingle_change: 0.5,
            delta_q: 2.0,
            gone: false,
            discovered: false,
        };
        hedged.observe(&[outcome(1), outcome(2)]);
        let (ours, theirs) = hedged.measured();
        assert_eq!((ours.sum, theirs.sum), (0.5, 2.0));
    }

    #[test]
    fn picks_measured_to_gain_less_lose_their_share() {
        let mut hedged = HedgedPlanner::default();
        for unit in 1..=5u32 {
            hedged.alone = [(1, (Arm::Planner, 1.0)), (2, (Arm::Ebr, 1.0))]
                .into_iter()
                .collect();
            let outcome = |page: PageId, delta_q: f64| RefreshOutcome {
                page,
                unit,
                last_refresh: unit - 1,
                changed: delta_q > 0.0,
                shingle_change: 0.0,
                delta_q,
                gone: false,
                discovered: false,
            };
            hedged.observe(&[outcome(1, 0.0), outcome(2, 1.0 + f64::from(unit) * 0.1)]);
        }
        assert_eq!(hedged.measured().0.count, 5);
        assert!(hedged.share() < 1e-6, "{}", hedged.share());
    }
}
