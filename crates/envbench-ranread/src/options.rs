//! The command line of `envbench ranread` ([`RanreadArgs`]) and its checking into a [`RanreadRun`]: the jobs, the
//! step limit, the targets and where it reads. Nothing is created here, so a usage error leaves no trace.

use crate::{JobsPlan, StepLimit, Targets, validate_block};
use clap::Args;
use envbench_base::place::check_directory;
use envbench_core::workload::{MAX_LIST_SETTINGS, WorkloadError};
use envbench_core::{ByteSize, DurationArg, check_settings};
use envbench_io::{EngineChoice, select_engine};
use std::path::PathBuf;
use std::time::Duration;

/// The shortest and longest `--duration` of a step: a shorter one measures the start of the reads, not their rate.
pub const MIN_STEP_DURATION: Duration = Duration::from_millis(100);
pub const MAX_STEP_DURATION: Duration = Duration::from_secs(24 * 3600);
/// The most jobs a step may run (as the I/O engine's thread limit).
pub const MAX_JOBS: u32 = envbench_io::spec::MAX_THREADS;

/// The arguments of `envbench ranread`.
#[derive(Args, Debug)]
pub struct RanreadArgs {
    /// Directory of the database file envbench-ranread.dat (file mode).
    #[arg(long, default_value = ".")]
    pub dir: PathBuf,
    /// Run the sweep inside PostgreSQL instead: postgres://user@host:port/database.
    #[arg(long, value_name = "URL")]
    pub db: Option<String>,
    /// With --db: the schema of the table, which must exist (default: the connection's current schema). envbench
    /// touches nothing outside it.
    #[arg(long, requires = "db")]
    pub schema: Option<String>,
    /// Database file size (default 8 GiB with O_DIRECT, 2x RAM buffered) or table size (default 2x shared_buffers).
    #[arg(long, value_name = "SIZE")]
    pub size: Option<ByteSize>,
    /// Block size of the random reads (file mode): a power of two from 512 to 64k.
    #[arg(long, default_value = "8k", value_name = "SIZE")]
    pub block: ByteSize,
    /// Job counts: auto (1, 2, 4, ... to the knee) or a list such as 1,2,4,8,16,32,64.
    #[arg(long, default_value = "auto", value_parser = parse_jobs)]
    pub jobs: JobsArg,
    /// Reads per job in each step (the original tool's iterations).
    #[arg(long, conflicts_with = "duration")]
    pub iterations: Option<u64>,
    /// Length of each step, e.g. 30s (default 10s).
    #[arg(long, value_name = "DURATION")]
    pub duration: Option<DurationArg>,
    /// IOPS the storage must sustain within the latency target.
    #[arg(long)]
    pub target_iops: Option<f64>,
    /// Mean response time limit, e.g. 8ms (default 10ms).
    #[arg(long, default_value = "10ms", value_name = "DURATION")]
    pub target_latency: DurationArg,
    /// Highest job count of an automatic sweep.
    #[arg(long, default_value_t = 256)]
    pub max_jobs: u32,
    /// Recreate the database file (or table) even when a usable one exists.
    #[arg(long)]
    pub fresh: bool,
    /// Keep the database file for later runs (the default).
    #[arg(long, conflicts_with = "no_keep")]
    pub keep: bool,
    /// Remove the database file at the end.
    #[arg(long)]
    pub no_keep: bool,
    /// Buffered reads instead of O_DIRECT (the file must then be at least 2x RAM, or results are flagged).
    #[arg(long)]
    pub buffered: bool,
    /// I/O engine: auto, io_uring or threadpool.
    #[arg(long, default_value = "auto", value_parser = clap::value_parser!(EngineChoice))]
    pub engine: EngineChoice,
}

/// Everything the arguments say, checked before anything is created.
pub(crate) struct RanreadRun {
    pub(crate) dir: PathBuf,
    pub(crate) db: Option<String>,
    pub(crate) jobs: JobsPlan,
    pub(crate) limit: StepLimit,
    pub(crate) targets: Targets,
    pub(crate) block_bytes: u64,
    pub(crate) size_bytes: Option<u64>,
    pub(crate) fresh: bool,
    pub(crate) no_keep: bool,
    pub(crate) direct: bool,
    pub(crate) engine: EngineChoice,
    /// A fleet's agent: with --db it never builds or locks the table (its coordinator built it and holds the lock).
    pub(crate) fleet_agent: bool,
    /// With --db: the schema of the table, as the user named it (--schema) or a fleet's coordinator resolved it for
    /// its agents (`None`: the connection's own).
    pub(crate) namespace: Option<String>,
}

/// The most reads one job makes in a step (`--iterations`): over an hour at a million reads a second.
const MAX_ITERATIONS: u64 = 1_000_000_000;
/// The highest `--target-latency`: storage is judged in milliseconds; seconds are a mistyped unit.
const MAX_TARGET_LATENCY: Duration = Duration::from_secs(10);

/// `--jobs` as given: `auto`, or the job counts of a list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobsArg {
    /// 1, 2, 4, ... up to `--max-jobs`.
    Auto,
    /// Each from 1 to [`MAX_JOBS`], none twice, at most [`MAX_LIST_SETTINGS`] of them.
    List(Vec<u32>),
}

/// `--jobs`: `auto` (any case) or a list such as `1,2,4,8`; the error says what is wrong and how to write it.
pub fn parse_jobs(text: &str) -> Result<JobsArg, String> {
    if text.trim().eq_ignore_ascii_case("auto") {
        return Ok(JobsArg::Auto);
    }
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    check_settings("--jobs", &parts, MAX_LIST_SETTINGS)?;
    let list: Vec<u32> = parts
        .iter()
        .map(|part| match part.parse::<u32>() {
            Ok(n) if (1..=MAX_JOBS).contains(&n) => Ok(n),
            _ => Err(format!(
                "--jobs '{}': each job count must be a whole number from 1 to {MAX_JOBS}, e.g. --jobs 1,2,4,8 or \
                 --jobs auto",
                envbench_core::text::truncate(text, 80)
            )),
        })
        .collect::<Result<_, _>>()?;
    check_settings("--jobs", &list, MAX_LIST_SETTINGS)?;
    Ok(JobsArg::List(list))
}

pub(crate) fn plan(args: RanreadArgs) -> Result<RanreadRun, WorkloadError> {
    let jobs = match args.jobs {
        JobsArg::Auto => {
            if !(1..=MAX_JOBS).contains(&args.max_jobs) {
                return Err(WorkloadError::usage(format!(
                    "--max-jobs {}: give a count from 1 to {MAX_JOBS}",
                    args.max_jobs
                )));
            }
            JobsPlan::Auto { max_jobs: args.max_jobs }
        }
        JobsArg::List(list) => JobsPlan::List(list),
    };
    let limit = match (&args.iterations, &args.duration) {
        (Some(0), _) => return Err(WorkloadError::usage("--iterations must be at least 1")),
        (Some(n), _) if *n > MAX_ITERATIONS => {
            return Err(WorkloadError::usage(format!(
                "--iterations {n}: give at most {MAX_ITERATIONS} reads per job (hours even on fast storage); for a \
                 long step give --duration"
            )));
        }
        (Some(n), _) => StepLimit::Iterations(*n),
        (None, Some(duration)) => StepLimit::Duration(
            duration.within("--duration", MIN_STEP_DURATION, MAX_STEP_DURATION).map_err(WorkloadError::usage)?,
        ),
        (None, None) => StepLimit::Duration(Duration::from_secs(10)),
    };
    let latency = args.target_latency.get();
    if latency.is_zero() {
        return Err(WorkloadError::usage("--target-latency must be longer than zero, e.g. 8ms"));
    }
    if latency > MAX_TARGET_LATENCY {
        return Err(WorkloadError::usage(format!(
            "--target-latency {}: give at most 10s; storage targets are milliseconds (8ms, 10ms)",
            args.target_latency
        )));
    }
    if let Some(iops) = args.target_iops
        && !(iops > 0.0 && iops.is_finite())
    {
        return Err(WorkloadError::usage("--target-iops must be a positive number, e.g. 2800"));
    }
    let block_bytes = args.block.bytes();
    validate_block(block_bytes)?;
    let size_bytes = match args.size {
        Some(size) => {
            let size = size.bytes();
            if size == 0 {
                return Err(WorkloadError::usage("--size must be larger than zero, e.g. 8g"));
            }
            Some(size)
        }
        None => None,
    };
    let engine = args.engine;
    match &args.db {
        Some(url) => crate::database::check_url(url)?,
        None => {
            check_directory(&args.dir)?;
            if let Some(size) = size_bytes {
                crate::file::check_data_size(size, block_bytes)?;
            }
            select_engine(engine)?;
        }
    }
    Ok(RanreadRun {
        dir: args.dir,
        db: args.db,
        jobs,
        limit,
        targets: Targets { latency_ms: latency.as_secs_f64() * 1e3, iops: args.target_iops },
        block_bytes,
        size_bytes,
        fresh: args.fresh,
        no_keep: args.no_keep,
        direct: !args.buffered,
        engine,
        fleet_agent: false,
        namespace: args.schema,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<RanreadArgs, clap::Error> {
        envbench_core::workload::parse_args("ranread", args)
    }

    #[test]
    fn jobs_are_checked_by_the_command_line() {
        assert_eq!(parse(&[]).unwrap().jobs, JobsArg::Auto);
        assert_eq!(parse(&["--jobs", " AUTO "]).unwrap().jobs, JobsArg::Auto);
        assert_eq!(parse(&["--jobs", "1, 2,4"]).unwrap().jobs, JobsArg::List(vec![1, 2, 4]));
        for (bad, says) in [
            ("0", "each job count must be a whole number from 1 to"),
            ("1,x", "each job count must be a whole number from 1 to"),
            ("", "e.g. --jobs 1,2,4,8 or --jobs auto"),
            ("1,1", "--jobs: 1 is given twice"),
        ] {
            let error = parse(&["--jobs", bad]).unwrap_err();
            assert_eq!(error.kind(), clap::error::ErrorKind::ValueValidation, "{bad}");
            assert!(error.to_string().contains(says), "{bad}: {error}");
        }
    }
}
