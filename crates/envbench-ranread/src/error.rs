//! What can go wrong in a ranread run.

/// What can go wrong; each message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum RanReadError {
    #[error(transparent)]
    Io(#[from] envbench_io::BenchError),
    /// The database said no or could not be reached (the message names it and says what to do).
    #[error("{0}")]
    Sql(#[from] envbench_sql::DbError),
    /// Something of envbench's names exists that envbench did not make: never touched.
    #[error("{0}")]
    Foreign(String),
    /// Another envbench run holds the database file or table (the message names it).
    #[error("{0}")]
    Busy(String),
    /// The work could not be done (the message says why).
    #[error("{0}")]
    Failed(String),
    #[error("'{url}' is not a PostgreSQL URL ({reason}); write it as postgres://user@host:5432/database")]
    BadDatabaseUrl { url: String, reason: String },
    #[error("{0}")]
    BadInput(String),
    #[error("interrupted")]
    Interrupted,
}
