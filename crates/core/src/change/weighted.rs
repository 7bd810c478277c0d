//! Weighted change rates from a page's change history: NAD, SAD, AAD, GAD (papers 000, 001,
//! 002), and the change probability they give.
//!
//! A page's rate is estimated from change indicators `I_1 … I_n` of its last `n` cycles as the
//! normalised weighted mean `λ = Σ w_i·I_i / Σ w_i` — the form that meets every paper's special
//! case (equal weights give `X/n`) and the one the GP4C authors' code computes (papers 000/002
//! print it unnormalised or divided by `n`; see the project's reconstruction notes). The weights
//! say how much recent cycles count:
//!
//! | estimator | weights `w_i` | rate |
//! |---|---|---|
//! | NAD (non-adaptive) | 1 | `X / n` |
//! | SAD (short-sighted) | `w_n = 1`, others 0 | `I_n` |
//! | AAD (arithmetic) | `i` | `Σ i·I_i / (n(n+1)/2)` |
//! | GAD (geometric) | `2^{i−1}` | `Σ 2^{i−1}·I_i / (2^n − 1)` |
//!
//! Histories are indexed by **download cycle** (a cycle without a visit counts as no change,
//! as the papers' `I(L_i[p])` and the authors' code do) or, optionally, by **visit** (paper
//! 001's prose: `I_i` is whether the i-th visit found a change).

/// Which weighting of the change history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Weighting {
    /// Non-adaptive: every cycle alike.
    Nad,
    /// Short-sighted adaptive: the last cycle only.
    Sad,
    /// Arithmetically adaptive: cycle `i` weighs `i`.
    Aad,
    /// Geometrically adaptive: cycle `i` weighs `2^{i−1}`.
    Gad,
}

impl Weighting {
    pub const ALL: [Weighting; 4] = [
        Weighting::Nad,
        Weighting::Sad,
        Weighting::Aad,
        Weighting::Gad,
    ];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Weighting::Nad => "nad",
            Weighting::Sad => "sad",
            Weighting::Aad => "aad",
            Weighting::Gad => "gad",
        }
    }
}

/// The weighted change rate over indicators `changed[0..n]` (`changed[i]` is `I_{i+1}`, oldest
/// first).
///
/// Papers 000 §4 / 001 §5.1 / 002 Eq. 8, normalised form (module docs). GAD is computed by the
/// recursion `G_n = (G_{n−1}·(2^{n−1} − 1) + 2^{n−1}·I_n) / (2^n − 1)` rewritten as
/// `G_n = G_{n−1}·r_n + I_n·(1 − r_n)` with `r_n = (2^{n−1} − 1)/(2^n − 1)`, so long histories
/// need no big powers. An empty history has rate 0.
pub fn weighted_rate(weighting: Weighting, changed: &[bool]) -> f64 {
    let n = changed.len();
    if n == 0 {
        return 0.0;
    }
    let indicator = |c: bool| if c { 1.0 } else { 0.0 };
    match weighting {
        Weighting::Nad => changed.iter().filter(|&&c| c).count() as f64 / n as f64,
        Weighting::Sad => indicator(changed[n - 1]),
        Weighting::Aad => {
            let num: f64 = changed
                .iter()
                .enumerate()
                .map(|(i, &c)| (i + 1) as f64 * indicator(c))
                .sum();
            num / (n as f64 * (n as f64 + 1.0) / 2.0)
        }
        Weighting::Gad => {
            let mut g = 0.0;
            for (i, &c) in changed.iter().enumerate() {
                // Cycle i+1: weight 2^i of a total 2^{i+1} − 1; the earlier total is 2^i − 1.
                let k = (i + 1) as i32;
                let ratio = if k > 60 {
                    0.5
                } else {
                    (2f64.powi(k - 1) - 1.0) / (2f64.powi(k) - 1.0)
                };
                g = g * ratio + indicator(c) * (1.0 - ratio);
            }
            g
        }
    }
}

/// The cycle-indexed history of a page at the start of cycle `current`: cycles `1 ..
/// current − 1`, a cycle holding `true` when a visit in it found the page changed. `change_cycles`
/// lists the cycles whose visit detected a change (any order; cycles ≥ `current` are ignored).
pub fn cycle_history(change_cycles: &[u32], current: u32) -> Vec<bool> {
    let n = current.saturating_sub(1) as usize;
    let mut history = vec![false; n];
    for &c in change_cycles {
        if c >= 1 && (c as usize) <= n {
            history[c as usize - 1] = true;
        }
    }
    history
}

/// A page's detected change cycles as running sums, giving the cycle-indexed rates of
/// [`weighted_rate`] over [`cycle_history`] in O(1) at any later cycle (paper 001's crawl
/// simulation scores every page every cycle; the authors' `url.h` keeps the same sums).
///
/// At the start of cycle `d` (cycles `1 … d − 1` observed), with changes detected in cycles
/// `c_1 < c_2 < …`: NAD = `#c / (d − 1)`, SAD = `[c_last = d − 1]`, AAD = `Σ c_j / Σ_{i<d} i`,
/// GAD = `Σ 2^{c_j − 1} / (2^{d−1} − 1)` — the normalised weighted mean of papers 000 §4 /
/// 001 §5.1 / 002 Eq. 8 (module docs). GAD's sum is kept relative to the last change cycle
/// (`Σ 2^{c_j − c_last}` < 2), so long histories need no big powers.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CycleRates {
    count: u32,
    sum_cycles: f64,
    /// `Σ_j 2^{c_j − c_last}`.
    scaled_powers: f64,
    last: u32,
}

impl CycleRates {
    /// A change detected by the visit of cycle `cycle` (cycles recorded in increasing order).
    pub(crate) fn record(&mut self, cycle: u32) {
        debug_assert!(cycle > self.last || self.count == 0);
        self.scaled_powers = if self.count == 0 {
            1.0
        } else {
            self.scaled_powers * 2f64.powi(self.last as i32 - cycle as i32) + 1.0
        };
        self.count += 1;
        self.sum_cycles += f64::from(cycle);
        self.last = cycle;
    }

    /// Changes recorded so far.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// The rate at the start of cycle `current` (changes of cycles ≥ `current` must not have
    /// been recorded); 0 before cycle 2 (an empty history, as [`weighted_rate`]).
    pub(crate) fn rate(&self, weighting: Weighting, current: u32) -> f64 {
        if current < 2 || self.count == 0 {
            return 0.0;
        }
        let n = f64::from(current - 1);
        match weighting {
            Weighting::Nad => f64::from(self.count) / n,
            Weighting::Sad => {
                if self.last == current - 1 {
                    1.0
                } else {
                    0.0
                }
            }
            Weighting::Aad => self.sum_cycles / (n * (n + 1.0) / 2.0),
            Weighting::Gad => {
                // Σ 2^{c−1} / (2^{n} − 1) = S · 2^{c_last − 1 − n} / (1 − 2^{−n}).
                let exponent = self.last as i32 - 1 - (current - 1) as i32;
                self.scaled_powers * 2f64.powi(exponent)
                    / (1.0 - 2f64.powi(-((current - 1) as i32)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::change::cg_rate;

    /// SEED-SYSTEMS §5.2: at the start of cycle 6, changes detected in cycles 2 and 5.
    #[test]
    fn the_reference_history_gives_the_published_rates() {
        let h = cycle_history(&[2, 5], 6);
        assert_eq!(h, [false, true, false, false, true]);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-5;
        assert!(close(weighted_rate(Weighting::Nad, &h), 0.4));
        assert!(close(weighted_rate(Weighting::Sad, &h), 1.0));
        assert!(close(weighted_rate(Weighting::Aad, &h), 7.0 / 15.0));
        assert!(close(weighted_rate(Weighting::Gad, &h), 18.0 / 31.0));
        assert!(close(cg_rate(5, 2), 0.45199));
    }

    #[test]
    fn gad_recursion_equals_the_closed_form_and_stays_finite() {
        let h: Vec<bool> = (0..40).map(|i| i % 3 == 1 || i % 7 == 0).collect();
        for n in 1..=h.len() {
            let closed: f64 = h[..n]
                .iter()
                .enumerate()
                .map(|(i, &c)| if c { 2f64.powi(i as i32) } else { 0.0 })
                .sum::<f64>()
                / (2f64.powi(n as i32) - 1.0);
            let got = weighted_rate(Weighting::Gad, &h[..n]);
            assert!((got - closed).abs() < 1e-12, "n = {n}: {got} vs {closed}");
        }
        let long = vec![true; 5000];
        for w in Weighting::ALL {
            let r = weighted_rate(w, &long);
            assert!((r - 1.0).abs() < 1e-9, "{w:?}: {r}");
        }
        assert_eq!(weighted_rate(Weighting::Gad, &[]), 0.0);
    }

    #[test]
    fn running_sums_equal_the_history_rates() {
        let changes: Vec<u32> = vec![2, 3, 7, 8, 9, 15, 40, 41];
        for current in 1..=45u32 {
            let mut r = CycleRates::default();
            for &c in changes.iter().filter(|&&c| c < current) {
                r.record(c);
            }
            let h = cycle_history(&changes, current);
            for w in Weighting::ALL {
                let (a, b) = (r.rate(w, current), weighted_rate(w, &h));
                assert!((a - b).abs() < 1e-12, "{w:?} at {current}: {a} vs {b}");
            }
        }
        // SEED-SYSTEMS §5.2's vector.
        let mut r = CycleRates::default();
        r.record(2);
        r.record(5);
        assert!((r.rate(Weighting::Gad, 6) - 18.0 / 31.0).abs() < 1e-12);
        let mut long = CycleRates::default();
        long.record(3000);
        assert!((long.rate(Weighting::Gad, 3001) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn equal_weights_generalise_the_plain_mean_and_recent_changes_weigh_more() {
        let early = cycle_history(&[1, 2], 6);
        let late = cycle_history(&[4, 5], 6);
        assert_eq!(
            weighted_rate(Weighting::Nad, &early),
            weighted_rate(Weighting::Nad, &late)
        );
        for w in [Weighting::Sad, Weighting::Aad, Weighting::Gad] {
            assert!(weighted_rate(w, &late) > weighted_rate(w, &early), "{w:?}");
        }
        // Visits after the current cycle do not count.
        assert_eq!(cycle_history(&[7, 9], 6), vec![false; 5]);
    }
}
