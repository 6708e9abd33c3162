//! `envbench oltp` end to end on the real binary: embedded SQLite, PostgreSQL and MariaDB, a sweep with its knee,
//! the stored results per transaction type, the pgbench cross-check, Ctrl-C, and bad input.

mod common;

use common::{envbench, runs, scratch, show, stderr, stdout};
use std::process::Command;
use std::time::Duration;

const POSTGRES: &str = "postgres://postgres@127.0.0.1:5432/test";
const MARIADB: &str = "mysql://root@127.0.0.1:3306/test";

/// The short steps the tests use, with a latency target no busy CI machine can miss (the knee is then the step with
/// the most NOPM).
const SHORT: [&str; 6] = ["--ramp", "1s", "--duration", "3s", "--target-latency", "10s"];

fn assert_full_report(text: &str, target: &str) {
    for needle in [
        "OLTP tpcc on",
        target,
        "NOPM",
        "TPM",
        "Knee (*)",
        "New-Order",
        "Payment",
        "Order-Status",
        "Delivery",
        "Stock-Level",
        "P99.9",
        "PASS 1: W_YTD = sum(D_YTD)",
        "PASS 4: sum(O_OL_CNT) = ORDER-LINE rows",
    ] {
        assert!(text.contains(needle), "{needle} missing from\n{text}");
    }
    assert!(!text.contains("  FAIL "), "{text}");
}

#[test]
fn sqlite_runs_stores_per_transaction_results_and_reuses_its_tables() {
    let dir = scratch("oltp", "sqlite");
    let store = dir.join("results.db");
    let d = dir.to_str().unwrap();
    let mut args = vec!["oltp", "--dir", d, "--users", "1,2", "--label", "embedded"];
    args.extend(SHORT);
    let output = envbench(&store, &args);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert_full_report(&text, "envbench-oltp.sqlite");
    assert!(text.contains("writers serialize"), "{text}");
    let err = stderr(&output);
    assert!(err.contains("rows/s") || err.contains("loaded"), "{err}");
    assert!(dir.join("envbench-oltp.sqlite").exists());

    let listed = runs(&store);
    assert_eq!(listed[0]["status"], "complete");
    assert_eq!(listed[0]["workload"], "oltp");
    let run = show(&store, listed[0]["uuid"].as_str().unwrap());
    let results = run["results"].as_array().unwrap();
    let has = |test: &str, metric: &str| results.iter().any(|r| r["test_id"] == test && r["metric"] == metric);
    for (test, metric) in [
        ("U=1", "nopm"),
        ("U=2", "tpm"),
        ("U=2 New-Order", "latency_p95"),
        ("U=2 Payment", "latency_p99_9"),
        ("U=2 Delivery", "retries"),
        ("knee", "throughput"),
        ("knee", "latency_p95"),
    ] {
        assert!(has(test, metric), "{test} {metric} missing");
    }
    let document = &run["attachments"]["oltp"];
    assert_eq!(document["steps"].as_array().unwrap().len(), 2);
    assert!(document["steps"][1]["per_second"].as_array().unwrap().len() >= 4);
    assert_eq!(document["consistency"].as_array().unwrap().len(), 4);

    // The second run reuses the tables; the scorecard headline is NOPM at the knee.
    let mut args = vec!["oltp", "--dir", d, "--users", "2"];
    args.extend(SHORT);
    let output = envbench(&store, &args);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stderr(&output).contains("reusing the tpcc tables"), "{}", stderr(&output));
    let reused = runs(&store)[0]["uuid"].as_str().unwrap().to_string();
    let output = envbench(&store, &["compare", "embedded", &reused]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("U=2 New-Order") && text.contains("latency_p95"), "compare matches per transaction:\n{text}");

    // The report draws NOPM against users with the knee, the per-second throughput and the latency percentiles.
    let report = dir.join("report.html");
    let output = envbench(&store, &["report", "embedded", "-o", report.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let html = std::fs::read_to_string(&report).unwrap();
    for needle in [
        "oltp: NOPM against virtual users",
        "knee U=",
        "oltp: New-Order p95 against virtual users",
        "transactions per second over time",
        "oltp: latency percentiles, U=2 New-Order",
    ] {
        assert!(html.contains(needle), "{needle} missing from the report");
    }
    let output = envbench(&store, &["results", "list"]);
    assert!(stdout(&output).contains("oltp"), "{}", stdout(&output));
}

#[test]
fn postgresql_sweeps_users_and_finds_the_knee() {
    let dir = scratch("oltp", "postgres");
    let store = dir.join("results.db");
    let mut args = vec!["oltp", "--target", POSTGRES, "--users", "1,2,4"];
    args.extend(SHORT);
    let output = envbench(&store, &args);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert_full_report(&text, "postgres://postgres@127.0.0.1:5432/test");
    for needle in ["DB TPM", "COMMITS", "WAL BYTES", "BLOCKS HIT"] {
        assert!(text.contains(needle), "{needle} missing from\n{text}");
    }
}

#[test]
fn mariadb_runs_with_its_server_counters() {
    let dir = scratch("oltp", "mariadb");
    let store = dir.join("results.db");
    let mut args = vec!["oltp", "--target", MARIADB, "--users", "1,2,4", "--json"];
    args.extend(SHORT);
    let output = envbench(&store, &args);
    assert!(output.status.success(), "{}", stderr(&output));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let document = &json["oltp"];
    assert_eq!(document["dialect"], "mysql");
    assert!(document["server_version"].as_str().unwrap().contains("MariaDB"));
    let steps = document["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3);
    assert!(steps[2]["server"]["innodb fsyncs"].as_f64().unwrap() > 0.0, "{}", steps[2]["server"]);
    assert!(steps.iter().all(|s| s["nopm"].as_f64().unwrap() > 0.0));
    assert!(document["consistency"].as_array().unwrap().iter().all(|c| c["passed"] == true));
}

#[test]
fn tpcb_with_the_pgbench_cross_check_shows_both_side_by_side() {
    let dir = scratch("oltp", "pgbench");
    let store = dir.join("results.db");
    let output = envbench(
        &store,
        &[
            "oltp",
            "--target",
            POSTGRES,
            "--profile",
            "tpcb",
            "--scale",
            "1",
            "--users",
            "2",
            "--ramp",
            "0s",
            "--duration",
            "2s",
            "--cross-check",
            "pgbench",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    for needle in ["OLTP tpcb", "TPC-B", "Cross-check: pgbench", "PGBENCH TPS", "RATIO", "-M prepared"] {
        assert!(text.contains(needle), "{needle} missing from\n{text}");
    }
    let run = show(&store, runs(&store)[0]["uuid"].as_str().unwrap());
    let pgbench: Vec<_> = run["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["flags"].as_array().unwrap().iter().any(|f| f == "pgbench-cross-check"))
        .collect();
    assert_eq!(pgbench.len(), 2, "TPS and p95 of pgbench");
}

#[test]
fn ctrl_c_keeps_the_run_as_interrupted_and_the_database_consistent() {
    let dir = scratch("oltp", "interrupt");
    let store = dir.join("results.db");
    let d = dir.to_str().unwrap();
    // A first run loads the tables, so the interrupt lands in the measured step.
    let output = envbench(&store, &["oltp", "--dir", d, "--users", "1", "--ramp", "0s", "--duration", "1s"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let child = Command::new(env!("CARGO_BIN_EXE_envbench"))
        .args(["oltp", "--dir", d, "--users", "2", "--ramp", "0s", "--duration", "1m"])
        .env("ENVBENCH_STORE", &store)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(4));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait_with_output().unwrap().status;
    assert_eq!(status.code(), Some(130));
    let listed = runs(&store);
    assert_eq!(listed[0]["status"], "interrupted");
    // The next run finds the tables consistent and reuses them.
    let output = envbench(&store, &["oltp", "--dir", d, "--users", "1", "--ramp", "0s", "--duration", "1s"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("PASS 2"), "{}", stdout(&output));
    assert!(stderr(&output).contains("reusing"), "{}", stderr(&output));
}

#[test]
fn bad_input_is_refused_with_what_to_do_and_nothing_is_stored() {
    let dir = scratch("oltp", "bad");
    let store = dir.join("results.db");
    let d = dir.to_str().unwrap();
    let foreign = dir.join("foreign");
    std::fs::create_dir_all(&foreign).unwrap();
    let theirs = foreign.join("envbench-oltp.sqlite");
    rusqlite::Connection::open(&theirs).unwrap().execute_batch("CREATE TABLE tpcc_stock (x)").unwrap();
    // A user without privileges on each server: PostgreSQL lets it connect but not create tables (PUBLIC may not
    // create in the public schema of a database it does not own), MariaDB refuses the database.
    let psql = |sql: &str| {
        let status =
            Command::new("psql").args(["-h", "127.0.0.1", "-U", "postgres", "-d", "postgres", "-qc", sql]).status();
        assert!(status.unwrap().success(), "{sql}");
    };
    psql("DO $$BEGIN CREATE ROLE envbench_nopriv LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END$$");
    let _ = Command::new("psql")
        .args(["-h", "127.0.0.1", "-U", "postgres", "-d", "postgres", "-qc", "CREATE DATABASE envbench_oltp_nopriv"])
        .output();
    let _ = Command::new("psql")
        .args([
            "-h",
            "127.0.0.1",
            "-U",
            "postgres",
            "-d",
            "envbench_oltp_nopriv",
            "-qc",
            "REVOKE CREATE ON SCHEMA public FROM PUBLIC",
        ])
        .output();
    let mysql = |sql: &str| {
        let status =
            Command::new("mysql").args(["--protocol=tcp", "-h", "127.0.0.1", "-u", "root", "-e", sql]).status();
        assert!(status.unwrap().success(), "{sql}");
    };
    mysql("CREATE USER IF NOT EXISTS 'envbench_nopriv'@'%' IDENTIFIED BY 'pw'");
    mysql("CREATE USER IF NOT EXISTS 'envbench_nopriv'@'localhost' IDENTIFIED BY 'pw'");
    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
        (vec!["--warehouses", "0"], 2, "--warehouses '0'"),
        (vec!["--warehouses", "lots"], 2, "whole number"),
        (vec!["--users", "0"], 2, "--users '0'"),
        (vec!["--users", "1,x"], 2, "a list such as 1,2,4,8"),
        (vec!["--ramp", "soon"], 2, "--ramp"),
        (vec!["--duration", "0s"], 2, "--duration must be longer than zero"),
        (vec!["--profile", "tpce"], 2, "give tpcc or tpcb"),
        (vec!["--loaders", "100000"], 2, "--loaders 100000: give 1 to 256"),
        (vec!["--target", "oracle://x@y/z"], 2, "postgres://"),
        (vec!["--cross-check", "pgbench"], 2, "--profile tpcb"),
        (vec!["--cross-check", "hammerdb", "--profile", "tpcb"], 2, "pgbench"),
        (vec!["--target", "postgres://postgres@127.0.0.1:1/test"], 1, "127.0.0.1:1"),
        (vec!["--target", "mysql://root:secret@127.0.0.1:3306/test"], 1, "password"),
        (vec!["--target", "mysql://root@127.0.0.1:3306/no_such_db"], 1, "CREATE DATABASE"),
        (vec!["--dir", foreign.to_str().unwrap()], 2, "tpcc_stock"),
        (
            vec!["--target", "postgres://envbench_nopriv@127.0.0.1:5432/envbench_oltp_nopriv"],
            2,
            "may not create tables",
        ),
        (vec!["--target", "mysql://envbench_nopriv:pw@127.0.0.1:3306/test"], 1, "GRANT"),
        (vec!["--dir", "/no/such/directory"], 2, "--dir"),
        (vec!["--warehouses", "9000", "--dir", d], 2, "free"),
    ];
    for (args, code, needle) in cases {
        let mut all = vec!["oltp"];
        all.extend(args.iter().copied());
        if !args.contains(&"--dir") {
            all.extend(["--dir", d]);
        }
        let output = envbench(&store, &all);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: '{needle}' missing from {err}");
        assert!(!err.contains("secret"), "{args:?}: the password is shown: {err}");
    }
    // A password left out of the URL comes from MYSQL_PWD, as the mysql client takes it: the same user then gets as
    // far as its missing privilege, and without the variable it is refused at the door.
    for (password, needle) in [(Some("pw"), "GRANT"), (None, "check the user and password")] {
        let mut command = Command::new(env!("CARGO_BIN_EXE_envbench"));
        command.args(["oltp", "--target", "mysql://envbench_nopriv@127.0.0.1:3306/test", "--dir", d]);
        command.env("ENVBENCH_STORE", &store).env("NO_COLOR", "1").env_remove("MYSQL_PWD");
        if let Some(password) = password {
            command.env("MYSQL_PWD", password);
        }
        let output = command.output().unwrap();
        assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
        assert!(stderr(&output).contains(needle), "MYSQL_PWD {password:?}: {}", stderr(&output));
    }
    assert!(!store.exists() || runs(&store).is_empty(), "bad input stores nothing");
    assert!(!dir.join("envbench-oltp.sqlite").exists(), "bad input creates no database");
    let tables: i64 = rusqlite::Connection::open(&theirs)
        .unwrap()
        .query_row("SELECT COUNT(*) FROM sqlite_master", [], |row| row.get(0))
        .unwrap();
    assert_eq!(tables, 1, "the foreign database is untouched");
}
