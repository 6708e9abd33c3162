//! Fixtures shared by the store tests: a fingerprint, a run request, a result record and a sampler series.

#![allow(dead_code)]

use envbench_core::fingerprint::Fingerprint;
use envbench_core::model::{Direction, ResultRecord, RunRequest};
use envbench_core::sampler::{CpuFigures, DiskFigures, SamplerPoint, SamplerSeries, StepSummary};
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
