//! A run as rows: each part of a run written in SQL both backends run (the run and its tags, the fingerprint once
//! per environment, results with their samples and digests, the sampler series, attachments) and the one way a run
//! ends. The store calls these inside its write transactions.

use crate::error::StoreError;
use crate::series_rows::{
    CONTENTION_COLUMNS, CPU_COLUMNS, DISK_COLUMNS, contention_values, cpu_values, disk_values, run_contention_values,
    series_rows,
};
use crate::sql::{Sql, SqlValue, params};
use envbench_core::fingerprint::Fingerprint;
use envbench_core::model::{ResultRecord, RunStatus, RunSummary};
use envbench_core::sampler::SamplerSeries;

/// The row id of a run.
pub(crate) fn run_id(sql: &mut Sql<'_>, uuid: &str) -> Result<i64, StoreError> {
    Ok(sql
        .query_optional("SELECT id FROM runs WHERE uuid = ?", params![uuid])?
        .ok_or_else(|| StoreError::NoSuchRun(uuid.to_string()))?
        .int(0)?)
}

/// A fingerprint's row id, inserting the fingerprint when this environment is new.
pub(crate) fn fingerprint_row(
    sql: &mut Sql<'_>,
    hash: &str,
    fingerprint: &Fingerprint,
    seen_at: &str,
) -> Result<i64, StoreError> {
    let document = serde_json::to_string(fingerprint).expect("a fingerprint serializes");
    sql.execute(
        "INSERT INTO fingerprints (hash, hostname, document, first_seen_at) VALUES (?, ?, ?, ?) \
         ON CONFLICT (hash) DO NOTHING",
        params![hash, fingerprint.os.hostname.clone(), document, seen_at],
    )?;
    Ok(sql.query_one("SELECT id FROM fingerprints WHERE hash = ?", params![hash])?.int(0)?)
}

/// A new run row, running, and its tags. Returns its id.
pub(crate) fn insert_run(
    sql: &mut Sql<'_>,
    summary: &RunSummary,
    command_line: &str,
    tool_version: &str,
    fingerprint_id: i64,
    process: Option<String>,
) -> Result<i64, StoreError> {
    let run_id = insert_run_row(sql, summary, command_line, tool_version, fingerprint_id, process)?;
    sql.insert_rows("run_tags", &["run_id", "key", "value"], &tag_rows(run_id, summary))?;
    Ok(run_id)
}

/// A new run row, running, without its tags ([`tag_rows`]). Returns its id.
fn insert_run_row(
    sql: &mut Sql<'_>,
    summary: &RunSummary,
    command_line: &str,
    tool_version: &str,
    fingerprint_id: i64,
    process: Option<String>,
) -> Result<i64, StoreError> {
    Ok(sql
        .query_one(
            "INSERT INTO runs (uuid, workload, label, command_line, tool_version, started_at, status, fingerprint_id, \
             suite_id, process) VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?, ?) RETURNING id",
            params![
                summary.uuid.as_str(),
                summary.workload.as_str(),
                summary.label.clone(),
                command_line,
                tool_version,
                summary.started_at.as_str(),
                fingerprint_id,
                summary.suite_id.clone(),
                process
            ],
        )?
        .int(0)?)
}

/// The row of a run copied in, running, with the id reserved for it; the columns are [`RUN_COLUMNS`].
pub(crate) fn run_row(
    id: i64,
    summary: &RunSummary,
    command_line: &str,
    tool_version: &str,
    fingerprint_id: i64,
) -> Vec<SqlValue> {
    vec![
        id.into(),
        summary.uuid.as_str().into(),
        summary.workload.as_str().into(),
        summary.label.clone().into(),
        command_line.into(),
        tool_version.into(),
        summary.started_at.as_str().into(),
        "running".into(),
        fingerprint_id.into(),
        summary.suite_id.clone().into(),
    ]
}

pub(crate) const RUN_COLUMNS: [&str; 10] = [
    "id",
    "uuid",
    "workload",
    "label",
    "command_line",
    "tool_version",
    "started_at",
    "status",
    "fingerprint_id",
    "suite_id",
];

/// End runs copied in as they ended where they were kept, in as few statements as the placeholder limit allows: each
/// `(uuid, status, reason, ended_at)`, every one running here.
pub(crate) fn end_runs(sql: &mut Sql<'_>, ends: &[(&str, RunStatus, Option<&str>, &str)]) -> Result<(), StoreError> {
    for chunk in ends.chunks(1000) {
        let mut values: Vec<SqlValue> = Vec::with_capacity(chunk.len() * 4);
        for &(uuid, status, reason, ended_at) in chunk {
            if status == RunStatus::Running {
                return Err(StoreError::Corrupt(format!("run {uuid}: a run cannot end as running")));
            }
            values.extend([uuid.into(), status.as_str().into(), reason.into(), ended_at.into()]);
        }
        let changed = sql.execute(
            &format!(
                "WITH e (uuid, status, reason, ended_at) AS (VALUES {}) UPDATE runs SET status = e.status, \
                 status_reason = e.reason, ended_at = e.ended_at FROM e WHERE runs.uuid = e.uuid AND runs.status = \
                 'running'",
                vec!["(?, ?, ?, ?)"; chunk.len()].join(", ")
            ),
            &values,
        )?;
        if changed != chunk.len() as u64 {
            return Err(StoreError::Corrupt(format!("{changed} of {} runs copied in could be ended", chunk.len())));
        }
    }
    Ok(())
}

/// The rows of a run's tags.
pub(crate) fn tag_rows(run_id: i64, summary: &RunSummary) -> Vec<Vec<SqlValue>> {
    summary.tags.iter().map(|(key, value)| vec![run_id.into(), key.into(), value.into()]).collect()
}

/// Results, each with its run's id, its parameters' hash and the id reserved for it ([`crate::store::Backend::
/// reserve_ids`]): their rows, then every sample of them, in as few statements as the placeholder limit allows (a
/// statement for each result and each result's samples made a push wait for two round trips a result).
pub(crate) fn insert_results(
    sql: &mut Sql<'_>,
    results: &[(i64, &ResultRecord, &str)],
    ids: &[i64],
) -> Result<(), StoreError> {
    assert_eq!(results.len(), ids.len(), "an id reserved for each result");
    let (mut rows, mut samples) = (Vec::with_capacity(results.len()), Vec::new());
    for (&(run_id, record, parameters_hash), &result_id) in results.iter().zip(ids) {
        rows.push(vec![
            result_id.into(),
            run_id.into(),
            record.workload.as_str().into(),
            i64::from(record.workload_version).into(),
            record.test_id.as_str().into(),
            record.canonical_parameters().into(),
            parameters_hash.into(),
            record.metric.as_str().into(),
            record.unit.as_str().into(),
            record.direction.as_str().into(),
            serde_json::to_string(&record.flags).expect("flags serialize").into(),
        ]);
        samples.extend(
            record
                .samples
                .iter()
                .enumerate()
                .map(|(seq, value)| vec![result_id.into(), (seq as i64).into(), (*value).into()]),
        );
    }
    sql.insert_rows("results", &RESULT_COLUMNS, &rows)?;
    sql.insert_rows("samples", &["result_id", "seq", "value"], &samples)?;
    for (&(_, record, _), &result_id) in results.iter().zip(ids) {
        insert_digest(sql, result_id, &record.samples)?;
    }
    Ok(())
}

const RESULT_COLUMNS: [&str; 11] = [
    "id",
    "run_id",
    "workload",
    "workload_version",
    "test_id",
    "parameters",
    "parameters_hash",
    "metric",
    "unit",
    "direction",
    "flags",
];

/// Keep the digest pages show of a result with many samples ([`crate::digest`]); nothing for a small one.
pub(crate) fn insert_digest(sql: &mut Sql<'_>, result_id: i64, samples: &[f64]) -> Result<(), StoreError> {
    let Some(points) = crate::digest::sample_digest(samples) else { return Ok(()) };
    sql.execute(
        "INSERT INTO sample_digests (result_id, sample_count, points) VALUES (?, ?, ?)",
        params![result_id, samples.len() as i64, serde_json::to_string(&points).expect("numbers serialize")],
    )?;
    Ok(())
}

/// The digests of the results a store kept before it had digests (migration 6), inside the migration's transaction.
pub(crate) fn digest_kept_results(sql: &mut Sql<'_>) -> Result<(), StoreError> {
    let large = sql.query(
        &format!("SELECT result_id FROM samples GROUP BY result_id HAVING COUNT(*) > {}", crate::digest::DIGEST_ABOVE),
        &[],
    )?;
    for row in large {
        let result_id = row.int(0)?;
        let samples: Vec<f64> = sql
            .query("SELECT value FROM samples WHERE result_id = ? ORDER BY seq", params![result_id])?
            .iter()
            .map(|row| row.real(0))
            .collect::<Result<_, _>>()?;
        insert_digest(sql, result_id, &samples)?;
    }
    Ok(())
}

pub(crate) fn insert_series(sql: &mut Sql<'_>, run_id: i64, series: &SamplerSeries) -> Result<(), StoreError> {
    let mut rows = SeriesRows::default();
    rows.add(run_id, series);
    rows.insert(sql)
}

/// The sampler series of one run or many, as rows of their four tables, written a table at a time.
#[derive(Default)]
pub(crate) struct SeriesRows {
    series: Vec<Vec<SqlValue>>,
    cpu: Vec<Vec<SqlValue>>,
    disk: Vec<Vec<SqlValue>>,
    contention: Vec<Vec<SqlValue>>,
}

impl SeriesRows {
    pub(crate) fn add(&mut self, run_id: i64, series: &SamplerSeries) {
        self.series.push(vec![
            run_id.into(),
            (series.interval_ms as i64).into(),
            serde_json::to_string(&series.devices).expect("devices serialize").into(),
            series.own_cpu_seconds.into(),
            series.wall_seconds.into(),
        ]);
        for row in series_rows(series) {
            let key = || -> Vec<SqlValue> {
                vec![run_id.into(), row.kind.into(), row.start_ms.into(), row.end_ms.into(), row.step.into()]
            };
            let mut cpu = key();
            cpu.extend(cpu_values(row.cpu).map(SqlValue::from));
            self.cpu.push(cpu);
            if let Some(contention) = row.contention {
                let mut values = key();
                values.extend(contention_values(contention));
                self.contention.push(values);
            }
            for disk in row.disks {
                let mut values = key();
                values.push(disk.device.as_str().into());
                values.extend(disk_values(disk).map(SqlValue::from));
                self.disk.push(values);
            }
        }
        if let Some(run) = &series.whole_run {
            let end_ms = (series.wall_seconds * 1000.0).round() as i64;
            let mut values: Vec<SqlValue> =
                vec![run_id.into(), "run".into(), 0i64.into(), end_ms.into(), SqlValue::Null];
            values.extend(run_contention_values(run, series.pressure_note.as_deref()));
            self.contention.push(values);
        }
    }

    pub(crate) fn insert(&self, sql: &mut Sql<'_>) -> Result<(), StoreError> {
        let series = ["run_id", "interval_ms", "devices", "own_cpu_seconds", "wall_seconds"];
        sql.insert_rows("sampler_series", &series, &self.series)?;
        let keys = ["run_id", "kind", "start_ms", "end_ms", "step"];
        let cpu_columns: Vec<&str> = keys.iter().chain(&CPU_COLUMNS).copied().collect();
        sql.insert_rows("sampler_cpu", &cpu_columns, &self.cpu)?;
        let disk_columns: Vec<&str> = keys.iter().chain(&["device"]).chain(&DISK_COLUMNS).copied().collect();
        sql.insert_rows("sampler_disk", &disk_columns, &self.disk)?;
        let contention_columns: Vec<&str> = keys.iter().chain(&CONTENTION_COLUMNS).copied().collect();
        sql.insert_rows("sampler_contention", &contention_columns, &self.contention)
    }
}

pub(crate) fn insert_attachment(
    sql: &mut Sql<'_>,
    run_id: i64,
    name: &str,
    document: &serde_json::Value,
) -> Result<(), StoreError> {
    insert_attachments(sql, &[attachment_row(run_id, name, document)])
}

/// The row of a run's attachment.
pub(crate) fn attachment_row(run_id: i64, name: &str, document: &serde_json::Value) -> Vec<SqlValue> {
    vec![run_id.into(), name.into(), document.to_string().into()]
}

/// Attachments' rows ([`attachment_row`]), as few statements as the placeholder limit allows.
pub(crate) fn insert_attachments(sql: &mut Sql<'_>, rows: &[Vec<SqlValue>]) -> Result<(), StoreError> {
    sql.insert_rows("run_attachments", &["run_id", "name", "document"], rows)
}

/// End a running run; a run ends once.
pub(crate) fn end_run(
    sql: &mut Sql<'_>,
    uuid: &str,
    status: RunStatus,
    reason: Option<&str>,
    ended_at: &str,
) -> Result<(), StoreError> {
    if status == RunStatus::Running {
        return Err(StoreError::Corrupt(format!("run {uuid}: a run cannot end as running")));
    }
    let changed = sql.execute(
        "UPDATE runs SET status = ?, status_reason = ?, ended_at = ? WHERE uuid = ? AND status = 'running'",
        params![status.as_str(), reason, ended_at, uuid],
    )?;
    if changed == 0 {
        run_id(sql, uuid)?;
        return Err(StoreError::RunAlreadyEnded(uuid.to_string()));
    }
    Ok(())
}
