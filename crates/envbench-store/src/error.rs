use std::path::PathBuf;

/// What can go wrong with a store; every message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{0}: not an envbench results store; point --store (or ENVBENCH_STORE) at an envbench store or a new file")]
    NotAStore(PathBuf),
    #[error(
        "{path}: written by a newer envbench (schema version {found}, this envbench knows up to {known}); \
         upgrade envbench to read it"
    )]
    NewerSchema { path: PathBuf, found: i64, known: i64 },
    #[error("{0}: the store is locked by another envbench process; try again when it has finished")]
    Locked(PathBuf),
    #[error("{0}: no results store yet; run a workload (e.g. `envbench sysinfo --save`) to create it")]
    Missing(PathBuf),
    #[error("{path}: cannot create the results store ({reason}); choose a writable location with --store")]
    CannotCreate { path: PathBuf, reason: String },
    #[error("no run matches '{0}'; `envbench results list` shows the runs")]
    NoSuchRun(String),
    #[error("'{prefix}' matches {count} runs; give more characters of the run id")]
    AmbiguousRun { prefix: String, count: usize },
    #[error("run {0} has already ended; a run's status is set once")]
    RunAlreadyEnded(String),
    #[error("{0}: PostgreSQL stores are not available in this build; use a SQLite file path with --store")]
    BackendUnavailable(String),
    #[error("the results store is damaged ({0}); keep a copy of the file and report this")]
    Corrupt(String),
    #[error("results store error: {0}")]
    Sqlite(#[from] rusqlite::Error),
}
