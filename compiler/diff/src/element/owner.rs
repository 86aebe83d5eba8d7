//! `Init`, `Update` and `Scale`: the roles of an element that owns coordinates.

use super::ElementBuilder;
use super::RoleOutputs;
use crate::lie;
use crate::roles::{Block, DiffError, Role};
use fdc_abi::layout::THETA;
use fdc_ir::{Graph, Id, Slot};

impl ElementBuilder<'_> {
    /// `Init` ([q₀; q̇₀]), `Update` (q + Δ) and `Scale` (|q_i|) of a vector-space element.
    pub(super) fn vector_owner_roles(&mut self) -> Result<Vec<RoleOutputs>, DiffError> {
        let Some((q0, v0)) = self.vector_initial.take() else {
            return Err(
                self.error("a vector-space element needs its initial state (vector_initial)")
            );
        };
        let n = self.n_coords;
        let g = &mut *self.g;
        let mut init = q0;
        init.extend(v0);
        let q: Vec<Id> = (0..n).map(|i| g.input(Slot::Q, i)).collect();
        let update = additive_update(g, &q);
        let scale: Vec<Id> = q.iter().map(|&x| g.abs(x)).collect();
        Ok(vec![
            (
                Role::Init,
                init,
                vec![Block::Dense { len: n }, Block::Dense { len: n }],
            ),
            (Role::Update, update, vec![Block::Dense { len: n }]),
            (Role::Scale, scale, vec![Block::Dense { len: n }]),
        ])
    }

    /// `Init`, `Update` and `Scale` of an Euler-parameter body (theory 3.3):
    /// q₀ = [R₀; θ₀/|θ₀|], v₀ = [V₀; ½Ḡᵀ(Aᵀω₀)] (= ½Gᵀω₀), update q + Δ.
    pub(super) fn euler_owner_roles(&mut self) -> Result<Vec<RoleOutputs>, DiffError> {
        let Some(init) = self.initial.take() else {
            return Err(self.error("an Euler-parameter body needs its initial state"));
        };
        let g = &mut *self.g;
        let th0 = lie::normalize(g, init.orientation);
        let a0 = lie::shabana(g, th0);
        let wb = g.mat_t_vec(a0, init.angular_velocity);
        let twice = lie::two_gbar_t(g, th0, wb);
        let quarter = g.constant(0.25);
        let mut out: Vec<Id> = init.position.to_vec();
        out.extend(th0);
        out.extend(init.velocity);
        // ½Ḡᵀω̄ = ¼ (2Ḡᵀω̄).
        out.extend(twice.map(|x| g.mul(quarter, x)));
        let q: Vec<Id> = (0..7).map(|i| g.input(Slot::Q, i)).collect();
        let update = additive_update(g, &q);
        // |R| for the translations; θ is of order one, so its error is absolute.
        let n = g.norm([q[0], q[1], q[2]]);
        let z = g.constant(0.0);
        Ok(vec![
            (
                Role::Init,
                out,
                vec![Block::Dense { len: 7 }, Block::Dense { len: 7 }],
            ),
            (Role::Update, update, vec![Block::Dense { len: 7 }]),
            (
                Role::Scale,
                vec![n, n, n, z, z, z, z],
                vec![Block::Dense { len: 7 }],
            ),
        ])
    }

    /// `Init` ([R₀; V₀]), `Update` (q + Δ) and `Scale` (|R|) of a point mass; its
    /// initial orientation and angular velocity are not coordinates and are dropped.
    pub(super) fn point_owner_roles(&mut self) -> Result<Vec<RoleOutputs>, DiffError> {
        let Some(init) = self.initial.take() else {
            return Err(self.error("a point mass needs its initial state"));
        };
        let g = &mut *self.g;
        let mut out: Vec<Id> = init.position.to_vec();
        out.extend(init.velocity);
        let q: Vec<Id> = (0..3).map(|i| g.input(Slot::Q, i)).collect();
        let update = additive_update(g, &q);
        let n = g.norm([q[0], q[1], q[2]]);
        Ok(vec![
            (
                Role::Init,
                out,
                vec![Block::Dense { len: 3 }, Block::Dense { len: 3 }],
            ),
            (Role::Update, update, vec![Block::Dense { len: 3 }]),
            (Role::Scale, vec![n, n, n], vec![Block::Dense { len: 3 }]),
        ])
    }

    /// `Init`, `Update` and `Scale` of a rigid body.
    pub(super) fn owner_roles(&mut self) -> Result<Vec<RoleOutputs>, DiffError> {
        let Some(init) = self.initial.take() else {
            return Err(self.error("a rigid body needs its initial state (rigid_body_initial)"));
        };
        let g = &mut *self.g;
        let mut roles = Vec::new();

        // Init: q₀ = [R₀; θ₀/|θ₀|], v₀ = [v₀; Aᵀ ω₀].
        let th0 = lie::normalize(g, init.orientation);
        let a0 = lie::shabana(g, th0);
        let wb = g.mat_t_vec(a0, init.angular_velocity);
        let mut out: Vec<Id> = init.position.to_vec();
        out.extend(th0);
        out.extend(init.velocity);
        out.extend(wb);
        roles.push((
            Role::Init,
            out,
            vec![Block::Dense { len: 7 }, Block::Dense { len: 6 }],
        ));

        // Update: R + Δ_R; θ∘exp_H(Δ_φ), normalized.
        let r = [0, 1, 2].map(|i| g.input(Slot::Q, i));
        let th = THETA.map(|i| g.input(Slot::Q, i));
        let d = [0, 1, 2, 3, 4, 5].map(|i| g.input(Slot::Delta, i));
        let r1 = g.v3_add(r, [d[0], d[1], d[2]]);
        let e = lie::exp_quat(g, [d[3], d[4], d[5]]);
        let th1 = lie::hamilton(g, th, e);
        let th1 = lie::normalize(g, th1);
        let mut out = r1.to_vec();
        out.extend(th1);
        roles.push((Role::Update, out, vec![Block::Dense { len: 7 }]));

        // Scale: |R| for the translations, 0 for the rotation increments.
        let n = g.norm(r);
        let z = g.constant(0.0);
        roles.push((
            Role::Scale,
            vec![n, n, n, z, z, z],
            vec![Block::Dense { len: 6 }],
        ));
        Ok(roles)
    }
}

/// q + Δ, the update of coordinates in a vector space.
fn additive_update(g: &mut Graph, q: &[Id]) -> Vec<Id> {
    q.iter()
        .enumerate()
        .map(|(i, &x)| {
            let d = g.input(Slot::Delta, i);
            g.add2(x, d)
        })
        .collect()
}
