//! What a job did: each thread's counts, CPU time, latency and windows ([`ThreadResult`]), the job's totals
//! ([`JobResult`]), and the figures a measured run keeps ([`RunSample`]). The loop that fills them is the runner's.

use crate::engine::EngineKind;
use envbench_base::latency::{LatencyHistogram, LatencySummary};
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// What one thread completed in one window (a second, or what the job asked for) of its run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WindowFigures {
    pub ops: u64,
    pub bytes: u64,
    /// The 99th percentile latency of the I/Os completed in this window (0 when none completed).
    pub p99_ns: u64,
}

/// What one thread did.
#[derive(Clone, Debug)]
pub struct ThreadResult {
    pub thread_index: u32,
    /// Reads and writes completed (fdatasyncs are not I/Os; they are counted in `syncs`).
    pub ops: u64,
    pub read_ops: u64,
    pub write_ops: u64,
    pub syncs: u64,
    pub bytes: u64,
    /// From the barrier's release to the last completion.
    pub elapsed_ns: u64,
    /// This thread's user and system CPU time over the run (getrusage RUSAGE_THREAD).
    pub cpu_user_ns: u64,
    pub cpu_system_ns: u64,
    /// CPU time of the engine's helper threads over the run (thread pool workers).
    pub helper_cpu_ns: u64,
    /// The most requests this thread had in flight at once.
    pub max_in_flight: u32,
    pub latency: LatencyHistogram,
    /// When this thread had set up its engine and reached the barrier.
    pub ready_at: Instant,
    /// When it began issuing I/O: after the barrier, so never before every other thread was ready.
    pub started_at: Instant,
    /// Each whole window of the run from `started_at`, when the job asked for them (a window with no completion,
    /// a stall, has zero ops); the last, partial window is left out.
    pub windows: Vec<WindowFigures>,
}

impl ThreadResult {
    /// All CPU time spent for this thread's I/O.
    pub fn cpu_ns(&self) -> u64 {
        self.cpu_user_ns + self.cpu_system_ns + self.helper_cpu_ns
    }

    /// I/Os per second over this thread's own time.
    pub fn iops(&self) -> f64 {
        per_second(self.ops as f64, self.elapsed_ns)
    }
}

/// What a job did, per thread and in total.
#[derive(Clone, Debug)]
pub struct JobResult {
    pub engine: EngineKind,
    /// The engine and its features, e.g. `io_uring (registered file, registered buffers, ...)`.
    pub engine_detail: String,
    pub threads: Vec<ThreadResult>,
    /// True when the cancel flag stopped the job early.
    pub interrupted: bool,
}

fn per_second(count: f64, elapsed_ns: u64) -> f64 {
    if elapsed_ns == 0 { 0.0 } else { count * 1e9 / elapsed_ns as f64 }
}

impl JobResult {
    pub fn ops(&self) -> u64 {
        self.threads.iter().map(|t| t.ops).sum()
    }

    pub fn bytes(&self) -> u64 {
        self.threads.iter().map(|t| t.bytes).sum()
    }

    /// Wall time of the job: the longest thread (all start together at the barrier).
    pub fn elapsed_ns(&self) -> u64 {
        self.threads.iter().map(|t| t.elapsed_ns).max().unwrap_or(0)
    }

    pub fn iops(&self) -> f64 {
        per_second(self.ops() as f64, self.elapsed_ns())
    }

    /// Throughput in MB/s (10^6 bytes per second).
    pub fn mb_per_s(&self) -> f64 {
        per_second(self.bytes() as f64, self.elapsed_ns()) / 1e6
    }

    /// CPU time per I/O in microseconds: user + system of the job threads and their engines' helpers.
    pub fn cpu_per_io_us(&self) -> f64 {
        cpu_per_io_us(self.threads.iter().map(ThreadResult::cpu_ns).sum(), self.ops())
    }

    /// The job's figures of each whole window: operations and bytes summed over the threads, and the worst thread's
    /// p99 (exact for a one-thread job; threads start together at the barrier, so their windows line up).
    pub fn windows(&self) -> Vec<WindowFigures> {
        let windows = self.threads.iter().map(|t| t.windows.len()).min().unwrap_or(0);
        (0..windows)
            .map(|window| {
                self.threads.iter().fold(WindowFigures::default(), |sum, thread| {
                    let figures = thread.windows[window];
                    WindowFigures {
                        ops: sum.ops + figures.ops,
                        bytes: sum.bytes + figures.bytes,
                        p99_ns: sum.p99_ns.max(figures.p99_ns),
                    }
                })
            })
            .collect()
    }

    /// Every thread's latencies merged.
    pub fn latency(&self) -> LatencyHistogram {
        let mut merged = LatencyHistogram::new();
        for thread in &self.threads {
            merged.merge(&thread.latency);
        }
        merged
    }

    /// The figures kept for one measured run.
    pub fn sample(&self) -> RunSample {
        RunSample {
            elapsed_ms: self.elapsed_ns() as f64 / 1e6,
            ops: self.ops(),
            bytes: self.bytes(),
            iops: self.iops(),
            mb_per_s: self.mb_per_s(),
            latency: self.latency().summary(),
            cpu_per_io_us: self.cpu_per_io_us(),
            threads: self
                .threads
                .iter()
                .map(|t| ThreadSample {
                    ops: t.ops,
                    iops: t.iops(),
                    latency: t.latency.summary(),
                    cpu_per_io_us: cpu_per_io_us(t.cpu_ns(), t.ops),
                    max_in_flight: t.max_in_flight,
                })
                .collect(),
        }
    }
}

fn cpu_per_io_us(cpu_ns: u64, ops: u64) -> f64 {
    if ops == 0 { 0.0 } else { cpu_ns as f64 / ops as f64 / 1000.0 }
}

/// The figures of one measured run (serializable; the raw samples of the results).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSample {
    pub elapsed_ms: f64,
    pub ops: u64,
    pub bytes: u64,
    pub iops: f64,
    /// 10^6 bytes per second.
    pub mb_per_s: f64,
    pub latency: LatencySummary,
    pub cpu_per_io_us: f64,
    /// Per thread, in thread order (empty for figures that come from fio).
    pub threads: Vec<ThreadSample>,
}

/// One thread's figures in a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThreadSample {
    pub ops: u64,
    pub iops: f64,
    pub latency: LatencySummary,
    pub cpu_per_io_us: f64,
    pub max_in_flight: u32,
}
