//! `envbench tpch` end to end: the real binary generating real Parquet files, DataFusion and the local PostgreSQL
//! running the queries, and a real SQLite store.

mod common;
use common::{envbench, runs, show, stderr, stdout};

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const POSTGRES: &str = "postgres://postgres@127.0.0.1:5432/test";

fn scratch(name: &str) -> PathBuf {
    common::scratch("tpch-tests", name)
}

fn result<'a>(run: &'a Value, test: &str) -> &'a Value {
    run["results"].as_array().unwrap().iter().find(|r| r["test_id"] == test).unwrap_or_else(|| panic!("no {test}"))
}

#[test]
fn datafusion_generates_once_runs_both_tests_and_stores_every_query_time() {
    let dir = scratch("datafusion");
    let store = dir.join("results.db");
    let d = dir.to_str().unwrap();
    let output = envbench(&store, &["tpch", "--sf", "0.01", "--dir", d, "--users", "2", "--label", "embedded"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    for needle in [
        "TPC-H-derived queries, SF 0.01 on datafusion",
        "Power@Size",
        "Throughput@Size",
        "QphH@Size",
        "not comparable with published TPC-H results",
        "the refresh functions RF1/RF2 are skipped",
        "user 2",
        "Storage during each phase",
        "READ MB/s",
        "AVG READ KiB",
    ] {
        assert!(text.contains(needle), "{needle} missing from\n{text}");
    }
    for query in 1..=22 {
        assert!(text.lines().any(|l| l.starts_with(&format!("Q{query} "))), "Q{query} row missing:\n{text}");
    }
    assert!(stderr(&output).contains("generated SF 0.01"), "{}", stderr(&output));
    let manifest = dir.join("envbench-tpch/sf0.01/manifest.json");
    assert!(manifest.is_file());

    let listed = runs(&store);
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["status"], "complete");
    assert_eq!(listed[0]["workload"], "tpch");
    let run = show(&store, listed[0]["uuid"].as_str().unwrap());
    // Power stream plus two users: three samples per query, one geomean per stream.
    let q1 = result(&run, "Q1");
    assert_eq!(q1["samples"].as_array().unwrap().len(), 3);
    assert_eq!(q1["parameters"]["target"], "datafusion");
    assert_eq!(q1["parameters"]["cache"], "warm");
    assert_eq!(result(&run, "geomean")["samples"].as_array().unwrap().len(), 3);
    for metric in ["power", "throughput", "qphh"] {
        let record = result(&run, metric);
        assert!(record["samples"][0].as_f64().unwrap() > 0.0);
        let flags: Vec<&str> = record["flags"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
        assert!(flags.contains(&"tpch-derived") && flags.contains(&"refresh-skipped"), "{flags:?}");
    }
    let steps: Vec<&str> =
        run["series"]["steps"].as_array().unwrap().iter().map(|s| s["step"].as_str().unwrap()).collect();
    for step in ["generate", "load", "power", "throughput"] {
        assert!(steps.contains(&step), "sampler step {step} missing: {steps:?}");
    }
    let outcome = &run["attachments"]["tpch"]["outcome"];
    assert_eq!(outcome["streams"].as_array().unwrap().len(), 3);
    assert_eq!(run["attachments"]["tpch"]["generation"]["reused"], false);

    // The second run reuses the data, and --json prints the document instead of tables.
    let output = envbench(&store, &["tpch", "--sf", "0.01", "--dir", d, "--power-only", "--validate", "--json"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(document["tpch"]["generation"]["reused"], true);
    assert_eq!(document["tpch"]["outcome"]["streams"].as_array().unwrap().len(), 1);
    assert_eq!(document["tpch"]["outcome"]["validate"], true);
    assert!(document["tpch"]["outcome"]["metrics"]["power_at_size"].as_f64().unwrap() > 0.0);
    assert_eq!(runs(&store).len(), 2);
}

#[test]
fn a_thread_sweep_runs_the_power_test_at_each_count_and_draws_the_speedup() {
    let dir = scratch("threads");
    let store = dir.join("results.db");
    let d = dir.to_str().unwrap();
    let output = envbench(&store, &["tpch", "--sf", "0.01", "--dir", d, "--threads", "1,2", "--validate"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    for needle in ["power test at 1, 2 threads", "T=1 s", "T=2 s", "SPEEDUP 1->2", "EFFICIENCY", "Speedup: the"] {
        assert!(text.contains(needle), "{needle} missing from\n{text}");
    }
    let listed = runs(&store);
    let run = show(&store, listed[0]["uuid"].as_str().unwrap());
    // Each count's queries under its own test id, with its thread count among the parameters.
    for threads in [1, 2] {
        let q1 = result(&run, &format!("T={threads} Q1"));
        assert_eq!(q1["parameters"]["threads"], threads);
        assert!(q1["flags"].as_array().unwrap().is_empty(), "validated answers: {q1}");
    }
    let speedup = run["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["test_id"] == "T=2" && r["metric"] == "speedup")
        .expect("the speedup over the first count is stored");
    assert!(speedup["samples"][0].as_f64().unwrap() > 0.0);
    assert_eq!(run["attachments"]["tpch"]["threads"].as_array().unwrap().len(), 2);
    let steps: Vec<&str> =
        run["series"]["steps"].as_array().unwrap().iter().map(|s| s["step"].as_str().unwrap()).collect();
    assert!(steps.contains(&"T=1 power") && steps.contains(&"T=2 power"), "{steps:?}");
    // The report draws the curve.
    let report = dir.join("report.html");
    let output =
        envbench(&store, &["report", "--output", report.to_str().unwrap(), listed[0]["uuid"].as_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let html = std::fs::read_to_string(&report).unwrap();
    // The curve's own axis, which only the scaling chart names.
    assert!(html.contains("queries/h at the geomean") && html.contains("query geomean"), "the scaling chart is drawn");
}

#[test]
fn timed_out_queries_are_counted_shown_and_stored_and_the_run_goes_on() {
    let dir = scratch("timeouts");
    let store = dir.join("results.db");
    let d = dir.to_str().unwrap();
    let output = envbench(&store, &["tpch", "--sf", "0.01", "--dir", d, "--power-only", "--query-timeout", "1ms"]);
    assert_eq!(output.status.code(), Some(1), "failed queries make the exit status 1: {}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("failed or wrong"), "{text}");
    assert!(text.contains("timed out"), "{text}");
    assert!(text.contains("Power@Size") && text.contains("not computed"), "{text}");
    let listed = runs(&store);
    assert_eq!(listed[0]["status"], "complete", "the run is kept: every query was attempted");
    let run = show(&store, listed[0]["uuid"].as_str().unwrap());
    let outcome = &run["attachments"]["tpch"]["outcome"];
    let attempted = outcome["streams"][0]["queries"].as_array().unwrap().len();
    assert_eq!(attempted, 22, "a timed-out query does not stop the stream");
    let failures = outcome["failures"].as_array().unwrap();
    assert!(!failures.is_empty());
    let failed_flags = run["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["flags"].as_array().unwrap().iter().any(|f| f.as_str().unwrap().starts_with("failed:")))
        .count();
    assert_eq!(failed_flags, failures.len(), "every failure is in the results");
    assert!(run["results"].as_array().unwrap().iter().all(|r| r["test_id"] != "power"));
}

#[test]
fn postgresql_target_loads_runs_refreshes_and_reuses() {
    let dir = scratch("postgres");
    let store = dir.join("results.db");
    let d = dir.to_str().unwrap();
    let schema = format!("envbench_tpch_cli_{}", std::process::id());
    let _guard = SchemaGuard(schema.clone());
    let args = ["tpch", "--sf", "0.01", "--dir", d, "--target", POSTGRES, "--schema", &schema, "--users", "2"];
    let output = envbench(&store, &args);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(stderr(&output).contains("loaded SF 0.01 in PostgreSQL"), "{}", stderr(&output));
    assert!(text.contains("SF 0.01 on postgres"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("RF1 ")) && text.lines().any(|l| l.starts_with("RF2 ")), "{text}");
    assert!(text.contains("(24 timed intervals)"), "{text}");
    assert!(!text.contains("skipped"), "{text}");
    assert!(text.contains("refresh stream of 2 RF1/RF2 pairs"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("refresh ") && l.contains("4/4 RF")), "{text}");

    let output = envbench(&store, &args);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stderr(&output).contains("reusing the tables of SF 0.01"), "{}", stderr(&output));
    let listed = runs(&store);
    assert_eq!(listed.len(), 2);
    let run = show(&store, listed[0]["uuid"].as_str().unwrap());
    assert_eq!(result(&run, "Q9")["parameters"]["target"], "postgres");
    // RF1 ran once in the power test and twice in the refresh stream.
    assert_eq!(result(&run, "RF1")["samples"].as_array().unwrap().len(), 3);
    let flags = result(&run, "qphh")["flags"].as_array().unwrap().clone();
    assert_eq!(flags, vec![Value::from("tpch-derived")]);
}

#[test]
fn bad_input_is_refused_before_anything_is_stored() {
    let dir = scratch("bad-input");
    let store = dir.join("results.db");
    let d = dir.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["--sf", "0"], "--sf 0: scale factor 0 is not usable"),
        (&["--sf=-1"], "not usable"),
        (&["--target", "oracle://scott@127.0.0.1/test"], "give datafusion"),
        (&["--users", "0"], "--users must be at least 1"),
        (&["--sets", "0"], "--sets must be at least 1"),
        (&["--query-timeout", "0s"], "--query-timeout must be longer than zero"),
        (&["--query-timeout", "soon"], "--query-timeout"),
        (&["--dir", "/nonexistent/envbench"], "not a directory"),
        (&["--target", "postgres://postgres@127.0.0.1:1/test"], "is the server running"),
        (&["--target", "postgres://postgres@127.0.0.1:5432/envbench_no_such_db"], "createdb"),
        (&["--target", "mysql://root@127.0.0.1:1/test"], "is the server running"),
        (&["--target", "mysql://root@127.0.0.1:3306/envbench_no_such_db"], "create the database"),
        (&["--threads", "0"], "--threads '0'"),
        (&["--threads", "1,2", "--throughput-only"], "leave out --throughput-only"),
        (&["--threads", "1,2", "--target", POSTGRES], "max_parallel_workers_per_gather"),
    ];
    for (extra, expected) in cases {
        let mut args = vec!["tpch"];
        args.extend_from_slice(extra);
        if !extra.iter().any(|a| a.starts_with("--sf")) {
            args.extend(["--sf", "0.01"]);
        }
        if !extra.contains(&"--dir") {
            args.extend(["--dir", d]);
        }
        let output = envbench(&store, &args);
        assert!(!output.status.success(), "{extra:?} was accepted");
        assert!(stderr(&output).contains(expected), "{extra:?}: expected '{expected}' in\n{}", stderr(&output));
    }
    assert!(!store.exists(), "no store is created for refused input");
    assert!(!dir.join("envbench-tpch").exists(), "no data is generated for refused input");

    // Files envbench did not make are never touched.
    std::fs::create_dir_all(dir.join("envbench-tpch")).unwrap();
    std::fs::write(dir.join("envbench-tpch/keep.txt"), "mine").unwrap();
    let output = envbench(&store, &["tpch", "--sf", "0.01", "--dir", d]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("keep.txt"), "{}", stderr(&output));
    assert_eq!(std::fs::read_to_string(dir.join("envbench-tpch/keep.txt")).unwrap(), "mine");
}

#[test]
fn ctrl_c_during_generation_removes_the_partial_data_and_keeps_an_interrupted_run() {
    let dir = scratch("interrupt");
    let store = dir.join("results.db");
    let child = Command::new(env!("CARGO_BIN_EXE_envbench"))
        .args(["tpch", "--sf", "1", "--dir", dir.to_str().unwrap(), "--threads", "1"])
        .env("ENVBENCH_STORE", &store)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupt once the first Parquet part is being written, as Ctrl-C would.
    let sf_dir = dir.join("envbench-tpch/sf1");
    let deadline = Instant::now() + Duration::from_secs(60);
    let writing = || sf_dir.join("lineitem").read_dir().map(|mut entries| entries.next().is_some()).unwrap_or(false);
    while Instant::now() < deadline && !writing() {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(writing(), "generation never started writing");
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130), "{}", stderr(&output));
    assert!(!sf_dir.exists(), "partial data left behind: {:?}", sf_dir.read_dir().map(|d| d.count()));
    let listed = runs(&store);
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["status"], "interrupted");
}

/// Drops the test's schema however the test ends.
struct SchemaGuard(String);

impl Drop for SchemaGuard {
    fn drop(&mut self) {
        let _ = Command::new("psql")
            .args([POSTGRES, "-qc", &format!("DROP SCHEMA IF EXISTS \"{}\" CASCADE", self.0)])
            .output();
    }
}

const MYSQL: &str = "mysql://root@127.0.0.1:3306/test";

/// Drops the test's MySQL database however the test ends.
struct MySqlDatabaseGuard(String);

impl Drop for MySqlDatabaseGuard {
    fn drop(&mut self) {
        if let Ok(mut connection) = envbench_sql::DatabaseUrl::parse(MYSQL).unwrap().connect("envbench-test") {
            let _ = connection.batch(&format!("DROP DATABASE IF EXISTS {}", self.0));
        }
    }
}

#[test]
fn mysql_target_loads_runs_refreshes_and_reuses() {
    let dir = scratch("mysql");
    let store = dir.join("results.db");
    let d = dir.to_str().unwrap();
    let database = format!("envbench_tpch_cli_{}", std::process::id());
    let _guard = MySqlDatabaseGuard(database.clone());
    let args = ["tpch", "--sf", "0.01", "--dir", d, "--target", MYSQL, "--schema", &database, "--users", "2"];
    let output = envbench(&store, &args);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(stderr(&output).contains("loaded SF 0.01 in M"), "{}", stderr(&output));
    assert!(text.contains("SF 0.01 on mysql"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("power ") && l.contains("22/22")), "{text}");
    assert!(text.contains("(24 timed intervals)") && !text.contains("skipped"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("refresh ") && l.contains("4/4 RF")), "{text}");
    let output = envbench(&store, &args);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stderr(&output).contains("reusing the tables of SF 0.01"), "{}", stderr(&output));
    let listed = runs(&store);
    let run = show(&store, listed[0]["uuid"].as_str().unwrap());
    assert_eq!(result(&run, "Q9")["parameters"]["target"], "mysql");
}
