//! The exports of envbench's stored runs, one small [`Exporter`] per format, as hyperfine's `export/` keeps them:
//!
//! - [`Csv`], [`Tsv`] and [`Json`]: one row per raw sample, with everything needed to read it alone
//!   ([`SAMPLE_COLUMNS`]); a TSV of runs that all belong to a workload with its own layout takes that layout
//!   ([`NativeLayout`]: RanRead's, which its analysis spreadsheet expects);
//! - [`Bencher`] and [`GithubActionBenchmark`]: one value per benchmark in the JSON that continuous benchmarking
//!   services read.
//!
//! An exporter is given the runs, oldest first, and returns the text and how many rows or results it holds. It
//! never chooses the runs, never reads a store and never writes a file: the binary's `results export` does.

mod bencher;
mod cells;
mod csv;
mod exporter;
mod github_action_benchmark;
mod json;
mod native;
mod samples;
mod tracked;
mod tsv;

pub use bencher::Bencher;
pub use csv::Csv;
pub use exporter::{Export, ExportError, Exporter};
pub use github_action_benchmark::GithubActionBenchmark;
pub use json::Json;
pub use native::NativeLayout;
pub use samples::{SAMPLE_COLUMNS, is_sample_export};
pub use tsv::Tsv;
