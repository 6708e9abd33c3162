//! `envbench run` and `envbench exec` end to end: the real binary, a real store.

use crate::common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn scratch(name: &str) -> PathBuf {
    common::scratch("suite-tests", name)
}

fn envbench(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_envbench"))
        .args(args)
        .current_dir(dir)
        .env("ENVBENCH_STORE", dir.join("results.db"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The runs in the store of a test directory.
fn runs(dir: &Path) -> Vec<Value> {
    common::runs(&dir.join("results.db"))
}

#[test]
fn quick_suite_runs_every_workload_with_a_scorecard_and_report() {
    let dir = scratch("smoke");
    let output = envbench(&dir, &["run", "--smoke", "--dir", dir.to_str().unwrap(), "--label", "ci"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    assert!(stdout.contains("Scorecard: suite smoke"), "{stdout}");
    // Issue #55: the scorecard says which runs other work disturbed, and the environment with its usable CPUs.
    assert!(stdout.contains("DISTURBED") && stdout.contains("\nEnvironment: "), "{stdout}");
    // The closing hint compares by the label given, as the README does.
    assert!(stdout.contains("Compare with another environment: envbench compare label:ci <other side>"), "{stdout}");
    for workload in ["sysinfo", "disk", "ranread", "cube", "oltp", "tpch"] {
        assert!(
            stdout.lines().any(|l| l.contains(workload) && l.contains("complete")),
            "{workload} missing:\n{stdout}"
        );
    }
    // The README's sample is what `envbench run` prints: the scorecard's columns, and the report it writes.
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let columns = |text: &str| {
        text.lines().find(|l| l.starts_with("#  WORKLOAD")).map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
    };
    assert_eq!(columns(&readme), columns(&stdout), "the README's scorecard:\n{stdout}");
    assert!(stdout.contains("Report: envbench-report.html") && readme.contains("Report: envbench-report.html"));
    let report = std::fs::read_to_string(dir.join("envbench-report.html")).unwrap();
    assert!(report.contains("<svg"));
    let cards = report.find("id=\"scorecard\"").expect("a suite's report opens with its scorecard");
    assert!(cards < report.find("<svg").unwrap(), "cards before the charts");
    // One suite is one run of its six workloads, as the verdict counts; a single side has no baseline (issue #70,
    // item 7). The suite says how far it is and how long it took (item 6).
    assert!(report.contains("1 run (6 workload runs)") && !report.contains("the first side is the baseline"));
    let progress = text(&output.stderr);
    assert!(progress.contains("so far, about ") && progress.contains("left at this pace"), "{progress}");
    assert!(progress.contains("envbench run: suite smoke done in "), "{progress}");
    assert!(stdout.contains("QphH@Size"), "the tpch headline is on the scorecard:\n{stdout}");
    let runs = runs(&dir);
    assert_eq!(runs.len(), 6);
    let suite = runs[0]["suite_id"].as_str().unwrap();
    for run in &runs {
        assert_eq!(run["suite_id"], suite);
        assert_eq!(run["tags"]["suite"], suite);
        assert_eq!(run["label"], "ci");
        assert_eq!(run["status"], "complete");
    }
    let suites = text(&envbench(&dir, &["results", "suites"]).stdout);
    assert!(suites.contains(&format!("suite={suite}")) && suites.contains("6/6"), "{suites}");
    let environments: Value =
        serde_json::from_slice(&envbench(&dir, &["results", "environments", "--json"]).stdout).unwrap();
    let environments = environments.as_array().unwrap();
    assert_eq!(environments.len(), 1, "one machine, one environment: {environments:?}");
    assert_eq!(environments[0]["runs"], 6);
    let id = environments[0]["identity"]["id"].as_str().unwrap();
    let list = text(&envbench(&dir, &["results", "list"]).stdout);
    assert!(list.contains("ENVIRONMENT") && list.matches(id).count() == 6, "{list}");
    assert!(!dir.read_dir().unwrap().any(|e| {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        name.starts_with("envbench-") && name.ends_with(".dat") && name != "envbench-ranread.dat"
    }));
}

#[test]
fn bad_suite_files_name_the_line() {
    let dir = scratch("bad-files");
    let cases: &[(&str, &str)] = &[
        ("[disk]\nquick = true\n[diks]\n", "line 3: unknown workload 'diks'"),
        ("[suite]\nrepetitions = \"three\"\n[disk]\n", "line 2: suite.repetitions must be a whole number"),
        ("[cube]\nscale = 0.1\n[matrix]\ncube.calc_threads = []\n", "line 4: matrix.cube.calc_threads is empty"),
        ("[disk]\nquick = true\n\n[cube]\nsclae = 0.1\n", "line 4 ([cube]): unexpected argument '--sclae'"),
        ("[disk\n", "line 1"),
    ];
    for (index, (content, message)) in cases.iter().enumerate() {
        let file = dir.join(format!("suite{index}.toml"));
        std::fs::write(&file, content).unwrap();
        let output = envbench(&dir, &["run", "--suite", file.to_str().unwrap(), "--dir", dir.to_str().unwrap()]);
        assert_eq!(output.status.code(), Some(2), "{content}: {}", text(&output.stderr));
        assert!(text(&output.stderr).contains(message), "{content}: {}", text(&output.stderr));
    }
    let missing = envbench(&dir, &["run", "--suite", "nosuchsuite", "--dir", dir.to_str().unwrap()]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(text(&missing.stderr).contains("not a built-in suite"));
    assert!(!dir.join("results.db").exists(), "bad suites run nothing");
}

#[test]
fn matrix_runs_are_grouped_and_tagged() {
    let dir = scratch("matrix");
    let file = dir.join("suite.toml");
    std::fs::write(
        &file,
        "[suite]\nname = \"matrix\"\n[exec]\nname = \"noop\"\nstep = [\"a=true\", \"b=sleep 0.05\"]\n[matrix]\nexec.repeat = [1, 2]\n",
    )
    .unwrap();
    let output = envbench(&dir, &["run", "--suite", file.to_str().unwrap(), "--dir", dir.to_str().unwrap()]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let runs = runs(&dir);
    assert_eq!(runs.len(), 2);
    let repeats: Vec<&str> = runs.iter().map(|r| r["tags"]["repeat"].as_str().unwrap()).collect();
    assert!(repeats.contains(&"1") && repeats.contains(&"2"));
    assert_eq!(runs[0]["suite_id"], runs[1]["suite_id"]);
    // The group is a side for compare.
    let suite = runs[0]["suite_id"].as_str().unwrap();
    let compare =
        envbench(&dir, &["compare", &format!("suite={suite}"), &format!("run:{}", runs[0]["uuid"].as_str().unwrap())]);
    assert!(compare.status.success(), "{}", text(&compare.stderr));
}

/// Issue #70, item 8: `run`, `push` and `report` answer in JSON, one document each, with no progress in it.
#[test]
fn run_push_and_report_answer_in_json() {
    let dir = scratch("json");
    let file = dir.join("suite.toml");
    std::fs::write(
        &file,
        "[suite]\nname = \"json\"\n[exec]\nname = \"noop\"\nstep = [\"a=true\"]\n[matrix]\nexec.repeat = [1, 2]\n",
    )
    .unwrap();
    let suite = file.to_str().unwrap();
    let document = |output: Output| -> Value {
        assert!(output.status.success(), "{}", text(&output.stderr));
        serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&output.stdout)))
    };
    let plan = document(envbench(&dir, &["run", "--suite", suite, "--dry-run", "--json"]));
    assert_eq!(plan["suite"], "json");
    assert_eq!(plan["runs"].as_array().unwrap().len(), 2);
    assert!(plan["runs"][0]["command"].as_str().unwrap().starts_with("envbench exec "), "{plan}");
    assert!(!dir.join("results.db").exists(), "a dry run stores nothing");

    let output = envbench(&dir, &["run", "--suite", suite, "--dir", dir.to_str().unwrap(), "--json"]);
    let progress = text(&output.stderr);
    assert!(!progress.contains("[1/2]") && !progress.contains("envbench run: suite"), "{progress}");
    let ran = document(output);
    assert_eq!(ran["status"], "complete");
    assert_eq!(ran["planned_runs"], 2);
    assert_eq!(ran["report"], "envbench-report.html");
    let suite_id = ran["suite_id"].as_str().unwrap();
    assert_eq!(ran["compare_side"], format!("suite={suite_id}"));
    let runs = ran["runs"].as_array().unwrap();
    assert_eq!(runs.iter().map(|r| r["index"].as_u64().unwrap()).collect::<Vec<_>>(), [1, 2]);
    for run in runs {
        assert_eq!(run["status"], "complete");
        assert_eq!(run["run"]["suite_id"], suite_id, "each run whole: {run}");
        assert!(run["run"]["results"].as_array().is_some_and(|r| !r.is_empty()), "{run}");
        assert!(run["setting"].is_object() && run["headline"].is_string(), "{run}");
    }
    let (first, second) = (runs[0]["run"]["uuid"].as_str().unwrap(), runs[1]["run"]["uuid"].as_str().unwrap());

    let report = document(envbench(&dir, &["report", &format!("suite={suite_id}"), "-o", "one.html", "--json"]));
    assert_eq!(report["report"], "one.html");
    assert!(report["bytes"].as_u64().unwrap() > 1000 && dir.join("one.html").is_file());
    assert_eq!(report["sides"].as_array().unwrap().len(), 1);
    assert_eq!(report["sides"][0]["runs"].as_array().unwrap().len(), 2);
    assert!(report.get("comparison").is_none(), "one side compares nothing: {report}");
    let two = [&format!("run:{first}"), &format!("run:{second}"), "-o", "two.html", "--json"];
    let report = document(envbench(&dir, &[&["report"], &two[..]].concat()));
    assert!(report["comparison"].is_object(), "{report}");

    let other = dir.join("other.db");
    let push = ["push", "--to", other.to_str().unwrap(), "--json"];
    let pushed = document(envbench(&dir, &push));
    assert_eq!(pushed["copied"].as_array().unwrap().len(), 2, "{pushed}");
    assert_eq!(pushed["destination"], other.to_str().unwrap());
    let again = document(envbench(&dir, &push));
    assert!(again["copied"].as_array().unwrap().is_empty() && again["already_present"].as_array().unwrap().len() == 2);
}

/// Issue #71: a store of many runs lists the newest hundred, says that more match, and lists every one when asked.
#[test]
fn a_long_history_lists_its_newest_hundred_runs_unless_asked_for_more() {
    let dir = scratch("many");
    let file = dir.join("suite.toml");
    std::fs::write(
        &file,
        "[suite]\nname = \"many\"\nrepetitions = 101\n[exec]\nname = \"noop\"\nstep = [\"a=true\"]\n",
    )
    .unwrap();
    let output = envbench(&dir, &["run", "--suite", file.to_str().unwrap(), "--dir", dir.to_str().unwrap(), "--json"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let rows = |args: &[&str]| {
        let output = envbench(&dir, &[&["results", "list"], args].concat());
        assert!(output.status.success(), "{}", text(&output.stderr));
        let listed = text(&output.stdout);
        (listed.lines().filter(|l| l.contains(" exec ")).count(), listed)
    };
    let (count, listed) = rows(&[]);
    assert_eq!(count, 100, "{listed}");
    assert!(listed.ends_with("The newest 100 runs; more match: --limit N lists more, --all every one.\n"), "{listed}");
    let (count, listed) = rows(&["--all"]);
    assert!(count == 101 && !listed.contains("more match"), "{listed}");
    assert_eq!(rows(&["--limit", "3"]).0, 3);
    assert_eq!(runs(&dir).len(), 101, "--json lists every run");
}

#[test]
fn interrupted_suite_resumes_without_repeating_finished_runs() {
    let dir = scratch("resume");
    let file = dir.join("suite.toml");
    std::fs::write(
        &file,
        "[suite]\nname = \"resumable\"\n\n[[exec]]\nname = \"first\"\nrepeat = 1\nstep = [\"a=true\"]\n\n\
         [[exec]]\nname = \"second\"\nrepeat = 1\nstep = [\"slow=until [ -e released ]; do sleep 0.1; done\"]\n\n[[exec]]\nname = \"third\"\nrepeat = 1\nstep = [\"c=true\"]\n",
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_envbench"))
        .args(["run", "--suite", file.to_str().unwrap(), "--dir", dir.to_str().unwrap()])
        .current_dir(&dir)
        .env("ENVBENCH_STORE", dir.join("results.db"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupt while the second run's step waits (for a file the test makes only before resuming, so the step is
    // still waiting however slowly the host got there).
    let deadline = Instant::now() + Duration::from_secs(120);
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        if runs(&dir).iter().any(|r| r["tags"]["suite.item"] == "2") {
            std::thread::sleep(Duration::from_millis(500));
            break;
        }
    }
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let before = runs(&dir);
    let status_of = |runs: &[Value], item: &str| -> Vec<String> {
        runs.iter()
            .filter(|r| r["tags"]["suite.item"] == item)
            .map(|r| r["status"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(status_of(&before, "1"), vec!["complete"]);
    assert_eq!(status_of(&before, "2"), vec!["interrupted"]);
    assert!(status_of(&before, "3").is_empty());

    std::fs::write(dir.join("released"), "").unwrap();
    let resumed =
        envbench(&dir, &["run", "--suite", file.to_str().unwrap(), "--dir", dir.to_str().unwrap(), "--resume"]);
    assert!(resumed.status.success(), "{}", text(&resumed.stderr));
    assert!(text(&resumed.stderr).contains("resuming: 1 already complete"), "{}", text(&resumed.stderr));
    let after = runs(&dir);
    assert_eq!(status_of(&after, "1"), vec!["complete"], "the finished run is not repeated");
    let mut second = status_of(&after, "2");
    second.sort();
    assert_eq!(second, vec!["complete", "interrupted"]);
    assert_eq!(status_of(&after, "3"), vec!["complete"]);
    assert!(after.iter().all(|r| r["suite_id"] == before[0]["suite_id"]));

    let again = envbench(&dir, &["run", "--suite", file.to_str().unwrap(), "--dir", dir.to_str().unwrap(), "--resume"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(text(&again.stderr).contains("already completed every run"));
}

#[test]
fn exec_times_steps_and_stores_them_like_a_workload() {
    let dir = scratch("exec");
    let output = envbench(
        &dir,
        &[
            "exec",
            "--name",
            "sleepers",
            "--step",
            "short=sleep 0.2",
            "--step",
            "long=sleep 0.4",
            "--repeat",
            "2",
            "--dir",
            dir.to_str().unwrap(),
        ],
    );
    assert!(output.status.success(), "{}", text(&output.stderr));
    let runs = runs(&dir);
    let shown: Value = serde_json::from_slice(
        &envbench(&dir, &["results", "show", "--json", runs[0]["uuid"].as_str().unwrap()]).stdout,
    )
    .unwrap();
    let elapsed = |step: &str| -> Vec<f64> {
        shown["results"].as_array().unwrap().iter().find(|r| r["test_id"] == step && r["metric"] == "elapsed").unwrap()
            ["samples"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect()
    };
    for (step, seconds) in [("short", 0.2), ("long", 0.4)] {
        let samples = elapsed(step);
        assert_eq!(samples.len(), 2);
        // At least the sleep; what a busy host adds to starting it has no bound worth asserting.
        assert!(samples.iter().all(|s| (seconds..seconds + 30.0).contains(s)), "{step}: {samples:?}");
    }
    assert!(shown["series"]["steps"].as_array().unwrap().iter().any(|s| s["step"] == "long r2"));
}

#[test]
fn exec_failing_step_stops_with_its_output() {
    let dir = scratch("exec-fail");
    let output = envbench(
        &dir,
        &[
            "exec",
            "--name",
            "broken",
            "--step",
            "ok=true",
            "--step",
            "bad=echo 'ORA-01555: snapshot too old' >&2; exit 4",
            "--step",
            "never=true",
            "--dir",
            dir.to_str().unwrap(),
        ],
    );
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("step bad failed in repetition 1 (exit status 4)") && stderr.contains("ORA-01555"),
        "{stderr}"
    );
    let runs = runs(&dir);
    assert_eq!(runs[0]["status"], "failed");
    let keep_going = envbench(
        &dir,
        &[
            "exec",
            "--name",
            "broken",
            "--step",
            "ok=true",
            "--step",
            "bad=exit 4",
            "--repeat",
            "1",
            "--keep-going",
            "--dir",
            dir.to_str().unwrap(),
        ],
    );
    // Every planned execution ran; the failed one is counted: the run is complete and the exit status 1.
    assert_eq!(keep_going.status.code(), Some(1), "{}", text(&keep_going.stderr));
    assert!(text(&keep_going.stderr).contains("1 execution failed: bad r1"), "{}", text(&keep_going.stderr));
    assert_eq!(self::runs(&dir)[0]["status"], "complete");
    let bad = envbench(&dir, &["exec", "--name", "x", "--step", "noequals", "--dir", dir.to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad.stderr).contains("is not NAME=COMMAND"));
}

#[test]
fn every_example_suite_is_valid_and_a_dry_run_lists_its_runs_without_running_them() {
    let dir = scratch("examples");
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut checked = 0;
    for entry in std::fs::read_dir(&examples).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let output = envbench(&dir, &["run", "--suite", path.to_str().unwrap(), "--dry-run"]);
        assert!(output.status.success(), "{}: {}", path.display(), text(&output.stderr));
        let listing = text(&output.stdout);
        assert!(listing.lines().any(|l| l.starts_with("[1] envbench ")), "{listing}");
        checked += 1;
    }
    assert!(checked >= 5, "only {checked} example suites found in {}", examples.display());
    assert!(!dir.join("results.db").exists(), "a dry run stores nothing");

    let output = envbench(
        &dir,
        &["run", "--suite", examples.join("analytics-virtual-users.toml").to_str().unwrap(), "--dry-run"],
    );
    let listing = text(&output.stdout);
    assert_eq!(listing.lines().filter(|l| l.contains("envbench tpch")).count(), 8, "{listing}");
    assert!(listing.contains("--users 8") && listing.contains("--tag users=8"), "{listing}");
    // htap's two servers at two sizes: four runs, each with its matrix value.
    let output = envbench(
        &dir,
        &["run", "--suite", examples.join("reports-on-the-primary.toml").to_str().unwrap(), "--dry-run"],
    );
    let listing = text(&output.stdout);
    let htap: Vec<&str> = listing.lines().filter(|l| l.contains("envbench htap")).collect();
    assert_eq!(htap.len(), 4, "{listing}");
    assert!(htap.iter().all(|l| l.contains("--analytic-users 0,1,2,4")), "{listing}");
    assert_eq!(htap.iter().filter(|l| l.contains("--warehouses 50")).count(), 2, "{listing}");

    // A matrix of connection URLs runs with the password but never shows or tags it.
    let file = dir.join("secret.toml");
    std::fs::write(
        &file,
        "[tpch]\nsf = 0.01\n[matrix]\ntpch.target = [\"postgres://bob:s3cret@127.0.0.1:5432/test\"]\n",
    )
    .unwrap();
    let output = envbench(&dir, &["run", "--suite", file.to_str().unwrap(), "--dry-run"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let listing = text(&output.stdout);
    assert!(listing.contains("postgres://bob:***@127.0.0.1:5432/test") && !listing.contains("s3cret"), "{listing}");
}

#[test]
fn a_suite_keeps_its_runs_in_the_store_named_by_the_store_option() {
    let dir = scratch("store-option");
    let store = dir.join("chosen.db");
    let data_home = dir.join("data-home");
    std::fs::write(dir.join("s.toml"), "[sysinfo]\nsave = true\n").unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_envbench"))
        .args(["--store", store.to_str().unwrap(), "run", "--suite", "s.toml", "--report", "r.html"])
        .current_dir(&dir)
        .env_remove("ENVBENCH_STORE")
        .env("XDG_DATA_HOME", &data_home)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(common::runs(&store).len(), 1);
    assert!(!data_home.join("envbench").exists(), "nothing went to the default store");
}
