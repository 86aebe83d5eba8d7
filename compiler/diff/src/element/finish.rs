//! `ElementBuilder::finish`: the checks of a definition and the roles built from it.

use super::{
    mul_s, or_zero, rotation_sym, sum_opt, BodyKind, Coordinates, ElementBuilder, RoleOutputs,
};
use crate::ad::{self, Family, Grad, Seg};
use crate::lie;
use crate::roles::{Block, DiffError, ElementFunctions, Role};
use fdc_abi::layout::THETA;
use fdc_ir::{Func, Graph, Id, Op, Slot, SlotSizes, M3};
use std::collections::HashMap;

/// The integrator coefficients the roles share: 1+α′, β′h², γ′h.
struct Coefficients {
    one_pa: Id,
    bh2: Id,
    gh: Id,
}

impl ElementBuilder<'_> {
    /// False (and an error for `finish`) if an id is not a node of the graph, e.g. one
    /// from another graph.
    pub(super) fn exists(&mut self, ids: &[Id]) -> bool {
        if let Some(bad) = self.g.foreign(ids) {
            self.errors
                .push(format!("node {bad} is not in the element's graph"));
            return false;
        }
        true
    }

    /// The first leaf in the cones of `roots` that is not an input of this element
    /// (an index beyond its sizes, or a symbol that is no connected body's rotation
    /// matrix), described for an error message.
    pub(super) fn foreign_leaf(&self, roots: &[Id]) -> Option<String> {
        let nv = self.layout.nv();
        let nq = self.layout.nq();
        if let Some(n) = self.g.foreign(roots) {
            return Some(format!("node {n} is not in the element's graph"));
        }
        for n in self.g.cone(roots) {
            match self.g.op(n) {
                Op::Input(slot, i) => {
                    let size = match slot {
                        Slot::Q => nq,
                        Slot::V | Slot::Vdot | Slot::Delta => nv,
                        Slot::Lambda => self.constraints.len(),
                        Slot::P => self.n_params,
                        Slot::C => 4,
                        Slot::T => 1,
                    };
                    if i as usize >= size {
                        return Some(format!(
                            "input {}[{i}] read, but the element has {size} of them",
                            slot.name()
                        ));
                    }
                }
                Op::Sym(s) if s as usize >= 9 * self.n_bodies => {
                    return Some(format!(
                        "symbol s{s} is not the rotation matrix of a connected body"
                    ));
                }
                _ => {}
            }
        }
        None
    }

    /// Derives every role.
    pub fn finish(mut self) -> Result<ElementFunctions, DiffError> {
        if !self.errors.is_empty() {
            return Err(self.error(self.errors.join("; ")));
        }
        if let Some(bad) = self.foreign_leaf(&self.roots()) {
            return Err(self.error(bad));
        }
        if self.kind == Coordinates::EulerBody {
            self.add_norm_constraint();
        }
        let (nq, nv) = (self.layout.nq(), self.layout.nv());
        let (nl, np) = (self.constraints.len(), self.n_params);
        let phis: Vec<Id> = self.constraints.iter().map(|c| c.1).collect();
        self.check_holonomic()?;
        let b_rows: Vec<Grad> = phis
            .iter()
            .map(|&p| self.differ.grad(self.g, Family::Delta, p))
            .collect();
        self.check_point_rows(&b_rows)?;
        let [r_dyn, r_ng] = self.dynamic_rows(&b_rows);
        let m_rows = self.mass_rows(&r_dyn)?;

        // f = r_dyn at v̇ = 0.
        let vdot_zero = |op: Op| match op {
            Op::Input(Slot::Vdot, _) => Some(None),
            _ => None,
        };
        let mut memo = HashMap::new();
        let f_all = subst_rows(self.g, &r_dyn, &vdot_zero, &mut memo);
        let f_ng = subst_rows(self.g, &r_ng, &vdot_zero, &mut memo);

        let k = self.coefficients();
        let [r_out, r_out_ng] = self.residual_rows(&m_rows, [&f_all, &f_ng], k.one_pa);

        let mut roles: Vec<RoleOutputs> = Vec::new();
        roles.push(self.res_role(&r_out, &phis, &f_all, k.bh2));
        roles.extend(self.iteration_roles([&r_out, &r_out_ng], &b_rows, k.gh, k.bh2));
        roles.extend(fused_role(&roles));
        roles.push(self.ic_role(&m_rows, &b_rows, &r_dyn, &phis));
        let (out_names, out) = self.out_role();
        roles.push(out);
        let (state_params, post) = self.post_role();
        roles.push(post);
        match self.kind {
            Coordinates::RigidBody => roles.extend(self.owner_roles()?),
            Coordinates::VectorSpace => roles.extend(self.vector_owner_roles()?),
            Coordinates::EulerBody => roles.extend(self.euler_owner_roles()?),
            Coordinates::PointBody => roles.extend(self.point_owner_roles()?),
            Coordinates::Connector => {}
        }

        let sizes = SlotSizes([nq, nv, nv, nl, np, 4, nv, 1]);
        let mut funcs = self.substitute_rotations(roles, sizes)?;
        funcs.sort_by_key(|f| f.0);

        Ok(ElementFunctions {
            name: self.name.clone(),
            nq,
            nv,
            nl,
            np,
            owns_coordinates: self.kind != Coordinates::Connector,
            outputs: out_names,
            multipliers: self.constraints.iter().map(|c| c.0.clone()).collect(),
            state_params,
            roles: funcs,
        })
    }

    /// Every node the element defined: constraints, loads, outputs, states and the
    /// initial state.
    pub(super) fn roots(&self) -> Vec<Id> {
        let mut roots: Vec<Id> = self.constraints.iter().map(|c| c.1).collect();
        roots.extend(self.loads.iter().flatten().map(|l| l.0));
        roots.extend(self.outputs.iter().map(|o| o.1));
        roots.extend(self.states.iter().map(|s| s.1));
        if let Some(i) = &self.initial {
            roots.extend(i.position);
            roots.extend(i.orientation);
            roots.extend(i.velocity);
            roots.extend(i.angular_velocity);
        }
        if let Some((q0, v0)) = &self.vector_initial {
            roots.extend(q0);
            roots.extend(v0);
        }
        roots
    }

    /// A point mass has no rotation (A = I, ω = 0 are constants), so a row that would
    /// fix one of its rotations depends on no coordinate at all: an error naming the
    /// row, rather than a zero row the runtime would drop as redundant.
    fn check_point_rows(&self, b_rows: &[Grad]) -> Result<(), DiffError> {
        if !self.body_kinds.contains(&BodyKind::Point) {
            return Ok(());
        }
        let empty: Vec<&str> = b_rows
            .iter()
            .zip(&self.constraints)
            .filter(|(g, _)| g.is_empty())
            .map(|(_, c)| c.0.trim_end_matches(".lambda"))
            .collect();
        if empty.is_empty() {
            return Ok(());
        }
        Err(self.error(format!(
            "constraint rows {} depend on no coordinate: they would fix a rotation of a \
             point mass, which has none (connect a point mass only through its point: \
             spherical, rod, springs)",
            empty
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )))
    }

    /// Euler parameters are a unit quaternion only through this constraint.
    fn add_norm_constraint(&mut self) {
        let th = THETA.map(|i| self.g.input(Slot::Q, i));
        let sq: Vec<Id> = th.iter().map(|&x| self.g.powi(x, 2)).collect();
        let tt = self.g.sum(&sq).expect("four terms");
        let one = self.g.constant(1.0);
        let phi = self.g.sub(tt, one);
        self.constraints.push(("norm".to_string(), phi));
    }

    /// Constraints are holonomic or rheonomic: functions of (q, t) only.
    fn check_holonomic(&self) -> Result<(), DiffError> {
        for (name, phi) in &self.constraints {
            let bad = ad::cone_any(self.g, &[*phi], |op| {
                matches!(
                    op,
                    Op::Input(
                        Slot::V | Slot::Vdot | Slot::Lambda | Slot::Delta | Slot::C,
                        _
                    )
                )
            });
            if bad {
                return Err(self.error(format!(
                    "constraint `{name}` depends on velocities, accelerations, multipliers or \
                     integrator inputs; a constraint is a function of the configuration and time"
                )));
            }
        }
        Ok(())
    }

    /// r_dyn = −Q + Bᵀλ per velocity dof, with and without the gyroscopic loads; in
    /// sign-canonical form for an element without constraint rows (a force).
    fn dynamic_rows(&mut self, b_rows: &[Grad]) -> [Vec<Option<Id>>; 2] {
        let nv = self.layout.nv();
        let mut bt: Vec<Vec<Id>> = vec![Vec::new(); nv];
        for (j, row) in b_rows.iter().enumerate() {
            let lam = self.g.input(Slot::Lambda, j);
            for &(i, d) in row {
                let t = mul_s(self.g, d, lam);
                bt[i as usize].push(t);
            }
        }
        let mut r_dyn = Vec::with_capacity(nv);
        let mut r_ng = Vec::with_capacity(nv);
        for (loads, bti) in self.loads.iter().zip(&bt) {
            let all: Vec<Id> = loads.iter().map(|l| l.0).collect();
            let ng: Vec<Id> = loads.iter().filter(|l| !l.1).map(|l| l.0).collect();
            let btl = sum_opt(self.g, bti);
            for (terms, out) in [(all, &mut r_dyn), (ng, &mut r_ng)] {
                let q = sum_opt(self.g, &terms);
                let r = match (q, btl) {
                    (Some(q), Some(b)) => Some(self.g.sub(b, q)),
                    (Some(q), None) => Some(self.g.neg(q)),
                    (None, b) => b,
                };
                out.push(r);
            }
        }
        if !b_rows.is_empty() {
            // Measured (docs/performance.md, session 22): with constraint rows the
            // canonical rows cost the joints more than they save, since their rows
            // are not an action and its reaction.
            return [r_dyn, r_ng];
        }
        // In sign-canonical form a reaction's rows are its action's (`ad::signs`).
        let mut signs = ad::Signs::default();
        let r_dyn = signs.rows(self.g, &r_dyn);
        let r_ng = signs.rows(self.g, &r_ng);
        [r_dyn, r_ng]
    }

    /// M = ∂r_dyn/∂v̇ by rows, which must not depend on v̇ itself.
    fn mass_rows(&mut self, r_dyn: &[Option<Id>]) -> Result<Vec<Grad>, DiffError> {
        let mut m_rows = Vec::with_capacity(r_dyn.len());
        for r in r_dyn {
            let row = match r {
                Some(r) => self.differ.grad(self.g, Family::Vdot, *r),
                None => Grad::new(),
            };
            for &(_, m) in &row {
                if !self.differ.grad(self.g, Family::Vdot, m).is_empty() {
                    return Err(self.error(
                        "the loads are not linear in the accelerations (the mass matrix \
                         depends on v̇)",
                    ));
                }
            }
            m_rows.push(row);
        }
        Ok(m_rows)
    }

    /// The integrator coefficients the roles use, from c = (α′, β′, γ′, h).
    fn coefficients(&mut self) -> Coefficients {
        let c = [0, 1, 2, 3].map(|i| self.g.input(Slot::C, i));
        let one = self.g.constant(1.0);
        let one_pa = self.g.add2(one, c[0]);
        let hh = self.g.mul(c[3], c[3]);
        let bh2 = self.g.mul(c[1], hh);
        let gh = self.g.mul(c[2], c[3]);
        Coefficients { one_pa, bh2, gh }
    }

    /// r_dyn as output: M v̇/(1+α′) + f, by rows, for both sets of rows f (with and
    /// without the gyroscopic loads; row by row, so node ids follow one order).
    fn residual_rows(
        &mut self,
        m_rows: &[Grad],
        fs: [&[Option<Id>]; 2],
        one_pa: Id,
    ) -> [Vec<Option<Id>>; 2] {
        let nv = m_rows.len();
        let mut outs = [Vec::with_capacity(nv), Vec::with_capacity(nv)];
        for (i, row) in m_rows.iter().enumerate() {
            let mut terms = Vec::new();
            for &(j, m) in row {
                let a = self.g.input(Slot::Vdot, j as usize);
                terms.push(mul_s(self.g, m, a));
            }
            let mv = sum_opt(self.g, &terms).map(|mv| self.g.div(mv, one_pa));
            for (f, out) in fs.iter().zip(&mut outs) {
                out.push(match (mv, f[i]) {
                    (Some(a), Some(b)) => Some(self.g.add2(a, b)),
                    (a, b) => a.or(b),
                });
            }
        }
        outs
    }

    /// `Res`: r_dyn = M v̇/(1+α′) + f, the constraints scaled by 1/(β′h²), and f.
    fn res_role(
        &mut self,
        r_out: &[Option<Id>],
        phis: &[Id],
        f_all: &[Option<Id>],
        bh2: Id,
    ) -> RoleOutputs {
        let (nv, nl) = (r_out.len(), phis.len());
        let mut out = Vec::with_capacity(2 * nv + nl);
        for r in r_out {
            out.push(or_zero(self.g, *r));
        }
        for &p in phis {
            out.push(self.g.div(p, bh2));
        }
        for f in f_all {
            out.push(or_zero(self.g, *f));
        }
        let blocks = vec![
            Block::Dense { len: nv },
            Block::Dense { len: nl },
            Block::Dense { len: nv },
        ];
        (Role::Res, out, blocks)
    }

    /// `Iter` and `IterNoqv` from the residual rows with and without the gyroscopic
    /// loads: the tangent operator of every rigid body, then the iteration matrix.
    fn iteration_roles(
        &mut self,
        [r_out, r_out_ng]: [&[Option<Id>]; 2],
        b_rows: &[Grad],
        gh: Id,
        bh2: Id,
    ) -> Vec<RoleOutputs> {
        let (nb, nv, nl) = (self.n_bodies, r_out.len(), b_rows.len());
        let tangents: Vec<M3> = (0..nb)
            .map(|k| match self.body_segs[k] {
                Seg::Rigid { v, .. } => {
                    let psi = [3, 4, 5].map(|i| self.g.input(Slot::Delta, v as usize + i));
                    lie::tangent_so3(self.g, psi)
                }
                // Additive update: no tangent operator (never read).
                Seg::Vector { .. } => {
                    let z = self.g.constant(0.0);
                    [[z; 3]; 3]
                }
            })
            .collect();
        let bh2_t: Vec<M3> = tangents
            .iter()
            .map(|t| t.map(|row| row.map(|x| self.g.mul(bh2, x))))
            .collect();
        self.differ.set_iteration(gh, bh2, bh2_t, nv);
        let mut roles = Vec::with_capacity(2);
        for (role, rows) in [(Role::Iter, r_out), (Role::IterNoqv, r_out_ng)] {
            let (out, entries) = self.iteration_matrix(rows, b_rows, &tangents, gh, bh2);
            let blocks = vec![Block::Sparse {
                rows: nv + nl,
                cols: nv + nl,
                entries,
            }];
            roles.push((role, out, blocks));
        }
        roles
    }

    /// `Out`: a body's own channels (R, θ, Ṙ, ω, ω̄ by component; a point mass's R
    /// and Ṙ) then the declared outputs; with the channel names.
    fn out_role(&mut self) -> (Vec<String>, RoleOutputs) {
        let mut out_names = Vec::new();
        let mut out_ids = Vec::new();
        if self.kind == Coordinates::PointBody {
            let b = self.body(0);
            for (name, ids) in [("R", b.r), ("Rdot", b.rdot)] {
                for (c, id) in ["x", "y", "z"].iter().zip(ids) {
                    out_names.push(format!("{name}.{c}"));
                    out_ids.push(id);
                }
            }
        }
        if matches!(self.kind, Coordinates::RigidBody | Coordinates::EulerBody) {
            let b = self.body(0);
            let th = THETA.map(|i| self.g.input(Slot::Q, i));
            let w = self.omega(&b);
            let channels: [(&str, &[Id]); 5] = [
                ("R", &b.r),
                ("theta", &th),
                ("Rdot", &b.rdot),
                ("omega", &w),
                ("omega_body", &b.omega_bar),
            ];
            for (name, ids) in channels {
                let comps: &[&str] = if ids.len() == 4 {
                    &["w", "x", "y", "z"]
                } else {
                    &["x", "y", "z"]
                };
                for (c, &id) in comps.iter().zip(ids) {
                    out_names.push(format!("{name}.{c}"));
                    out_ids.push(id);
                }
            }
        }
        for (n, e) in &self.outputs {
            out_names.push(n.clone());
            out_ids.push(*e);
        }
        let n_out = out_ids.len();
        (
            out_names,
            (Role::Out, out_ids, vec![Block::Dense { len: n_out }]),
        )
    }

    /// `Post`: the new values of the state parameters; with their parameter indices.
    fn post_role(&mut self) -> (Vec<usize>, RoleOutputs) {
        let state_params: Vec<usize> = self.states.iter().map(|s| s.0).collect();
        let post: Vec<Id> = self.states.iter().map(|s| s.1).collect();
        let blocks = vec![Block::Dense {
            len: self.states.len(),
        }];
        (state_params, (Role::Post, post, blocks))
    }

    /// The role functions: every rotation-matrix symbol replaced by Shabana's matrix
    /// of the body's quaternion (an error if another symbol is left).
    fn substitute_rotations(
        &mut self,
        roles: Vec<RoleOutputs>,
        sizes: SlotSizes,
    ) -> Result<Vec<(Role, Func, Vec<Block>)>, DiffError> {
        let mut sym_map = HashMap::new();
        for k in 0..self.n_bodies {
            let Seg::Rigid { q, .. } = self.body_segs[k] else {
                continue;
            };
            let th = THETA.map(|i| self.g.input(Slot::Q, q as usize + i));
            let a = lie::shabana(self.g, th);
            for (i, row) in a.iter().enumerate() {
                for (j, &x) in row.iter().enumerate() {
                    sym_map.insert(rotation_sym(k, i, j), x);
                }
            }
        }
        let leaf = |op: Op| match op {
            Op::Sym(s) => sym_map.get(&s).map(|&x| Some(x)),
            _ => None,
        };
        let mut memo = HashMap::new();
        let mut funcs = Vec::new();
        for (role, outs, blocks) in roles {
            let new = ad::substitute(self.g, &outs, &leaf, &mut memo);
            let outputs: Vec<Id> = new.into_iter().map(|x| or_zero(self.g, x)).collect();
            if ad::cone_any(self.g, &outputs, |op| matches!(op, Op::Sym(_))) {
                return Err(self.error(format!(
                    "role {} uses a symbol that is not the rotation matrix of a connected body",
                    role.name()
                )));
            }
            let func = Func {
                name: format!("{}_{}", self.name, role.name()),
                inputs: sizes,
                outputs,
            };
            funcs.push((role, func, blocks));
        }
        Ok(funcs)
    }

    /// `Ic`: M, B, Q − h, Φ, Φ_t and −(Φ̈ − B v̇) for the initial conditions.
    fn ic_role(
        &mut self,
        m_rows: &[Grad],
        b_rows: &[Grad],
        r_dyn: &[Option<Id>],
        phis: &[Id],
    ) -> RoleOutputs {
        let nv = m_rows.len();
        let nl = b_rows.len();
        debug_assert_eq!(nl, phis.len());
        let mut out = Vec::new();
        let mut m_entries = Vec::new();
        for (i, row) in m_rows.iter().enumerate() {
            for &(j, m) in row {
                m_entries.push((i as u32, j));
                out.push(m);
            }
        }
        let mut b_entries = Vec::new();
        for (j, row) in b_rows.iter().enumerate() {
            for &(i, b) in row {
                b_entries.push((j as u32, i));
                out.push(b);
            }
        }
        // Q − h = −r_dyn at v̇ = 0, λ = 0.
        let zero_acc_lambda = |op: Op| match op {
            Op::Input(Slot::Vdot | Slot::Lambda, _) => Some(None),
            _ => None,
        };
        let mut memo = HashMap::new();
        let qh = subst_rows(self.g, r_dyn, &zero_acc_lambda, &mut memo);
        for x in qh {
            let v = match x {
                Some(x) => self.g.neg(x),
                None => self.g.constant(0.0),
            };
            out.push(v);
        }
        out.extend_from_slice(phis);
        // Φ_t, and Φ̈ − B v̇ = (∂(Bv)/∂δ) v + 2 (Bv)_t + Φ_tt, which is the rate of
        // the rate Bv + Φ_t with v held fixed (v̇ = 0): the rate family does not
        // differentiate v.
        let mut rhs = Vec::with_capacity(nl);
        for &phi in phis {
            let phi_t = self.differ.partial(self.g, Family::T, phi, 0);
            out.push(or_zero(self.g, phi_t));
            let acc = self
                .differ
                .partial(self.g, Family::Rate, phi, 0)
                .and_then(|r| self.differ.partial(self.g, Family::Rate, r, 0));
            rhs.push(match acc {
                Some(a) => self.g.neg(a),
                None => self.g.constant(0.0),
            });
        }
        out.extend(rhs);
        let blocks = vec![
            Block::Sparse {
                rows: nv,
                cols: nv,
                entries: m_entries,
            },
            Block::Sparse {
                rows: nl,
                cols: nv,
                entries: b_entries,
            },
            Block::Dense { len: nv },
            Block::Dense { len: nl },
            Block::Dense { len: nl },
            Block::Dense { len: nl },
        ];
        (Role::Ic, out, blocks)
    }
}

fn subst_rows(
    g: &mut Graph,
    rows: &[Option<Id>],
    leaf: ad::Leaf,
    memo: &mut HashMap<Id, Option<Id>>,
) -> Vec<Option<Id>> {
    rows.iter()
        .map(|r| r.and_then(|r| ad::substitute(g, &[r], leaf, memo)[0]))
        .collect()
}

/// `ResIter`: the outputs of `Iter` then those of `Res`, the same nodes, so one call
/// computes their shared subexpressions once and its values are those of the two roles
/// bit for bit. The driver serves `Iter` by it (its output begins with `Iter`'s), so
/// the iteration matrix is compiled once.
fn fused_role(roles: &[RoleOutputs]) -> Option<RoleOutputs> {
    let find = |role: Role| roles.iter().find(|r| r.0 == role);
    let (iter, res) = (find(Role::Iter)?, find(Role::Res)?);
    let outputs = iter.1.iter().chain(&res.1).copied().collect();
    let blocks = iter.2.iter().chain(&res.2).cloned().collect();
    Some((Role::ResIter, outputs, blocks))
}
