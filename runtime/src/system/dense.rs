//! Result rows between accepted steps (dense output): the state at an output time
//! inside the step t_n → t_n + h, interpolated with the step's own cubic.
//!
//! Δ(θ), θ = s/h ∈ [0, 1], is the cubic Hermite interpolant of the increment with
//! Δ(0) = 0, Δ′(0) = v_n, Δ(1) = Δ (the step's Newmark increment) and Δ′(1) = v_{n+1};
//! the configuration is q_n ∘ exp(Δ(θ)) through the `Update` role (on the group for
//! rotations), the velocities are Δ′(θ), v̇ and λ are linear in θ. At θ = 1 it is the
//! accepted state; its error is O(h³) in q and v (h⁴ in flat space), the order of the
//! local error of the step, so rows between steps are as accurate as rows at steps.

use super::*;

/// The interpolated state and the output grid.
pub(super) struct Dense {
    pub q: Vec<f64>,
    pub v: Vec<f64>,
    delta: Vec<f64>,
    /// [v̇; λ].
    pub x: Vec<f64>,
    pub t: f64,
    /// Rows at k·every for the next k; every = 0: no interpolated rows.
    pub every: f64,
    pub k: u64,
}

impl Dense {
    pub fn new(nq: usize, nv: usize, nx: usize) -> Dense {
        Dense {
            q: vec![0.0; nq],
            v: vec![0.0; nv],
            delta: vec![0.0; nv],
            x: vec![0.0; nx],
            t: 0.0,
            every: 0.0,
            k: 0,
        }
    }

    /// The next output time.
    pub fn next(&self) -> f64 {
        self.k as f64 * self.every
    }
}

impl System {
    /// Writes the rows of the output times in (t_n, t_n + h] from the accepted state
    /// n and the converged trial state of the step of size h (before `accept`).
    pub(super) fn dense_rows(&mut self, settings: &Settings, h: f64, sink: &mut dyn ResultSink) {
        if self.dense.every <= 0.0 {
            return;
        }
        // A row at the end of the step is written from the accepted state (after
        // `Post`, see `dense_row_at_step`).
        let t_end = self.t_new - 1e-12 * self.t_new.abs().max(1.0);
        while self.dense.next() < t_end && self.dense.next() <= settings.end {
            let t_out = self.dense.next();
            let theta = ((t_out - self.t) / h).clamp(0.0, 1.0);
            self.interpolate(settings, h, theta);
            self.dense.t = t_out;
            self.outputs_from(true);
            sink.row(t_out, &self.row);
            self.dense.k += 1;
        }
    }

    /// The row of an output time that the accepted step reached (to round-off).
    pub(super) fn dense_row_at_step(&mut self, sink: &mut dyn ResultSink) {
        if self.dense.every <= 0.0 {
            return;
        }
        if (self.dense.next() - self.t).abs() <= 1e-12 * self.t.abs().max(1.0) {
            self.outputs();
            sink.row(self.dense.next(), &self.row);
            self.dense.k += 1;
        }
    }

    /// The state at t_n + θh into `self.dense`.
    fn interpolate(&mut self, settings: &Settings, h: f64, theta: f64) {
        let (t2, t3) = (theta * theta, theta * theta * theta);
        // Hermite basis for Δ and its derivative (× h).
        let (b10, b01, b11) = (t3 - 2.0 * t2 + theta, -2.0 * t3 + 3.0 * t2, t3 - t2);
        let (d10, d01, d11) = (
            3.0 * t2 - 4.0 * theta + 1.0,
            6.0 * theta - 6.0 * t2,
            3.0 * t2 - 2.0 * theta,
        );
        let nv = self.nv;
        for i in 0..nv {
            let (v0, v1, dl) = (self.v[i], self.vt[i], self.delta[i]);
            self.dense.delta[i] = b10 * h * v0 + b01 * dl + b11 * h * v1;
            self.dense.v[i] = d10 * v0 + d01 * dl / h + d11 * v1;
            self.dense.x[i] = (1.0 - theta) * self.vd[i] + theta * self.x[i];
        }
        for l in 0..self.nl {
            self.dense.x[nv + l] = (1.0 - theta) * self.lam[l] + theta * self.x[nv + l];
        }
        let c = self.coefficients(settings, h);
        let w = View {
            q: &self.q,
            v: &self.dense.v,
            vd: &self.dense.x[..nv],
            lam: &self.dense.x[nv..],
            delta: &self.dense.delta,
            t: self.t + theta * h,
        };
        let (types, q_out) = (&self.table.types, &mut self.dense.q);
        update_bodies(types, &self.inst, &mut self.s, &w, &c, q_out);
    }
}
