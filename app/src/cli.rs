//! Command-line parsing and dispatch.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Kiln: level editor and data compiler.
#[derive(Debug, Parser)]
#[command(name = "kiln", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compile levels into binary blobs under OUT/build/.
    Compile {
        /// The project folder (holding kiln.project).
        #[arg(long, default_value = ".")]
        project: PathBuf,
        /// Where to put build/ (default: the project folder).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Levels to compile, as project paths (levels/forest or levels/forest.level).
        /// Default: every level of the project.
        levels: Vec<String>,
    },
}

/// Exit status when everything worked.
pub const EXIT_OK: u8 = 0;
/// Exit status when the command ran but found problems (a level that did not compile).
pub const EXIT_FINDINGS: u8 = 1;
/// Exit status for usage and I/O errors.
pub const EXIT_ERROR: u8 = 2;

/// Parses the process arguments and runs the command.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { EXIT_ERROR } else { EXIT_OK });
        }
    };
    ExitCode::from(run(cli, &mut std::io::stdout()))
}

/// Runs a parsed command, printing to `out`; returns the exit status.
pub fn run(cli: Cli, out: &mut dyn std::io::Write) -> u8 {
    let result = match cli.command {
        Command::Compile {
            project,
            out: out_dir,
            levels,
        } => crate::compile_command::run(&project, out_dir.as_deref(), &levels, out),
    };
    match result {
        Ok(status) => status,
        Err(e) => {
            eprintln!("error: {e:#}");
            EXIT_ERROR
        }
    }
}
