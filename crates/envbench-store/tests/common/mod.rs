//! Fixtures shared by the store tests: a fingerprint, a run request, a result record and a sampler series.

#![allow(dead_code)]

use envbench_core::fingerprint::Fingerprint;
use envbench_core::model::{Direction, ResultRecord, RunRequest, RunStatus};
use envbench_core::sampler::{CpuFigures, DiskFigures, SamplerPoint, SamplerSeries, StepSummary};
use envbench_store::{StoreLocation, open_store};
use serde_json::json;

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
            },
            SamplerPoint { t_ms: 2000, interval_ms: 1000, step: None, cpu: cpu.clone(), disks: vec![disk.clone()] },
        ],
        steps: vec![StepSummary {
            step: "RND4K Q32T1 read".into(),
            start_ms: 100,
            end_ms: 1900,
            cpu,
            disks: vec![disk],
        }],
        own_cpu_seconds: 0.002,
        wall_seconds: 2.0,
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
