//! Submission times of the query logs: AOL's `YYYY-MM-DD hh:mm:ss` and Excite's
//! `YYMMDDhhmmss`, read as UTC into Unix seconds. Layout detection and the layout readers both
//! use them, so they live apart from either.

/// Parses `YYYY-MM-DD hh:mm:ss` (read as UTC) into Unix seconds; `None` when malformed or out of
/// range (month 1–12, day within the month, 00:00:00–23:59:59).
pub fn parse_iso_time(s: &[u8]) -> Option<i64> {
    if s.len() != 19
        || s[4] != b'-'
        || s[7] != b'-'
        || s[10] != b' '
        || s[13] != b':'
        || s[16] != b':'
    {
        return None;
    }
    let year = digits(&s[0..4])?;
    let month = digits(&s[5..7])?;
    let day = digits(&s[8..10])?;
    let (h, m, sec) = (
        digits(&s[11..13])?,
        digits(&s[14..16])?,
        digits(&s[17..19])?,
    );
    to_unix(year, month, day, h, m, sec)
}

/// Parses Excite's `YYMMDDhhmmss` (read as UTC): years 70–99 are 19YY, 00–69 are 20YY.
pub fn parse_excite_time(s: &[u8]) -> Option<i64> {
    if s.len() != 12 {
        return None;
    }
    let yy = digits(&s[0..2])?;
    let year = if yy >= 70 { 1900 + yy } else { 2000 + yy };
    to_unix(
        year,
        digits(&s[2..4])?,
        digits(&s[4..6])?,
        digits(&s[6..8])?,
        digits(&s[8..10])?,
        digits(&s[10..12])?,
    )
}

fn digits(s: &[u8]) -> Option<i64> {
    let mut v = 0i64;
    for &b in s {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (b - b'0') as i64;
    }
    Some(v)
}

fn to_unix(year: i64, month: i64, day: i64, h: i64, m: i64, s: i64) -> Option<i64> {
    if !(1..=12).contains(&month) || day < 1 || h > 23 || m > 59 || s > 59 {
        return None;
    }
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let month_days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if day > month_days[(month - 1) as usize] {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86_400 + h * 3600 + m * 60 + s)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_utc_unix_seconds() {
        assert_eq!(parse_iso_time(b"1970-01-01 00:00:00"), Some(0));
        assert_eq!(parse_iso_time(b"2006-03-01 00:01:44"), Some(1_141_171_304));
        assert_eq!(parse_iso_time(b"2006-02-29 00:00:00"), None);
        assert_eq!(parse_iso_time(b"2004-02-29 23:59:59"), Some(1_078_099_199));
        assert_eq!(parse_iso_time(b"2006-03-01 24:00:00"), None);
        assert_eq!(parse_iso_time(b"2006-03-01T00:00:00"), None);
        assert_eq!(parse_excite_time(b"970916105432"), Some(874_407_272));
        assert_eq!(parse_excite_time(b"97091610543"), None);
        assert_eq!(parse_excite_time(b"9709161054x2"), None);
    }
}
