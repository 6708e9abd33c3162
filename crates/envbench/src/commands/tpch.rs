//! `envbench tpch`: TPC-H-derived analytic queries. Generates (or reuses) the data, prepares the target (DataFusion
//! over Parquet, or a PostgreSQL database loaded by envbench), runs the power test and the throughput test with
//! virtual users, and prints per-query times, stream geometric means, the three TPC-H-derived metrics and what the
//! storage delivered while the queries ran.

use crate::cli::TpchArgs;
use crate::commands::run_request;
use crate::output::{Align, Table, heading, number, progress, progress_line};
use crate::session::{Ending, RunSession};
use crate::usage;
use envbench_core::ByteSize;
use envbench_core::sampler::{SamplerSeries, StepObserver};
use envbench_core::stats::Summary;
use envbench_store::StoreLocation;
use envbench_tpch::data::{GenerationOptions, ensure_data, read_manifest, scale_factor_dir};
use envbench_tpch::results::{ExecutionStatus, Phase};
use envbench_tpch::target::{DataFusionTarget, LoadProgress, PostgresOptions, PostgresTarget};
use envbench_tpch::{QueryEvent, RunOptions, Target, TpchError, TpchOutcome, format_scale_factor};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// The directory under `--dir` that holds the generated data, one `sf<SF>` directory per scale factor.
pub const DATA_DIR: &str = "envbench-tpch";

/// Where the queries run, as the user named it.
enum TargetChoice {
    DataFusion,
    Postgres(String),
}

/// Everything the arguments say, checked before anything is created.
struct Plan {
    target: TargetChoice,
    options: RunOptions,
    threads: Option<usize>,
}

fn plan(args: &TpchArgs) -> anyhow::Result<Plan> {
    envbench_tpch::check_scale_factor(args.sf).map_err(|e| usage(format!("--sf {}: {e}", args.sf)))?;
    if args.sets == 0 {
        return Err(usage("--sets must be at least 1"));
    }
    if args.users == Some(0) {
        return Err(usage("--users must be at least 1 (or leave it out for the TPC-H minimum for the scale factor)"));
    }
    if args.threads == Some(0) {
        return Err(usage("--threads must be at least 1"));
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
    let target = match args.target.as_str() {
        "datafusion" => TargetChoice::DataFusion,
        url if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
            TargetChoice::Postgres(url.to_string())
        }
        other => {
            return Err(usage(format!(
                "--target '{}': give datafusion (embedded, the default) or a PostgreSQL URL such as \
                 postgres://user@127.0.0.1:5432/test",
                envbench_core::model::redact_url_password(other)
            )));
        }
    };
    let mut options = RunOptions::new(args.sf);
    options.users = args.users;
    options.sets = args.sets;
    options.validate = args.validate;
    options.seed = args.seed;
    options.query_timeout = query_timeout;
    options.power = !args.throughput_only;
    options.throughput = !args.power_only;
    Ok(Plan { target, options, threads: args.threads })
}

pub fn run(location: &StoreLocation, args: TpchArgs) -> anyhow::Result<ExitCode> {
    let request = run_request("tpch", &args.labels)?;
    let plan = plan(&args)?;
    let quiet = args.json;

    // A PostgreSQL target is reached before anything is stored: a wrong URL or a stopped server is the user's to fix.
    let postgres = match &plan.target {
        TargetChoice::Postgres(url) => {
            let options = PostgresOptions { url: url.clone(), schema: args.schema.clone(), load_threads: plan.threads };
            Some(PostgresTarget::connect(&options).map_err(classify)?)
        }
        TargetChoice::DataFusion => None,
    };
    // The directory whose storage the fingerprint describes and the sampler watches.
    let watched = match (&args.dir, &postgres) {
        (Some(dir), _) => dir.clone(),
        (None, Some(target)) => target.local_data_directory().map(Path::to_path_buf).unwrap_or_else(|| ".".into()),
        (None, None) => PathBuf::from("."),
    };
    if !watched.is_dir() {
        return Err(usage(format!("--dir {}: not a directory; give an existing directory", watched.display())));
    }
    let mut session = RunSession::start(location, &request, &watched, args.sampling.interval()?)?;
    let interrupt = session.interrupt();
    let cache = CacheDropper::new(args.cold, postgres.is_some(), quiet);

    let prepared = match postgres {
        Some(target) => prepare_postgres(target, &args, &session, &interrupt),
        None => prepare_datafusion(&watched, &args, &plan, &session, &interrupt),
    };
    let (target, load, generation) = match prepared {
        Ok(prepared) => prepared,
        Err(error) => {
            let interrupted = matches!(error, TpchError::Interrupted);
            session.finish(&[], Ending::Failed(error.to_string()))?;
            if interrupted {
                return Ok(ExitCode::from(130));
            }
            return Err(classify(error));
        }
    };
    let users = plan.options.users.unwrap_or_else(|| envbench_tpch::default_users(plan.options.scale_factor));
    if !quiet {
        let tests = match (plan.options.power, plan.options.throughput) {
            (true, true) => format!("power test, then throughput test with {users} virtual users"),
            (true, false) => "power test".to_string(),
            _ => format!("throughput test with {users} virtual users"),
        };
        eprintln!(
            "{}: {tests} x {} query set{}, {} parameters{}",
            load.details,
            plan.options.sets,
            if plan.options.sets == 1 { "" } else { "s" },
            if plan.options.validate { "validation".to_string() } else { format!("seed {} random", plan.options.seed) },
            plan.options.query_timeout.map(|t| format!(", query timeout {}", fmt_duration(t))).unwrap_or_default()
        );
    }

    let observer = ColdSteps { inner: session.steps(), cache: &cache };
    let done = AtomicUsize::new(0);
    let total = planned_executions(&plan.options, users, target.refresh_support().is_ok());
    let on_event = |event: &QueryEvent| {
        if event.phase == Phase::Power {
            cache.drop_now();
        }
        let finished = done.fetch_add(1, Ordering::SeqCst) + 1;
        if quiet {
            return;
        }
        let status = match event.status {
            ExecutionStatus::Ok => format!("{:.3} s", event.elapsed_seconds),
            other => status_text(other),
        };
        let who = stream_name(event.phase, event.stream, users);
        if event.status.is_ok() {
            progress(&format!("[{finished}/{total}] {who}: {} {status}", event.what));
        } else {
            progress_line(&format!("[{finished}/{total}] {who}: {} {status}", event.what));
        }
    };
    let outcome = envbench_tpch::run(target.as_ref(), load, &plan.options, &interrupt, &observer, &on_event);
    drop(target);
    if !quiet {
        progress_line("");
    }
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(error) => {
            session.finish(&[], Ending::Failed(error.to_string()))?;
            return Err(classify(error));
        }
    };
    let series = session.stop_sampling().clone();
    let cache_state = cache.state();
    let mut records = outcome.records();
    for record in &mut records {
        if let Some(parameters) = record.parameters.as_object_mut() {
            parameters.insert("cache".into(), json!(cache_state));
        }
    }
    let document = json!({ "outcome": &outcome, "cache": cache_state, "generation": generation });
    if args.json {
        let full = json!({ "run": session.uuid(), "tpch": &document, "sampler": &series });
        println!("{}", serde_json::to_string_pretty(&full)?);
    } else {
        print!("{}", render(&outcome, &series, cache_state));
    }
    session.attach("tpch", &document)?;
    let status = session.finish(&records, Ending::Complete)?;
    Ok(if status != envbench_core::RunStatus::Complete {
        ExitCode::from(130)
    } else if !outcome.failures.is_empty() {
        // Everything is stored; the exit status tells scripts that not every query answered.
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

type Prepared = (Box<dyn Target>, envbench_tpch::target::LoadInfo, Option<serde_json::Value>);

/// Generate (or reuse) the Parquet files and register them with DataFusion.
fn prepare_datafusion(
    dir: &Path,
    args: &TpchArgs,
    plan: &Plan,
    session: &RunSession,
    interrupt: &AtomicBool,
) -> Result<Prepared, TpchError> {
    let quiet = args.json;
    let data_dir = dir.join(DATA_DIR);
    let sf = plan.options.scale_factor;
    let generating = args.fresh || read_manifest(&scale_factor_dir(&data_dir, sf)).ok().flatten().is_none();
    let options = GenerationOptions { data_dir, scale_factor: sf, fresh: args.fresh, threads: plan.threads };
    let on_progress = |p: envbench_tpch::GenerationProgress| {
        if !quiet {
            progress(&format!(
                "generating SF {}: {:>3}% {} rows, {} rows/s",
                format_scale_factor(sf),
                (p.rows_generated * 100 / p.rows_expected.max(1)).min(100),
                count(p.rows_generated as f64),
                count(p.rows_generated as f64 / p.elapsed_seconds.max(1e-9))
            ));
        }
    };
    if generating {
        session.steps().step_started("generate");
    }
    let data = ensure_data(&options, interrupt, &on_progress);
    if generating {
        session.steps().step_finished("generate");
    }
    let data = data?;
    let seconds = data.manifest.generation_ms as f64 / 1e3;
    let generation = json!({
        "reused": data.reused,
        "dir": data.dir,
        "rows": data.total_rows(),
        "bytes": data.total_bytes(),
        "seconds": seconds,
        "rows_per_second": data.total_rows() as f64 / seconds.max(1e-9),
    });
    if !quiet {
        progress_line(&format!(
            "{} SF {}: {} rows, {} of Parquet in {} ({}generated in {seconds:.1} s, {} rows/s)",
            if data.reused { "reusing" } else { "generated" },
            format_scale_factor(sf),
            count(data.total_rows() as f64),
            ByteSize(data.total_bytes()),
            data.dir.display(),
            if data.reused { "earlier " } else { "" },
            count(data.total_rows() as f64 / seconds.max(1e-9))
        ));
    }
    let mut target = DataFusionTarget::new(data, plan.threads)?;
    let load = target.prepare(sf, args.fresh, interrupt, session.steps(), &|_| {})?;
    Ok((Box::new(target), load, Some(generation)))
}

/// Create and load the tables unless a matching load is in place.
fn prepare_postgres(
    mut target: PostgresTarget,
    args: &TpchArgs,
    session: &RunSession,
    interrupt: &AtomicBool,
) -> Result<Prepared, TpchError> {
    let quiet = args.json;
    let started = std::time::Instant::now();
    let on_progress = |p: LoadProgress| {
        if !quiet {
            let seconds = started.elapsed().as_secs_f64().max(1e-9);
            progress(&format!(
                "loading SF {} into PostgreSQL: {:>3}% {} rows, {} rows/s",
                format_scale_factor(args.sf),
                (p.rows_loaded * 100 / p.rows_expected.max(1)).min(100),
                count(p.rows_loaded as f64),
                count(p.rows_loaded as f64 / seconds)
            ));
        }
    };
    let load = target.prepare(args.sf, args.fresh, interrupt, session.steps(), &on_progress)?;
    if !quiet {
        let rows: u64 = load.rows.values().sum();
        progress_line(&format!(
            "{} SF {} in PostgreSQL {}: {} rows{}",
            if load.reused { "reusing the tables of" } else { "loaded" },
            format_scale_factor(args.sf),
            target.server_version(),
            count(rows as f64),
            if load.reused {
                String::new()
            } else {
                format!(" in {:.1} s (COPY, keys, indexes, ANALYZE)", load.load_seconds)
            }
        ));
    }
    Ok((Box::new(target), load, None))
}

fn classify(error: TpchError) -> anyhow::Error {
    match error {
        TpchError::BadScaleFactor(_)
        | TpchError::ForeignFiles { .. }
        | TpchError::BadDatabaseUrl { .. }
        | TpchError::BadOptions(_) => usage(error.to_string()),
        other => other.into(),
    }
}

/// How many queries and refreshes the run will report, for the progress counter.
fn planned_executions(options: &RunOptions, users: usize, refreshes: bool) -> usize {
    let refresh_pairs = usize::from(refreshes);
    let power = if options.power { 22 + 2 * refresh_pairs } else { 0 };
    let throughput = if options.throughput { users * options.sets * (22 + 2 * refresh_pairs) } else { 0 };
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

fn fmt_duration(duration: Duration) -> String {
    envbench_core::units::format_duration(duration)
}

/// Millions and thousands the way a progress line wants them.
fn count(value: f64) -> String {
    if value >= 1e6 {
        format!("{:.2} M", value / 1e6)
    } else if value >= 1e3 {
        format!("{:.1} k", value / 1e3)
    } else {
        format!("{value:.0}")
    }
}

fn status_text(status: &ExecutionStatus) -> String {
    match status {
        ExecutionStatus::Ok => "ok".into(),
        ExecutionStatus::WrongAnswer(why) => format!("WRONG ANSWER: {why}"),
        ExecutionStatus::Failed(failure) => format!("FAILED: {failure}"),
    }
}

/// `--cold`: drops the OS page cache before each power-test query and before the throughput test. Dropping needs
/// root and a writable /proc/sys; without them the run goes on warm, with a warning, and says so in its results.
struct CacheDropper {
    enabled: AtomicBool,
    dropped: AtomicUsize,
    quiet: bool,
}

const DROP_CACHES: &str = "/proc/sys/vm/drop_caches";

impl CacheDropper {
    fn new(cold: bool, postgres: bool, quiet: bool) -> CacheDropper {
        let root = unsafe { libc::geteuid() } == 0;
        let enabled = if !cold {
            false
        } else if !root {
            eprintln!(
                "warning: --cold needs root to drop the page cache; the queries run with warm caches (run as root, or \
                 drop the cache yourself between runs)"
            );
            false
        } else {
            if postgres && !quiet {
                eprintln!(
                    "note: --cold drops this machine's page cache; PostgreSQL's shared_buffers stay warm (restart \
                     the server for a fully cold start), and a server on another machine keeps its own cache"
                );
            }
            true
        };
        CacheDropper { enabled: AtomicBool::new(enabled), dropped: AtomicUsize::new(0), quiet }
    }

    /// Write back dirty pages, then drop the page cache, dentries and inodes.
    fn drop_now(&self) {
        if !self.enabled.load(Ordering::SeqCst) {
            return;
        }
        unsafe { libc::sync() };
        match std::fs::write(DROP_CACHES, "3\n") {
            Ok(()) => {
                self.dropped.fetch_add(1, Ordering::SeqCst);
            }
            Err(error) => {
                if self.enabled.swap(false, Ordering::SeqCst) && !self.quiet {
                    eprintln!(
                        "\nwarning: cannot drop the page cache ({DROP_CACHES}: {error}); the remaining queries run \
                         with warm caches"
                    );
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
    cache: &'a CacheDropper,
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
    let mut whats: Vec<String> = (1..=22).map(|q| format!("Q{q}")).collect();
    if power.is_some_and(|p| !p.refreshes.is_empty()) {
        whats.extend(["RF1".to_string(), "RF2".to_string()]);
    }
    for what in &whats {
        let executions = |stream: &envbench_tpch::results::StreamOutcome| -> Vec<(f64, Option<usize>, bool)> {
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
                    .filter(|r| &r.function == what)
                    .map(|r| (r.elapsed_seconds, None, r.status.is_ok()))
                    .collect()
            }
        };
        let mut all = Vec::new();
        let mut row = vec![what.clone()];
        if let Some(power) = power {
            let runs = executions(power);
            row.push(match runs.first() {
                Some((seconds, _, true)) => format!("{seconds:.3}"),
                Some((_, _, false)) => "failed".into(),
                None => "-".into(),
            });
            all.extend(runs);
        }
        if !throughput.is_empty() {
            let runs: Vec<_> = throughput.iter().flat_map(|s| executions(s)).collect();
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
            out.push_str(&format!("  {stream}, {}: {}\n", failure.what, status_text(&failure.status)));
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
            if outcome.sets == 1 { "" } else { "s" }
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
        let cell = |f: &dyn Fn(&envbench_core::sampler::DiskFigures) -> f64| {
            disk.map(|d| number(f(d))).unwrap_or_else(|| "-".into())
        };
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
