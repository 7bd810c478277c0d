//! Change signals: what a site publishes about its own changes — sitemap `<lastmod>` dates and
//! change feeds — from the site model ([`publish`]) through the fetcher
//! ([`crate::fetch::Fetcher::signals`]) and the crawl state ([`crate::crawl::CrawlState::signal`])
//! to the policies, which learn how far to trust them ([`trust`]).
//!
//! # The model (`--signals SPEC`)
//!
//! A `SignalSpec` says what one channel of a site publishes, applied to the site's true
//! history (a page changes at unit `u` when its capture at `u` differs from the one at `u − 1`):
//!
//! * `lastmod[:coverage=C,recall=R,false-positive=F,delay=D]`: the sitemap lists every present
//!   page; a share `C` of the entries carry a `<lastmod>` (drawn per page). The date moves to
//!   `u` when the page changed at `u` with probability `R`, and when it did not with probability
//!   `F`; a sitemap read at unit `t` shows the dates as of unit `t − D`. Defaults: 1, 1, 0, 0
//!   (an accurate date on every page, what `web-replay` serves).
//! * `lastmod:build-stamped`: every date is the sitemap's build time (the commonest real
//!   error): the date says nothing about the page.
//! * `feed[:items=N,delay=D]`: a change feed per host (a wiki's RecentChanges) holding the
//!   newest `N` changes (default 50, MediaWiki's default feed length); read once per unit, it
//!   shows the changes of unit `t − D`, the newest `N` of them: when a unit has more, the older
//!   ones are lost. Changes within a unit are ordered by a seeded draw.
//! * `none`: no channel (the papers' protocol; `simulate` and `compare`'s default).
//!
//! Several specs combine channels (a sitemap and a feed). Every draw is keyed by the seed, the
//! page and the unit ([`keyed_uniform`]), so both sides of a crawl (`web-replay` publishing,
//! `simulate` replaying) draw the same signals.
//!
//! # Dates on the wire
//!
//! `web-replay` publishes unit `u` as the start of `u` on the collection's clock
//! (`origin + u × unit_seconds`, [`crate::corpus::Clock::start_of`]), written as an ISO 8601
//! UTC timestamp ([`w3c_datetime`]); a crawl reads a date back as the unit it falls in on its
//! own clock ([`DateClock::unit_of`]): the same clock gives back `u` exactly.
//!
//! # What a policy may read
//!
//! At unit `t` the crawler has read the site's channels at `t` (before choosing): a date or a
//! feed item reflects only changes up to `t − D`. A [`PageSignal`] keeps, per page, the latest
//! date and feed item read; [`PageSignal::flags_change_since`] says whether they report a change
//! after the held copy was fetched. Oracle mode knows the history and ignores signals.

use std::fmt;
use std::str::FromStr;

use crate::corpus::{PageId, Unit};

pub mod dates;
pub mod publish;
pub mod trust;

pub use dates::{
    parse_feed_date, parse_rfc2822_datetime, parse_w3c_datetime, rfc822_datetime, w3c_datetime,
    DateClock, NotADatetime,
};
pub use publish::PublishedSignals;
pub use trust::SignalTrust;

/// One channel of published change signals (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum SignalSpec {
    /// Sitemap `<lastmod>` dates.
    Lastmod(LastmodSpec),
    /// A change feed per host.
    Feed(FeedSpec),
}

/// A sitemap's `<lastmod>` dates (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LastmodSpec {
    /// Share of the sitemap's entries that carry a date.
    pub(crate) coverage: f64,
    /// P(the date moves | the page changed in the unit).
    pub(crate) recall: f64,
    /// P(the date moves | the page did not change in the unit).
    pub(crate) false_positive: f64,
    /// Units between a change and the sitemap that shows it.
    pub(crate) delay: Unit,
    /// Every date is the sitemap's build time.
    pub(crate) build_stamped: bool,
}

impl Default for LastmodSpec {
    /// An accurate date on every entry.
    fn default() -> Self {
        LastmodSpec {
            coverage: 1.0,
            recall: 1.0,
            false_positive: 0.0,
            delay: 0,
            build_stamped: false,
        }
    }
}

/// A change feed per host (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FeedSpec {
    /// Changes the feed holds (the newest).
    pub(crate) items: usize,
    /// Units between a change and the feed that shows it.
    pub(crate) delay: Unit,
}

/// MediaWiki's default RecentChanges feed length.
pub(crate) const DEFAULT_FEED_ITEMS: usize = 50;

impl Default for FeedSpec {
    fn default() -> Self {
        FeedSpec {
            items: DEFAULT_FEED_ITEMS,
            delay: 0,
        }
    }
}

/// A `--signals` value that does not parse.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SignalSpecError {
    #[error("unknown signal kind `{0}` (expected none, lastmod or feed)")]
    UnknownKind(String),
    #[error("`{kind}` has no setting `{key}` (it has: {expected})")]
    UnknownKey {
        kind: &'static str,
        key: String,
        expected: &'static str,
    },
    #[error("`{kind}:{key}={value}`: {reason}")]
    BadValue {
        kind: &'static str,
        key: String,
        value: String,
        reason: &'static str,
    },
    #[error("`{0}` is not `key=value`")]
    NotKeyValue(String),
    #[error("`none` cannot be combined with other signals")]
    NoneCombined,
}

fn probability(kind: &'static str, key: &str, value: &str) -> Result<f64, SignalSpecError> {
    match value.parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        _ => Err(SignalSpecError::BadValue {
            kind,
            key: key.into(),
            value: value.into(),
            reason: "expected a probability in [0, 1]",
        }),
    }
}

fn count(kind: &'static str, key: &str, value: &str, min: u64) -> Result<u64, SignalSpecError> {
    match value.parse::<u64>() {
        Ok(x) if x >= min && x <= u32::MAX as u64 => Ok(x),
        _ => Err(SignalSpecError::BadValue {
            kind,
            key: key.into(),
            value: value.into(),
            reason: if min == 0 {
                "expected a whole number of units"
            } else {
                "expected a whole number of at least 1"
            },
        }),
    }
}

impl FromStr for SignalSpec {
    type Err = SignalSpecError;

    /// One channel: `lastmod[:k=v,…]`, `lastmod:build-stamped` or `feed[:k=v,…]` (`none` is
    /// parsed by [`SignalSettings`]).
    fn from_str(spec: &str) -> Result<Self, Self::Err> {
        let spec = spec.trim();
        let (kind, settings) = spec.split_once(':').unwrap_or((spec, ""));
        let pairs = settings.split(',').map(str::trim).filter(|s| !s.is_empty());
        match kind {
            "lastmod" => {
                let mut m = LastmodSpec::default();
                for pair in pairs {
                    if pair == "build-stamped" {
                        m.build_stamped = true;
                        continue;
                    }
                    let (key, value) = pair
                        .split_once('=')
                        .ok_or_else(|| SignalSpecError::NotKeyValue(pair.into()))?;
                    match key {
                        "coverage" => m.coverage = probability("lastmod", key, value)?,
                        "recall" => m.recall = probability("lastmod", key, value)?,
                        "false-positive" => m.false_positive = probability("lastmod", key, value)?,
                        "delay" => m.delay = count("lastmod", key, value, 0)? as Unit,
                        _ => {
                            return Err(SignalSpecError::UnknownKey {
                                kind: "lastmod",
                                key: key.into(),
                                expected: "coverage, recall, false-positive, delay, build-stamped",
                            })
                        }
                    }
                }
                Ok(SignalSpec::Lastmod(m))
            }
            "feed" => {
                let mut f = FeedSpec::default();
                for pair in pairs {
                    let (key, value) = pair
                        .split_once('=')
                        .ok_or_else(|| SignalSpecError::NotKeyValue(pair.into()))?;
                    match key {
                        "items" => f.items = count("feed", key, value, 1)? as usize,
                        "delay" => f.delay = count("feed", key, value, 0)? as Unit,
                        _ => {
                            return Err(SignalSpecError::UnknownKey {
                                kind: "feed",
                                key: key.into(),
                                expected: "items, delay",
                            })
                        }
                    }
                }
                Ok(SignalSpec::Feed(f))
            }
            other => Err(SignalSpecError::UnknownKind(other.into())),
        }
    }
}

impl fmt::Display for SignalSpec {
    /// The spec in full, every setting spelled out (what outputs report).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SignalSpec::Lastmod(m) if m.build_stamped => {
                write!(
                    f,
                    "lastmod:build-stamped,coverage={},delay={}",
                    m.coverage, m.delay
                )
            }
            SignalSpec::Lastmod(m) => write!(
                f,
                "lastmod:coverage={},recall={},false-positive={},delay={}",
                m.coverage, m.recall, m.false_positive, m.delay
            ),
            SignalSpec::Feed(x) => write!(f, "feed:items={},delay={}", x.items, x.delay),
        }
    }
}

/// The channels a site publishes: empty for `none`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SignalSettings {
    pub(crate) channels: Vec<SignalSpec>,
}

impl SignalSettings {
    /// From the `--signals` values (each may itself be a `+`-free single spec; `none` alone).
    pub fn parse<S: AsRef<str>>(specs: &[S]) -> Result<Self, SignalSpecError> {
        let mut channels = Vec::new();
        let mut none = false;
        for spec in specs {
            let spec = spec.as_ref().trim();
            if spec == "none" {
                none = true;
                continue;
            }
            channels.push(spec.parse()?);
        }
        if none && !channels.is_empty() {
            return Err(SignalSpecError::NoneCombined);
        }
        Ok(SignalSettings { channels })
    }

    /// What `web-replay` has always served: an accurate `<lastmod>` on every page.
    pub fn accurate_lastmod() -> Self {
        SignalSettings {
            channels: vec![SignalSpec::Lastmod(LastmodSpec::default())],
        }
    }

    pub fn is_none(&self) -> bool {
        self.channels.is_empty()
    }

    /// The specs as outputs report them (`["none"]` when there are none).
    pub fn labels(&self) -> Vec<String> {
        if self.channels.is_empty() {
            return vec!["none".into()];
        }
        self.channels.iter().map(|c| c.to_string()).collect()
    }

    /// The sitemap channel, if any (the first `lastmod`).
    pub(crate) fn lastmod(&self) -> Option<&LastmodSpec> {
        self.channels.iter().find_map(|c| match c {
            SignalSpec::Lastmod(m) => Some(m),
            _ => None,
        })
    }

    /// The feed channel, if any (the first `feed`).
    pub fn feed(&self) -> Option<&FeedSpec> {
        self.channels.iter().find_map(|c| match c {
            SignalSpec::Feed(f) => Some(f),
            _ => None,
        })
    }
}

impl fmt::Display for SignalSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.labels().join(" + "))
    }
}

/// One signal read at a unit: a page's sitemap date, or a feed item naming a page's change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SignalEvent {
    pub page: PageId,
    pub kind: SignalKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignalKind {
    /// The sitemap lists the page with this `<lastmod>` (as a unit).
    Lastmod(Unit),
    /// The feed lists a change of the page at this unit.
    FeedItem(Unit),
}

/// What one read of a site's channels brought ([`crate::fetch::Fetcher::signals`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SignalReading {
    /// The dates and feed items new since the previous read.
    pub(crate) events: Vec<SignalEvent>,
    /// The site publishes a change feed: every page could appear in it.
    pub(crate) feed_channel: bool,
}

/// What the crawler has read of one page's signals so far (the latest of each channel).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PageSignal {
    /// The latest `<lastmod>` read (`None`: the page's entry carries none, or no sitemap).
    pub lastmod: Option<Unit>,
    /// The unit of the latest change a feed reported.
    pub feed: Option<Unit>,
    /// The site publishes a feed (so a change of this page could appear in it).
    pub feed_channel: bool,
}

impl PageSignal {
    /// Takes one event read.
    pub fn note(&mut self, kind: SignalKind) {
        match kind {
            SignalKind::Lastmod(date) => self.lastmod = Some(date),
            SignalKind::FeedItem(unit) => {
                self.feed = Some(self.feed.map_or(unit, |u| u.max(unit)));
            }
        }
    }

    /// Which channels can speak for this page: its [`SignalClass`].
    pub(crate) fn class(&self) -> SignalClass {
        SignalClass {
            lastmod: self.lastmod.is_some(),
            feed: self.feed_channel,
        }
    }

    /// Whether the signals read report a change after unit `since` (the held copy's fetch):
    /// `None` when no channel speaks for the page.
    pub fn flags_change_since(&self, since: Unit) -> Option<bool> {
        let class = self.class();
        if !class.any() {
            return None;
        }
        Some(self.lastmod.is_some_and(|d| d > since) || self.feed.is_some_and(|u| u > since))
    }
}

/// Which channels speak for a page: trust is learned per class (a page with a sitemap date and
/// one known only through the feed are told apart).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct SignalClass {
    pub(crate) lastmod: bool,
    pub(crate) feed: bool,
}

impl SignalClass {
    pub(crate) fn any(self) -> bool {
        self.lastmod || self.feed
    }

    /// Index in `0..4`.
    pub fn index(self) -> usize {
        self.lastmod as usize * 2 + self.feed as usize
    }
}

/// A uniform draw in `[0, 1)` keyed by `(seed, page, unit, salt)`: the same on every side of a
/// crawl and in every run, whatever the order of the draws.
pub fn keyed_uniform(seed: u64, page: PageId, unit: Unit, salt: u64) -> f64 {
    let mut bytes = [0u8; 28];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    bytes[8..12].copy_from_slice(&page.to_le_bytes());
    bytes[12..16].copy_from_slice(&unit.to_le_bytes());
    bytes[16..24].copy_from_slice(&salt.to_le_bytes());
    let h = xxhash_rust::xxh3::xxh3_64(&bytes);
    (h >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_units_date_reads_back_as_that_unit() {
        let clock = DateClock {
            origin: 1_362_268_800.0,
            unit_seconds: 7.0 * 86_400.0,
        };
        for u in [0, 1, 5, 400] {
            let date = w3c_datetime(clock.start_of(u));
            assert_eq!(
                clock.unit_of(parse_w3c_datetime(&date).unwrap()),
                u,
                "{date}"
            );
        }
        assert_eq!(w3c_datetime(clock.start_of(1)), "2013-03-10T00:00:00Z");
        let fast = DateClock {
            origin: 1_700_000_000.25,
            unit_seconds: 0.3,
        };
        for u in [0, 1, 7, 99] {
            let date = w3c_datetime(fast.start_of(u));
            assert_eq!(
                fast.unit_of(parse_w3c_datetime(&date).unwrap()),
                u,
                "{date}"
            );
        }
        assert_eq!(clock.unit_of(0.0), 0);
        for (text, time) in [
            ("2013-03-10", 1_362_873_600.0),
            ("2013-03-10T01:00+01:00", 1_362_873_600.0),
            ("2013-03-10T00:00:00.500Z", 1_362_873_600.5),
        ] {
            assert_eq!(parse_w3c_datetime(text), Ok(time), "{text}");
        }
        let err = parse_w3c_datetime("last tuesday").unwrap_err().to_string();
        assert!(err.contains("last tuesday"), "{err}");
    }

    #[test]
    fn specs_parse_with_defaults_and_print_in_full() {
        let s = SignalSettings::parse(&["lastmod"]).unwrap();
        assert_eq!(
            s.channels,
            vec![SignalSpec::Lastmod(LastmodSpec::default())]
        );
        assert_eq!(
            s.labels(),
            vec!["lastmod:coverage=1,recall=1,false-positive=0,delay=0"]
        );
        let s = SignalSettings::parse(&[
            "lastmod:coverage=0.6,recall=0.8,false-positive=0.2,delay=1",
            "feed:items=10",
        ])
        .unwrap();
        assert_eq!(
            s.lastmod(),
            Some(&LastmodSpec {
                coverage: 0.6,
                recall: 0.8,
                false_positive: 0.2,
                delay: 1,
                build_stamped: false
            })
        );
        assert_eq!(
            s.feed(),
            Some(&FeedSpec {
                items: 10,
                delay: 0
            })
        );
        assert!(
            SignalSettings::parse(&["lastmod:build-stamped"])
                .unwrap()
                .lastmod()
                .unwrap()
                .build_stamped
        );
        assert!(SignalSettings::parse(&["none"]).unwrap().is_none());
        assert_eq!(SignalSettings::default().labels(), vec!["none"]);
        // Round trip: what outputs print parses back to the same settings.
        let again = SignalSettings::parse(&s.labels()).unwrap();
        assert_eq!(again, s);
    }

    #[test]
    fn bad_specs_name_what_is_wrong() {
        let err = |s: &str| SignalSettings::parse(&[s]).unwrap_err().to_string();
        assert!(err("sitemap").contains("unknown signal kind `sitemap`"));
        assert!(err("lastmod:recall=1.5").contains("recall=1.5"));
        assert!(err("lastmod:recall=1.5").contains("probability"));
        assert!(err("feed:items=0").contains("at least 1"));
        assert!(err("feed:colour=red").contains("no setting `colour`"));
        assert!(err("lastmod:recall").contains("not `key=value`"));
        assert!(SignalSettings::parse(&["none", "feed"]).is_err());
    }

    #[test]
    fn a_signal_flags_only_changes_after_the_copy() {
        let mut s = PageSignal::default();
        assert_eq!(s.flags_change_since(0), None);
        s.note(SignalKind::Lastmod(3));
        assert_eq!(s.flags_change_since(2), Some(true));
        assert_eq!(s.flags_change_since(3), Some(false));
        let mut f = PageSignal {
            feed_channel: true,
            ..PageSignal::default()
        };
        assert_eq!(f.flags_change_since(0), Some(false));
        f.note(SignalKind::FeedItem(5));
        f.note(SignalKind::FeedItem(4));
        assert_eq!(f.feed, Some(5));
        assert_eq!(f.flags_change_since(4), Some(true));
    }

    #[test]
    fn keyed_draws_are_uniform_and_keyed() {
        let n = 20_000;
        let mean: f64 = (0..n).map(|p| keyed_uniform(7, p, 3, 1)).sum::<f64>() / n as f64;
        assert!((mean - 0.5).abs() < 0.01, "{mean}");
        assert_eq!(keyed_uniform(7, 1, 3, 1), keyed_uniform(7, 1, 3, 1));
        assert_ne!(keyed_uniform(7, 1, 3, 1), keyed_uniform(8, 1, 3, 1));
        assert_ne!(keyed_uniform(7, 1, 3, 1), keyed_uniform(7, 1, 3, 2));
    }
}
