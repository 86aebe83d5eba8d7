//! What the runtime integrates: a function table and the element instances with
//! their parameters and local-to-global maps.

use crate::table::FunctionTable;

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
}
