//! The store schema, written once for every backend, as an ordered list of migrations. Migration N (1-based) takes a
//! store from version N-1 to N; migrations are only ever appended, never edited once released.
//!
//! Tables are one template with the few type names that differ filled in from the dialect's row
//! ([`envbench_sql::Dialect::adapt`]); the append-only rules are one list of tables and checks, turned into each
//! backend's triggers by its [`Rules`] (SQLite triggers, PostgreSQL trigger functions). Every table and every
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

/// How a backend refuses changes to what must not change once written: triggers, which differ between servers in
/// kind rather than in words (SQLite raises inside a trigger, PostgreSQL calls a trigger function), so each backend
/// writes its own. Everything else its SQL needs (types, clock, words) is its dialect's row of
/// [`envbench_sql::DialectOps`].
pub(crate) trait Rules: Sync {
    /// The dialect of the backend's SQL.
    fn dialect(&self) -> Dialect;
    /// What migration 1 creates before the tables.
    fn preamble(&self) -> &'static str;
    /// Refuse UPDATE and DELETE (and TRUNCATE, where there is one) on a table. `what` names its rows in messages.
    fn append_only(&self, table: &str, what: &str) -> String;
    /// Refuse rows added to a run that has ended. `run_status` is a query for the status of the new row's run.
    fn only_while_running(&self, table: &str, what: &str, run_status: &str) -> String;
    /// An upload token may only be revoked, once, and never deleted: `refused` is when an UPDATE is refused.
    fn revoke_once(&self, refused: &str, message: &str) -> String;
    /// A run may only end, once: `condition` is when an UPDATE of `runs` is refused; `replace` replaces the rule.
    fn runs_end_once(&self, condition: &str, message: &str, replace: bool) -> String;
    /// Runs are never deleted.
    fn runs_no_delete(&self) -> &'static str;
}

pub(crate) use envbench_sql::Dialect;

/// The column that keeps insertion order in the sampler tables: the implicit row id where there is one.
pub(crate) fn insertion_order(dialect: Dialect) -> &'static str {
    if dialect.ops().implicit_row_id { "rowid" } else { "id" }
}

/// A table template in `dialect`: its `{type:...}` placeholders filled ([`Dialect::adapt`]), and `{sampler_id}` a
/// key column where there is no implicit row id.
fn fill(dialect: Dialect, template: &str) -> String {
    let sampler_id = if dialect.ops().implicit_row_id { "" } else { "\n        id {type:serial_key}," };
    dialect.adapt(&template.replace("{sampler_id}", sampler_id))
}

/// `NEW.column` differs from `OLD.column`, NULL a value like any other.
fn differs(dialect: Dialect, column: &str) -> String {
    dialect.ops().is_distinct_from.replace("{a}", &format!("NEW.{column}")).replace("{b}", &format!("OLD.{column}"))
}

/// The tables of migration 1, with `{type:...}` and `{sampler_id}` filled per dialect ([`fill`]).
const TABLES_1: &str = r#"
    CREATE TABLE fingerprints (
        id {type:serial_key},
        hash TEXT NOT NULL UNIQUE,
        hostname TEXT,
        document TEXT NOT NULL,
        first_seen_at TEXT NOT NULL
    );
    CREATE TABLE runs (
        id {type:serial_key},
        uuid TEXT NOT NULL UNIQUE,
        workload TEXT NOT NULL,
        label TEXT,
        command_line TEXT NOT NULL,
        tool_version TEXT NOT NULL,
        started_at TEXT NOT NULL,
        ended_at TEXT,
        status TEXT NOT NULL CHECK (status IN ('running', 'complete', 'failed', 'interrupted')),
        status_reason TEXT,
        fingerprint_id {type:bigint} NOT NULL REFERENCES fingerprints(id),
        suite_id TEXT
    );
    CREATE INDEX runs_by_start ON runs(started_at);
    CREATE TABLE run_tags (
        run_id {type:bigint} NOT NULL REFERENCES runs(id),
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (run_id, key)
    );
    CREATE TABLE results (
        id {type:serial_key},
        run_id {type:bigint} NOT NULL REFERENCES runs(id),
        workload TEXT NOT NULL,
        workload_version {type:bigint} NOT NULL,
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
        result_id {type:bigint} NOT NULL REFERENCES results(id),
        seq {type:bigint} NOT NULL,
        value {type:double} NOT NULL,
        PRIMARY KEY (result_id, seq)
    );
    CREATE TABLE sampler_series (
        run_id {type:bigint} PRIMARY KEY REFERENCES runs(id),
        interval_ms {type:bigint} NOT NULL,
        devices TEXT NOT NULL,
        own_cpu_seconds {type:double} NOT NULL,
        wall_seconds {type:double} NOT NULL
    );
    -- kind 'point' rows are sampler intervals, kind 'step' rows are whole-step summaries.
    CREATE TABLE sampler_cpu ({sampler_id}
        run_id {type:bigint} NOT NULL REFERENCES runs(id),
        kind TEXT NOT NULL CHECK (kind IN ('point', 'step')),
        start_ms {type:bigint} NOT NULL,
        end_ms {type:bigint} NOT NULL,
        step TEXT,
        user_percent {type:double} NOT NULL,
        nice_percent {type:double} NOT NULL,
        system_percent {type:double} NOT NULL,
        iowait_percent {type:double} NOT NULL,
        irq_percent {type:double} NOT NULL,
        steal_percent {type:double} NOT NULL,
        idle_percent {type:double} NOT NULL
    );
    CREATE INDEX sampler_cpu_by_run ON sampler_cpu(run_id);
    CREATE TABLE sampler_disk ({sampler_id}
        run_id {type:bigint} NOT NULL REFERENCES runs(id),
        kind TEXT NOT NULL CHECK (kind IN ('point', 'step')),
        start_ms {type:bigint} NOT NULL,
        end_ms {type:bigint} NOT NULL,
        step TEXT,
        device TEXT NOT NULL,
        reads_per_s {type:double} NOT NULL,
        writes_per_s {type:double} NOT NULL,
        read_mb_per_s {type:double} NOT NULL,
        write_mb_per_s {type:double} NOT NULL,
        read_request_kib {type:double} NOT NULL,
        write_request_kib {type:double} NOT NULL,
        read_await_ms {type:double} NOT NULL,
        write_await_ms {type:double} NOT NULL,
        queue_size {type:double} NOT NULL,
        util_percent {type:double} NOT NULL
    );
    CREATE INDEX sampler_disk_by_run ON sampler_disk(run_id);
    CREATE TABLE run_attachments (
        run_id {type:bigint} NOT NULL REFERENCES runs(id),
        name TEXT NOT NULL,
        document TEXT NOT NULL,
        PRIMARY KEY (run_id, name)
    );
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
        id {type:serial_key},
        fleet TEXT NOT NULL,
        sender TEXT NOT NULL,
        kind TEXT NOT NULL,
        body TEXT NOT NULL,
        at_s {type:double} NOT NULL
    );
    CREATE INDEX fleet_events_by_fleet ON fleet_events(fleet, at_s);
"#;

/// Who else used the machine during a run (migration 4): one row per sampler interval (kind `point`), per
/// whole-step summary (kind `step`) and for the whole run (kind `run`), each with its span and step like
/// `sampler_cpu`: CPU time of all processes and of envbench's, and the pressure stall microseconds (NULL without
/// pressure stall information). Only the `run` row has the columns after `memory_full_us`.
const TABLES_4: &str = r#"
    CREATE TABLE sampler_contention ({sampler_id}
        run_id {type:bigint} NOT NULL REFERENCES runs(id),
        kind TEXT NOT NULL CHECK (kind IN ('point', 'step', 'run')),
        start_ms {type:bigint} NOT NULL,
        end_ms {type:bigint} NOT NULL,
        step TEXT,
        busy_cpu_seconds {type:double} NOT NULL,
        own_cpu_seconds {type:double} NOT NULL,
        cpu_some_us {type:bigint},
        cpu_full_us {type:bigint},
        io_some_us {type:bigint},
        io_full_us {type:bigint},
        memory_some_us {type:bigint},
        memory_full_us {type:bigint},
        steal_percent {type:double},
        local_server_cpu_seconds {type:double},
        drives_local_server {type:bigint},
        own_storage_bytes {type:bigint},
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
        id {type:serial_key},
        name TEXT NOT NULL UNIQUE,
        token_sha256 TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL,
        revoked_at TEXT
    );
    CREATE TABLE uploads (
        id {type:serial_key},
        run_id {type:bigint} NOT NULL UNIQUE REFERENCES runs(id),
        token_id {type:bigint} NOT NULL REFERENCES upload_tokens(id),
        received_at TEXT NOT NULL,
        received_s {type:double} NOT NULL,
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
        result_id {type:bigint} PRIMARY KEY REFERENCES results(id),
        sample_count {type:bigint} NOT NULL,
        points TEXT NOT NULL
    );
"#;

/// What a store of many runs looks its runs up by: the runs of a tag's value (a suite, the sides of a comparison)
/// and of an environment, without reading every run. Indexes only, so not a migration: a store that lacks them is
/// read as it is by any version and given them when it can be written ([`crate::SqlStore`]'s `prepare`).
pub(crate) const INDEXES: [(&str, &str); 2] =
    [("run_tags_by_value", "run_tags(key, value)"), ("runs_by_fingerprint", "runs(fingerprint_id)")];

/// How many migrations there are: the schema version this build writes.
pub const LATEST_VERSION: i64 = 6;

/// Migration `version` (from 1) in a backend's dialect and rules.
pub(crate) fn migration(rules: &dyn Rules, version: i64) -> String {
    let dialect = rules.dialect();
    let mut sql = String::new();
    match version {
        1 => {
            sql.push_str(rules.preamble());
            sql.push_str(&fill(dialect, TABLES_1));
            let refused: Vec<String> = std::iter::once("OLD.status <> 'running'".to_string())
                .chain(FIXED_RUN_COLUMNS_1.iter().map(|c| differs(dialect, c)))
                .collect();
            sql.push_str(&runs_end_once(rules, &refused, false));
            sql.push_str(rules.runs_no_delete());
            for (table, what) in APPEND_ONLY_1 {
                sql.push_str(&rules.append_only(table, what));
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
            .chain(FIXED_RUN_COLUMNS_1.iter().chain(FIXED_RUN_COLUMNS_2).map(|c| differs(dialect, c)))
            .collect();
            sql.push_str(&runs_end_once(rules, &refused, true));
            for (table, what) in APPEND_ONLY_2 {
                sql.push_str(&rules.append_only(table, what));
            }
            for (table, what, status) in ONLY_WHILE_RUNNING_2 {
                sql.push_str(&rules.only_while_running(table, what, status));
            }
        }
        3 => {
            sql.push_str(&fill(dialect, TABLES_3));
            sql.push_str(&rules.append_only("fleet_events", "fleet_events"));
        }
        4 => {
            sql.push_str(&fill(dialect, TABLES_4));
            sql.push_str(&rules.append_only("sampler_contention", "sampler_contention"));
            sql.push_str(&rules.only_while_running(
                "sampler_contention",
                "sampler_contention",
                "SELECT status FROM runs WHERE id = NEW.run_id",
            ));
        }
        5 => {
            sql.push_str(&fill(dialect, TABLES_5));
            sql.push_str(&rules.append_only("uploads", "uploads"));
            sql.push_str(&revoke_once(rules));
        }
        6 => {
            sql.push_str(&fill(dialect, TABLES_6));
            sql.push_str(&rules.append_only("sample_digests", "sample_digests"));
        }
        _ => unreachable!("migration {version} does not exist"),
    }
    sql
}

/// A run may only end, once: `refused` lists the conditions under which an UPDATE of `runs` is refused.
fn runs_end_once(rules: &dyn Rules, refused: &[String], replace: bool) -> String {
    let message = "envbench runs are append-only: only a running run may end, once, with its end time";
    rules.runs_end_once(&refused.join("\n        OR "), message, replace)
}

/// An upload token may only be revoked, once, and never deleted: its other columns never change.
fn revoke_once(rules: &dyn Rules) -> String {
    let refused = ["OLD.revoked_at IS NOT NULL", "NEW.revoked_at IS NULL"]
        .into_iter()
        .map(str::to_string)
        .chain(["name", "token_sha256", "created_at"].map(|c| differs(rules.dialect(), c)))
        .collect::<Vec<_>>()
        .join(" OR ");
    rules.revoke_once(&refused, "envbench upload tokens are only ever revoked, once")
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
        let backends: [&dyn Rules; 2] = [&crate::sqlite_backend::SqliteRules, &crate::postgres_backend::PostgresRules];
        for rules in backends {
            let dialect = rules.dialect();
            let every: String = (1..=LATEST_VERSION).map(|v| migration(rules, v)).collect();
            for table in TABLES.iter().filter(|t| **t != "envbench_store") {
                assert!(every.contains(&format!("CREATE TABLE {table} (")), "{dialect:?} {table}");
            }
            assert!(!every.contains('{'), "every placeholder is filled: {every}");
            for version in 2..=LATEST_VERSION {
                let text = migration(rules, version);
                assert!(text.contains("append-only") || text.contains("envbench_append_only("), "{text}");
            }
        }
        assert!(migration(&crate::postgres_backend::PostgresRules, 1).contains("CREATE TABLE envbench_store"));
        assert!(!migration(&crate::sqlite_backend::SqliteRules, 1).contains("envbench_store"));
    }
}
