//! What the page needs of the model besides the results: one entry per body with its
//! display shape in the body frame, and the model's parameters for the panel.

use crate::meshes::{self, SentMesh};
use fdc_driver::template::Template;
use fdc_lower::shapes::{Geometry, Glyph, GlyphKind, Shape};
use serde_json::{json, Value};

/// The scene of a built model.
#[derive(Clone, Debug, PartialEq)]
pub struct Scene {
    pub bodies: Vec<BodyShape>,
    /// Model parameters (scalars only: the panel shows one number each).
    pub params: Vec<(String, f64)>,
    /// Shapes declared on `ground`: fixed in the global frame.
    pub fixed: Vec<Shape>,
    /// Joint markers, spring lines and tyres (with their analytic roads).
    pub glyphs: Vec<Glyph>,
    /// The data roads (`crg(...)`) the tyres roll on, sampled for a mesh.
    pub roads: Vec<RoadGrid>,
    /// The distinct mesh files of the shapes, sent apart from the scene's JSON (a
    /// mesh shape names its entry).
    pub meshes: Vec<SentMesh>,
}

/// A data road sampled on (a thinned copy of) its grid: `nu` × `nv` points (x, y, z),
/// u-major, lateral position v fastest.
#[derive(Clone, Debug, PartialEq)]
pub struct RoadGrid {
    pub nu: usize,
    pub nv: usize,
    pub points: Vec<[f64; 3]>,
}

/// Points per grid cell edge of a data road: the road is bilinear per cell, a mesh of
/// triangles on its nodes alone would cut the twist of every cell.
const ROAD_SUB: usize = 4;
/// At most this many points along a data road and across it: a long road shows its
/// whole length with fewer points than its grid has.
const ROAD_MAX_U: usize = 1000;
const ROAD_MAX_V: usize = 60;

impl RoadGrid {
    /// The surface of `road` from the road's own evaluation ((u, v) → (x, y) and
    /// z(u, v)) on a uniform (u, v) grid of [`ROAD_SUB`] points per cell edge, thinned
    /// to the limits above.
    pub fn of(road: &fdc_road::Road) -> RoadGrid {
        let s = &road.surface;
        let ((u0, u1), (v0, v1)) = (s.u_range(), s.v_range());
        let count = |cells: usize, max: usize| (cells * ROAD_SUB + 1).clamp(2, max);
        let nu = count(s.reference_line().count().saturating_sub(1), ROAD_MAX_U);
        let nv = count(s.sections().len().saturating_sub(1), ROAD_MAX_V);
        let mut points = Vec::with_capacity(nu * nv);
        for i in 0..nu {
            let u = u0 + (u1 - u0) * i as f64 / (nu - 1) as f64;
            for j in 0..nv {
                let v = v0 + (v1 - v0) * j as f64 / (nv - 1) as f64;
                let (x, y) = s.uv_to_xy(u, v);
                points.push([x, y, s.uv_to_z(u, v)]);
            }
        }
        RoadGrid { nu, nv, points }
    }
}

/// A body's default shape: the box with the body's mass and principal inertia.
#[derive(Clone, Debug, PartialEq)]
pub struct BodyShape {
    pub name: String,
    /// Edge lengths along the body axes [m].
    pub size: [f64; 3],
    /// The shapes the model declares on the body; none: the box of `size`.
    pub shapes: Vec<Shape>,
}

/// Side of the cube shown when a body's inertia says nothing (zero, negative, or not
/// the inertia of any solid): small enough not to hide a mechanism of a metre.
const FALLBACK_SIZE: f64 = 0.05;

/// Edge lengths of the homogeneous box with mass `m` and principal moments `j`:
/// J_x = m (b² + c²) / 12 and cyclic, so a² = 6 (J_y + J_z − J_x) / m. `None` when
/// the moments violate the triangle inequality (no box has them) or `m <= 0`.
pub fn equivalent_box(m: f64, j: [f64; 3]) -> Option<[f64; 3]> {
    if m.is_nan() || m <= 0.0 || j.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let edge = |a: usize, b: usize, c: usize| {
        let sq = 6.0 * (j[b] + j[c] - j[a]) / m;
        (sq >= 0.0).then(|| sq.sqrt())
    };
    let s = [edge(0, 1, 2)?, edge(1, 2, 0)?, edge(2, 0, 1)?];
    s.iter().all(|v| *v > 0.0).then_some(s)
}

impl Scene {
    /// The bodies of a built model with the box of their inertia. A body instance with
    /// an orientation (7 stored coordinates) has `mass` and `inertia` as its first
    /// parameters (stdlib/bodies.fd declares them first in every such body type);
    /// anything else (a point mass: 3 coordinates, no inertia) gets the fallback cube.
    pub fn of(t: &Template) -> Scene {
        let model = &t.built.model;
        let bodies = t
            .built
            .bodies
            .iter()
            .map(|name| {
                let inst = model.instances.iter().find(|i| &i.name == name);
                let size = inst
                    .filter(|i| i.params.len() >= 4 && i.q_map.len() == 7)
                    .and_then(|i| {
                        equivalent_box(i.params[0], [i.params[1], i.params[2], i.params[3]])
                    })
                    .unwrap_or([FALLBACK_SIZE; 3]);
                let shapes = (t.built.shapes.iter())
                    .filter(|s| s.body.as_ref() == Some(name))
                    .cloned()
                    .collect();
                BodyShape {
                    name: name.clone(),
                    size,
                    shapes,
                }
            })
            .collect();
        let params = t
            .parameters
            .iter()
            .filter(|(_, v)| v.len() == 1)
            .map(|(n, v)| (n.clone(), v[0]))
            .collect();
        let fixed = (t.built.shapes.iter())
            .filter(|s| s.body.is_none())
            .cloned()
            .collect();
        let meshes = meshes::collect(t.built.shapes.iter());
        Scene {
            bodies,
            params,
            fixed,
            meshes,
            glyphs: t.built.glyphs.clone(),
            roads: model.roads.roads.iter().map(|r| RoadGrid::of(r)).collect(),
        }
    }

    pub fn to_json(&self) -> Value {
        let shape = |s: &Shape| shape_json(s, &self.meshes);
        json!({
            "bodies": self.bodies.iter().map(|b| json!({
                "name": b.name, "size": b.size,
                "shapes": b.shapes.iter().map(shape).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "fixed": self.fixed.iter().map(shape).collect::<Vec<_>>(),
            "meshes": self.meshes.iter().map(|m| json!({
                "triangles": m.triangles, "sent": m.bytes.len() / 36,
            })).collect::<Vec<_>>(),
            "glyphs": self.glyphs.iter().map(glyph_json).collect::<Vec<_>>(),
            "roads": self.roads.iter().map(|r| json!({
                "nu": r.nu, "nv": r.nv, "points": r.points.iter().flatten().collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "params": self.params.iter().map(|(n, v)| json!({"name": n, "value": v}))
                .collect::<Vec<_>>(),
        })
    }
}

/// One shape for the page: its kind and dimensions (a mesh: its entry in `meshes`),
/// colour (0xRRGGBB or null for the body's palette colour), opacity and pose in the
/// body frame (quaternion w, x, y, z).
fn shape_json(s: &Shape, meshes: &[SentMesh]) -> Value {
    let mut v = match &s.geometry {
        Geometry::Box { size } => json!({"kind": "box", "size": size}),
        Geometry::Sphere { radius } => json!({"kind": "sphere", "radius": radius}),
        Geometry::Cylinder { radius, length } => {
            json!({"kind": "cylinder", "radius": radius, "length": length})
        }
        Geometry::Capsule { radius, length } => {
            json!({"kind": "capsule", "radius": radius, "length": length})
        }
        Geometry::Mesh { scale, path, .. } => json!({
            "kind": "mesh", "scale": scale,
            "mesh": meshes.iter().position(|m| &m.path == path),
        }),
    };
    let rgb = s.colour.map(|c| {
        c.iter()
            .fold(0u32, |acc, x| (acc << 8) | (x * 255.0).round() as u32)
    });
    v["colour"] = json!(rgb);
    v["opacity"] = json!(s.opacity);
    v["at"] = json!(s.at);
    v["orientation"] = json!(s.orientation);
    v
}

/// A glyph for the page: `joint` (one end, maybe an axis), `spring` (two ends),
/// `point` (a force at a point: one or two ends, maybe a constant global `force`) or
/// `tyre` (the wheel centre, maybe its analytic `road`), each end a body (null:
/// ground) and a point in its frame.
fn glyph_json(g: &Glyph) -> Value {
    let kind = match g.kind {
        GlyphKind::Joint => "joint",
        GlyphKind::Spring => "spring",
        GlyphKind::Tyre => "tyre",
        GlyphKind::Point => "point",
    };
    let road = g
        .road
        .as_ref()
        .map(|r| json!({"plane": r.plane, "x": r.x, "y": r.y}));
    json!({
        "name": g.instance, "kind": kind, "axis": g.axis, "road": road, "force": g.force,
        "ends": g.ends.iter().map(|(b, p)| json!({"body": b, "at": p})).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn box_of_its_own_inertia() {
        // A 0.3 x 0.2 x 0.1 box of 2 kg, moments from the closed form.
        let (m, a, b, c) = (2.0, 0.3, 0.2, 0.1);
        let j = [
            m * (b * b + c * c) / 12.0,
            m * (a * a + c * c) / 12.0,
            m * (a * a + b * b) / 12.0,
        ];
        let s = equivalent_box(m, j).unwrap();
        for (got, want) in s.iter().zip([a, b, c]) {
            assert!((got - want).abs() < 1e-12, "{s:?}");
        }
    }

    #[test]
    fn data_road_grid_lies_on_the_road() {
        // straight.crg: 40 m in steps of 0.5 m, 9 sections from v = -2 to 2 m.
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/roads/straight.crg");
        let road = fdc_road::Road::new(fdc_road::Crg::open(&path).unwrap(), None).unwrap();
        let g = RoadGrid::of(&road);
        assert_eq!((g.nu, g.nv), (80 * ROAD_SUB + 1, 8 * ROAD_SUB + 1));
        assert_eq!(g.points.len(), g.nu * g.nv);
        // Each point's height is the road's at its (x, y), through the other mapping
        // ((x, y) -> (u, v)); the relief is there (±3 cm bumps).
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for p in &g.points {
            let z = road.height(p[0], p[1]);
            assert!((z - p[2]).abs() < 1e-9, "{p:?}: {z}");
            (lo, hi) = (lo.min(p[2]), hi.max(p[2]));
        }
        assert!(hi - lo > 0.03, "relief {lo}..{hi}");
        // The default modifiers put the start of the reference line at the origin.
        let mid = g.points[(g.nv - 1) / 2];
        assert!(mid[0].abs() < 1e-9 && mid[1].abs() < 1e-9, "{mid:?}");
    }

    #[test]
    fn no_box_for_impossible_inertia() {
        assert_eq!(equivalent_box(1.0, [1.0, 0.1, 0.1]), None);
        assert_eq!(equivalent_box(0.0, [1.0, 1.0, 1.0]), None);
    }
}
