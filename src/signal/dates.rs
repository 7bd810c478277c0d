//! Dates as sites publish them (sitemap `<lastmod>`, Atom `<updated>`) and the units they stand
//! for: [`DateClock`] maps a unit to its start and a date back to its unit, [`w3c_datetime`] and
//! [`parse_w3c_datetime`] write and read the W3C profile of ISO 8601 both use.

use crate::corpus::Unit;

/// How dates map to units and back (see the module docs): unit `u` starts at
/// `origin + u × unit_seconds` (seconds since the Unix epoch; fractions allowed, for a crawl
/// whose units last less than a second).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DateClock {
    pub origin: f64,
    pub unit_seconds: f64,
}

impl DateClock {
    /// The clock of a collection (what `web-replay` publishes dates on).
    pub fn of(clock: &crate::corpus::Clock) -> Self {
        DateClock {
            origin: clock.origin as f64,
            unit_seconds: clock.unit_seconds as f64,
        }
    }

    /// The start of `unit`: the date a change of that unit is published with.
    pub fn start_of(&self, unit: Unit) -> f64 {
        self.origin + unit as f64 * self.unit_seconds
    }

    /// The unit `time` falls in; dates before the origin fall in unit 0. A unit's start maps
    /// back to that unit: half a millisecond is absorbed, the rounding of a date written to
    /// the millisecond ([`w3c_datetime`]).
    pub fn unit_of(&self, time: f64) -> Unit {
        let valid = time.is_finite() && self.unit_seconds.is_finite() && self.unit_seconds > 0.0;
        if !valid || time <= self.origin {
            return 0;
        }
        ((time - self.origin + 0.0005) / self.unit_seconds)
            .floor()
            .min(Unit::MAX as f64) as Unit
    }
}

/// `time` (seconds since the Unix epoch) as a W3C datetime in UTC (the profile of ISO 8601
/// that sitemaps and Atom use): whole seconds as `2013-03-03T00:00:00Z`, fractions to the
/// millisecond.
pub fn w3c_datetime(time: f64) -> String {
    let millis = (time * 1000.0).round() as i64;
    let Some(t) = chrono::DateTime::from_timestamp_millis(millis) else {
        return "1970-01-01T00:00:00Z".into();
    };
    if millis % 1000 == 0 {
        t.format("%Y-%m-%dT%H:%M:%SZ").to_string()
    } else {
        t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
    }
}

/// A W3C datetime (`YYYY-MM-DD`, or with a time `hh:mm[:ss[.s]]` and a zone `Z`/`±hh:mm`) as
/// seconds since the Unix epoch; a date alone is its UTC midnight. `Err` quotes the text.
pub fn parse_w3c_datetime(text: &str) -> Result<f64, NotADatetime> {
    let text = text.trim();
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(text) {
        return Ok(t.timestamp_millis() as f64 / 1000.0);
    }
    // `hh:mm` without seconds is allowed by the W3C profile, not by RFC 3339.
    if let Some((date, time)) = text.split_once('T') {
        let zone_at = time.find(['Z', 'z', '+', '-']).unwrap_or(time.len());
        if time[..zone_at].len() == 5 {
            let with_seconds = format!("{date}T{}:00{}", &time[..zone_at], &time[zone_at..]);
            if let Ok(t) = chrono::DateTime::parse_from_rfc3339(&with_seconds) {
                return Ok(t.timestamp_millis() as f64 / 1000.0);
            }
        }
    }
    if let Ok(d) = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        if let Some(t) = d.and_hms_opt(0, 0, 0) {
            return Ok(t.and_utc().timestamp() as f64);
        }
    }
    // Escaped: the text comes from a site and ends up on a terminal.
    let shown: String = text.chars().take(40).collect();
    Err(NotADatetime {
        shown: shown.escape_debug().to_string(),
    })
}

/// A date text that [`parse_w3c_datetime`] cannot read; shows its first 40 characters, escaped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{shown}` is not a W3C datetime (YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ)")]
pub struct NotADatetime {
    shown: String,
}
