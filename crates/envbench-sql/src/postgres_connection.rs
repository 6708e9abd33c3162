//! PostgreSQL over a real connection: statements prepared once per connection, values bound in the binary protocol.

use crate::lock::{ServerLockError, ServerLockMode};
use crate::server::{COMMITS, Counters, ROLLBACKS, RangePartition, Server, UrlConfig, config_of};
use crate::{Conflict, Connection, DbError, Dialect, ErrorKind, Interrupter, Row, Value, numbered_placeholders};
use envbench_core::model::{error_chain, postgres_advice};
use postgres::types::{FromSql, IsNull, ToSql, Type};
use postgres::{Client, NoTls, SimpleQueryMessage, Statement};
use std::collections::HashMap;
use std::io::Write as _;
use std::time::Duration;

pub(crate) struct PostgresConnection {
    client: Client,
    statements: HashMap<String, Statement>,
    shown: String,
    /// `server_version_num`, once asked.
    version_number: Option<u32>,
}

impl PostgresConnection {
    pub(crate) fn open(
        config: &postgres::Config,
        shown: &str,
        application: &str,
    ) -> Result<PostgresConnection, DbError> {
        let mut config = config.clone();
        config.application_name(application);
        config.connect_timeout(Duration::from_secs(10));
        crate::postgres_password_from_environment(&mut config);
        let client = config.connect(NoTls).map_err(|e| classify(shown, &e))?;
        Ok(PostgresConnection { client, statements: HashMap::new(), shown: shown.to_string(), version_number: None })
    }

    fn statement(&mut self, sql: &str) -> Result<Statement, DbError> {
        if let Some(statement) = self.statements.get(sql) {
            return Ok(statement.clone());
        }
        // Statements built from their values (a filter's clauses, a batch of rows) are many: a long-lived connection
        // keeps at most this many prepared on the server.
        if self.statements.len() >= STATEMENT_CACHE {
            self.statements.clear();
        }
        let statement = self.client.prepare(&numbered_placeholders(sql)).map_err(|e| classify(&self.shown, &e))?;
        self.statements.insert(sql.to_string(), statement.clone());
        Ok(statement)
    }
}

/// Prepared statements kept per connection.
const STATEMENT_CACHE: usize = 512;

/// A value bound as the server expects its parameter: an integer as the parameter's integer or float width, a real
/// as float4 or float8, NULL for a parameter of any type, text as text. Borrowed, so binding copies nothing but the
/// bytes the driver sends; each conversion still checks the parameter's type, as the driver's own values do.
#[derive(Debug)]
struct Param<'a>(&'a Value);

impl ToSql for Param<'_> {
    fn to_sql(&self, ty: &Type, out: &mut bytes::BytesMut) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match (self.0, ty) {
            (Value::Null, _) => Ok(IsNull::Yes),
            (Value::Int(v), &Type::INT2) => (*v as i16).to_sql_checked(ty, out),
            (Value::Int(v), &Type::INT4) => (*v as i32).to_sql_checked(ty, out),
            (Value::Int(v), &Type::FLOAT8) => (*v as f64).to_sql_checked(ty, out),
            (Value::Int(v), &Type::FLOAT4) => (*v as f32).to_sql_checked(ty, out),
            (Value::Int(v), _) => v.to_sql_checked(ty, out),
            (Value::Real(v), &Type::FLOAT4) => (*v as f32).to_sql_checked(ty, out),
            (Value::Real(v), _) => v.to_sql_checked(ty, out),
            (Value::Text(v), _) => v.as_str().to_sql_checked(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    postgres::types::to_sql_checked!();
}

/// A captured value bound as text, whatever its parameter's type: the server parses it as it parsed the client's.
#[derive(Debug)]
struct TextParam<'a>(Option<&'a str>);

impl ToSql for TextParam<'_> {
    fn to_sql(&self, _: &Type, out: &mut bytes::BytesMut) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self.0 {
            None => Ok(IsNull::Yes),
            Some(text) => {
                out.extend_from_slice(text.as_bytes());
                Ok(IsNull::No)
            }
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    fn encode_format(&self, _: &Type) -> postgres::types::Format {
        postgres::types::Format::Text
    }

    postgres::types::to_sql_checked!();
}

/// Values as the driver binds them.
fn bind(values: &[Value]) -> Vec<Param<'_>> {
    values.iter().map(Param).collect()
}

/// The driver's view of bound values.
fn refs<'a>(bound: &'a [Param<'a>]) -> Vec<&'a (dyn ToSql + Sync)> {
    bound.iter().map(|param| param as &(dyn ToSql + Sync)).collect()
}

/// Any value the server sends, kept as text when the type is not one envbench reads as a number.
struct Raw(Value);

impl<'a> FromSql<'a> for Raw {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Raw, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Raw(match *ty {
            Type::INT2 => Value::Int(i16::from_sql(ty, raw)?.into()),
            Type::INT4 => Value::Int(i32::from_sql(ty, raw)?.into()),
            Type::INT8 => Value::Int(i64::from_sql(ty, raw)?),
            Type::FLOAT4 => Value::Real(f32::from_sql(ty, raw)?.into()),
            Type::FLOAT8 => Value::Real(f64::from_sql(ty, raw)?),
            Type::BOOL => Value::Int(bool::from_sql(ty, raw)?.into()),
            Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME => Value::Text(String::from_sql(ty, raw)?),
            _ => Value::Text(String::from_utf8_lossy(raw).into_owned()),
        }))
    }

    fn from_sql_null(_: &Type) -> Result<Raw, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Raw(Value::Null))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

impl Connection for PostgresConnection {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError> {
        let statement = self.statement(sql)?;
        let bound = bind(params);
        self.client.execute(&statement, &refs(&bound)).map_err(|e| classify(&self.shown, &e))
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError> {
        let statement = self.statement(sql)?;
        let bound = bind(params);
        let rows = self.client.query(&statement, &refs(&bound)).map_err(|e| classify(&self.shown, &e))?;
        rows.iter()
            .map(|row| {
                (0..row.len())
                    .map(|i| row.try_get::<_, Raw>(i).map(|r| r.0).map_err(|e| classify(&self.shown, &e)))
                    .collect::<Result<Vec<_>, _>>()
                    .map(Row)
            })
            .collect()
    }

    fn run_captured(&mut self, sql: &str, parameters: Option<&[Option<String>]>) -> Result<(), DbError> {
        use postgres::fallible_iterator::FallibleIterator;
        let Some(values) = parameters else { return self.batch(sql) };
        let statement = self.statement(sql)?;
        let bound: Vec<TextParam> = values.iter().map(|v| TextParam(v.as_deref())).collect();
        let error = |e: postgres::Error| classify(&self.shown, &e);
        let mut rows =
            self.client.query_raw(&statement, bound.iter().map(|p| p as &(dyn ToSql + Sync))).map_err(error)?;
        while rows.next().map_err(error)?.is_some() {}
        Ok(())
    }

    fn query_named(&mut self, sql: &str) -> Result<(Vec<String>, Vec<Row>), DbError> {
        // The simple protocol, as the MySQL connection's text protocol: every value as the server writes it
        // (numeric and dates included), and nothing prepared for a text that runs once.
        let messages = self.client.simple_query(sql).map_err(|e| classify(&self.shown, &e))?;
        let (mut columns, mut rows) = (Vec::new(), Vec::new());
        for message in messages {
            match message {
                SimpleQueryMessage::RowDescription(described) => {
                    columns = described.iter().map(|c| c.name().to_string()).collect();
                }
                SimpleQueryMessage::Row(row) => rows.push(Row((0..row.len())
                    .map(|i| row.get(i).map_or(Value::Null, |text| Value::Text(text.to_string())))
                    .collect())),
                _ => {}
            }
        }
        Ok((columns, rows))
    }

    fn set_statement_timeout(&mut self, timeout: Option<Duration>) -> Result<(), DbError> {
        let milliseconds = timeout.map(|t| t.as_millis().max(1)).unwrap_or(0);
        self.batch(&format!("SET statement_timeout = {milliseconds}"))
    }

    fn load_csv(&mut self, table: &str, csv: &str) -> Result<(), DbError> {
        let mut writer = self
            .client
            .copy_in(&format!("COPY {table} FROM STDIN (FORMAT csv)"))
            .map_err(|e| classify(&self.shown, &e))?;
        // After a failed write the connection is broken, and finish() reports the driver's reason.
        let written = writer.write_all(csv.as_bytes());
        writer.finish().map_err(|e| classify(&self.shown, &e))?;
        written.map_err(|e| DbError::new(ErrorKind::Unreachable, format!("{}: sending rows failed: {e}", self.shown)))
    }

    fn interrupter(&mut self) -> Option<Interrupter> {
        let token = self.client.cancel_token();
        Some(Box::new(move || {
            let _ = token.cancel_query(NoTls);
        }))
    }

    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.client.batch_execute(sql).map_err(|e| classify(&self.shown, &e))
    }

    fn server_version(&mut self) -> Result<String, DbError> {
        let version = self.query("SHOW server_version", &[])?;
        Ok(format!("PostgreSQL {}", version.first().map(|r| r.text(0)).transpose()?.unwrap_or_default()))
    }

    fn server_version_number(&mut self) -> Result<Option<u32>, DbError> {
        if self.version_number.is_none() {
            let rows = self.query("SHOW server_version_num", &[])?;
            let text = rows.first().map(|r| r.text(0)).transpose()?.unwrap_or_default();
            let number = text
                .trim()
                .parse()
                .map_err(|_| DbError::other(format!("{}: server_version_num '{text}' is not a number", self.shown)))?;
            self.version_number = Some(number);
        }
        Ok(self.version_number)
    }
}

/// A driver error, sorted: deadlocks and serialization failures are retried; what the server refuses is the user's to
/// fix; a lost connection means the server cannot be reached.
pub(crate) fn classify(shown: &str, error: &postgres::Error) -> DbError {
    match error.as_db_error() {
        Some(db) => {
            let code = db.code().code();
            let kind = match code {
                "40001" => ErrorKind::Retry(Conflict::Serialization),
                "40P01" => ErrorKind::Retry(Conflict::Deadlock),
                "55P03" => ErrorKind::Retry(Conflict::LockTimeout),
                "57014" => ErrorKind::Cancelled,
                "XX001" | "XX002" => ErrorKind::Corrupt,
                "28P01" | "28000" | "3D000" | "42501" | "3F000" => ErrorKind::Refused,
                _ => ErrorKind::Other,
            };
            DbError::new(kind, format!("{shown}: {}", postgres_advice(Some(code), db.message(), "the URL")))
        }
        None => DbError::new(
            ErrorKind::Unreachable,
            format!("{shown}: {}", postgres_advice(None, &error_chain(error), "the URL")),
        ),
    }
}

/// PostgreSQL's side of [`Server`].
pub(crate) struct PostgresServer;

/// The one [`PostgresServer`].
pub(crate) static POSTGRES: PostgresServer = PostgresServer;

/// The first key of every envbench advisory lock ("envb"), high bit clear so it reads the same as int4 and oid.
const CLASS_KEY: i64 = 0x656e_7662 & 0x7fff_ffff;

impl Server for PostgresServer {
    fn schemes(&self) -> &'static [&'static str] {
        &["postgres", "postgresql"]
    }

    fn check_url(&self, url: &str) -> Result<(String, UrlConfig), String> {
        let config = url.parse::<postgres::Config>().map_err(|e| e.to_string())?;
        Ok((url.to_string(), std::sync::Arc::new(config)))
    }

    fn connect(&self, config: &UrlConfig, shown: &str, application: &str) -> Result<Box<dyn Connection>, DbError> {
        let config = config_of::<postgres::Config>(config, "PostgreSQL");
        Ok(Box::new(PostgresConnection::open(config, shown, application)?))
    }

    fn is_local(&self, config: &UrlConfig) -> bool {
        config_of::<postgres::Config>(config, "PostgreSQL").get_hosts().iter().all(|host| match host {
            postgres::config::Host::Unix(_) => true,
            postgres::config::Host::Tcp(name) => crate::server::is_loopback_name(name),
        })
    }

    fn data_directory(&self) -> Option<&'static str> {
        // pg_settings leaves the row out for a user who may not see it, where SHOW would leave an error in the log.
        Some("SELECT setting FROM pg_settings WHERE name = 'data_directory'")
    }

    /// The cluster's system identifier (which a physical copy keeps) and when its postmaster started (which a copy
    /// started elsewhere does not share); both readable by any user.
    fn identity(&self, session: &mut dyn Connection) -> Result<Option<crate::ServerIdentity>, DbError> {
        let sql = "SELECT system_identifier::text, pg_postmaster_start_time()::text, \
                   extract(epoch FROM pg_postmaster_start_time())::float8 FROM pg_control_system()";
        let Some(row) = session.query_optional(sql, &[])? else { return Ok(None) };
        let (key, start) = (row.text(0)?, row.text(1)?);
        Ok(Some(crate::ServerIdentity {
            words: format!("system identifier {key}, started {start}"),
            key,
            started: Some(row.real(2)?),
        }))
    }

    /// `pg_current_logfile` of each destination, relative to the data directory (superusers and roles granted it).
    fn log_files(&self, session: &mut dyn Connection) -> Vec<std::path::PathBuf> {
        let sql = "SELECT d.setting, f FROM pg_settings d, LATERAL (SELECT pg_current_logfile(k) AS f FROM \
                   unnest(ARRAY['stderr', 'csvlog']) k) l WHERE d.name = 'data_directory' AND f IS NOT NULL";
        let mut files: Vec<std::path::PathBuf> = session
            .query(sql, &[])
            .unwrap_or_default()
            .iter()
            .filter_map(|row| Some(std::path::Path::new(&row.text(0).ok()?).join(row.text(1).ok()?)))
            .collect();
        // jsonlog is PostgreSQL 15's: asked apart, so an older server still answers the others.
        let json = "SELECT d.setting, pg_current_logfile('jsonlog') FROM pg_settings d WHERE d.name = 'data_directory'";
        if let Ok(Some(row)) = session.query_optional(json, &[])
            && !row.is_null(1)
            && let (Ok(dir), Ok(file)) = (row.text(0), row.text(1))
        {
            files.push(std::path::Path::new(&dir).join(file));
        }
        files
    }

    fn lock_scope(&self, session: &mut dyn Connection) -> Result<String, DbError> {
        let row = session.query_optional("SELECT current_database()", &[])?;
        Ok(row.map(|row| row.text(0)).transpose()?.unwrap_or_default())
    }

    /// A session advisory lock (`pg_try_advisory_lock` and its `_shared` twin) on the key's hash; the holder is
    /// named from `pg_locks` and `pg_stat_activity`.
    fn take_lock(
        &self,
        session: &mut dyn Connection,
        key: &str,
        mode: ServerLockMode,
        label: &str,
    ) -> Result<(), ServerLockError> {
        let object_key = i64::from(crate::lock::fnv1a(key) & 0x7fff_ffff);
        let function = match mode {
            ServerLockMode::Shared => "pg_try_advisory_lock_shared",
            ServerLockMode::Exclusive => "pg_try_advisory_lock",
        };
        let keys = [Value::Int(CLASS_KEY), Value::Int(object_key)];
        let taken = session.query_optional(&format!("SELECT {function}(?::int4, ?::int4)::int"), &keys)?;
        if taken.map(|row| row.int(0)).transpose()? == Some(1) {
            return Ok(());
        }
        // Who holds it: the sessions with a granted lock on the key that conflict with the mode asked for.
        let holders = session.query(
            "SELECT a.pid, COALESCE(NULLIF(a.application_name, ''), 'no application name'), \
                    COALESCE(host(a.client_addr), 'a local socket'), to_char(a.backend_start, 'YYYY-MM-DD HH24:MI:SS'), \
                    l.mode FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid \
             WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 \
               AND l.classid = ?::int8::oid AND l.objid = ?::int8::oid ORDER BY a.backend_start",
            &keys,
        )?;
        let described: Vec<String> = holders
            .iter()
            .take(3)
            .map(|row| {
                let reading = if row.text(4).unwrap_or_default().starts_with("Share") { ", reading" } else { "" };
                format!(
                    "{} from {}, server process {}, connected since {}{reading}",
                    row.text(1).unwrap_or_default(),
                    row.text(2).unwrap_or_default(),
                    row.text(0).unwrap_or_default(),
                    row.text(3).unwrap_or_default()
                )
            })
            .collect();
        let mut holder = described.join("; ");
        if holders.len() > 3 {
            holder.push_str(&format!("; and {} more", holders.len() - 3));
        }
        if holder.is_empty() {
            holder = "a session that has just ended".into();
        }
        Err(ServerLockError::Busy { resource: label.to_string(), holder })
    }

    fn release_locks(&self) -> Option<&'static str> {
        Some("SELECT pg_advisory_unlock_all()")
    }

    fn create_table(&self, name: &str, columns: &str, _key: Option<&str>) -> String {
        format!("CREATE TABLE {name} ({columns}) WITH (fillfactor = 100)")
    }

    fn add_key(&self, table: &str, _key_name: &str, key: &str) -> Option<String> {
        Some(format!("ALTER TABLE {table} ADD PRIMARY KEY ({key})"))
    }

    /// A partitioned table and a table for each partition; the key is added after the load, to all of them at once.
    fn create_partitioned(
        &self,
        name: &str,
        columns: &str,
        _key: &str,
        column: &str,
        partitions: &[RangePartition],
    ) -> Option<Vec<String>> {
        let bound = |value: Option<i64>, open: &str| value.map_or(open.to_string(), |v| v.to_string());
        let mut statements = vec![format!("CREATE TABLE {name} ({columns}) PARTITION BY RANGE ({column})")];
        for partition in partitions {
            statements.push(format!(
                "CREATE TABLE {} PARTITION OF {name} FOR VALUES FROM ({}) TO ({}) WITH (fillfactor = 100)",
                partition.name,
                bound(partition.from, "MINVALUE"),
                bound(partition.to, "MAXVALUE"),
            ));
        }
        Some(statements)
    }

    fn partitions(&self) -> Option<&'static str> {
        Some(
            "SELECT c.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid \
             JOIN pg_class p ON p.oid = i.inhparent JOIN pg_namespace n ON n.oid = p.relnamespace \
             WHERE n.nspname = ? AND p.relname = ? AND c.relkind IN ('r', 'p') ORDER BY 1",
        )
    }

    fn gather_statistics(&self, tables: &[String]) -> Vec<String> {
        tables.iter().map(|table| format!("VACUUM ANALYZE {table}")).collect()
    }

    /// `VACUUM ANALYZE` of the tables, then a `CHECKPOINT` where this user may (a superuser or, from PostgreSQL 15,
    /// a member of pg_checkpoint: asked first, so no refusal lands in the server's log).
    fn settle(&self, connection: &mut dyn Connection, tables: &[String]) -> Result<Option<String>, DbError> {
        connection.batch(&format!("VACUUM ANALYZE {}", tables.join(", ")))?;
        let allowed = connection
            .query_optional(
                "SELECT (u.rolsuper OR EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname = 'pg_checkpoint' \
                 AND pg_has_role(u.oid, r.oid, 'MEMBER')))::int FROM pg_roles u WHERE u.rolname = current_user",
                &[],
            )?
            .map(|row| row.int(0))
            .transpose()?
            == Some(1);
        if allowed {
            connection.batch("CHECKPOINT")?;
            Ok(None)
        } else {
            Ok(Some("no CHECKPOINT before the steps: this user is not a superuser or a member of pg_checkpoint".into()))
        }
    }

    /// A function answering its figures as OUT arguments.
    fn call(&self, routine: &str, arguments: usize) -> Option<String> {
        Some(format!("SELECT {routine}({})", vec!["?"; arguments].join(", ")))
    }

    /// Three arrays, `{1,2,3}`, which a function reads as integer[].
    fn list_arguments(&self, rows: &mut dyn Iterator<Item = [i64; 3]>) -> Option<Vec<Value>> {
        use std::fmt::Write as _;
        let capacity = 8 * rows.size_hint().0 + 2;
        let mut arrays: [String; 3] = std::array::from_fn(|_| {
            let mut array = String::with_capacity(capacity);
            array.push('{');
            array
        });
        for (index, row) in rows.enumerate() {
            let comma = if index == 0 { "" } else { "," };
            for (array, value) in arrays.iter_mut().zip(row) {
                let _ = write!(array, "{comma}{value}");
            }
        }
        Some(
            arrays
                .into_iter()
                .map(|mut array| {
                    array.push('}');
                    Value::Text(array)
                })
                .collect(),
        )
    }

    fn list_argument_count(&self) -> Option<usize> {
        Some(3)
    }

    /// Commits, rollbacks, blocks read and hit of the run's database (`pg_stat_database`'s row of
    /// `current_database()`), the WAL position and the checkpoints. A standby has no current WAL position, and
    /// PostgreSQL 17 moved the checkpoint counters to pg_stat_checkpointer: nothing is sent that this server lacks.
    fn counters(&self, connection: &mut dyn Connection) -> Result<Counters, DbError> {
        let mut counters = Counters::new();
        if let Some(row) = connection.query_optional(
            "SELECT xact_commit, xact_rollback, blks_read, blks_hit FROM pg_stat_database \
             WHERE datname = current_database()",
            &[],
        )? {
            for (i, name) in [COMMITS, ROLLBACKS, "blocks read", "blocks hit"].into_iter().enumerate() {
                counters.insert(name.to_string(), row.real(i)?);
            }
        }
        if let Ok(Some(row)) = connection.query_optional(
            "SELECT CASE WHEN pg_is_in_recovery() THEN NULL ELSE (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint END",
            &[],
        ) && !row.is_null(0)
        {
            counters.insert("WAL bytes".into(), row.real(0)?);
        }
        let version = connection.server_version_number()?.unwrap_or(0);
        let checkpoints = if version >= 170_000 {
            "SELECT num_timed + num_requested FROM pg_stat_checkpointer"
        } else {
            "SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter"
        };
        if let Ok(Some(row)) = connection.query_optional(checkpoints, &[]) {
            counters.insert("checkpoints".into(), row.real(0)?);
        }
        Ok(counters)
    }
}
