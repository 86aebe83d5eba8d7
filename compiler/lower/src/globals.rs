//! The model-wide definitions every expression of the lowering can see: the checked
//! model and the checker's links, the values of model parameters and inputs, gravity,
//! spline tables, and the files read at build time.

use fdc_frontend::{Model, Resolution};
use std::collections::HashMap;

/// Model-wide definitions every expression can see.
pub struct Globals<'a> {
    /// The checked model: its element types, functions, params, ...
    pub model: &'a Model,
    /// What each name use refers to (the checker's links).
    pub resolution: &'a Resolution,
    /// Model parameters, already evaluated (as constants of any shape), per
    /// `Model::params`; `None` until evaluated.
    pub params: Vec<Option<Vec<f64>>>,
    /// The same per `Model::inputs` (their default values).
    pub inputs: Vec<Option<Vec<f64>>>,
    pub gravity: [f64; 3],
    /// Spline tables by name (computed from the declarations at build time).
    pub splines: HashMap<String, fdc_ir::SplineTable>,
    /// Splines whose data had an error (already reported): their calls stay quiet.
    pub broken_splines: std::collections::HashSet<String>,
    /// Where each module was read from (relative paths of `tir(...)` files).
    pub files: Option<&'a fdc_frontend::SourceFiles>,
    /// Tyre property files read so far (`tir(...)`; read once per build).
    pub tir: std::cell::RefCell<crate::tir::TirCache>,
    /// Data roads named so far (`crg(...)`; each read once per build).
    pub roads: std::cell::RefCell<crate::road::RoadTable>,
}

impl<'a> Globals<'a> {
    pub fn new(
        model: &'a Model,
        resolution: &'a Resolution,
        files: Option<&'a fdc_frontend::SourceFiles>,
    ) -> Globals<'a> {
        Globals {
            model,
            resolution,
            params: vec![None; model.params.len()],
            inputs: vec![None; model.inputs.len()],
            gravity: [0.0; 3],
            splines: HashMap::new(),
            broken_splines: Default::default(),
            files,
            tir: Default::default(),
            roads: Default::default(),
        }
    }
}
