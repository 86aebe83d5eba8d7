//! `spring2`: a stiff axial spring and damper between two 2-D point masses, and the
//! model of the kept-matrix accuracy test made of them (`stiff_chain`).
//!
//! The force is along the line between the masses, so the Jacobian changes with the
//! direction (geometric stiffness T/ℓ across the line): a matrix kept from an earlier
//! step is not the current one, unlike with a linear spring. p = [k, L0, d].

use super::*;

/// Unit direction u from mass a to mass b, the length ℓ and the tension T = k(ℓ − L0)
/// + d u·(v_b − v_a).
fn tension(q: &[f64], v: &[f64], p: &[f64]) -> ([f64; 2], f64, f64) {
    let d = [q[2] - q[0], q[3] - q[1]];
    let l = (d[0] * d[0] + d[1] * d[1]).sqrt();
    let u = [d[0] / l, d[1] / l];
    let w = [v[2] - v[0], v[3] - v[1]];
    let t = p[0] * (l - p[1]) + p[2] * (u[0] * w[0] + u[1] * w[1]);
    (u, l, t)
}

// The residual is −Q (the spring pulls a towards b): [−T u, T u] in both blocks.
element_fn!(spring2_res, (4, 4, 0, 3, 8), |io| {
    let (u, _, t) = tension(io.q, io.v, io.p);
    let g = [-t * u[0], -t * u[1], t * u[0], t * u[1]];
    io.out[..4].copy_from_slice(&g);
    io.out[4..].copy_from_slice(&g);
});

/// All 16 entries of the 4×4 block, row by row.
fn full4() -> Vec<(u32, u32)> {
    (0..4).flat_map(|i| (0..4).map(move |j| (i, j))).collect()
}

// β′h² K + γ′h D with K = [[S, −S], [−S, S]], S = k uuᵀ + (T/ℓ)(I − uuᵀ), and D the
// same with S = d uuᵀ.
element_fn!(spring2_iter, (4, 4, 0, 3, 16), |io| {
    let (u, l, t) = tension(io.q, io.v, io.p);
    let (k, damp) = (io.p[0], io.p[2]);
    let h = io.c[3];
    let (bh2, gh) = (io.c[1] * h * h, io.c[2] * h);
    for i in 0..4 {
        for j in 0..4 {
            let (a, b) = (i % 2, j % 2);
            let uu = u[a] * u[b];
            let eye = if a == b { 1.0 } else { 0.0 };
            let s = bh2 * (k * uu + t / l * (eye - uu)) + gh * damp * uu;
            io.out[4 * i + j] = if (i < 2) == (j < 2) { s } else { -s };
        }
    }
});

element_fn!(spring2_ic, (4, 4, 0, 3, 4), |io| {
    let (u, _, t) = tension(io.q, io.v, io.p);
    io.out
        .copy_from_slice(&[t * u[0], t * u[1], -t * u[0], -t * u[1]]);
});

pub fn spring2() -> ElementType {
    make_type(TypeSpec {
        name: "spring2",
        nq: 4,
        nv: 4,
        nl: 0,
        np: 3,
        owner: false,
        outputs: vec![],
        multipliers: vec![],
        roles: vec![
            (Role::Res, spring2_res, vec![dense(4), dense(0), dense(4)]),
            (Role::Iter, spring2_iter, vec![sparse(4, 4, &full4())]),
            (
                Role::Ic,
                spring2_ic,
                vec![
                    sparse(4, 4, &[]),
                    sparse(0, 4, &[]),
                    dense(4),
                    dense(0),
                    dense(0),
                    dense(0),
                ],
            ),
        ],
    })
}

/// `n` unit masses in a vertical plane, the first held at 1 m from the origin by a rod,
/// each next one 1 m further along x by a spring of stiffness `k` (and a little
/// damping), released at rest from the horizontal under gravity: the chain swings down
/// and the springs stretch under its centrifugal load.
pub fn stiff_chain(n: usize, k: f64) -> Model {
    let mut instances = Vec::new();
    for i in 0..n {
        let x = (i + 1) as f64;
        let dofs = [2 * i, 2 * i + 1];
        let p = pm_params(1.0, &[x, 0.0], &[0.0, 0.0], &[0.0, -9.81]);
        instances.push(inst(&format!("m{i}"), 0, p, &dofs, &dofs, &[]));
    }
    instances.push(inst("rod", 1, vec![1.0, 0.0, 0.0], &[0, 1], &[0, 1], &[0]));
    for i in 1..n {
        let dofs = [2 * i - 2, 2 * i - 1, 2 * i, 2 * i + 1];
        let p = vec![k, 1.0, 1e-3 * k.sqrt()];
        instances.push(inst(&format!("s{i}"), 2, p, &dofs, &dofs, &[]));
    }
    Model {
        table: table(vec![point_mass::<2>(), anchor2(), spring2()]),
        instances,
        nq: 2 * n,
        nv: 2 * n,
        nl: 1,
        inputs: vec![],
        roads: Default::default(),
    }
}
