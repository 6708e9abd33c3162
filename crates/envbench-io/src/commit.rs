//! What a database commit costs on this storage: small log writes made durable the ways databases make them
//! (`write`+`fdatasync`, `write`+`fsync`, `O_DSYNC`, `O_DIRECT|O_DSYNC`), appended to a log that grows or overwriting a
//! preallocated one, by one or many committers.
//!
//! Many committers either share one log the way a database's WAL does — each appends its record to the log buffer,
//! then waits until the log is durable up to its record; whoever takes the flush lock writes and flushes everything
//! appended so far, so one flush covers every committer waiting (group commit) — or each has a log of its own.
//! Every commit's latency (append to durable) goes into an HDR histogram.
//!
//! The log files are created new in the directory (never an existing file) and removed at the end.

use crate::buffer::{AlignedBuffer, IO_ALIGN_BYTES};
use crate::testfile::open_for_io;
use envbench_base::latency::LatencyHistogram;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// How a write is made durable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncMethod {
    /// `write` then `fdatasync` (PostgreSQL's default on Linux).
    Fdatasync,
    /// `write` then `fsync`.
    Fsync,
    /// Writes to a file opened `O_DSYNC`: each returns once durable.
    Odsync,
    /// `O_DIRECT|O_DSYNC`: past the page cache, each write durable when it returns (whole 4 KiB blocks only).
    OdirectOdsync,
    /// A plain `write`, never made durable: the reference a flush's cost is judged against.
    Buffered,
}

impl SyncMethod {
    pub const ALL: [SyncMethod; 4] =
        [SyncMethod::Fdatasync, SyncMethod::Fsync, SyncMethod::Odsync, SyncMethod::OdirectOdsync];

    pub fn name(self) -> &'static str {
        match self {
            SyncMethod::Fdatasync => "fdatasync",
            SyncMethod::Fsync => "fsync",
            SyncMethod::Odsync => "O_DSYNC",
            SyncMethod::OdirectOdsync => "O_DIRECT|O_DSYNC",
            SyncMethod::Buffered => "no sync",
        }
    }
}

/// Where the log's writes go.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// At the end of a file that grows (each flush also makes the new size durable).
    Append,
    /// Into a preallocated file, wrapping around (a recycled WAL segment).
    Overwrite,
    /// The same block of a preallocated file again and again, as `pg_test_fsync` writes (for its cross-check).
    Rewrite,
}

/// One commit test.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CommitSpec {
    pub method: SyncMethod,
    pub write_bytes: usize,
    pub placement: Placement,
    pub committers: u32,
    /// True: every committer appends to one log with group commit; false: each has its own log.
    pub shared_log: bool,
    pub duration: Duration,
}

/// The size of the preallocated log an overwrite test wraps around in.
pub const OVERWRITE_LOG_BYTES: u64 = 16 << 20;

/// What a commit test measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CommitOutcome {
    pub spec: CommitSpec,
    pub commits: u64,
    pub seconds: f64,
    pub commits_per_s: f64,
    /// Flushes (or O_DSYNC writes) made: fewer than commits when group commit batched them.
    pub flushes: u64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
}

impl CommitOutcome {
    /// Commits per flush: how well group commit batched.
    pub fn commits_per_flush(&self) -> f64 {
        self.commits as f64 / self.flushes.max(1) as f64
    }
}

/// Why a commit test cannot run as asked.
pub fn check(spec: &CommitSpec) -> Result<(), String> {
    if spec.write_bytes == 0 || spec.write_bytes > 1 << 20 {
        return Err(format!("a commit write of {} bytes: give 512 bytes to 1 MiB", spec.write_bytes));
    }
    if spec.method == SyncMethod::OdirectOdsync && !spec.write_bytes.is_multiple_of(IO_ALIGN_BYTES) {
        return Err(format!(
            "O_DIRECT writes must be whole {IO_ALIGN_BYTES}-byte blocks; {} bytes is not",
            spec.write_bytes
        ));
    }
    if !(1..=256).contains(&spec.committers) {
        return Err(format!("{} committers: give 1 to 256", spec.committers));
    }
    if spec.duration.is_zero() {
        return Err("a commit test must run for longer than zero".into());
    }
    Ok(())
}

/// A log file envbench created, removed when dropped unless it belongs to a [`RewriteFile`].
struct Log {
    path: PathBuf,
    file: File,
    owned: bool,
}

impl Drop for Log {
    fn drop(&mut self) {
        if self.owned {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// One preallocated, flushed file that rewrite tests take turns on, as pg_test_fsync runs every method on its one
/// file: no file is created or removed between the methods (on a file system mounted with `discard`, a removed
/// file's blocks are discarded at a later journal commit, which a following flush would wait for). Removed when
/// dropped.
pub struct RewriteFile {
    log: Log,
}

impl RewriteFile {
    /// A new preallocated file in `dir`.
    pub fn create(dir: &Path) -> std::io::Result<RewriteFile> {
        let spec = CommitSpec {
            method: SyncMethod::Fdatasync,
            write_bytes: 8192,
            placement: Placement::Rewrite,
            committers: 1,
            shared_log: false,
            duration: std::time::Duration::ZERO,
        };
        Ok(RewriteFile { log: Log::create(dir, &spec)? })
    }
}

static LOG_SERIAL: AtomicU64 = AtomicU64::new(0);

impl Log {
    /// A new log file in `dir` (never an existing one), preallocated and flushed for overwrite tests, then opened
    /// with the method's flags.
    fn create(dir: &Path, spec: &CommitSpec) -> std::io::Result<Log> {
        let serial = LOG_SERIAL.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!(".envbench-commit-{}-{serial}.log", std::process::id()));
        let file = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(&path)?;
        // From here the file is removed on every way out.
        let mut log = Log { path, file, owned: true };
        if matches!(spec.placement, Placement::Overwrite | Placement::Rewrite) {
            let block = AlignedBuffer::new(1 << 20);
            for offset in (0..OVERWRITE_LOG_BYTES).step_by(1 << 20) {
                log.file.write_all_at(block.as_slice(), offset)?;
            }
            log.file.sync_all()?;
        }
        log.file = open_with_method(&log.path, spec.method)?;
        Ok(log)
    }

    /// The file of a [`RewriteFile`], opened again with the method's flags (and left there when dropped).
    fn reopen(file: &RewriteFile, spec: &CommitSpec) -> std::io::Result<Log> {
        Ok(Log { path: file.log.path.clone(), file: open_with_method(&file.log.path, spec.method)?, owned: false })
    }

    /// Write `bytes` at `offset` and make them durable by the method.
    fn write_durably(&self, bytes: &[u8], offset: u64, method: SyncMethod) -> std::io::Result<()> {
        self.file.write_all_at(bytes, offset)?;
        match method {
            SyncMethod::Fdatasync => self.file.sync_data(),
            SyncMethod::Fsync => self.file.sync_all(),
            SyncMethod::Odsync | SyncMethod::OdirectOdsync | SyncMethod::Buffered => Ok(()),
        }
    }
}

/// A log opened with the flags its sync method writes with (`O_DIRECT`, `O_DSYNC`).
fn open_with_method(path: &Path, method: SyncMethod) -> std::io::Result<File> {
    let direct = method == SyncMethod::OdirectOdsync;
    let dsync = matches!(method, SyncMethod::Odsync | SyncMethod::OdirectOdsync);
    open_for_io(path, direct, dsync)
}

/// Where the next write of `len` bytes goes, `position` bytes into the log.
fn offset(position: u64, len: u64, placement: Placement) -> u64 {
    match placement {
        Placement::Append => position,
        Placement::Overwrite => {
            let wrapped = position % OVERWRITE_LOG_BYTES;
            if wrapped + len > OVERWRITE_LOG_BYTES { 0 } else { wrapped }
        }
        Placement::Rewrite => 0,
    }
}

/// The shared log of a group-commit test: appended records wait in `pending` until a flush takes them.
struct SharedLog {
    log: Log,
    state: Mutex<Pending>,
    /// Wakes the committers waiting for a flush to end.
    flush_ended: Condvar,
    flushes: AtomicU64,
}

struct Pending {
    /// Bytes appended so far.
    appended: u64,
    /// Appended and not yet written.
    records: Vec<u8>,
    /// The log position of `records`' first byte.
    first_position: u64,
    /// The log position durable so far; a committer whose record ends at or before it is done.
    flushed: u64,
    /// True while one committer writes and flushes (PostgreSQL's WALWriteLock held).
    flushing: bool,
}

impl SharedLog {
    /// A shared log over `log`, nothing appended yet.
    fn new(log: Log) -> SharedLog {
        SharedLog {
            log,
            state: Mutex::new(Pending {
                appended: 0,
                records: Vec::new(),
                first_position: 0,
                flushed: 0,
                flushing: false,
            }),
            flush_ended: Condvar::new(),
            flushes: AtomicU64::new(0),
        }
    }

    /// Append a record and wait until the log is durable past it. As PostgreSQL's `LWLockAcquireOrWait` on the WAL
    /// write lock: a committer waits while a flush is under way, and when it ends either finds its record covered
    /// and returns, or (nobody flushing) becomes the next flusher of everything appended so far. Waiting committers
    /// are never queued behind one another to learn that their record is already durable.
    fn commit(&self, record: &[u8], method: SyncMethod, placement: Placement) -> std::io::Result<()> {
        let mut pending = self.state.lock().expect("not poisoned");
        if pending.records.is_empty() {
            pending.first_position = pending.appended;
        }
        pending.records.extend_from_slice(record);
        pending.appended += record.len() as u64;
        let end = pending.appended;
        while pending.flushing && pending.flushed < end {
            pending = self.flush_ended.wait(pending).expect("not poisoned");
        }
        if pending.flushed >= end {
            return Ok(());
        }
        pending.flushing = true;
        let (bytes, position, upto) = (std::mem::take(&mut pending.records), pending.first_position, pending.appended);
        drop(pending);
        let mut buffer = AlignedBuffer::new(bytes.len());
        buffer.as_mut_slice()[..bytes.len()].copy_from_slice(&bytes);
        let written = self.log.write_durably(
            &buffer.as_slice()[..bytes.len()],
            offset(position, bytes.len() as u64, placement),
            method,
        );
        let mut pending = self.state.lock().expect("not poisoned");
        pending.flushing = false;
        if written.is_ok() {
            pending.flushed = upto;
            self.flushes.fetch_add(1, Ordering::Relaxed);
        }
        drop(pending);
        self.flush_ended.notify_all();
        written
    }
}

/// Run one commit test in `dir` until its duration passes or `interrupt` is set.
pub fn run_commit_test(dir: &Path, spec: &CommitSpec, interrupt: &AtomicBool) -> std::io::Result<CommitOutcome> {
    run_test(dir, None, spec, interrupt)
}

/// Run one single-committer rewrite test on `file` (see [`RewriteFile`]).
pub fn run_rewrite_test(
    file: &RewriteFile,
    spec: &CommitSpec,
    interrupt: &AtomicBool,
) -> std::io::Result<CommitOutcome> {
    if spec.placement != Placement::Rewrite || spec.committers != 1 || spec.shared_log {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "a rewrite file takes one rewriting committer",
        ));
    }
    let dir = file.log.path.parent().unwrap_or(Path::new("."));
    run_test(dir, Some(file), spec, interrupt)
}

fn run_test(
    dir: &Path,
    rewrite: Option<&RewriteFile>,
    spec: &CommitSpec,
    interrupt: &AtomicBool,
) -> std::io::Result<CommitOutcome> {
    check(spec).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    let mut record = AlignedBuffer::new(spec.write_bytes);
    for (i, byte) in record.as_mut_slice().iter_mut().enumerate() {
        *byte = (i * 31 % 251) as u8;
    }
    let record = &record.as_slice()[..spec.write_bytes];
    let shared = if spec.shared_log { Some(SharedLog::new(Log::create(dir, spec)?)) } else { None };
    // Every log is created (and, for overwrites, preallocated and flushed) before the clock starts: the commits
    // alone are timed, as pg_test_fsync times them.
    let own_logs: Vec<Log> = if shared.is_some() {
        Vec::new()
    } else {
        match rewrite {
            Some(file) => vec![Log::reopen(file, spec)?],
            None => (0..spec.committers).map(|_| Log::create(dir, spec)).collect::<Result<_, _>>()?,
        }
    };
    let own_flushes = AtomicU64::new(0);
    let started = Instant::now();
    let deadline = started + spec.duration;
    let histograms: Vec<std::io::Result<LatencyHistogram>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..spec.committers)
            .map(|committer| {
                let (shared, own_flushes) = (&shared, &own_flushes);
                let own = own_logs.get(committer as usize);
                scope.spawn(move || -> std::io::Result<LatencyHistogram> {
                    let mut histogram = LatencyHistogram::new();
                    let mut position = 0u64;
                    // Every committer commits at least once, however late its thread started on a busy host, so
                    // no test is left with no commit to show.
                    while !interrupt.load(Ordering::Relaxed) {
                        let began = Instant::now();
                        match (shared, own) {
                            (Some(log), _) => log.commit(record, spec.method, spec.placement)?,
                            (None, Some(log)) => {
                                let at = offset(position, record.len() as u64, spec.placement);
                                log.write_durably(record, at, spec.method)?;
                                position = at + record.len() as u64;
                                own_flushes.fetch_add(1, Ordering::Relaxed);
                            }
                            (None, None) => unreachable!("a committer has a log"),
                        }
                        histogram.record_ns(began.elapsed().as_nanos() as u64);
                        if Instant::now() >= deadline {
                            break;
                        }
                    }
                    Ok(histogram)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(std::io::Error::other("a committer panicked"))))
            .collect()
    });
    let seconds = started.elapsed().as_secs_f64();
    let mut histogram = LatencyHistogram::new();
    for h in histograms {
        histogram.merge(&h?);
    }
    let flushes = shared.as_ref().map_or(own_flushes.load(Ordering::Relaxed), |s| s.flushes.load(Ordering::Relaxed));
    let us = |ns: u64| ns as f64 / 1000.0;
    Ok(CommitOutcome {
        spec: spec.clone(),
        commits: histogram.count(),
        seconds,
        commits_per_s: histogram.count() as f64 / seconds,
        flushes,
        mean_us: histogram.mean_ns() / 1000.0,
        p50_us: us(histogram.quantile_ns(0.50)),
        p99_us: us(histogram.quantile_ns(0.99)),
        p999_us: us(histogram.quantile_ns(0.999)),
        max_us: us(histogram.max_ns()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(method: SyncMethod, placement: Placement, committers: u32, shared_log: bool) -> CommitSpec {
        CommitSpec {
            method,
            write_bytes: 8192,
            placement,
            committers,
            shared_log,
            duration: Duration::from_millis(300),
        }
    }

    #[test]
    fn every_method_commits_and_leaves_no_file_behind() {
        let scratch = crate::testing::scratch_dir("commit-methods");
        let dir: &Path = &scratch;
        for method in SyncMethod::ALL {
            for placement in [Placement::Append, Placement::Overwrite] {
                let outcome =
                    run_commit_test(dir, &spec(method, placement, 1, false), &AtomicBool::new(false)).unwrap();
                assert!(outcome.commits > 0, "{method:?} {placement:?}");
                assert_eq!(outcome.flushes, outcome.commits, "one flush per commit alone");
                // The exact maximum against a percentile rounded to its bucket (3 significant digits).
                assert!(
                    outcome.p50_us > 0.0
                        && outcome.p99_us >= outcome.p50_us
                        && outcome.max_us >= outcome.p999_us * 0.99
                );
            }
        }
        assert_eq!(std::fs::read_dir(dir).unwrap().count(), 0, "the logs are removed");
    }

    #[test]
    fn rewrite_tests_take_turns_on_one_file_that_goes_with_it() {
        let scratch = crate::testing::scratch_dir("commit-rewrite");
        let dir: &Path = &scratch;
        let file = RewriteFile::create(dir).unwrap();
        for method in [SyncMethod::OdirectOdsync, SyncMethod::Fdatasync, SyncMethod::Fsync] {
            let outcome =
                run_rewrite_test(&file, &spec(method, Placement::Rewrite, 1, false), &AtomicBool::new(false)).unwrap();
            assert!(outcome.commits > 0, "{method:?}");
            assert_eq!(std::fs::read_dir(dir).unwrap().count(), 1, "the one file stays between the methods");
        }
        assert!(
            run_rewrite_test(&file, &spec(SyncMethod::Fsync, Placement::Append, 1, false), &AtomicBool::new(false))
                .is_err()
        );
        drop(file);
        assert_eq!(std::fs::read_dir(dir).unwrap().count(), 0, "and is removed with it");
    }

    #[test]
    fn group_commit_covers_waiting_committers_with_one_flush() {
        let scratch = crate::testing::scratch_dir("commit-group");
        let dir: &Path = &scratch;
        let shared =
            run_commit_test(dir, &spec(SyncMethod::Fdatasync, Placement::Append, 8, true), &AtomicBool::new(false))
                .unwrap();
        assert!(shared.commits >= 8, "every committer commits at least once: {shared:?}");
        assert!(shared.flushes <= shared.commits);
        // How much a timed run batches is the host's to say (its CPUs against its flush); that committers who
        // arrive during a flush share the next one is the log's, held here by a flush that does not end until all
        // eight wait behind it.
        let log = SharedLog::new(Log::create(dir, &spec(SyncMethod::Fdatasync, Placement::Append, 8, true)).unwrap());
        log.state.lock().unwrap().flushing = true;
        std::thread::scope(|scope| {
            for _ in 0..8 {
                scope.spawn(|| log.commit(&[7u8; 512], SyncMethod::Fdatasync, Placement::Append).unwrap());
            }
            while log.state.lock().unwrap().records.len() < 8 * 512 {
                std::thread::sleep(Duration::from_millis(1));
            }
            log.state.lock().unwrap().flushing = false;
            log.flush_ended.notify_all();
        });
        assert_eq!(log.flushes.load(Ordering::Relaxed), 1, "eight waiting committers, one flush");
        drop(log);
        let separate =
            run_commit_test(dir, &spec(SyncMethod::Fdatasync, Placement::Append, 4, false), &AtomicBool::new(false))
                .unwrap();
        assert_eq!(separate.flushes, separate.commits, "separate logs never share a flush");
        assert_eq!(std::fs::read_dir(dir).unwrap().count(), 0);
    }

    #[test]
    fn the_shared_log_holds_every_record_in_order() {
        // One committer's records through the group-commit path land back to back, as a WAL's do.
        let scratch = crate::testing::scratch_dir("commit-order");
        let dir: &Path = &scratch;
        let log = SharedLog::new(Log::create(dir, &spec(SyncMethod::Fdatasync, Placement::Append, 1, true)).unwrap());
        for byte in [1u8, 2, 3] {
            log.commit(&[byte; 100], SyncMethod::Fdatasync, Placement::Append).unwrap();
        }
        let written = std::fs::read(&log.log.path).unwrap();
        assert_eq!(written.len(), 300);
        assert!(written[..100].iter().all(|b| *b == 1) && written[200..].iter().all(|b| *b == 3));
        assert_eq!(log.flushes.load(Ordering::Relaxed), 3);
        drop(log);
    }

    #[test]
    fn impossible_tests_are_refused() {
        let mut bad = spec(SyncMethod::OdirectOdsync, Placement::Append, 1, false);
        bad.write_bytes = 2048;
        assert!(check(&bad).unwrap_err().contains("4096-byte blocks"));
        bad.method = SyncMethod::Fdatasync;
        assert!(check(&bad).is_ok());
        bad.committers = 0;
        assert!(check(&bad).is_err());
        assert_eq!(
            offset(OVERWRITE_LOG_BYTES - 100, 8192, Placement::Overwrite),
            0,
            "a write that would pass the end wraps"
        );
        assert_eq!(offset(OVERWRITE_LOG_BYTES + 8192, 8192, Placement::Overwrite), 8192);
        assert_eq!(offset(12345, 8192, Placement::Append), 12345);
    }
}
