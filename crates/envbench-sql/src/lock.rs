//! The lock a run takes on the data it owns in a database server, so that two envbench runs never rebuild tables
//! under each other: a run that rebuilds takes it exclusively, runs that only read or use the tables share it.
//!
//! It is held by a session of its own for as long as the [`ServerLock`] lives; the server releases it when that
//! session ends, however the run ends (killed hard, machine lost), so it is never stale.
//! How each server takes it is its [`crate::Server::take_lock`]: PostgreSQL's session advisory locks, MariaDB's and
//! MySQL's user locks with reader slots; the key is derived from the server's scope ([`crate::Server::lock_scope`]),
//! the namespace and the resource. SQLite's data is a file: workloads lock it with `envbench_base::lock`.

use crate::namespace::Namespace;
use crate::{Connection, DatabaseUrl, DbError, ErrorKind};

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
pub(crate) fn fnv1a(text: &str) -> u32 {
    text.bytes().fold(0x811c_9dc5u32, |h, b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193))
}

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
        let server = url.dialect().server();
        let label = format!("{resource} in {} {}", namespace.dialect().ops().namespace_word, namespace.quoted());
        let key = format!("{}/{}/{resource}", server.lock_scope(session.as_mut())?, namespace.name());
        server.take_lock(session.as_mut(), &key, mode, &label)?;
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
        if let Some(release) = session.dialect().server().release_locks() {
            let _ = session.query_optional(release, &[]);
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
        let name = crate::mysql_connection::lock_name(
            &"x".repeat(500),
            &format!("r{}", crate::mysql_connection::READER_SLOTS - 1),
        );
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
                if url.dialect() == crate::Dialect::Postgres {
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
