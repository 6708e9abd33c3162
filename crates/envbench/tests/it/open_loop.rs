//! Latency as users feel it, end to end on the real binary: a stall that a closed loop hides and an open loop counts
//! (PostgreSQL, an `ACCESS EXCLUSIVE` lock held on a table New-Order needs), the latency limit that skips what cannot
//! start in time, serialization failures retried and counted by kind with NOPM still the order counter's, the
//! capacity within a service level beside the closed-loop peak, Zipfian keys for tpcb, live Prometheus metrics read
//! with a real parser, and the options refused with what to do.

use crate::common;

use common::{Schema, envbench, psql, runs, scratch, show, stderr, stdout};
use serde_json::Value;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long the test holds the lock. A transaction that arrives as the stall begins waits the whole of it; one that
/// arrives t later waits about the stall less t, so p99 reaches 2 s only when at least 1% of New-Orders wait 2 s or
/// more: a 3 s stall in a 5 s window gives a fifth of them that wait.
const STALL_SECONDS: f64 = 3.0;

fn spawn(store: &Path, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_envbench"))
        .args(args)
        .env("ENVBENCH_STORE", store)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs")
}

/// Wait until the run's users have connected to `schema` (each pins its session there, and the step begins as soon
/// as all have), at most two minutes.
fn users_running(schema: &str) {
    let started = Instant::now();
    let sql = format!(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'envbench-oltp user' AND query LIKE '%{schema}%'"
    );
    while psql(&sql).parse::<usize>().unwrap_or(0) == 0 {
        assert!(started.elapsed() < Duration::from_secs(120), "the run's users never started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// One oltp run on `url` whose step stalls: `ACCESS EXCLUSIVE` on tpcc_stock, which every New-Order updates, for
/// [`STALL_SECONDS`] from half a second into the measured window. The step's figures and the run's text.
fn stalled_step(store: &Path, url: &str, schema: &str, extra: &[&str]) -> (Value, String) {
    let mut args = vec!["oltp", "--target", url, "--users", "4", "--ramp", "1s", "--duration", "5s", "--no-vacuum"];
    args.extend(["--target-latency", "1h"]);
    args.extend(extra);
    let child = spawn(store, &args);
    users_running(schema);
    std::thread::sleep(Duration::from_millis(1500));
    psql(&format!(
        "BEGIN; LOCK TABLE {schema}.tpcc_stock IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep({STALL_SECONDS}); COMMIT;"
    ));
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}\n{}", stdout(&output), stderr(&output));
    let run = show(store, runs(store)[0]["uuid"].as_str().unwrap());
    (run["attachments"]["oltp"]["steps"][0].clone(), stdout(&output))
}

fn kind<'a>(step: &'a Value, name: &str) -> &'a Value {
    step["kinds"].as_array().unwrap().iter().find(|k| k["kind"] == name).unwrap_or_else(|| panic!("{name}: {step}"))
}

fn ms(value: &Value) -> f64 {
    value.as_f64().unwrap_or_else(|| panic!("not a number: {value}"))
}

/// On PostgreSQL, with one load: the same 3 s stall in a closed loop and an open one, then with a latency limit;
/// serializable users on one warehouse; and the capacity within a service level.
#[test]
fn postgresql_open_loops_retries_and_capacity() {
    let schema = Schema::new("open_loop");
    let url = schema.url();
    let dir = scratch("open-loop", "postgres");
    let store = dir.join("results.db");

    // A closed loop: each user stalls on one New-Order, and sends nothing else meanwhile, so the stall is a handful
    // of slow transactions among hundreds: the max shows it, the 90th percentile does not.
    let (closed, _) = stalled_step(&store, &url, &schema.name, &[]);
    let new_order = kind(&closed, "NewOrder");
    assert!(ms(&new_order["max_ms"]) >= 2000.0, "the stalled New-Orders waited: {new_order}");
    assert!(ms(&new_order["p90_ms"]) < 1000.0, "{new_order}");
    let closed_p99 = ms(&new_order["p99_ms"]);
    assert!(closed["open"].is_null());

    // An open loop at 40 transactions a second: everything that arrives during the stall waits behind it, and its
    // response time runs from when it was meant to start.
    let (open, text) = stalled_step(&store, &url, &schema.name, &["--rate", "40"]);
    let new_order = kind(&open, "NewOrder");
    let (p90, p99) = (ms(&new_order["p90_ms"]), ms(&new_order["p99_ms"]));
    assert!(p99 >= 2000.0, "open-loop New-Order p99 {p99} ms: {new_order}");
    assert!(p90 >= 1000.0, "open-loop New-Order p90 {p90} ms: {new_order}");
    assert!(p99 > closed_p99, "the open loop shows what the closed one hid: {p99} ms against {closed_p99} ms");
    // The service time, from when a session took the transaction, hides the wait behind the stall.
    assert!(ms(&new_order["service"]["p50_ms"]) < ms(&new_order["p50_ms"]), "{new_order}");
    let figures = &open["open"];
    assert!(figures["late"].as_u64().unwrap() >= 40, "the arrivals during the stall started late: {figures}");
    assert!(ms(&figures["lag_max_ms"]) >= 2000.0, "{figures}");
    assert_eq!(figures["offered_tps"], 40.0);
    for needle in ["Open loop: poisson arrivals at 40/s", "SERVICE P95", "U=4 R=40/s", "LATE"] {
        assert!(text.contains(needle), "{needle} missing from\n{text}");
    }

    // With a latency limit, what could not start within it is skipped and counted, and what ended past it too.
    let (limited, _) = stalled_step(&store, &url, &schema.name, &["--rate", "40", "--latency-limit", "500ms"]);
    let figures = &limited["open"];
    assert!(figures["skipped"].as_u64().unwrap() >= 20, "the stall's arrivals were skipped: {figures}");
    assert!(figures["over_limit"].as_u64().unwrap() >= 1, "{figures}");
    assert_eq!(figures["latency_limit_ms"], 500.0);

    // Serializable users on one warehouse collide on its districts: the failures are retried and counted by kind,
    // and NOPM, counted from the districts' order ids, still agrees with the New-Orders the users saw commit.
    let mut args = vec!["oltp", "--target", &url, "--users", "2", "--isolation", "serializable", "--no-vacuum"];
    args.extend(["--ramp", "0s", "--duration", "4s", "--target-latency", "1h"]);
    let output = envbench(&store, &args);
    let text = stdout(&output);
    assert!(text.contains("Isolation: serializable") && text.contains("serialization"), "{text}");
    let run = show(&store, runs(&store)[0]["uuid"].as_str().unwrap());
    let step = &run["attachments"]["oltp"]["steps"][0];
    // A few may still fail after their tries (the run then ends with failures); the step stays a measurement.
    let failures = step["failures"].as_f64().unwrap();
    assert!(failures <= step["transactions"].as_f64().unwrap() * 0.01, "{}\n{step}", stderr(&output));
    assert_eq!(output.status.code(), Some(if failures == 0.0 { 0 } else { 1 }), "{}", stderr(&output));
    let retried: u64 =
        step["kinds"].as_array().unwrap().iter().filter_map(|k| k["retried_by"]["serialization"].as_u64()).sum();
    assert!(retried > 0, "serializable users on one warehouse conflict: {step}");
    let new_order = kind(step, "NewOrder");
    let committed = new_order["count"].as_f64().unwrap() - new_order["rolled_back"].as_f64().unwrap();
    let counted = ms(&step["nopm"]) * ms(&step["measured_seconds"]) / 60.0;
    // A New-Order that straddles either end of the window is the counter's but not the users' (one per user).
    assert!((committed - counted).abs() <= counted * 0.01 + 4.0, "{committed} committed, {counted} counted: {step}");
    assert!(run["results"].as_array().unwrap().iter().all(|r| r["parameters"]["isolation"] == "serializable"));
    // One try each: the conflicts are failures now, counted by kind.
    args.extend(["--max-tries", "1"]);
    let output = envbench(&store, &args);
    let run = show(&store, runs(&store)[0]["uuid"].as_str().unwrap());
    let step = &run["attachments"]["oltp"]["steps"][0];
    let failed: u64 =
        step["kinds"].as_array().unwrap().iter().filter_map(|k| k["failed_by"]["serialization"].as_u64()).sum();
    assert!(failed > 0 && step["retries"] == 0, "{}\n{step}", stdout(&output));
    assert!(stdout(&output).contains("Retries and failures by kind of error"), "{}", stdout(&output));

    // The capacity within a service level: the closed-loop peak first, then open-loop rates as shares of it until
    // one misses the level; the capacity is at most the peak (and a measurement's noise).
    let mut args = vec!["oltp", "--target", &url, "--users", "2", "--rate", "auto", "--no-vacuum"];
    args.extend(["--slo", "new-order:p95<=20ms", "--ramp", "1s", "--duration", "3s"]);
    let output = envbench(&store, &args);
    let text = stdout(&output);
    assert!(output.status.success(), "{text}\n{}", stderr(&output));
    let run = show(&store, runs(&store)[0]["uuid"].as_str().unwrap());
    let document = &run["attachments"]["oltp"];
    let steps = document["steps"].as_array().unwrap();
    assert!(steps[0]["open"].is_null() && steps.len() >= 3, "a closed step, then open ones: {document}");
    assert!(steps[1..].iter().all(|s| !s["open"].is_null() && !s["slo"].as_array().unwrap().is_empty()));
    let capacity = &document["capacity"];
    let (found, peak) = (ms(&capacity["capacity"]), ms(&capacity["peak"]));
    assert!(found > 0.0 && found <= peak * 1.1, "capacity {found} NOPM against a peak of {peak}: {capacity}");
    assert!(text.contains("Capacity ") && text.contains("within the SLO (new-order:p95<=20ms)"), "{text}");
    assert!(text.contains("the rates offered found the edge of the service level"), "{text}");
    let results = run["results"].as_array().unwrap();
    let capacity_record = results.iter().find(|r| r["test_id"] == "capacity" && r["metric"] == "capacity");
    assert!(capacity_record.is_some_and(|r| r["parameters"]["rate"] == "auto"), "{results:?}");
    // A capacity run's headline is its capacity, never a closed loop's knee, and its knee chart draws the response
    // time against the rate offered.
    let report = dir.join("report.html");
    let output = envbench(&store, &["report", "-o", report.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.contains("NOPM within the SLO (new-order:p95&lt;=20ms) at 2 users"), "the headline");
    assert!(html.contains("response time against offered rate"), "the knee chart");
}

/// A free loopback port, as the system hands one out.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// What `curl` gets from the endpoint, or `None` while nothing answers there.
fn curl(port: u16) -> Option<String> {
    let output = Command::new("curl")
        .args(["-sf", "--max-time", "2"])
        .arg(format!("http://127.0.0.1:{port}/metrics"))
        .output()
        .ok()?;
    output.status.success().then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Prometheus's own Python client parses the text (`prometheus_client.parser`, strict about the format): the
/// families it found and each one's samples, as `name{labels} value` lines.
fn parse_prometheus(text: &str) -> String {
    let script = "import sys\nfrom prometheus_client.parser import text_string_to_metric_families as parse\n\
                  for family in parse(sys.stdin.read()):\n    print('FAMILY', family.name, family.type)\n    \
                  for s in family.samples:\n        print(s.name, sorted(s.labels.items()), s.value)\n";
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    use std::io::Write;
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "the parser refused the text: {}\n{text}", stderr(&output));
    stdout(&output)
}

/// `--metrics-listen` serves the run's live figures while it runs, on loopback: the step, the OS sampler's CPU and
/// disks, and the transactions' rate, response-time percentiles and open-loop counts, all of it text Prometheus's
/// own parser reads; the endpoint is gone when the run ends.
#[test]
fn live_metrics_parse_as_prometheus_text_during_a_run() {
    let dir = scratch("open-loop", "metrics");
    let store = dir.join("results.db");
    let d = dir.to_str().unwrap();
    let port = free_port();
    let listen = port.to_string();
    let args = ["oltp", "--dir", d, "--users", "2", "--rate", "100", "--ramp", "1s", "--duration", "4s"];
    let mut args = args.to_vec();
    args.extend(["--metrics-listen", &listen]);
    let child = spawn(&store, &args);
    let started = Instant::now();
    let text = loop {
        assert!(started.elapsed() < Duration::from_secs(120), "no transactions were served");
        // Once the step measures: its users' figures, and the sampler's step.
        let measuring =
            |t: &String| t.contains("envbench_oltp_response_time_seconds") && t.contains("phase=\"measuring\"");
        if let Some(text) = curl(port).filter(measuring) {
            break text;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let parsed = parse_prometheus(&text);
    for needle in [
        "FAMILY envbench_run_info gauge",
        "FAMILY envbench_step_info gauge",
        "FAMILY envbench_cpu_percent gauge",
        "FAMILY envbench_oltp_transactions counter",
        "FAMILY envbench_oltp_transactions_per_second gauge",
        "FAMILY envbench_oltp_response_time_seconds gauge",
        "FAMILY envbench_oltp_offered_transactions_per_second gauge",
        "FAMILY envbench_oltp_late counter",
        "('quantile', '0.99'), ('step', 'U=2 R=100/s'), ('transaction', 'New-Order')",
        "envbench_step_info [('step', 'U=2 R=100/s')] 1\n",
        "envbench_oltp_offered_transactions_per_second [('phase', ",
        "('workload', 'oltp')",
    ] {
        assert!(parsed.contains(needle), "{needle} missing from\n{parsed}\n{text}");
    }
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stderr(&output).contains(&format!("live metrics at http://127.0.0.1:{port}/metrics")));
    assert!(curl(port).is_none(), "the endpoint ends with the run");

    // A port in use is refused before anything is stored.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let busy = taken.local_addr().unwrap().port().to_string();
    let output = envbench(&store, &["oltp", "--dir", d, "--metrics-listen", &busy]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("cannot listen there"), "{}", stderr(&output));
    assert_eq!(runs(&store).len(), 1, "nothing refused was stored");
}

/// tpcb's accounts drawn Zipfian: the run says so and keeps it with its results (which then match only skewed runs).
#[test]
fn tpcb_runs_with_zipfian_accounts() {
    let dir = scratch("open-loop", "skew");
    let store = dir.join("results.db");
    let d = dir.to_str().unwrap();
    let args = ["oltp", "--dir", d, "--profile", "tpcb", "--users", "2", "--skew", "zipf:1.5"];
    let mut args = args.to_vec();
    args.extend(["--ramp", "0s", "--duration", "2s", "--target-latency", "10s"]);
    let output = envbench(&store, &args);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("Skew: accounts drawn Zipfian with exponent 1.5"), "{}", stdout(&output));
    let run = show(&store, runs(&store)[0]["uuid"].as_str().unwrap());
    assert!(run["results"].as_array().unwrap().iter().all(|r| r["parameters"]["skew"] == "zipf:1.5"));
    assert!(stdout(&output).contains("PASS") && !stdout(&output).contains("  FAIL "), "{}", stdout(&output));
}

/// The options of an open loop, isolation, tries and skew are refused, before anything runs, with what to do.
#[test]
fn open_loop_options_are_refused_with_what_to_do() {
    let dir = scratch("open-loop", "refused");
    let store = dir.join("results.db");
    let d = dir.to_str().unwrap();
    for (args, says) in [
        (vec!["--latency-limit", "1s"], "--latency-limit shapes an open loop: add --rate"),
        (vec!["--slo", "new-order:p95<=10ms"], "--slo shapes an open loop: add --rate"),
        (vec!["--rate", "fast"], "--rate 'fast': give transactions per second"),
        (vec!["--rate", "10", "--keying-thinking"], "choose one way for transactions to arrive"),
        (vec!["--rate", "10", "--transactions", "5"], "leave one out"),
        (vec!["--rate", "auto", "--users", "1,2"], "give --users one count"),
        (vec!["--rate", "auto", "--profile", "tpcb"], "tpcb has no standard one: add e.g. --slo tpc-b:p95<=20ms"),
        (vec!["--rate", "10", "--slo", "new-ordr:p95<=5ms"], "did you mean new-order?"),
        (
            vec!["--rate", "10", "--mix", "new-order=50,payment=50", "--slo", "delivery:p90<=1s"],
            "does not run Delivery",
        ),
        (vec!["--rate", "10", "--arrivals", "bursty"], "give poisson"),
        (vec!["--isolation", "serializable"], "SQLite runs every transaction serializable"),
        (vec!["--isolation", "snapshot"], "give read-committed, repeatable-read or serializable"),
        (vec!["--max-tries", "0"], "from 1 (never retried)"),
        (vec!["--skew", "zipf:0.9"], "use it with --profile tpcb"),
        (vec!["--profile", "tpcb", "--skew", "zipf:1"], "THETA above 0 and below 1, or from 1.001"),
        (vec!["--metrics-listen", "localhost"], "give a port (served on 127.0.0.1)"),
    ] {
        let mut line = vec!["oltp", "--dir", d];
        line.extend(&args);
        let output = envbench(&store, &line);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {}", stderr(&output));
        assert!(stderr(&output).contains(says), "{args:?}: {}", stderr(&output));
    }
    assert!(!store.exists() || runs(&store).is_empty(), "nothing refused was stored");
}
