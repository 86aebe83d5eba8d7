//! One loaded OpenCRG data set: the reference line, the grid, the modifiers, and the
//! evaluations (u, v) → (x, y), (x, y) → (u, v), (u, v) → z with the standard's
//! default options (border modes "keep last value" in u and v, no smoothing, no
//! offsets, open reference line).
//!
//! Where the order of floating-point operations matters for agreement with the
//! reference C library to 1e-9 m, this code keeps the library's order: the grid is
//! single precision, the bilinear form is z00 + Δu·fu + Δv·fv + Δuv·fu·fv in the
//! library's grouping, and headings integrate with the heading at the *end* of each
//! step (x_{i+1} = x_i + Δu cos φ_{i+1}).

use crate::parse::{Mod, Raw};
use crate::CrgError;

/// A prepared data set.
#[derive(Clone, Debug)]
pub struct Crg {
    pub(crate) u_first: f64,
    pub(crate) u_last: f64,
    pub(crate) u_inc: f64,
    /// Lateral positions of the long sections, ascending.
    pub(crate) v: Vec<f64>,
    /// The constant lateral spacing when the sections are given by index.
    pub(crate) v_inc: Option<f64>,
    /// Elevation grid, long section by long section: `z[iv * nu + iu]`.
    pub(crate) z: Vec<f32>,
    pub(crate) nu: usize,
    /// Reference line points.
    pub(crate) x: Vec<f64>,
    pub(crate) y: Vec<f64>,
    /// Heading per point (empty for a straight line given by the header only).
    pub(crate) phi: Vec<f64>,
    pub(crate) phi_first: f64,
    pub(crate) phi_last: f64,
    /// The line's end points as the header or the integration left them.
    pub(crate) x_first: f64,
    pub(crate) y_first: f64,
    pub(crate) x_last: f64,
    pub(crate) y_last: f64,
    /// Reference line elevation per point (slope integrated) or one constant.
    pub(crate) ref_z: Option<Vec<f64>>,
    pub(crate) ref_z_const: f64,
    /// Banking (cross slope) per point, or one constant; `None`: no banking.
    pub(crate) bank: Option<Vec<f64>>,
    pub(crate) bank_const: f64,
    pub(crate) has_bank: bool,
}

/// The `grid_nan_mode` values.
const NAN_KEEP: i32 = 0;
const NAN_SET_ZERO: i32 = 1;
const NAN_KEEP_LAST: i32 = 2;

/// The standard's default modifiers (used when a file has no `$ROAD_CRG_MODS`):
/// NaNs take the last valid value towards the reference line, and the start of the
/// reference line moves to x = y = z = 0 with heading 0.
fn default_mods() -> Vec<(Mod, f64)> {
    vec![
        (Mod::NanMode, NAN_KEEP_LAST as f64),
        (Mod::RefPointX, 0.0),
        (Mod::RefPointY, 0.0),
        (Mod::RefPointZ, 0.0),
        (Mod::RefPointPhi, 0.0),
    ]
}

fn rotate(x: &mut f64, y: &mut f64, cx: f64, cy: f64, angle: f64) {
    // As the reference library: through polar coordinates about the centre.
    let (dx, dy) = (*x - cx, *y - cy);
    let a = dy.atan2(dx) + angle;
    let r = (dx * dx + dy * dy).sqrt();
    *x = cx + r * a.cos();
    *y = cy + r * a.sin();
}

fn normalized(v: [f64; 2]) -> [f64; 2] {
    let l = (v[0] * v[0] + v[1] * v[1]).sqrt();
    if l < 1e-10 {
        v
    } else {
        [v[0] / l, v[1] / l]
    }
}

impl Crg {
    pub(crate) fn from_raw(raw: Raw) -> Result<Crg, CrgError> {
        let h = &raw.hdr;
        let nu = raw.z[0].len();
        let mut c = Crg {
            u_first: h.u_first,
            u_last: h.u_first + h.u_inc * (nu - 1) as f64,
            u_inc: h.u_inc,
            v: raw.v.clone(),
            v_inc: raw.v_by_index.then_some(h.v_inc),
            z: raw.z.concat(),
            nu,
            x: vec![0.0; nu],
            y: vec![0.0; nu],
            phi: raw.phi.clone().unwrap_or_default(),
            phi_first: h.phi_first,
            phi_last: h.phi_last,
            x_first: h.x_first,
            y_first: h.y_first,
            x_last: 0.0,
            y_last: 0.0,
            ref_z: None,
            ref_z_const: h.z_first.unwrap_or(0.0),
            bank: raw.bank.clone(),
            bank_const: h.bank_first,
            has_bank: raw.bank.is_some()
                || h.bank_first != 0.0
                || h.bank_last.is_some_and(|b| b != 0.0),
        };
        let mods = raw.mods.clone().unwrap_or_else(default_mods);
        let get = |m: Mod| mods.iter().find(|(k, _)| *k == m).map(|p| p.1);
        if let Some(mode) = get(Mod::NanMode) {
            let offset = if mode as i32 != NAN_KEEP {
                get(Mod::NanOffset).unwrap_or(0.0)
            } else {
                0.0
            };
            c.fill_nans(mode as i32, offset);
        }
        c.integrate_line(&raw);
        c.reference_z(&raw);
        if c.is_closed() {
            return Err(CrgError::Unsupported(
                "closed reference lines (a track whose ends meet)".into(),
            ));
        }
        c.transform(&get);
        Ok(c)
    }

    /// NaN handling per u column: first from the right border leftwards each NaN
    /// takes its right neighbour's value, then from the left the NaNs still left
    /// take their left neighbour's (`grid_nan_mode` 2); or they become the offset (1).
    fn fill_nans(&mut self, mode: i32, offset: f64) {
        let (nu, nv) = (self.nu, self.v.len());
        let mut applied = false;
        for i in 0..nu {
            for v in 1..nv {
                let k = v * nu + i;
                if self.z[k].is_nan() {
                    match mode {
                        NAN_SET_ZERO => self.z[k] = offset as f32,
                        NAN_KEEP_LAST => {
                            self.z[k] = self.z[k - nu];
                            if !self.z[k].is_nan() && !applied {
                                self.z[k] += offset as f32;
                                applied = true;
                            }
                        }
                        _ => {}
                    }
                }
            }
            applied = false;
            for v in (1..nv).rev() {
                let (k, km) = (v * nu + i, (v - 1) * nu + i);
                if self.z[km].is_nan() && !self.z[k].is_nan() {
                    match mode {
                        NAN_SET_ZERO => self.z[km] = offset as f32,
                        NAN_KEEP_LAST => {
                            self.z[km] = self.z[k];
                            if !applied {
                                self.z[km] += offset as f32;
                                applied = true;
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
    }

    /// Reference line points from the headings (OpenCRG: piecewise straight between
    /// points; each step uses the heading stored at its end point).
    fn integrate_line(&mut self, raw: &Raw) {
        let (n, du) = (self.nu, self.u_inc);
        let end = raw
            .hdr
            .xy_last
            .filter(|p| p.0.is_finite() && p.1.is_finite());
        if self.phi.is_empty() {
            let (s, c) = self.phi_first.sin_cos();
            for i in 0..n {
                self.x[i] = self.x_first + i as f64 * du * c;
                self.y[i] = self.y_first + i as f64 * du * s;
            }
            (self.x_last, self.y_last) = end.unwrap_or((self.x[n - 1], self.y[n - 1]));
            return;
        }
        let phi = &self.phi;
        if let Some((xe, ye)) = end {
            // Integrate back from the given end, then forwards from the start, and
            // blend the two so that both ends are met.
            self.x[n - 1] = xe;
            self.y[n - 1] = ye;
            for i in (1..n).rev() {
                self.x[i - 1] = self.x[i] - du * phi[i].cos();
                self.y[i - 1] = self.y[i] - du * phi[i].sin();
            }
            self.x[0] = self.x_first;
            self.y[0] = self.y_first;
            for i in 0..n - 1 {
                let f = (i + 1) as f64 / (n - 1) as f64;
                self.x[i + 1] = (1.0 - f) * (self.x[i] + du * phi[i + 1].cos()) + f * self.x[i + 1];
                self.y[i + 1] = (1.0 - f) * (self.y[i] + du * phi[i + 1].sin()) + f * self.y[i + 1];
            }
            (self.x_last, self.y_last) = (xe, ye);
        } else {
            self.x[0] = self.x_first;
            self.y[0] = self.y_first;
            for i in 0..n - 1 {
                self.x[i + 1] = self.x[i] + du * phi[i + 1].cos();
                self.y[i + 1] = self.y[i] + du * phi[i + 1].sin();
            }
            (self.x_last, self.y_last) = (self.x[n - 1], self.y[n - 1]);
        }
    }

    /// Reference line elevation from the slope (as the headings: the slope at the
    /// end of each step).
    fn reference_z(&mut self, raw: &Raw) {
        let h = &raw.hdr;
        if h.slope_first == 0.0 && raw.slope.is_none() {
            return;
        }
        let (n, du) = (self.nu, self.u_inc);
        let slope = |i: usize| raw.slope.as_ref().map_or(h.slope_first, |s| s[i]);
        let mut z = vec![0.0; n];
        if let Some(z_end) = h.z_last {
            z[n - 1] = z_end;
            for i in (1..n).rev() {
                z[i - 1] = z[i] - slope(i) * du;
            }
            z[0] = self.ref_z_const;
            for i in 0..n.saturating_sub(2) {
                let f = i as f64 / (n - 1) as f64;
                z[i + 1] = (1.0 - f) * (z[i] + slope(i + 1) * du) + f * z[i + 1];
            }
        } else {
            z[0] = self.ref_z_const;
            for i in 0..n - 1 {
                z[i + 1] = z[i] + slope(i + 1) * du;
            }
        }
        self.ref_z = Some(z);
    }

    /// The reference library's test for a closed track: the extensions of both ends
    /// within 60° of each other and overlapping.
    fn is_closed(&self) -> bool {
        let (m1, m2) = (self.phi_first.cos(), self.phi_first.sin());
        let (n1, n2) = (self.phi_last.cos(), self.phi_last.sin());
        let d = m1 * n1 + m2 * n2;
        if d <= 0.5 {
            return false;
        }
        let (a1, a2, b1, b2) = (self.x_first, self.y_first, self.x_last, self.y_last);
        let l = ((a2 - b2) * m2 + (a1 - b1) * m1) / d;
        let k = ((b2 - a2) * n2 + (b1 - a1) * n1) / d;
        l > 0.0 && k < 0.0
    }

    /// The modifiers' rigid motion: a reference point (u, v) moved to (x, y, z, φ),
    /// or plain offsets of the reference line start.
    fn transform(&mut self, get: &dyn Fn(Mod) -> Option<f64>) {
        let mut to = [0.0; 3];
        let mut rot = 0.0;
        let mut apply = false;
        for (i, m) in [Mod::RefPointX, Mod::RefPointY, Mod::RefPointZ]
            .into_iter()
            .enumerate()
        {
            if let Some(v) = get(m) {
                to[i] = v;
                apply = true;
            }
        }
        if let Some(p) = get(Mod::RefPointPhi) {
            rot = p;
            apply = true;
        }
        let mut u = self.u_first;
        let mut v = 0.0;
        if let Some(p) = get(Mod::RefPointU) {
            u = p;
            apply = true;
        }
        if let Some(f) = get(Mod::RefPointUFrac) {
            u = self.u_first
                + f * (self.u_last - self.u_first)
                + get(Mod::RefPointUOffset).unwrap_or(0.0);
            apply = true;
        }
        if let Some(p) = get(Mod::RefPointV) {
            v = p;
            apply = true;
        }
        if let Some(f) = get(Mod::RefPointVFrac) {
            let (v0, v1) = (self.v[0], self.v[self.v.len() - 1]);
            v = v0 + f * (v1 - v0) + get(Mod::RefPointVOffset).unwrap_or(0.0);
            apply = true;
        }
        let from;
        let centre;
        if apply {
            let (fx, fy) = self.uv_to_xy(u, v);
            from = [fx, fy, self.uv_to_z(u, v)];
            rot -= self.heading_at(u);
            centre = [fx, fy];
        } else {
            // The library evaluates z(0, 0) here without options: 0 off the grid.
            let inside = (self.u_first..=self.u_last).contains(&0.0)
                && (self.v[0]..=self.v[self.v.len() - 1]).contains(&0.0);
            let z0 = if inside { self.uv_to_z(0.0, 0.0) } else { 0.0 };
            from = [self.x_first, self.y_first, z0];
            centre = [
                get(Mod::RotCenterX).unwrap_or(from[0]),
                get(Mod::RotCenterY).unwrap_or(from[1]),
            ];
            let offs = [Mod::OffsetX, Mod::OffsetY, Mod::OffsetZ].map(get);
            for i in 0..3 {
                to[i] = offs[i].unwrap_or(0.0) + from[i];
            }
            rot = get(Mod::OffsetPhi).unwrap_or(0.0);
            apply = offs.iter().any(Option::is_some) || get(Mod::OffsetPhi).is_some();
        }
        if !apply {
            return;
        }
        for p in &mut self.phi {
            *p += rot;
        }
        self.phi_first += rot;
        self.phi_last += rot;
        let [cx, cy] = centre;
        rotate(&mut self.x_first, &mut self.y_first, cx, cy, rot);
        rotate(&mut self.x_last, &mut self.y_last, cx, cy, rot);
        for i in 0..self.nu {
            rotate(&mut self.x[i], &mut self.y[i], cx, cy, rot);
        }
        let (dx, dy, dz) = (to[0] - from[0], to[1] - from[1], to[2] - from[2]);
        for x in &mut self.x {
            *x += dx;
        }
        for y in &mut self.y {
            *y += dy;
        }
        self.x_first += dx;
        self.x_last += dx;
        self.y_first += dy;
        self.y_last += dy;
        match &mut self.ref_z {
            Some(z) => z.iter_mut().for_each(|z| *z += dz),
            None => {
                // A constant reference elevation (given or 0) or the grid's offset:
                // the same shift of every z.
                self.ref_z_const += dz;
            }
        }
    }

    /// The heading the library reports at u on the reference line (at the start:
    /// the header's; inside: the stored heading of the interval's first point).
    fn heading_at(&self, u: f64) -> f64 {
        let frac = (u - self.u_first) / self.u_inc;
        let i = if frac < 0.0 {
            0
        } else {
            (frac as usize).min(self.nu - 2)
        };
        let nu5 = ((0.5 / self.u_inc) as usize).max(1);
        if nu5 > i {
            self.phi_first
        } else if i + nu5 >= self.phi.len() {
            self.phi_last
        } else {
            self.phi[i]
        }
    }

    /// (u, v) → (x, y): between the normals at the interval's ends (each the mean
    /// direction of the neighbouring intervals), straight extensions beyond the ends.
    pub fn uv_to_xy(&self, u: f64, v: f64) -> (f64, f64) {
        let n = self.nu;
        let frac = (u - self.u_first) / self.u_inc;
        let i = if frac < 0.0 {
            0
        } else {
            (frac as usize).min(n - 2)
        };
        let frac = frac - i as f64;
        if frac < 0.0 {
            let du = frac * self.u_inc;
            let (s, c) = self.phi_first.sin_cos();
            return (self.x_first + du * c - v * s, self.y_first + du * s + v * c);
        }
        if frac > 1.0 {
            let du = (frac - 1.0) * self.u_inc;
            let (s, c) = self.phi_last.sin_cos();
            return (self.x_last + du * c - v * s, self.y_last + du * s + v * c);
        }
        let (x, y) = (&self.x, &self.y);
        let n12 = normalized([-(y[i + 1] - y[i]), x[i + 1] - x[i]]);
        let scaled = |m: [f64; 2]| {
            let d = m[0] * n12[0] + m[1] * n12[1];
            if d.abs() > 1e-10 {
                [m[0] / d, m[1] / d]
            } else {
                m
            }
        };
        let n1 = if i > 0 {
            scaled(normalized([-(y[i + 1] - y[i - 1]), x[i + 1] - x[i - 1]]))
        } else {
            scaled(n12)
        };
        let n2 = if i < n - 2 {
            scaled(normalized([-(y[i + 2] - y[i]), x[i + 2] - x[i]]))
        } else {
            scaled(n12)
        };
        let a = [x[i] + v * n1[0], y[i] + v * n1[1]];
        let b = [x[i + 1] + v * n2[0], y[i + 1] + v * n2[1]];
        (a[0] + frac * (b[0] - a[0]), a[1] + frac * (b[1] - a[1]))
    }
}
