//! A run as the driver sees it: planned ([`Planned`]), run with a [`RunContext`] (step observer, interrupt flag,
//! fingerprint, [`Progress`]), what it [`Measured`] and how it ended ([`Ending`]), and the [`WorkloadError`] that ends
//! it otherwise, whose [`ErrorKind`] decides the exit status.

use crate::fingerprint::Fingerprint;
use crate::model::ResultRecord;
use crate::sampler::{SamplerSeries, StepObserver};
use serde_json::{Map, Value};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whose an error is, which decides the exit status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The user called envbench wrongly (exit status 2): nothing is stored when it is found while planning.
    Usage,
    /// The run could not do its work (exit status 1).
    Failure,
    /// The user stopped the run with Ctrl-C or SIGTERM (exit status 130).
    Interrupted,
}

/// An error of a workload, with its kind and a message that says what was wrong and what to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkloadError {
    kind: ErrorKind,
    message: String,
}

impl WorkloadError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> WorkloadError {
        WorkloadError { kind, message: message.into() }
    }

    /// A mistake in how envbench was called.
    pub fn usage(message: impl Into<String>) -> WorkloadError {
        WorkloadError::new(ErrorKind::Usage, message)
    }

    /// The work could not be done.
    pub fn failure(message: impl Into<String>) -> WorkloadError {
        WorkloadError::new(ErrorKind::Failure, message)
    }

    /// The user stopped the run.
    pub fn interrupted() -> WorkloadError {
        WorkloadError::new(ErrorKind::Interrupted, "interrupted by a signal (SIGINT, SIGTERM, SIGHUP or SIGQUIT)")
    }

    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    /// The process exit status this error ends envbench with.
    pub fn exit_status(&self) -> u8 {
        match self.kind {
            ErrorKind::Usage => 2,
            ErrorKind::Failure => 1,
            ErrorKind::Interrupted => 130,
        }
    }
}

impl std::fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for WorkloadError {}

/// Progress a workload shows while it runs, on standard error. Silent under `--json`, except warnings.
pub trait Progress: Sync {
    /// Redraw the one live progress line (shown only on a terminal).
    fn update(&self, text: &str);
    /// A finished line of progress.
    fn line(&self, text: &str);
    /// A warning the user must see, even under `--json`.
    fn warn(&self, text: &str);
}

/// Progress that goes nowhere: for tests and library use.
pub struct Silent;

impl Progress for Silent {
    fn update(&self, _: &str) {}
    fn line(&self, _: &str) {}
    fn warn(&self, _: &str) {}
}

/// What the driver gives a running workload.
pub struct RunContext<'a> {
    /// Where to report step boundaries (the OS sampler summarizes each step).
    pub steps: &'a dyn StepObserver,
    /// Set when the user asked to stop; workloads poll it.
    pub interrupt: &'a AtomicBool,
    /// The environment, fingerprinted under [`Planned::data_dir`].
    pub fingerprint: &'a Fingerprint,
    pub progress: &'a dyn Progress,
}

impl RunContext<'_> {
    /// True once the user asked to stop.
    pub fn interrupted(&self) -> bool {
        self.interrupt.load(Ordering::SeqCst)
    }
}

/// How much of the lifecycle a run takes part in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recording {
    /// Stored with the OS sampler's series (every measuring workload).
    Sampled,
    /// Stored, without a sampler (a fingerprint saved on its own).
    Unsampled,
    /// Printed only; no store is opened.
    NotStored,
}

/// How a run that did its work ends in the store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    /// Everything worked (exit status 0).
    Complete,
    /// Stored as complete, but not everything worked (failed queries): exit status 1 with this reason.
    CompleteWithFailures(String),
    /// Stored as failed with this reason (exit status 1); the results that were measured are kept.
    Failed(String),
}

/// A run checked and planned by `Workload::plan`; nothing is created before [`Planned::run`].
pub trait Planned {
    /// The directory whose storage the fingerprint describes and the sampler watches.
    fn data_dir(&self) -> &Path;

    fn recording(&self) -> Recording {
        Recording::Sampled
    }

    /// One line saying what is about to happen, printed on standard error (not under `--json`).
    fn announce(&self) -> Option<String> {
        None
    }

    /// Whether the run drives a database server on this machine (a local server URL): that server's CPU is then the
    /// workload's, not other work disturbing it ([`crate::sampler::RunContention::drives_local_server`]).
    fn drives_local_server(&self) -> bool {
        false
    }

    /// Do the work. An error ends the run as failed (or interrupted); partial work that was measured before an
    /// interrupt comes back as `Ok`, and the driver stores it as interrupted.
    fn run(self: Box<Self>, context: &RunContext<'_>) -> Result<Box<dyn Measured>, WorkloadError>;
}

/// The run's id and the sampler series, for the JSON a workload prints under `--json`.
pub struct Envelope<'a> {
    pub run: Option<&'a str>,
    pub sampler: Option<&'a SamplerSeries>,
}

impl Envelope<'_> {
    /// `{"run": id, <fields>, "sampler": series}`, the shape every workload's JSON takes.
    pub fn wrap<'k>(&self, fields: impl IntoIterator<Item = (&'k str, Value)>) -> Value {
        let mut map = Map::new();
        if let Some(run) = self.run {
            map.insert("run".into(), Value::String(run.to_string()));
        }
        for (key, value) in fields {
            map.insert(key.to_string(), value);
        }
        if let Some(series) = self.sampler {
            map.insert("sampler".into(), serde_json::to_value(series).expect("a series serializes"));
        }
        Value::Object(map)
    }
}

/// What a run measured. Its methods are called once the sampler has stopped, with what the sampler saw.
pub trait Measured {
    /// The results to store (one per metric of each test, with every raw sample).
    fn records(&self, series: &SamplerSeries) -> Vec<ResultRecord>;

    /// The run's whole outcome and the key `--json` prints it under (`("cube", outcome)`). Where what is kept with
    /// the run and what `--json` prints are that one document, [`Measured::attachment`] and [`Measured::json`]
    /// need nothing more.
    fn document(&self) -> Option<(&'static str, Value)> {
        None
    }

    /// The document kept with the run under the workload's name (its whole outcome), if any: by default
    /// [`Measured::document`].
    fn attachment(&self) -> Option<Value> {
        self.document().map(|(_, document)| document)
    }

    /// What `--json` prints: by default [`Measured::document`] under its key, with the run and the sampler's series.
    fn json(&self, envelope: &Envelope<'_>) -> Value {
        envelope.wrap(self.document())
    }

    /// The human view: tables and verdicts, for standard output.
    fn render(&self, series: &SamplerSeries) -> String;

    /// Warnings about the figures (a cache inflated them, ...), printed on standard error.
    fn warnings(&self, _series: &SamplerSeries) -> Vec<String> {
        Vec::new()
    }

    fn ending(&self) -> Ending {
        Ending::Complete
    }

    /// Documents kept with the run beside [`Measured::attachment`], by name (a fleet run's `fleet`).
    fn extra_attachments(&self) -> Vec<(String, Value)> {
        Vec::new()
    }

    /// Lines for standard error after the run is stored, such as the last output of a failed step.
    fn epilogue(&self) -> Vec<String> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_carry_their_exit_status() {
        assert_eq!(WorkloadError::usage("x").exit_status(), 2);
        assert_eq!(WorkloadError::failure("x").exit_status(), 1);
        assert_eq!(WorkloadError::interrupted().exit_status(), 130);
    }

    #[test]
    fn the_envelope_puts_run_and_sampler_around_the_fields() {
        let series = SamplerSeries::default();
        let envelope = Envelope { run: Some("abc"), sampler: Some(&series) };
        let value = envelope.wrap([("outcome", Value::Bool(true))]);
        assert_eq!(value["run"], "abc");
        assert_eq!(value["outcome"], true);
        assert!(value["sampler"].is_object());
    }
}
