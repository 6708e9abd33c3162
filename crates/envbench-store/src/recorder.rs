//! A run from its beginning to its stored end, with the fallback for shared stores: when the shared (PostgreSQL)
//! store cannot be reached as the run begins, or goes away before it ends, the whole run is kept in the local store
//! under the same id, to be pushed later. The decision is made here, on the store's own errors.

use crate::error::StoreError;
use crate::location::{StoreLocation, default_store_path};
use crate::{ResultStore, open_store};
use envbench_core::fingerprint::Fingerprint;
use envbench_core::model::{ResultRecord, RunRequest, RunStatus, RunSummary, StoredResult, StoredRun, now_utc};
use envbench_core::sampler::{DISTURBED_FLAG, SamplerSeries};
use std::collections::BTreeMap;

/// A run being recorded.
pub struct RunRecorder {
    store: Box<dyn ResultStore>,
    location: StoreLocation,
    /// A shared store that could not be reached when the run began: the run is kept locally instead.
    unreachable_shared: Option<StoreLocation>,
    /// What is known of the run so far, to move it whole if the shared store goes away.
    request: RunRequest,
    fingerprint: Fingerprint,
    uuid: String,
    started_at: String,
    attachments: BTreeMap<String, serde_json::Value>,
    /// Messages for the user (on standard error), collected as they arise.
    notices: Vec<String>,
    ended: bool,
}

/// How a recorded run ended up.
#[derive(Debug)]
pub struct RecordedRun {
    pub uuid: String,
    pub status: RunStatus,
    /// Where the run is kept.
    pub location: StoreLocation,
    pub notices: Vec<String>,
}

impl RunRecorder {
    /// Begin a run in the store at `location`, or, when it is a shared store that cannot be reached and `fallback`
    /// allows it, in the local store (with a notice saying so).
    pub fn begin(
        location: &StoreLocation,
        request: &RunRequest,
        fingerprint: &Fingerprint,
        fallback: bool,
    ) -> Result<RunRecorder, StoreError> {
        let mut notices = Vec::new();
        let (mut store, used, unreachable_shared) = match open_store(location, true) {
            Ok(store) => (store, location.clone(), None),
            Err(error) if fallback && error.is_unreachable() => {
                let local = StoreLocation::Sqlite(default_store_path());
                notices.push(format!(
                    "warning: the shared store {} cannot be reached ({error}); this run is kept in {} instead",
                    location.display(),
                    local.display()
                ));
                (open_store(&local, true)?, local, Some(location.clone()))
            }
            Err(error) => return Err(error),
        };
        let started_at = now_utc();
        let uuid = store.begin_run(request, fingerprint)?;
        Ok(RunRecorder {
            store,
            location: used,
            unreachable_shared,
            request: request.clone(),
            fingerprint: fingerprint.clone(),
            uuid,
            started_at,
            attachments: BTreeMap::new(),
            notices,
            ended: false,
        })
    }

    pub fn uuid(&self) -> &str {
        &self.uuid
    }

    /// Where the run is being kept.
    pub fn location(&self) -> &StoreLocation {
        &self.location
    }

    /// Messages gathered so far (taken: each is given once).
    pub fn take_notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }

    /// Keep a named JSON document with the run.
    pub fn attach(&mut self, name: &str, document: &serde_json::Value) -> Result<(), StoreError> {
        self.attachments.insert(name.to_string(), document.clone());
        match self.store.add_attachment(&self.uuid, name, document) {
            // A shared store that went away: finish() moves the whole run to the local store.
            Err(error) if error.is_unreachable() => Ok(()),
            other => other,
        }
    }

    /// Store the results and the series, and end the run with `status`. When keeping the results fails the run still
    /// ends (as failed, with the reason), so it never stays `running`.
    pub fn finish(
        mut self,
        results: &[ResultRecord],
        series: Option<SamplerSeries>,
        status: RunStatus,
        reason: Option<String>,
    ) -> Result<RecordedRun, StoreError> {
        self.ended = true;
        let stored = (|| -> Result<(), StoreError> {
            if !results.is_empty() {
                self.store.add_results(&self.uuid, results)?;
            }
            if let Some(series) = &series {
                self.store.add_series(&self.uuid, series)?;
            }
            Ok(())
        })();
        if let Err(error) = &stored
            && error.is_unreachable()
        {
            let error = error.to_string();
            return self.keep_locally(results, series, status, reason, &error);
        }
        let reason = match (&stored, reason) {
            (Err(e), Some(r)) => Some(format!("{r}; results not stored: {e}")),
            (Err(e), None) => Some(format!("results not stored: {e}")),
            (Ok(()), r) => r,
        };
        let status = if stored.is_err() && status == RunStatus::Complete { RunStatus::Failed } else { status };
        match self.store.finish_run(&self.uuid, status, reason.as_deref()) {
            Err(error) if error.is_unreachable() => {
                let error = error.to_string();
                return self.keep_locally(results, series, status, reason, &error);
            }
            other => other?,
        }
        stored?;
        if let Some(shared) = &self.unreachable_shared {
            self.notices.push(format!(
                "push it to the shared store later: envbench push --to {} {}",
                shared.display(),
                self.uuid
            ));
        }
        let notices = std::mem::take(&mut self.notices);
        Ok(RecordedRun { uuid: self.uuid.clone(), status, location: self.location.clone(), notices })
    }

    /// End the run without results: used when the workload never got to measure (an early error).
    pub fn abandon(mut self, status: RunStatus, reason: &str, series: Option<SamplerSeries>) {
        self.ended = true;
        if let Some(series) = &series {
            let _ = self.store.add_series(&self.uuid, series);
        }
        let _ = self.store.finish_run(&self.uuid, status, Some(reason));
    }

    /// The shared store went away mid-run: keep the whole run in the local store, with the same id.
    fn keep_locally(
        mut self,
        results: &[ResultRecord],
        series: Option<SamplerSeries>,
        status: RunStatus,
        reason: Option<String>,
        error: &str,
    ) -> Result<RecordedRun, StoreError> {
        let local_location = StoreLocation::Sqlite(default_store_path());
        let mut local = open_store(&local_location, true)?;
        let run = StoredRun {
            summary: RunSummary {
                uuid: self.uuid.clone(),
                workload: self.request.workload.clone(),
                label: self.request.label.clone(),
                tags: self.request.tags.clone(),
                host: self.fingerprint.os.hostname.clone(),
                started_at: self.started_at.clone(),
                ended_at: Some(now_utc()),
                status,
                status_reason: reason,
                result_count: results.len(),
                suite_id: self.request.suite_id.clone(),
                disturbed: results.iter().any(|r| r.flags.iter().any(|f| f == DISTURBED_FLAG)),
                submitter: None,
            },
            command_line: self.request.command_line.clone(),
            tool_version: envbench_core::TOOL_VERSION.to_string(),
            fingerprint_hash: self.fingerprint.hash(),
            fingerprint: self.fingerprint.clone(),
            results: results
                .iter()
                .map(|record| StoredResult { parameters_hash: record.parameters_hash(), record: record.clone() })
                .collect(),
            series,
            attachments: std::mem::take(&mut self.attachments),
        };
        local.import_run(&run)?;
        self.notices.push(format!(
            "warning: the shared store {} went away during the run ({error}); run {} {} is kept in {}",
            self.location.display(),
            self.uuid,
            status,
            local_location.display()
        ));
        self.notices.push(format!("push it later: envbench push --to {} {}", self.location.display(), self.uuid));
        let notices = std::mem::take(&mut self.notices);
        Ok(RecordedRun { uuid: self.uuid.clone(), status, location: local_location, notices })
    }
}

impl Drop for RunRecorder {
    /// A recorder dropped without `finish` (a panic, an early return) still ends its run.
    fn drop(&mut self) {
        if !self.ended {
            let _ = self.store.finish_run(
                &self.uuid,
                RunStatus::Failed,
                Some("ended by an error before results were stored"),
            );
        }
    }
}
