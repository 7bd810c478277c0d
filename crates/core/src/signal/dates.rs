//! Dates as sites publish them (sitemap `<lastmod>`, Atom `<updated>`, RSS `<pubDate>` and
//! `<dc:date>`) and the units they stand for: [`DateClock`] maps a unit to its start and a date
//! back to its unit, [`w3c_datetime`] and [`parse_w3c_datetime`] write and read the W3C profile
//! of ISO 8601 (sitemaps, Atom, Dublin Core), [`rfc822_datetime`] and [`parse_rfc2822_datetime`]
//! write and read the RFC 822 (2822) dates of RSS 2.0, and [`parse_feed_date`] reads a feed
//! entry's date in either.

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

/// `time` (seconds since the Unix epoch) as RSS 2.0 writes `<pubDate>`: an RFC 822 date-time
/// with a four-digit year, in GMT, as the RSS specification's examples
/// (`Tue, 10 Jun 2003 04:00:00 GMT`). RFC 822 has no fractions of a second: the time is
/// rounded to the second (a collection's clock counts whole seconds, so a unit's start is
/// exact).
pub fn rfc822_datetime(time: f64) -> String {
    let Some(t) = chrono::DateTime::from_timestamp(time.round() as i64, 0) else {
        return "Thu, 01 Jan 1970 00:00:00 GMT".into();
    };
    t.format("%a, %d %b %Y %H:%M:%S GMT").to_string()
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
    Err(NotADatetime::of(text, W3C))
}

/// An RFC 2822 date-time (§3.3, with the obsolete forms of §4.3), as RSS 2.0 writes
/// `<pubDate>` ("All date-times in RSS conform to the Date and Time Specification of RFC 822,
/// with the exception that the year may be expressed with two characters or four characters",
/// <https://www.rssboard.org/rss-specification>), as seconds since the Unix epoch:
/// `[day-of-week ","] day month year hour ":" minute [":" second] zone`, the zone numeric
/// (`+0000`, `-0500`) or named (`UT`, `GMT`, `EST`/`EDT`, `CST`/`CDT`, `MST`/`MDT`, `PST`/`PDT`;
/// other letters, `UTC` and `CEST` as the military zones, are `-0000`, UTC, as §4.3 says); a two-digit
/// year `< 50` is 20YY, else 19YY (§4.3). A day of the week that does not match the date (a
/// common slip of feed generators) is ignored rather than refusing the date. `Err` quotes the
/// text.
pub fn parse_rfc2822_datetime(text: &str) -> Result<f64, NotADatetime> {
    let text = text.trim();
    let mut forms = vec![text.to_string()];
    // §4.3: an alphabetic zone of more than one letter that is not one of the named ones (`UTC`,
    // `CEST`, …) "SHOULD be considered equivalent to -0000".
    if let Some((rest, zone)) = text.rsplit_once(char::is_whitespace) {
        if zone.len() > 1 && zone.chars().all(|c| c.is_ascii_alphabetic()) {
            forms.push(format!("{} -0000", rest.trim_end()));
        }
    }
    // Without the day of the week (optional in §3.3), for when it is what disagrees.
    for i in 0..forms.len() {
        if let Some((day, rest)) = forms[i].split_once(',') {
            if day.trim().chars().all(|c| c.is_ascii_alphabetic()) {
                forms.push(rest.trim().to_string());
            }
        }
    }
    forms
        .iter()
        .find_map(|form| chrono::DateTime::parse_from_rfc2822(form).ok())
        .map(|t| t.timestamp_millis() as f64 / 1000.0)
        .ok_or_else(|| NotADatetime::of(text, RFC_2822))
}

/// The date of a feed entry as seconds since the Unix epoch: a W3C datetime (Atom's
/// `<updated>`, RFC 4287 §3.3; Dublin Core's `<dc:date>` in RSS 1.0 and 2.0) by
/// [`parse_w3c_datetime`], else an RFC 2822 date (RSS 2.0's `<pubDate>`) by
/// [`parse_rfc2822_datetime`]. `Err` quotes the text and names both formats.
pub fn parse_feed_date(text: &str) -> Result<f64, NotADatetime> {
    parse_w3c_datetime(text)
        .or_else(|_| parse_rfc2822_datetime(text))
        .map_err(|_| NotADatetime::of(text.trim(), W3C_OR_RFC_2822))
}

const W3C: &str = "not a W3C datetime (YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ)";
const RFC_2822: &str = "not an RFC 2822 date (Tue, 10 Jun 2003 04:00:00 GMT)";
const W3C_OR_RFC_2822: &str = "neither a W3C datetime (YYYY-MM-DDThh:mm:ssZ) nor an RFC 2822 date (Tue, 10 Jun 2003 04:00:00 GMT)";

/// A date text that could not be read; shows its first 40 characters, escaped, and the
/// format(s) it was read as.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{shown}` is {expected}")]
pub struct NotADatetime {
    shown: String,
    expected: &'static str,
}

impl NotADatetime {
    fn of(text: &str, expected: &'static str) -> Self {
        // Escaped: the text comes from a site and ends up on a terminal.
        let shown: String = text.chars().take(40).collect();
        NotADatetime {
            shown: shown.escape_debug().to_string(),
            expected,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_2822_dates_read_with_numeric_and_named_zones() {
        // 2003-06-10T04:00:00Z, the RSS 2.0 specification's sample date.
        let t = 1_055_217_600.0;
        for (text, time) in [
            ("Tue, 10 Jun 2003 04:00:00 GMT", t),
            ("Tue, 10 Jun 2003 04:00:00 +0000", t),
            ("10 Jun 2003 04:00:00 UT", t),
            ("Tue, 10 Jun 2003 04:00 GMT", t),
            ("Tue, 10 Jun 2003 00:00:00 EDT", t),
            ("Mon, 09 Jun 2003 23:00:00 EST", t),
            ("Mon, 09 Jun 2003 20:00:00 -0800", t),
            ("Tue, 10 Jun 2003 05:30:00 +0130", t),
            ("  Tue, 10 Jun 03 04:00:00 GMT ", t),
            ("Tue, 10 Jun 2003 04:00:00 UTC", t),
            ("Tue, 10 Jun 2003 04:00:00 CEST", t),
            ("Tue, 10 Jun 2003 04:00:00 Z", t),
            // The wrong day of the week: the date stands.
            ("Fri, 10 Jun 2003 04:00:00 GMT", t),
            // A two-digit year of the last century.
            ("31 Dec 99 23:59:59 GMT", 946_684_799.0),
        ] {
            assert_eq!(parse_rfc2822_datetime(text), Ok(time), "{text}");
        }
        for bad in [
            "2003-06-10",
            "Tue, 10 Jun 2003",
            "Tue, 32 Jun 2003 04:00:00 GMT",
            "",
        ] {
            let err = parse_rfc2822_datetime(bad).unwrap_err().to_string();
            assert!(err.contains(bad) && err.contains("RFC 2822"), "{err}");
        }
    }

    #[test]
    fn rfc_822_dates_are_written_in_gmt_and_read_back_as_the_same_unit() {
        assert_eq!(
            rfc822_datetime(1_055_217_600.0),
            "Tue, 10 Jun 2003 04:00:00 GMT"
        );
        let clock = DateClock {
            origin: 1_362_268_800.0,
            unit_seconds: 7.0 * 86_400.0,
        };
        for u in [0, 1, 5, 400] {
            let date = rfc822_datetime(clock.start_of(u));
            assert_eq!(
                clock.unit_of(parse_rfc2822_datetime(&date).unwrap()),
                u,
                "{date}"
            );
            assert_eq!(parse_feed_date(&date), parse_rfc2822_datetime(&date));
        }
    }

    #[test]
    fn a_feed_date_is_either_format() {
        let t = 1_055_217_600.0;
        for text in [
            "2003-06-10T04:00:00Z",
            "2003-06-10T06:00+02:00",
            "Tue, 10 Jun 2003 04:00:00 GMT",
            "Tue, 10 Jun 2003 00:00:00 -0400",
        ] {
            assert_eq!(parse_feed_date(text), Ok(t), "{text}");
        }
        assert_eq!(parse_feed_date("2003-06-10"), Ok(1_055_203_200.0));
        let err = parse_feed_date("yesterday\n").unwrap_err().to_string();
        assert!(
            err.contains("yesterday") && err.contains("W3C") && err.contains("RFC 2822"),
            "{err}"
        );
    }
}
