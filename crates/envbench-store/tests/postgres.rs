//! The PostgreSQL store against a real server, and pushing runs between stores.
//!
//! The server is `ENVBENCH_TEST_POSTGRES` (default `postgres://postgres@127.0.0.1:5432/test`). These tests do not skip
//! when it is absent: they fail, because CI guarantees the server. Each test works in a schema of its own, created
//! here and dropped at the end, so tests run in parallel without meeting.

mod common;

use common::{fingerprint, record, request, series};
use envbench_core::model::RunStatus;
use envbench_store::{
    ImportOutcome, PostgresStore, ResultStore, RunFilter, SqliteStore, StoreError, StoreLocation, open_store, push_runs,
};
use serde_json::json;
use std::path::PathBuf;

fn server_url() -> String {
    std::env::var("ENVBENCH_TEST_POSTGRES").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into())
}

/// A schema of one test's own, dropped (with everything in it) when the test ends, passed or failed.
struct Schema {
    name: String,
}

impl Schema {
    fn new() -> Schema {
        let name = format!("envbench_test_{}", uuid::Uuid::new_v4().simple());
        admin().batch_execute(&format!("CREATE SCHEMA {name}")).unwrap();
        Schema { name }
    }

    /// The store URL, with `search_path` set to this schema.
    fn url(&self) -> String {
        format!("{}?options=-c%20search_path%3D{}", server_url(), self.name)
    }

    fn execute(&self, sql: &str) -> Result<(), postgres::Error> {
        let mut client = admin();
        client.batch_execute(&format!("SET search_path TO {}", self.name))?;
        client.batch_execute(sql)
    }
}

impl Drop for Schema {
    fn drop(&mut self) {
        let _ = admin().batch_execute(&format!("DROP SCHEMA {} CASCADE", self.name));
    }
}

fn admin() -> postgres::Client {
    postgres::Client::connect(&server_url(), postgres::NoTls).unwrap_or_else(|e| {
        panic!("the PostgreSQL tests need a server at {} ({e}); set ENVBENCH_TEST_POSTGRES", server_url())
    })
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("postgres-tests").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("results.db")
}

/// A complete run with results, series, attachment and a tag, in any store.
fn complete_run(store: &mut dyn ResultStore, label: &str) -> String {
    let uuid = store.begin_run(&request(label), &fingerprint("db01")).unwrap();
    let results = vec![
        record("RND4K Q32T1 read", vec![101000.0, 99000.5, 100500.25]),
        record("RND4K Q1T1 read", vec![9000.0]),
        record("empty", vec![]),
    ];
    store.add_results(&uuid, &results).unwrap();
    store.add_series(&uuid, &series()).unwrap();
    store.add_attachment(&uuid, "knee", &json!({"jobs": 16, "note": "<b>&"})).unwrap();
    store.finish_run(&uuid, RunStatus::Complete, None).unwrap();
    uuid
}

#[test]
fn round_trip_keeps_everything() {
    let schema = Schema::new();
    common::round_trip_keeps_everything(&StoreLocation::parse(&schema.url()));
}

#[test]
fn listing_and_finding_runs() {
    let schema = Schema::new();
    let mut store = PostgresStore::open(&schema.url(), true).unwrap();
    let a = store.begin_run(&request("physical"), &fingerprint("db01")).unwrap();
    let mut virtual_request = request("virtual");
    virtual_request.tags = [("ht".to_string(), "off".to_string())].into();
    let b = store.begin_run(&virtual_request, &fingerprint("vm01")).unwrap();
    let all = store.list_runs(&RunFilter::default()).unwrap();
    assert_eq!(all.iter().map(|r| r.uuid.as_str()).collect::<Vec<_>>(), vec![b.as_str(), a.as_str()]);
    let by_label = store.list_runs(&RunFilter { label: Some("physical".into()), ..Default::default() }).unwrap();
    assert_eq!(by_label.iter().map(|r| &r.uuid).collect::<Vec<_>>(), vec![&a]);
    let by_tag = store
        .list_runs(&RunFilter { tags: [("ht".into(), "off".into())].into(), limit: Some(5), ..Default::default() })
        .unwrap();
    assert_eq!(by_tag.iter().map(|r| &r.uuid).collect::<Vec<_>>(), vec![&b]);
    let by_host = store.list_runs(&RunFilter { host: Some("db01".into()), ..Default::default() }).unwrap();
    assert_eq!(by_host.len(), 1);
    assert_eq!(store.list_runs(&RunFilter { limit: Some(1), ..Default::default() }).unwrap().len(), 1);
    assert!(matches!(store.find_run("zz"), Err(StoreError::NoSuchRun(_))));
    assert!(matches!(store.find_run(""), Err(StoreError::NoSuchRun(_))));
    assert!(matches!(store.find_run("%"), Err(StoreError::NoSuchRun(_))));
    assert!(matches!(store.load_run("no-such-run"), Err(StoreError::NoSuchRun(_))));
}

#[test]
fn push_twice_adds_nothing_the_second_time() {
    let schema = Schema::new();
    let source_path = scratch("push");
    let mut source = SqliteStore::open(&source_path, true).unwrap();
    let first = complete_run(&mut source, "physical");
    let second = complete_run(&mut source, "virtual");
    let running = source.begin_run(&request("still going"), &fingerprint("db01")).unwrap();
    let mut team = open_store(&StoreLocation::parse(&schema.url()), true).unwrap();

    let runs = vec![first[..8].to_string(), second.clone(), running.clone()];
    let report = push_runs(&source, team.as_mut(), &runs).unwrap();
    assert_eq!(report.copied, vec![first.clone(), second.clone()]);
    assert!(report.already_present.is_empty());
    assert_eq!(report.still_running, vec![running.clone()]);

    let again = push_runs(&source, team.as_mut(), &runs).unwrap();
    assert!(again.copied.is_empty());
    assert_eq!(again.already_present, vec![first.clone(), second.clone()]);
    assert_eq!(team.list_runs(&RunFilter::default()).unwrap().len(), 2);

    // What arrived is exactly what was sent: uuid, timestamps, status, tool version, samples, series, attachments.
    for uuid in [&first, &second] {
        assert_eq!(team.load_run(uuid).unwrap(), source.load_run(uuid).unwrap());
    }
    let mut counts = admin();
    let samples: i64 = counts.query_one(&format!("SELECT count(*) FROM {}.samples", schema.name), &[]).unwrap().get(0);
    assert_eq!(samples, 2 * 4);
    let fingerprints: i64 =
        counts.query_one(&format!("SELECT count(*) FROM {}.fingerprints", schema.name), &[]).unwrap().get(0);
    assert_eq!(fingerprints, 1);

    // And back from the team store into a new SQLite file, just as idempotent.
    let mut copy = SqliteStore::open(&scratch("push-back"), true).unwrap();
    let back = push_runs(team.as_ref(), &mut copy, std::slice::from_ref(&first)).unwrap();
    assert_eq!(back.copied, vec![first.clone()]);
    assert_eq!(copy.load_run(&first).unwrap(), source.load_run(&first).unwrap());
    assert_eq!(copy.import_run(&source.load_run(&first).unwrap()).unwrap(), ImportOutcome::AlreadyPresent);
}

#[test]
fn foreign_tables_are_refused_and_left_alone() {
    let schema = Schema::new();
    schema.execute("CREATE TABLE runs (id INTEGER, what TEXT); INSERT INTO runs VALUES (1, 'theirs')").unwrap();
    for create in [true, false] {
        let error = PostgresStore::open(&schema.url(), create).err().expect("a foreign schema must be refused");
        assert!(matches!(&error, StoreError::ForeignTables { tables, .. } if tables == "runs"), "{error}");
        assert!(error.to_string().contains("search_path"), "{error}");
    }
    let mut client = admin();
    let tables: i64 = client
        .query_one("SELECT count(*) FROM information_schema.tables WHERE table_schema = $1", &[&schema.name])
        .unwrap()
        .get(0);
    assert_eq!(tables, 1, "nothing may be created next to foreign tables");
}

#[test]
fn a_marker_of_another_application_is_refused() {
    let schema = Schema::new();
    schema.execute("CREATE TABLE envbench_store (application TEXT, version BIGINT); INSERT INTO envbench_store VALUES ('other', 1)").unwrap();
    let error = PostgresStore::open(&schema.url(), true).err().expect("must be refused");
    assert!(matches!(error, StoreError::ForeignTables { .. }), "{error}");
}

#[test]
fn newer_schema_is_refused() {
    let schema = Schema::new();
    drop(PostgresStore::open(&schema.url(), true).unwrap());
    schema.execute("UPDATE envbench_store SET version = 99").unwrap();
    let error = PostgresStore::open(&schema.url(), true).err().expect("a newer store must be refused");
    assert!(matches!(error, StoreError::NewerSchema { found: 99, known: 1, .. }), "{error}");
}

#[test]
fn missing_store_is_not_created_by_readers() {
    let schema = Schema::new();
    let error = PostgresStore::open(&schema.url(), false).err().expect("no store yet");
    assert!(matches!(error, StoreError::Missing(_)), "{error}");
    let mut client = admin();
    let tables: i64 = client
        .query_one("SELECT count(*) FROM information_schema.tables WHERE table_schema = $1", &[&schema.name])
        .unwrap()
        .get(0);
    assert_eq!(tables, 0);
}

#[test]
fn unreachable_server_says_what_to_check() {
    let error = PostgresStore::open("postgres://nobody:secret@127.0.0.1:1/none?connect_timeout=2", true)
        .err()
        .expect("nothing listens on port 1");
    let message = error.to_string();
    assert!(matches!(error, StoreError::Unreachable { .. }), "{message}");
    assert!(!message.contains("secret"), "the password must not be shown: {message}");
}

#[test]
fn results_are_append_only() {
    let schema = Schema::new();
    let mut store = PostgresStore::open(&schema.url(), true).unwrap();
    let uuid = store.begin_run(&request("x"), &fingerprint("h")).unwrap();
    store.add_results(&uuid, &[record("t", vec![1.0])]).unwrap();
    store.finish_run(&uuid, RunStatus::Interrupted, Some("interrupted by Ctrl-C")).unwrap();
    assert!(matches!(store.finish_run(&uuid, RunStatus::Complete, None), Err(StoreError::RunAlreadyEnded(_))));
    assert!(matches!(store.finish_run("nope", RunStatus::Complete, None), Err(StoreError::NoSuchRun(_))));
    for statement in [
        "UPDATE samples SET value = 2",
        "DELETE FROM samples",
        "TRUNCATE samples CASCADE",
        "UPDATE results SET metric = 'x'",
        "DELETE FROM results",
        "DELETE FROM runs",
        "UPDATE runs SET status = 'complete'",
        "UPDATE fingerprints SET hostname = 'x'",
        "DELETE FROM run_tags",
    ] {
        let error = schema.execute(statement).err().unwrap_or_else(|| panic!("{statement} must be refused"));
        assert!(format!("{error:?}").contains("append-only"), "{statement}: {error:?}");
    }
    let run = store.load_run(&uuid).unwrap();
    assert_eq!(run.summary.status, RunStatus::Interrupted);
    assert_eq!(run.summary.status_reason.as_deref(), Some("interrupted by Ctrl-C"));
    assert_eq!(run.results[0].record.samples, vec![1.0]);
}

#[test]
fn concurrent_creators_migrate_once() {
    let schema = Schema::new();
    let url = schema.url();
    let creators: Vec<_> = (0..4)
        .map(|i| {
            let url = url.clone();
            std::thread::spawn(move || {
                let mut store = PostgresStore::open(&url, true).unwrap();
                let uuid = store.begin_run(&request(&format!("c{i}")), &fingerprint("h")).unwrap();
                store.finish_run(&uuid, RunStatus::Complete, None).unwrap();
            })
        })
        .collect();
    for creator in creators {
        creator.join().unwrap();
    }
    let store = PostgresStore::open(&url, false).unwrap();
    assert_eq!(store.list_runs(&RunFilter::default()).unwrap().len(), 4);
    let mut client = admin();
    let markers: i64 =
        client.query_one(&format!("SELECT count(*) FROM {}.envbench_store", schema.name), &[]).unwrap().get(0);
    assert_eq!(markers, 1);
}
