//! `envbench disk --profile commit` end to end: the commit table, the group-commit curve, the stored results and the
//! report's curve on a real disk, and every result flagged possibly not durable on a RAM-backed file system.

use crate::common;

use common::{envbench, runs, scratch, show, stderr, stdout};

const QUICK: [&str; 6] = ["disk", "--profile", "commit", "--quick", "--duration", "100ms"];

#[test]
fn commit_latency_is_measured_by_method_and_committers_and_drawn() {
    let dir = scratch("commit", "disk");
    let store = dir.join("results.db");
    let mut args = QUICK.to_vec();
    args.extend(["--dir", dir.to_str().unwrap(), "--label", "here"]);
    let output = envbench(&store, &args);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    for needle in [
        "Commit latency in",
        "COMMIT 2K fdatasync append",
        "COMMIT 16K O_DSYNC overwrite",
        "COMMIT 8K O_DIRECT|O_DSYNC append",
        "GROUP 8K fdatasync one log C=16",
        "GROUP 8K fdatasync own logs C=4",
        "one shared log: C=1",
        "COMMITS/FLUSH",
        "Durability: no sign",
    ] {
        assert!(text.contains(needle), "{needle} missing from\n{text}");
    }
    assert!(!text.contains("COMMIT 2K O_DIRECT"), "O_DIRECT needs whole 4 KiB blocks:\n{text}");
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("envbench-commit"))
        .collect();
    assert!(leftovers.is_empty(), "the logs are removed");

    let run = show(&store, runs(&store)[0]["uuid"].as_str().unwrap());
    let results = run["results"].as_array().unwrap();
    assert!(results.iter().any(|r| r["test_id"] == "COMMIT 8K fdatasync append" && r["metric"] == "commits_per_s"));
    assert!(results.iter().any(|r| r["test_id"] == "GROUP 8K fdatasync one log C=8" && r["metric"] == "latency_p99"));
    let outcomes = run["attachments"]["disk"]["commit"]["outcomes"].as_array().unwrap();
    assert!(outcomes.len() >= 28, "{}", outcomes.len());
    let report = dir.join("report.html");
    let output = envbench(&store, &["report", "here", "-o", report.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.contains("storage: commits/s against committers on one log"), "the group-commit curve is drawn");
}

#[test]
fn a_ram_backed_file_system_flags_every_result_as_possibly_not_durable() {
    let dir = std::path::PathBuf::from("/dev/shm").join(format!("envbench-commit-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let store = scratch("commit", "shm").join("results.db");
    let mut args = QUICK.to_vec();
    args.extend(["--dir", dir.to_str().unwrap(), "--json"]);
    let output = envbench(&store, &args);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(output.status.success(), "{}", stderr(&output));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let rules: Vec<&str> =
        json["commit"]["concerns"].as_array().unwrap().iter().map(|c| c["rule"].as_str().unwrap()).collect();
    assert!(rules.contains(&"volatile-file-system"), "{rules:?}");
    assert!(stderr(&output).contains("may not be reaching stable storage"), "{}", stderr(&output));
    let run = show(&store, runs(&store)[0]["uuid"].as_str().unwrap());
    assert!(
        run["results"].as_array().unwrap().iter().all(|r| r["flags"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f == "possibly-not-durable")),
        "every result is flagged"
    );
}

#[test]
fn pg_test_fsync_runs_beside_the_commit_tests_and_is_shown_side_by_side() {
    let dir = scratch("commit", "pg_test_fsync");
    let store = dir.join("results.db");
    let args = [
        "disk",
        "--profile",
        "commit",
        "--duration",
        "1s",
        "--dir",
        dir.to_str().unwrap(),
        "--cross-check",
        "pg_test_fsync",
    ];
    let output = envbench(&store, &args);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    for needle in ["Cross-check: pg_test_fsync", "COMMIT 8K fdatasync rewrite", "open_datasync", "RATIO", "PG SPREAD"] {
        assert!(text.contains(needle), "{needle} missing from\n{text}");
    }
    let run = show(&store, runs(&store)[0]["uuid"].as_str().unwrap());
    let theirs = run["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["flags"].as_array().unwrap().iter().any(|f| f == "pg_test_fsync-cross-check"))
        .count();
    assert_eq!(theirs, 3, "open_datasync, fdatasync and fsync");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "only the store is left: {dir:?}");
    let output =
        envbench(&store, &["disk", "--profile", "commit", "--cross-check", "fio", "--dir", dir.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("pg_test_fsync"), "{}", stderr(&output));
}
