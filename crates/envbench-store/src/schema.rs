//! The store schema, written once for every backend, as an ordered list of migrations. Migration N (1-based) takes a
//! store from version N-1 to N; migrations are only ever appended, never edited once released.
//!
//! Tables are one template with the few type names that differ filled in per [`Dialect`]; the append-only rules are
//! one list of tables and checks, turned into SQLite triggers or PostgreSQL trigger functions. Every table and every
//! change after a run ends is refused: rows are only inserted, a run's status moves once from `running` to an ended
//! status with its end time, and nothing is added to a run that has ended.

/// "EnvB" in ASCII: marks a SQLite file as an envbench store, and keys PostgreSQL's migration lock.
pub const APPLICATION_ID: i64 = 0x456e_7642;

/// A store's schema version, refused when a newer envbench wrote it.
pub(crate) fn known_version(location: &str, version: i64) -> Result<i64, crate::error::StoreError> {
    if version > LATEST_VERSION {
        return Err(crate::error::StoreError::NewerSchema {
            location: location.to_string(),
            found: version,
            known: LATEST_VERSION,
        });
    }
    Ok(version)
}

/// The SQL dialect of a backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// The column that keeps insertion order in the sampler tables (SQLite has its rowid).
    pub fn insertion_order(self) -> &'static str {
        match self {
            Dialect::Sqlite => "rowid",
            Dialect::Postgres => "id",
        }
    }

    /// The statement that begins a write transaction: SQLite takes the write lock at once, so a writer waits on the
    /// busy timeout rather than failing at its first write.
    pub fn begin_write(self) -> &'static str {
        match self {
            Dialect::Sqlite => "BEGIN IMMEDIATE",
            Dialect::Postgres => "BEGIN",
        }
    }

    /// The statement that begins a read: one snapshot for every query, so a run written meanwhile is read whole or as
    /// it was.
    pub fn begin_read(self) -> &'static str {
        match self {
            Dialect::Sqlite => "BEGIN DEFERRED",
            Dialect::Postgres => "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
        }
    }

    fn fill(self, template: &str) -> String {
        let (id, int, real, sampler_id) = match self {
            Dialect::Sqlite => ("INTEGER PRIMARY KEY", "INTEGER", "REAL", ""),
            Dialect::Postgres => {
                ("BIGSERIAL PRIMARY KEY", "BIGINT", "DOUBLE PRECISION", "\n        id BIGSERIAL PRIMARY KEY,")
            }
        };
        template.replace("{id}", id).replace("{int}", int).replace("{real}", real).replace("{sampler_id}", sampler_id)
    }

    /// The database server's clock now, in seconds since the Unix epoch (microseconds on PostgreSQL, milliseconds on
    /// SQLite), as an SQL expression.
    pub fn clock_seconds(self) -> &'static str {
        match self {
            Dialect::Sqlite => "((julianday('now') - 2440587.5) * 86400.0)",
            Dialect::Postgres => "(EXTRACT(EPOCH FROM clock_timestamp())::DOUBLE PRECISION)",
        }
    }

    /// `a IS NOT b` in the dialect's words.
    fn differs(self, column: &str) -> String {
        match self {
            Dialect::Sqlite => format!("NEW.{column} IS NOT OLD.{column}"),
            Dialect::Postgres => format!("NEW.{column} IS DISTINCT FROM OLD.{column}"),
        }
    }

    /// Refuse UPDATE and DELETE (and TRUNCATE, which PostgreSQL has) on a table. `what` names its rows in messages.
    fn append_only(self, table: &str, what: &str) -> String {
        match self {
            Dialect::Sqlite => format!(
                "CREATE TRIGGER {what}_no_update BEFORE UPDATE ON {table}\n    \
                 BEGIN SELECT RAISE(ABORT, 'envbench {what} are append-only'); END;\n    \
                 CREATE TRIGGER {what}_no_delete BEFORE DELETE ON {table}\n    \
                 BEGIN SELECT RAISE(ABORT, 'envbench {what} are append-only'); END;\n"
            ),
            Dialect::Postgres => format!(
                "CREATE TRIGGER {what}_no_change BEFORE UPDATE OR DELETE ON {table}\n        \
                 FOR EACH ROW EXECUTE FUNCTION envbench_append_only('{what}');\n    \
                 CREATE TRIGGER {what}_no_truncate BEFORE TRUNCATE ON {table}\n        \
                 FOR EACH STATEMENT EXECUTE FUNCTION envbench_append_only('{what}');\n"
            ),
        }
    }

    /// Refuse rows added to a run that has ended. `run_status` is a query for the status of the new row's run.
    fn only_while_running(self, table: &str, what: &str, run_status: &str) -> String {
        match self {
            Dialect::Sqlite => format!(
                "CREATE TRIGGER {what}_only_while_running BEFORE INSERT ON {table}\n    \
                 WHEN ({run_status}) IS NOT 'running'\n    \
                 BEGIN SELECT RAISE(ABORT, 'envbench {what} are append-only: a run that has ended takes no more'); \
                 END;\n"
            ),
            Dialect::Postgres => format!(
                "CREATE FUNCTION envbench_{what}_only_while_running() RETURNS trigger LANGUAGE plpgsql AS $$\n    \
                 BEGIN\n        \
                 IF ({run_status}) IS DISTINCT FROM 'running' THEN\n            \
                 RAISE EXCEPTION 'envbench {what} are append-only: a run that has ended takes no more';\n        \
                 END IF;\n        \
                 RETURN NEW;\n    \
                 END\n    $$;\n    \
                 CREATE TRIGGER {what}_only_while_running BEFORE INSERT ON {table}\n        \
                 FOR EACH ROW EXECUTE FUNCTION envbench_{what}_only_while_running();\n"
            ),
        }
    }

    /// An upload token may only be revoked, once, and never deleted: its other columns never change.
    fn revoke_once(self) -> String {
        let refused = ["OLD.revoked_at IS NOT NULL", "NEW.revoked_at IS NULL"]
            .into_iter()
            .map(str::to_string)
            .chain(["name", "token_sha256", "created_at"].map(|c| self.differs(c)))
            .collect::<Vec<_>>()
            .join(" OR ");
        let message = "envbench upload tokens are only ever revoked, once";
        match self {
            Dialect::Sqlite => format!(
                "CREATE TRIGGER upload_tokens_revoke_once BEFORE UPDATE ON upload_tokens\n    WHEN {refused}\n    \
                 BEGIN SELECT RAISE(ABORT, '{message}'); END;\n    \
                 CREATE TRIGGER upload_tokens_no_delete BEFORE DELETE ON upload_tokens\n    \
                 BEGIN SELECT RAISE(ABORT, '{message}'); END;\n"
            ),
            Dialect::Postgres => format!(
                "CREATE FUNCTION envbench_upload_tokens_revoke_once() RETURNS trigger LANGUAGE plpgsql AS $$\n    \
                 BEGIN\n        IF {refused} THEN\n            RAISE EXCEPTION '{message}';\n        END IF;\n        \
                 RETURN NEW;\n    END\n    $$;\n    \
                 CREATE TRIGGER upload_tokens_revoke_once BEFORE UPDATE ON upload_tokens\n        \
                 FOR EACH ROW EXECUTE FUNCTION envbench_upload_tokens_revoke_once();\n    \
                 CREATE TRIGGER upload_tokens_no_delete BEFORE DELETE ON upload_tokens\n        \
                 FOR EACH ROW EXECUTE FUNCTION envbench_append_only('upload tokens');\n    \
                 CREATE TRIGGER upload_tokens_no_truncate BEFORE TRUNCATE ON upload_tokens\n        \
                 FOR EACH STATEMENT EXECUTE FUNCTION envbench_append_only('upload tokens');\n"
            ),
        }
    }

    /// A run may only end, once: `refused` lists the conditions under which an UPDATE of `runs` is refused.
    fn runs_end_once(self, refused: &[String], replace: bool) -> String {
        let condition = refused.join("\n        OR ");
        let message = "envbench runs are append-only: only a running run may end, once, with its end time";
        match self {
            Dialect::Sqlite => format!(
                "{}CREATE TRIGGER runs_end_once BEFORE UPDATE ON runs\n    WHEN {condition}\n    \
                 BEGIN SELECT RAISE(ABORT, '{message}'); END;\n",
                if replace { "DROP TRIGGER runs_end_once;\n    " } else { "" }
            ),
            Dialect::Postgres => format!(
                "CREATE OR REPLACE FUNCTION envbench_runs_end_once() RETURNS trigger LANGUAGE plpgsql AS $$\n    \
                 BEGIN\n        \
                 IF {condition} THEN\n            RAISE EXCEPTION '{message}';\n        END IF;\n        \
                 RETURN NEW;\n    END\n    $$;\n    {}",
                if replace {
                    String::new()
                } else {
                    "CREATE TRIGGER runs_end_once BEFORE UPDATE ON runs FOR EACH ROW EXECUTE FUNCTION \
                     envbench_runs_end_once();\n"
                        .to_string()
                }
            ),
        }
    }
}

/// The tables of migration 1, with `{id}`, `{int}`, `{real}` and `{sampler_id}` filled per dialect.
const TABLES_1: &str = r#"
    CREATE TABLE fingerprints (
        id {id},
        hash TEXT NOT NULL UNIQUE,
        hostname TEXT,
        document TEXT NOT NULL,
        first_seen_at TEXT NOT NULL
    );
    CREATE TABLE runs (
        id {id},
        uuid TEXT NOT NULL UNIQUE,
        workload TEXT NOT NULL,
        label TEXT,
        command_line TEXT NOT NULL,
        tool_version TEXT NOT NULL,
        started_at TEXT NOT NULL,
        ended_at TEXT,
        status TEXT NOT NULL CHECK (status IN ('running', 'complete', 'failed', 'interrupted')),
        status_reason TEXT,
        fingerprint_id {int} NOT NULL REFERENCES fingerprints(id),
        suite_id TEXT
    );
    CREATE INDEX runs_by_start ON runs(started_at);
    CREATE TABLE run_tags (
        run_id {int} NOT NULL REFERENCES runs(id),
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (run_id, key)
    );
    CREATE TABLE results (
        id {id},
        run_id {int} NOT NULL REFERENCES runs(id),
        workload TEXT NOT NULL,
        workload_version {int} NOT NULL,
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
        result_id {int} NOT NULL REFERENCES results(id),
        seq {int} NOT NULL,
        value {real} NOT NULL,
        PRIMARY KEY (result_id, seq)
    );
    CREATE TABLE sampler_series (
        run_id {int} PRIMARY KEY REFERENCES runs(id),
        interval_ms {int} NOT NULL,
        devices TEXT NOT NULL,
        own_cpu_seconds {real} NOT NULL,
        wall_seconds {real} NOT NULL
    );
    -- kind 'point' rows are sampler intervals, kind 'step' rows are whole-step summaries.
    CREATE TABLE sampler_cpu ({sampler_id}
        run_id {int} NOT NULL REFERENCES runs(id),
        kind TEXT NOT NULL CHECK (kind IN ('point', 'step')),
        start_ms {int} NOT NULL,
        end_ms {int} NOT NULL,
        step TEXT,
        user_percent {real} NOT NULL,
        nice_percent {real} NOT NULL,
        system_percent {real} NOT NULL,
        iowait_percent {real} NOT NULL,
        irq_percent {real} NOT NULL,
        steal_percent {real} NOT NULL,
        idle_percent {real} NOT NULL
    );
    CREATE INDEX sampler_cpu_by_run ON sampler_cpu(run_id);
    CREATE TABLE sampler_disk ({sampler_id}
        run_id {int} NOT NULL REFERENCES runs(id),
        kind TEXT NOT NULL CHECK (kind IN ('point', 'step')),
        start_ms {int} NOT NULL,
        end_ms {int} NOT NULL,
        step TEXT,
        device TEXT NOT NULL,
        reads_per_s {real} NOT NULL,
        writes_per_s {real} NOT NULL,
        read_mb_per_s {real} NOT NULL,
        write_mb_per_s {real} NOT NULL,
        read_request_kib {real} NOT NULL,
        write_request_kib {real} NOT NULL,
        read_await_ms {real} NOT NULL,
        write_await_ms {real} NOT NULL,
        queue_size {real} NOT NULL,
        util_percent {real} NOT NULL
    );
    CREATE INDEX sampler_disk_by_run ON sampler_disk(run_id);
    CREATE TABLE run_attachments (
        run_id {int} NOT NULL REFERENCES runs(id),
        name TEXT NOT NULL,
        document TEXT NOT NULL,
        PRIMARY KEY (run_id, name)
    );
"#;

/// PostgreSQL keeps the store's identity and version in a table (SQLite uses `application_id` and `user_version`).
const POSTGRES_MARKER_1: &str = r#"
    CREATE TABLE envbench_store (
        application TEXT NOT NULL,
        version BIGINT NOT NULL
    );
    COMMENT ON TABLE envbench_store IS 'Marks this schema as an envbench results store; holds its schema version.';
    CREATE FUNCTION envbench_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION 'envbench % are append-only', TG_ARGV[0];
    END
    $$;
"#;

/// The columns of `runs` that never change once a run began (migration 1's list).
const FIXED_RUN_COLUMNS_1: &[&str] = &["uuid", "started_at", "fingerprint_id", "workload", "label", "command_line"];

/// Columns migration 2 adds to that list.
const FIXED_RUN_COLUMNS_2: &[&str] = &["tool_version", "suite_id", "process"];

/// Tables whose rows never change, and the word for their rows in messages: migration 1, then migration 2.
const APPEND_ONLY_1: &[(&str, &str)] =
    &[("fingerprints", "fingerprints"), ("results", "results"), ("samples", "samples"), ("run_tags", "tags")];
const APPEND_ONLY_2: &[(&str, &str)] = &[
    ("sampler_series", "sampler_series"),
    ("sampler_cpu", "sampler_cpu"),
    ("sampler_disk", "sampler_disk"),
    ("run_attachments", "attachments"),
];

/// Tables that take rows only while their run is running (migration 2), with the query of that run's status.
const ONLY_WHILE_RUNNING_2: &[(&str, &str, &str)] = &[
    ("results", "results", "SELECT status FROM runs WHERE id = NEW.run_id"),
    ("run_tags", "tags", "SELECT status FROM runs WHERE id = NEW.run_id"),
    ("samples", "samples", "SELECT r.status FROM results x JOIN runs r ON r.id = x.run_id WHERE x.id = NEW.result_id"),
    ("sampler_series", "sampler_series", "SELECT status FROM runs WHERE id = NEW.run_id"),
    ("sampler_cpu", "sampler_cpu", "SELECT status FROM runs WHERE id = NEW.run_id"),
    ("sampler_disk", "sampler_disk", "SELECT status FROM runs WHERE id = NEW.run_id"),
    ("run_attachments", "attachments", "SELECT status FROM runs WHERE id = NEW.run_id"),
];

/// The message board of fleet runs (migration 3): the coordinator and its agents post events here (registered, ready,
/// a step released at an instant of the database's clock, a step's report, stop) and poll for each other's. Rows are
/// only ever inserted, like everything else; `at_s` is the database server's clock when the row was written, in
/// seconds since the Unix epoch, so every host reads one clock.
const TABLES_3: &str = r#"
    CREATE TABLE fleet_events (
        id {id},
        fleet TEXT NOT NULL,
        sender TEXT NOT NULL,
        kind TEXT NOT NULL,
        body TEXT NOT NULL,
        at_s {real} NOT NULL
    );
    CREATE INDEX fleet_events_by_fleet ON fleet_events(fleet, at_s);
"#;

/// Who else used the machine during a run (migration 4): one row per sampler interval (kind `point`), per
/// whole-step summary (kind `step`) and for the whole run (kind `run`), each with its span and step like
/// `sampler_cpu`: CPU time of all processes and of envbench's, and the pressure stall microseconds (NULL without
/// pressure stall information). Only the `run` row has the columns after `memory_full_us`.
const TABLES_4: &str = r#"
    CREATE TABLE sampler_contention ({sampler_id}
        run_id {int} NOT NULL REFERENCES runs(id),
        kind TEXT NOT NULL CHECK (kind IN ('point', 'step', 'run')),
        start_ms {int} NOT NULL,
        end_ms {int} NOT NULL,
        step TEXT,
        busy_cpu_seconds {real} NOT NULL,
        own_cpu_seconds {real} NOT NULL,
        cpu_some_us {int},
        cpu_full_us {int},
        io_some_us {int},
        io_full_us {int},
        memory_some_us {int},
        memory_full_us {int},
        steal_percent {real},
        local_server_cpu_seconds {real},
        drives_local_server {int},
        own_storage_bytes {int},
        pressure_note TEXT
    );
    CREATE INDEX sampler_contention_by_run ON sampler_contention(run_id);
"#;

/// A results service's upload tokens and what came in through them (migration 5). A token is kept as its SHA-256
/// only, never itself; it may be revoked once and is never deleted, so every upload keeps its submitter. One row of
/// `uploads` per run received, with the provenance the client stated and the digest of its results (a copy of a run
/// under another uuid is a duplicate).
const TABLES_5: &str = r#"
    CREATE TABLE upload_tokens (
        id {id},
        name TEXT NOT NULL UNIQUE,
        token_sha256 TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL,
        revoked_at TEXT
    );
    CREATE TABLE uploads (
        id {id},
        run_id {int} NOT NULL UNIQUE REFERENCES runs(id),
        token_id {int} NOT NULL REFERENCES upload_tokens(id),
        received_at TEXT NOT NULL,
        received_s {real} NOT NULL,
        content_sha256 TEXT NOT NULL UNIQUE,
        provenance TEXT NOT NULL
    );
    CREATE INDEX uploads_by_token ON uploads(token_id, received_s);
"#;

/// The digest pages show of a result with many samples (migration 6): its sample count and its order statistics as
/// a JSON array ([`crate::digest`]). Written with the result, or for the results already kept when the store is
/// migrated; never changed.
const TABLES_6: &str = r#"
    CREATE TABLE sample_digests (
        result_id {int} PRIMARY KEY REFERENCES results(id),
        sample_count {int} NOT NULL,
        points TEXT NOT NULL
    );
"#;

/// How many migrations there are: the schema version this build writes.
pub const LATEST_VERSION: i64 = 6;

/// Migration `version` (from 1) in a dialect.
pub(crate) fn migration(dialect: Dialect, version: i64) -> String {
    let mut sql = String::new();
    match version {
        1 => {
            match dialect {
                Dialect::Postgres => sql.push_str(POSTGRES_MARKER_1),
                Dialect::Sqlite => {}
            }
            sql.push_str(&dialect.fill(TABLES_1));
            let refused: Vec<String> = std::iter::once("OLD.status <> 'running'".to_string())
                .chain(FIXED_RUN_COLUMNS_1.iter().map(|c| dialect.differs(c)))
                .collect();
            sql.push_str(&dialect.runs_end_once(&refused, false));
            sql.push_str(&runs_no_delete(dialect));
            for (table, what) in APPEND_ONLY_1 {
                sql.push_str(&dialect.append_only(table, what));
            }
        }
        2 => {
            // Which process runs a run, so a run whose process died can be marked interrupted.
            sql.push_str("ALTER TABLE runs ADD COLUMN process TEXT;\n");
            let refused: Vec<String> = [
                "OLD.status <> 'running'".to_string(),
                "NEW.status = 'running'".to_string(),
                "NEW.ended_at IS NULL".to_string(),
            ]
            .into_iter()
            .chain(FIXED_RUN_COLUMNS_1.iter().chain(FIXED_RUN_COLUMNS_2).map(|c| dialect.differs(c)))
            .collect();
            sql.push_str(&dialect.runs_end_once(&refused, true));
            for (table, what) in APPEND_ONLY_2 {
                sql.push_str(&dialect.append_only(table, what));
            }
            for (table, what, status) in ONLY_WHILE_RUNNING_2 {
                sql.push_str(&dialect.only_while_running(table, what, status));
            }
        }
        3 => {
            sql.push_str(&dialect.fill(TABLES_3));
            sql.push_str(&dialect.append_only("fleet_events", "fleet_events"));
        }
        4 => {
            sql.push_str(&dialect.fill(TABLES_4));
            sql.push_str(&dialect.append_only("sampler_contention", "sampler_contention"));
            sql.push_str(&dialect.only_while_running(
                "sampler_contention",
                "sampler_contention",
                "SELECT status FROM runs WHERE id = NEW.run_id",
            ));
        }
        5 => {
            sql.push_str(&dialect.fill(TABLES_5));
            sql.push_str(&dialect.append_only("uploads", "uploads"));
            sql.push_str(&dialect.revoke_once());
        }
        6 => {
            sql.push_str(&dialect.fill(TABLES_6));
            sql.push_str(&dialect.append_only("sample_digests", "sample_digests"));
        }
        _ => unreachable!("migration {version} does not exist"),
    }
    sql
}

fn runs_no_delete(dialect: Dialect) -> String {
    match dialect {
        Dialect::Sqlite => "CREATE TRIGGER runs_no_delete BEFORE DELETE ON runs\n    \
                            BEGIN SELECT RAISE(ABORT, 'envbench runs are append-only'); END;\n"
            .to_string(),
        Dialect::Postgres => "CREATE TRIGGER runs_no_delete BEFORE DELETE ON runs FOR EACH ROW EXECUTE FUNCTION \
                              envbench_append_only('runs');\n    \
                              CREATE TRIGGER runs_no_truncate BEFORE TRUNCATE ON runs\n        \
                              FOR EACH STATEMENT EXECUTE FUNCTION envbench_append_only('runs');\n"
            .to_string(),
    }
}

/// The tables of an envbench store, for recognising a schema that holds someone else's tables of the same names.
pub(crate) const TABLES: &[&str] = &[
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
    "fleet_events",
    "sampler_contention",
    "upload_tokens",
    "uploads",
    "sample_digests",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_migration_exists_in_both_dialects_and_creates_every_table() {
        for dialect in [Dialect::Sqlite, Dialect::Postgres] {
            let every: String = (1..=LATEST_VERSION).map(|v| migration(dialect, v)).collect();
            for table in TABLES.iter().filter(|t| **t != "envbench_store") {
                assert!(every.contains(&format!("CREATE TABLE {table} (")), "{dialect:?} {table}");
            }
            assert!(!every.contains('{'), "every placeholder is filled: {every}");
            for version in 2..=LATEST_VERSION {
                let text = migration(dialect, version);
                assert!(text.contains("append-only") || text.contains("envbench_append_only("), "{text}");
            }
        }
        assert!(migration(Dialect::Postgres, 1).contains("CREATE TABLE envbench_store"));
        assert!(!migration(Dialect::Sqlite, 1).contains("envbench_store"));
    }
}
