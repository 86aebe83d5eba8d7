//! `fdc modes FILE.fd [--at T] [--set NAME=VALUE ...] [--json]`: the eigenmodes of the
//! model linearized about its initial state (or the state reached at `--at T`): a
//! table of frequency, damping ratio and the bodies with the largest share of kinetic
//! energy, or JSON.

use crate::run::{build_options, build_or_report, usage, CompileArgs};
use clap::Args;
use fdc_driver::settings::{runtime_settings, Overrides};
use fdc_runtime::{Linearization, ModeKind, ResultSink, System};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug, Clone)]
pub struct ModesArgs {
    /// The model file (`.fd`).
    pub file: PathBuf,
    #[command(flatten)]
    pub compile: CompileArgs,
    /// Linearize about the state at this time [s] (simulated with the model's
    /// settings); default: the initial state.
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    pub at: Option<f64>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Discards result rows: `--at` only needs the final state.
struct Discard;

impl ResultSink for Discard {
    fn header(&mut self, _: &[String]) {}
    fn row(&mut self, _: f64, _: &[f64]) {}
}

/// Bodies shown per mode in the table: at most this many, with at least 5 % each.
const SHOWN_BODIES: usize = 3;
const SHOWN_SHARE: f64 = 0.05;

fn kind_name(k: ModeKind) -> &'static str {
    match k {
        ModeKind::Oscillation => "oscillation",
        ModeKind::Real => "real",
        ModeKind::RigidBody => "rigid body",
    }
}

/// The table printed by `fdc modes`.
pub fn table(lin: &Linearization) -> String {
    let mut s = format!(
        "modes at t = {} s: {} dofs, {} constraints, {} degrees of freedom left\n",
        lin.t, lin.nv, lin.nl, lin.dofs
    );
    s.push_str(&format!(
        "{:>4}  {:>14}  {:>13}  {:<11}  {}\n",
        "#", "frequency [Hz]", "damping ratio", "kind", "bodies (share of kinetic energy)"
    ));
    for (i, m) in lin.modes.iter().enumerate() {
        let bodies: Vec<String> = m
            .energy
            .iter()
            .filter(|(_, e)| *e >= SHOWN_SHARE)
            .take(SHOWN_BODIES)
            .map(|(b, e)| format!("{b} {:.0}%", 100.0 * e))
            .collect();
        let zeta = match m.kind {
            ModeKind::RigidBody => "-".to_string(),
            // No "-0.0000" for an undamped mode.
            _ => format!(
                "{:.4}",
                if m.damping_ratio.abs() < 5e-5 {
                    0.0
                } else {
                    m.damping_ratio
                }
            ),
        };
        s.push_str(&format!(
            "{:>4}  {:>14.6}  {:>13}  {:<11}  {}\n",
            i + 1,
            m.frequency,
            zeta,
            kind_name(m.kind),
            bodies.join(", ")
        ));
    }
    if lin.modes.is_empty() {
        s.push_str("(no modes: the constraints leave no motion)\n");
    }
    s
}

/// The JSON document of `fdc modes --json`.
pub fn run(a: &ModesArgs) -> ExitCode {
    let file = &a.file;
    if !file.is_file() {
        return usage(format!("cannot read `{}`", file.display()));
    }
    if let Some(t) = a.at {
        if !(t.is_finite() && t >= 0.0) {
            return usage(format!("`--at {t}`: expected a time >= 0"));
        }
    }
    let opts = match build_options(&a.compile) {
        Ok(o) => o,
        Err(e) => return usage(e),
    };
    let built = match build_or_report(file, &opts) {
        Ok(b) => b,
        Err(code) => return code,
    };
    for w in &built.warnings {
        eprint!("{w}");
    }
    let mut settings = match runtime_settings(&built.settings, &Overrides::default()) {
        Ok(s) => s,
        Err(e) => return usage(e),
    };
    let mut sys = match System::new(built.model) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    if let Err(e) = sys.initialize(&settings) {
        eprintln!("error: {e}");
        return ExitCode::from(1);
    }
    for w in fdc_driver::report::warning_lines(&sys, true) {
        eprintln!("{w}");
    }
    if let Some(t) = a.at.filter(|&t| t > 0.0) {
        settings.end = t;
        if let Err(e) = sys.run(&settings, &mut Discard) {
            eprintln!("error: simulating to t = {t} s: {e}");
            return ExitCode::from(1);
        }
    }
    let lin = match sys.linearize() {
        Ok(l) => l,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    if a.json {
        println!("{:#}", fdc_driver::report::modes_json(&lin));
    } else {
        print!("{}", table(&lin));
    }
    ExitCode::SUCCESS
}
