//! Element types built with the builder (theory 3.2, 5.1, 5.3) and the numerical
//! references of the tests: evaluation through the interpreter, and perturbation on
//! the group with nalgebra's quaternions (independent of the IR's quaternion maths).
#![allow(dead_code)]

use fdc_diff::{
    Block, BodyKin, Coordinates, ElementBuilder, ElementFunctions, IterationForm, Role,
};
use fdc_ir::{interp, Graph, Id, V3};
use nalgebra::{Quaternion, UnitQuaternion, Vector3};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::cell::Cell;

// ---------------------------------------------------------------- element types

thread_local! {
    /// The iteration-matrix form the element types below are built with (per test
    /// thread, so tests can compare the forms).
    pub static FORM: Cell<IterationForm> = const { Cell::new(IterationForm::Cheaper) };
}

fn done(mut eb: ElementBuilder) -> ElementFunctions {
    eb.set_iteration_form(FORM.with(|f| f.get()));
    eb.finish().unwrap()
}

fn params3(eb: &mut ElementBuilder, at: usize) -> V3 {
    [eb.param(at), eb.param(at + 1), eb.param(at + 2)]
}

/// Rigid body, parameters [m, J1, J2, J3, g(3), R0(3), θ0(4), v0(3), ω0(3)] (20).
/// Newton–Euler as loads: m g − m R̈ at the centre, −J̄ω̄̇ and (gyroscopic) −ω̄ × J̄ω̄.
pub fn rigid_body(g: &mut Graph, gyroscopic: bool) -> ElementFunctions {
    let mut eb = ElementBuilder::new(g, "rigid_body", Coordinates::RigidBody, 1, 20);
    let b = eb.body(0);
    let m = eb.param(0);
    let jd = params3(&mut eb, 1);
    let grav = params3(&mut eb, 4);
    let g = eb.graph();
    let mg = g.v3_scale(m, grav);
    let ma = g.v3_scale(m, b.acc);
    let f = g.v3_sub(mg, ma);
    let zero = g.v3_const([0.0; 3]);
    let ja = [0, 1, 2].map(|i| g.mul(jd[i], b.alpha_bar[i]));
    let ja = g.v3_neg(ja);
    let jw = [0, 1, 2].map(|i| g.mul(jd[i], b.omega_bar[i]));
    let gyro = g.cross(b.omega_bar, jw);
    let gyro = g.v3_neg(gyro);
    eb.force(&b, f, zero);
    eb.body_torque(&b, ja);
    if gyroscopic {
        eb.set_gyroscopic(true);
        eb.body_torque(&b, gyro);
        eb.set_gyroscopic(false);
    }
    let r0 = params3(&mut eb, 7);
    let th0 = [eb.param(10), eb.param(11), eb.param(12), eb.param(13)];
    let v0 = params3(&mut eb, 14);
    let w0 = params3(&mut eb, 17);
    eb.rigid_body_initial(r0, th0, v0, w0);
    done(eb)
}

/// transfix_ground: Φ = n·(R + A u) − c; parameters [n(3), u(3), c].
pub fn transfix_ground(g: &mut Graph) -> ElementFunctions {
    let mut eb = ElementBuilder::new(g, "transfix_ground", Coordinates::Connector, 1, 7);
    let b = eb.body(0);
    let n = params3(&mut eb, 0);
    let u = params3(&mut eb, 3);
    let c = eb.param(6);
    let p = eb.point(&b, u);
    let g = eb.graph();
    let e = g.dot(n, p);
    let phi = g.sub(e, c);
    eb.constrain("tx", phi);
    done(eb)
}

/// rotfix_ground: Φ = (A b)·g − c; parameters [b(3), g(3), c].
pub fn rotfix_ground(g: &mut Graph) -> ElementFunctions {
    let mut eb = ElementBuilder::new(g, "rotfix_ground", Coordinates::Connector, 1, 7);
    let b = eb.body(0);
    let bb = params3(&mut eb, 0);
    let gg = params3(&mut eb, 3);
    let c = eb.param(6);
    let ab = eb.axis(&b, bb);
    let g = eb.graph();
    let e = g.dot(ab, gg);
    let phi = g.sub(e, c);
    eb.constrain("rx", phi);
    done(eb)
}

/// transfix_bb: Φ = (R2 + A2 u2 − R1)·(A1 n1) − c; parameters [u2(3), n1(3), c].
pub fn transfix_bb(g: &mut Graph) -> ElementFunctions {
    let mut eb = ElementBuilder::new(g, "transfix_bb", Coordinates::Connector, 2, 7);
    let b1 = eb.body(0);
    let b2 = eb.body(1);
    let u2 = params3(&mut eb, 0);
    let n1 = params3(&mut eb, 3);
    let c = eb.param(6);
    let p2 = eb.point(&b2, u2);
    let an = eb.axis(&b1, n1);
    let g = eb.graph();
    let d = g.v3_sub(p2, b1.r);
    let e = g.dot(d, an);
    let phi = g.sub(e, c);
    eb.constrain("tx", phi);
    done(eb)
}

/// rotfix_bb: Φ = (A1 b1)·(A2 b2) − c; parameters [b1(3), b2(3), c].
pub fn rotfix_bb(g: &mut Graph) -> ElementFunctions {
    let mut eb = ElementBuilder::new(g, "rotfix_bb", Coordinates::Connector, 2, 7);
    let b1 = eb.body(0);
    let b2 = eb.body(1);
    let x1 = params3(&mut eb, 0);
    let x2 = params3(&mut eb, 3);
    let c = eb.param(6);
    let a1 = eb.axis(&b1, x1);
    let a2 = eb.axis(&b2, x2);
    let g = eb.graph();
    let e = g.dot(a1, a2);
    let phi = g.sub(e, c);
    eb.constrain("rx", phi);
    done(eb)
}

/// A revolute joint between two bodies from primitives: three transfix_bb (the joint
/// point of body 2 on the axes of body 1) and two rotfix_bb (axis z of body 2 stays
/// perpendicular to x and y of body 1). Parameters [u1(3), u2(3), c(5)].
pub fn revolute(g: &mut Graph) -> ElementFunctions {
    let mut eb = ElementBuilder::new(g, "revolute", Coordinates::Connector, 2, 11);
    let b1 = eb.body(0);
    let b2 = eb.body(1);
    let u1 = params3(&mut eb, 0);
    let u2 = params3(&mut eb, 3);
    let c: Vec<Id> = (6..11).map(|i| eb.param(i)).collect();
    let p1 = eb.point(&b1, u1);
    let p2 = eb.point(&b2, u2);
    let g = eb.graph();
    let d = g.v3_sub(p2, p1);
    let axes = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]].map(|a| g.v3_const(a));
    let mut rows = Vec::new();
    for (i, ax) in axes.iter().enumerate() {
        let n = eb.axis(&b1, *ax);
        let g = eb.graph();
        let e = g.dot(d, n);
        rows.push((format!("t{i}"), g.sub(e, c[i])));
    }
    let z2 = eb.axis(&b2, axes[2]);
    for (i, ax) in axes[..2].iter().enumerate() {
        let n = eb.axis(&b1, *ax);
        let g = eb.graph();
        let e = g.dot(n, z2);
        rows.push((format!("r{i}"), g.sub(e, c[3 + i])));
    }
    for (name, phi) in rows {
        eb.constrain(&name, phi);
    }
    done(eb)
}

/// Spring–damper between u1 on body 1 and u2 on body 2 (theory 5.3): l = |P2 − P1|,
/// s = k(l − l0) + d l̇ + f0, s e on body 1 at P1, −s e on body 2 at P2. Parameters
/// [u1(3), u2(3), k, d, l0, f0]. Outputs `l`, `ldot` = rate(l), `lddot` = rate(ldot).
pub fn spring_damper(g: &mut Graph, via_generalized: bool) -> ElementFunctions {
    let mut eb = ElementBuilder::new(g, "spring_damper", Coordinates::Connector, 2, 10);
    let b1 = eb.body(0);
    let b2 = eb.body(1);
    let u1 = params3(&mut eb, 0);
    let u2 = params3(&mut eb, 3);
    let [k, d, l0, f0] = [6, 7, 8, 9].map(|i| eb.param(i));
    let p1 = eb.point(&b1, u1);
    let p2 = eb.point(&b2, u2);
    let g = eb.graph();
    let dv = g.v3_sub(p2, p1);
    let l = g.norm(dv);
    let ldot = eb.rate(l);
    let g = eb.graph();
    let stretch = g.sub(l, l0);
    let ks = g.mul(k, stretch);
    let dl = g.mul(d, ldot);
    let s0 = g.add2(ks, dl);
    let s = g.add2(s0, f0);
    if via_generalized {
        let ms = g.neg(s);
        eb.generalized(ms, l);
    } else {
        let e = [0, 1, 2].map(|i| g.div(dv[i], l));
        let se = g.v3_scale(s, e);
        let mse = g.v3_neg(se);
        eb.force(&b1, se, u1);
        eb.force(&b2, mse, u2);
    }
    eb.output("l", l);
    eb.output("ldot", ldot);
    let lddot = eb.rate(ldot);
    eb.output("lddot", lddot);
    done(eb)
}

/// Applied loads on one body: a global force at a body point, a global torque and a
/// body-fixed torque, all constant. Parameters [f(3), u(3), m(3), m̄(3)].
pub fn loads(g: &mut Graph) -> ElementFunctions {
    let mut eb = ElementBuilder::new(g, "loads", Coordinates::Connector, 1, 12);
    let b = eb.body(0);
    let f = params3(&mut eb, 0);
    let u = params3(&mut eb, 3);
    let m = params3(&mut eb, 6);
    let mb = params3(&mut eb, 9);
    eb.force(&b, f, u);
    eb.torque(&b, m);
    eb.body_torque(&b, mb);
    done(eb)
}

/// A rheonomic driver: the angle of the body's x axis about the global z axis,
/// atan2((A x̄)·ŷ, (A x̄)·x̂), prescribed as a·sin(ω t) + c. Parameters [a, ω, c].
/// Outputs the measure and its rate.
pub fn driver(g: &mut Graph) -> ElementFunctions {
    let mut eb = ElementBuilder::new(g, "driver", Coordinates::Connector, 1, 3);
    let b = eb.body(0);
    let [a, w, c] = [0, 1, 2].map(|i| eb.param(i));
    let t = eb.time();
    let ex = eb.graph().v3_const([1.0, 0.0, 0.0]);
    let x = eb.axis(&b, ex);
    let g = eb.graph();
    let ang = g.atan2(x[1], x[0]);
    let wt = g.mul(w, t);
    let s = g.sin(wt);
    let as_ = g.mul(a, s);
    let f = g.add2(as_, c);
    let phi = g.sub(ang, f);
    let rate = eb.rate(phi);
    eb.constrain("drive", phi);
    eb.output("phi", phi);
    eb.output("phidot", rate);
    done(eb)
}

/// A chain of `n` springs between `n + 1` bodies as one element (benchmark of the cost
/// growth of the iteration matrix). Parameters [k, d, l0].
pub fn spring_chain(g: &mut Graph, n: usize) -> ElementFunctions {
    let mut eb = ElementBuilder::new(g, "chain", Coordinates::Connector, n + 1, 3);
    let [k, d, l0] = [0, 1, 2].map(|i| eb.param(i));
    let bodies: Vec<BodyKin> = (0..=n).map(|i| eb.body(i)).collect();
    for w in bodies.windows(2) {
        let g = eb.graph();
        let dv = g.v3_sub(w[1].r, w[0].r);
        let l = g.norm(dv);
        let ldot = eb.rate(l);
        let g = eb.graph();
        let st = g.sub(l, l0);
        let ks = g.mul(k, st);
        let dl = g.mul(d, ldot);
        let s = g.add2(ks, dl);
        let ms = g.neg(s);
        eb.generalized(ms, l);
    }
    done(eb)
}

/// Ḡ(θ) with ω̄ = 2 Ḡ θ̇ (theory 3.3).
pub fn gbar_ir(g: &mut Graph, th: [Id; 4]) -> [[Id; 4]; 3] {
    let n = th.map(|x| g.neg(x));
    [
        [n[1], th[0], th[3], n[2]],
        [n[2], n[3], th[0], th[1]],
        [n[3], th[2], n[1], th[0]],
    ]
}

/// The rigid body with Euler parameters as a vector-space element (theory 3.1, 3.3):
/// T = ½ m Ṙ·Ṙ + ½ ω̄ᵀJ̄ω̄ with ω̄ = 2Ḡθ̇, V = −m g·R, Φ = θ·θ − 1. Parameters
/// [m, J1, J2, J3, g(3), q0(7), v0(7)] (21).
pub fn euler_body(g: &mut Graph) -> ElementFunctions {
    let mut eb = ElementBuilder::new(g, "euler_body", Coordinates::VectorSpace, 7, 21);
    let q: Vec<Id> = (0..7).map(|i| eb.coordinate(i)).collect();
    let qd: Vec<Id> = (0..7).map(|i| eb.velocity(i)).collect();
    let p: Vec<Id> = (0..21).map(|i| eb.param(i)).collect();
    let g = eb.graph();
    let th = [q[3], q[4], q[5], q[6]];
    let gb = gbar_ir(g, th);
    let two = g.constant(2.0);
    let half = g.constant(0.5);
    let w: Vec<Id> = gb
        .iter()
        .map(|row| {
            let t: Vec<Id> = (0..4).map(|j| g.mul(row[j], qd[3 + j])).collect();
            let s = g.sum(&t).unwrap();
            g.mul(two, s)
        })
        .collect();
    let rd = [qd[0], qd[1], qd[2]];
    let rr = g.dot(rd, rd);
    let tt = g.mul(p[0], rr);
    let mut terms = vec![tt];
    for i in 0..3 {
        let w2 = g.powi(w[i], 2);
        terms.push(g.mul(p[1 + i], w2));
    }
    let s = g.sum(&terms).unwrap();
    let kinetic = g.mul(half, s);
    let gr = g.dot([p[4], p[5], p[6]], [q[0], q[1], q[2]]);
    let mgr = g.mul(p[0], gr);
    let potential = g.neg(mgr);
    let tq = g.dot([th[0], th[1], th[2]], [th[0], th[1], th[2]]);
    let t3 = g.powi(th[3], 2);
    let tt = g.add2(tq, t3);
    let one = g.constant(1.0);
    let norm = g.sub(tt, one);
    eb.lagrangian(kinetic, potential);
    eb.constrain("norm", norm);
    eb.vector_initial(p[7..14].to_vec(), p[14..21].to_vec());
    eb.output_v3("omega_body", [w[0], w[1], w[2]]);
    done(eb)
}

// ---------------------------------------------------------------- evaluation

/// Inputs of one evaluation.
#[derive(Clone, Debug)]
pub struct State {
    pub q: Vec<f64>,
    pub v: Vec<f64>,
    pub vdot: Vec<f64>,
    pub lambda: Vec<f64>,
    pub p: Vec<f64>,
    pub c: Vec<f64>,
    pub delta: Vec<f64>,
    pub t: f64,
}

pub fn eval(g: &Graph, ef: &ElementFunctions, role: Role, s: &State) -> Vec<f64> {
    let (f, _) = ef.role(role).expect("role exists");
    let t = [s.t];
    let inputs = [
        &s.q[..],
        &s.v[..],
        &s.vdot[..],
        &s.lambda[..],
        &s.p[..],
        &s.c[..],
        &s.delta[..],
        &t[..],
    ];
    interp::eval(g, &f.outputs, &inputs).expect("evaluates")
}

/// Splits a role's output into its blocks; sparse blocks are expanded to dense
/// row-major matrices (zeros where the pattern has no entry).
pub fn blocks(ef: &ElementFunctions, role: Role, out: &[f64]) -> Vec<Vec<f64>> {
    let (_, bl) = ef.role(role).unwrap();
    let mut res = Vec::new();
    let mut at = 0;
    for b in bl {
        match b {
            Block::Dense { len } => res.push(out[at..at + len].to_vec()),
            Block::Sparse {
                rows,
                cols,
                entries,
            } => {
                let mut m = vec![0.0; rows * cols];
                for (k, &(i, j)) in entries.iter().enumerate() {
                    m[i as usize * cols + j as usize] += out[at + k];
                }
                res.push(m);
            }
        }
        at += b.len();
    }
    assert_eq!(at, out.len());
    res
}

pub fn quat_na(t: &[f64]) -> UnitQuaternion<f64> {
    UnitQuaternion::from_quaternion(Quaternion::new(t[0], t[1], t[2], t[3]))
}

pub fn quat_arr(q: &UnitQuaternion<f64>) -> [f64; 4] {
    [q.w, q.i, q.j, q.k]
}

/// q∘exp(δ) per body, with nalgebra's exponential (right multiplication: δφ in body
/// axes).
pub fn perturb(q: &[f64], delta: &[f64]) -> Vec<f64> {
    let mut out = q.to_vec();
    for k in 0..q.len() / 7 {
        for i in 0..3 {
            out[7 * k + i] += delta[6 * k + i];
        }
        let th = quat_na(&q[7 * k + 3..7 * k + 7]);
        let d = &delta[6 * k + 3..6 * k + 6];
        let e = UnitQuaternion::from_scaled_axis(Vector3::new(d[0], d[1], d[2]));
        out[7 * k + 3..7 * k + 7].copy_from_slice(&quat_arr(&(th * e)));
    }
    out
}

pub fn rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed)
}

pub fn uniform(r: &mut StdRng, n: usize, lo: f64, hi: f64) -> Vec<f64> {
    (0..n).map(|_| r.gen_range(lo..hi)).collect()
}

pub fn random_quat(r: &mut StdRng) -> [f64; 4] {
    loop {
        let x = uniform(r, 4, -1.0, 1.0);
        let n = x.iter().map(|a| a * a).sum::<f64>().sqrt();
        if n > 0.1 {
            return [x[0] / n, x[1] / n, x[2] / n, x[3] / n];
        }
    }
}

/// A random state of an element with `nb` bodies, `nl` multipliers and parameters `p`.
pub fn random_state(r: &mut StdRng, ef: &ElementFunctions, p: Vec<f64>) -> State {
    let nb = ef.nv / 6;
    let mut q = Vec::new();
    for _ in 0..nb {
        q.extend(uniform(r, 3, -1.0, 1.0));
        q.extend(random_quat(r));
    }
    State {
        q,
        v: uniform(r, ef.nv, -1.0, 1.0),
        vdot: uniform(r, ef.nv, -1.0, 1.0),
        lambda: uniform(r, ef.nl, -1.0, 1.0),
        p,
        c: vec![-0.2, 0.36, 0.7, 0.8],
        delta: uniform(r, ef.nv, -0.5, 0.5),
        t: r.gen_range(0.0..2.0),
    }
}

/// max |a − b| / max(max |b|, floor).
pub fn rel_err(a: &[f64], b: &[f64], floor: f64) -> f64 {
    assert_eq!(a.len(), b.len());
    let scale = b.iter().fold(floor, |m, x| m.max(x.abs()));
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
        / scale
}

pub fn assert_rel(a: &[f64], b: &[f64], tol: f64, what: &str) {
    let e = rel_err(a, b, 1e-8);
    assert!(
        e < tol,
        "{what}: relative error {e:e}\n got {a:?}\nwant {b:?}"
    );
}
