//! What a client sends to `POST /api/v1/runs`: runs as the store keeps them, each with the provenance its client
//! states and each result's headline, which the server recomputes from the raw samples.

use envbench_core::model::{StoredRun, canonical_json, sha256_hex};
use envbench_core::provenance::{Options, PROVENANCE_ATTACHMENT, RunProvenance};
use envbench_core::stats::Summary;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The version of the upload format this envbench writes and reads.
pub const UPLOAD_FORMAT: u32 = 1;

/// One upload: a batch of runs.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UploadBody {
    pub format: u32,
    pub runs: Vec<UploadedRun>,
}

/// A run as uploaded.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UploadedRun {
    pub run: StoredRun,
    pub provenance: UploadProvenance,
    pub headlines: Vec<Headline>,
}

/// Where a run came from, as its client states it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UploadProvenance {
    pub envbench_version: String,
    /// Each workload's version among the run's results.
    pub workload_versions: BTreeMap<String, u32>,
    /// The SHA-256 of the binary that ran it.
    pub binary_sha256: String,
    /// The fingerprint's hash.
    pub fingerprint_sha256: String,
    /// A built-in profile's defaults, or tuned.
    pub options: Options,
    /// Every flag its results carry (disturbed, memory-backed, cross-check markers...), sorted.
    pub flags: Vec<String>,
}

/// One result's headline: how many samples it has and their median.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Headline {
    pub test_id: String,
    pub metric: String,
    pub parameters_hash: String,
    pub samples: usize,
    pub median: f64,
}

/// The headline of every result of a run, in its results' order.
pub fn headlines(run: &StoredRun) -> Vec<Headline> {
    run.results
        .iter()
        .map(|result| Headline {
            test_id: result.record.test_id.clone(),
            metric: result.record.metric.clone(),
            parameters_hash: result.parameters_hash.clone(),
            samples: result.record.samples.len(),
            median: Summary::of(&result.record.samples).map_or(f64::NAN, |s| s.median),
        })
        .collect()
}

/// Every flag a run's results carry, sorted.
pub fn result_flags(run: &StoredRun) -> Vec<String> {
    let flags: BTreeSet<&String> = run.results.iter().flat_map(|r| &r.record.flags).collect();
    flags.into_iter().cloned().collect()
}

/// Each workload's version among a run's results.
pub fn workload_versions(run: &StoredRun) -> BTreeMap<String, u32> {
    run.results.iter().map(|r| (r.record.workload.clone(), r.record.workload_version)).collect()
}

/// The provenance a run keeps (its `provenance` attachment), or why it has none it can be uploaded with.
pub fn kept_provenance(run: &StoredRun) -> Result<RunProvenance, String> {
    let document = run.attachments.get(PROVENANCE_ATTACHMENT).ok_or_else(|| {
        format!(
            "run {} keeps no provenance (an envbench before {} ran it): a service cannot tell which binary made it or \
             whether its options were tuned; run it again to share it",
            run.summary.uuid,
            envbench_core::TOOL_VERSION
        )
    })?;
    serde_json::from_value(document.clone())
        .map_err(|e| format!("run {}: its provenance cannot be read ({e})", run.summary.uuid))
}

impl UploadedRun {
    /// A run as this client uploads it, stating `binary_sha256` as the binary that ran it.
    pub fn of(run: StoredRun, binary_sha256: &str) -> Result<UploadedRun, String> {
        let kept = kept_provenance(&run)?;
        let provenance = UploadProvenance {
            envbench_version: run.tool_version.clone(),
            workload_versions: workload_versions(&run),
            binary_sha256: binary_sha256.to_string(),
            fingerprint_sha256: run.fingerprint_hash.clone(),
            options: kept.options,
            flags: result_flags(&run),
        };
        Ok(UploadedRun { headlines: headlines(&run), provenance, run })
    }
}

/// The digest of what a run measured: its environment and every result with every sample, without its uuid,
/// times, names or tags. The same figures uploaded under another uuid have the same digest.
pub fn content_sha256(run: &StoredRun) -> String {
    let results: Vec<serde_json::Value> = run
        .results
        .iter()
        .map(|r| {
            serde_json::json!([r.parameters_hash, r.record.test_id, r.record.metric, r.record.unit, r.record.samples])
        })
        .collect();
    sha256_hex(canonical_json(&serde_json::json!([run.fingerprint_hash, run.summary.workload, results])).as_bytes())
}
