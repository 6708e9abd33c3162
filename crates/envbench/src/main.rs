//! envbench: how well will a database run in this environment, and how does it compare with that one?
//!
//! The binary is thin: it parses arguments, wires the library crates together and prints. Measurement lives in the
//! workload crates, probing in `envbench-probe`, storage in `envbench-store`.

mod cli;
mod commands;
mod output;
mod session;
mod workloads;

use clap::Parser;
use std::process::ExitCode;

/// A mistake in how envbench was called: reported without a backtrace, exit code 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Shorthand for returning a usage error.
pub fn usage(message: impl Into<String>) -> anyhow::Error {
    UsageError(message.into()).into()
}

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    match commands::run(cli) {
        Ok(code) => code,
        Err(error) => {
            let code = if error.downcast_ref::<UsageError>().is_some() { 2 } else { 1 };
            eprintln!("envbench: {}", output::error_chain(&error));
            ExitCode::from(code)
        }
    }
}
