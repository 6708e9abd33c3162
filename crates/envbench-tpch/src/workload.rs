//! `envbench tpch` as the driver runs it: the command line, the target opened from what the user wrote, `--cold`,
//! progress, and the per-query table, the stream geomeans, the metrics and the storage view.

use crate::queries::QUERY_COUNT;
use crate::results::{ExecutionStatus, GEOMEAN_METRIC, GEOMEAN_TEST, Phase, QPHH_METRIC, QPHH_TEST, StreamOutcome};
use crate::target::{LoadInfo, LoadProgress, OpenOptions, TargetSpec};
use crate::{QueryEvent, RunOptions, Target, TpchError, TpchOutcome, WORKLOAD, WORKLOAD_VERSION, format_scale_factor};
use clap::{Args, FromArgMatches};
use envbench_core::model::{ResultRecord, StoredRun};
use envbench_core::sampler::{DiskFigures, SamplerSeries, StepObserver};
use envbench_core::stats::Summary;
use envbench_core::text::{Align, Table, count, heading, number, plural};
use envbench_core::workload::{
    Envelope, Measured, Plan, Planned, Progress, RunContext, Workload, WorkloadError, has_option,
};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The directory under `--dir` that holds the generated data, one `sf<SF>` directory per scale factor.
pub const DATA_DIR: &str = "envbench-tpch";
/// The most virtual users (each is a thread and a connection) and query sets a run takes.
pub const MAX_USERS: usize = 1024;
pub const MAX_SETS: usize = 1000;

/// The arguments of `envbench tpch`.
#[derive(Args, Debug)]
pub struct TpchArgs {
    /// Scale factor: 1 is about 1 GB of raw data (6 million lineitem rows); any positive decimal such as 0.1.
    #[arg(long, default_value_t = 1.0)]
    pub sf: f64,
    /// Directory for the generated Parquet data (DIR/envbench-tpch/sf<SF>, kept and reused); with a server target,
    /// the directory whose storage the sampler watches (default: the server's data directory when it is on this
    /// machine).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Where the queries run: datafusion (embedded, the default), postgres://user@host:port/database or
    /// mysql://user@host:port/database (MySQL or MariaDB; also mariadb://).
    #[arg(long, default_value = "datafusion", value_name = "TARGET")]
    pub target: String,
    /// Server schema for the tables (created when missing; default: the connection's search_path, or on MySQL the
    /// URL's database, as a MySQL schema is a database); ignored by the datafusion target, so one suite matrix can
    /// sweep both.
    #[arg(long)]
    pub schema: Option<String>,
    /// Virtual users (concurrent query streams) of the throughput test (default: the TPC-H minimum for the SF).
    #[arg(long)]
    pub users: Option<usize>,
    /// Query sets each virtual user runs in the throughput test.
    #[arg(long, default_value_t = 1)]
    pub sets: usize,
    /// Use the specification's validation parameters (and, at SF 1, check every answer against the reference).
    #[arg(long)]
    pub validate: bool,
    /// Seed of the substitution parameters and the query orders beyond the specification's table.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Give up on a query after this long, e.g. 10m; it is counted as timed out.
    #[arg(long, value_name = "DURATION")]
    pub query_timeout: Option<String>,
    /// Run only the power test (one stream).
    #[arg(long, conflicts_with = "throughput_only")]
    pub power_only: bool,
    /// Run only the throughput test (the virtual users).
    #[arg(long)]
    pub throughput_only: bool,
    /// Regenerate the data (DataFusion) or reload the tables (servers) even when a matching set exists.
    #[arg(long)]
    pub fresh: bool,
    /// Drop the OS page cache before each power-test query and before the throughput test (needs root).
    #[arg(long)]
    pub cold: bool,
    /// Threads for generation, DataFusion partitions and server load jobs (default: every CPU).
    #[arg(long)]
    pub threads: Option<usize>,
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
            | TpchError::BadDatabaseUrl { .. }
            | TpchError::BadOptions(_) => WorkloadError::usage(error.to_string()),
            other => WorkloadError::failure(other.to_string()),
        }
    }
}

impl Workload for TpchWorkload {
    fn name(&self) -> &'static str {
        WORKLOAD
    }

    fn title(&self) -> &'static str {
        "analytic queries"
    }

    fn governed_by(&self) -> &'static [envbench_core::workload::Resource] {
        use envbench_core::workload::Resource;
        &[Resource::Cpu, Resource::Memory]
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
        Ok(Plan::Run(Box::new(plan(&args)?)))
    }

    /// Against a server the sampler should watch the server's data directory, which `tpch` finds itself.
    fn place(&self, suite_dir: &Path, args: &[String]) -> Option<(&'static str, String)> {
        let server = args.iter().any(|a| TargetSpec::parse(a).is_ok_and(|spec| spec != TargetSpec::DataFusion));
        (!server && !has_option(args, "--dir")).then(|| ("--dir", suite_dir.display().to_string()))
    }

    fn headline(&self, run: &StoredRun) -> String {
        let sf = run.results.first().and_then(|r| r.record.parameters.get("sf")).cloned().unwrap_or_default();
        let mut parts = vec![format!("SF {sf}")];
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

    fn fleet(&self) -> Option<&dyn envbench_core::fleet::FleetWorkload> {
        Some(&crate::fleet::TpchFleet)
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
    match args.threads {
        Some(0) => return Err(usage("--threads must be at least 1")),
        Some(threads) if threads > MAX_USERS => {
            return Err(usage(format!("--threads {threads}: give at most {MAX_USERS} threads")));
        }
        _ => {}
    }
    let query_timeout = match &args.query_timeout {
        Some(text) => {
            let timeout = envbench_core::parse_duration(text).map_err(|e| usage(format!("--query-timeout: {e}")))?;
            if timeout.is_zero() {
                return Err(usage("--query-timeout must be longer than zero, e.g. 10m"));
            }
            Some(timeout)
        }
        None => None,
    };
    let spec = TargetSpec::parse(&args.target)?;
    if let Some(dir) = &args.dir
        && !dir.is_dir()
    {
        return Err(usage(format!("--dir {}: not a directory; give an existing directory", dir.display())));
    }
    let data_parent = args.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    // A server is reached here, before anything is stored: a wrong URL or a stopped server is the user's to fix.
    let target = crate::target::open(
        &spec,
        &OpenOptions { data_dir: data_parent.join(DATA_DIR), schema: args.schema.clone(), threads: args.threads },
    )?;
    target.check(args.sf)?;
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
    options.throughput = !args.power_only;
    Ok(TpchRun { target, options, fresh: args.fresh, cold: args.cold, watched })
}

/// Everything the arguments say, checked, with the target opened (a server reached).
pub(crate) struct TpchRun {
    pub(crate) target: Box<dyn Target>,
    pub(crate) options: RunOptions,
    pub(crate) fresh: bool,
    cold: bool,
    /// The directory whose storage the run describes.
    pub(crate) watched: PathBuf,
}

impl Planned for TpchRun {
    fn data_dir(&self) -> &Path {
        &self.watched
    }

    fn run(mut self: Box<Self>, context: &RunContext<'_>) -> Result<Box<dyn Measured>, WorkloadError> {
        let progress = context.progress;
        let cache = CacheDropper::new(self.cold, self.target.cold_cache_note(), progress);
        let load = prepare(self.target.as_mut(), &self.options, self.fresh, context)?;
        let options = &self.options;
        let users = options.users.unwrap_or_else(|| crate::default_users(options.scale_factor));
        let tests = match (options.power, options.throughput) {
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
        let total = planned_executions(options, users, self.target.refresh_support().is_ok());
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
        let outcome = crate::run(self.target.as_ref(), load, options, context.interrupt, &observer, &on_event);
        drop(self.target);
        progress.line("");
        Ok(Box::new(TpchMeasured { outcome: outcome?, cache: cache.state(), generation }))
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
    outcome: TpchOutcome,
    cache: &'static str,
    generation: Option<crate::data::GenerationInfo>,
}

impl TpchMeasured {
    /// A run on a server's tables with warm caches (a fleet's: its agents do not drop the server's caches).
    pub(crate) fn warm(outcome: TpchOutcome) -> TpchMeasured {
        TpchMeasured { outcome, cache: "warm", generation: None }
    }

    fn document(&self) -> Value {
        json!({ "outcome": &self.outcome, "cache": self.cache, "generation": self.generation })
    }
}

impl Measured for TpchMeasured {
    fn records(&self, _series: &SamplerSeries) -> Vec<ResultRecord> {
        let mut records = self.outcome.records();
        for record in &mut records {
            if let Some(parameters) = record.parameters.as_object_mut() {
                parameters.insert("cache".into(), json!(self.cache));
            }
        }
        records
    }

    fn attachment(&self) -> Option<Value> {
        Some(self.document())
    }

    fn json(&self, envelope: &Envelope<'_>) -> Value {
        envelope.wrap([(WORKLOAD, self.document())])
    }

    fn render(&self, series: &SamplerSeries) -> String {
        render(&self.outcome, series, self.cache)
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
