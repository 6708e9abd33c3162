//! Comparison, reports and the web viewer of envbench.
//!
//! This crate reads runs back from a results store and shows them: it resolves the sides of a comparison (run ids,
//! labels, tag filters; a side's runs pool their samples), matches results PTS-style (workload, workload version,
//! test, parameter hash, metric) and compares them with medians, direction-aware changes, Mann-Whitney U
//! significance, spread and geometric means ([`compare()`]); it renders a comparison as terminal text, Markdown or
//! JSON ([`render()`]), as one self-contained HTML report with SVG charts ([`render_report`]), and serves the same
//! pages read-only over HTTP ([`router`], [`serve`]). It never runs a workload, never writes to a store, and leaves
//! result exports (`results export`) to the binary.

mod axis;
mod change_chart;
mod compare;
mod cost;
mod environment;
mod error;
mod explain;
mod figures;
mod gate;
mod history;
pub mod html;
mod interval;
pub mod leaderboard;
pub mod read_api;
mod render;
mod report;
mod result_charts;
mod rows;
mod run_charts;
mod side;
mod svg;
mod tls;
mod verdict;
mod viewer;
mod words;

pub use axis::{Axis, Scale, nice_step};
pub use change_chart::{ChangeChart, ChangePoint, ChangeRow, change_chart};
pub use compare::{Comparison, GeomeanCell, GeomeanRow, RunInfo, SideInfo, UnmatchedResult, compare, compare_results};
pub use cost::{PRICE_TAG, price_per_hour, work_per_cost};
pub use environment::{EnvironmentField, EnvironmentIdentity, differences, environment_identity, environment_table};
pub use error::ReportError;
pub use gate::{Gate, gate};
pub use history::{
    EnvironmentSummary, HeadlineTest, History, Neighbour, Rank, SuiteSummary, environment_summaries, histories, ranks,
    suite_summaries, user_tags,
};
pub use html::{escape as html_escape, is_envbench_page};
pub use interval::{BOOTSTRAP_RESAMPLES, IntervalBasis, bootstrap_interval, change_interval};
pub use render::{Format, metric_title, render, render_json, render_markdown, render_text};
pub use report::{render_report, render_report_for, report_sections};
pub use rows::{Cell, Change, ComparisonRow, Significance, directed_ratio};
pub use side::{
    SUITE_NAME_TAG, SUITE_TAG, Side, SideSpec, distinct_sides, resolve_side, resolve_sides, run_name, side_runs,
    unique_names, workloads_of,
};
pub use svg::{BarChart, BarSeries, LineChart, LineSeries, bar_chart, line_chart};
pub use tls::load_tls;
pub use verdict::{Decision, SideVerdict, TestChange, WorkloadVerdict, headline_rows, test_change};
pub use viewer::{DEFAULT_LISTEN, Extras, bind, is_loopback, router, router_with, serve, serve_blocking, serve_with};
pub use words::{change_words, interval_words, natural_cmp, number as format_number, side_letter, speed_words};
