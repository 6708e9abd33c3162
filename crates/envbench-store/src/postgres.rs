//! The PostgreSQL backend: a shared store for a team, with the same tables, the same append-only rules and the same
//! schema versions as the SQLite file.
//!
//! The store lives in the connection's current schema (the first existing schema of `search_path`, `public` by
//! default), so one database can hold several stores: `?options=-c%20search_path%3Dmyschema` in the URL picks one.
//! The table `envbench_store` marks the schema as an envbench store and holds its schema version. Migrations run in
//! one transaction under an advisory lock per schema, so envbench processes starting together migrate once.

use crate::error::StoreError;
use crate::location::StoreLocation;
use crate::model::{ImportOutcome, RunFilter, RunSummary, StoredResult, StoredRun};
use crate::schema::latest_version;
use crate::series_rows::{
    SeriesBuilder, SeriesRow, cpu_insert_sql, cpu_select_sql, cpu_values, disk_insert_sql, disk_select_sql,
    disk_values, series_rows,
};
use crate::{ResultStore, schema};
use envbench_core::fingerprint::Fingerprint;
use envbench_core::model::{Direction, ResultRecord, RunRequest, RunStatus, now_utc};
use envbench_core::sampler::SamplerSeries;
use postgres::types::ToSql;
use postgres::{Client, GenericClient, IsolationLevel, NoTls, Transaction};
use std::cell::RefCell;
use std::collections::BTreeMap;

/// The name envbench writes into `envbench_store.application`.
const APPLICATION: &str = "envbench";

/// First key of the advisory lock taken while migrating ("EnvB", as SQLite's application id); the second key is the
/// hash of the schema's name, so stores in different schemas do not wait for each other.
const MIGRATION_LOCK: i32 = schema::APPLICATION_ID as i32;

/// The tables of an envbench store. Any of them present without the `envbench_store` marker means the schema holds
/// someone else's tables, which envbench must not touch.
const TABLES: &[&str] = &[
    "envbench_store",
    "fingerprints",
    "runs",
    "run_tags",
    "results",
    "samples",
    "sampler_series",
    "sampler_cpu",
    "sampler_disk",
    "run_attachments",
];

/// The PostgreSQL translation of each SQLite migration in [`schema::MIGRATIONS`], same index, same version.
/// Differences: BIGSERIAL/BIGINT keys, DOUBLE PRECISION, an `id` column on the sampler tables (SQLite orders them by
/// rowid), plpgsql trigger functions, and TRUNCATE refused as well as UPDATE and DELETE.
const MIGRATIONS: &[&str] = &[
    // 1
    r#"
    CREATE TABLE envbench_store (
        application TEXT NOT NULL,
        version BIGINT NOT NULL
    );
    COMMENT ON TABLE envbench_store IS 'Marks this schema as an envbench results store; holds its schema version.';
    CREATE TABLE fingerprints (
        id BIGSERIAL PRIMARY KEY,
        hash TEXT NOT NULL UNIQUE,
        hostname TEXT,
        document TEXT NOT NULL,
        first_seen_at TEXT NOT NULL
    );
    CREATE TABLE runs (
        id BIGSERIAL PRIMARY KEY,
        uuid TEXT NOT NULL UNIQUE,
        workload TEXT NOT NULL,
        label TEXT,
        command_line TEXT NOT NULL,
        tool_version TEXT NOT NULL,
        started_at TEXT NOT NULL,
        ended_at TEXT,
        status TEXT NOT NULL CHECK (status IN ('running', 'complete', 'failed', 'interrupted')),
        status_reason TEXT,
        fingerprint_id BIGINT NOT NULL REFERENCES fingerprints(id),
        suite_id TEXT
    );
    CREATE INDEX runs_by_start ON runs(started_at);
    CREATE TABLE run_tags (
        run_id BIGINT NOT NULL REFERENCES runs(id),
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (run_id, key)
    );
    CREATE TABLE results (
        id BIGSERIAL PRIMARY KEY,
        run_id BIGINT NOT NULL REFERENCES runs(id),
        workload TEXT NOT NULL,
        workload_version BIGINT NOT NULL,
        test_id TEXT NOT NULL,
        parameters TEXT NOT NULL,
        parameters_hash TEXT NOT NULL,
        metric TEXT NOT NULL,
        unit TEXT NOT NULL,
        direction TEXT NOT NULL CHECK (direction IN ('higher', 'lower')),
        flags TEXT NOT NULL
    );
    CREATE INDEX results_by_run ON results(run_id);
    CREATE INDEX results_for_matching ON results(workload, test_id, parameters_hash, metric);
    CREATE TABLE samples (
        result_id BIGINT NOT NULL REFERENCES results(id),
        seq BIGINT NOT NULL,
        value DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (result_id, seq)
    );
    CREATE TABLE sampler_series (
        run_id BIGINT PRIMARY KEY REFERENCES runs(id),
        interval_ms BIGINT NOT NULL,
        devices TEXT NOT NULL,
        own_cpu_seconds DOUBLE PRECISION NOT NULL,
        wall_seconds DOUBLE PRECISION NOT NULL
    );
    CREATE TABLE sampler_cpu (
        id BIGSERIAL PRIMARY KEY,
        run_id BIGINT NOT NULL REFERENCES runs(id),
        kind TEXT NOT NULL CHECK (kind IN ('point', 'step')),
        start_ms BIGINT NOT NULL,
        end_ms BIGINT NOT NULL,
        step TEXT,
        user_percent DOUBLE PRECISION NOT NULL,
        nice_percent DOUBLE PRECISION NOT NULL,
        system_percent DOUBLE PRECISION NOT NULL,
        iowait_percent DOUBLE PRECISION NOT NULL,
        irq_percent DOUBLE PRECISION NOT NULL,
        steal_percent DOUBLE PRECISION NOT NULL,
        idle_percent DOUBLE PRECISION NOT NULL
    );
    CREATE INDEX sampler_cpu_by_run ON sampler_cpu(run_id);
    CREATE TABLE sampler_disk (
        id BIGSERIAL PRIMARY KEY,
        run_id BIGINT NOT NULL REFERENCES runs(id),
        kind TEXT NOT NULL CHECK (kind IN ('point', 'step')),
        start_ms BIGINT NOT NULL,
        end_ms BIGINT NOT NULL,
        step TEXT,
        device TEXT NOT NULL,
        reads_per_s DOUBLE PRECISION NOT NULL,
        writes_per_s DOUBLE PRECISION NOT NULL,
        read_mb_per_s DOUBLE PRECISION NOT NULL,
        write_mb_per_s DOUBLE PRECISION NOT NULL,
        read_request_kib DOUBLE PRECISION NOT NULL,
        write_request_kib DOUBLE PRECISION NOT NULL,
        read_await_ms DOUBLE PRECISION NOT NULL,
        write_await_ms DOUBLE PRECISION NOT NULL,
        queue_size DOUBLE PRECISION NOT NULL,
        util_percent DOUBLE PRECISION NOT NULL
    );
    CREATE INDEX sampler_disk_by_run ON sampler_disk(run_id);
    CREATE TABLE run_attachments (
        run_id BIGINT NOT NULL REFERENCES runs(id),
        name TEXT NOT NULL,
        document TEXT NOT NULL,
        PRIMARY KEY (run_id, name)
    );

    CREATE FUNCTION envbench_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION 'envbench % are append-only', TG_ARGV[0];
    END
    $$;
    CREATE FUNCTION envbench_runs_end_once() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF OLD.status <> 'running' OR NEW.uuid IS DISTINCT FROM OLD.uuid
            OR NEW.started_at IS DISTINCT FROM OLD.started_at OR NEW.fingerprint_id IS DISTINCT FROM OLD.fingerprint_id
            OR NEW.workload IS DISTINCT FROM OLD.workload OR NEW.label IS DISTINCT FROM OLD.label
            OR NEW.command_line IS DISTINCT FROM OLD.command_line THEN
            RAISE EXCEPTION 'envbench runs are append-only: only a running run may end, once';
        END IF;
        RETURN NEW;
    END
    $$;
    CREATE TRIGGER runs_end_once BEFORE UPDATE ON runs FOR EACH ROW EXECUTE FUNCTION envbench_runs_end_once();
    CREATE TRIGGER runs_no_delete BEFORE DELETE ON runs FOR EACH ROW EXECUTE FUNCTION envbench_append_only('runs');
    CREATE TRIGGER runs_no_truncate BEFORE TRUNCATE ON runs
        FOR EACH STATEMENT EXECUTE FUNCTION envbench_append_only('runs');
    CREATE TRIGGER fingerprints_no_change BEFORE UPDATE OR DELETE ON fingerprints
        FOR EACH ROW EXECUTE FUNCTION envbench_append_only('fingerprints');
    CREATE TRIGGER fingerprints_no_truncate BEFORE TRUNCATE ON fingerprints
        FOR EACH STATEMENT EXECUTE FUNCTION envbench_append_only('fingerprints');
    CREATE TRIGGER results_no_change BEFORE UPDATE OR DELETE ON results
        FOR EACH ROW EXECUTE FUNCTION envbench_append_only('results');
    CREATE TRIGGER results_no_truncate BEFORE TRUNCATE ON results
        FOR EACH STATEMENT EXECUTE FUNCTION envbench_append_only('results');
    CREATE TRIGGER samples_no_change BEFORE UPDATE OR DELETE ON samples
        FOR EACH ROW EXECUTE FUNCTION envbench_append_only('samples');
    CREATE TRIGGER samples_no_truncate BEFORE TRUNCATE ON samples
        FOR EACH STATEMENT EXECUTE FUNCTION envbench_append_only('samples');
    CREATE TRIGGER tags_no_change BEFORE UPDATE OR DELETE ON run_tags
        FOR EACH ROW EXECUTE FUNCTION envbench_append_only('tags');
    CREATE TRIGGER tags_no_truncate BEFORE TRUNCATE ON run_tags
        FOR EACH STATEMENT EXECUTE FUNCTION envbench_append_only('tags');
    "#,
];

/// A results store in a PostgreSQL schema.
pub struct PostgresStore {
    /// Reads need a mutable client too; the store is used from one thread at a time (like the SQLite one).
    client: RefCell<Client>,
    /// The URL without its password, for messages.
    location: String,
}

impl PostgresStore {
    /// Connect to `url` (`postgres://user@host:5432/database`) and, when `create`, create the store in the current
    /// schema or bring its schema up to date. Refuses a schema holding tables envbench did not create, and a store
    /// written by a newer envbench.
    pub fn open(url: &str, create: bool) -> Result<PostgresStore, StoreError> {
        let location = StoreLocation::Postgres(url.to_string()).display();
        let client = Client::connect(url, NoTls)
            .map_err(|e| StoreError::Unreachable { location: location.clone(), reason: e.to_string() })?;
        let store = PostgresStore { client: RefCell::new(client), location };
        store.prepare(create)?;
        Ok(store)
    }

    /// The URL of the store, without its password.
    pub fn location(&self) -> &str {
        &self.location
    }

    fn prepare(&self, create: bool) -> Result<(), StoreError> {
        let mut client = self.client.borrow_mut();
        let mut transaction = client.transaction()?;
        let schema: Option<String> = transaction.query_one("SELECT current_schema()::text", &[])?.get(0);
        let Some(schema) = schema else {
            return Err(StoreError::CannotCreate {
                location: self.location.clone(),
                reason: "no schema of search_path exists".into(),
            });
        };
        transaction.execute("SELECT pg_advisory_xact_lock($1, hashtext($2))", &[&MIGRATION_LOCK, &schema])?;
        let version = Self::check_schema(&mut transaction, &self.location, &schema)?;
        if version == latest_version() {
            return Ok(transaction.commit()?);
        }
        if version == 0 && !create {
            return Err(StoreError::Missing(self.location.clone()));
        }
        for migration in &MIGRATIONS[version as usize..] {
            transaction.batch_execute(migration)?;
        }
        if version == 0 {
            transaction.execute(
                "INSERT INTO envbench_store (application, version) VALUES ($1, $2)",
                &[&APPLICATION, &latest_version()],
            )?;
        } else {
            transaction.execute("UPDATE envbench_store SET version = $1", &[&latest_version()])?;
        }
        Ok(transaction.commit()?)
    }

    /// The schema version of the store in `schema` (0 when there is none yet), or why the schema is not one we may
    /// use.
    fn check_schema(transaction: &mut Transaction, location: &str, schema: &str) -> Result<i64, StoreError> {
        let present: Vec<String> = transaction
            .query(
                "SELECT table_name::text FROM information_schema.tables WHERE table_schema = $1 \
                 AND table_name = ANY($2) ORDER BY table_name",
                &[&schema, &TABLES],
            )?
            .iter()
            .map(|row| row.get(0))
            .collect();
        if present.is_empty() {
            return Ok(0);
        }
        let foreign = || StoreError::ForeignTables {
            location: location.to_string(),
            schema: schema.to_string(),
            tables: present.join(", "),
        };
        if !present.iter().any(|t| t == "envbench_store") {
            return Err(foreign());
        }
        let marker =
            transaction.query("SELECT application, version FROM envbench_store", &[]).map_err(|_| foreign())?;
        let [row] = marker.as_slice() else { return Err(foreign()) };
        let (application, version): (String, i64) = (row.get(0), row.get(1));
        if application != APPLICATION {
            return Err(foreign());
        }
        if version > latest_version() {
            return Err(StoreError::NewerSchema {
                location: location.to_string(),
                found: version,
                known: latest_version(),
            });
        }
        Ok(version)
    }

    fn run_id(client: &mut impl GenericClient, uuid: &str) -> Result<i64, StoreError> {
        client
            .query_opt("SELECT id FROM runs WHERE uuid = $1", &[&uuid])?
            .map(|row| row.get(0))
            .ok_or_else(|| StoreError::NoSuchRun(uuid.to_string()))
    }

    fn summaries(
        client: &mut impl GenericClient,
        filter: &RunFilter,
        uuid: Option<&str>,
    ) -> Result<Vec<RunSummary>, StoreError> {
        let mut sql = String::from(
            "SELECT r.id, r.uuid, r.workload, r.label, f.hostname, r.started_at, r.ended_at, r.status, \
             r.status_reason, r.suite_id, (SELECT count(*) FROM results x WHERE x.run_id = r.id) \
             FROM runs r JOIN fingerprints f ON f.id = r.fingerprint_id WHERE true",
        );
        let mut values: Vec<String> = Vec::new();
        let mut condition = |sql: &mut String, clause: &str, value: &str| {
            values.push(value.to_string());
            sql.push_str(&clause.replace('?', &format!("${}", values.len())));
        };
        if let Some(uuid) = uuid {
            condition(&mut sql, " AND r.uuid = ?", uuid);
        }
        if let Some(workload) = &filter.workload {
            condition(&mut sql, " AND r.workload = ?", workload);
        }
        if let Some(label) = &filter.label {
            condition(&mut sql, " AND r.label = ?", label);
        }
        if let Some(host) = &filter.host {
            condition(&mut sql, " AND f.hostname = ?", host);
        }
        for (key, value) in &filter.tags {
            condition(&mut sql, " AND EXISTS (SELECT 1 FROM run_tags t WHERE t.run_id = r.id AND t.key = ?", key);
            condition(&mut sql, " AND t.value = ?)", value);
        }
        sql.push_str(" ORDER BY r.started_at DESC, r.id DESC");
        if let Some(limit) = filter.limit {
            sql.push_str(&format!(" LIMIT {limit}"));
        }
        let parameters: Vec<&(dyn ToSql + Sync)> = values.iter().map(|v| v as &(dyn ToSql + Sync)).collect();
        let rows = client.query(&sql, &parameters)?;
        let mut runs = Vec::with_capacity(rows.len());
        for row in rows {
            let status: String = row.get(7);
            let run_id: i64 = row.get(0);
            let tags = client
                .query("SELECT key, value FROM run_tags WHERE run_id = $1 ORDER BY key", &[&run_id])?
                .iter()
                .map(|t| (t.get(0), t.get(1)))
                .collect();
            runs.push(RunSummary {
                uuid: row.get(1),
                workload: row.get(2),
                label: row.get(3),
                tags,
                host: row.get(4),
                started_at: row.get(5),
                ended_at: row.get(6),
                status: RunStatus::parse(&status)
                    .ok_or_else(|| StoreError::Corrupt(format!("run status '{status}'")))?,
                status_reason: row.get(8),
                result_count: row.get::<_, i64>(10) as usize,
                suite_id: row.get(9),
            });
        }
        Ok(runs)
    }

    fn results(client: &mut impl GenericClient, run_id: i64) -> Result<Vec<StoredResult>, StoreError> {
        let mut samples: BTreeMap<i64, Vec<f64>> = BTreeMap::new();
        for row in client.query(
            "SELECT s.result_id, s.value FROM samples s JOIN results x ON x.id = s.result_id \
             WHERE x.run_id = $1 ORDER BY s.result_id, s.seq",
            &[&run_id],
        )? {
            samples.entry(row.get(0)).or_default().push(row.get(1));
        }
        let rows = client.query(
            "SELECT id, workload, workload_version, test_id, parameters, parameters_hash, metric, unit, direction, \
             flags FROM results WHERE run_id = $1 ORDER BY id",
            &[&run_id],
        )?;
        let corrupt = |e: serde_json::Error| StoreError::Corrupt(e.to_string());
        let mut results = Vec::with_capacity(rows.len());
        for row in rows {
            let direction: String = row.get(8);
            results.push(StoredResult {
                record: ResultRecord {
                    workload: row.get(1),
                    workload_version: row.get::<_, i64>(2) as u32,
                    test_id: row.get(3),
                    parameters: serde_json::from_str(row.get(4)).map_err(corrupt)?,
                    metric: row.get(6),
                    unit: row.get(7),
                    direction: Direction::parse(&direction)
                        .ok_or_else(|| StoreError::Corrupt(format!("result direction '{direction}'")))?,
                    samples: samples.remove(&row.get::<_, i64>(0)).unwrap_or_default(),
                    flags: serde_json::from_str(row.get(9)).map_err(corrupt)?,
                },
                parameters_hash: row.get(5),
            });
        }
        Ok(results)
    }

    fn series(client: &mut impl GenericClient, run_id: i64) -> Result<Option<SamplerSeries>, StoreError> {
        let Some(header) = client.query_opt(
            "SELECT interval_ms, devices, own_cpu_seconds, wall_seconds FROM sampler_series WHERE run_id = $1",
            &[&run_id],
        )?
        else {
            return Ok(None);
        };
        let devices = serde_json::from_str(header.get(1)).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let mut builder = SeriesBuilder::new(header.get(0), devices, header.get(2), header.get(3));
        for r in client.query(&cpu_select_sql(placeholder, "id"), &[&run_id])? {
            builder.cpu_row(r.get(0), r.get(1), r.get(2), r.get(3), figures(&r, 4));
        }
        for r in client.query(&disk_select_sql(placeholder, "id"), &[&run_id])? {
            builder.disk_row(r.get(0), r.get(1), r.get(2), r.get(3), r.get(4), figures(&r, 5));
        }
        Ok(Some(builder.finish()))
    }

    fn attachments(
        client: &mut impl GenericClient,
        run_id: i64,
    ) -> Result<BTreeMap<String, serde_json::Value>, StoreError> {
        let mut attachments = BTreeMap::new();
        for row in client.query("SELECT name, document FROM run_attachments WHERE run_id = $1", &[&run_id])? {
            let document = serde_json::from_str(row.get(1)).map_err(|e| StoreError::Corrupt(e.to_string()))?;
            attachments.insert(row.get(0), document);
        }
        Ok(attachments)
    }

    /// Run `work` in one transaction; nothing of it is kept when it fails.
    fn write<T>(&mut self, work: impl FnOnce(&mut Transaction) -> Result<T, StoreError>) -> Result<T, StoreError> {
        let mut client = self.client.borrow_mut();
        let mut transaction = client.transaction()?;
        let value = work(&mut transaction)?;
        transaction.commit()?;
        Ok(value)
    }
}

/// A fingerprint's row id, inserting the fingerprint when this environment is new.
fn fingerprint_row(
    t: &mut Transaction,
    hash: &str,
    fingerprint: &Fingerprint,
    seen_at: &str,
) -> Result<i64, StoreError> {
    let document = serde_json::to_string(fingerprint).expect("fingerprint serializes");
    t.execute(
        "INSERT INTO fingerprints (hash, hostname, document, first_seen_at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (hash) DO NOTHING",
        &[&hash, &fingerprint.os.hostname, &document, &seen_at],
    )?;
    Ok(t.query_one("SELECT id FROM fingerprints WHERE hash = $1", &[&hash])?.get(0))
}

fn insert_tags(t: &mut Transaction, run_id: i64, tags: &BTreeMap<String, String>) -> Result<(), StoreError> {
    for (key, value) in tags {
        t.execute("INSERT INTO run_tags (run_id, key, value) VALUES ($1, $2, $3)", &[&run_id, key, value])?;
    }
    Ok(())
}

fn insert_result(
    t: &mut Transaction,
    run_id: i64,
    record: &ResultRecord,
    parameters_hash: &str,
) -> Result<(), StoreError> {
    let result_id: i64 = t
        .query_one(
            "INSERT INTO results (run_id, workload, workload_version, test_id, parameters, parameters_hash, metric, \
             unit, direction, flags) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id",
            &[
                &run_id,
                &record.workload,
                &i64::from(record.workload_version),
                &record.test_id,
                &record.canonical_parameters(),
                &parameters_hash,
                &record.metric,
                &record.unit,
                &record.direction.as_str(),
                &serde_json::to_string(&record.flags).expect("flags serialize"),
            ],
        )?
        .get(0);
    if !record.samples.is_empty() {
        // One statement per result: the samples arrive as two arrays and are unnested server-side.
        let seqs: Vec<i64> = (0..record.samples.len() as i64).collect();
        t.execute(
            "INSERT INTO samples (result_id, seq, value) SELECT $1, s, v FROM unnest($2::bigint[], $3::float8[]) AS u(s, v)",
            &[&result_id, &seqs, &record.samples],
        )?;
    }
    Ok(())
}

/// PostgreSQL's placeholder for parameter `n`.
fn placeholder(n: usize) -> String {
    format!("${n}")
}

/// `N` figure columns starting at column `first`.
fn figures<const N: usize>(row: &postgres::Row, first: usize) -> [f64; N] {
    std::array::from_fn(|i| row.get(first + i))
}

/// One row of `sampler_cpu` and its `sampler_disk` rows.
fn insert_series_row(t: &mut Transaction, run_id: i64, row: &SeriesRow) -> Result<(), StoreError> {
    let cpu = cpu_values(row.cpu);
    let mut values: Vec<&(dyn ToSql + Sync)> = vec![&run_id, &row.kind, &row.start_ms, &row.end_ms, &row.step];
    values.extend(cpu.iter().map(|v| v as &(dyn ToSql + Sync)));
    t.execute(&cpu_insert_sql(placeholder), &values)?;
    let insert_disk = t.prepare(&disk_insert_sql(placeholder))?;
    for disk in row.disks {
        let figures = disk_values(disk);
        let mut values: Vec<&(dyn ToSql + Sync)> =
            vec![&run_id, &row.kind, &row.start_ms, &row.end_ms, &row.step, &disk.device];
        values.extend(figures.iter().map(|v| v as &(dyn ToSql + Sync)));
        t.execute(&insert_disk, &values)?;
    }
    Ok(())
}

fn insert_series(t: &mut Transaction, run_id: i64, series: &SamplerSeries) -> Result<(), StoreError> {
    t.execute(
        "INSERT INTO sampler_series (run_id, interval_ms, devices, own_cpu_seconds, wall_seconds) \
         VALUES ($1, $2, $3, $4, $5)",
        &[
            &run_id,
            &(series.interval_ms as i64),
            &serde_json::to_string(&series.devices).expect("devices serialize"),
            &series.own_cpu_seconds,
            &series.wall_seconds,
        ],
    )?;
    for row in series_rows(series) {
        insert_series_row(t, run_id, &row)?;
    }
    Ok(())
}

fn insert_attachment(
    t: &mut Transaction,
    run_id: i64,
    name: &str,
    document: &serde_json::Value,
) -> Result<(), StoreError> {
    t.execute(
        "INSERT INTO run_attachments (run_id, name, document) VALUES ($1, $2, $3)",
        &[&run_id, &name, &document.to_string()],
    )?;
    Ok(())
}

impl ResultStore for PostgresStore {
    fn begin_run(&mut self, request: &RunRequest, fingerprint: &Fingerprint) -> Result<String, StoreError> {
        let uuid = uuid::Uuid::new_v4().to_string();
        let hash = fingerprint.hash();
        let started_at = now_utc();
        self.write(|t| {
            let fingerprint_id = fingerprint_row(t, &hash, fingerprint, &started_at)?;
            let run_id: i64 = t
                .query_one(
                    "INSERT INTO runs (uuid, workload, label, command_line, tool_version, started_at, status, \
                     fingerprint_id, suite_id) VALUES ($1, $2, $3, $4, $5, $6, 'running', $7, $8) RETURNING id",
                    &[
                        &uuid,
                        &request.workload,
                        &request.label,
                        &request.command_line,
                        &envbench_core::TOOL_VERSION,
                        &started_at,
                        &fingerprint_id,
                        &request.suite_id,
                    ],
                )?
                .get(0);
            insert_tags(t, run_id, &request.tags)
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
        self.write(|t| {
            let run_id = Self::run_id(t, run_uuid)?;
            insert_series(t, run_id, series)
        })
    }

    fn add_attachment(&mut self, run_uuid: &str, name: &str, document: &serde_json::Value) -> Result<(), StoreError> {
        self.write(|t| {
            let run_id = Self::run_id(t, run_uuid)?;
            insert_attachment(t, run_id, name, document)
        })
    }

    fn finish_run(&mut self, run_uuid: &str, status: RunStatus, reason: Option<&str>) -> Result<(), StoreError> {
        self.write(|t| {
            let changed = t.execute(
                "UPDATE runs SET status = $1, status_reason = $2, ended_at = $3 WHERE uuid = $4 AND status = 'running'",
                &[&status.as_str(), &reason, &now_utc(), &run_uuid],
            )?;
            if changed == 0 {
                Self::run_id(t, run_uuid)?;
                return Err(StoreError::RunAlreadyEnded(run_uuid.to_string()));
            }
            Ok(())
        })
    }

    fn list_runs(&self, filter: &RunFilter) -> Result<Vec<RunSummary>, StoreError> {
        Self::summaries(&mut *self.client.borrow_mut(), filter, None)
    }

    fn find_run(&self, id_or_prefix: &str) -> Result<String, StoreError> {
        let prefix = id_or_prefix.trim().to_ascii_lowercase();
        if prefix.is_empty() || !prefix.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
            return Err(StoreError::NoSuchRun(id_or_prefix.to_string()));
        }
        let matches: Vec<String> = self
            .client
            .borrow_mut()
            .query("SELECT uuid FROM runs WHERE uuid LIKE $1 || '%' ORDER BY uuid", &[&prefix])?
            .iter()
            .map(|r| r.get(0))
            .collect();
        match matches.len() {
            0 => Err(StoreError::NoSuchRun(id_or_prefix.to_string())),
            1 => Ok(matches.into_iter().next().expect("one match")),
            count => Err(StoreError::AmbiguousRun { prefix: id_or_prefix.to_string(), count }),
        }
    }

    fn load_run(&self, run_uuid: &str) -> Result<StoredRun, StoreError> {
        let mut client = self.client.borrow_mut();
        // One snapshot for every query, so a run being written meanwhile is read whole or as it was.
        let mut t =
            client.build_transaction().read_only(true).isolation_level(IsolationLevel::RepeatableRead).start()?;
        let run = {
            let row = t
                .query_opt(
                    "SELECT r.id, r.command_line, r.tool_version, f.hash, f.document FROM runs r \
                     JOIN fingerprints f ON f.id = r.fingerprint_id WHERE r.uuid = $1",
                    &[&run_uuid],
                )?
                .ok_or_else(|| StoreError::NoSuchRun(run_uuid.to_string()))?;
            let run_id: i64 = row.get(0);
            let summary = Self::summaries(&mut t, &RunFilter::default(), Some(run_uuid))?
                .into_iter()
                .next()
                .ok_or_else(|| StoreError::NoSuchRun(run_uuid.to_string()))?;
            StoredRun {
                summary,
                command_line: row.get(1),
                tool_version: row.get(2),
                fingerprint_hash: row.get(3),
                fingerprint: serde_json::from_str(row.get(4)).map_err(|e| StoreError::Corrupt(e.to_string()))?,
                results: Self::results(&mut t, run_id)?,
                series: Self::series(&mut t, run_id)?,
                attachments: Self::attachments(&mut t, run_id)?,
            }
        };
        t.commit()?;
        Ok(run)
    }

    fn import_run(&mut self, run: &StoredRun) -> Result<ImportOutcome, StoreError> {
        self.write(|t| {
            let s = &run.summary;
            // Two pushes of the same run racing: the second waits here for the first to commit, then sees the run.
            t.execute("SELECT pg_advisory_xact_lock($1, hashtext($2))", &[&MIGRATION_LOCK, &s.uuid])?;
            if t.query_opt("SELECT 1 FROM runs WHERE uuid = $1", &[&s.uuid])?.is_some() {
                return Ok(ImportOutcome::AlreadyPresent);
            }
            let fingerprint_id = fingerprint_row(t, &run.fingerprint_hash, &run.fingerprint, &s.started_at)?;
            let run_id: i64 = t
                .query_one(
                    "INSERT INTO runs (uuid, workload, label, command_line, tool_version, started_at, ended_at, status, \
                     status_reason, fingerprint_id, suite_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) \
                     RETURNING id",
                    &[
                        &s.uuid,
                        &s.workload,
                        &s.label,
                        &run.command_line,
                        &run.tool_version,
                        &s.started_at,
                        &s.ended_at,
                        &s.status.as_str(),
                        &s.status_reason,
                        &fingerprint_id,
                        &s.suite_id,
                    ],
                )?
                .get(0);
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_translation_per_sqlite_migration() {
        assert_eq!(MIGRATIONS.len(), schema::MIGRATIONS.len(), "every SQLite migration needs its PostgreSQL twin");
        for table in TABLES.iter().filter(|t| **t != "envbench_store") {
            assert!(schema::MIGRATIONS[0].contains(&format!("CREATE TABLE {table} (")), "{table}");
            assert!(MIGRATIONS[0].contains(&format!("CREATE TABLE {table} (")), "{table}");
        }
    }
}
