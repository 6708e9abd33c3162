//! PostgreSQL over a real connection: statements prepared once per connection, values bound in the binary protocol.

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
    pub(crate) fn open(url: &str, shown: &str, application: &str) -> Result<PostgresConnection, DbError> {
        let mut config: postgres::Config = url
            .parse()
            .map_err(|e| DbError::new(ErrorKind::Refused, format!("{shown}: not a PostgreSQL URL ({e})")))?;
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
