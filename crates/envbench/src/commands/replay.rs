//! `envbench replay`: your own workload from a server's log. `inspect` summarises a capture before anything runs.

use crate::cli::{InspectArgs, ReplayArgs, ReplayCommand};
use crate::output::println;
use crate::usage;
use envbench_replay::CaptureError;
use std::process::ExitCode;

pub fn replay(args: ReplayArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        ReplayCommand::Inspect(args) => inspect(args),
    }
}

/// A capture that cannot be read is the user's to fix (exit 2); a disk that fails while reading is not.
fn refused(error: CaptureError) -> anyhow::Error {
    match error {
        CaptureError::Io { ref source, .. } if source.kind() != std::io::ErrorKind::NotFound => error.into(),
        other => usage(other.to_string()),
    }
}

fn inspect(args: InspectArgs) -> anyhow::Result<ExitCode> {
    let mut reader = envbench_replay::open(&args.log).map_err(refused)?;
    let inspection = envbench_replay::inspect(reader.as_mut()).map_err(refused)?;
    let shown = args.log.display().to_string();
    if args.json {
        let mut value = serde_json::to_value(&inspection)?;
        value["log"] = serde_json::Value::String(shown);
        println(&serde_json::to_string_pretty(&value)?);
    } else {
        crate::output::print(&inspection.render(&shown));
    }
    Ok(ExitCode::SUCCESS)
}
