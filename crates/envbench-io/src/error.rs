//! The errors of the storage suite. Every error a user can cause says what was wrong and what to do.

use envbench_base::place::PlaceError;
use std::io;
use std::path::PathBuf;

/// Why a test, a fill or the suite could not run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The file system ran out of space (ENOSPC or EDQUOT) while writing.
    #[error(
        "{path}: the disk is full (no space left while writing); the test file was removed. Free some space or \
         choose a smaller --size"
    )]
    DiskFull { path: PathBuf },

    /// Opening with O_DIRECT was refused (EINVAL), e.g. on ramfs or some FUSE file systems.
    #[error(
        "{dir}: filesystem refuses O_DIRECT ({fs_type}); use --buffered, results will then need a file at least 2x \
         RAM or a dropped page cache"
    )]
    DirectIoRefused { dir: PathBuf, fs_type: String },

    /// The place given for the files is not one envbench writes to, or has too little room.
    #[error(transparent)]
    Place(#[from] PlaceError),

    /// A test was not understood or is out of range.
    #[error(transparent)]
    Spec(#[from] crate::spec::SpecError),

    /// A test or option does not fit the test file or is out of range.
    #[error("{0}")]
    InvalidSetup(String),

    /// io_uring was asked for explicitly but cannot be used here.
    #[error("io_uring is not available: {reason}; use --engine threadpool")]
    UringUnavailable { reason: String },

    /// A read or write moved fewer bytes than asked.
    #[error(
        "{path}: short {operation} at offset {offset_bytes}: {done_bytes} of {len_bytes} bytes; was the file \
         truncated by another program?"
    )]
    ShortTransfer { path: PathBuf, operation: &'static str, offset_bytes: u64, done_bytes: u64, len_bytes: u64 },

    /// The user interrupted the work (the cancel flag was set).
    #[error("interrupted")]
    Interrupted,

    /// Any other system error, with what was being done.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: io::Error,
    },
}

impl BenchError {
    /// True for errors the user caused by how they called envbench (exit status 2).
    pub fn is_usage(&self) -> bool {
        if let BenchError::Place(place) = self {
            return place.is_usage();
        }
        matches!(
            self,
            BenchError::Spec(_)
                | BenchError::InvalidSetup(_)
                | BenchError::DirectIoRefused { .. }
                | BenchError::UringUnavailable { .. }
        )
    }

    /// Wrap a system error from an operation on `path`, turning "disk full" into [`BenchError::DiskFull`].
    pub fn from_io(path: &std::path::Path, what: &str, source: io::Error) -> BenchError {
        match source.raw_os_error() {
            Some(libc::ENOSPC) | Some(libc::EDQUOT) => BenchError::DiskFull { path: path.to_path_buf() },
            _ => BenchError::Io { context: format!("{}: {what}", path.display()), source },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn no_space_and_quota_mean_disk_full() {
        for errno in [libc::ENOSPC, libc::EDQUOT] {
            let error = BenchError::from_io(Path::new("/data/x"), "write", io::Error::from_raw_os_error(errno));
            assert!(matches!(error, BenchError::DiskFull { .. }), "{error}");
            assert!(error.to_string().contains("disk is full"));
        }
        let error = BenchError::from_io(Path::new("/data/x"), "write", io::Error::from_raw_os_error(libc::EIO));
        assert!(error.to_string().starts_with("/data/x: write: "), "{error}");
    }

    #[test]
    fn direct_io_refusal_says_what_to_do() {
        let error = BenchError::DirectIoRefused { dir: "/dir".into(), fs_type: "ramfs".into() };
        assert_eq!(
            error.to_string(),
            "/dir: filesystem refuses O_DIRECT (ramfs); use --buffered, results will then need a file at least 2x RAM \
             or a dropped page cache"
        );
    }
}
