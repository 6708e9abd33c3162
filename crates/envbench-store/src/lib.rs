//! The results store.
//!
//! Every run, with its environment fingerprint (stored once per distinct environment), its results with every raw
//! sample, its sampler series and how it ended, is kept here and never rewritten: results and samples are append-only
//! (enforced by the schema), and a run's status moves once from `running` to `complete`, `failed` or `interrupted`.
//!
//! [`ResultStore`] is the interface the rest of envbench uses, one trait per job ([`ReadRuns`], [`ReadEnvironments`],
//! [`RecordRuns`], [`ImportRuns`], [`FleetBoard`]), so a reader is given a reader. It has one implementation, [`SqlStore`], written once
//! over envbench-sql's connection (the one database layer, which alone links the drivers) with two backends: SQLite by default ([`SqliteStore`]: one file in the user's data
//! directory, WAL, busy timeout) and PostgreSQL for a shared team store ([`PostgresStore`]: migrations under an
//! advisory lock). The schema and its migrations are written once for both. A running run's process holds a lock
//! that shows it alive from any PID namespace or machine (a lock file beside a SQLite store, an advisory lock on a
//! PostgreSQL one); a store opened marks runs whose process is provably gone as interrupted, never a live one.
//! [`RunRecorder`] records a run from beginning to end and keeps it in the local store when a shared store cannot be
//! reached; [`push_runs`] copies runs from one store to another by uuid, idempotently. This crate knows nothing about how results are produced or presented.

mod digest;
mod error;
mod liveness;
mod location;
mod model;
mod pages_view;
mod postgres_backend;
mod process;
mod push;
mod recorder;
mod roles;
mod schema;
mod series_rows;
mod sql;
mod sqlite_backend;
mod store;
mod tallies;
mod uploads;
mod writes;

pub use digest::{DIGEST_ABOVE, DIGEST_POINTS, digest_flag, is_digest_flag, sample_digest};
pub use error::StoreError;
pub use location::{StoreLocation, default_store_path, open_store};
pub use model::{
    FingerprintTally, FleetEvent, ImportOutcome, PushReport, RunEnvironments, RunFilter, RunSummary, StoredResult,
    StoredRun,
};
pub use pages_view::PagesView;
pub use postgres_backend::{PostgresBackend, PostgresStore};
pub use process::ABANDONED_AFTER_S;
pub use push::push_runs;
pub use recorder::{RecordedRun, RunRecorder};
pub use roles::{FleetBoard, ImportRuns, ReadEnvironments, ReadRuns, RecordRuns, ResultStore};
pub use schema::LATEST_VERSION;
pub use sqlite_backend::{SqliteBackend, SqliteStore};
pub use store::SqlStore;
pub use uploads::{
    Received, SUITE_TAG, TokenCheck, Upload, UploadOutcome, UploadStore, UploadToken, open_upload_store,
};
