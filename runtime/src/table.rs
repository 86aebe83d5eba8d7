//! The function table: the one narrow interface between compiler and runtime.
//!
//! For every element *type* the compiler produces one native function per [`Role`],
//! all of the signature [`ElementFn`], whose output is a sequence of [`Block`]s; those
//! and [`ABI_VERSION`] are defined in `fdc-abi` (see its crate doc for the signature and
//! the blocks of each role). This module adds what the runtime holds of them: the
//! native function of a role ([`RoleFn`]), an element type's sizes and roles
//! ([`ElementType`]), and the table with the owner of the machine code
//! ([`FunctionTable`]).

use std::any::Any;
use std::sync::{Arc, OnceLock};

/// The contract itself lives in `fdc-abi` (shared with the compiler); re-exported here
/// so that runtime code and drivers name it `fdc_runtime::table::*`.
pub use fdc_abi::{layout, Block, ElementFn, Reads, Role, Slot, ABI_VERSION};

/// One role of one element type: a native function and the layout of its output.
#[derive(Clone, Debug)]
pub struct RoleFn {
    pub func: ElementFn,
    pub blocks: Vec<Block>,
    /// Operations of the function as lowered (each shared node once; the e-graph
    /// removes a few percent more): the runtime's counted cost of a call, which the
    /// Newton matrix policy weighs (`system/matrix_cost.rs`). 0 where unknown.
    pub ops: usize,
    /// The input arrays the function reads ([`Reads::ALL`] where unknown): the
    /// runtime gathers an instance's local copies of those only.
    pub reads: Reads,
}

impl RoleFn {
    pub fn output_len(&self) -> usize {
        self.blocks.iter().map(Block::len).sum()
    }
}

/// The local sizes and the roles of one element type.
#[derive(Clone, Debug)]
pub struct ElementType {
    pub name: String,
    /// Stored coordinates seen by the element (its own, or those of connected bodies).
    pub nq: usize,
    /// Velocity dofs seen by the element.
    pub nv: usize,
    /// Multipliers owned by the element (its constraint rows).
    pub nl: usize,
    /// Parameters of an instance.
    pub np: usize,
    /// True for bodies: the element owns its coordinates, so `Init`, `Update` and
    /// `Scale` exist and its instance maps point at its own global slots.
    pub owns_coordinates: bool,
    /// Names of the result channels of `Out`, e.g. `R.x`; the runtime prefixes the
    /// instance name (`rod.R.x`). An empty name is the instance's own channel.
    pub outputs: Vec<String>,
    /// Names of the multipliers (constraint rows), e.g. `tx.lambda`.
    pub multipliers: Vec<String>,
    /// Parameter indices that `Post` overwrites after every accepted step.
    pub state_params: Vec<usize>,
    /// Indexed by `Role as usize`; `None` where the role does not exist.
    pub roles: [Option<RoleFn>; Role::ALL.len()],
}

impl ElementType {
    pub fn role(&self, role: Role) -> Option<&RoleFn> {
        self.roles[role as usize].as_ref()
    }
}

/// All element types of a model, and whatever owns their machine code.
#[derive(Clone)]
pub struct FunctionTable {
    pub abi_version: u32,
    pub types: Vec<ElementType>,
    /// Keeps the code alive (e.g. the JIT engine) as long as any pointer is in use.
    pub owner: Option<Arc<dyn Any + Send + Sync>>,
    /// Faster code for the same roles that another thread may still be building
    /// (tiered compilation); empty for a table of one tier.
    pub upgrade: Upgradable,
}

impl FunctionTable {
    /// Switches to the upgraded code once it is published: called by the step loop
    /// between two steps. Only function pointers are overwritten in place: nothing is
    /// allocated or freed, and until it is published this costs one atomic load per
    /// step (one branch after the switch). Both tiers compute bitwise identical results
    /// (same IR, no fast-math), so where the switch happens changes no result. True
    /// when this call switched.
    pub fn apply_upgrade(&mut self) -> bool {
        let up = &mut self.upgrade;
        if up.applied {
            return false;
        }
        let Some(tier) = up.pending.as_ref().and_then(|p| p.tier.get()) else {
            return false;
        };
        for (ty, fns) in self.types.iter_mut().zip(&tier.functions) {
            for (slot, f) in ty.roles.iter_mut().zip(fns) {
                if let (Some(rf), Some(f)) = (slot.as_mut(), f) {
                    rf.func = *f;
                }
            }
        }
        up.applied = true;
        true
    }

    /// True once [`FunctionTable::apply_upgrade`] switched to the upgraded code.
    pub fn upgraded(&self) -> bool {
        self.upgrade.applied
    }
}

/// The code of a second tier: per element type (in table order), per role (indexed
/// like [`ElementType::roles`]), the function replacing the current one (`None`
/// keeps it), and what keeps that code alive.
pub struct Tier {
    pub functions: Vec<[Option<ElementFn>; Role::ALL.len()]>,
    pub owner: Arc<dyn Any + Send + Sync>,
}

/// Where a compiling thread publishes a [`Tier`], once; any number of tables (clones
/// of one model) read it.
#[derive(Default)]
pub struct Upgrade {
    tier: OnceLock<Tier>,
}

impl Upgrade {
    /// Publishes `tier`; false (and `tier` dropped) if one was published already.
    pub fn publish(&self, tier: Tier) -> bool {
        self.tier.set(tier).is_ok()
    }

    pub fn published(&self) -> bool {
        self.tier.get().is_some()
    }
}

/// A table's link to its [`Upgrade`]. The table keeps the `Arc` after switching, so
/// the upgraded code lives as long as the table (the tier's owner is inside).
#[derive(Clone, Default)]
pub struct Upgradable {
    pending: Option<Arc<Upgrade>>,
    applied: bool,
}

impl Upgradable {
    pub fn new(upgrade: Arc<Upgrade>) -> Upgradable {
        Upgradable {
            pending: Some(upgrade),
            applied: false,
        }
    }
}

impl std::fmt::Debug for FunctionTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FunctionTable")
            .field("abi_version", &self.abi_version)
            .field("types", &self.types)
            .finish()
    }
}
