//! A workload run from start to stored end: the one place that opens the store, fingerprints the data directory,
//! runs the OS sampler, watches for Ctrl-C and SIGTERM, and records how the run ended.
//!
//! Whatever happens inside the workload, the run ends in the store as `complete`, `failed` (with the reason) or
//! `interrupted`, with every result that was finished and the sampler series up to that point.

use envbench_core::fingerprint::Fingerprint;
use envbench_core::model::{ResultRecord, RunRequest, RunStatus};
use envbench_core::sampler::{NoSteps, SamplerSeries, StepObserver};
use envbench_probe::{Host, Sampler, SamplerOptions, fingerprint, sampled_devices};
use envbench_store::{ResultStore, StoreLocation};
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
        let mut store = envbench_store::open_store(location, true)?;
        let devices = fingerprint.storage.as_ref().map(sampled_devices).unwrap_or_default();
        let uuid = store.begin_run(request, &fingerprint)?;
        let sampler = Sampler::start(host, SamplerOptions { interval: sample_interval, devices });
        Ok(RunSession {
            store,
            location: location.clone(),
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
        self.store.add_attachment(&self.uuid, name, document)?;
        Ok(())
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
        let stored = (|| -> anyhow::Result<()> {
            if !results.is_empty() {
                self.store.add_results(&self.uuid, results)?;
            }
            if let Some(series) = &series {
                self.store.add_series(&self.uuid, series)?;
            }
            Ok(())
        })();
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
        Ok(status)
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
