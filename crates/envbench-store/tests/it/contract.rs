//! The store's contract, one suite run against every backend: SQLite on a real file and PostgreSQL on the real
//! server (`ENVBENCH_TEST_POSTGRES`, default `postgres://postgres@127.0.0.1:5432/test`; these tests fail rather than
//! skip when it is absent, because CI guarantees it). Each PostgreSQL test works in a schema of its own.
//!
//! Covered: the round trip of everything a run holds, statuses and the end-once rule, directions, tags and filters,
//! series and attachments, import, the append-only refusals (including the rows of a run that has ended), rows a
//! store cannot read (reported as damage, never guessed), and runs whose process died (only those: a run whose
//! process may still be running elsewhere is left running).

use crate::common;

use common::{Backend, fingerprint, record, request, series};
use envbench_core::model::{Direction, RunStatus};
use envbench_store::{ImportOutcome, ReadRuns, ResultStore, RunFilter, StoreError, StoreLocation, open_store};
use serde_json::json;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

/// Each contract test, once per backend.
macro_rules! contract {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(#[test] fn $name() { super::$name(super::common::Backend::sqlite(stringify!($name))); })*
        }
        mod postgres {
            $(#[test] fn $name() { super::$name(super::common::Backend::postgres()); })*
        }
    };
}

contract!(
    round_trip_keeps_everything,
    statuses_round_trip_and_a_run_ends_once,
    directions_round_trip,
    listing_filters_by_label_tag_host_and_limit,
    import_keeps_the_run_as_it_was_and_only_once,
    every_table_is_append_only,
    an_ended_run_takes_no_more_rows,
    unreadable_rows_are_reported_as_damage,
    a_run_whose_process_died_is_marked_interrupted,
    pages_read_a_digest_of_a_result_with_many_samples,
);

/// Issue #54, E3: a result with more samples than pages show whole is kept with its digest. `load_run` gives every
/// sample; `load_run_for_pages` the digest, flagged, with the same median, minimum and maximum; a small result is the
/// same either way. The digest is append-only like the samples.
fn pages_read_a_digest_of_a_result_with_many_samples(backend: Backend) {
    let mut store = open_store(&backend.location(), true).unwrap();
    let uuid = store.begin_run(&request("many"), &fingerprint("h")).unwrap();
    let many: Vec<f64> = (0..40_000).map(|i| 1.0 + f64::from((i * 7_919) % 40_000) / 100.0).collect();
    store.add_results(&uuid, &[record("many", many.clone()), record("few", vec![3.0, 1.0, 2.0])]).unwrap();
    store.finish_run(&uuid, RunStatus::Complete, None).unwrap();
    let whole = store.load_run(&uuid).unwrap();
    assert_eq!(whole.results[0].record.samples, many);
    assert_eq!(whole.results[0].record.flags, ["cache-inflated"]);
    let shown = store.load_run_for_pages(&uuid).unwrap();
    let digest = &shown.results[0].record;
    assert_eq!(digest.samples.len(), envbench_store::DIGEST_POINTS);
    assert_eq!(digest.flags, ["cache-inflated", "digest of 40000 samples"]);
    assert_eq!(shown.median("many", "iops"), whole.median("many", "iops"));
    assert_eq!(shown.results[1], whole.results[1]);
    let view = envbench_store::PagesView(store.as_ref());
    assert_eq!(view.load_run(&uuid).unwrap(), shown);
    for statement in ["UPDATE sample_digests SET points = '[]'", "DELETE FROM sample_digests"] {
        let error = backend.execute(statement).err().unwrap_or_else(|| panic!("{statement} must be refused"));
        assert!(error.contains("append-only"), "{statement}: {error}");
    }
}

fn round_trip_keeps_everything(backend: Backend) {
    common::round_trip_keeps_everything(&backend.location());
}

fn statuses_round_trip_and_a_run_ends_once(backend: Backend) {
    let mut store = open_store(&backend.location(), true).unwrap();
    for (status, reason) in
        [(RunStatus::Complete, None), (RunStatus::Failed, Some("disk full")), (RunStatus::Interrupted, Some("Ctrl-C"))]
    {
        let uuid = store.begin_run(&request("x"), &fingerprint("h")).unwrap();
        assert_eq!(store.load_run(&uuid).unwrap().summary.status, RunStatus::Running);
        store.finish_run(&uuid, status, reason).unwrap();
        let run = store.load_run(&uuid).unwrap();
        assert_eq!((run.summary.status, run.summary.status_reason.as_deref()), (status, reason));
        assert!(run.summary.ended_at.is_some());
        assert!(matches!(store.finish_run(&uuid, RunStatus::Complete, None), Err(StoreError::RunAlreadyEnded(_))));
    }
    assert!(matches!(store.finish_run("nope", RunStatus::Complete, None), Err(StoreError::NoSuchRun(_))));
    let running = store.begin_run(&request("x"), &fingerprint("h")).unwrap();
    assert!(store.finish_run(&running, RunStatus::Running, None).is_err(), "a run cannot end as running");
}

fn directions_round_trip(backend: Backend) {
    let mut store = open_store(&backend.location(), true).unwrap();
    let uuid = store.begin_run(&request("x"), &fingerprint("h")).unwrap();
    let mut lower = record("latency", vec![0.25, 0.5]);
    lower.direction = Direction::LowerIsBetter;
    let higher = record("iops", vec![1.0]);
    store.add_results(&uuid, &[lower.clone(), higher.clone()]).unwrap();
    store.finish_run(&uuid, RunStatus::Complete, None).unwrap();
    let run = store.load_run(&uuid).unwrap();
    assert_eq!(run.results[0].record, lower);
    assert_eq!(run.results[1].record, higher);
}

fn listing_filters_by_label_tag_host_and_limit(backend: Backend) {
    let mut store = open_store(&backend.location(), true).unwrap();
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
    assert_eq!(by_tag[0].tags, virtual_request.tags);
    let by_host = store.list_runs(&RunFilter { host: Some("db01".into()), ..Default::default() }).unwrap();
    assert_eq!(by_host.len(), 1);
    assert_eq!(store.list_runs(&RunFilter { limit: Some(1), ..Default::default() }).unwrap().len(), 1);
    assert_eq!(store.find_run(&a[..8]).unwrap(), a);
    for bad in ["zz", "", "%", "no-such-run"] {
        assert!(matches!(store.find_run(bad), Err(StoreError::NoSuchRun(_))), "{bad}");
    }
    assert!(matches!(store.load_run("no-such-run"), Err(StoreError::NoSuchRun(_))));
}

fn import_keeps_the_run_as_it_was_and_only_once(backend: Backend) {
    let source_backend = Backend::sqlite("import-source");
    let mut source = open_store(&source_backend.location(), true).unwrap();
    let uuid = source.begin_run(&request("physical"), &fingerprint("db01")).unwrap();
    source.add_results(&uuid, &[record("RND4K Q32T1 read", vec![1.0, 2.0])]).unwrap();
    source.add_series(&uuid, &series()).unwrap();
    source.add_attachment(&uuid, "knee", &json!({"jobs": 4})).unwrap();
    source.finish_run(&uuid, RunStatus::Failed, Some("disk full")).unwrap();
    let run = source.load_run(&uuid).unwrap();

    let mut destination = open_store(&backend.location(), true).unwrap();
    assert_eq!(destination.import_run(&run).unwrap(), ImportOutcome::Imported);
    assert_eq!(destination.import_run(&run).unwrap(), ImportOutcome::AlreadyPresent);
    assert_eq!(destination.load_run(&uuid).unwrap(), run, "uuid, times, status, samples, series, attachments");
    assert_eq!(backend.count("runs"), 1);
    assert_eq!(backend.count("samples"), 2);
}

/// A finished run with a row in every table.
fn finished_run(store: &mut dyn ResultStore) -> String {
    let uuid = store.begin_run(&request("x"), &fingerprint("h")).unwrap();
    store.add_results(&uuid, &[record("t", vec![1.0])]).unwrap();
    store.add_series(&uuid, &series()).unwrap();
    store.add_attachment(&uuid, "knee", &json!({"jobs": 4})).unwrap();
    store.finish_run(&uuid, RunStatus::Interrupted, Some("interrupted by Ctrl-C")).unwrap();
    uuid
}

fn every_table_is_append_only(backend: Backend) {
    let mut store = open_store(&backend.location(), true).unwrap();
    let uuid = finished_run(store.as_mut());
    let mut statements: Vec<String> = vec![
        "UPDATE samples SET value = 2".into(),
        "DELETE FROM samples".into(),
        "UPDATE results SET metric = 'x'".into(),
        "DELETE FROM results".into(),
        "DELETE FROM runs".into(),
        "UPDATE runs SET status = 'complete'".into(),
        "UPDATE fingerprints SET hostname = 'x'".into(),
        "DELETE FROM fingerprints".into(),
        "UPDATE run_tags SET value = 'x'".into(),
        "DELETE FROM run_tags".into(),
        "UPDATE sampler_series SET wall_seconds = 0".into(),
        "DELETE FROM sampler_series".into(),
        "UPDATE sampler_cpu SET user_percent = 0".into(),
        "DELETE FROM sampler_cpu".into(),
        "UPDATE sampler_disk SET reads_per_s = 0".into(),
        "DELETE FROM sampler_disk".into(),
        "UPDATE run_attachments SET document = '{}'".into(),
        "DELETE FROM run_attachments".into(),
    ];
    if backend.is_postgres() {
        for table in ["samples", "results", "runs", "fingerprints", "run_tags", "sampler_series", "sampler_cpu"] {
            statements.push(format!("TRUNCATE {table} CASCADE"));
        }
        statements.push("TRUNCATE sampler_disk, run_attachments".into());
    }
    for statement in &statements {
        let error = backend.execute(statement).err().unwrap_or_else(|| panic!("{statement} must be refused"));
        assert!(error.contains("append-only"), "{statement}: {error}");
    }
    let run = store.load_run(&uuid).unwrap();
    assert_eq!(run.summary.status, RunStatus::Interrupted);
    assert_eq!(run.results[0].record.samples, vec![1.0]);
    assert_eq!(run.series, Some(series()));
    assert_eq!(run.attachments["knee"], json!({"jobs": 4}));
}

fn an_ended_run_takes_no_more_rows(backend: Backend) {
    let mut store = open_store(&backend.location(), true).unwrap();
    let ended = finished_run(store.as_mut());
    let running = store.begin_run(&request("x"), &fingerprint("h")).unwrap();
    // A running run may end only with its end time.
    let error = backend
        .execute(&format!("UPDATE runs SET status = 'complete' WHERE uuid = '{running}'"))
        .expect_err("ending without ended_at must be refused");
    assert!(error.contains("append-only"), "{error}");
    // Nothing joins a run that has ended: results, samples, series, attachments, tags.
    let ended_id = format!("(SELECT id FROM runs WHERE uuid = '{ended}')");
    let result_id = format!("(SELECT id FROM results WHERE run_id = {ended_id})");
    for statement in [
        format!("INSERT INTO samples (result_id, seq, value) VALUES ({result_id}, 99, 5.0)"),
        format!(
            "INSERT INTO results (run_id, workload, workload_version, test_id, parameters, parameters_hash, metric, \
             unit, direction, flags) VALUES ({ended_id}, 'disk', 1, 't2', '{{}}', 'h', 'iops', 'IOPS', 'higher', '[]')"
        ),
        format!("INSERT INTO run_attachments (run_id, name, document) VALUES ({ended_id}, 'late', '{{}}')"),
        format!("INSERT INTO run_tags (run_id, key, value) VALUES ({ended_id}, 'late', 'x')"),
    ] {
        let error = backend.execute(&statement).err().unwrap_or_else(|| panic!("{statement} must be refused"));
        assert!(error.contains("append-only"), "{statement}: {error}");
    }
    assert!(store.add_results(&ended, &[record("t2", vec![1.0])]).is_err());
    assert!(store.add_attachment(&ended, "late", &json!({})).is_err());
    assert_eq!(store.load_run(&ended).unwrap().results.len(), 1);
    // The running run still takes its rows.
    store.add_results(&running, &[record("t", vec![2.0])]).unwrap();
    store.finish_run(&running, RunStatus::Complete, None).unwrap();
}

fn unreadable_rows_are_reported_as_damage(backend: Backend) {
    let mut store = open_store(&backend.location(), true).unwrap();
    let good = finished_run(store.as_mut());
    backend.allow_unknown_values();
    backend
        .execute(&format!(
            "INSERT INTO runs (uuid, workload, command_line, tool_version, started_at, ended_at, status, \
             fingerprint_id) SELECT 'ffffffff-0000-0000-0000-000000000001', 'disk', 'x', '0', started_at, ended_at, \
             'paused', fingerprint_id FROM runs WHERE uuid = '{good}'"
        ))
        .unwrap();
    let error = store.list_runs(&RunFilter::default()).unwrap_err();
    assert!(matches!(&error, StoreError::Corrupt(reason) if reason.contains("'paused'")), "{error}");
    assert!(matches!(store.load_run("ffffffff-0000-0000-0000-000000000001"), Err(StoreError::Corrupt(_))));

    let uuid = store.begin_run(&request("x"), &fingerprint("h")).unwrap();
    store.add_results(&uuid, &[record("t", vec![1.0])]).unwrap();
    backend
        .execute(&format!(
            "INSERT INTO results (run_id, workload, workload_version, test_id, parameters, parameters_hash, metric, \
             unit, direction, flags) SELECT id, 'disk', 1, 'sideways', '{{}}', 'h', 'iops', 'IOPS', 'sideways', '[]' \
             FROM runs WHERE uuid = '{uuid}'"
        ))
        .unwrap();
    let error = store.load_run(&uuid).unwrap_err();
    assert!(matches!(&error, StoreError::Corrupt(reason) if reason.contains("'sideways'")), "{error}");
    assert!(error.to_string().contains("damaged"), "{error}");
}

fn a_run_whose_process_died_is_marked_interrupted(backend: Backend) {
    let mut store = open_store(&backend.location(), true).unwrap();
    // Running here: this process holds its lock, which a second look, from this process or any other, sees held.
    let alive = store.begin_run(&request("alive"), &fingerprint("h")).unwrap();
    let machine = std::fs::read_to_string("/etc/machine-id").unwrap().trim().to_string();
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap().trim().to_string();
    let pid_namespace = std::fs::metadata("/proc/self/ns/pid").unwrap().ino();
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead_pid = child.id();
    child.wait().unwrap();
    let insert = |uuid: &str, started_at: &str, process: &str| {
        backend
            .execute(&format!(
                "INSERT INTO runs (uuid, workload, command_line, tool_version, started_at, status, fingerprint_id, \
                 process) SELECT '{uuid}', 'disk', 'x', '0', {started_at}, 'running', fingerprint_id, '{process}' \
                 FROM runs WHERE uuid = '{alive}'"
            ))
            .unwrap();
    };
    // Begun in this PID namespace by a process that has since died, holding no lock: its pid tells.
    insert(
        "dead0000-0000-0000-0000-000000000001",
        "started_at",
        &format!("{machine} {boot} {dead_pid} 12345 pidns:{pid_namespace} nolock"),
    );
    // Begun elsewhere (another machine) by a process whose lock nobody holds any more (a killed process leaves its
    // lock file behind, free).
    let lost = "10570000-0000-0000-0000-000000000001";
    insert(lost, "started_at", "another-machine boot 1 1 pidns:7 lock");
    if let StoreLocation::Sqlite(path) = backend.location() {
        std::fs::write(format!("{}-run-{lost}.lock", path.display()), "").unwrap();
    }
    // Written by an envbench that kept neither namespace nor lock, of a pid not in this /proc: it may be alive in
    // another PID namespace (a container sharing machine and boot ids), so it is left running.
    let unprovable = "0ca10000-0000-0000-0000-000000000001";
    insert(unprovable, "started_at", &format!("{machine} {boot} {dead_pid} 12345"));
    // A run of another machine, running for weeks.
    insert("01d00000-0000-0000-0000-000000000001", "'2020-01-01T00:00:00.000Z'", "another-machine boot 1 1");
    drop(store);

    let store = open_store(&backend.location(), false).unwrap();
    let status = |uuid: &str| {
        let run = store.load_run(uuid).unwrap().summary;
        assert_eq!(run.ended_at.is_some(), run.status != RunStatus::Running, "{run:?}");
        (run.status, run.status_reason.unwrap_or_default())
    };
    let (dead, reason) = status("dead0000-0000-0000-0000-000000000001");
    assert_eq!(dead, RunStatus::Interrupted);
    assert!(reason.contains(&format!("pid {dead_pid}")) && reason.contains("ended without finishing"), "{reason}");
    let (lost_status, reason) = status(lost);
    assert_eq!(lost_status, RunStatus::Interrupted, "{reason}");
    assert!(reason.contains("ended without finishing"), "{reason}");
    if let StoreLocation::Sqlite(path) = backend.location() {
        assert!(!PathBuf::from(format!("{}-run-{lost}.lock", path.display())).exists(), "the lock file goes with it");
    }
    assert_eq!(status(unprovable).0, RunStatus::Running);
    let (old, reason) = status("01d00000-0000-0000-0000-000000000001");
    assert_eq!(old, RunStatus::Interrupted);
    assert!(reason.contains("days"), "{reason}");
    assert_eq!(status(&alive).0, RunStatus::Running, "a live run is left alone");
}
