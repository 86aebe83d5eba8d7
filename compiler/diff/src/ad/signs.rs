//! Sign-canonical form: every node of a cone as ±(a node with no negation on top), so
//! a value and its negation are one node with two signs. Action and reaction are the
//! case this is for: a force law writes `s·d/l` on one body and `-s·d/l` on the other,
//! i.e. ((−s)·d)/l, a second product and quotient that are the first ones negated; in
//! canonical form both are ±(s·d)/l, the residual rows −Q of the reaction are the
//! action's rows themselves, and the iteration matrix's rows of the reaction share the
//! action's entries instead of eliminating a second copy of the force.
//!
//! Only rewrites that are exact for every IEEE value, zeros' signs included, are used
//! (negation flips the sign bit and rounding to nearest is symmetric): −(−x) = x,
//! (−a)·b = −(a·b), (−a)/b = −(a/b), a/(−b) = −(a/b), a + (−b) = a − b,
//! (−a) + b = b − a, a − (−b) = a + b, (−a) − (−b) = b − a, |−x| = |x|, (−x)ⁿ = xⁿ
//! for even n, and a negative constant is the negation of its magnitude. Not used:
//! −(a + b) = (−a) + (−b) and −(a − b) = b − a, which differ in the sign of a zero
//! result; there the negation is applied to the operand (a node of its own).
//! NaN constants keep their bits.

use fdc_ir::{Graph, Id, Op, Unary};
use rustc_hash::FxHashMap;

/// A node's value as (negated?, canonical node).
pub type Signed = (bool, Id);

/// The canonical forms of the nodes seen so far (one graph).
#[derive(Default)]
pub struct Signs {
    memo: FxHashMap<Id, Signed>,
}

impl Signs {
    /// Every root as a node of the same value, built in sign-canonical form (a root
    /// whose canonical sign is negative is the negation of its canonical node).
    pub fn rows(&mut self, g: &mut Graph, roots: &[Option<Id>]) -> Vec<Option<Id>> {
        let present: Vec<Id> = roots.iter().flatten().copied().collect();
        let cone = g.cone_until(&present, |n| self.memo.contains_key(&n));
        for n in cone {
            let c = self.canonical(g, n);
            self.memo.insert(n, c);
        }
        roots
            .iter()
            .map(|r| r.map(|r| materialize(g, self.memo[&r])))
            .collect()
    }

    /// The canonical form of `n`, its operands' being known.
    fn canonical(&self, g: &mut Graph, n: Id) -> Signed {
        let op = g.op(n);
        let of = |a: Id| self.memo[&a];
        match op {
            Op::Const(bits) => {
                let c = f64::from_bits(bits);
                if c.is_sign_negative() && !c.is_nan() {
                    (true, g.constant(-c))
                } else {
                    (false, n)
                }
            }
            Op::Input(..) | Op::Sym(_) => (false, n),
            Op::Unary(Unary::Neg, a) => {
                let (s, b) = of(a);
                (!s, b)
            }
            Op::Unary(Unary::Abs, a) => (false, g.abs(of(a).1)),
            Op::Mul(a, b) => {
                let ((sa, a), (sb, b)) = (of(a), of(b));
                (sa ^ sb, mul_unit(g, a, b))
            }
            Op::Div(a, b) => {
                let ((sa, a), (sb, b)) = (of(a), of(b));
                let q = if g.as_const(b) == Some(1.0) {
                    a
                } else {
                    g.div(a, b)
                };
                (sa ^ sb, q)
            }
            Op::Add(a, b) => {
                let ((sa, a), (sb, b)) = (of(a), of(b));
                let r = match (sa, sb) {
                    (false, false) => g.add2(a, b),
                    (false, true) => g.sub(a, b),
                    (true, false) => g.sub(b, a),
                    // (−a) + (−b) = (−a) − b; the negation of the sum is not exact.
                    (true, true) => {
                        let na = materialize(g, (true, a));
                        g.sub(na, b)
                    }
                };
                (false, r)
            }
            Op::Sub(a, b) => {
                let ((sa, a), (sb, b)) = (of(a), of(b));
                let r = match (sa, sb) {
                    (false, false) => g.sub(a, b),
                    (false, true) => g.add2(a, b),
                    (true, true) => g.sub(b, a),
                    // (−a) − b: −(a + b) is not exact (zeros), so −a is computed.
                    (true, false) => {
                        let na = materialize(g, (true, a));
                        g.sub(na, b)
                    }
                };
                (false, r)
            }
            Op::Powi(a, k) if k % 2 == 0 => (false, g.powi(of(a).1, k)),
            other => {
                // Any other operation reads its operands' values.
                let values: Vec<(Id, Id)> = other
                    .operands()
                    .into_iter()
                    .map(|a| (a, materialize(g, of(a))))
                    .collect();
                let value = |a: Id| values.iter().find(|v| v.0 == a).map_or(a, |v| v.1);
                (false, g.add(other.map_operands(value)))
            }
        }
    }
}

/// a·b, with a unit factor left out (x·1 = x exactly).
fn mul_unit(g: &mut Graph, a: Id, b: Id) -> Id {
    if g.as_const(a) == Some(1.0) {
        b
    } else if g.as_const(b) == Some(1.0) {
        a
    } else {
        g.mul(a, b)
    }
}

/// The node of value ±`b`: a constant's negation is a constant.
pub fn materialize(g: &mut Graph, (neg, b): Signed) -> Id {
    if !neg {
        return b;
    }
    match g.as_const(b) {
        Some(c) => g.constant(-c),
        None => g.neg(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fdc_ir::interp::eval;
    use fdc_ir::Slot;

    /// Every binary operation on every pair of signed operands (and a unary or a
    /// negation on top), evaluated at values with zeros of both signs, infinities and
    /// NaN: the canonical rows have the original bits (NaN: any NaN).
    #[test]
    fn canonical_rows_have_the_bits_of_the_original_everywhere() {
        let mut g = Graph::new();
        let (x, y) = (g.input(Slot::Q, 0), g.input(Slot::Q, 1));
        let (nx, ny) = (g.neg(x), g.neg(y));
        let (m2, mz) = (g.constant(-2.0), g.constant(-0.0));
        let nnx = g.neg(nx);
        let operands = [x, y, nx, ny, m2, mz, nnx];
        let mut rows = Vec::new();
        for &a in &operands {
            for &b in &operands {
                let ops = [
                    g.add2(a, b),
                    g.sub(a, b),
                    g.mul(a, b),
                    g.div(a, b),
                    g.atan2(a, b),
                ];
                for o in ops {
                    let no = g.neg(o);
                    let s = g.sqrt(o);
                    let ab = g.abs(no);
                    let p2 = g.powi(no, 2);
                    let p3 = g.powi(no, 3);
                    let at = g.atan2(no, a);
                    rows.extend([o, no, s, ab, p2, p3, at]);
                }
            }
        }
        let roots: Vec<Option<Id>> = rows.iter().map(|&r| Some(r)).collect();
        let canon: Vec<Id> = Signs::default()
            .rows(&mut g, &roots)
            .into_iter()
            .flatten()
            .collect();
        let values = [
            0.0,
            -0.0,
            1.5,
            -1.5,
            3.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        for &vx in &values {
            for &vy in &values {
                let q = [vx, vy];
                let ins: fdc_ir::interp::Inputs = [&q, &[], &[], &[], &[], &[], &[], &[]];
                let a = eval(&g, &rows, &ins).expect("evaluates");
                let b = eval(&g, &canon, &ins).expect("evaluates");
                for (k, (u, w)) in a.iter().zip(&b).enumerate() {
                    let same = u.to_bits() == w.to_bits() || (u.is_nan() && w.is_nan());
                    assert!(same, "row {k} at ({vx}, {vy}): {u:e} against {w:e}");
                }
            }
        }
    }

    /// A force s·d/l on one body and −s·d/l on the other: in canonical form the
    /// reaction's residual rows −Q are the action's force nodes, with no product,
    /// quotient or negation of their own.
    #[test]
    fn a_reaction_shares_the_nodes_of_its_action() {
        let mut g = Graph::new();
        let s = g.input(Slot::V, 0);
        let l = g.input(Slot::Q, 3);
        let d = [0, 1, 2].map(|i| g.input(Slot::Q, i));
        let ns = g.neg(s);
        let mut action = Vec::new();
        let mut reaction = Vec::new();
        for &di in &d {
            let sd = g.mul(s, di);
            let f = g.div(sd, l);
            action.push(f);
            let nsd = g.mul(ns, di);
            let fb = g.div(nsd, l);
            reaction.push(fb);
        }
        // The residual rows −Q of both bodies.
        let rows: Vec<Option<Id>> = action
            .iter()
            .chain(&reaction)
            .map(|&f| Some(g.neg(f)))
            .collect();
        let all: Vec<Id> = rows.iter().flatten().copied().collect();
        assert_eq!(crate::ad::op_count(&g, &all), 3 * 3 + 1 + 3 * 3);
        let canon = Signs::default().rows(&mut g, &rows);
        let canon: Vec<Id> = canon.into_iter().flatten().collect();
        assert_eq!(&canon[3..], &action[..], "−(−s·d/l) is s·d/l itself");
        for (c, f) in canon[..3].iter().zip(&action) {
            assert_eq!(g.op(*c), Op::Unary(Unary::Neg, *f));
        }
        assert_eq!(crate::ad::op_count(&g, &canon), 3 * 3);
    }
}
