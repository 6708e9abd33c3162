//! `envbench tpch` end to end: the real binary generating real Parquet files, DataFusion and the local PostgreSQL
//! running the queries, and a real SQLite store.

use crate::common;
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
        // A run on a busy machine is flagged disturbed; no other flag.
        assert!(q1["flags"].as_array().unwrap().iter().all(|f| f == "disturbed"), "validated answers: {q1}");
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
    let schema = format!("envbench_tpch_timeouts_{}", std::process::id());
    let _guard = SchemaGuard(schema.clone());
    let args = ["tpch", "--sf", "0.01", "--dir", d, "--target", POSTGRES, "--schema", &schema, "--power-only"];
    let output = envbench(&store, &args);
    assert!(output.status.success(), "the load: {}", stderr(&output));
    // Another session holds the part table, so the eight queries that read it wait until their timeout (a second,
    // the shortest --query-timeout) while the others answer.
    let mut holder = envbench_sql::DatabaseUrl::parse(POSTGRES).unwrap().connect("envbench-test").unwrap();
    holder.begin().unwrap();
    holder.batch(&format!("LOCK TABLE \"{schema}\".part IN ACCESS EXCLUSIVE MODE")).unwrap();
    let mut timed = args.to_vec();
    timed.extend(["--query-timeout", "1s", "--validate"]);
    let output = envbench(&store, &timed);
    holder.rollback().unwrap();
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
    // The eight that read part waited out their timeout; on a busy server another may have too, and nothing
    // failed any other way.
    let failed: Vec<&str> = failures.iter().map(|f| f["what"].as_str().unwrap()).collect();
    for query in ["Q2", "Q8", "Q9", "Q14", "Q16", "Q17", "Q19", "Q20"] {
        assert!(failed.contains(&query), "{query} reads part: {failures:?}");
    }
    assert!(failures.iter().all(|f| f.to_string().contains("timed_out")), "{failures:?}");
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
    let mut flags = result(&run, "qphh")["flags"].as_array().unwrap().clone();
    // A run on a busy machine is also flagged disturbed.
    flags.retain(|f| f != "disturbed");
    assert_eq!(flags, vec![Value::from("tpch-derived")]);
}

#[test]
fn bad_input_is_refused_before_anything_is_stored() {
    let dir = scratch("bad-input");
    let store = dir.join("results.db");
    let d = dir.to_str().unwrap();
    let many_threads = (1..=65).map(|n| n.to_string()).collect::<Vec<_>>().join(",");
    let long_schema = "s".repeat(64);
    let cases: &[(&[&str], &str)] = &[
        (&["--sf", "0"], "--sf 0: scale factor 0 is not usable"),
        (&["--sf=-1"], "not usable"),
        (&["--target", "oracle://scott@127.0.0.1/test"], "give datafusion"),
        (&["--users", "0"], "--users must be at least 1"),
        (&["--sets", "0"], "--sets must be at least 1"),
        (&["--query-timeout", "0s"], "--query-timeout 0s: give from 1s to 24h"),
        (&["--query-timeout", "1ns"], "--query-timeout 1ns: give from 1s to 24h"),
        (&["--query-timeout", "25h"], "--query-timeout 25h: give from 1s to 24h"),
        (&["--query-timeout", "soon"], "--query-timeout"),
        (&["--threads", &many_threads], "--threads: 65 settings are more than 64"),
        (&["--threads", "2,2"], "--threads: 2 is given twice"),
        (&["--schema", ""], "--schema is empty"),
        (&["--schema", "a\u{202e}b", "--target", POSTGRES], "U+202E"),
        (&["--schema", "a\tb", "--target", MYSQL], "--schema holds a control character"),
        (&["--schema", &long_schema, "--target", POSTGRES], "--schema: the schema name is 64 bytes long"),
        // The Parquet files of SF 100000 need about 50 TB: refused before any directory is made.
        (&["--sf", "100000"], "free some space"),
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
    let deadline = Instant::now() + Duration::from_secs(300);
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
            .args([POSTGRES, "-qc", &format!("DROP SCHEMA IF EXISTS \"{}\" CASCADE", self.0.replace('"', "\"\""))])
            .output();
    }
}

/// Run SQL with psql in a database of the local PostgreSQL server; its output, trimmed.
fn psql_in(database: &str, sql: &str) -> String {
    let output = Command::new("psql")
        .args(["-h", "127.0.0.1", "-U", "postgres", "-d", database, "-Atqc", sql])
        .output()
        .expect("psql runs");
    assert!(output.status.success(), "{sql}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// A PostgreSQL database of the test's own, so that it may hold a schema named after the login user (which would
/// change `current_schema()` for every other test in the shared database `test`); dropped however the test ends.
struct PostgresDatabase(String);

impl PostgresDatabase {
    fn create(purpose: &str) -> PostgresDatabase {
        let name = format!("envbench_tpch_{purpose}_{}", std::process::id());
        psql_in("test", &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
        psql_in("test", &format!("CREATE DATABASE {name}"));
        PostgresDatabase(name)
    }

    fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:5432/{}", self.0)
    }

    fn psql(&self, sql: &str) -> String {
        psql_in(&self.0, sql)
    }
}

impl Drop for PostgresDatabase {
    fn drop(&mut self) {
        let _ = Command::new("psql")
            .args(["-h", "127.0.0.1", "-U", "postgres", "-d", "test", "-qc"])
            .arg(format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.0))
            .output();
    }
}

const MYSQL: &str = "mysql://root@127.0.0.1:3306/test";

/// A connection as root to the local MariaDB server.
fn mysql_root() -> Box<dyn envbench_sql::Connection> {
    envbench_sql::DatabaseUrl::parse(MYSQL).unwrap().connect("envbench-test").unwrap()
}

/// Drops the test's MySQL database however the test ends.
struct MySqlDatabaseGuard(String);

impl MySqlDatabaseGuard {
    /// A new, empty database.
    fn create(name: String) -> MySqlDatabaseGuard {
        let guard = MySqlDatabaseGuard(name);
        mysql_root().batch(&format!("DROP DATABASE IF EXISTS {}", guard.quoted())).unwrap();
        mysql_root().batch(&format!("CREATE DATABASE {}", guard.quoted())).unwrap();
        guard
    }

    fn quoted(&self) -> String {
        format!("`{}`", self.0.replace('`', "``"))
    }

    /// The database's tables, by name.
    fn tables(&self) -> Vec<String> {
        let rows = mysql_root()
            .query(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = ? ORDER BY table_name",
                &[self.0.clone().into()],
            )
            .unwrap();
        rows.iter().map(|row| row.text(0).unwrap()).collect()
    }
}

impl Drop for MySqlDatabaseGuard {
    fn drop(&mut self) {
        if let Ok(mut connection) = envbench_sql::DatabaseUrl::parse(MYSQL).unwrap().connect("envbench-test") {
            let _ = connection.batch(&format!("DROP DATABASE IF EXISTS {}", self.quoted()));
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

/// The TPC-H tables of a PostgreSQL schema, by name.
fn tables_in_schema(database: &PostgresDatabase, schema: &str) -> String {
    database.psql(&format!(
        "SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_tables WHERE schemaname = '{}'",
        schema.replace('\'', "''")
    ))
}

/// A user whose login has a schema of its own (the search path's `"$user"`, PostgreSQL's secure pattern) keeps its
/// own `orders` and `customer` in `public`. tpch loads into the user's schema, the connection's current schema, and
/// never reaches `public`: once through the search path, an unqualified `DROP TABLE orders` dropped the user's table.
#[test]
fn postgresql_tables_of_tpch_names_outside_the_runs_schema_are_never_touched() {
    let dir = scratch("user-schema");
    let store = dir.join("results.db");
    let database = PostgresDatabase::create("user_schema");
    database.psql(
        "CREATE TABLE public.orders (o_id integer, o_note text); \
         INSERT INTO public.orders VALUES (1, 'mine'), (2, 'also mine'); \
         CREATE TABLE public.customer (c_id integer, c_name text); \
         INSERT INTO public.customer VALUES (7, 'keep me'); \
         CREATE SCHEMA postgres",
    );
    let digest = || {
        database.psql(
            "SELECT encode(sha256(convert_to(string_agg(o_id || '|' || o_note, E'\\n' ORDER BY o_id), 'UTF8')), 'hex') \
             FROM public.orders; \
             SELECT encode(sha256(convert_to(string_agg(c_id || '|' || c_name, E'\\n' ORDER BY c_id), 'UTF8')), 'hex') \
             FROM public.customer",
        )
    };
    let before = digest();
    assert_eq!(before.lines().count(), 2, "{before}");
    let args = ["tpch", "--sf", "0.01", "--power-only", "--dir", dir.to_str().unwrap(), "--target", &database.url()];
    let output = envbench(&store, &args);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(digest(), before, "the user's own tables in public are as they were");
    assert!(stderr(&output).contains("loaded SF 0.01 in PostgreSQL"), "{}", stderr(&output));
    assert!(stderr(&output).contains("(schema \"postgres\")"), "{}", stderr(&output));
    assert_eq!(tables_in_schema(&database, "public"), "customer,orders");
    assert_eq!(
        tables_in_schema(&database, "postgres"),
        "customer,envbench_tpch_load,lineitem,nation,orders,part,partsupp,region,supplier"
    );
}

/// On MariaDB the run's namespace is the URL's database: tables of TPC-H names in another database (one named like
/// the login user) are never reached, and such tables in the run's own database are refused by name.
#[test]
fn mariadb_tables_of_tpch_names_elsewhere_are_never_touched_and_in_the_target_refused_by_name() {
    let dir = scratch("mariadb-namespace");
    let store = dir.join("results.db");
    let pid = std::process::id();
    let theirs = MySqlDatabaseGuard::create(format!("root_{pid}_tpch"));
    let ours = MySqlDatabaseGuard::create(format!("envbench_tpch_namespace_{pid}"));
    let mut connection = mysql_root();
    for statement in [
        format!("CREATE TABLE {}.orders (o_id integer, o_note varchar(20))", theirs.quoted()),
        format!("INSERT INTO {}.orders VALUES (1, 'mine'), (2, 'also mine')", theirs.quoted()),
        format!("CREATE TABLE {}.customer (c_id integer, c_name varchar(20))", theirs.quoted()),
        format!("INSERT INTO {}.customer VALUES (7, 'keep me')", theirs.quoted()),
    ] {
        connection.batch(&statement).unwrap();
    }
    let digest = |connection: &mut Box<dyn envbench_sql::Connection>| {
        let sql = format!(
            "SELECT (SELECT SHA2(GROUP_CONCAT(CONCAT_WS('|', o_id, o_note) ORDER BY o_id SEPARATOR '\\n'), 256) \
             FROM {0}.orders), \
             (SELECT SHA2(GROUP_CONCAT(CONCAT_WS('|', c_id, c_name) ORDER BY c_id SEPARATOR '\\n'), 256) \
             FROM {0}.customer)",
            theirs.quoted()
        );
        let row = connection.query_optional(&sql, &[]).unwrap().unwrap();
        format!("{} {}", row.text(0).unwrap(), row.text(1).unwrap())
    };
    let before = digest(&mut connection);
    let d = dir.to_str().unwrap();
    let target = format!("mysql://root@127.0.0.1:3306/{}", ours.0);
    let output = envbench(&store, &["tpch", "--sf", "0.01", "--power-only", "--dir", d, "--target", &target]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(digest(&mut connection), before, "the other database's tables are as they were");
    assert_eq!(theirs.tables(), ["customer", "orders"]);
    assert_eq!(ours.tables().len(), 9, "{:?}", ours.tables());

    // Tables of TPC-H names in the run's own database are someone else's: refused by name, before anything changes.
    let target = format!("mysql://root@127.0.0.1:3306/{}", theirs.0);
    let refused = dir.join("refused.db");
    let output = envbench(&refused, &["tpch", "--sf", "0.01", "--power-only", "--dir", d, "--target", &target]);
    assert!(!output.status.success(), "{}", stdout(&output));
    let message = stderr(&output);
    assert!(message.contains("customer, orders") && message.contains("did not load"), "{message}");
    assert!(message.contains(&theirs.0), "{message}");
    assert_eq!(digest(&mut connection), before);
    assert_eq!(theirs.tables(), ["customer", "orders"]);
    assert!(!refused.exists(), "the refused run stored nothing");
}

/// Any schema name PostgreSQL or MariaDB keeps works end to end: quoted wherever it is used, never put unquoted on a
/// connection's options.
#[test]
fn any_legal_schema_name_works_end_to_end() {
    let dir = scratch("schema-names");
    let store = dir.join("results.db");
    let d = dir.to_str().unwrap();
    let pid = std::process::id();
    let schema = format!("my \"odd\" schema's {pid}");
    let _guard = SchemaGuard(schema.clone());
    let output = envbench(
        &store,
        &["tpch", "--sf", "0.01", "--power-only", "--dir", d, "--target", POSTGRES, "--schema", &schema],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let tables =
        common::psql(&format!("SELECT count(*) FROM pg_tables WHERE schemaname = '{}'", schema.replace('\'', "''")));
    assert_eq!(tables, "9");

    let database = MySqlDatabaseGuard(format!("my db's `odd` {pid}"));
    let output = envbench(
        &store,
        &["tpch", "--sf", "0.01", "--power-only", "--dir", d, "--target", MYSQL, "--schema", &database.0],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(database.tables().len(), 9, "{:?}", database.tables());
}

/// Wait (at most five minutes, for a busy host) until `ready` holds.
fn wait_until(what: &str, ready: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(300);
    while Instant::now() < deadline && !ready() {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(ready(), "{what} never happened");
}

/// Interrupt a child as Ctrl-C would, and wait for it.
fn interrupt(child: std::process::Child) -> std::process::Output {
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    child.wait_with_output().unwrap()
}

/// Two runs on one --dir once overwrote each other's Parquet files. A run that generates holds the data's lock
/// exclusively; a second run of the same scale factor is refused at once, naming the first, and stores nothing.
#[test]
fn a_second_run_on_the_same_data_is_refused_while_one_generates() {
    let dir = scratch("data-lock");
    let d = dir.to_str().unwrap();
    let generating = Command::new(env!("CARGO_BIN_EXE_envbench"))
        .args(["tpch", "--sf", "1", "--dir", d, "--threads", "1"])
        .env("ENVBENCH_STORE", dir.join("first.db"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lineitem = dir.join("envbench-tpch/sf1/lineitem");
    wait_until("generation", || lineitem.read_dir().map(|mut entries| entries.next().is_some()).unwrap_or(false));
    let second = dir.join("second.db");
    let output = envbench(&second, &["tpch", "--sf", "1", "--dir", d, "--power-only"]);
    // Another scale factor's data has a lock of its own.
    let other = envbench(&dir.join("other.db"), &["tpch", "--sf", "0.01", "--dir", d, "--power-only"]);
    let first_pid = generating.id();
    let first = interrupt(generating);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(message.contains("the TPC-H data of SF 1 is in use by another envbench run"), "{message}");
    assert!(message.contains(&format!("pid {first_pid}")) && message.contains("--dir"), "{message}");
    assert!(!second.exists(), "the refused run stored nothing");
    assert!(other.status.success(), "{}", stderr(&other));
    assert_eq!(first.status.code(), Some(130), "{}", stderr(&first));
}

/// A run that loads a server's tables (or runs the refresh functions, which write them) holds the lock on them
/// exclusively: a second run on the same schema is refused at once, naming the first, and stores nothing.
#[test]
fn a_second_server_run_is_refused_while_one_loads() {
    let dir = scratch("server-lock");
    let d = dir.to_str().unwrap();
    let pid = std::process::id();
    let schema = format!("envbench_tpch_lock_{pid}");
    let _schema = SchemaGuard(schema.clone());
    let _database = MySqlDatabaseGuard(schema.clone());
    let marker_query = format!(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = '{schema}' AND table_name = \
         'envbench_tpch_load'"
    );
    for (target, holder) in [(POSTGRES, "envbench-tpch (pid "), (MYSQL, "connection ")] {
        let loading = Command::new(env!("CARGO_BIN_EXE_envbench"))
            .args(["tpch", "--sf", "0.1", "--dir", d, "--target", target, "--schema", &schema, "--users", "1"])
            .args(["--sets", "1000"])
            .env("ENVBENCH_STORE", dir.join("first.db"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let url = envbench_sql::DatabaseUrl::parse(target).unwrap();
        wait_until("the load", || {
            let mut connection = url.connect("envbench-test").unwrap();
            connection.query_optional(&marker_query, &[]).unwrap().unwrap().int(0).unwrap() == 1
        });
        let second = dir.join("second.db");
        let args = ["tpch", "--sf", "0.01", "--dir", d, "--target", target, "--schema", &schema, "--power-only"];
        let output = envbench(&second, &args);
        let first_pid = loading.id();
        let first = interrupt(loading);
        assert_eq!(output.status.code(), Some(1), "{target}: {}", stderr(&output));
        let message = stderr(&output);
        assert!(message.contains("tpch in ") && message.contains(&schema), "{message}");
        assert!(message.contains("is in use by another envbench run") && message.contains(holder), "{message}");
        if target == POSTGRES {
            assert!(message.contains(&format!("envbench-tpch (pid {first_pid})")), "{message}");
        }
        assert!(!second.exists(), "the refused run stored nothing");
        assert_eq!(first.status.code(), Some(130), "{target}: {}", stderr(&first));
    }
}
