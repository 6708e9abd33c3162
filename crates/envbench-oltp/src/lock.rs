//! The lock an oltp run holds on its tables for its whole life, load and measurement included, so that two runs
//! never rebuild tables under each other: a run that uses a complete load shares it (parallel runs and a fleet's
//! users keep working), a run that builds the tables (`--fresh`, or a missing, old or unfinished load) holds it
//! alone. On SQLite it is a file lock beside the database ([`envbench_base::lock`]); on a server, a lock held by a
//! session of its own in the run's namespace ([`ServerLock`]). A run that cannot take it is refused before it
//! touches anything, with the holder named.

use crate::error::OltpError;
use crate::profile::Profile;
use envbench_base::lock::{FileLock, LockMode, LockRefused};
use envbench_sql::{DatabaseUrl, Namespace, ServerLock, ServerLockError, ServerLockMode};
use std::path::Path;

/// The lock file beside the SQLite database in `--dir`.
pub const LOCK_FILE: &str = "envbench-oltp.lock";

/// A held lock on a profile's tables, released when dropped.
pub struct TablesLock {
    exclusive: bool,
    _held: Held,
}

/// The lock itself, held only to be released when dropped.
enum Held {
    File { _lock: FileLock },
    Server { _lock: ServerLock },
}

impl TablesLock {
    /// Take the lock on `profile`'s tables without waiting: exclusively to build them, shared to use them. `dir` is
    /// the directory of the SQLite database (unused on a server); `workload` (oltp, htap) names this run to a run
    /// that finds the lock held.
    pub fn take(
        url: &DatabaseUrl,
        namespace: &Namespace,
        profile: Profile,
        dir: &Path,
        exclusive: bool,
        workload: &str,
    ) -> Result<TablesLock, OltpError> {
        let what = format!("the oltp {} tables", profile.name());
        let held = if url.dialect().ops().embedded {
            let mode = if exclusive { LockMode::Exclusive } else { LockMode::Shared };
            let command = envbench_base::lock::this_command_line();
            match FileLock::take(&dir.join(LOCK_FILE), mode, &command) {
                Ok(lock) => Held::File { _lock: lock },
                Err(LockRefused::Io { path, source }) => {
                    return Err(OltpError::Other(format!(
                        "{}: cannot take the lock on {what} ({source})",
                        path.display()
                    )));
                }
                Err(busy) => {
                    return Err(OltpError::Busy(format!(
                        "{}: {what} are in use by {}; wait for it to end, or use another --dir",
                        url.shown(),
                        busy.holder_text()
                    )));
                }
            }
        } else {
            let mode = if exclusive { ServerLockMode::Exclusive } else { ServerLockMode::Shared };
            let application = format!("envbench {workload}, pid {}", std::process::id());
            match ServerLock::take(url, namespace, &what, mode, &application) {
                Ok(lock) => Held::Server { _lock: lock },
                Err(ServerLockError::Database(error)) => return Err(error.into()),
                Err(busy) => return Err(OltpError::Busy(format!("{}: {busy}", url.shown()))),
            }
        };
        Ok(TablesLock { exclusive, _held: held })
    }

    /// True when this run holds the tables alone (it may build them).
    pub fn is_exclusive(&self) -> bool {
        self.exclusive
    }
}
