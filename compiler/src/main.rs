//! `fdc`: the command line of the fd compiler.
//!
//! Knows every compiler crate and the runtime; it wires them together and owns the
//! user-facing behaviour (exit codes, flags, progress, output files).

use clap::{Parser, Subcommand};
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
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Abi => {
            println!("{}", fdc_runtime::table::ABI_VERSION);
            ExitCode::SUCCESS
        }
    }
}
