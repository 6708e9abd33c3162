//! The PostgreSQL backend: a shared store for a team, with the same tables, append-only rules and schema versions as
//! the SQLite file.
//!
//! The store lives in the connection's current schema (the first existing schema of `search_path`, `public` by
//! default), so one database can hold several stores: `?options=-c%20search_path%3Dmyschema` in the URL picks one.
//! The table `envbench_store` marks the schema as an envbench store and holds its schema version. Migrations run in
//! one transaction under an advisory lock per schema, so envbench processes starting together migrate once.

use crate::error::StoreError;
use crate::liveness::{self, Liveness, RunLock};
use crate::schema::{APPLICATION_ID, Dialect, LATEST_VERSION, TABLES};
use crate::sql::{Row, Sql, SqlValue, numbered_placeholders, params};
use crate::store::{Backend, SqlStore};
use envbench_core::model::{error_chain, postgres_advice, redact_secrets};
use postgres::types::{ToSql, Type};
use postgres::{Client, NoTls};
use std::cell::RefCell;

/// The name envbench writes into `envbench_store.application`.
const APPLICATION: &str = "envbench";

/// The connection to a PostgreSQL store.
pub struct PostgresBackend {
    /// Reads need a mutable client too; the store is used from one thread at a time (like the SQLite one).
    client: RefCell<Client>,
    /// The URL connected to (with its password): runs' locks are held on sessions of their own.
    url: String,
}

/// A results store in a PostgreSQL schema.
pub type PostgresStore = SqlStore<PostgresBackend>;

impl SqlStore<PostgresBackend> {
    /// Connect to `url` (`postgres://user@host:5432/database`) and, when `create`, create the store in the current
    /// schema or bring its schema up to date. Refuses a schema holding tables envbench did not create, and a store
    /// written by a newer envbench.
    pub fn open(url: &str, create: bool) -> Result<PostgresStore, StoreError> {
        let location = redact_secrets(url);
        let client = Client::connect(url, NoTls).map_err(|e| match e.as_db_error() {
            // The server answered and said no (unknown database, wrong password): not a network outage.
            Some(db) => StoreError::Refused {
                location: location.clone(),
                reason: postgres_advice(Some(db.code().code()), db.message(), "the store URL"),
            },
            None => StoreError::Unreachable { location: location.clone(), reason: redact_secrets(&error_chain(&e)) },
        })?;
        SqlStore::prepare(PostgresBackend { client: RefCell::new(client), url: url.to_string() }, location, create)
    }
}

impl Backend for PostgresBackend {
    const DIALECT: Dialect = Dialect::Postgres;

    fn connection<'a>(&'a self, location: &'a str) -> Box<dyn Sql + 'a> {
        Box::new(PostgresSql { client: self.client.borrow_mut(), location })
    }

    fn schema_version(sql: &mut dyn Sql, location: &str) -> Result<i64, StoreError> {
        let schema = sql.query_one("SELECT current_schema()::text", &[])?.optional_text(0)?.ok_or_else(|| {
            StoreError::CannotCreate {
                location: location.to_string(),
                reason: "no schema of search_path exists".into(),
            }
        })?;
        let names: Vec<String> = TABLES.iter().map(|t| format!("'{t}'")).collect();
        let present: Vec<String> = sql
            .query(
                &format!(
                    "SELECT table_name::text FROM information_schema.tables WHERE table_schema = ? \
                     AND table_name IN ({}) ORDER BY table_name",
                    names.join(", ")
                ),
                params![schema.as_str()],
            )?
            .iter()
            .map(|row| row.text(0))
            .collect::<Result<_, _>>()?;
        if present.is_empty() {
            return Ok(0);
        }
        let foreign = || StoreError::ForeignTables {
            location: location.to_string(),
            schema: schema.clone(),
            tables: present.join(", "),
        };
        if !present.iter().any(|t| t == "envbench_store") {
            return Err(foreign());
        }
        let marker = sql.query("SELECT application, version FROM envbench_store", &[]).map_err(|_| foreign())?;
        let [row] = marker.as_slice() else { return Err(foreign()) };
        let (application, version) = (row.text(0).map_err(|_| foreign())?, row.int(1).map_err(|_| foreign())?);
        if application != APPLICATION {
            return Err(foreign());
        }
        if version > LATEST_VERSION {
            return Err(StoreError::NewerSchema {
                location: location.to_string(),
                found: version,
                known: LATEST_VERSION,
            });
        }
        Ok(version)
    }

    fn lock_schema(sql: &mut dyn Sql) -> Result<(), StoreError> {
        // Concurrent creators wait here for each other (the lock ends with the transaction); the key is per schema.
        sql.execute(
            &format!("SELECT pg_advisory_xact_lock({}, hashtext(current_schema()::text))", APPLICATION_ID as i32),
            &[],
        )?;
        Ok(())
    }

    fn set_schema_version(sql: &mut dyn Sql, version: i64) -> Result<(), StoreError> {
        if sql.execute("UPDATE envbench_store SET version = ?", params![version])? == 0 {
            sql.execute(
                "INSERT INTO envbench_store (application, version) VALUES (?, ?)",
                params![APPLICATION, version],
            )?;
        }
        Ok(())
    }

    fn lock_run(sql: &mut dyn Sql, uuid: &str) -> Result<(), StoreError> {
        // Two pushes of the same run racing: the second waits here for the first to commit, then sees the run.
        sql.execute(&format!("SELECT pg_advisory_xact_lock({}, hashtext(?))", APPLICATION_ID as i32), params![uuid])?;
        Ok(())
    }

    fn hold_run(&self, uuid: &str, _command: &str) -> Option<RunLock> {
        liveness::take_server(&self.url, &self.schema()?, uuid)
    }

    fn run_liveness(&self, uuid: &str) -> Liveness {
        match self.schema() {
            Some(schema) => liveness::probe_server(&self.url, &schema, uuid),
            None => Liveness::Unknown,
        }
    }
}

impl PostgresBackend {
    /// The schema the store is in: a run's lock is keyed by it, so stores in two schemas never share one.
    fn schema(&self) -> Option<String> {
        let mut sql = self.connection("");
        sql.query_one("SELECT current_schema()::text", &[]).ok()?.optional_text(0).ok()?
    }
}

/// Statements on a PostgreSQL connection.
struct PostgresSql<'a> {
    client: std::cell::RefMut<'a, Client>,
    location: &'a str,
}

/// NULL for a column of any type (the driver checks a typed `None` against the column's type).
#[derive(Debug)]
struct Null;

impl ToSql for Null {
    fn to_sql(
        &self,
        _: &postgres::types::Type,
        _: &mut bytes::BytesMut,
    ) -> Result<postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>> {
        Ok(postgres::types::IsNull::Yes)
    }

    fn accepts(_: &postgres::types::Type) -> bool {
        true
    }

    postgres::types::to_sql_checked!();
}

/// Values as the driver binds them.
fn bind(values: &[SqlValue]) -> Vec<Box<dyn ToSql + Sync>> {
    values
        .iter()
        .map(|value| -> Box<dyn ToSql + Sync> {
            match value {
                SqlValue::Null => Box::new(Null),
                SqlValue::Int(v) => Box::new(*v),
                SqlValue::Real(v) => Box::new(*v),
                SqlValue::Text(v) => Box::new(v.clone()),
            }
        })
        .collect()
}

impl Sql for PostgresSql<'_> {
    fn execute(&mut self, sql: &str, values: &[SqlValue]) -> Result<u64, StoreError> {
        let bound = bind(values);
        let refs: Vec<&(dyn ToSql + Sync)> = bound.iter().map(|b| b.as_ref()).collect();
        self.client.execute(numbered_placeholders(sql).as_str(), &refs).map_err(|e| classify(self.location, e))
    }

    fn query(&mut self, sql: &str, values: &[SqlValue]) -> Result<Vec<Row>, StoreError> {
        let bound = bind(values);
        let refs: Vec<&(dyn ToSql + Sync)> = bound.iter().map(|b| b.as_ref()).collect();
        let rows =
            self.client.query(numbered_placeholders(sql).as_str(), &refs).map_err(|e| classify(self.location, e))?;
        rows.iter()
            .map(|row| (0..row.len()).map(|column| cell(row, column)).collect::<Result<_, _>>().map(Row))
            .collect()
    }

    fn batch(&mut self, sql: &str) -> Result<(), StoreError> {
        self.client.batch_execute(sql).map_err(|e| classify(self.location, e))
    }
}

/// One value of a row, by its column's type.
fn cell(row: &postgres::Row, column: usize) -> Result<SqlValue, StoreError> {
    let ty = row.columns()[column].type_().clone();
    let corrupt = |e: postgres::Error| StoreError::Corrupt(format!("column {column}: {}", error_chain(&e)));
    Ok(match ty {
        Type::INT8 => row.try_get::<_, Option<i64>>(column).map_err(corrupt)?.map_or(SqlValue::Null, SqlValue::Int),
        Type::INT4 => {
            row.try_get::<_, Option<i32>>(column).map_err(corrupt)?.map_or(SqlValue::Null, |v| SqlValue::Int(v.into()))
        }
        Type::FLOAT8 => row.try_get::<_, Option<f64>>(column).map_err(corrupt)?.map_or(SqlValue::Null, SqlValue::Real),
        Type::TEXT | Type::VARCHAR | Type::NAME | Type::BPCHAR => {
            row.try_get::<_, Option<String>>(column).map_err(corrupt)?.map_or(SqlValue::Null, SqlValue::Text)
        }
        other => return Err(StoreError::Corrupt(format!("column {column} of type {other}"))),
    })
}

/// A driver error as a store error: a lost or refused connection means the store is unreachable (the run goes to
/// the local store); an error the server sent keeps its message, with advice by SQLSTATE.
fn classify(location: &str, error: postgres::Error) -> StoreError {
    let location = location.to_string();
    match error.as_db_error() {
        Some(db) => StoreError::Database {
            location,
            message: postgres_advice(Some(db.code().code()), db.message(), "the store URL"),
        },
        None => StoreError::Unreachable { location, reason: redact_secrets(&error_chain(&error)) },
    }
}
