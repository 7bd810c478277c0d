//! Mapping capture times onto discrete time units.

/// Seconds in one week, the default time unit (paper 003 simulated weekly snapshots).
pub const WEEK_SECONDS: i64 = 7 * 24 * 3600;

/// A clock of `units` consecutive units of `unit_seconds`, unit 0 starting at `origin`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock {
    /// Start of unit 0, seconds since the Unix epoch (the earliest capture by default).
    pub origin: i64,
    /// Length of one unit in seconds.
    pub unit_seconds: i64,
    /// Number of units covered by the captures.
    pub units: u32,
}

impl Clock {
    /// The unit a capture at `time` falls in; captures before `origin` fall in unit 0.
    pub fn unit_of(&self, time: i64) -> u32 {
        if time <= self.origin {
            0
        } else {
            ((time - self.origin) / self.unit_seconds) as u32
        }
    }

    /// Start time of `unit`.
    pub fn start_of(&self, unit: u32) -> i64 {
        self.origin + unit as i64 * self.unit_seconds
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weeks_from_origin() {
        let c = Clock {
            origin: 1000,
            unit_seconds: WEEK_SECONDS,
            units: 3,
        };
        assert_eq!(c.unit_of(1000), 0);
        assert_eq!(c.unit_of(1000 + WEEK_SECONDS - 1), 0);
        assert_eq!(c.unit_of(1000 + WEEK_SECONDS), 1);
        assert_eq!(c.start_of(2), 1000 + 2 * WEEK_SECONDS);
    }
}
