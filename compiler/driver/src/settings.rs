//! The `simulate` block of a model (as lowered) onto the runtime's settings, with the
//! command line's overrides applied on top.

use fdc_lower::NewtonSetting;
use fdc_runtime::{Form, LinearSolverKind, Newton, Settings};

/// What the command line may override; `None` keeps the model's value.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    pub end: Option<f64>,
    pub step: Option<f64>,
    pub output_every: Option<f64>,
    pub alpha: Option<f64>,
    pub rho_inf: Option<f64>,
    pub form: Option<String>,
    pub newton: Option<NewtonSetting>,
    pub adaptive: Option<f64>,
    pub atol: Option<f64>,
    pub linear: Option<String>,
    pub timing: bool,
    /// `--assemble true|false`.
    pub assemble: Option<bool>,
}

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

/// Parses `velocity:TOL`, `velocity`, `legacy` or `fixed:N` (the `--newton` flag).
pub fn parse_newton(s: &str) -> Result<NewtonSetting, String> {
    let (kind, arg) = s.split_once(':').unwrap_or((s, ""));
    match (kind, arg) {
        ("velocity", "") => Ok(NewtonSetting::Velocity(fdc_runtime::settings::NEWTON_TOL)),
        ("velocity", tol) => tol
            .parse()
            .map(NewtonSetting::Velocity)
            .map_err(|_| format!("`{tol}` is not a tolerance")),
        ("legacy", "") => Ok(NewtonSetting::Legacy),
        ("fixed", n) => match n.parse::<usize>() {
            Ok(n) if n >= 1 => Ok(NewtonSetting::Fixed(n)),
            _ => Err(format!("`fixed:{n}` needs a count of at least 1")),
        },
        _ => Err(format!("`{s}`: use velocity:TOL, legacy or fixed:N")),
    }
}

/// Model settings, then overrides; the result is validated by the runtime.
pub fn runtime_settings(model: &fdc_lower::Settings, o: &Overrides) -> Result<Settings, String> {
    let d = Settings::default();
    let end = o.end.or(model.end).unwrap_or(d.end);
    let step = o.step.or(model.step).unwrap_or(d.step);
    let newton = match o.newton.or(model.newton) {
        None => d.newton,
        Some(NewtonSetting::Velocity(tol)) => Newton::Velocity { tol },
        Some(NewtonSetting::Legacy) => Newton::Legacy,
        Some(NewtonSetting::Fixed(n)) => Newton::Fixed(n),
    };
    // One damping: a flag replaces the model's (either key); two flags are an error.
    let (alpha, rho_inf) = match (o.alpha, o.rho_inf) {
        (Some(_), Some(_)) => {
            return Err("--alpha and --rho-inf both set the numerical damping: keep one".into())
        }
        (Some(a), None) => (a, None),
        (None, Some(r)) => (d.alpha, Some(r)),
        (None, None) => (model.alpha.unwrap_or(d.alpha), model.rho_inf),
    };
    let s = Settings {
        end,
        step,
        output_every: o
            .output_every
            .or(model.output_every)
            .unwrap_or(d.output_every),
        output_exact: model.output_exact.unwrap_or(d.output_exact),
        alpha,
        rho_inf,
        form: match o.form.as_deref().or(model.form.as_deref()) {
            Some(w) => form(w)?,
            None => d.form,
        },
        newton,
        adaptive: o.adaptive.or(model.adaptive),
        atol: o.atol.or(model.atol),
        step_min: model.step_min.unwrap_or(d.step_min.min(step)),
        step_max: model.step_max.unwrap_or(d.step_max),
        linear: match o.linear.as_deref().or(model.linear_solver.as_deref()) {
            Some(w) => linear(w)?,
            None => d.linear,
        },
        timing: o.timing,
        assemble: o.assemble.or(model.assemble).unwrap_or(d.assemble),
        given: model.given.clone(),
        ..d.clone()
    };
    s.validate()?;
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A model without settings and no flags runs with the runtime's defaults: one
    /// home for them (`Settings::default`), none hard-coded here.
    #[test]
    fn no_settings_means_the_runtime_defaults() {
        let s = runtime_settings(&fdc_lower::Settings::default(), &Overrides::default()).unwrap();
        assert_eq!(s, Settings::default());
        let v = parse_newton("velocity").unwrap();
        assert!(
            matches!((v, Settings::default().newton), (NewtonSetting::Velocity(a), Newton::Velocity { tol: b }) if a == b)
        );
    }

    /// One numerical damping: `rho_inf` or `alpha`, a flag replacing the model's.
    #[test]
    fn one_damping_from_the_model_or_a_flag_never_two_flags() {
        let model = fdc_lower::Settings {
            alpha: Some(-0.1),
            atol: Some(1e-9),
            ..Default::default()
        };
        let s = runtime_settings(&model, &Overrides::default()).unwrap();
        assert_eq!((s.alpha, s.rho_inf, s.atol), (-0.1, None, Some(1e-9)));
        let flag = Overrides {
            rho_inf: Some(0.8),
            ..Default::default()
        };
        let s = runtime_settings(&model, &flag).unwrap();
        assert_eq!((s.alpha, s.rho_inf), (Settings::default().alpha, Some(0.8)));
        let model_rho = fdc_lower::Settings {
            rho_inf: Some(0.7),
            ..Default::default()
        };
        let flag = Overrides {
            alpha: Some(-0.2),
            ..Default::default()
        };
        let s = runtime_settings(&model_rho, &flag).unwrap();
        assert_eq!((s.alpha, s.rho_inf), (-0.2, None));
        let both = Overrides {
            alpha: Some(-0.2),
            rho_inf: Some(0.8),
            ..Default::default()
        };
        let e = runtime_settings(&model_rho, &both).unwrap_err();
        assert!(e.contains("keep one"), "{e}");
        let bad = fdc_lower::Settings {
            rho_inf: Some(1.2),
            ..Default::default()
        };
        let e = runtime_settings(&bad, &Overrides::default()).unwrap_err();
        assert!(e.contains("rho_inf 1.2 must lie in [0, 1]"), "{e}");
    }

    /// docs/language.md §7 lists the values of `Settings::defaults_help`.
    #[test]
    fn the_documented_defaults_are_the_runtime_defaults() {
        let doc = include_str!("../../../docs/language.md");
        let help = Settings::defaults_help();
        for line in help.lines().skip(1) {
            let mut w = line.split_whitespace();
            let (key, value) = (w.next().unwrap(), w.next().unwrap());
            let row = doc
                .lines()
                .find(|l| l.starts_with(&format!("| `{key}` |")))
                // A runtime setting without a `simulate` key is stated in a sentence.
                .or_else(|| doc.lines().find(|l| l.contains(&format!("`{key}` ="))))
                .unwrap_or_else(|| panic!("docs/language.md §7 has no row for `{key}`"));
            assert!(
                row.contains(&format!("`{value}`")),
                "docs/language.md §7 row of `{key}` does not give the default `{value}`: {row}"
            );
        }
    }
}
