//! The SQLite backend.

use crate::error::StoreError;
use crate::model::{RunFilter, RunSummary, StoredResult, StoredRun};
use crate::schema::{APPLICATION_ID, MIGRATIONS, latest_version};
use crate::series_rows::{
    SeriesBuilder, SeriesRow, cpu_insert_sql, cpu_select_sql, cpu_values, disk_insert_sql, disk_select_sql,
    disk_values, series_rows,
};
use crate::{ImportOutcome, ResultStore};
use envbench_core::fingerprint::Fingerprint;
use envbench_core::model::{Direction, ResultRecord, RunRequest, RunStatus, now_utc};
use envbench_core::sampler::SamplerSeries;
use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension, ToSql, Transaction, TransactionBehavior, params};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a writer waits for another process's transaction before giving up with [`StoreError::Locked`].
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// A results store in one SQLite file.
pub struct SqliteStore {
    connection: Connection,
    path: PathBuf,
}

impl SqliteStore {
    /// Open (and when `create`, create) the store at `path`, bringing its schema up to date.
    pub fn open(path: &Path, create: bool) -> Result<SqliteStore, StoreError> {
        Self::open_with_timeout(path, create, BUSY_TIMEOUT)
    }

    /// [`SqliteStore::open`] with a chosen time to wait for other writers.
    pub fn open_with_timeout(path: &Path, create: bool, busy_timeout: Duration) -> Result<SqliteStore, StoreError> {
        if !path.exists() {
            if !create {
                return Err(StoreError::Missing(path.display().to_string()));
            }
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent).map_err(|e| StoreError::CannotCreate {
                    location: path.display().to_string(),
                    reason: e.to_string(),
                })?;
            }
        }
        let flags = if create {
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX
        } else {
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX
        };
        let connection = Connection::open_with_flags(path, flags)
            .map_err(|e| StoreError::CannotCreate { location: path.display().to_string(), reason: e.to_string() })?;
        let mut store = SqliteStore { connection, path: path.to_path_buf() };
        // Some lock conflicts while a store is being created (switching to WAL, first migration) return BUSY without
        // waiting on the busy handler; retry them within the same time limit.
        let started = std::time::Instant::now();
        loop {
            match store.prepare(busy_timeout).map_err(|e| store.classify(e)) {
                Err(StoreError::Locked(_)) if started.elapsed() < busy_timeout => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                outcome => return outcome.map(|()| store),
            }
        }
    }

    /// The file this store lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn prepare(&mut self, busy_timeout: Duration) -> Result<(), StoreError> {
        self.connection.busy_timeout(busy_timeout)?;
        // Reading the header first: a foreign file fails here with NOTADB before anything is written.
        let version = {
            let snapshot = self.connection.transaction_with_behavior(TransactionBehavior::Deferred)?;
            let version = Self::check_header(&self.path, &snapshot)?;
            snapshot.commit()?;
            version
        };
        self.connection.pragma_update(None, "journal_mode", "WAL")?;
        self.connection.pragma_update(None, "synchronous", "NORMAL")?;
        self.connection.pragma_update(None, "foreign_keys", "ON")?;
        if version < latest_version() {
            self.migrate()?;
        }
        Ok(())
    }

    /// The schema version of an envbench store, or why the file is not one we may write. Read inside one
    /// transaction so a concurrent creator's commit cannot land between the reads.
    fn check_header(path: &Path, connection: &Connection) -> Result<i64, StoreError> {
        let application_id: i64 = connection.query_row("PRAGMA application_id", [], |r| r.get(0))?;
        let version: i64 = connection.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        let table_count: i64 = connection.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?;
        if application_id != APPLICATION_ID && (application_id != 0 || table_count > 0) {
            return Err(StoreError::NotAStore(path.display().to_string()));
        }
        if version > latest_version() {
            return Err(StoreError::NewerSchema {
                location: path.display().to_string(),
                found: version,
                known: latest_version(),
            });
        }
        Ok(version)
    }

    fn migrate(&mut self) -> Result<(), StoreError> {
        let transaction = self.connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
        // Another process may have created or migrated the store while we waited for the write lock.
        let version = Self::check_header(&self.path, &transaction)?;
        for (index, migration) in MIGRATIONS.iter().enumerate().skip(version as usize) {
            transaction.execute_batch(migration)?;
            transaction.pragma_update(None, "user_version", (index + 1) as i64)?;
        }
        transaction.pragma_update(None, "application_id", APPLICATION_ID)?;
        transaction.commit()?;
        Ok(())
    }

    /// Turn SQLite's codes into errors a user can act on.
    fn classify(&self, error: StoreError) -> StoreError {
        match error {
            StoreError::Sqlite(rusqlite::Error::SqliteFailure(code, _)) if code.code == ErrorCode::NotADatabase => {
                StoreError::NotAStore(self.path.display().to_string())
            }
            StoreError::Sqlite(rusqlite::Error::SqliteFailure(code, _))
                if matches!(code.code, ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) =>
            {
                StoreError::Locked(self.path.display().to_string())
            }
            StoreError::Sqlite(rusqlite::Error::SqliteFailure(code, message))
                if code.code == ErrorCode::DatabaseCorrupt =>
            {
                StoreError::Corrupt(message.unwrap_or_default())
            }
            other => other,
        }
    }

    fn write<T>(&mut self, work: impl FnOnce(&Transaction) -> Result<T, StoreError>) -> Result<T, StoreError> {
        let outcome = (|| {
            let transaction = self.connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let value = work(&transaction)?;
            transaction.commit()?;
            Ok(value)
        })();
        outcome.map_err(|e| self.classify(e))
    }

    fn run_id(transaction: &Connection, uuid: &str) -> Result<i64, StoreError> {
        transaction
            .query_row("SELECT id FROM runs WHERE uuid = ?1", [uuid], |r| r.get(0))
            .optional()?
            .ok_or_else(|| StoreError::NoSuchRun(uuid.to_string()))
    }

    fn summaries(&self, filter: &RunFilter, uuid: Option<&str>) -> Result<Vec<RunSummary>, StoreError> {
        let mut sql = String::from(
            "SELECT r.id, r.uuid, r.workload, r.label, f.hostname, r.started_at, r.ended_at, r.status, \
             r.status_reason, r.suite_id, (SELECT count(*) FROM results x WHERE x.run_id = r.id) \
             FROM runs r JOIN fingerprints f ON f.id = r.fingerprint_id WHERE 1 = 1",
        );
        let mut values: Vec<String> = Vec::new();
        if let Some(uuid) = uuid {
            values.push(uuid.to_string());
            sql.push_str(&format!(" AND r.uuid = ?{}", values.len()));
        }
        if let Some(workload) = &filter.workload {
            values.push(workload.clone());
            sql.push_str(&format!(" AND r.workload = ?{}", values.len()));
        }
        if let Some(label) = &filter.label {
            values.push(label.clone());
            sql.push_str(&format!(" AND r.label = ?{}", values.len()));
        }
        if let Some(host) = &filter.host {
            values.push(host.clone());
            sql.push_str(&format!(" AND f.hostname = ?{}", values.len()));
        }
        for (key, value) in &filter.tags {
            values.push(key.clone());
            values.push(value.clone());
            sql.push_str(&format!(
                " AND EXISTS (SELECT 1 FROM run_tags t WHERE t.run_id = r.id AND t.key = ?{} AND t.value = ?{})",
                values.len() - 1,
                values.len()
            ));
        }
        sql.push_str(" ORDER BY r.started_at DESC, r.id DESC");
        if let Some(limit) = filter.limit {
            sql.push_str(&format!(" LIMIT {limit}"));
        }
        let mut statement = self.connection.prepare(&sql)?;
        let rows = statement.query_map(rusqlite::params_from_iter(values.iter()), |row| {
            Ok((
                row.get::<_, i64>(0)?,
                RunSummary {
                    uuid: row.get(1)?,
                    workload: row.get(2)?,
                    label: row.get(3)?,
                    tags: BTreeMap::new(),
                    host: row.get(4)?,
                    started_at: row.get(5)?,
                    ended_at: row.get(6)?,
                    status: RunStatus::parse(&row.get::<_, String>(7)?).unwrap_or(RunStatus::Failed),
                    status_reason: row.get(8)?,
                    suite_id: row.get(9)?,
                    result_count: row.get::<_, i64>(10)? as usize,
                },
            ))
        })?;
        let mut summaries = Vec::new();
        for row in rows {
            let (id, mut summary) = row?;
            summary.tags = self.tags(id)?;
            summaries.push(summary);
        }
        Ok(summaries)
    }

    fn tags(&self, run_id: i64) -> Result<BTreeMap<String, String>, StoreError> {
        let mut statement = self.connection.prepare_cached("SELECT key, value FROM run_tags WHERE run_id = ?1")?;
        let rows = statement.query_map([run_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn results(&self, run_id: i64) -> Result<Vec<StoredResult>, StoreError> {
        let mut statement = self.connection.prepare(
            "SELECT id, workload, workload_version, test_id, parameters, parameters_hash, metric, unit, direction, flags \
             FROM results WHERE run_id = ?1 ORDER BY id",
        )?;
        let mut samples = self.connection.prepare("SELECT value FROM samples WHERE result_id = ?1 ORDER BY seq")?;
        let rows = statement.query_map([run_id], |row| {
            Ok((
                row.get::<_, i64>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, i64>(2)?,
                row.get::<_, String>(3)?,
                row.get::<_, String>(4)?,
                row.get::<_, String>(5)?,
                row.get::<_, String>(6)?,
                row.get::<_, String>(7)?,
                row.get::<_, String>(8)?,
                row.get::<_, String>(9)?,
            ))
        })?;
        let mut results = Vec::new();
        for row in rows {
            let (id, workload, version, test_id, parameters, hash, metric, unit, direction, flags) = row?;
            let values: Vec<f64> = samples.query_map([id], |r| r.get(0))?.collect::<Result<_, _>>()?;
            results.push(StoredResult {
                record: ResultRecord {
                    workload,
                    workload_version: version as u32,
                    test_id,
                    parameters: serde_json::from_str(&parameters).map_err(|e| StoreError::Corrupt(e.to_string()))?,
                    metric,
                    unit,
                    direction: Direction::parse(&direction).unwrap_or(Direction::HigherIsBetter),
                    samples: values,
                    flags: serde_json::from_str(&flags).map_err(|e| StoreError::Corrupt(e.to_string()))?,
                },
                parameters_hash: hash,
            });
        }
        Ok(results)
    }

    fn series(&self, run_id: i64) -> Result<Option<SamplerSeries>, StoreError> {
        let header = self
            .connection
            .query_row(
                "SELECT interval_ms, devices, own_cpu_seconds, wall_seconds FROM sampler_series WHERE run_id = ?1",
                [run_id],
                |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, f64>(2)?, r.get::<_, f64>(3)?)),
            )
            .optional()?;
        let Some((interval_ms, devices, own_cpu_seconds, wall_seconds)) = header else { return Ok(None) };
        let devices = serde_json::from_str(&devices).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let mut builder = SeriesBuilder::new(interval_ms, devices, own_cpu_seconds, wall_seconds);
        let mut statement = self.connection.prepare(&cpu_select_sql(placeholder, "rowid"))?;
        let mut rows = statement.query([run_id])?;
        while let Some(r) = rows.next()? {
            builder.cpu_row(&r.get::<_, String>(0)?, r.get(1)?, r.get(2)?, r.get(3)?, figures(r, 4)?);
        }
        let mut statement = self.connection.prepare(&disk_select_sql(placeholder, "rowid"))?;
        let mut rows = statement.query([run_id])?;
        while let Some(r) = rows.next()? {
            builder.disk_row(&r.get::<_, String>(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, figures(r, 5)?);
        }
        Ok(Some(builder.finish()))
    }

    fn attachments(&self, run_id: i64) -> Result<BTreeMap<String, serde_json::Value>, StoreError> {
        let mut statement = self.connection.prepare("SELECT name, document FROM run_attachments WHERE run_id = ?1")?;
        let rows = statement.query_map([run_id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
        let mut attachments = BTreeMap::new();
        for row in rows {
            let (name, document) = row?;
            attachments.insert(name, serde_json::from_str(&document).map_err(|e| StoreError::Corrupt(e.to_string()))?);
        }
        Ok(attachments)
    }
}

/// SQLite's placeholder for parameter `n`.
fn placeholder(n: usize) -> String {
    format!("?{n}")
}

/// `N` figure columns starting at column `first`.
fn figures<const N: usize>(row: &rusqlite::Row, first: usize) -> rusqlite::Result<[f64; N]> {
    let mut values = [0.0; N];
    for (i, value) in values.iter_mut().enumerate() {
        *value = row.get(first + i)?;
    }
    Ok(values)
}

/// One row of `sampler_cpu` and its `sampler_disk` rows.
fn insert_series_row(t: &Transaction, run_id: i64, row: &SeriesRow) -> Result<(), StoreError> {
    let cpu = cpu_values(row.cpu);
    let mut values: Vec<&dyn ToSql> = vec![&run_id, &row.kind, &row.start_ms, &row.end_ms, &row.step];
    values.extend(cpu.iter().map(|v| v as &dyn ToSql));
    t.prepare_cached(&cpu_insert_sql(placeholder))?.execute(&values[..])?;
    let mut insert_disk = t.prepare_cached(&disk_insert_sql(placeholder))?;
    for disk in row.disks {
        let figures = disk_values(disk);
        let mut values: Vec<&dyn ToSql> = vec![&run_id, &row.kind, &row.start_ms, &row.end_ms, &row.step, &disk.device];
        values.extend(figures.iter().map(|v| v as &dyn ToSql));
        insert_disk.execute(&values[..])?;
    }
    Ok(())
}

fn fingerprint_row(t: &Transaction, hash: &str, fingerprint: &Fingerprint, seen_at: &str) -> Result<i64, StoreError> {
    let document = serde_json::to_string(fingerprint).expect("fingerprint serializes");
    t.execute(
        "INSERT INTO fingerprints (hash, hostname, document, first_seen_at) VALUES (?1, ?2, ?3, ?4) \
         ON CONFLICT (hash) DO NOTHING",
        params![hash, fingerprint.os.hostname, document, seen_at],
    )?;
    Ok(t.query_row("SELECT id FROM fingerprints WHERE hash = ?1", [hash], |r| r.get(0))?)
}

fn insert_tags(t: &Transaction, run_id: i64, tags: &BTreeMap<String, String>) -> Result<(), StoreError> {
    for (key, value) in tags {
        t.execute("INSERT INTO run_tags (run_id, key, value) VALUES (?1, ?2, ?3)", params![run_id, key, value])?;
    }
    Ok(())
}

fn insert_result(t: &Transaction, run_id: i64, record: &ResultRecord, parameters_hash: &str) -> Result<(), StoreError> {
    t.prepare_cached(
        "INSERT INTO results (run_id, workload, workload_version, test_id, parameters, parameters_hash, \
         metric, unit, direction, flags) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?
    .execute(params![
        run_id,
        record.workload,
        record.workload_version,
        record.test_id,
        record.canonical_parameters(),
        parameters_hash,
        record.metric,
        record.unit,
        record.direction.as_str(),
        serde_json::to_string(&record.flags).expect("flags serialize")
    ])?;
    let result_id = t.last_insert_rowid();
    let mut insert = t.prepare_cached("INSERT INTO samples (result_id, seq, value) VALUES (?1, ?2, ?3)")?;
    for (seq, value) in record.samples.iter().enumerate() {
        insert.execute(params![result_id, seq as i64, value])?;
    }
    Ok(())
}

fn insert_series(t: &Transaction, run_id: i64, series: &SamplerSeries) -> Result<(), StoreError> {
    t.execute(
        "INSERT INTO sampler_series (run_id, interval_ms, devices, own_cpu_seconds, wall_seconds) \
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            run_id,
            series.interval_ms as i64,
            serde_json::to_string(&series.devices).expect("devices serialize"),
            series.own_cpu_seconds,
            series.wall_seconds
        ],
    )?;
    for row in series_rows(series) {
        insert_series_row(t, run_id, &row)?;
    }
    Ok(())
}

fn insert_attachment(t: &Transaction, run_id: i64, name: &str, document: &serde_json::Value) -> Result<(), StoreError> {
    t.execute(
        "INSERT INTO run_attachments (run_id, name, document) VALUES (?1, ?2, ?3)",
        params![run_id, name, document.to_string()],
    )?;
    Ok(())
}

impl ResultStore for SqliteStore {
    fn begin_run(&mut self, request: &RunRequest, fingerprint: &Fingerprint) -> Result<String, StoreError> {
        let uuid = uuid::Uuid::new_v4().to_string();
        let hash = fingerprint.hash();
        let started_at = now_utc();
        self.write(|t| {
            let fingerprint_id = fingerprint_row(t, &hash, fingerprint, &started_at)?;
            t.execute(
                "INSERT INTO runs (uuid, workload, label, command_line, tool_version, started_at, status, \
                 fingerprint_id, suite_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'running', ?7, ?8)",
                params![
                    uuid,
                    request.workload,
                    request.label,
                    request.command_line,
                    envbench_core::TOOL_VERSION,
                    started_at,
                    fingerprint_id,
                    request.suite_id
                ],
            )?;
            insert_tags(t, t.last_insert_rowid(), &request.tags)
        })?;
        Ok(uuid)
    }

    fn add_results(&mut self, run_uuid: &str, results: &[ResultRecord]) -> Result<(), StoreError> {
        self.write(|t| {
            let run_id = Self::run_id(t, run_uuid)?;
            for record in results {
                insert_result(t, run_id, record, &record.parameters_hash())?;
            }
            Ok(())
        })
    }

    fn add_series(&mut self, run_uuid: &str, series: &SamplerSeries) -> Result<(), StoreError> {
        self.write(|t| insert_series(t, Self::run_id(t, run_uuid)?, series))
    }

    fn add_attachment(&mut self, run_uuid: &str, name: &str, document: &serde_json::Value) -> Result<(), StoreError> {
        self.write(|t| insert_attachment(t, Self::run_id(t, run_uuid)?, name, document))
    }

    fn import_run(&mut self, run: &StoredRun) -> Result<ImportOutcome, StoreError> {
        self.write(|t| {
            let s = &run.summary;
            let exists: Option<i64> =
                t.query_row("SELECT id FROM runs WHERE uuid = ?1", [&s.uuid], |r| r.get(0)).optional()?;
            if exists.is_some() {
                return Ok(ImportOutcome::AlreadyPresent);
            }
            let fingerprint_id = fingerprint_row(t, &run.fingerprint_hash, &run.fingerprint, &s.started_at)?;
            t.execute(
                "INSERT INTO runs (uuid, workload, label, command_line, tool_version, started_at, ended_at, status, \
                 status_reason, fingerprint_id, suite_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                params![
                    s.uuid,
                    s.workload,
                    s.label,
                    run.command_line,
                    run.tool_version,
                    s.started_at,
                    s.ended_at,
                    s.status.as_str(),
                    s.status_reason,
                    fingerprint_id,
                    s.suite_id
                ],
            )?;
            let run_id = t.last_insert_rowid();
            insert_tags(t, run_id, &s.tags)?;
            for result in &run.results {
                insert_result(t, run_id, &result.record, &result.parameters_hash)?;
            }
            if let Some(series) = &run.series {
                insert_series(t, run_id, series)?;
            }
            for (name, document) in &run.attachments {
                insert_attachment(t, run_id, name, document)?;
            }
            Ok(ImportOutcome::Imported)
        })
    }

    fn finish_run(&mut self, run_uuid: &str, status: RunStatus, reason: Option<&str>) -> Result<(), StoreError> {
        self.write(|t| {
            let changed = t.execute(
                "UPDATE runs SET status = ?1, status_reason = ?2, ended_at = ?3 WHERE uuid = ?4 AND status = 'running'",
                params![status.as_str(), reason, now_utc(), run_uuid],
            )?;
            if changed == 0 {
                Self::run_id(t, run_uuid)?;
                return Err(StoreError::RunAlreadyEnded(run_uuid.to_string()));
            }
            Ok(())
        })
    }

    fn list_runs(&self, filter: &RunFilter) -> Result<Vec<RunSummary>, StoreError> {
        self.summaries(filter, None).map_err(|e| self.classify(e))
    }

    fn find_run(&self, id_or_prefix: &str) -> Result<String, StoreError> {
        let prefix = id_or_prefix.trim().to_ascii_lowercase();
        if prefix.is_empty() || !prefix.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
            return Err(StoreError::NoSuchRun(id_or_prefix.to_string()));
        }
        let mut statement = self.connection.prepare("SELECT uuid FROM runs WHERE uuid LIKE ?1 || '%' LIMIT 2")?;
        let matches: Vec<String> = statement.query_map([&prefix], |r| r.get(0))?.collect::<Result<_, _>>()?;
        match matches.len() {
            0 => Err(StoreError::NoSuchRun(id_or_prefix.to_string())),
            1 => Ok(matches.into_iter().next().expect("one match")),
            _ => {
                let count: i64 = self.connection.query_row(
                    "SELECT count(*) FROM runs WHERE uuid LIKE ?1 || '%'",
                    [&prefix],
                    |r| r.get(0),
                )?;
                Err(StoreError::AmbiguousRun { prefix: id_or_prefix.to_string(), count: count as usize })
            }
        }
    }

    fn load_run(&self, run_uuid: &str) -> Result<StoredRun, StoreError> {
        let (run_id, command_line, tool_version, fingerprint_hash, document): (i64, String, String, String, String) =
            self.connection
                .query_row(
                    "SELECT r.id, r.command_line, r.tool_version, f.hash, f.document FROM runs r \
                 JOIN fingerprints f ON f.id = r.fingerprint_id WHERE r.uuid = ?1",
                    [run_uuid],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
                )
                .optional()?
                .ok_or_else(|| StoreError::NoSuchRun(run_uuid.to_string()))?;
        let summary = self
            .summaries(&RunFilter::default(), Some(run_uuid))?
            .into_iter()
            .next()
            .ok_or_else(|| StoreError::NoSuchRun(run_uuid.to_string()))?;
        Ok(StoredRun {
            summary,
            command_line,
            tool_version,
            fingerprint_hash,
            fingerprint: serde_json::from_str(&document).map_err(|e| StoreError::Corrupt(e.to_string()))?,
            results: self.results(run_id)?,
            series: self.series(run_id)?,
            attachments: self.attachments(run_id)?,
        })
    }
}
