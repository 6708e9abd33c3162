//! The seam between the store and its SQL backends: values, rows, and the three things a backend does inside a
//! transaction. The store's SQL is written once, with `?` placeholders; each backend binds the values its own way
//! (and PostgreSQL numbers the placeholders).

use crate::error::StoreError;

/// A value bound to or read from a statement. Nullable columns of the schema are all text.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum SqlValue {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
}

impl From<i64> for SqlValue {
    fn from(value: i64) -> SqlValue {
        SqlValue::Int(value)
    }
}

impl From<f64> for SqlValue {
    fn from(value: f64) -> SqlValue {
        SqlValue::Real(value)
    }
}

impl From<&str> for SqlValue {
    fn from(value: &str) -> SqlValue {
        SqlValue::Text(value.to_string())
    }
}

impl From<String> for SqlValue {
    fn from(value: String) -> SqlValue {
        SqlValue::Text(value)
    }
}

impl From<&String> for SqlValue {
    fn from(value: &String) -> SqlValue {
        SqlValue::Text(value.clone())
    }
}

impl<T: Into<SqlValue>> From<Option<T>> for SqlValue {
    fn from(value: Option<T>) -> SqlValue {
        value.map_or(SqlValue::Null, Into::into)
    }
}

/// Values for a statement: `params![a, b, c]`.
macro_rules! params {
    ($($value:expr),* $(,)?) => { &[$($crate::sql::SqlValue::from($value)),*] };
}
pub(crate) use params;

/// One row of a result, read by column position. A value of an unexpected type means a damaged store.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Row(pub Vec<SqlValue>);

impl Row {
    fn value(&self, column: usize) -> Result<&SqlValue, StoreError> {
        self.0.get(column).ok_or_else(|| StoreError::Corrupt(format!("a row without column {column}")))
    }

    pub fn int(&self, column: usize) -> Result<i64, StoreError> {
        match self.value(column)? {
            SqlValue::Int(v) => Ok(*v),
            other => Err(StoreError::Corrupt(format!("column {column} holds {other:?} where a whole number belongs"))),
        }
    }

    pub fn real(&self, column: usize) -> Result<f64, StoreError> {
        match self.value(column)? {
            SqlValue::Real(v) => Ok(*v),
            // SQLite keeps a REAL that is a whole number as an integer when it was written as one.
            SqlValue::Int(v) => Ok(*v as f64),
            other => Err(StoreError::Corrupt(format!("column {column} holds {other:?} where a number belongs"))),
        }
    }

    pub fn text(&self, column: usize) -> Result<String, StoreError> {
        match self.value(column)? {
            SqlValue::Text(v) => Ok(v.clone()),
            other => Err(StoreError::Corrupt(format!("column {column} holds {other:?} where text belongs"))),
        }
    }

    pub fn optional_int(&self, column: usize) -> Result<Option<i64>, StoreError> {
        match self.value(column)? {
            SqlValue::Null => Ok(None),
            _ => self.int(column).map(Some),
        }
    }

    pub fn optional_real(&self, column: usize) -> Result<Option<f64>, StoreError> {
        match self.value(column)? {
            SqlValue::Null => Ok(None),
            _ => self.real(column).map(Some),
        }
    }

    pub fn optional_text(&self, column: usize) -> Result<Option<String>, StoreError> {
        match self.value(column)? {
            SqlValue::Null => Ok(None),
            _ => self.text(column).map(Some),
        }
    }
}

/// Statements inside one transaction of a backend.
pub(crate) trait Sql {
    /// Run a statement; the number of rows it changed.
    fn execute(&mut self, sql: &str, values: &[SqlValue]) -> Result<u64, StoreError>;
    /// Run a query; every row.
    fn query(&mut self, sql: &str, values: &[SqlValue]) -> Result<Vec<Row>, StoreError>;
    /// Run several statements without values (migrations).
    fn batch(&mut self, sql: &str) -> Result<(), StoreError>;
}

impl dyn Sql + '_ {
    /// The first row of a query, if any.
    pub fn query_optional(&mut self, sql: &str, values: &[SqlValue]) -> Result<Option<Row>, StoreError> {
        Ok(self.query(sql, values)?.into_iter().next())
    }

    /// The one row a query must return.
    pub fn query_one(&mut self, sql: &str, values: &[SqlValue]) -> Result<Row, StoreError> {
        self.query_optional(sql, values)?.ok_or_else(|| StoreError::Corrupt(format!("no row from: {sql}")))
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

/// `?` placeholders numbered `$1`, `$2`, ... for PostgreSQL: the one rewrite envbench's connections also use.
pub(crate) use envbench_sql::numbered_placeholders;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered_for_postgres() {
        assert_eq!(numbered_placeholders("SELECT ? WHERE a = ? AND b = ?"), "SELECT $1 WHERE a = $2 AND b = $3");
    }

    #[test]
    fn rows_read_by_type() {
        let row = Row(vec![SqlValue::Int(3), SqlValue::Real(1.5), SqlValue::Text("x".into()), SqlValue::Null]);
        assert_eq!(row.int(0).unwrap(), 3);
        assert_eq!(row.real(0).unwrap(), 3.0);
        assert_eq!(row.real(1).unwrap(), 1.5);
        assert_eq!(row.text(2).unwrap(), "x");
        assert_eq!(row.optional_text(3).unwrap(), None);
        assert!(matches!(row.int(2), Err(StoreError::Corrupt(_))));
        assert!(matches!(row.text(9), Err(StoreError::Corrupt(_))));
    }
}
