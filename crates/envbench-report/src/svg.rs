//! Small SVG chart helpers: grouped bars with value labels and min..max whiskers, line charts with markers, and axes
//! with nice ticks (linear or logarithmic). Readable in print and without colour: every series has a pattern (bars)
//! or a marker shape and dash style (lines) besides its colour, and the palette is Okabe-Ito's colour-blind-safe one.
//! The change chart (a forest plot against the baseline) is drawn in `change_chart` with these helpers.

use crate::axis::{Axis, Scale};
use crate::html::escape;
use envbench_core::workload::TimelineMark;
use envbench_verdict::number;
use std::fmt::Write;

/// Okabe-Ito colours, most distinct first, each with the stroke colour that shows on it.
const PALETTE: [(&str, &str); 8] = [
    ("#0072B2", "#ffffff"),
    ("#E69F00", "#000000"),
    ("#009E73", "#ffffff"),
    ("#D55E00", "#ffffff"),
    ("#56B4E9", "#000000"),
    ("#CC79A7", "#000000"),
    ("#F0E442", "#000000"),
    ("#000000", "#ffffff"),
];

/// Pattern strokes drawn over the colour of series i (the first is plain).
const PATTERNS: [&str; 8] = [
    "",
    "M-2,2 l4,-4 M0,8 l8,-8 M6,10 l4,-4",
    "M2,2 h1.5 v1.5 h-1.5 z M6,6 h1.5 v1.5 h-1.5 z",
    "M0,0 l8,8 M8,0 l-8,8",
    "M0,2 h8 M0,6 h8",
    "M2,0 v8 M6,0 v8",
    "M-2,6 l4,4 M0,0 l8,8 M6,-2 l4,4",
    "M0,4 h8 M4,0 v8",
];

/// Line dash styles of series i.
const DASHES: [&str; 4] = ["", "7 4", "2 3", "9 3 2 3"];

/// The outline of bars and legend swatches.
const GRID_STROKE: &str = "#333";

pub(crate) const WIDTH: f64 = 760.0;
const PLOT_TOP: f64 = 56.0;
const PLOT_HEIGHT: f64 = 230.0;
const LEFT: f64 = 78.0;
const RIGHT: f64 = 24.0;

/// The fill of series `index` in chart `chart_id` (a pattern over the colour).
fn fill(chart_id: &str, index: usize) -> String {
    format!("url(#{chart_id}-p{})", index % PATTERNS.len())
}

/// The colour of series `index`.
pub fn colour(index: usize) -> &'static str {
    PALETTE[index % PALETTE.len()].0
}

fn pattern_defs(chart_id: &str, count: usize) -> String {
    let mut defs = String::from("<defs>");
    for i in 0..count.min(PATTERNS.len()) {
        let (colour, stroke) = PALETTE[i % PALETTE.len()];
        let _ = write!(
            defs,
            r#"<pattern id="{chart_id}-p{i}" patternUnits="userSpaceOnUse" width="8" height="8"><rect width="8" height="8" fill="{colour}"/>"#
        );
        if !PATTERNS[i].is_empty() {
            let _ = write!(defs, r#"<path d="{}" stroke="{stroke}" stroke-width="1.3" fill="{stroke}"/>"#, PATTERNS[i]);
        }
        defs.push_str("</pattern>");
    }
    defs.push_str("</defs>");
    defs
}

/// A series of a bar chart: one value (and optional min..max) per category.
#[derive(Clone, Debug, PartialEq)]
pub struct BarSeries {
    pub name: String,
    pub values: Vec<Option<f64>>,
    pub ranges: Vec<Option<(f64, f64)>>,
}

/// Grouped bars: one group per category, one bar per series.
#[derive(Clone, Debug, PartialEq)]
pub struct BarChart {
    pub title: String,
    /// The value axis label, e.g. `MB/s (higher is better)`.
    pub value_label: String,
    pub categories: Vec<String>,
    pub series: Vec<BarSeries>,
}

/// A series of a line chart.
#[derive(Clone, Debug, PartialEq)]
pub struct LineSeries {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Index into `points` of a point to mark and label (e.g. the knee of a sweep).
    pub marked: Option<(usize, String)>,
}

/// Lines with markers against a numeric x axis.
#[derive(Clone, Debug, PartialEq)]
pub struct LineChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<LineSeries>,
    pub x_scale: Scale,
    pub y_scale: Scale,
    /// A horizontal reference line and its label (e.g. the latency target).
    pub reference: Option<(f64, String)>,
    /// Labels for x positions 0, 1, 2... instead of numbers (e.g. percentiles).
    pub x_names: Option<Vec<String>>,
    /// Moments (vertical lines) and spans (shaded) marked on the x axis.
    pub marks: Vec<TimelineMark>,
}

pub(crate) fn open_svg(out: &mut String, chart_id: &str, title: &str, height: f64) {
    let _ = write!(
        out,
        r#"<svg class="chart" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" role="img" aria-labelledby="{chart_id}-title"><title id="{chart_id}-title">{}</title>"#,
        escape(title)
    );
    let _ = write!(
        out,
        r#"<text class="chart-title" x="{}" y="20" text-anchor="middle">{}</text>"#,
        WIDTH / 2.0,
        escape(title)
    );
}

/// The height of one row of the legend.
const LEGEND_ROW: f64 = 18.0;

/// How wide a mark's label is drawn, at most (7 px a character, as the legend reckons).
fn mark_label_width(label: &str) -> f64 {
    7.0 * label.chars().count() as f64
}

/// Where each legend entry goes: (row, x), wrapping onto further rows so that every series is named.
fn legend_layout(names: &[String]) -> Vec<(usize, f64)> {
    let mut layout = Vec::with_capacity(names.len());
    let (mut row, mut x) = (0, LEFT);
    for name in names {
        let label_width = 7.0 * name.chars().count().min(60) as f64 + 34.0;
        if x + label_width > WIDTH - RIGHT && x > LEFT {
            row += 1;
            x = LEFT;
        }
        layout.push((row, x));
        x += label_width;
    }
    layout
}

/// How much lower the plot must start so that a legend of more than one row fits above it.
pub(crate) fn legend_extra(names: &[String]) -> f64 {
    legend_layout(names).last().map_or(0.0, |(row, _)| *row as f64 * LEGEND_ROW)
}

/// The legend: every series named, on as many rows as it takes ([`legend_extra`] is the room below the first).
/// The caller shifts the plot down by that room.
pub(crate) fn legend(out: &mut String, chart_id: &str, names: &[String], lines: bool) {
    for (i, (name, (row, x))) in names.iter().zip(legend_layout(names)).enumerate() {
        let y = 38.0 + row as f64 * LEGEND_ROW;
        if lines {
            let _ = write!(
                out,
                r#"<line x1="{x}" y1="{y}" x2="{}" y2="{y}" stroke="{}" stroke-width="2" stroke-dasharray="{}"/>"#,
                x + 22.0,
                colour(i),
                DASHES[i % DASHES.len()]
            );
            out.push_str(&marker(i, x + 11.0, y, colour(i)));
        } else {
            let _ = write!(
                out,
                r#"<rect x="{x}" y="{}" width="16" height="12" fill="{}" stroke="{GRID_STROKE}" stroke-width="0.6"/>"#,
                y - 6.0,
                fill(chart_id, i)
            );
        }
        let shown: String =
            if name.chars().count() > 60 { name.chars().take(59).chain(['…']).collect() } else { name.clone() };
        let _ = write!(out, r#"<text class="legend" x="{}" y="{}">{}</text>"#, x + 26.0, y + 4.0, escape(&shown));
    }
}

/// Open the group that holds the plot below a legend of several rows.
pub(crate) fn open_plot(out: &mut String, extra: f64) {
    if extra > 0.0 {
        let _ = write!(out, r#"<g transform="translate(0 {extra})">"#);
    }
}

/// Close what [`open_plot`] opened, and the SVG.
pub(crate) fn close_svg(out: &mut String, extra: f64) {
    if extra > 0.0 {
        out.push_str("</g>");
    }
    out.push_str("</svg>");
}

/// A marker shape for series i at (x, y).
fn marker(index: usize, x: f64, y: f64, colour: &str) -> String {
    let s = 4.5;
    let stroke = r##"stroke="#000" stroke-width="0.8""##;
    match index % 6 {
        0 => format!(r#"<circle cx="{x}" cy="{y}" r="{s}" fill="{colour}" {stroke}/>"#),
        1 => format!(
            r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{colour}" {stroke}/>"#,
            x - s,
            y - s,
            2.0 * s,
            2.0 * s
        ),
        2 => format!(
            r#"<path d="M{x},{} L{},{} L{},{} Z" fill="{colour}" {stroke}/>"#,
            y - s - 1.0,
            x + s + 1.0,
            y + s,
            x - s - 1.0,
            y + s
        ),
        3 => format!(
            r#"<path d="M{x},{} L{},{y} L{x},{} L{},{y} Z" fill="{colour}" {stroke}/>"#,
            y - s - 1.5,
            x + s + 1.5,
            y + s + 1.5,
            x - s - 1.5
        ),
        4 => format!(
            r#"<path d="M{},{} L{},{} M{},{} L{},{}" stroke="{colour}" stroke-width="2.6"/>"#,
            x - s,
            y - s,
            x + s,
            y + s,
            x - s,
            y + s,
            x + s,
            y - s
        ),
        _ => format!(
            r#"<path d="M{x},{} L{},{} L{},{} Z" fill="{colour}" {stroke}/>"#,
            y + s + 1.0,
            x + s + 1.0,
            y - s,
            x - s - 1.0,
            y - s
        ),
    }
}

/// Horizontal grid lines and tick labels of a value axis on the left.
fn value_axis(out: &mut String, axis: &Axis, label: &str, right_edge: f64) {
    for tick in &axis.ticks {
        let y = PLOT_TOP + PLOT_HEIGHT * (1.0 - axis.fraction(*tick));
        let _ = write!(out, r#"<line class="grid" x1="{LEFT}" y1="{y:.1}" x2="{right_edge}" y2="{y:.1}"/>"#);
        let _ = write!(
            out,
            r#"<text class="tick" x="{}" y="{:.1}" text-anchor="end">{}</text>"#,
            LEFT - 6.0,
            y + 4.0,
            number(*tick)
        );
    }
    let _ = write!(
        out,
        r#"<line class="axis" x1="{LEFT}" y1="{PLOT_TOP}" x2="{LEFT}" y2="{}"/><text class="axis-label" transform="translate(16 {}) rotate(-90)" text-anchor="middle">{}</text>"#,
        PLOT_TOP + PLOT_HEIGHT,
        PLOT_TOP + PLOT_HEIGHT / 2.0,
        escape(label)
    );
}

/// Grouped bars with value labels, whiskers from min to max, a pattern per series and a legend.
pub fn bar_chart(chart: &BarChart, chart_id: &str) -> String {
    let values = chart.series.iter().flat_map(|s| s.values.iter().flatten().copied());
    let highs = chart.series.iter().flat_map(|s| s.ranges.iter().flatten().map(|r| r.1));
    let max = values.chain(highs).fold(0.0f64, f64::max);
    let axis = Axis::linear(0.0, max, 5);
    let groups = chart.categories.len().max(1);
    let series = chart.series.len().max(1);
    let longest = chart.categories.iter().map(|c| c.chars().count()).max().unwrap_or(0);
    let slanted = longest as f64 * 6.5 > (WIDTH - LEFT - RIGHT) / groups as f64;
    let label_room = if slanted { (longest.min(40) as f64 * 5.0 + 14.0).max(40.0) } else { 36.0 };
    let names: Vec<String> = chart.series.iter().map(|s| s.name.clone()).collect();
    let extra = legend_extra(&names);
    let height = PLOT_TOP + PLOT_HEIGHT + label_room + 10.0 + extra;
    let mut out = String::new();
    open_svg(&mut out, chart_id, &chart.title, height);
    out.push_str(&pattern_defs(chart_id, series));
    legend(&mut out, chart_id, &names, false);
    open_plot(&mut out, extra);
    value_axis(&mut out, &axis, &chart.value_label, WIDTH - RIGHT);
    let group_width = (WIDTH - LEFT - RIGHT) / groups as f64;
    let bar_width = (group_width * 0.8 / series as f64).min(60.0);
    let baseline = PLOT_TOP + PLOT_HEIGHT;
    for (g, category) in chart.categories.iter().enumerate() {
        let group_left = LEFT + g as f64 * group_width + (group_width - bar_width * series as f64) / 2.0;
        for (s, line) in chart.series.iter().enumerate() {
            let Some(value) = line.values.get(g).copied().flatten() else { continue };
            let x = group_left + s as f64 * bar_width;
            let top = PLOT_TOP + PLOT_HEIGHT * (1.0 - axis.fraction(value.max(0.0)));
            let _ = write!(
                out,
                r#"<rect class="bar" x="{x:.1}" y="{top:.1}" width="{:.1}" height="{:.1}" fill="{}" stroke="{GRID_STROKE}" stroke-width="0.6"><title>{}: {}</title></rect>"#,
                bar_width - 2.0,
                baseline - top,
                fill(chart_id, s),
                escape(&format!("{} — {category}", line.name)),
                number(value)
            );
            let centre = x + (bar_width - 2.0) / 2.0;
            let mut label_y = top - 4.0;
            if let Some((low, high)) = line.ranges.get(g).copied().flatten() {
                let (y_low, y_high) = (
                    PLOT_TOP + PLOT_HEIGHT * (1.0 - axis.fraction(low.max(0.0))),
                    PLOT_TOP + PLOT_HEIGHT * (1.0 - axis.fraction(high.max(0.0))),
                );
                let _ = write!(
                    out,
                    r#"<path class="whisker" d="M{centre:.1},{y_low:.1} V{y_high:.1} M{:.1},{y_low:.1} h6 M{:.1},{y_high:.1} h6"/>"#,
                    centre - 3.0,
                    centre - 3.0
                );
                label_y = label_y.min(y_high - 4.0);
            }
            if bar_width >= 34.0 {
                let _ = write!(
                    out,
                    r#"<text class="value" x="{centre:.1}" y="{label_y:.1}" text-anchor="middle">{}</text>"#,
                    number(value)
                );
            } else {
                let _ = write!(
                    out,
                    r#"<text class="value" transform="translate({:.1} {label_y:.1}) rotate(-90)">{}</text>"#,
                    centre + 3.0,
                    number(value)
                );
            }
        }
        let centre = LEFT + (g as f64 + 0.5) * group_width;
        let shown: String = if slanted && category.chars().count() > 40 {
            category.chars().take(39).chain(['…']).collect()
        } else {
            category.clone()
        };
        if slanted {
            let _ = write!(
                out,
                r#"<text class="category" transform="translate({centre:.1} {}) rotate(-35)" text-anchor="end">{}</text>"#,
                baseline + 14.0,
                escape(&shown)
            );
        } else {
            let _ = write!(
                out,
                r#"<text class="category" x="{centre:.1}" y="{}" text-anchor="middle">{}</text>"#,
                baseline + 18.0,
                escape(&shown)
            );
        }
    }
    let _ = write!(out, r#"<line class="axis" x1="{LEFT}" y1="{baseline}" x2="{}" y2="{baseline}"/>"#, WIDTH - RIGHT);
    close_svg(&mut out, extra);
    out
}

/// Lines with a marker shape and dash style per series, an optional reference line, and marked points.
pub fn line_chart(chart: &LineChart, chart_id: &str) -> String {
    let points = || chart.series.iter().flat_map(|s| s.points.iter());
    let (x_min, x_max) = points().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| (lo.min(p.0), hi.max(p.0)));
    let (mut y_min, mut y_max) =
        points().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| (lo.min(p.1), hi.max(p.1)));
    if let Some((reference, _)) = chart.reference {
        y_min = y_min.min(reference);
        y_max = y_max.max(reference);
    }
    let (x_min, x_max) = if x_min.is_finite() { (x_min, x_max) } else { (0.0, 1.0) };
    let (y_min, y_max) = if y_min.is_finite() { (y_min, y_max) } else { (0.0, 1.0) };
    let x_axis = if chart.x_names.is_some() {
        Axis {
            min: -0.5,
            max: x_max + 0.5,
            log: false,
            ticks: (0..=x_max.max(0.0) as usize).map(|i| i as f64).collect(),
        }
    } else {
        Axis::of_scale(chart.x_scale, x_min, x_max, 6)
    };
    let y_axis = Axis::of_scale(chart.y_scale, y_min, y_max, 5);
    let names: Vec<String> = chart.series.iter().map(|s| s.name.clone()).collect();
    let extra = legend_extra(&names);
    let height = PLOT_TOP + PLOT_HEIGHT + 52.0 + extra;
    let plot_width = WIDTH - LEFT - RIGHT;
    let x_of = |x: f64| LEFT + plot_width * x_axis.fraction(x);
    let y_of = |y: f64| PLOT_TOP + PLOT_HEIGHT * (1.0 - y_axis.fraction(y));
    let mut out = String::new();
    open_svg(&mut out, chart_id, &chart.title, height);
    legend(&mut out, chart_id, &names, true);
    open_plot(&mut out, extra);
    value_axis(&mut out, &y_axis, &chart.y_label, WIDTH - RIGHT);
    let baseline = PLOT_TOP + PLOT_HEIGHT;
    for tick in &x_axis.ticks {
        let x = x_of(*tick);
        let label = match &chart.x_names {
            Some(names) => names.get(*tick as usize).cloned().unwrap_or_default(),
            None => number(*tick),
        };
        let _ = write!(
            out,
            r#"<line class="axis" x1="{x:.1}" y1="{baseline}" x2="{x:.1}" y2="{}"/><text class="tick" x="{x:.1}" y="{}" text-anchor="middle">{}</text>"#,
            baseline + 5.0,
            baseline + 18.0,
            escape(&label)
        );
    }
    let _ = write!(
        out,
        r#"<line class="axis" x1="{LEFT}" y1="{baseline}" x2="{}" y2="{baseline}"/><text class="axis-label" x="{}" y="{}" text-anchor="middle">{}</text>"#,
        WIDTH - RIGHT,
        LEFT + plot_width / 2.0,
        baseline + 40.0,
        escape(&chart.x_label)
    );
    if let Some((value, label)) = &chart.reference {
        let y = y_of(*value);
        let _ = write!(
            out,
            r#"<line class="reference" x1="{LEFT}" y1="{y:.1}" x2="{}" y2="{y:.1}"/><text class="reference-label" x="{}" y="{:.1}" text-anchor="end">{}</text>"#,
            WIDTH - RIGHT,
            WIDTH - RIGHT - 4.0,
            y - 5.0,
            escape(label)
        );
    }
    for mark in &chart.marks {
        match mark {
            TimelineMark::Span { from, to, label } => {
                let (x1, x2) = (x_of(*from), x_of(*to));
                let _ = write!(
                    out,
                    r#"<rect class="span" x="{x1:.1}" y="{PLOT_TOP}" width="{:.1}" height="{PLOT_HEIGHT}"/><text class="mark-label" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                    (x2 - x1).max(1.0),
                    (x1 + x2) / 2.0,
                    PLOT_TOP + 14.0,
                    escape(label)
                );
            }
            TimelineMark::At { x, label } => {
                let x = x_of(*x);
                let _ = write!(
                    out,
                    r#"<line class="reference" x1="{x:.1}" y1="{PLOT_TOP}" x2="{x:.1}" y2="{baseline}"/><text class="mark-label" x="{:.1}" y="{:.1}">{}</text>"#,
                    x + 4.0,
                    PLOT_TOP + 30.0,
                    escape(label)
                );
            }
        }
    }
    for (i, line) in chart.series.iter().enumerate() {
        let path: Vec<String> = line
            .points
            .iter()
            .enumerate()
            .map(|(j, (x, y))| format!("{}{:.1},{:.1}", if j == 0 { "M" } else { "L" }, x_of(*x), y_of(*y)))
            .collect();
        let _ = write!(
            out,
            r#"<path class="line" d="{}" stroke="{}" stroke-dasharray="{}"/>"#,
            path.join(" "),
            colour(i),
            DASHES[i % DASHES.len()]
        );
        if line.points.len() <= 60 {
            for (x, y) in &line.points {
                out.push_str(&marker(i, x_of(*x), y_of(*y), colour(i)));
            }
        }
        if let Some((index, label)) = &line.marked
            && let Some((x, y)) = line.points.get(*index)
        {
            let (cx, cy) = (x_of(*x), y_of(*y));
            // Right of the mark, or left of it where the label would run past the chart's right edge.
            let (label_x, anchor) = if cx + 12.0 + mark_label_width(label) > WIDTH - RIGHT {
                (cx - 12.0, "end")
            } else {
                (cx + 12.0, "start")
            };
            let _ = write!(
                out,
                r#"<circle class="mark" cx="{cx:.1}" cy="{cy:.1}" r="10"/><text class="mark-label" x="{label_x:.1}" y="{:.1}" text-anchor="{anchor}">{}</text>"#,
                // Marks of several series at one point must not print over each other.
                (cy - 12.0 - 14.0 * i as f64).max(PLOT_TOP + 10.0),
                escape(label)
            );
        }
    }
    close_svg(&mut out, extra);
    out
}
#[cfg(test)]
mod tests {
    use super::*;

    /// Issue #55: the knee's label at the last point was drawn past the right edge (`knee J=8` at x=748 of 760); it is
    /// drawn to the left of its mark there, and to the right elsewhere.
    #[test]
    fn a_mark_label_stays_inside_the_chart() {
        let chart = |marked: usize| LineChart {
            title: "knee".into(),
            x_label: "jobs".into(),
            y_label: "IOPS".into(),
            series: vec![LineSeries {
                name: "a".into(),
                points: vec![(1.0, 10.0), (2.0, 20.0), (4.0, 30.0), (8.0, 31.0)],
                marked: Some((marked, "knee J=8".into())),
            }],
            x_scale: Scale::Linear,
            y_scale: Scale::Linear,
            reference: None,
            x_names: None,
            marks: Vec::new(),
        };
        let last = line_chart(&chart(3), "k");
        let label = last.split("class=\"mark-label\" ").nth(1).unwrap();
        assert!(label.contains("text-anchor=\"end\""), "{label}");
        let x: f64 = label.split("x=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
        assert!(x <= WIDTH - RIGHT && x - mark_label_width("knee J=8") >= 0.0, "{x}");
        let first = line_chart(&chart(0), "k");
        assert!(first.split("class=\"mark-label\" ").nth(1).unwrap().contains("text-anchor=\"start\""));
    }

    /// An environment's history drew 9 lines and named 4 in a one-row legend: every series is named now, on as many
    /// rows as it takes, and the plot moves down to make room.
    #[test]
    fn every_line_is_named_in_the_legend() {
        let series: Vec<LineSeries> = (0..9)
            .map(|i| LineSeries {
                name: format!("RND4K Q{i}T1 read against the first run"),
                points: vec![(0.0, 1.0), (1.0, 1.0 + i as f64 / 10.0)],
                marked: None,
            })
            .collect();
        let chart = LineChart {
            title: "history".into(),
            x_label: "run".into(),
            y_label: "factor".into(),
            series,
            x_scale: Scale::Linear,
            y_scale: Scale::Linear,
            reference: None,
            x_names: None,
            marks: Vec::new(),
        };
        let svg = line_chart(&chart, "h");
        for i in 0..9 {
            assert!(svg.contains(&format!(">RND4K Q{i}T1 read against the first run<")), "series {i} unnamed");
        }
        assert_eq!(svg.matches("class=\"legend\"").count(), 9);
        assert!(svg.contains("<g transform=\"translate(0 "), "the plot moves below a legend of several rows");
    }
}
