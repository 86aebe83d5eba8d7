//! Every element type of the standard library, as the compiler lowers it from its fd
//! source, against central finite differences of its own residual on the group: the
//! iteration matrix must be the exact derivative of the discrete residual
//! x = [v̇; λ] ↦ r(q_n∘exp(Δ_pred + β′h²v̇), v_pred + γ′h v̇, v̇, λ, Δ).

use fdc_diff::lie::num::{exp_quat, hamilton};
use fdc_diff::Role;
use fdc_driver::pipeline::{front, render, BuildError};
use fdc_ir::interp::eval;

const MODEL: &str = "
gravity [0, 0, -9.81];
body a: rigid_body { mass = 2; inertia = [0.1, 0.2, 0.3]; position = [0.3, 0.1, -0.2];
    orientation = quat(0.9, 0.1, -0.3, 0.2); angular_velocity = [0.5, -1, 2]; }
body b: rigid_body { mass = 1; inertia = [0.05, 0.04, 0.03]; position = [1.0, -0.2, 0.4];
    orientation = quat(0.7, -0.2, 0.5, 0.4); velocity = [0.1, 0.2, 0.3]; }
joint r: revolute(a) { at = [0, 0, 0]; axis = [0.2, 0.3, 1]; }
joint s: spherical(b, a) { at = [0.7, 0, 0.1]; }
joint p: prismatic(a, b) { at = [0.5, 0, 0]; axis = [1, 0.2, 0]; }
joint c: cylindrical(b) { at = [1, 0, 0]; axis = [0, 1, 0.3]; }
joint u: universal(a, b) { at = [0.6, 0, 0]; axis1 = [0, 0, 1]; axis2 = [0, 1, 0]; }
joint f: fixed(a, b) { at = [0.6, 0.1, 0]; }
joint p1: transfix_ground(a) { at = [0.1, 0.2, 0.3]; n = [0.3, 0.4, 0.5]; }
joint p2: rotfix_ground(b) { a = [1, 0.2, 0]; g = [0, 1, 0.1]; }
joint p3: transfix_bb(a, b) { at = [0.2, 0.1, 0]; n = [0, 0.6, 0.8]; }
joint p4: rotfix_bb(a, b) { a1 = [1, 0, 0]; a2 = [0, 0.3, 1]; }
force sd: spring_damper(a, b) { at_a = [0.4, 0.1, 0]; at_b = [0.9, 0, 0.3]; stiffness = 40; damping = 3; preload = 2; }
force cf: constant_force(b) { value = [1, -2, 3]; at = [1.1, 0, 0.4]; }
force ct: constant_torque(a) { value = [0.3, 0.2, -0.1]; }
force ts: torsion_spring(a, b) { axis = [0, 0, 1]; stiffness = 5; damping = 0.5; preload = 0.1; }
driver dr: rotation_driver(a, b) { axis = [0, 0, 1]; value = 0.3*sin(2*t); ramp = 0.5; }
driver dr2: rotation_driver(b) { axis = [0, 1, 0]; value = 2*t; }
force bu: bushing(a, b) { at = [0.5, 0, 0]; stiffness = [10, 20, 30]; damping = [1, 2, 3];
    rot_stiffness = [4, 5, 6]; rot_damping = [0.1, 0.2, 0.3]; }
joint g3: fix_dof(a, b) { at = [0.3, 0.2, 0.1]; axes = [[0, 1, 0], [0, 0, 1], [1, 0, 0]]; dof = 3; }
joint g1: fix_dof(b) { at = [0.3, 0.2, 0.1]; dof = 1; }
driver dt: translation_driver(b) { at = [1, 0, 0]; axis = [0, 0, 1]; value = 0.1*t^2 + 0.2; ramp = 0.6; }
";

/// A small deterministic generator (the test must not depend on a seed crate).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }
}

/// q∘exp(Δ) per body (7 stored numbers, 6 increments each).
fn compose(q: &[f64], delta: &[f64]) -> Vec<f64> {
    let mut out = q.to_vec();
    for k in 0..q.len() / 7 {
        for i in 0..3 {
            out[7 * k + i] = q[7 * k + i] + delta[6 * k + i];
        }
        let th = [q[7 * k + 3], q[7 * k + 4], q[7 * k + 5], q[7 * k + 6]];
        let e = exp_quat([delta[6 * k + 3], delta[6 * k + 4], delta[6 * k + 5]]);
        let r = hamilton(th, e);
        out[7 * k + 3..7 * k + 7].copy_from_slice(&r);
    }
    out
}

#[test]
fn every_stdlib_iteration_matrix_is_the_derivative_of_its_residual() {
    let dir = std::env::temp_dir().join(format!("fdc-stdlib-fd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("all.fd");
    std::fs::write(&path, MODEL).unwrap();
    let f = match front(&path, &[]) {
        Ok(f) => f,
        Err(BuildError::Model { analysis, extra }) => panic!("{}", render(&analysis, &extra)),
        Err(BuildError::Backend(e) | BuildError::Usage(e)) => panic!("{e}"),
    };
    let _ = std::fs::remove_dir_all(&dir);
    let l = &f.lowered;
    let mut rng = Lcg(7);
    // A large h keeps the 1/(β′h²) scaling of the constraint rows from amplifying the
    // round-off of the differences.
    let (beta, gamma, h) = (0.3, 0.6, 0.1);
    let c = [0.0, beta, gamma, h];
    let mut checked = std::collections::BTreeSet::new();
    for inst in &l.instances {
        let ty = &l.types[inst.type_index];
        let (Some((res, _)), Some((iter, blocks))) = (ty.role(Role::Res), ty.role(Role::Iter))
        else {
            continue;
        };
        let (nv, nl) = (ty.nv, ty.nl);
        if nv == 0 {
            continue; // model outputs
        }
        // A random configuration: unit quaternions, moved positions.
        let mut q_n = vec![0.0; ty.nq];
        for k in 0..ty.nq / 7 {
            for i in 0..3 {
                q_n[7 * k + i] = rng.next();
            }
            let th: Vec<f64> = (0..4).map(|_| rng.next()).collect();
            let n = th.iter().map(|x| x * x).sum::<f64>().sqrt();
            for i in 0..4 {
                q_n[7 * k + 3 + i] = th[i] / n;
            }
        }
        let d_pred: Vec<f64> = (0..nv).map(|_| 0.05 * rng.next()).collect();
        let v_pred: Vec<f64> = (0..nv).map(|_| rng.next()).collect();
        let x0: Vec<f64> = (0..nv + nl).map(|_| rng.next()).collect();
        let t = [0.37];
        let state = |x: &[f64]| {
            let vdot = x[..nv].to_vec();
            let delta: Vec<f64> = (0..nv)
                .map(|i| d_pred[i] + beta * h * h * vdot[i])
                .collect();
            let v: Vec<f64> = (0..nv).map(|i| v_pred[i] + gamma * h * vdot[i]).collect();
            (compose(&q_n, &delta), v, vdot, x[nv..].to_vec(), delta)
        };
        let call = |func: &fdc_ir::Func, x: &[f64]| {
            let (q, v, vdot, lam, delta) = state(x);
            eval(
                &l.graph,
                &func.outputs,
                &[&q, &v, &vdot, &lam, &inst.params, &c, &delta, &t],
            )
            .unwrap()
        };
        let mut jac = vec![0.0; (nv + nl) * (nv + nl)];
        let mut k = 0;
        let values = call(iter, &x0);
        for b in blocks {
            if let fdc_diff::Block::Sparse { entries, .. } = b {
                for &(r, col) in entries {
                    jac[r as usize * (nv + nl) + col as usize] += values[k];
                    k += 1;
                }
            }
        }
        for j in 0..nv + nl {
            let eps = 1e-6 * (1.0 + x0[j].abs());
            let (mut xp, mut xm) = (x0.clone(), x0.clone());
            xp[j] += eps;
            xm[j] -= eps;
            let (rp, rm) = (call(res, &xp), call(res, &xm));
            for i in 0..nv + nl {
                let fd = (rp[i] - rm[i]) / (2.0 * eps);
                let exact = jac[i * (nv + nl) + j];
                let scale = 1.0 + exact.abs().max(fd.abs());
                assert!(
                    (fd - exact).abs() < 1e-6 * scale,
                    "{} ({}): J[{i}][{j}] = {exact} but differences give {fd}",
                    inst.name,
                    ty.name
                );
            }
        }
        checked.insert(ty.name.clone());
    }
    // Every library type of the model was checked (ground variants count separately;
    // the joint primitives are inlined into their presets).
    for name in [
        "rigid_body",
        "revolute",
        "spherical",
        "prismatic",
        "cylindrical",
        "universal",
        "fixed",
        "transfix_ground",
        "rotfix_ground",
        "transfix_bb",
        "rotfix_bb",
        "spring_damper",
        "bushing",
        "constant_force",
        "constant_torque",
        "torsion_spring",
        "fix_dof",
        "rotation_driver@dr",
        "rotation_driver@dr2",
        "translation_driver@dt",
    ] {
        assert!(
            checked.iter().any(|c| c.starts_with(name)),
            "{name} not checked: {checked:?}"
        );
    }
}
