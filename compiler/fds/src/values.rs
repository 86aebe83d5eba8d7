//! The keys of one block and typed reads of their values. Each block type has one
//! table of the keys it may hold ([`KEYS`]); a key outside it is an error, never
//! skipped. Reading a value that does not parse is an error at the value.

use crate::blocks::{Block, Entry};
use crate::error::{Error, Kind};
use std::ops::Range;

/// What the importer does with a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Use {
    /// Read into the model.
    Read,
    /// Accepted without effect on the results; the reason is in docs/fds.md and in the
    /// generated file's comments.
    NoEffect,
}

/// The keys of each `Category Type` (the one home of that table). `*` at the end of a
/// key matches any tail (`Write*` is every `Write…ResultFile` flag).
/// The keys of one block type and what is done with each.
pub type KeyTable = &'static [(&'static str, Use)];

pub const KEYS: &[(&str, &str, KeyTable)] = &[
    ("Header", "freeDynHeader", &[("*", Use::NoEffect)]),
    ("Globals", "Settings", &[("*", Use::NoEffect)]),
    (
        "Body",
        "Rigid_EulerParameter_PAI",
        &[
            ("ID", Use::Read),
            ("Name", Use::Read),
            ("Mass", Use::Read),
            ("LocationCenterMass", Use::Read),
            ("Inertia", Use::Read),
            ("OrientationPAI", Use::Read),
            ("InitialVelocityVector", Use::Read),
            ("InitialOmegaVector", Use::Read),
            ("RegardVelocityInertiaForcesInsideJacobian", Use::Read),
            ("Geometry", Use::NoEffect),
            ("Geometry Position", Use::NoEffect),
            ("Geometry Orientation", Use::NoEffect),
            ("Geometry Color", Use::NoEffect),
            ("Geometry Transparency", Use::NoEffect),
        ],
    ),
    (
        "Constraint",
        "Generic",
        &[
            ("ID", Use::Read),
            ("Name", Use::Read),
            ("BodyIDs", Use::Read),
            ("dxFixed", Use::Read),
            ("dyFixed", Use::Read),
            ("dzFixed", Use::Read),
            ("axFixed", Use::Read),
            ("ayFixed", Use::Read),
            ("azFixed", Use::Read),
            ("Location", Use::Read),
            ("ConstraintOrientation", Use::Read),
        ],
    ),
    (
        "Force",
        "Gravity",
        &[
            ("ID", Use::Read),
            ("Name", Use::Read),
            ("GravityAccVector", Use::Read),
            ("ActivationTime", Use::Read),
        ],
    ),
    (
        "Force",
        "GenericForce",
        &[
            ("ID", Use::Read),
            ("Name", Use::Read),
            ("BodyIDs", Use::Read),
            ("PointOfApplication_Body1", Use::Read),
            ("PointOfApplication_Body2", Use::Read),
            ("ForceDirectionType", Use::Read),
            ("ForceDirection", Use::Read),
            ("ForceExpression", Use::Read),
        ],
    ),
    (
        "Force",
        "GenericTorque",
        &[
            ("ID", Use::Read),
            ("Name", Use::Read),
            ("BodyIDs", Use::Read),
            ("AxisType", Use::Read),
            ("Axis", Use::Read),
            ("TorqueExpression", Use::Read),
        ],
    ),
    (
        "DataObject",
        "Parameter",
        &[
            ("ID", Use::Read),
            ("Name", Use::Read),
            ("InitialValue", Use::Read),
        ],
    ),
    (
        "DataObject",
        "Spline_1D",
        &[
            ("ID", Use::Read),
            ("Name", Use::Read),
            ("InterpolationType", Use::Read),
            ("PathToSplineData", Use::Read),
            ("NumberOfHeaderLines", Use::Read),
            ("ColumnXData", Use::Read),
            ("ColumnYData", Use::Read),
        ],
    ),
    (
        "Measure",
        "Translational",
        &[
            ("ID", Use::Read),
            ("Name", Use::Read),
            ("BodyIDs", Use::Read),
            ("MeasureMode", Use::Read),
            ("MeasureCoordinate", Use::Read),
            ("MeasureLocation_Body1", Use::Read),
            ("MeasureLocation_Body2", Use::Read),
            ("UseInitialValueAsOffset", Use::Read),
        ],
    ),
    (
        "Simulation",
        "Dynamic",
        &[
            ("ID", Use::NoEffect),
            ("Name", Use::NoEffect),
            ("SimulationTimeBegin", Use::Read),
            ("SimulationTimeEnd", Use::Read),
            ("OutputTimeBegin", Use::Read),
            ("OutputTimeStepSize", Use::Read),
            ("isExactOutputTimeEnforced", Use::Read),
            ("InitialPositionFromFile", Use::Read),
            ("InitialVelocityFromFile", Use::Read),
            ("Write*", Use::NoEffect),
        ],
    ),
    (
        "Solver",
        "HHT",
        &[
            ("ID", Use::NoEffect),
            ("Name", Use::NoEffect),
            ("Alpha", Use::Read),
            ("MaxNumberOfInnerIterations", Use::Read),
            ("GlobalErrorTolerance", Use::Read),
            ("SolverMinTimeStep", Use::Read),
            ("SolverMaxTimeStep", Use::Read),
            ("ModifyNewmark", Use::Read),
            (
                "MaxNumOfTimeStepsUsingSameFactorizedJacobian",
                Use::NoEffect,
            ),
            ("LinearSolver*", Use::NoEffect),
            ("Debug*", Use::NoEffect),
        ],
    ),
];

fn matches(pattern: &str, key: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => key.starts_with(prefix),
        None => pattern == key,
    }
}

/// The keys of a block after checking them against [`KEYS`]: every entry is known and
/// given once.
pub struct Fields<'a> {
    pub block: &'a Block,
}

impl<'a> Fields<'a> {
    /// `None` (with an error pushed) if the block's category or type is unknown.
    pub fn check(block: &'a Block, errors: &mut Vec<Error>) -> Option<Fields<'a>> {
        let (c, t) = (&block.category, &block.ty);
        let Some((_, _, keys)) = KEYS
            .iter()
            .find(|(kc, kt, _)| *kc == c.text && *kt == t.text)
        else {
            let (span, what, known): (Range<usize>, String, Vec<&str>) =
                if KEYS.iter().any(|(kc, _, _)| *kc == c.text) {
                    let types = KEYS.iter().filter(|k| k.0 == c.text).map(|k| k.1).collect();
                    (
                        t.span.clone(),
                        format!("unknown {} type `{}`", c.text, t.text),
                        types,
                    )
                } else {
                    let mut cats: Vec<&str> = KEYS.iter().map(|k| k.0).collect();
                    cats.dedup();
                    (c.span.clone(), format!("unknown block `{}`", c.text), cats)
                };
            errors.push(Error::new(
                Kind::Unknown,
                span,
                what,
                "not supported by the importer",
                &format!("known here: {}", known.join(", ")),
            ));
            return None;
        };
        for (i, e) in block.entries.iter().enumerate() {
            if !keys.iter().any(|(k, _)| matches(k, &e.key.text)) {
                let names: Vec<&str> = keys.iter().map(|k| k.0).collect();
                errors.push(Error::new(
                    Kind::Unknown,
                    e.key.span.clone(),
                    format!("unknown key `{}` in `{} {}`", e.key.text, c.text, t.text),
                    "unknown key",
                    &format!("keys of this block: {}", names.join(", ")),
                ));
            } else if block.entries[..i].iter().any(|p| p.key.text == e.key.text) {
                errors.push(Error::new(
                    Kind::Value,
                    e.key.span.clone(),
                    format!("key `{}` given twice", e.key.text),
                    "second time",
                    "keep one of them",
                ));
            }
        }
        Some(Fields { block })
    }

    pub fn get(&self, key: &str) -> Option<&'a Entry> {
        self.block.entries.iter().find(|e| e.key.text == key)
    }

    /// The entry, or an error at the block header.
    pub fn need(&self, key: &str, errors: &mut Vec<Error>) -> Option<&'a Entry> {
        let e = self.get(key);
        if e.is_none() {
            errors.push(Error::new(
                Kind::Value,
                self.block.head_span(),
                format!(
                    "`{} {}` needs the key `{key}`",
                    self.block.category.text, self.block.ty.text
                ),
                "in this block",
                &format!("add a line `{key} = ...`"),
            ));
        }
        e
    }

    /// Numbers of a required key: exactly `n` comma-separated values.
    pub fn nums(&self, key: &str, n: usize, errors: &mut Vec<Error>) -> Option<Vec<f64>> {
        let e = self.need(key, errors)?;
        nums(e, n, errors)
    }

    /// Numbers of an optional key, `default` when absent.
    pub fn nums_or(&self, key: &str, default: &[f64], errors: &mut Vec<Error>) -> Option<Vec<f64>> {
        match self.get(key) {
            None => Some(default.to_vec()),
            Some(e) => nums(e, default.len(), errors),
        }
    }

    pub fn vec3(&self, key: &str, errors: &mut Vec<Error>) -> Option<[f64; 3]> {
        self.nums(key, 3, errors).map(|v| [v[0], v[1], v[2]])
    }

    pub fn vec3_or(&self, key: &str, errors: &mut Vec<Error>) -> Option<[f64; 3]> {
        self.nums_or(key, &[0.0; 3], errors)
            .map(|v| [v[0], v[1], v[2]])
    }

    pub fn num(&self, key: &str, errors: &mut Vec<Error>) -> Option<f64> {
        self.nums(key, 1, errors).map(|v| v[0])
    }

    pub fn num_or(&self, key: &str, default: f64, errors: &mut Vec<Error>) -> Option<f64> {
        self.nums_or(key, &[default], errors).map(|v| v[0])
    }

    /// `yes`/`no` (any case); `default` when the key is absent.
    pub fn flag(&self, key: &str, default: bool, errors: &mut Vec<Error>) -> Option<bool> {
        let Some(e) = self.get(key) else {
            return Some(default);
        };
        match e.value.text.to_ascii_lowercase().as_str() {
            "yes" => Some(true),
            "no" => Some(false),
            _ => {
                errors.push(value_error(e, "expected `yes` or `no`", "`yes` or `no`"));
                None
            }
        }
    }

    /// One of `words` (compared without case); the index.
    pub fn choice(&self, key: &str, words: &[&str], errors: &mut Vec<Error>) -> Option<usize> {
        let e = self.need(key, errors)?;
        let found = words
            .iter()
            .position(|w| w.eq_ignore_ascii_case(&e.value.text));
        if found.is_none() {
            errors.push(value_error(
                e,
                &format!("expected one of {}", words.join(", ")),
                &format!("one of: {}", words.join(", ")),
            ));
        }
        found
    }
}

pub fn value_error(e: &Entry, msg: &str, hint: &str) -> Error {
    let span = if e.value.text.is_empty() {
        e.key.span.clone()
    } else {
        e.value.span.clone()
    };
    Error::new(
        Kind::Value,
        span,
        format!("`{}`: {msg}, found `{}`", e.key.text, e.value.text),
        "bad value",
        hint,
    )
}

/// Exactly `n` comma-separated finite numbers.
pub fn nums(e: &Entry, n: usize, errors: &mut Vec<Error>) -> Option<Vec<f64>> {
    let parts: Vec<&str> = e.value.text.split(',').map(str::trim).collect();
    let vals: Vec<f64> = parts
        .iter()
        .filter_map(|p| p.parse::<f64>().ok().filter(|v| v.is_finite()))
        .collect();
    if vals.len() == n && parts.len() == n {
        return Some(vals);
    }
    let what = if n == 1 {
        "a number".to_string()
    } else {
        format!("{n} comma-separated numbers")
    };
    errors.push(value_error(
        e,
        &format!("expected {what}"),
        &format!("write {what}"),
    ));
    None
}
