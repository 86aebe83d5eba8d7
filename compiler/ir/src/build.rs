//! Convenience builders over [`Graph`]: one method per scalar operation, and small
//! vec3/mat3 helpers. They build exactly what they say (no folding, no rewriting):
//! simplification is the simplifier's job, so builders stay obviously correct.

use crate::graph::{Cmp, Graph, Id, Op, Unary};

/// A 3-vector of scalar nodes.
pub type V3 = [Id; 3];
/// A 3×3 matrix of scalar nodes, row-major (`m[row][col]`).
pub type M3 = [[Id; 3]; 3];

impl Graph {
    pub fn add2(&mut self, a: Id, b: Id) -> Id {
        self.add(Op::Add(a, b))
    }
    pub fn sub(&mut self, a: Id, b: Id) -> Id {
        self.add(Op::Sub(a, b))
    }
    pub fn mul(&mut self, a: Id, b: Id) -> Id {
        self.add(Op::Mul(a, b))
    }
    pub fn div(&mut self, a: Id, b: Id) -> Id {
        self.add(Op::Div(a, b))
    }
    pub fn unary(&mut self, f: Unary, a: Id) -> Id {
        self.add(Op::Unary(f, a))
    }
    pub fn neg(&mut self, a: Id) -> Id {
        self.unary(Unary::Neg, a)
    }
    pub fn sqrt(&mut self, a: Id) -> Id {
        self.unary(Unary::Sqrt, a)
    }
    pub fn sin(&mut self, a: Id) -> Id {
        self.unary(Unary::Sin, a)
    }
    pub fn cos(&mut self, a: Id) -> Id {
        self.unary(Unary::Cos, a)
    }
    pub fn tan(&mut self, a: Id) -> Id {
        self.unary(Unary::Tan, a)
    }
    pub fn exp(&mut self, a: Id) -> Id {
        self.unary(Unary::Exp, a)
    }
    pub fn log(&mut self, a: Id) -> Id {
        self.unary(Unary::Log, a)
    }
    pub fn tanh(&mut self, a: Id) -> Id {
        self.unary(Unary::Tanh, a)
    }
    pub fn abs(&mut self, a: Id) -> Id {
        self.unary(Unary::Abs, a)
    }
    pub fn powi(&mut self, a: Id, n: i32) -> Id {
        self.add(Op::Powi(a, n))
    }
    pub fn pow(&mut self, a: Id, b: Id) -> Id {
        self.add(Op::Pow(a, b))
    }
    pub fn atan2(&mut self, y: Id, x: Id) -> Id {
        self.add(Op::Atan2(y, x))
    }
    pub fn min(&mut self, a: Id, b: Id) -> Id {
        self.add(Op::Min(a, b))
    }
    pub fn max(&mut self, a: Id, b: Id) -> Id {
        self.add(Op::Max(a, b))
    }
    /// `if a CMP b then t else f`.
    pub fn select(&mut self, cmp: Cmp, a: Id, b: Id, t: Id, f: Id) -> Id {
        self.add(Op::Select(cmp, [a, b, t, f]))
    }

    /// The `deriv`-th derivative of spline table `table` at `x`; derivatives above the
    /// third are the constant 0 (the pieces are cubics).
    pub fn spline(&mut self, table: u32, deriv: u8, x: Id) -> Id {
        if deriv > crate::spline::MAX_DERIV {
            return self.constant(0.0);
        }
        self.add(Op::Spline(table, deriv, x))
    }

    /// Sum of many terms, left to right (`((a+b)+c)+…`); `None` for no terms.
    pub fn sum(&mut self, terms: &[Id]) -> Option<Id> {
        let (&first, rest) = terms.split_first()?;
        Some(rest.iter().fold(first, |acc, &t| self.add2(acc, t)))
    }

    pub fn v3_const(&mut self, x: [f64; 3]) -> V3 {
        x.map(|c| self.constant(c))
    }
    pub fn v3_add(&mut self, a: V3, b: V3) -> V3 {
        [0, 1, 2].map(|i| self.add2(a[i], b[i]))
    }
    pub fn v3_sub(&mut self, a: V3, b: V3) -> V3 {
        [0, 1, 2].map(|i| self.sub(a[i], b[i]))
    }
    pub fn v3_neg(&mut self, a: V3) -> V3 {
        a.map(|x| self.neg(x))
    }
    pub fn v3_scale(&mut self, s: Id, a: V3) -> V3 {
        a.map(|x| self.mul(s, x))
    }
    pub fn dot(&mut self, a: V3, b: V3) -> Id {
        let t = [0, 1, 2].map(|i| self.mul(a[i], b[i]));
        let ab = self.add2(t[0], t[1]);
        self.add2(ab, t[2])
    }
    pub fn cross(&mut self, a: V3, b: V3) -> V3 {
        let mut c = |i: usize, j: usize| {
            let x = self.mul(a[i], b[j]);
            let y = self.mul(a[j], b[i]);
            self.sub(x, y)
        };
        [c(1, 2), c(2, 0), c(0, 1)]
    }
    pub fn norm(&mut self, a: V3) -> Id {
        let d = self.dot(a, a);
        self.sqrt(d)
    }
    pub fn mat_vec(&mut self, m: M3, x: V3) -> V3 {
        [0, 1, 2].map(|i| self.dot(m[i], x))
    }
    /// mᵀ x without building the transpose.
    pub fn mat_t_vec(&mut self, m: M3, x: V3) -> V3 {
        [0, 1, 2].map(|j| self.dot([m[0][j], m[1][j], m[2][j]], x))
    }
    pub fn mat_mul(&mut self, a: M3, b: M3) -> M3 {
        let bt = transpose(b);
        [0, 1, 2].map(|i| [0, 1, 2].map(|j| self.dot(a[i], bt[j])))
    }
    /// The skew (tilde) matrix: `skew(a) * b == a × b`.
    pub fn skew(&mut self, a: V3) -> M3 {
        let z = self.constant(0.0);
        let n = a.map(|x| self.neg(x));
        [[z, n[2], a[1]], [a[2], z, n[0]], [n[1], a[0], z]]
    }
}

pub fn transpose(m: M3) -> M3 {
    [0, 1, 2].map(|i| [0, 1, 2].map(|j| m[j][i]))
}
