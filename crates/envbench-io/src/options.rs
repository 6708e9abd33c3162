//! The command line of `envbench disk` ([`DiskArgs`]) and its checking into a plan: the storage suite's options and
//! tests, the commit profile's run, or a sustained run. Nothing is created here, so a usage error leaves no trace.

use crate::spec::SpecError;
use crate::suite::SuiteOptions;
use crate::{EngineChoice, Profile, TestSpec, WriteSync};
use clap::Args;
use envbench_core::units::format_duration;
use envbench_core::workload::WorkloadError;
use envbench_core::{ByteSize, DurationArg};
use std::path::PathBuf;
use std::time::Duration;

/// The arguments of `envbench disk`.
#[derive(Args, Debug)]
pub struct DiskArgs {
    /// Directory in which envbench creates (and afterwards removes) its test file.
    #[arg(long, default_value = ".")]
    pub dir: PathBuf,
    /// Test profile: cdm, cdm-nvme, cdm5, anvil, db, or commit (commit latency by sync method and the group-commit
    /// curve).
    #[arg(long, default_value = "cdm", value_parser = clap::value_parser!(DiskProfile))]
    pub profile: DiskProfile,
    /// An ad-hoc test instead of the profile, e.g. rnd:8k:q32:t1:read, seq:1m:q8:t1:write, rnd:8k:q16:t1:mix70,
    /// seq:16k:q1:t1:write:fsync1 (repeatable).
    #[arg(long = "test", value_name = "TEST", value_parser = clap::value_parser!(TestSpec))]
    pub tests: Vec<TestSpec>,
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
    #[arg(long, value_name = "MODE", value_parser = clap::value_parser!(WriteSync))]
    pub write_sync: Option<WriteSync>,
    /// Run the equivalent fio job after each test and show both: --cross-check fio (with --profile commit:
    /// --cross-check pg_test_fsync).
    #[arg(long, value_name = "TOOL", value_parser = clap::value_parser!(CrossCheckTool))]
    pub cross_check: Option<CrossCheckTool>,
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

/// `--profile`: one of the storage suite's profiles, or `commit` (commit latency by sync method and the group-commit
/// curve, which runs on its own).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiskProfile {
    Suite(Profile),
    Commit,
}

impl std::str::FromStr for DiskProfile {
    type Err = SpecError;

    /// `commit`, or a profile's name ([`Profile::parse`]: an unknown one is refused with the valid names).
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name {
            "commit" => Ok(DiskProfile::Commit),
            name => Profile::parse(name).map(DiskProfile::Suite),
        }
    }
}

/// `--cross-check`: the tool that measures the same tests beside envbench.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrossCheckTool {
    /// fio runs the equivalent job after each test of the storage suite.
    Fio,
    /// pg_test_fsync measures the commit tests' sync methods (`--profile commit` or `db`).
    PgTestFsync,
}

impl CrossCheckTool {
    /// The name users type.
    pub fn name(self) -> &'static str {
        match self {
            CrossCheckTool::Fio => "fio",
            CrossCheckTool::PgTestFsync => "pg_test_fsync",
        }
    }
}

impl std::str::FromStr for CrossCheckTool {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "fio" => Ok(CrossCheckTool::Fio),
            "pg_test_fsync" => Ok(CrossCheckTool::PgTestFsync),
            _ => Err("the cross-check tools are fio, and pg_test_fsync with --profile commit or db".to_string()),
        }
    }
}

/// Measured runs of each test with `--quick`: as many as a verdict's test needs to decide (Mann-Whitney U with 5 a
/// side).
pub const QUICK_RUNS: u32 = 5;

/// The most measured runs a test takes.
pub const MAX_RUNS: u32 = 1000;

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
        return Err(WorkloadError::usage("--duration must be longer than zero, e.g. 5s"));
    }
    duration.within("--duration", RUN_DURATION.0, RUN_DURATION.1).map_err(WorkloadError::usage)
}

/// The commit profile: every test runs --duration (default 5 s; 1 s with --quick) in --dir.
pub(crate) fn plan_commit(
    args: &DiskArgs,
    cross_check: Option<CrossCheckTool>,
) -> Result<crate::commit_suite::CommitRun, WorkloadError> {
    envbench_base::place::check_directory(&args.dir)?;
    if args.profile == DiskProfile::Commit {
        // The db profile's suite part takes these; the commit tests alone would silently ignore them.
        for (option, given) in [("--runs", args.runs.is_some()), ("--interval", args.interval.is_some())] {
            if given {
                return Err(WorkloadError::usage(format!(
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
        Some(CrossCheckTool::PgTestFsync) => Some(envbench_core::programs::find_postgres_program("pg_test_fsync").ok_or_else(|| {
            WorkloadError::usage(
                "--cross-check pg_test_fsync: pg_test_fsync was not found on the PATH or under /usr/lib/postgresql; \
                 it ships with the PostgreSQL server package",
            )
        })?),
        Some(other) => {
            return Err(WorkloadError::usage(format!(
                "--cross-check {}: --profile commit cross-checks with pg_test_fsync",
                other.name()
            )));
        }
    };
    Ok(crate::commit_suite::CommitRun {
        directory: args.dir.clone(),
        tests: crate::commit_suite::commit_tests(duration),
        pg_test_fsync,
    })
}

/// A sustained run: `--sustained [DURATION]` with its own tests, size policy and preconditioning.
pub(crate) fn plan_sustained(args: &DiskArgs) -> Result<crate::sustained::SustainedRun, WorkloadError> {
    use crate::sustained::{DEFAULT_DURATION, MIN_DURATION, QUICK_DURATION};
    let not_with = [
        ("--profile", args.profile != DiskProfile::Suite(Profile::Cdm)),
        ("--runs", args.runs.is_some()),
        ("--duration", args.duration.is_some()),
        ("--interval", args.interval.is_some()),
        ("--no-warmup", args.no_warmup),
        ("--buffered", args.buffered),
        ("--cross-check", args.cross_check.is_some()),
    ];
    if let Some((option, _)) = not_with.iter().find(|(_, given)| *given) {
        return Err(WorkloadError::usage(format!(
            "{option} does not apply to --sustained: a sustained run writes each test once, without a pause, for \
             --sustained DURATION with O_DIRECT (choose its tests with --test)"
        )));
    }
    let duration = match args.sustained.clone().flatten() {
        None if args.quick => QUICK_DURATION,
        None => DEFAULT_DURATION,
        Some(duration) => duration.get(),
    };
    if duration < MIN_DURATION {
        return Err(WorkloadError::usage(format!(
            "--sustained {}: steady state is judged over five rounds; give at least {}s",
            format_duration(duration),
            MIN_DURATION.as_secs()
        )));
    }
    if duration > MAX_SUSTAINED {
        return Err(WorkloadError::usage(format!(
            "--sustained {}: give at most {}h; a longer soak is several runs",
            args.sustained.clone().flatten().map(|d| d.to_string()).unwrap_or_default(),
            MAX_SUSTAINED.as_secs() / 3600
        )));
    }
    check_test_count(&args.tests)?;
    let write_sync = args.write_sync;
    let mut tests: Vec<TestSpec> =
        if args.tests.is_empty() { crate::sustained::default_tests() } else { args.tests.clone() };
    for test in &mut tests {
        if test.operation.read_percent() != 0 {
            return Err(WorkloadError::usage(format!(
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
    envbench_base::place::check_directory(&args.dir)?;
    let size = args.size.map(ByteSize::bytes);
    let (file_size_bytes, size_note) = crate::sustained::plan_file_size(&args.dir, size)?;
    crate::testfile::check_file_plan(&args.dir, file_size_bytes)?;
    if let Some(test) = tests.iter().find(|t| t.block_bytes * u64::from(t.threads) > file_size_bytes) {
        return Err(WorkloadError::usage(format!("--size {}: too small for {}", ByteSize(file_size_bytes), test.id())));
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

/// At most [`MAX_TESTS`] `--test`s.
fn check_test_count(tests: &[TestSpec]) -> Result<(), WorkloadError> {
    if tests.len() > MAX_TESTS {
        return Err(WorkloadError::usage(format!(
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
            return Err(WorkloadError::usage("--runs must be at least 1"));
        }
        if runs > MAX_RUNS {
            return Err(WorkloadError::usage(format!("--runs {runs}: give at most {MAX_RUNS} runs")));
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
        options.interval = interval.within("--interval", Duration::ZERO, MAX_INTERVAL).map_err(WorkloadError::usage)?;
    }
    options.warmup = !args.no_warmup;
    options.direct = !args.buffered;
    options.engine = args.engine;
    options.cross_check_fio = match args.cross_check {
        None => false,
        Some(CrossCheckTool::Fio) => true,
        // The db profile's commit tests take it.
        Some(CrossCheckTool::PgTestFsync)
            if args.profile == DiskProfile::Suite(Profile::Db) && args.tests.is_empty() =>
        {
            false
        }
        Some(other) => {
            return Err(WorkloadError::usage(format!(
                "--cross-check {}: the cross-check tools are fio, and pg_test_fsync with --profile commit or db",
                other.name()
            )));
        }
    };
    let write_sync = args.write_sync;
    check_test_count(&args.tests)?;
    let mut tests: Vec<TestSpec> = match args.profile {
        _ if !args.tests.is_empty() => args.tests.clone(),
        DiskProfile::Suite(profile) => profile.tests(),
        // The commit profile's tests are planned on their own (plan_commit), never as suite tests.
        DiskProfile::Commit => {
            return Err(WorkloadError::usage(
                "--profile commit runs its commit tests on their own: give --test without it",
            ));
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<DiskArgs, clap::Error> {
        envbench_core::workload::parse_args("disk", args)
    }

    #[test]
    fn options_are_checked_by_the_command_line() {
        let args = parse(&[]).unwrap();
        assert_eq!(args.profile, DiskProfile::Suite(Profile::Cdm));
        assert!(args.tests.is_empty() && args.write_sync.is_none() && args.cross_check.is_none());
        let args = parse(&[
            "--profile",
            "commit",
            "--test",
            "rnd:8k:q32:t1:read",
            "--write-sync",
            "fsync:4",
            "--cross-check",
            "pg_test_fsync",
        ])
        .unwrap();
        assert_eq!(args.profile, DiskProfile::Commit);
        assert_eq!(args.tests, vec!["rnd:8k:q32:t1:read".parse::<TestSpec>().unwrap()]);
        assert_eq!(args.write_sync, Some(WriteSync::Fsync { every: 4 }));
        assert_eq!(args.cross_check, Some(CrossCheckTool::PgTestFsync));
        assert_eq!(parse(&["--profile", "CDM-NVMe"]).unwrap().profile, DiskProfile::Suite(Profile::CdmNvme));
        for (bad, says) in [
            (["--profile", "crystal"], "unknown profile 'crystal'; valid profiles: cdm"),
            (["--test", "rnd:banana"], "'rnd:banana' is not a test"),
            (["--write-sync", "sometimes"], "write durability 'sometimes' is not valid; use none"),
            (["--cross-check", "iometer"], "the cross-check tools are fio, and pg_test_fsync"),
        ] {
            let error = parse(&bad).unwrap_err();
            assert_eq!(error.kind(), clap::error::ErrorKind::ValueValidation, "{bad:?}");
            assert!(error.to_string().contains(says), "{bad:?}: {error}");
        }
    }
}
