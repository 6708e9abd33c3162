//! What differs between servers in what they do, where the row ([`crate::DialectOps`]) holds what differs in data:
//! one implementation of [`Server`] per server, in its connection file (`sqlite_connection.rs`,
//! `postgres_connection.rs`, `mysql_connection.rs`), reached through [`crate::Dialect::server`], as fio's engines
//! fill one `ioengine_ops` table each and nothing else in fio names an engine. The workloads and this crate ask the
//! server; none matches on a dialect to decide, so a new server is its connection file, its row and the few files
//! the compiler lists (docs/development.md, "Adding a database target").

use crate::lock::{ServerLockError, ServerLockMode};
use crate::{Connection, DbError, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A URL's configuration as its server's driver parsed it (PostgreSQL's `postgres::Config`, MySQL's `mysql::Opts`,
/// SQLite's file path), made once by [`Server::check_url`] and kept in the [`crate::DatabaseUrl`], so nothing parses
/// the URL again on its way to the socket. Only the server that made it reads it.
pub type UrlConfig = Arc<dyn std::any::Any + Send + Sync>;

/// The configuration of `config` as the server that made it reads it: a [`crate::DatabaseUrl`] is only ever made
/// by its own server's [`Server::check_url`] (or [`crate::DatabaseUrl::sqlite`]), so another type is a bug here.
pub(crate) fn config_of<'a, T: 'static>(config: &'a UrlConfig, server: &str) -> &'a T {
    config.downcast_ref::<T>().unwrap_or_else(|| panic!("a {server} URL holds its driver's configuration"))
}

/// The server's own counters at one moment, by the names envbench shows them by.
pub type Counters = BTreeMap<String, f64>;

/// The counter of transactions committed in the run's database, where the server counts them per database.
pub const COMMITS: &str = "commits";
/// The counter of transactions rolled back in the run's database, beside [`COMMITS`].
pub const ROLLBACKS: &str = "rollbacks";

/// What tells one running server from every other: `key` (PostgreSQL's system identifier; MariaDB's host, data
/// directory and port), which a copy of the server keeps, and when it started, which a copy started elsewhere does
/// not share. Two URLs reach one server when both agree, the start to within [`ServerIdentity::START_SLACK`]
/// seconds (MariaDB tells its start only as an uptime in whole seconds).
#[derive(Clone, Debug, PartialEq)]
pub struct ServerIdentity {
    pub key: String,
    /// The start, in seconds since the Unix epoch on the server's clock; `None` where the server does not tell.
    pub started: Option<f64>,
    /// Both in words, for a message.
    pub words: String,
}

impl ServerIdentity {
    /// How far apart two answers of one server's start may be.
    pub const START_SLACK: f64 = 2.0;

    /// `self` and `other` are one running server.
    pub fn same_server(&self, other: &ServerIdentity) -> bool {
        self.key == other.key
            && match (self.started, other.started) {
                (Some(a), Some(b)) => (a - b).abs() <= Self::START_SLACK,
                _ => true,
            }
    }
}

/// One range partition of a table: its name, and the values of the partition column it takes, from `.1` (inclusive,
/// `None`: everything below) up to `.2` (exclusive, `None`: everything above).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RangePartition {
    pub name: String,
    pub from: Option<i64>,
    pub to: Option<i64>,
}

/// What a server does that another does differently. Every method says what it is for; none has a default, so a
/// new server fills each one, as the compiler lists them.
pub trait Server: Sync {
    /// The URL schemes that name this server (`postgres`, `postgresql`), with the first the one messages show;
    /// empty for an embedded database, named by its file.
    fn schemes(&self) -> &'static [&'static str];

    /// Parse a URL of one of [`Server::schemes`] as the driver reads it, once: the URL to keep (a scheme that is
    /// another's name for the same server rewritten to the driver's) and the driver's configuration; why not, in the
    /// driver's words.
    fn check_url(&self, url: &str) -> Result<(String, UrlConfig), String>;

    /// Open a connection with `config` (what [`Server::check_url`] made, or an embedded database's file), `shown`
    /// without its password for messages; `application` names it in the server's session list.
    fn connect(&self, config: &UrlConfig, shown: &str, application: &str) -> Result<Box<dyn Connection>, DbError>;

    /// The server of `config` runs on this machine (loopback or a socket), so its data directory's storage is this
    /// machine's.
    fn is_local(&self, config: &UrlConfig) -> bool;

    /// The query of the server's data directory (one row, one text column, no row for a user who may not see it);
    /// `None` where there is none to ask for.
    fn data_directory(&self) -> Option<&'static str>;

    /// What tells this running server from every other ([`ServerIdentity::same_server`]): two URLs that reach it
    /// give the same, and a copy of it started elsewhere (a clone, a restored backup) another. `None` for an
    /// embedded database, which is its file.
    fn identity(&self, session: &mut dyn Connection) -> Result<Option<ServerIdentity>, DbError>;

    /// The log files the server writes now, as paths on its own host; empty where the session may not see them.
    fn log_files(&self, session: &mut dyn Connection) -> Vec<std::path::PathBuf>;

    /// What a run lock's key holds of the server's place beside the namespace (PostgreSQL's database: its
    /// advisory locks are the cluster's), asked on the lock's own session.
    fn lock_scope(&self, session: &mut dyn Connection) -> Result<String, DbError>;

    /// Take the run lock keyed `key` in `mode` on `session`, without waiting; `label` names it in a refusal, which
    /// names its holder as well as the server tells.
    fn take_lock(
        &self,
        session: &mut dyn Connection,
        key: &str,
        mode: ServerLockMode,
        label: &str,
    ) -> Result<(), ServerLockError>;

    /// The statement that releases every run lock of a session before it closes; `None` where there are none.
    fn release_locks(&self) -> Option<&'static str>;

    /// `CREATE TABLE` of a table for a benchmark's load, `name` qualified and `columns` adapted: with its primary key
    /// where the server clusters rows on it (added after the load elsewhere, which is faster), and the storage
    /// options a load that fills it whole wants.
    fn create_table(&self, name: &str, columns: &str, key: Option<&str>) -> String;

    /// The statement that adds a table's primary key after its load (`key_name` the key's index, where the server
    /// names one), or `None` where the key was made with the table.
    fn add_key(&self, table: &str, key_name: &str, key: &str) -> Option<String>;

    /// The statements that create `name` split by `column` into `partitions`, its primary key `key` (which holds
    /// the column), or `None` where the server has no partitions.
    fn create_partitioned(
        &self,
        name: &str,
        columns: &str,
        key: &str,
        column: &str,
        partitions: &[RangePartition],
    ) -> Option<Vec<String>>;

    /// The query of the partitions of table `?` (second parameter) in namespace `?` (first), by name in order;
    /// `None` where there are none.
    fn partitions(&self) -> Option<&'static str>;

    /// The statements that gather the planner's statistics of `tables` (qualified) after a load.
    fn gather_statistics(&self, tables: &[String]) -> Vec<String>;

    /// Settle `tables` (qualified) before a measured step, as HammerDB does before its timed run, so each step
    /// starts from the same kind of state: a note when a part was not allowed to this user.
    fn settle(&self, connection: &mut dyn Connection, tables: &[String]) -> Result<Option<String>, DbError>;

    /// The statement that calls stored routine `routine` (qualified) with `arguments` placeholders, answering rows;
    /// `None` where there are no stored routines.
    fn call(&self, routine: &str, arguments: usize) -> Option<String>;

    /// A list of `[a, b, c]` rows as a routine's arguments take it (PostgreSQL: three arrays of integers;
    /// MariaDB/MySQL: one JSON array of rows), read in one pass; `None` where there are no stored routines.
    fn list_arguments(&self, rows: &mut dyn Iterator<Item = [i64; 3]>) -> Option<Vec<Value>>;

    /// How many arguments [`Server::list_arguments`] makes of a list, whatever its length; `None` where there are
    /// no stored routines.
    fn list_argument_count(&self) -> Option<usize>;

    /// The server's own counters now (what it counted for the run's database where it counts per database, named
    /// `server-wide ...` where it counts only for the whole server); a counter this user may not read is left out,
    /// and nothing is sent that this server lacks, so no error lands in its log.
    fn counters(&self, connection: &mut dyn Connection) -> Result<Counters, DbError>;
}

/// A host name that is this machine: `localhost`, `::1`, or an address in 127.0.0.0/8.
pub(crate) fn is_loopback_name(host: &str) -> bool {
    matches!(host, "localhost" | "::1" | "[::1]") || host.starts_with("127.")
}

#[cfg(test)]
mod tests {
    use super::ServerIdentity;

    #[test]
    fn one_server_is_its_key_and_its_start_a_copy_started_apart_is_another() {
        let at = |key: &str, started: Option<f64>| ServerIdentity { key: key.into(), started, words: String::new() };
        assert!(at("7301", Some(100.0)).same_server(&at("7301", Some(101.5))), "an uptime in whole seconds");
        assert!(!at("7301", Some(100.0)).same_server(&at("7301", Some(4000.0))), "a clone, started later");
        assert!(!at("7301", Some(100.0)).same_server(&at("7302", Some(100.0))));
        assert!(at("7301", None).same_server(&at("7301", Some(100.0))), "no start told: the key decides");
    }
}
