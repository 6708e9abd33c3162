//! The storage suite: create and fill the test file, then for each test one discarded warm-up run and `runs`
//! measured runs with a pause between them, optionally the fio cross-check, and remove the file on every exit path.

use crate::cache::{CacheHonesty, cache_honesty};
use crate::engine::{EngineChoice, EngineKind, select_engine};
use crate::error::BenchError;
use crate::fio::{self, FioJob};
use crate::runner::{JobConfig, JobResult, Region, RunLimit, RunSample, run_job};
use crate::spec::{Pattern, TestSpec, WriteSync};
use crate::testfile::{FillSummary, TestFile};
use envbench_base::latency::{LatencyHistogram, LatencySummary};
use envbench_base::page_cache::drop_page_cache;
use envbench_base::place::file_system_name;
use envbench_core::sampler::StepObserver;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// How the suite runs. Defaults mirror CrystalDiskMark 9: 1 GiB, a warm-up, 3 runs of 5 s, 5 s apart.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SuiteOptions {
    /// Where the test file is created.
    pub directory: PathBuf,
    pub file_size_bytes: u64,
    /// Measured runs per test.
    pub runs: u32,
    /// Length of each measured run.
    pub duration: Duration,
    /// Length of the warm-up run.
    pub warmup_duration: Duration,
    /// Pause between runs and between tests.
    pub interval: Duration,
    /// Whether one discarded warm-up run (of `warmup_duration`) precedes the measured runs.
    pub warmup: bool,
    /// O_DIRECT (true) or buffered I/O.
    pub direct: bool,
    pub engine: EngineChoice,
    /// Also run the equivalent fio job after each test's measured runs.
    pub cross_check_fio: bool,
    /// Seeds offsets and data, so runs can be repeated exactly.
    pub seed: u64,
}

impl Default for SuiteOptions {
    fn default() -> Self {
        SuiteOptions {
            directory: PathBuf::from("."),
            file_size_bytes: 1 << 30,
            runs: 3,
            duration: Duration::from_secs(5),
            warmup_duration: Duration::from_secs(5),
            interval: Duration::from_secs(5),
            warmup: true,
            direct: true,
            engine: EngineChoice::Auto,
            cross_check_fio: false,
            seed: 0x656e_7662_656e_6368,
        }
    }
}

impl SuiteOptions {
    /// Default options for a test file in `directory`.
    pub fn new(directory: impl Into<PathBuf>) -> SuiteOptions {
        SuiteOptions { directory: directory.into(), ..SuiteOptions::default() }
    }
}

/// What the suite tells the user about as it goes (the CLI prints these on stderr).
#[derive(Debug)]
pub enum ProgressEvent<'a> {
    /// The engine was chosen (with the reason when io_uring was not available) and the file created.
    Prepared {
        engine: EngineKind,
        fallback_reason: Option<&'a str>,
        path: &'a Path,
        size_bytes: u64,
    },
    /// The fill has written this much so far, in this long.
    Filling {
        written_bytes: u64,
        total_bytes: u64,
        elapsed: Duration,
    },
    Filled {
        summary: &'a FillSummary,
    },
    /// Test `index` (from 1) of `count` starts.
    TestStarted {
        index: usize,
        count: usize,
        test: &'a TestSpec,
    },
    WarmupStarted {
        test: &'a TestSpec,
    },
    RunStarted {
        test: &'a TestSpec,
        run: u32,
        runs: u32,
    },
    RunFinished {
        test: &'a TestSpec,
        run: u32,
        runs: u32,
        sample: &'a RunSample,
    },
    /// Pausing between runs or tests.
    Pausing {
        duration: Duration,
    },
    CrossCheckStarted {
        test: &'a TestSpec,
        command: &'a str,
    },
    TestFinished {
        outcome: &'a TestOutcome,
    },
}

/// Receives progress events. Closures taking a `&ProgressEvent` implement it.
pub trait Progress {
    fn on_event(&self, event: &ProgressEvent<'_>);
}

impl<F: Fn(&ProgressEvent<'_>)> Progress for F {
    fn on_event(&self, event: &ProgressEvent<'_>) {
        self(event)
    }
}

/// A progress receiver that ignores everything.
pub struct NoProgress;

impl Progress for NoProgress {
    fn on_event(&self, _event: &ProgressEvent<'_>) {}
}

/// The fio cross-check of one test: the command and either fio's figures or why there are none.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CrossCheck {
    pub command: String,
    pub sample: Option<RunSample>,
    pub error: Option<String>,
}

/// One test's results.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TestOutcome {
    /// e.g. `RND4K Q32T1 read`: what results are matched by.
    pub test_id: String,
    /// e.g. `4K Q32T1 read` in the cdm5 profile; the id when the profile gives no name.
    pub display_name: String,
    pub spec: TestSpec,
    pub engine_detail: String,
    /// Every measured run, in order.
    pub runs: Vec<RunSample>,
    /// Latency over all measured runs together.
    pub latency: LatencySummary,
    pub mean_mb_per_s: f64,
    /// The best run, as CrystalDiskMark reports (KDiskMark reports the mean; both are kept).
    pub best_mb_per_s: f64,
    pub mean_iops: f64,
    pub best_iops: f64,
    pub cross_check: Option<CrossCheck>,
    /// Latencies of all measured runs, merged; for further percentiles.
    #[serde(skip)]
    pub histogram: LatencyHistogram,
    /// Each measured run's latencies (so the same run of several hosts merges exactly).
    #[serde(skip)]
    pub run_histograms: Vec<LatencyHistogram>,
}

impl TestOutcome {
    fn from_runs(test: &TestSpec, jobs: &[JobResult]) -> TestOutcome {
        let runs: Vec<RunSample> = jobs.iter().map(JobResult::sample).collect();
        let run_histograms: Vec<LatencyHistogram> = jobs.iter().map(JobResult::latency).collect();
        let mut histogram = LatencyHistogram::new();
        for run in &run_histograms {
            histogram.merge(run);
        }
        let mean = |values: &mut dyn Iterator<Item = f64>| {
            let (sum, count) = values.fold((0.0, 0), |(sum, count), value| (sum + value, count + 1));
            if count == 0 { 0.0 } else { sum / count as f64 }
        };
        let best = |values: &mut dyn Iterator<Item = f64>| values.fold(0.0, f64::max);
        TestOutcome {
            test_id: test.id(),
            display_name: test.display_name(),
            spec: test.clone(),
            engine_detail: jobs.first().map(|job| job.engine_detail.clone()).unwrap_or_default(),
            latency: histogram.summary(),
            mean_mb_per_s: mean(&mut runs.iter().map(|run| run.mb_per_s)),
            best_mb_per_s: best(&mut runs.iter().map(|run| run.mb_per_s)),
            mean_iops: mean(&mut runs.iter().map(|run| run.iops)),
            best_iops: best(&mut runs.iter().map(|run| run.iops)),
            runs,
            cross_check: None,
            histogram,
            run_histograms,
        }
    }
}

/// The whole suite's results.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SuiteOutcome {
    pub engine: EngineKind,
    /// Why io_uring was not used, when it was wanted and could not be.
    pub engine_fallback_reason: Option<String>,
    pub directory: PathBuf,
    pub file_system: String,
    pub file_size_bytes: u64,
    pub direct: bool,
    pub cache: CacheHonesty,
    pub runs: u32,
    pub duration_ms: u64,
    pub interval_ms: u64,
    pub warmup: bool,
    pub warmup_duration_ms: u64,
    pub fill: Option<FillSummary>,
    /// Completed tests, in run order.
    pub tests: Vec<TestOutcome>,
    /// True when the cancel flag stopped the suite; `tests` then holds the tests that completed.
    pub interrupted: bool,
}

/// Check options and tests before anything is created: what the suite needs of its directory and its test file, too.
pub fn check_suite(options: &SuiteOptions, tests: &[TestSpec]) -> Result<(), BenchError> {
    validate(options, tests)?;
    crate::testfile::check_file_plan(&options.directory, options.file_size_bytes)
}

/// Check options and tests before anything is created.
pub(crate) fn validate(options: &SuiteOptions, tests: &[TestSpec]) -> Result<(), BenchError> {
    if tests.is_empty() {
        return Err(BenchError::InvalidSetup("no tests to run: give a profile or at least one test".into()));
    }
    if options.runs == 0 {
        return Err(BenchError::InvalidSetup("--runs must be at least 1".into()));
    }
    if options.duration.is_zero() {
        return Err(BenchError::InvalidSetup("--duration must be longer than zero, e.g. 5s".into()));
    }
    if options.warmup && options.warmup_duration.is_zero() {
        return Err(BenchError::InvalidSetup("the warm-up must be longer than zero, or turned off".into()));
    }
    for test in tests {
        test.validate()?;
        let needed_bytes = match test.pattern {
            Pattern::Sequential => test.block_bytes * u64::from(test.threads),
            Pattern::Random => test.block_bytes,
        };
        if needed_bytes > options.file_size_bytes {
            return Err(BenchError::InvalidSetup(format!(
                "{test} needs a test file of at least {} but --size is {}; use a larger --size",
                envbench_core::ByteSize(needed_bytes),
                envbench_core::ByteSize(options.file_size_bytes)
            )));
        }
    }
    Ok(())
}

/// Sleep up to `duration`, waking early when cancelled; true when cancelled.
fn pause(duration: Duration, cancel: &AtomicBool) -> bool {
    !envbench_base::wait::sleep_until(Instant::now() + duration, cancel)
}

/// Run `tests` (e.g. [`crate::Profile::tests`]) as `options` say. Progress goes to `progress`; `steps` hears each
/// test id at the test's start and end (and `fill` around the fill), so the OS sampler can attribute its figures.
/// Setting `cancel` stops within about one I/O; the result is then `interrupted` with the completed tests. The test
/// file is removed on every path, errors included.
pub fn run_suite(
    options: &SuiteOptions,
    tests: &[TestSpec],
    progress: &dyn Progress,
    steps: &dyn StepObserver,
    cancel: &AtomicBool,
) -> Result<SuiteOutcome, BenchError> {
    validate(options, tests)?;
    let selection = select_engine(options.engine)?;
    let cache = cache_honesty(options.direct, options.file_size_bytes);
    let file = TestFile::create(&options.directory, options.file_size_bytes, options.direct)?;
    progress.on_event(&ProgressEvent::Prepared {
        engine: selection.kind,
        fallback_reason: selection.fallback_reason.as_deref(),
        path: file.path(),
        size_bytes: file.size_bytes(),
    });
    let mut outcome = SuiteOutcome {
        engine: selection.kind,
        engine_fallback_reason: selection.fallback_reason.clone(),
        directory: options.directory.clone(),
        file_system: file_system_name(&options.directory),
        file_size_bytes: options.file_size_bytes,
        direct: options.direct,
        cache,
        runs: options.runs,
        duration_ms: options.duration.as_millis() as u64,
        interval_ms: options.interval.as_millis() as u64,
        warmup: options.warmup,
        warmup_duration_ms: options.warmup_duration.as_millis() as u64,
        fill: None,
        tests: Vec::new(),
        interrupted: false,
    };

    steps.step_started("fill");
    let fill_started = Instant::now();
    let filled = file.fill(selection.kind, options.direct, cancel, &mut |written_bytes, total_bytes| {
        progress.on_event(&ProgressEvent::Filling { written_bytes, total_bytes, elapsed: fill_started.elapsed() })
    });
    steps.step_finished("fill");
    match filled {
        Ok(summary) => {
            progress.on_event(&ProgressEvent::Filled { summary: &summary });
            outcome.fill = Some(summary);
        }
        Err(BenchError::Interrupted) => {
            outcome.interrupted = true;
            return Ok(outcome);
        }
        Err(error) => return Err(error),
    }

    let runner = TestRunner { options, file: &file, engine: selection.kind, cache, progress, cancel };
    for (index, test) in tests.iter().enumerate() {
        // A pause between tests is said only when there is one (the quick suite has none).
        if index > 0 {
            if !options.interval.is_zero() {
                progress.on_event(&ProgressEvent::Pausing { duration: options.interval });
            }
            if pause(options.interval, cancel) {
                outcome.interrupted = true;
                break;
            }
        }
        progress.on_event(&ProgressEvent::TestStarted { index: index + 1, count: tests.len(), test });
        let test_id = test.id();
        steps.step_started(&test_id);
        let result = runner.run_test(index, test);
        steps.step_finished(&test_id);
        match result? {
            Some(test_outcome) => {
                progress.on_event(&ProgressEvent::TestFinished { outcome: &test_outcome });
                outcome.tests.push(test_outcome);
            }
            None => {
                outcome.interrupted = true;
                break;
            }
        }
    }
    file.remove()?;
    Ok(outcome)
}

/// What every test of a suite shares.
pub(crate) struct TestRunner<'a> {
    pub(crate) options: &'a SuiteOptions,
    pub(crate) file: &'a TestFile,
    pub(crate) engine: EngineKind,
    pub(crate) cache: CacheHonesty,
    pub(crate) progress: &'a dyn Progress,
    pub(crate) cancel: &'a AtomicBool,
}

impl TestRunner<'_> {
    /// One job of `test`; `None` when interrupted.
    fn run_once(&self, test: &TestSpec, duration: Duration, seed: u64) -> Result<Option<JobResult>, BenchError> {
        if self.cache.drops_cache() {
            drop_page_cache().map_err(|source| BenchError::Io { context: "dropping the page cache".into(), source })?;
        }
        let file = self.file.open(self.options.direct, test.write_sync == WriteSync::Dsync)?;
        let job = run_job(&JobConfig {
            spec: test,
            file: &file,
            path: self.file.path(),
            region: Region { offset_bytes: 0, len_bytes: self.file.size_bytes() },
            limit: RunLimit::Duration(duration),
            engine: self.engine,
            seed,
            cancel: self.cancel,
            window: None,
        })?;
        Ok(if job.interrupted { None } else { Some(job) })
    }

    /// Warm-up, measured runs and cross-check of one test; `None` when interrupted.
    pub(crate) fn run_test(&self, index: usize, test: &TestSpec) -> Result<Option<TestOutcome>, BenchError> {
        let options = self.options;
        let seed_of = |run: u32| options.seed ^ ((index as u64) << 32) ^ u64::from(run);
        if options.warmup {
            self.progress.on_event(&ProgressEvent::WarmupStarted { test });
            if self.run_once(test, options.warmup_duration, seed_of(0))?.is_none() {
                return Ok(None);
            }
        }
        let mut jobs = Vec::with_capacity(options.runs as usize);
        for run in 1..=options.runs {
            if run > 1 {
                if !options.interval.is_zero() {
                    self.progress.on_event(&ProgressEvent::Pausing { duration: options.interval });
                }
                if pause(options.interval, self.cancel) {
                    return Ok(None);
                }
            }
            self.progress.on_event(&ProgressEvent::RunStarted { test, run, runs: options.runs });
            let Some(job) = self.run_once(test, options.duration, seed_of(run))? else { return Ok(None) };
            let sample = job.sample();
            self.progress.on_event(&ProgressEvent::RunFinished { test, run, runs: options.runs, sample: &sample });
            jobs.push(job);
        }
        let mut outcome = TestOutcome::from_runs(test, &jobs);
        if options.cross_check_fio {
            let args = fio::fio_args(&FioJob {
                spec: test,
                path: self.file.path(),
                file_size_bytes: self.file.size_bytes(),
                direct: options.direct,
                engine: self.engine,
                duration: options.duration,
            });
            let command = fio::command_line(&args);
            self.progress.on_event(&ProgressEvent::CrossCheckStarted { test, command: &command });
            let (sample, error) = match fio::run_fio(&args, test, self.cancel) {
                Ok(sample) => (Some(sample), None),
                Err(fio::CrossCheckError::Interrupted) => return Ok(None),
                Err(error) => (None, Some(error.to_string())),
            };
            outcome.cross_check = Some(CrossCheck { command, sample, error });
        }
        Ok(Some(outcome))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::result_records;
    use crate::testing::scratch_dir;
    use std::sync::Mutex;
    use std::sync::atomic::Ordering;

    /// Remembers step notifications, as the OS sampler would see them.
    #[derive(Default)]
    struct RecordingSteps(Mutex<Vec<String>>);

    impl StepObserver for RecordingSteps {
        fn step_started(&self, step: &str) {
            self.0.lock().unwrap().push(format!("start {step}"));
        }
        fn step_finished(&self, step: &str) {
            self.0.lock().unwrap().push(format!("end {step}"));
        }
    }

    fn quick_options(dir: &Path) -> SuiteOptions {
        SuiteOptions {
            file_size_bytes: 8 << 20,
            runs: 2,
            duration: Duration::from_millis(150),
            warmup_duration: Duration::from_millis(100),
            interval: Duration::ZERO,
            ..SuiteOptions::new(dir)
        }
    }

    fn is_empty(dir: &Path) -> bool {
        std::fs::read_dir(dir).unwrap().next().is_none()
    }

    #[test]
    fn a_small_suite_runs_every_test_and_leaves_nothing_behind() {
        let dir = scratch_dir("suite");
        let tests: Vec<TestSpec> = ["rnd:4k:q4:t2:read", "seq:64k:q2:t1:write:fsync1", "rnd:8k:q4:t1:mix70"]
            .iter()
            .map(|text| text.parse().unwrap())
            .collect();
        let events = Mutex::new(Vec::new());
        let progress = |event: &ProgressEvent<'_>| {
            let name = format!("{event:?}");
            events.lock().unwrap().push(name.split([' ', '{']).next().unwrap().to_string());
        };
        let steps = RecordingSteps::default();
        let outcome = run_suite(&quick_options(&dir), &tests, &progress, &steps, &AtomicBool::new(false)).unwrap();

        assert!(!outcome.interrupted);
        assert!(is_empty(&dir), "the test file must be removed");
        assert_eq!(outcome.tests.len(), 3);
        for (test, spec) in outcome.tests.iter().zip(&tests) {
            assert_eq!(test.test_id, spec.id());
            assert_eq!(test.runs.len(), 2);
            assert!(test.runs.iter().all(|run| run.ops > 0 && run.iops > 0.0));
            assert!(test.best_mb_per_s >= test.mean_mb_per_s);
            assert_eq!(test.latency.count, test.runs.iter().map(|run| run.latency.count).sum::<u64>());
        }
        assert_eq!(outcome.tests[0].runs[0].threads.len(), 2);
        assert_eq!(
            *steps.0.lock().unwrap(),
            [
                "start fill",
                "end fill",
                "start RND4K Q4T2 read",
                "end RND4K Q4T2 read",
                "start SEQ64K Q2T1 write fsync1",
                "end SEQ64K Q2T1 write fsync1",
                "start RND8K Q4T1 mix70",
                "end RND8K Q4T1 mix70",
            ]
        );
        let events = events.into_inner().unwrap();
        assert_eq!(events.iter().filter(|e| *e == "RunFinished").count(), 6);
        assert_eq!(events.iter().filter(|e| *e == "WarmupStarted").count(), 3);
        assert_eq!(events.first().map(String::as_str), Some("Prepared"));
        assert_eq!(events.last().map(String::as_str), Some("TestFinished"));

        let records = result_records(&outcome);
        assert_eq!(records.len(), 3 * 9);
        assert!(records.iter().all(|record| record.samples.len() == 2));
        let json = serde_json::to_value(&outcome).unwrap();
        assert_eq!(json["tests"][2]["spec"]["operation"]["mixed"]["read_percent"], 70);
    }

    #[test]
    fn cancelling_during_a_run_stops_quickly_and_removes_the_file() {
        let dir = scratch_dir("suite-cancel");
        let tests: Vec<TestSpec> =
            ["rnd:4k:q4:t1:read", "rnd:4k:q4:t1:write"].iter().map(|t| t.parse().unwrap()).collect();
        let cancel = AtomicBool::new(false);
        let options = SuiteOptions { duration: Duration::from_secs(30), runs: 1, warmup: false, ..quick_options(&dir) };
        let started = Instant::now();
        let progress = |event: &ProgressEvent<'_>| {
            if let ProgressEvent::RunStarted { .. } = event {
                let cancel = &cancel;
                // Cancel shortly after the run starts, from another thread, as a Ctrl-C handler would.
                std::thread::scope(|scope| {
                    scope.spawn(move || {
                        std::thread::sleep(Duration::from_millis(100));
                        cancel.store(true, Ordering::Relaxed);
                    });
                });
            }
        };
        let outcome = run_suite(&options, &tests, &progress, &envbench_core::sampler::NoSteps, &cancel).unwrap();
        assert!(outcome.interrupted);
        assert!(outcome.tests.is_empty());
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(is_empty(&dir), "the test file must be removed on interrupt");
    }

    #[test]
    fn an_interrupted_suite_keeps_the_tests_it_completed() {
        let dir = scratch_dir("suite-keep");
        let tests: Vec<TestSpec> =
            ["rnd:4k:q4:t1:read", "rnd:4k:q4:t1:write"].iter().map(|t| t.parse().unwrap()).collect();
        let cancel = AtomicBool::new(false);
        let progress = |event: &ProgressEvent<'_>| {
            if let ProgressEvent::TestStarted { index: 2, .. } = event {
                cancel.store(true, Ordering::Relaxed);
            }
        };
        let steps = RecordingSteps::default();
        let outcome = run_suite(&quick_options(&dir), &tests, &progress, &steps, &cancel).unwrap();
        assert!(outcome.interrupted);
        assert_eq!(outcome.tests.len(), 1);
        assert_eq!(outcome.tests[0].test_id, "RND4K Q4T1 read");
        // The interrupted test's step is closed too.
        assert_eq!(steps.0.lock().unwrap().last().unwrap(), "end RND4K Q4T1 write");
        assert!(is_empty(&dir));
    }

    #[test]
    fn cancelling_during_the_fill_removes_the_file() {
        let dir = scratch_dir("suite-cancel-fill");
        let cancel = AtomicBool::new(false);
        let progress = |event: &ProgressEvent<'_>| {
            if let ProgressEvent::Filling { .. } = event {
                cancel.store(true, Ordering::Relaxed);
            }
        };
        let options = SuiteOptions { file_size_bytes: 256 << 20, ..quick_options(&dir) };
        let tests = vec!["rnd:4k:q1:t1:read".parse().unwrap()];
        let outcome = run_suite(&options, &tests, &progress, &envbench_core::sampler::NoSteps, &cancel).unwrap();
        assert!(outcome.interrupted && outcome.fill.is_none());
        assert!(is_empty(&dir));
    }

    #[test]
    fn bad_options_are_refused_before_anything_is_created() {
        let dir = scratch_dir("suite-bad");
        let one: Vec<TestSpec> = vec!["rnd:4k:q1:t1:read".parse().unwrap()];
        let cases = [
            (SuiteOptions { runs: 0, ..quick_options(&dir) }, one.clone(), "--runs must be at least 1"),
            (SuiteOptions { duration: Duration::ZERO, ..quick_options(&dir) }, one.clone(), "--duration"),
            (quick_options(&dir), vec![], "no tests to run"),
            (SuiteOptions { warmup_duration: Duration::ZERO, ..quick_options(&dir) }, one.clone(), "warm-up"),
            (
                quick_options(&dir),
                vec!["seq:4m:q1:t4:read".parse().unwrap()],
                "SEQ4M Q1T4 read needs a test file of at least 16 MiB but --size is 8 MiB",
            ),
        ];
        for (options, tests, message) in cases {
            let error =
                run_suite(&options, &tests, &NoProgress, &envbench_core::sampler::NoSteps, &AtomicBool::new(false))
                    .unwrap_err();
            assert!(error.to_string().contains(message), "{error}");
        }
        assert!(is_empty(&dir));
    }

    /// A file system mounted for one test (needs root; tests that need one say so and pass vacuously without).
    struct Mount(ScratchMount);
    type ScratchMount = crate::testing::ScratchDir;

    impl Mount {
        fn new(name: &str, fs_type: &str, options: &str) -> Option<Mount> {
            let dir = scratch_dir(name);
            let status = std::process::Command::new("mount")
                .args(["-t", fs_type, "-o", options, fs_type])
                .arg(&*dir)
                .stderr(std::process::Stdio::null())
                .status()
                .ok()?;
            status.success().then_some(Mount(dir))
        }
    }

    impl Drop for Mount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg("-l").arg(&*self.0).status();
        }
    }

    #[test]
    fn a_file_system_refusing_o_direct_gets_the_typed_error() {
        // tmpfs accepts O_DIRECT since Linux 6.6; ramfs still refuses it.
        let Some(mount) = Mount::new("ramfs", "ramfs", "size=8m") else {
            eprintln!("skipped: mounting ramfs needs root");
            return;
        };
        let options = SuiteOptions { directory: mount.0.to_path_buf(), ..quick_options(&mount.0) };
        let tests = vec!["rnd:4k:q1:t1:read".parse().unwrap()];
        let error = run_suite(&options, &tests, &NoProgress, &envbench_core::sampler::NoSteps, &AtomicBool::new(false))
            .unwrap_err();
        assert!(matches!(&error, BenchError::DirectIoRefused { fs_type, .. } if fs_type == "ramfs"), "{error:?}");
        assert!(error.to_string().contains("filesystem refuses O_DIRECT (ramfs); use --buffered"), "{error}");
        assert!(is_empty(&mount.0), "the refused file must not be left behind");
    }

    /// The one test file in `dir`.
    fn outcome_path(dir: &Path) -> PathBuf {
        let mut files = std::fs::read_dir(dir).unwrap().map(|entry| entry.unwrap().path());
        files.find(|path| path.file_name().unwrap().to_string_lossy().starts_with("envbench-")).unwrap()
    }

    #[test]
    fn a_disk_filling_up_during_a_write_test_is_a_typed_error_and_the_file_goes() {
        let Some(mount) = Mount::new("tmpfs-full", "tmpfs", "size=8m") else {
            eprintln!("skipped: mounting tmpfs needs root");
            return;
        };
        // The filled 6 MiB file fits; then, as the write test starts, its blocks are given back and taken by another
        // file, so the test's writes find no space.
        let options = SuiteOptions { file_size_bytes: 6 << 20, warmup: false, runs: 1, ..quick_options(&mount.0) };
        let hog = mount.0.join("hog");
        let progress = |event: &ProgressEvent<'_>| {
            if let ProgressEvent::TestStarted { .. } = event {
                let path = &outcome_path(&mount.0);
                // Give the space back to the file system, then take it with another file.
                let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
                // SAFETY: punching a hole in our own test file.
                let punched = unsafe {
                    libc::fallocate(
                        std::os::fd::AsRawFd::as_raw_fd(&file),
                        libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                        0,
                        6 << 20,
                    )
                };
                assert_eq!(punched, 0);
                std::fs::write(&hog, vec![1u8; 6 << 20]).unwrap();
            }
        };
        let tests = vec!["seq:1m:q1:t1:write".parse().unwrap()];
        let error = run_suite(&options, &tests, &progress, &envbench_core::sampler::NoSteps, &AtomicBool::new(false))
            .unwrap_err();
        assert!(matches!(error, BenchError::DiskFull { .. }), "{error:?}");
        assert!(error.to_string().contains("the disk is full"), "{error}");
        std::fs::remove_file(&hog).unwrap();
        assert!(is_empty(&mount.0), "the test file must be removed when the disk fills up");
    }
}
