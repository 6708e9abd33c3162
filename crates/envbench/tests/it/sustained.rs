//! `envbench disk --sustained` end to end on the real disk: the per-second series, burst and sustained figures, the
//! steady-state verdict and the cliff in the table, the JSON and the store; the report's timeline chart; compare;
//! preconditioning; the options it refuses. And `--profile db`, which ends with the commit tests.

use crate::common;

use common::{envbench, runs, scratch, show, stderr, stdout};
use serde_json::Value;

fn leftovers(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".dat"))
        .collect()
}

#[test]
fn sustained_writes_report_burst_steady_state_and_cliff() {
    let dir = scratch("sustained", "run");
    let store = dir.join("results.db");
    let args = ["disk", "--sustained", "10s", "--size", "256m", "--dir", dir.to_str().unwrap(), "--label", "here"];
    let output = envbench(&store, &args);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    for needle in [
        "Sustained writes in",
        "SUSTAINED SEQ128K Q8T1 write",
        "SUSTAINED RND4K Q32T1 write",
        "BURST MB/s",
        "SUSTAINED MB/s",
        "steady state: ",
        "cliff: ",
    ] {
        assert!(text.contains(needle), "{needle} missing from\n{text}");
    }
    assert!(leftovers(&dir).is_empty(), "the test file is removed: {:?}", leftovers(&dir));

    let run = show(&store, runs(&store)[0]["uuid"].as_str().unwrap());
    let results = run["results"].as_array().unwrap();
    for metric in ["throughput", "iops", "burst_throughput", "sustained_latency_p99", "latency_p99"] {
        assert!(
            results.iter().any(|r| r["test_id"] == "SUSTAINED RND4K Q32T1 write" && r["metric"] == metric),
            "{metric} stored"
        );
    }
    let tests = run["attachments"]["disk"]["sustained"]["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 2);
    for test in tests {
        let seconds = test["mb_per_s"].as_array().unwrap().len();
        assert!((9..=10).contains(&seconds), "one figure per whole second: {seconds}");
        assert_eq!(test["p99_us"].as_array().unwrap().len(), seconds);
        assert_eq!(test["round_s"], 1);
        assert!(test["burst_mb_per_s"].as_f64().unwrap() > 0.0);
        // A verdict either way, and the flag exactly when there is no steady state.
        let steady = !test["steady"].is_null();
        let flagged = results
            .iter()
            .filter(|r| r["test_id"] == test["test_id"])
            .all(|r| r["flags"].as_array().unwrap().iter().any(|f| f == "not-steady"));
        assert_eq!(steady, !flagged, "{test}");
    }

    let report = dir.join("report.html");
    let output = envbench(&store, &["report", "here", "-o", report.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.contains("storage: MB/s over time, SUSTAINED SEQ128K Q8T1 write"), "the timeline is drawn per test");
}

#[test]
fn a_sustained_run_in_json_after_preconditioning_and_compared_with_another() {
    let dir = scratch("sustained", "json");
    let store = dir.join("results.db");
    let mut args = vec!["disk", "--sustained", "10s", "--size", "64m", "--test", "seq:128k:q8:t1:write"];
    args.extend(["--dir", dir.to_str().unwrap()]);
    let first = envbench(&store, &[&args[..], &["--precondition", "--json", "--label", "sustained-one"]].concat());
    assert!(first.status.success(), "{}", stderr(&first));
    let json: Value = serde_json::from_slice(&first.stdout).unwrap();
    let document = &json["sustained"];
    assert_eq!(document["preconditioning"].as_array().unwrap().len(), 2, "the file is written twice first");
    let test = &document["tests"][0];
    for key in ["mb_per_s", "iops", "p99_us", "burst_mb_per_s", "sustained_mb_per_s", "window_start_s", "cliff"] {
        assert!(test.get(key).is_some(), "{key} in the JSON: {test}");
    }
    assert!(json["sampler"].is_object());
    let second = envbench(&store, &[&args[..], &["--precondition", "--label", "sustained-two"]].concat());
    assert!(second.status.success(), "{}", stderr(&second));
    let compare = envbench(&store, &["compare", "sustained-one", "sustained-two"]);
    assert!(compare.status.success(), "{}", stderr(&compare));
    let text = stdout(&compare);
    assert!(text.contains("SUSTAINED SEQ128K Q8T1 write"), "{text}");
    assert!(text.contains("burst_throughput"), "{text}");
    assert!(leftovers(&dir).is_empty());
}

#[test]
fn sustained_runs_refuse_options_that_do_not_apply() {
    let dir = scratch("sustained", "refused");
    let store = dir.join("results.db");
    let d = dir.to_str().unwrap();
    for (args, needle) in [
        (vec!["disk", "--sustained", "5s", "--dir", d], "at least 10s"),
        (vec!["disk", "--sustained", "10s", "--runs", "3", "--dir", d], "--runs does not apply to --sustained"),
        (vec!["disk", "--sustained", "--profile", "db", "--dir", d], "--profile does not apply"),
        (vec!["disk", "--sustained", "10s", "--test", "rnd:4k:q1:t1:read", "--dir", d], "measures writes"),
        (vec!["disk", "--precondition", "--dir", d], "--precondition applies to --sustained"),
        (vec!["disk", "--sustained", "soon", "--dir", d], "--sustained"),
        (vec!["disk", "--sustained", "10s", "--size", "8k", "--dir", d], "--size 8 KiB: too small"),
    ] {
        let output = envbench(&store, &args);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {}", stderr(&output));
        assert!(stderr(&output).contains(needle), "{args:?}: {}", stderr(&output));
    }
    assert!(!store.exists() || runs(&store).is_empty(), "usage errors leave no run");
}

#[test]
fn the_db_profile_ends_with_the_commit_tests() {
    let dir = scratch("sustained", "db");
    let store = dir.join("results.db");
    let args = ["disk", "--profile", "db", "--quick", "--duration", "200ms", "--size", "64m", "--dir"];
    let output = envbench(&store, &[&args[..], &[dir.to_str().unwrap()]].concat());
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("Storage suite:") && text.contains("Commit latency in"), "{text}");
    let run = show(&store, runs(&store)[0]["uuid"].as_str().unwrap());
    let results = run["results"].as_array().unwrap();
    assert!(results.iter().any(|r| r["test_id"] == "SEQ16K Q1T1 write fsync1"), "the suite's log test");
    assert!(results.iter().any(|r| r["test_id"] == "COMMIT 8K fdatasync append"), "the commit tests");
    let attachment = &run["attachments"]["disk"];
    assert!(attachment["tests"].is_array() && attachment["commit"]["outcomes"].is_array(), "{attachment}");
}
