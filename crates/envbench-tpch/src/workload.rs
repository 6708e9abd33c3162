//! `envbench tpch` as the driver runs it: the command line, the target opened from what the user wrote, `--cold`,
//! progress, and the per-query table, the stream geomeans, the metrics and the storage view.

use crate::queries::QUERY_COUNT;
use crate::results::{
    ExecutionStatus, GEOMEAN_METRIC, GEOMEAN_TEST, Phase, QPHH_METRIC, QPHH_TEST, StreamOutcome, THREADS_KEY,
    ThreadPoint,
};
use crate::targets::{LoadInfo, LoadProgress, OpenOptions, TargetSpec};
use crate::{QueryEvent, RunOptions, Target, TpchError, TpchOutcome, WORKLOAD, WORKLOAD_VERSION, format_scale_factor};
use clap::{Args, FromArgMatches};
use envbench_core::model::{ResultRecord, StoredRun};
use envbench_core::sampler::{DiskFigures, SamplerSeries, StepObserver};
use envbench_core::stats::Summary;
use envbench_core::text::{Align, Table, count, heading, number, plural};
use envbench_core::workload::{
    Measured, Plan, Planned, Progress, ReadBack, RunContext, ScalingCurve, ScalingPoint, Workload, WorkloadError,
    has_option,
};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The directory under `--dir` that holds the generated data, one `sf<SF>` directory per scale factor.
pub const DATA_DIR: &str = "envbench-tpch";
/// The most virtual users (each is a thread and a connection) and query sets a run takes.
pub const MAX_USERS: usize = 1024;
pub const MAX_SETS: usize = 1000;
/// The shortest and longest `--query-timeout`: below a second a timeout measures how fast a query is cancelled
/// rather than the query, and a day is longer than any query of a scale factor a run can finish.
pub const QUERY_TIMEOUT_BOUNDS: (std::time::Duration, std::time::Duration) =
    (std::time::Duration::from_secs(1), std::time::Duration::from_secs(24 * 3600));

/// The arguments of `envbench tpch`.
#[derive(Args, Debug)]
pub struct TpchArgs {
    /// Scale factor: 1 is about 1 GB of raw data (6 million lineitem rows); any positive decimal such as 0.1.
    #[arg(long, help_heading = "Load", visible_aliases = ["scale", "scale-factor"], default_value_t = 1.0)]
    pub sf: f64,
    /// Directory for the generated Parquet data (DIR/envbench-tpch/sf<SF>, kept and reused); with a server target,
    /// the directory whose storage the sampler watches (default: the server's data directory when it is on this
    /// machine).
    #[arg(long, help_heading = "Connection")]
    pub dir: Option<PathBuf>,
    /// Where the queries run: datafusion (embedded, the default), postgres://user@host:port/database or
    /// mysql://user@host:port/database (MySQL or MariaDB; also mariadb://).
    #[arg(long, help_heading = "Connection", default_value = "datafusion", value_name = "TARGET")]
    pub target: String,
    /// Server schema for the tables (created when missing; default: the connection's current schema, the first of its
    /// search_path that exists, or on MySQL the URL's database, as a MySQL schema is a database); every table the run
    /// uses is named in it, and no other. Ignored by the datafusion target, so one suite matrix can sweep both.
    #[arg(long, help_heading = "Connection")]
    pub schema: Option<String>,
    /// Virtual users (concurrent query streams) of the throughput test (default: the TPC-H minimum for the SF).
    #[arg(long, help_heading = "Run")]
    pub users: Option<usize>,
    /// Query sets each virtual user runs in the throughput test.
    #[arg(long, help_heading = "Run", default_value_t = 1)]
    pub sets: usize,
    /// Use the specification's validation parameters (and, at SF 1, check every answer against the reference).
    #[arg(long, help_heading = "Run")]
    pub validate: bool,
    /// Seed of the substitution parameters and the query orders beyond the specification's table.
    #[arg(long, help_heading = "Load", default_value_t = 1)]
    pub seed: u64,
    /// Give up on a query after this long, e.g. 10m; it is counted as timed out.
    #[arg(long, help_heading = "Run", value_name = "DURATION")]
    pub query_timeout: Option<envbench_core::DurationArg>,
    /// Run only the power test (one stream).
    #[arg(long, help_heading = "Run", conflicts_with = "throughput_only")]
    pub power_only: bool,
    /// Run only the throughput test (the virtual users).
    #[arg(long, help_heading = "Run")]
    pub throughput_only: bool,
    /// Regenerate the data (DataFusion) or reload the tables (servers) even when a matching set exists.
    #[arg(long, help_heading = "Load")]
    pub fresh: bool,
    /// Drop the OS page cache before each power-test query and before the throughput test (needs root).
    #[arg(long, help_heading = "Run")]
    pub cold: bool,
    /// Threads for generation, DataFusion partitions and server load jobs (default: every CPU); a list such as
    /// 1,2,4,8 runs DataFusion's power test at each count, for the speedup curve and parallel efficiency.
    #[arg(long, help_heading = "Run", value_name = "N[,N...]")]
    pub threads: Option<String>,
}

/// The TPC-H-derived analytic workload.
pub struct TpchWorkload;

/// The registration of `tpch`.
pub static TPCH: TpchWorkload = TpchWorkload;

impl From<TpchError> for WorkloadError {
    fn from(error: TpchError) -> WorkloadError {
        match error {
            TpchError::Interrupted => WorkloadError::interrupted(),
            TpchError::BadScaleFactor(_)
            | TpchError::ForeignFiles { .. }
            | TpchError::NotEnoughSpace { .. }
            | TpchError::BadOptions(_) => WorkloadError::usage(error.to_string()),
            other => WorkloadError::failure(other.to_string()),
        }
    }
}

impl Workload for TpchWorkload {
    fn name(&self) -> &'static str {
        WORKLOAD
    }

    fn version(&self) -> u32 {
        WORKLOAD_VERSION
    }

    fn command(&self) -> clap::Command {
        TpchArgs::augment_args(clap::Command::new(WORKLOAD)).about(
            "TPC-H-derived analytic queries: power and throughput tests with virtual users, on embedded DataFusion \
             over generated Parquet files, on PostgreSQL or on MySQL/MariaDB.",
        )
    }

    fn plan(&self, matches: &clap::ArgMatches) -> Result<Plan, WorkloadError> {
        let args = TpchArgs::from_arg_matches(matches).map_err(|e| WorkloadError::usage(e.to_string()))?;
        let mut run = plan(&args)?;
        run.lock()?;
        Ok(Plan::Run(Box::new(run)))
    }

    fn fleet(&self) -> Option<&dyn envbench_core::fleet::FleetWorkload> {
        Some(&crate::fleet::TpchFleet)
    }

    fn suite_side(&self) -> &dyn envbench_core::workload::SuiteSide {
        self
    }
}

impl envbench_core::workload::SuiteSide for TpchWorkload {
    fn table(&self, suite: &str) -> Option<&'static str> {
        match suite {
            "quick" => Some(
                r#"
# Each query five times: the power test and two users' two query sets each.
sf = 0.1
users = 2
sets = 2
"#,
            ),
            "standard" => Some(
                r#"
sf = 1
"#,
            ),
            "smoke" => Some(
                r#"
sf = 0.01
"#,
            ),
            _ => None,
        }
    }

    /// Against a server the sampler should watch the server's data directory, which `tpch` finds itself.
    fn place(&self, suite_dir: &Path, args: &[String]) -> Option<(&'static str, String)> {
        let server = args.iter().any(|a| TargetSpec::parse(a).is_ok_and(|spec| spec != TargetSpec::DataFusion));
        (!server && !has_option(args, "--dir")).then(|| ("--dir", suite_dir.display().to_string()))
    }
}

impl ReadBack for TpchWorkload {
    fn cost_units(&self) -> &'static [envbench_core::workload::CostUnit] {
        use crate::results::{GEOMEAN_METRIC, GEOMEAN_TEST, QPHH_METRIC, QPHH_TEST};
        &[
            // TPC-H's price-performance is price per QphH@Size: here, what an hour costs over the queries it does.
            envbench_core::workload::CostUnit {
                metric: QPHH_METRIC,
                tests: QPHH_TEST,
                per: envbench_core::workload::Per::Rate(1.0),
                words: "QphH@Size",
            },
            envbench_core::workload::CostUnit {
                metric: GEOMEAN_METRIC,
                tests: GEOMEAN_TEST,
                per: envbench_core::workload::Per::Execution,
                words: "query (geometric mean time)",
            },
        ]
    }

    fn title(&self) -> Option<&'static str> {
        Some("analytic queries")
    }

    /// Each query's (and refresh function's) elapsed time: one sample per stream that ran it.
    fn headline_metrics(&self) -> &'static [&'static str] {
        &["elapsed"]
    }

    fn noise_margin(&self) -> f64 {
        envbench_core::stats::TPCH_NOISE_MARGIN
    }

    fn more_samples(&self) -> &'static str {
        "--users 2 --sets 2: the power test and four query sets run each query five times"
    }

    fn governed_by(&self) -> &'static [envbench_core::workload::Resource] {
        use envbench_core::workload::Resource;
        &[Resource::Cpu, Resource::Memory]
    }

    /// The threads each query may use (DataFusion's partitions, PostgreSQL's parallel workers).
    fn concurrency_knobs(&self) -> &'static [&'static str] {
        &[crate::results::THREADS_KEY]
    }

    fn headline(&self, run: &StoredRun) -> String {
        let sf = run.results.first().and_then(|r| r.record.parameters.get("sf")).cloned().unwrap_or_default();
        let mut parts = vec![format!("SF {sf}")];
        let speedups: Vec<String> = run
            .results
            .iter()
            .filter(|r| r.record.metric == SPEEDUP_METRIC)
            .filter_map(|r| {
                Some(format!("{:.2}x at {} threads", r.record.samples.first()?, r.record.parameters.get("threads")?))
            })
            .collect();
        if !speedups.is_empty() {
            parts.push(format!("speedup {}", speedups.join(", ")));
        }
        if let Some(geomean) = run.median(GEOMEAN_TEST, GEOMEAN_METRIC) {
            parts.push(format!("query geomean {geomean:.3} s"));
        }
        if let Some(qphh) = run.median(QPHH_TEST, QPHH_METRIC) {
            parts.push(format!("QphH@Size {qphh:.0} (TPC-H-derived)"));
        }
        parts.join("; ")
    }

    fn tests_word(&self) -> &'static str {
        "per query"
    }

    /// A thread sweep's curve: the queries' rate (3600 over the geomean) and geomean at each thread count.
    fn scaling(&self, run: &StoredRun) -> Option<ScalingCurve> {
        let points: Vec<ThreadPoint> =
            serde_json::from_value(run.attachments.get(WORKLOAD)?.get(THREADS_KEY)?.clone()).ok()?;
        let points: Vec<ScalingPoint> = points
            .iter()
            .filter_map(|p| {
                let geomean = p.geomean()?;
                Some(ScalingPoint { concurrency: p.threads as f64, throughput: 3600.0 / geomean, latency: geomean })
            })
            .collect();
        (points.len() > 1).then(|| ScalingCurve {
            concurrency_label: "threads".into(),
            concurrency_symbol: "T".into(),
            throughput_label: "queries/h at the geomean".into(),
            latency_label: "query geomean".into(),
            latency_unit: "s".into(),
            points,
            knee: None,
            latency_target: None,
        })
    }
}

/// A usage error (exit status 2).
fn usage(message: impl Into<String>) -> WorkloadError {
    WorkloadError::usage(message)
}

pub(crate) fn plan(args: &TpchArgs) -> Result<TpchRun, WorkloadError> {
    crate::check_scale_factor(args.sf).map_err(|e| usage(format!("--sf {}: {e}", args.sf)))?;
    if args.sets == 0 {
        return Err(usage("--sets must be at least 1"));
    }
    if args.sets > MAX_SETS {
        return Err(usage(format!("--sets {}: give at most {MAX_SETS} query sets", args.sets)));
    }
    match args.users {
        Some(0) => {
            return Err(usage(
                "--users must be at least 1 (or leave it out for the TPC-H minimum for the scale factor)",
            ));
        }
        Some(users) if users > MAX_USERS => {
            return Err(usage(format!(
                "--users {users}: at most {MAX_USERS} virtual users (each is a thread and a connection)"
            )));
        }
        _ => {}
    }
    let thread_counts = envbench_core::workload::count_list("threads", args.threads.as_deref(), MAX_USERS)?;
    let sweep = if thread_counts.len() > 1 { thread_counts.clone() } else { Vec::new() };
    if !sweep.is_empty() && args.throughput_only {
        return Err(usage(
            "--threads with several counts runs the power test at each count: leave out --throughput-only",
        ));
    }
    let query_timeout = match &args.query_timeout {
        Some(timeout) => {
            let (min, max) = QUERY_TIMEOUT_BOUNDS;
            Some(timeout.within("--query-timeout", min, max).map_err(usage)?)
        }
        None => None,
    };
    if let Some(schema) = &args.schema {
        envbench_core::text::check_name("--schema", schema).map_err(usage)?;
        envbench_sql::namespace::check_schema_name(schema).map_err(|e| usage(format!("--schema: {e}")))?;
    }
    let spec = TargetSpec::parse(&args.target)?;
    if let Some(dir) = &args.dir
        && !dir.is_dir()
    {
        return Err(usage(format!("--dir {}: not a directory; give an existing directory", dir.display())));
    }
    let data_parent = args.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    // A server is reached here, before anything is stored: a wrong URL or a stopped server is the user's to fix.
    // A sweep generates with every CPU, then runs at each count.
    let threads = if sweep.is_empty() { thread_counts.first().copied() } else { None };
    let target = crate::targets::open(
        &spec,
        &OpenOptions { data_dir: data_parent.join(DATA_DIR), schema: args.schema.clone(), threads },
    )?;
    target.check(args.sf)?;
    if !sweep.is_empty() {
        // A server refuses a thread sweep here, before anything is stored.
        target.thread_sweep_support().map_err(usage)?;
    }
    // The directory whose storage the fingerprint describes and the sampler watches.
    let watched = match (&args.dir, target.data_directory()) {
        (Some(dir), _) => dir.clone(),
        (None, Some(server_dir)) => server_dir.to_path_buf(),
        (None, None) => PathBuf::from("."),
    };
    let mut options = RunOptions::new(args.sf);
    options.users = args.users;
    options.sets = args.sets;
    options.validate = args.validate;
    options.seed = args.seed;
    options.query_timeout = query_timeout;
    options.power = !args.throughput_only;
    options.throughput = !args.power_only && sweep.is_empty();
    Ok(TpchRun { target, options, fresh: args.fresh, cold: args.cold, watched, sweep })
}

/// Everything the arguments say, checked, with the target opened (a server reached).
pub(crate) struct TpchRun {
    pub(crate) target: Box<dyn Target>,
    pub(crate) options: RunOptions,
    pub(crate) fresh: bool,
    cold: bool,
    /// The directory whose storage the run describes.
    pub(crate) watched: PathBuf,
    /// With `--threads 1,2,4`: the power test at each thread count (empty: one run).
    sweep: Vec<usize>,
}

impl TpchRun {
    /// Take the lock the run holds on its data until it ends (see [`Target::lock`]): after every check, before
    /// anything is generated or loaded. A run writes when it runs the refresh functions.
    pub(crate) fn lock(&mut self) -> Result<(), TpchError> {
        let writes = self.target.refresh_support().is_ok() && (self.options.power || self.options.throughput);
        self.target.lock(self.options.scale_factor, self.fresh, writes)
    }
}

impl Planned for TpchRun {
    fn data_dir(&self) -> &Path {
        &self.watched
    }

    fn drives_local_server(&self) -> bool {
        self.target.drives_local_server()
    }

    fn run(mut self: Box<Self>, context: &RunContext<'_>) -> Result<Box<dyn Measured>, WorkloadError> {
        let progress = context.progress;
        let cache = CacheDropper::new(self.cold, self.target.cold_cache_note(), progress);
        let load = prepare(self.target.as_mut(), &self.options, self.fresh, context)?;
        let options = &self.options;
        let users = options.users.unwrap_or_else(|| crate::default_users(options.scale_factor));
        let tests = match (options.power, options.throughput) {
            _ if !self.sweep.is_empty() => format!(
                "the power test at {} threads",
                self.sweep.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")
            ),
            (true, true) => format!("power test, then throughput test with {users} virtual users"),
            (true, false) => "power test".to_string(),
            _ => format!("throughput test with {users} virtual users"),
        };
        progress.line(&format!(
            "{}: {tests} x {} query set{}, {} parameters{}",
            load.details,
            options.sets,
            plural(options.sets),
            if options.validate { "validation".to_string() } else { format!("seed {} random", options.seed) },
            options
                .query_timeout
                .map(|t| format!(", query timeout {}", envbench_core::units::format_duration(t)))
                .unwrap_or_default()
        ));
        let observer = ColdSteps { inner: context.steps, cache: &cache };
        let done = AtomicUsize::new(0);
        // A thread sweep runs the power test once per count.
        let total = planned_executions(options, users, self.target.refresh_support().is_ok()) * self.sweep.len().max(1);
        let on_event = |event: &QueryEvent| {
            if event.phase == Phase::Power {
                cache.drop_now();
            }
            let finished = done.fetch_add(1, Ordering::SeqCst) + 1;
            let who = stream_name(event.phase, event.stream, users);
            let line = format!("[{finished}/{total}] {who}: {} {}", event.what, status_text(event.status, event));
            if event.status.is_ok() { progress.update(&line) } else { progress.line(&line) }
        };
        let generation = load.generation.clone();
        if !self.sweep.is_empty() {
            let sweep = self.run_sweep(load, &observer, &on_event, context)?;
            let outcome = sweep.last().map(|p| p.outcome.clone()).expect("a sweep has a point");
            return Ok(Box::new(TpchMeasured { outcome, cache: cache.state(), generation, sweep }));
        }
        let outcome = crate::run(self.target.as_ref(), load, options, context.interrupt, &observer, &on_event);
        drop(self.target);
        progress.line("");
        Ok(Box::new(TpchMeasured { outcome: outcome?, cache: cache.state(), generation, sweep: Vec::new() }))
    }
}

impl TpchRun {
    /// The power test at each thread count of the sweep, on the same data; each count's steps are named for it
    /// (`T=2 power`).
    fn run_sweep(
        &mut self,
        load: LoadInfo,
        observer: &dyn StepObserver,
        on_event: &(dyn Fn(&QueryEvent) + Sync),
        context: &RunContext<'_>,
    ) -> Result<Vec<ThreadPoint>, WorkloadError> {
        let mut points: Vec<ThreadPoint> = Vec::new();
        for &threads in &self.sweep {
            if context.interrupted() {
                break;
            }
            self.target.set_threads(threads)?;
            let steps = NamedSteps { inner: observer, prefix: thread_test_id(threads) };
            let outcome =
                crate::run(self.target.as_ref(), load.clone(), &self.options, context.interrupt, &steps, on_event)?;
            let point = ThreadPoint { threads, outcome };
            context.progress.line(&sweep_line(&point, points.first()));
            points.push(point);
        }
        if points.is_empty() {
            return Err(WorkloadError::interrupted());
        }
        Ok(points)
    }
}

/// The test id, and the sampler's step prefix, of a thread count of a sweep.
pub fn thread_test_id(threads: usize) -> String {
    format!("T={threads}")
}

/// The metrics of a thread sweep's points beside their queries': speedup and efficiency over the first count.
pub const SPEEDUP_METRIC: &str = "speedup";
pub const EFFICIENCY_METRIC: &str = "efficiency";

/// A sweep's records: each count's queries and geomean under `T=N` (with `threads` among the parameters), and each
/// count's speedup and parallel efficiency over the first.
fn sweep_records(points: &[ThreadPoint]) -> Vec<ResultRecord> {
    let Some(first) = points.first() else { return Vec::new() };
    let mut records = Vec::new();
    for point in points {
        let prefix = thread_test_id(point.threads);
        let mut own = point.outcome.records();
        for record in &mut own {
            record.test_id = format!("{prefix} {}", record.test_id);
            record.parameters["threads"] = json!(point.threads);
        }
        if let Some(template) = own.first().cloned() {
            let figures = [
                (SPEEDUP_METRIC, "x", point.speedup_over(first)),
                (EFFICIENCY_METRIC, "%", point.efficiency_over(first)),
            ];
            for (metric, unit, value) in figures {
                let Some(value) = value else { continue };
                own.push(ResultRecord {
                    test_id: prefix.clone(),
                    metric: metric.into(),
                    unit: unit.into(),
                    direction: envbench_core::model::Direction::HigherIsBetter,
                    samples: vec![value],
                    flags: Vec::new(),
                    ..template.clone()
                });
            }
        }
        records.extend(own);
    }
    records
}

/// A thread sweep for people: each query's time at each count, then the speedup curve and parallel efficiency.
fn render_sweep(points: &[ThreadPoint], series: &SamplerSeries, cache: &str) -> String {
    use Align::{Left, Right};
    let (Some(first), Some(last)) = (points.first(), points.last()) else { return String::new() };
    let mut out = heading(&format!(
        "TPC-H-derived power test at {} threads, SF {} on {}",
        points.iter().map(|p| p.threads.to_string()).collect::<Vec<_>>().join(", "),
        format_scale_factor(first.outcome.scale_factor),
        first.outcome.target.as_str()
    ));
    out.push('\n');
    let mut headers: Vec<String> = vec!["QUERY".into()];
    headers.extend(points.iter().map(|p| format!("{} s", thread_test_id(p.threads))));
    headers.push(format!("SPEEDUP {}->{}", first.threads, last.threads));
    let header_refs: Vec<&str> = headers.iter().map(String::as_str).collect();
    let mut aligns = vec![Right; headers.len()];
    aligns[0] = Left;
    let mut table = Table::new(&header_refs, &aligns);
    let seconds = |point: &ThreadPoint, query: u8| {
        let power = point.outcome.streams.iter().find(|s| s.phase == Phase::Power)?;
        power.queries.iter().find(|q| q.query == query && q.status.is_ok()).map(|q| q.elapsed_seconds)
    };
    for query in 1..=QUERY_COUNT {
        let mut row = vec![format!("Q{query}")];
        row.extend(points.iter().map(|p| seconds(p, query).map_or("-".into(), |s| format!("{s:.3}"))));
        row.push(match (seconds(first, query), seconds(last, query)) {
            (Some(a), Some(b)) if b > 0.0 => format!("{:.2}x", a / b),
            _ => "-".into(),
        });
        table.row(row);
    }
    out.push_str(&table.render());
    out.push('\n');
    let mut curve = Table::new(
        &["THREADS", "GEOMEAN s", "SPEEDUP", "EFFICIENCY", "POWER@SIZE"],
        &[Right, Right, Right, Right, Right],
    );
    for point in points {
        curve.row(vec![
            point.threads.to_string(),
            point.geomean().map_or("-".into(), |g| format!("{g:.3}")),
            point.speedup_over(first).map_or("-".into(), |s| format!("{s:.2}x")),
            point.efficiency_over(first).map_or("-".into(), |e| format!("{e:.0}%")),
            point.outcome.metrics.power_at_size.map_or("-".into(), number),
        ]);
    }
    out.push_str(&curve.render());
    out.push_str(&format!(
        "Speedup: the {}-thread query geomean over each count's; efficiency: the speedup over the ratio of threads \
         (100%: twice the threads ran the queries twice as fast). Where efficiency falls, more cores help this \
         analytic workload little on this machine and storage.\n",
        first.threads
    ));
    let failures: usize = points.iter().map(|p| p.outcome.failures.len()).sum();
    if failures > 0 {
        out.push_str(&format!("{failures} queries failed or gave a wrong answer over the sweep.\n"));
    }
    out.push('\n');
    out.push_str(&storage_view(series, cache));
    out
}

/// A sweep point's line of progress: its geomean and its speedup over the first count.
fn sweep_line(point: &ThreadPoint, first: Option<&ThreadPoint>) -> String {
    let geomean = point.geomean();
    let speedup = first.and_then(|f| point.speedup_over(f));
    format!(
        "  {:>4} threads: query geomean {}{}",
        point.threads,
        geomean.map_or("-".into(), |g| format!("{g:.3} s")),
        speedup.map_or(String::new(), |s| format!(", speedup {s:.2}x"))
    )
}

/// Passes steps on to the sampler under a prefix (`T=2 power`), so each thread count of a sweep has its own.
struct NamedSteps<'a> {
    inner: &'a dyn StepObserver,
    prefix: String,
}

impl StepObserver for NamedSteps<'_> {
    fn step_started(&self, step: &str) {
        self.inner.step_started(&format!("{} {step}", self.prefix));
    }

    fn step_finished(&self, step: &str) {
        self.inner.step_finished(&format!("{} {step}", self.prefix));
    }
}

/// Generate or load the data, with progress in rows/s.
pub(crate) fn prepare(
    target: &mut dyn Target,
    options: &RunOptions,
    fresh: bool,
    context: &RunContext<'_>,
) -> Result<LoadInfo, TpchError> {
    let started = std::time::Instant::now();
    let sf = format_scale_factor(options.scale_factor);
    let on_progress = |p: LoadProgress| {
        let seconds = started.elapsed().as_secs_f64().max(1e-9);
        context.progress.update(&format!(
            "{} SF {sf}: {:>3}% {} rows, {} rows/s",
            p.action,
            (p.rows_loaded * 100 / p.rows_expected.max(1)).min(100),
            count(p.rows_loaded as f64),
            count(p.rows_loaded as f64 / seconds)
        ));
    };
    let load = target.prepare(options.scale_factor, fresh, context.interrupt, context.steps, &on_progress)?;
    context.progress.line(&load.summary);
    Ok(load)
}

/// How many queries and refreshes the run will report, for the progress counter.
fn planned_executions(options: &RunOptions, users: usize, refreshes: bool) -> usize {
    let per_set = usize::from(QUERY_COUNT) + 2 * usize::from(refreshes);
    let power = if options.power { per_set } else { 0 };
    let throughput = if options.throughput { users * options.sets * per_set } else { 0 };
    power + throughput
}

/// How a stream is named: the power test, a virtual user, or the throughput test's refresh stream (numbered after
/// the users).
fn stream_name(phase: Phase, stream: usize, users: usize) -> String {
    match phase {
        Phase::Power => "power".to_string(),
        Phase::Throughput if stream > users => "refresh".to_string(),
        Phase::Throughput => format!("user {stream}"),
    }
}

fn status_text(status: &ExecutionStatus, event: &QueryEvent) -> String {
    match status {
        ExecutionStatus::Ok => format!("{:.3} s", event.elapsed_seconds),
        other => failure_text(other),
    }
}

fn failure_text(status: &ExecutionStatus) -> String {
    match status {
        ExecutionStatus::Ok => "ok".into(),
        ExecutionStatus::WrongAnswer(why) => format!("WRONG ANSWER: {why}"),
        ExecutionStatus::Failed(failure) => format!("FAILED: {failure}"),
    }
}

/// `--cold`: drops the OS page cache (the workspace's one dropper, in `envbench-io`) before each power-test query and
/// before the throughput test. Without root and a writable /proc/sys the run goes on warm, with a warning, and says so
/// in its results.
struct CacheDropper<'a> {
    enabled: AtomicBool,
    dropped: AtomicUsize,
    progress: &'a dyn Progress,
}

impl<'a> CacheDropper<'a> {
    fn new(cold: bool, note: Option<&str>, progress: &'a dyn Progress) -> CacheDropper<'a> {
        let enabled = if !cold {
            false
        } else if !envbench_io::can_drop_page_cache() {
            progress.warn(
                "--cold needs root to drop the page cache; the queries run with warm caches (run as root, or drop \
                 the cache yourself between runs)",
            );
            false
        } else {
            if let Some(note) = note {
                progress.line(&format!("note: {note}"));
            }
            true
        };
        CacheDropper { enabled: AtomicBool::new(enabled), dropped: AtomicUsize::new(0), progress }
    }

    fn drop_now(&self) {
        if !self.enabled.load(Ordering::SeqCst) {
            return;
        }
        match envbench_io::drop_page_cache() {
            Ok(()) => {
                self.dropped.fetch_add(1, Ordering::SeqCst);
            }
            // Dropping stopped working (e.g. /proc/sys remounted read-only): the rest runs warm and says so.
            Err(error) => {
                if self.enabled.swap(false, Ordering::SeqCst) {
                    self.progress.warn(&format!(
                        "cannot drop the page cache ({error}); the remaining queries run with warm caches"
                    ));
                }
            }
        }
    }

    /// `cold` when every planned drop happened, `partly-cold` when dropping stopped working, else `warm`.
    fn state(&self) -> &'static str {
        match (self.dropped.load(Ordering::SeqCst), self.enabled.load(Ordering::SeqCst)) {
            (0, _) => "warm",
            (_, true) => "cold",
            (_, false) => "partly-cold",
        }
    }
}

/// Passes steps on to the sampler, dropping the page cache as the power and throughput tests begin.
struct ColdSteps<'a> {
    inner: &'a dyn StepObserver,
    cache: &'a CacheDropper<'a>,
}

impl StepObserver for ColdSteps<'_> {
    fn step_started(&self, step: &str) {
        if step == Phase::Power.step() || step == Phase::Throughput.step() {
            self.cache.drop_now();
        }
        self.inner.step_started(step);
    }

    fn step_finished(&self, step: &str) {
        self.inner.step_finished(step);
    }
}

pub(crate) struct TpchMeasured {
    /// The run's outcome (with a thread sweep: the last count's).
    outcome: TpchOutcome,
    cache: &'static str,
    generation: Option<crate::data::GenerationInfo>,
    /// With `--threads 1,2,4`: the power test at each count.
    sweep: Vec<ThreadPoint>,
}

impl TpchMeasured {
    /// A run on a server's tables with warm caches (a fleet's: its agents do not drop the server's caches).
    pub(crate) fn warm(outcome: TpchOutcome) -> TpchMeasured {
        TpchMeasured { outcome, cache: "warm", generation: None, sweep: Vec::new() }
    }
}

impl Measured for TpchMeasured {
    fn records(&self, _series: &SamplerSeries) -> Vec<ResultRecord> {
        let mut records = if self.sweep.is_empty() { self.outcome.records() } else { sweep_records(&self.sweep) };
        for record in &mut records {
            if let Some(parameters) = record.parameters.as_object_mut() {
                parameters.insert("cache".into(), json!(self.cache));
            }
        }
        records
    }

    /// The outcome with its cache state and data generation, and a thread sweep's steps.
    fn document(&self) -> Option<(&'static str, Value)> {
        let mut document = json!({ "outcome": &self.outcome, "cache": self.cache, "generation": self.generation });
        if !self.sweep.is_empty() {
            document[THREADS_KEY] = json!(&self.sweep);
        }
        Some((WORKLOAD, document))
    }

    fn render(&self, series: &SamplerSeries) -> String {
        if self.sweep.is_empty() {
            render(&self.outcome, series, self.cache)
        } else {
            render_sweep(&self.sweep, series, self.cache)
        }
    }

    fn ending(&self) -> envbench_core::workload::Ending {
        match self.outcome.failures.len() {
            0 => envbench_core::workload::Ending::Complete,
            // Everything is stored; the exit status tells scripts that not every query answered.
            n => envbench_core::workload::Ending::CompleteWithFailures(format!(
                "{n} quer{} failed or gave a wrong answer",
                if n == 1 { "y" } else { "ies" }
            )),
        }
    }
}

/// One stream's executions of a query (`Q7`) or refresh function (`RF1`): seconds, rows, whether it worked.
fn executions(stream: &StreamOutcome, what: &str) -> Vec<(f64, Option<usize>, bool)> {
    if let Some(query) = what.strip_prefix('Q').and_then(|q| q.parse::<u8>().ok()) {
        stream
            .queries
            .iter()
            .filter(|e| e.query == query)
            .map(|e| (e.elapsed_seconds, Some(e.rows), e.status.is_ok()))
            .collect()
    } else {
        stream
            .refreshes
            .iter()
            .filter(|r| r.function == what)
            .map(|r| (r.elapsed_seconds, None, r.status.is_ok()))
            .collect()
    }
}

/// The per-query table, stream geomeans, failures, the metrics and the storage view.
fn render(outcome: &TpchOutcome, series: &SamplerSeries, cache: &str) -> String {
    use Align::{Left, Right};
    let mut out = String::new();
    let power = outcome.streams.iter().find(|s| s.phase == Phase::Power);
    let throughput: Vec<_> = outcome.streams.iter().filter(|s| s.phase == Phase::Throughput).collect();

    let mut headers = vec!["QUERY"];
    if power.is_some() {
        headers.push("POWER s");
    }
    if !throughput.is_empty() {
        headers.extend(["USERS MIN s", "MEDIAN s", "MAX s"]);
    }
    headers.extend(["ROWS", "FAILED"]);
    let mut aligns = vec![Right; headers.len()];
    aligns[0] = Left;
    let mut table = Table::new(&headers, &aligns);
    let mut whats: Vec<String> = (1..=QUERY_COUNT).map(|q| format!("Q{q}")).collect();
    if power.is_some_and(|p| !p.refreshes.is_empty()) {
        whats.extend(["RF1".to_string(), "RF2".to_string()]);
    }
    for what in &whats {
        let mut all = Vec::new();
        let mut row = vec![what.clone()];
        if let Some(power) = power {
            let runs = executions(power, what);
            row.push(match runs.first() {
                Some((seconds, _, true)) => format!("{seconds:.3}"),
                Some((_, _, false)) => "failed".into(),
                None => "-".into(),
            });
            all.extend(runs);
        }
        if !throughput.is_empty() {
            let runs: Vec<_> = throughput.iter().flat_map(|s| executions(s, what)).collect();
            let ok: Vec<f64> = runs.iter().filter(|r| r.2).map(|r| r.0).collect();
            match Summary::of(&ok) {
                Some(s) => row.extend([format!("{:.3}", s.min), format!("{:.3}", s.median), format!("{:.3}", s.max)]),
                None => row.extend(["-".into(), "-".into(), "-".into()]),
            }
            all.extend(runs);
        }
        if all.is_empty() {
            continue;
        }
        row.push(all.iter().find_map(|r| r.1).map(|rows| rows.to_string()).unwrap_or_default());
        let failed = all.iter().filter(|r| !r.2).count();
        row.push(if failed == 0 { String::new() } else { failed.to_string() });
        table.row(row);
    }
    out.push_str(&heading(&format!(
        "TPC-H-derived queries, SF {} on {}",
        format_scale_factor(outcome.scale_factor),
        outcome.target.as_str()
    )));
    out.push('\n');
    out.push_str(&table.render());

    let mut streams = Table::new(&["STREAM", "QUERIES", "GEOMEAN s", "ELAPSED s"], &[Left, Right, Right, Right]);
    for stream in &outcome.streams {
        let (ok, all) = if stream.queries.is_empty() {
            (stream.refreshes.iter().filter(|r| r.status.is_ok()).count(), stream.refreshes.len())
        } else {
            (stream.queries.iter().filter(|q| q.status.is_ok()).count(), stream.queries.len())
        };
        streams.row(vec![
            stream_name(stream.phase, stream.stream, outcome.users),
            format!("{ok}/{all}{}", if stream.queries.is_empty() { " RF" } else { "" }),
            stream.geomean_seconds.map(|g| format!("{g:.3}")).unwrap_or_else(|| "-".into()),
            format!("{:.2}", stream.elapsed_seconds),
        ]);
    }
    out.push('\n');
    out.push_str(&streams.render());

    if !outcome.failures.is_empty() {
        out.push('\n');
        out.push_str(&heading(&format!("{} failed or wrong", outcome.failures.len())));
        out.push('\n');
        for failure in &outcome.failures {
            let stream = match failure.phase {
                Phase::Power => "power test".to_string(),
                Phase::Throughput if failure.stream > outcome.users => "refresh stream".to_string(),
                Phase::Throughput => format!("user {} set {}", failure.stream, failure.set + 1),
            };
            out.push_str(&format!("  {stream}, {}: {}\n", failure.what, failure_text(&failure.status)));
        }
    }

    let metrics = &outcome.metrics;
    out.push('\n');
    out.push_str(&heading("TPC-H-derived metrics (not audited; not comparable with published TPC-H results)"));
    out.push('\n');
    let figure = |value: Option<f64>| value.map(number).unwrap_or_else(|| "not computed".into());
    if power.is_some() {
        out.push_str(&format!(
            "  Power@Size       {:>12}   ({} timed intervals)\n",
            figure(metrics.power_at_size),
            metrics.power_intervals
        ));
    }
    if let Some(ts) = metrics.throughput_seconds {
        out.push_str(&format!(
            "  Throughput@Size  {:>12}   ({} users x {} set{} in {ts:.1} s)\n",
            figure(metrics.throughput_at_size),
            outcome.users,
            outcome.sets,
            plural(outcome.sets)
        ));
    }
    if power.is_some() && metrics.throughput_seconds.is_some() {
        out.push_str(&format!("  QphH@Size        {:>12}\n", figure(metrics.qphh_at_size)));
    }
    for note in metrics.notes.iter().skip(1) {
        out.push_str(&format!("  - {note}\n"));
    }
    if let Some(reason) = &outcome.refresh_skipped
        && !metrics.notes.iter().any(|n| n.contains(reason.as_str()))
    {
        out.push_str(&format!("  - {reason}\n"));
    }

    out.push('\n');
    out.push_str(&storage_view(series, cache));
    if outcome.interrupted {
        out.push_str("\nInterrupted: the queries finished before Ctrl-C are kept.\n");
    }
    out
}

/// What the storage under the watched directory delivered during each phase, from the OS sampler.
fn storage_view(series: &SamplerSeries, cache: &str) -> String {
    use Align::{Left, Right};
    let mut table = Table::new(
        &["PHASE", "WALL s", "READ MB/s", "AVG READ KiB", "READ IOPS", "r_await ms", "WRITE MB/s", "CPU %", "IOWAIT %"],
        &[Left, Right, Right, Right, Right, Right, Right, Right, Right],
    );
    for step in &series.steps {
        let disk = step.disks.first();
        let cell = |f: &dyn Fn(&DiskFigures) -> f64| disk.map(|d| number(f(d))).unwrap_or_else(|| "-".into());
        table.row(vec![
            step.step.clone(),
            format!("{:.1}", (step.end_ms.saturating_sub(step.start_ms)) as f64 / 1e3),
            cell(&|d| d.read_mb_per_s),
            cell(&|d| d.read_request_kib),
            cell(&|d| d.reads_per_s),
            cell(&|d| d.read_await_ms),
            cell(&|d| d.write_mb_per_s),
            format!("{:.0}", step.cpu.user_percent + step.cpu.system_percent + step.cpu.nice_percent),
            format!("{:.1}", step.cpu.iowait_percent),
        ]);
    }
    let device = series.devices.first().map(String::as_str).unwrap_or("no device");
    let mut out = heading(&format!("Storage during each phase ({device}; page cache {cache})"));
    out.push('\n');
    out.push_str(&table.render());
    if cache == "warm" {
        out.push_str(
            "With warm caches the queries read mostly from memory; --cold (as root) drops the page cache so they \
             read from storage.\n",
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_progress_counter_counts_queries_and_refreshes() {
        let mut options = RunOptions::new(1.0);
        assert_eq!(planned_executions(&options, 2, false), 22 + 2 * 22);
        assert_eq!(planned_executions(&options, 2, true), 24 + 2 * 24);
        options.power = false;
        options.sets = 3;
        assert_eq!(planned_executions(&options, 2, false), 2 * 3 * 22);
    }
}
