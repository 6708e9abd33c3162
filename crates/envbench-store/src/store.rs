//! The one store implementation: every operation of [`ResultStore`] written once, in SQL both backends run, over the
//! [`Backend`] seam (transactions, binding, and how a backend keeps its schema version).

use crate::error::StoreError;
use crate::liveness::{self, Liveness, RunLock};
use crate::model::{FingerprintTally, RunEnvironments};
use crate::model::{FleetEvent, ImportOutcome, RunFilter};
use crate::process::{ProcessIdentity, abandoned_reason};
use crate::roles::{FleetBoard, ImportRuns, ReadEnvironments, ReadRuns, RecordRuns};
use crate::schema::{LATEST_VERSION, Rules, insertion_order, migration};
use crate::series_rows::{CONTENTION_COLUMNS, CPU_COLUMNS, ContentionRow, DISK_COLUMNS, SeriesBuilder};
use crate::sql::{Row, Sql, SqlValue, params};
use crate::writes::{
    RUN_COLUMNS, SeriesRows, attachment_row, digest_kept_results, end_run, end_runs, fingerprint_row,
    insert_attachment, insert_attachments, insert_results, insert_run, insert_series, run_id, run_row, tag_rows,
};
use envbench_core::fingerprint::Fingerprint;
use envbench_core::model::{
    Direction, ResultRecord, RunRequest, RunStatus, RunSummary, StoredResult, StoredRun, now_utc,
};
use envbench_core::sampler::{DISTURBED_FLAG, SamplerSeries};
use std::collections::BTreeMap;

/// What a SQL backend provides: transactions in its driver, and where it keeps the schema version.
pub(crate) trait Backend {
    /// The backend's dialect and append-only rules.
    const RULES: &'static dyn Rules;

    /// Statements on the store's connection; `location` names the store in errors. The store begins and ends its
    /// transactions itself, with the dialect's statements.
    fn connection<'a>(&'a self, location: &'a str) -> Sql<'a>;

    /// The schema version of the store here, 0 when there is none yet, or why this is not a store envbench may
    /// write. Read-only, so a foreign file or schema is refused untouched.
    fn schema_version(sql: &mut Sql<'_>, location: &str) -> Result<i64, StoreError>;

    /// Once the store is known to be envbench's (or empty): settings of the connection.
    fn configure(&self, _location: &str) -> Result<(), StoreError> {
        Ok(())
    }

    /// Inside the migration's write transaction: wait for other processes migrating the same store.
    fn lock_schema(_sql: &mut Sql<'_>) -> Result<(), StoreError> {
        Ok(())
    }

    /// Record the schema version after migrating (and mark the store as envbench's).
    fn set_schema_version(sql: &mut Sql<'_>, version: i64) -> Result<(), StoreError>;

    /// `count` new row ids of `table` (its key column `id`), taken inside the caller's write transaction, so rows can
    /// be written many to a statement and still be known by id (the order RETURNING gives rows is not defined).
    fn reserve_ids(sql: &mut Sql<'_>, table: &str, count: usize) -> Result<Vec<i64>, StoreError>;

    /// Update the planner's statistics of the store's tables (nothing where the planner keeps none of its own).
    fn analyze(_sql: &mut Sql<'_>) -> Result<(), StoreError> {
        Ok(())
    }

    /// Whether the store has the index `name` (in the schema it works in).
    fn has_index(sql: &mut Sql<'_>, name: &str) -> Result<bool, StoreError>;

    /// Serialize imports of the same runs from several processes (inside the import's transaction); `uuids` come
    /// sorted, so two imports take their locks in one order.
    fn lock_runs(_sql: &mut Sql<'_>, _uuids: &[&str]) -> Result<(), StoreError> {
        Ok(())
    }

    /// Take the lock that shows run `uuid` alive for as long as this process runs it ([`crate::liveness`]); `None`
    /// when it cannot be taken here. `command` is the run's command line, recorded with a file lock.
    fn hold_run(&self, uuid: &str, command: &str) -> Option<RunLock>;

    /// What the lock of run `uuid`, held by another process, says about it.
    fn run_liveness(&self, uuid: &str) -> Liveness;

    /// Remove what the lock of run `uuid` left behind, once the run is recorded as ended.
    fn clear_run(&self, _uuid: &str) {}
}

/// A results store over one SQL backend.
pub struct SqlStore<B> {
    pub(crate) backend: B,
    /// The store's location for messages (a path, or a URL without its password).
    location: String,
}

impl<B> SqlStore<B> {
    /// Where the store is, for people: a file path, or the URL without its password.
    pub fn location(&self) -> &str {
        &self.location
    }
}

// The methods here are the crate's own; the seam stays private.
#[allow(private_bounds)]
impl<B: Backend> SqlStore<B> {
    /// Bring the schema up to date (creating the store when `create`), then end runs whose process is gone.
    pub(crate) fn prepare(backend: B, location: String, create: bool) -> Result<SqlStore<B>, StoreError> {
        let mut store = SqlStore { backend, location: location.clone() };
        let version = store.read(|sql| B::schema_version(sql, &location))?;
        store.backend.configure(&location)?;
        if version != LATEST_VERSION {
            store.migrate(&location, create)?;
        }
        // Best effort, as below: a store read where it cannot be written is read without them, only slower.
        let _ = store.add_missing_indexes();
        // Best effort: a store that cannot be written now (read-only media) is still readable.
        let _ = store.end_abandoned_runs();
        Ok(store)
    }

    /// Create the [`INDEXES`](crate::schema::INDEXES) a store made before them lacks; nothing when it has them all.
    fn add_missing_indexes(&mut self) -> Result<(), StoreError> {
        let missing: Vec<(&str, &str)> = self.read(|sql| {
            let mut missing = Vec::new();
            for (name, on) in crate::schema::INDEXES {
                if !B::has_index(sql, name)? {
                    missing.push((name, on));
                }
            }
            Ok(missing)
        })?;
        if missing.is_empty() {
            return Ok(());
        }
        self.write(|sql| {
            for (name, on) in missing {
                sql.batch(&format!("CREATE INDEX IF NOT EXISTS {name} ON {on}"))?;
            }
            Ok(())
        })
    }

    fn migrate(&mut self, location: &str, create: bool) -> Result<(), StoreError> {
        self.write(|sql| {
            B::lock_schema(sql)?;
            // Another process may have created or migrated the store meanwhile.
            let version = B::schema_version(sql, location)?;
            if version == LATEST_VERSION {
                return Ok(());
            }
            if version == 0 && !create {
                return Err(StoreError::Missing(location.to_string()));
            }
            for next in version + 1..=LATEST_VERSION {
                sql.batch(&migration(B::RULES, next))?;
            }
            // A store made before digests (version 1 to 5) digests the results it holds; a new one holds none.
            if (1..6).contains(&version) {
                digest_kept_results(sql)?;
            }
            B::set_schema_version(sql, LATEST_VERSION)
        })
    }

    /// Run `work` in one write transaction; nothing of it is kept when it fails.
    pub(crate) fn write<T>(
        &mut self,
        work: impl FnOnce(&mut Sql<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.transaction(B::RULES.dialect().ops().begin_write, work)
    }

    /// Run `work` on one consistent snapshot.
    pub(crate) fn read<T>(&self, work: impl FnOnce(&mut Sql<'_>) -> Result<T, StoreError>) -> Result<T, StoreError> {
        self.transaction(B::RULES.dialect().ops().begin_snapshot, work)
    }

    fn transaction<T>(
        &self,
        begin: &str,
        work: impl FnOnce(&mut Sql<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut sql = self.backend.connection(&self.location);
        sql.batch(begin)?;
        match work(&mut sql) {
            Ok(value) => {
                sql.batch("COMMIT")?;
                Ok(value)
            }
            Err(error) => {
                // The error to report is the work's; a failed rollback leaves nothing behind either way.
                let _ = sql.batch("ROLLBACK");
                Err(error)
            }
        }
    }

    /// Mark runs whose envbench process is gone (killed hard, machine restarted) as interrupted: on positive evidence
    /// only ([`crate::process`]), so a run still running is never ended here. The status is set once, as any run's;
    /// such runs can then be pushed.
    pub(crate) fn end_abandoned_runs(&mut self) -> Result<usize, StoreError> {
        let me = ProcessIdentity::current(false);
        let now = now_utc();
        let running =
            self.read(|sql| sql.query("SELECT id, started_at, process, uuid FROM runs WHERE status = 'running'", &[]))?;
        let mut abandoned = Vec::new();
        for row in running {
            let uuid = row.text(3)?;
            let owner = row.optional_text(2)?.and_then(|text| ProcessIdentity::parse(&text));
            // Runs of this process are probed like any other: its lock conflicts with a second look from here too.
            let lock = owner.as_ref().filter(|owner| owner.holds_lock()).map(|_| self.backend.run_liveness(&uuid));
            if let Some(reason) = abandoned_reason(owner.as_ref(), me.as_ref(), lock, &row.text(1)?, &now) {
                abandoned.push((row.int(0)?, uuid, reason));
            }
        }
        if abandoned.is_empty() {
            return Ok(0);
        }
        let ended = self.write(|sql| {
            let mut ended = 0;
            for (id, _, reason) in &abandoned {
                ended += sql.execute(
                    "UPDATE runs SET status = 'interrupted', status_reason = ?, ended_at = ? \
                     WHERE id = ? AND status = 'running'",
                    params![reason.as_str(), now.as_str(), *id],
                )? as usize;
            }
            Ok(ended)
        })?;
        for (_, uuid, _) in &abandoned {
            self.backend.clear_run(uuid);
        }
        Ok(ended)
    }

    fn summaries(sql: &mut Sql<'_>, filter: &RunFilter, uuid: Option<&str>) -> Result<Vec<RunSummary>, StoreError> {
        // Flags are stored as a JSON array of strings: the quoted flag matches it exactly.
        let mut text = format!(
            "SELECT r.id, r.uuid, r.workload, r.label, f.hostname, r.started_at, r.ended_at, r.status, \
             r.status_reason, r.suite_id, (SELECT count(*) FROM results x WHERE x.run_id = r.id), \
             (SELECT count(*) FROM results x WHERE x.run_id = r.id AND x.flags LIKE '%\"{DISTURBED_FLAG}\"%'), \
             k.name \
             FROM runs r JOIN fingerprints f ON f.id = r.fingerprint_id \
             LEFT JOIN uploads u ON u.run_id = r.id LEFT JOIN upload_tokens k ON k.id = u.token_id WHERE 1 = 1",
        );
        let mut values: Vec<SqlValue> = Vec::new();
        let mut condition = |clause: &str, given: &[&String]| {
            text.push_str(clause);
            values.extend(given.iter().map(|v| SqlValue::from(*v)));
        };
        let uuid = uuid.map(str::to_string);
        if let Some(uuid) = &uuid {
            condition(" AND r.uuid = ?", &[uuid]);
        }
        if let Some(workload) = &filter.workload {
            condition(" AND r.workload = ?", &[workload]);
        }
        if let Some(label) = &filter.label {
            condition(" AND r.label = ?", &[label]);
        }
        if let Some(host) = &filter.host {
            condition(" AND f.hostname = ?", &[host]);
        }
        if let Some(submitter) = &filter.submitter {
            condition(" AND k.name = ?", &[submitter]);
        }
        for (key, value) in &filter.tags {
            condition(
                // By the tags' index of values: the runs of one suite, not a look at every run's tags.
                " AND r.id IN (SELECT t.run_id FROM run_tags t WHERE t.key = ? AND t.value = ?)",
                &[key, value],
            );
        }
        text.push_str(" ORDER BY r.started_at DESC, r.id DESC");
        if let Some(limit) = filter.limit {
            text.push_str(&format!(" LIMIT {limit}"));
        }
        let rows = sql.query(&text, &values)?;
        let ids = rows.iter().map(|row| row.int(0)).collect::<Result<Vec<i64>, _>>()?;
        let mut tags = Self::tags_of(sql, &ids)?;
        let mut summaries = Vec::with_capacity(rows.len());
        for row in rows {
            let tags = tags.remove(&row.int(0)?).unwrap_or_default();
            let status = row.text(7)?;
            summaries.push(RunSummary {
                uuid: row.text(1)?,
                workload: row.text(2)?,
                label: row.optional_text(3)?,
                tags,
                host: row.optional_text(4)?,
                started_at: row.text(5)?,
                ended_at: row.optional_text(6)?,
                status: RunStatus::parse(&status)
                    .ok_or_else(|| StoreError::Corrupt(format!("run status '{status}'")))?,
                status_reason: row.optional_text(8)?,
                suite_id: row.optional_text(9)?,
                result_count: row.int(10)? as usize,
                disturbed: row.int(11)? > 0,
                submitter: row.optional_text(12)?,
            });
        }
        Ok(summaries)
    }

    /// The tags of these runs, by run id.
    fn tags_of(sql: &mut Sql<'_>, ids: &[i64]) -> Result<BTreeMap<i64, BTreeMap<String, String>>, StoreError> {
        let mut tags: BTreeMap<i64, BTreeMap<String, String>> = BTreeMap::new();
        let ids: Vec<SqlValue> = ids.iter().map(|&id| SqlValue::from(id)).collect();
        for row in sql.query_in("SELECT run_id, key, value FROM run_tags WHERE run_id IN ({keys})", &ids)? {
            tags.entry(row.int(0)?).or_default().insert(row.text(1)?, row.text(2)?);
        }
        Ok(tags)
    }

    /// One run, with every sample or (`digested`) with each digest in place of its result's samples.
    fn load(&self, run_uuid: &str, digested: bool) -> Result<StoredRun, StoreError> {
        self.read(|sql| {
            let row = sql
                .query_optional(
                    "SELECT r.id, r.command_line, r.tool_version, f.hash, f.document FROM runs r \
                     JOIN fingerprints f ON f.id = r.fingerprint_id WHERE r.uuid = ?",
                    params![run_uuid],
                )?
                .ok_or_else(|| StoreError::NoSuchRun(run_uuid.to_string()))?;
            let run_id = row.int(0)?;
            let summary = Self::summaries(sql, &RunFilter::default(), Some(run_uuid))?
                .into_iter()
                .next()
                .ok_or_else(|| StoreError::NoSuchRun(run_uuid.to_string()))?;
            Ok(StoredRun {
                summary,
                command_line: row.text(1)?,
                tool_version: row.text(2)?,
                fingerprint_hash: row.text(3)?,
                fingerprint: json(&row.text(4)?)?,
                results: Self::results(sql, run_id, digested)?,
                series: Self::series(sql, run_id)?,
                attachments: Self::attachments(sql, run_id)?,
            })
        })
    }

    /// A run's results with every sample; or, `digested`, with the digest of each result that has one instead of its
    /// samples (flagged so), whose samples are then not read at all.
    fn results(sql: &mut Sql<'_>, run_id: i64, digested: bool) -> Result<Vec<StoredResult>, StoreError> {
        let mut samples: BTreeMap<i64, Vec<f64>> = BTreeMap::new();
        let mut digests: BTreeMap<i64, usize> = BTreeMap::new();
        if digested {
            for row in sql.query(
                "SELECT d.result_id, d.sample_count, d.points FROM sample_digests d JOIN results x \
                 ON x.id = d.result_id WHERE x.run_id = ?",
                params![run_id],
            )? {
                let points: Vec<f64> = json(&row.text(2)?)?;
                samples.insert(row.int(0)?, points);
                digests.insert(row.int(0)?, row.int(1)? as usize);
            }
        }
        // The results filtered first, so a digested result's samples are never scanned.
        let query = if digests.is_empty() {
            "SELECT s.result_id, s.value FROM samples s JOIN results x ON x.id = s.result_id \
             WHERE x.run_id = ? ORDER BY s.result_id, s.seq"
        } else {
            "SELECT s.result_id, s.value FROM results x JOIN samples s ON s.result_id = x.id \
             WHERE x.run_id = ? AND NOT EXISTS (SELECT 1 FROM sample_digests d WHERE d.result_id = x.id) \
             ORDER BY s.result_id, s.seq"
        };
        for row in sql.query(query, params![run_id])? {
            samples.entry(row.int(0)?).or_default().push(row.real(1)?);
        }
        let rows = sql.query(
            "SELECT id, workload, workload_version, test_id, parameters, parameters_hash, metric, unit, direction, \
             flags FROM results WHERE run_id = ? ORDER BY id",
            params![run_id],
        )?;
        let mut results = Vec::with_capacity(rows.len());
        for row in rows {
            let direction = row.text(8)?;
            results.push(StoredResult {
                record: ResultRecord {
                    workload: row.text(1)?,
                    workload_version: row.int(2)? as u32,
                    test_id: row.text(3)?,
                    parameters: json(&row.text(4)?)?,
                    metric: row.text(6)?,
                    unit: row.text(7)?,
                    direction: Direction::parse(&direction)
                        .ok_or_else(|| StoreError::Corrupt(format!("result direction '{direction}'")))?,
                    samples: samples.remove(&row.int(0)?).unwrap_or_default(),
                    flags: {
                        let mut flags: Vec<String> = json(&row.text(9)?)?;
                        if let Some(count) = digests.get(&row.int(0)?) {
                            flags.push(crate::digest::digest_flag(*count));
                        }
                        flags
                    },
                },
                parameters_hash: row.text(5)?,
            });
        }
        Ok(results)
    }

    fn series(sql: &mut Sql<'_>, run_id: i64) -> Result<Option<SamplerSeries>, StoreError> {
        let Some(header) = sql.query_optional(
            "SELECT interval_ms, devices, own_cpu_seconds, wall_seconds FROM sampler_series WHERE run_id = ?",
            params![run_id],
        )?
        else {
            return Ok(None);
        };
        let mut builder = SeriesBuilder::new(header.int(0)?, json(&header.text(1)?)?, header.real(2)?, header.real(3)?);
        let order = insertion_order(B::RULES.dialect());
        let cpu = format!(
            "SELECT kind, start_ms, end_ms, step, {} FROM sampler_cpu WHERE run_id = ? ORDER BY {order}",
            CPU_COLUMNS.join(", ")
        );
        for r in sql.query(&cpu, params![run_id])? {
            builder.cpu_row(&r.text(0)?, r.int(1)?, r.int(2)?, r.optional_text(3)?, figures(&r, 4)?);
        }
        let disk = format!(
            "SELECT kind, start_ms, end_ms, step, device, {} FROM sampler_disk WHERE run_id = ? ORDER BY {order}",
            DISK_COLUMNS.join(", ")
        );
        for r in sql.query(&disk, params![run_id])? {
            builder.disk_row(&r.text(0)?, r.int(1)?, r.int(2)?, r.optional_text(3)?, r.text(4)?, figures(&r, 5)?);
        }
        let contention = format!(
            "SELECT kind, start_ms, end_ms, step, {} FROM sampler_contention WHERE run_id = ? ORDER BY {order}",
            CONTENTION_COLUMNS.join(", ")
        );
        for r in sql.query(&contention, params![run_id])? {
            let stall = |i: usize| r.optional_int(6 + i);
            let row = ContentionRow {
                busy_cpu_seconds: r.real(4)?,
                own_cpu_seconds: r.real(5)?,
                stalls: [stall(0)?, stall(1)?, stall(2)?, stall(3)?, stall(4)?, stall(5)?],
                steal_percent: r.optional_real(12)?,
                local_server_cpu_seconds: r.optional_real(13)?,
                drives_local_server: r.optional_int(14)?,
                own_storage_bytes: r.optional_int(15)?,
                pressure_note: r.optional_text(16)?,
            };
            builder.contention_row(&r.text(0)?, r.int(1)?, r.int(2)?, r.optional_text(3)?, row);
        }
        Ok(Some(builder.finish()))
    }

    fn attachments(sql: &mut Sql<'_>, run_id: i64) -> Result<BTreeMap<String, serde_json::Value>, StoreError> {
        sql.query("SELECT name, document FROM run_attachments WHERE run_id = ?", params![run_id])?
            .iter()
            .map(|row| Ok((row.text(0)?, json(&row.text(1)?)?)))
            .collect()
    }
}

/// [`Backend::reserve_ids`], without a round trip for none.
fn reserved<B: Backend>(sql: &mut Sql<'_>, table: &str, count: usize) -> Result<Vec<i64>, StoreError> {
    if count == 0 { Ok(Vec::new()) } else { B::reserve_ids(sql, table, count) }
}

/// The length of a run's uuid in its text form.
const UUID_LENGTH: usize = 36;

/// A JSON column; text that does not parse means a damaged store.
fn json<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt(e.to_string()))
}

/// `N` figure columns starting at column `first`.
fn figures<const N: usize>(row: &Row, first: usize) -> Result<[f64; N], StoreError> {
    let mut values = [0.0; N];
    for (i, value) in values.iter_mut().enumerate() {
        *value = row.real(first + i)?;
    }
    Ok(values)
}

/// Copy in runs kept elsewhere, inside the caller's write transaction: each run's id here, or `None` when a run with
/// its uuid is already here (and nothing changed). Each part of every run goes in a table at a time, as few
/// statements as the placeholder limit allows: a statement for each result, its samples and each series table made a
/// push to PostgreSQL wait for some thirty round trips a run.
pub(crate) fn import_within<B: Backend>(
    sql: &mut Sql<'_>,
    runs: &[&StoredRun],
) -> Result<Vec<Option<i64>>, StoreError> {
    // For each run, where it is among the new runs (none when it is here already).
    let mut places: Vec<Option<usize>> = Vec::with_capacity(runs.len());
    let (mut tags, mut results, mut series, mut attachments) =
        (Vec::new(), Vec::new(), SeriesRows::default(), Vec::new());
    let mut fingerprints: BTreeMap<&str, i64> = BTreeMap::new();
    let mut new_runs = Vec::new();
    let mut uuids: Vec<&str> = runs.iter().map(|run| run.summary.uuid.as_str()).collect();
    uuids.sort_unstable();
    uuids.dedup();
    B::lock_runs(sql, &uuids)?;
    let keys: Vec<SqlValue> = uuids.iter().map(|&uuid| SqlValue::from(uuid)).collect();
    let mut here = std::collections::BTreeSet::new();
    for row in sql.query_in("SELECT uuid FROM runs WHERE uuid IN ({keys})", &keys)? {
        here.insert(row.text(0)?);
    }
    for &run in runs {
        let s = &run.summary;
        // Here before, or twice in this batch.
        if !here.insert(s.uuid.clone()) {
            places.push(None);
            continue;
        }
        let fingerprint_id = match fingerprints.get(run.fingerprint_hash.as_str()) {
            Some(&id) => id,
            None => {
                let id = fingerprint_row(sql, &run.fingerprint_hash, &run.fingerprint, &s.started_at)?;
                fingerprints.insert(&run.fingerprint_hash, id);
                id
            }
        };
        places.push(Some(new_runs.len()));
        new_runs.push((run, fingerprint_id));
    }
    // Added as running, filled, then ended as it ended there: the same append-only rules as any run.
    let run_ids = reserved::<B>(sql, "runs", new_runs.len())?;
    let rows: Vec<Vec<SqlValue>> = new_runs
        .iter()
        .zip(&run_ids)
        .map(|(&(run, fingerprint), &id)| run_row(id, &run.summary, &run.command_line, &run.tool_version, fingerprint))
        .collect();
    sql.insert_rows("runs", &RUN_COLUMNS, &rows)?;
    for (&(run, _), &run_id) in new_runs.iter().zip(&run_ids) {
        let s = &run.summary;
        tags.extend(tag_rows(run_id, s));
        results.extend(run.results.iter().map(|r| (run_id, &r.record, r.parameters_hash.as_str())));
        if let Some(run_series) = &run.series {
            series.add(run_id, run_series);
        }
        attachments.extend(run.attachments.iter().map(|(name, document)| attachment_row(run_id, name, document)));
    }
    sql.insert_rows("run_tags", &["run_id", "key", "value"], &tags)?;
    let result_ids = reserved::<B>(sql, "results", results.len())?;
    insert_results(sql, &results, &result_ids)?;
    series.insert(sql)?;
    insert_attachments(sql, &attachments)?;
    let ends: Vec<(&str, RunStatus, Option<&str>, &str)> = new_runs
        .iter()
        .map(|(run, _)| &run.summary)
        .filter(|s| s.status != RunStatus::Running)
        .map(|s| {
            (s.uuid.as_str(), s.status, s.status_reason.as_deref(), s.ended_at.as_deref().unwrap_or(&s.started_at))
        })
        .collect();
    end_runs(sql, &ends)?;
    Ok(places.into_iter().map(|place| place.map(|i| run_ids[i])).collect())
}

impl<B: Backend> RecordRuns for SqlStore<B> {
    fn begin_run(&mut self, request: &RunRequest, fingerprint: &Fingerprint) -> Result<String, StoreError> {
        let summary = RunSummary {
            uuid: uuid::Uuid::new_v4().to_string(),
            workload: request.workload.clone(),
            label: request.label.clone(),
            tags: request.tags.clone(),
            host: fingerprint.os.hostname.clone(),
            started_at: now_utc(),
            ended_at: None,
            status: RunStatus::Running,
            status_reason: None,
            result_count: 0,
            suite_id: request.suite_id.clone(),
            disturbed: false,
            submitter: None,
        };
        let hash = fingerprint.hash();
        // The lock is taken before the run is recorded, so nobody ever sees the run without it.
        let lock = self.backend.hold_run(&summary.uuid, &request.command_line);
        let process = ProcessIdentity::current(lock.is_some()).map(|p| p.to_string());
        let recorded = self.write(|sql| {
            let fingerprint_id = fingerprint_row(sql, &hash, fingerprint, &summary.started_at)?;
            insert_run(sql, &summary, &request.command_line, envbench_core::TOOL_VERSION, fingerprint_id, process)
        });
        match (recorded, lock) {
            (Ok(_), Some(lock)) => liveness::keep(&summary.uuid, lock),
            (Ok(_), None) => {}
            (Err(error), Some(lock)) => {
                liveness::drop_lock(lock);
                return Err(error);
            }
            (Err(error), None) => return Err(error),
        }
        Ok(summary.uuid)
    }

    fn add_results(&mut self, run_uuid: &str, results: &[ResultRecord]) -> Result<(), StoreError> {
        self.write(|sql| {
            let run_id = run_id(sql, run_uuid)?;
            let hashes: Vec<String> = results.iter().map(ResultRecord::parameters_hash).collect();
            let results: Vec<(i64, &ResultRecord, &str)> =
                results.iter().zip(&hashes).map(|(r, h)| (run_id, r, h.as_str())).collect();
            let ids = reserved::<B>(sql, "results", results.len())?;
            insert_results(sql, &results, &ids)
        })
    }

    fn add_series(&mut self, run_uuid: &str, series: &SamplerSeries) -> Result<(), StoreError> {
        self.write(|sql| {
            let run_id = run_id(sql, run_uuid)?;
            insert_series(sql, run_id, series)
        })
    }

    fn add_attachment(&mut self, run_uuid: &str, name: &str, document: &serde_json::Value) -> Result<(), StoreError> {
        self.write(|sql| {
            let run_id = run_id(sql, run_uuid)?;
            insert_attachment(sql, run_id, name, document)
        })
    }

    fn finish_run(&mut self, run_uuid: &str, status: RunStatus, reason: Option<&str>) -> Result<(), StoreError> {
        let ended = self.write(|sql| end_run(sql, run_uuid, status, reason, &now_utc()));
        if matches!(ended, Ok(()) | Err(StoreError::RunAlreadyEnded(_))) {
            // Recorded as ended: the lock has nothing left to show.
            liveness::release(run_uuid);
        }
        ended
    }
}

impl<B: Backend> ReadRuns for SqlStore<B> {
    fn list_runs(&self, filter: &RunFilter) -> Result<Vec<RunSummary>, StoreError> {
        self.read(|sql| Self::summaries(sql, filter, None))
    }

    fn find_run(&self, id_or_prefix: &str) -> Result<String, StoreError> {
        let prefix = id_or_prefix.trim().to_ascii_lowercase();
        if prefix.is_empty() || !prefix.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
            return Err(StoreError::NoSuchRun(id_or_prefix.to_string()));
        }
        // A whole uuid is looked up by the unique index; only a prefix is a pattern (a scan: a push of 10,000 runs
        // scanned them 10,000 times).
        let query = if prefix.len() == UUID_LENGTH {
            "SELECT uuid FROM runs WHERE uuid = ?"
        } else {
            "SELECT uuid FROM runs WHERE uuid LIKE ? || '%' ORDER BY uuid"
        };
        let matches = self.read(|sql| {
            sql.query(query, params![prefix.as_str()])?
                .iter()
                .map(|row| row.text(0))
                .collect::<Result<Vec<String>, _>>()
                .map_err(StoreError::from)
        })?;
        match matches.len() {
            0 => Err(StoreError::NoSuchRun(id_or_prefix.to_string())),
            1 => Ok(matches.into_iter().next().expect("one match")),
            count => Err(StoreError::AmbiguousRun { prefix: id_or_prefix.to_string(), count }),
        }
    }

    fn load_run(&self, run_uuid: &str) -> Result<StoredRun, StoreError> {
        self.load(run_uuid, false)
    }

    fn load_run_for_pages(&self, run_uuid: &str) -> Result<StoredRun, StoreError> {
        self.load(run_uuid, true)
    }
}

impl<B: Backend> ReadEnvironments for SqlStore<B> {
    fn environments(&self) -> Result<RunEnvironments, StoreError> {
        self.read(|sql| {
            let query = "SELECT r.uuid, f.hash FROM runs r JOIN fingerprints f ON f.id = r.fingerprint_id";
            let runs = sql.query(query, &[])?;
            environments_from(sql, runs)
        })
    }

    fn fingerprint_tallies(&self) -> Result<(RunEnvironments, Vec<FingerprintTally>), StoreError> {
        self.read(|sql| Ok((environments_from(sql, Vec::new())?, crate::tallies::tallies_of(sql)?)))
    }

    fn newest_tag_values(&self, key: &str, limit: usize) -> Result<Vec<String>, StoreError> {
        self.read(|sql| {
            let query = format!(
                "SELECT t.value FROM run_tags t JOIN runs r ON r.id = t.run_id WHERE t.key = ? GROUP BY t.value \
                 ORDER BY min(r.started_at) DESC, min(r.id) DESC LIMIT {limit}"
            );
            sql.query(&query, &[SqlValue::from(key)])?.iter().map(|row| Ok(row.text(0)?)).collect()
        })
    }

    fn environments_of(&self, uuids: &[&str]) -> Result<RunEnvironments, StoreError> {
        self.read(|sql| {
            let keys: Vec<SqlValue> = uuids.iter().map(|&uuid| SqlValue::from(uuid)).collect();
            let query = "SELECT r.uuid, f.hash FROM runs r JOIN fingerprints f ON f.id = r.fingerprint_id \
                         WHERE r.uuid IN ({keys})";
            let runs = sql.query_in(query, &keys)?;
            environments_from(sql, runs)
        })
    }
}

/// Every fingerprint, with these rows of (run uuid, fingerprint hash).
fn environments_from(sql: &mut Sql<'_>, runs: Vec<Row>) -> Result<RunEnvironments, StoreError> {
    let mut environments = RunEnvironments::default();
    for row in sql.query("SELECT hash, document FROM fingerprints", &[])? {
        environments.fingerprints.insert(row.text(0)?, json(&row.text(1)?)?);
    }
    for row in runs {
        environments.runs.insert(row.text(0)?, row.text(1)?);
    }
    Ok(environments)
}

impl<B: Backend> ImportRuns for SqlStore<B> {
    fn import_run(&mut self, run: &StoredRun) -> Result<ImportOutcome, StoreError> {
        Ok(self.import_runs(std::slice::from_ref(run))?.remove(0))
    }

    fn refresh_statistics(&mut self) -> Result<(), StoreError> {
        self.write(|sql| B::analyze(sql))
    }

    fn import_runs(&mut self, runs: &[StoredRun]) -> Result<Vec<ImportOutcome>, StoreError> {
        self.write(|sql| {
            let runs: Vec<&StoredRun> = runs.iter().collect();
            Ok(import_within::<B>(sql, &runs)?
                .into_iter()
                .map(|id| if id.is_some() { ImportOutcome::Imported } else { ImportOutcome::AlreadyPresent })
                .collect())
        })
    }
}

impl<B: Backend> FleetBoard for SqlStore<B> {
    fn post_fleet_event(
        &mut self,
        fleet: &str,
        sender: &str,
        kind: &str,
        body: &serde_json::Value,
    ) -> Result<FleetEvent, StoreError> {
        let text = serde_json::to_string(body).map_err(|e| StoreError::Corrupt(format!("a fleet message: {e}")))?;
        let row = self.write(|sql| {
            sql.query_one(
                &format!(
                    "INSERT INTO fleet_events (fleet, sender, kind, body, at_s) VALUES (?, ?, ?, ?, {}) \
                     RETURNING id, at_s",
                    B::RULES.dialect().ops().clock_seconds
                ),
                params![fleet, sender, kind, text.as_str()],
            )
        })?;
        Ok(FleetEvent {
            id: row.int(0)?,
            fleet: fleet.to_string(),
            sender: sender.to_string(),
            kind: kind.to_string(),
            body: body.clone(),
            at_s: row.real(1)?,
        })
    }

    fn fleet_events(&self, fleet: &str, since_s: f64) -> Result<Vec<FleetEvent>, StoreError> {
        let rows = self.read(|sql| {
            sql.query(
                "SELECT id, sender, kind, body, at_s FROM fleet_events WHERE fleet = ? AND at_s >= ? \
                 ORDER BY at_s, id",
                params![fleet, since_s],
            )
        })?;
        rows.iter()
            .map(|row| {
                Ok(FleetEvent {
                    id: row.int(0)?,
                    fleet: fleet.to_string(),
                    sender: row.text(1)?,
                    kind: row.text(2)?,
                    body: json(&row.text(3)?)?,
                    at_s: row.real(4)?,
                })
            })
            .collect()
    }

    fn clock_seconds(&self) -> Result<f64, StoreError> {
        self.read(|sql| {
            Ok(sql.query_one(&format!("SELECT {}", B::RULES.dialect().ops().clock_seconds), &[])?.real(0)?)
        })
    }
}
