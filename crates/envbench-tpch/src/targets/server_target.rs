//! The server target: PostgreSQL, MariaDB and MySQL behind one implementation, written once over envbench-sql's
//! connection, with what differs between the servers kept as data in one table ([`Engine`]), the way fio keeps its
//! I/O engines.
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

use super::server::{
    APPLICATION_NAME, ExistingLoad, SECONDARY_INDEXES, ServerTables, Stop, primary_key, server_error, watched,
};
use super::{LoadInfo, LoadProgress, QueryAnswer, QueryFailure, Session, Target, TargetKind, mysql_dialect};
use crate::data::TableName;
use crate::error::TpchError;
use crate::params::QueryParameters;
use crate::refresh::UpdateSet;
use envbench_core::sampler::StepObserver;
use envbench_sql::{Connection, DatabaseUrl, DbError, Dialect, ErrorKind, Interrupter, Namespace};
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

/// The servers envbench loads and queries, and everything that differs between them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    Postgres,
    MariaDb,
    MySql,
}

impl Engine {
    /// The engine behind a connection, by its dialect and the version it reports.
    fn of(dialect: Dialect, version: &str) -> Option<Engine> {
        match dialect {
            Dialect::Postgres => Some(Engine::Postgres),
            Dialect::MySql if version.starts_with("MariaDB") => Some(Engine::MariaDb),
            Dialect::MySql => Some(Engine::MySql),
            Dialect::Sqlite => None,
        }
    }

    pub fn kind(self) -> TargetKind {
        match self {
            Engine::Postgres => TargetKind::Postgres,
            Engine::MariaDb | Engine::MySql => TargetKind::MySql,
        }
    }

    fn loading(self) -> &'static str {
        match self {
            Engine::Postgres => "loading into PostgreSQL",
            Engine::MariaDb => "loading into MariaDB",
            Engine::MySql => "loading into MySQL",
        }
    }

    /// What follows every table's columns: InnoDB everywhere, compared byte by byte (as DataFusion compares),
    /// whatever the server's defaults.
    fn table_options(self) -> &'static str {
        match self {
            Engine::Postgres => "",
            Engine::MariaDb | Engine::MySql => " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin",
        }
    }

    /// Whether the primary keys are made with the tables (InnoDB clusters rows on them) rather than after the load,
    /// in parallel with the indexes.
    fn keys_with_tables(self) -> bool {
        match self {
            Engine::Postgres => false,
            Engine::MariaDb | Engine::MySql => true,
        }
    }

    /// Whether the tables are replaced in one batch, so in one transaction: another run sees the old tables or the
    /// new ones, never a mix (MySQL's DDL commits each statement anyway).
    fn rebuilds_in_one_transaction(self) -> bool {
        match self {
            Engine::Postgres => true,
            Engine::MariaDb | Engine::MySql => false,
        }
    }

    /// Rows per bulk statement, and bulk statements per transaction (1: each commits on its own). An `INSERT` of
    /// 1,000 lineitem rows is about 170 KB of SQL, far below any server's `max_allowed_packet`; 20 of them commit
    /// together, one log flush per 20,000 rows.
    fn bulk_batches(self) -> (usize, usize) {
        match self {
            Engine::Postgres => (10_000, 1),
            Engine::MariaDb | Engine::MySql => (1_000, 20),
        }
    }

    /// How a load is made, for its summary.
    fn load_method(self) -> &'static str {
        match self {
            Engine::Postgres => "COPY, keys, indexes, ANALYZE",
            Engine::MariaDb | Engine::MySql => "INSERT, indexes, ANALYZE TABLE",
        }
    }

    /// The keys and foreign-key indexes the queries join on, big tables first; each statement runs as its own job, in
    /// parallel. PostgreSQL builds each key and index on its own; InnoDB builds all of a table's indexes in one pass.
    fn index_statements(self, tables: &ServerTables) -> Vec<String> {
        let mut statements = Vec::new();
        for table in TableName::ALL.into_iter().rev() {
            let name = tables.qualify(table.as_str());
            let indexes = SECONDARY_INDEXES.iter().filter(|(_, on, _)| *on == table);
            match self {
                Engine::Postgres => {
                    statements.push(format!("ALTER TABLE {name} ADD PRIMARY KEY ({})", primary_key(table)));
                    for (index, _, columns) in indexes {
                        statements.push(format!("CREATE INDEX {index} ON {name} ({columns})"));
                    }
                }
                Engine::MariaDb | Engine::MySql => {
                    let adds: Vec<String> =
                        indexes.map(|(index, _, columns)| format!("ADD INDEX {index} ({columns})")).collect();
                    if !adds.is_empty() {
                        statements.push(format!("ALTER TABLE {name} {}", adds.join(", ")));
                    }
                }
            }
        }
        statements
    }

    /// The statement that gathers a table's statistics, and the statements that add optimizer aids after it, which
    /// a server too old for them may refuse (the queries are then planned without, as they would be anyway).
    fn analyze_statements(self, table: TableName, name: &str) -> (String, Vec<String>) {
        match self {
            Engine::Postgres => (format!("ANALYZE {name}"), Vec::new()),
            Engine::MariaDb => {
                (format!("ANALYZE TABLE {name}"), mysql_dialect::histogram_statements(true, table, name))
            }
            Engine::MySql => (format!("ANALYZE TABLE {name}"), mysql_dialect::histogram_statements(false, table, name)),
        }
    }

    /// A query's text, already in the server's dialect, with this server's plan aids.
    fn with_plan_aids(self, sql: String, lineitem: &str) -> String {
        match self {
            Engine::Postgres => sql,
            Engine::MariaDb | Engine::MySql => mysql_dialect::plan_aids(&sql, lineitem),
        }
    }

    /// What dropping this machine's page cache does not reach.
    fn cold_cache_note(self) -> &'static str {
        match self {
            Engine::Postgres => {
                "--cold drops this machine's page cache; PostgreSQL's shared_buffers stay warm (restart the server for \
                 a fully cold start), and a server on another machine keeps its own cache"
            }
            Engine::MariaDb | Engine::MySql => {
                "--cold drops this machine's page cache; the InnoDB buffer pool stays warm (restart the server, with \
                 innodb_buffer_pool_load_at_startup=OFF, for a fully cold start), and a server on another machine \
                 keeps its own cache"
            }
        }
    }
}

/// A PostgreSQL, MariaDB or MySQL database holding (or about to hold) the TPC-H tables.
pub struct ServerTarget {
    engine: Engine,
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
        let engine = Engine::of(url.dialect(), &version).ok_or_else(|| {
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
        Ok(ServerTarget { engine, tables, load_threads, server_version, local_data_directory })
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
        let engine = self.engine;
        let mut connection = self.connection()?;
        self.tables.mark_under_way(connection.as_mut()).map_err(|e| self.error(&e))?;
        let rebuild = self.tables.rebuild_statements(engine.table_options(), engine.keys_with_tables());
        if engine.rebuilds_in_one_transaction() {
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
        let (rows_per_statement, statements_per_commit) = engine.bulk_batches();
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
                progress(LoadProgress { rows_loaded: loaded, rows_expected, action: engine.loading() });
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
        let indexed = self.parallel(engine.index_statements(&self.tables), interrupt, |connection, statement| {
            connection.batch(&statement).map_err(|e| self.error(&e))
        });
        observer.step_finished("index");
        indexed?;
        observer.step_started("analyze");
        let analyzed = self.parallel(TableName::ALL.to_vec(), interrupt, |connection, table| {
            let (analyze, aids) = engine.analyze_statements(table, &self.tables.qualify(table.as_str()));
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
        self.engine.kind()
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
        let how = Some((load_seconds, self.engine.load_method()));
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
        self.engine.with_plan_aids(sql, &tables.lineitem)
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
        Some(self.engine.cold_cache_note())
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
        assert_eq!(TargetKind::MySql.as_str(), "mysql");
        assert_eq!(serde_json::to_string(&TargetKind::MySql).unwrap(), "\"mysql\"");
    }

    #[test]
    fn each_server_gets_its_own_words() {
        assert_eq!(Engine::of(Dialect::MySql, "MariaDB 10.11.6-MariaDB-0+deb12u1"), Some(Engine::MariaDb));
        assert_eq!(Engine::of(Dialect::MySql, "MySQL 8.0.36"), Some(Engine::MySql));
        assert_eq!(Engine::of(Dialect::Sqlite, "SQLite 3.45"), None);
        assert!(Engine::MySql.cold_cache_note().contains("InnoDB buffer pool"));
        assert_eq!(Engine::Postgres.kind(), TargetKind::Postgres);
        assert_eq!(Engine::MariaDb.kind(), TargetKind::MySql);
    }
}
