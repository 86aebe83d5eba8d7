//! Substitution of leaves (symbolic zeros propagated) and queries on cones.

use fdc_ir::{Graph, Id, Op, Unary};
use std::collections::HashMap;

/// A replacement for a leaf during [`substitute`]: `Some(None)` is the exact zero.
pub type Leaf<'a> = &'a dyn Fn(Op) -> Option<Option<Id>>;

/// Rebuilds the cone of `roots` with leaves replaced by `leaf`. A replacement by zero
/// (`Some(None)`) is propagated symbolically (0·x = 0, 0 + x = x, …): this sets a
/// variable to zero in the sense of the mathematics (e.g. f = r at v̇ = 0), and the
/// result has no structural zeros. `None` in the result is the zero. Memoized in
/// `memo`, which must be used with one `leaf` only.
pub fn substitute(
    g: &mut Graph,
    roots: &[Id],
    leaf: Leaf,
    memo: &mut HashMap<Id, Option<Id>>,
) -> Vec<Option<Id>> {
    let cone = g.cone_until(roots, |n| memo.contains_key(&n));
    for n in cone {
        let op = g.op(n);
        let r = match op {
            Op::Const(_) | Op::Input(..) | Op::Sym(_) => leaf(op).unwrap_or(Some(n)),
            _ => rebuild(g, n, op, memo),
        };
        memo.insert(n, r);
    }
    roots.iter().map(|r| memo[r]).collect()
}

fn rebuild(g: &mut Graph, n: Id, op: Op, memo: &HashMap<Id, Option<Id>>) -> Option<Id> {
    let ops = op.operands();
    let new: Vec<Option<Id>> = ops.iter().map(|a| memo[a]).collect();
    if ops.iter().zip(&new).all(|(a, b)| Some(*a) == *b) {
        return Some(n);
    }
    let mut z = |x: Option<Id>| x.unwrap_or_else(|| g.constant(0.0));
    match op {
        Op::Add(..) => match (new[0], new[1]) {
            (None, b) => b,
            (a, None) => a,
            (Some(a), Some(b)) => Some(g.add2(a, b)),
        },
        Op::Sub(..) => match (new[0], new[1]) {
            (a, None) => a,
            (None, Some(b)) => Some(g.neg(b)),
            (Some(a), Some(b)) => Some(g.sub(a, b)),
        },
        Op::Mul(..) => match (new[0], new[1]) {
            (Some(a), Some(b)) => Some(g.mul(a, b)),
            _ => None,
        },
        Op::Div(..) => match (new[0], new[1]) {
            (None, _) => None,
            (Some(a), b) => {
                let b = z(b);
                Some(g.div(a, b))
            }
        },
        Op::Unary(Unary::Neg, _) => new[0].map(|a| g.neg(a)),
        Op::Unary(f, _) => {
            let a = z(new[0]);
            Some(g.unary(f, a))
        }
        Op::Powi(_, k) => match new[0] {
            None if k > 0 => None,
            a => {
                let a = z(a);
                Some(g.powi(a, k))
            }
        },
        _ => {
            let v: Vec<Id> = new.into_iter().map(&mut z).collect();
            let op2 = match op {
                Op::Pow(..) => Op::Pow(v[0], v[1]),
                Op::Atan2(..) => Op::Atan2(v[0], v[1]),
                Op::Min(..) => Op::Min(v[0], v[1]),
                Op::Max(..) => Op::Max(v[0], v[1]),
                Op::Select(c, _) => Op::Select(c, [v[0], v[1], v[2], v[3]]),
                Op::Spline(t, d, _) => Op::Spline(t, d, v[0]),
                _ => unreachable!("all other operations are matched above"),
            };
            Some(g.add(op2))
        }
    }
}

/// True if any node of the cone of `roots` satisfies `pred` (stops at the first).
pub fn cone_any(g: &Graph, roots: &[Id], pred: impl Fn(Op) -> bool) -> bool {
    walk(g, roots, pred)
}

/// The number of operation nodes (not constants, inputs or symbols) in the cone of
/// `roots`, each shared node counted once: the cost of evaluating them together.
pub fn op_count(g: &Graph, roots: &[Id]) -> usize {
    let mut n = 0;
    walk(g, roots, |op| {
        n += usize::from(!matches!(op, Op::Const(_) | Op::Input(..) | Op::Sym(_)));
        false
    });
    n
}

/// Visits each node of the cone of `roots` once, in no particular order, until
/// `visit` returns true (then true). Unlike [`Graph::cone`] it neither sorts nor
/// allocates per node: the form selection counts the operations of every candidate
/// iteration matrix, and on the warm path these walks were a tenth of lowering.
fn walk(g: &Graph, roots: &[Id], mut visit: impl FnMut(Op) -> bool) -> bool {
    let mut seen = rustc_hash::FxHashSet::default();
    let mut stack: Vec<Id> = roots
        .iter()
        .copied()
        .filter(|r| r.index() < g.len())
        .collect();
    while let Some(id) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        let op = g.op(id);
        if visit(op) {
            return true;
        }
        let mut push = |a: Id| {
            if !seen.contains(&a) {
                stack.push(a);
            }
        };
        match op {
            Op::Const(_) | Op::Input(..) | Op::Sym(_) => {}
            Op::Unary(_, a) | Op::Powi(a, _) | Op::Spline(_, _, a) => push(a),
            Op::Add(a, b)
            | Op::Sub(a, b)
            | Op::Mul(a, b)
            | Op::Div(a, b)
            | Op::Pow(a, b)
            | Op::Atan2(a, b)
            | Op::Min(a, b)
            | Op::Max(a, b) => {
                push(a);
                push(b);
            }
            Op::Select(_, ids) => ids.into_iter().for_each(push),
        }
    }
    false
}
