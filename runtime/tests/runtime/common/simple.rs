//! Element types on vector-space masses: `point_mass::<D>`, `spring1`, `anchor2`,
//! `rod2`, the rheonomic `driver1` and the stateful `tracker`.

use super::*;

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
