//! [`ElementBuilder::definition`]: the key of the roles cache (`crate::stored`).

use super::ElementBuilder;
use crate::stored::{Writer, IDENTITY};
use fdc_ir::Id;

impl ElementBuilder<'_> {
    /// Everything [`finish`](ElementBuilder::finish) derives the roles from, as
    /// canonical bytes: [`IDENTITY`], the name, kind, bodies, sizes and iteration form,
    /// then every root the builder recorded (constraints with their names, loads per
    /// dof with their gyroscopic flag, outputs, states, initial states) as positions in
    /// the cone of all roots, which is written renumbered densely in id order. Nodes of
    /// the shared graph outside the cone do not enter, nor do parameter values (they
    /// are slots). `None` when the definition has errors (`finish` fails on it) or
    /// names a node of another graph.
    pub fn definition(&self) -> Option<Vec<u8>> {
        if !self.errors.is_empty() {
            return None;
        }
        let roots = self.roots();
        if self.g.foreign(&roots).is_some() {
            return None;
        }
        let nodes = self.g.cone(&roots);
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
        w.nodes(self.g, &nodes);
        let ids = |w: &mut Writer, xs: &[Id]| {
            w.len(xs.len());
            xs.iter().for_each(|&x| w.local(&nodes, x));
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
