//! What diff makes of an element type: its role functions with the layout of their
//! outputs. Roles and blocks are the ABI's own types (`fdc-abi`, shared with the
//! backend and the runtime), so nothing maps one contract onto another.

pub use fdc_abi::{Block, Role};
use fdc_ir::Func;
use std::fmt;

/// Everything generated for one element type. All `Func`s live in the graph given to
/// the builder and contain no symbols.
#[derive(Clone, Debug)]
pub struct ElementFunctions {
    pub name: String,
    pub nq: usize,
    pub nv: usize,
    pub nl: usize,
    pub np: usize,
    pub owns_coordinates: bool,
    /// Names of the `Out` channels, in output order.
    pub outputs: Vec<String>,
    /// Names of the multipliers (constraint rows), in order.
    pub multipliers: Vec<String>,
    /// Parameter indices that `Post` overwrites, in output order.
    pub state_params: Vec<usize>,
    pub roles: Vec<(Role, Func, Vec<Block>)>,
}

impl ElementFunctions {
    pub fn role(&self, role: Role) -> Option<(&Func, &[Block])> {
        self.roles
            .iter()
            .find(|(r, _, _)| *r == role)
            .map(|(_, f, b)| (f, b.as_slice()))
    }
}

/// Why an element type could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiffError {
    pub element: String,
    pub message: String,
}

impl fmt::Display for DiffError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "element `{}`: {}", self.element, self.message)
    }
}

impl std::error::Error for DiffError {}
