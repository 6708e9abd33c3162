//! The web viewer's tests: its pages and routes served over HTTP from stores built through the store's API. One test
//! binary for the crate.

// The report's fixture (its stores of runs of several workloads, hostile labels included), one file compiled into
// both crates' test binaries.
#[path = "../../../envbench-report/tests/it/common/mod.rs"]
mod common;
mod viewer;
