//! GP4C individuals: expression trees over a page's change statistics (paper 001 §4.2.1).
//!
//! A tree is stored flat, in prefix order (an operator, then its operands' subtrees), so that a
//! subtree is a contiguous slice — crossover and mutation are slice splices — and it prints
//! as readable infix text (`(t * X) + log(n)`) that `Expr::parse` reads back to the same
//! tree. It is evaluated a column at a time: every page's value of a node in one pass, which
//! is what a crawl simulation needs (score every page each cycle).

use std::fmt;

/// A page statistic (paper 001 §4.2.1; SEED-SYSTEMS §2.2.3). Rates, not probabilities, in the
/// full set, as in the authors' code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Terminal {
    /// Visits so far (warm-up visits included).
    N,
    /// Visits that found the page changed.
    X,
    /// Cycles since the last visit.
    T,
    /// Cho & Garcia-Molina's change rate.
    Cg,
    Nad,
    Sad,
    Aad,
    Gad,
}

impl Terminal {
    pub(crate) const ALL: [Terminal; 8] = [
        Terminal::N,
        Terminal::X,
        Terminal::T,
        Terminal::Cg,
        Terminal::Nad,
        Terminal::Sad,
        Terminal::Aad,
        Terminal::Gad,
    ];
    /// GP4C_Basic's terminals.
    pub const BASIC: [Terminal; 3] = [Terminal::N, Terminal::X, Terminal::T];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Terminal::N => "n",
            Terminal::X => "X",
            Terminal::T => "t",
            Terminal::Cg => "CG",
            Terminal::Nad => "NAD",
            Terminal::Sad => "SAD",
            Terminal::Aad => "AAD",
            Terminal::Gad => "GAD",
        }
    }

    fn index(self) -> usize {
        Terminal::ALL
            .iter()
            .position(|&t| t == self)
            .expect("listed")
    }

    fn from_name(name: &str) -> Option<Terminal> {
        Terminal::ALL
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(name))
    }
}

/// The constants of the terminal set (paper 001 §4.2.1), plus `e`, which the authors' code
/// also offers (Table 4's functions contain 2.72), truncated as the code writes it.
#[allow(clippy::approx_constant)]
pub(crate) const CONSTANTS: [f64; 9] =
    [0.001, 0.01, 0.1, 0.5, 1.0, 10.0, 100.0, 1000.0, 2.71828182];

/// An operator (paper 001 §4.2.1: `+ − × ÷ log exp pow`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Log,
    Exp,
    Pow,
}

impl Op {
    pub(crate) const ALL: [Op; 7] = [
        Op::Add,
        Op::Sub,
        Op::Mul,
        Op::Div,
        Op::Log,
        Op::Exp,
        Op::Pow,
    ];

    pub(crate) fn arity(self) -> usize {
        match self {
            Op::Log | Op::Exp => 1,
            _ => 2,
        }
    }

    /// The value of the operator, protected as the authors' code protects it.
    pub fn apply(self, a: f64, b: f64) -> f64 {
        match self {
            Op::Add => a + b,
            Op::Sub => a - b,
            Op::Mul => a * b,
            Op::Div => protected_div(a, b),
            Op::Log => protected_log(a),
            Op::Exp => a.exp(),
            Op::Pow => a.powf(b),
        }
    }
}

/// Protected division of paper 001's code (`functions.h`): `±10⁶` (the sign of `x·y`, + when
/// 0) when `|y| < 10⁻⁶`, else `x / y`. The paper (§4.2.1) says only "returns 0" out of domain;
/// the published functions were found with the code's rule.
pub(crate) fn protected_div(x: f64, y: f64) -> f64 {
    if y.abs() < 1e-6 {
        if x * y < 0.0 {
            -1e6
        } else {
            1e6
        }
    } else {
        x / y
    }
}

/// Protected logarithm of paper 001's code (`functions.h`): `ln|x|` when `|x| > 1`, else 0.
pub(crate) fn protected_log(x: f64) -> f64 {
    let a = x.abs();
    if a <= 1.0 {
        0.0
    } else {
        a.ln()
    }
}

/// One node of a prefix-ordered tree.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Node {
    Terminal(Terminal),
    Const(f64),
    Op(Op),
}

impl Node {
    fn arity(self) -> usize {
        match self {
            Node::Op(op) => op.arity(),
            _ => 0,
        }
    }
}

/// An expression tree (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    nodes: Vec<Node>,
}

/// Why a function's text could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("column {column}: {reason}")]
pub(crate) struct ParseError {
    /// 1-based character position of the problem.
    pub(crate) column: usize,
    pub(crate) reason: String,
}

impl Expr {
    /// A tree from prefix-ordered nodes; `None` unless they form exactly one tree.
    pub(crate) fn from_prefix(nodes: Vec<Node>) -> Option<Expr> {
        let mut open = 1usize;
        for (i, n) in nodes.iter().enumerate() {
            if open == 0 {
                return None;
            }
            open = open - 1 + n.arity();
            if open == 0 && i + 1 != nodes.len() {
                return None;
            }
        }
        (open == 0 && !nodes.is_empty()).then_some(Expr { nodes })
    }

    pub(crate) fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    pub(crate) fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The end (exclusive) of the subtree starting at node `start`.
    pub(crate) fn subtree_end(&self, start: usize) -> usize {
        let mut open = 1usize;
        let mut i = start;
        while open > 0 {
            open = open - 1 + self.nodes[i].arity();
            i += 1;
        }
        i
    }

    /// Depth of the tree (a single node has depth 1).
    pub(crate) fn depth(&self) -> usize {
        self.depth_at(0).0
    }

    /// (depth of the subtree at `start`, its end).
    fn depth_at(&self, start: usize) -> (usize, usize) {
        let arity = self.nodes[start].arity();
        let mut next = start + 1;
        let mut deepest = 0;
        for _ in 0..arity {
            let (d, end) = self.depth_at(next);
            deepest = deepest.max(d);
            next = end;
        }
        (deepest + 1, next)
    }

    /// This tree with the subtree at `start` replaced by `with`.
    pub(crate) fn replace(&self, start: usize, with: &[Node]) -> Expr {
        let end = self.subtree_end(start);
        let mut nodes = Vec::with_capacity(self.nodes.len() - (end - start) + with.len());
        nodes.extend_from_slice(&self.nodes[..start]);
        nodes.extend_from_slice(with);
        nodes.extend_from_slice(&self.nodes[end..]);
        Expr { nodes }
    }

    /// The terminals the tree reads.
    pub(crate) fn uses(&self, terminal: Terminal) -> bool {
        self.nodes.contains(&Node::Terminal(terminal))
    }

    /// Reads a function: infix `+ - * /` (usual precedence, left-associative), `^` or
    /// `pow(a, b)`, `log(a)`, `exp(a)`, parentheses, numbers and the terminal names `n X t CG
    /// NAD SAD AAD GAD` (any case).
    pub(crate) fn parse(text: &str) -> Result<Expr, ParseError> {
        let mut p = Parser {
            chars: text.chars().collect(),
            pos: 0,
            nodes: Vec::new(),
        };
        p.sum()?;
        p.skip_space();
        if p.pos < p.chars.len() {
            return Err(p.error(format!("unexpected `{}`", p.chars[p.pos])));
        }
        Ok(Expr { nodes: p.nodes })
    }

    /// The score of every page: `columns[terminal][page]`, `pages` entries. NaN becomes −∞
    /// and ±∞ the largest finite values, so that sorting by score is total (SEED-SYSTEMS
    /// §2.2.3's choice; the authors' code leaves them to `std::sort`).
    pub(crate) fn evaluate(&self, columns: &Columns, out: &mut Vec<f64>) {
        let value = self.eval_at(0, columns).0;
        out.clear();
        match value {
            Value::Const(c) => out.resize(columns.pages, c),
            Value::Column(t) => out.extend_from_slice(&columns.values[t.index()]),
            Value::Owned(v) => *out = v,
        }
        for x in out.iter_mut() {
            *x = sortable(*x);
        }
    }

    fn eval_at(&self, start: usize, columns: &Columns) -> (Value, usize) {
        match self.nodes[start] {
            Node::Const(c) => (Value::Const(c), start + 1),
            Node::Terminal(t) => (Value::Column(t), start + 1),
            Node::Op(op) => {
                let (a, next) = self.eval_at(start + 1, columns);
                let (b, end) = if op.arity() == 2 {
                    let (b, end) = self.eval_at(next, columns);
                    (Some(b), end)
                } else {
                    (None, next)
                };
                (combine(op, a, b, columns), end)
            }
        }
    }
}

/// A score made total-orderable (see [`Expr::evaluate`]).
pub(crate) fn sortable(x: f64) -> f64 {
    if x.is_nan() {
        f64::NEG_INFINITY
    } else {
        x.clamp(-f64::MAX, f64::MAX)
    }
}

/// Every page's terminal values at one cycle, one column per [`Terminal`].
#[derive(Debug, Clone, Default)]
pub struct Columns {
    pub(crate) pages: usize,
    values: [Vec<f64>; 8],
}

impl Columns {
    pub(crate) fn new(pages: usize) -> Self {
        Columns {
            pages,
            values: Default::default(),
        }
    }

    /// The column of `terminal`, to fill (`pages` entries).
    pub(crate) fn column_mut(&mut self, terminal: Terminal) -> &mut Vec<f64> {
        &mut self.values[terminal.index()]
    }

    pub fn column(&self, terminal: Terminal) -> &[f64] {
        &self.values[terminal.index()]
    }
}

/// An intermediate value: a constant, a terminal's column, or a computed column.
enum Value {
    Const(f64),
    Column(Terminal),
    Owned(Vec<f64>),
}

fn combine(op: Op, a: Value, b: Option<Value>, columns: &Columns) -> Value {
    // One monomorphised loop per operator (no per-element dispatch), so the arithmetic ones
    // vectorise.
    match op {
        Op::Add => combine_with(|x, y| x + y, a, b, columns),
        Op::Sub => combine_with(|x, y| x - y, a, b, columns),
        Op::Mul => combine_with(|x, y| x * y, a, b, columns),
        Op::Div => combine_with(protected_div, a, b, columns),
        Op::Log => combine_with(|x, _| protected_log(x), a, b, columns),
        Op::Exp => combine_with(|x, _| x.exp(), a, b, columns),
        Op::Pow => combine_with(f64::powf, a, b, columns),
    }
}

/// An operand resolved before a loop: a constant or a column.
enum Operand<'v> {
    Const(f64),
    Slice(&'v [f64]),
}

fn operand<'v>(v: &'v Value, columns: &'v Columns) -> Operand<'v> {
    match v {
        Value::Const(c) => Operand::Const(*c),
        Value::Column(t) => Operand::Slice(&columns.values[t.index()]),
        Value::Owned(o) => Operand::Slice(o),
    }
}

fn combine_with(
    f: impl Fn(f64, f64) -> f64,
    a: Value,
    b: Option<Value>,
    columns: &Columns,
) -> Value {
    // A unary operator ignores its second operand.
    let b = b.unwrap_or(Value::Const(0.0));
    match (a, b) {
        (Value::Const(x), Value::Const(y)) => Value::Const(f(x, y)),
        (Value::Owned(mut o), b) => {
            match operand(&b, columns) {
                Operand::Const(y) => o.iter_mut().for_each(|x| *x = f(*x, y)),
                Operand::Slice(s) => o.iter_mut().zip(s).for_each(|(x, &y)| *x = f(*x, y)),
            }
            Value::Owned(o)
        }
        (a, Value::Owned(mut o)) => {
            match operand(&a, columns) {
                Operand::Const(x) => o.iter_mut().for_each(|y| *y = f(x, *y)),
                Operand::Slice(s) => o.iter_mut().zip(s).for_each(|(y, &x)| *y = f(x, *y)),
            }
            Value::Owned(o)
        }
        (a, b) => Value::Owned(match (operand(&a, columns), operand(&b, columns)) {
            (Operand::Const(x), Operand::Slice(s)) => s.iter().map(|&y| f(x, y)).collect(),
            (Operand::Slice(s), Operand::Const(y)) => s.iter().map(|&x| f(x, y)).collect(),
            (Operand::Slice(s), Operand::Slice(t)) => {
                s.iter().zip(t).map(|(&x, &y)| f(x, y)).collect()
            }
            (Operand::Const(x), Operand::Const(y)) => vec![f(x, y); columns.pages],
        }),
    }
}

impl fmt::Display for Expr {
    /// Infix text; every binary operation below the root in parentheses, so the text reads
    /// back to the same tree.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        self.write(0, true, &mut out);
        f.write_str(&out)
    }
}

impl Expr {
    fn write(&self, start: usize, root: bool, out: &mut String) -> usize {
        match self.nodes[start] {
            Node::Terminal(t) => {
                out.push_str(t.name());
                start + 1
            }
            Node::Const(c) => {
                out.push_str(&format!("{c}"));
                start + 1
            }
            Node::Op(op @ (Op::Log | Op::Exp)) => {
                out.push_str(if op == Op::Log { "log(" } else { "exp(" });
                let end = self.write(start + 1, true, out);
                out.push(')');
                end
            }
            Node::Op(Op::Pow) => {
                out.push_str("pow(");
                let next = self.write(start + 1, true, out);
                out.push_str(", ");
                let end = self.write(next, true, out);
                out.push(')');
                end
            }
            Node::Op(op) => {
                if !root {
                    out.push('(');
                }
                let next = self.write(start + 1, false, out);
                out.push_str(match op {
                    Op::Add => " + ",
                    Op::Sub => " - ",
                    Op::Mul => " * ",
                    _ => " / ",
                });
                let end = self.write(next, false, out);
                if !root {
                    out.push(')');
                }
                end
            }
        }
    }
}

/// Recursive-descent reader for [`Expr::parse`]; emits prefix nodes.
struct Parser {
    chars: Vec<char>,
    pos: usize,
    nodes: Vec<Node>,
}

impl Parser {
    fn error(&self, reason: String) -> ParseError {
        ParseError {
            column: self.pos + 1,
            reason,
        }
    }

    fn skip_space(&mut self) {
        while self.pos < self.chars.len() && self.chars[self.pos].is_whitespace() {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_space();
        self.chars.get(self.pos).copied()
    }

    fn expect(&mut self, c: char) -> Result<(), ParseError> {
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error(match self.chars.get(self.pos) {
                Some(found) => format!("expected `{c}`, found `{found}`"),
                None => format!("expected `{c}` at the end"),
            }))
        }
    }

    /// A left-associative chain `operand (op operand)*`: the operator goes before the left
    /// operand's nodes (prefix order).
    fn chain(
        &mut self,
        ops: &[(char, Op)],
        operand: fn(&mut Self) -> Result<(), ParseError>,
    ) -> Result<(), ParseError> {
        let start = self.nodes.len();
        operand(self)?;
        while let Some(c) = self.peek() {
            let Some(&(_, op)) = ops.iter().find(|(ch, _)| *ch == c) else {
                break;
            };
            self.pos += 1;
            self.nodes.insert(start, Node::Op(op));
            operand(self)?;
        }
        Ok(())
    }

    fn sum(&mut self) -> Result<(), ParseError> {
        self.chain(&[('+', Op::Add), ('-', Op::Sub)], Self::product)
    }

    fn product(&mut self) -> Result<(), ParseError> {
        self.chain(&[('*', Op::Mul), ('/', Op::Div)], Self::power)
    }

    /// `atom (^ power)?`, right-associative.
    fn power(&mut self) -> Result<(), ParseError> {
        let start = self.nodes.len();
        self.atom()?;
        if self.peek() == Some('^') {
            self.pos += 1;
            self.nodes.insert(start, Node::Op(Op::Pow));
            self.power()?;
        }
        Ok(())
    }

    fn atom(&mut self) -> Result<(), ParseError> {
        match self.peek() {
            Some('(') => {
                self.pos += 1;
                self.sum()?;
                self.expect(')')
            }
            Some(c) if c.is_ascii_digit() || c == '.' || c == '-' => {
                let begin = self.pos;
                self.pos += 1;
                while self.pos < self.chars.len()
                    && (self.chars[self.pos].is_ascii_alphanumeric()
                        || self.chars[self.pos] == '.'
                        || ((self.chars[self.pos] == '-' || self.chars[self.pos] == '+')
                            && matches!(self.chars[self.pos - 1], 'e' | 'E')))
                {
                    self.pos += 1;
                }
                let text: String = self.chars[begin..self.pos].iter().collect();
                let value: f64 = text.parse().map_err(|_| ParseError {
                    column: begin + 1,
                    reason: format!("`{text}` is not a number"),
                })?;
                self.nodes.push(Node::Const(value));
                Ok(())
            }
            Some(c) if c.is_ascii_alphabetic() => {
                let begin = self.pos;
                while self.pos < self.chars.len() && self.chars[self.pos].is_ascii_alphanumeric() {
                    self.pos += 1;
                }
                let name: String = self.chars[begin..self.pos].iter().collect();
                let function = match name.to_ascii_lowercase().as_str() {
                    "log" => Some(Op::Log),
                    "exp" => Some(Op::Exp),
                    "pow" => Some(Op::Pow),
                    _ => None,
                };
                if let Some(op) = function {
                    self.nodes.push(Node::Op(op));
                    self.expect('(')?;
                    self.sum()?;
                    if op == Op::Pow {
                        self.expect(',')?;
                        self.sum()?;
                    }
                    return self.expect(')');
                }
                let terminal = Terminal::from_name(&name).ok_or_else(|| ParseError {
                    column: begin + 1,
                    reason: format!(
                        "unknown name `{name}`; expected n, X, t, CG, NAD, SAD, AAD, GAD, log, exp or pow"
                    ),
                })?;
                self.nodes.push(Node::Terminal(terminal));
                Ok(())
            }
            Some(c) => Err(self.error(format!("unexpected `{c}`"))),
            None => Err(self.error("the function ends too early".into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns(values: &[(Terminal, Vec<f64>)]) -> Columns {
        let pages = values[0].1.len();
        let mut c = Columns::new(pages);
        for t in Terminal::ALL {
            *c.column_mut(t) = vec![0.0; pages];
        }
        for (t, v) in values {
            *c.column_mut(*t) = v.clone();
        }
        c
    }

    #[test]
    fn printing_and_parsing_round_trip() {
        for text in [
            "t * X",
            "(t * X) + log(n)",
            "((1 + (X / n)) - (2.73 / (t + 2.72))) - 10",
            "pow(t * X, 100.5 - t)",
            "GAD * exp(NAD + t)",
            "(t * pow(CG, 2.72)) * 1000",
            "exp(CG * (1 + log(t)))",
            "0.001",
            "SAD - AAD",
        ] {
            let e = Expr::parse(text).unwrap();
            assert_eq!(e.to_string(), text, "prints as read");
            assert_eq!(Expr::parse(&e.to_string()).unwrap(), e);
        }
        // Precedence and associativity of hand-written text.
        let e = Expr::parse("t*X + log(n) - 2^3^2 / x").unwrap();
        assert_eq!(
            e.to_string(),
            "((t * X) + log(n)) - (pow(2, pow(3, 2)) / X)"
        );
        assert_eq!(Expr::parse(&e.to_string()).unwrap(), e);
        assert_eq!(Expr::parse("1e-3 * t").unwrap().to_string(), "0.001 * t");
    }

    #[test]
    fn bad_text_names_the_column() {
        let err = Expr::parse("t * Y").unwrap_err();
        assert_eq!(err.column, 5);
        assert!(err.reason.contains("`Y`"), "{err}");
        assert!(Expr::parse("log(t").unwrap_err().reason.contains(")"));
        assert!(Expr::parse("t X").unwrap_err().reason.contains("`X`"));
        assert!(Expr::parse("").is_err());
        assert!(Expr::parse("pow(t)").is_err());
    }

    #[test]
    fn protected_operators_follow_the_authors_code() {
        assert_eq!(protected_div(3.0, 0.0), 1e6);
        assert_eq!(protected_div(-3.0, 1e-7), -1e6);
        assert_eq!(protected_div(-3.0, -1e-7), 1e6);
        assert_eq!(protected_div(3.0, 2.0), 1.5);
        assert_eq!(protected_log(0.5), 0.0);
        assert_eq!(protected_log(-1.0), 0.0);
        assert_eq!(protected_log(0.0), 0.0);
        assert!((protected_log(-std::f64::consts::E) - 1.0).abs() < 1e-12);
        // Unprotected exp/pow: overflow and NaN become sortable scores.
        let e = Expr::parse("exp(t) - exp(t)").unwrap();
        let c = columns(&[(Terminal::T, vec![1.0, 1000.0])]);
        let mut out = Vec::new();
        e.evaluate(&c, &mut out);
        assert_eq!(out[0], 0.0);
        assert_eq!(out[1], f64::NEG_INFINITY, "inf - inf is NaN → −∞");
        let e = Expr::parse("exp(t)").unwrap();
        e.evaluate(&c, &mut out);
        assert_eq!(out[1], f64::MAX);
    }

    #[test]
    fn evaluates_every_page_of_a_column() {
        let c = columns(&[
            (Terminal::T, vec![1.0, 2.0, 3.0]),
            (Terminal::X, vec![0.0, 1.0, 2.0]),
            (Terminal::N, vec![2.0, 3.0, 10.0]),
        ]);
        let e = Expr::parse("t * X + log(n) / 2").unwrap();
        let mut out = Vec::new();
        e.evaluate(&c, &mut out);
        let want: Vec<f64> = (0..3)
            .map(|i| {
                let (t, x, n) = ([1.0, 2.0, 3.0][i], [0.0, 1.0, 2.0][i], [2.0, 3.0, 10.0][i]);
                t * x + f64::ln(n) / 2.0
            })
            .collect();
        assert_eq!(out, want);
        let k = Expr::parse("2 * 3").unwrap();
        k.evaluate(&c, &mut out);
        assert_eq!(out, vec![6.0; 3]);
    }

    #[test]
    fn tree_shape_queries() {
        let e = Expr::parse("(t * X) + log(n)").unwrap();
        // + * t X log n
        assert_eq!(e.len(), 6);
        assert_eq!(e.depth(), 3);
        assert_eq!(e.subtree_end(1), 4);
        assert_eq!(e.subtree_end(4), 6);
        let r = e.replace(1, &[Node::Terminal(Terminal::T)]);
        assert_eq!(r.to_string(), "t + log(n)");
        assert!(Expr::from_prefix(vec![Node::Op(Op::Add), Node::Const(1.0)]).is_none());
        assert!(e.uses(Terminal::N) && !e.uses(Terminal::Cg));
    }
}
