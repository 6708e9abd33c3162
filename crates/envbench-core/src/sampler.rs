//! The OS sampler's data: iostat-style disk figures and CPU shares over an interval (specification section 2), who
//! else competed for the machine (pressure stall information, other processes' CPU) and whether that disturbed the
//! run (section 13), and the interface a workload uses to tell the sampler where its steps begin and end.
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
    /// Who else used the machine over the interval (absent in series stored before envbench recorded it).
    #[serde(default)]
    pub contention: Option<ContentionFigures>,
}

/// Figures over one whole step, computed from the counters at its start and end (not averaged from points).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StepSummary {
    pub step: String,
    pub start_ms: u64,
    pub end_ms: u64,
    pub cpu: CpuFigures,
    pub disks: Vec<DiskFigures>,
    /// Who else used the machine over the step (absent in series stored before envbench recorded it).
    #[serde(default)]
    pub contention: Option<ContentionFigures>,
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
    /// Who else used the machine over the whole run, the figures [`SamplerSeries::disturbance`] judges (absent in
    /// series stored before envbench recorded it).
    #[serde(default)]
    pub whole_run: Option<RunContention>,
    /// Said once when the kernel gives no pressure stall information (`/proc/pressure` missing: a kernel without PSI,
    /// or booted with `psi=0`): the run is then judged on steal and other processes' CPU alone.
    #[serde(default)]
    pub pressure_note: Option<String>,
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

    /// Whether other work disturbed this run, judged on its whole-run figures against the limits below
    /// ([`OTHER_CPU_LIMIT_PERCENT_OF_CORE`], [`STEAL_LIMIT_PERCENT`], [`CPU_PRESSURE_LIMIT_PERCENT`],
    /// [`IO_PRESSURE_LIMIT_PERCENT`]); `None` for an undisturbed run and for a series stored without those figures.
    pub fn disturbance(&self) -> Option<Disturbance> {
        self.whole_run.as_ref()?.disturbance(self.wall_seconds)
    }
}

/// The flag every result of a disturbed run carries, so comparisons show it in their cells.
pub const DISTURBED_FLAG: &str = "disturbed";

/// Other processes' CPU above this share of one CPU, averaged over the run, marks it disturbed. An idle Linux host's
/// daemons and kernel threads stay under about 5% of one CPU; kernel threads working for the run itself (writeback,
/// the filesystem journal, I/O completion) are counted as other processes too and stay under about 10% in envbench's
/// storage tests, hence the margin. On the 2-vCPU machines these benchmarks often run on, a quarter of a CPU is an
/// eighth of the machine: enough to move a latency test by tens of percent.
pub const OTHER_CPU_LIMIT_PERCENT_OF_CORE: f64 = 25.0;

/// CPU time the hypervisor gave to other guests above this share of all CPU time marks the run disturbed: a few
/// percent is the usual background of a shared host, more means the neighbours were busy while we measured.
pub const STEAL_LIMIT_PERCENT: f64 = 5.0;

/// Some task waited for a CPU (PSI `cpu some`) for more than this share of the run's wall time, while other
/// processes used at least [`OTHER_CPU_PRESENT_PERCENT_OF_CORE`]: the run's threads queued behind them. Without other
/// processes the waiting is the workload's own (more threads than CPUs), so pressure alone never marks a run.
pub const CPU_PRESSURE_LIMIT_PERCENT: f64 = 10.0;

/// Other processes' CPU from which CPU pressure counts as theirs (twice an idle host's background).
pub const OTHER_CPU_PRESENT_PERCENT_OF_CORE: f64 = 10.0;

/// All non-idle tasks stalled on I/O (PSI `io full`) for more than this share of the run's wall time marks it
/// disturbed only when the workload itself was no I/O source: it moved at most [`QUIET_STORAGE_BYTES_PER_S`] and
/// drove no local database server. A storage benchmark makes its own I/O pressure, so I/O pressure alone cannot say
/// someone else was there.
pub const IO_PRESSURE_LIMIT_PERCENT: f64 = 10.0;

/// Storage traffic of envbench's own process (and the children it waited for) at or below which the workload is no
/// I/O source: 256 KiB/s is what a shell or a logging daemon writes, far below any storage test.
pub const QUIET_STORAGE_BYTES_PER_S: f64 = 256.0 * 1024.0;

/// Stall time from the kernel's pressure stall information for one resource: microseconds in which at least one
/// (`some`) or every (`full`) non-idle task waited for it. Deltas of `/proc/pressure/*`'s `total=` counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StallTimes {
    pub some_us: u64,
    pub full_us: u64,
}

/// Stall times of CPU, I/O and memory over an interval (`/proc/pressure/cpu`, `io` and `memory`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Pressure {
    pub cpu: StallTimes,
    pub io: StallTimes,
    pub memory: StallTimes,
}

/// Who else used the machine over an interval: the CPU time every process used and envbench's own share, and the
/// kernel's stall times.
///
/// `busy_cpu_seconds` is /proc/stat's user, nice and system time over all CPUs (interrupts, iowait and steal are
/// not a process's). `own_cpu_seconds` is envbench's process (/proc/self/stat utime, stime, cutime, cstime): its
/// threads and the children it has waited for. A child still running (fio, pgbench, an exec step) counts only once it
/// is reaped, so an interval while it runs shows its CPU as other processes' and the interval it ends in makes up
/// for it; over a whole step or run that ends after its children, the figure is exact.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ContentionFigures {
    pub busy_cpu_seconds: f64,
    pub own_cpu_seconds: f64,
    /// `None` where the kernel gives no pressure stall information.
    pub pressure: Option<Pressure>,
}

impl ContentionFigures {
    /// CPU time of every other process, in seconds (never below zero).
    pub fn other_cpu_seconds(&self) -> f64 {
        (self.busy_cpu_seconds - self.own_cpu_seconds).max(0.0)
    }

    /// Other processes' CPU over `wall_seconds`, in percent of one CPU.
    pub fn other_cpu_percent_of_core(&self, wall_seconds: f64) -> f64 {
        percent_of(self.other_cpu_seconds(), wall_seconds)
    }
}

/// A stall time as a percentage of a wall time.
pub fn stall_percent(stall_us: u64, wall_seconds: f64) -> f64 {
    percent_of(stall_us as f64 / 1e6, wall_seconds)
}

fn percent_of(seconds: f64, wall_seconds: f64) -> f64 {
    if wall_seconds > 0.0 { 100.0 * seconds / wall_seconds } else { 0.0 }
}

/// The whole run's contention: what [`SamplerSeries::disturbance`] judges. Read at the start and at the end of the
/// run, with a look at every process then, so the CPU of envbench's children still running at the end counts as
/// its own.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunContention {
    /// Over the whole run; `own_cpu_seconds` includes envbench's children still running at the end.
    pub contention: ContentionFigures,
    /// CPU time the hypervisor gave to other guests, in percent of all CPU time (iostat's %steal over the run).
    pub steal_percent: f64,
    /// CPU time of database servers on this machine (processes named postgres, postmaster, mysqld or mariadbd, with
    /// the children they waited for), in seconds; part of `busy_cpu_seconds`.
    pub local_server_cpu_seconds: f64,
    /// The workload drives a database server on this machine: that server's CPU is the workload's, not a
    /// disturbance. Only workloads that connect to the server themselves know this; `exec` steps that drive a local
    /// server (pgbench, a client script) cannot say so, and the server's CPU then counts as other processes'.
    pub drives_local_server: bool,
    /// Bytes envbench's process (with the children it waited for) read from and wrote to storage (/proc/self/io's
    /// read_bytes plus write_bytes less cancelled_write_bytes); `None` where unreadable.
    pub own_storage_bytes: Option<u64>,
}

impl RunContention {
    /// Other processes' CPU in seconds: everyone's but envbench's and, when the workload drives it, the local
    /// database server's.
    pub fn other_cpu_seconds(&self) -> f64 {
        let excused = if self.drives_local_server { self.local_server_cpu_seconds } else { 0.0 };
        (self.contention.other_cpu_seconds() - excused).max(0.0)
    }

    /// The judgement behind [`SamplerSeries::disturbance`], over a run of `wall_seconds`.
    pub fn disturbance(&self, wall_seconds: f64) -> Option<Disturbance> {
        let other = percent_of(self.other_cpu_seconds(), wall_seconds);
        let pressure = self.contention.pressure;
        let cpu_pressure = pressure.map(|p| stall_percent(p.cpu.some_us, wall_seconds));
        let io_pressure = pressure.map(|p| stall_percent(p.io.full_us, wall_seconds));
        let quiet_storage = !self.drives_local_server
            && self.own_storage_bytes.is_some_and(|b| b as f64 <= QUIET_STORAGE_BYTES_PER_S * wall_seconds);
        let mut causes = Vec::new();
        let mut shown = Vec::new();
        if other > OTHER_CPU_LIMIT_PERCENT_OF_CORE {
            causes.push(format!("other processes used {other:.0}% of a CPU"));
        } else {
            shown.push(format!("other processes {other:.0}% of a CPU"));
        }
        if self.steal_percent > STEAL_LIMIT_PERCENT {
            causes.push(format!("the hypervisor stole {:.1}% of the CPU time", self.steal_percent));
        } else {
            shown.push(format!("steal {:.1}%", self.steal_percent));
        }
        match cpu_pressure {
            Some(cpu) if cpu > CPU_PRESSURE_LIMIT_PERCENT && other >= OTHER_CPU_PRESENT_PERCENT_OF_CORE => {
                causes.push(format!("tasks waited for a CPU {cpu:.0}% of the time"))
            }
            Some(cpu) => shown.push(format!("cpu pressure {cpu:.0}%")),
            None => shown.push("no pressure stall information".to_string()),
        }
        match io_pressure {
            Some(io) if io > IO_PRESSURE_LIMIT_PERCENT && quiet_storage => {
                causes.push(format!("all tasks stalled on I/O {io:.0}% of the time while envbench did almost none"))
            }
            Some(io) if io >= 1.0 => shown.push(format!("io pressure {io:.0}%")),
            _ => {}
        }
        if causes.is_empty() {
            return None;
        }
        Some(Disturbance {
            reason: format!("disturbed: {} ({})", causes.join("; "), shown.join(", ")),
            other_cpu_percent_of_core: other,
            steal_percent: self.steal_percent,
            cpu_pressure_percent: cpu_pressure,
            io_full_pressure_percent: io_pressure,
        })
    }
}

/// A run that other work disturbed: why, in words, and the figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Disturbance {
    /// E.g. "disturbed: other processes used 61% of a CPU (steal 0.0%, cpu pressure 18%)".
    pub reason: String,
    pub other_cpu_percent_of_core: f64,
    pub steal_percent: f64,
    /// Share of the run's wall time some task waited for a CPU; `None` without pressure stall information.
    pub cpu_pressure_percent: Option<f64>,
    /// Share of the run's wall time every task stalled on I/O; `None` without pressure stall information.
    pub io_full_pressure_percent: Option<f64>,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A 10-second run: envbench used `own` CPU-seconds of `busy`, with these stall times (µs) and steal.
    fn run(busy: f64, own: f64, cpu_some_us: u64, io_full_us: u64, steal_percent: f64) -> SamplerSeries {
        let pressure = Pressure {
            cpu: StallTimes { some_us: cpu_some_us, full_us: 0 },
            io: StallTimes { some_us: io_full_us, full_us: io_full_us },
            memory: StallTimes::default(),
        };
        SamplerSeries {
            wall_seconds: 10.0,
            whole_run: Some(RunContention {
                contention: ContentionFigures {
                    busy_cpu_seconds: busy,
                    own_cpu_seconds: own,
                    pressure: Some(pressure),
                },
                steal_percent,
                local_server_cpu_seconds: 0.0,
                drives_local_server: false,
                own_storage_bytes: Some(50 << 20),
            }),
            ..SamplerSeries::default()
        }
    }

    #[test]
    fn a_quiet_run_is_not_disturbed() {
        // A storage test on an idle host: envbench busy, 0.3 CPU-seconds of daemons and kernel threads in 10 s, its
        // own threads queueing a little, its own I/O stalling tasks.
        assert_eq!(run(12.3, 12.0, 400_000, 3_000_000, 0.4).disturbance(), None);
        // Stored before the figures existed.
        assert_eq!(SamplerSeries { wall_seconds: 10.0, ..SamplerSeries::default() }.disturbance(), None);
    }

    #[test]
    fn other_processes_cpu_past_a_quarter_of_a_cpu_disturbs() {
        let disturbance = run(8.1, 2.0, 1_800_000, 0, 0.0).disturbance().expect("61% of a CPU is past the limit");
        assert_eq!(
            disturbance.reason,
            "disturbed: other processes used 61% of a CPU; tasks waited for a CPU 18% of the time (steal 0.0%)"
        );
        assert!((disturbance.other_cpu_percent_of_core - 61.0).abs() < 1e-9);
        assert_eq!(disturbance.cpu_pressure_percent, Some(18.0));
        // Just under the limit, with little waiting: not disturbed.
        assert_eq!(run(4.4, 2.0, 500_000, 0, 0.0).disturbance(), None);
    }

    #[test]
    fn steal_past_five_percent_disturbs() {
        let disturbance = run(2.1, 2.0, 0, 0, 7.25).disturbance().unwrap();
        assert_eq!(
            disturbance.reason,
            "disturbed: the hypervisor stole 7.2% of the CPU time (other processes 1% of a CPU, cpu pressure 0%)"
        );
    }

    #[test]
    fn cpu_pressure_counts_only_with_other_processes_there() {
        // The workload's own threads outnumber the CPUs: pressure, but nobody else.
        assert_eq!(run(20.05, 20.0, 6_000_000, 0, 0.0).disturbance(), None);
        // Other processes used 15% of a CPU and the run's threads waited 30% of the time.
        let disturbance = run(21.5, 20.0, 3_000_000, 0, 0.0).disturbance().unwrap();
        assert_eq!(
            disturbance.reason,
            "disturbed: tasks waited for a CPU 30% of the time (other processes 15% of a CPU, steal 0.0%)"
        );
    }

    #[test]
    fn io_pressure_counts_only_when_the_workload_is_no_io_source() {
        // A storage test stalls everyone on its own I/O.
        assert_eq!(run(2.1, 2.0, 0, 5_000_000, 0.0).disturbance(), None);
        let mut quiet = run(2.1, 2.0, 0, 5_000_000, 0.0);
        quiet.whole_run.as_mut().unwrap().own_storage_bytes = Some(100 << 10);
        assert!(quiet.disturbance().unwrap().reason.contains("stalled on I/O 50% of the time"));
        // A local server the workload drives does its I/O for it.
        quiet.whole_run.as_mut().unwrap().drives_local_server = true;
        assert_eq!(quiet.disturbance(), None);
    }

    #[test]
    fn a_local_server_the_workload_drives_is_not_other_work() {
        let mut series = run(9.0, 2.0, 0, 0, 0.0);
        series.whole_run.as_mut().unwrap().local_server_cpu_seconds = 6.5;
        assert!(series.disturbance().is_some(), "a busy server the workload does not drive disturbs");
        series.whole_run.as_mut().unwrap().drives_local_server = true;
        assert_eq!(series.disturbance(), None);
    }

    #[test]
    fn without_pressure_stall_information_steal_and_other_cpu_decide() {
        let mut series = run(8.1, 2.0, 0, 0, 0.0);
        series.whole_run.as_mut().unwrap().contention.pressure = None;
        assert_eq!(
            series.disturbance().unwrap().reason,
            "disturbed: other processes used 61% of a CPU (steal 0.0%, no pressure stall information)"
        );
    }

    #[test]
    fn series_stored_before_contention_was_recorded_still_read() {
        let old = r#"{"interval_ms":1000,"devices":["vda"],"points":[{"t_ms":1000,"interval_ms":1000,"step":null,
            "cpu":{"user_percent":1,"nice_percent":0,"system_percent":1,"iowait_percent":0,"irq_percent":0,
            "steal_percent":0,"idle_percent":98},"disks":[]}],"steps":[],"own_cpu_seconds":0.001,"wall_seconds":1.0}"#;
        let series: SamplerSeries = serde_json::from_str(old).unwrap();
        assert_eq!((series.whole_run, series.points[0].contention), (None, None));
    }
}
