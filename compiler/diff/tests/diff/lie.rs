//! The Lie group helpers (IR and f64) against nalgebra's quaternions and rotation
//! matrices, and the tangent operator against finite differences of nalgebra's
//! exponential, at angles below and above the Taylor threshold.

// Index loops read like the formulas they check.
#![allow(clippy::needless_range_loop)]

use crate::common;

use common::{quat_arr, quat_na, random_quat, rng, uniform};
use fdc_diff::lie::{self, num, TAYLOR_THRESHOLD};
use fdc_ir::{interp, Graph, Id, Slot};
use nalgebra::{UnitQuaternion, Vector3};

/// Evaluates `outs` with the given values in `Slot::P`.
fn eval_p(g: &Graph, outs: &[Id], p: &[f64]) -> Vec<f64> {
    let e: &[f64] = &[];
    interp::eval(g, outs, &[e, e, e, e, p, e, e, e]).unwrap()
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

fn flat(m: [[Id; 3]; 3]) -> Vec<Id> {
    m.iter().flatten().copied().collect()
}

const ANGLES: [f64; 9] = [0.0, 1e-9, 1e-6, 5e-5, 9.99e-5, 1.001e-4, 1e-3, 0.7, 3.0];

#[test]
fn shabana_matches_nalgebra_and_mirror() {
    let mut g = Graph::new();
    let th = [0, 1, 2, 3].map(|i| g.input(Slot::P, i));
    let a = flat(lie::shabana(&mut g, th));
    let mut r = rng(11);
    for _ in 0..20 {
        let q = random_quat(&mut r);
        let got = eval_p(&g, &a, &q);
        let m = quat_na(&q).to_rotation_matrix().into_inner();
        let want: Vec<f64> = (0..9).map(|k| m[(k / 3, k % 3)]).collect();
        assert!(max_diff(&got, &want) < 1e-15, "{got:?} vs {want:?}");
        let mirror: Vec<f64> = num::shabana(q).iter().flatten().copied().collect();
        assert_eq!(got, mirror);
    }
}

#[test]
fn hamilton_product_composes_rotation_matrices() {
    let mut g = Graph::new();
    let p = [0, 1, 2, 3].map(|i| g.input(Slot::P, i));
    let q = [4, 5, 6, 7].map(|i| g.input(Slot::P, i));
    let pq = lie::hamilton(&mut g, p, q);
    let a_pq = flat(lie::shabana(&mut g, pq));
    let a_p = lie::shabana(&mut g, p);
    let a_q = lie::shabana(&mut g, q);
    let prod = flat(g.mat_mul(a_p, a_q));
    let mut r = rng(12);
    for _ in 0..20 {
        let (x, y) = (random_quat(&mut r), random_quat(&mut r));
        let inp: Vec<f64> = x.iter().chain(&y).copied().collect();
        let lhs = eval_p(&g, &a_pq, &inp);
        let rhs = eval_p(&g, &prod, &inp);
        assert!(max_diff(&lhs, &rhs) < 1e-14, "A(p∘q) = A(p)A(q)");
        let got = eval_p(&g, &pq, &inp);
        let want = quat_arr(&(quat_na(&x) * quat_na(&y)));
        assert!(
            max_diff(&got, &want) < 1e-15,
            "Hamilton product vs nalgebra"
        );
        assert!(max_diff(&got, &num::hamilton(x, y)) < 1e-15);
    }
}

#[test]
fn exponential_matches_nalgebra_below_and_above_threshold() {
    let mut g = Graph::new();
    let psi = [0, 1, 2].map(|i| g.input(Slot::P, i));
    let e = lie::exp_quat(&mut g, psi);
    let mut r = rng(13);
    for &phi in &ANGLES {
        let d = unit(&mut r);
        let p: Vec<f64> = d.iter().map(|x| x * phi).collect();
        let got = eval_p(&g, &e, &p);
        let want = quat_arr(&UnitQuaternion::from_scaled_axis(Vector3::new(
            p[0], p[1], p[2],
        )));
        assert!(
            max_diff(&got, &want) < 2e-16,
            "exp at φ = {phi}: {got:?} vs {want:?}"
        );
        assert_eq!(got, num::exp_quat([p[0], p[1], p[2]]).to_vec());
        // The vector part relative to its size: the Taylor branch is exact to round-off.
        let rel = (1..4)
            .map(|k| ((got[k] - want[k]) / want[k].abs().max(1e-300)).abs())
            .filter(|x| x.is_finite() && phi > 0.0)
            .fold(0.0, f64::max);
        assert!(rel < 1e-15, "exp vector part at φ = {phi}: {rel:e}");
    }
}

fn unit(r: &mut rand::rngs::StdRng) -> Vec<f64> {
    let v = uniform(r, 3, -1.0, 1.0);
    let n = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    v.iter().map(|x| x / n).collect()
}

/// Column n of T(ψ) is d/dε log(exp(ψ)⁻¹ exp(ψ + ε e_n)) at 0 (nalgebra's maps).
fn tangent_fd(psi: [f64; 3]) -> Vec<f64> {
    let eps = 1e-6;
    let base = UnitQuaternion::from_scaled_axis(Vector3::from(psi));
    let mut t = vec![0.0; 9];
    for n in 0..3 {
        let mut col = [0.0; 3];
        for (sign, w) in [(1.0, 0.5), (-1.0, -0.5)] {
            let mut p = psi;
            p[n] += sign * eps;
            let e = UnitQuaternion::from_scaled_axis(Vector3::from(p));
            let d = (base.inverse() * e).scaled_axis();
            for i in 0..3 {
                col[i] += w * d[i] / eps;
            }
        }
        for i in 0..3 {
            t[3 * i + n] = col[i];
        }
    }
    t
}

#[test]
fn tangent_operator_against_finite_differences() {
    let mut g = Graph::new();
    let psi = [0, 1, 2].map(|i| g.input(Slot::P, i));
    let t = flat(lie::tangent_so3(&mut g, psi));
    let mut r = rng(14);
    for &phi in &ANGLES {
        for _ in 0..3 {
            let d = unit(&mut r);
            let p = [d[0] * phi, d[1] * phi, d[2] * phi];
            let got = eval_p(&g, &t, &p);
            let fd = tangent_fd(p);
            assert!(
                max_diff(&got, &fd) < 1e-8,
                "T at φ = {phi}: {got:?} vs {fd:?}"
            );
            let mirror: Vec<f64> = num::tangent_so3(p).iter().flatten().copied().collect();
            assert!(max_diff(&got, &mirror) < 1e-16);
        }
    }
}

/// Below the threshold the coefficients of T and exp equal their Taylor series (one
/// term more than implemented) to round-off.
#[test]
fn taylor_branch_is_exact_to_round_off() {
    for &phi in &[1e-8, 1e-6, 5e-5, 0.999 * TAYLOR_THRESHOLD] {
        let psi = [phi, 0.0, 0.0];
        let t = num::tangent_so3(psi);
        // T = I − a ψ̃ + b ψ̃² with ψ along x: T[1][2] = a φ, T[1][1] = 1 − b φ².
        let a = t[1][2] / phi;
        let b = (1.0 - t[1][1]) / (phi * phi);
        let a_ref = 0.5 - phi * phi / 24.0 + phi.powi(4) / 720.0;
        assert!(((a - a_ref) / a_ref).abs() < 1e-15, "a at {phi}");
        if phi > 1e-5 {
            // b φ² is below round-off of 1 for smaller angles.
            let b_ref = 1.0 / 6.0 - phi * phi / 120.0;
            assert!(((b - b_ref) / b_ref).abs() < 1e-6, "b at {phi}");
        }
        let e = num::exp_quat(psi);
        let k_ref = 0.5 - phi * phi / 48.0 + phi.powi(4) / 3840.0;
        assert!(((e[1] / phi - k_ref) / k_ref).abs() < 1e-15, "exp at {phi}");
    }
}

#[test]
fn exponential_derivative_is_the_tangent_operator() {
    // d/dε exp(ψ + ε e_n) = exp(ψ) ∘ [0; ½ T(ψ) e_n], with the IR maps, by differences.
    let mut g = Graph::new();
    let psi = [0, 1, 2].map(|i| g.input(Slot::P, i));
    let e = lie::exp_quat(&mut g, psi);
    let mut r = rng(15);
    for &phi in &ANGLES[2..] {
        let d = unit(&mut r);
        let p = [d[0] * phi, d[1] * phi, d[2] * phi];
        let t = num::tangent_so3(p);
        let base = num::exp_quat(p);
        for n in 0..3 {
            let eps = 1e-7;
            let mut pp = p.to_vec();
            pp[n] += eps;
            let plus = eval_p(&g, &e, &pp);
            pp[n] -= 2.0 * eps;
            let minus = eval_p(&g, &e, &pp);
            let fd: Vec<f64> = (0..4).map(|k| (plus[k] - minus[k]) / (2.0 * eps)).collect();
            let w = [0.0, 0.5 * t[0][n], 0.5 * t[1][n], 0.5 * t[2][n]];
            let want = num::hamilton(base, w);
            assert!(max_diff(&fd, &want) < 1e-8, "d exp at φ = {phi}");
        }
    }
}
