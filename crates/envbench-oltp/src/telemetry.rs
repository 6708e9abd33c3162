//! What the database server itself counted during a step: PostgreSQL's commits, rollbacks, blocks read and hit of the
//! run's database (never the cluster's: another database's work, or one dropped mid-window, is not this run's), its
//! WAL bytes and checkpoints, and the wait events of the virtual users' sessions sampled from `pg_stat_activity`;
//! MariaDB/MySQL's `SHOW GLOBAL STATUS` counters, which count the whole server and are named so (there is no
//! per-database commit counter there, so no server TPM either). Taken at the start and end of each measured window,
//! the window the OS sampler summarizes, so the two line up. SQLite counts nothing of this kind.
//!
//! A counter that went backwards over the window (statistics reset, a server restarted) makes its figure unknown,
//! with the reason: no figure is ever stored below zero.

use crate::OltpError;
use envbench_sql::{Connection, Dialect};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The application name of the virtual users' sessions, by which their wait events are found.
pub const USER_APPLICATION: &str = "envbench-oltp user";

/// The counter of committed transactions, in every dialect that has one.
pub const COMMITS: &str = "commits";

/// The transactions the server ended in the run's database, as HammerDB counts its TPM: PostgreSQL's
/// `xact_commit + xact_rollback` of the target database, less the statements envbench's own monitoring sent there.
pub const SERVER_TRANSACTIONS: &str = "server transactions";

/// MariaDB/MySQL status variables and the names envbench shows them by: the whole server's, so their commits are
/// not the run's ([`COMMITS`] and [`SERVER_TRANSACTIONS`] stay unknown there).
const MYSQL_COUNTERS: &[(&str, &str)] = &[
    ("Com_commit", "server-wide commits"),
    ("Com_rollback", "server-wide rollbacks"),
    ("Innodb_data_reads", "innodb data reads"),
    ("Innodb_data_fsyncs", "innodb fsyncs"),
    ("Innodb_os_log_written", "log bytes written"),
    ("Innodb_row_lock_waits", "row lock waits"),
    ("Innodb_buffer_pool_reads", "buffer pool reads"),
    ("Innodb_buffer_pool_read_requests", "buffer pool read requests"),
];

/// Counter values at one moment.
pub type Counters = BTreeMap<String, f64>;

/// The server's counters now; counters a server does not offer (or this user may not read) are left out.
pub fn snapshot(connection: &mut dyn Connection) -> Result<Counters, OltpError> {
    let mut counters = Counters::new();
    match connection.dialect() {
        Dialect::Sqlite => {}
        Dialect::Postgres => {
            if let Some(row) = connection.query_optional(
                "SELECT xact_commit, xact_rollback, blks_read, blks_hit FROM pg_stat_database \
                 WHERE datname = current_database()",
                &[],
            )? {
                for (i, name) in [COMMITS, "rollbacks", "blocks read", "blocks hit"].into_iter().enumerate() {
                    counters.insert(name.to_string(), row.real(i)?);
                }
            }
            if let (Some(commits), Some(rollbacks)) = (counters.get(COMMITS), counters.get("rollbacks")) {
                counters.insert(SERVER_TRANSACTIONS.into(), commits + rollbacks);
            }
            // Nothing is sent that this server lacks, so no error lands in its log: a standby has no current WAL
            // position, and PostgreSQL 17 moved the checkpoint counters to pg_stat_checkpointer. A counter this user
            // may not read is left out.
            if let Ok(Some(row)) = connection.query_optional(
                "SELECT CASE WHEN pg_is_in_recovery() THEN NULL \
                 ELSE (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint END",
                &[],
            ) && !row.is_null(0)
            {
                counters.insert("WAL bytes".into(), row.real(0)?);
            }
            let version = connection.server_version_number()?.unwrap_or(0);
            if let Ok(Some(row)) = connection.query_optional(checkpoints_query(version), &[]) {
                counters.insert("checkpoints".into(), row.real(0)?);
            }
        }
        Dialect::MySql => {
            for row in connection.query("SHOW GLOBAL STATUS", &[])? {
                let name = row.text(0)?;
                if let Some((_, shown)) =
                    MYSQL_COUNTERS.iter().find(|(variable, _)| variable.eq_ignore_ascii_case(&name))
                    && let Ok(value) = row.real(1)
                {
                    counters.insert(shown.to_string(), value);
                }
            }
        }
    }
    Ok(counters)
}

/// The statement that counts PostgreSQL's checkpoints on a server of this `server_version_num`: version 17 moved the
/// counters from `pg_stat_bgwriter` to `pg_stat_checkpointer`.
fn checkpoints_query(version_number: u32) -> &'static str {
    if version_number >= 170_000 {
        "SELECT num_timed + num_requested FROM pg_stat_checkpointer"
    } else {
        "SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter"
    }
}

/// What grew between two snapshots, and the counters that went backwards (left out: their figure is unknown).
pub fn delta(before: &Counters, after: &Counters) -> (Counters, Vec<String>) {
    let mut grew = Counters::new();
    let mut backwards = Vec::new();
    for (name, value) in after {
        let Some(was) = before.get(name) else { continue };
        if value >= was {
            grew.insert(name.clone(), value - was);
        } else {
            backwards.push(name.clone());
        }
    }
    (grew, backwards)
}

/// Take envbench's own `statements` in the run's database off the transaction counters (each was a transaction of
/// its own there): the monitoring is not the workload.
pub fn without_own(mut counters: Counters, statements: u64) -> Counters {
    for name in [COMMITS, SERVER_TRANSACTIONS] {
        if let Some(count) = counters.get_mut(name) {
            *count = (*count - statements as f64).max(0.0);
        }
    }
    counters
}

/// Sample the wait events of the virtual users' active sessions every 100 ms until `stop`: how often each
/// `type:event` was seen (PostgreSQL only; empty elsewhere), and how many statements the sampling sent (each a
/// transaction of the run's database, which its counters take off).
pub fn sample_wait_events(connection: &mut dyn Connection, stop: &AtomicBool) -> (BTreeMap<String, u64>, u64) {
    let mut seen = BTreeMap::new();
    let mut sent = 0;
    if !connection.dialect().ops().wait_events {
        return (seen, sent);
    }
    while !stop.load(Ordering::SeqCst) {
        sent += 1;
        let Ok(rows) = connection.query(
            "SELECT wait_event_type, wait_event FROM pg_stat_activity WHERE application_name = ? AND \
             state = 'active' AND wait_event IS NOT NULL",
            &[USER_APPLICATION.into()],
        ) else {
            break;
        };
        for row in rows {
            if let (Ok(kind), Ok(event)) = (row.text(0), row.text(1)) {
                *seen.entry(format!("{kind}:{event}")).or_insert(0) += 1;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    (seen, sent)
}
