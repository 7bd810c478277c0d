//! Paper 001's crawl simulation (§5.2; SEED-SYSTEMS §2.2.2; the authors' `crawl_simulation.cc`),
//! the fitness and evaluation of a score function: over a change matrix, visit every page in
//! the `W` warm-up cycles, then each cycle score every page from its own statistics and visit
//! the `k` best; per cycle, ChangeRate and gp4c NDCG of that schedule.
//!
//! Pure bookkeeping, no index: one run over EmacsWiki's 6,898 pages × 47 cycles takes
//! milliseconds, so a GP generation of 300 individuals is one crawl simulation each.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::change::schedule_metrics::{change_rate, gp4c_ndcg};
use crate::change::{cg_rate, ChangeMatrix, CycleRates, Weighting};

use super::peer::{cxx_sort, GlibcRand, RAND_MAX};
use super::tree::{sortable, Columns, Expr, Terminal};

/// What ranks the pages.
#[derive(Debug, Clone, PartialEq)]
pub enum Scorer {
    /// A function of the page statistics (an evolved individual or a baseline).
    Expr(Expr),
    /// Uniform random scores from a seeded ChaCha8 stream (the authors' `RandomScorer`, which
    /// calls an unseeded `rand()`).
    Random(u64),
}

impl Scorer {
    fn uses(&self, terminal: Terminal) -> bool {
        match self {
            Scorer::Expr(e) => e.uses(terminal),
            Scorer::Random(_) => false,
        }
    }
}

/// The baselines of paper 001 Table 2 as the authors' `baselines` runs them (SEED-SYSTEMS
/// §2.2.1): Rand, Age = `t`, NAD…GAD as change probabilities `1 − e^{−λt}` (Eq. 5), CG as the
/// rate alone (Eq. 4).
pub fn baselines(seed: u64) -> Vec<(&'static str, Scorer)> {
    let expr = |text: &str| Scorer::Expr(Expr::parse(text).expect("baseline parses"));
    vec![
        ("rand", Scorer::Random(seed)),
        ("age", expr("t")),
        ("nad", expr("1 - exp(0 - NAD * t)")),
        ("sad", expr("1 - exp(0 - SAD * t)")),
        ("aad", expr("1 - exp(0 - AAD * t)")),
        ("gad", expr("1 - exp(0 - GAD * t)")),
        ("cg", expr("CG")),
    ]
}

/// How equal scores are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ties {
    /// The lower page id first (SEED-SYSTEMS §2.2.1's choice), and random scores from a
    /// seeded ChaCha8 stream.
    PageId,
    /// As the authors' C++ code leaves them: libstdc++'s `std::sort` over the previous
    /// cycle's order, and glibc's `rand()` drawn in that order ([`super::peer`]). For parity
    /// checks only.
    Gp4cCode,
}

/// How a simulation runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimConfig {
    /// Pages visited per cycle after the warm-up.
    pub k: usize,
    /// Warm-up cycles `1..=W`, every page visited (paper: W = 2).
    pub warmup: usize,
    pub ties: Ties,
}

impl SimConfig {
    /// Paper 001's setting for a page set: `k = ⌊share · pages⌋` (the code's truncation: 344 for
    /// 6,898 pages at 5 %).
    pub fn share(pages: usize, share: f64, warmup: usize) -> Self {
        SimConfig {
            k: (pages as f64 * share) as usize,
            warmup,
            ties: Ties::PageId,
        }
    }
}

/// Per-cycle measures of one simulation (cycles `W + 1 ..= D`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SimResult {
    pub(crate) change_rate: Vec<f64>,
    pub(crate) ndcg: Vec<f64>,
}

/// The measure a fitness or a report reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    /// Paper 001 Eq. (1).
    ChangeRate,
    /// Paper 001 Eq. (2)–(3), the authors' discount.
    Ndcg,
}

impl Metric {
    pub fn as_str(self) -> &'static str {
        match self {
            Metric::ChangeRate => "changerate",
            Metric::Ndcg => "ndcg",
        }
    }
}

impl SimResult {
    pub(crate) fn per_cycle(&self, metric: Metric) -> &[f64] {
        match metric {
            Metric::ChangeRate => &self.change_rate,
            Metric::Ndcg => &self.ndcg,
        }
    }

    /// The mean over the cycles (0 when none was scored).
    pub fn mean(&self, metric: Metric) -> f64 {
        let v = self.per_cycle(metric);
        if v.is_empty() {
            0.0
        } else {
            v.iter().sum::<f64>() / v.len() as f64
        }
    }
}

/// What the crawler knows of one page (the authors' `URL`).
#[derive(Debug, Clone, Copy, Default)]
struct PageState {
    visits: u32,
    changes: u32,
    last_visit: usize,
    rates: CycleRates,
}

impl PageState {
    fn visit(&mut self, cycle: usize, changed: bool) {
        self.visits += 1;
        self.last_visit = cycle;
        if changed {
            self.changes += 1;
            self.rates.record(cycle as u32);
        }
    }
}

/// Runs the crawl simulation of the module docs. Ties in score go to the lower page id
/// (SEED-SYSTEMS §2.2.1's choice; the authors' `std::sort` leaves them unspecified).
pub fn simulate(matrix: &ChangeMatrix, scorer: &Scorer, config: SimConfig) -> SimResult {
    let pages = matrix.pages();
    let cycles = matrix.cycles();
    let k = config.k.min(pages);
    let mut state = vec![PageState::default(); pages];
    let warmup = config.warmup.min(cycles);
    for cycle in 1..=warmup {
        for (p, s) in state.iter_mut().enumerate() {
            s.visit(cycle, matrix.changed_since(p, s.last_visit, cycle));
        }
    }
    let mut columns = Columns::new(pages);
    let used: Vec<Terminal> = Terminal::ALL
        .into_iter()
        .filter(|&t| scorer.uses(t))
        .collect();
    let mut rng = match scorer {
        Scorer::Random(seed) => Some(ChaCha8Rng::seed_from_u64(*seed)),
        Scorer::Expr(_) => None,
    };
    let mut glibc = match scorer {
        Scorer::Random(seed) => Some(GlibcRand::new(*seed as u32)),
        Scorer::Expr(_) => None,
    };
    let mut scores = Vec::with_capacity(pages);
    // The authors' page array, kept in the order of the last sort (Ties::Gp4cCode).
    let mut order: Vec<u32> = (0..pages as u32).collect();
    let mut relevance = Vec::with_capacity(k);
    let mut result = SimResult::default();
    for cycle in warmup + 1..=cycles {
        let relevant = state
            .iter()
            .enumerate()
            .filter(|(p, s)| matrix.changed_since(*p, s.last_visit, cycle))
            .count();
        for &t in &used {
            let column = columns.column_mut(t);
            column.clear();
            column.extend(state.iter().map(|s| terminal(s, t, cycle)));
        }
        match (scorer, config.ties) {
            (Scorer::Expr(e), _) => e.evaluate(&columns, &mut scores),
            (Scorer::Random(_), Ties::PageId) => {
                let rng = rng.as_mut().expect("a random scorer has its stream");
                scores.clear();
                scores.extend((0..pages).map(|_| rng.gen::<f64>()));
            }
            (Scorer::Random(_), Ties::Gp4cCode) => {
                let g = glibc.as_mut().expect("a random scorer has its stream");
                scores.resize(pages, 0.0);
                for &p in &order {
                    scores[p as usize] = f64::from(g.rand()) / f64::from(RAND_MAX);
                }
            }
        }
        match config.ties {
            Ties::PageId => {
                order.clear();
                order.extend(0..pages as u32);
                let by_score = |a: &u32, b: &u32| {
                    scores[*b as usize]
                        .total_cmp(&scores[*a as usize])
                        .then(a.cmp(b))
                };
                if k > 0 && k < pages {
                    order.select_nth_unstable_by(k - 1, by_score);
                }
                order[..k].sort_unstable_by(by_score);
            }
            Ties::Gp4cCode => {
                cxx_sort(&mut order, &|a, b| scores[a as usize] > scores[b as usize]);
            }
        }
        relevance.clear();
        for &p in &order[..k] {
            let s = &mut state[p as usize];
            let changed = matrix.changed_since(p as usize, s.last_visit, cycle);
            relevance.push(changed);
            s.visit(cycle, changed);
        }
        let changed = relevance.iter().filter(|&&r| r).count();
        result.change_rate.push(change_rate(changed, config.k));
        result.ndcg.push(gp4c_ndcg(&relevance, relevant, config.k));
    }
    result
}

/// A page's terminal value at the start of `cycle` (paper 001 §5.1; SEED-SYSTEMS §2.2.1).
fn terminal(s: &PageState, t: Terminal, cycle: usize) -> f64 {
    let c = cycle as u32;
    let value = match t {
        Terminal::N => f64::from(s.visits),
        Terminal::X => f64::from(s.changes),
        Terminal::T => (cycle - s.last_visit) as f64,
        Terminal::Cg => cg_rate(s.visits as usize, s.changes as usize),
        Terminal::Nad => s.rates.rate(Weighting::Nad, c),
        Terminal::Sad => s.rates.rate(Weighting::Sad, c),
        Terminal::Aad => s.rates.rate(Weighting::Aad, c),
        Terminal::Gad => s.rates.rate(Weighting::Gad, c),
    };
    sortable(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix(rows: &[&str]) -> ChangeMatrix {
        ChangeMatrix::parse_gp4c(&rows.join("\n")).unwrap()
    }

    #[test]
    fn age_visits_round_robin_and_counts_changes_since_the_last_visit() {
        // Four pages, k = 1, no warm-up: age ties go to the lowest id, so pages are visited
        // 0, 1, 2, 3, 0, … and each visit finds the changes since that page's last visit.
        let m = matrix(&["100010", "010000", "000000", "111111"]);
        let r = simulate(
            &m,
            &Scorer::Expr(Expr::parse("t").unwrap()),
            SimConfig {
                k: 1,
                warmup: 0,
                ties: Ties::PageId,
            },
        );
        // Cycle 1 page 0 (changed in 1), 2 page 1 (changed in 2), 3 page 2 (never),
        // 4 page 3 (changed), 5 page 0 (changed in 5), 6 page 1 (not since 2).
        assert_eq!(r.change_rate, vec![1.0, 1.0, 0.0, 1.0, 1.0, 0.0]);
        // NDCG: 1 when the visited page is relevant, 0 when some other page was.
        assert_eq!(r.ndcg, vec![1.0, 1.0, 0.0, 1.0, 1.0, 0.0]);
    }

    #[test]
    fn warm_up_visits_everything_and_history_scorers_find_repeat_changers() {
        // Page 2 changes every cycle; the others never. After one warm-up cycle NAD knows it.
        let m = matrix(&["00000", "00000", "11111", "00000"]);
        let nad = baselines(1)
            .into_iter()
            .find(|(n, _)| *n == "nad")
            .unwrap()
            .1;
        let r = simulate(
            &m,
            &nad,
            SimConfig {
                k: 1,
                warmup: 1,
                ties: Ties::PageId,
            },
        );
        assert_eq!(r.change_rate, vec![1.0; 4]);
        assert_eq!(r.ndcg, vec![1.0; 4]);
        assert_eq!(r.mean(Metric::ChangeRate), 1.0);
        // Age visits page 0 first and misses.
        let age = Scorer::Expr(Expr::parse("t").unwrap());
        let r = simulate(
            &m,
            &age,
            SimConfig {
                k: 1,
                warmup: 1,
                ties: Ties::PageId,
            },
        );
        assert_eq!(r.change_rate[0], 0.0);
        // k = 2: age alternates pages {0, 1} and {2, 3}; the ideal counts the one stale page.
        let r = simulate(
            &m,
            &age,
            SimConfig {
                k: 2,
                warmup: 1,
                ties: Ties::PageId,
            },
        );
        assert_eq!(r.change_rate, vec![0.0, 0.5, 0.0, 0.5]);
        assert_eq!(r.ndcg, vec![0.0, 1.0, 0.0, 1.0]);
    }

    #[test]
    fn random_scores_are_seeded() {
        let m = matrix(&["0101", "1010", "1111", "0000", "0110"]);
        let c = SimConfig {
            k: 2,
            warmup: 1,
            ties: Ties::PageId,
        };
        let a = simulate(&m, &Scorer::Random(3), c);
        assert_eq!(a, simulate(&m, &Scorer::Random(3), c));
        assert_eq!(a.change_rate.len(), 3);
        assert_eq!(SimConfig::share(6898, 0.05, 2).k, 344);
    }
}
