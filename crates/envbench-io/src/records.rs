//! The suite's results in the core model: one [`ResultRecord`] per metric per test, one sample per measured run.

use crate::suite::{SuiteOutcome, TestOutcome};
use envbench_core::stats::Summary;
use envbench_core::{Direction, RecordSource, ResultRecord};
use serde_json::{Value, json};

/// The workload name of the storage suite.
pub const WORKLOAD: &str = "disk";
/// Bumped when a change makes old results incomparable.
pub const WORKLOAD_VERSION: u32 = 1;
/// What every record of the suite is of.
pub const SOURCE: RecordSource = RecordSource { workload: WORKLOAD, version: WORKLOAD_VERSION };

/// The metrics of every test: name, unit, direction, and how to read it from a run.
type MetricReader = fn(&crate::runner::RunSample) -> f64;
const METRICS: [(&str, &str, Direction, MetricReader); 9] = [
    ("throughput", "MB/s", Direction::HigherIsBetter, |run| run.mb_per_s),
    ("iops", "IOPS", Direction::HigherIsBetter, |run| run.iops),
    ("latency_mean", "us", Direction::LowerIsBetter, |run| run.latency.mean_us),
    ("latency_p50", "us", Direction::LowerIsBetter, |run| run.latency.p50_us),
    ("latency_p90", "us", Direction::LowerIsBetter, |run| run.latency.p90_us),
    ("latency_p99", "us", Direction::LowerIsBetter, |run| run.latency.p99_us),
    ("latency_p99_9", "us", Direction::LowerIsBetter, |run| run.latency.p99_9_us),
    ("latency_max", "us", Direction::LowerIsBetter, |run| run.latency.max_us),
    ("cpu_per_io", "us", Direction::LowerIsBetter, |run| run.cpu_per_io_us),
];

/// What defines a test, for matching results across runs: nothing that varies from run to run (nor the number of
/// runs or the pauses, which do not change what one sample means).
pub fn test_parameters(outcome: &SuiteOutcome, test: &TestOutcome) -> Value {
    let spec = &test.spec;
    json!({
        "pattern": spec.pattern.as_str(),
        "block_bytes": spec.block_bytes,
        "queue_depth": spec.queue_depth,
        "threads": spec.threads,
        "read_percent": spec.operation.read_percent(),
        "write_sync": spec.write_sync.label(),
        "direct": outcome.direct,
        "engine": outcome.engine.as_str(),
        "file_size_bytes": outcome.file_size_bytes,
        "duration_ms": outcome.duration_ms,
    })
}

/// The records of one `disk` test: its id, parameters and flags, shared by each of its metrics.
pub struct TestRecords<'a> {
    pub test_id: &'a str,
    pub parameters: &'a Value,
    pub flags: &'a [String],
}

impl TestRecords<'_> {
    /// The record of one metric.
    pub fn record(&self, metric: &str, unit: &str, direction: Direction, samples: Vec<f64>) -> ResultRecord {
        ResultRecord {
            flags: self.flags.to_vec(),
            ..SOURCE.record(self.test_id, self.parameters, metric, unit, direction, samples)
        }
    }
}

/// Every metric of every completed test. Records carry the run's cache flag (`cache-inflated`) and `noisy` when
/// their samples' coefficient of variation exceeds 5%.
pub fn result_records(outcome: &SuiteOutcome) -> Vec<ResultRecord> {
    let cache_flags = outcome.cache.flags();
    let mut records = Vec::with_capacity(outcome.tests.len() * METRICS.len());
    for test in &outcome.tests {
        let parameters = test_parameters(outcome, test);
        for (metric, unit, direction, read) in METRICS {
            let samples: Vec<f64> = test.runs.iter().map(read).collect();
            let mut flags = cache_flags.clone();
            if Summary::of(&samples).is_some_and(|summary| summary.is_noisy()) {
                flags.push("noisy".to_string());
            }
            let test = TestRecords { test_id: &test.test_id, parameters: &parameters, flags: &flags };
            records.push(test.record(metric, unit, direction, samples));
        }
        // fio's figures for the same test are kept as results of their own: same test, parameters marked as measured
        // by fio, so they sit beside envbench's in the store and never pool with them.
        if let Some(fio) = test.cross_check.as_ref().and_then(|check| check.sample.as_ref()) {
            let mut fio_parameters = parameters.clone();
            fio_parameters["measured_by"] = "fio".into();
            let flags = [FIO_CROSS_CHECK_FLAG.to_string()];
            let fio_test = TestRecords { test_id: &test.test_id, parameters: &fio_parameters, flags: &flags };
            for (metric, unit, direction, read) in METRICS {
                records.push(fio_test.record(metric, unit, direction, vec![read(fio)]));
            }
        }
    }
    records
}

/// The flag on results measured by fio in a cross-check.
pub const FIO_CROSS_CHECK_FLAG: &str = "fio-cross-check";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::CacheHonesty;
    use crate::engine::EngineKind;
    use crate::runner::RunSample;
    use crate::spec::TestSpec;
    use envbench_base::latency::{LatencyHistogram, LatencySummary};

    fn run(mb_per_s: f64, mean_us: f64) -> RunSample {
        RunSample {
            elapsed_ms: 5000.0,
            ops: 1000,
            bytes: 1000 * 4096,
            iops: mb_per_s * 1e6 / 4096.0,
            mb_per_s,
            latency: LatencySummary { count: 1000, mean_us, max_us: mean_us * 10.0, ..LatencySummary::default() },
            cpu_per_io_us: 3.0,
            threads: Vec::new(),
        }
    }

    fn outcome(cache: CacheHonesty, runs: Vec<RunSample>) -> SuiteOutcome {
        let spec: TestSpec = "rnd:4k:q32:t1:read".parse().unwrap();
        SuiteOutcome {
            engine: EngineKind::IoUring,
            engine_fallback_reason: None,
            directory: "/data".into(),
            file_system: "ext4".into(),
            file_size_bytes: 1 << 30,
            direct: true,
            cache,
            runs: runs.len() as u32,
            duration_ms: 5000,
            interval_ms: 5000,
            warmup: true,
            warmup_duration_ms: 5000,
            fill: None,
            tests: vec![TestOutcome {
                test_id: spec.id(),
                display_name: spec.display_name(),
                spec,
                engine_detail: "io_uring".into(),
                latency: LatencySummary::default(),
                mean_mb_per_s: 0.0,
                best_mb_per_s: 0.0,
                mean_iops: 0.0,
                best_iops: 0.0,
                runs,
                cross_check: None,
                histogram: LatencyHistogram::new(),
                run_histograms: Vec::new(),
            }],
            interrupted: false,
        }
    }

    #[test]
    fn one_record_per_metric_with_one_sample_per_run() {
        let records = result_records(&outcome(CacheHonesty::Direct, vec![run(400.0, 300.0), run(410.0, 290.0)]));
        let metrics: Vec<&str> = records.iter().map(|r| r.metric.as_str()).collect();
        assert_eq!(
            metrics,
            [
                "throughput",
                "iops",
                "latency_mean",
                "latency_p50",
                "latency_p90",
                "latency_p99",
                "latency_p99_9",
                "latency_max",
                "cpu_per_io"
            ]
        );
        let throughput = &records[0];
        assert_eq!(throughput.workload, "disk");
        assert_eq!(throughput.workload_version, 1);
        assert_eq!(throughput.test_id, "RND4K Q32T1 read");
        assert_eq!(throughput.unit, "MB/s");
        assert_eq!(throughput.direction, Direction::HigherIsBetter);
        assert_eq!(throughput.samples, [400.0, 410.0]);
        assert!(throughput.flags.is_empty());
        assert_eq!(records[2].samples, [300.0, 290.0]);
        assert_eq!(records[2].direction, Direction::LowerIsBetter);
        assert_eq!(records[2].unit, "us");
        assert_eq!(
            throughput.parameters,
            json!({"pattern": "random", "block_bytes": 4096, "queue_depth": 32, "threads": 1, "read_percent": 100,
                   "write_sync": "none", "direct": true, "engine": "io_uring", "file_size_bytes": 1073741824u64,
                   "duration_ms": 5000})
        );
    }

    #[test]
    fn cache_inflated_and_noisy_flags() {
        let cache = CacheHonesty::Inflated { file_size_bytes: 1 << 30, ram_bytes: Some(16 << 30) };
        let records = result_records(&outcome(cache, vec![run(400.0, 300.0), run(200.0, 300.0)]));
        assert_eq!(records[0].flags, ["cache-inflated", "noisy"]);
        assert_eq!(records[2].flags, ["cache-inflated"]);
    }

    #[test]
    fn fio_cross_check_is_kept_as_results_of_its_own() {
        let mut suite = outcome(CacheHonesty::Direct, vec![run(400.0, 300.0)]);
        suite.tests[0].cross_check =
            Some(crate::suite::CrossCheck { command: "fio ...".into(), sample: Some(run(390.0, 310.0)), error: None });
        let records = result_records(&suite);
        assert_eq!(records.len(), 18);
        let fio: Vec<&ResultRecord> = records.iter().filter(|r| r.flags == [FIO_CROSS_CHECK_FLAG]).collect();
        assert_eq!(fio.len(), 9);
        assert_eq!(fio[0].samples, [390.0]);
        assert_eq!(fio[0].parameters["measured_by"], "fio");
        assert_ne!(fio[0].parameters_hash(), records[0].parameters_hash(), "fio's results never pool with envbench's");
    }
}
