//! OpenCRG data roads: the builtin `crg("road.crg")` / `crg("road.crg",
//! "friction.crg")`, read at build time (path relative to the model file), and the
//! contacts of the tyres that roll on them.
//!
//! The value of a `crg(...)` call is the road's number (1, 2, ... in the order the
//! roads are first named; the same files give the same number). A tyre takes it in its
//! field `road` (0: no data road). The road data never enter the IR: the runtime
//! evaluates them and writes the tangent plane under the wheel centre into the tyre's
//! slots before every evaluation (`runtime/src/system/road_feed.rs`), so the object
//! cache need not know the files.
//!
//! **The contract with the tyre types** (one place: [`PLANE_SLOTS`]): a type with a
//! parameter `road` connected to one body has the parameters `at` (wheel centre at
//! t = 0, global), `mu` (its own friction) and the six `plane_*` slots, read as
//! h += plane_h + plane_gx (x − plane_x) + plane_gy (y − plane_y), μ += plane_mu.

use crate::expr::Lowerer;
use crate::value::Val;
use crate::{LowerError, Lowering, TypeKey};
use fdc_frontend::ast::{Expr, ExprKind, Span};
use fdc_runtime::{RoadContact, Roads};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The tangent-plane slots a data road writes, in the order of `RoadContact::slots`.
pub const PLANE_SLOTS: [&str; 6] = [
    "plane_x", "plane_y", "plane_h", "plane_gx", "plane_gy", "plane_mu",
];

/// The roads named so far in one lowering, by their files (surface, friction).
#[derive(Default)]
pub struct RoadTable {
    files: Vec<(PathBuf, Option<PathBuf>)>,
    roads: Vec<Arc<fdc_road::Road>>,
}

impl RoadTable {
    pub fn roads(&self) -> Vec<Arc<fdc_road::Road>> {
        self.roads.clone()
    }

    /// Every file of the roads named so far (surfaces and friction files).
    pub fn files(&self) -> impl Iterator<Item = &PathBuf> {
        self.files
            .iter()
            .flat_map(|(s, f)| std::iter::once(s).chain(f))
    }
}

fn error(span: Span, code: &'static str, message: String, label: &str, hint: String) -> LowerError {
    LowerError {
        span: Some(span),
        message,
        code: Some(code),
        label: Some(label.to_string()),
        hint: Some(hint),
        warning: false,
    }
}

impl Lowerer<'_, '_, '_> {
    /// `crg(...)`: the road's number as a constant (the checker has made sure the
    /// arguments are one or two string literals).
    pub(crate) fn crg_call(&mut self, args: &[Expr], span: Span) -> Option<Val> {
        let mut files = Vec::new();
        for a in args {
            let ExprKind::Str(path) = &a.kind else {
                return self.error(span, "the arguments of `crg` are strings");
            };
            match self.relative_path(path, a.span, "E0918", "road file") {
                Ok(full) => files.push((full, path.as_str(), a.span)),
                Err(e) => {
                    self.errors.push(e);
                    return None;
                }
            }
        }
        let key = (
            files[0].0.clone(),
            files.get(1).map(|(full, _, _)| full.clone()),
        );
        if let Some(k) = self
            .globals
            .roads
            .borrow()
            .files
            .iter()
            .position(|f| *f == key)
        {
            return Some(Val::S(self.graph().constant((k + 1) as f64)));
        }
        let mut crgs = Vec::new();
        for (full, shown, at) in &files {
            match fdc_road::Crg::open(full) {
                Ok(c) => crgs.push(c),
                Err(e) => {
                    let dir = full.parent().unwrap_or(Path::new(""));
                    self.errors.push(crg_error(&e, shown, *at, dir));
                    return None;
                }
            }
        }
        let surface = crgs.remove(0);
        let road = match fdc_road::Road::new(surface, crgs.pop()) {
            Ok(r) => r,
            Err(e) => {
                let (full, shown, at) = &files[files.len() - 1];
                let dir = full.parent().unwrap_or(Path::new(""));
                self.errors.push(crg_error(&e, shown, *at, dir));
                return None;
            }
        };
        let mut table = self.globals.roads.borrow_mut();
        table.files.push(key);
        table.roads.push(Arc::new(road));
        let k = table.roads.len();
        drop(table);
        Some(Val::S(self.graph().constant(k as f64)))
    }
}

/// A file that is not a usable OpenCRG road: E0918 unreadable, E0919 not valid or
/// not supported.
fn crg_error(e: &fdc_road::CrgError, shown: &str, span: Span, dir: &Path) -> LowerError {
    match e {
        fdc_road::CrgError::Io(why) => {
            crate::tir::unreadable(span, "E0918", "road file", shown, why.clone(), dir)
        }
        other => error(
            span,
            "E0919",
            format!("`{shown}` is not a usable OpenCRG road: {other}"),
            "this road file",
            "docs/roads.md lists the OpenCRG 1.x formats and options fdc reads".into(),
        ),
    }
}

impl Lowering<'_> {
    /// The road contact of a new instance whose type has a `road` field set to a
    /// road's number (nothing for a type without one or with `road = 0`).
    pub(crate) fn record_road(
        &mut self,
        key: &TypeKey,
        instance: usize,
        bodies: &[usize],
        span: Span,
    ) {
        let slots = &self.cache[key].slots;
        let slot = |name: &str| slots.iter().find(|s| s.name == name).map(|s| s.offset);
        let Some(road_slot) = slot("road") else {
            return;
        };
        let params = &self.instances[instance].params;
        let value = params[road_slot];
        if value == 0.0 {
            return;
        }
        let n_roads = self.globals.roads.borrow().roads.len();
        let bad = |why: String| {
            error(
                span,
                "E0921",
                why,
                "this tyre",
                "give `road` the value of `crg(\"road.crg\")` (or 0: no data road)".into(),
            )
        };
        if value.fract() != 0.0 || value < 1.0 || value > n_roads as f64 {
            let e = bad(format!(
                "`road = {value}` is not a road named by `crg(...)`"
            ));
            self.errors.push(e);
            return;
        }
        let plane: Option<Vec<usize>> = PLANE_SLOTS.iter().map(|n| slot(n)).collect();
        let (Some(plane), Some(at), Some(mu), [body]) = (plane, slot("at"), slot("mu"), bodies)
        else {
            let e = bad(
                "a data road needs a tyre on one body with the fields `at`, `mu` and `plane_*`"
                    .into(),
            );
            self.errors.push(e);
            return;
        };
        let q0 = &self.bodies[*body].q0;
        let centre = [params[at], params[at + 1], params[at + 2]];
        let q_map = &self.instances[instance].q_map;
        let mut q = [0; 7];
        q.copy_from_slice(&q_map[q_map.len() - 7..]);
        let contact = RoadContact {
            instance,
            road: value as usize - 1,
            q,
            offset: body_offset(q0, centre),
            slots: std::array::from_fn(|k| plane[k]),
            mu_base: params[mu],
        };
        self.road_contacts.push(contact);
    }

    /// The `tir(...)` and `crg(...)` files this lowering read, sorted, each once.
    pub(crate) fn data_files(&self) -> Vec<PathBuf> {
        let tir = self.globals.tir.borrow();
        let roads = self.globals.roads.borrow();
        let mut out: Vec<PathBuf> = tir.keys().chain(roads.files()).cloned().collect();
        out.sort();
        out.dedup();
        out
    }

    /// The roads and contacts of the finished lowering.
    pub(crate) fn roads(&mut self) -> Roads {
        Roads {
            roads: self.globals.roads.borrow().roads(),
            contacts: std::mem::take(&mut self.road_contacts),
        }
    }
}

/// Rᵀ (p − r) for the body coordinates q0 = [r; θ] (θ scalar first): the point p in
/// body components.
fn body_offset(q0: &[f64], p: [f64; 3]) -> [f64; 3] {
    let d = [p[0] - q0[0], p[1] - q0[1], p[2] - q0[2]];
    let m = fdc_runtime::quat_matrix([q0[3], q0[4], q0[5], q0[6]]);
    // Rᵀ d: column k of R dotted with d.
    std::array::from_fn(|k| m[0][k] * d[0] + m[1][k] * d[1] + m[2][k] * d[2])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_offset_is_in_body_components() {
        // Body at (1, 2, 3) turned a quarter about z: the global point (1, 3, 3) (one
        // metre along global y) is one metre along body x.
        let h = std::f64::consts::FRAC_1_SQRT_2;
        let u = body_offset(&[1.0, 2.0, 3.0, h, 0.0, 0.0, h], [1.0, 3.0, 3.0]);
        assert!((u[0] - 1.0).abs() < 1e-12 && u[1].abs() < 1e-12 && u[2].abs() < 1e-12);
    }
}
