//! The OLTP workload against real databases: an embedded SQLite file, the local PostgreSQL and the local MariaDB.
//! Each target's test loads one warehouse, checks the transactions' effects one by one, runs a short step of
//! virtual users, and checks the consistency conditions; a broken database must fail them, and tables envbench did
//! not make are refused and left alone.

use envbench_core::sampler::NoSteps;
use envbench_oltp::consistency;
use envbench_oltp::load::{self, DISTRICTS, FIRST_NEW_ORDER, ORDERS};
use envbench_oltp::random::{NuRandConstants, Random};
use envbench_oltp::schema::{self, Existing};
use envbench_oltp::transactions::{self, Kind, Outcome, Statements, Terminal};
use envbench_oltp::users::{self, StepSettings};
use envbench_oltp::{OltpError, Profile};
use envbench_sql::{Connection, DatabaseUrl, Value};
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

fn all_pass(connection: &mut dyn Connection, profile: Profile) {
    for check in consistency::run(connection, profile).unwrap() {
        assert!(check.passed, "{}: {}", check.name, check.detail);
    }
}

/// Run `kind` until it commits (New-Order may roll back on purpose).
fn commit_one(kind: Kind, connection: &mut dyn Connection, random: &mut Random, terminal: Terminal) {
    let statements = Statements::new(connection.dialect());
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
    let prepare = |fresh| load::prepare(url, Profile::Tpcc, 1, fresh, 2, &NoSteps, &AtomicBool::new(false), &|_, _| {});
    let first = prepare(true).unwrap();
    assert!(!first.reused);
    let expected = load::expected_rows(Profile::Tpcc, 1) as f64;
    assert!((first.rows as f64 - expected).abs() < expected * 0.01, "{} rows, about {expected}", first.rows);
    assert!(prepare(false).unwrap().reused, "a complete load of the same scale is reused");

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
    let statements = Statements::new(c.dialect());
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
    let checks = consistency::run(c, Profile::Tpcc).unwrap();
    let failed: Vec<&str> = checks.iter().filter(|k| !k.passed).map(|k| &k.name[..1]).collect();
    assert_eq!(failed, ["1", "4"], "{checks:?}");
    // The next run must not reuse it: --fresh rebuilds.
    assert!(!prepare(true).unwrap().reused);
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

#[test]
fn tpcb_keeps_pgbench_balances_and_pgbench_runs_on_the_same_tables() {
    let url = DatabaseUrl::parse(POSTGRES).unwrap();
    load::prepare(&url, Profile::Tpcb, 1, true, 2, &NoSteps, &AtomicBool::new(false), &|_, _| {}).unwrap();
    let mut c = url.connect("envbench-oltp test").unwrap();
    assert_eq!(int(c.as_mut(), "SELECT COUNT(*) FROM pgbench_accounts"), 100_000);
    assert_eq!(int(c.as_mut(), "SELECT COUNT(*) FROM pgbench_tellers"), 10);
    let settings = StepSettings {
        profile: Profile::Tpcb,
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
    let figures = envbench_oltp::crosscheck::run_pgbench(&pgbench, &url, 2, Duration::from_secs(2)).unwrap();
    assert!(figures.tps > 0.0 && figures.transactions > 0 && figures.p95_ms > 0.0, "{figures:?}");
    // pgbench's transaction keeps the same invariant on envbench's tables.
    all_pass(c.as_mut(), Profile::Tpcb);
}

#[test]
fn tables_envbench_did_not_make_are_refused_and_left_alone() {
    let dir = TempDir::new("foreign");
    let url = DatabaseUrl::sqlite(dir.0.join("theirs.sqlite"));
    let mut c = url.connect("test").unwrap();
    c.batch("CREATE TABLE tpcc_customer (c_id INTEGER); INSERT INTO tpcc_customer VALUES (42)").unwrap();
    assert_eq!(schema::existing(c.as_mut(), Profile::Tpcc).unwrap(), Existing::Foreign(vec!["tpcc_customer".into()]));
    let error =
        load::prepare(&url, Profile::Tpcc, 1, true, 1, &NoSteps, &AtomicBool::new(false), &|_, _| {}).unwrap_err();
    let OltpError::Foreign(message) = &error else { panic!("{error:?}") };
    assert!(message.contains("tpcc_customer") && message.contains("never drops"), "{message}");
    assert_eq!(int(c.as_mut(), "SELECT c_id FROM tpcc_customer"), 42);

    // The same on MariaDB, in a database of its own.
    let mut root = DatabaseUrl::parse(MARIADB).unwrap().connect("test").unwrap();
    root.batch("CREATE DATABASE IF NOT EXISTS envbench_oltp_foreign").unwrap();
    let url = DatabaseUrl::parse("mysql://root@127.0.0.1:3306/envbench_oltp_foreign").unwrap();
    let mut c = url.connect("test").unwrap();
    c.batch("CREATE TABLE IF NOT EXISTS pgbench_accounts (aid INTEGER)").unwrap();
    let error =
        load::prepare(&url, Profile::Tpcb, 1, false, 1, &NoSteps, &AtomicBool::new(false), &|_, _| {}).unwrap_err();
    assert!(matches!(error, OltpError::Foreign(_)), "{error:?}");
    assert!(schema::table_names(c.as_mut()).unwrap().contains(&"pgbench_accounts".to_string()));
    root.batch("DROP DATABASE envbench_oltp_foreign").unwrap();
}

#[test]
fn an_interrupted_load_is_rebuilt_by_the_next_run() {
    let dir = TempDir::new("interrupted");
    let url = DatabaseUrl::sqlite(dir.0.join("oltp.sqlite"));
    let error =
        load::prepare(&url, Profile::Tpcb, 2, false, 1, &NoSteps, &AtomicBool::new(true), &|_, _| {}).unwrap_err();
    assert_eq!(error, OltpError::Interrupted);
    let mut c = url.connect("test").unwrap();
    assert_eq!(schema::existing(c.as_mut(), Profile::Tpcb).unwrap(), Existing::Unfinished);
    let info = load::prepare(&url, Profile::Tpcb, 1, false, 1, &NoSteps, &AtomicBool::new(false), &|_, _| {}).unwrap();
    assert!(!info.reused);
    assert_eq!(
        schema::existing(c.as_mut(), Profile::Tpcb).unwrap(),
        Existing::Complete { scale: 1, schema_version: 1 }
    );
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
