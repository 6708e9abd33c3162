//! The server target: PostgreSQL, MariaDB and MySQL behind one implementation, written once over envbench-sql's
//! connection, with what TPC-H does differently on each server behind one small trait ([`TpchServer`]) with one
//! implementation per server, the way fio keeps its I/O engines.
//!
//! Every server gets the same steps. The tables are created in the run's schema ([`ServerTables`]), then loaded with
//! parallel bulk statements, the rows streamed straight from the generator: `COPY FROM STDIN` on PostgreSQL,
//! multi-row `INSERT`s on MariaDB/MySQL ([`envbench_sql::Connection::load_csv`]). Then come the primary keys (made
//! with the tables on InnoDB, which clusters rows on them), the usual foreign-key indexes and the statistics. A marker
//! table records a complete load's scale factor and row counts, so the next run with the same scale factor reuses
//! it; TPC-H tables without the marker belong to someone else and are never touched.
//!
//! Queries run unprepared over the text protocols, so numbers come back in their decimal form on every server. A
//! query is given up at its timeout by the server itself ([`envbench_sql::Connection::set_statement_timeout`]) and,
//! for the user's interrupt and a second after the deadline as its guarantee, by the watcher ([`watched`]), which
//! asks the server to stop it (a cancel request on PostgreSQL, `KILL QUERY` from a second connection on
//! MariaDB/MySQL).

use super::server::{APPLICATION_NAME, ExistingLoad, ServerTables, Stop, server_error, watched};
use super::servers::tpch_server;
use super::tpch_server::TpchServer;
use super::{LoadInfo, LoadProgress, QueryAnswer, QueryFailure, Session, Target, TargetKind};
use crate::data::TableName;
use crate::error::TpchError;
use crate::params::QueryParameters;
use crate::refresh::UpdateSet;
use envbench_core::sampler::StepObserver;
use envbench_sql::{Connection, DatabaseUrl, DbError, ErrorKind, Interrupter, Namespace};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Order keys per `DELETE` statement of RF2, and rows per bulk statement of RF1.
const ROWS_PER_REFRESH_STATEMENT: usize = 1_000;

/// How long after a statement's timeout the watcher stops a statement the server let run on.
const WATCHER_GRACE: Duration = Duration::from_secs(1);

/// Where and how to load.
#[derive(Clone, Debug)]
pub struct ServerOptions {
    /// The server, `postgres://user@host:port/database` or `mysql://user@host:port/database` (also `mariadb://...`).
    pub url: DatabaseUrl,
    /// The schema to put the tables in (a MySQL database), created when missing; `None` uses the connection's.
    pub schema: Option<String>,
    /// Parallel load and index jobs; `None` uses every CPU of this machine.
    pub load_threads: Option<usize>,
}

/// A PostgreSQL, MariaDB or MySQL database holding (or about to hold) the TPC-H tables.
pub struct ServerTarget {
    /// What TPC-H does its own way on this server.
    server: &'static dyn TpchServer,
    /// The schema the tables are in, and the lock the run holds on them.
    tables: ServerTables,
    load_threads: usize,
    /// `PostgreSQL 15.4 (Debian ...)`, `MariaDB 10.11.6`, `MySQL 8.0.36`.
    server_version: String,
    /// The server's data directory when the server runs on this machine and the user may see it.
    local_data_directory: Option<PathBuf>,
}

impl ServerTarget {
    /// Connect once to check that the server is reachable, the login right and the schema usable: the one given with
    /// `schema` (created when missing), or the connection's own.
    pub fn connect(options: &ServerOptions) -> Result<ServerTarget, TpchError> {
        let url = options.url.clone();
        let error = |e: DbError| server_error(&url, &e);
        let mut connection = url.connect(APPLICATION_NAME).map_err(error)?;
        let version = connection.server_version().map_err(error)?;
        let server = tpch_server(url.dialect(), &version).ok_or_else(|| {
            TpchError::BadOptions(format!(
                "'{}' is no database server; give a PostgreSQL or MySQL/MariaDB URL",
                url.shown()
            ))
        })?;
        let tables =
            ServerTables::resolve(url.clone(), connection.as_mut(), options.schema.as_deref()).map_err(error)?;
        let load_threads = options
            .load_threads
            .unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1))
            .max(1);
        let local_data_directory = envbench_sql::local_data_directory(connection.as_mut(), &url);
        // MariaDB reports `10.11.6-MariaDB-0+deb12u1`: the packaging is left out.
        let server_version = version.split("-MariaDB").next().unwrap_or_default().to_string();
        Ok(ServerTarget { server, tables, load_threads, server_version, local_data_directory })
    }

    /// The server's version, as `PostgreSQL 15.4`, `MariaDB 10.11.6` or `MySQL 8.0.36`.
    pub fn server_version(&self) -> &str {
        &self.server_version
    }

    /// The schema the tables are in.
    pub fn namespace(&self) -> &Namespace {
        self.tables.namespace()
    }

    /// The schema's name (a MySQL database's).
    pub fn database(&self) -> &str {
        self.tables.namespace().name()
    }

    /// Rows per table as the server counts them.
    pub fn count_rows(&self) -> Result<BTreeMap<String, u64>, TpchError> {
        let mut connection = self.connection()?;
        self.tables.count_rows(connection.as_mut()).map_err(|e| self.error(&e))
    }

    /// A connection whose unqualified names resolve in the tables' schema only.
    fn connection(&self) -> Result<Box<dyn Connection>, TpchError> {
        self.tables.connection().map_err(|e| self.error(&e))
    }

    fn error(&self, error: &DbError) -> TpchError {
        self.tables.error(error)
    }

    /// The load to reuse when `existing` is a complete load of `scale_factor` by this generator.
    fn matching_load(&self, existing: ExistingLoad, scale_factor: f64) -> Option<LoadInfo> {
        let rows = ServerTables::matching(existing, scale_factor)?;
        let summary = self.tables.summary(&self.server_version, scale_factor, &rows, None);
        let details = self.server_version.clone();
        Some(LoadInfo { reused: true, rows, load_seconds: 0.0, details, summary, generation: None })
    }

    /// What the marker says about the tables in the schema.
    fn existing_load(&self) -> Result<ExistingLoad, TpchError> {
        let mut connection = self.connection()?;
        self.tables.existing_load(connection.as_mut()).map_err(|e| self.error(&e))
    }

    fn load(
        &self,
        scale_factor: f64,
        interrupt: &AtomicBool,
        observer: &dyn StepObserver,
        progress: &(dyn Fn(LoadProgress) + Sync),
    ) -> Result<BTreeMap<String, u64>, TpchError> {
        let server = self.server;
        let mut connection = self.connection()?;
        self.tables.mark_under_way(connection.as_mut()).map_err(|e| self.error(&e))?;
        let rebuild = self.tables.rebuild_statements(server.table_options(), server.keys_with_tables());
        if server.rebuilds_in_one_transaction() {
            connection.batch(&rebuild.join(";\n")).map_err(|e| self.error(&e))?;
        } else {
            for statement in rebuild {
                connection.batch(&statement).map_err(|e| self.error(&e))?;
            }
        }

        observer.step_started("load");
        let jobs = TableName::load_jobs(scale_factor);
        let rows_expected = TableName::approximate_total_rows(scale_factor);
        let rows_loaded = AtomicU64::new(0);
        let (rows_per_statement, statements_per_commit) = server.bulk_batches();
        let grouped = statements_per_commit > 1;
        let loaded = self.parallel(jobs, interrupt, |connection, (table, part, parts)| {
            let name = self.tables.qualify(table.as_str());
            let mut failure = None;
            // Statements sent in the open transaction; always 0 where each statement commits on its own.
            let mut in_transaction = 0;
            table.csv_chunks(scale_factor, part, parts, rows_per_statement, &mut |chunk, rows| {
                if interrupt.load(Ordering::SeqCst) {
                    return false;
                }
                let mut sent = if grouped && in_transaction == 0 { connection.begin() } else { Ok(()) };
                sent = sent.and_then(|()| connection.load_csv(&name, chunk));
                if grouped {
                    in_transaction += 1;
                    if sent.is_ok() && in_transaction == statements_per_commit {
                        in_transaction = 0;
                        sent = connection.commit();
                    }
                }
                if let Err(e) = sent {
                    failure = Some(e);
                    return false;
                }
                let loaded = rows_loaded.fetch_add(rows, Ordering::Relaxed) + rows;
                progress(LoadProgress { rows_loaded: loaded, rows_expected, action: server.loading() });
                true
            });
            // After an interrupt the partial table is harmless because the marker's payload is never written.
            if failure.is_none() && in_transaction > 0 {
                failure = connection.commit().err();
            }
            match failure {
                Some(e) => {
                    let url = self.tables.url();
                    let message = format!("loading {table}: {}", e.detail(&url.shown()));
                    Err(server_error(url, &DbError::new(e.kind, message)))
                }
                None => Ok(()),
            }
        });
        observer.step_finished("load");
        loaded?;
        if interrupt.load(Ordering::SeqCst) {
            return Err(TpchError::Interrupted);
        }

        observer.step_started("index");
        let indexed = self.parallel(server.index_statements(&self.tables), interrupt, |connection, statement| {
            connection.batch(&statement).map_err(|e| self.error(&e))
        });
        observer.step_finished("index");
        indexed?;
        observer.step_started("analyze");
        let analyzed = self.parallel(TableName::ALL.to_vec(), interrupt, |connection, table| {
            let (analyze, aids) = server.analyze_statements(table, &self.tables.qualify(table.as_str()));
            connection.batch(&analyze).map_err(|e| self.error(&e))?;
            for statement in aids {
                let _ = connection.batch(&statement);
            }
            Ok(())
        });
        observer.step_finished("analyze");
        analyzed?;
        if interrupt.load(Ordering::SeqCst) {
            return Err(TpchError::Interrupted);
        }
        self.tables.mark_complete(connection.as_mut(), scale_factor).map_err(|e| self.error(&e))
    }

    /// Run jobs on `load_threads` connections; the first error stops the others.
    fn parallel<J: Send>(
        &self,
        jobs: Vec<J>,
        interrupt: &AtomicBool,
        work: impl Fn(&mut Box<dyn Connection>, J) -> Result<(), TpchError> + Sync,
    ) -> Result<(), TpchError> {
        super::parallel(self.load_threads, jobs, interrupt, || self.connection(), work)
    }
}

impl Target for ServerTarget {
    fn kind(&self) -> TargetKind {
        TargetKind::Server(self.tables.url().dialect())
    }

    fn prepare(
        &mut self,
        scale_factor: f64,
        fresh: bool,
        interrupt: &AtomicBool,
        observer: &dyn StepObserver,
        progress: &(dyn Fn(LoadProgress) + Sync),
    ) -> Result<LoadInfo, TpchError> {
        crate::scale::check_scale_factor(scale_factor)?;
        match self.existing_load()? {
            ExistingLoad::Foreign(relations) => return Err(self.tables.foreign(&relations)),
            existing if !fresh => {
                if let Some(load) = self.matching_load(existing, scale_factor) {
                    return Ok(load);
                }
            }
            _ => {}
        }
        let started = Instant::now();
        let rows = self.load(scale_factor, interrupt, observer, progress)?;
        let load_seconds = started.elapsed().as_secs_f64();
        let how = Some((load_seconds, self.server.load_method()));
        let summary = self.tables.summary(&self.server_version, scale_factor, &rows, how);
        let details = self.server_version.clone();
        Ok(LoadInfo { reused: false, rows, load_seconds, details, summary, generation: None })
    }

    fn loaded(&self, scale_factor: f64) -> Result<Option<LoadInfo>, TpchError> {
        Ok(self.matching_load(self.existing_load()?, scale_factor))
    }

    fn lock(&mut self, scale_factor: f64, fresh: bool, writes: bool) -> Result<(), TpchError> {
        // A run that writes (the refresh functions) holds the tables alone whatever they hold.
        let must_load = |target: &mut ServerTarget| Ok(writes || fresh || target.loaded(scale_factor)?.is_none());
        envbench_base::lock::take_as_needed(self, must_load, |target, exclusive| target.tables.lock(exclusive))
            .map(|_| ())
    }

    fn session(&self) -> Result<Box<dyn Session>, TpchError> {
        let mut connection = self.connection()?;
        let interrupter = connection.interrupter();
        Ok(Box::new(ServerSession {
            connection,
            interrupter,
            timeout: None,
            shown: self.tables.url().shown(),
            orders: self.tables.qualify(TableName::Orders.as_str()),
            lineitem: self.tables.qualify(TableName::LineItem.as_str()),
        }))
    }

    fn refresh_support(&self) -> Result<(), String> {
        Ok(())
    }

    fn query_sql(&self, parameters: &QueryParameters) -> String {
        let tables = self.tables.table_names();
        let sql = self.namespace().adapt(&crate::queries::render_with(parameters, &tables));
        self.server.with_plan_aids(sql, &tables.lineitem)
    }

    /// TPC-H tables in the schema that envbench did not load are refused before anything runs.
    fn check(&self, _scale_factor: f64) -> Result<(), TpchError> {
        self.tables.check()
    }

    fn data_directory(&self) -> Option<&Path> {
        self.local_data_directory.as_deref()
    }

    fn drives_local_server(&self) -> bool {
        self.tables.url().is_local()
    }

    fn cold_cache_note(&self) -> Option<&'static str> {
        Some(self.server.cold_cache_note())
    }
}

/// One stream's connection to the server.
struct ServerSession {
    connection: Box<dyn Connection>,
    /// What asks the server to stop the connection's running statement.
    interrupter: Option<Interrupter>,
    /// The statement time limit in force on the connection.
    timeout: Option<Duration>,
    /// The URL without its password, as the connection's messages begin.
    shown: String,
    /// The refresh functions' tables, qualified.
    orders: String,
    lineitem: String,
}

impl ServerSession {
    /// Run `statement` with a time limit while watching `interrupt`: when it becomes true, or the deadline passes
    /// before the server's own limit has stopped the statement, the server is asked to stop it.
    fn watched<T>(
        &mut self,
        timeout: Option<Duration>,
        interrupt: &AtomicBool,
        statement: impl FnOnce(&mut dyn Connection) -> Result<T, DbError>,
    ) -> Result<T, QueryFailure> {
        if timeout != self.timeout {
            self.connection
                .set_statement_timeout(timeout)
                .map_err(|e| QueryFailure::Error(e.detail(&self.shown).to_string()))?;
            self.timeout = timeout;
        }
        // The server's own limit stops a statement at its timeout; the watcher stops one the server let run on
        // (MySQL's limit applies to SELECT only) a moment later. Never at the same instant: a cancel request crossing
        // the server's own stop would land on the session's next statement.
        let deadline = timeout.map(|t| Instant::now() + t + WATCHER_GRACE);
        let interrupter = &self.interrupter;
        let stop = move |_| {
            if let Some(interrupt) = interrupter {
                interrupt();
            }
        };
        let connection = self.connection.as_mut();
        let (result, stopped) = watched(interrupt, deadline, stop, || statement(connection));
        result.map_err(|e| match (stopped, e.kind) {
            (Some(Stop::Interrupted), _) => QueryFailure::Cancelled,
            (Some(Stop::Deadline), _) => QueryFailure::TimedOut,
            (None, ErrorKind::Cancelled) if interrupt.load(Ordering::SeqCst) => QueryFailure::Cancelled,
            (None, ErrorKind::Cancelled) => QueryFailure::TimedOut,
            (None, _) => QueryFailure::Error(e.detail(&self.shown).to_string()),
        })
    }
}

impl Session for ServerSession {
    fn query(
        &mut self,
        sql: &str,
        timeout: Option<Duration>,
        interrupt: &AtomicBool,
    ) -> Result<QueryAnswer, QueryFailure> {
        let (columns, rows) = self.watched(timeout, interrupt, |connection| connection.query_named(sql))?;
        let rows =
            rows.into_iter().map(|row| (0..row.0.len()).map(|i| row.text(i).unwrap_or_default()).collect()).collect();
        Ok(QueryAnswer { columns, rows })
    }

    fn refresh_insert(&mut self, update_set: &UpdateSet) -> Result<(), QueryFailure> {
        let tables =
            [(self.orders.clone(), update_set.orders_csv()), (self.lineitem.clone(), update_set.lineitems_csv())];
        let never = AtomicBool::new(false);
        self.watched(None, &never, |connection| {
            in_transaction(connection, |connection| {
                for (table, csv) in &tables {
                    let lines: Vec<&str> = csv.lines().collect();
                    for chunk in lines.chunks(ROWS_PER_REFRESH_STATEMENT) {
                        connection.load_csv(table, &chunk.join("\n"))?;
                    }
                }
                Ok(())
            })
        })
    }

    fn refresh_delete(&mut self, update_set: &UpdateSet) -> Result<(), QueryFailure> {
        let mut statements = Vec::new();
        for (table, key) in [(&self.lineitem, "l_orderkey"), (&self.orders, "o_orderkey")] {
            statements.extend(update_set.order_keys.chunks(ROWS_PER_REFRESH_STATEMENT).map(|keys| {
                let keys: Vec<String> = keys.iter().map(i64::to_string).collect();
                format!("DELETE FROM {table} WHERE {key} IN ({})", keys.join(","))
            }));
        }
        let never = AtomicBool::new(false);
        self.watched(None, &never, |connection| {
            in_transaction(connection, |connection| statements.iter().try_for_each(|s| connection.batch(s)))
        })
    }
}

/// Run `work` in one transaction, rolled back when it fails.
fn in_transaction(
    connection: &mut dyn Connection,
    work: impl FnOnce(&mut dyn Connection) -> Result<(), DbError>,
) -> Result<(), DbError> {
    connection.begin()?;
    match work(connection) {
        Ok(()) => connection.commit(),
        Err(e) => {
            let _ = connection.rollback();
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use envbench_sql::Dialect;

    #[test]
    fn an_absent_server_gives_an_error_that_says_what_to_check() {
        for (url, named) in [
            ("postgres://postgres@127.0.0.1:1/none", "PostgreSQL at postgres://postgres@127.0.0.1:1/none: "),
            ("mysql://root@127.0.0.1:1/test", "MySQL/MariaDB at mysql://root@127.0.0.1:1/test: "),
        ] {
            let options = ServerOptions { url: DatabaseUrl::parse(url).unwrap(), schema: None, load_threads: None };
            let error = ServerTarget::connect(&options).err().expect("nothing listens on port 1").to_string();
            assert!(error.contains("is the server running"), "{error}");
            assert!(error.starts_with(named), "{error}");
        }
    }

    #[test]
    fn urls_name_the_target() {
        use super::super::TargetSpec;
        for url in ["mysql://root@127.0.0.1/test", "mariadb://root@127.0.0.1:3306/test"] {
            let TargetSpec::Server(parsed) = TargetSpec::parse(url).unwrap() else { panic!("{url} is a server") };
            assert_eq!(parsed.dialect(), Dialect::MySql);
        }
        for (bad, says) in [("oracle://scott:tiger@db/x", "postgres://"), ("duckdb", "give datafusion")] {
            let error = TargetSpec::parse(bad).unwrap_err().to_string();
            assert!(error.contains(says) && error.contains("mysql://"), "{error}");
            assert!(!error.contains("tiger"), "{error}");
        }
        // The names stored results carry, as they were when each server had a variant of its own.
        for (kind, name) in [
            (TargetKind::DataFusion, "datafusion"),
            (TargetKind::Server(Dialect::Postgres), "postgres"),
            (TargetKind::Server(Dialect::MySql), "mysql"),
        ] {
            assert_eq!(kind.as_str(), name);
            assert_eq!(serde_json::to_string(&kind).unwrap(), format!("\"{name}\""));
            assert_eq!(serde_json::from_str::<TargetKind>(&format!("\"{name}\"")).unwrap(), kind);
        }
        let unknown = serde_json::from_str::<TargetKind>("\"duckdb\"").unwrap_err().to_string();
        assert!(unknown.contains("unknown TPC-H target 'duckdb'"), "{unknown}");
    }

    #[test]
    fn each_server_gets_its_own_words() {
        let mariadb = tpch_server(Dialect::MySql, "MariaDB 10.11.6-MariaDB-0+deb12u1").unwrap();
        let mysql = tpch_server(Dialect::MySql, "MySQL 8.0.36").unwrap();
        let postgres = tpch_server(Dialect::Postgres, "PostgreSQL 15.4").unwrap();
        assert!(postgres.cold_cache_note().contains("shared_buffers"), "{}", postgres.cold_cache_note());
        assert!(tpch_server(Dialect::Sqlite, "SQLite 3.45").is_none());
        assert_eq!((mariadb.loading(), mysql.loading()), ("loading into MariaDB", "loading into MySQL"));
        assert!(mysql.cold_cache_note().contains("InnoDB buffer pool"));
        let orders = (TableName::Orders, "orders");
        assert!(mariadb.analyze_statements(orders.0, orders.1).1[1].contains("PERSISTENT FOR COLUMNS"));
        assert!(mysql.analyze_statements(orders.0, orders.1).1[0].contains("UPDATE HISTOGRAM"));
    }
}
