//! `fdc build FILE.fd [--timings]`: compile without running.

use crate::run::{build_options, build_or_report, usage, CompileArgs};
use clap::Args;
use std::process::ExitCode;

#[derive(Args, Debug, Clone)]
pub struct BuildArgs {
    /// The model file (`.fd`).
    pub file: std::path::PathBuf,
    #[command(flatten)]
    pub compile: CompileArgs,
    /// Print the time of every phase in milliseconds.
    #[arg(long)]
    pub timings: bool,
}

pub fn run(a: &BuildArgs) -> ExitCode {
    if !a.file.is_file() {
        return usage(format!("cannot read `{}`", a.file.display()));
    }
    let opts = match build_options(&a.compile) {
        Ok(o) => o,
        Err(e) => return usage(e),
    };
    let built = match build_or_report(&a.file, &opts) {
        Ok(b) => b,
        Err(code) => return code,
    };
    for w in &built.warnings {
        eprint!("{w}");
    }
    if a.timings {
        let t = &built.timings;
        let b = &t.backend;
        // The phases of issue 4, in pipeline order; parse and check run as one pass.
        println!("parse+check     {:8.2} ms", t.parse_check);
        println!("lower+diff      {:8.2} ms", t.lower_diff);
        println!("simplify        {:8.2} ms", t.simplify);
        println!("llvm emit       {:8.2} ms", b.emit);
        println!("llvm optimize   {:8.2} ms", b.optimize);
        println!("jit/link        {:8.2} ms", b.jit_link());
        println!(
            "cache           {:8.2} ms ({})",
            b.cache,
            crate::run::cache_word(built.cache_hit, built.simplifier_skipped)
        );
        println!("total backend   {:8.2} ms", b.total);
        let n = &built.types;
        println!(
            "element types   {:8} ({} compiled, {} cached, {} of them unsimplified hits)",
            n.total(),
            n.compiled,
            n.cached,
            n.simplifier_skipped
        );
    }
    ExitCode::SUCCESS
}
