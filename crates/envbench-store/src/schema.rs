//! The store schema, as an ordered list of migrations. Migration N (1-based) takes a store from version N-1 to N;
//! SQLite keeps the version in `PRAGMA user_version` and marks the file as ours with `PRAGMA application_id`.
//! Migrations are only ever appended: an existing one is never edited once released.

/// "EnvB" in ASCII: marks a SQLite file as an envbench store.
pub const APPLICATION_ID: i64 = 0x456e_7642;

/// Every migration, oldest first.
pub const MIGRATIONS: &[&str] = &[
    // 1: runs, fingerprints, results with raw samples, sampler series, attachments; append-only by triggers.
    r#"
    CREATE TABLE fingerprints (
        id INTEGER PRIMARY KEY,
        hash TEXT NOT NULL UNIQUE,
        hostname TEXT,
        document TEXT NOT NULL,
        first_seen_at TEXT NOT NULL
    );
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        uuid TEXT NOT NULL UNIQUE,
        workload TEXT NOT NULL,
        label TEXT,
        command_line TEXT NOT NULL,
        tool_version TEXT NOT NULL,
        started_at TEXT NOT NULL,
        ended_at TEXT,
        status TEXT NOT NULL CHECK (status IN ('running', 'complete', 'failed', 'interrupted')),
        status_reason TEXT,
        fingerprint_id INTEGER NOT NULL REFERENCES fingerprints(id),
        suite_id TEXT
    );
    CREATE INDEX runs_by_start ON runs(started_at);
    CREATE TABLE run_tags (
        run_id INTEGER NOT NULL REFERENCES runs(id),
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (run_id, key)
    );
    CREATE TABLE results (
        id INTEGER PRIMARY KEY,
        run_id INTEGER NOT NULL REFERENCES runs(id),
        workload TEXT NOT NULL,
        workload_version INTEGER NOT NULL,
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
        result_id INTEGER NOT NULL REFERENCES results(id),
        seq INTEGER NOT NULL,
        value REAL NOT NULL,
        PRIMARY KEY (result_id, seq)
    );
    CREATE TABLE sampler_series (
        run_id INTEGER PRIMARY KEY REFERENCES runs(id),
        interval_ms INTEGER NOT NULL,
        devices TEXT NOT NULL,
        own_cpu_seconds REAL NOT NULL,
        wall_seconds REAL NOT NULL
    );
    -- kind 'point' rows are sampler intervals, kind 'step' rows are whole-step summaries.
    CREATE TABLE sampler_cpu (
        run_id INTEGER NOT NULL REFERENCES runs(id),
        kind TEXT NOT NULL CHECK (kind IN ('point', 'step')),
        start_ms INTEGER NOT NULL,
        end_ms INTEGER NOT NULL,
        step TEXT,
        user_percent REAL NOT NULL,
        nice_percent REAL NOT NULL,
        system_percent REAL NOT NULL,
        iowait_percent REAL NOT NULL,
        irq_percent REAL NOT NULL,
        steal_percent REAL NOT NULL,
        idle_percent REAL NOT NULL
    );
    CREATE INDEX sampler_cpu_by_run ON sampler_cpu(run_id);
    CREATE TABLE sampler_disk (
        run_id INTEGER NOT NULL REFERENCES runs(id),
        kind TEXT NOT NULL CHECK (kind IN ('point', 'step')),
        start_ms INTEGER NOT NULL,
        end_ms INTEGER NOT NULL,
        step TEXT,
        device TEXT NOT NULL,
        reads_per_s REAL NOT NULL,
        writes_per_s REAL NOT NULL,
        read_mb_per_s REAL NOT NULL,
        write_mb_per_s REAL NOT NULL,
        read_request_kib REAL NOT NULL,
        write_request_kib REAL NOT NULL,
        read_await_ms REAL NOT NULL,
        write_await_ms REAL NOT NULL,
        queue_size REAL NOT NULL,
        util_percent REAL NOT NULL
    );
    CREATE INDEX sampler_disk_by_run ON sampler_disk(run_id);
    CREATE TABLE run_attachments (
        run_id INTEGER NOT NULL REFERENCES runs(id),
        name TEXT NOT NULL,
        document TEXT NOT NULL,
        PRIMARY KEY (run_id, name)
    );

    CREATE TRIGGER runs_end_once BEFORE UPDATE ON runs
    WHEN OLD.status <> 'running' OR NEW.uuid IS NOT OLD.uuid OR NEW.started_at IS NOT OLD.started_at
        OR NEW.fingerprint_id IS NOT OLD.fingerprint_id OR NEW.workload IS NOT OLD.workload
        OR NEW.label IS NOT OLD.label OR NEW.command_line IS NOT OLD.command_line
    BEGIN SELECT RAISE(ABORT, 'envbench runs are append-only: only a running run may end, once'); END;
    CREATE TRIGGER runs_no_delete BEFORE DELETE ON runs
    BEGIN SELECT RAISE(ABORT, 'envbench runs are append-only'); END;
    CREATE TRIGGER fingerprints_no_update BEFORE UPDATE ON fingerprints
    BEGIN SELECT RAISE(ABORT, 'envbench fingerprints are append-only'); END;
    CREATE TRIGGER fingerprints_no_delete BEFORE DELETE ON fingerprints
    BEGIN SELECT RAISE(ABORT, 'envbench fingerprints are append-only'); END;
    CREATE TRIGGER results_no_update BEFORE UPDATE ON results
    BEGIN SELECT RAISE(ABORT, 'envbench results are append-only'); END;
    CREATE TRIGGER results_no_delete BEFORE DELETE ON results
    BEGIN SELECT RAISE(ABORT, 'envbench results are append-only'); END;
    CREATE TRIGGER samples_no_update BEFORE UPDATE ON samples
    BEGIN SELECT RAISE(ABORT, 'envbench samples are append-only'); END;
    CREATE TRIGGER samples_no_delete BEFORE DELETE ON samples
    BEGIN SELECT RAISE(ABORT, 'envbench samples are append-only'); END;
    CREATE TRIGGER tags_no_update BEFORE UPDATE ON run_tags
    BEGIN SELECT RAISE(ABORT, 'envbench tags are append-only'); END;
    CREATE TRIGGER tags_no_delete BEFORE DELETE ON run_tags
    BEGIN SELECT RAISE(ABORT, 'envbench tags are append-only'); END;
    "#,
];

/// The schema version this build writes.
pub fn latest_version() -> i64 {
    MIGRATIONS.len() as i64
}
