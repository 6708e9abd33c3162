//! The store as pages read it.

use crate::error::StoreError;
use crate::model::{FingerprintTally, RunEnvironments, RunFilter, RunSummary, StoredRun};
use crate::roles::{ReadEnvironments, ReadRuns};

/// A store as pages read it: every run loaded as [`ReadRuns::load_run_for_pages`] gives it (a result with many
/// samples as its digest); the rest as the store does it. It only reads.
pub struct PagesView<'a>(pub &'a dyn ReadEnvironments);

impl ReadRuns for PagesView<'_> {
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
}

impl ReadEnvironments for PagesView<'_> {
    fn environments(&self) -> Result<RunEnvironments, StoreError> {
        self.0.environments()
    }
    fn environments_of(&self, uuids: &[&str]) -> Result<RunEnvironments, StoreError> {
        self.0.environments_of(uuids)
    }
    fn fingerprint_tallies(&self) -> Result<(RunEnvironments, Vec<FingerprintTally>), StoreError> {
        self.0.fingerprint_tallies()
    }
    fn newest_tag_values(&self, key: &str, limit: usize) -> Result<Vec<String>, StoreError> {
        self.0.newest_tag_values(key, limit)
    }
}
