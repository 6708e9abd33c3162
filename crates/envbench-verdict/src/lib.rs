//! The verdict of envbench: what the numbers say when two or more environments are compared.
//!
//! This crate resolves the sides of a comparison from a results store (run ids, labels, tag filters; a side's runs
//! pool their samples), matches their results PTS-style (workload, workload version, test, parameter hash, metric) and
//! compares them with medians, direction-aware changes, Mann-Whitney U significance, bootstrap intervals, spread and
//! geometric means ([`compare()`]); it decides, workload by workload, whether a side is faster, slower, the same or
//! cannot be told apart, explains a difference by what differs between the machines ([`WorkloadVerdict`]), prices it
//! ([`work_per_cost`]), gates a CI run on it ([`gate()`]) and says it all in plain words. It never renders a page,
//! never runs a workload and never writes to a store: `envbench-report` shows a comparison, the binary prints it.

mod compare;
mod cost;
mod environment;
mod error;
mod explain;
mod gate;
mod interval;
mod rows;
mod side;
mod verdict;
mod words;

pub use compare::{Comparison, GeomeanCell, GeomeanRow, RunInfo, SideInfo, UnmatchedResult, compare, compare_results};
pub use cost::{PRICE_TAG, price_per_hour, unit_medians, work_per_cost};
pub use environment::{
    EnvironmentField, EnvironmentIdentity, differences, environment_identity, environment_table, memory_backed,
};
pub use error::VerdictError;
pub use gate::{Gate, gate};
pub use interval::{BOOTSTRAP_RESAMPLES, IntervalBasis, bootstrap_interval, change_interval};
pub use rows::{Cell, Change, ComparisonRow, Significance, directed_ratio};
pub use side::{
    SUITE_NAME_TAG, SUITE_TAG, Side, SideSpec, distinct_sides, resolve_side, resolve_sides, run_count_words, run_name,
    runs_made, side_runs, suite_title, unique_names, workloads_of,
};
pub use verdict::{Decision, SideVerdict, TestChange, WorkloadVerdict, disturbance_count, headline_rows, test_change};
pub use words::{
    change_words, cost_number, factor_words, interval_words, natural_cmp, number, ordinal, side_letter, speed_words,
};
