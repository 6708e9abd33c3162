//! Small SVG chart helpers: grouped bars with value labels and min..max whiskers, line charts with markers, and axes
//! with nice ticks (linear or logarithmic). Readable in print and without colour: every series has a pattern (bars)
//! or a marker shape and dash style (lines) besides its colour, and the palette is Okabe-Ito's colour-blind-safe one.
//! The change chart (a forest plot against the baseline) is drawn in `change_chart` with these helpers.

use crate::axis::{Axis, Scale};
use envbench_core::workload::TimelineMark;
use envbench_verdict::number;
use maud::{Markup, html};

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

fn pattern_defs(chart_id: &str, count: usize) -> Markup {
    html! {
        defs {
            @for i in 0..count.min(PATTERNS.len()) {
                @let (colour, stroke) = PALETTE[i % PALETTE.len()];
                pattern id={ (chart_id) "-p" (i) } patternUnits="userSpaceOnUse" width="8" height="8" {
                    rect width="8" height="8" fill=(colour) {}
                    @if !PATTERNS[i].is_empty() {
                        path d=(PATTERNS[i]) stroke=(stroke) stroke-width="1.3" fill=(stroke) {}
                    }
                }
            }
        }
    }
}

/// A number with one decimal, as every coordinate is drawn.
pub(crate) fn f1(value: f64) -> String {
    format!("{value:.1}")
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

/// A chart's frame: the SVG with its title (named for screen readers, and drawn as its heading), what goes above the
/// plot (pattern definitions, the legend), and the plot, moved down by `extra` below a legend of several rows
/// ([`legend_extra`]).
pub(crate) fn frame(chart_id: &str, title: &str, height: f64, extra: f64, above: Markup, plot: Markup) -> Markup {
    html! {
        svg class="chart" viewBox={ "0 0 " (WIDTH) " " (height) } width=(WIDTH) height=(height) role="img"
            aria-labelledby={ (chart_id) "-title" } {
            title id={ (chart_id) "-title" } { (title) }
            text class="chart-title" x=(WIDTH / 2.0) y="20" text-anchor="middle" { (title) }
            (above)
            @if extra > 0.0 {
                g transform={ "translate(0 " (extra) ")" } { (plot) }
            } @else {
                (plot)
            }
        }
    }
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
pub(crate) fn legend(chart_id: &str, names: &[String], lines: bool) -> Markup {
    html! {
        @for (i, (name, (row, x))) in names.iter().zip(legend_layout(names)).enumerate() {
            @let y = 38.0 + row as f64 * LEGEND_ROW;
            @if lines {
                line x1=(x) y1=(y) x2=(x + 22.0) y2=(y) stroke=(colour(i)) stroke-width="2"
                    stroke-dasharray=(DASHES[i % DASHES.len()]) {}
                (marker(i, x + 11.0, y, colour(i)))
            } @else {
                rect x=(x) y=(y - 6.0) width="16" height="12" fill=(fill(chart_id, i)) stroke=(GRID_STROKE)
                    stroke-width="0.6" {}
            }
            text class="legend" x=(x + 26.0) y=(y + 4.0) { (shortened(name, 60)) }
        }
    }
}

/// `text` cut to `limit` characters, the last an ellipsis, when it is longer.
pub(crate) fn shortened(text: &str, limit: usize) -> String {
    if text.chars().count() > limit { text.chars().take(limit - 1).chain(['…']).collect() } else { text.to_string() }
}

/// A marker shape for series i at (x, y).
fn marker(index: usize, x: f64, y: f64, colour: &str) -> Markup {
    let s = 4.5;
    let (stroke, width) = ("#000", "0.8");
    html! {
        @match index % 6 {
            0 => circle cx=(x) cy=(y) r=(s) fill=(colour) stroke=(stroke) stroke-width=(width) {},
            1 => rect x=(x - s) y=(y - s) width=(2.0 * s) height=(2.0 * s) fill=(colour) stroke=(stroke)
                stroke-width=(width) {},
            2 => path d={ "M" (x) "," (y - s - 1.0) " L" (x + s + 1.0) "," (y + s) " L" (x - s - 1.0) "," (y + s) " Z" }
                fill=(colour) stroke=(stroke) stroke-width=(width) {},
            3 => path d={ "M" (x) "," (y - s - 1.5) " L" (x + s + 1.5) "," (y) " L" (x) "," (y + s + 1.5) " L"
                (x - s - 1.5) "," (y) " Z" } fill=(colour) stroke=(stroke) stroke-width=(width) {},
            4 => path d={ "M" (x - s) "," (y - s) " L" (x + s) "," (y + s) " M" (x - s) "," (y + s) " L" (x + s) ","
                (y - s) } stroke=(colour) stroke-width="2.6" {},
            _ => path d={ "M" (x) "," (y + s + 1.0) " L" (x + s + 1.0) "," (y - s) " L" (x - s - 1.0) "," (y - s) " Z" }
                fill=(colour) stroke=(stroke) stroke-width=(width) {},
        }
    }
}

/// Horizontal grid lines and tick labels of a value axis on the left.
fn value_axis(axis: &Axis, label: &str, right_edge: f64) -> Markup {
    html! {
        @for tick in &axis.ticks {
            @let y = PLOT_TOP + PLOT_HEIGHT * (1.0 - axis.fraction(*tick));
            line class="grid" x1=(LEFT) y1=(f1(y)) x2=(right_edge) y2=(f1(y)) {}
            text class="tick" x=(LEFT - 6.0) y=(f1(y + 4.0)) text-anchor="end" { (number(*tick)) }
        }
        line class="axis" x1=(LEFT) y1=(PLOT_TOP) x2=(LEFT) y2=(PLOT_TOP + PLOT_HEIGHT) {}
        text class="axis-label" transform={ "translate(16 " (PLOT_TOP + PLOT_HEIGHT / 2.0) ") rotate(-90)" }
            text-anchor="middle" { (label) }
    }
}

/// Grouped bars with value labels, whiskers from min to max, a pattern per series and a legend.
pub fn bar_chart(chart: &BarChart, chart_id: &str) -> Markup {
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
    let group_width = (WIDTH - LEFT - RIGHT) / groups as f64;
    let bar_width = (group_width * 0.8 / series as f64).min(60.0);
    let baseline = PLOT_TOP + PLOT_HEIGHT;
    let y_of = |value: f64| PLOT_TOP + PLOT_HEIGHT * (1.0 - axis.fraction(value.max(0.0)));
    let plot = html! {
        (value_axis(&axis, &chart.value_label, WIDTH - RIGHT))
        @for (g, category) in chart.categories.iter().enumerate() {
            @let group_left = LEFT + g as f64 * group_width + (group_width - bar_width * series as f64) / 2.0;
            @for (s, line) in chart.series.iter().enumerate() {
                @if let Some(value) = line.values.get(g).copied().flatten() {
                    @let x = group_left + s as f64 * bar_width;
                    @let top = y_of(value);
                    rect class="bar" x=(f1(x)) y=(f1(top)) width=(f1(bar_width - 2.0)) height=(f1(baseline - top))
                        fill=(fill(chart_id, s)) stroke=(GRID_STROKE) stroke-width="0.6" {
                        title { (line.name) " — " (category) ": " (number(value)) }
                    }
                    @let centre = x + (bar_width - 2.0) / 2.0;
                    @let range = line.ranges.get(g).copied().flatten().map(|(low, high)| (y_of(low), y_of(high)));
                    @if let Some((y_low, y_high)) = range {
                        path class="whisker" d={ "M" (f1(centre)) "," (f1(y_low)) " V" (f1(y_high)) " M"
                            (f1(centre - 3.0)) "," (f1(y_low)) " h6 M" (f1(centre - 3.0)) "," (f1(y_high)) " h6" } {}
                    }
                    @let label_y = range.map_or(top - 4.0, |(_, y_high)| (top - 4.0).min(y_high - 4.0));
                    @if bar_width >= 34.0 {
                        text class="value" x=(f1(centre)) y=(f1(label_y)) text-anchor="middle" { (number(value)) }
                    } @else {
                        text class="value" transform={ "translate(" (f1(centre + 3.0)) " " (f1(label_y)) ") rotate(-90)" }
                            { (number(value)) }
                    }
                }
            }
            @let centre = LEFT + (g as f64 + 0.5) * group_width;
            @if slanted {
                text class="category" transform={ "translate(" (f1(centre)) " " (baseline + 14.0) ") rotate(-35)" }
                    text-anchor="end" { (shortened(category, 40)) }
            } @else {
                text class="category" x=(f1(centre)) y=(baseline + 18.0) text-anchor="middle" { (category) }
            }
        }
        line class="axis" x1=(LEFT) y1=(baseline) x2=(WIDTH - RIGHT) y2=(baseline) {}
    };
    let above = html! { (pattern_defs(chart_id, series)) (legend(chart_id, &names, false)) };
    frame(chart_id, &chart.title, height, extra, above, plot)
}

/// Lines with a marker shape and dash style per series, an optional reference line, and marked points.
pub fn line_chart(chart: &LineChart, chart_id: &str) -> Markup {
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
    let baseline = PLOT_TOP + PLOT_HEIGHT;
    let tick_label = |tick: f64| match &chart.x_names {
        Some(names) => names.get(tick as usize).cloned().unwrap_or_default(),
        None => number(tick),
    };
    let plot = html! {
        (value_axis(&y_axis, &chart.y_label, WIDTH - RIGHT))
        @for tick in &x_axis.ticks {
            @let x = f1(x_of(*tick));
            line class="axis" x1=(x) y1=(baseline) x2=(x) y2=(baseline + 5.0) {}
            text class="tick" x=(x) y=(baseline + 18.0) text-anchor="middle" { (tick_label(*tick)) }
        }
        line class="axis" x1=(LEFT) y1=(baseline) x2=(WIDTH - RIGHT) y2=(baseline) {}
        text class="axis-label" x=(LEFT + plot_width / 2.0) y=(baseline + 40.0) text-anchor="middle" { (chart.x_label) }
        @if let Some((value, label)) = &chart.reference {
            @let y = y_of(*value);
            line class="reference" x1=(LEFT) y1=(f1(y)) x2=(WIDTH - RIGHT) y2=(f1(y)) {}
            text class="reference-label" x=(WIDTH - RIGHT - 4.0) y=(f1(y - 5.0)) text-anchor="end" { (label) }
        }
        @for mark in &chart.marks {
            @match mark {
                TimelineMark::Span { from, to, label } => {
                    @let (x1, x2) = (x_of(*from), x_of(*to));
                    rect class="span" x=(f1(x1)) y=(PLOT_TOP) width=(f1((x2 - x1).max(1.0))) height=(PLOT_HEIGHT) {}
                    text class="mark-label" x=(f1((x1 + x2) / 2.0)) y=(f1(PLOT_TOP + 14.0)) text-anchor="middle" { (label) }
                }
                TimelineMark::At { x, label } => {
                    @let x = x_of(*x);
                    line class="reference" x1=(f1(x)) y1=(PLOT_TOP) x2=(f1(x)) y2=(baseline) {}
                    text class="mark-label" x=(f1(x + 4.0)) y=(f1(PLOT_TOP + 30.0)) { (label) }
                }
            }
        }
        @for (i, line) in chart.series.iter().enumerate() {
            @let steps: Vec<String> = line
                .points
                .iter()
                .enumerate()
                .map(|(j, (x, y))| format!("{}{:.1},{:.1}", if j == 0 { "M" } else { "L" }, x_of(*x), y_of(*y)))
                .collect();
            path class="line" d=(steps.join(" ")) stroke=(colour(i)) stroke-dasharray=(DASHES[i % DASHES.len()]) {}
            @if line.points.len() <= 60 {
                @for (x, y) in &line.points {
                    (marker(i, x_of(*x), y_of(*y), colour(i)))
                }
            }
            @if let Some((index, label)) = &line.marked
                && let Some((x, y)) = line.points.get(*index) {
                @let (cx, cy) = (x_of(*x), y_of(*y));
                // Right of the mark, or left of it where the label would run past the chart's right edge.
                @let (label_x, anchor) = if cx + 12.0 + mark_label_width(label) > WIDTH - RIGHT {
                    (cx - 12.0, "end")
                } else {
                    (cx + 12.0, "start")
                };
                circle class="mark" cx=(f1(cx)) cy=(f1(cy)) r="10" {}
                // Marks of several series at one point must not print over each other.
                text class="mark-label" x=(f1(label_x)) y=(f1((cy - 12.0 - 14.0 * i as f64).max(PLOT_TOP + 10.0)))
                    text-anchor=(anchor) { (label) }
            }
        }
    };
    frame(chart_id, &chart.title, height, extra, legend(chart_id, &names, true), plot)
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
        let last = line_chart(&chart(3), "k").into_string();
        let label = last.split("class=\"mark-label\" ").nth(1).unwrap();
        assert!(label.contains("text-anchor=\"end\""), "{label}");
        let x: f64 = label.split("x=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
        assert!(x <= WIDTH - RIGHT && x - mark_label_width("knee J=8") >= 0.0, "{x}");
        let first = line_chart(&chart(0), "k").into_string();
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
        let svg = line_chart(&chart, "h").into_string();
        for i in 0..9 {
            assert!(svg.contains(&format!(">RND4K Q{i}T1 read against the first run<")), "series {i} unnamed");
        }
        assert_eq!(svg.matches("class=\"legend\"").count(), 9);
        assert!(svg.contains("<g transform=\"translate(0 "), "the plot moves below a legend of several rows");
    }
}
