//! The workload commands end to end: the real binary, real files with O_DIRECT, the local PostgreSQL, a real store.

use crate::common;
use common::{envbench, runs, show, stderr, stdout};

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

fn scratch(name: &str) -> PathBuf {
    common::scratch("workload-tests", name)
}

/// Files envbench left in a directory that it should have removed.
fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("envbench-") && name.ends_with(".dat") && name != "envbench-ranread.dat")
        .collect()
}

#[test]
fn disk_quick_stores_a_complete_run_with_its_series() {
    let dir = scratch("disk-quick");
    let store = dir.join("results.db");
    let output = envbench(&store, &["disk", "--quick", "--dir", dir.to_str().unwrap(), "--label", "quick"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let table = stdout(&output);
    for test in ["SEQ1M Q8T1 read", "SEQ1M Q1T1 read", "RND4K Q32T1 read", "RND4K Q1T1 read", "RND4K Q32T1 write"] {
        assert!(table.contains(test), "{test} missing from\n{table}");
    }
    assert!(leftovers(&dir).is_empty(), "test file left behind: {:?}", leftovers(&dir));
    let runs = runs(&store);
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["status"], "complete");
    let run = show(&store, runs[0]["uuid"].as_str().unwrap());
    let results = run["results"].as_array().unwrap();
    // 8 tests x 9 metrics, one sample each (one run in quick mode).
    assert_eq!(results.len(), 72);
    // What a run measured holds together however fast the disk: its IOPS are its MB/s in 4 KiB reads.
    let figure = |metric: &str| {
        let record = results.iter().find(|r| r["test_id"] == "RND4K Q32T1 read" && r["metric"] == metric).unwrap();
        (record["samples"][0].as_f64().unwrap(), record.clone())
    };
    let ((iops, record), (mb_per_s, _)) = (figure("iops"), figure("throughput"));
    assert!(iops > 0.0 && (iops * 4096.0 / 1e6 - mb_per_s).abs() <= mb_per_s * 1e-6 + 1e-9, "{iops} {mb_per_s}");
    assert_eq!(record["parameters"]["direct"], true);
    let series = &run["series"];
    assert!(series["steps"].as_array().unwrap().iter().any(|s| s["step"] == "RND4K Q32T1 read"));
    assert!(!series["points"].as_array().unwrap().is_empty());
    assert!(run["attachments"]["disk"]["tests"].as_array().unwrap().len() == 8);
}

/// A disk run on /dev/shm measures RAM: it says so before it starts, and every result is flagged memory-backed, so
/// compare and ranks keep it apart from storage.
#[test]
fn disk_on_dev_shm_is_flagged_memory_backed() {
    let shm = Path::new("/dev/shm");
    if !shm.is_dir() {
        eprintln!("skipped: no /dev/shm here");
        return;
    }
    let store_dir = scratch("disk-shm");
    let store = store_dir.join("results.db");
    let dir = shm.join(format!("envbench-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut args = vec!["disk", "--dir", dir.to_str().unwrap(), "--size", "16m", "--runs", "1", "--duration"];
    args.extend(["200ms", "--interval", "0s", "--no-warmup", "--test", "rnd:4k:q4:t1:read", "--label", "shm"]);
    let output = envbench(&store, &args);
    let left = leftovers(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    if !output.status.success() && stderr(&output).contains("refuses O_DIRECT") {
        // Kernels before 6.6 refuse O_DIRECT on tmpfs: the suite says so rather than falling back.
        eprintln!("skipped: {}", stderr(&output));
        return;
    }
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(left.is_empty(), "test file left behind: {left:?}");
    let warning = stderr(&output);
    assert!(
        warning
            .contains("is memory-backed (tmpfs: the data directory is in RAM): its figures measure RAM, not storage"),
        "{warning}"
    );
    assert_eq!(warning.matches("memory-backed (").count(), 1, "one line: {warning}");
    let runs = runs(&store);
    let run = show(&store, runs[0]["uuid"].as_str().unwrap());
    let results = run["results"].as_array().unwrap();
    assert!(!results.is_empty());
    for result in results {
        let flags: Vec<&str> = result["flags"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
        assert!(flags.contains(&"memory-backed"), "{result}");
    }
    assert_eq!(run["fingerprint"]["storage"]["memory_backed"], "tmpfs: the data directory is in RAM");
}

#[test]
fn disk_json_and_adhoc_tests() {
    let dir = scratch("disk-adhoc");
    let store = dir.join("results.db");
    let output = envbench(
        &store,
        &[
            "disk",
            "--json",
            "--dir",
            dir.to_str().unwrap(),
            "--size",
            "64m",
            "--runs",
            "2",
            "--duration",
            "300ms",
            "--interval",
            "0s",
            "--no-warmup",
            "--test",
            "rnd:8k:q4:t2:mix70",
            "--test",
            "seq:16k:q1:t1:write:fsync1",
            "--engine",
            "threadpool",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    let tests = document["outcome"]["tests"].as_array().unwrap();
    assert_eq!(
        tests.iter().map(|t| t["test_id"].as_str().unwrap()).collect::<Vec<_>>(),
        vec!["RND8K Q4T2 mix70", "SEQ16K Q1T1 write fsync1"]
    );
    assert_eq!(tests[0]["runs"].as_array().unwrap().len(), 2);
    assert_eq!(document["outcome"]["engine"], "threadpool");
    assert!(leftovers(&dir).is_empty());
}

#[test]
fn disk_bad_input_is_refused_before_anything_is_written() {
    let dir = scratch("disk-bad");
    let store = dir.join("results.db");
    let d = dir.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["disk", "--dir", d, "--profile", "crystal"], "unknown profile"),
        (&["disk", "--dir", d, "--size=-1g"], "--size"),
        (&["disk", "--dir", d, "--size", "12parsecs"], "--size"),
        (&["disk", "--dir", d, "--test", "rnd:4k:q0:t1:read"], "queue depth"),
        (&["disk", "--dir", d, "--test", "rnd:banana"], "rnd:banana"),
        (&["disk", "--dir", d, "--runs", "0"], "--runs must be at least 1"),
        (&["disk", "--dir", d, "--duration", "0s"], "--duration must be longer than zero"),
        (&["disk", "--dir", d, "--write-sync", "sometimes"], "sometimes"),
        (&["disk", "--dir", d, "--engine", "warp"], "--engine"),
        (&["disk", "--dir", d, "--cross-check", "iometer"], "the cross-check tools are fio"),
        (&["disk", "--dir", "/no/such/dir"], "no such file or directory"),
    ];
    for (args, message) in cases {
        let output = envbench(&store, args);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {}", stderr(&output));
        assert!(stderr(&output).to_lowercase().contains(&message.to_lowercase()), "{args:?}: {}", stderr(&output));
    }
    assert!(!store.exists(), "usage errors must not create a store or a run");
    assert!(leftovers(&dir).is_empty());
}

#[test]
fn disk_refuses_sizes_beyond_free_space_and_stores_the_failure() {
    let dir = scratch("disk-space");
    let store = dir.join("results.db");
    let output = envbench(&store, &["disk", "--quick", "--dir", dir.to_str().unwrap(), "--size", "64t"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("not enough free space"), "{}", stderr(&output));
    let runs = runs(&store);
    assert_eq!(runs[0]["status"], "failed");
    assert!(runs[0]["status_reason"].as_str().unwrap().contains("not enough free space"));
    assert!(leftovers(&dir).is_empty());
}

#[test]
fn ctrl_c_leaves_no_files_and_an_interrupted_run() {
    let dir = scratch("disk-interrupt");
    let store = dir.join("results.db");
    let child = Command::new(env!("CARGO_BIN_EXE_envbench"))
        .args(["disk", "--dir", dir.to_str().unwrap(), "--size", "128m", "--runs", "3", "--duration", "3s"])
        .env("ENVBENCH_STORE", &store)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the first test is running, then interrupt as Ctrl-C would.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
        if !leftovers(&dir).is_empty() {
            std::thread::sleep(Duration::from_millis(1500));
            break;
        }
    }
    assert!(!leftovers(&dir).is_empty(), "the test file never appeared");
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130), "{}", stderr(&output));
    assert!(leftovers(&dir).is_empty(), "test file left behind: {:?}", leftovers(&dir));
    let runs = runs(&store);
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["status"], "interrupted");
}

#[test]
fn ranread_file_mode_finds_the_knee_and_reuses_its_file() {
    let dir = scratch("ranread-file");
    let store = dir.join("results.db");
    let d = dir.to_str().unwrap();
    // Targets any host meets (a mean within 10 s, 1 IOPS), so the knee and the PASS follow from the sweep itself.
    let args = ["ranread", "--dir", d, "--size", "64m", "--jobs", "1,2", "--iterations", "300"];
    let args = [args.as_slice(), &["--target-iops", "1", "--target-latency", "10s"]].concat();
    let first = envbench(&store, &args);
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(stderr(&first).contains("created"), "{}", stderr(&first));
    let text = stdout(&first);
    assert!(text.contains("Knee (*)") && text.contains("PASS"), "{text}");
    let database_file = dir.join("envbench-ranread.dat");
    assert!(database_file.exists(), "the database file is kept by default");
    let created = std::fs::metadata(&database_file).unwrap().modified().unwrap();

    let second = envbench(&store, &args);
    assert!(second.status.success(), "{}", stderr(&second));
    assert!(stderr(&second).contains("reusing"), "{}", stderr(&second));
    assert_eq!(std::fs::metadata(&database_file).unwrap().modified().unwrap(), created);

    let mut fresh_args = args.to_vec();
    fresh_args.extend(["--fresh", "--no-keep"]);
    let third = envbench(&store, &fresh_args);
    assert!(third.status.success(), "{}", stderr(&third));
    assert!(stderr(&third).contains("created"), "{}", stderr(&third));
    assert!(!database_file.exists(), "--no-keep removes the file");

    let runs = runs(&store);
    assert_eq!(runs.len(), 3);
    let run = show(&store, runs[0]["uuid"].as_str().unwrap());
    let steps = run["attachments"]["ranread"]["outcome"]["steps"].as_array().unwrap();
    assert_eq!(steps.iter().map(|s| s["jobs"].as_u64().unwrap()).collect::<Vec<_>>(), vec![1, 2]);
    // Fixed iterations: exactly jobs x iterations reads per step.
    assert_eq!(steps[1]["reads"].as_u64().unwrap(), 600);
    let knee = run["results"].as_array().unwrap().iter().any(|r| r["test_id"] == "knee" && r["metric"] == "iops");
    assert!(knee);

    let tsv = envbench(&store, &["results", "export", "--format", "tsv", runs[0]["uuid"].as_str().unwrap()]);
    let tsv = stdout(&tsv);
    let mut lines = tsv.lines();
    assert_eq!(lines.next().unwrap(), "RunDate\tRunTime\tDatabase\tIterations\tProcesses\tResponseTime\tIOPS");
    let first_row: Vec<&str> = lines.next().unwrap().split('\t').collect();
    assert_eq!(first_row.len(), 7);
    assert!(first_row[2].ends_with("envbench-ranread.dat"));
    assert_eq!((first_row[3], first_row[4]), ("300", "1"));
}

#[test]
fn ranread_refuses_a_file_it_did_not_make() {
    let dir = scratch("ranread-foreign");
    let store = dir.join("results.db");
    let foreign = dir.join("envbench-ranread.dat");
    std::fs::write(&foreign, b"somebody else's data").unwrap();
    let output = envbench(
        &store,
        &["ranread", "--dir", dir.to_str().unwrap(), "--size", "8m", "--jobs", "1", "--iterations", "10"],
    );
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("was not made by envbench"), "{}", stderr(&output));
    assert_eq!(std::fs::read(&foreign).unwrap(), b"somebody else's data");
}

#[test]
fn ranread_bad_input() {
    let dir = scratch("ranread-bad");
    let store = dir.join("results.db");
    let d = dir.to_str().unwrap();
    let many_jobs = (1..=5000).map(|n| (n % 64 + 1).to_string()).collect::<Vec<_>>().join(",");
    let cases: &[(&[&str], &str)] = &[
        (&["ranread", "--dir", d, "--block", "3000"], "not a database block size"),
        (&["ranread", "--dir", d, "--block", "256"], "not a database block size"),
        (&["ranread", "--dir", d, "--jobs", "0"], "--jobs"),
        (&["ranread", "--dir", d, "--jobs", "1,x"], "--jobs"),
        (&["ranread", "--dir", d, "--target-latency", "fast"], "--target-latency"),
        (&["ranread", "--dir", d, "--target-latency", "8"], "--target-latency"),
        (&["ranread", "--dir", d, "--iterations", "0"], "--iterations"),
        (&["ranread", "--dir", d, "--iterations", "5", "--duration", "1s"], "cannot be used with"),
        (&["ranread", "--dir", d, "--db", "mysql://x"], "not a PostgreSQL URL"),
        (&["ranread", "--dir", d, "--db", "postgres:/127.0.0.1/test"], "not a PostgreSQL URL"),
        (&["ranread", "--dir", d, "--schema", "s"], "--db"),
        (&["ranread", "--dir", d, "--jobs", &many_jobs], "--jobs: 5000 settings are more than 64"),
        (&["ranread", "--dir", d, "--jobs", "1,1"], "--jobs: 1 is given twice"),
        (&["ranread", "--dir", d, "--jobs", "2,4,02"], "--jobs: 2 is given twice"),
        (&["ranread", "--dir", d, "--duration", "1ns"], "--duration 1ns: give from 100ms to 24h"),
        (&["ranread", "--dir", d, "--duration", "48h"], "--duration 48h: give from 100ms to 24h"),
    ];
    for (args, message) in cases {
        let output = envbench(&store, args);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {}", stderr(&output));
        assert!(stderr(&output).contains(message), "{args:?}: {}", stderr(&output));
    }
    assert!(!dir.join("envbench-ranread.dat").exists());
    assert!(!store.exists() || runs(&store).is_empty(), "bad input stores nothing");
}

/// A second `ranread --db --fresh` while a first one builds and reads the table is refused, naming the first (whose
/// lock's session carries its pid), and the table is never rebuilt under the first, which completes.
#[test]
fn ranread_table_is_never_rebuilt_under_another_run() {
    let schema = common::Schema::new("ranread_lock");
    let url = schema.url();
    let dir = scratch("ranread-lock");
    let store = dir.join("results.db");
    let d = dir.to_str().unwrap();
    let mut first = Command::new(env!("CARGO_BIN_EXE_envbench"))
        .args(["ranread", "--db", &url, "--dir", d, "--size", "8m", "--fresh", "--jobs", "1", "--duration", "4s"])
        .env("ENVBENCH_STORE", &store)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let holder = format!("envbench ranread, pid {}", first.id());
    // The first run holds the lock once its lock's session is there (it takes it before it touches the table).
    while common::psql(&format!("SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = '{holder}'")) != "1" {
        assert!(first.try_wait().unwrap().is_none(), "the first run ended before it took its lock");
        std::thread::sleep(Duration::from_millis(50));
    }
    for args in [vec!["--fresh"], vec![]] {
        let mut all = vec!["ranread", "--db", &url, "--dir", d, "--size", "8m", "--jobs", "1", "--duration", "1s"];
        all.extend(args);
        let output = envbench(&store, &all);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{all:?}: {err}");
        assert!(err.contains("in use by another envbench run") && err.contains(&holder), "{err}");
    }
    let output = first.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let statuses: Vec<Value> = runs(&store).iter().map(|r| r["status"].clone()).collect();
    assert!(statuses.contains(&Value::from("complete")), "{statuses:?}");
    // Runs that read the complete table share it, whether its schema is named by the URL or by --schema.
    let postgres = "postgres://postgres@127.0.0.1:5432/test";
    let reader = || {
        Command::new(env!("CARGO_BIN_EXE_envbench"))
            .args(["ranread", "--db", postgres, "--schema", &schema.name, "--dir", d, "--size", "8m", "--jobs", "1"])
            .args(["--duration", "1s"])
            .env("ENVBENCH_STORE", &store)
            .output()
            .unwrap()
    };
    let (a, b) = std::thread::scope(|scope| {
        let a = scope.spawn(reader);
        let b = scope.spawn(reader);
        (a.join().unwrap(), b.join().unwrap())
    });
    for output in [a, b] {
        assert!(output.status.success(), "{}", stderr(&output));
        assert!(stderr(&output).contains("reusing table"), "{}", stderr(&output));
    }
}

#[test]
fn ranread_inside_postgresql_reports_the_database_counters() {
    let dir = scratch("ranread-postgres");
    let store = dir.join("results.db");
    let url = "postgres://postgres@127.0.0.1:5432/test";
    let output = envbench(
        &store,
        &[
            "ranread",
            "--db",
            url,
            "--size",
            "16m",
            "--jobs",
            "1,4",
            "--iterations",
            "200",
            "--json",
            "--dir",
            dir.to_str().unwrap(),
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    let steps = document["ranread"]["outcome"]["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    for (step, jobs) in steps.iter().zip([1u64, 4]) {
        assert_eq!(step["jobs"].as_u64(), Some(jobs));
        assert_eq!(step["reads"].as_u64(), Some(200 * jobs));
        let counters = &step["database"];
        let heap = counters["heap_blocks_read"].as_i64().unwrap() + counters["heap_blocks_hit"].as_i64().unwrap();
        // One heap page per query (the padding keeps one row per page).
        assert_eq!(heap, (200 * jobs) as i64, "{counters}");
    }
    let runs = runs(&store);
    assert_eq!(runs[0]["status"], "complete");
}

#[test]
fn ranread_postgres_connection_errors_are_clear() {
    let dir = scratch("ranread-postgres-bad");
    let store = dir.join("results.db");
    let d = dir.to_str().unwrap();
    let missing =
        envbench(&store, &["ranread", "--db", "postgres://postgres@127.0.0.1:5432/envbench_no_such_db", "--dir", d]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        stderr(&missing).contains("does not exist") && stderr(&missing).contains("createdb"),
        "{}",
        stderr(&missing)
    );
    let refused = envbench(&store, &["ranread", "--db", "postgres://postgres@127.0.0.1:1/test", "--dir", d]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(stderr(&refused).contains("is the server running"), "{}", stderr(&refused));
}

#[test]
fn cube_sweep_runs_every_step_and_recommends() {
    let dir = scratch("cube");
    let store = dir.join("results.db");
    let work = dir.join("cube");
    let output = envbench(
        &store,
        &["cube", "--dir", work.to_str().unwrap(), "--scale", "0.005", "--repeat", "2", "--calc-threads", "1,2"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    for step in [
        "1 reset",
        "2 native load",
        "3 csv load",
        "4 aggregation",
        "5 allocation",
        "6 aggregate allocation",
        "7 currency conversion",
        "8 dense restructure",
    ] {
        assert!(text.contains(step), "{step} missing:\n{text}");
    }
    assert!(text.contains("Thread settings per step") && text.contains("calc_threads="), "{text}");
    let runs = runs(&store);
    let run = show(&store, runs[0]["uuid"].as_str().unwrap());
    let elapsed: Vec<&Value> = run["results"].as_array().unwrap().iter().filter(|r| r["metric"] == "elapsed").collect();
    // 8 steps and a total, at 2 settings; 2 samples each.
    assert_eq!(elapsed.len(), 18);
    assert!(elapsed.iter().all(|r| r["samples"].as_array().unwrap().len() == 2));
    // The sampler kept each step of each repetition apart.
    let steps = run["series"]["steps"].as_array().unwrap();
    assert!(steps.iter().any(|s| s["step"] == "calc=2 r2 8 dense restructure"), "{steps:?}");
    // An empty cube is primed first, then the settings take turns within each repetition.
    let resets: Vec<&str> = steps
        .iter()
        .filter_map(|s| s["step"].as_str())
        .filter(|name| name.ends_with("1 reset") || name.starts_with("0 prime"))
        .collect();
    assert_eq!(
        resets,
        ["0 prime cube", "calc=1 r1 1 reset", "calc=2 r1 1 reset", "calc=1 r2 1 reset", "calc=2 r2 1 reset"],
        "{steps:?}"
    );
    for needle in ["RUNNER-UP", "DIFFERENCE", "cannot judge", "logical CPUs", "SMT (Hyper-Threading)"] {
        assert!(text.contains(needle), "{needle} missing:\n{text}");
    }

    let value = envbench(
        &store,
        &[
            "cube",
            "get",
            "--dir",
            work.to_str().unwrap(),
            "Years=FY19, Scenario=Actual, Version=Final, Currency=Local, Entity=TotalEntity, Product=Product, Account=GrossSales, Period=YearTotal",
        ],
    );
    assert!(value.status.success(), "{}", stderr(&value));
    let text = stdout(&value);
    assert!(text.trim() == "#Missing" || text.trim().parse::<f64>().is_ok(), "{text}");
}

#[test]
fn cube_retrievals_run_alone_and_during_calculation_and_are_stored() {
    let dir = scratch("cube-retrievals");
    let store = dir.join("results.db");
    let work = dir.join("cube");
    let args = [
        "cube",
        "--dir",
        work.to_str().unwrap(),
        "--scale",
        "0.005",
        "--repeat",
        "1",
        "--retrieval-users",
        "1,2",
        "--retrieval-duration",
        "1s",
        "--label",
        "olap",
    ];
    let output = envbench(&store, &args);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    for needle in ["Retrievals: 1.00 s per pass", "summary", "drill-down", "wide", "during calc", "P95 ms"] {
        assert!(text.contains(needle), "{needle} missing:\n{text}");
    }
    let run = show(&store, runs(&store)[0]["uuid"].as_str().unwrap());
    let results = run["results"].as_array().unwrap();
    // Every pass stores its figures over all kinds; a kind's own only where it ran (a wide retrieval is one in ten,
    // which a starved host may not reach in a one-second pass).
    for test in ["retrieval all U=1 cold", "retrieval all U=2 warm", "retrieval all U=2 during calc"] {
        assert!(results.iter().any(|r| r["test_id"] == test && r["metric"] == "latency_p95"), "{test} stored");
    }
    let passes = run["attachments"]["cube"]["retrievals"]["passes"].as_array().unwrap();
    assert_eq!(passes.len(), 6, "cold, warm and during calc for 1 and 2 users");
    let steps = run["series"]["steps"].as_array().unwrap();
    assert!(steps.iter().any(|s| s["step"] == "9 retrievals U=2 during calc"), "{steps:?}");
    let report = dir.join("report.html");
    let output = envbench(&store, &["report", "olap", "-o", report.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(std::fs::read_to_string(&report).unwrap().contains("retrieval all U=2 during calc"));
    let refused = envbench(&store, &["cube", "--dir", work.to_str().unwrap(), "--retrieval-users", "0"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(stderr(&refused).contains("--retrieval-users"), "{}", stderr(&refused));
    let refused = envbench(&store, &["cube", "--dir", work.to_str().unwrap(), "--retrievals-alone"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(stderr(&refused).contains("add --retrievals"), "{}", stderr(&refused));
}

#[test]
fn disk_cross_check_with_fio_is_shown_and_stored() {
    let dir = scratch("disk-fio");
    let store = dir.join("results.db");
    let output = envbench(
        &store,
        &[
            "disk",
            "--dir",
            dir.to_str().unwrap(),
            "--size",
            "32m",
            "--runs",
            "1",
            "--duration",
            "500ms",
            "--no-warmup",
            "--test",
            "rnd:4k:q8:t1:read",
            "--cross-check",
            "fio",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("fio (envbench/fio IOPS"), "{}", stdout(&output));
    let runs = runs(&store);
    let run = show(&store, runs[0]["uuid"].as_str().unwrap());
    let fio: Vec<&Value> =
        run["results"].as_array().unwrap().iter().filter(|r| r["parameters"]["measured_by"] == "fio").collect();
    assert_eq!(fio.len(), 9);
    let fio_figure = |metric: &str| fio.iter().find(|r| r["metric"] == metric).unwrap()["samples"][0].as_f64().unwrap();
    let (iops, mb_per_s) = (fio_figure("iops"), fio_figure("throughput"));
    assert!(iops > 0.0 && mb_per_s > 0.0, "fio measured the reads: {iops} IOPS, {mb_per_s} MB/s");
    assert!(leftovers(&dir).is_empty());
}

/// Shell loops spinning on every CPU, stopped when dropped.
struct Hogs(Vec<std::process::Child>);

impl Hogs {
    fn start() -> Hogs {
        let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
        Hogs(
            (0..cpus)
                .map(|_| Command::new("sh").args(["-c", "while :; do :; done"]).spawn().expect("sh starts"))
                .collect(),
        )
    }
}

impl Drop for Hogs {
    fn drop(&mut self) {
        for hog in &mut self.0 {
            let _ = hog.kill();
            let _ = hog.wait();
        }
    }
}

/// A run while other processes spin on every CPU is flagged disturbed, with its reason, in the terminal, on every
/// result and in the run list. (That a quiet run is not flagged is checked on fixture numbers in envbench-probe's
/// fixtures tests: on this shared machine other builds may be running.)
#[test]
fn a_run_beside_busy_loops_is_flagged_disturbed() {
    let dir = scratch("disturbed");
    let store = dir.join("results.db");
    let hogs = Hogs::start();
    std::thread::sleep(Duration::from_millis(200));
    let output = envbench(
        &store,
        &["exec", "--dir", dir.to_str().unwrap(), "--name", "idle", "--repeat", "1", "--step", "wait=sleep 2"],
    );
    drop(hogs);
    assert!(output.status.success(), "{}", stderr(&output));
    let said = stderr(&output);
    assert!(said.contains("disturbed: other processes used"), "{said}");
    let listed = runs(&store);
    assert_eq!(listed[0]["disturbed"], true, "{:?}", listed[0]);
    let run = show(&store, listed[0]["uuid"].as_str().unwrap());
    let results = run["results"].as_array().unwrap();
    assert!(!results.is_empty());
    assert!(results.iter().all(|r| r["flags"].as_array().unwrap().iter().any(|f| f == "disturbed")), "{results:?}");
    let stored: envbench_core::model::StoredRun = serde_json::from_value(run).unwrap();
    let series = stored.series.expect("a sampled run keeps its series");
    let disturbance = series.disturbance().expect("the stored series judges the run disturbed too");
    assert!(disturbance.other_cpu_percent_of_core > 50.0, "{disturbance:?}");
    assert!(said.contains(&disturbance.reason), "{said}");
    assert!(series.points.iter().all(|p| p.contention.is_some()), "every point says who else ran");
}
