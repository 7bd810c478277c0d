//! A [`RoundPlanner`] as a [`RefreshPolicy`] playing the refresher's rounds protocol, reading
//! the crawler's knowledge ([`CrawlState::knowledge`]) through [`SamplingView`].

use std::cell::OnceCell;
use std::sync::Arc;

use crate::corpus::{PageId, PageVersion, Unit};
use crate::crawl::{CrawlKnowledge, CrawlState};
use crate::policy::{
    PolicyContext, ProbeOutcome, Reads, RefreshOutcome, RefreshPolicy, RoundPolicy,
};

use super::granularity::LinkGraph;
use super::{Probe, RoundPlanner, SamplingView};

/// The crawl state as a [`SamplingView`]: candidates are the page ids the crawler may refresh
/// and has not last found gone (as the baselines pick them), URLs and links as the crawler
/// knows them.
pub struct CrawlView<'a> {
    crawl: &'a CrawlState,
    knowledge: CrawlKnowledge<'a>,
    page_count: usize,
    candidates: OnceCell<Vec<PageId>>,
}

impl<'a> CrawlView<'a> {
    pub fn new(crawl: &'a CrawlState, page_count: usize) -> Self {
        CrawlView {
            crawl,
            knowledge: crawl.knowledge(),
            page_count: page_count.max(crawl.len()),
            candidates: OnceCell::new(),
        }
    }
}

impl LinkGraph for CrawlView<'_> {
    fn out_links(&self, page: PageId) -> &[PageId] {
        self.knowledge.out_links(page)
    }
    fn in_links(&self, page: PageId) -> &[PageId] {
        self.knowledge.in_links(page)
    }
}

impl SamplingView for CrawlView<'_> {
    fn candidates(&self) -> Vec<PageId> {
        self.candidates
            .get_or_init(|| {
                (0..self.page_count as PageId)
                    .filter(|&p| self.crawl.is_refreshable(p) && !self.crawl.page(p).gone)
                    .collect()
            })
            .clone()
    }
    fn url(&self, page: PageId) -> &str {
        self.knowledge.url(page).unwrap_or("")
    }
    fn held(&self, page: PageId) -> Option<&Arc<PageVersion>> {
        self.crawl.held(page).map(|h| &h.version)
    }
    fn pagerank(&self, page: PageId) -> f64 {
        self.knowledge
            .pagerank()
            .get(page as usize)
            .copied()
            .unwrap_or(0.0)
    }
}

/// A sampling policy: a family name, its label and settings, and the planner.
pub struct SamplingPolicy<P: RoundPlanner> {
    name: &'static str,
    label: String,
    settings: serde_json::Map<String, serde_json::Value>,
    planner: P,
    /// Restarts the planner with a run's seed.
    reset: fn(&mut P, u64),
    page_count: usize,
    unit: Unit,
}

impl<P: RoundPlanner> SamplingPolicy<P> {
    pub(crate) fn new(
        name: &'static str,
        label: String,
        settings: serde_json::Map<String, serde_json::Value>,
        planner: P,
        reset: fn(&mut P, u64),
    ) -> Self {
        SamplingPolicy {
            name,
            label,
            settings,
            planner,
            reset,
            page_count: 0,
            unit: 0,
        }
    }
}

impl<P: RoundPlanner> RefreshPolicy for SamplingPolicy<P> {
    fn name(&self) -> String {
        self.name.to_string()
    }

    fn label(&self) -> String {
        self.label.clone()
    }

    fn settings(&self) -> serde_json::Map<String, serde_json::Value> {
        self.settings.clone()
    }

    /// Samples are drawn with the context's seed.
    fn reads(&self) -> Reads {
        Reads {
            seed: true,
            ..Reads::default()
        }
    }

    fn prepare(&mut self, context: &PolicyContext<'_>) {
        (self.reset)(&mut self.planner, context.seed);
        self.page_count = context.page_count;
    }

    /// Without rounds (a caller that cannot report probes): the unit's rounds back to back,
    /// so the samples' outcomes reach the planner only through `observe`, after the unit.
    fn choose(&mut self, unit: Unit, budget: usize, crawl: &CrawlState) -> Vec<PageId> {
        let view = CrawlView::new(crawl, self.page_count);
        self.unit = unit;
        self.planner.begin_unit(unit, budget, &view);
        let mut out = Vec::new();
        loop {
            let round = self.planner.next_round(&view);
            if round.is_empty() {
                break;
            }
            out.extend(round);
        }
        out.truncate(budget);
        out
    }

    fn observe(&mut self, outcomes: &[RefreshOutcome]) {
        let probes: Vec<Probe> = outcomes
            .iter()
            .filter(|o| !o.discovered)
            .map(|o| Probe {
                page: o.page,
                changed: o.changed,
                gone: o.gone,
            })
            .collect();
        let unit = outcomes.first().map_or(self.unit, |o| o.unit);
        self.planner.observe_unit(unit, &probes);
    }

    fn rounds(&mut self) -> Option<&mut dyn RoundPolicy> {
        Some(self)
    }
}

impl<P: RoundPlanner> RoundPolicy for SamplingPolicy<P> {
    fn choose_round(
        &mut self,
        unit: Unit,
        round: u32,
        remaining: usize,
        crawl: &CrawlState,
    ) -> Vec<PageId> {
        let view = CrawlView::new(crawl, self.page_count);
        if round == 0 {
            self.unit = unit;
            self.planner.begin_unit(unit, remaining, &view);
        }
        let mut pages = self.planner.next_round(&view);
        pages.truncate(remaining);
        pages
    }

    fn observe_round(&mut self, probes: &[ProbeOutcome]) {
        let probes: Vec<Probe> = probes
            .iter()
            .map(|p| Probe {
                page: p.page,
                changed: p.changed,
                gone: p.gone,
            })
            .collect();
        self.planner.observe_round(&probes);
    }
}
