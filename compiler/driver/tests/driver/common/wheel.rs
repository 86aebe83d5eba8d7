//! The tyre tests' shared part: vector helpers, wheel states (position, orientation,
//! velocities) and one tyre instance of a model evaluated by the IR interpreter at
//! such a state (its output channels and the loads it applies).

use fdc_diff::Role;
use fdc_driver::pipeline::{front, render, BuildError};
use fdc_ir::interp::eval;

pub type V3 = [f64; 3];

pub fn add(a: V3, b: V3) -> V3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}
pub fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
pub fn mul(s: f64, a: V3) -> V3 {
    [s * a[0], s * a[1], s * a[2]]
}
pub fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
pub fn cross(a: V3, b: V3) -> V3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}
pub fn unit(a: V3) -> V3 {
    mul(1.0 / dot(a, a).sqrt(), a)
}

/// Quaternion (scalar first) of Rz(ψ) Rx(γ): steer ψ, then camber γ about the heading.
pub fn steer_camber(psi: f64, gamma: f64) -> [f64; 4] {
    let (cz, sz) = ((psi / 2.0).cos(), (psi / 2.0).sin());
    let (cx, sx) = ((gamma / 2.0).cos(), (gamma / 2.0).sin());
    [cz * cx, cz * sx, sz * sx, sz * cx]
}

/// Columns of the rotation matrix of a unit quaternion.
pub fn rotation(q: [f64; 4]) -> [V3; 3] {
    let [w, x, y, z] = q;
    [
        [
            1.0 - 2.0 * (y * y + z * z),
            2.0 * (x * y + w * z),
            2.0 * (x * z - w * y),
        ],
        [
            2.0 * (x * y - w * z),
            1.0 - 2.0 * (x * x + z * z),
            2.0 * (y * z + w * x),
        ],
        [
            2.0 * (x * z + w * y),
            2.0 * (y * z - w * x),
            1.0 - 2.0 * (x * x + y * y),
        ],
    ]
}

/// A wheel state: centre, rotation matrix (columns = body axes), centre velocity and
/// angular velocity (global); the body's axis is its y axis.
#[derive(Clone, Copy)]
pub struct Wheel {
    pub c: V3,
    pub rot: [V3; 3],
    pub vc: V3,
    pub w: V3,
}

/// The instance `tyre` of a model as the compiler lowered it, evaluated by the
/// interpreter.
pub struct Lowered {
    lowered: fdc_lower::LoweredModel,
    inst: usize,
}

/// What a tyre reports at a state (channels in the type's output order) and the load
/// it applies: force and moment about the wheel centre, global.
pub struct Loads {
    pub out: Vec<f64>,
    pub force: V3,
    pub moment: V3,
}

impl Lowered {
    /// Builds `text` (written as `tyre.fd` in a fresh temporary directory).
    pub fn new(text: &str) -> Lowered {
        let dir = std::env::temp_dir().join(format!("fdc-tyre-{}-{:p}", std::process::id(), text));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("tyre.fd");
        std::fs::write(&path, text).unwrap();
        let f = match front(&path, &[]) {
            Ok(f) => f,
            Err(BuildError::Model { analysis, extra }) => panic!("{}", render(&analysis, &extra)),
            Err(BuildError::Backend(e) | BuildError::Usage(e)) => panic!("{e}"),
        };
        let _ = std::fs::remove_dir_all(&dir);
        let inst = f
            .lowered
            .instances
            .iter()
            .position(|i| i.name == "tyre")
            .unwrap();
        Lowered {
            lowered: f.lowered,
            inst,
        }
    }

    /// The values of role `role` at the wheel state `q`, `v` (local order).
    fn eval(&self, role: Role, q: &[f64], v: &[f64]) -> Vec<f64> {
        let l = &self.lowered;
        let inst = &l.instances[self.inst];
        let ty = &l.types[inst.type_index];
        let (func, _) = ty.role(role).unwrap();
        let zeros = vec![0.0; ty.nv.max(1)];
        eval(
            &l.graph,
            &func.outputs,
            &[
                q,
                v,
                &zeros,
                &[],
                &inst.params,
                &[0.0, 0.3, 0.6, 1e-3],
                &zeros,
                &[0.0],
            ],
        )
        .unwrap()
    }

    /// The channel `name` of the outputs `values`.
    pub fn channel(&self, values: &[f64], name: &str) -> f64 {
        let ty = &self.lowered.types[self.lowered.instances[self.inst].type_index];
        let k = ty.outputs.iter().position(|o| o == name);
        values[k.unwrap_or_else(|| panic!("no output {name}: {:?}", ty.outputs))]
    }

    /// Everything the tyre reports and applies at `wh` (quaternion `q`).
    pub fn loads(&self, q: [f64; 4], wh: &Wheel) -> Loads {
        let rot = rotation(q);
        let qs = [wh.c[0], wh.c[1], wh.c[2], q[0], q[1], q[2], q[3]];
        // v = [Ṙ; ω̄] with body components ω̄ = Aᵀω.
        let wb = [dot(rot[0], wh.w), dot(rot[1], wh.w), dot(rot[2], wh.w)];
        let vs = [wh.vc[0], wh.vc[1], wh.vc[2], wb[0], wb[1], wb[2]];
        let out = self.eval(Role::Out, &qs, &vs);
        let res = self.eval(Role::Res, &qs, &vs);
        // The residual is minus the loads (r_dyn = −Q, docs/diff.md): −[F; Aᵀ M] on
        // the wheel's [R; θ].
        let mb = [-res[3], -res[4], -res[5]];
        let moment = add(
            add(mul(mb[0], rot[0]), mul(mb[1], rot[1])),
            mul(mb[2], rot[2]),
        );
        Loads {
            out,
            force: [-res[0], -res[1], -res[2]],
            moment,
        }
    }
}

/// The largest change between neighbouring difference quotients of `f` over
/// [s0, s1] at spacing ds, relative to the largest quotient: O(ds) for a function with
/// a continuous derivative, O(1) at a kink.
pub fn derivative_jump(f: &dyn Fn(f64) -> f64, s0: f64, s1: f64, ds: f64) -> f64 {
    let n = ((s1 - s0) / ds).round() as usize;
    let vals: Vec<f64> = (0..=n).map(|i| f(s0 + i as f64 * ds)).collect();
    assert!(
        vals.iter().all(|v| v.is_finite()),
        "not finite on [{s0}, {s1}]"
    );
    let d: Vec<f64> = vals.windows(2).map(|w| (w[1] - w[0]) / ds).collect();
    let scale = d.iter().fold(1e-300f64, |m, x| m.max(x.abs()));
    d.windows(2).fold(0.0f64, |m, w| m.max((w[1] - w[0]).abs())) / scale
}

/// Asserts that f has a continuous derivative on [s0, s1]: its derivative's largest
/// jump shrinks with the step (a kink keeps it) and stays small against the slope.
pub fn assert_no_kink(f: &dyn Fn(f64) -> f64, s0: f64, s1: f64, ds: f64, what: &str, name: &str) {
    let (coarse, fine) = (
        derivative_jump(f, s0, s1, ds),
        derivative_jump(f, s0, s1, ds / 10.0),
    );
    assert!(
        fine < 1e-6 || fine < 0.2 * coarse,
        "{what}: {name} has a kink (jumps {coarse:e} at ds, {fine:e} at ds/10)"
    );
    assert!(
        fine < 0.05,
        "{what}: {name} derivative jumps by {fine} of its size"
    );
}

/// The road as a tyre sees it: (h, ∂h/∂x, ∂h/∂y, μ) at (x, y).
pub type RoadAt<'r> = &'r dyn Fn(f64, f64) -> (f64, f64, f64, f64);

/// The point contact of both stdlib tyres (docs/vehicle.md, steps 1–5), written from
/// the document: contact frame, contact point, normal force, slip velocities.
#[derive(Clone, Copy, Debug)]
pub struct Contact {
    pub a: V3,
    pub n: V3,
    pub ex: V3,
    pub ey: V3,
    pub rho: f64,
    pub p: V3,
    pub h: f64,
    pub mu: f64,
    pub fz: f64,
    /// Velocity of the wheel's material point at P.
    pub vp: V3,
    /// Forward speed of the centre and its regularized size √(V² + v_s²).
    pub vx: f64,
    pub vref: f64,
    /// sin γ = n·a.
    pub sin_g: f64,
}

/// (radius, vertical stiffness, damping, softplus width f_s, v_s).
pub fn contact(
    road: RoadAt,
    wh: &Wheel,
    (r0, kz, cz, fs, vs): (f64, f64, f64, f64, f64),
) -> Contact {
    let (h, gx, gy, mu) = road(wh.c[0], wh.c[1]);
    let a = wh.rot[1];
    let n = unit([-gx, -gy, 1.0]);
    let ex = unit(cross(a, n));
    let ey = cross(n, ex);
    let sin_g = dot(n, a);
    let er = unit(sub(n, mul(sin_g, a)));
    // Distance from the centre to the plane through (x, y, h) with normal n, along −er.
    let rho = n[2] * (wh.c[2] - h) / dot(n, er);
    let p = sub(wh.c, mul(rho, er));
    let delta = r0 - rho;
    // δ̇ = −ρ̇, by central differences along the motion (centre, road under it, axis).
    let eps = 1e-7;
    let moved = |s: f64| {
        let c = add(wh.c, mul(s, wh.vc));
        let rot = wh.rot.map(|col| add(col, mul(s, cross(wh.w, col))));
        let (h, gx, gy, _) = road(c[0], c[1]);
        let n = unit([-gx, -gy, 1.0]);
        let a = unit(rot[1]);
        let er = unit(sub(n, mul(dot(n, a), a)));
        n[2] * (c[2] - h) / dot(n, er)
    };
    let delta_dot = -(moved(eps) - moved(-eps)) / (2.0 * eps);
    let x = (kz * delta + cz * delta_dot) / fs;
    let fz = fs * if x > 36.0 { x } else { x.exp().ln_1p() };
    let vp = add(wh.vc, cross(wh.w, sub(p, wh.c)));
    let vx = dot(wh.vc, ex);
    Contact {
        a,
        n,
        ex,
        ey,
        rho,
        p,
        h,
        mu,
        fz,
        vp,
        vx,
        vref: (vx * vx + vs * vs).sqrt(),
        sin_g,
    }
}
