//! What a capture holds once read: events in the order the server logged them, each in one session at one moment.

use serde::Serialize;

/// One thing a session did, at `at` microseconds after the Unix epoch (as the log's clock read it).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Event {
    pub at: i64,
    /// The session, by the log's own key: PostgreSQL's session id, MariaDB's connection id.
    pub session: String,
    /// Where in the log the event starts, counted from 1, for messages.
    pub line: u64,
    pub kind: EventKind,
}

/// What a session did.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EventKind {
    /// The session connected as `user` to `database` (what the log names).
    Connect { user: Option<String>, database: Option<String> },
    /// A statement the client sent.
    Statement(Statement),
    /// The session's previous statement took `us` microseconds (PostgreSQL's `duration:` logged after its
    /// statement when both `log_statement` and `log_min_duration_statement` are on).
    Duration { us: u64 },
    /// The session's default database changed (MySQL's `Init DB`, or `use` in the slow log).
    UseDatabase { database: String },
    /// The session ended.
    Disconnect,
    /// Something the client sent that cannot be replayed, and why: counted, never dropped in silence.
    Skipped(Skip),
}

/// A statement as captured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Statement {
    pub sql: String,
    /// The bound values of an extended-protocol execute (`$1`, `$2`...), as text; `None` is SQL NULL. Empty for a
    /// simple query.
    pub parameters: Vec<Option<String>>,
    /// Sent through the extended protocol (parse, bind, execute) rather than as a simple query.
    pub extended: bool,
    /// How long the server took, in microseconds, where the log says (`log_min_duration_statement = 0`, the slow
    /// log's `Query_time`).
    pub duration_us: Option<u64>,
    /// Who sent it and in which database, where the log line says.
    pub user: Option<String>,
    pub database: Option<String>,
}

/// A statement or line the capture holds but a replay cannot send.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Skip {
    /// Why, in a few words that group alike skips: `COPY FROM STDIN: the rows are not in the log`.
    pub reason: String,
    /// The statement or line, shortened.
    pub text: String,
}

/// Why a capture cannot be read on.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error(
        "{path}: not a log envbench reads ({what}). Give a PostgreSQL csvlog, jsonlog or stderr log (with \
         log_line_prefix = '%m|%u|%d|%c|'), or a MariaDB/MySQL general or slow query log written to a file; \
         docs/replay.md says which settings make one"
    )]
    UnknownFormat { path: String, what: String },
    #[error("{path}, line {line}: {what}")]
    Malformed { path: String, line: u64, what: String },
}

/// `text` cut to about `limit` characters for a message, on a character boundary.
pub(crate) fn shortened(text: &str, limit: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= limit { flat } else { flat.chars().take(limit - 1).chain(['…']).collect() }
}
