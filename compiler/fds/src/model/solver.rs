//! The run settings of a model: `Simulation Dynamic` and `Solver HHT`.

use super::{pairs, Kept, Reader, Simulation, Solver};
use crate::blocks::Entry;
use crate::error::{Error, Kind};
use crate::values::{nums, value_error, Fields, Use, KEYS};

impl Reader<'_> {
    pub(super) fn simulation(&mut self, f: &Fields) {
        let errs = &mut *self.errors;
        for key in ["SimulationTimeBegin", "OutputTimeBegin"] {
            zero_only(
                f,
                key,
                "the run starts at t = 0 and writes rows from t = 0",
                errs,
            );
        }
        for key in ["InitialPositionFromFile", "InitialVelocityFromFile"] {
            if f.flag(key, false, errs) == Some(true) {
                let e = f.get(key).expect("flag read it");
                errs.push(Error::new(
                    Kind::Unsupported,
                    e.value.span.clone(),
                    format!("`{key} = yes` is not supported"),
                    "initial state from a file",
                    "the importer takes the initial state from the Body blocks; set it to `no`",
                ));
            }
        }
        let _ = f.flag("isExactOutputTimeEnforced", true, errs);
        let end = f.num("SimulationTimeEnd", errs);
        let out = f.num("OutputTimeStepSize", errs);
        positive(f, "SimulationTimeEnd", end, errs);
        positive(f, "OutputTimeStepSize", out, errs);
        let taken = self.m.simulation.is_some();
        if let (Some(end), Some(output_every), true) = (end, out, self.once(f, taken)) {
            self.m.simulation = Some(Simulation {
                line: f.block.line,
                end,
                output_every,
            });
        }
        self.keep_no_effect(f);
    }

    pub(super) fn solver(&mut self, f: &Fields) {
        let errs = &mut *self.errors;
        let alpha = f.num_or("Alpha", -0.1, errs);
        if let (Some(e), Some(a)) = (f.get("Alpha"), alpha) {
            if !(-1.0 / 3.0..=0.0).contains(&a) {
                errs.push(value_error(e, "α must lie in [-1/3, 0]", "e.g. -0.1"));
            }
        }
        let iters = match f.get("MaxNumberOfInnerIterations") {
            None => Some(10),
            Some(e) => inner_iterations(e, errs),
        };
        let tol = f.num("GlobalErrorTolerance", errs);
        let hmin = f.num("SolverMinTimeStep", errs);
        let hmax = f.num("SolverMaxTimeStep", errs);
        for (k, v) in [
            ("GlobalErrorTolerance", tol),
            ("SolverMinTimeStep", hmin),
            ("SolverMaxTimeStep", hmax),
        ] {
            positive(f, k, v, errs);
        }
        if let (Some(a), Some(b), Some(e)) = (hmin, hmax, f.get("SolverMaxTimeStep")) {
            if b < a {
                errs.push(value_error(
                    e,
                    "the largest step is below the smallest",
                    "SolverMaxTimeStep >= SolverMinTimeStep",
                ));
            }
        }
        if f.flag("ModifyNewmark", false, errs) == Some(true) {
            let e = f.get("ModifyNewmark").expect("flag read it");
            errs.push(Error::new(
                Kind::Unsupported,
                e.value.span.clone(),
                "the modified Newmark formulas (`ModifyNewmark = yes`) are not supported",
                "not supported",
                "set `ModifyNewmark = no` (plain HHT-Newmark)",
            ));
        }
        let taken = self.m.solver.is_some();
        if let (
            Some(alpha),
            Some(max_iterations),
            Some(tolerance),
            Some(step_min),
            Some(step_max),
            true,
        ) = (alpha, iters, tol, hmin, hmax, self.once(f, taken))
        {
            self.m.solver = Some(Solver {
                line: f.block.line,
                alpha,
                max_iterations,
                tolerance,
                step_min,
                step_max,
            });
        }
        self.keep_no_effect(f);
    }

    /// Keys accepted without effect are kept as comments.
    fn keep_no_effect(&mut self, f: &Fields) {
        let entries = pairs(f.block.entries.iter().filter(|e| {
            KEYS.iter().any(|(c, t, keys)| {
                *c == f.block.category.text
                    && *t == f.block.ty.text
                    && keys.iter().any(|(k, u)| {
                        *u == Use::NoEffect
                            && (k
                                .strip_suffix('*')
                                .map_or(*k == e.key.text, |p| e.key.text.starts_with(p)))
                    })
            })
        }));
        if !entries.is_empty() {
            self.m.kept.push(Kept {
                line: f.block.line,
                block: format!("{} {}", f.block.category.text, f.block.ty.text),
                entries,
            });
        }
    }
}

/// `MaxNumberOfInnerIterations = N` or `N,0` (the second number's meaning is not
/// known; only 0 is accepted, so nothing is silently ignored).
fn inner_iterations(e: &Entry, errs: &mut Vec<Error>) -> Option<usize> {
    let parts: Vec<&str> = e.value.text.split(',').map(str::trim).collect();
    let n = parts[0].parse::<usize>().ok().filter(|&n| n >= 1);
    let rest_ok = parts.len() == 1 || (parts.len() == 2 && parts[1] == "0");
    if n.is_none() || !rest_ok {
        errs.push(value_error(
            e,
            "expected a count of at least 1, optionally followed by `,0`",
            "e.g. `10,0`",
        ));
        return None;
    }
    n
}

fn zero_only(f: &Fields, key: &str, why: &str, errs: &mut Vec<Error>) {
    if let Some(e) = f.get(key) {
        if nums(e, 1, errs).is_some_and(|v| v[0] != 0.0) {
            errs.push(Error::new(
                Kind::Unsupported,
                e.value.span.clone(),
                format!("`{key}` other than 0 is not supported"),
                "nonzero",
                why,
            ));
        }
    }
}

fn positive(f: &Fields, key: &str, v: Option<f64>, errs: &mut Vec<Error>) {
    if let (Some(e), Some(v)) = (f.get(key), v) {
        if v <= 0.0 {
            errs.push(value_error(e, "must be positive", "a positive number"));
        }
    }
}
