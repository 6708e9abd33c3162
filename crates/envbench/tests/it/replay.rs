//! `envbench replay` through the binary: a pgbench capture from a private cluster replayed read-only into a second
//! database loaded the same way, stored, and two replays compared, one of them under a 2 s lock on the table the
//! reads use.

#[path = "../../../envbench-replay/tests/it/common/cluster.rs"]
mod cluster;

use crate::common::{envbench, stderr, stdout};
use cluster::Cluster;
use serde_json::Value;

const SELECT: &str = "select abalance from pgbench_accounts where aid = $1";

fn ok(output: std::process::Output) -> std::process::Output {
    assert!(output.status.success(), "exit {:?}:\n{}\n{}", output.status.code(), stdout(&output), stderr(&output));
    output
}

#[test]
fn a_replay_is_stored_read_only_and_a_stall_shows_in_the_verdict() {
    let cluster = Cluster::start("cli-replay");
    for database in ["captured", "target"] {
        cluster.client("psql", &["-d", "postgres", "-qc", &format!("CREATE DATABASE {database}")]);
        cluster.client("pgbench", &["-i", "-q", "-s", "1", database]);
    }
    cluster.client("pgbench", &["-n", "-S", "-T", "3", "-c", "2", "-R", "200", "-M", "extended", "captured"]);
    cluster.client("pgbench", &["-n", "-t", "20", "-c", "1", "-M", "extended", "captured"]);
    cluster.wait_for_every_session_to_end();
    let dir = cluster.dir.parent().unwrap().to_path_buf();
    let capture = dir.join("capture.csv");
    std::fs::copy(cluster.log(".csv"), &capture).unwrap();
    let (capture, store) = (capture.to_str().unwrap().to_string(), dir.join("results.db"));
    let target = cluster.url("target");
    let rows = || {
        cluster.client(
            "psql",
            &["-d", "target", "-Atc", "SELECT sum(abalance), count(*) FROM pgbench_history, pgbench_accounts"],
        )
    };
    let before = rows();

    let quiet = ok(envbench(&store, &["replay", &capture, "--target", &target, "--label", "quiet", "--json"]));
    let json: Value = serde_json::from_slice(&quiet.stdout).unwrap();
    let outcome = &json["replay"]["outcome"];
    assert_eq!(outcome["failed"], 0, "{outcome}");
    assert!(outcome["skipped_writes"].as_u64().unwrap() >= 20 * 4, "pgbench's writes, counted: {outcome}");
    assert!(outcome["replayed"].as_u64().unwrap() >= 400, "{outcome}");
    assert_eq!(rows(), before, "a read-only replay changed a row");

    // The same capture, while another session holds the reads' table locked: for 2 s from the moment a replayed
    // session waits on it, however long the replay took to start.
    let url = target.clone();
    let (taken, locked) = std::sync::mpsc::channel();
    let locker = std::thread::spawn(move || {
        let connect = || envbench_sql::DatabaseUrl::parse(&url).unwrap().connect("stall").unwrap();
        let (mut holder, mut watcher) = (connect(), connect());
        holder.batch("BEGIN; LOCK TABLE pgbench_accounts IN ACCESS EXCLUSIVE MODE").unwrap();
        taken.send(()).unwrap();
        let waiting = "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'envbench-replay' AND \
                       wait_event_type = 'Lock'";
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while watcher.query(waiting, &[]).unwrap()[0].int(0).unwrap() == 0 {
            assert!(std::time::Instant::now() < deadline, "no replayed session waited on the lock");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        std::thread::sleep(std::time::Duration::from_secs(2));
        holder.batch("COMMIT").unwrap();
    });
    locked.recv().unwrap();
    let stalled = envbench(&store, &["replay", &capture, "--target", &target, "--label", "stalled"]);
    locker.join().unwrap();
    let text = stdout(&ok(stalled));
    assert!(text.contains("fidelity: ") && text.contains(SELECT), "{text}");

    let compared = ok(envbench(&store, &["compare", "--json", "quiet", "stalled"]));
    let json: Value = serde_json::from_slice(&compared.stdout).unwrap();
    let row = json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["test_id"] == SELECT && r["metric"] == "response_time")
        .unwrap_or_else(|| panic!("no row of {SELECT}: {json}"));
    let change = &row["cells"][1]["change"];
    assert_eq!(change["significance"], "significant", "{row}");
    // The ratio is a speed factor (above 1 is better): the stalled replay's reads are slower.
    assert!(change["ratio"].as_f64().unwrap() < 1.0, "{row}");
    let verdict = &json["verdicts"][0]["workloads"][0];
    assert_eq!(verdict["workload"], "replay");
    // The workload is every call together, so the stall decides it: slower, or (on a host busy enough that the
    // sampler flags a replay as disturbed) not called: never faster. The stalled statement is named.
    assert_eq!((verdict["tests"].as_u64(), verdict["worse"].as_u64()), (Some(1), Some(1)), "{verdict}");
    assert!(["slower", "cannot_tell"].contains(&verdict["decision"].as_str().unwrap()), "{verdict}");
    let named = verdict["explanations"][0].as_str().unwrap();
    assert!(named.starts_with("Slower, the worst first: ") && named.contains(SELECT), "{verdict}");
    let text = stdout(&ok(envbench(&store, &["compare", "quiet", "stalled"])));
    let line = text.lines().find(|l| l.contains("Slower, the worst first: ")).unwrap_or_else(|| panic!("{text}"));
    assert!(text.contains("your own workload") && line.contains(SELECT), "{text}");
    assert_eq!(rows(), before, "the replays changed a row");

    // Ctrl-C once a replayed session works on the target (a replay at a tenth of the pace, and a statement held
    // behind a lock): the run is kept as interrupted, and no session of it is left on the server.
    let mut holder = envbench_sql::DatabaseUrl::parse(&target).unwrap().connect("stall").unwrap();
    holder.batch("BEGIN; LOCK TABLE pgbench_accounts IN ACCESS EXCLUSIVE MODE").unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_envbench"))
        .args(["replay", &capture, "--target", &target, "--speed", "0.1", "--label", "interrupted"])
        .env("ENVBENCH_STORE", &store)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let sessions = |state: &str| {
        let sql = format!("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'envbench-replay'{state}");
        cluster.client("psql", &["-d", "postgres", "-Atc", &sql]).trim().parse::<u32>().unwrap()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while sessions(" AND wait_event_type = 'Lock'") == 0 {
        assert!(std::time::Instant::now() < deadline && child.try_wait().unwrap().is_none(), "no session waited");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert_eq!(child.wait().unwrap().code(), Some(130), "Ctrl-C ends a replay with 130");
    holder.batch("COMMIT").unwrap();
    // The server drops a closed session's entry a moment after the client has gone.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while sessions("") > 0 {
        assert!(std::time::Instant::now() < deadline, "a session of the interrupted replay is left on the server");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let listed = crate::common::runs(&store);
    assert_eq!((listed[0]["label"].as_str(), listed[0]["status"].as_str()), (Some("interrupted"), Some("interrupted")));
    assert_eq!(rows(), before);
}

/// `--allow-writes` is refused without `--source`, on the capture's own server (by its identity, and by the log it
/// writes whatever `--source` says), and replays every write on another server, each captured database on a target
/// of its own, the result saying so.
#[test]
fn writes_are_replayed_only_on_another_server_each_database_on_its_own_target() {
    let source = Cluster::start("cli-replay-source");
    for database in ["captured", "reads", "target"] {
        source.client("psql", &["-d", "postgres", "-qc", &format!("CREATE DATABASE {database}")]);
        source.client("pgbench", &["-i", "-q", "-s", "1", database]);
    }
    // The capture starts after the loading: its log's lines from here on.
    source.wait_for_every_session_to_end();
    let loaded = std::fs::metadata(source.log(".csv")).unwrap().len() as usize;
    source.client("pgbench", &["-n", "-t", "15", "-c", "1", "-M", "extended", "captured"]);
    source.client("pgbench", &["-n", "-S", "-t", "25", "-c", "1", "-M", "simple", "reads"]);
    source.wait_for_every_session_to_end();
    let dir = source.dir.parent().unwrap().to_path_buf();
    let capture = dir.join("capture.csv");
    std::fs::write(&capture, &std::fs::read(source.log(".csv")).unwrap()[loaded..]).unwrap();
    let (capture, store) = (capture.to_str().unwrap().to_string(), dir.join("results.db"));
    let history = |cluster: &Cluster, database: &str| {
        let sql = "SELECT count(*) || ' ' || coalesce(sum(delta), 0) FROM pgbench_history";
        cluster.client("psql", &["-d", database, "-Atc", sql]).trim().to_string()
    };
    let before = history(&source, "target");
    let refused = |args: &[&str], says: &str| {
        let output = envbench(&store, args);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {}\n{}", stdout(&output), stderr(&output));
        assert!(stderr(&output).contains(says), "{args:?}: {}", stderr(&output));
    };
    let on_source = source.url("target");
    refused(&["replay", &capture, "--target", &on_source, "--allow-writes"], "--source");
    refused(
        &["replay", &capture, "--target", &on_source, "--allow-writes", "--source", &source.url("postgres")],
        "is the server the capture came from (system identifier ",
    );
    assert_eq!(history(&source, "target"), before, "a refused replay wrote");

    let other = Cluster::start("cli-replay-copy");
    for database in ["writes", "reads"] {
        other.client("psql", &["-d", "postgres", "-qc", &format!("CREATE DATABASE {database}")]);
        other.client("pgbench", &["-i", "-q", "-s", "1", database]);
    }
    // The live log the source writes, replayed with --source naming another server: still the source.
    let live = source.log(".csv");
    refused(
        &[
            "replay",
            live.to_str().unwrap(),
            "--target",
            &on_source,
            "--allow-writes",
            "--source",
            &other.url("postgres"),
        ],
        "writes ",
    );
    // Several targets: the two captured databases, each on its own.
    let routes = [format!("captured={}", other.url("writes")), format!("reads={}", other.url("reads"))];
    let allowed = ok(envbench(
        &store,
        &[
            "replay",
            &capture,
            "--target",
            &routes[0],
            "--target",
            &routes[1],
            "--speed",
            "4",
            "--allow-writes",
            "--source",
            &source.url("postgres"),
            "--json",
        ],
    ));
    let json: Value = serde_json::from_slice(&allowed.stdout).unwrap();
    let outcome = &json["replay"]["outcome"];
    assert_eq!((outcome["failed"].as_u64(), outcome["skipped_writes"].as_u64()), (Some(0), Some(0)), "{outcome}");
    assert_eq!(outcome["writes_replayed"], true, "{outcome}");
    assert_eq!(outcome["other_databases"], 0, "every captured database has a target: {outcome}");
    assert_eq!(history(&other, "writes"), history(&source, "captured"), "every write replayed, as captured");
    assert_eq!(history(&other, "reads"), "0 0", "the reads' database took only reads");
    let calls = |fingerprint: &str| {
        outcome["fingerprints"].as_array().unwrap().iter().find(|f| f["fingerprint"] == fingerprint).unwrap()["calls"]
            .as_u64()
    };
    assert_eq!(calls(SELECT), Some(15 + 25), "{outcome}");
    let concurrency = &outcome["concurrency"];
    let (captured, replayed) =
        (concurrency["captured"].as_array().unwrap(), concurrency["replayed"].as_array().unwrap());
    assert!(!captured.is_empty() && captured.len() == replayed.len(), "{concurrency}");
    assert!(captured.iter().any(|n| n.as_u64() > Some(0)) && replayed.iter().any(|n| n.as_u64() > Some(0)));
    let listed = crate::common::runs(&store);
    assert_eq!(listed[0]["status"].as_str(), Some("complete"), "{}", listed[0]);
    let run = crate::common::show(&store, listed[0]["uuid"].as_str().unwrap());
    let results = run["results"].as_array().unwrap();
    assert!(results.iter().all(|r| r["parameters"]["read_only"] == false), "the result records the writes: {run}");
    let written = results.iter().find(|r| r["metric"] == "writes_replayed").unwrap();
    assert_eq!(written["samples"][0].as_f64(), Some(15.0 * 4.0), "pgbench's four writes a transaction: {written}");
    // The report charts the sessions over time, captured against replayed, and heads the run with its fidelity.
    let report = store.with_file_name("replay.html");
    ok(envbench(&store, &["report", listed[0]["uuid"].as_str().unwrap(), "--output", report.to_str().unwrap()]));
    let html = std::fs::read_to_string(&report).unwrap();
    for said in ["sessions open at most over time", "as captured", "as replayed", "60 writes replayed (--allow-writes)"]
    {
        assert!(html.contains(said), "the report does not say '{said}'");
    }
}

/// What a capture holds, counted apart from any replay: each fingerprint's statements.
fn captured_counts(log: &std::path::Path) -> std::collections::BTreeMap<String, u64> {
    let mut reader = envbench_replay::open(log).unwrap();
    let mut counts = std::collections::BTreeMap::new();
    while let Some(event) = reader.next_event().unwrap() {
        if let envbench_replay::EventKind::Statement(statement) = event.kind {
            *counts.entry(envbench_replay::fingerprint(&statement.sql)).or_default() += 1;
        }
    }
    counts
}

/// envbench's own TPC-C-derived order entry, captured in csvlog and replayed read-only into a second database loaded
/// the same way: every fingerprint as often as captured, its reads sent and its writes counted, none refused.
#[test]
fn envbench_oltp_captured_replays_each_fingerprint_as_often_as_captured() {
    let cluster = Cluster::start("cli-replay-oltp");
    let store = cluster.dir.parent().unwrap().join("results.db");
    for database in ["captured", "target"] {
        cluster.client("psql", &["-d", "postgres", "-qc", &format!("CREATE DATABASE {database}")]);
        let load = ["oltp", "--target", &cluster.url(database), "--users", "1", "--transactions", "1", "--no-vacuum"];
        ok(envbench(&store, &load));
    }
    cluster.wait_for_every_session_to_end();
    let loaded = std::fs::metadata(cluster.log(".csv")).unwrap().len() as usize;
    let run = ["oltp", "--target", &cluster.url("captured"), "--users", "2", "--transactions", "15", "--no-vacuum"];
    ok(envbench(&store, &run));
    cluster.wait_for_every_session_to_end();
    let capture = cluster.dir.parent().unwrap().join("oltp.csv");
    std::fs::write(&capture, &std::fs::read(cluster.log(".csv")).unwrap()[loaded..]).unwrap();
    let captured = captured_counts(&capture);
    assert!(captured.keys().any(|f| f.contains("tpcc_stock")), "the order entry's statements: {captured:?}");

    let target = cluster.url("target");
    let replayed =
        ok(envbench(&store, &["replay", capture.to_str().unwrap(), "--target", &target, "--speed", "max", "--json"]));
    let json: Value = serde_json::from_slice(&replayed.stdout).unwrap();
    let outcome = &json["replay"]["outcome"];
    assert_eq!(outcome["failed"], 0, "{outcome}");
    let mut counts = std::collections::BTreeMap::new();
    for f in outcome["fingerprints"].as_array().unwrap() {
        let (calls, skipped) = (f["calls"].as_u64().unwrap(), f["skipped"].as_u64().unwrap());
        counts.insert(f["fingerprint"].as_str().unwrap().to_string(), calls + skipped);
        if f["kind"] == "write" {
            assert_eq!(calls, 0, "a write was sent: {f}");
        }
    }
    assert_eq!(counts, captured, "each fingerprint as often as captured");
    assert!(outcome["skipped_writes"].as_u64() > Some(0) && outcome["replayed"].as_u64() > Some(0), "{outcome}");
}
