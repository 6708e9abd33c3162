//! envbench: how well will a database run in this environment, and how does it compare with that one?
//!
//! The binary is thin: it parses arguments, hands each workload to the one driver ([`driver`]), and runs the
//! commands that read results back. Measurement and each workload's methodology live in the workload crates, listed
//! once in [`registry`]; probing in `envbench-probe`, storage in `envbench-store`, presentation in `envbench-report`.

/// Standard error through the output boundary: every `eprintln!` in this crate is [`output::eprintln`], which makes the
/// text safe for the terminal and never panics when standard error is gone.
macro_rules! eprintln {
    ($($arg:tt)*) => {
        $crate::output::eprintln(&format!($($arg)*))
    };
}

mod cli;
mod commands;
mod driver;
mod files;
mod output;
mod registry;
mod session;

use envbench_core::workload::WorkloadError;
use envbench_store::StoreError;
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

/// The exit status an error ends envbench with: 2 for the user's mistakes, 130 for an interrupt, else 1.
fn exit_status(error: &anyhow::Error) -> u8 {
    if error.downcast_ref::<UsageError>().is_some() {
        2
    } else if let Some(workload) = error.downcast_ref::<WorkloadError>() {
        workload.exit_status()
    } else if let Some(
        StoreError::NotAFile { .. } | StoreError::UnsupportedScheme { .. } | StoreError::MalformedUrl { .. },
    ) = error.downcast_ref()
    {
        2
    } else {
        1
    }
}

/// After Rust's own panic message (which names the file and line of the panic), say what a backtrace needs: release
/// builds carry no line tables, so the backtrace's frames name functions only.
fn install_panic_note() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default(info);
        eprintln!(
            "envbench {}: this is a bug; please report it with the lines above. A backtrace (RUST_BACKTRACE=1) names \
             files and lines only in a build with line tables: a dev build (cargo build -p envbench), or a release \
             from bench/dist.sh with its envbench.debug beside the binary.",
            env!("CARGO_PKG_VERSION")
        );
    }));
}

fn main() -> ExitCode {
    install_panic_note();
    let matches = match cli::command().try_get_matches() {
        Ok(matches) => matches,
        // Help and version print and succeed; mistakes print clap's message and exit 2.
        Err(error) => error.exit(),
    };
    match commands::run(&matches) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("envbench: {}", output::error_text(&error));
            ExitCode::from(exit_status(&error))
        }
    }
}
