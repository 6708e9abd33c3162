//! The one connection trait every server's connection implements.

use crate::bulk;
use crate::dialect::Dialect;
use crate::error::DbError;
use crate::sqlite_connection::{self, SqliteOpen};
use crate::value::{Row, Value};

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

    /// Run a statement as a client sent it, its result rows read and dropped: through the simple protocol when
    /// `parameters` is `None`; as a prepared statement with its captured values bound as text (the server reads each
    /// as its parameter's type, as it did for the client) when `Some`. A server whose captures carry no bound values
    /// (MySQL's logs write them into the text) refuses them.
    fn run_captured(&mut self, sql: &str, parameters: Option<&[Option<String>]>) -> Result<(), DbError> {
        match parameters {
            Some(values) if !values.is_empty() => Err(DbError::other(format!(
                "{} takes no bound values here; a capture of it has them written into the text",
                self.dialect().ops().server_name
            ))),
            _ => self.batch(sql),
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

/// Open a SQLite file the way `how` says.
pub fn open_sqlite(path: &std::path::Path, how: SqliteOpen) -> Result<Box<dyn Connection>, DbError> {
    Ok(Box::new(sqlite_connection::SqliteConnection::open(path, how)?))
}
