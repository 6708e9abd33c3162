//! The SQLite backend: one file in the user's data directory, WAL, a busy timeout, and the schema version in
//! `PRAGMA user_version` with `PRAGMA application_id` marking the file as an envbench store.

use crate::error::StoreError;
use crate::liveness::{self, Liveness, RunLock};
use crate::schema::{APPLICATION_ID, Dialect, LATEST_VERSION};
use crate::sql::{Row, Sql, SqlValue};
use crate::store::{Backend, SqlStore};
use rusqlite::types::{ToSqlOutput, Value, ValueRef};
use rusqlite::{Connection, ErrorCode, OpenFlags};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a writer waits for another process's transaction before giving up with [`StoreError::Locked`].
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The connection to one SQLite file.
pub struct SqliteBackend {
    connection: Connection,
    path: PathBuf,
    /// Opened to read a store on a read-only file system: nothing is written, not even the journal mode.
    read_only: bool,
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
        let flags = if create {
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX
        } else {
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX
        };
        let connection = Connection::open_with_flags(path, flags)
            .map_err(|e| StoreError::CannotCreate { location: location.to_string(), reason: e.to_string() })?;
        connection.busy_timeout(busy_timeout).map_err(|e| classify(location, e))?;
        let backend = SqliteBackend { connection, path: path.to_path_buf(), read_only: false };
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
        let absolute = path
            .canonicalize()
            .map_err(|e| StoreError::Database { location: location.to_string(), message: e.to_string() })?;
        let connection = Connection::open_with_flags(
            format!("file://{}?immutable=1", uri_path(&absolute)),
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| classify(location, e))?;
        let backend = SqliteBackend { connection, path: path.to_path_buf(), read_only: true };
        SqlStore::prepare(backend, location.to_string(), false)
    }

    /// The file this store lives in.
    pub fn path(&self) -> &Path {
        &self.backend.path
    }
}

impl Backend for SqliteBackend {
    const DIALECT: Dialect = Dialect::Sqlite;

    fn connection<'a>(&'a self, location: &'a str) -> Box<dyn Sql + 'a> {
        Box::new(SqliteSql { connection: &self.connection, location })
    }

    fn schema_version(sql: &mut dyn Sql, location: &str) -> Result<i64, StoreError> {
        let application_id = sql.query_one("PRAGMA application_id", &[])?.int(0)?;
        let version = sql.query_one("PRAGMA user_version", &[])?.int(0)?;
        let tables = sql.query_one("SELECT count(*) FROM sqlite_master", &[])?.int(0)?;
        if application_id != APPLICATION_ID && (application_id != 0 || tables > 0) {
            return Err(StoreError::NotAStore(location.to_string()));
        }
        if version > LATEST_VERSION {
            return Err(StoreError::NewerSchema {
                location: location.to_string(),
                found: version,
                known: LATEST_VERSION,
            });
        }
        Ok(version)
    }

    fn configure(&self, location: &str) -> Result<(), StoreError> {
        if self.read_only {
            return Ok(());
        }
        let fail = |e| classify(location, e);
        self.connection.pragma_update(None, "journal_mode", "WAL").map_err(fail)?;
        self.connection.pragma_update(None, "synchronous", "NORMAL").map_err(fail)?;
        self.connection.pragma_update(None, "foreign_keys", "ON").map_err(fail)
    }

    fn set_schema_version(sql: &mut dyn Sql, version: i64) -> Result<(), StoreError> {
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

/// Statements on a SQLite connection.
struct SqliteSql<'a> {
    connection: &'a Connection,
    location: &'a str,
}

impl Sql for SqliteSql<'_> {
    fn execute(&mut self, sql: &str, values: &[SqlValue]) -> Result<u64, StoreError> {
        self.connection
            .prepare_cached(sql)
            .and_then(|mut statement| statement.execute(rusqlite::params_from_iter(values)))
            .map(|changed| changed as u64)
            .map_err(|e| classify(self.location, e))
    }

    fn query(&mut self, sql: &str, values: &[SqlValue]) -> Result<Vec<Row>, StoreError> {
        let fail = |e| classify(self.location, e);
        let mut statement = self.connection.prepare_cached(sql).map_err(fail)?;
        let columns = statement.column_count();
        let mut rows = statement.query(rusqlite::params_from_iter(values)).map_err(fail)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(fail)? {
            let mut cells = Vec::with_capacity(columns);
            for column in 0..columns {
                cells.push(match row.get_ref(column).map_err(fail)? {
                    ValueRef::Null => SqlValue::Null,
                    ValueRef::Integer(v) => SqlValue::Int(v),
                    ValueRef::Real(v) => SqlValue::Real(v),
                    ValueRef::Text(bytes) => SqlValue::Text(String::from_utf8_lossy(bytes).into_owned()),
                    ValueRef::Blob(_) => return Err(StoreError::Corrupt(format!("a blob in column {column}"))),
                });
            }
            out.push(Row(cells));
        }
        Ok(out)
    }

    fn batch(&mut self, sql: &str) -> Result<(), StoreError> {
        self.connection.execute_batch(sql).map_err(|e| classify(self.location, e))
    }
}

impl rusqlite::ToSql for SqlValue {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            SqlValue::Null => ToSqlOutput::Owned(Value::Null),
            SqlValue::Int(v) => ToSqlOutput::Owned(Value::Integer(*v)),
            SqlValue::Real(v) => ToSqlOutput::Owned(Value::Real(*v)),
            SqlValue::Text(v) => ToSqlOutput::Borrowed(ValueRef::Text(v.as_bytes())),
        })
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

/// A path as a `file:` URI's path: the characters a URI gives meaning to escaped.
fn uri_path(path: &Path) -> String {
    let mut text = String::new();
    for byte in path.as_os_str().as_bytes() {
        match byte {
            b'%' | b'?' | b'#' => text.push_str(&format!("%{byte:02x}")),
            33..=126 => text.push(char::from(*byte)),
            _ => text.push_str(&format!("%{byte:02x}")),
        }
    }
    text
}

/// SQLite's codes as errors a user can act on.
fn classify(location: &str, error: rusqlite::Error) -> StoreError {
    let location = location.to_string();
    match &error {
        rusqlite::Error::SqliteFailure(code, message) => match code.code {
            ErrorCode::NotADatabase => StoreError::NotAStore(location),
            ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => StoreError::Locked(location),
            ErrorCode::DatabaseCorrupt => StoreError::Corrupt(message.clone().unwrap_or_else(|| error.to_string())),
            ErrorCode::ReadOnly => StoreError::Database {
                location,
                message: "the store file or its directory is read-only; point --store at a writable file".into(),
            },
            ErrorCode::DiskFull => StoreError::Database {
                location,
                message: "the disk holding the store is full; free space or point --store elsewhere".into(),
            },
            _ => StoreError::Database { location, message: message.clone().unwrap_or_else(|| error.to_string()) },
        },
        _ => StoreError::Database { location, message: error.to_string() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_become_uri_paths_and_writable_file_systems_are_not_read_only() {
        assert_eq!(uri_path(Path::new("/data/a b/x?y#z%.db")), "/data/a%20b/x%3fy%23z%25.db");
        assert_eq!(uri_path(Path::new("/data/ré.db")), "/data/r%c3%a9.db");
        assert!(!read_only_file_system(&std::env::temp_dir().join("no-such-dir/results.db")));
    }
}
