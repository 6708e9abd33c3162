//! Comparison, reports and the web viewer of envbench.
//!
//! This crate reads runs back from a results store and shows them: it resolves the sides of a comparison (run ids,
//! labels, tag filters; a side's runs pool their samples), matches results PTS-style (workload, workload version,
//! test, parameter hash, metric) and compares them with medians, direction-aware changes, Mann-Whitney U
//! significance, spread and geometric means ([`compare()`]); it renders a comparison as terminal text, Markdown or
//! JSON ([`render()`]), as one self-contained HTML report with SVG charts ([`render_report`]), and serves the same
//! pages read-only over HTTP ([`router`], [`serve`]). It never runs a workload, never writes to a store, and leaves
//! result exports (`results export`) to the binary.

mod compare;
mod environment;
mod error;
mod history;
pub mod html;
pub mod leaderboard;
mod render;
mod report;
mod side;
mod svg;
mod tls;
mod verdict;
mod viewer;

pub use compare::{
    Cell, Change, Comparison, ComparisonRow, GeomeanCell, GeomeanRow, RunInfo, SideInfo, Significance, UnmatchedResult,
    compare, compare_results, directed_ratio, natural_cmp, side_letter,
};
pub use environment::{EnvironmentField, EnvironmentIdentity, differences, environment_identity, environment_table};
pub use error::ReportError;
pub use history::{
    EnvironmentSummary, HeadlineTest, History, Neighbour, Rank, SUITE_NAME_TAG, SUITE_TAG, SuiteSummary,
    environment_summaries, histories, ranks, suite_summaries, user_tags,
};
pub use html::{escape as html_escape, is_envbench_page};
pub use render::{Format, metric_title, number as format_number, render, render_json, render_markdown, render_text};
pub use report::{render_report, render_report_for, report_sections};
pub use side::{
    Side, SideSpec, distinct_sides, resolve_side, resolve_sides, run_name, side_runs, unique_names, workloads_of,
};
pub use svg::{
    Axis, BarChart, BarSeries, ChangeChart, ChangePoint, ChangeRow, LineChart, LineSeries, Scale, bar_chart,
    change_chart, line_chart, nice_step,
};
pub use tls::load_tls;
pub use verdict::{
    BOOTSTRAP_RESAMPLES, Decision, Gate, IntervalBasis, PRICE_TAG, SideVerdict, TestChange, WorkloadVerdict,
    bootstrap_interval, change_interval, change_words, gate, headline_rows, interval_words, price_per_hour,
    speed_words, test_change, work_per_cost,
};
pub use viewer::{DEFAULT_LISTEN, Extras, bind, is_loopback, router, router_with, serve, serve_blocking, serve_with};
