//! MySQL/MariaDB at SF 0.01 returns the same rows as DataFusion on the same data for all 22 queries, loads the
//! specification's row counts, reuses a matching load, runs the refresh functions, honours timeouts and interrupts,
//! refuses TPC-H tables it did not load, never reaches decoy tables of the same names in the URL's database when
//! --schema names another, and explains bad URLs, wrong passwords and missing databases. Needs the
//! local server (mysql://root@127.0.0.1:3306, no password); the tests fail when it is absent. Each test works in a
//! database of its own, created here and dropped afterwards, so they run in parallel with each other and with tests
//! that use the database `test`.

use crate::common;

use common::decoy_rows;
use envbench_core::sampler::{NoSteps, StepObserver};
use envbench_sql::{Connection, DatabaseUrl};
use envbench_tpch::data::{GenerationOptions, TableName, ensure_data};
use envbench_tpch::params::{QueryParameters, SeededRandom};
use envbench_tpch::queries::render;
use envbench_tpch::reference::compare_rows;
use envbench_tpch::results::ExecutionStatus;
use envbench_tpch::targets::mysql_dialect::plan_aids;
use envbench_tpch::targets::{DataFusionTarget, OpenOptions, ServerOptions, ServerTarget, TargetSpec, open};
use envbench_tpch::{QueryFailure, RunOptions, Target, TargetKind, TpchError, run};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const SERVER: &str = "mysql://root@127.0.0.1:3306";
const SF: f64 = 0.01;

/// A connection as root to the test server, in `database`.
fn root(database: &str) -> Box<dyn Connection> {
    DatabaseUrl::parse(&format!("{SERVER}/{database}"))
        .unwrap()
        .connect("envbench-tpch-test")
        .unwrap_or_else(|e| panic!("the local MariaDB/MySQL server must be running at {SERVER}: {e}"))
}

/// A database of the test's own, created empty and dropped however the test ends.
struct Database(String);

impl Database {
    fn create(purpose: &str) -> Database {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
        let name = format!("envbench_tpch_{purpose}_{}_{}", std::process::id(), nanos % 1_000_000_000);
        let mut connection = root("test");
        connection.batch(&format!("DROP DATABASE IF EXISTS {name}")).unwrap();
        connection.batch(&format!("CREATE DATABASE IF NOT EXISTS {name}")).unwrap();
        Database(name)
    }

    fn url(&self) -> String {
        format!("{SERVER}/{}", self.0)
    }

    fn connection(&self) -> Box<dyn Connection> {
        root(&self.0)
    }

    fn tables(&self) -> Vec<String> {
        let rows = self
            .connection()
            .query(
                &format!(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = '{}' ORDER BY table_name",
                    self.0
                ),
                &[],
            )
            .unwrap();
        rows.iter().map(|row| row.text(0).unwrap()).collect()
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        if let Ok(mut connection) = DatabaseUrl::parse(&format!("{SERVER}/test")).unwrap().connect("envbench-tpch-test")
        {
            let _ = connection.batch(&format!("DROP DATABASE IF EXISTS {}", self.0));
        }
    }
}

/// The steps a load reports, with when each started and finished.
#[derive(Default)]
struct RecordedSteps(std::sync::Mutex<Vec<(String, Instant, Option<Instant>)>>);

impl StepObserver for RecordedSteps {
    fn step_started(&self, step: &str) {
        self.0.lock().unwrap().push((step.to_string(), Instant::now(), None));
    }

    fn step_finished(&self, step: &str) {
        let mut steps = self.0.lock().unwrap();
        let started = steps.iter_mut().rev().find(|(name, _, end)| name == step && end.is_none());
        started.expect("a step finishes after it started").2 = Some(Instant::now());
    }
}

impl RecordedSteps {
    /// `load 1.2 s, index 0.3 s, ...`
    fn describe(&self) -> String {
        let steps = self.0.lock().unwrap();
        let described = steps.iter().map(|(name, start, end)| {
            format!("{name} {:.2} s", end.map(|end| (end - *start).as_secs_f64()).unwrap_or(f64::NAN))
        });
        described.collect::<Vec<_>>().join(", ")
    }

    fn names(&self) -> Vec<String> {
        self.0.lock().unwrap().iter().map(|(name, ..)| name.clone()).collect()
    }
}

fn target(url: &str) -> ServerTarget {
    ServerTarget::connect(&ServerOptions { url: DatabaseUrl::parse(url).unwrap(), schema: None, load_threads: None })
        .unwrap_or_else(|e| panic!("the local MariaDB/MySQL server must be running: {e}"))
}

/// A digest of every table's rows in a database.
fn digest(connection: &mut dyn Connection, database: &str) -> String {
    TableName::ALL
        .iter()
        .map(|table| {
            let sql = format!("CHECKSUM TABLE `{database}`.{table} EXTENDED");
            connection.query(&sql, &[]).unwrap()[0].text(1).unwrap()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn mysql_answers_match_datafusion_on_the_same_data() {
    let interrupt = AtomicBool::new(false);
    let database = Database::create("answers");
    // Tables of other workloads in the same database are none of tpch's business.
    database.connection().batch("CREATE TABLE pgbench_accounts (aid integer PRIMARY KEY, abalance integer)").unwrap();
    database.connection().batch("INSERT INTO pgbench_accounts VALUES (1, 42)").unwrap();
    // The URL names a database of decoys; --schema names the run's.
    let decoys = Database::create("decoys");

    let mut mysql = ServerTarget::connect(&ServerOptions {
        url: DatabaseUrl::parse(&decoys.url()).unwrap(),
        schema: Some(database.0.clone()),
        load_threads: None,
    })
    .unwrap_or_else(|e| panic!("the local MariaDB/MySQL server must be running: {e}"));
    assert_eq!(mysql.kind(), TargetKind::Server(envbench_sql::Dialect::MySql));
    assert_eq!(mysql.database(), database.0);
    assert!(mysql.check(SF).is_ok());
    // The server runs on this machine: its data directory is what the sampler watches, when this user can see it.
    let datadir = database.connection().query("SELECT @@datadir", &[]).unwrap()[0].text(0).unwrap();
    let visible = std::path::Path::new(&datadir).is_dir();
    assert_eq!(mysql.data_directory(), visible.then_some(std::path::Path::new(&datadir)));
    assert!(mysql.cold_cache_note().unwrap().contains("InnoDB buffer pool"));
    let progress_calls = std::sync::atomic::AtomicUsize::new(0);
    let started = Instant::now();
    let steps = RecordedSteps::default();
    let load = mysql
        .prepare(SF, false, &interrupt, &steps, &|p| {
            assert!(p.rows_loaded > 0 && p.action.starts_with("loading into "), "{p:?}");
            progress_calls.fetch_add(1, Ordering::Relaxed);
        })
        .unwrap();
    let load_seconds = started.elapsed().as_secs_f64();
    assert_eq!(steps.names(), ["load", "index", "analyze"]);
    assert!(!load.reused);
    assert!(progress_calls.load(Ordering::Relaxed) > 10);
    assert!(load.summary.starts_with("loaded SF 0.01 in "), "{}", load.summary);
    for table in TableName::ALL {
        let rows = load.rows[table.as_str()];
        match table.expected_rows(SF) {
            Some(expected) => assert_eq!(rows, expected, "{table}"),
            None => assert!((55_000..65_000).contains(&rows), "lineitem: {rows}"),
        }
    }
    let mut expected_tables: Vec<String> = TableName::ALL.iter().map(|t| t.as_str().to_string()).collect();
    expected_tables.extend(["envbench_tpch_load".to_string(), "pgbench_accounts".to_string()]);
    expected_tables.sort();
    assert_eq!(database.tables(), expected_tables);
    let engines = database
        .connection()
        .query(
            &format!(
                "SELECT DISTINCT engine FROM information_schema.tables WHERE table_schema = '{}' AND table_name <> \
                 'pgbench_accounts'",
                database.0
            ),
            &[],
        )
        .unwrap();
    assert_eq!(engines.iter().map(|r| r.text(0).unwrap()).collect::<Vec<_>>(), ["InnoDB"]);
    let again = mysql.prepare(SF, false, &interrupt, &NoSteps, &|_| {}).unwrap();
    assert!(again.reused, "{}", again.summary);
    assert!(again.summary.starts_with("reusing the tables of SF 0.01 in "), "{}", again.summary);
    assert_eq!(again.rows, load.rows);
    let pgbench = database.connection().query("SELECT abalance FROM pgbench_accounts", &[]).unwrap();
    assert_eq!(pgbench[0].int(0).unwrap(), 42);
    for table in TableName::ALL {
        // With the run's table's keys and indexes, so the queries plan alike on the decoys.
        let mut decoy = decoys.connection();
        decoy.batch(&format!("CREATE TABLE {table} LIKE `{}`.{table}", database.0)).unwrap();
        let rows = decoy_rows(table);
        decoy.batch(&format!("INSERT INTO {table} SELECT * FROM `{}`.{table} WHERE {rows}", database.0)).unwrap();
        decoy.batch(&format!("ANALYZE TABLE {table}")).unwrap();
    }
    let decoys_before = digest(decoys.connection().as_mut(), &decoys.0);

    let data_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("envbench-tpch-mysql-sf0.01");
    let generation = GenerationOptions { data_dir, scale_factor: SF, fresh: false, threads: None };
    let data = ensure_data(&generation, &interrupt, &|_| {}).unwrap();
    for (table, files) in &data.manifest.tables {
        assert_eq!(load.rows[table.as_str()], files.rows, "{table}: loaded and generated rows differ");
    }
    let mut datafusion = DataFusionTarget::new(data, None).unwrap();
    datafusion.prepare(SF, false, &interrupt, &NoSteps, &|_| {}).unwrap();

    let mut my_session = mysql.session().unwrap();
    let mut df_session = datafusion.session().unwrap();
    let mut decoy_connection = decoys.connection();
    let mut random = SeededRandom::for_stream(42, 1, 0);
    let mut mismatches = Vec::new();
    let mut timings = Vec::new();
    // At SF 0.01 a few random parameters select nothing (no order above Q18's quantity, say); most must select rows,
    // or the comparison proves little.
    let mut empty = Vec::new();
    let mut decoys_answered = 0;
    for query in 1..=22u8 {
        for parameters in [QueryParameters::validation(query, SF), QueryParameters::random(query, SF, &mut random)] {
            let expected = df_session
                .query(&datafusion.query_sql(&parameters), None, &interrupt)
                .unwrap_or_else(|e| panic!("DataFusion Q{query}: {e}"));
            let sql = mysql.query_sql(&parameters);
            let started = Instant::now();
            let actual = my_session.query(&sql, None, &interrupt).unwrap_or_else(|e| panic!("MySQL Q{query}: {e}"));
            timings.push(format!("Q{query} {:.3}", started.elapsed().as_secs_f64()));
            if expected.rows.is_empty() {
                empty.push(format!("Q{query} {parameters:?}"));
            }
            if let Err(mismatch) = compare_rows(&expected.rows, &actual.rows) {
                mismatches.push(format!("Q{query} {parameters:?}: {mismatch}"));
            }
            // Every answer names its columns, as DataFusion's does (where it has a batch to name them by).
            assert!(!actual.columns.is_empty() && actual.columns.iter().all(|c| !c.is_empty()), "Q{query}");
            if !expected.rows.is_empty() {
                assert_eq!(actual.columns.len(), expected.columns.len(), "Q{query}: {:?}", actual.columns);
            }
            // The query text names the run's tables itself: on a connection to the decoys' database it still answers
            // from the run's tables, where the bare text answers from the decoys.
            let text_rows = |connection: &mut Box<dyn Connection>, sql: &str| -> Vec<Vec<String>> {
                let rows = connection.query(sql, &[]).unwrap_or_else(|e| panic!("{sql}: {e}"));
                rows.iter().map(|row| (0..row.0.len()).map(|i| row.text(i).unwrap()).collect()).collect()
            };
            if let Err(mismatch) = compare_rows(&expected.rows, &text_rows(&mut decoy_connection, &sql)) {
                mismatches.push(format!("Q{query} {parameters:?} beside the decoys: {mismatch}"));
            }
            let bare = plan_aids(&envbench_sql::Dialect::MySql.adapt(&render(&parameters)), "lineitem");
            if compare_rows(&expected.rows, &text_rows(&mut decoy_connection, &bare)).is_err() {
                decoys_answered += 1;
            }
        }
    }
    assert!(decoys_answered >= 30, "the decoys change most answers of the bare text: {decoys_answered} of 44");
    eprintln!(
        "load {load_seconds:.1} s ({}); queries (validation, then random) in s: {}",
        steps.describe(),
        timings.join(", ")
    );
    assert!(mismatches.is_empty(), "MySQL and DataFusion differ:\n{}", mismatches.join("\n"));
    assert!(empty.len() <= 4, "too many empty answers: {empty:?}");

    // Timeouts are reported as such, and the session stays usable.
    let slow = "select count(*) from lineitem a, lineitem b where a.l_orderkey < b.l_orderkey";
    let started = Instant::now();
    assert_eq!(my_session.query(slow, Some(Duration::from_millis(20)), &interrupt), Err(QueryFailure::TimedOut));
    // The cross join runs for minutes: a few seconds tell a timeout from an answer however busy the server.
    assert!(started.elapsed() < Duration::from_secs(30), "the timeout took {:?}", started.elapsed());
    assert_eq!(my_session.query("select 1", None, &interrupt).unwrap().rows, [["1"]]);
    assert_eq!(my_session.query("select 1", Some(Duration::from_secs(60)), &interrupt).unwrap().rows, [["1"]]);
    // An interrupt cancels the running query at once.
    let cancel = AtomicBool::new(false);
    let started = Instant::now();
    let cancelled = std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(Duration::from_millis(300));
            cancel.store(true, Ordering::SeqCst);
        });
        my_session.query(slow, None, &cancel)
    });
    assert_eq!(cancelled, Err(QueryFailure::Cancelled));
    assert!(started.elapsed() < Duration::from_secs(30), "the cancel took {:?}", started.elapsed());
    assert_eq!(my_session.query("select 2", None, &interrupt).unwrap().rows, [["2"]]);
    // A query the server rejects says why.
    match my_session.query("select nothing from nowhere", None, &interrupt) {
        Err(QueryFailure::Error(message)) => assert!(message.contains("nowhere"), "{message}"),
        other => panic!("{other:?}"),
    }
    drop(my_session);

    // A power test with RF1 before and RF2 after, then a throughput test of two virtual users beside a refresh
    // stream, leave the data as loaded.
    let mut run_options = RunOptions::new(SF);
    run_options.users = Some(2);
    let outcome = run(&mysql, load.clone(), &run_options, &interrupt, &NoSteps, &|_| {}).unwrap();
    let power = &outcome.streams[0];
    assert_eq!(power.refreshes.iter().map(|r| r.function.as_str()).collect::<Vec<_>>(), ["RF1", "RF2"]);
    assert!(power.refreshes.iter().all(|r| r.status == ExecutionStatus::Ok), "{:?}", power.refreshes);
    assert!(outcome.failures.is_empty(), "{:?}", outcome.failures);
    assert_eq!(outcome.metrics.power_intervals, 24);
    assert!(outcome.refresh_skipped.is_none());
    let throughput_queries: usize = outcome.streams[1..].iter().map(|s| s.queries.len()).sum();
    assert_eq!(throughput_queries, 2 * 22, "{:?}", outcome.streams.len());
    assert_eq!(mysql.count_rows().unwrap(), load.rows);

    // RF1 alone adds SF * 1500 orders with their lineitems to the run's tables, none to the decoys; RF2 takes them
    // away again.
    let update_set = envbench_tpch::refresh::UpdateSet::new(SF, 3);
    let mut session = mysql.session().unwrap();
    session.refresh_insert(&update_set).unwrap();
    let during = mysql.count_rows().unwrap();
    assert_eq!(during["orders"], load.rows["orders"] + 15);
    assert!(during["lineitem"] > load.rows["lineitem"] + 15);
    assert_eq!(digest(decoys.connection().as_mut(), &decoys.0), decoys_before, "the decoys are unchanged");
    session.refresh_delete(&update_set).unwrap();
    assert_eq!(mysql.count_rows().unwrap(), load.rows);
    drop(session);

    // --fresh reloads.
    let fresh = mysql.prepare(SF, true, &interrupt, &NoSteps, &|_| {}).unwrap();
    assert!(!fresh.reused);
    assert_eq!(fresh.rows, load.rows);
    assert_eq!(database.connection().query("SELECT abalance FROM pgbench_accounts", &[]).unwrap().len(), 1);
    assert_eq!(digest(decoys.connection().as_mut(), &decoys.0), decoys_before, "the decoys are unchanged");
}

#[test]
fn an_interrupted_load_is_not_reused() {
    let database = Database::create("interrupt");
    let mut mysql = ServerTarget::connect(&ServerOptions {
        url: DatabaseUrl::parse(&database.url()).unwrap(),
        schema: None,
        load_threads: Some(1),
    })
    .unwrap();
    let interrupt = AtomicBool::new(false);
    // Ctrl-C arrives once some rows are in.
    let error = mysql
        .prepare(SF, false, &interrupt, &NoSteps, &|p| {
            if p.rows_loaded > 5_000 {
                interrupt.store(true, Ordering::SeqCst);
            }
        })
        .unwrap_err();
    assert!(matches!(error, TpchError::Interrupted), "{error}");
    let complete = "SELECT count(*) FROM envbench_tpch_load WHERE scale_factor IS NOT NULL";
    let marker_rows = database.connection().query(complete, &[]).unwrap();
    assert_eq!(marker_rows[0].int(0).unwrap(), 0, "an incomplete load is never marked complete");
    // The next run loads again, into the tables it made itself.
    let load = mysql.prepare(SF, false, &AtomicBool::new(false), &NoSteps, &|_| {}).unwrap();
    assert!(!load.reused);
    assert_eq!(load.rows["orders"], 15_000);
}

#[test]
fn tpch_tables_envbench_did_not_load_are_refused_and_left_alone() {
    let database = Database::create("foreign");
    let mut connection = database.connection();
    connection.batch("CREATE TABLE customer (c_custkey integer PRIMARY KEY, c_note varchar(20))").unwrap();
    connection.batch("INSERT INTO customer VALUES (7, 'keep me')").unwrap();
    connection.batch("CREATE TABLE nation (n_nationkey integer)").unwrap();
    let mut mysql = target(&database.url());
    let error = mysql.check(SF).unwrap_err().to_string();
    assert!(error.contains("customer, nation") && error.contains("did not load"), "{error}");
    assert!(error.contains(&database.0) && error.contains("--schema"), "{error}");
    let interrupt = AtomicBool::new(false);
    for fresh in [false, true] {
        let error = mysql.prepare(SF, fresh, &interrupt, &NoSteps, &|_| {}).unwrap_err();
        assert!(matches!(error, TpchError::Server { server: "MySQL/MariaDB", .. }), "{error}");
        assert!(error.to_string().contains("customer, nation"), "{error}");
    }
    assert_eq!(database.tables(), ["customer", "nation"], "nothing was created");
    let rows = connection.query("SELECT c_custkey, c_note FROM customer", &[]).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!((rows[0].int(0).unwrap(), rows[0].text(1).unwrap()), (7, "keep me".to_string()));
    let columns = connection
        .query(
            &format!(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = '{}' AND table_name = \
                 'customer' ORDER BY ordinal_position",
                database.0
            ),
            &[],
        )
        .unwrap();
    assert_eq!(columns.iter().map(|r| r.text(0).unwrap()).collect::<Vec<_>>(), ["c_custkey", "c_note"]);

    // A marker table of someone else's (no signed row of envbench's) does not make the tables envbench's.
    connection.batch("CREATE TABLE envbench_tpch_load (x integer)").unwrap();
    let error = mysql.check(SF).unwrap_err().to_string();
    assert!(error.contains("customer, nation, envbench_tpch_load (no signature of envbench's)"), "{error}");

    // Nor is a table of that name alone envbench's to drop.
    let database = Database::create("foreign_marker");
    database.connection().batch("CREATE TABLE envbench_tpch_load (x integer)").unwrap();
    database.connection().batch("INSERT INTO envbench_tpch_load VALUES (1)").unwrap();
    let mut mysql = target(&database.url());
    let error = mysql.prepare(SF, true, &interrupt, &NoSteps, &|_| {}).unwrap_err().to_string();
    assert!(
        error.contains("(envbench_tpch_load (no signature of envbench's); no signed envbench_tpch_load marker"),
        "{error}"
    );
    assert_eq!(database.tables(), ["envbench_tpch_load"]);
    let rows = database.connection().query("SELECT x FROM envbench_tpch_load", &[]).unwrap();
    assert_eq!(rows.len(), 1);

    // A schema-only copy of a database envbench loaded (issue #67, F1): the marker's own DDL, comment and token
    // included, but not its signed row, beside a user's tables of TPC-H's names. Refused, and nothing replaced.
    let loaded = Database::create("loaded_marker");
    target(&loaded.url()).prepare(SF, false, &interrupt, &NoSteps, &|_| {}).unwrap();
    let ddl = loaded.connection().query("SHOW CREATE TABLE envbench_tpch_load", &[]).unwrap()[0].text(1).unwrap();
    assert!(ddl.contains("created by envbench tpch; token "), "{ddl}");
    let copy = Database::create("copied_marker");
    copy.connection().batch(&ddl).unwrap();
    copy.connection().batch("CREATE TABLE region (r_regionkey integer, r_note varchar(20))").unwrap();
    copy.connection().batch("INSERT INTO region VALUES (1, 'mine')").unwrap();
    let error = target(&copy.url()).prepare(SF, true, &interrupt, &NoSteps, &|_| {}).unwrap_err().to_string();
    assert!(error.contains("region, envbench_tpch_load (no signature of envbench's)"), "{error}");
    assert_eq!(copy.tables(), ["envbench_tpch_load", "region"]);
    let rows = copy.connection().query("SELECT r_note FROM region", &[]).unwrap();
    assert_eq!(rows[0].text(0).unwrap(), "mine");
}

#[test]
fn bad_urls_wrong_passwords_and_missing_databases_are_explained() {
    // A URL its driver cannot read is refused as --target is parsed; the rest when the server is asked.
    let open_error = |url: &str| -> String {
        let spec = match TargetSpec::parse(url) {
            Ok(spec) => spec,
            Err(error) => return error.to_string(),
        };
        let options = OpenOptions { data_dir: PathBuf::from("/nonexistent"), schema: None, threads: None };
        match open(&spec, &options) {
            Ok(_) => panic!("{url} was accepted"),
            Err(error) => error.to_string(),
        }
    };
    let error = open_error("mysql://root@127.0.0.1:notaport/test");
    assert!(error.contains("mysql://user@host:3306/database"), "{error}");
    let error = open_error("mysql://root@127.0.0.1:3306/test?no_such_option=1");
    assert!(error.contains("mysql://user@host:3306/database"), "{error}");

    let error = open_error("mysql://root:not-the-password@127.0.0.1:3306/test");
    assert!(error.contains("check the user and password"), "{error}");
    assert!(!error.contains("not-the-password"), "the password is not shown: {error}");
    let error = open_error("mysql://envbench_no_such_user@127.0.0.1:3306/test");
    assert!(error.contains("check the user and password"), "{error}");

    let error = open_error("mysql://root@127.0.0.1:3306/envbench_no_such_database");
    assert!(error.contains("envbench_no_such_database") && error.contains("create the database"), "{error}");
    let error = open_error("mariadb://root@127.0.0.1:1/test");
    assert!(error.contains("is the server running"), "{error}");
    let error = open_error(SERVER);
    assert!(error.contains("names no database"), "{error}");

    // --schema names the database, created when missing.
    let database = Database::create("schema");
    database.connection().batch(&format!("DROP DATABASE {}", database.0)).unwrap();
    let options = ServerOptions {
        url: DatabaseUrl::parse(SERVER).unwrap(),
        schema: Some(database.0.clone()),
        load_threads: Some(1),
    };
    let mysql = ServerTarget::connect(&options).unwrap();
    assert_eq!(mysql.database(), database.0);
    assert!(database.tables().is_empty());
    let spec = TargetSpec::parse(&format!("mariadb://root@127.0.0.1/{}", database.0)).unwrap();
    let options = OpenOptions { data_dir: PathBuf::from("/nonexistent"), schema: None, threads: None };
    assert_eq!(open(&spec, &options).unwrap().kind(), TargetKind::Server(envbench_sql::Dialect::MySql));
}
