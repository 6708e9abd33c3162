//! A workload run from start to stored end: the one place that opens the store, fingerprints the data directory,
//! runs the OS sampler, watches for Ctrl-C and SIGTERM, and records how the run ended.
//!
//! Whatever happens inside the workload, the run ends in the store as `complete`, `failed` (with the reason) or
//! `interrupted`, with every result that was finished and the sampler series up to that point.

use envbench_core::fingerprint::Fingerprint;
use envbench_core::model::{ResultRecord, RunRequest, RunStatus};
use envbench_core::sampler::{NoSteps, SamplerSeries, StepObserver};
use envbench_probe::{Host, Sampler, SamplerOptions, fingerprint, sampled_devices};
use envbench_store::{
    ResultStore, RunSummary, StoreError, StoreLocation, StoredResult, StoredRun, default_store_path, open_store,
};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The process-wide interrupt flag, set by the first SIGINT or SIGTERM. A second SIGINT ends the process at once.
pub fn interrupt_flag() -> Arc<AtomicBool> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            // Order matters: the conditional shutdown sees the flag before this signal sets it.
            let _ = signal_hook::flag::register_conditional_shutdown(signal, 130, Arc::clone(&flag));
            let _ = signal_hook::flag::register(signal, Arc::clone(&flag));
        }
        flag
    })
    .clone()
}

/// How a workload ended, as the workload saw it.
pub enum Ending {
    Complete,
    Failed(String),
}

/// A run in progress.
pub struct RunSession {
    store: Box<dyn ResultStore>,
    location: StoreLocation,
    /// A shared store that could not be reached when the run began: the run is kept locally instead.
    unreachable_shared: Option<StoreLocation>,
    request: RunRequest,
    started_at: String,
    /// Kept here too, so a run can move to the local store if the shared one goes away mid-run.
    attachments: BTreeMap<String, serde_json::Value>,
    uuid: String,
    sampler: Option<Sampler>,
    series: Option<SamplerSeries>,
    interrupted: Arc<AtomicBool>,
    pub fingerprint: Fingerprint,
}

impl RunSession {
    /// Open the store, fingerprint the machine and the storage under `data_dir`, begin the run, start sampling.
    pub fn start(
        location: &StoreLocation,
        request: &RunRequest,
        data_dir: &Path,
        sample_interval: Duration,
    ) -> anyhow::Result<RunSession> {
        let interrupted = interrupt_flag();
        // Probing first: a wrong data directory is a usage error that must not create a store.
        let host = Host::live();
        let fingerprint = fingerprint(&host, Some(data_dir)).map_err(|e| crate::usage(e.to_string()))?;
        let (mut store, location, unreachable_shared) = match open_store(location, true) {
            Ok(store) => (store, location.clone(), None),
            Err(error) if is_unreachable(location, &error) => {
                let local = StoreLocation::Sqlite(default_store_path());
                eprintln!(
                    "warning: the shared store {} cannot be reached ({error}); this run is kept in {} instead",
                    location.display(),
                    local.display()
                );
                (open_store(&local, true)?, local, Some(location.clone()))
            }
            Err(error) => return Err(error.into()),
        };
        let devices = fingerprint.storage.as_ref().map(sampled_devices).unwrap_or_default();
        let started_at = envbench_core::model::now_utc();
        let uuid = store.begin_run(request, &fingerprint)?;
        let sampler = Sampler::start(host, SamplerOptions { interval: sample_interval, devices });
        Ok(RunSession {
            store,
            location,
            unreachable_shared,
            request: request.clone(),
            started_at,
            attachments: BTreeMap::new(),
            uuid,
            sampler: Some(sampler),
            series: None,
            interrupted,
            fingerprint,
        })
    }

    /// The run's id.
    pub fn uuid(&self) -> &str {
        &self.uuid
    }

    /// Set when the user asked to stop; workloads poll it.
    pub fn interrupt(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.interrupted)
    }

    /// Where to report step boundaries.
    pub fn steps(&self) -> &dyn StepObserver {
        match &self.sampler {
            Some(sampler) => sampler,
            None => &NoSteps,
        }
    }

    /// Stop sampling (the workload is over) and look at what the sampler saw.
    pub fn stop_sampling(&mut self) -> &SamplerSeries {
        if let Some(sampler) = self.sampler.take() {
            self.series = Some(sampler.finish());
        }
        self.series.get_or_insert_with(SamplerSeries::default)
    }

    /// Keep a named JSON document with the run.
    pub fn attach(&mut self, name: &str, document: &serde_json::Value) -> anyhow::Result<()> {
        self.attachments.insert(name.to_string(), document.clone());
        match self.store.add_attachment(&self.uuid, name, document) {
            // A shared store that went away: finish() moves the whole run to the local store.
            Err(error) if is_unreachable(&self.location, &error) => Ok(()),
            other => Ok(other?),
        }
    }

    /// Store the results and the sampler series and end the run. An interrupt seen at any point wins over the
    /// workload's own ending. Returns the status recorded.
    pub fn finish(mut self, results: &[ResultRecord], ending: Ending) -> anyhow::Result<RunStatus> {
        self.stop_sampling();
        let series = self.series.take();
        let (status, reason) = if self.interrupted.load(Ordering::SeqCst) {
            (RunStatus::Interrupted, Some("interrupted by the user (SIGINT/SIGTERM)".to_string()))
        } else {
            match ending {
                Ending::Complete => (RunStatus::Complete, None),
                Ending::Failed(reason) => (RunStatus::Failed, Some(reason)),
            }
        };
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
            && is_unreachable(&self.location, error)
        {
            let error = error.to_string();
            return self.keep_locally(results, series, status, reason, &error);
        }
        // The run ends in the store even when keeping its results failed, so it never stays `running`.
        let reason = match (&stored, reason) {
            (Err(e), Some(r)) => Some(format!("{r}; results not stored: {e}")),
            (Err(e), None) => Some(format!("results not stored: {e}")),
            (Ok(()), r) => r,
        };
        let status = if stored.is_err() && status == RunStatus::Complete { RunStatus::Failed } else { status };
        self.store.finish_run(&self.uuid, status, reason.as_deref())?;
        stored?;
        eprintln!("run {} {} in {}", self.uuid, status, self.location.display());
        if let Some(shared) = &self.unreachable_shared {
            eprintln!("push it to the shared store later: envbench push --to {} {}", shared.display(), self.uuid);
        }
        Ok(status)
    }

    /// The shared store went away mid-run: keep the whole run in the local store, with the same id, and say how to
    /// push it later.
    fn keep_locally(
        &mut self,
        results: &[ResultRecord],
        series: Option<SamplerSeries>,
        status: RunStatus,
        reason: Option<String>,
        error: &str,
    ) -> anyhow::Result<RunStatus> {
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
                ended_at: Some(envbench_core::model::now_utc()),
                status,
                status_reason: reason,
                result_count: results.len(),
                suite_id: self.request.suite_id.clone(),
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
        eprintln!(
            "warning: the shared store {} went away during the run ({error}); run {} {} is kept in {}",
            self.location.display(),
            self.uuid,
            status,
            local_location.display()
        );
        eprintln!("push it later: envbench push --to {} {}", self.location.display(), self.uuid);
        Ok(status)
    }
}

/// True for errors that mean a shared (PostgreSQL) store cannot be reached right now.
fn is_unreachable(location: &StoreLocation, error: &StoreError) -> bool {
    matches!(location, StoreLocation::Postgres(_))
        && match error {
            StoreError::Unreachable { .. } => true,
            StoreError::Postgres(e) => e.is_closed() || e.as_db_error().is_none(),
            _ => false,
        }
}

impl Drop for RunSession {
    /// A session dropped without `finish` (an early `?` in a command) still ends its run.
    fn drop(&mut self) {
        if self.sampler.is_some() || self.series.is_some() {
            let series = self.stop_sampling().clone();
            self.series = None;
            let _ = self.store.add_series(&self.uuid, &series);
            let status =
                if self.interrupted.load(Ordering::SeqCst) { RunStatus::Interrupted } else { RunStatus::Failed };
            let _ = self.store.finish_run(&self.uuid, status, Some("ended by an error before results were stored"));
        }
    }
}
