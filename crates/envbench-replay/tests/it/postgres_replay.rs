//! A capture replayed on PostgreSQL: pgbench's read-write and select-only runs captured on one database of a private
//! cluster, replayed read-only into a second database loaded the same way.

use crate::common::{Cluster, inspected};
use envbench_replay::{ReplayOptions, Speed, StatementKind, open, replay};
use envbench_sql::DatabaseUrl;
use std::sync::atomic::AtomicBool;

/// A checksum of every pgbench table's rows, as the server computes it.
fn checksum(cluster: &Cluster, database: &str) -> String {
    let tables = ["pgbench_accounts", "pgbench_branches", "pgbench_tellers", "pgbench_history"];
    let sql: Vec<String> = tables
        .iter()
        .map(|t| {
            format!("SELECT '{t}', count(*), md5(coalesce(string_agg(t::text, ',' ORDER BY t::text), '')) FROM {t} t")
        })
        .collect();
    cluster.client("psql", &["-d", database, "-Atc", &sql.join(" UNION ALL ")])
}

#[test]
fn a_read_only_replay_sends_every_read_and_changes_no_row() {
    let cluster = Cluster::start("replay");
    for database in ["captured", "target"] {
        cluster.client("psql", &["-d", "postgres", "-qc", &format!("CREATE DATABASE {database}")]);
        cluster.client("pgbench", &["-i", "-q", "-s", "1", database]);
    }
    cluster.client("pgbench", &["-n", "-t", "20", "-c", "2", "-M", "extended", "captured"]);
    cluster.client("pgbench", &["-n", "-S", "-t", "40", "-c", "2", "-M", "extended", "captured"]);
    cluster.client("pgbench", &["-n", "-S", "-t", "10", "-c", "1", "-M", "simple", "captured"]);
    // A table only the captured database has: its reads fail on the target, counted by kind of error.
    cluster.client("psql", &["-d", "captured", "-qc", "CREATE TABLE only_captured (x int)"]);
    for _ in 0..3 {
        cluster.client("psql", &["-d", "captured", "-qc", "SELECT count(*) FROM only_captured"]);
    }
    cluster.wait_for_every_session_to_end();
    // The capture as a file at rest: the cluster goes on logging (the replay's own sessions among it).
    let log = cluster.dir.parent().unwrap().join("capture.csv");
    std::fs::copy(cluster.log(".csv"), &log).unwrap();
    let captured = inspected(&log);
    let before = checksum(&cluster, "target");

    let url = DatabaseUrl::parse(&cluster.url("target")).unwrap();
    let connect = |_: usize| url.connect("envbench-replay");
    let mut reader = open(&log).unwrap();
    let options = ReplayOptions::one_target(Speed::Factor(2.0));
    let outcome = replay(reader.as_mut(), &connect, &options, &AtomicBool::new(false)).unwrap();

    assert_eq!(checksum(&cluster, "target"), before, "a read-only replay changed a row");
    let failing: Vec<_> = outcome.fingerprints.iter().filter(|f| !f.errors.is_empty()).collect();
    assert_eq!(outcome.failed, 3, "only the reads of a table the target lacks: {failing:?}");
    assert_eq!(failing.len(), 1, "{failing:?}");
    assert_eq!(failing[0].fingerprint, "select count(*) from only_captured");
    // PostgreSQL's 42P01 (no such table) is neither a conflict nor a refusal: "other", as envbench-sql sorts it.
    assert_eq!(failing[0].errors, [("other".to_string(), 3)].into(), "{failing:?}");
    assert_eq!(failing[0].response_ms.len(), 3, "a failed statement is timed too");
    assert_eq!(outcome.connect_failures, 0, "{:?}", outcome.connect_error);
    assert_eq!(outcome.skipped_writes, captured.kinds[&StatementKind::Write], "every write is counted, none sent");
    assert_eq!(outcome.replayed + outcome.skipped_writes, captured.statements);
    assert_eq!(outcome.not_replayable, captured.skipped.iter().map(|s| s.count).sum::<u64>());
    // Each fingerprint as often as captured: the reads sent, the writes counted.
    for counted in &captured.top {
        let replayed = outcome.fingerprints.iter().find(|f| f.fingerprint == counted.fingerprint).unwrap();
        assert_eq!(replayed.calls + replayed.skipped, counted.calls, "{}", counted.fingerprint);
        match counted.kind {
            StatementKind::Write => assert_eq!(replayed.calls, 0, "{}", counted.fingerprint),
            _ => assert_eq!(replayed.response_ms.len() as u64, counted.calls, "{}", counted.fingerprint),
        }
    }
    let select = outcome
        .fingerprints
        .iter()
        .find(|f| f.fingerprint == "select abalance from pgbench_accounts where aid = $1")
        .unwrap();
    assert_eq!(select.calls, 2 * 20 + 2 * 40 + 10, "the read-write run's, the select-only runs' (extended and simple)");
    assert!(select.captured_timed == select.calls && select.captured_ms > 0.0, "{select:?}");
    assert_eq!(outcome.sessions, captured.sessions);
    assert!(outcome.replayed_peak >= 2 && outcome.captured_peak >= 2, "{outcome:?}");
    // Half the captured span, at twice the speed (and never less).
    assert!(outcome.replayed_seconds >= outcome.captured_seconds / 2.0 * 0.9, "{outcome:?}");
    assert!(outcome.lag_p50_ms >= 0.0 && outcome.lag_max_ms >= outcome.lag_p99_ms);
}
