//! The test file: created fresh by envbench (never an existing file, never a block device), checked for free space
//! and O_DIRECT support first, filled with incompressible data before any read, and removed on every exit path.

use crate::engine::EngineKind;
use crate::error::BenchError;
use crate::runner::{JobConfig, Region, RunLimit, run_job};
use crate::spec::{Operation, Pattern, TestSpec};
use envbench_base::place::{check_directory, check_free_space, file_system_name};
use serde::{Deserialize, Serialize};
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// File sizes must be a whole number of these, so every O_DIRECT transfer stays aligned.
pub const FILE_SIZE_UNIT_BYTES: u64 = 4096;

/// Fill writes this much per job, reporting progress between jobs.
const FILL_CHUNK_BYTES: u64 = 128 << 20;

/// A test file envbench created. Dropping it removes the file.
#[derive(Debug)]
pub struct TestFile {
    path: PathBuf,
    dir: PathBuf,
    size_bytes: u64,
    removed: bool,
}

/// How the fill went.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct FillSummary {
    pub elapsed_ms: f64,
    /// 10^6 bytes per second.
    pub mb_per_s: f64,
}

impl TestFile {
    /// Create `envbench-<pid>-<time>.dat` of `size_bytes` in `dir` (O_CREAT|O_EXCL, so an existing file is never
    /// touched). Refuses a block device, a missing or non-directory path, too little free space, and, when `direct`,
    /// a file system that refuses O_DIRECT. The file is allocated but not yet written: call [`TestFile::fill`].
    pub fn create(dir: &Path, size_bytes: u64, direct: bool) -> Result<TestFile, BenchError> {
        check_file_plan(dir, size_bytes)?;
        check_free_space(dir, size_bytes)?;
        let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos();
        let path = dir.join(format!("envbench-{}-{:x}.dat", std::process::id(), stamp & 0xffff_ffff_ffff));
        let file =
            OpenOptions::new().read(true).write(true).create_new(true).mode(0o600).open(&path).map_err(|source| {
                BenchError::Io { context: format!("{}: cannot create the test file", path.display()), source }
            })?;
        // From here on the guard removes the file on every error.
        let test_file = TestFile { path, dir: dir.to_path_buf(), size_bytes, removed: false };
        if direct {
            test_file.open(true, false)?;
        }
        // Reserve the space up front: no fragmentation, and a full disk shows now rather than mid-test. File systems
        // without fallocate get their blocks from the fill instead.
        // SAFETY: plain system call on a file we own.
        let reserved = unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, size_bytes as libc::off_t) };
        if reserved != 0 {
            let error = io::Error::last_os_error();
            if !matches!(error.raw_os_error(), Some(libc::EOPNOTSUPP) | Some(libc::ENOSYS)) {
                return Err(BenchError::from_io(&test_file.path, "allocating the test file", error));
            }
            file.set_len(size_bytes)
                .map_err(|source| BenchError::from_io(&test_file.path, "sizing the test file", source))?;
        }
        Ok(test_file)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn size_bytes(&self) -> u64 {
        self.size_bytes
    }

    /// Open the file for a test: O_DIRECT when `direct`, O_DSYNC when `dsync`.
    pub fn open(&self, direct: bool, dsync: bool) -> Result<Arc<File>, BenchError> {
        open_for_io(&self.path, direct, dsync).map(Arc::new).map_err(|error| match error.raw_os_error() {
            Some(libc::EINVAL) if direct => {
                BenchError::DirectIoRefused { dir: self.dir.clone(), fs_type: file_system_name(&self.dir) }
            }
            _ => BenchError::from_io(&self.path, "opening the test file", error),
        })
    }

    /// Write the whole file once with incompressible data (see [`fill_region`]).
    pub fn fill(
        &self,
        engine: EngineKind,
        direct: bool,
        cancel: &AtomicBool,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<FillSummary, BenchError> {
        let file = self.open(direct, false)?;
        let region = Region { offset_bytes: 0, len_bytes: self.size_bytes };
        fill_region(&file, &self.path, region, engine, cancel, progress)
    }

    /// Keep the file after this value is gone and return its path, for tools that run other programs on it (the
    /// caller then removes it).
    pub fn keep(mut self) -> PathBuf {
        self.removed = true;
        std::mem::take(&mut self.path)
    }

    /// Remove the file now, reporting failure (dropping also removes it, silently).
    pub fn remove(mut self) -> Result<(), BenchError> {
        self.removed = true;
        fs::remove_file(&self.path).map_err(|source| BenchError::Io {
            context: format!("{}: removing the test file", self.path.display()),
            source,
        })
    }
}

impl Drop for TestFile {
    fn drop(&mut self) {
        if !self.removed {
            // Best effort on error and interrupt paths; `remove` reports failures.
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// Write `region` of `file` once with incompressible data (sequential writes of up to 1 MiB, 4 in flight, through
/// the same engine and loop as the tests), calling `progress(written_bytes, region_bytes)` as it goes, then make it
/// durable. The region's offset and length must be multiples of 4 KiB. Returns [`BenchError::Interrupted`] when
/// cancelled and [`BenchError::DiskFull`] on ENOSPC; the caller removes what it created.
pub fn fill_region(
    file: &Arc<File>,
    path: &Path,
    region: Region,
    engine: EngineKind,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<FillSummary, BenchError> {
    if region.len_bytes == 0
        || !region.len_bytes.is_multiple_of(FILE_SIZE_UNIT_BYTES)
        || !region.offset_bytes.is_multiple_of(FILE_SIZE_UNIT_BYTES)
    {
        return Err(BenchError::InvalidSetup(format!(
            "{}: cannot fill {} bytes at offset {}: both must be multiples of 4 KiB",
            path.display(),
            region.len_bytes,
            region.offset_bytes
        )));
    }
    let block_bytes = fill_block_bytes(region.len_bytes);
    let spec = TestSpec::new(Pattern::Sequential, block_bytes, 4, 1, Operation::Write);
    let started = Instant::now();
    let mut written = 0;
    progress(0, region.len_bytes);
    while written < region.len_bytes {
        let len_bytes = FILL_CHUNK_BYTES.min(region.len_bytes - written);
        let job = JobConfig {
            spec: &spec,
            file,
            path,
            region: Region { offset_bytes: region.offset_bytes + written, len_bytes },
            limit: RunLimit::OpsPerThread(len_bytes / block_bytes),
            engine,
            seed: region.offset_bytes + written,
            cancel,
            window: None,
        };
        if run_job(&job)?.interrupted {
            return Err(BenchError::Interrupted);
        }
        written += len_bytes;
        progress(written, region.len_bytes);
    }
    file.sync_data().map_err(|source| BenchError::from_io(path, "syncing the filled file", source))?;
    let elapsed = started.elapsed().as_secs_f64();
    Ok(FillSummary { elapsed_ms: elapsed * 1e3, mb_per_s: region.len_bytes as f64 / elapsed / 1e6 })
}

/// What [`TestFile::create`] checks of its arguments before it creates anything: the directory, and the size (a
/// positive multiple of 4 KiB). Free space is checked as the file is made.
pub fn check_file_plan(dir: &Path, size_bytes: u64) -> Result<(), BenchError> {
    check_directory(dir)?;
    if size_bytes == 0 || !size_bytes.is_multiple_of(FILE_SIZE_UNIT_BYTES) {
        return Err(BenchError::InvalidSetup(format!(
            "test file size {size_bytes} bytes is not valid: use a positive multiple of 4 KiB, e.g. 256m or 1g"
        )));
    }
    Ok(())
}

/// Open an existing file for reading and writing with O_DIRECT and/or O_DSYNC.
pub fn open_for_io(path: &Path, direct: bool, dsync: bool) -> io::Result<File> {
    let mut flags = 0;
    if direct {
        flags |= libc::O_DIRECT;
    }
    if dsync {
        flags |= libc::O_DSYNC;
    }
    OpenOptions::new().read(true).write(true).custom_flags(flags).open(path)
}

/// The largest power of two up to 1 MiB that divides the file size (at least 4 KiB, as sizes are multiples of it).
fn fill_block_bytes(size_bytes: u64) -> u64 {
    let mut block = 1 << 20;
    while !size_bytes.is_multiple_of(block) {
        block /= 2;
    }
    block
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::scratch_dir;
    use envbench_base::place::PlaceError;

    #[test]
    fn fill_block_divides_the_size() {
        assert_eq!(fill_block_bytes(1 << 30), 1 << 20);
        assert_eq!(fill_block_bytes(12 << 10), 4 << 10);
        assert_eq!(fill_block_bytes((1 << 20) + (8 << 10)), 8 << 10);
    }

    #[test]
    fn created_file_is_new_filled_and_removed_on_drop() {
        let dir = scratch_dir("testfile-fill");
        let file = TestFile::create(&dir, 3 << 20, true).unwrap();
        let path = file.path().to_path_buf();
        assert!(path.file_name().unwrap().to_string_lossy().starts_with("envbench-"));
        assert_eq!(fs::metadata(&path).unwrap().len(), 3 << 20);
        let mut reports = Vec::new();
        let never = AtomicBool::new(false);
        file.fill(EngineKind::ThreadPool, true, &never, &mut |done, total| reports.push((done, total))).unwrap();
        assert_eq!(reports.first(), Some(&(0, 3 << 20)));
        assert_eq!(reports.last(), Some(&(3 << 20, 3 << 20)));
        // Every 4 KiB carries its own offset stamp, so no block is a hole or a copy of another.
        let data = fs::read(&path).unwrap();
        for (index, block) in data.chunks(4096).enumerate() {
            assert_eq!(u64::from_le_bytes(block[..8].try_into().unwrap()), index as u64 * 4096);
        }
        drop(file);
        assert!(!path.exists());
    }

    #[test]
    fn fill_region_writes_only_its_region() {
        let dir = scratch_dir("fill-region");
        let path = dir.join("envbench-region.dat");
        fs::write(&path, vec![0u8; 2 << 20]).unwrap();
        let file = Arc::new(open_for_io(&path, true, false).unwrap());
        let region = Region { offset_bytes: 64 << 10, len_bytes: 1 << 20 };
        let never = AtomicBool::new(false);
        fill_region(&file, &path, region, EngineKind::ThreadPool, &never, &mut |_, _| {}).unwrap();
        let data = fs::read(&path).unwrap();
        assert!(data[..64 << 10].iter().all(|&b| b == 0), "before the region");
        assert!(data[(64 << 10) + (1 << 20)..].iter().all(|&b| b == 0), "after the region");
        for offset in (region.offset_bytes..region.offset_bytes + region.len_bytes).step_by(4096) {
            let start = offset as usize;
            assert_eq!(u64::from_le_bytes(data[start..start + 8].try_into().unwrap()), offset);
        }
        let unaligned = Region { offset_bytes: 100, len_bytes: 4096 };
        let error = fill_region(&file, &path, unaligned, EngineKind::ThreadPool, &never, &mut |_, _| {});
        assert!(matches!(error, Err(BenchError::InvalidSetup(_))));
    }

    #[test]
    fn refuses_block_devices_and_plain_files() {
        let error = TestFile::create(Path::new("/dev/vda"), 1 << 20, true);
        if Path::new("/dev/vda").exists() {
            assert!(matches!(error, Err(BenchError::Place(PlaceError::BlockDevice { .. }))), "{error:?}");
        }
        let dir = scratch_dir("testfile-plain");
        let plain = dir.join("not-a-dir");
        fs::write(&plain, b"x").unwrap();
        assert!(matches!(
            TestFile::create(&plain, 1 << 20, true),
            Err(BenchError::Place(PlaceError::NotADirectory { .. }))
        ));
    }

    #[test]
    fn refuses_sizes_larger_than_the_free_space() {
        let dir = scratch_dir("testfile-space");
        let error = TestFile::create(&dir, 1 << 60, true).unwrap_err();
        assert!(matches!(error, BenchError::Place(PlaceError::NotEnoughSpace { .. })), "{error:?}");
        assert!(error.to_string().contains("not enough free space"), "{error}");
        assert!(fs::read_dir(&dir).unwrap().next().is_none(), "nothing may be left behind");
    }

    #[test]
    fn refuses_sizes_that_are_not_whole_pages() {
        let dir = scratch_dir("testfile-size");
        assert!(matches!(TestFile::create(&dir, 1000, true), Err(BenchError::InvalidSetup(_))));
        assert!(matches!(TestFile::create(&dir, 0, true), Err(BenchError::InvalidSetup(_))));
    }
}
