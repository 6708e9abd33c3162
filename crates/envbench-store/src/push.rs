//! Runs copied from one store to another.

use crate::error::StoreError;
use crate::model::{ImportOutcome, PushReport};
use crate::roles::{ImportRuns, ReadRuns};
use envbench_core::model::RunStatus;

/// Copy runs (uuids or unique prefixes) from one store to another, e.g. from a laptop's SQLite file to the team's
/// PostgreSQL store. Idempotent: runs the destination already has are left alone and listed as such, so pushing the
/// same runs again adds nothing. Runs still running are not pushed (see [`PushReport::still_running`]).
pub fn push_runs(from: &dyn ReadRuns, to: &mut dyn ImportRuns, runs: &[String]) -> Result<PushReport, StoreError> {
    let mut report = PushReport::default();
    for id in runs {
        let uuid = from.find_run(id)?;
        let run = from.load_run(&uuid)?;
        if run.summary.status == RunStatus::Running {
            report.still_running.push(uuid);
            continue;
        }
        match to.import_run(&run)? {
            ImportOutcome::Imported => report.copied.push(uuid),
            ImportOutcome::AlreadyPresent => report.already_present.push(uuid),
        }
    }
    Ok(report)
}
