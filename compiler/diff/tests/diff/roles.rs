//! Every role of every element type against independent references: central finite
//! differences on the group (q∘exp(δ) with nalgebra's quaternions), closed forms, and
//! nalgebra's rotation matrices.

// Index loops read like the formulas they check.
#![allow(clippy::needless_range_loop)]

use crate::common;

use common::*;
use fdc_diff::{Coordinates, ElementBuilder, ElementFunctions, Role};
use fdc_ir::Graph;
use nalgebra::{Matrix3, Vector3};
use rand::rngs::StdRng;

const TOL: f64 = 1e-6;

/// Parameters for the constraint elements, with c chosen so that Φ(q0) = 0.
pub(crate) fn consistent(g: &Graph, ef: &ElementFunctions, s: &mut State, c_at: &[usize]) {
    for &i in c_at {
        s.p[i] = 0.0;
    }
    let ic = blocks(ef, Role::Ic, &eval(g, ef, Role::Ic, s));
    for (row, &i) in c_at.iter().enumerate() {
        s.p[i] = ic[3][row];
    }
    let ic = blocks(ef, Role::Ic, &eval(g, ef, Role::Ic, s));
    assert!(ic[3].iter().all(|x| x.abs() < 1e-14), "Φ(q0) = {:?}", ic[3]);
}

/// B = ∂Φ/∂δ against central differences of Φ(q∘exp(±ε e_j)).
pub(crate) fn check_b(g: &Graph, ef: &ElementFunctions, s: &State) {
    let ic = blocks(ef, Role::Ic, &eval(g, ef, Role::Ic, s));
    let eps = 1e-6;
    let mut fd = vec![0.0; ef.nl * ef.nv];
    for j in 0..ef.nv {
        let mut d = vec![0.0; ef.nv];
        let mut at = |sign: f64| {
            d[j] = sign * eps;
            let mut sp = s.clone();
            sp.q = perturb(&s.q, &d);
            blocks(ef, Role::Ic, &eval(g, ef, Role::Ic, &sp))[3].clone()
        };
        let (p, m) = (at(1.0), at(-1.0));
        for i in 0..ef.nl {
            fd[i * ef.nv + j] = (p[i] - m[i]) / (2.0 * eps);
        }
    }
    assert_rel(&ic[1], &fd, TOL, &format!("{}: B", ef.name));
}

/// The state of the discrete equations for the unknowns x = [v̇; λ] (theory 7.4):
/// Δ = Δ_pred + β′h² v̇, q = q_n∘exp(Δ), v = v_pred + γ′h v̇.
pub(crate) fn discrete_state(base: &State, nv: usize, x: &[f64]) -> State {
    let (b, gam, h) = (base.c[1], base.c[2], base.c[3]);
    let mut s = base.clone();
    s.vdot = x[..nv].to_vec();
    s.lambda = x[nv..].to_vec();
    s.delta = (0..nv).map(|i| base.delta[i] + b * h * h * x[i]).collect();
    s.q = perturb(&base.q, &s.delta);
    s.v = (0..nv).map(|i| base.v[i] + gam * h * x[i]).collect();
    s
}

fn residual(g: &Graph, ef: &ElementFunctions, base: &State, x: &[f64]) -> Vec<f64> {
    let s = discrete_state(base, ef.nv, x);
    eval(g, ef, Role::Res, &s)[..ef.nv + ef.nl].to_vec()
}

/// `role` of `ef` against central differences of the discrete residual of `res_ef`
/// (the same element, or one without the terms whose derivatives `role` leaves out).
pub(crate) fn check_iter(
    g: &Graph,
    ef: &ElementFunctions,
    role: Role,
    res_ef: &ElementFunctions,
    base: &State,
    x: &[f64],
) {
    check_iter_eps(g, ef, role, res_ef, base, x, 1e-5)
}

pub(crate) fn check_iter_eps(
    g: &Graph,
    ef: &ElementFunctions,
    role: Role,
    res_ef: &ElementFunctions,
    base: &State,
    x: &[f64],
    eps: f64,
) {
    let n = ef.nv + ef.nl;
    let s = discrete_state(base, ef.nv, x);
    let j = blocks(ef, role, &eval(g, ef, role, &s)).remove(0);
    let mut fd = vec![0.0; n * n];
    for col in 0..n {
        let mut xp = x.to_vec();
        xp[col] += eps;
        let rp = residual(g, res_ef, base, &xp);
        xp[col] -= 2.0 * eps;
        let rm = residual(g, res_ef, base, &xp);
        for row in 0..n {
            fd[row * n + col] = (rp[row] - rm[row]) / (2.0 * eps);
        }
    }
    assert_rel(&j, &fd, TOL, &format!("{}: {}", ef.name, role.name()));
}

/// Φ_t against differences in time, and the acceleration right-hand side against
/// the difference of Bv + Φ_t along the motion q∘exp(s v), t + s (v̇ = 0 on it).
pub(crate) fn check_ic_time(g: &Graph, ef: &ElementFunctions, s: &State) {
    let ic = blocks(ef, Role::Ic, &eval(g, ef, Role::Ic, s));
    let eps = 1e-5;
    let at_t = |dt: f64| {
        let mut sp = s.clone();
        sp.t += dt;
        blocks(ef, Role::Ic, &eval(g, ef, Role::Ic, &sp))[3].clone()
    };
    let (p, m) = (at_t(eps), at_t(-eps));
    let fd: Vec<f64> = (0..ef.nl).map(|i| (p[i] - m[i]) / (2.0 * eps)).collect();
    assert_rel(&ic[4], &fd, TOL, &format!("{}: Φ_t", ef.name));

    let phidot = |ds: f64| {
        let mut sp = s.clone();
        let d: Vec<f64> = s.v.iter().map(|v| v * ds).collect();
        sp.q = perturb(&s.q, &d);
        sp.t += ds;
        let b = blocks(ef, Role::Ic, &eval(g, ef, Role::Ic, &sp));
        (0..ef.nl)
            .map(|i| {
                (0..ef.nv)
                    .map(|k| b[1][i * ef.nv + k] * s.v[k])
                    .sum::<f64>()
                    + b[4][i]
            })
            .collect::<Vec<f64>>()
    };
    let (p, m) = (phidot(eps), phidot(-eps));
    let fd: Vec<f64> = (0..ef.nl).map(|i| -(p[i] - m[i]) / (2.0 * eps)).collect();
    assert_rel(&ic[5], &fd, TOL, &format!("{}: acceleration rhs", ef.name));
}

/// Out channel `rate` is d/ds of channel `value` along q∘exp(s v), t + s.
fn check_rate(g: &Graph, ef: &ElementFunctions, s: &State, value: usize, rate: usize) {
    let eps = 1e-5;
    let at = |ds: f64| {
        let mut sp = s.clone();
        let d: Vec<f64> = s.v.iter().map(|v| v * ds).collect();
        sp.q = perturb(&s.q, &d);
        sp.t += ds;
        eval(g, ef, Role::Out, &sp)[value]
    };
    let fd = (at(eps) - at(-eps)) / (2.0 * eps);
    let got = eval(g, ef, Role::Out, s)[rate];
    assert_rel(&[got], &[fd], TOL, &format!("{}: rate", ef.name));
}

/// rate of a velocity-dependent expression: d/ds along q∘exp(s v + s²/2 v̇),
/// v + s v̇ (exact to O(s³) on the group, so the central difference is O(ε²)).
#[test]
fn rate_of_a_velocity_measure_includes_the_accelerations() {
    let mut g = Graph::new();
    let ef = spring_damper(&mut g, false);
    let mut r = rng(17);
    for _ in 0..3 {
        let p = spring_params(&mut r);
        let s = random_state(&mut r, &ef, p);
        let eps = 1e-5;
        let at = |ds: f64| {
            let mut sp = s.clone();
            let d: Vec<f64> = (0..ef.nv)
                .map(|i| s.v[i] * ds + 0.5 * ds * ds * s.vdot[i])
                .collect();
            sp.q = perturb(&s.q, &d);
            sp.v = (0..ef.nv).map(|i| s.v[i] + ds * s.vdot[i]).collect();
            sp.t += ds;
            eval(&g, &ef, Role::Out, &sp)[1]
        };
        let fd = (at(eps) - at(-eps)) / (2.0 * eps);
        let got = eval(&g, &ef, Role::Out, &s)[2];
        assert_rel(&[got], &[fd], TOL, "rate of l̇");
    }
    let mut eb = ElementBuilder::new(&mut g, "bad_rate", Coordinates::Connector, 1, 0);
    let b = eb.body(0);
    let _ = eb.rate(b.acc[0]);
    assert!(eb.finish().unwrap_err().message.contains("rate"));
    let mut eb = ElementBuilder::new(&mut g, "bad_measure", Coordinates::Connector, 1, 0);
    let b = eb.body(0);
    eb.generalized(b.rdot[0], b.rdot[1]);
    assert!(eb.finish().unwrap_err().message.contains("measure"));
}

/// The closed forms a_P = R̈ + A(ω̄̇ × u + ω̄ × (ω̄ × u)) and ω̇ = A ω̄̇ equal the
/// rates of v_P and ω (two independent constructions).
#[test]
fn point_acceleration_is_the_rate_of_the_point_velocity() {
    let mut g = Graph::new();
    let mut eb = ElementBuilder::new(&mut g, "sensor", Coordinates::Connector, 1, 3);
    let b = eb.body(0);
    let u = [0, 1, 2].map(|i| eb.param(i));
    let vp = eb.point_velocity(&b, u);
    let ap = eb.point_acceleration(&b, u);
    let w = eb.omega(&b);
    let wd = eb.angular_acceleration(&b);
    let rates = [vp, w].map(|x| x.map(|c| eb.rate(c)));
    eb.output_v3("a", ap);
    eb.output_v3("wdot", wd);
    eb.output_v3("rate_v", rates[0]);
    eb.output_v3("rate_w", rates[1]);
    let ef = eb.finish().unwrap();
    let mut r = rng(18);
    for _ in 0..3 {
        let p = uniform(&mut r, 3, -1.0, 1.0);
        let s = random_state(&mut r, &ef, p);
        let out = eval(&g, &ef, Role::Out, &s);
        assert_rel(&out[..6], &out[6..], 1e-14, "a_P, ω̇");
        // And against nalgebra.
        let a = rot(&s.q[3..7]);
        let (wb, ab, u) = (v3(&s.v[3..6]), v3(&s.vdot[3..6]), v3(&s.p));
        let want = v3(&s.vdot[0..3]) + a * (ab.cross(&u) + wb.cross(&wb.cross(&u)));
        assert_rel(&out[..3], want.as_slice(), 1e-14, "a_P vs nalgebra");
    }
}

pub(crate) fn unknowns(r: &mut StdRng, ef: &ElementFunctions) -> Vec<f64> {
    uniform(r, ef.nv + ef.nl, -1.0, 1.0)
}

fn unit(r: &mut StdRng) -> Vec<f64> {
    let v = uniform(r, 3, -1.0, 1.0);
    let n = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    v.iter().map(|x| x / n).collect()
}

/// All checks of a constraint element at a few random states.
fn check_constraint(build: fn(&mut Graph) -> ElementFunctions, seed: u64) {
    let mut g = Graph::new();
    let ef = build(&mut g);
    let mut r = rng(seed);
    for _ in 0..3 {
        let mut p = Vec::new();
        while p.len() < ef.np {
            p.extend(unit(&mut r));
        }
        p.truncate(ef.np);
        let mut s = random_state(&mut r, &ef, p);
        let c_at: Vec<usize> = (ef.np - ef.nl..ef.np).collect();
        consistent(&g, &ef, &mut s, &c_at);
        check_b(&g, &ef, &s);
        check_ic_time(&g, &ef, &s);
        let x = unknowns(&mut r, &ef);
        check_iter(&g, &ef, Role::Iter, &ef, &s, &x);
        check_iter(&g, &ef, Role::IterNoqv, &ef, &s, &x);
        // Φ enters the residual scaled by 1/(β′h²).
        let res = eval(&g, &ef, Role::Res, &s);
        let ic = blocks(&ef, Role::Ic, &eval(&g, &ef, Role::Ic, &s));
        let bh2 = s.c[1] * s.c[3] * s.c[3];
        for i in 0..ef.nl {
            assert_eq!(res[ef.nv + i], ic[3][i] / bh2);
        }
        // r_dyn = Bᵀλ and Q − h = 0 for a pure constraint.
        let want: Vec<f64> = (0..ef.nv)
            .map(|k| (0..ef.nl).map(|i| ic[1][i * ef.nv + k] * s.lambda[i]).sum())
            .collect();
        assert_rel(&res[..ef.nv], &want, 1e-13, "r_dyn = Bᵀλ");
        assert!(ic[2].iter().all(|x| *x == 0.0));
    }
}

#[test]
fn transfix_ground_roles() {
    check_constraint(transfix_ground, 1);
}

#[test]
fn rotfix_ground_roles() {
    check_constraint(rotfix_ground, 2);
}

#[test]
fn transfix_bb_roles() {
    check_constraint(transfix_bb, 3);
}

#[test]
fn rotfix_bb_roles() {
    check_constraint(rotfix_bb, 4);
}

#[test]
fn revolute_roles() {
    check_constraint(revolute, 5);
}

#[test]
fn rheonomic_driver_roles_and_rate() {
    let mut g = Graph::new();
    let ef = driver(&mut g);
    let mut r = rng(6);
    for _ in 0..3 {
        let p = vec![0.7, 1.9, 0.0];
        let mut s = random_state(&mut r, &ef, p);
        consistent(&g, &ef, &mut s, &[2]);
        check_b(&g, &ef, &s);
        check_ic_time(&g, &ef, &s);
        check_rate(&g, &ef, &s, 0, 1);
        let x = unknowns(&mut r, &ef);
        check_iter(&g, &ef, Role::Iter, &ef, &s, &x);
        // Φ_t has the closed form −a ω cos(ω t).
        let ic = blocks(&ef, Role::Ic, &eval(&g, &ef, Role::Ic, &s));
        let want = -0.7 * 1.9 * (1.9 * s.t).cos();
        assert_rel(&ic[4], &[want], 1e-14, "Φ_t closed form");
    }
}

fn rot(q: &[f64]) -> Matrix3<f64> {
    quat_na(q).to_rotation_matrix().into_inner()
}

fn v3(x: &[f64]) -> Vector3<f64> {
    Vector3::new(x[0], x[1], x[2])
}

/// Spring–damper generalized forces by an independent f64 computation with nalgebra.
fn spring_q(s: &State) -> Vec<f64> {
    let p = &s.p;
    let (u1, u2) = (v3(&p[0..3]), v3(&p[3..6]));
    let (k, d, l0, f0) = (p[6], p[7], p[8], p[9]);
    let (a1, a2) = (rot(&s.q[3..7]), rot(&s.q[10..14]));
    let p1 = v3(&s.q[0..3]) + a1 * u1;
    let p2 = v3(&s.q[7..10]) + a2 * u2;
    let vp1 = v3(&s.v[0..3]) + a1 * v3(&s.v[3..6]).cross(&u1);
    let vp2 = v3(&s.v[6..9]) + a2 * v3(&s.v[9..12]).cross(&u2);
    let dv = p2 - p1;
    let l = dv.norm();
    let e = dv / l;
    let ldot = e.dot(&(vp2 - vp1));
    let sf = k * (l - l0) + d * ldot + f0;
    let f1 = e * sf;
    let f2 = -f1;
    let m1 = u1.cross(&(a1.transpose() * f1));
    let m2 = u2.cross(&(a2.transpose() * f2));
    [f1, m1, f2, m2]
        .iter()
        .flat_map(|x| x.iter().copied())
        .collect()
}

pub(crate) fn spring_params(r: &mut StdRng) -> Vec<f64> {
    let mut p = uniform(r, 6, -0.5, 0.5);
    p.extend([3.0, 0.4, 0.5, 0.2]);
    p
}

#[test]
fn spring_damper_roles() {
    let mut g = Graph::new();
    let ef = spring_damper(&mut g, false);
    let efg = spring_damper(&mut g, true);
    let mut r = rng(7);
    for _ in 0..3 {
        let p = spring_params(&mut r);
        let s = random_state(&mut r, &ef, p);
        // Res against the closed form: no mass, so r_dyn = f = −Q.
        let res = eval(&g, &ef, Role::Res, &s);
        let q = spring_q(&s);
        let minus_q: Vec<f64> = q.iter().map(|x| -x).collect();
        assert_rel(&res[..12], &minus_q, 1e-12, "spring r_dyn");
        assert_rel(&res[12..], &minus_q, 1e-12, "spring f");
        let ic = blocks(&ef, Role::Ic, &eval(&g, &ef, Role::Ic, &s));
        assert_rel(&ic[2], &q, 1e-12, "spring Q − h");
        assert!(ic[0].iter().all(|x| *x == 0.0), "a spring has no mass");
        // The same spring by virtual power of its length measure.
        let resg = eval(&g, &efg, Role::Res, &s);
        assert_rel(&resg, &res, 1e-12, "generalized vs force form");
        check_rate(&g, &ef, &s, 0, 1);
        let x = unknowns(&mut r, &ef);
        check_iter(&g, &ef, Role::Iter, &ef, &s, &x);
        check_iter(&g, &efg, Role::Iter, &efg, &s, &x);
        let sx = discrete_state(&s, ef.nv, &x);
        let j1 = eval(&g, &ef, Role::Iter, &sx);
        let j2 = eval(&g, &efg, Role::Iter, &sx);
        let d1 = blocks(&ef, Role::Iter, &j1).remove(0);
        let d2 = blocks(&efg, Role::Iter, &j2).remove(0);
        assert_rel(&d2, &d1, 1e-12, "generalized vs force form, iter");
    }
}

#[test]
fn applied_loads_roles() {
    let mut g = Graph::new();
    let ef = loads(&mut g);
    let mut r = rng(8);
    for _ in 0..3 {
        let p = uniform(&mut r, 12, -1.0, 1.0);
        let s = random_state(&mut r, &ef, p.clone());
        let a = rot(&s.q[3..7]);
        let f = v3(&p[0..3]);
        let qr = f;
        let qw =
            v3(&p[3..6]).cross(&(a.transpose() * f)) + a.transpose() * v3(&p[6..9]) + v3(&p[9..12]);
        let want: Vec<f64> = qr.iter().chain(qw.iter()).map(|x| -x).collect();
        let res = eval(&g, &ef, Role::Res, &s);
        assert_rel(&res[..6], &want, 1e-13, "loads r_dyn");
        let x = unknowns(&mut r, &ef);
        check_iter(&g, &ef, Role::Iter, &ef, &s, &x);
    }
}

fn body_params(r: &mut StdRng) -> Vec<f64> {
    let mut p = vec![2.5, 0.3, 0.5, 0.7, 0.0, 0.0, -9.81];
    p.extend(uniform(r, 3, -1.0, 1.0));
    p.extend(random_quat(r));
    p.extend(uniform(r, 6, -1.0, 1.0));
    p
}

#[test]
fn rigid_body_residual_mass_and_iteration_matrices() {
    let mut g = Graph::new();
    let ef = rigid_body(&mut g, true);
    let ef_nogyro = rigid_body(&mut g, false);
    assert!(ef.owns_coordinates);
    assert_eq!((ef.nq, ef.nv, ef.nl, ef.np), (7, 6, 0, 20));
    let mut r = rng(9);
    for _ in 0..3 {
        let p = body_params(&mut r);
        let s = random_state(&mut r, &ef, p);
        let (m, jd) = (2.5, [0.3, 0.5, 0.7]);
        let grav = v3(&[0.0, 0.0, -9.81]);
        let w = v3(&s.v[3..6]);
        let jw = Vector3::new(jd[0] * w[0], jd[1] * w[1], jd[2] * w[2]);
        let hw = w.cross(&jw);
        let one_pa = 1.0 + s.c[0];
        let mut want = Vec::new();
        for i in 0..3 {
            want.push(m * s.vdot[i] / one_pa - m * grav[i]);
        }
        for i in 0..3 {
            want.push(jd[i] * s.vdot[3 + i] / one_pa + hw[i]);
        }
        let res = eval(&g, &ef, Role::Res, &s);
        assert_rel(&res[..6], &want, 1e-13, "Newton–Euler residual");
        let f: Vec<f64> = (0..3)
            .map(|i| -m * grav[i])
            .chain((0..3).map(|i| hw[i]))
            .collect();
        assert_rel(&res[6..], &f, 1e-13, "f = h − Q");

        let ic = blocks(&ef, Role::Ic, &eval(&g, &ef, Role::Ic, &s));
        let mut mm = vec![0.0; 36];
        for i in 0..3 {
            mm[i * 7] = m;
            mm[(3 + i) * 7] = jd[i];
        }
        assert_eq!(ic[0], mm, "mass matrix diag(m I, J̄)");
        let qh: Vec<f64> = f.iter().map(|x| -x).collect();
        assert_rel(&ic[2], &qh, 1e-13, "Q − h");

        let x = unknowns(&mut r, &ef);
        check_iter(&g, &ef, Role::Iter, &ef, &s, &x);
        // IterNoqv is the exact matrix of the body without the gyroscopic term.
        check_iter(&g, &ef, Role::IterNoqv, &ef_nogyro, &s, &x);
        let sx = discrete_state(&s, 6, &x);
        let a = blocks(&ef, Role::Iter, &eval(&g, &ef, Role::Iter, &sx)).remove(0);
        let b = blocks(&ef, Role::IterNoqv, &eval(&g, &ef, Role::IterNoqv, &sx)).remove(0);
        assert!(
            rel_err(&a, &b, 1e-8) > 1e-3,
            "the gyroscopic derivative matters"
        );
    }
}

#[test]
fn rigid_body_init_update_scale_out() {
    let mut g = Graph::new();
    let ef = rigid_body(&mut g, true);
    let mut r = rng(10);
    for &dphi in &[1e-7, 3e-5, 2e-4, 0.3, 2.0] {
        let p = body_params(&mut r);
        let mut s = random_state(&mut r, &ef, p.clone());

        // Init: q₀ = [R₀; θ₀], v₀ = [v₀; Aᵀ ω₀].
        let init = eval(&g, &ef, Role::Init, &s);
        let a0 = rot(&p[10..14]);
        let wb = a0.transpose() * v3(&p[17..20]);
        let mut want = p[7..17].to_vec();
        want.extend(wb.iter());
        assert_rel(&init, &want, 1e-14, "init");

        // Update: R + Δ_R, θ∘exp(Δ_φ), against nalgebra.
        let dir = unit(&mut r);
        for i in 0..3 {
            s.delta[3 + i] = dphi * dir[i];
        }
        let up = eval(&g, &ef, Role::Update, &s);
        let want = perturb(&s.q, &s.delta);
        assert_rel(&up, &want, 1e-15, &format!("update at |Δφ| = {dphi}"));
        let norm: f64 = up[3..].iter().map(|x| x * x).sum::<f64>().sqrt();
        assert!((norm - 1.0).abs() < 1e-15);

        let sc = eval(&g, &ef, Role::Scale, &s);
        let rn = v3(&s.q[0..3]).norm();
        assert_eq!(sc, vec![rn, rn, rn, 0.0, 0.0, 0.0]);

        let out = eval(&g, &ef, Role::Out, &s);
        assert_eq!(ef.outputs.len(), 16);
        assert_eq!(ef.outputs[3], "theta.w");
        assert_eq!(ef.outputs[10], "omega.x");
        let w = rot(&s.q[3..7]) * v3(&s.v[3..6]);
        let mut want = s.q.clone();
        want.extend(&s.v[0..3]);
        want.extend(w.iter());
        want.extend(&s.v[3..6]);
        assert_rel(&out, &want, 1e-14, "out channels");
    }
}
