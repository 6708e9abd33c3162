//! The HTML report: one self-contained file (inline CSS and SVG, no scripts, fonts or images from anywhere) with the
//! comparison table, charts and the environment table.
//!
//! Everything is driven by the stored result model (workload, test, metric, unit, direction): a new workload gets its
//! table rows and grouped bar charts without any change here. What is particular to a workload comes from its own
//! crate through the [`Registry`]: the word for its tests in chart titles, and the scaling curve of a workload that
//! sweeps a concurrency (throughput and latency against it, the knee marked; it replaces the percentile charts).

use crate::change_chart::{ChangeChart, ChangePoint, ChangeRow};
use crate::figures::{Charted, Charts};
use crate::html::{cell, escape, num, page, table};
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
use std::fmt::Write;

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

/// A single run's answer first: one card per run with its headline, its spread and whether it was noisy.
fn scorecard_section(sides: &[Side], workloads: &Registry) -> String {
    let mut out = String::from("<section id=\"scorecard\">\n<h2>Scorecard</h2>\n");
    // Said once, above the cards: a disturbed run's figures are lower than a quiet host gives.
    for side in sides {
        if let Some(count) = envbench_verdict::disturbance_count(side) {
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
            escape(&workloads.of_run(run).headline(run)),
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
