//! A results service read as a store: `envbench compare` and `report` resolve a side named on a service
//! (`https://host/label:nvme`) through its read API (`GET /api/v1/runs`, `GET /api/v1/runs/{id}`), as they resolve
//! one in a local store. It only reads ([`ReadRuns`]): nothing of the local store is sent.

use crate::client::{Client, ClientError};
use envbench_core::model::{RunSummary, StoredRun};
use envbench_core::text::percent_encode;
use envbench_store::{ReadRuns, RunFilter, StoreError};
use std::cell::RefCell;
use std::collections::BTreeMap;

/// A service's runs, read over HTTP(S): all of them, or one submitter's.
pub struct ServiceStore {
    client: Client,
    /// Only the runs this submitter uploaded (`https://host/alice/label:nvme`).
    submitter: Option<String>,
    /// Runs already fetched, by uuid: finding a run by a prefix fetches it whole, and loading it then costs nothing.
    fetched: RefCell<BTreeMap<String, StoredRun>>,
}

impl ServiceStore {
    pub fn new(client: Client) -> ServiceStore {
        ServiceStore { client, submitter: None, fetched: RefCell::new(BTreeMap::new()) }
    }

    /// The same service, kept to the runs one submitter uploaded.
    pub fn of_submitter(&self, submitter: &str) -> ServiceStore {
        ServiceStore { submitter: Some(submitter.to_string()), ..ServiceStore::new(self.client.clone()) }
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    fn failed(&self, error: ClientError) -> StoreError {
        StoreError::Database { location: self.client.base().to_string(), message: error.to_string() }
    }

    fn fetch(&self, id: &str) -> Result<StoredRun, StoreError> {
        if let Some(run) = self.fetched.borrow().get(id) {
            return Ok(run.clone());
        }
        let run: StoredRun = match self.client.get(&format!("/api/v1/runs/{}", percent_encode(id))) {
            Ok(run) => run,
            Err(ClientError::Refused { status: 404, .. }) => return Err(StoreError::NoSuchRun(id.to_string())),
            Err(error) => return Err(self.failed(error)),
        };
        // A run of another submitter is not found among one submitter's.
        if self.submitter.is_some() && run.summary.submitter != self.submitter {
            return Err(StoreError::NoSuchRun(id.to_string()));
        }
        self.fetched.borrow_mut().insert(run.summary.uuid.clone(), run.clone());
        Ok(run)
    }
}

/// The query string of a run filter, as `GET /api/v1/runs` reads it.
pub fn filter_query(filter: &RunFilter) -> String {
    let mut pairs: Vec<String> = Vec::new();
    let mut add = |name: &str, value: &str| pairs.push(format!("{name}={}", percent_encode(value)));
    if let Some(workload) = &filter.workload {
        add("workload", workload);
    }
    if let Some(label) = &filter.label {
        add("label", label);
    }
    if let Some(host) = &filter.host {
        add("host", host);
    }
    if let Some(submitter) = &filter.submitter {
        add("submitter", submitter);
    }
    for (key, value) in &filter.tags {
        add("tag", &format!("{key}={value}"));
    }
    if let Some(limit) = filter.limit {
        add("limit", &limit.to_string());
    }
    pairs.join("&")
}

impl ReadRuns for ServiceStore {
    fn list_runs(&self, filter: &RunFilter) -> Result<Vec<RunSummary>, StoreError> {
        let filter =
            RunFilter { submitter: self.submitter.clone().or_else(|| filter.submitter.clone()), ..filter.clone() };
        self.client.get(&format!("/api/v1/runs?{}", filter_query(&filter))).map_err(|e| self.failed(e))
    }

    fn find_run(&self, id_or_prefix: &str) -> Result<String, StoreError> {
        Ok(self.fetch(id_or_prefix)?.summary.uuid)
    }

    fn load_run(&self, run_uuid: &str) -> Result<StoredRun, StoreError> {
        self.fetch(run_uuid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_become_a_query_the_viewer_reads() {
        let mut filter = RunFilter { label: Some("nvme best".into()), limit: Some(5), ..Default::default() };
        filter.tags.insert("suite".into(), "a&b=c".into());
        assert_eq!(filter_query(&filter), "label=nvme%20best&tag=suite%3Da%26b%3Dc&limit=5");
        assert_eq!(filter_query(&RunFilter::default()), "");
    }
}
