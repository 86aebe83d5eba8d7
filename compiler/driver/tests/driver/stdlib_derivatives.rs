//! Every element type of the standard library, as the compiler lowers it from its fd
//! source, against central finite differences of its own residual on the group: the
//! iteration matrix must be the exact derivative of the discrete residual
//! x = [v̇; λ] ↦ r(q_n∘exp(Δ_pred + β′h²v̇), v_pred + γ′h v̇, v̇, λ, Δ), where the
//! coordinates of Euler-parameter bodies and vector-space elements are updated by q + Δ.

use fdc_diff::lie::num::{exp_quat, hamilton};
use fdc_diff::Role;
use fdc_driver::pipeline::{front, render, BuildError};
use fdc_ir::interp::eval;

// Also the model of `benches/rules.rs` (what each simplifier rule family buys).
const MODEL: &str = include_str!("every_stdlib_type.fd");

/// A small deterministic generator (the test must not depend on a seed crate).
pub(crate) struct Lcg(pub u64);
impl Lcg {
    /// Uniform in [-1, 1).
    pub fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }
}

/// A block of an element's local coordinates: a rigid body on R³×SO(3) (7 stored
/// numbers, 6 increments) or one vector-space coordinate (q + Δ).
#[derive(Clone, Copy, Debug)]
enum Block {
    Rigid { q: usize, v: usize },
    Plain { q: usize, v: usize },
}

/// The local blocks of an instance, from the owners of its coordinates: an owner with
/// 7 coordinates and 6 dofs is a rigid body, every other owner is a vector space.
fn blocks_of(l: &fdc_lower::LoweredModel, inst: &fdc_lower::Instance) -> Vec<Block> {
    let mut rigid_q = std::collections::HashSet::new();
    for o in &l.instances {
        let ty = &l.types[o.type_index];
        if ty.owns_coordinates && ty.nq == 7 && ty.nv == 6 {
            rigid_q.insert(o.q_map[0]);
        }
    }
    let (mut q, mut v, mut out) = (0, 0, Vec::new());
    while q < inst.q_map.len() {
        if rigid_q.contains(&inst.q_map[q]) {
            out.push(Block::Rigid { q, v });
            q += 7;
            v += 6;
        } else {
            out.push(Block::Plain { q, v });
            q += 1;
            v += 1;
        }
    }
    out
}

/// q∘exp(Δ) on rigid blocks, q + Δ on the others.
fn compose(blocks: &[Block], q: &[f64], delta: &[f64]) -> Vec<f64> {
    let mut out = q.to_vec();
    for b in blocks {
        match *b {
            Block::Plain { q: i, v: j } => out[i] = q[i] + delta[j],
            Block::Rigid { q: i, v: j } => {
                for c in 0..3 {
                    out[i + c] = q[i + c] + delta[j + c];
                }
                let th = [q[i + 3], q[i + 4], q[i + 5], q[i + 6]];
                let e = exp_quat([delta[j + 3], delta[j + 4], delta[j + 5]]);
                out[i + 3..i + 7].copy_from_slice(&hamilton(th, e));
            }
        }
    }
    out
}

/// [`MODEL`] checked and lowered (`tag` names the temporary directory).
pub(crate) fn stdlib_front(tag: &str) -> fdc_driver::pipeline::Front {
    let dir = std::env::temp_dir().join(format!("fdc-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("all.fd");
    std::fs::write(&path, MODEL).unwrap();
    let f = match front(&path, &[]) {
        Ok(f) => f,
        Err(BuildError::Model { analysis, extra }) => panic!("{}", render(&analysis, &extra)),
        Err(BuildError::Backend(e) | BuildError::Usage(e)) => panic!("{e}"),
    };
    let _ = std::fs::remove_dir_all(&dir);
    f
}

/// A random configuration of `inst`: every body (of either kind) seven numbers [R; θ]
/// with a unit θ; the coordinates of a vector-space element anything.
fn random_q(l: &fdc_lower::LoweredModel, inst: &fdc_lower::Instance, rng: &mut Lcg) -> Vec<f64> {
    let ty = &l.types[inst.type_index];
    let layout = blocks_of(l, inst);
    let mut q_n: Vec<f64> = (0..ty.nq).map(|_| rng.next()).collect();
    let mut bodies: Vec<usize> = Vec::new();
    for b in &layout {
        if let Block::Rigid { q, .. } = b {
            bodies.push(*q);
        }
    }
    // Euler-parameter bodies: 7 consecutive plain coordinates owned by a body.
    for o in &l.instances {
        let oty = &l.types[o.type_index];
        if oty.owns_coordinates && oty.nq == 7 && oty.nv == 7 {
            if let Some(k) = inst.q_map.iter().position(|&g| g == o.q_map[0]) {
                bodies.push(k);
            }
        }
    }
    for k in bodies {
        let n = q_n[k + 3..k + 7].iter().map(|x| x * x).sum::<f64>().sqrt();
        for i in 3..7 {
            q_n[k + i] /= n;
        }
    }
    q_n
}

/// The library types `every_stdlib_iteration_matrix_is_the_derivative_of_its_residual`
/// must reach in `stdlib-fd` (ground variants count separately; the joint primitives
/// are inlined into their presets).
const CHECKED_TYPES: &[&str] = &[
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
    "rigid_body_euler",
    "revolute[eb]",
    "universal[be]",
    "fixed[eg]",
    "spring_damper[eb]",
    "constant_torque[e]",
    "bushing[be]",
    "hanging",
    "rod",
    "anti_roll_bar",
    "mf_tyre",
    "hanging[e]",
    "coordinates[4]",
];

#[test]
fn every_stdlib_iteration_matrix_is_the_derivative_of_its_residual() {
    let f = stdlib_front("stdlib-fd");
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
        let layout = blocks_of(l, inst);
        let q_n = random_q(l, inst, &mut rng);
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
            (
                compose(&layout, &q_n, &delta),
                v,
                vdot,
                x[nv..].to_vec(),
                delta,
            )
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
    for name in CHECKED_TYPES {
        assert!(
            checked.iter().any(|c| c.starts_with(name)),
            "{name} not checked: {checked:?}"
        );
    }
}

/// The iteration matrix of every library type in its three exact forms (assembled,
/// one forward pass, vertex elimination), each lowered from the fd source, evaluated
/// through the interpreter at one random state: equal up to roundoff (1e-12 of the
/// largest entry). The forms really differ (the spring-damper's operation counts), so
/// the comparison is not of one form with itself (as it would be if the lowering
/// stopped seeing the form).
#[test]
fn every_stdlib_iteration_matrix_agrees_in_all_three_forms() {
    use fdc_diff::{op_count, with_iteration_form, IterationForm};
    let forms = [
        IterationForm::Direct,
        IterationForm::Assembled,
        IterationForm::Eliminated,
    ];
    // The form is a thread-local of the builder; lowering runs on a compile thread,
    // so start that thread here (lowering then runs in place, on it).
    let fronts: Vec<_> = forms
        .iter()
        .map(|&f| {
            fdc_frontend::stack::with_compile_stack(|| {
                with_iteration_form(f, || stdlib_front(&format!("forms-{f:?}")))
            })
        })
        .collect();
    let mut rng = Lcg(11);
    let mut counts = Vec::new();
    let base = &fronts[0].lowered;
    for (k, inst) in base.instances.iter().enumerate() {
        let ty = &base.types[inst.type_index];
        if ty.nv == 0 || ty.role(Role::Iter).is_none() {
            continue;
        }
        let (nv, nl) = (ty.nv, ty.nl);
        let q = random_q(base, inst, &mut rng);
        let v: Vec<f64> = (0..nv).map(|_| rng.next()).collect();
        let vdot: Vec<f64> = (0..nv).map(|_| rng.next()).collect();
        let lam: Vec<f64> = (0..nl).map(|_| rng.next()).collect();
        let delta: Vec<f64> = (0..nv).map(|_| 0.1 * rng.next()).collect();
        let c = [-0.1, 0.3, 0.6, 0.01];
        let mut jacs = Vec::new();
        for f in &fronts {
            let l = &f.lowered;
            let (inst, ty) = (&l.instances[k], &l.types[l.instances[k].type_index]);
            let (iter, blocks) = ty.role(Role::Iter).expect("same model");
            let inputs = [&q[..], &v, &vdot, &lam, &inst.params, &c, &delta, &[0.37]];
            let values = eval(&l.graph, &iter.outputs, &inputs).unwrap();
            let mut jac = vec![0.0; (nv + nl) * (nv + nl)];
            let mut i = 0;
            for b in blocks {
                if let fdc_diff::Block::Sparse { entries, .. } = b {
                    for &(r, col) in entries {
                        jac[r as usize * (nv + nl) + col as usize] += values[i];
                        i += 1;
                    }
                }
            }
            if ty.name == "spring_damper" {
                counts.push(op_count(&l.graph, &iter.outputs));
            }
            jacs.push(jac);
        }
        let scale = jacs[0].iter().fold(1e-300, |m: f64, x| m.max(x.abs()));
        for (form, jac) in forms.iter().zip(&jacs).skip(1) {
            let err = jac
                .iter()
                .zip(&jacs[0])
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            assert!(
                err <= 1e-12 * scale,
                "{} ({}): {form:?} differs from Direct by {:e} of the largest entry",
                inst.name,
                ty.name,
                err / scale
            );
        }
    }
    assert!(
        counts.len() == 3 && counts[2] < counts[0] && counts[2] < counts[1],
        "the spring-damper's forms differ, elimination the cheapest: {counts:?}"
    );
}
