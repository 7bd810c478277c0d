//! Paper 002 §5's download probability `φ`: after a sample is fetched, the probability that
//! its neighbourhood is downloaded too.

use crate::change::{change_probability, weighted_rate, Weighting};

/// Which `φ`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DownloadProbability {
    /// Eq. 3, change-status adaptive: 1 when the sample changed, else 0 (the configuration of
    /// all the paper's head-to-head comparisons).
    #[default]
    Binary,
    /// Eq. 5–7, history adaptive: `1 − e^{−λ}` with `λ` the plain mean of the sample's change
    /// indicators over the cycles so far (NAD).
    History,
    /// Eq. 8, weighted history adaptive: the same with `w_i = i` (AAD), normalised.
    WeightedHistory,
    /// §5.3, PageRank adaptive: `(PR + 1) / 11` for the sample's toolbar PageRank 0…10,
    /// whether or not it changed.
    PageRank,
}

impl DownloadProbability {
    pub(crate) const NAMES: &'static [&'static str] = &["binary", "ha", "wha", "pra"];

    pub(crate) fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "binary" => DownloadProbability::Binary,
            "ha" => DownloadProbability::History,
            "wha" => DownloadProbability::WeightedHistory,
            "pra" => DownloadProbability::PageRank,
            _ => return None,
        })
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            DownloadProbability::Binary => "binary",
            DownloadProbability::History => "ha",
            DownloadProbability::WeightedHistory => "wha",
            DownloadProbability::PageRank => "pra",
        }
    }
}

/// What `φ` reads of a sample just fetched.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SampleFacts<'a> {
    /// Whether the fetch found the copy changed.
    pub(crate) changed: bool,
    /// Change indicators of cycles `1 … i` (this cycle's observation last), oldest first.
    pub(crate) history: &'a [bool],
    /// The sample's toolbar-style PageRank 0…10 ([`toolbar_pagerank`]).
    pub(crate) toolbar_pagerank: u8,
}

/// Paper 002 Eq. 3 (binary), Eq. 5–7 (HA), Eq. 8 (WHA, **reconstructed** without the printed
/// extra `1/n`, which would make it `n` times smaller than HA; SEED-SYSTEMS §3.2.5) and §5.3
/// (PRA): the download probability of a sample. HA and WHA apply whether or not the sample
/// changed (choice; the paper does not say).
pub(crate) fn download_probability(phi: DownloadProbability, sample: &SampleFacts<'_>) -> f64 {
    match phi {
        DownloadProbability::Binary => {
            if sample.changed {
                1.0
            } else {
                0.0
            }
        }
        DownloadProbability::History => {
            change_probability(weighted_rate(Weighting::Nad, sample.history), 1.0)
        }
        DownloadProbability::WeightedHistory => {
            change_probability(weighted_rate(Weighting::Aad, sample.history), 1.0)
        }
        DownloadProbability::PageRank => (f64::from(sample.toolbar_pagerank.min(10)) + 1.0) / 11.0,
    }
}

/// Paper 002 §5.3's Google-toolbar PageRank, gone with the toolbar, **reconstructed** on the
/// held-copy PageRank `pr` with the repository's extremes (log scale, like the toolbar):
/// `round(10 · (ln pr − ln pr_min) / (ln pr_max − ln pr_min))`. With all PageRanks equal
/// nothing distinguishes the pages: 5 (the middle).
pub(crate) fn toolbar_pagerank(pr: f64, pr_min: f64, pr_max: f64) -> u8 {
    if !(pr_min > 0.0 && pr_max > pr_min) {
        return 5;
    }
    let pr = pr.clamp(pr_min, pr_max);
    (10.0 * (pr.ln() - pr_min.ln()) / (pr_max.ln() - pr_min.ln())).round() as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_four_probabilities() {
        let history = [false, true, false, false, true];
        let facts = |changed| SampleFacts {
            changed,
            history: &history,
            toolbar_pagerank: 3,
        };
        let p = |phi, changed| download_probability(phi, &facts(changed));
        assert_eq!(p(DownloadProbability::Binary, true), 1.0);
        assert_eq!(p(DownloadProbability::Binary, false), 0.0);
        // SEED-SYSTEMS §5.2's rates: NAD 0.4, AAD 7/15.
        assert!((p(DownloadProbability::History, false) - (1.0 - (-0.4f64).exp())).abs() < 1e-12);
        assert!(
            (p(DownloadProbability::WeightedHistory, true) - (1.0 - (-7.0f64 / 15.0).exp())).abs()
                < 1e-12
        );
        assert_eq!(p(DownloadProbability::PageRank, false), 4.0 / 11.0);
        for name in DownloadProbability::NAMES {
            assert_eq!(DownloadProbability::parse(name).unwrap().as_str(), *name);
        }
    }

    #[test]
    fn toolbar_pagerank_is_log_scaled() {
        assert_eq!(toolbar_pagerank(1e-6, 1e-6, 1e-2), 0);
        assert_eq!(toolbar_pagerank(1e-2, 1e-6, 1e-2), 10);
        assert_eq!(toolbar_pagerank(1e-4, 1e-6, 1e-2), 5);
        assert_eq!(toolbar_pagerank(0.3, 0.3, 0.3), 5);
    }
}
