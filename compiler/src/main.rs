//! `fdc`: the command line of the fd compiler.
//!
//! Knows every compiler crate and the runtime; it wires them together and owns the
//! user-facing behaviour (exit codes, flags, progress, output files). Each subcommand
//! lives in its own module; this file only dispatches.

mod check;

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

#[derive(Subcommand)]
enum Command {
    /// Print the ABI version of the element function table this build speaks.
    Abi,
    /// Check a model: exit 0 if valid, 1 with diagnostics on stderr if not, 2 on I/O error.
    Check {
        /// The model file (`.fd`).
        file: PathBuf,
        /// How to print diagnostics.
        #[arg(long, value_enum, default_value = "human")]
        message_format: check::MessageFormat,
    },
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Abi => {
            println!("{}", fdc_runtime::table::ABI_VERSION);
            ExitCode::SUCCESS
        }
        Command::Check {
            file,
            message_format,
        } => check::run(&file, message_format),
    }
}
