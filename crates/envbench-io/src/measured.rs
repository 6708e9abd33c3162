//! What a `disk` run measured: its result records, with the rule that flags reads a cache served, its warnings, and
//! the CrystalDiskMark-like table.

use crate::{SuiteOutcome, TestOutcome, result_records};
use envbench_core::ByteSize;
use envbench_core::model::ResultRecord;
use envbench_core::sampler::SamplerSeries;
use envbench_core::text::{Align, Table, heading, micros, number};
use envbench_core::workload::Measured;
use serde_json::{Value, json};

/// A read that moved this much more than the device saw came, at least partly, from a cache.
pub const CACHE_SUSPICION_RATIO: f64 = 2.0;
/// The flag on results that the device could not have delivered.
pub const EXCEEDS_DEVICE_FLAG: &str = "exceeds-device";

pub(crate) struct DiskMeasured {
    pub(crate) outcome: SuiteOutcome,
}

impl DiskMeasured {
    /// Reads that moved far more bytes than the device under the test file did were served from a cache: the ids
    /// of those tests.
    fn cache_served_reads(&self, series: &SamplerSeries) -> Vec<String> {
        let mut flagged = Vec::new();
        for test in self.outcome.tests.iter().filter(|t| t.spec.operation.read_percent() == 100) {
            let Some(step) = series.step(&test.test_id) else { continue };
            let Some(disk) = step.disks.first() else { continue };
            let device_bytes = disk.read_mb_per_s * 1e6 * (step.end_ms - step.start_ms) as f64 / 1000.0;
            let test_bytes: f64 = test.runs.iter().map(|r| r.bytes as f64).sum();
            if test_bytes > CACHE_SUSPICION_RATIO * device_bytes + 1e6 {
                flagged.push(test.test_id.clone());
            }
        }
        flagged
    }
}

impl Measured for DiskMeasured {
    fn records(&self, series: &SamplerSeries) -> Vec<ResultRecord> {
        let flagged = self.cache_served_reads(series);
        let mut records = result_records(&self.outcome);
        for record in records.iter_mut().filter(|r| flagged.contains(&r.test_id)) {
            record.flags.push(EXCEEDS_DEVICE_FLAG.to_string());
        }
        records
    }

    fn document(&self) -> Option<(&'static str, Value)> {
        Some(("outcome", json!(&self.outcome)))
    }

    fn render(&self, series: &SamplerSeries) -> String {
        render(&self.outcome, series)
    }

    fn warnings(&self, series: &SamplerSeries) -> Vec<String> {
        let mut warnings: Vec<String> = self.outcome.cache.warning().into_iter().collect();
        for test in self.cache_served_reads(series) {
            warnings.push(format!(
                "{test} read more than {CACHE_SUSPICION_RATIO}x what the device under {} delivered: the figure is \
                 inflated by a cache; its results are flagged {EXCEEDS_DEVICE_FLAG}",
                self.outcome.directory.display()
            ));
        }
        warnings
    }
}

/// The CrystalDiskMark-like table: one row per test, mean and best MB/s (CrystalDiskMark reports the best run,
/// KDiskMark the mean), IOPS, latency percentiles, CPU per I/O; a fio row under each test when cross-checked.
pub fn render(outcome: &SuiteOutcome, series: &SamplerSeries) -> String {
    use Align::{Left, Right};
    let mut table = Table::new(
        &["TEST", "MB/s", "BEST", "IOPS", "MEAN", "P50", "P99", "P99.9", "MAX", "CPU/IO", "DEVICE MB/s", "FLAGS"],
        &[Left, Right, Right, Right, Right, Right, Right, Right, Right, Right, Right, Left],
    );
    for test in &outcome.tests {
        table.row(row(test, series, outcome));
        if let Some(check) = &test.cross_check {
            match (&check.sample, &check.error) {
                (Some(fio), _) => {
                    let ratio = if fio.iops > 0.0 { test.mean_iops / fio.iops } else { 0.0 };
                    let mut cells = vec![
                        format!("  fio (envbench/fio IOPS {ratio:.3})"),
                        number(fio.mb_per_s),
                        String::new(),
                        number(fio.iops),
                    ];
                    cells.extend(latency_cells(&fio.latency));
                    cells.push(format!("{:.2} µs", fio.cpu_per_io_us));
                    table.row(cells);
                }
                (None, Some(error)) => table.row(vec![format!("  fio: {error}")]),
                (None, None) => {}
            }
        }
    }
    let mut out = String::new();
    out.push_str(&heading(&format!(
        "Storage suite: {} on {} ({}), {} file, {}, engine {}",
        outcome.directory.display(),
        outcome.file_system,
        if outcome.direct { "O_DIRECT" } else { "buffered" },
        ByteSize(outcome.file_size_bytes),
        if outcome.runs == 1 { "1 run".to_string() } else { format!("mean and best of {} runs", outcome.runs) },
        outcome.engine.as_str()
    )));
    out.push('\n');
    out.push_str(&table.render());
    out.push_str(
        "MB/s are 10^6 bytes per second; latency from submission to completion; DEVICE MB/s is what the OS saw on \
         the device during the test.\n",
    );
    if outcome.interrupted {
        out.push_str("Interrupted: only the tests above completed.\n");
    }
    out
}

fn row(test: &TestOutcome, series: &SamplerSeries, outcome: &SuiteOutcome) -> Vec<String> {
    let device = series
        .step(&test.test_id)
        .and_then(|s| s.disks.first())
        .map(|d| number(d.read_mb_per_s + d.write_mb_per_s))
        .unwrap_or_else(|| "-".into());
    let cpu: f64 = test.runs.iter().map(|r| r.cpu_per_io_us).sum::<f64>() / test.runs.len().max(1) as f64;
    let samples: Vec<f64> = test.runs.iter().map(|r| r.mb_per_s).collect();
    let mut flags = outcome.cache.flags();
    if envbench_core::stats::Summary::of(&samples).is_some_and(|s| s.is_noisy()) {
        flags.push("noisy".into());
    }
    let mut cells =
        vec![test.display_name.clone(), number(test.mean_mb_per_s), number(test.best_mb_per_s), number(test.mean_iops)];
    cells.extend(latency_cells(&test.latency));
    cells.extend([format!("{cpu:.2} µs"), device, flags.join(",")]);
    cells
}

/// Mean, p50, p99, p99.9 and max, in the table's columns.
fn latency_cells(latency: &envbench_base::latency::LatencySummary) -> [String; 5] {
    [latency.mean_us, latency.p50_us, latency.p99_us, latency.p99_9_us, latency.max_us].map(micros)
}
