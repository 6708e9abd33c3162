//! Errors of the cube engine. Every message says what was wrong and what to do about it.

use std::io;
use std::path::{Path, PathBuf};

/// Everything that can go wrong in the cube engine.
#[derive(Debug, thiserror::Error)]
pub enum CubeError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },

    #[error(
        "{path}: the filesystem refuses O_DIRECT ({source}); run without direct I/O (buffered), or put the cube on a \
         filesystem that supports it"
    )]
    DirectIoUnsupported { path: PathBuf, source: io::Error },

    #[error("{path}: not a usable cube index ({reason}); reset the cube (step 1) to start again")]
    CorruptIndex { path: PathBuf, reason: String },

    #[error("block {key:#x} in {path} at offset {offset} is damaged ({reason}); reset the cube and load it again")]
    CorruptBlock { key: u64, path: PathBuf, offset: u64, reason: String },

    #[error("the cube needs more than {limit} page files; raise the page file size limit")]
    TooManyPageFiles { limit: usize },

    #[error("{path}:{line}: {reason}")]
    Parse { path: PathBuf, line: u64, reason: String },

    #[error("rules file {path}, line {line}: {reason}")]
    Rules { path: PathBuf, line: u64, reason: String },

    #[error("unknown dimension '{name}'{hint}; the dimensions are {known}")]
    UnknownDimension { name: String, hint: String, known: String },

    #[error("'{name}' is not a member of {dimension}{hint}")]
    UnknownMember { dimension: String, name: String, hint: String },

    #[error("{0}")]
    Query(String),

    #[error("invalid setting: {0}")]
    Config(String),

    #[error("{path}: data set does not match its manifest ({reason}); delete the data directory to generate it again")]
    DataSet { path: PathBuf, reason: String },

    #[error("cancelled during '{step}'; the cube is marked as interrupted and is reset when it is next opened")]
    Cancelled { step: String },

    #[error(
        "{dir} holds {why} ({files}); envbench cube only works in directories it made and touches nothing else. \
         Choose another --dir, or move those files away"
    )]
    ForeignFiles { dir: PathBuf, files: String, why: String },

    #[error(
        "{dir}: {holder} is using this cube (another envbench cube run); wait for it to end, or choose another --dir"
    )]
    Busy { dir: PathBuf, holder: String },

    #[error("{dir}: {holder} is writing this cube now (a cube run); query it when the run has ended")]
    BeingWritten { dir: PathBuf, holder: String },

    #[error(
        "{dir}: this cube was left mid-step by a run that ended without finishing it ({step}); its blocks cannot be \
         trusted; run `envbench cube` on this --dir to rebuild it"
    )]
    LeftMidStep { dir: PathBuf, step: InterruptedStep },

    #[error("{dir}: no cube here yet; run `envbench cube` first (or give the --dir of an earlier run)")]
    NoCube { dir: PathBuf },

    #[error(
        "{path}: the disk is full (no space left while writing); the run's partial files were removed. Free some \
         space, or choose a smaller --scale or another --dir"
    )]
    DiskFull { path: PathBuf },

    #[error(
        "{dir}: not enough free space for the cube at this scale ({needed} needed, {available} available); choose a \
         smaller --scale or another --dir"
    )]
    NotEnoughSpace { dir: PathBuf, needed: envbench_core::ByteSize, available: envbench_core::ByteSize },
}

/// Attach a path to an I/O error.
pub(crate) trait IoContext<T> {
    fn at(self, path: &Path) -> Result<T, CubeError>;
}

impl<T> IoContext<T> for Result<T, io::Error> {
    fn at(self, path: &Path) -> Result<T, CubeError> {
        self.map_err(|source| match source.raw_os_error() {
            Some(libc::ENOSPC) | Some(libc::EDQUOT) => CubeError::DiskFull { path: path.to_path_buf() },
            _ => CubeError::Io { path: path.to_path_buf(), source },
        })
    }
}

/// What the step-in-progress marker of an interrupted step said.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct InterruptedStep {
    pub step: String,
    pub pid: u32,
    pub started_unix_s: u64,
}

impl std::fmt::Display for InterruptedStep {
    /// `step 3 csv load, started 2026-11-23 10:15:02 UTC by pid 4711`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "step {}", self.step)?;
        if self.started_unix_s > 0 {
            let started = envbench_core::model::format_utc(self.started_unix_s as i64, 0);
            write!(f, ", started {} UTC", started[..19].replace('T', " "))?;
        }
        if self.pid > 0 {
            write!(f, " by pid {}", self.pid)?;
        }
        Ok(())
    }
}
