//! The `simulate` block onto the runtime's [`fdc_runtime::Settings`], and its
//! validation there: the runtime's `Settings::problems` is the one list of what a run
//! refuses, so `fdc check` and the language server report exactly what `fdc run` would,
//! each on the value of its key.

use super::*;
use fdc_runtime::{Form, LinearSolverKind, Newton};

/// A `simulate` setting the runtime refuses (docs/errors.md).
pub(crate) const E_SETTING: &str = "E0920";

fn form(word: &str) -> Result<Form, String> {
    match word {
        "arnold_bruls" | "arnold-bruls" => Ok(Form::ArnoldBruls),
        "negrut" => Ok(Form::Negrut),
        other => Err(format!("unknown HHT form `{other}` (arnold_bruls, negrut)")),
    }
}

fn linear(word: &str) -> Result<LinearSolverKind, String> {
    match word {
        "sparse" => Ok(LinearSolverKind::Sparse),
        "dense" => Ok(LinearSolverKind::Dense),
        other => Err(format!("unknown linear solver `{other}` (sparse, dense)")),
    }
}

impl Settings {
    /// The runtime's settings: the model's values, the runtime's defaults for the rest
    /// (`fdc_runtime::Settings::default`, their one home). Not validated yet.
    pub fn to_runtime(&self) -> Result<fdc_runtime::Settings, String> {
        let d = fdc_runtime::Settings::default();
        let step = self.step.unwrap_or(d.step);
        Ok(fdc_runtime::Settings {
            end: self.end.unwrap_or(d.end),
            step,
            output_every: self.output_every.unwrap_or(d.output_every),
            output_exact: self.output_exact.unwrap_or(d.output_exact),
            alpha: self.alpha.unwrap_or(d.alpha),
            rho_inf: self.rho_inf,
            form: match self.form.as_deref() {
                Some(w) => form(w)?,
                None => d.form,
            },
            newton: match self.newton {
                None => d.newton,
                Some(NewtonSetting::Velocity(tol)) => Newton::Velocity { tol },
                Some(NewtonSetting::Legacy) => Newton::Legacy,
                Some(NewtonSetting::Fixed(n)) => Newton::Fixed(n),
            },
            adaptive: self.adaptive,
            atol: self.atol,
            // The default floor never exceeds the step.
            step_min: self.step_min.unwrap_or(d.step_min.min(step)),
            step_max: self.step_max.unwrap_or(d.step_max),
            linear: match self.linear_solver.as_deref() {
                Some(w) => linear(w)?,
                None => d.linear,
            },
            assemble: self.assemble.unwrap_or(d.assemble),
            given: self.given.clone(),
            ..d
        })
    }

    /// Where `key` is written; `None` when the model does not set it.
    pub fn span_of(&self, key: &str) -> Option<Span> {
        self.spans.iter().rev().find(|(k, _)| k == key).map(|p| p.1)
    }
}

impl<'a> Lowering<'a> {
    /// Every setting the run would refuse, as an error on its value (or on the last
    /// `simulate` block when the value is a default that another setting contradicts).
    pub(super) fn check_settings(&mut self, s: &Settings, items: &[&Item]) {
        let Ok(rt) = s.to_runtime() else {
            return; // a bad word is already an error of `settings`
        };
        let block = items.iter().rev().find_map(|i| match i {
            Item::Simulate { span, .. } => Some(*span),
            _ => None,
        });
        for p in rt.problems() {
            let at = s.span_of(p.key);
            self.errors.push(LowerError {
                span: at.or(block),
                code: Some(E_SETTING),
                label: Some(match at {
                    Some(_) => "the run refuses this value".to_string(),
                    None => format!("the default of `{}` conflicts with this block", p.key),
                }),
                hint: Some(format!(
                    "docs/language.md §7 gives the range of `{}`",
                    p.key
                )),
                message: p.message,
                warning: false,
            });
        }
    }
}
