//! The change chart (a forest plot against the baseline): per test a row, per side its speed factor with its 95%
//! interval on a logarithmic axis symmetric around "same", so 2x slower and 2x faster lie equally far out.

use crate::svg::{WIDTH, colour, f1, frame, legend, legend_extra, shortened};
use envbench_verdict::{number, speed_words};
use maud::{Markup, html};

/// One side's change of one row of a change chart: a speed factor against the baseline (above 1 is better).
#[derive(Clone, Debug, PartialEq)]
pub struct ChangePoint {
    pub ratio: f64,
    /// The 95% interval, drawn as a whisker.
    pub interval: Option<(f64, f64)>,
    /// Drawn filled when significant, hollow when not.
    pub significant: bool,
}

/// One row of a change chart (a test or a workload): a point per side against the baseline.
#[derive(Clone, Debug, PartialEq)]
pub struct ChangeRow {
    pub label: String,
    pub points: Vec<Option<ChangePoint>>,
}

/// Changes against a baseline on one logarithmic axis, better to the right: a forest plot.
#[derive(Clone, Debug, PartialEq)]
pub struct ChangeChart {
    pub title: String,
    /// What the axis compares against, e.g. `A: physical`.
    pub baseline: String,
    /// One name per side compared (not the baseline).
    pub series: Vec<String>,
    pub rows: Vec<ChangeRow>,
}

/// Speed factors the change axis may mark.
const CHANGE_TICKS: [f64; 12] = [1.05, 1.1, 1.25, 1.5, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0, 100.0, 1000.0];

/// Ticks at least this far apart on a change axis, so their labels never overlap.
const CHANGE_TICK_SPACING: f64 = 84.0;

/// The symmetric ticks of a change axis whose half (from "same" to `limit`, a factor above 1) is `half_width`
/// pixels wide: 1, and the factors each way that lie at least [`CHANGE_TICK_SPACING`] apart.
fn change_ticks(limit: f64, half_width: f64) -> Vec<f64> {
    let position = |factor: f64| half_width * factor.ln() / limit.ln();
    let mut chosen: Vec<f64> = Vec::new();
    let mut last = 0.0;
    for factor in CHANGE_TICKS.iter().copied().filter(|f| *f < limit) {
        if position(factor) - last >= CHANGE_TICK_SPACING {
            chosen.push(factor);
            last = position(factor);
        }
    }
    if chosen.is_empty() || limit > CHANGE_TICKS[CHANGE_TICKS.len() - 1] * 10.0 {
        // Beyond the table (or nothing far enough from "same"): powers of ten, far enough apart.
        chosen.clear();
        last = 0.0;
        let mut factor = 10.0;
        while factor < limit {
            if position(factor) - last >= CHANGE_TICK_SPACING {
                chosen.push(factor);
                last = position(factor);
            }
            factor *= 10.0;
        }
    }
    let mut ticks: Vec<f64> = chosen.iter().rev().map(|f| 1.0 / f).collect();
    ticks.push(1.0);
    ticks.extend(chosen);
    ticks
}

/// The label of a change tick, a speed factor in the verdict's words: `same`, `2x faster`, `1.5x slower`.
fn change_tick_label(tick: f64) -> String {
    if (tick - 1.0).abs() < 1e-9 {
        "same".to_string()
    } else if tick > 1.0 {
        format!("{}x faster", number(tick))
    } else {
        format!("{}x slower", number(1.0 / tick))
    }
}

/// A forest plot: a row per test or workload, a point per side at its speed factor on a log axis centred on "same",
/// whiskers for intervals, filled points for significant changes and hollow ones for the rest, and the factor in
/// words at the end of each row.
pub fn change_chart(chart: &ChangeChart, chart_id: &str) -> Markup {
    const LABEL_WIDTH: f64 = 210.0;
    const VALUE_WIDTH: f64 = 110.0;
    const ROW_HEIGHT: f64 = 18.0;
    let series = chart.series.len().max(1);
    let points = || chart.rows.iter().flat_map(|r| r.points.iter().flatten());
    let extent = points()
        .flat_map(|p| [p.ratio].into_iter().chain(p.interval.map(|(l, h)| [l, h]).into_iter().flatten()))
        .filter(|v| v.is_finite() && *v > 0.0)
        .map(|v| if v >= 1.0 { v } else { 1.0 / v })
        .fold(1.1f64, f64::max);
    let limit = extent * 1.05;
    let plot_left = LABEL_WIDTH;
    let plot_right = WIDTH - VALUE_WIDTH;
    let ticks = change_ticks(limit, (plot_right - plot_left) / 2.0);
    let x_of = |ratio: f64| {
        let clamped = ratio.clamp(1.0 / limit, limit);
        plot_left + (plot_right - plot_left) * (clamped.ln() / limit.ln() + 1.0) / 2.0
    };
    let top = 50.0;
    let row_height = ROW_HEIGHT * series as f64 + 6.0;
    let plot_bottom = top + row_height * chart.rows.len().max(1) as f64;
    let extra = if chart.series.len() > 1 { legend_extra(&chart.series) } else { 0.0 };
    let height = plot_bottom + 48.0 + extra;
    let plot = html! {
        @for tick in &ticks {
            @let x = f1(x_of(*tick));
            @let class = if (*tick - 1.0).abs() < 1e-9 { "axis" } else { "grid" };
            line class=(class) x1=(x) y1=(top) x2=(x) y2=(f1(plot_bottom)) {}
            text class="tick" x=(x) y=(f1(plot_bottom + 14.0)) text-anchor="middle" { (change_tick_label(*tick)) }
        }
        text class="axis-label" x=(f1((plot_left + plot_right) / 2.0)) y=(f1(plot_bottom + 34.0)) text-anchor="middle" {
            "speed factor against " (chart.baseline) " (log scale): slower ← → faster"
        }
        @for (r, row) in chart.rows.iter().enumerate() {
            @let row_top = top + row_height * r as f64;
            @if r % 2 == 1 {
                rect x="0" y=(f1(row_top)) width=(WIDTH) height=(f1(row_height)) fill="#f4f4f4" {}
            }
            text class="category" x=(f1(plot_left - 8.0)) y=(f1(row_top + row_height / 2.0 + 4.0)) text-anchor="end" {
                title { (row.label) }
                (shortened(&row.label, 34))
            }
            @for (s, point) in row.points.iter().enumerate() {
                @if let Some(point) = point {
                    @let y = row_top + 3.0 + ROW_HEIGHT * (s as f64 + 0.5);
                    @if let Some((low, high)) = point.interval {
                        path class="whisker" d={ "M" (f1(x_of(low))) "," (f1(y)) " H" (f1(x_of(high))) " M"
                            (f1(x_of(low))) "," (f1(y - 4.0)) " v8 M" (f1(x_of(high))) "," (f1(y - 4.0)) " v8" }
                            stroke=(colour(s)) {}
                    }
                    circle class={ "change" @if point.significant { " significant" } } cx=(f1(x_of(point.ratio)))
                        cy=(f1(y)) r="5" fill=(if point.significant { colour(s) } else { "#ffffff" })
                        stroke=(colour(s)) stroke-width="2" {
                        title {
                            (row.label)
                            @if let Some(name) = chart.series.get(s) { ", " (name) }
                            ": " (format!("{:.3}", point.ratio)) "x"
                            (if point.significant { " (significant)" } else { " (not significant)" })
                        }
                    }
                    text class="value" x=(f1(plot_right + 6.0)) y=(f1(y + 3.5)) {
                        (speed_words(point.ratio)) @if !point.significant { " ~" }
                    }
                }
            }
        }
    };
    let above = html! {
        @if chart.series.len() > 1 {
            (legend(chart_id, &chart.series, true))
        }
    };
    frame(chart_id, &chart.title, height, extra, above, plot)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn change_axes_are_symmetric_around_same_with_room_for_labels() {
        // 220 px from "same" to 1.3x: 1.1x lies 80 px out (too close), 1.25x 187 px.
        assert_eq!(change_ticks(1.3, 220.0), vec![1.0 / 1.25, 1.0, 1.25]);
        let wide = change_ticks(12.0, 220.0);
        assert_eq!(wide, vec![1.0 / 10.0, 1.0 / 3.0, 1.0, 3.0, 10.0]);
        let huge = change_ticks(1e6, 220.0);
        assert_eq!(huge, vec![1e-3, 1.0, 1e3], "powers of ten, far enough apart");
        assert_eq!(change_tick_label(1.0), "same");
        assert_eq!(change_tick_label(0.5), "2x slower");
        assert_eq!(change_tick_label(2.0), "2x faster");
    }
}
