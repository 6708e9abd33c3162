//! `envbench fleet`: a workload on several agents at once through the shared PostgreSQL store, as local processes
//! and through a real sshd on a loopback port; the merged result against the agents' own runs; failures named with
//! nothing left behind.

use crate::common;

use common::{Schema, scratch, stderr, stdout};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The real binary with the store at `store` (a PostgreSQL URL).
fn envbench(store: &str, args: &[&str]) -> Output {
    common::envbench(Path::new(store), args)
}

fn json(output: &Output) -> Value {
    assert!(output.status.success(), "{}", stderr(output));
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The runs of one fleet: the merged run, then each agent's run by agent name.
fn fleet_runs(store: &str, fleet: &str) -> (Value, Vec<(String, Value)>) {
    let listed = json(&envbench(store, &["results", "list", "--json", "--tag", &format!("fleet={fleet}")]));
    let mut merged = None;
    let mut agents = Vec::new();
    for summary in listed.as_array().unwrap() {
        let run = json(&envbench(store, &["results", "show", "--json", summary["uuid"].as_str().unwrap()]));
        match summary["tags"]["fleet_agent"].as_str() {
            Some(agent) => agents.push((agent.to_string(), run)),
            None => merged = Some(run),
        }
    }
    agents.sort_by(|a, b| a.0.cmp(&b.0));
    (merged.expect("the merged run is stored"), agents)
}

/// The first sample of a run's result.
fn figure(run: &Value, test: &str, metric: &str) -> f64 {
    run["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["test_id"] == test && r["metric"] == metric)
        .unwrap_or_else(|| panic!("{test} {metric} in {run}"))["samples"][0]
        .as_f64()
        .unwrap()
}

/// Nothing an agent made is left in the fleet's directory.
fn assert_nothing_left(dir: &Path) {
    let left: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    assert!(left.is_empty(), "the agents left {left:?}");
}

/// The fleet id of a fleet's merged run, from its JSON output.
fn fleet_id(output: &Output) -> String {
    let value = json(output);
    value["fleet"]["fleet"].as_str().expect("the fleet document in the JSON").to_string()
}

#[test]
fn a_local_fleet_merges_its_agents_into_one_sweep_with_each_hosts_share() {
    let schema = Schema::new("local");
    let store = schema.url();
    let dir = scratch("fleet", "local");
    let dir_text = dir.to_str().unwrap();
    let args = [
        "fleet",
        "--transport",
        "local",
        "--agents",
        "3",
        "ranread",
        "--dir",
        dir_text,
        "--size",
        "16m",
        "--jobs",
        "1,2,4",
        "--duration",
        "1s",
        "--label",
        "fleet-local",
    ];
    let output = envbench(&store, &args);
    let text = stdout(&output);
    assert!(output.status.success(), "{text}\n{}", stderr(&output));
    assert!(text.contains("Random read sweep") && text.contains("each host's share"), "{text}");
    for agent in ["local-1", "local-2", "local-3"] {
        assert!(text.contains(agent), "{agent} in {text}");
    }
    assert!(text.contains("Start skew: at most"), "{text}");
    assert_nothing_left(&dir);

    let mut json_args = args.to_vec();
    json_args.push("--json");
    let jobs = json_args.iter().position(|a| *a == "1,2,4").unwrap();
    json_args[jobs] = "4";
    let output = envbench(&store, &json_args);
    let fleet = fleet_id(&output);
    let (merged, agents) = fleet_runs(&store, &fleet);
    assert_eq!(agents.len(), 3, "each agent stores its own run");
    assert_eq!(merged["label"], "fleet-local");
    for (name, run) in &agents {
        assert_eq!(run["label"], format!("fleet-local/{name}"));
        assert_eq!(run["status"], "complete");
    }
    // The merged IOPS are the agents' stored IOPS added up; the jobs 4 = 2 + 1 + 1.
    let sum: f64 = agents.iter().map(|(_, run)| figure(run, "J=4", "iops")).sum();
    let total = figure(&merged, "J=4", "iops");
    assert!((total - sum).abs() <= 1e-6 * sum, "merged {total} against the agents' sum {sum}");
    let document = &merged["attachments"]["fleet"];
    let shares = document["steps"][0]["shares"].as_array().unwrap();
    let jobs: Vec<u64> = shares.iter().map(|s| s["assignment"]["jobs"].as_u64().unwrap()).collect();
    assert_eq!(jobs, [2, 1, 1]);
    let percent: f64 = shares.iter().map(|s| s["share_percent"].as_f64().unwrap()).sum();
    assert!((percent - 100.0).abs() < 1e-6, "{document}");
    for share in shares {
        assert!(share["skew_ms"].as_f64().unwrap().is_finite(), "{share}");
        assert!(share["cpu_busy_percent"].as_f64().is_some(), "each host's sampler figures: {share}");
    }
    for host in document["hosts"].as_array().unwrap() {
        assert!(host["run"].is_string() && host["error"].is_null(), "{host}");
    }
    // The merged latency percentiles come from every read: within the agents' own range.
    let p99 = figure(&merged, "J=4", "latency_p99");
    let lowest = agents.iter().map(|(_, r)| figure(r, "J=4", "latency_p99")).fold(f64::INFINITY, f64::min);
    let highest = agents.iter().map(|(_, r)| figure(r, "J=4", "latency_p99")).fold(0.0, f64::max);
    assert!(p99 >= lowest * 0.99 && p99 <= highest * 1.01, "{p99} within {lowest}..{highest}");
    assert_nothing_left(&dir);
    // The report (and the viewer, which shows the same sections) breaks the fleet's run down by host.
    let report = scratch("fleet", "local-report").join("report.html");
    let uuid = merged["uuid"].as_str().unwrap();
    let output = envbench(&store, &["report", "--output", report.to_str().unwrap(), uuid]);
    assert!(output.status.success(), "{}", stderr(&output));
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.contains("3 hosts at once (local transport)") && html.contains("local-3"), "{html}");
}

#[test]
fn a_local_fleet_runs_each_storage_test_on_every_agent_at_once() {
    let schema = Schema::new("disk");
    let store = schema.url();
    let dir = scratch("fleet", "disk");
    let output = envbench(
        &store,
        &[
            "fleet",
            "--transport",
            "local",
            "--agents",
            "2",
            "disk",
            "--dir",
            dir.to_str().unwrap(),
            "--size",
            "16m",
            "--test",
            "rnd:4k:q8:t1:read",
            "--test",
            "seq:128k:q2:t1:write",
            "--runs",
            "2",
            "--duration",
            "300ms",
            "--interval",
            "0s",
            "--no-warmup",
            "--label",
            "fleet-disk",
            "--json",
        ],
    );
    let fleet = fleet_id(&output);
    let (merged, agents) = fleet_runs(&store, &fleet);
    assert_eq!(agents.len(), 2);
    for (test, metric) in [("RND4K Q8T1 read", "iops"), ("SEQ128K Q2T1 write", "throughput")] {
        let samples = |run: &Value| -> Vec<f64> {
            let result = run["results"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["test_id"] == test && r["metric"] == metric)
                .unwrap_or_else(|| panic!("{test} {metric} in {run}"));
            result["samples"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect()
        };
        let total = samples(&merged);
        assert_eq!(total.len(), 2, "one sample per run");
        for (run, value) in total.iter().enumerate() {
            let sum: f64 = agents.iter().map(|(_, a)| samples(a)[run]).sum();
            assert!((value - sum).abs() <= 1e-6 * sum, "{test} run {run}: {value} against {sum}");
        }
    }
    assert_eq!(merged["attachments"]["fleet"]["steps"].as_array().unwrap().len(), 2, "one step per test");
    assert_nothing_left(&dir);
}

/// The id of the one fleet a store holds, and what the coordinator printed (the report, then its progress).
fn the_fleet(store: &str, output: &Output) -> (String, String) {
    let text = format!("{}\n{}", stdout(output), stderr(output));
    assert!(output.status.success(), "{text}");
    let listed = json(&envbench(store, &["results", "list", "--json"]));
    let fleet = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|run| run["tags"]["fleet_agent"].is_null())
        .and_then(|run| run["tags"]["fleet"].as_str())
        .unwrap_or_else(|| panic!("a fleet's run in {listed}"));
    (fleet.to_string(), text)
}

/// A workload document's steps.
fn steps_of<'a>(run: &'a Value, workload: &str) -> &'a Vec<Value> {
    run["attachments"][workload]["steps"].as_array().unwrap_or_else(|| panic!("{workload} steps in {run}"))
}

#[test]
fn a_local_fleet_spreads_oltp_users_over_its_agents_against_one_server_loaded_once() {
    let store = Schema::new("oltp_store");
    let target = Schema::new("oltp_target");
    let (store, target_url) = (store.url(), target.url());
    let args = [
        "fleet",
        "--transport",
        "local",
        "--agents",
        "3",
        "oltp",
        "--target",
        &target_url,
        "--users",
        "4",
        "--ramp",
        "1s",
        "--duration",
        "3s",
        "--target-latency",
        "10s",
        "--label",
        "fleet-oltp",
    ];
    let (fleet, text) = the_fleet(&store, &envbench(&store, &args));
    // Loaded once, by the coordinator, before any agent started; each agent found that load.
    assert_eq!(text.matches("loaded ").count(), 1, "{text}");
    for agent in ["local-1", "local-2", "local-3"] {
        assert!(text.contains(&format!("{agent}: ready")), "{agent} in {text}");
    }
    assert!(text.contains("2 users (#1-2)") && text.contains("1 user (#4)"), "{text}");
    assert!(text.contains("PASS 4") && text.contains("each host's share"), "{text}");
    let (merged, agents) = fleet_runs(&store, &fleet);
    assert_eq!(agents.len(), 3);
    let step = &steps_of(&merged, "oltp")[0];
    assert_eq!(step["users"], 4);
    // What the clients counted adds up over the hosts; the users were shared 2 + 1 + 1.
    let agent_steps: Vec<&Value> = agents.iter().map(|(_, run)| &steps_of(run, "oltp")[0]).collect();
    let users: Vec<u64> = agent_steps.iter().map(|s| s["users"].as_u64().unwrap()).collect();
    assert_eq!(users, [2, 1, 1]);
    let transactions: u64 = agent_steps.iter().map(|s| s["transactions"].as_u64().unwrap()).sum();
    assert_eq!(step["transactions"].as_u64().unwrap(), transactions);
    let tpm: f64 = agent_steps.iter().map(|s| s["tpm"].as_f64().unwrap()).sum();
    assert!((step["tpm"].as_f64().unwrap() - tpm).abs() <= 1e-6 * tpm, "{step}");
    // NOPM is the database's count over the window, close to the New-Orders the hosts' users committed: but for
    // those that straddle the window's ends (two a user) and the hosts' start skew, which a busy host makes larger.
    let nopm = figure(&merged, "U=4", "nopm");
    let committed: f64 = agents.iter().map(|(_, run)| figure(run, "U=4", "nopm")).sum();
    let seconds = step["measured_seconds"].as_f64().unwrap();
    let slack = 0.25 * committed + 2.0 * 4.0 * 60.0 / seconds;
    assert!(nopm > 0.0 && (nopm - committed).abs() <= slack, "database {nopm}, clients {committed}");
    for (name, run) in &agents {
        assert_eq!(run["label"], format!("fleet-oltp/{name}"));
        assert_eq!(run["attachments"]["oltp"]["load"]["reused"], true, "{name} built nothing");
    }
    // The consistency conditions hold after every host's users, checked once.
    let checks = merged["attachments"]["oltp"]["consistency"].as_array().unwrap();
    assert!(!checks.is_empty() && checks.iter().all(|c| c["passed"] == true), "{checks:?}");
    let shares = merged["attachments"]["fleet"]["steps"][0]["shares"].as_array().unwrap();
    assert_eq!(shares.len(), 3);
    assert_eq!(merged["attachments"]["fleet"]["throughput_unit"], "TPM");
    // The coordinator settled the database before the step: one VACUUM after the load, one before the step.
    let vacuums = common::psql(&format!(
        "SELECT vacuum_count FROM pg_stat_user_tables WHERE schemaname = '{}' AND relname = 'tpcc_stock'",
        target.name
    ));
    assert_eq!(vacuums, "2", "vacuumed by the load and before the step");
}

/// htap on two agents: the tables and the CH tables loaded once by the coordinator; each step's users and streams
/// shared out, numbered across the fleet; the queries of every host counted once in the merged step; what the
/// streams cost the transactions judged on the fleet's run only.
#[test]
fn a_local_fleet_spreads_htap_users_and_streams_over_its_agents() {
    let store = Schema::new("htap_store");
    let target = Schema::new("htap_target");
    let (store, target_url) = (store.url(), target.url());
    let args = [
        "fleet",
        "--transport",
        "local",
        "--agents",
        "2",
        "htap",
        "--target",
        &target_url,
        "--warehouses",
        "1",
        "--users",
        "3",
        "--analytic-users",
        "0,2",
        "--ramp",
        "1s",
        // Long enough for a query to start and end in the window on a busy host.
        "--duration",
        "5s",
        "--label",
        "fleet-htap",
    ];
    let (fleet, text) = the_fleet(&store, &envbench(&store, &args));
    assert_eq!(text.matches("loaded the CH-benCHmark tables").count(), 1, "{text}");
    assert!(text.contains("local-1: ready") && text.contains("local-2: ready"), "{text}");
    // Users from the first agent on, streams from the last agent back.
    assert!(text.contains("2 users (#1-2), 1 stream (#1)") && text.contains("1 user (#3), 1 stream (#2)"), "{text}");
    assert!(text.contains("PASS 4") && text.contains("Verdict: 2 analytic streams"), "{text}");
    let (merged, agents) = fleet_runs(&store, &fleet);
    assert_eq!(agents.len(), 2);
    let steps = steps_of(&merged, "htap");
    let shape: Vec<(u64, u64)> =
        steps.iter().map(|s| (s["users"].as_u64().unwrap(), s["streams"].as_u64().unwrap())).collect();
    assert_eq!(shape, [(3, 0), (3, 2), (0, 2)]);
    // Every query an agent completed is counted once in the fleet's step; every stream ran one (a busy host may not
    // finish one in the window, and says so).
    for (index, step) in steps.iter().enumerate().skip(1) {
        let analytics = |run: &Value, key: &str| steps_of(run, "htap")[index]["analytics"][key].as_u64().unwrap();
        let completed: u64 = agents.iter().map(|(_, run)| analytics(run, "completed")).sum();
        let unfinished: u64 = agents.iter().map(|(_, run)| analytics(run, "unfinished")).sum();
        assert!(completed + unfinished > 0, "{step}");
        assert_eq!(step["analytics"]["completed"].as_u64().unwrap(), completed, "{step}");
        assert_eq!(step["analytics"]["streams"], 2);
    }
    let users: Vec<u64> = agents.iter().map(|(_, run)| steps_of(run, "htap")[1]["users"].as_u64().unwrap()).collect();
    assert_eq!(users, [2, 1]);
    assert!(figure(&merged, "U=3 A=2", "nopm_cost").is_finite());
    let alone = steps.iter().find(|s| s["users"] == 0).unwrap();
    let per_hour = figure(&merged, "U=0 A=2", "queries_per_hour");
    assert!(per_hour >= 0.0 && (per_hour > 0.0) == (alone["analytics"]["completed"].as_u64().unwrap() > 0));
    for (name, run) in &agents {
        assert_eq!(run["label"], format!("fleet-htap/{name}"));
        let results = run["results"].as_array().unwrap();
        assert!(results.iter().all(|r| r["metric"] != "nopm_cost"), "{name}: the cost is the fleet's");
        assert!(results.iter().any(|r| r["parameters"]["fleet_step"] == "U=3 A=2"), "{name}");
    }
    let checks = merged["attachments"]["htap"]["consistency"].as_array().unwrap();
    assert!(!checks.is_empty() && checks.iter().all(|c| c["passed"] == true), "{checks:?}");
}

#[test]
fn a_local_fleet_reads_one_postgresql_table_built_once() {
    let store = Schema::new("ranread_db_store");
    let target = Schema::new("ranread_db_target");
    let (store, target_url) = (store.url(), target.url());
    let dir = scratch("fleet", "ranread-db");
    let args = [
        "fleet",
        "--transport",
        "local",
        "--agents",
        "2",
        "ranread",
        "--db",
        &target_url,
        "--dir",
        dir.to_str().unwrap(),
        "--size",
        "8m",
        "--jobs",
        "2",
        "--duration",
        "1s",
    ];
    let (fleet, text) = the_fleet(&store, &envbench(&store, &args));
    assert_eq!(text.matches("built table").count(), 1, "{text}");
    assert!(text.contains("the agents share this table") && text.matches(": ready: ").count() == 2, "{text}");
    let (merged, agents) = fleet_runs(&store, &fleet);
    let sum: f64 = agents.iter().map(|(_, run)| figure(run, "J=2", "iops")).sum();
    let total = figure(&merged, "J=2", "iops");
    assert!((total - sum).abs() <= 1e-6 * sum, "merged {total} against the agents' sum {sum}");
    // Each agent reads the table's block counters around the same window: the fleet keeps one count, not two.
    let database = &merged["attachments"]["ranread"]["outcome"]["steps"][0]["database"];
    assert!(database["heap_blocks_hit"].as_i64().is_some(), "{database}");
    assert_nothing_left(&dir);
}

#[test]
fn a_local_fleet_runs_tpch_streams_on_its_agents_against_one_server() {
    let store = Schema::new("tpch_store");
    let target = Schema::new("tpch_target");
    let store = store.url();
    let args = [
        "fleet",
        "--transport",
        "local",
        "--agents",
        "2",
        "tpch",
        "--target",
        "postgres://postgres@127.0.0.1:5432/test",
        "--schema",
        &target.name,
        "--sf",
        "0.01",
        "--users",
        "3",
    ];
    let (fleet, text) = the_fleet(&store, &envbench(&store, &args));
    assert!(text.contains("loaded SF 0.01") && text.matches("ready: reusing").count() == 2, "{text}");
    assert!(text.contains("streams 1-2 + refresh stream") && text.contains("stream 3"), "{text}");
    let (merged, agents) = fleet_runs(&store, &fleet);
    let outcome = &merged["attachments"]["tpch"]["outcome"];
    let streams = outcome["streams"].as_array().unwrap();
    // The power stream, the three users' streams and the refresh stream, from two hosts.
    let numbers: Vec<(String, u64)> =
        streams.iter().map(|s| (s["phase"].as_str().unwrap().to_string(), s["stream"].as_u64().unwrap())).collect();
    assert_eq!(numbers.len(), 5, "{numbers:?}");
    assert_eq!(outcome["users"], 3);
    assert!(outcome["failures"].as_array().unwrap().is_empty(), "{}", outcome["failures"]);
    assert!(outcome["metrics"]["qphh_at_size"].as_f64().is_some_and(|q| q > 0.0), "{}", outcome["metrics"]);
    // The power test ran on the first agent; the throughput test's streams were shared 2 + 1.
    let (first, second) =
        (&agents[0].1["attachments"]["tpch"]["outcome"], &agents[1].1["attachments"]["tpch"]["outcome"]);
    let phases = |o: &Value| -> Vec<String> {
        o["streams"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| format!("{}{}", s["phase"].as_str().unwrap(), s["stream"]))
            .collect()
    };
    assert_eq!(phases(first), ["power0", "throughput1", "throughput2", "throughput4"], "{first}");
    assert_eq!(phases(second), ["throughput3"]);
    let fleet_steps = merged["attachments"]["fleet"]["steps"].as_array().unwrap();
    let names: Vec<&str> = fleet_steps.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["power", "throughput"]);
}

#[test]
fn bad_fleet_options_are_refused_before_anything_starts() {
    let dir = scratch("fleet", "usage");
    let sqlite = dir.join("results.db");
    let sqlite = sqlite.to_str().unwrap();
    let dir_text = dir.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["fleet", "--host", "db1", "ranread", "--dir", dir_text], "needs a store every host reaches"),
        (vec!["fleet", "--transport", "local", "ranread", "--dir", dir_text], "needs --agents N"),
        (vec!["fleet", "ranread", "--dir", dir_text], "needs its hosts"),
        (
            vec![
                "fleet",
                "--transport",
                "local",
                "--agents",
                "2",
                "ranread",
                "--dir",
                dir_text,
                "--db",
                "mysql://x@y/z",
            ],
            "postgres://",
        ),
        (vec!["fleet", "--transport", "local", "--agents", "2", "cube"], "cube"),
        (
            vec!["fleet", "--transport", "local", "--agents", "2", "disk", "--profile", "commit", "--dir", dir_text],
            "does not run on a fleet",
        ),
        (vec!["fleet", "--transport", "local", "--agents", "2", "oltp", "--dir", dir_text], "one database server"),
        (
            vec![
                "fleet",
                "--transport",
                "local",
                "--agents",
                "2",
                "oltp",
                "--target",
                "postgres://postgres:hunter2@127.0.0.1:5432/test",
            ],
            "set PGPASSWORD",
        ),
        (vec!["fleet", "--transport", "local", "--agents", "2", "tpch", "--dir", dir_text], "one database server"),
        (vec!["fleet", "--transport", "local", "--agents", "2", "htap", "--dir", dir_text], "one database server"),
        (
            vec![
                "fleet",
                "--transport",
                "local",
                "--agents",
                "2",
                "htap",
                "--target",
                "postgres://postgres@127.0.0.1:5432/test",
                "--drop",
            ],
            "not on a fleet",
        ),
    ];
    for (args, expected) in cases {
        let output = envbench(sqlite, &args);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {}", stderr(&output));
        assert!(stderr(&output).contains(expected), "{args:?}: {}", stderr(&output));
        assert!(!stderr(&output).contains("hunter2"), "no password is repeated: {}", stderr(&output));
    }
    assert!(!Path::new(sqlite).exists(), "no store is created for bad input");
    assert_nothing_left(&dir);
}

#[test]
fn an_unreachable_host_is_named_and_leaves_no_agent_or_file() {
    let schema = Schema::new("unreachable");
    let store = schema.url();
    let dir = scratch("fleet", "unreachable");
    let started = Instant::now();
    let output = envbench(
        &store,
        &[
            "fleet",
            "--host",
            "nobody@127.0.0.1",
            "--ssh-option",
            "Port=1",
            "ranread",
            "--dir",
            dir.to_str().unwrap(),
            "--size",
            "8m",
            "--jobs",
            "1",
            "--duration",
            "1s",
        ],
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(message.contains("agent nobody@127.0.0.1") && message.contains("refused"), "{message}");
    assert!(started.elapsed() < Duration::from_secs(60), "it gives up at once, not after a timeout");
    let listed = json(&envbench(&store, &["results", "list", "--json"]));
    let runs = listed.as_array().unwrap();
    assert_eq!(runs.len(), 1, "only the fleet's own run: {listed}");
    assert_eq!(runs[0]["status"], "failed");
    assert_nothing_left(&dir);
}

/// An sshd of the test's own on a loopback port, with a fresh host key and a client key it accepts; stopped on drop.
struct Sshd {
    child: Child,
    dir: PathBuf,
}

impl Sshd {
    fn start(dir: &Path) -> Sshd {
        let keygen = |path: &Path| {
            let status = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(path)
                .status()
                .expect("ssh-keygen runs");
            assert!(status.success());
        };
        keygen(&dir.join("host_key"));
        keygen(&dir.join("client_key"));
        std::fs::copy(dir.join("client_key.pub"), dir.join("authorized_keys")).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let user = String::from_utf8(Command::new("id").arg("-un").output().unwrap().stdout).unwrap();
        std::fs::create_dir_all("/run/sshd").ok();
        std::fs::write(
            dir.join("sshd_config"),
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {0}/host_key\nAuthorizedKeysFile {0}/authorized_keys\n\
                 PidFile {0}/sshd.pid\nStrictModes no\nUsePAM no\nPasswordAuthentication no\n\
                 KbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n",
                dir.display()
            ),
        )
        .unwrap();
        std::fs::write(
            dir.join("ssh_config"),
            format!(
                "Host fleet-one fleet-two\n  HostName 127.0.0.1\n  Port {port}\n  User {}\n  IdentityFile {}/client_key\n  \
                 IdentitiesOnly yes\n  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n\
                 Host fleet-dead\n  HostName 127.0.0.1\n  Port 1\n  BatchMode yes\n",
                user.trim(),
                dir.display()
            ),
        )
        .unwrap();
        let child = Command::new("/usr/sbin/sshd")
            .args(["-D", "-e", "-f"])
            .arg(dir.join("sshd_config"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("sshd starts");
        let deadline = Instant::now() + Duration::from_secs(60);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "sshd listens on {port}");
            std::thread::sleep(Duration::from_millis(50));
        }
        Sshd { child, dir: dir.to_path_buf() }
    }

    fn config(&self) -> PathBuf {
        self.dir.join("ssh_config")
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_two_host_fleet_runs_through_a_real_sshd_with_the_binary_copied_over() {
    let schema = Schema::new("ssh");
    let store = schema.url();
    let keys = scratch("fleet", "ssh-keys");
    let sshd = Sshd::start(&keys);
    let dir = scratch("fleet", "ssh");
    let config = sshd.config();
    // Secrets the agents need (the store's password, a database password) must never be on ssh's command line,
    // where `ps` on either host shows them: a wrapper logs every argv ssh is given, then runs the real ssh.
    let wrapper_dir = scratch("fleet", "ssh-wrapper");
    let argv_log = wrapper_dir.join("argv.log");
    let wrapper = wrapper_dir.join("ssh");
    std::fs::write(
        &wrapper,
        // It also keeps what the coordinator sends as the copied binary, to read it after.
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> {}\ncase \"$*\" in *'gzip -dc > '*) \
             if [ -n \"$TRUNCATE_COPY\" ]; then head -c 65536 | /usr/bin/ssh \"$@\"; exit $?; fi; \
             tee {}.$$ | /usr/bin/ssh \"$@\"; exit $? ;; esac\n\
             exec /usr/bin/ssh \"$@\"\n",
            argv_log.display(),
            wrapper_dir.join("copied").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&wrapper, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", wrapper_dir.display(), std::env::var("PATH").unwrap_or_default());
    // Trust authentication accepts any password: the store URL can carry one.
    let secret_store = store.replacen("postgres@", "postgres:store-secret@", 1);
    let output = Command::new(env!("CARGO_BIN_EXE_envbench"))
        .args([
            "fleet",
            "--ssh-config",
            config.to_str().unwrap(),
            "--host",
            "fleet-one",
            "--host",
            "fleet-two",
            "--copy-binary",
            "ranread",
            "--dir",
            dir.to_str().unwrap(),
            "--size",
            "8m",
            "--jobs",
            "1,2",
            "--duration",
            "500ms",
            "--json",
        ])
        .env("ENVBENCH_STORE", &secret_store)
        .env("PGPASSWORD", "pg-env-secret")
        .env("PATH", &path)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let argv = std::fs::read_to_string(&argv_log).expect("ssh was run through the wrapper");
    assert!(argv.contains("agent --fleet"), "{argv}");
    for secret in ["store-secret", "pg-env-secret", "postgres://"] {
        assert!(!argv.contains(secret), "{secret} is on ssh's command line:\n{argv}");
    }
    // The hosts got the program without its debug information (this test's build has line tables), and ran it.
    let copies: Vec<_> = std::fs::read_dir(&wrapper_dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.file_name().unwrap().to_string_lossy().starts_with("copied."))
        .collect();
    assert_eq!(copies.len(), 2, "one copy a host: {copies:?}");
    // What went over ssh is gzip's stream of it: the hosts unpack it with their gzip.
    let packed = std::fs::metadata(&copies[0]).unwrap().len() as usize;
    let unpacked = Command::new("gzip").arg("-dc").arg(&copies[0]).output().unwrap();
    assert!(unpacked.status.success(), "{}", String::from_utf8_lossy(&unpacked.stderr));
    let sent = unpacked.stdout;
    let here = std::fs::read(env!("CARGO_BIN_EXE_envbench")).unwrap();
    assert!(!envbench_fleet::strip::debug_section_names(&here).unwrap().is_empty());
    assert_eq!(envbench_fleet::strip::debug_section_names(&sent).unwrap(), Vec::<String>::new());
    // Smaller by what it left out (the test build's line tables; a release build has none to leave).
    assert!(sent.len() < here.len(), "{} bytes unpacked of {}", sent.len(), here.len());
    assert!(packed < sent.len() / 2, "{packed} bytes sent for {}", sent.len());
    let fleet = fleet_id(&output);
    let (merged, agents) = fleet_runs(&store, &fleet);
    let names: Vec<&str> = agents.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["fleet-one", "fleet-two"]);
    assert_eq!(merged["attachments"]["fleet"]["transport"], "ssh");
    let sum: f64 = agents.iter().map(|(_, run)| figure(run, "J=2", "iops")).sum();
    assert!((figure(&merged, "J=2", "iops") - sum).abs() <= 1e-6 * sum);
    assert_nothing_left(&dir);
    let copied: Vec<_> = std::fs::read_dir("/tmp")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(&format!("envbench-fleet-{}", &fleet[..8])))
        .collect();
    assert!(copied.is_empty(), "the copied binary is removed");

    // With --keep-going, a host that cannot be reached is named and the fleet completes without it.
    let output = envbench(
        &store,
        &[
            "fleet",
            "--ssh-config",
            config.to_str().unwrap(),
            "--host",
            "fleet-one",
            "--host",
            "fleet-dead",
            "--copy-binary",
            "--keep-going",
            "ranread",
            "--dir",
            dir.to_str().unwrap(),
            "--size",
            "8m",
            "--jobs",
            "1,2",
            "--duration",
            "300ms",
        ],
    );
    let (text, message) = (stdout(&output), stderr(&output));
    assert!(output.status.success(), "{text}\n{message}");
    assert!(message.contains("agent fleet-dead") && message.contains("goes on without it"), "{message}");
    assert!(text.contains("fleet-dead:") && text.contains("took no (further) part"), "{text}");
    assert!(text.contains("2 jobs on 1 agent") || message.contains("2 jobs on 1 agent"), "{text}\n{message}");
    assert_nothing_left(&dir);

    // A copy cut short (the stream ends mid-way, as a dropped connection ends it) is refused, and leaves no part of
    // the binary on the host (issue #67, F5).
    let parts = || -> Vec<String> {
        std::fs::read_dir("/tmp")
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with("envbench-fleet-") && name.ends_with(".part"))
            .collect()
    };
    let before = parts();
    let output = Command::new(env!("CARGO_BIN_EXE_envbench"))
        .args(["fleet", "--ssh-config", config.to_str().unwrap(), "--host", "fleet-one", "--copy-binary"])
        .args(["ranread", "--dir", dir.to_str().unwrap(), "--size", "8m", "--jobs", "1", "--duration", "300ms"])
        .env("ENVBENCH_STORE", &store)
        .env("PATH", &path)
        .env("TRUNCATE_COPY", "1")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(!output.status.success(), "{}", stderr(&output));
    assert!(stderr(&output).contains("copying envbench to fleet-one failed"), "{}", stderr(&output));
    let left: Vec<String> = parts().into_iter().filter(|p| !before.contains(p)).collect();
    assert!(left.is_empty(), "a refused copy left {left:?} in /tmp");
    assert_nothing_left(&dir);
}

/// The processes whose command line holds `text`.
fn processes_with(text: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|bytes| String::from_utf8_lossy(&bytes).replace('\0', " "))
        .filter(|line| line.contains(text))
        .collect()
}

#[test]
fn ctrl_c_on_the_coordinator_stops_every_agent_and_removes_their_files() {
    let schema = Schema::new("interrupt");
    let store = schema.url();
    let dir = scratch("fleet", "interrupt");
    let child = Command::new(env!("CARGO_BIN_EXE_envbench"))
        .args(["fleet", "--transport", "local", "--agents", "2", "ranread", "--dir", dir.to_str().unwrap()])
        .args(["--size", "8m", "--jobs", "1,2", "--duration", "60s", "--label", "fleet-interrupted"])
        .env("ENVBENCH_STORE", &store)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Both agents prepared their files, and the first step runs.
    let deadline = Instant::now() + Duration::from_secs(60);
    let prepared = |dir: &Path| {
        std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.path().join("envbench-ranread.dat").exists())
            .count()
    };
    while prepared(&dir) < 2 {
        assert!(Instant::now() < deadline, "the agents prepare");
        std::thread::sleep(Duration::from_millis(100));
    }
    // The fleet's run and both agents' are stored (running) before the interrupt, however slow the host.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let listed = json(&envbench(&store, &["results", "list", "--json"]));
        if listed.as_array().unwrap().iter().filter(|r| r["status"] == "running").count() >= 3 {
            break;
        }
        assert!(Instant::now() < deadline, "the fleet's runs are stored: {listed}");
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_secs(1));
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let started = Instant::now();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130), "{}", stderr(&output));
    assert!(started.elapsed() < Duration::from_secs(55), "it stops at once, not after the 60 s step");
    let fleet = stderr(&output)
        .lines()
        .find_map(|l| l.strip_prefix("envbench fleet ").and_then(|rest| rest.split(':').next()).map(String::from))
        .expect("the fleet's id is announced");
    assert!(processes_with(&format!("--fleet {fleet}")).is_empty(), "no agent is left running");
    assert_nothing_left(&dir);
    let listed = json(&envbench(&store, &["results", "list", "--json", "--tag", &format!("fleet={fleet}")]));
    let runs = listed.as_array().unwrap();
    assert_eq!(runs.len(), 3, "the fleet's run and each agent's: {listed}");
    for run in runs {
        assert_eq!(run["status"], "interrupted", "{run}");
    }
}
