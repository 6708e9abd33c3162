//! The TPC-H targets' tests: PostgreSQL and MariaDB servers, and DataFusion at SF 1 against the reference answers. One
//! test binary for the crate.

mod common;
mod mysql;
mod postgres;
mod sf1_validation;
