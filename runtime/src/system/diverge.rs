//! Divergence: the accepted states growing without bound (theory §7: index-3 HHT
//! without numerical damping, or a step too large for the motion, lets a parasitic
//! mode grow geometrically). The runtime knows no energy, so it watches what grows in
//! every such blow-up: the velocities and the multipliers, each relative to its scale
//! at the start, 1 + ‖v₀‖∞ and 1 + ‖λ₀‖∞.

use super::*;

/// Growth over the start at which a failure of the step control (step below the
/// minimum, a singular matrix along the way) is reported as divergence: no motion of
/// a model started at rest reaches a thousand times its initial scales in a blow-up-free
/// way before the integrator fails on it.
pub const DIVERGED_AT_FAILURE: f64 = 1e3;
/// Growth that ends a run by itself: ten orders of magnitude over the start.
pub const DIVERGED_GROWTH: f64 = 1e10;
/// Growth above which a geometric rise (every accepted step at least
/// [`STREAK_RATIO`] times the one before, [`STREAK_STEPS`] times in a row) ends the run.
pub const STREAK_GROWTH: f64 = 1e4;
pub const STREAK_RATIO: f64 = 1.5;
pub const STREAK_STEPS: usize = 8;
/// The sustained rise: the envelope (largest growth) of every [`WINDOW`] accepted
/// steps, compared over spans of [`SPAN`] windows; the run ends when the envelope rose
/// by at least [`SPAN_RISE`] over each of the last [`SPANS`] spans and is above
/// [`DIVERGED_AT_FAILURE`]. An envelope, not the value: the multipliers of a slow
/// blow-up oscillate while they grow (the heavy top at ρ∞ = 0.95, h = 2 ms: ×1.2–2.1
/// per window), which the streak above never sees; several spans in a row, not one
/// ratio: a single spike (an impact, a whip) rises once and falls back.
pub const WINDOW: usize = 25;
pub const SPAN: usize = 4;
pub const SPANS: usize = 3;
pub const SPAN_RISE: f64 = 4.0;
/// Window envelopes kept: the current span ends and the starts of the spans before.
const ENVELOPES: usize = SPAN * SPANS + 1;

/// The watcher's state: the start scales, the last growth and the streak.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Monitor {
    pub floor_v: f64,
    pub floor_l: f64,
    pub last: f64,
    pub streak: usize,
    /// Largest growth and accepted steps of the current window.
    pub window_max: f64,
    pub window_steps: usize,
    /// Envelopes of the last [`ENVELOPES`] completed windows, the latest last (0: none
    /// yet).
    pub envelopes: [f64; ENVELOPES],
}

impl Monitor {
    /// Scales of the initial state.
    pub(super) fn start(v: &[f64], lam: &[f64]) -> Monitor {
        Monitor {
            floor_v: 1.0 + inf_norm(v),
            floor_l: 1.0 + inf_norm(lam),
            last: 1.0,
            streak: 0,
            window_max: 0.0,
            window_steps: 0,
            envelopes: [0.0; ENVELOPES],
        }
    }

    /// The unknown (v dof i, or multiplier nv + l) that grew most over its scale, and
    /// that growth.
    pub(super) fn growth(&self, v: &[f64], lam: &[f64]) -> (usize, f64) {
        let mut best = (0, 0.0);
        for (i, x) in v.iter().enumerate() {
            let g = x.abs() / self.floor_v;
            if g > best.1 || g.is_nan() {
                best = (i, g);
            }
        }
        for (l, x) in lam.iter().enumerate() {
            let g = x.abs() / self.floor_l;
            if g > best.1 || g.is_nan() {
                best = (v.len() + l, g);
            }
        }
        best
    }

    /// After an accepted step: the unknown and growth if the run diverged.
    pub(super) fn check(&mut self, v: &[f64], lam: &[f64]) -> Option<(usize, f64)> {
        let (i, g) = self.growth(v, lam);
        self.streak = if g >= STREAK_RATIO * self.last {
            self.streak + 1
        } else {
            0
        };
        self.last = g;
        let geometric = g > STREAK_GROWTH && self.streak >= STREAK_STEPS;
        (g.is_nan() || g > DIVERGED_GROWTH || geometric || self.sustained(g)).then_some((i, g))
    }

    /// Adds growth g of an accepted step to the window; at the end of a window, whether
    /// the envelope rose by [`SPAN_RISE`] over each of the last [`SPANS`] spans.
    fn sustained(&mut self, g: f64) -> bool {
        self.window_max = self.window_max.max(g);
        self.window_steps += 1;
        if self.window_steps < WINDOW {
            return false;
        }
        self.envelopes.rotate_left(1);
        self.envelopes[ENVELOPES - 1] = self.window_max;
        self.window_max = 0.0;
        self.window_steps = 0;
        let e = &self.envelopes;
        e[ENVELOPES - 1] > DIVERGED_AT_FAILURE
            && e[0] > 0.0
            && (0..SPANS).all(|k| e[(k + 1) * SPAN] >= SPAN_RISE * e[k * SPAN])
    }
}

impl System {
    /// The divergence error for unknown `i` grown by `growth`; `cause` is the failure
    /// of the step control that revealed it, if any.
    pub(super) fn diverged(&self, i: usize, growth: f64, cause: Option<String>) -> SimErrorKind {
        SimErrorKind::Diverged {
            unknown: self.labels[i].clone(),
            elements: self.acting_on(i),
            growth,
            cause,
        }
    }

    /// A failure of the step control (`kind`), reported as divergence when the state
    /// has grown by [`DIVERGED_AT_FAILURE`] over its start.
    pub(super) fn or_diverged(&self, kind: SimErrorKind) -> SimErrorKind {
        let (i, g) = self.monitor.growth(&self.v, &self.lam);
        if (g > DIVERGED_AT_FAILURE || g.is_nan()) && !self.labels.is_empty() {
            return self.diverged(i, g, Some(kind.to_string()));
        }
        kind
    }
}
