//! The report's and the verdict's tests, on a store built through the SQLite store's API. One test binary for the crate.

mod common;
mod report;
mod verdict;
