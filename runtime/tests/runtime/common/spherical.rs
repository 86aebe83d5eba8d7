//! The spherical joint between two bodies or a body and a fixed point, with the
//! tangent operator T(Δ) of SO(3), and `rigid_chain`.

use super::*;

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
