//! `fdc import FILE.fds [-o FILE.fd] [--profile legacy|v2]`: writes a legacy FreeDyn
//! model as fd source text (stdout without `-o`). Exit codes as `fdc check`.

use crate::run::usage;
use clap::Args;
use fdc_driver::fds::{import_file, ImportError};
use fdc_driver::profile::Profile;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The legacy model (`.fds`).
    pub file: PathBuf,
    /// Where to write the fd model; default: standard output (table paths then assume
    /// the fd file is saved next to the `.fds` file).
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// `legacy` (Euler-parameter bodies, Negrut form, legacy Newton; default) or `v2`.
    #[arg(long, default_value = "legacy")]
    pub profile: String,
}

pub fn run(a: &ImportArgs) -> ExitCode {
    let profile = match Profile::parse(&a.profile) {
        Ok(p) => p,
        Err(e) => return usage(e),
    };
    let fd_dir = a.output.as_ref().map(|o| match o.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    });
    let imported = match import_file(&a.file, profile, fd_dir.as_deref()) {
        Ok(i) => i,
        Err(ImportError::Io(e)) => return usage(e),
        Err(ImportError::Model { files, diagnostics }) => {
            for d in &diagnostics {
                eprint!("{}", d.render(&files));
            }
            return ExitCode::from(1);
        }
    };
    match &a.output {
        None => print!("{}", imported.fd),
        Some(o) => {
            if let Err(e) = std::fs::write(o, &imported.fd) {
                return usage(format!("cannot write `{}`: {e}", o.display()));
            }
        }
    }
    let x = &imported.extras;
    if x.iter_noqv || x.max_newton_iterations != 10 {
        eprintln!(
            "note: the file asks for {} Newton iterations{}; only a direct `fdc {}` run \
             applies that (no `simulate` key carries it)",
            x.max_newton_iterations,
            if x.iter_noqv {
                " and a Newton matrix without gyroscopic derivatives"
            } else {
                ""
            },
            a.file.display()
        );
    }
    ExitCode::SUCCESS
}
