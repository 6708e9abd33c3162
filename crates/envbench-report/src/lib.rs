//! Reports and the web viewer of envbench: how a comparison is shown.
//!
//! This crate shows what `envbench-verdict` decides: a comparison as terminal text, Markdown or JSON ([`render()`]),
//! as one self-contained HTML report with SVG charts ([`render_report`]), the history and standings of the
//! environments in a store, and the page frame and tables the web viewer's pages are made of (envbench-service
//! builds and serves those pages). Every page is built with maud's `html!`, which escapes each value it inserts. It
//! never runs a workload, never writes to a store, never serves, and leaves result exports to envbench-export.

mod axis;
mod change_chart;
mod figures;
mod history;
pub mod html;
pub mod leaderboard;
mod render;
mod report;
mod result_charts;
mod run_charts;
mod svg;

pub use axis::{Axis, Scale, nice_step};
pub use change_chart::{ChangeChart, ChangePoint, ChangeRow, change_chart};
pub use figures::Charts;
pub use history::{
    EnvironmentSummary, HeadlineTest, History, Identities, Neighbour, RANK_MIN_ENVIRONMENTS, Rank, SuiteSummary,
    environment_summaries, histories, ranks, run_identity, suite_summaries, user_tags,
};
pub use html::is_envbench_page;
pub use render::{Format, metric_title, render, render_json, render_markdown, render_text};
pub use report::{render_report, render_report_for, report_sections};
pub use svg::{BarChart, BarSeries, LineChart, LineSeries, bar_chart, line_chart};
