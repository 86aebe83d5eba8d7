//! The MF 5.2 tyre (`stdlib/mf52.fd`) with its coefficients from the sample property
//! file `examples/mf52_sample.tir` (read by the builtin `tir`): every output and the
//! applied load, evaluated by the IR interpreter at prescribed wheel states, against
//! a separate implementation of MF 5.2 written here from docs/vehicle.md (which reads
//! the `.tir` file with its own few lines); smoothness at standstill and lift-off; the
//! diagnostics of a missing file, a missing and a malformed coefficient.

use crate::common;

use common::wheel::*;
use common::{example_path, no_cache};
use std::collections::HashMap;

/// The coefficients the model takes from the file (the fd parameter is the name in
/// lower case), besides the five of [`RENAMED`].
const COEFFICIENTS: &[&str] = &[
    "LFZO", "LCX", "LMUX", "LEX", "LKX", "LHX", "LVX", "LGAX", "LCY", "LMUY", "LEY", "LKY", "LHY",
    "LVY", "LGAY", "LTR", "LRES", "LGAZ", "LXAL", "LYKA", "LVYKA", "LS", "LMX", "LVMX", "LMY",
    "PCX1", "PDX1", "PDX2", "PDX3", "PEX1", "PEX2", "PEX3", "PEX4", "PKX1", "PKX2", "PKX3", "PHX1",
    "PHX2", "PVX1", "PVX2", "RBX1", "RBX2", "RCX1", "REX1", "REX2", "RHX1", "QSX1", "QSX2", "QSX3",
    "PCY1", "PDY1", "PDY2", "PDY3", "PEY1", "PEY2", "PEY3", "PEY4", "PKY1", "PKY2", "PKY3", "PHY1",
    "PHY2", "PHY3", "PVY1", "PVY2", "PVY3", "PVY4", "RBY1", "RBY2", "RBY3", "RCY1", "REY1", "REY2",
    "RHY1", "RHY2", "RVY1", "RVY2", "RVY3", "RVY4", "RVY5", "RVY6", "QSY1", "QSY2", "QSY3", "QSY4",
    "QBZ1", "QBZ2", "QBZ3", "QBZ4", "QBZ5", "QBZ9", "QBZ10", "QCZ1", "QDZ1", "QDZ2", "QDZ3",
    "QDZ4", "QDZ6", "QDZ7", "QDZ8", "QDZ9", "QEZ1", "QEZ2", "QEZ3", "QEZ4", "QEZ5", "QHZ1", "QHZ2",
    "QHZ3", "QHZ4", "SSZ1", "SSZ2", "SSZ3", "SSZ4",
];

/// fd parameter ← file coefficient, where the names differ.
const RENAMED: &[(&str, &str)] = &[
    ("radius", "UNLOADED_RADIUS"),
    ("stiffness", "VERTICAL_STIFFNESS"),
    ("damping", "VERTICAL_DAMPING"),
    ("fnomin", "FNOMIN"),
    ("longvl", "LONGVL"),
];

/// Smoothing widths the test model sets (non-default).
const FS: f64 = 20.0;
const VS: f64 = 0.4;
const EPS: f64 = 1e-3;

/// The road: a tilted plane plus the tangent-plane slot (x0, y0, h0, gx, gy, μ0).
const PLANE: V3 = [0.02, 0.03, -0.01];
const MU: f64 = 1.05;
const SLOT: [f64; 6] = [1.0, 0.5, 0.004, 0.002, -0.003, -0.05];

fn road(x: f64, y: f64) -> (f64, f64, f64, f64) {
    let s = SLOT;
    let h = PLANE[0] + PLANE[1] * x + PLANE[2] * y + s[2] + s[3] * (x - s[0]) + s[4] * (y - s[1]);
    (h, PLANE[1] + s[3], PLANE[2] + s[4], MU + s[5])
}

fn tir_path() -> String {
    let p = example_path("mf52_sample.tir");
    p.canonicalize().unwrap().display().to_string()
}

/// The sample file's numbers by name, read independently of the compiler's reader.
fn coefficients() -> HashMap<String, f64> {
    let text = std::fs::read_to_string(tir_path()).unwrap();
    text.lines()
        .filter_map(|l| {
            let l = l.split(['!', '$']).next()?;
            let (k, v) = l.split_once('=')?;
            Some((k.trim().to_uppercase(), v.trim().parse::<f64>().ok()?))
        })
        .collect()
}

fn model(file: &str) -> String {
    let mut fields = String::new();
    for name in COEFFICIENTS {
        fields += &format!("{} = tir(\"{file}\", \"{name}\");\n", name.to_lowercase());
    }
    for (param, name) in RENAMED {
        fields += &format!("{param} = tir(\"{file}\", \"{name}\");\n");
    }
    let s = SLOT;
    format!(
        "body wheel: rigid_body {{ mass = 15; inertia = [0.5, 0.9, 0.5]; position = [0, 0, 0.3]; }}
         force tyre: mf52_tyre(wheel) {{
             {fields}
             fz_smooth = {FS}; v_smooth = {VS}; slip_smooth = {EPS};
             road_plane = [{}, {}, {}]; mu = {MU};
             plane_x = {}; plane_y = {}; plane_h = {}; plane_gx = {}; plane_gy = {}; plane_mu = {};
         }}",
        PLANE[0], PLANE[1], PLANE[2], s[0], s[1], s[2], s[3], s[4], s[5]
    )
}

/// Outputs of the tyre, in a fixed order, and its load.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Out {
    ch: [f64; 14],
    force: V3,
    moment: V3,
}

const CHANNELS: [&str; 14] = [
    "slip",
    "slip_angle",
    "camber",
    "fx",
    "fy",
    "fz",
    "mx",
    "my",
    "mz",
    "contact.x",
    "contact.y",
    "contact.z",
    "road_height",
    "friction",
];

fn mf_sin(b: f64, c: f64, e: f64, x: f64) -> f64 {
    let bx = b * x;
    (c * (bx - e * (bx - bx.atan())).atan()).sin()
}
fn mf_cos(b: f64, c: f64, e: f64, x: f64) -> f64 {
    let bx = b * x;
    (c * (bx - e * (bx - bx.atan())).atan()).cos()
}

/// MF 5.2 as docs/vehicle.md writes it, on the contact of both tyres.
fn reference(c: &HashMap<String, f64>, wh: &Wheel) -> Out {
    let p = |n: &str| *c.get(n).unwrap_or_else(|| panic!("{n} not in the file"));
    let r0 = p("UNLOADED_RADIUS");
    let k = contact(
        &road,
        wh,
        (r0, p("VERTICAL_STIFFNESS"), p("VERTICAL_DAMPING"), FS, VS),
    );
    let fz = k.fz;
    let kappa = -dot(k.vp, k.ex) / k.vref;
    let alpha = (dot(k.vp, k.ey) / k.vref).atan();
    let gamma = k.sin_g.asin();
    let sgn = |x: f64| x / (x * x + EPS * EPS).sqrt();
    let sabs = |x: f64| (x * x + EPS * EPS).sqrt() - EPS;
    let fz0 = p("FNOMIN") * p("LFZO");
    let dfz = (fz - fz0) / fz0;
    // Pure longitudinal slip.
    let gx = gamma * p("LGAX");
    let kx_ = kappa + (p("PHX1") + p("PHX2") * dfz) * p("LHX");
    let cx = p("PCX1") * p("LCX");
    let mux = (p("PDX1") + p("PDX2") * dfz) * (1.0 - p("PDX3") * gx * gx) * p("LMUX") * k.mu;
    let ex = (p("PEX1") + p("PEX2") * dfz + p("PEX3") * dfz * dfz)
        * (1.0 - p("PEX4") * sgn(kx_))
        * p("LEX");
    let kxf = (p("PKX1") + p("PKX2") * dfz) * (p("PKX3") * dfz).exp() * p("LKX");
    let svx = fz * (p("PVX1") + p("PVX2") * dfz) * p("LVX") * p("LMUX");
    let fx0 = mux * fz * mf_sin(kxf / (cx * mux), cx, ex, kx_) + svx;
    // Pure lateral slip.
    let gy = gamma * p("LGAY");
    let shy = (p("PHY1") + p("PHY2") * dfz) * p("LHY") + p("PHY3") * gy;
    let ay = alpha + shy;
    let cy = p("PCY1") * p("LCY");
    let muy = (p("PDY1") + p("PDY2") * dfz) * (1.0 - p("PDY3") * gy * gy) * p("LMUY") * k.mu;
    let ey =
        (p("PEY1") + p("PEY2") * dfz) * (1.0 - (p("PEY3") + p("PEY4") * gy) * sgn(ay)) * p("LEY");
    // Ky = PKY1 Fz0' sin(2 atan(Fz/(PKY2 Fz0'))) (1 − PKY3 |γy|) LKY, divided by Fz.
    let kyf = if fz > 1e-3 {
        p("PKY1") * fz0 * (2.0 * (fz / (p("PKY2") * fz0)).atan()).sin() / fz
    } else {
        2.0 * p("PKY1") / p("PKY2")
    } * (1.0 - p("PKY3") * sabs(gy))
        * p("LKY");
    let by = kyf / (cy * muy);
    let svy_fz = svy_over_fz(&p, dfz, gy, k.mu);
    let svy = fz * svy_fz;
    let fy0 = muy * fz * mf_sin(by, cy, ey, ay) + svy;
    // Combined slip.
    let bxa = p("RBX1") * (p("RBX2") * kappa).atan().cos() * p("LXAL");
    let exa = p("REX1") + p("REX2") * dfz;
    let rhx1 = p("RHX1");
    let fx = fx0 * mf_cos(bxa, p("RCX1"), exa, alpha + rhx1) / mf_cos(bxa, p("RCX1"), exa, rhx1);
    let shyk = p("RHY1") + p("RHY2") * dfz;
    let byk = p("RBY1") * (p("RBY2") * (alpha - p("RBY3"))).atan().cos() * p("LYKA");
    let eyk = p("REY1") + p("REY2") * dfz;
    let dvyk = muy
        * fz
        * (p("RVY1") + p("RVY2") * dfz + p("RVY3") * gamma)
        * (p("RVY4") * alpha).atan().cos();
    let svyk = dvyk * (p("RVY5") * (p("RVY6") * kappa).atan()).sin() * p("LVYKA");
    let fy =
        fy0 * mf_cos(byk, p("RCY1"), eyk, kappa + shyk) / mf_cos(byk, p("RCY1"), eyk, shyk) + svyk;
    // Aligning moment at the equivalent slip angles.
    let gz = gamma * p("LGAZ");
    let at = alpha + p("QHZ1") + p("QHZ2") * dfz + (p("QHZ3") + p("QHZ4") * dfz) * gz;
    let ar = alpha + shy + svy_fz / kyf;
    let kk = (kxf / kyf * kappa).powi(2) + EPS * EPS;
    let at_eq = (at.tan().powi(2) + kk).sqrt().atan();
    let ar_eq = (ar.tan().powi(2) + kk).sqrt().atan();
    let bt = (p("QBZ1") + p("QBZ2") * dfz + p("QBZ3") * dfz * dfz)
        * (1.0 + p("QBZ4") * gz + p("QBZ5") * sabs(gz))
        * p("LKY")
        / p("LMUY");
    let ct = p("QCZ1");
    let et = (p("QEZ1") + p("QEZ2") * dfz + p("QEZ3") * dfz * dfz)
        * (1.0 + (p("QEZ4") + p("QEZ5") * gz) * 2.0 / std::f64::consts::PI * (bt * ct * at).atan());
    let dt = fz * (p("QDZ1") + p("QDZ2") * dfz) * (1.0 + p("QDZ3") * gz + p("QDZ4") * gz * gz) * r0
        / fz0
        * p("LTR");
    let t = dt * mf_cos(bt, ct, et, at_eq) * alpha.cos();
    let br = p("QBZ9") * p("LKY") / p("LMUY") + p("QBZ10") * by * cy;
    let dr = fz
        * ((p("QDZ6") + p("QDZ7") * dfz) * p("LRES") + (p("QDZ8") + p("QDZ9") * dfz) * gz)
        * r0
        * p("LMUY")
        * k.mu;
    let mzr = dr * (br * ar_eq).atan().cos() * alpha.cos();
    let s =
        r0 * (p("SSZ1") + p("SSZ2") * fy / fz0 + (p("SSZ3") + p("SSZ4") * dfz) * gamma) * p("LS");
    let mz = -t * (fy - svyk) + mzr + s * fx;
    let mx =
        r0 * fz * (p("QSX1") * p("LVMX") - p("QSX2") * gamma + p("QSX3") * fy / fz0) * p("LMX");
    let v0 = p("LONGVL");
    let my = -r0
        * fz
        * (p("QSY1")
            + p("QSY2") * fx / fz0
            + p("QSY3") * k.vref / v0
            + p("QSY4") * (k.vx / v0).powi(4))
        * p("LMY")
        * (k.vx / VS).tanh();
    let force = add(add(mul(fx, k.ex), mul(fy, k.ey)), mul(fz, k.n));
    let moment = add(
        add(cross(sub(k.p, wh.c), force), mul(mx, k.ex)),
        add(mul(my, k.a), mul(mz, k.n)),
    );
    Out {
        ch: [
            kappa, alpha, gamma, fx, fy, fz, mx, my, mz, k.p[0], k.p[1], k.p[2], k.h, k.mu,
        ],
        force,
        moment,
    }
}

/// SVy/Fz, the lateral force's vertical shift per load.
fn svy_over_fz(p: &dyn Fn(&str) -> f64, dfz: f64, gy: f64, mu: f64) -> f64 {
    ((p("PVY1") + p("PVY2") * dfz) * p("LVY") + (p("PVY3") + p("PVY4") * dfz) * gy) * p("LMUY") * mu
}

/// A wheel at (x, y) heading ψ with camber γ, loaded to about `load` (deflection
/// load/kz), moving at `speed` with slip angle about α (ISO: the centre moves to the
/// left of its heading for α > 0) and slip ratio about κ.
fn wheel_state(
    c: &HashMap<String, f64>,
    (x, y): (f64, f64),
    (psi, gamma): (f64, f64),
    load: f64,
    (speed, alpha, kappa): (f64, f64, f64),
) -> ([f64; 4], Wheel) {
    let q = steer_camber(psi, gamma);
    let rot = rotation(q);
    let (h, gx, gy, _) = road(x, y);
    let rho = c["UNLOADED_RADIUS"] - load / c["VERTICAL_STIFFNESS"];
    let n = unit([-gx, -gy, 1.0]);
    let centre = [x, y, h + rho * gamma.cos() / n[2]];
    let (head, left) = ([psi.cos(), psi.sin(), 0.0], [-psi.sin(), psi.cos(), 0.0]);
    let mut vc = add(mul(speed, head), mul(speed * alpha.tan(), left));
    vc[2] = gx * vc[0] + gy * vc[1]; // along the road
    let vref = (speed * speed + VS * VS).sqrt();
    let w = mul((speed + kappa * vref) / rho, rot[1]);
    (
        q,
        Wheel {
            c: centre,
            rot,
            vc,
            w,
        },
    )
}

struct Tyre(Lowered);

impl Tyre {
    fn new() -> Tyre {
        Tyre(Lowered::new(&model(&tir_path())))
    }
    fn out(&self, q: [f64; 4], wh: &Wheel) -> Out {
        let l = self.0.loads(q, wh);
        Out {
            ch: CHANNELS.map(|n| self.0.channel(&l.out, n)),
            force: l.force,
            moment: l.moment,
        }
    }
}

fn compare(got: &Out, want: &Out, ctx: &str) {
    let pairs = got.ch.iter().zip(&want.ch).zip(CHANNELS.iter().copied());
    let loads = got
        .force
        .iter()
        .chain(&got.moment)
        .zip(want.force.iter().chain(&want.moment))
        .zip([
            "Fx load", "Fy load", "Fz load", "Mx load", "My load", "Mz load",
        ]);
    for ((g, w), name) in pairs.chain(loads) {
        assert!(
            (g - w).abs() <= 1e-6 * (1.0 + w.abs()),
            "{name}: fd {g} vs reference {w} ({ctx})"
        );
    }
}

#[test]
fn mf52_forces_match_an_independent_implementation_over_slip_load_and_camber() {
    let c = coefficients();
    let tyre = Tyre::new();
    let deg = std::f64::consts::PI / 180.0;
    let fz0 = c["FNOMIN"];
    let (mut lo, mut hi) = ([f64::MAX; 14], [f64::MIN; 14]);
    let mut peak = 0.0f64;
    let mut n = 0;
    for &kappa in &[-1.0, -0.3, -0.05, 0.0, 0.01, 0.1, 0.4, 1.0] {
        for &alpha in &[-20.0, -7.0, -1.0, 0.0, 0.5, 4.0, 12.0, 20.0] {
            for &load in &[-0.05, 0.0, 0.2, 1.0, 1.6, 2.0] {
                // The road's tilt across the heading adds 1.25° to the camber.
                for &gamma in &[-6.5, 0.0, 2.0, 5.0] {
                    let x = 3.0 + n as f64 / 500.0;
                    let (q, wh) = wheel_state(
                        &c,
                        (x, 0.4),
                        (0.3, gamma * deg),
                        load * fz0,
                        (15.0, alpha * deg, kappa),
                    );
                    let want = reference(&c, &wh);
                    compare(
                        &tyre.out(q, &wh),
                        &want,
                        &format!("κ {kappa} α {alpha}° load {load} Fz0 γ {gamma}°"),
                    );
                    for i in 0..14 {
                        lo[i] = lo[i].min(want.ch[i]);
                        hi[i] = hi[i].max(want.ch[i]);
                    }
                    peak = peak.max(want.ch[4].abs() / want.ch[5].max(1.0));
                    n += 1;
                }
            }
        }
    }
    // The sweep covers what it claims: κ −1…1, α ±20°, load 0…2 Fz0, γ ±5°.
    assert!(lo[0] < -0.95 && hi[0] > 0.95, "slip {} {}", lo[0], hi[0]);
    assert!(lo[1] < -19.0 * deg && hi[1] > 19.0 * deg, "slip angle");
    assert!(
        lo[5] < 1.0 && hi[5] > 1.95 * fz0,
        "load {} {}",
        lo[5],
        hi[5]
    );
    assert!(
        lo[2] < -4.8 * deg && hi[2] > 4.8 * deg,
        "camber {} {}",
        lo[2],
        hi[2]
    );
    // Saturation: the lateral peak is near μ PDY1 (with the road's μ 1.0).
    assert!(peak > 0.8 && peak < 1.3, "peak |Fy|/Fz {peak}");
    // Every moment is exercised (none is identically zero over the sweep).
    for i in 6..9 {
        assert!(
            hi[i] - lo[i] > 1.0,
            "{} range {} {}",
            CHANNELS[i],
            lo[i],
            hi[i]
        );
    }
}

#[test]
fn mf52_cornering_stiffness_and_signs_follow_the_file() {
    // At the nominal load, upright, small α: Fy ≈ Ky α with Ky = PKY1 Fz0 sin(2
    // atan(1/PKY2)) (ISO: PKY1 < 0, so Fy opposes α), and Fx ≈ Kx κ with
    // Kx = PKX1 Fz0, both from the file's numbers by closed form.
    let c = coefficients();
    let tyre = Tyre::new();
    let fz0 = c["FNOMIN"];
    let at = |alpha: f64, kappa: f64| {
        let (q, wh) = wheel_state(&c, (3.0, 0.0), (0.0, 0.0), fz0, (20.0, alpha, kappa));
        tyre.out(q, &wh)
    };
    let d = 1e-4;
    let (a, b) = (at(d, 0.0), at(-d, 0.0));
    let ky = (a.ch[4] - b.ch[4]) / (a.ch[1] - b.ch[1]);
    let fz = a.ch[5];
    let want = c["PKY1"] * fz0 * (2.0 * (fz / (c["PKY2"] * fz0)).atan()).sin();
    assert!((ky - want).abs() < 0.02 * want.abs(), "Ky {ky} vs {want}");
    assert!(ky < 0.0 && a.ch[4] < b.ch[4], "ISO sign");
    let (a, b) = (at(0.0, d), at(0.0, -d));
    let kx = (a.ch[3] - b.ch[3]) / (a.ch[0] - b.ch[0]);
    let dfz = (fz - fz0) / fz0;
    let want = fz * (c["PKX1"] + c["PKX2"] * dfz) * (c["PKX3"] * dfz).exp();
    assert!((kx - want).abs() < 0.02 * want, "Kx {kx} vs {want}");
}

/// Every force and moment along a path has a continuous derivative (the same check
/// as the simplified tyre's, common::wheel::derivative_jump).
fn assert_smooth(
    tyre: &Tyre,
    path: &dyn Fn(f64) -> ([f64; 4], Wheel),
    s0: f64,
    s1: f64,
    ds: f64,
    what: &str,
) {
    for (i, name) in CHANNELS.iter().enumerate().take(9).skip(3) {
        let f = |s: f64| {
            let (q, wh) = path(s);
            tyre.out(q, &wh).ch[i]
        };
        assert_no_kink(&f, s0, s1, ds, what, name);
    }
}

#[test]
fn mf52_is_smooth_at_standstill_and_at_lift_off() {
    let c = coefficients();
    let tyre = Tyre::new();
    let deg = std::f64::consts::PI / 180.0;
    let fz0 = c["FNOMIN"];
    let standstill = |s: f64| {
        let (q, mut wh) = wheel_state(&c, (2.0, 0.1), (0.2, 1.0 * deg), fz0, (s, 0.0, 0.0));
        wh.w = [0.0; 3];
        wh.vc = add(wh.vc, mul(0.05, wh.rot[1]));
        (q, wh)
    };
    assert_smooth(&tyre, &standstill, -0.5, 0.5, 2e-3, "standstill");
    let spin = |s: f64| {
        let (q, mut wh) = wheel_state(&c, (2.0, 0.1), (0.2, 0.0), fz0, (0.0, 0.0, 0.0));
        wh.w = mul(s, wh.rot[1]);
        (q, wh)
    };
    assert_smooth(&tyre, &spin, -2.0, 2.0, 1e-2, "spin at standstill");
    // Slips through zero while rolling: the smoothed signs and |·| (width 1e-3 here).
    let slips = |s: f64| wheel_state(&c, (2.0, 0.1), (0.0, 0.5 * s), fz0, (10.0, s, s));
    assert_smooth(&tyre, &slips, -0.02, 0.02, 2e-4, "slips through zero");
    let lift = |s: f64| {
        let (q, mut wh) = wheel_state(
            &c,
            (4.0, 0.0),
            (0.0, 2.0 * deg),
            0.0,
            (12.0, 5.0 * deg, 0.1),
        );
        wh.c[2] += s;
        (q, wh)
    };
    let corner = FS / c["VERTICAL_STIFFNESS"];
    assert_smooth(
        &tyre,
        &lift,
        -20.0 * corner,
        20.0 * corner,
        corner / 4.0,
        "lift-off",
    );
    let (q, wh) = lift(0.5);
    let r = tyre.out(q, &wh);
    assert!(r.ch[3..9].iter().all(|x| *x == 0.0), "{r:?}");
    assert!(r.force.iter().chain(&r.moment).all(|x| *x == 0.0), "{r:?}");
}

/// The rendered diagnostics of building `text` next to a copy of a property file
/// with `tir` text, or "" when it builds.
fn diagnostics(text: &str, tir: &str) -> String {
    let dir = std::env::temp_dir().join(format!("fdc-mf52-diag-{}-{:p}", std::process::id(), text));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("t.tir"), tir).unwrap();
    let path = dir.join("model.fd");
    std::fs::write(&path, text).unwrap();
    let r = fdc_driver::pipeline::build(&path, &no_cache());
    let _ = std::fs::remove_dir_all(&dir);
    match r {
        Ok(_) => String::new(),
        Err(fdc_driver::pipeline::BuildError::Model { analysis, extra }) => {
            fdc_driver::pipeline::render(&analysis, &extra)
        }
        Err(e) => format!("{e:?}"),
    }
}

#[test]
fn tir_diagnostics_name_the_file_the_coefficient_and_the_line() {
    let m = |field: &str| {
        format!(
            "body wheel: rigid_body {{ mass = 15; inertia = [0.5, 0.9, 0.5]; position = [0, 0, 0.3]; }}
             force tyre: mf52_tyre(wheel) {{ {field} }}"
        )
    };
    let tir = "[LATERAL_COEFFICIENTS]\nPCY1 = 1.3 $shape\nPDY1 = high\nPKY1 = -20\nPKY1 = -21\n";
    assert_eq!(diagnostics(&m("pcy1 = tir(\"t.tir\", \"pcy1\");"), tir), "");
    let missing = diagnostics(&m("pcy1 = tir(\"nope.tir\", \"PCY1\");"), tir);
    assert!(
        missing.contains("E0915") && missing.contains("nope.tir"),
        "{missing}"
    );
    let absent = diagnostics(&m("pcx1 = tir(\"t.tir\", \"PCX1\");"), tir);
    assert!(
        absent.contains("E0916") && absent.contains("PCX1"),
        "{absent}"
    );
    let bad = diagnostics(&m("pdy1 = tir(\"t.tir\", \"PDY1\");"), tir);
    assert!(
        bad.contains("E0917") && bad.contains("line 3") && bad.contains("high"),
        "{bad}"
    );
    let twice = diagnostics(&m("pky1 = tir(\"t.tir\", \"PKY1\");"), tir);
    assert!(
        twice.contains("E0917") && twice.contains("line 5"),
        "{twice}"
    );
    let not_literal = diagnostics(&m("pcy1 = tir(\"t.tir\", 3);"), tir);
    assert!(not_literal.contains("E0301"), "{not_literal}");
}

#[test]
fn the_sample_file_builds_every_coefficient_the_tyre_takes() {
    // Every coefficient parameter of mf52_tyre is one the test takes from the file, so
    // the sweep above covers all of them (a new parameter must join the list).
    let text = include_str!("../../../../stdlib/mf52.fd");
    let c = coefficients();
    for name in COEFFICIENTS {
        assert!(c.contains_key(*name), "{name} missing in the sample file");
        assert!(
            text.contains(&format!("param {} = ", name.to_lowercase())),
            "{name}"
        );
    }
    let params = text.matches("param ").count();
    // at, axis, fz_smooth, v_smooth, slip_smooth, the road's 8 and the number of a data
    // road (`road`, docs/roads.md) are not coefficients.
    assert_eq!(
        params,
        COEFFICIENTS.len() + RENAMED.len() + 14,
        "parameters of mf52_tyre"
    );
}
