//! Body-local drivers and sensors (`stdlib/local.fd`) on a body written turned about
//! an oblique axis: each against its global form on bodies that must move alike
//! (the `_local` forms written from the same geometry in body coordinates), and a
//! local rotation driver against its closed form after the assembly has turned its
//! body to the driver's angle at t = 0.

use crate::common;

use common::{build_text, channel, simulate};
use fdc_runtime::{quat_matrix as rot, MemorySink};

type V3 = [f64; 3];
type M3 = [[f64; 3]; 3];

/// The body's written orientation: 0.8 rad about (1, 2, 2)/3.
const Q0: [f64; 4] = {
    // cos 0.4, sin 0.4 · (1, 2, 2)/3 (const fn has no trigonometry).
    let (c, s) = (0.921_060_994_002_885_1, 0.389_418_342_308_650_5);
    [c, s / 3.0, 2.0 * s / 3.0, 2.0 * s / 3.0]
};
const P: V3 = [0.3, -0.2, 0.5];
/// φ = W t + ½ AL t² (rad) and x = V t + ½ AC t² (m) of the drivers.
const W: f64 = 2.0;
const AL: f64 = 2.0;
const V: f64 = 0.3;
const AC: f64 = -1.0;
/// The inertia about the hinge (body z) of the driven bodies.
const JZ: f64 = 0.5;

fn mul(a: &M3, v: V3) -> V3 {
    [0, 1, 2].map(|i| a[i][0] * v[0] + a[i][1] * v[1] + a[i][2] * v[2])
}

fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn col(a: &M3, j: usize) -> V3 {
    [a[0][j], a[1][j], a[2][j]]
}

/// `frame(n)` of docs/language.md: the columns k0, k1 (k2 = n, a unit vector).
fn frame(n: V3) -> (V3, V3) {
    let a = n.map(f64::abs);
    let k = if a[0] <= a[1] && a[0] <= a[2] {
        0
    } else if a[1] <= a[2] {
        1
    } else {
        2
    };
    let mut h = [0.0; 3];
    h[k] = 1.0;
    let d = dot(h, n);
    let k0 = [0, 1, 2].map(|i| h[i] - d * n[i]);
    let l = dot(k0, k0).sqrt();
    let k0 = k0.map(|c| c / l);
    let k1 = [
        n[1] * k0[2] - n[2] * k0[1],
        n[2] * k0[0] - n[0] * k0[2],
        n[0] * k0[1] - n[1] * k0[0],
    ];
    (k0, k1)
}

fn v3(v: V3) -> String {
    format!("[{:e}, {:e}, {:e}]", v[0], v[1], v[2])
}

/// The hinge axis N = A0 e_z, and the absolute angle of the body written at Q0 about
/// it: from frame(N).x to the body's x axis A0 e_x (`rotation_angle_local`).
fn hinge() -> (V3, f64) {
    let a0 = rot(Q0);
    let n = col(&a0, 2);
    let (f0, f1) = frame(n);
    let x = col(&a0, 0);
    (n, dot(x, f1).atan2(dot(x, f0)))
}

/// Bodies a, b (hinged, driven in rotation: global forms on a, local on b), c, d
/// (sliding, driven in translation: global on c, local on d), e (local driver from
/// angle 0, so assembled), all written at Q0; sensors of both forms on a.
fn model() -> String {
    let a0 = rot(Q0);
    let (n, r0) = hinge();
    let s: V3 = [0.2, 0.1, -0.05];
    let (c3, s3) = (0.3f64.cos(), 0.3f64.sin());
    let sx: M3 = [[1.0, 0.0, 0.0], [0.0, c3, -s3], [0.0, s3, c3]];
    let at = [0, 1, 2].map(|i| P[i] + mul(&a0, s)[i]);
    let axes: M3 = [0, 1, 2].map(|i| [0, 1, 2].map(|j| dot(a0[i], col(&sx, j))));
    let rows = |m: &M3| format!("[{}, {}, {}]", v3(m[0]), v3(m[1]), v3(m[2]));
    let p2: V3 = [-0.4, 0.6, 0.1];
    let body = |name: &str, p: V3| {
        format!(
            "body {name}: rigid_body {{ mass = 2; inertia = [0.3, 0.4, {JZ}]; position = {}; \
             orientation = quat({:e}, {:e}, {:e}, {:e}); }}\n",
            v3(p),
            Q0[0],
            Q0[1],
            Q0[2],
            Q0[3]
        )
    };
    let (n, p, p2s) = (v3(n), v3(P), v3(p2));
    let phi = format!("{W}*t + 0.5*{AL}*t^2");
    let x = format!("{V}*t + 0.5*{AC}*t^2");
    [
        "gravity [0, -9.81, 0];\n".to_string(),
        body("a", P),
        format!("joint ha: revolute(a) {{ at = {p}; axis = {n}; }}\n"),
        format!("driver da: rotation_driver(a) {{ axis = {n}; value = {phi}; }}\n"),
        format!(
            "sensor ia: imu(a) {{ at = {}; axes = {}; }}\n",
            v3(at),
            rows(&axes)
        ),
        format!(
            "sensor il: imu_local(a) {{ at = {}; axes = {}; }}\n",
            v3(s),
            rows(&sx)
        ),
        format!("sensor ca: continuous_angle(a) {{ axis = {n}; }}\n"),
        format!("sensor cl: continuous_angle_local(a) {{ axis2 = {n}; }}\n"),
        body("b", P),
        format!("joint hb: revolute_local(b) {{ at1 = [0, 0, 0]; at2 = {p}; axis2 = {n}; }}\n"),
        format!("driver db: rotation_driver_local(b) {{ axis2 = {n}; value = {r0:e} + {phi}; }}\n"),
        body("c", p2),
        format!("joint pc: prismatic(c) {{ at = {p2s}; axis = {n}; }}\n"),
        format!("driver dc: translation_driver(c) {{ at = {p2s}; axis = {n}; value = {x}; }}\n"),
        body("d", p2),
        format!("joint pd: prismatic_local(d) {{ at1 = [0, 0, 0]; at2 = {p2s}; axis2 = {n}; }}\n"),
        format!(
            "driver dd: translation_driver_local(d) {{ at1 = [0, 0, 0]; at2 = {p2s}; \
             axis2 = {n}; value = {x}; }}\n"
        ),
        body("e", P),
        format!("joint he: revolute_local(e) {{ at1 = [0, 0, 0]; at2 = {p}; axis2 = {n}; }}\n"),
        format!("driver de: rotation_driver_local(e) {{ axis2 = {n}; value = {phi}; }}\n"),
        "simulate { end = 1; step = 1e-3; output_every = 0.01; }\n".to_string(),
    ]
    .concat()
}

/// The largest |x − y − offset| over two channels.
fn off(s: &MemorySink, x: &str, y: &str, offset: f64) -> f64 {
    let (x, y) = (channel(s, x), channel(s, y));
    x.iter()
        .zip(&y)
        .map(|(a, b)| (a - b - offset).abs())
        .fold(0.0, f64::max)
}

/// The largest difference of the channels `a.<name>.<c>` and `b.<name>.<c>`.
fn off_all(s: &MemorySink, a: &str, b: &str, names: &[&str]) -> f64 {
    let mut worst = 0.0f64;
    for name in names {
        for c in ["x", "y", "z"] {
            worst = worst.max(off(
                s,
                &format!("{a}.{name}.{c}"),
                &format!("{b}.{name}.{c}"),
                0.0,
            ));
        }
    }
    worst
}

#[test]
fn local_drivers_and_sensors_agree_with_their_global_forms() {
    let (sink, _) = simulate(build_text("body-local-agree", &model()), |_| {});
    let (_, r0) = hinge();
    // Both sensors read the same state of a: round-off only.
    let imu = off_all(
        &sink,
        "ia",
        "il",
        &[
            "position",
            "velocity",
            "acceleration",
            "specific_force",
            "angular_velocity",
            "angular_acceleration",
        ],
    );
    let angle = off(&sink, "cl.angle", "ca.angle", r0);
    let rate = off(&sink, "cl.rate", "ca.rate", 0.0);
    // b and d are driven by the local forms, a and c by the global ones: they move
    // alike to the Newton tolerance (measured 7e-12; the multipliers, which Newton
    // converges less tightly, 9e-8 of about 1 N m and 20 N).
    let rot_body =
        off_all(&sink, "a", "b", &["R", "omega"]).max(off(&sink, "a.theta.w", "b.theta.w", 0.0));
    let rot_driver = off(&sink, "db.angle", "da.angle", r0);
    let torque = off(&sink, "db.lambda", "da.lambda", 0.0);
    let slide = off_all(&sink, "c", "d", &["R", "Rdot"]);
    let shift = off(&sink, "dd.displacement", "dc.displacement", 0.0);
    let force = off(&sink, "dd.lambda", "dc.lambda", 0.0);
    eprintln!(
        "imu {imu:.1e}, angle {angle:.1e}, rate {rate:.1e}; rotation: body {rot_body:.1e}, \
         angle {rot_driver:.1e}, torque {torque:.1e}; translation: body {slide:.1e}, \
         displacement {shift:.1e}, force {force:.1e}"
    );
    assert!(imu < 1e-12 && angle < 1e-12 && rate < 1e-12, "sensors");
    assert!(
        rot_body < 1e-9 && rot_driver < 1e-9 && torque < 1e-6,
        "rotation driver"
    );
    assert!(
        slide < 1e-9 && shift < 1e-9 && force < 1e-6,
        "translation driver"
    );
    // The angle passes π (r0 + 3 rad at t = 1): the local driver counts revolutions.
    let last = *channel(&sink, "db.angle").last().unwrap();
    assert!((last - r0 - W - AL / 2.0).abs() < 1e-9, "{last}");
}

#[test]
fn a_local_rotation_driver_follows_its_closed_form_after_assembly() {
    let (sink, _) = simulate(build_text("body-local-closed", &model()), |_| {});
    let (n, r0) = hinge();
    assert!(
        r0.abs() > 0.1,
        "the body is written away from the driver's angle 0"
    );
    let (f0, f1) = frame(n);
    let theta = ["w", "x", "y", "z"].map(|c| channel(&sink, &format!("e.theta.{c}")));
    let (torque, centre) = (channel(&sink, "de.lambda"), channel(&sink, "e.R.x"));
    let mut worst = [0.0f64; 3];
    for (k, t) in sink.times.iter().enumerate() {
        // x axis of e = cos φ frame(N).x + sin φ frame(N).y, z axis = N.
        let phi = W * t + 0.5 * AL * t * t;
        let a = rot([0, 1, 2, 3].map(|i| theta[i][k]));
        let x = [0, 1, 2].map(|i| phi.cos() * f0[i] + phi.sin() * f1[i]);
        let dx = [0, 1, 2].map(|i| col(&a, 0)[i] - x[i]);
        let dz = [0, 1, 2].map(|i| col(&a, 2)[i] - n[i]);
        worst[0] = worst[0].max(dot(dx, dx).sqrt()).max(dot(dz, dz).sqrt());
        worst[1] = worst[1].max((centre[k] - P[0]).abs());
        // The driving torque about the hinge through the centre: J φ''.
        if k > 0 {
            worst[2] = worst[2].max((torque[k].abs() - JZ * AL).abs());
        }
    }
    eprintln!(
        "assembled from {r0:.3} rad: axes {:.1e}, centre {:.1e} m, torque {:.1e} N m",
        worst[0], worst[1], worst[2]
    );
    assert!(
        worst[0] < 1e-10,
        "body axes off the closed form by {}",
        worst[0]
    );
    assert!(worst[1] < 1e-12, "centre moved by {}", worst[1]);
    // Measured 7.4e-8 N m of J a = 1 N m (as `local_drivers`, the multiplier to 1e-6).
    assert!(worst[2] < 1e-6, "torque off J a by {}", worst[2]);
}
