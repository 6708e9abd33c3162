//! The OLTP workload against real databases: an embedded SQLite file, the local PostgreSQL and the local MariaDB.
//! Each target's test loads one warehouse, checks the transactions' effects one by one, runs a short step of
//! virtual users, and checks the consistency conditions; a broken database must fail them, and tables envbench did
//! not make are refused and left alone.

use envbench_core::sampler::NoSteps;
use envbench_oltp::consistency;
use envbench_oltp::load::{self, DISTRICTS, FIRST_NEW_ORDER, LoadPlan, ORDERS};
use envbench_oltp::random::{NuRandConstants, Random};
use envbench_oltp::schema::{self, Existing};
use envbench_oltp::transactions::{self, Kind, Outcome, Statements, Terminal};
use envbench_oltp::users::{self, StepSettings};
use envbench_oltp::{OltpError, Profile};
use envbench_sql::{Connection, DatabaseUrl, Namespace, Value};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

const POSTGRES: &str = "postgres://postgres@127.0.0.1:5432/test";
const MARIADB: &str = "mysql://root@127.0.0.1:3306/test";

/// A directory of its own under the system's temporary directory, removed at the end.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let path = std::env::temp_dir().join(format!("envbench-oltp-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn int(connection: &mut dyn Connection, sql: &str) -> i64 {
    connection.query_optional(sql, &[]).unwrap().unwrap().int(0).unwrap()
}

fn real(connection: &mut dyn Connection, sql: &str) -> f64 {
    connection.query_optional(sql, &[]).unwrap().unwrap().real(0).unwrap()
}

/// The namespace a run against `url` resolves: the connection's own.
fn namespace(url: &DatabaseUrl) -> Namespace {
    let mut connection = url.connect("envbench-oltp test").unwrap();
    Namespace::resolve(connection.as_mut(), None, false).unwrap()
}

fn all_pass(connection: &mut dyn Connection, profile: Profile) {
    let namespace = Namespace::resolve(connection, None, false).unwrap();
    for check in consistency::run(connection, &namespace, profile).unwrap() {
        assert!(check.passed, "{}: {}", check.name, check.detail);
    }
}

/// Run `kind` until it commits (New-Order may roll back on purpose).
fn commit_one(kind: Kind, connection: &mut dyn Connection, random: &mut Random, terminal: Terminal) {
    let statements = Statements::new(&Namespace::resolve(connection, None, false).unwrap());
    for _ in 0..50 {
        match transactions::run(kind, connection, &statements, random, terminal).unwrap() {
            Outcome::Committed => return,
            Outcome::RolledBack => {}
        }
    }
    panic!("{kind:?} never committed");
}

/// Everything a target must do: load, reuse, each transaction's effects, a step of users, the checks.
fn exercise(url: &DatabaseUrl) {
    let namespace = namespace(url);
    let prepare =
        |plan| load::prepare(url, &namespace, Profile::Tpcc, 1, plan, 2, &NoSteps, &AtomicBool::new(false), &|_, _| {});
    let first = prepare(LoadPlan::Rebuild).unwrap();
    assert!(!first.reused);
    let expected = load::expected_rows(Profile::Tpcc, 1) as f64;
    assert!((first.rows as f64 - expected).abs() < expected * 0.01, "{} rows, about {expected}", first.rows);
    assert!(prepare(LoadPlan::Reuse).unwrap().reused, "a complete load of the same scale is reused");

    let mut c = url.connect("envbench-oltp test").unwrap();
    let c = c.as_mut();
    users::session_settings(c).unwrap();
    let counted: i64 = Profile::Tpcc.tables().iter().map(|t| int(c, &format!("SELECT COUNT(*) FROM {}", t.name))).sum();
    assert_eq!(counted as u64, first.rows, "every row counted as loaded is there");
    assert_eq!(int(c, "SELECT COUNT(*) FROM tpcc_item"), 100_000);
    assert_eq!(int(c, "SELECT COUNT(*) FROM tpcc_stock"), 100_000);
    assert_eq!(int(c, "SELECT COUNT(*) FROM tpcc_customer"), 30_000);
    assert_eq!(int(c, "SELECT COUNT(*) FROM tpcc_new_order"), DISTRICTS * (ORDERS - FIRST_NEW_ORDER + 1));
    assert!(int(c, "SELECT COUNT(*) FROM tpcc_customer WHERE c_last = 'BARBARBAR'") >= 10);
    all_pass(c, Profile::Tpcc);

    let mut random = Random::new(99, NuRandConstants::run(NuRandConstants::load(load::LOAD_SEED), 5));
    let terminal = Terminal { home: 1, scale: 1 };

    // New-Order: one more order, its lines as many as it says, one more undelivered order.
    let (orders, lines, new_orders) = (
        int(c, "SELECT SUM(d_next_o_id) FROM tpcc_district"),
        int(c, "SELECT COUNT(*) FROM tpcc_order_line"),
        int(c, "SELECT COUNT(*) FROM tpcc_new_order"),
    );
    commit_one(Kind::NewOrder, c, &mut random, terminal);
    assert_eq!(int(c, "SELECT SUM(d_next_o_id) FROM tpcc_district"), orders + 1);
    assert_eq!(int(c, "SELECT COUNT(*) FROM tpcc_new_order"), new_orders + 1);
    let newest_lines = int(c, "SELECT o_ol_cnt FROM tpcc_orders ORDER BY o_entry_d DESC, o_id DESC LIMIT 1");
    assert!((5..=15).contains(&newest_lines));
    assert_eq!(int(c, "SELECT COUNT(*) FROM tpcc_order_line"), lines + newest_lines);

    // New-Order's intended rollback leaves nothing behind.
    let statements = Statements::new(&namespace);
    let mut rolled_back = 0;
    for _ in 0..400 {
        if transactions::run(Kind::NewOrder, c, &statements, &mut random, terminal).unwrap() == Outcome::RolledBack {
            rolled_back += 1;
        }
    }
    assert!((1..=20).contains(&rolled_back), "about 1% of New-Orders roll back, got {rolled_back} of 400");
    all_pass(c, Profile::Tpcc);

    // Payment: the warehouse and the districts take the same amount.
    let w_ytd = real(c, "SELECT w_ytd FROM tpcc_warehouse WHERE w_id = 1");
    let history = int(c, "SELECT COUNT(*) FROM tpcc_history");
    commit_one(Kind::Payment, c, &mut random, terminal);
    let paid = real(c, "SELECT w_ytd FROM tpcc_warehouse WHERE w_id = 1") - w_ytd;
    assert!((1.0..=5000.0).contains(&paid), "{paid}");
    assert_eq!(int(c, "SELECT COUNT(*) FROM tpcc_history"), history + 1);
    all_pass(c, Profile::Tpcc);

    // Delivery: the oldest undelivered order of each district gets its carrier.
    let undelivered = int(c, "SELECT COUNT(*) FROM tpcc_new_order");
    commit_one(Kind::Delivery, c, &mut random, terminal);
    assert_eq!(int(c, "SELECT COUNT(*) FROM tpcc_new_order"), undelivered - DISTRICTS);
    assert_eq!(
        int(c, &format!("SELECT COUNT(*) FROM tpcc_orders WHERE o_id = {FIRST_NEW_ORDER} AND o_carrier_id IS NULL")),
        0
    );
    // Order-Status and Stock-Level only read.
    commit_one(Kind::OrderStatus, c, &mut random, terminal);
    commit_one(Kind::StockLevel, c, &mut random, terminal);
    all_pass(c, Profile::Tpcc);

    // A short step of virtual users: every kind of transaction ran, NOPM is counted, the database still holds.
    let settings = StepSettings {
        profile: Profile::Tpcc,
        namespace: namespace.clone(),
        users: 2,
        first_user: 0,
        scale: 1,
        ramp: Duration::from_millis(500),
        duration: Duration::from_secs(3),
        keying_thinking: false,
        load_constants: NuRandConstants::load(load::LOAD_SEED),
        seed: 1,
    };
    let step = users::run_step(url, &settings, "U=2", &NoSteps, &AtomicBool::new(false), &|_| {}).unwrap().unwrap();
    let step = step.figures;
    assert!(step.transactions > 20, "{step:?}");
    assert!(step.nopm.unwrap() > 0.0);
    assert_eq!(step.failures, 0, "{:?}", step.first_failure);
    assert_eq!(step.kinds.len(), 5);
    let new_order = step.kind(Kind::NewOrder).unwrap();
    assert!(new_order.count > 0 && new_order.p95_ms >= new_order.p50_ms && new_order.max_ms >= new_order.p99_ms);
    assert!(step.per_second.iter().sum::<f64>() >= step.transactions as f64);
    all_pass(c, Profile::Tpcc);

    // A broken database fails the checks that see it.
    c.batch("UPDATE tpcc_warehouse SET w_ytd = w_ytd + 1").unwrap();
    c.execute("DELETE FROM tpcc_order_line WHERE ol_o_id = ? AND ol_d_id = 1 AND ol_number = 1", &[Value::Int(5)])
        .unwrap();
    let checks = consistency::run(c, &namespace, Profile::Tpcc).unwrap();
    let failed: Vec<&str> = checks.iter().filter(|k| !k.passed).map(|k| &k.name[..1]).collect();
    assert_eq!(failed, ["1", "4"], "{checks:?}");
    // The next run must not reuse it: --fresh rebuilds.
    assert!(!prepare(LoadPlan::Rebuild).unwrap().reused);
    all_pass(c, Profile::Tpcc);
}

#[test]
fn sqlite_runs_the_order_entry_transactions() {
    let dir = TempDir::new("sqlite");
    exercise(&DatabaseUrl::sqlite(dir.0.join("oltp.sqlite")));
}

#[test]
fn postgres_runs_the_order_entry_transactions() {
    exercise(&DatabaseUrl::parse(POSTGRES).unwrap());
}

#[test]
fn mariadb_runs_the_order_entry_transactions() {
    exercise(&DatabaseUrl::parse(MARIADB).unwrap());
}

/// The server's counters are read with statements this server has: none fails, which would leave an error in the
/// DBA's server log (PostgreSQL before 17 has no pg_stat_checkpointer) and abort the transaction it ran in.
#[test]
fn server_counters_send_nothing_the_server_lacks() {
    let url = DatabaseUrl::parse(POSTGRES).unwrap();
    let mut c = url.connect("envbench-oltp test").unwrap();
    let version = c.server_version_number().unwrap().unwrap();
    assert!(c.server_version().unwrap().starts_with(&format!("PostgreSQL {}", version / 10_000)), "{version}");
    c.begin().unwrap();
    let counters = envbench_oltp::telemetry::snapshot(c.as_mut()).unwrap();
    for counter in ["commits", "rollbacks", "blocks read", "blocks hit", "WAL bytes", "checkpoints"] {
        assert!(counters.contains_key(counter), "{counter} missing from {counters:?}");
    }
    // After a failed statement PostgreSQL refuses every other one until the transaction ends.
    assert_eq!(int(c.as_mut(), "SELECT 1"), 1);
    c.rollback().unwrap();
    let mut mariadb = DatabaseUrl::parse(MARIADB).unwrap().connect("envbench-oltp test").unwrap();
    assert_eq!(mariadb.server_version_number().unwrap(), None);
    assert!(envbench_oltp::telemetry::snapshot(mariadb.as_mut()).unwrap().contains_key("commits"));
}

#[test]
fn tpcb_keeps_pgbench_balances_and_pgbench_runs_on_the_same_tables() {
    let url = DatabaseUrl::parse(POSTGRES).unwrap();
    let namespace = namespace(&url);
    load::prepare(
        &url,
        &namespace,
        Profile::Tpcb,
        1,
        LoadPlan::Rebuild,
        2,
        &NoSteps,
        &AtomicBool::new(false),
        &|_, _| {},
    )
    .unwrap();
    let mut c = url.connect("envbench-oltp test").unwrap();
    assert_eq!(int(c.as_mut(), "SELECT COUNT(*) FROM pgbench_accounts"), 100_000);
    assert_eq!(int(c.as_mut(), "SELECT COUNT(*) FROM pgbench_tellers"), 10);
    let settings = StepSettings {
        profile: Profile::Tpcb,
        namespace: namespace.clone(),
        users: 2,
        first_user: 0,
        scale: 1,
        ramp: Duration::ZERO,
        duration: Duration::from_secs(2),
        keying_thinking: false,
        load_constants: NuRandConstants::load(load::LOAD_SEED),
        seed: 2,
    };
    let step = users::run_step(&url, &settings, "U=2", &NoSteps, &AtomicBool::new(false), &|_| {}).unwrap().unwrap();
    let step = step.figures;
    assert!(step.transactions > 10 && step.db_tpm.unwrap() > 0.0, "{step:?}");
    assert!(step.server.contains_key("WAL bytes"), "{:?}", step.server);
    all_pass(c.as_mut(), Profile::Tpcb);
    let pgbench = envbench_oltp::crosscheck::find_pgbench().unwrap();
    let figures =
        envbench_oltp::crosscheck::run_pgbench(&pgbench, &url, &namespace, 2, Duration::from_secs(2)).unwrap();
    assert!(figures.tps > 0.0 && figures.transactions > 0 && figures.p95_ms > 0.0, "{figures:?}");
    // pgbench's transaction keeps the same invariant on envbench's tables.
    all_pass(c.as_mut(), Profile::Tpcb);
}

#[test]
fn tables_envbench_did_not_make_are_refused_and_left_alone() {
    let dir = TempDir::new("foreign");
    let url = DatabaseUrl::sqlite(dir.0.join("theirs.sqlite"));
    let mut c = url.connect("test").unwrap();
    // SQLite's names are case-insensitive: TPCC_Stock is the table a DROP TABLE tpcc_stock would drop.
    c.batch(
        "CREATE TABLE tpcc_customer (c_id INTEGER); INSERT INTO tpcc_customer VALUES (42); \
         CREATE TABLE TPCC_Stock (s INTEGER); INSERT INTO TPCC_Stock VALUES (7)",
    )
    .unwrap();
    let main = namespace(&url);
    assert_eq!(
        schema::existing(c.as_mut(), &main, Profile::Tpcc).unwrap(),
        Existing::Foreign(vec!["TPCC_Stock".into(), "tpcc_customer".into()])
    );
    for plan in [LoadPlan::Rebuild, LoadPlan::Reuse] {
        let error =
            load::prepare(&url, &main, Profile::Tpcc, 1, plan, 1, &NoSteps, &AtomicBool::new(false), &|_, _| {})
                .unwrap_err();
        let OltpError::Foreign(message) = &error else { panic!("{error:?}") };
        assert!(message.contains("tpcc_customer") && message.contains("never creates, drops"), "{message}");
    }
    assert_eq!(int(c.as_mut(), "SELECT c_id FROM tpcc_customer"), 42);
    assert_eq!(int(c.as_mut(), "SELECT s FROM TPCC_Stock"), 7);

    // The same on MariaDB, in a database of its own.
    let database = format!("envbench_oltp_foreign_{}", std::process::id());
    let mut root = DatabaseUrl::parse(MARIADB).unwrap().connect("test").unwrap();
    root.batch(&format!("CREATE DATABASE IF NOT EXISTS {database}")).unwrap();
    let url = DatabaseUrl::parse(&format!("mysql://root@127.0.0.1:3306/{database}")).unwrap();
    let ours = namespace(&url);
    let mut c = url.connect("test").unwrap();
    c.batch("CREATE TABLE IF NOT EXISTS pgbench_accounts (aid INTEGER)").unwrap();
    let error = load::prepare(
        &url,
        &ours,
        Profile::Tpcb,
        1,
        LoadPlan::Rebuild,
        1,
        &NoSteps,
        &AtomicBool::new(false),
        &|_, _| {},
    )
    .unwrap_err();
    assert!(matches!(error, OltpError::Foreign(_)), "{error:?}");
    let left = ours.relations(c.as_mut(), &["pgbench_accounts", "pgbench_branches", "envbench_oltp_tpcb"]).unwrap();
    assert_eq!(left.len(), 1, "nothing created beside it: {left:?}");
    root.batch(&format!("DROP DATABASE {database}")).unwrap();
}

/// A view (or any relation of another kind) of one of envbench's names is refused before envbench creates its
/// marker or any table, and the refusal names each relation with its kind.
#[test]
fn relations_of_every_kind_are_seen_before_anything_is_created() {
    let dir = TempDir::new("view");
    let url = DatabaseUrl::sqlite(dir.0.join("theirs.sqlite"));
    let mut c = url.connect("test").unwrap();
    c.batch("CREATE TABLE items (x INTEGER); CREATE VIEW tpcc_item AS SELECT x FROM items").unwrap();
    let sqlite = namespace(&url);
    let error = load::prepare(
        &url,
        &sqlite,
        Profile::Tpcc,
        1,
        LoadPlan::Rebuild,
        1,
        &NoSteps,
        &AtomicBool::new(false),
        &|_, _| {},
    )
    .unwrap_err();
    let OltpError::Foreign(message) = &error else { panic!("{error:?}") };
    assert!(message.contains("tpcc_item (a view)"), "{message}");
    let names: Vec<String> = c
        .query("SELECT name FROM sqlite_master ORDER BY name", &[])
        .unwrap()
        .iter()
        .map(|r| r.text(0).unwrap())
        .collect();
    assert_eq!(names, ["items", "tpcc_item"], "nothing was created");

    // PostgreSQL, in a schema of the test's own: a view and a sequence of envbench's names; with the marker of an
    // earlier load present, a view where a table belongs is still foreign.
    let schema = format!("envbench_oltp_view_{}", std::process::id());
    let mut admin = DatabaseUrl::parse(POSTGRES).unwrap().connect("test").unwrap();
    admin.batch(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}")).unwrap();
    admin
        .batch(&format!(
            "CREATE VIEW {schema}.tpcc_item AS SELECT 1 AS i_id; CREATE SEQUENCE {schema}.tpcc_stock_pkey; \
             CREATE TABLE {schema}.envbench_oltp_tpcc (scale INTEGER, schema_version INTEGER)"
        ))
        .unwrap();
    let ours = Namespace::named(envbench_sql::Dialect::Postgres, &schema);
    let url = DatabaseUrl::parse(POSTGRES).unwrap();
    let error = load::prepare(
        &url,
        &ours,
        Profile::Tpcc,
        1,
        LoadPlan::Rebuild,
        1,
        &NoSteps,
        &AtomicBool::new(false),
        &|_, _| {},
    )
    .unwrap_err();
    let OltpError::Foreign(message) = &error else { panic!("{error:?}") };
    assert!(message.contains("tpcc_item (a view)") && message.contains("tpcc_stock_pkey (a sequence)"), "{message}");
    assert!(message.contains(&format!("schema \"{schema}\"")), "{message}");
    let count = int(
        admin.as_mut(),
        &format!(
            "SELECT COUNT(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '{schema}'"
        ),
    );
    assert_eq!(count, 3, "nothing was created in {schema}");
    admin.batch(&format!("DROP SCHEMA {schema} CASCADE")).unwrap();
}

#[test]
fn an_interrupted_load_is_rebuilt_by_the_next_run() {
    let dir = TempDir::new("interrupted");
    let url = DatabaseUrl::sqlite(dir.0.join("oltp.sqlite"));
    let main = namespace(&url);
    let prepare = |scale, plan, interrupt: bool| {
        load::prepare(&url, &main, Profile::Tpcb, scale, plan, 1, &NoSteps, &AtomicBool::new(interrupt), &|_, _| {})
    };
    assert_eq!(prepare(2, LoadPlan::Rebuild, true).unwrap_err(), OltpError::Interrupted);
    let mut c = url.connect("test").unwrap();
    let found = schema::existing(c.as_mut(), &main, Profile::Tpcb).unwrap();
    assert_eq!(found, Existing::Unfinished);
    assert_eq!(LoadPlan::of(&found, 1, false), LoadPlan::Rebuild, "the next run rebuilds it");
    // A run that planned to reuse a load it no longer finds does not build one under a shared lock.
    let error = prepare(1, LoadPlan::Reuse, false).unwrap_err();
    assert!(error.to_string().contains("changed after the run was planned"), "{error}");
    assert!(!prepare(1, LoadPlan::Rebuild, false).unwrap().reused);
    let found = schema::existing(c.as_mut(), &main, Profile::Tpcb).unwrap();
    assert_eq!(found, Existing::Complete { scale: 1, schema_version: 1 });
    assert_eq!(LoadPlan::of(&found, 1, false), LoadPlan::Reuse);
    assert_eq!(LoadPlan::of(&found, 1, true), LoadPlan::Rebuild, "--fresh rebuilds");
    assert_eq!(LoadPlan::of(&found, 2, false), LoadPlan::Rebuild, "another scale rebuilds");
}

#[test]
fn unreachable_servers_and_wrong_credentials_say_what_to_fix() {
    let cases = [
        ("postgres://postgres@127.0.0.1:1/test", "127.0.0.1:1"),
        ("mysql://root@127.0.0.1:1/test", "is the server running"),
        ("mysql://root:wrong@127.0.0.1:3306/test", "password"),
        ("mysql://root@127.0.0.1:3306/no_such_database_here", "CREATE DATABASE"),
        ("postgres://postgres@127.0.0.1:5432/no_such_database_here", "no_such_database_here"),
    ];
    for (url, expected) in cases {
        let error = DatabaseUrl::parse(url).unwrap().connect("test").err().unwrap();
        assert!(error.message.contains(expected), "{url}: {}", error.message);
        assert!(!error.message.contains("wrong"), "the password is never shown: {}", error.message);
    }
}
