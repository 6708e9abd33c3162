//! What only the PostgreSQL backend does, against a real server (`ENVBENCH_TEST_POSTGRES`, default
//! `postgres://postgres@127.0.0.1:5432/test`; these tests fail rather than skip when it is absent, because CI guarantees
//! it): schemas holding foreign tables, concurrent creators, an unreachable server; and pushing runs between stores.
//! Each test works in a schema of its own. The contract both backends keep is in `contract.rs`.

use crate::common;

use common::{Backend, admin, fingerprint, record, request, series};
use envbench_core::model::RunStatus;
use envbench_store::{
    ImportOutcome, ImportRuns, PostgresStore, ReadRuns, RecordRuns, ResultStore, RunFilter, SqliteStore, StoreError,
    StoreLocation, open_store, push_runs,
};
use serde_json::json;
use std::path::PathBuf;

fn url(backend: &Backend) -> envbench_sql::DatabaseUrl {
    match backend.location() {
        StoreLocation::Postgres(url) => url,
        StoreLocation::Sqlite(_) => unreachable!("a PostgreSQL backend"),
    }
}

fn schema_name(backend: &Backend) -> &str {
    match backend {
        Backend::Postgres { schema } => schema,
        Backend::Sqlite { .. } => unreachable!("a PostgreSQL backend"),
    }
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
fn push_twice_adds_nothing_the_second_time() {
    let schema = Backend::postgres();
    let source_path = scratch("push");
    let mut source = SqliteStore::open(&source_path, true).unwrap();
    let first = complete_run(&mut source, "physical");
    let second = complete_run(&mut source, "virtual");
    let running = source.begin_run(&request("still going"), &fingerprint("db01")).unwrap();
    let mut team = open_store(&schema.location(), true).unwrap();

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
    let samples: i64 =
        counts.query_one(&format!("SELECT count(*) FROM {}.samples", schema_name(&schema)), &[]).unwrap().get(0);
    assert_eq!(samples, 2 * 4);
    let fingerprints: i64 =
        counts.query_one(&format!("SELECT count(*) FROM {}.fingerprints", schema_name(&schema)), &[]).unwrap().get(0);
    assert_eq!(fingerprints, 1);

    // And back from the team store into a new SQLite file, just as idempotent.
    let mut copy = SqliteStore::open(&scratch("push-back"), true).unwrap();
    let back = push_runs(team.as_ref(), &mut copy, std::slice::from_ref(&first)).unwrap();
    assert_eq!(back.copied, vec![first.clone()]);
    assert_eq!(copy.load_run(&first).unwrap(), source.load_run(&first).unwrap());
    assert_eq!(copy.import_run(&source.load_run(&first).unwrap()).unwrap(), ImportOutcome::AlreadyPresent);
}

/// Issue #71: a push goes in batches of runs, each part a table at a time with ids reserved ahead; every run arrives
/// whole, its samples under its own results, across batches, with a run named twice copied once.
#[test]
fn a_push_of_many_runs_goes_in_batches_and_every_run_arrives_whole() {
    let schema = Backend::postgres();
    let mut source = SqliteStore::open(&scratch("push-many"), true).unwrap();
    let mut runs: Vec<String> = (0..230).map(|i| complete_run(&mut source, &format!("run{i}"))).collect();
    runs.push(runs[7].clone());
    let mut team = open_store(&schema.location(), true).unwrap();
    // A run already there before the push, in the middle of a batch.
    team.import_run(&source.load_run(&runs[150]).unwrap()).unwrap();
    let report = push_runs(&source, team.as_mut(), &runs).unwrap();
    assert_eq!(report.copied.len(), 229);
    assert_eq!(report.already_present, vec![runs[150].clone(), runs[7].clone()]);
    for uuid in &runs {
        assert_eq!(team.load_run(uuid).unwrap(), source.load_run(uuid).unwrap());
    }
    // A push of many runs leaves the planner statistics of the store's tables, and indexes for a store of many runs.
    let mut client = admin();
    let analyzed: i64 = client
        .query_one(
            "SELECT count(*) FROM pg_stat_user_tables WHERE schemaname = $1 AND last_analyze IS NOT NULL \
             AND relname IN ('runs', 'results', 'samples', 'run_tags')",
            &[&schema_name(&schema)],
        )
        .unwrap()
        .get(0);
    assert_eq!(analyzed, 4, "the tables a push filled are analyzed");
    let indexes: i64 = client
        .query_one(
            "SELECT count(*) FROM pg_indexes WHERE schemaname = $1 AND indexname IN ('run_tags_by_value', 'runs_by_fingerprint')",
            &[&schema_name(&schema)],
        )
        .unwrap()
        .get(0);
    assert_eq!(indexes, 2);
    // And into SQLite, where ids are reserved past the largest under the write lock.
    let mut copy = SqliteStore::open(&scratch("push-many-back"), true).unwrap();
    complete_run(&mut copy, "already here");
    let back = push_runs(team.as_ref(), &mut copy, &runs[..120]).unwrap();
    assert_eq!(back.copied.len(), 120);
    for uuid in &runs[..120] {
        assert_eq!(copy.load_run(uuid).unwrap(), source.load_run(uuid).unwrap());
    }
}

#[test]
fn foreign_tables_are_refused_and_left_alone() {
    let schema = Backend::postgres();
    schema.execute("CREATE TABLE runs (id INTEGER, what TEXT); INSERT INTO runs VALUES (1, 'theirs')").unwrap();
    for create in [true, false] {
        let error = PostgresStore::open(&url(&schema), create).err().expect("a foreign schema must be refused");
        assert!(matches!(&error, StoreError::ForeignTables { tables, .. } if tables == "runs"), "{error}");
        assert!(error.to_string().contains("search_path"), "{error}");
    }
    let mut client = admin();
    let tables: i64 = client
        .query_one("SELECT count(*) FROM information_schema.tables WHERE table_schema = $1", &[&schema_name(&schema)])
        .unwrap()
        .get(0);
    assert_eq!(tables, 1, "nothing may be created next to foreign tables");
}

#[test]
fn a_marker_of_another_application_is_refused() {
    let schema = Backend::postgres();
    schema.execute("CREATE TABLE envbench_store (application TEXT, version BIGINT); INSERT INTO envbench_store VALUES ('other', 1)").unwrap();
    let error = PostgresStore::open(&url(&schema), true).err().expect("must be refused");
    assert!(matches!(error, StoreError::ForeignTables { .. }), "{error}");
}

#[test]
fn newer_schema_is_refused() {
    let schema = Backend::postgres();
    drop(PostgresStore::open(&url(&schema), true).unwrap());
    schema.execute("UPDATE envbench_store SET version = 99").unwrap();
    let error = PostgresStore::open(&url(&schema), true).err().expect("a newer store must be refused");
    assert!(
        matches!(error, StoreError::NewerSchema { found: 99, known: envbench_store::LATEST_VERSION, .. }),
        "{error}"
    );
}

#[test]
fn missing_store_is_not_created_by_readers() {
    let schema = Backend::postgres();
    let error = PostgresStore::open(&url(&schema), false).err().expect("no store yet");
    assert!(matches!(error, StoreError::Missing(_)), "{error}");
    let mut client = admin();
    let tables: i64 = client
        .query_one("SELECT count(*) FROM information_schema.tables WHERE table_schema = $1", &[&schema_name(&schema)])
        .unwrap()
        .get(0);
    assert_eq!(tables, 0);
}

#[test]
fn unreachable_server_says_what_to_check() {
    let error = PostgresStore::open(
        &envbench_sql::DatabaseUrl::parse("postgres://nobody:secret@127.0.0.1:1/none?connect_timeout=2").unwrap(),
        true,
    )
    .err()
    .expect("nothing listens on port 1");
    let message = error.to_string();
    assert!(matches!(error, StoreError::Unreachable { .. }), "{message}");
    assert!(!message.contains("secret"), "the password must not be shown: {message}");
}

#[test]
fn concurrent_creators_migrate_once() {
    let schema = Backend::postgres();
    let url = url(&schema);
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
        client.query_one(&format!("SELECT count(*) FROM {}.envbench_store", schema_name(&schema)), &[]).unwrap().get(0);
    assert_eq!(markers, 1);
}
