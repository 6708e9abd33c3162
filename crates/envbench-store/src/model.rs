use envbench_core::fingerprint::Fingerprint;
use envbench_core::model::{ResultRecord, RunStatus};
use envbench_core::sampler::SamplerSeries;
use serde::Serialize;
use std::collections::BTreeMap;

/// Which runs to list.
#[derive(Clone, Debug, Default)]
pub struct RunFilter {
    pub workload: Option<String>,
    pub label: Option<String>,
    /// Every tag given must match.
    pub tags: BTreeMap<String, String>,
    pub host: Option<String>,
    pub limit: Option<usize>,
}

/// One line of `results list`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunSummary {
    pub uuid: String,
    pub workload: String,
    pub label: Option<String>,
    pub tags: BTreeMap<String, String>,
    pub host: Option<String>,
    pub started_at: String,
    pub ended_at: Option<String>,
    pub status: RunStatus,
    pub status_reason: Option<String>,
    pub result_count: usize,
    pub suite_id: Option<String>,
}

/// A result as stored: the record plus the parameter hash it is matched by.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StoredResult {
    #[serde(flatten)]
    pub record: ResultRecord,
    pub parameters_hash: String,
}

/// Everything kept about one run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StoredRun {
    #[serde(flatten)]
    pub summary: RunSummary,
    pub command_line: String,
    pub tool_version: String,
    pub fingerprint_hash: String,
    pub fingerprint: Fingerprint,
    pub results: Vec<StoredResult>,
    pub series: Option<SamplerSeries>,
    pub attachments: BTreeMap<String, serde_json::Value>,
}

/// What [`crate::ResultStore::import_run`] did with a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ImportOutcome {
    /// The run was copied in.
    Imported,
    /// A run with the same uuid was already there; nothing changed.
    AlreadyPresent,
}

/// What [`crate::push_runs`] did, run by run (uuids).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PushReport {
    /// Runs copied to the destination.
    pub copied: Vec<String>,
    /// Runs the destination already had (pushed before); left as they were.
    pub already_present: Vec<String>,
    /// Runs not pushed because they have not ended yet: a running run would arrive incomplete and, being
    /// append-only at the destination, could never be completed there. Push them once they have ended.
    pub still_running: Vec<String>,
}
