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
            reads: fdc_runtime::table::Reads::ALL,
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

// The element types, by kind; each file `use super::*`, so the helpers above are
// theirs too (`element_fn!` is defined above these declarations, textual scope).
mod rigid;
mod simple;
mod spherical;
pub use rigid::*;
pub use simple::*;
pub use spherical::*;

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
