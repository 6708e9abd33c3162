//! The PostgreSQL target: tables created and loaded by envbench with parallel `COPY FROM STDIN`, the rows streamed
//! straight from the generator as CSV; then primary keys, the usual foreign-key indexes and `ANALYZE`. A marker table
//! records a complete load's scale factor and row counts, so the next run with the same scale factor reuses it.
//!
//! The tables are in one schema, resolved once ([`ServerTables`]): every statement names them qualified, and every
//! session's search path is set to that schema alone (a `SET`, so any legal schema name works).

use super::server::{APPLICATION_NAME, ExistingLoad, SECONDARY_INDEXES, ServerTables, primary_key, watched};
use super::{LoadInfo, LoadProgress, QueryAnswer, QueryFailure, Session, Target, TargetKind};
use crate::TpchError;
use crate::data::TableName;
use crate::params::QueryParameters;
use crate::refresh::UpdateSet;
use envbench_core::model::{postgres_advice, redact_secrets};
use envbench_core::sampler::StepObserver;
use envbench_sql::{DatabaseUrl, Namespace};
use postgres::{Client, NoTls, SimpleQueryMessage};
use std::collections::BTreeMap;
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

pub use super::server::MARKER_TABLE;
const COPY_CHUNK_ROWS: usize = 10_000;
/// The marker table's definition after its name.
const MARKER_DEFINITION: &str = "(scale_factor double precision NOT NULL, generator text NOT NULL, \
                                 row_counts text NOT NULL, loaded_at timestamptz NOT NULL DEFAULT now())";

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
    /// The schema the tables are in, and the lock the run holds on them.
    tables: ServerTables,
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

impl PostgresTarget {
    /// Connect once to check the server is reachable, and resolve the schema: `schema` (created when missing) or the
    /// connection's `current_schema()`.
    pub fn connect(options: &PostgresOptions) -> Result<PostgresTarget, TpchError> {
        let url_for_people = redact_secrets(&options.url);
        let bad_url = |reason: String| TpchError::BadDatabaseUrl { url: url_for_people.clone(), reason };
        let mut config: postgres::Config = options.url.parse().map_err(|e| bad_url(format!("{e}")))?;
        let url = DatabaseUrl::parse(&options.url).map_err(|e| bad_url(e.message))?;
        config.application_name(APPLICATION_NAME);
        config.connect_timeout(Duration::from_secs(10));
        envbench_sql::postgres_password_from_environment(&mut config);
        let database_error = |e: postgres::Error| TpchError::Database {
            url: url_for_people.clone(),
            message: explain(&url_for_people, &e),
        };
        let mut client = config.connect(NoTls).map_err(database_error)?;
        let tables = url
            .connect(APPLICATION_NAME)
            .and_then(|mut connection| {
                ServerTables::resolve(url.clone(), connection.as_mut(), options.schema.as_deref())
            })
            .map_err(|e| TpchError::Database { url: url_for_people.clone(), message: e.message })?;
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
        let on_this_machine = tables.url().is_local();
        let local_data_directory =
            data_directory.map(std::path::PathBuf::from).filter(|dir| on_this_machine && dir.is_dir());
        Ok(PostgresTarget { config, url_for_people, tables, load_threads, server_version, local_data_directory })
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

    /// The schema the tables are in.
    pub fn namespace(&self) -> &Namespace {
        self.tables.namespace()
    }

    /// Rows per table as the server counts them.
    pub fn count_rows(&self) -> Result<BTreeMap<String, u64>, TpchError> {
        let mut connection = self.tables.connection().map_err(|e| self.tables.error(&e))?;
        self.tables.count_rows(connection.as_mut()).map_err(|e| self.tables.error(&e))
    }

    /// A client whose search path is the tables' schema alone.
    fn client(&self) -> Result<Client, TpchError> {
        let mut client = self.config.connect(NoTls).map_err(|e| self.error(&e))?;
        if let Some(pin) = self.tables.namespace().pin_statement() {
            client.batch_execute(&pin).map_err(|e| self.error(&e))?;
        }
        Ok(client)
    }

    fn error(&self, error: &postgres::Error) -> TpchError {
        TpchError::Database { url: self.url_for_people.clone(), message: explain(&self.url_for_people, error) }
    }

    /// The load to reuse when `existing` is a complete load of `scale_factor` by this generator.
    fn matching_load(&self, existing: ExistingLoad, scale_factor: f64) -> Option<LoadInfo> {
        let rows = ServerTables::matching(existing, scale_factor)?;
        let summary = self.tables.summary(&self.server(), scale_factor, &rows, None);
        Some(LoadInfo { reused: true, rows, load_seconds: 0.0, details: self.server(), summary, generation: None })
    }

    /// `PostgreSQL 15.4`.
    fn server(&self) -> String {
        format!("PostgreSQL {}", self.server_version)
    }

    /// What the marker says about the tables in the schema.
    fn existing_load(&self) -> Result<ExistingLoad, TpchError> {
        let mut connection = self.tables.connection().map_err(|e| self.tables.error(&e))?;
        self.tables.existing_load(connection.as_mut()).map_err(|e| self.tables.error(&e))
    }

    fn load(
        &self,
        scale_factor: f64,
        interrupt: &AtomicBool,
        observer: &dyn StepObserver,
        progress: &(dyn Fn(LoadProgress) + Sync),
    ) -> Result<BTreeMap<String, u64>, TpchError> {
        let db_error = |e: envbench_sql::DbError| self.tables.error(&e);
        let mut connection = self.tables.connection().map_err(db_error)?;
        // In one batch, so in one transaction: another run sees the old tables or the new ones, never a mix.
        let rebuild = self.tables.rebuild_statements(MARKER_DEFINITION, "", false).join(";\n");
        connection.batch(&rebuild).map_err(db_error)?;

        observer.step_started("load");
        let jobs = TableName::load_jobs(scale_factor);
        let rows_expected = TableName::approximate_total_rows(scale_factor);
        let rows_loaded = AtomicU64::new(0);
        self.parallel(jobs, interrupt, |client, (table, part, parts)| {
            let copy = format!("COPY {} FROM STDIN (FORMAT csv)", self.tables.qualify(table.as_str()));
            let mut writer = client.copy_in(&copy).map_err(|e| self.error(&e))?;
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
        self.parallel(self.keys_and_indexes(), interrupt, |client, statement| {
            client.batch_execute(&statement).map_err(|e| self.error(&e))
        })?;
        observer.step_finished("index");
        observer.step_started("analyze");
        self.parallel(TableName::ALL.to_vec(), interrupt, |client, table| {
            client
                .batch_execute(&format!("ANALYZE {}", self.tables.qualify(table.as_str())))
                .map_err(|e| self.error(&e))
        })?;
        observer.step_finished("analyze");
        if interrupt.load(Ordering::SeqCst) {
            return Err(TpchError::Interrupted);
        }
        self.tables.mark_complete(connection.as_mut(), scale_factor).map_err(db_error)
    }

    /// Primary keys and the foreign-key indexes the queries join on, big tables first; each runs as its own job, in
    /// parallel.
    fn keys_and_indexes(&self) -> Vec<String> {
        let mut statements = Vec::new();
        for table in TableName::ALL.into_iter().rev() {
            let name = self.tables.qualify(table.as_str());
            statements.push(format!("ALTER TABLE {name} ADD PRIMARY KEY ({})", primary_key(table)));
            for (index, _, columns) in SECONDARY_INDEXES.iter().filter(|(_, on, _)| *on == table) {
                statements.push(format!("CREATE INDEX {index} ON {name} ({columns})"));
            }
        }
        statements
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
        let existing = self.existing_load()?;
        if let ExistingLoad::Foreign(relations) = &existing {
            return Err(self.tables.foreign(relations));
        }
        if !fresh && let Some(load) = self.matching_load(existing, scale_factor) {
            return Ok(load);
        }
        let started = Instant::now();
        let rows = self.load(scale_factor, interrupt, observer, progress)?;
        let load_seconds = started.elapsed().as_secs_f64();
        let how = Some((load_seconds, "COPY, keys, indexes, ANALYZE"));
        let summary = self.tables.summary(&self.server(), scale_factor, &rows, how);
        Ok(LoadInfo { reused: false, rows, load_seconds, details: self.server(), summary, generation: None })
    }

    fn loaded(&self, scale_factor: f64) -> Result<Option<LoadInfo>, TpchError> {
        Ok(self.matching_load(self.existing_load()?, scale_factor))
    }

    fn lock(&mut self, scale_factor: f64, fresh: bool, writes: bool) -> Result<(), TpchError> {
        // A run that writes (the refresh functions) holds the tables alone whatever they hold.
        let must_load = |target: &mut PostgresTarget| Ok(writes || fresh || target.loaded(scale_factor)?.is_none());
        envbench_io::lock::take_as_needed(self, must_load, |target, exclusive| target.tables.lock(exclusive))
            .map(|_| ())
    }

    fn session(&self) -> Result<Box<dyn Session>, TpchError> {
        Ok(Box::new(PostgresSession {
            client: self.client()?,
            timeout_ms: 0,
            orders: self.tables.qualify(TableName::Orders.as_str()),
            lineitem: self.tables.qualify(TableName::LineItem.as_str()),
        }))
    }

    fn refresh_support(&self) -> Result<(), String> {
        Ok(())
    }

    fn query_sql(&self, parameters: &QueryParameters) -> String {
        crate::queries::render_with(parameters, &self.tables.table_names())
    }

    /// TPC-H tables in the schema that envbench did not load are refused before anything runs.
    fn check(&self, _scale_factor: f64) -> Result<(), TpchError> {
        self.tables.check()
    }

    fn data_directory(&self) -> Option<&std::path::Path> {
        self.local_data_directory.as_deref()
    }

    fn drives_local_server(&self) -> bool {
        self.tables.url().is_local()
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
    /// The refresh functions' tables, qualified.
    orders: String,
    lineitem: String,
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
        // The server's statement_timeout is the deadline; the watcher cancels on Ctrl-C.
        let token = self.client.cancel_token();
        let cancel = move |_| {
            let _ = token.cancel_query(NoTls);
        };
        let (result, _) = watched(interrupt, None, cancel, || statement(&mut self.client));
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
        let copies = [(self.orders.clone(), orders), (self.lineitem.clone(), lineitems)];
        let never = AtomicBool::new(false);
        self.watched(None, &never, |client| {
            let mut transaction = client.transaction()?;
            for (table, rows) in &copies {
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
        let deletes = [
            format!("DELETE FROM {} WHERE l_orderkey = ANY($1)", self.lineitem),
            format!("DELETE FROM {} WHERE o_orderkey = ANY($1)", self.orders),
        ];
        self.watched(None, &never, |client| {
            let mut transaction = client.transaction()?;
            for delete in &deletes {
                transaction.execute(delete, &[&update_set.order_keys])?;
            }
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
