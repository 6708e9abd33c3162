//! One row per raw sample: the layout the CSV, TSV and JSON exports share.

use envbench_store::StoredRun;
use serde::Serialize;

/// The columns of the sample exports, in order (the CSV and TSV header line): how an export is known as envbench's
/// before it is written over.
pub const SAMPLE_COLUMNS: &[&str] = &[
    "run",
    "label",
    "tags",
    "started_at",
    "status",
    "host",
    "environment",
    "workload",
    "workload_version",
    "test",
    "parameters",
    "parameters_hash",
    "metric",
    "unit",
    "better",
    "flags",
    "sample",
    "value",
];

/// One exported row: one raw sample with everything needed to read it alone.
#[derive(Serialize)]
pub(crate) struct SampleRow<'a> {
    run: &'a str,
    label: &'a str,
    tags: String,
    started_at: &'a str,
    status: &'a str,
    host: &'a str,
    environment: String,
    workload: &'a str,
    workload_version: u32,
    test: &'a str,
    parameters: String,
    parameters_hash: &'a str,
    metric: &'a str,
    unit: &'a str,
    better: &'static str,
    flags: String,
    sample: usize,
    value: f64,
}

impl SampleRow<'_> {
    /// The row's cells in [`SAMPLE_COLUMNS`]' order, each as text.
    pub(crate) fn cells(&self) -> [String; 18] {
        [
            self.run.to_string(),
            self.label.to_string(),
            self.tags.clone(),
            self.started_at.to_string(),
            self.status.to_string(),
            self.host.to_string(),
            self.environment.clone(),
            self.workload.to_string(),
            self.workload_version.to_string(),
            self.test.to_string(),
            self.parameters.clone(),
            self.parameters_hash.to_string(),
            self.metric.to_string(),
            self.unit.to_string(),
            self.better.to_string(),
            self.flags.clone(),
            self.sample.to_string(),
            serde_json::Value::from(self.value).to_string(),
        ]
    }
}

/// One row per raw sample of every result of the runs.
pub(crate) fn sample_rows(runs: &[StoredRun]) -> Vec<SampleRow<'_>> {
    let mut rows = Vec::new();
    for run in runs {
        let environment = run.fingerprint.one_line();
        let tags = run.summary.tags.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",");
        for result in &run.results {
            let r = &result.record;
            for (index, value) in r.samples.iter().enumerate() {
                rows.push(SampleRow {
                    run: &run.summary.uuid,
                    label: run.summary.label.as_deref().unwrap_or(""),
                    tags: tags.clone(),
                    started_at: &run.summary.started_at,
                    status: run.summary.status.as_str(),
                    host: run.summary.host.as_deref().unwrap_or(""),
                    environment: environment.clone(),
                    workload: &r.workload,
                    workload_version: r.workload_version,
                    test: &r.test_id,
                    parameters: r.canonical_parameters(),
                    parameters_hash: &result.parameters_hash,
                    metric: &r.metric,
                    unit: &r.unit,
                    better: r.direction.as_str(),
                    flags: r.flags.join(","),
                    sample: index + 1,
                    value: *value,
                });
            }
        }
    }
    rows
}

/// True when `head`, the start of a file, is a sample export envbench wrote (CSV, TSV or JSON), so it may be written
/// over.
pub fn is_sample_export(head: &str) -> bool {
    let first_line = head.lines().next().unwrap_or_default();
    if first_line == SAMPLE_COLUMNS.join(",") || first_line == SAMPLE_COLUMNS.join("\t") {
        return true;
    }
    // A JSON export: an array of rows, each beginning with the run's id.
    let json = head.trim_start();
    json.strip_prefix('[').map(str::trim_start).is_some_and(|rest| {
        rest.starts_with(']') || rest.strip_prefix('{').is_some_and(|row| row.trim_start().starts_with("\"run\":"))
    })
}
