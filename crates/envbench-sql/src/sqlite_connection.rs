//! Embedded SQLite: a file, WAL-capable, with a busy timeout so concurrent writers wait rather than fail at once.

use crate::{Connection, DbError, Dialect, ErrorKind, Row, Value};
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{ErrorCode, OpenFlags};
use std::time::Duration;

/// How long a writer waits for another connection's transaction before the error asks for a retry.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

pub(crate) struct SqliteConnection {
    connection: rusqlite::Connection,
    path: String,
}

impl SqliteConnection {
    pub(crate) fn open(path: &str) -> Result<SqliteConnection, DbError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let connection = rusqlite::Connection::open_with_flags(path, flags)
            .map_err(|e| DbError::new(ErrorKind::Refused, format!("{path}: cannot open the database ({e})")))?;
        connection.busy_timeout(BUSY_TIMEOUT).map_err(|e| classify(path, e))?;
        connection.set_prepared_statement_cache_capacity(256);
        Ok(SqliteConnection { connection, path: path.to_string() })
    }
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
                DbError::new(ErrorKind::Retry, format!("{path}: the database is busy ({error})"))
            }
            ErrorCode::DiskFull => DbError::other(format!("{path}: the disk is full; free some space")),
            ErrorCode::ReadOnly | ErrorCode::CannotOpen | ErrorCode::PermissionDenied => {
                DbError::new(ErrorKind::Refused, format!("{path}: {error}; choose a writable directory"))
            }
            _ => DbError::other(format!("{path}: {error}")),
        },
        _ => DbError::other(format!("{path}: {error}")),
    }
}
