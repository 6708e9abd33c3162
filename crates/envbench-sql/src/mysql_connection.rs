//! MariaDB and MySQL over a real connection: statements prepared once per connection (the driver's statement cache).

use crate::{Conflict, Connection, DbError, Dialect, ErrorKind, Interrupter, Row, Value};
use mysql::prelude::Queryable;
use std::sync::Mutex;
use std::time::Duration;

pub(crate) struct MySqlConnection {
    connection: mysql::Conn,
    /// What the connection was opened with, for the second connection that interrupts its statements.
    opts: mysql::Opts,
    shown: String,
    /// Whether the server is MariaDB (which limits statements' time in its own words), once asked.
    mariadb: Option<bool>,
}

impl MySqlConnection {
    pub(crate) fn open(url: &str, shown: &str) -> Result<MySqlConnection, DbError> {
        let opts = mysql::Opts::from_url(url)
            .map_err(|e| DbError::new(ErrorKind::Refused, format!("{shown}: not a MySQL URL ({e})")))?;
        // The mysql client's rule: MYSQL_PWD when the URL holds no password.
        let password = opts.get_pass().map(String::from).or_else(|| crate::password_from("MYSQL_PWD"));
        let opts = mysql::OptsBuilder::from_opts(opts)
            .pass(password)
            .stmt_cache_size(Some(256))
            .tcp_connect_timeout(Some(Duration::from_secs(10)));
        let opts = mysql::Opts::from(opts);
        let connection = mysql::Conn::new(opts.clone()).map_err(|e| classify(shown, e))?;
        Ok(MySqlConnection { connection, opts, shown: shown.to_string(), mariadb: None })
    }

    fn is_mariadb(&mut self) -> Result<bool, DbError> {
        if self.mariadb.is_none() {
            self.mariadb = Some(self.server_version()?.starts_with("MariaDB"));
        }
        Ok(self.mariadb == Some(true))
    }
}

fn params(values: &[Value]) -> mysql::Params {
    if values.is_empty() {
        return mysql::Params::Empty;
    }
    mysql::Params::Positional(
        values
            .iter()
            .map(|value| match value {
                Value::Null => mysql::Value::NULL,
                Value::Int(v) => mysql::Value::Int(*v),
                Value::Real(v) => mysql::Value::Double(*v),
                Value::Text(v) => mysql::Value::Bytes(v.as_bytes().to_vec()),
            })
            .collect(),
    )
}

/// A value as sent by the server: numbers of the binary protocol, everything else as text.
pub(crate) fn value(value: mysql::Value) -> Value {
    match value {
        mysql::Value::NULL => Value::Null,
        mysql::Value::Int(v) => Value::Int(v),
        mysql::Value::UInt(v) => Value::Int(v as i64),
        mysql::Value::Float(v) => Value::Real(v.into()),
        mysql::Value::Double(v) => Value::Real(v),
        mysql::Value::Bytes(bytes) => Value::Text(String::from_utf8_lossy(&bytes).into_owned()),
        other => Value::Text(other.as_sql(true).trim_matches('\'').to_string()),
    }
}

impl Connection for MySqlConnection {
    fn dialect(&self) -> Dialect {
        Dialect::MySql
    }

    fn execute(&mut self, sql: &str, values: &[Value]) -> Result<u64, DbError> {
        let result = self.connection.exec_iter(sql, params(values)).map_err(|e| classify(&self.shown, e))?;
        Ok(result.affected_rows())
    }

    fn query(&mut self, sql: &str, values: &[Value]) -> Result<Vec<Row>, DbError> {
        // Without parameters the text protocol: statements such as SHOW cannot always be prepared.
        let rows: Vec<mysql::Row> =
            if values.is_empty() { self.connection.query(sql) } else { self.connection.exec(sql, params(values)) }
                .map_err(|e| classify(&self.shown, e))?;
        Ok(rows.into_iter().map(|row| Row(row.unwrap().into_iter().map(value).collect())).collect())
    }

    fn query_named(&mut self, sql: &str) -> Result<(Vec<String>, Vec<Row>), DbError> {
        // The text protocol, as `query` without parameters; the columns are known even when no row comes back.
        let mut result = self.connection.query_iter(sql).map_err(|e| classify(&self.shown, e))?;
        let columns = result.columns().as_ref().iter().map(|c| c.name_str().into_owned()).collect();
        let mut rows = Vec::new();
        for row in result.by_ref() {
            let row = row.map_err(|e| classify(&self.shown, e))?;
            rows.push(Row(row.unwrap().into_iter().map(value).collect()));
        }
        Ok((columns, rows))
    }

    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.connection.query_drop(sql).map_err(|e| classify(&self.shown, e))
    }

    fn set_statement_timeout(&mut self, timeout: Option<Duration>) -> Result<(), DbError> {
        let statement = timeout_statement(self.is_mariadb()?, timeout);
        self.batch(&statement)
    }

    /// `KILL QUERY` on a second connection, opened when first needed and again after it broke.
    fn interrupter(&mut self) -> Option<Interrupter> {
        let (id, opts) = (self.connection.connection_id(), self.opts.clone());
        let killer: Mutex<Option<mysql::Conn>> = Mutex::new(None);
        Some(Box::new(move || {
            let mut killer = killer.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            if killer.is_none() {
                *killer = mysql::Conn::new(opts.clone()).ok();
            }
            if let Some(connection) = killer.as_mut()
                && connection.query_drop(format!("KILL QUERY {id}")).is_err()
            {
                *killer = None;
            }
        }))
    }

    fn server_version(&mut self) -> Result<String, DbError> {
        let version: Option<String> =
            self.connection.query_first("SELECT VERSION()").map_err(|e| classify(&self.shown, e))?;
        let version = version.unwrap_or_default();
        Ok(if version.contains("MariaDB") { format!("MariaDB {version}") } else { format!("MySQL {version}") })
    }
}

/// The statement that limits every following statement of the session to `timeout` (`None`: no limit), in MariaDB's
/// words or MySQL's (whose limit applies to SELECT statements only).
fn timeout_statement(mariadb: bool, timeout: Option<Duration>) -> String {
    if mariadb {
        let seconds = timeout.map(|t| t.as_secs_f64().max(0.001)).unwrap_or(0.0);
        format!("SET SESSION max_statement_time = {seconds:.6}")
    } else {
        let milliseconds = timeout.map(|t| t.as_millis().max(1)).unwrap_or(0);
        format!("SET SESSION max_execution_time = {milliseconds}")
    }
}

/// A driver error, sorted: deadlocks and lock wait timeouts are retried, refused logins and unknown databases are the
/// user's to fix, and a lost connection means the server cannot be reached.
pub(crate) fn classify(shown: &str, error: mysql::Error) -> DbError {
    match &error {
        mysql::Error::MySqlError(server) => {
            let (kind, advice) = match server.code {
                1213 => (ErrorKind::Retry(Conflict::Deadlock), ""),
                1205 => (ErrorKind::Retry(Conflict::LockTimeout), ""),
                // MariaDB's innodb_snapshot_isolation: a row read in this transaction changed since.
                1020 => (ErrorKind::Retry(Conflict::Serialization), ""),
                // Interrupted by KILL QUERY, or by MariaDB's max_statement_time or MySQL's max_execution_time.
                1317 | 1969 | 3024 => (ErrorKind::Cancelled, ""),
                1045 => (ErrorKind::Refused, "; check the user and password in the URL"),
                1049 => (ErrorKind::Refused, "; create the database (CREATE DATABASE ...) or name an existing one"),
                1044 | 1142 | 1227 => {
                    (ErrorKind::Refused, "; the user needs privileges on the database (GRANT ALL ON db.* TO ...)")
                }
                _ => (ErrorKind::Other, ""),
            };
            DbError::new(kind, format!("{shown}: {}{advice}", server.message))
        }
        e if e.is_connectivity_error() => DbError::new(
            ErrorKind::Unreachable,
            format!("{shown}: {error}; is the server running, and does the URL name the right host and port?"),
        ),
        _ => DbError::other(format!("{shown}: {error}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statement_limits_are_set_in_each_servers_words() {
        let second = Some(Duration::from_millis(1500));
        assert_eq!(timeout_statement(true, second), "SET SESSION max_statement_time = 1.500000");
        assert_eq!(timeout_statement(true, None), "SET SESSION max_statement_time = 0.000000");
        assert_eq!(timeout_statement(false, second), "SET SESSION max_execution_time = 1500");
        assert_eq!(timeout_statement(false, None), "SET SESSION max_execution_time = 0");
    }
}
