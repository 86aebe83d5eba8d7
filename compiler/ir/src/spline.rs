//! Spline tables: piecewise cubics of one variable held by a [`crate::Graph`] and
//! evaluated by [`crate::Op::Spline`].
//!
//! A table has `m ≥ 1` strictly increasing finite knots and `m + 1` pieces: piece 0
//! covers `x < knots[0]`, piece `i` (`1 ≤ i < m`) covers `knots[i-1] ≤ x < knots[i]`,
//! piece `m` covers `x ≥ knots[m-1]`. Piece `i` is the cubic
//! `c0 + c1·dx + c2·dx² + c3·dx³` with `dx = x − base_i`. How the pieces were obtained
//! (Akima, clamped cubic, extrapolation rule) is the caller's business.
//!
//! Evaluation is defined here once, operation for operation, so that the interpreter
//! and generated code agree bit for bit: the piece is found by [`search_steps`] (a
//! branch-free binary search with a step sequence fixed by `m`), then the `deriv`-th
//! derivative's coefficients ([`SplineTable::coefficients`], computed at build time)
//! are evaluated by Horner's rule from the highest coefficient down.

/// A piecewise cubic; see the module documentation.
#[derive(Clone, Debug)]
pub struct SplineTable {
    knots: Vec<f64>,
    /// `[base, c0, c1, c2, c3]` per piece.
    pieces: Vec<[f64; 5]>,
}

/// The highest derivative that is not identically zero.
pub const MAX_DERIV: u8 = 3;

impl SplineTable {
    /// A table from its knots and pieces; an error if the knots are not finite and
    /// strictly increasing, there is not one piece more than knots, or a piece holds a
    /// non-finite number.
    pub fn new(knots: Vec<f64>, pieces: Vec<[f64; 5]>) -> Result<Self, String> {
        if knots.is_empty() {
            return Err("a spline table needs at least one knot".into());
        }
        if let Some(x) = knots.iter().find(|x| !x.is_finite()) {
            return Err(format!("knot {x} is not finite"));
        }
        if let Some(w) = knots.windows(2).find(|w| w[0] >= w[1]) {
            return Err(format!("knots {} and {} are not increasing", w[0], w[1]));
        }
        if pieces.len() != knots.len() + 1 {
            return Err(format!(
                "{} knots need {} pieces, found {}",
                knots.len(),
                knots.len() + 1,
                pieces.len()
            ));
        }
        if pieces.iter().flatten().any(|c| !c.is_finite()) {
            return Err("a spline piece has a non-finite coefficient".into());
        }
        Ok(SplineTable { knots, pieces })
    }

    /// The C¹ piecewise cubic Hermite interpolant of the points `(xs[i], ys[i])` with
    /// slopes `ds[i]`, continued left of `xs[0]` and right of the last point by the
    /// straight line with the end slope (so value and slope stay continuous there).
    pub fn hermite(xs: &[f64], ys: &[f64], ds: &[f64]) -> Result<Self, String> {
        let n = xs.len();
        if n < 2 || ys.len() != n || ds.len() != n {
            return Err(
                "a Hermite spline needs at least 2 points with one y and slope each".into(),
            );
        }
        let mut pieces = Vec::with_capacity(n + 1);
        pieces.push([xs[0], ys[0], ds[0], 0.0, 0.0]);
        for i in 0..n - 1 {
            let h = xs[i + 1] - xs[i];
            let delta = (ys[i + 1] - ys[i]) / h;
            let (d0, d1) = (ds[i], ds[i + 1]);
            let c2 = (3.0 * delta - 2.0 * d0 - d1) / h;
            let c3 = (d0 + d1 - 2.0 * delta) / (h * h);
            pieces.push([xs[i], ys[i], d0, c2, c3]);
        }
        pieces.push([xs[n - 1], ys[n - 1], ds[n - 1], 0.0, 0.0]);
        SplineTable::new(xs.to_vec(), pieces)
    }

    pub fn knots(&self) -> &[f64] {
        &self.knots
    }

    /// `[base, c0, c1, c2, c3]` per piece.
    pub fn pieces(&self) -> &[[f64; 5]] {
        &self.pieces
    }

    /// Per piece, `base` followed by the Horner coefficients (lowest power first) of
    /// the `deriv`-th derivative: `4 − deriv` of them. Empty for `deriv > 3`.
    pub fn coefficients(&self, deriv: u8) -> Vec<Vec<f64>> {
        (0..self.pieces.len())
            .map(|k| {
                let (c, n) = self.piece_coefficients(k, deriv);
                c[..n].to_vec()
            })
            .collect()
    }

    /// [`Self::coefficients`] of one piece, without allocating: the array and how many
    /// of its entries are used.
    fn piece_coefficients(&self, piece: usize, deriv: u8) -> ([f64; 5], usize) {
        let [b, c0, c1, c2, c3] = self.pieces[piece];
        match deriv {
            0 => ([b, c0, c1, c2, c3], 5),
            1 => ([b, c1, 2.0 * c2, 3.0 * c3, 0.0], 4),
            2 => ([b, 2.0 * c2, 6.0 * c3, 0.0, 0.0], 3),
            3 => ([b, 6.0 * c3, 0.0, 0.0, 0.0], 2),
            _ => ([0.0; 5], 0),
        }
    }

    /// The piece `x` falls in: the number of knots `≤ x` (0 for NaN), found by the
    /// steps of [`search_steps`].
    pub fn piece_index(&self, x: f64) -> usize {
        let mut base = 0;
        for half in search_steps(self.knots.len()) {
            // `x >= knot` is false for NaN: a NaN stays in piece 0 and gives NaN.
            if x >= self.knots[base + half] {
                base += half;
            }
        }
        base + usize::from(x >= self.knots[base])
    }

    /// The `deriv`-th derivative at `x`, exactly as generated code computes it.
    pub fn eval(&self, deriv: u8, x: f64) -> f64 {
        if deriv > MAX_DERIV {
            return 0.0;
        }
        let (c, n) = self.piece_coefficients(self.piece_index(x), deriv);
        horner(&c[1..n], x - c[0])
    }

    /// True if both tables hold the same bits (the identity hash-consing uses).
    pub fn same_bits(&self, other: &SplineTable) -> bool {
        let bits = |t: &SplineTable| -> Vec<u64> { t.words().collect() };
        self.knots.len() == other.knots.len() && bits(self) == bits(other)
    }

    /// Every number of the table, knots first, as bits: what identifies it.
    pub fn words(&self) -> impl Iterator<Item = u64> + '_ {
        let n = self.knots.len() as u64;
        std::iter::once(n)
            .chain(self.knots.iter().map(|x| x.to_bits()))
            .chain(self.pieces.iter().flatten().map(|x| x.to_bits()))
    }

    /// A stable 64-bit fingerprint of the contents (FNV-1a over [`Self::words`]), for
    /// the printed text form. Not an identity: hash-consing compares the contents.
    pub fn fingerprint(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for w in self.words() {
            for b in w.to_le_bytes() {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
        h
    }
}

/// `c[0] + dx·(c[1] + dx·(c[2] + …))`, evaluated from the highest coefficient down.
pub fn horner(c: &[f64], dx: f64) -> f64 {
    let mut r = c[c.len() - 1];
    for &a in c[..c.len() - 1].iter().rev() {
        r = a + dx * r;
    }
    r
}

/// The branch-free search over `m` sorted knots: starting from `base = 0`, for each
/// `half` in the returned steps `base += half` if `x ≥ knots[base + half]`; the piece is
/// then `base + (x ≥ knots[base])`. The steps depend only on `m`, so generated code
/// unrolls them into selects.
pub fn search_steps(m: usize) -> Vec<usize> {
    let mut steps = Vec::new();
    let mut n = m;
    while n > 1 {
        let half = n / 2;
        steps.push(half);
        n -= half;
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn piece_index_counts_knots_at_or_below_x() {
        for m in 1..12 {
            let knots: Vec<f64> = (0..m).map(|i| i as f64 * 1.5 - 2.0).collect();
            let pieces = vec![[0.0; 5]; m + 1];
            let t = SplineTable::new(knots.clone(), pieces).unwrap();
            for k in -10..40 {
                let x = k as f64 * 0.375 - 3.0;
                let want = knots.iter().filter(|&&kn| kn <= x).count();
                assert_eq!(t.piece_index(x), want, "m {m}, x {x}");
            }
            assert_eq!(t.piece_index(f64::NAN), 0);
            assert_eq!(t.piece_index(f64::INFINITY), m);
        }
    }

    #[test]
    fn hermite_pieces_match_values_and_slopes_at_both_ends() {
        let xs = [0.0, 1.0, 3.0];
        let ys = [1.0, -2.0, 4.0];
        let ds = [0.5, 0.0, -1.0];
        let t = SplineTable::hermite(&xs, &ys, &ds).unwrap();
        for i in 0..3 {
            assert!((t.eval(0, xs[i]) - ys[i]).abs() < 1e-14);
            assert!((t.eval(1, xs[i]) - ds[i]).abs() < 1e-14);
            // Approached from the left piece too.
            if i > 0 {
                let p = t.pieces()[i];
                let dx = xs[i] - p[0];
                let left = p[1] + dx * (p[2] + dx * (p[3] + dx * p[4]));
                assert!((left - ys[i]).abs() < 1e-13);
            }
        }
        // Linear continuation outside.
        assert!((t.eval(0, -2.0) - (1.0 - 2.0 * 0.5)).abs() < 1e-15);
        assert!((t.eval(0, 5.0) - (4.0 - 2.0)).abs() < 1e-15);
        assert_eq!(t.eval(2, 5.0), 0.0);
        assert_eq!(t.eval(4, 0.5), 0.0);
    }

    #[test]
    fn the_simplifier_keeps_splines_opaque_and_the_printer_names_tables_by_contents() {
        use crate::{interp, print, simplify, Graph, Slot};
        let mut g = Graph::new();
        let a = SplineTable::hermite(&[0.0, 1.0], &[0.0, 1.0], &[0.0, 0.0]).unwrap();
        let b = SplineTable::hermite(&[0.0, 1.0], &[0.0, 2.0], &[0.0, 0.0]).unwrap();
        // An unrelated table first: the index of `a` is not 0.
        g.add_table(b.clone());
        let ta = g.add_table(a.clone());
        assert_eq!(g.add_table(a.clone()), ta, "equal contents are one table");
        let x = g.input(Slot::T, 0);
        let one = g.constant(1.0);
        let x1 = g.mul(x, one);
        let s = g.spline(ta, 1, x1);
        let half = g.constant(0.5);
        let c = g.spline(ta, 0, half);
        let out = g.add2(s, c);
        let simp = simplify::simplify(&g, &[out], &simplify::Limits::default());
        let empty: &[f64] = &[];
        for xv in [-1.0, 0.0, 0.25, 0.5, 1.0, 3.0] {
            let t = [xv];
            let inputs = [empty, empty, empty, empty, empty, empty, empty, &t[..]];
            let want = a.eval(1, xv) + a.eval(0, 0.5);
            let before = interp::eval(&g, &[out], &inputs).unwrap()[0];
            let after = interp::eval(&simp.graph, &simp.outputs, &inputs).unwrap()[0];
            assert_eq!(before.to_bits(), want.to_bits());
            assert_eq!(after.to_bits(), want.to_bits());
        }
        let text = print::print_outputs(&simp.graph, &simp.outputs);
        assert!(
            text.contains(&format!("spline d1 @{:016x}, t[0]", a.fingerprint())),
            "{text}"
        );
        assert_ne!(a.fingerprint(), b.fingerprint());
    }

    #[test]
    fn bad_tables_are_errors() {
        assert!(SplineTable::new(vec![], vec![[0.0; 5]]).is_err());
        assert!(SplineTable::new(vec![1.0, 1.0], vec![[0.0; 5]; 3]).is_err());
        assert!(SplineTable::new(vec![1.0, f64::NAN], vec![[0.0; 5]; 3]).is_err());
        assert!(SplineTable::new(vec![1.0, 2.0], vec![[0.0; 5]; 2]).is_err());
        assert!(SplineTable::hermite(&[0.0], &[1.0], &[0.0]).is_err());
    }
}
