//! `fdc ir FILE.fd`: print the IR of the roles of the element types a model uses.

use crate::run::usage;
use clap::Args;
use fdc_driver::pipeline::{front, render, role_funcs, simplify_all, BuildError};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Args, Debug, Clone)]
pub struct IrArgs {
    /// The model file (`.fd`).
    pub file: PathBuf,
    /// Only this element type (as printed, e.g. `transfix_bb[bg]`).
    #[arg(long)]
    pub element: Option<String>,
    /// Only this role (res, iter, iter_noqv, ic, init, update, scale, out, post).
    #[arg(long)]
    pub role: Option<String>,
    /// Print the IR as derived, without the e-graph simplifier.
    #[arg(long)]
    pub no_simplify: bool,
    /// Print operation counts per role (before/after simplification) instead of IR.
    #[arg(long)]
    pub stats: bool,
}

pub fn run(a: &IrArgs) -> ExitCode {
    if !a.file.is_file() {
        return usage(format!("cannot read `{}`", a.file.display()));
    }
    let f = match front(&a.file, &[]) {
        Ok(f) => f,
        Err(BuildError::Model { analysis, extra }) => {
            eprint!("{}", render(&analysis, &extra));
            return ExitCode::from(1);
        }
        Err(BuildError::Backend(e) | BuildError::Usage(e)) => return usage(e),
    };
    let selected: Vec<_> = role_funcs(&f.lowered)
        .into_iter()
        .filter(|func| {
            let (ty, role) = func.name.rsplit_once("::").unwrap_or((&func.name, ""));
            a.element.as_deref().is_none_or(|e| e == ty)
                && a.role.as_deref().is_none_or(|r| r == role)
        })
        .collect();
    if selected.is_empty() {
        let names: Vec<&str> = f.lowered.types.iter().map(|t| t.name.as_str()).collect();
        return usage(format!(
            "no role matches; element types of this model: {}",
            names.join(", ")
        ));
    }
    let before = selected.clone();
    let t = Instant::now();
    let (graph, funcs, reports) = if a.no_simplify && !a.stats {
        (f.lowered.graph.clone(), selected, vec![])
    } else {
        simplify_all(&f.lowered.graph, selected)
    };
    let simplify_ms = t.elapsed().as_secs_f64() * 1e3;
    if a.stats {
        println!(
            "{:<40} {:>8} {:>8} {:>8}  simplifier",
            "role", "ops", "simpl.", "outputs"
        );
        for ((b, s), r) in before.iter().zip(&funcs).zip(&reports) {
            let ob = fdc_ir::stats::func_stats(&f.lowered.graph, b);
            let os = fdc_ir::stats::func_stats(&graph, s);
            println!(
                "{:<40} {:>8} {:>8} {:>8}  {}",
                b.name,
                ob.total,
                os.total,
                b.outputs.len(),
                r.stop
            );
        }
        println!(
            "lower+differentiate {:.1} ms, simplify {:.1} ms",
            f.lower_diff, simplify_ms
        );
        return ExitCode::SUCCESS;
    }
    let mut text = String::new();
    for func in &funcs {
        text.push_str(&fdc_ir::print::print_func(&graph, func));
        text.push('\n');
    }
    // A closed pipe (`fdc ir ... | head`) is not an error worth a message.
    let _ = std::io::Write::write_all(&mut std::io::stdout().lock(), text.as_bytes());
    ExitCode::SUCCESS
}
