//! A real MariaDB capture: the shared server's general and slow query logs turned on into files of this test's own
//! for two sessions, read back from each and replayed read-only into a second database loaded the same way.

use crate::common::{calls, inspected, scratch};
use envbench_replay::{EventKind, ReplayOptions, Speed, open, replay};
use envbench_sql::{Connection, DatabaseUrl, Value};
use std::collections::{BTreeMap, HashMap};

const ADMIN: &str = "mysql://root@127.0.0.1:3306/test";

/// The server's log settings as they were, put back when dropped, so a failing test leaves no log on.
struct LogsOn {
    admin: Box<dyn Connection>,
    before: String,
}

impl LogsOn {
    fn start(general: &std::path::Path, slow: &std::path::Path) -> LogsOn {
        let mut admin = DatabaseUrl::parse(ADMIN).unwrap().connect("replay-test").unwrap();
        let row = admin
            .query(
                "SELECT @@general_log, @@general_log_file, @@slow_query_log, @@slow_query_log_file, @@log_output",
                &[],
            )
            .unwrap()
            .remove(0);
        let text = |i: usize| row.text(i).unwrap();
        let before = format!(
            "SET GLOBAL general_log = {}; SET GLOBAL general_log_file = '{}'; SET GLOBAL slow_query_log = {}; \
             SET GLOBAL slow_query_log_file = '{}'; SET GLOBAL log_output = '{}'",
            text(0),
            text(1),
            text(2),
            text(3),
            text(4)
        );
        admin
            .batch(&format!(
                "SET GLOBAL log_output = 'FILE'; SET GLOBAL general_log_file = '{}'; SET GLOBAL slow_query_log_file = \
                 '{}'; SET GLOBAL general_log = 1; SET GLOBAL slow_query_log = 1",
                general.display(),
                slow.display()
            ))
            .unwrap();
        LogsOn { admin, before }
    }
}

impl Drop for LogsOn {
    fn drop(&mut self) {
        for statement in self.before.split("; ") {
            let _ = self.admin.batch(statement);
        }
    }
}

/// Each fingerprint's statements in the capture's sessions that worked in `database`, counted apart from any replay:
/// a session works in the database its connection or its last `Init DB` or `use` named.
fn captured_in(log: &std::path::Path, database: &str) -> BTreeMap<String, u64> {
    let mut reader = open(log).unwrap();
    let mut in_database: HashMap<String, Option<String>> = HashMap::new();
    let mut counts = BTreeMap::new();
    while let Some(event) = reader.next_event().unwrap() {
        match event.kind {
            EventKind::Connect { database, .. } => {
                in_database.insert(event.session, database);
            }
            EventKind::UseDatabase { database } => {
                in_database.insert(event.session, Some(database));
            }
            EventKind::Statement(statement) => {
                let current = in_database.entry(event.session).or_default();
                if statement.database.is_some() {
                    current.clone_from(&statement.database);
                }
                if current.as_deref() == Some(database) {
                    *counts.entry(envbench_replay::fingerprint(&statement.sql)).or_default() += 1;
                }
            }
            _ => {}
        }
    }
    counts
}

#[test]
fn mariadb_general_and_slow_logs_hold_the_same_statements() {
    let dir = scratch("mariadb");
    // The server writes the logs as its own user.
    std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let (general, slow) = (dir.join("general.log"), dir.join("slow.log"));
    let database = format!("replay_capture_{}", std::process::id());
    let mut admin = DatabaseUrl::parse(ADMIN).unwrap().connect("replay-test").unwrap();
    let target = format!("{database}_target");
    for name in [&database, &target] {
        admin
            .batch(&format!(
                "DROP DATABASE IF EXISTS {name}; CREATE DATABASE {name}; CREATE TABLE {name}.accounts \
                 (id INT PRIMARY KEY, balance INT NOT NULL); INSERT INTO {name}.accounts VALUES (1, 0), (2, 0)"
            ))
            .unwrap();
    }
    {
        let _logs = LogsOn::start(&general, &slow);
        assert!(general.exists() && slow.exists(), "the server could not open logs in {}", dir.display());
        let url = DatabaseUrl::parse(&format!("mysql://root@127.0.0.1:3306/{database}")).unwrap();
        let sessions: Vec<_> = (0..2)
            .map(|session| {
                let url = url.clone();
                std::thread::spawn(move || {
                    let mut c = url.connect("replay-test").unwrap();
                    c.batch("SET SESSION long_query_time = 0").unwrap();
                    for i in 0..25 {
                        c.batch(&format!("UPDATE accounts SET balance = balance + {i} WHERE id = {}", session + 1))
                            .unwrap();
                        c.query("SELECT balance FROM accounts WHERE id = ?", &[Value::Int(session + 1)]).unwrap();
                    }
                    c.batch("SELECT id,\n  balance\nFROM accounts -- two lines more\nWHERE id = 2").unwrap();
                })
            })
            .collect();
        for session in sessions {
            session.join().unwrap();
        }
    }
    admin.batch(&format!("DROP DATABASE {database}")).unwrap();
    let balances = |admin: &mut Box<dyn Connection>| {
        let rows = admin.query(&format!("SELECT id, balance FROM {target}.accounts ORDER BY id"), &[]).unwrap();
        rows.iter().map(|r| (r.int(0).unwrap(), r.int(1).unwrap())).collect::<Vec<_>>()
    };
    assert_eq!(balances(&mut admin), [(1, 0), (2, 0)]);
    let url = DatabaseUrl::parse(&format!("mysql://root@127.0.0.1:3306/{target}")).unwrap();
    let connect = |_: usize| url.connect("envbench-replay");
    for log in [&general, &slow] {
        // Only our sessions: the shared server's log holds the other tests' too.
        let options = ReplayOptions { speed: Speed::Max, routes: vec![Some(database.clone())], allow_writes: false };
        let outcome = replay(open(log).unwrap().as_mut(), &connect, &options, &Default::default()).unwrap();
        let shown = log.display();
        // Every fingerprint of our database as often as captured: the reads sent, the writes counted.
        let replayed: BTreeMap<String, u64> =
            outcome.fingerprints.iter().map(|f| (f.fingerprint.clone(), f.calls + f.skipped)).collect();
        assert_eq!(replayed, captured_in(log, &database), "{shown}");
        let of = |fingerprint: &str| outcome.fingerprints.iter().find(|f| f.fingerprint == fingerprint).unwrap();
        let update = of("update accounts set balance = balance + $1 where id = $2");
        assert_eq!((update.calls, update.skipped), (0, 50), "{shown}");
        let select = of("select balance from accounts where id = $1");
        assert_eq!((select.calls, select.skipped, select.errors.len()), (50, 0, 0), "{shown}: {select:?}");
        assert_eq!(outcome.failed, 0, "{shown}: {outcome:?}");
        // The driver's every connection to 127.0.0.1 reconnects through the server's socket, so each client is two
        // sessions in the general log (the first quits at once); the slow log has the two that sent statements.
        let sessions = if *log == general {
            let text = std::fs::read_to_string(&general).unwrap();
            text.lines().filter(|l| l.contains(" Connect\t") && l.contains(&format!(" on {database} "))).count()
        } else {
            2
        };
        assert_eq!(outcome.sessions, sessions as u64, "{shown}");
        assert!(outcome.other_databases > 0 || *log == slow, "{shown}: the admin session's statements");
    }
    assert_eq!(balances(&mut admin), [(1, 0), (2, 0)], "a read-only replay changed a row");
    admin.batch(&format!("DROP DATABASE {target}")).unwrap();

    for log in [&general, &slow] {
        let shown = log.display();
        assert_eq!(calls(log, "update accounts set balance = balance + $1 where id = $2"), 50, "{shown}");
        assert_eq!(calls(log, "select balance from accounts where id = $1"), 50, "{shown}");
        assert_eq!(calls(log, "select id, balance from accounts where id = $1"), 2, "{shown}");
        let mut reader = open(log).unwrap();
        let mut multi_line = 0;
        while let Some(event) = reader.next_event().unwrap() {
            if let EventKind::Statement(s) = &event.kind
                && s.sql.starts_with("SELECT id,")
            {
                assert_eq!(s.sql, "SELECT id,\n  balance\nFROM accounts -- two lines more\nWHERE id = 2", "{shown}");
                multi_line += 1;
            }
        }
        assert_eq!(multi_line, 2, "{shown}");
    }
    let general_summary = inspected(&general);
    assert_eq!(general_summary.format, envbench_replay::LogFormat::MySqlGeneral);
    assert!(general_summary.databases.get(&database).copied().unwrap_or(0) >= 102, "{general_summary:?}");
    assert!(general_summary.sessions_ended >= 2, "{general_summary:?}");
    assert!(general_summary.extended >= 50, "the prepared SELECTs are executes: {general_summary:?}");
    let slow_summary = inspected(&slow);
    assert_eq!(slow_summary.format, envbench_replay::LogFormat::MySqlSlow);
    assert_eq!(slow_summary.with_durations, slow_summary.statements, "the slow log times every statement");
    assert!(slow_summary.databases.get(&database).copied().unwrap_or(0) >= 102, "{slow_summary:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}
