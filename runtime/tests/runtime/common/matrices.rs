//! Iteration matrices with the structure of multibody models, for the LU tests and the
//! factorization benchmark: unknowns `[v; λ]` in model order, 6 velocity unknowns per
//! body with a dense 6×6 block (mass, gyroscopic and h²β-stiffness terms), a 6×6
//! coupling block per spring-damper between neighbours, and per joint constraint
//! rows B over the 12 (or 6, to the ground) velocity columns of its bodies with the
//! transposed block `Bᵀ + δ` (the derivative of Bᵀλ makes it unsymmetric) and a zero
//! diagonal for λ. The numbers are pseudo-random and O(1), as in the runtime's scaled
//! iteration matrix.

#![allow(dead_code)]

use fdc_runtime::assembly::Pattern;

/// A joint: its bodies (`None` is the ground) and its number of constraint rows.
pub struct Joint {
    pub a: Option<usize>,
    pub b: usize,
    pub rows: usize,
}

/// A deterministic pseudo-random sequence in [-1, 1).
pub fn lcg(seed: &mut u64) -> f64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    ((*seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
}

/// An N-link revolute chain (5 rows per joint, the first to the ground) with a
/// spring-damper along each link.
pub fn chain_joints(n: usize) -> Vec<Joint> {
    (0..n)
        .map(|i| Joint {
            a: i.checked_sub(1),
            b: i,
            rows: 5,
        })
        .collect()
}

/// The chain closed into loops: every third body is also tied back to the body three
/// before it (planar four-bars in a row; a ladder of closed loops).
pub fn loop_joints(n: usize) -> Vec<Joint> {
    let mut joints = chain_joints(n);
    joints.extend((3..n).step_by(3).map(|i| Joint {
        a: Some(i - 3),
        b: i,
        rows: 2,
    }));
    joints
}

/// Pattern and values of the iteration matrix of `bodies` bodies and these joints;
/// `seed` varies the numbers. Spring-dampers couple bodies i-1 and i.
pub fn iteration_matrix(bodies: usize, joints: &[Joint], seed: u64) -> (Pattern, Vec<f64>) {
    let nv = 6 * bodies;
    let nl: usize = joints.iter().map(|j| j.rows).sum();
    let mut seed = seed;
    let mut t = Triplets::default();
    for b in 0..bodies {
        for i in 0..6 {
            for j in 0..6 {
                let d = if i == j {
                    2.0 + 0.5 * (i % 3) as f64
                } else {
                    0.0
                };
                t.push(6 * b + i, 6 * b + j, d + 0.1 * lcg(&mut seed));
            }
        }
        if b > 0 {
            for i in 0..6 {
                for j in 0..6 {
                    t.push(6 * b + i, 6 * (b - 1) + j, 0.05 * lcg(&mut seed));
                    t.push(6 * (b - 1) + i, 6 * b + j, 0.05 * lcg(&mut seed));
                }
            }
        }
    }
    let mut row = nv;
    for joint in joints {
        let cols: Vec<usize> = joint
            .a
            .into_iter()
            .chain([joint.b])
            .flat_map(|body| 6 * body..6 * body + 6)
            .collect();
        for _ in 0..joint.rows {
            for &c in &cols {
                let v = lcg(&mut seed);
                t.pair(row, c, v, &mut seed);
            }
            row += 1;
        }
    }
    t.assembled(nv + nl)
}

/// Holds the multipliers `rows` (indices among the λ, after `nv` velocity unknowns) at
/// zero as the runtime does with redundant constraint rows: their row and column keep
/// their place in the pattern with zero values, and the diagonal is one.
pub fn remove_rows(pattern: &Pattern, values: &mut [f64], nv: usize, rows: &[usize]) {
    let removed = |i: usize| i >= nv && rows.contains(&(i - nv));
    for j in 0..pattern.n {
        let (a, b) = (pattern.col_ptr[j], pattern.col_ptr[j + 1]);
        for (v, &i) in values[a..b].iter_mut().zip(&pattern.row_idx[a..b]) {
            if removed(i) || removed(j) {
                *v = if i == j { 1.0 } else { 0.0 };
            }
        }
    }
}

/// A vehicle-like mechanism: a free chassis (body 0) and four corners of double
/// wishbones, each an upper and a lower arm hinged to the chassis (5 rows each), an
/// upright on both arms (ball joints, 3 rows each: a closed loop per corner) and a
/// wheel hinged to the upright. Returns the number of bodies and the joints.
pub fn vehicle_joints() -> (usize, Vec<Joint>) {
    let mut joints = vec![];
    for corner in 0..4 {
        let (upper, lower, upright, wheel) = (
            1 + 4 * corner,
            2 + 4 * corner,
            3 + 4 * corner,
            4 + 4 * corner,
        );
        for (a, b, rows) in [
            (0, upper, 5),
            (0, lower, 5),
            (upper, upright, 3),
            (lower, upright, 3),
            (upright, wheel, 5),
        ] {
            joints.push(Joint {
                a: Some(a),
                b,
                rows,
            });
        }
    }
    (17, joints)
}

/// A random sparse n × n matrix: the diagonal and `per_column` entries per column at
/// pseudo-random rows, values in [-1, 1) with the diagonal shifted by `shift` (so that
/// the kept pivot order stays acceptable for small changes of the values).
pub fn random_matrix(n: usize, per_column: usize, shift: f64, seed: u64) -> (Pattern, Vec<f64>) {
    let mut seed = seed;
    let mut entries = vec![];
    for j in 0..n {
        for _ in 0..per_column {
            let i = ((lcg(&mut seed) + 1.0) * 0.5 * n as f64) as usize % n;
            entries.push((i, j));
        }
    }
    let (pattern, _) = Pattern::build(n, &entries);
    let values = (0..pattern.n)
        .flat_map(|j| (pattern.col_ptr[j]..pattern.col_ptr[j + 1]).map(move |k| (j, k)))
        .map(|(j, k)| lcg(&mut seed) + if pattern.row_idx[k] == j { shift } else { 0.0 })
        .collect();
    (pattern, values)
}

/// The iteration matrix of the peers' benchmark chain (`bench/peers`): N rods hanging
/// from revolute joints, no spring-dampers. Each body's translations have a diagonal
/// block (mass), its rotations a dense 3×3 one (inertia, gyroscopic terms); a joint's
/// three position rows reach both bodies' translations (±1) and rotations (lever
/// arms), its two orientation rows the rotations only, with the transposed blocks as
/// in [`iteration_matrix`]. The first joint holds body 0 to the ground. With the
/// pivots on the diagonal its supernodes are narrow (a body's translations,
/// rotations and joint rows apart). Without `coupled` the translations' block is
/// diagonal, and the diagonal order costs about twice partial pivoting's
/// multiply-adds (so `SparseLu` declines it); with `coupled` a body's translations and
/// rotations are coupled both ways, as in the compiled chain's matrix, and the
/// diagonal order costs less (0.78 of partial pivoting's at 24 rods; the compiled
/// 64-rod chain's 0.50).
pub fn rod_chain_matrix(bodies: usize, seed: u64, coupled: bool) -> (Pattern, Vec<f64>) {
    let nv = 6 * bodies;
    let mut seed = seed;
    let mut t = Triplets::default();
    for b in 0..bodies {
        for i in 0..3 {
            t.push(6 * b + i, 6 * b + i, 2.0 + 0.1 * lcg(&mut seed));
            for j in 3..6 {
                let d = if i + 3 == j { 1.5 } else { 0.0 };
                t.push(6 * b + i + 3, 6 * b + j, d + 0.1 * lcg(&mut seed));
                if coupled {
                    t.push(6 * b + i, 6 * b + j, 0.1 * lcg(&mut seed));
                    t.push(6 * b + j, 6 * b + i, 0.1 * lcg(&mut seed));
                }
            }
        }
    }
    for joint in 0..bodies {
        let row = nv + 5 * joint;
        let bodies = joint.checked_sub(1).into_iter().chain([joint]);
        for (side, body) in bodies.enumerate() {
            let sign = if side == 0 && joint > 0 { -1.0 } else { 1.0 };
            for i in 0..3 {
                t.pair(row + i, 6 * body + i, sign, &mut seed);
                for j in 3..6 {
                    t.pair(row + i, 6 * body + j, 0.25 * lcg(&mut seed), &mut seed);
                }
            }
            for i in 3..5 {
                for j in 3..6 {
                    t.pair(row + i, 6 * body + j, lcg(&mut seed), &mut seed);
                }
            }
        }
    }
    t.assembled(nv + 5 * bodies)
}

/// Matrix entries and their values, in the order they were pushed.
#[derive(Default)]
struct Triplets {
    entries: Vec<(usize, usize)>,
    vals: Vec<f64>,
}

impl Triplets {
    fn push(&mut self, r: usize, c: usize, v: f64) {
        self.entries.push((r, c));
        self.vals.push(v);
    }

    /// A constraint entry (r, c) = v and its transpose (c, r), perturbed by
    /// 0.01 · lcg so that the matrix is not symmetric.
    fn pair(&mut self, r: usize, c: usize, v: f64, seed: &mut u64) {
        self.push(r, c, v);
        self.push(c, r, v + 0.01 * lcg(seed));
    }

    /// The `n × n` pattern of the entries (duplicates summed) and the values in its
    /// order.
    fn assembled(&self, n: usize) -> (Pattern, Vec<f64>) {
        let (pattern, map) = Pattern::build(n, &self.entries);
        let mut values = vec![0.0; pattern.nnz()];
        for (k, &m) in map.iter().enumerate() {
            values[m] += self.vals[k];
        }
        (pattern, values)
    }
}
