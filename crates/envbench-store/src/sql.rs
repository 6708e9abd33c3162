//! The store's statements on its connection ([`envbench_sql::Connection`], the one database layer envbench has): the
//! store's SQL is written once, with `?` placeholders, and every database error becomes the store error that says what
//! to do. Values and rows are envbench-sql's; a value the store cannot read as its schema says means a damaged store.

use crate::error::StoreError;
use envbench_sql::{Connection, DbError, ErrorKind};
use std::cell::RefMut;

pub(crate) use envbench_sql::{Row, Value as SqlValue, params};

/// Statements on the store's one connection, used from one thread at a time.
pub(crate) struct Sql<'a> {
    connection: RefMut<'a, Box<dyn Connection>>,
    /// The store for people: a path, or the URL without its password.
    location: &'a str,
    /// How the connection names the store at the start of its messages.
    shown: &'a str,
}

impl<'a> Sql<'a> {
    pub fn new(connection: RefMut<'a, Box<dyn Connection>>, location: &'a str, shown: &'a str) -> Sql<'a> {
        Sql { connection, location, shown }
    }

    /// Run a statement; the number of rows it changed.
    pub fn execute(&mut self, sql: &str, values: &[SqlValue]) -> Result<u64, StoreError> {
        self.connection.execute(sql, values).map_err(|e| store_error(self.location, self.shown, e))
    }

    /// Run a query; every row.
    pub fn query(&mut self, sql: &str, values: &[SqlValue]) -> Result<Vec<Row>, StoreError> {
        self.connection.query(sql, values).map_err(|e| store_error(self.location, self.shown, e))
    }

    /// Run several statements without values (migrations, transaction control).
    pub fn batch(&mut self, sql: &str) -> Result<(), StoreError> {
        self.connection.batch(sql).map_err(|e| store_error(self.location, self.shown, e))
    }

    /// The first row of a query, if any.
    pub fn query_optional(&mut self, sql: &str, values: &[SqlValue]) -> Result<Option<Row>, StoreError> {
        Ok(self.query(sql, values)?.into_iter().next())
    }

    /// The one row a query must return.
    pub fn query_one(&mut self, sql: &str, values: &[SqlValue]) -> Result<Row, StoreError> {
        self.query_optional(sql, values)?.ok_or_else(|| StoreError::Corrupt(format!("no row from: {sql}")))
    }

    /// A query for rows whose key is one of `keys`: `query` holds `{keys}` where the placeholders go, and runs once for
    /// each [`KEYS_PER_QUERY`] keys (a query for each key made a listing of 100,000 runs 100,001 queries).
    pub fn query_in(&mut self, query: &str, keys: &[SqlValue]) -> Result<Vec<Row>, StoreError> {
        let mut rows = Vec::new();
        for chunk in keys.chunks(KEYS_PER_QUERY) {
            rows.extend(self.query(&query.replace("{keys}", &vec!["?"; chunk.len()].join(", ")), chunk)?);
        }
        Ok(rows)
    }

    /// Insert many rows of the same columns, as few statements as the placeholder limit allows.
    pub fn insert_rows(&mut self, table: &str, columns: &[&str], rows: &[Vec<SqlValue>]) -> Result<(), StoreError> {
        // Both SQLite (32766) and PostgreSQL (65535) take far more placeholders than this.
        const MAX_VALUES_PER_STATEMENT: usize = 30_000;
        if rows.is_empty() {
            return Ok(());
        }
        let per_statement = (MAX_VALUES_PER_STATEMENT / columns.len()).max(1);
        let row_placeholders = format!("({})", vec!["?"; columns.len()].join(", "));
        for chunk in rows.chunks(per_statement) {
            let sql = format!(
                "INSERT INTO {table} ({}) VALUES {}",
                columns.join(", "),
                vec![row_placeholders.as_str(); chunk.len()].join(", ")
            );
            let values: Vec<SqlValue> = chunk.iter().flat_map(|row| row.iter().cloned()).collect();
            self.execute(&sql, &values)?;
        }
        Ok(())
    }
}

/// Keys one [`Sql::query_in`] statement takes (a placeholder each: far under SQLite's 32,766 and PostgreSQL's 65,535).
const KEYS_PER_QUERY: usize = 500;

/// A database error as the store error that says what to do: a server that cannot be reached sends the run to the
/// local store; a busy database is a store locked by another process; a file that is no database, or a damaged one,
/// is named as such. `shown` is how the connection named the store at the start of the message.
pub(crate) fn store_error(location: &str, shown: &str, error: DbError) -> StoreError {
    let message = error.detail(shown).to_string();
    let location = location.to_string();
    match error.kind {
        ErrorKind::Unreachable => StoreError::Unreachable { location, reason: message },
        ErrorKind::Retry(_) => StoreError::Locked(location),
        ErrorKind::NotADatabase => StoreError::NotAStore(location),
        ErrorKind::Corrupt => StoreError::Corrupt(message),
        ErrorKind::Refused | ErrorKind::Cancelled | ErrorKind::Other => StoreError::Database { location, message },
    }
}

/// A value read from a row that is not what the store's schema says: the store is damaged.
impl From<DbError> for StoreError {
    fn from(error: DbError) -> StoreError {
        StoreError::Corrupt(error.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_errors_become_store_errors() {
        let busy = DbError::new(ErrorKind::Retry(envbench_sql::Conflict::Busy), "/s.db: the database is busy");
        assert!(matches!(store_error("/s.db", "/s.db", busy), StoreError::Locked(l) if l == "/s.db"));
        let other = DbError::other("/s.db: no such table: runs");
        assert!(matches!(
            store_error("/s.db", "/s.db", other),
            StoreError::Database { message, .. } if message == "no such table: runs"
        ));
        let damaged = Row(vec![SqlValue::Text("x".into())]).int(0).unwrap_err();
        assert!(matches!(StoreError::from(damaged), StoreError::Corrupt(_)));
    }
}
