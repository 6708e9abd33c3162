//! The OS sampler: a background thread that reads `/proc/diskstats` and `/proc/stat` every interval and turns the
//! counter deltas into iostat's figures (sysstat's formulas; sectors are 512 bytes, MB are 10^6 bytes). It also reads
//! who else competed for the machine: the kernel's pressure stall information (`/proc/pressure/{cpu,io,memory}`) and
//! envbench's own process CPU (`/proc/self/stat`), whose difference from /proc/stat's busy time is other processes'.
//!
//! Steps are marked from the workload's thread through [`StepObserver`]; each mark snapshots the counters right
//! there, so a step's summary covers exactly the step, not whole sampler intervals. At the start and the end of the
//! run it also looks at every process once ([`RunCounters`]), to count envbench's children still running and the CPU
//! of database servers on this machine. The thread measures its own CPU time (`RUSAGE_THREAD`), and those two looks
//! measure theirs, so every run records what sampling cost.

use crate::host::Host;
use envbench_core::sampler::{
    ContentionFigures, CpuFigures, DiskFigures, Pressure, RunContention, SamplerPoint, SamplerSeries, StallTimes,
    StepObserver, StepSummary,
};
use std::collections::HashMap;
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
    /// The workload drives a database server on this machine, whose CPU is then not other work
    /// ([`RunContention::drives_local_server`]).
    pub drives_local_server: bool,
}

impl Default for SamplerOptions {
    fn default() -> Self {
        SamplerOptions { interval: Duration::from_secs(1), devices: Vec::new(), drives_local_server: false }
    }
}

/// What the series says, once, when the kernel gives no pressure stall information.
pub const PRESSURE_MISSING_NOTE: &str = "no pressure stall information here (/proc/pressure is missing: a kernel \
                                         without PSI, or booted with psi=0); disturbance is judged on steal and other \
                                         processes' CPU alone";

/// Names of the database server processes whose CPU is the workload's when it drives a local server (PostgreSQL's
/// postmaster and backends, MySQL's and MariaDB's one process).
const SERVER_PROCESSES: [&str; 4] = ["postgres", "postmaster", "mysqld", "mariadbd"];

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

impl CpuCounters {
    /// Time processes ran: user (guest time included), nice and system. Interrupts, iowait and steal are no
    /// process's time.
    fn busy_ticks(&self) -> u64 {
        self.user.wrapping_add(self.nice).wrapping_add(self.system)
    }
}

#[derive(Clone, Debug)]
struct Snapshot {
    at: Instant,
    cpu: CpuCounters,
    disks: Vec<Option<DiskCounters>>,
    /// envbench's own process CPU, in clock ticks (utime, stime, cutime, cstime).
    own_ticks: u64,
    /// Cumulative stall times; `None` without pressure stall information.
    pressure: Option<Pressure>,
}

/// The counters a whole run is judged on, read at its start and its end: the interval counters (/proc/stat, envbench's
/// process, pressure stall information), envbench's storage traffic (/proc/self/io), and one look at every process
/// for envbench's children still running and the database servers on this machine.
#[derive(Clone, Debug)]
pub struct RunCounters {
    cpu: CpuCounters,
    own_ticks: u64,
    pressure: Option<Pressure>,
    own_storage_bytes: Option<u64>,
    /// CPU ticks of envbench's descendants still running (not yet in its cutime and cstime).
    descendant_ticks: u64,
    /// CPU ticks of database server processes, with the children they waited for.
    server_ticks: u64,
}

impl RunCounters {
    /// Read them on a machine (or a fixture tree).
    pub fn read(host: &Host) -> RunCounters {
        let own = host.read("/proc/self/stat").and_then(|t| parse_process_stat(&t));
        let (descendant_ticks, server_ticks) = match &own {
            Some(own) => scan_processes(host, own.pid),
            None => (0, 0),
        };
        RunCounters {
            cpu: host.read("/proc/stat").map(|t| parse_cpu(&t)).unwrap_or_default(),
            own_ticks: own.map_or(0, |o| o.ticks),
            pressure: read_pressure(host),
            own_storage_bytes: host.read("/proc/self/io").and_then(|t| parse_storage_bytes(&t)),
            descendant_ticks,
            server_ticks,
        }
    }

    /// The run's contention from `start` to these counters.
    pub fn since(&self, start: &RunCounters, drives_local_server: bool) -> RunContention {
        let tick = clock_tick_seconds();
        let own_ticks = self.own_ticks.wrapping_add(self.descendant_ticks);
        let start_own_ticks = start.own_ticks.wrapping_add(start.descendant_ticks);
        RunContention {
            contention: contention(
                (&start.cpu, start_own_ticks, start.pressure.as_ref()),
                (&self.cpu, own_ticks, self.pressure.as_ref()),
            ),
            steal_percent: cpu_figures(&start.cpu, &self.cpu).steal_percent,
            local_server_cpu_seconds: self.server_ticks.saturating_sub(start.server_ticks) as f64 * tick,
            drives_local_server,
            own_storage_bytes: match (start.own_storage_bytes, self.own_storage_bytes) {
                (Some(a), Some(b)) => Some(b.saturating_sub(a)),
                _ => None,
            },
        }
    }

    /// Whether the kernel gave pressure stall information.
    pub fn has_pressure(&self) -> bool {
        self.pressure.is_some()
    }
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
    drives_local_server: bool,
    started: Instant,
    run_start: RunCounters,
    /// CPU time the look at every process at the start took (in the thread that started the sampler).
    start_cost_seconds: f64,
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
        let before = own_cpu_seconds();
        let run_start = RunCounters::read(&host);
        let start_cost_seconds = own_cpu_seconds() - before;
        let shared = Arc::new(Shared {
            host,
            devices: options.devices,
            drives_local_server: options.drives_local_server,
            started: Instant::now(),
            run_start,
            start_cost_seconds,
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
        let before = own_cpu_seconds();
        let run_end = RunCounters::read(&self.shared.host);
        let end_cost_seconds = own_cpu_seconds() - before;
        let thread_cpu_seconds = self.thread.take().and_then(|t| t.join().ok()).unwrap_or(0.0);
        let mut state = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        let shared = &self.shared;
        SamplerSeries {
            interval_ms: self.interval.as_millis() as u64,
            devices: shared.devices.clone(),
            points: std::mem::take(&mut state.points),
            steps: std::mem::take(&mut state.steps),
            own_cpu_seconds: thread_cpu_seconds + shared.start_cost_seconds + end_cost_seconds,
            wall_seconds: shared.started.elapsed().as_secs_f64(),
            whole_run: Some(run_end.since(&shared.run_start, shared.drives_local_server)),
            pressure_note: (!run_end.has_pressure()).then(|| PRESSURE_MISSING_NOTE.to_string()),
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
        crate::live::publish_step(Some(step));
    }

    fn step_finished(&self, step: &str) {
        let snapshot = self.shared.snapshot();
        let mut state = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.current.as_ref().is_some_and(|(name, _)| name == step) {
            let (name, start) = state.current.take().expect("checked above");
            let summary = self.shared.step_summary(name, &start, &snapshot);
            state.steps.push(summary);
            crate::live::publish_step(None);
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
            contention: Some(snapshot_contention(&previous, &current)),
        };
        crate::live::publish_point(&point);
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
        let own_ticks = self.host.read("/proc/self/stat").and_then(|t| parse_process_stat(&t)).map_or(0, |o| o.ticks);
        Snapshot { at, cpu, disks, own_ticks, pressure: read_pressure(&self.host) }
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
            contention: Some(snapshot_contention(start, end)),
        }
    }
}

fn snapshot_contention(a: &Snapshot, b: &Snapshot) -> ContentionFigures {
    contention((&a.cpu, a.own_ticks, a.pressure.as_ref()), (&b.cpu, b.own_ticks, b.pressure.as_ref()))
}

/// Contention between two readings of (/proc/stat, envbench's own ticks, cumulative stall times).
fn contention(
    a: (&CpuCounters, u64, Option<&Pressure>),
    b: (&CpuCounters, u64, Option<&Pressure>),
) -> ContentionFigures {
    let tick = clock_tick_seconds();
    let stall = |x: &StallTimes, y: &StallTimes| StallTimes {
        some_us: y.some_us.saturating_sub(x.some_us),
        full_us: y.full_us.saturating_sub(x.full_us),
    };
    ContentionFigures {
        busy_cpu_seconds: b.0.busy_ticks().wrapping_sub(a.0.busy_ticks()) as f64 * tick,
        own_cpu_seconds: b.1.saturating_sub(a.1) as f64 * tick,
        pressure: match (a.2, b.2) {
            (Some(x), Some(y)) => Some(Pressure {
                cpu: stall(&x.cpu, &y.cpu),
                io: stall(&x.io, &y.io),
                memory: stall(&x.memory, &y.memory),
            }),
            _ => None,
        },
    }
}

/// Seconds per clock tick of /proc/stat and /proc/PID/stat (USER_HZ, 100 on every mainstream kernel).
fn clock_tick_seconds() -> f64 {
    // SAFETY: sysconf only reads a configuration value.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    1.0 / if hz > 0 { hz as f64 } else { 100.0 }
}

/// The three pressure files, or `None` when any is missing or unreadable.
fn read_pressure(host: &Host) -> Option<Pressure> {
    let read = |resource: &str| host.read(format!("/proc/pressure/{resource}")).and_then(|t| parse_pressure(&t));
    Some(Pressure { cpu: read("cpu")?, io: read("io")?, memory: read("memory")? })
}

/// The `total=` microsecond counters of a `/proc/pressure/*` file's `some` and `full` lines (`full` is absent for
/// the CPU before Linux 5.13: zero). `None` when there is no `some` line.
pub fn parse_pressure(text: &str) -> Option<StallTimes> {
    let total = |kind: &str| {
        text.lines().find(|l| l.split_whitespace().next() == Some(kind)).and_then(|line| {
            line.split_whitespace().find_map(|field| field.strip_prefix("total=")).and_then(|v| v.parse::<u64>().ok())
        })
    };
    Some(StallTimes { some_us: total("some")?, full_us: total("full").unwrap_or(0) })
}

/// What one `/proc/PID/stat` line says about CPU.
#[derive(Clone, Debug, PartialEq)]
struct ProcessStat {
    pid: u32,
    comm: String,
    ppid: u32,
    /// utime + stime + cutime + cstime (fields 14-17), in clock ticks: the process's threads and the children it
    /// waited for.
    ticks: u64,
}

fn parse_process_stat(text: &str) -> Option<ProcessStat> {
    // The command name is in parentheses and may itself hold spaces and parentheses: split at the last ')'.
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let pid = text[..open].trim().parse().ok()?;
    let comm = text.get(open + 1..close)?.to_string();
    let fields: Vec<&str> = text[close + 1..].split_whitespace().collect();
    // fields[0] is field 3 (state).
    let at = |field: usize| fields.get(field - 3).and_then(|v| v.parse::<u64>().ok());
    let ticks = (14..=17).map(at).sum::<Option<u64>>()?;
    Some(ProcessStat { pid, comm, ppid: at(4)? as u32, ticks })
}

/// One look at every process: CPU ticks of `own_pid`'s descendants and of database server processes.
fn scan_processes(host: &Host, own_pid: u32) -> (u64, u64) {
    let processes: HashMap<u32, ProcessStat> = host
        .list("/proc")
        .iter()
        .filter(|name| name.bytes().all(|b| b.is_ascii_digit()))
        .filter_map(|name| host.read(format!("/proc/{name}/stat")).and_then(|t| parse_process_stat(&t)))
        .map(|p| (p.pid, p))
        .collect();
    let descends_from_us = |process: &ProcessStat| {
        let mut parent = process.ppid;
        // A bounded walk: a process tree deeper than this is no envbench run's.
        for _ in 0..64 {
            if parent == own_pid {
                return true;
            }
            match processes.get(&parent) {
                Some(p) if p.pid != p.ppid => parent = p.ppid,
                _ => return false,
            }
        }
        false
    };
    let (mut descendants, mut servers) = (0u64, 0u64);
    for process in processes.values().filter(|p| p.pid != own_pid) {
        if descends_from_us(process) {
            descendants += process.ticks;
        } else if SERVER_PROCESSES.contains(&process.comm.as_str()) {
            servers += process.ticks;
        }
    }
    (descendants, servers)
}

/// Storage bytes from `/proc/self/io`: read_bytes plus write_bytes less cancelled_write_bytes.
fn parse_storage_bytes(text: &str) -> Option<u64> {
    let value = |key: &str| {
        text.lines().find_map(|l| l.strip_prefix(key)?.strip_prefix(':')).and_then(|v| v.trim().parse::<u64>().ok())
    };
    Some(value("read_bytes")? + value("write_bytes")?.saturating_sub(value("cancelled_write_bytes").unwrap_or(0)))
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
    fn pressure_files_give_their_total_counters() {
        let io = "some avg10=2.12 avg60=6.64 avg300=3.13 total=17099321\nfull avg10=0.40 avg60=0.18 avg300=0.07 \
                  total=4190848\n";
        assert_eq!(parse_pressure(io), Some(StallTimes { some_us: 17099321, full_us: 4190848 }));
        // Before Linux 5.13 the CPU file has no `full` line.
        assert_eq!(
            parse_pressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=79131475"),
            Some(StallTimes { some_us: 79131475, full_us: 0 })
        );
        assert_eq!(parse_pressure(""), None);
        assert_eq!(parse_pressure("some avg10=0.00 total=x"), None);
    }

    #[test]
    fn process_stat_lines_give_cpu_and_parent() {
        let line = "18799 (a (weird) name) R 18793 18793 17821 0 -1 4194304 99 0 0 0 120 30 7 3 20 0 1 0 163690";
        let stat = parse_process_stat(line).unwrap();
        assert_eq!(
            stat,
            ProcessStat { pid: 18799, comm: "a (weird) name".into(), ppid: 18793, ticks: 120 + 30 + 7 + 3 }
        );
        assert_eq!(parse_process_stat("12 (short) R 1 2"), None);
    }

    #[test]
    fn storage_bytes_leave_out_cancelled_writes() {
        let io = "rchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\nread_bytes: 4096\nwrite_bytes: 81920\n\
                  cancelled_write_bytes: 8192";
        assert_eq!(parse_storage_bytes(io), Some(4096 + 81920 - 8192));
        assert_eq!(parse_storage_bytes("rchar: 1"), None);
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
