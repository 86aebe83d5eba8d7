//! The typed model of a `.fds` file and its validation: every block read into one of
//! the item types below, IDs resolved, names made fd identifiers, expression
//! references checked. All problems are collected; none is skipped.

use crate::blocks::{Block, Entry};
use crate::error::{Error, Kind};
use crate::expr::{self, Expr};
use crate::names::Names;
use crate::values::{nums, value_error, Fields};
use std::ops::Range;
use std::path::Path;

mod solver;

/// An item's name: as in the file and as an fd identifier.
#[derive(Clone, Debug)]
pub struct Name {
    pub raw: String,
    pub ident: String,
}

/// A body reference: `None` is the ground (`0`), else the index into [`Model::bodies`].
pub type BodyRef = Option<usize>;

#[derive(Clone, Debug)]
pub struct Body {
    pub name: Name,
    pub line: usize,
    pub mass: f64,
    pub com: [f64; 3],
    pub inertia: [f64; 3],
    /// Principal axes as the rows of this matrix (the file's order), global.
    pub axes: [[f64; 3]; 3],
    pub velocity: [f64; 3],
    pub omega: [f64; 3],
    /// `RegardVelocityInertiaForcesInsideJacobian`.
    pub full_jacobian: bool,
    /// `Geometry …` keys and values as written (display only).
    pub display: Vec<(String, String)>,
}

#[derive(Clone, Debug)]
pub struct Joint {
    pub name: Name,
    pub line: usize,
    pub bodies: [BodyRef; 2],
    /// dx dy dz ax ay az.
    pub fixed: [bool; 6],
    pub at: [f64; 3],
    /// The joint frame's axes as rows.
    pub axes: [[f64; 3]; 3],
}

#[derive(Clone, Debug)]
pub enum Direction {
    SpaceFixed([f64; 3]),
    LineOfSight,
}

#[derive(Clone, Debug)]
pub struct Force {
    pub name: Name,
    pub line: usize,
    pub bodies: [BodyRef; 2],
    pub points: [[f64; 3]; 2],
    pub direction: Direction,
    pub expr: Expr,
}

#[derive(Clone, Debug)]
pub struct Torque {
    pub name: Name,
    pub line: usize,
    pub bodies: [BodyRef; 2],
    /// Fixed in body 1, global at t = 0.
    pub axis: [f64; 3],
    pub expr: Expr,
}

#[derive(Clone, Debug)]
pub struct Param {
    pub name: Name,
    pub line: usize,
    pub value: f64,
}

#[derive(Clone, Debug)]
pub struct Spline {
    pub name: Name,
    pub line: usize,
    pub zcc: bool,
    /// As written (relative to the model file).
    pub path: String,
    pub path_span: Range<usize>,
    pub header: usize,
    pub xcol: usize,
    pub ycol: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coordinate {
    X,
    Y,
    Z,
    Xyz,
}

#[derive(Clone, Debug)]
pub struct Measure {
    pub name: Name,
    pub line: usize,
    pub bodies: [BodyRef; 2],
    pub points: [[f64; 3]; 2],
    pub velocity: bool,
    pub coordinate: Coordinate,
    pub offset: bool,
}

#[derive(Clone, Debug, Default)]
pub struct Gravity {
    pub line: usize,
    pub g: [f64; 3],
}

#[derive(Clone, Debug)]
pub struct Simulation {
    pub line: usize,
    pub end: f64,
    pub output_every: f64,
}

#[derive(Clone, Debug)]
pub struct Solver {
    pub line: usize,
    pub alpha: f64,
    pub max_iterations: usize,
    pub tolerance: f64,
    pub step_min: f64,
    pub step_max: f64,
}

/// Keys kept only as comments (display data, header, settings without effect).
#[derive(Clone, Debug)]
pub struct Kept {
    pub line: usize,
    pub block: String,
    pub entries: Vec<(String, String)>,
}

#[derive(Clone, Debug, Default)]
pub struct Model {
    pub bodies: Vec<Body>,
    pub joints: Vec<Joint>,
    pub forces: Vec<Force>,
    pub torques: Vec<Torque>,
    pub params: Vec<Param>,
    pub splines: Vec<Spline>,
    pub measures: Vec<Measure>,
    pub gravity: Option<Gravity>,
    pub simulation: Option<Simulation>,
    pub solver: Option<Solver>,
    pub kept: Vec<Kept>,
}

/// Reads the blocks into a model; `dir` is the model file's directory (for spline
/// files). Returns the model only when there was no error.
pub fn read(blocks: &[Block], dir: &Path, errors: &mut Vec<Error>) -> Option<Model> {
    let before = errors.len();
    let mut r = Reader {
        m: Model::default(),
        names: Names::new(),
        ids: Vec::new(),
        errors,
    };
    // Bodies first: every BodyIDs refers to them.
    for b in blocks.iter().filter(|b| b.category.text == "Body") {
        r.block(b, dir);
    }
    for b in blocks.iter().filter(|b| b.category.text != "Body") {
        r.block(b, dir);
    }
    if r.m.simulation.is_none() && r.errors.len() == before {
        r.errors.push(Error::new(
            Kind::Value,
            0..0,
            "the model has no `Simulation Dynamic` block",
            "start of file",
            "add the block with SimulationTimeEnd and OutputTimeStepSize",
        ));
    }
    let mut m = r.m;
    check_refs(&mut m, errors);
    (errors.len() == before).then_some(m)
}

pub(crate) struct Reader<'e> {
    m: Model,
    names: Names,
    /// Body IDs and their indices.
    ids: Vec<String>,
    errors: &'e mut Vec<Error>,
}

impl Reader<'_> {
    fn block(&mut self, b: &Block, dir: &Path) {
        let Some(f) = Fields::check(b, self.errors) else {
            return;
        };
        let ty = b.ty.text.as_str();
        match b.category.text.as_str() {
            "Header" | "Globals" => self.m.kept.push(Kept {
                line: b.line,
                block: format!("{} {}", b.category.text, ty),
                entries: pairs(b.entries.iter()),
            }),
            "Body" => self.body(&f),
            "Constraint" => self.joint(&f),
            "Force" if ty == "Gravity" => self.gravity(&f),
            "Force" if ty == "GenericForce" => self.force(&f),
            "Force" => self.torque(&f),
            "DataObject" if ty == "Parameter" => {
                let name = self.name(&f);
                if let Some(value) = f.num("InitialValue", self.errors) {
                    self.m.params.push(Param {
                        name,
                        line: b.line,
                        value,
                    });
                }
            }
            "DataObject" => self.spline(&f, dir),
            "Measure" => self.measure(&f),
            "Simulation" => self.simulation(&f),
            _ => self.solver(&f),
        }
    }

    fn once(&mut self, f: &Fields, taken: bool) -> bool {
        if taken {
            self.errors.push(Error::new(
                Kind::Value,
                f.block.head_span(),
                format!(
                    "a second `{} {}` block",
                    f.block.category.text, f.block.ty.text
                ),
                "second block",
                "a model has at most one",
            ));
        }
        !taken
    }

    /// The block's name, made an identifier (unique in the model).
    fn name(&mut self, f: &Fields) -> Name {
        let entry = f.need("Name", self.errors);
        let raw = entry.map_or("", |e| e.value.text.as_str()).to_string();
        let fallback = format!("{}_{}", f.block.category.text.to_lowercase(), f.block.line);
        let ident = self
            .names
            .claim(&raw, &fallback, entry, f.block, self.errors);
        Name { raw, ident }
    }

    /// `BodyIDs = id1, id2` (`0` the ground).
    fn body_ids(&mut self, f: &Fields) -> Option<[BodyRef; 2]> {
        let e = f.need("BodyIDs", self.errors)?;
        let parts: Vec<&str> = e.value.text.split(',').map(str::trim).collect();
        if parts.len() != 2 {
            self.errors.push(value_error(
                e,
                "expected two body IDs",
                "write `BodyIDs = <id1>, <id2>` (0 is the ground)",
            ));
            return None;
        }
        let mut out = [None, None];
        for (k, p) in parts.iter().enumerate() {
            if *p == "0" {
                continue;
            }
            match self.ids.iter().position(|id| id == p) {
                Some(i) => out[k] = Some(i),
                None => {
                    let at = e.value.span.start + e.value.text.find(p).unwrap_or(0);
                    self.errors.push(Error::new(
                        Kind::Reference,
                        at..at + p.len(),
                        format!("no body has the ID `{p}`"),
                        "unknown ID",
                        "IDs refer to the `ID` of a Body block; `0` is the ground",
                    ));
                    return None;
                }
            }
        }
        if out[0] == out[1] {
            self.errors.push(value_error(
                e,
                "the two bodies are the same",
                "connect two different bodies (or a body and the ground `0`)",
            ));
            return None;
        }
        Some(out)
    }

    fn body(&mut self, f: &Fields) {
        let name = self.name(f);
        let id = f.need("ID", self.errors).map(|e| e.value.text.clone());
        let errs = &mut *self.errors;
        let mass = f.num("Mass", errs);
        let com = f.vec3("LocationCenterMass", errs);
        let inertia = f.vec3("Inertia", errs);
        let axes = rows(f, "OrientationPAI", errs);
        let velocity = f.vec3_or("InitialVelocityVector", errs);
        let omega = f.vec3_or("InitialOmegaVector", errs);
        let full = f.flag("RegardVelocityInertiaForcesInsideJacobian", true, errs);
        if let Some(e) = f.get("Mass").filter(|_| mass.is_some_and(|m| m <= 0.0)) {
            errs.push(value_error(
                e,
                "the mass must be positive",
                "a positive number",
            ));
        }
        if let Some(e) = f
            .get("Inertia")
            .filter(|_| inertia.is_some_and(|j| j.iter().any(|&x| x < 0.0)))
        {
            errs.push(value_error(
                e,
                "principal moments cannot be negative",
                "zero or positive numbers",
            ));
        }
        let display = pairs(
            f.block
                .entries
                .iter()
                .filter(|e| e.key.text.starts_with("Geometry")),
        );
        if let Some(id) = &id {
            if self.ids.contains(id) || id == "0" {
                let e = f.get("ID").expect("needed above");
                self.errors.push(value_error(
                    e,
                    "a second body with this ID",
                    "IDs are unique; `0` is the ground",
                ));
            }
            self.ids.push(id.clone());
        }
        if let (
            Some(mass),
            Some(com),
            Some(inertia),
            Some(axes),
            Some(velocity),
            Some(omega),
            Some(full_jacobian),
        ) = (mass, com, inertia, axes, velocity, omega, full)
        {
            self.m.bodies.push(Body {
                name,
                line: f.block.line,
                mass,
                com,
                inertia,
                axes,
                velocity,
                omega,
                full_jacobian,
                display,
            });
        }
    }

    fn joint(&mut self, f: &Fields) {
        let name = self.name(f);
        let bodies = self.body_ids(f);
        let errs = &mut *self.errors;
        let keys = [
            "dxFixed", "dyFixed", "dzFixed", "axFixed", "ayFixed", "azFixed",
        ];
        let fixed: Vec<Option<bool>> = keys.iter().map(|k| f.flag(k, false, errs)).collect();
        let at = f.vec3("Location", errs);
        let axes = rows(f, "ConstraintOrientation", errs);
        if let (Some(bodies), Some(at), Some(axes), true) =
            (bodies, at, axes, fixed.iter().all(Option::is_some))
        {
            let mut fx = [false; 6];
            for (k, v) in fixed.iter().enumerate() {
                fx[k] = v.unwrap_or(false);
            }
            self.m.joints.push(Joint {
                name,
                line: f.block.line,
                bodies,
                fixed: fx,
                at,
                axes,
            });
        }
    }

    fn gravity(&mut self, f: &Fields) {
        let errs = &mut *self.errors;
        let g = f.vec3("GravityAccVector", errs);
        if let Some(e) = f.get("ActivationTime") {
            if nums(e, 1, errs).is_some_and(|v| v[0] != 0.0) {
                errs.push(Error::new(
                    Kind::Unsupported,
                    e.value.span.clone(),
                    "gravity switched on later than t = 0 is not supported",
                    "nonzero activation time",
                    "fd's gravity acts from t = 0; set `ActivationTime = 0`",
                ));
            }
        }
        let taken = self.m.gravity.is_some();
        if let (Some(g), true) = (g, self.once(f, taken)) {
            self.m.gravity = Some(Gravity {
                line: f.block.line,
                g,
            });
        }
    }

    fn expr(&mut self, f: &Fields, key: &str) -> Option<Expr> {
        let e = f.need(key, self.errors)?;
        let base = if e.value.text.is_empty() {
            e.key.span.end
        } else {
            e.value.span.start
        };
        expr::parse(&e.value.text, base)
            .map_err(|err| self.errors.push(err))
            .ok()
    }

    fn force(&mut self, f: &Fields) {
        let name = self.name(f);
        let bodies = self.body_ids(f);
        let errs = &mut *self.errors;
        let p1 = f.vec3_or("PointOfApplication_Body1", errs);
        let p2 = f.vec3_or("PointOfApplication_Body2", errs);
        let direction = match f.choice(
            "ForceDirectionType",
            &["SpaceFixed", "In-line-of-sight"],
            errs,
        ) {
            Some(0) => unit(f, "ForceDirection", errs).map(Direction::SpaceFixed),
            Some(_) => Some(Direction::LineOfSight),
            None => None,
        };
        let expr = self.expr(f, "ForceExpression");
        if let (Some(bodies), Some(p1), Some(p2), Some(direction), Some(expr)) =
            (bodies, p1, p2, direction, expr)
        {
            self.m.forces.push(Force {
                name,
                line: f.block.line,
                bodies,
                points: [p1, p2],
                direction,
                expr,
            });
        }
    }

    fn torque(&mut self, f: &Fields) {
        let name = self.name(f);
        let bodies = self.body_ids(f);
        let errs = &mut *self.errors;
        let kind = f.choice("AxisType", &["BodyFixed"], errs);
        let axis = unit(f, "Axis", errs);
        let expr = self.expr(f, "TorqueExpression");
        if let (Some(bodies), Some(_), Some(axis), Some(expr)) = (bodies, kind, axis, expr) {
            self.m.torques.push(Torque {
                name,
                line: f.block.line,
                bodies,
                axis,
                expr,
            });
        }
    }

    fn spline(&mut self, f: &Fields, dir: &Path) {
        let name = self.name(f);
        let errs = &mut *self.errors;
        let zcc = f.choice("InterpolationType", &["akima", "zccspl"], errs);
        let path = f.need("PathToSplineData", errs);
        let whole = |key: &str, errs: &mut Vec<Error>| -> Option<usize> {
            let e = f.need(key, errs)?;
            let v = e.value.text.parse::<usize>().ok();
            if v.is_none() {
                errs.push(value_error(
                    e,
                    "expected a whole number",
                    "columns count from 0; header lines are a count",
                ));
            }
            v
        };
        let header = match f.get("NumberOfHeaderLines") {
            None => Some(0),
            Some(_) => whole("NumberOfHeaderLines", errs),
        };
        let xcol = whole("ColumnXData", errs);
        let ycol = whole("ColumnYData", errs);
        if let Some(p) = path {
            if !dir.join(&p.value.text).is_file() || p.value.text.is_empty() {
                errs.push(Error::new(
                    Kind::File,
                    value_span(p),
                    format!("spline data file `{}` not found", p.value.text),
                    "no such file",
                    &format!(
                        "the path is relative to the model file's directory (`{}`)",
                        dir.display()
                    ),
                ));
            } else if p.value.text.contains('"') {
                errs.push(value_error(
                    p,
                    "a path with `\"` cannot be written in fd",
                    "rename the file",
                ));
            }
        }
        if let (Some(zcc), Some(p), Some(header), Some(xcol), Some(ycol)) =
            (zcc, path, header, xcol, ycol)
        {
            self.m.splines.push(Spline {
                name,
                line: f.block.line,
                zcc: zcc == 1,
                path: p.value.text.clone(),
                path_span: value_span(p),
                header,
                xcol,
                ycol,
            });
        }
    }

    fn measure(&mut self, f: &Fields) {
        let name = self.name(f);
        let bodies = self.body_ids(f);
        let errs = &mut *self.errors;
        let mode = f.choice("MeasureMode", &["disp", "vel"], errs);
        let coord = f.choice("MeasureCoordinate", &["X", "Y", "Z", "XYZ"], errs);
        let p1 = f.vec3_or("MeasureLocation_Body1", errs);
        let p2 = f.vec3_or("MeasureLocation_Body2", errs);
        let offset = f.flag("UseInitialValueAsOffset", false, errs);
        if let (Some(bodies), Some(mode), Some(coord), Some(p1), Some(p2), Some(offset)) =
            (bodies, mode, coord, p1, p2, offset)
        {
            self.m.measures.push(Measure {
                name,
                line: f.block.line,
                bodies,
                points: [p1, p2],
                velocity: mode == 1,
                coordinate: [Coordinate::X, Coordinate::Y, Coordinate::Z, Coordinate::Xyz][coord],
                offset,
            });
        }
    }
}

pub(crate) fn pairs<'a>(entries: impl Iterator<Item = &'a Entry>) -> Vec<(String, String)> {
    entries
        .map(|e| (e.key.text.clone(), e.value.text.clone()))
        .collect()
}

fn value_span(e: &Entry) -> Range<usize> {
    if e.value.text.is_empty() {
        e.key.span.clone()
    } else {
        e.value.span.clone()
    }
}

/// A nonzero direction, normalized.
fn unit(f: &Fields, key: &str, errs: &mut Vec<Error>) -> Option<[f64; 3]> {
    let v = f.vec3(key, errs)?;
    let n = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    if n == 0.0 {
        errs.push(value_error(
            f.get(key)?,
            "a zero direction",
            "a nonzero vector",
        ));
        return None;
    }
    Some([v[0] / n, v[1] / n, v[2] / n])
}

/// 9 values: three axes one after the other (the rows), orthonormal and right-handed;
/// identity when the key is absent.
fn rows(f: &Fields, key: &str, errs: &mut Vec<Error>) -> Option<[[f64; 3]; 3]> {
    let id = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
    let v = f.nums_or(key, &id, errs)?;
    let r = [[v[0], v[1], v[2]], [v[3], v[4], v[5]], [v[6], v[7], v[8]]];
    let dot = |a: &[f64; 3], b: &[f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let mut worst: f64 = 0.0;
    for i in 0..3 {
        for j in 0..3 {
            let want = if i == j { 1.0 } else { 0.0 };
            worst = worst.max((dot(&r[i], &r[j]) - want).abs());
        }
    }
    let c = [
        r[0][1] * r[1][2] - r[0][2] * r[1][1],
        r[0][2] * r[1][0] - r[0][0] * r[1][2],
        r[0][0] * r[1][1] - r[0][1] * r[1][0],
    ];
    if worst > 1e-6 || dot(&c, &r[2]) < 0.0 {
        errs.push(value_error(
            f.get(key)?,
            "the three axes are not orthonormal and right-handed",
            "nine values: the x, y and z axis (global) one after the other",
        ));
        return None;
    }
    Some(r)
}

/// Every PARVAL/MEAVAL/SPL name must be defined by a block.
fn check_refs(m: &mut Model, errors: &mut Vec<Error>) {
    let exprs = m
        .forces
        .iter()
        .map(|f| &f.expr)
        .chain(m.torques.iter().map(|t| &t.expr));
    for e in exprs {
        let mut refs = Vec::new();
        expr::refs(e, &mut refs);
        for r in refs {
            let (what, name, span, known): (&str, &str, &Range<usize>, Vec<&str>) = match r {
                Expr::Param(n, s) => (
                    "parameter",
                    n,
                    s,
                    m.params.iter().map(|p| p.name.raw.as_str()).collect(),
                ),
                Expr::Measure(n, s) => (
                    "measure",
                    n,
                    s,
                    m.measures.iter().map(|p| p.name.raw.as_str()).collect(),
                ),
                Expr::Spline(n, s, _) => (
                    "spline",
                    n,
                    s,
                    m.splines.iter().map(|p| p.name.raw.as_str()).collect(),
                ),
                _ => continue,
            };
            if !known.contains(&name) {
                let hint = if known.is_empty() {
                    format!("no block defines a {what}")
                } else {
                    format!("the model's {what}s: {}", known.join(", "))
                };
                errors.push(Error::new(
                    Kind::Reference,
                    span.clone(),
                    format!("no {what} is named `{name}`"),
                    format!("unknown {what}"),
                    &hint,
                ));
            }
        }
    }
}
