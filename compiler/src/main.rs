//! `fdc`: the command line of the fd compiler.
//!
//! Knows every compiler crate and the runtime; it wires them together and owns the
//! user-facing behaviour (exit codes, flags, progress, output files). Each subcommand
//! lives in its own module; this file only dispatches.

mod build_cmd;
mod check;
mod import_cmd;
mod ir_cmd;
mod modes;
mod plot;
mod run;
mod stop;
mod sweep_cmd;
mod view;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "fdc",
    version,
    about = "Compiler for multibody dynamics models"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// `fdc FILE.fd [flags]` means `fdc run FILE.fd [flags]`: insert `run` when the first
/// argument is neither a subcommand nor a flag.
fn with_default_command(mut args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    use clap::CommandFactory;
    if let Some(first) = args.get(1).and_then(|a| a.to_str()) {
        let cmd = Cli::command();
        let known = cmd
            .get_subcommands()
            .any(|c| c.get_name() == first || c.get_all_aliases().any(|a| a == first));
        if !known && !first.starts_with('-') && first != "help" {
            args.insert(1, "run".into());
        }
    }
    args
}

#[derive(Subcommand)]
enum Command {
    /// Run the language server on stdin/stdout (for editors; see docs/editors.md).
    Lsp,
    /// Compile and simulate a model; write the results as CSV (also `fdc FILE.fd`).
    #[command(after_help = fdc_runtime::Settings::defaults_help())]
    Run(Box<run::RunArgs>),
    /// Compile a model without running it (`--timings` prints every phase).
    Build(Box<build_cmd::BuildArgs>),
    /// Print the IR of the roles of the element types a model uses.
    Ir(ir_cmd::IrArgs),
    /// Eigenmodes of the model linearized about its initial state (or `--at T`).
    Modes(modes::ModesArgs),
    /// Run a model for many parameter sets in parallel (`--set k=1,2,4 --set c=0:1:5`).
    Sweep(Box<sweep_cmd::SweepArgs>),
    /// Plot result channels over time into an SVG file.
    Plot(plot::PlotArgs),
    /// Show a model in the browser: 3-D scene, playback, plots (see docs/viewer.md).
    View(Box<view::ViewArgs>),
    /// Write a legacy FreeDyn model (`.fds`) as an fd model (see docs/fds.md).
    Import(import_cmd::ImportArgs),
    /// Print the ABI version of the element function table this build speaks.
    Abi,
    /// Check a model: exit 0 if valid, 1 with diagnostics on stderr if not, 2 on I/O error.
    Check {
        /// The model file (`.fd`, or a legacy `.fds`).
        file: PathBuf,
        /// How to print diagnostics.
        #[arg(long, value_enum, default_value = "human")]
        message_format: check::MessageFormat,
    },
}

/// `--message-format json` was asked for: then even a usage error is JSON.
fn wants_json(args: &[std::ffi::OsString]) -> bool {
    args.iter().any(|a| a == "--message-format=json")
        || args
            .windows(2)
            .any(|w| w[0] == "--message-format" && w[1] == "json")
}

fn main() {
    let args = with_default_command(std::env::args_os().collect());
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() && wants_json(&args) => {
            // The shape of a diagnostic without a place (see `fdc_driver::report::diagnostic_json`).
            let d = serde_json::json!({
                "severity": "error",
                "code": "usage",
                "message": e.to_string().trim_end(),
                "primary": null,
                "secondary": [],
                "notes": [],
            });
            eprintln!("{d}");
            end_process(ExitCode::from(2));
        }
        Err(e) => {
            // Help, version and usage errors: printed and with the status clap's
            // `exit` would give, without the teardown (`end_process`).
            let _ = e.print();
            end_process(ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2)))
        }
    };
    if !matches!(cli.command, Command::View(_)) {
        stop::end_quietly_on_closed_pipe();
    }
    let code = match cli.command {
        Command::Run(args) => run::run(&args),
        Command::Build(args) => build_cmd::run(&args),
        Command::Ir(args) => ir_cmd::run(&args),
        Command::Plot(args) => plot::run(&args),
        Command::Sweep(args) => sweep_cmd::run(&args),
        Command::Modes(args) => modes::run(&args),
        Command::View(args) => view::run(&args),
        Command::Import(args) => import_cmd::run(&args),
        Command::Lsp => fdc_lsp::run_stdio(),
        Command::Abi => {
            println!("{}", fdc_runtime::table::ABI_VERSION);
            ExitCode::SUCCESS
        }
        Command::Check {
            file,
            message_format,
        } => check::run(&file, message_format),
    };
    end_process(code)
}

/// Ends the process at once, skipping the C++ teardown of the statically linked LLVM
/// (the destructors of its thousands of global option objects and registries, run by
/// `exit` after `main`), which a short run such as a warm build would otherwise pay
/// at every exit (docs/performance.md, "Start-up and exit"). Safe here: every command
/// has returned, so its files are written and closed (their writers were dropped) and
/// its threads joined — a tiered run waited for the optimizing build to fill the cache
/// (`run::finish_tier`); the one buffer left is stdout's, flushed first. stderr is
/// unbuffered. The exit status is the command's.
fn end_process(code: ExitCode) -> ! {
    use std::io::Write;
    // A closed stdout already ended the process (SIGPIPE) or has nothing to flush into.
    let _ = std::io::stdout().flush();
    // `ExitCode` does not say its number on stable Rust; it compares equal to the
    // `ExitCode::from` of it.
    let status = (0..=u8::MAX)
        .find(|&c| ExitCode::from(c) == code)
        .map_or(1, i32::from);
    // SAFETY: `_exit` ends the process without running anything of it; nothing is
    // left to run that must (see above).
    unsafe { libc::_exit(status) }
}
