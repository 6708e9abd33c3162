//! Why an OLTP run could not do its work ([`OltpError`]), and where its tables are, for messages ([`place`]).

use crate::profile::Profile;
use envbench_core::workload::WorkloadError;
use envbench_sql::{DatabaseUrl, DbError, ErrorKind, Namespace};

/// Why an OLTP run could not do its work.
#[derive(Clone, Debug, PartialEq)]
pub enum OltpError {
    /// The arguments are wrong.
    BadInput(String),
    /// The database said no or could not be reached (the message says which and what to do).
    Database(DbError),
    /// Relations of the profile's names exist that envbench did not make.
    Foreign(String),
    /// Not enough free space for the load.
    NoSpace(String),
    /// Another envbench run holds the tables (the message names it).
    Busy(String),
    /// The user stopped the run.
    Interrupted,
    Other(String),
}

impl OltpError {
    /// The refusal for relations envbench did not make in `place`, naming each and its kind.
    pub fn foreign(place: &str, profile: Profile, relations: &[String]) -> OltpError {
        OltpError::Foreign(format!(
            "{place}: {} bear the names of envbench's {} tables{} but envbench did not make them (its {} marker, \
             with the signed row envbench gives it, says which it made{}; a copied table of that name, or one an \
             envbench before 2026-12 made, proves nothing); envbench never creates, drops or alters anything beside \
             what it made. Use another schema or database (or SQLite directory), or drop them yourself if they are \
             expendable",
            relations.join(", "),
            profile.name(),
            if profile == Profile::Tpcc { " and routines" } else { "" },
            profile.marker_table(),
            if profile == Profile::Tpcc { ", and a comment on each routine it made" } else { "" }
        ))
    }
}

/// Where a run's tables are, for messages: the database and its schema (MariaDB/MySQL: the database they are in).
pub fn place(url: &DatabaseUrl, namespace: &Namespace) -> String {
    let ops = url.dialect().ops();
    match ops.named_namespaces {
        true => format!("{}, {} {}", url.shown(), ops.namespace_word, namespace.quoted()),
        false => url.shown(),
    }
}

impl std::fmt::Display for OltpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OltpError::BadInput(m)
            | OltpError::Foreign(m)
            | OltpError::NoSpace(m)
            | OltpError::Busy(m)
            | OltpError::Other(m) => f.write_str(m),
            OltpError::Database(e) => f.write_str(&e.message),
            OltpError::Interrupted => f.write_str("interrupted by a signal (SIGINT, SIGTERM, SIGHUP or SIGQUIT)"),
        }
    }
}

impl std::error::Error for OltpError {}

impl From<OltpError> for WorkloadError {
    fn from(error: OltpError) -> WorkloadError {
        match error {
            OltpError::Interrupted => WorkloadError::interrupted(),
            OltpError::BadInput(_) | OltpError::Foreign(_) | OltpError::NoSpace(_) => {
                WorkloadError::usage(error.to_string())
            }
            other => WorkloadError::failure(other.to_string()),
        }
    }
}

impl From<DbError> for OltpError {
    fn from(error: DbError) -> OltpError {
        OltpError::Database(error)
    }
}

impl OltpError {
    /// True when the user must fix something before the run can work (exit status 2 when found while planning).
    pub fn is_users_to_fix(&self) -> bool {
        match self {
            OltpError::BadInput(_) | OltpError::Foreign(_) | OltpError::NoSpace(_) => true,
            OltpError::Database(e) => matches!(e.kind, ErrorKind::Refused | ErrorKind::Unreachable),
            _ => false,
        }
    }
}
