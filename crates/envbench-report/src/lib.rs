//! Reports and the web viewer of envbench: how a comparison is shown.
//!
//! This crate shows what `envbench-verdict` decides: a comparison as terminal text, Markdown or JSON ([`render()`]),
//! as one self-contained HTML report with SVG charts ([`render_report`]), the history and standings of the
//! environments in a store, and the same pages served read-only over HTTP ([`router`], [`serve`]). It never runs a
//! workload, never writes to a store, and leaves result exports (`results export`) to the binary.

mod axis;
mod change_chart;
mod error;
mod figures;
mod history;
pub mod html;
pub mod leaderboard;
pub mod read_api;
mod render;
mod report;
mod result_charts;
mod run_charts;
mod svg;
mod tls;
mod viewer;

pub use axis::{Axis, Scale, nice_step};
pub use change_chart::{ChangeChart, ChangePoint, ChangeRow, change_chart};
pub use error::ReportError;
pub use history::{
    EnvironmentSummary, HeadlineTest, History, Neighbour, Rank, SuiteSummary, environment_summaries, histories, ranks,
    suite_summaries, user_tags,
};
pub use html::{escape as html_escape, is_envbench_page};
pub use render::{Format, metric_title, render, render_json, render_markdown, render_text};
pub use report::{render_report, render_report_for, report_sections};
pub use svg::{BarChart, BarSeries, LineChart, LineSeries, bar_chart, line_chart};
pub use tls::load_tls;
pub use viewer::{DEFAULT_LISTEN, Extras, bind, is_loopback, router, router_with, serve, serve_blocking, serve_with};
