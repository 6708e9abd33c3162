//! The MySQL and MariaDB target: InnoDB tables created with their primary keys (InnoDB clusters rows on them) and
//! loaded by envbench with parallel multi-row `INSERT`s, the rows streamed straight from the generator; then the usual
//! foreign-key indexes and `ANALYZE TABLE`. A marker table records a complete load's scale factor and row counts, so
//! the next run with the same scale factor reuses it; TPC-H tables without the marker belong to someone else and are
//! never touched.
//!
//! Queries run over the text protocol, so numbers come back in their decimal form. A query is given up after its
//! timeout by the server itself (`max_statement_time` on MariaDB, `max_execution_time` on MySQL) and, for the user's
//! interrupt and as a guarantee of the deadline, by a watcher that runs `KILL QUERY` on a second connection.

use super::server::{APPLICATION_NAME, ExistingLoad, MARKER_COMMENT, SECONDARY_INDEXES, ServerTables, Stop, watched};
use super::{LoadInfo, LoadProgress, QueryAnswer, QueryFailure, Session, Target, TargetKind};
use crate::TpchError;
use crate::data::TableName;
use crate::params::QueryParameters;
use crate::refresh::UpdateSet;
use envbench_core::sampler::StepObserver;
use envbench_sql::{Connection, DatabaseUrl, DbError, Dialect};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

pub use super::server::MARKER_TABLE;
/// Rows per `INSERT` statement: about 170 KB of SQL for lineitem, far below any server's `max_allowed_packet`.
const ROWS_PER_INSERT: usize = 1_000;
/// `INSERT` statements per transaction while loading (one log flush per 20,000 rows).
const INSERTS_PER_COMMIT: usize = 20;
/// Order keys per `DELETE` statement of RF2.
const KEYS_PER_DELETE: usize = 1_000;

/// Every table is InnoDB, compared byte by byte (as DataFusion compares), whatever the server's defaults.
const TABLE_OPTIONS: &str = "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin";

/// The columns the queries filter on without an index, by table: histograms on them let the optimizer see how few
/// rows a date range or a part type selects (without them MariaDB drives Q14 from part through a secondary index
/// into lineitem, ten times slower than scanning lineitem), as PostgreSQL's `ANALYZE` does for every column.
fn histogram_columns(table: TableName) -> &'static [&'static str] {
    match table {
        TableName::Region => &["r_name"],
        TableName::Nation => &["n_name"],
        TableName::Supplier | TableName::PartSupp => &[],
        TableName::Customer => &["c_mktsegment", "c_acctbal"],
        TableName::Part => &["p_brand", "p_type", "p_size", "p_container"],
        TableName::Orders => &["o_orderdate", "o_orderstatus", "o_orderpriority"],
        TableName::LineItem => &[
            "l_shipdate",
            "l_commitdate",
            "l_receiptdate",
            "l_quantity",
            "l_discount",
            "l_returnflag",
            "l_shipmode",
            "l_shipinstruct",
        ],
    }
}

/// Where and how to load.
#[derive(Clone, Debug)]
pub struct MySqlOptions {
    /// `mysql://user@host:port/database` (or `mariadb://...`).
    pub url: String,
    /// The database (MySQL's schema) to put the tables in, created when missing; `None` uses the URL's database.
    pub schema: Option<String>,
    /// Parallel INSERT and index jobs; `None` uses every CPU of this machine.
    pub load_threads: Option<usize>,
}

/// Which server answers: they differ in how a statement's time is limited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flavour {
    MariaDb,
    MySql,
}

impl Flavour {
    fn name(self) -> &'static str {
        match self {
            Flavour::MariaDb => "MariaDB",
            Flavour::MySql => "MySQL",
        }
    }

    fn loading(self) -> &'static str {
        match self {
            Flavour::MariaDb => "loading into MariaDB",
            Flavour::MySql => "loading into MySQL",
        }
    }

    /// The statements that build histograms of a table's filter columns (after a plain `ANALYZE TABLE`), the table
    /// named `name`: MariaDB's engine-independent statistics, on a sample whose size the server picks, or MySQL's
    /// histograms.
    fn histogram_statements(self, table: TableName, name: &str) -> Vec<String> {
        let columns = histogram_columns(table);
        if columns.is_empty() {
            return Vec::new();
        }
        match self {
            Flavour::MariaDb => vec![
                "SET SESSION analyze_sample_percentage = 0".to_string(),
                format!("ANALYZE TABLE {name} PERSISTENT FOR COLUMNS ({}) INDEXES ()", columns.join(", ")),
            ],
            Flavour::MySql => {
                vec![format!("ANALYZE TABLE {name} UPDATE HISTOGRAM ON {} WITH 64 BUCKETS", columns.join(", "))]
            }
        }
    }

    /// The statement that limits every following statement of the session to `timeout` (`None`: no limit). MySQL's
    /// limit applies to SELECT statements only, which is what the queries are.
    fn timeout_statement(self, timeout: Option<Duration>) -> String {
        match self {
            Flavour::MariaDb => {
                let seconds = timeout.map(|t| t.as_secs_f64().max(0.001)).unwrap_or(0.0);
                format!("SET SESSION max_statement_time = {seconds:.6}")
            }
            Flavour::MySql => {
                let milliseconds = timeout.map(|t| t.as_millis().max(1)).unwrap_or(0);
                format!("SET SESSION max_execution_time = {milliseconds}")
            }
        }
    }
}

/// A MySQL or MariaDB database holding (or about to hold) the TPC-H tables.
pub struct MySqlTarget {
    /// The database the tables are in, and the lock the run holds on them.
    tables: ServerTables,
    load_threads: usize,
    flavour: Flavour,
    /// `MariaDB 10.11.6`, `MySQL 8.0.36`.
    server_version: String,
    /// The server's data directory when the server runs on this machine and the directory can be seen.
    local_data_directory: Option<PathBuf>,
}

/// A driver message without the URL envbench-sql puts in front (the error around it names the URL already).
fn without_url(error: &DbError, shown: &str) -> String {
    error.message.strip_prefix(shown).and_then(|rest| rest.strip_prefix(": ")).unwrap_or(&error.message).to_string()
}

/// The first value of the first row of a query, as text (`None` for no row or NULL).
fn single_text(connection: &mut dyn Connection, sql: &str) -> Result<Option<String>, DbError> {
    Ok(match connection.query_optional(sql, &[])? {
        Some(row) if !row.is_null(0) => Some(row.text(0)?),
        _ => None,
    })
}

impl MySqlTarget {
    /// Connect once to check that the server is reachable, the login right and the database usable: the one given
    /// with `schema` (created when missing), or the URL's.
    pub fn connect(options: &MySqlOptions) -> Result<MySqlTarget, TpchError> {
        let url = DatabaseUrl::parse(&options.url).map_err(|e| TpchError::BadOptions(e.message))?;
        if url.dialect() != Dialect::MySql {
            return Err(TpchError::BadOptions(format!(
                "'{}' is not a MySQL URL; write mysql://user@host:3306/database",
                url.shown()
            )));
        }
        let shown = url.shown();
        let error = |e: DbError| TpchError::MySql { url: shown.clone(), message: without_url(&e, &shown) };
        let mut connection = url.connect(APPLICATION_NAME).map_err(error)?;
        let tables =
            ServerTables::resolve(url.clone(), connection.as_mut(), options.schema.as_deref()).map_err(error)?;
        let version = single_text(connection.as_mut(), "SELECT VERSION()").map_err(error)?.unwrap_or_default();
        let flavour = if version.contains("MariaDB") { Flavour::MariaDb } else { Flavour::MySql };
        // MariaDB reports `10.11.6-MariaDB-0+deb12u1`: the name goes in front, the packaging is left out.
        let server_version = format!("{} {}", flavour.name(), version.split("-MariaDB").next().unwrap_or_default());
        let load_threads = options
            .load_threads
            .unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1))
            .max(1);
        let local_data_directory = envbench_sql::local_data_directory(connection.as_mut(), &url);
        Ok(MySqlTarget { tables, load_threads, flavour, server_version, local_data_directory })
    }

    /// The server's version, as `MariaDB 10.11.6` or `MySQL 8.0.36`.
    pub fn server_version(&self) -> &str {
        &self.server_version
    }

    /// The database the tables are in.
    pub fn database(&self) -> &str {
        self.tables.namespace().name()
    }

    /// Rows per table as the server counts them.
    pub fn count_rows(&self) -> Result<BTreeMap<String, u64>, TpchError> {
        let mut connection = self.connection()?;
        self.tables.count_rows(connection.as_mut()).map_err(|e| self.error(&e))
    }

    /// A connection whose default database is the tables'.
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

    /// What the marker says about the tables in the database.
    fn existing_load(&self) -> Result<ExistingLoad, TpchError> {
        let mut connection = self.connection()?;
        self.tables.existing_load(connection.as_mut()).map_err(|e| self.error(&e))
    }

    /// The foreign-key indexes the queries join on, one `ALTER TABLE` per table (InnoDB builds a table's indexes in
    /// one pass), big tables first; each runs as its own job, in parallel.
    fn index_statements(&self) -> Vec<String> {
        TableName::ALL
            .into_iter()
            .rev()
            .filter_map(|table| {
                let adds: Vec<String> = SECONDARY_INDEXES
                    .iter()
                    .filter(|(_, on, _)| *on == table)
                    .map(|(index, _, columns)| format!("ADD INDEX {index} ({columns})"))
                    .collect();
                let name = self.tables.qualify(table.as_str());
                (!adds.is_empty()).then(|| format!("ALTER TABLE {name} {}", adds.join(", ")))
            })
            .collect()
    }

    fn load(
        &self,
        scale_factor: f64,
        interrupt: &AtomicBool,
        observer: &dyn StepObserver,
        progress: &(dyn Fn(LoadProgress) + Sync),
    ) -> Result<BTreeMap<String, u64>, TpchError> {
        let mut connection = self.connection()?;
        let marker = format!(
            "(scale_factor double NOT NULL, generator varchar(100) NOT NULL, row_counts text NOT NULL, \
             loaded_at timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP) {TABLE_OPTIONS} COMMENT={}",
            envbench_sql::quote_literal(Dialect::MySql, MARKER_COMMENT)
        );
        for statement in self.tables.rebuild_statements(&marker, &format!(" {TABLE_OPTIONS}"), true) {
            connection.batch(&statement).map_err(|e| self.error(&e))?;
        }

        observer.step_started("load");
        let jobs = TableName::load_jobs(scale_factor);
        let rows_expected = TableName::approximate_total_rows(scale_factor);
        let rows_loaded = AtomicU64::new(0);
        let action = self.flavour.loading();
        let loaded = self.parallel(jobs, interrupt, |connection, (table, part, parts)| {
            let name = self.tables.qualify(table.as_str());
            let mut failure = None;
            let mut in_transaction = 0;
            table.csv_chunks(scale_factor, part, parts, ROWS_PER_INSERT, &mut |chunk, rows| {
                if interrupt.load(Ordering::SeqCst) {
                    return false;
                }
                let statement = insert_statement(&name, chunk);
                let sent = match in_transaction {
                    0 => connection.begin().and_then(|()| connection.batch(&statement)),
                    _ => connection.batch(&statement),
                };
                in_transaction += 1;
                let sent = match sent {
                    Ok(()) if in_transaction == INSERTS_PER_COMMIT => {
                        in_transaction = 0;
                        connection.commit()
                    }
                    other => other,
                };
                if let Err(e) = sent {
                    failure = Some(e);
                    return false;
                }
                let loaded = rows_loaded.fetch_add(rows, Ordering::Relaxed) + rows;
                progress(LoadProgress { rows_loaded: loaded, rows_expected, action });
                true
            });
            // After an interrupt the partial table is harmless because the marker row is never written.
            if failure.is_none() && in_transaction > 0 {
                failure = connection.commit().err();
            }
            match failure {
                Some(e) => {
                    let shown = self.tables.url().shown();
                    Err(TpchError::MySql {
                        message: format!("loading {table}: {}", without_url(&e, &shown)),
                        url: shown,
                    })
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
        let indexed = self.parallel(self.index_statements(), interrupt, |connection, statement| {
            connection.batch(&statement).map_err(|e| self.error(&e))
        });
        observer.step_finished("index");
        indexed?;
        observer.step_started("analyze");
        let analyzed = self.parallel(TableName::ALL.to_vec(), interrupt, |connection, table| {
            let name = self.tables.qualify(table.as_str());
            connection.batch(&format!("ANALYZE TABLE {name}")).map_err(|e| self.error(&e))?;
            // Histograms are an aid to the optimizer, not a condition of the load: a server too old for them plans
            // without, as it would anyway.
            for statement in self.flavour.histogram_statements(table, &name) {
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

/// One value of the generator's CSV as a SQL literal. Every value goes in quoted (the server converts numbers and
/// dates from text); text holding a quote or a backslash goes in hexadecimal, which reads the same whatever the
/// server's `NO_BACKSLASH_ESCAPES` setting.
fn push_literal(value: &str, out: &mut String) {
    if value.contains('\'') || value.contains('\\') {
        out.push_str("X'");
        for byte in value.bytes() {
            let _ = write!(out, "{byte:02x}");
        }
        out.push('\'');
    } else {
        out.push('\'');
        out.push_str(value);
        out.push('\'');
    }
}

/// `INSERT INTO table VALUES (...), (...)` for lines of the generator's CSV: comma-separated, a value that may hold a
/// comma in double quotes from start to end (tpchgen never puts a double quote inside a value). The work is done by
/// the standard library's searches, so it is fast even in a debug build.
pub fn insert_statement(table: &str, csv: &str) -> String {
    let mut sql = String::with_capacity(csv.len() + csv.len() / 4 + 64);
    sql.push_str("INSERT INTO ");
    sql.push_str(table);
    sql.push_str(" VALUES ");
    for (i, line) in csv.lines().filter(|line| !line.is_empty()).enumerate() {
        sql.push_str(if i == 0 { "(" } else { ",(" });
        let mut rest = line;
        loop {
            let (value, next) = match rest.strip_prefix('"') {
                Some(quoted) => {
                    let end = quoted.find('"').unwrap_or(quoted.len());
                    (&quoted[..end], quoted.get(end + 1..).and_then(|after| after.strip_prefix(',')))
                }
                None => match rest.find(',') {
                    Some(comma) => (&rest[..comma], Some(&rest[comma + 1..])),
                    None => (rest, None),
                },
            };
            push_literal(value, &mut sql);
            match next {
                Some(next) => {
                    sql.push(',');
                    rest = next;
                }
                None => break,
            }
        }
        sql.push(')');
    }
    sql
}

/// The query text in MySQL's and MariaDB's dialect. The portable text of [`crate::queries`] runs as it is, with one
/// plan aid; what PostgreSQL-style SQL would need changing is rewritten too, outside quoted text:
///
/// - Q15 (the only query with `revenue0`) reads lineitem (named `lineitem`, qualified or not)
///   `ignore index (lineitem_supp_idx)`: to group by supplier
///   MariaDB otherwise walks that index and fetches every row from the clustered index, ten times slower than a
///   scan and a sort at SF 0.1;
/// - `interval '90' day` becomes `interval 90 day` (the quoted count is PostgreSQL's form);
/// - `cast(x as double precision)`, `as real` and `as float` become `as double`, `as numeric` becomes `as decimal`,
///   `as integer` and `as bigint` become `as signed`, `as varchar` and `as text` become `as char`;
/// - `x::date` becomes `cast(x as date)` for a literal or a (qualified) column name.
pub fn mysql_dialect(sql: &str, lineitem: &str) -> String {
    const CASTS: [(&str, &str); 8] = [
        (" as double precision)", " as double)"),
        (" as real)", " as double)"),
        (" as float)", " as double)"),
        (" as numeric)", " as decimal)"),
        (" as integer)", " as signed)"),
        (" as bigint)", " as signed)"),
        (" as varchar)", " as char)"),
        (" as text)", " as char)"),
    ];
    let mut sql = sql.to_string();
    for (from, to) in CASTS {
        sql = replace_outside_literals(&sql, from, |_| Some((from.len(), to.to_string())));
    }
    sql = replace_outside_literals(&sql, "interval '", |after| {
        let count = &after["interval '".len()..];
        let count = &count[..count.find('\'')?];
        let numeric = !count.is_empty() && count.chars().all(|c| c.is_ascii_digit() || c == '-' || c == '.');
        numeric.then(|| ("interval ''".len() + count.len(), format!("{} {count}", &after[.."interval".len()])))
    });
    if sql.contains("revenue0") {
        let from_lineitem = format!("from {lineitem}").to_ascii_lowercase();
        sql = replace_outside_literals(&sql, &from_lineitem, |after| {
            let (from, rest) = after.split_at(from_lineitem.len());
            let hinted = format!("{from} ignore index (lineitem_supp_idx)");
            rest.chars().next().is_none_or(char::is_whitespace).then_some((from_lineitem.len(), hinted))
        });
    }
    rewrite_double_colon_casts(&sql)
}

/// For each byte of `sql`, whether it belongs to a quoted literal or a quoted identifier (`''` or ``` `` ``` inside
/// one is an escaped quote): a schema's name is data, never SQL to rewrite, whatever it holds.
fn literal_mask(sql: &str) -> Vec<bool> {
    let mut mask = Vec::with_capacity(sql.len());
    let mut quote = None;
    for &byte in sql.as_bytes() {
        // A closing quote followed by an opening one ('') leaves and re-enters the literal: both are inside it.
        match quote {
            None if byte == b'\'' || byte == b'`' => {
                quote = Some(byte);
                mask.push(true);
            }
            Some(open) if byte == open => {
                quote = None;
                mask.push(true);
            }
            _ => mask.push(quote.is_some()),
        }
    }
    mask
}

/// Replace matches of `pattern` (ASCII case ignored) that start outside literals: `replace` gets the text from the
/// match on and returns how many bytes to replace and with what, or `None` to leave the match alone.
fn replace_outside_literals(sql: &str, pattern: &str, replace: impl Fn(&str) -> Option<(usize, String)>) -> String {
    let lower = sql.to_ascii_lowercase();
    let mask = literal_mask(sql);
    let mut out = String::with_capacity(sql.len());
    let mut last = 0;
    for (at, _) in lower.match_indices(pattern) {
        if at < last || mask[at] {
            continue;
        }
        if let Some((length, replacement)) = replace(&sql[at..]) {
            out.push_str(&sql[last..at]);
            out.push_str(&replacement);
            last = at + length;
        }
    }
    out.push_str(&sql[last..]);
    out
}

/// `'1998-12-01'::date` and `o.o_orderdate::date` become `cast(... as date)`.
fn rewrite_double_colon_casts(sql: &str) -> String {
    let mask = literal_mask(sql);
    let mut out = String::with_capacity(sql.len());
    let mut last = 0;
    for (at, _) in sql.match_indices("::") {
        if at < last || mask[at] {
            continue;
        }
        let after = &sql[at + 2..];
        let type_end = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(after.len());
        let before = &sql[last..at];
        // The operand: the literal just before, or a (qualified) name.
        let operand_start = if before.ends_with('\'') {
            let mut start = at;
            while start > last && mask[start - 1] {
                start -= 1;
            }
            start - last
        } else {
            before.rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.')).map(|i| i + 1).unwrap_or(0)
        };
        if type_end == 0 || operand_start == before.len() {
            continue;
        }
        let type_name = match after[..type_end].to_ascii_lowercase().as_str() {
            "numeric" => "decimal".to_string(),
            "integer" | "int" | "bigint" => "signed".to_string(),
            "varchar" | "text" => "char".to_string(),
            "real" | "float" | "float8" => "double".to_string(),
            other => other.to_string(),
        };
        out.push_str(&before[..operand_start]);
        out.push_str(&format!("cast({} as {type_name})", &before[operand_start..]));
        last = at + 2 + type_end;
    }
    out.push_str(&sql[last..]);
    out
}

impl Target for MySqlTarget {
    fn kind(&self) -> TargetKind {
        TargetKind::MySql
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
        let how = Some((load_seconds, "INSERT, indexes, ANALYZE TABLE"));
        let summary = self.tables.summary(&self.server_version, scale_factor, &rows, how);
        let details = self.server_version.clone();
        Ok(LoadInfo { reused: false, rows, load_seconds, details, summary, generation: None })
    }

    fn loaded(&self, scale_factor: f64) -> Result<Option<LoadInfo>, TpchError> {
        Ok(self.matching_load(self.existing_load()?, scale_factor))
    }

    fn lock(&mut self, scale_factor: f64, fresh: bool, writes: bool) -> Result<(), TpchError> {
        // A run that writes (the refresh functions) holds the tables alone whatever they hold.
        let must_load = |target: &mut MySqlTarget| Ok(writes || fresh || target.loaded(scale_factor)?.is_none());
        envbench_io::lock::take_as_needed(self, must_load, |target, exclusive| target.tables.lock(exclusive))
            .map(|_| ())
    }

    fn session(&self) -> Result<Box<dyn Session>, TpchError> {
        let mut connection = self.connection()?;
        let id =
            single_text(connection.as_mut(), "SELECT CONNECTION_ID()").map_err(|e| self.error(&e))?.unwrap_or_default();
        Ok(Box::new(MySqlSession {
            connection,
            connection_id: id,
            url: self.tables.url().clone(),
            flavour: self.flavour,
            timeout: None,
            killer: None,
            orders: self.tables.qualify(TableName::Orders.as_str()),
            lineitem: self.tables.qualify(TableName::LineItem.as_str()),
        }))
    }

    fn refresh_support(&self) -> Result<(), String> {
        Ok(())
    }

    fn query_sql(&self, parameters: &QueryParameters) -> String {
        let tables = self.tables.table_names();
        mysql_dialect(&crate::queries::render_with(parameters, &tables), &tables.lineitem)
    }

    /// TPC-H tables in the database that envbench did not load are refused before anything runs.
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
        Some(
            "--cold drops this machine's page cache; the InnoDB buffer pool stays warm (restart the server, with \
             innodb_buffer_pool_load_at_startup=OFF, for a fully cold start), and a server on another machine keeps \
             its own cache",
        )
    }
}

struct MySqlSession {
    connection: Box<dyn Connection>,
    /// The server's id of the connection, for `KILL QUERY`.
    connection_id: String,
    url: DatabaseUrl,
    flavour: Flavour,
    /// The statement time limit in force on the connection.
    timeout: Option<Duration>,
    /// A second connection to the server that interrupts statements, opened when first needed.
    killer: Option<Box<dyn Connection>>,
    /// The refresh functions' tables, qualified.
    orders: String,
    lineitem: String,
}

impl MySqlSession {
    /// Run `statement` with a time limit while watching `interrupt`: when it becomes true, or the deadline passes
    /// before the server's own limit has stopped the statement, the server is asked to kill it.
    fn watched<T>(
        &mut self,
        timeout: Option<Duration>,
        interrupt: &AtomicBool,
        statement: impl FnOnce(&mut dyn Connection) -> Result<T, DbError>,
    ) -> Result<T, QueryFailure> {
        let shown = self.url.shown();
        if timeout != self.timeout {
            self.connection
                .batch(&self.flavour.timeout_statement(timeout))
                .map_err(|e| QueryFailure::Error(without_url(&e, &shown)))?;
            self.timeout = timeout;
        }
        // The server's own time limit stops a statement at the deadline; the watcher kills one it let run on, and any
        // on Ctrl-C.
        let deadline = timeout.map(|t| Instant::now() + t);
        let (killer, url, id) = (&mut self.killer, &self.url, self.connection_id.as_str());
        let kill = move |_| {
            if killer.is_none() {
                *killer = url.connect(APPLICATION_NAME).ok();
            }
            if let Some(connection) = killer.as_mut()
                && connection.batch(&format!("KILL QUERY {id}")).is_err()
            {
                // A broken killer connection is opened again next time.
                *killer = None;
            }
        };
        let connection = self.connection.as_mut();
        let (result, stopped) = watched(interrupt, deadline, kill, || statement(connection));
        result.map_err(|e| {
            let message = without_url(&e, &shown);
            match stopped {
                Some(Stop::Interrupted) => QueryFailure::Cancelled,
                Some(Stop::Deadline) => QueryFailure::TimedOut,
                None if message.contains("max_statement_time")
                    || message.contains("maximum statement execution time") =>
                {
                    QueryFailure::TimedOut
                }
                None => QueryFailure::Error(message),
            }
        })
    }
}

impl Session for MySqlSession {
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
        let mut statements = Vec::new();
        for (table, csv) in [(&self.orders, update_set.orders_csv()), (&self.lineitem, update_set.lineitems_csv())] {
            let lines: Vec<&str> = csv.lines().collect();
            statements.extend(lines.chunks(ROWS_PER_INSERT).map(|chunk| insert_statement(table, &chunk.join("\n"))));
        }
        let never = AtomicBool::new(false);
        self.watched(None, &never, |connection| in_transaction(connection, &statements))
    }

    fn refresh_delete(&mut self, update_set: &UpdateSet) -> Result<(), QueryFailure> {
        let mut statements = Vec::new();
        for (table, key) in [(&self.lineitem, "l_orderkey"), (&self.orders, "o_orderkey")] {
            statements.extend(update_set.order_keys.chunks(KEYS_PER_DELETE).map(|keys| {
                let keys: Vec<String> = keys.iter().map(i64::to_string).collect();
                format!("DELETE FROM {table} WHERE {key} IN ({})", keys.join(","))
            }));
        }
        let never = AtomicBool::new(false);
        self.watched(None, &never, |connection| in_transaction(connection, &statements))
    }
}

/// Run statements in one transaction, rolled back when one fails.
fn in_transaction(connection: &mut dyn Connection, statements: &[String]) -> Result<(), DbError> {
    connection.begin()?;
    for statement in statements {
        if let Err(e) = connection.batch(statement) {
            let _ = connection.rollback();
            return Err(e);
        }
    }
    connection.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_csv_becomes_quoted_values() {
        let csv = "1,Supplier#000000001,\" N kD4on9OM Ipw3,gf0JBoQDd7tgrzrddZ\",17,27-918-335-1736,5755.94,\"each slyly \
                   above the careful\"\n2,it's,\"back\\slash\",1,x,0.00,\"\"\n";
        assert_eq!(
            insert_statement("supplier", csv),
            "INSERT INTO supplier VALUES ('1','Supplier#000000001',' N kD4on9OM Ipw3,gf0JBoQDd7tgrzrddZ','17',\
             '27-918-335-1736','5755.94','each slyly above the careful'),('2',X'69742773',X'6261636b5c736c617368','1',\
             'x','0.00','')"
        );
    }

    #[test]
    fn the_portable_queries_pass_unchanged_but_for_q15s_plan_aid() {
        use crate::queries::TableNames;
        let mut random = crate::params::SeededRandom::for_stream(7, 1, 0);
        // Bare names, and names qualified with a database whose name holds what the rewrites look for.
        let odd = envbench_sql::Namespace::named(Dialect::MySql, "it's ::date as text) interval '9' day");
        for tables in [TableNames::bare(), TableNames::new(|t| odd.qualify(t.as_str()))] {
            for query in 1..=crate::queries::QUERY_COUNT {
                for parameters in [
                    crate::params::QueryParameters::validation(query, 1.0),
                    crate::params::QueryParameters::random(query, 1.0, &mut random),
                ] {
                    let sql = crate::queries::render_with(&parameters, &tables);
                    let adapted = mysql_dialect(&sql, &tables.lineitem);
                    if query == 15 {
                        let hinted = format!(
                            "from {} ignore index (lineitem_supp_idx)\n    where l_shipdate >=",
                            tables.lineitem
                        );
                        assert_eq!(adapted.matches(&hinted).count(), 1, "{adapted}");
                        assert_eq!(adapted.replace(" ignore index (lineitem_supp_idx)", ""), sql);
                    } else {
                        assert_eq!(adapted, sql, "Q{query}");
                    }
                }
            }
        }
    }

    #[test]
    fn postgresql_forms_are_rewritten_outside_literals() {
        assert_eq!(
            mysql_dialect("select date '1998-12-01' - interval '90' day, x + INTERVAL '3' month", "lineitem"),
            "select date '1998-12-01' - interval 90 day, x + INTERVAL 3 month"
        );
        assert_eq!(
            mysql_dialect("select cast(a as double precision), CAST(b AS NUMERIC), cast(c as varchar) from t", "l"),
            "select cast(a as double), CAST(b as decimal), cast(c as char) from t"
        );
        assert_eq!(
            mysql_dialect("select '1995-01-01'::date, o.o_orderdate::date, a::numeric from t", "lineitem"),
            "select cast('1995-01-01' as date), cast(o.o_orderdate as date), cast(a as decimal) from t"
        );
        // Text inside quotes is data, never SQL.
        let literal = "select 'cast(x as text)', 'it''s interval ''9'' day' from `a``b::date`.t";
        assert_eq!(mysql_dialect(literal, "lineitem"), literal);
        let substring = "select substring(c_phone from 1 for 2)";
        assert_eq!(mysql_dialect(substring, "lineitem"), substring);
    }

    #[test]
    fn histograms_are_built_in_each_servers_words() {
        assert_eq!(
            Flavour::MariaDb.histogram_statements(TableName::Orders, "`t`.`orders`"),
            [
                "SET SESSION analyze_sample_percentage = 0",
                "ANALYZE TABLE `t`.`orders` PERSISTENT FOR COLUMNS (o_orderdate, o_orderstatus, o_orderpriority) \
                 INDEXES ()"
            ]
        );
        assert_eq!(
            Flavour::MySql.histogram_statements(TableName::Region, "region"),
            ["ANALYZE TABLE region UPDATE HISTOGRAM ON r_name WITH 64 BUCKETS"]
        );
        assert!(Flavour::MySql.histogram_statements(TableName::PartSupp, "partsupp").is_empty());
    }

    #[test]
    fn statement_limits_are_set_in_each_servers_words() {
        let second = Some(Duration::from_millis(1500));
        assert_eq!(Flavour::MariaDb.timeout_statement(second), "SET SESSION max_statement_time = 1.500000");
        assert_eq!(Flavour::MariaDb.timeout_statement(None), "SET SESSION max_statement_time = 0.000000");
        assert_eq!(Flavour::MySql.timeout_statement(second), "SET SESSION max_execution_time = 1500");
        assert_eq!(Flavour::MySql.timeout_statement(None), "SET SESSION max_execution_time = 0");
    }

    #[test]
    fn urls_name_the_target() {
        use super::super::TargetSpec;
        for url in ["mysql://root@127.0.0.1/test", "mariadb://root@127.0.0.1:3306/test"] {
            assert_eq!(TargetSpec::parse(url).unwrap(), TargetSpec::MySql(url.to_string()));
        }
        let error = TargetSpec::parse("oracle://scott:tiger@db/x").unwrap_err().to_string();
        assert!(error.contains("give datafusion") && error.contains("mysql://"), "{error}");
        assert!(!error.contains("tiger"), "{error}");
        assert_eq!(TargetKind::MySql.as_str(), "mysql");
        assert_eq!(serde_json::to_string(&TargetKind::MySql).unwrap(), "\"mysql\"");
    }

    #[test]
    fn an_absent_server_gives_an_error_that_says_what_to_check() {
        let options = MySqlOptions { url: "mysql://root@127.0.0.1:1/test".into(), schema: None, load_threads: None };
        let error = MySqlTarget::connect(&options).err().expect("nothing listens on port 1").to_string();
        assert!(error.contains("is the server running"), "{error}");
        assert!(error.starts_with("MySQL/MariaDB at mysql://root@127.0.0.1:1/test: "), "{error}");
    }
}
