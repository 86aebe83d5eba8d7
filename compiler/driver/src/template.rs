//! A model built once and instantiated for many parameter sets: the sweep, the Python
//! package and the C API make their runtime models here.
//!
//! Parameter values are inputs of the generated functions (slot `p`), so another set
//! of values normally lowers to the same IR: then the compiled function table of the
//! first build is shared and only the instances' parameter vectors change. Whether
//! that holds is checked, not assumed: a value that changes the code (a spline table
//! built from a parameter, a size) makes the instance take a full build (from the
//! object cache where it can).

use crate::pipeline::{build_front, front, BuildError, BuildOptions, Built};
use fdc_diff::ElementFunctions;
use fdc_ir::Op;
use fdc_runtime::{Model, System};
use std::path::{Path, PathBuf};

/// A built model and what is needed to make others from it.
pub struct Template {
    pub path: PathBuf,
    pub opts: BuildOptions,
    pub built: Built,
    /// Model parameters and their values (after the base overrides).
    pub parameters: Vec<(String, Vec<f64>)>,
    /// Runtime inputs and their default values.
    pub inputs: Vec<(String, f64)>,
    /// Result channels (`time` excluded), in the runtime's order.
    pub channels: Vec<String>,
    code: Code,
}

/// What decides the generated code and the layout of the runtime model.
struct Code {
    nodes: Vec<Op>,
    tables: usize,
    types: Vec<ElementFunctions>,
    /// Per instance: type, q, v and λ maps.
    shape: Vec<Shape>,
    sizes: (usize, usize, usize),
}

type Shape = (usize, Vec<usize>, Vec<usize>, Vec<usize>);

impl Code {
    fn of(l: &fdc_lower::LoweredModel) -> Code {
        Code {
            nodes: l.graph.nodes().to_vec(),
            tables: l.graph.tables().len(),
            types: l.types.clone(),
            shape: l
                .instances
                .iter()
                .map(|i| {
                    (
                        i.type_index,
                        i.q_map.clone(),
                        i.v_map.clone(),
                        i.lambda_map.clone(),
                    )
                })
                .collect(),
            sizes: (l.nq, l.nv, l.nl),
        }
    }

    /// Same code and layout. Spline tables have no equality, so a model with any
    /// table is never shared (it takes the full build, normally a cache hit).
    fn same(&self, l: &fdc_lower::LoweredModel) -> bool {
        let types_equal = self.types.len() == l.types.len()
            && self.types.iter().zip(&l.types).all(|(a, b)| {
                a.name == b.name
                    && (a.nq, a.nv, a.nl, a.np) == (b.nq, b.nv, b.nl, b.np)
                    && a.owns_coordinates == b.owns_coordinates
                    && a.outputs == b.outputs
                    && a.multipliers == b.multipliers
                    && a.state_params == b.state_params
                    && a.roles.len() == b.roles.len()
                    && a.roles.iter().zip(&b.roles).all(|(x, y)| {
                        x.0 == y.0
                            && x.1.inputs == y.1.inputs
                            && x.1.outputs == y.1.outputs
                            && x.2 == y.2
                    })
            });
        self.tables == 0
            && l.graph.tables().is_empty()
            && self.sizes == (l.nq, l.nv, l.nl)
            && self.nodes.as_slice() == l.graph.nodes()
            && types_equal
            && self.shape.len() == l.instances.len()
            && self.shape.iter().zip(&l.instances).all(|(s, i)| {
                s.0 == i.type_index && s.1 == i.q_map && s.2 == i.v_map && s.3 == i.lambda_map
            })
    }
}

/// A runtime model for one parameter set.
pub struct Instance {
    pub model: Model,
    pub settings: fdc_lower::Settings,
    /// The function table of the template was reused (no build at all).
    pub shared: bool,
}

/// `base` with the values of `set` put in (a name in both takes the value of `set`).
pub fn merged(base: &[(String, f64)], set: &[(String, f64)]) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64)> = base
        .iter()
        .filter(|(n, _)| !set.iter().any(|(m, _)| m == n))
        .cloned()
        .collect();
    out.extend(set.iter().cloned());
    out
}

impl Template {
    /// Checks, lowers and compiles the model with `opts.overrides`.
    pub fn build(path: &Path, opts: &BuildOptions) -> Result<Template, BuildError> {
        let f = front(path, &opts.overrides)?;
        let code = Code::of(&f.lowered);
        let inputs: Vec<(String, f64)> = f
            .lowered
            .inputs
            .iter()
            .map(|i| (i.name.clone(), i.default))
            .collect();
        // The lowering lists inputs with the parameters (their defaults are values).
        let parameters = f
            .lowered
            .params
            .iter()
            .filter(|(n, _)| !inputs.iter().any(|(i, _)| i == n))
            .cloned()
            .collect();
        let built = build_front(f, opts)?;
        let channels = System::new(built.model.clone())
            .map_err(|e| BuildError::Backend(e.to_string()))?
            .channel_names();
        Ok(Template {
            path: path.to_path_buf(),
            opts: opts.clone(),
            built,
            parameters,
            inputs,
            channels,
            code,
        })
    }

    /// The runtime model with the parameter values `set` on top of the template's
    /// overrides. Diagnostics of a value the model rejects come back as the error.
    pub fn instantiate(&self, set: &[(String, f64)]) -> Result<Instance, BuildError> {
        if set.is_empty() {
            return Ok(Instance {
                model: self.built.model.clone(),
                settings: self.built.settings.clone(),
                shared: true,
            });
        }
        let overrides = merged(&self.opts.overrides, set);
        let f = front(&self.path, &overrides)?;
        if self.code.same(&f.lowered) {
            let mut model = self.built.model.clone();
            for (m, l) in model.instances.iter_mut().zip(&f.lowered.instances) {
                m.params.clone_from(&l.params);
            }
            return Ok(Instance {
                model,
                settings: f.lowered.settings.clone(),
                shared: true,
            });
        }
        let opts = BuildOptions {
            overrides,
            ..self.opts.clone()
        };
        let built = build_front(f, &opts)?;
        Ok(Instance {
            model: built.model,
            settings: built.settings,
            shared: false,
        })
    }
}
