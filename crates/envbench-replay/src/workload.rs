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
    Ending, Envelope, Measured, Plan, Planned, ReadBack, RunContext, Workload, WorkloadError,
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
    /// The database to replay on, of the capture's kind: postgres://user@host:5432/database or
    /// mysql://user@host:3306/database. Every captured session connects to it, read-only: statements that write
    /// are counted and never sent.
    #[arg(long, value_name = "URL")]
    pub target: Option<String>,
    /// The pace: a factor that divides every captured gap (1: as captured, 2: twice as fast), or max (each session
    /// sends its next statement as soon as the last is done).
    #[arg(long, default_value = "1", value_parser = Speed::parse)]
    pub speed: Speed,
    /// Replay only the sessions that worked in this database of the capture (a capture holds every database of the
    /// server); the others' statements are counted and left out.
    #[arg(long, value_name = "NAME")]
    pub database: Option<String>,
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
        let (Some(log), Some(target)) = (args.run.log, args.run.target) else {
            return Err(WorkloadError::usage(
                "give the capture and where to replay it: envbench replay LOG --target URL (or see what a capture \
                 holds first: envbench replay inspect LOG)",
            ));
        };
        let url = DatabaseUrl::parse(&target).map_err(|e| WorkloadError::usage(format!("--target: {}", e.message)))?;
        let mut reader = crate::formats::open(&log).map_err(refused)?;
        let format = reader.format();
        let server = url.dialect().ops().server_name;
        if format.server_name() != server {
            return Err(WorkloadError::usage(format!(
                "{} is a {}, and --target is {server}: replay it on a {} server",
                log.display(),
                format.words(),
                format.server_name()
            )));
        }
        // The whole capture read once before anything connects: a log cut short is refused now.
        let inspection = crate::inspect::inspect(reader.as_mut()).map_err(refused)?;
        if let Some(database) = &args.run.database
            && !inspection.databases.contains_key(database)
        {
            return Err(WorkloadError::usage(format!(
                "--database {database}: the capture holds no statement in it; it holds statements in: {}",
                if inspection.databases.is_empty() {
                    "no named database".to_string()
                } else {
                    inspection.databases.keys().cloned().collect::<Vec<_>>().join(", ")
                }
            )));
        }
        if inspection.statements == 0 {
            return Err(WorkloadError::usage(format!(
                "{}: the capture holds no statement to replay (envbench replay inspect says what it holds)",
                log.display()
            )));
        }
        let mut connection = url.connect("envbench-replay").map_err(|e| WorkloadError::failure(e.to_string()))?;
        let data_dir = envbench_sql::local_data_directory(connection.as_mut(), &url).unwrap_or_else(|| ".".into());
        let options = ReplayOptions { speed: args.run.speed, database: args.run.database };
        Ok(Plan::Run(Box::new(ReplayRun { log, format, url, options, data_dir })))
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
        match (figure("statements_replayed"), figure("lag_p99")) {
            (Some(replayed), Some(lag)) => format!("{replayed:.0} statements replayed, schedule lag p99 {lag:.1} ms"),
            _ => "no statement replayed".to_string(),
        }
    }
}

struct ReplayRun {
    log: PathBuf,
    format: LogFormat,
    url: DatabaseUrl,
    options: ReplayOptions,
    data_dir: PathBuf,
}

impl Planned for ReplayRun {
    fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    fn drives_local_server(&self) -> bool {
        self.url.is_local()
    }

    fn run(self: Box<Self>, context: &RunContext<'_>) -> Result<Box<dyn Measured>, WorkloadError> {
        let mut reader = crate::formats::open(&self.log).map_err(refused)?;
        let url = self.url.clone();
        let connect = || url.connect("envbench-replay");
        context.progress.line(&format!(
            "replaying {} on {} at {}, read-only",
            self.log.display(),
            self.url.shown(),
            self.options.speed.words()
        ));
        context.steps.step_started("replay");
        let outcome = crate::replay::replay(reader.as_mut(), &connect, &self.options, context.interrupt);
        context.steps.step_finished("replay");
        let outcome = outcome.map_err(refused)?;
        Ok(Box::new(ReplayMeasured {
            log: self.log.display().to_string(),
            format: self.format,
            target: self.url.shown(),
            database: self.options.database.clone(),
            outcome,
        }))
    }
}

struct ReplayMeasured {
    log: String,
    format: LogFormat,
    target: String,
    database: Option<String>,
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
            "database": self.database,
            "read_only": true,
        })
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
        if let Some(error) = &o.connect_error {
            warnings.push(format!(
                "{} session{} could not connect: {error}",
                o.connect_failures,
                plural(o.connect_failures as usize)
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
    out.push_str(&format!(
        "fidelity: {} statements replayed, {} writes skipped (read-only), {} failed, {} not replayable{}; schedule \
         lag p99 {:.1} ms (max {:.1} ms); {} sessions, at most {} at once ({} captured); {:.1} s captured, {:.1} s \
         replayed{}\n",
        o.replayed,
        o.skipped_writes,
        o.failed,
        o.not_replayable,
        match &measured.database {
            Some(database) => format!(", {} of databases other than {database} left out", o.other_databases),
            None => String::new(),
        },
        o.lag_p99_ms,
        o.lag_max_ms,
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
}
