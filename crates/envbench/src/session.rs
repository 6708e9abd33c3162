//! A stored run in progress: the recorder (the store, with its fallback to the local store) and the OS sampler, and
//! the process-wide interrupt flag that Ctrl-C, SIGTERM, SIGHUP and SIGQUIT set.

use envbench_core::fingerprint::Fingerprint;
use envbench_core::model::{ResultRecord, RunRequest, RunStatus};
use envbench_core::sampler::{NoSteps, SamplerSeries, StepObserver};
use envbench_probe::{Host, Sampler, SamplerOptions, sampled_devices};
use envbench_store::{RecordedRun, RunRecorder, StoreLocation};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The signals that stop a run cleanly: Ctrl-C, a polite kill, a closed terminal or dropped ssh session (SIGHUP), and
/// Ctrl-\ (SIGQUIT, which would otherwise end the process without its cleanup and leave a 1 GiB test file behind).
pub const STOP_SIGNALS: [i32; 4] = [
    signal_hook::consts::SIGINT,
    signal_hook::consts::SIGTERM,
    signal_hook::consts::SIGHUP,
    signal_hook::consts::SIGQUIT,
];

/// The process-wide interrupt flag, set by the first of [`STOP_SIGNALS`]. A second one ends the process at once.
pub fn interrupt_flag() -> Arc<AtomicBool> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        for signal in STOP_SIGNALS {
            // Order matters: the conditional shutdown sees the flag before this signal sets it.
            let _ = signal_hook::flag::register_conditional_shutdown(signal, 130, Arc::clone(&flag));
            let _ = signal_hook::flag::register(signal, Arc::clone(&flag));
        }
        flag
    })
    .clone()
}

/// A run being recorded, with its sampler.
pub struct Session {
    recorder: RunRecorder,
    sampler: Option<Sampler>,
}

impl Session {
    /// Begin the run in the store and start sampling the devices under the fingerprinted directory every
    /// `sample_interval` (`drives_local_server`: the workload's own server runs on this machine, so its CPU is not
    /// other work). A measuring run (one with a sampler) whose shared store cannot be reached is kept in the local
    /// store; a fingerprint saved on its own is not measured again later, so its store's error is reported.
    pub fn start(
        location: &StoreLocation,
        request: &RunRequest,
        fingerprint: &Fingerprint,
        sample_interval: Option<Duration>,
        drives_local_server: bool,
    ) -> anyhow::Result<Session> {
        let mut recorder = RunRecorder::begin(location, request, fingerprint, sample_interval.is_some())?;
        for notice in recorder.take_notices() {
            eprintln!("{notice}");
        }
        let sampler = sample_interval.map(|interval| {
            let devices = fingerprint.storage.as_ref().map(sampled_devices).unwrap_or_default();
            Sampler::start(Host::live(), SamplerOptions { interval, devices, drives_local_server })
        });
        Ok(Session { recorder, sampler })
    }

    pub fn uuid(&self) -> &str {
        self.recorder.uuid()
    }

    /// Where to report step boundaries.
    pub fn steps(&self) -> &dyn StepObserver {
        match &self.sampler {
            Some(sampler) => sampler,
            None => &NoSteps,
        }
    }

    /// Stop sampling (the workload is over): what the sampler saw, if it ran.
    pub fn stop_sampling(&mut self) -> Option<SamplerSeries> {
        self.sampler.take().map(Sampler::finish)
    }

    /// Keep a named JSON document with the run.
    pub fn attach(&mut self, name: &str, document: &serde_json::Value) -> anyhow::Result<()> {
        Ok(self.recorder.attach(name, document)?)
    }

    /// Store the results and the series and end the run; say where it is kept.
    pub fn finish(
        self,
        results: &[ResultRecord],
        series: Option<SamplerSeries>,
        status: RunStatus,
        reason: Option<String>,
    ) -> anyhow::Result<RecordedRun> {
        let recorded = self.recorder.finish(results, series, status, reason)?;
        eprintln!("saved as run {} ({}) in {}", recorded.uuid, recorded.status, recorded.location.display());
        for notice in &recorded.notices {
            eprintln!("{notice}");
        }
        Ok(recorded)
    }

    /// End a run that measured nothing (an error before any result).
    pub fn abandon(self, status: RunStatus, reason: &str, series: Option<SamplerSeries>) {
        let uuid = self.uuid().to_string();
        let location = self.recorder.location().display();
        self.recorder.abandon(status, reason, series);
        eprintln!("saved as run {uuid} ({status}) in {location}");
    }
}
