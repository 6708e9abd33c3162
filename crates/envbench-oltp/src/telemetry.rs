//! What the database server itself counted during a step: PostgreSQL's commits, rollbacks, blocks read and hit of the
//! run's database (never the cluster's: another database's work, or one dropped mid-window, is not this run's), its
//! WAL bytes and checkpoints, and the wait events of the virtual users' sessions sampled from `pg_stat_activity`;
//! MariaDB/MySQL's `SHOW GLOBAL STATUS` counters, which count the whole server and are named so (there is no
//! per-database commit counter there, so no server TPM either). Taken at the start and end of each measured window,
//! the window the OS sampler summarizes, so the two line up. SQLite counts nothing of this kind.
//!
//! A counter that went backwards over the window (statistics reset, a server restarted) makes its figure unknown,
//! with the reason: no figure is ever stored below zero.

use crate::error::OltpError;
use envbench_sql::Connection;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

pub use envbench_sql::server::{COMMITS, Counters};

/// The application name of the virtual users' sessions, by which their wait events are found.
pub const USER_APPLICATION: &str = "envbench-oltp user";

/// The transactions the server ended in the run's database, as HammerDB counts its TPM: its commits and rollbacks
/// there (PostgreSQL's `xact_commit + xact_rollback` of the target database), less the statements envbench's own
/// monitoring sent there.
pub const SERVER_TRANSACTIONS: &str = "server transactions";

/// The server's counters now ([`envbench_sql::Server::counters`]), with [`SERVER_TRANSACTIONS`] where it counts the
/// run's database's commits and rollbacks.
pub fn snapshot(connection: &mut dyn Connection) -> Result<Counters, OltpError> {
    let mut counters = connection.dialect().server().counters(connection)?;
    if let (Some(commits), Some(rollbacks)) = (counters.get(COMMITS), counters.get(envbench_sql::server::ROLLBACKS)) {
        counters.insert(SERVER_TRANSACTIONS.into(), commits + rollbacks);
    }
    Ok(counters)
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
