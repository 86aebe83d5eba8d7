//! Element types written by hand with the exact native signature and block layouts of
//! `fdc_runtime::table`, so the runtime is tested without the compiler.
//!
//! - `point_mass::<D>`: a vector-space body in R^D with gravity; q + Δ update.
//!   p = [m, x0 (D), v0 (D), g (D)].
//! - `spring1`: a linear spring and damper from a 1-D mass to the origin. p = [k, L, d].
//! - `anchor2`: distance constraint of a 2-D mass to a fixed point. p = [L, px, py].
//! - `rod2`: distance constraint between two 2-D masses. p = [L].
//! - `rigid_body`: a torque-free rigid body on R³ × SO(3), q = [R; θ], v = [Ṙ; ω̄],
//!   update by the quaternion exponential.
//!   p = [m, J1, J2, J3, R0 (3), θ0 (4), v0 (3), ω0 (3, global), g (3)].
//! - `spherical` / `spherical_ground`: a point of a body held to a point of another
//!   body (or to a fixed point): 3 constraints on the Lie group, with T(Δ).
#![allow(dead_code, clippy::missing_safety_doc, clippy::needless_range_loop)]

use fdc_runtime::table::{Block, ElementFn, ElementType, FunctionTable, Role, RoleFn, ABI_VERSION};
use fdc_runtime::{ElementInstance, Model};
use std::slice::{from_raw_parts, from_raw_parts_mut};

pub mod search;
#[allow(unused_imports)] // not every test binary compares with a fixed step
pub use search::best_fixed_steps;

/// The arrays of one call, as slices of the sizes the type declares.
pub struct Io<'a> {
    pub q: &'a [f64],
    pub v: &'a [f64],
    pub vd: &'a [f64],
    pub l: &'a [f64],
    pub p: &'a [f64],
    pub c: &'a [f64],
    pub d: &'a [f64],
    pub t: f64,
    pub out: &'a mut [f64],
}

/// # Safety
/// The pointers are valid for the given sizes (the runtime's promise).
#[allow(clippy::too_many_arguments)]
pub unsafe fn io<'a>(
    sizes: (usize, usize, usize, usize, usize),
    q: *const f64,
    v: *const f64,
    vd: *const f64,
    l: *const f64,
    p: *const f64,
    c: *const f64,
    d: *const f64,
    t: *const f64,
    out: *mut f64,
) -> Io<'a> {
    let (nq, nv, nl, np, nout) = sizes;
    let s = |ptr: *const f64, n: usize| {
        if n == 0 {
            &[][..]
        } else {
            from_raw_parts(ptr, n)
        }
    };
    Io {
        q: s(q, nq),
        v: s(v, nv),
        vd: s(vd, nv),
        l: s(l, nl),
        p: s(p, np),
        c: s(c, 4),
        d: s(d, nv),
        t: *t,
        out: if nout == 0 {
            &mut [][..]
        } else {
            from_raw_parts_mut(out, nout)
        },
    }
}

/// Defines an `extern "C"` element function from a body working on [`Io`].
#[macro_export]
macro_rules! element_fn {
    ($name:ident $(<const $g:ident : usize>)?, $sizes:expr, |$io:ident| $body:block) => {
        pub unsafe extern "C" fn $name $(<const $g: usize>)? (
            q: *const f64,
            v: *const f64,
            vd: *const f64,
            l: *const f64,
            p: *const f64,
            c: *const f64,
            d: *const f64,
            t: *const f64,
            out: *mut f64,
        ) {
            let $io = $crate::common::io($sizes, q, v, vd, l, p, c, d, t, out);
            $body
        }
    };
}

pub fn dense(len: usize) -> Block {
    Block::Dense { len }
}

pub fn sparse(rows: usize, cols: usize, entries: &[(u32, u32)]) -> Block {
    Block::Sparse {
        rows,
        cols,
        entries: entries.to_vec(),
    }
}

pub fn diag(n: usize) -> Vec<(u32, u32)> {
    (0..n as u32).map(|i| (i, i)).collect()
}

pub struct TypeSpec {
    pub name: &'static str,
    pub nq: usize,
    pub nv: usize,
    pub nl: usize,
    pub np: usize,
    pub owner: bool,
    pub outputs: Vec<String>,
    pub multipliers: Vec<String>,
    pub roles: Vec<(Role, ElementFn, Vec<Block>)>,
}

/// The `Ic` output blocks of an element on one velocity dof with no constraint rows and
/// no mass of its own: M (1×1, empty), B (0×1), Q − h (1), and Φ, Φ_t and the
/// acceleration right-hand side (no rows).
pub fn ic_blocks_one_dof() -> Vec<Block> {
    vec![
        sparse(1, 1, &[]),
        sparse(0, 1, &[]),
        dense(1),
        dense(0),
        dense(0),
        dense(0),
    ]
}

/// `model` with the operation counts of generated code on its hand-written roles
/// (`RoleFn::ops`, 0 in `make_type`): `iter` for `Iter`/`IterNoqv`, `other` for the
/// rest, so that the counted-cost matrix rule sees the costs of a compiled model (an
/// iteration matrix several residuals dear) instead of the LU's alone.
pub fn with_role_ops(mut model: Model, iter: usize, other: usize) -> Model {
    for ty in &mut model.table.types {
        for (k, role) in ty.roles.iter_mut().enumerate() {
            if let Some(f) = role {
                let matrix = k == Role::Iter as usize || k == Role::IterNoqv as usize;
                f.ops = if matrix { iter } else { other };
            }
        }
    }
    model
}

pub fn make_type(s: TypeSpec) -> ElementType {
    let mut roles: [Option<RoleFn>; Role::ALL.len()] = Default::default();
    for (role, func, blocks) in s.roles {
        roles[role as usize] = Some(RoleFn {
            func,
            blocks,
            ops: 0,
        });
    }
    ElementType {
        name: s.name.into(),
        nq: s.nq,
        nv: s.nv,
        nl: s.nl,
        np: s.np,
        owns_coordinates: s.owner,
        outputs: s.outputs,
        multipliers: s.multipliers,
        state_params: vec![],
        roles,
    }
}

// ---------------------------------------------------------------- point mass in R^D

const fn pm_np(d: usize) -> usize {
    1 + 3 * d
}

element_fn!(pm_res<const D: usize>, (D, D, 0, pm_np(D), 2 * D), |io| {
    let m = io.p[0];
    let g = &io.p[1 + 2 * D..1 + 3 * D];
    for i in 0..D {
        let f = -m * g[i];
        io.out[i] = m * io.vd[i] / (1.0 + io.c[0]) + f;
        io.out[D + i] = f;
    }
});
element_fn!(pm_iter<const D: usize>, (D, D, 0, pm_np(D), D), |io| {
    for i in 0..D {
        io.out[i] = io.p[0] / (1.0 + io.c[0]);
    }
});
element_fn!(pm_ic<const D: usize>, (D, D, 0, pm_np(D), 2 * D), |io| {
    let m = io.p[0];
    for i in 0..D {
        io.out[i] = m;
        io.out[D + i] = m * io.p[1 + 2 * D + i];
    }
});
element_fn!(pm_init<const D: usize>, (D, D, 0, pm_np(D), 2 * D), |io| {
    io.out.copy_from_slice(&io.p[1..1 + 2 * D]);
});
element_fn!(pm_update<const D: usize>, (D, D, 0, pm_np(D), D), |io| {
    for i in 0..D {
        io.out[i] = io.q[i] + io.d[i];
    }
});
element_fn!(pm_scale<const D: usize>, (D, D, 0, pm_np(D), D), |io| {
    let r = io.q.iter().map(|x| x * x).sum::<f64>().sqrt();
    io.out.fill(r);
});
element_fn!(pm_out<const D: usize>, (D, D, 0, pm_np(D), 2 * D), |io| {
    io.out[..D].copy_from_slice(io.q);
    io.out[D..].copy_from_slice(io.v);
});

pub fn point_mass<const D: usize>() -> ElementType {
    let axes = ["x", "y", "z"];
    let mut outputs: Vec<String> = axes[..D].iter().map(|a| a.to_string()).collect();
    outputs.extend(axes[..D].iter().map(|a| format!("v{a}")));
    make_type(TypeSpec {
        name: "point_mass",
        nq: D,
        nv: D,
        nl: 0,
        np: pm_np(D),
        owner: true,
        outputs,
        multipliers: vec![],
        roles: vec![
            (Role::Res, pm_res::<D>, vec![dense(D), dense(0), dense(D)]),
            (Role::Iter, pm_iter::<D>, vec![sparse(D, D, &diag(D))]),
            (
                Role::Ic,
                pm_ic::<D>,
                vec![
                    sparse(D, D, &diag(D)),
                    sparse(0, D, &[]),
                    dense(D),
                    dense(0),
                    dense(0),
                    dense(0),
                ],
            ),
            (Role::Init, pm_init::<D>, vec![dense(D), dense(D)]),
            (Role::Update, pm_update::<D>, vec![dense(D)]),
            (Role::Scale, pm_scale::<D>, vec![dense(D)]),
            (Role::Out, pm_out::<D>, vec![dense(2 * D)]),
        ],
    })
}

/// p = [m, x0 (D), v0 (D), g (D)].
pub fn pm_params(m: f64, x0: &[f64], v0: &[f64], g: &[f64]) -> Vec<f64> {
    let mut p = vec![m];
    p.extend_from_slice(x0);
    p.extend_from_slice(v0);
    p.extend_from_slice(g);
    p
}

// ---------------------------------------------------------------- 1-D spring-damper to the origin

element_fn!(spring_res, (1, 1, 0, 3, 2), |io| {
    let (k, l, d) = (io.p[0], io.p[1], io.p[2]);
    let f = k * (io.q[0] - l) + d * io.v[0];
    io.out[0] = f;
    io.out[1] = f;
});
element_fn!(spring_iter, (1, 1, 0, 3, 1), |io| {
    let (k, d) = (io.p[0], io.p[2]);
    let h = io.c[3];
    io.out[0] = io.c[2] * h * d + io.c[1] * h * h * k;
});
element_fn!(spring_ic, (1, 1, 0, 3, 1), |io| {
    let (k, l, d) = (io.p[0], io.p[1], io.p[2]);
    io.out[0] = -(k * (io.q[0] - l) + d * io.v[0]);
});

pub fn spring1() -> ElementType {
    make_type(TypeSpec {
        name: "spring",
        nq: 1,
        nv: 1,
        nl: 0,
        np: 3,
        owner: false,
        outputs: vec![],
        multipliers: vec![],
        roles: vec![
            (Role::Res, spring_res, vec![dense(1), dense(0), dense(1)]),
            (Role::Iter, spring_iter, vec![sparse(1, 1, &[(0, 0)])]),
            (Role::Ic, spring_ic, ic_blocks_one_dof()),
        ],
    })
}

// ---------------------------------------------------------------- distance of a 2-D mass to a point

element_fn!(anchor_res, (2, 2, 1, 3, 5), |io| {
    let (l, px, py) = (io.p[0], io.p[1], io.p[2]);
    let d = [io.q[0] - px, io.q[1] - py];
    let lam = io.l[0];
    let phi = 0.5 * (d[0] * d[0] + d[1] * d[1] - l * l);
    let bh2 = io.c[1] * io.c[3] * io.c[3];
    io.out[0] = d[0] * lam;
    io.out[1] = d[1] * lam;
    io.out[2] = phi / bh2;
    io.out[3] = d[0] * lam;
    io.out[4] = d[1] * lam;
});
pub const ANCHOR_ITER: [(u32, u32); 6] = [(0, 0), (1, 1), (0, 2), (1, 2), (2, 0), (2, 1)];
element_fn!(anchor_iter, (2, 2, 1, 3, 6), |io| {
    let d = [io.q[0] - io.p[1], io.q[1] - io.p[2]];
    let bh2 = io.c[1] * io.c[3] * io.c[3];
    let lam = io.l[0];
    io.out
        .copy_from_slice(&[bh2 * lam, bh2 * lam, d[0], d[1], d[0], d[1]]);
});
pub fn anchor2() -> ElementType {
    make_type(TypeSpec {
        name: "anchor",
        nq: 2,
        nv: 2,
        nl: 1,
        np: 3,
        owner: false,
        outputs: vec![],
        multipliers: vec!["dist.lambda".into()],
        roles: vec![
            (Role::Res, anchor_res, vec![dense(2), dense(1), dense(2)]),
            (Role::Iter, anchor_iter, vec![sparse(3, 3, &ANCHOR_ITER)]),
            (
                Role::Ic,
                anchor_ic_fixed,
                vec![
                    sparse(2, 2, &[]),
                    sparse(1, 2, &[(0, 0), (0, 1)]),
                    dense(2),
                    dense(1),
                    dense(1),
                    dense(1),
                ],
            ),
        ],
    })
}

// The Ic output of the anchor: B (2 values), Q-h (2), Phi (1), Phi_t (1), rhs (1) = 7.
element_fn!(anchor_ic_fixed, (2, 2, 1, 3, 7), |io| {
    let (l, px, py) = (io.p[0], io.p[1], io.p[2]);
    let d = [io.q[0] - px, io.q[1] - py];
    io.out.copy_from_slice(&[
        d[0],
        d[1],
        0.0,
        0.0,
        0.5 * (d[0] * d[0] + d[1] * d[1] - l * l),
        0.0,
        -(io.v[0] * io.v[0] + io.v[1] * io.v[1]),
    ]);
});

// ---------------------------------------------------------------- distance between two 2-D masses

element_fn!(rod_res, (4, 4, 1, 1, 9), |io| {
    let l = io.p[0];
    let d = [io.q[2] - io.q[0], io.q[3] - io.q[1]];
    let lam = io.l[0];
    let bh2 = io.c[1] * io.c[3] * io.c[3];
    let g = [-d[0] * lam, -d[1] * lam, d[0] * lam, d[1] * lam];
    io.out[..4].copy_from_slice(&g);
    io.out[4] = 0.5 * (d[0] * d[0] + d[1] * d[1] - l * l) / bh2;
    io.out[5..].copy_from_slice(&g);
});
pub const ROD_ITER: [(u32, u32); 16] = [
    (0, 0),
    (0, 2),
    (1, 1),
    (1, 3),
    (2, 0),
    (2, 2),
    (3, 1),
    (3, 3),
    (0, 4),
    (1, 4),
    (2, 4),
    (3, 4),
    (4, 0),
    (4, 1),
    (4, 2),
    (4, 3),
];
element_fn!(rod_iter, (4, 4, 1, 1, 16), |io| {
    let d = [io.q[2] - io.q[0], io.q[3] - io.q[1]];
    let s = io.c[1] * io.c[3] * io.c[3] * io.l[0];
    let b = [-d[0], -d[1], d[0], d[1]];
    io.out[..8].copy_from_slice(&[s, -s, s, -s, -s, s, -s, s]);
    io.out[8..12].copy_from_slice(&b);
    io.out[12..16].copy_from_slice(&b);
});
element_fn!(rod_ic, (4, 4, 1, 1, 11), |io| {
    let l = io.p[0];
    let d = [io.q[2] - io.q[0], io.q[3] - io.q[1]];
    let w = [io.v[2] - io.v[0], io.v[3] - io.v[1]];
    io.out[..4].copy_from_slice(&[-d[0], -d[1], d[0], d[1]]);
    io.out[4..8].fill(0.0);
    io.out[8] = 0.5 * (d[0] * d[0] + d[1] * d[1] - l * l);
    io.out[9] = 0.0;
    io.out[10] = -(w[0] * w[0] + w[1] * w[1]);
});

pub fn rod2() -> ElementType {
    make_type(TypeSpec {
        name: "rod",
        nq: 4,
        nv: 4,
        nl: 1,
        np: 1,
        owner: false,
        outputs: vec![],
        multipliers: vec!["dist.lambda".into()],
        roles: vec![
            (Role::Res, rod_res, vec![dense(4), dense(1), dense(4)]),
            (Role::Iter, rod_iter, vec![sparse(5, 5, &ROD_ITER)]),
            (
                Role::Ic,
                rod_ic,
                vec![
                    sparse(4, 4, &[]),
                    sparse(1, 4, &[(0, 0), (0, 1), (0, 2), (0, 3)]),
                    dense(4),
                    dense(1),
                    dense(1),
                    dense(1),
                ],
            ),
        ],
    })
}

// ---------------------------------------------------------------- rigid body on R³ × SO(3)

/// Rotation matrix of a unit quaternion (scalar first), Shabana (2005) Eq. 2.13.
pub fn rot(t: &[f64]) -> [[f64; 3]; 3] {
    let (t0, t1, t2, t3) = (t[0], t[1], t[2], t[3]);
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

pub fn matvec(a: &[[f64; 3]; 3], x: &[f64]) -> [f64; 3] {
    [0, 1, 2].map(|i| a[i][0] * x[0] + a[i][1] * x[1] + a[i][2] * x[2])
}

pub fn mat_t_vec(a: &[[f64; 3]; 3], x: &[f64]) -> [f64; 3] {
    [0, 1, 2].map(|i| a[0][i] * x[0] + a[1][i] * x[1] + a[2][i] * x[2])
}

pub fn cross(a: &[f64], b: &[f64]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// Hamilton product p ∘ q.
pub fn qmul(p: &[f64], q: &[f64]) -> [f64; 4] {
    [
        p[0] * q[0] - p[1] * q[1] - p[2] * q[2] - p[3] * q[3],
        p[0] * q[1] + p[1] * q[0] + p[2] * q[3] - p[3] * q[2],
        p[0] * q[2] - p[1] * q[3] + p[2] * q[0] + p[3] * q[1],
        p[0] * q[3] + p[1] * q[2] - p[2] * q[1] + p[3] * q[0],
    ]
}

/// exp of a rotation vector as a unit quaternion (series for small angles).
pub fn qexp(psi: &[f64]) -> [f64; 4] {
    let phi = (psi[0] * psi[0] + psi[1] * psi[1] + psi[2] * psi[2]).sqrt();
    let (c, s) = if phi < 1e-4 {
        (1.0 - phi * phi / 8.0, 0.5 - phi * phi / 48.0)
    } else {
        ((0.5 * phi).cos(), (0.5 * phi).sin() / phi)
    };
    [c, s * psi[0], s * psi[1], s * psi[2]]
}

const RB_NP: usize = 20;

fn inertia(p: &[f64]) -> [f64; 3] {
    [p[1], p[2], p[3]]
}

fn gyro(w: &[f64], j: &[f64; 3]) -> [f64; 3] {
    cross(w, &[j[0] * w[0], j[1] * w[1], j[2] * w[2]])
}

element_fn!(rb_res, (7, 6, 0, RB_NP, 12), |io| {
    let m = io.p[0];
    let j = inertia(io.p);
    let w = &io.v[3..6];
    let g = gyro(w, &j);
    let s = 1.0 / (1.0 + io.c[0]);
    let grav = &io.p[17..20];
    for i in 0..3 {
        io.out[i] = m * io.vd[i] * s - m * grav[i];
        io.out[3 + i] = j[i] * io.vd[3 + i] * s + g[i];
        io.out[6 + i] = -m * grav[i];
        io.out[9 + i] = g[i];
    }
});

pub fn rb_iter_entries() -> Vec<(u32, u32)> {
    let mut e = diag(3);
    for r in 3..6 {
        for c in 3..6 {
            e.push((r, c));
        }
    }
    e
}

element_fn!(rb_iter, (7, 6, 0, RB_NP, 12), |io| {
    let m = io.p[0];
    let j = inertia(io.p);
    let w = &io.v[3..6];
    let s = 1.0 / (1.0 + io.c[0]);
    let gh = io.c[2] * io.c[3];
    let jw = [j[0] * w[0], j[1] * w[1], j[2] * w[2]];
    // d(w × Jw)/dw = skew(w) J − skew(Jw)
    let sk = |a: &[f64]| [[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]];
    let (sw, sjw) = (sk(w), sk(&jw));
    for i in 0..3 {
        io.out[i] = m * s;
    }
    let mut k = 3;
    for r in 0..3 {
        for c in 0..3 {
            let mass = if r == c { j[r] * s } else { 0.0 };
            io.out[k] = mass + gh * (sw[r][c] * j[c] - sjw[r][c]);
            k += 1;
        }
    }
});
// The iteration matrix without the derivative of ω × Jω (the legacy `iter_noqv`).
element_fn!(rb_iter_noqv, (7, 6, 0, RB_NP, 6), |io| {
    let s = 1.0 / (1.0 + io.c[0]);
    let m = io.p[0];
    let j = inertia(io.p);
    io.out
        .copy_from_slice(&[m * s, m * s, m * s, j[0] * s, j[1] * s, j[2] * s]);
});
element_fn!(rb_ic, (7, 6, 0, RB_NP, 12), |io| {
    let m = io.p[0];
    let j = inertia(io.p);
    let g = gyro(&io.v[3..6], &j);
    io.out[..6].copy_from_slice(&[m, m, m, j[0], j[1], j[2]]);
    for i in 0..3 {
        io.out[6 + i] = m * io.p[17 + i];
    }
    for i in 0..3 {
        io.out[9 + i] = -g[i];
    }
});
element_fn!(rb_init, (7, 6, 0, RB_NP, 13), |io| {
    let th = &io.p[7..11];
    let n = th.iter().map(|x| x * x).sum::<f64>().sqrt();
    let th = [th[0] / n, th[1] / n, th[2] / n, th[3] / n];
    io.out[..3].copy_from_slice(&io.p[4..7]);
    io.out[3..7].copy_from_slice(&th);
    io.out[7..10].copy_from_slice(&io.p[11..14]);
    let wb = mat_t_vec(&rot(&th), &io.p[14..17]);
    io.out[10..13].copy_from_slice(&wb);
});
element_fn!(rb_update, (7, 6, 0, RB_NP, 7), |io| {
    for i in 0..3 {
        io.out[i] = io.q[i] + io.d[i];
    }
    let th = qmul(&io.q[3..7], &qexp(&io.d[3..6]));
    let n = th.iter().map(|x| x * x).sum::<f64>().sqrt();
    for i in 0..4 {
        io.out[3 + i] = th[i] / n;
    }
});
element_fn!(rb_scale, (7, 6, 0, RB_NP, 6), |io| {
    let r = io.q[..3].iter().map(|x| x * x).sum::<f64>().sqrt();
    io.out.copy_from_slice(&[r, r, r, 0.0, 0.0, 0.0]);
});
element_fn!(rb_out, (7, 6, 0, RB_NP, 10), |io| {
    let m = io.p[0];
    let j = inertia(io.p);
    let a = rot(&io.q[3..7]);
    let w = &io.v[3..6];
    let l = matvec(&a, &[j[0] * w[0], j[1] * w[1], j[2] * w[2]]);
    let t = 0.5 * (j[0] * w[0] * w[0] + j[1] * w[1] * w[1] + j[2] * w[2] * w[2])
        + 0.5 * m * (io.v[0] * io.v[0] + io.v[1] * io.v[1] + io.v[2] * io.v[2]);
    let ax = matvec(&a, &[0.0, 0.0, 1.0]);
    io.out[..3].copy_from_slice(&l);
    io.out[3] = t;
    io.out[4..7].copy_from_slice(w);
    io.out[7..10].copy_from_slice(&ax);
});

pub fn rigid_body() -> ElementType {
    let outputs = ["Lx", "Ly", "Lz", "T", "wx", "wy", "wz", "ax", "ay", "az"];
    make_type(TypeSpec {
        name: "rigid_body",
        nq: 7,
        nv: 6,
        nl: 0,
        np: RB_NP,
        owner: true,
        outputs: outputs.iter().map(|s| s.to_string()).collect(),
        multipliers: vec![],
        roles: vec![
            (Role::Res, rb_res, vec![dense(6), dense(0), dense(6)]),
            (Role::Iter, rb_iter, vec![sparse(6, 6, &rb_iter_entries())]),
            (Role::IterNoqv, rb_iter_noqv, vec![sparse(6, 6, &diag(6))]),
            (
                Role::Ic,
                rb_ic,
                vec![
                    sparse(6, 6, &diag(6)),
                    sparse(0, 6, &[]),
                    dense(6),
                    dense(0),
                    dense(0),
                    dense(0),
                ],
            ),
            (Role::Init, rb_init, vec![dense(7), dense(6)]),
            (Role::Update, rb_update, vec![dense(7)]),
            (Role::Scale, rb_scale, vec![dense(6)]),
            (Role::Out, rb_out, vec![dense(10)]),
        ],
    })
}

/// A free rigid body with principal moments `j`, initial global angular velocity `w0`.
pub fn free_body(m: f64, j: [f64; 3], theta0: [f64; 4], w0: [f64; 3]) -> Model {
    let mut p = vec![m, j[0], j[1], j[2], 0.0, 0.0, 0.0];
    p.extend_from_slice(&theta0);
    p.extend_from_slice(&[0.0, 0.0, 0.0]);
    p.extend_from_slice(&w0);
    p.extend_from_slice(&[0.0, 0.0, 0.0]);
    Model {
        table: table(vec![rigid_body()]),
        instances: vec![inst(
            "body",
            0,
            p,
            &[0, 1, 2, 3, 4, 5, 6],
            &[0, 1, 2, 3, 4, 5],
            &[],
        )],
        nq: 7,
        nv: 6,
        nl: 0,
        inputs: vec![],
        roads: Default::default(),
    }
}

// ---------------------------------------------------------------- driver (rheonomic)

// Prescribes the position of a 1-D mass: Φ = x − a sin(ωt). p = [a, ω].
element_fn!(driver_res, (1, 1, 1, 2, 3), |io| {
    let (a, w) = (io.p[0], io.p[1]);
    let bh2 = io.c[1] * io.c[3] * io.c[3];
    io.out[0] = io.l[0];
    io.out[1] = (io.q[0] - a * (w * io.t).sin()) / bh2;
    io.out[2] = io.l[0];
});
element_fn!(driver_iter, (1, 1, 1, 2, 2), |io| {
    io.out.copy_from_slice(&[1.0, 1.0]);
});
element_fn!(driver_ic, (1, 1, 1, 2, 5), |io| {
    let (a, w, t) = (io.p[0], io.p[1], io.t);
    // B = 1, Q − h = 0, Φ, Φ_t, −Φ_tt
    io.out.copy_from_slice(&[
        1.0,
        0.0,
        io.q[0] - a * (w * t).sin(),
        -a * w * (w * t).cos(),
        -a * w * w * (w * t).sin(),
    ]);
});

pub fn driver1() -> ElementType {
    make_type(TypeSpec {
        name: "driver",
        nq: 1,
        nv: 1,
        nl: 1,
        np: 2,
        owner: false,
        outputs: vec![],
        multipliers: vec!["drive.lambda".into()],
        roles: vec![
            (Role::Res, driver_res, vec![dense(1), dense(1), dense(1)]),
            (
                Role::Iter,
                driver_iter,
                vec![sparse(2, 2, &[(0, 1), (1, 0)])],
            ),
            (
                Role::Ic,
                driver_ic,
                vec![
                    sparse(1, 1, &[]),
                    sparse(1, 1, &[(0, 0)]),
                    dense(1),
                    dense(1),
                    dense(1),
                    dense(1),
                ],
            ),
        ],
    })
}

// ---------------------------------------------------------------- element state

// A connector on a 1-D mass without force whose state parameter p[0] counts accepted
// steps and p[1] keeps the largest position seen (the kind of state `post` is for).
element_fn!(tracker_zero, (1, 1, 0, 2, 2), |io| {
    io.out.fill(0.0);
});
element_fn!(tracker_ic, (1, 1, 0, 2, 1), |io| {
    io.out.fill(0.0);
});
element_fn!(tracker_post, (1, 1, 0, 2, 2), |io| {
    io.out[0] = io.p[0] + 1.0;
    io.out[1] = io.p[1].max(io.q[0]);
});
element_fn!(tracker_out, (1, 1, 0, 2, 2), |io| {
    io.out.copy_from_slice(&io.p[..2]);
});

pub fn tracker() -> ElementType {
    let mut t = make_type(TypeSpec {
        name: "tracker",
        nq: 1,
        nv: 1,
        nl: 0,
        np: 2,
        owner: false,
        outputs: vec!["count".into(), "max".into()],
        multipliers: vec![],
        roles: vec![
            (Role::Res, tracker_zero, vec![dense(1), dense(0), dense(1)]),
            (Role::Iter, tracker_zero, vec![sparse(1, 1, &[])]),
            (Role::Ic, tracker_ic, ic_blocks_one_dof()),
            (Role::Out, tracker_out, vec![dense(2)]),
            (Role::Post, tracker_post, vec![dense(2)]),
        ],
    });
    t.state_params = vec![0, 1];
    t
}

// ---------------------------------------------------------------- spherical joint

/// Tangent operator of SO(3): T(ψ) = I − (1−cos φ)/φ² ψ̃ + (φ − sin φ)/φ³ ψ̃².
pub fn tangent(psi: &[f64]) -> [[f64; 3]; 3] {
    let phi2 = psi[0] * psi[0] + psi[1] * psi[1] + psi[2] * psi[2];
    let phi = phi2.sqrt();
    let (a, b) = if phi < 1e-4 {
        (0.5 - phi2 / 24.0, 1.0 / 6.0 - phi2 / 120.0)
    } else {
        ((1.0 - phi.cos()) / phi2, (phi - phi.sin()) / (phi2 * phi))
    };
    let k = skew(psi);
    let k2 = matmul(&k, &k);
    let mut t = [[0.0; 3]; 3];
    for r in 0..3 {
        for c in 0..3 {
            t[r][c] = if r == c { 1.0 } else { 0.0 } - a * k[r][c] + b * k2[r][c];
        }
    }
    t
}

pub fn skew(a: &[f64]) -> [[f64; 3]; 3] {
    [[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]]
}

pub fn matmul(a: &[[f64; 3]; 3], b: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
    let mut m = [[0.0; 3]; 3];
    for r in 0..3 {
        for c in 0..3 {
            m[r][c] = (0..3).map(|k| a[r][k] * b[k][c]).sum();
        }
    }
    m
}

/// Local Iter entries of a spherical joint on `nb` bodies: body k has velocity columns
/// 6k..6k+6, the multipliers are 6nb..6nb+3. Per body: dyn-trans × λ (diagonal),
/// dyn-rot × λ, dyn-rot × rot, con × trans (diagonal), con × rot.
pub fn sph_entries(nb: usize) -> Vec<(u32, u32)> {
    let l0 = 6 * nb as u32;
    let mut e = vec![];
    for k in 0..nb as u32 {
        let (t0, r0) = (6 * k, 6 * k + 3);
        for i in 0..3 {
            e.push((t0 + i, l0 + i));
        }
        for i in 0..3 {
            for j in 0..3 {
                e.push((r0 + i, l0 + j));
            }
        }
        for i in 0..3 {
            for j in 0..3 {
                e.push((r0 + i, r0 + j));
            }
        }
        for i in 0..3 {
            e.push((l0 + i, t0 + i));
        }
        for i in 0..3 {
            for j in 0..3 {
                e.push((l0 + i, r0 + j));
            }
        }
    }
    e
}

/// Body k of a spherical joint: sign s, body-fixed point u, at q (7), Δ (6).
struct SphBody<'a> {
    s: f64,
    u: &'a [f64],
    q: &'a [f64],
    d: &'a [f64],
}

/// Φ = Σ s_k (R_k + A_k u_k) − p0.
fn sph_phi(bodies: &[SphBody], p0: &[f64]) -> [f64; 3] {
    let mut phi = [-p0[0], -p0[1], -p0[2]];
    for b in bodies {
        let au = matvec(&rot(&b.q[3..7]), b.u);
        for i in 0..3 {
            phi[i] += b.s * (b.q[i] + au[i]);
        }
    }
    phi
}

fn sph_res(bodies: &[SphBody], p0: &[f64], lam: &[f64], c: &[f64], out: &mut [f64]) {
    let nb = bodies.len();
    let bh2 = c[1] * c[3] * c[3];
    for (k, b) in bodies.iter().enumerate() {
        let atl = mat_t_vec(&rot(&b.q[3..7]), lam);
        let m = cross(b.u, &atl);
        for i in 0..3 {
            out[6 * k + i] = b.s * lam[i];
            out[6 * k + 3 + i] = b.s * m[i];
        }
    }
    let phi = sph_phi(bodies, p0);
    for i in 0..3 {
        out[6 * nb + i] = phi[i] / bh2;
    }
    let n = 6 * nb + 3;
    for k in 0..6 * nb {
        out[n + k] = out[k];
    }
}

fn sph_iter(bodies: &[SphBody], lam: &[f64], c: &[f64], out: &mut [f64]) {
    let bh2 = c[1] * c[3] * c[3];
    let mut o = 0;
    for b in bodies {
        let a = rot(&b.q[3..7]);
        let t = tangent(&b.d[3..6]);
        let su = skew(b.u);
        // dyn-trans × λ
        for _ in 0..3 {
            out[o] = b.s;
            o += 1;
        }
        // dyn-rot × λ: s ũ Aᵀ
        let ut_at = matmul(&su, &transpose(&a));
        for i in 0..3 {
            for j in 0..3 {
                out[o] = b.s * ut_at[i][j];
                o += 1;
            }
        }
        // dyn-rot × rot: β′h² s ũ (Aᵀλ)~ T
        let atl = mat_t_vec(&a, lam);
        let m = matmul(&matmul(&su, &skew(&atl)), &t);
        for i in 0..3 {
            for j in 0..3 {
                out[o] = bh2 * b.s * m[i][j];
                o += 1;
            }
        }
        // con × trans
        for _ in 0..3 {
            out[o] = b.s;
            o += 1;
        }
        // con × rot: −s A ũ T
        let m = matmul(&matmul(&a, &su), &t);
        for i in 0..3 {
            for j in 0..3 {
                out[o] = -b.s * m[i][j];
                o += 1;
            }
        }
    }
}

/// Ic: M (none), B, Q − h (0), Φ, Φ_t (0), −(∂(Bv)/∂δ) v.
fn sph_ic(bodies: &[SphBody], p0: &[f64], v: &[f64], out: &mut [f64]) {
    let nb = bodies.len();
    let mut o = 0;
    let mut acc = [0.0; 3];
    for (k, b) in bodies.iter().enumerate() {
        let a = rot(&b.q[3..7]);
        let au = matmul(&a, &skew(b.u));
        for i in 0..3 {
            // row i: trans entry, then rot entries (the order of sph_b_entries)
            out[o] = b.s;
            o += 1;
            for j in 0..3 {
                out[o] = -b.s * au[i][j];
                o += 1;
            }
        }
        // Acceleration of the point from the angular velocity: A (ω̄ × (ω̄ × u)).
        let w = &v[6 * k + 3..6 * k + 6];
        let wwu = matvec(&a, &cross(w, &cross(w, b.u)));
        for i in 0..3 {
            acc[i] -= b.s * wwu[i];
        }
    }
    let n_q = 6 * nb;
    out[o..o + n_q].fill(0.0);
    o += n_q;
    let phi = sph_phi(bodies, p0);
    out[o..o + 3].copy_from_slice(&phi);
    out[o + 3..o + 6].fill(0.0);
    out[o + 6..o + 9].copy_from_slice(&acc);
}

pub fn transpose(a: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
    [0, 1, 2].map(|i| [a[0][i], a[1][i], a[2][i]])
}

/// B entries of a spherical joint on `nb` bodies: row i: trans (k, i), rot (k, 3..6).
pub fn sph_b_entries(nb: usize) -> Vec<(u32, u32)> {
    let mut e = vec![];
    for k in 0..nb as u32 {
        for i in 0..3 {
            e.push((i, 6 * k + i));
            for j in 0..3 {
                e.push((i, 6 * k + 3 + j));
            }
        }
    }
    e
}

// Two bodies: p = [ua (3), ub (3)]; ground: p = [u (3), p0 (3)].
element_fn!(sph2_res, (14, 12, 3, 6, 27), |io| {
    let b = [
        SphBody {
            s: 1.0,
            u: &io.p[0..3],
            q: &io.q[0..7],
            d: &io.d[0..6],
        },
        SphBody {
            s: -1.0,
            u: &io.p[3..6],
            q: &io.q[7..14],
            d: &io.d[6..12],
        },
    ];
    sph_res(&b, &[0.0; 3], io.l, io.c, io.out);
});
element_fn!(sph2_iter, (14, 12, 3, 6, 66), |io| {
    let b = [
        SphBody {
            s: 1.0,
            u: &io.p[0..3],
            q: &io.q[0..7],
            d: &io.d[0..6],
        },
        SphBody {
            s: -1.0,
            u: &io.p[3..6],
            q: &io.q[7..14],
            d: &io.d[6..12],
        },
    ];
    sph_iter(&b, io.l, io.c, io.out);
});
element_fn!(sph2_ic, (14, 12, 3, 6, 24 + 12 + 9), |io| {
    let b = [
        SphBody {
            s: 1.0,
            u: &io.p[0..3],
            q: &io.q[0..7],
            d: &io.d[0..6],
        },
        SphBody {
            s: -1.0,
            u: &io.p[3..6],
            q: &io.q[7..14],
            d: &io.d[6..12],
        },
    ];
    sph_ic(&b, &[0.0; 3], io.v, io.out);
});
element_fn!(sph1_res, (7, 6, 3, 6, 15), |io| {
    let b = [SphBody {
        s: 1.0,
        u: &io.p[0..3],
        q: io.q,
        d: io.d,
    }];
    sph_res(&b, &io.p[3..6], io.l, io.c, io.out);
});
element_fn!(sph1_iter, (7, 6, 3, 6, 33), |io| {
    let b = [SphBody {
        s: 1.0,
        u: &io.p[0..3],
        q: io.q,
        d: io.d,
    }];
    sph_iter(&b, io.l, io.c, io.out);
});
element_fn!(sph1_ic, (7, 6, 3, 6, 12 + 6 + 9), |io| {
    let b = [SphBody {
        s: 1.0,
        u: &io.p[0..3],
        q: io.q,
        d: io.d,
    }];
    sph_ic(&b, &io.p[3..6], io.v, io.out);
});

pub fn spherical(nb: usize) -> ElementType {
    let nv = 6 * nb;
    let (res, iter, ic): (ElementFn, ElementFn, ElementFn) = if nb == 1 {
        (sph1_res, sph1_iter, sph1_ic)
    } else {
        (sph2_res, sph2_iter, sph2_ic)
    };
    make_type(TypeSpec {
        name: if nb == 1 {
            "spherical_ground"
        } else {
            "spherical"
        },
        nq: 7 * nb,
        nv,
        nl: 3,
        np: 6,
        owner: false,
        outputs: vec![],
        multipliers: vec!["x.lambda".into(), "y.lambda".into(), "z.lambda".into()],
        roles: vec![
            (Role::Res, res, vec![dense(nv), dense(3), dense(nv)]),
            (
                Role::Iter,
                iter,
                vec![sparse(nv + 3, nv + 3, &sph_entries(nb))],
            ),
            (
                Role::Ic,
                ic,
                vec![
                    sparse(nv, nv, &[]),
                    sparse(3, nv, &sph_b_entries(nb)),
                    dense(nv),
                    dense(3),
                    dense(3),
                    dense(3),
                ],
            ),
        ],
    })
}

/// A chain of `n` slender rigid bodies (1 kg, 1 m along their x axis) joined end to
/// end by spherical joints, the first hung from the origin, all on the x axis at rest,
/// gravity −z.
pub fn rigid_chain(n: usize) -> Model {
    let mut instances = Vec::new();
    for i in 0..n {
        let mut p = vec![1.0, 0.01, 1.0 / 12.0, 1.0 / 12.0, i as f64 + 0.5, 0.0, 0.0];
        p.extend_from_slice(&[1.0, 0.0, 0.0, 0.0]);
        p.extend_from_slice(&[0.0; 6]);
        p.extend_from_slice(&[0.0, 0.0, -9.81]);
        let q: Vec<usize> = (7 * i..7 * i + 7).collect();
        let v: Vec<usize> = (6 * i..6 * i + 6).collect();
        instances.push(inst(&format!("b{i}"), 0, p, &q, &v, &[]));
    }
    instances.push(inst(
        "j0",
        1,
        vec![-0.5, 0.0, 0.0, 0.0, 0.0, 0.0],
        &[0, 1, 2, 3, 4, 5, 6],
        &[0, 1, 2, 3, 4, 5],
        &[0, 1, 2],
    ));
    for i in 1..n {
        let q: Vec<usize> = (7 * (i - 1)..7 * (i + 1)).collect();
        let v: Vec<usize> = (6 * (i - 1)..6 * (i + 1)).collect();
        let l = [3 * i, 3 * i + 1, 3 * i + 2];
        instances.push(inst(
            &format!("j{i}"),
            2,
            vec![0.5, 0.0, 0.0, -0.5, 0.0, 0.0],
            &q,
            &v,
            &l,
        ));
    }
    Model {
        table: table(vec![rigid_body(), spherical(1), spherical(2)]),
        instances,
        nq: 7 * n,
        nv: 6 * n,
        nl: 3 * n,
        inputs: vec![],
        roads: Default::default(),
    }
}

// ---------------------------------------------------------------- models

pub fn table(types: Vec<ElementType>) -> FunctionTable {
    FunctionTable {
        abi_version: ABI_VERSION,
        types,
        owner: None,
        upgrade: Default::default(),
    }
}

pub fn inst(
    name: &str,
    ty: usize,
    params: Vec<f64>,
    q: &[usize],
    v: &[usize],
    l: &[usize],
) -> ElementInstance {
    ElementInstance {
        name: name.into(),
        type_index: ty,
        params,
        q_map: q.to_vec(),
        v_map: v.to_vec(),
        lambda_map: l.to_vec(),
    }
}

/// 1-D mass on a spring-damper: x(0) = x0, v(0) = v0.
pub fn spring_mass(m: f64, k: f64, d: f64, x0: f64, v0: f64) -> Model {
    Model {
        table: table(vec![point_mass::<1>(), spring1()]),
        instances: vec![
            inst(
                "mass",
                0,
                pm_params(m, &[x0], &[v0], &[0.0]),
                &[0],
                &[0],
                &[],
            ),
            inst("spring", 1, vec![k, 0.0, d], &[0], &[0], &[]),
        ],
        nq: 1,
        nv: 1,
        nl: 0,
        inputs: vec![],
        roads: Default::default(),
    }
}

/// A planar pendulum of length `l` released from `x0` (a point with |x0| = l for a
/// consistent start) under gravity g in −y.
pub fn pendulum(l: f64, x0: [f64; 2], g: f64) -> Model {
    Model {
        table: table(vec![point_mass::<2>(), anchor2()]),
        instances: vec![
            inst(
                "bob",
                0,
                pm_params(1.0, &x0, &[0.0, 0.0], &[0.0, -g]),
                &[0, 1],
                &[0, 1],
                &[],
            ),
            inst("rod", 1, vec![l, 0.0, 0.0], &[0, 1], &[0, 1], &[0]),
        ],
        nq: 2,
        nv: 2,
        nl: 1,
        inputs: vec![],
        roads: Default::default(),
    }
}

/// A chain of `n` unit masses joined by unit rods, the first hung from the origin,
/// all starting on the horizontal axis.
pub fn chain(n: usize) -> Model {
    let mut instances = Vec::new();
    for i in 0..n {
        let x = (i + 1) as f64;
        instances.push(inst(
            &format!("m{i}"),
            0,
            pm_params(1.0, &[x, 0.0], &[0.0, 0.0], &[0.0, -9.81]),
            &[2 * i, 2 * i + 1],
            &[2 * i, 2 * i + 1],
            &[],
        ));
    }
    instances.push(inst("j0", 1, vec![1.0, 0.0, 0.0], &[0, 1], &[0, 1], &[0]));
    for i in 1..n {
        let m = [2 * i - 2, 2 * i - 1, 2 * i, 2 * i + 1];
        instances.push(inst(&format!("j{i}"), 2, vec![1.0], &m, &m, &[i]));
    }
    Model {
        table: table(vec![point_mass::<2>(), anchor2(), rod2()]),
        instances,
        nq: 2 * n,
        nv: 2 * n,
        nl: n,
        inputs: vec![],
        roads: Default::default(),
    }
}

/// A heavy symmetric top: a rigid body (mass `m`, moments `j1` transverse and `j3`
/// axial about its centre of mass, which lies `l` along its body z axis from the tip)
/// whose tip a spherical joint holds at the origin, under gravity g in −z. It starts
/// with its axis tilted by `tilt` about x and spinning at `spin` about that axis, with
/// no precession and no nutation rate (released: it nutates).
pub fn heavy_top(m: f64, l: f64, j1: f64, j3: f64, tilt: f64, spin: f64) -> Model {
    let axis = [0.0, -tilt.sin(), tilt.cos()];
    let mut p = vec![m, j1, j1, j3, l * axis[0], l * axis[1], l * axis[2]];
    p.extend_from_slice(&[(0.5 * tilt).cos(), (0.5 * tilt).sin(), 0.0, 0.0]);
    // The spin about the axis through the fixed tip moves the centre of mass not.
    p.extend_from_slice(&[0.0; 3]);
    p.extend_from_slice(&[spin * axis[0], spin * axis[1], spin * axis[2]]);
    p.extend_from_slice(&[0.0, 0.0, -9.81]);
    let q: Vec<usize> = (0..7).collect();
    let v: Vec<usize> = (0..6).collect();
    Model {
        table: table(vec![rigid_body(), spherical(1)]),
        instances: vec![
            inst("top", 0, p, &q, &v, &[]),
            inst(
                "tip",
                1,
                vec![0.0, 0.0, -l, 0.0, 0.0, 0.0],
                &q,
                &v,
                &[0, 1, 2],
            ),
        ],
        nq: 7,
        nv: 6,
        nl: 3,
        inputs: vec![],
        roads: Default::default(),
    }
}

/// A four-bar of point masses in the vertical plane (gravity −y): ground pivots
/// O1 = (0, 0) and O2 = (2, 0), crank O1–A 0.6 m, coupler A–B 2 m, rocker O2–B 1 m
/// (Grashof: the crank can turn fully), 1 kg at A and at B, released at rest with the
/// crank at `theta` from the x axis (B on the upper branch). Unknowns: A (0, 1), B (2, 3).
pub fn four_bar(theta: f64) -> Model {
    let a = [0.6 * theta.cos(), 0.6 * theta.sin()];
    // B on the circles |B − A| = 2 and |B − O2| = 1.
    let (o2, r1, r2) = ([2.0, 0.0], 2.0, 1.0);
    let d = ((o2[0] - a[0]).powi(2) + (o2[1] - a[1]).powi(2)).sqrt();
    let along = (r1 * r1 - r2 * r2 + d * d) / (2.0 * d);
    let off = (r1 * r1 - along * along).sqrt();
    let u = [(o2[0] - a[0]) / d, (o2[1] - a[1]) / d];
    let b = [
        a[0] + along * u[0] - off * u[1],
        a[1] + along * u[1] + off * u[0],
    ];
    let g = [0.0, -9.81];
    Model {
        table: table(vec![point_mass::<2>(), anchor2(), rod2()]),
        instances: vec![
            inst(
                "A",
                0,
                pm_params(1.0, &a, &[0.0; 2], &g),
                &[0, 1],
                &[0, 1],
                &[],
            ),
            inst(
                "B",
                0,
                pm_params(1.0, &b, &[0.0; 2], &g),
                &[2, 3],
                &[2, 3],
                &[],
            ),
            inst("crank", 1, vec![0.6, 0.0, 0.0], &[0, 1], &[0, 1], &[0]),
            inst("rocker", 1, vec![1.0, 2.0, 0.0], &[2, 3], &[2, 3], &[1]),
            inst("coupler", 2, vec![2.0], &[0, 1, 2, 3], &[0, 1, 2, 3], &[2]),
        ],
        nq: 4,
        nv: 4,
        nl: 3,
        inputs: vec![],
        roads: Default::default(),
    }
}

pub mod spring2;
#[allow(unused_imports)] // only the Newton tests build the stiff chain
pub use spring2::{spring2, stiff_chain};
