//! `envbench disk` as the driver runs it: the command line, the plan, the rule that flags reads a cache served, and
//! the CrystalDiskMark-like table.

use crate::spec::SpecError;
use crate::suite::check_suite;
use crate::{
    BenchError, EngineChoice, Profile, ProgressEvent, SuiteOptions, SuiteOutcome, TestOutcome, TestSpec, WORKLOAD,
    WORKLOAD_VERSION, WriteSync, result_records, run_suite,
};
use clap::{Args, FromArgMatches};
use envbench_core::model::{ResultRecord, StoredRun};
use envbench_core::sampler::SamplerSeries;
use envbench_core::text::{Align, Table, heading, micros, number, plural};
use envbench_core::units::format_duration;
use envbench_core::workload::{
    Envelope, Measured, Plan, Planned, Progress, ReadBack, RunContext, ScalingCurve, Timeline, Workload, WorkloadError,
};
use envbench_core::{ByteSize, DurationArg};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A read that moved this much more than the device saw came, at least partly, from a cache.
pub const CACHE_SUSPICION_RATIO: f64 = 2.0;
/// The flag on results that the device could not have delivered.
pub const EXCEEDS_DEVICE_FLAG: &str = "exceeds-device";
/// The tests whose figures head the scorecard (both in the default profile).
pub const HEADLINE_RANDOM_TEST: &str = "RND4K Q32T1 read";
pub const HEADLINE_SEQUENTIAL_TEST: &str = "SEQ1M Q8T1 read";
/// The metrics the scorecard reads.
pub const IOPS_METRIC: &str = "iops";
pub const THROUGHPUT_METRIC: &str = "throughput";

/// The arguments of `envbench disk`.
#[derive(Args, Debug)]
pub struct DiskArgs {
    /// Directory in which envbench creates (and afterwards removes) its test file.
    #[arg(long, default_value = ".")]
    pub dir: PathBuf,
    /// Test profile: cdm, cdm-nvme, cdm5, anvil, db, or commit (commit latency by sync method and the group-commit
    /// curve).
    #[arg(long, default_value = "cdm")]
    pub profile: String,
    /// An ad-hoc test instead of the profile, e.g. rnd:8k:q32:t1:read, seq:1m:q8:t1:write, rnd:8k:q16:t1:mix70,
    /// seq:16k:q1:t1:write:fsync1 (repeatable).
    #[arg(long = "test", value_name = "TEST")]
    pub tests: Vec<String>,
    /// Test file size, e.g. 1g (default 1 GiB; 256 MiB with --quick).
    #[arg(long, value_name = "SIZE")]
    pub size: Option<ByteSize>,
    /// Measured runs per test (default 3, as CrystalDiskMark 9).
    #[arg(long)]
    pub runs: Option<u32>,
    /// Length of each run, e.g. 5s (the default).
    #[arg(long, value_name = "DURATION")]
    pub duration: Option<DurationArg>,
    /// Pause between runs and tests, e.g. 5s (the default).
    #[arg(long, value_name = "DURATION")]
    pub interval: Option<DurationArg>,
    /// A quick look: 5 runs of 0.5 s per test after a 0.5 s warm-up (five samples, enough for compare to decide), no
    /// pauses, a 256 MiB file.
    #[arg(long)]
    pub quick: bool,
    /// Skip the discarded warm-up run.
    #[arg(long)]
    pub no_warmup: bool,
    /// Buffered I/O instead of O_DIRECT (results need a file of at least 2x RAM or a dropped page cache).
    #[arg(long)]
    pub buffered: bool,
    /// I/O engine: auto (io_uring where allowed), io_uring, or threadpool.
    #[arg(long, default_value = "auto", value_parser = clap::value_parser!(EngineChoice))]
    pub engine: EngineChoice,
    /// Write durability: none, fsync:N (fdatasync every N writes) or dsync (O_DSYNC).
    #[arg(long, value_name = "MODE")]
    pub write_sync: Option<String>,
    /// Run the equivalent fio job after each test and show both: --cross-check fio (with --profile commit:
    /// --cross-check pg_test_fsync).
    #[arg(long, value_name = "TOOL")]
    pub cross_check: Option<String>,
    /// Sustained writes: each write test (default 128 KiB sequential Q8 and 4 KiB random Q32, or --test) writes
    /// without a pause for DURATION (default 10m; 60s with --quick) on a file of twice the RAM (or --size), and
    /// envbench judges burst, sustained speed, SNIA steady state and the cliff.
    #[arg(long, value_name = "DURATION", num_args = 0..=1)]
    pub sustained: Option<Option<DurationArg>>,
    /// With --sustained: write the whole file sequentially twice first, as SNIA's performance test specification
    /// preconditions a drive.
    #[arg(long)]
    pub precondition: bool,
}

/// Measured runs of each test with `--quick`: as many as a verdict's test needs to decide (Mann-Whitney U with 5 a
/// side).
pub const QUICK_RUNS: u32 = 5;

/// The most measured runs a test takes.
pub const MAX_RUNS: u32 = 1000;

/// The storage suite.
pub struct DiskWorkload;

/// The registration of `disk`.
pub static DISK: DiskWorkload = DiskWorkload;

impl From<BenchError> for WorkloadError {
    fn from(error: BenchError) -> WorkloadError {
        match error {
            BenchError::Interrupted => WorkloadError::interrupted(),
            error if error.is_usage() => WorkloadError::usage(error.to_string()),
            error => WorkloadError::failure(error.to_string()),
        }
    }
}

impl From<SpecError> for WorkloadError {
    fn from(error: SpecError) -> WorkloadError {
        WorkloadError::usage(error.to_string())
    }
}

impl Workload for DiskWorkload {
    fn name(&self) -> &'static str {
        WORKLOAD
    }

    fn version(&self) -> u32 {
        WORKLOAD_VERSION
    }

    fn command(&self) -> clap::Command {
        DiskArgs::augment_args(clap::Command::new(WORKLOAD)).about(
            "Storage suite: CrystalDiskMark/Anvil-style profiles and a database-shaped one, with O_DIRECT and \
             io_uring.",
        )
    }

    fn plan(&self, matches: &clap::ArgMatches) -> Result<Plan, WorkloadError> {
        let args = DiskArgs::from_arg_matches(matches).map_err(|e| WorkloadError::usage(e.to_string()))?;
        if args.sustained.is_some() {
            return Ok(Plan::Run(Box::new(plan_sustained(&args)?)));
        }
        if args.precondition {
            return Err(usage("--precondition applies to --sustained runs: add --sustained [DURATION]"));
        }
        if args.profile == "commit" && args.tests.is_empty() {
            return Ok(Plan::Run(Box::new(plan_commit(&args, args.cross_check.as_deref())?)));
        }
        let (options, tests) = plan(&args)?;
        check_suite(&options, &tests)?;
        let disk = DiskRun { options, tests };
        if args.profile == "db" && args.tests.is_empty() {
            // The database profile ends with what a commit costs: the commit profile's tests.
            // fio cross-checks the suite's tests; pg_test_fsync the commit tests.
            let pg_test_fsync = args.cross_check.as_deref().filter(|tool| *tool != "fio");
            let commit = plan_commit(&args, pg_test_fsync)?;
            return Ok(Plan::Run(Box::new(DbRun { disk, commit })));
        }
        Ok(Plan::Run(Box::new(disk)))
    }

    fn fleet(&self) -> Option<&dyn envbench_core::fleet::FleetWorkload> {
        Some(&crate::fleet::DiskFleet)
    }

    fn suite_side(&self) -> &dyn envbench_core::workload::SuiteSide {
        self
    }
}

impl envbench_core::workload::SuiteSide for DiskWorkload {
    fn table(&self, suite: &str) -> Option<&'static str> {
        match suite {
            "quick" => Some(
                r#"
quick = true
"#,
            ),
            "standard" => Some(
                r#"
profile = "cdm"
"#,
            ),
            "smoke" => Some(
                r#"
size = "16m"
runs = 1
duration = "100ms"
interval = "0s"
no_warmup = true
test = ["rnd:4k:q8:t1:read", "seq:128k:q2:t1:write"]
"#,
            ),
            _ => None,
        }
    }
}

impl ReadBack for DiskWorkload {
    fn cost_units(&self) -> &'static [envbench_core::workload::CostUnit] {
        &[envbench_core::workload::CostUnit {
            metric: IOPS_METRIC,
            tests: "rnd:4k",
            per: envbench_core::workload::Per::Rate(1000.0),
            words: "1,000 IOPS (4 KiB random)",
        }]
    }

    fn title(&self) -> Option<&'static str> {
        Some("storage")
    }

    fn noise_margin(&self) -> f64 {
        envbench_core::stats::STORAGE_NOISE_MARGIN
    }

    fn more_samples(&self) -> &'static str {
        "--runs 5"
    }

    /// Profile tests by their threads and queue depth, commit-latency tests by their committers.
    fn concurrency_knobs(&self) -> &'static [&'static str] {
        &["threads", "queue_depth", "committers"]
    }

    fn governed_by(&self) -> &'static [envbench_core::workload::Resource] {
        use envbench_core::workload::Resource;
        &[Resource::Storage]
    }

    /// One chart per sustained write test: MB/s each second with the steady-state window and the cliff.
    fn timelines(&self, run: &StoredRun) -> Vec<Timeline> {
        run.attachments
            .get(WORKLOAD)
            .and_then(crate::sustained::SustainedDocument::of)
            .map(|document| crate::sustained::timelines(&document))
            .unwrap_or_default()
    }

    /// The group-commit curve of a commit run.
    fn scaling(&self, run: &StoredRun) -> Option<ScalingCurve> {
        let document = run.attachments.get(WORKLOAD)?.get(crate::commit_suite::COMMIT_ATTACHMENT)?;
        crate::commit_suite::scaling(&serde_json::from_value(document.clone()).ok()?)
    }

    fn headline(&self, run: &StoredRun) -> String {
        // The statistics the table shows first: the mean of the runs (KDiskMark's figure) and the best
        // (CrystalDiskMark's), each named; medians where the commit test's table shows them.
        let mut parts = Vec::new();
        let mean_and_best = |test: &str, metric: &str, unit: &str| {
            run.summary(test, metric).map(|s| match s.count {
                1 => format!("{test} {:.0} {unit}", s.mean),
                _ => format!("{test} {:.0} {unit} mean, best {:.0}", s.mean, s.max),
            })
        };
        parts.extend(mean_and_best(HEADLINE_RANDOM_TEST, IOPS_METRIC, "IOPS"));
        parts.extend(mean_and_best(HEADLINE_SEQUENTIAL_TEST, THROUGHPUT_METRIC, "MB/s"));
        let commit = "COMMIT 8K fdatasync append";
        if let (Some(rate), Some(p99)) = (run.median(commit, "commits_per_s"), run.median(commit, "latency_p99")) {
            parts.push(format!("{commit} {rate:.0} commits/s, p99 {p99:.0} us (medians)"));
        }
        for test in crate::sustained::default_tests().iter().map(crate::sustained::test_id) {
            if let (Some(sustained), Some(burst)) =
                (run.median(&test, THROUGHPUT_METRIC), run.median(&test, "burst_throughput"))
            {
                parts.push(format!("{test} {sustained:.0} MB/s sustained (burst {burst:.0})"));
            }
        }
        if parts.is_empty()
            && let Some(first) = run.results.iter().find(|r| r.record.metric == THROUGHPUT_METRIC)
        {
            let mb = run.median(&first.record.test_id, THROUGHPUT_METRIC).unwrap_or(0.0);
            parts.push(format!("{} {mb:.1} MB/s", first.record.test_id));
        }
        parts.join("; ")
    }
}

/// The shortest and longest time one measured run (or commit test) may take: shorter measures nothing but the timer,
/// longer is a mistyped unit (`--duration 100000h`); a long soak is `--sustained`.
const RUN_DURATION: (Duration, Duration) = (Duration::from_millis(100), Duration::from_secs(3600));
/// The longest pause between runs.
const MAX_INTERVAL: Duration = Duration::from_secs(3600);
/// The longest sustained write test (SNIA's steady state is usually reached within hours).
const MAX_SUSTAINED: Duration = Duration::from_secs(72 * 3600);
/// The most tests one run takes (`--test`, repeatable).
pub const MAX_TESTS: usize = 64;

/// `--duration`: longer than zero, and within [`RUN_DURATION`].
fn run_duration(duration: &DurationArg) -> Result<Duration, WorkloadError> {
    if duration.get().is_zero() {
        return Err(usage("--duration must be longer than zero, e.g. 5s"));
    }
    duration.within("--duration", RUN_DURATION.0, RUN_DURATION.1).map_err(usage)
}

/// The commit profile: every test runs --duration (default 5 s; 1 s with --quick) in --dir.
fn plan_commit(args: &DiskArgs, cross_check: Option<&str>) -> Result<crate::commit_suite::CommitRun, WorkloadError> {
    crate::testfile::check_directory(&args.dir)?;
    if args.profile == "commit" {
        // The db profile's suite part takes these; the commit tests alone would silently ignore them.
        for (option, given) in [("--runs", args.runs.is_some()), ("--interval", args.interval.is_some())] {
            if given {
                return Err(usage(format!(
                    "{option} does not apply to --profile commit: each commit test runs once for --duration"
                )));
            }
        }
    }
    let duration = match &args.duration {
        Some(duration) => run_duration(duration)?,
        None if args.quick => Duration::from_secs(1),
        None => Duration::from_secs(5),
    };
    let pg_test_fsync = match cross_check {
        None => None,
        Some("pg_test_fsync") => Some(envbench_core::programs::find_postgres_program("pg_test_fsync").ok_or_else(|| {
            usage(
                "--cross-check pg_test_fsync: pg_test_fsync was not found on the PATH or under /usr/lib/postgresql; \
                 it ships with the PostgreSQL server package",
            )
        })?),
        Some(other) => {
            return Err(usage(format!("--cross-check {other}: --profile commit cross-checks with pg_test_fsync")));
        }
    };
    Ok(crate::commit_suite::CommitRun {
        directory: args.dir.clone(),
        tests: crate::commit_suite::commit_tests(duration),
        pg_test_fsync,
    })
}

/// A sustained run: `--sustained [DURATION]` with its own tests, size policy and preconditioning.
fn plan_sustained(args: &DiskArgs) -> Result<crate::sustained::SustainedRun, WorkloadError> {
    use crate::sustained::{DEFAULT_DURATION, MIN_DURATION, QUICK_DURATION};
    let not_with = [
        ("--profile", args.profile != "cdm"),
        ("--runs", args.runs.is_some()),
        ("--duration", args.duration.is_some()),
        ("--interval", args.interval.is_some()),
        ("--no-warmup", args.no_warmup),
        ("--buffered", args.buffered),
        ("--cross-check", args.cross_check.is_some()),
    ];
    if let Some((option, _)) = not_with.iter().find(|(_, given)| *given) {
        return Err(usage(format!(
            "{option} does not apply to --sustained: a sustained run writes each test once, without a pause, for              --sustained DURATION with O_DIRECT (choose its tests with --test)"
        )));
    }
    let duration = match args.sustained.clone().flatten() {
        None if args.quick => QUICK_DURATION,
        None => DEFAULT_DURATION,
        Some(duration) => duration.get(),
    };
    if duration < MIN_DURATION {
        return Err(usage(format!(
            "--sustained {}: steady state is judged over five rounds; give at least {}s",
            format_duration(duration),
            MIN_DURATION.as_secs()
        )));
    }
    if duration > MAX_SUSTAINED {
        return Err(usage(format!(
            "--sustained {}: give at most {}h; a longer soak is several runs",
            args.sustained.clone().flatten().map(|d| d.to_string()).unwrap_or_default(),
            MAX_SUSTAINED.as_secs() / 3600
        )));
    }
    check_test_count(&args.tests)?;
    let write_sync: Option<WriteSync> = args.write_sync.as_deref().map(str::parse).transpose()?;
    let mut tests: Vec<TestSpec> = if args.tests.is_empty() {
        crate::sustained::default_tests()
    } else {
        args.tests.iter().map(|t| t.parse::<TestSpec>()).collect::<Result<_, _>>()?
    };
    for test in &mut tests {
        if test.operation.read_percent() != 0 {
            return Err(usage(format!(
                "--test {}: --sustained measures writes; give write tests such as seq:128k:q8:t1:write",
                test.id()
            )));
        }
        if let Some(write_sync) = write_sync
            && test.write_sync == WriteSync::None
        {
            test.write_sync = write_sync;
        }
        test.validate()?;
    }
    crate::testfile::check_directory(&args.dir)?;
    let size = args.size.map(ByteSize::bytes);
    let (file_size_bytes, size_note) = crate::sustained::plan_file_size(&args.dir, size)?;
    crate::testfile::check_file_plan(&args.dir, file_size_bytes)?;
    if let Some(test) = tests.iter().find(|t| t.block_bytes * u64::from(t.threads) > file_size_bytes) {
        return Err(usage(format!("--size {}: too small for {}", ByteSize(file_size_bytes), test.id())));
    }
    Ok(crate::sustained::SustainedRun {
        directory: args.dir.clone(),
        tests,
        duration,
        file_size_bytes,
        size_given: size.is_some(),
        size_note,
        precondition: args.precondition,
        engine: args.engine,
        seed: 0x5eed_5eed,
    })
}

/// A usage error (exit status 2).
fn usage(message: impl Into<String>) -> WorkloadError {
    WorkloadError::usage(message)
}

/// At most [`MAX_TESTS`] `--test`s.
fn check_test_count(tests: &[String]) -> Result<(), WorkloadError> {
    if tests.len() > MAX_TESTS {
        return Err(usage(format!(
            "{} --test options are more than {MAX_TESTS}; split the tests into several runs",
            tests.len()
        )));
    }
    Ok(())
}

/// The suite options and tests the arguments ask for, or a usage error.
pub(crate) fn plan(args: &DiskArgs) -> Result<(SuiteOptions, Vec<TestSpec>), WorkloadError> {
    let mut options = SuiteOptions::new(&args.dir);
    if args.quick {
        // Five short runs rather than one long one: a comparison needs five samples a side to decide.
        options.runs = QUICK_RUNS;
        options.duration = Duration::from_millis(500);
        options.warmup_duration = Duration::from_millis(500);
        options.interval = Duration::ZERO;
        options.file_size_bytes = 256 << 20;
    }
    if let Some(size) = args.size {
        options.file_size_bytes = size.bytes();
    }
    if let Some(runs) = args.runs {
        if runs == 0 {
            return Err(usage("--runs must be at least 1"));
        }
        if runs > MAX_RUNS {
            return Err(usage(format!("--runs {runs}: give at most {MAX_RUNS} runs")));
        }
        options.runs = runs;
    }
    if let Some(duration) = &args.duration {
        options.duration = run_duration(duration)?;
        if !args.quick {
            options.warmup_duration = options.duration;
        }
    }
    if let Some(interval) = &args.interval {
        options.interval = interval.within("--interval", Duration::ZERO, MAX_INTERVAL).map_err(usage)?;
    }
    options.warmup = !args.no_warmup;
    options.direct = !args.buffered;
    options.engine = args.engine;
    options.cross_check_fio = match args.cross_check.as_deref() {
        None => false,
        Some("fio") => true,
        // The db profile's commit tests take it.
        Some("pg_test_fsync") if args.profile == "db" && args.tests.is_empty() => false,
        Some(other) => {
            return Err(usage(format!(
                "--cross-check {other}: the cross-check tools are fio, and pg_test_fsync with --profile commit or db"
            )));
        }
    };
    let write_sync: Option<WriteSync> = args.write_sync.as_deref().map(str::parse).transpose()?;
    check_test_count(&args.tests)?;
    let mut tests: Vec<TestSpec> = if args.tests.is_empty() {
        Profile::parse(&args.profile)?.tests()
    } else {
        args.tests.iter().map(|t| t.parse::<TestSpec>()).collect::<Result<_, _>>()?
    };
    if let Some(write_sync) = write_sync {
        // The user's durability mode applies to every writing test that does not define its own (the db profile's log
        // test always syncs each write).
        for test in tests.iter_mut().filter(|t| t.operation.writes() && t.write_sync == WriteSync::None) {
            test.write_sync = write_sync;
        }
    }
    for test in &tests {
        test.validate()?;
    }
    Ok((options, tests))
}

struct DiskRun {
    options: SuiteOptions,
    tests: Vec<TestSpec>,
}

impl Planned for DiskRun {
    fn data_dir(&self) -> &Path {
        &self.options.directory
    }

    fn announce(&self) -> Option<String> {
        let o = &self.options;
        Some(format!(
            "envbench disk: {} test{} on a {} file in {}, {} run{} of {} each{}{}, {}",
            self.tests.len(),
            plural(self.tests.len()),
            ByteSize(o.file_size_bytes),
            o.directory.display(),
            o.runs,
            plural(o.runs as usize),
            format_duration(o.duration),
            if o.interval.is_zero() { String::new() } else { format!(", {} apart", format_duration(o.interval)) },
            if o.warmup { " after a discarded warm-up" } else { "" },
            if o.direct { "O_DIRECT" } else { "buffered" },
        ))
    }

    fn run(self: Box<Self>, context: &RunContext<'_>) -> Result<Box<dyn Measured>, WorkloadError> {
        Ok(Box::new(self.measure(context)?))
    }
}

impl DiskRun {
    fn measure(&self, context: &RunContext<'_>) -> Result<DiskMeasured, WorkloadError> {
        let progress = |event: &ProgressEvent<'_>| report_progress(event, context.progress);
        let outcome = run_suite(&self.options, &self.tests, &progress, context.steps, context.interrupt)?;
        Ok(DiskMeasured { outcome })
    }
}

/// `--profile db`: the database-shaped tests, then the commit profile's.
struct DbRun {
    disk: DiskRun,
    commit: crate::commit_suite::CommitRun,
}

impl Planned for DbRun {
    fn data_dir(&self) -> &Path {
        self.disk.data_dir()
    }

    fn announce(&self) -> Option<String> {
        Some([self.disk.announce(), self.commit.announce()].into_iter().flatten().collect::<Vec<_>>().join("; then "))
    }

    fn run(self: Box<Self>, context: &RunContext<'_>) -> Result<Box<dyn Measured>, WorkloadError> {
        let disk = self.disk.measure(context)?;
        // An interrupted suite keeps what it completed; the commit tests then do not start.
        let commit = if disk.outcome.interrupted { None } else { Some(self.commit.measure(context)?) };
        Ok(Box::new(DbMeasured { disk, commit }))
    }
}

/// The db profile's results: the suite's and the commit tests'.
struct DbMeasured {
    disk: DiskMeasured,
    commit: Option<crate::commit_suite::CommitMeasured>,
}

impl DbMeasured {
    fn parts(&self) -> impl Iterator<Item = &dyn Measured> {
        std::iter::once(&self.disk as &dyn Measured).chain(self.commit.iter().map(|c| c as &dyn Measured))
    }
}

impl Measured for DbMeasured {
    fn records(&self, series: &SamplerSeries) -> Vec<ResultRecord> {
        self.parts().flat_map(|part| part.records(series)).collect()
    }

    /// The suite's outcome with the commit document under its key, as a commit run keeps it.
    fn attachment(&self) -> Option<Value> {
        let mut attachment = self.disk.attachment()?;
        if let (Some(object), Some(Value::Object(commit))) =
            (attachment.as_object_mut(), self.commit.as_ref().and_then(|c| c.attachment()))
        {
            object.extend(commit);
        }
        Some(attachment)
    }

    fn json(&self, envelope: &Envelope<'_>) -> Value {
        let mut parts = vec![("outcome", json!(&self.disk.outcome))];
        if let Some(commit) = &self.commit {
            parts.push((crate::commit_suite::COMMIT_ATTACHMENT, json!(&commit.document)));
        }
        envelope.wrap(parts)
    }

    fn render(&self, series: &SamplerSeries) -> String {
        self.parts().map(|part| part.render(series)).collect::<Vec<_>>().join("\n")
    }

    fn warnings(&self, series: &SamplerSeries) -> Vec<String> {
        self.parts().flat_map(|part| part.warnings(series)).collect()
    }
}

fn report_progress(event: &ProgressEvent<'_>, progress: &dyn Progress) {
    match event {
        ProgressEvent::Prepared { engine, fallback_reason, path, size_bytes } => {
            progress.line(&format!(
                "engine {}{}",
                engine.as_str(),
                fallback_reason.map(|r| format!(" (io_uring unavailable: {r})")).unwrap_or_default()
            ));
            progress.line(&format!("test file {} ({})", path.display(), ByteSize(*size_bytes)));
        }
        ProgressEvent::Filling { written_bytes, total_bytes } => progress
            .update(&format!("filling with incompressible data: {:>3}%", written_bytes * 100 / (*total_bytes).max(1))),
        ProgressEvent::Filled { summary } => progress.line(&format!("filled at {:.0} MB/s", summary.mb_per_s)),
        ProgressEvent::TestStarted { index, count, test } => {
            progress.line(&format!("[{index}/{count}] {}", test.display_name()))
        }
        ProgressEvent::WarmupStarted { .. } => progress.update("  warm-up"),
        ProgressEvent::RunStarted { run, runs, .. } => progress.update(&format!("  run {run}/{runs}")),
        ProgressEvent::RunFinished { run, runs, sample, .. } => progress.line(&format!(
            "  run {run}/{runs}: {:.1} MB/s, {:.0} IOPS, {} mean",
            sample.mb_per_s,
            sample.iops,
            micros(sample.latency.mean_us)
        )),
        ProgressEvent::Pausing { duration } => progress.update(&format!("  pausing {}", format_duration(*duration))),
        ProgressEvent::CrossCheckStarted { command, .. } => progress.line(&format!("  fio: {command}")),
        ProgressEvent::TestFinished { .. } => {}
    }
}

pub(crate) struct DiskMeasured {
    pub(crate) outcome: SuiteOutcome,
}

impl DiskMeasured {
    /// Reads that moved far more bytes than the device under the test file did were served from a cache: the ids
    /// of those tests.
    fn cache_served_reads(&self, series: &SamplerSeries) -> Vec<String> {
        let mut flagged = Vec::new();
        for test in self.outcome.tests.iter().filter(|t| t.spec.operation.read_percent() == 100) {
            let Some(step) = series.step(&test.test_id) else { continue };
            let Some(disk) = step.disks.first() else { continue };
            let device_bytes = disk.read_mb_per_s * 1e6 * (step.end_ms - step.start_ms) as f64 / 1000.0;
            let test_bytes: f64 = test.runs.iter().map(|r| r.bytes as f64).sum();
            if test_bytes > CACHE_SUSPICION_RATIO * device_bytes + 1e6 {
                flagged.push(test.test_id.clone());
            }
        }
        flagged
    }
}

impl Measured for DiskMeasured {
    fn records(&self, series: &SamplerSeries) -> Vec<ResultRecord> {
        let flagged = self.cache_served_reads(series);
        let mut records = result_records(&self.outcome);
        for record in records.iter_mut().filter(|r| flagged.contains(&r.test_id)) {
            record.flags.push(EXCEEDS_DEVICE_FLAG.to_string());
        }
        records
    }

    fn document(&self) -> Option<(&'static str, Value)> {
        Some(("outcome", json!(&self.outcome)))
    }

    fn render(&self, series: &SamplerSeries) -> String {
        render(&self.outcome, series)
    }

    fn warnings(&self, series: &SamplerSeries) -> Vec<String> {
        let mut warnings: Vec<String> = self.outcome.cache.warning().into_iter().collect();
        for test in self.cache_served_reads(series) {
            warnings.push(format!(
                "{test} read more than {CACHE_SUSPICION_RATIO}x what the device under {} delivered: the figure is \
                 inflated by a cache; its results are flagged {EXCEEDS_DEVICE_FLAG}",
                self.outcome.directory.display()
            ));
        }
        warnings
    }
}

/// The CrystalDiskMark-like table: one row per test, mean and best MB/s (CrystalDiskMark reports the best run,
/// KDiskMark the mean), IOPS, latency percentiles, CPU per I/O; a fio row under each test when cross-checked.
pub fn render(outcome: &SuiteOutcome, series: &SamplerSeries) -> String {
    use Align::{Left, Right};
    let mut table = Table::new(
        &["TEST", "MB/s", "BEST", "IOPS", "MEAN", "P50", "P99", "P99.9", "MAX", "CPU/IO", "DEVICE MB/s", "FLAGS"],
        &[Left, Right, Right, Right, Right, Right, Right, Right, Right, Right, Right, Left],
    );
    for test in &outcome.tests {
        table.row(row(test, series, outcome));
        if let Some(check) = &test.cross_check {
            match (&check.sample, &check.error) {
                (Some(fio), _) => {
                    let ratio = if fio.iops > 0.0 { test.mean_iops / fio.iops } else { 0.0 };
                    let mut cells = vec![
                        format!("  fio (envbench/fio IOPS {ratio:.3})"),
                        number(fio.mb_per_s),
                        String::new(),
                        number(fio.iops),
                    ];
                    cells.extend(latency_cells(&fio.latency));
                    cells.push(format!("{:.2} µs", fio.cpu_per_io_us));
                    table.row(cells);
                }
                (None, Some(error)) => table.row(vec![format!("  fio: {error}")]),
                (None, None) => {}
            }
        }
    }
    let mut out = String::new();
    out.push_str(&heading(&format!(
        "Storage suite: {} on {} ({}), {} file, {}, engine {}",
        outcome.directory.display(),
        outcome.file_system,
        if outcome.direct { "O_DIRECT" } else { "buffered" },
        ByteSize(outcome.file_size_bytes),
        if outcome.runs == 1 { "1 run".to_string() } else { format!("mean and best of {} runs", outcome.runs) },
        outcome.engine.as_str()
    )));
    out.push('\n');
    out.push_str(&table.render());
    out.push_str(
        "MB/s are 10^6 bytes per second; latency from submission to completion; DEVICE MB/s is what the OS saw on \
         the device during the test.\n",
    );
    if outcome.interrupted {
        out.push_str("Interrupted: only the tests above completed.\n");
    }
    out
}

fn row(test: &TestOutcome, series: &SamplerSeries, outcome: &SuiteOutcome) -> Vec<String> {
    let device = series
        .step(&test.test_id)
        .and_then(|s| s.disks.first())
        .map(|d| number(d.read_mb_per_s + d.write_mb_per_s))
        .unwrap_or_else(|| "-".into());
    let cpu: f64 = test.runs.iter().map(|r| r.cpu_per_io_us).sum::<f64>() / test.runs.len().max(1) as f64;
    let samples: Vec<f64> = test.runs.iter().map(|r| r.mb_per_s).collect();
    let mut flags = outcome.cache.flags();
    if envbench_core::stats::Summary::of(&samples).is_some_and(|s| s.is_noisy()) {
        flags.push("noisy".into());
    }
    let mut cells =
        vec![test.display_name.clone(), number(test.mean_mb_per_s), number(test.best_mb_per_s), number(test.mean_iops)];
    cells.extend(latency_cells(&test.latency));
    cells.extend([format!("{cpu:.2} µs"), device, flags.join(",")]);
    cells
}

/// Mean, p50, p99, p99.9 and max, in the table's columns.
fn latency_cells(latency: &crate::LatencySummary) -> [String; 5] {
    [latency.mean_us, latency.p50_us, latency.p99_us, latency.p99_9_us, latency.max_us].map(micros)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_headline_tests_are_in_the_default_profile() {
        let ids: Vec<String> = Profile::Cdm.tests().iter().map(|t| t.id()).collect();
        assert!(ids.contains(&HEADLINE_RANDOM_TEST.to_string()), "{ids:?}");
        assert!(ids.contains(&HEADLINE_SEQUENTIAL_TEST.to_string()), "{ids:?}");
    }
}
