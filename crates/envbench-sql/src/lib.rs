//! Connections to the databases envbench measures: embedded SQLite, PostgreSQL and MariaDB/MySQL behind one small
//! [`Connection`] trait (execute, query and batches of statements, with `?` placeholders and prepared statements
//! cached per connection), a database named by what the user wrote ([`DatabaseUrl`]), and errors sorted the way a
//! workload must treat them ([`ErrorKind`]: retry a deadlock, report a server that cannot be reached, tell the user
//! what to fix). Every message is free of passwords.
//!
//! It also owns what keeps a workload's hands off everything else on a server: the one [`Namespace`] (schema) a
//! run's names are qualified with, and the [`ServerLock`] a run holds on its data there.
//!
//! It runs no workload and knows no workload's tables: the workload crates (transactions, analytic queries) write
//! their SQL and use this crate to send it.

mod adapt;
mod bulk;
mod dialect;
pub mod lock;
pub mod marker;
mod mysql_connection;
pub mod namespace;
mod postgres_connection;
pub mod server;
mod sqlite_connection;

pub use dialect::{Catalog, Dialect, DialectOps, Isolation, SqlTypes, TableComment};
pub use lock::{ServerLock, ServerLockError, ServerLockMode};
pub use marker::{Marker, MarkerState};
pub use namespace::{Namespace, Relation, RelationKind, Routine, quote_identifier, quote_literal};
pub use server::{Counters, RangePartition, Server, UrlConfig};
pub use sqlite_connection::SqliteOpen;

use envbench_core::model::redact_secrets;
use std::path::PathBuf;

/// A value bound to or read from a statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
}

impl From<i64> for Value {
    fn from(value: i64) -> Value {
        Value::Int(value)
    }
}

impl From<i32> for Value {
    fn from(value: i32) -> Value {
        Value::Int(value.into())
    }
}

impl From<u32> for Value {
    fn from(value: u32) -> Value {
        Value::Int(value.into())
    }
}

impl From<f64> for Value {
    fn from(value: f64) -> Value {
        Value::Real(value)
    }
}

impl From<&str> for Value {
    fn from(value: &str) -> Value {
        Value::Text(value.to_string())
    }
}

impl From<String> for Value {
    fn from(value: String) -> Value {
        Value::Text(value)
    }
}

impl From<&String> for Value {
    fn from(value: &String) -> Value {
        Value::Text(value.clone())
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(value: Option<T>) -> Value {
        value.map_or(Value::Null, Into::into)
    }
}

/// Values for a statement, each converted to a [`Value`]: `params![id, name, maybe_text]`.
#[macro_export]
macro_rules! params {
    ($($value:expr),* $(,)?) => { &[$($crate::Value::from($value)),*] };
}

/// One row of a result, read by column position.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Row(pub Vec<Value>);

impl Row {
    fn value(&self, column: usize) -> Result<&Value, DbError> {
        self.0.get(column).ok_or_else(|| DbError::other(format!("the row has no column {column}")))
    }

    /// A whole number (text holding one is read too: MySQL sends some numbers as text).
    pub fn int(&self, column: usize) -> Result<i64, DbError> {
        match self.value(column)? {
            Value::Int(v) => Ok(*v),
            Value::Real(v) if v.fract() == 0.0 => Ok(*v as i64),
            Value::Text(t) => {
                t.trim().parse().map_err(|_| DbError::other(format!("column {column}: '{t}' is no number")))
            }
            other => Err(DbError::other(format!("column {column} holds {other:?} where a whole number belongs"))),
        }
    }

    /// A number.
    pub fn real(&self, column: usize) -> Result<f64, DbError> {
        match self.value(column)? {
            Value::Real(v) => Ok(*v),
            Value::Int(v) => Ok(*v as f64),
            Value::Text(t) => {
                t.trim().parse().map_err(|_| DbError::other(format!("column {column}: '{t}' is no number")))
            }
            Value::Null => Err(DbError::other(format!("column {column} is NULL where a number belongs"))),
        }
    }

    /// Text (numbers as written).
    pub fn text(&self, column: usize) -> Result<String, DbError> {
        match self.value(column)? {
            Value::Text(t) => Ok(t.clone()),
            Value::Int(v) => Ok(v.to_string()),
            Value::Real(v) => Ok(v.to_string()),
            Value::Null => Ok(String::new()),
        }
    }

    pub fn is_null(&self, column: usize) -> bool {
        matches!(self.0.get(column), Some(Value::Null) | None)
    }

    /// A whole number, or `None` for NULL.
    pub fn optional_int(&self, column: usize) -> Result<Option<i64>, DbError> {
        if matches!(self.value(column)?, Value::Null) { Ok(None) } else { self.int(column).map(Some) }
    }

    /// A number, or `None` for NULL.
    pub fn optional_real(&self, column: usize) -> Result<Option<f64>, DbError> {
        if matches!(self.value(column)?, Value::Null) { Ok(None) } else { self.real(column).map(Some) }
    }

    /// Text, or `None` for NULL.
    pub fn optional_text(&self, column: usize) -> Result<Option<String>, DbError> {
        if matches!(self.value(column)?, Value::Null) { Ok(None) } else { self.text(column).map(Some) }
    }
}

/// How a workload must treat an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Deadlock, serialization failure, lock wait timeout, busy database: run the transaction again (and count it,
    /// by its [`Conflict`]).
    Retry(Conflict),
    /// The server cannot be reached, or the connection was lost.
    Unreachable,
    /// The server answered and said no: unknown database, wrong password, missing privilege, a read-only file.
    Refused,
    /// The statement was cancelled: by its statement timeout, or by a cancel request (Ctrl-C).
    Cancelled,
    /// The file is not a database of this kind (SQLite's "file is not a database").
    NotADatabase,
    /// The database says its own file is damaged.
    Corrupt,
    /// Anything else: a bug, a full disk, a constraint.
    Other,
}

/// Why a transaction that may succeed when run again failed, as pgbench's `--failures-detailed` tells them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Conflict {
    /// It could not be serialized with a concurrent one (PostgreSQL's 40001, MariaDB's "record has changed").
    Serialization,
    /// It was chosen as a deadlock's victim.
    Deadlock,
    /// It waited for a lock longer than the server lets it (MySQL's lock wait timeout, PostgreSQL's lock_timeout).
    LockTimeout,
    /// The database was busy with another writer (SQLite's busy timeout).
    Busy,
}

impl ErrorKind {
    /// The kind in a word, as failures are counted by it: `serialization`, `deadlock`, `lock-timeout`, `busy`, or
    /// what kept the transaction from running (`cancelled`, `other`...).
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Retry(Conflict::Serialization) => "serialization",
            ErrorKind::Retry(Conflict::Deadlock) => "deadlock",
            ErrorKind::Retry(Conflict::LockTimeout) => "lock-timeout",
            ErrorKind::Retry(Conflict::Busy) => "busy",
            ErrorKind::Unreachable => "unreachable",
            ErrorKind::Refused => "refused",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::NotADatabase => "not-a-database",
            ErrorKind::Corrupt => "corrupt",
            ErrorKind::Other => "other",
        }
    }
}

/// A database error, with its kind and a message that says what to do (no password in it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DbError {
    pub kind: ErrorKind,
    pub message: String,
}

impl DbError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> DbError {
        DbError { kind, message: redact_secrets(&message.into()) }
    }

    pub fn other(message: impl Into<String>) -> DbError {
        DbError::new(ErrorKind::Other, message)
    }

    pub fn is_retry(&self) -> bool {
        matches!(self.kind, ErrorKind::Retry(_))
    }

    /// The message without the database it names first (`place: ...`), for callers that name the place themselves.
    pub fn detail(&self, place: &str) -> &str {
        self.message.strip_prefix(place).and_then(|rest| rest.strip_prefix(": ")).unwrap_or(&self.message)
    }
}

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DbError {}

/// Stops the statement a connection is running, from another thread: a cancel request on PostgreSQL, `KILL QUERY`
/// from a second connection on MariaDB/MySQL, an interrupt on SQLite.
pub type Interrupter = Box<dyn Fn() + Send + Sync>;

/// Statements on one connection to a database. SQL uses `?` placeholders whatever the dialect; statements are prepared
/// once per connection and reused.
pub trait Connection: Send {
    fn dialect(&self) -> Dialect;

    /// Run a statement; the rows it changed.
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError>;

    /// Run a query; every row.
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError>;

    /// Run a query without parameters, unprepared; the names of its columns and every row, each value as the server
    /// writes it as text (numbers, decimals and dates alike) or NULL: for answers that people read or that are
    /// compared across servers.
    fn query_named(&mut self, sql: &str) -> Result<(Vec<String>, Vec<Row>), DbError>;

    /// Run statements without parameters, unprepared (DDL, settings, transaction control).
    fn batch(&mut self, sql: &str) -> Result<(), DbError>;

    /// The server's version, for people.
    fn server_version(&mut self) -> Result<String, DbError>;

    /// PostgreSQL's version as one number (`server_version_num`: 150020 is 15.20), asked once per connection, so that a
    /// statement a version lacks is never sent to leave an error in the DBA's server log; `None` on the other
    /// dialects, where nothing envbench sends depends on the version.
    fn server_version_number(&mut self) -> Result<Option<u32>, DbError> {
        Ok(None)
    }

    /// What stops this connection's running statement from another thread, when the database offers a way.
    fn interrupter(&mut self) -> Option<Interrupter> {
        None
    }

    /// Limit every following statement of this connection to `timeout` (`None`: no limit), enforced by the server:
    /// `statement_timeout` on PostgreSQL, `max_statement_time` on MariaDB, `max_execution_time` on MySQL (which
    /// limits SELECT only). SQLite has no such limit: a caller that needs one interrupts at its deadline.
    fn set_statement_timeout(&mut self, _timeout: Option<std::time::Duration>) -> Result<(), DbError> {
        Ok(())
    }

    /// Rows in bulk into `table` (named as it may be written in a statement), given as CSV lines: comma-separated,
    /// a value that may hold a comma in double quotes from start to end, no quote inside a value (the TPC-H
    /// generator's form). `COPY FROM STDIN` on PostgreSQL; one multi-row `INSERT` elsewhere, so callers send a few
    /// thousand rows at a time.
    fn load_csv(&mut self, table: &str, csv: &str) -> Result<(), DbError> {
        match bulk::insert_statement(table, csv) {
            Some(insert) => self.batch(&insert),
            None => Ok(()),
        }
    }

    fn begin(&mut self) -> Result<(), DbError> {
        let begin = self.dialect().ops().begin_write;
        self.batch(begin)
    }

    fn commit(&mut self) -> Result<(), DbError> {
        self.batch("COMMIT")
    }

    fn rollback(&mut self) -> Result<(), DbError> {
        self.batch("ROLLBACK")
    }

    /// The first row of a query, if any.
    fn query_optional(&mut self, sql: &str, params: &[Value]) -> Result<Option<Row>, DbError> {
        Ok(self.query(sql, params)?.into_iter().next())
    }
}

/// A database as the user named it: `sqlite:PATH` (or a SQLite file path given by a workload), a `postgres://` or
/// `postgresql://` URL, or a `mysql://` (also `mariadb://`) URL.
#[derive(Clone)]
pub struct DatabaseUrl {
    dialect: Dialect,
    /// The URL as kept (passwords included).
    target: String,
    /// What its server's driver parsed from it, once ([`server::UrlConfig`]).
    config: server::UrlConfig,
}

/// Two URLs are the same when they say the same (the configuration is what the text says).
impl PartialEq for DatabaseUrl {
    fn eq(&self, other: &DatabaseUrl) -> bool {
        self.dialect == other.dialect && self.target == other.target
    }
}

impl Eq for DatabaseUrl {}

impl std::fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DatabaseUrl({})", self.shown())
    }
}

impl DatabaseUrl {
    /// Parse a server URL: the server its scheme names checks it, as its driver reads it. Anything else is refused
    /// with what to write.
    pub fn parse(text: &str) -> Result<DatabaseUrl, DbError> {
        let refused = |reason: String| {
            DbError::new(
                ErrorKind::Refused,
                format!(
                    "'{}' is not a database URL envbench can use ({reason}); write {}",
                    redact_secrets(text),
                    url_forms()
                ),
            )
        };
        let scheme = text.split_once("://").map(|(scheme, _)| scheme);
        let named = Dialect::ALL.into_iter().find(|d| scheme.is_some_and(|s| d.server().schemes().contains(&s)));
        let Some(dialect) = named else {
            let schemes: Vec<String> =
                Dialect::ALL.iter().flat_map(|d| d.server().schemes()).map(|scheme| format!("{scheme}://")).collect();
            return Err(refused(format!("only {} are supported", words_list(&schemes, "and"))));
        };
        let (target, config) = dialect.server().check_url(text).map_err(refused)?;
        Ok(DatabaseUrl { dialect, target, config })
    }

    /// An embedded SQLite database in a file.
    pub fn sqlite(path: impl Into<PathBuf>) -> DatabaseUrl {
        let path: PathBuf = path.into();
        DatabaseUrl { dialect: Dialect::Sqlite, target: path.display().to_string(), config: std::sync::Arc::new(path) }
    }

    /// The URL as kept, its password included: for a program of ours that connects on its own (a fleet's agent),
    /// never for people ([`DatabaseUrl::shown`]).
    pub fn with_secrets(&self) -> &str {
        &self.target
    }

    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The database for people: the URL without its password, or the SQLite file.
    pub fn shown(&self) -> String {
        redact_secrets(&self.target)
    }

    /// The URL without its password, and the password: for handing a server URL to another program (pgbench) with
    /// the password in its environment (`PGPASSWORD`) rather than on its command line, where `ps` shows it. Every
    /// form is taken out: the authority's (`user:pw@host`) and the query's (`?password=pw`, which libpq reads too and
    /// which wins over the authority's, as there).
    pub fn split_password(&self) -> (String, Option<String>) {
        let Some((scheme, rest)) = self.target.split_once("://") else { return (self.target.clone(), None) };
        let (rest, query) = rest.split_once('?').map_or((rest, None), |(r, q)| (r, Some(q)));
        let (authority, path) = rest.split_once('/').map_or((rest, None), |(a, p)| (a, Some(p)));
        let (mut password, authority) = match authority.rsplit_once('@') {
            Some((userinfo, host)) => match userinfo.split_once(':') {
                Some((user, password)) => (Some(percent_decoded(password)), format!("{user}@{host}")),
                None => (None, authority.to_string()),
            },
            None => (None, authority.to_string()),
        };
        let mut kept = Vec::new();
        for parameter in query.into_iter().flat_map(|q| q.split('&')) {
            match parameter.split_once('=') {
                Some((key, value)) if percent_decoded(key) == "password" => password = Some(percent_decoded(value)),
                _ if parameter.is_empty() => {}
                _ => kept.push(parameter),
            }
        }
        let path = path.map(|p| format!("/{p}")).unwrap_or_default();
        let query = if kept.is_empty() { String::new() } else { format!("?{}", kept.join("&")) };
        (format!("{scheme}://{authority}{path}{query}"), password)
    }

    /// True when the server runs on this machine (loopback or a socket), so its data directory's storage is this
    /// machine's.
    pub fn is_local(&self) -> bool {
        self.dialect.server().is_local(&self.config)
    }

    /// Open a connection. `application` names it in the server's session list.
    pub fn connect(&self, application: &str) -> Result<Box<dyn Connection>, DbError> {
        self.dialect.server().connect(&self.config, &self.shown(), application)
    }
}

/// The URL forms envbench takes, as messages show them: `postgres://user@host:5432/database or
/// mysql://user@host:3306/database`, one a server, from the rows.
pub fn url_forms() -> String {
    url_forms_where(|_| true)
}

/// The URL forms of the servers whose row has what `has` asks (`|ops| ops.partitions`), as [`url_forms`] shows
/// them.
pub fn url_forms_where(has: impl Fn(&DialectOps) -> bool) -> String {
    let forms: Vec<String> = Dialect::ALL
        .iter()
        .map(|d| d.ops())
        .filter(|ops| has(ops))
        .filter_map(|ops| ops.url_example)
        .map(String::from)
        .collect();
    words_list(&forms, "or")
}

/// `a`, `a or b`, `a, b or c` (or `and`).
fn words_list(items: &[String], conjunction: &str) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} {conjunction} {last}", rest.join(", ")),
    }
}

/// A host name that is this machine: `localhost`, `::1`, or an address in 127.0.0.0/8.
pub(crate) fn is_loopback_name(host: &str) -> bool {
    matches!(host, "localhost" | "::1" | "[::1]") || host.starts_with("127.")
}

/// Open a SQLite file the way `how` says.
pub fn open_sqlite(path: &std::path::Path, how: SqliteOpen) -> Result<Box<dyn Connection>, DbError> {
    Ok(Box::new(sqlite_connection::SqliteConnection::open(path, how)?))
}

/// The data directory of the server behind `connection`, when the server runs on this machine, says where its data
/// is (PostgreSQL shows it to superusers and `pg_read_all_settings` only) and this machine can see it: the storage
/// the fingerprint should describe and the sampler watch. `None` for SQLite, whose file the caller knows.
pub fn local_data_directory(connection: &mut dyn Connection, url: &DatabaseUrl) -> Option<PathBuf> {
    if !url.is_local() {
        return None;
    }
    let sql = url.dialect().server().data_directory()?;
    let row = connection.query_optional(sql, &[]).ok()??;
    let path = PathBuf::from(row.text(0).ok()?);
    (!row.is_null(0) && path.is_dir()).then_some(path)
}

/// A URL component with its `%XX` escapes decoded.
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The environment variables a server's password comes from when its URL holds none, as psql, pgbench (libpq) and
/// the mysql client read them: a password kept out of the URL stays off command lines and out of stored arguments.
pub const PASSWORD_VARIABLES: [&str; 2] = ["PGPASSWORD", "MYSQL_PWD"];

/// The password of `variable` in the environment, when it is set and not empty.
pub fn password_from(variable: &str) -> Option<String> {
    std::env::var(variable).ok().filter(|p| !p.is_empty())
}

/// A PostgreSQL configuration given the password in `PGPASSWORD` when its URL holds none (libpq's rule).
pub fn postgres_password_from_environment(config: &mut postgres::Config) {
    if config.get_password().is_none()
        && let Some(password) = password_from("PGPASSWORD")
    {
        config.password(password);
    }
}

/// The version of the SQLite library envbench embeds.
pub fn sqlite_version() -> &'static str {
    rusqlite::version()
}

/// `?` placeholders numbered `$1`, `$2`, ... as PostgreSQL wants them (outside quoted text: a `'literal'` or a
/// `"quoted identifier"`, such as a schema named `bob's`).
pub fn numbered_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 16);
    let (mut n, mut quote) = (0, None);
    for c in sql.chars() {
        match (c, quote) {
            ('\'' | '"', None) => {
                quote = Some(c);
                out.push(c);
            }
            (c, Some(open)) if c == open => {
                quote = None;
                out.push(c);
            }
            ('?', None) => {
                n += 1;
                out.push_str(&format!("${n}"));
            }
            (c, _) => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tree_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_the_dialect_and_keep_their_password_to_themselves() {
        let pg = DatabaseUrl::parse("postgres://bob:hunter2@127.0.0.1/test").unwrap();
        assert_eq!(pg.dialect(), Dialect::Postgres);
        assert_eq!(pg.shown(), "postgres://bob:***@127.0.0.1/test");
        assert!(pg.is_local());
        assert!(!format!("{pg:?}").contains("hunter2"));
        let my = DatabaseUrl::parse("mariadb://root@db.example:3306/test").unwrap();
        assert_eq!(my.dialect(), Dialect::MySql);
        assert!(!my.is_local());
        for bad in ["oracle://x@y/z", "sqlite:/x", "postgres://x:y@:notaport/z"] {
            let error = DatabaseUrl::parse(bad).unwrap_err();
            assert_eq!(error.kind, ErrorKind::Refused, "{bad}");
            assert!(error.message.contains("mysql://"), "{error}");
        }
    }

    #[test]
    fn passwords_come_out_of_urls_for_other_programs() {
        let url = DatabaseUrl::parse("postgres://bob:hunter2@127.0.0.1:5432/test?sslmode=disable").unwrap();
        assert_eq!(
            url.split_password(),
            ("postgres://bob@127.0.0.1:5432/test?sslmode=disable".to_string(), Some("hunter2".to_string()))
        );
        let escaped = DatabaseUrl::parse("postgres://bob:p%40ss@127.0.0.1/test").unwrap();
        assert_eq!(escaped.split_password().1.as_deref(), Some("p@ss"));
        let plain = DatabaseUrl::parse("postgres://bob@127.0.0.1/test").unwrap();
        assert_eq!(plain.split_password(), ("postgres://bob@127.0.0.1/test".to_string(), None));
        // libpq also takes the password from the query, which wins over the authority's.
        let query =
            DatabaseUrl::parse("postgres://bob:old@127.0.0.1/test?sslmode=disable&password=p%26w&connect_timeout=5")
                .unwrap();
        assert_eq!(
            query.split_password(),
            ("postgres://bob@127.0.0.1/test?sslmode=disable&connect_timeout=5".to_string(), Some("p&w".to_string()))
        );
        let only = DatabaseUrl::parse("postgresql://bob@127.0.0.1?password=hunter2").unwrap();
        assert_eq!(only.split_password(), ("postgresql://bob@127.0.0.1".to_string(), Some("hunter2".to_string())));
    }

    #[test]
    fn placeholders_are_numbered_outside_quotes() {
        assert_eq!(numbered_placeholders("SELECT ?, '?' WHERE a = ?"), "SELECT $1, '?' WHERE a = $2");
        assert_eq!(
            numbered_placeholders(r#"INSERT INTO "bob's ""?"" schema".t VALUES (?, 'it''s?', ?)"#),
            r#"INSERT INTO "bob's ""?"" schema".t VALUES ($1, 'it''s?', $2)"#
        );
    }

    #[test]
    fn rows_read_numbers_written_as_text() {
        let row = Row(vec![Value::Text("12".into()), Value::Text("1.5".into()), Value::Int(3), Value::Null]);
        assert_eq!(row.int(0).unwrap(), 12);
        assert_eq!(row.real(1).unwrap(), 1.5);
        assert_eq!(row.text(2).unwrap(), "3");
        assert!(row.is_null(3) && row.real(3).is_err());
    }
}
