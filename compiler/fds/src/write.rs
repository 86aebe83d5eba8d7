//! The typed model as fd source text: parameters, splines, gravity, bodies, measures
//! (functions of two bodies plus an output each), joints (one `fix_dof` per fixed
//! direction inside a one-off joint, so the multipliers are `<joint>.<dx…az>.lambda`),
//! forces and torques (one-off elements), and the `simulate` block. Every item carries
//! a comment naming its source block and line.

use crate::expr::{self, Expr};
use crate::model::{BodyRef, Coordinate, Direction, Measure, Model};
use crate::table;
use std::fmt::Write as _;

/// How to write the model (the driver's profile decides these).
#[derive(Clone, Debug)]
pub struct WriteOptions {
    /// `rigid_body_euler` (legacy profile) or `rigid_body`.
    pub body_type: String,
    /// Write `form = negrut; newton = legacy;` (legacy profile) or leave today's defaults.
    pub legacy_solver: bool,
    /// The `.fds` file's name, for the header comment.
    pub source_name: String,
    /// Prefix of spline table paths as the fd file sees them: empty when the fd file
    /// lives (or is analyzed as if it lived) next to the `.fds` file.
    pub table_prefix: std::path::PathBuf,
    /// The `.fds` file's directory (where zcc table files are read from).
    pub dir: std::path::PathBuf,
}

pub(crate) fn num(v: f64) -> String {
    // Shortest round-trip text (also in exponent form, so `1e-6` stays readable).
    if v != 0.0 && (v.abs() < 1e-3 || v.abs() >= 1e7) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

fn v3(v: &[f64; 3]) -> String {
    format!("[{}, {}, {}]", num(v[0]), num(v[1]), num(v[2]))
}

/// Unit quaternion (scalar first) of the rotation whose matrix has the given rows
/// as its columns (axes one after the other: A = rowsᵀ). Shepperd's method.
pub fn quaternion(rows: &[[f64; 3]; 3]) -> [f64; 4] {
    let a = |i: usize, j: usize| rows[j][i];
    let tr = a(0, 0) + a(1, 1) + a(2, 2);
    let q = if tr >= a(0, 0).max(a(1, 1)).max(a(2, 2)) {
        let w = (1.0 + tr).sqrt() / 2.0;
        [
            w,
            (a(2, 1) - a(1, 2)) / (4.0 * w),
            (a(0, 2) - a(2, 0)) / (4.0 * w),
            (a(1, 0) - a(0, 1)) / (4.0 * w),
        ]
    } else if a(0, 0) >= a(1, 1) && a(0, 0) >= a(2, 2) {
        let x = (1.0 + 2.0 * a(0, 0) - tr).sqrt() / 2.0;
        [
            (a(2, 1) - a(1, 2)) / (4.0 * x),
            x,
            (a(0, 1) + a(1, 0)) / (4.0 * x),
            (a(0, 2) + a(2, 0)) / (4.0 * x),
        ]
    } else if a(1, 1) >= a(2, 2) {
        let y = (1.0 + 2.0 * a(1, 1) - tr).sqrt() / 2.0;
        [
            (a(0, 2) - a(2, 0)) / (4.0 * y),
            (a(0, 1) + a(1, 0)) / (4.0 * y),
            y,
            (a(1, 2) + a(2, 1)) / (4.0 * y),
        ]
    } else {
        let z = (1.0 + 2.0 * a(2, 2) - tr).sqrt() / 2.0;
        [
            (a(1, 0) - a(0, 1)) / (4.0 * z),
            (a(0, 2) + a(2, 0)) / (4.0 * z),
            (a(1, 2) + a(2, 1)) / (4.0 * z),
            z,
        ]
    };
    let n = q.iter().map(|x| x * x).sum::<f64>().sqrt();
    let s = if q[0] < 0.0 { -1.0 / n } else { 1.0 / n };
    q.map(|x| x * s)
}

struct Writer<'a> {
    m: &'a Model,
    out: String,
}

impl<'a> Writer<'a> {
    fn body(&self, r: BodyRef) -> &'a str {
        r.map_or("ground", |i| self.m.bodies[i].name.ident.as_str())
    }

    /// A global point at t = 0 as a point of body `r` (text of its current position).
    fn point(&self, r: BodyRef, p: &[f64; 3]) -> String {
        match r {
            None => v3(p),
            Some(_) => {
                let b = self.body(r);
                format!("{b}.point({b}.local({}))", v3(p))
            }
        }
    }

    /// An expression's fd text and the bodies its measures read.
    fn expr(&self, e: &Expr, bodies: &mut Vec<usize>) -> String {
        let mut refs = Vec::new();
        expr::refs(e, &mut refs);
        for r in refs {
            if let Expr::Measure(n, _) = r {
                if let Some(ms) = self.m.measures.iter().find(|m| &m.name.raw == n) {
                    bodies.extend(ms.bodies.iter().flatten());
                }
            }
        }
        let m = self.m;
        expr::print(e, &mut |r| match r {
            Expr::Param(n, _) => ident(m.params.iter().map(|p| &p.name), n),
            Expr::Spline(n, _, _) => ident(m.splines.iter().map(|p| &p.name), n),
            Expr::Measure(n, _) => match m.measures.iter().find(|ms| &ms.name.raw == n) {
                Some(ms) => format!(
                    "{}({}, {})",
                    ms.name.ident,
                    self.body(ms.bodies[0]),
                    self.body(ms.bodies[1])
                ),
                None => n.clone(),
            },
            _ => String::new(),
        })
    }

    /// `on(b, ...)`: the bodies of an element, without the ground and repeats.
    fn on(&self, mut bodies: Vec<usize>) -> String {
        bodies.sort_unstable();
        bodies.dedup();
        let names: Vec<&str> = bodies.iter().map(|&b| self.body(Some(b))).collect();
        format!("on({})", names.join(", "))
    }
}

fn ident<'a>(mut names: impl Iterator<Item = &'a crate::model::Name>, raw: &str) -> String {
    names
        .find(|n| n.raw == raw)
        .map_or_else(|| raw.to_string(), |n| n.ident.clone())
}

fn quoted(raw: &str) -> String {
    raw.replace('\n', " ")
}

/// The fd source text of the model.
pub fn write(m: &Model, o: &WriteOptions) -> Result<String, crate::Error> {
    let mut w = Writer {
        m,
        out: String::new(),
    };
    header(&mut w, o);
    params_and_splines(&mut w, o)?;
    if let Some(g) = &m.gravity {
        let _ = writeln!(
            w.out,
            "// Force Gravity, line {}\ngravity {};\n",
            g.line,
            v3(&g.g)
        );
    }
    bodies(&mut w, o);
    measures(&mut w);
    joints(&mut w);
    forces(&mut w);
    torques(&mut w);
    simulate(&mut w, o);
    Ok(w.out)
}

fn header(w: &mut Writer, o: &WriteOptions) {
    let profile = if o.legacy_solver { "legacy" } else { "v2" };
    let _ = writeln!(
        w.out,
        "// Imported from `{}` by `fdc import` (profile {profile}); each item names its\n\
         // source block and line. Results equal to `fdc {0}` need `--profile {profile}`\n\
         // when running this file (it sets what no `simulate` key can: the error weights).",
        o.source_name
    );
    for k in &w.m.kept {
        let _ = writeln!(
            w.out,
            "// {} (line {}), kept without effect:",
            k.block, k.line
        );
        for (key, value) in &k.entries {
            let _ = writeln!(w.out, "//     {key} = {}", quoted(value));
        }
    }
    w.out.push('\n');
}

fn params_and_splines(w: &mut Writer, o: &WriteOptions) -> Result<(), crate::Error> {
    for p in &w.m.params {
        let _ = writeln!(
            w.out,
            "/// DataObject Parameter `{}`, line {}.",
            quoted(&p.name.raw),
            p.line
        );
        let _ = writeln!(w.out, "param {} = {};", p.name.ident, num(p.value));
    }
    for s in &w.m.splines {
        let _ = writeln!(
            w.out,
            "/// DataObject Spline_1D `{}`, line {}: {} of `{}`, columns {} and {}, {} header lines.",
            quoted(&s.name.raw),
            s.line,
            if s.zcc { "zccspl" } else { "akima" },
            s.path,
            s.xcol,
            s.ycol,
            s.header
        );
        if s.zcc {
            // fd's `table(...)` reads Akima splines only: the points go in inline.
            let (xs, ys) = table::read(&o.dir, s)?;
            let list = |v: &[f64]| v.iter().map(|x| num(*x)).collect::<Vec<_>>().join(", ");
            let _ = writeln!(
                w.out,
                "spline {} = zcc([{}], [{}]);",
                s.name.ident,
                list(&xs),
                list(&ys)
            );
        } else {
            let path = o.table_prefix.join(&s.path);
            let _ = writeln!(
                w.out,
                "spline {} = table(\"{}\", {}, {}, {});",
                s.name.ident,
                path.display(),
                s.xcol,
                s.ycol,
                s.header
            );
        }
    }
    if !w.m.params.is_empty() || !w.m.splines.is_empty() {
        w.out.push('\n');
    }
    Ok(())
}

fn bodies(w: &mut Writer, o: &WriteOptions) {
    for b in &w.m.bodies {
        let _ = writeln!(
            w.out,
            "// Body Rigid_EulerParameter_PAI `{}`, line {}",
            quoted(&b.name.raw),
            b.line
        );
        if !b.full_jacobian {
            let _ = writeln!(w.out, "// RegardVelocityInertiaForcesInsideJacobian = no: the run's Newton matrix omits the gyroscopic derivatives");
        }
        for (k, v) in &b.display {
            // The viewer reads these lines: `// display <body>: <key> = <value>`.
            let _ = writeln!(w.out, "// display {}: {k} = {}", b.name.ident, quoted(v));
        }
        let q = quaternion(&b.axes);
        let _ = writeln!(w.out, "body {}: {} {{", b.name.ident, o.body_type);
        let _ = writeln!(w.out, "    mass = {};", num(b.mass));
        let _ = writeln!(w.out, "    inertia = {};", v3(&b.inertia));
        let _ = writeln!(w.out, "    position = {};", v3(&b.com));
        let _ = writeln!(
            w.out,
            "    orientation = quat({}, {}, {}, {});",
            num(q[0]),
            num(q[1]),
            num(q[2]),
            num(q[3])
        );
        let _ = writeln!(w.out, "    velocity = {};", v3(&b.velocity));
        let _ = writeln!(w.out, "    angular_velocity = {};\n}}\n", v3(&b.omega));
    }
}

/// The value of a measure in terms of the connections `b1`, `b2`.
fn measure_text(m: &Measure) -> String {
    let [p1, p2] = m.points.map(|p| v3(&p));
    let e = match (m.velocity, m.coordinate) {
        (false, Coordinate::Xyz) => format!("distance(b1, {p1}, b2, {p2})"),
        (true, Coordinate::Xyz) => format!("distance_rate(b1, {p1}, b2, {p2})"),
        (vel, c) => {
            let f = if vel { "velocity" } else { "point" };
            let comp = ["x", "y", "z"][c as usize];
            format!("(b1.{f}(b1.local({p1})) - b2.{f}(b2.local({p2}))).{comp}")
        }
    };
    if m.offset {
        format!("{e} - initial({e})")
    } else {
        e
    }
}

fn measures(w: &mut Writer) {
    for m in &w.m.measures {
        let what = match (m.velocity, m.coordinate) {
            (false, Coordinate::Xyz) => "distance".to_string(),
            (true, Coordinate::Xyz) => "rate of the distance".to_string(),
            (v, c) => format!(
                "global {:?} component of the {}",
                c,
                if v { "velocity" } else { "displacement" }
            ),
        };
        let _ = writeln!(
            w.out,
            "/// Measure Translational `{}`, line {}: {what} of body 1's point relative to body 2's{}.",
            quoted(&m.name.raw),
            m.line,
            if m.offset { ", zero at t = 0" } else { "" }
        );
        let _ = writeln!(
            w.out,
            "fn {}(b1: body, b2: body) = {};",
            m.name.ident,
            measure_text(m)
        );
        let _ = writeln!(
            w.out,
            "output {} = {}({}, {});\n",
            m.name.ident,
            m.name.ident,
            w.body(m.bodies[0]),
            w.body(m.bodies[1])
        );
    }
}

const DOFS: [&str; 6] = ["dx", "dy", "dz", "ax", "ay", "az"];

fn joints(w: &mut Writer) {
    for j in &w.m.joints {
        let fixed: Vec<&str> = (0..6).filter(|&k| j.fixed[k]).map(|k| DOFS[k]).collect();
        let _ = writeln!(
            w.out,
            "// Constraint Generic `{}`, line {}: fixed {}",
            quoted(&j.name.raw),
            j.line,
            if fixed.is_empty() {
                "nothing".to_string()
            } else {
                fixed.join(" ")
            }
        );
        if fixed.is_empty() {
            let _ = writeln!(w.out, "// (no fixed direction: no equations)\n");
            continue;
        }
        let axes = format!(
            "transpose([{}, {}, {}])",
            v3(&j.axes[0]),
            v3(&j.axes[1]),
            v3(&j.axes[2])
        );
        let (b1, b2) = (w.body(j.bodies[0]), w.body(j.bodies[1]));
        let _ = writeln!(
            w.out,
            "joint {}: {} {{",
            j.name.ident,
            w.on(j.bodies.iter().flatten().copied().collect())
        );
        for k in (0..6).filter(|&k| j.fixed[k]) {
            let _ = writeln!(
                w.out,
                "    joint {}: fix_dof({b1}, {b2}) {{ at = {}; axes = {axes}; dof = {k}; }}",
                DOFS[k],
                v3(&j.at)
            );
        }
        w.out.push_str("}\n\n");
    }
}

/// `apply force F on b at u;` for both bodies (the reaction on body 2), ground left out.
fn apply_pair(
    w: &Writer,
    kind: &str,
    value: &str,
    bodies: &[BodyRef; 2],
    points: Option<&[[f64; 3]; 2]>,
) -> String {
    let mut s = String::new();
    for (k, r) in bodies.iter().enumerate() {
        if r.is_none() {
            continue;
        }
        let b = w.body(*r);
        let sign = if k == 0 { "" } else { "-" };
        let at = points.map_or(String::new(), |p| format!(" at {b}.local({})", v3(&p[k])));
        let _ = writeln!(s, "    apply {kind} {sign}{value} on {b}{at};");
    }
    s
}

fn forces(w: &mut Writer) {
    for f in &w.m.forces {
        let mut bodies: Vec<usize> = f.bodies.iter().flatten().copied().collect();
        let value = w.expr(&f.expr, &mut bodies);
        let dir = match &f.direction {
            Direction::SpaceFixed(d) => v3(d),
            Direction::LineOfSight => {
                let sep = format!(
                    "{} - {}",
                    w.point(f.bodies[0], &f.points[0]),
                    w.point(f.bodies[1], &f.points[1])
                );
                format!("unit({sep})")
            }
        };
        let kind = match f.direction {
            Direction::SpaceFixed(_) => "SpaceFixed",
            Direction::LineOfSight => "In-line-of-sight (from body 2's point to body 1's)",
        };
        let _ = writeln!(
            w.out,
            "// Force GenericForce `{}`, line {}: {kind}",
            quoted(&f.name.raw),
            f.line
        );
        let _ = writeln!(w.out, "force {}: {} {{", f.name.ident, w.on(bodies));
        let _ = writeln!(w.out, "    let value = {value};\n    let dir = {dir};");
        w.out.push_str(&apply_pair(
            w,
            "force",
            "value*dir",
            &f.bodies,
            Some(&f.points),
        ));
        w.out.push_str("    output value = value;\n}\n\n");
    }
}

fn torques(w: &mut Writer) {
    for t in &w.m.torques {
        let mut bodies: Vec<usize> = t.bodies.iter().flatten().copied().collect();
        let value = w.expr(&t.expr, &mut bodies);
        let b1 = w.body(t.bodies[0]);
        let _ = writeln!(
            w.out,
            "// Force GenericTorque `{}`, line {}: BodyFixed axis of body 1",
            quoted(&t.name.raw),
            t.line
        );
        let _ = writeln!(w.out, "force {}: {} {{", t.name.ident, w.on(bodies));
        let _ = writeln!(
            w.out,
            "    let value = {value};\n    let axis_n = carried({b1}, {});",
            v3(&t.axis)
        );
        w.out
            .push_str(&apply_pair(w, "torque", "value*axis_n", &t.bodies, None));
        w.out.push_str("    output value = value;\n}\n\n");
    }
}

fn simulate(w: &mut Writer, o: &WriteOptions) {
    let Some(sim) = &w.m.simulation else {
        return;
    };
    let mut s =
        format!(
        "// Simulation Dynamic, line {}{}\nsimulate {{\n    end = {};\n    output_every = {};\n",
        sim.line,
        w.m.solver.as_ref().map_or(String::new(), |v| format!("; Solver HHT, line {}", v.line)),
        num(sim.end),
        num(sim.output_every)
    );
    if let Some(v) = &w.m.solver {
        // The first step: the largest allowed, but not past the first output time.
        let step = v.step_max.min(sim.output_every).max(v.step_min);
        let _ = write!(
            s,
            "    step = {};\n    alpha = {};\n    adaptive = {};\n    step_min = {};\n    step_max = {};\n",
            num(step),
            num(v.alpha),
            num(v.tolerance),
            num(v.step_min),
            num(v.step_max)
        );
    }
    if o.legacy_solver {
        s.push_str("    form = negrut;\n    newton = legacy;\n");
    }
    s.push_str("}\n");
    w.out.push_str(&s);
}
