//! The PostgreSQL target: tables created and loaded by envbench with parallel `COPY FROM STDIN`, the rows streamed
//! straight from the generator as CSV; then primary keys, the usual foreign-key indexes and `ANALYZE`. A marker table
//! records a complete load's scale factor and row counts, so the next run with the same scale factor reuses it.

use super::{INTERRUPT_POLL, LoadInfo, LoadProgress, QueryAnswer, QueryFailure, Session, Target, TargetKind};
use crate::TpchError;
use crate::data::{GENERATOR, TableName};
use crate::refresh::UpdateSet;
use envbench_core::model::{postgres_advice, redact_secrets};
use envbench_core::sampler::StepObserver;
use postgres::{Client, NoTls, SimpleQueryMessage};
use std::collections::BTreeMap;
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The table that marks a load as envbench's and complete.
pub const MARKER_TABLE: &str = "envbench_tpch_load";
const MARKER_COMMENT: &str = "created by envbench tpch";
const APPLICATION_NAME: &str = "envbench-tpch";
const COPY_CHUNK_ROWS: usize = 10_000;

const CREATE_TABLES: &str = "
CREATE TABLE region (r_regionkey integer NOT NULL, r_name char(25) NOT NULL, r_comment varchar(152));
CREATE TABLE nation (n_nationkey integer NOT NULL, n_name char(25) NOT NULL, n_regionkey integer NOT NULL,
    n_comment varchar(152));
CREATE TABLE supplier (s_suppkey bigint NOT NULL, s_name char(25) NOT NULL, s_address varchar(40) NOT NULL,
    s_nationkey integer NOT NULL, s_phone char(15) NOT NULL, s_acctbal decimal(15,2) NOT NULL,
    s_comment varchar(101) NOT NULL);
CREATE TABLE customer (c_custkey bigint NOT NULL, c_name varchar(25) NOT NULL, c_address varchar(40) NOT NULL,
    c_nationkey integer NOT NULL, c_phone char(15) NOT NULL, c_acctbal decimal(15,2) NOT NULL,
    c_mktsegment char(10) NOT NULL, c_comment varchar(117) NOT NULL);
CREATE TABLE part (p_partkey bigint NOT NULL, p_name varchar(55) NOT NULL, p_mfgr char(25) NOT NULL,
    p_brand char(10) NOT NULL, p_type varchar(25) NOT NULL, p_size integer NOT NULL, p_container char(10) NOT NULL,
    p_retailprice decimal(15,2) NOT NULL, p_comment varchar(23) NOT NULL);
CREATE TABLE partsupp (ps_partkey bigint NOT NULL, ps_suppkey bigint NOT NULL, ps_availqty integer NOT NULL,
    ps_supplycost decimal(15,2) NOT NULL, ps_comment varchar(199) NOT NULL);
CREATE TABLE orders (o_orderkey bigint NOT NULL, o_custkey bigint NOT NULL, o_orderstatus char(1) NOT NULL,
    o_totalprice decimal(15,2) NOT NULL, o_orderdate date NOT NULL, o_orderpriority char(15) NOT NULL,
    o_clerk char(15) NOT NULL, o_shippriority integer NOT NULL, o_comment varchar(79) NOT NULL);
CREATE TABLE lineitem (l_orderkey bigint NOT NULL, l_partkey bigint NOT NULL, l_suppkey bigint NOT NULL,
    l_linenumber integer NOT NULL, l_quantity decimal(15,2) NOT NULL, l_extendedprice decimal(15,2) NOT NULL,
    l_discount decimal(15,2) NOT NULL, l_tax decimal(15,2) NOT NULL, l_returnflag char(1) NOT NULL,
    l_linestatus char(1) NOT NULL, l_shipdate date NOT NULL, l_commitdate date NOT NULL, l_receiptdate date NOT NULL,
    l_shipinstruct char(25) NOT NULL, l_shipmode char(10) NOT NULL, l_comment varchar(44) NOT NULL);";

/// Primary keys and the foreign-key indexes the queries join on; each runs as its own job, in parallel.
const KEYS_AND_INDEXES: [&str; 13] = [
    "ALTER TABLE lineitem ADD PRIMARY KEY (l_orderkey, l_linenumber)",
    "CREATE INDEX lineitem_part_supp_idx ON lineitem (l_partkey, l_suppkey)",
    "CREATE INDEX lineitem_supp_idx ON lineitem (l_suppkey)",
    "ALTER TABLE orders ADD PRIMARY KEY (o_orderkey)",
    "CREATE INDEX orders_cust_idx ON orders (o_custkey)",
    "ALTER TABLE partsupp ADD PRIMARY KEY (ps_partkey, ps_suppkey)",
    "CREATE INDEX partsupp_supp_idx ON partsupp (ps_suppkey)",
    "ALTER TABLE part ADD PRIMARY KEY (p_partkey)",
    "ALTER TABLE customer ADD PRIMARY KEY (c_custkey)",
    "CREATE INDEX customer_nation_idx ON customer (c_nationkey)",
    "ALTER TABLE supplier ADD PRIMARY KEY (s_suppkey)",
    "CREATE INDEX supplier_nation_idx ON supplier (s_nationkey)",
    "ALTER TABLE nation ADD PRIMARY KEY (n_nationkey); CREATE INDEX nation_region_idx ON nation (n_regionkey); \
     ALTER TABLE region ADD PRIMARY KEY (r_regionkey)",
];

/// Where and how to load.
#[derive(Clone, Debug)]
pub struct PostgresOptions {
    /// `postgres://user@host:port/database`.
    pub url: String,
    /// The schema to put the tables in (created when missing); `None` uses the connection's default.
    pub schema: Option<String>,
    /// Parallel COPY and index jobs; `None` uses every CPU of this machine.
    pub load_threads: Option<usize>,
}

/// A PostgreSQL database holding (or about to hold) the TPC-H tables.
pub struct PostgresTarget {
    config: postgres::Config,
    url_for_people: String,
    load_threads: usize,
    server_version: String,
    /// The server's data directory when the server runs on this machine and the user may see the setting.
    local_data_directory: Option<std::path::PathBuf>,
}

/// Turn a driver error into one that says what to do.
fn explain(url: &str, error: &postgres::Error) -> String {
    let advice = match error.as_db_error() {
        Some(db) => postgres_advice(Some(db.code().code()), db.message(), "the URL"),
        None => postgres_advice(None, &error.to_string(), "the URL"),
    };
    format!("{url}: {advice}")
}

fn quote_identifier(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

impl PostgresTarget {
    /// What a prepare did, for people: `loaded SF 1 in PostgreSQL 15.4: 8.66 M rows in 61.2 s (...)` or
    /// `reusing the tables of SF 1 ...` (`load_seconds` is `None` for a reused load).
    fn summary(
        &self,
        scale_factor: f64,
        rows: &std::collections::BTreeMap<String, u64>,
        load_seconds: Option<f64>,
    ) -> String {
        let total: u64 = rows.values().sum();
        format!(
            "{} SF {} in PostgreSQL {}: {} rows{}",
            if load_seconds.is_none() { "reusing the tables of" } else { "loaded" },
            crate::format_scale_factor(scale_factor),
            self.server_version,
            envbench_core::text::count(total as f64),
            load_seconds.map(|s| format!(" in {s:.1} s (COPY, keys, indexes, ANALYZE)")).unwrap_or_default()
        )
    }

    /// Connect once to check the server is reachable and the schema usable.
    pub fn connect(options: &PostgresOptions) -> Result<PostgresTarget, TpchError> {
        let url_for_people = redact_secrets(&options.url);
        let mut config: postgres::Config = options
            .url
            .parse()
            .map_err(|e| TpchError::BadDatabaseUrl { url: url_for_people.clone(), reason: format!("{e}") })?;
        config.application_name(APPLICATION_NAME);
        config.connect_timeout(Duration::from_secs(10));
        envbench_sql::postgres_password_from_environment(&mut config);
        let database_error = |e: postgres::Error| TpchError::Database {
            url: url_for_people.clone(),
            message: explain(&url_for_people, &e),
        };
        let mut client = config.connect(NoTls).map_err(database_error)?;
        if let Some(schema) = &options.schema {
            client
                .batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {}", quote_identifier(schema)))
                .map_err(database_error)?;
            config.options(&format!("-c search_path={}", quote_identifier(schema)));
        }
        let server_version: String = client.query_one("SHOW server_version", &[]).map_err(database_error)?.get(0);
        let load_threads = options
            .load_threads
            .unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1))
            .max(1);
        // data_directory is visible to superusers and pg_read_all_settings only; otherwise the row is absent.
        let data_directory: Option<String> = client
            .query_opt("SELECT setting FROM pg_settings WHERE name = 'data_directory'", &[])
            .ok()
            .flatten()
            .map(|row| row.get(0));
        let on_this_machine = config.get_hosts().iter().all(|host| match host {
            postgres::config::Host::Unix(_) => true,
            postgres::config::Host::Tcp(name) => {
                matches!(name.as_str(), "localhost" | "127.0.0.1" | "::1") || name.starts_with("127.")
            }
        });
        let local_data_directory =
            data_directory.map(std::path::PathBuf::from).filter(|dir| on_this_machine && dir.is_dir());
        Ok(PostgresTarget { config, url_for_people, load_threads, server_version, local_data_directory })
    }

    /// The server's data directory, when the server runs on this machine and the connection's user may read the
    /// setting: the storage whose figures matter during the queries.
    pub fn local_data_directory(&self) -> Option<&std::path::Path> {
        self.local_data_directory.as_deref()
    }

    /// The server's version, as it reports it.
    pub fn server_version(&self) -> &str {
        &self.server_version
    }

    fn client(&self) -> Result<Client, TpchError> {
        self.config.connect(NoTls).map_err(|e| self.error(&e))
    }

    fn error(&self, error: &postgres::Error) -> TpchError {
        TpchError::Database { url: self.url_for_people.clone(), message: explain(&self.url_for_people, error) }
    }

    /// The load to reuse when `existing` is a complete load of `scale_factor` by this generator.
    fn matching_load(&self, existing: ExistingLoad, scale_factor: f64) -> Option<LoadInfo> {
        match existing {
            ExistingLoad::Complete { scale_factor: loaded, generator, rows }
                if loaded == scale_factor && generator == GENERATOR =>
            {
                let summary = self.summary(scale_factor, &rows, None);
                let details = format!("PostgreSQL {}", self.server_version);
                Some(LoadInfo { reused: true, rows, load_seconds: 0.0, details, summary, generation: None })
            }
            _ => None,
        }
    }

    /// What the marker says about the current load.
    fn existing_load(&self, client: &mut Client) -> Result<ExistingLoad, TpchError> {
        let names: Vec<&str> = TableName::ALL.iter().map(|t| t.as_str()).collect();
        let row = client
            .query_one(
                "SELECT (SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = ANY($1)), \
                        (SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = $2)",
                &[&names, &MARKER_TABLE],
            )
            .map_err(|e| self.error(&e))?;
        let (tpch_tables, marker): (i64, i64) = (row.get(0), row.get(1));
        if marker == 0 {
            return Ok(if tpch_tables == 0 { ExistingLoad::None } else { ExistingLoad::Foreign });
        }
        let row = client
            .query_opt(&format!("SELECT scale_factor, generator, row_counts FROM {MARKER_TABLE} LIMIT 1"), &[])
            .map_err(|e| self.error(&e))?;
        Ok(match row {
            Some(row) => ExistingLoad::Complete {
                scale_factor: row.get(0),
                generator: row.get(1),
                rows: serde_json::from_str(row.get::<_, &str>(2)).unwrap_or_default(),
            },
            None => ExistingLoad::Incomplete,
        })
    }

    fn load(
        &self,
        scale_factor: f64,
        interrupt: &AtomicBool,
        observer: &dyn StepObserver,
        progress: &(dyn Fn(LoadProgress) + Sync),
    ) -> Result<BTreeMap<String, u64>, TpchError> {
        let mut client = self.client()?;
        let drops: Vec<String> = TableName::ALL.iter().map(|t| format!("DROP TABLE IF EXISTS {t};")).collect();
        client
            .batch_execute(&format!(
                "DROP TABLE IF EXISTS {MARKER_TABLE};
                 CREATE TABLE {MARKER_TABLE} (scale_factor double precision NOT NULL, generator text NOT NULL,
                     row_counts text NOT NULL, loaded_at timestamptz NOT NULL DEFAULT now());
                 COMMENT ON TABLE {MARKER_TABLE} IS '{MARKER_COMMENT}';
                 {}
                 {CREATE_TABLES}",
                drops.join("\n")
            ))
            .map_err(|e| self.error(&e))?;

        observer.step_started("load");
        let jobs = TableName::load_jobs(scale_factor);
        let rows_expected = TableName::approximate_total_rows(scale_factor);
        let rows_loaded = AtomicU64::new(0);
        self.parallel(jobs, interrupt, |client, (table, part, parts)| {
            let mut writer =
                client.copy_in(&format!("COPY {table} FROM STDIN (FORMAT csv)")).map_err(|e| self.error(&e))?;
            let mut write_error = None;
            table.csv_chunks(scale_factor, part, parts, COPY_CHUNK_ROWS, &mut |chunk, rows| {
                if interrupt.load(Ordering::SeqCst) {
                    return false;
                }
                if let Err(e) = writer.write_all(chunk.as_bytes()) {
                    write_error = Some(e);
                    return false;
                }
                let loaded = rows_loaded.fetch_add(rows, Ordering::Relaxed) + rows;
                progress(LoadProgress { rows_loaded: loaded, rows_expected, action: "loading into PostgreSQL" });
                true
            });
            // After a write error the connection is broken and finish() reports the driver's reason; after an
            // interrupt the partial table is harmless because the marker row is never written.
            writer.finish().map_err(|e| self.error(&e))?;
            match write_error {
                Some(e) => Err(TpchError::Database {
                    url: self.url_for_people.clone(),
                    message: format!("sending {table} rows to the server failed: {e}"),
                }),
                None => Ok(()),
            }
        })?;
        if interrupt.load(Ordering::SeqCst) {
            observer.step_finished("load");
            return Err(TpchError::Interrupted);
        }
        observer.step_finished("load");

        observer.step_started("index");
        self.parallel(KEYS_AND_INDEXES.to_vec(), interrupt, |client, statement| {
            client.batch_execute(statement).map_err(|e| self.error(&e))
        })?;
        observer.step_finished("index");
        observer.step_started("analyze");
        self.parallel(TableName::ALL.to_vec(), interrupt, |client, table| {
            client.batch_execute(&format!("ANALYZE {table}")).map_err(|e| self.error(&e))
        })?;
        observer.step_finished("analyze");
        if interrupt.load(Ordering::SeqCst) {
            return Err(TpchError::Interrupted);
        }

        let rows = count_rows(&mut client).map_err(|e| self.error(&e))?;
        let rows_text = serde_json::to_string(&rows).expect("row counts always serialize");
        client
            .execute(
                &format!("INSERT INTO {MARKER_TABLE} (scale_factor, generator, row_counts) VALUES ($1, $2, $3)"),
                &[&scale_factor, &GENERATOR, &rows_text],
            )
            .map_err(|e| self.error(&e))?;
        Ok(rows)
    }

    /// Run jobs on `load_threads` connections; the first error stops the others.
    fn parallel<J: Send>(
        &self,
        jobs: Vec<J>,
        interrupt: &AtomicBool,
        work: impl Fn(&mut Client, J) -> Result<(), TpchError> + Sync,
    ) -> Result<(), TpchError> {
        super::parallel(self.load_threads, jobs, interrupt, || self.client(), work)
    }
}

#[derive(PartialEq)]
enum ExistingLoad {
    None,
    Foreign,
    Incomplete,
    Complete { scale_factor: f64, generator: String, rows: BTreeMap<String, u64> },
}

/// Rows per table as the database counts them.
pub fn count_rows(client: &mut Client) -> Result<BTreeMap<String, u64>, postgres::Error> {
    let mut rows = BTreeMap::new();
    for table in TableName::ALL {
        let count: i64 = client.query_one(&format!("SELECT count(*) FROM {table}"), &[])?.get(0);
        rows.insert(table.as_str().to_string(), count as u64);
    }
    Ok(rows)
}

impl Target for PostgresTarget {
    fn kind(&self) -> TargetKind {
        TargetKind::Postgres
    }

    fn prepare(
        &mut self,
        scale_factor: f64,
        fresh: bool,
        interrupt: &AtomicBool,
        observer: &dyn StepObserver,
        progress: &(dyn Fn(LoadProgress) + Sync),
    ) -> Result<LoadInfo, TpchError> {
        crate::check_scale_factor(scale_factor)?;
        let mut client = self.client()?;
        let details = format!("PostgreSQL {}", self.server_version);
        let existing = self.existing_load(&mut client)?;
        if existing == ExistingLoad::Foreign {
            return Err(TpchError::Database {
                url: self.url_for_people.clone(),
                message: "TPC-H tables exist that envbench did not load (no envbench_tpch_load marker); envbench will \
                          not touch them. Use another database or schema"
                    .to_string(),
            });
        }
        if !fresh && let Some(load) = self.matching_load(existing, scale_factor) {
            return Ok(load);
        }
        let started = Instant::now();
        let rows = self.load(scale_factor, interrupt, observer, progress)?;
        let load_seconds = started.elapsed().as_secs_f64();
        let summary = self.summary(scale_factor, &rows, Some(load_seconds));
        Ok(LoadInfo { reused: false, rows, load_seconds, details, summary, generation: None })
    }

    fn loaded(&self, scale_factor: f64) -> Result<Option<LoadInfo>, TpchError> {
        let existing = self.existing_load(&mut self.client()?)?;
        Ok(self.matching_load(existing, scale_factor))
    }

    fn session(&self) -> Result<Box<dyn Session>, TpchError> {
        Ok(Box::new(PostgresSession { client: self.client()?, timeout_ms: 0 }))
    }

    fn refresh_support(&self) -> Result<(), String> {
        Ok(())
    }

    fn data_directory(&self) -> Option<&std::path::Path> {
        self.local_data_directory.as_deref()
    }

    fn cold_cache_note(&self) -> Option<&'static str> {
        Some(
            "--cold drops this machine's page cache; PostgreSQL's shared_buffers stay warm (restart the server for a \
             fully cold start), and a server on another machine keeps its own cache",
        )
    }
}

struct PostgresSession {
    client: Client,
    /// The statement_timeout in force, 0 for none.
    timeout_ms: u64,
}

impl PostgresSession {
    /// Run `statement` while watching `interrupt`: when it becomes true the server is asked to cancel the query.
    fn watched<T>(
        &mut self,
        timeout: Option<Duration>,
        interrupt: &AtomicBool,
        statement: impl FnOnce(&mut Client) -> Result<T, postgres::Error>,
    ) -> Result<T, QueryFailure> {
        let timeout_ms = timeout.map(|t| t.as_millis().max(1) as u64).unwrap_or(0);
        if timeout_ms != self.timeout_ms {
            self.client
                .batch_execute(&format!("SET statement_timeout = {timeout_ms}"))
                .map_err(|e| QueryFailure::Error(e.to_string()))?;
            self.timeout_ms = timeout_ms;
        }
        let token = self.client.cancel_token();
        // The watcher wakes at once when the statement ends (the sender is dropped), so the time measured around a
        // query never includes waiting for it; while the statement runs it looks at the interrupt flag every 50 ms.
        let (finished, watch) = std::sync::mpsc::channel::<()>();
        let result = std::thread::scope(|scope| {
            scope.spawn(move || {
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = watch.recv_timeout(INTERRUPT_POLL) {
                    if interrupt.load(Ordering::SeqCst) {
                        let _ = token.cancel_query(NoTls);
                        return;
                    }
                }
            });
            let result = statement(&mut self.client);
            drop(finished);
            result
        });
        result.map_err(|e| match e.as_db_error() {
            Some(db) if db.code().code() == "57014" => {
                if interrupt.load(Ordering::SeqCst) {
                    QueryFailure::Cancelled
                } else {
                    QueryFailure::TimedOut
                }
            }
            Some(db) => QueryFailure::Error(format!("{} (SQLSTATE {})", db.message(), db.code().code())),
            None => QueryFailure::Error(e.to_string()),
        })
    }
}

impl Session for PostgresSession {
    fn query(
        &mut self,
        sql: &str,
        timeout: Option<Duration>,
        interrupt: &AtomicBool,
    ) -> Result<QueryAnswer, QueryFailure> {
        let messages = self.watched(timeout, interrupt, |client| client.simple_query(sql))?;
        let mut answer = QueryAnswer::default();
        for message in messages {
            match message {
                SimpleQueryMessage::RowDescription(columns) => {
                    answer.columns = columns.iter().map(|c| c.name().to_string()).collect();
                }
                SimpleQueryMessage::Row(row) => {
                    answer.rows.push((0..row.len()).map(|i| row.get(i).unwrap_or("").to_string()).collect());
                }
                _ => {}
            }
        }
        Ok(answer)
    }

    fn refresh_insert(&mut self, update_set: &UpdateSet) -> Result<(), QueryFailure> {
        let (orders, lineitems) = (update_set.orders_csv(), update_set.lineitems_csv());
        let never = AtomicBool::new(false);
        self.watched(None, &never, |client| {
            let mut transaction = client.transaction()?;
            for (table, rows) in [("orders", &orders), ("lineitem", &lineitems)] {
                let mut writer = transaction.copy_in(&format!("COPY {table} FROM STDIN (FORMAT csv)"))?;
                // A write error resurfaces from finish() as the driver's error.
                let _ = writer.write_all(rows.as_bytes());
                writer.finish()?;
            }
            transaction.commit()
        })
    }

    fn refresh_delete(&mut self, update_set: &UpdateSet) -> Result<(), QueryFailure> {
        let never = AtomicBool::new(false);
        self.watched(None, &never, |client| {
            let mut transaction = client.transaction()?;
            transaction.execute("DELETE FROM lineitem WHERE l_orderkey = ANY($1)", &[&update_set.order_keys])?;
            transaction.execute("DELETE FROM orders WHERE o_orderkey = ANY($1)", &[&update_set.order_keys])?;
            transaction.commit()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_absent_server_gives_an_error_that_says_what_to_check() {
        let options =
            PostgresOptions { url: "postgres://postgres@127.0.0.1:1/none".into(), schema: None, load_threads: None };
        let error = PostgresTarget::connect(&options).err().expect("nothing listens on port 1").to_string();
        assert!(error.contains("is the server running"), "{error}");
    }
}
