//! Hand-made histories and contexts for the policies' unit tests.

use super::{ChangeHistory, FitMode, PageHistory, PolicyContext, RefreshOutcome};
use crate::corpus::{PageId, Unit};
use crate::crawl::CrawlState;

/// A crawl state for tests that drive `choose` by hand (policies that read none).
pub(crate) fn no_crawl() -> CrawlState {
    CrawlState::default()
}

/// A history of `units` units where page `p` changes at `changes[p]` with shingle change
/// `shingle` and ΔQ `dq[p]` at every change (empty `dq` = not measured).
pub(crate) fn history(
    units: Unit,
    changes: &[Vec<Unit>],
    shingle: &[f64],
    dq: &[f64],
) -> ChangeHistory {
    ChangeHistory {
        units,
        pages: changes
            .iter()
            .enumerate()
            .map(|(p, c)| PageHistory {
                change_units: c.clone(),
                shingle_changes: vec![shingle.get(p).copied().unwrap_or(1.0); c.len()],
                delta_q: dq.get(p).map(|&d| vec![d; c.len()]).unwrap_or_default(),
            })
            .collect(),
    }
}

pub(crate) fn context<'a>(
    mode: FitMode,
    pages: &'a [PageId],
    view_weight: &'a [f64],
    history: Option<&'a ChangeHistory>,
    units: Unit,
    budget: usize,
) -> PolicyContext<'a> {
    PolicyContext {
        mode,
        page_count: pages.len(),
        units,
        budget,
        initial_pages: pages,
        view_weight,
        history,
        seed: 42,
        crawl: None,
        cache: None,
    }
}

/// The outcome of refreshing `page` at `unit` against `history` (the simulator's job).
pub(crate) fn outcome(
    history: &ChangeHistory,
    page: PageId,
    unit: Unit,
    last: Unit,
) -> RefreshOutcome {
    let h = &history.pages[page as usize];
    let mut changed = false;
    let mut shingle: f64 = 0.0;
    let mut dq = 0.0;
    for (i, &c) in h.change_units.iter().enumerate() {
        if c > last && c <= unit {
            changed = true;
            shingle = shingle.max(h.shingle_changes[i]);
            dq += h.delta_q.get(i).copied().unwrap_or(0.0);
        }
    }
    RefreshOutcome {
        page,
        unit,
        last_refresh: last,
        changed,
        shingle_change: shingle,
        delta_q: dq,
        gone: false,
        discovered: false,
    }
}

/// Hands `outcomes` to `policy` as the refresher does: first recorded in `crawl` (what the
/// crawler knows of each page, which policies read instead of keeping copies), then observed.
pub(crate) fn observe(
    policy: &mut dyn super::RefreshPolicy,
    crawl: &mut CrawlState,
    outcomes: &[RefreshOutcome],
) {
    for o in outcomes {
        crawl.note_fetch(o.page, o.unit, o.gone);
    }
    policy.observe(outcomes);
}

/// Runs a policy for units `1..=units` against `history`, returning the choices per unit and
/// checking every choice holds at most `budget` distinct pages.
pub(crate) fn run(
    policy: &mut dyn super::RefreshPolicy,
    ctx: &PolicyContext<'_>,
    truth: &ChangeHistory,
) -> Vec<Vec<PageId>> {
    policy.prepare(ctx);
    let mut last = vec![0; ctx.page_count];
    let mut out = Vec::new();
    let mut crawl = CrawlState::default();
    for t in 1..=ctx.units {
        let chosen = policy.choose(t, ctx.budget, &crawl);
        assert!(chosen.len() <= ctx.budget, "unit {t}: {chosen:?}");
        let mut d = chosen.clone();
        d.sort();
        d.dedup();
        assert_eq!(d.len(), chosen.len(), "unit {t}: duplicates in {chosen:?}");
        let outcomes: Vec<RefreshOutcome> = chosen
            .iter()
            .map(|&p| outcome(truth, p, t, last[p as usize]))
            .collect();
        for o in &outcomes {
            last[o.page as usize] = t;
        }
        observe(policy, &mut crawl, &outcomes);
        out.push(chosen);
    }
    out
}

/// The record of measured gains `gains`, in order.
pub(crate) fn gain_record(gains: &[f64]) -> super::planned::GainRecord {
    let mut record = super::planned::GainRecord::default();
    gains.iter().for_each(|&g| record.add(g));
    record
}

/// Twelve pages over 24 units for the planners' tests: pages 0–5 change every other unit, 6–11
/// every fourth; views favour the even pages. Returns (change units per page, view weights).
pub(crate) fn two_speed_site() -> (Vec<Vec<Unit>>, Vec<f64>) {
    let changes = (0..12u32)
        .map(|p| {
            let every = if p < 6 { 2 } else { 4 };
            (1..=24).filter(|t| t % every == p % every).collect()
        })
        .collect();
    let views = (0..12)
        .map(|p| if p % 2 == 0 { 3.0 } else { 1.0 })
        .collect();
    (changes, views)
}
