/// What can go wrong with a store; every message says what to do. `location` is the file path, or the PostgreSQL
/// URL without its password.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{0}: not an envbench results store; point --store (or ENVBENCH_STORE) at an envbench store or a new file")]
    NotAStore(String),
    #[error(
        "{location}: schema '{schema}' already holds tables that envbench did not create ({tables}); point --store at \
         an empty database or schema, e.g. add ?options=-c%20search_path%3Denvbench to the URL after \
         `CREATE SCHEMA envbench`"
    )]
    ForeignTables { location: String, schema: String, tables: String },
    #[error(
        "{location}: written by a newer envbench (schema version {found}, this envbench knows up to {known}); \
         upgrade envbench to read it"
    )]
    NewerSchema { location: String, found: i64, known: i64 },
    #[error("{0}: the store is locked by another envbench process; try again when it has finished")]
    Locked(String),
    #[error(
        "{location}: {what}, not a results store file; point --store (or ENVBENCH_STORE) at a file such as ./results.db"
    )]
    NotAFile { location: String, what: &'static str },
    #[error("{0}: no results store yet; run a workload (e.g. `envbench sysinfo --save`) to create it")]
    Missing(String),
    #[error("{location}: the file system holding the results store is read-only; {what_to_do}")]
    ReadOnlyFileSystem { location: String, what_to_do: &'static str },
    #[error("{location}: cannot create the results store ({reason}); choose a writable location with --store")]
    CannotCreate { location: String, reason: String },
    #[error(
        "{location}: cannot connect to the PostgreSQL store ({reason}); check the URL, that the server is running and \
         that the user may log in"
    )]
    Unreachable { location: String, reason: String },
    #[error("{location}: the PostgreSQL server refused the store's connection: {reason}")]
    Refused { location: String, reason: String },
    #[error(
        "'{given}' is not a store envbench can use: the {scheme}:// scheme is not supported. Give a SQLite file path \
         (e.g. ./results.db) or a PostgreSQL URL (postgres://user@host:5432/database or postgresql://...)"
    )]
    UnsupportedScheme { given: String, scheme: String },
    #[error(
        "'{given}' looks like a database URL without the // after '{scheme}:'; write {scheme}://user@host:5432/database \
         (or ./{given} for a file of that name)"
    )]
    MalformedUrl { given: String, scheme: String },
    #[error("no run matches '{0}'; `envbench results list` shows the runs")]
    NoSuchRun(String),
    #[error("'{prefix}' matches {count} runs; give more characters of the run id")]
    AmbiguousRun { prefix: String, count: usize },
    #[error("run {0} has already ended; a run's status is set once")]
    RunAlreadyEnded(String),
    #[error("the results store is damaged ({0}); keep a copy of the file and report this")]
    Corrupt(String),
    #[error("{location}: results store error: {message}")]
    Database { location: String, message: String },
}

impl StoreError {
    /// True when a shared store cannot be reached right now (refused, timed out, connection lost): the run is kept
    /// in the local store instead, to be pushed later.
    pub fn is_unreachable(&self) -> bool {
        matches!(self, StoreError::Unreachable { .. })
    }
}
