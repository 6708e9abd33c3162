//! The lock a run takes on the data it owns in a database server, so that two envbench runs never rebuild tables
//! under each other: a run that rebuilds takes it exclusively, runs that only read or use the tables share it.
//!
//! It is held by a session of its own for as long as the [`ServerLock`] lives; the server releases it when that
//! session ends, however the run ends (killed hard, machine lost), so it is never stale.
//! - PostgreSQL: a session advisory lock (`pg_try_advisory_lock` and its `_shared` twin) on a key derived from the
//!   database, the namespace and the resource; the holder is named from `pg_locks` and `pg_stat_activity`.
//! - MariaDB/MySQL have user locks (`GET_LOCK`) but no shared ones, so readers take one of [`MYSQL_READER_SLOTS`]
//!   reader locks and then check that no writer holds the writer lock; a writer takes the writer lock and then checks
//!   that no reader slot is held. Each side re-checks after taking its own, so the two can both be refused but never
//!   both succeed.
//!
//! SQLite's data is a file: workloads lock it with `envbench_io::lock`.

use crate::namespace::Namespace;
use crate::{Connection, DatabaseUrl, DbError, Dialect, ErrorKind, Value};

/// How many runs may share a MariaDB/MySQL lock at once.
pub const MYSQL_READER_SLOTS: usize = 64;

/// Whether a run rebuilds the locked data or only uses it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerLockMode {
    Shared,
    Exclusive,
}

/// Why a lock was not taken: another run holds it (`holder` says who, as well as the server tells), or the server
/// failed.
#[derive(Debug)]
pub enum ServerLockError {
    Busy { resource: String, holder: String },
    Database(DbError),
}

impl std::fmt::Display for ServerLockError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServerLockError::Busy { resource, holder } => write!(
                f,
                "{resource} is in use by another envbench run ({holder}); wait for it to end, or use another schema"
            ),
            ServerLockError::Database(error) => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for ServerLockError {}

impl From<DbError> for ServerLockError {
    fn from(error: DbError) -> ServerLockError {
        ServerLockError::Database(error)
    }
}

/// A lock on a workload's data in one namespace of a server, held by its own session until dropped. The session is
/// never used again; it sits in a mutex only so the lock can be shared between threads (a run's users).
pub struct ServerLock {
    session: std::sync::Mutex<Box<dyn Connection>>,
    mode: ServerLockMode,
}

/// FNV-1a: a key that is the same on every machine and every build (std's hasher is neither).
fn fnv1a(text: &str) -> u32 {
    text.bytes().fold(0x811c_9dc5u32, |h, b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193))
}

/// The first key of every envbench advisory lock ("envb"), high bit clear so it reads the same as int4 and oid.
const POSTGRES_CLASS_KEY: i64 = 0x656e_7662 & 0x7fff_ffff;

impl ServerLock {
    /// Take the lock on `resource` (e.g. `oltp tpcc`) in `namespace` of the server at `url`, without waiting.
    /// `application` names the lock's session on the server (PostgreSQL's application_name), so another run that is
    /// refused can name this one.
    pub fn take(
        url: &DatabaseUrl,
        namespace: &Namespace,
        resource: &str,
        mode: ServerLockMode,
        application: &str,
    ) -> Result<ServerLock, ServerLockError> {
        let mut session = url.connect(application)?;
        let label = format!("{resource} in {} {}", schema_word(namespace.dialect()), namespace.quoted());
        let database = match session.dialect() {
            Dialect::Postgres => session.query_optional("SELECT current_database()", &[])?,
            Dialect::MySql => None,
            Dialect::Sqlite => {
                return Err(DbError::other("an SQLite database is locked through its file, not a server lock").into());
            }
        };
        let database = database.map(|row| row.text(0)).transpose()?.unwrap_or_default();
        let key_text = format!("{database}/{}/{resource}", namespace.name());
        match session.dialect() {
            Dialect::Postgres => postgres_take(session.as_mut(), &key_text, mode, &label)?,
            _ => mysql_take(session.as_mut(), &key_text, mode, &label)?,
        }
        Ok(ServerLock { session: std::sync::Mutex::new(session), mode })
    }

    pub fn mode(&self) -> ServerLockMode {
        self.mode
    }
}

/// Release the lock before the session closes: closing only asks the server to end the session, and a run that
/// takes the lock again at once could find it still held ("a session that has just ended"). Unlocking is a round trip
/// the server has answered by the time this returns; if it fails, the session's end still releases the lock.
impl Drop for ServerLock {
    fn drop(&mut self) {
        let session = self.session.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner);
        let release = match session.dialect() {
            Dialect::Postgres => "SELECT pg_advisory_unlock_all()",
            Dialect::MySql => "SELECT RELEASE_ALL_LOCKS()",
            Dialect::Sqlite => return,
        };
        let _ = session.query_optional(release, &[]);
    }
}

fn schema_word(dialect: Dialect) -> &'static str {
    if dialect == Dialect::MySql { "database" } else { "schema" }
}

fn postgres_take(
    session: &mut dyn Connection,
    key_text: &str,
    mode: ServerLockMode,
    label: &str,
) -> Result<(), ServerLockError> {
    let object_key = i64::from(fnv1a(key_text) & 0x7fff_ffff);
    let function = match mode {
        ServerLockMode::Shared => "pg_try_advisory_lock_shared",
        ServerLockMode::Exclusive => "pg_try_advisory_lock",
    };
    let keys = [Value::Int(POSTGRES_CLASS_KEY), Value::Int(object_key)];
    let taken = session.query_optional(&format!("SELECT {function}(?::int4, ?::int4)::int"), &keys)?;
    if taken.map(|row| row.int(0)).transpose()? == Some(1) {
        return Ok(());
    }
    // Who holds it: the sessions with a granted lock on the key that conflict with the mode asked for.
    let holders = session.query(
        "SELECT a.pid, COALESCE(NULLIF(a.application_name, ''), 'no application name'), \
                COALESCE(host(a.client_addr), 'a local socket'), to_char(a.backend_start, 'YYYY-MM-DD HH24:MI:SS'), \
                l.mode FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid \
         WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 \
           AND l.classid = ?::int8::oid AND l.objid = ?::int8::oid ORDER BY a.backend_start",
        &keys,
    )?;
    let described: Vec<String> = holders
        .iter()
        .take(3)
        .map(|row| {
            let reading = if row.text(4).unwrap_or_default().starts_with("Share") { ", reading" } else { "" };
            format!(
                "{} from {}, server process {}, connected since {}{reading}",
                row.text(1).unwrap_or_default(),
                row.text(2).unwrap_or_default(),
                row.text(0).unwrap_or_default(),
                row.text(3).unwrap_or_default()
            )
        })
        .collect();
    let mut holder = described.join("; ");
    if holders.len() > 3 {
        holder.push_str(&format!("; and {} more", holders.len() - 3));
    }
    if holder.is_empty() {
        holder = "a session that has just ended".into();
    }
    Err(ServerLockError::Busy { resource: label.to_string(), holder })
}

/// MariaDB/MySQL lock names are at most 64 characters: a hash of the key keeps them short and the same everywhere.
fn mysql_lock_name(key_text: &str, role: &str) -> String {
    format!("envbench:{:08x}:{role}", fnv1a(key_text))
}

fn mysql_take(
    session: &mut dyn Connection,
    key_text: &str,
    mode: ServerLockMode,
    label: &str,
) -> Result<(), ServerLockError> {
    let writer = mysql_lock_name(key_text, "w");
    let readers: Vec<String> =
        (0..MYSQL_READER_SLOTS).map(|slot| mysql_lock_name(key_text, &format!("r{slot}"))).collect();
    let get = |session: &mut dyn Connection, name: &str| -> Result<bool, DbError> {
        let row = session.query_optional("SELECT GET_LOCK(?, 0)", &[Value::Text(name.to_string())])?;
        Ok(row.is_some_and(|row| !row.is_null(0) && row.int(0).unwrap_or(0) == 1))
    };
    let release = |session: &mut dyn Connection, name: &str| {
        let _ = session.query_optional("SELECT RELEASE_LOCK(?)", &[Value::Text(name.to_string())]);
    };
    let busy = |session: &mut dyn Connection, connection_id: i64, reading: bool| {
        let found = session
            .query_optional(
                "SELECT HOST, USER, TIME FROM information_schema.PROCESSLIST WHERE ID = ?",
                &[Value::Int(connection_id)],
            )
            .ok()
            .flatten();
        let reading = if reading { ", reading" } else { "" };
        let holder = match found {
            Some(row) => format!(
                "connection {connection_id} from {} as {}, for {} s{reading}",
                row.text(0).unwrap_or_default(),
                row.text(1).unwrap_or_default(),
                row.text(2).unwrap_or_default()
            ),
            None => format!("connection {connection_id}{reading}"),
        };
        ServerLockError::Busy { resource: label.to_string(), holder }
    };
    let writer_holder = |session: &mut dyn Connection| -> Result<Option<i64>, DbError> {
        let row = session.query_optional("SELECT IS_USED_LOCK(?)", &[Value::Text(writer.clone())])?;
        row.filter(|row| !row.is_null(0)).map(|row| row.int(0)).transpose()
    };
    match mode {
        ServerLockMode::Exclusive => {
            if !get(session, &writer)? {
                let holder = writer_holder(session)?.unwrap_or(0);
                return Err(busy(session, holder, false));
            }
            let columns = vec!["IS_USED_LOCK(?)"; readers.len()].join(", ");
            let params: Vec<Value> = readers.iter().map(|name| Value::Text(name.clone())).collect();
            let row = session.query_optional(&format!("SELECT {columns}"), &params)?.unwrap_or_default();
            if let Some(reader) = (0..readers.len()).find(|&i| !row.is_null(i)) {
                let holder = row.int(reader)?;
                release(session, &writer);
                return Err(busy(session, holder, true));
            }
            Ok(())
        }
        ServerLockMode::Shared => {
            for slot in &readers {
                if !get(session, slot)? {
                    continue;
                }
                if let Some(holder) = writer_holder(session)? {
                    release(session, slot);
                    return Err(busy(session, holder, false));
                }
                return Ok(());
            }
            Err(ServerLockError::Busy {
                resource: label.to_string(),
                holder: format!("{MYSQL_READER_SLOTS} runs already share it, the most that can"),
            })
        }
    }
}

impl From<ServerLockError> for DbError {
    fn from(error: ServerLockError) -> DbError {
        match error {
            ServerLockError::Database(error) => error,
            busy => DbError::new(ErrorKind::Refused, busy.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_stable_and_mysql_names_short() {
        assert_eq!(fnv1a(""), 0x811c_9dc5);
        assert_eq!(fnv1a("a"), 0xe40c_292c);
        let name = mysql_lock_name(&"x".repeat(500), &format!("r{}", MYSQL_READER_SLOTS - 1));
        assert!(name.len() <= 64, "{name}");
    }

    /// Readers share, a writer is alone, and a refusal names the holder: on the local PostgreSQL and MariaDB
    /// servers CI runs.
    #[test]
    fn servers_lock_readers_and_writers_apart() {
        for url in ["postgres://postgres@127.0.0.1:5432/test", "mysql://root@127.0.0.1:3306/test"] {
            let url = DatabaseUrl::parse(url).unwrap();
            let namespace = {
                let mut connection = url.connect("envbench-lock-test").unwrap();
                Namespace::resolve(connection.as_mut(), None, false).unwrap()
            };
            let resource = format!("lock test {}", std::process::id());
            let take = |mode| ServerLock::take(&url, &namespace, &resource, mode, "envbench-lock-test");
            let first = take(ServerLockMode::Shared).unwrap();
            let second = take(ServerLockMode::Shared).unwrap();
            let refused = take(ServerLockMode::Exclusive).err().unwrap().to_string();
            assert!(refused.contains("reading") && refused.contains("another envbench run"), "{refused}");
            drop((first, second));
            let writer = take(ServerLockMode::Exclusive).unwrap();
            for mode in [ServerLockMode::Shared, ServerLockMode::Exclusive] {
                let refused = take(mode).err().unwrap().to_string();
                assert!(refused.contains(&format!("lock test {}", std::process::id())), "{refused}");
                if url.dialect() == Dialect::Postgres {
                    assert!(refused.contains("envbench-lock-test"), "{refused}");
                }
            }
            let other = ServerLock::take(&url, &namespace, "another resource", ServerLockMode::Exclusive, "t");
            assert!(other.is_ok(), "locks are per resource");
            drop(writer);
            assert!(take(ServerLockMode::Exclusive).is_ok(), "{}: released with its session", url.shown());
        }
    }
}
