//! Linearization about the current state and the eigenmodes (theory §12).
//!
//! With α′ = 0, h = 1 and Δ = 0 the element `Iter` functions give, in the dynamic
//! rows and velocity columns, M + γ′C + β′K: two evaluations besides the one at
//! (β′, γ′) = (0, 0) separate the velocity Jacobian C (damping, gyroscopic terms) and
//! the stiffness K (which includes ∂(Bᵀλ)/∂δ and ∂(M v̇)/∂δ at the reference v̇, λ).
//! M and B come from `Ic`. The perturbation of the configuration is δ with
//! q = q_ref ∘ exp(δ); for the rotation dofs of a body its rate is
//! δ̇ = Δv + D δ with D = −ω̄̃_ref. Eliminating Δλ with a null-space basis N of B
//! (δ = N ξ) leaves
//!
//! ```text
//! M_r ξ̈ + C_r ξ̇ + K_r ξ = 0,  M_r = Nᵀ M N,  C_r = Nᵀ (C − M D) N,  K_r = Nᵀ (K − C D) N.
//! ```
//!
//! **Which dofs are rotations.** The runtime knows no physics; it takes the dofs 3..6
//! of every element that owns its coordinates with 7 stored coordinates and 6 velocity
//! dofs (the rigid body on R³ × SO(3): q = [R; θ], v = [Ṙ; ω̄], ω̄ in body axes) as the
//! rotation dofs. Vector-space bodies (q + Δ update) have D = 0.
//!
//! **Frames.** ω̄ and δ of the rotations are body-fixed, so for a body spinning at Ω
//! about its axis the frequencies of the tilt modes are those seen in the spinning
//! frame (the inertial whirl frequencies shifted by Ω); for a body at rest they are
//! the ordinary ones.

use faer::{Mat, Side};

pub use super::mode_shape::BodyMotion;
use super::mode_shape::{body_motions, BodyDofs};
use super::{call, sparse_entries, Coefficients, System, View};
use crate::error::RuntimeError;
use crate::table::Role;

/// What kind of eigenvalue a mode has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModeKind {
    /// A complex pair λ, λ̄: a (possibly damped) oscillation.
    Oscillation,
    /// A real, nonzero eigenvalue (an overdamped motion, or a divergence if positive).
    Real,
    /// A motion without stiffness (λ ≈ 0): a free or rigid-body dof, 0 Hz.
    RigidBody,
}

/// One eigenmode of the linearized, constrained system.
#[derive(Clone, Debug, PartialEq)]
pub struct Mode {
    pub kind: ModeKind,
    /// Eigenvalue λ = (Re, Im) of the first-order form [1/s]; Im ≥ 0 (one of a pair).
    /// (0, 0) for a rigid-body mode.
    pub eigenvalue: (f64, f64),
    /// |Im λ| / 2π [Hz]; 0 for real and rigid-body modes.
    pub frequency: f64,
    /// −Re λ / |λ|; 0 for rigid-body modes.
    pub damping_ratio: f64,
    /// Share of the kinetic energy of the mode per body (instance name), largest first,
    /// summing to 1 (empty if the mode moves no mass).
    pub energy: Vec<(String, f64)>,
    /// The mode vector: the shape per body that owns coordinates, in the model's
    /// order (`mode_shape`: translation and rotation amplitudes, largest 1).
    pub shape: Vec<BodyMotion>,
}

/// The linear system about a state and its modes. Matrices are dense, row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct Linearization {
    /// Time of the state.
    pub t: f64,
    pub nv: usize,
    /// Constraint rows in `b` (redundant rows removed at `initialize` are left out).
    pub nl: usize,
    /// nv × nv mass matrix.
    pub m: Vec<f64>,
    /// nv × nv velocity Jacobian (damping and gyroscopic terms).
    pub c: Vec<f64>,
    /// nv × nv stiffness (with ∂(Bᵀλ)/∂δ).
    pub k: Vec<f64>,
    /// nl × nv constraint Jacobian.
    pub b: Vec<f64>,
    /// nv × nv rotation correction D = −ω̄̃ on the rotation dofs of bodies.
    pub d: Vec<f64>,
    /// Accelerations and multipliers of the reference state, consistent with (q, v).
    pub vdot: Vec<f64>,
    pub lambda: Vec<f64>,
    /// Degrees of freedom left after the constraints (columns of N).
    pub dofs: usize,
    /// Rigid-body modes first, then by |λ|.
    pub modes: Vec<Mode>,
}

/// Relative level below which a singular value of B counts as zero (as for the
/// redundant rows at `initialize`).
const RANK_TOL: f64 = 1e-9;
/// Eigenvalues with |λ| ≤ EIG_TOL · √s, s the largest mass-normalized stiffness or
/// squared damping [1/s²], are zero: a double zero eigenvalue perturbed by round-off
/// moves by about √(ε s) ≈ 1.5e-8 √s, far below this.
const EIG_TOL: f64 = 1e-5;

/// A row-major n × m matrix as a faer matrix.
fn dense(n: usize, m: usize, a: &[f64]) -> Mat<f64> {
    Mat::from_fn(n, m, |i, j| a[i * m + j])
}

fn non_finite(what: &str) -> RuntimeError {
    RuntimeError::NotFinite {
        unknown: format!("linearization: {what}"),
        culprit: None,
    }
}

impl System {
    /// Linearizes about the current state (after [`System::initialize`], or after
    /// running to some time) and computes the eigenmodes. v̇ and λ are recomputed from
    /// the initial-condition system at the current (q, v), so a state that is not in
    /// equilibrium is linearized with multipliers consistent with it. The state of
    /// the integrator is not changed.
    pub fn linearize(&mut self) -> Result<Linearization, RuntimeError> {
        if !self.initialized {
            return Err(RuntimeError::NotInitialized);
        }
        let (nv, nl) = (self.nv, self.nl);
        let nx = nv + nl;

        // Consistent v̇ and λ at (q, v): [M Bᵀ; B 0] [v̇; λ] = [Q − h; rhs].
        let c0 = Coefficients {
            alpha: 0.0,
            beta: 1.0,
            gamma: 1.0,
            h: 1.0,
        };
        self.assemble_ic(&c0);
        let mut m = vec![0.0; nv * nv];
        let active: Vec<usize> = (0..nl).filter(|&l| !self.removed[l]).collect();
        let mut b = vec![0.0; active.len() * nv];
        for j in 0..nv {
            let (a, e) = (self.icp.col_ptr[j], self.icp.col_ptr[j + 1]);
            for k in a..e {
                let r = self.icp.row_idx[k];
                if r < nv {
                    m[r * nv + j] = self.icv[k];
                } else if let Ok(row) = active.binary_search(&(r - nv)) {
                    b[row * nv + j] = self.icv[k];
                }
            }
        }
        self.ic_solve(&c0)?;
        let vdot = self.ic_rhs[..nv].to_vec();
        let lambda = self.ic_rhs[nv..].to_vec();

        // Iteration matrices at (β′, γ′) = (0, 0), (0, 1), (1, 0).
        let j00 = self.dense_iteration_matrix(0.0, 0.0, &vdot, &lambda);
        let j01 = self.dense_iteration_matrix(0.0, 1.0, &vdot, &lambda);
        let j10 = self.dense_iteration_matrix(1.0, 0.0, &vdot, &lambda);
        let mut cmat = vec![0.0; nv * nv];
        let mut kmat = vec![0.0; nv * nv];
        for i in 0..nv {
            for j in 0..nv {
                cmat[i * nv + j] = j01[i * nx + j] - j00[i * nx + j];
                kmat[i * nv + j] = j10[i * nx + j] - j00[i * nx + j];
            }
        }
        for (what, a) in [("M", &m), ("B", &b), ("C", &cmat), ("K", &kmat)] {
            if a.iter().any(|x| !x.is_finite()) {
                return Err(non_finite(&format!("the matrix {what}")));
            }
        }

        let (dmat, owner, bodies) = self.rotation_rates();
        let mut lin = Linearization {
            t: self.t,
            nv,
            nl: active.len(),
            m,
            c: cmat,
            k: kmat,
            b,
            d: dmat,
            vdot,
            lambda,
            dofs: 0,
            modes: Vec::new(),
        };
        let names: Vec<&str> = self.inst.iter().map(|e| e.name.as_str()).collect();
        let energy = Energy {
            m: &dense(nv, nv, &lin.m),
            owner: &owner,
            names: &names,
            bodies: &bodies,
        };
        modes(&mut lin, &energy)?;
        Ok(lin)
    }

    /// The dense nx × nx iteration matrix at the current (q, v) and the given v̇, λ
    /// with coefficients (0, β′, γ′, 1).
    fn dense_iteration_matrix(
        &mut self,
        beta: f64,
        gamma: f64,
        vdot: &[f64],
        lambda: &[f64],
    ) -> Vec<f64> {
        let nx = self.nv + self.nl;
        let c = Coefficients {
            alpha: 0.0,
            beta,
            gamma,
            h: 1.0,
        };
        let mut j = vec![0.0; nx * nx];
        self.roads.feed(&mut self.inst, &self.q);
        let w = View {
            q: &self.q,
            v: &self.v,
            vd: vdot,
            lam: lambda,
            delta: &self.zeros_v,
            t: self.t,
        };
        let types = &self.table.types;
        for e in &self.inst {
            call(types, e, Role::Iter, &mut self.s, &w, &c);
            for (k, &(r, cc)) in sparse_entries(&types[e.ty], Role::Iter, 0)
                .iter()
                .enumerate()
            {
                j[e.x_map[r as usize] * nx + e.x_map[cc as usize]] += self.s.out[k];
            }
        }
        j
    }

    /// D = −ω̄̃ on the rotation dofs of rigid bodies (nv × nv), the body owning
    /// each velocity dof (`usize::MAX`: none) and the dofs of every owner.
    fn rotation_rates(&self) -> (Vec<f64>, Vec<usize>, Vec<BodyDofs>) {
        let nv = self.nv;
        let mut dmat = vec![0.0; nv * nv];
        let mut owner = vec![usize::MAX; nv];
        let mut bodies = Vec::new();
        for (i, e) in self.inst.iter().enumerate() {
            let ty = &self.table.types[e.ty];
            if !ty.owns_coordinates {
                continue;
            }
            for &g in &e.v_map {
                owner[g] = i;
            }
            bodies.push(BodyDofs::of(&e.name, ty.nq, &e.v_map));
            if ty.nq == 7 && ty.nv == 6 {
                let r = &e.v_map[3..6];
                let w = [self.v[r[0]], self.v[r[1]], self.v[r[2]]];
                // ω̃ = [[0, −w3, w2], [w3, 0, −w1], [−w2, w1, 0]]; D = −ω̃.
                let wt = [[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]];
                for a in 0..3 {
                    for bb in 0..3 {
                        dmat[r[a] * nv + r[bb]] = -wt[a][bb];
                    }
                }
            }
        }
        (dmat, owner, bodies)
    }
}

/// Null space of B, reduction, and the eigenmodes; fills `dofs` and `modes`.
fn modes(lin: &mut Linearization, energy: &Energy) -> Result<(), RuntimeError> {
    let nv = lin.nv;
    let m = energy.m;
    let (c, k, d) = (
        dense(nv, nv, &lin.c),
        dense(nv, nv, &lin.k),
        dense(nv, nv, &lin.d),
    );
    let n = null_space(lin)?;
    let r = n.ncols();
    lin.dofs = r;
    if r == 0 {
        return Ok(());
    }
    let nt = n.transpose();
    let mr = nt * m * &n;
    let cr = nt * (&c - m * &d) * &n;
    let kr = nt * (&k - &c * &d) * &n;
    let sqrt_inv = inverse_sqrt_mass(&mr)?;
    let kh = &sqrt_inv * &kr * &sqrt_inv;
    let ch = &sqrt_inv * &cr * &sqrt_inv;
    if kh.col_iter().any(|col| col.iter().any(|x| !x.is_finite()))
        || ch.col_iter().any(|col| col.iter().any(|x| !x.is_finite()))
    {
        return Err(non_finite("the reduced matrices"));
    }
    let shape_map = &n * &sqrt_inv;
    let (mut out, eig_tol) = rigid_body_modes(&kh, &ch, &shape_map, energy)?;
    out.extend(oscillations(&kh, &ch, &shape_map, &d, energy, eig_tol)?);
    lin.modes = out;
    Ok(())
}

/// Null-space basis N of B: the right singular vectors of zero singular values.
fn null_space(lin: &Linearization) -> Result<Mat<f64>, RuntimeError> {
    let nv = lin.nv;
    if lin.nl == 0 {
        return Ok(Mat::<f64>::identity(nv, nv));
    }
    let b = dense(lin.nl, nv, &lin.b);
    let svd = b
        .svd()
        .map_err(|_| non_finite("the SVD of B did not converge"))?;
    let s = svd.S().column_vector();
    let smax = (0..s.nrows()).map(|i| s[i]).fold(0.0, f64::max);
    let rank = (0..s.nrows())
        .filter(|&i| s[i] > RANK_TOL * smax && smax > 0.0)
        .count();
    let v = svd.V();
    Ok(Mat::from_fn(nv, nv - rank, |i, j| v[(i, rank + j)]))
}

/// Mass-normalized coordinates η = M_r^{1/2} ξ: S = M_r^{-1/2} of the reduced mass.
fn inverse_sqrt_mass(mr: &Mat<f64>) -> Result<Mat<f64>, RuntimeError> {
    let r = mr.nrows();
    let msym = Mat::from_fn(r, r, |i, j| 0.5 * (mr[(i, j)] + mr[(j, i)]));
    let evd = msym
        .self_adjoint_eigen(Side::Lower)
        .map_err(|_| non_finite("the eigenvalues of the reduced mass matrix"))?;
    let ev = evd.S().column_vector();
    let emax = (0..r).map(|i| ev[i].abs()).fold(0.0, f64::max);
    if let Some(i) = (0..r).find(|&i| ev[i] <= 1e-12 * emax || emax == 0.0) {
        return Err(RuntimeError::BadModel(format!(
            "linearization: the mass matrix on the constrained motion is not positive \
             definite (eigenvalue {:.3e}): a degree of freedom without mass",
            ev[i]
        )));
    }
    let u = evd.U();
    Ok(Mat::from_fn(r, r, |i, j| {
        (0..r)
            .map(|l| u[(i, l)] * u[(j, l)] / ev[l].sqrt())
            .sum::<f64>()
    }))
}

/// The kinetic energy per body of a mode's velocity field, and the dofs of the
/// bodies for the mode vector.
struct Energy<'a> {
    m: &'a Mat<f64>,
    owner: &'a [usize],
    names: &'a [&'a str],
    bodies: &'a [BodyDofs],
}

impl Energy<'_> {
    /// Shares per body of the velocity field Δv (complex, as re/im parts), largest
    /// first.
    fn shares(&self, dv_re: &Mat<f64>, dv_im: &Mat<f64>) -> Vec<(String, f64)> {
        let mre = self.m * dv_re;
        let mim = self.m * dv_im;
        let mut per = vec![0.0; self.names.len()];
        for i in 0..self.owner.len() {
            let e = dv_re[(i, 0)] * mre[(i, 0)] + dv_im[(i, 0)] * mim[(i, 0)];
            if self.owner[i] != usize::MAX {
                per[self.owner[i]] += e.max(0.0);
            }
        }
        let total: f64 = per.iter().sum();
        let mut v: Vec<(String, f64)> = if total > 0.0 {
            per.iter()
                .enumerate()
                .filter(|(_, &e)| e > 0.0)
                .map(|(i, &e)| (self.names[i].to_string(), e / total))
                .collect()
        } else {
            Vec::new()
        };
        v.sort_by(|a, b| b.1.total_cmp(&a.1));
        v
    }
}

/// The modes of the kernel of the mass-normalized stiffness K̂ (free motions), and
/// the level below which an eigenvalue is zero.
fn rigid_body_modes(
    kh: &Mat<f64>,
    ch: &Mat<f64>,
    shape_map: &Mat<f64>,
    energy: &Energy,
) -> Result<(Vec<Mode>, f64), RuntimeError> {
    let r = kh.nrows();
    // Scale of the problem [1/s²] and the kernel of the stiffness: rigid-body modes.
    let ksvd = kh
        .svd()
        .map_err(|_| non_finite("the SVD of the reduced stiffness did not converge"))?;
    let ks = ksvd.S().column_vector();
    let kmax = (0..r).map(|i| ks[i]).fold(0.0, f64::max);
    let cmax = ch.norm_l2();
    let scale = kmax.max(cmax * cmax);
    let eig_tol = EIG_TOL * scale.sqrt();
    let mut out = Vec::new();
    let kv = ksvd.V();
    let nv = shape_map.nrows();
    for i in 0..r {
        if ks[i] <= EIG_TOL * EIG_TOL * scale {
            // The shape of the free motion is the velocity field itself.
            let eta = Mat::from_fn(r, 1, |l, _| kv[(l, i)]);
            let shape = shape_map * &eta;
            let zero = Mat::<f64>::zeros(nv, 1);
            out.push(Mode {
                kind: ModeKind::RigidBody,
                eigenvalue: (0.0, 0.0),
                frequency: 0.0,
                damping_ratio: 0.0,
                energy: energy.shares(&shape, &zero),
                shape: body_motions(energy.bodies, &shape, &zero),
            });
        }
    }
    Ok((out, eig_tol))
}

/// The modes of the nonzero eigenvalues of the first-order form, by |λ|.
fn oscillations(
    kh: &Mat<f64>,
    ch: &Mat<f64>,
    shape_map: &Mat<f64>,
    d: &Mat<f64>,
    energy: &Energy,
    eig_tol: f64,
) -> Result<Vec<Mode>, RuntimeError> {
    let (r, nv) = (kh.nrows(), shape_map.nrows());
    // First-order form z = [η; η̇]: ż = [[0, I], [−K̂, −Ĉ]] z.
    let a = Mat::from_fn(2 * r, 2 * r, |i, j| match (i < r, j < r) {
        (true, true) => 0.0,
        (true, false) => {
            if j - r == i {
                1.0
            } else {
                0.0
            }
        }
        (false, true) => -kh[(i - r, j)],
        (false, false) => -ch[(i - r, j - r)],
    });
    let eig = a
        .eigen()
        .map_err(|_| non_finite("the eigenvalue iteration did not converge"))?;
    let s = eig.S().column_vector();
    let vecs = eig.U();
    let mut osc = Vec::new();
    for i in 0..2 * r {
        let (re, im) = (s[i].re, s[i].im);
        let abs = re.hypot(im);
        if abs <= eig_tol || im < 0.0 {
            continue;
        }
        // Δv = λ u − D u with u = N S η (complex).
        let eta_re = Mat::from_fn(r, 1, |l, _| vecs[(l, i)].re);
        let eta_im = Mat::from_fn(r, 1, |l, _| vecs[(l, i)].im);
        let u_re = shape_map * &eta_re;
        let u_im = shape_map * &eta_im;
        let du_re = d * &u_re;
        let du_im = d * &u_im;
        let dv_re = Mat::from_fn(nv, 1, |l, _| {
            re * u_re[(l, 0)] - im * u_im[(l, 0)] - du_re[(l, 0)]
        });
        let dv_im = Mat::from_fn(nv, 1, |l, _| {
            re * u_im[(l, 0)] + im * u_re[(l, 0)] - du_im[(l, 0)]
        });
        let kind = if im > 0.0 {
            ModeKind::Oscillation
        } else {
            ModeKind::Real
        };
        osc.push(Mode {
            kind,
            eigenvalue: (re, im),
            frequency: im / (2.0 * std::f64::consts::PI),
            // + 0.0 turns −0 (undamped) into 0.
            damping_ratio: -re / abs + 0.0,
            energy: energy.shares(&dv_re, &dv_im),
            shape: body_motions(energy.bodies, &u_re, &u_im),
        });
    }
    osc.sort_by(|a, b| {
        let x = a.eigenvalue.0.hypot(a.eigenvalue.1);
        let y = b.eigenvalue.0.hypot(b.eigenvalue.1);
        x.total_cmp(&y)
    });
    Ok(osc)
}
