//! Display loads for `fdc view`: the force each force element exerts on its first body,
//! in global components, as extra result channels `NAME.load.x|y|z`. It is read from
//! the element's own `Res` role (its force vector f = −Q at the accepted state), so it
//! needs no code beyond what the model already compiles: the compiled model, its
//! cache key and the channels of a run that does not ask for loads are unchanged.

use super::*;
use std::collections::{HashMap, HashSet};

/// One force element with a body: where its force on that body sits in `Res`.
#[derive(Clone, Debug)]
pub(super) struct Load {
    /// Index into `System::inst`.
    inst: usize,
    /// Local velocity index of the body's first translational velocity: the three
    /// entries from there are the global force on the body (ṙ is global, first in
    /// every body's velocities).
    k: usize,
}

/// A force element with load channels (`NAME.load.*`) and the body its load acts on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadChannel {
    pub element: String,
    pub body: String,
}

impl System {
    /// Adds the channels `NAME.load.x|y|z` of every force element (no coordinates of
    /// its own, no constraint rows, at least one body) after the model's channels:
    /// the global force on its first body, at that body's point of application (the
    /// moment is not shown). Call before `run`; returns each element with its body.
    pub fn with_loads(&mut self) -> Vec<LoadChannel> {
        if !self.loads.is_empty() {
            return self.load_channels();
        }
        // Global velocity index → the body whose velocities start there: a point mass
        // (3 velocities) or a rigid body (6), translations first; another element with
        // coordinates of its own (a vector space) has no force to show.
        let starts: HashSet<usize> = (self.inst.iter())
            .filter(|e| self.table.types[e.ty].owns_coordinates && matches!(e.v_map.len(), 3 | 6))
            .map(|e| e.v_map[0])
            .collect();
        for (i, e) in self.inst.iter().enumerate() {
            let ty = &self.table.types[e.ty];
            if ty.owns_coordinates || ty.nl > 0 || ty.role(Role::Res).is_none() {
                continue;
            }
            if let Some(k) = e.v_map.iter().position(|g| starts.contains(g)) {
                self.loads.push(Load { inst: i, k });
                for c in ["x", "y", "z"] {
                    self.channels.push(format!("{}.load.{c}", e.name));
                }
            }
        }
        self.row.resize(self.channels.len(), 0.0);
        self.load_channels()
    }

    fn load_channels(&self) -> Vec<LoadChannel> {
        let starts: HashMap<usize, &str> = (self.inst.iter())
            .filter(|e| self.table.types[e.ty].owns_coordinates && !e.v_map.is_empty())
            .map(|e| (e.v_map[0], e.name.as_str()))
            .collect();
        self.loads
            .iter()
            .map(|l| {
                let e = &self.inst[l.inst];
                LoadChannel {
                    element: e.name.clone(),
                    body: starts[&e.v_map[l.k]].to_string(),
                }
            })
            .collect()
    }
}

/// Writes the load channels (3 per load) into `row` at the inputs `w`.
pub(super) fn fill(
    loads: &[Load],
    inst: &[Inst],
    types: &[ElementType],
    s: &mut Scratch,
    w: &View,
    c: &Coefficients,
    row: &mut [f64],
) {
    for (j, l) in loads.iter().enumerate() {
        let e = &inst[l.inst];
        call(types, e, Role::Res, s, w, c);
        // Res = [r (nv + nl), f (nv)] with f = −Q (diff's `res_role`).
        let n = types[e.ty].nv + types[e.ty].nl;
        for i in 0..3 {
            row[3 * j + i] = -s.out[n + l.k + i];
        }
    }
}
