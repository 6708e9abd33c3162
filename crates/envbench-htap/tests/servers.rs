//! htap against the local PostgreSQL and MariaDB: the CH tables load beside the TPC-C tables under the marker rules,
//! the 22 queries give the same answers on both servers from the same fresh load, and a step runs transactions and
//! analytic streams together, cancelling on the server what passes the query timeout.

use envbench_core::sampler::NoSteps;
use envbench_htap::ch::{self, CH_TABLES};
use envbench_htap::queries::{self, Answer, QUERIES};
use envbench_htap::streams::{self, AnalyticFigures, HtapStepSettings};
use envbench_oltp::load::{self, LoadPlan, RoutinesPlan};
use envbench_oltp::{
    Companion, CompanionState, OltpError, Profile, consistency, random::NuRandConstants, routines::Mode, schema::Shape,
    users::StepSettings,
};
use envbench_sql::{Connection, DatabaseUrl, Dialect, Namespace};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

const POSTGRES: &str = "postgres://postgres@127.0.0.1:5432/test";
const MARIADB: &str = "mysql://root@127.0.0.1:3306/test";

/// A schema (PostgreSQL) or database (MariaDB) of the test's own, dropped at the end.
struct Place {
    admin: Box<dyn Connection>,
    url: DatabaseUrl,
    namespace: Namespace,
}

impl Place {
    fn new(server: &str, tag: &str) -> Place {
        let name = format!("envbench_htap_{tag}_{}", std::process::id());
        let server_url = DatabaseUrl::parse(server).unwrap();
        let mut admin = server_url.connect("test").unwrap();
        let (url, dialect) = match server_url.dialect() {
            Dialect::Postgres => {
                admin.batch(&format!("DROP SCHEMA IF EXISTS {name} CASCADE; CREATE SCHEMA {name}")).unwrap();
                (server_url, Dialect::Postgres)
            }
            Dialect::Sqlite => unreachable!("the htap server tests run on servers"),
            Dialect::MySql => {
                admin.batch(&format!("DROP DATABASE IF EXISTS {name}")).unwrap();
                admin.batch(&format!("CREATE DATABASE {name}")).unwrap();
                (DatabaseUrl::parse(&format!("mysql://root@127.0.0.1:3306/{name}")).unwrap(), Dialect::MySql)
            }
        };
        Place { admin, url, namespace: Namespace::named(dialect, &name) }
    }

    /// One warehouse and the CH tables, as a run that holds them alone builds them.
    fn load(&self) {
        let never = AtomicBool::new(false);
        let routines = RoutinesPlan::of(Profile::Tpcc, self.url.dialect(), Mode::Procedures, true);
        let (url, ns) = (&self.url, &self.namespace);
        load::prepare(
            url,
            ns,
            Profile::Tpcc,
            Shape::plain(1),
            LoadPlan::Rebuild,
            routines,
            2,
            &NoSteps,
            &never,
            &|_, _| {},
        )
        .unwrap();
        let mut c = self.connect();
        assert_eq!(CH_TABLES.state(c.as_mut(), ns).unwrap(), CompanionState::Missing);
        CH_TABLES.build(c.as_mut(), ns, &never).unwrap();
        assert_eq!(CH_TABLES.state(c.as_mut(), ns).unwrap(), CompanionState::Complete);
    }

    fn connect(&self) -> Box<dyn Connection> {
        self.namespace.connect(&self.url, "envbench-htap test").unwrap()
    }

    /// The 22 answers.
    fn answers(&self) -> Vec<Answer> {
        let mut c = self.connect();
        queries::texts(&self.namespace)
            .iter()
            .enumerate()
            .map(|(index, text)| {
                let (columns, rows) = c.query_named(text).unwrap_or_else(|e| panic!("Q{}: {e}\n{text}", index + 1));
                queries::answer(&rows, columns.len())
            })
            .collect()
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        let name = self.namespace.name().to_string();
        let _ = match self.namespace.dialect() {
            Dialect::Postgres => self.admin.batch(&format!("DROP SCHEMA IF EXISTS {name} CASCADE")),
            Dialect::MySql => self.admin.batch(&format!("DROP DATABASE IF EXISTS {name}")),
            Dialect::Sqlite => unreachable!("the htap server tests run on servers"),
        };
    }
}

/// The same deterministic data gives the same answers: the 22 queries on a fresh load (before any transaction) agree
/// between PostgreSQL and MariaDB, and all but those the fresh data leaves empty return rows.
#[test]
fn the_22_answers_agree_between_postgres_and_mariadb_on_a_fresh_load() {
    let (pg, maria) = (Place::new(POSTGRES, "answers"), Place::new(MARIADB, "answers"));
    pg.load();
    maria.load();
    let (a, b) = (pg.answers(), maria.answers());
    assert_eq!((a.len(), b.len()), (QUERIES, QUERIES));
    let mut empty = Vec::new();
    for (index, (x, y)) in a.iter().zip(&b).enumerate() {
        if let Some(difference) = queries::difference(x, y) {
            panic!("Q{}: PostgreSQL and MariaDB differ: {difference}", index + 1);
        }
        // A query of one aggregate over no rows answers one row of NULLs.
        if x.is_empty() || x.iter().all(|row| row.iter().all(Option::is_none)) {
            empty.push(index + 1);
        }
    }
    // What a fresh load of one warehouse leaves empty, as TPC-C loads it: Q11 sums stock's order counts (all 0),
    // Q17 wants lines of less than their item's mean quantity (every loaded line has 5), Q20 finds no German
    // supplier among the few items whose data begins "co", Q21 wants lines delivered after their order was entered
    // (loaded ones are delivered at entry), and Q22 wants balances above the mean positive one (all are -10.00).
    // Transactions fill them in.
    assert_eq!(empty, [11, 17, 20, 21, 22], "queries with no answer on a fresh load");
    // The CH rows are the same on both.
    let count = |place: &Place, sql: &str| place.connect().query_optional(sql, &[]).unwrap().unwrap().int(0).unwrap();
    for place in [&pg, &maria] {
        let supplier = place.namespace.qualify("ch_supplier");
        assert_eq!(count(place, &format!("SELECT COUNT(*) FROM {supplier}")), ch::SUPPLIERS);
        assert_eq!(count(place, &format!("SELECT MIN(su_suppkey) FROM {supplier}")), 0);
    }
}

/// Relations of the CH tables' names that envbench did not make are refused and left alone, and a drop takes only
/// what envbench made.
#[test]
fn foreign_ch_tables_are_refused_and_drops_take_only_envbenchs() {
    let place = Place::new(POSTGRES, "foreign");
    let mut c = place.connect();
    let ns = &place.namespace;
    c.batch(&format!("CREATE TABLE {} (x INTEGER); INSERT INTO {0} VALUES (7)", ns.qualify("ch_nation"))).unwrap();
    assert_eq!(CH_TABLES.state(c.as_mut(), ns).unwrap(), CompanionState::Foreign(vec!["ch_nation".into()]));
    let error = CH_TABLES.build(c.as_mut(), ns, &AtomicBool::new(false)).unwrap_err();
    assert!(matches!(&error, OltpError::Foreign(m) if m.contains("ch_nation")), "{error:?}");
    let dropped = CH_TABLES.drop_own(c.as_mut(), ns).unwrap();
    assert!(dropped.dropped.is_empty() && dropped.left == ["ch_nation"], "{dropped:?}");
    let x = c.query_optional(&format!("SELECT x FROM {}", ns.qualify("ch_nation")), &[]).unwrap().unwrap();
    assert_eq!(x.int(0).unwrap(), 7, "their table is untouched");
    c.batch(&format!("DROP TABLE {}", ns.qualify("ch_nation"))).unwrap();
    CH_TABLES.build(c.as_mut(), ns, &AtomicBool::new(false)).unwrap();
    c.batch(&format!("CREATE TABLE {} (y INTEGER)", ns.qualify("theirs"))).unwrap();
    let dropped = CH_TABLES.drop_own(c.as_mut(), ns).unwrap();
    assert_eq!(dropped.dropped, ["ch_region", "ch_nation", "ch_supplier", ch::MARKER]);
    let left = ns.relations(c.as_mut(), &["theirs", "ch_supplier", ch::MARKER]).unwrap();
    assert_eq!(left.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(), ["theirs"]);
}

/// The marker proves nothing by its name and columns (issue #67, F1): a user's `envbench_htap_ch(version integer)`
/// beside their `ch_region`, with a row or without, or envbench's own marker whose signed row is gone (a schema-only
/// copy), makes nothing beside it envbench's, on PostgreSQL and MariaDB alike.
#[test]
fn a_marker_without_its_signed_row_makes_nothing_envbenchs() {
    for (url, tag) in [(POSTGRES, "forged_pg"), (MARIADB, "forged_my")] {
        let place = Place::new(url, tag);
        let mut c = place.connect();
        let ns = &place.namespace;
        let (marker, region) = (ns.qualify(ch::MARKER), ns.qualify("ch_region"));
        for case in ["empty", "a row", "schema-only copy"] {
            match case {
                "schema-only copy" => {
                    CH_TABLES.build(c.as_mut(), ns, &AtomicBool::new(false)).unwrap();
                    c.batch(&format!("DELETE FROM {marker}")).unwrap();
                    c.batch(&format!("DELETE FROM {region}")).unwrap();
                    c.batch(&format!("INSERT INTO {region} VALUES (99, 'mine', 'mine')")).unwrap();
                }
                _ => {
                    c.batch(&format!("CREATE TABLE {marker} (version INTEGER)")).unwrap();
                    if case == "a row" {
                        c.batch(&format!("INSERT INTO {marker} VALUES ({})", ch::CH_VERSION)).unwrap();
                    }
                    c.batch(&format!(
                        "CREATE TABLE {region} (r_regionkey INTEGER, r_name VARCHAR(55), r_comment \
                                      VARCHAR(152))"
                    ))
                    .unwrap();
                    c.batch(&format!("INSERT INTO {region} VALUES (99, 'mine', 'mine')")).unwrap();
                }
            }
            let CompanionState::Foreign(foreign) = CH_TABLES.state(c.as_mut(), ns).unwrap() else {
                panic!("{url} {case}: envbench's?")
            };
            assert!(foreign.iter().any(|f| f == "envbench_htap_ch (no signature of envbench's)"), "{foreign:?}");
            assert!(foreign.iter().any(|f| f == "ch_region"), "{url} {case}: {foreign:?}");
            let error = CH_TABLES.build(c.as_mut(), ns, &AtomicBool::new(false)).unwrap_err();
            assert!(matches!(&error, OltpError::Foreign(_)), "{url} {case}: {error:?}");
            let dropped = CH_TABLES.drop_own(c.as_mut(), ns).unwrap();
            assert!(dropped.dropped.is_empty(), "{url} {case}: {dropped:?}");
            let kept = c.query_optional(&format!("SELECT r_name FROM {region} WHERE r_regionkey = 99"), &[]).unwrap();
            assert_eq!(kept.unwrap().text(0).unwrap(), "mine", "{url} {case}: their row stays");
            for table in ["ch_supplier", "ch_nation", "ch_region", ch::MARKER] {
                c.batch(&format!("DROP TABLE IF EXISTS {}", ns.qualify(table))).unwrap();
            }
        }
    }
}

fn settings(place: &Place, users: u32, streams: u32, duration: Duration, timeout: Duration) -> HtapStepSettings<'_> {
    HtapStepSettings {
        url: &place.url,
        namespace: &place.namespace,
        oltp: StepSettings {
            mix: envbench_oltp::Mix::TPCC,
            profile: Profile::Tpcc,
            namespace: place.namespace.clone(),
            users,
            first_user: 0,
            scale: 1,
            ramp: Duration::from_millis(500),
            duration,
            keying_thinking: false,
            all_warehouses: false,
            transactions_per_user: None,
            mode: Mode::Client,
            clients_per_user: 1,
            load_constants: NuRandConstants::load(load::LOAD_SEED),
            seed: 11,
            open: None,
            max_tries: envbench_oltp::users::DEFAULT_MAX_TRIES,
            isolation: None,
            skew: None,
        },
        streams,
        first_stream: 0,
        query_timeout: timeout,
    }
}

/// Transactions and analytic streams share a step on each server; the analytics alone make their own baseline;
/// NOPM is counted from the database; the checks pass after the transactions ran under the analytics; and a query
/// past its timeout is cancelled by the server and counted, never left running.
#[test]
fn a_step_runs_transactions_and_analytics_together_and_cancels_what_runs_too_long() {
    for server in [POSTGRES, MARIADB] {
        let place = Place::new(server, "step");
        place.load();
        let never = AtomicBool::new(false);
        let mixed = streams::run_step(
            // Long enough for a query to start and end in the window on a busy host (one MariaDB query can take 5 s).
            &settings(&place, 2, 2, Duration::from_secs(6), Duration::from_secs(600)),
            "U=2 A=2",
            &NoSteps,
            &never,
            &|_| {},
        )
        .unwrap()
        .unwrap();
        let oltp = mixed.oltp.expect("transactional figures").figures;
        assert!(oltp.nopm.unwrap() > 0.0 && oltp.failures == 0, "{server}: {oltp:?}");
        // MariaDB's queries take seconds at one warehouse, and CI's other tests load the same server: a window may
        // close before any finishes, and then the stream's query still running is counted as unfinished.
        let finished =
            |a: &AnalyticFigures| if server == POSTGRES { a.completed > 0 } else { a.completed + a.unfinished > 0 };
        let analytics = &mixed.analytics.figures();
        assert!(finished(analytics) && analytics.failures == 0, "{server}: {analytics:?}");
        // One window with the transactions: the 6 s asked for, and what reading the counters around it added (more on
        // a busy host).
        let seconds = analytics.measured_seconds;
        assert!((5.5..16.0).contains(&seconds), "{server}: one window with the transactions: {seconds} s");
        let alone = streams::run_step(
            &settings(&place, 0, 1, Duration::from_secs(6), Duration::from_secs(600)),
            "U=0 A=1",
            &NoSteps,
            &never,
            &|_| {},
        )
        .unwrap()
        .unwrap();
        assert!(alone.oltp.is_none(), "{server}: no transactional users, no transactional figures");
        let alone = alone.analytics.figures();
        assert!(finished(&alone), "{server}: {alone:?}");
        let mut c = place.connect();
        for check in consistency::run(c.as_mut(), &place.namespace, Profile::Tpcc).unwrap() {
            assert!(check.passed, "{server}: {}: {}", check.name, check.detail);
        }

        // Every query times out at 1 ms: each is counted, and none is left running on the server.
        let cut = streams::run_step(
            &settings(&place, 0, 2, Duration::from_secs(2), Duration::from_millis(1)),
            "U=0 A=2",
            &NoSteps,
            &never,
            &|_| {},
        )
        .unwrap()
        .unwrap();
        let cut = cut.analytics.figures();
        assert!(cut.timeouts > 0 && cut.failures == 0, "{server}: {cut:?}");
        let running = match place.namespace.dialect() {
            Dialect::Postgres => format!(
                "SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = '{}' AND state = 'active'",
                streams::ANALYTICS_APPLICATION
            ),
            Dialect::Sqlite => unreachable!("the htap server tests run on servers"),
            Dialect::MySql => format!(
                "SELECT COUNT(*) FROM information_schema.processlist WHERE db = '{}' AND command = 'Query' \
                 AND info LIKE 'SELECT%tpcc_%' AND id <> CONNECTION_ID()",
                place.namespace.name()
            ),
        };
        // A cancelled query's session may take a moment to say so on a busy server.
        let deadline = std::time::Instant::now() + Duration::from_secs(2);
        let left = loop {
            let left = c.query_optional(&running, &[]).unwrap().unwrap().int(0).unwrap();
            if left == 0 || std::time::Instant::now() >= deadline {
                break left;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        assert_eq!(left, 0, "{server}: analytic queries left running");
    }
}
