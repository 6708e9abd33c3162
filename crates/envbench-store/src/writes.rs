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
    let run_id = sql
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
        .int(0)?;
    let tags: Vec<Vec<SqlValue>> =
        summary.tags.iter().map(|(key, value)| vec![run_id.into(), key.into(), value.into()]).collect();
    sql.insert_rows("run_tags", &["run_id", "key", "value"], &tags)?;
    Ok(run_id)
}

pub(crate) fn insert_result(
    sql: &mut Sql<'_>,
    run_id: i64,
    record: &ResultRecord,
    parameters_hash: &str,
) -> Result<(), StoreError> {
    let result_id = sql
        .query_one(
            "INSERT INTO results (run_id, workload, workload_version, test_id, parameters, parameters_hash, metric, \
             unit, direction, flags) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            params![
                run_id,
                record.workload.as_str(),
                i64::from(record.workload_version),
                record.test_id.as_str(),
                record.canonical_parameters(),
                parameters_hash,
                record.metric.as_str(),
                record.unit.as_str(),
                record.direction.as_str(),
                serde_json::to_string(&record.flags).expect("flags serialize")
            ],
        )?
        .int(0)?;
    let samples: Vec<Vec<SqlValue>> = record
        .samples
        .iter()
        .enumerate()
        .map(|(seq, value)| vec![result_id.into(), (seq as i64).into(), (*value).into()])
        .collect();
    sql.insert_rows("samples", &["result_id", "seq", "value"], &samples)?;
    insert_digest(sql, result_id, &record.samples)
}

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
    sql.execute(
        "INSERT INTO sampler_series (run_id, interval_ms, devices, own_cpu_seconds, wall_seconds) VALUES (?, ?, ?, ?, ?)",
        params![
            run_id,
            series.interval_ms as i64,
            serde_json::to_string(&series.devices).expect("devices serialize"),
            series.own_cpu_seconds,
            series.wall_seconds
        ],
    )?;
    let (mut cpu_rows, mut disk_rows, mut contention_rows) = (Vec::new(), Vec::new(), Vec::new());
    for row in series_rows(series) {
        let key = || -> Vec<SqlValue> {
            vec![run_id.into(), row.kind.into(), row.start_ms.into(), row.end_ms.into(), row.step.into()]
        };
        let mut cpu = key();
        cpu.extend(cpu_values(row.cpu).map(SqlValue::from));
        cpu_rows.push(cpu);
        if let Some(contention) = row.contention {
            let mut values = key();
            values.extend(contention_values(contention));
            contention_rows.push(values);
        }
        for disk in row.disks {
            let mut values = key();
            values.push(disk.device.as_str().into());
            values.extend(disk_values(disk).map(SqlValue::from));
            disk_rows.push(values);
        }
    }
    let keys = ["run_id", "kind", "start_ms", "end_ms", "step"];
    let cpu_columns: Vec<&str> = keys.iter().chain(&CPU_COLUMNS).copied().collect();
    sql.insert_rows("sampler_cpu", &cpu_columns, &cpu_rows)?;
    let disk_columns: Vec<&str> = keys.iter().chain(&["device"]).chain(&DISK_COLUMNS).copied().collect();
    sql.insert_rows("sampler_disk", &disk_columns, &disk_rows)?;
    if let Some(run) = &series.whole_run {
        let end_ms = (series.wall_seconds * 1000.0).round() as i64;
        let mut values: Vec<SqlValue> = vec![run_id.into(), "run".into(), 0i64.into(), end_ms.into(), SqlValue::Null];
        values.extend(run_contention_values(run, series.pressure_note.as_deref()));
        contention_rows.push(values);
    }
    let contention_columns: Vec<&str> = keys.iter().chain(&CONTENTION_COLUMNS).copied().collect();
    sql.insert_rows("sampler_contention", &contention_columns, &contention_rows)
}

pub(crate) fn insert_attachment(
    sql: &mut Sql<'_>,
    run_id: i64,
    name: &str,
    document: &serde_json::Value,
) -> Result<(), StoreError> {
    sql.execute(
        "INSERT INTO run_attachments (run_id, name, document) VALUES (?, ?, ?)",
        params![run_id, name, document.to_string()],
    )?;
    Ok(())
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
