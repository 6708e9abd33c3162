//! The result records of a ranread run: what each is of, its metrics, and what makes two runs comparable.

use crate::sweep::{StepFigures, SweepOutcome};
use envbench_core::model::{Direction, ResultRecord};
use serde_json::{Value, json};

/// The name of the workload.
pub const WORKLOAD: &str = "ranread";
/// The test of the knee's figures.
pub const KNEE_TEST: &str = "knee";
/// The metrics of each step and of the knee.
pub const IOPS_METRIC: &str = "iops";
pub const LATENCY_MEAN_METRIC: &str = "latency_mean";
/// The test id, and the sampler's step name, of a step of `jobs` jobs.
pub fn step_test_id(jobs: u32) -> String {
    format!("J={jobs}")
}

/// Bumped when the method changes so old results stop matching new ones.
pub const WORKLOAD_VERSION: u32 = 1;
/// What every record of a ranread run is of.
pub const SOURCE: envbench_core::RecordSource =
    envbench_core::RecordSource { workload: WORKLOAD, version: WORKLOAD_VERSION };

/// A timed step's IOPS per window ([`STEP_WINDOWS`] of them): the headline a comparison tests. The step's own `iops`
/// (reads over the whole step) stays its one figure in tables and curves.
pub const IOPS_WINDOW_METRIC: &str = "iops_window";

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
