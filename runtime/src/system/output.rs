//! Result rows and run statistics: the sink trait, the output channels of the accepted
//! state and the step-time statistics.

use super::*;

/// Receives result rows as they become available, so a failed run keeps its rows.
pub trait ResultSink {
    /// Channel names, `time` excluded (see [`System::channel_names`]).
    fn header(&mut self, names: &[String]);
    fn row(&mut self, t: f64, values: &[f64]);
}

/// A sink that keeps everything in memory (tests, small runs).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MemorySink {
    pub names: Vec<String>,
    pub times: Vec<f64>,
    pub rows: Vec<Vec<f64>>,
}

impl MemorySink {
    /// Values of the named channel over time, if it exists.
    pub fn channel(&self, name: &str) -> Option<Vec<f64>> {
        let i = self.names.iter().position(|n| n == name)?;
        Some(self.rows.iter().map(|r| r[i]).collect())
    }
}

impl ResultSink for MemorySink {
    fn header(&mut self, names: &[String]) {
        self.names = names.to_vec();
    }
    fn row(&mut self, t: f64, values: &[f64]) {
        self.times.push(t);
        self.rows.push(values.to_vec());
    }
}

/// Wall-clock time per accepted step, in seconds.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct TimingStats {
    pub steps: usize,
    pub min: f64,
    pub median: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

/// What a run (or the steps so far) did.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct RunStats {
    /// Time reached.
    pub t: f64,
    pub steps: usize,
    pub rejected: usize,
    pub newton_iterations: usize,
    pub residual_evaluations: usize,
    pub factorizations: usize,
    /// Factorizations that chose a new pivot order (the others kept the last one).
    pub full_factorizations: usize,
    /// Largest velocity change of the last Newton correction of a step, relative to
    /// 1 + ‖v‖∞ (what to monitor with fixed corrections).
    pub max_correction: f64,
    pub timing: Option<TimingStats>,
}

/// One accepted step of [`System::step`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepReport {
    pub t: f64,
    /// Substeps taken to cover the step (more than one after a rejection).
    pub substeps: usize,
    pub newton_iterations: usize,
    pub correction: f64,
}

/// Most steps whose wall-clock time is recorded with `Settings::timing`.
pub const MAX_TIMED_STEPS: usize = 1 << 20;

impl System {
    /// Evaluates the output channels at the accepted state into the row buffer.
    pub(super) fn outputs(&mut self) {
        self.outputs_from(false);
    }

    /// The output channels of the accepted state, or (`dense`) of the state
    /// interpolated for a row between steps.
    pub(super) fn outputs_from(&mut self, dense: bool) {
        let c = Coefficients::at_rest(self.h);
        let nv = self.nv;
        let q = if dense { &self.dense.q } else { &self.q };
        self.roads.feed(&mut self.inst, q);
        let w = &if dense {
            let d = &self.dense;
            View {
                q: &d.q,
                v: &d.v,
                vd: &d.x[..nv],
                lam: &d.x[nv..],
                delta: &self.zeros_v,
                t: d.t,
            }
        } else {
            accepted_view!(self)
        };
        let types = &self.table.types;
        let mut o = 0;
        for e in &self.inst {
            let ty = &types[e.ty];
            if !ty.outputs.is_empty() {
                call(types, e, Role::Out, &mut self.s, w, &c);
                self.row[o..o + ty.outputs.len()].copy_from_slice(&self.s.out[..ty.outputs.len()]);
                o += ty.outputs.len();
            }
            for &l in &e.lambda_map {
                self.row[o] = w.lam[l];
                o += 1;
            }
        }
        for (k, parts) in self.totals.iter().enumerate() {
            self.row[o + k] = parts.iter().map(|&i| self.row[i]).sum();
        }
        let o = o + self.totals.len();
        loads::fill(
            &self.loads,
            &self.inst,
            types,
            &mut self.s,
            w,
            &c,
            &mut self.row[o..],
        );
    }

    /// Current output values (channel order of [`System::channel_names`]).
    pub fn output_values(&mut self) -> &[f64] {
        self.outputs();
        &self.row
    }

    pub(super) fn final_stats(&self) -> RunStats {
        let mut s = self.stats.clone();
        s.full_factorizations = self.js.as_ref().map_or(0, |j| j.full_factorizations());
        if !self.step_times.is_empty() {
            let mut v = self.step_times.clone();
            v.sort_by(f64::total_cmp);
            let q = |p: f64| v[((p * (v.len() - 1) as f64).round() as usize).min(v.len() - 1)];
            s.timing = Some(TimingStats {
                steps: v.len(),
                min: v[0],
                median: q(0.5),
                p99: q(0.99),
                p999: q(0.999),
                max: v[v.len() - 1],
            });
        }
        s
    }

    /// Room for the step times up to `end` (at most [`MAX_TIMED_STEPS`]); steps beyond
    /// it are not timed rather than allocate during stepping.
    pub(super) fn reserve_timing(&mut self, settings: &Settings) {
        if settings.timing && self.step_times.capacity() == 0 {
            let n = (settings.end / settings.step)
                .ceil()
                .min(MAX_TIMED_STEPS as f64) as usize
                + 16;
            self.step_times.reserve_exact(n);
        }
    }
}
