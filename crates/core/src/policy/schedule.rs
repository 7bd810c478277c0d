//! Turning refresh frequencies into a per-unit schedule: the transportation problem of Wolf et
//! al., "Optimal crawling strategies for web search engines" (WWW 2002), §4, which paper 003 §6
//! used to schedule SBR and EBR under a hard budget of `B` refreshes per unit.
//!
//! Each page `p` with frequency `f_p` yields *instances* (planned refreshes) at ideal times
//! evenly spaced `1/f_p` apart ([`plan_instances`]); [`assign`] maps instances to units of
//! capacity `B`, minimising `Σ |assigned unit − ideal time|`, never putting one page twice in
//! a unit.
//!
//! Why sorting works: with one-dimensional L1 costs, an optimal transportation plan never
//! crosses (if `a ≤ b` were sent to units `u > v`, swapping them costs no more), so when the
//! instances exactly fill the `B·T` slots, sending the instances sorted by ideal time to the
//! slots in unit order is optimal. [`plan_instances`] therefore apportions instance counts so
//! that they fill the slots exactly whenever the frequencies spend the budget.

use crate::corpus::{PageId, Unit};

/// One planned refresh of a page.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Instance {
    pub(crate) page: PageId,
    /// Ideal (fractional) time of the refresh, in units.
    pub(crate) ideal: f64,
    /// What the refresh is worth; the lowest-value instances are dropped when there are more
    /// instances than slots.
    pub(crate) value: f64,
}

/// Planned instances for the window of units `first..first + len`, capacity `capacity`.
///
/// Page `p` gets `n_p` instances at ideal times `first − 1 + (k − phase_p) · len / n_p` for
/// `k = 1..=n_p` (spacing `len/n_p ≈ 1/f_p`, the uniform refresh of Cho & Garcia-Molina 2003
/// shifted by `phase_p ∈ [0, 1)` of an interval). The counts are the quotas `f_p · len` (at most
/// `len`: never twice per unit), scaled down if they exceed the `capacity · len` slots, and
/// rounded by largest remainders (Hamilton's method; ties by page id) to a total of
/// `min(slots, round(Σ quotas))`: when the frequencies spend the budget, the instances fill
/// the slots exactly and [`assign`]'s sorted assignment is optimal. Each instance carries its
/// page's `values[p]`.
pub fn plan_instances(
    frequencies: &[f64],
    values: &[f64],
    phases: &[f64],
    first: Unit,
    len: u32,
    capacity: usize,
) -> Vec<Instance> {
    let n = frequencies.len();
    let slots = capacity as f64 * len as f64;
    let lenf = len as f64;
    let quotas: Vec<f64> = frequencies
        .iter()
        .map(|&f| (f.max(0.0) * lenf).min(lenf))
        .collect();
    let total: f64 = quotas.iter().sum();
    if total <= 0.0 || len == 0 {
        return Vec::new();
    }
    let scale = if total > slots { slots / total } else { 1.0 };
    let target = (total * scale).round().min(slots) as usize;
    let mut counts: Vec<usize> = quotas
        .iter()
        .map(|q| (q * scale).floor() as usize)
        .collect();
    let assigned: usize = counts.iter().sum();
    if assigned < target {
        let mut order: Vec<usize> = (0..n)
            .filter(|&p| counts[p] < len as usize && quotas[p] > 0.0)
            .collect();
        let frac = |p: usize| quotas[p] * scale - counts[p] as f64;
        order.sort_by(|&a, &b| frac(b).total_cmp(&frac(a)).then(a.cmp(&b)));
        for &p in order.iter().take(target - assigned) {
            counts[p] += 1;
        }
    }
    let mut out = Vec::with_capacity(target);
    for p in 0..n {
        let c = counts[p];
        if c == 0 {
            continue;
        }
        let spacing = lenf / c as f64;
        let phase = phases.get(p).copied().unwrap_or(0.0).clamp(0.0, 0.999_999);
        for k in 1..=c {
            out.push(Instance {
                page: p as PageId,
                ideal: (first as f64 - 1.0) + (k as f64 - phase) * spacing,
                value: values[p],
            });
        }
    }
    out
}

/// Assigns instances to units `first..first + len` of capacity `capacity`, minimising
/// `Σ |unit − ideal|`, at most once per page per unit. Returns the pages of each unit
/// (index `i` is unit `first + i`), each list in assignment order.
///
/// * More instances than slots: the lowest-value ones are dropped (ties: later ideal time,
///   then higher page id), leaving exactly `capacity · len`.
/// * Exactly as many: instances sorted by `(ideal, page)` fill the slots in unit order — an
///   optimal transportation solution (module docs). A page that lands twice in one unit is
///   swapped with the cheapest eligible instance of the nearest unit that can take it; if none
///   exists the duplicate is dropped (the optimality proof does not cover these repairs).
/// * Fewer: a greedy, highest value first, each instance taking the nearest unit (earlier on
///   ties) with room and without its page. Exact (zero cost) in the only case SBR/EBR produce:
///   every useful page at `f = 1`, one instance per unit. Spare slots stay empty; the
///   policies top them up (see [`crate::policy::sbr`]).
pub fn assign(instances: &[Instance], first: Unit, len: u32, capacity: usize) -> Vec<Vec<PageId>> {
    let len_us = len as usize;
    let slots = capacity * len_us;
    let mut units: Vec<Vec<Instance>> = vec![Vec::with_capacity(capacity); len_us];
    if slots == 0 {
        return vec![Vec::new(); len_us];
    }
    let mut kept: Vec<Instance> = instances.to_vec();
    if kept.len() > slots {
        kept.sort_by(highest_value_first);
        kept.truncate(slots);
    }
    if kept.len() == slots {
        kept.sort_by(|a, b| a.ideal.total_cmp(&b.ideal).then(a.page.cmp(&b.page)));
        for (k, inst) in kept.into_iter().enumerate() {
            units[k / capacity].push(inst);
        }
        repair_duplicates(&mut units, first);
    } else {
        kept.sort_by(highest_value_first);
        // Which pages each unit holds, one bit per (unit, page): O(1) membership tests.
        let pages = kept.iter().map(|x| x.page as usize + 1).max().unwrap_or(0);
        let words = pages.div_ceil(64);
        let mut members = vec![0u64; len_us * words];
        for inst in kept {
            let (word, bit) = (inst.page as usize / 64, 1u64 << (inst.page % 64));
            let open = |i: usize| units[i].len() < capacity && members[i * words + word] & bit == 0;
            if let Some(i) = nearest_open_unit(first, len_us, inst.ideal, open) {
                members[i * words + word] |= bit;
                units[i].push(inst);
            }
        }
    }
    units
        .into_iter()
        .map(|u| u.into_iter().map(|x| x.page).collect())
        .collect()
}

/// The order in which instances claim slots: highest value first, then earlier ideal time,
/// then lower page id (the lowest-value instances are the ones dropped or left unplaced).
fn highest_value_first(a: &Instance, b: &Instance) -> std::cmp::Ordering {
    b.value
        .total_cmp(&a.value)
        .then(a.ideal.total_cmp(&b.ideal))
        .then(a.page.cmp(&b.page))
}

/// The unit index `i < len` nearest to `ideal` (distance `|first + i − ideal|`, earlier on
/// ties) for which `open(i)` holds, or `None`. Walks outwards from `ideal`, so it usually
/// looks at a few units instead of all of them; the distances grow monotonically on either
/// side, so the first open unit met is the minimum a full scan would find.
fn nearest_open_unit(
    first: Unit,
    len: usize,
    ideal: f64,
    open: impl Fn(usize) -> bool,
) -> Option<usize> {
    let offset = |i: usize| first as f64 + i as f64 - ideal;
    if !ideal.is_finite() {
        // Every distance is equal (infinite or NaN): the earliest open unit.
        return (0..len).find(|&i| open(i));
    }
    // `right` is the first unit at or after `ideal`; units before it lie on the left.
    let mut right = (ideal - first as f64).ceil().clamp(0.0, len as f64) as usize;
    while right > 0 && offset(right - 1) >= 0.0 {
        right -= 1;
    }
    while right < len && offset(right) < 0.0 {
        right += 1;
    }
    let mut left = right; // the next left candidate is `left - 1`
    loop {
        let take_left = match (left > 0, right < len) {
            (false, false) => return None,
            (true, false) => true,
            (false, true) => false,
            // Ties go to the earlier unit, which is the left one.
            (true, true) => offset(left - 1).abs() <= offset(right).abs(),
        };
        if take_left {
            left -= 1;
            if open(left) {
                return Some(left);
            }
        } else {
            if open(right) {
                return Some(right);
            }
            right += 1;
        }
    }
}

/// Removes same-page duplicates within a unit by swapping with a neighbouring unit
/// (see [`assign`]).
fn repair_duplicates(units: &mut [Vec<Instance>], first: Unit) {
    use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
    let len = units.len();
    let cost = |inst: &Instance, i: usize| (first as f64 + i as f64 - inst.ideal).abs();
    // How many instances of each page every unit holds: O(1) membership tests, so units of
    // thousands of refreshes stay linear.
    let mut counts: Vec<HashMap<PageId, u32>> = units
        .iter()
        .map(|u| {
            let mut c = HashMap::default();
            for x in u {
                *c.entry(x.page).or_insert(0) += 1;
            }
            c
        })
        .collect();
    let dec = |c: &mut HashMap<PageId, u32>, p: PageId| {
        if let Some(n) = c.get_mut(&p) {
            *n -= 1;
            if *n == 0 {
                c.remove(&p);
            }
        }
    };
    for i in 0..len {
        let mut seen: HashSet<PageId> = HashSet::default();
        let mut k = 0;
        while k < units[i].len() {
            let page = units[i][k].page;
            if seen.insert(page) {
                k += 1;
                continue;
            }
            // Find the cheapest swap with an instance of a unit at growing distance.
            let mut done = false;
            for dist in 1..len {
                let mut best: Option<(f64, usize, usize)> = None;
                for j in [i.checked_sub(dist), Some(i + dist)].into_iter().flatten() {
                    if j >= len || counts[j].contains_key(&page) {
                        continue;
                    }
                    for (m, other) in units[j].iter().enumerate() {
                        if counts[i].contains_key(&other.page) {
                            continue;
                        }
                        let delta = cost(&units[i][k], j) + cost(other, i)
                            - cost(&units[i][k], i)
                            - cost(other, j);
                        if best.is_none_or(|(d, _, _)| delta < d) {
                            best = Some((delta, j, m));
                        }
                    }
                }
                if let Some((_, j, m)) = best {
                    let moved = units[i][k];
                    let other = units[j][m];
                    units[i][k] = other;
                    units[j][m] = moved;
                    dec(&mut counts[i], moved.page);
                    *counts[i].entry(other.page).or_insert(0) += 1;
                    dec(&mut counts[j], other.page);
                    *counts[j].entry(moved.page).or_insert(0) += 1;
                    seen.insert(other.page);
                    done = true;
                    break;
                }
            }
            if !done {
                let removed = units[i].remove(k);
                dec(&mut counts[i], removed.page);
            } else {
                k += 1;
            }
        }
    }
}

/// Total `Σ |unit − ideal|` of an assignment, matching instances to assigned pages per unit
/// by ideal time (a test and diagnostics helper).
pub fn assignment_cost(instances: &[Instance], first: Unit, assigned: &[Vec<PageId>]) -> f64 {
    let mut by_page: std::collections::HashMap<PageId, Vec<f64>> = Default::default();
    for inst in instances {
        by_page.entry(inst.page).or_default().push(inst.ideal);
    }
    let mut units_of: std::collections::HashMap<PageId, Vec<f64>> = Default::default();
    for (i, pages) in assigned.iter().enumerate() {
        for &p in pages {
            units_of.entry(p).or_default().push(first as f64 + i as f64);
        }
    }
    // Per page, match sorted assigned units to the nearest-in-order ideal times (non-crossing
    // is optimal per page too); unmatched ideals cost nothing here.
    let mut total = 0.0;
    for (p, us) in units_of {
        let mut ideals = by_page.remove(&p).unwrap_or_default();
        ideals.sort_by(f64::total_cmp);
        total += best_subsequence_cost(&us, &ideals);
    }
    total
}

/// Cheapest order-preserving matching of every `units` entry to distinct `ideals` (DP).
fn best_subsequence_cost(units: &[f64], ideals: &[f64]) -> f64 {
    let (a, b) = (units.len(), ideals.len());
    if a > b {
        return f64::INFINITY;
    }
    let mut dp = vec![vec![f64::INFINITY; b + 1]; a + 1];
    for cell in dp[0].iter_mut() {
        *cell = 0.0;
    }
    for i in 1..=a {
        for j in i..=b {
            dp[i][j] = dp[i][j - 1].min(dp[i - 1][j - 1] + (units[i - 1] - ideals[j - 1]).abs());
        }
    }
    dp[a][b]
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Exhaustive minimum of Σ |unit − ideal| over assignments of all instances to units
    /// `1..=len` with `capacity` per unit and no page twice in a unit.
    fn brute_force(instances: &[Instance], len: u32, capacity: usize) -> f64 {
        fn go(i: usize, inst: &[Instance], load: &mut Vec<Vec<PageId>>, cap: usize) -> f64 {
            if i == inst.len() {
                return 0.0;
            }
            let mut best = f64::INFINITY;
            for u in 0..load.len() {
                if load[u].len() < cap && !load[u].contains(&inst[i].page) {
                    load[u].push(inst[i].page);
                    let c = (u as f64 + 1.0 - inst[i].ideal).abs() + go(i + 1, inst, load, cap);
                    load[u].pop();
                    best = best.min(c);
                }
            }
            best
        }
        go(0, instances, &mut vec![Vec::new(); len as usize], capacity)
    }

    #[test]
    fn sorted_assignment_is_optimal_on_random_full_cases() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for _ in 0..150 {
            let len = rng.gen_range(1..=4u32);
            let capacity = rng.gen_range(1..=3usize);
            let n = len as usize * capacity;
            // Distinct pages (no same-page conflicts), ideal times spread around the window.
            let instances: Vec<Instance> = (0..n)
                .map(|p| Instance {
                    page: p as PageId,
                    ideal: rng.gen_range(0.0..(len as f64 + 1.0)),
                    value: 1.0,
                })
                .collect();
            let assigned = assign(&instances, 1, len, capacity);
            assert_eq!(assigned.iter().map(Vec::len).sum::<usize>(), n);
            let got = assignment_cost(&instances, 1, &assigned);
            let best = brute_force(&instances, len, capacity);
            assert!((got - best).abs() < 1e-9, "got {got}, optimum {best}");
        }
    }

    /// The greedy of [`assign`] as first written: every unit scanned for each instance.
    fn greedy_by_scan(
        instances: &[Instance],
        first: Unit,
        len: u32,
        capacity: usize,
    ) -> Vec<Vec<PageId>> {
        let unit_of = |i: usize| first as f64 + i as f64;
        let mut kept = instances.to_vec();
        kept.sort_by(highest_value_first);
        let mut units: Vec<Vec<PageId>> = vec![Vec::new(); len as usize];
        for inst in kept {
            let best = (0..len as usize)
                .filter(|&i| units[i].len() < capacity && !units[i].contains(&inst.page))
                .min_by(|&a, &b| {
                    (unit_of(a) - inst.ideal)
                        .abs()
                        .total_cmp(&(unit_of(b) - inst.ideal).abs())
                        .then(a.cmp(&b))
                });
            if let Some(i) = best {
                units[i].push(inst.page);
            }
        }
        units
    }

    #[test]
    fn the_outward_search_assigns_as_a_scan_of_every_unit() {
        let mut rng = ChaCha8Rng::seed_from_u64(23);
        let mut seen_full_units = false;
        for case in 0..2000 {
            let first = rng.gen_range(0..5u32);
            let len = rng.gen_range(1..=12u32);
            let capacity = rng.gen_range(1..=4usize);
            let slots = len as usize * capacity;
            let n = rng.gen_range(0..slots); // fewer instances than slots: the greedy branch
            let half_units = case % 2 == 0; // whole and half-unit ideals make ties
            let instances: Vec<Instance> = (0..n)
                .map(|_| Instance {
                    page: rng.gen_range(0..6),
                    ideal: if half_units {
                        first as f64 + rng.gen_range(-4..2 * len as i32 + 4) as f64 / 2.0
                    } else {
                        first as f64 + rng.gen_range(-3.0..len as f64 + 3.0)
                    },
                    value: rng.gen_range(0..3) as f64,
                })
                .collect();
            let got = assign(&instances, first, len, capacity);
            seen_full_units |= got.iter().any(|u| u.len() == capacity);
            assert_eq!(
                got,
                greedy_by_scan(&instances, first, len, capacity),
                "{instances:?}"
            );
        }
        assert!(
            seen_full_units,
            "no case filled a unit, so the search never skipped one"
        );
        // Ideals off the finite line take the earliest open unit, as the scan does.
        for ideal in [f64::INFINITY, f64::NEG_INFINITY, f64::NAN] {
            let inst: Vec<Instance> = (0..3)
                .map(|p| Instance {
                    page: p,
                    ideal,
                    value: 1.0,
                })
                .collect();
            assert_eq!(assign(&inst, 1, 4, 1), greedy_by_scan(&inst, 1, 4, 1));
        }
    }

    #[test]
    fn repeated_pages_never_share_a_unit() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        for _ in 0..100 {
            let len = rng.gen_range(2..=4u32);
            let capacity = rng.gen_range(1..=2usize);
            let n = len as usize * capacity;
            let instances: Vec<Instance> = (0..n)
                .map(|_| Instance {
                    page: rng.gen_range(0..3),
                    ideal: rng.gen_range(0.5..(len as f64 + 0.5)),
                    value: 1.0,
                })
                .collect();
            let assigned = assign(&instances, 1, len, capacity);
            for unit in &assigned {
                let mut u = unit.clone();
                u.sort();
                u.dedup();
                assert_eq!(u.len(), unit.len(), "a page twice in one unit: {unit:?}");
                assert!(unit.len() <= capacity);
            }
        }
    }

    #[test]
    fn planned_instances_fill_the_slots_and_schedule_respects_frequencies() {
        // Budget 2 per unit over 10 units: frequencies sum to 2.
        let f = [1.0, 0.5, 0.25, 0.25, 0.0];
        let values = [1.0; 5];
        let phases = [0.0, 0.5, 0.0, 0.5, 0.0];
        let inst = plan_instances(&f, &values, &phases, 1, 10, 2);
        assert_eq!(inst.len(), 20);
        let count = |p| inst.iter().filter(|x| x.page == p).count();
        assert_eq!(
            (count(0), count(1), count(2), count(3), count(4)),
            (10, 5, 3, 2, 0)
        );
        let a = assign(&inst, 1, 10, 2);
        assert!(a.iter().all(|u| u.len() == 2));
        // Page 0 (f = 1) every unit; page 1 (f = 0.5) every other unit.
        assert!(a.iter().all(|u| u.contains(&0)));
        let units_1: Vec<usize> = (0..10).filter(|&i| a[i].contains(&1)).collect();
        assert_eq!(units_1.len(), 5);
        assert!(units_1.windows(2).all(|w| w[1] - w[0] == 2), "{units_1:?}");
    }

    #[test]
    fn surplus_instances_drop_lowest_value_and_shortfall_keeps_ideal_units() {
        let inst = vec![
            Instance {
                page: 0,
                ideal: 1.0,
                value: 5.0,
            },
            Instance {
                page: 1,
                ideal: 1.0,
                value: 1.0,
            },
            Instance {
                page: 2,
                ideal: 2.0,
                value: 3.0,
            },
        ];
        let a = assign(&inst, 1, 2, 1);
        assert_eq!(a, vec![vec![0], vec![2]]);
        // Shortfall: two pages at f = 1 with capacity 3 → each unit holds both, zero cost.
        let inst = plan_instances(&[1.0, 1.0, 0.0], &[1.0; 3], &[0.0; 3], 1, 3, 3);
        assert_eq!(inst.len(), 6);
        let a = assign(&inst, 1, 3, 3);
        for u in &a {
            let mut u = u.clone();
            u.sort();
            assert_eq!(u, vec![0, 1]);
        }
        assert_eq!(assignment_cost(&inst, 1, &a), 0.0);
    }

    /// Frequencies that spend the budget only up to the price search's tolerance (their sum a
    /// hair above or below it) plan the same instances as the exact ones: largest remainders
    /// give back what the scaling or a floor took.
    #[test]
    fn the_side_of_the_tolerance_does_not_change_the_plan() {
        // Two saturated pages and three sharing the rest: quotas 10, 10, 5, 5, 10 of 40 slots.
        let exact = [1.0, 1.0, 0.5, 0.5, 1.0];
        let counts = |frequencies: &[f64]| {
            let mut c = vec![0; frequencies.len()];
            for i in plan_instances(frequencies, &[1.0; 5], &[0.0; 5], 1, 10, 4) {
                c[i.page as usize] += 1;
            }
            c
        };
        let want = counts(&exact);
        assert_eq!(want, vec![10, 10, 5, 5, 10]);
        for relative in [1.0 + 3e-14, 1.0 - 3e-14] {
            let off: Vec<f64> = exact
                .iter()
                .map(|&f: &f64| if f < 1.0 { f * relative } else { f })
                .collect();
            assert_eq!(counts(&off), want, "{relative}");
        }
    }
}
