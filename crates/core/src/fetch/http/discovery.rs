//! How an [`HttpFetcher`] meets new pages ([`Discovery`]): sitemaps re-read at every unit (the
//! URLs newly listed are the unit's new pages), or the out-links of fetched pages within the
//! crawled hosts (a frontier, oldest first). Journaled like fetches: a replayed discovery
//! re-interns the URLs it met, so page ids come out as they did live.

use std::collections::HashSet;

use super::hosts::host_of;
use super::options::Discovery;
use super::replay::ReplayedDiscovery;
use super::HttpFetcher;
use crate::corpus::html::normalise_url;
use crate::corpus::{PageId, Unit};

impl HttpFetcher {
    /// The URLs every configured sitemap lists now (nested sitemap indexes followed, gzipped
    /// sitemaps decompressed); journaled (a replay answers what was read).
    pub fn read_sitemaps(&mut self, unit: Unit) -> Vec<String> {
        if let Some((urls, requests, faults)) = self.monitor.replay.replay_sitemaps(unit) {
            self.monitor.add_signal_counts(requests);
            self.monitor.add_faults(&faults);
            return urls;
        }
        let before = self.monitor.signal_counts();
        let urls = self.sitemap_urls(unit);
        let requests = self.monitor.signal_counts().since(before);
        let faults = self.settle_document_faults();
        self.monitor
            .replay
            .record_sitemaps(urls.clone(), requests, faults);
        urls
    }

    /// [`Fetcher::discover`](crate::fetch::Fetcher::discover), journaled.
    pub(super) fn discover_journaled(
        &mut self,
        unit: Unit,
        known: &dyn Fn(PageId) -> bool,
    ) -> Vec<PageId> {
        if let Some(d) = self.monitor.replay.replay_discovery(unit) {
            self.monitor.add_signal_counts(d.requests);
            self.monitor.add_faults(&d.faults);
            for u in &d.interned {
                if let Some(h) = host_of(u) {
                    self.scope.insert(h);
                }
                self.catalogue.intern(u);
            }
            return d.found;
        }
        let before = self.catalogue.len();
        let counted = self.monitor.signal_counts();
        let found = self.discover_live(unit, known);
        let interned = (before..self.catalogue.len())
            .filter_map(|p| self.catalogue.url(p as PageId).map(str::to_string))
            .collect();
        let requests = self.monitor.signal_counts().since(counted);
        let faults = self.settle_document_faults();
        self.monitor.replay.record_discovery(ReplayedDiscovery {
            interned,
            found: found.clone(),
            requests,
            faults,
        });
        found
    }

    fn discover_live(&mut self, unit: Unit, known: &dyn Fn(PageId) -> bool) -> Vec<PageId> {
        let mut found = Vec::new();
        let max_new = self.options().max_new_per_unit;
        match self.options().discovery.clone() {
            Discovery::None => {}
            Discovery::Sitemaps(_) => {
                let urls = self.sitemap_urls(unit);
                let mut now = HashSet::with_capacity(urls.len());
                for u in &urls {
                    let n = normalise_url(u);
                    let id = match self.catalogue.id(&n) {
                        Some(id) => Some(id),
                        None if found.len() < max_new => {
                            if let Some(h) = host_of(&n) {
                                self.scope.insert(h);
                            }
                            self.catalogue.intern(&n)
                        }
                        None => None,
                    };
                    if let Some(id) = id {
                        now.insert(id);
                        if !self.listed.contains(&id) && !known(id) && !found.contains(&id) {
                            found.push(id);
                        }
                    }
                }
                self.listed = now;
            }
            Discovery::Links => {
                while found.len() < max_new {
                    let Some((_, url)) = self.frontier.pop_first() else {
                        break;
                    };
                    self.frontier_set.remove(&url);
                    if let Some(id) = self.catalogue.intern(&url) {
                        if !known(id) {
                            found.push(id);
                        }
                    }
                }
            }
        }
        found.sort_unstable();
        found
    }

    /// Puts the links of fetched copies that lead to unknown URLs within the crawl's scope at
    /// the end of the frontier, in order, each once.
    pub(super) fn enqueue_links(&mut self, links: Vec<String>) {
        for link in links {
            let n = normalise_url(&link);
            if self.catalogue.id(&n).is_none()
                && host_of(&n).is_some_and(|h| self.scope.contains(&h))
                && self.frontier_set.insert(n.clone())
            {
                self.frontier.insert(self.frontier_next, n);
                self.frontier_next += 1;
            }
        }
    }

    /// Records the URLs the sitemaps list at the initial crawl, so discovery at unit 1 reports
    /// only what is new since.
    pub fn set_listed(&mut self, pages: impl IntoIterator<Item = PageId>) {
        self.listed = pages.into_iter().collect();
    }

    /// Link URLs waiting in the frontier.
    pub fn frontier_len(&self) -> usize {
        self.frontier.len()
    }
}
