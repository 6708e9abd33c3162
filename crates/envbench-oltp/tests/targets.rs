//! The OLTP workload against real databases: an embedded SQLite file, the local PostgreSQL and the local MariaDB.
//! Each target's test loads one warehouse, checks the transactions' effects one by one, runs a short step of
//! virtual users, and checks the consistency conditions; a broken database must fail them, and tables envbench did
//! not make are refused and left alone.

use envbench_core::sampler::NoSteps;
use envbench_oltp::consistency;
use envbench_oltp::load::{self, DISTRICTS, FIRST_NEW_ORDER, LoadPlan, ORDERS};
use envbench_oltp::random::{NuRandConstants, Random};
use envbench_oltp::routines::{self, Calls, Mode, RoutinesState};
use envbench_oltp::schema::{self, Existing, Shape};
use envbench_oltp::transactions::{self, Kind, Outcome, Statements, Terminal};
use envbench_oltp::users::{self, StepSettings};
use envbench_oltp::{OltpError, Profile};
use envbench_sql::{Connection, DatabaseUrl, Dialect, Namespace, Value};
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

/// A load of one warehouse (or branch) of `profile` with `plan`, on one loader, leaving routines as they are: what
/// the tests of relations envbench did not make try, to see it refused.
fn prepare_refused(
    url: &DatabaseUrl,
    namespace: &Namespace,
    profile: Profile,
    plan: LoadPlan,
) -> Result<load::LoadInfo, OltpError> {
    let never = AtomicBool::new(false);
    load::prepare(
        url,
        namespace,
        profile,
        Shape::plain(1),
        plan,
        load::RoutinesPlan::Leave,
        1,
        &NoSteps,
        &never,
        &|_, _| {},
    )
}

fn all_pass(connection: &mut dyn Connection, profile: Profile) {
    let namespace = Namespace::resolve(connection, None, false).unwrap();
    for check in consistency::run(connection, &namespace, profile).unwrap() {
        assert!(check.passed, "{}: {}", check.name, check.detail);
    }
}

/// How a test sends a transaction: its statements from the client, or one call of its stored routine.
enum Driver {
    Client(Box<Statements>),
    Procedures(Calls),
}

impl Driver {
    fn new(mode: Mode, namespace: &Namespace) -> Driver {
        match mode {
            Mode::Client => Driver::Client(Box::new(Statements::new(namespace))),
            Mode::Procedures => Driver::Procedures(Calls::new(namespace).unwrap()),
        }
    }

    fn run(&mut self, kind: Kind, c: &mut dyn Connection, random: &mut Random, terminal: Terminal) -> Outcome {
        match self {
            Driver::Client(statements) => transactions::run(kind, c, statements, random, terminal),
            Driver::Procedures(calls) => routines::run(kind, c, calls, random, terminal),
        }
        .unwrap()
    }

    /// Run `kind` until it commits (New-Order may roll back on purpose).
    fn commit_one(&mut self, kind: Kind, c: &mut dyn Connection, random: &mut Random, terminal: Terminal) {
        for _ in 0..50 {
            if self.run(kind, c, random, terminal) == Outcome::Committed {
                return;
            }
        }
        panic!("{kind:?} never committed");
    }
}

/// The modes a target runs: procedures only on a server.
fn modes(url: &DatabaseUrl) -> Vec<Mode> {
    match url.dialect() {
        Dialect::Sqlite => vec![Mode::Client],
        Dialect::Postgres | Dialect::MySql => vec![Mode::Client, Mode::Procedures],
    }
}

/// Everything a target must do: load, reuse, each transaction's effects and a step of users in each mode, the checks.
fn exercise(url: &DatabaseUrl) {
    let namespace = namespace(url);
    let routines_plan = load::RoutinesPlan::of(Profile::Tpcc, url.dialect(), Mode::Procedures, true);
    let prepare = |plan| {
        load::prepare(
            url,
            &namespace,
            Profile::Tpcc,
            Shape::plain(1),
            plan,
            routines_plan,
            2,
            &NoSteps,
            &AtomicBool::new(false),
            &|_, _| {},
        )
    };
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

    if url.dialect().ops().stored_routines {
        assert_eq!(routines::state(c, &namespace).unwrap(), RoutinesState::Current, "installed with the tables");
    }
    for mode in modes(url) {
        let mut driver = Driver::new(mode, &namespace);
        let mut random = Random::new(99, NuRandConstants::run(NuRandConstants::load(load::LOAD_SEED), 5));
        let terminal = Terminal { home: 1, scale: 1, skew: None };

        // New-Order: one more order, its lines as many as it says, one more undelivered order.
        let (orders, lines, new_orders) = (
            int(c, "SELECT SUM(d_next_o_id) FROM tpcc_district"),
            int(c, "SELECT COUNT(*) FROM tpcc_order_line"),
            int(c, "SELECT COUNT(*) FROM tpcc_new_order"),
        );
        let ordered_lines = int(c, "SELECT SUM(o_ol_cnt) FROM tpcc_orders");
        driver.commit_one(Kind::NewOrder, c, &mut random, terminal);
        assert_eq!(int(c, "SELECT SUM(d_next_o_id) FROM tpcc_district"), orders + 1);
        assert_eq!(int(c, "SELECT COUNT(*) FROM tpcc_new_order"), new_orders + 1);
        let newest_lines = int(c, "SELECT SUM(o_ol_cnt) FROM tpcc_orders") - ordered_lines;
        assert!((5..=15).contains(&newest_lines));
        assert_eq!(int(c, "SELECT COUNT(*) FROM tpcc_order_line"), lines + newest_lines);

        // New-Order's intended rollback leaves nothing behind.
        let mut rolled_back = 0;
        for _ in 0..400 {
            if driver.run(Kind::NewOrder, c, &mut random, terminal) == Outcome::RolledBack {
                rolled_back += 1;
            }
        }
        assert!((1..=20).contains(&rolled_back), "about 1% of New-Orders roll back, got {rolled_back} of 400");
        all_pass(c, Profile::Tpcc);

        // Payment: the warehouse and the districts take the same amount.
        let w_ytd = real(c, "SELECT w_ytd FROM tpcc_warehouse WHERE w_id = 1");
        let history = int(c, "SELECT COUNT(*) FROM tpcc_history");
        driver.commit_one(Kind::Payment, c, &mut random, terminal);
        let paid = real(c, "SELECT w_ytd FROM tpcc_warehouse WHERE w_id = 1") - w_ytd;
        assert!((1.0..=5000.0).contains(&paid), "{paid}");
        assert_eq!(int(c, "SELECT COUNT(*) FROM tpcc_history"), history + 1);
        all_pass(c, Profile::Tpcc);

        // Delivery: the oldest undelivered order of each district gets its carrier.
        let undelivered = int(c, "SELECT COUNT(*) FROM tpcc_new_order");
        driver.commit_one(Kind::Delivery, c, &mut random, terminal);
        assert_eq!(int(c, "SELECT COUNT(*) FROM tpcc_new_order"), undelivered - DISTRICTS);
        assert_eq!(
            int(
                c,
                &format!("SELECT COUNT(*) FROM tpcc_orders WHERE o_id = {FIRST_NEW_ORDER} AND o_carrier_id IS NULL")
            ),
            0
        );
        // Order-Status and Stock-Level only read.
        driver.commit_one(Kind::OrderStatus, c, &mut random, terminal);
        driver.commit_one(Kind::StockLevel, c, &mut random, terminal);
        all_pass(c, Profile::Tpcc);

        // A short step of virtual users: every kind of transaction ran, NOPM is counted, the database still holds.
        let settings = StepSettings {
            mix: envbench_oltp::Mix::TPCC,
            profile: Profile::Tpcc,
            namespace: namespace.clone(),
            users: 2,
            first_user: 0,
            scale: 1,
            ramp: Duration::from_millis(500),
            duration: Duration::from_secs(3),
            keying_thinking: false,
            all_warehouses: false,
            transactions_per_user: None,
            mode,
            clients_per_user: 1,
            load_constants: NuRandConstants::load(load::LOAD_SEED),
            seed: 1,
            open: None,
            max_tries: envbench_oltp::users::DEFAULT_MAX_TRIES,
            isolation: None,
            skew: None,
        };
        let step = users::run_step(url, &settings, "U=2", &NoSteps, &AtomicBool::new(false), &|_| {}).unwrap().unwrap();
        let step = step.figures;
        assert!(step.transactions > 0, "{step:?}");
        assert!(step.nopm.unwrap() > 0.0);
        assert_eq!(step.failures, 0, "{:?}", step.first_failure);
        assert_eq!(step.kinds.len(), 5);
        let new_order = step.kind(Kind::NewOrder).unwrap();
        assert!(new_order.count > 0 && new_order.p95_ms >= new_order.p50_ms && new_order.max_ms >= new_order.p99_ms);
        assert!(step.per_second.iter().sum::<f64>() >= step.transactions as f64);
        // NOPM is counted from the districts' order counters; the New-Orders the users saw commit in the window agree
        // with it, but for the transactions that straddle either end of the window (at most one per user at each)
        // and those of the moments the counters took to read (the window they cover is `measured_seconds`, the
        // users' is the duration).
        let committed = (new_order.count - new_order.rolled_back) as f64;
        let counted = step.nopm.unwrap() * step.measured_seconds / 60.0;
        let reading = counted / step.measured_seconds * (step.measured_seconds - 3.0).abs();
        let slack = 2.0 * 2.0 + reading + counted * 0.01;
        assert!((committed - counted).abs() <= slack, "{mode:?}: {committed} seen, {counted} counted");
        all_pass(c, Profile::Tpcc);
    }
    all_pass(c, Profile::Tpcc);

    // Users that drive several clients over their one connection. With keying and think times every client keys
    // for 2 to 18 s before its first transaction and thinks afterwards, so in 4 s none orders (New-Order keys for
    // 18 s) and none runs twice.
    let clients = |keying_thinking: bool, clients_per_user: u32, duration: Duration| {
        let settings = StepSettings {
            mix: envbench_oltp::Mix::TPCC,
            profile: Profile::Tpcc,
            namespace: namespace.clone(),
            users: 2,
            first_user: 0,
            scale: 1,
            ramp: Duration::ZERO,
            duration,
            keying_thinking,
            all_warehouses: false,
            transactions_per_user: None,
            mode: Mode::Client,
            clients_per_user,
            load_constants: NuRandConstants::load(load::LOAD_SEED),
            seed: 7,
            open: None,
            max_tries: envbench_oltp::users::DEFAULT_MAX_TRIES,
            isolation: None,
            skew: None,
        };
        users::run_step(url, &settings, "U=2", &NoSteps, &AtomicBool::new(false), &|_| {}).unwrap().unwrap().figures
    };
    let keyed = clients(true, 20, Duration::from_secs(4));
    assert!((5..=40).contains(&keyed.transactions), "40 clients keying 2 s or more: {keyed:?}");
    assert_eq!(keyed.kind(Kind::NewOrder).unwrap().count, 0, "New-Order keys for 18 s");
    assert_eq!(keyed.clients.as_ref().unwrap().per_user, 20);
    // Without keying, each user's clients take turns on its connection: each waits while the others run.
    let busy = clients(false, 4, Duration::from_secs(1));
    let waits = busy.clients.as_ref().unwrap();
    assert!(busy.transactions > 8 && busy.failures == 0, "{busy:?}");
    let mean_ms = busy.kinds.iter().map(|k| k.mean_ms * k.count as f64).sum::<f64>() / busy.transactions as f64;
    assert!(waits.wait_mean_ms > 0.0 && waits.wait_mean_ms < mean_ms, "{waits:?}, mean response {mean_ms} ms");
    assert!(clients(false, 1, Duration::from_secs(1)).clients.is_none(), "one client a user: no waits to show");
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
    // MariaDB counts commits for the whole server only: shown as such, never as the run's (issue #67, C1).
    let counters = envbench_oltp::telemetry::snapshot(mariadb.as_mut()).unwrap();
    assert!(counters.contains_key("server-wide commits") && !counters.contains_key("commits"), "{counters:?}");
    assert!(!counters.contains_key(envbench_oltp::telemetry::SERVER_TRANSACTIONS), "{counters:?}");
}

#[test]
fn tpcb_keeps_pgbench_balances_and_pgbench_runs_on_the_same_tables() {
    let url = DatabaseUrl::parse(POSTGRES).unwrap();
    let namespace = namespace(&url);
    load::prepare(
        &url,
        &namespace,
        Profile::Tpcb,
        Shape::plain(1),
        LoadPlan::Rebuild,
        load::RoutinesPlan::Leave,
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
        mix: envbench_oltp::Mix::TPCC,
        profile: Profile::Tpcb,
        namespace: namespace.clone(),
        users: 2,
        first_user: 0,
        scale: 1,
        ramp: Duration::ZERO,
        duration: Duration::from_secs(2),
        keying_thinking: false,
        all_warehouses: false,
        transactions_per_user: None,
        mode: Mode::Client,
        clients_per_user: 1,
        load_constants: NuRandConstants::load(load::LOAD_SEED),
        seed: 2,
        open: None,
        max_tries: envbench_oltp::users::DEFAULT_MAX_TRIES,
        isolation: None,
        skew: None,
    };
    let step = users::run_step(&url, &settings, "U=2", &NoSteps, &AtomicBool::new(false), &|_| {}).unwrap().unwrap();
    let step = step.figures;
    assert!(step.transactions > 0 && step.db_tpm.unwrap() > 0.0, "{step:?}");
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
        let error = prepare_refused(&url, &main, Profile::Tpcc, plan).unwrap_err();
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
    let error = prepare_refused(&url, &ours, Profile::Tpcb, LoadPlan::Rebuild).unwrap_err();
    assert!(matches!(error, OltpError::Foreign(_)), "{error:?}");
    let left = ours.relations(c.as_mut(), &["pgbench_accounts", "pgbench_branches", "envbench_oltp_tpcb"]).unwrap();
    assert_eq!(left.len(), 1, "nothing created beside it: {left:?}");
    root.batch(&format!("DROP DATABASE {database}")).unwrap();
}

/// A table someone else made under the marker's name (issue #54, E1) is not envbench's marker: it and every relation
/// beside it are foreign, nothing is created, emptied or dropped, on each of the three databases.
#[test]
fn a_table_named_like_the_marker_is_someone_elses() {
    let dir = TempDir::new("marker");
    let name = format!("envbench_oltp_marker_{}", std::process::id());
    let mut admin = DatabaseUrl::parse(POSTGRES).unwrap().connect("test").unwrap();
    admin.batch(&format!("DROP SCHEMA IF EXISTS {name} CASCADE; CREATE SCHEMA {name}")).unwrap();
    let mut root = DatabaseUrl::parse(MARIADB).unwrap().connect("test").unwrap();
    root.batch(&format!("DROP DATABASE IF EXISTS {name}")).unwrap();
    root.batch(&format!("CREATE DATABASE {name}")).unwrap();
    let places = [
        (DatabaseUrl::sqlite(dir.0.join("theirs.sqlite")), Namespace::named(Dialect::Sqlite, "main")),
        (DatabaseUrl::parse(POSTGRES).unwrap(), Namespace::named(Dialect::Postgres, &name)),
        (
            DatabaseUrl::parse(&format!("mysql://root@127.0.0.1:3306/{name}")).unwrap(),
            Namespace::named(Dialect::MySql, &name),
        ),
    ];
    for (url, ns) in &places {
        let mut c = ns.connect(url, "test").unwrap();
        for (profile, theirs) in [(Profile::Tpcc, "tpcc_item"), (Profile::Tpcb, "pgbench_accounts")] {
            let marker = ns.qualify(profile.marker_table());
            let table = ns.qualify(theirs);
            // The forms a user's table takes by accident (issue #67, F1): a table of the marker's name with other
            // columns; with exactly the columns an earlier envbench gave it, empty and with a row; and a
            // schema-only copy of envbench's own marker (its comment and signature columns, no row), alone and
            // with a row whose signature does not match.
            type Forgery<'a> = Box<dyn Fn(&mut dyn Connection) + 'a>;
            let forgeries: Vec<Forgery> = vec![
                Box::new(|c| c.batch(&format!("CREATE TABLE {marker} (x INTEGER, note VARCHAR(20))")).unwrap()),
                Box::new(|c| {
                    c.batch(&ns.adapt(&format!(
                        "CREATE TABLE {marker} (scale INTEGER NOT NULL, schema_version INTEGER NOT NULL, \
                         load_seconds DOUBLE PRECISION NOT NULL, loaded_at {{type:timestamp}} NOT NULL)"
                    )))
                    .unwrap()
                }),
                Box::new(|c| {
                    c.batch(&ns.adapt(&format!(
                        "CREATE TABLE {marker} (scale INTEGER NOT NULL, schema_version INTEGER NOT NULL, \
                         load_seconds DOUBLE PRECISION NOT NULL, loaded_at {{type:timestamp}} NOT NULL)"
                    )))
                    .unwrap();
                    c.execute(
                        &format!("INSERT INTO {marker} VALUES (1, {}, 1.0, CURRENT_TIMESTAMP)", schema::SCHEMA_VERSION),
                        &[],
                    )
                    .unwrap();
                }),
                Box::new(|c| {
                    profile.marker().create(c, ns).unwrap();
                    c.batch(&format!("DELETE FROM {marker}")).unwrap();
                }),
                Box::new(|c| {
                    let token = profile.marker().create(c, ns).unwrap();
                    c.batch(&format!("DELETE FROM {marker}")).unwrap();
                    let insert = format!(
                        "INSERT INTO {marker} (envbench_token, envbench_signature) VALUES ('{token}', 'copied')"
                    );
                    c.batch(&insert).unwrap();
                }),
            ];
            for (index, forge) in forgeries.iter().enumerate() {
                let case = format!("{ns:?} {profile:?} forgery {index}");
                forge(c.as_mut());
                c.batch(&format!("CREATE TABLE {table} (x INTEGER, note VARCHAR(20))")).unwrap();
                c.execute(&format!("INSERT INTO {table} VALUES (7, 'mine')"), &[]).unwrap();
                let found = schema::existing(c.as_mut(), ns, profile).unwrap();
                let Existing::Foreign(relations) = &found else { panic!("{case}: {found:?}") };
                assert!(relations.iter().any(|r| r.starts_with(profile.marker_table())), "{case}: {relations:?}");
                assert!(relations.iter().any(|r| r.eq_ignore_ascii_case(theirs)), "{case}: {relations:?}");
                let error = prepare_refused(url, ns, profile, LoadPlan::Rebuild).unwrap_err();
                assert!(matches!(error, OltpError::Foreign(_)), "{case}: {error:?}");
                let dropped = schema::drop_profile(c.as_mut(), ns, profile).unwrap();
                assert!(dropped.dropped.is_empty(), "{case}: {dropped:?}");
                assert_eq!(int(c.as_mut(), &format!("SELECT x FROM {table}")), 7, "{case}: their rows stay");
                assert_eq!(int(c.as_mut(), &format!("SELECT count(*) FROM {table}")), 1, "{case}");
                let names: Vec<&str> = profile.tables().iter().map(|t| t.name).collect();
                assert_eq!(ns.relations(c.as_mut(), &names).unwrap().len(), 1, "{case}: nothing created beside them");
                c.batch(&format!("DROP TABLE {table}")).unwrap();
                c.batch(&format!("DROP TABLE {marker}")).unwrap();
            }
        }
    }
    admin.batch(&format!("DROP SCHEMA {name} CASCADE")).unwrap();
    root.batch(&format!("DROP DATABASE {name}")).unwrap();
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
    let error = prepare_refused(&url, &sqlite, Profile::Tpcc, LoadPlan::Rebuild).unwrap_err();
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
             CREATE TABLE {schema}.envbench_oltp_tpcc (scale INTEGER, schema_version INTEGER, load_seconds FLOAT8, \
             loaded_at TIMESTAMPTZ); \
             CREATE FUNCTION {schema}.envbench_tpcc_payment(integer) RETURNS integer LANGUAGE sql AS 'SELECT $1'"
        ))
        .unwrap();
    let ours = Namespace::named(envbench_sql::Dialect::Postgres, &schema);
    let url = DatabaseUrl::parse(POSTGRES).unwrap();
    let error = prepare_refused(&url, &ours, Profile::Tpcc, LoadPlan::Rebuild).unwrap_err();
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
    assert!(message.contains("envbench_tpcc_payment (a function)"), "a routine of envbench's names too: {message}");
    // Installing the routines alone refuses it too, and leaves it as it was.
    let error = routines::install(admin.as_mut(), &ours).unwrap_err();
    let OltpError::Foreign(message) = &error else { panic!("{error:?}") };
    assert!(message.contains("envbench_tpcc_payment (a function)") && message.contains("never replaces"), "{message}");
    assert_eq!(int(admin.as_mut(), &format!("SELECT {schema}.envbench_tpcc_payment(42)")), 42);
    assert_eq!(routines::found(admin.as_mut(), &ours).unwrap().len(), 1, "nothing installed beside it");

    // Envbench's own routines of an older version are replaced, each dropped by its name and signature.
    admin
        .batch(&format!(
            "COMMENT ON FUNCTION {schema}.envbench_tpcc_payment(integer) IS \
             'envbench oltp tpcc routine, version 0: old'"
        ))
        .unwrap();
    assert_eq!(routines::state(admin.as_mut(), &ours).unwrap(), RoutinesState::Missing);
    admin.batch(&format!("DROP VIEW {schema}.tpcc_item; DROP SEQUENCE {schema}.tpcc_stock_pkey")).unwrap();
    for table in Profile::Tpcc.tables() {
        admin.batch(&schema::create_table(table, &ours)).unwrap();
    }
    routines::install(admin.as_mut(), &ours).unwrap();
    assert_eq!(routines::state(admin.as_mut(), &ours).unwrap(), RoutinesState::Current);
    assert_eq!(routines::found(admin.as_mut(), &ours).unwrap().len(), routines::NAMES.len(), "the old one is gone");
    // A function of another name beside them is not envbench's to drop.
    admin.batch(&format!("CREATE FUNCTION {schema}.theirs() RETURNS integer LANGUAGE sql AS 'SELECT 7'")).unwrap();
    let dropped = routines::drop_envbench_routines(admin.as_mut(), &ours).unwrap();
    assert_eq!(dropped.len(), routines::NAMES.len());
    assert!(routines::found(admin.as_mut(), &ours).unwrap().is_empty());
    assert_eq!(int(admin.as_mut(), &format!("SELECT {schema}.theirs()")), 7);
    admin.batch(&format!("DROP SCHEMA {schema} CASCADE")).unwrap();

    // MariaDB: a procedure of envbench's names that envbench did not make is refused and left alone.
    let database = format!("envbench_oltp_routine_{}", std::process::id());
    let mut root = DatabaseUrl::parse(MARIADB).unwrap().connect("test").unwrap();
    root.batch(&format!("DROP DATABASE IF EXISTS {database}")).unwrap();
    root.batch(&format!("CREATE DATABASE {database}")).unwrap();
    root.batch(&format!("CREATE PROCEDURE {database}.envbench_tpcc_delivery(IN w INT) SELECT w")).unwrap();
    let theirs = Namespace::named(Dialect::MySql, &database);
    assert_eq!(
        schema::existing(root.as_mut(), &theirs, Profile::Tpcc).unwrap(),
        Existing::Foreign(vec!["envbench_tpcc_delivery (a procedure)".into()])
    );
    assert!(matches!(routines::install(root.as_mut(), &theirs), Err(OltpError::Foreign(_))));
    assert_eq!(routines::found(root.as_mut(), &theirs).unwrap().len(), 1);
    root.batch(&format!("DROP DATABASE {database}")).unwrap();
}

#[test]
fn an_interrupted_load_is_rebuilt_by_the_next_run() {
    let dir = TempDir::new("interrupted");
    let url = DatabaseUrl::sqlite(dir.0.join("oltp.sqlite"));
    let main = namespace(&url);
    let prepare = |scale, plan, interrupt: bool| {
        let routines = load::RoutinesPlan::Leave;
        load::prepare(
            &url,
            &main,
            Profile::Tpcb,
            Shape::plain(scale),
            plan,
            routines,
            1,
            &NoSteps,
            &AtomicBool::new(interrupt),
            &|_, _| {},
        )
    };
    assert_eq!(prepare(2, LoadPlan::Rebuild, true).unwrap_err(), OltpError::Interrupted);
    let mut c = url.connect("test").unwrap();
    let found = schema::existing(c.as_mut(), &main, Profile::Tpcb).unwrap();
    assert_eq!(found, Existing::Unfinished);
    assert_eq!(LoadPlan::of(&found, Shape::plain(1), false), LoadPlan::Rebuild, "the next run rebuilds it");
    // A run that planned to reuse a load it no longer finds does not build one under a shared lock.
    let error = prepare(1, LoadPlan::Reuse, false).unwrap_err();
    assert!(error.to_string().contains("changed after the run was planned"), "{error}");
    assert!(!prepare(1, LoadPlan::Rebuild, false).unwrap().reused);
    let found = schema::existing(c.as_mut(), &main, Profile::Tpcb).unwrap();
    assert_eq!(found, Existing::Complete { shape: Shape::plain(1), schema_version: schema::SCHEMA_VERSION });
    assert_eq!(LoadPlan::of(&found, Shape::plain(1), false), LoadPlan::Reuse);
    assert_eq!(LoadPlan::of(&found, Shape::plain(1), true), LoadPlan::Rebuild, "--fresh rebuilds");
    assert_eq!(LoadPlan::of(&found, Shape::plain(2), false), LoadPlan::Rebuild, "another scale rebuilds");
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

/// `envbench oltp --drop` removes exactly what envbench made for the profile: its tables, their marker and its
/// routines, never a table or function beside them, nor a relation of envbench's names that it did not make.
#[test]
fn drop_removes_exactly_what_envbench_made() {
    // PostgreSQL, in a schema of the test's own.
    let schema = format!("envbench_oltp_drop_{}", std::process::id());
    let url = DatabaseUrl::parse(POSTGRES).unwrap();
    let mut admin = url.connect("test").unwrap();
    admin.batch(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}")).unwrap();
    let ours = Namespace::named(Dialect::Postgres, &schema);
    schema::recreate(admin.as_mut(), &url, &ours, Profile::Tpcc, Shape::plain(1)).unwrap();
    schema::mark_complete(admin.as_mut(), &ours, Profile::Tpcc, 1, 0.0).unwrap();
    routines::install(admin.as_mut(), &ours).unwrap();
    admin
        .batch(&format!(
            "CREATE TABLE {schema}.theirs (x INTEGER); INSERT INTO {schema}.theirs VALUES (1); \
             CREATE FUNCTION {schema}.their_function() RETURNS integer LANGUAGE sql AS 'SELECT 5'"
        ))
        .unwrap();
    let dropped = schema::drop_profile(admin.as_mut(), &ours, Profile::Tpcc).unwrap();
    assert_eq!(dropped.dropped.len(), Profile::Tpcc.tables().len() + 1 + routines::NAMES.len(), "{dropped:?}");
    assert!(dropped.left.is_empty(), "{dropped:?}");
    let relations = |c: &mut dyn Connection| {
        c.query(
            &format!(
                "SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
                 WHERE n.nspname = '{schema}' ORDER BY 1"
            ),
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.text(0).unwrap())
        .collect::<Vec<_>>()
    };
    assert_eq!(relations(admin.as_mut()), ["theirs"]);
    assert_eq!(int(admin.as_mut(), &format!("SELECT {schema}.their_function()")), 5);
    assert_eq!(int(admin.as_mut(), &format!("SELECT x FROM {schema}.theirs")), 1);
    // Without the marker, tables of envbench's names are not envbench's: named, left alone.
    admin.batch(&format!("CREATE TABLE {schema}.tpcc_item (i INTEGER)")).unwrap();
    let dropped = schema::drop_profile(admin.as_mut(), &ours, Profile::Tpcc).unwrap();
    assert!(dropped.dropped.is_empty() && dropped.left == ["tpcc_item"], "{dropped:?}");
    assert_eq!(relations(admin.as_mut()), ["theirs", "tpcc_item"]);
    admin.batch(&format!("DROP SCHEMA {schema} CASCADE")).unwrap();

    // MariaDB, in a database of its own.
    let database = format!("envbench_oltp_drop_{}", std::process::id());
    let mut root = DatabaseUrl::parse(MARIADB).unwrap().connect("test").unwrap();
    root.batch(&format!("DROP DATABASE IF EXISTS {database}")).unwrap();
    root.batch(&format!("CREATE DATABASE {database}")).unwrap();
    let url = DatabaseUrl::parse(&format!("mysql://root@127.0.0.1:3306/{database}")).unwrap();
    let ours = Namespace::named(Dialect::MySql, &database);
    schema::recreate(root.as_mut(), &url, &ours, Profile::Tpcc, Shape::plain(1)).unwrap();
    schema::mark_complete(root.as_mut(), &ours, Profile::Tpcc, 1, 0.0).unwrap();
    routines::install(root.as_mut(), &ours).unwrap();
    root.batch(&format!("CREATE TABLE {database}.theirs (x INTEGER)")).unwrap();
    root.batch(&format!("CREATE PROCEDURE {database}.their_procedure() SELECT 5")).unwrap();
    let dropped = schema::drop_profile(root.as_mut(), &ours, Profile::Tpcc).unwrap();
    assert_eq!(dropped.dropped.len(), Profile::Tpcc.tables().len() + 1 + routines::NAMES.len(), "{dropped:?}");
    let tables = ours.relations(root.as_mut(), &["theirs", "tpcc_item", "envbench_oltp_tpcc"]).unwrap();
    assert_eq!(tables.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["theirs"]);
    let procedures = int(
        root.as_mut(),
        &format!("SELECT COUNT(*) FROM information_schema.routines WHERE routine_schema = '{database}'"),
    );
    assert_eq!(procedures, 1, "their procedure is left");
    root.batch(&format!("DROP DATABASE {database}")).unwrap();
}

/// The two modes are the same transactions: from the same load, the same inputs leave the same database (but for
/// timestamps), whether the client sends the statements or the stored routines run them.
#[test]
fn both_modes_leave_the_same_database_from_the_same_inputs() {
    let url = DatabaseUrl::parse(POSTGRES).unwrap();
    let mut admin = url.connect("test").unwrap();
    let mut sums = Vec::new();
    for mode in [Mode::Client, Mode::Procedures] {
        let schema = format!("envbench_oltp_same_{}_{}", mode.name(), std::process::id());
        admin.batch(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}")).unwrap();
        let namespace = Namespace::named(Dialect::Postgres, &schema);
        let install = load::RoutinesPlan::Install;
        load::prepare(
            &url,
            &namespace,
            Profile::Tpcc,
            Shape::plain(1),
            LoadPlan::Rebuild,
            install,
            2,
            &NoSteps,
            &AtomicBool::new(false),
            &|_, _| {},
        )
        .unwrap();
        let mut c = namespace.connect(&url, "test").unwrap();
        let mut driver = Driver::new(mode, &namespace);
        let mut random = Random::new(7, NuRandConstants::run(NuRandConstants::load(load::LOAD_SEED), 3));
        let terminal = Terminal { home: 1, scale: 1, skew: None };
        let mut outcomes = Vec::new();
        for _ in 0..300 {
            let kind = envbench_oltp::Mix::TPCC.pick(&mut random);
            outcomes.push((kind, driver.run(kind, c.as_mut(), &mut random, terminal)));
        }
        let state = c
            .query(
                "SELECT (SELECT SUM(w_ytd)::numeric(20,2) FROM tpcc_warehouse)::text, \
                 (SELECT SUM(d_ytd)::numeric(20,2) FROM tpcc_district)::text, \
                 (SELECT SUM(d_next_o_id) FROM tpcc_district)::text, \
                 (SELECT SUM(c_balance)::numeric(20,2) || ' ' || SUM(c_ytd_payment)::numeric(20,2) || ' ' || \
                  SUM(c_payment_cnt) || ' ' || SUM(c_delivery_cnt) || ' ' || md5(string_agg(c_data, '' ORDER BY \
                  c_w_id, c_d_id, c_id)) FROM tpcc_customer), \
                 (SELECT COUNT(*) || ' ' || SUM(h_amount)::numeric(20,2) || ' ' || md5(string_agg(h_data || h_c_id, \
                  '' ORDER BY h_c_id, h_amount)) FROM tpcc_history), \
                 (SELECT COUNT(*) || ' ' || COUNT(o_carrier_id) || ' ' || SUM(o_ol_cnt) || ' ' || SUM(o_all_local) \
                  FROM tpcc_orders), (SELECT COUNT(*)::text FROM tpcc_new_order), \
                 (SELECT COUNT(*) || ' ' || SUM(ol_amount)::numeric(20,2) || ' ' || COUNT(ol_delivery_d) || ' ' || \
                  md5(string_agg(ol_dist_info || ol_i_id || '/' || ol_supply_w_id || '/' || ol_quantity, '' ORDER BY \
                  ol_w_id, ol_d_id, ol_o_id, ol_number)) FROM tpcc_order_line), \
                 (SELECT SUM(s_quantity) || ' ' || SUM(s_ytd) || ' ' || SUM(s_order_cnt) || ' ' || SUM(s_remote_cnt) \
                  FROM tpcc_stock)",
                &[],
            )
            .unwrap()
            .remove(0);
        let state: Vec<String> = (0..9).map(|i| state.text(i).unwrap()).collect();
        all_pass(c.as_mut(), Profile::Tpcc);
        sums.push((outcomes, state));
        admin.batch(&format!("DROP SCHEMA {schema} CASCADE")).unwrap();
    }
    assert_eq!(sums[0].0, sums[1].0, "the same transactions, the same outcomes");
    assert!(sums[0].0.iter().any(|(kind, _)| *kind == Kind::Delivery), "the mix ran every kind");
    let names = ["w_ytd", "d_ytd", "orders", "customers", "history", "orders", "new orders", "order lines", "stock"];
    for ((name, client), procedures) in names.iter().zip(&sums[0].1).zip(&sums[1].1) {
        assert_eq!(client, procedures, "{name}");
    }
}

/// `--partition`: tpcc_order_line in range partitions by warehouse on PostgreSQL (partition tables) and MariaDB
/// (partitions inside the table), every line in its warehouse's partition; a load of the other layout is not reused;
/// the transactions and the checks run on it as on one table; a drop takes the partitions with the table and leaves
/// a table that only bears a partition's name.
#[test]
fn a_partitioned_order_line_loads_runs_and_drops() {
    for (server, dialect) in [(POSTGRES, Dialect::Postgres), (MARIADB, Dialect::MySql)] {
        let name = format!("envbench_oltp_partition_{}", std::process::id());
        let server = DatabaseUrl::parse(server).unwrap();
        let mut admin = server.connect("test").unwrap();
        let url = match dialect {
            Dialect::Postgres => {
                admin.batch(&format!("DROP SCHEMA IF EXISTS {name} CASCADE; CREATE SCHEMA {name}")).unwrap();
                server.clone()
            }
            Dialect::Sqlite => unreachable!("SQLite has no partitions"),
            Dialect::MySql => {
                admin.batch(&format!("DROP DATABASE IF EXISTS {name}")).unwrap();
                admin.batch(&format!("CREATE DATABASE {name}")).unwrap();
                DatabaseUrl::parse(&format!("mysql://root@127.0.0.1:3306/{name}")).unwrap()
            }
        };
        let ours = Namespace::named(dialect, &name);
        let shape = Shape::of(2, true);
        assert_eq!(shape.partitions, 2, "one partition per warehouse");
        let routines = load::RoutinesPlan::of(Profile::Tpcc, dialect, Mode::Procedures, true);
        let never = AtomicBool::new(false);
        load::prepare(&url, &ours, Profile::Tpcc, shape, LoadPlan::Rebuild, routines, 2, &NoSteps, &never, &|_, _| {})
            .unwrap();
        let mut c = ours.connect(&url, "test").unwrap();
        let c = c.as_mut();
        assert_eq!(schema::order_line_partitions(c, &ours).unwrap().len(), 2, "{dialect:?}");
        let found = schema::existing(c, &ours, Profile::Tpcc).unwrap();
        assert_eq!(found, Existing::Complete { shape, schema_version: schema::SCHEMA_VERSION });
        assert_eq!(LoadPlan::of(&found, shape, false), LoadPlan::Reuse);
        assert_eq!(LoadPlan::of(&found, Shape::plain(2), false), LoadPlan::Rebuild, "another layout is rebuilt");
        for (warehouse, partition) in [(1, "p1"), (2, "p2")] {
            let from = match dialect {
                Dialect::Postgres => format!("{name}.tpcc_order_line_{partition}"),
                Dialect::MySql => format!("{name}.tpcc_order_line PARTITION ({partition})"),
                Dialect::Sqlite => unreachable!("SQLite has no partitions"),
            };
            assert!(int(c, &format!("SELECT COUNT(*) FROM {from}")) > 250_000, "{dialect:?} {partition}");
            let elsewhere = int(c, &format!("SELECT COUNT(*) FROM {from} WHERE ol_w_id <> {warehouse}"));
            assert_eq!(elsewhere, 0, "{dialect:?}: warehouse {warehouse}'s lines are all in {partition}");
        }

        // Users in both modes, then the checks.
        for mode in [Mode::Client, Mode::Procedures] {
            let settings = StepSettings {
                mix: envbench_oltp::Mix::TPCC,
                profile: Profile::Tpcc,
                namespace: ours.clone(),
                users: 2,
                first_user: 0,
                scale: 2,
                ramp: Duration::ZERO,
                duration: Duration::from_secs(2),
                keying_thinking: false,
                all_warehouses: true,
                transactions_per_user: None,
                mode,
                clients_per_user: 1,
                load_constants: NuRandConstants::load(load::LOAD_SEED),
                seed: 3,
                open: None,
                max_tries: envbench_oltp::users::DEFAULT_MAX_TRIES,
                isolation: None,
                skew: None,
            };
            let step = users::run_step(&url, &settings, "U=2", &NoSteps, &never, &|_| {}).unwrap().unwrap().figures;
            assert!(step.transactions > 0 && step.failures == 0, "{dialect:?} {mode:?}: {step:?}");
        }
        for check in consistency::run(c, &ours, Profile::Tpcc).unwrap() {
            assert!(check.passed, "{dialect:?} {}: {}", check.name, check.detail);
        }

        let tables = Profile::Tpcc.tables().len() + 1 + routines::NAMES.len();
        if dialect.ops().partitions_are_tables {
            // A table that bears a partition's name but is no partition of envbench's order line is not envbench's.
            c.batch(&format!("CREATE TABLE {name}.tpcc_order_line_p7 (x INTEGER)")).unwrap();
            let found = schema::existing(c, &ours, Profile::Tpcc).unwrap();
            assert_eq!(found, Existing::Foreign(vec!["tpcc_order_line_p7".into()]));
            let dropped = schema::drop_profile(c, &ours, Profile::Tpcc).unwrap();
            assert_eq!(dropped.dropped.len(), tables + 2, "{dropped:?}");
            assert!(dropped.dropped.iter().any(|d| d == "tpcc_order_line_p2"), "{dropped:?}");
            assert_eq!(dropped.left, ["tpcc_order_line_p7"]);
            let left = ours.relations(c, &["tpcc_order_line", "tpcc_order_line_p1", "tpcc_order_line_p7"]).unwrap();
            assert_eq!(left.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(), ["tpcc_order_line_p7"]);
            admin.batch(&format!("DROP SCHEMA {name} CASCADE")).unwrap();
        } else {
            let dropped = schema::drop_profile(c, &ours, Profile::Tpcc).unwrap();
            assert_eq!(dropped.dropped.len(), tables, "{dropped:?}");
            assert!(dropped.left.is_empty(), "{dropped:?}");
            admin.batch(&format!("DROP DATABASE {name}")).unwrap();
        }
    }
}
