//! The evolution of paper 001 (Listing 1, §4.2.2, §5.2; SEED-SYSTEMS §2.2.4), with the gpc++
//! kernel's semantics the authors ran (`crawling.ini`): ramped half-and-half creation,
//! tournament selection, per generation a share of newly created trees and otherwise subtree
//! crossover or reproduction, shrink and swap mutation, the best individual carried over, and
//! an archive of the best distinct individuals of every generation.
//!
//! Determinism: every random choice comes from one ChaCha8 stream seeded by the run's seed and
//! drawn on the calling thread; only the fitness evaluations run in parallel (rayon), and they
//! are pure functions of a tree, collected in population order. The result does not depend on
//! the number of threads.

use std::collections::HashMap;

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use super::tree::{Expr, Node, Op, Terminal, CONSTANTS};

/// GP parameters (defaults: the paper's and `crawling.ini`'s).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct GpConfig {
    /// `N_p` (paper: 300).
    pub population: usize,
    /// `N_g` (paper: 50).
    pub generations: usize,
    /// Maximum depth of created trees (paper: 10).
    pub creation_depth: usize,
    /// Maximum depth of crossover offspring (code: 17; the paper's 9 is below the creation depth,
    /// which gpc++ rejects).
    pub crossover_depth: usize,
    /// Share of each new generation created at random (gpc++ `CreationProbability` 15 %, the
    /// paper's "reproduction 15 %").
    pub creation_rate: f64,
    /// Of the rest, the share made by crossover (90 %); the others are copies of a tournament
    /// winner.
    pub crossover_rate: f64,
    /// Shrink mutation per offspring (5 %): a function node replaced by one of its operands.
    pub shrink_rate: f64,
    /// Swap mutation per offspring (5 %): a node replaced by another of the same arity.
    pub swap_rate: f64,
    /// Tournament size (2).
    pub tournament: usize,
    /// Archive size `N_b` (50).
    pub archive: usize,
}

impl Default for GpConfig {
    fn default() -> Self {
        GpConfig {
            population: 300,
            generations: 50,
            creation_depth: 10,
            crossover_depth: 17,
            creation_rate: 0.15,
            crossover_rate: 0.90,
            shrink_rate: 0.05,
            swap_rate: 0.05,
            tournament: 2,
            archive: 50,
        }
    }
}

/// An evaluated individual.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    pub(crate) expr: Expr,
    /// Training fitness (higher is better).
    pub(crate) fitness: f64,
}

/// What a run of the evolution returns.
#[derive(Debug, Clone)]
pub struct Evolution {
    /// The best individual of the final population (ties: shorter, then by text).
    pub best: Scored,
    /// The `archive` best distinct individuals (by printed text) of all generations, best
    /// first (ties: shorter, then by text).
    pub(crate) archive: Vec<Scored>,
    /// Best fitness of each generation (generation 0 = the created population).
    pub(crate) best_per_generation: Vec<f64>,
    /// Distinct trees evaluated.
    pub(crate) evaluations: usize,
}

/// The primitives a tree is made of.
struct Primitives {
    /// Variables then constants: a leaf is drawn uniformly from them (each constant is a leaf
    /// of its own in gpc++).
    leaves: Vec<Node>,
}

impl Primitives {
    fn new(terminals: &[Terminal]) -> Self {
        let mut leaves: Vec<Node> = terminals.iter().map(|&t| Node::Terminal(t)).collect();
        leaves.extend(CONSTANTS.iter().map(|&c| Node::Const(c)));
        Primitives { leaves }
    }

    fn leaf(&self, rng: &mut ChaCha8Rng) -> Node {
        *self.leaves.choose(rng).expect("leaves")
    }

    fn op(rng: &mut ChaCha8Rng) -> Node {
        Node::Op(*Op::ALL.choose(rng).expect("ops"))
    }

    /// A tree of depth at most `depth` (exactly `depth` on every branch when `full`).
    fn create(&self, depth: usize, full: bool, rng: &mut ChaCha8Rng, out: &mut Vec<Node>) {
        let leaf = depth <= 1
            || (!full && rng.gen_range(0..self.leaves.len() + Op::ALL.len()) < self.leaves.len());
        if leaf {
            out.push(self.leaf(rng));
            return;
        }
        let node = Self::op(rng);
        out.push(node);
        if let Node::Op(op) = node {
            for _ in 0..op.arity() {
                self.create(depth - 1, full, rng, out);
            }
        }
    }

    /// Ramped half-and-half: depths 2..=max in turn, full and grow alternately.
    fn ramped(&self, index: usize, max_depth: usize, rng: &mut ChaCha8Rng) -> Expr {
        let depths = max_depth.saturating_sub(1).max(1);
        let depth = 2 + (index / 2) % depths;
        let mut nodes = Vec::new();
        self.create(
            depth.min(max_depth),
            index.is_multiple_of(2),
            rng,
            &mut nodes,
        );
        Expr::from_prefix(nodes).expect("created trees are whole")
    }

    /// Swap mutation: node `i` replaced by another primitive of the same arity.
    fn swap(&self, e: &Expr, rng: &mut ChaCha8Rng) -> Expr {
        let i = rng.gen_range(0..e.len());
        let replacement = match e.nodes()[i] {
            Node::Op(op) => {
                let same: Vec<Op> = Op::ALL
                    .into_iter()
                    .filter(|o| o.arity() == op.arity())
                    .collect();
                Node::Op(*same.choose(rng).expect("same arity"))
            }
            _ => self.leaf(rng),
        };
        let mut nodes = e.nodes().to_vec();
        nodes[i] = replacement;
        Expr::from_prefix(nodes).expect("same arity keeps the shape")
    }
}

/// Shrink mutation: a random function node replaced by one of its operand subtrees.
fn shrink(e: &Expr, rng: &mut ChaCha8Rng) -> Expr {
    let functions: Vec<usize> = (0..e.len())
        .filter(|&i| matches!(e.nodes()[i], Node::Op(_)))
        .collect();
    let Some(&i) = functions.choose(rng) else {
        return e.clone();
    };
    let Node::Op(op) = e.nodes()[i] else {
        unreachable!("a function node")
    };
    let mut child = i + 1;
    for _ in 0..rng.gen_range(0..op.arity()) {
        child = e.subtree_end(child);
    }
    let sub = e.nodes()[child..e.subtree_end(child)].to_vec();
    e.replace(i, &sub)
}

/// Subtree crossover: a random node of each parent, the subtrees swapped. An offspring deeper
/// than `max_depth` is replaced by its first parent (gpc++ keeps the parent).
fn crossover(a: &Expr, b: &Expr, max_depth: usize, rng: &mut ChaCha8Rng) -> (Expr, Expr) {
    let i = rng.gen_range(0..a.len());
    let j = rng.gen_range(0..b.len());
    let sub_a = &a.nodes()[i..a.subtree_end(i)];
    let sub_b = &b.nodes()[j..b.subtree_end(j)];
    let child_a = a.replace(i, sub_b);
    let child_b = b.replace(j, sub_a);
    let keep = |child: Expr, parent: &Expr| {
        if child.depth() > max_depth {
            parent.clone()
        } else {
            child
        }
    };
    (keep(child_a, a), keep(child_b, b))
}

/// Better first: higher fitness, then fewer nodes, then by printed text.
fn ranking(a: &Scored, b: &Scored) -> std::cmp::Ordering {
    b.fitness
        .total_cmp(&a.fitness)
        .then(a.expr.len().cmp(&b.expr.len()))
        .then_with(|| a.expr.to_string().cmp(&b.expr.to_string()))
}

/// Runs the evolution over `terminals`, maximising `fitness` (a pure function of a tree; NaN
/// counts as the worst).
pub fn evolve(
    config: &GpConfig,
    terminals: &[Terminal],
    seed: u64,
    fitness: &(dyn Fn(&Expr) -> f64 + Sync),
) -> Evolution {
    assert!(config.population >= 2, "a population needs two individuals");
    let primitives = Primitives::new(terminals);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // Fitness by printed text: a tree seen before (a copy, the elite, a repeat) is not
    // simulated again.
    let mut known: HashMap<String, f64> = HashMap::new();
    let evaluate = |population: Vec<Expr>, known: &mut HashMap<String, f64>| -> Vec<Scored> {
        let texts: Vec<String> = population.iter().map(|e| e.to_string()).collect();
        let mut fresh: Vec<(String, &Expr)> = Vec::new();
        for (t, e) in texts.iter().zip(&population) {
            if !known.contains_key(t) && !fresh.iter().any(|(f, _)| f == t) {
                fresh.push((t.clone(), e));
            }
        }
        let values: Vec<f64> = fresh
            .par_iter()
            .map(|(_, e)| {
                let f = fitness(e);
                if f.is_nan() {
                    f64::NEG_INFINITY
                } else {
                    f
                }
            })
            .collect();
        for ((t, _), v) in fresh.into_iter().zip(values) {
            known.insert(t, v);
        }
        population
            .into_iter()
            .zip(&texts)
            .map(|(expr, t)| Scored {
                fitness: known[t],
                expr,
            })
            .collect()
    };
    let created: Vec<Expr> = (0..config.population)
        .map(|i| primitives.ramped(i, config.creation_depth, &mut rng))
        .collect();
    let mut population = evaluate(created, &mut known);
    let mut best_per_generation = vec![best_of(&population).fitness];
    for _ in 0..config.generations {
        let mut next: Vec<Expr> = vec![best_of(&population).expr.clone()];
        let tournament = |rng: &mut ChaCha8Rng| -> &Scored {
            (0..config.tournament.max(1))
                .map(|_| &population[rng.gen_range(0..population.len())])
                .min_by(|a, b| ranking(a, b))
                .expect("a tournament has entrants")
        };
        while next.len() < config.population {
            let mut offspring = if rng.gen::<f64>() < config.creation_rate {
                let index = rng.gen_range(0..config.population);
                vec![primitives.ramped(index, config.creation_depth, &mut rng)]
            } else if rng.gen::<f64>() < config.crossover_rate {
                let a = tournament(&mut rng).expr.clone();
                let b = tournament(&mut rng).expr.clone();
                let (x, y) = crossover(&a, &b, config.crossover_depth, &mut rng);
                vec![x, y]
            } else {
                vec![tournament(&mut rng).expr.clone()]
            };
            for child in offspring.iter_mut() {
                if rng.gen::<f64>() < config.shrink_rate {
                    *child = shrink(child, &mut rng);
                }
                if rng.gen::<f64>() < config.swap_rate {
                    *child = primitives.swap(child, &mut rng);
                }
            }
            offspring.truncate(config.population - next.len());
            next.extend(offspring);
        }
        population = evaluate(next, &mut known);
        best_per_generation.push(best_of(&population).fitness);
    }
    let mut archive: Vec<Scored> = known
        .iter()
        .map(|(t, &f)| Scored {
            expr: Expr::parse(t).expect("printed trees parse"),
            fitness: f,
        })
        .collect();
    archive.sort_by(ranking);
    archive.truncate(config.archive);
    Evolution {
        best: best_of(&population).clone(),
        archive,
        best_per_generation,
        evaluations: known.len(),
    }
}

fn best_of(population: &[Scored]) -> &Scored {
    population
        .iter()
        .min_by(|a, b| ranking(a, b))
        .expect("a population is not empty")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> GpConfig {
        GpConfig {
            population: 40,
            generations: 8,
            creation_depth: 5,
            crossover_depth: 8,
            archive: 10,
            ..GpConfig::default()
        }
    }

    /// Fitness: how close the tree is to `t·X + n` at a few points.
    fn target(e: &Expr) -> f64 {
        use super::super::tree::Columns;
        let mut c = Columns::new(4);
        *c.column_mut(Terminal::T) = vec![1.0, 2.0, 3.0, 5.0];
        *c.column_mut(Terminal::X) = vec![0.0, 1.0, 4.0, 2.0];
        *c.column_mut(Terminal::N) = vec![2.0, 3.0, 9.0, 4.0];
        let mut out = Vec::new();
        e.evaluate(&c, &mut out);
        let want = [2.0, 5.0, 21.0, 14.0];
        -out.iter()
            .zip(want)
            .map(|(a, b)| (a - b).abs().min(1e6))
            .sum::<f64>()
    }

    #[test]
    fn the_same_seed_gives_the_same_run_whatever_the_threads() {
        let a = evolve(&small(), &Terminal::BASIC, 7, &target);
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let b = one.install(|| evolve(&small(), &Terminal::BASIC, 7, &target));
        assert_eq!(a.best, b.best);
        assert_eq!(a.archive, b.archive);
        assert_eq!(a.best_per_generation, b.best_per_generation);
        let c = evolve(&small(), &Terminal::BASIC, 8, &target);
        assert_ne!(
            (a.archive.clone(), a.best_per_generation.clone()),
            (c.archive, c.best_per_generation),
            "another seed, another run"
        );
    }

    #[test]
    fn evolution_improves_keeps_the_elite_and_an_ordered_distinct_archive() {
        let run = evolve(&small(), &Terminal::BASIC, 3, &target);
        // Elitism: the best fitness never falls from one generation to the next.
        assert!(run.best_per_generation.windows(2).all(|w| w[1] >= w[0]));
        assert_eq!(run.best_per_generation.len(), 9);
        assert_eq!(run.archive.len(), 10);
        assert_eq!(run.archive[0].fitness, run.best.fitness);
        assert!(run.archive.windows(2).all(|w| w[0].fitness >= w[1].fitness));
        let texts: std::collections::HashSet<String> =
            run.archive.iter().map(|s| s.expr.to_string()).collect();
        assert_eq!(texts.len(), run.archive.len());
        for s in &run.archive {
            assert!(s.expr.depth() <= 8);
            assert!(!s.expr.uses(Terminal::Cg), "only the given terminals");
        }
    }

    #[test]
    fn operators_keep_trees_whole_and_within_depth() {
        let p = Primitives::new(&Terminal::ALL);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for i in 0..200 {
            let a = p.ramped(i, 6, &mut rng);
            let b = p.ramped(i + 1, 6, &mut rng);
            assert!(a.depth() <= 6 && a.depth() >= 1);
            if i % 2 == 0 {
                // Full trees reach their depth.
                assert_eq!(a.depth(), 2 + (i / 2) % 5);
            }
            let (x, y) = crossover(&a, &b, 8, &mut rng);
            assert!(x.depth() <= 8 && y.depth() <= 8);
            let s = shrink(&a, &mut rng);
            assert!(s.len() <= a.len());
            let w = p.swap(&a, &mut rng);
            assert_eq!(w.len(), a.len());
            for e in [x, y, s, w] {
                assert_eq!(Expr::parse(&e.to_string()).unwrap(), e);
            }
        }
    }
}
