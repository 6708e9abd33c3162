//! The run and result model: what a workload produces and what the store keeps.
//!
//! A run is one invocation of a workload command in one environment. It holds results; each result is one metric of
//! one test with its parameters, and every raw sample (one per measured repetition). Results match across runs only
//! when workload, workload version, test id and the hash of the canonical parameters all match.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// The most `--tag`s a run carries: the command line's bound, and the results service's for an upload.
pub const MAX_TAGS: usize = 64;

/// Whether a larger or a smaller value of a metric is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Throughput, IOPS, queries per hour.
    HigherIsBetter,
    /// Latency, elapsed time.
    LowerIsBetter,
}

impl Direction {
    /// The short name used in the store and exports.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::HigherIsBetter => "higher",
            Direction::LowerIsBetter => "lower",
        }
    }

    /// Parse the short name written by [`Direction::as_str`].
    pub fn parse(text: &str) -> Option<Direction> {
        match text {
            "higher" => Some(Direction::HigherIsBetter),
            "lower" => Some(Direction::LowerIsBetter),
            _ => None,
        }
    }
}

/// What a metric measures, which decides the words a change takes: only times and rates get a speed factor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MetricKind {
    /// A time (s, ms, us) or a rate (MB/s, IOPS, TPM, NOPM, QphH...): `1.50x faster`, `8% slower`.
    Speed,
    /// A spread such as a coefficient of variation: `2.1x less variable`.
    Dispersion,
    /// Anything else (counts, ratios, speedups): `12% better`, `1.50x worse`.
    Other,
}

/// The kind of a metric, from its name and unit: a name ending in `cv` (or `stddev`) is a dispersion, a unit of
/// time or a unit per second, minute or hour is a speed.
pub fn metric_kind(metric: &str, unit: &str) -> MetricKind {
    if metric == "cv" || metric.ends_with("_cv") || metric.ends_with("stddev") {
        return MetricKind::Dispersion;
    }
    let rate = unit.contains("/s") || unit.contains("/min") || unit.contains("/h");
    let named = ["IOPS", "TPM", "NOPM", "TPS", "QPS", "QphH", "qph", "MB/s", "GB/s", "KiB/s", "MiB/s"];
    let time = ["s", "ms", "us", "µs", "ns", "min", "h"];
    if rate || named.iter().any(|n| unit.eq_ignore_ascii_case(n)) || time.contains(&unit) {
        MetricKind::Speed
    } else {
        MetricKind::Other
    }
}

/// How a run ended. A run starts as `Running` and moves once to one of the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Running,
    Complete,
    Failed,
    Interrupted,
}

impl RunStatus {
    /// The name used in the store and shown to users.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Complete => "complete",
            RunStatus::Failed => "failed",
            RunStatus::Interrupted => "interrupted",
        }
    }

    /// Parse the name written by [`RunStatus::as_str`].
    pub fn parse(text: &str) -> Option<RunStatus> {
        match text {
            "running" => Some(RunStatus::Running),
            "complete" => Some(RunStatus::Complete),
            "failed" => Some(RunStatus::Failed),
            "interrupted" => Some(RunStatus::Interrupted),
            _ => None,
        }
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the user said about a run before it started: its name in their methodology and how it was invoked.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunRequest {
    /// The workload command, e.g. `disk`, `ranread`, `sysinfo`.
    pub workload: String,
    /// Free-form label, e.g. `physical-p3605`.
    pub label: Option<String>,
    /// `--tag key=value` pairs, sorted by key.
    pub tags: BTreeMap<String, String>,
    /// The command line as typed.
    pub command_line: String,
    /// The suite this run belongs to, when several runs form one invocation.
    pub suite_id: Option<String>,
}

/// One run as listed: who ran what, where, when, and how it ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub uuid: String,
    pub workload: String,
    pub label: Option<String>,
    pub tags: BTreeMap<String, String>,
    pub host: Option<String>,
    pub started_at: String,
    pub ended_at: Option<String>,
    pub status: RunStatus,
    pub status_reason: Option<String>,
    pub result_count: usize,
    pub suite_id: Option<String>,
    /// Other work disturbed the run: its results carry [`crate::sampler::DISTURBED_FLAG`].
    #[serde(default)]
    pub disturbed: bool,
    /// Who uploaded the run to the results service that keeps it (the name of the token it came with); none for a
    /// run made or imported where it is kept. Set by the store, never by the run itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submitter: Option<String>,
}

/// A result as stored: the record plus the parameter hash it is matched by.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredResult {
    #[serde(flatten)]
    pub record: ResultRecord,
    pub parameters_hash: String,
}

/// Everything kept about one run: what the store gives back, and what the report, the scorecard and each workload's
/// own views read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredRun {
    #[serde(flatten)]
    pub summary: RunSummary,
    pub command_line: String,
    pub tool_version: String,
    pub fingerprint_hash: String,
    pub fingerprint: crate::fingerprint::Fingerprint,
    pub results: Vec<StoredResult>,
    pub series: Option<crate::sampler::SamplerSeries>,
    pub attachments: BTreeMap<String, Value>,
}

impl StoredRun {
    /// The first result of a test and metric.
    pub fn result(&self, test_id: &str, metric: &str) -> Option<&ResultRecord> {
        self.results.iter().map(|r| &r.record).find(|r| r.test_id == test_id && r.metric == metric)
    }

    /// The median of the samples of a test and metric.
    pub fn median(&self, test_id: &str, metric: &str) -> Option<f64> {
        self.summary(test_id, metric).map(|s| s.median)
    }

    /// The summary (mean, median, min, max...) of the samples of a test and metric.
    pub fn summary(&self, test_id: &str, metric: &str) -> Option<crate::stats::Summary> {
        self.result(test_id, metric).and_then(|r| crate::stats::Summary::of(&r.samples))
    }
}

/// Parse one `--tag key=value` argument. Keys are non-empty and have no `=`; values may be empty.
pub fn parse_tag(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.trim().is_empty() => Ok((key.trim().to_string(), value.trim().to_string())),
        _ => Err(format!("'{text}' is not a tag: write key=value, e.g. --tag storage=nvme")),
    }
}

/// One metric of one test, with every raw sample.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResultRecord {
    /// The workload that produced it, e.g. `disk`.
    pub workload: String,
    /// Bumped when a workload changes in a way that makes old results incomparable.
    pub workload_version: u32,
    /// The test within the workload, e.g. `SEQ1M Q8T1 read`.
    pub test_id: String,
    /// Everything that defines the test, as JSON; hashed in canonical form for matching.
    pub parameters: Value,
    /// What was measured, e.g. `throughput`, `iops`, `latency_mean`.
    pub metric: String,
    /// The unit of every sample, e.g. `MB/s`, `IOPS`, `us`, `s`.
    pub unit: String,
    /// Whether higher or lower values are better.
    pub direction: Direction,
    /// Every measured repetition, in order. Never summarized away.
    pub samples: Vec<f64>,
    /// Qualifiers a reader must see, e.g. `cache-inflated`, `noisy`.
    pub flags: Vec<String>,
}

/// Which workload a run's records are of, and the version within which its results compare: what every record a
/// workload writes shares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordSource {
    pub workload: &'static str,
    pub version: u32,
}

impl RecordSource {
    /// The record of one metric of one test, without flags.
    pub fn record(
        &self,
        test_id: impl Into<String>,
        parameters: &Value,
        metric: &str,
        unit: &str,
        direction: Direction,
        samples: Vec<f64>,
    ) -> ResultRecord {
        ResultRecord {
            workload: self.workload.to_string(),
            workload_version: self.version,
            test_id: test_id.into(),
            parameters: parameters.clone(),
            metric: metric.to_string(),
            unit: unit.to_string(),
            direction,
            samples,
            flags: Vec::new(),
        }
    }
}

impl ResultRecord {
    /// The canonical JSON text of the parameters (object keys sorted at every level, no white space).
    pub fn canonical_parameters(&self) -> String {
        canonical_json(&self.parameters)
    }

    /// The hex SHA-256 of the canonical parameters.
    pub fn parameters_hash(&self) -> String {
        sha256_hex(self.canonical_parameters().as_bytes())
    }
}

pub use crate::canonical::{canonical_json, sha256_hex};
pub use crate::secrets::redact_secrets;

/// An error and its causes on one line, `outer: inner: innermost`, each cause once (drivers often repeat the
/// cause in their own message).
pub fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(error) = cause {
        let text = error.to_string();
        if !text.is_empty() && !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        cause = error.source();
    }
    parts.join(": ")
}

/// Advice for a PostgreSQL error, by its SQLSTATE when the server sent one. `url_named_in` says where the user gave
/// the connection (`--db`, `the URL`), so the advice points at the right place. Without a SQLSTATE the error happened
/// before the server answered (refused connection, unknown host, timeout).
pub fn postgres_advice(sqlstate: Option<&str>, message: &str, url_named_in: &str) -> String {
    match sqlstate {
        Some("3D000") => format!("{message}; create the database (createdb) or name an existing one in {url_named_in}"),
        Some("28P01" | "28000") => format!("{message}; check the user and password in {url_named_in}"),
        Some("42501") => format!(
            "{message}; the user in {url_named_in} needs the right to create tables (GRANT CREATE ON SCHEMA ... TO \
             the user) or a schema it owns"
        ),
        Some("53100") => format!("{message}; the database server's disk is full"),
        Some(_) => message.to_string(),
        None => format!("{message}; is the server running, and does {url_named_in} name the right host and port?"),
    }
}

/// The current time, UTC, RFC 3339 with milliseconds (sortable as text).
pub fn now_utc() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    format_utc(now.as_secs() as i64, now.subsec_millis())
}

/// The proleptic Gregorian (year, month, day) of a count of days since 1970-01-01: Howard Hinnant's civil-from-days,
/// so no date crate is needed.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = (if mp < 10 { mp + 3 } else { mp - 9 }) as u32;
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// Days since 1970-01-01 of a proleptic Gregorian date: the inverse of [`civil_from_days`].
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year.rem_euclid(400);
    let mp = i64::from((month + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Seconds since the epoch of a time written by [`format_utc`] (`2026-11-18T11:06:40.007Z`); `None` for other text.
pub fn parse_utc(text: &str) -> Option<i64> {
    let number = |range: std::ops::Range<usize>| text.get(range)?.parse::<i64>().ok();
    if text.len() < 20 || &text[4..5] != "-" || &text[10..11] != "T" {
        return None;
    }
    let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
    let (hour, minute, second) = (number(11..13)?, number(14..16)?, number(17..19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    Some(days_from_civil(year, month as u32, day as u32) * 86_400 + hour * 3600 + minute * 60 + second)
}

/// Seconds since the epoch as RFC 3339 UTC.
pub fn format_utc(seconds: i64, millis: u32) -> String {
    let days = seconds.div_euclid(86_400);
    let second_of_day = seconds.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        second_of_day / 3600,
        second_of_day % 3600 / 60,
        second_of_day % 60
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn metrics_read_as_words_and_kinds() {
        use super::{MetricKind, metric_kind};
        assert_eq!(metric_kind("job_cv", "%"), MetricKind::Dispersion);
        assert_eq!(metric_kind("latency_p99", "us"), MetricKind::Speed);
        assert_eq!(metric_kind("iops", "IOPS"), MetricKind::Speed);
        assert_eq!(metric_kind("cells_per_s", "cells/s"), MetricKind::Speed);
        assert_eq!(metric_kind("tpm", "TPM"), MetricKind::Speed);
        assert_eq!(metric_kind("failures", "count"), MetricKind::Other);
        assert_eq!(metric_kind("speedup", "x"), MetricKind::Other);
    }

    use super::*;

    #[test]
    fn postgres_advice_points_at_where_the_url_was_given() {
        let missing = postgres_advice(Some("3D000"), "database \"nope\" does not exist", "--db");
        assert!(missing.contains("createdb") && missing.ends_with("in --db"), "{missing}");
        let refused = postgres_advice(None, "connection refused", "the URL");
        assert!(refused.contains("is the server running") && refused.contains("the URL"), "{refused}");
        assert_eq!(postgres_advice(Some("42P01"), "relation x does not exist", "--db"), "relation x does not exist");
    }

    #[test]
    fn utc_formatting() {
        assert_eq!(format_utc(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_utc(1_795_000_000, 7), "2026-11-18T11:06:40.007Z");
        assert_eq!(format_utc(951_782_400, 0), "2000-02-29T00:00:00.000Z");
        assert_eq!(parse_utc("2026-11-18T11:06:40.007Z"), Some(1_795_000_000));
        assert_eq!(parse_utc(&format_utc(951_782_400, 0)), Some(951_782_400));
        assert_eq!(parse_utc("yesterday"), None);
        for days in [-1000, 0, 59, 60, 20_000, 25_000] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
    }
    use serde_json::json;

    #[test]
    fn parameter_hash_differs_when_parameters_differ() {
        let mut record = ResultRecord {
            workload: "disk".into(),
            workload_version: 1,
            test_id: "RND4K Q32T1 read".into(),
            parameters: json!({"block_bytes": 4096, "queue_depth": 32}),
            metric: "iops".into(),
            unit: "IOPS".into(),
            direction: Direction::HigherIsBetter,
            samples: vec![1.0],
            flags: vec![],
        };
        let first = record.parameters_hash();
        record.parameters = json!({"queue_depth": 32, "block_bytes": 4096});
        assert_eq!(first, record.parameters_hash());
        record.parameters = json!({"queue_depth": 16, "block_bytes": 4096});
        assert_ne!(first, record.parameters_hash());
    }

    #[test]
    fn tags_need_a_key() {
        assert_eq!(parse_tag("storage=nvme").unwrap(), ("storage".into(), "nvme".into()));
        assert_eq!(parse_tag("ht=").unwrap(), ("ht".into(), "".into()));
        assert!(parse_tag("=x").is_err());
        assert!(parse_tag("novalue").is_err());
    }

    #[test]
    fn status_names_round_trip() {
        for status in [RunStatus::Running, RunStatus::Complete, RunStatus::Failed, RunStatus::Interrupted] {
            assert_eq!(RunStatus::parse(status.as_str()), Some(status));
        }
    }
}
