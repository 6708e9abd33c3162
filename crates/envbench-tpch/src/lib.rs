//! The TPC-H-derived analytic workload of envbench (specification section 6).
//!
//! This crate owns everything that turns "run TPC-H at SF x on target y" into measured figures: generating the data
//! with `tpchgen` into Parquet files (once, with a manifest, reused later), the query targets behind one small
//! [`Target`] trait (embedded Apache DataFusion reading those files, PostgreSQL over a real connection loaded with
//! parallel `COPY`, and MySQL/MariaDB loaded with parallel multi-row `INSERT`s), the 22 queries with the
//! specification's substitution parameters (seeded, or the validation values), the refresh functions on server
//! targets, the power and throughput tests, and the TPC-H-style metrics. It is the only crate of the workspace that
//! depends on DataFusion.
//!
//! A run keeps its hands off everything that is not its own: on a server its tables live in one schema, resolved
//! once, and every name it uses is qualified with it; its Parquet files are only ever written into a directory of
//! its own, after a check of the free space they need; and it holds a lock on its data for the whole run (a file lock
//! beside the Parquet files, a server lock on the tables), so two runs never rebuild the same data under each other.
//!
//! Targets are opened from what the user wrote by one factory, [`targets::open`]; the `tpch` workload the driver
//! registers is [`TPCH`] (command line, `--cold` with the workspace's one page-cache dropper, tables). It does not
//! print, probe the operating system or store results: the driver does, the OS sampler learns about the steps through
//! [`envbench_core::sampler::StepObserver`], and results leave as [`envbench_core::ResultRecord`]s. The metrics are derived from TPC-H and are not comparable with audited TPC
//! results.

mod cold;
pub mod data;
pub mod data_dir;
mod drive;
mod error;
pub mod fleet;
pub mod generate;
mod measured;
pub mod options;
pub mod params;
mod plan;
pub mod queries;
pub mod reference;
pub mod refresh;
mod render;
pub mod results;
pub mod run;
mod scale;
pub mod tables;
pub mod targets;
pub mod workload;

pub use data::{DataSet, GenerationOptions, GenerationProgress, TableName};
pub use error::TpchError;
pub use params::{QueryOrder, QueryParameters};
pub use results::{TpchOutcome, WORKLOAD, WORKLOAD_VERSION};
pub use run::{QueryEvent, RunOptions, default_users, run};
pub use scale::{check_scale_factor, format_scale_factor};
pub use targets::{QueryAnswer, QueryFailure, Session, Target, TargetKind, TargetSpec};
pub use workload::TPCH;
