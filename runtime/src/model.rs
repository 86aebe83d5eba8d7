//! What the runtime integrates: a function table and the element instances with
//! their parameters and local-to-global maps.

use crate::table::FunctionTable;
use std::sync::Arc;

/// One element of the model: an element type, its parameter values and where its
/// local quantities live in the global vectors.
#[derive(Clone, Debug, PartialEq)]
pub struct ElementInstance {
    pub name: String,
    /// Index into `FunctionTable::types`.
    pub type_index: usize,
    pub params: Vec<f64>,
    /// Local stored coordinate → global q index.
    pub q_map: Vec<usize>,
    /// Local velocity dof → global v index.
    pub v_map: Vec<usize>,
    /// Local multiplier → global λ index (0-based within λ).
    pub lambda_map: Vec<usize>,
}

/// A value set from outside between steps (a torque, a steering angle): it is written
/// into the listed parameter slots.
#[derive(Clone, Debug, PartialEq)]
pub struct RuntimeInput {
    pub name: String,
    /// (instance index, parameter index) pairs.
    pub targets: Vec<(usize, usize)>,
}

#[derive(Clone, Debug)]
pub struct Model {
    pub table: FunctionTable,
    pub instances: Vec<ElementInstance>,
    pub nq: usize,
    pub nv: usize,
    pub nl: usize,
    pub inputs: Vec<RuntimeInput>,
    /// Data roads and the tyres on them (empty for a model without).
    pub roads: Roads,
}

/// A tyre on a data road: before every evaluation the runtime writes the road's
/// tangent plane under the wheel centre into the tyre's parameter slots
/// (`system/road_feed.rs`; which slots and why: docs/roads.md).
#[derive(Clone, Debug, PartialEq)]
pub struct RoadContact {
    /// The tyre's element instance.
    pub instance: usize,
    /// Index into [`Roads::roads`].
    pub road: usize,
    /// Global q indices of the wheel body's coordinates [R; θ] (θ scalar first).
    pub q: [usize; 7],
    /// The wheel centre in body components, from the body's reference point.
    pub offset: [f64; 3],
    /// Parameter indices of `plane_x, plane_y, plane_h, plane_gx, plane_gy, plane_mu`.
    pub slots: [usize; 6],
    /// The tyre's own friction (`mu`), which `plane_mu` is added to: without a
    /// friction file the slot stays 0, with one it is μ_file − mu_base.
    pub mu_base: f64,
}

/// The rotation matrix (body to global) of the unit quaternion q = (w, x, y, z),
/// scalar first as bodies store it: the one home of this formula for the road
/// contacts (centre offset at build time, wheel centre at run time).
pub fn quat_matrix([w, a, b, c]: [f64; 4]) -> [[f64; 3]; 3] {
    [
        [
            1.0 - 2.0 * (b * b + c * c),
            2.0 * (a * b - w * c),
            2.0 * (a * c + w * b),
        ],
        [
            2.0 * (a * b + w * c),
            1.0 - 2.0 * (a * a + c * c),
            2.0 * (b * c - w * a),
        ],
        [
            2.0 * (a * c - w * b),
            2.0 * (b * c + w * a),
            1.0 - 2.0 * (a * a + b * b),
        ],
    ]
}

/// The data roads of a model (shared, read-only) and the contacts on them.
#[derive(Clone, Debug, Default)]
pub struct Roads {
    pub roads: Vec<Arc<fdc_road::Road>>,
    pub contacts: Vec<RoadContact>,
}
