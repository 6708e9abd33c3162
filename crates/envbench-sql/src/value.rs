//! The values bound to and read from statements, and the rows they come back in.

use crate::error::DbError;

/// A value bound to or read from a statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
}

impl From<i64> for Value {
    fn from(value: i64) -> Value {
        Value::Int(value)
    }
}

impl From<i32> for Value {
    fn from(value: i32) -> Value {
        Value::Int(value.into())
    }
}

impl From<u32> for Value {
    fn from(value: u32) -> Value {
        Value::Int(value.into())
    }
}

impl From<f64> for Value {
    fn from(value: f64) -> Value {
        Value::Real(value)
    }
}

impl From<&str> for Value {
    fn from(value: &str) -> Value {
        Value::Text(value.to_string())
    }
}

impl From<String> for Value {
    fn from(value: String) -> Value {
        Value::Text(value)
    }
}

impl From<&String> for Value {
    fn from(value: &String) -> Value {
        Value::Text(value.clone())
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(value: Option<T>) -> Value {
        value.map_or(Value::Null, Into::into)
    }
}

/// Values for a statement, each converted to a [`Value`]: `params![id, name, maybe_text]`.
#[macro_export]
macro_rules! params {
    ($($value:expr),* $(,)?) => { &[$($crate::Value::from($value)),*] };
}

/// One row of a result, read by column position.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Row(pub Vec<Value>);

impl Row {
    fn value(&self, column: usize) -> Result<&Value, DbError> {
        self.0.get(column).ok_or_else(|| DbError::other(format!("the row has no column {column}")))
    }

    /// A whole number (text holding one is read too: MySQL sends some numbers as text).
    pub fn int(&self, column: usize) -> Result<i64, DbError> {
        match self.value(column)? {
            Value::Int(v) => Ok(*v),
            Value::Real(v) if v.fract() == 0.0 => Ok(*v as i64),
            Value::Text(t) => {
                t.trim().parse().map_err(|_| DbError::other(format!("column {column}: '{t}' is no number")))
            }
            other => Err(DbError::other(format!("column {column} holds {other:?} where a whole number belongs"))),
        }
    }

    /// A number.
    pub fn real(&self, column: usize) -> Result<f64, DbError> {
        match self.value(column)? {
            Value::Real(v) => Ok(*v),
            Value::Int(v) => Ok(*v as f64),
            Value::Text(t) => {
                t.trim().parse().map_err(|_| DbError::other(format!("column {column}: '{t}' is no number")))
            }
            Value::Null => Err(DbError::other(format!("column {column} is NULL where a number belongs"))),
        }
    }

    /// Text (numbers as written).
    pub fn text(&self, column: usize) -> Result<String, DbError> {
        match self.value(column)? {
            Value::Text(t) => Ok(t.clone()),
            Value::Int(v) => Ok(v.to_string()),
            Value::Real(v) => Ok(v.to_string()),
            Value::Null => Ok(String::new()),
        }
    }

    pub fn is_null(&self, column: usize) -> bool {
        matches!(self.0.get(column), Some(Value::Null) | None)
    }

    /// A whole number, or `None` for NULL.
    pub fn optional_int(&self, column: usize) -> Result<Option<i64>, DbError> {
        if matches!(self.value(column)?, Value::Null) { Ok(None) } else { self.int(column).map(Some) }
    }

    /// A number, or `None` for NULL.
    pub fn optional_real(&self, column: usize) -> Result<Option<f64>, DbError> {
        if matches!(self.value(column)?, Value::Null) { Ok(None) } else { self.real(column).map(Some) }
    }

    /// Text, or `None` for NULL.
    pub fn optional_text(&self, column: usize) -> Result<Option<String>, DbError> {
        if matches!(self.value(column)?, Value::Null) { Ok(None) } else { self.text(column).map(Some) }
    }
}
