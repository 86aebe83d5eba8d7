//! The torque-free `rigid_body` on R³ × SO(3) and the small rotation helpers the
//! other hand-written types share (`rot`, `cross`, quaternion product and exp).

use super::*;

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
