//! Database mode: the same sweep, read from inside PostgreSQL.
//!
//! A table with one row per 8 KiB heap page (each row carries ~5 KB of incompressible text stored PLAIN, so two never
//! share a page) is built once, larger than shared_buffers, with a primary key. Each job is one connection doing
//! `SELECT` by random key at queue depth 1. Around each step the table's `pg_statio` counters show how many heap blocks
//! came from outside shared_buffers — the reads that left the database for the OS and, unless the OS cached them,
//! the storage.

use crate::RanReadError;
use crate::sweep::{DatabaseCounters, StepFigures, StepLimit, StepRunner};
use envbench_core::model::{postgres_advice, redact_secrets};
use envbench_io::LatencyHistogram;
use postgres::{Client, NoTls};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// The table envbench reads; envbench creates it and marks it with a comment.
pub const TABLE: &str = "envbench_ranread";
const TABLE_COMMENT: &str = "created by envbench ranread: one row per 8 KiB page";
/// Characters of padding per row: two rows cannot share an 8 KiB page.
const PAD_CHARS: i64 = 5024;
const APPLICATION_NAME: &str = "envbench-ranread";
const BUILD_BATCH_ROWS: i64 = 20_000;

/// How to build or reuse the table.
#[derive(Clone, Debug)]
pub struct PostgresOptions {
    /// `postgres://user@host:port/database`.
    pub url: String,
    /// Table size; default twice shared_buffers.
    pub size_bytes: Option<u64>,
    /// Rebuild even when a table of the right size exists.
    pub fresh: bool,
    /// Build the table when none of the right size exists; false: refuse (a fleet's agents, whose coordinator built
    /// it before they started).
    pub build: bool,
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
    config: postgres::Config,
    monitor: Client,
    url_for_people: String,
    pub info: TableInfo,
    seed: u64,
}

/// Turn a driver error into one that says what to do.
fn explain(url: &str, error: postgres::Error) -> RanReadError {
    let message = match error.as_db_error() {
        Some(db) => postgres_advice(Some(db.code().code()), db.message(), "--db"),
        None => postgres_advice(None, &error.to_string(), "--db"),
    };
    RanReadError::Database { url: url.to_string(), message }
}

/// Refuse a `--db` that is not a PostgreSQL URL, before anything is created.
pub(crate) fn check_url(url: &str) -> Result<(), RanReadError> {
    let url_for_people = redact_secrets(url);
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        return Err(RanReadError::BadDatabaseUrl {
            url: url_for_people,
            reason: "only postgres:// and postgresql:// URLs are supported".into(),
        });
    }
    url.parse::<postgres::Config>()
        .map(|_| ())
        .map_err(|e| RanReadError::BadDatabaseUrl { url: url_for_people, reason: format!("{e}") })
}

impl PostgresRanRead {
    /// Connect, then build the table unless a complete one of the right size exists. `progress` gets rows done and
    /// rows in all.
    pub fn prepare(
        options: &PostgresOptions,
        interrupt: &AtomicBool,
        progress: &mut dyn FnMut(i64, i64),
    ) -> Result<PostgresRanRead, RanReadError> {
        let url_for_people = redact_secrets(&options.url);
        let mut config: postgres::Config = options
            .url
            .parse()
            .map_err(|e| RanReadError::BadDatabaseUrl { url: url_for_people.clone(), reason: format!("{e}") })?;
        config.application_name(APPLICATION_NAME);
        config.connect_timeout(Duration::from_secs(10));
        envbench_sql::postgres_password_from_environment(&mut config);
        let explain_here = |e| explain(&url_for_people, e);
        let mut monitor = config.connect(NoTls).map_err(explain_here)?;
        let server_version: String = monitor.query_one("SHOW server_version", &[]).map_err(explain_here)?.get(0);
        let shared_buffers_bytes: i64 = monitor
            .query_one(
                "SELECT setting::bigint * current_setting('block_size')::bigint FROM pg_settings \
                 WHERE name = 'shared_buffers'",
                &[],
            )
            .map_err(explain_here)?
            .get(0);
        let block_size: i64 =
            monitor.query_one("SELECT current_setting('block_size')::bigint", &[]).map_err(explain_here)?.get(0);
        let table_bytes = options.size_bytes.map(|b| b as i64).unwrap_or(2 * shared_buffers_bytes);
        let rows = (table_bytes / block_size).max(1);

        let existing = existing_table(&mut monitor).map_err(explain_here)?;
        let reused = match existing {
            Existing::None => false,
            Existing::Foreign => {
                return Err(RanReadError::Database {
                    url: url_for_people,
                    message: format!(
                        "a table named {TABLE} exists that envbench did not create; envbench will not touch it. \
                         Use another database in --db"
                    ),
                });
            }
            Existing::Ours { rows: have } => have == rows && !options.fresh,
        };
        if !reused && !options.build {
            return Err(RanReadError::Database {
                url: url_for_people,
                message: format!(
                    "this host finds no {TABLE} table of {rows} pages there; the fleet's coordinator builds it before \
                     the agents start, so this host reaches another server than the coordinator did (a loopback or \
                     private address means something else on each host)"
                ),
            });
        }
        if !reused {
            build_table(&mut monitor, rows, interrupt, progress).map_err(explain_here)?;
            if interrupt.load(Ordering::SeqCst) {
                return Err(RanReadError::Interrupted);
            }
            // The build's own block accesses must not land in the first step: a backend flushes its statistics when
            // it exits, so replace the building connection and wait for it to be gone.
            let builder_pid: i32 = monitor.query_one("SELECT pg_backend_pid()", &[]).map_err(explain_here)?.get(0);
            drop(monitor);
            monitor = config.connect(NoTls).map_err(explain_here)?;
            wait_for_exit(&mut monitor, "pid = $1", &builder_pid).map_err(explain_here)?;
        }
        let table_bytes: i64 =
            monitor.query_one(&format!("SELECT pg_relation_size('{TABLE}')"), &[]).map_err(explain_here)?.get(0);
        Ok(PostgresRanRead {
            config,
            monitor,
            url_for_people,
            info: TableInfo {
                rows,
                table_bytes,
                shared_buffers_bytes,
                block_bytes: block_size,
                reused,
                server_version,
            },
            seed: 0x005e_ed0f_ba5e,
        })
    }

    fn counters(&mut self) -> Result<DatabaseCounters, RanReadError> {
        let row = self
            .monitor
            .query_one(
                "SELECT coalesce(heap_blks_read, 0), coalesce(heap_blks_hit, 0), coalesce(idx_blks_read, 0), \
                 coalesce(idx_blks_hit, 0) FROM pg_statio_user_tables \
                 WHERE relname = $1 AND schemaname = current_schema()",
                &[&TABLE],
            )
            .map_err(|e| explain(&self.url_for_people, e))?;
        Ok(DatabaseCounters {
            heap_blocks_read: row.get(0),
            heap_blocks_hit: row.get(1),
            index_blocks_read: row.get(2),
            index_blocks_hit: row.get(3),
        })
    }

    /// Wait until the workers' backends have exited: a backend flushes its statistics before it leaves
    /// pg_stat_activity, so the counters read after this include the whole step.
    fn wait_for_workers_to_exit(&mut self) -> Result<(), RanReadError> {
        wait_for_exit(&mut self.monitor, "application_name = $1 AND pid <> pg_backend_pid()", &APPLICATION_NAME)
            .map_err(|e| explain(&self.url_for_people, e))
    }
}

/// Wait (up to 10 s) until no backend matching `condition` remains in pg_stat_activity.
fn wait_for_exit(
    client: &mut Client,
    condition: &str,
    parameter: &(dyn postgres::types::ToSql + Sync),
) -> Result<(), postgres::Error> {
    let query = format!("SELECT count(*) FROM pg_stat_activity WHERE {condition}");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let remaining: i64 = client.query_one(&query, &[parameter])?.get(0);
        if remaining == 0 || Instant::now() > deadline {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

enum Existing {
    None,
    Foreign,
    Ours { rows: i64 },
}

fn existing_table(client: &mut Client) -> Result<Existing, postgres::Error> {
    let row = client.query_opt(
        "SELECT obj_description(c.oid, 'pg_class') FROM pg_class c \
         WHERE c.relname = $1 AND c.relnamespace = current_schema()::regnamespace",
        &[&TABLE],
    )?;
    let Some(row) = row else { return Ok(Existing::None) };
    let comment: Option<String> = row.get(0);
    let Some(comment) = comment.filter(|c| c.starts_with(TABLE_COMMENT)) else { return Ok(Existing::Foreign) };
    // The comment records the row count of a complete build; an interrupted build has none.
    let rows = comment.rsplit("rows=").next().and_then(|n| n.trim().parse().ok()).unwrap_or(-1);
    Ok(Existing::Ours { rows })
}

fn build_table(
    client: &mut Client,
    rows: i64,
    interrupt: &AtomicBool,
    progress: &mut dyn FnMut(i64, i64),
) -> Result<(), postgres::Error> {
    client.batch_execute(&format!(
        "DROP TABLE IF EXISTS {TABLE};
         CREATE UNLOGGED TABLE {TABLE} (id bigint NOT NULL, pad text NOT NULL)
             WITH (fillfactor = 100, autovacuum_enabled = false);
         ALTER TABLE {TABLE} ALTER COLUMN pad SET STORAGE PLAIN;
         COMMENT ON TABLE {TABLE} IS '{TABLE_COMMENT} (building)';"
    ))?;
    let insert = client.prepare(&format!(
        "INSERT INTO {TABLE} SELECT g, repeat(md5(g::text), {}) FROM generate_series($1::bigint, $2::bigint) g",
        PAD_CHARS / 32
    ))?;
    let mut done = 0;
    while done < rows {
        if interrupt.load(Ordering::SeqCst) {
            return Ok(());
        }
        let last = (done + BUILD_BATCH_ROWS).min(rows);
        client.execute(&insert, &[&(done + 1), &last])?;
        done = last;
        progress(done, rows);
    }
    // One statement each: VACUUM cannot run inside the implicit transaction of a multi-statement batch.
    client.batch_execute(&format!("ALTER TABLE {TABLE} ADD PRIMARY KEY (id)"))?;
    client.batch_execute(&format!("VACUUM ANALYZE {TABLE}"))?;
    client.batch_execute(&format!("COMMENT ON TABLE {TABLE} IS '{TABLE_COMMENT} rows={rows}'"))?;
    Ok(())
}

impl StepRunner for PostgresRanRead {
    fn target(&self) -> String {
        format!("{} table {TABLE}", self.url_for_people)
    }

    fn run_step(
        &mut self,
        jobs: u32,
        limit: StepLimit,
        interrupt: &AtomicBool,
    ) -> Result<Option<StepFigures>, RanReadError> {
        // Connect every job before the barrier, so connection set-up is not measured and no job starts early.
        let mut clients = Vec::with_capacity(jobs as usize);
        for _ in 0..jobs {
            clients.push(self.config.connect(NoTls).map_err(|e| explain(&self.url_for_people, e))?);
        }
        let before = self.counters()?;
        let barrier = Arc::new(Barrier::new(jobs as usize + 1));
        let rows = self.info.rows as u64;
        self.seed = self.seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let started_at = crate::now_utc();
        let outcome = std::thread::scope(|scope| {
            let handles: Vec<_> = clients
                .into_iter()
                .enumerate()
                .map(|(index, mut client)| {
                    let barrier = Arc::clone(&barrier);
                    let seed = self.seed ^ (index as u64 + 1).wrapping_mul(0xd6e8_feb8_6659_fd93);
                    scope.spawn(move || job(&mut client, rows, limit, seed, &barrier, interrupt))
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
            let (job_histogram, job_elapsed) = result.map_err(|e| explain(&self.url_for_people, e))?;
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

/// One job: synchronous random-key reads until the limit; the connection closes when the job ends.
fn job(
    client: &mut Client,
    rows: u64,
    limit: StepLimit,
    seed: u64,
    barrier: &Barrier,
    interrupt: &AtomicBool,
) -> Result<(LatencyHistogram, Duration), postgres::Error> {
    // length(pad) makes the executor read the heap tuple: an index-only scan would never touch the table's pages.
    let statement = client.prepare(&format!("SELECT length(pad) FROM {TABLE} WHERE id = $1"))?;
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
        client.query_one(&statement, &[&key])?;
        histogram.record_ns(sent.elapsed().as_nanos() as u64);
        done += 1;
    }
    Ok((histogram, started.elapsed()))
}
