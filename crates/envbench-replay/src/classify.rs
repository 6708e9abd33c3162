//! Whether a statement reads, writes, or steers its transaction or session, from its fingerprint. A replay skips
//! what writes unless told otherwise; the read-only sessions it opens are the guard that does not depend on this
//! reading (a function that writes, called from a SELECT, is refused by the server).

use serde::Serialize;

/// What a statement does, as far as its words say.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StatementKind {
    /// Reads and changes nothing: SELECT (without a row lock), SHOW, EXPLAIN without ANALYZE, VALUES, TABLE.
    Read,
    /// Changes data, the schema or the server, takes row locks, or might (what is not known to read).
    Write,
    /// Begins, ends or marks a transaction.
    Transaction,
    /// Sets the session up: SET, RESET, USE, DISCARD, DEALLOCATE.
    Session,
}

/// Functions that act on the server, other sessions or files rather than read, though a SELECT may call them: a
/// read-only session does not stop them all, so a statement that names one counts as a write and is never sent.
const SERVER_ACTIONS: [&str; 30] = [
    "pg_reload_conf",
    "pg_terminate_backend",
    "pg_cancel_backend",
    "pg_rotate_logfile",
    "pg_switch_wal",
    "pg_promote",
    "pg_create_restore_point",
    "pg_backup_start",
    "pg_backup_stop",
    "pg_start_backup",
    "pg_stop_backup",
    "pg_advisory_lock",
    "pg_advisory_xact_lock",
    "pg_try_advisory_lock",
    "pg_try_advisory_xact_lock",
    "pg_logical_emit_message",
    "pg_file_write",
    "pg_file_unlink",
    "pg_file_rename",
    "lo_import",
    "lo_export",
    "lo_unlink",
    "dblink_exec",
    "nextval",
    "setval",
    "set_config",
    "get_lock",
    "release_lock",
    "release_all_locks",
    "sys_exec",
];

/// What the statement of fingerprint `fingerprint` (see [`crate::fingerprint`]) does.
pub fn classify(fingerprint: &str) -> StatementKind {
    let text = fingerprint.trim_start_matches(['(', ' ']);
    let words: Vec<&str> = text.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|w| !w.is_empty()).collect();
    let has = |word: &str| words.contains(&word);
    // What would undo a replay's read-only session: it writes, as far as a replay is concerned.
    let unguards = words.windows(2).any(|w| w == ["read", "write"])
        || words.iter().any(|w| {
            matches!(*w, "default_transaction_read_only" | "transaction_read_only" | "tx_read_only" | "query_only")
        });
    if unguards || words.iter().any(|w| SERVER_ACTIONS.contains(w)) {
        return StatementKind::Write;
    }
    let locks = words.windows(2).any(|w| w[0] == "for" && matches!(w[1], "update" | "share" | "no" | "key"))
        || words.windows(3).any(|w| w[0] == "lock" && w[1] == "in" && w[2] == "share");
    match words.first().copied().unwrap_or("") {
        "select" | "values" | "table" if !locks && !has("into") => StatementKind::Read,
        // A WITH reads unless one of its parts writes (a data-modifying CTE).
        "with" if !locks && !["insert", "update", "delete", "merge", "into"].iter().any(|w| has(w)) => {
            StatementKind::Read
        }
        "show" | "describe" | "desc" | "help" => StatementKind::Read,
        "explain" if !has("analyze") && !has("analyse") => StatementKind::Read,
        "begin" | "start" | "commit" | "rollback" | "end" | "abort" | "savepoint" | "release" | "xa" => {
            StatementKind::Transaction
        }
        "set" if words.get(1) == Some(&"transaction") || words.get(2) == Some(&"transaction") => {
            StatementKind::Transaction
        }
        "set" | "reset" | "use" | "discard" | "deallocate" => StatementKind::Session,
        _ => StatementKind::Write,
    }
}

#[cfg(test)]
mod tests {
    use super::{StatementKind::*, classify};
    use crate::fingerprint;

    #[test]
    fn reads_writes_and_the_rest() {
        let cases = [
            ("SELECT abalance FROM pgbench_accounts WHERE aid = 1", Read),
            ("(select 1) union (select 2)", Read),
            ("select * from t where id = 1 for update", Write),
            ("SELECT * FROM t FOR NO KEY UPDATE", Write),
            ("select * from t lock in share mode", Write),
            ("select a into new_table from t", Write),
            ("with x as (select 1) select * from x", Read),
            ("with moved as (delete from a returning *) insert into b select * from moved", Write),
            ("EXPLAIN SELECT 1", Read),
            ("explain analyze delete from t", Write),
            ("SHOW search_path", Read),
            ("UPDATE pgbench_accounts SET abalance = 1", Write),
            ("insert into t values (1)", Write),
            ("CALL neword(1, 2)", Write),
            ("vacuum t", Write),
            ("begin", Transaction),
            ("START TRANSACTION READ ONLY", Transaction),
            ("SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE", Transaction),
            ("commit", Transaction),
            ("set search_path = app, public", Session),
            ("use test", Session),
            ("frobnicate everything", Write),
            // What would undo a read-only session.
            ("SET default_transaction_read_only = off", Write),
            ("SET SESSION TRANSACTION READ WRITE", Write),
            ("BEGIN READ WRITE", Write),
            ("set session characteristics as transaction read write", Write),
            ("PRAGMA query_only = OFF", Write),
            ("SET transaction_read_only = 0", Write),
            // What acts on the server, other sessions or files, though a SELECT calls it.
            ("select pg_reload_conf()", Write),
            ("SELECT pg_terminate_backend(123)", Write),
            ("select nextval('orders_id_seq')", Write),
            ("SELECT GET_LOCK('job', 10)", Write),
            ("select lo_export(1234, '/tmp/x')", Write),
            ("select pg_sleep(1)", Read),
        ];
        for (sql, kind) in cases {
            assert_eq!(classify(&fingerprint(sql)), kind, "{sql}");
        }
    }
}
