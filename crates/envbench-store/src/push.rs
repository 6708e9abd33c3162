//! Runs copied from one store to another.

use crate::error::StoreError;
use crate::model::{ImportOutcome, PushReport};
use crate::roles::{ImportRuns, ReadRuns};
use envbench_core::model::RunStatus;

/// Copy runs (uuids or unique prefixes) from one store to another, e.g. from a laptop's SQLite file to the team's
/// PostgreSQL store. Idempotent: runs the destination already has are left alone and listed as such, so pushing the
/// same runs again adds nothing. Runs still running are not pushed (see [`PushReport::still_running`]).
///
/// Runs are copied [`RUNS_PER_TRANSACTION`] to a transaction: a failure keeps every earlier batch, and pushing again
/// copies the rest.
pub fn push_runs(from: &dyn ReadRuns, to: &mut dyn ImportRuns, runs: &[String]) -> Result<PushReport, StoreError> {
    let mut report = PushReport::default();
    let mut batch = Vec::with_capacity(RUNS_PER_TRANSACTION);
    let mut flush = |batch: &mut Vec<envbench_core::model::StoredRun>, report: &mut PushReport| {
        for (run, outcome) in batch.iter().zip(to.import_runs(batch)?) {
            match outcome {
                ImportOutcome::Imported => report.copied.push(run.summary.uuid.clone()),
                ImportOutcome::AlreadyPresent => report.already_present.push(run.summary.uuid.clone()),
            }
        }
        batch.clear();
        Ok::<(), StoreError>(())
    };
    for id in runs {
        let uuid = from.find_run(id)?;
        let run = from.load_run(&uuid)?;
        if run.summary.status == RunStatus::Running {
            report.still_running.push(uuid);
            continue;
        }
        batch.push(run);
        if batch.len() == RUNS_PER_TRANSACTION {
            flush(&mut batch, &mut report)?;
        }
    }
    flush(&mut batch, &mut report)?;
    if report.copied.len() >= RUNS_PER_TRANSACTION {
        to.refresh_statistics()?;
    }
    Ok(report)
}

/// Runs a push copies in one transaction of the destination.
const RUNS_PER_TRANSACTION: usize = 100;
