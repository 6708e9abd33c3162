//! The lock every run that owns files takes on them, so two envbench runs never change the same data at once: a
//! run that rebuilds (writes) takes it exclusively, a run that only reads shares it with other readers.
//!
//! It is `flock(2)` on a lock file envbench creates beside its data: the kernel releases it when the process ends,
//! however it ends, so a run killed hard never leaves a stale lock, and it holds across PID namespaces (containers)
//! on one kernel. A writer records who it is in the lock file (pid, host, command line, start), so a run that is
//! refused can name the holder. Readers record nothing (several share the lock), so a writer refused by readers is
//! told that a reading run holds it.

use envbench_core::model::{now_utc, redact_secrets};
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// Whether a run changes the locked data or only reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockMode {
    /// Readers share the lock with each other, never with a writer.
    Shared,
    /// A writer holds it alone.
    Exclusive,
}

/// Who holds a lock, as its writer recorded it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockHolder {
    pub pid: u32,
    pub host: String,
    /// The holder's command line, without secrets.
    pub command: String,
    /// When it took the lock (UTC, RFC 3339).
    pub since: String,
}

impl std::fmt::Display for LockHolder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "pid {} on {}, `{}`, since {}", self.pid, self.host, self.command, self.since)
    }
}

/// Why a lock was not taken.
#[derive(Debug)]
pub enum LockRefused {
    /// Another run holds it: a writer (named when it recorded itself) or readers.
    Busy { path: PathBuf, holder: Option<LockHolder>, held_by_writer: bool },
    /// The lock file cannot be opened or locked.
    Io { path: PathBuf, source: std::io::Error },
}

impl LockRefused {
    /// Who holds it, for a message: `another envbench run (pid 12 on db1, `envbench tpch`, since ...)`.
    pub fn holder_text(&self) -> String {
        match self {
            LockRefused::Busy { holder: Some(holder), .. } => format!("another envbench run ({holder})"),
            LockRefused::Busy { held_by_writer: false, .. } => "another envbench run that reads it".to_string(),
            LockRefused::Busy { .. } => "another envbench run".to_string(),
            LockRefused::Io { path, source } => format!("{}: {source}", path.display()),
        }
    }
}

impl std::fmt::Display for LockRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LockRefused::Busy { path, .. } => write!(f, "{}: held by {}", path.display(), self.holder_text()),
            LockRefused::Io { path, source } => write!(f, "{}: cannot take the lock: {source}", path.display()),
        }
    }
}

impl std::error::Error for LockRefused {}

/// A lock on a file, held until dropped (or the process ends).
#[derive(Debug)]
pub struct FileLock {
    file: File,
    mode: LockMode,
}

/// Take a lock whose mode follows from the data it guards, file or server alike: `must_build(state)` looks at the
/// data and says whether it must be built or rebuilt (the lock is then taken alone) or is complete and only read
/// (the lock is shared); `take(state, exclusive)` takes the lock. Data found complete is looked at again once the
/// shared lock is held, since another run may have rebuilt or removed it in between; the shared lock is then given up
/// and the lock taken alone. The holder of the exclusive lock finds the data's state itself as it builds. Returns the
/// lock and whether it is held alone.
pub fn take_as_needed<S: ?Sized, L, E>(
    state: &mut S,
    mut must_build: impl FnMut(&mut S) -> Result<bool, E>,
    mut take: impl FnMut(&mut S, bool) -> Result<L, E>,
) -> Result<(L, bool), E> {
    if must_build(state)? {
        return Ok((take(state, true)?, true));
    }
    let shared = take(state, false)?;
    if must_build(state)? {
        drop(shared);
        return Ok((take(state, true)?, true));
    }
    Ok((shared, false))
}

/// This process's command line, as a writer records it in the lock file (redacted when recorded).
pub fn this_command_line() -> String {
    std::env::args().collect::<Vec<_>>().join(" ")
}

/// `flock` without waiting: `Ok(false)` when another holder has it.
fn try_flock(file: &File, mode: LockMode) -> std::io::Result<bool> {
    let operation = match mode {
        LockMode::Shared => libc::LOCK_SH,
        LockMode::Exclusive => libc::LOCK_EX,
    } | libc::LOCK_NB;
    // SAFETY: flock on a descriptor we own.
    if unsafe { libc::flock(file.as_raw_fd(), operation) } == 0 {
        return Ok(true);
    }
    let error = std::io::Error::last_os_error();
    if error.raw_os_error() == Some(libc::EWOULDBLOCK) { Ok(false) } else { Err(error) }
}

/// The writer recorded in a lock file, when it is still alive. A record left by a writer that has ended (the kernel
/// released its lock) names nobody.
fn recorded_holder(file: &mut File) -> Option<LockHolder> {
    let mut text = String::new();
    file.rewind().ok()?;
    file.read_to_string(&mut text).ok()?;
    let holder: LockHolder = serde_json::from_str(text.trim()).ok()?;
    let this_host = host_name();
    let gone = holder.host == this_host && !Path::new(&format!("/proc/{}", holder.pid)).exists();
    (!gone).then_some(holder)
}

/// This machine's name.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|h| h.trim().to_string()).unwrap_or_default()
}

impl FileLock {
    /// Take the lock on `path` without waiting, creating the lock file when it is missing. A writer records itself,
    /// with `command` (redacted here) as what it runs.
    pub fn take(path: &Path, mode: LockMode, command: &str) -> Result<FileLock, LockRefused> {
        let io = |source| LockRefused::Io { path: path.to_path_buf(), source };
        let mut file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path).map_err(io)?;
        if !try_flock(&file, mode).map_err(io)? {
            // Another mode would have succeeded only if the holder were a reader: try a shared lock to tell.
            let held_by_writer = mode == LockMode::Shared || !try_flock(&file, LockMode::Shared).unwrap_or(false);
            let holder = if held_by_writer { recorded_holder(&mut file) } else { None };
            return Err(LockRefused::Busy { path: path.to_path_buf(), holder, held_by_writer });
        }
        if mode == LockMode::Exclusive {
            let holder = LockHolder {
                pid: std::process::id(),
                host: host_name(),
                command: redact_secrets(command),
                since: now_utc(),
            };
            file.set_len(0).map_err(io)?;
            file.rewind().map_err(io)?;
            file.write_all(serde_json::to_string(&holder).expect("a holder serializes").as_bytes()).map_err(io)?;
        }
        Ok(FileLock { file, mode })
    }

    /// A reader's lock on an existing lock file, which it never creates or writes: `Ok(None)` when there is no lock
    /// file (no writer ever locked the data).
    pub fn share_existing(path: &Path) -> Result<Option<FileLock>, LockRefused> {
        let io = |source| LockRefused::Io { path: path.to_path_buf(), source };
        let mut file = match File::open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(e)),
        };
        if !try_flock(&file, LockMode::Shared).map_err(io)? {
            let holder = recorded_holder(&mut file);
            return Err(LockRefused::Busy { path: path.to_path_buf(), holder, held_by_writer: true });
        }
        Ok(Some(FileLock { file, mode: LockMode::Shared }))
    }

    pub fn mode(&self) -> LockMode {
        self.mode
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // A writer's record goes with its lock, so a refusal never names a run that has ended.
        if self.mode == LockMode::Exclusive {
            let _ = self.file.set_len(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("envbench-lock-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir.join("data.lock")
    }

    /// Complete data shares the lock, data to build takes it alone, and data that another run removed between the
    /// first look and the shared lock is looked at again and built alone.
    #[test]
    fn the_mode_follows_the_data_and_is_checked_again_under_a_shared_lock() {
        let path = scratch("as-needed");
        let take = |_: &mut Vec<bool>, exclusive: bool| {
            FileLock::take(&path, if exclusive { LockMode::Exclusive } else { LockMode::Shared }, "t")
        };
        let next = |looks: &mut Vec<bool>| Ok::<_, LockRefused>(looks.remove(0));
        let (lock, alone) = take_as_needed(&mut vec![false, false], next, take).unwrap();
        assert_eq!((lock.mode(), alone), (LockMode::Shared, false));
        drop(lock);
        let (lock, alone) = take_as_needed(&mut vec![true], next, take).unwrap();
        assert_eq!((lock.mode(), alone), (LockMode::Exclusive, true));
        drop(lock);
        let mut looks = vec![false, true];
        let (lock, alone) = take_as_needed(&mut looks, next, take).unwrap();
        assert_eq!((lock.mode(), alone, looks.len()), (LockMode::Exclusive, true, 0), "the shared lock was given up");
        // Held alone by another run: refused, whatever the data says.
        assert!(take_as_needed(&mut vec![false], next, take).is_err());
    }

    #[test]
    fn readers_share_and_a_writer_is_alone_and_named() {
        let path = scratch("modes");
        let first = FileLock::take(&path, LockMode::Shared, "envbench tpch").unwrap();
        let second = FileLock::take(&path, LockMode::Shared, "envbench tpch").unwrap();
        let refused = FileLock::take(&path, LockMode::Exclusive, "envbench tpch --fresh").unwrap_err();
        assert!(refused.holder_text().contains("reads it"), "{refused}");
        drop((first, second));

        let writer = FileLock::take(&path, LockMode::Exclusive, "envbench oltp postgres://u:pw@h/db").unwrap();
        for mode in [LockMode::Shared, LockMode::Exclusive] {
            let refused = FileLock::take(&path, mode, "x").unwrap_err();
            let text = refused.to_string();
            assert!(text.contains(&format!("pid {}", std::process::id())), "{text}");
            assert!(text.contains("postgres://u:***@h/db") && !text.contains("pw@"), "{text}");
        }
        assert!(matches!(FileLock::share_existing(&path), Err(LockRefused::Busy { .. })));
        drop(writer);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "", "the record goes with the lock");
        assert!(FileLock::share_existing(&path).unwrap().is_some());
        assert!(FileLock::share_existing(&path.with_extension("none")).unwrap().is_none());
    }
}
