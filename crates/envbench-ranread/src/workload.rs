//! `envbench ranread` as the driver runs it: the command line, the plan, the database file's size policy, which
//! results are comparable, the table with the knee and the verdict, the scaling curve, and the original tool's
//! export layout.

use crate::{
    FileOptions, FileRanRead, FileState, JobsPlan, PostgresOptions, PostgresRanRead, RanReadError, StepFigures,
    StepLimit, StepRunner, SweepOutcome, TABLE, TSV_HEADER, Targets, results, sweep, tsv_rows, validate_block,
};
use clap::{Args, FromArgMatches};
use envbench_core::model::{ResultRecord, StoredRun, redact_secrets};
use envbench_core::sampler::SamplerSeries;
use envbench_core::text::{Align, Table, heading, number};
use envbench_core::workload::MAX_LIST_SETTINGS;
use envbench_core::workload::{
    Measured, NativeTable, Plan, Planned, ReadBack, RunContext, ScalingCurve, ScalingPoint, Workload, WorkloadError,
};
use envbench_core::{ByteSize, DurationArg, check_settings};
use envbench_io::{BenchError, EngineChoice, cache_honesty, check_directory, select_engine};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The name of the workload.
pub const WORKLOAD: &str = "ranread";
/// The test of the knee's figures.
pub const KNEE_TEST: &str = "knee";
/// The metrics of each step and of the knee.
pub const IOPS_METRIC: &str = "iops";
pub const LATENCY_MEAN_METRIC: &str = "latency_mean";
/// The default database file with O_DIRECT: large enough to defeat a storage controller's cache.
pub const DEFAULT_DIRECT_FILE_BYTES: u64 = 8 << 30;
/// The shortest and longest `--duration` of a step: a shorter one measures the start of the reads, not their rate.
pub const MIN_STEP_DURATION: Duration = Duration::from_millis(100);
pub const MAX_STEP_DURATION: Duration = Duration::from_secs(24 * 3600);
/// The most jobs a step may run (as the I/O engine's thread limit).
pub const MAX_JOBS: u32 = envbench_io::spec::MAX_THREADS;

/// The test id, and the sampler's step name, of a step of `jobs` jobs.
pub fn step_test_id(jobs: u32) -> String {
    format!("J={jobs}")
}

/// The database file size when the user gives none: the default with O_DIRECT, twice the RAM buffered (so the page
/// cache cannot hold it), in whole 4 KiB pages.
pub fn default_file_bytes(direct: bool, ram_bytes: u64) -> u64 {
    let size = if direct { DEFAULT_DIRECT_FILE_BYTES } else { 2 * ram_bytes };
    size / 4096 * 4096
}

/// What results are matched by: two sweeps compare only when these are equal.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum Comparable {
    File { block_bytes: u64, file_size_bytes: u64, direct: bool, engine: String, limit: StepLimit },
    Postgres { block_bytes: u64, table_pages: i64, limit: StepLimit },
}

impl Comparable {
    pub fn limit(&self) -> StepLimit {
        match self {
            Comparable::File { limit, .. } | Comparable::Postgres { limit, .. } => *limit,
        }
    }
}

/// What a ranread run keeps as its attachment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RanreadDocument {
    /// What was read: the database file, or the table and database.
    pub target: String,
    pub parameters: Comparable,
    pub outcome: SweepOutcome,
}

impl RanreadDocument {
    /// The document of a stored run: `None` when it has none, `Err` when it cannot be read.
    pub fn of(run: &StoredRun) -> Option<Result<RanreadDocument, String>> {
        let value = run.attachments.get(WORKLOAD)?;
        Some(
            serde_json::from_value(value.clone())
                .map_err(|e| format!("run {}: its ranread record cannot be read ({e})", run.summary.uuid)),
        )
    }
}

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
    #[arg(long, default_value = "auto")]
    pub jobs: String,
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

/// The database random-read scaling test.
pub struct RanreadWorkload;

/// The registration of `ranread`.
pub static RANREAD: RanreadWorkload = RanreadWorkload;

impl From<RanReadError> for WorkloadError {
    fn from(error: RanReadError) -> WorkloadError {
        match error {
            RanReadError::Interrupted | RanReadError::Io(BenchError::Interrupted) => WorkloadError::interrupted(),
            RanReadError::BadInput(_) | RanReadError::BadDatabaseUrl { .. } => WorkloadError::usage(error.to_string()),
            RanReadError::Io(error) => error.into(),
            other => WorkloadError::failure(other.to_string()),
        }
    }
}

/// Everything the arguments say, checked before anything is created.
pub(crate) struct RanreadRun {
    pub(crate) dir: PathBuf,
    pub(crate) db: Option<String>,
    pub(crate) jobs: JobsPlan,
    pub(crate) limit: StepLimit,
    pub(crate) targets: Targets,
    block_bytes: u64,
    size_bytes: Option<u64>,
    pub(crate) fresh: bool,
    no_keep: bool,
    direct: bool,
    engine: EngineChoice,
    /// A fleet's agent: with --db it never builds or locks the table (its coordinator built it and holds the lock).
    pub(crate) fleet_agent: bool,
    /// With --db: the schema of the table, as the user named it (--schema) or a fleet's coordinator resolved it for
    /// its agents (`None`: the connection's own).
    pub(crate) namespace: Option<String>,
}

impl Workload for RanreadWorkload {
    fn name(&self) -> &'static str {
        WORKLOAD
    }

    fn version(&self) -> u32 {
        crate::WORKLOAD_VERSION
    }

    fn command(&self) -> clap::Command {
        RanreadArgs::augment_args(clap::Command::new(WORKLOAD)).about(
            "Database random-read scaling sweep (RanRead method): jobs rise until the response time passes the target.",
        )
    }

    fn plan(&self, matches: &clap::ArgMatches) -> Result<Plan, WorkloadError> {
        let args = RanreadArgs::from_arg_matches(matches).map_err(|e| WorkloadError::usage(e.to_string()))?;
        Ok(Plan::Run(Box::new(plan(args)?)))
    }

    fn fleet(&self) -> Option<&dyn envbench_core::fleet::FleetWorkload> {
        Some(&crate::fleet::RanreadFleet)
    }

    fn suite_side(&self) -> &dyn envbench_core::workload::SuiteSide {
        self
    }
}

impl envbench_core::workload::SuiteSide for RanreadWorkload {
    fn table(&self, suite: &str) -> Option<&'static str> {
        match suite {
            "quick" => Some(
                r#"
size = "1g"
jobs = "auto"
duration = "2s"
max_jobs = 32
# A quick look should not leave a 1 GiB file behind.
no_keep = true
"#,
            ),
            "standard" => Some(
                r#"
jobs = "auto"
"#,
            ),
            "smoke" => Some(
                r#"
size = "16m"
jobs = "1,2"
iterations = 100
"#,
            ),
            _ => None,
        }
    }
}

impl ReadBack for RanreadWorkload {
    fn cost_units(&self) -> &'static [envbench_core::workload::CostUnit] {
        &[envbench_core::workload::CostUnit {
            metric: IOPS_METRIC,
            tests: "",
            per: envbench_core::workload::Per::Rate(1000.0),
            words: "1,000 IOPS",
        }]
    }

    fn title(&self) -> Option<&'static str> {
        Some("database random reads")
    }

    fn noise_margin(&self) -> f64 {
        envbench_core::stats::STORAGE_NOISE_MARGIN
    }

    fn concurrency_knobs(&self) -> &'static [&'static str] {
        &["jobs"]
    }

    /// Each timed step's IOPS per window: five samples a step for the verdict to test; a step's one `iops` figure
    /// where it has none (steps limited by reads, database mode, older runs).
    fn headline_metrics(&self) -> &'static [&'static str] {
        &[crate::IOPS_WINDOW_METRIC, IOPS_METRIC]
    }

    fn more_samples(&self) -> &'static str {
        "--duration 5s: timed steps give five IOPS samples each"
    }

    fn governed_by(&self) -> &'static [envbench_core::workload::Resource] {
        use envbench_core::workload::Resource;
        &[Resource::Storage, Resource::Cpu]
    }

    fn headline(&self, run: &StoredRun) -> String {
        match (run.median(KNEE_TEST, IOPS_METRIC), run.median(KNEE_TEST, LATENCY_MEAN_METRIC)) {
            (Some(iops), Some(ms)) => format!("knee {iops:.0} IOPS at {ms:.3} ms mean"),
            _ => "no step within the latency target".into(),
        }
    }

    fn tests_word(&self) -> &'static str {
        "per step (jobs)"
    }

    fn scaling(&self, run: &StoredRun) -> Option<ScalingCurve> {
        let (points, knee, latency_target) = match RanreadDocument::of(run) {
            Some(Ok(document)) if !document.outcome.steps.is_empty() => {
                let outcome = document.outcome;
                let points = outcome.steps.iter().map(point).collect();
                (points, outcome.knee, Some(outcome.targets.latency_ms))
            }
            // Runs without their document (imported from elsewhere): the curve from the step results.
            _ => from_results(run)?,
        };
        Some(ScalingCurve {
            concurrency_label: "concurrent jobs".into(),
            concurrency_symbol: "J".into(),
            throughput_label: "IOPS".into(),
            latency_label: "mean response time".into(),
            latency_unit: "ms".into(),
            points,
            knee,
            latency_target,
        })
    }

    fn native_tsv(&self, run: &StoredRun) -> Option<Result<NativeTable, String>> {
        Some(RanreadDocument::of(run)?.map(|document| {
            let target = document.target.replace(['\t', '\n', '\r'], " ");
            NativeTable {
                header: TSV_HEADER.iter().map(|h| h.to_string()).collect(),
                rows: tsv_rows(&document.outcome, &target, &document.parameters.limit())
                    .into_iter()
                    .map(|r| r.to_vec())
                    .collect(),
            }
        }))
    }
}

fn point(step: &StepFigures) -> ScalingPoint {
    ScalingPoint { concurrency: f64::from(step.jobs), throughput: step.iops, latency: step.mean_ms }
}

/// The sweep of a run from its `J=<jobs>` results, the knee matched by its IOPS.
fn from_results(run: &StoredRun) -> Option<(Vec<ScalingPoint>, Option<usize>, Option<f64>)> {
    let mut points: Vec<ScalingPoint> = run
        .results
        .iter()
        .filter(|r| r.record.metric == IOPS_METRIC)
        .filter_map(|r| {
            let jobs: f64 = r.record.test_id.strip_prefix("J=")?.parse().ok()?;
            Some(ScalingPoint {
                concurrency: jobs,
                throughput: *r.record.samples.first()?,
                latency: *run.result(&r.record.test_id, LATENCY_MEAN_METRIC)?.samples.first()?,
            })
        })
        .collect();
    if points.is_empty() {
        return None;
    }
    points.sort_by(|a, b| a.concurrency.total_cmp(&b.concurrency));
    let knee = run
        .result(KNEE_TEST, IOPS_METRIC)
        .and_then(|k| k.samples.first())
        .and_then(|iops| points.iter().position(|p| p.throughput == *iops));
    let target = run.result(KNEE_TEST, IOPS_METRIC).and_then(|k| k.parameters.get("target_latency_ms")?.as_f64());
    Some((points, knee, target))
}

/// The most reads one job makes in a step (`--iterations`): over an hour at a million reads a second.
const MAX_ITERATIONS: u64 = 1_000_000_000;
/// The highest `--target-latency`: storage is judged in milliseconds; seconds are a mistyped unit.
const MAX_TARGET_LATENCY: Duration = Duration::from_secs(10);

/// A usage error (exit status 2).
fn usage(message: impl Into<String>) -> WorkloadError {
    WorkloadError::usage(message)
}

pub(crate) fn plan(args: RanreadArgs) -> Result<RanreadRun, WorkloadError> {
    let jobs = if args.jobs.trim().eq_ignore_ascii_case("auto") {
        if !(1..=MAX_JOBS).contains(&args.max_jobs) {
            return Err(usage(format!("--max-jobs {}: give a count from 1 to {MAX_JOBS}", args.max_jobs)));
        }
        JobsPlan::Auto { max_jobs: args.max_jobs }
    } else {
        let parts: Vec<&str> = args.jobs.split(',').map(str::trim).collect();
        check_settings("--jobs", &parts, MAX_LIST_SETTINGS).map_err(usage)?;
        let list: Vec<u32> = parts
            .iter()
            .map(|part| match part.parse::<u32>() {
                Ok(n) if (1..=MAX_JOBS).contains(&n) => Ok(n),
                _ => Err(usage(format!(
                    "--jobs '{}': each job count must be a whole number from 1 to {MAX_JOBS}, e.g. --jobs 1,2,4,8 or \
                     --jobs auto",
                    envbench_core::text::truncate(&args.jobs, 80)
                ))),
            })
            .collect::<Result<_, _>>()?;
        check_settings("--jobs", &list, MAX_LIST_SETTINGS).map_err(usage)?;
        JobsPlan::List(list)
    };
    let limit = match (&args.iterations, &args.duration) {
        (Some(0), _) => return Err(usage("--iterations must be at least 1")),
        (Some(n), _) if *n > MAX_ITERATIONS => {
            return Err(usage(format!(
                "--iterations {n}: give at most {MAX_ITERATIONS} reads per job (hours even on fast storage); for a \
                 long step give --duration"
            )));
        }
        (Some(n), _) => StepLimit::Iterations(*n),
        (None, Some(duration)) => {
            StepLimit::Duration(duration.within("--duration", MIN_STEP_DURATION, MAX_STEP_DURATION).map_err(usage)?)
        }
        (None, None) => StepLimit::Duration(Duration::from_secs(10)),
    };
    let latency = args.target_latency.get();
    if latency.is_zero() {
        return Err(usage("--target-latency must be longer than zero, e.g. 8ms"));
    }
    if latency > MAX_TARGET_LATENCY {
        return Err(usage(format!(
            "--target-latency {}: give at most 10s; storage targets are milliseconds (8ms, 10ms)",
            args.target_latency
        )));
    }
    if let Some(iops) = args.target_iops
        && !(iops > 0.0 && iops.is_finite())
    {
        return Err(usage("--target-iops must be a positive number, e.g. 2800"));
    }
    let block_bytes = args.block.bytes();
    validate_block(block_bytes)?;
    let size_bytes = match args.size {
        Some(size) => {
            let size = size.bytes();
            if size == 0 {
                return Err(usage("--size must be larger than zero, e.g. 8g"));
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

/// A target ready for the sweep.
pub(crate) struct Prepared {
    pub(crate) runner: Box<dyn StepRunner>,
    pub(crate) parameters: Comparable,
    pub(crate) flags: Vec<String>,
    /// The database file, in file mode.
    pub(crate) database_file: Option<PathBuf>,
    /// The schema of the table, with --db.
    pub(crate) namespace: Option<envbench_sql::Namespace>,
}

impl RanreadRun {
    /// Build or reuse the database file or table.
    pub(crate) fn prepare(&self, context: &RunContext<'_>) -> Result<Prepared, RanReadError> {
        let progress = context.progress;
        match &self.db {
            Some(url) => {
                let options = PostgresOptions {
                    url: url.clone(),
                    size_bytes: self.size_bytes,
                    fresh: self.fresh,
                    namespace: self.namespace.clone(),
                    agent: self.fleet_agent,
                };
                let mut on_rows = |done: i64, total: i64| {
                    progress.update(&format!("building the table: {:>3}% of {total} pages", done * 100 / total.max(1)));
                };
                let target = PostgresRanRead::prepare(&options, context.interrupt, &mut on_rows)?;
                let info = &target.info;
                progress.line(&format!(
                    "{} table {}: {} pages ({}), shared_buffers {}, PostgreSQL {}",
                    if info.reused { "reusing" } else { "built" },
                    target.namespace().qualify(TABLE),
                    info.rows,
                    ByteSize(info.table_bytes as u64),
                    ByteSize(info.shared_buffers_bytes as u64),
                    info.server_version
                ));
                let parameters = Comparable::Postgres {
                    block_bytes: info.block_bytes as u64,
                    table_pages: info.rows,
                    limit: self.limit,
                };
                let namespace = Some(target.namespace().clone());
                Ok(Prepared { runner: Box::new(target), parameters, flags: Vec::new(), database_file: None, namespace })
            }
            None => {
                let selection = select_engine(self.engine)?;
                let ram = context.fingerprint.memory.total_bytes.unwrap_or(0);
                let size = self.size_bytes.map_or_else(|| default_file_bytes(self.direct, ram), |s| s / 4096 * 4096);
                let cache = cache_honesty(self.direct, size);
                if let Some(warning) = cache.warning() {
                    progress.warn(&warning);
                }
                let options = FileOptions {
                    dir: self.dir.clone(),
                    data_bytes: size,
                    block_bytes: self.block_bytes,
                    direct: self.direct,
                    engine: selection.kind,
                    fresh: self.fresh,
                };
                let mut on_bytes = |done: u64, total: u64| {
                    progress.update(&format!(
                        "filling the database file: {:>3}% of {}",
                        done * 100 / total.max(1),
                        ByteSize(total)
                    ));
                };
                context.steps.step_started("prepare");
                let target = FileRanRead::prepare(options, context.interrupt, &mut on_bytes);
                context.steps.step_finished("prepare");
                let target = target?;
                progress.line(&format!(
                    "{} {} ({}), {} reads of {}, engine {}",
                    match target.state {
                        FileState::Reused => "reusing",
                        FileState::Created => "created",
                    },
                    target.path().display(),
                    ByteSize(size),
                    if self.direct { "O_DIRECT" } else { "buffered" },
                    ByteSize(self.block_bytes),
                    selection.kind.as_str()
                ));
                let parameters = Comparable::File {
                    block_bytes: self.block_bytes,
                    file_size_bytes: size,
                    direct: self.direct,
                    engine: selection.kind.as_str().to_string(),
                    limit: self.limit,
                };
                let path = target.path().to_path_buf();
                Ok(Prepared {
                    runner: Box::new(target),
                    parameters,
                    flags: cache.flags(),
                    database_file: Some(path),
                    namespace: None,
                })
            }
        }
    }
}

impl Planned for RanreadRun {
    fn data_dir(&self) -> &Path {
        &self.dir
    }

    fn drives_local_server(&self) -> bool {
        self.db
            .as_deref()
            .and_then(|url| envbench_sql::DatabaseUrl::parse(url).ok())
            .is_some_and(|url| url.dialect() != envbench_sql::Dialect::Sqlite && url.is_local())
    }

    fn run(self: Box<Self>, context: &RunContext<'_>) -> Result<Box<dyn Measured>, WorkloadError> {
        let Prepared { mut runner, parameters, flags, database_file, .. } = self.prepare(context)?;
        context.progress.line(&format!(
            "sweep: {}, each step {} per job, target mean response time {} ms{}",
            match &self.jobs {
                JobsPlan::Auto { max_jobs } => format!("jobs 1, 2, 4, ... up to {max_jobs}"),
                JobsPlan::List(list) =>
                    format!("jobs {}", list.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")),
            },
            match self.limit {
                StepLimit::Iterations(n) => format!("{n} reads"),
                StepLimit::Duration(d) => envbench_core::units::format_duration(d),
            },
            self.targets.latency_ms,
            self.targets.iops.map(|i| format!(", target {i:.0} IOPS")).unwrap_or_default()
        ));
        let mut on_step = |step: &StepFigures| {
            context.progress.line(&format!(
                "  {:>4} jobs: {:>9.0} IOPS, {:.3} ms mean, {:.3} ms p99",
                step.jobs, step.iops, step.mean_ms, step.p99_ms
            ));
        };
        let outcome = sweep(
            runner.as_mut(),
            &self.jobs,
            self.targets,
            self.limit,
            context.steps,
            context.interrupt,
            &mut on_step,
        );
        let target = redact_secrets(&runner.target());
        drop(runner);
        let outcome = outcome?;
        if let Some(path) = database_file
            && self.no_keep
        {
            std::fs::remove_file(&path).map_err(|e| {
                WorkloadError::failure(format!("{}: cannot remove the database file ({e})", path.display()))
            })?;
        }
        Ok(Box::new(RanreadMeasured { document: RanreadDocument { target, parameters, outcome }, flags }))
    }
}

pub(crate) struct RanreadMeasured {
    pub(crate) document: RanreadDocument,
    pub(crate) flags: Vec<String>,
}

impl Measured for RanreadMeasured {
    fn records(&self, _series: &SamplerSeries) -> Vec<ResultRecord> {
        let mut records = results(&self.document.outcome, &json!(self.document.parameters));
        for record in &mut records {
            record.flags.extend(self.flags.iter().cloned());
        }
        records
    }

    fn document(&self) -> Option<(&'static str, Value)> {
        Some((WORKLOAD, json!(&self.document)))
    }

    fn render(&self, series: &SamplerSeries) -> String {
        render(&self.document.outcome, series, &self.document.target)
    }
}

/// A table per step, the knee, the verdict, and the reference guidance.
pub fn render(outcome: &SweepOutcome, series: &SamplerSeries, target: &str) -> String {
    let database = outcome.steps.iter().any(|s| s.database.is_some());
    let mut headers =
        vec!["JOBS", "IOPS", "MEAN ms", "P50 ms", "P99 ms", "MAX ms", "JOB CV", "DEVICE r/s", "r_await ms"];
    if database {
        headers.extend(["HEAP READ", "HEAP HIT", "READ %"]);
    }
    let aligns = vec![Align::Right; headers.len()];
    let mut table = Table::new(&headers, &aligns);
    for (index, step) in outcome.steps.iter().enumerate() {
        let device = series.step(&step_test_id(step.jobs)).and_then(|s| s.disks.first());
        let mut row = vec![
            format!("{}{}", if Some(index) == outcome.knee { "* " } else { "" }, step.jobs),
            format!("{:.0}", step.iops),
            format!("{:.3}", step.mean_ms),
            format!("{:.3}", step.p50_ms),
            format!("{:.3}", step.p99_ms),
            format!("{:.3}", step.max_ms),
            format!("{:.1}%", step.job_cv_percent),
            device.map(|d| number(d.reads_per_s)).unwrap_or_else(|| "-".into()),
            device.map(|d| format!("{:.3}", d.read_await_ms)).unwrap_or_else(|| "-".into()),
        ];
        if let Some(db) = &step.database {
            row.extend([
                db.heap_blocks_read.to_string(),
                db.heap_blocks_hit.to_string(),
                format!("{:.1}%", db.heap_read_percent()),
            ]);
        }
        table.row(row);
    }
    let mut out = heading(&format!("Random read sweep of {target}"));
    out.push('\n');
    out.push_str(&table.render());
    match outcome.knee_step() {
        Some(knee) => out.push_str(&format!(
            "Knee (*): {} jobs, {:.0} IOPS at {:.3} ms mean, {:.3} ms p99 — the highest IOPS within {} ms\n",
            knee.jobs, knee.iops, knee.mean_ms, knee.p99_ms, outcome.targets.latency_ms
        )),
        None => out.push_str(&format!("Knee: no step stayed within {} ms\n", outcome.targets.latency_ms)),
    }
    out.push_str(&format!("Stopped because {}.\n", outcome.stop_reason.describe()));
    out.push_str(&heading(&outcome.verdict.explanation));
    out.push('\n');
    if database {
        out.push_str(
            "HEAP READ counts blocks PostgreSQL fetched from outside shared_buffers; the OS page cache may still have \
             served them: DEVICE r/s shows what reached storage.\n",
        );
    }
    out.push_str(
        "Guidance: all-flash storage should hold a mean of 2 ms or less (max 5 ms); 8 ms with a distributed cache and \
         10 ms without are the classic limits.\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_sizes_follow_the_cache_policy() {
        assert_eq!(default_file_bytes(true, 64 << 30), DEFAULT_DIRECT_FILE_BYTES);
        assert_eq!(default_file_bytes(false, (1 << 30) + 100), 2 << 30);
        assert_eq!(default_file_bytes(false, 3 << 30) % 4096, 0);
    }

    #[test]
    fn comparability_names_the_mode() {
        let parameters = Comparable::Postgres { block_bytes: 8192, table_pages: 10, limit: StepLimit::Iterations(5) };
        let value = json!(parameters);
        assert_eq!(value["mode"], "postgres");
        assert_eq!(value["block_bytes"], 8192);
        assert_eq!(serde_json::from_value::<Comparable>(value).unwrap(), parameters);
    }
}
