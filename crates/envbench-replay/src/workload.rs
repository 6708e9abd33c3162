//! `envbench replay` as the driver runs it: `replay inspect LOG` answers at once; `replay LOG --target URL` replays
//! the capture read-only on the target, stored with its environment like every run, each fingerprint a test.

use crate::formats::LogFormat;
use crate::replay::{ReplayOptions, ReplayOutcome, Speed};
use clap::{Args, FromArgMatches, Subcommand};
use envbench_core::model::{Direction, RecordSource, ResultRecord, StoredRun};
use envbench_core::sampler::SamplerSeries;
use envbench_core::stats::Summary;
use envbench_core::text::{Align, Table, plural};
use envbench_core::workload::{
    Ending, Envelope, Measured, Plan, Planned, ReadBack, RunContext, Timeline, Workload, WorkloadError,
};
use envbench_sql::DatabaseUrl;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The workload's name, and the version within which its results compare.
pub const WORKLOAD: &str = "replay";
pub const WORKLOAD_VERSION: u32 = 1;

/// The test a replay's fidelity is stored under, beside one test per fingerprint.
pub const FIDELITY_TEST: &str = "replay fidelity";

/// The test of every statement together, the workload's headline: every call's response time.
pub const ALL_TEST: &str = "all statements";

/// The longest fingerprint kept as a test's name; a longer one is cut and told apart by its hash.
const TEST_ID_LIMIT: usize = 200;

/// A schedule lag p99 beyond this says the replay did not keep the captured pace.
const BEHIND_MS: f64 = 10.0;

/// The arguments of `envbench replay`.
#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ReplayArgs {
    #[command(subcommand)]
    pub action: Option<ReplayAction>,
    #[command(flatten)]
    pub run: ReplayRunArgs,
}

#[derive(Subcommand, Debug)]
pub enum ReplayAction {
    /// Summarise a capture: its span, sessions and peak concurrency, statements by what they do (reads, writes,
    /// transaction control), what cannot be replayed and why, and the statements that run most, by fingerprint.
    Inspect(InspectArgs),
}

#[derive(Args, Debug)]
pub struct InspectArgs {
    /// The server's log: a PostgreSQL csvlog, jsonlog or stderr log (log_line_prefix = '%m|%u|%d|%c|'), or a
    /// MariaDB/MySQL general or slow query log file (docs/replay.md says which settings write one).
    #[arg(value_name = "LOG")]
    pub log: PathBuf,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct ReplayRunArgs {
    /// The capture to replay: a server's log, as `replay inspect` reads it.
    #[arg(value_name = "LOG")]
    pub log: Option<PathBuf>,
    /// Where to replay, a server of the capture's kind: URL (postgres://user@host:5432/database or
    /// mysql://user@host:3306/database), which every captured session connects to; or NAME=URL, which the sessions
    /// of captured database NAME connect to (give one for each database, and a plain URL for the rest, or leave them
    /// out). Every session is read-only unless --allow-writes.
    #[arg(long, value_name = "[NAME=]URL")]
    pub target: Vec<String>,
    /// The pace: a factor that divides every captured gap (1: as captured, 2: twice as fast), or max (each session
    /// sends its next statement as soon as the last is done).
    #[arg(long, default_value = "1", value_parser = Speed::parse)]
    pub speed: Speed,
    /// Replay only the sessions that worked in this database of the capture (a capture holds every database of the
    /// server); the others' statements are counted and left out. The same as --target NAME=URL.
    #[arg(long, value_name = "NAME")]
    pub database: Option<String>,
    /// Send the captured statements that write too (INSERT, UPDATE, DELETE, DDL), on sessions that are not made
    /// read-only: the target's data changes. Needs --source, and is refused on the capture's own server.
    #[arg(long, requires = "source")]
    pub allow_writes: bool,
    /// The server the capture came from, asked only what it is (PostgreSQL's system identifier and start, MariaDB's
    /// host, data directory, port and start), so --allow-writes never writes there.
    #[arg(long, value_name = "URL", requires = "allow_writes")]
    pub source: Option<String>,
}

/// One place a replay's statements go: the captured database it takes (`None`: every database no other takes).
#[derive(Clone, Debug)]
struct Target {
    database: Option<String>,
    url: DatabaseUrl,
}

impl Target {
    /// `URL` or `NAME=URL` (a NAME holds no `://`, so a URL's own `=` is never taken for one).
    fn parse(text: &str) -> Result<Target, WorkloadError> {
        let (database, url) = match text.split_once('=') {
            Some((name, url)) if !name.is_empty() && !name.contains("://") => (Some(name.to_string()), url),
            _ => (None, text),
        };
        let url =
            DatabaseUrl::parse(url).map_err(|e| WorkloadError::usage(format!("--target {text}: {}", e.message)))?;
        Ok(Target { database, url })
    }

    fn shown(&self) -> String {
        match &self.database {
            Some(database) => format!("{database}={}", self.url.shown()),
            None => self.url.shown(),
        }
    }
}

/// The targets of `args`, each of the capture's server, each database at most once.
fn targets(args: &ReplayRunArgs, log: &Path, format: LogFormat) -> Result<Vec<Target>, WorkloadError> {
    let mut targets = args.target.iter().map(|t| Target::parse(t)).collect::<Result<Vec<_>, _>>()?;
    if let Some(database) = &args.database {
        if targets.len() != 1 || targets[0].database.is_some() {
            return Err(WorkloadError::usage(
                "--database NAME goes with one --target URL; to replay several databases, give --target NAME=URL \
                 for each instead",
            ));
        }
        targets[0].database = Some(database.clone());
    }
    for (i, target) in targets.iter().enumerate() {
        if let Some(earlier) = targets[..i].iter().find(|t| t.database == target.database) {
            return Err(WorkloadError::usage(match &target.database {
                Some(database) => {
                    format!("--target {database}=... is given twice ({} and {})", earlier.shown(), target.shown())
                }
                None => format!(
                    "two --target URLs take every database ({} and {}); name the database each takes with \
                     --target NAME=URL",
                    earlier.shown(),
                    target.shown()
                ),
            }));
        }
        let server = target.url.dialect().ops().server_name;
        if format.server_name() != server {
            return Err(WorkloadError::usage(format!(
                "{} is a {}, and --target {} is {server}: replay it on a {} server",
                log.display(),
                format.words(),
                target.shown(),
                format.server_name()
            )));
        }
    }
    Ok(targets)
}

/// `--allow-writes` only where the capture did not come from: the source's identity against each target's, and
/// the log against the files each local target writes.
fn refuse_the_source(source: &str, targets: &[Target], log: &Path) -> Result<(), WorkloadError> {
    use std::os::unix::fs::MetadataExt;
    let source_url =
        DatabaseUrl::parse(source).map_err(|e| WorkloadError::usage(format!("--source {source}: {}", e.message)))?;
    let identify = |url: &DatabaseUrl,
                    option: &str|
     -> Result<(Box<dyn envbench_sql::Connection>, envbench_sql::ServerIdentity), WorkloadError> {
        let mut connection = url.connect("envbench-replay").map_err(|e| {
            WorkloadError::failure(format!(
                "{option} {}: {e} (--allow-writes asks each server what it is)",
                url.shown()
            ))
        })?;
        let identity = url.dialect().server().identity(connection.as_mut()).map_err(|e| {
            WorkloadError::failure(format!("{option} {}: could not tell which server it is: {e}", url.shown()))
        })?;
        let identity = identity.ok_or_else(|| {
            WorkloadError::usage(format!("{option} {}: an embedded database is no captured server", url.shown()))
        })?;
        Ok((connection, identity))
    };
    let (_source_connection, source_identity) = identify(&source_url, "--source")?;
    let log_file = std::fs::metadata(log).ok().map(|m| (m.dev(), m.ino()));
    for target in targets {
        let (mut connection, identity) = identify(&target.url, "--target")?;
        if identity.same_server(&source_identity) {
            return Err(WorkloadError::usage(format!(
                "--allow-writes: --target {} is the server the capture came from ({}): its writes would change the \
                 data they came from a second time. Replay writes on a copy of it (a clone or a restored backup, \
                 started apart), or replay here read-only, without --allow-writes",
                target.shown(),
                identity.words
            )));
        }
        if target.url.is_local()
            && let Some(log_file) = log_file
        {
            let writes = target.url.dialect().server().log_files(connection.as_mut());
            if writes.iter().filter_map(|f| std::fs::metadata(f).ok()).any(|m| (m.dev(), m.ino()) == log_file) {
                return Err(WorkloadError::usage(format!(
                    "--allow-writes: --target {} writes {} itself, so it is the server the capture came from, \
                     whatever --source says: replay writes on a copy of it, or replay here read-only, without \
                     --allow-writes",
                    target.shown(),
                    log.display()
                )));
            }
        }
    }
    Ok(())
}

/// Your own workload.
pub struct ReplayWorkload;

/// The registration of `replay`.
pub static REPLAY: ReplayWorkload = ReplayWorkload;

fn refused(error: crate::capture::CaptureError) -> WorkloadError {
    match error {
        crate::capture::CaptureError::Io { ref source, .. } if source.kind() != std::io::ErrorKind::NotFound => {
            WorkloadError::failure(error.to_string())
        }
        other => WorkloadError::usage(other.to_string()),
    }
}

impl LogFormat {
    /// The server that writes this log, by the name its dialect's row gives it.
    pub fn server_name(self) -> &'static str {
        if self.is_postgres() { "PostgreSQL" } else { "MySQL/MariaDB" }
    }
}

impl Workload for ReplayWorkload {
    fn name(&self) -> &'static str {
        WORKLOAD
    }

    fn version(&self) -> u32 {
        WORKLOAD_VERSION
    }

    fn command(&self) -> clap::Command {
        ReplayArgs::augment_args(clap::Command::new(WORKLOAD)).about(
            "Your own workload: a PostgreSQL or MariaDB/MySQL server's log replayed read-only on another host at its \
             captured pace, each statement timed; or `replay inspect LOG` to see what a capture holds.",
        )
    }

    fn plan(&self, matches: &clap::ArgMatches) -> Result<Plan, WorkloadError> {
        let args = ReplayArgs::from_arg_matches(matches).map_err(|e| WorkloadError::usage(e.to_string()))?;
        if let Some(ReplayAction::Inspect(inspect)) = args.action {
            let mut reader = crate::formats::open(&inspect.log).map_err(refused)?;
            let inspection = crate::inspect::inspect(reader.as_mut()).map_err(refused)?;
            let shown = inspect.log.display().to_string();
            return Ok(Plan::Answer(if inspect.json {
                let mut value = serde_json::to_value(&inspection).map_err(|e| WorkloadError::failure(e.to_string()))?;
                value["log"] = Value::String(shown);
                format!("{}\n", serde_json::to_string_pretty(&value).unwrap_or_default())
            } else {
                inspection.render(&shown)
            }));
        }
        let Some(log) = args.run.log.clone().filter(|_| !args.run.target.is_empty()) else {
            return Err(WorkloadError::usage(
                "give the capture and where to replay it: envbench replay LOG --target URL (or see what a capture \
                 holds first: envbench replay inspect LOG)",
            ));
        };
        let bytes = crate::formats::length_now(&log).map_err(refused)?;
        let mut reader = crate::formats::open_first(&log, Some(bytes)).map_err(refused)?;
        let format = reader.format();
        let targets = targets(&args.run, &log, format)?;
        // The whole capture read once before anything connects: a log cut short is refused now.
        let survey = crate::inspect::survey(reader.as_mut()).map_err(refused)?;
        for database in targets.iter().filter_map(|t| t.database.as_ref()) {
            if !survey.databases.contains_key(database) {
                return Err(WorkloadError::usage(format!(
                    "--target {database}=...: the capture holds no statement in database {database}; it holds \
                     statements in: {}",
                    if survey.databases.is_empty() {
                        "no named database".to_string()
                    } else {
                        survey.databases.keys().cloned().collect::<Vec<_>>().join(", ")
                    }
                )));
            }
        }
        if survey.statements == 0 {
            return Err(WorkloadError::usage(format!(
                "{}: the capture holds no statement to replay (envbench replay inspect says what it holds)",
                log.display()
            )));
        }
        if args.run.allow_writes {
            let source = args.run.source.as_deref().unwrap_or_default();
            refuse_the_source(source, &targets, &log)?;
        }
        let mut data_dir = None;
        for target in &targets {
            let mut connection = target
                .url
                .connect("envbench-replay")
                .map_err(|e| WorkloadError::failure(format!("--target {}: {e}", target.shown())))?;
            if data_dir.is_none() {
                data_dir = envbench_sql::local_data_directory(connection.as_mut(), &target.url);
            }
        }
        let options = ReplayOptions {
            speed: args.run.speed,
            routes: targets.iter().map(|t| t.database.clone()).collect(),
            allow_writes: args.run.allow_writes,
        };
        Ok(Plan::Run(Box::new(ReplayRun {
            log,
            bytes,
            format,
            targets,
            options,
            data_dir: data_dir.unwrap_or_else(|| ".".into()),
        })))
    }
}

impl ReadBack for ReplayWorkload {
    fn title(&self) -> Option<&'static str> {
        Some("your own workload")
    }

    fn tests_word(&self) -> &'static str {
        "per statement"
    }

    /// The workload as a whole is every call's response time together, so a statement weighs as much as it ran;
    /// each statement compares on its own too, and the slowest are named.
    fn headline_metrics(&self) -> &'static [&'static str] {
        &["statement_time"]
    }

    fn slower_tests_named(&self) -> Option<(&'static str, usize)> {
        Some(("response_time", 5))
    }

    fn headline(&self, run: &StoredRun) -> String {
        let figure = |metric: &str| {
            run.results
                .iter()
                .find(|r| r.record.test_id == FIDELITY_TEST && r.record.metric == metric)
                .and_then(|r| r.record.samples.first().copied())
        };
        let Some(replayed) = figure("statements_replayed") else { return "no statement replayed".to_string() };
        let mut parts = vec![format!("{replayed:.0} statements replayed")];
        match (figure("writes_replayed"), figure("writes_skipped")) {
            (Some(sent), _) if sent > 0.0 => parts.push(format!("{sent:.0} writes replayed (--allow-writes)")),
            (_, Some(skipped)) => parts.push(format!("{skipped:.0} writes skipped (read-only)")),
            _ => {}
        }
        parts.push(format!("{:.0} failed", figure("statements_failed").unwrap_or(0.0)));
        if let Some(lag) = figure("lag_p99") {
            parts.push(format!("schedule lag p99 {lag:.1} ms"));
        }
        parts.join(", ")
    }

    /// The sessions open over time as captured and as replayed: where a replay did not keep its capture's load.
    fn timelines(&self, run: &StoredRun) -> Vec<Timeline> {
        let Some(concurrency) = run.attachments.get(WORKLOAD).map(|a| &a["outcome"]["concurrency"]) else {
            return Vec::new();
        };
        let interval = concurrency["interval_seconds"].as_f64().unwrap_or(1.0);
        let line = |name: &str| {
            let points: Vec<(f64, f64)> = concurrency[name]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
                .filter_map(|(i, n)| Some(((i + 1) as f64 * interval, n.as_f64()?)))
                .collect();
            (format!("as {name}"), points)
        };
        vec![Timeline {
            subject: None,
            y_label: "sessions open at most".into(),
            x_label: format!("seconds of the replay's schedule (intervals of {interval:.0} s)"),
            // At --speed max nothing is captured on the replay's schedule: no line of it.
            lines: [line("captured"), line("replayed")].into_iter().filter(|(_, points)| !points.is_empty()).collect(),
            marks: Vec::new(),
            higher_is_better: false,
            note: Some(
                "The most sessions open in each interval, as captured (on the replay's schedule) and as replayed: \
                 where the replayed line is below, the target saw a lighter load than the capture. At --speed max \
                 there is no schedule, so only the replay's line."
                    .into(),
            ),
        }]
    }
}

struct ReplayRun {
    log: PathBuf,
    /// The log's length when the replay was planned: what is replayed.
    bytes: u64,
    format: LogFormat,
    targets: Vec<Target>,
    options: ReplayOptions,
    data_dir: PathBuf,
}

impl Planned for ReplayRun {
    fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    fn drives_local_server(&self) -> bool {
        self.targets.iter().any(|t| t.url.is_local())
    }

    fn run(self: Box<Self>, context: &RunContext<'_>) -> Result<Box<dyn Measured>, WorkloadError> {
        let mut reader = crate::formats::open_first(&self.log, Some(self.bytes)).map_err(refused)?;
        let targets = &self.targets;
        let connect = |i: usize| targets[i].url.connect("envbench-replay");
        let shown: Vec<String> = targets.iter().map(Target::shown).collect();
        context.progress.line(&format!(
            "replaying {} on {} at {}, {}",
            self.log.display(),
            shown.join(", "),
            self.options.speed.words(),
            if self.options.allow_writes { "writes too (--allow-writes)" } else { "read-only" }
        ));
        context.steps.step_started("replay");
        let outcome = crate::replay::replay(reader.as_mut(), &connect, &self.options, context.interrupt);
        context.steps.step_finished("replay");
        let outcome = outcome.map_err(refused)?;
        Ok(Box::new(ReplayMeasured {
            log: self.log.display().to_string(),
            format: self.format,
            target: shown.join(", "),
            routes: self.options.routes.clone(),
            outcome,
        }))
    }
}

struct ReplayMeasured {
    log: String,
    format: LogFormat,
    target: String,
    routes: Vec<Option<String>>,
    outcome: ReplayOutcome,
}

/// A fingerprint as a test's name: itself, or cut with its hash when longer than [`TEST_ID_LIMIT`].
fn test_id(fingerprint: &str) -> String {
    if fingerprint.chars().count() <= TEST_ID_LIMIT {
        return fingerprint.to_string();
    }
    let hash = envbench_core::model::sha256_hex(fingerprint.as_bytes());
    let cut: String = fingerprint.chars().take(TEST_ID_LIMIT - 16).collect();
    format!("{cut}… #{}", &hash[..12])
}

impl ReplayMeasured {
    /// What a replay is a replay of: results compare only between replays of one capture at one pace.
    fn parameters(&self) -> Value {
        json!({
            "capture": { "format": self.format, "first_at_us": self.outcome.first_at, "statements": self.outcome.captured_statements },
            "speed": self.outcome.speed.words(),
            "databases": self.routes,
            "read_only": !self.outcome.writes_replayed,
        })
    }
}

impl ReplayMeasured {
    /// The writes sent to the target: none unless writes were allowed.
    fn writes_sent(&self) -> u64 {
        self.outcome
            .fingerprints
            .iter()
            .filter(|f| f.kind == crate::classify::StatementKind::Write)
            .map(|f| f.calls)
            .sum()
    }
}

impl Measured for ReplayMeasured {
    fn records(&self, _series: &SamplerSeries) -> Vec<ResultRecord> {
        let source = RecordSource { workload: WORKLOAD, version: WORKLOAD_VERSION };
        let parameters = self.parameters();
        let mut records: Vec<ResultRecord> = self
            .outcome
            .fingerprints
            .iter()
            .filter(|f| !f.response_ms.is_empty())
            .map(|f| {
                let mut parameters = parameters.clone();
                parameters["kind"] = json!(f.kind);
                source.record(
                    test_id(&f.fingerprint),
                    &parameters,
                    "response_time",
                    "ms",
                    Direction::LowerIsBetter,
                    f.response_ms.clone(),
                )
            })
            .collect();
        let all: Vec<f64> = self.outcome.fingerprints.iter().flat_map(|f| f.response_ms.iter().copied()).collect();
        if !all.is_empty() {
            records.push(source.record(ALL_TEST, &parameters, "statement_time", "ms", Direction::LowerIsBetter, all));
        }
        let o = &self.outcome;
        for (metric, unit, direction, value) in [
            ("statements_replayed", "statements", Direction::HigherIsBetter, o.replayed as f64),
            ("statements_failed", "statements", Direction::LowerIsBetter, o.failed as f64),
            ("writes_skipped", "statements", Direction::LowerIsBetter, o.skipped_writes as f64),
            ("writes_replayed", "statements", Direction::HigherIsBetter, self.writes_sent() as f64),
            ("statements_not_connected", "statements", Direction::LowerIsBetter, o.not_connected as f64),
            ("statements_late", "statements", Direction::LowerIsBetter, o.late as f64),
            ("lag_p99", "ms", Direction::LowerIsBetter, o.lag_p99_ms),
            ("replayed_seconds", "s", Direction::LowerIsBetter, o.replayed_seconds),
        ] {
            records.push(source.record(FIDELITY_TEST, &parameters, metric, unit, direction, vec![value]));
        }
        records
    }

    fn attachment(&self) -> Option<Value> {
        let mut outcome = serde_json::to_value(&self.outcome).ok()?;
        // Every call's time is in the results; the attachment keeps the rest.
        for fingerprint in outcome["fingerprints"].as_array_mut().into_iter().flatten() {
            fingerprint.as_object_mut().map(|f| f.remove("response_ms"));
        }
        Some(json!({ "log": self.log, "target": self.target, "outcome": outcome }))
    }

    fn json(&self, envelope: &Envelope<'_>) -> Value {
        envelope.wrap([("replay", self.attachment().unwrap_or(Value::Null))])
    }

    fn render(&self, _series: &SamplerSeries) -> String {
        render(self)
    }

    fn warnings(&self, _series: &SamplerSeries) -> Vec<String> {
        let o = &self.outcome;
        let mut warnings = Vec::new();
        if o.lag_p99_ms > BEHIND_MS {
            warnings.push(format!(
                "the replay fell behind its schedule: lag p99 {:.1} ms (max {:.1} ms), so its response times include \
                 waiting for the target or this host; replay at a lower --speed, or read them as a closed loop",
                o.lag_p99_ms, o.lag_max_ms
            ));
        }
        let short = o.concurrency.short_intervals();
        if short * 10 >= o.concurrency.captured.len().max(1) && short > 0 {
            warnings.push(format!(
                "the replay held fewer sessions open than the capture in {short} of {} intervals of {:.0} s: the \
                 target or this host did not open them as fast, so the load it saw was lighter than captured",
                o.concurrency.captured.len(),
                o.concurrency.interval_seconds
            ));
        }
        if let Some(error) = &o.connect_error {
            warnings.push(format!(
                "{} session{} could not connect, so {} statement{} were not sent: {error}",
                o.connect_failures,
                plural(o.connect_failures as usize),
                o.not_connected,
                plural(o.not_connected as usize)
            ));
        }
        warnings
    }

    fn ending(&self) -> Ending {
        let o = &self.outcome;
        // No session connected, though some tried: nothing was replayed.
        if o.connect_failures > 0 && o.replayed_peak == 0 {
            return Ending::Failed(o.connect_error.clone().unwrap_or_else(|| "no session could connect".into()));
        }
        if o.failed == 0 {
            return Ending::Complete;
        }
        let mut kinds: std::collections::BTreeMap<&str, u64> = Default::default();
        for fingerprint in &o.fingerprints {
            for (kind, count) in &fingerprint.errors {
                *kinds.entry(kind).or_default() += count;
            }
        }
        let kinds: Vec<String> = kinds.iter().map(|(kind, n)| format!("{n} {kind}")).collect();
        Ending::CompleteWithFailures(format!(
            "{} statement{} failed on the target ({})",
            o.failed,
            plural(o.failed as usize),
            kinds.join(", ")
        ))
    }
}

fn render(measured: &ReplayMeasured) -> String {
    use Align::{Left, Right};
    let o = &measured.outcome;
    let mut out = format!(
        "replay of {} ({}) on {} at {}\n",
        measured.log,
        measured.format.words(),
        measured.target,
        o.speed.words()
    );
    let writes = if o.writes_replayed {
        format!("{} writes replayed (--allow-writes)", measured.writes_sent())
    } else {
        format!("{} writes skipped (read-only)", o.skipped_writes)
    };
    let left_out = if measured.routes.iter().any(Option::is_none) {
        String::new()
    } else {
        let names: Vec<&str> = measured.routes.iter().flatten().map(String::as_str).collect();
        format!(", {} of databases other than {} left out", o.other_databases, names.join(", "))
    };
    let not_connected = if o.not_connected > 0 {
        format!(", {} not sent (their session could not connect)", o.not_connected)
    } else {
        String::new()
    };
    let short = o.concurrency.short_intervals();
    let concurrency = if o.concurrency.captured.is_empty() {
        String::new()
    } else if short == 0 {
        format!("; as many sessions as captured in every interval of {:.0} s", o.concurrency.interval_seconds)
    } else {
        format!(
            "; fewer sessions than captured in {short} of {} intervals of {:.0} s",
            o.concurrency.captured.len(),
            o.concurrency.interval_seconds
        )
    };
    let schedule = match o.speed {
        Speed::Max => "closed loop, no schedule (--speed max)".to_string(),
        Speed::Factor(_) => format!(
            "schedule lag p99 {:.1} ms (max {:.1} ms), {} late over {} ms",
            o.lag_p99_ms,
            o.lag_max_ms,
            o.late,
            envbench_base::wait::LATE_AFTER.as_millis()
        ),
    };
    out.push_str(&format!(
        "fidelity: {} statements replayed, {writes}, {} failed, {} not replayable{left_out}{not_connected}; \
         {schedule}; {} sessions, at most {} at once ({} captured){concurrency}; {:.1} s captured, {:.1} s \
         replayed{}\n",
        o.replayed,
        o.failed,
        o.not_replayable,
        o.sessions,
        o.replayed_peak,
        o.captured_peak,
        o.captured_seconds,
        o.replayed_seconds,
        if o.interrupted { "; interrupted" } else { "" }
    ));
    // Each sent statement with its total time, the most time first.
    let mut fingerprints: Vec<(&crate::replay::FingerprintOutcome, f64)> = o
        .fingerprints
        .iter()
        .filter(|f| !f.response_ms.is_empty())
        .map(|f| (f, f.response_ms.iter().sum::<f64>()))
        .collect();
    fingerprints.sort_by(|a, b| b.1.total_cmp(&a.1));
    let total_ms: f64 = fingerprints.iter().map(|(_, sum)| sum).sum();
    let mut table = Table::new(
        &[
            "STATEMENT",
            "CALLS",
            "ERRORS",
            "P50 ms",
            "P95 ms",
            "P99 ms",
            "TOTAL s",
            "SHARE",
            "SERVICE ms",
            "CAPTURED ms",
        ],
        &[Left, Right, Right, Right, Right, Right, Right, Right, Right, Right],
    );
    for &(f, sum) in fingerprints.iter().take(20) {
        let summary = Summary::of(&f.response_ms);
        let mut sorted = f.response_ms.clone();
        sorted.sort_by(f64::total_cmp);
        let quantile = |q: f64| format!("{:.2}", sorted[((sorted.len() as f64 - 1.0) * q).round() as usize]);
        let errors: u64 = f.errors.values().sum();
        table.row(vec![
            crate::capture::shortened(&f.fingerprint, 60),
            f.calls.to_string(),
            errors.to_string(),
            summary.map_or("-".into(), |s| format!("{:.2}", s.median)),
            quantile(0.95),
            quantile(0.99),
            format!("{:.3}", sum / 1e3),
            format!("{:.1}%", if total_ms > 0.0 { 100.0 * sum / total_ms } else { 0.0 }),
            format!("{:.3}", f.service_ms / f.calls.max(1) as f64),
            if f.captured_timed > 0 { format!("{:.3}", f.captured_ms / f.captured_timed as f64) } else { "-".into() },
        ]);
    }
    out.push_str(&table.render());
    if fingerprints.len() > 20 {
        out.push_str(&format!("({} more statements in the stored results)\n", fingerprints.len() - 20));
    }
    out.push_str("SERVICE is the mean time from the send, CAPTURED the server's own mean time in the capture.\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_log_names_a_server_by_its_rows_name() {
        for format in [LogFormat::PostgresCsv, LogFormat::PostgresJson, LogFormat::PostgresStderr] {
            assert_eq!(format.server_name(), envbench_sql::Dialect::Postgres.ops().server_name);
        }
        for format in [LogFormat::MySqlGeneral, LogFormat::MySqlSlow] {
            assert_eq!(format.server_name(), envbench_sql::Dialect::MySql.ops().server_name);
        }
        let long = "select ".to_string() + &"a, ".repeat(100) + "b from t";
        assert!(test_id(&long).chars().count() <= TEST_ID_LIMIT, "{}", test_id(&long));
        assert_ne!(test_id(&long), test_id(&(long.clone() + " where x = $1")));
    }

    #[test]
    fn a_target_names_its_database_before_an_equals_sign_a_url_never_does() {
        let named = Target::parse("sales=postgres://u@h:5432/copy").unwrap();
        assert_eq!((named.database.as_deref(), named.url.shown()), (Some("sales"), "postgres://u@h:5432/copy".into()));
        let plain = Target::parse("postgres://u@h:5432/copy?sslmode=disable").unwrap();
        assert_eq!(plain.database, None, "a URL's own '=' names no database");
        assert!(Target::parse("=postgres://u@h/copy").is_err(), "an empty name is no URL either");
        let error = Target::parse("sales=nonsense").err().unwrap();
        assert!(error.to_string().contains("--target sales=nonsense"), "{error}");
    }
}
