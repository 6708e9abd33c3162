//! The SQLite backend: one file in the user's data directory, WAL, a busy timeout, and the schema version in
//! `PRAGMA user_version` with `PRAGMA application_id` marking the file as an envbench store.

use crate::error::StoreError;
use crate::liveness::{self, Liveness, RunLock};
use crate::schema::{APPLICATION_ID, Dialect, Rules, known_version};
use crate::sql::{Sql, SqlValue, store_error};
use crate::store::{Backend, SqlStore};
use envbench_sql::{Connection, ErrorKind, SqliteOpen};
use std::cell::RefCell;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a writer waits for another process's transaction before giving up with [`StoreError::Locked`].
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The connection to one SQLite file.
pub struct SqliteBackend {
    /// Reads need a mutable connection too; the store is used from one thread at a time.
    connection: RefCell<Box<dyn Connection>>,
    path: PathBuf,
    /// How the connection names the file in its messages.
    shown: String,
    /// Opened to read a store on a read-only file system: nothing is written, not even the journal mode.
    read_only: bool,
}

impl SqliteBackend {
    fn open(path: &Path, how: SqliteOpen) -> Result<SqliteBackend, envbench_sql::DbError> {
        Ok(SqliteBackend {
            connection: RefCell::new(envbench_sql::open_sqlite(path, how)?),
            path: path.to_path_buf(),
            shown: path.display().to_string(),
            read_only: how.read_only,
        })
    }
}

/// A results store in one SQLite file.
pub type SqliteStore = SqlStore<SqliteBackend>;

impl SqlStore<SqliteBackend> {
    /// Open (and when `create`, create) the store at `path`, bringing its schema up to date.
    pub fn open(path: &Path, create: bool) -> Result<SqliteStore, StoreError> {
        Self::open_with_timeout(path, create, BUSY_TIMEOUT)
    }

    /// [`SqliteStore::open`] with a chosen time to wait for other writers. A store on a read-only file system is
    /// opened for reading when `create` is false (and its journal holds nothing unmerged), and refused, saying so,
    /// when it is to be written.
    pub fn open_with_timeout(path: &Path, create: bool, busy_timeout: Duration) -> Result<SqliteStore, StoreError> {
        let location = envbench_core::text::printable(&path.display().to_string());
        let opened = if !create && path.is_file() && read_only_file_system(path) {
            Self::open_read_only(path, &location)
        } else {
            Self::open_writable(path, &location, create, busy_timeout)
        };
        opened.map_err(|error| match error {
            StoreError::CannotCreate { .. } | StoreError::Database { .. } if read_only_file_system(path) => {
                StoreError::ReadOnlyFileSystem { location: location.clone(), what_to_do: READ_ONLY_ADVICE }
            }
            other => other,
        })
    }

    fn open_writable(
        path: &Path,
        location: &str,
        create: bool,
        busy_timeout: Duration,
    ) -> Result<SqliteStore, StoreError> {
        let location = location.to_string();
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => return Err(StoreError::NotAFile { location, what: "a directory" }),
            Ok(meta) if !meta.is_file() => {
                return Err(StoreError::NotAFile { location, what: "a device or special file" });
            }
            Ok(_) => {}
            Err(_) if !create => return Err(StoreError::Missing(location)),
            Err(_) => {
                if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                    std::fs::create_dir_all(parent)
                        .map_err(|e| StoreError::CannotCreate { location: location.clone(), reason: e.to_string() })?;
                }
            }
        }
        // Some lock conflicts while a store is being created (switching to WAL, first migration) return BUSY without
        // waiting on the busy handler; retry them within the same time limit.
        let started = std::time::Instant::now();
        loop {
            match Self::try_open(path, &location, create, busy_timeout) {
                Err(StoreError::Locked(_)) if started.elapsed() < busy_timeout => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                outcome => return outcome,
            }
        }
    }

    fn try_open(path: &Path, location: &str, create: bool, busy_timeout: Duration) -> Result<SqliteStore, StoreError> {
        let shown = path.display().to_string();
        let backend =
            SqliteBackend::open(path, SqliteOpen { create, read_only: false, busy_timeout }).map_err(|e| {
                match e.kind {
                    ErrorKind::Refused => StoreError::CannotCreate {
                        location: location.to_string(),
                        reason: e.detail(&shown).to_string(),
                    },
                    _ => store_error(location, &shown, e),
                }
            })?;
        SqlStore::prepare(backend, location.to_string(), create)
    }

    /// Read a store on a read-only file system. SQLite reads a WAL store only with its shared-memory file beside it,
    /// which cannot be made there; opened as immutable it needs none. Nothing can change the file meanwhile, but
    /// changes still in its `-wal` file would be missed: such a store is refused, with what to do.
    fn open_read_only(path: &Path, location: &str) -> Result<SqliteStore, StoreError> {
        let mut journal = path.as_os_str().to_owned();
        journal.push("-wal");
        if std::fs::metadata(&journal).is_ok_and(|meta| meta.len() > 0) {
            return Err(StoreError::ReadOnlyFileSystem {
                location: location.to_string(),
                what_to_do: UNMERGED_JOURNAL_ADVICE,
            });
        }
        let how = SqliteOpen { create: false, read_only: true, busy_timeout: BUSY_TIMEOUT };
        let backend =
            SqliteBackend::open(path, how).map_err(|e| store_error(location, &path.display().to_string(), e))?;
        SqlStore::prepare(backend, location.to_string(), false)
    }

    /// The file this store lives in.
    pub fn path(&self) -> &Path {
        &self.backend.path
    }
}

impl Backend for SqliteBackend {
    const RULES: &'static dyn Rules = &SqliteRules;

    fn reserve_ids(sql: &mut Sql<'_>, table: &str, count: usize) -> Result<Vec<i64>, StoreError> {
        // The write transaction (BEGIN IMMEDIATE) holds the database's write lock, and rows are never deleted: the
        // ids past the largest are free until it commits.
        let largest = sql.query_one(&format!("SELECT coalesce(max(id), 0) FROM {table}"), &[])?.int(0)?;
        Ok((1..=count as i64).map(|i| largest + i).collect())
    }

    fn connection<'a>(&'a self, location: &'a str) -> Sql<'a> {
        Sql::new(self.connection.borrow_mut(), location, &self.shown)
    }

    fn schema_version(sql: &mut Sql<'_>, location: &str) -> Result<i64, StoreError> {
        let application_id = sql.query_one("PRAGMA application_id", &[])?.int(0)?;
        let version = sql.query_one("PRAGMA user_version", &[])?.int(0)?;
        let tables = sql.query_one("SELECT count(*) FROM sqlite_master", &[])?.int(0)?;
        if application_id != APPLICATION_ID && (application_id != 0 || tables > 0) {
            return Err(StoreError::NotAStore(location.to_string()));
        }
        known_version(location, version)
    }

    fn has_index(sql: &mut Sql<'_>, name: &str) -> Result<bool, StoreError> {
        let query = "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = ?";
        Ok(sql.query_one(query, &[SqlValue::from(name)])?.int(0)? > 0)
    }

    fn configure(&self, location: &str) -> Result<(), StoreError> {
        if self.read_only {
            return Ok(());
        }
        let mut sql = self.connection(location);
        // The journal mode pragma answers with a row.
        sql.query("PRAGMA journal_mode = WAL", &[])?;
        sql.batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;")
    }

    fn set_schema_version(sql: &mut Sql<'_>, version: i64) -> Result<(), StoreError> {
        sql.batch(&format!("PRAGMA user_version = {version}; PRAGMA application_id = {APPLICATION_ID};"))
    }

    fn hold_run(&self, uuid: &str, command: &str) -> Option<RunLock> {
        liveness::take_file(&self.path, uuid, command)
    }

    fn run_liveness(&self, uuid: &str) -> Liveness {
        liveness::probe_file(&self.path, uuid)
    }

    fn clear_run(&self, uuid: &str) {
        liveness::clear_file(&self.path, uuid);
    }
}

/// What to do about a store on a read-only file system that is to be written.
const READ_ONLY_ADVICE: &str = "point --store (or ENVBENCH_STORE) at a file on a writable file system, or remount this \
    one read-write";

/// What to do about a store on a read-only file system whose last changes are still in its journal.
const UNMERGED_JOURNAL_ADVICE: &str = "its last changes are still in its -wal file, which SQLite merges only where it \
    may write: copy the store with its -wal file to a writable file system and point --store (or ENVBENCH_STORE) at \
    the copy";

/// Whether the file system that holds `path`, or would hold it (that of its nearest existing directory), is mounted
/// read-only.
fn read_only_file_system(path: &Path) -> bool {
    let mut candidate = Some(path);
    while let Some(here) = candidate {
        let here = if here.as_os_str().is_empty() { Path::new(".") } else { here };
        if here.exists() {
            let Ok(text) = std::ffi::CString::new(here.as_os_str().as_bytes()) else { return false };
            // SAFETY: statvfs writes only into the struct we own; the path is NUL-terminated.
            let mut stats: libc::statvfs = unsafe { std::mem::zeroed() };
            return unsafe { libc::statvfs(text.as_ptr(), &mut stats) } == 0 && stats.f_flag & libc::ST_RDONLY != 0;
        }
        candidate = here.parent();
    }
    false
}

/// SQLite's triggers for the store's append-only rules.
pub(crate) struct SqliteRules;

impl Rules for SqliteRules {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn preamble(&self) -> &'static str {
        ""
    }

    fn append_only(&self, table: &str, what: &str) -> String {
        format!(
            "CREATE TRIGGER {what}_no_update BEFORE UPDATE ON {table}\n    \
                 BEGIN SELECT RAISE(ABORT, 'envbench {what} are append-only'); END;\n    \
                 CREATE TRIGGER {what}_no_delete BEFORE DELETE ON {table}\n    \
                 BEGIN SELECT RAISE(ABORT, 'envbench {what} are append-only'); END;\n"
        )
    }

    fn only_while_running(&self, table: &str, what: &str, run_status: &str) -> String {
        format!(
            "CREATE TRIGGER {what}_only_while_running BEFORE INSERT ON {table}\n    \
                 WHEN ({run_status}) IS NOT 'running'\n    \
                 BEGIN SELECT RAISE(ABORT, 'envbench {what} are append-only: a run that has ended takes no more'); \
                 END;\n"
        )
    }

    fn revoke_once(&self, refused: &str, message: &str) -> String {
        format!(
            "CREATE TRIGGER upload_tokens_revoke_once BEFORE UPDATE ON upload_tokens\n    WHEN {refused}\n    \
                 BEGIN SELECT RAISE(ABORT, '{message}'); END;\n    \
                 CREATE TRIGGER upload_tokens_no_delete BEFORE DELETE ON upload_tokens\n    \
                 BEGIN SELECT RAISE(ABORT, '{message}'); END;\n"
        )
    }

    fn runs_end_once(&self, condition: &str, message: &str, replace: bool) -> String {
        format!(
            "{}CREATE TRIGGER runs_end_once BEFORE UPDATE ON runs\n    WHEN {condition}\n    \
                 BEGIN SELECT RAISE(ABORT, '{message}'); END;\n",
            if replace { "DROP TRIGGER runs_end_once;\n    " } else { "" }
        )
    }

    fn runs_no_delete(&self) -> &'static str {
        "CREATE TRIGGER runs_no_delete BEFORE DELETE ON runs\n    \
                            BEGIN SELECT RAISE(ABORT, 'envbench runs are append-only'); END;\n"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writable_file_systems_are_not_read_only() {
        assert!(!read_only_file_system(&std::env::temp_dir().join("no-such-dir/results.db")));
    }
}
