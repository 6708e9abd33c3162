//! Fixtures shared by the store tests: a fingerprint, a run request, a result record and a sampler series.

#![allow(dead_code)]

use envbench_core::fingerprint::Fingerprint;
use envbench_core::model::{Direction, ResultRecord, RunRequest, RunStatus};
use envbench_core::sampler::{
    ContentionFigures, CpuFigures, DiskFigures, Pressure, RunContention, SamplerPoint, SamplerSeries, StallTimes,
    StepSummary,
};
use envbench_store::{StoreLocation, open_store};
use serde_json::json;
use std::cell::Cell;
use std::path::PathBuf;

/// The PostgreSQL server of the tests.
pub fn server_url() -> String {
    std::env::var("ENVBENCH_TEST_POSTGRES").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into())
}

pub fn admin() -> postgres::Client {
    postgres::Client::connect(&server_url(), postgres::NoTls).unwrap_or_else(|e| {
        panic!("the PostgreSQL tests need a server at {} ({e}); set ENVBENCH_TEST_POSTGRES", server_url())
    })
}

/// A fresh store of one backend for one test, and raw SQL on it (as another program would do it, past the store).
pub enum Backend {
    /// A new file in a directory of its own.
    Sqlite { path: PathBuf, unchecked: Cell<bool> },
    /// A schema of the test's own, dropped (with everything in it) when the test ends, passed or failed.
    Postgres { schema: String },
}

impl Backend {
    pub fn sqlite(name: &str) -> Backend {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join("store-tests")
            .join(format!("{name}-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        Backend::Sqlite { path: dir.join("results.db"), unchecked: Cell::new(false) }
    }

    pub fn postgres() -> Backend {
        let schema = format!("envbench_test_{}", uuid::Uuid::new_v4().simple());
        admin().batch_execute(&format!("CREATE SCHEMA {schema}")).unwrap();
        Backend::Postgres { schema }
    }

    pub fn is_postgres(&self) -> bool {
        matches!(self, Backend::Postgres { .. })
    }

    /// The store's location; for PostgreSQL the URL sets `search_path` to the test's schema.
    pub fn location(&self) -> StoreLocation {
        match self {
            Backend::Sqlite { path, .. } => StoreLocation::Sqlite(path.clone()),
            Backend::Postgres { schema } => {
                let url = format!("{}?options=-c%20search_path%3D{schema}", server_url());
                StoreLocation::Postgres(envbench_sql::DatabaseUrl::parse(&url).unwrap())
            }
        }
    }

    /// Run SQL on the store directly; the error's message when the database refuses it.
    pub fn execute(&self, sql: &str) -> Result<(), String> {
        match self {
            Backend::Sqlite { path, unchecked } => {
                let connection = rusqlite::Connection::open(path).map_err(|e| e.to_string())?;
                if unchecked.get() {
                    connection.execute_batch("PRAGMA ignore_check_constraints = ON").map_err(|e| e.to_string())?;
                }
                connection.execute_batch(sql).map_err(|e| e.to_string())
            }
            Backend::Postgres { schema } => {
                let mut client = admin();
                client.batch_execute(&format!("SET search_path TO {schema}")).unwrap();
                client.batch_execute(sql).map_err(|e| match e.as_db_error() {
                    Some(db) => db.message().to_string(),
                    None => e.to_string(),
                })
            }
        }
    }

    /// Let raw SQL write values the schema's checks refuse (an unknown status or direction), as a damaged or
    /// hand-edited store would hold them.
    pub fn allow_unknown_values(&self) {
        match self {
            Backend::Sqlite { unchecked, .. } => unchecked.set(true),
            Backend::Postgres { .. } => self
                .execute(
                    "ALTER TABLE runs DROP CONSTRAINT runs_status_check; \
                     ALTER TABLE results DROP CONSTRAINT results_direction_check",
                )
                .unwrap(),
        }
    }

    /// Rows in a table.
    pub fn count(&self, table: &str) -> i64 {
        match self {
            Backend::Sqlite { path, .. } => rusqlite::Connection::open(path)
                .unwrap()
                .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
                .unwrap(),
            Backend::Postgres { schema } => {
                admin().query_one(&format!("SELECT count(*) FROM {schema}.{table}"), &[]).unwrap().get(0)
            }
        }
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        if let Backend::Postgres { schema } = self {
            let _ = admin().batch_execute(&format!("DROP SCHEMA {schema} CASCADE"));
        }
    }
}

pub fn fingerprint(host: &str) -> Fingerprint {
    let mut fp = Fingerprint::default();
    fp.os.hostname = Some(host.into());
    fp.cpu.threads = Some(2);
    fp
}

pub fn request(label: &str) -> RunRequest {
    RunRequest {
        workload: "disk".into(),
        label: Some(label.into()),
        tags: [("storage".to_string(), "nvme".to_string())].into(),
        command_line: "envbench disk --quick".into(),
        suite_id: None,
    }
}

pub fn record(test: &str, samples: Vec<f64>) -> ResultRecord {
    ResultRecord {
        workload: "disk".into(),
        workload_version: 1,
        test_id: test.into(),
        parameters: json!({"queue_depth": 32, "block_bytes": 4096}),
        metric: "iops".into(),
        unit: "IOPS".into(),
        direction: Direction::HigherIsBetter,
        samples,
        flags: vec!["cache-inflated".into()],
    }
}

pub fn series() -> SamplerSeries {
    let cpu = CpuFigures {
        user_percent: 10.0,
        system_percent: 5.0,
        steal_percent: 1.5,
        idle_percent: 83.5,
        ..Default::default()
    };
    let disk = DiskFigures {
        device: "vda".into(),
        reads_per_s: 1000.0,
        read_mb_per_s: 4.096,
        util_percent: 80.0,
        ..Default::default()
    };
    SamplerSeries {
        interval_ms: 1000,
        devices: vec!["vda".into()],
        points: vec![
            SamplerPoint {
                t_ms: 1000,
                interval_ms: 1000,
                step: Some("RND4K Q32T1 read".into()),
                cpu: cpu.clone(),
                disks: vec![disk.clone()],
                contention: Some(ContentionFigures {
                    busy_cpu_seconds: 1.25,
                    own_cpu_seconds: 0.5,
                    pressure: Some(Pressure {
                        cpu: StallTimes { some_us: 120_000, full_us: 0 },
                        io: StallTimes { some_us: 400_000, full_us: 90_000 },
                        memory: StallTimes { some_us: 1, full_us: 0 },
                    }),
                }),
            },
            SamplerPoint {
                t_ms: 2000,
                interval_ms: 1000,
                step: None,
                cpu: cpu.clone(),
                disks: vec![disk.clone()],
                contention: None,
            },
        ],
        steps: vec![StepSummary {
            step: "RND4K Q32T1 read".into(),
            start_ms: 100,
            end_ms: 1900,
            cpu,
            disks: vec![disk],
            contention: Some(ContentionFigures { busy_cpu_seconds: 2.0, own_cpu_seconds: 1.0, pressure: None }),
        }],
        own_cpu_seconds: 0.002,
        wall_seconds: 2.0,
        whole_run: Some(RunContention {
            contention: ContentionFigures { busy_cpu_seconds: 2.5, own_cpu_seconds: 1.25, pressure: None },
            steal_percent: 1.5,
            local_server_cpu_seconds: 0.75,
            drives_local_server: true,
            own_storage_bytes: Some(1 << 30),
        }),
        pressure_note: Some("no pressure stall information here".into()),
    }
}

/// Write a run with everything a run can hold into the store at `location`, reopen it read-only, and check that all of
/// it comes back as written: the same test for every store.
pub fn round_trip_keeps_everything(location: &StoreLocation) {
    let mut store = open_store(location, true).unwrap();
    let fp = fingerprint("db01");
    let uuid = store.begin_run(&request("physical-p3605"), &fp).unwrap();
    let results =
        vec![record("RND4K Q32T1 read", vec![101000.0, 99000.5, 100500.25]), record("RND4K Q1T1 read", vec![9000.0])];
    store.add_results(&uuid, &results).unwrap();
    store.add_series(&uuid, &series()).unwrap();
    store.add_attachment(&uuid, "knee", &json!({"jobs": 16})).unwrap();
    store.finish_run(&uuid, RunStatus::Complete, None).unwrap();
    drop(store);

    let store = open_store(location, false).unwrap();
    let run = store.load_run(&store.find_run(&uuid[..8]).unwrap()).unwrap();
    assert_eq!(run.summary.uuid, uuid);
    assert_eq!(run.summary.status, RunStatus::Complete);
    assert_eq!(run.summary.label.as_deref(), Some("physical-p3605"));
    assert_eq!(run.summary.tags.get("storage").map(String::as_str), Some("nvme"));
    assert_eq!(run.summary.host.as_deref(), Some("db01"));
    assert_eq!(run.summary.result_count, 2);
    assert!(run.summary.ended_at.is_some());
    assert_eq!(run.command_line, "envbench disk --quick");
    assert_eq!(run.fingerprint, fp);
    assert_eq!(run.fingerprint_hash, fp.hash());
    let loaded: Vec<ResultRecord> = run.results.iter().map(|r| r.record.clone()).collect();
    assert_eq!(loaded, results);
    assert_eq!(run.results[0].parameters_hash, results[0].parameters_hash());
    assert_eq!(run.series, Some(series()));
    assert_eq!(run.attachments["knee"], json!({"jobs": 16}));
}
