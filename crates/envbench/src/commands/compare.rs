//! `envbench compare`, `report`, `serve` and `push`: the answers practitioners take to IT, and the shared store.

use crate::cli::{CompareArgs, PushArgs, ReportArgs, ServeArgs};
use crate::commands::{location, store};
use crate::files::OutputFile;
use crate::output::print;
use crate::registry::WORKLOADS;
use crate::usage;
use envbench_core::RunStatus;
use envbench_report::{Format, ReportError};
use envbench_store::{RunFilter, StoreLocation, push_runs};
use std::process::ExitCode;

/// Side-resolution mistakes are the user's: exit 2.
fn classify(error: ReportError) -> anyhow::Error {
    match error {
        ReportError::BadSide(_)
        | ReportError::EmptySide(_)
        | ReportError::AmbiguousSide(_)
        | ReportError::TooFewSides(_) => usage(error.to_string()),
        other => other.into(),
    }
}

pub fn compare(location: &StoreLocation, args: CompareArgs) -> anyhow::Result<ExitCode> {
    let store = store(location, false)?;
    let sides = envbench_report::resolve_sides(store.as_ref(), &args.sides).map_err(classify)?;
    let format = if args.json {
        Format::Json
    } else if args.markdown {
        Format::Markdown
    } else {
        Format::Text
    };
    let comparison = envbench_report::compare(&sides, &WORKLOADS);
    print(&envbench_report::render(&comparison, format));
    // Runs with results but none the other side has: nothing was compared, which must not read as "no change".
    if comparison.rows.is_empty() && !comparison.unmatched.is_empty() {
        let workloads: std::collections::BTreeSet<&str> =
            comparison.unmatched.iter().map(|u| u.workload.as_str()).collect();
        if let Some(modes) = comparison.unmatched.iter().find(|u| u.is_other_mode()) {
            anyhow::bail!(
                "the sides have no result in common: {} results are in {}; compare runs measured in one mode",
                modes.workload,
                modes.reason
            );
        }
        anyhow::bail!(
            "the sides have no result in common ({} result{} of {} on one side only); compare runs of the same \
             workload, test and parameters",
            comparison.unmatched.len(),
            if comparison.unmatched.len() == 1 { "" } else { "s" },
            workloads.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub fn report(location: &StoreLocation, args: ReportArgs) -> anyhow::Result<ExitCode> {
    let output = OutputFile::check(&args.output, "-o", args.force, location)?;
    let store = store(location, false)?;
    let texts = if args.sides.is_empty() {
        let latest = store.list_runs(&RunFilter { limit: Some(1), ..Default::default() })?;
        let Some(run) = latest.first() else {
            return Err(usage(format!("{}: no runs to report on yet; run a workload first", location.display())));
        };
        vec![format!("run:{}", run.uuid)]
    } else {
        args.sides.clone()
    };
    let sides = envbench_report::resolve_sides(store.as_ref(), &texts).map_err(classify)?;
    let html = envbench_report::render_report(&sides, &WORKLOADS);
    output.write(&html)?;
    eprintln!("wrote {}", args.output.display());
    Ok(ExitCode::SUCCESS)
}

pub fn serve(location: &StoreLocation, args: ServeArgs) -> anyhow::Result<ExitCode> {
    // Fail now, not on the first page view, when the store is missing or not an envbench store.
    drop(store(location, false)?);
    let listener = envbench_report::bind(&args.listen).map_err(|e| usage(e.to_string()))?;
    let address = listener.local_addr()?;
    if !envbench_report::is_loopback(&address) {
        eprintln!(
            "warning: listening on {address}, which other machines can reach: anyone on the network can read these \
             results (read-only). Use --listen 127.0.0.1:8080 to keep them on this machine."
        );
    }
    eprintln!("envbench viewer for {} on http://{address}/ (read-only; Ctrl-C stops it)", location.display());
    envbench_report::serve_blocking(location.clone(), listener, WORKLOADS)?;
    Ok(ExitCode::SUCCESS)
}

pub fn push(location: &StoreLocation, args: PushArgs) -> anyhow::Result<ExitCode> {
    let destination = self::location(&args.to, "--to")?;
    if &destination == location {
        return Err(usage("--to names the store being pushed from; give another store"));
    }
    if let StoreLocation::Sqlite(path) = &destination
        && path.is_dir()
    {
        return Err(usage(format!(
            "--to {}: a directory, not a store; give a SQLite file (e.g. {}/results.db) or a postgres:// URL",
            path.display(),
            path.display()
        )));
    }
    let from = store(location, false)?;
    let runs: Vec<String> = if args.runs.is_empty() {
        from.list_runs(&RunFilter::default())?
            .into_iter()
            .rev()
            .filter(|r| r.status != RunStatus::Running)
            .map(|r| r.uuid)
            .collect()
    } else {
        args.runs.clone()
    };
    let mut to = store(&destination, true)?;
    let report = push_runs(from.as_ref(), to.as_mut(), &runs)?;
    crate::output::println(&format!(
        "pushed {} run{} to {}; {} already there{}",
        report.copied.len(),
        if report.copied.len() == 1 { "" } else { "s" },
        destination.display(),
        report.already_present.len(),
        if report.still_running.is_empty() {
            String::new()
        } else {
            format!(
                "; {} still running, not pushed (push them once they end; a run whose envbench process died is marked \
                 interrupted when its store is next opened)",
                report.still_running.len()
            )
        }
    ));
    Ok(ExitCode::SUCCESS)
}
