//! How a sampler series maps to the store's rows, shared by every backend so they cannot drift apart.
//!
//! `sampler_cpu` and `sampler_disk` hold one row per sampler interval (kind `point`) and per whole-step summary (kind
//! `step`), each with its time span, its step name and its figures; `sampler_series` holds the header.
//! `sampler_contention` holds who else used the machine, for the same points and steps and for the whole run (kind
//! `run`).

use crate::sql::SqlValue;
use envbench_core::sampler::{
    ContentionFigures, CpuFigures, DiskFigures, Pressure, RunContention, SamplerPoint, SamplerSeries, StallTimes,
    StepSummary,
};
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

/// The contention columns: [`contention_values`] fills the first eight, [`run_contention_values`] all of them.
pub(crate) const CONTENTION_COLUMNS: [&str; 13] = [
    "busy_cpu_seconds",
    "own_cpu_seconds",
    "cpu_some_us",
    "cpu_full_us",
    "io_some_us",
    "io_full_us",
    "memory_some_us",
    "memory_full_us",
    "steal_percent",
    "local_server_cpu_seconds",
    "drives_local_server",
    "own_storage_bytes",
    "pressure_note",
];

/// A point's or step's contention in [`CONTENTION_COLUMNS`] order (the whole-run columns NULL).
pub(crate) fn contention_values(c: &ContentionFigures) -> Vec<SqlValue> {
    let stall = |pick: fn(&Pressure) -> u64| SqlValue::from(c.pressure.as_ref().map(|p| pick(p) as i64));
    let mut values = vec![
        c.busy_cpu_seconds.into(),
        c.own_cpu_seconds.into(),
        stall(|p| p.cpu.some_us),
        stall(|p| p.cpu.full_us),
        stall(|p| p.io.some_us),
        stall(|p| p.io.full_us),
        stall(|p| p.memory.some_us),
        stall(|p| p.memory.full_us),
    ];
    values.resize(CONTENTION_COLUMNS.len(), SqlValue::Null);
    values
}

/// The whole run's contention in [`CONTENTION_COLUMNS`] order.
pub(crate) fn run_contention_values(run: &RunContention, pressure_note: Option<&str>) -> Vec<SqlValue> {
    let mut values = contention_values(&run.contention);
    values.truncate(8);
    values.extend([
        run.steal_percent.into(),
        run.local_server_cpu_seconds.into(),
        i64::from(run.drives_local_server).into(),
        run.own_storage_bytes.map(|b| b as i64).into(),
        pressure_note.into(),
    ]);
    values
}

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
    pub contention: Option<&'a ContentionFigures>,
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
        contention: p.contention.as_ref(),
    });
    let steps = series.steps.iter().map(|s| SeriesRow {
        kind: "step",
        start_ms: s.start_ms as i64,
        end_ms: s.end_ms as i64,
        step: Some(s.step.as_str()),
        cpu: &s.cpu,
        disks: &s.disks,
        contention: s.contention.as_ref(),
    });
    points.chain(steps)
}

/// The values of one `sampler_contention` row, in [`CONTENTION_COLUMNS`] order.
pub(crate) struct ContentionRow {
    pub busy_cpu_seconds: f64,
    pub own_cpu_seconds: f64,
    /// cpu, io and memory stall microseconds, some then full.
    pub stalls: [Option<i64>; 6],
    pub steal_percent: Option<f64>,
    pub local_server_cpu_seconds: Option<f64>,
    pub drives_local_server: Option<i64>,
    pub own_storage_bytes: Option<i64>,
    pub pressure_note: Option<String>,
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
                whole_run: None,
                pressure_note: None,
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
                contention: None,
            });
        } else {
            let step = step.unwrap_or_default();
            self.step_index.insert((start_ms, end_ms, step.clone()), self.series.steps.len());
            self.series.steps.push(StepSummary { step, start_ms, end_ms, cpu, disks: Vec::new(), contention: None });
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

    /// A `sampler_contention` row (its values in [`CONTENTION_COLUMNS`] order, read with [`ContentionRow`]): attached
    /// to the point or step of the same span, or the whole run's.
    pub(crate) fn contention_row(
        &mut self,
        kind: &str,
        start_ms: i64,
        end_ms: i64,
        step: Option<String>,
        row: ContentionRow,
    ) {
        let (start_ms, end_ms) = (start_ms as u64, end_ms as u64);
        let stall = |some: Option<i64>, full: Option<i64>| StallTimes {
            some_us: some.unwrap_or(0) as u64,
            full_us: full.unwrap_or(0) as u64,
        };
        let [cpu_some, cpu_full, io_some, io_full, memory_some, memory_full] = row.stalls;
        let figures = ContentionFigures {
            busy_cpu_seconds: row.busy_cpu_seconds,
            own_cpu_seconds: row.own_cpu_seconds,
            pressure: cpu_some.map(|_| Pressure {
                cpu: stall(cpu_some, cpu_full),
                io: stall(io_some, io_full),
                memory: stall(memory_some, memory_full),
            }),
        };
        match kind {
            "point" => {
                if let Some(&index) = self.point_index.get(&end_ms) {
                    self.series.points[index].contention = Some(figures);
                }
            }
            "step" => {
                if let Some(&index) = self.step_index.get(&(start_ms, end_ms, step.unwrap_or_default())) {
                    self.series.steps[index].contention = Some(figures);
                }
            }
            _ => {
                self.series.whole_run = Some(RunContention {
                    contention: figures,
                    steal_percent: row.steal_percent.unwrap_or(0.0),
                    local_server_cpu_seconds: row.local_server_cpu_seconds.unwrap_or(0.0),
                    drives_local_server: row.drives_local_server.unwrap_or(0) != 0,
                    own_storage_bytes: row.own_storage_bytes.map(|b| b as u64),
                });
                self.series.pressure_note = row.pressure_note;
            }
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
                    contention: None,
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
            steps: vec![
                StepSummary {
                    step: "a".into(),
                    start_ms: 10,
                    end_ms: 1900,
                    cpu: cpu.clone(),
                    disks: vec![disk.clone()],
                    contention: None,
                },
                StepSummary {
                    step: "a".into(),
                    start_ms: 1900,
                    end_ms: 1950,
                    cpu,
                    disks: vec![disk],
                    contention: None,
                },
            ],
            own_cpu_seconds: 0.01,
            wall_seconds: 2.0,
            whole_run: None,
            pressure_note: None,
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
