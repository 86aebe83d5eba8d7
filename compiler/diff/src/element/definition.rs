//! [`ElementBuilder::definition`]: the key of the roles cache (`crate::stored`).

use super::ElementBuilder;
use crate::stored::{Writer, IDENTITY};
use fdc_ir::{Graph, Id, Op};
use std::collections::HashMap;

impl ElementBuilder<'_> {
    /// Everything [`finish`](ElementBuilder::finish) derives the roles from, as
    /// canonical bytes: [`IDENTITY`], the name, kind, bodies, sizes and iteration form,
    /// then every root the builder recorded (constraints with their names, loads per
    /// dof with their gyroscopic flag, outputs, states, initial states) as positions in
    /// the cone of all roots, which is written in a canonical order ([`canonical`]):
    /// not in id order, which depends on what the shared graph held before (another
    /// type's derivatives, a parameter's value as a constant), so that one definition
    /// has one key in every model and build. Nodes outside the cone do not enter, nor
    /// do parameter values (they are slots). `None` when the definition has errors (`finish` fails on it) or
    /// names a node of another graph.
    pub fn definition(&self) -> Option<Vec<u8>> {
        if !self.errors.is_empty() {
            return None;
        }
        let roots = self.roots();
        if self.g.foreign(&roots).is_some() {
            return None;
        }
        let (order, pos) = canonical(self.g, &roots);
        let mut w = Writer::default();
        w.str(IDENTITY);
        w.str(&self.name);
        // Debug forms of small enums: their names are part of the contract anyway.
        w.str(&format!(
            "{:?} {:?} {:?} {:?}",
            self.kind, self.body_kinds, self.layout, self.iteration_form
        ));
        for n in [self.n_bodies, self.n_params, self.n_coords] {
            w.len(n);
        }
        let at = |id: Id| pos[&id];
        w.len(order.len());
        for &(_, op) in &order {
            w.op(self.g, &at, op);
        }
        let ids = |w: &mut Writer, xs: &[Id]| {
            w.len(xs.len());
            xs.iter().for_each(|&x| w.u32(pos[&x]));
        };
        w.len(self.constraints.len());
        for (name, phi) in &self.constraints {
            w.str(name);
            ids(&mut w, &[*phi]);
        }
        w.len(self.loads.len());
        for dof in &self.loads {
            w.len(dof.len());
            for &(t, gyro) in dof {
                w.u8(u8::from(gyro));
                ids(&mut w, &[t]);
            }
        }
        w.len(self.outputs.len());
        for (name, e) in &self.outputs {
            w.str(name);
            ids(&mut w, &[*e]);
        }
        w.len(self.states.len());
        for &(p, e) in &self.states {
            w.len(p);
            ids(&mut w, &[e]);
        }
        match &self.initial {
            Some(i) => {
                w.u8(1);
                let all: Vec<Id> = (i.position.iter())
                    .chain(&i.orientation)
                    .chain(&i.velocity)
                    .chain(&i.angular_velocity)
                    .copied()
                    .collect();
                ids(&mut w, &all);
            }
            None => w.u8(0),
        }
        match &self.vector_initial {
            Some((q0, v0)) => {
                w.u8(1);
                ids(&mut w, q0);
                ids(&mut w, v0);
            }
            None => w.u8(0),
        }
        Some(w.0)
    }
}

/// The cone of `roots` in an order that depends on its structure alone: depth first
/// from the roots in their order, each node after its operands, the operands in their
/// order — except the two of `+` and `×`, which the graph orders by id, so they go in
/// the order of a structural hash. Each node with its op as written (commutative
/// operands in that order) and the positions of the nodes.
fn canonical(g: &Graph, roots: &[Id]) -> (Vec<(Id, Op)>, HashMap<Id, u32>) {
    let cone = g.cone(roots);
    // Structural hashes bottom up (ascending ids put operands first): the node's own
    // encoding without its operands, then the operands' hashes.
    let mut hash: HashMap<Id, u64> = HashMap::with_capacity(cone.len());
    let none = |_: Id| 0u32;
    for &id in &cone {
        let op = g.op(id);
        let mut w = Writer::default();
        w.op(g, &none, op);
        let mut kids: Vec<u64> = op.operands().iter().map(|a| hash[a]).collect();
        if matches!(op, Op::Add(..) | Op::Mul(..)) {
            kids.sort_unstable();
        }
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let bytes =
            w.0.iter()
                .copied()
                .chain(kids.iter().flat_map(|k| k.to_le_bytes()));
        for b in bytes {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        hash.insert(id, h);
    }
    let ordered = |op: Op| match op {
        Op::Add(a, b) if hash[&b] < hash[&a] => Op::Add(b, a),
        Op::Mul(a, b) if hash[&b] < hash[&a] => Op::Mul(b, a),
        other => other,
    };
    let mut pos: HashMap<Id, u32> = HashMap::with_capacity(cone.len());
    let mut order: Vec<(Id, Op)> = Vec::with_capacity(cone.len());
    let mut stack: Vec<(Id, bool)> = roots.iter().rev().map(|&r| (r, false)).collect();
    while let Some((id, operands_done)) = stack.pop() {
        if pos.contains_key(&id) {
            continue;
        }
        let op = ordered(g.op(id));
        if operands_done {
            pos.insert(id, order.len() as u32);
            order.push((id, op));
            continue;
        }
        stack.push((id, true));
        for a in op.operands().into_iter().rev() {
            if !pos.contains_key(&a) {
                stack.push((a, false));
            }
        }
    }
    (order, pos)
}
