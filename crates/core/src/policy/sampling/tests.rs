//! The sampling planners on hand-made sites, driven round by round as the refresh loop does.

use rustc_hash::FxHashSet;

use super::cls::{ClsConfig, ClusterSampling};
use super::gsb::GreedySiteSampling;
use super::neighbourhood::{Granularity, NeighbourhoodSampling};
use super::phi::DownloadProbability;
use super::view::testsite::Site;
use super::{Probe, RoundPlanner};
use crate::corpus::{PageId, Unit};

/// Drives `planner` over `units` units of `budget`, the truth saying whether a page changed
/// since its last fetch. Checks each unit's rounds hold at most `budget` distinct pages and
/// that each round's probes are exactly the round's pages. Returns the pages fetched per unit,
/// in fetch order, with the rounds.
fn drive(
    planner: &mut dyn RoundPlanner,
    site: &Site,
    units: Unit,
    budget: usize,
    changes: impl Fn(PageId, Unit) -> bool,
) -> Vec<(Vec<PageId>, Vec<Vec<PageId>>)> {
    let mut out = Vec::new();
    for unit in 1..=units {
        planner.begin_unit(unit, budget, site);
        let mut fetched: Vec<PageId> = Vec::new();
        let mut rounds = Vec::new();
        let mut all = Vec::new();
        loop {
            let round = planner.next_round(site);
            if round.is_empty() {
                break;
            }
            let probes: Vec<Probe> = round
                .iter()
                .map(|&p| Probe {
                    page: p,
                    changed: changes(p, unit),
                    gone: false,
                })
                .collect();
            planner.observe_round(&probes);
            fetched.extend(&round);
            all.extend(probes);
            rounds.push(round);
            assert!(
                rounds.len() <= 10 * budget + 10,
                "unit {unit}: no end of rounds"
            );
        }
        assert!(fetched.len() <= budget, "unit {unit}: {}", fetched.len());
        let distinct: FxHashSet<_> = fetched.iter().collect();
        assert_eq!(distinct.len(), fetched.len(), "unit {unit}: a page twice");
        planner.observe_unit(unit, &all);
        out.push((fetched, rounds));
    }
    out
}

fn change_ratio(
    runs: &[(Vec<PageId>, Vec<Vec<PageId>>)],
    changes: impl Fn(PageId, Unit) -> bool,
) -> f64 {
    let (mut c, mut n) = (0, 0);
    for (i, (fetched, _)) in runs.iter().enumerate() {
        n += fetched.len();
        c += fetched
            .iter()
            .filter(|&&p| changes(p, i as Unit + 1))
            .count();
    }
    c as f64 / n as f64
}

/// Each sample's outcome as the next round shows it: `(sample, fired)` for every round that
/// follows one, `fired` when that round holds more than the next sample — the sample's
/// neighbourhood was downloaded (a round after a sample that did not fire holds only the next
/// sample).
fn samples_fired(runs: &[(Vec<PageId>, Vec<Vec<PageId>>)]) -> Vec<(PageId, bool)> {
    runs.iter()
        .flat_map(|(_, rounds)| rounds.windows(2))
        .map(|w| (*w[0].last().unwrap(), w[1].len() > 1))
        .collect()
}

/// 10 directories of 10 pages under one host; only directory `hot` changes, every unit.
fn directories() -> (Site, impl Fn(PageId, Unit) -> bool + Copy) {
    let urls: Vec<String> = (0..100)
        .map(|i| format!("http://h.org/d{}/p{}.html", i / 10, i % 10))
        .collect();
    let refs: Vec<&str> = urls.iter().map(String::as_str).collect();
    // Each page links to the next one in its directory.
    let links: Vec<(PageId, PageId)> = (0..100u32)
        .filter(|i| i % 10 != 9)
        .map(|i| (i, i + 1))
        .collect();
    (Site::new(&refs, &links), |p: PageId, _| p / 10 == 3)
}

#[test]
fn directory_sampling_downloads_the_directory_of_a_changed_sample() {
    let (site, changes) = directories();
    let mut db =
        NeighbourhoodSampling::new(Granularity::Directory, 0, DownloadProbability::Binary, 7);
    let runs = drive(&mut db, &site, 6, 20, changes);
    // Whenever a sample of the hot directory fired, the rest of it followed in the next round.
    let mut fired = 0;
    for (_, rounds) in &runs {
        for w in rounds.windows(2) {
            let sample = *w[0].last().unwrap();
            if changes(sample, 1) {
                fired += 1;
                let hot_next = w[1].iter().filter(|&&p| changes(p, 1)).count();
                assert!(hot_next >= w[1].len() - 1, "{:?} after {sample}", w[1]);
            }
        }
    }
    assert!(fired > 0, "no hot sample in 6 units of 20 samples");
    // 10 % of pages change; DB finds far more than random would.
    let ratio = change_ratio(&runs, changes);
    assert!(ratio > 0.25, "change ratio {ratio}");
    // Deterministic for a seed.
    let mut again =
        NeighbourhoodSampling::new(Granularity::Directory, 0, DownloadProbability::Binary, 7);
    assert_eq!(drive(&mut again, &site, 6, 20, changes), runs);
}

#[test]
fn link_sampling_follows_out_links_and_never_fetches_twice() {
    let (site, changes) = directories();
    let mut lb = NeighbourhoodSampling::new(Granularity::Link, 3, DownloadProbability::Binary, 3);
    let runs = drive(&mut lb, &site, 5, 30, changes);
    for (_, rounds) in &runs {
        for w in rounds.windows(2) {
            let sample = *w[0].last().unwrap();
            if changes(sample, 1) {
                // The next round starts with the pages 1…3 links ahead in the chain.
                let ahead: Vec<PageId> =
                    (sample + 1..=(sample + 3).min(sample / 10 * 10 + 9)).collect();
                let got: Vec<PageId> = w[1].iter().copied().filter(|p| ahead.contains(p)).collect();
                assert!(got.len() <= ahead.len());
                assert!(w[1].starts_with(&got), "{:?} after {sample}", w[1]);
            }
        }
    }
    assert!(change_ratio(&runs, changes) > 0.15);
}

#[test]
fn history_and_pagerank_probabilities_run() {
    let (site, changes) = directories();
    for phi in [
        DownloadProbability::History,
        DownloadProbability::WeightedHistory,
        DownloadProbability::PageRank,
    ] {
        let mut p = NeighbourhoodSampling::new(Granularity::Directory, 1, phi, 1);
        let runs = drive(&mut p, &site, 4, 25, changes);
        assert!(runs.iter().all(|(f, _)| f.len() == 25), "{phi:?}");
        // What φ reads shows in which samples' neighbourhoods follow them.
        let samples = samples_fired(&runs);
        let fired_hot = samples.iter().filter(|&&(s, f)| f && changes(s, 1)).count();
        let fired_cold = samples
            .iter()
            .filter(|&&(s, f)| f && !changes(s, 1))
            .count();
        match phi {
            // HA and WHA: 1 − e^(−λ) of the sample's change history, 0 for a page never
            // seen changing; a hot sample has changed every cycle.
            DownloadProbability::History | DownloadProbability::WeightedHistory => {
                assert_eq!(fired_cold, 0, "{phi:?}: a never-changing sample fired");
                assert!(fired_hot > 0, "{phi:?}: no hot sample fired: {samples:?}");
            }
            // PRA: (PR + 1) / 11 ≥ 1/11 whether or not the sample changed.
            _ => assert!(fired_cold > 0, "{phi:?}: no cold sample fired: {samples:?}"),
        }
    }
}

#[test]
fn cluster_granularity_clusters_once_and_samples() {
    let (site, changes) = directories();
    let mut cb = NeighbourhoodSampling::new(
        Granularity::Cluster { k: 5 },
        0,
        DownloadProbability::Binary,
        2,
    );
    let runs = drive(&mut cb, &site, 3, 30, changes);
    assert!(runs.iter().all(|(f, _)| f.len() == 30));
    // Binary φ: a sample's cluster follows it exactly when it changed.
    let samples = samples_fired(&runs);
    assert!(
        samples.iter().all(|&(s, fired)| !fired || changes(s, 1)),
        "a cluster followed an unchanged sample: {samples:?}"
    );
    assert!(
        samples.iter().any(|&(_, fired)| fired),
        "no cluster followed a sample: {samples:?}"
    );
    // Clustered once: the same seed gives the same clusters, so the same run.
    let mut again = NeighbourhoodSampling::new(
        Granularity::Cluster { k: 5 },
        0,
        DownloadProbability::Binary,
        2,
    );
    assert_eq!(drive(&mut again, &site, 3, 30, changes), runs);
}

#[test]
fn gsb_samples_every_site_then_downloads_the_changed_site_first() {
    let urls: Vec<String> = (0..60)
        .map(|i| format!("http://s{}.com/p{}", i / 20, i % 20))
        .collect();
    let refs: Vec<&str> = urls.iter().map(String::as_str).collect();
    let site = Site::new(&refs, &[]);
    let changes = |p: PageId, _| p / 20 == 1;
    let mut gsb = GreedySiteSampling::new(5);
    let runs = drive(&mut gsb, &site, 2, 30, changes);
    for (fetched, rounds) in &runs {
        assert_eq!(rounds.len(), 2);
        // ⌈√(20 · 0.5)⌉ = 4 samples of each of the 3 sites.
        assert_eq!(rounds[0].len(), 12);
        assert_eq!(gsb.sample_size(), 4);
        // Then the changed site's other 16 pages, then 2 more of another site.
        assert!(
            rounds[1][..16].iter().all(|&p| changes(p, 1)),
            "{:?}",
            rounds[1]
        );
        assert_eq!(fetched.len(), 30);
    }
}

/// Two kinds of pages told apart by their features (out-links, URL words); one kind changes.
#[test]
fn cls_samples_clusters_and_fills_the_changing_one_first() {
    let urls: Vec<String> = (0..80)
        .map(|i| {
            if i < 40 {
                format!("http://h.org/news/Daily{i}")
            } else {
                format!("http://h.org/archive/old/Static{i}")
            }
        })
        .collect();
    let refs: Vec<&str> = urls.iter().map(String::as_str).collect();
    // News pages link to many pages; archive pages to none.
    let links: Vec<(PageId, PageId)> = (0..40u32)
        .flat_map(|i| (0..8u32).map(move |j| (i, (i + j + 1) % 80)))
        .collect();
    let site = Site::new(&refs, &links);
    let changes = |p: PageId, _| p < 40;
    let config = ClsConfig {
        clusters: 4,
        ..ClsConfig::default()
    };
    let mut cls = ClusterSampling::new(config, 11);
    let runs = drive(&mut cls, &site, 4, 24, changes);
    assert_eq!(cls.clusters_in_use(), 4);
    for (fetched, rounds) in &runs {
        assert_eq!(fetched.len(), 24);
        // Two samples per cluster first.
        assert_eq!(rounds[0].len(), 8);
    }
    // Half the pages change; CLS fills the budget from the changing clusters.
    let ratio = change_ratio(&runs, changes);
    assert!(ratio > 0.75, "change ratio {ratio}");
    let mut again = ClusterSampling::new(config, 11);
    assert_eq!(drive(&mut again, &site, 4, 24, changes), runs);
}

/// With a budget far below a cluster's size, the centroid order fetches the same members every
/// unit; the oldest-first order works through the cluster.
#[test]
fn cls_oldest_first_rotates_through_a_cluster() {
    let urls: Vec<String> = (0..60).map(|i| format!("http://h.org/w/P{i}")).collect();
    let refs: Vec<&str> = urls.iter().map(String::as_str).collect();
    let site = Site::new(&refs, &[]);
    let changes = |_: PageId, _| true;
    let distinct = |order| {
        // Clustered once, so the centroid order stays the same.
        let config = ClsConfig {
            clusters: 1,
            samples: order,
            fill: order,
            recluster_every: 0,
            ..ClsConfig::default()
        };
        let mut cls = ClusterSampling::new(config, 4);
        let runs = drive(&mut cls, &site, 5, 8, changes);
        runs.iter()
            .flat_map(|(f, _)| f.iter().copied())
            .collect::<FxHashSet<PageId>>()
            .len()
    };
    let centroid = distinct(super::cls::MemberOrder::Centroid);
    let oldest = distinct(super::cls::MemberOrder::Oldest);
    assert_eq!(centroid, 8, "the same 8 members every unit");
    assert!(oldest >= 30, "oldest first reached {oldest} pages");
}

/// When the budget fetches every cluster whole each unit, every member has the same age and the
/// oldest-first order is the paper's nearest-centroid order: the same fetches, round by round.
#[test]
fn cls_oldest_first_is_the_papers_order_when_whole_clusters_are_fetched() {
    let urls: Vec<String> = (0..24)
        .map(|i| format!("http://h.org/d{}/P{i}", i % 3))
        .collect();
    let refs: Vec<&str> = urls.iter().map(String::as_str).collect();
    let site = Site::new(&refs, &[]);
    let changes = |p: PageId, unit: u32| (p + unit).is_multiple_of(3);
    let runs = |order| {
        let config = ClsConfig {
            clusters: 3,
            samples: order,
            fill: order,
            ..ClsConfig::default()
        };
        drive(&mut ClusterSampling::new(config, 7), &site, 4, 24, changes)
    };
    let centroid = runs(super::cls::MemberOrder::Centroid);
    assert!(centroid.iter().all(|(f, _)| f.len() == 24));
    assert_eq!(runs(super::cls::MemberOrder::Oldest), centroid);
}
