//! The store's tests: the contract every backend keeps, then each backend. One test binary for the crate.

mod common;
mod contract;
mod postgres;
mod sqlite;
