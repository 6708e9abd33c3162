//! The results store.
//!
//! Every run, with its environment fingerprint (stored once per distinct environment), its results with every raw
//! sample, its sampler series and how it ended, is kept here and never rewritten: results and samples are append-only
//! (enforced by the schema), and a run's status moves once from `running` to `complete`, `failed` or `interrupted`.
//!
//! [`ResultStore`] is the interface the rest of envbench uses. It has one implementation, [`SqlStore`], written once
//! over envbench-sql's connection (the one database layer, which alone links the drivers) with two backends: SQLite by default ([`SqliteStore`]: one file in the user's data
//! directory, WAL, busy timeout) and PostgreSQL for a shared team store ([`PostgresStore`]: migrations under an
//! advisory lock). The schema and its migrations are written once for both. A running run's process holds a lock
//! that shows it alive from any PID namespace or machine (a lock file beside a SQLite store, an advisory lock on a
//! PostgreSQL one); a store opened marks runs whose process is provably gone as interrupted, never a live one.
//! [`RunRecorder`] records a run from beginning to end and keeps it in the local store when a shared store cannot be
//! reached; [`push_runs`] copies runs from one store to another by uuid, idempotently. This crate knows nothing about how results are produced or presented.

mod digest;
mod error;
mod liveness;
mod location;
mod model;
mod postgres_backend;
mod process;
mod recorder;
mod schema;
mod series_rows;
mod sql;
mod sqlite_backend;
mod store;
mod uploads;
mod writes;

pub use digest::{DIGEST_ABOVE, DIGEST_POINTS, digest_flag, is_digest_flag, sample_digest};
pub use error::StoreError;
pub use location::{StoreLocation, default_store_path};
pub use model::{FleetEvent, ImportOutcome, PushReport, RunFilter, RunSummary, StoredResult, StoredRun};
pub use postgres_backend::{PostgresBackend, PostgresStore};
pub use process::ABANDONED_AFTER_S;
pub use recorder::{RecordedRun, RunRecorder};
pub use schema::LATEST_VERSION;
pub use sqlite_backend::{SqliteBackend, SqliteStore};
pub use store::SqlStore;
pub use uploads::{
    Received, SUITE_TAG, TokenCheck, Upload, UploadOutcome, UploadStore, UploadToken, open_upload_store,
};

use envbench_core::fingerprint::Fingerprint;
use envbench_core::model::{ResultRecord, RunRequest, RunStatus};
use envbench_core::sampler::SamplerSeries;

/// What every store backend offers. Runs are addressed by uuid; `find_run` also accepts a unique prefix of one.
pub trait ResultStore {
    /// Record a new run as `running`, with its environment. Returns the run's uuid.
    fn begin_run(&mut self, request: &RunRequest, fingerprint: &Fingerprint) -> Result<String, StoreError>;
    /// Append results to a running run.
    fn add_results(&mut self, run_uuid: &str, results: &[ResultRecord]) -> Result<(), StoreError>;
    /// Keep the sampler series of a run.
    fn add_series(&mut self, run_uuid: &str, series: &SamplerSeries) -> Result<(), StoreError>;
    /// Keep a named JSON document with a run (workload details such as cube statistics or the knee of a sweep).
    fn add_attachment(&mut self, run_uuid: &str, name: &str, document: &serde_json::Value) -> Result<(), StoreError>;
    /// End a run. A run ends once; ending it again is an error.
    fn finish_run(&mut self, run_uuid: &str, status: RunStatus, reason: Option<&str>) -> Result<(), StoreError>;
    /// Runs matching a filter, newest first.
    fn list_runs(&self, filter: &RunFilter) -> Result<Vec<RunSummary>, StoreError>;
    /// The uuid of the run named by a uuid or a unique prefix of one.
    fn find_run(&self, id_or_prefix: &str) -> Result<String, StoreError>;
    /// Everything kept about one run.
    fn load_run(&self, run_uuid: &str) -> Result<StoredRun, StoreError>;
    /// One run as pages show it: as [`ResultStore::load_run`], but a result with more than [`DIGEST_ABOVE`] samples
    /// holds its digest ([`sample_digest`]) instead, flagged with [`digest_flag`], so a page costs the same however
    /// many samples a run has.
    fn load_run_for_pages(&self, run_uuid: &str) -> Result<StoredRun, StoreError> {
        self.load_run(run_uuid)
    }
    /// Every run's environment: each run's fingerprint hash by run uuid, and each distinct fingerprint once (cheaper
    /// than loading every run when a page groups runs by environment).
    fn environments(&self) -> Result<RunEnvironments, StoreError>;
    /// Copy in a run kept by another store, as it is there: same uuid, timestamps, status, tool version, results with
    /// every sample, sampler series and attachments. Append-only like everything else: when a run with this uuid is
    /// already here, nothing changes and [`ImportOutcome::AlreadyPresent`] is returned.
    fn import_run(&mut self, run: &StoredRun) -> Result<ImportOutcome, StoreError>;
    /// Post a message to a fleet's board; returns it as stored, with its id and the database clock's time.
    fn post_fleet_event(
        &mut self,
        fleet: &str,
        sender: &str,
        kind: &str,
        body: &serde_json::Value,
    ) -> Result<FleetEvent, StoreError>;
    /// A fleet's messages written at or after `since_s` (the database clock), oldest first.
    fn fleet_events(&self, fleet: &str, since_s: f64) -> Result<Vec<FleetEvent>, StoreError>;
    /// The database server's clock now, in seconds since the Unix epoch: the one clock every host of a fleet reads.
    fn clock_seconds(&self) -> Result<f64, StoreError>;
}

/// A store as pages read it: every run loaded as [`ResultStore::load_run_for_pages`] gives it (a result with many
/// samples as its digest); everything else as the store does it.
pub struct PagesView<'a>(pub &'a dyn ResultStore);

impl ResultStore for PagesView<'_> {
    fn begin_run(&mut self, _: &RunRequest, _: &Fingerprint) -> Result<String, StoreError> {
        Err(StoreError::ReadOnlyPages)
    }
    fn add_results(&mut self, _: &str, _: &[ResultRecord]) -> Result<(), StoreError> {
        Err(StoreError::ReadOnlyPages)
    }
    fn add_series(&mut self, _: &str, _: &SamplerSeries) -> Result<(), StoreError> {
        Err(StoreError::ReadOnlyPages)
    }
    fn add_attachment(&mut self, _: &str, _: &str, _: &serde_json::Value) -> Result<(), StoreError> {
        Err(StoreError::ReadOnlyPages)
    }
    fn finish_run(&mut self, _: &str, _: RunStatus, _: Option<&str>) -> Result<(), StoreError> {
        Err(StoreError::ReadOnlyPages)
    }
    fn list_runs(&self, filter: &RunFilter) -> Result<Vec<RunSummary>, StoreError> {
        self.0.list_runs(filter)
    }
    fn find_run(&self, id_or_prefix: &str) -> Result<String, StoreError> {
        self.0.find_run(id_or_prefix)
    }
    fn load_run(&self, run_uuid: &str) -> Result<StoredRun, StoreError> {
        self.0.load_run_for_pages(run_uuid)
    }
    fn load_run_for_pages(&self, run_uuid: &str) -> Result<StoredRun, StoreError> {
        self.0.load_run_for_pages(run_uuid)
    }
    fn environments(&self) -> Result<RunEnvironments, StoreError> {
        self.0.environments()
    }
    fn import_run(&mut self, _: &StoredRun) -> Result<ImportOutcome, StoreError> {
        Err(StoreError::ReadOnlyPages)
    }
    fn post_fleet_event(&mut self, _: &str, _: &str, _: &str, _: &serde_json::Value) -> Result<FleetEvent, StoreError> {
        Err(StoreError::ReadOnlyPages)
    }
    fn fleet_events(&self, fleet: &str, since_s: f64) -> Result<Vec<FleetEvent>, StoreError> {
        self.0.fleet_events(fleet, since_s)
    }
    fn clock_seconds(&self) -> Result<f64, StoreError> {
        self.0.clock_seconds()
    }
}

/// The environments of a store's runs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunEnvironments {
    /// Run uuid to fingerprint hash.
    pub runs: std::collections::BTreeMap<String, String>,
    /// Fingerprint hash to fingerprint.
    pub fingerprints: std::collections::BTreeMap<String, Fingerprint>,
}

impl RunEnvironments {
    /// The fingerprint of a run, when the store knows the run.
    pub fn of(&self, run_uuid: &str) -> Option<&Fingerprint> {
        self.runs.get(run_uuid).and_then(|hash| self.fingerprints.get(hash))
    }
}

/// Open the store at a location, creating it when `create` is true and it does not exist yet.
pub fn open_store(location: &StoreLocation, create: bool) -> Result<Box<dyn ResultStore>, StoreError> {
    match location {
        StoreLocation::Sqlite(path) => Ok(Box::new(SqliteStore::open(path, create)?)),
        StoreLocation::Postgres(url) => Ok(Box::new(PostgresStore::open(url, create)?)),
    }
}

/// Copy runs (uuids or unique prefixes) from one store to another, e.g. from a laptop's SQLite file to the team's
/// PostgreSQL store. Idempotent: runs the destination already has are left alone and listed as such, so pushing the
/// same runs again adds nothing. Runs still running are not pushed (see [`PushReport::still_running`]).
pub fn push_runs(from: &dyn ResultStore, to: &mut dyn ResultStore, runs: &[String]) -> Result<PushReport, StoreError> {
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
