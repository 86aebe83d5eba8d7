//! Failure messages: which unknown, which element, which role made a bad number,
//! and the largest residual and correction of a rejected step. Cold paths only.

use super::*;

/// The failure path of a non-finite number: calls `role` of every element on `w` and
/// names the first one whose own output is not finite while its inputs are (if none,
/// the first with a non-finite output). `noqv` takes `IterNoqv` where a type has it.
/// Allocates the name; never called on a step that succeeds.
#[cold]
pub(super) fn find_culprit(
    types: &[ElementType],
    inst: &[Inst],
    s: &mut Scratch,
    w: &View,
    c: &Coefficients,
    role: Role,
    noqv: bool,
) -> Option<Culprit> {
    let finite = |x: &[f64]| x.iter().all(|a| a.is_finite());
    let mut fallback = None;
    for e in inst {
        let ty = &types[e.ty];
        let role = if noqv && role == Role::Iter && ty.role(Role::IterNoqv).is_some() {
            Role::IterNoqv
        } else {
            role
        };
        if !call(types, e, role, s, w, c) {
            continue;
        }
        let n = ty.role(role).map_or(0, |r| r.output_len());
        if finite(&s.out[..n]) {
            continue;
        }
        let culprit = Culprit {
            instance: e.name.clone(),
            role: role_label(role),
        };
        let inputs_finite = finite(&s.q[..ty.nq])
            && finite(&s.v[..ty.nv])
            && finite(&s.vd[..ty.nv])
            && finite(&s.l[..ty.nl])
            && finite(&s.d[..ty.nv])
            && w.t.is_finite();
        if inputs_finite {
            return Some(culprit);
        }
        fallback.get_or_insert(culprit);
    }
    fallback
}

impl System {
    /// A non-finite number at the initial conditions (accepted state), with the
    /// element whose `role` made it.
    #[cold]
    pub(super) fn ic_not_finite(
        &mut self,
        unknown: String,
        role: Role,
        c: &Coefficients,
    ) -> RuntimeError {
        let w = accepted_view!(self);
        let culprit = find_culprit(
            &self.table.types,
            &self.inst,
            &mut self.s,
            &w,
            c,
            role,
            false,
        );
        RuntimeError::NotFinite { unknown, culprit }
    }

    /// A non-finite number in the step to t_new: the element whose `role` made it at
    /// the trial state. A residual read from a non-finite configuration is blamed on
    /// the body update that made the configuration.
    #[cold]
    pub(super) fn trial_not_finite(
        &mut self,
        unknown: String,
        role: Role,
        c: &Coefficients,
        noqv: bool,
    ) -> SimErrorKind {
        let types = &self.table.types;
        let mut culprit = None;
        if !self.qt.iter().all(|a| a.is_finite()) {
            // `state` evaluates `Update` on the accepted q with the trial Δ.
            let w = trial_view!(self, &self.q);
            culprit = find_culprit(types, &self.inst, &mut self.s, &w, c, Role::Update, false);
        }
        if culprit.is_none() {
            let w = trial_view!(self, &self.qt);
            culprit = find_culprit(types, &self.inst, &mut self.s, &w, c, role, noqv);
        }
        SimErrorKind::NotFinite {
            unknown,
            t_trial: self.t_new,
            culprit,
        }
    }

    /// Instance names of the elements acting on global unknown `i` (its body or
    /// constraint owner and every element connected to it), for messages.
    pub(super) fn acting_on(&self, i: usize) -> Vec<String> {
        self.inst
            .iter()
            .filter(|e| e.x_map.contains(&i))
            .map(|e| e.name.clone())
            .collect()
    }

    /// The velocity dof with the largest last Newton correction, the elements acting
    /// on it and the time of the step (the cause of a rejected step).
    pub(super) fn largest_correction(&self) -> String {
        let i = (0..self.nv)
            .max_by(|&a, &b| self.dx[a].abs().total_cmp(&self.dx[b].abs()))
            .unwrap_or(0);
        match self.labels.get(i) {
            Some(label) if self.nv > 0 => format!(
                "; largest correction at {label} (elements acting on it: {}) in the step to t = {}",
                quoted(&self.acting_on(i)),
                self.t_new
            ),
            _ => format!(" in the step to t = {}", self.t_new),
        }
    }

    /// Column of a value index in the iteration matrix pattern.
    pub(super) fn jp_col_of(&self, pos: usize) -> usize {
        let j = self.jp.col_ptr.partition_point(|&c| c <= pos);
        j.saturating_sub(1).min(self.jp.n.saturating_sub(1))
    }

    pub(super) fn largest_residual(&self) -> &str {
        let i = (0..self.r.len())
            .max_by(|&a, &b| self.r[a].abs().total_cmp(&self.r[b].abs()))
            .unwrap_or(0);
        self.labels.get(i).map(String::as_str).unwrap_or("-")
    }

    pub(super) fn first_non_finite(&self, x: &[f64]) -> Option<String> {
        position_non_finite(x).map(|i| self.labels[i].clone())
    }
}

/// The index of the first entry of `x` that is not finite. Runs on every residual,
/// correction and iteration matrix, where all entries are finite: that case is tested
/// first by [`crate::linear::all_finite`]'s vectorized pass; an early-exit search
/// compares one entry at a time (≈ 3 % of the 64-rod chain's step on its matrix).
pub(super) fn position_non_finite(x: &[f64]) -> Option<usize> {
    if crate::linear::all_finite(x) {
        return None;
    }
    x.iter().position(|a| !a.is_finite())
}

#[cfg(test)]
mod tests {
    use super::position_non_finite;

    /// The lane test finds what a plain search finds: a NaN or an infinity inside the
    /// whole lanes or in the remainder, the first of two, none in finite data.
    #[test]
    fn the_lane_test_finds_the_first_non_finite_entry() {
        for len in [0, 1, 7, 8, 9, 64, 67] {
            let clean: Vec<f64> = (0..len).map(|i| (i as f64 - 3.5) * 1e300).collect();
            assert_eq!(position_non_finite(&clean), None, "len {len}");
            for at in 0..len {
                for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
                    let mut x = clean.clone();
                    x[at] = bad;
                    if at + 2 < len {
                        x[at + 2] = f64::NAN;
                    }
                    assert_eq!(position_non_finite(&x), Some(at), "len {len} at {at}");
                }
            }
        }
    }
}
