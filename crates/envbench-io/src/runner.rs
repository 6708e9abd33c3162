//! The one I/O loop, written once against [`Engine`]: it keeps each thread's queue full, times every I/O from
//! submission to reaping, counts operations and bytes, measures the threads' CPU time, and stops on time, on count,
//! or when cancelled. Threads meet at a barrier after setting up their engines, so no thread starts I/O before all
//! are ready (the random-read scaling test relies on this).
//!
//! Timing, as fio does it: one clock read just before each request is submitted and one per reaped batch of
//! completions. Latency is from `submit` to the `reap` that returned the request.

use crate::buffer::BufferPool;
use crate::engine::{Completion, Engine, EngineKind, IoOp, IoRequest, open_engine};
use crate::error::BenchError;
pub use crate::figures::{JobResult, RunSample, ThreadResult, ThreadSample, WindowFigures};
use crate::spec::{Pattern, TestSpec, WriteSync};
use envbench_base::latency::LatencyHistogram;
use envbench_base::rng::FastRng;
use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// When each thread stops issuing I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunLimit {
    /// After this long (in-flight I/Os then complete and count).
    Duration(Duration),
    /// After this many reads and writes per thread.
    OpsPerThread(u64),
}

/// The byte range of the file a job works in (offset and length are multiples of 4 KiB for O_DIRECT).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    pub offset_bytes: u64,
    pub len_bytes: u64,
}

/// Everything one job (one run of one test) needs.
pub struct JobConfig<'a> {
    pub spec: &'a TestSpec,
    /// The file, opened with the test's flags (O_DIRECT, O_DSYNC); shared by all threads.
    pub file: &'a Arc<File>,
    /// Its path, for messages.
    pub path: &'a Path,
    /// Where in the file to work: sequential tests split it into one equal share per thread, random tests share it.
    pub region: Region,
    pub limit: RunLimit,
    pub engine: EngineKind,
    /// Seeds offsets, read/write choices and buffer data; each thread derives its own.
    pub seed: u64,
    /// Set it to stop every thread within one I/O completion.
    pub cancel: &'a AtomicBool,
    /// Cut each thread's run into windows of this length and keep each one's figures ([`ThreadResult::windows`]):
    /// whole seconds for sustained tests, a fifth of a step for ranread's per-window samples.
    pub window: Option<Duration>,
}

/// Run one job: `spec.threads` threads, each with its own engine, released together, until the limit.
pub fn run_job(config: &JobConfig<'_>) -> Result<JobResult, BenchError> {
    let spec = config.spec;
    spec.validate()?;
    let share_bytes = match spec.pattern {
        Pattern::Sequential => config.region.len_bytes / u64::from(spec.threads),
        Pattern::Random => config.region.len_bytes,
    };
    if share_bytes < spec.block_bytes {
        return Err(BenchError::InvalidSetup(format!(
            "{}: the test file ({} bytes to work in) is too small for {spec}: each thread needs at least one {}-byte \
             block; use a larger --size",
            config.path.display(),
            config.region.len_bytes,
            spec.block_bytes
        )));
    }
    let barrier = Barrier::new(spec.threads as usize);
    let abort = AtomicBool::new(false);
    let outcomes: Vec<Result<(ThreadResult, String), BenchError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..spec.threads)
            .map(|index| {
                let (barrier, abort) = (&barrier, &abort);
                std::thread::Builder::new().name(format!("envbench-job-{index}")).spawn_scoped(scope, move || {
                    let outcome = run_thread(config, index, barrier, abort);
                    if outcome.is_err() {
                        abort.store(true, Ordering::Relaxed);
                    }
                    outcome
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|spawned| match spawned {
                Ok(handle) => handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                Err(source) => Err(BenchError::Io { context: "starting a job thread".into(), source }),
            })
            .collect()
    });
    let mut threads = Vec::with_capacity(outcomes.len());
    let mut engine_detail = String::new();
    let mut first_error = None;
    for outcome in outcomes {
        match outcome {
            Ok((thread, detail)) => {
                threads.push(thread);
                engine_detail = detail;
            }
            // A thread that stood down because another failed reports Interrupted; keep the real cause.
            Err(BenchError::Interrupted) if first_error.is_some() => {}
            Err(error) => {
                if first_error.is_none() || matches!(first_error, Some(BenchError::Interrupted)) {
                    first_error = Some(error);
                }
            }
        }
    }
    if let Some(error) = first_error {
        return Err(error);
    }
    Ok(JobResult { engine: config.engine, engine_detail, threads, interrupted: config.cancel.load(Ordering::Relaxed) })
}

fn run_thread(
    config: &JobConfig<'_>,
    index: u32,
    barrier: &Barrier,
    abort: &AtomicBool,
) -> Result<(ThreadResult, String), BenchError> {
    let spec = config.spec;
    let mut rng = FastRng::new(config.seed ^ u64::from(index + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let mut buffers = BufferPool::new(spec.queue_depth as usize, spec.block_bytes as usize);
    // Incompressible data for writes (reads overwrite it, which is fine).
    rng.fill(buffers.all_mut());
    let opened = open_engine(config.engine, config.file, buffers, spec.queue_depth);
    if opened.is_err() {
        abort.store(true, Ordering::Relaxed);
    }
    // Everyone meets here, also after a failed setup, so nobody waits forever.
    let ready_at = Instant::now();
    barrier.wait();
    let mut engine = opened?;
    if abort.load(Ordering::Relaxed) {
        return Err(BenchError::Interrupted);
    }
    let issuer = Issuer::new(spec, config.region, index, rng);
    let mut io_loop = IoLoop::new(config, index, issuer, abort);
    let mut result = io_loop.run(engine.as_mut())?;
    result.ready_at = ready_at;
    Ok((result, engine.describe()))
}

/// Chooses each request's operation and offset.
struct Issuer {
    block_bytes: u64,
    area_offset_bytes: u64,
    area_blocks: u64,
    sequential: bool,
    next_block: u64,
    read_percent: u64,
    rng: FastRng,
}

impl Issuer {
    fn new(spec: &TestSpec, region: Region, index: u32, rng: FastRng) -> Issuer {
        let (area_offset_bytes, area_bytes) = match spec.pattern {
            Pattern::Sequential => {
                let share = region.len_bytes / u64::from(spec.threads) / spec.block_bytes * spec.block_bytes;
                (region.offset_bytes + u64::from(index) * share, share)
            }
            Pattern::Random => (region.offset_bytes, region.len_bytes),
        };
        Issuer {
            block_bytes: spec.block_bytes,
            area_offset_bytes,
            area_blocks: area_bytes / spec.block_bytes,
            sequential: spec.pattern == Pattern::Sequential,
            next_block: 0,
            read_percent: u64::from(spec.operation.read_percent()),
            rng,
        }
    }

    #[inline]
    fn next(&mut self) -> (IoOp, u64) {
        let op = match self.read_percent {
            100 => IoOp::Read,
            0 => IoOp::Write,
            percent if self.rng.below(100) < percent => IoOp::Read,
            _ => IoOp::Write,
        };
        let block = if self.sequential {
            let block = self.next_block;
            self.next_block = if block + 1 == self.area_blocks { 0 } else { block + 1 };
            block
        } else {
            self.rng.below(self.area_blocks)
        };
        (op, self.area_offset_bytes + block * self.block_bytes)
    }
}

/// Write the offset and a sequence number at the start of every 4 KiB of a write buffer, so no two written blocks
/// are identical (storage that deduplicates must not make writes look faster). Costs one store per 4 KiB.
#[inline]
fn stamp(buffer: &mut [u8], offset_bytes: u64, sequence: u64) {
    for (index, chunk) in buffer.chunks_mut(4096).enumerate() {
        if chunk.len() >= 16 {
            chunk[..8].copy_from_slice(&(offset_bytes + index as u64 * 4096).to_le_bytes());
            chunk[8..16].copy_from_slice(&sequence.to_le_bytes());
        }
    }
}

/// This thread's user and system CPU time in nanoseconds.
fn thread_cpu_ns() -> (u64, u64) {
    // SAFETY: getrusage only writes the struct we pass.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) } != 0 {
        return (0, 0);
    }
    let ns = |time: libc::timeval| time.tv_sec as u64 * 1_000_000_000 + time.tv_usec as u64 * 1000;
    (ns(usage.ru_utime), ns(usage.ru_stime))
}

/// One thread's loop state.
struct IoLoop<'a> {
    config: &'a JobConfig<'a>,
    index: u32,
    issuer: Issuer,
    abort: &'a AtomicBool,
    depth: usize,
    len_bytes: u32,
    sync_every: u64,
}

impl<'a> IoLoop<'a> {
    fn new(config: &'a JobConfig<'a>, index: u32, issuer: Issuer, abort: &'a AtomicBool) -> IoLoop<'a> {
        let spec = config.spec;
        let sync_every = match spec.write_sync {
            WriteSync::Fsync { every } => u64::from(every),
            WriteSync::None | WriteSync::Dsync => 0,
        };
        IoLoop {
            config,
            index,
            issuer,
            abort,
            depth: spec.queue_depth as usize,
            len_bytes: spec.block_bytes as u32,
            sync_every,
        }
    }

    fn completion_error(&self, request: &IoRequest, completion: &Completion) -> BenchError {
        let what = match request.op {
            IoOp::Read => format!("read of {} bytes at offset {}", request.len_bytes, request.offset_bytes),
            IoOp::Write => format!("write of {} bytes at offset {}", request.len_bytes, request.offset_bytes),
            IoOp::DataSync => "fdatasync".to_string(),
        };
        if completion.result < 0 {
            BenchError::from_io(self.config.path, &what, io::Error::from_raw_os_error(-completion.result))
        } else {
            BenchError::ShortTransfer {
                path: self.config.path.to_path_buf(),
                operation: if request.op == IoOp::Read { "read" } else { "write" },
                offset_bytes: request.offset_bytes,
                done_bytes: completion.result as u64,
                len_bytes: u64::from(request.len_bytes),
            }
        }
    }

    fn run(&mut self, engine: &mut dyn Engine) -> Result<ThreadResult, BenchError> {
        let path = self.config.path;
        let engine_error = |source: io::Error| BenchError::from_io(path, "I/O engine", source);
        let depth = self.depth;
        let ops_limit = match self.config.limit {
            RunLimit::OpsPerThread(ops) => ops,
            RunLimit::Duration(_) => u64::MAX,
        };
        let mut free_slots: Vec<u32> = (0..depth as u32).rev().collect();
        let mut in_flight_requests = vec![IoRequest { op: IoOp::Read, slot: 0, offset_bytes: 0, len_bytes: 0 }; depth];
        let mut completions: Vec<Completion> = Vec::with_capacity(depth);
        let mut latency = LatencyHistogram::new();
        let (mut ops, mut read_ops, mut write_ops, mut syncs, mut bytes) = (0u64, 0u64, 0u64, 0u64, 0u64);
        let (mut in_flight, mut max_in_flight, mut issued) = (0usize, 0usize, 0u64);
        let mut writes_since_sync = 0u64;
        // While Some, the thread drains its queue for an fdatasync, then waits for it; the value is the start of
        // the write whose group the sync completes (it is timed to the sync's end).
        let mut sync_owner_start: Option<Instant> = None;
        let mut sync_in_flight = false;
        let mut stopping = false;

        let cpu_start = thread_cpu_ns();
        let helper_start = engine.helper_cpu_ns();
        let start = Instant::now();
        let mut issued_at = vec![start; depth];
        let deadline = match self.config.limit {
            RunLimit::Duration(duration) => Some(start + duration),
            RunLimit::OpsPerThread(_) => None,
        };
        let mut last_completion = start;
        let mut seconds = self.config.window.map(|length| WindowCounter::new(start, length));

        loop {
            if !stopping && sync_owner_start.is_none() {
                // One request per submit, each timed from just before it goes: see the io_uring engine on why
                // requests reach the device one by one.
                while in_flight < depth && issued < ops_limit {
                    let slot = free_slots.pop().expect("a free slot exists while fewer than depth are in flight");
                    let (op, offset_bytes) = self.issuer.next();
                    if op == IoOp::Write {
                        stamp(engine.buffers().slot_mut(slot as usize), offset_bytes, issued);
                    }
                    let request = IoRequest { op, slot, offset_bytes, len_bytes: self.len_bytes };
                    in_flight_requests[slot as usize] = request;
                    issued_at[slot as usize] = Instant::now();
                    engine.submit(std::slice::from_ref(&request)).map_err(engine_error)?;
                    in_flight += 1;
                    issued += 1;
                }
                max_in_flight = max_in_flight.max(in_flight);
            }
            if sync_owner_start.is_some() && in_flight == 0 && !sync_in_flight {
                let sync = IoRequest { op: IoOp::DataSync, slot: 0, offset_bytes: 0, len_bytes: 0 };
                in_flight_requests[0] = sync;
                engine.submit(&[sync]).map_err(engine_error)?;
                in_flight = 1;
                sync_in_flight = true;
            }
            if in_flight == 0 {
                break;
            }

            engine.reap(1, &mut completions).map_err(engine_error)?;
            let now = Instant::now();
            for completion in completions.drain(..) {
                in_flight -= 1;
                let slot = completion.slot as usize;
                let request = in_flight_requests[slot];
                if sync_in_flight {
                    // Nothing else is in flight during a sync, so this is it.
                    if completion.result < 0 {
                        return Err(self.completion_error(&request, &completion));
                    }
                    let owner_start = sync_owner_start.take().expect("a sync has an owner");
                    let latency_ns = now.duration_since(owner_start).as_nanos() as u64;
                    latency.record_ns(latency_ns);
                    if let Some(seconds) = &mut seconds {
                        seconds.record_ns(latency_ns);
                    }
                    syncs += 1;
                    sync_in_flight = false;
                    continue;
                }
                if completion.result != request.len_bytes as i32 {
                    return Err(self.completion_error(&request, &completion));
                }
                ops += 1;
                bytes += u64::from(request.len_bytes);
                free_slots.push(completion.slot);
                if request.op == IoOp::Read {
                    read_ops += 1;
                } else {
                    write_ops += 1;
                    // Writes that complete while a sync is pending are covered by it and start no new group.
                    if self.sync_every > 0 && sync_owner_start.is_none() {
                        writes_since_sync += 1;
                        if writes_since_sync == self.sync_every {
                            writes_since_sync = 0;
                            sync_owner_start = Some(issued_at[slot]);
                            continue;
                        }
                    }
                }
                let latency_ns = now.duration_since(issued_at[slot]).as_nanos() as u64;
                latency.record_ns(latency_ns);
                if let Some(seconds) = &mut seconds {
                    seconds.record_ns(latency_ns);
                }
            }
            if let Some(seconds) = &mut seconds {
                // Only the windows of the run's own time: what is drained after the deadline closes no window of
                // its own, however long a slow device takes to finish the requests in flight.
                seconds.tick(deadline.map_or(now, |deadline| now.min(deadline)), ops, bytes);
            }
            last_completion = now;
            if self.config.cancel.load(Ordering::Relaxed)
                || self.abort.load(Ordering::Relaxed)
                || deadline.is_some_and(|deadline| now >= deadline)
            {
                stopping = true;
            }
        }

        let cpu_end = thread_cpu_ns();
        Ok(ThreadResult {
            thread_index: self.index,
            ops,
            read_ops,
            write_ops,
            syncs,
            bytes,
            elapsed_ns: last_completion.duration_since(start).as_nanos() as u64,
            cpu_user_ns: cpu_end.0.saturating_sub(cpu_start.0),
            cpu_system_ns: cpu_end.1.saturating_sub(cpu_start.1),
            helper_cpu_ns: engine.helper_cpu_ns().saturating_sub(helper_start),
            max_in_flight: max_in_flight as u32,
            latency,
            ready_at: start,
            started_at: start,
            windows: seconds.map(|s| s.figures).unwrap_or_default(),
        })
    }
}

/// Cuts one thread's run into whole windows: operations, bytes and the p99 of each.
struct WindowCounter {
    histogram: LatencyHistogram,
    length: Duration,
    next_boundary: Instant,
    ops_at_mark: u64,
    bytes_at_mark: u64,
    figures: Vec<WindowFigures>,
}

impl WindowCounter {
    fn new(start: Instant, length: Duration) -> WindowCounter {
        WindowCounter {
            histogram: LatencyHistogram::new(),
            length,
            next_boundary: start + length,
            ops_at_mark: 0,
            bytes_at_mark: 0,
            figures: Vec::new(),
        }
    }

    #[inline]
    fn record_ns(&mut self, latency_ns: u64) {
        self.histogram.record_ns(latency_ns);
    }

    /// Close every window that ended by `now` (completions reaped at `now` count in the window that just ended;
    /// windows in which nothing completed, a stall, are zeros).
    #[inline]
    fn tick(&mut self, now: Instant, ops: u64, bytes: u64) {
        while now >= self.next_boundary {
            let p99_ns = if self.histogram.count() == 0 { 0 } else { self.histogram.quantile_ns(0.99) };
            self.figures.push(WindowFigures { ops: ops - self.ops_at_mark, bytes: bytes - self.bytes_at_mark, p99_ns });
            self.histogram.reset();
            self.ops_at_mark = ops;
            self.bytes_at_mark = bytes;
            self.next_boundary += self.length;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{EngineChoice, select_engine};
    use crate::testfile::{TestFile, open_for_io};
    use crate::testing::scratch_dir;

    fn engines() -> Vec<EngineKind> {
        match select_engine(EngineChoice::Auto).unwrap().kind {
            EngineKind::IoUring => vec![EngineKind::IoUring, EngineKind::ThreadPool],
            EngineKind::ThreadPool => vec![EngineKind::ThreadPool],
        }
    }

    fn filled(dir: &Path, size_bytes: u64) -> (TestFile, Arc<File>) {
        let file = TestFile::create(dir, size_bytes, true).unwrap();
        file.fill(engines()[0], true, &AtomicBool::new(false), &mut |_, _| {}).unwrap();
        let handle = file.open(true, false).unwrap();
        (file, handle)
    }

    fn run(spec: &str, file: &TestFile, handle: &Arc<File>, limit: RunLimit, engine: EngineKind) -> JobResult {
        let spec: TestSpec = spec.parse().unwrap();
        run_job(&JobConfig {
            spec: &spec,
            file: handle,
            path: file.path(),
            region: Region { offset_bytes: 0, len_bytes: file.size_bytes() },
            limit,
            engine,
            seed: 1,
            cancel: &AtomicBool::new(false),
            window: None,
        })
        .unwrap()
    }

    #[test]
    fn queue_depth_and_threads_are_honoured() {
        let dir = scratch_dir("depth");
        let (file, handle) = filled(&dir, 16 << 20);
        for engine in engines() {
            for (spec, threads, depth) in [("rnd:4k:q16:t2:read", 2, 16), ("seq:64k:q4:t3:read", 3, 4)] {
                let result = run(spec, &file, &handle, RunLimit::Duration(Duration::from_millis(300)), engine);
                assert_eq!(result.threads.len(), threads, "{engine} {spec}");
                for thread in &result.threads {
                    assert_eq!(thread.max_in_flight, depth, "{engine} {spec}: thread {}", thread.thread_index);
                    assert!(thread.ops > 0);
                    assert_eq!(thread.latency.count(), thread.ops);
                }
                assert!(result.iops() > 0.0 && result.mb_per_s() > 0.0);
                assert!(result.engine_detail.starts_with(engine.as_str()), "{}", result.engine_detail);
            }
        }
    }

    #[test]
    fn a_job_can_keep_the_figures_of_every_whole_second() {
        let dir = scratch_dir("per-second");
        let (file, handle) = filled(&dir, 16 << 20);
        let spec: TestSpec = "rnd:4k:q8:t2:write".parse().unwrap();
        let result = run_job(&JobConfig {
            spec: &spec,
            file: &handle,
            path: file.path(),
            region: Region { offset_bytes: 0, len_bytes: file.size_bytes() },
            limit: RunLimit::Duration(Duration::from_millis(2500)),
            engine: engines()[0],
            seed: 1,
            cancel: &AtomicBool::new(false),
            window: Some(Duration::from_secs(1)),
        })
        .unwrap();
        let seconds = result.windows();
        assert_eq!(seconds.len(), 2, "two whole seconds of a 2.5 s run: {seconds:?}");
        // A second in which a busy device completed nothing is a zero, not a gap.
        for second in &seconds {
            assert!(second.bytes == second.ops * 4096 && (second.ops == 0) == (second.p99_ns == 0), "{second:?}");
        }
        assert!(seconds.iter().any(|s| s.ops > 0), "{seconds:?}");
        let counted: u64 = seconds.iter().map(|s| s.ops).sum();
        assert!(counted < result.ops(), "the last half second is left out");
        // Without asking, nothing is kept.
        assert!(
            run("rnd:4k:q8:t1:write", &file, &handle, RunLimit::Duration(Duration::from_millis(1200)), engines()[0])
                .windows()
                .is_empty()
        );
    }

    #[test]
    fn no_thread_starts_before_every_thread_is_ready() {
        let dir = scratch_dir("barrier");
        let (file, handle) = filled(&dir, 16 << 20);
        for engine in engines() {
            for _ in 0..5 {
                let result = run("rnd:4k:q1:t8:read", &file, &handle, RunLimit::OpsPerThread(50), engine);
                let last_ready = result.threads.iter().map(|t| t.ready_at).max().unwrap();
                let first_start = result.threads.iter().map(|t| t.started_at).min().unwrap();
                assert!(first_start >= last_ready, "{engine}: a thread started I/O before all were ready");
            }
        }
    }

    #[test]
    fn fixed_counts_are_exact_per_thread() {
        let dir = scratch_dir("count");
        let (file, handle) = filled(&dir, 8 << 20);
        for engine in engines() {
            let result = run("rnd:4k:q4:t3:read", &file, &handle, RunLimit::OpsPerThread(1000), engine);
            for thread in &result.threads {
                assert_eq!((thread.ops, thread.read_ops, thread.write_ops), (1000, 1000, 0));
                assert_eq!(thread.bytes, 1000 * 4096);
            }
            assert_eq!(result.ops(), 3000);
            assert_eq!(result.latency().count(), 3000);
            let sample = result.sample();
            assert_eq!(sample.threads.len(), 3);
            assert!(sample.threads.iter().all(|t| t.ops == 1000 && t.latency.count == 1000));
            assert!(sample.cpu_per_io_us > 0.0, "CPU time must be measured: {sample:?}");
        }
    }

    #[test]
    fn sequential_threads_write_exactly_their_own_share() {
        for engine in engines() {
            let dir = scratch_dir("share");
            let file = TestFile::create(&dir, 4 << 20, true).unwrap();
            let handle = file.open(true, false).unwrap();
            // 4 threads x 1 MiB share x 16 blocks of 64 KiB: every block written exactly once.
            let result = run("seq:64k:q2:t4:write", &file, &handle, RunLimit::OpsPerThread(16), engine);
            assert_eq!(result.ops(), 64);
            let data = std::fs::read(file.path()).unwrap();
            for (index, block) in data.chunks(4096).enumerate() {
                let stamped = u64::from_le_bytes(block[..8].try_into().unwrap());
                assert_eq!(stamped, index as u64 * 4096, "{engine}: 4 KiB block {index} was not written in place");
            }
        }
    }

    #[test]
    fn mixed_tests_read_the_asked_share() {
        let dir = scratch_dir("mix");
        let (file, handle) = filled(&dir, 8 << 20);
        let result = run("rnd:4k:q8:t1:mix70", &file, &handle, RunLimit::OpsPerThread(5000), engines()[0]);
        let thread = &result.threads[0];
        assert_eq!(thread.read_ops + thread.write_ops, 5000);
        let read_share = thread.read_ops as f64 / 5000.0;
        assert!((0.67..=0.73).contains(&read_share), "read share {read_share}");
    }

    #[test]
    fn fsync_groups_are_synced_and_timed() {
        let dir = scratch_dir("fsync");
        let (file, handle) = filled(&dir, 4 << 20);
        for engine in engines() {
            let result = run("seq:16k:q1:t1:write:fsync1", &file, &handle, RunLimit::OpsPerThread(40), engine);
            let thread = &result.threads[0];
            assert_eq!((thread.write_ops, thread.syncs), (40, 40), "{engine}");
            assert_eq!(thread.latency.count(), 40);

            let result = run("rnd:4k:q4:t1:write:fsync4", &file, &handle, RunLimit::OpsPerThread(200), engine);
            let thread = &result.threads[0];
            assert!((1..=50).contains(&thread.syncs), "{engine}: {} syncs", thread.syncs);
            // Every write is timed once: alone, or to the end of the sync that completes its group.
            assert_eq!(thread.latency.count(), 200);
        }
    }

    #[test]
    fn cancel_stops_a_long_run_quickly() {
        let dir = scratch_dir("cancel");
        let (file, handle) = filled(&dir, 8 << 20);
        let spec: TestSpec = "rnd:4k:q8:t2:read".parse().unwrap();
        for engine in engines() {
            let cancel = AtomicBool::new(false);
            let result = std::thread::scope(|scope| {
                let job = scope.spawn(|| {
                    run_job(&JobConfig {
                        spec: &spec,
                        file: &handle,
                        path: file.path(),
                        region: Region { offset_bytes: 0, len_bytes: file.size_bytes() },
                        limit: RunLimit::Duration(Duration::from_secs(60)),
                        engine,
                        seed: 3,
                        cancel: &cancel,
                        window: None,
                    })
                });
                std::thread::sleep(Duration::from_millis(150));
                cancel.store(true, Ordering::Relaxed);
                let cancelled = Instant::now();
                (job.join().unwrap().unwrap(), cancelled.elapsed())
            });
            let (result, took) = result;
            assert!(result.interrupted);
            // Quickly, against the 60 s the run was given: what is in flight is drained, nothing more is issued.
            assert!(took < Duration::from_secs(30), "{engine}: took {took:?}");
        }
    }

    #[test]
    fn a_full_disk_is_a_typed_error() {
        // /dev/full answers every write with ENOSPC, as a full file system does.
        let handle = Arc::new(open_for_io(Path::new("/dev/full"), false, false).unwrap());
        let spec: TestSpec = "seq:4k:q2:t1:write".parse().unwrap();
        for engine in engines() {
            let error = run_job(&JobConfig {
                spec: &spec,
                file: &handle,
                path: Path::new("/dev/full"),
                region: Region { offset_bytes: 0, len_bytes: 1 << 20 },
                limit: RunLimit::OpsPerThread(10),
                engine,
                seed: 0,
                cancel: &AtomicBool::new(false),
                window: None,
            })
            .unwrap_err();
            assert!(matches!(error, BenchError::DiskFull { .. }), "{engine}: {error:?}");
        }
    }

    #[test]
    fn a_region_too_small_for_the_threads_is_refused() {
        let dir = scratch_dir("small");
        let file = TestFile::create(&dir, 1 << 20, true).unwrap();
        let handle = file.open(true, false).unwrap();
        let spec: TestSpec = "seq:1m:q1:t2:read".parse().unwrap();
        let error = run_job(&JobConfig {
            spec: &spec,
            file: &handle,
            path: file.path(),
            region: Region { offset_bytes: 0, len_bytes: file.size_bytes() },
            limit: RunLimit::OpsPerThread(1),
            engine: EngineKind::ThreadPool,
            seed: 0,
            cancel: &AtomicBool::new(false),
            window: None,
        })
        .unwrap_err();
        assert!(error.to_string().contains("too small for SEQ1M Q1T2 read"), "{error}");
    }

    #[test]
    fn stamps_make_every_block_unique() {
        let mut buffer = vec![0u8; 8192];
        stamp(&mut buffer, 1 << 20, 7);
        assert_eq!(u64::from_le_bytes(buffer[..8].try_into().unwrap()), 1 << 20);
        assert_eq!(u64::from_le_bytes(buffer[4096..4104].try_into().unwrap()), (1 << 20) + 4096);
        assert_eq!(u64::from_le_bytes(buffer[8..16].try_into().unwrap()), 7);
    }
}
