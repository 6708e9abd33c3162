//! The OS sampler's data: iostat-style disk figures and CPU shares over an interval (specification section 2), and
//! the interface a workload uses to tell the sampler where its steps begin and end.
//!
//! `envbench-probe` owns the sampler thread; workloads only see [`StepObserver`], so they stay free of probing code.

use serde::{Deserialize, Serialize};

/// iostat's extended device figures for one device over one interval. MB/s are 10^6 bytes per second.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DiskFigures {
    pub device: String,
    pub reads_per_s: f64,
    pub writes_per_s: f64,
    pub read_mb_per_s: f64,
    pub write_mb_per_s: f64,
    /// Average read request size in KiB (iostat's rareq-sz).
    pub read_request_kib: f64,
    /// Average write request size in KiB (iostat's wareq-sz).
    pub write_request_kib: f64,
    pub read_await_ms: f64,
    pub write_await_ms: f64,
    /// Average queue size (iostat's aqu-sz).
    pub queue_size: f64,
    pub util_percent: f64,
}

/// CPU time shares over one interval, in percent of all CPUs (iostat's avg-cpu).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuFigures {
    pub user_percent: f64,
    pub nice_percent: f64,
    pub system_percent: f64,
    pub iowait_percent: f64,
    pub irq_percent: f64,
    pub steal_percent: f64,
    pub idle_percent: f64,
}

/// One sampler interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SamplerPoint {
    /// Milliseconds from the start of sampling to the end of this interval.
    pub t_ms: u64,
    /// Length of the interval in milliseconds.
    pub interval_ms: u64,
    /// The step running at the end of the interval, if any.
    pub step: Option<String>,
    pub cpu: CpuFigures,
    pub disks: Vec<DiskFigures>,
}

/// Figures over one whole step, computed from the counters at its start and end (not averaged from points).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StepSummary {
    pub step: String,
    pub start_ms: u64,
    pub end_ms: u64,
    pub cpu: CpuFigures,
    pub disks: Vec<DiskFigures>,
}

/// Everything the sampler saw during a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SamplerSeries {
    pub interval_ms: u64,
    /// The devices watched, top of the storage chain first.
    pub devices: Vec<String>,
    pub points: Vec<SamplerPoint>,
    pub steps: Vec<StepSummary>,
    /// CPU time the sampler thread itself used, in seconds (user + system).
    pub own_cpu_seconds: f64,
    /// Wall time the sampler ran, in seconds.
    pub wall_seconds: f64,
}

impl SamplerSeries {
    /// The sampler's own cost as a percentage of one core.
    pub fn own_cost_percent_of_core(&self) -> f64 {
        if self.wall_seconds > 0.0 { 100.0 * self.own_cpu_seconds / self.wall_seconds } else { 0.0 }
    }

    /// The summary of a named step, if it was marked.
    pub fn step(&self, name: &str) -> Option<&StepSummary> {
        self.steps.iter().find(|s| s.step == name)
    }
}

/// What a workload tells the sampler: a named step starts or ends. Steps do not nest; starting a step ends the
/// previous one.
pub trait StepObserver: Send + Sync {
    fn step_started(&self, step: &str);
    fn step_finished(&self, step: &str);
}

/// An observer that ignores everything, for workloads run without a sampler (unit tests, library use).
pub struct NoSteps;

impl StepObserver for NoSteps {
    fn step_started(&self, _step: &str) {}
    fn step_finished(&self, _step: &str) {}
}
