//! The original RanRead tool's tab-separated export.

use crate::sweep::{StepLimit, SweepOutcome};

/// The columns of the original tool's export.
pub const TSV_HEADER: [&str; 7] = ["RunDate", "RunTime", "Database", "Iterations", "Processes", "ResponseTime", "IOPS"];

/// One line per step in the original tool's tab-separated layout: run date, time, target, iterations (or duration),
/// jobs, mean response time in ms (2 decimals), IOPS (whole).
pub fn tsv_rows(outcome: &SweepOutcome, target: &str, limit: &StepLimit) -> Vec<[String; 7]> {
    outcome
        .steps
        .iter()
        .map(|step| {
            let (date, time) = step.started_at.split_once('T').unwrap_or((&step.started_at, ""));
            [
                date.to_string(),
                time.get(..8).unwrap_or(time).to_string(),
                target.to_string(),
                limit.describe(),
                step.jobs.to_string(),
                format!("{:.2}", step.mean_ms),
                format!("{:.0}", step.iops),
            ]
        })
        .collect()
}
