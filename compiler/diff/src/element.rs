//! The element definition API and the construction of every role (theory §2–§7).
//!
//! An element is given by its constraints Φ (functions of the configuration and time),
//! its loads (forces, torques, generalized forces conjugate to measures; a rigid body's
//! Newton–Euler equations are loads with acceleration terms) and its outputs. Loads
//! become generalized forces Q by virtual power (theory 5.3); the residual is
//! r_dyn = −Q + Bᵀλ with B = ∂Φ/∂δ, and every role follows by exact differentiation
//! on the DAG ([`crate::ad`]).

use crate::ad::{self, Differ, Family, Grad, Layout, Seg};
use crate::lie;
use crate::roles::{Block, DiffError, ElementFunctions, Role};
use fdc_abi::layout::THETA;
use fdc_ir::{Func, Graph, Id, Op, Slot, SlotSizes, M3, V3};
use std::collections::{BTreeMap, HashMap};

/// What an element type owns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coordinates {
    /// A joint, force or sensor: acts on the coordinates of the bodies it connects.
    Connector,
    /// A rigid body on R³ × SO(3): connected body 0 of itself; owns q = [R; θ] and
    /// v = [Ṙ; ω̄], so `Init`, `Update` and `Scale` exist.
    RigidBody,
    /// An element with its own coordinates q ∈ Rⁿ and v = q̇ (theory 3.1); `n_bodies`
    /// of [`ElementBuilder::new`] is n. Its dynamics come from
    /// [`ElementBuilder::lagrangian`] and loads; update is q + Δ. It connects no bodies
    /// (an element that does is a connector whose first block are these coordinates,
    /// see [`ElementBuilder::with_bodies`]).
    VectorSpace,
    /// A rigid body with Euler parameters (theory 3.3): connected body 0 of itself, of
    /// [`BodyKind::Euler`]; owns q = [R; θ] and v = q̇ (7 each), update q + Δ.
    EulerBody,
}

/// How a connected body stores its configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BodyKind {
    /// q = [R; θ] (7), v = [Ṙ; ω̄] (6), q ↦ q∘exp(δ) (theory 3.2).
    Rigid,
    /// Euler parameters: q = [R; θ] (7), v = q̇ (7), q ↦ q + δ, ω̄ = 2Ḡθ̇ (theory 3.3).
    Euler,
}

/// How the dynamic rows of `iter` and `iter_noqv` are formed. Both forms are exact
/// derivatives of the same residual; they differ in operation count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IterationForm {
    /// Build both and keep the one with fewer operations (the default).
    #[default]
    Cheaper,
    /// ∂r/∂v̇ + γ′h ∂r/∂v + β′h² (∂r/∂δ) T(Δ) from the separate partial derivatives.
    Assembled,
    /// d r/dx in one forward pass through the discrete state x ↦ (q, v, v̇, λ).
    Direct,
}

/// The kinematic quantities of one connected body (or of ground) as IR nodes.
#[derive(Clone, Copy, Debug)]
pub struct BodyKin {
    /// Local index of the body; `None` for ground.
    pub index: Option<usize>,
    /// Position R (global).
    pub r: V3,
    /// Rotation matrix A (body to global): symbols, substituted at the end.
    pub a: M3,
    /// Ṙ (global).
    pub rdot: V3,
    /// ω̄ (body frame).
    pub omega_bar: V3,
    /// R̈ (global): accelerations, for inertial loads and outputs only.
    pub acc: V3,
    /// ω̄̇ (body frame).
    pub alpha_bar: V3,
}

struct Initial {
    position: V3,
    orientation: [Id; 4],
    velocity: V3,
    angular_velocity: V3,
}

/// Builds the functions of one element type in a shared graph.
pub struct ElementBuilder<'g> {
    g: &'g mut Graph,
    name: String,
    kind: Coordinates,
    n_bodies: usize,
    n_params: usize,
    differ: Differ,
    layout: Layout,
    /// The block of each connected body in `layout`.
    body_segs: Vec<Seg>,
    constraints: Vec<(String, Id)>,
    /// Generalized-force terms per velocity dof, with their gyroscopic flag.
    loads: Vec<Vec<(Id, bool)>>,
    gyroscopic: bool,
    outputs: Vec<(String, Id)>,
    states: Vec<(usize, Id)>,
    initial: Option<Initial>,
    vector_initial: Option<(Vec<Id>, Vec<Id>)>,
    /// Coordinates of a vector-space element (0 otherwise).
    n_coords: usize,
    iteration_form: IterationForm,
    errors: Vec<String>,
}

/// A role's outputs (before symbol substitution) and their layout.
type RoleOutputs = (Role, Vec<Id>, Vec<Block>);

/// Symbol number of entry (i, j) of the rotation matrix of connected body k. The same
/// meaning in every element, since inputs are local.
pub fn rotation_sym(k: usize, i: usize, j: usize) -> u32 {
    (9 * k + 3 * i + j) as u32
}

fn mul_s(g: &mut Graph, a: Id, b: Id) -> Id {
    // Unit factors are not multiplied in (x·1 = x exactly).
    if g.as_const(a) == Some(1.0) {
        b
    } else if g.as_const(b) == Some(1.0) {
        a
    } else {
        g.mul(a, b)
    }
}

/// m x (or mᵀ x), leaving out the terms of constant zero components of x and the
/// factors of unit ones: A e_x is the first column of A, not A·[1, 0, 0].
fn mat_vec_s(g: &mut Graph, m: M3, x: V3, transposed: bool) -> V3 {
    [0, 1, 2].map(|i| {
        let mut terms = Vec::with_capacity(3);
        for (j, &xj) in x.iter().enumerate() {
            if g.as_const(xj) == Some(0.0) {
                continue;
            }
            let mij = if transposed { m[j][i] } else { m[i][j] };
            terms.push(mul_s(g, mij, xj));
        }
        let s = g.sum(&terms);
        or_zero(g, s)
    })
}

fn sum_opt(g: &mut Graph, terms: &[Id]) -> Option<Id> {
    g.sum(terms)
}

fn or_zero(g: &mut Graph, x: Option<Id>) -> Id {
    x.unwrap_or_else(|| g.constant(0.0))
}

impl<'g> ElementBuilder<'g> {
    /// An element of rigid bodies only (or, for [`Coordinates::VectorSpace`], of
    /// `n_bodies` own coordinates and no bodies).
    pub fn new(
        graph: &'g mut Graph,
        name: &str,
        kind: Coordinates,
        n_bodies: usize,
        n_params: usize,
    ) -> Self {
        match kind {
            Coordinates::VectorSpace => {
                Self::with_bodies(graph, name, kind, n_bodies, &[], n_params)
            }
            Coordinates::EulerBody => {
                let mut b = Self::with_bodies(graph, name, kind, 0, &[BodyKind::Euler], n_params);
                if n_bodies != 1 {
                    b.errors.push(format!(
                        "a body is connected body 0 of itself, so it has 1 body, not {n_bodies}"
                    ));
                }
                b
            }
            _ => Self::with_bodies(
                graph,
                name,
                kind,
                0,
                &vec![BodyKind::Rigid; n_bodies],
                n_params,
            ),
        }
    }

    /// An element with `own` vector-space coordinates first (for a connector: those of
    /// a vector-space element, owned by another element) and then the connected bodies
    /// of the given kinds.
    pub fn with_bodies(
        graph: &'g mut Graph,
        name: &str,
        kind: Coordinates,
        own: usize,
        bodies: &[BodyKind],
        n_params: usize,
    ) -> Self {
        let mut errors = Vec::new();
        match kind {
            Coordinates::RigidBody if bodies != [BodyKind::Rigid] || own > 0 => {
                errors.push(format!(
                    "a rigid body is connected body 0 of itself, so it has 1 body, not {}",
                    bodies.len()
                ));
            }
            Coordinates::EulerBody if bodies != [BodyKind::Euler] || own > 0 => {
                errors.push("an Euler-parameter body is connected body 0 of itself".into());
            }
            Coordinates::VectorSpace if !bodies.is_empty() => {
                errors.push(
                    "a vector-space owner connects no bodies (use a connector with own \
                     coordinates)"
                        .into(),
                );
            }
            _ => {}
        }
        let mut layout = Layout::default();
        let (mut q, mut v) = (0u32, 0u32);
        if own > 0 {
            layout.segs.push(Seg::Vector {
                q,
                v,
                n: own as u32,
            });
            q += own as u32;
            v += own as u32;
        }
        let mut body_segs = Vec::new();
        for (k, b) in bodies.iter().enumerate() {
            let seg = match b {
                BodyKind::Rigid => Seg::Rigid {
                    q,
                    v,
                    body: k as u32,
                },
                BodyKind::Euler => Seg::Vector { q, v, n: 7 },
            };
            q += 7;
            v += if *b == BodyKind::Rigid { 6 } else { 7 };
            layout.segs.push(seg);
            body_segs.push(seg);
        }
        let nv = layout.nv();
        ElementBuilder {
            g: graph,
            name: name.to_string(),
            kind,
            n_bodies: bodies.len(),
            n_params,
            differ: Differ::with_layout(layout.clone()),
            layout,
            body_segs,
            constraints: Vec::new(),
            loads: vec![Vec::new(); nv],
            gyroscopic: false,
            outputs: Vec::new(),
            states: Vec::new(),
            initial: None,
            vector_initial: None,
            n_coords: own,
            iteration_form: IterationForm::default(),
            errors,
        }
    }

    /// The graph, to build expressions of the element.
    pub fn graph(&mut self) -> &mut Graph {
        self.g
    }

    /// Kinematics of connected body `k`.
    pub fn body(&mut self, k: usize) -> BodyKin {
        if k >= self.n_bodies && self.kind == Coordinates::VectorSpace {
            self.errors.push(format!(
                "body {k} used, but a vector-space element has coordinates, not bodies"
            ));
            return self.ground();
        }
        if k >= self.n_bodies {
            self.errors.push(format!(
                "body {k} used, but the element connects {} bodies",
                self.n_bodies
            ));
            return self.ground();
        }
        let g = &mut *self.g;
        let (qo, vo) = match self.body_segs[k] {
            Seg::Rigid { q, v, .. } => (q as usize, v as usize),
            Seg::Vector { q, v, .. } => {
                // Euler parameters: A(θ) and ω̄ = 2Ḡθ̇ straight from the coordinates,
                // so the derivatives are those of a vector space.
                let (q, v) = (q as usize, v as usize);
                let r = [0, 1, 2].map(|i| g.input(Slot::Q, q + i));
                let th = THETA.map(|i| g.input(Slot::Q, q + i));
                let thd = THETA.map(|i| g.input(Slot::V, v + i));
                let thdd = THETA.map(|i| g.input(Slot::Vdot, v + i));
                let a = lie::shabana(g, th);
                let omega_bar = lie::two_gbar(g, th, thd);
                // ω̄̇ = 2Ḡ(θ̇)θ̇ + 2Ḡ(θ)θ̈ and Ḡ(x)x = 0.
                let alpha_bar = lie::two_gbar(g, th, thdd);
                return BodyKin {
                    index: Some(k),
                    r,
                    a,
                    rdot: [0, 1, 2].map(|i| g.input(Slot::V, v + i)),
                    omega_bar,
                    acc: [0, 1, 2].map(|i| g.input(Slot::Vdot, v + i)),
                    alpha_bar,
                };
            }
        };
        let q = |g: &mut Graph, i: usize| g.input(Slot::Q, qo + i);
        let v3 = |g: &mut Graph, s: Slot, o: usize| [0, 1, 2].map(|i| g.input(s, vo + o + i));
        BodyKin {
            index: Some(k),
            r: [q(g, 0), q(g, 1), q(g, 2)],
            a: [0, 1, 2].map(|i| [0, 1, 2].map(|j| g.sym(rotation_sym(k, i, j)))),
            rdot: v3(g, Slot::V, 0),
            omega_bar: v3(g, Slot::V, 3),
            acc: v3(g, Slot::Vdot, 0),
            alpha_bar: v3(g, Slot::Vdot, 3),
        }
    }

    /// Ground: R = 0, A = I, no motion. Not a connected body; loads on it are dropped.
    pub fn ground(&mut self) -> BodyKin {
        let z = self.g.v3_const([0.0; 3]);
        let a = [
            self.g.v3_const([1.0, 0.0, 0.0]),
            self.g.v3_const([0.0, 1.0, 0.0]),
            self.g.v3_const([0.0, 0.0, 1.0]),
        ];
        BodyKin {
            index: None,
            r: z,
            a,
            rdot: z,
            omega_bar: z,
            acc: z,
            alpha_bar: z,
        }
    }

    fn vector_input(&mut self, slot: Slot, i: usize) -> Id {
        if i >= self.n_coords {
            self.errors.push(format!(
                "coordinate {i} used, but the element has {} own coordinates",
                self.n_coords
            ));
            return self.g.constant(f64::NAN);
        }
        self.g.input(slot, i)
    }

    /// Coordinate q_i of a vector-space element.
    pub fn coordinate(&mut self, i: usize) -> Id {
        self.vector_input(Slot::Q, i)
    }

    /// Velocity q̇_i of a vector-space element.
    pub fn velocity(&mut self, i: usize) -> Id {
        self.vector_input(Slot::V, i)
    }

    /// Acceleration q̈_i of a vector-space element (outputs only).
    pub fn acceleration(&mut self, i: usize) -> Id {
        self.vector_input(Slot::Vdot, i)
    }

    /// Lagrange's equations of a vector-space element from its kinetic energy
    /// T(q, q̇, t) and potential V(q, t) (theory 3.1), as loads:
    /// −(∂p/∂q̇) q̈ with p = ∂T/∂q̇ (the mass matrix part), −(∂V/∂q), and the
    /// gyroscopic part −((∂p/∂q) q̇ + ∂p/∂t − ∂T/∂q), i.e. −h of the kinetic energy.
    pub fn lagrangian(&mut self, kinetic: Id, potential: Id) {
        if !self.exists(&[kinetic, potential]) {
            return;
        }
        if self.n_coords == 0 {
            self.errors
                .push("a Lagrangian belongs to a vector-space element".to_string());
            return;
        }
        // Lagrange's equations hold for coordinates with v = q̇; a rigid body's δφ is
        // not such a coordinate, so T must not see the bodies.
        let n = self.n_coords as u32;
        let foreign = |g: &Grad| g.iter().any(|(d, _)| *d >= n);
        let (gv, gd) = (
            self.differ.grad(self.g, Family::V, kinetic),
            self.differ.grad(self.g, Family::Delta, kinetic),
        );
        if foreign(&gv) || foreign(&gd) {
            self.errors.push(
                "the kinetic energy may depend only on the element's own coordinates and \
                 their rates, not on connected bodies"
                    .to_string(),
            );
            return;
        }
        let p = gv;
        for (i, pi) in p {
            let i = i as usize;
            let mut terms = Vec::new();
            for (j, mij) in self.differ.grad(self.g, Family::V, pi) {
                let a = self.g.input(Slot::Vdot, j as usize);
                terms.push(mul_s(self.g, mij, a));
            }
            if let Some(mq) = sum_opt(self.g, &terms) {
                let l = self.g.neg(mq);
                self.loads[i].push((l, false));
            }
            // d/dt p at fixed q̇: the rate family does not differentiate v.
            if let Some(r) = self.differ.partial(self.g, Family::Rate, pi, 0) {
                let l = self.g.neg(r);
                self.loads[i].push((l, true));
            }
        }
        for (i, d) in self.differ.grad(self.g, Family::Delta, kinetic) {
            self.loads[i as usize].push((d, true));
        }
        for (i, d) in self.differ.grad(self.g, Family::Delta, potential) {
            let l = self.g.neg(d);
            self.loads[i as usize].push((l, false));
        }
    }

    /// Initial state of a vector-space element: q₀ and q̇₀ (n each).
    pub fn vector_initial(&mut self, q0: Vec<Id>, v0: Vec<Id>) {
        if self.kind != Coordinates::VectorSpace
            || q0.len() != self.n_coords
            || v0.len() != self.n_coords
        {
            self.errors.push(format!(
                "a vector-space initial state has {} coordinates and {} velocities \
                 (given {} and {})",
                self.n_coords,
                self.n_coords,
                q0.len(),
                v0.len()
            ));
            return;
        }
        self.vector_initial = Some((q0, v0));
    }

    pub fn param(&mut self, i: usize) -> Id {
        if i >= self.n_params {
            self.errors.push(format!(
                "parameter {i} used, but the element has {} parameters",
                self.n_params
            ));
            return self.g.constant(f64::NAN);
        }
        self.g.input(Slot::P, i)
    }

    pub fn time(&mut self) -> Id {
        self.g.input(Slot::T, 0)
    }

    /// The exact time derivative along the motion: (∂e/∂δ) v + ∂e/∂t (theory 4.2),
    /// plus (∂e/∂v) v̇ if `e` depends on the velocities (e.g. the rate of a velocity
    /// measure, for outputs). `e` must not depend on v̇ or λ.
    pub fn rate(&mut self, e: Id) -> Id {
        if !self.exists(&[e]) {
            return self.g.constant(f64::NAN);
        }
        if ad::cone_any(self.g, &[e], |op| {
            matches!(op, Op::Input(Slot::Vdot | Slot::Lambda, _))
        }) {
            self.errors
                .push("rate of an expression that depends on accelerations or multipliers".into());
        }
        let mut terms: Vec<Id> = self
            .differ
            .partial(self.g, Family::Rate, e, 0)
            .into_iter()
            .collect();
        for (i, d) in self.differ.grad(self.g, Family::V, e) {
            let a = self.g.input(Slot::Vdot, i as usize);
            terms.push(mul_s(self.g, d, a));
        }
        let r = sum_opt(self.g, &terms);
        or_zero(self.g, r)
    }

    /// P(u) = R + A u for a body-fixed u.
    pub fn point(&mut self, b: &BodyKin, u: V3) -> V3 {
        if !self.exists(&u) {
            return self.g.v3_const([f64::NAN; 3]);
        }
        if b.index.is_none() {
            return u;
        }
        let au = mat_vec_s(self.g, b.a, u, false);
        self.g.v3_add(b.r, au)
    }

    /// v_P(u) = Ṙ + A(ω̄ × u).
    pub fn point_velocity(&mut self, b: &BodyKin, u: V3) -> V3 {
        if !self.exists(&u) {
            return self.g.v3_const([f64::NAN; 3]);
        }
        if b.index.is_none() {
            return b.rdot;
        }
        let wu = self.g.cross(b.omega_bar, u);
        let awu = mat_vec_s(self.g, b.a, wu, false);
        self.g.v3_add(b.rdot, awu)
    }

    /// a_P(u) = R̈ + A(ω̄̇ × u + ω̄ × (ω̄ × u)) (theory 4.1; for outputs, never in force
    /// laws).
    pub fn point_acceleration(&mut self, b: &BodyKin, u: V3) -> V3 {
        if !self.exists(&u) {
            return self.g.v3_const([f64::NAN; 3]);
        }
        if b.index.is_none() {
            return b.acc;
        }
        let au = self.g.cross(b.alpha_bar, u);
        let wu = self.g.cross(b.omega_bar, u);
        let wwu = self.g.cross(b.omega_bar, wu);
        let s = self.g.v3_add(au, wwu);
        let a = mat_vec_s(self.g, b.a, s, false);
        self.g.v3_add(b.acc, a)
    }

    /// ω̇ = A ω̄̇ (global; outputs only).
    pub fn angular_acceleration(&mut self, b: &BodyKin) -> V3 {
        if b.index.is_none() {
            return b.alpha_bar;
        }
        mat_vec_s(self.g, b.a, b.alpha_bar, false)
    }

    /// ω = A ω̄ (global).
    pub fn omega(&mut self, b: &BodyKin) -> V3 {
        if b.index.is_none() {
            return b.omega_bar;
        }
        mat_vec_s(self.g, b.a, b.omega_bar, false)
    }

    /// A b for a body-fixed direction b.
    pub fn axis(&mut self, b: &BodyKin, u: V3) -> V3 {
        if !self.exists(&u) {
            return self.g.v3_const([f64::NAN; 3]);
        }
        if b.index.is_none() {
            return u;
        }
        mat_vec_s(self.g, b.a, u, false)
    }

    /// A constraint row Φ = 0 (a function of the configuration and time).
    pub fn constrain(&mut self, name: &str, phi: Id) {
        self.constraints.push((name.to_string(), phi));
    }

    /// How `iter` and `iter_noqv` are formed (default: the cheaper of both forms).
    pub fn set_iteration_form(&mut self, form: IterationForm) {
        self.iteration_form = form;
    }

    /// Loads added from now on are (not) gyroscopic: `IterNoqv` leaves out their
    /// derivatives (theory 7.1, the legacy option).
    pub fn set_gyroscopic(&mut self, on: bool) {
        self.gyroscopic = on;
    }

    fn load(&mut self, dof: usize, term: Id) {
        self.loads[dof].push((term, self.gyroscopic));
    }

    /// A force f (global) at the body-fixed point `at`: Q_R += f, Q_ω̄ += at × Aᵀf.
    pub fn force(&mut self, b: &BodyKin, f: V3, at: V3) {
        if !self.exists(&[f, at].concat()) {
            return;
        }
        let Some(k) = b.index else { return };
        let vo = self.body_v(k);
        for (i, &fi) in f.iter().enumerate() {
            self.load(vo + i, fi);
        }
        if at.iter().all(|&x| self.g.as_const(x) == Some(0.0)) {
            return;
        }
        let fb = mat_vec_s(self.g, b.a, f, true);
        let m = self.g.cross(at, fb);
        self.load_body_torque(k, m);
    }

    /// The first velocity dof of connected body k.
    fn body_v(&self, k: usize) -> usize {
        match self.body_segs[k] {
            Seg::Rigid { v, .. } | Seg::Vector { v, .. } => v as usize,
        }
    }

    /// Q += (∂ω̄/∂v)ᵀ m̄: m̄ itself on δφ of a rigid body, 2Ḡᵀm̄ on θ̇ of an
    /// Euler-parameter body.
    fn load_body_torque(&mut self, k: usize, m_bar: V3) {
        let vo = self.body_v(k);
        match self.body_segs[k] {
            Seg::Rigid { .. } => {
                for (i, &mi) in m_bar.iter().enumerate() {
                    self.load(vo + 3 + i, mi);
                }
            }
            Seg::Vector { q, .. } => {
                let th = THETA.map(|i| self.g.input(Slot::Q, q as usize + i));
                let t = lie::two_gbar_t(self.g, th, m_bar);
                for (l, &tl) in t.iter().enumerate() {
                    self.load(vo + 3 + l, tl);
                }
            }
        }
    }

    /// A torque m (global): Q_ω̄ += Aᵀ m.
    pub fn torque(&mut self, b: &BodyKin, m: V3) {
        if !self.exists(&m) {
            return;
        }
        let Some(k) = b.index else { return };
        let mb = mat_vec_s(self.g, b.a, m, true);
        self.load_body_torque(k, mb);
    }

    /// A torque m̄ in body components: Q_ω̄ += m̄.
    pub fn body_torque(&mut self, b: &BodyKin, m_bar: V3) {
        if !self.exists(&m_bar) {
            return;
        }
        let Some(k) = b.index else { return };
        self.load_body_torque(k, m_bar);
    }

    /// A generalized force s conjugate to a measure m (a function of the configuration
    /// and time): Q += s (∂ṁ/∂v)ᵀ = s (∂m/∂δ)ᵀ.
    pub fn generalized(&mut self, s: Id, measure: Id) {
        if !self.exists(&[s, measure]) {
            return;
        }
        if ad::cone_any(self.g, &[measure], |op| {
            matches!(op, Op::Input(Slot::V | Slot::Vdot | Slot::Lambda, _))
        }) {
            self.errors.push(
                "a generalized force needs a measure of the configuration and time; this \
                 one depends on velocities, accelerations or multipliers"
                    .into(),
            );
            return;
        }
        if let Some(bad) = self.foreign_leaf(&[measure]) {
            self.errors
                .push(format!("measure of a generalized force: {bad}"));
            return;
        }
        let gd = self.differ.grad(self.g, Family::Delta, measure);
        for (i, d) in gd {
            let t = mul_s(self.g, s, d);
            self.load(i as usize, t);
        }
    }

    /// A result channel of `Out`.
    pub fn output(&mut self, name: &str, e: Id) {
        self.outputs.push((name.to_string(), e));
    }

    /// Three result channels `name.x`, `name.y`, `name.z`.
    pub fn output_v3(&mut self, name: &str, e: V3) {
        for (c, x) in ["x", "y", "z"].iter().zip(e) {
            self.output(&format!("{name}.{c}"), x);
        }
    }

    /// After every accepted step, parameter `param` becomes `e` (element state).
    pub fn state(&mut self, param: usize, e: Id) {
        if param >= self.n_params {
            self.errors.push(format!(
                "state parameter {param}, but the element has {} parameters",
                self.n_params
            ));
            return;
        }
        self.states.push((param, e));
    }

    /// Initial state of a rigid body from its parameters: position, orientation
    /// (a quaternion, normalized here), velocity and angular velocity (both global).
    pub fn rigid_body_initial(
        &mut self,
        position: V3,
        orientation: [Id; 4],
        velocity: V3,
        angular_velocity: V3,
    ) {
        if !matches!(self.kind, Coordinates::RigidBody | Coordinates::EulerBody) {
            self.errors
                .push("only a rigid body has a rigid-body initial state".to_string());
            return;
        }
        self.initial = Some(Initial {
            position,
            orientation,
            velocity,
            angular_velocity,
        });
    }

    fn error(&self, message: impl Into<String>) -> DiffError {
        DiffError {
            element: self.name.clone(),
            message: message.into(),
        }
    }

    /// False (and an error for `finish`) if an id is not a node of the graph, e.g. one
    /// from another graph.
    fn exists(&mut self, ids: &[Id]) -> bool {
        let n = self.g.len();
        if let Some(bad) = ids.iter().find(|id| id.index() >= n) {
            self.errors
                .push(format!("node %{} is not in the element's graph", bad.0));
            return false;
        }
        true
    }

    /// The first leaf in the cones of `roots` that is not an input of this element
    /// (an index beyond its sizes, or a symbol that is no connected body's rotation
    /// matrix), described for an error message.
    fn foreign_leaf(&self, roots: &[Id]) -> Option<String> {
        let nv = self.layout.nv();
        let nq = self.layout.nq();
        let mut seen = std::collections::HashSet::new();
        let mut stack = roots.to_vec();
        while let Some(n) = stack.pop() {
            if !seen.insert(n) {
                continue;
            }
            if n.index() >= self.g.len() {
                return Some(format!("node %{} is not in the element's graph", n.0));
            }
            let op = self.g.op(n);
            match op {
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
                _ => stack.extend(op.operands()),
            }
        }
        None
    }

    /// Derives every role.
    pub fn finish(mut self) -> Result<ElementFunctions, DiffError> {
        if !self.errors.is_empty() {
            return Err(self.error(self.errors.join("; ")));
        }
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
        if let Some(bad) = self.foreign_leaf(&roots) {
            return Err(self.error(bad));
        }
        if self.kind == Coordinates::EulerBody {
            // Euler parameters are a unit quaternion only through this constraint.
            let th = THETA.map(|i| self.g.input(Slot::Q, i));
            let sq: Vec<Id> = th.iter().map(|&x| self.g.powi(x, 2)).collect();
            let tt = self.g.sum(&sq).expect("four terms");
            let one = self.g.constant(1.0);
            let phi = self.g.sub(tt, one);
            self.constraints.push(("norm".to_string(), phi));
        }
        let (nq, nv) = (self.layout.nq(), self.layout.nv());
        let (nl, np) = (self.constraints.len(), self.n_params);
        let phis: Vec<Id> = self.constraints.iter().map(|c| c.1).collect();

        // Constraints are holonomic or rheonomic: functions of (q, t) only.
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
        let b_rows: Vec<Grad> = phis
            .iter()
            .map(|&p| self.differ.grad(self.g, Family::Delta, p))
            .collect();

        // r_dyn = −Q + Bᵀλ, with and without the gyroscopic loads.
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

        // M = ∂r_dyn/∂v̇, which must not depend on v̇ itself.
        let mut m_rows = Vec::with_capacity(nv);
        for r in &r_dyn {
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

        // f = r_dyn at v̇ = 0.
        let vdot_zero = |op: Op| match op {
            Op::Input(Slot::Vdot, _) => Some(None),
            _ => None,
        };
        let mut memo = HashMap::new();
        let f_all = subst_rows(self.g, &r_dyn, &vdot_zero, &mut memo);
        let f_ng = subst_rows(self.g, &r_ng, &vdot_zero, &mut memo);

        let c = [0, 1, 2, 3].map(|i| self.g.input(Slot::C, i));
        let one = self.g.constant(1.0);
        let one_pa = self.g.add2(one, c[0]);
        let hh = self.g.mul(c[3], c[3]);
        let bh2 = self.g.mul(c[1], hh);
        let gh = self.g.mul(c[2], c[3]);

        // r_dyn as output: M v̇/(1+α′) + f.
        let mut r_out = Vec::with_capacity(nv);
        let mut r_out_ng = Vec::with_capacity(nv);
        for i in 0..nv {
            let mut terms = Vec::new();
            for &(j, m) in &m_rows[i] {
                let a = self.g.input(Slot::Vdot, j as usize);
                terms.push(mul_s(self.g, m, a));
            }
            let mv = sum_opt(self.g, &terms).map(|mv| self.g.div(mv, one_pa));
            for (f, out) in [(f_all[i], &mut r_out), (f_ng[i], &mut r_out_ng)] {
                out.push(match (mv, f) {
                    (Some(a), Some(b)) => Some(self.g.add2(a, b)),
                    (a, b) => a.or(b),
                });
            }
        }

        let mut roles: Vec<RoleOutputs> = Vec::new();

        roles.push(self.res_role(&r_out, &phis, &f_all, bh2));
        roles.extend(self.iteration_roles([&r_out, &r_out_ng], &b_rows, gh, bh2));

        // Ic.
        roles.push(self.initial_conditions(&m_rows, &b_rows, &r_dyn, &phis));

        let (out_names, out) = self.out_role();
        roles.push(out);

        let (state_params, post) = self.post_role();
        roles.push(post);

        match self.kind {
            Coordinates::RigidBody => roles.extend(self.owner_roles()?),
            Coordinates::VectorSpace => roles.extend(self.vector_owner_roles()?),
            Coordinates::EulerBody => roles.extend(self.euler_owner_roles()?),
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

    /// `Out`: a body's own channels (R, θ, Ṙ, ω, ω̄ by component) then the declared
    /// outputs; with the channel names.
    fn out_role(&mut self) -> (Vec<String>, RoleOutputs) {
        let mut out_names = Vec::new();
        let mut out_ids = Vec::new();
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

    /// (∂r/∂δ) T(Δ) for one sparse row: translations unchanged, the three rotation
    /// columns of body k multiplied by T_SO(3)(Δφ_k).
    fn times_tangent(&mut self, row: &Grad, tangents: &[M3]) -> Grad {
        let mut cols: BTreeMap<u32, Vec<Id>> = BTreeMap::new();
        for &(c, d) in row {
            // Translations and additive (vector-space) dofs: the identity.
            let Some((k, m)) = self.layout.rotation_dof(c) else {
                cols.entry(c).or_default().push(d);
                continue;
            };
            let base = c - m as u32;
            for (n, &tmn) in tangents[k as usize][m].iter().enumerate() {
                let t = mul_s(self.g, d, tmn);
                cols.entry(base + n as u32).or_default().push(t);
            }
        }
        cols.into_iter()
            .map(|(c, terms)| (c, self.g.sum(&terms).expect("entries have terms")))
            .collect()
    }

    /// The dynamic rows of the iteration matrix assembled from the partial
    /// derivatives: ∂r/∂v̇ + γ′h ∂r/∂v + β′h² (∂r/∂δ) T(Δ) | ∂r/∂λ.
    fn assembled_rows(
        &mut self,
        rows: &[Option<Id>],
        tangents: &[M3],
        gh: Id,
        bh2: Id,
    ) -> (Vec<Id>, Vec<(u32, u32)>) {
        let nv = rows.len();
        let mut out = Vec::new();
        let mut entries = Vec::new();
        for (i, r) in rows.iter().enumerate() {
            let Some(r) = *r else { continue };
            let gvd = self.differ.grad(self.g, Family::Vdot, r);
            let gv = self.differ.grad(self.g, Family::V, r);
            let gd = self.differ.grad(self.g, Family::Delta, r);
            let gl = self.differ.grad(self.g, Family::Lambda, r);
            let gdt = self.times_tangent(&gd, tangents);
            let mut cols: BTreeMap<u32, Vec<Id>> = BTreeMap::new();
            for (c, d) in gvd {
                cols.entry(c).or_default().push(d);
            }
            for (c, d) in gv {
                let t = mul_s(self.g, gh, d);
                cols.entry(c).or_default().push(t);
            }
            for (c, d) in gdt {
                let t = mul_s(self.g, bh2, d);
                cols.entry(c).or_default().push(t);
            }
            for (c, terms) in cols {
                entries.push((i as u32, c));
                out.push(self.g.sum(&terms).expect("entries have terms"));
            }
            for (j, d) in gl {
                entries.push((i as u32, nv as u32 + j));
                out.push(d);
            }
        }
        (out, entries)
    }

    /// The dynamic rows as d r/dx in one forward pass through the discrete state
    /// (the `Iter` family). Cheaper when the rows depend on few rotation matrices
    /// through long chains (forces), costlier for short ones (constraint reactions).
    fn direct_rows(&mut self, rows: &[Option<Id>]) -> (Vec<Id>, Vec<(u32, u32)>) {
        let mut out = Vec::new();
        let mut entries = Vec::new();
        for (i, r) in rows.iter().enumerate() {
            let Some(r) = *r else { continue };
            for (c, d) in self.differ.grad(self.g, Family::Iter, r) {
                entries.push((i as u32, c));
                out.push(d);
            }
        }
        (out, entries)
    }

    fn iteration_matrix(
        &mut self,
        rows: &[Option<Id>],
        b_rows: &[Grad],
        tangents: &[M3],
        gh: Id,
        bh2: Id,
    ) -> (Vec<Id>, Vec<(u32, u32)>) {
        let nv = rows.len();
        // Both forms are exact; keep the one with fewer operations (the rows of the
        // other stay unused in the graph).
        let (mut out, mut entries) = match self.iteration_form {
            IterationForm::Assembled => self.assembled_rows(rows, tangents, gh, bh2),
            IterationForm::Direct => self.direct_rows(rows),
            IterationForm::Cheaper => {
                let a = self.assembled_rows(rows, tangents, gh, bh2);
                let d = self.direct_rows(rows);
                if ad::op_count(self.g, &d.0) < ad::op_count(self.g, &a.0) {
                    d
                } else {
                    a
                }
            }
        };
        // Constraint rows: ∂(Φ/(β′h²))/∂δ · β′h² T = B T exactly; Φ has no v, v̇, λ.
        for (j, row) in b_rows.iter().enumerate() {
            for (c, d) in self.times_tangent(row, tangents) {
                entries.push(((nv + j) as u32, c));
                out.push(d);
            }
        }
        (out, entries)
    }

    fn initial_conditions(
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

    /// `Init` ([q₀; q̇₀]), `Update` (q + Δ) and `Scale` (|q_i|) of a vector-space element.
    fn vector_owner_roles(&mut self) -> Result<Vec<RoleOutputs>, DiffError> {
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
        let update: Vec<Id> = q
            .iter()
            .enumerate()
            .map(|(i, &x)| {
                let d = g.input(Slot::Delta, i);
                g.add2(x, d)
            })
            .collect();
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
    fn euler_owner_roles(&mut self) -> Result<Vec<RoleOutputs>, DiffError> {
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
        let update: Vec<Id> = q
            .iter()
            .enumerate()
            .map(|(i, &x)| {
                let d = g.input(Slot::Delta, i);
                g.add2(x, d)
            })
            .collect();
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

    /// `Init`, `Update` and `Scale` of a rigid body.
    fn owner_roles(&mut self) -> Result<Vec<RoleOutputs>, DiffError> {
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
