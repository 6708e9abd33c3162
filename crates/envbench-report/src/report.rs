//! The HTML report: one self-contained file (inline CSS and SVG, no scripts, fonts or images from anywhere) with the
//! comparison table, charts and the environment table.
//!
//! Everything is driven by the stored result model (workload, test, metric, unit, direction): a new workload gets its
//! table rows and grouped bar charts without any change here. What is particular to a workload comes from its own
//! crate through the [`Registry`]: the word for its tests in chart titles, and the scaling curve of a workload that
//! sweeps a concurrency (throughput and latency against it, the knee marked; it replaces the percentile charts).

use crate::change_chart::{ChangeChart, ChangePoint, ChangeRow};
use crate::figures::{Charted, Charts};
use crate::html::{cell, num, page, table};
use crate::render::{
    LEGEND, cells, geomean_cells, headings, says_better, says_worse, verdict_evidence, verdict_heading, workloads,
};
use crate::result_charts::{bar_charts, baseline_name, percentile_charts, read_write_grid, relative_charts};
use crate::run_charts::{fleet_hosts, has_series, sampler_charts, scaling_curves, series_name, timelines};
use envbench_core::stats::Summary;
use envbench_core::workload::Registry;
use envbench_store::StoredRun;
use envbench_verdict::ComparisonRow;
use envbench_verdict::{Comparison, compare};
use envbench_verdict::{Decision, WorkloadVerdict};
use envbench_verdict::{Side, run_name};
use maud::{Markup, html};

/// The whole report for some sides (the first is the baseline) as one HTML document.
pub fn render_report(sides: &[Side], workloads: &Registry) -> String {
    let comparison = compare(sides, workloads);
    render_report_for(&comparison, sides, workloads)
}

/// The report for a comparison already made of these sides.
pub fn render_report_for(comparison: &Comparison, sides: &[Side], workloads: &Registry) -> String {
    let names: Vec<&str> = comparison.sides.iter().map(|s| s.name.as_str()).collect();
    let title = format!("envbench report: {}", names.join(" vs "));
    page(&title, html! { h1 { (title) } "\n" (report_sections(comparison, sides, workloads)) })
}

/// The report's sections without the page around them (the web viewer frames them with its navigation): the
/// answer first (the verdict against the baseline, or a single run's scorecard), then per workload its charts with
/// the tables collapsed, then the OS sampler and the environment, collapsed too.
pub fn report_sections(comparison: &Comparison, sides: &[Side], workloads: &Registry) -> Markup {
    let mut charts = Charts::default();
    let compared = comparison.sides.len() > 1;
    let made_at = envbench_core::model::now_utc().replace('T', " ").replace('Z', "");
    let headings = headings(comparison);
    let sampled: Vec<(String, &StoredRun)> = sides
        .iter()
        .flat_map(|side| side.runs.iter().map(move |run| (series_name(side, run, has_series), run)))
        .filter(|(_, run)| has_series(run))
        .collect();
    html! {
        p class="note" {
            "Made by envbench " (envbench_core::TOOL_VERSION) " at " (made_at) " UTC"
            @if compared { "; the first side is the baseline." } @else { "." }
        }
        "\n"
        @if compared { (verdict_section(&mut charts, comparison)) } @else { (scorecard_section(sides, workloads)) }
        (sides_section(comparison))
        @if compared {
            h2 { "Environment differences" } "\n"
            ul {
                "\n"
                @if comparison.differences.is_empty() { li { "none found in the fingerprints" } "\n" }
                @for difference in &comparison.differences { li { (difference) } "\n" }
            }
            "\n"
        }
        @if comparison.rows.is_empty() { p { "No result matches across the sides." } "\n" }
        @for workload in self::workloads(comparison) {
            (workload_section(&mut charts, comparison, sides, &workload, workloads, &headings))
        }
        (unmatched_section(comparison))
        @if !sampled.is_empty() {
            details class="sampler" {
                "\n" summary { h2 { "OS sampler" } } "\n"
                @for (name, run) in &sampled {
                    h3 { (name) } "\n"
                    (sampler_charts(&mut charts, run.series.as_ref().expect("filtered on series")))
                }
            }
            "\n"
        }
        (environment_section(comparison))
        p class="note legend" { (LEGEND) } "\n"
    }
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
) -> Markup {
    let compared = comparison.sides.len() > 1;
    let title = workloads.title(workload);
    let grid = read_write_grid(comparison, workload);
    // Which part offers the headline, in order: a comparison's change chart; a single run's scaling curve, timeline
    // or headline bars. A disk-shaped grid is the headline itself, so nothing after it offers one.
    let curves = Charted::later(scaling_curves(charts, sides, workload, workloads));
    let lines = Charted::later(timelines(charts, sides, workload, workloads));
    let bars = bar_charts(charts, comparison, workload, workloads);
    let parts = if compared {
        vec![relative_charts(charts, comparison, workload, workloads), bars, curves, lines]
    } else if grid.is_none() {
        vec![curves, lines, bars]
    } else {
        vec![Charted::none(), bars, curves, lines]
    };
    let mut more = Charted::default();
    for part in parts {
        more.add(part);
    }
    more.add(Charted::later(percentile_charts(charts, comparison, workload, workloads)));
    let rows = comparison.rows.iter().filter(|r| r.workload == workload).count();
    let more_charts = match more.count {
        0 => String::new(),
        1 => "1 more chart, ".to_string(),
        n => format!("{n} more charts, "),
    };
    html! {
        section class="workload" id={ "workload-" (slug(workload)) } {
            "\n" h2 { (title) " " span class="note" { "(" (workload) ")" } } "\n"
            @if let Some(grid) = &grid { (grid) }
            @if let Some(headline) = &more.headline { (headline) }
            details class="more" {
                summary { "More on " (title) ": " (more_charts) (rows) " result" @if rows != 1 { "s" } " in a table" }
                "\n"
                @for chart in &more.rest { (chart) }
                (fleet_hosts(sides, workload))
                (workload_table(comparison, workload, headings))
            }
            "\n"
        }
        "\n"
    }
}

/// An id-safe form of a name: letters, digits and dashes.
fn slug(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect()
}

/// The answer first: per side, each workload's change with its interval, test counts and explanations, and a chart
/// of every workload's change against the baseline.
fn verdict_section(charts: &mut Charts, comparison: &Comparison) -> Markup {
    let sides = html! {
        @for side in &comparison.verdicts {
            h3 { (verdict_heading(comparison, side)) } "\n"
            @if side.workloads.is_empty() {
                p { "No result matches the baseline." } "\n"
            } @else {
                ul class="verdict" {
                    "\n"
                    @for workload in &side.workloads {
                        @let class = verdict_class(workload);
                        li class=(class) {
                            b { (workload.title) } ": " span class=(class) { (workload.change_words()) } ". "
                            (verdict_evidence(workload))
                            @if !workload.explanations.is_empty() {
                                ul { @for sentence in &workload.explanations { li { (sentence) } } }
                            }
                        }
                        "\n"
                    }
                }
                "\n"
                @for sentence in &side.disturbance {
                    p class="caution" { b { "Disturbed:" } " " (sentence) "." } "\n"
                }
                @if let Some(advice) = &side.advice { p class="caution" { b { "To tell:" } " " (advice) "." } "\n" }
                @if let Some(caution) = &side.caution { p class="caution" { (caution) } "\n" }
            }
        }
    };
    let mut titles: Vec<(String, String)> = Vec::new();
    for side in &comparison.verdicts {
        for workload in &side.workloads {
            if !titles.iter().any(|(w, _)| *w == workload.workload) {
                titles.push((workload.workload.clone(), workload.title.clone()));
            }
        }
    }
    let chart = (!titles.is_empty()).then(|| {
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
        charts.changes(
            "verdict",
            &chart,
            "Points: geometric mean of each workload's headline figures as a speed factor (right is better); \
             whiskers: 95% interval (from the runs when a side has several); filled: called faster or slower (the interval excludes \"same\" and the \
             change is beyond the noise margin); ~ marks the rest.",
        )
    });
    html! {
        section id="verdict" { "\n" h2 { "Verdict" } "\n" (sides) @if let Some(chart) = chart { (chart) } }
        "\n"
    }
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

/// A single run's answer first: one card per run with its headline, its spread and whether it was noisy.
fn scorecard_section(sides: &[Side], workloads: &Registry) -> Markup {
    let card = |run: &StoredRun| {
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
        let results = run.results.len();
        html! {
            div class={ "card" @if noisy > 0 { " noisy-card" } } {
                div class="card-title" {
                    (workloads.title(&run.summary.workload)) " "
                    span class="note" { (run_name(run)) " · " (run.summary.status) }
                }
                div class="headline" { (workloads.of_run(run).headline(run)) }
                div class="note" { (spread) "; " (results) " result" @if results != 1 { "s" } }
                @if noisy > 0 {
                    div class="flag" { "noisy: " (noisy) " result" @if noisy != 1 { "s" } " over 5% cv" }
                }
                @if run.summary.disturbed { div class="flag" { "disturbed" } }
            }
            "\n"
        }
    };
    html! {
        section id="scorecard" {
            "\n" h2 { "Scorecard" } "\n"
            // Said once, above the cards: a disturbed run's figures are lower than a quiet host gives.
            @for side in sides {
                @if let Some(count) = envbench_verdict::disturbance_count(side) {
                    p class="caution" {
                        b { "Disturbed:" } " " (side.name) " was disturbed in " (count) ": other work competed for \
                        the machine while it measured, so its figures may be below what this environment gives on a \
                        quiet host. Run again when the host is quiet before comparing it."
                    }
                    "\n"
                }
            }
            div class="cards" { "\n" @for run in sides.iter().flat_map(|s| s.runs.iter()) { (card(run)) } }
            "\n"
        }
        "\n"
    }
}

/// A workload's comparison table with its geometric means, collapsed.
fn workload_table(comparison: &Comparison, workload: &str, headings: &[String]) -> Markup {
    let mut rows: Vec<Markup> =
        comparison.rows.iter().filter(|r| r.workload == workload).map(|row| comparison_row(row, headings)).collect();
    let count = rows.len();
    for geomean in comparison.geomeans.iter().filter(|g| g.workload == workload) {
        rows.push(html! { tr class="geomean" { @for text in geomean_cells(geomean) { (num(&text)) } } });
    }
    html! {
        details class="table" {
            summary { "Table: " (count) " result" @if count != 1 { "s" } " of " (workload) }
            "\n" (table(headings, &rows)) "\n"
        }
        "\n"
    }
}

fn unmatched_section(comparison: &Comparison) -> Markup {
    let count = comparison.unmatched.len();
    html! {
        @if count > 0 {
            details class="unmatched" {
                summary { "Not compared: " (count) " result" @if count != 1 { "s" } " match nothing on the other sides" }
                "\n"
                ul {
                    "\n"
                    @for u in &comparison.unmatched {
                        li { (u.side) ": " (u.workload) " " b { (u.test_id) } " " (u.metric) " — " (u.reason) } "\n"
                    }
                }
                "\n"
            }
            "\n"
        }
    }
}

/// The sides, one line each with their environment, and every run collapsed below.
fn sides_section(comparison: &Comparison) -> Markup {
    let mut rows = Vec::new();
    for side in &comparison.sides {
        for run in &side.runs {
            rows.push(html! {
                tr {
                    (cell(&side.letter)) (cell(&side.name)) (cell(&run.uuid)) (cell(&run.name)) (cell(&run.workload))
                    (cell(&run.started_at)) (cell(&format!("{} on {}", run.status, run.host.as_deref().unwrap_or("?"))))
                    (cell(&run.environment))
                }
            });
        }
    }
    let headings: Vec<String> =
        ["", "Side", "Run", "Name", "Workload", "Started (UTC)", "Status", "Environment"].map(String::from).to_vec();
    html! {
        h2 { "Sides" } "\n"
        ul class="sides" {
            "\n"
            @for side in &comparison.sides {
                @let environments = environments_of(side);
                // Counted as the user made them, as the verdict counts: a suite is one run of its workloads.
                @let made = envbench_verdict::runs_made(side.runs.iter().map(|r| (r.uuid.as_str(), r.suite.as_deref())));
                li {
                    b { (side.letter) @if side.letter == "A" && comparison.sides.len() > 1 { " (baseline)" } } ": "
                    (side.name) " — " (envbench_verdict::run_count_words(made, side.runs.len())) " on "
                    (environments.join("; "))
                }
                "\n"
            }
        }
        "\n"
        details class="runs" { summary { "Runs" } "\n" (table(&headings, &rows)) }
        "\n"
    }
}

/// The environments a side's runs ran in, each once, in the runs' order.
fn environments_of(side: &envbench_verdict::SideInfo) -> Vec<&str> {
    let mut environments: Vec<&str> = Vec::new();
    for run in &side.runs {
        if !environments.contains(&run.environment.as_str()) {
            environments.push(&run.environment);
        }
    }
    environments
}

/// One comparison row as HTML, with classes for better and worse changes and noisy spreads.
fn comparison_row(row: &ComparisonRow, headings: &[String]) -> Markup {
    let texts = cells(row);
    html! {
        tr {
            @for (i, text) in texts.iter().enumerate() {
                @let heading = headings.get(i).map(String::as_str).unwrap_or("");
                @if i < 3 || heading == "FLAGS" {
                    (cell(text))
                } @else if heading.contains(" vs ") {
                    @let class = if says_better(text) {
                        "num better"
                    } else if says_worse(text) {
                        "num worse"
                    } else {
                        "num"
                    };
                    td class=(class) { (text) }
                } @else if text.ends_with('!') {
                    td class="num noisy" title="noisy: coefficient of variation over 5%" { (text) }
                } @else {
                    (num(text))
                }
            }
        }
    }
}

fn environment_section(comparison: &Comparison) -> Markup {
    let mut headings = vec!["".to_string()];
    headings.extend(comparison.sides.iter().map(|s| format!("{}: {}", s.letter, s.name)));
    let rows: Vec<Markup> = comparison
        .environment
        .iter()
        .map(|field| {
            let differs = field.differs && comparison.sides.len() > 1;
            html! {
                tr class=[differs.then_some("differs")] {
                    th scope="row" { (field.name) }
                    @for value in &field.values { (cell(value)) }
                }
            }
        })
        .collect();
    html! {
        details class="environment" {
            "\n" summary { h2 { "Environment" } } "\n"
            p class="note" { "Rows marked ≠ (highlighted) differ between the sides." } "\n"
            (table(&headings, &rows))
        }
        "\n"
    }
}
