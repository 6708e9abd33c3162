//! The TPC-H-derived analytic workload of envbench (specification section 6).
//!
//! This crate owns everything that turns "run TPC-H at SF x on target y" into measured figures: generating the data
//! with `tpchgen` into Parquet files (once, with a manifest, reused later), the query targets behind one small
//! [`Target`] trait (embedded Apache DataFusion reading those files, PostgreSQL over a real connection loaded with
//! parallel `COPY`, and MySQL/MariaDB loaded with parallel multi-row `INSERT`s), the 22 queries with the
//! specification's substitution parameters (seeded, or the validation values), the refresh functions on server
//! targets, the power and throughput tests, and the TPC-H-style metrics. It is the only crate of the workspace that
//! depends on DataFusion.
//!
//! A run keeps its hands off everything that is not its own: on a server its tables live in one schema, resolved
//! once, and every name it uses is qualified with it; its Parquet files are only ever written into a directory of
//! its own, after a check of the free space they need; and it holds a lock on its data for the whole run (a file lock
//! beside the Parquet files, a server lock on the tables), so two runs never rebuild the same data under each other.
//!
//! Targets are opened from what the user wrote by one factory, [`targets::open`]; the `tpch` workload the driver
//! registers is [`TPCH`] (command line, `--cold` with the workspace's one page-cache dropper, tables). It does not
//! print, probe the operating system or store results: the driver does, the OS sampler learns about the steps through
//! [`envbench_core::sampler::StepObserver`], and results leave as [`envbench_core::ResultRecord`]s. The metrics are derived from TPC-H and are not comparable with audited TPC
//! results.

mod cold;
pub mod data;
pub mod data_dir;
mod drive;
pub mod fleet;
pub mod generate;
mod measured;
pub mod options;
pub mod params;
mod plan;
pub mod queries;
pub mod reference;
pub mod refresh;
mod render;
pub mod results;
pub mod run;
pub mod tables;
pub mod targets;
pub mod workload;

pub use data::{DataSet, GenerationOptions, GenerationProgress, TableName};
pub use params::{QueryOrder, QueryParameters};
pub use results::{TpchOutcome, WORKLOAD, WORKLOAD_VERSION};
pub use run::{QueryEvent, RunOptions, default_users, run};
pub use targets::{QueryAnswer, QueryFailure, Session, Target, TargetKind, TargetSpec};
pub use workload::TPCH;

use std::path::PathBuf;

/// Everything that can stop the workload; every message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum TpchError {
    #[error("scale factor {0} is not usable; give a positive number such as 0.01, 1 or 10")]
    BadScaleFactor(f64),
    #[error(
        "{dir}: holds files envbench did not create ({example}); envbench only writes into an empty directory or one \
         it made. Choose another --dir"
    )]
    ForeignFiles { dir: PathBuf, example: String },
    #[error("{path}: {action} failed: {source}; check that the directory is writable and the disk has room")]
    Io {
        path: PathBuf,
        action: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: the data manifest is unreadable ({reason}); delete the directory or rerun with --fresh")]
    BadManifest { path: PathBuf, reason: String },
    #[error("writing Parquet file {path} failed: {reason}; check free space in the data directory")]
    Parquet { path: PathBuf, reason: String },
    #[error("DataFusion could not open the data in {dir}: {reason}; regenerate it with --fresh")]
    DataFusion { dir: PathBuf, reason: String },
    /// A database server's error; `server` is what users call it (`PostgreSQL`, `MySQL/MariaDB`).
    #[error("{server} at {url}: {message}")]
    Server { server: &'static str, url: String, message: String },
    #[error(
        "{dir}: the Parquet files of SF {scale_factor} need about {needed} and {available} is free; free some space, \
         give --dir on a larger filesystem, or a smaller --sf"
    )]
    NotEnoughSpace {
        dir: PathBuf,
        scale_factor: String,
        needed: envbench_core::ByteSize,
        available: envbench_core::ByteSize,
    },
    /// Another run holds the data: the message names it and says what to do.
    #[error("{0}")]
    Busy(String),
    #[error("interrupted")]
    Interrupted,
    #[error("{0}")]
    BadOptions(String),
}

/// The scale factor as text, the way people write it (`1`, `0.01`, `10`).
pub fn format_scale_factor(scale_factor: f64) -> String {
    format!("{scale_factor}")
}

/// Reject scale factors tpchgen cannot generate.
pub fn check_scale_factor(scale_factor: f64) -> Result<(), TpchError> {
    if scale_factor.is_finite() && scale_factor > 0.0 && scale_factor <= 100_000.0 {
        Ok(())
    } else {
        Err(TpchError::BadScaleFactor(scale_factor))
    }
}
