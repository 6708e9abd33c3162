//! The proof that a run is still being run: a lock its envbench process takes before the run is recorded and holds
//! until the run has ended. The kernel or the server releases it however the process ends (killed hard, machine
//! lost), and it is seen the same from every PID namespace, container and machine that reaches the store, where a
//! process id is not.
//!
//! - SQLite store: `flock` on `<store>-run-<run uuid>.lock` beside the store file ([`envbench_base::lock`]), removed
//!   when the run ends (or, left by a process killed hard, when the run is marked interrupted). A process that cannot
//!   see it (the store file alone bind-mounted into a container) learns nothing from it, never that the run is dead.
//! - PostgreSQL store: a session advisory lock on the store's database, schema and run ([`envbench_sql::lock`]),
//!   held by a session of its own, so it also reaches across machines.
//!
//! Locks belong to the process, not to one store handle: a run begun through one handle stays held until it ends
//! through any handle of this process, or until the process ends, as with the process identity kept before.

use envbench_base::lock::{FileLock, LockMode, LockRefused};
use envbench_sql::lock::{ServerLock, ServerLockError, ServerLockMode};
use envbench_sql::{DatabaseUrl, Namespace};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What a run's lock says about its process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Liveness {
    /// Someone holds it: the run's process is alive.
    Held,
    /// It can be taken: the process that held it is gone.
    Free,
    /// It cannot be told from here (no lock file in sight, the server failed).
    Unknown,
}

/// A lock held for one running run.
pub(crate) enum RunLock {
    File { path: PathBuf, _lock: FileLock },
    Server { _lock: ServerLock },
}

/// The locks of the runs this process is running, by run uuid.
static HELD: Mutex<BTreeMap<String, RunLock>> = Mutex::new(BTreeMap::new());

fn held() -> std::sync::MutexGuard<'static, BTreeMap<String, RunLock>> {
    HELD.lock().unwrap_or_else(|e| e.into_inner())
}

/// Keep `lock` for run `uuid` until [`release`].
pub(crate) fn keep(uuid: &str, lock: RunLock) {
    held().insert(uuid.to_string(), lock);
}

/// The run has ended (or was never recorded): give its lock up, removing its lock file.
pub(crate) fn release(uuid: &str) {
    if let Some(lock) = held().remove(uuid) {
        drop_lock(lock);
    }
}

/// Give a lock up: the file goes first, so nobody takes it for a run that is still recorded as running.
pub(crate) fn drop_lock(lock: RunLock) {
    if let RunLock::File { path, .. } = &lock {
        let _ = std::fs::remove_file(path);
    }
}

/// The lock file of run `uuid` of the SQLite store at `store`: beside the file itself, so a store reached through a
/// link or a relative path has the same one.
pub(crate) fn lock_file(store: &Path, uuid: &str) -> PathBuf {
    let mut name = store.canonicalize().unwrap_or_else(|_| store.to_path_buf()).into_os_string();
    name.push(format!("-run-{uuid}.lock"));
    PathBuf::from(name)
}

/// Lock run `uuid` of the SQLite store at `store`; `None` when its lock file cannot be made (the run is then judged
/// by its process identity and age only).
pub(crate) fn take_file(store: &Path, uuid: &str, command: &str) -> Option<RunLock> {
    let path = lock_file(store, uuid);
    let lock = FileLock::take(&path, LockMode::Exclusive, command).ok()?;
    Some(RunLock::File { path, _lock: lock })
}

/// Whether the lock file of run `uuid` of the SQLite store at `store` is held. A reader's lock never creates it.
pub(crate) fn probe_file(store: &Path, uuid: &str) -> Liveness {
    match FileLock::share_existing(&lock_file(store, uuid)) {
        Ok(Some(_free)) => Liveness::Free,
        Err(LockRefused::Busy { .. }) => Liveness::Held,
        Ok(None) | Err(LockRefused::Io { .. }) => Liveness::Unknown,
    }
}

/// Remove what the lock of an ended run left behind (its lock file), once the run is recorded as ended.
pub(crate) fn clear_file(store: &Path, uuid: &str) {
    let _ = std::fs::remove_file(lock_file(store, uuid));
}

/// The server lock of run `uuid` of the PostgreSQL store at `url`, in `schema`, taken on a session of its own.
fn take_server_lock(
    url: &DatabaseUrl,
    schema: &str,
    uuid: &str,
    application: &str,
) -> Result<ServerLock, ServerLockError> {
    let namespace = Namespace::named(url.dialect(), schema);
    ServerLock::take(url, &namespace, &format!("store run {uuid}"), ServerLockMode::Exclusive, application)
}

/// Lock run `uuid` of the PostgreSQL store at `url` (in `schema`); the session is named after the run, so the
/// server's session list shows which run holds it.
pub(crate) fn take_server(url: &DatabaseUrl, schema: &str, uuid: &str) -> Option<RunLock> {
    let application = format!("envbench run {}", &uuid[..uuid.len().min(8)]);
    take_server_lock(url, schema, uuid, &application).ok().map(|lock| RunLock::Server { _lock: lock })
}

/// Whether the server lock of run `uuid` is held; taking it to tell releases it at once.
pub(crate) fn probe_server(url: &DatabaseUrl, schema: &str, uuid: &str) -> Liveness {
    match take_server_lock(url, schema, uuid, "envbench liveness check") {
        Ok(_free) => Liveness::Free,
        Err(ServerLockError::Busy { .. }) => Liveness::Held,
        Err(ServerLockError::Database(_)) => Liveness::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_lock_is_held_while_kept_and_free_when_its_holder_let_go() {
        let dir = std::env::temp_dir().join(format!("envbench-liveness-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let store = dir.join("results.db");
        assert_eq!(probe_file(&store, "a"), Liveness::Unknown, "no lock file: nothing is known");
        assert!(!lock_file(&store, "a").exists(), "a probe never creates a lock file");

        keep("a", take_file(&store, "a", "envbench exec").unwrap());
        assert_eq!(probe_file(&store, "a"), Liveness::Held, "a second look from the holder's own process too");
        release("a");
        assert!(!held().contains_key("a"));
        assert!(!lock_file(&store, "a").exists(), "a run that ended leaves no lock file");

        // A lock file whose holder ended without releasing it (killed hard): the file stays, and nobody holds it.
        std::fs::write(lock_file(&store, "b"), "").unwrap();
        assert_eq!(probe_file(&store, "b"), Liveness::Free);
        clear_file(&store, "b");
        assert!(!lock_file(&store, "b").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
