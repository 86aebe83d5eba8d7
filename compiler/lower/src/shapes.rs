//! Display shapes (`shape KIND on BODY { ... }`): evaluated here like instance fields,
//! checked, and kept in [`LoweredModel::shapes`] beside the model. They take no part in
//! the element functions, the runtime model or the object cache key: a model with and
//! without shapes compiles to the same code.

use super::*;
use crate::mesh::{parse_mesh, Triangles};

/// A shape value the viewer cannot draw: a size that is not positive, a colour or an
/// opacity outside 0..1.
pub const E_SHAPE: &str = "E0960";
/// The mesh file of a shape cannot be read (missing, not a regular file, too large).
pub const E_MESH_READ: &str = "E0961";
/// The mesh file is no STL or OBJ mesh the reader understands.
pub const E_MESH_FORMAT: &str = "E0962";

/// A display shape in the frame of its body (or fixed, on `ground`).
#[derive(Clone, Debug, PartialEq)]
pub struct Shape {
    /// The body, `None` for `ground` (the shape stands in the global frame).
    pub body: Option<String>,
    pub geometry: Geometry,
    /// RGB in 0..1; `None`: the viewer's colour of the body.
    pub colour: Option<[f64; 3]>,
    pub opacity: f64,
    /// Offset and orientation (unit quaternion, scalar first) in the body frame.
    pub at: [f64; 3],
    pub orientation: [f64; 4],
}

#[derive(Clone, Debug, PartialEq)]
pub enum Geometry {
    Box {
        size: [f64; 3],
    },
    Sphere {
        radius: f64,
    },
    /// Along the shape's z axis, centred at its origin.
    Cylinder {
        radius: f64,
        length: f64,
    },
    /// A cylinder of `length` along z with a half sphere at each end.
    Capsule {
        radius: f64,
        length: f64,
    },
    /// Triangles in the file's units, shown times `scale`.
    Mesh {
        path: std::path::PathBuf,
        scale: f64,
        triangles: Triangles,
    },
}

impl<'a> Lowering<'a> {
    fn shape_error(&mut self, code: &'static str, span: Span, message: String, label: &str) {
        self.errors.push(LowerError {
            span: Some(span),
            message,
            code: Some(code),
            label: Some(label.into()),
            ..Default::default()
        });
    }

    /// The shape, or `None` after its errors are recorded.
    pub(super) fn shape(&mut self, sh: &ShapeDecl) -> Option<Shape> {
        let body = self
            .connection(&sh.body)?
            .map(|b| self.body_name(b).to_string());
        let mut values: HashMap<&str, (Vec<f64>, Span)> = HashMap::new();
        let mut file = None;
        for f in &sh.fields {
            match &f.value.kind {
                ExprKind::Str(s) => file = Some((s.clone(), f.value.span)),
                _ => {
                    let v = self.numeric(&f.value)?;
                    values.insert(f.name.name.as_str(), (v, f.value.span));
                }
            }
        }
        let mut ok = true;
        let mut get = |l: &mut Self, name: &str, positive: bool, unit: bool| -> Option<Vec<f64>> {
            let (v, span) = values.get(name)?.clone();
            let bad = v.iter().any(|x| {
                !x.is_finite() || (positive && *x <= 0.0) || (unit && !(0.0..=1.0).contains(x))
            });
            if bad {
                ok = false;
                let want = if unit { "between 0 and 1" } else { "positive" };
                let msg = format!("shape field `{name}` must be {want}, found {v:?}");
                l.shape_error(E_SHAPE, span, msg, &format!("not {want}"));
            }
            Some(v)
        };
        let scalar = |v: Option<Vec<f64>>| v.map_or(1.0, |v| v[0]);
        let geometry = match sh.kind.name.as_str() {
            "box" => {
                let s = get(self, "size", true, false)?;
                Geometry::Box {
                    size: [s[0], s[1], s[2]],
                }
            }
            "sphere" => Geometry::Sphere {
                radius: scalar(get(self, "radius", true, false)),
            },
            "cylinder" | "capsule" => {
                let radius = scalar(get(self, "radius", true, false));
                let length = scalar(get(self, "length", sh.kind.name == "cylinder", false));
                if sh.kind.name == "cylinder" {
                    Geometry::Cylinder { radius, length }
                } else {
                    Geometry::Capsule {
                        radius,
                        length: length.max(0.0),
                    }
                }
            }
            _ => {
                let scale = scalar(get(self, "scale", true, false));
                let (name, span) = file?;
                let (path, triangles) = self.mesh_file(sh, &name, span)?;
                Geometry::Mesh {
                    path,
                    scale,
                    triangles,
                }
            }
        };
        let colour = get(self, "colour", false, true).map(|c| [c[0], c[1], c[2]]);
        let opacity = scalar(get(self, "opacity", false, true));
        let at = get(self, "at", false, false).map_or([0.0; 3], |a| [a[0], a[1], a[2]]);
        let q = get(self, "orientation", false, false).unwrap_or(vec![1.0, 0.0, 0.0, 0.0]);
        let n = q.iter().map(|x| x * x).sum::<f64>().sqrt();
        if n.is_nan() || n <= 0.0 {
            let span = values["orientation"].1;
            let msg = "shape field `orientation` must be a quaternion other than 0".to_string();
            self.shape_error(E_SHAPE, span, msg, "zero quaternion");
            return None;
        }
        ok.then(|| Shape {
            body,
            geometry,
            colour,
            opacity,
            at,
            orientation: [q[0] / n, q[1] / n, q[2] / n, q[3] / n],
        })
    }

    /// The triangles of a mesh file, read relative to the declaring model file's
    /// directory through the front end's safe reader.
    fn mesh_file(
        &mut self,
        sh: &ShapeDecl,
        name: &str,
        span: Span,
    ) -> Option<(std::path::PathBuf, Triangles)> {
        let model = self.globals.files.and_then(|f| f.path(sh.span.file));
        let Some(model) = model else {
            let msg =
                format!("cannot read mesh `{name}`: the location of the model file is unknown");
            self.shape_error(
                E_MESH_READ,
                span,
                msg,
                "mesh file relative to an unknown directory",
            );
            return None;
        };
        let path = model
            .parent()
            .unwrap_or(std::path::Path::new(""))
            .join(name);
        let bytes =
            match fdc_frontend::source::read_bytes(&path, fdc_frontend::source::MAX_DATA_BYTES) {
                Ok(b) => b,
                Err(e) => {
                    let msg = format!("cannot read mesh `{}`: {e}", path.display());
                    self.shape_error(E_MESH_READ, span, msg, "this mesh file");
                    return None;
                }
            };
        match parse_mesh(name, &bytes) {
            Ok(t) => Some((path, t)),
            Err(e) => {
                let msg = format!("mesh `{}` cannot be read: {e}", path.display());
                self.shape_error(E_MESH_FORMAT, span, msg, "not an STL or OBJ mesh");
                None
            }
        }
    }
}

/// What `fdc view` draws of a joint or a force of the model besides the bodies: the
/// points it acts at, each fixed in the frame of the body it belongs to.
#[derive(Clone, Debug, PartialEq)]
pub struct Glyph {
    /// The instance (its result channels start with `NAME.`).
    pub instance: String,
    pub kind: GlyphKind,
    /// (body, point in the body frame); `None`: ground (the point is global).
    pub ends: Vec<(Option<String>, [f64; 3])>,
    /// A joint's `axis` in the frame of its first body.
    pub axis: Option<[f64; 3]>,
    /// A tyre's analytic road (the page draws its surface).
    pub road: Option<AnalyticRoad>,
    /// A constant global force [N] acting at the first end (the page's force arrow).
    pub force: Option<[f64; 3]>,
}

/// The analytic road under a tyre: the arguments of `road_height` (stdlib/roads.fd)
/// as the tyre's parameters hold them after the build. The road formula's home is
/// roads.fd; the page evaluates the same sum (test: its surface against the tyre's
/// `road_height` output).
#[derive(Clone, Debug, PartialEq)]
pub struct AnalyticRoad {
    /// [height at the origin, slope along x, slope along y].
    pub plane: [f64; 3],
    /// Harmonics along x and along y: [amplitudes, spatial frequencies, phases],
    /// component i of each the harmonic i.
    pub x: [[f64; 3]; 3],
    pub y: [[f64; 3]; 3],
}

/// The fields of a tyre type that hold its analytic road, in `road_height`'s order.
const ROAD_FIELDS: [&str; 7] = [
    "road_plane",
    "road_x_amp",
    "road_x_freq",
    "road_x_phase",
    "road_y_amp",
    "road_y_freq",
    "road_y_phase",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GlyphKind {
    /// A joint with a field `at`: a marker (and its axis) at the joint point.
    Joint,
    /// A force with `at_a` and `at_b` (spring_damper): a line between the two points.
    Spring,
    /// A tyre (a type with the fields of an analytic road and `at`): a marker at the
    /// wheel centre; the page puts one at the contact point from `NAME.contact.*`.
    Tyre,
    /// A force at one point `at` (a bushing, a constant force, an axial spring): a
    /// marker at the point on its first body (and a line to the same point of the
    /// second body, which shows a bushing's deflection).
    Point,
}

/// A connected body at t = 0: its name, position and orientation (w, x, y, z).
type Frame = (String, [f64; 3], [f64; 4]);

/// The glyph of a top-level instance, from its given fields (global at t = 0):
/// `at` (and `axis`) of a joint, `at_a` and `at_b` of a force between two points.
pub(super) fn glyph_of(
    kind: Kind,
    name: &str,
    conns: &[Option<Frame>],
    fields: &[(String, Vec<f64>, Span, Option<usize>)],
) -> Option<Glyph> {
    let field = |n: &str| {
        let f = fields.iter().find(|f| f.0 == n && f.1.len() == 3)?;
        Some([f.1[0], f.1[1], f.1[2]])
    };
    // A global point (or direction) in the frame of connection `k` at t = 0.
    let local = |k: usize, p: [f64; 3], direction: bool| {
        let c = conns.get(k)?.as_ref();
        Some(match c {
            None => (None, p),
            Some((b, r, q)) => {
                let d = if direction {
                    p
                } else {
                    [0, 1, 2].map(|i| p[i] - r[i])
                };
                (Some(b.clone()), rotate_back(*q, d))
            }
        })
    };
    let (kind, ends, axis) = match kind {
        Kind::Joint => {
            let at = local(0, field("at")?, false)?;
            let axis = field("axis").and_then(|a| local(0, a, true)).map(|a| a.1);
            (GlyphKind::Joint, vec![at], axis)
        }
        Kind::Force => {
            let a = local(0, field("at_a")?, false)?;
            let b = local(1, field("at_b")?, false)?;
            (GlyphKind::Spring, vec![a, b], None)
        }
        _ => return None,
    };
    Some(Glyph {
        instance: name.to_string(),
        kind,
        ends,
        axis,
        road: None,
        force: None,
    })
}

/// θᵀ v for the unit quaternion θ = (w, x, y, z): a global vector in body components.
fn rotate_back(q: [f64; 4], v: [f64; 3]) -> [f64; 3] {
    let (w, u) = (q[0], [-q[1], -q[2], -q[3]]);
    let cross = |a: [f64; 3], b: [f64; 3]| {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    };
    let uv = cross(u, v);
    let uuv = cross(u, uv);
    [0, 1, 2].map(|i| v[i] + 2.0 * (w * uv[i] + uuv[i]))
}

impl<'a> Lowering<'a> {
    /// Records the glyph of a top-level instance (none for most kinds).
    pub(super) fn glyph(
        &mut self,
        inst: &fdc_frontend::ast::Instance,
        conns: &[Option<usize>],
        fields: &[(String, Vec<f64>, Span, Option<usize>)],
    ) {
        let frames: Vec<_> = conns
            .iter()
            .map(|c| {
                c.filter(|&b| self.bodies[b].q0.len() == 7).map(|b| {
                    let q = &self.bodies[b].q0;
                    let name = self.body_name(b).to_string();
                    (name, [q[0], q[1], q[2]], [q[3], q[4], q[5], q[6]])
                })
            })
            .collect();
        // A connection that is a body without a pose (a vector-space element): none.
        if conns
            .iter()
            .zip(&frames)
            .any(|(c, f)| c.is_some() && f.is_none())
        {
            return;
        }
        if let Some(g) = glyph_of(inst.kind, &inst.name.name, &frames, fields) {
            self.glyphs.push(g);
        }
    }
}

impl Lowering<'_> {
    /// The glyph of a tyre or of a force at a point, from the parameters of the new
    /// instance `instance` (defaults evaluated): a type with every slot of
    /// [`ROAD_FIELDS`] and `at` on one body is a tyre (with its analytic road); another
    /// `force` type with a 3-vector `at` and no `at_a` acts at that point, and when it
    /// also has a 3-vector `value` that is the constant global force (stdlib's
    /// `constant_force`: display only, the page's arrow). Bodies without a pose
    /// (vector-space elements) give none.
    pub(super) fn point_glyph(
        &mut self,
        kind: Kind,
        key: &TypeKey,
        instance: usize,
        bodies: &[usize],
    ) {
        let slots = &self.cache[key].slots;
        let p = &self.instances[instance].params;
        let vec3 = |name: &str| {
            let s = slots.iter().find(|s| s.name == name && s.size == 3)?;
            Some([p[s.offset], p[s.offset + 1], p[s.offset + 2]])
        };
        let Some(at) = vec3("at") else {
            return;
        };
        let road: Option<Vec<[f64; 3]>> = ROAD_FIELDS.iter().map(|n| vec3(n)).collect();
        let glyph_kind = match (&road, bodies.len()) {
            (Some(_), 1) => GlyphKind::Tyre,
            (None, 1 | 2) if kind == Kind::Force && vec3("at_a").is_none() => GlyphKind::Point,
            _ => return,
        };
        let force = vec3("value").filter(|_| glyph_kind == GlyphKind::Point);
        // The point in the frame of each body: Rᵀ (at − r); a point mass keeps the
        // identity orientation.
        let mut ends = Vec::new();
        for &b in bodies {
            let q0 = &self.bodies[b].q0;
            let d = [0, 1, 2].map(|i| at[i] - q0[i]);
            let local = match q0.len() {
                7 => rotate_back([q0[3], q0[4], q0[5], q0[6]], d),
                3 => d,
                _ => return,
            };
            ends.push((Some(self.body_name(b).to_string()), local));
        }
        self.glyphs.push(Glyph {
            instance: self.instances[instance].name.clone(),
            kind: glyph_kind,
            ends,
            axis: None,
            road: road.map(|f| AnalyticRoad {
                plane: f[0],
                x: [f[1], f[2], f[3]],
                y: [f[4], f[5], f[6]],
            }),
            force,
        });
    }
}
