//! Database mode: the same sweep, read from inside PostgreSQL.
//!
//! A table with one row per 8 KiB heap page (each row carries ~5 KB of incompressible text stored PLAIN, so two never
//! share a page) is built once, larger than shared_buffers, with a primary key. Each job is one connection doing
//! `SELECT` by random key at queue depth 1. Around each step the table's `pg_statio` counters show how many heap blocks
//! came from outside shared_buffers — the reads that left the database for the OS and, unless the OS cached them,
//! the storage.
//!
//! The table lives in one schema, resolved once ([`Namespace`]): it is checked, built, dropped and read only by its
//! qualified name there, and every session is pinned to that schema. The run holds a lock on it for its whole life
//! ([`ServerLock`]): shared to read a complete table, alone to build or rebuild one; a run that cannot take it is
//! refused before it touches the table, with the holder named.

use crate::error::RanReadError;
use crate::sweep::{DatabaseCounters, StepFigures, StepLimit, StepRunner};
use envbench_base::latency::LatencyHistogram;
use envbench_core::model::redact_secrets;
use envbench_sql::{
    Connection, DatabaseUrl, DbError, Namespace, Relation, RelationKind, ServerLock, ServerLockError, ServerLockMode,
    Value, quote_literal,
};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// The table envbench reads; envbench creates it and marks it with a comment.
pub const TABLE: &str = "envbench_ranread";
const TABLE_COMMENT: &str = "created by envbench ranread: one row per 8 KiB page";
/// Characters of padding per row: two rows cannot share an 8 KiB page.
const PAD_CHARS: i64 = 5024;
const BUILD_BATCH_ROWS: i64 = 20_000;
/// What the lock on the table is called in a refusal.
const LOCKED: &str = "the ranread table";

/// The application name of this run's sessions, by which the run finds its own jobs in pg_stat_activity (and only
/// its own, when other runs read the same table).
fn application_name() -> String {
    format!("envbench-ranread {}", std::process::id())
}

/// How to build or reuse the table.
#[derive(Clone, Debug)]
pub struct PostgresOptions {
    /// `postgres://user@host:port/database`.
    pub url: String,
    /// Table size; default twice shared_buffers.
    pub size_bytes: Option<u64>,
    /// Rebuild even when a table of the right size exists.
    pub fresh: bool,
    /// The schema the table is in (it must exist), as the user named it or a fleet's coordinator resolved it for its
    /// agents; `None`: the connection's own (`current_schema()`), resolved here.
    pub namespace: Option<String>,
    /// A fleet's agent: it never builds or locks the table (its coordinator built it and holds the lock while the
    /// fleet runs), and refuses to run without a complete one.
    pub agent: bool,
}

/// What the build did, for the user.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct TableInfo {
    pub rows: i64,
    pub table_bytes: i64,
    pub shared_buffers_bytes: i64,
    /// The server's block size (the size of one random read).
    pub block_bytes: i64,
    pub reused: bool,
    pub server_version: String,
}

/// A prepared database target.
pub struct PostgresRanRead {
    url: DatabaseUrl,
    namespace: Namespace,
    monitor: Box<dyn Connection>,
    pub info: TableInfo,
    seed: u64,
    /// Held until the sweep ends (none on a fleet's agent).
    _lock: Option<ServerLock>,
}

fn database(error: DbError) -> RanReadError {
    RanReadError::Sql(error)
}

/// Refuse a `--db` that is not a PostgreSQL URL, before anything is created.
pub(crate) fn check_url(url: &str) -> Result<(), RanReadError> {
    let refused = |reason: String| RanReadError::BadDatabaseUrl { url: redact_secrets(url), reason };
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        return Err(refused("only postgres:// and postgresql:// URLs are supported".into()));
    }
    DatabaseUrl::parse(url).map(|_| ()).map_err(|e| refused(e.message))
}

/// A session pinned to `namespace`: its unqualified names cannot reach another schema.
fn connect(url: &DatabaseUrl, namespace: &Namespace) -> Result<Box<dyn Connection>, RanReadError> {
    namespace.connect(url, &application_name()).map_err(database)
}

/// What the namespace holds of the table, before the run decides to reuse or build it.
#[derive(Clone, Debug, PartialEq)]
enum Existing {
    None,
    /// Relations of the table's names that envbench did not make, each with its kind.
    Foreign(Vec<String>),
    /// envbench's table; `rows` from the comment of a complete build (-1 while a build is under way).
    Ours {
        rows: i64,
    },
}

fn existing_table(connection: &mut dyn Connection, namespace: &Namespace) -> Result<Existing, DbError> {
    let primary_key = format!("{TABLE}_pkey");
    let found = namespace.relations(connection, &[TABLE, &primary_key])?;
    let table = found.iter().find(|r| r.name == TABLE && r.kind == RelationKind::Table);
    let ours = table.and_then(|t| t.comment.as_deref()).filter(|c| c.starts_with(TABLE_COMMENT));
    let foreign: Vec<String> = found
        .iter()
        .filter(|r| ours.is_none() || (r.name == primary_key && r.kind != RelationKind::Other("index".into())))
        .map(Relation::describe)
        .collect();
    if !foreign.is_empty() {
        return Ok(Existing::Foreign(foreign));
    }
    Ok(match ours {
        None => Existing::None,
        // The comment records the row count of a complete build; an interrupted build has none.
        Some(comment) => {
            Existing::Ours { rows: comment.rsplit("rows=").next().and_then(|n| n.trim().parse().ok()).unwrap_or(-1) }
        }
    })
}

/// A number from the first row of a query.
fn number(connection: &mut dyn Connection, sql: &str, params: &[Value]) -> Result<i64, DbError> {
    connection.query_optional(sql, params)?.ok_or_else(|| DbError::other(format!("{sql}: no row")))?.int(0)
}

impl PostgresRanRead {
    /// Connect, resolve the namespace, take the lock, then build the table unless a complete one of the right size
    /// exists. `progress` gets rows done and rows in all.
    pub fn prepare(
        options: &PostgresOptions,
        interrupt: &AtomicBool,
        progress: &mut dyn FnMut(i64, i64),
    ) -> Result<PostgresRanRead, RanReadError> {
        check_url(&options.url)?;
        let url = DatabaseUrl::parse(&options.url).map_err(database)?;
        let shown = url.shown();
        let mut monitor = url.connect(&application_name()).map_err(database)?;
        let namespace = Namespace::resolve(monitor.as_mut(), options.namespace.as_deref(), false).map_err(database)?;
        namespace.pin(monitor.as_mut()).map_err(database)?;
        let server_version = monitor.server_version().map_err(database)?;
        let shared_buffers_bytes = number(
            monitor.as_mut(),
            "SELECT setting::bigint * current_setting('block_size')::bigint FROM pg_settings \
             WHERE name = 'shared_buffers'",
            &[],
        )
        .map_err(database)?;
        let block_size =
            number(monitor.as_mut(), "SELECT current_setting('block_size')::bigint", &[]).map_err(database)?;
        let table_bytes = options.size_bytes.map(|b| b as i64).unwrap_or(2 * shared_buffers_bytes);
        let rows = (table_bytes / block_size).max(1);
        let place = format!("{shown}, schema {}", namespace.quoted());

        // Reuse or build, decided on what the schema holds ([`envbench_base::lock::take_as_needed`]): a run that builds
        // holds the table alone. A fleet's agent takes no lock (its coordinator holds it) and never builds.
        let must_build =
            |monitor: &mut Box<dyn Connection>| match existing_table(monitor.as_mut(), &namespace).map_err(database)? {
                Existing::Foreign(relations) => Err(RanReadError::Foreign(format!(
                    "{place}: {} bear the names of envbench's table but envbench did not create them (its comment says \
                 which it made); envbench never creates, drops or alters anything beside what it made. Use another \
                 database or schema in --db",
                    relations.join(", ")
                ))),
                Existing::None => Ok(true),
                Existing::Ours { rows: have } => Ok(have != rows || options.fresh),
            };
        let (lock, reused) = if options.agent {
            if must_build(&mut monitor)? {
                return Err(RanReadError::Failed(format!(
                    "{place}: this host finds no {TABLE} table of {rows} pages there; the fleet's coordinator builds \
                     it before the agents start, so this host reaches another server than the coordinator did (a \
                     loopback or private address means something else on each host)"
                )));
            }
            (None, true)
        } else {
            let application = format!("envbench ranread, pid {}", std::process::id());
            let take = |_: &mut Box<dyn Connection>, exclusive: bool| {
                let mode = if exclusive { ServerLockMode::Exclusive } else { ServerLockMode::Shared };
                ServerLock::take(&url, &namespace, LOCKED, mode, &application).map_err(|refused| match refused {
                    ServerLockError::Database(error) => database(error),
                    busy => RanReadError::Busy(format!("{shown}: {busy}")),
                })
            };
            let (lock, alone) = envbench_base::lock::take_as_needed(&mut monitor, must_build, take)?;
            (Some(lock), !alone)
        };
        if !reused {
            build_table(monitor.as_mut(), &namespace, rows, interrupt, progress).map_err(database)?;
            if interrupt.load(Ordering::SeqCst) {
                return Err(RanReadError::Interrupted);
            }
            // The build's own block accesses must not land in the first step: a backend flushes its statistics when
            // it exits, so replace the building connection and wait for it to be gone.
            let builder = number(monitor.as_mut(), "SELECT pg_backend_pid()", &[]).map_err(database)?;
            drop(monitor);
            monitor = connect(&url, &namespace)?;
            wait_for_exit(monitor.as_mut(), "pid = ?", Value::Int(builder)).map_err(database)?;
        }
        let table_bytes = number(
            monitor.as_mut(),
            "SELECT pg_relation_size(?::text::regclass)",
            &[Value::Text(namespace.qualify(TABLE))],
        )
        .map_err(database)?;
        Ok(PostgresRanRead {
            url,
            namespace,
            monitor,
            info: TableInfo {
                rows,
                table_bytes,
                shared_buffers_bytes,
                block_bytes: block_size,
                reused,
                server_version,
            },
            seed: 0x005e_ed0f_ba5e,
            _lock: lock,
        })
    }

    /// The schema the table is in.
    pub fn namespace(&self) -> &Namespace {
        &self.namespace
    }

    fn counters(&mut self) -> Result<DatabaseCounters, RanReadError> {
        let row = self
            .monitor
            .query_optional(
                "SELECT coalesce(heap_blks_read, 0), coalesce(heap_blks_hit, 0), coalesce(idx_blks_read, 0), \
                 coalesce(idx_blks_hit, 0) FROM pg_statio_user_tables WHERE relname = ? AND schemaname = ?",
                &[Value::Text(TABLE.into()), Value::Text(self.namespace.name().into())],
            )
            .map_err(database)?
            .ok_or_else(|| RanReadError::Failed(format!("{}: {TABLE} has no statistics", self.url.shown())))?;
        Ok(DatabaseCounters {
            heap_blocks_read: row.int(0).map_err(database)?,
            heap_blocks_hit: row.int(1).map_err(database)?,
            index_blocks_read: row.int(2).map_err(database)?,
            index_blocks_hit: row.int(3).map_err(database)?,
        })
    }

    /// Wait until the workers' backends have exited: a backend flushes its statistics before it leaves
    /// pg_stat_activity, so the counters read after this include the whole step.
    fn wait_for_workers_to_exit(&mut self) -> Result<(), RanReadError> {
        wait_for_exit(
            self.monitor.as_mut(),
            "application_name = ? AND pid <> pg_backend_pid()",
            Value::Text(application_name()),
        )
        .map_err(database)
    }
}

/// Wait (up to 10 s) until no backend matching `condition` remains in pg_stat_activity.
fn wait_for_exit(connection: &mut dyn Connection, condition: &str, parameter: Value) -> Result<(), DbError> {
    let query = format!("SELECT count(*) FROM pg_stat_activity WHERE {condition}");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let remaining = number(connection, &query, std::slice::from_ref(&parameter))?;
        if remaining == 0 || Instant::now() > deadline {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn build_table(
    connection: &mut dyn Connection,
    namespace: &Namespace,
    rows: i64,
    interrupt: &AtomicBool,
    progress: &mut dyn FnMut(i64, i64),
) -> Result<(), DbError> {
    let table = namespace.qualify(TABLE);
    let comment = |text: &str| format!("COMMENT ON TABLE {table} IS {}", quote_literal(namespace.dialect(), text));
    connection.batch(&format!(
        "DROP TABLE IF EXISTS {table};
         CREATE UNLOGGED TABLE {table} (id bigint NOT NULL, pad text NOT NULL)
             WITH (fillfactor = 100, autovacuum_enabled = false);
         ALTER TABLE {table} ALTER COLUMN pad SET STORAGE PLAIN;
         {};",
        comment(&format!("{TABLE_COMMENT} (building)"))
    ))?;
    let insert = format!(
        "INSERT INTO {table} SELECT g, repeat(md5(g::text), {}) FROM generate_series(?::bigint, ?::bigint) g",
        PAD_CHARS / 32
    );
    let mut done = 0;
    while done < rows {
        if interrupt.load(Ordering::SeqCst) {
            return Ok(());
        }
        let last = (done + BUILD_BATCH_ROWS).min(rows);
        connection.execute(&insert, &[Value::Int(done + 1), Value::Int(last)])?;
        done = last;
        progress(done, rows);
    }
    // One statement each: VACUUM cannot run inside the implicit transaction of a multi-statement batch.
    connection.batch(&format!("ALTER TABLE {table} ADD PRIMARY KEY (id)"))?;
    connection.batch(&format!("VACUUM ANALYZE {table}"))?;
    connection.batch(&comment(&format!("{TABLE_COMMENT} rows={rows}")))?;
    Ok(())
}

impl StepRunner for PostgresRanRead {
    fn target(&self) -> String {
        format!("{}, table {}", self.url.shown(), self.namespace.qualify(TABLE))
    }

    fn run_step(
        &mut self,
        jobs: u32,
        limit: StepLimit,
        interrupt: &AtomicBool,
    ) -> Result<Option<StepFigures>, RanReadError> {
        // Connect every job before the barrier, so connection set-up is not measured and no job starts early.
        let mut connections = Vec::with_capacity(jobs as usize);
        for _ in 0..jobs {
            connections.push(connect(&self.url, &self.namespace)?);
        }
        let before = self.counters()?;
        let barrier = Arc::new(Barrier::new(jobs as usize + 1));
        let rows = self.info.rows as u64;
        self.seed = self.seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let started_at = envbench_core::model::now_utc();
        let read = format!("SELECT length(pad) FROM {} WHERE id = ?", self.namespace.qualify(TABLE));
        let outcome = std::thread::scope(|scope| {
            let handles: Vec<_> = connections
                .into_iter()
                .enumerate()
                .map(|(index, mut connection)| {
                    let (barrier, read) = (Arc::clone(&barrier), &read);
                    let seed = self.seed ^ (index as u64 + 1).wrapping_mul(0xd6e8_feb8_6659_fd93);
                    scope.spawn(move || job(connection.as_mut(), read, rows, limit, seed, &barrier, interrupt))
                })
                .collect();
            barrier.wait();
            let released = Instant::now();
            let results: Vec<_> = handles.into_iter().map(|h| h.join().expect("a ranread job panicked")).collect();
            (released.elapsed(), results)
        });
        let (elapsed, results) = outcome;
        let mut histogram = LatencyHistogram::new();
        let mut rates = Vec::new();
        for result in results {
            let (job_histogram, job_elapsed) = result.map_err(database)?;
            rates.push(job_histogram.count() as f64 / job_elapsed.as_secs_f64().max(1e-9));
            histogram.merge(&job_histogram);
        }
        self.wait_for_workers_to_exit()?;
        let after = self.counters()?;
        if histogram.count() == 0 {
            return Ok(None);
        }
        let database = DatabaseCounters {
            heap_blocks_read: after.heap_blocks_read - before.heap_blocks_read,
            heap_blocks_hit: after.heap_blocks_hit - before.heap_blocks_hit,
            index_blocks_read: after.index_blocks_read - before.index_blocks_read,
            index_blocks_hit: after.index_blocks_hit - before.index_blocks_hit,
        };
        Ok(Some(StepFigures::measured(jobs, &histogram, elapsed.as_secs_f64(), rates, started_at, Some(database))))
    }
}

/// One job: synchronous random-key reads (`read`, which makes the executor fetch the heap tuple: an index-only scan
/// would never touch the table's pages) until the limit; the connection closes when the job ends.
fn job(
    connection: &mut dyn Connection,
    read: &str,
    rows: u64,
    limit: StepLimit,
    seed: u64,
    barrier: &Barrier,
    interrupt: &AtomicBool,
) -> Result<(LatencyHistogram, Duration), DbError> {
    // Prepared before the barrier, so the first read is not a parse: key 0 is no row, so no heap page is read.
    connection.query_optional(read, &[Value::Int(0)])?;
    let mut histogram = LatencyHistogram::new();
    let mut state = seed | 1;
    barrier.wait();
    let started = Instant::now();
    let mut done: u64 = 0;
    loop {
        match limit {
            StepLimit::Iterations(n) if done >= n => break,
            StepLimit::Duration(d) if started.elapsed() >= d => break,
            _ => {}
        }
        if done.is_multiple_of(64) && interrupt.load(Ordering::Relaxed) {
            break;
        }
        // xorshift64*: uniform enough for choosing pages, and costs nothing next to a query.
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        let key = (state.wrapping_mul(0x2545_f491_4f6c_dd1d) % rows) as i64 + 1;
        let sent = Instant::now();
        connection.query_optional(read, &[Value::Int(key)])?;
        histogram.record_ns(sent.elapsed().as_nanos() as u64);
        done += 1;
    }
    Ok((histogram, started.elapsed()))
}
