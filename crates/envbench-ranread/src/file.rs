//! File mode: the pre-expanded database file and one step of J jobs reading it.
//!
//! `envbench-ranread.dat` starts with a 64 KiB header (a magic line and a JSON line with the data size, the block size it
//! was made with, and whether the fill completed) followed by the data, filled once with incompressible non-zero data.
//! It is kept between runs so a file of twice the RAM is not rewritten every time; a complete file of the same size is
//! reused, whatever block size a later run reads with (the data region starts 64 KiB in, so any block up to 64 KiB
//! stays aligned). Reads go through `envbench-io`'s loop: random, queue depth 1, J threads released together.
//!
//! A run holds a lock on the file for its whole life ([`envbench_base::lock`], on `envbench-ranread.lock` beside it):
//! shared while it reads a complete file as it is, alone while it creates or refills one (and through its sweep), so
//! no run replaces the file under another. A run that cannot take the lock is refused before it touches the file,
//! with the holder named.

use crate::error::RanReadError;
use crate::sweep::{STEP_WINDOWS, StepFigures, StepLimit, StepRunner};
use envbench_base::lock::{FileLock, LockMode, LockRefused};
use envbench_base::place::{check_free_space, file_system_name};
use envbench_io::testfile::fill_region;
use envbench_io::{
    BenchError, EngineKind, JobConfig, Operation, Pattern, Region, RunLimit, TestSpec, open_for_io, run_job,
};
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// The one file this mode creates in `--dir`.
pub const DATABASE_FILE_NAME: &str = "envbench-ranread.dat";
/// The lock file beside it.
pub const LOCK_FILE_NAME: &str = "envbench-ranread.lock";
const MAGIC: &str = "ENVBENCH-RANREAD 1\n";
/// Bytes before the data: room for the header and alignment for blocks up to this size.
pub const HEADER_BYTES: u64 = 64 << 10;

/// The header's JSON line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Header {
    data_bytes: u64,
    block_bytes: u64,
    /// What the data was filled with.
    fill: String,
    /// False while the fill is under way: a file interrupted mid-fill is never reused.
    complete: bool,
    created_at: String,
}

/// How the database file is prepared and read.
#[derive(Clone, Debug)]
pub struct FileOptions {
    pub dir: PathBuf,
    /// Data size (the file is 64 KiB larger).
    pub data_bytes: u64,
    pub block_bytes: u64,
    pub direct: bool,
    pub engine: EngineKind,
    /// Recreate the file even when a usable one exists.
    pub fresh: bool,
}

/// What happened to the file before the sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileState {
    Reused,
    Created,
}

/// A ready database file.
pub struct FileRanRead {
    path: PathBuf,
    file: Arc<File>,
    options: FileOptions,
    pub state: FileState,
    seed: u64,
    /// Held until the sweep ends.
    _lock: FileLock,
}

impl FileRanRead {
    /// Validate the options, then reuse or create and fill the database file. `progress` gets bytes filled and bytes
    /// in all.
    pub fn prepare(
        options: FileOptions,
        interrupt: &AtomicBool,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<FileRanRead, RanReadError> {
        validate_block(options.block_bytes)?;
        check_data_size(options.data_bytes, options.block_bytes)?;
        let path = options.dir.join(DATABASE_FILE_NAME);
        let (lock, existing, reused) = lock_file(&path, &options)?;
        let state = if reused {
            FileState::Reused
        } else {
            // Only a file carrying our header may be replaced (read_header refused anything else).
            if existing.is_some() {
                std::fs::remove_file(&path)
                    .map_err(|e| BenchError::from_io(&path, "removing the old database file", e))?;
            }
            create(&path, &options, interrupt, progress)?;
            FileState::Created
        };
        let file = open_for_io(&path, options.direct, false).map_err(|error| match error.raw_os_error() {
            Some(libc::EINVAL) if options.direct => RanReadError::Io(BenchError::DirectIoRefused {
                dir: options.dir.clone(),
                fs_type: file_system_name(&options.dir),
            }),
            _ => RanReadError::Io(BenchError::from_io(&path, "opening the database file", error)),
        })?;
        Ok(FileRanRead { path, file: Arc::new(file), options, state, seed: 0x00dd_ba11, _lock: lock })
    }

    /// The database file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Take the lock on the database file at `path`: shared to reuse a complete file of the size asked for, alone to
/// create or refill it ([`envbench_base::lock::take_as_needed`]: decided on the header, looked at again under a shared
/// lock). Returns the lock, the header found under it, and whether the file is reused.
fn lock_file(path: &Path, options: &FileOptions) -> Result<(FileLock, Option<Header>, bool), RanReadError> {
    let lock_path = path.with_file_name(LOCK_FILE_NAME);
    let command = envbench_base::lock::this_command_line();
    // read_header refuses a file of this name that is not envbench's.
    let must_build = |_: &mut ()| {
        let header = read_header(path)?;
        Ok(options.fresh || !header.is_some_and(|h| h.complete && h.data_bytes == options.data_bytes))
    };
    let take = |_: &mut (), exclusive: bool| {
        let mode = if exclusive { LockMode::Exclusive } else { LockMode::Shared };
        FileLock::take(&lock_path, mode, &command).map_err(|refused| match refused {
            LockRefused::Io { path, source } => {
                RanReadError::Io(BenchError::from_io(&path, "taking the lock on the database file", source))
            }
            busy => RanReadError::Busy(format!(
                "{}: in use by {}; wait for it to end, or use another --dir",
                path.display(),
                busy.holder_text()
            )),
        })
    };
    let (lock, alone) = envbench_base::lock::take_as_needed(&mut (), must_build, take)?;
    Ok((lock, read_header(path)?, !alone))
}

/// The database file holds whole 4 KiB pages and at least one block.
pub fn check_data_size(data_bytes: u64, block_bytes: u64) -> Result<(), RanReadError> {
    if data_bytes < block_bytes || !data_bytes.is_multiple_of(4096) {
        return Err(RanReadError::BadInput(format!(
            "--size must be a whole number of 4 KiB pages and at least one block ({block_bytes} bytes); e.g. --size 8g"
        )));
    }
    Ok(())
}

/// Block sizes a database uses: a power of two from 512 bytes to 64 KiB.
pub fn validate_block(block_bytes: u64) -> Result<(), RanReadError> {
    if !block_bytes.is_power_of_two() || !(512..=HEADER_BYTES).contains(&block_bytes) {
        return Err(RanReadError::BadInput(format!(
            "--block {block_bytes} bytes is not a database block size: use a power of two from 512 to 64k, e.g. 8k"
        )));
    }
    Ok(())
}

/// The header of an existing file, `None` when there is no file; an error when a file of that name is not ours.
fn read_header(path: &Path) -> Result<Option<Header>, RanReadError> {
    let metadata = match std::fs::symlink_metadata(path) {
        Ok(metadata) => metadata,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(RanReadError::Io(BenchError::from_io(path, "reading the database file", e))),
    };
    let not_ours = || {
        RanReadError::BadInput(format!(
            "{}: exists but was not made by envbench ranread; envbench will not overwrite it. Move it away or use \
             another --dir",
            path.display()
        ))
    };
    if !metadata.is_file() {
        return Err(not_ours());
    }
    let mut head = vec![0u8; 4096];
    let read = File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .map_err(|e| RanReadError::Io(BenchError::from_io(path, "reading the database file header", e)))?;
    let text = String::from_utf8_lossy(&head[..read]);
    let Some(rest) = text.strip_prefix(MAGIC) else { return Err(not_ours()) };
    let line = rest.lines().next().unwrap_or("");
    match serde_json::from_str::<Header>(line) {
        Ok(header) => Ok(Some(header)),
        // Our magic with a damaged header: an interrupted creation. Safe to replace.
        Err(_) => Ok(Some(Header {
            data_bytes: 0,
            block_bytes: 0,
            fill: String::new(),
            complete: false,
            created_at: String::new(),
        })),
    }
}

fn write_header(file: &File, path: &Path, header: &Header) -> Result<(), RanReadError> {
    let mut bytes = format!("{MAGIC}{}\n", serde_json::to_string(header).expect("header serializes")).into_bytes();
    bytes.resize(4096, 0);
    file.write_all_at(&bytes, 0)
        .and_then(|()| file.sync_data())
        .map_err(|e| RanReadError::Io(BenchError::from_io(path, "writing the database file header", e)))
}

fn create(
    path: &Path,
    options: &FileOptions,
    interrupt: &AtomicBool,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(), RanReadError> {
    let total_bytes = HEADER_BYTES + options.data_bytes;
    check_free_space(&options.dir, total_bytes).map_err(BenchError::from)?;
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| RanReadError::Io(BenchError::from_io(path, "creating the database file", e)))?;
    let mut header = Header {
        data_bytes: options.data_bytes,
        block_bytes: options.block_bytes,
        fill: "incompressible pseudo-random data, each 4 KiB stamped with its offset".into(),
        complete: false,
        created_at: envbench_core::model::now_utc(),
    };
    write_header(&file, path, &header)?;
    file.set_len(total_bytes)
        .map_err(|e| RanReadError::Io(BenchError::from_io(path, "sizing the database file", e)))?;
    let io_file = Arc::new(
        open_for_io(path, options.direct, false)
            .map_err(|e| RanReadError::Io(BenchError::from_io(path, "opening the database file", e)))?,
    );
    let region = Region { offset_bytes: HEADER_BYTES, len_bytes: options.data_bytes };
    let filled = fill_region(&io_file, path, region, options.engine, interrupt, progress);
    if let Err(error) = filled {
        // A half-filled file is useless and may be huge: remove it.
        drop(io_file);
        let _ = std::fs::remove_file(path);
        return Err(match error {
            BenchError::Interrupted => RanReadError::Interrupted,
            other => RanReadError::Io(other),
        });
    }
    header.complete = true;
    write_header(&file, path, &header)?;
    let mut handle = &file;
    handle.flush().ok();
    Ok(())
}

impl StepRunner for FileRanRead {
    fn target(&self) -> String {
        self.path.display().to_string()
    }

    fn run_step(
        &mut self,
        jobs: u32,
        limit: StepLimit,
        interrupt: &AtomicBool,
    ) -> Result<Option<StepFigures>, RanReadError> {
        let spec = TestSpec::new(Pattern::Random, self.options.block_bytes, 1, jobs, Operation::Read);
        spec.validate().map_err(|e| RanReadError::BadInput(e.to_string()))?;
        self.seed = self.seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let started_at = envbench_core::model::now_utc();
        let job = JobConfig {
            spec: &spec,
            file: &self.file,
            path: &self.path,
            region: Region { offset_bytes: HEADER_BYTES, len_bytes: self.options.data_bytes },
            limit: match limit {
                StepLimit::Iterations(n) => RunLimit::OpsPerThread(n),
                StepLimit::Duration(d) => RunLimit::Duration(d),
            },
            engine: self.options.engine,
            seed: self.seed,
            cancel: interrupt,
            // A timed step gives STEP_WINDOWS samples of its IOPS; one limited by reads has no known length.
            window: match limit {
                StepLimit::Duration(d) => Some(d / STEP_WINDOWS),
                StepLimit::Iterations(_) => None,
            },
        };
        let result = run_job(&job)?;
        if result.ops() == 0 {
            return Ok(None);
        }
        let rates: Vec<f64> = result.threads.iter().map(|t| t.iops()).collect();
        let mut figures =
            StepFigures::measured(jobs, &result.latency(), result.elapsed_ns() as f64 / 1e9, rates, started_at, None);
        if let Some(window) = job.window {
            figures.window_iops =
                result.windows().iter().map(|w| w.ops as f64 / window.as_secs_f64().max(1e-9)).collect();
        }
        Ok(Some(figures))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(dir: &Path, fresh: bool) -> FileOptions {
        FileOptions {
            dir: dir.to_path_buf(),
            data_bytes: 1 << 20,
            block_bytes: 4096,
            direct: false,
            engine: EngineKind::ThreadPool,
            fresh,
        }
    }

    fn prepare(dir: &Path, fresh: bool) -> Result<FileRanRead, RanReadError> {
        FileRanRead::prepare(options(dir, fresh), &AtomicBool::new(false), &mut |_, _| {})
    }

    /// Runs that read a complete file share it; a run that creates or refills it holds it alone, and a run that
    /// cannot take the lock is refused with the holder named, the file untouched.
    #[test]
    fn the_database_file_is_never_replaced_under_another_run() {
        let dir = std::env::temp_dir().join(format!("envbench-ranread-lock-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let creator = prepare(&dir, false).unwrap();
        assert_eq!(creator.state, FileState::Created);
        for fresh in [false, true] {
            let refused = prepare(&dir, fresh).err().unwrap().to_string();
            assert!(refused.contains(&format!("pid {}", std::process::id())), "{refused}");
            assert!(refused.contains("envbench-ranread.dat: in use by another envbench run"), "{refused}");
        }
        drop(creator);
        let modified = std::fs::metadata(dir.join(DATABASE_FILE_NAME)).unwrap().modified().unwrap();
        let (first, second) = (prepare(&dir, false).unwrap(), prepare(&dir, false).unwrap());
        assert_eq!((first.state, second.state), (FileState::Reused, FileState::Reused), "readers share it");
        let refused = prepare(&dir, true).err().unwrap().to_string();
        assert!(refused.contains("reads it"), "{refused}");
        assert_eq!(std::fs::metadata(dir.join(DATABASE_FILE_NAME)).unwrap().modified().unwrap(), modified);
        drop((first, second));
        assert_eq!(prepare(&dir, true).unwrap().state, FileState::Created, "--fresh refills it once alone");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
