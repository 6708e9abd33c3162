//! The places envbench puts its files, checked before anything is created: a directory (never a block device, a
//! plain file or a pseudo file system such as /proc), the free space on it, and the name of its file system.

use envbench_core::ByteSize;
use envbench_core::run::WorkloadError;
use std::ffi::CString;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// Why envbench will not or cannot put its files in a place. Every variant but [`PlaceError::Io`] is the user's to
/// mend.
#[derive(Debug, thiserror::Error)]
pub enum PlaceError {
    /// The target is a block device: envbench never writes to raw devices.
    #[error(
        "{path} is a block device; envbench writes only to files it creates in a directory: give a directory on a \
         mounted file system"
    )]
    BlockDevice { path: PathBuf },

    /// The directory is on a pseudo file system (proc, sysfs, ...) that holds no data.
    #[error("{path} is on {fs_type}, a pseudo file system that holds no data: give a directory on the storage to test")]
    PseudoFileSystem { path: PathBuf, fs_type: String },

    /// The directory does not exist or cannot be read.
    #[error("{path}: {reason}; give an existing directory")]
    NoDirectory { path: PathBuf, reason: String },

    /// The target is not a directory.
    #[error("{path} is not a directory: give the directory where envbench should create its test file")]
    NotADirectory { path: PathBuf },

    /// The file system has less free space than the test file needs.
    #[error(
        "{dir}: not enough free space for a {needed} test file ({available} available); choose a smaller --size or \
         another directory"
    )]
    NotEnoughSpace { dir: PathBuf, needed: ByteSize, available: ByteSize },

    /// The path cannot be given to the kernel.
    #[error("{path}: the path contains a NUL byte")]
    NulInPath { path: PathBuf },

    /// The kernel could not say how much space is free.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: io::Error,
    },
}

impl PlaceError {
    /// True for errors the user caused by the place they gave (exit status 2).
    pub fn is_usage(&self) -> bool {
        !matches!(self, PlaceError::Io { .. })
    }
}

impl From<PlaceError> for WorkloadError {
    fn from(error: PlaceError) -> WorkloadError {
        if error.is_usage() {
            WorkloadError::usage(error.to_string())
        } else {
            WorkloadError::failure(error.to_string())
        }
    }
}

/// Refuse a place envbench must not or cannot put its files: a path that is missing, a block device, not a
/// directory, or on a pseudo file system such as /proc. Nothing is created.
pub fn check_directory(dir: &Path) -> Result<(), PlaceError> {
    let metadata = fs::metadata(dir)
        .map_err(|e| PlaceError::NoDirectory { path: dir.to_path_buf(), reason: e.to_string().to_lowercase() })?;
    if metadata.file_type().is_block_device() {
        return Err(PlaceError::BlockDevice { path: dir.to_path_buf() });
    }
    if !metadata.is_dir() {
        return Err(PlaceError::NotADirectory { path: dir.to_path_buf() });
    }
    if let Some(fs_type) = pseudo_file_system(dir) {
        return Err(PlaceError::PseudoFileSystem { path: dir.to_path_buf(), fs_type: fs_type.to_string() });
    }
    // devtmpfs shares tmpfs's magic number: only the mount table tells it (a 1 GiB file in /dev fills RAM).
    if mount_type(dir).as_deref() == Some("devtmpfs") {
        return Err(PlaceError::PseudoFileSystem { path: dir.to_path_buf(), fs_type: "devtmpfs".to_string() });
    }
    Ok(())
}

/// The file system type the mount table gives for the mount `path` is on, e.g. `ext4`, `devtmpfs`.
pub fn mount_type(path: &Path) -> Option<String> {
    let path = fs::canonicalize(path).ok()?;
    let table = fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mut best: Option<(usize, String)> = None;
    for line in table.lines() {
        // id parent major:minor root mount-point options [optional fields] - type source super-options
        let mut fields = line.split(' ');
        let mount_point = fields.nth(4)?.replace("\\040", " ").replace("\\011", "\t").replace("\\134", "\\");
        let fs_type = line.split(" - ").nth(1)?.split(' ').next()?.to_string();
        if path.starts_with(&mount_point) && best.as_ref().is_none_or(|(len, _)| mount_point.len() >= *len) {
            best = Some((mount_point.len(), fs_type));
        }
    }
    best.map(|(_, fs_type)| fs_type)
}

/// The name of the pseudo file system `path` is on (proc, sysfs, ...), by its statfs magic number.
fn pseudo_file_system(path: &Path) -> Option<&'static str> {
    let c_path = CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: statfs writes only into the struct we pass; the path is NUL-terminated.
    let mut stats: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(c_path.as_ptr(), &mut stats) } != 0 {
        return None;
    }
    let magic = stats.f_type as u64 & 0xffff_ffff;
    PSEUDO_FILE_SYSTEMS.iter().find(|(m, _)| *m == magic).map(|(_, name)| *name)
}

/// File systems that hold no data of their own, by statfs magic number.
const PSEUDO_FILE_SYSTEMS: &[(u64, &str)] = &[
    (0x9fa0, "proc"),
    (0x6265_6572, "sysfs"),
    (0x1cd1, "devpts"),
    (0x0027_e0eb, "cgroup"),
    (0x6367_7270, "cgroup2"),
    (0x6462_6720, "debugfs"),
    (0x7472_6163, "tracefs"),
    (0x7363_6673, "securityfs"),
];

/// Refuse with [`PlaceError::NotEnoughSpace`] when `dir` has less free space than `needed_bytes`; pass when the file
/// system does not report its capacity.
pub fn check_free_space(dir: &Path, needed_bytes: u64) -> Result<(), PlaceError> {
    match available_bytes(dir)? {
        Some(available) if needed_bytes > available => Err(PlaceError::NotEnoughSpace {
            dir: dir.to_path_buf(),
            needed: ByteSize(needed_bytes),
            available: ByteSize(available),
        }),
        _ => Ok(()),
    }
}

/// Bytes an unprivileged user may still write in `dir` (statvfs f_bavail x f_frsize); `None` when the file system
/// reports no capacity at all (ramfs, some FUSE and network file systems), so free space cannot be known.
pub fn available_bytes(dir: &Path) -> Result<Option<u64>, PlaceError> {
    let c_path =
        CString::new(dir.as_os_str().as_bytes()).map_err(|_| PlaceError::NulInPath { path: dir.to_path_buf() })?;
    // SAFETY: statvfs writes only into the struct we pass; the path is NUL-terminated.
    let mut stats: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c_path.as_ptr(), &mut stats) } != 0 {
        return Err(PlaceError::Io {
            context: format!("{}: checking free space", dir.display()),
            source: io::Error::last_os_error(),
        });
    }
    if stats.f_blocks == 0 {
        return Ok(None);
    }
    Ok(Some((stats.f_bavail as u64).saturating_mul(stats.f_frsize as u64)))
}

/// The file system type of `path` by its statfs magic number, e.g. `ext4`, `tmpfs`, `nfs`.
pub fn file_system_name(path: &Path) -> String {
    let Ok(c_path) = CString::new(path.as_os_str().as_bytes()) else { return "unknown file system".into() };
    // SAFETY: statfs writes only into the struct we pass; the path is NUL-terminated.
    let mut stats: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(c_path.as_ptr(), &mut stats) } != 0 {
        return "unknown file system".into();
    }
    let magic = stats.f_type as u64 & 0xffff_ffff;
    let name = match magic {
        0xef53 => "ext4",
        0x5846_5342 => "xfs",
        0x9123_683e => "btrfs",
        0x2fc1_2fc1 => "zfs",
        0xca45_1a4e => "bcachefs",
        0x0102_1994 => "tmpfs",
        0x8584_58f6 => "ramfs",
        0x6969 => "nfs",
        0xff53_4d42 => "cifs",
        0xfe53_4d42 => "smb2",
        0x6573_5546 => "fuse",
        0x794c_7630 => "overlayfs",
        0x0102_1997 => "9p",
        0x4d44 => "vfat",
        0x2011_bab0 => "exfat",
        0x5346_544e => "ntfs",
        0x00c3_6400 => "ceph",
        0x0bd0_0bd0 => "lustre",
        0x4750_4653 => "gpfs",
        _ => return format!("file system type 0x{magic:x}"),
    };
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pseudo_file_systems_and_missing_directories_are_refused() {
        assert!(matches!(check_directory(Path::new("/proc")), Err(PlaceError::PseudoFileSystem { .. })));
        assert!(matches!(check_directory(Path::new("/sys")), Err(PlaceError::PseudoFileSystem { .. })));
        let missing = check_directory(Path::new("/no/such/envbench/dir")).unwrap_err();
        assert!(missing.to_string().contains("no such file or directory"), "{missing}");
        assert!(missing.is_usage());
    }

    #[test]
    fn free_space_is_checked() {
        let dir = std::env::temp_dir();
        assert!(check_free_space(&dir, 4096).is_ok());
        assert!(matches!(check_free_space(&dir, 1 << 60), Err(PlaceError::NotEnoughSpace { .. })));
        assert!(available_bytes(&dir).unwrap().unwrap() > 4096);
    }

    #[test]
    fn names_common_file_systems() {
        assert_eq!(file_system_name(Path::new("/proc/self")), "file system type 0x9fa0");
        if Path::new("/dev/shm").exists() {
            assert_eq!(file_system_name(Path::new("/dev/shm")), "tmpfs");
        }
    }
}
