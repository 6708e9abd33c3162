//! The jobs a store does, one trait each, so that a store that does one job is given only that one: reading runs
//! ([`ReadRuns`], and [`ReadEnvironments`] where every run's environment is known cheaply), recording a run
//! ([`RecordRuns`]), importing runs kept elsewhere ([`ImportRuns`]) and the fleet's message board and clock
//! ([`FleetBoard`]). [`ResultStore`] is all of them: what SQLite and PostgreSQL stores are. A results service read
//! over HTTP reads runs and does nothing else; the pages' view reads runs and environments.

use crate::error::StoreError;
use crate::model::{FingerprintTally, FleetEvent, ImportOutcome, RunEnvironments, RunFilter, RunSummary, StoredRun};
use envbench_core::fingerprint::Fingerprint;
use envbench_core::model::{ResultRecord, RunRequest, RunStatus};
use envbench_core::sampler::SamplerSeries;

/// Reading runs back. Runs are addressed by uuid; `find_run` also accepts a unique prefix of one.
pub trait ReadRuns {
    /// Runs matching a filter, newest first.
    fn list_runs(&self, filter: &RunFilter) -> Result<Vec<RunSummary>, StoreError>;
    /// The uuid of the run named by a uuid or a unique prefix of one.
    fn find_run(&self, id_or_prefix: &str) -> Result<String, StoreError>;
    /// Everything kept about one run.
    fn load_run(&self, run_uuid: &str) -> Result<StoredRun, StoreError>;
    /// One run as pages show it: as [`ReadRuns::load_run`], but a result with more than
    /// [`DIGEST_ABOVE`](crate::DIGEST_ABOVE) samples holds its digest ([`sample_digest`](crate::sample_digest))
    /// instead, flagged with [`digest_flag`](crate::digest_flag), so a page costs the same however many samples a run
    /// has.
    fn load_run_for_pages(&self, run_uuid: &str) -> Result<StoredRun, StoreError> {
        self.load_run(run_uuid)
    }
}

/// Reading every run's environment at once, as a store that holds the fingerprints can.
pub trait ReadEnvironments: ReadRuns {
    /// Every run's environment: each run's fingerprint hash by run uuid, and each distinct fingerprint once (cheaper
    /// than loading every run when a page groups runs by environment).
    fn environments(&self) -> Result<RunEnvironments, StoreError>;

    /// [`environments`](Self::environments) of these runs only (a page of the newest runs need not read the
    /// environment of every run a store holds).
    fn environments_of(&self, uuids: &[&str]) -> Result<RunEnvironments, StoreError> {
        let mut environments = self.environments()?;
        let wanted: std::collections::BTreeSet<&str> = uuids.iter().copied().collect();
        environments.runs.retain(|uuid, _| wanted.contains(uuid.as_str()));
        Ok(environments)
    }

    /// Every fingerprint (in [`RunEnvironments::fingerprints`]; its `runs` left empty) and what its runs add up to,
    /// the latest run's fingerprint first: summed by the store, so a page of environments does not read every run.
    fn fingerprint_tallies(&self) -> Result<(RunEnvironments, Vec<FingerprintTally>), StoreError>;

    /// The values of tag `key` (the suites of `envbench run`), at most `limit`, the one whose first run started last
    /// first: by the index of tag values, not by reading every run.
    fn newest_tag_values(&self, key: &str, limit: usize) -> Result<Vec<String>, StoreError>;
}

/// Recording a run as it happens.
pub trait RecordRuns {
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
}

/// Copying in runs another store kept.
pub trait ImportRuns {
    /// Copy in a run kept by another store, as it is there: same uuid, timestamps, status, tool version, results with
    /// every sample, sampler series and attachments. Append-only like everything else: when a run with this uuid is
    /// already here, nothing changes and [`ImportOutcome::AlreadyPresent`] is returned.
    fn import_run(&mut self, run: &StoredRun) -> Result<ImportOutcome, StoreError>;

    /// [`import_run`](Self::import_run) for each of these runs, all or none of them: one transaction (a commit each
    /// made a push to PostgreSQL wait for a WAL flush per run).
    fn import_runs(&mut self, runs: &[StoredRun]) -> Result<Vec<ImportOutcome>, StoreError> {
        runs.iter().map(|run| self.import_run(run)).collect()
    }

    /// After many runs came in at once: bring the planner's statistics up to date, so that reading one run is an
    /// index lookup from the first query on, not a plan made for an empty table (PostgreSQL's autovacuum may be off,
    /// or minutes away).
    fn refresh_statistics(&mut self) -> Result<(), StoreError> {
        Ok(())
    }
}

/// A fleet's message board, and the one clock every host of a fleet reads.
pub trait FleetBoard {
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
    /// The database server's clock now, in seconds since the Unix epoch.
    fn clock_seconds(&self) -> Result<f64, StoreError>;
}

/// A whole results store: it reads, records, imports and keeps the fleet's board. SQLite and PostgreSQL stores are.
pub trait ResultStore: ReadEnvironments + RecordRuns + ImportRuns + FleetBoard {}

impl<T: ReadEnvironments + RecordRuns + ImportRuns + FleetBoard> ResultStore for T {}
