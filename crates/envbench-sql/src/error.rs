//! Database errors, sorted the way a workload must treat them.

use envbench_core::model::redact_secrets;

/// How a workload must treat an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Deadlock, serialization failure, lock wait timeout, busy database: run the transaction again (and count it,
    /// by its [`Conflict`]).
    Retry(Conflict),
    /// The server cannot be reached, or the connection was lost.
    Unreachable,
    /// The server answered and said no: unknown database, wrong password, missing privilege, a read-only file.
    Refused,
    /// The statement was cancelled: by its statement timeout, or by a cancel request (Ctrl-C).
    Cancelled,
    /// The file is not a database of this kind (SQLite's "file is not a database").
    NotADatabase,
    /// The database says its own file is damaged.
    Corrupt,
    /// Anything else: a bug, a full disk, a constraint.
    Other,
}

/// Why a transaction that may succeed when run again failed, as pgbench's `--failures-detailed` tells them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Conflict {
    /// It could not be serialized with a concurrent one (PostgreSQL's 40001, MariaDB's "record has changed").
    Serialization,
    /// It was chosen as a deadlock's victim.
    Deadlock,
    /// It waited for a lock longer than the server lets it (MySQL's lock wait timeout, PostgreSQL's lock_timeout).
    LockTimeout,
    /// The database was busy with another writer (SQLite's busy timeout).
    Busy,
}

impl ErrorKind {
    /// Every kind, so a count by kind can start each at 0 (a dashboard's series exists before the first error).
    pub const ALL: [ErrorKind; 10] = [
        ErrorKind::Retry(Conflict::Serialization),
        ErrorKind::Retry(Conflict::Deadlock),
        ErrorKind::Retry(Conflict::LockTimeout),
        ErrorKind::Retry(Conflict::Busy),
        ErrorKind::Unreachable,
        ErrorKind::Refused,
        ErrorKind::Cancelled,
        ErrorKind::NotADatabase,
        ErrorKind::Corrupt,
        ErrorKind::Other,
    ];

    /// The kind in a word, as failures are counted by it: `serialization`, `deadlock`, `lock-timeout`, `busy`, or
    /// what kept the transaction from running (`cancelled`, `other`...).
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Retry(Conflict::Serialization) => "serialization",
            ErrorKind::Retry(Conflict::Deadlock) => "deadlock",
            ErrorKind::Retry(Conflict::LockTimeout) => "lock-timeout",
            ErrorKind::Retry(Conflict::Busy) => "busy",
            ErrorKind::Unreachable => "unreachable",
            ErrorKind::Refused => "refused",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::NotADatabase => "not-a-database",
            ErrorKind::Corrupt => "corrupt",
            ErrorKind::Other => "other",
        }
    }
}

/// A database error, with its kind and a message that says what to do (no password in it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DbError {
    pub kind: ErrorKind,
    pub message: String,
}

impl DbError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> DbError {
        DbError { kind, message: redact_secrets(&message.into()) }
    }

    pub fn other(message: impl Into<String>) -> DbError {
        DbError::new(ErrorKind::Other, message)
    }

    pub fn is_retry(&self) -> bool {
        matches!(self.kind, ErrorKind::Retry(_))
    }

    /// The message without the database it names first (`place: ...`), for callers that name the place themselves.
    pub fn detail(&self, place: &str) -> &str {
        self.message.strip_prefix(place).and_then(|rest| rest.strip_prefix(": ")).unwrap_or(&self.message)
    }
}

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DbError {}
