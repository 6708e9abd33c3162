//! Everything that can stop the workload ([`TpchError`]); every message says what to do.

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
