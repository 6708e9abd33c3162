//! Query targets: where the 22 queries run. One small trait, one file per target (like hyperfine's exporters), so
//! MySQL/MariaDB is one more file: connect, load, open sessions, and say whether refresh functions run.

pub mod datafusion;
pub mod postgres;

use crate::TpchError;
use envbench_core::sampler::StepObserver;
use serde::{Deserialize, Serialize};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

pub use self::datafusion::DataFusionTarget;

/// How often a running query looks at the interrupt flag and its deadline.
pub(crate) const INTERRUPT_POLL: Duration = Duration::from_millis(50);
pub use self::postgres::{PostgresOptions, PostgresTarget};

/// Which kind of target ran the queries; part of the result parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    DataFusion,
    Postgres,
}

impl TargetKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TargetKind::DataFusion => "datafusion",
            TargetKind::Postgres => "postgres",
        }
    }
}

/// How a target got its data, for the user and the outcome.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoadInfo {
    /// True when data already in place was used as it was.
    pub reused: bool,
    /// Rows per table as the target sees them.
    pub rows: std::collections::BTreeMap<String, u64>,
    /// Seconds spent loading (0 when reused).
    pub load_seconds: f64,
    /// Free text such as the server version.
    pub details: String,
}

/// Progress of a load, in rows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoadProgress {
    pub rows_loaded: u64,
    pub rows_expected: u64,
}

/// A query's answer as text, one string per value (numbers in their decimal form), in the order returned.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct QueryAnswer {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// Why a query produced no answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[serde(rename_all = "snake_case", tag = "kind", content = "message")]
pub enum QueryFailure {
    #[error("timed out")]
    TimedOut,
    #[error("cancelled")]
    Cancelled,
    #[error("{0}")]
    Error(String),
}

/// One stream's connection to a target. Sessions run on their own threads, one per stream.
pub trait Session: Send {
    /// Run one statement and return its rows. Gives up after `timeout` and when `interrupt` becomes true.
    fn query(
        &mut self,
        sql: &str,
        timeout: Option<Duration>,
        interrupt: &AtomicBool,
    ) -> Result<QueryAnswer, QueryFailure>;

    /// Run refresh function 1 (insert new orders and their lineitems) for one update set.
    fn refresh_insert(&mut self, update_set: &crate::refresh::UpdateSet) -> Result<(), QueryFailure>;

    /// Run refresh function 2 (delete orders and their lineitems) for one update set.
    fn refresh_delete(&mut self, update_set: &crate::refresh::UpdateSet) -> Result<(), QueryFailure>;
}

/// A place the queries run.
pub trait Target: Send + Sync {
    fn kind(&self) -> TargetKind;

    /// Make the data of a scale factor available to the target (register generated files, or create tables and load
    /// them unless a matching load is in place). `fresh` reloads.
    fn prepare(
        &mut self,
        scale_factor: f64,
        fresh: bool,
        interrupt: &AtomicBool,
        observer: &dyn StepObserver,
        progress: &(dyn Fn(LoadProgress) + Sync),
    ) -> Result<LoadInfo, TpchError>;

    /// A new session for one stream.
    fn session(&self) -> Result<Box<dyn Session>, TpchError>;

    /// Whether RF1/RF2 can run here; `Err` says why not (shown to the user).
    fn refresh_support(&self) -> Result<(), String>;

    /// Rewrite the portable query text for this target's dialect, when it needs it.
    fn adapt_sql(&self, sql: String) -> String {
        sql
    }
}
