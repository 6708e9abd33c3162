//! A real PostgreSQL capture: pgbench (simple and extended protocol) and a client of our own on a private cluster
//! that logs to csvlog, jsonlog and stderr at once, read back from each.

use crate::common::{Cluster, calls, inspected};
use envbench_replay::{EventKind, StatementKind, open};
use envbench_sql::{DatabaseUrl, Value};

const PGBENCH_UPDATE: &str = "update pgbench_accounts set abalance = abalance + $1 where aid = $2";

#[test]
fn a_pgbench_run_reads_the_same_from_csvlog_jsonlog_and_stderr() {
    let cluster = Cluster::start("pgbench");
    cluster.client("psql", &["-d", "postgres", "-qc", "CREATE DATABASE bench"]);
    cluster.client("pgbench", &["-i", "-q", "-s", "1", "bench"]);
    cluster.client("pgbench", &["-n", "-t", "20", "-c", "2", "-M", "simple", "bench"]);
    cluster.client("pgbench", &["-n", "-t", "15", "-c", "1", "-M", "extended", "bench"]);
    let mut own = DatabaseUrl::parse(&cluster.url("bench")).unwrap().connect("replay-test").unwrap();
    own.batch("SELECT 'it''s\nfine' AS note, 42 AS answer").unwrap();
    let quoted = "a 'quoted', value";
    own.query(
        "SELECT bid FROM pgbench_branches WHERE bid = $1 AND $2 <> ''",
        &[Value::Int(1), Value::Text(quoted.into())],
    )
    .unwrap();
    drop(own);
    cluster.wait_for_every_session_to_end();
    // The database's own count of the transactions pgbench ran, each with one UPDATE of pgbench_accounts.
    let history = cluster.client("psql", &["-d", "bench", "-Atc", "SELECT count(*) FROM pgbench_history"]);
    let transactions: u64 = history.trim().parse().unwrap();
    assert_eq!(transactions, 55);

    let csv = inspected(&cluster.log(".csv"));
    for extension in ["", ".json"] {
        let mut other = inspected(&cluster.log(extension));
        assert_ne!(other.format, csv.format);
        other.format = csv.format;
        for (skip, csv_skip) in other.skipped.iter_mut().zip(&csv.skipped) {
            skip.first_line = csv_skip.first_line;
        }
        assert_eq!(other, csv, "pg{extension} reads otherwise than pg.csv");
    }
    for extension in ["", ".csv", ".json"] {
        assert_eq!(calls(&cluster.log(extension), PGBENCH_UPDATE), transactions, "pg{extension}");
    }
    // Three UPDATEs and an INSERT per transaction; the SELECT of pgbench_accounts reads.
    assert!(csv.kinds[&StatementKind::Write] >= 4 * transactions, "{csv:?}");
    assert!(csv.kinds[&StatementKind::Read] >= transactions, "{csv:?}");
    assert!(csv.extended > 15 * 7, "pgbench -M extended's 7 statements a transaction, and ours: {csv:?}");
    assert_eq!(csv.with_durations, csv.statements, "every statement's duration is in the log");
    assert_eq!(csv.sessions, csv.sessions_ended);
    assert_eq!(csv.sessions_open_at_end, 0);
    assert!(csv.peak_concurrency >= 2, "{csv:?}");
    assert_eq!(csv.databases.keys().collect::<Vec<_>>(), ["bench", "postgres"]);
    let copy = csv.skipped.iter().find(|s| s.reason.starts_with("COPY FROM STDIN")).expect("pgbench -i's COPY");
    assert!(copy.example.contains("pgbench_accounts"), "{copy:?}");
    // pgbench's transaction, statement by statement, each as often as the database counted transactions (and one
    // BEGIN more, pgbench -i's).
    let top = |fingerprint: &str| csv.top.iter().find(|t| t.fingerprint == fingerprint).map(|t| t.calls);
    assert_eq!(top("begin"), Some(transactions + 1), "{:?}", csv.top);
    for fingerprint in [
        "end",
        PGBENCH_UPDATE,
        "select abalance from pgbench_accounts where aid = $1",
        "update pgbench_tellers set tbalance = tbalance + $1 where tid = $2",
        "update pgbench_branches set bbalance = bbalance + $1 where bid = $2",
        "insert into pgbench_history (tid, bid, aid, delta, mtime) values ($1, $2, $3, $4, current_timestamp)",
    ] {
        assert_eq!(top(fingerprint), Some(transactions), "{fingerprint}: {:?}", csv.top);
    }

    // Our own statements, text and parameters as sent, from each format.
    for extension in ["", ".csv", ".json"] {
        let mut reader = open(&cluster.log(extension)).unwrap();
        let (mut simple, mut bound) = (None, None);
        while let Some(event) = reader.next_event().unwrap() {
            if let EventKind::Statement(s) = event.kind {
                if s.sql.contains("it''s") {
                    simple = Some(s);
                } else if s.sql.starts_with("SELECT bid FROM pgbench_branches") {
                    bound = Some(s);
                }
            }
        }
        let simple = simple.expect("the simple query");
        assert_eq!(simple.sql, "SELECT 'it''s\nfine' AS note, 42 AS answer", "pg{extension}");
        assert!(!simple.extended && simple.parameters.is_empty());
        assert_eq!((simple.user.as_deref(), simple.database.as_deref()), (Some("postgres"), Some("bench")));
        let bound = bound.expect("the bound query");
        assert!(bound.extended, "pg{extension}");
        assert_eq!(bound.parameters, vec![Some("1".to_string()), Some(quoted.to_string())], "pg{extension}");
    }
}
