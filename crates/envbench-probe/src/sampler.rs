//! The OS sampler: a background thread that reads `/proc/diskstats` and `/proc/stat` every interval and turns the
//! counter deltas into iostat's figures (sysstat's formulas; sectors are 512 bytes, MB are 10^6 bytes).
//!
//! Steps are marked from the workload's thread through [`StepObserver`]; each mark snapshots the counters right
//! there, so a step's summary covers exactly the step, not whole sampler intervals. The thread measures its own CPU
//! time (`RUSAGE_THREAD`) so every run records what sampling cost.

use crate::host::Host;
use envbench_core::sampler::{CpuFigures, DiskFigures, SamplerPoint, SamplerSeries, StepObserver, StepSummary};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What to sample and how often.
#[derive(Clone, Debug)]
pub struct SamplerOptions {
    /// Time between points (default 1 s).
    pub interval: Duration,
    /// Kernel device names to watch (see [`crate::sampled_devices`]).
    pub devices: Vec<String>,
}

impl Default for SamplerOptions {
    fn default() -> Self {
        SamplerOptions { interval: Duration::from_secs(1), devices: Vec::new() }
    }
}

/// The raw counters of one device (diskstats fields 4-14).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct DiskCounters {
    reads: u64,
    read_sectors: u64,
    read_ticks_ms: u64,
    writes: u64,
    write_sectors: u64,
    write_ticks_ms: u64,
    io_ticks_ms: u64,
    queue_ticks_ms: u64,
}

/// The aggregate `cpu` line of /proc/stat, in clock ticks.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct CpuCounters {
    user: u64,
    nice: u64,
    system: u64,
    idle: u64,
    iowait: u64,
    irq: u64,
    softirq: u64,
    steal: u64,
}

#[derive(Clone, Debug)]
struct Snapshot {
    at: Instant,
    cpu: CpuCounters,
    disks: Vec<Option<DiskCounters>>,
}

struct State {
    stop: bool,
    points: Vec<SamplerPoint>,
    steps: Vec<StepSummary>,
    current: Option<(String, Snapshot)>,
}

struct Shared {
    host: Host,
    devices: Vec<String>,
    started: Instant,
    state: Mutex<State>,
    wake: Condvar,
}

/// A running sampler. Mark steps through its [`StepObserver`] implementation; [`Sampler::finish`] stops it and returns
/// the series.
pub struct Sampler {
    shared: Arc<Shared>,
    interval: Duration,
    thread: Option<JoinHandle<f64>>,
}

impl Sampler {
    /// Start sampling in a background thread.
    pub fn start(host: Host, options: SamplerOptions) -> Sampler {
        let shared = Arc::new(Shared {
            host,
            devices: options.devices,
            started: Instant::now(),
            state: Mutex::new(State { stop: false, points: Vec::new(), steps: Vec::new(), current: None }),
            wake: Condvar::new(),
        });
        let interval = options.interval.max(Duration::from_millis(10));
        let thread_shared = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("envbench-sampler".into())
            .spawn(move || sample_loop(&thread_shared, interval))
            .expect("spawning the sampler thread");
        Sampler { shared, interval, thread: Some(thread) }
    }

    /// Stop the thread, close any open step, and return everything sampled.
    pub fn finish(mut self) -> SamplerSeries {
        self.stop()
    }

    fn stop(&mut self) -> SamplerSeries {
        {
            let mut state = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
            state.stop = true;
            if let Some((name, start)) = state.current.take() {
                let end = self.shared.snapshot();
                let summary = self.shared.step_summary(name, &start, &end);
                state.steps.push(summary);
            }
        }
        self.shared.wake.notify_all();
        let own_cpu_seconds = self.thread.take().and_then(|t| t.join().ok()).unwrap_or(0.0);
        let mut state = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        SamplerSeries {
            interval_ms: self.interval.as_millis() as u64,
            devices: self.shared.devices.clone(),
            points: std::mem::take(&mut state.points),
            steps: std::mem::take(&mut state.steps),
            own_cpu_seconds,
            wall_seconds: self.shared.started.elapsed().as_secs_f64(),
        }
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.stop();
        }
    }
}

impl StepObserver for Sampler {
    fn step_started(&self, step: &str) {
        let snapshot = self.shared.snapshot();
        let mut state = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((name, start)) = state.current.take() {
            let summary = self.shared.step_summary(name, &start, &snapshot);
            state.steps.push(summary);
        }
        state.current = Some((step.to_string(), snapshot));
    }

    fn step_finished(&self, step: &str) {
        let snapshot = self.shared.snapshot();
        let mut state = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.current.as_ref().is_some_and(|(name, _)| name == step) {
            let (name, start) = state.current.take().expect("checked above");
            let summary = self.shared.step_summary(name, &start, &snapshot);
            state.steps.push(summary);
        }
    }
}

fn sample_loop(shared: &Shared, interval: Duration) -> f64 {
    let mut previous = shared.snapshot();
    let mut tick: u32 = 1;
    loop {
        // Ticks are scheduled from the start so the series does not drift.
        let deadline = shared.started + interval * tick;
        let mut state = shared.state.lock().unwrap_or_else(|e| e.into_inner());
        while !state.stop {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            state = shared.wake.wait_timeout(state, deadline - now).unwrap_or_else(|e| e.into_inner()).0;
        }
        if state.stop {
            break;
        }
        let step = state.current.as_ref().map(|(name, _)| name.clone());
        drop(state);
        let current = shared.snapshot();
        let point = SamplerPoint {
            t_ms: current.at.duration_since(shared.started).as_millis() as u64,
            interval_ms: current.at.duration_since(previous.at).as_millis() as u64,
            step,
            cpu: cpu_figures(&previous.cpu, &current.cpu),
            disks: shared.disk_figures(&previous, &current),
        };
        shared.state.lock().unwrap_or_else(|e| e.into_inner()).points.push(point);
        previous = current;
        // Skip ticks we overslept (a stalled machine) instead of sampling in a burst.
        let elapsed = shared.started.elapsed();
        tick = (elapsed.as_nanos() / interval.as_nanos()) as u32 + 1;
    }
    own_cpu_seconds()
}

impl Shared {
    fn snapshot(&self) -> Snapshot {
        let at = Instant::now();
        let cpu = self.host.read("/proc/stat").map(|t| parse_cpu(&t)).unwrap_or_default();
        let diskstats = self.host.read("/proc/diskstats").unwrap_or_default();
        let disks = self.devices.iter().map(|device| parse_diskstats(&diskstats, device)).collect();
        Snapshot { at, cpu, disks }
    }

    fn disk_figures(&self, a: &Snapshot, b: &Snapshot) -> Vec<DiskFigures> {
        let seconds = b.at.duration_since(a.at).as_secs_f64();
        self.devices
            .iter()
            .zip(a.disks.iter().zip(&b.disks))
            .filter_map(|(device, pair)| match pair {
                (Some(x), Some(y)) => Some(disk_figures(device, x, y, seconds)),
                _ => None,
            })
            .collect()
    }

    fn step_summary(&self, step: String, start: &Snapshot, end: &Snapshot) -> StepSummary {
        StepSummary {
            step,
            start_ms: start.at.duration_since(self.started).as_millis() as u64,
            end_ms: end.at.duration_since(self.started).as_millis() as u64,
            cpu: cpu_figures(&start.cpu, &end.cpu),
            disks: self.disk_figures(start, end),
        }
    }
}

fn parse_cpu(stat: &str) -> CpuCounters {
    let Some(line) = stat.lines().find(|l| l.starts_with("cpu ")) else { return CpuCounters::default() };
    let values: Vec<u64> = line.split_whitespace().skip(1).map(|v| v.parse().unwrap_or(0)).collect();
    let at = |i: usize| values.get(i).copied().unwrap_or(0);
    CpuCounters {
        user: at(0),
        nice: at(1),
        system: at(2),
        idle: at(3),
        iowait: at(4),
        irq: at(5),
        softirq: at(6),
        steal: at(7),
    }
}

fn parse_diskstats(text: &str, device: &str) -> Option<DiskCounters> {
    text.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 14 || fields[2] != device {
            return None;
        }
        let at = |i: usize| fields[i].parse::<u64>().unwrap_or(0);
        Some(DiskCounters {
            reads: at(3),
            read_sectors: at(5),
            read_ticks_ms: at(6),
            writes: at(7),
            write_sectors: at(9),
            write_ticks_ms: at(10),
            io_ticks_ms: at(12),
            queue_ticks_ms: at(13),
        })
    })
}

fn cpu_figures(a: &CpuCounters, b: &CpuCounters) -> CpuFigures {
    let d = |x: u64, y: u64| y.wrapping_sub(x) as f64;
    let user = d(a.user, b.user);
    let nice = d(a.nice, b.nice);
    let system = d(a.system, b.system);
    let idle = d(a.idle, b.idle);
    let iowait = d(a.iowait, b.iowait);
    let irq = d(a.irq, b.irq) + d(a.softirq, b.softirq);
    let steal = d(a.steal, b.steal);
    let total = user + nice + system + idle + iowait + irq + steal;
    if total <= 0.0 {
        return CpuFigures { idle_percent: 100.0, ..CpuFigures::default() };
    }
    let pct = |v: f64| 100.0 * v / total;
    CpuFigures {
        user_percent: pct(user),
        nice_percent: pct(nice),
        system_percent: pct(system),
        iowait_percent: pct(iowait),
        irq_percent: pct(irq),
        steal_percent: pct(steal),
        idle_percent: pct(idle),
    }
}

fn disk_figures(device: &str, a: &DiskCounters, b: &DiskCounters, seconds: f64) -> DiskFigures {
    let d = |x: u64, y: u64| y.wrapping_sub(x) as f64;
    let reads = d(a.reads, b.reads);
    let writes = d(a.writes, b.writes);
    let read_bytes = d(a.read_sectors, b.read_sectors) * 512.0;
    let write_bytes = d(a.write_sectors, b.write_sectors) * 512.0;
    let per = |v: f64, n: f64| if n > 0.0 { v / n } else { 0.0 };
    let elapsed_ms = seconds * 1000.0;
    let per_second = |v: f64| if seconds > 0.0 { v / seconds } else { 0.0 };
    DiskFigures {
        device: device.to_string(),
        reads_per_s: per_second(reads),
        writes_per_s: per_second(writes),
        read_mb_per_s: per_second(read_bytes) / 1e6,
        write_mb_per_s: per_second(write_bytes) / 1e6,
        read_request_kib: per(read_bytes / 1024.0, reads),
        write_request_kib: per(write_bytes / 1024.0, writes),
        read_await_ms: per(d(a.read_ticks_ms, b.read_ticks_ms), reads),
        write_await_ms: per(d(a.write_ticks_ms, b.write_ticks_ms), writes),
        queue_size: per(d(a.queue_ticks_ms, b.queue_ticks_ms), elapsed_ms),
        util_percent: (100.0 * per(d(a.io_ticks_ms, b.io_ticks_ms), elapsed_ms)).min(100.0),
    }
}

/// CPU time (user + system) the calling thread has used.
fn own_cpu_seconds() -> f64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a full rusage into the buffer we own.
    let ok = unsafe { libc::getrusage(libc::RUSAGE_THREAD, usage.as_mut_ptr()) } == 0;
    if !ok {
        return 0.0;
    }
    // SAFETY: initialized by the successful call above.
    let usage = unsafe { usage.assume_init() };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DISKSTATS_A: &str = "   8       0 sda 1000 0 80000 500 2000 0 160000 4000 0 3000 4500 0 0 0 0\n";
    const DISKSTATS_B: &str = "   8       0 sda 1100 0 88000 600 2400 0 192000 4800 2 3500 5400 0 0 0 0\n";

    #[test]
    fn iostat_formulas_over_one_second() {
        let a = parse_diskstats(DISKSTATS_A, "sda").unwrap();
        let b = parse_diskstats(DISKSTATS_B, "sda").unwrap();
        let f = disk_figures("sda", &a, &b, 1.0);
        assert_eq!(f.reads_per_s, 100.0);
        assert_eq!(f.writes_per_s, 400.0);
        assert_eq!(f.read_mb_per_s, 8000.0 * 512.0 / 1e6);
        assert_eq!(f.write_mb_per_s, 32000.0 * 512.0 / 1e6);
        assert_eq!(f.read_request_kib, 40.0);
        assert_eq!(f.write_request_kib, 40.0);
        assert_eq!(f.read_await_ms, 1.0);
        assert_eq!(f.write_await_ms, 2.0);
        assert_eq!(f.queue_size, 0.9);
        assert_eq!(f.util_percent, 50.0);
        assert!(parse_diskstats(DISKSTATS_A, "sdb").is_none());
    }

    #[test]
    fn cpu_shares_include_steal() {
        let a = parse_cpu("cpu  100 0 50 800 10 0 0 40 0 0\ncpu0 1 2 3\n");
        let b = parse_cpu("cpu  200 0 100 1500 30 10 0 140 0 0\n");
        let f = cpu_figures(&a, &b);
        // Deltas: user 100, system 50, idle 700, iowait 20, irq 10, steal 100: total 980.
        assert!((f.steal_percent - 100.0 * 100.0 / 980.0).abs() < 1e-9);
        assert!(
            (f.user_percent + f.system_percent + f.idle_percent + f.iowait_percent + f.irq_percent + f.steal_percent
                - 100.0)
                .abs()
                < 1e-9
        );
    }
}
