//! The two places where the authors' C++ code (`aecio/gp4c`, built with GCC) leaves a result to
//! its runtime, reproduced so that a crawl simulation can be checked against it digit for digit:
//!
//! * the order of tied scores: `crawl_simulation.cc` sorts the page array with `std::sort`
//!   (libstdc++'s introsort, not stable) every cycle and keeps the sorted array for the next
//!   cycle, so which of many equal-score pages are visited depends on that algorithm and on the
//!   previous cycles' order. On EmacsWiki that matters a great deal: most pages never change,
//!   every history estimator scores them 0, and k = 344 of thousands of zeros are picked by the
//!   tie order;
//! * `RandomScorer`'s `rand() / RAND_MAX` with no `srand` call (glibc's generator, seed 1),
//!   drawn in the array's current order.
//!
//! Only the parity check uses these; the project's own simulations break ties by page id.

/// libstdc++'s `std::sort(first, last, comp)` (introsort: median-of-three quicksort down to
/// 16-element runs with a `2·⌊log₂ n⌋` depth limit and heapsort beyond it, then one insertion
/// sort), on `v` with `less(a, b)` as `comp`. Same comparisons, same swaps, so equal elements
/// end up where GCC's build of the authors' code leaves them.
pub(crate) fn cxx_sort(v: &mut [u32], less: &dyn Fn(u32, u32) -> bool) {
    let n = v.len();
    if n < 2 {
        return;
    }
    let depth = 2 * (usize::BITS - 1 - n.leading_zeros()) as usize;
    introsort_loop(v, 0, n, depth, less);
    final_insertion_sort(v, less);
}

const THRESHOLD: usize = 16;

fn introsort_loop(
    v: &mut [u32],
    first: usize,
    mut last: usize,
    mut depth: usize,
    less: &dyn Fn(u32, u32) -> bool,
) {
    while last - first > THRESHOLD {
        if depth == 0 {
            heap_sort(&mut v[first..last], less);
            return;
        }
        depth -= 1;
        let cut = partition_pivot(v, first, last, less);
        introsort_loop(v, cut, last, depth, less);
        last = cut;
    }
}

fn partition_pivot(
    v: &mut [u32],
    first: usize,
    last: usize,
    less: &dyn Fn(u32, u32) -> bool,
) -> usize {
    let mid = first + (last - first) / 2;
    move_median_to_first(v, first, first + 1, mid, last - 1, less);
    unguarded_partition(v, first + 1, last, first, less)
}

fn move_median_to_first(
    v: &mut [u32],
    result: usize,
    a: usize,
    b: usize,
    c: usize,
    less: &dyn Fn(u32, u32) -> bool,
) {
    let pick = if less(v[a], v[b]) {
        if less(v[b], v[c]) {
            b
        } else if less(v[a], v[c]) {
            c
        } else {
            a
        }
    } else if less(v[a], v[c]) {
        a
    } else if less(v[b], v[c]) {
        c
    } else {
        b
    };
    v.swap(result, pick);
}

fn unguarded_partition(
    v: &mut [u32],
    mut first: usize,
    mut last: usize,
    pivot: usize,
    less: &dyn Fn(u32, u32) -> bool,
) -> usize {
    loop {
        while less(v[first], v[pivot]) {
            first += 1;
        }
        last -= 1;
        while less(v[pivot], v[last]) {
            last -= 1;
        }
        if first >= last {
            return first;
        }
        v.swap(first, last);
        first += 1;
    }
}

fn final_insertion_sort(v: &mut [u32], less: &dyn Fn(u32, u32) -> bool) {
    if v.len() > THRESHOLD {
        insertion_sort(v, 0, THRESHOLD, less);
        for i in THRESHOLD..v.len() {
            unguarded_linear_insert(v, i, less);
        }
    } else {
        insertion_sort(v, 0, v.len(), less);
    }
}

fn insertion_sort(v: &mut [u32], first: usize, last: usize, less: &dyn Fn(u32, u32) -> bool) {
    for i in first + 1..last {
        if less(v[i], v[first]) {
            let value = v[i];
            v.copy_within(first..i, first + 1);
            v[first] = value;
        } else {
            unguarded_linear_insert(v, i, less);
        }
    }
}

/// Moves `v[last]` left past every element it is less than; something not greater stands
/// before it (the guard the callers guarantee).
fn unguarded_linear_insert(v: &mut [u32], mut last: usize, less: &dyn Fn(u32, u32) -> bool) {
    let value = v[last];
    let mut next = last - 1;
    while less(value, v[next]) {
        v[last] = v[next];
        last = next;
        next = next.wrapping_sub(1);
    }
    v[last] = value;
}

/// `std::__partial_sort(first, last, last)`: make_heap, then sort_heap.
fn heap_sort(v: &mut [u32], less: &dyn Fn(u32, u32) -> bool) {
    let len = v.len();
    if len >= 2 {
        let mut parent = (len - 2) / 2;
        loop {
            let value = v[parent];
            adjust_heap(v, parent, len, value, less);
            if parent == 0 {
                break;
            }
            parent -= 1;
        }
    }
    let mut last = len;
    while last > 1 {
        last -= 1;
        let value = v[last];
        v[last] = v[0];
        adjust_heap(v, 0, last, value, less);
    }
}

fn adjust_heap(
    v: &mut [u32],
    mut hole: usize,
    len: usize,
    value: u32,
    less: &dyn Fn(u32, u32) -> bool,
) {
    let top = hole;
    let mut second = hole;
    while len >= 1 && second < (len - 1) / 2 {
        second = 2 * (second + 1);
        if less(v[second], v[second - 1]) {
            second -= 1;
        }
        v[hole] = v[second];
        hole = second;
    }
    if len.is_multiple_of(2) && len >= 2 && second == (len - 2) / 2 {
        second = 2 * (second + 1);
        v[hole] = v[second - 1];
        hole = second - 1;
    }
    // push_heap
    let mut parent = hole.wrapping_sub(1) / 2;
    while hole > top && less(v[parent], value) {
        v[hole] = v[parent];
        hole = parent;
        parent = hole.wrapping_sub(1) / 2;
    }
    v[hole] = value;
}

/// glibc's `rand()` after `srand(seed)` (the additive feedback generator `random_r` of TYPE_3:
/// `r_i = r_{i−31} + r_{i−3}` over 32 bits, seeded by the 16807 LCG, the first 310 outputs
/// dropped; each output is `r >> 1`). `RAND_MAX` = 2³¹ − 1.
#[derive(Debug, Clone)]
pub(crate) struct GlibcRand {
    state: [u32; 34],
    index: usize,
}

pub(crate) const RAND_MAX: u32 = 2_147_483_647;

impl GlibcRand {
    pub(crate) fn new(seed: u32) -> Self {
        let mut r = [0i64; 34];
        r[0] = if seed == 0 { 1 } else { i64::from(seed) };
        for i in 1..31 {
            // 16807 · r mod (2³¹ − 1), by Schrage's method as glibc computes it.
            let (hi, lo) = (r[i - 1] / 127_773, r[i - 1] % 127_773);
            let mut word = 16_807 * lo - 2_836 * hi;
            if word < 0 {
                word += 2_147_483_647;
            }
            r[i] = word;
        }
        for i in 31..34 {
            r[i] = r[i - 31];
        }
        let mut g = GlibcRand {
            state: r.map(|x| x as u32),
            index: 34,
        };
        for _ in 0..310 {
            g.next_raw();
        }
        g
    }

    fn next_raw(&mut self) -> u32 {
        // A ring of the last 34 values: r_i = r_{i−31} + r_{i−3}.
        let i = self.index;
        let value = self.state[(i - 31) % 34].wrapping_add(self.state[(i - 3) % 34]);
        self.state[i % 34] = value;
        self.index = i + 1;
        if self.index >= 34 * 2 {
            self.index -= 34;
        }
        value >> 1
    }

    /// The next `rand()`.
    pub(crate) fn rand(&mut self) -> u32 {
        self.next_raw()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glibc_rand_with_seed_one_gives_its_known_first_values() {
        let mut g = GlibcRand::new(1);
        let first: Vec<u32> = (0..5).map(|_| g.rand()).collect();
        // `for (i = 0; i < 5; i++) printf("%d\n", rand());` on glibc.
        assert_eq!(
            first,
            vec![1804289383, 846930886, 1681692777, 1714636915, 1957747793]
        );
    }

    #[test]
    fn cxx_sort_sorts_and_is_deterministic_on_ties() {
        for n in [0usize, 1, 2, 5, 16, 17, 100, 1000] {
            let keys: Vec<u32> = (0..n as u32).map(|i| (i * 7919) % 13).collect();
            let less = |a: u32, b: u32| keys[a as usize] > keys[b as usize];
            let mut v: Vec<u32> = (0..n as u32).collect();
            cxx_sort(&mut v, &less);
            assert!(v
                .windows(2)
                .all(|w| keys[w[0] as usize] >= keys[w[1] as usize]));
            let mut sorted = v.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..n as u32).collect::<Vec<_>>(), "a permutation");
            let mut again: Vec<u32> = (0..n as u32).collect();
            cxx_sort(&mut again, &less);
            assert_eq!(v, again);
        }
        // The heapsort fallback sorts too.
        let keys: Vec<u32> = (0..300u32).map(|i| (i * 31) % 97).collect();
        let mut v: Vec<u32> = (0..300).collect();
        heap_sort(&mut v, &|a, b| keys[a as usize] < keys[b as usize]);
        assert!(v
            .windows(2)
            .all(|w| keys[w[0] as usize] <= keys[w[1] as usize]));
    }
}
