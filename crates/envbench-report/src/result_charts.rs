//! Charts of a workload's matched results: each side's change against the baseline (a forest plot per test), grouped
//! bars of the absolute values split by magnitude, the read/write grid of a disk workload in CrystalDiskMark's order,
//! and the latency percentiles.

use crate::axis::Scale;
use crate::change_chart::{ChangeChart, ChangePoint, ChangeRow};
use crate::figures::{Charted, Charts};
use crate::html::{cell, num, table};
use crate::render::{change_text, metric_title, says_better, significance_text};
use crate::svg::{BarChart, BarSeries, LineChart, LineSeries};
use envbench_core::model::{Direction, metric_kind};
use envbench_core::workload::Registry;
use envbench_verdict::Comparison;
use envbench_verdict::ComparisonRow;
use envbench_verdict::number;
use envbench_verdict::{headline_rows, test_change};
use maud::{Markup, html};

pub(crate) fn baseline_name(comparison: &Comparison) -> String {
    comparison.sides.first().map(|s| format!("{}: {}", s.letter, s.name)).unwrap_or_default()
}

/// Each test's change against the baseline by the workload's headline metric: the headline chart (a number when
/// there is only one change to show); every other metric's changes in the rest.
pub(crate) fn relative_charts(
    charts: &mut Charts,
    comparison: &Comparison,
    workload: &str,
    workloads: &Registry,
) -> Charted {
    let mut out = Charted::default();
    let headline = headline_rows(&comparison.rows, workload, workloads);
    if headline.is_empty() {
        return out;
    }
    let metrics: Vec<String> = {
        let mut metrics: Vec<String> = Vec::new();
        for row in &headline {
            let title = metric_title(&row.metric);
            if !metrics.contains(&title) {
                metrics.push(title);
            }
        }
        metrics
    };
    let points = headline.len() * (comparison.sides.len() - 1);
    out.headline = Some(if points > 1 {
        charts.changes(
            "relative",
            &change_rows_chart(
                comparison,
                &format!(
                    "{}: change per test against the baseline ({})",
                    workloads.title(workload),
                    metrics.join(", ")
                ),
                &headline,
            ),
            "Points: each test's speed factor against the baseline (right is better); whiskers: 95% interval \
             of the change (from the runs when a side has several); filled: significant, hollow and ~: not significant, within noise or too \
             few samples.",
        )
    } else {
        html! { p class="single-change" { (change_caption(&headline)) } "\n" }
    });
    let mut others: Vec<(String, String)> = Vec::new();
    for row in comparison.rows.iter().filter(|r| r.workload == workload) {
        if !headline.iter().any(|h| std::ptr::eq(*h, row))
            && !others.iter().any(|(m, u)| *m == row.metric && *u == row.unit)
        {
            others.push((row.metric.clone(), row.unit.clone()));
        }
    }
    for (metric, unit) in &others {
        let rows: Vec<&ComparisonRow> = comparison
            .rows
            .iter()
            .filter(|r| r.workload == workload && r.metric == *metric && r.unit == *unit)
            .filter(|r| !headline.iter().any(|h| std::ptr::eq(*h, *r)))
            .collect();
        let title = format!("{}: change of {} per test", workloads.title(workload), metric_title(metric));
        out.rest.push(charts.changes(
            "relative",
            &change_rows_chart(comparison, &title, &rows),
            "Right is better whatever the metric's direction.",
        ));
        out.count += 1;
    }
    out
}

fn change_rows_chart(comparison: &Comparison, title: &str, rows: &[&ComparisonRow]) -> ChangeChart {
    ChangeChart {
        title: title.to_string(),
        baseline: baseline_name(comparison),
        series: comparison.sides.iter().skip(1).map(|s| format!("{}: {}", s.letter, s.name)).collect(),
        rows: rows
            .iter()
            .map(|row| ChangeRow {
                label: row.test_name(),
                points: (1..comparison.sides.len())
                    .map(|side| {
                        test_change(row, side).map(|c| ChangePoint {
                            ratio: c.ratio,
                            interval: c.interval,
                            significant: c.significant,
                        })
                    })
                    .collect(),
            })
            .collect(),
    }
}

fn direction_words(direction: Direction) -> &'static str {
    match direction {
        Direction::HigherIsBetter => "higher is better",
        Direction::LowerIsBetter => "lower is better",
    }
}

/// Values within one bar chart span at most this factor; tests beyond it get a chart of their own, so that 17,545
/// and 1,444 IOPS never share a linear axis.
const ONE_MAGNITUDE: f64 = 10.0;

/// Split rows into groups whose largest values are within [`ONE_MAGNITUDE`] of each other (largest first), each
/// group in the rows' own order.
fn magnitude_groups<'a>(rows: &[&'a ComparisonRow]) -> Vec<Vec<&'a ComparisonRow>> {
    let top = |row: &ComparisonRow| {
        row.cells.iter().flatten().map(|c| c.summary.max.max(c.summary.median)).fold(0.0f64, f64::max)
    };
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by(|&a, &b| top(rows[b]).total_cmp(&top(rows[a])));
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut group_top = f64::NAN;
    for index in order {
        let value = top(rows[index]);
        match groups.last_mut() {
            Some(group) if value * ONE_MAGNITUDE >= group_top || value <= 0.0 => group.push(index),
            _ => {
                groups.push(vec![index]);
                group_top = value;
            }
        }
    }
    groups
        .into_iter()
        .map(|mut group| {
            group.sort_unstable();
            group.into_iter().map(|i| rows[i]).collect()
        })
        .collect()
}

/// Grouped bar charts of a workload's absolute values: per metric, one chart per magnitude (a group per test, a bar
/// per side: median, whisker min..max). A chart would hold a single bar (one test, one side) is a number in a table
/// instead. The headline metric's first chart (its largest magnitude) offers the headline; the report's `workload_section`
/// puts a comparison's change chart and a disk grid before it, so there it is collapsed with the rest.
pub(crate) fn bar_charts(
    charts: &mut Charts,
    comparison: &Comparison,
    workload: &str,
    workloads: &Registry,
) -> Charted {
    let compared = comparison.sides.len() > 1;
    let tests_word = workloads.read_back(workload).tests_word();
    let mut out = Charted::default();
    let mut single: Vec<Markup> = Vec::new();
    let mut metrics: Vec<(&str, &str, Direction)> = Vec::new();
    for row in comparison.rows.iter().filter(|r| r.workload == workload) {
        if !metrics.iter().any(|(m, u, _)| *m == row.metric && *u == row.unit) {
            metrics.push((&row.metric, &row.unit, row.direction));
        }
    }
    let headline: Vec<String> =
        headline_rows(&comparison.rows, workload, workloads).iter().map(|r| r.metric.clone()).collect();
    // The headline metric first, so that it offers the headline.
    metrics.sort_by_key(|(metric, _, _)| !headline.iter().any(|h| h == metric));
    for (metric, unit, direction) in metrics {
        let rows: Vec<&ComparisonRow> =
            comparison.rows.iter().filter(|r| r.workload == workload && r.metric == metric && r.unit == unit).collect();
        let groups = magnitude_groups(&rows);
        let count = groups.len();
        for (index, group) in groups.into_iter().enumerate() {
            let bars = group.iter().map(|r| r.cells.iter().flatten().count()).sum::<usize>();
            if bars <= 1 {
                for row in &group {
                    let values: Vec<String> = row
                        .cells
                        .iter()
                        .zip(&comparison.sides)
                        .filter_map(|(c, side)| c.as_ref().map(|c| (c, side)))
                        .map(|(c, side)| {
                            let who = if compared { format!("{}: ", side.letter) } else { String::new() };
                            format!("{who}{} {unit}", number(c.summary.median))
                        })
                        .collect();
                    single.push(html! {
                        tr { (cell(&row.test_name())) (cell(&metric_title(metric))) (num(&values.join(", "))) }
                    });
                }
                continue;
            }
            let part = if count > 1 { format!(" ({} of {count}, by magnitude)", index + 1) } else { String::new() };
            let chart = BarChart {
                title: format!("{}: {} {tests_word}{part}", workloads.title(workload), metric_title(metric)),
                value_label: format!("{unit} ({})", direction_words(direction)),
                categories: group.iter().map(|r| r.test_name()).collect(),
                series: comparison
                    .sides
                    .iter()
                    .enumerate()
                    .map(|(side, info)| BarSeries {
                        name: format!("{}: {}", info.letter, info.name),
                        values: group.iter().map(|r| r.cells[side].as_ref().map(|c| c.summary.median)).collect(),
                        ranges: group
                            .iter()
                            .map(|r| {
                                r.cells[side]
                                    .as_ref()
                                    .filter(|c| c.summary.count > 1)
                                    .map(|c| (c.summary.min, c.summary.max))
                            })
                            .collect(),
                    })
                    .collect(),
            };
            let caption = change_caption(&group);
            let figure = charts.bars("bars", &chart, &caption);
            if out.headline.is_none() && headline.iter().any(|m| m == metric) {
                out.headline = Some(figure);
            } else {
                out.rest.push(figure);
                out.count += 1;
            }
        }
    }
    if !single.is_empty() {
        let headings: Vec<String> = ["Test", "Metric", "Median"].map(String::from).to_vec();
        out.rest.push(html! { h3 { "Single figures" } "\n" (table(&headings, &single)) "\n" });
    }
    out
}

/// The grid's operations: columns of a CrystalDiskMark-style grid.
const GRID_OPERATIONS: [(&str, &str); 2] = [("read", "Read"), ("write", "Write")];

/// The profiles (rows) of a workload's read/write grid, in CrystalDiskMark's order: sequential before random, and
/// within each the deepest queue (queue depth times threads) first, so RND4K Q1T1 ends the grid as it ends CDM's.
fn grid_profiles(comparison: &Comparison, workload: &str) -> Vec<(String, String)> {
    let mut profiles: Vec<(String, String)> = Vec::new();
    for row in comparison.rows.iter().filter(|r| r.workload == workload && r.variant.is_none()) {
        let Some((profile, operation)) = row.test_id.rsplit_once(' ') else { continue };
        if GRID_OPERATIONS.iter().any(|(op, _)| *op == operation) && !profiles.iter().any(|(p, _)| p == profile) {
            profiles.push((profile.to_string(), operation.to_string()));
        }
    }
    profiles.sort_by_key(|(profile, _)| grid_order(profile));
    profiles
}

/// Where a profile such as `SEQ1M Q8T1` or `RND4K Q1T1` sorts in the grid: sequential first, then the deepest queue;
/// names of another shape keep their place after them.
fn grid_order(profile: &str) -> (u8, std::cmp::Reverse<u64>) {
    let random = profile.starts_with("RND");
    let depth = profile.split_whitespace().find_map(|word| {
        let (queue, threads) = word.strip_prefix('Q')?.split_once('T')?;
        Some(queue.parse::<u64>().ok()? * threads.parse::<u64>().ok()?)
    });
    match depth {
        Some(depth) => (u8::from(random), std::cmp::Reverse(depth)),
        None => (2, std::cmp::Reverse(0)),
    }
}

/// The metrics a grid cell shows: the first as the big figure, the others below it (what CrystalDiskMark shows as
/// MB/s, IOPS and microseconds).
const GRID_METRICS: [&str; 3] = ["throughput", "iops", "latency_mean"];

/// A CrystalDiskMark-style grid of a disk-shaped workload: a row per profile (SEQ1M Q8T1, RND4K Q1T1...), Read and
/// Write columns per side, each cell MB/s over IOPS and mean latency; in a comparison each side's cell says its
/// change against the baseline. Empty unless at least two profiles have tests named `<profile> read` or
/// `<profile> write` (the disk suite's `SEQ1M Q8T1 read`, `RND4K Q1T1 write`).
pub(crate) fn read_write_grid(comparison: &Comparison, workload: &str) -> Option<Markup> {
    let profiles = grid_profiles(comparison, workload);
    if profiles.len() < 2 {
        return None;
    }
    let find = |test: &str, metric: &str| {
        comparison
            .rows
            .iter()
            .find(|r| r.workload == workload && r.variant.is_none() && r.test_id == test && r.metric == metric)
    };
    let compared = comparison.sides.len() > 1;
    let mut headings = vec!["".to_string()];
    for (_, name) in GRID_OPERATIONS {
        for side in &comparison.sides {
            headings.push(if compared { format!("{name} {}", side.letter) } else { name.to_string() });
        }
    }
    let cell_of = |test: &str, side: usize| {
        let mut lines: Vec<(bool, String)> = Vec::new();
        let mut change_line = None;
        for (index, metric) in GRID_METRICS.iter().enumerate() {
            let Some(found) = find(test, metric) else { continue };
            let Some(cell) = &found.cells[side] else { continue };
            lines.push((index == 0, format!("{} {}", number(cell.summary.median), found.unit)));
            if index == 0
                && let Some(change) = &cell.change
            {
                let text = change_text(change, found.direction, metric_kind(&found.metric, &found.unit));
                let class = if !change.significance.is_significant() {
                    "same"
                } else if says_better(&text) {
                    "better"
                } else {
                    "worse"
                };
                change_line = Some((class, text, significance_text(change.significance, change.p_value)));
            }
        }
        html! {
            @if lines.is_empty() {
                td class="num" { "-" }
            } @else {
                td class="num grid" {
                    @for (at, (bold, value)) in lines.iter().enumerate() {
                        @if at > 0 { br; }
                        @if *bold { b { (value) } } @else { (value) }
                    }
                    @if let Some((class, text, significance)) = &change_line {
                        br; span class=(class) { (text) " " (significance) }
                    }
                }
            }
        }
    };
    let rows: Vec<Markup> = profiles
        .iter()
        .map(|(profile, _)| {
            html! {
                tr {
                    th scope="row" { (profile) }
                    @for (operation, _) in GRID_OPERATIONS {
                        @for side in 0..comparison.sides.len() {
                            (cell_of(&format!("{profile} {operation}"), side))
                        }
                    }
                }
            }
        })
        .collect();
    Some(html! {
        div class="disk-grid" data-grid="read-write" {
            (table(&headings, &rows))
            p class="note" {
                "Medians: MB/s (10^6 bytes/s) in bold, then IOPS and mean latency; the change is against A, by MB/s."
            }
        }
        "\n"
    })
}

/// A caption naming each side's change per test, so the chart's message survives without colour.
fn change_caption(rows: &[&ComparisonRow]) -> String {
    let mut parts = Vec::new();
    for row in rows {
        for (side, cell) in row.cells.iter().enumerate().skip(1) {
            if let Some(change) = cell.as_ref().and_then(|c| c.change.as_ref())
                && change.ratio.is_some()
            {
                parts.push(format!(
                    "{} {}: {} ({})",
                    row.test_name(),
                    envbench_verdict::side_letter(side),
                    change_text(change, row.direction, metric_kind(&row.metric, &row.unit)),
                    significance_text(change.significance, change.p_value)
                ));
            }
        }
    }
    if parts.is_empty() {
        "Bars: medians; whiskers: min..max of the samples.".to_string()
    } else {
        format!("Bars: medians; whiskers: min..max. Against A: {}.", parts.join("; "))
    }
}

/// The latency percentiles shown in percentile charts, in order, with their axis names.
const PERCENTILES: [(&str, &str); 6] = [
    ("latency_p50", "p50"),
    ("latency_p90", "p90"),
    ("latency_p95", "p95"),
    ("latency_p99", "p99"),
    ("latency_p99_9", "p99.9"),
    ("latency_max", "max"),
];

/// Latency percentile charts (log scale) per test of a workload that records several percentiles.
pub(crate) fn percentile_charts(
    charts: &mut Charts,
    comparison: &Comparison,
    workload: &str,
    workloads: &Registry,
) -> Vec<Markup> {
    let mut out = Vec::new();
    let mut tests: Vec<(String, String)> = Vec::new();
    for row in comparison.rows.iter().filter(|r| r.workload == workload) {
        if PERCENTILES.iter().any(|(m, _)| *m == row.metric)
            && !tests.iter().any(|(t, h)| *t == row.test_id && *h == row.parameters_hash)
        {
            tests.push((row.test_id.clone(), row.parameters_hash.clone()));
        }
    }
    for (test, hash) in tests {
        let rows: Vec<(usize, &ComparisonRow)> = PERCENTILES
            .iter()
            .enumerate()
            .filter_map(|(i, (metric, _))| {
                comparison
                    .rows
                    .iter()
                    .find(|r| {
                        r.workload == workload && r.test_id == test && r.parameters_hash == hash && r.metric == *metric
                    })
                    .map(|r| (i, r))
            })
            .collect();
        if rows.len() < 2 {
            continue;
        }
        let units: Vec<&str> = rows.iter().map(|(_, r)| r.unit.as_str()).collect();
        if units.iter().any(|u| *u != units[0]) {
            continue;
        }
        let chart = LineChart {
            title: format!("{}: latency percentiles, {}", workloads.title(workload), rows[0].1.test_name()),
            x_label: "percentile".into(),
            y_label: format!("{} (log scale, lower is better)", units[0]),
            series: comparison
                .sides
                .iter()
                .enumerate()
                .map(|(side, info)| LineSeries {
                    name: format!("{}: {}", info.letter, info.name),
                    points: rows
                        .iter()
                        .enumerate()
                        .filter_map(|(x, (_, r))| r.cells[side].as_ref().map(|c| (x as f64, c.summary.median)))
                        .collect(),
                    marked: None,
                })
                .collect(),
            x_scale: Scale::Linear,
            y_scale: Scale::Log10,
            reference: None,
            x_names: Some(rows.iter().map(|(i, _)| PERCENTILES[*i].1.to_string()).collect()),
            marks: Vec::new(),
        };
        let caption = rows
            .iter()
            .map(|(i, r)| {
                let values: Vec<String> = r
                    .cells
                    .iter()
                    .map(|c| c.as_ref().map(|c| number(c.summary.median)).unwrap_or_else(|| "-".into()))
                    .collect();
                format!("{} {}", PERCENTILES[*i].1, values.join(" / "))
            })
            .collect::<Vec<_>>()
            .join("; ");
        out.push(charts.lines("percentiles", &chart, &format!("Medians in {} ({caption}).", units[0])));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::grid_order;

    #[test]
    fn the_grid_reads_in_crystaldiskmarks_order() {
        let mut profiles = vec!["RND4K Q1T1", "RND4K Q32T1", "SEQ1M Q1T1", "SEQ1M Q8T1", "MIX 70/30"];
        profiles.sort_by_key(|p| grid_order(p));
        assert_eq!(profiles, ["SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1", "MIX 70/30"]);
    }
}
