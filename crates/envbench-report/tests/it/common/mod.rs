//! A results store with runs of several workloads in two environments, built through the SQLite store's API, and a
//! small HTML well-formedness checker.

#![allow(dead_code)]

use envbench_core::fingerprint::{BlockDevice, Fingerprint, StorageStack};
use envbench_core::model::{Direction, ResultRecord, RunRequest, RunStatus};
use envbench_core::sampler::{CpuFigures, DiskFigures, SamplerPoint, SamplerSeries};
use envbench_store::{RecordRuns, SqliteStore};
use serde_json::{Value, json};
use std::path::PathBuf;

/// A label, tag and host name that must come out as text, never as markup.
pub const HOSTILE_LABEL: &str = "<script>alert('label')</script>";
pub const HOSTILE_TAG: &str = "<b onmouseover=x>";
pub const HOSTILE_HOST: &str = "<img src=x onerror=alert(1)>";

pub fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report-tests").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("results.db")
}

pub fn physical() -> Fingerprint {
    let mut fp = Fingerprint::default();
    fp.os.hostname = Some("db01".into());
    fp.os.kernel = Some("6.1.0".into());
    fp.cpu.model = Some("Intel Xeon Gold 6230".into());
    fp.cpu.threads = Some(80);
    fp.cpu.cores = Some(40);
    fp.cpu.smt_control = Some("on".into());
    fp.cpu.smt_active = Some(true);
    fp.memory.total_bytes = Some(384 << 30);
    fp.storage = Some(StorageStack {
        path: "/data".into(),
        mount_point: "/data".into(),
        filesystem: "xfs".into(),
        source: "/dev/nvme0n1p1".into(),
        mount_options: "rw,noatime".into(),
        devices: vec![BlockDevice {
            name: "nvme0n1".into(),
            kind: "disk".into(),
            is_physical: true,
            transport: Some("nvme".into()),
            model: Some("INTEL SSDPEDME016T4 (P3605)".into()),
            rotational: Some(false),
            scheduler: Some("none".into()),
            ..Default::default()
        }],
        responsive: true,
        ..Default::default()
    });
    fp
}

pub fn virtual_machine() -> Fingerprint {
    let mut fp = physical();
    fp.os.hostname = Some(HOSTILE_HOST.into());
    fp.cpu.threads = Some(16);
    fp.cpu.cores = Some(16);
    fp.cpu.smt_control = Some("off".into());
    fp.cpu.smt_active = Some(false);
    fp.virtualization.hypervisor = Some("kvm".into());
    let storage = fp.storage.as_mut().unwrap();
    storage.mount_options = "rw,relatime".into();
    storage.devices[0].name = "vda".into();
    storage.devices[0].transport = Some("virtio".into());
    storage.devices[0].model = None;
    fp
}

pub fn record(
    workload: &str,
    test: &str,
    parameters: Value,
    metric: &str,
    unit: &str,
    samples: Vec<f64>,
) -> ResultRecord {
    let direction = if matches!(unit, "MB/s" | "IOPS") { Direction::HigherIsBetter } else { Direction::LowerIsBetter };
    ResultRecord {
        workload: workload.into(),
        workload_version: 1,
        test_id: test.into(),
        parameters,
        metric: metric.into(),
        unit: unit.into(),
        direction,
        samples,
        flags: vec![],
    }
}

/// `base` scaled by `factor`, with a small deterministic spread.
pub fn samples(base: f64, factor: f64, count: usize, offset: usize) -> Vec<f64> {
    (0..count).map(|i| base * factor * (1.0 + 0.004 * ((i + offset) % 3) as f64)).collect()
}

/// Disk results: two tests with throughput and latency percentiles, plus one test whose parameters depend on the
/// environment (never matched).
pub fn disk_results(speed: f64, odd_queue_depth: u32, offset: usize) -> Vec<ResultRecord> {
    let mut records = Vec::new();
    for (test, mbps, latency_us) in [("SEQ1M Q8T1 read", 3200.0, 2500.0), ("RND4K Q32T1 read", 1600.0, 80.0)] {
        let parameters = json!({"test": test, "direct": true});
        records.push(record("disk", test, parameters.clone(), "throughput", "MB/s", samples(mbps, speed, 3, offset)));
        for (metric, factor) in [
            ("latency_p50", 1.0),
            ("latency_p90", 1.4),
            ("latency_p99", 2.5),
            ("latency_p99_9", 6.0),
            ("latency_max", 40.0),
        ] {
            records.push(record(
                "disk",
                test,
                parameters.clone(),
                metric,
                "us",
                samples(latency_us * factor, 1.0 / speed, 3, offset),
            ));
        }
    }
    records.push(record(
        "disk",
        "RND4K Q1T1 read",
        json!({"queue_depth": odd_queue_depth}),
        "throughput",
        "MB/s",
        samples(50.0, speed, 3, offset),
    ));
    records
}

pub fn cube_results(speed: f64) -> Vec<ResultRecord> {
    ["2 native load", "4 aggregation", "8 dense restructure"]
        .iter()
        .enumerate()
        .map(|(i, step)| {
            record("cube", step, json!({"scale": 0.01}), "elapsed", "s", samples(10.0 + i as f64, 1.0 / speed, 3, 0))
        })
        .collect()
}

pub fn tpch_results(speed: f64) -> Vec<ResultRecord> {
    ["Q1", "Q10", "Q2"]
        .iter()
        .map(|q| record("tpch", q, json!({"sf": 1}), "elapsed", "s", samples(1.5, 1.0 / speed, 3, 0)))
        .collect()
}

pub fn ranread_results(speed: f64) -> (Vec<ResultRecord>, Value) {
    use envbench_ranread::Comparable;
    use envbench_ranread::{RanreadDocument, StepFigures, StepLimit, StopReason, SweepOutcome, Targets, Verdict};
    let mut records = Vec::new();
    let mut steps = Vec::new();
    for (i, jobs) in [1u32, 2, 4, 8, 16].into_iter().enumerate() {
        let iops = 8000.0 * speed * f64::from(jobs).powf(0.8);
        let mean_ms = 0.12 * f64::from(jobs).powf(0.9) / speed * if i == 4 { 60.0 } else { 1.0 };
        let parameters = json!({"mode": "file", "jobs": jobs});
        let test = format!("J={jobs}");
        records.push(record("ranread", &test, parameters.clone(), "iops", "IOPS", vec![iops]));
        records.push(record("ranread", &test, parameters, "latency_mean", "ms", vec![mean_ms]));
        steps.push(StepFigures {
            jobs,
            reads: 1000,
            elapsed_s: 1.0,
            iops,
            mean_ms,
            p50_ms: mean_ms,
            p99_ms: mean_ms * 3.0,
            max_ms: mean_ms * 5.0,
            job_cv_percent: 1.0,
            started_at: "2026-11-23T10:00:00.000Z".into(),
            database: None,
            latency: None,
            job_iops: Vec::new(),
            window_iops: Vec::new(),
        });
    }
    let document = RanreadDocument {
        target: "file".into(),
        parameters: Comparable::File {
            block_bytes: 8192,
            file_size_bytes: 1 << 30,
            direct: true,
            engine: "io_uring".into(),
            limit: StepLimit::Iterations(1000),
        },
        outcome: SweepOutcome {
            steps,
            stop_reason: StopReason::LatencyTarget,
            targets: Targets { latency_ms: 10.0, iops: None },
            knee: Some(3),
            verdict: Verdict { pass: true, explanation: "within the target".into() },
        },
    };
    (records, serde_json::to_value(document).unwrap())
}

/// The workloads the report knows in these tests: the three with views of their own.
pub static WORKLOADS: envbench_core::workload::Registry =
    envbench_core::workload::Registry::new(&[&envbench_cube::CUBE, &envbench_tpch::TPCH, &envbench_ranread::RANREAD]);

pub fn sampler_series() -> SamplerSeries {
    SamplerSeries {
        interval_ms: 1000,
        devices: vec!["nvme0n1".into()],
        points: (1..=5)
            .map(|t| SamplerPoint {
                t_ms: t * 1000,
                interval_ms: 1000,
                step: Some("SEQ1M Q8T1 read".into()),
                cpu: CpuFigures {
                    user_percent: 5.0,
                    system_percent: 3.0,
                    steal_percent: 0.5 * t as f64,
                    idle_percent: 80.0,
                    ..Default::default()
                },
                disks: vec![DiskFigures {
                    device: "nvme0n1".into(),
                    reads_per_s: 3000.0,
                    read_mb_per_s: 3100.0 + t as f64,
                    ..Default::default()
                }],
                contention: None,
            })
            .collect(),
        steps: vec![],
        own_cpu_seconds: 0.01,
        wall_seconds: 5.0,
        whole_run: None,
        pressure_note: None,
    }
}

pub struct Fixture {
    pub path: PathBuf,
    /// Disk runs of the physical side, oldest first.
    pub physical_disk: Vec<String>,
    pub virtual_disk: Vec<String>,
    pub hostile: String,
}

fn run(
    store: &mut SqliteStore,
    workload: &str,
    label: &str,
    tags: &[(&str, &str)],
    fingerprint: &Fingerprint,
    results: &[ResultRecord],
) -> String {
    run_with_series(store, workload, label, tags, fingerprint, results, None)
}

/// A complete run, with a sampler series when given (a run takes its rows before it ends).
fn run_with_series(
    store: &mut SqliteStore,
    workload: &str,
    label: &str,
    tags: &[(&str, &str)],
    fingerprint: &Fingerprint,
    results: &[ResultRecord],
    series: Option<&SamplerSeries>,
) -> String {
    let request = RunRequest {
        workload: workload.into(),
        label: Some(label.into()),
        tags: tags.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        command_line: format!("envbench {workload}"),
        suite_id: None,
    };
    let uuid = store.begin_run(&request, fingerprint).unwrap();
    store.add_results(&uuid, results).unwrap();
    if let Some(series) = series {
        store.add_series(&uuid, series).unwrap();
    }
    store.finish_run(&uuid, RunStatus::Complete, None).unwrap();
    uuid
}

/// Two environments: "physical-p3605" (tags env=physical) and "virtual" (tags env=virtual, 20% slower), each with two
/// disk runs, a cube, a tpch and a ranread run; one physical disk run has a sampler series. Plus a run with a hostile
/// label, tag and host name, a failed run and a run still running.
pub fn build(name: &str) -> Fixture {
    let path = scratch(name);
    let mut store = SqliteStore::open(&path, true).unwrap();
    let (physical_fp, virtual_fp) = (physical(), virtual_machine());
    let mut physical_disk = Vec::new();
    let mut virtual_disk = Vec::new();
    for offset in 0..2 {
        let series = sampler_series();
        physical_disk.push(run_with_series(
            &mut store,
            "disk",
            "physical-p3605",
            &[("env", "physical")],
            &physical_fp,
            &disk_results(1.0, 32, offset),
            (offset == 0).then_some(&series),
        ));
        virtual_disk.push(run(
            &mut store,
            "disk",
            "virtual",
            &[("env", "virtual")],
            &virtual_fp,
            &disk_results(0.8, 1, offset),
        ));
    }
    for (label, env, fp, speed) in
        [("physical-p3605", "physical", &physical_fp, 1.0), ("virtual", "virtual", &virtual_fp, 0.8)]
    {
        run(&mut store, "cube", label, &[("env", env)], fp, &cube_results(speed));
        run(&mut store, "tpch", label, &[("env", env)], fp, &tpch_results(speed));
        let (records, document) = ranread_results(speed);
        let uuid = store
            .begin_run(
                &RunRequest {
                    workload: "ranread".into(),
                    label: Some(label.into()),
                    tags: [("env".to_string(), env.to_string())].into(),
                    command_line: "envbench ranread".into(),
                    suite_id: None,
                },
                fp,
            )
            .unwrap();
        store.add_results(&uuid, &records).unwrap();
        store.add_attachment(&uuid, "ranread", &document).unwrap();
        store.finish_run(&uuid, RunStatus::Complete, None).unwrap();
    }
    let hostile =
        run(&mut store, "disk", HOSTILE_LABEL, &[("note", HOSTILE_TAG)], &virtual_fp, &disk_results(0.9, 32, 0));
    let failed = store
        .begin_run(
            &RunRequest { workload: "disk".into(), label: Some("virtual".into()), ..Default::default() },
            &virtual_fp,
        )
        .unwrap();
    store.finish_run(&failed, RunStatus::Failed, Some("disk full")).unwrap();
    store
        .begin_run(
            &RunRequest { workload: "disk".into(), label: Some("virtual".into()), ..Default::default() },
            &virtual_fp,
        )
        .unwrap();
    Fixture { path, physical_disk, virtual_disk, hostile }
}

/// Check that HTML is well formed: every non-void element closed in order, no stray `<` or `>` in text.
pub fn assert_well_formed(html: &str) {
    const VOID: &[&str] = &["meta", "input", "br", "img", "hr", "link"];
    let mut stack: Vec<String> = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find(['<', '>']) {
        assert!(rest[start..].starts_with('<'), "stray '>' before: {}", &rest[start.saturating_sub(80)..start + 1]);
        let after = &rest[start..];
        let end = after.find('>').unwrap_or_else(|| panic!("unclosed tag: {}", &after[..after.len().min(80)]));
        let tag = &after[1..end];
        assert!(!tag.contains('<'), "'<' inside a tag: {tag}");
        rest = &after[end + 1..];
        if tag.starts_with('!') {
            continue;
        }
        if let Some(name) = tag.strip_prefix('/') {
            let open = stack.pop().unwrap_or_else(|| panic!("</{name}> closes nothing"));
            assert_eq!(open, name.trim(), "</{name}> closes <{open}>");
            continue;
        }
        let name: String = tag.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-').collect();
        assert!(!name.is_empty(), "'<' that starts no tag: <{tag}>");
        if tag.ends_with('/') || VOID.contains(&name.as_str()) {
            continue;
        }
        if name == "style" {
            let close = rest.find("</style>").expect("style closed");
            rest = &rest[close + "</style>".len()..];
            continue;
        }
        stack.push(name);
    }
    assert!(stack.is_empty(), "unclosed elements: {stack:?}");
}

/// How many charts of each kind (`data-chart`) a page holds; also checks each figure holds exactly one `<svg`.
pub fn chart_kinds(html: &str) -> std::collections::BTreeMap<String, usize> {
    let mut kinds = std::collections::BTreeMap::new();
    for figure in html.split("<figure class=\"chart\" data-chart=\"").skip(1) {
        let kind = figure.split('"').next().unwrap().to_string();
        let body = &figure[..figure.find("</figure>").unwrap()];
        assert_eq!(body.matches("<svg").count(), 1, "one svg per chart figure");
        *kinds.entry(kind).or_insert(0) += 1;
    }
    assert_eq!(kinds.values().sum::<usize>(), html.matches("<svg").count(), "every svg is in a chart figure");
    kinds
}
