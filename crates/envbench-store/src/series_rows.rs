//! How a sampler series maps to the store's rows, shared by every backend so they cannot drift apart.
//!
//! `sampler_cpu` and `sampler_disk` hold one row per sampler interval (kind `point`) and per whole-step summary (kind
//! `step`), each with its time span, its step name and its figures; `sampler_series` holds the header.

use envbench_core::sampler::{CpuFigures, DiskFigures, SamplerPoint, SamplerSeries, StepSummary};
use std::collections::HashMap;

/// The CPU figure columns, in the order of [`cpu_values`].
pub(crate) const CPU_COLUMNS: [&str; 7] = [
    "user_percent",
    "nice_percent",
    "system_percent",
    "iowait_percent",
    "irq_percent",
    "steal_percent",
    "idle_percent",
];

/// The disk figure columns, in the order of [`disk_values`].
pub(crate) const DISK_COLUMNS: [&str; 10] = [
    "reads_per_s",
    "writes_per_s",
    "read_mb_per_s",
    "write_mb_per_s",
    "read_request_kib",
    "write_request_kib",
    "read_await_ms",
    "write_await_ms",
    "queue_size",
    "util_percent",
];

/// The CPU figures in [`CPU_COLUMNS`] order.
pub(crate) fn cpu_values(c: &CpuFigures) -> [f64; 7] {
    [c.user_percent, c.nice_percent, c.system_percent, c.iowait_percent, c.irq_percent, c.steal_percent, c.idle_percent]
}

/// The disk figures in [`DISK_COLUMNS`] order.
pub(crate) fn disk_values(d: &DiskFigures) -> [f64; 10] {
    [
        d.reads_per_s,
        d.writes_per_s,
        d.read_mb_per_s,
        d.write_mb_per_s,
        d.read_request_kib,
        d.write_request_kib,
        d.read_await_ms,
        d.write_await_ms,
        d.queue_size,
        d.util_percent,
    ]
}

/// One interval or step summary of a series, as stored.
pub(crate) struct SeriesRow<'a> {
    pub kind: &'static str,
    pub start_ms: i64,
    pub end_ms: i64,
    pub step: Option<&'a str>,
    pub cpu: &'a CpuFigures,
    pub disks: &'a [DiskFigures],
}

/// Every row a series becomes: its points, then its step summaries.
pub(crate) fn series_rows(series: &SamplerSeries) -> impl Iterator<Item = SeriesRow<'_>> {
    let points = series.points.iter().map(|p| SeriesRow {
        kind: "point",
        start_ms: p.t_ms.saturating_sub(p.interval_ms) as i64,
        end_ms: p.t_ms as i64,
        step: p.step.as_deref(),
        cpu: &p.cpu,
        disks: &p.disks,
    });
    let steps = series.steps.iter().map(|s| SeriesRow {
        kind: "step",
        start_ms: s.start_ms as i64,
        end_ms: s.end_ms as i64,
        step: Some(s.step.as_str()),
        cpu: &s.cpu,
        disks: &s.disks,
    });
    points.chain(steps)
}

/// Rebuilds a series from its header and rows, read in insertion order.
pub(crate) struct SeriesBuilder {
    series: SamplerSeries,
    point_index: HashMap<u64, usize>,
    step_index: HashMap<(u64, u64, String), usize>,
}

impl SeriesBuilder {
    pub(crate) fn new(
        interval_ms: i64,
        devices: Vec<String>,
        own_cpu_seconds: f64,
        wall_seconds: f64,
    ) -> SeriesBuilder {
        SeriesBuilder {
            series: SamplerSeries {
                interval_ms: interval_ms as u64,
                devices,
                points: Vec::new(),
                steps: Vec::new(),
                own_cpu_seconds,
                wall_seconds,
            },
            point_index: HashMap::new(),
            step_index: HashMap::new(),
        }
    }

    /// A `sampler_cpu` row: it creates the point or step the disk rows of the same span attach to.
    pub(crate) fn cpu_row(&mut self, kind: &str, start_ms: i64, end_ms: i64, step: Option<String>, values: [f64; 7]) {
        let (start_ms, end_ms) = (start_ms as u64, end_ms as u64);
        let [user, nice, system, iowait, irq, steal, idle] = values;
        let cpu = CpuFigures {
            user_percent: user,
            nice_percent: nice,
            system_percent: system,
            iowait_percent: iowait,
            irq_percent: irq,
            steal_percent: steal,
            idle_percent: idle,
        };
        if kind == "point" {
            self.point_index.insert(end_ms, self.series.points.len());
            self.series.points.push(SamplerPoint {
                t_ms: end_ms,
                interval_ms: end_ms - start_ms,
                step,
                cpu,
                disks: Vec::new(),
            });
        } else {
            let step = step.unwrap_or_default();
            self.step_index.insert((start_ms, end_ms, step.clone()), self.series.steps.len());
            self.series.steps.push(StepSummary { step, start_ms, end_ms, cpu, disks: Vec::new() });
        }
    }

    /// A `sampler_disk` row, attached to the point or step of the same span.
    pub(crate) fn disk_row(
        &mut self,
        kind: &str,
        start_ms: i64,
        end_ms: i64,
        step: Option<String>,
        device: String,
        values: [f64; 10],
    ) {
        let [reads, writes, read_mb, write_mb, read_kib, write_kib, read_await, write_await, queue, util] = values;
        let figures = DiskFigures {
            device,
            reads_per_s: reads,
            writes_per_s: writes,
            read_mb_per_s: read_mb,
            write_mb_per_s: write_mb,
            read_request_kib: read_kib,
            write_request_kib: write_kib,
            read_await_ms: read_await,
            write_await_ms: write_await,
            queue_size: queue,
            util_percent: util,
        };
        let (start_ms, end_ms) = (start_ms as u64, end_ms as u64);
        if kind == "point" {
            if let Some(&index) = self.point_index.get(&end_ms) {
                self.series.points[index].disks.push(figures);
            }
        } else if let Some(&index) = self.step_index.get(&(start_ms, end_ms, step.unwrap_or_default())) {
            self.series.steps[index].disks.push(figures);
        }
    }

    pub(crate) fn finish(self) -> SamplerSeries {
        self.series
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_rebuild_the_series() {
        let cpu = CpuFigures { user_percent: 1.0, steal_percent: 2.0, idle_percent: 97.0, ..Default::default() };
        let disk = DiskFigures { device: "vda".into(), reads_per_s: 5.0, util_percent: 9.0, ..Default::default() };
        let series = SamplerSeries {
            interval_ms: 1000,
            devices: vec!["vda".into()],
            points: vec![
                SamplerPoint {
                    t_ms: 1000,
                    interval_ms: 1000,
                    step: Some("a".into()),
                    cpu: cpu.clone(),
                    disks: vec![disk.clone()],
                },
                SamplerPoint { t_ms: 2000, interval_ms: 1000, step: None, cpu: cpu.clone(), disks: vec![disk.clone()] },
            ],
            steps: vec![
                StepSummary {
                    step: "a".into(),
                    start_ms: 10,
                    end_ms: 1900,
                    cpu: cpu.clone(),
                    disks: vec![disk.clone()],
                },
                StepSummary { step: "a".into(), start_ms: 1900, end_ms: 1950, cpu, disks: vec![disk] },
            ],
            own_cpu_seconds: 0.01,
            wall_seconds: 2.0,
        };
        let mut builder = SeriesBuilder::new(1000, series.devices.clone(), 0.01, 2.0);
        for row in series_rows(&series) {
            builder.cpu_row(row.kind, row.start_ms, row.end_ms, row.step.map(str::to_string), cpu_values(row.cpu));
        }
        for row in series_rows(&series) {
            for disk in row.disks {
                let step = row.step.map(str::to_string);
                builder.disk_row(row.kind, row.start_ms, row.end_ms, step, disk.device.clone(), disk_values(disk));
            }
        }
        assert_eq!(builder.finish(), series);
    }
}
