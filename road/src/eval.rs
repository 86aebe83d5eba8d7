//! The evaluations of a data set: (x, y) → (u, v) and (u, v) → z.

use crate::crg::Crg;

impl Crg {
    /// Index and fraction of u in the grid, "keep last value" beyond both ends.
    fn u_cell(&self, u: f64) -> (usize, f64) {
        let frac = (u - self.u_first) / self.u_inc;
        if u < self.u_first {
            return (0, 0.0);
        }
        let i = frac as usize;
        if i >= self.nu - 1 {
            (self.nu - 2, 1.0)
        } else {
            (i, frac - i as f64)
        }
    }

    /// Index and fraction of v among the long sections, "keep last value" beyond
    /// both borders.
    fn v_cell(&self, v: f64) -> (usize, f64) {
        let n = self.v.len();
        if let Some(dv) = self.v_inc {
            // Sections given by index: the direct formula, as the library.
            if v < self.v[0] {
                return (0, 0.0);
            }
            let frac = (v - self.v[0]) / dv;
            let i = frac as usize;
            return if i >= n - 1 {
                (n - 2, 1.0)
            } else {
                (i, frac - i as f64)
            };
        }
        // Bisection (the library's path for sections given by position; for equal
        // spacing it agrees with the direct formula to rounding).
        let (mut lo, mut hi) = (0, n - 1);
        loop {
            let mid = (lo + hi) / 2;
            if mid <= lo {
                break;
            }
            if v < self.v[mid] {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        let f = (v - self.v[lo]) / (self.v[lo + 1] - self.v[lo]);
        (lo, f.clamp(0.0, 1.0))
    }

    /// The grid value at (u, v): bilinear in the cell, as the library groups it.
    pub(crate) fn grid(&self, u: f64, v: f64) -> f64 {
        let (iu, fu) = self.u_cell(u);
        let (iv, fv) = self.v_cell(v);
        let nu = self.nu;
        let at = |iv: usize, iu: usize| self.z[iv * nu + iu] as f64;
        let z00 = at(iv, iu);
        let z10 = at(iv, iu + 1) - z00;
        let mut z01 = at(iv + 1, iu);
        let z11 = at(iv + 1, iu + 1) - (z10 + z01);
        z01 -= z00;
        (z11 * fv + z10) * fu + z01 * fv + z00
    }

    /// Elevation at (u, v): grid + reference line elevation + banking · v (v clamped
    /// to the grid for the banking).
    pub fn uv_to_z(&self, u: f64, v: f64) -> f64 {
        let mut z = self.grid(u, v);
        let (iu, fu) = self.u_cell(u);
        z += match &self.ref_z {
            Some(r) => r[iu] + fu * (r[iu + 1] - r[iu]),
            None => self.ref_z_const,
        };
        if self.has_bank {
            let b = match &self.bank {
                Some(b) => b[iu] + fu * (b[iu + 1] - b[iu]),
                None => self.bank_const,
            };
            z += b * v.clamp(self.v[0], self.v[self.v.len() - 1]);
        }
        z
    }

    /// The nearest of every tenth reference line point (and the last): where the
    /// library's search starts without a history.
    fn coarse_nearest(&self, px: f64, py: f64) -> usize {
        let (x, y, n) = (&self.x, &self.y, self.nu);
        let mut best = 0;
        let mut best_d = 0.0;
        let mut i = 0;
        loop {
            let (dx, dy) = (px - x[i], py - y[i]);
            let d2 = dx * dx + dy * dy;
            if d2 < best_d || i == 0 {
                best = i;
                best_d = d2;
            }
            if i + 10 < n {
                i += 10;
            } else if i < n - 1 {
                i = n - 1;
            } else {
                break;
            }
        }
        best
    }

    /// The reference point where a search without history starts.
    pub(crate) fn coarse_start(&self, px: f64, py: f64) -> usize {
        self.coarse_nearest(px, py)
    }

    /// (x, y) → (u, v): the reference line interval whose end normals enclose the
    /// point, found from the nearest of every tenth point (and the last); v is the
    /// signed distance from the interval's chord, u interpolates between the
    /// normals. Beyond either end the line continues straight.
    pub fn xy_to_uv(&self, px: f64, py: f64) -> (f64, f64) {
        self.xy_to_uv_from(px, py, self.coarse_nearest(px, py)).0
    }

    /// [`Crg::xy_to_uv`] starting from the interval of the previous call (`hint`,
    /// updated), as the library's contact point history: O(1) for a point that moves
    /// a little between calls, the same result as the full search. A point farther
    /// from the hint than the road is wide (plus ten increments) gets the full search.
    pub fn xy_to_uv_hinted(&self, px: f64, py: f64, hint: &mut usize) -> (f64, f64) {
        let h = (*hint).min(self.nu - 1);
        let reach = self.v[0].abs().max(self.v[self.v.len() - 1].abs()) + 10.0 * self.u_inc;
        let near = (px - self.x[h]).powi(2) + (py - self.y[h]).powi(2) < reach * reach;
        let start = if near { h } else { self.coarse_nearest(px, py) };
        let (uv, k) = self.xy_to_uv_from(px, py, start);
        *hint = k;
        uv
    }

    /// The search from reference point `best`; also returns the interval found.
    fn xy_to_uv_from(&self, px: f64, py: f64, best: usize) -> ((f64, f64), usize) {
        let (x, y, n) = (&self.x, &self.y, self.nu);
        let mut k = best.max(1);
        // Forward while the point lies ahead of the normal through point k.
        loop {
            let k1 = (k + 1).min(n - 1);
            let d = (px - x[k]) * (x[k1] - x[k - 1]) + (py - y[k]) * (y[k1] - y[k - 1]);
            if d > 0.0 && k < n - 1 {
                k += 1;
            } else {
                break;
            }
        }
        // Backward while it lies behind the normal through point k − 1.
        let (mut x0, mut x1, mut x2, mut y0, mut y1, mut y2, mut dprod);
        loop {
            let km2 = k.saturating_sub(2);
            (x0, x1, x2) = (x[km2], x[k - 1], x[k]);
            (y0, y1, y2) = (y[km2], y[k - 1], y[k]);
            dprod = (px - x1) * (x2 - x0) + (py - y1) * (y2 - y0);
            if dprod < 0.0 && k > 1 {
                k -= 1;
            } else {
                break;
            }
        }
        let (x2x1, y2y1) = (x2 - x1, y2 - y1);
        let (xxx1, yyy1) = (px - x1, py - y1);
        let mut v = (x2x1 * yyy1 - y2y1 * xxx1) / (x2x1 * x2x1 + y2y1 * y2y1).sqrt();
        let k1 = (k + 1).min(n - 1);
        let (x3x1, y3y1) = (x[k1] - x1, y[k1] - y1);
        let ta = dprod / ((x2 - x0) * x2x1 + (y2 - y0) * y2y1);
        let tb = (x3x1 * (x2 - px) + y3y1 * (y2 - py)) / (x3x1 * x2x1 + y3y1 * y2y1);
        let du = ta / (ta + tb) * self.u_inc;
        let mut u = (k - 1) as f64 * self.u_inc + du + self.u_first;
        if u < self.u_first {
            let (dx, dy) = (px - self.x_first, py - self.y_first);
            let (s, c) = self.phi_first.sin_cos();
            u = self.u_first + dx * c + dy * s;
            v = dy * c - dx * s;
        } else if u > self.u_last {
            let (dx, dy) = (px - self.x_last, py - self.y_last);
            let (s, c) = self.phi_last.sin_cos();
            u = self.u_last + dx * c + dy * s;
            v = dy * c - dx * s;
        }
        ((u, v), k)
    }

    /// Elevation at (x, y).
    pub fn xy_to_z(&self, x: f64, y: f64) -> f64 {
        let (u, v) = self.xy_to_uv(x, y);
        self.uv_to_z(u, v)
    }
}
