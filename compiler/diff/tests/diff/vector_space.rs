//! A vector-space element (theory 3.1): the rigid body with Euler parameters, from its
//! kinetic and potential energy, against closed forms and central differences of the
//! discrete residual with the update q = q_n + Δ.

// Index loops read like the formulas they check.
#![allow(clippy::needless_range_loop)]

use crate::common;

use common::{assert_rel, blocks, euler_body, eval, random_quat, rng, uniform, State};
use fdc_diff::{Coordinates, ElementBuilder, ElementFunctions, Role};
use fdc_ir::Graph;
use nalgebra::{Matrix3, Matrix3x4, Vector3, Vector4};

const TOL: f64 = 1e-6;

fn gbar(t: &[f64]) -> Matrix3x4<f64> {
    Matrix3x4::new(
        -t[1], t[0], t[3], -t[2], //
        -t[2], -t[3], t[0], t[1], //
        -t[3], t[2], -t[1], t[0],
    )
}

const M: f64 = 1.7;
const J: [f64; 3] = [0.4, 0.6, 0.9];

fn state(r: &mut rand::rngs::StdRng, ef: &ElementFunctions, tangent: bool) -> State {
    let mut p = vec![M, J[0], J[1], J[2], 0.0, -9.81, 0.0];
    p.extend(uniform(r, 14, -1.0, 1.0));
    let mut q = uniform(r, 3, -1.0, 1.0);
    let th = random_quat(r);
    q.extend(th);
    let mut v = uniform(r, 7, -1.0, 1.0);
    if tangent {
        // θ·θ̇ = 0: the velocity of a motion on the unit sphere.
        let d: f64 = (0..4).map(|k| th[k] * v[3 + k]).sum();
        for k in 0..4 {
            v[3 + k] -= d * th[k];
        }
    }
    State {
        q,
        v,
        vdot: uniform(r, 7, -1.0, 1.0),
        lambda: uniform(r, ef.nl, -1.0, 1.0),
        p,
        c: vec![-0.2, 0.36, 0.7, 0.8],
        delta: uniform(r, 7, -0.1, 0.1),
        t: 0.3,
    }
}

/// q = q_n + Δ_pred + β′h² v̇, v = v_pred + γ′h v̇ (theory 7.2/7.3 for vector spaces).
fn discrete(base: &State, x: &[f64]) -> State {
    let (b, gam, h) = (base.c[1], base.c[2], base.c[3]);
    let mut s = base.clone();
    s.vdot = x[..7].to_vec();
    s.lambda = x[7..].to_vec();
    s.delta = (0..7).map(|i| base.delta[i] + b * h * h * x[i]).collect();
    s.q = (0..7).map(|i| base.q[i] + s.delta[i]).collect();
    s.v = (0..7).map(|i| base.v[i] + gam * h * x[i]).collect();
    s
}

/// The gyroscopic vector h(q, q̇) of the element: −(Q − h) + [m g; 0].
fn h_vec(g: &Graph, ef: &ElementFunctions, s: &State) -> Vec<f64> {
    let ic = blocks(ef, Role::Ic, &eval(g, ef, Role::Ic, s));
    (0..7)
        .map(|i| -ic[2][i] + if i < 3 { M * s.p[4 + i] } else { 0.0 })
        .collect()
}

#[test]
fn mass_matrix_constraint_and_initial_conditions() {
    let mut g = Graph::new();
    let ef = euler_body(&mut g);
    assert_eq!((ef.nq, ef.nv, ef.nl), (7, 7, 1));
    assert!(ef.owns_coordinates);
    let mut r = rng(31);
    for _ in 0..3 {
        let s = state(&mut r, &ef, false);
        let ic = blocks(&ef, Role::Ic, &eval(&g, &ef, Role::Ic, &s));
        // M = diag(m I, 4 ḠᵀJ̄Ḡ).
        let gb = gbar(&s.q[3..7]);
        let jm = Matrix3::from_diagonal(&Vector3::from(J));
        let mt = gb.transpose() * jm * gb * 4.0;
        let mut want = vec![0.0; 49];
        for i in 0..3 {
            want[i * 8] = M;
        }
        for i in 0..4 {
            for j in 0..4 {
                want[(3 + i) * 7 + 3 + j] = mt[(i, j)];
            }
        }
        assert_rel(&ic[0], &want, 1e-14, "M");
        // B = [0, 2θᵀ], Φ_t = 0, acceleration rhs −2 θ̇·θ̇.
        let mut b = vec![0.0; 7];
        for k in 0..4 {
            b[3 + k] = 2.0 * s.q[3 + k];
        }
        assert_rel(&ic[1], &b, 1e-15, "B");
        assert_eq!(ic[4], vec![0.0]);
        let tdot2: f64 = (3..7).map(|k| s.v[k] * s.v[k]).sum();
        assert_rel(&ic[5], &[-2.0 * tdot2], 1e-14, "acceleration rhs");
    }
}

/// On |θ| = 1, θ·θ̇ = 0 the Lagrange form of h agrees with the legacy form
/// 2Ḡᵀ(ω̄ × J̄ω̄) up to a component along θ (theory 3.3).
#[test]
fn lagrange_h_agrees_with_legacy_form_on_the_manifold() {
    let mut g = Graph::new();
    let ef = euler_body(&mut g);
    let mut r = rng(32);
    for _ in 0..5 {
        let s = state(&mut r, &ef, true);
        let h = h_vec(&g, &ef, &s);
        assert_rel(&h[..3], &[0.0; 3], 1e-14, "no translational h");
        let th = Vector4::new(s.q[3], s.q[4], s.q[5], s.q[6]);
        let gb = gbar(&s.q[3..7]);
        let w = gb * Vector4::new(s.v[3], s.v[4], s.v[5], s.v[6]) * 2.0;
        let jw = Vector3::new(J[0] * w[0], J[1] * w[1], J[2] * w[2]);
        let legacy = gb.transpose() * w.cross(&jw) * 2.0;
        let d = Vector4::new(h[3], h[4], h[5], h[6]) - legacy;
        let off = d - th * th.dot(&d);
        assert!(off.norm() < 1e-12 * legacy.norm().max(1.0), "{off:?}");
        // The ω̄ output is 2Ḡθ̇.
        let out = eval(&g, &ef, Role::Out, &s);
        assert_rel(&out, w.as_slice(), 1e-14, "omega_body");
    }
}

#[test]
fn iteration_matrices_against_differences() {
    let mut g = Graph::new();
    let ef = euler_body(&mut g);
    let mut r = rng(33);
    let n = 8;
    for _ in 0..3 {
        let base = state(&mut r, &ef, false);
        let x = uniform(&mut r, n, -1.0, 1.0);
        let s = discrete(&base, &x);
        let j = blocks(&ef, Role::Iter, &eval(&g, &ef, Role::Iter, &s)).remove(0);
        let jn = blocks(&ef, Role::IterNoqv, &eval(&g, &ef, Role::IterNoqv, &s)).remove(0);
        let eps = 1e-5;
        let mut fd = vec![0.0; n * n];
        let mut fd_h = vec![0.0; n * n];
        for col in 0..n {
            let mut xp = x.clone();
            xp[col] += eps;
            let sp = discrete(&base, &xp);
            xp[col] -= 2.0 * eps;
            let sm = discrete(&base, &xp);
            let rp = eval(&g, &ef, Role::Res, &sp);
            let rm = eval(&g, &ef, Role::Res, &sm);
            let (hp, hm) = (h_vec(&g, &ef, &sp), h_vec(&g, &ef, &sm));
            for row in 0..n {
                fd[row * n + col] = (rp[row] - rm[row]) / (2.0 * eps);
                if row < 7 {
                    fd_h[row * n + col] = (hp[row] - hm[row]) / (2.0 * eps);
                }
            }
        }
        assert_rel(&j, &fd, TOL, "iter");
        // iter − iter_noqv is the derivative of h along the discrete state.
        let diff: Vec<f64> = j.iter().zip(&jn).map(|(a, b)| a - b).collect();
        assert_rel(&diff, &fd_h, TOL, "iter − iter_noqv");
    }
}

#[test]
fn init_update_scale() {
    let mut g = Graph::new();
    let ef = euler_body(&mut g);
    let mut r = rng(34);
    let s = state(&mut r, &ef, false);
    assert_eq!(eval(&g, &ef, Role::Init, &s), s.p[7..21].to_vec());
    let up = eval(&g, &ef, Role::Update, &s);
    let want: Vec<f64> = (0..7).map(|i| s.q[i] + s.delta[i]).collect();
    assert_eq!(up, want);
    let sc = eval(&g, &ef, Role::Scale, &s);
    assert_eq!(sc, s.q.iter().map(|x| x.abs()).collect::<Vec<f64>>());
}

#[test]
fn vector_space_misuse_is_an_error() {
    let mut g = Graph::new();
    let mut eb = ElementBuilder::new(&mut g, "v", Coordinates::VectorSpace, 2, 0);
    let _ = eb.coordinate(2);
    assert!(eb.finish().unwrap_err().message.contains("coordinate 2"));
    let mut eb = ElementBuilder::new(&mut g, "v", Coordinates::VectorSpace, 2, 0);
    let _ = eb.body(0);
    assert!(eb.finish().unwrap_err().message.contains("not bodies"));
    let eb = ElementBuilder::new(&mut g, "v", Coordinates::VectorSpace, 2, 0);
    assert!(eb.finish().unwrap_err().message.contains("vector_initial"));
    let mut eb = ElementBuilder::new(&mut g, "c", Coordinates::Connector, 1, 0);
    let x = eb.graph().constant(1.0);
    eb.lagrangian(x, x);
    assert!(eb.finish().unwrap_err().message.contains("vector-space"));
}
