//! MariaDB and MySQL over a real connection: statements prepared once per connection (the driver's statement cache).

use crate::lock::{ServerLockError, ServerLockMode};
use crate::server::{Counters, RangePartition, Server, UrlConfig, config_of};
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
    pub(crate) fn open(opts: &mysql::Opts, shown: &str) -> Result<MySqlConnection, DbError> {
        let opts = opts.clone();
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

/// MariaDB's and MySQL's side of [`Server`].
pub(crate) struct MySqlServer;

/// Which server of the MySQL row a connection reached. MariaDB and MySQL speak one protocol and one dialect and
/// differ in a few statements (their optimizer statistics, above all), so a workload that needs those asks the
/// flavour, and a third flavour would be a compiler error in each place that does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MySqlFlavour {
    MariaDb,
    MySql,
}

impl MySqlFlavour {
    /// The flavour a server's reported version names: `MariaDB 10.11.6-MariaDB-0+deb12u1` or `MySQL 8.0.36`.
    pub fn of(version: &str) -> MySqlFlavour {
        if version.starts_with("MariaDB") { MySqlFlavour::MariaDb } else { MySqlFlavour::MySql }
    }
}

/// The one [`MySqlServer`].
pub(crate) static MYSQL: MySqlServer = MySqlServer;

/// How many runs may share a MariaDB/MySQL run lock at once.
pub const READER_SLOTS: usize = 64;

/// MariaDB/MySQL status variables and the names envbench shows them by: the whole server's, so their commits are not
/// the run's, and are named so.
const STATUS_COUNTERS: &[(&str, &str)] = &[
    ("Com_commit", "server-wide commits"),
    ("Com_rollback", "server-wide rollbacks"),
    ("Innodb_data_reads", "innodb data reads"),
    ("Innodb_data_fsyncs", "innodb fsyncs"),
    ("Innodb_os_log_written", "log bytes written"),
    ("Innodb_row_lock_waits", "row lock waits"),
    ("Innodb_buffer_pool_reads", "buffer pool reads"),
    ("Innodb_buffer_pool_read_requests", "buffer pool read requests"),
];

/// Lock names are at most 64 characters: a hash of the key keeps them short and the same everywhere.
pub(crate) fn lock_name(key: &str, role: &str) -> String {
    format!("envbench:{:08x}:{role}", crate::lock::fnv1a(key))
}

impl Server for MySqlServer {
    fn schemes(&self) -> &'static [&'static str] {
        &["mysql", "mariadb"]
    }

    fn check_url(&self, url: &str) -> Result<(String, UrlConfig), String> {
        let url = match url.strip_prefix("mariadb://") {
            Some(rest) => format!("mysql://{rest}"),
            None => url.to_string(),
        };
        let opts = mysql::Opts::from_url(&url).map_err(|e| e.to_string())?;
        Ok((url, std::sync::Arc::new(opts)))
    }

    fn connect(&self, config: &UrlConfig, shown: &str, _application: &str) -> Result<Box<dyn Connection>, DbError> {
        Ok(Box::new(MySqlConnection::open(config_of::<mysql::Opts>(config, "MySQL/MariaDB"), shown)?))
    }

    fn is_local(&self, config: &UrlConfig) -> bool {
        crate::server::is_loopback_name(&config_of::<mysql::Opts>(config, "MySQL/MariaDB").get_ip_or_hostname())
    }

    fn data_directory(&self) -> Option<&'static str> {
        Some("SELECT @@datadir")
    }

    /// The host, data directory and port (no two running servers share all three; MySQL's `@@server_uuid` is not
    /// MariaDB's, and a copied data directory keeps it), and the start its uptime tells.
    fn identity(&self, session: &mut dyn Connection) -> Result<Option<crate::ServerIdentity>, DbError> {
        let sql = "SELECT @@hostname, @@datadir, CAST(@@port AS CHAR), UNIX_TIMESTAMP()";
        let Some(row) = session.query_optional(sql, &[])? else { return Ok(None) };
        let (host, dir, port) = (row.text(0)?, row.text(1)?, row.text(2)?);
        let now = row.real(3)?;
        let uptime = session
            .query_optional("SHOW GLOBAL STATUS LIKE 'Uptime'", &[])?
            .and_then(|row| row.text(1).ok())
            .and_then(|text| text.parse::<f64>().ok());
        let started = uptime.map(|uptime| now - uptime);
        Ok(Some(crate::ServerIdentity {
            words: format!(
                "host {host}, data directory {dir}, port {port}{}",
                uptime.map_or(String::new(), |uptime| format!(", up {uptime:.0} s"))
            ),
            key: format!("{host}\u{1f}{dir}\u{1f}{port}"),
            started,
        }))
    }

    /// The general and slow query logs' files, relative to the data directory, whether or not they are on now.
    fn log_files(&self, session: &mut dyn Connection) -> Vec<std::path::PathBuf> {
        let sql = "SELECT @@datadir, @@general_log_file, @@slow_query_log_file";
        let Ok(Some(row)) = session.query_optional(sql, &[]) else { return Vec::new() };
        let Ok(dir) = row.text(0) else { return Vec::new() };
        (1..3).filter_map(|c| row.text(c).ok()).map(|file| std::path::Path::new(&dir).join(file)).collect()
    }

    /// User locks are the server's, and the key names the namespace (MySQL's database) already.
    fn lock_scope(&self, _session: &mut dyn Connection) -> Result<String, DbError> {
        Ok(String::new())
    }

    /// User locks (`GET_LOCK`), which have no shared form: readers take one of [`READER_SLOTS`] reader locks and
    /// then check that no writer holds the writer lock; a writer takes the writer lock and then checks that no reader
    /// slot is held. Each side re-checks after taking its own, so the two can both be refused but never both succeed.
    fn take_lock(
        &self,
        session: &mut dyn Connection,
        key: &str,
        mode: ServerLockMode,
        label: &str,
    ) -> Result<(), ServerLockError> {
        let writer = lock_name(key, "w");
        let readers: Vec<String> = (0..READER_SLOTS).map(|slot| lock_name(key, &format!("r{slot}"))).collect();
        let get = |session: &mut dyn Connection, name: &str| -> Result<bool, DbError> {
            let row = session.query_optional("SELECT GET_LOCK(?, 0)", &[Value::Text(name.to_string())])?;
            Ok(row.is_some_and(|row| !row.is_null(0) && row.int(0).unwrap_or(0) == 1))
        };
        let release = |session: &mut dyn Connection, name: &str| {
            let _ = session.query_optional("SELECT RELEASE_LOCK(?)", &[Value::Text(name.to_string())]);
        };
        let busy = |session: &mut dyn Connection, connection_id: i64, reading: bool| {
            let found = session
                .query_optional(
                    "SELECT HOST, USER, TIME FROM information_schema.PROCESSLIST WHERE ID = ?",
                    &[Value::Int(connection_id)],
                )
                .ok()
                .flatten();
            let reading = if reading { ", reading" } else { "" };
            let holder = match found {
                Some(row) => format!(
                    "connection {connection_id} from {} as {}, for {} s{reading}",
                    row.text(0).unwrap_or_default(),
                    row.text(1).unwrap_or_default(),
                    row.text(2).unwrap_or_default()
                ),
                None => format!("connection {connection_id}{reading}"),
            };
            ServerLockError::Busy { resource: label.to_string(), holder }
        };
        let writer_holder = |session: &mut dyn Connection| -> Result<Option<i64>, DbError> {
            let row = session.query_optional("SELECT IS_USED_LOCK(?)", &[Value::Text(writer.clone())])?;
            row.filter(|row| !row.is_null(0)).map(|row| row.int(0)).transpose()
        };
        match mode {
            ServerLockMode::Exclusive => {
                if !get(session, &writer)? {
                    let holder = writer_holder(session)?.unwrap_or(0);
                    return Err(busy(session, holder, false));
                }
                let columns = vec!["IS_USED_LOCK(?)"; readers.len()].join(", ");
                let params: Vec<Value> = readers.iter().map(|name| Value::Text(name.clone())).collect();
                let row = session.query_optional(&format!("SELECT {columns}"), &params)?.unwrap_or_default();
                if let Some(reader) = (0..readers.len()).find(|&i| !row.is_null(i)) {
                    let holder = row.int(reader)?;
                    release(session, &writer);
                    return Err(busy(session, holder, true));
                }
                Ok(())
            }
            ServerLockMode::Shared => {
                for slot in &readers {
                    if !get(session, slot)? {
                        continue;
                    }
                    if let Some(holder) = writer_holder(session)? {
                        release(session, slot);
                        return Err(busy(session, holder, false));
                    }
                    return Ok(());
                }
                Err(ServerLockError::Busy {
                    resource: label.to_string(),
                    holder: format!("{READER_SLOTS} runs already share it, the most that can"),
                })
            }
        }
    }

    fn release_locks(&self) -> Option<&'static str> {
        Some("SELECT RELEASE_ALL_LOCKS()")
    }

    /// InnoDB clusters rows on the primary key, so it is declared with the table (adding it afterwards would copy the
    /// table).
    fn create_table(&self, name: &str, columns: &str, key: Option<&str>) -> String {
        match key {
            Some(key) => format!("CREATE TABLE {name} ({columns}, PRIMARY KEY ({key})) ENGINE=InnoDB"),
            None => format!("CREATE TABLE {name} ({columns}) ENGINE=InnoDB"),
        }
    }

    fn add_key(&self, _table: &str, _key_name: &str, _key: &str) -> Option<String> {
        None
    }

    /// One table with its partitions declared (every unique key of a partitioned InnoDB table holds the partition
    /// column, as `key` must).
    fn create_partitioned(
        &self,
        name: &str,
        columns: &str,
        key: &str,
        column: &str,
        partitions: &[RangePartition],
    ) -> Option<Vec<String>> {
        let declared: Vec<String> = partitions
            .iter()
            .map(|partition| {
                let to = partition.to.map_or("MAXVALUE".to_string(), |v| format!("({v})"));
                format!("PARTITION {} VALUES LESS THAN {to}", partition.name)
            })
            .collect();
        Some(vec![format!(
            "CREATE TABLE {name} ({columns}, PRIMARY KEY ({key})) ENGINE=InnoDB PARTITION BY RANGE ({column}) ({})",
            declared.join(", ")
        )])
    }

    fn partitions(&self) -> Option<&'static str> {
        Some(
            "SELECT partition_name FROM information_schema.partitions WHERE table_schema = ? AND table_name = ? \
             AND partition_name IS NOT NULL ORDER BY partition_ordinal_position",
        )
    }

    fn gather_statistics(&self, tables: &[String]) -> Vec<String> {
        tables.iter().map(|table| format!("ANALYZE TABLE {table}")).collect()
    }

    /// The tables' dirty pages written out (`FLUSH TABLES ... FOR EXPORT`, on those tables only), where this user
    /// has the RELOAD and LOCK TABLES privileges.
    fn settle(&self, connection: &mut dyn Connection, tables: &[String]) -> Result<Option<String>, DbError> {
        match connection.batch(&format!("FLUSH TABLES {} FOR EXPORT", tables.join(", "))) {
            Ok(()) => {
                connection.batch("UNLOCK TABLES")?;
                Ok(None)
            }
            Err(error) if error.kind == ErrorKind::Refused => Ok(Some(format!(
                "no flush of the tables before the steps: {} (it needs the RELOAD and LOCK TABLES privileges)",
                error.message
            ))),
            Err(error) => Err(error),
        }
    }

    fn call(&self, routine: &str, arguments: usize) -> Option<String> {
        Some(format!("CALL {routine}({})", vec!["?"; arguments].join(", ")))
    }

    /// One JSON array of `[a,b,c]` rows, which a procedure reads with JSON_TABLE.
    fn list_arguments(&self, rows: &mut dyn Iterator<Item = [i64; 3]>) -> Option<Vec<Value>> {
        use std::fmt::Write as _;
        let mut text = String::with_capacity(16 * rows.size_hint().0 + 2);
        text.push('[');
        for (index, row) in rows.enumerate() {
            let comma = if index == 0 { "" } else { "," };
            let _ = write!(text, "{comma}[{},{},{}]", row[0], row[1], row[2]);
        }
        text.push(']');
        Some(vec![Value::Text(text)])
    }

    fn list_argument_count(&self) -> Option<usize> {
        Some(1)
    }

    /// `SHOW GLOBAL STATUS`: the whole server's counters (there is no per-database commit counter), named so.
    fn counters(&self, connection: &mut dyn Connection) -> Result<Counters, DbError> {
        let mut counters = Counters::new();
        for row in connection.query("SHOW GLOBAL STATUS", &[])? {
            let name = row.text(0)?;
            if let Some((_, shown)) = STATUS_COUNTERS.iter().find(|(variable, _)| variable.eq_ignore_ascii_case(&name))
                && let Ok(value) = row.real(1)
            {
                counters.insert(shown.to_string(), value);
            }
        }
        Ok(counters)
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
