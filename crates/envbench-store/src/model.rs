use envbench_core::fingerprint::Fingerprint;
use serde::Serialize;
use std::collections::BTreeMap;

pub use envbench_core::model::{RunSummary, StoredResult, StoredRun};

/// Which runs to list.
#[derive(Clone, Debug, Default)]
pub struct RunFilter {
    pub workload: Option<String>,
    pub label: Option<String>,
    /// Every tag given must match.
    pub tags: BTreeMap<String, String>,
    pub host: Option<String>,
    /// Only the runs uploaded with this submitter's token (on a results service).
    pub submitter: Option<String>,
    pub limit: Option<usize>,
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
    /// append-only at the destination, could never be completed there. Push them once they have ended (a run whose
    /// process died is marked interrupted when its store is next opened).
    pub still_running: Vec<String>,
}

/// One message on a fleet's board (see `envbench-fleet`): who sent it, what kind it is, its JSON body, and when the
/// database server wrote it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FleetEvent {
    /// Increasing with insertion (within one writer; the board is read by time, not by id).
    pub id: i64,
    pub fleet: String,
    /// `coordinator`, or the agent's name.
    pub sender: String,
    pub kind: String,
    pub body: serde_json::Value,
    /// The database server's clock when the row was written, in seconds since the Unix epoch.
    pub at_s: f64,
}

/// The environments of a store's runs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunEnvironments {
    /// Run uuid to fingerprint hash.
    pub runs: std::collections::BTreeMap<String, String>,
    /// Fingerprint hash to fingerprint.
    pub fingerprints: std::collections::BTreeMap<String, Fingerprint>,
}

/// What a store's runs of one fingerprint add up to: what a page of environments reads instead of every run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FingerprintTally {
    /// The fingerprint's hash, a key of [`RunEnvironments::fingerprints`].
    pub hash: String,
    pub host: Option<String>,
    pub runs: usize,
    /// The labels and the workloads of its runs, each once, the latest run's first.
    pub labels: Vec<String>,
    pub workloads: Vec<String>,
    pub first_run_at: String,
    pub last_run_at: String,
}

impl RunEnvironments {
    /// The fingerprint of a run, when the store knows the run.
    pub fn of(&self, run_uuid: &str) -> Option<&Fingerprint> {
        self.runs.get(run_uuid).and_then(|hash| self.fingerprints.get(hash))
    }
}
