//! compare, report, push and the shared PostgreSQL store, through the real binary.

use crate::common;

use common::{Schema, psql};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scratch(name: &str) -> PathBuf {
    common::scratch("compare-tests", name)
}

/// The binary with a store and a private XDG data directory (where the local fallback store lives).
fn envbench(store: &str, data_home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_envbench"))
        .args(args)
        .env("ENVBENCH_STORE", store)
        .env("XDG_DATA_HOME", data_home)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn ok(output: Output) -> Output {
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    output
}

/// A short disk run with four samples per metric.
fn disk_run(store: &str, data_home: &Path, dir: &Path, label: &str) {
    ok(envbench(store, data_home, &disk_args(dir, label)));
}

/// The arguments of [`disk_run`].
fn disk_args<'a>(dir: &'a Path, label: &'a str) -> Vec<&'a str> {
    vec![
        "disk",
        "--dir",
        dir.to_str().unwrap(),
        "--size",
        "32m",
        "--runs",
        "4",
        "--duration",
        "200ms",
        "--interval",
        "0s",
        "--no-warmup",
        "--test",
        "rnd:4k:q8:t1:read",
        "--label",
        label,
    ]
}

#[test]
fn two_labels_compare_with_significance_marks() {
    let dir = scratch("compare");
    let store = dir.join("results.db");
    let store = store.to_str().unwrap();
    disk_run(store, &dir, &dir, "physical");
    disk_run(store, &dir, &dir, "virtual");
    let text =
        String::from_utf8_lossy(&ok(envbench(store, &dir, &["compare", "physical", "virtual"])).stdout).into_owned();
    assert!(text.contains("RND4K Q8T1 read") && text.contains("iops") && text.contains("geomean"), "{text}");
    // The answer first: the verdict, then the tables.
    let verdict = text.find("VERDICT B: virtual against A: physical").expect(&text);
    assert!(verdict < text.find("DETAILS per test").unwrap() && text.contains("storage "), "{text}");
    // Four samples a side can reach significance: every compared row carries a verdict and an exact p-value, and the
    // terminal shows each as `~`, `p=...` or `p<0.001`.
    let json: Value =
        serde_json::from_slice(&ok(envbench(store, &dir, &["compare", "--json", "physical", "virtual"])).stdout)
            .unwrap();
    assert_eq!(json["verdicts"][0]["workloads"][0]["workload"], "disk", "the JSON carries the verdict");
    assert_eq!(json["verdicts"][0]["workloads"][0]["tests"], 1, "one test, by its headline metric");
    let rows = json["rows"].as_array().expect("rows in the JSON");
    assert_eq!(rows.len(), 9, "9 metrics of one test");
    for row in rows {
        let change = &row["cells"][1]["change"];
        assert!(
            ["significant", "not_significant", "negligible"].contains(&change["significance"].as_str().unwrap()),
            "{row}"
        );
        assert!(change["p_value"].as_f64().unwrap() > 0.0);
        assert_eq!(row["cells"][1]["samples"].as_array().unwrap().len(), 4);
    }
    let marks = text
        .lines()
        .filter(|l| l.contains("RND4K Q8T1 read"))
        .filter(|l| l.split_whitespace().any(|w| w == "~" || w.starts_with("p=") || w == "p<0.001"))
        .count();
    assert_eq!(marks, 9, "{text}");
    let markdown =
        String::from_utf8_lossy(&ok(envbench(store, &dir, &["compare", "--markdown", "physical", "virtual"])).stdout)
            .into_owned();
    assert!(markdown.contains("| RND4K Q8T1 read |"), "{markdown}");
    let report = dir.join("report.html");
    ok(envbench(store, &dir, &["report", "physical", "virtual", "-o", report.to_str().unwrap()]));
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.contains("<svg") && !html.contains("http://") && !html.contains("https://"));
    assert!(html.find("id=\"verdict\"").unwrap() < html.find("<details").unwrap(), "the verdict opens the report");
    let one_side = envbench(store, &dir, &["compare", "physical", "nosuchlabel"]);
    assert_eq!(one_side.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&one_side.stderr).contains("nosuchlabel"));
}

/// A run under `taskset -c 0` on a machine with more CPUs is another environment, and compare says what held it back.
#[test]
fn a_run_pinned_to_one_cpu_is_told_apart() {
    let online = std::thread::available_parallelism().unwrap().get();
    let taskset = Command::new("taskset").arg("-V").output();
    if online < 2 || !taskset.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: needs taskset and two CPUs");
        return;
    }
    let dir = scratch("pinned");
    let store = dir.join("results.db");
    let store = store.to_str().unwrap();
    disk_run(store, &dir, &dir, "all-cpus");
    let pinned = Command::new("taskset")
        .args(["-c", "0", env!("CARGO_BIN_EXE_envbench")])
        .args(disk_args(&dir, "one-cpu"))
        .env("ENVBENCH_STORE", store)
        .env("XDG_DATA_HOME", &dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    ok(pinned);
    let text =
        String::from_utf8_lossy(&ok(envbench(store, &dir, &["compare", "all-cpus", "one-cpu"])).stdout).into_owned();
    let differences = &text[text.find("Environment differences:").expect(&text)..];
    assert!(!differences.contains("none found"), "{text}");
    assert!(differences.contains(&format!("B may use 1 of {online} CPUs (affinity)")), "{text}");
    assert!(differences.contains(&format!("Usable CPUs: {online} of {online} vs 1 of {online} (affinity)")), "{text}");
    // The two runs are two environments.
    let json: Value =
        serde_json::from_slice(&ok(envbench(store, &dir, &["compare", "--json", "all-cpus", "one-cpu"])).stdout)
            .unwrap();
    let environment = |side: usize| json["sides"][side]["runs"][0]["environment"].as_str().unwrap().to_string();
    assert!(environment(1).contains(&format!("x{online} CPUs (1 usable)")), "{}", environment(1));
    assert!(!environment(0).contains("usable"), "{}", environment(0));
}

#[test]
fn push_to_postgres_twice_copies_once() {
    let dir = scratch("push");
    let local = dir.join("results.db");
    let local = local.to_str().unwrap();
    disk_run(local, &dir, &dir, "pushed");
    ok(envbench(local, &dir, &["sysinfo", "--save", "--label", "pushed"]));
    let schema = Schema::new("push");
    let url = schema.url();
    let first = String::from_utf8_lossy(&ok(envbench(local, &dir, &["push", "--to", &url])).stdout).into_owned();
    assert!(first.contains("pushed 2 runs"), "{first}");
    let second = String::from_utf8_lossy(&ok(envbench(local, &dir, &["push", "--to", &url])).stdout).into_owned();
    assert!(second.contains("pushed 0 runs") && second.contains("2 already there"), "{second}");
    assert_eq!(psql(&format!("SELECT count(*) FROM {}.runs", schema.name)), "2");
    // The shared store reads like the local one.
    let listed: Value =
        serde_json::from_slice(&ok(envbench(&url, &dir, &["results", "list", "--json"])).stdout).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 2);
}

#[test]
fn workloads_write_to_a_postgres_store() {
    let dir = scratch("postgres-store");
    let schema = Schema::new("store");
    let url = schema.url();
    disk_run(&url, &dir, &dir, "shared");
    let listed: Value =
        serde_json::from_slice(&ok(envbench(&url, &dir, &["results", "list", "--json"])).stdout).unwrap();
    assert_eq!(listed[0]["status"], "complete");
    assert_eq!(listed[0]["label"], "shared");
    assert_eq!(psql(&format!("SELECT count(*) > 0 FROM {}.sampler_cpu", schema.name)), "t");
}

#[test]
fn unreachable_shared_store_keeps_the_run_locally() {
    let dir = scratch("unreachable");
    let unreachable = "postgres://postgres@127.0.0.1:1/test";
    let output = envbench(unreachable, &dir, &["sysinfo", "--save"]);
    // sysinfo --save has no run to keep: it reports the store instead.
    assert_ne!(output.status.code(), Some(0));
    let dir_disk = dir.join("data");
    std::fs::create_dir_all(&dir_disk).unwrap();
    let output = envbench(
        unreachable,
        &dir,
        &[
            "disk",
            "--dir",
            dir_disk.to_str().unwrap(),
            "--size",
            "16m",
            "--runs",
            "1",
            "--duration",
            "100ms",
            "--no-warmup",
            "--test",
            "rnd:4k:q1:t1:read",
        ],
    );
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("cannot be reached") && stderr.contains("envbench push --to"), "{stderr}");
    let local = dir.join("envbench").join("results.db");
    let listed: Value =
        serde_json::from_slice(&ok(envbench(local.to_str().unwrap(), &dir, &["results", "list", "--json"])).stdout)
            .unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!(listed[0]["status"], "complete");
}

/// The calibration bench at smoke sizes, one round: its mechanics (A/A, half the CPUs, a throttled disk through a
/// cgroup, compare's JSON verdicts, the rates table) work end to end. The rates of one tiny round say nothing, so they
/// are not asserted; `bench/verdict-calibration.sh` with its default sizes measures them.
#[test]
fn the_calibration_bench_runs_its_pairs_and_reports_rates() {
    let dir = scratch("calibration");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/verdict-calibration.sh");
    let output = Command::new("bash")
        .arg(&script)
        .arg("1")
        .env("ENVBENCH", env!("CARGO_BIN_EXE_envbench"))
        .env("DIR", &dir)
        .env("WORKLOADS", "cube disk")
        .env("SMOKE", "1")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let (out, err) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "{out}\n{err}");
    assert!(out.contains("verdict calibration: 1 rounds"), "{out}");
    // The disturbed A/B pair (beside a CPU hog) is counted as right (slower, cannot tell) or wrong.
    assert!(out.contains("busy: slower") && out.contains("busy: wrong"), "{out}");
    for workload in ["cube", "disk"] {
        let line = out.lines().find(|l| l.starts_with(workload)).unwrap_or_else(|| panic!("no {workload} line: {out}"));
        assert_eq!(line.matches("/1 (").count(), 5, "an A/A rate, two detection rates and the busy pair's two: {line}");
    }
    // Its scratch store and cgroup are gone.
    assert!(
        std::fs::read_dir(&dir).unwrap().all(|e| !e.unwrap().file_name().to_string_lossy().starts_with("calibration."))
    );
}

/// A timed step made twice as slow between two labels (the same command, reading its delay from a file): the CI
/// gate exits 1 on it at 5% and says why, passes it at 150%, passes the same delay and the faster side, and refuses a
/// threshold that is not a percentage. The runs export as Bencher's and github-action-benchmark's JSON.
#[test]
fn the_ci_gate_fails_on_a_known_regression_and_runs_export_for_trackers() {
    let dir = scratch("gate");
    let store = dir.join("results.db");
    let store = store.to_str().unwrap();
    let delay = dir.join("delay");
    let step = format!("wait=sleep $(cat {})", delay.display());
    // The slower side costs a quarter as much an hour: twice the work per unit of cost. The delays are long beside
    // what a busy host adds to starting a step (tens of milliseconds, varying from one sample to the next), so the
    // samples of each side agree closely and the two sides' ratio stays near 2, however loaded the host (#66).
    for (label, seconds, price) in [("before", "0.4", "1"), ("after", "0.8", "0.25"), ("again", "0.4", "")] {
        std::fs::write(&delay, seconds).unwrap();
        let args = ["exec", "--dir", dir.to_str().unwrap(), "--name", "job", "--repeat", "5", "--step", &step];
        let tag = format!("price_per_hour={price}");
        let priced: &[&str] = if price.is_empty() { &[] } else { &["--tag", &tag] };
        ok(envbench(store, &dir, &[args.as_slice(), &["--label", label], priced].concat()));
    }
    let gate = |sides: [&str; 2], threshold: &str| {
        envbench(store, &dir, &["compare", sides[0], sides[1], "--fail-if-worse", threshold])
    };
    let failed = gate(["before", "after"], "5%");
    let said = String::from_utf8_lossy(&failed.stderr).into_owned();
    assert_eq!(failed.status.code(), Some(1), "{said}");
    assert!(
        said.contains("gate: FAILED: ") && said.contains("slower on B") && said.contains("more than the 5% allowed"),
        "{said}"
    );
    let printed = String::from_utf8_lossy(&failed.stdout).into_owned();
    let cost = printed.split("At 1 an hour on A and 0.25 on B, B does ").nth(1).expect(&printed);
    let factor: f64 = cost.split("x the work per unit of cost").next().unwrap().parse().expect(&printed);
    // Half the speed at a quarter of the price: about 2x, more as the time to start each step weighs on the shorter
    // (up to 200 ms a step on a starved host still leaves it within these bounds).
    assert!((1.5..3.2).contains(&factor), "half the speed at a quarter of the price: {factor}");
    // The same delay again passes a gate wide enough for what other tests' load does to a short sleep.
    for (sides, threshold, reason) in [
        (["before", "after"], "150", "within the 150% allowed"),
        (["before", "again"], "50%", "no workload significantly slower"),
        (["after", "before"], "5%", "faster on B"),
    ] {
        let passed = gate(sides, threshold);
        let said = String::from_utf8_lossy(&passed.stderr).into_owned();
        assert_eq!(passed.status.code(), Some(0), "{sides:?}: {said}");
        assert!(said.contains(reason), "{sides:?}: '{reason}' missing from {said}");
    }
    let bad = gate(["before", "after"], "five");
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("e.g. 5%"));

    // The latest run (no suite) as Bencher's format: the median of its five samples, and its bounds.
    let bencher: Value =
        serde_json::from_slice(&ok(envbench(store, &dir, &["results", "export", "--format", "bencher"])).stdout)
            .unwrap();
    let elapsed = &bencher["exec/wait"]["elapsed (s)"];
    let (value, low, high) = (
        elapsed["value"].as_f64().unwrap(),
        elapsed["lower_value"].as_f64().unwrap(),
        elapsed["upper_value"].as_f64().unwrap(),
    );
    assert!((0.4..30.0).contains(&value) && low <= value && value <= high, "{bencher}");
    let action = |better: &str| {
        let output =
            envbench(store, &dir, &["results", "export", "--format", "github-action-benchmark", "--better", better]);
        serde_json::from_slice::<Value>(&ok(output).stdout).unwrap()
    };
    let lower = action("lower");
    assert_eq!(lower[0]["name"], "exec/wait: elapsed", "{lower}");
    assert_eq!(lower[0]["unit"], "s");
    assert!(lower[0]["range"].as_str().unwrap().starts_with("± "), "{lower}");
    assert_eq!(action("higher"), serde_json::json!([]), "every exec figure is a time");
    let unsaid = envbench(store, &dir, &["results", "export", "--format", "github-action-benchmark"]);
    assert_eq!(unsaid.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unsaid.stderr).contains("--better higher"));
    // Two runs of one test are two values for one benchmark: refused, never averaged.
    let runs: Vec<Value> =
        serde_json::from_slice(&ok(envbench(store, &dir, &["results", "list", "--json"])).stdout).unwrap();
    let (first, second) = (runs[0]["uuid"].as_str().unwrap(), runs[1]["uuid"].as_str().unwrap());
    let twice = envbench(store, &dir, &["results", "export", "--format", "bencher", first, second]);
    assert_eq!(twice.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&twice.stderr).contains("more than one of the runs exported"));
}

/// One side syntax everywhere: compare, report, push, results export and results list each take `label:`, `run:`,
/// `tag:`, `suite=`-style tags, a bare label and a bare run id, and each resolves a side to the same runs.
#[test]
fn every_command_takes_the_same_sides_and_resolves_the_same_runs() {
    let dir = scratch("side-syntax");
    let store_path = dir.join("results.db");
    let store = store_path.to_str().unwrap();
    let run = |label: &str, disk: &str| {
        let mut args = disk_args(&dir, label);
        args.extend(["--tag", disk]);
        ok(envbench(store, &dir, &args));
    };
    run("fast", "disk=nvme");
    run("fast", "disk=nvme");
    run("slow", "disk=sata");
    let listed: Value =
        serde_json::from_slice(&ok(envbench(store, &dir, &["results", "list", "--json"])).stdout).unwrap();
    let uuid = |i: usize| listed[i]["uuid"].as_str().unwrap().to_string();
    // Newest first: the slow run, then the two fast ones.
    let (slow, fast) = (uuid(0), vec![uuid(1), uuid(2)]);
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v.dedup();
        v
    };
    let fast = sorted(fast);
    let run_prefix = format!("run:{}", &slow[..8]);
    let sides: Vec<(&str, Vec<String>)> = vec![
        ("label:fast", fast.clone()),
        ("fast", fast.clone()),
        ("tag:disk=nvme", fast.clone()),
        ("disk=nvme", fast.clone()),
        (&run_prefix, vec![slow.clone()]),
        (&slow[..8], vec![slow.clone()]),
        ("label:slow", vec![slow.clone()]),
    ];
    let other_of = |expected: &[String]| if expected.contains(&slow) { "label:fast" } else { "label:slow" };
    for (side, expected) in &sides {
        let other = other_of(expected);
        // compare: the first side's runs.
        let json: Value =
            serde_json::from_slice(&ok(envbench(store, &dir, &["compare", side, other, "--json"])).stdout).unwrap();
        let runs = json["sides"][0]["runs"].as_array().unwrap();
        let got = sorted(runs.iter().map(|r| r["uuid"].as_str().unwrap().to_string()).collect());
        assert_eq!(&got, expected, "compare {side}");
        // report: the runs named in the HTML are the side's.
        let html_path = dir.join("side.html");
        ok(envbench(store, &dir, &["report", side, "-o", html_path.to_str().unwrap(), "--force"]));
        let html = std::fs::read_to_string(&html_path).unwrap();
        for uuid in listed.as_array().unwrap().iter().map(|r| r["uuid"].as_str().unwrap()) {
            assert_eq!(html.contains(&uuid[..8]), expected.iter().any(|e| e == uuid), "report {side}: {uuid}");
        }
        // results list and results export.
        let json: Value =
            serde_json::from_slice(&ok(envbench(store, &dir, &["results", "list", side, "--json"])).stdout).unwrap();
        let got = sorted(json.as_array().unwrap().iter().map(|r| r["uuid"].as_str().unwrap().to_string()).collect());
        assert_eq!(&got, expected, "results list {side}");
        let json: Value =
            serde_json::from_slice(&ok(envbench(store, &dir, &["results", "export", side, "--format", "json"])).stdout)
                .unwrap();
        let got = sorted(json.as_array().unwrap().iter().map(|r| r["run"].as_str().unwrap().to_string()).collect());
        assert_eq!(&got, expected, "results export {side}");
        // push: what arrives in a fresh store.
        let to = dir.join(format!("pushed-{}.db", side.replace([':', '='], "-")));
        ok(envbench(store, &dir, &["push", side, "--to", to.to_str().unwrap()]));
        let json: Value =
            serde_json::from_slice(&ok(envbench(to.to_str().unwrap(), &dir, &["results", "list", "--json"])).stdout)
                .unwrap();
        let got = sorted(json.as_array().unwrap().iter().map(|r| r["uuid"].as_str().unwrap().to_string()).collect());
        assert_eq!(&got, expected, "push {side}");
    }
    // Filters narrow a side; a side and filters that leave nothing say so rather than list or push nothing.
    let nowhere = dir.join("never-made.db");
    let nowhere_text = nowhere.to_str().unwrap();
    for command in
        [&["results", "list"][..], &["results", "export", "--format", "csv"], &["push", "--to", nowhere_text]]
    {
        let mut args = command.to_vec();
        args.extend(["label:fast", "--workload", "cube"]);
        let output = envbench(store, &dir, &args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let error = String::from_utf8_lossy(&output.stderr);
        assert!(error.contains("no run is both named there and matches the filters"), "{args:?}: {error}");
    }
    assert!(!nowhere.exists());
    // A side that matches nothing says so, and names the label meant.
    let output = envbench(store, &dir, &["results", "export", "label:fsat", "--format", "csv"]);
    assert_eq!(output.status.code(), Some(2));
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(
        error.contains("'label:fsat' matches no complete run") && error.contains("did you mean label:fast?"),
        "{error}"
    );
}
