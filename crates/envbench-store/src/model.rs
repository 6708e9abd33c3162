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
