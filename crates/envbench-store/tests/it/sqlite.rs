//! What only the SQLite backend does, on real files: creating and migrating a file, refusing foreign files, locks,
//! concurrent writers. The contract both backends keep is in `contract.rs`.

use crate::common;

use common::{fingerprint, record, request};
use envbench_core::model::RunStatus;
use envbench_store::{ReadRuns, RecordRuns, RunFilter, SqliteStore, StoreError};
use std::path::PathBuf;
use std::time::Duration;

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("store-tests").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("results.db")
}

#[test]
fn empty_file_is_migrated_to_the_latest_schema() {
    let path = scratch("empty");
    std::fs::write(&path, b"").unwrap();
    let mut store = SqliteStore::open(&path, true).unwrap();
    let uuid = store.begin_run(&request("x"), &fingerprint("h")).unwrap();
    store.finish_run(&uuid, RunStatus::Complete, None).unwrap();
    let connection = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = connection.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    let id: i64 = connection.query_row("PRAGMA application_id", [], |r| r.get(0)).unwrap();
    assert_eq!(version, envbench_store::LATEST_VERSION);
    assert_eq!(id, 0x456e_7642);
}

/// A store made before its indexes for many runs gets them when it is next opened where it can be written; its schema
/// version stays, so older envbench versions still read it.
#[test]
fn a_store_without_its_indexes_gets_them_when_next_opened() {
    let path = scratch("indexes");
    let mut store = SqliteStore::open(&path, true).unwrap();
    let uuid = store.begin_run(&request("x"), &fingerprint("h")).unwrap();
    store.finish_run(&uuid, RunStatus::Complete, None).unwrap();
    drop(store);
    let indexes = |connection: &rusqlite::Connection| -> i64 {
        connection
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'index' \
                 AND name IN ('run_tags_by_value', 'runs_by_fingerprint')",
                [],
                |r| r.get(0),
            )
            .unwrap()
    };
    let connection = rusqlite::Connection::open(&path).unwrap();
    assert_eq!(indexes(&connection), 2, "a new store has them");
    connection.execute_batch("DROP INDEX run_tags_by_value; DROP INDEX runs_by_fingerprint").unwrap();
    let store = SqliteStore::open(&path, false).unwrap();
    assert_eq!(store.list_runs(&Default::default()).unwrap().len(), 1);
    assert_eq!(indexes(&connection), 2, "an older store gets them");
    let version: i64 = connection.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!(version, envbench_store::LATEST_VERSION);
}

#[test]
fn missing_store_is_not_created_by_readers() {
    let path = scratch("missing");
    assert!(matches!(SqliteStore::open(&path, false), Err(StoreError::Missing(_))));
    assert!(!path.exists());
}

#[test]
fn foreign_files_are_refused_and_left_alone() {
    let text_path = scratch("foreign-text");
    let text = b"id,name\n1,not a database at all, just some CSV the user cares about\n".repeat(100);
    std::fs::write(&text_path, &text).unwrap();
    let error = SqliteStore::open(&text_path, true).err().unwrap();
    assert!(matches!(error, StoreError::NotAStore(_)), "{error}");
    assert!(error.to_string().contains("not an envbench results store"));
    assert_eq!(std::fs::read(&text_path).unwrap(), text);

    let sqlite_path = scratch("foreign-sqlite");
    {
        let other = rusqlite::Connection::open(&sqlite_path).unwrap();
        other
            .execute_batch(
                "CREATE TABLE invoices (id INTEGER PRIMARY KEY, amount REAL); INSERT INTO invoices VALUES (1, 9.5);",
            )
            .unwrap();
    }
    let before = std::fs::read(&sqlite_path).unwrap();
    assert!(matches!(SqliteStore::open(&sqlite_path, true), Err(StoreError::NotAStore(_))));
    assert_eq!(std::fs::read(&sqlite_path).unwrap(), before);
}

/// A store made before digests (schema 5) gets them when it is opened: migration 6 digests the results it holds.
#[test]
fn a_store_from_before_digests_digests_its_results() {
    let path = scratch("digests");
    let mut store = SqliteStore::open(&path, true).unwrap();
    let uuid = store.begin_run(&request("old"), &fingerprint("h")).unwrap();
    let samples: Vec<f64> = (0..2_001).map(f64::from).collect();
    store.add_results(&uuid, &[record("many", samples.clone())]).unwrap();
    store.finish_run(&uuid, RunStatus::Complete, None).unwrap();
    drop(store);
    {
        let connection = rusqlite::Connection::open(&path).unwrap();
        connection.execute_batch("DROP TABLE sample_digests").unwrap();
        connection.pragma_update(None, "user_version", 5).unwrap();
    }
    let store = SqliteStore::open(&path, false).unwrap();
    let shown = store.load_run_for_pages(&uuid).unwrap();
    assert_eq!(shown.results[0].record.flags, ["cache-inflated", "digest of 2001 samples"]);
    assert_eq!(shown.median("many", "iops"), Some(1000.0));
    assert_eq!(store.load_run(&uuid).unwrap().results[0].record.samples, samples);
}

#[test]
fn newer_schema_is_refused() {
    let path = scratch("newer");
    drop(SqliteStore::open(&path, true).unwrap());
    {
        let connection = rusqlite::Connection::open(&path).unwrap();
        connection.pragma_update(None, "user_version", 99).unwrap();
    }
    let error = SqliteStore::open(&path, true).err().unwrap();
    assert!(
        matches!(error, StoreError::NewerSchema { found: 99, known: envbench_store::LATEST_VERSION, .. }),
        "{error}"
    );
    assert!(error.to_string().contains("upgrade envbench"));
}

#[test]
fn locked_store_says_so() {
    let path = scratch("locked");
    drop(SqliteStore::open(&path, true).unwrap());
    let holder = rusqlite::Connection::open(&path).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE; INSERT INTO run_attachments SELECT 0, 'x', 'y' WHERE 0;").unwrap();
    let mut store = SqliteStore::open_with_timeout(&path, true, Duration::from_millis(200)).unwrap();
    let error = store.begin_run(&request("x"), &fingerprint("h")).unwrap_err();
    assert!(matches!(error, StoreError::Locked(_)), "{error}");
    holder.execute_batch("ROLLBACK").unwrap();
    store.begin_run(&request("x"), &fingerprint("h")).unwrap();
}

#[test]
fn fingerprints_are_stored_once() {
    let path = scratch("dedup");
    let mut store = SqliteStore::open(&path, true).unwrap();
    for _ in 0..3 {
        store.begin_run(&request("x"), &fingerprint("same")).unwrap();
    }
    store.begin_run(&request("x"), &fingerprint("other")).unwrap();
    let connection = rusqlite::Connection::open(&path).unwrap();
    let count: i64 = connection.query_row("SELECT count(*) FROM fingerprints", [], |r| r.get(0)).unwrap();
    assert_eq!(count, 2);
}

#[test]
fn concurrent_writers_lose_nothing() {
    let path = scratch("concurrent");
    drop(SqliteStore::open(&path, true).unwrap());
    let writers: Vec<_> = (0..4)
        .map(|writer| {
            let path = path.clone();
            std::thread::spawn(move || {
                // What is asserted is that nothing is lost; how long a writer may wait its turn is the busy
                // timeout's, which a host with slow flushes and three other writers can outlast at 10 s.
                let mut store =
                    SqliteStore::open_with_timeout(&path, true, std::time::Duration::from_secs(120)).unwrap();
                for i in 0..25 {
                    let uuid = store.begin_run(&request(&format!("w{writer}")), &fingerprint("h")).unwrap();
                    store.add_results(&uuid, &[record("t", vec![i as f64; 10])]).unwrap();
                    store.finish_run(&uuid, RunStatus::Complete, None).unwrap();
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().unwrap();
    }
    let store = SqliteStore::open(&path, false).unwrap();
    let runs = store.list_runs(&RunFilter::default()).unwrap();
    assert_eq!(runs.len(), 100);
    assert!(runs.iter().all(|r| r.status == RunStatus::Complete && r.result_count == 1));
}
