//! Embedded SQLite: a file, WAL-capable, with a busy timeout so concurrent writers wait rather than fail at once.

use crate::lock::{ServerLockError, ServerLockMode};
use crate::server::{Counters, RangePartition, Server, UrlConfig, config_of};
use crate::{Conflict, Connection, DbError, Dialect, ErrorKind, Interrupter, Row, Value};
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{ErrorCode, OpenFlags};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How to open a SQLite file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SqliteOpen {
    /// Create the file when it does not exist.
    pub create: bool,
    /// Read only, as an immutable file: nothing is written, not even a journal or the shared-memory file a WAL
    /// database needs, so a file on a read-only file system can be read (its `-wal` must hold nothing unmerged).
    pub read_only: bool,
    /// How long a writer waits for another connection's transaction before the error asks for a retry.
    pub busy_timeout: Duration,
}

impl Default for SqliteOpen {
    fn default() -> SqliteOpen {
        SqliteOpen { create: true, read_only: false, busy_timeout: Duration::from_secs(30) }
    }
}

pub(crate) struct SqliteConnection {
    connection: rusqlite::Connection,
    path: String,
}

impl SqliteConnection {
    pub(crate) fn open(path: &Path, how: SqliteOpen) -> Result<SqliteConnection, DbError> {
        let shown = path.display().to_string();
        let opened = if how.read_only {
            let absolute =
                path.canonicalize().map_err(|e| DbError::new(ErrorKind::Refused, format!("{shown}: {e}")))?;
            rusqlite::Connection::open_with_flags(
                format!("file://{}?immutable=1", uri_path(&absolute)),
                OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
        } else {
            let create = if how.create { OpenFlags::SQLITE_OPEN_CREATE } else { OpenFlags::empty() };
            rusqlite::Connection::open_with_flags(
                path,
                OpenFlags::SQLITE_OPEN_READ_WRITE | create | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
        };
        let connection = opened.map_err(|e| DbError::new(ErrorKind::Refused, format!("{shown}: {e}")))?;
        connection.busy_timeout(how.busy_timeout).map_err(|e| classify(&shown, e))?;
        connection.set_prepared_statement_cache_capacity(256);
        Ok(SqliteConnection { connection, path: shown })
    }
}

/// A path as a `file:` URI's path: the characters a URI gives meaning to escaped.
fn uri_path(path: &Path) -> String {
    let mut text = String::new();
    for byte in path.as_os_str().as_bytes() {
        match byte {
            b'%' | b'?' | b'#' => text.push_str(&format!("%{byte:02x}")),
            33..=126 => text.push(char::from(*byte)),
            _ => text.push_str(&format!("%{byte:02x}")),
        }
    }
    text
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Value::Null => ToSqlOutput::Owned(rusqlite::types::Value::Null),
            Value::Int(v) => ToSqlOutput::Owned(rusqlite::types::Value::Integer(*v)),
            Value::Real(v) => ToSqlOutput::Owned(rusqlite::types::Value::Real(*v)),
            Value::Text(v) => ToSqlOutput::Borrowed(ValueRef::Text(v.as_bytes())),
        })
    }
}

impl Connection for SqliteConnection {
    fn interrupter(&mut self) -> Option<Interrupter> {
        let handle = self.connection.get_interrupt_handle();
        Some(Box::new(move || handle.interrupt()))
    }

    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError> {
        let path = &self.path;
        let mut statement = self.connection.prepare_cached(sql).map_err(|e| classify(path, e))?;
        statement.execute(rusqlite::params_from_iter(params)).map(|n| n as u64).map_err(|e| classify(path, e))
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError> {
        let path = &self.path;
        let fail = |e| classify(path, e);
        let mut statement = self.connection.prepare_cached(sql).map_err(fail)?;
        let columns = statement.column_count();
        let mut rows = statement.query(rusqlite::params_from_iter(params)).map_err(fail)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(fail)? {
            let mut cells = Vec::with_capacity(columns);
            for column in 0..columns {
                cells.push(match row.get_ref(column).map_err(fail)? {
                    ValueRef::Null => Value::Null,
                    ValueRef::Integer(v) => Value::Int(v),
                    ValueRef::Real(v) => Value::Real(v),
                    ValueRef::Text(bytes) | ValueRef::Blob(bytes) => {
                        Value::Text(String::from_utf8_lossy(bytes).into_owned())
                    }
                });
            }
            out.push(Row(cells));
        }
        Ok(out)
    }

    fn query_named(&mut self, sql: &str) -> Result<(Vec<String>, Vec<Row>), DbError> {
        let statement = self.connection.prepare_cached(sql).map_err(|e| classify(&self.path, e))?;
        let columns = statement.column_names().map(String::from).collect();
        drop(statement);
        Ok((columns, self.query(sql, &[])?))
    }

    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.connection.execute_batch(sql).map_err(|e| classify(&self.path, e))
    }

    fn server_version(&mut self) -> Result<String, DbError> {
        Ok(format!("SQLite {}", rusqlite::version()))
    }
}

fn classify(path: &str, error: rusqlite::Error) -> DbError {
    match &error {
        rusqlite::Error::SqliteFailure(code, _) => match code.code {
            ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => {
                DbError::new(ErrorKind::Retry(Conflict::Busy), format!("{path}: the database is busy ({error})"))
            }
            ErrorCode::DiskFull => {
                DbError::other(format!("{path}: the disk holding the database is full; free space or choose another"))
            }
            ErrorCode::ReadOnly | ErrorCode::CannotOpen | ErrorCode::PermissionDenied => DbError::new(
                ErrorKind::Refused,
                format!("{path}: {error}; the file or its directory is read-only: choose a writable one"),
            ),
            ErrorCode::OperationInterrupted => {
                DbError::new(ErrorKind::Cancelled, format!("{path}: the statement was interrupted"))
            }
            ErrorCode::NotADatabase => DbError::new(ErrorKind::NotADatabase, format!("{path}: {error}")),
            ErrorCode::DatabaseCorrupt => DbError::new(ErrorKind::Corrupt, format!("{path}: {error}")),
            _ => DbError::other(format!("{path}: {error}")),
        },
        _ => DbError::other(format!("{path}: {error}")),
    }
}

/// SQLite's side of [`Server`]: an embedded file, locked through the file (`envbench_base::lock`), with no stored
/// routines, partitions or counters.
pub(crate) struct SqliteServer;

/// The one [`SqliteServer`].
pub(crate) static SQLITE: SqliteServer = SqliteServer;

impl Server for SqliteServer {
    fn schemes(&self) -> &'static [&'static str] {
        &[]
    }

    fn check_url(&self, _url: &str) -> Result<(String, UrlConfig), String> {
        Err("an embedded SQLite database is named by its file, not a URL".into())
    }

    fn connect(&self, config: &UrlConfig, _shown: &str, _application: &str) -> Result<Box<dyn Connection>, DbError> {
        let path = config_of::<PathBuf>(config, "SQLite");
        Ok(Box::new(SqliteConnection::open(path, SqliteOpen::default())?))
    }

    fn is_local(&self, _config: &UrlConfig) -> bool {
        true
    }

    /// The file is the caller's own.
    fn data_directory(&self) -> Option<&'static str> {
        None
    }

    fn identity(&self, _session: &mut dyn Connection) -> Result<Option<crate::ServerIdentity>, DbError> {
        Ok(None)
    }

    fn log_files(&self, _session: &mut dyn Connection) -> Vec<std::path::PathBuf> {
        Vec::new()
    }

    fn lock_scope(&self, _session: &mut dyn Connection) -> Result<String, DbError> {
        Err(DbError::other("an SQLite database is locked through its file, not a server lock"))
    }

    fn take_lock(
        &self,
        _session: &mut dyn Connection,
        _key: &str,
        _mode: ServerLockMode,
        _label: &str,
    ) -> Result<(), ServerLockError> {
        Err(DbError::other("an SQLite database is locked through its file, not a server lock").into())
    }

    fn release_locks(&self) -> Option<&'static str> {
        None
    }

    fn create_table(&self, name: &str, columns: &str, _key: Option<&str>) -> String {
        format!("CREATE TABLE {name} ({columns})")
    }

    /// A unique index stands for the key: SQLite cannot add a primary key to a table.
    fn add_key(&self, table: &str, key_name: &str, key: &str) -> Option<String> {
        Some(format!("CREATE UNIQUE INDEX {key_name} ON {table} ({key})"))
    }

    fn create_partitioned(
        &self,
        _name: &str,
        _columns: &str,
        _key: &str,
        _column: &str,
        _partitions: &[RangePartition],
    ) -> Option<Vec<String>> {
        None
    }

    fn partitions(&self) -> Option<&'static str> {
        None
    }

    /// Its one database is its namespace.
    fn gather_statistics(&self, _tables: &[String]) -> Vec<String> {
        vec!["ANALYZE".to_string()]
    }

    /// The write-ahead log checkpointed into the database.
    fn settle(&self, connection: &mut dyn Connection, _tables: &[String]) -> Result<Option<String>, DbError> {
        connection.query("PRAGMA wal_checkpoint(TRUNCATE)", &[])?;
        Ok(None)
    }

    fn call(&self, _routine: &str, _arguments: usize) -> Option<String> {
        None
    }

    fn list_arguments(&self, _rows: &mut dyn Iterator<Item = [i64; 3]>) -> Option<Vec<Value>> {
        None
    }

    fn list_argument_count(&self) -> Option<usize> {
        None
    }

    fn counters(&self, _connection: &mut dyn Connection) -> Result<Counters, DbError> {
        Ok(Counters::new())
    }
}

/// The version of the SQLite library envbench embeds.
pub fn sqlite_version() -> &'static str {
    rusqlite::version()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_become_uri_paths() {
        assert_eq!(uri_path(Path::new("/data/a b/x?y#z%.db")), "/data/a%20b/x%3fy%23z%25.db");
        assert_eq!(uri_path(Path::new("/data/ré.db")), "/data/r%c3%a9.db");
    }
}
