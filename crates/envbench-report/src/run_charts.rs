//! Charts drawn from each run rather than from the matched results: a workload's scaling curves (throughput and
//! latency against concurrency, the knee marked), its timelines, the hosts of a fleet run, and the OS sampler's
//! series (CPU, memory, disk).

use crate::axis::Scale;
use crate::figures::Charts;
use crate::html::{cell, num, table};
use crate::svg::{LineChart, LineSeries};
use envbench_core::sampler::{DiskFigures, SamplerSeries};
use envbench_core::workload::{CurveMark, Registry, ScalingCurve};
use envbench_store::StoredRun;
use envbench_verdict::number;
use envbench_verdict::{Side, run_name};
use maud::{Markup, html};

/// A run's name in a chart: the side's name, plus the run's own when the side has other runs like it.
pub(crate) fn series_name(side: &Side, run: &StoredRun, alike: impl Fn(&StoredRun) -> bool) -> String {
    if side.runs.iter().filter(|r| alike(r)).count() > 1 {
        format!("{}: {}", side.name, run_name(run))
    } else {
        side.name.clone()
    }
}

pub(crate) fn has_series(run: &StoredRun) -> bool {
    run.series.as_ref().is_some_and(|s| !s.points.is_empty())
}

/// Throughput and latency against concurrency, one line per run of a workload that draws a scaling curve, the knee
/// marked and the latency target drawn.
pub(crate) fn scaling_curves(charts: &mut Charts, sides: &[Side], workload: &str, workloads: &Registry) -> Vec<Markup> {
    let mut throughput = Vec::new();
    let mut latency = Vec::new();
    let mut first: Option<ScalingCurve> = None;
    for side in sides {
        for run in side.runs.iter().filter(|r| r.summary.workload == workload) {
            let Some(curve) = workloads.of_run(run).scaling(run).filter(|c| !c.points.is_empty()) else { continue };
            let name = series_name(side, run, |r| r.summary.workload == workload);
            let knee = curve.knee.filter(|k| *k < curve.points.len());
            let word = |k: usize| {
                format!("{} {}={}", curve.mark.word(), curve.concurrency_symbol, number(curve.points[k].concurrency))
            };
            throughput.push(LineSeries {
                name: name.clone(),
                points: curve.points.iter().map(|p| (p.concurrency, p.throughput)).collect(),
                marked: knee.map(|k| (k, word(k))),
            });
            // A step with no such transaction has no response time to draw: left out, never drawn as 0.
            let kept: Vec<usize> = (0..curve.points.len()).filter(|i| curve.points[*i].latency.is_finite()).collect();
            latency.push(LineSeries {
                name,
                points: kept.iter().map(|i| (curve.points[*i].concurrency, curve.points[*i].latency)).collect(),
                marked: knee.and_then(|k| kept.iter().position(|i| *i == k).map(|at| (at, word(k)))),
            });
            if first.as_ref().is_none_or(|f| f.latency_target.is_none()) {
                first = Some(curve);
            }
        }
    }
    let Some(curve) = first else { return Vec::new() };
    // A curve needs two steps along it: one step is a number (the scorecard's), not a point on a 0-2 axis.
    let steps: std::collections::BTreeSet<u64> =
        throughput.iter().flat_map(|s| s.points.iter().map(|p| p.0.to_bits())).collect();
    if steps.len() < 2 {
        return Vec::new();
    }
    let max = throughput.iter().flat_map(|s| s.points.iter().map(|p| p.0)).fold(1.0, f64::max);
    let x_scale = if max >= 8.0 { Scale::Log2 } else { Scale::Linear };
    let x_label = format!("{}{}", curve.concurrency_label, if x_scale == Scale::Log2 { " (log scale)" } else { "" });
    let kind = |what: &str| format!("{workload}-{}", what.to_lowercase());
    let capacity = curve.mark == CurveMark::Capacity;
    let (throughput_note, latency_note, limit) = if capacity {
        (
            "The throughput at each offered rate; \"capacity\" marks the highest rate whose response times held the \
             service level.",
            "Each step's response time at the percentile the service level names, against the rate offered; the \
             dashed line is its limit, and \"capacity\" marks the highest rate within it.",
            "SLO",
        )
    } else {
        (
            "The knee is the highest throughput whose latency is within the target.",
            "Latency per step; the dashed line is the latency target.",
            "target",
        )
    };
    let throughput_chart = charts.lines(
        &kind(&curve.throughput_label),
        &LineChart {
            title: format!(
                "{}: {} against {}",
                workloads.title(workload),
                curve.throughput_label,
                curve.concurrency_label
            ),
            x_label: x_label.clone(),
            y_label: format!("{} (higher is better)", curve.throughput_label),
            series: throughput,
            x_scale,
            y_scale: Scale::Linear,
            reference: None,
            x_names: None,
            marks: Vec::new(),
        },
        throughput_note,
    );
    let latency_chart = charts.lines(
        &kind("latency"),
        &LineChart {
            title: format!(
                "{}: {} against {}",
                workloads.title(workload),
                curve.latency_label,
                curve.concurrency_label
            ),
            x_label,
            y_label: format!("{} (lower is better)", curve.latency_label),
            series: latency,
            x_scale,
            y_scale: Scale::Linear,
            reference: curve.latency_target.map(|t| (t, format!("{limit} {} {}", number(t), curve.latency_unit))),
            x_names: None,
            marks: Vec::new(),
        },
        latency_note,
    );
    // A capacity run is judged by its response times: that chart first, the throughput beside it.
    if capacity { vec![latency_chart, throughput_chart] } else { vec![throughput_chart, latency_chart] }
}

/// Throughput each second of each step, one chart per run (per test, for runs that keep several) of a workload that
/// keeps a timeline: ramp-up, steady state, stalls (checkpoints) and cliffs show here and nowhere else.
pub(crate) fn timelines(charts: &mut Charts, sides: &[Side], workload: &str, workloads: &Registry) -> Vec<Markup> {
    let mut out = Vec::new();
    for side in sides {
        for run in side.runs.iter().filter(|r| r.summary.workload == workload) {
            let name = series_name(side, run, |r| r.summary.workload == workload);
            for timeline in workloads.of_run(run).timelines(run) {
                if !timeline.lines.iter().any(|(_, p)| !p.is_empty()) {
                    continue;
                }
                let subject = timeline.subject.as_ref().map(|s| format!("{s}, ")).unwrap_or_default();
                let note = match &timeline.note {
                    Some(note) => note.as_str(),
                    None if timeline.marks.is_empty() => {
                        "One line per step; dips in the steady state are stalls (checkpoints, lock waits, a busy disk)."
                    }
                    None => {
                        "The shaded span is the steady-state window the sustained figure is the mean of; a vertical \
                         line marks the cliff, where throughput stayed below half the burst figure."
                    }
                };
                let better = if timeline.higher_is_better { " (higher is better)" } else { "" };
                out.push(
                    charts.lines(
                        &format!("{workload}-timeline"),
                        &LineChart {
                            title: format!(
                                "{}: {} over time, {subject}{name}",
                                workloads.title(workload),
                                timeline.y_label
                            ),
                            x_label: timeline.x_label.clone(),
                            y_label: format!("{}{better}", timeline.y_label),
                            series: timeline
                                .lines
                                .into_iter()
                                .map(|(name, points)| LineSeries { name, points, marked: None })
                                .collect(),
                            x_scale: Scale::Linear,
                            y_scale: Scale::Linear,
                            reference: None,
                            x_names: None,
                            marks: timeline.marks,
                        },
                        note,
                    ),
                );
            }
        }
    }
    out
}

/// Each fleet run's per-host breakdown: every step's shares with the start skew and each host's own sampler.
pub(crate) fn fleet_hosts(sides: &[Side], workload: &str) -> Markup {
    let mut out = Vec::new();
    for side in sides {
        for run in side.runs.iter().filter(|r| r.summary.workload == workload) {
            let Some(value) = run.attachments.get(envbench_core::fleet::FLEET_ATTACHMENT) else { continue };
            let Ok(fleet) = serde_json::from_value::<envbench_core::fleet::FleetDocument>(value.clone()) else {
                continue;
            };
            let name = series_name(side, run, |r| r.attachments.contains_key(envbench_core::fleet::FLEET_ATTACHMENT));
            let (headings, rows) = fleet.share_table();
            let text_columns = envbench_core::fleet::SHARE_TEXT_COLUMNS;
            let rows: Vec<Markup> = rows
                .iter()
                .map(|row| {
                    html! {
                        tr {
                            @for (column, value) in row.iter().enumerate() {
                                (if column < text_columns { cell(value) } else { num(value) })
                            }
                        }
                    }
                })
                .collect();
            out.push(html! {
                details class="fleet" open {
                    "\n" summary {
                        h3 { (name) ": " (fleet.hosts.len()) " hosts at once (" (fleet.transport) " transport), each host's share" }
                    }
                    "\n" (table(&headings, &rows))
                    @for host in fleet.hosts.iter().filter(|h| h.error.is_some()) {
                        p class="note" { (host.name) " took no (further) part: " (host.error.as_deref().unwrap_or("")) }
                        "\n"
                    }
                }
                "\n"
            });
        }
    }
    html! { @for part in &out { (part) } }
}

/// The device figures a chart shows: the top of the storage chain (the first device watched).
fn top_disk<'a>(series: &SamplerSeries, disks: &'a [DiskFigures]) -> Option<&'a DiskFigures> {
    series.devices.first().and_then(|name| disks.iter().find(|d| &d.device == name)).or_else(|| disks.first())
}

/// MB/s, IOPS and CPU (with steal) over time for one run.
pub(crate) fn sampler_charts(charts: &mut Charts, series: &SamplerSeries) -> Markup {
    let seconds = |t_ms: u64| t_ms as f64 / 1000.0;
    let line = |name: &str, read: &dyn Fn(&DiskFigures) -> f64| LineSeries {
        name: name.to_string(),
        points: series
            .points
            .iter()
            .filter_map(|p| top_disk(series, &p.disks).map(|d| (seconds(p.t_ms), read(d))))
            .collect(),
        marked: None,
    };
    let device = series.devices.first().cloned().unwrap_or_else(|| "disk".into());
    let time_chart = |title: String, y_label: &str, lines: Vec<LineSeries>| LineChart {
        title,
        x_label: "seconds since the start of sampling".into(),
        y_label: y_label.into(),
        series: lines,
        x_scale: Scale::Linear,
        y_scale: Scale::Linear,
        reference: None,
        x_names: None,
        marks: Vec::new(),
    };
    let mut out = Vec::new();
    if series.points.iter().any(|p| !p.disks.is_empty()) {
        out.push(charts.lines(
            "sampler-mbps",
            &time_chart(
                format!("{device}: throughput"),
                "MB/s (10^6 bytes/s)",
                vec![line("read MB/s", &|d| d.read_mb_per_s), line("write MB/s", &|d| d.write_mb_per_s)],
            ),
            "iostat's rMB/s and wMB/s per sampler interval.",
        ));
        out.push(charts.lines(
            "sampler-iops",
            &time_chart(
                format!("{device}: I/O per second"),
                "IOPS",
                vec![line("reads/s", &|d| d.reads_per_s), line("writes/s", &|d| d.writes_per_s)],
            ),
            "iostat's r/s and w/s per sampler interval.",
        ));
    }
    let cpu = |name: &str, read: &dyn Fn(&envbench_core::sampler::CpuFigures) -> f64| LineSeries {
        name: name.to_string(),
        points: series.points.iter().map(|p| (seconds(p.t_ms), read(&p.cpu))).collect(),
        marked: None,
    };
    out.push(charts.lines(
        "sampler-cpu",
        &time_chart(
            "CPU".into(),
            "% of all CPUs",
            vec![
                cpu("user", &|c| c.user_percent + c.nice_percent),
                cpu("system", &|c| c.system_percent + c.irq_percent),
                cpu("iowait", &|c| c.iowait_percent),
                cpu("steal", &|c| c.steal_percent),
            ],
        ),
        "Steal is time the hypervisor gave this VM's CPUs to others: how a VM sees a busy host.",
    ));
    html! { @for chart in &out { (chart) } }
}
