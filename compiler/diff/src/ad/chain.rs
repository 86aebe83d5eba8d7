//! The chain rule of each operation: local partial derivatives times the operands'
//! gradients, merged by direction.

use super::{Grad, Partial};
use fdc_ir::{Cmp, Graph, Id, Op, Unary};

/// d f(a) for a unary `f` other than negation; `n` is the node f(a).
pub(super) fn unary(g: &mut Graph, f: Unary, n: Id, a: Id, ga: &Grad) -> Grad {
    if ga.is_empty() {
        return Grad::new();
    }
    let p = unary_partial(g, f, n, a);
    scale_all(g, p, ga)
}

/// ∂f(a)/∂a for a unary `f` other than negation; `n` is the node f(a).
pub(super) fn unary_partial(g: &mut Graph, f: Unary, n: Id, a: Id) -> Partial {
    match f {
        Unary::Neg => unreachable!("negation has its own rule"),
        Unary::Sqrt => {
            let two = g.constant(2.0);
            Partial::DivBy(g.mul(two, n))
        }
        Unary::Sin => Partial::Mul(g.cos(a)),
        Unary::Cos => {
            let s = g.sin(a);
            Partial::Mul(g.neg(s))
        }
        Unary::Tan => {
            let one = g.constant(1.0);
            let t2 = g.powi(n, 2);
            Partial::Mul(g.add2(one, t2))
        }
        Unary::Exp => Partial::Mul(n),
        Unary::Log => Partial::DivBy(a),
        Unary::Tanh => {
            let one = g.constant(1.0);
            let t2 = g.powi(n, 2);
            Partial::Mul(g.sub(one, t2))
        }
        Unary::Abs => {
            let zero = g.constant(0.0);
            let one = g.constant(1.0);
            let m1 = g.constant(-1.0);
            Partial::Mul(g.select(Cmp::Ge, a, zero, one, m1))
        }
    }
}

/// d(a/b) = da/b − (a/b)·db/b; `n` is the node a/b.
pub(super) fn div(g: &mut Graph, n: Id, [_, b]: [Id; 2], [ga, gb]: [&Grad; 2]) -> Grad {
    let ta = scale_all(g, Partial::DivBy(b), ga);
    let tb = if gb.is_empty() {
        Grad::new()
    } else {
        let q = g.div(n, b);
        scale_all(g, Partial::Mul(q), gb)
    };
    merge(g, &ta, &tb, true)
}

/// d aᵏ = k aᵏ⁻¹ da for an integer k.
pub(super) fn powi(g: &mut Graph, a: Id, k: i32, ga: &Grad) -> Grad {
    if ga.is_empty() || k == 0 {
        return Grad::new();
    }
    let p = powi_partial(g, a, k);
    scale_all(g, p, ga)
}

/// ∂aᵏ/∂a = k aᵏ⁻¹ for an integer k ≠ 0.
pub(super) fn powi_partial(g: &mut Graph, a: Id, k: i32) -> Partial {
    match k {
        1 => Partial::One,
        2 => {
            let two = g.constant(2.0);
            Partial::Mul(g.mul(two, a))
        }
        _ => {
            let c = g.constant(k as f64);
            let pw = if k - 1 == 1 { a } else { g.powi(a, k - 1) };
            Partial::Mul(g.mul(c, pw))
        }
    }
}

/// d aᵇ: ∂/∂a = b·a^(b−1) (not b·aᵇ/a, which is 0/0 at a = 0), ∂/∂b = aᵇ·ln a; `n`
/// is the node aᵇ.
pub(super) fn pow(g: &mut Graph, n: Id, [a, b]: [Id; 2], [ga, gb]: [&Grad; 2]) -> Grad {
    let ta = if ga.is_empty() {
        Grad::new()
    } else {
        let p = pow_partial_base(g, a, b);
        scale_all(g, Partial::Mul(p), ga)
    };
    let tb = if gb.is_empty() {
        Grad::new()
    } else {
        let p = pow_partial_exponent(g, n, a);
        scale_all(g, Partial::Mul(p), gb)
    };
    merge(g, &ta, &tb, false)
}

/// ∂aᵇ/∂a = b·a^(b−1).
pub(super) fn pow_partial_base(g: &mut Graph, a: Id, b: Id) -> Id {
    let one = g.constant(1.0);
    let bm1 = g.sub(b, one);
    let pw = g.pow(a, bm1);
    g.mul(b, pw)
}

/// ∂aᵇ/∂b = aᵇ·ln a; `n` is the node aᵇ.
pub(super) fn pow_partial_exponent(g: &mut Graph, n: Id, a: Id) -> Id {
    let l = g.log(a);
    g.mul(n, l)
}

/// d atan2(y, x): ∂/∂y = x/(x²+y²), ∂/∂x = −y/(x²+y²).
pub(super) fn atan2(g: &mut Graph, [y, x]: [Id; 2], [gy, gx]: [&Grad; 2]) -> Grad {
    let r2 = atan2_r2(g, [y, x]);
    let ty = if gy.is_empty() {
        Grad::new()
    } else {
        let p = g.div(x, r2);
        scale_all(g, Partial::Mul(p), gy)
    };
    let tx = if gx.is_empty() {
        Grad::new()
    } else {
        let p = g.div(y, r2);
        scale_all(g, Partial::Mul(p), gx)
    };
    merge(g, &ty, &tx, true)
}

/// x² + y², the denominator of both partial derivatives of atan2(y, x).
pub(super) fn atan2_r2(g: &mut Graph, [y, x]: [Id; 2]) -> Id {
    let x2 = g.powi(x, 2);
    let y2 = g.powi(y, 2);
    g.add2(x2, y2)
}

pub(super) fn neg(g: &mut Graph, x: Id) -> Id {
    // −(−y) = y exactly in IEEE arithmetic.
    if let Op::Unary(Unary::Neg, y) = g.op(x) {
        return y;
    }
    g.neg(x)
}

pub(super) fn is_const(g: &Graph, x: Id, v: f64) -> bool {
    g.as_const(x).is_some_and(|c| c == v)
}

pub(super) fn scale(g: &mut Graph, p: Partial, d: Id) -> Id {
    match p {
        Partial::One => d,
        Partial::Mul(f) => {
            if is_const(g, d, 1.0) {
                f
            } else if is_const(g, f, 1.0) {
                d
            } else if is_const(g, d, -1.0) {
                neg(g, f)
            } else {
                g.mul(f, d)
            }
        }
        Partial::DivBy(b) => {
            if is_const(g, b, 1.0) {
                d
            } else {
                g.div(d, b)
            }
        }
    }
}

pub(super) fn scale_all(g: &mut Graph, p: Partial, gr: &Grad) -> Grad {
    gr.iter().map(|&(d, x)| (d, scale(g, p, x))).collect()
}

/// a ± b on sparse gradients.
pub(super) fn merge(g: &mut Graph, a: &Grad, b: &Grad, sub: bool) -> Grad {
    let mut out = Grad::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let da = a.get(i).map(|x| x.0).unwrap_or(u32::MAX);
        let db = b.get(j).map(|x| x.0).unwrap_or(u32::MAX);
        if da < db {
            out.push(a[i]);
            i += 1;
        } else if db < da {
            let x = if sub { neg(g, b[j].1) } else { b[j].1 };
            out.push((db, x));
            j += 1;
        } else {
            let x = if sub {
                g.sub(a[i].1, b[j].1)
            } else {
                g.add2(a[i].1, b[j].1)
            };
            out.push((da, x));
            i += 1;
            j += 1;
        }
    }
    out
}

/// Per direction, `f(da, db)` with a zero constant for a missing side (a branch value,
/// not a structural zero: the other branch is nonzero).
pub(super) fn branch(
    g: &mut Graph,
    a: &Grad,
    b: &Grad,
    mut f: impl FnMut(&mut Graph, Id, Id) -> Id,
) -> Grad {
    let mut dirs: Vec<u32> = a.iter().chain(b.iter()).map(|x| x.0).collect();
    dirs.sort_unstable();
    dirs.dedup();
    let zero = g.constant(0.0);
    let find = |gr: &Grad, d: u32| gr.iter().find(|x| x.0 == d).map(|x| x.1);
    dirs.into_iter()
        .map(|d| {
            let da = find(a, d).unwrap_or(zero);
            let db = find(b, d).unwrap_or(zero);
            (d, f(g, da, db))
        })
        .collect()
}
