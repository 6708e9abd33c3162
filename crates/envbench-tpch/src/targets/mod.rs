//! Query targets: where the 22 queries run. One small trait, one implementation per kind of target (like
//! hyperfine's exporters): embedded DataFusion over generated files, and one server target for PostgreSQL, MariaDB
//! and MySQL, whose differences are one small trait with one implementation per server (`tpch_server.rs`); and one
//! factory, [`open`], that picks the target from what the user wrote (`datafusion` or a server URL). A new target
//! connects, loads, opens sessions, and says whether refresh functions run; a new server is a dialect in
//! envbench-sql, one file implementing `TpchServer` here, and the arm the compiler asks for in `servers.rs`.

pub mod datafusion;
mod local_files;
pub mod mysql_dialect;
mod postgres_tpch;
mod server;
pub mod server_target;
mod servers;
mod tpch_server;

use crate::data::GenerationInfo;
use crate::error::TpchError;
use crate::params::QueryParameters;
use envbench_core::model::redact_secrets;
use envbench_core::sampler::StepObserver;
use envbench_sql::{DatabaseUrl, Dialect};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

pub use self::datafusion::DataFusionTarget;

/// How often a running query looks at the interrupt flag and its deadline.
pub(crate) const INTERRUPT_POLL: Duration = Duration::from_millis(50);
pub use self::server::MARKER_TABLE;
pub use self::server_target::{ServerOptions, ServerTarget};

/// Which kind of target ran the queries; part of the result parameters: `datafusion`, or a server by its dialect's
/// name (`postgres`, `mysql` for MySQL and MariaDB), so a new server names itself here through its row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TargetKind {
    DataFusion,
    Server(Dialect),
}

impl TargetKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TargetKind::DataFusion => "datafusion",
            TargetKind::Server(dialect) => dialect.name(),
        }
    }

    /// The kind a stored result names, `None` for a name no target has.
    pub fn from_name(name: &str) -> Option<TargetKind> {
        let kinds = std::iter::once(TargetKind::DataFusion).chain(Dialect::ALL.map(TargetKind::Server));
        kinds.into_iter().find(|kind| kind.as_str() == name)
    }
}

impl Serialize for TargetKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for TargetKind {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<TargetKind, D::Error> {
        let name = String::deserialize(deserializer)?;
        TargetKind::from_name(&name).ok_or_else(|| {
            serde::de::Error::custom(format!("unknown TPC-H target '{name}': datafusion or a server's dialect name"))
        })
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
    /// One line for people saying what was generated, loaded or reused, and how fast.
    pub summary: String,
    /// How the data files were made, for targets that read generated files.
    pub generation: Option<GenerationInfo>,
}

/// Progress of a load (or of the generation a load needs), in rows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoadProgress {
    pub rows_loaded: u64,
    pub rows_expected: u64,
    /// What is happening, for people: `generating`, `loading into PostgreSQL`, `loading into MariaDB`.
    pub action: &'static str,
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

    /// The complete load of `scale_factor` already in place, found without loading anything (what a fleet's agents
    /// check: their coordinator loaded it). `None` when there is none; targets that read generated files have none.
    fn loaded(&self, _scale_factor: f64) -> Result<Option<LoadInfo>, TpchError> {
        Ok(None)
    }

    /// Take the lock this run holds on the target's data for as long as the target lives, before anything is
    /// generated, loaded or read: exclusive when the data of `scale_factor` must be (re)built (`fresh`, or none that
    /// is complete) or the run `writes` (the refresh functions), shared when it only reads complete data. Refused at
    /// once, naming the holder, while another run holds it in a mode that conflicts. A fleet's agents take none:
    /// their coordinator holds it for the whole fleet.
    fn lock(&mut self, scale_factor: f64, fresh: bool, writes: bool) -> Result<(), TpchError>;

    /// A new session for one stream.
    fn session(&self) -> Result<Box<dyn Session>, TpchError>;

    /// Whether a thread sweep (`--threads 1,2,4`) can run here; `Err` says why not. A server's parallelism is its
    /// own setting, so servers refuse.
    fn thread_sweep_support(&self) -> Result<(), String> {
        Err(format!(
            "--threads with several counts sweeps the embedded engine's threads; {}'s parallelism is the server's own \
             setting (PostgreSQL's max_parallel_workers_per_gather), so give one count",
            self.kind().as_str()
        ))
    }

    /// Run the queries on `threads` threads from now on (the embedded engine's workers and partitions), for a thread
    /// sweep, where [`Target::thread_sweep_support`] allows one.
    fn set_threads(&mut self, _threads: usize) -> Result<(), TpchError> {
        Err(TpchError::BadOptions(self.thread_sweep_support().err().unwrap_or_default()))
    }

    /// Whether RF1/RF2 can run here; `Err` says why not (shown to the user).
    fn refresh_support(&self) -> Result<(), String>;

    /// The text of a query as this target runs it: the tables named as they are found here (qualified with a
    /// server's schema), in the target's dialect.
    fn query_sql(&self, parameters: &QueryParameters) -> String {
        crate::queries::render(parameters)
    }

    /// What [`Target::prepare`] would refuse, checked before anything is created (files in the data directory that
    /// envbench did not make).
    fn check(&self, _scale_factor: f64) -> Result<(), TpchError> {
        Ok(())
    }

    /// Where the target's data lives on this machine, when it knows (a local server's data directory): the storage
    /// the fingerprint describes and the sampler watches.
    fn data_directory(&self) -> Option<&Path> {
        None
    }

    /// Whether the queries run on a database server on this machine, whose CPU is then the run's own.
    fn drives_local_server(&self) -> bool {
        false
    }

    /// What dropping this machine's page cache does not reach, for `--cold` (a server's own buffer cache).
    fn cold_cache_note(&self) -> Option<&'static str> {
        None
    }
}

/// Where the queries run, as the user names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TargetSpec {
    /// Embedded DataFusion over generated Parquet files.
    DataFusion,
    /// A database server, by its URL (parsed once, here): which one is the URL's dialect.
    Server(DatabaseUrl),
}

impl TargetSpec {
    /// `datafusion`, or a server URL. Anything else is refused with what to write.
    pub fn parse(text: &str) -> Result<TargetSpec, TpchError> {
        if text == "datafusion" {
            return Ok(TargetSpec::DataFusion);
        }
        match DatabaseUrl::parse(text) {
            Ok(url) => Ok(TargetSpec::Server(url)),
            Err(_) if !text.contains("://") => Err(TpchError::BadOptions(format!(
                "--target '{}': give datafusion (embedded, the default) or a server's URL: {}",
                redact_secrets(text),
                envbench_sql::url_forms()
            ))),
            Err(e) => Err(TpchError::BadOptions(format!(
                "--target: {}; or give datafusion (embedded, the default)",
                e.message
            ))),
        }
    }
}

/// What opening a target needs.
#[derive(Clone, Debug)]
pub struct OpenOptions {
    /// Where generated data lives (one `sf<SF>` directory per scale factor), for targets that read files.
    pub data_dir: PathBuf,
    /// The server schema for the tables (created when missing): a PostgreSQL schema, a MySQL database; `None` uses the
    /// connection's default.
    pub schema: Option<String>,
    /// Threads for generation, the embedded engine and parallel loads; `None` uses every CPU.
    pub threads: Option<usize>,
}

/// Open the target the user named. A server is connected to here, so an unreachable one is reported before
/// anything runs; files are generated or loaded later, by [`Target::prepare`].
pub fn open(spec: &TargetSpec, options: &OpenOptions) -> Result<Box<dyn Target>, TpchError> {
    Ok(match spec {
        TargetSpec::DataFusion => Box::new(DataFusionTarget::generating(options.data_dir.clone(), options.threads)?),
        TargetSpec::Server(url) => Box::new(ServerTarget::connect(&ServerOptions {
            url: url.clone(),
            schema: options.schema.clone(),
            load_threads: options.threads,
        })?),
    })
}

/// Run `jobs` on up to `threads` connections made by `connect`, each taking the next job until none is left; the
/// first error (or an interrupt) stops the others. The parallel loads of the server targets.
pub(crate) fn parallel<C, J: Send>(
    threads: usize,
    jobs: Vec<J>,
    interrupt: &AtomicBool,
    connect: impl Fn() -> Result<C, TpchError> + Sync,
    work: impl Fn(&mut C, J) -> Result<(), TpchError> + Sync,
) -> Result<(), TpchError> {
    let threads = threads.min(jobs.len()).max(1);
    let queue = std::sync::Mutex::new(jobs.into_iter());
    let first_error: std::sync::Mutex<Option<TpchError>> = std::sync::Mutex::new(None);
    let failed = |error: TpchError| {
        first_error.lock().expect("no panics").get_or_insert(error);
    };
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let mut connection = match connect() {
                    Ok(connection) => connection,
                    Err(e) => return failed(e),
                };
                loop {
                    if interrupt.load(std::sync::atomic::Ordering::SeqCst)
                        || first_error.lock().expect("no panics").is_some()
                    {
                        return;
                    }
                    let Some(job) = queue.lock().expect("no panics").next() else { return };
                    if let Err(e) = work(&mut connection, job) {
                        return failed(e);
                    }
                }
            });
        }
    });
    match first_error.into_inner().expect("no panics") {
        Some(error) => Err(error),
        None => Ok(()),
    }
}
