//! [`SignalTrust`]: how far a site's signals can be believed, learned from the crawler's own
//! fetches, and the probability that a page changed given what its signal says.
//!
//! Each refresh of a page some channel speaks for is one labelled example: the signal did or
//! did not flag a change since the held copy, and the fetch found the copy changed or not. Per
//! [`SignalClass`] and age of the held copy (`k` units, in powers of two: a date that moves
//! falsely now and then flags an old copy far more often than a fresh one) the trust is two
//! Beta posteriors under uniform priors (Beta(1, 1)):
//!
//! * `r = P(flag | changed)` — the signal's recall, `Beta(1 + flagged∧changed, 1 + quiet∧changed)`;
//! * `f = P(flag | unchanged)` — its false-alarm rate, `Beta(1 + flagged∧unchanged, 1 + quiet∧unchanged)`.
//!
//! A page's prior chance of a change since its copy, `π` (from its change rate), then becomes
//! by Bayes' rule (posterior means of `r` and `f` plugged in)
//!
//! `P(changed | flag) = r·π / (r·π + f·(1 − π))`, `P(changed | quiet) = (1 − r)·π / ((1 − r)·π + (1 − f)·(1 − π))`.
//!
//! Before any example `r = f = ½` and the signal moves nothing (`P = π`); a signal that flags
//! every page (a build-stamped sitemap) learns `r ≈ f ≈ 1` within a few units and again moves
//! nothing; an accurate one learns `r → 1`, `f → 0`. The examples come from the pages the
//! policy chose to fetch, mostly flagged ones: a policy must keep checking quiet pages too, or
//! the missed changes that measure recall are never seen ([`EXPLORATION_SHARE`]).

use super::{PageSignal, SignalClass};
use crate::corpus::Unit;

/// Share of each unit's budget a signal-reading policy spends on pages whose signal is quiet,
/// so that the changes signals miss stay measurable: one refresh in sixteen (about 6 % of the
/// budget), carried over between units when the budget is smaller. Enough that a site's
/// recall is re-measured every unit at `B ≥ 16`; little enough to cost at most that share of
/// what a perfectly trusted signal would earn.
pub const EXPLORATION_SHARE: f64 = 1.0 / 16.0;

/// Outcome counts of one [`SignalClass`].
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub(crate) struct Confusion {
    pub(crate) flagged_changed: u64,
    pub(crate) flagged_unchanged: u64,
    pub(crate) quiet_changed: u64,
    pub(crate) quiet_unchanged: u64,
}

impl Confusion {
    /// Posterior mean of `P(flag | changed)`.
    pub(crate) fn recall(&self) -> f64 {
        (1.0 + self.flagged_changed as f64)
            / (2.0 + (self.flagged_changed + self.quiet_changed) as f64)
    }

    /// Posterior mean of `P(flag | unchanged)`.
    pub(crate) fn false_alarm_rate(&self) -> f64 {
        (1.0 + self.flagged_unchanged as f64)
            / (2.0 + (self.flagged_unchanged + self.quiet_unchanged) as f64)
    }

    pub(crate) fn examples(&self) -> u64 {
        self.flagged_changed + self.flagged_unchanged + self.quiet_changed + self.quiet_unchanged
    }
}

/// Held-copy ages the trust tells apart: `1, 2–3, 4–7, …, ≥ 128` units.
const AGE_BUCKETS: usize = 8;

/// The age bucket of a copy held since `since` at `now`.
fn age_bucket(since: Unit, now: Unit) -> usize {
    let age = now.saturating_sub(since).max(1);
    (age.ilog2() as usize).min(AGE_BUCKETS - 1)
}

/// Trust in a site's signals, per [`SignalClass`] and held-copy age (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct SignalTrust {
    classes: [[Confusion; AGE_BUCKETS]; 4],
}

impl SignalTrust {
    /// One fetch at `now` of a page whose copy dated from `since`: what its signal said before
    /// the fetch and whether the fetch found it changed. Pages no channel speaks for teach
    /// nothing.
    pub fn record(&mut self, signal: &PageSignal, since: Unit, now: Unit, changed: bool) {
        let Some(flagged) = signal.flags_change_since(since) else {
            return;
        };
        let c = &mut self.classes[signal.class().index()][age_bucket(since, now)];
        match (flagged, changed) {
            (true, true) => c.flagged_changed += 1,
            (true, false) => c.flagged_unchanged += 1,
            (false, true) => c.quiet_changed += 1,
            (false, false) => c.quiet_unchanged += 1,
        }
    }

    /// `P(changed since `since` | the page's signal)` at `now`, from the prior `prior` (the
    /// page's chance of a change since then without signals; see the module docs). The prior
    /// itself when no channel speaks for the page.
    pub(crate) fn changed_probability(
        &self,
        signal: &PageSignal,
        since: Unit,
        now: Unit,
        prior: f64,
    ) -> f64 {
        let Some(flagged) = signal.flags_change_since(since) else {
            return prior;
        };
        let c = &self.classes[signal.class().index()][age_bucket(since, now)];
        let (r, f) = (c.recall(), c.false_alarm_rate());
        let pi = prior.clamp(0.0, 1.0);
        let (changed, unchanged) = if flagged {
            (r * pi, f * (1.0 - pi))
        } else {
            ((1.0 - r) * pi, (1.0 - f) * (1.0 - pi))
        };
        if changed + unchanged > 0.0 {
            changed / (changed + unchanged)
        } else {
            pi
        }
    }

    /// Whether the signals of `class` tell changed pages from unchanged ones for a copy held
    /// since `since`, at `now`, by this run's fetches of copies of that age: the posterior
    /// means of `r = P(flag | changed)` and `f = P(flag | unchanged)` are more than two
    /// posterior standard deviations apart (`r − f` > 2σ). A build-stamped sitemap
    /// (`r ≈ f ≈ 1`) never is; an accurate one is after a few refreshes; a date that moves
    /// falsely now and then is for young copies and not for old ones; one never tested is not.
    pub fn is_informative(&self, class: SignalClass, since: Unit, now: Unit) -> bool {
        let c = self.classes[class.index()][age_bucket(since, now)];
        let beta = |hits: u64, misses: u64| {
            let (a, b) = (1.0 + hits as f64, 1.0 + misses as f64);
            (a / (a + b), a * b / ((a + b) * (a + b) * (a + b + 1.0)))
        };
        let (r, var_r) = beta(c.flagged_changed, c.quiet_changed);
        let (f, var_f) = beta(c.flagged_unchanged, c.quiet_unchanged);
        r - f > 2.0 * (var_r + var_f).sqrt()
    }

    /// The counts of `class`, over every age.
    pub(crate) fn confusion(&self, class: SignalClass) -> Confusion {
        self.classes[class.index()]
            .iter()
            .fold(Confusion::default(), |a, c| Confusion {
                flagged_changed: a.flagged_changed + c.flagged_changed,
                flagged_unchanged: a.flagged_unchanged + c.flagged_unchanged,
                quiet_changed: a.quiet_changed + c.quiet_changed,
                quiet_unchanged: a.quiet_unchanged + c.quiet_unchanged,
            })
    }

    /// What the learner ended with, per class that saw an example: recall, false-alarm rate,
    /// examples (what outputs report as the site's trust).
    pub fn summary(&self) -> serde_json::Value {
        let mut out = serde_json::Map::new();
        for (lastmod, feed) in [(true, false), (false, true), (true, true)] {
            let class = SignalClass { lastmod, feed };
            let c = self.confusion(class);
            if c.examples() == 0 {
                continue;
            }
            let name = match (lastmod, feed) {
                (true, false) => "lastmod",
                (false, true) => "feed",
                _ => "lastmod+feed",
            };
            out.insert(
                name.into(),
                serde_json::json!({
                    "recall": c.recall(),
                    "false_alarm_rate": c.false_alarm_rate(),
                    "examples": c.examples(),
                }),
            );
        }
        serde_json::Value::Object(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signal::SignalKind;

    fn dated(date: Unit) -> PageSignal {
        let mut s = PageSignal::default();
        s.note(SignalKind::Lastmod(date));
        s
    }

    #[test]
    fn an_untested_signal_moves_nothing() {
        let t = SignalTrust::default();
        assert!((t.changed_probability(&dated(5), 3, 6, 0.2) - 0.2).abs() < 1e-12);
        assert!((t.changed_probability(&dated(2), 3, 6, 0.2) - 0.2).abs() < 1e-12);
        assert_eq!(
            t.changed_probability(&PageSignal::default(), 3, 6, 0.2),
            0.2
        );
    }

    #[test]
    fn an_accurate_signal_is_trusted_and_a_stamped_one_is_not() {
        let mut accurate = SignalTrust::default();
        let mut stamped = SignalTrust::default();
        for i in 0..200 {
            let changed = i % 4 == 0;
            // Accurate: the date moved exactly when the page changed.
            accurate.record(&dated(if changed { 5 } else { 2 }), 3, 6, changed);
            // Build-stamped: the date always moved.
            stamped.record(&dated(5), 3, 6, changed);
        }
        let flagged = accurate.changed_probability(&dated(5), 3, 6, 0.25);
        let quiet = accurate.changed_probability(&dated(2), 3, 6, 0.25);
        // Another age has its own trust, untested yet.
        let older = accurate.changed_probability(&dated(5), 3, 20, 0.25);
        assert!((older - 0.25).abs() < 1e-12);
        assert!(flagged > 0.95, "{flagged}");
        assert!(quiet < 0.02, "{quiet}");
        let any = stamped.changed_probability(&dated(5), 3, 6, 0.25);
        let class = dated(5).class();
        assert!(accurate.is_informative(class, 3, 6));
        assert!(
            !accurate.is_informative(class, 3, 40),
            "an age never tested"
        );
        assert!(!stamped.is_informative(class, 3, 6));
        assert!(!SignalTrust::default().is_informative(class, 3, 6));
        assert!((any - 0.25).abs() < 0.02, "{any}");
        let summary = accurate.summary();
        assert!(summary["lastmod"]["recall"].as_f64().unwrap() > 0.95);
    }
}
