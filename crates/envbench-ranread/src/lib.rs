//! The database random-read scaling test, modelled on InterSystems' PerfTools RanRead.
//!
//! J jobs each do synchronous random block reads (queue depth 1) of a pre-expanded database file, all released
//! together; a sweep raises J until the mean response time passes the target or IOPS stops growing, finds the knee (the
//! highest IOPS within the target) and judges it against the user's targets. The same sweep runs from inside
//! PostgreSQL against a table of one row per page. File reads go through `envbench-io`'s engine loop (no second I/O
//! loop here); this crate owns the method, the database file and its size policy, the database mode, the result
//! records and what makes two sweeps comparable, and the `ranread` workload the driver registers ([`RANREAD`]). It
//! does not print or store anything.

mod database;
mod document;
mod file;
mod fleet;
mod options;
mod run;
mod sweep;
pub mod workload;

pub use database::{PostgresOptions, PostgresRanRead, TABLE, TableInfo};
pub use document::{Comparable, KNEE_TEST, RanreadDocument, step_test_id};
pub use file::{
    DATABASE_FILE_NAME, FileOptions, FileRanRead, FileState, HEADER_BYTES, check_data_size, validate_block,
};
pub use sweep::{
    DatabaseCounters, JobsPlan, MIN_GROWTH_ON_DOUBLING, STEP_WINDOWS, StepFigures, StepLimit, StepRunner, StopReason,
    SweepOutcome, Targets, Verdict, find_knee, judge, next_auto_step, sweep,
};
pub use workload::RANREAD;

use envbench_core::model::{Direction, ResultRecord};
use serde_json::{Value, json};

/// Bumped when the method changes so old results stop matching new ones.
pub const WORKLOAD_VERSION: u32 = 1;
/// What every record of a ranread run is of.
pub const SOURCE: envbench_core::RecordSource =
    envbench_core::RecordSource { workload: document::WORKLOAD, version: WORKLOAD_VERSION };

/// A timed step's IOPS per window ([`STEP_WINDOWS`] of them): the headline a comparison tests. The step's own `iops`
/// (reads over the whole step) stays its one figure in tables and curves.
pub const IOPS_WINDOW_METRIC: &str = "iops_window";

pub(crate) fn now_utc() -> String {
    envbench_core::model::now_utc()
}

/// What can go wrong; each message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum RanReadError {
    #[error(transparent)]
    Io(#[from] envbench_io::BenchError),
    /// The database said no or could not be reached (the message names it and says what to do).
    #[error("{0}")]
    Sql(#[from] envbench_sql::DbError),
    /// Something of envbench's names exists that envbench did not make: never touched.
    #[error("{0}")]
    Foreign(String),
    /// Another envbench run holds the database file or table (the message names it).
    #[error("{0}")]
    Busy(String),
    /// The work could not be done (the message says why).
    #[error("{0}")]
    Failed(String),
    #[error("'{url}' is not a PostgreSQL URL ({reason}); write it as postgres://user@host:5432/database")]
    BadDatabaseUrl { url: String, reason: String },
    #[error("{0}")]
    BadInput(String),
    #[error("interrupted")]
    Interrupted,
}

/// The result records of a sweep: per step IOPS and response times (one sample each: a step runs once), the IOPS of
/// each window of a timed step as [`IOPS_WINDOW_METRIC`] (the samples a comparison tests), and the knee.
/// `parameters` describes the target (mode, block size, limit, file size or table rows); `jobs` is added per step.
pub fn results(outcome: &SweepOutcome, parameters: &Value) -> Vec<ResultRecord> {
    let with = |extra: Value| {
        let mut merged = parameters.clone();
        if let (Some(map), Value::Object(add)) = (merged.as_object_mut(), extra) {
            map.extend(add);
        }
        merged
    };
    let records_of = |test_id: String, parameters: Value, metric: &str, unit: &str, direction, samples: Vec<f64>| {
        SOURCE.record(test_id, &parameters, metric, unit, direction, samples)
    };
    let record = |test_id: String, parameters: Value, metric: &str, unit: &str, direction, value: f64| {
        records_of(test_id, parameters, metric, unit, direction, vec![value])
    };
    let windows = |test_id: &str, parameters: &Value, step: &StepFigures| {
        (step.window_iops.len() >= 2).then(|| {
            records_of(
                test_id.to_string(),
                parameters.clone(),
                IOPS_WINDOW_METRIC,
                "IOPS",
                Direction::HigherIsBetter,
                step.window_iops.clone(),
            )
        })
    };
    let mut records = Vec::new();
    for step in &outcome.steps {
        let test = step_test_id(step.jobs);
        let params = with(json!({ "jobs": step.jobs }));
        use Direction::{HigherIsBetter as Higher, LowerIsBetter as Lower};
        records.push(record(test.clone(), params.clone(), "iops", "IOPS", Higher, step.iops));
        records.extend(windows(&test, &params, step));
        records.push(record(test.clone(), params.clone(), "latency_mean", "ms", Lower, step.mean_ms));
        records.push(record(test.clone(), params.clone(), "latency_p50", "ms", Lower, step.p50_ms));
        records.push(record(test.clone(), params.clone(), "latency_p99", "ms", Lower, step.p99_ms));
        records.push(record(test.clone(), params.clone(), "latency_max", "ms", Lower, step.max_ms));
        records.push(record(test, params, "job_cv", "%", Lower, step.job_cv_percent));
    }
    if let Some(knee) = outcome.knee_step() {
        let params = with(json!({ "target_latency_ms": outcome.targets.latency_ms }));
        records.push(record(KNEE_TEST.into(), params.clone(), "iops", "IOPS", Direction::HigherIsBetter, knee.iops));
        records.extend(windows(KNEE_TEST, &params, knee));
        records.push(record(KNEE_TEST.into(), params, "latency_mean", "ms", Direction::LowerIsBetter, knee.mean_ms));
    }
    records
}

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
