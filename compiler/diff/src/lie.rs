//! The Lie group R³ × SO(3) of a rigid body: Shabana's rotation matrix of a unit
//! quaternion, the Hamilton product, the quaternion exponential and the tangent
//! operator T_SO(3) (theory 3.2, 4.2, 7.3). Each function exists twice: as an IR
//! builder (what the generated code computes) and in `f64` (for tests and for callers
//! that need a value).
//!
//! Quaternions are scalar first, `[w, x, y, z]`.

use fdc_ir::{Cmp, Graph, Id, M3, V3};

/// An IR quaternion, scalar first.
pub type Quat = [Id; 4];

/// Below this rotation angle (rad) the exponential and the tangent operator use their
/// Taylor series instead of the closed forms, which lose digits to cancellation.
pub const TAYLOR_THRESHOLD: f64 = 1e-4;

/// Shabana (2005) Eq. 2.13: the rotation matrix (body to global) of a unit quaternion.
pub fn shabana(g: &mut Graph, th: Quat) -> M3 {
    let one = g.constant(1.0);
    let two = g.constant(2.0);
    let sq = th.map(|x| g.powi(x, 2));
    let mut prod = |i: usize, j: usize| g.mul(th[i], th[j]);
    let p12 = prod(1, 2);
    let p03 = prod(0, 3);
    let p13 = prod(1, 3);
    let p02 = prod(0, 2);
    let p23 = prod(2, 3);
    let p01 = prod(0, 1);
    // 1 − 2(a + b)
    let mut diag = |a: Id, b: Id| {
        let s = g.add2(a, b);
        let t = g.mul(two, s);
        g.sub(one, t)
    };
    let d0 = diag(sq[2], sq[3]);
    let d1 = diag(sq[1], sq[3]);
    let d2 = diag(sq[1], sq[2]);
    // 2(a ± b)
    let mut off = |a: Id, b: Id, plus: bool| {
        let s = if plus { g.add2(a, b) } else { g.sub(a, b) };
        g.mul(two, s)
    };
    [
        [d0, off(p12, p03, false), off(p13, p02, true)],
        [off(p12, p03, true), d1, off(p23, p01, false)],
        [off(p13, p02, false), off(p23, p01, true), d2],
    ]
}

/// The Hamilton product p∘q, so that A(p∘q) = A(p) A(q).
pub fn hamilton(g: &mut Graph, p: Quat, q: Quat) -> Quat {
    let pv = [p[1], p[2], p[3]];
    let qv = [q[1], q[2], q[3]];
    let p0q0 = g.mul(p[0], q[0]);
    let pq = g.dot(pv, qv);
    let w = g.sub(p0q0, pq);
    let a = g.v3_scale(p[0], qv);
    let b = g.v3_scale(q[0], pv);
    let c = g.cross(pv, qv);
    let ab = g.v3_add(a, b);
    let v = g.v3_add(ab, c);
    [w, v[0], v[1], v[2]]
}

/// exp_H(ψ) = [cos(φ/2); sin(φ/2)/φ ψ], φ = |ψ|, with sin(φ/2)/φ = 1/2 − φ²/48 + O(φ⁴)
/// below [`TAYLOR_THRESHOLD`] (the dropped term is below 1e-19 relative there).
pub fn exp_quat(g: &mut Graph, psi: V3) -> Quat {
    let phi2 = g.dot(psi, psi);
    let phi = g.sqrt(phi2);
    let half_c = g.constant(0.5);
    let half = g.mul(half_c, phi);
    let w = g.cos(half);
    let s = g.sin(half);
    let closed = g.div(s, phi);
    let c48 = g.constant(48.0);
    let t = g.div(phi2, c48);
    let taylor = g.sub(half_c, t);
    let thr = g.constant(TAYLOR_THRESHOLD * TAYLOR_THRESHOLD);
    let k = g.select(Cmp::Lt, phi2, thr, taylor, closed);
    let v = g.v3_scale(k, psi);
    [w, v[0], v[1], v[2]]
}

/// The tangent operator T_SO(3)(ψ) = I − (1 − cos φ)/φ² ψ̃ + (φ − sin φ)/φ³ ψ̃²
/// (theory 4.2): exp(ψ + dψ) = exp(ψ) exp(T(ψ) dψ) to first order. Written with
/// ψ̃² = ψψᵀ − φ² I and 1 − cos φ = 2 sin²(φ/2) to avoid cancellation; below
/// [`TAYLOR_THRESHOLD`] the coefficients are 1/2 − φ²/24 and 1/6 − φ²/120.
pub fn tangent_so3(g: &mut Graph, psi: V3) -> M3 {
    let phi2 = g.dot(psi, psi);
    let phi = g.sqrt(phi2);
    let half_c = g.constant(0.5);
    let two = g.constant(2.0);
    let one = g.constant(1.0);
    // a = 2 sin²(φ/2)/φ²
    let half = g.mul(half_c, phi);
    let sh = g.sin(half);
    let sh2 = g.powi(sh, 2);
    let num_a = g.mul(two, sh2);
    let a_closed = g.div(num_a, phi2);
    let c24 = g.constant(24.0);
    let ta = g.div(phi2, c24);
    let a_taylor = g.sub(half_c, ta);
    // b = (φ − sin φ)/φ³
    let sphi = g.sin(phi);
    let num_b = g.sub(phi, sphi);
    let phi3 = g.mul(phi, phi2);
    let b_closed = g.div(num_b, phi3);
    let sixth = g.constant(1.0 / 6.0);
    let c120 = g.constant(120.0);
    let tb = g.div(phi2, c120);
    let b_taylor = g.sub(sixth, tb);
    let thr = g.constant(TAYLOR_THRESHOLD * TAYLOR_THRESHOLD);
    let a = g.select(Cmp::Lt, phi2, thr, a_taylor, a_closed);
    let b = g.select(Cmp::Lt, phi2, thr, b_taylor, b_closed);
    // The same products as in φ² = ψ·ψ, so they are shared.
    let sq = psi.map(|x| g.mul(x, x));
    let mut diag = |j: usize, k: usize| {
        let s = g.add2(sq[j], sq[k]);
        let t = g.mul(b, s);
        g.sub(one, t)
    };
    let d = [diag(1, 2), diag(0, 2), diag(0, 1)];
    // Off-diagonal (i, j), i ≠ j: b ψ_i ψ_j − a ψ̃_ij, with ψ̃_ij = ∓ψ_k.
    let mut off = |i: usize, j: usize, k: usize, plus: bool| {
        let pij = g.mul(psi[i], psi[j]);
        let bp = g.mul(b, pij);
        let ak = g.mul(a, psi[k]);
        if plus {
            g.add2(bp, ak)
        } else {
            g.sub(bp, ak)
        }
    };
    // ψ̃ = [[0, −z, y], [z, 0, −x], [−y, x, 0]]
    [
        [d[0], off(0, 1, 2, true), off(0, 2, 1, false)],
        [off(1, 0, 2, false), d[1], off(1, 2, 0, true)],
        [off(2, 0, 1, true), off(2, 1, 0, false), d[2]],
    ]
}

/// q / |q|.
pub fn normalize(g: &mut Graph, q: Quat) -> Quat {
    let sq = q.map(|x| g.powi(x, 2));
    let s01 = g.add2(sq[0], sq[1]);
    let s23 = g.add2(sq[2], sq[3]);
    let s = g.add2(s01, s23);
    let n = g.sqrt(s);
    q.map(|x| g.div(x, n))
}

/// Ḡ(θ) of theory 3.3 as (sign, index of θ) per entry: row i, column l.
/// Ḡ = [−θ_v, θ₀I − θ̃_v], so that 2Ḡθ̇ = ω̄ for a unit θ.
const GBAR: [[(bool, usize); 4]; 3] = [
    [(false, 1), (true, 0), (true, 3), (false, 2)],
    [(false, 2), (false, 3), (true, 0), (true, 1)],
    [(false, 3), (true, 2), (false, 1), (true, 0)],
];

/// 2Ḡ(θ) x for a 4-vector x (the body angular velocity of Euler parameters for x = θ̇).
pub fn two_gbar(g: &mut Graph, th: Quat, x: Quat) -> V3 {
    let two = g.constant(2.0);
    GBAR.map(|row| {
        let (mut pos, mut neg) = (Vec::new(), Vec::new());
        for (l, (plus, c)) in row.into_iter().enumerate() {
            let t = g.mul(th[c], x[l]);
            if plus {
                pos.push(t)
            } else {
                neg.push(t)
            }
        }
        let p = g.sum(&pos).expect("two positive terms per row");
        let n = g.sum(&neg).expect("two negative terms per row");
        let d = g.sub(p, n);
        g.mul(two, d)
    })
}

/// 2Ḡ(θ)ᵀ w for a 3-vector w (a body torque as a generalized force on θ).
pub fn two_gbar_t(g: &mut Graph, th: Quat, w: V3) -> Quat {
    let two = g.constant(2.0);
    [0, 1, 2, 3].map(|l| {
        let (mut pos, mut neg) = (Vec::new(), Vec::new());
        for (i, row) in GBAR.iter().enumerate() {
            let (plus, c) = row[l];
            let t = g.mul(th[c], w[i]);
            if plus {
                pos.push(t)
            } else {
                neg.push(t)
            }
        }
        let p = g.sum(&pos);
        let n = g.sum(&neg);
        let d = match (p, n) {
            (Some(p), Some(n)) => g.sub(p, n),
            (Some(p), None) => p,
            (None, Some(n)) => g.neg(n),
            (None, None) => g.constant(0.0),
        };
        g.mul(two, d)
    })
}

/// `f64` mirrors of the builders above, for tests and constant folding by callers.
pub mod num {
    use super::TAYLOR_THRESHOLD;

    pub fn shabana(t: [f64; 4]) -> [[f64; 3]; 3] {
        let [t0, t1, t2, t3] = t;
        [
            [
                1.0 - 2.0 * (t2 * t2 + t3 * t3),
                2.0 * (t1 * t2 - t0 * t3),
                2.0 * (t1 * t3 + t0 * t2),
            ],
            [
                2.0 * (t1 * t2 + t0 * t3),
                1.0 - 2.0 * (t1 * t1 + t3 * t3),
                2.0 * (t2 * t3 - t0 * t1),
            ],
            [
                2.0 * (t1 * t3 - t0 * t2),
                2.0 * (t2 * t3 + t0 * t1),
                1.0 - 2.0 * (t1 * t1 + t2 * t2),
            ],
        ]
    }

    pub fn hamilton(p: [f64; 4], q: [f64; 4]) -> [f64; 4] {
        [
            p[0] * q[0] - p[1] * q[1] - p[2] * q[2] - p[3] * q[3],
            p[0] * q[1] + q[0] * p[1] + p[2] * q[3] - p[3] * q[2],
            p[0] * q[2] + q[0] * p[2] + p[3] * q[1] - p[1] * q[3],
            p[0] * q[3] + q[0] * p[3] + p[1] * q[2] - p[2] * q[1],
        ]
    }

    pub fn exp_quat(psi: [f64; 3]) -> [f64; 4] {
        let phi2 = psi[0] * psi[0] + psi[1] * psi[1] + psi[2] * psi[2];
        let phi = phi2.sqrt();
        let k = if phi2 < TAYLOR_THRESHOLD * TAYLOR_THRESHOLD {
            0.5 - phi2 / 48.0
        } else {
            (0.5 * phi).sin() / phi
        };
        [(0.5 * phi).cos(), k * psi[0], k * psi[1], k * psi[2]]
    }

    pub fn tangent_so3(psi: [f64; 3]) -> [[f64; 3]; 3] {
        let phi2 = psi[0] * psi[0] + psi[1] * psi[1] + psi[2] * psi[2];
        let phi = phi2.sqrt();
        let (a, b) = if phi2 < TAYLOR_THRESHOLD * TAYLOR_THRESHOLD {
            (0.5 - phi2 / 24.0, 1.0 / 6.0 - phi2 / 120.0)
        } else {
            let sh = (0.5 * phi).sin();
            (2.0 * sh * sh / phi2, (phi - phi.sin()) / (phi * phi2))
        };
        let [x, y, z] = psi;
        let sk = [[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]];
        let mut t = [[0.0; 3]; 3];
        for i in 0..3 {
            for j in 0..3 {
                let id = if i == j { 1.0 } else { 0.0 };
                let sq = psi[i] * psi[j] - if i == j { phi2 } else { 0.0 };
                t[i][j] = id - a * sk[i][j] + b * sq;
            }
        }
        t
    }
}
