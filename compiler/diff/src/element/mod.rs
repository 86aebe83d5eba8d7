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
use crate::roles::{Block, DiffError, Role};
use fdc_abi::layout::THETA;
use fdc_ir::{Graph, Id, Op, Slot, M3, V3};

mod definition;
mod finish;
pub(crate) mod iteration;
pub use iteration::IterationForm;
mod owner;

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
    /// A point mass: connected body 0 of itself, of [`BodyKind::Point`]; owns q = R and
    /// v = Ṙ (3 each), update q + Δ. It has no rotation.
    PointBody,
}

/// How a connected body stores its configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BodyKind {
    /// q = [R; θ] (7), v = [Ṙ; ω̄] (6), q ↦ q∘exp(δ) (theory 3.2).
    Rigid,
    /// Euler parameters: q = [R; θ] (7), v = q̇ (7), q ↦ q + δ, ω̄ = 2Ḡθ̇ (theory 3.3).
    Euler,
    /// A point mass: q = R (3), v = Ṙ (3), q ↦ q + δ; A = I and ω̄ = 0 always.
    Point,
}

impl BodyKind {
    /// Stored coordinates and velocity dofs.
    pub fn sizes(self) -> (usize, usize) {
        match self {
            BodyKind::Rigid => (7, 6),
            BodyKind::Euler => (7, 7),
            BodyKind::Point => (3, 3),
        }
    }
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
    /// The kind of each connected body.
    body_kinds: Vec<BodyKind>,
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

/// A point mass's kinematics: R, Ṙ, R̈ straight from its coordinates, A = I and no
/// rotation (constants, so every rotational term of a connector vanishes).
fn point_kin(g: &mut Graph, k: usize, q: usize, v: usize) -> BodyKin {
    let z = g.v3_const([0.0; 3]);
    BodyKin {
        index: Some(k),
        r: [0, 1, 2].map(|i| g.input(Slot::Q, q + i)),
        a: [
            g.v3_const([1.0, 0.0, 0.0]),
            g.v3_const([0.0, 1.0, 0.0]),
            g.v3_const([0.0, 0.0, 1.0]),
        ],
        rdot: [0, 1, 2].map(|i| g.input(Slot::V, v + i)),
        omega_bar: z,
        acc: [0, 1, 2].map(|i| g.input(Slot::Vdot, v + i)),
        alpha_bar: z,
    }
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
            Coordinates::EulerBody | Coordinates::PointBody => {
                let own = if kind == Coordinates::EulerBody {
                    BodyKind::Euler
                } else {
                    BodyKind::Point
                };
                let mut b = Self::with_bodies(graph, name, kind, 0, &[own], n_params);
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
            Coordinates::PointBody if bodies != [BodyKind::Point] || own > 0 => {
                errors.push("a point mass is connected body 0 of itself".into());
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
                BodyKind::Euler | BodyKind::Point => Seg::Vector {
                    q,
                    v,
                    n: b.sizes().0 as u32,
                },
            };
            q += b.sizes().0 as u32;
            v += b.sizes().1 as u32;
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
            body_kinds: bodies.to_vec(),
            constraints: Vec::new(),
            loads: vec![Vec::new(); nv],
            gyroscopic: false,
            outputs: Vec::new(),
            states: Vec::new(),
            initial: None,
            vector_initial: None,
            n_coords: own,
            iteration_form: iteration::default_form(),
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
            Seg::Vector { q, v, .. } if self.body_kinds[k] == BodyKind::Point => {
                return point_kin(g, k, q as usize, v as usize);
            }
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

    /// The kind of connected body `k` (`None` for an index out of range).
    pub fn body_kind(&self, k: usize) -> Option<BodyKind> {
        self.body_kinds.get(k).copied()
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
        // A point mass has no orientation, so a point "fixed in it" is the particle
        // itself: the force acts on its translation only, there is no lever arm.
        if self.body_kinds[k] == BodyKind::Point {
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
        if self.body_kinds[k] == BodyKind::Point {
            // Dropping the torque would simulate a different model without a word.
            self.errors.push(format!(
                "a torque acts on connected body {k}, a point mass, which has no rotation \
                 for it to turn (apply it to a rigid body, or a force to the point mass)"
            ));
            return;
        }
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
        if !matches!(
            self.kind,
            Coordinates::RigidBody | Coordinates::EulerBody | Coordinates::PointBody
        ) {
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
}
