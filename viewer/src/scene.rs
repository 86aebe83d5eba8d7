//! What the page needs of the model besides the results: one entry per body with its
//! display shape in the body frame, and the model's parameters for the panel.

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
    /// Joint markers and spring lines.
    pub glyphs: Vec<Glyph>,
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
    /// The bodies of a built model with the box of their inertia. A body instance's
    /// first parameters are `mass` and `inertia` (stdlib/bodies.fd declares them first
    /// in every body type); anything else gets the fallback cube.
    pub fn of(t: &Template) -> Scene {
        let model = &t.built.model;
        let bodies = t
            .built
            .bodies
            .iter()
            .map(|name| {
                let inst = model.instances.iter().find(|i| &i.name == name);
                let size = inst
                    .filter(|i| i.params.len() >= 4)
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
        Scene {
            bodies,
            params,
            fixed,
            glyphs: t.built.glyphs.clone(),
        }
    }

    pub fn to_json(&self) -> Value {
        json!({
            "bodies": self.bodies.iter().map(|b| json!({
                "name": b.name, "size": b.size,
                "shapes": b.shapes.iter().map(shape_json).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "fixed": self.fixed.iter().map(shape_json).collect::<Vec<_>>(),
            "glyphs": self.glyphs.iter().map(glyph_json).collect::<Vec<_>>(),
            "params": self.params.iter().map(|(n, v)| json!({"name": n, "value": v}))
                .collect::<Vec<_>>(),
        })
    }
}

/// One shape for the page: its kind and dimensions, colour (0xRRGGBB or null for the
/// body's palette colour), opacity and pose in the body frame (quaternion w, x, y, z).
fn shape_json(s: &Shape) -> Value {
    let mut v = match &s.geometry {
        Geometry::Box { size } => json!({"kind": "box", "size": size}),
        Geometry::Sphere { radius } => json!({"kind": "sphere", "radius": radius}),
        Geometry::Cylinder { radius, length } => {
            json!({"kind": "cylinder", "radius": radius, "length": length})
        }
        Geometry::Capsule { radius, length } => {
            json!({"kind": "capsule", "radius": radius, "length": length})
        }
        Geometry::Mesh {
            scale, triangles, ..
        } => json!({
            "kind": "mesh", "scale": scale,
            "vertices": triangles.iter().flatten().collect::<Vec<_>>(),
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

/// A glyph for the page: `joint` (one end, maybe an axis) or `spring` (two ends), each
/// end a body (null: ground) and a point in its frame.
fn glyph_json(g: &Glyph) -> Value {
    let kind = match g.kind {
        GlyphKind::Joint => "joint",
        GlyphKind::Spring => "spring",
    };
    json!({
        "name": g.instance, "kind": kind, "axis": g.axis,
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
    fn no_box_for_impossible_inertia() {
        assert_eq!(equivalent_box(1.0, [1.0, 0.1, 0.1]), None);
        assert_eq!(equivalent_box(0.0, [1.0, 1.0, 1.0]), None);
    }
}
