//! `fdc view FILE.fd [--port P] [--export out.html]`: the model in the browser (see
//! docs/viewer.md and the `fdc-viewer` crate).

use crate::run::{build_options, usage, CompileArgs};
use clap::Args;
use fdc_viewer::{Server, Session, SessionOptions};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug, Clone)]
pub struct ViewArgs {
    /// The model file (`.fd`), or a result file (`.csv`) with `--model`.
    pub file: PathBuf,
    /// The model of a result file given as FILE: its scene, parameters and re-runs.
    #[arg(long, value_name = "FILE.fd")]
    pub model: Option<PathBuf>,
    #[command(flatten)]
    pub compile: CompileArgs,
    /// Port on 127.0.0.1 (0: any free port).
    #[arg(long, default_value_t = 8017)]
    pub port: u16,
    /// Write one self-contained HTML file (scene, results, scripts) and exit.
    #[arg(long, value_name = "OUT.html")]
    pub export: Option<PathBuf>,
}

pub fn run(a: &ViewArgs) -> ExitCode {
    if !a.file.is_file() {
        return usage(format!("cannot read `{}`", a.file.display()));
    }
    let is_csv = a.file.extension().is_some_and(|e| e == "csv");
    let mut opts = match (&a.model, is_csv) {
        (Some(m), true) => SessionOptions {
            results: Some(a.file.clone()),
            ..SessionOptions::new(m)
        },
        (None, true) => return usage("a result file needs its model: --model FILE.fd"),
        (Some(_), false) => return usage("--model goes with a result file (FILE.csv)"),
        (None, false) => SessionOptions::new(&a.file),
    };
    if !opts.model.is_file() {
        return usage(format!("cannot read `{}`", opts.model.display()));
    }
    opts.build = match build_options(&a.compile) {
        Ok(o) => o,
        Err(e) => return usage(e),
    };
    if let Some(out) = &a.export {
        let state = Session::run_once(&opts);
        if let Some(d) = &state.diagnostics {
            eprint!("{d}");
            return ExitCode::from(1);
        }
        if let Err(e) = std::fs::write(out, fdc_viewer::export_html(&state)) {
            return usage(format!("cannot write `{}`: {e}", out.display()));
        }
        let failed = state.runs.iter().find_map(|r| r.error.as_ref());
        if let Some(e) = failed {
            eprintln!("error: {e}\nthe rows so far are in {}", out.display());
            return ExitCode::from(1);
        }
        eprintln!("exported: {}", out.display());
        return ExitCode::SUCCESS;
    }
    let server = match Server::start(opts, a.port) {
        Ok(s) => s,
        Err(e) => return usage(e),
    };
    eprintln!(
        "fdc view: http://127.0.0.1:{}/ (Ctrl-C ends it)",
        server.port()
    );
    server.serve();
    ExitCode::SUCCESS
}
