//! The HTML report: one self-contained file (inline CSS and SVG, no scripts, fonts or images from anywhere) with the
//! comparison table, charts and the environment table.
//!
//! Everything is driven by the stored result model (workload, test, metric, unit, direction): a new workload gets its
//! table rows and grouped bar charts without any change here. What is particular to a workload comes from its own
//! crate through the [`Registry`]: the word for its tests in chart titles, and the scaling curve of a workload that
//! sweeps a concurrency (throughput and latency against it, the knee marked; it replaces the percentile charts).

use crate::compare::{Comparison, compare};
use crate::html::{cell, escape, num, page, table};
use crate::render::{
    LEGEND, cells, change_text, geomean_cells, headings, metric_title, says_better, says_worse, significance_text,
    verdict_evidence, verdict_heading, workloads,
};
use crate::rows::ComparisonRow;
use crate::side::{Side, run_name};
use crate::svg::{
    BarChart, BarSeries, ChangeChart, ChangePoint, ChangeRow, LineChart, LineSeries, Scale, bar_chart, change_chart,
    line_chart,
};
use crate::verdict::{Decision, WorkloadVerdict, headline_rows, test_change};
use crate::words::number;
use envbench_core::model::{Direction, metric_kind};
use envbench_core::sampler::{DiskFigures, SamplerSeries};
use envbench_core::stats::Summary;
use envbench_core::workload::{Registry, ScalingCurve};
use envbench_store::StoredRun;
use std::fmt::Write;

/// The latency percentiles shown in percentile charts, in order, with their axis names.
const PERCENTILES: [(&str, &str); 6] = [
    ("latency_p50", "p50"),
    ("latency_p90", "p90"),
    ("latency_p95", "p95"),
    ("latency_p99", "p99"),
    ("latency_p99_9", "p99.9"),
    ("latency_max", "max"),
];

/// The whole report for some sides (the first is the baseline) as one HTML document.
pub fn render_report(sides: &[Side], workloads: &Registry) -> String {
    let comparison = compare(sides, workloads);
    render_report_for(&comparison, sides, workloads)
}

/// The report for a comparison already made of these sides.
pub fn render_report_for(comparison: &Comparison, sides: &[Side], workloads: &Registry) -> String {
    let names: Vec<&str> = comparison.sides.iter().map(|s| s.name.as_str()).collect();
    let title = format!("envbench report: {}", names.join(" vs "));
    let body = format!("<h1>{}</h1>\n{}", escape(&title), report_sections(comparison, sides, workloads));
    page(&title, &body)
}

/// A running count of charts, so every chart's SVG ids are unique in the page.
#[derive(Default)]
pub struct Charts {
    count: usize,
}

impl Charts {
    fn next_id(&mut self) -> String {
        self.count += 1;
        format!("chart{}", self.count)
    }

    /// A figure holding a bar chart; `kind` names the chart family (`bars`, `percentiles`...) in `data-chart`.
    pub fn bars(&mut self, kind: &str, chart: &BarChart, caption: &str) -> String {
        let id = self.next_id();
        figure(kind, &bar_chart(chart, &id), caption)
    }

    /// A figure holding a change chart (a forest plot against the baseline).
    pub fn changes(&mut self, kind: &str, chart: &ChangeChart, caption: &str) -> String {
        let id = self.next_id();
        figure(kind, &change_chart(chart, &id), caption)
    }

    /// A figure holding a line chart.
    pub fn lines(&mut self, kind: &str, chart: &LineChart, caption: &str) -> String {
        let id = self.next_id();
        figure(kind, &line_chart(chart, &id), caption)
    }
}

fn figure(kind: &str, svg: &str, caption: &str) -> String {
    format!(
        "<figure class=\"chart\" data-chart=\"{}\">{svg}<figcaption class=\"note\">{}</figcaption></figure>\n",
        escape(kind),
        escape(caption)
    )
}

/// The report's sections without the page around them (the web viewer frames them with its navigation): the
/// answer first (the verdict against the baseline, or a single run's scorecard), then per workload its charts with
/// the tables collapsed, then the OS sampler and the environment, collapsed too.
pub fn report_sections(comparison: &Comparison, sides: &[Side], workloads: &Registry) -> String {
    let mut charts = Charts::default();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<p class=\"note\">Made by envbench {} at {} UTC; the first side is the baseline.</p>",
        escape(envbench_core::TOOL_VERSION),
        escape(&envbench_core::model::now_utc().replace('T', " ").replace('Z', "")),
    );
    if comparison.sides.len() > 1 {
        out.push_str(&verdict_section(&mut charts, comparison));
    } else {
        out.push_str(&scorecard_section(sides, workloads));
    }
    out.push_str(&sides_section(comparison));
    if comparison.sides.len() > 1 {
        out.push_str("<h2>Environment differences</h2>\n<ul>\n");
        if comparison.differences.is_empty() {
            out.push_str("<li>none found in the fingerprints</li>\n");
        }
        for difference in &comparison.differences {
            let _ = writeln!(out, "<li>{}</li>", escape(difference));
        }
        out.push_str("</ul>\n");
    }
    if comparison.rows.is_empty() {
        out.push_str("<p>No result matches across the sides.</p>\n");
    }
    let headings = headings(comparison);
    for workload in self::workloads(comparison) {
        out.push_str(&workload_section(&mut charts, comparison, sides, &workload, workloads, &headings));
    }
    out.push_str(&unmatched_section(comparison));
    let sampled: Vec<(String, &StoredRun)> = sides
        .iter()
        .flat_map(|side| side.runs.iter().map(move |run| (series_name(side, run, has_series), run)))
        .filter(|(_, run)| has_series(run))
        .collect();
    if !sampled.is_empty() {
        out.push_str("<details class=\"sampler\">\n<summary><h2>OS sampler</h2></summary>\n");
        for (name, run) in sampled {
            let _ = writeln!(out, "<h3>{}</h3>", escape(&name));
            out.push_str(&sampler_charts(&mut charts, run.series.as_ref().expect("filtered on series")));
        }
        out.push_str("</details>\n");
    }
    out.push_str(&environment_section(comparison));
    let _ = writeln!(out, "<p class=\"note legend\">{}</p>", escape(LEGEND));
    out
}

/// One workload: its headline first (a read/write grid for disk-shaped tests, then at most one chart: the change
/// of every test against the baseline in a comparison, the scaling curve, timeline or headline bars of a single
/// run), and everything else (the other metrics, percentiles, timelines, per-host shares, the table) collapsed.
fn workload_section(
    charts: &mut Charts,
    comparison: &Comparison,
    sides: &[Side],
    workload: &str,
    workloads: &Registry,
    headings: &[String],
) -> String {
    let compared = comparison.sides.len() > 1;
    let title = workloads.title(workload);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<section class=\"workload\" id=\"workload-{}\">\n<h2>{} <span class=\"note\">({})</span></h2>",
        escape(&slug(workload)),
        escape(title),
        escape(workload)
    );
    let grid = read_write_grid(comparison, workload);
    out.push_str(&grid);
    // Which part offers the headline, in order: a comparison's change chart; a single run's scaling curve, timeline
    // or headline bars. A disk-shaped grid is the headline itself, so nothing after it offers one.
    let curves = Charted::later(scaling_curves(charts, sides, workload, workloads));
    let lines = Charted::later(timelines(charts, sides, workload, workloads));
    let bars = bar_charts(charts, comparison, workload, workloads);
    let parts = if compared {
        vec![relative_charts(charts, comparison, workload, workloads), bars, curves, lines]
    } else if grid.is_empty() {
        vec![curves, lines, bars]
    } else {
        vec![Charted::none(), bars, curves, lines]
    };
    let mut more = Charted::default();
    for part in parts {
        more.add(part);
    }
    more.add(Charted::later(percentile_charts(charts, comparison, workload, workloads)));
    out.push_str(more.headline.as_deref().unwrap_or_default());
    let fleet = fleet_hosts(sides, workload);
    let rows = comparison.rows.iter().filter(|r| r.workload == workload).count();
    let _ = writeln!(
        out,
        "<details class=\"more\"><summary>More on {}: {}{rows} result{} in a table</summary>",
        escape(title),
        match more.count {
            0 => String::new(),
            1 => "1 more chart, ".to_string(),
            n => format!("{n} more charts, "),
        },
        if rows == 1 { "" } else { "s" }
    );
    out.push_str(&more.rest);
    out.push_str(&fleet);
    out.push_str(&workload_table(comparison, workload, headings));
    out.push_str("</details>\n</section>\n");
    out
}

/// A workload's figures split into its one headline (shown) and the rest (collapsed), with a count of the charts
/// collapsed. The first part to offer a headline keeps it; later ones go to the rest.
#[derive(Default)]
struct Charted {
    /// `Some` once something took the headline place (an empty text when that is not a chart, the grid).
    headline: Option<String>,
    rest: String,
    count: usize,
}

impl Charted {
    /// The headline is taken by something that is not a chart (the read/write grid): whatever is added goes below.
    fn none() -> Charted {
        Charted { headline: Some(String::new()), ..Charted::default() }
    }

    /// Charts with no headline of their own: the first becomes the headline when nothing else offered one.
    fn later(figures: Vec<String>) -> Charted {
        let mut figures = figures.into_iter();
        let headline = figures.next();
        let rest: Vec<String> = figures.collect();
        Charted { headline, count: rest.len(), rest: rest.concat() }
    }

    fn add(&mut self, other: Charted) {
        match (&self.headline, other.headline) {
            (None, headline) => self.headline = headline,
            (Some(_), Some(headline)) => {
                self.rest.push_str(&headline);
                self.count += 1;
            }
            (Some(_), None) => {}
        }
        self.rest.push_str(&other.rest);
        self.count += other.count;
    }
}

/// An id-safe form of a name: letters, digits and dashes.
fn slug(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect()
}

/// The answer first: per side, each workload's change with its interval, test counts and explanations, and a chart
/// of every workload's change against the baseline.
fn verdict_section(charts: &mut Charts, comparison: &Comparison) -> String {
    let mut out = String::from("<section id=\"verdict\">\n<h2>Verdict</h2>\n");
    for side in &comparison.verdicts {
        let _ = writeln!(out, "<h3>{}</h3>", escape(&verdict_heading(comparison, side)));
        if side.workloads.is_empty() {
            out.push_str("<p>No result matches the baseline.</p>\n");
            continue;
        }
        out.push_str("<ul class=\"verdict\">\n");
        for workload in &side.workloads {
            let class = verdict_class(workload);
            let _ = write!(
                out,
                "<li class=\"{class}\"><b>{}</b>: <span class=\"{class}\">{}</span>. {}",
                escape(&workload.title),
                escape(&workload.change_words()),
                escape(&verdict_evidence(workload))
            );
            if !workload.explanations.is_empty() {
                out.push_str("<ul>");
                for sentence in &workload.explanations {
                    let _ = write!(out, "<li>{}</li>", escape(sentence));
                }
                out.push_str("</ul>");
            }
            out.push_str("</li>\n");
        }
        out.push_str("</ul>\n");
        for sentence in &side.disturbance {
            let _ = writeln!(out, "<p class=\"caution\"><b>Disturbed:</b> {}.</p>", escape(sentence));
        }
        if let Some(caution) = &side.caution {
            let _ = writeln!(out, "<p class=\"caution\">{}</p>", escape(caution));
        }
    }
    let mut titles: Vec<(String, String)> = Vec::new();
    for side in &comparison.verdicts {
        for workload in &side.workloads {
            if !titles.iter().any(|(w, _)| *w == workload.workload) {
                titles.push((workload.workload.clone(), workload.title.clone()));
            }
        }
    }
    if !titles.is_empty() {
        let chart = ChangeChart {
            title: "Change per workload against the baseline (geometric mean of its tests)".to_string(),
            baseline: baseline_name(comparison),
            series: comparison.verdicts.iter().map(|v| format!("{}: {}", v.letter, v.name)).collect(),
            rows: titles
                .iter()
                .map(|(workload, title)| ChangeRow {
                    label: title.clone(),
                    points: comparison
                        .verdicts
                        .iter()
                        .map(|side| {
                            side.workloads.iter().find(|w| w.workload == *workload).map(|w| ChangePoint {
                                ratio: w.ratio,
                                interval: w.interval,
                                significant: matches!(w.decision, Decision::Faster | Decision::Slower),
                            })
                        })
                        .collect(),
                })
                .collect(),
        };
        out.push_str(&charts.changes(
            "verdict",
            &chart,
            "Points: geometric mean of each workload's headline figures as a speed factor (right is better); \
             whiskers: 95% interval (from the runs when a side has several); filled: called faster or slower (the interval excludes \"same\" and the \
             change is beyond the noise margin); ~ marks the rest.",
        ));
    }
    out.push_str("</section>\n");
    out
}

/// `better`, `worse` or `same`, as the verdict decided: a change within the noise margin is `same` even when its
/// interval leaves out 1.
fn verdict_class(verdict: &WorkloadVerdict) -> &'static str {
    match verdict.decision {
        Decision::Faster => "better",
        Decision::Slower => "worse",
        Decision::Same | Decision::CannotTell => "same",
    }
}

fn baseline_name(comparison: &Comparison) -> String {
    comparison.sides.first().map(|s| format!("{}: {}", s.letter, s.name)).unwrap_or_default()
}

/// A single run's answer first: one card per run with its headline, its spread and whether it was noisy.
fn scorecard_section(sides: &[Side], workloads: &Registry) -> String {
    let mut out = String::from("<section id=\"scorecard\">\n<h2>Scorecard</h2>\n");
    // Said once, above the cards: a disturbed run's figures are lower than a quiet host gives.
    for side in sides {
        if let Some(count) = crate::verdict::disturbance_count(side) {
            let _ = writeln!(
                out,
                "<p class=\"caution\"><b>Disturbed:</b> {} was disturbed in {}: other work competed for the \
                 machine while it measured, so its figures may be below what this environment gives on a quiet host. \
                 Run again when the host is quiet before comparing it.</p>",
                escape(&side.name),
                escape(&count)
            );
        }
    }
    out.push_str("<div class=\"cards\">\n");
    for run in sides.iter().flat_map(|s| s.runs.iter()) {
        let cvs: Vec<f64> = run
            .results
            .iter()
            .filter_map(|r| Summary::of(&r.record.samples))
            .filter(|s| s.count > 1)
            .map(|s| s.cv)
            .collect();
        let noisy = run.results.iter().filter(|r| Summary::of(&r.record.samples).is_some_and(|s| s.is_noisy())).count();
        let spread = match Summary::of(&cvs) {
            None => "one sample per result: no spread".to_string(),
            Some(cv) => format!("spread: median cv {:.1}%, worst {:.1}%", cv.median * 100.0, cv.max * 100.0),
        };
        let _ = writeln!(
            out,
            "<div class=\"card{}\"><div class=\"card-title\">{} <span class=\"note\">{}</span></div>\
             <div class=\"headline\">{}</div><div class=\"note\">{}; {}</div>{}</div>",
            if noisy > 0 { " noisy-card" } else { "" },
            escape(workloads.title(&run.summary.workload)),
            escape(&format!("{} · {}", run_name(run), run.summary.status)),
            escape(&workloads.headline(run)),
            escape(&spread),
            escape(&format!("{} result{}", run.results.len(), if run.results.len() == 1 { "" } else { "s" })),
            [
                (noisy > 0).then(|| {
                    format!(
                        "<div class=\"flag\">noisy: {noisy} result{} over 5% cv</div>",
                        if noisy == 1 { "" } else { "s" }
                    )
                }),
                run.summary.disturbed.then(|| "<div class=\"flag\">disturbed</div>".to_string()),
            ]
            .into_iter()
            .flatten()
            .collect::<String>()
        );
    }
    out.push_str("</div>\n</section>\n");
    out
}

/// Each test's change against the baseline by the workload's headline metric: the headline chart (a number when
/// there is only one change to show); every other metric's changes in the rest.
fn relative_charts(charts: &mut Charts, comparison: &Comparison, workload: &str, workloads: &Registry) -> Charted {
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
        format!("<p class=\"single-change\">{}</p>\n", escape(&change_caption(&headline)))
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
        out.rest.push_str(&charts.changes(
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

/// A workload's comparison table with its geometric means, collapsed.
fn workload_table(comparison: &Comparison, workload: &str, headings: &[String]) -> String {
    let mut rows: Vec<String> =
        comparison.rows.iter().filter(|r| r.workload == workload).map(|row| comparison_row(row, headings)).collect();
    let count = rows.len();
    for geomean in comparison.geomeans.iter().filter(|g| g.workload == workload) {
        let cells: String = geomean_cells(geomean).iter().map(|c| num(c)).collect();
        rows.push(format!("<tr class=\"geomean\">{cells}</tr>"));
    }
    format!(
        "<details class=\"table\"><summary>Table: {count} result{} of {}</summary>\n{}\n</details>\n",
        if count == 1 { "" } else { "s" },
        escape(workload),
        table(headings, &rows)
    )
}

fn unmatched_section(comparison: &Comparison) -> String {
    if comparison.unmatched.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "<details class=\"unmatched\"><summary>Not compared: {} result{} match nothing on the other sides</summary>\n<ul>\n",
        comparison.unmatched.len(),
        if comparison.unmatched.len() == 1 { "" } else { "s" }
    );
    for u in &comparison.unmatched {
        let _ = writeln!(
            out,
            "<li>{}: {} <b>{}</b> {} — {}</li>",
            escape(&u.side),
            escape(&u.workload),
            escape(&u.test_id),
            escape(&u.metric),
            escape(&u.reason)
        );
    }
    out.push_str("</ul>\n</details>\n");
    out
}

/// The sides, one line each with their environment, and every run collapsed below.
fn sides_section(comparison: &Comparison) -> String {
    let mut out = String::from("<h2>Sides</h2>\n<ul class=\"sides\">\n");
    for side in &comparison.sides {
        let mut environments: Vec<&str> = Vec::new();
        for run in &side.runs {
            if !environments.contains(&run.environment.as_str()) {
                environments.push(&run.environment);
            }
        }
        let _ = writeln!(
            out,
            "<li><b>{}{}</b>: {} — {} run{} on {}</li>",
            escape(&side.letter),
            if side.letter == "A" { " (baseline)" } else { "" },
            escape(&side.name),
            side.runs.len(),
            if side.runs.len() == 1 { "" } else { "s" },
            escape(&environments.join("; "))
        );
    }
    out.push_str("</ul>\n");
    let mut rows = Vec::new();
    for side in &comparison.sides {
        for run in &side.runs {
            rows.push(format!(
                "<tr>{}{}{}{}{}{}{}{}</tr>",
                cell(&side.letter),
                cell(&side.name),
                cell(&run.uuid),
                cell(&run.name),
                cell(&run.workload),
                cell(&run.started_at),
                cell(&format!("{} on {}", run.status, run.host.as_deref().unwrap_or("?"))),
                cell(&run.environment)
            ));
        }
    }
    let headings: Vec<String> =
        ["", "Side", "Run", "Name", "Workload", "Started (UTC)", "Status", "Environment"].map(String::from).to_vec();
    let _ = writeln!(out, "<details class=\"runs\"><summary>Runs</summary>\n{}</details>", table(&headings, &rows));
    out
}

/// One comparison row as HTML, with classes for better and worse changes and noisy spreads.
fn comparison_row(row: &ComparisonRow, headings: &[String]) -> String {
    let texts = cells(row);
    let mut out = String::from("<tr>");
    for (i, text) in texts.iter().enumerate() {
        let heading = headings.get(i).map(String::as_str).unwrap_or("");
        if i < 3 || heading == "FLAGS" {
            out.push_str(&cell(text));
        } else if heading.contains(" vs ") {
            let class = if says_better(text) {
                "num better"
            } else if says_worse(text) {
                "num worse"
            } else {
                "num"
            };
            let _ = write!(out, "<td class=\"{class}\">{}</td>", escape(text));
        } else if text.ends_with('!') {
            let _ = write!(
                out,
                "<td class=\"num noisy\" title=\"noisy: coefficient of variation over 5%\">{}</td>",
                escape(text)
            );
        } else {
            out.push_str(&num(text));
        }
    }
    out.push_str("</tr>");
    out
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
/// instead. The headline metric's first chart (its largest magnitude) offers the headline; [`workload_section`]
/// puts a comparison's change chart and a disk grid before it, so there it is collapsed with the rest.
fn bar_charts(charts: &mut Charts, comparison: &Comparison, workload: &str, workloads: &Registry) -> Charted {
    let compared = comparison.sides.len() > 1;
    let tests_word = workloads.tests_word(workload);
    let mut out = Charted::default();
    let mut single: Vec<String> = Vec::new();
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
                    single.push(format!(
                        "<tr>{}{}{}</tr>",
                        cell(&row.test_name()),
                        cell(&metric_title(metric)),
                        num(&values.join(", "))
                    ));
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
                out.rest.push_str(&figure);
                out.count += 1;
            }
        }
    }
    if !single.is_empty() {
        let headings: Vec<String> = ["Test", "Metric", "Median"].map(String::from).to_vec();
        let _ = writeln!(out.rest, "<h3>Single figures</h3>\n{}", table(&headings, &single));
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
fn read_write_grid(comparison: &Comparison, workload: &str) -> String {
    let profiles = grid_profiles(comparison, workload);
    if profiles.len() < 2 {
        return String::new();
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
    let mut rows = Vec::new();
    for (profile, _) in &profiles {
        let mut row = format!("<tr><th scope=\"row\">{}</th>", escape(profile));
        for (operation, _) in GRID_OPERATIONS {
            let test = format!("{profile} {operation}");
            for side in 0..comparison.sides.len() {
                let mut lines: Vec<String> = Vec::new();
                let mut change_line = String::new();
                for (index, metric) in GRID_METRICS.iter().enumerate() {
                    let Some(found) = find(&test, metric) else { continue };
                    let Some(cell) = &found.cells[side] else { continue };
                    let value = format!("{} {}", number(cell.summary.median), found.unit);
                    lines.push(if index == 0 { format!("<b>{}</b>", escape(&value)) } else { escape(&value) });
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
                        change_line = format!(
                            "<br><span class=\"{class}\">{} {}</span>",
                            escape(&text),
                            escape(&significance_text(change.significance, change.p_value))
                        );
                    }
                }
                if lines.is_empty() {
                    row.push_str("<td class=\"num\">-</td>");
                } else {
                    let _ = write!(row, "<td class=\"num grid\">{}{change_line}</td>", lines.join("<br>"));
                }
            }
        }
        row.push_str("</tr>");
        rows.push(row);
    }
    format!(
        "<div class=\"disk-grid\" data-grid=\"read-write\">{}<p class=\"note\">Medians: MB/s (10^6 bytes/s) in \
         bold, then IOPS and mean latency; the change is against A, by MB/s.</p></div>\n",
        table(&headings, &rows)
    )
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
                    crate::words::side_letter(side),
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

/// Latency percentile charts (log scale) per test of a workload that records several percentiles.
fn percentile_charts(
    charts: &mut Charts,
    comparison: &Comparison,
    workload: &str,
    workloads: &Registry,
) -> Vec<String> {
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

/// A run's name in a chart: the side's name, plus the run's own when the side has other runs like it.
fn series_name(side: &Side, run: &StoredRun, alike: impl Fn(&StoredRun) -> bool) -> String {
    if side.runs.iter().filter(|r| alike(r)).count() > 1 {
        format!("{}: {}", side.name, run_name(run))
    } else {
        side.name.clone()
    }
}

fn has_series(run: &StoredRun) -> bool {
    run.series.as_ref().is_some_and(|s| !s.points.is_empty())
}

/// Throughput and latency against concurrency, one line per run of a workload that draws a scaling curve, the knee
/// marked and the latency target drawn.
fn scaling_curves(charts: &mut Charts, sides: &[Side], workload: &str, workloads: &Registry) -> Vec<String> {
    let mut throughput = Vec::new();
    let mut latency = Vec::new();
    let mut first: Option<ScalingCurve> = None;
    for side in sides {
        for run in side.runs.iter().filter(|r| r.summary.workload == workload) {
            let Some(curve) = workloads.scaling(run).filter(|c| !c.points.is_empty()) else { continue };
            let name = series_name(side, run, |r| r.summary.workload == workload);
            let marked = curve
                .knee
                .filter(|k| *k < curve.points.len())
                .map(|k| (k, format!("knee {}={}", curve.concurrency_symbol, number(curve.points[k].concurrency))));
            throughput.push(LineSeries {
                name: name.clone(),
                points: curve.points.iter().map(|p| (p.concurrency, p.throughput)).collect(),
                marked: marked.clone(),
            });
            latency.push(LineSeries {
                name,
                points: curve.points.iter().map(|p| (p.concurrency, p.latency)).collect(),
                marked,
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
        "The knee is the highest throughput whose latency is within the target.",
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
            reference: curve.latency_target.map(|t| (t, format!("target {} {}", number(t), curve.latency_unit))),
            x_names: None,
            marks: Vec::new(),
        },
        "Latency per step; the dashed line is the latency target.",
    );
    vec![throughput_chart, latency_chart]
}

/// Throughput each second of each step, one chart per run (per test, for runs that keep several) of a workload that
/// keeps a timeline: ramp-up, steady state, stalls (checkpoints) and cliffs show here and nowhere else.
fn timelines(charts: &mut Charts, sides: &[Side], workload: &str, workloads: &Registry) -> Vec<String> {
    let mut out = Vec::new();
    for side in sides {
        for run in side.runs.iter().filter(|r| r.summary.workload == workload) {
            let name = series_name(side, run, |r| r.summary.workload == workload);
            for timeline in workloads.timelines(run) {
                if !timeline.lines.iter().any(|(_, p)| !p.is_empty()) {
                    continue;
                }
                let subject = timeline.subject.as_ref().map(|s| format!("{s}, ")).unwrap_or_default();
                let note = if timeline.marks.is_empty() {
                    "One line per step; dips in the steady state are stalls (checkpoints, lock waits, a busy disk)."
                } else {
                    "The shaded span is the steady-state window the sustained figure is the mean of; a vertical \
                     line marks the cliff, where throughput stayed below half the burst figure."
                };
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
                            y_label: format!("{} (higher is better)", timeline.y_label),
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
fn fleet_hosts(sides: &[Side], workload: &str) -> String {
    let mut out = String::new();
    for side in sides {
        for run in side.runs.iter().filter(|r| r.summary.workload == workload) {
            let Some(value) = run.attachments.get(envbench_core::fleet::FLEET_ATTACHMENT) else { continue };
            let Ok(fleet) = serde_json::from_value::<envbench_core::fleet::FleetDocument>(value.clone()) else {
                continue;
            };
            let name = series_name(side, run, |r| r.attachments.contains_key(envbench_core::fleet::FLEET_ATTACHMENT));
            let (headings, rows) = fleet.share_table();
            let text_columns = envbench_core::fleet::SHARE_TEXT_COLUMNS;
            let rows: Vec<String> = rows
                .iter()
                .map(|row| {
                    let cells: String = row
                        .iter()
                        .enumerate()
                        .map(|(column, value)| if column < text_columns { cell(value) } else { num(value) })
                        .collect();
                    format!("<tr>{cells}</tr>")
                })
                .collect();
            let _ = writeln!(
                out,
                "<details class=\"fleet\" open>\n<summary><h3>{}: {} hosts at once ({} transport), each host's share\
                 </h3></summary>",
                escape(&name),
                fleet.hosts.len(),
                escape(&fleet.transport)
            );
            out.push_str(&table(&headings, &rows));
            for host in fleet.hosts.iter().filter(|h| h.error.is_some()) {
                let _ = writeln!(
                    out,
                    "<p class=\"note\">{} took no (further) part: {}</p>",
                    escape(&host.name),
                    escape(host.error.as_deref().unwrap_or(""))
                );
            }
            out.push_str("</details>\n");
        }
    }
    out
}

/// The device figures a chart shows: the top of the storage chain (the first device watched).
fn top_disk<'a>(series: &SamplerSeries, disks: &'a [DiskFigures]) -> Option<&'a DiskFigures> {
    series.devices.first().and_then(|name| disks.iter().find(|d| &d.device == name)).or_else(|| disks.first())
}

/// MB/s, IOPS and CPU (with steal) over time for one run.
fn sampler_charts(charts: &mut Charts, series: &SamplerSeries) -> String {
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
    let mut out = String::new();
    if series.points.iter().any(|p| !p.disks.is_empty()) {
        out.push_str(&charts.lines(
            "sampler-mbps",
            &time_chart(
                format!("{device}: throughput"),
                "MB/s (10^6 bytes/s)",
                vec![line("read MB/s", &|d| d.read_mb_per_s), line("write MB/s", &|d| d.write_mb_per_s)],
            ),
            "iostat's rMB/s and wMB/s per sampler interval.",
        ));
        out.push_str(&charts.lines(
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
    out.push_str(&charts.lines(
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
    out
}

fn environment_section(comparison: &Comparison) -> String {
    let mut headings = vec!["".to_string()];
    headings.extend(comparison.sides.iter().map(|s| format!("{}: {}", s.letter, s.name)));
    let rows: Vec<String> = comparison
        .environment
        .iter()
        .map(|field| {
            let class = if field.differs && comparison.sides.len() > 1 { " class=\"differs\"" } else { "" };
            let values: String = field.values.iter().map(|v| cell(v)).collect();
            format!("<tr{class}><th scope=\"row\">{}</th>{values}</tr>", escape(&field.name))
        })
        .collect();
    format!(
        "<details class=\"environment\">\n<summary><h2>Environment</h2></summary>\n<p class=\"note\">Rows marked ≠ \
         (highlighted) differ between the sides.</p>\n{}</details>\n",
        table(&headings, &rows)
    )
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
