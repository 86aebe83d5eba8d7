//! The Magic Formula tyre (`stdlib/tyres.fd`) on the analytic road (`stdlib/roads.fd`):
//! its result channels and generalized forces, evaluated by the IR interpreter at
//! prescribed wheel states, against a separate implementation of the same equations
//! written here (docs/vehicle.md); smoothness at standstill and at lift-off; a wheel
//! rolling down a slope against the closed form with rolling resistance.

use crate::common;

use common::wheel::*;
use common::{build_text, channel, simulate};

/// The parameters the test model gives its tyre (non-default where it matters).
#[derive(Clone, Copy)]
struct Tyre {
    radius: f64,
    kz: f64,
    cz: f64,
    fs: f64,
    fz0: f64,
    v_eps: f64,
    cx: f64,
    ex: f64,
    kx: f64,
    kx_load: f64,
    dx_load: f64,
    cy: f64,
    ey: f64,
    ky: f64,
    ky_load: f64,
    dy_load: f64,
    dy_camber: f64,
    camber_shift: f64,
    rbx: [f64; 3],
    rby: [f64; 3],
    trail: f64,
    trail_b: f64,
    fr: f64,
}

const TYRE: Tyre = Tyre {
    radius: 0.31,
    kz: 2.2e5,
    cz: 800.0,
    fs: 20.0,
    fz0: 4000.0,
    v_eps: 0.4,
    cx: 1.65,
    ex: -0.4,
    kx: 22.0,
    kx_load: 0.1,
    dx_load: -0.08,
    cy: 1.35,
    ey: -0.6,
    ky: 18.0,
    ky_load: 1.9,
    dy_load: -0.06,
    dy_camber: 2.0,
    camber_shift: 0.12,
    rbx: [13.0, 9.0, 1.05],
    rby: [11.0, 7.0, 0.95],
    trail: 0.035,
    trail_b: 8.0,
    fr: 0.012,
};

/// The road of the test model: plane, harmonics along x and y, a friction patch, and
/// a tangent-plane slot on top.
struct Road;
impl Road {
    const PLANE: V3 = [0.02, 0.03, -0.01];
    const AX: V3 = [0.01, 0.004, 0.0];
    const FX: V3 = [0.2, 1.3, 0.0];
    const PX: V3 = [0.3, 1.0, 0.0];
    const AY: V3 = [0.006, 0.0, 0.0];
    const FY: V3 = [0.5, 0.0, 0.0];
    const PY: V3 = [-0.7, 0.0, 0.0];
    const MU: f64 = 1.05;
    const PATCH_MU: f64 = 0.4;
    const PATCH: (V3, V3, f64) = ([10.0, -1.0, 0.0], [20.0, 1.5, 0.0], 0.6);
    /// The slot: (x0, y0, h0, gx, gy, μ).
    const SLOT: [f64; 6] = [1.0, 0.5, 0.004, 0.002, -0.003, -0.05];

    fn waves(a: V3, f: V3, p: V3, s: f64) -> (f64, f64) {
        let tau = 2.0 * std::f64::consts::PI;
        (0..3).fold((0.0, 0.0), |(h, g), i| {
            let arg = tau * f[i] * s + p[i];
            (h + a[i] * arg.sin(), g + a[i] * tau * f[i] * arg.cos())
        })
    }
    /// (h, ∂h/∂x, ∂h/∂y, μ) at (x, y).
    fn at(x: f64, y: f64) -> (f64, f64, f64, f64) {
        let (wx, gx) = Self::waves(Self::AX, Self::FX, Self::PX, x);
        let (wy, gy) = Self::waves(Self::AY, Self::FY, Self::PY, y);
        let s = Self::SLOT;
        let h = Self::PLANE[0] + Self::PLANE[1] * x + Self::PLANE[2] * y + wx + wy;
        let h = h + s[2] + s[3] * (x - s[0]) + s[4] * (y - s[1]);
        let boxed = |v: f64, lo: f64, hi: f64| {
            0.5 * (((v - lo) / Self::PATCH.2).tanh() - ((v - hi) / Self::PATCH.2).tanh())
        };
        let (lo, hi) = (Self::PATCH.0, Self::PATCH.1);
        let inside = boxed(x, lo[0], hi[0]) * boxed(y, lo[1], hi[1]);
        let mu = Self::MU + (Self::PATCH_MU - Self::MU) * inside + s[5];
        (
            h,
            Self::PLANE[1] + gx + s[3],
            Self::PLANE[2] + gy + s[4],
            mu,
        )
    }
}

fn v3(v: V3) -> String {
    format!("[{}, {}, {}]", v[0], v[1], v[2])
}

fn model() -> String {
    let t = TYRE;
    let s = Road::SLOT;
    format!(
        "body wheel: rigid_body {{ mass = 15; inertia = [0.5, 0.9, 0.5]; position = [0, 0, 0.3]; }}
         force tyre: mf_tyre(wheel) {{
             radius = {}; stiffness = {}; damping = {}; fz_smooth = {}; fz0 = {}; v_smooth = {};
             cx = {}; ex = {}; kx = {}; kx_load = {}; dx_load = {};
             cy = {}; ey = {}; ky = {}; ky_load = {}; dy_load = {}; dy_camber = {};
             camber_shift = {}; rbx1 = {}; rbx2 = {}; cxa = {}; rby1 = {}; rby2 = {}; cyk = {};
             trail = {}; trail_b = {}; rolling_resistance = {};
             road_plane = {}; road_x_amp = {}; road_x_freq = {}; road_x_phase = {};
             road_y_amp = {}; road_y_freq = {}; road_y_phase = {};
             mu = {}; patch_mu = {}; patch_from = {}; patch_to = {}; patch_edge = {};
             plane_x = {}; plane_y = {}; plane_h = {}; plane_gx = {}; plane_gy = {}; plane_mu = {};
         }}",
        t.radius,
        t.kz,
        t.cz,
        t.fs,
        t.fz0,
        t.v_eps,
        t.cx,
        t.ex,
        t.kx,
        t.kx_load,
        t.dx_load,
        t.cy,
        t.ey,
        t.ky,
        t.ky_load,
        t.dy_load,
        t.dy_camber,
        t.camber_shift,
        t.rbx[0],
        t.rbx[1],
        t.rbx[2],
        t.rby[0],
        t.rby[1],
        t.rby[2],
        t.trail,
        t.trail_b,
        t.fr,
        v3(Road::PLANE),
        v3(Road::AX),
        v3(Road::FX),
        v3(Road::PX),
        v3(Road::AY),
        v3(Road::FY),
        v3(Road::PY),
        Road::MU,
        Road::PATCH_MU,
        v3(Road::PATCH.0),
        v3(Road::PATCH.1),
        Road::PATCH.2,
        s[0],
        s[1],
        s[2],
        s[3],
        s[4],
        s[5],
    )
}

/// The tyre of the test model, evaluated by the interpreter.
struct Tyred(Lowered);

impl Tyred {
    fn new(text: &str) -> Tyred {
        Tyred(Lowered::new(text))
    }

    /// Everything the tyre reports and applies at `wh` (quaternion `q`).
    fn result(&self, q: [f64; 4], wh: &Wheel) -> Result {
        let l = self.0.loads(q, wh);
        let ch = |n: &str| self.0.channel(&l.out, n);
        Result {
            kappa: ch("slip"),
            alpha: ch("slip_angle"),
            gamma: ch("camber"),
            fx: ch("fx"),
            fy: ch("fy"),
            fz: ch("fz"),
            mz: ch("mz"),
            my: ch("my"),
            p: [ch("contact.x"), ch("contact.y"), ch("contact.z")],
            h: ch("road_height"),
            mu: ch("friction"),
            force: l.force,
            moment: l.moment,
        }
    }
}

/// What the tyre reports, and the load it applies (force, moment about the centre).
#[derive(Debug, Clone, Copy)]
struct Result {
    kappa: f64,
    alpha: f64,
    gamma: f64,
    fx: f64,
    fy: f64,
    fz: f64,
    mz: f64,
    my: f64,
    p: V3,
    h: f64,
    mu: f64,
    force: V3,
    moment: V3,
}

/// MF shape sin(C atan(Bx − E(Bx − atan Bx))).
fn mf(b: f64, c: f64, e: f64, x: f64) -> f64 {
    let bx = b * x;
    (c * (bx - e * (bx - bx.atan())).atan()).sin()
}

/// The tyre law written from docs/vehicle.md, independently of the fd source.
fn reference(t: &Tyre, wh: &Wheel) -> Result {
    let k = contact(&Road::at, wh, (t.radius, t.kz, t.cz, t.fs, t.v_eps));
    let Contact {
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
        vref,
        sin_g,
    } = k;
    let kappa = -dot(vp, ex) / vref;
    let alpha = (-dot(vp, ey) / vref).atan();
    let gamma = sin_g.asin();
    let dfz = (fz - t.fz0) / t.fz0;
    let dx = mu * (1.0 + t.dx_load * dfz);
    let bx = t.kx * (t.kx_load * dfz).exp() / (t.cx * dx);
    let fx0 = dx * fz * mf(bx, t.cx, t.ex, kappa);
    // Ky = ky Fz0 sin(2 atan(Fz/(ky_load Fz0))), By = Ky/(Cy Dy).
    let dy = mu * (1.0 + t.dy_load * dfz) * (1.0 - t.dy_camber * gamma * gamma);
    let ky_over_fz = if fz > 0.0 {
        t.ky * t.fz0 * (2.0 * (fz / (t.ky_load * t.fz0)).atan()).sin() / fz
    } else {
        2.0 * t.ky / t.ky_load
    };
    let fy0 = dy
        * fz
        * mf(
            ky_over_fz / (t.cy * dy),
            t.cy,
            t.ey,
            alpha + t.camber_shift * gamma,
        );
    let weight =
        |r: [f64; 3], x: f64, y: f64| (r[2] * (r[0] * (r[1] * y).atan().cos() * x).atan()).cos();
    let fx = weight(t.rbx, alpha, kappa) * fx0;
    let fy = weight(t.rby, kappa, alpha) * fy0;
    let mz = -t.trail * (t.trail_b * alpha).atan().cos() * fy;
    let my = -t.fr * fz * rho * (vx / t.v_eps).tanh();
    let force = add(add(mul(fx, ex), mul(fy, ey)), mul(fz, n));
    let moment = add(add(cross(sub(p, wh.c), force), mul(mz, n)), mul(my, a));
    Result {
        kappa,
        alpha,
        gamma,
        fx,
        fy,
        fz,
        mz,
        my,
        p,
        h,
        mu,
        force,
        moment,
    }
}

/// A wheel at (x, y) heading ψ with camber γ, loaded to about `load` (deflection
/// load/kz), moving at `speed` with slip angle about α and slip ratio about κ.
fn wheel_state(
    (x, y): (f64, f64),
    psi: f64,
    gamma: f64,
    load: f64,
    speed: f64,
    alpha: f64,
    kappa: f64,
) -> ([f64; 4], Wheel) {
    let t = TYRE;
    let q = steer_camber(psi, gamma);
    let rot = rotation(q);
    let (h, gx, gy, _) = Road::at(x, y);
    let rho = t.radius - load / t.kz;
    let n = unit([-gx, -gy, 1.0]);
    let c = [x, y, h + rho * gamma.cos() / n[2]];
    let (head, left) = ([psi.cos(), psi.sin(), 0.0], [-psi.sin(), psi.cos(), 0.0]);
    let mut vc = add(mul(speed, head), mul(-speed * alpha.tan(), left));
    vc[2] = gx * vc[0] + gy * vc[1]; // along the road
    let vref = (speed * speed + t.v_eps * t.v_eps).sqrt();
    let w = mul((speed + kappa * vref) / rho, rot[1]);
    (q, Wheel { c, rot, vc, w })
}

fn close(got: f64, want: f64, what: &str, ctx: &str) {
    assert!(
        (got - want).abs() <= 1e-6 * (1.0 + want.abs()),
        "{what}: fd {got} vs reference {want} ({ctx})"
    );
}

fn compare(got: &Result, want: &Result, ctx: &str) {
    for (g, w, n) in [
        (got.kappa, want.kappa, "slip"),
        (got.alpha, want.alpha, "slip angle"),
        (got.gamma, want.gamma, "camber"),
        (got.fx, want.fx, "Fx"),
        (got.fy, want.fy, "Fy"),
        (got.fz, want.fz, "Fz"),
        (got.mz, want.mz, "Mz"),
        (got.my, want.my, "My"),
        (got.h, want.h, "road height"),
        (got.mu, want.mu, "friction"),
    ] {
        close(g, w, n, ctx);
    }
    for k in 0..3 {
        close(got.p[k], want.p[k], "contact point", ctx);
        close(got.force[k], want.force[k], "applied force", ctx);
        close(got.moment[k], want.moment[k], "applied moment", ctx);
    }
}

#[test]
fn tyre_forces_match_an_independent_implementation_over_slip_load_and_camber() {
    let l = Tyred::new(&model());
    let deg = std::f64::consts::PI / 180.0;
    let t = TYRE;
    let (mut kr, mut ar, mut fr, mut gr) = ([0.0f64; 2], [0.0f64; 2], [f64::MAX, 0.0], [0.0f64; 2]);
    let mut fx_peak = 0.0f64;
    let mut n = 0;
    for &kappa in &[-1.0, -0.4, -0.08, -0.01, 0.0, 0.02, 0.15, 0.5, 1.0] {
        for &alpha in &[-20.0, -9.0, -2.0, 0.0, 1.0, 6.0, 20.0] {
            for &load in &[-0.05, 0.0, 0.3, 1.0, 1.5, 2.0] {
                for &gamma in &[-5.0, 0.0, 5.0] {
                    let x = 3.0 + 2.0 * n as f64 / 1000.0;
                    let (q, wh) = wheel_state(
                        (x, 0.4),
                        0.3,
                        gamma * deg,
                        load * t.fz0,
                        15.0,
                        alpha * deg,
                        kappa,
                    );
                    let want = reference(&t, &wh);
                    let got = l.result(q, &wh);
                    compare(
                        &got,
                        &want,
                        &format!("κ {kappa} α {alpha}° load {load} Fz0 γ {gamma}°"),
                    );
                    kr = [kr[0].min(want.kappa), kr[1].max(want.kappa)];
                    ar = [ar[0].min(want.alpha), ar[1].max(want.alpha)];
                    fr = [fr[0].min(want.fz), fr[1].max(want.fz)];
                    gr = [gr[0].min(want.gamma), gr[1].max(want.gamma)];
                    fx_peak = fx_peak.max(want.fx.abs() / want.fz.max(1.0));
                    n += 1;
                }
            }
        }
    }
    // The sweep covers the ranges it claims (the road's slope and waves shift them).
    assert!(kr[0] < -0.9 && kr[1] > 0.9, "slip ratio range {kr:?}");
    assert!(
        ar[0] < -19.0 * deg && ar[1] > 19.0 * deg,
        "slip angle range {ar:?}"
    );
    assert!(fr[0] < 1.0 && fr[1] > 1.9 * t.fz0, "load range {fr:?}");
    assert!(
        gr[0] < -4.8 * deg && gr[1] > 4.8 * deg,
        "camber range {gr:?}"
    );
    // The peak of Fx/Fz is near μ (1 + dx_load dfz), so the formula saturates.
    assert!(fx_peak > 0.8 && fx_peak < 1.3, "peak Fx/Fz {fx_peak}");
    // On the friction patch (μ 0.4 inside): the tangent plane and friction still agree.
    let (q, wh) = wheel_state((15.0, 0.3), -0.2, 2.0 * deg, t.fz0, 8.0, 4.0 * deg, 0.3);
    let (got, want) = (l.result(q, &wh), reference(&t, &wh));
    compare(&got, &want, "on the patch");
    // Inside, near the patch's y edge: close to μ_patch + μ₀ = 0.35.
    assert!(
        (want.mu - (Road::PATCH_MU + Road::SLOT[5])).abs() < 0.03,
        "μ {}",
        want.mu
    );
}

/// Every channel along a path through a suspect point has a continuous derivative:
/// refining the spacing tenfold shrinks the quotients' jumps about tenfold.
fn assert_smooth(
    l: &Tyred,
    path: &dyn Fn(f64) -> ([f64; 4], Wheel),
    s0: f64,
    s1: f64,
    ds: f64,
    what: &str,
) {
    type Pick = fn(&Result) -> f64;
    let picks: [(&str, Pick); 5] = [
        ("Fx", |r| r.fx),
        ("Fy", |r| r.fy),
        ("Fz", |r| r.fz),
        ("Mz", |r| r.mz),
        ("My", |r| r.my),
    ];
    for (name, pick) in picks {
        let f = |s: f64| {
            let (q, wh) = path(s);
            pick(&l.result(q, &wh))
        };
        assert_no_kink(&f, s0, s1, ds, what, name);
    }
}

#[test]
fn the_tyre_is_smooth_at_standstill_and_at_lift_off() {
    let l = Tyred::new(&model());
    let t = TYRE;
    let deg = std::f64::consts::PI / 180.0;
    // Standstill: forward speed through zero at a little side slip, wheel not turning.
    let standstill = |s: f64| {
        let (q, mut wh) = wheel_state((2.0, 0.1), 0.2, 1.0 * deg, t.fz0, s, 0.0, 0.0);
        wh.w = [0.0, 0.0, 0.0];
        wh.vc = add(wh.vc, mul(0.05, wh.rot[1]));
        (q, wh)
    };
    assert_smooth(&l, &standstill, -0.5, 0.5, 2e-3, "standstill");
    // At rest the tyre carries the load, with no longitudinal force and no rolling
    // moment; upright it has no side force beyond the camber thrust of the road's
    // tilt under the wheel (γ ≈ 1e-5 here).
    let (q, mut wh) = wheel_state((2.0, 0.1), 0.2, 0.0, t.fz0, 0.0, 0.0, 0.0);
    wh.w = [0.0; 3];
    wh.vc = [0.0; 3];
    let r = l.result(q, &wh);
    assert!(
        r.fx.abs() < 1e-9 && r.fy.abs() < 1e-4 * r.fz && r.my.abs() < 1e-9,
        "{r:?}"
    );
    assert!((r.fz - t.fz0).abs() < 0.01 * t.fz0, "{r:?}");
    // Spin through zero at standstill (a wheel starting to turn on the spot).
    let spin = |s: f64| {
        let (q, mut wh) = wheel_state((2.0, 0.1), 0.2, 0.0, t.fz0, 0.0, 0.0, 0.0);
        wh.w = mul(s, wh.rot[1]);
        (q, wh)
    };
    assert_smooth(&l, &spin, -2.0, 2.0, 1e-2, "spin at standstill");
    // Lift-off: the centre rises through the unloaded radius while rolling with slip.
    let lift = |s: f64| {
        let (q, mut wh) = wheel_state((4.0, 0.0), 0.0, 2.0 * deg, 0.0, 12.0, 5.0 * deg, 0.1);
        wh.c[2] += s;
        (q, wh)
    };
    let corner = t.fs / t.kz; // the softplus corner's width in deflection
    assert_smooth(
        &l,
        &lift,
        -20.0 * corner,
        20.0 * corner,
        corner / 4.0,
        "lift-off",
    );
    // High above the road everything is exactly zero and finite.
    let (q, wh) = lift(0.5);
    let r = l.result(q, &wh);
    assert!(
        r.fz == 0.0 && r.fx == 0.0 && r.fy == 0.0 && r.mz == 0.0,
        "{r:?}"
    );
    assert!(r.force.iter().chain(&r.moment).all(|x| *x == 0.0), "{r:?}");
}

#[test]
fn the_road_gradient_is_the_derivative_of_its_height() {
    // The tyre's road_height channel at neighbouring centres, by differences, against
    // the slope the tyre uses, seen through its outputs: with the axis along y the
    // contact point lies below the centre along (n_x, 0, n_z), so (C − P) gives
    // ∂h/∂x = −n_x/n_z, and the camber is asin(n_y).
    let l = Tyred::new(&model());
    let t = TYRE;
    let eps = 1e-5;
    for &(x, y) in &[(0.3, 0.2), (2.7, -1.3), (11.0, 0.9), (-4.0, 3.0)] {
        let h = |x: f64, y: f64| {
            let (q, wh) = wheel_state((x, y), 0.0, 0.0, t.fz0, 5.0, 0.0, 0.0);
            l.result(q, &wh).h
        };
        let gx = (h(x + eps, y) - h(x - eps, y)) / (2.0 * eps);
        let gy = (h(x, y + eps) - h(x, y - eps)) / (2.0 * eps);
        let (q, wh) = wheel_state((x, y), 0.0, 0.0, t.fz0, 5.0, 0.0, 0.0);
        let r = l.result(q, &wh);
        let d = sub(wh.c, r.p);
        let slope_x = -d[0] / d[2];
        let ny = r.gamma.sin();
        let slope_y = -ny * (1.0 + slope_x * slope_x).sqrt() / (1.0 - ny * ny).sqrt();
        assert!(
            (slope_x - gx).abs() < 1e-8,
            "∂h/∂x at ({x}, {y}): {gx} vs {slope_x}"
        );
        assert!(
            (slope_y - gy).abs() < 1e-8,
            "∂h/∂y at ({x}, {y}): {gy} vs {slope_y}"
        );
    }
}

#[test]
fn a_wheel_rolls_down_a_slope_as_the_closed_form_with_rolling_resistance() {
    // A wheel kept upright (its axis stays along y, the centre in the x-z plane) rolls
    // freely down the road z = −s x. Rolling without slip, m v̇ = m g sinθ + Fx and
    // J ω̇ = −ρ Fx − f_r Fz ρ with v = ρ ω: v̇ = g (sinθ − f_r cosθ)/(1 + J/(m ρ²)),
    // ρ = r − Fz/k the loaded radius, Fz = m g cosθ. The small longitudinal slip that
    // carries Fx (κ = Fx/Kx, Kx = kx Fz) adds the factor (1 + κ) to J.
    let (m, j, r, s, k, fr, g, v0) = (20.0, 1.2, 0.3, 0.05, 2e5, 0.015, 9.81, 3.0);
    let cos_t = 1.0 / (1.0f64 + s * s).sqrt();
    let sin_t = s * cos_t;
    let fz = m * g * cos_t;
    let rho = r - fz / k;
    let model = format!(
        "gravity [0, 0, -{g}];
         body wheel: rigid_body {{ mass = {m}; inertia = [0.8, {j}, 0.8];
             position = [0, 0, {z0}]; velocity = [{vx0}, 0, {vz0}];
             angular_velocity = [0, {w0}, 0]; }}
         joint lateral: transfix_ground(wheel) {{ at = [0, 0, 0]; n = [0, 1, 0]; }}
         joint upright_x: rotfix_ground(wheel) {{ a = [0, 1, 0]; g = [1, 0, 0]; }}
         joint upright_z: rotfix_ground(wheel) {{ a = [0, 1, 0]; g = [0, 0, 1]; }}
         force tyre: mf_tyre(wheel) {{ radius = {r}; stiffness = {k}; damping = 3000;
             rolling_resistance = {fr}; road_plane = [0, -{s}, 0]; }}
         output speed = dot(wheel.velocity([0, 0, 0]), [{cos_t}, 0, -{sin_t}]);
         simulate {{ end = 3; step = 1e-3; output_every = 0.05; }}",
        z0 = rho / cos_t,
        vx0 = v0 * cos_t,
        vz0 = -v0 * sin_t,
        w0 = v0 / rho,
    );
    let (sink, _) = simulate(build_text("tyre-slope", &model), |_| {});
    let (speed, fz_ch, slip) = (
        channel(&sink, "speed"),
        channel(&sink, "tyre.fz"),
        channel(&sink, "tyre.slip"),
    );
    let t = &sink.times;
    let (i0, i1) = (t.iter().position(|&x| x >= 1.0).unwrap(), t.len() - 1);
    let measured = (speed[i1] - speed[i0]) / (t[i1] - t[i0]);
    let fx = |a: f64| -(j * a / (rho * rho) + fr * fz);
    let mut a = g * (sin_t - fr * cos_t) / (1.0 + j / (m * rho * rho));
    for _ in 0..5 {
        let kappa = fx(a) / (20.0 * fz); // default kx = 20, linear range
        a = (m * g * sin_t - fr * fz) / (m + j * (1.0 + kappa) / (rho * rho));
    }
    assert!(
        (measured - a).abs() < 3e-3 * a,
        "acceleration {measured} vs closed form {a}"
    );
    // Without rolling resistance it would be 30 % faster: the check resolves it.
    let free = g * sin_t / (1.0 + j / (m * rho * rho));
    assert!((measured - free).abs() > 0.2 * a, "{measured} vs {free}");
    assert!(
        (fz_ch[i1] - fz).abs() < 1e-3 * fz,
        "Fz {} vs {fz}",
        fz_ch[i1]
    );
    assert!(slip[i1] < 0.0 && slip[i1] > -0.01, "slip {}", slip[i1]);
}
